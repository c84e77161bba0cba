//! Chrome's native-messaging bootstrap (docs/design.md, "Processes and
//! channels").
//!
//! Chrome starts `chaperone chrome-extension://<id>/` with the extension's
//! origin as the first argument and speaks length-prefixed JSON on stdio.
//! We answer one `bootstrap` request with where the daemon listens and the
//! extension token, starting the daemon if it is not running.
//!
//! `install` writes the host manifest (pinned to our extension id) into a
//! browser's `NativeMessagingHosts/` folder, with a tiny launcher script
//! that fixes the home directory.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use shared::protocol::{NativeReply, NativeRequest};

use crate::config::extension_origin;
use crate::daemon;
use crate::error::Error;
use crate::home::Home;

/// Requests from Chrome are tiny; anything larger is refused.
const MAX_REQUEST_BYTES: u32 = 64 * 1024;
/// Name of the launcher script next to the host manifest.
pub const LAUNCHER_NAME: &str = "chaperone-native-host";

/// Whether the process was started by Chrome as a native host.
pub fn is_native_host_invocation(first_arg: Option<&str>) -> bool {
    first_arg.is_some_and(|a| a.starts_with("chrome-extension://"))
}

/// Who started the process as a native host, from its arguments (without
/// the program name): Chromium passes the extension's origin first
/// (`chrome-extension://<id>/`); Firefox passes the host manifest's
/// absolute path, then the add-on id. `None`: an ordinary command line.
/// Whether that caller is ours is [`answer`]'s decision.
pub fn caller(args: &[String]) -> Option<&str> {
    match args {
        [first, ..] if is_native_host_invocation(Some(first)) => Some(first),
        [manifest, addon] if manifest.starts_with('/') && manifest.ends_with(".json") && !addon.starts_with('-') => {
            Some(addon)
        }
        _ => None,
    }
}

/// Whether a caller named by [`caller`] is our extension: Chromium's origin
/// of our pinned id, or Firefox's add-on id.
pub fn is_our_extension(caller: &str) -> bool {
    caller == format!("{}/", extension_origin(shared::EXTENSION_ID)) || caller == shared::FIREFOX_ADDON_ID
}

/// Serves one native-messaging exchange on stdin/stdout.
pub fn run(origin: &str, home: &Home) -> Result<(), Error> {
    let reply = answer(origin, home, &mut std::io::stdin().lock());
    let outcome = match &reply {
        NativeReply::Bridge { port, .. } => format!("ok port={port}"),
        NativeReply::Error { message } => format!("error: {message}"),
    };
    note(home, &outcome);
    let json = serde_json::to_vec(&reply)?;
    let mut out = std::io::stdout().lock();
    let len = u32::try_from(json.len()).map_err(|_| Error::Server("reply too large".into()))?;
    out.write_all(&len.to_ne_bytes())
        .and_then(|()| out.write_all(&json))
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("stdout", e))
}

fn answer(origin: &str, home: &Home, input: &mut impl Read) -> NativeReply {
    if !is_our_extension(origin) {
        return NativeReply::Error { message: "this native host only serves the Chaperone extension".into() };
    }
    match read_request(input) {
        Ok(NativeRequest::Bootstrap) => {}
        Err(message) => return NativeReply::Error { message },
    }
    let result = daemon::ensure_running(home).and_then(|info| Ok((info, home.tokens()?)));
    match result {
        Ok((info, tokens)) => NativeReply::Bridge {
            port: info.port,
            token: tokens.extension.expose().to_string(),
            version: shared::VERSION.to_string(),
            headless: shared::handoff::env_says_headless(
                std::env::var(shared::handoff::FIREFOX_HEADLESS_ENV).ok().as_deref(),
            ),
        },
        Err(e) => {
            tracing::warn!(error = %e, "native host could not reach the daemon");
            NativeReply::Error { message: "the Chaperone bridge could not be started; run `chaperone status`".into() }
        }
    }
}

/// Reads one native-messaging request: a native-endian `u32` length, then
/// that many bytes of JSON (at most 64 KiB). Public for the fuzz target
/// (`fuzz/fuzz_targets/native_host.rs`).
pub fn read_request(input: &mut impl Read) -> Result<NativeRequest, String> {
    let mut len = [0u8; 4];
    input.read_exact(&mut len).map_err(|_| "no request received".to_string())?;
    let len = u32::from_ne_bytes(len);
    if len > MAX_REQUEST_BYTES {
        return Err("request too large".into());
    }
    let mut buf = vec![0u8; len as usize];
    input.read_exact(&mut buf).map_err(|_| "truncated request".to_string())?;
    serde_json::from_slice(&buf).map_err(|_| "unknown request".to_string())
}

/// Size after which `native-host.log` starts again (a line per browser start).
const MAX_NOTE_BYTES: u64 = 64 * 1024;

/// Appends one line (time, outcome; never the token) to
/// `home/logs/native-host.log`, so `up` can tell whether the extension ever
/// asked for the bridge.
/// The file is private like the daemon's logs (dir 0700, file 0600) and is
/// started afresh once it passes [`MAX_NOTE_BYTES`].
fn note(home: &Home, outcome: &str) {
    use std::os::unix::fs::DirBuilderExt;
    let dir = home.logs();
    if std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).is_err() {
        return;
    }
    let path = dir.join("native-host.log");
    let too_big = std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_NOTE_BYTES);
    if (too_big || !path.exists()) && crate::home::write_private(&path, b"").is_err() {
        return;
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(&path) {
        let _ = writeln!(f, "{} {outcome}", crate::time::now_rfc3339());
    }
}

