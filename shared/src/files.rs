//! Files crossing between the person's disk and the browser
//! (docs/design.md, "Secrets, sensitive fields and files"): the rules the bridge and the extension
//! share, as pure functions with table tests.
//!
//! # Uploads
//!
//! `browser_upload_file {ref, paths}` sets files on one `<input
//! type=file>`. Each path the agent names must pass [`check_upload_path`]
//! (absolute, no NUL, not empty), then the bridge resolves it to its real
//! path and requires it [`inside`] one of `[uploads] allowed_dirs` (each
//! itself resolved); it opens that real path once and checks and reads
//! the open handle (a regular file, at most [`MAX_UPLOAD_FILE_BYTES`];
//! all files together at most [`MAX_UPLOAD_TOTAL_BYTES`]). The `Act`
//! carries only [`UploadFile`] metadata (name, size, SHA-256, folder);
//! the bytes go to the extension after its gate, in chunks of
//! [`UPLOAD_CHUNK_BYTES`] encoded with [`base64_encode`], so every frame
//! stays under `limits::MAX_FRAME_BYTES`.
//!
//! # Downloads
//!
//! A download started in an agent tab is cancelled unless `[downloads]
//! enabled = true`; then it is classified ([`download_risk`]: medium,
//! executables and archives high) and saved under
//! [`sanitize_download_name`] of the name the server gave
//! ([`content_disposition_filename`]), with [`with_suffix`] instead of
//! overwriting. Whose a download is, and the limits while it runs:
//! `crate::downloads`.

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;
use crate::tab::TabId;

/// One uploaded file at most (10 MiB).
pub const MAX_UPLOAD_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// All files of one upload together (25 MiB).
pub const MAX_UPLOAD_TOTAL_BYTES: u64 = 25 * 1024 * 1024;
/// Files in one `browser_upload_file`.
pub const MAX_UPLOAD_FILES: usize = 20;
/// Raw bytes per upload chunk frame (base64 makes it 4 MiB on the wire).
pub const UPLOAD_CHUNK_BYTES: usize = 3 * 1024 * 1024;
const _: () = assert!(UPLOAD_CHUNK_BYTES.div_ceil(3) * 4 + 4096 < crate::limits::MAX_FRAME_BYTES);
/// Longest saved download name, in bytes.
pub const MAX_DOWNLOAD_NAME_BYTES: usize = 200;
/// Largest download the bridge copies into the download directory (1 GiB).
pub const MAX_DOWNLOAD_BYTES: u64 = 1024 * 1024 * 1024;
/// Downloads `browser_downloads` remembers per daemon.
pub const MAX_LISTED_DOWNLOADS: usize = 200;
/// How long `browser_downloads` waits for downloads still in progress.
pub const DOWNLOAD_WAIT_MS: u64 = 30_000;
/// The name a download gets when nothing usable is left of the server's.
pub const FALLBACK_DOWNLOAD_NAME: &str = "download";

/// What the `Act` of an upload says about one file (never its bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadFile {
    /// The file name as the page will see it (the real path's last part).
    pub name: String,
    pub size: u64,
    /// Lower-case hex SHA-256 of the bytes.
    pub sha256: String,
    /// The folder it was read from (its real path).
    pub folder: String,
}

/// Why an upload path is refused before the disk is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRefusal {
    Empty,
    Nul,
    Relative,
}

impl PathRefusal {
    pub fn code(self) -> ErrorCode {
        ErrorCode::InvalidRequest
    }

    pub fn message(self) -> &'static str {
        match self {
            PathRefusal::Empty => "an upload path is empty",
            PathRefusal::Nul => "an upload path contains a NUL byte",
            PathRefusal::Relative => "an upload path must be absolute (start with /)",
        }
    }
}

/// The shape an upload path must have: absolute, no NUL, not empty.
pub fn check_upload_path(path: &str) -> Result<(), PathRefusal> {
    if path.is_empty() {
        Err(PathRefusal::Empty)
    } else if path.contains('\0') {
        Err(PathRefusal::Nul)
    } else if !path.starts_with('/') {
        Err(PathRefusal::Relative)
    } else {
        Ok(())
    }
}

