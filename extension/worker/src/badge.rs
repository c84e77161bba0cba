//! The toolbar badge: what most needs the person, in one place. Fed by
//! the gate (controls, pending approvals) and by hand-offs (tabs waiting
//! for the person); a leaf, so both can set their part.
//!
//! Priority: YOLO (red `YOLO`), approvals waiting (orange count), tabs
//! waiting for the person (purple `YOU`, with the count when several),
//! Record me on (red `REC`), STOP (`STOP`), Pause (`II`), else nothing.

use std::cell::Cell;

use shared::action::ControlState;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::util::obj;

thread_local! {
    static CONTROL: Cell<ControlState> = Cell::new(ControlState::default());
    static HANDOFFS: Cell<usize> = const { Cell::new(0) };
    static RECORDING: Cell<bool> = const { Cell::new(false) };
}

pub fn set_control(state: ControlState) {
    CONTROL.with(|c| c.set(state));
    show();
}

pub fn set_handoffs(count: usize) {
    HANDOFFS.with(|h| h.set(count));
    show();
}

/// "Record me" on or off (`crate::record`).
pub fn set_recording(on: bool) {
    RECORDING.with(|r| r.set(on));
    show();
}

/// Text, colour and title for the inputs (pure).
fn badge(state: ControlState, handoffs: usize, recording: bool) -> (String, &'static str, &'static str) {
    let title = "Chaperone";
    if state.yolo {
        ("YOLO".into(), "#d00000", "Chaperone — YOLO is on: actions run without asking")
    } else if state.pending > 0 {
        (state.pending.to_string(), "#c25400", "Chaperone — an approval waits for you")
    } else if handoffs > 0 {
        let text = if handoffs == 1 { "YOU".to_string() } else { format!("YOU{handoffs}") };
        (text, "#6a1b9a", "Chaperone — a tab waits for you: open this popup")
    } else if recording {
        ("REC".into(), "#b00020", "Chaperone — Record me is on: what you do is saved as a flow")
    } else if state.stopped {
        ("STOP".into(), "#8a1f17", title)
    } else if state.paused {
        ("II".into(), "#555555", title)
    } else {
        (String::new(), "#24324a", title)
    }
}

fn show() {
    let (text, color, title) = badge(CONTROL.with(Cell::get), HANDOFFS.with(Cell::get), RECORDING.with(Cell::get));
    spawn_local(async move {
        let _ = chrome::action_set_badge_background_color(&obj(&[("color", JsValue::from_str(color))])).await;
        let _ = chrome::action_set_badge_text(&obj(&[("text", JsValue::from_str(&text))])).await;
        let _ = chrome::action_set_title(&obj(&[("title", JsValue::from_str(title))])).await;
    });
}
