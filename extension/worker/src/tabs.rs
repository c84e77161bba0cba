//! The browser's tabs and the content script in them: what the commands
//! (`crate::commands`), the gate (`crate::gate`), the approval window
//! (`crate::window`) and secrets (`crate::secret`) all need. Tab lookups
//! and errors, whether a page is a web page and its origin, asking a tab's
//! content script (injected once when missing), and waiting for a tab's
//! next load.

use std::cell::RefCell;

use js_sys::{Array, Function, Promise};
use shared::error::{ErrorCode, WireError};
use shared::limits::{COMMAND_TIMEOUT_MS, NAVIGATION_TIMEOUT_MS};
use shared::protocol::{CommandResult, Outcome, PageRequest, TabId, TabInfo};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::chrome::{self, Tab};
use crate::page_csp::Flavour;
use crate::util::{get, js_error_text, obj, to_js, with_timeout};

pub fn tab_id(tab: TabId) -> Result<f64, WireError> {
    if (0..=i32::MAX as i64).contains(&tab) {
        Ok(tab as f64)
    } else {
        Err(WireError::new(ErrorCode::NotFound, format!("no tab {tab}")))
    }
}

pub fn info(tab: &Tab) -> TabInfo {
    TabInfo {
        id: tab.id().unwrap_or(-1.0) as TabId,
        url: tab.url().filter(|u| !u.is_empty()).or_else(|| tab.pending_url()).unwrap_or_default(),
        title: tab.title().unwrap_or_default(),
        active: tab.active().unwrap_or(false),
    }
}

/// Maps a rejected tabs API call to NOT_FOUND when the tab is gone.
pub fn tab_error(tab: TabId, e: &JsValue) -> WireError {
    let text = js_error_text(e);
    if text.contains("No tab with id") || text.contains("No tab") {
        WireError::new(ErrorCode::NotFound, format!("no tab {tab}"))
    } else {
        WireError::internal(text)
    }
}

pub async fn get_tab(tab: TabId) -> Result<Tab, WireError> {
    let id = tab_id(tab)?;
    chrome::tabs_get(id).await.map(JsCast::unchecked_into).map_err(|e| tab_error(tab, &e))
}

/// The tab's URL (its pending URL while a navigation starts).
pub async fn tab_url(tab: TabId) -> Result<String, WireError> {
    Ok(info(&get_tab(tab).await?).url)
}

/// Only http(s) pages have our content script.
pub async fn require_web_page(tab: TabId) -> Result<(), WireError> {
    let page = get_tab(tab).await?;
    if is_web_url(&page.url().unwrap_or_default()) { Ok(()) } else { Err(not_a_web_page()) }
}

/// `http://` or `https://`, in any case.
pub fn is_web_url(url: &str) -> bool {
    let scheme = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    scheme.starts_with("http://") || scheme.starts_with("https://")
}

pub fn not_a_web_page() -> WireError {
    WireError::new(ErrorCode::InvalidRequest, "only http(s) pages can be read")
}

/// Sends `req` to the content script of `tab` (injecting it once if the
/// tab has none yet) and decodes its `Outcome`.
pub async fn ask_page(tab: TabId, req: &PageRequest) -> Result<CommandResult, WireError> {
    let text = ask_page_text(tab, req).await?;
    match serde_json::from_str::<Outcome>(&text) {
        Ok(Outcome::Ok(r)) => Ok(r),
        Ok(Outcome::Err(e)) => Err(e),
        Err(_) => Err(WireError::internal("the page sent an invalid answer")),
    }
}

/// Sends `req` to the content script of `tab` and returns its answer (JSON
/// text). The content script is never declared in the manifest nor
/// web-accessible (SECURITY.md): a document without it gets it injected
/// here, once, if it is an http(s) page (`INVALID_REQUEST` otherwise).
pub async fn ask_page_text(tab: TabId, req: &PageRequest) -> Result<String, WireError> {
    let reply = ask_page_value(tab, req).await?;
    reply.as_string().ok_or_else(|| WireError::internal("the page gave no answer"))
}

