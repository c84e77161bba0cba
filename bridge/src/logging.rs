//! Logging: `tracing` events to stderr and, for the daemon, to a private
//! log file per UTC day in `HOME/logs/` (directory 0700, files 0600,
//! `chaperone-YYYY-MM-DD.log`, appended, old days deleted after
//! `--log-retention-days`).
//!
//! Both sinks format fields with [`RedactedFields`]: content-bearing fields
//! ([`DROPPED_FIELDS`]) are dropped entirely; fields whose name looks like a
//! credential are masked; every other string (and the message itself) goes
//! through `shared::redact::redact_text` and is cut to
//! [`MAX_FIELD_CHARS`] characters. Numbers and booleans pass through.
//!
//! Nothing here panics: a log directory or file that cannot be written
//! costs one warning on stderr, and logging goes on on stderr only.

use std::fmt::{self, Write as _};
use std::fs::{self, File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use shared::redact::{is_sensitive_key, redact_text};
use shared::sensitive::MASK;
use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::{FormatFields, Writer};
use tracing_subscriber::fmt::{FormattedFields, MakeWriter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use crate::time;

/// Field names whose values are content (what the person typed or read,
/// page text and markup, HTTP headers and bodies, tool arguments and
/// results, screenshots, credentials). Such fields are left out of every
/// log line, whatever their type. Matched case-insensitively against the
/// whole field name and against its last `.`-separated part
/// (`request.body`).
pub const DROPPED_FIELDS: &[&str] = &[
    "text",
    "value",
    "values",
    "html",
    "body",
    "headers",
    "header",
    "cookie",
    "cookies",
    "args",
    "arguments",
    "params",
    "result",
    "results",
    "content",
    "password",
    "secret",
    "secrets",
    "token",
    "typed",
    "page_text",
    "screenshot",
    "data",
];

/// Longest string (field value or message) kept in a log line, in
/// characters; longer ones are cut and end with `…`.
pub const MAX_FIELD_CHARS: usize = 300;

/// Strings are read up to this many bytes before redaction; the rest is
/// never formatted (a huge `Debug` value costs nothing).
const MAX_READ_BYTES: usize = 16 * 1024;

/// Default for `--log-retention-days`.
pub const DEFAULT_LOG_RETENTION_DAYS: u32 = 14;

/// Largest accepted `--log-retention-days` (ten years).
pub const MAX_RETENTION_DAYS: u32 = 3650;

/// The env variable holding a `tracing` filter (`info`, `debug,rmcp=warn`).
pub const FILTER_ENV: &str = "CHAPERONE_LOG";

const DEFAULT_FILTER: &str = "info,rmcp=warn";

// === field formatting ===

/// A [`FormatFields`] that drops content-bearing fields and redacts and
/// cuts the rest (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactedFields;

impl<'writer> FormatFields<'writer> for RedactedFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut v = RedactingVisitor { writer, empty: true, result: Ok(()) };
        fields.record(&mut v);
        v.result
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        let empty = current.fields.is_empty();
        let mut v = RedactingVisitor { writer: current.as_writer(), empty, result: Ok(()) };
        fields.record(&mut v);
        v.result
    }
}

enum Treatment {
    Drop,
    Mask,
    Show,
}

fn treatment(name: &str) -> Treatment {
    if name == "message" {
        return Treatment::Show;
    }
    // Metadata of `log` records bridged into tracing, shown by the event
    // formatter already.
    if name.starts_with("log.") {
        return Treatment::Drop;
    }
    let lower = name.to_ascii_lowercase();
    let last = lower.rsplit('.').next().unwrap_or(&lower);
    if DROPPED_FIELDS.contains(&lower.as_str()) || DROPPED_FIELDS.contains(&last) {
        Treatment::Drop
    } else if is_sensitive_key(name) {
        Treatment::Mask
    } else {
        Treatment::Show
    }
}

struct RedactingVisitor<'a> {
    writer: Writer<'a>,
    empty: bool,
    result: fmt::Result,
}

