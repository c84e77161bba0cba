//! `chaperone api learn|client`: the IO around the `forge` crate.
//!
//! `learn` reads HAR files (each up to [`MAX_HAR_BYTES`]), learns the API
//! and writes the description (`.json`, or `.yaml`/`.yml`) 0600. `client`
//! reads a description and writes a client into a folder: only a folder
//! that is absent, empty, or marked as Chaperone's (`.chaperone-generated`),
//! unless `--overwrite`. With `--check` it then runs the fixed checks of
//! that language in the folder ([`checks`]): never a program named by the
//! description or the capture, with a minimal environment and a time limit.
//!
//! Both also refuse the person's stored secrets (when the home has any):
//! a spec or client that would hold one is not written.
//!
//! Nothing is written through a symbolic link: not the description's
//! file, not the client's folder (`--overwrite` included), not a file in
//! it, dangling or not ([`write_generated`]). Every file is written under
//! a temporary name with create-new semantics and renamed into place; the
//! folders made on the way are made one by one and checked to be folders.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Subcommand;
use forge::client::{Found, Lang, MARKER};

use crate::error::Error;
use crate::home::Home;
use crate::home::HomeArg;

/// Largest HAR file `learn` reads.
pub const MAX_HAR_BYTES: u64 = 512 * 1024 * 1024;
/// Largest description `client` reads.
pub const MAX_SPEC_BYTES: u64 = 64 * 1024 * 1024;
/// How long one check of a generated client may run.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientLang {
    Python,
    Typescript,
}

/// `chaperone api …`.
#[derive(Debug, Subcommand)]
pub enum ApiCmd {
    /// Learn an OpenAPI 3.1 description from HAR files (Chaperone's export
    /// or a browser's DevTools "Save all as HAR").
    ///
    /// Keeps only the API (JSON answers and JSON/form writes; not the page,
    /// static files, beacons or analytics) of the hosts given with --host
    /// (default: the hosts that answered JSON). Path parameters come from
    /// how segments vary across requests; schemas are merged over every
    /// request. Authorization headers, cookies, CSRF headers and API keys
    /// become security schemes with no value; any credential of the input
    /// (or a stored secret of the home) is never written.
    Learn {
        /// HAR files to learn from.
        #[arg(value_name = "HAR", required = true)]
        hars: Vec<PathBuf>,
        /// Keep only this host (`host` or `host:port`); repeatable.
        #[arg(long = "host", value_name = "HOST")]
        hosts: Vec<String>,
        /// The description's title.
        #[arg(long, value_name = "TITLE")]
        title: Option<String>,
        /// Output file: `.json`, or `.yaml`/`.yml` for YAML. Written 0600.
        #[arg(short = 'o', long = "output", value_name = "SPEC")]
        output: PathBuf,
        #[command(flatten)]
        home: HomeArg,
    },
    /// Write a Python or TypeScript client (with its tests) from a
    /// description into DIR.
    ///
    /// DIR must be absent, empty or one this command wrote (it holds
    /// `.chaperone-generated`); --overwrite writes into any folder,
    /// replacing files of the same names. Never through a symbolic link:
    /// DIR or a file in it that is one is refused. --check then runs the language's
    /// fixed checks in DIR: `python3 -m unittest` (Python); `tsc --noEmit`,
    /// `tsc` and `node --test` (TypeScript; tsc from --tsc or PATH).
    Client {
        #[arg(value_name = "SPEC")]
        spec: PathBuf,
        #[arg(long, value_enum)]
        lang: ClientLang,
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: PathBuf,
        /// Write into a folder this command did not make.
        #[arg(long)]
        overwrite: bool,
        /// Run the generated client's tests in DIR afterwards.
        #[arg(long)]
        check: bool,
        /// The TypeScript compiler to use for --check (default: `tsc` on PATH).
        #[arg(long, value_name = "PATH")]
        tsc: Option<PathBuf>,
        #[command(flatten)]
        home: HomeArg,
    },
}

