//! `browser_extract_text`: the visible text of the page or of one ref's
//! subtree, as blocks. Uses the rendered text (`innerText`), which leaves
//! out hidden content and never contains form field values.

use shared::error::{ErrorCode, WireError};
use shared::limits::{MAX_TEXT_CHARS, truncate_chars};
use shared::snapshot::{PageText, TextRequest};
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

/// Most blocks returned; the bridge cuts further by `max_chars`.
const MAX_BLOCKS: usize = 20_000;

pub fn extract(req: &TextRequest) -> Result<PageText, WireError> {
    let window = web_sys::window().ok_or_else(|| WireError::new(ErrorCode::Internal, "no window"))?;
    let document = window.document().ok_or_else(|| WireError::new(ErrorCode::Internal, "no document"))?;
    let root: HtmlElement = match &req.scope {
        Some(r) => crate::refs::lookup(r).and_then(|el| el.dyn_into::<HtmlElement>().ok()).ok_or_else(|| {
            WireError::new(ErrorCode::StaleRef, format!("{r} is no longer on the page; take a new snapshot"))
        })?,
        None => document.body().ok_or_else(|| WireError::new(ErrorCode::NotFound, "the page has no body"))?,
    };
    let mut blocks = Vec::new();
    for line in root.inner_text().lines() {
        let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if collapsed.is_empty() {
            continue;
        }
        let mut block = collapsed;
        truncate_chars(&mut block, MAX_TEXT_CHARS);
        blocks.push(block);
        if blocks.len() >= MAX_BLOCKS {
            break;
        }
    }
    Ok(PageText { url: document.url().unwrap_or_default(), title: document.title(), blocks })
}