/// [`ask_page_text`]'s answer as it came (a snapshot comes in two parts).
///
/// "No receiver" means the message reached no content script: the document
/// has none yet, or the one asked went away and a new one has none yet.
/// Nothing was carried out, so any request is sent again, after an
/// injection, up to [`NO_RECEIVER_TRIES`] times; a page that reloads or
/// navigates itself faster than that is `PAGE_NOT_LOADED`, said plainly
/// (Chrome's own text goes to the console, not to the agent).
pub async fn ask_page_value(tab: TabId, req: &PageRequest) -> Result<JsValue, WireError> {
    let id = tab_id(tab)?;
    let msg = &to_js(req);
    let may_repeat = req.may_repeat();
    let mut reply = ask_content(id, msg, may_repeat).await;
    for _ in 0..NO_RECEIVER_TRIES {
        if !matches!(&reply, Err(e) if no_receiver(e)) {
            break;
        }
        // No content script in this document yet: inject it (a classic
        // script, in the flavour the page's policy allows) and ask again.
        let url = tab_url(tab).await?;
        if !is_web_url(&url) {
            return Err(not_a_web_page());
        }
        reply = match inject_content(tab, id, &url).await {
            Ok(()) => ask_content(id, msg, may_repeat).await,
            // The frame went away while the script went in: a new document.
            Err(Injection::Gone) => Err(AskError::Gone),
            Err(Injection::Refused(e)) => return Err(e),
        };
    }
    reply.map_err(|e| match e {
        AskError::Timeout => WireError::new(ErrorCode::Timeout, "the page did not answer in time"),
        AskError::Closed => WireError::new(
            ErrorCode::EffectUnknown,
            "the page went away before it answered: the action may or may not have been carried out",
        ),
        AskError::Js(e) if !document_gone(&e) => tab_error(tab, &e),
        AskError::Js(e) => {
            web_sys::console::warn_1(&e);
            kept_going_away()
        }
        AskError::Gone => kept_going_away(),
    })
}

fn kept_going_away() -> WireError {
    WireError::new(
        ErrorCode::PageNotLoaded,
        "the page kept going away before it could answer (it reloads or navigates itself); ask again",
    )
}

/// Injections [`ask_page_value`] tries for one request whose message found
/// no content script (a new document each time, at most).
const NO_RECEIVER_TRIES: u32 = 3;

/// Injects the content script into the tab's top frame: the WebAssembly
/// flavour where `crate::page_csp` says the page's headers allow it (its
/// loader answers `true` once it runs, `false` when it stepped aside for a
/// `<meta>` policy), the plain one otherwise or after that.
async fn inject_content(tab: TabId, id: f64, url: &str) -> Result<(), Injection> {
    let run = |file: &'static str| {
        let injection = obj(&[
            ("target", obj(&[("tabId", JsValue::from_f64(id))]).into()),
            ("files", Array::of1(&JsValue::from_str(file)).into()),
        ]);
        async move { chrome::scripting_execute_script(&injection).await }
    };
    // An error page cannot take either flavour; any other failure of the
    // WebAssembly one (refused where the headers allowed it) is noted and
    // the plain flavour runs instead.
    let error_page = |e: &JsValue| {
        crate::load_errors::is_error_page(&js_error_text(e)).then(|| crate::load_errors::error_page(tab, url))
    };
    if crate::page_csp::flavour(tab, url) == Flavour::Wasm {
        match run(Flavour::Wasm.file()).await {
            Ok(results) if get(&Array::from(&results).get(0), "result").as_bool() == Some(true) => return Ok(()),
            Ok(_) => {}
            Err(e) if document_gone(&e) => return Err(Injection::Gone),
            Err(e) => match error_page(&e) {
                Some(err) => return Err(Injection::Refused(err)),
                None => web_sys::console::warn_1(&e),
            },
        }
    }
    run(Flavour::Plain.file()).await.map(|_| ()).map_err(|e| {
        if document_gone(&e) {
            return Injection::Gone;
        }
        Injection::Refused(
            error_page(&e)
                .unwrap_or_else(|| WireError::internal(format!("cannot reach the page: {}", js_error_text(&e)))),
        )
    })
}

/// Why [`inject_content`] did not put the script in.
enum Injection {
    /// The frame went away meanwhile (its document was replaced): the
    /// tab's next document may take it.
    Gone,
    Refused(WireError),
}

/// Chrome's error for a message or script that reached no content script
/// because the document has none yet or went away: nothing was carried
/// out.
fn document_gone(e: &JsValue) -> bool {
    document_gone_text(&js_error_text(e))
}

