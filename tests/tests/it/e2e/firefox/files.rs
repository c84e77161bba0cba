//! Uploads and downloads in Firefox: a file from an allowed folder reaches
//! the page byte for byte, one from outside is refused and nothing is
//! handed to the page; a download from the agent's tab lands in the
//! download folder with the served bytes; with downloads off, nothing is
//! kept.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::FxStack;
use crate::e2e::{code, new_tab};

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The bodies the fixture server received for uploads into `input`.
fn received(s: &FxStack, input: &str) -> Vec<(String, Vec<u8>)> {
    let marker = format!("/receive/{input}/");
    s.server.posted().into_iter().filter_map(|(p, b)| p.split_once(&marker).map(|(_, n)| (n.to_string(), b))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_come_only_from_allowed_folders_and_downloads_land_in_their_folder() {
    let root = tests::temp_dir("ff-files");
    let (allowed, outside, dl) = (root.path().join("allowed"), root.path().join("outside"), root.path().join("dl"));
    for d in [&allowed, &outside] {
        std::fs::create_dir_all(d).unwrap();
    }
    let receipt: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(allowed.join("receipt.pdf"), &receipt).unwrap();
    std::fs::write(outside.join("secret.txt"), b"SECRET-OUTSIDE").unwrap();
    let config = format!(
        "[uploads]\nallowed_dirs = [{:?}]\n[downloads]\nenabled = true\ndir = {:?}\n",
        allowed.display().to_string(),
        dl.display().to_string()
    );
    let mut s = FxStack::start(Some(&config), false).await;
    let page = s.url("/files/index.html");
    let tab = new_tab(&mut s.mcp, &page).await;
    let receipt_ref = s.ref_named("button", "Receipt").await;

    // ---- upload: the allowed file's bytes reach the server
    let path = allowed.join("receipt.pdf").display().to_string();
    let r =
        s.mcp.call("browser_upload_file", json!({ "ref": receipt_ref, "paths": [path], "tab": tab })).await.unwrap();
    let r = r.expect_ok("an allowed upload");
    assert_eq!(r.data()["files"][0]["sha256"], json!(sha256_hex(&receipt)), "{}", r.raw);
    let got = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let got = received(&s, "receipt");
        (!got.is_empty()).then_some(got)
    })
    .await
    .expect("the page sent the upload");
    assert_eq!(got[0].0, "receipt.pdf");
    assert_eq!(got[0].1, receipt, "the page got other bytes than the file's");
    // ---- refused from outside the allowed folder; nothing handed to the page
    let secret = outside.join("secret.txt").display().to_string();
    let r =
        s.mcp.call("browser_upload_file", json!({ "ref": receipt_ref, "paths": [secret], "tab": tab })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    assert!(!r.raw.to_string().contains("SECRET-OUTSIDE"), "{}", r.raw);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(received(&s, "receipt").len(), 1, "a refused upload reached the page");

    // ---- a download from the agent's tab
    let invoice = s.ref_named("link", "Invoice").await;
    let r = s.mcp.ok("browser_click", json!({ "ref": invoice, "tab": tab })).await;
    assert!(!r.raw.to_string().contains("not started"), "one download reported as two: {}", r.raw);
    let mut listed = serde_json::Value::Null;
    for _ in 0..50 {
        let r = s.mcp.ok("browser_downloads", json!({})).await;
        listed = r.data()["downloads"].clone();
        if listed.as_array().is_some_and(|a| a.iter().any(|d| d["state"] == "saved")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let d = listed.as_array().and_then(|a| a.iter().find(|d| d["state"] == "saved")).cloned();
    let d = d.unwrap_or_else(|| panic!("no saved download: {listed}\n{}", s.firefox.stdout_tail(30)));
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "one download listed as several: {listed}");
    assert_eq!(d["name"], json!("invoice.pdf"), "{d}");
    let served = tests::download_bytes(2048);
    assert_eq!(d["sha256"], json!(sha256_hex(&served)), "{d}");
    let saved = Path::new(d["path"].as_str().unwrap_or_default());
    assert_eq!(saved.parent(), Some(std::fs::canonicalize(&dl).unwrap().as_path()), "{}", saved.display());
    assert_eq!(std::fs::read(saved).unwrap(), served, "the saved file is not the served bytes");
}
