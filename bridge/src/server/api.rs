//! `api_learn` and `api_client` (issue 34): the agent learns the API
//! behind the pages of its own tabs and gets a client for it, without
//! ever holding a credential. The learning itself is the `forge` crate;
//! this is the IO around it.
//!
//! - `api_learn {host?, name?}` learns from this session's own capture
//!   (the requests of its tabs, `super::network`), read only through
//!   `shared::redact::redact_captured` with the person's stored secrets as
//!   known values; of the raw requests only the `Authorization` scheme word
//!   and cookie names reach the learner (`forge::capture`). It writes
//!   the OpenAPI 3.1 description into `HOME/exports/` (0600, under a
//!   temporary name then renamed; `name` keeps only its last part,
//!   `forge::exports`).
//! - `api_client {spec, lang}` reads a description from the exports
//!   folder (by file name only, never a symbolic link) and writes the
//!   Python or TypeScript client and its tests into
//!   `HOME/exports/<spec>-<lang>/`: a folder that is absent, empty or
//!   marked `.chaperone-generated` (an agent cannot overwrite anything
//!   else). It runs no program; the person runs the checks with
//!   `chaperone api client … --check`.
//! - Both refuse with `GENERATION_FAILED` (naming the file, never the
//!   value) when a credential would be written, and write nothing then:
//!   the final scans run against every credential of the session's
//!   *unredacted* capture (`forge::capture::credentials`), in every
//!   spelling, so a token the page copied under an innocent name, in hex
//!   or base64, is caught although the learner only read the redacted
//!   requests. Each write is an audit row.
//! - The client's files are written by `crate::api_cli::write_generated`:
//!   never through a symbolic link (the folder or a file in it).

use std::path::{Path, PathBuf};

use rmcp::handler::server::tool::schema_for_type;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};
use shared::error::{ErrorCode, WireError};
use shared::redact::redact_captured;
use shared::tools::{ApiClientArgs, ApiClientLang, ApiLearnArgs};

use super::AppState;
use super::audit::{Audit, Caller, Row};
use super::network::{known, write_private};
use super::results::{plain_result, untrusted_result};

/// Operation lines listed in `api_learn`'s text (all are in the file).
const MAX_LISTED_OPERATIONS: usize = 200;

pub(crate) fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "api_learn",
            "Learn an OpenAPI 3.1 description of the API behind your tabs' pages from your own network capture \
             (see browser_network_requests): JSON answers and JSON/form writes of `host` (default: the hosts that \
             answered JSON), path templates from how segments vary, query parameters, request bodies, statuses, \
             operationIds, x-samples/x-confidence/x-effect. Bearer tokens, session cookies, CSRF and API-key \
             headers become security schemes by name; no credential is ever written. Response bodies are not \
             captured by the default extension, so responses have statuses but no schemas. Writes `name` (default \
             api-<time>.json; .yaml for YAML) into the exports folder; returns {path, file, operations}. \
             Untrusted web content.",
            schema_for_type::<ApiLearnArgs>(),
        ),
        Tool::new(
            "api_client",
            "Write a Python or TypeScript client (one method per operation, with its tests) of a description in \
             the exports folder (`spec`: its file name, as api_learn returned it) into the folder \
             <spec>-<lang> next to it. Only into a folder that is new, empty or one this tool wrote; runs \
             nothing. Refused with GENERATION_FAILED if a credential would be written. Returns {dir, files}.",
            schema_for_type::<ApiClientArgs>(),
        ),
    ]
}

pub(crate) async fn dispatch(
    state: &AppState,
    caller: &Caller,
    name: &str,
    args: JsonObject,
) -> Option<Result<CallToolResult, WireError>> {
    Some(match name {
        "api_learn" => match crate::server::parse_args(args) {
            Ok(a) => learn(state, caller, a).await,
            Err(e) => Err(e),
        },
        "api_client" => match crate::server::parse_args(args) {
            Ok(a) => client(state, caller, a).await,
            Err(e) => Err(e),
        },
        _ => return None,
    })
}

fn exports_dir(state: &AppState) -> Result<PathBuf, WireError> {
    state
        .config()
        .exports_dir
        .clone()
        .ok_or_else(|| WireError::new(ErrorCode::PermissionDenied, "this daemon has no exports folder"))
}