/// [`document_gone`] on the error's text (Chrome's and Firefox's wording).
fn document_gone_text(t: &str) -> bool {
    ["Receiving end does not exist", "Could not establish connection", "was removed", "No frame with id"]
        .iter()
        .any(|m| t.contains(m))
}

enum AskError {
    Timeout,
    /// The document went away (its port closed) before it answered.
    Closed,
    /// The document went away before the request reached a content
    /// script, or (a request that may be repeated) without answering:
    /// asked again as if it had reached none.
    Gone,
    Js(JsValue),
}

fn no_receiver(e: &AskError) -> bool {
    match e {
        AskError::Js(e) => document_gone(e),
        AskError::Gone => true,
        AskError::Timeout | AskError::Closed => false,
    }
}

/// Asks the content script of the tab's top frame, the only one it is
/// injected into: over its port when one is open (`crate::channel`), else
/// with `sendMessage` to `frameId: 0`, which keeps Chrome from offering the
/// message to every frame of the page (a page with a dozen ad frames in
/// other processes would cost a dozen more messages a call); once that is
/// answered, the port is opened for the next requests. A request that met
/// a closing port goes by `sendMessage` again only if it `may_repeat`.
async fn ask_content(id: f64, msg: &JsValue, may_repeat: bool) -> Result<JsValue, AskError> {
    let wait = COMMAND_TIMEOUT_MS as u32 - 5_000;
    if let Some(p) = crate::channel::send(id, msg) {
        match with_timeout(p, wait).await {
            Ok(Some(v)) if v != crate::channel::closed_marker() => return Ok(v),
            Ok(Some(_)) if !may_repeat => return Err(AskError::Closed),
            Ok(Some(_)) => {}
            Ok(None) => {
                crate::channel::forget(id);
                return Err(AskError::Timeout);
            }
            Err(e) => return Err(AskError::Js(e)),
        }
    }
    let top = obj(&[("frameId", JsValue::from_f64(0.0))]);
    let p = chrome::tabs_send_message(id, msg, &top).map_err(AskError::Js)?;
    match with_timeout(p, wait).await {
        // Chrome answers nothing for a document that went away after the
        // message reached it.
        Ok(Some(v)) if v.is_undefined() => Err(if may_repeat { AskError::Gone } else { AskError::Closed }),
        Ok(Some(v)) => {
            crate::channel::open(id);
            Ok(v)
        }
        Ok(None) => Err(AskError::Timeout),
        Err(e) => Err(AskError::Js(e)),
    }
}

// ---------------------------------------------------------------- page loads

struct Waiting {
    key: u64,
    tab: TabId,
    seen_loading: bool,
    resolve: Function,
}

type UpdatedListener = Closure<dyn FnMut(JsValue, JsValue, JsValue)>;

#[derive(Default)]
struct Loads {
    next_key: u64,
    waiting: Vec<Waiting>,
    listener: Option<UpdatedListener>,
}

thread_local! {
    static LOADS: RefCell<Loads> = RefCell::new(Loads::default());
}

/// Registers the `tabs.onUpdated` listener once for the worker's lifetime.
pub fn install_listeners() {
    LOADS.with(|l| {
        let mut l = l.borrow_mut();
        if l.listener.is_some() {
            return;
        }
        let cb = UpdatedListener::new(on_updated);
        chrome::tabs_on_updated_add_listener(cb.as_ref().unchecked_ref());
        l.listener = Some(cb);
    });
}

fn on_updated(tab_id: JsValue, change: JsValue, tab_now: JsValue) {
    let Some(tab) = tab_id.as_f64().map(|t| t as TabId) else { return };
    let mut status = get(&change, "status").as_string();
    // A new tab's first `about:blank` can report its load late, after a
    // navigation to a web page was asked for: that is not the load anyone
    // waits for (every wait is for an http(s) page).
    if status.as_deref() == Some("complete") && get(&tab_now, "url").as_string().as_deref() == Some("about:blank") {
        status = None;
    }
    let url_changed = !get(&change, "url").is_undefined();
    // The port belongs to the document that is going (`crate::channel`).
    if url_changed || status.as_deref() == Some("loading") {
        crate::channel::retire(tab as f64);
    }
    let done: Vec<Function> = LOADS.with(|l| {
        let mut l = l.borrow_mut();
        let mut done = Vec::new();
        l.waiting.retain_mut(|w| {
            if w.tab != tab {
                return true;
            }
            if status.as_deref() == Some("loading") || url_changed {
                w.seen_loading = true;
            }
            if status.as_deref() == Some("complete") && w.seen_loading {
                done.push(w.resolve.clone());
                return false;
            }
            true
        });
        done
    });
    for f in done {
        let _ = f.call0(&JsValue::NULL);
    }
}

