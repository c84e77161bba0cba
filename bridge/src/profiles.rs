//! Owned browser profiles: `chaperone profile create|list|rm|open`, and the
//! in-use check `chaperone up` makes before it launches anything.
//!
//! Spec:
//!
//! - A profile is the Chromium user-data-dir `HOME/profiles/NAME` (0700,
//!   `profiles/` 0700 too). One profile per identity (one account set):
//!   the person logs in by hand with `profile open`, and Chaperone is never
//!   pointed at their everyday browser profile.
//! - Names are `[a-z0-9-]{1,32}` ([`valid_name`]); anything else is refused
//!   before anything is touched (exit 2 on the command line). Nothing
//!   outside `HOME/profiles/` is ever created, read or removed: no `..`, no
//!   `/`, and `rm` refuses when `profiles/` or `profiles/NAME` is a symlink
//!   instead of following it.
//! - In use = Chromium's profile lock is held: Chromium keeps a
//!   `SingletonLock` symlink in the user-data-dir whose target is
//!   `HOSTNAME-PID` ([`parse_lock_target`]). The profile is in use when
//!   that process is alive on this host (`/proc/PID`); a lock naming
//!   another host is taken as in use (we cannot check it). A lock whose
//!   process is gone (dangling) is not in use. Lock files are only read,
//!   never deleted: Chromium cleans them up itself.
//! - A profile in use: `rm` refuses (exit 1, naming the process), `open`
//!   refuses, `up` fails with `PROFILE_LOCKED` before starting a daemon or
//!   a browser.
//! - `list` shows name, size on disk (sum of regular file sizes, symlinks
//!   not followed), last used (newest mtime of anything inside) and in use.
//!   Chaperone never reads, copies or exports cookies, storage or saved
//!   passwords: it only sums sizes and reads mtimes.
//! - `rm` asks nothing and removes the directory (and its
//!   `NAME.browser.log` next to it, written by `up`/`open`).
//! - `open` starts the browser on the profile with no extension and no
//!   automation (no `--load-extension`, no remote debugging, no automation
//!   flags) and waits for the person to close the window.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Error;
use crate::home::Home;

/// What a profile name may be, for error messages.
pub const NAME_RULE: &str = "profile names are 1 to 32 characters of a-z, 0-9 and '-'";

/// The lock Chromium keeps in a user-data-dir while it runs.
pub const LOCK_FILE: &str = "SingletonLock";

/// The guidance `profile create` prints.
pub const GUIDANCE: &str = "Use one profile per identity (one person's set of accounts). Log in to sites by hand \
     with `chaperone profile open NAME` (finish any MFA there, then close the window); the agent then works with \
     those sessions. Never point Chaperone at your everyday browser profile.";

/// `[a-z0-9-]{1,32}`.
pub fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// [`valid_name`] as an error.
pub fn check_name(name: &str) -> Result<(), Error> {
    if valid_name(name) { Ok(()) } else { Err(Error::ProfileName { name: name.to_string(), rule: NAME_RULE }) }
}

/// For clap: a bad name is a usage error (exit 2, nothing touched).
pub fn parse_name(s: &str) -> Result<String, String> {
    if valid_name(s) { Ok(s.to_string()) } else { Err(NAME_RULE.to_string()) }
}

/// Who holds a profile's lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockHolder {
    pub host: String,
    pub pid: u32,
}

impl std::fmt::Display for LockHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {} on {}", self.pid, self.host)
    }
}

/// Parses a `SingletonLock` target, `HOSTNAME-PID` (the host may itself
/// contain '-').
pub fn parse_lock_target(target: &str) -> Option<LockHolder> {
    let (host, pid) = target.rsplit_once('-')?;
    if !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let pid: u32 = pid.parse().ok().filter(|p| *p > 0)?;
    (!host.is_empty()).then(|| LockHolder { host: host.to_string(), pid })
}

