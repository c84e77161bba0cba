//! The read-only review dashboard and `chaperone report`, end to end.
//!
//! A session clicks a button whose name is markup on a page whose title is
//! markup (allowed by the policy), clicks "Delete account" on a site whose
//! rule denies high risk (refused by the site rule), and types a secret
//! bound to the fixture site by name. Then:
//!
//! - `chaperone dashboard --print`'s address, opened in Chromium, lists the
//!   session's client (started, still running), both clicks with their
//!   decisions, who decided (policy, site rule) and durations, the page's
//!   title, and the secret's name, never its value; the markup is text (no
//!   `<img>` built, no CSP violation, no script ran — with a control
//!   showing the check would see an element built from it); the token is
//!   gone from the address bar; a new row appears while the page is open,
//!   within 2 s;
//! - `/dashboard/data` refuses no token, the MCP and extension tokens, a
//!   token in the query string or a cookie, another `Origin`; the dashboard
//!   token is refused on `/mcp` and `/status`; every dashboard response
//!   carries the CSP;
//! - `chaperone report --last` writes one file that holds the session,
//!   loads nothing and has no secret value.
//!
//! Screenshots: `/tmp/dashboard/dashboard.png` and `/tmp/dashboard/report.png`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::leaks::canary;
use tests::{CdpSession, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const CONFIG: &str = "[[sites]]\norigin = \"http://localhost:*\"\nhigh = \"deny\"\n\n\
                      [[sites]]\norigin = \"http://127.0.0.1:*\"\nhigh = \"allow\"\n";

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; \
                   frame-ancestors 'none'";

const MARKUP_BUTTON: &str = "<img src=x onerror=document.title='PWNED'><b>Say hello</b>";
/// The fixture page's title (`fixtures/sites/markup/`).
const MARKUP_TITLE: &str = "<img src=x onerror=\"window.pwned=1\"><b>Greetings</b>";

async fn screenshot(page: &CdpSession, name: &str) {
    let shot = page
        .call("Page.captureScreenshot", json!({ "format": "png", "captureBeyondViewport": true }))
        .await
        .expect("Page.captureScreenshot");
    let bytes = shared::files::base64_decode(shot["data"].as_str().unwrap_or_default()).expect("base64 PNG");
    let _ = std::fs::create_dir_all("/tmp/dashboard");
    std::fs::write(format!("/tmp/dashboard/{name}.png"), bytes).expect("write the screenshot");
}

/// `expr` (a boolean) becomes true within `within`, else the last value of `show`.
async fn wait_true(page: &CdpSession, expr: &str, within: Duration, show: &str) {
    let deadline = Instant::now() + within;
    loop {
        if page.evaluate(expr).await.unwrap_or(Value::Null) == json!(true) {
            return;
        }
        if Instant::now() > deadline {
            panic!("not true within {within:?}: {expr}\n{}", page.evaluate(show).await.unwrap_or_default());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_and_the_report_show_the_session_as_text_to_the_token_holder_only() {
    let mut s = Stack::start_with_config(Some(CONFIG)).await.expect("start the stack");
    let ip_origin = s.url("/").trim_end_matches('/').to_string();
    let port = ip_origin.rsplit(':').next().unwrap().to_string();
    let value = canary();
    let out = s.daemon.cli(&["secret", "set", "API_TOKEN", "--site", &ip_origin], &value).unwrap();
    assert_eq!(out.code, 0, "{out:?}");

    // ---- the session
    let markup = s.url("/markup/");
    new_tab(&mut s.mcp, &markup).await;
    let page = page_at(&s, &markup).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let hello = ref_of(&snap, "button", MARKUP_BUTTON).unwrap_or_else(|| panic!("no markup button:\n{snap}"));
    s.mcp.ok("browser_click", json!({ "ref": hello })).await.expect_ok("the allowed click");
    assert_eq!(super::status_line(&page).await, "Hello said");

    let local = format!("http://localhost:{port}/markup/");
    s.mcp.ok("browser_navigate", json!({ "url": local })).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let delete = ref_of(&snap, "button", "Delete account").unwrap_or_else(|| panic!("no delete button:\n{snap}"));
    let r = s.mcp.call("browser_click", json!({ "ref": delete })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "the site rule refuses: {}", r.raw);

    let api = s.url("/settings/api/");
    s.mcp.ok("browser_navigate", json!({ "url": api })).await;
    let api_page = page_at(&s, &api).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let token_field = ref_of(&snap, "textbox", "API token").unwrap_or_else(|| panic!("no API token field:\n{snap}"));
    let r = s.mcp.call("browser_type", json!({ "ref": token_field, "text": { "secret": "API_TOKEN" } })).await.unwrap();
    r.expect_ok("the secret typed by name");
    assert_eq!(api_page.evaluate("document.getElementById('api_token').value").await.unwrap(), json!(value));

    // ---- the data endpoint's refusals
    let home = s.daemon.home().to_path_buf();
    let read = |name: &str| std::fs::read_to_string(home.join(name)).unwrap().trim().to_string();
    let (dash, mcp_token, ext_token) = (read("dashboard-token"), read("mcp-token"), read("extension-token"));
    let base = format!("http://127.0.0.1:{}", s.daemon.port());
    let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let data = format!("{base}/dashboard/data");
    let status = |rb: reqwest::RequestBuilder| async move { rb.send().await.expect("request").status().as_u16() };
    let bearer = |t: &str| format!("Bearer {t}");
    // Control: the dashboard token from the page's own origin is answered.
    let ok = http.get(&data).header("Authorization", bearer(&dash)).header("Origin", &base).send().await.unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    assert_eq!(ok.headers()["content-security-policy"], CSP);
    let body = ok.text().await.unwrap();
    assert!(body.contains("API_TOKEN") && !body.contains(&value), "{body}");
    let refusals: Vec<(&str, reqwest::RequestBuilder, u16)> = vec![
        ("no token", http.get(&data), 401),
        ("the MCP token", http.get(&data).header("Authorization", bearer(&mcp_token)), 401),
        ("the extension token", http.get(&data).header("Authorization", bearer(&ext_token)), 401),
        ("the token in the query string", http.get(format!("{data}?t={dash}")), 401),
        ("the token in the query string too", http.get(format!("{data}?token={dash}")).header("Authorization", bearer(&dash)), 400),
        ("the token in a cookie", http.get(&data).header("Cookie", format!("t={dash}; token={dash}")), 401),
        ("another origin", http.get(&data).header("Authorization", bearer(&dash)).header("Origin", "https://evil.example"), 403),
        ("localhost's origin", http.get(&data).header("Authorization", bearer(&dash)).header("Origin", format!("http://localhost:{}", s.daemon.port())), 403),
        ("origin null", http.get(&data).header("Authorization", bearer(&dash)).header("Origin", "null"), 403),
        ("the dashboard token on /status", http.get(format!("{base}/status")).header("Authorization", bearer(&dash)), 401),
        (
            "the dashboard token on /mcp",
            http.post(format!("{base}/mcp"))
                .header("Authorization", bearer(&dash))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}"#),
            401,
        ),
        ("the page from another origin", http.get(format!("{base}/dashboard/")).header("Origin", "https://evil.example"), 403),
    ];
    for (name, rb, want) in refusals {
        assert_eq!(status(rb).await, want, "{name}");
    }
    for path in ["/dashboard/", "/dashboard/app.js", "/dashboard/app.css"] {
        let r = http.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{path} needs no token");
        assert_eq!(r.headers()["content-security-policy"], CSP, "{path}");
        assert!(!r.text().await.unwrap().contains(&dash), "{path} holds no token");
    }

    // ---- the dashboard in Chromium
    let out = s.daemon.cli(&["dashboard", "--print"], "").unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let url = out.stdout.lines().next().unwrap_or_default().to_string();
    assert_eq!(url, format!("{base}/dashboard/#t={dash}"));
    let target = s.browser.cdp.call("Target.createTarget", json!({ "url": "about:blank" })).await.unwrap();
    let target_id = target["targetId"].as_str().unwrap().to_string();
    let board = s.browser.cdp.attach(&target_id).await.unwrap();
    board.call("Page.enable", json!({})).await.unwrap();
    board
        .call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1500, "height": 1100, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await
        .unwrap();
    // Every CSP violation in the page is counted, from before its first line runs.
    board
        .call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": "window.__violations = []; document.addEventListener('securitypolicyviolation', \
                               e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));" }),
        )
        .await
        .unwrap();
    board.navigate(&url).await.unwrap();
    let rows = "document.querySelectorAll('#timeline tbody tr').length";
    wait_true(&board, &format!("{rows} >= 5"), Duration::from_secs(10), "document.body.innerText").await;
    let text = board.evaluate("document.body.innerText").await.unwrap().as_str().unwrap_or_default().to_string();
    assert!(text.contains("chaperone-e2e"), "the client is listed:\n{text}");
    assert!(text.contains(MARKUP_BUTTON), "the markup is shown as text:\n{text}");
    assert!(text.contains("{secret:API_TOKEN}"), "the secret by name:\n{text}");
    assert!(!text.contains(&value), "never its value");
    // Both clicks with their decisions.
    // [page URL, page title, decision, decided by, outcome, duration]
    let clicks = board
        .evaluate(
            "JSON.stringify([...document.querySelectorAll('#timeline tbody tr')].filter(tr => tr.cells[2].textContent === 'browser_click')\
             .map(tr => [tr.cells[3].firstChild ? tr.cells[3].firstChild.textContent : '', \
                         (tr.cells[3].querySelector('.title') || {}).textContent || '', \
                         ...[6, 7, 8, 9].map(i => tr.cells[i].textContent)]))",
        )
        .await
        .unwrap();
    let clicks: Vec<Vec<String>> = serde_json::from_str(clicks.as_str().unwrap()).unwrap();
    let timed = |d: &str| d.ends_with(" ms") || d.ends_with(" s");
    assert!(
        clicks.iter().any(|c| c[0] == markup
            && c[1] == MARKUP_TITLE
            && c[2] == "allow"
            && c[3] == "policy"
            && timed(&c[5])),
        "the allowed click, on the page with its title, decided by the policy: {clicks:?}"
    );
    assert!(
        clicks.iter().any(|c| c[0] == local
            && c[1] == MARKUP_TITLE
            && c[2] == "deny"
            && c[3] == "site rule"
            && c[4] == "PERMISSION_DENIED"
            && timed(&c[5])),
        "the refused click, decided by the site rule: {clicks:?}"
    );
    // The agent: its client, started, still running (no end row yet).
    let agent = board
        .evaluate("JSON.stringify([...document.querySelectorAll('#agents tbody tr')].map(tr => [...tr.cells].map(c => c.textContent)))")
        .await
        .unwrap();
    let agent: Vec<Vec<String>> = serde_json::from_str(agent.as_str().unwrap()).unwrap();
    assert!(
        agent.iter().any(|a| a[0].contains("chaperone-e2e") && !a[2].is_empty() && a[3].starts_with("running")),
        "the agent, running: {agent:?}"
    );
    assert!(text.contains("agent connected: chaperone-e2e"), "the session's start row:\n{text}");
    // Nothing was built from the markup and nothing ran…
    let built = "document.querySelectorAll('img, b').length";
    assert_eq!(board.evaluate(built).await.unwrap(), json!(0));
    let scripts = "[...document.scripts].map(s => s.getAttribute('src')).join(' ')";
    assert_eq!(board.evaluate(scripts).await.unwrap(), json!("/dashboard/app.js"), "only the page's own script");
    assert_eq!(board.evaluate("document.title").await.unwrap(), json!("Chaperone — what the agents did"));
    assert_eq!(board.evaluate("JSON.stringify(window.__violations)").await.unwrap(), json!("[]"));
    assert_eq!(board.evaluate("window.pwned === undefined").await.unwrap(), json!(true), "the title's markup ran");
    // …and the check would have seen it: the same text as markup builds an <img>.
    let control = format!(
        "(() => {{ const t = document.createElement('template'); t.innerHTML = {}; return t.content.querySelectorAll('img').length; }})()",
        serde_json::to_string(MARKUP_BUTTON).unwrap()
    );
    assert_eq!(board.evaluate(&control).await.unwrap(), json!(1), "the control builds an element");
    // The token is gone from the address bar and the target's URL.
    assert_eq!(board.evaluate("location.href").await.unwrap(), json!(format!("{base}/dashboard/")));
    let targets = s.browser.cdp.targets().await.unwrap();
    let shown = targets.iter().find(|t| t.target_id == target_id).map(|t| t.url.clone()).unwrap_or_default();
    assert!(!shown.contains(&dash), "the address bar still holds the token: {shown}");

    // Live: a new row shows within 2 s.
    let before = board.evaluate(rows).await.unwrap().as_i64().unwrap();
    s.mcp.ok("browser_navigate", json!({ "url": markup })).await;
    let started = Instant::now();
    wait_true(&board, &format!("{rows} > {before}"), Duration::from_secs(5), "document.body.innerText").await;
    assert!(started.elapsed() < Duration::from_millis(2_500), "new rows took {:?}", started.elapsed());
    screenshot(&board, "dashboard").await;

    // ---- the report
    let file = tests::temp_dir("dashboard-report");
    let path = file.path().join("session.html");
    let out = s.daemon.cli(&["report", "--last", "-o", path.to_str().unwrap()], "").unwrap();
    assert_eq!(out.code, 0, "{out:?}");
    let html = std::fs::read_to_string(&path).unwrap();
    for want in [
        "chaperone-e2e",
        "{secret:API_TOKEN}",
        "PERMISSION_DENIED",
        "Delete account",
        "&lt;img src=x",
        "&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;",
        "site_rule",
        " ms</td>",
    ] {
        assert!(html.contains(want), "the report holds {want}");
    }
    assert!(!html.contains(&value), "no secret value in the report");
    // Text cannot hold `<` or `"` (escaped): no element or attribute can load anything.
    for never in ["<script", "<link", "<img", "<iframe", "src=\"", "href=\"", "url(", "@import"] {
        assert!(!html.to_lowercase().contains(never), "the report loads nothing: {never}");
    }
    let report = s.browser.cdp.new_page(&format!("file://{}", path.display())).await.unwrap();
    report
        .call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1300, "height": 900, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await
        .unwrap();
    assert_eq!(report.evaluate("performance.getEntriesByType('resource').length").await.unwrap(), json!(0));
    assert_eq!(report.evaluate("document.querySelectorAll('img, script').length").await.unwrap(), json!(0));
    let rtext = report.evaluate("document.body.innerText").await.unwrap();
    assert!(rtext.as_str().unwrap_or_default().contains(MARKUP_BUTTON), "the report shows markup as text");
    assert!(rtext.as_str().unwrap_or_default().contains(MARKUP_TITLE), "the report shows the title as text");
    screenshot(&report, "report").await;
    let no_session = s.daemon.cli(&["report", "--session", "mcp:nosuch", "-o", path.to_str().unwrap()], "").unwrap();
    assert_eq!(no_session.code, 1, "{no_session:?}");
    assert!(no_session.stderr.contains("no session mcp:nosuch"), "{no_session:?}");
}
