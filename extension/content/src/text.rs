//! `browser_extract_text`: the visible text of the page or of one ref's
//! subtree, as blocks. Uses the snapshot's walk (`snapshot::text_blocks`),
//! so it sees open shadow roots and same-origin frames and leaves out
//! everything a snapshot leaves out (hidden, aria-hidden, inert, clipped
//! away); form fields never contribute their values.

use shared::error::{ErrorCode, WireError};
use shared::snapshot::{PageText, TextRequest};

/// Most blocks returned; the bridge cuts further by `max_chars`.
const MAX_BLOCKS: usize = 20_000;

pub fn extract(req: &TextRequest) -> Result<PageText, WireError> {
    let window = web_sys::window().ok_or_else(|| WireError::internal("no window"))?;
    let document = window.document().ok_or_else(|| WireError::internal("no document"))?;
    let root = match &req.scope {
        Some(r) => crate::refs::lookup(r).ok_or_else(|| {
            WireError::new(ErrorCode::StaleRef, format!("{r} is no longer on the page; take a new snapshot"))
        })?,
        None => document
            .body()
            .map(Into::into)
            .ok_or_else(|| WireError::new(ErrorCode::NotFound, "the page has no body"))?,
    };
    let blocks = crate::snapshot::text_blocks(&root, MAX_BLOCKS);
    Ok(PageText { url: document.url().unwrap_or_default(), title: document.title(), blocks })
}
