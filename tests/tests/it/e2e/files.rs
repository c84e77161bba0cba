//! Files (issue 12), end to end: uploads from the folders the person
//! allowed reach the page (the fixture server receives the bytes) and
//! everything else is refused with its code before anything reaches the
//! page; a payment page asks the person with each file named; downloads
//! are cancelled and reported while off, and when on land in the download
//! folder under sanitised names, never executable, with the served bytes'
//! SHA-256. Two stacks (downloads off with uploads allowed; downloads on
//! with uploads off), each shared by its steps.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tests::{Human, Mcp, Stack, ToolResult, ref_of};

use super::{code, new_tab, snapshot};

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

async fn find_ref(mcp: &mut Mcp, tab: i64, role: &str, name: &str) -> String {
    let snap = snapshot(mcp, json!({ "tab": tab })).await.snapshot();
    ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in the snapshot:\n{snap}"))
}

/// The bodies the fixture server received for uploads into `input`.
fn received(s: &Stack, input: &str) -> Vec<(String, Vec<u8>)> {
    let marker = format!("/receive/{input}/");
    s.server
        .posted()
        .into_iter()
        .filter_map(|(p, b)| p.split_once(&marker).map(|(_, name)| (name.to_string(), b)))
        .collect()
}

async fn wait_received(s: &Stack, input: &str, n: usize) -> Vec<(String, Vec<u8>)> {
    tests::poll(Duration::from_secs(10), Duration::from_millis(50), || async {
        let r = received(s, input);
        (r.len() >= n).then_some(r)
    })
    .await
    .unwrap_or_else(|| panic!("the server never received {n} upload(s) into {input}: {:?}", received(s, input).len()))
}

async fn upload(mcp: &mut Mcp, tab: i64, r: &str, paths: &[String]) -> ToolResult {
    mcp.call("browser_upload_file", json!({ "ref": r, "paths": paths, "tab": tab })).await.expect("call")
}

