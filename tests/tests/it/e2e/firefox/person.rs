//! The person's own part in Firefox (headed, on Xvfb): a challenge handed
//! to them and back with the popup's Done or Abort, a tab the person takes
//! over ("Take over this tab") and gives back with Done, and "Record me" with
//! the agent replaying what was recorded. The popup is the add-on's page
//! opened by the person in a window of its own (`FirefoxHuman::open_popup`:
//! WebDriver BiDi does not reach the add-on's pages) and answered with
//! real X keys; the page is used with BiDi's trusted input.

use std::time::Duration;

use serde_json::{Value, json};
use tests::bidi::Bidi;
use tests::firefox::FirefoxHuman;

use super::FxStack;
use crate::e2e::code;

async fn continued(bidi: &Bidi, page: &str) -> Value {
    bidi.evaluate(page, "document.body.dataset.continued || '0'").await.expect("read the page")
}

/// Polls `call` for `secs` seconds: it must still be waiting then (for
/// the person).
async fn still_waiting<F: std::future::Future>(call: &mut std::pin::Pin<&mut F>, secs: u64)
where
    F::Output: std::fmt::Debug,
{
    tokio::select! {
        r = call.as_mut() => panic!("the call did not wait for the person: {r:?}"),
        _ = tokio::time::sleep(Duration::from_secs(secs)) => {}
    }
}

