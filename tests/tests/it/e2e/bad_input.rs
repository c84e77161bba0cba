//! Bad input from the agent is refused with stable codes and changes nothing.

use serde_json::json;
use tests::Stack;

use super::{list_tabs, new_tab, snapshot};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_and_changes_nothing() {
    let mut s = Stack::start().await.expect("start the stack");
    let index = s.url("/basic/index.html");
    let tab = new_tab(&mut s.mcp, &index).await;

    for bad in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "JavaScript:alert(document.cookie)",
        "data:text/html,<h1>x</h1>",
        "chrome://settings",
        "/basic/second.html",
        " ",
    ] {
        let r = s.mcp.call("browser_navigate", json!({ "url": bad })).await.unwrap();
        r.expect_error("INVALID_REQUEST");
        let r = s.mcp.call("browser_navigate", json!({ "url": bad, "tab": tab })).await.unwrap();
        r.expect_error("INVALID_REQUEST");
        let r = s.mcp.call("browser_tabs", json!({ "action": "new", "url": bad })).await.unwrap();
        r.expect_error("INVALID_REQUEST");
    }

    // Arguments that do not fit the schema.
    for (tool, args) in [
        ("browser_navigate", json!({ "url": index, "skip_confirmation": true })),
        ("browser_navigate", json!({})),
        ("browser_navigate", json!({ "url": index, "step": "back" })),
        ("browser_navigate", json!({ "step": "sideways" })),
        ("browser_snapshot", json!({ "scope": "not-a-ref" })),
        ("browser_snapshot", json!({ "page": 0 })),
        ("browser_snapshot", json!({ "risk": "low" })),
        ("browser_tabs", json!({ "action": "explode" })),
        ("browser_tabs", json!({ "action": "select" })),
    ] {
        let r = s.mcp.call(tool, args.clone()).await.unwrap();
        assert!(r.is_error(), "{tool} {args} should fail: {}", r.raw);
        assert_eq!(r.error_code(), Some("INVALID_REQUEST"), "{tool} {args}: {}", r.raw);
    }

    // Tabs the agent did not open are off limits.
    let r = s.mcp.call("browser_snapshot", json!({ "tab": 987654321 })).await.unwrap();
    assert!(r.is_error(), "{}", r.raw);
    let r = s.mcp.call("browser_tabs", json!({ "action": "close", "tab": 987654321 })).await.unwrap();
    assert!(r.is_error(), "{}", r.raw);

    // Nothing moved: same tab, same URL, and Chromium never opened the targets.
    let tabs = list_tabs(&mut s.mcp).await;
    assert_eq!(tabs, vec![(tab, index.clone(), true)]);
    let snap = snapshot(&mut s.mcp, json!({})).await;
    assert_eq!(snap.data()["url"], json!(index));
    let pages = s.browser.pages().await.unwrap();
    for p in &pages {
        assert!(
            p.url.starts_with("http://") || p.url == "about:blank" || p.url.starts_with("chrome-extension://"),
            "{pages:?}"
        );
    }

    // Error texts carry the code and no page content.
    let r = s.mcp.call("browser_navigate", json!({ "url": "javascript:alert(1)" })).await.unwrap();
    assert!(r.text().starts_with("INVALID_REQUEST"), "{}", r.raw);
    assert!(!r.text().contains("Account settings"), "{}", r.raw);
}
