//! Table tests of every inference rule, from the data in `fixtures/forge/`.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::credentials::Credentials;
use crate::schema::Shape;
use crate::segment;
use crate::template::{self, Sample, Seg};
use crate::{naming, yaml};

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forge").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn rows(name: &str) -> Vec<Vec<String>> {
    fixture(name)
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

#[test]
fn segments_and_formats() {
    for r in rows("segments.tsv") {
        assert_eq!(segment::kind(&r[0]).as_str(), r[1], "kind of {:?}", r[0]);
        assert_eq!(segment::format(&r[0]).unwrap_or("-"), r[2], "format of {:?}", r[0]);
    }
}

#[test]
fn templates() {
    let data: Value = serde_json::from_str(&fixture("templates.json")).unwrap();
    for case in data["cases"].as_array().unwrap() {
        let samples: Vec<Sample> = case["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let parts: Vec<&str> = r.as_str().unwrap().split(' ').collect();
                Sample {
                    method: parts[0].into(),
                    segments: parts[1].split('/').filter(|s| !s.is_empty()).map(str::to_string).collect(),
                    keys: parts[2].split(',').filter(|k| *k != "-").map(str::to_string).collect(),
                }
            })
            .collect();
        let mut got: Vec<String> = template::learn(&samples)
            .iter()
            .flat_map(|t| t.ops.keys().map(move |m| format!("{m} {}", t.pattern())))
            .collect();
        got.sort();
        let want: Vec<String> =
            case["templates"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().into()).collect();
        assert_eq!(got, want, "{}", case["name"]);
    }
}

#[test]
fn schemas() {
    let data: Value = serde_json::from_str(&fixture("schemas.json")).unwrap();
    for case in data["cases"].as_array().unwrap() {
        let mut creds = Credentials::default();
        for c in case["credentials"].as_array().into_iter().flatten() {
            creds.add(c.as_str().unwrap());
        }
        let mut shape = Shape::default();
        case["samples"].as_array().unwrap().iter().for_each(|s| shape.add(s));
        assert_eq!(shape.to_schema(None, &creds), case["schema"], "{}", case["name"]);
    }
}

#[test]
fn operation_ids_and_parameter_names() {
    for r in rows("names.tsv") {
        let segs: Vec<Seg> = r[1]
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| {
                if s == "{}" {
                    Seg::Param { kind: segment::Kind::Integer, values: Default::default() }
                } else {
                    Seg::Lit(s.into())
                }
            })
            .collect();
        assert_eq!(naming::operation_id(&r[0], &segs), r[2], "{} {}", r[0], r[1]);
        let names = naming::param_names(&segs);
        let want: Vec<String> = if r[3] == "-" { vec![] } else { r[3].split(',').map(str::to_string).collect() };
        assert_eq!(names, want, "{} {}", r[0], r[1]);
    }
}

#[test]
fn yaml_round_trips_and_quotes_every_string() {
    let v = json!({"openapi": "3.1.0", "a": {"b": [1, "two: 2", {"c": null, "d": []}], "e": {}}, "k: x": "- y\n#z"});
    let text = yaml::to_string(&v);
    assert!(text.contains("\"k: x\": \"- y\\n#z\""), "{text}");
    assert_eq!(yaml::from_str(&text).unwrap(), v);
}

fn har(entries: Vec<Value>) -> crate::har::Har {
    serde_json::from_value(json!({"log": {"entries": entries}})).unwrap()
}

fn entry(method: &str, url: &str, req_headers: Value, body: Option<&str>, status: i64, answer: Option<Value>) -> Value {
    let mut e = json!({
        "request": {"method": method, "url": url, "headers": req_headers},
        "response": {"status": status, "headers": [], "content": {"mimeType": "application/json"}},
    });
    if let Some(b) = body {
        e["request"]["postData"] = json!({"mimeType": "application/json", "text": b});
    }
    if let Some(a) = answer {
        e["response"]["content"]["text"] = json!(a.to_string());
        e["response"]["headers"] = json!([{"name": "Content-Type", "value": "application/json"}]);
    }
    e
}

