//! What the person types and what a secret holds never reach the agent
//! (issue 47, SECURITY.md "The network capture holds what the person
//! types"), end to end through the bridge, the extension, Chromium
//! (headed on Xvfb, the person played with trusted CDP input) and SQLite:
//!
//! - a login hand-off: the person signs in on `fixtures/sites/withhold/
//!   login.html`, whose password field has a name no redaction knows
//!   (`pw`) and whose page sends the password on (a text body, base64,
//!   reversed, a header) and posts the form. During the hand-off the same
//!   session's network tools refuse the tab and list, read and export
//!   nothing of it; after it, nothing the tab sent while handed is there.
//!   Control: the site received the password, and a load after the
//!   hand-back is captured with its body.
//! - a card number the person types into the agent's tab (no hand-off):
//!   what the page sends after it is listed without its parts (the query
//!   of a pixel, a JSON body with the number in five spellings). Control:
//!   the page's request from before the fill keeps its body.
//! - a stored secret the agent typed: elements named or described by the
//!   field (`aria-labelledby`, `aria-describedby`, a `<label>` around
//!   another field) show it masked, also after the page makes the field
//!   an ordinary one. Control: the same relation to an ordinary field
//!   shows its value.
//!
//! Each test ends with a canary scan of every tool output, the export, the
//! daemon's logs and every file of the home (`tests::leaks`).

use std::time::Duration;

use serde_json::{Value, json};
use tests::leaks::{Hit, Needles, canary};
use tests::{Human, Stack, ref_of};

use super::{new_tab, snapshot};

const SHOW_WITHIN: Duration = Duration::from_secs(20);
const SECRET_NAME: &str = "WITHHOLD_TOKEN";

/// Every listed request of the session (all pages) for `args`.
async fn list(mcp: &mut tests::Mcp, outputs: &mut Vec<u8>, args: Value) -> Vec<Value> {
    let mut all = Vec::new();
    let mut page = 1;
    loop {
        let mut a = args.clone();
        a["page"] = json!(page);
        let r = mcp.ok("browser_network_requests", a).await.expect_untrusted();
        outputs.extend_from_slice(r.raw.to_string().as_bytes());
        let data = r.data().clone();
        all.extend(data["requests"].as_array().cloned().unwrap_or_default());
        if data["page"] == data["pages"] {
            return all;
        }
        page += 1;
    }
}

fn url_of(r: &Value) -> &str {
    r["url"].as_str().unwrap_or_default()
}