impl RedactingVisitor<'_> {
    /// Writes `name=` (nothing for the message) after a separating space.
    /// `None` when the field is dropped.
    fn start(&mut self, field: &Field) -> Option<Treatment> {
        if self.result.is_err() {
            return None;
        }
        let name = field.name();
        let name = name.strip_prefix("r#").unwrap_or(name);
        let t = treatment(name);
        if matches!(t, Treatment::Drop) {
            return None;
        }
        if !self.empty {
            self.result = self.writer.write_char(' ');
        }
        self.empty = false;
        if name != "message" && self.result.is_ok() {
            self.result = write!(self.writer, "{name}=");
        }
        Some(t)
    }

    fn plain(&mut self, field: &Field, value: &dyn fmt::Display) {
        match self.start(field) {
            None => {}
            Some(Treatment::Mask) => self.result = self.result.and_then(|()| self.writer.write_str(MASK)),
            Some(_) => self.result = self.result.and_then(|()| write!(self.writer, "{value}")),
        }
    }

    fn text(&mut self, field: &Field, value: &str, quoted: bool) {
        let Some(t) = self.start(field) else { return };
        if self.result.is_err() {
            return;
        }
        if matches!(t, Treatment::Mask) {
            self.result = self.writer.write_str(MASK);
            return;
        }
        let quoted = quoted && field.name() != "message";
        let shown = clean(value, quoted);
        self.result = if quoted { write!(self.writer, "\"{shown}\"") } else { self.writer.write_str(&shown) };
    }
}

impl Visit for RedactingVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.text(field, value, true);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let name = field.name();
        if self.result.is_err() || matches!(treatment(name.strip_prefix("r#").unwrap_or(name)), Treatment::Drop) {
            return; // never even format a dropped value
        }
        let mut s = Bounded(String::new());
        let _ = write!(s, "{value:?}");
        self.text(field, &s.0, false);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.plain(field, &value);
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.plain(field, &value);
    }
    fn record_i128(&mut self, field: &Field, value: i128) {
        self.plain(field, &value);
    }
    fn record_u128(&mut self, field: &Field, value: u128) {
        self.plain(field, &value);
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.plain(field, &value);
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.plain(field, &value);
    }
    fn record_bytes(&mut self, field: &Field, value: &[u8]) {
        // Bytes are content; only their length is shown.
        self.plain(field, &format_args!("<{} bytes>", value.len()));
    }
}

/// A `fmt::Write` that stops taking text after [`MAX_READ_BYTES`].
struct Bounded(String);

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = MAX_READ_BYTES.saturating_sub(self.0.len());
        if s.len() <= room {
            self.0.push_str(s);
            return Ok(());
        }
        let mut end = room;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.0.push_str(&s[..end]);
        Err(fmt::Error)
    }
}