/// Why an upload path is refused by [`upload_place`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceRefusal {
    /// Not the shape of an upload path ([`check_upload_path`]).
    Shape(PathRefusal),
    /// Not inside an allowed folder, as given. Every such refusal is this
    /// one value, whatever the disk holds at that path: the agent learns
    /// nothing of it (whether it exists, where a link points).
    Outside,
}

/// Decides whether an upload path is inside an allowed folder *on the
/// path as the agent gave it*, before the disk is touched: `..` is never
/// inside, `.` components are ignored, and `allowed` are the folders as
/// the person wrote them and as they resolve (both are the person's, not
/// the agent's). Only a path that passes is then resolved, and its real
/// path must be inside a resolved folder too (a symlink out of the folder
/// is then refused with the same [`PlaceRefusal::Outside`]).
pub fn upload_place(path: &str, allowed: &[&str]) -> Result<(), PlaceRefusal> {
    check_upload_path(path).map_err(PlaceRefusal::Shape)?;
    if allowed.iter().any(|d| inside(path, d)) { Ok(()) } else { Err(PlaceRefusal::Outside) }
}

/// Whether an open file with `links` hard links may be uploaded: a file
/// with more than one name may be a link to a file outside the allowed
/// folder (`ln /etc/shadow allowed/x` needs no symlink, and no path check
/// can see it), so it is refused unless the person set `[uploads]
/// allow_hard_links = true`.
pub fn hard_links_allowed(links: u64, allow_hard_links: bool) -> bool {
    links <= 1 || allow_hard_links
}

/// Whether the resolved absolute path `real` is `dir` or below it, by
/// whole components (`/a/bc` is not inside `/a/b`). Both must already be
/// real paths (no `..`, no symlinks); a `..` component in either is never
/// inside.
pub fn inside(real: &str, dir: &str) -> bool {
    let parts = |p: &str| p.split('/').filter(|c| !c.is_empty() && *c != ".").map(str::to_string).collect::<Vec<_>>();
    let (r, d) = (parts(real), parts(dir));
    if !real.starts_with('/') || !dir.starts_with('/') || r.iter().chain(&d).any(|c| c == "..") {
        return false;
    }
    r.len() >= d.len() && r[..d.len()] == d[..]
}

/// The file name a download is saved under: the last part of `raw` after
/// any `/` or `\`; control characters, `/`, `\`, NUL and characters that
/// are troublesome in a file name dropped; no leading dots or spaces, no
/// trailing dots or spaces; never `.` or `..`; at most
/// [`MAX_DOWNLOAD_NAME_BYTES`] bytes (the extension kept when it is
/// short); [`FALLBACK_DOWNLOAD_NAME`] when nothing is left.
pub fn sanitize_download_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let mut name: String = last
        .chars()
        .filter(|c| !c.is_control() && !crate::text::is_invisible_format(*c))
        .map(|c| if matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') { '_' } else { c })
        .collect();
    name =
        name.trim_matches(|c: char| c.is_whitespace()).trim_start_matches('.').trim_end_matches(['.', ' ']).to_string();
    name = name.trim().to_string();
    if name.len() > MAX_DOWNLOAD_NAME_BYTES {
        name = cut_keeping_extension(&name, MAX_DOWNLOAD_NAME_BYTES);
    }
    if name.is_empty() || name == "." || name == ".." { FALLBACK_DOWNLOAD_NAME.to_string() } else { name }
}

/// `name` cut to at most `max` bytes on a character boundary, keeping a
/// short extension (up to 16 bytes) at the end.
fn cut_keeping_extension(name: &str, max: usize) -> String {
    let ext = name.rfind('.').map(|i| &name[i..]).filter(|e| e.len() <= 16 && e.len() < name.len()).unwrap_or("");
    let mut keep = max - ext.len();
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    let stem = name[..keep].trim_end_matches(['.', ' ']);
    format!("{stem}{ext}")
}

