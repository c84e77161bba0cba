//! What the person sees is what runs (issue 16, items 1–3): controls whose
//! accessible name lies about what they show or do, links that act when
//! followed, and pages that swap a control while the person is asked about
//! it. Under the default policy every lie asks (and the approval window says
//! what the page shows and where the control goes); with `high = "deny"`
//! every lie is refused; the harmless controls of the same page run without
//! a question. A swap between the decision and the action is `STALE_REF`
//! with nothing sent. While an approval waits, the target is scrolled into
//! view and outlined by an overlay the page cannot read, and the approval
//! window sits beside it. The person is played with trusted clicks in the
//! extension's own window; the page's swaps are the page's own script.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use tests::{Browser, BrowserOptions, CdpSession, Daemon, FixtureServer, Human, ShownRequest, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const SHOW_WITHIN: Duration = Duration::from_secs(20);

/// The deceptive controls of `lies/index.html`: (role, accessible name,
/// element id, what the approval window or refusal must mention).
const LIES: &[(&str, &str, &str, &str)] = &[
    ("button", "Show more", "aria-lie", "visible text \"Delete account\""),
    ("button", "Close", "sr-lie", "visible text \"Delete account Close\""),
    ("button", "Refresh", "labelledby-lie", "visible text \"Delete account\""),
    ("button", "Options", "icon-lie", "matches \"delete\""),
    ("button", "\u{1F5D1}", "emoji-title", "visible text \"Trash delete\" matches \"delete\""),
    ("button", "Show details", "pseudo-lie", "visible text \"Delete account\""),
    ("button", "Dеlеtе аccount", "glyph-lie", "name matches \"delete\""),
    ("link", "Continue", "link-lie", "link goes to \"/lies/account/delete?confirm=1\""),
    ("button", "Next", "role-button-lie", "link goes to \"/lies/account/remove.html?all=1\""),
    ("link", "Next step", "action-param-lie", "(\"delete\" acts when loaded)"),
];

/// Harmless controls on the same page: (role, name, id in `data-ran`, or
/// empty for a link, which changes the URL instead).
const HARMLESS: &[(&str, &str, &str)] = &[
    ("button", "Show older drafts", "show-more"),
    ("button", "Reload list", "refresh"),
    ("button", "Close notice", "close-x"),
    ("button", "Add Notebook to cart", "add-cart"),
    ("link", "Next page", ""),
];

/// Waits for a request the approval window shows that is not in `seen`
/// (the window may be closing after the previous answer, and reopen).
async fn new_request(human: &Human, seen: &mut HashSet<u64>) -> Option<(CdpSession, ShownRequest)> {
    human.new_request(seen, SHOW_WITHIN).await
}

