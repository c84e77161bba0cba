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

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Subcommand;
use forge::client::{Lang, MARKER};

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
    /// replacing files of the same names. --check then runs the language's
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
            let opts = forge::LearnOptions { hosts, title, known_secrets: person_secrets(home) };
            let learned = match forge::learn(&docs, &opts) {
                Ok(l) => l,
                Err(e) => return usage(Error::Api(e.to_string())),
            };
            let yaml = output.extension().is_some_and(|e| e == "yaml" || e == "yml");
            let text = if yaml {
                forge::yaml::to_string(&learned.spec)
            } else {
                serde_json::to_string_pretty(&learned.spec).map_err(|e| Error::Api(e.to_string()))? + "\n"
            };
            crate::home::write_private(&output, text.as_bytes())?;
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
            std::fs::create_dir_all(&output).map_err(|e| Error::io(&output, e))?;
            for f in &files {
                let path = output.join(f.name);
                if path.is_symlink() {
                    return usage(Error::Api(format!("{}: a symbolic link; nothing written over it", path.display())));
                }
                std::fs::write(&path, &f.text).map_err(|e| Error::io(&path, e))?;
            }
            let marker = output.join(MARKER);
            std::fs::write(&marker, "Written by `chaperone api client`; it may write here again.\n")
                .map_err(|e| Error::io(&marker, e))?;
            eprintln!("wrote {} files into {}", files.len(), output.display());
            if check {
                return checks(lang, &output, tsc.as_deref());
            }
            Ok(0)
        }
    }
}

fn may_write(dir: &Path, overwrite: bool) -> Result<(), String> {
    let exists = dir.exists();
    if exists && !dir.is_dir() {
        return Err("not a folder".into());
    }
    let empty = exists && std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(false);
    let marked = dir.join(MARKER).is_file();
    forge::client::may_write(exists, empty, marked, overwrite)
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
