//! The assembled OpenAPI 3.1 document.
//!
//! Per operation: `operationId`, path and query parameters (typed, with a
//! `format` where every value had one, `required` when in every sample),
//! the request body (JSON or form, merged), one response per status seen
//! (JSON bodies merged), `security` by [`crate::security`], and
//! `x-samples` (how many requests), `x-confidence` (`low` for one sample,
//! `medium` for up to [`HIGH_CONFIDENCE_SAMPLES`]` - 1`, `high` from
//! there) and `x-effect` (`read` for GET, else `write`). Object shapes
//! seen in more than one place move to `components/schemas` behind a
//! `$ref`. The finished document is checked once more against every
//! credential of the input: if one is found, nothing is returned.
//!
//! No value of a credential-bearing input is written: a path segment that
//! is or holds a spelling of a credential (`crate::credentials::spellings`:
//! hex, base64, reversed…, also across segments) becomes a
//! `{credential}` parameter, and examples come only from values that are
//! not credentials, not an unknown header's value and not opaque
//! identifiers ([`Credentials::may_show`]), of parameters that are not
//! secret and do not name an identifier ([`names_an_identifier`]); path
//! parameters that are ids (integers, UUIDs, hex, base62) get none.
//! [`Learned::to_text`] scans the file's text once more.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::credentials::{Credentials, is_secret_param};
use crate::har::{Entry, Har};
use crate::schema::{Shape, scalar_schema};
use crate::segment::Kind;
use crate::template::{Sample, Seg, Template};
use crate::{Error, keep, naming, security};

pub const HIGH_CONFIDENCE_SAMPLES: usize = 5;
/// A path segment that is a credential never becomes a literal.
const CREDENTIAL_SEGMENT: &str = "\u{0}credential";

#[derive(Debug, Default, Clone)]
pub struct LearnOptions {
    /// Hosts to keep (`host` or `host:port`); empty: those that answered JSON.
    pub hosts: Vec<String>,
    /// `info.title` (default "Learned API").
    pub title: Option<String>,
    /// Values that must never be written (the person's stored secrets).
    pub known_secrets: Vec<String>,
    /// Credentials known from elsewhere, refused like those of the input:
    /// for Chaperone's own (redacted) capture, every credential of the
    /// unredacted requests (`crate::capture::credentials`).
    pub credentials: Credentials,
}

#[derive(Debug, Clone)]
pub struct Learned {
    pub spec: Value,
    pub stats: Stats,
    /// Every credential of the input, for [`Learned::to_text`].
    creds: Credentials,
}

impl Learned {
    /// The description as the text of its file (JSON or YAML), scanned as
    /// text against every spelling of every credential of the input: a
    /// hit is [`Error::CredentialInOutput`] and nothing is to be written.
    pub fn to_text(&self, format: crate::exports::Format) -> Result<String, Error> {
        let text = match format {
            crate::exports::Format::Yaml => crate::yaml::to_string(&self.spec),
            crate::exports::Format::Json => {
                serde_json::to_string_pretty(&self.spec)
                    .map_err(|e| Error::BadSpec(format!("the description could not be written: {e}")))?
                    + "\n"
            }
        };
        if self.creds.holds(&text) {
            return Err(Error::CredentialInOutput("the OpenAPI description".into()));
        }
        Ok(text)
    }
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    pub entries: usize,
    pub api_entries: usize,
    pub hosts: Vec<String>,
    pub paths: usize,
    pub operations: usize,
    pub credentials_seen: usize,
}

pub fn confidence(samples: usize) -> &'static str {
    match samples {
        0 | 1 => "low",
        n if n < HIGH_CONFIDENCE_SAMPLES => "medium",
        _ => "high",
    }
}

