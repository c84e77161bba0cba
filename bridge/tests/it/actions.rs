//! Page actions through the whole bridge pipeline: an rmcp client, the
//! bridge, and a fake extension that resolves refs and acts (`PageFake`).
//! What the extension would do with the gate (ask the person, re-classify)
//! is played by the fake's configuration.

use std::path::PathBuf;
use std::sync::Arc;

use crate::common::*;
use bridge::audit::AuditStore;
use bridge::home::Home;
use bridge::secrets::{SecretStore, SecretValue};
use serde_json::{Value, json};
use shared::action::{Action, ControlState, Effect};
use shared::audit::{AuditEntry, DecidedBy, DeniedBy};
use shared::error::{ErrorCode, WireError};
use shared::policy::Decision;
use shared::protocol::Command;
use shared::risk::RiskLevel;

const SHOP: &str = "https://shop.example/products?ref=mail";
const SECRET: &str = "LITERAL-SECRET-123";
/// The value of the stored secret `API_TOKEN` (bound to no site) in every
/// setup.
const STORED: &str = "STORED-SECRET-456";
/// The value of `SHOP_TOKEN`, bound to the shop and a partner site.
const SHOP_STORED: &str = "SHOP-SECRET-789";
const SHOP_SITES: [&str; 2] = ["https://shop.example", "https://partner.example"];
/// The value of `OTHER_TOKEN`, bound to another site.
const OTHER_STORED: &str = "OTHER-SECRET-012";

