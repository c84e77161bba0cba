//! The flow tools through the whole bridge: an rmcp client, the bridge with
//! a flow store and an audit store, and the page fake, which finds a flow
//! step's element like the content script (`shared::replay::choose` on its
//! elements) and plays the extension's gate.

use std::path::PathBuf;

use crate::common::*;
use bridge::audit::AuditStore;
use bridge::flows::FlowStore;
use serde_json::{Value, json};
use shared::action::{Action, Effect};
use shared::error::{ErrorCode, WireError};
use shared::flow::{Descriptor, Flow, Locator, Param, ParamKind, Step, StepAction, Value as FlowValue};
use shared::policy::Decision;
use shared::protocol::Command;
use shared::risk::RiskLevel;

const SHOP: &str = "https://shop.example/products";

struct Setup {
    _bridge: Bridge,
    fake: PageFake,
    client: McpClient,
    flows: FlowStore,
    audit: AuditStore,
    dir: PathBuf,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn setup(name: &str, page: PageConfig) -> Setup {
    logs();
    let dir = std::env::temp_dir().join(format!("chaperone-flows-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let audit = AuditStore::open(&dir.join("chaperone.db")).unwrap();
    let flows = FlowStore::open(&dir.join("chaperone.db")).unwrap();
    let (a, f) = (audit.clone(), flows.clone());
    let bridge = Bridge::start_with(move |c| {
        c.audit = Some(a);
        c.flows = Some(f);
    })
    .await;
    let fake = PageFake::connect(&bridge, page).await;
    let client = mcp_client(&bridge).await;
    Setup { _bridge: bridge, fake, client, flows, audit, dir }
}

fn target(role: &str, name: &str, id: &str) -> Option<Descriptor> {
    Some(Descriptor {
        role: role.into(),
        name: name.into(),
        locators: vec![Locator::Id(id.into()), Locator::Css(format!("#{id}"))],
        ..Descriptor::default()
    })
}

fn step(action: StepAction, target: Option<Descriptor>) -> Step {
    Step { action, target, url: SHOP.into(), title: "Shop".into(), risk: None }
}

/// Open the shop, type the e-mail into the search box, press "Place order".
fn order_flow() -> Flow {
    Flow {
        name: "order".into(),
        created: "2026-12-01T21:00:00Z".into(),
        steps: vec![
            step(StepAction::Navigate { url: SHOP.into() }, None),
            step(StepAction::Fill { value: FlowValue::Param("email".into()) }, target("searchbox", "Search", "q")),
            step(StepAction::Click, target("button", "Place order", "place")),
        ],
        params: vec![Param { name: "email".into(), kind: ParamKind::Email, default: None }],
    }
}

fn steps(r: &rmcp::model::CallToolResult) -> Vec<Value> {
    r.structured_content.as_ref().unwrap()["data"]["steps"].as_array().unwrap().clone()
}

fn acts(s: &Setup) -> Vec<ActSeen> {
    s.fake.acts()
}

#[tokio::test]
async fn a_flow_runs_with_new_parameters_every_step_through_the_gate() {
    let s = setup("run", shop_page()).await;
    s.flows.save(&order_flow(), false).unwrap();
    let r = call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "new@person.example"}})).await;
    assert_ne!(r.is_error, Some(true), "{}", result_text(&r));
    let st = steps(&r);
    assert_eq!(st.len(), 3);
    assert!(st.iter().all(|s| s["outcome"] == "done"), "{st:?}");
    assert_eq!(st[0]["effect"], "navigated");
    assert_eq!(st[1]["via"], "role and name");
    assert_eq!(st[2]["risk"], "high");
    assert_eq!(st[2]["decision"], "confirm");
    assert_eq!(st[2]["decided_by"], "human");
    assert!(st.iter().all(|s| s["ms"].is_u64()));
    let acts = acts(&s);
    assert_eq!(acts.len(), 2, "one Act per page step");
    assert_eq!(acts[0].2, Action::Type { text: "new@person.example".into(), submit: false });
    assert_eq!(acts[0].1.as_deref(), Some("e4"), "the ref the page gave the located element");
    assert_eq!(acts[1].2, Action::Click);
    assert_eq!((acts[1].4.decision, acts[1].4.risk), (Decision::Confirm, RiskLevel::High));
    assert!(!acts[1].4.person_must_answer && acts[1].4.changed.is_none());
    // The typed value is never in the result text.
    assert!(!result_text(&r).contains("new@person.example"), "{}", result_text(&r));
    // Each page step is an audit row of its own, tool flow_run.
    let rows = s.audit.list(None).unwrap();
    assert!(rows.iter().filter(|r| r.tool == "flow_run").count() >= 3, "{rows:?}");
}

