//! Downloads an agent's tabs start (issues 29 and 30), end to end: every
//! way a page can start a download — a plain attachment link, seven of them
//! in a row from one page, `<a download>`, `blob:` and `data:` URLs,
//! `fetch` then a blob, a FileSaver-style `saveAs`, an attachment in a new
//! tab, `window.open`, an iframe, a form answered with an attachment,
//! `location =` a blob, a meta refresh, a service worker's own attachment — is
//! the agent's: cancelled and
//! listed `blocked` with an audit row while downloads are off, through the
//! policy and the name rules when on; nothing lands in the browser's own
//! download folder and nothing is lost silently. Controls: the person's
//! own downloads in a tab no agent owns (trusted clicks) are untouched and
//! unlisted; a small download under the size limit is saved.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tests::{Human, Mcp, Stack, ToolResult, ref_of};

use super::{code, new_tab, snapshot};

async fn find_ref(mcp: &mut Mcp, tab: i64, role: &str, name: &str) -> String {
    let snap = snapshot(mcp, json!({ "tab": tab })).await.snapshot();
    ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in the snapshot:\n{snap}"))
}

/// `browser_downloads` until it lists `n` downloads and none is pending
/// (it waits for pending ones itself); the DOWNLOAD_BLOCKED report of
/// blocked ones is read past.
async fn listed(mcp: &mut Mcp, n: usize, within: Duration) -> Vec<Value> {
    let deadline = std::time::Instant::now() + within;
    loop {
        let r = mcp.call("browser_downloads", json!({})).await.expect("call");
        if r.is_error() {
            assert_eq!(code(&r), "DOWNLOAD_BLOCKED", "{}", r.raw);
            continue;
        }
        let list = r.data()["downloads"].as_array().cloned().unwrap_or_default();
        let pending =
            list.iter().any(|d| d["state"] == json!("in_progress") || d["state"] == json!("waiting_for_person"));
        if (list.len() >= n && !pending) || std::time::Instant::now() > deadline {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The files in `dir` (sorted names), none if it does not exist.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

fn states(list: &[Value]) -> Vec<String> {
    list.iter().map(|d| d["state"].as_str().unwrap_or("?").to_string()).collect()
}

fn audit(s: &Stack) -> String {
    s.daemon.cli(&["audit", "--json"], "").expect("chaperone audit").stdout
}

const SEVEN: [&str; 7] = ["File one", "File two", "File three", "File four", "File five", "File six", "File seven"];

/// Clicks the seven links of `/downloads/index.html` in one agent tab, one
/// after another; returns each click's result.
async fn click_seven(s: &mut Stack) -> Vec<ToolResult> {
    let page = s.url("/downloads/index.html");
    let tab = new_tab(&mut s.mcp, &page).await;
    let mut results = Vec::new();
    for link in SEVEN {
        let r = find_ref(&mut s.mcp, tab, "link", link).await;
        results.push(s.mcp.ok("browser_click", json!({ "ref": r, "tab": tab })).await);
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seven_downloads_from_one_page_are_seven_files() {
    let root = tests::temp_dir("seven");
    let dir = root.path().join("dl");
    let config = format!("[downloads]\nenabled = true\ndir = {:?}\n", dir.display().to_string());
    let mut s = Stack::start_with_config(Some(&config)).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let done = std::sync::atomic::AtomicBool::new(false);
    // The executables ask the person (high risk); the person approves each.
    let (results, approved) = tokio::join!(
        async {
            let r = click_seven(&mut s).await;
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            r
        },
        async {
            let mut approved = std::collections::BTreeMap::new();
            while !done.load(std::sync::atomic::Ordering::SeqCst) || approved.len() < 4 {
                match human.next_request(Duration::from_secs(5)).await {
                    Ok((win, req)) => {
                        if approved.contains_key(&req.request) {
                            // The window still shows the one just approved.
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            continue;
                        }
                        assert!(req.text.contains("download"), "{}", req.text);
                        human.approve(&win, req.request).await.expect("approve");
                        approved.insert(req.request, req.text);
                    }
                    Err(_) if done.load(std::sync::atomic::Ordering::SeqCst) => break,
                    Err(_) => {}
                }
            }
            approved
        }
    );
    let asked: Vec<&String> = approved.values().collect();
    for (link, r) in SEVEN.iter().zip(&results) {
        assert!(r.text().contains("download"), "{link}: the click does not say a download started: {}", r.raw);
        assert!(!r.text().contains("not started by the browser"), "{link}: the browser held it: {}", r.raw);
    }
    let list = listed(&mut s.mcp, 7, Duration::from_secs(60)).await;
    assert_eq!(states(&list), vec!["saved"; 7], "{list:#?}");
    assert_eq!(asked.len(), 4, "the four executables each asked the person once: {asked:#?}");
    let mut want: Vec<String> =
        ["report.txt", "report (1).txt", "x.sh", "evil.desktop", "a.exe", "invoicefdp.exe", "bashrc"]
            .map(String::from)
            .to_vec();
    want.sort();
    assert_eq!(files_in(&dir), want, "the download folder holds other files than the seven");
    for name in &want {
        let mode = std::fs::metadata(dir.join(name)).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0, "{name} is executable ({mode:o})");
    }
    assert_eq!(files_in(&s.browser.downloads_dir()), Vec::<String>::new(), "the browser kept its own copies");
    let rows = audit(&s);
    assert_eq!(rows.matches("\"saved\"").count(), 7, "one saved audit row per download: {rows}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_way_to_download_is_blocked_while_downloads_are_off() {
    // High risk allowed at the fixture's origin: a form submit must not wait
    // for an approval (what is checked is the download it causes).
    let config = "[[sites]]\norigin = \"http://127.0.0.1:*\"\nhigh = \"allow\"\n";
    let mut s = Stack::start_with_config(Some(config)).await.expect("start the stack");

    // ---- seven attachment links in a row: seven blocked entries
    let results = click_seven(&mut s).await;
    for (link, r) in SEVEN.iter().zip(&results) {
        assert!(r.text().contains("cancelled by Chaperone"), "{link}: {}", r.raw);
    }
    let r = s.mcp.call("browser_downloads", json!({})).await.expect("call");
    assert_eq!(code(&r), "DOWNLOAD_BLOCKED", "{}", r.raw);
    let list = listed(&mut s.mcp, 7, Duration::from_secs(20)).await;
    assert_eq!(states(&list), vec!["blocked"; 7], "{list:#?}");

    // ---- every other way, one tab each
    let page = s.url("/downloads/alt.html");
    // (control, role, name the blocked entry gets)
    let ways: [(&str, &str, &str); 12] = [
        ("Anchor download", "link", "anchor.sh"),
        ("Data link", "link", "data.desktop"),
        ("Data link without referrer", "link", "noref.sh"),
        ("Attachment in a new tab", "link", "newtab.sh"),
        ("Meta refresh", "link", "refresh.sh"),
        ("Blob download", "button", "blob.sh"),
        ("Fetched download", "button", "fetched.exe"),
        ("Save as polyfill", "button", "saveas.desktop"),
        ("Window open", "button", "opened.sh"),
        ("Frame download", "button", "framed.sh"),
        ("Location blob", "button", ""),
        ("Form download", "button", "form.sh"),
    ];
    let mut seen = 7;
    let mut missing = Vec::new();
    for (control, role, name) in ways {
        let tab = new_tab(&mut s.mcp, &page).await;
        let r = find_ref(&mut s.mcp, tab, role, control).await;
        let click = if control == "Window open" {
            // The agent's clicks carry no user activation, so the popup
            // blocker stops `window.open` (checked below); the person's
            // click in the agent's tab does not: the download that tab's
            // page starts through its popup is still the agent's.
            let r = s.mcp.call("browser_click", json!({ "ref": r, "tab": tab })).await.expect("call");
            let none = listed(&mut s.mcp, seen + 1, Duration::from_secs(2)).await;
            assert_eq!(none.len(), seen, "window.open without a user gesture started something: {none:#?}");
            let agent_tab = super::page_at(&s, &page).await;
            agent_tab.click_selector("#open").await.expect("the person clicks in the agent's tab");
            r
        } else {
            s.mcp.call("browser_click", json!({ "ref": r, "tab": tab })).await.expect("call")
        };
        let list = listed(&mut s.mcp, seen + 1, Duration::from_secs(10)).await;
        if list.len() <= seen {
            missing.push(format!("{control}: nothing listed; click said {}", click.raw));
            continue;
        }
        let d = &list[seen];
        seen = list.len();
        assert_eq!(d["state"], json!("blocked"), "{control}: {d}");
        if !name.is_empty() {
            assert_eq!(d["name"], json!(name), "{control}: {d}");
        }
        let _ = s.mcp.call("browser_tabs", json!({ "action": "close", "tab": tab })).await;
    }
    assert!(missing.is_empty(), "downloads that were not listed:\n{}", missing.join("\n"));

    // ---- a service worker answers a navigation with an attachment it
    // made itself: no server response, no tab named by the browser.
    let sw_page = s.url("/downloads/sw.moves.html");
    let tab = new_tab(&mut s.mcp, &sw_page).await;
    let cdp_tab = super::page_at(&s, &sw_page).await;
    let ready = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        (super::status_line(&cdp_tab).await == "ready").then_some(())
    })
    .await;
    assert!(ready.is_some(), "the service worker never got ready: {}", super::status_line(&cdp_tab).await);
    let r = find_ref(&mut s.mcp, tab, "link", "Service worker file").await;
    s.mcp.call("browser_click", json!({ "ref": r, "tab": tab })).await.expect("call");
    let list = listed(&mut s.mcp, seen + 1, Duration::from_secs(10)).await;
    assert_eq!(list.len(), seen + 1, "the service worker's download was not listed: {list:#?}");
    assert_eq!(list[seen]["state"], json!("blocked"), "{}", list[seen]);
    assert_eq!(list[seen]["name"], json!("sw.sh"), "{}", list[seen]);
    seen += 1;
    let _ = s.mcp.call("browser_tabs", json!({ "action": "close", "tab": tab })).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(files_in(&s.browser.downloads_dir()), Vec::<String>::new(), "a blocked download reached the disk");
    let rows = audit(&s);
    assert!(rows.matches("DOWNLOAD_BLOCKED").count() >= seen, "one audit row per blocked download: {rows}");
    for name in ["blob.sh", "data.desktop", "fetched.exe", "opened.sh", "form.sh"] {
        assert!(rows.contains(name), "no audit row names {name}");
    }

    // ---- control: the person's own downloads, in a tab no agent owns, at
    // an origin no agent tab shows, with trusted clicks: untouched.
    let theirs = s.url("/downloads/alt.html").replace("127.0.0.1", "localhost");
    let person = s.browser.cdp.new_window_page(&theirs).await.expect("the person's tab");
    person.click_selector("a[download=\"anchor.sh\"]").await.expect("click");
    person.click_selector("#blob").await.expect("click");
    let got = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let f = files_in(&s.browser.downloads_dir());
        (f.iter().any(|n| n == "anchor.sh") && f.iter().any(|n| n == "blob.sh")).then_some(f)
    })
    .await;
    if got.is_none() {
        let mut human = Human::new(&s.browser.cdp);
        let popup = human.popup().await.expect("open the popup");
        let chromium = popup
            .evaluate("chrome.downloads.search({}).then(l => l.map(d => ({ state: d.state, error: d.error, danger: d.danger, filename: d.filename, url: d.url.slice(0, 60) })))")
            .await
            .expect("chrome.downloads.search");
        panic!(
            "the person's downloads did not land: {:?}\nChromium: {chromium:#}",
            files_in(&s.browser.downloads_dir())
        );
    }
    let after = listed(&mut s.mcp, seen, Duration::from_secs(2)).await;
    assert_eq!(after.len(), seen, "the person's downloads were listed to the agent: {after:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_ways_go_through_the_policy_and_the_name_rules_and_the_size_limit_holds_while_running() {
    let root = tests::temp_dir("alt-on");
    let dir = root.path().join("dl");
    // High-risk downloads allowed without asking at this origin: the name
    // rules and the folder are what is checked here.
    let config = format!(
        "[downloads]\nenabled = true\nmax_mb = 1\ndir = {:?}\n\n[[sites]]\norigin = \"http://127.0.0.1:*\"\nhigh = \"allow\"\n",
        dir.display().to_string()
    );
    let mut s = Stack::start_with_config(Some(&config)).await.expect("start the stack");
    let page = s.url("/downloads/alt.html");
    let ways: [(&str, &str, &str); 6] = [
        ("Anchor download", "link", "anchor.sh"),
        ("Blob download", "button", "blob.sh"),
        ("Fetched download", "button", "fetched.exe"),
        ("Data link", "link", "data.desktop"),
        ("Attachment in a new tab", "link", "newtab.sh"),
        ("Frame download", "button", "framed.sh"),
    ];
    for (i, (control, role, name)) in ways.iter().enumerate() {
        let tab = new_tab(&mut s.mcp, &page).await;
        let r = find_ref(&mut s.mcp, tab, role, control).await;
        s.mcp.ok("browser_click", json!({ "ref": r, "tab": tab })).await;
        let list = listed(&mut s.mcp, i + 1, Duration::from_secs(20)).await;
        assert_eq!(list.len(), i + 1, "{control}: {list:#?}");
        assert_eq!(list[i]["state"], json!("saved"), "{control}: {}", list[i]);
        assert_eq!(list[i]["name"], json!(name), "{control}: {}", list[i]);
        let path = Path::new(list[i]["path"].as_str().unwrap_or_default());
        assert_eq!(path.parent(), Some(std::fs::canonicalize(&dir).unwrap().as_path()), "{control}");
        let _ = s.mcp.call("browser_tabs", json!({ "action": "close", "tab": tab })).await;
    }

    // ---- the size limit (1 MB here): a declared 3 MB file is refused at
    // once; a streamed one is cancelled while it runs; a small one saved.
    let big = s.url("/downloads/big.html");
    let n = ways.len();
    for (i, (link, want)) in
        [("Declared large", "too_large"), ("Streamed large", "too_large"), ("Small", "saved")].iter().enumerate()
    {
        let tab = new_tab(&mut s.mcp, &big).await;
        let r = find_ref(&mut s.mcp, tab, "link", link).await;
        s.mcp.ok("browser_click", json!({ "ref": r, "tab": tab })).await;
        let list = listed(&mut s.mcp, n + i + 1, Duration::from_secs(20)).await;
        assert_eq!(list.get(n + i).map(|d| d["state"].clone()), Some(json!(want)), "{link}: {list:#?}");
        let _ = s.mcp.call("browser_tabs", json!({ "action": "close", "tab": tab })).await;
    }
    let mut want: Vec<String> = ways.iter().map(|w| w.2.to_string()).chain(["small.bin".to_string()]).collect();
    want.sort();
    assert_eq!(files_in(&dir), want, "a too-large download was kept");
    assert_eq!(files_in(&s.browser.downloads_dir()), Vec::<String>::new(), "the browser kept a copy");
}
