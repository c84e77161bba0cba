//! Challenge detection through the whole stack (docs/design.md,
//! "Observation", "Hand-off to the person" and "Decisions where the
//! references differ"), in a headless browser where nobody can help: every
//! challenge fixture names its kind in the snapshot header, its navigation
//! and every action on it are refused with `SECURITY_CHALLENGE` and that
//! kind, and the page sees no event from them (its own counter); no benign
//! look-alike gets a `Challenge:` line, and actions there run. The pages and the kind each must
//! show come from the corpus (`fixtures/challenges/cases.json`, the cases
//! with a `page`), so this test and the shared unit tests judge the same
//! list; a shared test checks that every page under
//! `fixtures/sites/challenges/` has its case.

use serde_json::{Value, json};
use tests::Stack;

use super::{new_tab, page_at, snapshot};

/// The corpus's pages: (path, expected kind or `None` for a look-alike).
fn corpus_pages() -> Vec<(String, Option<String>)> {
    let file = tests::workspace_root().join("fixtures/challenges/cases.json");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let cases: Vec<Value> = serde_json::from_str(&text).expect("cases.json parses");
    let pages: Vec<(String, Option<String>)> = cases
        .iter()
        .filter_map(|c| Some((c["page"].as_str()?.to_string(), c["expect"].as_str().map(str::to_string))))
        .collect();
    assert!(pages.iter().filter(|(_, k)| k.is_some()).count() >= 40, "too few challenge pages: {pages:?}");
    assert!(pages.iter().filter(|(_, k)| k.is_none()).count() >= 10, "too few look-alikes: {pages:?}");
    pages
}

/// The header lines: everything before the first element line.
fn header(snapshot: &str) -> Vec<&str> {
    snapshot.lines().take_while(|l| !l.trim_start().starts_with("- ")).collect()
}

/// The kind on the `Challenge:` line, and how many such lines there are
/// in the whole snapshot.
fn challenge_of(snapshot: &str) -> (Option<String>, usize) {
    let count = snapshot.lines().filter(|l| l.starts_with("Challenge:")).count();
    let kind = header(snapshot).into_iter().find_map(|l| {
        l.strip_prefix("Challenge: ").map(|rest| rest.split_whitespace().next().unwrap_or("").to_string())
    });
    (kind, count)
}

/// Navigates the current tab to the fixture `path` and returns its
/// snapshot. Headless, a challenge page refuses the navigation's wait with
/// `SECURITY_CHALLENGE` naming its kind (the tab is there all the same);
/// `want` is that kind, `None` for a look-alike, which loads normally.
async fn snapshot_of(s: &mut Stack, path: &str, want: Option<&str>, failures: &mut Vec<String>) -> String {
    let url = s.url(path);
    let r = s.mcp.call("browser_navigate", json!({ "url": url })).await.expect("browser_navigate");
    let refused = r.error_code() == Some("SECURITY_CHALLENGE");
    let kind = r.structured()["challenge"]["kind"].as_str().map(str::to_string);
    match want {
        Some(w) if !refused || kind.as_deref() != Some(w) => {
            failures.push(format!("{path}: navigation should be SECURITY_CHALLENGE {w}, got {}", r.raw))
        }
        None if r.is_error() => failures.push(format!("{path}: a look-alike refused the navigation: {}", r.raw)),
        _ => {}
    }
    let r = snapshot(&mut s.mcp, json!({})).await;
    assert_eq!(r.data()["url"], json!(url), "snapshot of the wrong page: {}", r.raw);
    r.snapshot()
}

/// Counts the events the page sees from now on (clicks, keys, input), in
/// the page's own world.
async fn count_events(s: &Stack, path: &str) -> tests::CdpSession {
    let page = page_at(s, &s.url(path)).await;
    page.evaluate(
        "window.__events = 0; for (const t of ['click', 'keydown', 'input', 'change', 'pointerdown']) \
         window.addEventListener(t, () => window.__events++, true); true",
    )
    .await
    .expect("install the counter");
    page
}

async fn events(page: &tests::CdpSession) -> i64 {
    page.evaluate("window.__events").await.ok().and_then(|v| v.as_i64()).unwrap_or(-1)
}