/// The `n`-th alternative name for `name` when it exists already:
/// `report.pdf` → `report (1).pdf`; still at most
/// [`MAX_DOWNLOAD_NAME_BYTES`] bytes. `n == 0` is `name` itself.
pub fn with_suffix(name: &str, n: u32) -> String {
    if n == 0 {
        return name.to_string();
    }
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 16 => name.split_at(i),
        _ => (name, ""),
    };
    let tail = format!(" ({n}){ext}");
    let mut keep = stem.len().min(MAX_DOWNLOAD_NAME_BYTES - tail.len());
    while !stem.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}{tail}", &stem[..keep])
}

/// The file name a `Content-Disposition` header gives: `filename*`
/// (RFC 5987, UTF-8 percent-encoded) wins over `filename` (quoted or
/// token). Not sanitised: pass it to [`sanitize_download_name`].
pub fn content_disposition_filename(header: &str) -> Option<String> {
    let mut plain = None;
    let mut extended = None;
    for part in split_params(header).into_iter().skip(1) {
        let Some((key, value)) = part.split_once('=') else { continue };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        if key == "filename*" {
            let Some((charset, rest)) = value.split_once('\'') else { continue };
            let Some((_lang, encoded)) = rest.split_once('\'') else { continue };
            let bytes = percent_decode(encoded);
            extended = if charset.eq_ignore_ascii_case("utf-8") {
                String::from_utf8(bytes).ok()
            } else {
                Some(bytes.iter().map(|&b| char::from(b)).collect())
            };
        } else if key == "filename" {
            plain = Some(unquote(value));
        }
    }
    extended.or(plain)
}

/// `;`-separated parts, `;` inside quotes kept.
fn split_params(header: &str) -> Vec<String> {
    let (mut parts, mut cur, mut quoted, mut escaped) = (Vec::new(), String::new(), false, false);
    for c in header.chars() {
        match c {
            _ if escaped => {
                escaped = false;
                cur.push(c);
            }
            '\\' if quoted => {
                escaped = true;
                cur.push(c);
            }
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ';' if !quoted => parts.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    parts.push(cur);
    parts
}

fn unquote(v: &str) -> String {
    let Some(inner) = v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else { return v.to_string() };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            // `\"` is a quote; any other backslash stays a backslash (and is
            // then a separator to the sanitiser).
            match chars.next() {
                Some('"') => out.push('"'),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (b.get(i + 1).and_then(|c| hex(*c)), b.get(i + 2).and_then(|c| hex(*c)))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Why a download is high risk (`None`: medium, the default).
pub fn download_risk(name: &str, mime: &str) -> Option<&'static str> {
    const EXECUTABLE: &[&str] = &[
        "exe", "msi", "bat", "cmd", "com", "scr", "ps1", "vbs", "js", "jar", "sh", "bash", "zsh", "run", "bin", "app",
        "apk", "deb", "rpm", "appimage", "dmg", "pkg", "elf", "py", "pl", "desktop", "lnk", "reg", "msix",
    ];
    const ARCHIVE: &[&str] = &["zip", "rar", "7z", "tar", "gz", "tgz", "bz2", "xz", "zst", "iso", "cab", "lzma"];
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    let mime = mime.to_ascii_lowercase();
    if EXECUTABLE.contains(&ext.as_str())
        || [
            "application/x-msdownload",
            "application/x-sh",
            "application/x-executable",
            "application/vnd.microsoft.portable-executable",
        ]
        .iter()
        .any(|m| mime.starts_with(m))
    {
        Some("downloads an executable file")
    } else if ARCHIVE.contains(&ext.as_str())
        || ["application/zip", "application/x-7z", "application/x-rar", "application/x-tar", "application/gzip"]
            .iter()
            .any(|m| mime.starts_with(m))
    {
        Some("downloads an archive")
    } else {
        None
    }
}

/// A download as `browser_downloads` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DownloadState {
    /// Waiting for the policy, or still transferring.
    InProgress,
    /// Waiting for the person (an approval card asks).
    WaitingForPerson,
    /// Saved in the download directory.
    Saved,
    /// Cancelled: downloads are off.
    Blocked,
    /// Cancelled: the policy or the person said no.
    Denied,
    /// The browser refused or blocked it (its own download rules).
    BlockedByBrowser,
    /// Cancelled in the browser (by the person, or the browser shut down).
    Cancelled,
    /// Cancelled because it grew past the size limit.
    TooLarge,
    /// The browser or the copy failed.
    Failed,
}

impl DownloadState {
    pub fn as_str(self) -> &'static str {
        match self {
            DownloadState::InProgress => "in_progress",
            DownloadState::WaitingForPerson => "waiting_for_person",
            DownloadState::Saved => "saved",
            DownloadState::Blocked => "blocked",
            DownloadState::Denied => "denied",
            DownloadState::BlockedByBrowser => "blocked_by_browser",
            DownloadState::Cancelled => "cancelled",
            DownloadState::TooLarge => "too_large",
            DownloadState::Failed => "failed",
        }
    }

    /// Still waiting for something (the policy, the person, the transfer).
    pub fn pending(self) -> bool {
        matches!(self, DownloadState::InProgress | DownloadState::WaitingForPerson)
    }
}

/// What the extension can tell about where a download came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The tab whose request became the download, when `webRequest` saw it.
    pub tab: Option<TabId>,
    /// The tabs that opened `tab`, nearest first (`openerTabId`, as the
    /// extension saw the tabs created; at most `crate::downloads::MAX_OPENERS`).
    pub openers: Vec<TabId>,
    /// `scheme://host:port` the download came from (its referrer's, or its
    /// `blob:` URL's own); `None` when nothing says.
    pub origin: Option<String>,
    /// The open http(s) tabs showing `origin` — every open http(s) tab when
    /// `origin` is `None`.
    pub tabs_at_origin: Vec<TabId>,
}

