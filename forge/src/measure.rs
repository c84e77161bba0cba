//! How close a learned description is to the API as its authors
//! documented it: precision and recall of path templates (method and path,
//! parameter names ignored), of request and response fields (dotted, `[]`
//! for array items, over the operations both have) and of query
//! parameters. The documentation format is
//! `fixtures/forge/library.expected.json`.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
pub struct Expected {
    pub operations: Vec<ExpectedOp>,
}

#[derive(Debug, Deserialize)]
pub struct ExpectedOp {
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: Vec<String>,
    #[serde(default)]
    pub request: Vec<String>,
    #[serde(default)]
    pub response: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Score {
    pub precision: f64,
    pub recall: f64,
    pub found: usize,
    pub expected: usize,
    pub right: usize,
}

impl Score {
    fn of(found: &BTreeSet<String>, expected: &BTreeSet<String>) -> Score {
        let right = found.intersection(expected).count();
        let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        Score {
            precision: ratio(right, found.len()),
            recall: ratio(right, expected.len()),
            found: found.len(),
            expected: expected.len(),
            right,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Scores {
    pub templates: Score,
    pub fields: Score,
    pub query: Score,
}

/// `/books/{bookId}` → `/books/{}`.
pub fn pattern(path: &str) -> String {
    path.split('/').map(|s| if s.starts_with('{') && s.ends_with('}') { "{}" } else { s }).collect::<Vec<_>>().join("/")
}

pub fn score(spec: &Value, expected: &Expected) -> Scores {
    let mut found_t = BTreeSet::new();
    let mut found_f = BTreeSet::new();
    let mut found_q = BTreeSet::new();
    let mut want_t = BTreeSet::new();
    let mut want_f = BTreeSet::new();
    let mut want_q = BTreeSet::new();
    for e in &expected.operations {
        let key = format!("{} {}", e.method.to_ascii_uppercase(), pattern(&e.path));
        want_t.insert(key.clone());
        for f in &e.request {
            want_f.insert(format!("{key} request {f}"));
        }
        for f in &e.response {
            want_f.insert(format!("{key} response {f}"));
        }
        for q in &e.query {
            want_q.insert(format!("{key} {q}"));
        }
    }
    for (path, item) in spec["paths"].as_object().into_iter().flatten() {
        for (m, op) in item.as_object().into_iter().flatten() {
            if !["get", "post", "put", "patch", "delete"].contains(&m.as_str()) {
                continue;
            }
            let key = format!("{} {}", m.to_ascii_uppercase(), pattern(path));
            found_t.insert(key.clone());
            if !want_t.contains(&key) {
                continue;
            }
            for p in op["parameters"].as_array().into_iter().flatten() {
                if p["in"] == "query"
                    && let Some(n) = p["name"].as_str()
                {
                    found_q.insert(format!("{key} {n}"));
                }
            }
            let mut fields = BTreeSet::new();
            for s in op.pointer("/requestBody/content").and_then(Value::as_object).into_iter().flatten() {
                walk(spec, &s.1["schema"], "", &mut fields, 0);
            }
            for f in fields {
                found_f.insert(format!("{key} request {f}"));
            }
            let mut fields = BTreeSet::new();
            for (status, r) in op["responses"].as_object().into_iter().flatten() {
                if !status.starts_with('2') {
                    continue;
                }
                for s in r["content"].as_object().into_iter().flatten() {
                    walk(spec, &s.1["schema"], "", &mut fields, 0);
                }
            }
            for f in fields {
                found_f.insert(format!("{key} response {f}"));
            }
        }
    }
    Scores {
        templates: Score::of(&found_t, &want_t),
        fields: Score::of(&found_f, &want_f),
        query: Score::of(&found_q, &want_q),
    }
}

/// Field paths of a schema, `$ref`s followed.
pub fn walk(spec: &Value, s: &Value, prefix: &str, out: &mut BTreeSet<String>, depth: usize) {
    if depth > 32 {
        return;
    }
    if let Some(r) = s["$ref"].as_str() {
        if let Some(t) = r.strip_prefix('#').and_then(|p| spec.pointer(p)) {
            walk(spec, t, prefix, out, depth + 1);
        }
        return;
    }
    for alt in s["anyOf"].as_array().into_iter().flatten() {
        walk(spec, alt, prefix, out, depth + 1);
    }
    if let Some(props) = s["properties"].as_object() {
        for (k, v) in props {
            let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
            out.insert(p.clone());
            walk(spec, v, &p, out, depth + 1);
        }
    }
    if let Some(items) = s.get("items") {
        walk(spec, items, &format!("{prefix}[]"), out, depth + 1);
    }
}
