//! Which load a `browser_navigate` waits for.
//!
//! The worker asks Chrome to open a URL in the tab (`tabs.update`) and waits
//! for the tab's next complete load. The page in the tab can navigate too:
//! a page that reloads itself (a timer, a dashboard that refreshes, a
//! `location.reload()` after a failed check) starts its own navigation at
//! any moment, and Chrome lets it race ours. Seen in Chromium: the page's
//! reload aborts ours; or ours commits and the reload the old document
//! started a moment before commits after it, replacing our page; or the
//! reload's load is reported before ours commits. In each case "the next
//! complete load" is the page's, and the agent was told it had arrived
//! while the tab still showed the old page.
//!
//! So the top frame's navigations are watched from just before the request
//! (`webNavigation.onBeforeNavigate`, `onCommitted`, `onErrorOccurred`,
//! frame 0 of that tab), and each complete load is judged by [`verdict`].
//! Ours is the first navigation started to the URL asked for. A commit is
//! *the page's* when it shows the page the tab showed before (not a
//! server redirect) and was not started by our document after ours
//! committed (a page that sends the visitor back by script is where ours
//! landed). Then:
//!
//! - The last commit is not the page's: [`Verdict::Landed`].
//! - The last commit is the page's, and ours committed or failed before it:
//!   [`Verdict::Superseded`]; the request is made again, at most
//!   [`NAVIGATE_TRIES`] times in all. Ours still on its way:
//!   [`Verdict::Pending`], wait for the next load within the same bound.
//! - No commit: ours failed (the browser's error page, a download, a 204,
//!   which the caller reports as before; a download is never started
//!   twice): [`Verdict::Landed`]; else [`Verdict::Pending`].
//! - Ours never seen to start, or the tab was sent to the URL it already
//!   shows: [`Verdict::Landed`], as without the watch.

use std::cell::RefCell;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::util::{get, without_fragment};
use shared::protocol::TabId;

/// Requests made for one `browser_navigate` at most, when the page's own
/// navigations keep replacing it.
pub const NAVIGATE_TRIES: usize = 5;

/// What the top frame of the watched tab did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NavEvent {
    Started { url: String },
    Committed { url: String, server_redirect: bool },
    Failed { url: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The load just seen is ours, or nothing tells otherwise.
    Landed,
    /// Only the page's own navigations so far: ours is still on its way.
    Pending,
    /// The page's navigation replaced or cancelled ours: ask again.
    Superseded,
}

/// `events` in the order Chrome reported them since just before the
/// request; `asked` the URL asked for (as Chrome wrote it); `before` the
/// URL the tab showed.
pub fn verdict(events: &[NavEvent], asked: &str, before: &str) -> Verdict {
    use NavEvent::*;
    if same_document(asked, before) {
        return Verdict::Landed;
    }
    let Some(ours) = events.iter().position(|e| matches!(e, Started { url } if same_document(url, asked))) else {
        return Verdict::Landed;
    };
    // Walk from ours on: which commits are the page's, and is ours settled?
    let mut ours_committed_at: Option<usize> = None;
    let mut ours_settled = false;
    let mut last_commit_is_page: Option<bool> = None;
    for (i, e) in events.iter().enumerate().skip(ours) {
        match e {
            Committed { url, server_redirect } => {
                let by_our_document = ours_committed_at.is_some_and(|k| {
                    events[k + 1..i].iter().any(|e| matches!(e, Started { url: u } if same_document(u, url)))
                });
                let page = same_document(url, before) && !server_redirect && !by_our_document;
                if !page && ours_committed_at.is_none() {
                    ours_committed_at = Some(i);
                }
                ours_settled |= !page;
                last_commit_is_page = Some(page);
            }
            Failed { url } if !same_document(url, before) => ours_settled = true,
            _ => {}
        }
    }
    match last_commit_is_page {
        Some(false) => Verdict::Landed,
        Some(true) if ours_settled => Verdict::Superseded,
        Some(true) => Verdict::Pending,
        None if ours_settled => Verdict::Landed,
        None => Verdict::Pending,
    }
}

/// Two URLs of the same document: equal but for the fragment.
fn same_document(a: &str, b: &str) -> bool {
    without_fragment(a) == without_fragment(b)
}

// ------------------------------------------------------------ the watch (IO)

struct Watching {
    key: u64,
    tab: TabId,
    events: Vec<NavEvent>,
}

type DetailsListener = Closure<dyn FnMut(JsValue)>;

#[derive(Default)]
struct Watches {
    next_key: u64,
    watching: Vec<Watching>,
    listeners: Option<[DetailsListener; 3]>,
}

thread_local! {
    static WATCHES: RefCell<Watches> = RefCell::new(Watches::default());
}

/// The top frame's commits and errors in one tab, from [`Watch::start`]
/// until it is dropped.
pub struct Watch {
    key: u64,
}

impl Watch {
    pub fn start(tab: TabId) -> Watch {
        install_listeners();
        let key = WATCHES.with(|w| {
            let mut w = w.borrow_mut();
            w.next_key += 1;
            let key = w.next_key;
            w.watching.push(Watching { key, tab, events: Vec::new() });
            key
        });
        Watch { key }
    }

