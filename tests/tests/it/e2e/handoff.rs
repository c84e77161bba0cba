//! Hand-offs end to end (docs/design.md, "Hand-off to the person"): a
//! challenge stops an action before it is dispatched, the person gets the
//! tab and a card in the popup, and the agent's call carries on after a
//! checked Done. The test plays the person with trusted CDP clicks in the
//! page and in the popup (in a window of its own), headed on Xvfb.
//!
//! One stack for the whole scenario; `human_timeout_secs` is short so the
//! timeout case is quick.

use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Human, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot, status_line};

const HUMAN_TIMEOUT_SECS: u64 = 6;
const SHOW_WITHIN: Duration = Duration::from_secs(20);

async fn continued(page: &CdpSession) -> Value {
    page.evaluate("document.body.dataset.continued || '0'").await.unwrap()
}

async fn find_ref(s: &mut Stack, role: &str, name: &str) -> String {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in the snapshot:\n{snap}"))
}

/// The agent puts the CAPTCHA on the page (a low-risk click that runs).
async fn show_check(s: &mut Stack, page: &CdpSession) {
    let show = find_ref(s, "button", "Show the check").await;
    s.mcp.ok("browser_click", json!({ "ref": show })).await;
    let shown = page.evaluate("!!document.querySelector('.g-recaptcha')").await.unwrap();
    assert_eq!(shown, json!(true), "the check is on the page");
}

