//! The harness itself, without the product: the fixture server, the CDP
//! client against a plain headless Chromium, and the fixture expectations
//! checked against Chromium's own accessibility tree (the yardstick).

use std::time::Duration;

use tests::{Browser, Expectations, FixtureServer};

const PAGES: &[&str] = &["basic/index.html", "basic/second.html", "csp/self/index.html", "csp/none/index.html"];

#[tokio::test]
async fn fixture_server_serves_files_with_directory_headers() {
    let server = FixtureServer::start();
    let http = reqwest::Client::new();

    let r = http.get(server.url("/basic/index.html")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(r.headers().get("content-security-policy").is_none());
    assert!(r.text().await.unwrap().contains("<h1>Account settings</h1>"));

    // A directory serves its index.html.
    let r = http.get(server.url("/basic/")).send().await.unwrap();
    assert_eq!(r.status(), 200);

    let r = http.get(server.url("/csp/self/index.html")).send().await.unwrap();
    assert_eq!(r.headers()["content-security-policy"], "script-src 'self'");
    let r = http.get(server.url("/csp/self/app.js")).send().await.unwrap();
    assert_eq!(r.headers()["content-security-policy"], "script-src 'self'");
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    let r = http.get(server.url("/csp/none/")).send().await.unwrap();
    assert_eq!(r.headers()["content-security-policy"], "default-src 'none'");

    for bad in ["/csp/self/_headers", "/basic/../../Cargo.toml", "/basic/%2e%2e/x", "/nope.html", "/.git/config"] {
        let r = http.get(format!("{}{bad}", server.origin())).send().await.unwrap();
        assert_eq!(r.status(), 404, "{bad}");
    }
    // A submitted form: answered like a GET, its body kept for the test.
    let r = http.post(server.url("/settings/api/saved.html")).body("api_token=abc&x=1").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("Settings saved"));
    assert_eq!(server.posted(), vec![("/settings/api/saved.html".to_string(), b"api_token=abc&x=1".to_vec())]);
    let r = http.put(server.url("/basic/index.html")).send().await.unwrap();
    assert_eq!(r.status(), 405);
}

#[tokio::test]
async fn expectations_agree_with_chromium_accessibility_tree() {
    let server = FixtureServer::start();
    let browser = Browser::plain().await.expect("launch Chromium");
    let page = browser.cdp.new_page("about:blank").await.unwrap();
    page.call("Page.enable", serde_json::json!({})).await.unwrap();
    let mut failures = Vec::new();
    for p in PAGES {
        page.navigate(&server.url(p)).await.unwrap();
        let nodes = page.ax_nodes().await.unwrap();
        if std::env::var_os("DUMP_AX").is_some() {
            for n in &nodes {
                eprintln!("{p}: {} {:?} {:?} {:?}", n.role, n.name, n.value, n.states);
            }
        }
        if let Err(e) = Expectations::for_page(p).check_ax(&nodes) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn cdp_lists_targets_evaluates_and_clicks() {
    let server = FixtureServer::start();
    let browser = Browser::plain().await.expect("launch Chromium");
    let targets = browser.cdp.targets().await.unwrap();
    assert!(targets.iter().any(|t| t.kind == "page" && t.url == "about:blank"), "{targets:?}");

    let page = browser.cdp.new_page(&server.url("/csp/self/index.html")).await.unwrap();
    page.wait_ready().await.unwrap();
    // The CSP header is in force: the same-origin script ran, the inline one did not.
    let seen =
        page.evaluate("[...document.querySelectorAll('button')].map(b => b.textContent).join('|')").await.unwrap();
    let seen = seen.as_str().unwrap();
    assert!(seen.contains("Added by same-origin script"), "{seen}");
    assert!(!seen.contains("Injected by inline script"), "{seen}");

    // Trusted clicks: ticking the terms checkbox.
    page.click_selector("input[name=terms]").await.unwrap();
    let checked = page.evaluate("document.querySelector('input[name=terms]').checked").await.unwrap();
    assert_eq!(checked, serde_json::json!(true));

    // The new page shows up as a target and can be closed.
    let id = page.target_id.clone();
    assert!(browser.pages().await.unwrap().iter().any(|t| t.target_id == id));
    browser.cdp.close_target(&id).await.unwrap();
    let gone = tests::poll(Duration::from_secs(5), Duration::from_millis(50), || async {
        let pages = browser.pages().await.ok()?;
        (!pages.iter().any(|t| t.target_id == id)).then_some(())
    })
    .await;
    assert!(gone.is_some(), "the closed page is still listed");
}

#[tokio::test]
async fn cdp_can_stop_an_extension_service_worker() {
    let ext = tests::workspace_root().join("fixtures/extensions/sw-probe");
    let browser = Browser::launch(tests::BrowserOptions { extension: Some(ext), ..Default::default() })
        .await
        .expect("launch Chromium");
    let worker = browser
        .cdp
        .wait_for_target(Duration::from_secs(15), |t| {
            t.kind == "service_worker" && t.url.starts_with("chrome-extension://")
        })
        .await
        .unwrap_or_else(|e| panic!("{e}: {}", browser.stderr_tail(20)));
    let page = browser.cdp.new_page("about:blank").await.unwrap();
    page.call("ServiceWorker.enable", serde_json::json!({})).await.unwrap();
    page.call("ServiceWorker.stopAllWorkers", serde_json::json!({})).await.unwrap();
    let stopped = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let targets = browser.cdp.targets().await.ok()?;
        (!targets.iter().any(|t| t.target_id == worker.target_id)).then_some(())
    })
    .await;
    assert!(stopped.is_some(), "the worker target is still listed after ServiceWorker.stopAllWorkers");
}
