//! Clients generated from an OpenAPI description: Python (standard library
//! only) and TypeScript (`fetch`), each with its own tests.
//!
//! Nothing from the description reaches the code unchecked: names become
//! identifiers of `[A-Za-z0-9_]` (keywords avoided), paths and parameter
//! names are embedded as JSON string literals (valid in both languages),
//! and every file is scanned before it is returned: a credential (by
//! `shared::redact`'s detector or among the person's secrets) fails the
//! whole generation, naming the file, never the value.

mod python;
mod typescript;

use serde_json::Value;

use crate::Error;
use crate::credentials::Credentials;
use crate::naming;

/// The marker file that says Chaperone made a folder.
pub const MARKER: &str = ".chaperone-generated";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    TypeScript,
}

/// One file to write, relative to the output folder.
#[derive(Debug, Clone)]
pub struct File {
    pub name: &'static str,
    pub text: String,
}

/// How the token is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    Bearer,
    Header(String),
    Query(String),
    None,
}

#[derive(Debug, Clone)]
pub struct Param {
    /// Name in the API.
    pub wire: String,
    /// Identifier in the client (snake_case or camelCase per language).
    pub ident: String,
    pub required: bool,
    pub integer: bool,
    /// A value for the generated tests (URL-safe).
    pub sample: String,
}

#[derive(Debug, Clone)]
pub struct Op {
    pub id: String,
    pub method: String,
    pub path: String,
    pub path_params: Vec<Param>,
    pub query: Vec<Param>,
    /// `Some(form)` when there is a body: `false` JSON, `true` form.
    pub body: Option<bool>,
    /// The first success status (`204` answers `None`/`undefined`).
    pub success: u16,
    pub secured: bool,
}

#[derive(Debug, Clone)]
pub struct Api {
    pub title: String,
    pub base_url: String,
    pub auth: Auth,
    pub ops: Vec<Op>,
}

/// Whether Chaperone may write into a folder: absent or empty, or one it
/// made (its marker is there), or the person said `--overwrite`.
pub fn may_write(exists: bool, empty: bool, has_marker: bool, overwrite: bool) -> Result<(), String> {
    if !exists || empty || has_marker || overwrite {
        Ok(())
    } else {
        Err(format!(
            "the folder holds files Chaperone did not write (no {MARKER}); choose another folder or pass --overwrite"
        ))
    }
}

/// What is at a path, as `symlink_metadata` sees it (a link is never
/// followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Absent,
    Folder,
    File,
    /// A symbolic link, dangling or not.
    Link,
    /// Anything else (a socket, a device…).
    Other,
}

/// Whether the output folder may be written into as it is found: absent
/// (it is made) or a folder; never a symbolic link, which would put the
/// files wherever it points (`--overwrite` does not change that).
pub fn folder_ok(found: Found) -> Result<(), String> {
    match found {
        Found::Absent | Found::Folder => Ok(()),
        Found::Link => Err("a symbolic link; nothing is written through it (give the folder itself)".into()),
        Found::File | Found::Other => Err("not a folder".into()),
    }
}

/// Whether one file of a client may be written where `found` is: absent,
/// or a plain file (replaced under a temporary name and a rename, never
/// opened); never a symbolic link, dangling or not.
pub fn file_ok(found: Found) -> Result<(), String> {
    match found {
        Found::Absent | Found::File => Ok(()),
        Found::Link => Err("a symbolic link; nothing is written through it (remove it to write here)".into()),
        Found::Folder | Found::Other => Err("not a plain file; nothing is written over it".into()),
    }
}

/// The files of a client for `spec` in `lang`, scanned for credentials.
pub fn generate(spec: &Value, lang: Lang, known_secrets: &[String]) -> Result<Vec<File>, Error> {
    generate_refusing(spec, lang, known_secrets, &Credentials::default())
}

/// [`generate`], refusing also every credential in `also` (the MCP tool:
/// those of the session's unredacted capture), in every spelling.
pub fn generate_refusing(
    spec: &Value,
    lang: Lang,
    known_secrets: &[String],
    also: &Credentials,
) -> Result<Vec<File>, Error> {
    let mut creds = Credentials::default();
    known_secrets.iter().for_each(|s| creds.add(s));
    creds.extend(also);
    let api = read(spec, &creds)?;
    let files = match lang {
        Lang::Python => python::files(&api),
        Lang::TypeScript => typescript::files(&api),
    };
    for f in &files {
        if creds.in_text(&f.text) {
            return Err(Error::CredentialInOutput(f.name.to_string()));
        }
    }
    Ok(files)
}

const METHODS: &[&str] = &["get", "post", "put", "patch", "delete"];

