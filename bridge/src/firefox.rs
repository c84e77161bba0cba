//! Firefox on an owned profile (`chaperone up --browser firefox-esr`,
//! `chaperone profile open`, `chaperone install-native-host --browser
//! firefox`); ARCHITECTURE.md, "Firefox".
//!
//! Spec:
//!
//! - A browser is Firefox when its file name, or the file it links to,
//!   names Firefox ([`is_firefox`]): Debian's `/usr/bin/firefox-esr` is a
//!   link to `/usr/lib/firefox-esr/firefox-esr`.
//! - The owned profile is `HOME/profiles/NAME` in Firefox's own format,
//!   started with `-profile DIR -no-remote`: never the person's default
//!   profile, never another running Firefox.
//! - `user.js` ([`user_js`], prefs as data in [`PREFS`]) lets Firefox ESR
//!   run our unsigned add-on, enables add-ons of the profile's own folder
//!   without a prompt, fixes our add-on's `moz-extension://` host to
//!   `shared::FIREFOX_EXTENSION_UUID` (the `Origin` the bridge accepts on
//!   `/ext`), and silences first-run pages and background updates. No pref
//!   or argument opens the remote protocol (WebDriver BiDi / CDP) or
//!   Marionette ([`args`] never has `--remote-debugging-port`,
//!   `-marionette` or `-start-debugger-server`).
//! - The add-on is installed as a proxy file, `extensions/<add-on id>`,
//!   holding the absolute path of the unpacked `dist/firefox`.
//! - Firefox reads native-messaging host manifests from
//!   `$HOME/.mozilla/native-messaging-hosts` only (no per-profile folder),
//!   so the browser `up` starts gets `HOME` set to the profile's own
//!   `HOME/profiles/NAME/home` (0700) where its manifest, pinned to our
//!   add-on id, names this home's launcher: every owned Firefox profile
//!   finds the daemon of its home, and nothing is written into the
//!   person's `~/.mozilla`. `install-native-host --browser firefox` writes
//!   the person's user-level manifest instead, by request.
//! - `profile open` starts the same profile with no add-on: the proxy file
//!   is removed first (Firefox then uninstalls it), and `up` puts it back.
//! - In use: Firefox keeps a `lock` symlink whose target is
//!   `ADDRESS:+PID` ([`parse_lock_target`]); the profile is in use while
//!   that process lives.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::error::Error;
use crate::home::Home;
use crate::launcher::Launch;

/// A pref's value in `user.js`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pref {
    Bool(bool),
    Int(i64),
    Str(&'static str),
}

/// The prefs every owned Firefox profile gets (besides the add-on's
/// `moz-extension://` host, which [`user_js`] adds).
pub const PREFS: &[(&str, Pref)] = &[
    // Debian's ESR honours this: our add-on is not signed by Mozilla.
    ("xpinstall.signatures.required", Pref::Bool(false)),
    // Add-ons in the profile's own folder start enabled, without a prompt.
    ("extensions.autoDisableScopes", Pref::Int(0)),
    ("extensions.enabledScopes", Pref::Int(5)),
    // MV3 host permissions granted at install (the default, made explicit).
    ("extensions.originControls.grantByDefault", Pref::Bool(true)),
    // Firefox suspends an idle event page after 30 s, and an open WebSocket
    // does not count as activity (Chromium's service worker stays up while
    // its socket talks). 5 min is the longest Firefox takes; the worker's
    // 30 s alarm then always comes first, so the add-on stays connected.
    ("extensions.background.idle.timeout", Pref::Int(300_000)),
    ("extensions.update.enabled", Pref::Bool(false)),
    ("extensions.getAddons.cache.enabled", Pref::Bool(false)),
    // Quiet on a machine without internet; no first-run pages.
    ("browser.shell.checkDefaultBrowser", Pref::Bool(false)),
    ("browser.startup.homepage_override.mstone", Pref::Str("ignore")),
    ("browser.aboutwelcome.enabled", Pref::Bool(false)),
    ("startup.homepage_welcome_url", Pref::Str("about:blank")),
    ("startup.homepage_first_run_url", Pref::Str("about:blank")),
    ("datareporting.policy.dataSubmissionEnabled", Pref::Bool(false)),
    ("toolkit.telemetry.reportingpolicy.firstRun", Pref::Bool(false)),
    ("app.update.auto", Pref::Bool(false)),
    ("app.normandy.enabled", Pref::Bool(false)),
    ("browser.newtabpage.enabled", Pref::Bool(false)),
    ("browser.tabs.warnOnClose", Pref::Bool(false)),
    // Never a debugging server for other programs.
    ("devtools.debugger.remote-enabled", Pref::Bool(false)),
    ("devtools.chrome.enabled", Pref::Bool(false)),
];