/// A load waited for did not complete within its bound.
pub fn load_timed_out() -> WireError {
    WireError::new(ErrorCode::Timeout, "the page did not finish loading in time")
}

/// Waits for `tabs.onUpdated` to report the tab's next complete load.
pub struct LoadWaiter {
    key: u64,
    promise: Promise,
}

impl LoadWaiter {
    pub fn register(tab: TabId, seen_loading: bool) -> LoadWaiter {
        install_listeners();
        let key = LOADS.with(|l| {
            let mut l = l.borrow_mut();
            l.next_key += 1;
            l.next_key
        });
        let promise = Promise::new(&mut |resolve, _reject| {
            LOADS.with(|l| l.borrow_mut().waiting.push(Waiting { key, tab, seen_loading, resolve }));
        });
        LoadWaiter { key, promise }
    }

    pub fn cancel(&self) {
        LOADS.with(|l| l.borrow_mut().waiting.retain(|w| w.key != self.key));
    }

    /// A load started (or already finished) since registration.
    pub fn seen_loading(&self) -> bool {
        LOADS.with(|l| l.borrow().waiting.iter().find(|w| w.key == self.key).is_none_or(|w| w.seen_loading))
    }

    pub async fn wait(self, tab: TabId) -> Result<(), WireError> {
        self.wait_ms(tab, NAVIGATION_TIMEOUT_MS as u32).await
    }

    /// Like [`LoadWaiter::wait_ms`], but gives up early (answering
    /// `Ok(false)`) as soon as `gave_way()` says the load will not come, e.g.
    /// the click started a download instead; `Ok(true)` once the page loaded.
    pub async fn wait_ms_unless(self, tab: TabId, ms: u32, gave_way: impl Fn() -> bool) -> Result<bool, WireError> {
        const SLICE_MS: u32 = 100;
        let mut left = ms;
        while left > 0 {
            if gave_way() {
                self.cancel();
                return Ok(false);
            }
            let slice = left.min(SLICE_MS);
            if let Ok(Some(_)) = with_timeout(self.promise.clone(), slice).await {
                self.cancel();
                return Ok(true);
            }
            left -= slice;
        }
        self.wait_ms(tab, 0).await.map(|()| true)
    }

    pub async fn wait_ms(self, tab: TabId, ms: u32) -> Result<(), WireError> {
        let r = with_timeout(self.promise.clone(), ms).await;
        self.cancel();
        match r {
            Ok(Some(_)) => Ok(()),
            Ok(None) | Err(_) => {
                // Same-document navigations may not report a new load: accept a
                // tab that has finished loading by now.
                match get_tab(tab).await {
                    Ok(t) if t.status().as_deref() == Some("complete") => Ok(()),
                    Ok(_) => Err(load_timed_out()),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::document_gone_text;

    #[test]
    fn only_errors_of_a_document_that_went_away_are_asked_again() {
        let cases = [
            // sendMessage to a tab whose document has no listener (yet, or any more).
            ("Could not establish connection. Receiving end does not exist.", true),
            // executeScript while the frame is replaced by a load.
            ("Frame with ID 0 was removed.", true),
            ("No frame with id 0 in tab 1234.", true),
            // Errors that asking again would not mend: said as they are.
            ("No tab with id: 1234.", false),
            (
                "Cannot access contents of the page. Extension manifest must request permission to access the respective host.",
                false,
            ),
            ("Cannot access a chrome:// URL", false),
            ("The extensions gallery cannot be scripted.", false),
            ("Missing host permission for the tab", false),
            ("", false),
        ];
        for (text, gone) in cases {
            assert_eq!(document_gone_text(text), gone, "{text:?}");
        }
    }
}