/// Learns an OpenAPI description from HAR documents.
pub fn learn(hars: &[Har], opts: &LearnOptions) -> Result<Learned, Error> {
    let all: Vec<&Entry> = hars.iter().flat_map(|h| h.log.entries.iter()).collect();
    let mut creds = Credentials::collect(all.iter().copied());
    opts.known_secrets.iter().for_each(|s| creds.add(s));
    creds.extend(&opts.credentials);
    let api = keep::api_entries(&all, &opts.hosts);
    if api.is_empty() {
        let which = if opts.hosts.is_empty() { String::new() } else { format!(" for {}", opts.hosts.join(", ")) };
        return Err(Error::NoApi(which));
    }
    let set_cookies = security::set_cookie_names(all.iter().copied());

    // host → (scheme, entries)
    let mut by_host: BTreeMap<String, (String, Vec<&Entry>)> = BTreeMap::new();
    for e in &api {
        let Ok(u) = url::Url::parse(&e.request.url) else { continue };
        let Some(h) = keep::host_of(&u) else { continue };
        by_host.entry(h).or_insert_with(|| (u.scheme().to_string(), Vec::new())).1.push(e);
    }
    let hosts: Vec<String> = by_host.keys().cloned().collect();
    let first_host = hosts.first().cloned().unwrap_or_default();

    let mut paths = Map::new();
    let mut schemes = Map::new();
    let mut used_ids: BTreeSet<String> = BTreeSet::new();
    let mut operations = 0;
    let mut tags = BTreeSet::new();
    for (host, (scheme, entries)) in &by_host {
        let samples: Vec<Sample> = entries.iter().map(|e| sample_of(e, &creds)).collect();
        let templates = crate::template::learn(&samples);
        for t in templates {
            let names = naming::param_names(&t.segments);
            let path = render_path(&t, &names);
            let mut item = paths
                .remove(&path)
                .and_then(|v| if let Value::Object(m) = v { Some(m) } else { None })
                .unwrap_or_default();
            for (method, idx) in &t.ops {
                let es: Vec<&Entry> = idx.iter().map(|i| entries[*i]).collect();
                let mut op = operation(method, &t, &names, &es, &creds, &set_cookies, &mut schemes);
                let base = naming::operation_id(method, &t.segments);
                let mut id = base.clone();
                let mut n = 2;
                while used_ids.contains(&id) {
                    id = format!("{base}{n}");
                    n += 1;
                }
                used_ids.insert(id.clone());
                op.insert("operationId".into(), json!(id));
                if let Some(tag) = t.segments.iter().find_map(|s| match s {
                    Seg::Lit(l)
                        if l != CREDENTIAL_SEGMENT
                            && naming::words(l).iter().all(|w| w != "api")
                            && !l.starts_with('v') =>
                    {
                        Some(l.clone())
                    }
                    _ => None,
                }) {
                    tags.insert(tag.clone());
                    op.insert("tags".into(), json!([tag]));
                }
                if host != &first_host {
                    op.insert("servers".into(), json!([{"url": format!("{scheme}://{host}")}]));
                }
                item.insert(method.to_ascii_lowercase(), Value::Object(op));
                operations += 1;
            }
            paths.insert(path, Value::Object(item));
        }
    }
    let (first_scheme, _) = &by_host[&first_host];
    let mut spec = json!({
        "openapi": "3.1.0",
        "info": {
            "title": opts.title.clone().unwrap_or_else(|| "Learned API".into()),
            "version": "0.1.0",
            "description": "Learned by Chaperone from captured traffic. Credentials seen in the capture are described as security schemes, never written.",
        },
        "servers": [{"url": format!("{first_scheme}://{first_host}")}],
        "paths": Value::Object(paths),
        "components": {"schemas": {}, "securitySchemes": Value::Object(schemes)},
    });
    if !tags.is_empty() {
        spec["tags"] = Value::Array(tags.iter().map(|t| json!({"name": t})).collect());
    }
    hoist_components(&mut spec);
    if let Some(at) = creds.find_in(&spec) {
        return Err(Error::CredentialInOutput(format!("the OpenAPI description (at {at})")));
    }
    let stats = Stats {
        entries: all.len(),
        api_entries: api.len(),
        hosts,
        paths: spec["paths"].as_object().map_or(0, Map::len),
        operations,
        credentials_seen: creds.len(),
    };
    Ok(Learned { spec, stats, creds })
}

fn sample_of(e: &Entry, creds: &Credentials) -> Sample {
    let u = url::Url::parse(&e.request.url).ok();
    let raw: Vec<&str> =
        u.as_ref().and_then(|u| u.path_segments()).map(|s| s.filter(|x| !x.is_empty()).collect()).unwrap_or_default();
    let segments = credential_segments(&raw, creds);
    let keys = if (200..300).contains(&e.response.status) {
        e.response_json().map(|j| Shape::of(&j).keys().into_iter().collect()).unwrap_or_default()
    } else {
        BTreeSet::new()
    };
    Sample { method: e.request.method.to_ascii_uppercase(), segments, keys }
}

