//! The approval window and the outline on the page (SECURITY.md, "The
//! person cannot see what they approve"). The gate (`crate::gate`) keeps
//! the requests; this module only shows them:
//!
//! - [`outline`] asks the tab's content script to outline the element a
//!   request is about (scrolled into view) and to say where it is on the
//!   screen, or to remove the outline. Best effort: a page that cannot
//!   answer gets no outline, and the person is asked all the same.
//! - [`show`] brings the one approval window (`approval.html`, a popup
//!   window) to the front, opening it when there is none, beside the
//!   element rather than over it (`ScreenPlace::window_beside`); an
//!   existing window is moved there. Only one window is ever opened at a
//!   time; a window that finished opening after its last request was
//!   answered is closed again.
//! - [`close`] closes it; the person closing it by hand is noticed
//!   ([`install_listeners`]), so the next request opens a new one.

use std::cell::RefCell;

use shared::protocol::{CommandResult, PageRequest, Rect, ScreenPlace, TabId};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::tabs;
use crate::util::{get, js_error_text, obj};

/// Size of the approval window.
const WINDOW_WIDTH: i32 = 480;
const WINDOW_HEIGHT: i32 = 600;

#[derive(Default)]
struct Window {
    /// The open approval window's id.
    id: Option<f64>,
    /// `windows.create` is under way.
    opening: bool,
}

type WindowListener = Closure<dyn FnMut(JsValue)>;

thread_local! {
    static WINDOW: RefCell<Window> = RefCell::new(Window::default());
    static ON_WINDOW_REMOVED: RefCell<Option<WindowListener>> = const { RefCell::new(None) };
}

/// Registers the `windows.onRemoved` listener once for the worker's lifetime.
pub fn install_listeners() {
    ON_WINDOW_REMOVED.with(|c| {
        if c.borrow().is_some() {
            return;
        }
        let cb = Closure::<dyn FnMut(JsValue)>::new(|id: JsValue| {
            WINDOW.with(|w| {
                let mut w = w.borrow_mut();
                if w.id.is_some() && w.id == id.as_f64() {
                    w.id = None;
                }
            });
        });
        chrome::windows_on_removed_add_listener(cb.as_ref().unchecked_ref());
        *c.borrow_mut() = Some(cb);
    });
}

/// Outlines the element a request is about on its page (`show`) and tells
/// where it is, or removes the outline (`show: false`).
pub async fn outline(tab: TabId, target: Option<&str>, show: bool) -> Option<ScreenPlace> {
    let msg = PageRequest::Highlight { target: target.map(str::to_string), show };
    let at = match tabs::ask_page(tab, &msg).await {
        Ok(CommandResult::Highlighted { at }) => at?,
        _ => return None,
    };
    Some(at.on_screen(window_of_tab(tab).await))
}

/// The bounds of the window that shows `tab`, as `chrome.windows` knows
/// them (a page is not always told where its window is).
async fn window_of_tab(tab: TabId) -> Option<Rect> {
    let t = chrome::tabs_get(tab as f64).await.ok()?;
    let w = chrome::windows_get(get(&t, "windowId").as_f64()?).await.ok()?;
    let n = |k: &str| get(&w, k).as_f64().map(|v| v.round() as i32);
    Some(Rect { left: n("left")?, top: n("top")?, width: n("width")?, height: n("height")? })
}

/// Brings the approval window to the front, opening it when needed, beside
/// the element it asks about (`place`) rather than over it. `orphaned`
/// says whether nothing waits any more: a window that finished opening
/// then is closed again.
pub async fn show(place: Option<ScreenPlace>, orphaned: fn() -> bool) {
    let (existing, opening) = WINDOW.with(|w| {
        let w = w.borrow();
        (w.id, w.opening)
    });
    let mut position: Vec<(&str, JsValue)> = Vec::new();
    if let Some(p) = place {
        let (left, top) = p.window_beside(WINDOW_WIDTH, WINDOW_HEIGHT);
        position.push(("left", JsValue::from_f64(left.into())));
        position.push(("top", JsValue::from_f64(top.into())));
    }
    if let Some(id) = existing {
        let mut update = vec![("focused", JsValue::TRUE)];
        update.extend(position.iter().cloned());
        if chrome::windows_update(id, &obj(&update)).await.is_ok() {
            return;
        }
        WINDOW.with(|w| w.borrow_mut().id = None);
    }
    if opening {
        return;
    }
    WINDOW.with(|w| w.borrow_mut().opening = true);
    let mut props = vec![
        ("type", JsValue::from_str("popup")),
        ("url", JsValue::from_str(&chrome::runtime_get_url("approval.html"))),
        ("focused", JsValue::TRUE),
        ("width", JsValue::from_f64(WINDOW_WIDTH.into())),
        ("height", JsValue::from_f64(WINDOW_HEIGHT.into())),
    ];
    let plain = obj(&props);
    props.extend(position);
    let mut created = chrome::windows_create(&obj(&props)).await;
    if created.is_err() {
        // A place the browser refuses must not leave the request without
        // a window: open it where the browser likes.
        created = chrome::windows_create(&plain).await;
    }
    let id = match created {
        Ok(w) => get(&w, "id").as_f64(),
        Err(e) => {
            web_sys::console::warn_1(&JsValue::from_str(&format!(
                "chaperone: cannot open the approval window: {}",
                js_error_text(&e)
            )));
            None
        }
    };
    WINDOW.with(|w| {
        let mut w = w.borrow_mut();
        w.opening = false;
        w.id = id;
    });
    if orphaned() {
        close();
    }
}

/// Closes the approval window, unless it is still being opened ([`show`]
/// closes it then if nothing waits).
pub fn close() {
    let id = WINDOW.with(|w| {
        let w = w.borrow();
        if w.opening { None } else { w.id }
    });
    if let Some(id) = id {
        WINDOW.with(|w| w.borrow_mut().id = None);
        spawn_local(async move {
            let _ = chrome::windows_remove(id).await;
        });
    }
}