/// Finishes `call` while the person, in a popup window of their own,
/// presses `keys` every half second until it returns (the popup draws its
/// state from the worker: a key before that decides nothing). The window
/// is closed after.
async fn in_popup<F: std::future::Future>(
    human: &FirefoxHuman,
    keys: &[&str],
    mut call: std::pin::Pin<&mut F>,
) -> F::Output {
    let popup = human.open_popup().await.expect("open the popup");
    let (out, _) = human.pressing(|| human.keys(&popup, keys).is_ok(), call.as_mut()).await;
    let _ = human.keys(&popup, &["ctrl+w"]);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_goes_to_the_person_and_the_agent_carries_on_after_done() {
    let mut s = FxStack::start(Some("human_timeout_secs = 60\n"), true).await;
    let human = s.firefox.human().expect("a headed Firefox has a screen");
    let (_, page) = s.agent_tab("/handoff/captcha.html").await;
    let show = s.ref_named("button", "Show the check").await;
    let cont = s.ref_named("button", "Continue").await;

    // Done after the person solved it: the click runs, once.
    s.mcp.ok("browser_click", json!({ "ref": show })).await;
    let bidi = &s.firefox.bidi;
    let r = {
        let mut call = std::pin::pin!(s.mcp.call("browser_click", json!({ "ref": cont })));
        still_waiting(&mut call, 3).await;
        assert_eq!(continued(bidi, &page).await, json!("0"), "the click ran on a CAPTCHA page");
        bidi.click_selector(&page, "#solve").await.expect("click I'm not a robot");
        let status = bidi.evaluate(&page, "document.getElementById('status').textContent").await.unwrap();
        assert_eq!(status, json!("Check passed"), "the person's click solved it");
        in_popup(&human, &["Return"], call.as_mut()).await.expect("browser_click").expect_untrusted()
    };
    assert_eq!(continued(bidi, &page).await, json!("1"), "the action ran exactly once after Done: {}", r.raw);
    // The status line changed: the agent is told so, not "no visible change".
    assert_eq!(r.data()["effect"], json!("page_changed"), "{}", r.raw);

    // Abort (the key after Done): nothing runs, the agent is told.
    s.mcp.ok("browser_click", json!({ "ref": show })).await;
    let r = {
        let mut call = std::pin::pin!(s.mcp.call("browser_click", json!({ "ref": cont })));
        still_waiting(&mut call, 2).await;
        in_popup(&human, &["Tab", "Return"], call.as_mut()).await.expect("browser_click")
    };
    assert_eq!(code(&r), "HUMAN_REQUIRED", "{}", r.raw);
    assert!(r.text().contains("aborted"), "{}", r.raw);
    assert_eq!(continued(&s.firefox.bidi, &page).await, json!("1"), "an aborted hand-off ran the click");

    // Take over (ten keys after STOP: Pause, the three site choices, YOLO,
    // the chime, Record me and its text switch, "Let … use this tab"): the
    // agent is refused while the person has the tab, and acts once they
    // press Done.
    bidi.click_selector(&page, "#solve").await.ok();
    let popup = human.open_popup().await.expect("open the popup");
    let mut keys = vec!["Tab"; 10];
    keys.push("Return");
    human.keys(&popup, &keys).expect("press Take over this tab");
    let mut refused = None;
    for _ in 0..30 {
        let r = s.mcp.call("browser_snapshot", json!({})).await.expect("browser_snapshot");
        if code(&r) == "HUMAN_REQUIRED" {
            refused = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let _ = human.keys(&popup, &["ctrl+w"]);
    let refused = refused.expect("the agent was not refused a tab the person took over");
    assert!(refused.text().contains("handed to the person"), "{}", refused.raw);
    let r = s.mcp.call("browser_click", json!({ "ref": cont })).await.expect("browser_click");
    assert_eq!(code(&r), "HUMAN_REQUIRED", "{}", r.raw);
    assert_eq!(continued(bidi, &page).await, json!("1"), "the agent acted on a tab the person took over");
    let r = in_popup(
        &human,
        &["Return"],
        std::pin::pin!(async {
            loop {
                let r = s.mcp.call("browser_click", json!({ "ref": cont })).await.expect("browser_click");
                if code(&r) != "HUMAN_REQUIRED" {
                    break r;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        }),
    )
    .await;
    assert!(!r.is_error(), "{}", r.raw);
    assert_eq!(continued(bidi, &page).await, json!("2"), "the click ran once after Done");
}

/// Waits (≤ 10 s) until the person's tab shows `path`, loaded; then a
/// moment for the add-on to arm the new page for recording.
async fn arrive(s: &FxStack, page: &str, path: &str) {
    let at = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let v = s.firefox.bidi.evaluate(page, "[location.pathname, document.readyState]").await.ok()?;
        (v[0].as_str()?.ends_with(path) && v[1] == "complete").then_some(())
    })
    .await;
    assert!(at.is_some(), "the person's tab did not reach {path}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_records_a_flow_and_the_agent_replays_it() {
    let mut s = FxStack::start(None, true).await;
    let human = s.firefox.human().expect("a headed Firefox has a screen");
    let shop = s.url("/flowshop/index.html");
    // The person's own tab: the one Firefox opened.
    let page = s.firefox.bidi.contexts().await.expect("contexts")[0].id.clone();
    s.firefox
        .bidi
        .call("browsingContext.navigate", json!({ "context": page, "url": shop, "wait": "complete" }))
        .await
        .expect("the person opens the shop");

    // Record me: the switch (seven keys after STOP), a name, Enter.
    let popup = human.open_popup().await.expect("open the popup");
    let mut keys = vec!["Tab"; 7];
    keys.push("space");
    human.keys(&popup, &keys).expect("switch Record me on");
    human.type_text(&popup, "fx-search").expect("name the flow");
    human.keys(&popup, &["Return"]).expect("start recording");
    let started = tests::poll(Duration::from_secs(10), Duration::from_millis(200), || async {
        s.daemon.stderr_tail(50).contains("recording started").then_some(())
    })
    .await;
    assert!(started.is_some(), "the recording did not start: {}", s.daemon.stderr_tail(30));
    human.keys(&popup, &["ctrl+w"]).expect("close the popup");

    // The person types the shop's address, searches, opens a result.
    let window = human
        .window_titled(|t| t.contains("Flow shop") || t.contains("Mozilla Firefox"))
        .await
        .expect("the person's window");
    human.keys(&window, &["ctrl+l"]).expect("the address bar");
    human.type_text(&window, &shop).expect("type the address");
    human.keys(&window, &["Return"]).expect("go");
    arrive(&s, &page, "/flowshop/index.html").await;
    let bidi = &s.firefox.bidi;
    bidi.click_selector(&page, "#q").await.expect("click the search box");
    bidi.type_text(&page, "teapot").await.expect("type");
    bidi.type_text(&page, "\u{E007}").await.expect("press Enter");
    arrive(&s, &page, "/flowshop/results.html").await;
    bidi.click_selector(&page, "#hit-teapot").await.expect("open the teapot");
    arrive(&s, &page, "/flowshop/product.html").await;

    // Record me off: the popup's keyboard is on the switch while recording.
    let popup = human.open_popup().await.expect("open the popup");
    human.keys(&popup, &["space"]).expect("switch Record me off");
    let flow = tests::poll(Duration::from_secs(10), Duration::from_millis(200), || async {
        let out = s.daemon.cli(&["flow", "show", "fx-search", "--json"], "").ok()?;
        (out.code == 0).then(|| serde_json::from_str::<Value>(&out.stdout).expect("flow show prints JSON"))
    })
    .await
    .unwrap_or_else(|| panic!("the flow was not saved: {}", s.daemon.stderr_tail(30)));
    human.keys(&popup, &["ctrl+w"]).expect("close the popup");
    let kinds: Vec<&str> =
        flow["steps"].as_array().unwrap().iter().map(|s| s["action"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["navigate", "fill", "press_key", "click"], "{flow:#}");
    assert_eq!(flow["steps"][0]["action"]["url"], json!(shop), "{flow:#}");
    assert_eq!(flow["steps"][1]["target"]["name"], json!("Search products"), "{flow:#}");
    assert_eq!(flow["steps"][3]["target"]["name"], json!("Blue teapot"), "{flow:#}");
    // "Also keep the text I type" was off: the search is a parameter.
    assert_eq!(flow["params"], json!([{ "kind": "text", "name": "search_products" }]), "{flow:#}");
    assert_eq!(flow["steps"][1]["action"]["value"], json!({ "param": "search_products" }), "{flow:#}");

    // The agent replays it in a tab of its own, with its own search.
    s.mcp.ok("browser_tabs", json!({ "action": "new" })).await;
    let r = s.mcp.ok("flow_run", json!({ "name": "fx-search", "params": { "search_products": "blue" } })).await;
    let steps = r.data()["steps"].as_array().unwrap_or_else(|| panic!("no steps: {}", r.raw)).clone();
    assert_eq!(steps.len(), 4, "{}", r.raw);
    assert!(steps.iter().all(|st| st["outcome"] == "done"), "{}", r.raw);
    let product = s.url("/flowshop/product.html?item=teapot");
    let agent = s.page(&product).await;
    assert_ne!(agent, page, "the replay ran in the person's tab");
    let query = s.eval(&agent, "history.length").await;
    assert!(query.as_u64().unwrap_or(0) >= 3, "the replay went through the search: {query}");
}
