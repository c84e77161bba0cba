//! Conformance of `browser_snapshot` roles and names against the
//! web-platform-tests pages (accname, html-aam, wai-aria roles;
//! expectations in the folder's `expectations.tsv`).
//!
//! The data is not part of this repository. It is read from
//! `CHAPERONE_WPT_DIR`, else from `../shared/conformance/wpt/` next to the
//! checkout. When that folder is missing the test prints one
//! `conformance: skipped: …` line (past libtest's output capture, so it
//! shows in a normal run) and checks nothing; `CHAPERONE_REQUIRE_WPT=1`, or
//! an explicit `CHAPERONE_WPT_DIR` that does not hold the data, makes the
//! absence a failure instead (docs/design.md, "Build and test facts").
//!
//! The pages are served on 127.0.0.1 and opened through the real stack
//! (daemon, Chromium with the extension, MCP). To find an expectation's
//! element in the snapshot without adding anything to the product, the
//! test itself (CDP `Runtime.evaluate` in the page) sets a unique
//! `aria-description="wpt-<n>"` on each element that carries an
//! expectation; the snapshot prints short descriptions (` desc="…"`), and
//! the line carrying `wpt-<n>` is that element. `aria-description` takes
//! no part in role or name computation. (Elements with `role="none"` or
//! `"presentation"` are left unmarked: a global ARIA attribute would undo
//! their role by the conflict-resolution rule.)
//!
//! Elements the snapshot does not list (generic containers, text-level
//! roles, …) are "not included" and not counted. Required: ≥95% of the
//! counted expectations met, and every unmet one explained by a row in
//! `tests/data/wpt_unmet.tsv` (`file<TAB>locator<TAB>reason`).
//!
//! Role names: the snapshot uses ARIA names (`img`); Chromium and WPT say
//! `image`. That is the only mapping.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;
use tests::{Browser, Daemon, FixtureServer, Mcp};

struct Row {
    file: String,
    locator: String,
    kind: String,
    expected: String,
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Names the folder with the WPT pages and `expectations.tsv`.
const WPT_DIR_VAR: &str = "CHAPERONE_WPT_DIR";
/// Set (non-empty, not `0`) to make missing WPT data a failure, not a skip.
const REQUIRE_WPT_VAR: &str = "CHAPERONE_REQUIRE_WPT";

/// The WPT folder: `CHAPERONE_WPT_DIR`, else `../shared/conformance/wpt`
/// beside the workspace. `None` (after saying so on stderr) when it holds
/// no `expectations.tsv` and nobody asked for it to be there; panics when
/// `CHAPERONE_WPT_DIR` or `CHAPERONE_REQUIRE_WPT` asked.
fn suite_dir() -> Option<PathBuf> {
    let explicit = std::env::var_os(WPT_DIR_VAR).filter(|v| !v.is_empty()).map(PathBuf::from);
    let required = std::env::var_os(REQUIRE_WPT_VAR).is_some_and(|v| !v.is_empty() && v != "0");
    let dir = explicit
        .clone()
        .unwrap_or_else(|| tests::workspace_root().join("..").join("shared").join("conformance").join("wpt"));
    if dir.join("expectations.tsv").is_file() {
        return Some(dir);
    }
    let missing = missing_message(&dir);
    if explicit.is_some() {
        panic!("{missing} ({WPT_DIR_VAR} is set, so the data must be there)");
    }
    if required {
        panic!("{missing} ({REQUIRE_WPT_VAR} is set, so the data must be there)");
    }
    // Straight to the stderr handle, not `eprintln!`: libtest captures the
    // macros' output of passing tests, and this line must be seen.
    let line = format!("conformance: skipped: {missing}. Nothing was checked.\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    None
}

fn missing_message(dir: &Path) -> String {
    format!(
        "WPT data not found at {} (no expectations.tsv; it is not in this repository): set {WPT_DIR_VAR} to a \
         folder with the WPT pages and their expectations.tsv, or put them at ../shared/conformance/wpt beside \
         the checkout",
        dir.display()
    )
}

fn load_rows(dir: &Path) -> Vec<Row> {
    let path = dir.join("expectations.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.splitn(4, '\t');
            let mut next = || f.next().unwrap_or("").to_string();
            Row { file: next(), locator: next(), kind: next(), expected: unescape(&next()) }
        })
        .collect()
}

fn load_reasons() -> HashMap<(String, String), String> {
    let path = tests::workspace_root().join("tests").join("data").join("wpt_unmet.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            Some(((f.next()?.to_string(), f.next()?.to_string()), f.next()?.to_string()))
        })
        .collect()
}

