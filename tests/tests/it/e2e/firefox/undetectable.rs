//! Nothing for pages to find in Firefox either: `fixtures/sites/detect/`
//! probes every file of `dist/firefox` under our `moz-extension://` host —
//! fixed in the owned profile, so a page could know it — and under a
//! made-up host as the control, watches its DOM, globals and events.
//! Before and after a snapshot nothing may show; after a click, only the
//! click's own events on the button. A tab the person opened sees nothing.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tests::ref_of;

use super::FxStack;
use crate::e2e::{new_tab, snapshot};

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

const MADE_UP: &str = "moz-extension://00000000-1111-2222-3333-444444444444/manifest.json";

async fn assert_nothing_fetchable(s: &FxStack, page: &str, urls: &[String], same_origin: &str, when: &str) {
    let mut all = vec![MADE_UP.to_string(), same_origin.to_string()];
    all.extend(urls.iter().cloned());
    let r = s.eval(page, &format!("detector.probe({})", json!(all))).await;
    let rows = r.as_array().unwrap_or_else(|| panic!("{when}: no probe rows: {r}"));
    assert_eq!(rows.len(), all.len(), "{when}: {r}");
    let control = &rows[0];
    assert_eq!(rows[1]["fetched"], json!(200), "{when}: the probe works on the page's own origin: {}", rows[1]);
    assert!(control["fetched"].is_string(), "{when}: a made-up add-on cannot be fetched: {control}");
    assert_eq!(control["image"], "error", "{when}: {control}");
    let found: Vec<&Value> =
        rows[2..].iter().filter(|row| row["fetched"] != control["fetched"] || row["image"] != "error").collect();
    assert!(found.is_empty(), "{when}: the page can tell these apart from a made-up add-on: {found:#?}");
}

const WINDOW_EVENTS: &[&str] = &["visibilitychange", "blur", "focus", "focusin", "focusout", "resize"];
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

async fn assert_page_saw_nothing(s: &FxStack, page: &str, when: &str, allowed: &[&str]) -> Value {
    let r = s.eval(page, "detector.report()").await;
    assert_eq!(r["mutations"], json!([]), "{when}: DOM mutations: {r:#}");
    assert_eq!(r["newGlobals"], json!([]), "{when}: new globals: {r:#}");
    assert_eq!(r["documentProps"], json!([]), "{when}: new document properties: {r:#}");
    assert_eq!(r["htmlChanged"], json!(false), "{when}: the document changed: {r:#}");
    assert_eq!(r["attributes"], json!([]), "{when}: added attributes: {r:#}");
    assert_eq!(r["runtime"], json!("no chrome"), "{when}: an extension API is visible: {r:#}");
    let unexpected: Vec<Value> = r["events"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            let t = e["type"].as_str().unwrap_or("");
            let on_button = allowed.contains(&t) && e["target"] == "more";
            let browser = e["trusted"] == true
                && WINDOW_EVENTS.contains(&t)
                && (e["target"] == "window" || e["target"] == "#document");
            !(on_button || browser)
        })
        .collect();
    assert!(unexpected.is_empty(), "{when}: events the page saw: {unexpected:#?}");
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_finds_no_trace_of_the_addon() {
    let mut s = FxStack::start(None, false).await;
    let root = tests::firefox::firefox_extension_dir();
    let files = extension_files(&root);
    assert!(files.iter().any(|f| f == "worker/worker_bg.wasm"), "{files:?}");
    let origin = shared::firefox_extension_origin();
    let mut urls: Vec<String> = files.iter().map(|f| format!("{origin}/{f}")).collect();
    urls.push(format!("{origin}/"));
    let url = s.url("/detect/index.html");
    let same_origin = s.url("/detect/index.expect.txt");

    // The person's own tab, before the agent did anything.
    let person = s.firefox.bidi.call("browsingContext.create", json!({ "type": "tab" })).await.expect("a tab");
    let person = person["context"].as_str().expect("context id").to_string();
    s.firefox
        .bidi
        .call(
            "browsingContext.navigate",
            json!({ "context": person, "url": format!("{url}?person"), "wait": "complete" }),
        )
        .await
        .expect("the person's page");
    s.eval(&person, "detector.start()").await;

    new_tab(&mut s.mcp, &url).await;
    let page = s.page(&url).await;
    s.eval(&page, "detector.start()").await;
    assert!(s.eval(&page, "detector.types()").await.as_u64().unwrap_or(0) > 100, "the page listens for events");

    assert_nothing_fetchable(&s, &page, &urls, &same_origin, "before the snapshot").await;
    assert_page_saw_nothing(&s, &page, "before the snapshot", &[]).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let more = ref_of(&snap, "button", "Show more").unwrap_or_else(|| panic!("no button in:\n{snap}"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_page_saw_nothing(&s, &page, "after the snapshot", &[]).await;
    assert_nothing_fetchable(&s, &page, &urls, &same_origin, "after the snapshot").await;

    let r = s.mcp.ok("browser_click", json!({ "ref": more })).await;
    assert!(!r.is_error(), "{}", r.raw);
    assert_eq!(s.eval(&page, "detector.clicks()").await, json!(1), "the click reached the page");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = assert_page_saw_nothing(&s, &page, "after the click", CLICK_EVENTS).await;
    assert!(
        after["events"].as_array().is_some_and(|e| e.iter().any(|e| e["type"] == "click")),
        "the page's listeners hear events (control): {after:#}"
    );
    assert_nothing_fetchable(&s, &page, &urls, &same_origin, "after the click").await;

    assert_nothing_fetchable(&s, &person, &urls, &same_origin, "in the person's tab").await;
    assert_page_saw_nothing(&s, &person, "in the person's tab", &[]).await;

    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(root.join("manifest.json")).unwrap()).unwrap();
    for key in ["web_accessible_resources", "content_scripts", "externally_connectable"] {
        assert!(manifest.get(key).is_none(), "the Firefox manifest has {key}: {manifest:#}");
    }
}
