//! `browser_network_requests`, `browser_network_request` and
//! `browser_network_export` (see the module docs of `network`).

use std::io::Write;
use std::path::{Path, PathBuf};

use rmcp::handler::server::tool::schema_for_type;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};
use shared::error::{ErrorCode, WireError};
use shared::network::{
    PAGE_SIZE, Part, RequestBody, ResponseBody, StatusFilter, UrlFilter, WsMessage, export_file_name, line,
    method_matches, response_body_text, type_listed,
};
use shared::redact::{Known, redact_captured};
use shared::tools::{NetworkExportArgs, NetworkRequestArgs, NetworkRequestsArgs};

use super::super::AppState;
use super::super::audit::{Audit, Caller, Row};
use super::super::results::{plain_result, untrusted_result};
use super::{Entry, har};

/// Longest regular expression accepted, and the compiled size bound.
const MAX_REGEX_CHARS: usize = 500;
const REGEX_SIZE_LIMIT: usize = 1 << 20;

pub(crate) fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "browser_network_requests",
            "List the network requests of your tabs (all, or `tab`'s), one line each: `#id METHOD url → status type \
             size ms`, oldest first, 100 a page (`page`). `filter`: a URL substring or a /regex/; `method`; `status`: \
             200, 4xx or failed; static files (images, fonts, styles, scripts) are counted but left out unless \
             `types` names them (or \"static\"). Credentials are always redacted: unknown headers show <redacted>, \
             sensitive parameters and keys ••••, the person's stored secrets {secret:NAME}. Only your own tabs are \
             captured, in memory, until this session ends. Untrusted web content.",
            schema_for_type::<NetworkRequestsArgs>(),
        ),
        Tool::new(
            "browser_network_request",
            "One request in full by `id` (from browser_network_requests), or one `part`: request-headers, \
             request-body, response-headers, response-body. Response bodies (text types) and WebSocket messages are \
             captured only when the person runs the bodies build (`chaperone up --network-bodies`); otherwise \
             response-body says so. Redacted like the listing; `reveal: true` is refused unless the person started the daemon \
             with --allow-reveal. Untrusted web content.",
            schema_for_type::<NetworkRequestArgs>(),
        ),
        Tool::new(
            "browser_network_export",
            "Write your tabs' requests (all, or `tab`'s, or those matching `filter`) as a HAR 1.2 file into the \
             exports folder of the Chaperone home (`name`, default network-<time>.har; it cannot leave that \
             folder). Redacted like the listing. Returns {path, entries}.",
            schema_for_type::<NetworkExportArgs>(),
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
        "browser_network_requests" => match crate::server::parse_args(args) {
            Ok(a) => requests(state, caller, a).await,
            Err(e) => Err(e),
        },
        "browser_network_request" => match crate::server::parse_args(args) {
            Ok(a) => request(state, caller, a).await,
            Err(e) => Err(e),
        },
        "browser_network_export" => match crate::server::parse_args(args) {
            Ok(a) => export(state, caller, a).await,
            Err(e) => Err(e),
        },
        _ => return None,
    })
}

/// The person's stored secrets, masked by value in every output.
pub(crate) async fn known(state: &AppState) -> Vec<Known> {
    let Some(store) = state.config().secrets.clone() else { return Vec::new() };
    let read = tokio::task::spawn_blocking(move || {
        let Ok(list) = store.list() else { return Vec::new() };
        list.into_iter()
            .filter_map(|i| {
                let v = store.get(&i.name).ok().flatten()?;
                Some(Known { name: i.name, value: v.expose().to_string() })
            })
            .collect::<Vec<_>>()
    });
    match read.await {
        Ok(k) => k,
        Err(e) => {
            tracing::warn!(error = %e, "reading the secrets for network redaction failed");
            Vec::new()
        }
    }
}

/// A compiled URL filter.
enum Filter {
    Substring(String),
    Regex(regex::Regex),
}

impl Filter {
    fn parse(s: Option<&str>) -> Result<Option<Filter>, WireError> {
        let Some(s) = s.filter(|s| !s.is_empty()) else { return Ok(None) };
        Ok(Some(match UrlFilter::parse(s) {
            UrlFilter::Substring(t) => Filter::Substring(t),
            UrlFilter::Regex(r) => {
                if r.chars().count() > MAX_REGEX_CHARS {
                    return Err(WireError::new(
                        ErrorCode::InvalidRequest,
                        "filter: the regular expression is too long",
                    ));
                }
                let re = regex::RegexBuilder::new(&r).size_limit(REGEX_SIZE_LIMIT).build().map_err(|e| {
                    WireError::new(ErrorCode::InvalidRequest, format!("filter: not a valid regular expression: {e}"))
                })?;
                Filter::Regex(re)
            }
        }))
    }

    fn matches(&self, url: &str) -> bool {
        match self {
            Filter::Substring(s) => url.contains(s.as_str()),
            Filter::Regex(r) => r.is_match(url),
        }
    }
}

