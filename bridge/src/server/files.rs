//! Files (docs/design.md, "Secrets, sensitive fields and files"): `browser_upload_file`; the downloads
//! agent tabs start and `browser_downloads` are `super::downloads`. The rules are
//! `shared::files`; this is the IO around them.
//!
//! # Uploads
//!
//! 1. The tab is the agent's; 1 to `MAX_UPLOAD_FILES` paths.
//! 2. `[uploads] allowed_dirs` empty → `PERMISSION_DENIED` saying how the
//!    person allows a folder.
//! 3. On the blocking pool, each path: `shared::files::upload_place` on
//!    the path *as given*, before the disk is touched (`INVALID_REQUEST`
//!    for its shape; outside every allowed folder, as written or resolved,
//!    or with a `..` → `PERMISSION_DENIED` with one message for every such
//!    path, which never says whether it exists or where it resolves); then
//!    resolved to its real path (symlinks followed), which must be inside
//!    a resolved allowed folder too (a link out: the same refusal; a
//!    missing path inside is `NOT_FOUND`); opened **once**, that real
//!    path, with `O_NOFOLLOW | O_NONBLOCK` (a FIFO cannot block the open,
//!    a last component swapped for a symlink fails); then only the open
//!    handle is looked at: its `fstat` (a regular file, else
//!    `INVALID_REQUEST`; one name only, else `PERMISSION_DENIED` unless
//!    `[uploads] allow_hard_links = true`, since a hard link is another
//!    name for a file that may lie outside; at most 10 MB, else
//!    `INVALID_REQUEST`), what `/proc/self/fd/N` says it is (the real path
//!    checked, else a folder on the way was swapped: `PERMISSION_DENIED`),
//!    and its bytes, read with a bound. All files together at most 25 MB.
//!    No check-then-open race: what was checked is what is read.
//! 4. The bytes are staged here under a fresh upload id, and the action
//!    pipeline (`actions::upload`) runs `Action::UploadFiles` with names,
//!    sizes, SHA-256 and folders only: classified (medium; high on
//!    payment and account pages), decided, the person asked per policy
//!    (the approval window names each file, its size and folder).
//! 5. Once the extension's gate let it through, the worker asks for the
//!    bytes (`ExtToBridge::UploadRequest`): they are sent once, in
//!    `UploadChunk` frames of at most `UPLOAD_CHUNK_BYTES`, on that
//!    connection; the staged bytes are dropped when sent and whenever the
//!    tool call ends. The agent's result and the audit rows say name, size
//!    and SHA-256, never contents.
//!
//! # Downloads
//!
//! In `super::downloads`, which keeps their list.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::libc;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use shared::action::Action;
use shared::audit::AuditDecision;
use shared::error::{ErrorCode, WireError};
use shared::files::PlaceRefusal;
use shared::files::{
    MAX_UPLOAD_FILE_BYTES, MAX_UPLOAD_FILES, MAX_UPLOAD_TOTAL_BYTES, UPLOAD_CHUNK_BYTES, UploadFile, human_size,
};
use shared::protocol::BridgeToExt;
use shared::tools::UploadFileArgs;

use super::AppState;
use super::actions;
use super::audit::{Audit, Caller, Row};
use crate::config::FilesPolicy;

/// How `config.toml` allows uploads, for the agent.
const HOW_TO_ALLOW_UPLOADS: &str = "the person allows a folder with `[uploads] allowed_dirs = [\"/path/to/folder\"]` \
in config.toml in the Chaperone home and restarts the daemon";

/// Staged uploads (by upload id).
#[derive(Default)]
pub(crate) struct Files {
    uploads: Mutex<HashMap<u64, Vec<Vec<u8>>>>,
    next_upload: AtomicU64,
}

impl Files {
    fn uploads(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<Vec<u8>>>> {
        self.uploads.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn stage(&self, bytes: Vec<Vec<u8>>) -> u64 {
        // Unique across daemon restarts, like gate ids.
        let base = crate::time::unix_now_micros().max(1);
        let _ = self.next_upload.compare_exchange(0, base, Ordering::Relaxed, Ordering::Relaxed);
        let id = self.next_upload.fetch_add(1, Ordering::Relaxed);
        self.uploads().insert(id, bytes);
        id
    }
}

/// Drops the staged bytes of an upload when its tool call ends, however.
struct Unstage<'a>(&'a AppState, u64);

impl Drop for Unstage<'_> {
    fn drop(&mut self) {
        self.0.inner.files.uploads().remove(&self.1);
    }
}

