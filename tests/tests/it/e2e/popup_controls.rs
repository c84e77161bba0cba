//! The person's popup (issue 4), played with trusted clicks in the
//! extension's own pages: Pause (actions `STOPPED` with the paused message
//! until the person resumes; nothing the agent or a non-popup page sends
//! resumes), the toolbar badge (pending count; red `YOLO`), answering from
//! the popup's own list, the chime switch (off persists in
//! `chrome.storage`), and the approval history (export as JSON, clear —
//! still empty after the popup is reopened).

use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Human, Mcp, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot, status_line};

const SHOW_WITHIN: Duration = Duration::from_secs(20);

async fn find_ref(mcp: &mut Mcp, tab: i64, role: &str, name: &str) -> String {
    let snap = snapshot(mcp, json!({ "tab": tab })).await.snapshot();
    ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in the snapshot:\n{snap}"))
}

/// Sends a runtime message from an extension page; the worker's reply.
async fn message_from(page: &CdpSession, msg: Value) -> Value {
    page.evaluate(&format!("chrome.runtime.sendMessage({msg})")).await.expect("chrome.runtime.sendMessage")
}

/// Waits until `expr` (evaluated in `page`) equals `want`.
async fn wait_eq(page: &CdpSession, expr: &str, want: Value) {
    let ok = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        (page.evaluate(expr).await.ok()? == want).then_some(())
    })
    .await;
    if ok.is_none() {
        panic!("{expr} never became {want}; it is {:?}", page.evaluate(expr).await);
    }
}

