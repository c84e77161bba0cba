//! Chrome DevTools Recorder files as DevTools writes them
//! (`fixtures/recorder/*.json`: `aria/Name` without a role, the same id as
//! CSS, XPath and `pierce/`, test ids, text selectors, `assertedEvents`,
//! `keyDown`/`keyUp`, `setViewport`, `waitForElement`, `hover`, `scroll`),
//! recorded on the tin shop (`fixtures/sites/tins/`).
//!
//! Each file is imported with `chaperone flow import` — its URLs rewritten
//! for each variant, as the person would — and replayed with `flow_run`
//! through the real bridge, extension and Chromium:
//!
//! - on the page it was recorded on and on a re-laid-out twin
//!   (`tins-twin`: the same labels, other ids, test ids, order and
//!   structure), every step runs without a question: nothing is shown in
//!   the approval window, no step is decided by the person or reports a
//!   changed target, every element is found by its name;
//! - on `tins-changed` the name "Large tin" now belongs to a link while the
//!   recorded id sits on a radio "Large tin (sold out)": that step asks,
//!   showing the recorded element beside the live one and what the id
//!   finds; denied, nothing is clicked and the run stops there;
//! - on `tins-ambiguous` a link is also called "Large tin" and no locator
//!   tells it from the radio: `NOT_FOUND` listing both, nobody asked,
//!   nothing clicked;
//! - `@puppeteer/replay` replays Chaperone's export of each imported file
//!   on both pages, to the same result.

use std::time::Duration;

use serde_json::{Value, json};
use tests::flowshop::import;
use tests::{CdpSession, Human, Stack};

/// A replay of a dozen steps on a machine whose 2 cores the suite shares.
const RUN_WITHIN: Duration = Duration::from_secs(120);

/// The origin and site the fixture files were recorded on.
const RECORDED_AT: &str = "http://localhost:8080/tins/";

/// The fixture `file` with its URLs on `site` of the test server.
fn recorder_file(s: &Stack, file: &str, site: &str) -> Value {
    let path = tests::workspace_root().join("fixtures/recorder").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = text.replace(RECORDED_AT, &format!("{}/{site}/", s.server.origin()));
    serde_json::from_str(&text).expect("the fixture is JSON")
}

/// Closes the tin shop's tabs left by earlier runs and opens a fresh one
/// for the next run.
async fn fresh_tab(s: &mut Stack) {
    let prefix = format!("{}/tins", s.server.origin());
    for t in s.browser.cdp.targets().await.expect("targets") {
        if t.kind == "page" && t.url.starts_with(&prefix) {
            s.browser.cdp.close_target(&t.target_id).await.expect("close an old tab");
        }
    }
    s.mcp.ok("browser_tabs", json!({ "action": "new" })).await;
}

/// The replayed tab, on `url` (query string ignored).
async fn tab_at(s: &Stack, url: &str) -> CdpSession {
    let t = s
        .browser
        .cdp
        .wait_for_target(Duration::from_secs(10), |t| t.kind == "page" && t.url.split(['?', '#']).next() == Some(url))
        .await
        .unwrap_or_else(|e| panic!("no tab at {url}: {e:#}"));
    let p = s.browser.cdp.attach(&t.target_id).await.expect("attach to the tab");
    p.call("Page.enable", json!({})).await.expect("Page.enable");
    p
}

/// `flow_run name` while watching the approval window: any request shown
/// fails the test with its text.
async fn run_watched(s: &mut Stack, human: &Human, name: &str) -> tests::ToolResult {
    let run = s.mcp.call("flow_run", json!({ "name": name }));
    tokio::pin!(run);
    let watch = human.next_request(RUN_WITHIN);
    tokio::pin!(watch);
    tokio::select! {
        r = &mut run => r.expect("flow_run answers"),
        shown = &mut watch => match shown {
            Ok((_, req)) => panic!("{name}: the person was asked: {}", req.text),
            Err(_) => run.await.expect("flow_run answers"),
        },
    }
}

