//! Refs stay stable for the same element across snapshots of one document
//! (docs/design.md, "Observation"; issue 3): the page `refs/mutations.html` inserts rows above
//! a list, re-renders the list with brand-new nodes, renames a button and
//! opens a dialog, each behind a button the test clicks over CDP.
//!
//! Elements that still exist keep their refs; new elements (including the
//! re-rendered rows, which are new DOM nodes) get refs never used before in
//! that document; no snapshot shows a ref twice.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::json;
use tests::{CdpSession, Stack, elements};

use super::{new_tab, snapshot, snapshot_matches};

/// `(role, name) → ref` of every line with a ref; panics on a duplicate ref.
fn refs(snap: &str) -> HashMap<(String, String), String> {
    let mut out = HashMap::new();
    let mut seen = HashSet::new();
    for (p, _) in elements(snap) {
        let Some(r) = p.tokens.iter().find_map(|t| {
            t.strip_prefix('[').and_then(|t| t.strip_suffix(']')).filter(|r| shared::tools::is_valid_ref(r))
        }) else {
            continue;
        };
        assert!(seen.insert(r.to_string()), "ref {r} appears twice:\n{snap}");
        out.insert((p.role.clone(), p.name.clone().unwrap_or_default()), r.to_string());
    }
    out
}

fn key(role: &str, name: &str) -> (String, String) {
    (role.to_string(), name.to_string())
}

/// Clicks a fixture button with trusted input and waits for `done` (a JS
/// expression) to hold.
async fn click_and_wait(page: &CdpSession, selector: &str, done: &str) {
    page.click_selector(selector).await.unwrap_or_else(|e| panic!("click {selector}: {e:#}"));
    let ok = tests::poll(Duration::from_secs(10), Duration::from_millis(25), || async {
        (page.evaluate(done).await.ok()? == json!(true)).then_some(())
    })
    .await;
    assert!(ok.is_some(), "after clicking {selector}, `{done}` never held");
}

/// Every element of `before` in `keep` is in `after` with the same ref.
fn assert_kept(
    before: &HashMap<(String, String), String>,
    after: &HashMap<(String, String), String>,
    keep: &[(String, String)],
    step: &str,
    snap: &str,
) {
    for k in keep {
        let was = before.get(k).unwrap_or_else(|| panic!("{step}: {k:?} was not in the previous snapshot"));
        assert_eq!(after.get(k), Some(was), "{step}: {k:?} changed its ref (was {was}):\n{snap}");
    }
}

/// Every element in `fresh` has a ref never used before in this document.
fn assert_fresh(
    after: &HashMap<(String, String), String>,
    fresh: &[(String, String)],
    used: &HashSet<String>,
    step: &str,
    snap: &str,
) {
    for k in fresh {
        let r = after.get(k).unwrap_or_else(|| panic!("{step}: {k:?} has no ref:\n{snap}"));
        assert!(!used.contains(r), "{step}: {k:?} got {r}, a ref already used in this document:\n{snap}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refs_survive_mutations_and_are_never_reused() {
    let mut s = Stack::start().await.expect("start the stack");
    let url = s.url("/refs/mutations.html");
    new_tab(&mut s.mcp, &url).await;
    let target = s
        .browser
        .cdp
        .wait_for_target(Duration::from_secs(10), |t| t.kind == "page" && t.url == url)
        .await
        .expect("the agent's tab as a CDP target");
    let page = s.browser.cdp.attach(&target.target_id).await.unwrap();
    page.wait_ready().await.unwrap();

    let toolbar: Vec<_> = ["Insert rows above", "Re-render list", "Open dialog", "Rename note button"]
        .iter()
        .map(|n| key("button", n))
        .collect();
    let form = vec![key("textbox", "Note"), key("checkbox", "Pinned")];
    let contacts = |names: &[&str]| -> Vec<(String, String)> {
        names.iter().flat_map(|n| [key("link", n), key("button", &format!("Edit {n}"))]).collect()
    };
    let originals = contacts(&["Alice", "Bob", "Carol"]);

    // 0. Two snapshots of the untouched page agree.
    let s0 = snapshot_matches(&mut s.mcp, &url, "refs/mutations.html").await;
    let r0 = refs(&s0);
    let again = snapshot(&mut s.mcp, json!({})).await.snapshot();
    assert_eq!(refs(&again), r0, "refs changed between two snapshots of an untouched page");
    let mut used: HashSet<String> = r0.values().cloned().collect();
    let mut all_stable: Vec<_> = toolbar.iter().chain(&form).chain(&originals).cloned().collect();
    all_stable.push(key("button", "Save note"));
    for k in &all_stable {
        assert!(r0.contains_key(k), "{k:?} missing from the first snapshot:\n{s0}");
    }

    // 1. Rows inserted above the list: every old element keeps its ref.
    click_and_wait(&page, "#insert", "document.querySelectorAll('#contacts li').length === 5").await;
    let s1 = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let r1 = refs(&s1);
    assert_kept(&r0, &r1, &all_stable, "insert rows above", &s1);
    assert_fresh(&r1, &contacts(&["New contact 1", "New contact 2"]), &used, "insert rows above", &s1);
    used.extend(r1.values().cloned());

    // 2. The list re-rendered with the same items as new nodes: the rows are
    //    new elements with new refs; everything outside the list keeps its ref.
    page.evaluate("document.querySelector('#contacts li').dataset.old = '1'").await.unwrap();
    click_and_wait(&page, "#rerender", "!document.querySelector('#contacts li').dataset.old").await;
    let s2 = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let r2 = refs(&s2);
    let outside: Vec<_> = toolbar.iter().chain(&form).cloned().chain([key("button", "Save note")]).collect();
    assert_kept(&r1, &r2, &outside, "re-render", &s2);
    let rows = contacts(&["New contact 2", "New contact 1", "Alice", "Bob", "Carol"]);
    assert_fresh(&r2, &rows, &used, "re-render", &s2);
    used.extend(r2.values().cloned());

    // 3. The same element with a new name keeps its ref.
    click_and_wait(&page, "#rename", "document.getElementById('note-button').textContent === 'Save note now'").await;
    let s3 = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let r3 = refs(&s3);
    assert_eq!(
        r3.get(&key("button", "Save note now")),
        r2.get(&key("button", "Save note")),
        "a renamed button must keep its ref:\n{s3}"
    );
    let outside: Vec<_> = toolbar.iter().chain(&form).chain(&rows).cloned().collect();
    assert_kept(&r2, &r3, &outside, "rename", &s3);
    used.extend(r3.values().cloned());

    // 4. A dialog opens: its controls are new, everything else is kept.
    click_and_wait(&page, "#open", "document.getElementById('dlg').open").await;
    let s4 = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let r4 = refs(&s4);
    assert!(s4.contains("Merge contacts"), "the open dialog is not in the snapshot:\n{s4}");
    let mut kept = outside.clone();
    kept.push(key("button", "Save note now"));
    assert_kept(&r3, &r4, &kept, "open dialog", &s4);
    assert_fresh(&r4, &[key("button", "Merge"), key("button", "Cancel merge")], &used, "open dialog", &s4);
}
