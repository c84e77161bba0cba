//! Downloads (docs/design.md, "Secrets, sensitive fields and files"; issues 29 and 30): every download
//! the browser starts while the extension is connected, whose it is, what
//! became of it, and `browser_downloads`. The rules are `shared::downloads`
//! and `shared::files`; this is the IO around them.
//!
//! The worker reports **every** download (`DownloadEvent::Started`, with
//! its `Provenance`) while Chromium waits for its file name, and the bridge
//! decides whose it is with its own registry
//! (`shared::downloads::attribute`), failing closed:
//!
//! - the person's (a tab no session owns, nor any tab that opened it; or
//!   no tab known and no agent tab at its origin): `Leave`, nothing
//!   recorded or logged;
//! - an agent session's (its tab, or a tab its tab opened), or — when no
//!   tab is known — the one session whose tabs show its origin (a `blob:`
//!   or `data:` URL, `fetch` then a blob, `<a download>`): handled below;
//! - no tab known and several sessions at its origin: `Cancel`, listed to
//!   each as `blocked`.
//!
//! An agent's download:
//!
//! - larger than the limit as declared (`[downloads] max_mb`, at most
//!   `MAX_DOWNLOAD_BYTES`): `Cancel`, `too_large`;
//! - downloads off (the default): `Cancel`; listed as `blocked`, and the
//!   next `browser_downloads` is `DOWNLOAD_BLOCKED` naming the files and
//!   how to enable downloads; audit row `deny`.
//! - on: the pipeline (`actions::keep_download`: STOP/Pause, site rules,
//!   `ActionKind::Download` — medium, executables and archives high — the
//!   policy, the extension's gate and the person; `waiting_for_person`
//!   while asked). Refused: `Cancel`, `denied`. Let through: `Keep` with
//!   the limit; the worker cancels it the moment it passes the limit
//!   (`TooLarge`, listed `too_large`), else reports the completed file
//!   (`Complete`); the bridge copies it into the download folder under
//!   `shared::files::sanitize_download_name` (a new file, `O_EXCL`, mode
//!   0600 — never executable — a numeric suffix instead of overwriting,
//!   nothing followed), hashing as it copies, then `Discard` makes the
//!   worker remove Chromium's copy. The file is never opened or run. Audit
//!   row `saved` with name, size, SHA-256 and path.
//! - interrupted by the browser: `shared::downloads::interrupted_state`
//!   (`cancelled`, `blocked_by_browser`, `too_large`, `failed`);
//! - an attachment the browser never turned into a download (held for the
//!   person's "download multiple files" permission, or refused:
//!   `DownloadEvent::NotStarted`): listed `blocked_by_browser`.
//!
//! Every entry has an audit row. `browser_downloads {tab?}` waits (at most
//! `DOWNLOAD_WAIT_MS`) while a listed download is pending, then lists them:
//! name, size, SHA-256, MIME type, path, state, message.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::libc;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use shared::action::Action;
use shared::audit::AuditDecision;
use shared::downloads::{Attribution, Provenance};
use shared::error::{ErrorCode, WireError};
use shared::files::{
    DOWNLOAD_WAIT_MS, DownloadEvent, DownloadState, DownloadVerdict, MAX_DOWNLOAD_BYTES, MAX_LISTED_DOWNLOADS,
    human_size,
};
use shared::protocol::{BridgeToExt, TabId};
use shared::sessions::SessionKey;
use shared::tools::DownloadsArgs;

use super::AppState;
use super::actions;
use super::audit::{Audit, Caller, Row};
use super::results::untrusted_result;

/// How `config.toml` enables downloads, for the agent.
const HOW_TO_ENABLE_DOWNLOADS: &str = "the person enables downloads with `[downloads] enabled = true` in config.toml in the Chaperone home and \
     restarts the daemon";

