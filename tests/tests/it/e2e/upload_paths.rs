//! Uploads answer no questions about the disk (issue 29): every path
//! outside the allowed folder — an existing file through a `.` component,
//! a missing one, `/proc/self/root/…`, a symlink out of the folder — is
//! refused with the same message (the path as given, never where it
//! resolves), decided before the disk is touched; a file in the folder
//! with a second name (a hard link to a file outside) is refused. The
//! controls: a file with one name in the folder reaches the page.

use serde_json::json;
use tests::{Mcp, Stack, ref_of};

use super::{code, new_tab, snapshot};

async fn upload(mcp: &mut Mcp, tab: i64, r: &str, path: &str) -> tests::ToolResult {
    mcp.call("browser_upload_file", json!({ "ref": r, "paths": [path], "tab": tab })).await.expect("call")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_upload_paths_say_nothing_about_the_disk() {
    let root = tests::temp_dir("upload-paths");
    let allowed = root.path().join("allowed");
    let outside = root.path().join("elsewhere");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(allowed.join("ok.txt"), b"fine").unwrap();
    std::fs::write(outside.join("secret.txt"), b"SECRET-OUTSIDE").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", allowed.join("passwd-link")).unwrap();
    std::fs::hard_link(outside.join("secret.txt"), allowed.join("hard.txt")).unwrap();
    let config = format!("[uploads]\nallowed_dirs = [{:?}]\n", allowed.display().to_string());
    let mut s = Stack::start_headless(Some(&config)).await.expect("start the stack");
    let p = |rel: &str| format!("{}/{rel}", allowed.display());

    let page = s.url("/files/index.html");
    let tab = new_tab(&mut s.mcp, &page).await;
    let snap = snapshot(&mut s.mcp, json!({ "tab": tab })).await.snapshot();
    let receipt = ref_of(&snap, "button", "Receipt").unwrap_or_else(|| panic!("no Receipt input:\n{snap}"));

    // The message with the path taken out: it must be one and the same.
    let mut messages = Vec::new();
    for path in [
        "/etc/./passwd".to_string(),
        "/etc/nope".to_string(),
        "/etc/passwd".to_string(),
        "/proc/self/root/etc/passwd".to_string(),
        "/proc/self/cwd/config.toml".to_string(),
        p("passwd-link"),
        p("../elsewhere/secret.txt"),
        format!("{}/secret.txt", outside.display()),
        format!("{}/missing.txt", outside.display()),
    ] {
        let r = upload(&mut s.mcp, tab, &receipt, &path).await;
        assert_eq!(code(&r), "PERMISSION_DENIED", "{path}: {}", r.raw);
        let text = r.text();
        assert!(!text.contains("resolves") && !text.contains("SECRET"), "{path}: {text}");
        let mut quoted = String::new();
        shared::snapshot::quote(&path, &mut quoted);
        assert!(text.contains(&quoted), "{path}: the path as given is named: {text}");
        messages.push(text.replace(&quoted, "PATH"));
    }
    messages.dedup();
    assert_eq!(messages.len(), 1, "every refusal outside reads the same: {messages:#?}");

    // A second name for a file outside: refused, without naming it.
    let r = upload(&mut s.mcp, tab, &receipt, &p("hard.txt")).await;
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    assert!(r.text().contains("allow_hard_links"), "{}", r.text());
    assert!(!r.text().contains("elsewhere") && !r.text().contains("SECRET"), "{}", r.text());
    assert!(s.server.posted().is_empty(), "a refused upload reached the page");

    // Control: the file with one name in the folder is uploaded.
    let r = upload(&mut s.mcp, tab, &receipt, &p("ok.txt")).await;
    assert!(!r.is_error(), "{}", r.raw);
    let got = tests::poll(std::time::Duration::from_secs(10), std::time::Duration::from_millis(50), || async {
        let posted = s.server.posted();
        (!posted.is_empty()).then_some(posted)
    })
    .await
    .expect("the page sent the file");
    assert_eq!(got[0].1, b"fine");
}