#[tokio::test]
async fn a_changed_target_always_asks_with_both_targets() {
    let mut page = shop_page();
    // "Place order" is gone; the id the recording used sits on "Delete account".
    page.elements.remove("e7");
    page.ids.insert("e2".into(), "place".into());
    let s = setup("changed", page).await;
    s.flows.save(&order_flow(), false).unwrap();
    let r = call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "a@b.example"}})).await;
    let st = steps(&r);
    assert_eq!(st[2]["outcome"], "done", "{st:?}");
    assert_eq!(st[2]["changed"]["recorded"], json!({"role": "button", "name": "Place order"}));
    assert_eq!(st[2]["changed"]["live"], json!({"role": "button", "name": "Delete account"}));
    let gate = &acts(&s)[1].4;
    assert!(gate.person_must_answer, "a changed target is the person's to answer");
    assert_eq!(gate.decision, Decision::Confirm);
    assert_eq!(gate.changed.as_ref().unwrap().live.name, "Delete account");
    assert!(gate.reasons.iter().any(|r| r.starts_with("changed target: the flow recorded button \"Place order\"")));
    assert!(result_text(&r).contains("changed target: recorded button \"Place order\", now button \"Delete account\""));
}

#[tokio::test]
async fn a_missing_element_stops_the_run_with_what_was_expected_and_what_is_there() {
    let mut page = shop_page();
    page.elements.remove("e7");
    let s = setup("missing", page).await;
    let mut flow = order_flow();
    flow.steps.push(step(StepAction::Click, target("link", "Next page", "next")));
    s.flows.save(&flow, false).unwrap();
    let started = std::time::Instant::now();
    let r = call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "a@b.example"}})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "the wait is bounded");
    let data = &r.structured_content.as_ref().unwrap()["data"];
    assert_eq!(data["error"]["code"], "NOT_FOUND");
    let st = steps(&r);
    assert_eq!(st[2]["outcome"], "failed");
    let message = st[2]["error"]["message"].as_str().unwrap();
    assert!(message.contains("no element on the page matches the recorded button \"Place order\""), "{message}");
    assert!(message.contains("id \"place\": 0"), "{message}");
    assert!(message.contains("button \"Delete account\""), "what is there: {message}");
    assert_eq!(st[3]["outcome"], "not_run");
    assert_eq!(acts(&s).len(), 1, "nothing after the failure is dispatched");
    assert!(result_text(&r).starts_with(shared::untrusted::NOTICE));
}

#[tokio::test]
async fn a_page_that_is_still_loading_is_waited_for() {
    let mut page = shop_page();
    page.locate_misses = 3;
    let s = setup("wait", page).await;
    s.flows.save(&order_flow(), false).unwrap();
    let r = call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "a@b.example"}})).await;
    assert_ne!(r.is_error, Some(true), "{}", result_text(&r));
    let locates = s.fake.commands().iter().filter(|c| matches!(c, Command::Locate { .. })).count();
    assert_eq!(locates, 2 + 3, "looked again while the element was not there");
}

#[tokio::test]
async fn a_stored_risk_raises_the_live_one_never_lowers_it() {
    let s = setup("floor", shop_page()).await;
    let mut flow = order_flow();
    // The search box is low risk live; the flow says high.
    flow.steps[1].risk = Some(RiskLevel::High);
    // "Place order" is high live; a stored "low" changes nothing.
    flow.steps[2].risk = Some(RiskLevel::Low);
    s.flows.save(&flow, false).unwrap();
    call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "a@b.example"}})).await;
    let acts = acts(&s);
    assert_eq!((acts[0].4.risk, acts[0].4.decision), (RiskLevel::High, Decision::Confirm));
    assert!(acts[0].4.reasons.iter().any(|r| r == "the flow stores this step as high risk"));
    assert_eq!(acts[1].4.risk, RiskLevel::High);
}