/// This session's requests, redacted, with the tab and URL filter applied
/// (on the redacted URL).
async fn selected(
    state: &AppState,
    caller: &Caller,
    tab: Option<i64>,
    filter: Option<&str>,
) -> Result<(Vec<Entry>, u64), WireError> {
    let filter = Filter::parse(filter)?;
    if let Some(t) = tab {
        shared::handoff::check_handed_tab(t, &super::handed_tabs(state))?;
    }
    let (entries, dropped) = super::visible(state, caller.key);
    let known = known(state).await;
    let out = entries
        .into_iter()
        .filter(|e| tab.is_none_or(|t| t == e.captured.tab))
        .map(|e| Entry { captured: redact_captured(&e.captured, &known), ..e })
        .filter(|e| filter.as_ref().is_none_or(|f| f.matches(&e.captured.url)))
        .collect();
    Ok((out, dropped))
}

async fn requests(state: &AppState, caller: &Caller, a: NetworkRequestsArgs) -> Result<CallToolResult, WireError> {
    let status = a
        .status
        .as_deref()
        .map(StatusFilter::parse)
        .transpose()
        .map_err(|m| WireError::new(ErrorCode::InvalidRequest, m))?;
    let (entries, dropped) = selected(state, caller, a.tab, a.filter.as_deref()).await?;
    let matching: Vec<&Entry> = entries
        .iter()
        .filter(|e| a.method.as_deref().is_none_or(|m| method_matches(m, &e.captured.method)))
        .filter(|e| status.is_none_or(|s| s.matches(e.captured.status)))
        .collect();
    let hidden = matching.iter().filter(|e| !type_listed(&e.captured.resource_type, &a.types)).count();
    let listed: Vec<&&Entry> = matching.iter().filter(|e| type_listed(&e.captured.resource_type, &a.types)).collect();
    let pages = listed.len().div_ceil(PAGE_SIZE).max(1);
    let page = a.page.unwrap_or(1).max(1) as usize;
    if page > pages {
        return Err(WireError::new(ErrorCode::InvalidRequest, format!("page {page} of {pages}: no such page")));
    }
    let shown: Vec<&&Entry> = listed.iter().skip((page - 1) * PAGE_SIZE).take(PAGE_SIZE).copied().collect();
    let mut text = String::new();
    for e in &shown {
        text.push_str(&line(e.id, &e.captured, &e.captured.url));
        if let Some(w) = e.withheld {
            text.push_str(&format!(" ({})", w.says()));
        }
        text.push('\n');
    }
    text.push_str(&format!(
        "{} request(s) listed (page {page} of {pages}); {hidden} static file(s) not listed{}; {dropped} dropped \
         (oldest, over the capture's bound)\n",
        listed.len(),
        if hidden > 0 { " (types: [\"static\"] lists them)" } else { "" }
    ));
    let data = json!({
        "requests": shown.iter().map(|e| json!({
            "id": e.id,
            "method": e.captured.method,
            "url": e.captured.url,
            "status": e.captured.status,
            "type": e.captured.resource_type,
            "size": e.captured.size(),
            "ms": e.captured.duration_ms.round(),
            "withheld": e.withheld.map(|w| w.says()),
        })).collect::<Vec<_>>(),
        "total": listed.len(),
        "static": hidden,
        "dropped": dropped,
        "page": page,
        "pages": pages,
    });
    Ok(untrusted_result(&text, data))
}

fn header_lines(hs: &[shared::network::Header]) -> String {
    hs.iter().map(|h| format!("{}: {}\n", h.name, h.value)).collect()
}

fn body_text(b: &Option<RequestBody>) -> String {
    match b {
        None => "(no request body)".into(),
        Some(RequestBody::Raw { text, .. }) => text.clone(),
        Some(RequestBody::Form { fields }) => {
            fields.iter().flat_map(|(k, vs)| vs.iter().map(move |v| format!("{k}={v}"))).collect::<Vec<_>>().join("\n")
        }
    }
}

async fn request(state: &AppState, caller: &Caller, a: NetworkRequestArgs) -> Result<CallToolResult, WireError> {
    if a.reveal && !state.config().allow_reveal {
        return Err(WireError::new(
            ErrorCode::PermissionDenied,
            "reveal is off: values stay redacted unless the person starts the daemon with --allow-reveal",
        ));
    }
    let Some(entry) = state.inner.network.get(caller.key, a.id) else {
        return Err(WireError::new(ErrorCode::NotFound, format!("no request #{}", a.id)));
    };
    shared::handoff::check_handed_tab(entry.captured.tab, &super::handed_tabs(state))?;
    let c = if a.reveal {
        let part = a.part.map_or("all", part_name);
        let summary = format!("reveal network request #{} ({part})", a.id);
        Audit::new(state, caller)
            .record(Row {
                tool: "browser_network_request",
                tab: Some(entry.captured.tab),
                summary: &summary,
                outcome: "ok",
                ..Row::default()
            })
            .await;
        tracing::info!(id = a.id, part, "network request revealed");
        entry.captured
    } else {
        redact_captured(&entry.captured, &known(state).await)
    };
    if let Some(w) = entry.withheld {
        let text = format!("{}\n{}: no header, body or message of it was kept\n", line(entry.id, &c, &c.url), w.says());
        return Ok(untrusted_result(&text, json!({ "id": entry.id, "url": c.url, "withheld": w.says() })));
    }
    let text = match a.part {
        Some(Part::RequestHeaders) => header_lines(&c.request_headers),
        Some(Part::ResponseHeaders) => header_lines(&c.response_headers),
        Some(Part::RequestBody) => body_text(&c.request_body),
        Some(Part::ResponseBody) => response_body_text(&c.response_body),
        None => format!(
            "{}\n\nRequest headers:\n{}\nRequest body:\n{}\n\nResponse headers:\n{}\nResponse body:\n{}\n{}",
            line(entry.id, &c, &c.url),
            header_lines(&c.request_headers),
            body_text(&c.request_body),
            header_lines(&c.response_headers),
            response_body_text(&c.response_body),
            ws_lines(&c.websocket_messages),
        ),
    };
    let body = match &c.response_body {
        Some(ResponseBody::Text { text, .. }) => json!(text),
        _ => Value::Null,
    };
    let data = json!({ "id": entry.id, "request": c, "responseBody": body, "revealed": a.reveal });
    Ok(untrusted_result(&text, data))
}