/// Waits (≤ 10 s) until the fixture server received a `POST` to `path`
/// holding `needle`.
async fn posted(s: &tests::FixtureServer, path: &str, needle: &str) -> bool {
    for _ in 0..100 {
        if s.posted().iter().any(|(p, b)| p.starts_with(path) && String::from_utf8_lossy(b).contains(needle)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// Stops the daemon and searches every sink for every form of `secrets`;
/// `control` must hold the first secret (the scan would notice a leak).
fn scan(s: &mut Stack, outputs: Vec<u8>, secrets: &[&str], control: &[u8]) {
    let home = s.daemon.home().to_path_buf();
    let sinks = s.stop_for_scan(outputs);
    let first = Needles::for_secret(secrets[0]);
    assert!(!first.find("control", control).is_empty(), "the scan would not notice a leak");
    let mut hits: Vec<Hit> = Vec::new();
    let mut scanned = 0;
    for secret in secrets {
        let n = Needles::for_secret(secret);
        for (place, bytes) in &sinks {
            hits.extend(n.find(place, bytes));
        }
        let (tree, files) = n.find_in_tree(&home);
        scanned = files.len();
        hits.extend(tree);
    }
    assert!(scanned >= 3, "the home held too few files to scan: {scanned}");
    assert!(hits.is_empty(), "what the person typed or a secret reached a sink: {hits:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_tab_is_the_persons_for_the_network_tools_too() {
    let mut s = Stack::start().await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    human.popup_window().await.expect("open the popup in its own window");
    let password = format!("Hunter2-PersonPassword-{}", canary());
    let mut outputs: Vec<u8> = Vec::new();

    let welcome = s.url("/withhold/welcome.html");
    let tab = new_tab(&mut s.mcp, &welcome).await;
    // What the tab sent before the hand-off (the page's own POST included).
    let mut before = Vec::new();
    for _ in 0..50 {
        before = list(&mut s.mcp, &mut outputs, json!({ "tab": tab })).await;
        if before.iter().any(|x| url_of(x).contains("/withhold/after")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(before.iter().any(|x| url_of(x).contains("/withhold/after")), "{before:?}");
    let before: Vec<Value> = before.iter().map(|x| x["id"].clone()).collect();
    let login = s.url("/withhold/login.html");
    let mut agent = s.mcp.same_session();
    let cdp = s.browser.cdp.clone();
    let server = &s.server;
    let (r, during) = tokio::join!(s.mcp.call("browser_navigate", json!({ "url": login })), async {
        let (id, text) = human.wait_handoff(SHOW_WITHIN, None).await.expect("the login hand-off is shown");
        assert!(text.contains("Sign in") || text.contains("login"), "{text}");
        let at = cdp.wait_for_target(SHOW_WITHIN, |t| t.url == login).await.expect("at the login page");
        let page = cdp.attach(&at.target_id).await.expect("attach");
        page.click_and_type("#user", "person").await.expect("type the user name");
        page.click_and_type("#pw", &password).await.expect("type the password");
        // Leaving the field: the page sends the password on.
        page.click_selector("#user").await.expect("leave the password field");
        assert!(posted(server, "/withhold/sink", &password).await, "the page did not send the password on");
        let mut out: Vec<u8> = Vec::new();
        // The same session, while the tab is the person's.
        let r = agent.call("browser_network_requests", json!({ "tab": tab })).await.unwrap();
        out.extend_from_slice(r.raw.to_string().as_bytes());
        let refused = r.error_code() == Some("HUMAN_REQUIRED");
        let listed = list(&mut agent, &mut out, json!({})).await;
        let r = agent.ok("browser_network_export", json!({ "name": "during" })).await;
        out.extend_from_slice(r.raw.to_string().as_bytes());
        let har = std::fs::read(r.data()["path"].as_str().unwrap_or_default()).unwrap_or_default();
        out.extend_from_slice(&har);
        // The form's own POST, then Done on the next page.
        page.click_selector("#go").await.expect("sign in");
        cdp.wait_for_target(SHOW_WITHIN, |t| t.url == welcome && t.kind == "page").await.expect("signed in");
        human.hand_back(id, true).await.expect("Done");
        (refused, listed, out, har)
    });
    let (refused, during_list, during_out, har) = during;
    outputs.extend_from_slice(&during_out);
    let r = r.expect("browser_navigate");
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(!r.is_error(), "the navigation did not carry on after Done: {}", r.raw);
    assert!(refused, "browser_network_requests of the handed tab was not refused");
    assert!(
        during_list.iter().all(|x| !url_of(x).contains("/withhold/")
            || url_of(x).ends_with("/withhold/welcome.html") && x["method"] == "GET"),
        "requests of the handed tab were listed during the hand-off: {during_list:#?}"
    );
    assert!(!String::from_utf8_lossy(&har).contains("/withhold/sink"), "the export held the handed tab's request");

    // After the hand-off: nothing the tab sent while handed.
    let after = list(&mut s.mcp, &mut outputs, json!({ "tab": tab })).await;
    for x in &after {
        let u = url_of(x);
        // The agent's own load of the login page came before the hand-off.
        let agents_load = u.ends_with("/withhold/login.html") && x["method"] == "GET";
        assert!(
            (before.contains(&x["id"]) || agents_load) && !u.contains("/withhold/sink"),
            "a request the tab sent while it was handed is listed: {x}"
        );
    }
    // Control: a load after the hand-back is captured, with its body.
    s.mcp.ok("browser_navigate", json!({ "url": format!("{welcome}?again=1") })).await;
    let mut again = Vec::new();
    for _ in 0..50 {
        again = list(&mut s.mcp, &mut outputs, json!({ "filter": "/withhold/after" })).await;
        again.retain(|x| !before.contains(&x["id"]));
        if !again.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(again.len(), 1, "the page loaded after the hand-back is not captured: {again:?}");
    let r = s.mcp.ok("browser_network_request", json!({ "id": again[0]["id"], "part": "request-body" })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(r.text().contains("loaded=1"), "{}", r.text());
    let r = s.mcp.ok("browser_network_export", json!({ "name": "after", "tab": tab })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());

    let control: Vec<u8> = s.server.posted().iter().flat_map(|(_, b)| b.clone()).collect();
    scan(&mut s, outputs, &[&password], &control);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_page_sends_after_the_person_fills_a_card_is_listed_without_its_parts() {
    let mut s = Stack::start().await.expect("start the stack");
    let card = format!("4929-{}", canary());
    let mut outputs: Vec<u8> = Vec::new();
    let checkout = s.url("/withhold/checkout.html");
    let tab = new_tab(&mut s.mcp, &checkout).await;
    let snap = snapshot(&mut s.mcp, json!({})).await;
    outputs.extend_from_slice(snap.raw.to_string().as_bytes());
    // Control: the page's request from before the fill, with its body.
    let mut basket = Vec::new();
    for _ in 0..50 {
        basket = list(&mut s.mcp, &mut outputs, json!({ "filter": "/withhold/basket" })).await;
        if !basket.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(basket.len(), 1, "{basket:?}");
    assert!(basket[0]["withheld"].is_null(), "{basket:?}");

    let at = s.browser.cdp.wait_for_target(SHOW_WITHIN, |t| t.url == checkout).await.expect("the agent's tab");
    let page = s.browser.cdp.attach(&at.target_id).await.expect("attach");
    page.click_and_type("#cc", &card).await.expect("the person types the card number");
    page.click_selector("#msg").await.expect("leave the card field");
    assert!(posted(&s.server, "/withhold/track", &card).await, "the page did not send the number on");

    let mut track = Vec::new();
    let mut pixel = Vec::new();
    for _ in 0..50 {
        track = list(&mut s.mcp, &mut outputs, json!({ "filter": "/withhold/track" })).await;
        pixel = list(&mut s.mcp, &mut outputs, json!({ "filter": "pixel.gif", "types": ["static"] })).await;
        if !track.is_empty() && !pixel.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(track.len(), 1, "the page's request after the fill is not listed: {track:?}");
    assert!(track[0]["withheld"].as_str().is_some_and(|w| w.contains("withheld")), "{track:?}");
    assert_eq!(pixel.len(), 1, "{pixel:?}");
    assert!(!url_of(&pixel[0]).contains('?'), "the pixel's query was kept: {pixel:?}");
    for part in ["request-body", "request-headers", "response-headers"] {
        let r = s.mcp.ok("browser_network_request", json!({ "id": track[0]["id"], "part": part })).await;
        outputs.extend_from_slice(r.raw.to_string().as_bytes());
        assert!(r.text().contains("parts withheld"), "{part}: {}", r.text());
    }
    let r = s.mcp.ok("browser_network_request", json!({ "id": basket[0]["id"], "part": "request-body" })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(r.text().contains("basket=3 items"), "the request before the fill lost its body: {}", r.text());
    let r = s.mcp.ok("browser_network_export", json!({ "name": "card", "tab": tab })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(r.data()["entries"].as_u64().unwrap_or(0) >= 3, "{}", r.raw);

    let control: Vec<u8> = s.server.posted().iter().flat_map(|(_, b)| b.clone()).collect();
    scan(&mut s, outputs, &[&card], &control);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_secret_never_names_another_element() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let secret = canary();
    let set = s.daemon.cli(&["secret", "set", SECRET_NAME], &format!("{secret}\n")).unwrap();
    assert_eq!(set.code, 0, "secret set: {set:?}");
    let mut outputs: Vec<u8> = Vec::new();
    let url = s.url("/withhold/names.html");
    new_tab(&mut s.mcp, &url).await;
    let snap = snapshot(&mut s.mcp, json!({})).await;
    let text = snap.snapshot();
    // Control: a relation to an ordinary field names with its value.
    assert!(text.contains("button \"Blue-Heron-Control\""), "aria-labelledby to a field is not read:\n{text}");
    let field = ref_of(&text, "textbox", "API token").unwrap_or_else(|| panic!("no API token field:\n{text}"));
    let fill = json!({ "fields": [ { "ref": field, "value": { "secret": SECRET_NAME } } ] });
    let (r, _) = human.approving(async { s.mcp.call("browser_fill_form", fill).await.unwrap() }).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    r.expect_ok("fill the secret");
    // The person's clicks move the focus on: on `blur` the page makes the
    // field an ordinary one and copies the value into another.
    let at = s.browser.cdp.wait_for_target(SHOW_WITHIN, |t| t.url == url).await.expect("the agent's tab");
    let page = s.browser.cdp.attach(&at.target_id).await.expect("attach");
    page.click_selector("#tok").await.expect("into the token field");
    page.click_selector("#plain").await.expect("leave the token field");
    let typed = page
        .evaluate("document.getElementById('tok').type + ' ' + (document.getElementById('tok').value.length > 0)")
        .await
        .unwrap();
    assert_eq!(typed, json!("text true"), "the page did not make the filled field ordinary");
    for args in [json!({}), json!({ "interactive_only": true })] {
        let r = s.mcp.call("browser_snapshot", args.clone()).await.unwrap();
        outputs.extend_from_slice(r.raw.to_string().as_bytes());
        let t = r.text();
        assert!(!r.is_error(), "{}", r.raw);
        assert!(t.contains("Blue-Heron-Control"), "{args}: the control is gone:\n{t}");
        assert!(t.contains("••••"), "{args}: the filled field is not shown masked:\n{t}");
    }
    let r = s.mcp.call("browser_extract_text", json!({})).await.unwrap();
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    // Control: the page holds the secret (what a leak would show).
    let control = page.evaluate("document.getElementById('tok3').value").await.unwrap().to_string().into_bytes();
    scan(&mut s, outputs, &[&secret], &control);
}