/// Runs `chaperone api …`; bad input exits 2, a failed check 1.
pub fn run(cmd: ApiCmd) -> Result<i32, Error> {
    let usage = |e: Error| {
        eprintln!("error: {e}");
        Ok(2)
    };
    match cmd {
        ApiCmd::Learn { hars, hosts, title, output, home } => {
            let mut docs = Vec::new();
            for p in &hars {
                let text = read_limited(p, MAX_HAR_BYTES)?;
                match forge::har::parse(&text) {
                    Ok(h) => docs.push(h),
                    Err(e) => return usage(Error::Api(format!("{}: {e}", p.display()))),
                }
            }
            let opts = forge::LearnOptions { hosts, title, known_secrets: person_secrets(home), ..Default::default() };
            let learned = match forge::learn(&docs, &opts) {
                Ok(l) => l,
                Err(e) => return usage(Error::Api(e.to_string())),
            };
            let yaml = output.extension().is_some_and(|e| e == "yaml" || e == "yml");
            let format = if yaml { forge::exports::Format::Yaml } else { forge::exports::Format::Json };
            let text = match learned.to_text(format) {
                Ok(t) => t,
                Err(e) => return usage(Error::Api(e.to_string())),
            };
            match write_spec(&output, text.as_bytes()) {
                Err(e @ Error::Api(_)) => return usage(e),
                other => other?,
            }
            let s = &learned.stats;
            eprintln!(
                "wrote {}: {} operations on {} paths from {} of {} entries ({})",
                output.display(),
                s.operations,
                s.paths,
                s.api_entries,
                s.entries,
                s.hosts.join(", ")
            );
            Ok(0)
        }
        ApiCmd::Client { spec, lang, output, overwrite, check, tsc, home } => {
            let text = read_limited(&spec, MAX_SPEC_BYTES)?;
            let value = match forge::yaml::from_str(&text) {
                Ok(v) => v,
                Err(e) => return usage(Error::Api(format!("{}: {e}", spec.display()))),
            };
            let lang = match lang {
                ClientLang::Python => Lang::Python,
                ClientLang::Typescript => Lang::TypeScript,
            };
            let files = match forge::client::generate(&value, lang, &person_secrets(home)) {
                Ok(f) => f,
                Err(e) => return usage(Error::Api(e.to_string())),
            };
            if let Err(why) = may_write(&output, overwrite) {
                return usage(Error::Api(format!("{}: {why}", output.display())));
            }
            let mut out: Vec<(&str, &[u8])> = files.iter().map(|f| (f.name, f.text.as_bytes())).collect();
            out.push((MARKER, b"Written by `chaperone api client`; it may write here again.\n"));
            match write_generated(&output, &out, Modes::PERSON) {
                Err(e @ Error::Api(_)) => return usage(e),
                other => other?,
            }
            eprintln!("wrote {} files into {}", files.len(), output.display());
            if check {
                return checks(lang, &output, tsc.as_deref());
            }
            Ok(0)
        }
    }
}

fn may_write(dir: &Path, overwrite: bool) -> Result<(), String> {
    let here = found(dir).map_err(|e| e.to_string())?;
    forge::client::folder_ok(here)?;
    let exists = here == Found::Folder;
    let empty = exists && std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(false);
    let marked = found(&dir.join(MARKER)).is_ok_and(|f| f == Found::File);
    forge::client::may_write(exists, empty, marked, overwrite)
}

/// What is at `p`, never following a link.
pub(crate) fn found(p: &Path) -> std::io::Result<Found> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Ok(Found::Link),
        Ok(m) if m.is_dir() => Ok(Found::Folder),
        Ok(m) if m.is_file() => Ok(Found::File),
        Ok(_) => Ok(Found::Other),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Found::Absent),
        Err(e) => Err(e),
    }
}

/// The modes of the folders and files [`write_generated`] makes (the
/// umask applies to the folders).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Modes {
    pub folder: u32,
    pub file: u32,
}

