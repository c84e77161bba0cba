//! Replaying flows end to end (docs/design.md, "Replaying flows"): a
//! flow recorded on the flow shop (`fixtures/sites/flowshop/`) is imported
//! with `chaperone flow import` — its URLs rewritten for each variant, as
//! the person would after `flow export` — and replayed with `flow_run`
//! through the real bridge, extension and Chromium. The test plays the
//! person with trusted clicks in the approval window, headed on Xvfb.
//!
//! One stack for the whole scenario.

use std::time::Duration;

use serde_json::{Value, json};
use tests::flowshop::{import, new_params, order_only, purchase};
use tests::{CdpSession, Human, ShownRequest, Stack};

use super::page_at;

/// The first request of the purchase comes after a dozen replayed steps,
/// each a locate and an action through the gate: with the whole suite's
/// browsers sharing 2 cores that alone can take tens of seconds.
const SHOW_WITHIN: Duration = Duration::from_secs(90);

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

/// Runs a tool call while the person answers (`tests::with_person`):
/// a call that ends while the person still waits for a request fails the
/// test with its result.
async fn with_person<P>(
    call: impl std::future::Future<Output = anyhow::Result<tests::ToolResult>>,
    person: impl std::future::Future<Output = P>,
) -> (tests::ToolResult, P) {
    tests::with_person(call, person, Duration::from_secs(3)).await
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
    let (r, ()) = with_person(run, person).await;
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
    let delete = base("flowshop-swapped");
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
    let (r, (req, both)) = with_person(run, person).await;
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
    let (r, live) = with_person(run, person).await;
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

    // ---- a Chrome DevTools Recorder file written by hand (the documented
    // `UserFlow` schema) imports and runs: `aria/` selectors become the
    // role and name, `{{email}}` a parameter.
    let shop = base("flowshop");
    let recorder = json!({
        "title": "Address from Recorder",
        "steps": [
            { "type": "setViewport", "width": 1200, "height": 800, "deviceScaleFactor": 1, "isMobile": false, "hasTouch": false, "isLandscape": true },
            { "type": "navigate", "url": format!("{shop}address.html") },
            { "type": "change", "value": "{{email}}", "selectors": [["aria/E-mail[role=\"textbox\"]"], ["#email"]] },
            { "type": "click", "selectors": [["aria/Express[role=\"radio\"]"], ["#express"]], "offsetX": 5, "offsetY": 5 },
            { "type": "click", "selectors": [["aria/Continue to review[role=\"button\"]"], ["#review"]], "offsetX": 5, "offsetY": 5 },
        ],
    });
    import(&s, &recorder, "from-recorder");
    let run = s.mcp.call("flow_run", json!({ "name": "from-recorder", "params": { "email": "rec@replay.example" } }));
    let person = async {
        let (win, req) = next_request(&human, None).await;
        assert!(req.text.contains("Continue to review"), "{}", req.text);
        human.approve(&win, req.request).await.expect("approve the form");
    };
    let (r, ()) = with_person(run, person).await;
    assert!(!r.is_error(), "{}", r.text());
    let st = steps(&r);
    assert_eq!(st.len(), 4, "setViewport is dropped: {st:?}");
    assert!(st[1..].iter().all(|s| s["via"] == "role and name"), "{st:?}");
    let review = page_starting(&s, &format!("{shop}review.html?")).await;
    let url = review.evaluate("location.search").await.unwrap();
    assert!(url.as_str().unwrap().contains("email=rec%40replay.example"), "{url}");
    assert!(url.as_str().unwrap().contains("speed=express"), "{url}");

    // ---- flow_delete asks the person; approved, the flow is gone.
    let del = s.mcp.call("flow_delete", json!({ "name": "order-missing" }));
    let person = async {
        let (win, req) = next_request(&human, None).await;
        assert!(req.text.contains("delete the flow \"order-missing\""), "{}", req.text);
        assert!(!req.text.contains("Element:"), "no page element to name: {}", req.text);
        human.approve(&win, req.request).await.expect("approve the deletion");
    };
    let (r, ()) = with_person(del, person).await;
    assert!(!r.is_error(), "{}", r.text());
    let list = s.mcp.ok("flow_list", json!({})).await;
    let names: Vec<&str> = list.data()["flows"].as_array().unwrap().iter().filter_map(|f| f["name"].as_str()).collect();
    assert_eq!(names, ["from-recorder", "order-changed", "order-delete", "purchase-relaid"]);
}

/// A challenge in the middle of a replay: a hand-written Recorder file
/// (the documented schema) shows a CAPTCHA and then presses Continue. The
/// Continue step hands the tab to the person; nothing is clicked until
/// they solved it and pressed Done; then the same step resumes and runs
/// once, and the run reports every step done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_mid_replay_waits_for_the_person_and_resumes_the_same_step() {
    let mut s = Stack::start().await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    human.popup_window().await.expect("open the popup in its own window");
    let url = s.url("/handoff/captcha.html");
    let recorder = json!({
        "title": "reading list",
        "steps": [
            { "type": "setViewport", "width": 1280, "height": 800, "deviceScaleFactor": 1, "isMobile": false,
              "hasTouch": false, "isLandscape": true },
            { "type": "navigate", "url": url },
            { "type": "click", "selectors": [["aria/Show the check[role=\"button\"]"], ["#show"]],
              "offsetX": 5, "offsetY": 5 },
            { "type": "click", "selectors": [["aria/Continue[role=\"button\"]"], ["#continue"]],
              "offsetX": 5, "offsetY": 5 }
        ]
    });
    import(&s, &recorder, "reading");
    s.mcp.ok("browser_tabs", json!({ "action": "new" })).await;
    let cdp = s.browser.cdp.clone();
    let run = s.mcp.call("flow_run", json!({ "name": "reading", "params": {} }));
    let person = async {
        let (id, card) = human.wait_handoff(SHOW_WITHIN, None).await.expect("the popup shows the hand-off");
        let t = cdp
            .wait_for_target(Duration::from_secs(10), |t| t.kind == "page" && t.url.starts_with(&url))
            .await
            .expect("the replayed tab");
        let page = cdp.attach(&t.target_id).await.expect("attach to the tab");
        assert_eq!(presses_continue(&page).await, json!("0"), "Continue ran on a CAPTCHA page");
        page.click_selector("#solve").await.expect("click I'm not a robot");
        human.hand_back(id, true).await.expect("press Done");
        (page, card)
    };
    let (r, (page, card)) = with_person(run, person).await;
    assert!(card.contains("Solve the CAPTCHA"), "the card says what is needed: {card}");
    assert!(!r.is_error(), "{}", r.text());
    let st = steps(&r);
    assert_eq!(st.len(), 3, "{}", r.text());
    assert!(st.iter().all(|step| step["outcome"] == "done"), "{}", r.text());
    assert_eq!(presses_continue(&page).await, json!("1"), "the resumed step ran exactly once");
}

async fn presses_continue(page: &CdpSession) -> Value {
    page.evaluate("document.body.dataset.continued || '0'").await.unwrap()
}
