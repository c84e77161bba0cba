//! Challenge detection through the whole stack (docs/design.md,
//! "Observation" and "Decisions where the references differ"): every
//! challenge fixture names its kind in the snapshot header, and no benign
//! look-alike gets a `Challenge:` line. The pages and the kind each must
//! show come from the corpus (`fixtures/challenges/cases.json`, the cases
//! with a `page`), so this test and the shared unit tests judge the same
//! list; a shared test checks that every page under
//! `fixtures/sites/challenges/` has its case.

use serde_json::{Value, json};
use tests::Stack;

use super::{new_tab, snapshot};

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

/// Navigates the current tab to the fixture `path` and returns its snapshot.
async fn snapshot_of(s: &mut Stack, path: &str) -> String {
    let url = s.url(path);
    s.mcp.ok("browser_navigate", json!({ "url": url })).await;
    let r = snapshot(&mut s.mcp, json!({})).await;
    assert_eq!(r.data()["url"], json!(url), "snapshot of the wrong page: {}", r.raw);
    r.snapshot()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn challenge_pages_are_named_and_look_alikes_are_not() {
    let mut s = Stack::start().await.expect("start the stack");
    let start = s.url("/basic/index.html");
    new_tab(&mut s.mcp, &start).await;

    let pages = corpus_pages();
    let mut failures = Vec::new();
    for (path, want) in pages.iter().filter_map(|(p, k)| Some((p, k.as_deref()?))) {
        let text = snapshot_of(&mut s, path).await;
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
        let text = snapshot_of(&mut s, path).await;
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
    let mut s = Stack::start().await.expect("start the stack");
    // A benign page, then a login page, then back: the header follows the page.
    let benign = s.url("/challenges/benign/verify-email.html");
    new_tab(&mut s.mcp, &benign).await;
    let (kind, _) = challenge_of(&snapshot(&mut s.mcp, json!({})).await.snapshot());
    assert_eq!(kind, None);
    let login = s.url("/challenges/login.html");
    s.mcp.ok("browser_navigate", json!({ "url": login })).await;
    let (kind, _) = challenge_of(&snapshot(&mut s.mcp, json!({})).await.snapshot());
    assert_eq!(kind.as_deref(), Some("login"));
    s.mcp.ok("browser_navigate", json!({ "step": "back" })).await;
    let (kind, _) = challenge_of(&snapshot(&mut s.mcp, json!({})).await.snapshot());
    assert_eq!(kind, None, "the challenge stuck to the next page");
}
