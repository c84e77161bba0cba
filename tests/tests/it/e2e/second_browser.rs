//! One browser per bridge, end to end. A local program holding the
//! extension token (`tests::Rogue`) connects to `/ext` while the real
//! extension is connected: every attempt is refused with the
//! another-browser close code and gets no frame; `chaperone status` and the
//! popup show it; the agent's next action still reaches the real extension;
//! a secret fill the person approves crosses only the real socket, and only
//! after the approval, in the one `secret` frame. And the other way round:
//! when the intruder came first, the real extension's popup says it was
//! refused, and the extension takes over once the intruder is gone.

use std::time::Duration;

use serde_json::{Value, json};
use tests::ext_socket::{TO_BRIDGE, TO_EXTENSION};
use tests::leaks::{Needles, canary};
use tests::{Browser, Daemon, ExtFrames, Human, Rogue, Stack, poll, ref_of};

use super::{new_tab, page_at, snapshot};

const SECRET_NAME: &str = "REPORTS_API_TOKEN";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_browser_is_refused_shown_and_never_sees_a_secret() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let secret = canary();
    let origin = s.url("/").trim_end_matches('/').to_string();
    let set = s.daemon.cli(&["secret", "set", SECRET_NAME, "--site", &origin], &secret).unwrap();
    assert_eq!(set.code, 0, "{set:?}");
    let frames = ExtFrames::watch(&s.browser).await.expect("watch the extension's socket");
    let live = s.connected.browsers[0].connection;

    // ---- a second browser, again and again, while the extension is connected
    let rogue = Rogue::keep_trying(s.daemon.port(), s.daemon.home(), Duration::from_millis(300)).unwrap();
    poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        (!rogue.attempts().is_empty()).then_some(())
    })
    .await
    .expect("no rogue attempt ended");
    let first = &rogue.attempts()[0];
    assert_eq!(first.close_code, Some(shared::protocol::ANOTHER_BROWSER_CLOSE_CODE), "{first:?}");
    assert_eq!(first.close_reason.as_deref(), Some(shared::protocol::ANOTHER_BROWSER_CLOSE_REASON));
    assert!(first.frames.is_empty(), "the second browser got frames: {first:?}");

    // `chaperone status` lists one browser, the real one, and warns.
    let out = s.daemon.cli(&["status"], "").unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.matches("browser #").count(), 1, "{}", out.stdout);
    assert!(out.stdout.contains(&format!("browser #{live}: extension {}", shared::VERSION)), "{}", out.stdout);
    assert!(out.stdout.contains("second browser connection(s) refused"), "{}", out.stdout);
    assert!(out.stdout.contains("6.6.6-rogue"), "{}", out.stdout);
    let st = s.daemon.status().await.unwrap();
    assert!(st.refused.total >= 1, "{st:?}");
    assert_eq!(st.browsers.iter().map(|b| b.connection).collect::<Vec<_>>(), [live]);

    // The popup of the real extension tells the person.
    let warning = human
        .wait_popup_refusal("A second browser tried to connect", Duration::from_secs(10))
        .await
        .expect("the popup shows the refusal");
    assert!(warning.contains("was refused"), "{warning}");
    let clock = regex_like_clock(&warning);
    assert!(clock, "the warning gives the time: {warning}");

    // ---- the agent's next action still reaches the real extension
    let api = s.url("/settings/api/");
    new_tab(&mut s.mcp, &api).await;
    let page = page_at(&s, &api).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let token = ref_of(&snap, "textbox", "API token").unwrap_or_else(|| panic!("no API token field:\n{snap}"));

    // ---- a secret fill the person approves
    let needles = Needles::for_secret(&secret);
    let carries = |p: &str| !needles.find("", p.as_bytes()).is_empty();
    let typed = json!({ "ref": token, "text": { "secret": SECRET_NAME } });
    let (r, shown) = tokio::join!(s.mcp.call("browser_type", typed), async {
        let (win, req) = human.next_request(Duration::from_secs(20)).await.expect("the fill asks the person");
        // While the person decides: the Act is there, the value is not.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let so_far = frames.so_far();
        let acts: Vec<Value> = so_far
            .iter()
            .filter(|(d, _)| d == TO_EXTENSION)
            .filter_map(|(_, p)| serde_json::from_str::<Value>(p).ok())
            .filter(|f| f["command"]["cmd"] == "act")
            .collect();
        assert_eq!(acts.last().map(|a| a["command"]["action"]["kind"].clone()), Some(json!("type_secret")));
        assert!(!so_far.iter().any(|(_, p)| carries(p)), "the value crossed before the approval");
        assert!(
            !so_far.iter().any(|(d, p)| d == TO_BRIDGE && p.contains("secret_request")),
            "the extension asked for the value before the approval"
        );
        assert_eq!(page.evaluate("document.getElementById('api_token').value").await.unwrap(), json!(""));
        human.approve(&win, req.request).await.expect("click Approve");
        req
    });
    let r = r.expect("browser_type").expect_ok("the approved fill").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert!(!shown.text.contains(&secret), "the card shows the value: {}", shown.text);
    assert_eq!(page.evaluate("document.getElementById('api_token').value").await.unwrap(), json!(secret));

    // ---- both sides of the socket
    let attempts = rogue.stop().await;
    let frames = frames.finish().await;
    assert!(attempts.len() >= 3, "the second browser kept trying during the fill: {} attempts", attempts.len());
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!(a.close_code, Some(shared::protocol::ANOTHER_BROWSER_CLOSE_CODE), "attempt {i}: {a:?}");
        assert!(a.frames.is_empty(), "attempt {i} got frames: {a:?}");
    }
    assert!(frames.iter().all(|(d, _)| d != "lost"), "CDP events were lost");
    let carrying: Vec<usize> = (0..frames.len()).filter(|&i| carries(&frames[i].1)).collect();
    assert_eq!(carrying.len(), 1, "the value crossed the real socket {} times", carrying.len());
    let value: Value = serde_json::from_str(&frames[carrying[0]].1).unwrap();
    assert_eq!((frames[carrying[0]].0.as_str(), value["type"].clone()), (TO_EXTENSION, json!("secret")));
    let asked = frames[..carrying[0]].iter().any(|(d, p)| {
        d == TO_BRIDGE && serde_json::from_str::<Value>(p).is_ok_and(|f| f["request"] == value["request"])
    });
    assert!(asked, "the value came without the extension's request");
    // The real extension was told of each refusal.
    let told = frames.iter().filter(|(d, p)| d == TO_EXTENSION && p.contains("second_browser_refused")).count();
    assert!(told >= attempts.len(), "told {told} times of {} refusals", attempts.len());
    assert!(s.daemon.status().await.unwrap().refused.total >= attempts.len() as u64);
    let warning = human.popup_refusal_warning().await.unwrap().unwrap_or_default();
    assert!(warning.contains("times"), "the popup counts the attempts: {warning}");
    // The refusals are in the daemon's log, without the token.
    let token = std::fs::read_to_string(s.daemon.home().join("extension-token")).unwrap();
    let log = s.daemon.output();
    assert!(log.contains("second browser refused"), "not logged");
    assert!(!log.contains(token.trim()), "the token is in the log");
}

