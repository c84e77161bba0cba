//! The attacks of issue 47 ("Credentials in the forge's output"), one
//! table row each: a page copies its own credentials — the bearer token,
//! a session header nobody listed (`X-Acme-Ref`) — under innocent names,
//! into paths and bodies, in other spellings (hex, base64, reversed,
//! upper case). Every file the forge writes (the description as JSON and
//! YAML, both clients) must hold no spelling of any of them
//! (`credentials::spellings`, checked against independent vectors in
//! `fixtures/forge/spellings.tsv`), while harmless values (`status:
//! "active"`) still become examples and enums.

use serde_json::{Value, json};
use shared::network::{Captured, Header, RequestBody};

use crate::credentials::{Credentials, base64, spellings};
use crate::exports::Format;

/// The page's bearer token (base64 holds a `+`).
const BEARER: &str = "Zq7-Lm2.xR9~vB4nT8wK";
/// The value of the site's own session header (base64 holds a `/`).
const ACME_REF: &str = "ac?me-7f3kq9zx2mw8";

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn rev(s: &str) -> String {
    s.chars().rev().collect()
}

fn pct(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn url_b64(s: &str) -> String {
    base64(s.as_bytes()).replace('+', "-").replace('/', "_").trim_end_matches('=').to_string()
}

/// One HAR entry of the API (JSON in and out) carrying the page's
/// credentials in its headers.
fn call(method: &str, path: &str, body: Option<Value>, answer: Value) -> Value {
    let mut e = json!({
        "request": {"method": method, "url": format!("https://api.acme.example{path}"), "headers": [
            {"name": "Authorization", "value": format!("Bearer {BEARER}")},
            {"name": "X-Acme-Ref", "value": ACME_REF},
            {"name": "Accept", "value": "application/json"},
            {"name": ":authority", "value": "api.acme.example"},
            {"name": "Sec-GPC", "value": "1"},
        ]},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "application/json"}],
                     "content": {"mimeType": "application/json", "text": answer.to_string()}},
        "_resourceType": "fetch",
    });
    if let Some(b) = body {
        e["request"]["postData"] = json!({"mimeType": "application/json", "text": b.to_string()});
    }
    e
}