/// File names that are Firefox.
const FIREFOX_NAMES: &[&str] = &["firefox", "firefox-esr", "firefox-bin"];

/// Whether `browser` is Firefox: its file name, or the name of the file it
/// links to.
pub fn is_firefox(browser: &Path) -> bool {
    let named = |p: &Path| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| FIREFOX_NAMES.contains(&n));
    named(browser) || std::fs::canonicalize(browser).is_ok_and(|p| named(&p))
}

/// `user.js` of an owned profile: [`PREFS`] and our add-on's fixed
/// `moz-extension://` host.
pub fn user_js() -> String {
    let mut out = String::from("// Written by `chaperone up`; rewritten at every start.\n");
    for (name, value) in PREFS {
        out.push_str(&pref_line(name, *value));
    }
    let uuids = serde_json::json!({ shared::FIREFOX_ADDON_ID: shared::FIREFOX_EXTENSION_UUID }).to_string();
    out.push_str(&format!("user_pref(\"extensions.webextensions.uuids\", {});\n", js_string(&uuids)));
    out
}

fn pref_line(name: &str, value: Pref) -> String {
    let v = match value {
        Pref::Bool(b) => b.to_string(),
        Pref::Int(i) => i.to_string(),
        Pref::Str(s) => js_string(s),
    };
    format!("user_pref({}, {v});\n", js_string(name))
}