// ------------------------------------------------------------------ uploads

/// `browser_upload_file` (see the module docs).
pub(crate) async fn browser_upload_file(
    state: &AppState,
    caller: &Caller,
    args: UploadFileArgs,
) -> Result<CallToolResult, WireError> {
    if !shared::tools::is_valid_ref(&args.element_ref) {
        return Err(WireError::new(ErrorCode::InvalidRequest, "ref must be an element ref like e12"));
    }
    if state.config().files.allowed_dirs.is_empty() {
        tracing::info!(tool = "browser_upload_file", "upload refused: uploads are off");
        return Err(WireError::new(ErrorCode::PermissionDenied, format!("uploads are off; {HOW_TO_ALLOW_UPLOADS}")));
    }
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    if args.paths.is_empty() || args.paths.len() > MAX_UPLOAD_FILES {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            format!("paths must list 1 to {MAX_UPLOAD_FILES} files"),
        ));
    }
    let files = state.config().files.clone();
    let paths = args.paths.clone();
    let read = tokio::task::spawn_blocking(move || read_uploads(&files, &paths))
        .await
        .unwrap_or_else(|_| Err(WireError::internal("reading the files failed")));
    let loaded = match read {
        Ok(l) => l,
        Err(e) => {
            let summary = format!("upload {}", args.paths.iter().map(|p| shown(p)).collect::<Vec<_>>().join(", "));
            let reasons = ["uploads a file".to_string()];
            Audit::new(state, caller)
                .record(Row {
                    tool: "browser_upload_file",
                    tab: Some(tab),
                    summary: &summary,
                    url: state.actions().page(tab).url.as_deref(),
                    reasons: &reasons,
                    decision: Some(AuditDecision::Deny),
                    decided_by: Some(shared::audit::DecidedBy::Policy),
                    outcome: e.code.as_str(),
                    ..Row::default()
                })
                .await;
            tracing::info!(tool = "browser_upload_file", tab, code = e.code.as_str(), "upload refused");
            return Err(e);
        }
    };
    let (files, bytes): (Vec<UploadFile>, Vec<Vec<u8>>) = loaded.into_iter().unzip();
    let upload = state.inner.files.stage(bytes);
    let _unstage = Unstage(state, upload);
    let action = Action::UploadFiles { upload, files: files.clone() };
    let mut result = actions::upload(state, caller, tab, args.element_ref, args.intent, action).await?;
    if let Some(Value::Object(o)) = result.structured_content.as_mut().and_then(|v| v.get_mut("data")) {
        o.insert("files".into(), files_json(&files));
    }
    Ok(result)
}

fn files_json(files: &[UploadFile]) -> Value {
    Value::Array(
        files
            .iter()
            .map(|f| json!({ "name": f.name, "size": f.size, "sha256": f.sha256, "folder": f.folder }))
            .collect(),
    )
}

/// A path as the agent's messages show it: control characters escaped, cut.
fn shown(path: &str) -> String {
    let mut s = String::new();
    shared::snapshot::quote(path, &mut s);
    s
}

/// Step 3 of the module docs, for every path.
fn read_uploads(files: &FilesPolicy, paths: &[String]) -> Result<Vec<(UploadFile, Vec<u8>)>, WireError> {
    let dirs: Vec<String> = files
        .allowed_dirs
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .filter_map(|p| p.to_str().map(str::to_string))
        .collect();
    let mut total = 0u64;
    let mut out = Vec::new();
    for raw in paths {
        let (meta, bytes) = read_one(&dirs, files, raw)?;
        total += meta.size;
        if total > MAX_UPLOAD_TOTAL_BYTES {
            return Err(WireError::new(
                ErrorCode::InvalidRequest,
                format!("the files add up to more than {}; nothing uploaded", human_size(MAX_UPLOAD_TOTAL_BYTES)),
            ));
        }
        out.push((meta, bytes));
    }
    Ok(out)
}