/// (what the page did, the request it made).
fn attacks() -> Vec<(&'static str, Value)> {
    let item = |i: u32, status: &str| json!({"id": i, "status": status, "name": format!("item {i}")});
    let mut rows: Vec<(&'static str, Value)> = Vec::new();
    for i in 1..=6 {
        let status = if i % 3 == 0 { "paused" } else { "active" };
        rows.push((
            "control: items by id, a status query",
            call("GET", &format!("/api/items/{i}?status=active&page=2"), None, item(i, status)),
        ));
    }
    let ok = json!({"ok": true, "count": 1});
    rows.extend([
        (
            "the bearer in a query parameter",
            call("GET", &format!("/api/search?from={BEARER}&q=lamp"), None, ok.clone()),
        ),
        (
            "the bearer upper-cased in a query parameter",
            call("GET", &format!("/api/search?from={}&q=desk", BEARER.to_ascii_uppercase()), None, ok.clone()),
        ),
        ("the bearer's hex as a path segment", call("GET", &format!("/api/files/{}", hex(BEARER)), None, ok.clone())),
        (
            "the bearer's upper-case hex as a path segment",
            call("GET", &format!("/api/files/{}", hex(BEARER).to_ascii_uppercase()), None, ok.clone()),
        ),
        (
            "the bearer's base64 in a query (its + read as a space)",
            call("GET", &format!("/api/blobs/list?sig={}", base64(BEARER.as_bytes())), None, ok.clone()),
        ),
        (
            "the bearer's url-safe base64 as a path segment",
            call("GET", &format!("/api/blobs/{}", url_b64(BEARER)), None, ok.clone()),
        ),
        (
            "base64 of `Bearer <token>` in a query",
            call(
                "GET",
                &format!("/api/blobs/list?h={}", pct(&base64(format!("Bearer {BEARER}").as_bytes()))),
                None,
                ok.clone(),
            ),
        ),
        (
            "the bearer reversed as a path segment",
            call("GET", &format!("/api/mirror/{}", pct(&rev(BEARER))), None, ok.clone()),
        ),
        (
            "the session header's value as a path segment",
            call("GET", &format!("/api/refs/{}/items", pct(ACME_REF)), None, ok.clone()),
        ),
        (
            "the session header's value in a query",
            call("GET", &format!("/api/refs?ref={}&kind=all", pct(ACME_REF)), None, ok.clone()),
        ),
        (
            "the session header's standard base64 (with a /) across segments",
            call("GET", &format!("/api/sessions/{}/state", base64(ACME_REF.as_bytes())), None, ok.clone()),
        ),
        (
            "the session header's hex in a path",
            call("GET", &format!("/api/sessions/{}", hex(ACME_REF)), None, ok.clone()),
        ),
        (
            "the session header's value in a body and its answer",
            call(
                "POST",
                "/api/notes",
                Some(json!({"ref": ACME_REF, "note": "hi", "copy": base64(BEARER.as_bytes())})),
                json!({"ref": ACME_REF, "saved": true}),
            ),
        ),
    ]);
    for _ in 0..6 {
        rows.push((
            "the session header's value in six bodies (enum bait)",
            call(
                "POST",
                "/api/notes",
                Some(json!({"ref": ACME_REF, "note": "hi"})),
                json!({"ref": ACME_REF, "saved": true}),
            ),
        ));
    }
    rows
}

/// Every spelling of every credential found in `text`, as `what (spelling n)`.
fn spelled_in(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    for (what, v) in
        [("the bearer", BEARER), ("X-Acme-Ref", ACME_REF), ("`Bearer <token>`", &format!("Bearer {BEARER}"))]
    {
        for (n, s) in spellings(v).iter().enumerate() {
            if lower.contains(&s.to_ascii_lowercase()) {
                out.push(format!("{what} (spelling {n})"));
            }
        }
    }
    out
}

/// The description (JSON and YAML) and both clients' files: (name, text).
fn every_file(learned: &crate::Learned) -> Vec<(String, String)> {
    let mut files = vec![
        ("spec.json".to_string(), learned.to_text(Format::Json).expect("the JSON text")),
        ("spec.yaml".to_string(), learned.to_text(Format::Yaml).expect("the YAML text")),
    ];
    for lang in [crate::client::Lang::Python, crate::client::Lang::TypeScript] {
        for f in crate::client::generate(&learned.spec, lang, &[]).expect("a client") {
            files.push((format!("{lang:?}/{}", f.name), f.text));
        }
    }
    files
}

fn har_of<'a>(rows: impl IntoIterator<Item = &'a Value>) -> crate::har::Har {
    serde_json::from_value(json!({"log": {"entries": rows.into_iter().collect::<Vec<_>>()}})).unwrap()
}