/// [`run_watched`], which must succeed with every step unattended.
async fn run_unattended(s: &mut Stack, human: &Human, name: &str) -> Vec<Value> {
    let r = run_watched(s, human, name).await;
    assert!(!r.is_error(), "{name}: {}", r.text());
    let steps = r.data()["steps"].as_array().unwrap_or_else(|| panic!("no steps: {}", r.raw)).clone();
    for (i, step) in steps.iter().enumerate() {
        let at = format!("{name} step {}: {step}", i + 1);
        assert!(step["outcome"] == "done" || step["outcome"] == "skipped", "{at}");
        assert_ne!(step["decided_by"], "human", "{at}");
        assert!(step.get("changed").is_none(), "{at}");
        if step.get("via").is_some() {
            assert_eq!(step["via"], "role and name", "found by its name, not a fallback: {at}");
        }
    }
    assert!(!human.approval_window_open().await, "{name}: nothing waits for the person");
    steps
}

/// The tin order page's summary line (what "Add to cart" saw).
async fn summary(tab: &CdpSession) -> (String, String) {
    let v = tab.evaluate("[document.getElementById('summary').textContent, document.body.dataset.added || '0']").await;
    let v = v.expect("read the summary");
    (v[0].as_str().unwrap_or("").to_string(), v[1].as_str().unwrap_or("").to_string())
}

