//! "Record me" end to end (docs/design.md, "Recording and flows"): the
//! person switches recording on in the popup, uses the flow shop
//! (`fixtures/sites/flowshop/`) with trusted CDP `Input.*` clicks, typing
//! and keys in a headed Chromium, switches it off, and the bridge has
//! saved the flow in SQLite: the expected steps and descriptors,
//! parameters for the address fields, no typed value with "Also keep the
//! text I type" off, typed values (never the password or the API token)
//! with it on. The password and token canaries appear nowhere in the
//! home (database, WAL, logs), the daemon's output or an export; 1,000
//! synthetic events a page dispatches while the person records are not
//! recorded and no real step is lost.
//!
//! One stack for the whole scenario.

use std::time::Duration;

use serde_json::{Value, json};
use tests::leaks::{Needles, canary};
use tests::{CdpSession, Human, Stack};

/// The flow `name` as `chaperone flow show NAME --json` prints it, once
/// the bridge has saved it (≤ 10 s).
async fn saved_flow(s: &Stack, name: &str) -> Value {
    let found = tests::poll(Duration::from_secs(10), Duration::from_millis(200), || async {
        let out = s.daemon.cli(&["flow", "show", name, "--json"], "").ok()?;
        (out.code == 0).then(|| serde_json::from_str::<Value>(&out.stdout).expect("flow show prints JSON"))
    })
    .await;
    found.unwrap_or_else(|| panic!("flow {name:?} was not saved: {}", s.daemon.stderr_tail(30)))
}

fn kinds(flow: &Value) -> Vec<String> {
    flow["steps"].as_array().unwrap().iter().map(|s| s["action"]["kind"].as_str().unwrap().to_string()).collect()
}

fn param<'a>(flow: &'a Value, name: &str) -> &'a Value {
    flow["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no parameter {name}: {}", flow["params"]))
}

/// Waits until the person's tab shows `path` and is loaded and armed.
async fn arrive(human: &Human, page: &CdpSession, path: &str, armed_before: u64) -> u64 {
    let at = tests::poll(Duration::from_secs(10), Duration::from_millis(50), || async {
        let v = page.evaluate("[location.pathname, document.readyState]").await.ok()?;
        (v[0].as_str()?.ends_with(path) && v[1] == "complete").then_some(())
    })
    .await;
    assert!(at.is_some(), "the tab did not reach {path}");
    human.wait_armed(armed_before).await.expect("the new page records")
}

/// The person goes back from the popup's window to their tab's window:
/// only what they type in the tab they are using is a navigation step.
async fn back_to(page: &CdpSession) {
    page.call("Page.bringToFront", json!({})).await.expect("bring the person's tab to the front");
}

