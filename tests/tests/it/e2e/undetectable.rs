//! Nothing for pages to find (issue 14): a page cannot tell that Chaperone
//! is installed, nor that it read the page, until the agent acts on it.
//!
//! `fixtures/sites/detect/index.html` plays a site that probes for
//! extensions from its own world: it fetches (and loads as an image) every
//! file of the built `dist/extension` under our fixed id, the same paths
//! under made-up `use_dynamic_url`-style hosts, and a made-up extension's
//! manifest as the control; it watches its DOM with a MutationObserver,
//! compares its globals with a fresh `about:blank` window's, listens for
//! every event type the platform names, and checks `chrome.runtime`. CDP
//! watches the console of every world in the tab. Before and after a
//! snapshot nothing may show; after a click, only the click's own events on
//! the button. A tab the person opened and the agent never touched sees
//! nothing either.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Stack, ref_of};

use super::{new_tab, page_at, snapshot};

/// Every file of the unpacked extension, as paths relative to its root.
fn extension_files(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Our files under our id, the same paths under made-up dynamic-URL hosts
/// and the `getURL` shapes a page might guess.
fn probe_urls(files: &[String]) -> Vec<String> {
    let id = shared::EXTENSION_ID;
    let mut urls: Vec<String> = files.iter().map(|f| format!("chrome-extension://{id}/{f}")).collect();
    for host in ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "00000000-0000-0000-0000-000000000000"] {
        for f in ["manifest.json", "content.js", "content/content.js", "worker/worker_bg.wasm", "background.js"] {
            urls.push(format!("chrome-extension://{host}/{f}"));
        }
    }
    urls.push(format!("chrome-extension://{id}/"));
    urls.push(format!("chrome-extension://{id}/content/content_bg.wasm.js"));
    urls
}

const MADE_UP: &str = "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/manifest.json";

/// Runs the page's probe; asserts every extension URL fails exactly like a
/// made-up extension's, and that the probe itself works (a same-origin URL
/// loads).
async fn assert_nothing_fetchable(page: &CdpSession, urls: &[String], same_origin: &str, when: &str) {
    let mut all = vec![MADE_UP.to_string(), same_origin.to_string()];
    all.extend(urls.iter().cloned());
    let r = page.evaluate(&format!("detector.probe({})", json!(all))).await.expect("the page probes");
    let rows = r.as_array().unwrap_or_else(|| panic!("{when}: no probe rows: {r}"));
    assert_eq!(rows.len(), all.len(), "{when}: {r}");
    let control = &rows[0];
    assert_eq!(rows[1]["fetched"], json!(200), "{when}: the probe works on the page's own origin: {}", rows[1]);
    assert!(control["fetched"].is_string(), "{when}: a made-up extension cannot be fetched: {control}");
    assert_eq!(control["image"], "error", "{when}: {control}");
    let found: Vec<&Value> =
        rows[2..].iter().filter(|row| row["fetched"] != control["fetched"] || row["image"] != "error").collect();
    assert!(found.is_empty(), "{when}: the page can tell these apart from a made-up extension: {found:#?}");
}

/// The page's own report; asserts nothing but `allowed` events.
async fn assert_page_saw_nothing(page: &CdpSession, when: &str, allowed_events: &[&str]) -> Value {
    let r = page.evaluate("detector.report()").await.expect("the page reports");
    assert_eq!(r["mutations"], json!([]), "{when}: DOM mutations: {r:#}");
    assert_eq!(r["newGlobals"], json!([]), "{when}: new globals: {r:#}");
    assert_eq!(r["documentProps"], json!([]), "{when}: new document properties: {r:#}");
    assert_eq!(r["htmlChanged"], json!(false), "{when}: the document changed: {r:#}");
    assert_eq!(r["attributes"], json!([]), "{when}: added attributes: {r:#}");
    assert!(r["runtime"] != "function", "{when}: chrome.runtime reaches an extension: {r:#}");
    let events = r["events"].as_array().cloned().unwrap_or_default();
    let unexpected: Vec<&Value> = events
        .iter()
        .filter(|e| {
            let t = e["type"].as_str().unwrap_or("");
            let on_button = allowed_events.contains(&t) && e["target"] == "more";
            // The real pointer and the browser's own events: trusted, which no
            // script (ours included) can make.
            let browser = e["trusted"] == true
                && (POINTER_EVENTS.contains(&t)
                    || (WINDOW_EVENTS.contains(&t) && (e["target"] == "window" || e["target"] == "#document")));
            !(on_button || browser)
        })
        .collect();
    assert!(unexpected.is_empty(), "{when}: events the page saw: {unexpected:#?}");
    r
}

/// What the browser itself tells a page (trusted, on the window or the
/// document): tabs coming and going, and the first sensor readings that
/// follow adding a `devicemotion`/`deviceorientation` listener. Not ours: a
/// `focus()` call on an element would target the element.
const WINDOW_EVENTS: &[&str] = &[
    "visibilitychange",
    "blur",
    "focus",
    "focusin",
    "focusout",
    "resize",
    "devicemotion",
    "deviceorientation",
    "deviceorientationabsolute",
];