/// Whitespace collapsed, cut like the snapshot cuts names.
fn norm(s: &str) -> String {
    let mut n =
        s.split(|c: char| c.is_whitespace() && c != '\u{a0}').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    n = n.replace('\u{a0}', " ").split(' ').filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    shared::limits::truncate_chars(&mut n, shared::limits::MAX_NAME_CHARS);
    n
}

/// Our role name as Chromium/WPT spell it.
fn chromium_role(role: &str) -> &str {
    match role {
        "img" => "image",
        r => r,
    }
}

/// The value of ` desc="…"` at the end of a snapshot line.
fn desc_of(line: &str) -> Option<String> {
    let i = line.rfind(" desc=\"")?;
    let rest = &line[i + 7..];
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.push(chars.next()?),
            c => out.push(c),
        }
    }
    None
}

/// Marks each element (one per unique locator occurrence) with
/// `aria-description="wpt-<i>"`; returns which marks were placed.
const MARK_JS: &str = r#"((locs) => {
  const all = [...document.querySelectorAll('[data-expectedlabel],[data-expectedname],[data-expectedrole]')];
  return locs.map(([loc, k], i) => {
    let el;
    if (loc.startsWith('#')) {
      el = all.filter((e) => e.id === loc.slice(1))[k];
    } else {
      const m = /^(.+)\[(\d+)\]$/.exec(loc);
      el = m && all.filter((e) => e.localName === m[1])[Number(m[2]) - 1];
    }
    if (!el) return 'missing';
    const role = (el.getAttribute('role') || '').trim().split(/\s+/)[0].toLowerCase();
    if (role === 'none' || role === 'presentation') return 'none-role';
    el.setAttribute('aria-description', 'wpt-' + i);
    return 'ok';
  });
})"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wpt_roles_and_names() {
    let Some(dir) = suite_dir() else { return };
    let started = Instant::now();
    let rows = load_rows(&dir);
    let reasons = load_reasons();
    assert!(rows.len() > 500, "expectations.tsv has only {} rows", rows.len());

    let server = FixtureServer::serve(dir);
    let daemon = Daemon::start().await.expect("daemon");
    // Headless: a page that reads as a challenge is refused at once
    // instead of waiting for a person (none plays one here).
    let browser = Browser::headless_with_extension(daemon.home()).await.expect("browser");
    tests::wait_for_extension(&daemon).await;
    let mut mcp: Mcp = daemon.mcp().await.expect("mcp");

    let mut by_file: BTreeMap<String, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        by_file.entry(r.file.clone()).or_default().push(r);
    }

    let (mut met, mut counted, mut not_included, mut skipped) = (0usize, 0usize, 0usize, 0usize);
    let mut unmet: Vec<(String, String, String, String, String)> = Vec::new();
    let mut unexplained = 0usize;
    let mut first = true;
    for (file, file_rows) in &by_file {
        let url = server.url(file);
        if first {
            mcp.ok("browser_tabs", json!({ "action": "new" })).await;
            first = false;
        }
        let r = mcp.call("browser_navigate", json!({ "url": url })).await.expect("browser_navigate");
        assert!(!r.is_error() || r.error_code() == Some("SECURITY_CHALLENGE"), "{file}: navigation failed: {}", r.raw);
        // Unique elements: the k-th row group of the same locator and kind.
        let mut locs: Vec<(String, usize)> = Vec::new();
        let mut row_el: Vec<usize> = Vec::new();
        let mut seen: HashMap<(String, String), usize> = HashMap::new();
        for r in file_rows {
            let k = seen.entry((r.locator.clone(), r.kind.clone())).or_insert(0);
            let key = (r.locator.clone(), *k);
            *k += 1;
            let idx = locs.iter().position(|l| *l == key).unwrap_or_else(|| {
                locs.push(key.clone());
                locs.len() - 1
            });
            row_el.push(idx);
        }
        let pages = browser.pages().await.expect("pages");
        let target =
            pages.iter().find(|p| p.url == url).unwrap_or_else(|| panic!("no page target for {url}: {pages:?}"));
        let page = browser.cdp.attach(&target.target_id).await.expect("attach");
        let locs_json = serde_json::to_string(&locs).unwrap();
        let marks = page.evaluate(&format!("{MARK_JS}({locs_json})")).await.expect("mark elements");
        let _ = browser.cdp.call("Target.detachFromTarget", json!({ "sessionId": page.session_id })).await;

        let snap = mcp.ok("browser_snapshot", json!({ "max_chars": 2_000_000 })).await;
        let text = snap.snapshot();
        let mut lines: HashMap<String, tests::ParsedLine> = HashMap::new();
        for (parsed, part) in tests::elements(&text) {
            if let Some(d) = desc_of(&part)
                && let Some(n) = d.strip_prefix("wpt-")
            {
                lines.insert(n.to_string(), parsed);
            }
        }
        for (r, el) in file_rows.iter().zip(&row_el) {
            if matches!(r.expected.as_str(), "indeterminate" | "SPEC_AMBIGUOUS_LOG_VALUE")
                || (r.kind == "role" && r.expected.is_empty())
            {
                skipped += 1;
                continue;
            }
            let Some(parsed) = lines.get(&el.to_string()) else {
                if marks[*el] != "ok" && marks[*el] != "none-role" {
                    eprintln!("wpt: {file} {}: element not found ({})", r.locator, marks[*el]);
                }
                not_included += 1;
                continue;
            };
            counted += 1;
            let (got, want) = match r.kind.as_str() {
                "role" => (chromium_role(&parsed.role).to_string(), r.expected.clone()),
                _ => (norm(parsed.name.as_deref().unwrap_or("")), norm(&r.expected)),
            };
            if got == want {
                met += 1;
            } else {
                let reason = reasons.get(&(r.file.clone(), r.locator.clone())).cloned();
                if reason.is_none() {
                    unexplained += 1;
                }
                unmet.push((
                    format!("{file} {}", r.locator),
                    r.kind.clone(),
                    want,
                    got,
                    reason.unwrap_or_else(|| "NO REASON".into()),
                ));
            }
        }
    }

    eprintln!("\nWPT unmet expectations ({}):", unmet.len());
    eprintln!("{:<70} {:<5} {:<30} {:<30} reason", "element", "kind", "expected", "snapshot");
    for (el, kind, want, got, reason) in &unmet {
        eprintln!("{el:<70} {kind:<5} {:<30} {:<30} {reason}", format!("{want:?}"), format!("{got:?}"));
    }
    let rate = if counted == 0 { 0.0 } else { met as f64 * 100.0 / counted as f64 };
    eprintln!(
        "\nWPT conformance: {met}/{counted} met ({rate:.1}%), {not_included} not included (element not listed), {skipped} skipped (indeterminate/ambiguous), {} files, {:.1} s",
        by_file.len(),
        started.elapsed().as_secs_f64()
    );
    drop(mcp);
    drop(browser);
    drop(daemon);
    assert!(counted >= 200, "too few expectations counted ({counted}): is the snapshot listing the elements?");
    assert_eq!(unexplained, 0, "{unexplained} unmet expectations have no reason in tests/data/wpt_unmet.tsv");
    assert!(rate >= 95.0, "conformance {rate:.1}% < 95%");
}