impl Modes {
    /// `chaperone api client`: the person's own files, as any program
    /// writes them.
    pub const PERSON: Modes = Modes { folder: 0o777, file: 0o644 };
    /// The MCP tools, in the home's exports folder.
    pub const PRIVATE: Modes = Modes { folder: 0o700, file: 0o600 };
}

fn refused(p: &Path, why: impl std::fmt::Display) -> Error {
    Error::Api(format!("{}: {why}", p.display()))
}

/// Writes `files` (name, bytes) into `dir` and never through a symbolic
/// link: `dir` must be a folder or absent (then it and each missing
/// folder above it are made one at a time, and each checked to be a
/// folder, not a link, once made); every name must be absent or a plain
/// file, all checked before the first is written; each is then written
/// under a temporary name with create-new semantics (which never follows
/// a link) and renamed over the old one, which replaces a link planted in
/// the meantime instead of following it. A refusal is [`Error::Api`],
/// naming the link; nothing is written then.
pub(crate) fn write_generated(dir: &Path, files: &[(&str, &[u8])], modes: Modes) -> Result<(), Error> {
    make_folder(dir, modes.folder)?;
    let before = std::fs::symlink_metadata(dir).map_err(|e| Error::io(dir, e))?;
    for (name, _) in files {
        let p = dir.join(name);
        forge::client::file_ok(found(&p).map_err(|e| Error::io(&p, e))?).map_err(|why| refused(&p, why))?;
    }
    for (name, bytes) in files {
        replace_file(dir, name, bytes, modes.file, Folder { id: (before.dev(), before.ino()), person_link: false })?;
    }
    Ok(())
}

/// Writes the learned description to `path` (0600), never through a
/// link: under a temporary name next to it, then renamed.
fn write_spec(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| refused(path, "not a file name"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    forge::client::file_ok(found(path).map_err(|e| Error::io(path, e))?).map_err(|why| refused(path, why))?;
    let meta = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
    if !meta.is_dir() {
        return Err(refused(dir, "not a folder"));
    }
    replace_file(dir, name, bytes, 0o600, Folder { id: (meta.dev(), meta.ino()), person_link: true })
}

/// `dir` as a folder: there already, or made with each missing folder
/// above it (see [`write_generated`]). The first folder that exists is
/// the person's, links on the way to it included.
fn make_folder(dir: &Path, mode: u32) -> Result<(), Error> {
    let io = |p: &Path, e| Error::io(p, e);
    let here = found(dir).map_err(|e| io(dir, e))?;
    forge::client::folder_ok(here).map_err(|why| refused(dir, why))?;
    if here == Found::Folder {
        return Ok(());
    }
    let mut missing = vec![dir];
    let mut cur = dir;
    while let Some(parent) = cur.parent().filter(|p| !p.as_os_str().is_empty()) {
        match found(parent).map_err(|e| io(parent, e))? {
            Found::Absent => missing.push(parent),
            Found::Folder => break,
            // A link the person made on the way: theirs to keep, if it is a folder.
            Found::Link if parent.is_dir() => break,
            other => {
                return Err(refused(parent, forge::client::folder_ok(other).err().unwrap_or("not a folder".into())));
            }
        }
        cur = parent;
    }
    for m in missing.iter().rev() {
        match std::fs::DirBuilder::new().mode(mode).create(m) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(m, e)),
        }
        // Made by us, or by someone else in the meantime: a folder, or nothing is written.
        let now = found(m).map_err(|e| io(m, e))?;
        if now != Found::Folder {
            return Err(refused(m, forge::client::folder_ok(now).err().unwrap_or("not a folder".into())));
        }
    }
    Ok(())
}

/// The folder a file is written into, as it was checked.
#[derive(Debug, Clone, Copy)]
struct Folder {
    /// `(dev, ino)`.
    id: (u64, u64),
    /// Whether the folder may be reached through a link: the folder of
    /// `api learn -o`, the person's own; never the client's folder.
    person_link: bool,
}

