//! The `files` suite (issue 12): a 5 MB upload and a 5 MB download, each
//! timed from the agent's tool call to its result, through the whole
//! stack. Upload: `browser_upload_file` (read and hash in the bridge,
//! classify, decide, `Act`, the bytes to the extension in chunks, the
//! `File` set on the input); the page's `change` handler then posts the
//! file to the fixture server, whose copy is checked. Download:
//! `browser_click` on a link served with `Content-Disposition: attachment`
//! plus `browser_downloads` until it is saved (the bridge's decision,
//! Chromium's download, the bridge's hashed copy), a fresh tab each time
//! (Chromium asks the person before one tab downloads several files).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::Bench;
use super::click::find_ref;
use super::report::{Row, Suite};
use super::stats::Stats;

/// 5 MB.
pub const SIZE: usize = 5 * 1024 * 1024;

const PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Files bench</title></head>
<body><main><h1>Files bench</h1>
<label>Document <input type="file" id="doc"></label>
<p id="status" role="status"></p>
<a href="dl?size=5242880&amp;cd=attachment%3B%20filename%3D%22big.dat%22">Big file</a>
<script>
document.getElementById('doc').addEventListener('change', async (e) => {
  for (const f of e.target.files) await fetch('receive/doc/' + encodeURIComponent(f.name), { method: 'POST', body: f });
  document.getElementById('status').textContent = 'sent';
});
</script></main></body></html>
"#;

/// Writes the suite's page into the generated site.
pub fn write_page(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::write(dir.join("files.html"), PAGE)
}

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let runs = b.config.runs.clamp(1, 5);
    let upload_file = b.files_dir.join("up").join("big.bin");
    std::fs::write(&upload_file, tests::download_bytes(SIZE))?;
    let url = b.url(&format!("/{}/files.html", super::pages::SITE));

    // ---- upload
    b.mcp.ok("browser_tabs", json!({ "action": "new", "url": url })).await?;
    let input = find_ref(b, "button", "Document").await?;
    let mut samples = Vec::new();
    for i in 0..=runs {
        let before = b.server.posted().len();
        let t = b.mcp.ok("browser_upload_file", json!({ "ref": input, "paths": [upload_file] })).await?;
        if i > 0 {
            samples.push(t.elapsed);
        }
        let got = tests::poll(Duration::from_secs(30), Duration::from_millis(20), || async {
            b.server.posted().get(before).map(|(_, body)| body.len())
        })
        .await;
        if got != Some(SIZE) {
            bail!("the page did not receive the 5 MB file (got {got:?})");
        }
    }
    let upload = Stats::of(&samples);

    // ---- download
    let mut samples = Vec::new();
    let mut last = Value::Null;
    for i in 0..=runs {
        let tab = b.mcp.ok("browser_tabs", json!({ "action": "new", "url": url })).await?;
        let tab = tab.data()["tab"]["id"].as_i64().context("tab id")?;
        let link = find_ref(b, "link", "Big file").await?;
        let click = b.mcp.ok("browser_click", json!({ "ref": link })).await?;
        let mut elapsed = click.elapsed;
        let saved = loop {
            let t = b.mcp.ok("browser_downloads", json!({ "tab": tab })).await?;
            elapsed += t.elapsed;
            let d = t.data()["downloads"].get(0).cloned().unwrap_or(Value::Null);
            if d["state"] == "saved" {
                break d;
            }
            if elapsed > Duration::from_secs(60) || (d["state"] != "in_progress" && !d.is_null()) {
                bail!("the 5 MB download was not saved: {d}");
            }
        };
        if saved["size"] != json!(SIZE) {
            bail!("the saved download has the wrong size: {saved}");
        }
        if i > 0 {
            samples.push(elapsed);
        }
        last = saved;
        b.mcp.ok("browser_tabs", json!({ "action": "close", "tab": tab })).await?;
    }
    let download = Stats::of(&samples);
    Ok(Suite {
        name: "files".into(),
        rows: vec![
            Row {
                case: "upload 5 MB (tool call → result)".into(),
                stats: upload,
                bytes: Some(SIZE),
                rows: None,
                note: "read, hashed, approved by policy, chunked to the page".into(),
            },
            Row {
                case: "download 5 MB (click → listed as saved)".into(),
                stats: download,
                bytes: Some(SIZE),
                rows: None,
                note: format!("sha256 {}", last["sha256"].as_str().unwrap_or("?")),
            },
        ],
        checks: Vec::new(),
        reference: vec![
            "Playwright MCP: uploads by path with no folder rule; downloads land where the server runs".into(),
        ],
        extra: Value::Null,
    })
}