fn internal(what: &str) -> WireError {
    WireError::internal(format!("{what} (see the daemon's log)"))
}

/// A `forge` error as the agent sees it.
fn forge_error(e: forge::Error) -> WireError {
    match e {
        forge::Error::CredentialInOutput(_) => WireError::new(ErrorCode::GenerationFailed, e.to_string()),
        forge::Error::NoApi(_) => WireError::new(
            ErrorCode::NotFound,
            format!("{e} in your capture: open the site in your tab, use it, then call api_learn again"),
        ),
        forge::Error::BadHar(_) | forge::Error::BadSpec(_) => WireError::new(ErrorCode::InvalidRequest, e.to_string()),
    }
}

async fn learn(state: &AppState, caller: &Caller, a: ApiLearnArgs) -> Result<CallToolResult, WireError> {
    let dir = exports_dir(state)?;
    let (file, format) = match a.name.as_deref() {
        Some(n) => forge::exports::spec_file_name(n).ok_or_else(|| {
            WireError::new(ErrorCode::InvalidRequest, "name: use letters, digits, '.', '_' and '-' (e.g. library)")
        })?,
        None => (format!("api-{}.json", crate::time::unix_now_millis()), forge::exports::Format::Json),
    };
    let host = a.host.map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
    if let Some(h) = &host
        && (h.len() > 255 || h.contains(['/', '?', '#', '@', ' ']))
    {
        return Err(WireError::new(ErrorCode::InvalidRequest, "host: a host or host:port, e.g. api.example.com"));
    }
    let (entries, _) = super::network::visible(state, caller.key);
    let known = known(state).await;
    let learned = tokio::task::spawn_blocking(move || {
        // Compared against only: the learner reads the redacted requests.
        let unredacted = forge::capture::credentials(entries.iter().map(|e| &e.captured));
        let har = forge::har::Har {
            log: forge::har::Log {
                entries: entries
                    .iter()
                    .map(|e| forge::capture::entry(&redact_captured(&e.captured, &known), &e.captured))
                    .collect(),
            },
        };
        let opts = forge::LearnOptions {
            hosts: host.into_iter().collect(),
            title: None,
            known_secrets: known.iter().map(|k| k.value.clone()).collect(),
            credentials: unredacted,
        };
        let learned = forge::learn(&[har], &opts)?;
        let text = learned.to_text(format)?;
        Ok::<_, forge::Error>((learned, text))
    })
    .await
    .map_err(|e| {
        tracing::error!(error = %e, "api_learn task failed");
        internal("learning failed")
    })?
    .map_err(forge_error)?;
    let (learned, text) = learned;
    let (file2, bytes) = (file.clone(), text.into_bytes());
    let path = tokio::task::spawn_blocking(move || write_private(&dir, &file2, &bytes))
        .await
        .map_err(|_| internal("the description could not be written"))?
        .map_err(|e| {
            tracing::warn!(error = %e, "api_learn write failed");
            internal("the description could not be written")
        })?;
    let shown = path.display().to_string();
    let s = &learned.stats;
    let summary = format!("api_learn: {} operation(s) from {} request(s) → {shown}", s.operations, s.api_entries);
    Audit::new(state, caller)
        .record(Row { tool: "api_learn", summary: &summary, outcome: "ok", ..Row::default() })
        .await;
    let ops = operations(&learned.spec);
    let mut text = format!(
        "Wrote {} operation(s) on {} path(s), learned from {} of {} request(s) ({}), to {shown}\n",
        s.operations,
        s.paths,
        s.api_entries,
        s.entries,
        s.hosts.join(", ")
    );
    for (method, path, id, confidence) in ops.iter().take(MAX_LISTED_OPERATIONS) {
        text.push_str(&format!("{method} {path} {id} ({confidence})\n"));
    }
    if ops.len() > MAX_LISTED_OPERATIONS {
        text.push_str(&format!("… and {} more in the file\n", ops.len() - MAX_LISTED_OPERATIONS));
    }
    // Paths and hosts come from pages: redacted again and wrapped.
    let text = shared::redact::redact_text(&text);
    Ok(untrusted_result(
        &text,
        json!({
            "path": shown,
            "file": file,
            "operations": s.operations,
            "paths": s.paths,
            "requests": s.entries,
            "apiRequests": s.api_entries,
            "hosts": s.hosts.iter().map(|h| shared::redact::redact_text(h)).collect::<Vec<_>>(),
        }),
    ))
}

