//! Two MCP sessions on one bridge (`shared::sessions`): each sees only its
//! own tabs, every other tab is `NOT_FOUND` word for word like a closed
//! one and nothing about it reaches the extension; ending a session hands
//! its tabs back to the person, the extension is told, and the audit names
//! each row's session and client.

use std::time::Duration;

use crate::common::*;
use bridge::audit::AuditStore;
use rmcp::ServiceExt;
use rmcp::model::{ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use shared::protocol::{BridgeToExt, Command};
use shared::sessions::SessionKey;

async fn client_named(b: &Bridge, name: &str) -> McpClient {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{}/mcp", b.port))
            .auth_header(b.mcp_token()),
    );
    let mut config = ClientConfig::default();
    config.client_info = Implementation::new(name, "1");
    config.serve(transport).await.expect("MCP client connects")
}

fn data(r: &rmcp::model::CallToolResult) -> Value {
    r.structured_content.as_ref().map(|s| s["data"].clone()).unwrap_or(Value::Null)
}

/// The last `Sessions` frame the extension got.
fn last_sessions(ext: &FakeExt) -> Option<Vec<shared::sessions::SessionInfo>> {
    ext.others.lock().unwrap().iter().rev().find_map(|f| match f {
        BridgeToExt::Sessions { sessions } => Some(sessions.clone()),
        _ => None,
    })
}