/// One download of an agent tab (or one that could not be placed).
#[derive(Debug, Clone)]
pub(super) struct Download {
    /// `chrome.downloads` id (0: never became one, `NotStarted`).
    id: u64,
    tab: TabId,
    /// The sessions that list it: the one whose tab started it, or every
    /// session at its origin when no tab is known.
    sessions: Vec<SessionKey>,
    name: String,
    /// Redacted, without its query.
    url: String,
    mime: String,
    size: Option<u64>,
    sha256: Option<String>,
    path: Option<PathBuf>,
    state: DownloadState,
    /// Why it was refused or failed.
    message: Option<String>,
    /// The agent was told it was blocked.
    reported: bool,
    /// The bridge said `Keep`: a `Complete` is expected.
    kept: bool,
}

impl Download {
    fn new(id: u64, tab: TabId, sessions: Vec<SessionKey>, url: &str, name: &str, mime: &str) -> Download {
        Download {
            id,
            tab,
            sessions,
            name: shared::files::sanitize_download_name(name),
            url: shared::redact::redact_url(shared::url::strip_query(url)),
            mime: mime.chars().filter(|c| !c.is_control()).take(100).collect(),
            size: None,
            sha256: None,
            path: None,
            state: DownloadState::InProgress,
            message: None,
            reported: false,
            kept: false,
        }
    }
}

/// This daemon's downloads, newest last (at most [`MAX_LISTED_DOWNLOADS`]).
#[derive(Default)]
pub(crate) struct Downloads(std::sync::Mutex<Vec<Download>>);

impl Downloads {
    fn downloads(&self) -> std::sync::MutexGuard<'_, Vec<Download>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn update(&self, id: u64, f: impl FnOnce(&mut Download)) -> Option<Download> {
        let mut all = self.downloads();
        let d = all.iter_mut().rev().find(|d| d.id == id && id != 0)?;
        f(d);
        Some(d.clone())
    }

    fn push(&self, d: Download) {
        let mut all = self.downloads();
        all.push(d);
        let excess = all.len().saturating_sub(MAX_LISTED_DOWNLOADS);
        all.drain(..excess);
    }
}

/// A name as the agent's messages show it: control characters escaped, cut.
fn shown(name: &str) -> String {
    let mut s = String::new();
    shared::snapshot::quote(name, &mut s);
    s
}

/// The audit's caller for downloads: the browser reported them.
fn download_caller() -> Caller {
    Caller::internal("browser")
}

async fn verdict(state: &AppState, connection: u64, id: u64, verdict: DownloadVerdict) {
    if !state.hub().send_to(connection, BridgeToExt::Download { id, verdict }).await {
        tracing::debug!(connection, id, "the connection went away before a download verdict");
    }
}