/// This machine's host name, as Chromium writes it into the lock.
fn hostname() -> Option<String> {
    fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// The live holder of the profile in `dir`, if it is in use. Reads only
/// the lock symlink's target; never removes it.
pub fn lock_holder(dir: &Path) -> Option<LockHolder> {
    chromium_lock_holder(dir).or_else(|| firefox_lock_holder(dir))
}

/// Chromium's `SingletonLock` holder, if alive.
fn chromium_lock_holder(dir: &Path) -> Option<LockHolder> {
    let target = fs::read_link(dir.join(LOCK_FILE)).ok()?;
    let holder = parse_lock_target(target.to_str()?)?;
    match hostname() {
        Some(me) if me != holder.host => Some(holder),
        _ => crate::home::process_alive(holder.pid).then_some(holder),
    }
}

/// Parses Firefox's `lock` symlink target, `ADDRESS:+PID`.
pub fn parse_firefox_lock_target(target: &str) -> Option<LockHolder> {
    let (host, pid) = target.rsplit_once(":+")?;
    if host.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let pid: u32 = pid.parse().ok().filter(|p| *p > 0)?;
    Some(LockHolder { host: host.to_string(), pid })
}

/// The live holder of a Firefox profile's `lock`. The address is not a host
/// name, so the process is looked up here.
fn firefox_lock_holder(dir: &Path) -> Option<LockHolder> {
    let target = fs::read_link(dir.join("lock")).ok()?;
    let holder = parse_firefox_lock_target(target.to_str()?)?;
    crate::home::process_alive(holder.pid).then_some(holder)
}

/// `up`'s check: fails with `PROFILE_LOCKED` when the profile is in use.
pub fn ensure_not_in_use(home: &Home, name: &str) -> Result<(), Error> {
    match lock_holder(&home.profile(name)) {
        Some(holder) => Err(Error::ProfileLocked { name: name.to_string(), holder: holder.to_string() }),
        None => Ok(()),
    }
}

/// `HOME/profiles`, refused if it is a symlink or not a directory.
fn profiles_dir(home: &Home) -> Result<Option<PathBuf>, Error> {
    let dir = home.root().join("profiles");
    match fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => Ok(Some(dir)),
        Ok(_) => Err(Error::Config(format!("{} is not a directory (a symlink?); refusing to use it", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&dir, e)),
    }
}

/// Creates `HOME/profiles/NAME` (0700). `Ok(false)` if it already existed.
pub fn create(home: &Home, name: &str) -> Result<bool, Error> {
    check_name(name)?;
    home.ensure()?;
    let parent = match profiles_dir(home)? {
        Some(p) => p,
        None => {
            let p = home.root().join("profiles");
            fs::DirBuilder::new().mode(0o700).create(&p).map_err(|e| Error::io(&p, e))?;
            p
        }
    };
    fs::set_permissions(&parent, fs::Permissions::from_mode(0o700)).map_err(|e| Error::io(&parent, e))?;
    let dir = home.profile(name);
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let m = fs::symlink_metadata(&dir).map_err(|e| Error::io(&dir, e))?;
            if !m.is_dir() {
                return Err(Error::Config(format!("{} is not a directory (a symlink?)", dir.display())));
            }
            return Ok(false);
        }
        Err(e) => return Err(Error::io(&dir, e)),
    }
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).map_err(|e| Error::io(&dir, e))?;
    Ok(true)
}

/// One row of `profile list`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    pub name: String,
    pub path: PathBuf,
    /// Sum of the sizes of the regular files inside (symlinks not followed).
    pub size_bytes: u64,
    /// Newest mtime of anything inside (RFC 3339, UTC); `None` when empty.
    pub last_used: Option<String>,
    pub in_use: bool,
    pub holder: Option<LockHolder>,
}

/// Every directory in `HOME/profiles`, sorted by name.
pub fn list(home: &Home) -> Result<Vec<ProfileInfo>, Error> {
    let Some(parent) = profiles_dir(home)? else { return Ok(Vec::new()) };
    let mut rows = Vec::new();
    for entry in fs::read_dir(&parent).map_err(|e| Error::io(&parent, e))? {
        let entry = entry.map_err(|e| Error::io(&parent, e))?;
        let Ok(meta) = fs::symlink_metadata(entry.path()) else { continue };
        if !meta.is_dir() {
            continue;
        }
        let path = entry.path();
        let (size_bytes, newest) = usage(&path);
        let holder = lock_holder(&path);
        rows.push(ProfileInfo {
            name: entry.file_name().to_string_lossy().into_owned(),
            size_bytes,
            last_used: newest.map(crate::time::rfc3339),
            in_use: holder.is_some(),
            holder,
            path,
        });
    }
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(rows)
}