struct Setup {
    bridge: Bridge,
    fake: PageFake,
    /// The session that opened the shop tab (shared with spawned calls:
    /// another session would not see the tab).
    client: Arc<McpClient>,
    audit: AuditStore,
    dir: PathBuf,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Setup {
    fn rows(&self) -> Vec<AuditEntry> {
        self.audit.list(None).unwrap()
    }
}

/// A bridge with `config_toml` as its policy, an audit store, the page
/// fake, a client, and one tab open on the shop.
async fn setup(name: &str, config_toml: &str, page: PageConfig) -> Setup {
    logs();
    let dir = std::env::temp_dir().join(format!("chaperone-actions-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let audit = AuditStore::open(&dir.join("chaperone.db")).unwrap();
    let store = audit.clone();
    let secrets = SecretStore::open(&Home::at(&dir)).unwrap();
    secrets.set("API_TOKEN", SecretValue::new(STORED.to_string()), &[]).unwrap();
    let shop_sites = SHOP_SITES.map(String::from);
    secrets.set("SHOP_TOKEN", SecretValue::new(SHOP_STORED.to_string()), &shop_sites).unwrap();
    secrets.set("OTHER_TOKEN", SecretValue::new(OTHER_STORED.to_string()), &["https://other.example".into()]).unwrap();
    let policy = bridge::config::FileConfig::parse(config_toml).unwrap().policy().unwrap();
    let bridge = Bridge::start_with(move |c| {
        c.policy = policy;
        c.audit = Some(store);
        c.secrets = Some(Arc::new(secrets));
    })
    .await;
    let fake = PageFake::connect(&bridge, page).await;
    let client = mcp_client(&bridge).await;
    let r = call_tool(&client, "browser_tabs", json!({"action": "new", "url": SHOP})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    Setup { bridge, fake, client: Arc::new(client), audit, dir }
}

fn data(r: &rmcp::model::CallToolResult) -> Value {
    let s = r.structured_content.clone().expect("structured content");
    assert_eq!(s["untrustedWebContent"], true, "page-derived results are wrapped: {s}");
    s["data"].clone()
}

/// Rows of one tool, in order.
fn rows_of(s: &Setup, tool: &str) -> Vec<AuditEntry> {
    s.rows().into_iter().filter(|r| r.tool == tool).collect()
}

#[tokio::test]
async fn a_low_risk_click_runs_under_policy_and_reports_what_changed() {
    let s = setup("low", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1", "intent": "see more products"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let t = result_text(&r);
    assert!(t.starts_with(shared::untrusted::NOTICE), "{t}");
    assert!(
        // The new URL as the agent sees it: its session parameter redacted.
        t.contains(
            r#"Clicked link "Next page" [e1]: navigated to "https://shop.example/products?page=2&session=••••""#
        ),
        "{t}"
    );
    assert!(t.contains("heading \"Products, page 2\" appeared"), "{t}");
    let d = data(&r);
    assert_eq!(d["effect"], "navigated");
    assert_eq!(d["url"], "https://shop.example/products?page=2&session=••••");
    assert_eq!(d["risk"], "low");
    assert_eq!(d["decided_by"], "policy");

    let cmds = s.fake.commands();
    assert_eq!(cmds[2], Command::Resolve { tab: 100, target: "e1".into() }, "after TabNew and its Navigate");
    let acts = s.fake.acts();
    assert_eq!(acts.len(), 1);
    let (tab, target, action, expect, gate) = &acts[0];
    assert_eq!((*tab, target.as_deref(), action), (100, Some("e1"), &Action::Click));
    assert_eq!(expect.as_ref().unwrap().name, "Next page", "the fingerprint from Resolve is expected");
    assert_eq!(gate.decision, Decision::Allow);
    assert_eq!(gate.risk, RiskLevel::Low);
    assert_eq!(gate.timeout_secs, 120);
    assert_eq!(gate.policy, shared::policy::RiskDecisions::default());
    assert!(gate.summary.starts_with(r#"click link "Next page" [e1]"#), "{}", gate.summary);
    assert!(gate.summary.contains("see more products"), "the intent is shown to the person: {}", gate.summary);

    // A search form's "Send" is low risk too.
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e3"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(s.fake.acts()[1].4.decision, Decision::Allow);

    let rows = rows_of(&s, "browser_click");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].decision.map(|d| d.as_str()), Some("allow"));
    assert_eq!(rows[0].decided_by, Some(DecidedBy::Policy));
    assert_eq!(rows[0].outcome.as_deref(), Some("navigated"));
    assert_eq!(rows[0].url.as_deref(), Some("https://shop.example/products"), "no query string");
    assert_eq!(rows[1].url.as_deref(), Some("https://shop.example/products"));
    assert!(rows[0].session.starts_with("mcp:") && rows[0].session.len() == 12, "{}", rows[0].session);
    assert_eq!(rows[0].tab, Some(100));

    // Tab and navigation rows come from the same writer and name the same
    // MCP session (they used to say just "mcp").
    let r = call_tool(&s.client, "browser_navigate", json!({"url": "https://shop.example/cart?id=7"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    for tool in ["browser_tabs", "browser_navigate"] {
        let nav = rows_of(&s, tool);
        assert_eq!(nav.len(), 1, "{nav:?}");
        assert_eq!(nav[0].session, rows[0].session, "{tool}");
        assert_eq!(nav[0].decision.map(|d| d.as_str()), Some("allow"), "{tool}");
        assert_eq!(nav[0].decided_by, Some(DecidedBy::Policy), "{tool}");
        assert_eq!(nav[0].outcome.as_deref(), Some("ok"), "{tool}");
        assert_eq!(nav[0].risk.map(|r| r.as_str()), Some("low"), "{tool}");
        assert_eq!(nav[0].tab, Some(100), "{tool}");
    }
    assert_eq!(rows_of(&s, "browser_navigate")[0].url.as_deref(), Some("https://shop.example/cart"));
}

#[tokio::test]
async fn delete_account_asks_the_person_and_records_who_approved() {
    let s = setup("delete", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e2"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let (_, _, _, _, gate) = &s.fake.acts()[0];
    assert_eq!(gate.decision, Decision::Confirm);
    assert_eq!(gate.risk, RiskLevel::High);
    assert!(gate.reasons.iter().any(|r| r.contains("delete")), "{:?}", gate.reasons);
    assert_eq!(gate.summary, r#"click button "Delete account" [e2]"#);
    let t = result_text(&r);
    assert!(t.contains(r#"Clicked button "Delete account" [e2]: a dialog opened"#), "{t}");
    assert!(t.contains("(approved: human)"), "{t}");
    assert_eq!(data(&r)["decided_by"], "human");

    // Placing an order asks too; YOLO approvals are recorded as such.
    s.fake.configure(|c| c.approver = DecidedBy::Yolo);
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e7"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(s.fake.acts()[1].4.decision, Decision::Confirm);

    let rows = rows_of(&s, "browser_click");
    assert_eq!(rows.len(), 4, "an action row and a decision row each: {rows:?}");
    assert_eq!(rows[0].decision.map(|d| d.as_str()), Some("confirm"));
    assert_eq!(rows[0].decided_by, None);
    assert_eq!(rows[0].outcome.as_deref(), Some("dialog_opened"));
    assert_eq!(rows[0].risk.map(|r| r.as_str()), Some("high"));
    assert_eq!(rows[1].decision.map(|d| d.as_str()), Some("approved"));
    assert_eq!(rows[1].decided_by, Some(DecidedBy::Human));
    assert_eq!(rows[3].decided_by, Some(DecidedBy::Yolo));
    assert_eq!(rows[3].url.as_deref(), Some("https://shop.example/products"));
}

#[tokio::test]
async fn a_denied_site_is_refused_without_an_act_and_without_a_resolve_once_known() {
    let toml = "[[sites]]\norigin = \"https://*.bank.example\"\naccess = \"deny\"\n";
    let mut page = shop_page();
    page.resolve_url = Some("https://www.bank.example/transfer?amount=100".into());
    let s = setup("sitedeny", toml, page).await;

    // The page moved to the bank on its own: Resolve tells, nothing acts.
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert_eq!(s.fake.resolves(), 1);
    assert!(s.fake.acts().is_empty());

    // Now the bridge knows the tab is on a denied site: not even a Resolve.
    for (tool, args) in [
        ("browser_click", json!({"ref": "e1"})),
        ("browser_type", json!({"ref": "e4", "text": "x"})),
        ("browser_press_key", json!({"key": "Enter"})),
        ("browser_scroll", json!({"direction": "down"})),
    ] {
        let r = call_tool(&s.client, tool, args).await;
        assert_tool_error(&r, "PERMISSION_DENIED");
    }
    assert_eq!(s.fake.resolves(), 1, "{:?}", s.fake.commands());
    assert!(s.fake.acts().is_empty());

    let rows: Vec<_> = s.rows().into_iter().filter(|r| r.tool != "browser_tabs" && r.tool != "session").collect();
    assert_eq!(rows.len(), 5, "{rows:?}");
    for row in &rows {
        assert_eq!(row.decision.map(|d| d.as_str()), Some("deny"));
        assert_eq!(row.decided_by, Some(DecidedBy::SiteRule));
        assert_eq!(row.outcome.as_deref(), Some("PERMISSION_DENIED"));
        assert_eq!(row.url.as_deref(), Some("https://www.bank.example/transfer"), "no query string");
    }
}

#[tokio::test]
async fn policy_high_deny_refuses_before_dispatch() {
    let s = setup("highdeny", "[risk]\nhigh = \"deny\"\n", shop_page()).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e2"})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert!(result_text(&r).contains("high risk"), "{}", result_text(&r));
    assert!(s.fake.acts().is_empty());
    // Low risk still runs, and the gate carries the origin's decisions.
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(s.fake.acts()[0].4.policy.high, Decision::Deny);

    let rows = rows_of(&s, "browser_click");
    assert_eq!(rows[0].decision.map(|d| d.as_str()), Some("deny"));
    assert_eq!(rows[0].decided_by, Some(DecidedBy::Policy));
    assert_eq!(rows[0].risk.map(|r| r.as_str()), Some("high"));
    assert!(rows[0].reasons.iter().any(|r| r.contains("delete")), "{:?}", rows[0].reasons);
    assert_eq!(rows[0].summary, r#"click button "Delete account" [e2]"#);
}

#[tokio::test]
async fn a_site_override_loosens_only_where_the_person_said_so() {
    let toml = "[[sites]]\norigin = \"https://shop.example\"\nhigh = \"allow\"\n";
    let s = setup("override", toml, shop_page()).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e2"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let gate = &s.fake.acts()[0].4;
    assert_eq!(gate.decision, Decision::Allow);
    assert_eq!(gate.policy.high, Decision::Allow);
}

#[tokio::test]
async fn stop_and_pause_refuse_every_action_and_status_shows_them() {
    let s = setup("stop", "", shop_page()).await;
    s.fake.set_control(&s.bridge, ControlState { stopped: true, paused: false, yolo: false, pending: 2 }).await;
    for (tool, args) in [
        ("browser_click", json!({"ref": "e1"})),
        ("browser_hover", json!({"ref": "e1"})),
        ("browser_fill_form", json!({"fields": [{"ref": "e4", "value": "x"}]})),
    ] {
        let r = call_tool(&s.client, tool, args).await;
        assert_tool_error(&r, "STOPPED");
        assert!(result_text(&r).contains("Resume"), "{}", result_text(&r));
    }
    assert_eq!(s.fake.resolves(), 0);
    let r = call_tool(&s.client, "browser_status", json!({})).await;
    let t = result_text(&r);
    assert!(t.contains("STOPPED by the person"), "{t}");
    assert!(t.contains("Approvals waiting for the person: 2"), "{t}");
    let st = r.structured_content.unwrap();
    assert_eq!(st["controls"]["stopped"], true);
    assert_eq!(st["controls"]["pendingApprovals"], 2);
    assert_eq!(st["browsers"][0]["stopped"], true);

    s.fake.set_control(&s.bridge, ControlState { stopped: false, paused: true, yolo: true, pending: 0 }).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_tool_error(&r, "STOPPED");
    assert!(result_text(&r).contains("paused"));
    let t = result_text(&call_tool(&s.client, "browser_status", json!({})).await);
    assert!(t.contains("PAUSED") && t.contains("YOLO (auto-approve): on"), "{t}");

    s.fake.set_control(&s.bridge, ControlState::default()).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");

    let rows = rows_of(&s, "browser_click");
    assert_eq!(rows[0].decided_by, Some(DecidedBy::Stop));
    assert_eq!(rows[0].outcome.as_deref(), Some("STOPPED"));
    assert!(s.rows().iter().filter(|r| r.outcome.as_deref() == Some("STOPPED")).count() >= 4);
}

#[tokio::test]
async fn no_argument_can_set_risk_or_approval() {
    let s = setup("forged", "", shop_page()).await;
    let forged = [
        ("browser_click", json!({"ref": "e2", "risk": "low"})),
        ("browser_click", json!({"ref": "e2", "approved": true})),
        ("browser_click", json!({"ref": "e2", "skip_confirmation": true})),
        ("browser_click", json!({"ref": "e2", "decision": "allow"})),
        ("browser_click", json!({"ref": "e2", "gate": {"request": 1}})),
        ("browser_type", json!({"ref": "e4", "text": "x", "approval": "abc"})),
        ("browser_type", json!({"ref": "e5", "text": {"secret": "API_TOKEN", "value": "x"}})),
        ("browser_type", json!({"ref": "e5", "text": {"secret": "../key"}})),
        ("browser_fill_form", json!({"fields": [{"ref": "e4", "value": "x", "risk": "low"}]})),
        ("browser_fill_form", json!({"fields": [{"ref": "e4", "value": "x"}], "yolo": true})),
        ("browser_select_option", json!({"ref": "e4", "values": ["a"], "approved": true})),
        ("browser_press_key", json!({"key": "Enter", "skip_confirmation": true})),
        ("browser_scroll", json!({"direction": "down", "risk": "low"})),
        ("browser_hover", json!({"ref": "e1", "approved": true})),
        ("browser_wait_for", json!({"ms": 1, "risk": "low"})),
        // Plain invalid arguments.
        ("browser_click", json!({"ref": "#delete"})),
        ("browser_click", json!({})),
        ("browser_scroll", json!({})),
        ("browser_select_option", json!({"ref": "e4", "values": []})),
        ("browser_fill_form", json!({"fields": []})),
        ("browser_press_key", json!({"key": ""})),
        ("browser_wait_for", json!({"ms": 30001})),
        ("browser_wait_for", json!({})),
    ];
    for (tool, args) in forged {
        let r = call_tool(&s.client, tool, args.clone()).await;
        assert_tool_error(&r, "INVALID_REQUEST");
    }
    assert_eq!(s.fake.commands().len(), 2, "only the TabNew and its Navigate: {:?}", s.fake.commands());
    assert!(rows_of(&s, "browser_click").is_empty());
}

#[tokio::test]
async fn approval_denials_pass_through_with_who_denied() {
    let s = setup("denied", "", shop_page()).await;
    for (message, by, denied) in [
        ("the person denied this action", DecidedBy::Human, DeniedBy::Human),
        ("nobody answered within 120 s", DecidedBy::Timeout, DeniedBy::Timeout),
        ("STOP was pressed", DecidedBy::Stop, DeniedBy::Stop),
    ] {
        let error = WireError::new(ErrorCode::ApprovalDenied, message).with_denied_by(denied);
        s.fake.configure(|c| c.act_error = Some(error));
        let r = call_tool(&s.client, "browser_click", json!({"ref": "e2"})).await;
        assert_tool_error(&r, "APPROVAL_DENIED");
        let rows = rows_of(&s, "browser_click");
        let decision = rows.last().unwrap();
        assert_eq!(decision.decision.map(|d| d.as_str()), Some("denied"));
        assert_eq!(decision.decided_by, Some(by), "{message}");
        assert_eq!(decision.outcome.as_deref(), Some("APPROVAL_DENIED"));
        let action = &rows[rows.len() - 2];
        assert_eq!(action.decision.map(|d| d.as_str()), Some("confirm"));
        assert_eq!(action.outcome.as_deref(), Some("APPROVAL_DENIED"));
    }
    let stopped = WireError::new(ErrorCode::Stopped, "STOP pressed").with_denied_by(DeniedBy::Stop);
    s.fake.configure(|c| c.act_error = Some(stopped));
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e2"})).await;
    assert_tool_error(&r, "STOPPED");
    assert_eq!(rows_of(&s, "browser_click").last().unwrap().decided_by, Some(DecidedBy::Stop));
}

#[tokio::test]
async fn stale_refs_pass_through_with_a_hint() {
    let s = setup("stale", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e99"})).await;
    assert_tool_error(&r, "STALE_REF");
    assert!(result_text(&r).contains("browser_snapshot"), "{}", result_text(&r));
    assert!(s.fake.acts().is_empty());
    // The element changed between Resolve and Act.
    s.fake.configure(|c| c.act_error = Some(WireError::new(ErrorCode::StaleRef, "e1 is no longer the same element")));
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_tool_error(&r, "STALE_REF");
    assert!(result_text(&r).contains("browser_snapshot"));
    let rows = rows_of(&s, "browser_click");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r.outcome.as_deref() == Some("STALE_REF")));
}

/// A sensitive kind this version does not know is the strictest: nothing
/// the agent types goes there, not even a bound secret on its own site
/// (`shared::gate::fields`, the rule the extension applies too).
#[tokio::test]
async fn a_field_of_an_unknown_sensitive_kind_is_never_filled() {
    let mut page = shop_page();
    let mut future = FakeElement::new("textbox", "Passkey");
    future.facts.editable = true;
    future.sensitive = Some("passkey_of_the_future".into());
    future.effect = Effect::ValueChanged;
    page.elements.insert("e8".into(), future);
    let s = setup("unknown-kind", "", page).await;
    for text in [json!("hello"), json!({"secret": "SHOP_TOKEN"}), json!({"secret": "API_TOKEN"})] {
        let r = call_tool(&s.client, "browser_type", json!({"ref": "e8", "text": text})).await;
        assert_tool_error(&r, "PERMISSION_DENIED");
        assert!(result_text(&r).contains("never fills"), "{}", result_text(&r));
    }
    let r = call_tool(&s.client, "browser_select_option", json!({"ref": "e8", "values": ["a"]})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert!(s.fake.acts().is_empty(), "a value went to a field of an unknown kind: {:?}", s.fake.acts());
    // Control: the same secret into a field of a known kind is typed.
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(s.fake.acts().len(), 1);
}

#[tokio::test]
async fn sensitive_fields_take_secrets_only_and_the_value_travels_in_the_one_act() {
    let s = setup("sensitive", "", shop_page()).await;
    // A literal into a sensitive field: refused before anything is sent.
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": SECRET})).await;
    assert_tool_error(&r, "INVALID_REQUEST");
    assert!(result_text(&r).contains(r#"{"secret": "NAME"}"#), "{}", result_text(&r));
    let r = call_tool(&s.client, "browser_press_key", json!({"ref": "e5", "key": "7"})).await;
    assert_tool_error(&r, "INVALID_REQUEST");
    let r = call_tool(
        &s.client,
        "browser_fill_form",
        json!({"fields": [{"ref": "e4", "value": "red shoes"}, {"ref": "e5", "value": SECRET}]}),
    )
    .await;
    assert_tool_error(&r, "INVALID_REQUEST");
    // A secret into an ordinary field (its value would show in snapshots).
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e4", "text": {"secret": "API_TOKEN"}})).await;
    assert_tool_error(&r, "INVALID_REQUEST");
    // An unknown secret: named, and nothing resolved or typed.
    let before = s.fake.commands().len();
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "NOPE"}})).await;
    assert_tool_error(&r, "NOT_FOUND");
    assert!(result_text(&r).contains("NOPE"));
    assert_eq!(s.fake.commands().len(), before, "an unknown secret reached the extension");
    assert!(s.fake.acts().is_empty(), "refused values were typed: {:?}", s.fake.acts());

    // The secret: the Act names it; the value comes only in the answer to
    // the extension's SecretRequest for that Act.
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "API_TOKEN"}})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(!format!("{r:?}").contains(STORED), "the result never shows it");
    assert!(result_text(&r).contains("{secret:API_TOKEN}"), "{}", result_text(&r));
    let (_, _, action, _, gate) = &s.fake.acts()[0];
    assert_eq!(action, &Action::TypeSecret { name: "API_TOKEN".into(), submit: false });
    assert_eq!(gate.summary, r#"type {secret:API_TOKEN} into textbox "API token" [e5]"#);
    assert_eq!(gate.decision, Decision::Confirm, "typing into a sensitive field is high risk");
    assert!(gate.person_must_answer, "API_TOKEN is bound to no site");
    assert!(gate.reasons.iter().any(|r| r.contains("API_TOKEN is not bound to a site")), "{:?}", gate.reasons);
    assert!(
        !s.fake.commands().iter().any(|c| serde_json::to_string(c).unwrap().contains(STORED)),
        "the value travelled in a command"
    );
    let frames = s.fake.frames();
    let carrying: Vec<usize> = (0..frames.len()).filter(|&i| frames[i].json.contains(STORED)).collect();
    assert_eq!(carrying.len(), 1, "the value crossed the socket {} times: {frames:?}", carrying.len());
    let value_frame: Value = serde_json::from_str(&frames[carrying[0]].json).unwrap();
    assert!(!frames[carrying[0]].sent);
    assert_eq!(value_frame["type"], "secret");
    assert_eq!(value_frame["request"], json!(gate.request));
    let asked = frames.iter().position(|f| {
        f.sent
            && f.json == format!(r#"{{"type":"secret_request","request":{},"origin":"{}"}}"#, gate.request, gate.origin)
    });
    assert!(asked.is_some_and(|a| a < carrying[0]), "the value came before the extension asked for it: {frames:?}");
    assert_eq!(s.fake.config.lock().unwrap().typed_secrets, [STORED]);

    // In a form too, next to an ordinary field.
    let r = call_tool(
        &s.client,
        "browser_fill_form",
        json!({"fields": [{"ref": "e4", "value": "red shoes"}, {"ref": "e5", "value": {"secret": "API_TOKEN"}}]}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(!format!("{r:?}").contains(STORED));
    assert_eq!(data(&r)["fields"].as_array().unwrap().len(), 2);
    assert_eq!(data(&r)["risk"], "high");
    let acts = s.fake.acts();
    assert_eq!(acts[1].4.summary, r#"type "red shoes" into searchbox "Search" [e4]"#);
    assert_eq!(acts[1].4.decision, Decision::Allow);
    assert_eq!(acts[2].4.summary, r#"type {secret:API_TOKEN} into textbox "API token" [e5]"#);
    assert_eq!(acts[2].4.decision, Decision::Confirm);
    assert_eq!(s.fake.config.lock().unwrap().typed_secrets, [STORED, STORED]);

    let rows = s.rows();
    assert!(rows.iter().any(|r| r.summary.contains("{secret:API_TOKEN}")), "{rows:?}");
    for row in rows {
        let row = format!("{row:?}");
        assert!(!row.contains(SECRET) && !row.contains(STORED), "audit row {row}");
    }
    let raw = std::fs::read(s.dir.join("chaperone.db")).unwrap();
    let wal = std::fs::read(s.dir.join("chaperone.db-wal")).unwrap_or_default();
    for bytes in [raw, wal] {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET) && !text.contains(STORED));
    }
    let logs = String::from_utf8_lossy(&logs().lock().unwrap()).to_string();
    assert!(logs.contains("action started"), "the bridge logs actions");
    assert!(!logs.contains(SECRET) && !logs.contains(STORED), "logs never contain a typed value");
    assert!(!logs.contains("red shoes"), "log lines mask every literal");
}

#[tokio::test]
async fn password_fields_are_never_filled_and_a_refused_field_stops_the_whole_form() {
    let s = setup("password", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e6", "text": "hunter2"})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    let r = call_tool(
        &s.client,
        "browser_fill_form",
        json!({"fields": [{"ref": "e4", "value": "me@example.com"}, {"ref": "e6", "value": "hunter2"}]}),
    )
    .await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert!(s.fake.acts().is_empty(), "nothing typed: {:?}", s.fake.acts());
    for row in s.rows() {
        assert!(!format!("{row:?}").contains("hunter2"), "{row:?}");
    }
}

/// A literal IBAN (shaped like one, never a real account).
const IBAN: &str = "DE89370400440532013000";

#[tokio::test]
async fn bank_and_card_fields_are_never_filled_not_even_from_a_secret() {
    let mut page = shop_page();
    for (r, name, kind) in [("e8", "IBAN", "bank"), ("e9", "Card number", "card")] {
        let mut field = FakeElement::new("textbox", name);
        field.facts.editable = true;
        field.facts.in_form = true;
        field.sensitive = Some(kind.into());
        field.effect = Effect::ValueChanged;
        page.elements.insert(r.into(), field);
    }
    let s = setup("bank", "", page).await;
    for (r, kind) in [("e8", "bank"), ("e9", "card")] {
        // A literal, a secret bound to no site, a secret bound to this one:
        // all refused before anything is dispatched.
        for text in [json!(IBAN), json!({"secret": "API_TOKEN"}), json!({"secret": "SHOP_TOKEN"})] {
            let res = call_tool(&s.client, "browser_type", json!({"ref": r, "text": text})).await;
            assert_tool_error(&res, "PERMISSION_DENIED");
            assert!(result_text(&res).contains(&format!("never fills {kind} fields")), "{}", result_text(&res));
        }
        let res = call_tool(&s.client, "browser_fill_form", json!({"fields": [{"ref": r, "value": IBAN}]})).await;
        assert_tool_error(&res, "PERMISSION_DENIED");
        let res = call_tool(&s.client, "browser_select_option", json!({"ref": r, "values": ["DE"]})).await;
        assert_tool_error(&res, "PERMISSION_DENIED");
    }
    assert!(s.fake.acts().is_empty(), "nothing dispatched: {:?}", s.fake.acts());
    let fake = s.fake.config.lock().unwrap().clone();
    assert!(fake.secret_answers.is_empty() && fake.typed_secrets.is_empty(), "no secret was released");
    let rows: Vec<_> = s.rows().into_iter().filter(|r| r.tool != "browser_tabs" && r.tool != "session").collect();
    assert_eq!(rows.len(), 10, "one refusal row per call: {rows:?}");
    for row in &rows {
        assert_eq!(
            (row.decision.map(|d| d.as_str()), row.outcome.as_deref()),
            (Some("deny"), Some("PERMISSION_DENIED"))
        );
        assert!(!format!("{row:?}").contains(IBAN), "{row:?}");
    }
}

#[tokio::test]
async fn credentials_in_what_an_action_changed_are_redacted_for_the_agent() {
    let mut page = shop_page();
    let mut reveal = FakeElement::new("button", "Show API key");
    reveal.effect = Effect::DialogOpened;
    reveal.changes = vec![
        "text \"API key sk-proj-abcdefghijklmnopqrstuvwx\" appeared".into(),
        "Token: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
            .into(),
    ];
    page.elements.insert("e10".into(), reveal);
    let s = setup("changes", "", page).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e10"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let text = result_text(&r);
    let data = data(&r);
    let changes: Vec<&str> = data["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(changes.len(), 2, "{data}");
    // The text lists each change; neither it nor the structured result
    // holds the key or the token.
    for leaked in ["sk-proj-", "abcdefghijklmnopqrstuvwx", "eyJhbGci", "SflKxw"] {
        assert!(!text.contains(leaked), "{leaked} in the text: {text}");
        assert!(!data.to_string().contains(leaked), "{leaked} in the data: {data}");
    }
    assert!(text.contains("appeared") && text.contains("••••"), "{text}");
    assert!(changes.iter().all(|c| c.contains("••••")), "{changes:?}");
}

#[tokio::test]
async fn enter_in_a_form_and_typing_with_submit_are_classified() {
    let s = setup("keys", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_press_key", json!({"key": "Enter", "ref": "e5"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call_tool(&s.client, "browser_press_key", json!({"key": "ArrowDown"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e4", "text": "shoes", "submit": true})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call_tool(&s.client, "browser_select_option", json!({"ref": "e4", "values": ["Delete"]})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call_tool(&s.client, "browser_scroll", json!({"ref": "e1"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call_tool(&s.client, "browser_hover", json!({"ref": "e1"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let acts = s.fake.acts();
    let decisions: Vec<_> = acts.iter().map(|a| a.4.decision).collect();
    assert_eq!(
        decisions,
        [Decision::Confirm, Decision::Allow, Decision::Allow, Decision::Confirm, Decision::Allow, Decision::Allow]
    );
    assert_eq!(acts[1].1, None, "a key without a ref goes to the focused element");
    assert_eq!(acts[2].2, Action::Type { text: "shoes".into(), submit: true });
    assert_eq!(acts[4].2, Action::Scroll { direction: shared::action::ScrollDirection::IntoView });
}

#[tokio::test]
async fn actions_on_one_tab_are_serialised_and_tabs_run_concurrently() {
    let mut page = shop_page();
    page.act_delay = std::time::Duration::from_millis(300);
    let s = setup("concurrency", "", page).await;
    let (a, b) = tokio::join!(
        call_tool(&s.client, "browser_click", json!({"ref": "e3"})),
        call_tool(&s.client, "browser_hover", json!({"ref": "e1"})),
    );
    assert_eq!((a.is_error, b.is_error), (Some(false), Some(false)), "{a:?} {b:?}");
    assert_eq!(s.fake.overlap.lock().unwrap().max_per_tab, 1, "one tab: one at a time");

    let r = call_tool(&s.client, "browser_tabs", json!({"action": "new", "url": SHOP})).await;
    assert_eq!(r.is_error, Some(false));
    let started = std::time::Instant::now();
    let (a, b) = tokio::join!(
        call_tool(&s.client, "browser_hover", json!({"ref": "e1", "tab": 100})),
        call_tool(&s.client, "browser_hover", json!({"ref": "e1", "tab": 101})),
    );
    assert_eq!((a.is_error, b.is_error), (Some(false), Some(false)), "{a:?} {b:?}");
    let o = s.fake.overlap.lock().unwrap();
    assert_eq!(o.max_per_tab, 1);
    assert_eq!(o.max_total, 2, "two tabs at once");
    assert!(started.elapsed() < std::time::Duration::from_millis(590), "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_lost_answer_after_a_click_is_effect_unknown() {
    let mut page = shop_page();
    page.act_hangs = true;
    let mut s = setup("lost", "", page).await;
    let client = s.client.clone();
    let call = tokio::spawn(async move { call_tool(&client, "browser_click", json!({"ref": "e2"})).await });
    for _ in 0..200 {
        if !s.fake.acts().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(s.fake.acts().len(), 1);
    s.fake.disconnect();
    let r = call.await.unwrap();
    assert_tool_error(&r, "EFFECT_UNKNOWN");
    assert!(result_text(&r).contains("do not repeat"), "{}", result_text(&r));
    let rows = rows_of(&s, "browser_click");
    assert_eq!(rows.last().unwrap().outcome.as_deref(), Some("EFFECT_UNKNOWN"));
}

#[tokio::test]
async fn a_lost_answer_while_the_person_was_asked_is_approval_denied() {
    let mut page = shop_page();
    page.act_hangs = true;
    let mut s = setup("lost-asking", "", page).await;
    let client = s.client.clone();
    let call = tokio::spawn(async move { call_tool(&client, "browser_click", json!({"ref": "e2"})).await });
    for _ in 0..200 {
        if !s.fake.acts().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let gate = s.fake.acts()[0].4.clone();
    s.fake.send(&shared::protocol::ExtToBridge::Asking { request: gate.request });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    s.fake.disconnect();
    let r = call.await.unwrap();
    assert_tool_error(&r, "APPROVAL_DENIED");
    assert!(result_text(&r).contains("nothing ran"), "{}", result_text(&r));
    let rows = rows_of(&s, "browser_click");
    assert_eq!(rows.last().unwrap().outcome.as_deref(), Some("APPROVAL_DENIED"));
}

#[tokio::test]
async fn wait_for_polls_the_visible_text_within_its_bound() {
    let s = setup("wait", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_wait_for", json!({"text": "welcome"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let r = call_tool(&s.client, "browser_wait_for", json!({"gone": "Loading"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let started = std::time::Instant::now();
    let r = call_tool(&s.client, "browser_wait_for", json!({"text": "Order placed", "ms": 300})).await;
    assert_tool_error(&r, "TIMEOUT");
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    let fake_config = s.fake.config.clone();
    let appear = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        fake_config.lock().unwrap().text.push("Order placed".into());
    });
    let r = call_tool(&s.client, "browser_wait_for", json!({"text": "Order placed", "ms": 3000})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    appear.await.unwrap();
    let r = call_tool(&s.client, "browser_wait_for", json!({"ms": 20})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(s.fake.acts().is_empty());
}

#[tokio::test]
async fn a_click_that_lands_on_a_denied_site_does_not_show_it() {
    let toml = "[[sites]]\norigin = \"https://*.bank.example\"\naccess = \"deny\"\n";
    let mut page = shop_page();
    page.elements.get_mut("e1").unwrap().navigates_to = Some("https://www.bank.example/home".into());
    let s = setup("landed", toml, page).await;
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert!(!result_text(&r).contains("/home"), "{}", result_text(&r));
    // And the next action there is refused before dispatch.
    let r = call_tool(&s.client, "browser_click", json!({"ref": "e1"})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert_eq!(s.fake.resolves(), 1);
    let _ = Effect::None;
}

// ---------------------------------------------------------------- browser_screenshot

#[tokio::test]
async fn a_screenshot_is_an_image_block_with_the_tab_and_url_and_one_audit_row() {
    let s = setup("shot", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_screenshot", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let image = r.content.iter().find_map(|c| c.as_image()).expect("an image block");
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(image.data, FAKE_PNG_BASE64);
    assert!(result_text(&r).starts_with(shared::untrusted::NOTICE), "{}", result_text(&r));
    let d = data(&r);
    assert_eq!(d["tab"], 100);
    assert_eq!(d["url"], SHOP);
    assert!(s.fake.commands().contains(&Command::Screenshot { tab: 100 }));
    let rows = rows_of(&s, "browser_screenshot");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].decision.map(|d| d.as_str()), Some("allow"));
    assert_eq!(rows[0].decided_by, Some(DecidedBy::Policy));
    assert_eq!(rows[0].outcome.as_deref(), Some("ok"));
    assert_eq!(rows[0].url.as_deref(), Some("https://shop.example/products"), "no query string");

    // Only the agent's tabs; unknown fields refused.
    let r = call_tool(&s.client, "browser_screenshot", json!({"tab": 555})).await;
    assert_tool_error(&r, "NOT_FOUND");
    let r = call_tool(&s.client, "browser_screenshot", json!({"approved": true})).await;
    assert_tool_error(&r, "INVALID_REQUEST");
}

#[tokio::test]
async fn a_screenshot_of_a_challenge_or_a_denied_site_is_refused() {
    let toml = "[[sites]]\norigin = \"https://*.bank.example\"\naccess = \"deny\"\n";
    let s = setup("shotdeny", toml, shop_page()).await;
    // The extension sees a challenge: refused, and remembered.
    s.fake.configure(|c| c.challenge = true);
    let r = call_tool(&s.client, "browser_screenshot", json!({})).await;
    assert_tool_error(&r, "SECURITY_CHALLENGE");
    let shots = |s: &Setup| s.fake.commands().iter().filter(|c| matches!(c, Command::Screenshot { .. })).count();
    assert_eq!(shots(&s), 1);
    let r = call_tool(&s.client, "browser_screenshot", json!({})).await;
    assert_tool_error(&r, "SECURITY_CHALLENGE");
    assert_eq!(shots(&s), 1, "a known challenge is refused before dispatch");

    // A tab on a denied site: nothing dispatched.
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "new", "url": "https://shop.example/b"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    s.fake.configure(|c| {
        c.challenge = false;
        c.urls.insert(101, "https://www.bank.example/x?y=1".into());
    });
    // The page moved there on its own; reading it tells the bridge.
    let r = call_tool(&s.client, "browser_extract_text", json!({"tab": 101})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    let r = call_tool(&s.client, "browser_screenshot", json!({"tab": 101})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert_eq!(shots(&s), 1);

    let rows = rows_of(&s, "browser_screenshot");
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (row, code) in rows.iter().zip(["SECURITY_CHALLENGE", "SECURITY_CHALLENGE", "PERMISSION_DENIED"]) {
        assert_eq!(row.decision.map(|d| d.as_str()), Some("deny"));
        assert_eq!(row.outcome.as_deref(), Some(code));
    }
    assert_eq!(rows[2].url.as_deref(), Some("https://www.bank.example/x"));
}

// ---------------------------------------------------------------- closing the person's tabs

#[tokio::test]
async fn closing_a_tab_the_agent_did_not_open_goes_through_the_gate() {
    let s = setup("closeother", "", shop_page()).await;
    s.fake.configure(|c| {
        c.urls.insert(555, "https://mail.example/inbox?token=abc".into());
    });
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "close", "tab": 555})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(!result_text(&r).contains("mail.example"), "the person's tab URL is not shown: {}", result_text(&r));
    let acts = s.fake.acts();
    assert_eq!(acts.len(), 1);
    let (tab, target, action, expect, gate) = &acts[0];
    assert_eq!((*tab, target, action, expect), (555, &None, &Action::CloseTab, &None));
    assert_eq!(gate.decision, Decision::Confirm);
    assert_eq!(gate.risk, RiskLevel::High);
    assert!(gate.reasons.iter().any(|r| r.contains("did not open")), "{:?}", gate.reasons);
    assert!(!s.fake.commands().contains(&Command::TabClose { tab: 555 }), "never closed without the gate");
    let rows = rows_of(&s, "browser_tabs");
    let rows: Vec<_> = rows.iter().filter(|r| r.tab == Some(555)).collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].decision.map(|d| d.as_str()), Some("confirm"));
    assert_eq!(rows[0].risk.map(|r| r.as_str()), Some("high"));
    assert_eq!(rows[0].url.as_deref(), Some("https://mail.example/inbox"), "no query string");
    assert_eq!(rows[1].decision.map(|d| d.as_str()), Some("approved"));
    assert_eq!(rows[1].decided_by, Some(DecidedBy::Human));

    // Denied by the person.
    let denied = WireError::new(ErrorCode::ApprovalDenied, "the person denied it").with_denied_by(DeniedBy::Human);
    s.fake.configure(|c| c.act_error = Some(denied));
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "close", "tab": 555})).await;
    assert_tool_error(&r, "APPROVAL_DENIED");
    let last = s.rows().into_iter().last().unwrap();
    assert_eq!((last.decision.map(|d| d.as_str()), last.decided_by), (Some("denied"), Some(DecidedBy::Human)));
    s.fake.configure(|c| c.act_error = None);

    // No such tab: NOT_FOUND, nothing dispatched.
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "close", "tab": 777})).await;
    assert_tool_error(&r, "NOT_FOUND");
    assert_eq!(s.fake.acts().len(), 2);

    // The agent's own tab closes without asking.
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "close", "tab": 100})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(s.fake.commands().contains(&Command::TabClose { tab: 100 }));
    assert_eq!(s.fake.acts().len(), 2);
}

#[tokio::test]
async fn closing_the_persons_tab_obeys_stop_and_the_policy() {
    let toml = "[risk]\nhigh = \"deny\"\n";
    let s = setup("closepolicy", toml, shop_page()).await;
    s.fake.configure(|c| {
        c.urls.insert(555, "https://mail.example/inbox".into());
    });
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "close", "tab": 555})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    s.fake.set_control(&s.bridge, ControlState { stopped: true, paused: false, yolo: false, pending: 0 }).await;
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "close", "tab": 555})).await;
    assert_tool_error(&r, "STOPPED");
    assert!(s.fake.acts().is_empty());
}

// ---------------------------------------------------------------- secrets: released after the gate, bound to sites

/// The answers the fake got to its secret requests, as (ask, value or code).
fn secret_answers(s: &Setup) -> Vec<(SecretAsk, Result<String, &'static str>)> {
    let c = s.fake.config.lock().unwrap();
    c.secret_answers.iter().map(|(a, r)| (a.clone(), r.clone().map_err(|e| e.code.as_str()))).collect()
}

#[tokio::test]
async fn a_secret_is_released_once_only_for_its_own_waiting_act() {
    let mut page = shop_page();
    page.secret_asks = vec![SecretAsk::OtherId, SecretAsk::Own, SecretAsk::Own];
    let s = setup("release", "", page).await;
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let gate = s.fake.acts()[0].4.clone();
    assert!(!gate.person_must_answer, "a bound secret on its own site follows the policy");
    assert_eq!(gate.decision, Decision::Confirm);
    assert_eq!(
        secret_answers(&s),
        [
            (SecretAsk::OtherId, Err("PERMISSION_DENIED")),
            (SecretAsk::Own, Ok(SHOP_STORED.to_string())),
            (SecretAsk::Own, Err("PERMISSION_DENIED")),
        ],
        "another id gets nothing, the Act's own id gets the value once"
    );
    assert_eq!(s.fake.config.lock().unwrap().typed_secrets, [SHOP_STORED]);
    let value_frames = s.fake.frames().iter().filter(|f| f.json.contains(SHOP_STORED)).count();
    assert_eq!(value_frames, 1);

    // Once the Act has its answer, its id releases nothing any more.
    let e = s.fake.request_secret(gate.request, &gate.origin).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied);
    // Nor does an id no Act ever had.
    let e = s.fake.request_secret(12345, "https://shop.example:443").await.unwrap_err();
    assert_eq!(e.code, ErrorCode::PermissionDenied);
    assert_eq!(s.fake.frames().iter().filter(|f| f.json.contains(SHOP_STORED)).count(), 1);
    let logs = String::from_utf8_lossy(&logs().lock().unwrap()).to_string();
    assert!(logs.contains("secret request refused") && logs.contains("already_released"), "{logs}");
    assert!(!logs.contains(SHOP_STORED));
}

#[tokio::test]
async fn a_secret_is_released_only_for_the_origin_decided_and_its_current_binding() {
    // The extension reports another origin than the one decided for, even
    // one the secret is bound to: nothing.
    let mut page = shop_page();
    page.secret_asks = vec![SecretAsk::OwnFrom("https://partner.example:443".into())];
    let s = setup("release-origin", "", page).await;
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert!(s.fake.config.lock().unwrap().typed_secrets.is_empty());
    assert!(!s.fake.frames().iter().any(|f| f.json.contains(SHOP_STORED)));

    // The person binds the secret elsewhere while the action waits.
    s.fake.configure(|c| {
        c.secret_asks = vec![SecretAsk::Own];
        c.act_delay = std::time::Duration::from_millis(400);
    });
    let client = s.client.clone();
    let typing = tokio::spawn(async move {
        call_tool(&client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await
    });
    wait_for_acts(&s, 2).await;
    let store = SecretStore::open(&Home::at(&s.dir)).unwrap();
    store.set("SHOP_TOKEN", SecretValue::new(SHOP_STORED.into()), &["https://partner.example".into()]).unwrap();
    assert_tool_error(&typing.await.unwrap(), "PERMISSION_DENIED");
    assert!(s.fake.config.lock().unwrap().typed_secrets.is_empty());

    // Bound when decided (so nobody was asked), unbound while it waited.
    let shop_sites = SHOP_SITES.map(String::from);
    store.set("SHOP_TOKEN", SecretValue::new(SHOP_STORED.into()), &shop_sites).unwrap();
    let client = s.client.clone();
    let typing = tokio::spawn(async move {
        call_tool(&client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await
    });
    wait_for_acts(&s, 3).await;
    assert!(!s.fake.acts()[2].4.person_must_answer);
    store.set("SHOP_TOKEN", SecretValue::new(SHOP_STORED.into()), &[]).unwrap();
    assert_tool_error(&typing.await.unwrap(), "PERMISSION_DENIED");
    assert!(s.fake.config.lock().unwrap().typed_secrets.is_empty());
    assert!(!s.fake.frames().iter().any(|f| f.json.contains(SHOP_STORED)), "the value was sent");

    // Left alone, it goes through.
    store.set("SHOP_TOKEN", SecretValue::new(SHOP_STORED.into()), &shop_sites).unwrap();
    s.fake.configure(|c| c.act_delay = std::time::Duration::ZERO);
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(s.fake.config.lock().unwrap().typed_secrets, [SHOP_STORED]);
}

async fn wait_for_acts(s: &Setup, n: usize) {
    for _ in 0..200 {
        if s.fake.acts().len() >= n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("no Act #{n}: {:?}", s.fake.commands());
}

#[tokio::test]
async fn a_bound_secret_is_refused_on_any_other_origin_before_dispatch_even_where_the_site_allows_all() {
    let toml = "[[sites]]\norigin = \"https://shop.example\"\nhigh = \"allow\"\n";
    let s = setup("bound", toml, shop_page()).await;
    for form in [false, true] {
        let r = if form {
            let fields =
                json!({"fields": [{"ref": "e4", "value": "x"}, {"ref": "e5", "value": {"secret": "OTHER_TOKEN"}}]});
            call_tool(&s.client, "browser_fill_form", fields).await
        } else {
            call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "OTHER_TOKEN"}})).await
        };
        assert_tool_error(&r, "PERMISSION_DENIED");
        let t = result_text(&r);
        assert!(t.contains("OTHER_TOKEN") && t.contains("https://shop.example:443"), "{t}");
        assert!(!t.contains("other.example"), "the binding is not told to the agent: {t}");
    }
    assert!(s.fake.acts().is_empty(), "dispatched: {:?}", s.fake.acts());
    let rows = rows_of(&s, "browser_type");
    assert_eq!(rows.last().unwrap().decision.map(|d| d.as_str()), Some("deny"));
    assert_eq!(rows.last().unwrap().outcome.as_deref(), Some("PERMISSION_DENIED"));
    assert!(rows.last().unwrap().summary.contains("{secret:OTHER_TOKEN}"));

    // The bridge knows the tab's URL now: refused without even a Resolve.
    let resolves = s.fake.resolves();
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "OTHER_TOKEN"}})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert_eq!(s.fake.resolves(), resolves);

    // On its own site it follows the policy: here, high risk is allowed.
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let gate = &s.fake.acts()[0].4;
    assert_eq!((gate.decision, gate.person_must_answer), (Decision::Allow, false));
    assert_eq!(data(&r)["decided_by"], "policy");

    // Unbound: the person answers, whatever the policy says.
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "API_TOKEN"}})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let gate = &s.fake.acts()[1].4;
    assert_eq!((gate.decision, gate.person_must_answer), (Decision::Confirm, true));
    let rows = rows_of(&s, "browser_type");
    let action_row = &rows[rows.len() - 2];
    assert_eq!(action_row.decision.map(|d| d.as_str()), Some("confirm"));
    assert!(action_row.reasons.iter().any(|r| r.contains("not bound to a site")), "{action_row:?}");
    assert_eq!(s.fake.config.lock().unwrap().typed_secrets, [SHOP_STORED, STORED]);
    assert!(!s.fake.frames().iter().any(|f| f.json.contains(OTHER_STORED)), "the refused secret was sent");
}