pub(super) async fn on_download(state: &AppState, connection: u64, event: DownloadEvent) {
    match event {
        DownloadEvent::Started { id, provenance, url, name, mime, size } => {
            let attribution = {
                let registry = state.registry();
                shared::downloads::attribute(&provenance, |t| registry.owner(t))
            };
            let (tab, sessions, placed) = match attribution {
                Attribution::Person => {
                    // The person's own download: untouched, unrecorded.
                    verdict(state, connection, id, DownloadVerdict::Leave).await;
                    return;
                }
                Attribution::Agent { session, tab } => (tab, vec![session], true),
                Attribution::Unknown { sessions, tab } => (tab, sessions, false),
            };
            let mut d = Download::new(id, tab, sessions, &url, &name, &mime);
            d.size = size;
            started(state, connection, d, placed, &provenance).await;
        }
        DownloadEvent::Complete { id, path } => complete(state, connection, id, PathBuf::from(path)).await,
        DownloadEvent::Interrupted { id, reason } => {
            let mut reason = reason;
            shared::limits::truncate_chars(&mut reason, 80);
            if let Some(d) = state.inner.downloads.update(id, |d| {
                if d.state.pending() {
                    d.state = shared::downloads::interrupted_state(&reason);
                    d.message = Some(format!("the browser interrupted it ({reason})"));
                }
            }) {
                record(state, &d, None, d.state.as_str()).await;
            }
        }
        DownloadEvent::TooLarge { id, received } => {
            let limit = state.config().files.max_download_bytes();
            if let Some(d) = state.inner.downloads.update(id, |d| {
                d.state = DownloadState::TooLarge;
                d.size = Some(received);
                d.message = Some(format!(
                    "cancelled while it ran: it passed the limit of {} (`[downloads] max_mb`); nothing was kept",
                    human_size(limit)
                ));
            }) {
                tracing::info!(tab = d.tab, id, received, "download too large, cancelled");
                record(state, &d, Some(AuditDecision::Deny), d.state.as_str()).await;
            }
        }
        DownloadEvent::NotStarted { tab, url, name } => {
            let shared::sessions::Owner::Session(session) = state.registry().owner(tab) else { return };
            let mut d = Download::new(0, tab, vec![session], &url, &name, "");
            d.state = DownloadState::BlockedByBrowser;
            d.message = Some(
                "the server sent it but the browser did not start the download: it holds a page's further \
                 automatic downloads until the person allows \"download multiple files\" (or refuses them)"
                    .into(),
            );
            tracing::info!(tab, "an attachment the browser did not turn into a download");
            state.inner.downloads.push(d.clone());
            record(state, &d, None, d.state.as_str()).await;
        }
    }
}

async fn started(state: &AppState, connection: u64, d: Download, placed: bool, provenance: &Provenance) {
    let (id, tab) = (d.id, d.tab);
    state.inner.downloads.push(d.clone());
    let files = state.config().files.clone();
    let block = |state_now: DownloadState, message: String| {
        state.inner.downloads.update(id, |d| {
            d.state = state_now;
            d.message = Some(message);
        })
    };
    let limit = files.max_download_bytes();
    if let Some(size) = d.size.filter(|s| *s > limit) {
        verdict(state, connection, id, DownloadVerdict::Cancel).await;
        let message =
            format!("it is {}, over the limit of {} (`[downloads] max_mb`)", human_size(size), human_size(limit));
        if let Some(d) = block(DownloadState::TooLarge, message) {
            record(state, &d, Some(AuditDecision::Deny), d.state.as_str()).await;
        }
        return;
    }
    let unplaced = if placed {
        None
    } else {
        let origin = provenance.origin.as_deref().unwrap_or("an unknown origin");
        Some(format!(
            "the browser did not say which tab started it (a blob:, data: or script-made download) and an agent \
             tab shows {origin}"
        ))
    };
    if !files.downloads_enabled || files.downloads_dir.is_none() {
        verdict(state, connection, id, DownloadVerdict::Cancel).await;
        let mut message = format!("downloads are off, so the browser cancelled it; {HOW_TO_ENABLE_DOWNLOADS}");
        if let Some(u) = &unplaced {
            message.push_str(&format!(" ({u})"));
        }
        tracing::info!(tab, id, placed, "download blocked");
        if let Some(d) = block(DownloadState::Blocked, message) {
            record(state, &d, Some(AuditDecision::Deny), ErrorCode::DownloadBlocked.as_str()).await;
        }
        return;
    }
    if d.sessions.len() != 1 {
        // Several sessions show its origin: whose it is cannot be told.
        verdict(state, connection, id, DownloadVerdict::Cancel).await;
        let message = format!("{}; several agents show that origin, so it was cancelled", unplaced.unwrap_or_default());
        tracing::info!(tab, id, "download of no known tab cancelled");
        if let Some(d) = block(DownloadState::Denied, message) {
            record(state, &d, Some(AuditDecision::Deny), d.state.as_str()).await;
        }
        return;
    }
    let risky = shared::files::download_risk(&d.name, &d.mime).is_some();
    let action = Action::KeepDownload { name: d.name.clone(), mime: d.mime.clone(), risky };
    let asking = || {
        state.inner.downloads.update(id, |d| d.state = DownloadState::WaitingForPerson);
    };
    match actions::keep_download(state, &download_caller(), tab, action, asking).await {
        Ok(_) => {
            state.inner.downloads.update(id, |d| {
                d.kept = true;
                d.state = DownloadState::InProgress;
            });
            verdict(state, connection, id, DownloadVerdict::Keep { max_bytes: limit }).await;
        }
        Err(e) => {
            verdict(state, connection, id, DownloadVerdict::Cancel).await;
            state.inner.downloads.update(id, |d| {
                d.state = DownloadState::Denied;
                d.message = Some(format!("{}: {}", e.code, e.message));
            });
            tracing::info!(tab, id, code = e.code.as_str(), "download refused");
        }
    }
}