async fn armed(human: &Human) -> u64 {
    human.record_state().await.expect("record state")["armed"].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_records_a_flow_and_only_what_they_did_is_kept() {
    let s = Stack::start().await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let shop = s.server.url("/flowshop/");
    // The person's own tab (not one the agent opened), then the popup.
    // The popup in a window of its own, so the shop tab stays the active
    // tab of its window, as when the person uses the toolbar popup.
    let page = s.browser.cdp.new_page("about:blank").await.expect("the person's tab");
    page.call("Page.enable", json!({})).await.unwrap();
    human.popup_window().await.expect("open the popup");
    page.call("Page.bringToFront", json!({})).await.unwrap();

    // ---- a purchase, "Also keep the text I type" off.
    human.start_recording("checkout", false).await.expect("start recording");
    back_to(&page).await;
    let badge = human.wait_badge("REC").await;
    assert!(badge.is_ok(), "the badge shows REC while recording: {badge:?}");
    let a = armed(&human).await;
    page.navigate(&format!("{shop}index.html")).await.unwrap();
    let a = arrive(&human, &page, "/flowshop/index.html", a).await;
    page.click_and_type("#q", "teapot").await.unwrap();
    page.press_key("Enter").await.unwrap();
    let a = arrive(&human, &page, "/flowshop/results.html", a).await;
    page.click_selector("#hit-teapot").await.unwrap();
    let a = arrive(&human, &page, "/flowshop/product.html", a).await;
    // Choosing a size with the keyboard, as a person can: Small, then Medium.
    page.evaluate("document.getElementById('size').focus()").await.unwrap();
    page.press_key("ArrowDown").await.unwrap();
    page.press_key("ArrowDown").await.unwrap();
    page.click_selector("#continue").await.unwrap();
    let a = arrive(&human, &page, "/flowshop/address.html", a).await;
    for (field, text) in [
        ("#fullname", "Ada Lovelace"),
        ("#email", "ada@example.org"),
        ("#phone", "+44 20 7946 0958"),
        ("#street", "12 Baker Street"),
        ("#postcode", "NW1 6XE"),
        ("#city", "London"),
    ] {
        page.click_and_type(field, text).await.unwrap();
    }
    page.click_selector("#express").await.unwrap();
    page.click_selector("#review").await.unwrap();
    arrive(&human, &page, "/flowshop/review.html", a).await;
    human.stop_recording().await.expect("stop recording");

    let flow = saved_flow(&s, "checkout").await;
    assert_eq!(
        kinds(&flow),
        [
            "navigate",
            "fill",
            "press_key",
            "click",
            "select",
            "click",
            "fill",
            "fill",
            "fill",
            "fill",
            "fill",
            "fill",
            "check",
            "click"
        ],
        "{flow:#}"
    );
    let steps = flow["steps"].as_array().unwrap();
    assert_eq!(steps[0]["action"]["url"], json!(format!("{shop}index.html")));
    let search = &steps[1]["target"];
    assert_eq!(search["role"], "searchbox");
    assert_eq!(search["name"], "Search products");
    assert_eq!(search["label"], "Search products");
    assert_eq!(search["input_type"], "search");
    assert_eq!(search["locators"][0], json!({"by": "id", "value": "q"}));
    assert_eq!(search["locators"][1], json!({"by": "name", "value": "q"}));
    let last = search["locators"].as_array().unwrap().last().unwrap();
    assert_eq!(last["by"], "css", "the CSS path comes last: {search}");
    let hit = &steps[3]["target"];
    assert_eq!((hit["role"].as_str(), hit["name"].as_str()), (Some("link"), Some("Blue teapot")));
    assert!(
        hit["locators"]
            .as_array()
            .unwrap()
            .contains(&json!({"by": "test_id", "value": {"attr": "data-testid", "value": "hit-teapot"}})),
        "{hit}"
    );
    // The page's own option label is kept; the query string is not.
    assert_eq!(steps[4]["action"]["value"], json!({"literal": "Medium"}));
    assert_eq!(steps[4]["action"]["option"], "m", "the option's value is kept with a literal choice");
    assert_eq!(steps[4]["target"]["label"], "Size", "the label without the options' text");
    assert_eq!(steps[3]["url"], json!(format!("{shop}results.html")));
    assert_eq!(steps[12]["action"], json!({"kind": "check", "checked": true}));
    assert_eq!(steps[12]["target"]["name"], "Express");
    assert_eq!(
        (steps[13]["target"]["role"].as_str(), steps[13]["target"]["name"].as_str()),
        (Some("button"), Some("Continue to review"))
    );
    // Every typed value is a parameter without a default.
    for (i, (name, kind)) in [
        ("full_name", "text"),
        ("e_mail", "email"),
        ("phone", "phone"),
        ("street", "address"),
        ("postcode", "address"),
        ("city", "address"),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(steps[6 + i]["action"]["value"], json!({"param": name}), "{}", steps[6 + i]);
        assert_eq!(param(&flow, name)["kind"], kind);
        assert!(param(&flow, name).get("default").is_none(), "no value kept: {}", param(&flow, name));
    }
    assert!(param(&flow, "search_products").get("default").is_none());
    let text = flow.to_string();
    for typed in ["Ada Lovelace", "ada@example.org", "7946", "Baker", "NW1 6XE", "London"] {
        assert!(!text.contains(typed), "{typed:?} was kept with the text off: {text}");
    }

    // ---- the export loads and replays in @puppeteer/replay, parameters
    // filled in by hand for its placeholders.
    puppeteer_replays(&s, &shop);

    // ---- "Also keep the text I type" on, on the settings page, while
    // the page dispatches 1,000 synthetic clicks and inputs in a second.
    let password = canary();
    let token = canary();
    human.start_recording("settings", true).await.expect("start recording with the text kept");
    back_to(&page).await;
    let a = armed(&human).await;
    page.navigate(&format!("{shop}settings.html")).await.unwrap();
    arrive(&human, &page, "/flowshop/settings.html", a).await;
    page.evaluate(
        "window.__synthetic = 0; (async () => { const save = document.getElementById('save'); \
         const display = document.getElementById('display'); \
         for (let i = 0; i < 1000; i++) { \
           const t = i % 2 ? save : display; \
           t.dispatchEvent(new MouseEvent('click', {bubbles: true, composed: true})); \
           display.dispatchEvent(new InputEvent('input', {bubbles: true})); \
           display.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})); \
           window.__synthetic++; if (i % 10 === 9) await new Promise(r => setTimeout(r, 10)); } })(); true",
    )
    .await
    .unwrap();
    page.click_and_type("#display", "Ada L").await.unwrap();
    page.click_and_type("#api_token", &token).await.unwrap();
    page.click_and_type("#current", &password).await.unwrap();
    let synthetic = tests::poll(Duration::from_secs(10), Duration::from_millis(50), || async {
        page.evaluate("window.__synthetic").await.ok()?.as_u64().filter(|n| *n == 1000)
    })
    .await;
    assert!(synthetic.is_some(), "the page dispatched its 1,000 synthetic events");
    page.click_selector("#save").await.unwrap();
    let saved = tests::poll(Duration::from_secs(5), Duration::from_millis(50), || async {
        page.evaluate("document.getElementById('status').textContent")
            .await
            .ok()?
            .as_str()?
            .contains("saved")
            .then_some(())
    })
    .await;
    assert!(saved.is_some(), "the person's Save went through");
    human.stop_recording().await.expect("stop recording");

    let flow = saved_flow(&s, "settings").await;
    assert_eq!(kinds(&flow), ["navigate", "fill", "fill", "fill", "click"], "exactly the person's steps: {flow:#}");
    let steps = flow["steps"].as_array().unwrap();
    assert_eq!(steps[1]["action"]["value"], json!({"param": "display_name"}));
    assert_eq!(param(&flow, "display_name")["default"], "Ada L", "the kept text");
    for (i, name) in [(2, "api_token"), (3, "current_password")] {
        assert_eq!(steps[i]["action"]["value"], json!({"param": name}), "{}", steps[i]);
        assert_eq!(param(&flow, name)["kind"], "secret");
        assert!(param(&flow, name).get("default").is_none());
    }

    // ---- the canaries are nowhere: flow, exports, database and WAL, logs,
    // the daemon's output.
    let recorder = s.daemon.cli(&["flow", "export", "settings", "--format", "recorder"], "").unwrap();
    assert_eq!(recorder.code, 0, "{}", recorder.stderr);
    let exported: Value = serde_json::from_str(&recorder.stdout).expect("the export is JSON");
    assert_eq!(exported["title"], "settings");
    assert!(exported["steps"][1]["selectors"][0][0].as_str().unwrap().starts_with("aria/Display name"));
    let chaperone = s.daemon.cli(&["flow", "export", "settings"], "").unwrap();
    for secret in [&password, &token] {
        let needles = Needles::for_secret(secret);
        let mut hits = needles.find("flow", flow.to_string().as_bytes());
        hits.extend(needles.find("recorder export", recorder.stdout.as_bytes()));
        hits.extend(needles.find("chaperone export", chaperone.stdout.as_bytes()));
        hits.extend(needles.find("daemon output", s.daemon.output().as_bytes()));
        let (tree, files) = needles.find_in_tree(s.daemon.home());
        assert!(files.iter().any(|f| f.ends_with("chaperone.db")), "the database was searched: {files:?}");
        hits.extend(tree);
        assert!(hits.is_empty(), "a typed secret leaked: {hits:?}");
    }
}

/// `@puppeteer/replay` (npm, installed once under `target/npm`) replays the
/// Recorder export of "checkout" on the flow shop, up to the review page.
fn puppeteer_replays(s: &Stack, shop: &str) {
    let out = s.daemon.cli(&["flow", "export", "checkout", "--format", "recorder"], "").unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("{{street}}"), "parameters are placeholders: {}", out.stdout);
    let mut text = out.stdout.clone();
    for (name, value) in [
        ("search_products", "teapot"),
        ("full_name", "Grace Hopper"),
        ("e_mail", "grace@example.org"),
        ("phone", "+1 555 0100"),
        ("street", "1 Navy Way"),
        ("postcode", "20001"),
        ("city", "Arlington"),
    ] {
        text = text.replace(&format!("{{{{{name}}}}}"), value);
    }
    let dir = tests::temp_dir("recorder-export");
    let file = dir.path().join("checkout.json");
    std::fs::write(&file, &text).unwrap();
    let run = tests::puppeteer_replay(&file);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "@puppeteer/replay failed: {stdout}{}", String::from_utf8_lossy(&run.stderr));
    let last: Value = serde_json::from_str(stdout.trim().lines().last().unwrap_or("{}")).unwrap_or_default();
    assert!(last["url"].as_str().unwrap_or("").starts_with(&format!("{shop}review.html")), "{stdout}");
    assert_eq!(last["summary"], "Deliver to Grace Hopper, 1 Navy Way, 20001 Arlington", "{stdout}");
    // The size chosen by its label when recorded is exported by its value,
    // which is what a Recorder replayer selects by.
    assert_eq!(last["size"], "Size: Medium", "{stdout}");
}