#[test]
fn credentials_never_reach_the_spec_and_schemes_have_no_values() {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz";
    let auth = json!([{"name": "Authorization", "value": format!("Bearer {jwt}")}, {"name": "Cookie", "value": "sid=plainsessionvalue"}]);
    let h = har(vec![
        entry(
            "POST",
            "https://api.example/login",
            json!([]),
            Some(r#"{"user":"a","password":"pw-123456"}"#),
            200,
            Some(json!({"token": jwt, "echo": "pw-123456"})),
        ),
        entry(
            "GET",
            "https://api.example/items/1?api_key=plainkey123",
            auth.clone(),
            None,
            200,
            Some(json!({"id": 1, "note": "plainsessionvalue"})),
        ),
        entry(
            "GET",
            "https://api.example/items/2?api_key=plainkey123",
            auth,
            None,
            200,
            Some(json!({"id": 2, "note": "x"})),
        ),
    ]);
    // The answer echoes the session value under an innocent key: the
    // learner must refuse rather than write it… but schemas hold no
    // values, so the spec is clean.
    let learned = crate::learn(&[h], &crate::LearnOptions::default()).unwrap();
    let text = learned.spec.to_string();
    for s in [jwt, "plainsessionvalue", "pw-123456", "plainkey123"] {
        assert!(!text.contains(s), "{s} in {text}");
    }
    let schemes = &learned.spec["components"]["securitySchemes"];
    assert_eq!(schemes["bearerAuth"], json!({"type": "http", "scheme": "bearer"}));
    assert_eq!(schemes["sidCookie"], json!({"type": "apiKey", "in": "cookie", "name": "sid"}));
    let op = &learned.spec["paths"]["/items/{itemId}"]["get"];
    assert_eq!(op["operationId"], "getItem");
    assert_eq!(op["x-samples"], 2);
    assert_eq!(op["x-confidence"], "medium");
    assert_eq!(op["x-effect"], "read");
    // Control: the same capture with the token as a path literal is caught.
    let h2 = har(vec![entry(
        "GET",
        &format!("https://api.example/t/{jwt}"),
        json!([]),
        None,
        200,
        Some(json!({"a": 1, "b": 2})),
    )]);
    let text = crate::learn(&[h2], &crate::LearnOptions::default()).unwrap().spec.to_string();
    assert!(!text.contains(jwt), "{text}");
    assert!(text.contains("{credential}"), "{text}");
}

#[test]
fn a_stored_secret_is_refused_from_examples() {
    let h = har(vec![entry(
        "GET",
        "https://api.example/s?q=my-stored-secret",
        json!([]),
        None,
        200,
        Some(json!({"a": 1})),
    )]);
    let opts = crate::LearnOptions { known_secrets: vec!["my-stored-secret".into()], ..Default::default() };
    let text = crate::learn(std::slice::from_ref(&h), &opts).unwrap().spec.to_string();
    assert!(!text.contains("my-stored-secret"), "{text}");
    // Control: without it, the example is written.
    let text = crate::learn(&[h], &crate::LearnOptions::default()).unwrap().spec.to_string();
    assert!(text.contains("my-stored-secret"), "{text}");
}

#[test]
fn the_client_refuses_a_credential_and_names_the_file() {
    let spec = json!({"openapi": "3.1.0", "info": {"title": "T"}, "paths": {
        "/a/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz": {"get": {"operationId": "a", "responses": {"200": {"description": "OK"}}}}}});
    for lang in [crate::client::Lang::Python, crate::client::Lang::TypeScript] {
        let e = crate::client::generate(&spec, lang, &[]).unwrap_err().to_string();
        assert!(e.starts_with("GENERATION_FAILED: client."), "{e}");
        assert!(!e.contains("eyJ"), "{e}");
    }
    let ok = json!({"openapi": "3.1.0", "info": {"title": "T"}, "paths": {
        "/a/{id}": {"get": {"operationId": "getA", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}], "responses": {"200": {"description": "OK"}}}}}});
    let files = crate::client::generate(&ok, crate::client::Lang::Python, &[]).unwrap();
    assert!(files[0].text.contains("def get_a(self, id):"), "{}", files[0].text);
    // A person's stored secret in the description is refused too.
    let named = json!({"openapi": "3.1.0", "info": {"title": "T"}, "paths": {
        "/a/hunter2hunter2": {"get": {"operationId": "a", "responses": {"200": {"description": "OK"}}}}}});
    assert!(crate::client::generate(&named, crate::client::Lang::Python, &["hunter2hunter2".into()]).is_err());
    assert!(crate::client::generate(&named, crate::client::Lang::Python, &[]).is_ok());
}

