//! What the audit writer adds to every row, through the whole bridge (an
//! rmcp client, the bridge, the page fake, a real SQLite store): the
//! page's title as last seen at the row's URL, the duration of the tool
//! call, a site rule named as the decider when it made the decision (with
//! the `[risk]` default as control), and the session's own start and end
//! rows.

use std::time::Duration;

use crate::common::*;
use bridge::audit::AuditStore;
use serde_json::json;
use shared::audit::{AuditDecision, AuditEntry, DecidedBy, SESSION_ENDED, SESSION_STARTED, SESSION_TOOL};

const SHOP: &str = "https://shop.example/products?ref=mail";

struct Setup {
    bridge: Bridge,
    _fake: PageFake,
    client: McpClient,
    audit: AuditStore,
    _dir: tempfile::TempDir,
}

async fn setup(config_toml: &str) -> Setup {
    logs();
    let dir = tempfile::Builder::new().prefix("chaperone-audit-rows").tempdir().unwrap();
    let audit = AuditStore::open(&dir.path().join("chaperone.db")).unwrap();
    let store = audit.clone();
    let policy = bridge::config::FileConfig::parse(config_toml).unwrap().policy().unwrap();
    let bridge = Bridge::start_with(move |c| {
        c.policy = policy;
        c.audit = Some(store);
    })
    .await;
    let fake = PageFake::connect(&bridge, shop_page()).await;
    let client = mcp_client(&bridge).await;
    let r = call_tool(&client, "browser_tabs", json!({"action": "new", "url": SHOP})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    Setup { bridge, _fake: fake, client, audit, _dir: dir }
}

impl Setup {
    async fn rows_of(&self, tool: &str, n: usize) -> Vec<AuditEntry> {
        rows_of(&self.audit, tool, n).await
    }
}

/// The rows of `tool`, within 5 s of there being at least `n`.
async fn rows_of(audit: &AuditStore, tool: &str, n: usize) -> Vec<AuditEntry> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let rows: Vec<AuditEntry> = audit.list(None).unwrap().into_iter().filter(|r| r.tool == tool).collect();
        if rows.len() >= n || tokio::time::Instant::now() > deadline {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn rows_carry_the_title_the_duration_a_site_rule_as_decider_and_the_sessions_start_and_end() {
    let s = setup("[[sites]]\norigin = \"https://shop.example\"\nhigh = \"deny\"\n").await;
    let started = s.rows_of(SESSION_TOOL, 1).await;
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0].outcome.as_deref(), Some(SESSION_STARTED));
    assert!(started[0].client.is_some() && started[0].session.starts_with("mcp:"), "{:?}", started[0]);

    // A low-risk click: the [risk] default allows it.
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    // "Delete account" (high): the site's `high = "deny"` refuses it.
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e2"})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");

    let clicks = s.rows_of("browser_click", 2).await;
    assert_eq!(clicks.len(), 2, "{clicks:?}");
    let (allowed, refused) = (&clicks[0], &clicks[1]);
    assert_eq!((allowed.decision, allowed.decided_by), (Some(AuditDecision::Allow), Some(DecidedBy::Policy)));
    assert_eq!((refused.decision, refused.decided_by), (Some(AuditDecision::Deny), Some(DecidedBy::SiteRule)));
    assert_eq!(refused.outcome.as_deref(), Some("PERMISSION_DENIED"));
    // The tab's title was seen when it opened, at the shop's URL.
    assert_eq!(refused.title.as_deref(), Some("Fixture page"), "{refused:?}");
    assert!(allowed.duration_ms.is_some() && refused.duration_ms.is_some(), "{clicks:?}");
    // The allowed click navigated away: its row's page is the new URL, and
    // the old page's title is not put on it.
    if allowed.url.as_deref() != Some("https://shop.example/products") {
        assert_eq!(allowed.title, None, "a title seen on another page: {allowed:?}");
    }
    let tabs = s.rows_of("browser_tabs", 1).await;
    assert_eq!(tabs[0].title.as_deref(), Some("Fixture page"), "{tabs:?}");

    // The session ends (DELETE /mcp): its end row.
    let Setup { bridge, client, audit, _fake, _dir } = s;
    client.cancel().await.unwrap();
    let session = rows_of(&audit, SESSION_TOOL, 2).await;
    assert_eq!(session.len(), 2, "{session:?}");
    assert_eq!(session[1].outcome.as_deref(), Some(SESSION_ENDED));
    assert_eq!(session[1].session, started[0].session);
    assert!(session[1].summary.contains("1 of its tabs left open"), "{}", session[1].summary);
    bridge.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_risk_default_refusing_is_the_policy_not_a_site_rule() {
    // Control: the same refusal from `[risk]`, with a site rule for
    // another site only.
    let s = setup("[risk]\nhigh = \"deny\"\n\n[[sites]]\norigin = \"https://other.example\"\nhigh = \"allow\"\n").await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e2"})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    let clicks = s.rows_of("browser_click", 1).await;
    assert_eq!((clicks[0].decision, clicks[0].decided_by), (Some(AuditDecision::Deny), Some(DecidedBy::Policy)));
    let Setup { bridge, client, _fake, _dir, .. } = s;
    client.cancel().await.unwrap();
    bridge.shutdown().await.unwrap();
}