/// `browser_downloads` until it lists `n` downloads none of which is in
/// progress, or answers with an error.
async fn downloads(mcp: &mut Mcp, n: usize) -> ToolResult {
    for _ in 0..100 {
        let r = mcp.call("browser_downloads", json!({})).await.expect("call");
        let listed = r.data()["downloads"].as_array().map_or(0, Vec::len);
        if r.is_error() || listed >= n {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    mcp.call("browser_downloads", json!({})).await.expect("call")
}

/// What Chromium's own download list holds (from the popup page).
async fn chromium_downloads(human: &mut Human) -> Value {
    let popup = human.popup().await.expect("open the popup");
    popup
        .evaluate("chrome.downloads.search({}).then(l => l.map(d => ({ state: d.state, exists: d.exists, filename: d.filename })))")
        .await
        .expect("chrome.downloads.search")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_come_only_from_allowed_folders_and_downloads_are_off_by_default() {
    let root = tests::temp_dir("files");
    let allowed = root.path().join("allowed");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(allowed.join("folder")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let receipt: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(allowed.join("receipt.pdf"), &receipt).unwrap();
    std::fs::write(allowed.join("one.png"), b"first photo").unwrap();
    std::fs::write(allowed.join("two.png"), b"second photo").unwrap();
    std::fs::write(outside.join("secret.txt"), b"SECRET-OUTSIDE").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), allowed.join("link-out.txt")).unwrap();
    let big = std::fs::File::create(allowed.join("big.bin")).unwrap();
    big.set_len(10 * 1024 * 1024 + 1).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(allowed.join("pipe")).status().unwrap().success());
    let config = format!("[uploads]\nallowed_dirs = [{:?}]\n", allowed.display().to_string());
    let mut s = Stack::start_with_config(Some(&config)).await.expect("start the stack");
    let p = |rel: &str| format!("{}/{rel}", allowed.display());

    let page = s.url("/files/index.html");
    let tab = new_tab(&mut s.mcp, &page).await;
    let receipt_ref = find_ref(&mut s.mcp, tab, "button", "Receipt").await;
    let photos_ref = find_ref(&mut s.mcp, tab, "button", "Photos").await;

    // ---- an allowed file reaches the page: the server gets its bytes
    let r = upload(&mut s.mcp, tab, &receipt_ref, &[p("receipt.pdf")]).await.expect_ok("an allowed upload");
    let files = &r.data()["files"];
    assert_eq!(files[0]["name"], json!("receipt.pdf"), "{}", r.raw);
    assert_eq!(files[0]["size"], json!(receipt.len()), "{}", r.raw);
    assert_eq!(files[0]["sha256"], json!(sha256_hex(&receipt)), "{}", r.raw);
    assert!(!r.raw.to_string().contains("SECRET"), "{}", r.raw);
    let got = wait_received(&s, "receipt", 1).await;
    assert_eq!(got[0].0, "receipt.pdf");
    assert_eq!(got[0].1, receipt, "the page got other bytes than the file's");

    // ---- refused, each with its code, and nothing handed to the page
    let nul = format!("{}\u{0}.txt", p("receipt.pdf"));
    let refusals: Vec<(String, &str)> = vec![
        (outside.join("secret.txt").display().to_string(), "PERMISSION_DENIED"),
        (p("link-out.txt"), "PERMISSION_DENIED"),
        (p("folder/../../outside/secret.txt"), "PERMISSION_DENIED"),
        (nul, "INVALID_REQUEST"),
        ("allowed/receipt.pdf".into(), "INVALID_REQUEST"),
        (p("big.bin"), "INVALID_REQUEST"),
        (p("folder"), "INVALID_REQUEST"),
        (p("missing.pdf"), "NOT_FOUND"),
        (p("pipe"), "INVALID_REQUEST"),
    ];
    for (path, want) in &refusals {
        let started = std::time::Instant::now();
        let r = upload(&mut s.mcp, tab, &receipt_ref, std::slice::from_ref(path)).await;
        assert_eq!(code(&r), *want, "{path:?}: {}", r.raw);
        assert!(started.elapsed() < Duration::from_secs(5), "{path:?} took {:?}", started.elapsed());
        assert!(!r.raw.to_string().contains("SECRET-OUTSIDE"), "{}", r.raw);
    }
    // A good file with a bad one: nothing at all.
    let r = upload(&mut s.mcp, tab, &receipt_ref, &[p("one.png"), p("link-out.txt")]).await;
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(received(&s, "receipt").len(), 1, "a refused upload reached the page");

    // ---- several files on a `multiple` input; one-file inputs refuse two
    let r = upload(&mut s.mcp, tab, &photos_ref, &[p("one.png"), p("two.png")]).await.expect_ok("two photos");
    assert_eq!(r.data()["files"].as_array().map(Vec::len), Some(2), "{}", r.raw);
    let got = wait_received(&s, "photos", 2).await;
    assert_eq!(
        got.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect::<Vec<_>>(),
        [("one.png", &b"first photo"[..]), ("two.png", &b"second photo"[..])]
    );
    let r = upload(&mut s.mcp, tab, &receipt_ref, &[p("one.png"), p("two.png")]).await;
    assert_eq!(code(&r), "INVALID_REQUEST", "{}", r.raw);
    assert!(r.text().contains("one file"), "{}", r.raw);
    assert_eq!(received(&s, "receipt").len(), 1);

    // ---- a payment page: the person approves, the window names the file
    let mut human = Human::new(&s.browser.cdp);
    let billing_url = s.url("/files/billing/index.html");
    let billing = new_tab(&mut s.mcp, &billing_url).await;
    let billing_ref = find_ref(&mut s.mcp, billing, "button", "Receipt").await;
    let receipt_path = [p("receipt.pdf")];
    let (r, shown) = tokio::join!(upload(&mut s.mcp, billing, &billing_ref, &receipt_path), async {
        let (win, req) = human.next_request(Duration::from_secs(20)).await.expect("the upload asks");
        human.approve(&win, req.request).await.expect("click Approve");
        req.text
    });
    let r = r.expect_ok("the approved upload");
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    for part in ["receipt.pdf", "5.0 KB", allowed.to_str().unwrap(), "high"] {
        assert!(shown.contains(part), "the approval window does not show {part:?}: {shown}");
    }
    assert_eq!(wait_received(&s, "receipt", 2).await.len(), 2);

    // ---- downloads are off: cancelled, reported once with how to enable
    s.mcp.ok("browser_tabs", json!({ "action": "select", "tab": tab })).await;
    let invoice = find_ref(&mut s.mcp, tab, "link", "Invoice").await;
    s.mcp.ok("browser_click", json!({ "ref": invoice, "tab": tab })).await;
    let r = downloads(&mut s.mcp, 1).await;
    assert_eq!(code(&r), "DOWNLOAD_BLOCKED", "{}", r.raw);
    assert!(r.text().contains("invoice.pdf") && r.text().contains("[downloads] enabled = true"), "{}", r.raw);
    let r = s.mcp.ok("browser_downloads", json!({})).await.expect_untrusted();
    assert_eq!(r.data()["downloads"][0]["state"], json!("blocked"), "{}", r.raw);
    let chromium = chromium_downloads(&mut human).await;
    assert!(
        chromium.as_array().unwrap().iter().all(|d| d["state"] != json!("complete")),
        "Chromium finished a blocked download: {chromium}"
    );

    // ---- audit: every upload and download, names and hashes, no contents
    let audit = s.daemon.cli(&["audit", "--json"], "").expect("chaperone audit");
    assert!(audit.stdout.contains(&sha256_hex(&receipt)), "{}", audit.stdout);
    assert!(audit.stdout.contains("DOWNLOAD_BLOCKED") && audit.stdout.contains("invoice.pdf"), "{}", audit.stdout);
    assert!(audit.stdout.contains("pipe") && audit.stdout.contains("link-out.txt"), "refusals are audited");
    assert!(!audit.stdout.contains("first photo") && !audit.stdout.contains("SECRET-OUTSIDE"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_land_in_their_folder_under_sanitised_names() {
    let root = tests::temp_dir("downloads");
    let dir = root.path().join("dl");
    let config = format!("[downloads]\nenabled = true\ndir = {:?}\n", dir.display().to_string());
    let mut s = Stack::start_with_config(Some(&config)).await.expect("start the stack");
    let page = s.url("/files/index.html");
    let tab = new_tab(&mut s.mcp, &page).await;

    // Uploads stay off: no folder allowed.
    let receipt_ref = find_ref(&mut s.mcp, tab, "button", "Receipt").await;
    let r = upload(&mut s.mcp, tab, &receipt_ref, &["/etc/hostname".to_string()]).await;
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    assert!(r.text().contains("allowed_dirs"), "{}", r.raw);

    // (link, size served, name it must be saved under)
    let long = format!("{}.txt", "n".repeat(196));
    let cases: Vec<(&str, usize, String)> = vec![
        ("Invoice", 2048, "invoice.pdf".into()),
        ("Invoice", 2048, "invoice (1).pdf".into()),
        ("Shell profile", 100, "bashrc".into()),
        ("Accounts", 100, "passwd".into()),
        ("Windows file", 100, "boot.ini".into()),
        ("Control characters", 100, "bellnewline[31m.txt".into()),
        ("Long name", 100, long),
    ];
    for (i, (link, size, want)) in cases.iter().enumerate() {
        // Chromium asks the person before one tab downloads several files
        // on its own: one tab per download.
        let tab = new_tab(&mut s.mcp, &page).await;
        let r = find_ref(&mut s.mcp, tab, "link", link).await;
        s.mcp.ok("browser_click", json!({ "ref": r, "tab": tab })).await;
        let listed = downloads(&mut s.mcp, i + 1).await;
        if listed.is_error() || listed.data()["downloads"].as_array().map_or(0, Vec::len) <= i {
            let mut human = Human::new(&s.browser.cdp);
            panic!(
                "{link}: {}\nChromium: {}\n{}",
                listed.raw,
                chromium_downloads(&mut human).await,
                s.daemon.stderr_tail(30)
            );
        }
        let listed = listed.expect_untrusted();
        s.mcp.ok("browser_tabs", json!({ "action": "close", "tab": tab })).await;
        let d = &listed.data()["downloads"][i];
        assert_eq!(d["state"], json!("saved"), "{link}: {}", listed.raw);
        assert_eq!(d["name"], json!(want), "{link}: {}", listed.raw);
        assert_eq!(d["size"], json!(size), "{link}: {}", listed.raw);
        let served = tests::download_bytes(*size);
        assert_eq!(d["sha256"], json!(sha256_hex(&served)), "{link}: the listed hash is not the served bytes'");
        let path = Path::new(d["path"].as_str().unwrap_or_default());
        assert_eq!(path.parent(), Some(std::fs::canonicalize(&dir).unwrap().as_path()), "{link}: {}", path.display());
        assert_eq!(std::fs::read(path).unwrap(), served, "{link}");
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0, "{link}: {} is executable ({mode:o})", path.display());
    }
    // Nothing else in the folder, nothing beside it.
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let mut want: Vec<String> = cases.iter().map(|c| c.2.clone()).collect();
    want.sort();
    assert_eq!(names, want);
    let beside: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["dl"], "something landed outside the download folder");
    // Chromium's own copies are gone.
    let mut human = Human::new(&s.browser.cdp);
    let chromium = chromium_downloads(&mut human).await;
    assert!(
        chromium.as_array().unwrap().iter().all(|d| d["exists"] != json!(true)),
        "Chromium kept a copy: {chromium}"
    );
}
