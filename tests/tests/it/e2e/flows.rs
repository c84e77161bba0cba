//! Replaying flows end to end (docs/design.md, "Record me and flows"): a
//! flow recorded on the flow shop (`fixtures/sites/flowshop/`) is imported
//! with `chaperone flow import` — its URLs rewritten for each variant, as
//! the person would after `flow export` — and replayed with `flow_run`
//! through the real bridge, extension and Chromium. The test plays the
//! person with trusted clicks in the approval window, headed on Xvfb.
//!
//! One stack for the whole scenario.

use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Human, ShownRequest, Stack};

use super::page_at;

const SHOW_WITHIN: Duration = Duration::from_secs(20);

fn target(role: &str, name: &str, locators: Value) -> Value {
    json!({ "role": role, "name": name, "locators": locators })
}

fn id(v: &str) -> Value {
    json!({ "by": "id", "value": v })
}

fn css(v: &str) -> Value {
    json!({ "by": "css", "value": v })
}

fn step(base: &str, page: &str, action: Value, target: Option<Value>) -> Value {
    let mut s = json!({ "action": action, "url": format!("{base}{page}"), "title": "Flow Shop" });
    if let Some(t) = target {
        s["target"] = t;
    }
    s
}

fn fill(param: &str) -> Value {
    json!({ "kind": "fill", "value": { "param": param } })
}

/// The whole purchase as the person recorded it on `/flowshop/`: search,
/// open the product, choose a size, fill the address, reach and press the
/// order button. Address fields are parameters without defaults.
fn purchase(base: &str) -> Value {
    let click = json!({ "kind": "click" });
    let field =
        |label: &str, name: &str| target("textbox", label, json!([id(name), json!({"by": "name", "value": name})]));
    json!({
        "name": "purchase",
        "created": "2026-12-01T21:00:00Z",
        "params": [
            { "name": "fullname", "kind": "text" },
            { "name": "email", "kind": "email" },
            { "name": "phone", "kind": "phone" },
            { "name": "street", "kind": "address" },
            { "name": "postcode", "kind": "address" },
            { "name": "city", "kind": "address" },
        ],
        "steps": [
            step(base, "index.html", json!({ "kind": "navigate", "url": format!("{base}index.html") }), None),
            step(base, "index.html", json!({ "kind": "fill", "value": { "literal": "teapot" } }),
                Some(target("searchbox", "Search products", json!([id("q"), css("#search > input")])))),
            step(base, "index.html", click.clone(), Some(target("button", "Search", json!([id("go")])))),
            step(base, "results.html", click.clone(),
                Some(target("link", "Blue teapot", json!([id("hit-teapot"), {"by": "test_id", "value": {"attr": "data-testid", "value": "hit-teapot"}}])))),
            step(base, "product.html", json!({ "kind": "select", "value": { "literal": "Medium" } }),
                Some(target("combobox", "Size", json!([id("size")])))),
            step(base, "product.html", click.clone(), Some(target("link", "Continue to delivery", json!([id("continue")])))),
            step(base, "address.html", fill("fullname"), Some(field("Full name", "fullname"))),
            step(base, "address.html", fill("email"), Some(field("E-mail", "email"))),
            step(base, "address.html", fill("phone"), Some(field("Phone", "phone"))),
            step(base, "address.html", fill("street"), Some(field("Street", "street"))),
            step(base, "address.html", fill("postcode"), Some(field("Postcode", "postcode"))),
            step(base, "address.html", fill("city"), Some(field("City", "city"))),
            step(base, "address.html", json!({ "kind": "check", "checked": true }), Some(target("radio", "Express", json!([id("express")])))),
            step(base, "address.html", json!({ "kind": "check", "checked": true }), Some(target("checkbox", "Gift wrap", json!([id("gift")])))),
            step(base, "address.html", click.clone(), Some(target("button", "Continue to review", json!([id("review")])))),
            step(base, "review.html", click, Some(target("button", "Place order", json!([id("place"), css("main > button")])))),
        ],
    })
}

/// Straight to the review page and its order button.
fn order_only(base: &str, name: &str) -> Value {
    json!({
        "name": name,
        "created": "2026-12-01T21:00:00Z",
        "steps": [
            step(base, "review.html", json!({ "kind": "navigate", "url": format!("{base}review.html") }), None),
            step(base, "review.html", json!({ "kind": "click" }),
                Some(target("button", "Place order", json!([id("place"), css("main > button")])))),
        ],
    })
}