async fn complete(state: &AppState, connection: u64, id: u64, path: PathBuf) {
    let Some(d) = state.inner.downloads.downloads().iter().rev().find(|d| d.id == id).cloned() else {
        tracing::debug!(id, "completion of an unknown download");
        return;
    };
    if !d.kept || !d.state.pending() {
        tracing::warn!(id, "completion of a download that was not kept");
        return;
    }
    let Some(dir) = state.config().files.downloads_dir.clone() else { return };
    let name = d.name.clone();
    // The running watch may miss a download that finished between two
    // looks (a fast server): the copy enforces the limit again.
    let limit = state.config().files.max_download_bytes();
    let saved = tokio::task::spawn_blocking(move || save_copy(&dir, &name, &path, limit))
        .await
        .unwrap_or_else(|_| Err(NotSaved::Failed("the copy task failed".to_string())));
    // Chromium's own copy goes either way: the one that counts is ours.
    verdict(state, connection, id, DownloadVerdict::Discard).await;
    let d = state.inner.downloads.update(id, |d| match saved {
        Ok(s) => {
            d.state = DownloadState::Saved;
            d.name = s.name;
            d.size = Some(s.size);
            d.sha256 = Some(s.sha256);
            d.path = Some(s.path);
        }
        Err(NotSaved::TooLarge(size)) => {
            d.state = DownloadState::TooLarge;
            d.size = Some(size);
            d.message = Some(format!(
                "it was over the limit of {} (`[downloads] max_mb`) when it finished; nothing was kept",
                human_size(limit)
            ));
        }
        Err(NotSaved::Failed(why)) => {
            d.state = DownloadState::Failed;
            d.message = Some(why);
        }
    });
    if let Some(d) = d {
        tracing::info!(tab = d.tab, id, state = d.state.as_str(), "download finished");
        record(state, &d, None, d.state.as_str()).await;
    }
}

/// One audit row for a download that ended (blocked, saved, failed).
async fn record(state: &AppState, d: &Download, decision: Option<AuditDecision>, outcome: &str) {
    let mut summary = String::from("download ");
    shared::snapshot::quote(&d.name, &mut summary);
    if let Some(size) = d.size {
        summary.push_str(&format!(" ({})", human_size(size)));
    }
    if !d.mime.is_empty() {
        summary.push_str(&format!(" {}", d.mime));
    }
    if let Some(sha) = &d.sha256 {
        summary.push_str(&format!(", sha256 {sha}"));
    }
    if let Some(p) = &d.path {
        summary.push_str(" → ");
        shared::snapshot::quote(&p.to_string_lossy(), &mut summary);
    }
    let reasons = d.message.iter().cloned().collect::<Vec<_>>();
    let caller = download_caller();
    Audit::new(state, &caller)
        .record(Row {
            tool: "download",
            tab: Some(d.tab),
            summary: &summary,
            url: Some(&d.url),
            reasons: &reasons,
            decision,
            decided_by: decision.map(|_| shared::audit::DecidedBy::Policy),
            outcome,
            ..Row::default()
        })
        .await;
}