fn read_one(dirs: &[String], files: &FilesPolicy, raw: &str) -> Result<(UploadFile, Vec<u8>), WireError> {
    let configured = &files.allowed_dirs;
    // One message for every path outside, whatever the disk holds there:
    // never whether it exists or where it resolves.
    let outside = || {
        WireError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{} is not inside a folder the person allowed for uploads ({}); nothing uploaded",
                shown(raw),
                configured.iter().map(|d| shown(&d.to_string_lossy())).collect::<Vec<_>>().join(", ")
            ),
        )
    };
    // Decided on the path as given, before the disk is touched.
    let folders: Vec<&str> =
        dirs.iter().map(String::as_str).chain(configured.iter().filter_map(|d| d.to_str())).collect();
    match shared::files::upload_place(raw, &folders) {
        Ok(()) => {}
        Err(PlaceRefusal::Shape(r)) => {
            return Err(WireError::new(r.code(), format!("{}: {}", r.message(), shown(raw))));
        }
        Err(PlaceRefusal::Outside) => return Err(outside()),
    }
    let real = match std::fs::canonicalize(raw) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => {
            return Err(WireError::new(ErrorCode::NotFound, format!("no such file: {}", shown(raw))));
        }
        Err(e) => return Err(io_refusal(raw, &e)),
    };
    // A link inside that leads out: the same refusal, the target unsaid.
    if !real.to_str().is_some_and(|r| dirs.iter().any(|d| shared::files::inside(r, d))) {
        return Err(outside());
    }
    // Opened once; from here on only the handle is looked at.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&real)
        .map_err(|e| io_refusal(raw, &e))?;
    let md = file.metadata().map_err(|e| io_refusal(raw, &e))?;
    if md.is_dir() {
        return Err(WireError::new(ErrorCode::InvalidRequest, format!("{} is a folder, not a file", shown(raw))));
    }
    if !md.is_file() {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            format!("{} is not a regular file (a device, FIFO or socket); nothing uploaded", shown(raw)),
        ));
    }
    if !shared::files::hard_links_allowed(md.nlink(), files.allow_hard_links) {
        tracing::info!(reason = "hard_links", links = md.nlink(), "upload refused");
        return Err(WireError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{} has other names (hard links), which may be files outside the allowed folder; nothing \
                 uploaded (the person can allow such files with `allow_hard_links = true` under [uploads])",
                shown(raw)
            ),
        ));
    }
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok();
    if opened.as_deref() != Some(real.as_path()) {
        tracing::warn!(reason = "path_changed", "an upload path changed while it was checked");
        return Err(WireError::new(
            ErrorCode::PermissionDenied,
            format!("{} changed while it was being checked; nothing uploaded", shown(raw)),
        ));
    }
    let too_big = |size: u64| {
        WireError::new(
            ErrorCode::InvalidRequest,
            format!(
                "{} is {}; a file may be at most {}; nothing uploaded",
                shown(raw),
                human_size(size),
                human_size(MAX_UPLOAD_FILE_BYTES)
            ),
        )
    };
    if md.len() > MAX_UPLOAD_FILE_BYTES {
        return Err(too_big(md.len()));
    }
    let mut bytes = Vec::with_capacity(md.len() as usize);
    (&file).take(MAX_UPLOAD_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_refusal(raw, &e))?;
    if bytes.len() as u64 > MAX_UPLOAD_FILE_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    let name = real.file_name().and_then(|n| n.to_str()).unwrap_or("file").to_string();
    let folder = real.parent().and_then(Path::to_str).unwrap_or("/").to_string();
    let meta = UploadFile { name, size: bytes.len() as u64, sha256: sha256_hex(&bytes), folder };
    Ok((meta, bytes))
}