async fn refs(s: &mut Stack, want: &[(&str, &str)]) -> Vec<String> {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    want.iter()
        .map(|(role, name)| ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in:\n{snap}")))
        .collect()
}

async fn page_facts(page: &CdpSession) -> Value {
    page.evaluate("({ ran: document.body.dataset.ran, url: location.href })").await.expect("read the page")
}

/// The overlay as the page itself can see it: present, closed to the
/// page's scripts, in the top layer; and whether `id` is in the viewport.
async fn overlay_seen_by_page(page: &CdpSession, id: &str) -> Value {
    page.evaluate(&format!(
        "(() => {{ const h = document.querySelector('chaperone-highlight'); \
         const r = document.getElementById('{id}').getBoundingClientRect(); \
         return {{ present: !!h, closed: !!h && h.shadowRoot === null, \
         top_layer: !!h && h.matches(':popover-open'), text: h ? h.textContent : '', \
         in_view: r.top >= 0 && r.bottom <= innerHeight }}; }})()"
    ))
    .await
    .expect("read the page")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controls_that_lie_ask_and_harmless_ones_run() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let mut seen = HashSet::new();
    let url = s.url("/lies/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;

    let lie_refs = refs(&mut s, &LIES.iter().map(|(r, n, _, _)| (*r, *n)).collect::<Vec<_>>()).await;
    for ((role, name, id, why), r) in LIES.iter().zip(&lie_refs) {
        let before = page_facts(&page).await;
        let (res, asked) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r })), async {
            let (win, req) = new_request(&human, &mut seen).await?;
            let overlay = overlay_seen_by_page(&page, id).await;
            if *id == "aria-lie" {
                // The page hides and removes the outline: it comes back.
                page.evaluate(
                    "(() => { const h = document.querySelector('chaperone-highlight'); \
                     h.style.setProperty('display', 'none', 'important'); h.remove(); return true; })()",
                )
                .await
                .expect("the page attacks the outline");
                let back = tests::poll(Duration::from_secs(2), Duration::from_millis(50), || async {
                    let o = overlay_seen_by_page(&page, id).await;
                    let shown = page
                        .evaluate("getComputedStyle(document.querySelector('chaperone-highlight')).display")
                        .await
                        .ok()?;
                    (o["present"] == json!(true) && o["top_layer"] == json!(true) && shown != json!("none"))
                        .then_some(())
                })
                .await;
                assert!(back.is_some(), "the page removed or hid the outline for good");
            }
            human.deny(&win, req.request).await.expect("click Deny");
            Some((req, overlay))
        });
        let res = res.expect("browser_click");
        let (shown, overlay) =
            asked.unwrap_or_else(|| panic!("{role} {name:?} ({id}) did not ask the person: {}", res.raw));
        assert_eq!(code(&res), "APPROVAL_DENIED", "{id}: {}", res.raw);
        assert!(shown.text.contains(why), "{id}: the window does not give the reason {why:?}: {}", shown.text);
        assert!(shown.text.contains("Risk: high"), "{id}: {}", shown.text);
        let shows = match *id {
            "aria-lie" | "sr-lie" | "labelledby-lie" | "pseudo-lie" => Some("Delete account"),
            "icon-lie" => Some("delete"),
            "emoji-title" => Some("Trash delete"),
            _ => None,
        };
        if let Some(shows) = shows {
            let line = format!("Shows on the page: \u{201c}{shows}");
            assert!(shown.text.contains(&line), "{id}: the window does not say what the page shows: {}", shown.text);
        }
        if id.starts_with("link") || *id == "role-button-lie" {
            assert!(
                shown.text.contains("Goes to: http://"),
                "{id}: the window does not say where it goes: {}",
                shown.text
            );
        }
        assert_eq!(
            overlay,
            json!({ "present": true, "closed": true, "top_layer": true, "text": "", "in_view": true }),
            "{id}: the target is not outlined for the person (or the page can read the outline)"
        );
        assert_eq!(page_facts(&page).await, before, "{id}: the denied control ran");
        let gone = tests::poll(Duration::from_secs(3), Duration::from_millis(50), || async {
            (!overlay_seen_by_page(&page, "status").await["present"].as_bool().unwrap_or(true)).then_some(())
        })
        .await;
        assert!(gone.is_some(), "{id}: the outline stayed after the answer");
    }

    // A menu option chosen by a value the person never sees: its label
    // ("Delete forever") is what is judged; the harmless one runs.
    let bulk = refs(&mut s, &[("combobox", "Bulk action")]).await.remove(0);
    let (res, shown) =
        tokio::join!(s.mcp.call("browser_select_option", json!({ "ref": bulk, "values": ["3"] })), async {
            let (win, req) = new_request(&human, &mut seen).await?;
            human.deny(&win, req.request).await.expect("click Deny");
            Some(req)
        });
    let res = res.expect("browser_select_option");
    let shown = shown.unwrap_or_else(|| panic!("choosing \"3\" did not ask: {}", res.raw));
    assert_eq!(code(&res), "APPROVAL_DENIED", "{}", res.raw);
    assert!(shown.text.contains("option matches \"delete\""), "{}", shown.text);
    let res = s.mcp.ok("browser_select_option", json!({ "ref": bulk, "values": ["1"] })).await.expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("policy"), "{}", res.raw);
    assert_eq!(page_facts(&page).await["ran"], json!("bulk-1 "));

    // The harmless controls of the same page run without a question.
    let ok_refs = refs(&mut s, &HARMLESS.iter().map(|(r, n, _)| (*r, *n)).collect::<Vec<_>>()).await;
    for ((_, name, id), r) in HARMLESS.iter().zip(&ok_refs) {
        let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
        assert_eq!(res.data()["decided_by"], json!("policy"), "{name:?} asked the person: {}", res.raw);
        if id.is_empty() {
            assert!(res.data()["url"].as_str().unwrap_or("").ends_with("?page=2"), "{}", res.raw);
        } else {
            let ran = page_facts(&page).await["ran"].as_str().unwrap_or("").to_string();
            assert!(ran.split(' ').any(|x| x == *id), "{name:?} did not run: {ran:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_high_deny_every_lie_is_refused() {
    let mut s = Stack::start_with_config(Some("[risk]\nhigh = \"deny\"\n")).await.expect("start the stack");
    let url = s.url("/lies/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    let lie_refs = refs(&mut s, &LIES.iter().map(|(r, n, _, _)| (*r, *n)).collect::<Vec<_>>()).await;
    for ((_, _, id, why), r) in LIES.iter().zip(&lie_refs) {
        let res = s.mcp.call("browser_click", json!({ "ref": r })).await.expect("browser_click");
        assert_eq!(code(&res), "PERMISSION_DENIED", "{id}: {}", res.raw);
        let message = res.structured()["message"].as_str().unwrap_or("").to_string();
        assert!(message.contains(why), "{id}: the refusal does not give the reason {why:?}: {message}");
    }
    assert_eq!(page_facts(&page).await, json!({ "ran": "", "url": url }), "a refused control ran");
    // Harmless controls still run under the strict policy.
    let r = refs(&mut s, &[("button", "Reload list")]).await;
    let res = s.mcp.ok("browser_click", json!({ "ref": r[0] })).await.expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("policy"), "{}", res.raw);
}

/// A headed Chromium on its own Xvfb screen (1600×1000), where windows are
/// real and placed where the extension asks, with room beside the page.
async fn stack_on_a_large_screen(config: &str) -> Stack {
    let server = FixtureServer::start();
    let daemon = Daemon::start_with_config(Some(config)).await.expect("start the daemon");
    let browser = Browser::launch(BrowserOptions {
        extension: Some(tests::extension_dir()),
        native_host_home: Some(daemon.home().to_path_buf()),
        extra_args: Vec::new(),
        headed: true,
    })
    .await
    .expect("launch Chromium");
    let connected = tests::wait_for_extension(&daemon).await;
    let mcp = daemon.mcp().await.expect("MCP session");
    Stack { mcp, browser, daemon, server, connected }
}

/// Puts the window showing `target_id` at `bounds` (`[left, top, width, height]`).
async fn place_window(cdp: &tests::Cdp, target_id: &str, bounds: [i64; 4]) {
    let w = cdp.call("Browser.getWindowForTarget", json!({ "targetId": target_id })).await.expect("window");
    let [left, top, width, height] = bounds;
    cdp.call(
        "Browser.setWindowBounds",
        json!({ "windowId": w["windowId"], "bounds": { "left": left, "top": top, "width": width, "height": height } }),
    )
    .await
    .expect("place the window");
}

/// `[left, top, width, height]` of the window showing a tab whose URL is
/// `url` and of the approval window, as `chrome.windows` reports them
/// (asked from the approval page).
async fn windows_seen_by_chrome(approval_page: &CdpSession, url: &str) -> ([i64; 4], [i64; 4]) {
    let ws = approval_page
        .evaluate(
            "chrome.windows.getAll({ populate: true }).then(ws => ws.map(w => \
             ({ bounds: [w.left, w.top, w.width, w.height], urls: w.tabs.map(t => t.url) })))",
        )
        .await
        .expect("chrome.windows.getAll");
    let find = |pred: &dyn Fn(&str) -> bool| -> [i64; 4] {
        let w = ws
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|w| w["urls"].as_array().is_some_and(|u| u.iter().any(|u| pred(u.as_str().unwrap_or("")))))
            })
            .unwrap_or_else(|| panic!("no such window in {ws}"));
        [0, 1, 2, 3].map(|i| w["bounds"][i].as_i64().unwrap_or(0))
    };
    (find(&|u| u == url), find(&|u| u.ends_with("/approval.html")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swaps_after_the_decision_are_refused_and_nothing_is_sent() {
    let mut s = stack_on_a_large_screen("approval_timeout_secs = 60\n").await;
    let human = Human::new(&s.browser.cdp);
    let mut seen = HashSet::new();
    let url = s.url("/lies/swaps.html");
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;

    let swaps: &[(&str, &str, &str)] = &[
        ("button", "Delete draft", "swapText()"),
        ("button", "Delete selected draft", "swapAction()"),
        ("button", "Delete selected draft", "swapFieldName()"),
        ("button", "Delete selected draft", "swapFieldValue()"),
        ("link", "Delete this draft", "swapHref()"),
    ];
    for (role, name, swap) in swaps {
        // A fresh page for every swap (the previous one changed it).
        s.mcp.ok("browser_navigate", json!({ "url": url })).await;
        let r = refs(&mut s, &[(role, name)]).await;
        let (res, asked) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r[0] })), async {
            let (win, req) = new_request(&human, &mut seen).await?;
            page.evaluate(&format!("{swap}; true")).await.expect("the page swaps");
            human.approve(&win, req.request).await.expect("click Approve");
            Some(())
        });
        let res = res.expect("browser_click");
        if asked.is_none() {
            let targets: Vec<String> = s
                .browser
                .cdp
                .targets()
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|t| format!("{} {}", t.kind, t.url))
                .collect();
            panic!("{swap}: the approval window did not show the request: {}\ntargets: {targets:#?}", res.raw);
        }
        assert_eq!(code(&res), "STALE_REF", "{swap}: the swapped control ran after approval: {}", res.raw);
        let facts = page_facts(&page).await;
        assert_eq!(facts, json!({ "ran": "", "url": url }), "{swap}: something ran");
        assert!(s.server.posted().is_empty(), "{swap}: the form was sent: {:?}", s.server.posted());
    }

    // The unswapped form, approved, is sent once (the check is not a wall).
    s.mcp.ok("browser_navigate", json!({ "url": url })).await;
    let r = refs(&mut s, &[("button", "Delete selected draft")]).await;
    let (res, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r[0] })), async {
        let (win, req) = new_request(&human, &mut seen).await.expect("the approval window shows the request");
        human.approve(&win, req.request).await.expect("click Approve");
    });
    let res = res.expect("browser_click").expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("human"), "{}", res.raw);
    let posted = s.server.posted();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!((posted[0].0.as_str(), posted[0].1.as_slice()), ("/lies/drafts/delete.html", &b"draft_id=7"[..]));

    // A control far down the page: scrolled into view and outlined while the
    // person decides, the window beside it, and approving it runs it (the
    // outline does not disturb the element's identity).
    s.mcp.ok("browser_navigate", json!({ "url": url })).await;
    let r = refs(&mut s, &[("button", "Buy now")]).await;
    // The page fills the left of a 1600×1000 screen; "Buy now" is at its left.
    let cdp = s.browser.cdp.clone();
    let tab = cdp.targets().await.expect("targets").into_iter().find(|t| t.kind == "page" && t.url == url);
    place_window(&cdp, &tab.expect("the page's target").target_id, [0, 0, 1000, 900]).await;
    let (res, (overlay, approval, page_window, element)) =
        tokio::join!(s.mcp.call("browser_click", json!({ "ref": r[0] })), async {
            let (win, req) = new_request(&human, &mut seen).await.expect("the approval window shows the request");
            let overlay = overlay_seen_by_page(&page, "buy-far").await;
            let (tab_window, approval) = windows_seen_by_chrome(&win, &url).await;
            let rect = page
                .evaluate(
                    "(() => { const r = document.getElementById('buy-far').getBoundingClientRect(); \
                     return [r.left, r.top, r.width, r.height, innerWidth, innerHeight]; })()",
                )
                .await
                .expect("element box");
            let n = |i: usize| rect[i].as_f64().unwrap_or(0.0) as i64;
            // Borders at the sides and bottom alike, tabs and toolbar above.
            let side = (tab_window[2] - n(4)) / 2;
            let above = tab_window[3] - n(5) - side;
            let element = [tab_window[0] + side + n(0), tab_window[1] + above + n(1), n(2), n(3)];
            human.approve(&win, req.request).await.expect("click Approve");
            (overlay, approval, tab_window, element)
        });
    let res = res.expect("browser_click").expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("human"), "{}", res.raw);
    assert_eq!(overlay["in_view"], json!(true), "the target was not scrolled into view: {overlay}");
    assert_eq!(overlay["closed"], json!(true), "{overlay}");
    let overlaps =
        |a: [i64; 4], b: [i64; 4]| a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3];
    eprintln!("lies: approval window {approval:?}, page window {page_window:?}, element on the screen {element:?}");
    assert!(!overlaps(approval, element), "the approval window {approval:?} covers the element {element:?}");
    assert_eq!(page_facts(&page).await["ran"], json!("buy-far "));
}