/// A download as saved.
struct Saved {
    name: String,
    path: PathBuf,
    size: u64,
    sha256: String,
}

/// Why a completed download was not saved.
#[derive(Debug)]
enum NotSaved {
    /// Over the limit (bytes seen so far): nothing is kept.
    TooLarge(u64),
    /// Any other reason, for the agent (no internals).
    Failed(String),
}

impl From<String> for NotSaved {
    fn from(why: String) -> Self {
        NotSaved::Failed(why)
    }
}

/// Copies Chromium's completed file `src` into `dir` as a new file named
/// `name` (or its first free numeric suffix), mode 0600, hashing it, and
/// refuses a file over `limit` bytes (the configured limit, at most
/// `MAX_DOWNLOAD_BYTES`).
fn save_copy(dir: &Path, name: &str, src: &Path, limit: u64) -> Result<Saved, NotSaved> {
    let limit = limit.min(MAX_DOWNLOAD_BYTES);
    if Path::new(name).components().count() != 1 || name.contains('/') {
        return Err(NotSaved::Failed("the file name was not a plain name".into()));
    }
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| {
        tracing::warn!(error = %e, "the download folder cannot be created");
        "the download folder cannot be created (see the bridge log)".to_string()
    })?;
    let dir = std::fs::canonicalize(dir).map_err(|_| "the download folder cannot be resolved".to_string())?;
    let mut from = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(src)
        .map_err(|e| {
            tracing::warn!(error = %e, "the browser's download cannot be opened");
            "the browser's copy of the file cannot be read".to_string()
        })?;
    let md = from.metadata().map_err(|_| "the browser's copy cannot be read".to_string())?;
    if !md.is_file() {
        return Err(NotSaved::Failed("the browser's copy is not a regular file".into()));
    }
    if md.len() > limit {
        return Err(NotSaved::TooLarge(md.len()));
    }
    let (mut to, saved_name, path) = (0..10_000u32)
        .find_map(|n| {
            let candidate = shared::files::with_suffix(name, n);
            let path = dir.join(&candidate);
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)
            {
                Ok(f) => Some(Ok((f, candidate, path))),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                Err(e) => {
                    tracing::warn!(error = %e, "a download cannot be written");
                    Some(Err("the file cannot be written into the download folder".to_string()))
                }
            }
        })
        .unwrap_or_else(|| Err("too many files of that name in the download folder".to_string()))?;
    let result = copy_hashing(&mut from, &mut to, limit);
    match result {
        Ok((size, sha256)) => Ok(Saved { name: saved_name, path, size, sha256 }),
        Err(why) => {
            drop(to);
            let _ = std::fs::remove_file(&path);
            Err(why)
        }
    }
}

fn copy_hashing(from: &mut File, to: &mut File, limit: u64) -> Result<(u64, String), NotSaved> {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 256 * 1024];
    let mut size = 0u64;
    loop {
        let n = from.read(&mut buf).map_err(|_| "the browser's copy cannot be read".to_string())?;
        if n == 0 {
            break;
        }
        size += n as u64;
        if size > limit {
            return Err(NotSaved::TooLarge(size));
        }
        ctx.update(&buf[..n]);
        to.write_all(&buf[..n]).map_err(|_| "the file cannot be written into the download folder".to_string())?;
    }
    to.sync_all().map_err(|_| "the file cannot be written into the download folder".to_string())?;
    let sha = ctx.finish().as_ref().iter().map(|b| format!("{b:02x}")).collect();
    Ok((size, sha))
}

