//! Network capture, HAR export and redaction (issue 33), end to end: the
//! net app (`fixtures/sites/netapp/`, server in `tests::netapp`) logs in
//! with a password in JSON, gets a session cookie, a bearer token, a CSRF
//! token and a JWT, and makes 31 API calls (GET/POST/PATCH/DELETE,
//! 200/201/204/404, fetch and XHR, a beacon with a token in its query)
//! plus static files. The agent lists and filters them, reads a body,
//! fills a stored secret that the page then sends under a harmless name,
//! exports a HAR (validated by the npm `har-validator` and opened by Chrome
//! DevTools' own HAR importer), and a second session sees nothing. Every credential is a canary; at the end every
//! tool output, the export, the daemon's logs and every file of the home
//! are searched for each of them in every encoding (`tests::leaks`).

use std::time::Duration;

use serde_json::{Value, json};
use tests::leaks::{Hit, Needles, canary};
use tests::{Human, Stack, netapp, ref_of};

use super::snapshot;

const SECRET_NAME: &str = "NET_NOTE_TOKEN";

/// Every listed request (all pages) of `args`.
async fn list(s: &mut Stack, outputs: &mut Vec<u8>, args: Value) -> (Vec<Value>, Value) {
    let mut all = Vec::new();
    let mut page = 1;
    loop {
        let mut a = args.clone();
        a["page"] = json!(page);
        let r = s.mcp.ok("browser_network_requests", a).await.expect_untrusted();
        outputs.extend_from_slice(r.raw.to_string().as_bytes());
        let data = r.data().clone();
        all.extend(data["requests"].as_array().cloned().unwrap_or_default());
        if data["page"] == data["pages"] {
            return (all, data);
        }
        page += 1;
    }
}

fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    path.split(['?', '#']).next().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_sees_the_traffic_of_its_tabs_and_never_a_credential() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let creds = netapp::creds();
    let note = canary();
    let mut outputs: Vec<u8> = Vec::new();
    let set = s.daemon.cli(&["secret", "set", SECRET_NAME], &format!("{note}\n")).unwrap();
    assert_eq!(set.code, 0, "secret set: {set:?}");

    // ---- a tab of the agent's, then the app (30+ calls on load)
    let r = s.mcp.ok("browser_tabs", json!({ "action": "new" })).await;
    let tab = r.data()["tab"]["id"].as_i64().expect("tab id");
    let app = s.url("/netapp/index.html");
    s.mcp.ok("browser_navigate", json!({ "url": app })).await;
    let r = s.mcp.call("browser_wait_for", json!({ "text": "All calls done", "ms": 30000 })).await.unwrap();
    let r = r.expect_ok("the app finished its calls");
    outputs.extend_from_slice(r.raw.to_string().as_bytes());

    // ---- every API call the server saw is listed (the beacon may land last)
    let mut api = Vec::new();
    for _ in 0..50 {
        let (all, _) = list(&mut s, &mut outputs, json!({ "filter": "/netapp/api/" })).await;
        api = all;
        if api.len() >= s.server.netapp().seen().len() && s.server.netapp().seen().len() >= 31 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seen = s.server.netapp().seen();
    assert!(seen.len() >= 31, "the app made fewer calls than it should: {seen:#?}");
    let mut listed: Vec<String> = api
        .iter()
        .map(|r| format!("{} {}", r["method"].as_str().unwrap(), path_of(r["url"].as_str().unwrap())))
        .collect();
    let mut expected: Vec<String> = seen
        .iter()
        .map(|l| {
            let (m, p) = l.split_once(' ').unwrap();
            format!("{m} {}", path_of(&format!("http://h{p}")))
        })
        .collect();
    listed.sort();
    expected.sort();
    assert_eq!(listed, expected, "the listing is not what the server saw");
    let statuses: Vec<u64> = api.iter().map(|r| r["status"].as_u64().unwrap()).collect();
    for code in [200, 201, 204, 404] {
        assert!(statuses.contains(&code), "no {code} listed: {statuses:?}");
    }
    assert!(api.iter().any(|r| r["type"] == "xmlhttprequest"), "no XHR/fetch listed");
    assert!(api.iter().any(|r| r["type"] == "ping"), "the beacon is not listed");

    // ---- filters: URL (substring and /regex/), method, status; static files
    let (r, _) = list(&mut s, &mut outputs, json!({ "filter": "/items/9999" })).await;
    assert_eq!(r.len(), 3, "{r:?}");
    assert!(r.iter().all(|x| x["status"] == 404));
    let (r, _) = list(&mut s, &mut outputs, json!({ "filter": r"/items\/[0-9]+$/", "method": "delete" })).await;
    assert_eq!(r.len(), 3, "{r:?}");
    assert!(r.iter().all(|x| x["status"] == 204 && x["method"] == "DELETE"));
    let (r, _) = list(&mut s, &mut outputs, json!({ "status": "4xx" })).await;
    assert!(r.len() >= 3 && r.iter().all(|x| (400..500).contains(&x["status"].as_u64().unwrap())), "{r:?}");
    let (r, _) = list(&mut s, &mut outputs, json!({ "status": "201", "method": "POST" })).await;
    assert_eq!(r.len(), 5, "{r:?}");
    let (plain, data) = list(&mut s, &mut outputs, json!({})).await;
    assert!(data["static"].as_u64().unwrap() >= 3, "static files not counted: {data}");
    assert!(plain.iter().all(|x| !["image", "script", "stylesheet"].contains(&x["type"].as_str().unwrap())));
    let (st, _) = list(&mut s, &mut outputs, json!({ "types": ["static"] })).await;
    for f in ["app.css", "logo.svg", "lib.js", "app.js"] {
        assert!(st.iter().any(|x| x["url"].as_str().unwrap().ends_with(f)), "{f} not listed as static: {st:?}");
    }
    s.mcp.call("browser_network_requests", json!({ "status": "7xx" })).await.unwrap().expect_error("INVALID_REQUEST");
    s.mcp.call("browser_network_requests", json!({ "filter": "/(/" })).await.unwrap().expect_error("INVALID_REQUEST");

    // ---- a body's harmless fields are readable; credentials are not
    let post = api.iter().find(|x| x["method"] == "POST" && x["url"].as_str().unwrap().ends_with("/items")).unwrap();
    let r = s.mcp.ok("browser_network_request", json!({ "id": post["id"], "part": "request-body" })).await;
    let r = r.expect_untrusted();
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(r.text().contains("\"title\":\"Item ") && r.text().contains("\"qty\""), "{}", r.text());
    let login = api.iter().find(|x| x["url"].as_str().unwrap().ends_with("/login")).unwrap();
    let r = s.mcp.ok("browser_network_request", json!({ "id": login["id"] })).await.expect_untrusted();
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    let t = r.text().to_lowercase();
    assert!(t.contains("\"username\":\"ann\"") && t.contains("\"password\":\"••••\""), "{t}");
    assert!(t.contains("set-cookie: <redacted>"), "{t}");
    assert!(t.contains("x-id-token: <redacted>") && t.contains("x-access-token: <redacted>"), "{t}");
    assert!(t.contains("content-type: application/json"), "{t}");
    let r = s.mcp.ok("browser_network_request", json!({ "id": post["id"], "part": "request-headers" })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    let t = r.text().to_lowercase();
    assert!(t.contains("authorization: <redacted>") && t.contains("x-csrf-token: <redacted>"), "{t}");
    let r = s.mcp.ok("browser_network_request", json!({ "id": post["id"], "part": "response-body" })).await;
    assert!(r.text().contains("not captured"), "{}", r.text());
    // reveal is refused without --allow-reveal
    let r = s.mcp.call("browser_network_request", json!({ "id": login["id"], "reveal": true })).await.unwrap();
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    r.expect_error("PERMISSION_DENIED");

    // ---- a stored secret, filled by the agent, sent by the page as `extra`:
    // the secret crosses the socket only in the fill message; what the page
    // sends after a sensitive field was filled is listed without its parts
    // (`shared::withhold`): the note is listed, its body is not kept.
    let snap = snapshot(&mut s.mcp, json!({})).await;
    outputs.extend_from_slice(snap.raw.to_string().as_bytes());
    let field = ref_of(&snap.snapshot(), "textbox", "API token").expect("the API token field");
    let save = ref_of(&snap.snapshot(), "button", "Save note").expect("the Save note button");
    let fill = json!({ "fields": [ { "ref": field, "value": { "secret": SECRET_NAME } } ] });
    let (r, _) = human.approving(async { s.mcp.call("browser_fill_form", fill).await.unwrap() }).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    r.expect_ok("fill the secret");
    let (r, _) = human.approving(async { s.mcp.call("browser_click", json!({ "ref": save })).await.unwrap() }).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    r.expect_ok("save the note");
    // Control: the site really got the secret, under a harmless name.
    for _ in 0..50 {
        if s.server.netapp().notes().iter().any(|b| b.contains(&format!("\"extra\":\"{note}\""))) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        s.server.netapp().notes().iter().any(|b| b.contains(&format!("\"extra\":\"{note}\""))),
        "{:?}",
        s.server.netapp().notes()
    );
    let mut notes = Vec::new();
    for _ in 0..50 {
        (notes, _) = list(&mut s, &mut outputs, json!({ "filter": "/notes", "method": "POST" })).await;
        if !notes.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(notes.len(), 1, "the note the page sent after the fill is not listed: {notes:?}");
    assert!(
        notes[0]["withheld"].as_str().is_some_and(|w| w.contains("field of the page that sent it was filled")),
        "the note sent after the fill is not marked withheld: {notes:?}"
    );
    let r = s.mcp.ok("browser_network_request", json!({ "id": notes[0]["id"], "part": "request-body" })).await;
    let r = r.expect_untrusted();
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(
        r.text().contains("parts withheld") && !r.text().contains("extra"),
        "the body of a request sent after the fill is readable: {}",
        r.text()
    );
    // Control: a request the page made before the fill keeps its body.
    let r = s.mcp.ok("browser_network_request", json!({ "id": post["id"], "part": "request-body" })).await;
    assert!(r.text().contains("\"title\":\"Item "), "a request from before the fill lost its body: {}", r.text());

    // ---- before an export nothing of the capture is on disk
    let home = s.daemon.home().to_path_buf();
    assert!(!home.join("exports").exists(), "an exports folder before any export");
    let mut needles: Vec<(String, Needles)> =
        creds.all().into_iter().map(|(n, v)| (n.to_string(), Needles::for_secret(v))).collect();
    needles.push(("stored secret".into(), Needles::for_secret(&note)));
    // The capture's harmless content is a marker: not on disk before.
    let marker = Needles::for_secret("/netapp/api/items?page=7&sort=name");
    let (early, files) = marker.find_in_tree(&home);
    assert!(!files.is_empty());
    assert!(early.is_empty(), "capture content on disk before an export: {early:?}");

    // ---- export: a `name` with ../ stays in the exports folder; HAR 1.2
    let r = s.mcp.ok("browser_network_export", json!({ "name": "../../escape", "tab": tab })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    let path = std::path::PathBuf::from(r.data()["path"].as_str().unwrap());
    assert_eq!(path, home.join("exports").join("escape.har"), "{}", r.raw);
    let entries = r.data()["entries"].as_u64().unwrap();
    assert!(entries >= 36, "too few entries: {entries}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let har: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(har["log"]["entries"].as_array().unwrap().len() as u64, entries);
    netapp::validate_har(&path).unwrap_or_else(|e| panic!("the HAR is not valid HAR 1.2: {e}"));
    // Chrome DevTools' own importer (the Network panel's "Import HAR file")
    // opens it: every entry, with its method, URL and status.
    let imported =
        tests::har::devtools_import(&s.browser.cdp, &String::from_utf8(std::fs::read(&path).unwrap()).unwrap())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let exported: Vec<tests::har::Imported> = har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| tests::har::Imported {
            method: e["request"]["method"].as_str().unwrap_or_default().to_string(),
            url: e["request"]["url"].as_str().unwrap_or_default().to_string(),
            status: e["response"]["status"].as_i64().unwrap_or(-1),
        })
        .collect();
    // The export lists entries by start time, as HAR 1.2 prefers.
    let starts: Vec<&str> =
        har["log"]["entries"].as_array().unwrap().iter().map(|e| e["startedDateTime"].as_str().unwrap_or("")).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "the export is not in start order: {starts:?}");
    // DevTools may order requests that started in the same millisecond its own way.
    let key = |r: &tests::har::Imported| (r.method.clone(), r.url.clone(), r.status);
    let (mut imported_sorted, mut exported_sorted) = (imported.clone(), exported.clone());
    imported_sorted.sort_by_key(key);
    exported_sorted.sort_by_key(key);
    assert_eq!(imported_sorted, exported_sorted, "DevTools read the export otherwise");
    assert!(imported.iter().any(|r| r.method == "PATCH") && imported.iter().any(|r| r.status == 204));
    // Control for the check before the export: the marker is in it now.
    assert!(!marker.find("export", &std::fs::read(&path).unwrap()).is_empty(), "the marker is not in the export");

    // ---- the first load of `browser_tabs new {url}` is captured
    let first = s.url("/netapp/logo.svg?first-load=1");
    let r = s.mcp.ok("browser_tabs", json!({ "action": "new", "url": first })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    let mut loads = Vec::new();
    for _ in 0..25 {
        (loads, _) = list(&mut s, &mut outputs, json!({ "filter": "first-load" })).await;
        if !loads.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(loads.len(), 1, "the first load of a new tab is not listed: {loads:?}");
    assert_eq!(loads[0]["type"], "main_frame", "{loads:?}");

    // ---- another session sees none of it
    let mut other = s.daemon.mcp_as("other-agent").await.unwrap();
    let r = other.ok("browser_network_requests", json!({})).await;
    assert_eq!(r.data()["total"], 0, "{}", r.raw);
    assert_eq!(r.data()["static"], 0, "{}", r.raw);
    let r = other.call("browser_network_request", json!({ "id": login["id"] })).await.unwrap();
    r.expect_error("NOT_FOUND");
    let r = other.ok("browser_network_export", json!({ "name": "other" })).await;
    assert_eq!(r.data()["entries"], 0, "{}", r.raw);
    outputs.extend_from_slice(other.received());

    // ---- the canary scan: every output, the export, the logs, the home
    let mcp_bytes = s.mcp.received().to_vec();
    let status = s.daemon.stop();
    assert!(status.is_some_and(|st| st.success()), "the daemon did not stop cleanly: {status:?}");
    let (o, e) = s.daemon.logs();
    let mut hits: Vec<(String, Hit)> = Vec::new();
    let mut sinks: Vec<(String, Vec<u8>)> = vec![
        ("MCP responses".into(), mcp_bytes),
        ("tool outputs".into(), outputs),
        ("daemon stdout".into(), std::fs::read(o).unwrap_or_default()),
        ("daemon stderr".into(), std::fs::read(e).unwrap_or_default()),
    ];
    // Control: the scan finds what the site received.
    let control: Vec<u8> = s.server.netapp().notes().join("\n").into_bytes();
    assert!(!needles.last().unwrap().1.find("control", &control).is_empty(), "the scan would not notice a leak");
    let mut scanned = 0;
    for (name, n) in &needles {
        for (place, bytes) in &sinks {
            hits.extend(n.find(place, bytes).into_iter().map(|h| (name.clone(), h)));
        }
        let (tree, files) = n.find_in_tree(&home);
        scanned = files.len();
        hits.extend(tree.into_iter().map(|h| (name.clone(), h)));
    }
    assert!(scanned >= 3, "too few home files scanned: {scanned}");
    sinks.clear();
    assert!(hits.is_empty(), "credentials leaked: {hits:#?}");
}