#[test]
fn folders_chaperone_did_not_make_are_refused() {
    use crate::client::may_write;
    assert!(may_write(false, false, false, false).is_ok());
    assert!(may_write(true, true, false, false).is_ok());
    assert!(may_write(true, false, true, false).is_ok());
    assert!(may_write(true, false, false, false).is_err());
    assert!(may_write(true, false, false, true).is_ok());
}

#[test]
fn which_entries_are_the_api() {
    use crate::har::{Entry, Pair, Request, Response};
    for r in rows("keep.tsv") {
        let opt = |s: &str| (s != "-").then(|| s.to_string());
        let header = |v: &str| opt(v).map(|v| Pair { name: "Content-Type".into(), value: v }).into_iter().collect();
        let e = Entry {
            request: Request {
                method: r[0].clone(),
                url: r[1].clone(),
                headers: header(&r[5]),
                query_string: Vec::new(),
                post_data: opt(&r[5]).map(|m| crate::har::PostData {
                    mime_type: m,
                    text: Some("{}".into()),
                    params: Vec::new(),
                }),
            },
            response: Response { status: r[3].parse().unwrap(), headers: header(&r[4]), content: None },
            resource_type: opt(&r[2]),
        };
        assert_eq!(crate::keep::skip_reason(&e).unwrap_or("api"), r[6], "{} {}", r[0], r[1]);
    }
}

#[test]
fn hars_of_other_exporters_are_read_leniently() {
    // k6 / load-test captures (no response), a null header value, an
    // entry that is not one, and a made-up method: read, not fatal.
    let text = r#"{"log": {"entries": [
        {"index": 0, "request": {"method": "POST", "url": "http://a.example/login", "headers": []}},
        {"request": {"method": "GET", "url": "http://a.example/api/x", "headers": [{"name": "X-Trace", "value": null}]},
         "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "application/json"}],
                      "content": {"mimeType": "application/json", "text": "{\"id\": 1}"}}},
        {"request": "garbage"},
        7,
        {"request": {"method": "test_method_not_in_spec", "url": "http://a.example/api/m"},
         "response": {"status": 400, "headers": [{"name": "Content-Type", "value": "application/json"}]}}
    ]}}"#;
    let har = crate::har::parse(text).expect("lenient");
    assert_eq!(har.log.entries.len(), 3);
    assert_eq!(har.log.entries[0].response.status, 0);
    let learned = crate::learn(&[har], &crate::LearnOptions::default()).unwrap();
    let paths: Vec<&String> = learned.spec["paths"].as_object().unwrap().keys().collect();
    assert_eq!(paths, ["/api/x"]);
    // Nothing but responses-less entries: a clear error, not a panic.
    let only = r#"{"log": {"entries": [{"request": {"method": "POST", "url": "http://a.example/login"}}]}}"#;
    let e = crate::learn(&[crate::har::parse(only).unwrap()], &crate::LearnOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no API calls"), "{e}");
}

#[test]
fn scalar_parameters_are_typed_from_every_value() {
    let creds = Credentials::default();
    let cases: &[(&[&str], &str)] = &[
        (&["1", "25"], "integer"),
        (&["-3", "7"], "integer"),
        (&["2.25", "3"], "number"),
        (&["-0.5"], "number"),
        (&["1.2.3"], "string"),
        (&[".5"], "string"),
        (&["5."], "string"),
        (&["-"], "string"),
        (&["true", "false"], "boolean"),
        (&["true", "1"], "string"),
        (&["12345678901234567890"], "string"),
        (&["abc"], "string"),
    ];
    for (values, want) in cases {
        let vs: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let got = crate::schema::scalar_schema(&vs, None, &creds);
        assert_eq!(got["type"], *want, "{values:?}: {got}");
    }
}