fn audit_rows(s: &Stack) -> Vec<Value> {
    let out = std::process::Command::new(tests::chaperone_bin())
        .args(["audit", "--json", "--home"])
        .arg(s.daemon.home())
        .output()
        .expect("run chaperone audit");
    assert!(out.status.success(), "chaperone audit: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("audit JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_takes_the_tab_and_the_agent_carries_on() {
    let config = format!("human_timeout_secs = {HUMAN_TIMEOUT_SECS}\n");
    let mut s = Stack::start_with_config(Some(&config)).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    human.popup_window().await.expect("open the popup in its own window");
    if std::env::var_os("HANDOFF_DEBUG").is_some() {
        let sw = s.browser.cdp.wait_for_target(SHOW_WITHIN, |t| t.kind == "service_worker").await.unwrap();
        let sws = s.browser.cdp.attach(&sw.target_id).await.unwrap();
        let mut ev = s.browser.cdp.events();
        sws.call("Runtime.enable", json!({})).await.unwrap();
        tokio::spawn(async move {
            while let Ok(e) = ev.recv().await {
                let m = e["method"].as_str().unwrap_or("");
                if m.starts_with("Runtime.console") || m.starts_with("Runtime.exception") {
                    eprintln!("SW: {}", e["params"].to_string().chars().take(600).collect::<String>());
                }
            }
        });
    }

    let url = s.url("/handoff/captcha.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    let cont = find_ref(&mut s, "button", "Continue").await;

    // ---- no stealth: after the extension has read the page, the page sees
    // the browser as it is (its own user agent, a native webdriver flag,
    // nothing added to navigator)
    let ua =
        s.browser.cdp.call("Browser.getVersion", json!({})).await.expect("Browser.getVersion")["userAgent"].clone();
    let seen = page
        .evaluate(
            "[navigator.userAgent, \
              String(Object.getOwnPropertyDescriptor(Navigator.prototype, 'webdriver').get).includes('[native code]'), \
              Object.getOwnPropertyNames(navigator).length, \
              String(Object.getOwnPropertyDescriptor(Navigator.prototype, 'userAgent').get).includes('[native code]')]",
        )
        .await
        .expect("read navigator");
    assert_eq!(seen, json!([ua, true, 0, true]), "the page sees a disguised browser");

    // ---- detected: nothing runs until the person solved it and pressed Done; then once
    show_check(&mut s, &page).await;
    let (r, card) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": cont })), async {
        let (id, text) = human.wait_handoff(SHOW_WITHIN, None).await.expect("the popup shows the hand-off");
        assert_eq!(continued(&page).await, json!("0"), "the click ran on a CAPTCHA page");
        // The person solves it in the page (a trusted click), then Done.
        page.click_selector("#solve").await.expect("click I'm not a robot");
        assert_eq!(status_line(&page).await, "Check passed");
        human.hand_back(id, true).await.expect("press Done");
        text
    });
    let r = r.expect("browser_click").expect_untrusted();
    assert_eq!(continued(&page).await, json!("1"), "the action ran exactly once after Done: {}", r.raw);
    // Its status line changed: the agent is told so, not "no visible change".
    assert_eq!(r.data()["effect"], json!("page_changed"), "{}", r.raw);
    assert!(card.contains("Solve the CAPTCHA"), "the card says what is needed: {card}");
    assert!(card.contains("127.0.0.1"), "the card names the site: {card}");
    assert!(card.contains("Done") && card.contains("Abort"), "{card}");

    // ---- Done while the CAPTCHA is still there: waits again; a second one gives up
    show_check(&mut s, &page).await;
    let (r, note) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": cont })), async {
        let (id, _) = human.wait_handoff(SHOW_WITHIN, None).await.expect("hand-off shown");
        human.hand_back(id, true).await.expect("press Done");
        let mut note = String::new();
        for _ in 0..50 {
            note = human.handoff_text(id).await.unwrap_or_default();
            if note.contains("still asks") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        human.hand_back(id, true).await.expect("press Done again");
        note
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "HUMAN_REQUIRED", "{}", r.raw);
    assert!(note.contains("The page still asks: Solve the CAPTCHA"), "the card tells the person why: {note}");
    assert_eq!(continued(&page).await, json!("1"), "nothing ran");

    // ---- Abort
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": cont })), async {
        let (id, _) = human.wait_handoff(SHOW_WITHIN, None).await.expect("hand-off shown");
        human.hand_back(id, false).await.expect("press Abort");
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "HUMAN_REQUIRED", "{}", r.raw);
    assert!(r.text().contains("aborted"), "{}", r.raw);
    assert_eq!(continued(&page).await, json!("1"), "nothing ran");

    // ---- nobody comes: human_timeout_secs
    let started = std::time::Instant::now();
    let r = s.mcp.call("browser_click", json!({ "ref": cont })).await.expect("browser_click");
    assert_eq!(code(&r), "HUMAN_REQUIRED", "{}", r.raw);
    assert!(r.text().contains("in time"), "{}", r.raw);
    assert!(started.elapsed() >= Duration::from_secs(HUMAN_TIMEOUT_SECS - 1), "ended early: {:?}", started.elapsed());
    assert_eq!(continued(&page).await, json!("1"), "nothing ran");

    // ---- STOP ends the hand-off
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": cont })), async {
        human.wait_handoff(SHOW_WITHIN, None).await.expect("hand-off shown");
        human.click_in_popup("stop").await.expect("press STOP");
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "STOPPED", "{}", r.raw);
    human.click_in_popup("resume").await.expect("press Resume");
    human.wait_popup_state("Running").await.expect("running again");
    assert_eq!(continued(&page).await, json!("1"), "nothing ran");

    // ---- browser_handoff: the agent's words, waited_ms, the fresh header, progress, status
    page.click_selector("#solve").await.expect("the person clears the check");
    // The same session asks while its call waits (another session would
    // not see this tab at all).
    let mut other = s.mcp.same_session();
    let handoff = json!({
        "name": "browser_handoff",
        "arguments": { "reason": "Please choose a delivery slot" },
        "_meta": { "progressToken": "slot-1" },
    });
    let (r, (card, status)) = tokio::join!(s.mcp.request_raw("tools/call", handoff), async {
        let (id, text) = human.wait_handoff(SHOW_WITHIN, None).await.expect("hand-off shown");
        let status = other.ok("browser_status", json!({})).await;
        tokio::time::sleep(Duration::from_millis(2500)).await;
        human.hand_back(id, true).await.expect("press Done");
        (text, status)
    });
    let r = r.expect("browser_handoff");
    let result = &r["result"];
    assert_ne!(result["isError"], json!(true), "{r}");
    let data = &result["structuredContent"]["data"];
    assert_eq!(data["outcome"], json!("done"), "{r}");
    assert!(data["waited_ms"].as_u64().unwrap_or(0) >= 2000, "{r}");
    assert!(data["header"].as_str().unwrap_or("").contains("Page title: \"Reading list\""), "{r}");
    assert!(card.contains("\u{201c}Please choose a delivery slot\u{201d}"), "the agent's words in quotes: {card}");
    let st = status.text();
    assert!(st.contains("Tabs waiting for the person:") && st.contains("The agent asks for your help"), "{st}");
    assert_eq!(status.structured()["waitingForPerson"][0]["trigger"], json!("agent"), "{}", status.raw);
    let stream = String::from_utf8_lossy(s.mcp.received()).to_string();
    assert!(
        stream.contains("notifications/progress")
            && stream.contains("slot-1")
            && stream.contains("Waiting for the person"),
        "no progress notification while waiting"
    );

    // ---- Take over: the person's own hand-off; the agent's click is
    // refused while the person has the tab, and runs once they hand it back
    page.click_selector("#continue").await.ok(); // the person's own click, not the agent's
    let before = continued(&page).await;
    human.click_in_popup("take-over").await.expect("press Take over");
    let (id, text) = human.wait_handoff(SHOW_WITHIN, None).await.expect("take-over shown");
    assert!(text.contains("You took this tab over"), "{text}");
    let r = s.mcp.call("browser_click", json!({ "ref": cont })).await.expect("browser_click");
    assert_eq!(code(&r), "HUMAN_REQUIRED", "{}", r.raw);
    assert_eq!(continued(&page).await, before, "the agent acted on a tab the person took over");
    human.hand_back(id, true).await.expect("press Done");
    for _ in 0..100 {
        if human.handoff_text(id).await.unwrap_or_default().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.mcp.ok("browser_click", json!({ "ref": cont })).await.expect_untrusted();
    let after: i64 = continued(&page).await.as_str().unwrap().parse().unwrap();
    assert_eq!(after, before.as_str().unwrap().parse::<i64>().unwrap() + 1, "the click ran once after Done");

    // ---- a login through another site that comes back counts; Done on the other site does not
    let login = s.url("/handoff/login.html");
    let home = s.url("/handoff/home.html");
    let cdp = s.browser.cdp.clone();
    let (r, notes) = tokio::join!(s.mcp.call("browser_navigate", json!({ "url": login })), async {
        let (id, text) = human.wait_handoff(SHOW_WITHIN, None).await.expect("the login hand-off is shown");
        assert!(text.contains("Sign in"), "{text}");
        let at_login = cdp.wait_for_target(SHOW_WITHIN, |t| t.url == login).await.expect("at the login page");
        let login_page = cdp.attach(&at_login.target_id).await.expect("attach");
        login_page.click_selector("#idp").await.expect("go to the identity provider");
        let idp = cdp
            .wait_for_target(SHOW_WITHIN, |t| t.url.contains("localhost") && t.url.contains("/handoff/idp.html"))
            .await
            .expect("at the IdP");
        human.hand_back(id, true).await.expect("Done on the other site");
        let mut note = String::new();
        for _ in 0..50 {
            note = human.handoff_text(id).await.unwrap_or_default();
            if note.contains("not on") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let idp_page = cdp.attach(&idp.target_id).await.expect("attach");
        idp_page.click_selector("#back").await.expect("back to the site");
        cdp.wait_for_target(SHOW_WITHIN, |t| t.url == home).await.expect("back home");
        human.hand_back(id, true).await.expect("Done back on the site");
        note
    });
    let r = r.expect("browser_navigate").expect_untrusted();
    assert!(notes.contains("localhost") && notes.contains("127.0.0.1"), "the card said where the tab is: {notes}");
    assert_eq!(r.data()["tab"]["url"], json!(home), "the agent learns where the person left the tab: {}", r.raw);

    // ---- the audit has one row per hand-off, with trigger and outcome
    let rows = audit_rows(&s);
    let handoffs: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r["tool"] == json!("handoff"))
        .map(|r| (r["summary"].as_str().unwrap_or("").to_string(), r["outcome"].as_str().unwrap_or("").to_string()))
        .collect();
    let has = |summary: &str, outcome: &str| handoffs.iter().any(|(s, o)| s.contains(summary) && o == outcome);
    assert!(has("captcha (detected)", "done"), "{handoffs:?}");
    assert!(has("captcha (detected)", "still_there"), "{handoffs:?}");
    assert!(has("captcha (detected)", "abort"), "{handoffs:?}");
    assert!(has("captcha (detected)", "timeout"), "{handoffs:?}");
    assert!(has("captcha (detected)", "stop"), "{handoffs:?}");
    assert!(has("agent (agent)", "done"), "{handoffs:?}");
    assert!(has("person (person)", "done"), "{handoffs:?}");
    assert!(has("login (detected)", "done"), "{handoffs:?}");
    assert_eq!(handoffs.len(), 8, "one row per hand-off: {handoffs:?}");
}