/// A string as it may appear in a log line: redacted, cut to
/// [`MAX_FIELD_CHARS`] characters (then `…`), control characters escaped
/// so that one event is always one line (and `"`, `\\` too when the value
/// is shown in quotes).
pub fn clean(value: &str, quoted: bool) -> String {
    let mut end = value.len().min(MAX_READ_BYTES);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    let redacted = redact_text(&value[..end]);
    let cut = cut_chars(&redacted, MAX_FIELD_CHARS);
    let mut out = String::with_capacity(cut.len() + 8);
    for c in cut.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' if quoted => out.push_str("\\\""),
            '\\' if quoted => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` cut to at most `max` characters, with `…` appended when cut.
pub fn cut_chars(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(s),
        Some((i, _)) => std::borrow::Cow::Owned(format!("{}…", &s[..i])),
    }
}

// === layers and init ===

/// The formatting layer used for both sinks: time (UTC), level, message and
/// [`RedactedFields`], no target.
pub fn layer<S, W>(writer: W, ansi: bool) -> impl Layer<S> + Send + Sync + 'static
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt::layer()
        .fmt_fields(RedactedFields)
        .with_target(false)
        .with_ansi(ansi)
        .log_internal_errors(false)
        .with_writer(writer)
}

/// stderr, ignoring write errors: a daemon whose stderr is a closed pipe
/// (its starter exited) goes on working.
#[derive(Debug, Clone, Copy)]
struct QuietStderr;

impl Write for QuietStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = io::stderr().write_all(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Prints one line on stderr, ignoring errors (never `eprintln!`, which
/// panics on a closed stderr).
pub fn warn_stderr(line: &str) {
    let _ = writeln!(io::stderr(), "{line}");
}

static FILE_SINK: OnceLock<DailyFile> = OnceLock::new();

/// Installs the global subscriber: the `CHAPERONE_LOG` filter (default
/// `info,rmcp=warn`), redacted lines on stderr, and, if `file_log`, a file
/// sink that stays detached until [`start_file`] gives it a directory
/// (the daemon does so once its home exists and it holds the lock).
/// Call once; later calls do nothing.
pub fn init(file_log: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env(FILTER_ENV)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_FILTER));
    let ansi = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let file = file_log.then(|| layer(FileWriter::global(), false));
    let _ = tracing_subscriber::registry().with(filter).with(layer(|| QuietStderr, ansi)).with(file).try_init();
}

/// Starts the daily log file in `dir`: creates it 0700 (and makes an
/// existing one 0700), opens today's file 0600, deletes files older than
/// `retention_days`, and from then on rolls over at UTC midnight and prunes
/// daily. Returns today's file, or `None` when [`init`] installed no file
/// sink or the directory is unusable (then one warning is printed on stderr
/// and logging goes on on stderr only).
pub fn start_file(dir: &Path, retention_days: u32) -> Option<PathBuf> {
    let sink = FILE_SINK.get()?;
    let retention_days = retention_days.clamp(1, MAX_RETENTION_DAYS);
    if let Err(e) = prepare_dir(dir) {
        warn_stderr(&format!("warning: cannot use the log directory {}: {e}; logging to stderr only", dir.display()));
        return None;
    }
    let day = time::today();
    let path = dir.join(log_file_name(day));
    if let Err(e) = sink.attach(dir, day) {
        warn_stderr(&format!("warning: cannot write the log file {}: {e}; logging to stderr only", path.display()));
        return None;
    }
    prune_logged(dir, retention_days, day);
    static PRUNER: OnceLock<()> = OnceLock::new();
    let dir = dir.to_path_buf();
    PRUNER.get_or_init(move || {
        let _ = std::thread::Builder::new().name("log-retention".into()).spawn(move || {
            loop {
                std::thread::sleep(until_next_day(time::unix_now()));
                prune_logged(&dir, retention_days, time::today());
            }
        });
    });
    Some(path)
}

fn prune_logged(dir: &Path, retention_days: u32, today: i64) {
    let removed = prune(dir, retention_days, today);
    if !removed.is_empty() {
        tracing::info!(files = removed.len(), days = retention_days, "log retention applied");
    }
}

fn prepare_dir(dir: &Path) -> io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other("not a directory"));
    }
    if meta.permissions().mode() & 0o777 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

// === the daily file ===

/// How long from `now` (Unix seconds) until just after the next UTC midnight.
fn until_next_day(now: u64) -> Duration {
    Duration::from_secs(time::SECS_PER_DAY - now % time::SECS_PER_DAY + 1)
}

/// The log file of a day (days since the Unix epoch, UTC):
/// `chaperone-YYYY-MM-DD.log`.
pub fn log_file_name(day: i64) -> String {
    format!("chaperone-{}.log", time::date(day))
}

/// The day (days since the Unix epoch) of a `chaperone-YYYY-MM-DD.log`
/// name; `None` for any other name.
pub fn log_file_day(name: &str) -> Option<i64> {
    time::parse_date(name.strip_prefix("chaperone-")?.strip_suffix(".log")?)
}

/// Deletes the `chaperone-YYYY-MM-DD.log` files of `dir` dated more than
/// `retention_days` days before `today` (so today's file and those of the
/// `retention_days` days before it are kept). Other files are never
/// touched. Returns what was deleted.
pub fn prune(dir: &Path, retention_days: u32, today: i64) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(day) = name.to_str().and_then(log_file_day) else { continue };
        if today - day > i64::from(retention_days) && entry.file_type().is_ok_and(|t| t.is_file()) {
            let path = entry.path();
            if fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
        }
    }
    removed
}

/// The file sink: one append-only 0600 file per UTC day.
#[derive(Debug, Default)]
pub struct DailyFile {
    state: Mutex<FileState>,
}

#[derive(Debug, Default)]
struct FileState {
    dir: Option<PathBuf>,
    day: i64,
    file: Option<File>,
    /// A day whose file could not be opened or written: not retried before
    /// the next day.
    failed_day: Option<i64>,
    warned: bool,
}

impl DailyFile {
    /// A sink writing into `dir` (not yet opened).
    pub fn new(dir: &Path) -> Self {
        DailyFile {
            state: Mutex::new(FileState { dir: Some(dir.to_path_buf()), day: i64::MIN, ..FileState::default() }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, FileState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Points the sink at `dir` and opens the file of `day` now, so that an
    /// unwritable directory is reported at start.
    fn attach(&self, dir: &Path, day: i64) -> io::Result<()> {
        let mut st = self.lock();
        st.dir = Some(dir.to_path_buf());
        st.file = None;
        st.failed_day = None;
        st.file = Some(open_private_append(&dir.join(log_file_name(day)))?);
        st.day = day;
        Ok(())
    }

    /// Appends `buf` to the file of `day`, switching files when the day
    /// changed. Failures are reported once on stderr and never returned.
    pub fn write_on(&self, day: i64, buf: &[u8]) {
        let mut st = self.lock();
        let Some(dir) = st.dir.clone() else { return };
        if st.failed_day == Some(day) {
            return;
        }
        if st.file.is_none() || st.day != day {
            st.file = None;
            let path = dir.join(log_file_name(day));
            match open_private_append(&path) {
                Ok(f) => {
                    st.file = Some(f);
                    st.day = day;
                    st.failed_day = None;
                }
                Err(e) => {
                    st.failed_day = Some(day);
                    warn_once(&mut st, &path, &e);
                    return;
                }
            }
        }
        if let Some(Err(e)) = st.file.as_mut().map(|f| f.write_all(buf)) {
            st.file = None;
            st.failed_day = Some(day);
            let path = dir.join(log_file_name(day));
            warn_once(&mut st, &path, &e);
        }
    }
}

fn warn_once(st: &mut FileState, path: &Path, e: &io::Error) {
    if !st.warned {
        st.warned = true;
        warn_stderr(&format!(
            "warning: cannot write the log file {}: {e}; logging to stderr only until the next day",
            path.display()
        ));
    }
}

/// Opens (creating it 0600) a file for appending, and makes an existing
/// file 0600 too.
fn open_private_append(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new().create(true).append(true).mode(0o600).open(path)?;
    if f.metadata()?.permissions().mode() & 0o777 != 0o600 {
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}

/// [`MakeWriter`] for a [`DailyFile`]: each event is one `write` of one
/// whole line, made on the day the event happened.
#[derive(Debug, Clone, Copy)]
pub struct FileWriter {
    sink: &'static DailyFile,
}

impl FileWriter {
    /// The process-wide sink that [`start_file`] attaches.
    fn global() -> Self {
        FileWriter { sink: FILE_SINK.get_or_init(DailyFile::default) }
    }

    /// A writer for a sink of one's own (tests).
    pub fn new(sink: &'static DailyFile) -> Self {
        FileWriter { sink }
    }
}

/// One event's writer.
#[derive(Debug)]
pub struct DayWriter {
    sink: &'static DailyFile,
    day: i64,
}

impl Write for DayWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sink.write_on(self.day, buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for FileWriter {
    type Writer = DayWriter;
    fn make_writer(&'a self) -> DayWriter {
        DayWriter { sink: self.sink, day: time::today() }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The lines `f` logs through the real layer.
    fn capture(f: impl FnOnce()) -> String {
        let buf = Buf::default();
        let w = buf.clone();
        let subscriber = tracing_subscriber::registry().with(layer(move || w.clone(), false));
        tracing::subscriber::with_default(subscriber, f);
        String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn content_fields_are_dropped_whatever_their_type() {
        let out = capture(|| {
            tracing::info!(
                text = "CANARY-TEXT-1",
                args = ?serde_json::json!({"q": "CANARY-ARGS-2"}),
                value = %"CANARY-VALUE-3",
                Body = "CANARY-BODY-4",
                page_text = "CANARY-PAGE-5",
                data = 42,
                cookies = true,
                request.headers = "CANARY-HEADERS-6",
                tool = "browser_type",
                "typed into a field"
            );
        });
        assert!(!out.contains("CANARY"), "{out}");
        for name in ["text=", "args=", "value=", "Body=", "page_text=", "data=", "cookies=", "headers="] {
            assert!(!out.contains(name), "{name} in {out}");
        }
        assert!(out.contains("typed into a field") && out.contains("tool=\"browser_type\""), "{out}");
        assert_eq!(out.lines().count(), 1, "{out}");
    }

    #[test]
    fn spans_fields_are_treated_alike() {
        let out = capture(|| {
            let span = tracing::info_span!("call", tool = "browser_click", result = "CANARY-SPAN-1");
            let _g = span.enter();
            span.record("result", "CANARY-SPAN-2");
            tracing::info!(n = 3, "inside");
        });
        assert!(!out.contains("CANARY"), "{out}");
        assert!(out.contains("browser_click") && out.contains("n=3"), "{out}");
    }

    #[test]
    fn secrets_in_strings_and_messages_are_redacted() {
        let out = capture(|| {
            tracing::warn!(url = "https://u:p@host/?token=abc", "navigating");
            tracing::warn!(url = %"https://user:hunter2@example.com/x?access_token=abc123&q=1", "display form");
            tracing::warn!("the agent sent Bearer abc.def.ghi, refused");
            tracing::warn!(error = ?"key sk_live_0123456789abcdefXYZ leaked", "debug form");
            tracing::warn!(api_key = "plain-looking", session_id = 1234, "sensitive names");
        });
        for secret in ["u:p@", "token=abc", "hunter2", "abc123", "abc.def.ghi", "sk_live_0123", "plain-looking", "1234"]
        {
            assert!(!out.contains(secret), "{secret} in {out}");
        }
        assert!(out.contains("host/") && out.contains("q=1") && out.contains("Bearer"), "{out}");
        assert!(out.contains(&format!("api_key={MASK}")) && out.contains(&format!("session_id={MASK}")), "{out}");
    }

    #[test]
    fn long_strings_are_cut_to_300_chars_with_an_ellipsis() {
        let long = "é".repeat(1000);
        let out = capture(|| {
            tracing::info!(note = %long, "short");
            tracing::info!("{}", "x".repeat(1000));
        });
        let mut lines = out.lines();
        let first = lines.next().unwrap();
        let shown = first.split("note=").nth(1).unwrap();
        assert_eq!(shown, format!("{}…", "é".repeat(300)));
        let second = lines.next().unwrap();
        assert!(second.contains(&format!("{}…", "x".repeat(300))), "{second}");
        assert!(!second.contains(&"x".repeat(301)), "{second}");
        assert_eq!(cut_chars("abc", 3), "abc");
        assert_eq!(cut_chars("abcd", 3), "abc…");
    }

    #[test]
    fn numbers_and_bools_pass_and_one_event_is_one_line() {
        let out = capture(|| {
            tracing::info!(port = 8080u16, delta = -3i64, ratio = 0.5, ok = true, what = "a\nb\u{1b}[31m", "x\ny");
        });
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.contains("port=8080 delta=-3 ratio=0.5 ok=true"), "{out}");
        assert!(out.contains(r#"what="a\nb\u{1b}[31m""#) && out.contains(r"x\ny"), "{out}");
    }

    #[test]
    fn huge_debug_values_are_not_formatted_in_full() {
        struct Endless;
        impl fmt::Debug for Endless {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                for _ in 0..1_000_000 {
                    f.write_str("0123456789")?;
                }
                Ok(())
            }
        }
        let out = capture(|| tracing::info!(big = ?Endless, "big"));
        assert!(out.contains('…') && out.len() < 1000, "{}", out.len());
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("chaperone-logging-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn file_names_are_utc_dates_and_parse_back() {
        assert_eq!(log_file_name(0), "chaperone-1970-01-01.log");
        assert_eq!(log_file_name(20_786), "chaperone-2026-11-29.log");
        for day in [0, 11_016, 20_786, 20_787, 30_000] {
            assert_eq!(log_file_day(&log_file_name(day)), Some(day));
        }
        for other in ["native-host.log", "daemon.log", "chaperone-2026-13-01.log", "chaperone-2026-1-01.log", "x"] {
            assert_eq!(log_file_day(other), None, "{other}");
        }
        assert_eq!(until_next_day(86_400 * 5 + 86_399), Duration::from_secs(2));
    }

    #[test]
    fn the_file_switches_at_midnight_and_is_private() {
        let dir = temp_dir("daily");
        let sink: &'static DailyFile = Box::leak(Box::new(DailyFile::new(&dir)));
        sink.write_on(20_786, b"late\n");
        sink.write_on(20_787, b"early\n");
        sink.write_on(20_787, b"later\n");
        let a = dir.join("chaperone-2026-11-29.log");
        let b = dir.join("chaperone-2026-11-30.log");
        assert_eq!(fs::read_to_string(&a).unwrap(), "late\n");
        assert_eq!(fs::read_to_string(&b).unwrap(), "early\nlater\n");
        for p in [&a, &b] {
            assert_eq!(fs::metadata(p).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // Appended, not truncated, when the sink is started again.
        let again: &'static DailyFile = Box::leak(Box::new(DailyFile::new(&dir)));
        again.write_on(20_787, b"restarted\n");
        assert_eq!(fs::read_to_string(&b).unwrap(), "early\nlater\nrestarted\n");
        // Through the layer, a whole event is one write.
        let subscriber = tracing_subscriber::registry().with(layer(FileWriter::new(again), false));
        tracing::subscriber::with_default(subscriber, || tracing::info!(text = "CANARY", "through the layer"));
        let today = fs::read_to_string(dir.join(log_file_name(time::today()))).unwrap();
        assert!(today.contains("through the layer") && !today.contains("CANARY"), "{today}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_directory_costs_a_warning_not_a_panic() {
        let dir = temp_dir("unwritable");
        let file = dir.join("not-a-dir");
        fs::write(&file, "x").unwrap();
        let sink: &'static DailyFile = Box::leak(Box::new(DailyFile::new(&file)));
        sink.write_on(1, b"lost\n");
        sink.write_on(1, b"lost again\n");
        assert!(sink.lock().warned);
        assert!(prepare_dir(&file).is_err());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn retention_removes_only_old_chaperone_logs() {
        let dir = temp_dir("prune");
        let today = 20_786;
        for day in [today, today - 1, today - 14, today - 15, today - 30] {
            fs::write(dir.join(log_file_name(day)), "x").unwrap();
        }
        fs::write(dir.join("native-host.log"), "x").unwrap();
        fs::write(dir.join("daemon.log"), "x").unwrap();
        let mut removed: Vec<String> =
            prune(&dir, 14, today).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        removed.sort();
        assert_eq!(removed, vec![log_file_name(today - 30), log_file_name(today - 15)]);
        for day in [today, today - 1, today - 14] {
            assert!(dir.join(log_file_name(day)).exists());
        }
        assert!(dir.join("native-host.log").exists() && dir.join("daemon.log").exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