#[tokio::test]
async fn parameters_are_checked_before_anything_runs() {
    let s = setup("params", shop_page()).await;
    let mut flow = order_flow();
    flow.params.push(Param { name: "token".into(), kind: ParamKind::Secret, default: None });
    flow.steps
        .push(step(StepAction::Fill { value: FlowValue::Param("token".into()) }, target("textbox", "API token", "t")));
    s.flows.save(&flow, false).unwrap();
    for (args, code, says) in [
        (json!({"name": "order", "secrets": {"token": {"secret": "API"}}}), "INVALID_REQUEST", "missing parameters"),
        (json!({"name": "order", "params": {"email": "a", "token": "CANARY-literal"}}), "INVALID_REQUEST", "secrets"),
        (json!({"name": "order", "params": {"email": "a", "nope": "1"}}), "INVALID_REQUEST", "no parameter nope"),
        (
            json!({"name": "order", "params": {"email": "a"}, "secrets": {"token": {"secret": "NOT_STORED"}}}),
            "NOT_FOUND",
            "no secret named",
        ),
        (json!({"name": "nope"}), "NOT_FOUND", "no flow named"),
        (json!({"name": "../x"}), "INVALID_REQUEST", "flow name"),
        (json!({"name": "order", "risk": "low"}), "INVALID_REQUEST", "unknown field"),
    ] {
        let r = call_tool(&s.client, "flow_run", args.clone()).await;
        assert_tool_error(&r, code);
        assert!(result_text(&r).contains(says), "{args}: {}", result_text(&r));
        assert!(!result_text(&r).contains("CANARY"));
    }
    assert!(s.fake.commands().is_empty(), "nothing reached the browser: {:?}", s.fake.commands());
}

#[tokio::test]
async fn stop_in_the_popup_stops_a_run_before_its_first_step() {
    let s = setup("stop", shop_page()).await;
    s.flows.save(&order_flow(), false).unwrap();
    let stopped = shared::action::ControlState { stopped: true, ..Default::default() };
    s.fake.set_control(&s._bridge, stopped).await;
    let r = call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "a@b.example"}})).await;
    let st = steps(&r);
    assert_eq!(st[0]["error"]["code"], "STOPPED", "{st:?}");
    assert_eq!(st[1]["outcome"], "not_run");
    assert!(
        !s.fake.commands().iter().any(|c| matches!(c, Command::Navigate { .. } | Command::Act { .. })),
        "nothing reached the page: {:?}",
        s.fake.commands()
    );
}

#[tokio::test]
async fn a_refused_step_stops_the_run_and_says_why() {
    let mut page = shop_page();
    page.act_error = Some(WireError::new(ErrorCode::ApprovalDenied, "the person denied this action; it did not run"));
    let s = setup("denied", page).await;
    s.flows.save(&order_flow(), false).unwrap();
    let r = call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "a@b.example"}})).await;
    assert_eq!(r.is_error, Some(true));
    let st = steps(&r);
    assert_eq!(st[1]["outcome"], "failed");
    assert_eq!(st[1]["error"]["code"], "APPROVAL_DENIED");
    assert_eq!(st[2]["outcome"], "not_run");
    assert_eq!(acts(&s).len(), 1, "nothing retried, nothing after");
}

#[tokio::test]
async fn an_unknown_effect_after_a_high_risk_step_stops_the_run() {
    let mut page = shop_page();
    page.elements.get_mut("e7").unwrap().effect = Effect::Unknown;
    let s = setup("unknown", page).await;
    let mut flow = order_flow();
    flow.steps.push(step(StepAction::Click, target("link", "Next page", "next")));
    s.flows.save(&flow, false).unwrap();
    let r = call_tool(&s.client, "flow_run", json!({"name": "order", "params": {"email": "a@b.example"}})).await;
    let st = steps(&r);
    assert_eq!(st[2]["error"]["code"], "EFFECT_UNKNOWN", "{st:?}");
    assert_eq!(st[2]["effect"], "unknown");
    assert_eq!(st[3]["outcome"], "not_run");
    assert_eq!(acts(&s).len(), 2);
}