/// Each attack alone (beside the harmless calls): no file holds a spelling.
#[test]
fn each_copied_credential_alone_reaches_no_file() {
    let rows = attacks();
    let controls: Vec<&Value> = rows.iter().filter(|(w, _)| w.starts_with("control")).map(|(_, e)| e).collect();
    let mut tried = 0;
    for (what, attack) in rows.iter().filter(|(w, _)| !w.starts_with("control")) {
        let har = har_of(controls.iter().copied().chain([attack]));
        let learned = crate::learn(&[har], &crate::LearnOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
        for (name, text) in every_file(&learned) {
            assert_eq!(spelled_in(&text), Vec::<String>::new(), "{what}: {name}:\n{text}");
        }
        tried += 1;
    }
    assert!(tried >= 14, "{tried}");
}

/// All attacks at once: no file holds a spelling; each copy in a path is
/// a `{credential}` parameter; harmless values stay examples and enums.
#[test]
fn no_spelling_of_a_copied_credential_reaches_any_file_and_harmless_values_stay() {
    let rows = attacks();
    let har = har_of(rows.iter().map(|(_, e)| e));
    // Control: the input really holds every attack.
    let input = serde_json::to_string(&rows.iter().map(|(_, e)| e).collect::<Vec<_>>()).unwrap();
    for needle in [hex(BEARER), url_b64(BEARER), pct(ACME_REF), hex(ACME_REF), BEARER.to_ascii_uppercase()] {
        assert!(input.contains(&needle), "control: {needle} is in the HAR");
    }
    let learned = crate::learn(&[har], &crate::LearnOptions::default()).expect("learned");
    for (name, text) in every_file(&learned) {
        assert_eq!(spelled_in(&text), Vec::<String>::new(), "{name}:\n{text}");
    }
    let paths = learned.spec["paths"].as_object().unwrap();
    let mut keys: Vec<&str> = paths.keys().map(String::as_str).collect();
    keys.sort();
    // Each copy in a path is a parameter; the base64 that spans two segments is two.
    for want in [
        "/api/files/{credential}",
        "/api/blobs/{credential}",
        "/api/mirror/{credential}",
        "/api/refs/{credential}/items",
        "/api/sessions/{credential}",
        "/api/sessions/{credential}/{credential2}/state",
        "/api/items/{itemId}",
    ] {
        assert!(keys.contains(&want), "{want} in {keys:?}");
    }
    for (path, item) in paths {
        for op in item.as_object().unwrap().values() {
            let declared: Vec<&str> = op["parameters"]
                .as_array()
                .map(|ps| ps.iter().filter(|p| p["in"] == "path").filter_map(|p| p["name"].as_str()).collect())
                .unwrap_or_default();
            assert_eq!(crate::client::path_param_names(path), declared, "{path}");
        }
    }
    // No example from the copies, the session header or an identifier.
    let get = &paths["/api/items/{itemId}"]["get"];
    let param = |op: &Value, name: &str| {
        op["parameters"].as_array().unwrap().iter().find(|p| p["name"] == name).cloned().unwrap_or(Value::Null)
    };
    assert!(param(get, "itemId").get("example").is_none(), "an id is no example: {get}");
    let search = &paths["/api/search"]["get"];
    assert!(param(search, "from").get("example").is_none(), "{search}");
    assert!(param(&paths["/api/refs"]["get"], "ref").get("example").is_none());
    // Control: harmless values are still examples and enums.
    assert_eq!(param(get, "status")["example"], "active", "{get}");
    assert_eq!(param(get, "page")["example"], 2, "{get}");
    assert_eq!(param(search, "q")["example"], "lamp", "{search}");
    assert_eq!(param(&paths["/api/refs"]["get"], "kind")["example"], "all");
    let answer = &get["responses"]["200"]["content"]["application/json"]["schema"];
    let answer = match answer.get("$ref").and_then(Value::as_str) {
        Some(r) => &learned.spec["components"]["schemas"][r.rsplit('/').next().unwrap()],
        None => answer,
    };
    assert_eq!(answer["properties"]["status"]["enum"], json!(["active", "paused"]), "{answer}");
    // The session header's value, repeated as often as `note`'s, is no enum.
    let body = &paths["/api/notes"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"];
    assert_eq!(body["note"]["enum"], json!(["hi"]), "control: {body}");
    assert!(body["ref"].get("enum").is_none(), "{body}");
}

fn captured(method: &str, url: &str, body: Option<&str>) -> Captured {
    Captured {
        tab: 1,
        url: url.into(),
        method: method.into(),
        resource_type: "xmlhttprequest".into(),
        status: 200,
        status_line: "HTTP/1.1 200 OK".into(),
        error: None,
        started_ms: 0.0,
        duration_ms: 1.0,
        request_headers: vec![
            Header { name: "Authorization".into(), value: format!("Bearer {BEARER}") },
            Header { name: "X-Acme-Ref".into(), value: ACME_REF.into() },
            Header { name: "Content-Type".into(), value: "application/json".into() },
        ],
        response_headers: vec![Header { name: "Content-Type".into(), value: "application/json".into() }],
        request_body: body.map(|b| RequestBody::Raw { text: b.into(), cut: false }),
        redirect_url: None,
        from_cache: false,
        response_body: None,
        websocket_messages: Vec::new(),
    }
}

/// The MCP tool's way: the learner reads the redacted capture, which
/// still holds the copies under innocent names; the final scan needs the
/// unredacted values (`capture::credentials`).
#[test]
fn the_redacted_capture_is_scanned_against_its_unredacted_credentials() {
    let base = "http://a.example";
    let mut raw = Vec::new();
    for i in [1, 2, 3] {
        raw.push(captured("GET", &format!("{base}/api/items/{i}?from={BEARER}&status=active"), None));
    }
    raw.push(captured("GET", &format!("{base}/api/blob/{}", hex(BEARER)), None));
    raw.push(captured("GET", &format!("{base}/api/refs/{}/items", pct(ACME_REF)), None));
    raw.push(captured("POST", &format!("{base}/api/notes?sig={}", url_b64(BEARER)), Some(r#"{"note":"hi"}"#)));
    let shown: Vec<Captured> = raw.iter().map(|c| shared::redact::redact_captured(c, &[])).collect();
    let har = || crate::har::Har {
        log: crate::har::Log { entries: shown.iter().zip(&raw).map(|(s, r)| crate::capture::entry(s, r)).collect() },
    };
    // Control: without the unredacted values, a copy is written.
    let blind = crate::learn(&[har()], &crate::LearnOptions::default()).expect("learned");
    let text = blind.to_text(Format::Json).unwrap();
    assert!(!spelled_in(&text).is_empty(), "control: the redacted capture alone lets a copy through:\n{text}");
    let opts = crate::LearnOptions { credentials: crate::capture::credentials(&raw), ..Default::default() };
    let learned = crate::learn(&[har()], &opts).expect("learned");
    for (name, text) in every_file(&learned) {
        assert_eq!(spelled_in(&text), Vec::<String>::new(), "{name}:\n{text}");
    }
    let paths = learned.spec["paths"].as_object().unwrap();
    assert!(paths.contains_key("/api/blob/{credential}"), "{:?}", paths.keys());
    assert!(paths.contains_key("/api/refs/{credential}/items"), "{:?}", paths.keys());
    let get = serde_json::to_string(&paths["/api/items/{itemId}"]).unwrap();
    assert!(get.contains(r#""example":"active""#), "control: a harmless example stays: {get}");
    // The scan's own values are never printed.
    assert_eq!(format!("{:?}", opts.credentials), format!("Credentials({} values)", opts.credentials.len()));
}

/// The final scan: a spelling the learner would have let through is
/// refused, naming the place, never the value; the client's scan too.
#[test]
fn the_final_scans_refuse_a_spelling_and_never_say_it() {
    let mut creds = Credentials::default();
    creds.add(BEARER);
    for text in [
        format!("/api/x/{}", hex(BEARER).to_ascii_uppercase()),
        format!("?t={}", base64(BEARER.as_bytes())),
        format!("{{\"a\": \"{}\"}}", base64(format!("Bearer {BEARER}").as_bytes())),
        rev(BEARER),
    ] {
        assert!(creds.holds(&text), "{text}");
        let at = creds.find_in(&json!({"paths": {"/p": {"get": {"description": text}}}})).expect("found");
        assert_eq!(at, "/paths/~1p/get/description");
    }
    let spec = json!({"openapi": "3.1.0", "info": {"title": "T"}, "paths": {
        format!("/a/{}", hex(BEARER)): {"get": {"operationId": "a", "responses": {"200": {"description": "OK"}}}}}});
    let e = crate::client::generate_refusing(&spec, crate::client::Lang::Python, &[], &creds).unwrap_err().to_string();
    assert!(e.starts_with("GENERATION_FAILED: client."), "{e}");
    assert!(spelled_in(&e).is_empty(), "{e}");
    // Control: without the value it is an ordinary path.
    assert!(crate::client::generate(&spec, crate::client::Lang::Python, &[]).is_ok());
}

#[test]
fn folders_and_files_are_never_written_through_a_link() {
    use crate::client::{Found, file_ok, folder_ok};
    let cases: &[(Found, bool, bool)] = &[
        // (what is there, folder ok, file ok)
        (Found::Absent, true, true),
        (Found::Folder, true, false),
        (Found::File, false, true),
        (Found::Link, false, false),
        (Found::Other, false, false),
    ];
    for (found, folder, file) in cases {
        assert_eq!(folder_ok(*found).is_ok(), *folder, "folder {found:?}");
        assert_eq!(file_ok(*found).is_ok(), *file, "file {found:?}");
    }
    assert!(folder_ok(Found::Link).unwrap_err().contains("symbolic link"));
    assert!(file_ok(Found::Link).unwrap_err().contains("symbolic link"));
}