/// (METHOD, path, operationId, confidence) of every operation.
fn operations(spec: &Value) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for (path, item) in spec["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            let s = |k: &str| op[k].as_str().unwrap_or("").to_string();
            out.push((method.to_ascii_uppercase(), path.clone(), s("operationId"), s("x-confidence")));
        }
    }
    out
}

async fn client(state: &AppState, caller: &Caller, a: ApiClientArgs) -> Result<CallToolResult, WireError> {
    let dir = exports_dir(state)?;
    let lang = match a.lang {
        ApiClientLang::Python => forge::client::Lang::Python,
        ApiClientLang::Typescript => forge::client::Lang::TypeScript,
    };
    let bad_name =
        || WireError::new(ErrorCode::InvalidRequest, "spec: the file name api_learn returned (e.g. library.json)");
    let (file, _) = forge::exports::spec_file_name(&a.spec).ok_or_else(bad_name)?;
    let folder = forge::exports::client_dir_name(&file, lang).ok_or_else(bad_name)?;
    let known = known(state).await;
    let secrets: Vec<String> = known.iter().map(|k| k.value.clone()).collect();
    // Every request of this session, handed tabs' too: only compared against.
    let (entries, _) = state.inner.network.of(caller.key);
    let (dir2, file2, folder2) = (dir.clone(), file.clone(), folder.clone());
    let written = tokio::task::spawn_blocking(move || {
        let unredacted = forge::capture::credentials(entries.iter().map(|e| &e.captured));
        write_client(&dir2, &file2, &folder2, lang, &secrets, &unredacted)
    })
    .await
    .map_err(|_| internal("the client could not be written"))??;
    let shown = dir.join(&folder).display().to_string();
    let summary = format!("api_client: {} file(s) of {file} → {shown}", written.len());
    Audit::new(state, caller)
        .record(Row { tool: "api_client", summary: &summary, outcome: "ok", ..Row::default() })
        .await;
    Ok(plain_result(
        format!("Wrote {} file(s) into {shown}: {}\n", written.len(), written.join(", ")),
        json!({ "dir": shown, "files": written }),
    ))
}