#[tokio::test]
async fn flow_show_masks_values_and_flow_list_lists() {
    let s = setup("show", shop_page()).await;
    let mut flow = order_flow();
    flow.steps[1].action = StepAction::Fill { value: FlowValue::Literal("CANARY-kept-text".into()) };
    flow.params[0].default = Some("CANARY-default".into());
    s.flows.save(&flow, false).unwrap();
    let r = call_tool(&s.client, "flow_show", json!({"name": "order"})).await;
    let text = result_text(&r);
    let all = format!("{text}{}", serde_json::to_string(&r.structured_content).unwrap());
    assert!(!all.contains("CANARY"), "{all}");
    assert!(text.contains("fill searchbox \"Search\" with ••••"), "{text}");
    assert!(text.contains("email (email): has a default"), "{text}");
    let r = call_tool(&s.client, "flow_list", json!({})).await;
    assert_eq!(r.structured_content.as_ref().unwrap()["flows"][0]["name"], "order");
    assert_eq!(r.structured_content.as_ref().unwrap()["flows"][0]["steps"], 3);
}

#[tokio::test]
async fn flow_delete_asks_the_person_first() {
    let mut page = shop_page();
    page.ask_error = Some(
        WireError::new(ErrorCode::ApprovalDenied, "the person denied this action; it did not run")
            .with_denied_by(shared::audit::DeniedBy::Human),
    );
    let s = setup("delete", page).await;
    s.flows.save(&order_flow(), false).unwrap();
    let r = call_tool(&s.client, "flow_delete", json!({"name": "order"})).await;
    assert_tool_error(&r, "APPROVAL_DENIED");
    assert!(s.flows.get("order").unwrap().is_some(), "denied: still there");
    let Some(Command::AskPerson { gate }) = s.fake.commands().into_iter().last() else { panic!("asked") };
    assert!(gate.person_must_answer, "never YOLO");
    assert_eq!(gate.risk, RiskLevel::High);
    assert!(gate.summary.contains("delete the flow \"order\""));
    s.fake.configure(|c| c.ask_error = None);
    let r = call_tool(&s.client, "flow_delete", json!({"name": "order"})).await;
    assert_ne!(r.is_error, Some(true), "{}", result_text(&r));
    assert!(s.flows.get("order").unwrap().is_none());
    let rows = s.audit.list(None).unwrap();
    let deletes: Vec<_> = rows.iter().filter(|r| r.tool == "flow_delete").collect();
    assert_eq!(deletes.len(), 2, "{rows:?}");
    let r = call_tool(&s.client, "flow_delete", json!({"name": "order"})).await;
    assert_tool_error(&r, "NOT_FOUND");
}

/// A token of a recorded URL is a parameter (`shared::record::person`):
/// the run fills it in as one path segment, never a path, query or host.
#[tokio::test]
async fn a_token_in_a_recorded_url_is_filled_as_one_path_segment() {
    let s = setup("token", shop_page()).await;
    let reset = Flow {
        name: "reset".into(),
        created: "2026-12-01T21:00:00Z".into(),
        steps: vec![step(
            StepAction::Navigate { url: "https://shop.example/reset/{{path_token}}/confirm".into() },
            None,
        )],
        params: vec![Param { name: "path_token".into(), kind: ParamKind::Text, default: None }],
    };
    s.flows.save(&reset, false).unwrap();
    for bad in ["../../account/delete", "..", "x?next=https://evil.example", "@evil.example", "a b"] {
        let r = call_tool(&s.client, "flow_run", json!({"name": "reset", "params": {"path_token": bad}})).await;
        assert_tool_error(&r, "INVALID_REQUEST");
        assert!(result_text(&r).contains("one path segment"), "{bad}: {}", result_text(&r));
    }
    let r = call_tool(&s.client, "flow_run", json!({"name": "reset"})).await;
    assert_tool_error(&r, "INVALID_REQUEST");
    assert!(result_text(&r).contains("missing parameters: path_token"), "{}", result_text(&r));
    assert!(s.fake.commands().is_empty(), "checked before anything ran: {:?}", s.fake.commands());
    let r =
        call_tool(&s.client, "flow_run", json!({"name": "reset", "params": {"path_token": "kq3ZtP8wR2mX7vN4"}})).await;
    assert_ne!(r.is_error, Some(true), "{}", result_text(&r));
    let went: Vec<String> = s
        .fake
        .commands()
        .into_iter()
        .filter_map(|c| if let Command::Navigate { url, .. } = c { Some(url) } else { None })
        .collect();
    assert_eq!(went, ["https://shop.example/reset/kq3ZtP8wR2mX7vN4/confirm"]);
}