/// The client's model of a spec.
pub fn read(spec: &Value, creds: &Credentials) -> Result<Api, Error> {
    if !spec["openapi"].as_str().is_some_and(|v| v.starts_with("3.")) {
        return Err(Error::BadSpec("no \"openapi\": \"3.x\" field".into()));
    }
    let paths = spec["paths"].as_object().ok_or_else(|| Error::BadSpec("no \"paths\" object".into()))?;
    let schemes = spec.pointer("/components/securitySchemes").and_then(Value::as_object);
    let auth = schemes
        .and_then(|s| {
            s.values()
                .find(|v| v["type"] == "http" && v["scheme"].as_str().is_some_and(|x| x.eq_ignore_ascii_case("bearer")))
                .map(|_| Auth::Bearer)
                .or_else(|| {
                    s.values().find(|v| v["type"] == "apiKey" && v["in"] == "header" && !is_csrf(v)).and_then(|v| {
                        v["name"].as_str().filter(|n| is_header_name(n)).map(|n| Auth::Header(n.to_string()))
                    })
                })
                .or_else(|| {
                    s.values().find(|v| v["type"] == "apiKey" && v["in"] == "query").and_then(|v| {
                        v["name"].as_str().filter(|n| is_header_name(n)).map(|n| Auth::Query(n.to_string()))
                    })
                })
        })
        .unwrap_or(Auth::None);
    let base_url = spec
        .pointer("/servers/0/url")
        .and_then(Value::as_str)
        .filter(|u| crate::segment::is_uri(u) && !creds.is_credential(u) && !u.contains(['"', '\\', '\'', '`', '$']))
        .unwrap_or("http://localhost")
        .to_string();
    let title: String = spec
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("API")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == ' ')
        .take(80)
        .collect();
    let mut ops = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for (path, item) in paths {
        if !path.starts_with('/') || path.contains(['\n', '\r']) {
            return Err(Error::BadSpec("a path that does not start with '/'".into()));
        }
        for m in METHODS {
            let Some(op) = item.get(*m) else { continue };
            let raw_id = op["operationId"].as_str().map(str::to_string).unwrap_or_else(|| format!("{m} {path}"));
            let mut id = naming::camel(&naming::words(&raw_id));
            if id.is_empty() {
                id = (*m).to_string();
            }
            let base = id.clone();
            let mut n = 2;
            while !used.insert(id.clone()) {
                id = format!("{base}{n}");
                n += 1;
            }
            let params: Vec<&Value> = item
                .get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .chain(op.get("parameters").and_then(Value::as_array).into_iter().flatten())
                .collect();
            let mut path_params = Vec::new();
            for name in path_param_names(path) {
                let p = params.iter().find(|p| p["in"] == "path" && p["name"] == name.as_str());
                path_params.push(param(&name, p.copied(), true, creds));
            }
            let mut query = Vec::new();
            for p in params.iter().filter(|p| p["in"] == "query") {
                let Some(name) = p["name"].as_str() else { continue };
                query.push(param(name, Some(p), p["required"].as_bool().unwrap_or(false), creds));
            }
            let body = op.pointer("/requestBody/content").and_then(Value::as_object).map(|c| {
                !c.keys().any(|k| crate::har::is_json(k)) && c.contains_key("application/x-www-form-urlencoded")
            });
            let success = op["responses"]
                .as_object()
                .and_then(|r| r.keys().filter_map(|k| k.parse::<u16>().ok()).find(|s| (200..300).contains(s)))
                .unwrap_or(200);
            let secured = match op.get("security").or_else(|| spec.get("security")) {
                Some(Value::Array(a)) => !a.is_empty(),
                _ => true,
            };
            ops.push(Op {
                id,
                method: m.to_ascii_uppercase(),
                path: path.clone(),
                path_params,
                query,
                body,
                success,
                secured,
            });
        }
    }
    if ops.is_empty() {
        return Err(Error::BadSpec("no operations".into()));
    }
    Ok(Api { title, base_url, auth, ops })
}

fn is_csrf(v: &Value) -> bool {
    v["name"].as_str().is_some_and(|n| {
        let l = n.to_ascii_lowercase();
        l.contains("csrf") || l.contains("xsrf")
    })
}

fn is_header_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 64 && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `{bookId}` names in path order.
pub fn path_param_names(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = path;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        out.push(rest[i + 1..i + j].to_string());
        rest = &rest[i + j + 1..];
    }
    out
}

fn param(name: &str, p: Option<&Value>, required: bool, creds: &Credentials) -> Param {
    let schema = p.map(|p| &p["schema"]);
    let integer = schema.is_some_and(|s| s["type"] == "integer");
    let uuid = schema.is_some_and(|s| s["format"] == "uuid");
    let ex = p.and_then(|p| match &p["example"] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    });
    let url_safe = |s: &str| {
        !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
    };
    let sample = match ex {
        Some(e) if url_safe(&e) && !creds.is_credential(&e) => e,
        _ if integer => "7".into(),
        _ if uuid => "00000000-0000-4000-8000-000000000007".into(),
        _ => "sample".into(),
    };
    Param { wire: name.to_string(), ident: naming::camel(&naming::words(name)), required, integer, sample }
}

/// snake_case of a camelCase identifier.
pub fn snake(s: &str) -> String {
    naming::words(s).join("_")
}

/// A JSON string literal (valid Python and TypeScript).
pub fn lit(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// The path with sample values in place of parameters (for the tests).
pub fn sample_path(op: &Op) -> String {
    let mut p = op.path.clone();
    for pp in &op.path_params {
        p = p.replacen(&format!("{{{}}}", pp.wire), &pp.sample, 1);
    }
    p
}