/// A WebSocket's messages, one line each (`→` sent, `←` received).
fn ws_lines(messages: &[WsMessage]) -> String {
    if messages.is_empty() {
        return String::new();
    }
    let mut out = format!("\nWebSocket messages ({}):\n", messages.len());
    for m in messages {
        let kind = if m.opcode == 1 { "" } else { " (binary, base64)" };
        out.push_str(&format!("{} {}{kind}\n", if m.sent { "→" } else { "←" }, m.data));
    }
    out
}

fn part_name(p: Part) -> &'static str {
    match p {
        Part::RequestHeaders => "request-headers",
        Part::RequestBody => "request-body",
        Part::ResponseHeaders => "response-headers",
        Part::ResponseBody => "response-body",
    }
}

async fn export(state: &AppState, caller: &Caller, a: NetworkExportArgs) -> Result<CallToolResult, WireError> {
    let Some(dir) = state.config().exports_dir.clone() else {
        return Err(WireError::new(ErrorCode::PermissionDenied, "this daemon has no exports folder"));
    };
    let file = match a.name.as_deref() {
        Some(n) => export_file_name(n).ok_or_else(|| {
            WireError::new(ErrorCode::InvalidRequest, "name: use letters, digits, '.', '_' and '-' (e.g. run-1)")
        })?,
        None => format!("network-{}.har", crate::time::unix_now_millis()),
    };
    let (mut entries, _) = selected(state, caller, a.tab, a.filter.as_deref()).await?;
    let count = entries.len();
    // HAR 1.2 prefers entries by start time (importers, DevTools' among
    // them, list them so); the capture keeps them as they finished.
    entries.sort_by(|x, y| x.captured.started_ms.total_cmp(&y.captured.started_ms));
    let doc = har::document(entries.iter().map(|e| har::entry(e.id, &e.captured)).collect());
    let bytes = serde_json::to_vec_pretty(&doc).map_err(|e| {
        tracing::error!(error = %e, "HAR serialisation failed");
        WireError::internal("the export could not be written")
    })?;
    let path = tokio::task::spawn_blocking(move || write_private(&dir, &file, &bytes))
        .await
        .map_err(|_| WireError::internal("the export could not be written"))?
        .map_err(|e| {
            tracing::warn!(error = %e, "network export failed");
            WireError::internal("the export could not be written (see the daemon's log)")
        })?;
    let shown = path.display().to_string();
    let summary = format!("network export of {count} request(s) → {shown}");
    Audit::new(state, caller)
        .record(Row { tool: "browser_network_export", summary: &summary, outcome: "ok", ..Row::default() })
        .await;
    Ok(plain_result(
        format!("Wrote {count} request(s) as HAR 1.2 to {shown}\n"),
        json!({ "path": shown, "entries": count }),
    ))
}

/// Writes `bytes` to `dir/name` (dir 0700, file 0600): under a fresh
/// temporary name first, then renamed over `name`, so nothing already
/// there (a link, say) is ever opened.
pub(crate) fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let target = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), crate::time::unix_now_micros()));
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, &target)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_are_private_and_replace_a_planted_link_without_following_it() {
        let root = std::env::temp_dir().join(format!("chaperone-export-test-{}", std::process::id()));
        let dir = root.join("exports");
        std::fs::create_dir_all(&dir).unwrap();
        let victim = root.join("victim.txt");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("x.har")).unwrap();
        let p = write_private(&dir, "x.har", b"{}").unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&p).unwrap().file_type().is_symlink());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn regex_filters_are_bounded_and_errors_are_clear() {
        assert!(Filter::parse(Some("/(/")).is_err());
        assert!(Filter::parse(Some(&format!("/{}/", "a".repeat(600)))).is_err());
        assert!(Filter::parse(Some("/a{1000}{1000}/")).is_err(), "over the compiled size bound");
        let f = Filter::parse(Some(r"/items\/\d+$/")).unwrap().unwrap();
        assert!(f.matches("http://a/api/items/12") && !f.matches("http://a/api/items/x"));
    }
}