const STORED_HISTORY: &str = "chrome.storage.local.get('history').then(i => i.history || [])";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_popup_pauses_badges_chimes_and_keeps_the_history() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let popup = human.popup().await.expect("open the popup");
    assert_eq!(human.badge().await.unwrap().0, "", "a badge before anything happened");

    let mail = s.url("/mail/index.html");
    let mail_tab = new_tab(&mut s.mcp, &mail).await;
    let mail_page = page_at(&s, &mail).await;
    let draft = find_ref(&mut s.mcp, mail_tab, "button", "Save draft").await;
    let send = find_ref(&mut s.mcp, mail_tab, "button", "Send").await;

    // ---- Pause: every action is refused with STOPPED (the paused message)
    human.click_in_popup("pause").await.expect("press Pause");
    human.wait_popup_state("Paused").await.unwrap();
    human.wait_badge("II").await.expect("the badge shows the pause");
    for r in [&draft, &send] {
        let out = s.mcp.call("browser_click", json!({ "ref": r })).await.unwrap();
        assert_eq!(code(&out), "STOPPED", "an action ran while paused: {}", out.raw);
        assert!(out.text().contains("paused"), "the refusal says the person paused: {}", out.raw);
    }
    assert_eq!(status_line(&mail_page).await, "", "the page changed while paused");
    assert!(!human.approval_window_open().await, "a paused Send asked the person");
    let st = s.mcp.ok("browser_status", json!({})).await;
    assert_eq!(st.structured()["controls"]["paused"], json!(true), "{}", st.raw);

    // The agent cannot resume: no tool does it, and no argument of one.
    let tools = s.mcp.list_tools().await.unwrap();
    for t in &tools {
        let name = t["name"].as_str().unwrap_or_default();
        for word in ["resume", "control", "pause", "yolo", "approve"] {
            assert!(!name.contains(word), "a tool could change the person's controls: {name}");
        }
    }
    let r = s.mcp.call("browser_status", json!({ "resume": true })).await.unwrap();
    assert_eq!(code(&r), "INVALID_REQUEST", "{}", r.raw);
    // An extension page other than the popup (approval.html in a tab) cannot
    // resume, switch YOLO on or clear the history; the generic settings
    // path takes the chime only (anything else in it refuses the message).
    let approval_html = format!("chrome-extension://{}/approval.html", shared::EXTENSION_ID);
    let other = s.browser.cdp.new_page(&approval_html).await.expect("open approval.html in a tab");
    for msg in [
        json!({ "type": "control", "action": "resume" }),
        json!({ "type": "yolo", "on": true }),
        json!({ "type": "clear_history" }),
    ] {
        let reply = message_from(&other, msg.clone()).await;
        assert_eq!(reply["type"], json!("error"), "{msg} was accepted from approval.html: {reply}");
    }
    let reply =
        message_from(&other, json!({ "type": "settings", "settings": { "yolo": true, "paused": false } })).await;
    assert_eq!(reply["type"], json!("error"), "{reply}");
    let reply = message_from(&other, json!({ "type": "settings", "settings": { "chime": true } })).await;
    assert_eq!(reply["type"], json!("ok"), "{reply}");
    s.browser.cdp.close_target(&other.target_id).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(human.popup_control_state().await.unwrap().starts_with("Paused"), "something else resumed");
    let r = s.mcp.call("browser_click", json!({ "ref": draft })).await.unwrap();
    assert_eq!(code(&r), "STOPPED", "still paused: {}", r.raw);
    assert_eq!(human.badge().await.unwrap().0, "II", "YOLO was switched on by a settings message");

    // Only the popup resumes.
    human.click_in_popup("resume").await.expect("press Resume");
    human.wait_popup_state("Running").await.unwrap();
    human.wait_badge("").await.expect("the badge clears on resume");
    let r = s.mcp.ok("browser_click", json!({ "ref": draft })).await.expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("policy"), "{}", r.raw);
    assert_eq!(status_line(&mail_page).await, "Draft saved");

    // ---- Pause while a request waits: it stays for the person (unlike STOP)
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": send })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("Send asks");
        human.click_in_popup("pause").await.expect("press Pause");
        human.wait_popup_state("Paused").await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(human.shown_requests(&win).await, vec![req.request], "Pause dropped the waiting request");
        human.deny(&win, req.request).await.expect("click Deny");
    });
    assert_eq!(code(&r.unwrap()), "APPROVAL_DENIED");
    human.click_in_popup("resume").await.expect("press Resume");
    human.wait_popup_state("Running").await.unwrap();

    // ---- the badge counts waiting requests; the popup lists them and answers them
    let account = s.url("/settings/account/");
    let mut mcp2 = s.daemon.mcp().await.expect("a second MCP session");
    let acct_tab = new_tab(&mut mcp2, &account).await;
    let acct_page = page_at(&s, &account).await;
    let delete = find_ref(&mut mcp2, acct_tab, "button", "Delete account").await;
    let (sent, deleted, _) = tokio::join!(
        s.mcp.call("browser_click", json!({ "ref": send, "tab": mail_tab })),
        mcp2.call("browser_click", json!({ "ref": delete, "tab": acct_tab })),
        async {
            let color = human.wait_badge("2").await.expect("the badge counts two waiting requests");
            assert_eq!(color, vec![0xc2, 0x54, 0x00, 0xff], "the pending badge colour");
            let listed = tests::poll(SHOW_WITHIN, Duration::from_millis(100), || async {
                let ids = human.shown_requests(&popup).await;
                (ids.len() == 2).then_some(ids)
            })
            .await
            .expect("the popup lists both requests");
            let cards = popup.evaluate("document.getElementById('pending').textContent").await.unwrap();
            let cards = cards.as_str().unwrap_or_default().to_string();
            assert!(cards.contains("Send") && cards.contains("Delete account"), "{cards}");
            // Each card names the agent that asked (both sessions here are
            // the test's client).
            assert_eq!(cards.matches("Asked by: chaperone-e2e").count(), 2, "{cards}");
            // The state is published again for other reasons (here the
            // chime, switched off and on with the person's clicks): the
            // cards stay the same elements, since one replaced between
            // press and release loses the person's click.
            let mark =
                "(document.querySelectorAll('#pending section.request').forEach(c => { c.chaperoneKept = true; }), 1)";
            popup.evaluate(mark).await.expect("mark the cards");
            for on in [false, true] {
                human.click_in_popup("chime").await.expect("switch the chime");
                wait_eq(&popup, "chrome.storage.session.get('gate').then(g => g.gate.chime)", json!(on)).await;
            }
            // The popup hears the last change after the worker stored it.
            tokio::time::sleep(Duration::from_millis(500)).await;
            let kept = popup
                .evaluate(
                    "[...document.querySelectorAll('#pending section.request')].map(c => c.chaperoneKept === true)",
                )
                .await
                .unwrap();
            assert_eq!(kept, json!([true, true]), "the cards were drawn again though the list did not change");
            // Deny "Send" and approve "Delete account", from the popup.
            let id_of = |name: &str| {
                let name = serde_json::to_string(name).unwrap();
                format!(
                    "[...document.querySelectorAll('#pending section.request')]\
                     .find(c => c.textContent.includes({name})).dataset.request"
                )
            };
            let send_id = popup.evaluate(&id_of("Send")).await.unwrap();
            let delete_id = popup.evaluate(&id_of("Delete account")).await.unwrap();
            let (send_id, delete_id) = (send_id.as_str().unwrap().to_string(), delete_id.as_str().unwrap().to_string());
            assert!(listed.iter().any(|i| i.to_string() == send_id), "{listed:?}");
            popup.click_selector(&format!("#pending #deny-{send_id}")).await.expect("Deny in the popup");
            human.wait_badge("1").await.expect("one request left");
            // The list is drawn again without the denied card: click once
            // it has settled, not on where the button was before.
            tests::poll(SHOW_WITHIN, Duration::from_millis(100), || async {
                (human.shown_requests(&popup).await.len() == 1).then_some(())
            })
            .await
            .expect("the popup lists the one request left");
            popup.click_selector(&format!("#pending #approve-{delete_id}")).await.expect("Approve in the popup");
            human.wait_badge("").await.expect("nothing waits");
        }
    );
    let sent = sent.unwrap();
    assert_eq!(code(&sent), "APPROVAL_DENIED", "{}", sent.raw);
    let deleted = deleted.unwrap().expect_untrusted();
    assert_eq!(deleted.data()["decided_by"], json!("human"), "{}", deleted.raw);
    assert_eq!(status_line(&acct_page).await, "Account deleted (1)");
    assert_eq!(mail_page.evaluate("document.body.dataset.sent || '0'").await.unwrap(), json!("0"));
    wait_eq(&popup, "document.querySelectorAll('#pending section.request').length", json!(0)).await;

    // ---- YOLO: red "YOLO" badge while on, gone when off
    human.click_in_popup("yolo").await.expect("switch YOLO on");
    let color = human.wait_badge("YOLO").await.expect("the YOLO badge");
    assert_eq!(color, vec![0xd0, 0x00, 0x00, 0xff], "the YOLO badge is red");
    let title = popup.evaluate("chrome.action.getTitle({})").await.unwrap();
    assert!(title.as_str().unwrap_or_default().contains("YOLO"), "the toolbar title: {title}");
    human.click_in_popup("yolo").await.expect("switch YOLO off");
    human.wait_badge("").await.expect("the YOLO badge goes away");

    // ---- the chime switch: on by default, off persists
    assert_eq!(popup.evaluate("document.getElementById('chime').checked").await.unwrap(), json!(true));
    human.click_in_popup("chime").await.expect("switch the chime off");
    wait_eq(&popup, "chrome.storage.local.get('controls').then(i => i.controls.chime)", json!(false)).await;
    let popup = human.reopen_popup().await.expect("reopen the popup");
    wait_eq(&popup, "document.getElementById('chime').checked", json!(false)).await;
    let state = message_from(&popup, json!({ "type": "state" })).await;
    assert_eq!(state["chime"], json!(false), "the approval window would still chime: {state}");

    // ---- the history: export as JSON (text and download) equals what is stored
    let stored = popup.evaluate(STORED_HISTORY).await.unwrap();
    let decisions: Vec<&str> = stored.as_array().unwrap().iter().filter_map(|h| h["decision"].as_str()).collect();
    assert_eq!(decisions, ["denied", "denied", "approved"], "{stored:#}");
    wait_eq(&popup, "document.getElementById('history-count').textContent", json!("3 entries")).await;
    wait_eq(&popup, "document.querySelectorAll('#history-rows tr').length", json!(3)).await;
    let downloads = tests::temp_dir("downloads");
    s.browser
        .cdp
        .call(
            "Browser.setDownloadBehavior",
            json!({ "behavior": "allow", "downloadPath": downloads.path().to_str().unwrap() }),
        )
        .await
        .expect("allow downloads");
    human.click_in_popup("export").await.expect("press Export JSON");
    wait_eq(&popup, "document.getElementById('history-json').hidden", json!(false)).await;
    let text = popup.evaluate("document.getElementById('history-json').value").await.unwrap();
    let exported: Value = serde_json::from_str(text.as_str().unwrap_or_default()).expect("the export is JSON");
    assert_eq!(exported, stored, "the export differs from the stored history");
    for h in exported.as_array().unwrap() {
        for key in ["time", "summary", "risk", "decision", "url"] {
            assert!(h[key].is_string(), "an exported entry without {key}: {h}");
        }
        assert!(!h["url"].as_str().unwrap().contains('?'), "a query string in the export: {h}");
    }
    let file = downloads.path().join("chaperone-approvals.json");
    let downloaded = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let bytes = std::fs::read(&file).ok()?;
        serde_json::from_slice::<Value>(&bytes).ok()
    })
    .await
    .unwrap_or_else(|| panic!("no download at {}", file.display()));
    assert_eq!(downloaded, stored, "the downloaded file differs from the stored history");

    // ---- Clear: empty now, after reopening, and a new decision starts afresh
    human.click_in_popup("clear-history").await.expect("press Clear");
    wait_eq(&popup, "document.getElementById('history-count').textContent", json!("0 entries")).await;
    assert_eq!(popup.evaluate("document.querySelectorAll('#history-rows tr').length").await.unwrap(), json!(0));
    assert_eq!(popup.evaluate(STORED_HISTORY).await.unwrap(), json!([]));
    let popup = human.reopen_popup().await.expect("reopen the popup");
    wait_eq(&popup, "document.getElementById('history-count').textContent", json!("0 entries")).await;
    assert_eq!(popup.evaluate(STORED_HISTORY).await.unwrap(), json!([]));
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": send, "tab": mail_tab })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("Send asks");
        human.deny(&win, req.request).await.expect("click Deny");
    });
    assert_eq!(code(&r.unwrap()), "APPROVAL_DENIED");
    wait_eq(&popup, "document.getElementById('history-count').textContent", json!("1 entries")).await;
    let after = popup.evaluate(STORED_HISTORY).await.unwrap();
    assert_eq!(after.as_array().map(Vec::len), Some(1), "the cleared history came back: {after:#}");
}