/// What the extension saw of a download (any download while the bridge is
/// connected: the bridge decides whose it is, `crate::downloads`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum DownloadEvent {
    /// Chromium is determining the file name (it waits for the answer).
    Started {
        /// `chrome.downloads` id.
        id: u64,
        /// Where it came from, as far as the extension can tell.
        provenance: Provenance,
        url: String,
        /// The server's name (`Content-Disposition`) or Chromium's, raw.
        name: String,
        mime: String,
        /// Bytes, when the server said.
        size: Option<u64>,
    },
    /// The kept download is complete at `path` (Chromium's copy).
    Complete { id: u64, path: String },
    /// The kept download was interrupted (`chrome.downloads.InterruptReason`).
    Interrupted { id: u64, reason: String },
    /// The kept download grew past its limit after `received` bytes: the
    /// extension cancelled it and removed what Chromium had written.
    TooLarge { id: u64, received: u64 },
    /// An attachment response in tab `tab` that the browser did not turn
    /// into a download within `downloads::HELD_MS` (held for the person's
    /// "download multiple files" permission, or refused).
    NotStarted {
        tab: TabId,
        url: String,
        /// The server's name (`Content-Disposition`), raw.
        name: String,
    },
}

/// The bridge's answer to a [`DownloadEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DownloadVerdict {
    /// The person's download: Chromium goes on as if we were not there.
    Leave,
    /// Cancel it (off, denied, unattributable, too large).
    Cancel,
    /// Let Chromium finish it, cancelling it as soon as it passes
    /// `max_bytes`, then report [`DownloadEvent::Complete`].
    Keep { max_bytes: u64 },
    /// The bridge has its copy: remove Chromium's file and entry.
    Discard,
}

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if c.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}

/// Decodes [`base64_encode`]'s output; `None` on anything else.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(4) {
        return None;
    }
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (i, q) in b.chunks(4).enumerate() {
        let last = i == b.len() / 4 - 1;
        let pad = q.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for (j, &c) in q.iter().enumerate() {
            n = (n << 6) | if j >= 4 - pad { 0 } else { val(c)? };
        }
        out.push((n >> 16) as u8);
        if pad < 2 {
            out.push((n >> 8) as u8);
        }
        if pad < 1 {
            out.push(n as u8);
        }
    }
    Some(out)
}