#[tokio::test]
async fn an_unbound_secret_under_a_deny_policy_stays_denied() {
    let s = setup("unbound-deny", "[risk]\nhigh = \"deny\"\n", shop_page()).await;
    let r = call_tool(&s.client, "browser_type", json!({"ref": "e5", "text": {"secret": "API_TOKEN"}})).await;
    assert_tool_error(&r, "PERMISSION_DENIED");
    assert!(s.fake.acts().is_empty());
}

#[tokio::test]
async fn a_second_browser_gets_nothing_while_a_secret_act_waits_for_its_value() {
    let mut page = shop_page();
    page.act_delay = std::time::Duration::from_millis(400);
    let s = setup("rogue", "", page).await;
    let client = s.client.clone();
    let typing = tokio::spawn(async move {
        call_tool(&client, "browser_type", json!({"ref": "e5", "text": {"secret": "SHOP_TOKEN"}})).await
    });
    wait_for_acts(&s, 1).await;
    let gate = s.fake.acts()[0].4.clone();

    // A local program with the extension token asks for that very value.
    let mut rogue = ws_connect(s.bridge.port, Some(&ext_origin()), None).await.unwrap();
    send_hello(&mut rogue, s.bridge.ext_token()).await;
    let ask = shared::protocol::ExtToBridge::SecretRequest { request: gate.request, origin: gate.origin.clone() };
    send_json(&mut rogue, &ask).await;
    let got = read_until_closed(&mut rogue, std::time::Duration::from_secs(3)).await;
    assert_eq!(got.close.map(u16::from), Some(shared::protocol::ANOTHER_BROWSER_CLOSE_CODE));
    assert!(got.frames.is_empty(), "the second browser got frames: {:?}", got.frames);

    // The real one still gets it, once.
    let r = typing.await.unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(s.fake.config.lock().unwrap().typed_secrets, [SHOP_STORED]);
    assert_eq!(s.fake.frames().iter().filter(|f| f.json.contains(SHOP_STORED)).count(), 1);
    assert_eq!(s.bridge.state.status().refused.total, 1);
}

