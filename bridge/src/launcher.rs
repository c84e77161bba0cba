//! Finding and starting Chromium on an owned profile (`chaperone up`).
//!
//! The browser gets the extension with `--load-extension`, its own
//! `--user-data-dir` under `home/profiles/<name>`, and no remote-debugging
//! port: no other local process can attach to a logged-in profile.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::error::Error;
use crate::home::Home;

/// Names searched on `PATH` when `--browser` is not given.
const BROWSER_NAMES: &[&str] = &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"];

/// Flags that keep Chromium quiet on a machine without internet and make
/// `--load-extension` work.
pub const BASE_FLAGS: &[&str] = &[
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-features=DisableLoadExtensionCommandLineSwitch",
];

/// `--browser PATH`, else the first Chromium-family browser on `PATH`.
pub fn find_browser(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(Error::Config(format!("browser not found: {} does not exist", p.display())))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in BROWSER_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(Error::Config(format!(
        "browser not found: none of {} is on PATH; install Chromium (apt-get install chromium) or pass --browser PATH",
        BROWSER_NAMES.join(", ")
    )))
}

/// The unpacked extension: `--extension-dir`, else `CHAPERONE_EXTENSION_DIR`,
/// else `dist/extension` of the checkout the binary was built in.
pub fn find_extension(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    let candidate = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("CHAPERONE_EXTENSION_DIR").map(PathBuf::from))
        .or_else(|| {
            // target/<profile>/chaperone → <checkout>/dist/extension
            let exe = std::env::current_exe().ok()?;
            Some(exe.parent()?.parent()?.parent()?.join("dist").join("extension"))
        })
        .ok_or_else(|| Error::Config("cannot locate the extension; pass --extension-dir".into()))?;
    if candidate.join("manifest.json").is_file() {
        Ok(candidate)
    } else {
        Err(Error::Config(format!(
            "no built extension at {} (run `cargo xtask build`, or pass --extension-dir)",
            candidate.display()
        )))
    }
}

/// The flavour `up` loads: the default build, or with `bodies` the
/// bodies build (`debugger` in its manifest): `--extension-dir` when it
/// is one, else `<default dir>-bodies` (dist/extension-bodies).
pub fn find_extension_flavour(explicit: Option<&Path>, bodies: bool) -> Result<PathBuf, Error> {
    if !bodies {
        return find_extension(explicit);
    }
    let dir = match explicit {
        Some(d) => d.to_path_buf(),
        None => bodies_dir_of(&find_extension(None)?),
    };
    if !dir.join("manifest.json").is_file() {
        return Err(Error::Config(format!(
            "no bodies build at {} (`cargo xtask build` makes dist/extension-bodies)",
            dir.display()
        )));
    }
    let manifest = std::fs::read_to_string(dir.join("manifest.json"))
        .map_err(|e| Error::Config(format!("reading {}: {e}", dir.join("manifest.json").display())))?;
    if !has_debugger_permission(&manifest) {
        return Err(Error::Config(format!(
            "{} is the default build (no `debugger` permission); --network-bodies needs the bodies build, \
             dist/extension-bodies",
            dir.display()
        )));
    }
    Ok(dir)
}

/// `dist/extension` → `dist/extension-bodies`.
pub fn bodies_dir_of(default: &Path) -> PathBuf {
    let name = default.file_name().map_or_else(|| "extension".into(), |n| n.to_string_lossy().into_owned());
    default.with_file_name(format!("{name}-bodies"))
}

/// Whether a manifest asks for `debugger`.
pub fn has_debugger_permission(manifest: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(manifest)
        .ok()
        .and_then(|m| m.get("permissions").and_then(|p| p.as_array()).map(|p| p.iter().any(|x| x == "debugger")))
        .unwrap_or(false)
}

/// Profile names are plain: `[a-z0-9-]{1,32}` (see [`crate::profiles`]).
pub fn validate_profile_name(name: &str) -> Result<(), Error> {
    crate::profiles::check_name(name)
}

/// Creates `home/profiles/<name>` (0700) with the native-host manifest
/// inside, and returns it.
pub fn prepare_profile(home: &Home, name: &str) -> Result<PathBuf, Error> {
    use std::os::unix::fs::PermissionsExt;
    validate_profile_name(name)?;
    let dir = home.profile(name);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    for d in [dir.parent().unwrap_or(&dir), dir.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).map_err(|e| Error::io(d, e))?;
    }
    crate::native_host::install(&dir.join("NativeMessagingHosts"), home)?;
    Ok(dir)
}

pub struct Launch<'a> {
    pub browser: &'a Path,
    pub profile_dir: &'a Path,
    pub extension_dir: &'a Path,
    pub headless: bool,
    pub url: Option<&'a str>,
}

/// Starts the browser. Its output goes to `profile_dir/../<name>.browser.log`
/// so a failed start can be explained.
pub fn launch(l: &Launch<'_>, log: &Path) -> Result<Child, Error> {
    let mut cmd = Command::new(l.browser);
    cmd.args(browser_args(l, running_as_root()));
    let out = std::fs::File::create(log).map_err(|e| Error::io(log, e))?;
    let err = out.try_clone().map_err(|e| Error::io(log, e))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    cmd.spawn().map_err(|e| Error::BrowserStart(format!("cannot start the browser {}: {e}", l.browser.display())))
}