/// Whether `text` holds a `HH:MM` time.
fn regex_like_clock(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(5).any(|w| {
        w[0].is_ascii_digit() && w[1].is_ascii_digit() && w[2] == b':' && w[3].is_ascii_digit() && w[4].is_ascii_digit()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_refused_because_another_came_first_says_so_and_takes_over_later() {
    let daemon = Daemon::start().await.expect("start the daemon");
    let intruder = Rogue::hold(daemon.port(), daemon.home(), "9.9.9-intruder").await.expect("the intruder connects");
    let browser = Browser::with_extension(daemon.home()).await.expect("start Chromium");
    let mut human = Human::new(&browser.cdp);

    // The real extension is refused, and its popup says so.
    let warning = human
        .wait_popup_refusal("This browser was refused by the bridge", Duration::from_secs(20))
        .await
        .expect("the popup shows that this browser was refused");
    assert!(warning.contains("another browser is connected"), "{warning}");
    let popup = human.popup().await.unwrap();
    let status = popup.evaluate("document.getElementById('status').textContent").await.unwrap();
    assert!(status.as_str().unwrap_or_default().contains("another browser is connected"), "{status}");
    let st = daemon.status().await.unwrap();
    assert_eq!(st.browsers.len(), 1, "{st:?}");
    assert_eq!(st.browsers[0].extension_version, "9.9.9-intruder");
    assert!(st.refused.recent.iter().any(|r| r.extension_version == shared::VERSION), "{st:?}");

    // The intruder goes away: the extension connects on its own.
    intruder.close().await;
    let back = poll(Duration::from_secs(45), Duration::from_millis(200), || async {
        let st = daemon.status().await.ok()?;
        st.browsers.iter().any(|b| b.extension_version == shared::VERSION).then_some(st)
    })
    .await
    .unwrap_or_else(|| panic!("the extension did not take over; daemon stderr:\n{}", daemon.stderr_tail(30)));
    assert_eq!(back.browsers.len(), 1, "{back:?}");
    let mut mcp = daemon.mcp().await.expect("an MCP session");
    let r = mcp.ok("browser_tabs", json!({ "action": "list" })).await;
    assert!(!r.is_error(), "{}", r.raw);

    // The person dismisses the warning.
    human.click_in_popup("dismiss-refusals").await.expect("click Dismiss");
    poll(Duration::from_secs(10), Duration::from_millis(100), || async { human_hidden(&popup).await.then_some(()) })
        .await
        .expect("the warning goes away");
}

async fn human_hidden(popup: &tests::CdpSession) -> bool {
    popup.evaluate("document.getElementById('refusals').hidden").await.ok() == Some(json!(true))
}
