//! Secrets stay on their sites, end to end. The fixture server answers as
//! both `http://127.0.0.1:P` and `http://localhost:P` — two origins. With
//! YOLO on and a `[[sites]]` rule that allows every risk on localhost:
//!
//! - a secret bound to 127.0.0.1 is refused on localhost
//!   (`PERMISSION_DENIED`), nothing asked, nothing typed, its value never
//!   on the socket;
//! - a secret bound to localhost follows the policy there (allowed, no
//!   question), and one bound to 127.0.0.1 follows it there (high risk:
//!   YOLO answers, or the person when YOLO is off);
//! - a secret bound to no site asks the person even under YOLO and the
//!   allow rule, and the approval window says why.

use std::time::Duration;

use serde_json::json;
use tests::leaks::{Needles, canary};
use tests::{ExtFrames, Human, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const CONFIG: &str = "approval_timeout_secs = 60\n\n[[sites]]\norigin = \"http://localhost:*\"\nhigh = \"allow\"\n";

async fn token_ref(s: &mut Stack) -> String {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    ref_of(&snap, "textbox", "API token").unwrap_or_else(|| panic!("no API token field:\n{snap}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_typed_only_on_their_sites_and_unbound_ones_always_ask() {
    let mut s = Stack::start_with_config(Some(CONFIG)).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let ip_origin = s.url("/").trim_end_matches('/').to_string();
    let port = ip_origin.rsplit(':').next().unwrap().to_string();
    let (home_value, local_value, loose_value) = (canary(), canary(), canary());
    for (name, value, site) in [
        ("HOME_TOKEN", &home_value, Some(ip_origin.as_str())),
        ("LOCAL_TOKEN", &local_value, Some("http://localhost:*")),
        ("LOOSE_TOKEN", &loose_value, None),
    ] {
        let mut args = vec!["secret", "set", name];
        if let Some(site) = site {
            args.extend(["--site", site]);
        }
        let out = s.daemon.cli(&args, value).unwrap();
        assert_eq!(out.code, 0, "{out:?}");
    }
    let list = s.daemon.cli(&["secret", "list"], "").unwrap().stdout;
    assert!(list.contains(&format!("sites {ip_origin}")) && list.contains("no site (asks every time)"), "{list}");
    let frames = ExtFrames::watch(&s.browser).await.expect("watch the extension's socket");
    let home_needles = Needles::for_secret(&home_value);

    human.click_in_popup("yolo").await.expect("switch YOLO on");
    human.wait_badge("YOLO").await.expect("the YOLO badge");

    // ---- localhost: another origin than HOME_TOKEN's
    let local = format!("http://localhost:{port}/settings/api/");
    new_tab(&mut s.mcp, &local).await;
    let local_page = page_at(&s, &local).await;
    let token = token_ref(&mut s).await;
    let field = "document.getElementById('api_token').value";
    let r = s.mcp.call("browser_type", json!({ "ref": token, "text": { "secret": "HOME_TOKEN" } })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "a bound secret was typed on another origin: {}", r.raw);
    assert!(r.text().contains("HOME_TOKEN"), "{}", r.raw);
    assert_eq!(local_page.evaluate(field).await.unwrap(), json!(""));
    assert!(!human.approval_window_open().await, "the refusal asked the person");
    // In a form too (and the harmless field first is not typed either).
    let name = ref_of(&snapshot(&mut s.mcp, json!({})).await.snapshot(), "textbox", "Integration name").unwrap();
    let form = json!({ "fields": [ { "ref": name, "value": "Nightly" }, { "ref": token, "value": { "secret": "HOME_TOKEN" } } ] });
    let r = s.mcp.call("browser_fill_form", form).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    assert_eq!(local_page.evaluate("document.getElementById('integration').value").await.unwrap(), json!("Reports"));
    // Refused before anything was dispatched: not even its name reached
    // the extension, let alone its value.
    let so_far = frames.so_far();
    assert!(!so_far.iter().any(|(_, p)| !home_needles.find("", p.as_bytes()).is_empty()), "the value crossed");
    assert!(!so_far.iter().any(|(_, p)| p.contains("HOME_TOKEN")), "an act for the refused secret was sent");

    // A secret bound to localhost follows the policy there: allowed, no question.
    let r = s.mcp.call("browser_type", json!({ "ref": token, "text": { "secret": "LOCAL_TOKEN" } })).await.unwrap();
    let r = r.expect_ok("LOCAL_TOKEN on localhost").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("policy"), "{}", r.raw);
    assert_eq!(local_page.evaluate(field).await.unwrap(), json!(local_value));
    assert!(!human.approval_window_open().await);

    // A secret bound to no site asks, YOLO or not, allow rule or not.
    let typed = json!({ "ref": token, "text": { "secret": "LOOSE_TOKEN" } });
    let (r, shown) = tokio::join!(s.mcp.call("browser_type", typed), async {
        let (win, req) = human.next_request(Duration::from_secs(20)).await.expect("the unbound secret asks");
        human.approve(&win, req.request).await.expect("click Approve");
        req
    });
    let r = r.unwrap().expect_ok("LOOSE_TOKEN").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert!(shown.text.contains("the secret LOOSE_TOKEN is not bound to a site"), "the card says why: {}", shown.text);
    assert!(!shown.text.contains(&loose_value), "{}", shown.text);
    assert_eq!(local_page.evaluate(field).await.unwrap(), json!(loose_value));

    // ---- 127.0.0.1: HOME_TOKEN's own origin follows the policy (high risk
    // → confirm): YOLO answers it…
    let home = s.url("/settings/api/");
    s.mcp.ok("browser_navigate", json!({ "url": home })).await;
    let home_page = page_at(&s, &home).await;
    let token = token_ref(&mut s).await;
    let r = s.mcp.call("browser_type", json!({ "ref": token, "text": { "secret": "HOME_TOKEN" } })).await.unwrap();
    let r = r.expect_ok("HOME_TOKEN at home under YOLO").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("yolo"), "{}", r.raw);
    assert_eq!(home_page.evaluate(field).await.unwrap(), json!(home_value));
    // …and without YOLO the person does.
    human.click_in_popup("yolo").await.expect("switch YOLO off");
    human.wait_badge("").await.expect("the YOLO badge goes");
    home_page.evaluate("document.getElementById('api_token').value = ''; true").await.unwrap();
    let typed = json!({ "ref": token, "text": { "secret": "HOME_TOKEN" } });
    let (r, _) = tokio::join!(s.mcp.call("browser_type", typed), async {
        let (win, req) = human.next_request(Duration::from_secs(20)).await.expect("high risk asks without YOLO");
        assert!(!req.text.contains("not bound"), "a bound secret is not called unbound: {}", req.text);
        human.approve(&win, req.request).await.expect("click Approve");
    });
    let r = r.unwrap().expect_ok("HOME_TOKEN at home").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert_eq!(home_page.evaluate(field).await.unwrap(), json!(home_value));

    // Still refused on localhost with YOLO off.
    s.mcp.ok("browser_navigate", json!({ "url": local })).await;
    let token = token_ref(&mut s).await;
    let r = s.mcp.call("browser_type", json!({ "ref": token, "text": { "secret": "HOME_TOKEN" } })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);

    // The history: the unbound secret was approved by the person, not YOLO.
    let history = human.history().await.unwrap();
    let loose: Vec<&str> = history
        .iter()
        .filter(|h| h["summary"].as_str().is_some_and(|t| t.contains("LOOSE_TOKEN")))
        .filter_map(|h| h["decision"].as_str())
        .collect();
    assert_eq!(loose, ["approved"], "{history:?}");
    let frames = frames.finish().await;
    let carried = frames.iter().filter(|(_, p)| !home_needles.find("", p.as_bytes()).is_empty()).count();
    assert_eq!(carried, 2, "HOME_TOKEN crossed the socket once per fill at home, never elsewhere");
}