/// The decoded segments of a path, each one that is or holds (part of) a
/// spelling of a credential replaced by [`CREDENTIAL_SEGMENT`]. The path
/// is searched whole, raw and decoded, so a spelling that holds a `/`
/// (standard base64) and spans segments templates each of them.
pub fn credential_segments(raw: &[&str], creds: &Credentials) -> Vec<String> {
    let decoded: Vec<String> = raw
        .iter()
        .map(|x| {
            url::form_urlencoded::parse(format!("x={}", x.replace('+', "%2B")).as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        })
        .collect();
    let mut hit: Vec<bool> =
        raw.iter().zip(&decoded).map(|(r, d)| creds.is_credential(d) || creds.is_credential(r)).collect();
    for parts in [raw.iter().map(|s| s.to_string()).collect::<Vec<_>>(), decoded.clone()] {
        let joined = parts.join("/");
        let mut starts = Vec::with_capacity(parts.len());
        let mut at = 0;
        for p in &parts {
            starts.push((at, at + p.len()));
            at += p.len() + 1;
        }
        for (a, b) in creds.ranges(&joined) {
            for (i, (s, e)) in starts.iter().enumerate() {
                if *s < b && a < *e {
                    hit[i] = true;
                }
            }
        }
    }
    decoded.into_iter().zip(hit).map(|(d, h)| if h { CREDENTIAL_SEGMENT.to_string() } else { d }).collect()
}

/// Whether a parameter's name says it names a record (`id`, `userId`,
/// `account_uuid`, `ref`): its values are never examples.
pub fn names_an_identifier(name: &str) -> bool {
    naming::words(name)
        .last()
        .is_some_and(|w| matches!(w.as_str(), "id" | "ids" | "uuid" | "guid" | "uid" | "ref" | "refs" | "key"))
}

/// The names of a template's `{credential}` parameters, in order:
/// `credential`, `credential2`…
fn credential_names(t: &Template) -> Vec<String> {
    let n = t.segments.iter().filter(|s| matches!(s, Seg::Lit(l) if l == CREDENTIAL_SEGMENT)).count();
    (1..=n).map(|i| if i == 1 { "credential".to_string() } else { format!("credential{i}") }).collect()
}

/// A literal path segment as it goes into a path template: RFC 3986
/// `pchar`s as they are, every other byte percent-encoded, so `{`/`}`
/// in a real segment can never read as a parameter and quotes, spaces
/// or line breaks never reach a client's code unencoded.
pub fn encode_literal(l: &str) -> String {
    let mut out = String::new();
    for b in l.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn render_path(t: &Template, names: &[String]) -> String {
    let mut s = String::new();
    let mut p = names.iter();
    let creds = credential_names(t);
    let mut c = creds.iter();
    for seg in &t.segments {
        s.push('/');
        match seg {
            Seg::Lit(l) if l == CREDENTIAL_SEGMENT => {
                s.push('{');
                s.push_str(c.next().map(String::as_str).unwrap_or("credential"));
                s.push('}');
            }
            Seg::Lit(l) => s.push_str(&encode_literal(l)),
            Seg::Param { .. } => {
                s.push('{');
                s.push_str(p.next().map(String::as_str).unwrap_or("id"));
                s.push('}');
            }
        }
    }
    if s.is_empty() { "/".into() } else { s }
}

fn operation(
    method: &str,
    t: &Template,
    names: &[String],
    es: &[&Entry],
    creds: &Credentials,
    set_cookies: &BTreeSet<String>,
    schemes: &mut Map<String, Value>,
) -> Map<String, Value> {
    let mut op = Map::new();
    let mut params = Vec::new();
    let mut names_it = names.iter();
    let cred_names = credential_names(t);
    let mut cred_it = cred_names.iter();
    for seg in &t.segments {
        match seg {
            Seg::Param { kind, values } => {
                let name = names_it.next().cloned().unwrap_or_else(|| "id".into());
                let vals: Vec<String> = values.iter().cloned().collect();
                let mut schema = scalar_schema(&vals, Some(&name), creds);
                if *kind == Kind::Uuid {
                    schema = json!({"type": "string", "format": "uuid"});
                }
                let mut p = json!({"name": name, "in": "path", "required": true, "schema": schema});
                // Ids name the person's own records (or hide a token): no example.
                if (!kind.is_id() || *kind == Kind::Date)
                    && let Some(ex) = vals.iter().find(|v| creds.may_show(v))
                {
                    p["example"] = example_value(ex, &p["schema"]);
                }
                params.push(p);
            }
            Seg::Lit(l) if l == CREDENTIAL_SEGMENT => {
                let name = cred_it.next().cloned().unwrap_or_else(|| "credential".into());
                params.push(json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}));
            }
            Seg::Lit(_) => {}
        }
    }
    // Query parameters: name → values, and in how many samples.
    let mut query: BTreeMap<String, (Vec<String>, usize)> = BTreeMap::new();
    for e in es {
        let Ok(u) = url::Url::parse(&e.request.url) else { continue };
        let mut here = BTreeSet::new();
        for (k, v) in u.query_pairs() {
            let q = query.entry(k.to_string()).or_default();
            q.0.push(v.to_string());
            if here.insert(k.to_string()) {
                q.1 += 1;
            }
        }
    }
    for (name, (values, n)) in &query {
        if creds.is_credential(name) {
            continue;
        }
        let secret = is_secret_param(name);
        let schema = if secret { json!({"type": "string"}) } else { scalar_schema(values, Some(name), creds) };
        let mut p = json!({"name": name, "in": "query", "required": *n == es.len(), "schema": schema});
        if !secret
            && !names_an_identifier(name)
            && let Some(ex) = values.iter().find(|v| creds.may_show(v))
        {
            p["example"] = example_value(ex, &p["schema"]);
        }
        params.push(p);
    }
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    // Request body.
    let mut json_body = Shape::default();
    let mut form: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut forms = 0;
    let mut with_body = 0;
    for e in es {
        if let Some(j) = e.request_json() {
            json_body.add(&j);
            with_body += 1;
        } else if let Some(f) = e.request_form() {
            forms += 1;
            with_body += 1;
            for (k, v) in f {
                form.entry(k).or_default().push(v);
            }
        }
    }
    if with_body > 0 {
        let mut content = Map::new();
        if json_body.seen > 0 {
            content.insert("application/json".into(), json!({"schema": json_body.to_schema(None, creds)}));
        }
        if forms > 0 {
            let props: Map<String, Value> = form
                .iter()
                .filter(|(k, _)| !creds.is_credential(k))
                .map(|(k, v)| {
                    let s =
                        if is_secret_param(k) { json!({"type": "string"}) } else { scalar_schema(v, Some(k), creds) };
                    (k.clone(), s)
                })
                .collect();
            content.insert(
                "application/x-www-form-urlencoded".into(),
                json!({"schema": {"type": "object", "properties": props}}),
            );
        }
        op.insert("requestBody".into(), json!({"required": with_body == es.len(), "content": content}));
    }
    // Responses.
    let mut by_status: BTreeMap<i64, (Shape, usize)> = BTreeMap::new();
    for e in es {
        let r = by_status.entry(e.response.status).or_default();
        r.1 += 1;
        if let Some(j) = e.response_json() {
            r.0.add(&j);
        }
    }
    let mut responses = Map::new();
    for (status, (shape, _)) in &by_status {
        let mut r = json!({"description": reason(*status)});
        if shape.seen > 0 {
            r["content"] = json!({"application/json": {"schema": shape.to_schema(None, creds)}});
        }
        responses.insert(status.to_string(), r);
    }
    op.insert("responses".into(), Value::Object(responses));
    // Security.
    let per_sample: Vec<BTreeSet<String>> = es
        .iter()
        .map(|e| {
            let s = security::schemes_of(e, set_cookies);
            let names = s.keys().cloned().collect();
            for (k, v) in s {
                schemes.entry(k).or_insert(v);
            }
            names
        })
        .collect();
    op.insert("security".into(), security::requirement(&per_sample));
    op.insert("x-samples".into(), json!(es.len()));
    op.insert("x-confidence".into(), json!(confidence(es.len())));
    op.insert("x-effect".into(), json!(if method.eq_ignore_ascii_case("GET") { "read" } else { "write" }));
    op
}

