//! The approval window (`approval.html`): every pending request with
//! Approve / Deny; Enter approves the first, Esc denies it; an optional
//! chime when a new request arrives.

use std::cell::RefCell;
use std::collections::HashSet;

use js_sys::{Function, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::messages::{PageState, PendingView};
use crate::ui;
use crate::util::get;

#[derive(Default)]
struct Page {
    pending: Vec<PendingView>,
    seen: HashSet<u64>,
    chime: bool,
}

thread_local! {
    static PAGE: RefCell<Page> = RefCell::new(Page::default());
}

pub fn start() {
    if let Some(doc) = ui::document() {
        ui::on(&doc, "keydown", |ev: JsValue| {
            let key = get(&ev, "key").as_string().unwrap_or_default();
            let approve = match key.as_str() {
                "Enter" => true,
                "Escape" => false,
                _ => return,
            };
            let first = PAGE.with(|p| p.borrow().pending.first().map(|r| r.request));
            if let Some(id) = first {
                if let Ok(f) = Reflect::get(&ev, &JsValue::from_str("preventDefault"))
                    && let Ok(f) = f.dyn_into::<Function>()
                {
                    let _ = f.call0(&ev);
                }
                ui::decide(id, approve);
            }
        });
    }
    ui::on_gate_change(render);
    spawn_local(async {
        if let Some(state) = ui::fetch_state().await {
            render(state);
        }
    });
}

fn render(state: PageState) {
    let PageState { pending, chime, .. } = state;
    let new = PAGE.with(|p| {
        let mut p = p.borrow_mut();
        p.chime = chime;
        let mut new = false;
        for r in &pending {
            new |= p.seen.insert(r.request);
        }
        p.pending = pending.clone();
        new
    });
    if let Some(list) = ui::by_id("requests") {
        ui::render_requests(&list, &pending, "No requests are waiting.");
    }
    ui::set_text(
        "count",
        &match pending.len() {
            0 => "Nothing to approve".to_string(),
            1 => "1 request waits for you".to_string(),
            n => format!("{n} requests wait for you"),
        },
    );
    if let Some(first) = pending.first()
        && let Some(b) = ui::by_id(&format!("approve-{}", first.request))
        && let Some(h) = b.dyn_ref::<web_sys::HtmlElement>()
    {
        let _ = h.focus();
    }
    if new && chime {
        ui::beep();
    }
}