/// Incognito records nothing: the person allows Chaperone in incognito
/// (as on chrome://extensions), records in a normal window and, at the
/// same time, searches, chooses and types in an incognito window. The
/// flow holds the normal window's steps only; no incognito page was
/// armed, and what was typed there is nowhere in the home.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incognito_windows_are_never_recorded() {
    let s = Stack::start().await.expect("start the stack");
    let shop = s.server.url("/flowshop/");
    let first = s.daemon.status().await.unwrap().browsers.iter().map(|b| b.connection).max().unwrap_or(0);

    // The person's switches on chrome://extensions: "Developer mode" (an
    // unpacked extension reloaded without it is disabled), then "Allow in
    // Incognito". Chromium reloads the extension, which connects again.
    let settings = s.browser.cdp.new_page(&format!("chrome://extensions/?id={}", shared::EXTENSION_ID)).await.unwrap();
    let allowed = tests::poll(Duration::from_secs(10), Duration::from_millis(200), || async {
        let js = format!(
            "chrome.developerPrivate.updateProfileConfiguration({{inDeveloperMode: true}})\
             .then(() => chrome.developerPrivate.updateExtensionConfiguration({{extensionId: '{}', incognitoAccess: true}}))\
             .then(() => true)",
            shared::EXTENSION_ID
        );
        settings.evaluate(&js).await.ok().filter(|v| *v == true)
    })
    .await;
    assert!(allowed.is_some(), "chrome://extensions did not allow the extension in incognito");
    let back = tests::poll(Duration::from_secs(45), Duration::from_millis(200), || async {
        let st = s.daemon.status().await.ok()?;
        st.browsers.iter().any(|b| b.connection > first).then_some(())
    })
    .await;
    assert!(back.is_some(), "the extension did not reconnect after the reload: {}", s.daemon.stderr_tail(30));

    let mut human = Human::new(&s.browser.cdp);
    let page = s.browser.cdp.new_page("about:blank").await.expect("the person's tab");
    page.call("Page.enable", json!({})).await.unwrap();
    let popup = human.popup_window().await.expect("open the popup");
    let access = popup.evaluate("chrome.extension.isAllowedIncognitoAccess()").await.unwrap();
    assert_eq!(access, true, "the extension runs in incognito for this test");

    human.start_recording("private", false).await.expect("start recording in the normal window");
    let a = armed(&human).await;
    // While recording, the person opens an incognito window (Ctrl+Shift+N).
    let incognito_url = format!("{shop}product.html?incognito");
    popup
        .evaluate(&format!("chrome.windows.create({{incognito: true, url: '{incognito_url}'}}).then(() => true)"))
        .await
        .expect("open an incognito window");
    let target = s
        .browser
        .cdp
        .wait_for_target(Duration::from_secs(10), |t| t.url.contains("?incognito"))
        .await
        .expect("the incognito tab");
    let private = s.browser.cdp.attach(&target.target_id).await.unwrap();
    private.wait_ready().await.unwrap();
    // The extension really reaches it: the worker can inject a script
    // there (the content script is injected only when the worker needs a
    // page, never into an incognito tab while recording).
    let worker = s.browser.extension_worker(Duration::from_secs(10)).await.expect("the extension's worker");
    let worker = s.browser.cdp.attach(&worker.target_id).await.unwrap();
    let in_private = tests::poll(Duration::from_secs(10), Duration::from_millis(200), || async {
        let v = worker
            .evaluate(
                "chrome.tabs.query({}).then(ts => ts.filter(t => t.incognito).map(t => t.id))\
                 .then(ids => Promise.all(ids.map(id => chrome.scripting.executeScript(\
                 {target: {tabId: id}, func: () => true}).then((r) => r[0].result === true, e => String(e)))))",
            )
            .await
            .ok()?;
        v.as_array().is_some_and(|a| !a.is_empty() && a.iter().all(|v| *v == true)).then_some(v)
    })
    .await;
    assert!(in_private.is_some(), "the extension cannot reach the incognito tab");

    // The person works in the incognito window: a size, the address.
    private.navigate(&incognito_url).await.unwrap();
    private.wait_ready().await.unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    private.evaluate("document.getElementById('size').focus()").await.unwrap();
    private.press_key("ArrowDown").await.unwrap();
    private.click_selector("#continue").await.unwrap();
    tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let v = private.evaluate("[location.pathname, document.readyState]").await.ok()?;
        (v[0].as_str()?.ends_with("/address.html") && v[1] == "complete").then_some(())
    })
    .await
    .expect("the incognito tab reaches the address form");
    private.click_and_type("#fullname", "incognito-canary-7f3a").await.unwrap();
    private.press_key("Tab").await.unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(armed(&human).await, a, "an incognito page was armed for recording");
    // …and once in the normal window.
    back_to(&page).await;
    page.navigate(&format!("{shop}index.html")).await.unwrap();
    let a = arrive(&human, &page, "/flowshop/index.html", a).await;
    page.click_and_type("#q", "teapot").await.unwrap();
    page.press_key("Enter").await.unwrap();
    arrive(&human, &page, "/flowshop/results.html", a).await;
    human.stop_recording().await.expect("stop recording");

    let flow = saved_flow(&s, "private").await;
    assert_eq!(kinds(&flow), ["navigate", "fill", "press_key"], "{flow}");
    let text = flow.to_string();
    for page in ["product.html", "address.html", "Size", "Full name"] {
        assert!(!text.contains(page), "an incognito step was recorded ({page}): {text}");
    }
    let (hits, _) = Needles::for_secret("incognito-canary-7f3a").find_in_tree(s.daemon.home());
    assert!(hits.is_empty(), "what was typed in incognito reached the home: {hits:?}");
}