/// A JavaScript string literal (JSON's quoting is valid JS).
fn js_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The unpacked Firefox add-on: `dir` if its manifest names a gecko id,
/// else its sibling `firefox` (`dist/extension` → `dist/firefox`).
pub fn extension_dir(dir: &Path) -> Result<PathBuf, Error> {
    let is_ours = |d: &Path| {
        std::fs::read_to_string(d.join("manifest.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|j| j.pointer("/browser_specific_settings/gecko/id").and_then(|v| v.as_str()).map(str::to_string))
            .is_some_and(|id| id == shared::FIREFOX_ADDON_ID)
    };
    let sibling = dir.parent().map(|p| p.join("firefox"));
    for candidate in std::iter::once(dir.to_path_buf()).chain(sibling) {
        if is_ours(&candidate) {
            return std::fs::canonicalize(&candidate).map_err(|e| Error::io(&candidate, e));
        }
    }
    Err(Error::Config(format!(
        "no built Firefox add-on at {} or next to it (run `cargo xtask build`, which writes dist/firefox)",
        dir.display()
    )))
}

/// The `HOME` the browser of an owned profile runs with.
pub fn browser_home(profile_dir: &Path) -> PathBuf {
    profile_dir.join("home")
}

/// Where the add-on's proxy file goes.
fn proxy_file(profile_dir: &Path) -> PathBuf {
    profile_dir.join("extensions").join(shared::FIREFOX_ADDON_ID)
}

/// Makes `profile_dir` an owned Firefox profile with our add-on:
/// `user.js`, the proxy file, and the native-host manifest in the
/// browser's own `HOME`.
pub fn prepare_profile(home: &Home, profile_dir: &Path, extension_dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::DirBuilderExt;
    let write = |path: &Path, text: &str| std::fs::write(path, text).map_err(|e| Error::io(path, e));
    write(&profile_dir.join("user.js"), &user_js())?;
    let ext = profile_dir.join("extensions");
    std::fs::create_dir_all(&ext).map_err(|e| Error::io(&ext, e))?;
    write(&proxy_file(profile_dir), &format!("{}\n", extension_dir.display()))?;
    let fake_home = browser_home(profile_dir);
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&fake_home).map_err(|e| Error::io(&fake_home, e))?;
    let hosts = fake_home.join(".mozilla").join("native-messaging-hosts");
    crate::native_host::install_for(&hosts, home, crate::native_host::BrowserFamily::Firefox)?;
    Ok(())
}

/// The command line of a Firefox `chaperone up` starts. No stealth and no
/// debugging port, as for Chromium.
pub fn args(l: &Launch<'_>) -> Vec<String> {
    let mut args = vec!["-profile".to_string(), l.profile_dir.display().to_string(), "-no-remote".to_string()];
    if l.headless {
        args.push("--headless".into());
    }
    args.push(l.url.unwrap_or("about:blank").to_string());
    args
}

/// Starts Firefox on the owned profile with our add-on.
pub fn launch(home: &Home, l: &Launch<'_>, log: &Path) -> Result<Child, Error> {
    let ext = extension_dir(l.extension_dir)?;
    prepare_profile(home, l.profile_dir, &ext)?;
    let mut cmd = Command::new(l.browser);
    cmd.args(args(l)).env("HOME", browser_home(l.profile_dir)).env_remove("MOZ_MARIONETTE");
    spawn(cmd, l.browser, log)
}

/// Starts Firefox on the profile for the person to log in: no add-on (its
/// proxy file is removed), no automation.
pub fn launch_for_login(browser: &Path, profile_dir: &Path, log: &Path) -> Result<Child, Error> {
    let proxy = proxy_file(profile_dir);
    if std::fs::symlink_metadata(&proxy).is_ok() {
        std::fs::remove_file(&proxy).map_err(|e| Error::io(&proxy, e))?;
    }
    let mut cmd = Command::new(browser);
    cmd.args(["-profile".as_ref(), profile_dir.as_os_str(), "-no-remote".as_ref()]);
    spawn(cmd, browser, log)
}

fn spawn(mut cmd: Command, browser: &Path, log: &Path) -> Result<Child, Error> {
    let out = std::fs::File::create(log).map_err(|e| Error::io(log, e))?;
    let err = out.try_clone().map_err(|e| Error::io(log, e))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    cmd.spawn().map_err(|e| Error::BrowserStart(format!("cannot start the browser {}: {e}", browser.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firefox_is_recognised_by_name() {
        for ff in ["/usr/bin/firefox-esr", "/usr/lib/firefox-esr/firefox-esr", "/opt/firefox/firefox", "firefox-bin"] {
            assert!(is_firefox(Path::new(ff)), "{ff}");
        }
        for other in ["/usr/bin/chromium", "/usr/bin/google-chrome", "/tmp/firefox-launcher.sh", "/usr/bin/notfirefox"]
        {
            assert!(!is_firefox(Path::new(other)), "{other}");
        }
    }

    #[test]
    fn the_firefox_command_line_opens_no_debugging_port() {
        let (browser, profile, ext) = (Path::new("/usr/bin/firefox-esr"), Path::new("/p"), Path::new("/e"));
        for headless in [false, true] {
            let l = Launch { browser, profile_dir: profile, extension_dir: ext, headless, url: None };
            let a = args(&l);
            assert!(a.windows(2).any(|w| w[0] == "-profile" && w[1] == "/p"), "{a:?}");
            assert!(a.contains(&"-no-remote".to_string()));
            assert_eq!(a.contains(&"--headless".to_string()), headless);
            for arg in &a {
                let lower = arg.to_ascii_lowercase();
                for banned in ["remote-debugging", "marionette", "debugger-server", "remote-allow", "user-agent"] {
                    assert!(!lower.contains(banned), "{arg} opens or disguises ({banned})");
                }
            }
        }
    }

    #[test]
    fn user_js_fixes_the_addon_host_and_opens_nothing() {
        let js = user_js();
        assert!(js.contains("user_pref(\"xpinstall.signatures.required\", false);"), "{js}");
        assert!(js.contains(shared::FIREFOX_EXTENSION_UUID));
        assert!(js.contains(&format!("\\\"{}\\\"", shared::FIREFOX_ADDON_ID)), "{js}");
        assert!(js.contains("user_pref(\"devtools.debugger.remote-enabled\", false);"));
        for line in js.lines().skip(1) {
            assert!(line.starts_with("user_pref(\"") && line.ends_with(");"), "{line}");
            assert!(!line.contains("marionette") && !line.contains("remote.active-protocols"), "{line}");
        }
    }
}