/// Per fixture: its name stem, the steps the flow has, and the summary the
/// order page shows after the replay.
const FILES: &[(&str, usize, &str)] = &[
    ("order-large-tin", 13, "Large tin of Darjeeling, gift wrapped, engraved \"Happy birthday\""),
    ("browse-small-tin", 4, "Small tin of Assam, not wrapped, engraved \"\""),
    ("gift-sencha", 6, "Small tin of Sencha, gift wrapped, engraved \"From Tea Club\""),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devtools_recorder_files_replay_unattended_on_their_page_and_a_relaid_twin() {
    let mut s = Stack::start().await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let origin = s.server.origin();

    for site in ["tins", "tins-twin"] {
        for (stem, count, want) in FILES {
            let name = format!("{stem}-{site}");
            import(&s, &recorder_file(&s, &format!("{stem}.json"), site), &name);
            fresh_tab(&mut s).await;
            let steps = run_unattended(&mut s, &human, &name).await;
            assert_eq!(steps.len(), *count, "{name}: {steps:?}");
            let tab = tab_at(&s, &format!("{origin}/{site}/order.html")).await;
            assert_eq!(summary(&tab).await, (want.to_string(), "1".to_string()), "{name}");
        }
    }

    // ---- the control: "Large tin" is now a link; the recorded id is on a
    // radio "Large tin (sold out)". The name and the id disagree: the
    // step asks, showing both; denied, nothing is clicked.
    import(&s, &recorder_file(&s, "order-large-tin.json", "tins-changed"), "large-changed");
    fresh_tab(&mut s).await;
    let run = s.mcp.call("flow_run", json!({ "name": "large-changed" }));
    let person = async {
        let (win, req) = human.next_request(RUN_WITHIN).await.expect("the approval window shows a request");
        let both = win
            .evaluate(&format!(
                "(() => {{ const c = document.getElementById('request-{}'); const q = s => c.querySelector(s)?.textContent ?? ''; \
                 return [q('.changed .recorded'), q('.changed .live')]; }})()",
                req.request
            ))
            .await
            .unwrap();
        human.deny(&win, req.request).await.expect("deny");
        (req, both)
    };
    let (r, (req, both)) = tokio::join!(run, person);
    let r = r.expect("flow_run answers");
    let recorded = both[0].as_str().unwrap_or("");
    let live = both[1].as_str().unwrap_or("");
    assert!(recorded.contains("element \u{201c}Large tin\u{201d}"), "{both} / {}", req.text);
    assert!(live.contains("link \u{201c}Large tin\u{201d}"), "{both}");
    assert!(live.contains("id \"size-l\" finds radio \"Large tin (sold out)\""), "{both}");
    assert!(r.is_error(), "{}", r.text());
    assert_eq!(r.data()["error"]["code"], "APPROVAL_DENIED", "{}", r.raw);
    let steps = r.data()["steps"].as_array().unwrap().clone();
    for step in &steps[..4] {
        assert_ne!(step["decided_by"], "human", "the steps before asked nobody: {step}");
    }
    assert_eq!(steps[4]["changed"]["recorded"], json!({ "role": "", "name": "Large tin" }), "{}", steps[4]);
    assert_eq!(steps[4]["changed"]["live"], json!({ "role": "link", "name": "Large tin" }), "{}", steps[4]);
    assert!(steps[5..].iter().all(|s| s["outcome"] == "not_run"), "the run stopped: {steps:?}");
    let tab = tab_at(&s, &format!("{origin}/tins-changed/order.html")).await;
    let checked = tab.evaluate("document.getElementById('size-l').checked").await.unwrap();
    assert_eq!(checked, json!(false));
    assert_eq!(summary(&tab).await.1, "0", "nothing was added");

    // ---- two elements now have the name "Large tin" (the radio and a
    // link) and no locator tells them apart: NOT_FOUND listing both, within
    // the bounded wait, asking nobody; never the first of them.
    import(&s, &recorder_file(&s, "order-large-tin.json", "tins-ambiguous"), "large-ambiguous");
    fresh_tab(&mut s).await;
    let r = run_watched(&mut s, &human, "large-ambiguous").await;
    assert!(r.is_error());
    assert_eq!(r.data()["error"]["code"], "NOT_FOUND", "{}", r.raw);
    let steps = r.data()["steps"].as_array().unwrap().clone();
    let message = steps[4]["error"]["message"].as_str().unwrap_or("").to_string();
    assert!(message.starts_with("more than one element matches the recorded element \"Large tin\""), "{message}");
    assert!(message.contains("the elements with the name: radio \"Large tin\", link \"Large tin\""), "{message}");
    let tab = tab_at(&s, &format!("{origin}/tins-ambiguous/order.html")).await;
    let checked = tab.evaluate("document.getElementById('tin-large').checked").await.unwrap();
    assert_eq!(checked, json!(false), "neither was clicked");

    // ---- @puppeteer/replay replays Chaperone's export of every imported
    // file, on the page and on the twin.
    for site in ["tins", "tins-twin"] {
        for (stem, _, want) in FILES {
            let name = format!("{stem}-{site}");
            let got = puppeteer_replays_export(&s, &name);
            assert_eq!(got["summary"], *want, "{name}: {got}");
            assert!(got["url"].as_str().unwrap_or("").starts_with(&format!("{origin}/{site}/order.html")), "{got}");
        }
    }
}

/// `chaperone flow export NAME --format recorder`, replayed by
/// `tests/replay-check.mjs` (`@puppeteer/replay`, installed once under
/// `target/npm`); its last line of output.
fn puppeteer_replays_export(s: &Stack, name: &str) -> Value {
    let out = s.daemon.cli(&["flow", "export", name, "--format", "recorder"], "").unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Parameters are exported as `{{name}}`: the person fills them in (here
    // with the defaults the import kept).
    let shown = s.daemon.cli(&["flow", "show", name, "--json"], "").unwrap();
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let flow: Value = serde_json::from_str(&shown.stdout).expect("flow show --json");
    let mut text = out.stdout.clone();
    for p in flow["params"].as_array().into_iter().flatten() {
        let default = p["default"].as_str().unwrap_or_else(|| panic!("{name}: a parameter without default: {p}"));
        text = text.replace(&format!("{{{{{}}}}}", p["name"].as_str().unwrap()), default);
    }
    let dir = tests::temp_dir("recorder-export");
    let file = dir.path().join("flow.json");
    std::fs::write(&file, &text).unwrap();
    let run = tests::puppeteer_replay(&file);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "@puppeteer/replay failed on {name}: {stdout}{}\n{}",
        String::from_utf8_lossy(&run.stderr),
        out.stdout
    );
    serde_json::from_str(stdout.trim().lines().last().unwrap_or("{}")).unwrap_or_default()
}
