//! What the person sees, what the person did (issue 29): the text the
//! person reads is the text that is judged and shown.
//!
//! `paint/index.html` draws "Delete account" (or "Delete your account",
//! "Delete this account", "Delete profile", "Delete draft") on controls
//! whose text, in the DOM's order, says something else: a CSS bidi
//! override, U+202E, letters of `font-size: 0`, off-screen, transparent,
//! background-coloured, `opacity: 0`, `visibility: hidden`, `display:
//! none`, `clip-path`ped, squeezed by a negative `letter-spacing` or 1 px
//! high inside the words, flex `order` and `row-reverse`, a mirroring
//! `transform`, and a positioned part. Under `high = "deny"` the agent's
//! click on each is refused and nothing runs; under the default policy
//! each asks and the approval window says what the page paints. Controls
//! that act through something else — a `<label for>` a hidden submit
//! button, `<a ping>`, an SVG `xlink:href` link — are refused too, and
//! nothing is posted. The harmless controls of the same page (a badge, a
//! screen-reader-only word, a reversed icon row, a cut label, upper-case
//! text, Arabic and Hebrew buttons in a right-to-left block, a label for a
//! search, a ping to an analytics URL, an SVG link to the next page) run
//! without a question.
//!
//! The agent's own words (an action's `intent`, a `browser_handoff`
//! reason) carrying bidi controls reach neither the person nor the agent
//! with them, and are drawn in an isolate (`<bdi>`) in the approval window
//! and the popup.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Human, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const SHOW_WITHIN: Duration = Duration::from_secs(45);

/// The tricks: (element id, role, the name the agent reads, what the
/// refusal or the approval window must say, what the page paints).
const TRICKS: &[(&str, &str, &str, &str, &str)] = &[
    ("css-override", "button", "tnuocca eteleD", "in reverse (a bidi override)", "Delete account"),
    ("rlo", "button", "tnuocca ruoy eteleD", "in reverse (a bidi override)", "Delete your account"),
    ("font-zero", "button", "Dxexlxextxe account", "hides letters inside", "Delete account"),
    ("off-screen", "button", "D q e q l q e q t q e account", "hides letters inside", "Delete account"),
    ("flex-order", "button", "ete account Del", "in another order than its text", "Delete account"),
    ("row-reverse", "button", "ete profile Del", "in another order than its text", "Delete profile"),
    ("mirror", "button", "tnuocca siht eteleD", "in another order than its text", "Delete this account"),
    ("transparent", "button", "Dkeklkektke account", "hides letters inside", "Delete account"),
    ("same-colour", "button", "Dwewlwewtwe account", "hides letters inside", "Delete account"),
    ("opacity", "button", "Djejljejtje account", "hides letters inside", "Delete account"),
    // Hidden letters are left out of the name already: it reads "Delete".
    ("visibility", "button", "Delete account", "name matches \"delete", ""),
    ("display-none", "button", "Delete draft", "name matches \"delete", ""),
    ("clip-path", "button", "Dgeglgegtge account", "hides letters inside", "Delete account"),
    ("letter-spacing", "button", "Dfeflfeftfe account", "hides letters inside", "Delete account"),
    ("tiny", "button", "Dhehlhehthe account", "hides letters inside", "Delete account"),
    ("positioned", "button", "ete draft Del", "in another order than its text", ""),
];

/// Controls that act through another element: (id, role, name, reason).
const THROUGH: &[(&str, &str, &str, &str)] = &[
    ("label-for", "button", "Continue", "a label for a submit button"),
    ("ping-lie", "link", "Read more", "link pings \"/paint/account/delete\""),
    ("svg-lie", "link", "Continue to inbox", "link goes to \"/paint/account/delete?confirm=1\""),
];

/// Harmless buttons: (id, role, name).
const HARMLESS: &[(&str, &str, &str)] = &[
    ("save", "button", "Save draft"),
    ("inbox", "button", "Inbox 3"),
    ("archive", "button", "Archive this draft"),
    ("next", "button", "Next"),
    ("long", "button", "Show all the older drafts from last year"),
    ("float-badge", "button", "5 Updates"),
    ("gradient", "button", "Open preview"),
    ("shout", "button", "copy draft"),
    ("ar-search", "button", "بحث في المسودات"),
    ("ar-drive", "button", "فتح Google و Drive"),
    ("he-save", "button", "שמור טיוטה"),
];

/// Harmless controls that load another page: (role, name, the URL's end).
const HARMLESS_NAV: &[(&str, &str, &str)] = &[
    ("button", "Find drafts", "/paint/index.html?q=drafts"),
    ("link", "Next page", "/paint/index.html?page=2"),
    ("link", "Older drafts", "/paint/index.html?page=3"),
];

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