    pub fn verdict(&self, asked: &str, before: &str) -> Verdict {
        WATCHES.with(|w| {
            let w = w.borrow();
            let events = w.watching.iter().find(|x| x.key == self.key).map_or(&[][..], |x| &x.events[..]);
            verdict(events, asked, before)
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let key = self.key;
        WATCHES.with(|w| w.borrow_mut().watching.retain(|x| x.key != key));
    }
}

fn install_listeners() {
    WATCHES.with(|w| {
        let mut w = w.borrow_mut();
        if w.listeners.is_some() {
            return;
        }
        let web_navigation = get(&get(&js_sys::global(), "chrome"), "webNavigation");
        let started = DetailsListener::new(|d: JsValue| record(&d, |url| NavEvent::Started { url }));
        let committed = DetailsListener::new(|d: JsValue| {
            let qualifiers = get(&d, "transitionQualifiers");
            let server_redirect = js_sys::Array::is_array(&qualifiers)
                && js_sys::Array::from(&qualifiers).includes(&JsValue::from_str("server_redirect"), 0);
            record(&d, |url| NavEvent::Committed { url, server_redirect });
        });
        let failed = DetailsListener::new(|d: JsValue| record(&d, |url| NavEvent::Failed { url }));
        let listeners = [started, committed, failed];
        for (event, cb) in ["onBeforeNavigate", "onCommitted", "onErrorOccurred"].into_iter().zip(&listeners) {
            let target = get(&web_navigation, event);
            if let Ok(add) = get(&target, "addListener").dyn_into::<js_sys::Function>() {
                let _ = add.call1(&target, cb.as_ref());
            }
        }
        w.listeners = Some(listeners);
    });
}

fn record(details: &JsValue, event: impl FnOnce(String) -> NavEvent) {
    if get(details, "frameId").as_f64() != Some(0.0) {
        return;
    }
    let Some(tab) = get(details, "tabId").as_f64().map(|t| t as TabId) else { return };
    let event = event(get(details, "url").as_string().unwrap_or_default());
    WATCHES.with(|w| {
        for x in w.borrow_mut().watching.iter_mut().filter(|x| x.tab == tab) {
            x.events.push(event.clone());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use NavEvent::*;

    const PAGE: &str = "http://a.test/reloading.html";
    const ASKED: &str = "http://a.test/next.html";

    fn started(url: &str) -> NavEvent {
        Started { url: url.into() }
    }
    fn committed(url: &str) -> NavEvent {
        Committed { url: url.into(), server_redirect: false }
    }
    fn redirected(url: &str) -> NavEvent {
        Committed { url: url.into(), server_redirect: true }
    }
    fn failed(url: &str) -> NavEvent {
        Failed { url: url.into() }
    }

    #[test]
    fn each_complete_load_is_judged_by_what_the_top_frame_did() {
        use Verdict::*;
        let cases: Vec<(&str, Vec<NavEvent>, &str, Verdict)> = vec![
            ("ours committed", vec![started(ASKED), committed(ASKED)], ASKED, Landed),
            ("ours redirected elsewhere", vec![started(ASKED), redirected("http://b.test/")], ASKED, Landed),
            ("ours redirected back to the page", vec![started(ASKED), redirected(PAGE)], ASKED, Landed),
            ("ours on its way", vec![started(ASKED)], ASKED, Pending),
            ("the page's reload loaded first", vec![started(ASKED), committed(PAGE)], ASKED, Pending),
            (
                "the page reloaded, then ours",
                vec![started(PAGE), started(ASKED), committed(PAGE), committed(ASKED)],
                ASKED,
                Landed,
            ),
            // Both seen in Chromium against a page reloading every 30 ms.
            ("the page's reload aborted ours", vec![started(ASKED), failed(ASKED), committed(PAGE)], ASKED, Superseded),
            (
                "the old document's reload replaced ours",
                vec![started(ASKED), committed(ASKED), committed(PAGE)],
                ASKED,
                Superseded,
            ),
            (
                "our page sent the visitor back by script",
                vec![started(ASKED), committed(ASKED), started(PAGE), committed(PAGE)],
                ASKED,
                Landed,
            ),
            ("the page's reload was aborted", vec![started(ASKED), failed(PAGE), committed(ASKED)], ASKED, Landed),
            ("a download or a 204: aborted, nothing else", vec![started(ASKED), failed(ASKED)], ASKED, Landed),
            ("ours never seen to start", vec![committed(PAGE)], ASKED, Landed),
            ("nothing seen", vec![], ASKED, Landed),
            ("sent where it is", vec![started(PAGE), committed(PAGE)], PAGE, Landed),
            ("sent to a fragment of where it is", vec![committed(PAGE)], "http://a.test/reloading.html#x", Landed),
        ];
        for (name, events, asked, want) in cases {
            assert_eq!(verdict(&events, asked, PAGE), want, "{name}");
        }
    }
}