fn example_value(v: &str, schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("integer") => v.parse::<i64>().map(Value::from).unwrap_or_else(|_| json!(v)),
        Some("boolean") => json!(v == "true"),
        _ => json!(v),
    }
}

fn reason(status: i64) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 | 302 | 303 | 307 | 308 => "Redirect",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        s if (500..600).contains(&s) => "Server Error",
        _ => "Answer",
    }
}

/// Moves object schemas seen in more than one place to
/// `components/schemas`, named after where they were first seen.
fn hoist_components(spec: &mut Value) {
    for _ in 0..4 {
        let mut seen: BTreeMap<String, (usize, String)> = BTreeMap::new();
        visit(spec, &mut |s: &Value, hint: &str| {
            if let Some(props) = s.get("properties").and_then(Value::as_object)
                && props.len() >= 2
            {
                let key = s.to_string();
                let e = seen.entry(key).or_insert((0, hint.to_string()));
                e.0 += 1;
            }
        });
        let mut repeated: Vec<(String, String)> =
            seen.into_iter().filter(|(_, (n, _))| *n >= 2).map(|(k, (_, h))| (k, h)).collect();
        if repeated.is_empty() {
            return;
        }
        repeated.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
        let mut refs: BTreeMap<String, String> = BTreeMap::new();
        for (key, hint) in &repeated {
            let ws: Vec<String> = naming::words(hint).iter().map(|w| naming::singular(w)).collect();
            let base = if ws.is_empty() { "Object".to_string() } else { naming::pascal(&ws) };
            let comps = spec["components"]["schemas"].as_object().cloned().unwrap_or_default();
            let mut name = base.clone();
            let mut n = 2;
            while comps.contains_key(&name) || refs.values().any(|v| v == &name) {
                name = format!("{base}{n}");
                n += 1;
            }
            refs.insert(key.clone(), name);
        }
        for (key, name) in &refs {
            if let Ok(v) = serde_json::from_str::<Value>(key) {
                spec["components"]["schemas"][name] = v;
            }
        }
        let mut changed = false;
        replace(spec, &refs, &mut changed, true);
        if !changed {
            return;
        }
    }
}