/// Reads `dir/file`, generates the client and writes it into
/// `dir/folder` (see the module docs); the names of the files written.
fn write_client(
    dir: &Path,
    file: &str,
    folder: &str,
    lang: forge::client::Lang,
    secrets: &[String],
    unredacted: &forge::credentials::Credentials,
) -> Result<Vec<String>, WireError> {
    let spec_path = dir.join(file);
    let not_found = || WireError::new(ErrorCode::NotFound, format!("no description {file} in the exports folder"));
    let meta = std::fs::symlink_metadata(&spec_path).map_err(|_| not_found())?;
    if !meta.file_type().is_file() {
        return Err(not_found());
    }
    if meta.len() > crate::api_cli::MAX_SPEC_BYTES {
        return Err(WireError::new(ErrorCode::InvalidRequest, format!("{file}: larger than 64 MiB")));
    }
    let text = std::fs::read_to_string(&spec_path)
        .map_err(|_| WireError::new(ErrorCode::InvalidRequest, format!("{file}: not a text file")))?;
    let value =
        forge::yaml::from_str(&text).map_err(|e| WireError::new(ErrorCode::InvalidRequest, format!("{file}: {e}")))?;
    let files = forge::client::generate_refusing(&value, lang, secrets, unredacted).map_err(forge_error)?;
    let out = dir.join(folder);
    let refuse = |why: &str| WireError::new(ErrorCode::PermissionDenied, format!("{folder}: {why}; nothing written"));
    let exists = match std::fs::symlink_metadata(&out) {
        Ok(m) if m.file_type().is_dir() => true,
        Ok(_) => return Err(refuse("not a folder")),
        Err(_) => false,
    };
    let empty = exists && std::fs::read_dir(&out).map(|mut d| d.next().is_none()).unwrap_or(false);
    let marker = out.join(forge::client::MARKER);
    let marked = std::fs::symlink_metadata(&marker).is_ok_and(|m| m.file_type().is_file());
    forge::client::may_write(exists, empty, marked, false)
        .map_err(|_| refuse("it holds files Chaperone did not write (no .chaperone-generated)"))?;
    let mut all: Vec<(&str, &[u8])> = files.iter().map(|f| (f.name, f.text.as_bytes())).collect();
    all.push((forge::client::MARKER, b"Written by Chaperone's api_client; it may write here again.\n"));
    crate::api_cli::write_generated(&out, &all, crate::api_cli::Modes::PRIVATE).map_err(|e| match e {
        crate::error::Error::Api(why) => WireError::new(ErrorCode::PermissionDenied, why),
        e => {
            tracing::warn!(error = %e, "api_client write failed");
            internal("the client could not be written")
        }
    })?;
    Ok(files.iter().map(|f| f.name.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    const SPEC: &str = r#"{"openapi": "3.1.0", "info": {"title": "T", "version": "1"},
      "paths": {"/items/{id}": {"get": {"operationId": "getItem", "responses": {"200": {"description": "OK"}}}}}}"#;

    fn python(dir: &Path, spec: &str, creds: &forge::credentials::Credentials) -> Result<Vec<String>, WireError> {
        write_client(dir, spec, "s-python", forge::client::Lang::Python, &[], creds)
    }

    #[test]
    fn api_client_never_writes_through_a_link_and_scans_the_unredacted_capture() {
        let work = tempfile::tempdir().unwrap();
        let exports = work.path().join("exports");
        std::fs::create_dir_all(&exports).unwrap();
        std::fs::write(exports.join("s.json"), SPEC).unwrap();
        let victim = work.path().join("victim");
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("notes.txt"), "my notes").unwrap();
        let none = forge::credentials::Credentials::default();
        let untouched = || {
            let names: Vec<_> = std::fs::read_dir(&victim).unwrap().flatten().map(|e| e.file_name()).collect();
            assert_eq!(names, ["notes.txt"]);
            assert_eq!(std::fs::read_to_string(victim.join("notes.txt")).unwrap(), "my notes");
        };
        // The folder is a link.
        symlink(&victim, exports.join("s-python")).unwrap();
        let e = python(&exports, "s.json", &none).unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{}", e.message);
        untouched();
        // A marked folder holding a link named like a client's file.
        std::fs::remove_file(exports.join("s-python")).unwrap();
        let out = exports.join("s-python");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(forge::client::MARKER), "x").unwrap();
        symlink(victim.join("notes.txt"), out.join("client.py")).unwrap();
        let e = python(&exports, "s.json", &none).unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{}", e.message);
        assert!(e.message.contains("client.py") && e.message.contains("symbolic link"), "{}", e.message);
        assert!(!out.join("README.md").exists(), "nothing written");
        untouched();
        // Control: without the link, written, 0600.
        std::fs::remove_file(out.join("client.py")).unwrap();
        let names = python(&exports, "s.json", &none).unwrap();
        assert!(names.iter().any(|n| n == "client.py"), "{names:?}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(out.join("client.py")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A description holding the hex of a credential of the capture
        // (redacted in what the agent saw) is refused, naming the file.
        let token = "Zq7-Lm2.xR9~vB4nT8wK";
        let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
        std::fs::write(exports.join("h.json"), SPEC.replace("/items/{id}", &format!("/items/{hex}"))).unwrap();
        let mut creds = forge::credentials::Credentials::default();
        creds.add(token);
        let e = write_client(&exports, "h.json", "h-python", forge::client::Lang::Python, &[], &creds).unwrap_err();
        assert_eq!(e.code, ErrorCode::GenerationFailed, "{}", e.message);
        assert!(!e.message.contains(&hex) && !e.message.contains(token), "{}", e.message);
        assert!(!exports.join("h-python").exists());
        // Control: not a credential of this capture, an ordinary path.
        assert!(write_client(&exports, "h.json", "h-python", forge::client::Lang::Python, &[], &none).is_ok());
    }
}