/// The agent acts on the page: a key press on whatever has focus, and a
/// click on the first element with a ref. On a challenge page both are
/// refused with `SECURITY_CHALLENGE` and the page sees nothing; on a
/// look-alike they run.
async fn act_on(s: &mut Stack, path: &str, snapshot: &str, want: Option<&str>, failures: &mut Vec<String>) {
    let page = count_events(s, path).await;
    let mut calls = vec![("browser_press_key", json!({ "key": "ArrowDown" }))];
    if want.is_some()
        && let Some(r) = snapshot.lines().find_map(|l| {
            let role = l.trim_start().strip_prefix("- ")?.split(' ').next()?;
            if !["button", "link", "textbox", "checkbox", "combobox"].contains(&role) {
                return None;
            }
            let start = l.find("[e")? + 1;
            let end = start + l[start..].find(']')?;
            Some(l[start..end].to_string())
        })
    {
        calls.push(("browser_click", json!({ "ref": r })));
    }
    for (tool, args) in calls {
        let r = s.mcp.call(tool, args.clone()).await.expect(tool);
        match want {
            // A page that redraws its widget can make the ref stale first
            // (STALE_REF: nothing dispatched either; the counter checks).
            Some(_) if tool == "browser_click" && r.error_code() == Some("STALE_REF") => {}
            Some(w) => {
                let kind = r.structured()["challenge"]["kind"].as_str().unwrap_or("");
                if r.error_code() != Some("SECURITY_CHALLENGE") || kind != w {
                    failures.push(format!("{path}: {tool} {args} should be SECURITY_CHALLENGE {w}: {}", r.raw));
                }
            }
            None if r.is_error() => failures.push(format!("{path}: {tool} refused on a look-alike: {}", r.raw)),
            None => {}
        }
    }
    let seen = events(&page).await;
    match want {
        Some(_) if seen != 0 => failures.push(format!("{path}: the page saw {seen} events from refused actions")),
        None if seen < 1 => failures.push(format!("{path}: the key press never reached the look-alike page")),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn challenge_pages_are_named_and_look_alikes_are_not() {
    // Headless: nobody could solve anything, so every challenge is
    // refused at once (headed, the person gets the tab: e2e::handoff).
    let mut s = Stack::start_headless(None).await.expect("start the stack");
    let start = s.url("/basic/index.html");
    new_tab(&mut s.mcp, &start).await;

    let pages = corpus_pages();
    let mut failures = Vec::new();
    for (path, want) in pages.iter().filter_map(|(p, k)| Some((p, k.as_deref()?))) {
        let text = snapshot_of(&mut s, path, Some(want), &mut failures).await;
        act_on(&mut s, path, &text, Some(want), &mut failures).await;
        let (kind, count) = challenge_of(&text);
        if kind.as_deref() != Some(want) || count != 1 {
            failures.push(format!("{path}: want {want}, got {kind:?} ({count} Challenge lines)\n{text}"));
            continue;
        }
        let line = text.lines().find(|l| l.starts_with("Challenge:")).unwrap_or_default();
        eprintln!("{path}: {line}");
        assert!(line.contains("a person must handle this page"), "{path}: {line}");
        assert!(line.chars().count() < 260, "{path}: evidence too long: {line}");
        // The interactive-only view carries the same header, and so does a
        // first page so short that the walk stops early (the signals then
        // come from the content script's own scan, not from the walk).
        for args in [json!({ "interactive_only": true }), json!({ "max_chars": 40 })] {
            let r = snapshot(&mut s.mcp, args.clone()).await;
            let (kind, _) = challenge_of(&r.snapshot());
            if kind.as_deref() != Some(want) {
                failures.push(format!("{path} ({args}): want {want}, got {kind:?}"));
            }
        }
    }
    for path in pages.iter().filter(|(_, k)| k.is_none()).map(|(p, _)| p) {
        let text = snapshot_of(&mut s, path, None, &mut failures).await;
        act_on(&mut s, path, &text, None, &mut failures).await;
        let (kind, count) = challenge_of(&text);
        if kind.is_some() || count != 0 {
            failures.push(format!("{path}: benign page flagged as {kind:?}\n{}", header(&text).join("\n")));
        }
        let r = snapshot(&mut s.mcp, json!({ "max_chars": 40 })).await;
        if let (Some(kind), _) = challenge_of(&r.snapshot()) {
            failures.push(format!("{path} (max_chars 40): benign page flagged as {kind}"));
        }
    }
    let challenges = pages.iter().filter(|(_, k)| k.is_some()).count();
    eprintln!("challenge pages: {challenges}, look-alikes: {}, failures: {}", pages.len() - challenges, failures.len());
    assert!(failures.is_empty(), "{} challenge detection failures:\n\n{}", failures.len(), failures.join("\n\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_appearing_later_is_seen_by_the_next_snapshot() {
    let mut s = Stack::start_headless(None).await.expect("start the stack");
    // A benign page, then a login page, then back: the header follows the page.
    let benign = s.url("/challenges/benign/verify-email.html");
    new_tab(&mut s.mcp, &benign).await;
    let (kind, _) = challenge_of(&snapshot(&mut s.mcp, json!({})).await.snapshot());
    assert_eq!(kind, None);
    let login = s.url("/challenges/login.html");
    let r = s.mcp.call("browser_navigate", json!({ "url": login })).await.expect("browser_navigate");
    assert_eq!(r.error_code(), Some("SECURITY_CHALLENGE"), "{}", r.raw);
    assert!(r.text().contains("headed"), "the refusal says to run headed: {}", r.raw);
    let (kind, _) = challenge_of(&snapshot(&mut s.mcp, json!({})).await.snapshot());
    assert_eq!(kind.as_deref(), Some("login"));
    s.mcp.ok("browser_navigate", json!({ "step": "back" })).await;
    let (kind, _) = challenge_of(&snapshot(&mut s.mcp, json!({})).await.snapshot());
    assert_eq!(kind, None, "the challenge stuck to the next page");
}