/// Where the browser reads user-level host manifests when it is started
/// with its default profile.
pub fn default_hosts_dir(browser: BrowserFamily) -> Result<PathBuf, Error> {
    let sub = match browser {
        BrowserFamily::Chromium => "chromium",
        BrowserFamily::Chrome => "google-chrome",
        // Firefox reads `$HOME/.mozilla/native-messaging-hosts`, not XDG.
        BrowserFamily::Firefox => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .ok_or_else(|| Error::Home("HOME is not set".into()))?;
            return Ok(PathBuf::from(home).join(".mozilla").join("native-messaging-hosts"));
        }
    };
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or_else(|| Error::Home("HOME is not set".into()))?;
    Ok(config.join(sub).join("NativeMessagingHosts"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BrowserFamily {
    Chromium,
    Chrome,
    Firefox,
}

/// Writes `<dir>/com.chaperone.bridge.json` and its launcher script.
/// Returns the manifest path.
pub fn install(hosts_dir: &Path, home: &Home) -> Result<PathBuf, Error> {
    install_for(hosts_dir, home, BrowserFamily::Chromium)
}

/// [`install`] for one browser family: Chromium's manifest names the
/// extension's origin (`allowed_origins`), Firefox's the add-on id
/// (`allowed_extensions`).
pub fn install_for(hosts_dir: &Path, home: &Home, browser: BrowserFamily) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(hosts_dir).map_err(|e| Error::io(hosts_dir, e))?;
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    let launcher = hosts_dir.join(LAUNCHER_NAME);
    let script = format!(
        "#!/bin/sh\n# Written by `chaperone install-native-host`: starts the bridge's native host for one home.\nCHAPERONE_HOME={} exec {} \"$@\"\n",
        shell_quote(&home.root().to_string_lossy()),
        shell_quote(&exe.to_string_lossy()),
    );
    write_file_mode(&launcher, script.as_bytes(), 0o700)?;
    let mut manifest = serde_json::json!({
        "name": shared::NATIVE_HOST_NAME,
        "description": "Chaperone bridge bootstrap (hands the extension the local port and its token)",
        "path": launcher,
        "type": "stdio",
    });
    let (key, allowed) = match browser {
        BrowserFamily::Firefox => ("allowed_extensions", shared::FIREFOX_ADDON_ID.to_string()),
        BrowserFamily::Chromium | BrowserFamily::Chrome => {
            ("allowed_origins", format!("{}/", extension_origin(shared::EXTENSION_ID)))
        }
    };
    manifest[key] = serde_json::json!([allowed]);
    let path = hosts_dir.join(format!("{}.json", shared::NATIVE_HOST_NAME));
    let text = serde_json::to_vec_pretty(&manifest)?;
    write_file_mode(&path, &text, 0o644)?;
    Ok(path)
}

fn write_file_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|e| Error::io(path, e))
}

/// Single-quotes a string for /bin/sh.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(json: &str) -> Vec<u8> {
        let mut v = (json.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(json.as_bytes());
        v
    }

    #[test]
    fn other_origins_and_bad_requests_get_no_token() {
        let home = Home::at(std::env::temp_dir().join("chaperone-nh-never-created"));
        let reply = answer(
            "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/",
            &home,
            &mut &framed(r#"{"type":"bootstrap"}"#)[..],
        );
        assert!(matches!(reply, NativeReply::Error { .. }));
        let ours = format!("chrome-extension://{}/", shared::EXTENSION_ID);
        for bad in [framed(r#"{"type":"approve"}"#), framed("not json"), vec![1, 0]] {
            assert!(matches!(answer(&ours, &home, &mut &bad[..]), NativeReply::Error { .. }));
        }
        assert!(!home.root().exists(), "nothing may be started for a refused request");
    }

    #[test]
    fn shell_quoting_survives_quotes_and_spaces() {
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
    }

    #[test]
    fn firefox_and_chromium_callers_are_told_apart_from_a_command_line() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ours = format!("chrome-extension://{}/", shared::EXTENSION_ID);
        assert_eq!(caller(&args(&[&ours])), Some(ours.as_str()));
        let ff = args(&["/h/.mozilla/native-messaging-hosts/com.chaperone.bridge.json", shared::FIREFOX_ADDON_ID]);
        assert_eq!(caller(&ff), Some(shared::FIREFOX_ADDON_ID));
        for cli in [
            &["serve"][..],
            &["up", "--browser", "/usr/bin/firefox-esr"],
            &["x.json", "a@b"],
            &[],
            &["/a.json", "--help"],
        ] {
            assert_eq!(caller(&args(cli)), None, "{cli:?}");
        }
        assert!(is_our_extension(&ours));
        assert!(is_our_extension(shared::FIREFOX_ADDON_ID));
        for other in ["chaperone@evil.example", "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/", "", "/x.json"] {
            assert!(!is_our_extension(other), "{other}");
        }
        let home = Home::at(std::env::temp_dir().join("chaperone-nh-never-created-ff"));
        let reply = answer("someone@else", &home, &mut &framed(r#"{"type":"bootstrap"}"#)[..]);
        assert!(matches!(reply, NativeReply::Error { .. }));
        assert!(!home.root().exists());
    }

    #[test]
    fn native_host_invocation_is_recognised_by_the_origin_argument() {
        assert!(is_native_host_invocation(Some("chrome-extension://abc/")));
        assert!(!is_native_host_invocation(Some("serve")));
        assert!(!is_native_host_invocation(None));
    }
}