fn io_refusal(raw: &str, e: &std::io::Error) -> WireError {
    match (e.kind(), e.raw_os_error()) {
        (std::io::ErrorKind::NotFound, _) => {
            WireError::new(ErrorCode::NotFound, format!("no such file: {}", shown(raw)))
        }
        (_, Some(libc::ELOOP)) => WireError::new(
            ErrorCode::PermissionDenied,
            format!("{} became a symbolic link while it was being checked; nothing uploaded", shown(raw)),
        ),
        (std::io::ErrorKind::PermissionDenied, _) => {
            WireError::new(ErrorCode::PermissionDenied, format!("{} cannot be read (permission denied)", shown(raw)))
        }
        _ => {
            tracing::warn!(error = %e, "an upload could not be read");
            WireError::new(ErrorCode::InvalidRequest, format!("{} cannot be read", shown(raw)))
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) async fn send_upload(state: &AppState, connection: u64, upload: u64) {
    let staged = state.inner.files.uploads().remove(&upload);
    let Some(files) = staged else {
        tracing::warn!(connection, upload, "upload request for no staged upload");
        let error =
            WireError::new(ErrorCode::PermissionDenied, "no upload waits under this id (it was sent already or ended)");
        state.hub().send_to(connection, BridgeToExt::UploadRefused { upload, error }).await;
        return;
    };
    let count = files.len();
    for (i, bytes) in files.iter().enumerate() {
        let chunks: Vec<&[u8]> =
            if bytes.is_empty() { vec![&[][..]] } else { bytes.chunks(UPLOAD_CHUNK_BYTES).collect() };
        let n = chunks.len();
        for (j, chunk) in chunks.into_iter().enumerate() {
            let frame = BridgeToExt::UploadChunk {
                upload,
                file: i as u32,
                data: shared::files::base64_encode(chunk),
                last: i + 1 == count && j + 1 == n,
            };
            if !state.hub().send_to(connection, frame).await {
                tracing::debug!(connection, upload, "the connection went away during an upload");
                return;
            }
        }
    }
    tracing::info!(connection, upload, files = count, "upload sent to the extension");
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn upload_paths_are_resolved_opened_once_and_bounded() {
        let root = tmp();
        let allowed = root.path().join("allowed");
        let other = root.path().join("other");
        std::fs::create_dir_all(allowed.join("sub")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(allowed.join("ok.txt"), b"hello").unwrap();
        std::fs::write(other.join("secret.txt"), b"nope").unwrap();
        std::os::unix::fs::symlink(other.join("secret.txt"), allowed.join("link-out")).unwrap();
        std::os::unix::fs::symlink(allowed.join("ok.txt"), allowed.join("link-in")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(allowed.join("fifo")).status().unwrap().success());
        let big = File::create(allowed.join("big.bin")).unwrap();
        big.set_len(MAX_UPLOAD_FILE_BYTES + 1).unwrap();
        let dirs = FilesPolicy { allowed_dirs: vec![allowed.clone()], ..FilesPolicy::default() };
        let p = |rel: &str| format!("{}/{rel}", allowed.display());
        let code = |path: String| read_uploads(&dirs, &[path]).map(|_| ()).unwrap_err().code;

        let ok = read_uploads(&dirs, &[p("ok.txt"), p("link-in"), p("./ok.txt")]).unwrap();
        assert_eq!(ok.len(), 3);
        assert_eq!(ok[0].0.name, "ok.txt");
        assert_eq!(ok[0].0.size, 5);
        assert_eq!(ok[0].0.sha256, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
        assert_eq!(ok[1].0.name, "ok.txt", "a link inside is the file it points to");
        assert_eq!(ok[0].1, b"hello");

        assert_eq!(code(format!("{}/secret.txt", other.display())), ErrorCode::PermissionDenied);
        assert_eq!(code(p("link-out")), ErrorCode::PermissionDenied);
        assert_eq!(code(p("../other/secret.txt")), ErrorCode::PermissionDenied);
        assert_eq!(code(p("ok\0.txt")), ErrorCode::InvalidRequest);
        assert_eq!(code("relative/ok.txt".into()), ErrorCode::InvalidRequest);
        assert_eq!(code(p("big.bin")), ErrorCode::InvalidRequest);
        assert_eq!(code(p("sub")), ErrorCode::InvalidRequest);
        assert_eq!(code(p("fifo")), ErrorCode::InvalidRequest, "a FIFO is refused without blocking");
        assert_eq!(code("/dev/null".into()), ErrorCode::PermissionDenied);
        assert_eq!(code(p("missing.txt")), ErrorCode::NotFound);
        assert_eq!(code(format!("{}/missing.txt", other.display())), ErrorCode::PermissionDenied, "no probing");
        // A sibling whose name starts like the allowed folder is outside.
        let sibling = root.path().join("allowed-not");
        std::fs::create_dir_all(&sibling).unwrap();
        std::fs::write(sibling.join("x"), b"x").unwrap();
        assert_eq!(code(format!("{}/x", sibling.display())), ErrorCode::PermissionDenied);
        // Together at most 25 MB.
        let nine = File::create(allowed.join("nine.bin")).unwrap();
        nine.set_len(9 * 1024 * 1024).unwrap();
        let e = read_uploads(&dirs, &[p("nine.bin"), p("nine.bin"), p("nine.bin")]).map(|_| ()).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidRequest);
        assert!(e.message.contains("add up"), "{}", e.message);
    }

    /// Every refusal outside the folder is one message, whatever the disk
    /// holds there: nothing says whether a path exists or where it leads.
    #[test]
    fn refusals_outside_say_nothing_about_the_disk() {
        let root = tmp();
        let allowed = root.path().join("allowed");
        std::fs::create_dir_all(&allowed).unwrap();
        std::fs::write(allowed.join("ok.txt"), b"hello").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", allowed.join("link-out")).unwrap();
        std::os::unix::fs::symlink("/etc/nope", allowed.join("dangling-out")).unwrap();
        let files = FilesPolicy { allowed_dirs: vec![allowed.clone()], ..FilesPolicy::default() };
        let folder = allowed.display().to_string();
        let refusal = |path: &str| read_uploads(&files, &[path.to_string()]).map(|_| ()).unwrap_err();
        let expected = |path: &str| {
            let mut shown = String::new();
            shared::snapshot::quote(path, &mut shown);
            let mut dir = String::new();
            shared::snapshot::quote(&folder, &mut dir);
            format!("{shown} is not inside a folder the person allowed for uploads ({dir}); nothing uploaded")
        };
        let outside = [
            "/etc/./passwd".to_string(),
            "/etc/passwd".to_string(),
            "/etc/nope".to_string(),
            "/proc/self/root/etc/passwd".to_string(),
            "/proc/self/cwd".to_string(),
            format!("{folder}/../allowed/ok.txt"),
            format!("{folder}/link-out"),
        ];
        for path in &outside {
            let e = refusal(path);
            assert_eq!(e.code, ErrorCode::PermissionDenied, "{path}");
            assert_eq!(e.message, expected(path), "{path}: one message, no resolved path");
            assert!(!e.message.contains("resolves"), "{path}: {}", e.message);
        }
        // A dangling link out of the folder is "no such file" like any
        // missing file inside: it names nothing outside.
        let e = refusal(&format!("{folder}/dangling-out"));
        assert_eq!(e.code, ErrorCode::NotFound);
        assert!(!e.message.contains("/etc"), "{}", e.message);
        // Control: the file inside is read.
        assert_eq!(read_uploads(&files, &[format!("{folder}/ok.txt")]).unwrap()[0].1, b"hello");
    }

    #[test]
    fn hard_linked_files_need_the_persons_leave() {
        let root = tmp();
        let allowed = root.path().join("allowed");
        let other = root.path().join("elsewhere");
        std::fs::create_dir_all(&allowed).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("secret.txt"), b"secret").unwrap();
        std::fs::hard_link(other.join("secret.txt"), allowed.join("linked.txt")).unwrap();
        std::fs::write(allowed.join("single.txt"), b"single").unwrap();
        let mut files = FilesPolicy { allowed_dirs: vec![allowed.clone()], ..FilesPolicy::default() };
        let linked = format!("{}/linked.txt", allowed.display());
        let e = read_uploads(&files, std::slice::from_ref(&linked)).map(|_| ()).unwrap_err();
        assert_eq!(e.code, ErrorCode::PermissionDenied);
        assert!(e.message.contains("allow_hard_links"), "{}", e.message);
        assert!(!e.message.contains("elsewhere"), "the other name is not told: {}", e.message);
        // Control: a file with one name is read.
        assert!(read_uploads(&files, &[format!("{}/single.txt", allowed.display())]).is_ok());
        files.allow_hard_links = true;
        assert_eq!(read_uploads(&files, &[linked]).unwrap()[0].1, b"secret");
    }
}