/// The real pointer moving over or out of the page (trusted).
const POINTER_EVENTS: &[&str] = &[
    "pointerover",
    "pointerout",
    "pointerenter",
    "pointerleave",
    "pointermove",
    "pointerrawupdate",
    "mouseover",
    "mouseout",
    "mouseenter",
    "mouseleave",
    "mousemove",
];

/// The click's own events (`extension/content/src/act.rs`): pointer and
/// mouse events on the button, its focus, the click.
const CLICK_EVENTS: &[&str] = &[
    "pointerover",
    "pointerenter",
    "mouseover",
    "mouseenter",
    "pointermove",
    "mousemove",
    "pointerdown",
    "mousedown",
    "focus",
    "focusin",
    "pointerup",
    "mouseup",
    "click",
];

/// Console calls and uncaught exceptions of any world in the tab.
fn console_noise(events: &mut tokio::sync::broadcast::Receiver<Value>, session: &str) -> Vec<Value> {
    let mut out = Vec::new();
    while let Ok(ev) = events.try_recv() {
        let m = ev["method"].as_str().unwrap_or("");
        if ev["sessionId"] == json!(session) && (m == "Runtime.consoleAPICalled" || m == "Runtime.exceptionThrown") {
            out.push(ev["params"].clone());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_finds_no_trace_of_the_extension_before_or_after_a_snapshot_and_a_click() {
    let mut s = Stack::start().await.expect("start the stack");
    let root = tests::extension_dir();
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(root.join("manifest.json")).unwrap()).unwrap();
    let files = extension_files(&root);
    for f in ["manifest.json", "background.js", "content.js", "content-wasm.js", "worker/worker_bg.wasm"] {
        assert!(files.iter().any(|x| x == f), "{f} is not in the built extension: {files:?}");
    }
    let urls = probe_urls(&files);
    let url = s.url("/detect/index.html");
    let same_origin = s.url("/detect/index.expect.txt");

    // A tab the person opened before the agent did anything.
    // (Another URL, so that `page_at` below finds the agent's tab.)
    let person = s.browser.cdp.new_page(&format!("{url}?person")).await.expect("the person's tab");
    let mut person_events = s.browser.cdp.events();
    person.call("Runtime.enable", json!({})).await.unwrap();
    person.evaluate("detector.start()").await.unwrap();

    // The agent's tab.
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    let mut events = s.browser.cdp.events();
    page.call("Runtime.enable", json!({})).await.unwrap();
    page.evaluate("detector.start()").await.unwrap();
    assert!(page.evaluate("detector.types()").await.unwrap().as_u64().unwrap() > 100, "the page listens for events");

    // Before the agent reads the page.
    assert_nothing_fetchable(&page, &urls, &same_origin, "before the snapshot").await;
    assert_page_saw_nothing(&page, "before the snapshot", &[]).await;

    // A snapshot loads the content script into the page: still nothing.
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let more = ref_of(&snap, "button", "Show more").unwrap_or_else(|| panic!("no button in:\n{snap}"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_page_saw_nothing(&page, "after the snapshot", &[]).await;
    assert_nothing_fetchable(&page, &urls, &same_origin, "after the snapshot").await;
    snapshot(&mut s.mcp, json!({ "interactive_only": true })).await;
    assert_page_saw_nothing(&page, "after a second snapshot", &[]).await;

    // The agent acts: the page sees the click on its button, nothing else.
    let r = s.mcp.ok("browser_click", json!({ "ref": more })).await;
    assert!(!r.is_error(), "{}", r.raw);
    assert_eq!(page.evaluate("detector.clicks()").await.unwrap(), json!(1), "the click reached the page");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = assert_page_saw_nothing(&page, "after the click", CLICK_EVENTS).await;
    assert!(
        after["events"].as_array().is_some_and(|e| e.iter().any(|e| e["type"] == "click")),
        "the page's listeners hear events: {after:#}"
    );
    assert_nothing_fetchable(&page, &urls, &same_origin, "after the click").await;

    // No console output or uncaught error from any world in either tab.
    let noise = console_noise(&mut events, &page.session_id);
    assert!(noise.is_empty(), "console output in the agent's tab: {noise:#?}");

    // The person's tab, never touched by the agent: nothing at all.
    assert_nothing_fetchable(&person, &urls, &same_origin, "in the person's tab").await;
    assert_page_saw_nothing(&person, "in the person's tab", &[]).await;
    let noise = console_noise(&mut person_events, &person.session_id);
    assert!(noise.is_empty(), "console output in the person's tab: {noise:#?}");

    // And the reason, in the manifest.
    assert!(manifest.get("web_accessible_resources").is_none(), "the manifest exposes files: {manifest:#}");
    assert!(manifest.get("content_scripts").is_none(), "content scripts declared: {manifest:#}");
    assert!(manifest.get("externally_connectable").is_none(), "pages may message the extension: {manifest:#}");
}