/// `1.2 MB`-style size for people (1000-based, one decimal).
pub fn human_size(bytes: u64) -> String {
    match bytes {
        b if b < 1000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{:.1} KB", b as f64 / 1e3),
        b if b < 1_000_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b => format!("{:.1} GB", b as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fixtures/files/download_names.tsv`: raw name (escapes `\t` `\n`
    /// `\r` `\x1b` `\0` `\\`, and `{300a}` for 300 `a`s), tab, expected.
    #[test]
    fn download_names_from_the_fixture_table() {
        let table = include_str!("../../fixtures/files/download_names.tsv");
        let unescape = |s: &str| {
            let mut s = s.to_string();
            while let Some(start) = s.find('{') {
                let Some(end) = s[start..].find('}') else { break };
                let spec = &s[start + 1..start + end];
                let (n, c) = spec.split_at(spec.find(|c: char| !c.is_ascii_digit()).unwrap_or(spec.len()));
                let rep = c.repeat(n.parse().unwrap_or(0));
                s.replace_range(start..start + end + 1, &rep);
            }
            s.replace("\\t", "\t")
                .replace("\\n", "\n")
                .replace("\\r", "\r")
                .replace("\\x1b", "\x1b")
                .replace("\\0", "\0")
                .replace("\\\\", "\\")
        };
        let (mut count, mut failures) = (0, Vec::new());
        for (n, line) in table.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let (raw, want) = line.split_once('\t').unwrap_or_else(|| panic!("line {}: no tab", n + 1));
            let (raw, want) = (unescape(raw), unescape(want));
            let got = sanitize_download_name(&raw);
            count += 1;
            if got != want {
                failures.push(format!("line {}: {raw:?} → {got:?}, want {want:?}", n + 1));
            }
            // The rules hold for every row, whatever it expects.
            assert!(got.len() <= MAX_DOWNLOAD_NAME_BYTES, "line {}", n + 1);
            assert!(!got.contains(['/', '\\', '\0']) && !got.starts_with('.'), "line {}", n + 1);
            assert!(!got.chars().any(char::is_control), "line {}", n + 1);
            assert_ne!(got, "..");
        }
        assert!(count >= 30, "the table must hold at least 30 cases, has {count}");
        assert!(failures.is_empty(), "{} of {count} failed:\n{}", failures.len(), failures.join("\n"));
    }

    #[test]
    fn suffixes_never_overwrite_and_stay_short() {
        assert_eq!(with_suffix("report.pdf", 0), "report.pdf");
        assert_eq!(with_suffix("report.pdf", 1), "report (1).pdf");
        assert_eq!(with_suffix("archive.tar.gz", 2), "archive.tar (2).gz");
        assert_eq!(with_suffix("README", 3), "README (3)");
        assert_eq!(with_suffix("download", 10), "download (10)");
        let long = sanitize_download_name(&format!("{}.txt", "é".repeat(150)));
        let s = with_suffix(&long, 12);
        assert!(s.len() <= MAX_DOWNLOAD_NAME_BYTES && s.ends_with(" (12).txt"), "{s}");
    }

    #[test]
    fn content_disposition_names() {
        let cases = [
            ("attachment; filename=\"invoice.pdf\"", Some("invoice.pdf")),
            ("attachment; filename=plain.txt", Some("plain.txt")),
            ("attachment; filename=\"../../.bashrc\"", Some("../../.bashrc")),
            ("attachment; filename=\"a;b.txt\"", Some("a;b.txt")),
            ("attachment; filename=\"q\\\"uote.txt\"", Some("q\"uote.txt")),
            ("attachment; filename=\"back\\slash.txt\"", Some("back\\slash.txt")),
            ("attachment; filename=\"x.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt", Some("€ rates.txt")),
            ("attachment; FILENAME*=utf-8'en'%2Fetc%2Fpasswd", Some("/etc/passwd")),
            ("inline", None),
            ("attachment", None),
        ];
        for (h, want) in cases {
            assert_eq!(content_disposition_filename(h).as_deref(), want, "{h}");
        }
    }

    #[test]
    fn upload_paths_and_folders() {
        assert_eq!(check_upload_path(""), Err(PathRefusal::Empty));
        assert_eq!(check_upload_path("/a/b\0c"), Err(PathRefusal::Nul));
        assert_eq!(check_upload_path("docs/a.pdf"), Err(PathRefusal::Relative));
        assert_eq!(check_upload_path("~/a.pdf"), Err(PathRefusal::Relative));
        assert_eq!(check_upload_path("/home/a/docs/x.pdf"), Ok(()));
        let cases = [
            ("/home/a/docs/x.pdf", "/home/a/docs", true),
            ("/home/a/docs", "/home/a/docs", true),
            ("/home/a/docs/", "/home/a/docs/", true),
            ("/home/a/docs/sub/x", "/home/a/docs", true),
            ("/home/a/docsx/y", "/home/a/docs", false),
            ("/home/a/doc", "/home/a/docs", false),
            ("/home/a", "/home/a/docs", false),
            ("/home/a/docs/../secret", "/home/a/docs", false),
            ("/etc/passwd", "/", true),
            ("relative/x", "/home", false),
            ("/home/a/docs/x", "relative", false),
        ];
        for (real, dir, want) in cases {
            assert_eq!(inside(real, dir), want, "{real} in {dir}");
        }
    }

    #[test]
    fn upload_places_are_decided_on_the_path_as_given() {
        use PlaceRefusal::*;
        let allowed = ["/home/a/up", "/srv/real/up"];
        let cases: [(&str, &str, Result<(), PlaceRefusal>); 14] = [
            ("a file in the folder", "/home/a/up/x.pdf", Ok(())),
            ("a file in a sub-folder", "/home/a/up/sub/x.pdf", Ok(())),
            ("in the folder's resolved form", "/srv/real/up/x.pdf", Ok(())),
            ("a dot component inside", "/home/a/up/./x.pdf", Ok(())),
            ("a dot component outside", "/etc/./passwd", Err(Outside)),
            ("a missing file outside", "/etc/nope", Err(Outside)),
            ("an existing file outside", "/etc/passwd", Err(Outside)),
            ("the process's root link", "/proc/self/root/etc/passwd", Err(Outside)),
            ("a file descriptor link", "/proc/self/fd/3", Err(Outside)),
            ("dot-dot out of the folder", "/home/a/up/../.ssh/id_ed25519", Err(Outside)),
            ("dot-dot that stays inside", "/home/a/up/sub/../x.pdf", Err(Outside)),
            ("a sibling with the same prefix", "/home/a/upx/y", Err(Outside)),
            ("relative", "up/x.pdf", Err(Shape(PathRefusal::Relative))),
            ("NUL", "/home/a/up/x\0.pdf", Err(Shape(PathRefusal::Nul))),
        ];
        for (name, path, want) in cases {
            assert_eq!(upload_place(path, &allowed), want, "{name}: {path}");
        }
        assert_eq!(upload_place("/home/a/up/x", &[]), Err(Outside), "no folder allowed");
    }

    #[test]
    fn hard_links_need_the_persons_leave() {
        let cases = [
            ("one name", 1, false, true),
            ("no name left (unlinked while open)", 0, false, true),
            ("a second name", 2, false, false),
            ("many names", 40, false, false),
            ("a second name, allowed", 2, true, true),
        ];
        for (name, links, allow, want) in cases {
            assert_eq!(hard_links_allowed(links, allow), want, "{name}");
        }
    }

    #[test]
    fn executables_and_archives_are_high() {
        assert_eq!(download_risk("report.pdf", "application/pdf"), None);
        assert_eq!(download_risk("photo.JPG", "image/jpeg"), None);
        assert!(download_risk("setup.EXE", "").is_some_and(|r| r.contains("executable")));
        assert!(download_risk("install.sh", "text/plain").is_some_and(|r| r.contains("executable")));
        assert!(download_risk("noext", "application/x-msdownload").is_some());
        assert!(download_risk("data.tar.gz", "").is_some_and(|r| r.contains("archive")));
        assert!(download_risk("x", "application/zip").is_some_and(|r| r.contains("archive")));
    }

    #[test]
    fn base64_round_trips() {
        for len in 0..70 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let enc = base64_encode(&bytes);
            assert_eq!(base64_decode(&enc).as_deref(), Some(&bytes[..]), "{len}");
        }
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        for bad in ["Zm9", "Zm=v", "Z===", "Zm9v!A==", "=AAA"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_size(12), "12 B");
        assert_eq!(human_size(12_345), "12.3 KB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.2 MB");
    }
}