/// `chaperone flow import` of `flow` under `name`.
fn import(s: &Stack, flow: &Value, name: &str) {
    let dir = tests::temp_dir("flow-file");
    let file = dir.path().join("flow.json");
    std::fs::write(&file, serde_json::to_string_pretty(flow).unwrap()).unwrap();
    let out = s.daemon.cli(&["flow", "import", file.to_str().unwrap(), "--name", name], "").expect("run the CLI");
    assert_eq!(out.code, 0, "import {name}: {}{}", out.stdout, out.stderr);
}

fn new_params() -> Value {
    json!({
        "fullname": "Ada Replay",
        "email": "ada@replay.example",
        "phone": "+43 1 234 5678",
        "street": "Neue Gasse 5",
        "postcode": "8010",
        "city": "Graz",
    })
}

/// Waits for a request other than `not` in the approval window.
async fn next_request(human: &Human, not: Option<u64>) -> (CdpSession, ShownRequest) {
    let started = std::time::Instant::now();
    loop {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("the approval window shows a request");
        if Some(req.request) != not {
            return (win, req);
        }
        assert!(started.elapsed() < SHOW_WITHIN, "no new request after {not:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn steps(r: &tests::ToolResult) -> Vec<Value> {
    r.data()["steps"].as_array().unwrap_or_else(|| panic!("no steps: {}", r.raw)).clone()
}

/// The page target whose URL starts with `prefix` (≤ 10 s), attached.
async fn page_starting(s: &Stack, prefix: &str) -> CdpSession {
    let t = s
        .browser
        .cdp
        .wait_for_target(Duration::from_secs(10), |t| t.kind == "page" && t.url.starts_with(prefix))
        .await
        .unwrap_or_else(|e| panic!("no page target at {prefix}: {e:#}"));
    let p = s.browser.cdp.attach(&t.target_id).await.expect("attach to the tab");
    p.call("Page.enable", json!({})).await.expect("Page.enable");
    p
}

async fn presses(page: &CdpSession) -> Value {
    page.evaluate("document.body.dataset.presses || '0'").await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flows_replay_with_every_step_checked_on_the_live_page() {
    let mut s = Stack::start().await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let origin = s.server.origin();
    let base = |site: &str| format!("{origin}/{site}/");

    // ---- the purchase, recorded on /flowshop/, on the re-laid-out copy
    // with new parameters: every element found by role and name.
    let relaid = base("flowshop-relaid");
    // (`purchase(&relaid)` is the recording with its URLs rewritten.)
    import(&s, &purchase(&relaid), "purchase-relaid");
    s.mcp.ok("browser_tabs", json!({ "action": "new" })).await;
    let run = s.mcp.call("flow_run", json!({ "name": "purchase-relaid", "params": new_params() }));
    let person = async {
        // Submitting the address form and placing the order are high risk.
        let (win, first) = next_request(&human, None).await;
        assert!(first.text.contains("Continue to review"), "{}", first.text);
        human.approve(&win, first.request).await.expect("approve the form");
        let (win, second) = next_request(&human, Some(first.request)).await;
        assert!(second.text.contains("Place order"), "{}", second.text);
        assert!(!second.text.contains("Recorded"), "not a changed target: {}", second.text);
        human.approve(&win, second.request).await.expect("approve the order");
    };
    let (r, ()) = tokio::join!(run, person);
    let r = r.expect("flow_run answers");
    assert!(!r.is_error(), "{}", r.text());
    let st = steps(&r);
    assert_eq!(st.len(), 16);
    for (i, step) in st.iter().enumerate() {
        assert!(step["outcome"] == "done" || step["outcome"] == "skipped", "step {}: {step}", i + 1);
        if i > 0 {
            assert_eq!(step["via"], "role and name", "step {} on the re-laid-out page: {step}", i + 1);
        }
    }
    assert_eq!(st[15]["risk"], "high");
    assert_eq!(st[15]["decided_by"], "human");
    let review = page_starting(&s, &format!("{relaid}review.html?")).await;
    assert_eq!(presses(&review).await, json!("1"), "the order was placed once");
    let summary = review.evaluate("document.getElementById('summary').textContent").await.unwrap();
    assert_eq!(summary, json!("Deliver to Ada Replay, Neue Gasse 5, 8010 Graz"));
    assert!(!r.text().contains("ada@replay.example"), "typed values stay out of the result");

    // ---- the button the recording pressed now reads "Delete account":
    // found only by its id, a changed target; the window shows both, the
    // person denies, nothing ran and the run stops there.
    let delete = base("flowshop-delete");
    import(&s, &order_only(&delete, "order-delete"), "order-delete");
    let run = s.mcp.call("flow_run", json!({ "name": "order-delete" }));
    let person = async {
        let (win, req) = next_request(&human, None).await;
        let both = win
            .evaluate(&format!(
                "(() => {{ const c = document.getElementById('request-{}'); const q = s => c.querySelector(s)?.textContent ?? ''; \
                 return [q('.changed .recorded'), q('.changed .live')]; }})()",
                req.request
            ))
            .await
            .unwrap();
        human.deny(&win, req.request).await.expect("deny");
        (req, both)
    };
    let (r, (req, both)) = tokio::join!(run, person);
    let r = r.expect("flow_run answers");
    assert!(
        both[0].as_str().unwrap().contains("Recorded")
            && both[0].as_str().unwrap().contains("button \u{201c}Place order\u{201d}"),
        "{both}"
    );
    assert!(
        both[1].as_str().unwrap().contains("button \u{201c}Delete account\u{201d}")
            && both[1].as_str().unwrap().contains("id \"place\""),
        "{both}"
    );
    assert!(req.text.to_lowercase().contains("risk: high"), "{}", req.text);
    assert!(r.is_error());
    assert_eq!(r.data()["error"]["code"], "APPROVAL_DENIED", "{}", r.raw);
    let st = steps(&r);
    assert_eq!(st[1]["changed"]["live"]["name"], "Delete account");
    let page = page_at(&s, &format!("{delete}review.html")).await;
    assert_eq!(presses(&page).await, json!("0"), "nothing ran");

    // ---- the recorded id now sits on a harmless control: still asked,
    // both shown; approved, it runs once.
    let changed = base("flowshop-changed");
    import(&s, &order_only(&changed, "order-changed"), "order-changed");
    let run = s.mcp.call("flow_run", json!({ "name": "order-changed" }));
    let person = async {
        let (win, req) = next_request(&human, Some(req.request)).await;
        let live = win
            .evaluate(&format!("document.querySelector('#request-{} .changed .live')?.textContent ?? ''", req.request))
            .await
            .unwrap();
        human.approve(&win, req.request).await.expect("approve");
        live
    };
    let (r, live) = tokio::join!(run, person);
    let r = r.expect("flow_run answers");
    assert!(live.as_str().unwrap().contains("Subscribe to newsletter"), "{live}");
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(steps(&r)[1]["decided_by"], "human");
    let page = page_at(&s, &format!("{changed}review.html")).await;
    assert_eq!(presses(&page).await, json!("1"));

    // ---- the button is gone: the run stops with what was expected and
    // what is there, within the bounded wait, asking nobody.
    let missing = base("flowshop-missing");
    import(&s, &order_only(&missing, "order-missing"), "order-missing");
    let started = std::time::Instant::now();
    let r = s.mcp.call("flow_run", json!({ "name": "order-missing" })).await.expect("flow_run answers");
    assert!(started.elapsed() < Duration::from_secs(15), "bounded: {:?}", started.elapsed());
    assert!(r.is_error());
    assert_eq!(r.data()["error"]["code"], "NOT_FOUND", "{}", r.raw);
    let message = steps(&r)[1]["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("no element on the page matches the recorded button \"Place order\""), "{message}");
    assert!(message.contains("id \"place\": 0"), "{message}");
    assert!(r.text().starts_with(shared::untrusted::NOTICE), "{}", r.text());

    // ---- flow_delete asks the person; approved, the flow is gone.
    let del = s.mcp.call("flow_delete", json!({ "name": "order-missing" }));
    let person = async {
        let (win, req) = next_request(&human, None).await;
        assert!(req.text.contains("delete the flow \"order-missing\""), "{}", req.text);
        human.approve(&win, req.request).await.expect("approve the deletion");
    };
    let (r, ()) = tokio::join!(del, person);
    assert!(!r.expect("flow_delete answers").is_error());
    let list = s.mcp.ok("flow_list", json!({})).await;
    let names: Vec<&str> = list.data()["flows"].as_array().unwrap().iter().filter_map(|f| f["name"].as_str()).collect();
    assert_eq!(names, ["order-changed", "order-delete", "purchase-relaid"]);
}