/// Writes `dir/name` under a temporary name (created new, so never through
/// a link) and renames it over `name`, after checking that `dir` is still
/// the folder checked before and `name` not a link.
fn replace_file(dir: &Path, name: &str, bytes: &[u8], mode: u32, folder: Folder) -> Result<(), Error> {
    let target = dir.join(name);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let tmp = dir.join(format!(".{name}.{}.{stamp}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(|e| Error::io(&tmp, e))?;
    let written = f
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .and_then(|()| f.write_all(bytes))
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(&tmp, e));
    drop(f);
    let result = written.and_then(|()| {
        let now = if folder.person_link { std::fs::metadata(dir) } else { std::fs::symlink_metadata(dir) };
        let same = now.is_ok_and(|m| m.is_dir() && (m.dev(), m.ino()) == folder.id);
        if !same {
            return Err(refused(dir, "the folder changed while it was written; nothing more is written"));
        }
        forge::client::file_ok(found(&target).map_err(|e| Error::io(&target, e))?)
            .map_err(|why| refused(&target, why))?;
        std::fs::rename(&tmp, &target).map_err(|e| Error::io(&target, e))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn read_limited(path: &Path, max: u64) -> Result<String, Error> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut buf = String::new();
    f.take(max + 1).read_to_string(&mut buf).map_err(|e| Error::io(path, e))?;
    if buf.len() as u64 > max {
        return Err(Error::Api(format!("{}: larger than {} MiB", path.display(), max / 1024 / 1024)));
    }
    Ok(buf)
}

/// The person's stored secrets, to be refused from what is written. A home
/// without secrets (or none at all) gives none.
fn person_secrets(home: HomeArg) -> Vec<String> {
    let Ok(home) = Home::resolve(home.home) else { return Vec::new() };
    if !home.db().is_file() || !home.secret_key().is_file() {
        return Vec::new();
    }
    let store = match crate::secrets::SecretStore::open(&home) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("warning: the stored secrets could not be read ({e}); they are not checked");
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for info in store.list().unwrap_or_default() {
        if let Ok(Some(v)) = store.get(&info.name) {
            out.push(v.expose().to_string());
        }
    }
    out
}

/// The fixed checks of a generated client, run in `dir`.
pub fn checks(lang: Lang, dir: &Path, tsc: Option<&Path>) -> Result<i32, Error> {
    let tsc = tsc.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("tsc"));
    let steps: Vec<(PathBuf, Vec<&str>)> = match lang {
        Lang::Python => vec![(PathBuf::from("python3"), vec!["-m", "unittest", "-q"])],
        Lang::TypeScript => vec![
            (tsc.clone(), vec!["--noEmit", "-p", "tsconfig.json"]),
            (tsc, vec!["-p", "tsconfig.json"]),
            (PathBuf::from("node"), vec!["--test", "client.test.mjs"]),
        ],
    };
    for (prog, args) in steps {
        let shown = format!("{} {}", prog.display(), args.join(" "));
        match run_check(&prog, &args, dir) {
            Ok(true) => eprintln!("check passed: {shown}"),
            Ok(false) => {
                eprintln!("check FAILED: {shown}");
                return Ok(1);
            }
            Err(why) => {
                eprintln!("check could not run: {shown}: {why}");
                return Ok(1);
            }
        }
    }
    Ok(0)
}

/// One check: a minimal environment (PATH, a HOME inside the folder, no
/// API_TOKEN), stdin closed, killed after [`CHECK_TIMEOUT`].
fn run_check(prog: &Path, args: &[&str], dir: &Path) -> Result<bool, String> {
    let mut child = Command::new(prog)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()))
        .env("HOME", dir)
        .env("LANG", "C.UTF-8")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status.success()),
            Ok(None) if start.elapsed() > CHECK_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", CHECK_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
}