/// No stealth in the extension itself: no permission that rewrites
/// requests or headers or drives the browser, `contentSettings` used for
/// automatic downloads only, and no script that touches `navigator`'s
/// identity.
#[test]
fn the_extension_cannot_disguise_the_browser() {
    let dir = tests::extension_dir();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).expect("manifest")).expect("JSON");
    let perms: Vec<&str> = manifest["permissions"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for banned in [
        "declarativeNetRequest",
        "declarativeNetRequestWithHostAccess",
        // `webRequest` alone only observes in MV3 (downloads use it to tell
        // which tab a response came from); blocking or rewriting needs this:
        "webRequestBlocking",
        "debugger",
        "proxy",
        "privacy",
    ] {
        assert!(!perms.contains(&banned), "the extension asks for {banned}: {perms:?}");
    }
    let mut scripts = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "js") {
                scripts.push(p);
            }
        }
    }
    assert!(scripts.len() >= 3, "no scripts found under {}", dir.display());
    for p in scripts {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for banned in ["navigator.webdriver", "defineProperty(navigator", "userAgentData", "__defineGetter__"] {
            assert!(!text.contains(banned), "{} contains {banned}", p.display());
        }
        // `contentSettings` is granted for one setting only: the automatic
        // downloads of the origins agent tabs show (SECURITY.md, "Extension
        // privileges"). JavaScript, cookies, images, plugins, camera… stay
        // the person's: every use in the built scripts names that setting.
        for (at, _) in text.match_indices("contentSettings") {
            let rest = &text[at + "contentSettings".len()..];
            assert!(
                rest.starts_with(".automaticDownloads"),
                "{} uses contentSettings for something else: contentSettings{}",
                p.display(),
                rest.chars().take(40).collect::<String>()
            );
        }
    }
}