// ---------------------------------------------------------------- browser_handoff

#[tokio::test]
async fn a_handoff_carries_the_reason_and_answers_with_the_wait_and_the_header() {
    let s = setup("handoff", "", shop_page()).await;
    let r = call_tool(&s.client, "browser_handoff", json!({"reason": "  Please sign in to the bank "})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let d = data(&r);
    assert_eq!(d["outcome"], "done");
    assert_eq!(d["waited_ms"], 1500);
    assert_eq!(d["tab"], 100);
    assert!(d["header"].as_str().unwrap().starts_with("Page URL: "), "{d}");
    assert!(result_text(&r).starts_with(shared::untrusted::NOTICE), "page-derived, so wrapped");
    assert!(
        s.fake.commands().contains(&Command::Handoff { tab: 100, reason: "Please sign in to the bank".into() }),
        "the reason goes to the extension trimmed: {:?}",
        s.fake.commands()
    );

    // Bad reasons, other tabs and unknown fields are refused before anything is sent.
    let before = s.fake.commands().len();
    for (args, code) in [
        (json!({"reason": ""}), "INVALID_REQUEST"),
        (json!({"reason": "x".repeat(301)}), "INVALID_REQUEST"),
        (json!({"reason": "a\u{7}b"}), "INVALID_REQUEST"),
        (json!({}), "INVALID_REQUEST"),
        (json!({"reason": "ok", "outcome": "done"}), "INVALID_REQUEST"),
        (json!({"reason": "ok", "tab": 555}), "NOT_FOUND"),
    ] {
        let r = call_tool(&s.client, "browser_handoff", args.clone()).await;
        assert_tool_error(&r, code);
    }
    assert_eq!(s.fake.commands().len(), before, "a refused hand-off reached the extension");
}

/// A tab waiting for the person is theirs: every tool on it but the tab
/// list is refused before anything reaches the extension.
#[tokio::test]
async fn nothing_but_the_tab_list_reaches_a_tab_handed_to_the_person() {
    let s = setup("handed", "", shop_page()).await;
    let waiting = shared::handoff::Waiting {
        id: 1,
        tab: 100,
        challenge: None,
        origin: "https://shop.example:443".into(),
        began_origin: "https://shop.example:443".into(),
        reason: None,
        trigger: shared::handoff::Trigger::Person,
        since_ms: 0,
        misses: 0,
        note: None,
    };
    s.fake.send(&shared::protocol::ExtToBridge::Waiting { tabs: vec![waiting] });
    // The frame is read asynchronously: wait until the bridge has it.
    for _ in 0..100 {
        if !s.bridge.state.hub().waiting().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = s.fake.commands().len();
    for (tool, args) in [
        ("browser_navigate", json!({"url": "https://evil.example/login"})),
        ("browser_snapshot", json!({})),
        ("browser_extract_text", json!({})),
        ("browser_screenshot", json!({})),
        ("browser_click", json!({"ref": "e1"})),
        ("browser_press_key", json!({"key": "Enter"})),
        ("browser_handoff", json!({"reason": "again"})),
    ] {
        let r = call_tool(&s.client, tool, args).await;
        assert_tool_error(&r, "HUMAN_REQUIRED");
        assert!(result_text(&r).contains("handed to the person"), "{tool}: {}", result_text(&r));
    }
    assert_eq!(s.fake.commands().len(), before, "a command reached a handed tab: {:?}", s.fake.commands());
    // Listing tabs still works.
    let r = call_tool(&s.client, "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    // Control: once the tab is handed back, the same call goes through.
    s.fake.send(&shared::protocol::ExtToBridge::Waiting { tabs: Vec::new() });
    for _ in 0..100 {
        if s.bridge.state.hub().waiting().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = s.fake.commands().len();
    call_tool(&s.client, "browser_snapshot", json!({})).await;
    assert!(
        matches!(s.fake.commands()[before..], [Command::Snapshot { tab: 100, .. }]),
        "the snapshot reached the extension once the tab was handed back: {:?}",
        s.fake.commands()
    );
}

/// At most `MAX_HANDOFFS_PER_MINUTE` `browser_handoff`s a minute per
/// session; more are refused before anything reaches the extension.
#[tokio::test]
async fn hand_offs_are_limited_per_session_and_minute() {
    let s = setup("handoff-limit", "", shop_page()).await;
    for n in 0..shared::handoff::MAX_HANDOFFS_PER_MINUTE {
        let r = call_tool(&s.client, "browser_handoff", json!({"reason": format!("look {n}")})).await;
        assert_eq!(r.is_error, Some(false), "hand-off {n}: {r:?}");
    }
    let before = s.fake.commands().len();
    let r = call_tool(&s.client, "browser_handoff", json!({"reason": "one too many"})).await;
    assert_tool_error(&r, "BUDGET_EXCEEDED");
    assert!(result_text(&r).contains("at most 3 a minute"), "{}", result_text(&r));
    assert_eq!(s.fake.commands().len(), before, "the refused hand-off reached the extension");
}