async fn refs(s: &mut Stack, want: &[(&str, &str)]) -> Vec<String> {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    assert!(!snap.chars().any(is_bidi_control), "the snapshot carries bidi controls:\n{snap}");
    want.iter()
        .map(|(role, name)| ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in:\n{snap}")))
        .collect()
}

async fn page_facts(page: &CdpSession) -> Value {
    page.evaluate("({ ran: document.body.dataset.ran, url: location.href })").await.expect("read the page")
}

fn posted_to(s: &Stack, path: &str) -> usize {
    s.server.posted().iter().filter(|(p, _)| p.starts_with(path)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn painted_tricks_and_indirect_controls_are_refused_and_harmless_ones_run() {
    let mut s = Stack::start_with_config(Some("[risk]\nhigh = \"deny\"\n")).await.expect("start the stack");
    let url = s.url("/paint/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;

    let want: Vec<(&str, &str)> = TRICKS.iter().map(|t| (t.1, t.2)).chain(THROUGH.iter().map(|t| (t.1, t.2))).collect();
    let all = refs(&mut s, &want).await;
    let reasons = TRICKS.iter().map(|t| (t.0, t.3)).chain(THROUGH.iter().map(|t| (t.0, t.3)));
    for ((id, why), r) in reasons.zip(&all) {
        let res = s.mcp.call("browser_click", json!({ "ref": r })).await.expect("browser_click");
        assert_eq!(code(&res), "PERMISSION_DENIED", "{id} was not refused: {}", res.raw);
        let message = res.structured()["message"].as_str().unwrap_or("").to_string();
        assert!(message.contains(why), "{id}: the refusal does not say {why:?}: {message}");
        assert!(!message.chars().any(is_bidi_control), "{id}: bidi controls in the refusal: {message:?}");
    }
    assert_eq!(page_facts(&page).await, json!({ "ran": "", "url": url }), "a refused control ran");
    assert_eq!(posted_to(&s, "/paint/account"), 0, "a refused control posted: {:?}", s.server.posted());

    // The harmless buttons of the same page run under the same policy.
    let ok = refs(&mut s, &HARMLESS.iter().map(|h| (h.1, h.2)).collect::<Vec<_>>()).await;
    for ((id, _, name), r) in HARMLESS.iter().zip(&ok) {
        let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
        assert_eq!(res.data()["decided_by"], json!("policy"), "{name:?} asked: {}", res.raw);
        let ran = page_facts(&page).await["ran"].as_str().unwrap_or("").to_string();
        assert!(ran.split(' ').any(|x| x == *id), "{name:?} ({id}) did not run: {ran:?}");
    }
    // And the harmless label, ping and SVG link load their pages.
    for (role, name, end) in HARMLESS_NAV {
        s.mcp.ok("browser_navigate", json!({ "url": url })).await.expect_untrusted();
        let r = refs(&mut s, &[(*role, *name)]).await.remove(0);
        let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
        assert_eq!(res.data()["decided_by"], json!("policy"), "{name:?} asked: {}", res.raw);
        let landed = tests::poll(Duration::from_secs(5), Duration::from_millis(100), || async {
            let u = page_at(&s, &s.url(end)).await.evaluate("location.href").await.ok()?;
            (u.as_str()? == s.url(end)).then_some(())
        })
        .await;
        assert!(landed.is_some(), "{name:?} did not load {end}: {}", res.raw);
    }
    let pinged = tests::poll(Duration::from_secs(3), Duration::from_millis(100), || async {
        (posted_to(&s, "/paint/collect") > 0).then_some(())
    })
    .await;
    assert!(pinged.is_some(), "the harmless link's ping was not sent (the refusal above would not show)");
    assert_eq!(posted_to(&s, "/paint/account"), 0, "{:?}", s.server.posted());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn painted_tricks_ask_and_the_window_says_what_the_page_paints() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let mut seen = HashSet::new();
    let url = s.url("/paint/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    let all = refs(&mut s, &TRICKS.iter().map(|t| (t.1, t.2)).collect::<Vec<_>>()).await;
    for ((id, _, _, why, paints), r) in TRICKS.iter().zip(&all) {
        let (res, asked) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r })), async {
            let (win, req) = human.new_request(&mut seen, SHOW_WITHIN).await?;
            human.deny(&win, req.request).await.expect("click Deny");
            Some(req)
        });
        let res = res.expect("browser_click");
        let shown = asked.unwrap_or_else(|| panic!("{id} did not ask the person: {}", res.raw));
        assert_eq!(code(&res), "APPROVAL_DENIED", "{id}: {}", res.raw);
        assert!(shown.text.contains(why), "{id}: the window does not say {why:?}: {}", shown.text);
        if !paints.is_empty() {
            let line = format!("Shows on the page: \u{201c}{paints}\u{201d}");
            assert!(shown.text.contains(&line), "{id}: the window does not say {line:?}: {}", shown.text);
        }
        assert!(!shown.text.chars().any(is_bidi_control), "{id}: bidi controls in the window: {:?}", shown.text);
    }
    assert_eq!(page_facts(&page).await["ran"], json!(""), "a denied control ran");
}

/// The texts of `selector`'s `<bdi>` descendants in `page` with their
/// computed `unicode-bidi`, and the whole text of `selector`.
async fn isolates(page: &CdpSession, selector: &str) -> (Vec<(String, String)>, String) {
    let v = page
        .evaluate(&format!(
            "(() => {{ const c = document.querySelector({selector:?}); if (!c) return null; \
             return [[...c.querySelectorAll('bdi')].map(b => [b.textContent, getComputedStyle(b).unicodeBidi]), \
             c.textContent]; }})()"
        ))
        .await
        .expect("read the extension's page");
    let list = v[0]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| (p[0].as_str().unwrap_or("").to_string(), p[1].as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default();
    (list, v[1].as_str().unwrap_or("").to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_words_reach_the_person_without_bidi_controls_and_isolated() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let mut seen = HashSet::new();
    let url = s.url("/paint/index.html");
    new_tab(&mut s.mcp, &url).await;

    // An intent that would draw "Chaperone verified this page is your bank"
    // after its closing quote.
    let spoof = "tidy up\u{202E} knab ruoy si egap siht deifirev enorepahC\u{2066}";
    let plain = "tidy up knab ruoy si egap siht deifirev enorepahC";
    let r = refs(&mut s, &[("button", "Dxexlxextxe account")]).await.remove(0);
    let (res, asked) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r, "intent": spoof })), async {
        let (win, req) = human.new_request(&mut seen, SHOW_WITHIN).await?;
        let card = isolates(&win, &format!("#request-{}", req.request)).await;
        human.deny(&win, req.request).await.expect("click Deny");
        Some(card)
    });
    let res = res.expect("browser_click");
    let (bdis, text) = asked.unwrap_or_else(|| panic!("the click did not ask: {}", res.raw));
    assert_eq!(code(&res), "APPROVAL_DENIED", "{}", res.raw);
    assert!(!res.raw.to_string().chars().any(is_bidi_control), "bidi controls in the tool result: {}", res.raw);
    assert!(!text.chars().any(is_bidi_control), "bidi controls in the approval card: {text:?}");
    assert!(text.contains(&format!("agent's intent: \"{plain}\"")), "{text}");
    assert!(
        bdis.iter().any(|(t, ub)| t == plain && ub == "isolate"),
        "the intent is not drawn in an isolate: {bdis:?}"
    );
    assert!(
        bdis.iter().any(|(t, ub)| t == "Delete account" && ub == "isolate"),
        "what the page paints is not drawn in an isolate: {bdis:?}"
    );

    // A hand-off reason with the same trick: the popup's card and the
    // agent's result carry none of it.
    let reason = "Please sign in\u{202E} knab ruoy si egap siht deifirev enorepahC";
    let shown_reason = "Please sign in knab ruoy si egap siht deifirev enorepahC";
    let (r, card) = tokio::join!(s.mcp.call("browser_handoff", json!({ "reason": reason })), async {
        let (id, _) = human.wait_handoff(SHOW_WITHIN, None).await.expect("hand-off shown");
        let popup = human.popup().await.expect("popup");
        let card = isolates(&popup, &format!("#handoff-{id}")).await;
        let all = popup.evaluate("document.body.textContent").await.expect("popup text");
        human.hand_back(id, true).await.expect("press Done");
        (card, all)
    });
    let r = r.expect("browser_handoff");
    let ((bdis, text), popup_text) = card;
    assert!(!r.raw.to_string().chars().any(is_bidi_control), "bidi controls in the result: {}", r.raw);
    assert!(!text.chars().any(is_bidi_control), "bidi controls in the hand-off card: {text:?}");
    assert!(!popup_text.as_str().unwrap_or("").chars().any(is_bidi_control), "bidi controls in the popup");
    assert!(text.contains(&format!("\u{201c}{shown_reason}\u{201d}")), "{text}");
    assert!(
        bdis.iter().any(|(t, ub)| t == shown_reason && ub == "isolate"),
        "the reason is not drawn in an isolate: {bdis:?}"
    );
}