/// The command line of a browser `chaperone up` starts. No stealth, ever
/// (docs/design.md, "Hand-off to the person"): nothing that hides
/// automation (`--disable-blink-features=AutomationControlled`), changes
/// the user agent or client hints, or opens a debugging port.
pub fn browser_args(l: &Launch<'_>, as_root: bool) -> Vec<String> {
    let mut args: Vec<String> = BASE_FLAGS.iter().map(|f| f.to_string()).collect();
    args.push(format!("--user-data-dir={}", l.profile_dir.display()));
    args.push(format!("--load-extension={}", l.extension_dir.display()));
    if l.headless {
        args.extend(["--headless=new".to_string(), "--disable-gpu".to_string()]);
    }
    if as_root {
        // Chromium refuses to run as root with its sandbox on.
        args.push("--no-sandbox".into());
    }
    args.push(l.url.unwrap_or("about:blank").to_string());
    args
}

/// Flags for `chaperone profile open`: the person logs in by hand, so no
/// extension, no remote debugging and no automation flags.
pub const LOGIN_FLAGS: &[&str] = &["--no-first-run", "--no-default-browser-check"];

/// Starts the browser on `profile_dir` for the person to log in
/// (`chaperone profile open`). Output goes to `log`.
pub fn launch_for_login(browser: &Path, profile_dir: &Path, log: &Path) -> Result<Child, Error> {
    let mut cmd = Command::new(browser);
    cmd.args(LOGIN_FLAGS).arg(format!("--user-data-dir={}", profile_dir.display()));
    if running_as_root() {
        cmd.arg("--no-sandbox");
    }
    let out = std::fs::File::create(log).map_err(|e| Error::io(log, e))?;
    let err = out.try_clone().map_err(|e| Error::io(log, e))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    cmd.spawn().map_err(|e| Error::BrowserStart(format!("cannot start the browser {}: {e}", browser.display())))
}

/// Whether there is a display to show a window on.
pub fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            .is_some_and(|euid| euid == "0")
    })
}

/// The last `n` lines of a file, for error messages.
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_bodies_loads_the_bodies_flavour_only() {
        let root = std::env::temp_dir().join(format!("chaperone-flavour-{}", std::process::id()));
        let (plain, bodies) = (root.join("extension"), root.join("extension-bodies"));
        std::fs::create_dir_all(&plain).unwrap();
        std::fs::create_dir_all(&bodies).unwrap();
        std::fs::write(plain.join("manifest.json"), r#"{"permissions":["tabs","webRequest"]}"#).unwrap();
        std::fs::write(bodies.join("manifest.json"), r#"{"permissions":["tabs","webRequest","debugger"]}"#).unwrap();
        assert_eq!(bodies_dir_of(&plain), bodies);
        assert_eq!(find_extension_flavour(Some(&bodies), true).unwrap(), bodies);
        assert_eq!(find_extension_flavour(Some(&plain), false).unwrap(), plain);
        let e = find_extension_flavour(Some(&plain), true).unwrap_err().to_string();
        assert!(e.contains("default build") && e.contains("extension-bodies"), "{e}");
        let e = find_extension_flavour(Some(&root.join("nowhere")), true).unwrap_err().to_string();
        assert!(e.contains("no bodies build"), "{e}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn the_browser_is_never_disguised() {
        let (browser, profile, ext) = (Path::new("/usr/bin/chromium"), Path::new("/p"), Path::new("/e"));
        for headless in [false, true] {
            for root in [false, true] {
                let l = Launch { browser, profile_dir: profile, extension_dir: ext, headless, url: None };
                let mut all = browser_args(&l, root);
                all.extend(LOGIN_FLAGS.iter().map(|f| f.to_string()));
                for a in &all {
                    let lower = a.to_ascii_lowercase();
                    for banned in [
                        "automationcontrolled",
                        "--disable-blink-features",
                        "--user-agent",
                        "user-agent-client-hints",
                        "useragentclienthint",
                        "--remote-debugging",
                        "--enable-automation",
                        "--proxy-server",
                        "--disable-web-security",
                    ] {
                        assert!(!lower.contains(banned), "{a} hides or changes the browser ({banned})");
                    }
                }
            }
        }
    }

    #[test]
    fn profile_names_cannot_escape_the_profiles_folder() {
        for bad in ["", "..", "a/b", "../x", "a b", "a_b", "Work", &"x".repeat(33)] {
            assert!(validate_profile_name(bad).is_err(), "{bad}");
        }
        for good in ["default", "work-2"] {
            assert!(validate_profile_name(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn missing_browser_is_a_clear_error() {
        let err = find_browser(Some(Path::new("/nonexistent/chromium"))).unwrap_err().to_string();
        assert!(err.contains("browser not found"), "{err}");
    }
}
