//! Pages that do not load (issue 30): a host that does not resolve, a
//! closed port and a self-signed certificate each answer `PAGE_NOT_LOADED`
//! naming what happened (DNS, refused, TLS) and the URL, on the
//! navigation and on a later snapshot of the tab — never `INTERNAL` with
//! Chrome's "Frame with ID 0 is showing error page". A page that loads is
//! the control.
//!
//! The TLS fixture is `openssl s_server` with a certificate made for the
//! test (`openssl req -x509`), which Chromium does not trust.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use tests::Stack;

use super::{code, new_tab};

/// A loopback port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// `openssl s_server` on a loopback port with a fresh self-signed
/// certificate; killed on drop.
struct SelfSigned {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl SelfSigned {
    fn start() -> SelfSigned {
        let dir = tests::temp_dir("tls");
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        let made = Command::new("openssl")
            .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl is installed");
        assert!(made.success(), "openssl req failed");
        let port = closed_port();
        let child = Command::new("openssl")
            .args(["s_server", "-quiet", "-www", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("-cert")
            .arg(&cert)
            .arg("-key")
            .arg(&key)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start openssl s_server");
        let up = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "openssl s_server did not listen on {port}");
        SelfSigned { child, port, _dir: dir }
    }
}

impl Drop for SelfSigned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_not_loaded(r: &tests::ToolResult, url: &str, reason: &str, what: &str) {
    assert_eq!(code(r), "PAGE_NOT_LOADED", "{what}: {}", r.raw);
    let text = r.text();
    assert!(text.contains("did not load"), "{what}: {text}");
    assert!(text.contains(reason), "{what}: the reason {reason:?} is named: {text}");
    assert!(text.contains(url), "{what}: the URL is named: {text}");
    assert!(!text.contains("Frame with ID"), "{what}: Chrome's internals leaked: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_that_do_not_load_say_why_on_navigate_and_on_snapshot() {
    let mut s = Stack::start_headless(None).await.expect("start the stack");
    let tls = SelfSigned::start();
    let good = s.url("/basic/index.html");
    let tab = new_tab(&mut s.mcp, &good).await;

    let cases = [
        ("unreachable host", "http://nonexistent.invalid/".to_string(), "DNS"),
        ("refused port", format!("http://127.0.0.1:{}/", closed_port()), "refused"),
        ("self-signed TLS", format!("https://127.0.0.1:{}/", tls.port), "TLS"),
    ];
    for (what, url, reason) in &cases {
        let r = s.mcp.call("browser_navigate", json!({ "url": url, "tab": tab })).await.unwrap();
        assert_not_loaded(&r, url, reason, &format!("{what}, navigate"));
        let r = s.mcp.call("browser_snapshot", json!({ "tab": tab })).await.unwrap();
        assert_not_loaded(&r, url, reason, &format!("{what}, snapshot"));
        let r = s.mcp.call("browser_extract_text", json!({ "tab": tab })).await.unwrap();
        assert_eq!(code(&r), "PAGE_NOT_LOADED", "{what}, extract text: {}", r.raw);

        // Control: the same tab loads a good page again, and reads.
        s.mcp.ok("browser_navigate", json!({ "url": good, "tab": tab })).await.expect_untrusted();
        s.mcp.ok("browser_snapshot", json!({ "tab": tab })).await.expect_untrusted();
    }

    // Back from a page that did not load: the good page, or (when Chrome
    // skips the entry the agent opened without a click) a clear refusal
    // that says what to do — never the failed page's error for the good one.
    let (_, url, _) = &cases[0];
    let r = s.mcp.call("browser_navigate", json!({ "url": url, "tab": tab })).await.unwrap();
    assert_eq!(code(&r), "PAGE_NOT_LOADED", "{}", r.raw);
    let r = s.mcp.call("browser_navigate", json!({ "step": "back", "tab": tab })).await.unwrap();
    if r.is_error() {
        assert_eq!(code(&r), "INVALID_REQUEST", "{}", r.raw);
        assert!(r.text().contains("navigate to the URL"), "{}", r.text());
    } else {
        assert_eq!(r.data()["tab"]["url"], json!(good), "{}", r.raw);
    }
    s.mcp.ok("browser_navigate", json!({ "url": good, "tab": tab })).await.expect_untrusted();
    s.mcp.ok("browser_snapshot", json!({ "tab": tab })).await.expect_untrusted();

    // A new tab at a page that does not load says so too (and is the agent's).
    let (what, url, reason) = &cases[1];
    let r = s.mcp.call("browser_tabs", json!({ "action": "new", "url": url })).await.unwrap();
    assert_not_loaded(&r, url, reason, &format!("{what}, new tab"));
    let r = s.mcp.call("browser_snapshot", json!({})).await.unwrap();
    assert_not_loaded(&r, url, reason, &format!("{what}, snapshot of the new tab"));
}