/// Calls `f` on every schema in paths and components with a name hint.
fn visit(spec: &Value, f: &mut dyn FnMut(&Value, &str)) {
    fn walk(s: &Value, hint: &str, f: &mut dyn FnMut(&Value, &str), top: bool) {
        if !top {
            f(s, hint);
        }
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                walk(v, k, f, false);
            }
        }
        if let Some(items) = s.get("items") {
            walk(items, hint, f, false);
        }
        if let Some(alts) = s.get("anyOf").and_then(Value::as_array) {
            for a in alts {
                walk(a, hint, f, false);
            }
        }
    }
    if let Some(paths) = spec["paths"].as_object() {
        for (path, item) in paths {
            let hint = path.split('/').rev().find(|s| !s.is_empty() && !s.starts_with('{')).unwrap_or("object");
            for op in item.as_object().into_iter().flat_map(|m| m.values()) {
                if let Some(c) = op.pointer("/requestBody/content").and_then(Value::as_object) {
                    c.values().filter_map(|m| m.get("schema")).for_each(|s| walk(s, hint, f, false));
                }
                if let Some(rs) = op.get("responses").and_then(Value::as_object) {
                    for r in rs.values() {
                        if let Some(c) = r.get("content").and_then(Value::as_object) {
                            c.values().filter_map(|m| m.get("schema")).for_each(|s| walk(s, hint, f, false));
                        }
                    }
                }
            }
        }
    }
    if let Some(comps) = spec["components"]["schemas"].as_object() {
        for (name, s) in comps {
            walk(s, name, f, true);
        }
    }
}

fn replace(v: &mut Value, refs: &BTreeMap<String, String>, changed: &mut bool, top: bool) {
    let is_schema_components = |v: &Value| v.get("securitySchemes").is_some();
    match v {
        Value::Object(m) => {
            if !top && m.contains_key("properties") {
                let key = Value::Object(m.clone()).to_string();
                if let Some(name) = refs.get(&key) {
                    *v = json!({"$ref": format!("#/components/schemas/{name}")});
                    *changed = true;
                    return;
                }
            }
            let comps = is_schema_components(&Value::Object(m.clone()));
            for (k, child) in m.iter_mut() {
                // A component's own body is not replaced by its own $ref.
                let child_top = comps && k == "schemas";
                if child_top {
                    if let Value::Object(cs) = child {
                        for c in cs.values_mut() {
                            replace_children(c, refs, changed);
                        }
                    }
                    continue;
                }
                replace(child, refs, changed, false);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|c| replace(c, refs, changed, false)),
        _ => {}
    }
}

fn replace_children(v: &mut Value, refs: &BTreeMap<String, String>, changed: &mut bool) {
    if let Value::Object(m) = v {
        for c in m.values_mut() {
            replace(c, refs, changed, false);
        }
    }
}