/// `browser_downloads` (see the module docs).
pub(crate) async fn browser_downloads(
    state: &AppState,
    caller: &Caller,
    args: DownloadsArgs,
) -> Result<CallToolResult, WireError> {
    if args.tab.is_some() {
        state.agent_tab(caller.key, args.tab)?;
    }
    let mine = |d: &Download| d.sessions.contains(&caller.key) && args.tab.is_none_or(|t| t == d.tab);
    let deadline = Instant::now() + Duration::from_millis(DOWNLOAD_WAIT_MS);
    while Instant::now() < deadline && state.inner.downloads.downloads().iter().any(|d| mine(d) && d.state.pending()) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (list, blocked) = {
        let mut all = state.inner.downloads.downloads();
        let mut blocked = Vec::new();
        for d in all.iter_mut().filter(|d| mine(d)) {
            if d.state == DownloadState::Blocked && !d.reported {
                d.reported = true;
                blocked.push(d.name.clone());
            }
        }
        (all.iter().filter(|d| mine(d)).cloned().collect::<Vec<_>>(), blocked)
    };
    if !blocked.is_empty() {
        let names = blocked.iter().map(|n| shown(n)).collect::<Vec<_>>().join(", ");
        return Err(WireError::new(
            ErrorCode::DownloadBlocked,
            format!("downloads are off, so the browser cancelled {names}; {HOW_TO_ENABLE_DOWNLOADS}"),
        ));
    }
    let mut text = if list.is_empty() {
        "No downloads in this session.".to_string()
    } else {
        format!("{} download(s) in this session (never opened or run):", list.len())
    };
    for d in &list {
        text.push_str(&format!("\n- {} tab {} ", d.state.as_str(), d.tab));
        shared::snapshot::quote(&d.name, &mut text);
        if let Some(size) = d.size {
            text.push_str(&format!(" {size} bytes"));
        }
        if !d.mime.is_empty() {
            text.push_str(&format!(" {}", d.mime));
        }
        if let Some(sha) = &d.sha256 {
            text.push_str(&format!(" sha256 {sha}"));
        }
        if let Some(p) = &d.path {
            text.push_str(" at ");
            shared::snapshot::quote(&p.to_string_lossy(), &mut text);
        }
        if let Some(m) = &d.message {
            text.push_str(" — ");
            text.push_str(m);
        }
    }
    let data = Value::Array(
        list.iter()
            .map(|d| {
                json!({
                    "tab": d.tab,
                    "name": d.name,
                    "size": d.size,
                    "sha256": d.sha256,
                    "mime": d.mime,
                    "path": d.path,
                    "state": d.state,
                    "url": d.url,
                    "message": d.message,
                })
            })
            .collect(),
    );
    Ok(untrusted_result(&text, json!({ "downloads": data })))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn sha256_hex(bytes: &[u8]) -> String {
        ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn saved_downloads_get_suffixes_and_no_execute_bit() {
        let root = tmp();
        let src = root.path().join("chromium-copy");
        std::fs::write(&src, b"payload").unwrap();
        std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = root.path().join("downloads/default");
        let a = save_copy(&dir, "report.pdf", &src, 1024).unwrap();
        let b = save_copy(&dir, "report.pdf", &src, 1024).unwrap();
        assert_eq!(a.name, "report.pdf");
        assert_eq!(b.name, "report (1).pdf");
        assert_eq!(std::fs::read(&a.path).unwrap(), b"payload");
        assert_eq!(a.sha256, sha256_hex(b"payload"));
        for p in [&a.path, &b.path] {
            assert_eq!(std::fs::metadata(p).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert!(save_copy(&dir, "../x", &src, 1024).is_err());
        // A symlink in Chromium's place is not followed.
        std::os::unix::fs::symlink(&src, root.path().join("link")).unwrap();
        assert!(save_copy(&dir, "l.txt", &root.path().join("link"), 1024).is_err());
        // Over the configured limit when it finished (the running watch
        // missed it): refused as too large, nothing left in the folder.
        let before = std::fs::read_dir(&dir).unwrap().count();
        assert!(matches!(save_copy(&dir, "big.bin", &src, 3), Err(NotSaved::TooLarge(7))));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);
    }
}