/// Commands that name `tab`.
fn touching(ext: &FakeExt, tab: i64) -> Vec<Command> {
    ext.commands()
        .into_iter()
        .filter(|c| {
            let j = serde_json::to_value(c).unwrap();
            j["tab"] == json!(tab) || j["tabs"].as_array().is_some_and(|ts| ts.contains(&json!(tab)))
        })
        .collect()
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "not within 5 s: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_session_cannot_see_or_touch_another_sessions_tabs_and_ending_it_releases_them() {
    let dir = std::env::temp_dir().join(format!("chaperone-sessions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let audit = AuditStore::open(&dir.join("chaperone.db")).unwrap();
    let store = audit.clone();
    let b = Bridge::start_with(move |c| c.audit = Some(store)).await;
    let ext = FakeExt::connect(&b, browser_like()).await;
    let a = client_named(&b, "alpha\u{202E}agent").await;
    let bee = client_named(&b, "beta").await;

    // A opens a tab and reads it.
    let r = call_tool(&a, "browser_tabs", json!({"action": "new", "url": "https://a.example/"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let tab_a = data(&r)["tab"]["id"].as_i64().unwrap();
    let r = call_tool(&a, "browser_snapshot", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");

    // The extension is told who owns what, with a sanitised client name.
    eventually("the extension hears of A's tab", || {
        last_sessions(&ext).is_some_and(|s| s.iter().any(|i| i.tabs == [tab_a] && i.client == "alphaagent"))
    })
    .await;

    // B has no tab: nothing listed, no current tab.
    let r = call_tool(&bee, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(data(&r)["tabs"], json!([]), "B sees A's tab: {r:?}");
    let r = call_tool(&bee, "browser_snapshot", json!({})).await;
    assert_tool_error(&r, "INVALID_REQUEST");

    // Every tool B points at A's tab: NOT_FOUND, the words of a closed tab,
    // and the same for a tab id nobody has (but `close`: this fake says
    // every tab id is open, so closing 9999 would ask the person).
    let before = touching(&ext, tab_a).len();
    for tab in [tab_a, 9999] {
        for (tool, args) in [
            ("browser_snapshot", json!({ "tab": tab })),
            ("browser_extract_text", json!({ "tab": tab })),
            ("browser_click", json!({ "tab": tab, "ref": "e1" })),
            ("browser_type", json!({ "tab": tab, "ref": "e1", "text": "hi" })),
            ("browser_press_key", json!({ "tab": tab, "key": "Enter" })),
            ("browser_hover", json!({ "tab": tab, "ref": "e1" })),
            ("browser_scroll", json!({ "tab": tab, "direction": "down" })),
            ("browser_screenshot", json!({ "tab": tab })),
            ("browser_wait_for", json!({ "tab": tab, "text": "x", "ms": 100 })),
            ("browser_navigate", json!({ "tab": tab, "url": "https://b.example/" })),
            ("browser_handoff", json!({ "tab": tab, "reason": "please" })),
            ("browser_downloads", json!({ "tab": tab })),
            ("browser_tabs", json!({ "action": "select", "tab": tab })),
            ("browser_tabs", json!({ "action": "close", "tab": tab })),
        ] {
            if tab == 9999 && args["action"] == "close" {
                continue;
            }
            let r = call_tool(&bee, tool, args.clone()).await;
            assert_tool_error(&r, "NOT_FOUND");
            assert_eq!(result_text(&r), format!("NOT_FOUND: no tab {tab}"), "{tool} {args}");
        }
    }
    // Of all that, only `close` asked whether the tab exists (as for any
    // tab of the person's); nothing acted on, read or selected A's tab.
    let after = touching(&ext, tab_a);
    assert_eq!(after.len() - before, 1, "{:?}", &after[before..]);
    assert_eq!(after[before], Command::TabsList { tabs: vec![tab_a] });

    // A still owns its tab and reads it.
    let r = call_tool(&a, "browser_snapshot", json!({ "tab": tab_a })).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call_tool(&a, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(data(&r)["tabs"][0]["id"], json!(tab_a), "{r:?}");

    // B's own tab is B's alone.
    let r = call_tool(&bee, "browser_tabs", json!({"action": "new"})).await;
    let tab_b = data(&r)["tab"]["id"].as_i64().unwrap();
    let r = call_tool(&a, "browser_snapshot", json!({ "tab": tab_b })).await;
    assert_tool_error(&r, "NOT_FOUND");
    let (all, _) = b.state.agent_tabs();
    assert_eq!(all, [tab_a, tab_b]);

    // Audit rows name the session and its client.
    let rows = audit.list(None).unwrap();
    let opened: Vec<_> =
        rows.iter().filter(|r| r.tool == "browser_tabs" && r.outcome.as_deref() == Some("ok")).collect();
    assert_eq!(opened.len(), 2, "{rows:?}");
    assert_eq!(opened[0].client.as_deref(), Some("alphaagent"));
    assert_eq!(opened[1].client.as_deref(), Some("beta"));
    assert!(opened[0].session.starts_with("mcp:") && opened[0].session != opened[1].session, "{opened:?}");
    let refused = rows.iter().find(|r| r.tab == Some(tab_a) && r.outcome.as_deref() == Some("NOT_FOUND"));
    assert_eq!(refused.map(|r| r.client.as_deref()), Some(Some("beta")), "B's close of A's tab: {rows:?}");

    // A ends (DELETE /mcp): its tab goes back to the person, the extension
    // is told (it ungroups it), B's tab stays B's.
    a.cancel().await.unwrap();
    eventually("A's tab is released", || b.state.agent_tabs().0 == [tab_b]).await;
    eventually("the extension hears A is gone", || {
        last_sessions(&ext).is_some_and(|s| s.len() == 1 && s[0].tabs == [tab_b] && s[0].client == "beta")
    })
    .await;

    // A new session guessing the old id gets nothing.
    let c = client_named(&b, "gamma").await;
    for (tool, args) in [
        ("browser_snapshot", json!({ "tab": tab_a })),
        ("browser_click", json!({ "tab": tab_a, "ref": "e1" })),
        ("browser_tabs", json!({ "action": "select", "tab": tab_a })),
    ] {
        let r = call_tool(&c, tool, args).await;
        assert_tool_error(&r, "NOT_FOUND");
    }
    let r = call_tool(&c, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(data(&r)["tabs"], json!([]), "{r:?}");

    bee.cancel().await.unwrap();
    c.cancel().await.unwrap();
    eventually("every session ended", || b.state.sessions().is_empty()).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_person_gives_their_tab_to_one_live_session() {
    let b = Bridge::start().await;
    let mut ws = authenticated_ws(&b).await;
    let gamma = client_named(&b, "gamma").await;
    let delta = client_named(&b, "delta").await;
    eventually("both sessions are listed", || b.state.sessions().len() == 2).await;
    let key = |name: &str| b.state.sessions().iter().find(|s| s.client == name).map(|s| s.key).unwrap();
    let (g, d) = (key("gamma"), key("delta"));

    // "Let gamma use this tab" on the person's tab 555.
    send_json(&mut ws, &shared::protocol::ExtToBridge::GiveTab { tab: 555, session: g }).await;
    eventually("gamma owns 555", || b.state.sessions().iter().any(|s| s.key == g && s.tabs == [555])).await;
    // The same tab to delta, or any tab to a session that is gone: refused.
    send_json(&mut ws, &shared::protocol::ExtToBridge::GiveTab { tab: 555, session: d }).await;
    send_json(&mut ws, &shared::protocol::ExtToBridge::GiveTab { tab: 556, session: SessionKey(999) }).await;
    // Each give is answered with the sessions as they are now.
    let mut seen = 0;
    let mut last = Vec::new();
    while seen < 3 {
        if let BridgeToExt::Sessions { sessions } = next_frame(&mut ws).await {
            if sessions.iter().any(|s| s.key == g && s.tabs == [555]) {
                seen += 1;
            }
            last = sessions;
        }
    }
    assert!(last.iter().any(|s| s.key == d && s.tabs.is_empty()), "{last:?}");
    assert!(!last.iter().any(|s| s.tabs.contains(&556)), "{last:?}");

    // Gamma uses it; delta cannot.
    let r = call_tool(&delta, "browser_tabs", json!({"action": "select", "tab": 555})).await;
    assert_tool_error(&r, "NOT_FOUND");
    let select = tokio::spawn(async move {
        let r = call_tool(&gamma, "browser_tabs", json!({"action": "select", "tab": 555})).await;
        (gamma, r)
    });
    loop {
        if let BridgeToExt::Request { id, command } = next_frame(&mut ws).await {
            assert_eq!(*command, Command::TabSelect { tab: 555 });
            let outcome = shared::protocol::Outcome::Ok(shared::protocol::CommandResult::Tab {
                tab: tab(555, "https://person.example/"),
            });
            send_json(&mut ws, &shared::protocol::ExtToBridge::Response { id, outcome }).await;
            break;
        }
    }
    let (gamma, r) = select.await.unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(data(&r)["tab"]["current"], json!(true));

    // Gamma ends: the tab is the person's again; delta still cannot have it.
    gamma.cancel().await.unwrap();
    eventually("gamma is gone", || b.state.sessions().len() == 1).await;
    let r = call_tool(&delta, "browser_snapshot", json!({"tab": 555})).await;
    assert_tool_error(&r, "NOT_FOUND");
    delta.cancel().await.unwrap();
}