#[test]
fn where_a_credential_was_found_is_said_without_it() {
    let mut creds = Credentials::default();
    creds.add("s3cr3t-token-value");
    let v = json!({"paths": {"/api/keys/s3cr3t-token-value": {"get": {}}, "/ok": {"x": "s3cr3t-token-value"}}});
    let at = creds.find_in(&v).unwrap();
    assert!(!at.contains("s3cr3t"), "{at}");
    assert!(at.starts_with("/paths/"), "{at}");
    let at = creds.find_in(&json!({"a": {"b": ["x", "s3cr3t-token-value"]}})).unwrap();
    assert_eq!(at, "/a/b/1");
}

#[test]
fn literal_segments_cannot_read_as_parameters() {
    use crate::openapi::encode_literal;
    for (l, want) in [
        ("books", "books"),
        ("${x}", "$%7Bx%7D"),
        ("a b", "a%20b"),
        ("ünï", "%C3%BCn%C3%AF"),
        ("new\nline", "new%0Aline"),
        ("a\"b", "a%22b"),
        ("v1.json", "v1.json"),
        ("it's", "it's"),
    ] {
        assert_eq!(encode_literal(l), want, "{l:?}");
    }
}

#[test]
fn deep_answers_are_described_to_a_bounded_depth() {
    let mut v = json!(1);
    for _ in 0..200 {
        v = json!({ "d": v });
    }
    let creds = Credentials::default();
    let schema = Shape::of(&v).to_schema(None, &creds);
    fn depth(v: &Value) -> usize {
        match v {
            Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
            Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }
    let d = depth(&schema);
    assert!(d <= 2 * crate::schema::MAX_DEPTH + 2, "{d}");
    // It reads back.
    let text = serde_json::to_string(&schema).unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_ok());
}

#[test]
fn hostile_names_give_a_consistent_description_and_clients() {
    let weird = [
        "class",
        "def",
        "__proto__",
        "constructor",
        "a\"b",
        "it's",
        "x\\y",
        "${x}",
        "*/",
        "\"\"\"",
        "ünï",
        "with space",
        "new\nline",
        "await",
        "None",
    ];
    let mut entries = Vec::new();
    for w in weird {
        let seg: String = url::form_urlencoded::byte_serialize(w.as_bytes()).collect::<String>().replace('+', "%20");
        let answer = serde_json::to_string(&json!({ w: 1, "ok": true })).unwrap();
        entries.push(json!({
            "request": {"method": "GET", "url": format!("http://api.example/api/{seg}/items?{seg}=1")},
            "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "application/json"}],
                         "content": {"mimeType": "application/json", "text": answer}},
            "_resourceType": "fetch"
        }));
    }
    let har = crate::har::parse(&json!({"log": {"entries": entries}}).to_string()).unwrap();
    let learned = crate::learn(&[har], &crate::LearnOptions::default()).unwrap();
    for (path, item) in learned.spec["paths"].as_object().unwrap() {
        let in_path = crate::client::path_param_names(path);
        for (m, op) in item.as_object().unwrap() {
            let declared: Vec<&str> = op["parameters"]
                .as_array()
                .map(|ps| ps.iter().filter(|p| p["in"] == "path").filter_map(|p| p["name"].as_str()).collect())
                .unwrap_or_default();
            assert_eq!(in_path, declared, "{m} {path}");
        }
        assert!(!path.contains(['\n', '"', ' ', '\\']), "{path:?}");
    }
    for lang in [crate::client::Lang::Python, crate::client::Lang::TypeScript] {
        let files = crate::client::generate(&learned.spec, lang, &[]).expect("a client");
        assert!(!files.is_empty());
    }
}