/// A hostile page's own trusted events and navigations are not the
/// person's steps (`fixtures/sites/recordtrap/`). While the person records,
/// the page's scripts (here `Runtime.evaluate` without a user gesture, as
/// the page's own code runs) tick a checkbox (`checkbox.click()`,
/// `label.click()`), type a promo code (`focus()` + `execCommand`),
/// choose a plan (`select.value` + `dispatchEvent`), tick a checkbox from
/// the handler of the person's click elsewhere, and navigate the tab
/// (`link.click()`, `location.assign`, `requestSubmit()`, `form.submit()`,
/// `history.back()` by a script and from the handler of the person's
/// click, `pushState`, a timer after the person's click, meta refresh,
/// `window.open` from the person's click), and a background tab does
/// `pushState` and is navigated. None of it is in the flow. The controls:
/// the person's own click on the same checkbox, on the same label, typing
/// in the same field, choosing with the keyboard, Back, and URLs typed in
/// the address bar are all steps; a token in a typed URL's path is a
/// parameter and stored nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_own_events_and_navigations_are_not_the_persons_steps() {
    let s = Stack::start().await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let base = s.server.url("/recordtrap/");
    let token = "kq3ZtP8wR2mX7vN4";
    let page = s.browser.cdp.new_page("about:blank").await.expect("the person's tab");
    page.call("Page.enable", json!({})).await.unwrap();
    human.popup_window().await.expect("open the popup");
    page.call("Page.bringToFront", json!({})).await.unwrap();
    human.start_recording("traps", true).await.expect("start recording");
    let trap = |what: &str| format!("window.trap.{what}()");
    back_to(&page).await;

    // ---- Typed in the address bar: a step.
    let a = armed(&human).await;
    page.navigate(&format!("{base}form.html")).await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/form.html", a).await;

    // ---- The page's own trusted events.
    assert_eq!(page.evaluate(&trap("checkbox")).await.unwrap(), true, "checkbox.click() ticked it");
    assert_eq!(page.evaluate(&trap("label")).await.unwrap(), true, "label.click() ticked it");
    assert_eq!(page.evaluate(&trap("insert")).await.unwrap(), "FREE100", "execCommand typed it");
    assert_eq!(page.evaluate(&trap("select")).await.unwrap(), "premium", "the page chose");
    page.evaluate(&trap("reset")).await.unwrap();
    // ---- The controls: the person on the same elements.
    page.click_selector("#premium").await.unwrap();
    page.click_selector("#news-label").await.unwrap();
    page.click_and_type("#promo", "SPRING").await.unwrap();
    page.evaluate("document.getElementById('plan').focus()").await.unwrap();
    page.press_key("ArrowDown").await.unwrap();
    // The person clicks Apply; its handler ticks "premium" again (unticks).
    page.click_selector("#apply").await.unwrap();
    let premium = page.evaluate("document.getElementById('premium').checked").await.unwrap();
    assert_eq!(premium, false, "the page's handler clicked the checkbox");

    // ---- The page navigates on its own: link.click(), then Back by the person.
    page.evaluate("document.getElementById('tolink').click()").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/delete.html", a).await;
    let history = page.call("Page.getNavigationHistory", json!({})).await.unwrap();
    let i = history["currentIndex"].as_u64().unwrap() as usize;
    let back = history["entries"][i - 1]["id"].clone();
    page.call("Page.navigateToHistoryEntry", json!({ "entryId": back })).await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/form.html", a).await;
    // location.assign, history.back() by a script, requestSubmit().
    page.evaluate("location.assign('delete.html'); true").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/delete.html", a).await;
    page.evaluate("history.back(); true").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/form.html", a).await;
    page.evaluate("document.getElementById('order').requestSubmit(); true").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/delete.html", a).await;
    page.evaluate("history.back(); true").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/form.html", a).await;
    // form.submit() (no submit event at all), then back by a script again.
    page.evaluate("document.getElementById('order').submit(); true").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/delete.html", a).await;
    page.evaluate("history.back(); true").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/form.html", a).await;
    // The person clicks Continue; a timer navigates 300 ms later.
    page.click_selector("#later").await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/delete.html", a).await;
    // Typed: a step; then a page that refreshes itself to delete.html.
    page.navigate(&format!("{base}other.html")).await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/other.html", a).await;
    page.navigate(&format!("{base}refresh.moves.html")).await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/delete.html", a).await;
    // Typed, with a token in its path.
    page.navigate(&format!("{base}reset/{token}.html")).await.unwrap();
    let a = arrive(&human, &page, &format!("/recordtrap/reset/{token}.html"), a).await;
    page.navigate(&format!("{base}form.html")).await.unwrap();
    let a = arrive(&human, &page, "/recordtrap/form.html", a).await;
    // pushState in the person's tab.
    let pushed = page.evaluate(&trap("pushState")).await.unwrap();
    assert!(pushed.as_str().unwrap().ends_with(token), "{pushed}");
    // The person clicks Previous; its handler calls history.back(): the
    // click is a step, the page's traversal is not.
    page.click_selector("#goback").await.unwrap();
    let back_home = tests::poll(Duration::from_secs(10), Duration::from_millis(50), || async {
        page.evaluate("location.pathname").await.ok()?.as_str()?.ends_with("/recordtrap/form.html").then_some(())
    })
    .await;
    assert!(back_home.is_some(), "history.back() from the page's handler");

    // ---- A background tab: pushState there, and a URL "typed" there.
    let bg = s
        .browser
        .cdp
        .call("Target.createTarget", json!({ "url": format!("{base}other.html"), "background": true }))
        .await
        .unwrap();
    let bg = s.browser.cdp.attach(bg["targetId"].as_str().unwrap()).await.unwrap();
    bg.call("Page.enable", json!({})).await.unwrap();
    let a = arrive(&human, &bg, "/recordtrap/other.html", a).await;
    let active = page.evaluate("document.visibilityState").await.unwrap();
    assert_eq!(active, "visible", "the person's tab is still the one in front");
    bg.evaluate("history.pushState({}, '', 'account/delete/now'); true").await.unwrap();
    bg.navigate(&format!("{base}delete.html")).await.unwrap();
    let a = arrive(&human, &bg, "/recordtrap/delete.html", a).await;
    // window.open from the person's click: a new tab, not a step.
    page.click_selector("#opener").await.unwrap();
    s.browser
        .cdp
        .wait_for_target(Duration::from_secs(10), |t| t.url.contains("from=opener"))
        .await
        .expect("the page opened a tab");
    let _ = a;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    human.stop_recording().await.expect("stop recording");

    let flow = saved_flow(&s, "traps").await;
    assert_eq!(
        kinds(&flow),
        [
            "navigate", "check", "check", "fill", "select", "click", "navigate", "click", "navigate", "navigate",
            "navigate", "navigate", "click", "click"
        ],
        "exactly the person's steps: {flow:#}"
    );
    let steps = flow["steps"].as_array().unwrap();
    let nav = |i: usize| steps[i]["action"]["url"].as_str().unwrap().to_string();
    let name = |i: usize| steps[i]["target"]["name"].as_str().unwrap_or("").to_string();
    assert_eq!(nav(0), format!("{base}form.html"));
    assert_eq!(steps[1]["action"], json!({"kind": "check", "checked": true}));
    assert_eq!(name(1), "I agree to the premium plan");
    assert_eq!(steps[2]["action"], json!({"kind": "check", "checked": true}));
    assert_eq!(name(2), "Send me the newsletter");
    assert_eq!(steps[3]["action"]["value"], json!({"literal": "SPRING"}), "the person's text, not the page's");
    assert_eq!(steps[4]["action"]["value"], json!({"literal": "Pro"}));
    assert_eq!(name(5), "Apply");
    assert_eq!(nav(6), format!("{base}form.html"), "Back, pressed by the person");
    assert_eq!(name(7), "Continue");
    assert_eq!(nav(8), format!("{base}other.html"));
    assert_eq!(nav(9), format!("{base}refresh.moves.html"));
    assert_eq!(nav(10), format!("{base}reset/{{{{path_token}}}}"), "the token is a parameter");
    assert_eq!(nav(11), format!("{base}form.html"));
    assert_eq!(name(12), "Previous");
    assert_eq!(name(13), "Open help");
    assert_eq!(steps[13]["url"], json!(format!("{base}form.html")));
    let p = param(&flow, "path_token");
    assert_eq!(p["kind"], "text");
    assert!(p.get("default").is_none(), "a token is never kept: {p}");
    let text = flow.to_string();
    assert!(!text.contains("FREE100"), "the page's text is in the flow: {text}");
    assert!(!text.contains(token), "the token is in the flow (a loading page's title is its URL): {text}");
    assert_eq!(steps[4]["action"]["option"], "pro", "the person's choice, not the page's");
    // The page's pushState moved the page the person clicked on: its token
    // is not kept there either.
    assert_eq!(steps[12]["url"], json!(format!("{base}account/delete/{{{{token}}}}")));
    // The token is nowhere in the home: database, WAL, logs.
    let (hits, files) = Needles::for_secret(token).find_in_tree(s.daemon.home());
    assert!(files.iter().any(|f| f.ends_with("chaperone.db")), "the database was searched: {files:?}");
    assert!(hits.is_empty(), "the token was stored: {hits:?}");
}
