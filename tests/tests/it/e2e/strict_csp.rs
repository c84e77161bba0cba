//! The same snapshot on pages served with strict Content-Security-Policies
//! (issue 3 acceptance): `fixtures/sites/strict/self/` (`script-src 'self'`)
//! and `strict/none/` (`default-src 'none'`) hold symlinks to pages
//! elsewhere in the corpus. Each strict copy must meet the original page's
//! expectations and give the same element lines as the original (refs,
//! focus and off-screen marks aside: layout may differ without styles).

use serde_json::json;
use tests::{Expectations, Stack, parse_line};

use super::{new_tab, snapshot};

/// `(strict copy, original)`; the copies are symlinks to the originals.
const PAGES: &[(&str, &str)] = &[
    ("strict/self/components.html", "shadow/components.html"),
    ("strict/self/slots.html", "shadow/slots.html"),
    ("strict/self/css.html", "hidden/css.html"),
    ("strict/self/checkout.html", "forms/checkout.html"),
    ("strict/self/combobox.html", "widgets/combobox.html"),
    ("strict/none/labels.html", "names/labels.html"),
    ("strict/none/tabs.html", "widgets/tabs.html"),
    ("strict/none/data.html", "tables/data.html"),
    ("strict/none/checkout.html", "forms/checkout.html"),
    ("strict/none/open.html", "dialogs/open.html"),
];

/// Element lines without refs and without the `focused`/`offscreen` marks.
fn comparable(snap: &str) -> Vec<String> {
    snap.lines()
        .filter(|l| parse_line(l).is_some())
        .map(|l| {
            l.split(' ')
                .filter(|t| {
                    let bare = t.trim_end_matches(':');
                    !(bare.starts_with("[e") && bare.ends_with(']')) && bare != "focused" && bare != "offscreen"
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_csp_pages_snapshot_like_their_originals() {
    let mut s = Stack::start().await.expect("start the stack");

    // The copies really are the originals, served with the policies.
    let http = reqwest::Client::new();
    for (strict, original) in PAGES {
        let path = tests::sites_dir().join(strict);
        let meta = std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{strict}: {e}"));
        assert!(meta.file_type().is_symlink(), "{strict} must be a symlink to {original}");
        let csp = if strict.starts_with("strict/self/") { "script-src 'self'" } else { "default-src 'none'" };
        let r = http.get(s.url(strict)).send().await.unwrap();
        assert_eq!(r.headers()["content-security-policy"], csp, "{strict}");
        assert_eq!(r.text().await.unwrap(), std::fs::read_to_string(tests::sites_dir().join(original)).unwrap());
    }

    let mut failures = Vec::new();
    let start = s.url(PAGES[0].1);
    new_tab(&mut s.mcp, &start).await;
    for (strict, original) in PAGES {
        let mut snaps = Vec::new();
        for p in [original, strict] {
            let url = s.url(p);
            s.mcp.ok("browser_navigate", json!({ "url": url })).await;
            let r = snapshot(&mut s.mcp, json!({ "max_chars": 1_000_000 })).await;
            assert_eq!(r.data()["url"], json!(url), "snapshot of the wrong page: {}", r.raw);
            snaps.push(r.snapshot());
        }
        let (plain, locked) = (&snaps[0], &snaps[1]);
        if let Err(e) = Expectations::for_page(original).check(locked) {
            failures.push(format!("{strict}: {e}"));
        }
        let (a, b) = (comparable(plain), comparable(locked));
        if a != b {
            let only_plain: Vec<_> = a.iter().filter(|l| !b.contains(l)).collect();
            let only_locked: Vec<_> = b.iter().filter(|l| !a.contains(l)).collect();
            failures.push(format!(
                "{strict} differs from {original}:\n  only without CSP: {only_plain:#?}\n  only with CSP: {only_locked:#?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n\n"));
}