/// Size of the regular files under `dir` and the newest mtime (Unix
/// seconds) of anything under it. Metadata only; symlinks not followed.
fn usage(dir: &Path) -> (u64, Option<u64>) {
    let mut size = 0u64;
    let mut newest: Option<u64> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = fs::symlink_metadata(entry.path()) else { continue };
            if let Ok(t) = meta.modified()
                && let Ok(since) = t.duration_since(std::time::UNIX_EPOCH)
            {
                newest = Some(newest.map_or(since.as_secs(), |n| n.max(since.as_secs())));
            }
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                size += meta.len();
            }
        }
    }
    (size, newest)
}

/// Removes `HOME/profiles/NAME` unless it is in use or a symlink.
pub fn remove(home: &Home, name: &str) -> Result<(), Error> {
    check_name(name)?;
    let Some(_) = profiles_dir(home)? else { return Err(Error::ProfileNotFound(name.to_string())) };
    let dir = home.profile(name);
    match fs::symlink_metadata(&dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(Error::Config(format!(
                "{} is a symlink, not a profile Chaperone made; refusing to remove it",
                dir.display()
            )));
        }
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(Error::Config(format!("{} is not a directory; refusing to remove it", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Error::ProfileNotFound(name.to_string())),
        Err(e) => return Err(Error::io(&dir, e)),
    }
    if let Some(holder) = lock_holder(&dir) {
        return Err(Error::ProfileInUse { name: name.to_string(), holder: holder.to_string() });
    }
    // `remove_dir_all` does not follow symlinks inside the tree.
    fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let log = browser_log(home, name);
    if fs::symlink_metadata(&log).is_ok_and(|m| m.is_file()) {
        let _ = fs::remove_file(&log);
    }
    Ok(())
}

/// `HOME/profiles/NAME.browser.log`: the browser's output.
pub fn browser_log(home: &Home, name: &str) -> PathBuf {
    home.profile(name).with_extension("browser.log")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_digits_and_dashes_up_to_32() {
        for good in ["a", "work", "work-2", "0", "-", &"x".repeat(32)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "A", "Work", "a_b", "a b", "..", ".", "../x", "x/y", "/x", "é", "a.b", &"x".repeat(33)] {
            assert!(!valid_name(bad), "{bad}");
            assert!(parse_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lock_targets_are_address_plus_pid() {
        assert_eq!(
            parse_firefox_lock_target("127.0.1.1:+4242"),
            Some(LockHolder { host: "127.0.1.1".into(), pid: 4242 })
        );
        assert_eq!(parse_firefox_lock_target("::1:+7"), Some(LockHolder { host: "::1".into(), pid: 7 }));
        for bad in ["", "127.0.0.1", "127.0.0.1:+", ":+12", "127.0.0.1:+0", "127.0.0.1:+x1", "h-12"] {
            assert_eq!(parse_firefox_lock_target(bad), None, "{bad}");
        }
    }

    #[test]
    fn lock_targets_are_host_dash_pid() {
        assert_eq!(parse_lock_target("box-123"), Some(LockHolder { host: "box".into(), pid: 123 }));
        assert_eq!(parse_lock_target("my-laptop-9"), Some(LockHolder { host: "my-laptop".into(), pid: 9 }));
        for bad in ["", "box", "box-", "-12", "box-0", "box-x1", "box-+1", "box-99999999999"] {
            assert_eq!(parse_lock_target(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_lock_is_held_only_while_its_process_lives() {
        let dir = std::env::temp_dir().join(format!("chaperone-profile-lock-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        assert_eq!(lock_holder(&dir), None);
        let host = hostname().unwrap_or_else(|| "localhost".into());
        let me = std::process::id();
        std::os::unix::fs::symlink(format!("{host}-{me}"), dir.join(LOCK_FILE)).unwrap();
        assert_eq!(lock_holder(&dir), Some(LockHolder { host: host.clone(), pid: me }));
        fs::remove_file(dir.join(LOCK_FILE)).unwrap();
        // A pid above the kernel's maximum is never alive.
        std::os::unix::fs::symlink(format!("{host}-4194305"), dir.join(LOCK_FILE)).unwrap();
        assert_eq!(lock_holder(&dir), None);
        assert!(fs::symlink_metadata(dir.join(LOCK_FILE)).is_ok(), "the lock is never removed");
        let _ = fs::remove_dir_all(&dir);
    }
}
