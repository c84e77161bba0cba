//! The home directory (`~/.config/chaperone`, `CHAPERONE_HOME`, `--home`):
//! created 0700; holds the three tokens (0600), `daemon.json`, the lock
//! that keeps one daemon per home, and the owned browser profiles.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ring::rand::{SecureRandom, SystemRandom};
use shared::protocol::DaemonInfo;

use crate::error::Error;

/// The `--home DIR` argument every subcommand takes (`crate::cli`,
/// `crate::flow_cli`).
#[derive(Debug, clap::Args)]
pub struct HomeArg {
    /// Home directory (default: $CHAPERONE_HOME, else ~/.config/chaperone).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
}

/// A 256-bit token, hex-encoded. `Debug` never prints it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    pub fn generate() -> Result<Self, Error> {
        let mut bytes = [0u8; 32];
        SystemRandom::new().fill(&mut bytes).map_err(|_| Error::Random)?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Constant-time comparison with a presented value.
    pub fn matches(&self, presented: &str) -> bool {
        let a = ring::digest::digest(&ring::digest::SHA256, self.0.as_bytes());
        let b = ring::digest::digest(&ring::digest::SHA256, presented.as_bytes());
        // Compare digests so the length of `presented` leaks nothing either.
        a.as_ref().iter().zip(b.as_ref()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(••••)")
    }
}

impl From<String> for Token {
    fn from(s: String) -> Self {
        Token(s)
    }
}

/// The three tokens; none is accepted where another is expected.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub extension: Token,
    pub mcp: Token,
    pub dashboard: Token,
}

impl Tokens {
    pub fn generate() -> Result<Self, Error> {
        Ok(Tokens { extension: Token::generate()?, mcp: Token::generate()?, dashboard: Token::generate()? })
    }
}

/// Paths inside one home directory.
#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// `--home`, else `CHAPERONE_HOME`, else `~/.config/chaperone`.
    pub fn resolve(explicit: Option<PathBuf>) -> Result<Self, Error> {
        if let Some(p) = explicit {
            return Ok(Home::at(p));
        }
        if let Some(p) = std::env::var_os("CHAPERONE_HOME").filter(|p| !p.is_empty()) {
            return Ok(Home::at(PathBuf::from(p)));
        }
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
            .ok_or_else(|| Error::Home("cannot find a home directory: set CHAPERONE_HOME or pass --home".into()))?;
        Ok(Home::at(base.join("chaperone")))
    }

    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root: PathBuf = root.into();
        let root =
            if root.is_relative() { std::env::current_dir().map(|d| d.join(&root)).unwrap_or(root) } else { root };
        Home { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn daemon_json(&self) -> PathBuf {
        self.root.join("daemon.json")
    }
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("daemon.lock")
    }
    pub fn config_toml(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    pub fn db(&self) -> PathBuf {
        self.root.join("chaperone.db")
    }
    /// The 32-byte key that encrypts stored secrets (0600, made by the
    /// first `chaperone secret set`).
    pub fn secret_key(&self) -> PathBuf {
        self.root.join("secret.key")
    }
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
    pub fn profile(&self, name: &str) -> PathBuf {
        self.root.join("profiles").join(name)
    }

    /// Creates the home (0700) if needed and checks it is usable.
    pub fn ensure(&self) -> Result<(), Error> {
        if !self.root.exists() {
            fs::create_dir_all(&self.root).map_err(|e| Error::io(&self.root, e))?;
            fs::set_permissions(&self.root, fs::Permissions::from_mode(0o700)).map_err(|e| Error::io(&self.root, e))?;
        }
        let meta = fs::metadata(&self.root).map_err(|e| Error::io(&self.root, e))?;
        if !meta.is_dir() {
            return Err(Error::Home(format!("{} is not a directory", self.root.display())));
        }
        // Probe that we can write here, so a read-only home fails now with
        // its path rather than later with a confusing error.
        let probe = self.root.join(".write-test");
        File::create(&probe).map_err(|e| Error::io(&self.root, e))?;
        let _ = fs::remove_file(&probe);
        Ok(())
    }

    /// Reads the three tokens, creating any that is missing (0600).
    pub fn tokens(&self) -> Result<Tokens, Error> {
        Ok(Tokens {
            extension: self.token("extension-token")?,
            mcp: self.token("mcp-token")?,
            dashboard: self.token("dashboard-token")?,
        })
    }

    fn token(&self, name: &str) -> Result<Token, Error> {
        let path = self.root.join(name);
        match fs::read_to_string(&path) {
            Ok(s) if s.trim().len() == 64 && s.trim().bytes().all(|b| b.is_ascii_hexdigit()) => {
                return Ok(Token(s.trim().to_string()));
            }
            Ok(_) => {
                return Err(Error::Home(format!(
                    "{} is not a 64-digit hex token; delete it to have a new one generated",
                    path.display()
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
        let token = Token::generate()?;
        write_private(&path, token.expose().as_bytes())?;
        Ok(token)
    }

    /// Who is running for this home, if anyone (a stale `daemon.json` whose
    /// process is gone counts as nobody).
    pub fn running_daemon(&self) -> Option<DaemonInfo> {
        let text = fs::read_to_string(self.daemon_json()).ok()?;
        let info: DaemonInfo = serde_json::from_str(&text).ok()?;
        process_alive(info.pid).then_some(info)
    }

    pub fn write_daemon_json(&self, info: &DaemonInfo) -> Result<(), Error> {
        let json = serde_json::to_vec_pretty(info)?;
        let tmp = self.root.join("daemon.json.tmp");
        write_private(&tmp, &json)?;
        fs::rename(&tmp, self.daemon_json()).map_err(|e| Error::io(self.daemon_json(), e))
    }

    /// Removes `daemon.json` if it still describes this process.
    pub fn remove_daemon_json(&self, pid: u32) {
        if let Ok(text) = fs::read_to_string(self.daemon_json())
            && serde_json::from_str::<DaemonInfo>(&text).is_ok_and(|i| i.pid == pid)
        {
            let _ = fs::remove_file(self.daemon_json());
        }
    }

    /// Takes the one-daemon-per-home lock. The lock file holds the pid of
    /// the owner; a lock whose owner is gone is taken over.
    pub fn lock(&self) -> Result<DaemonLock, Error> {
        let path = self.lock_file();
        for _ in 0..2 {
            match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
                Ok(mut f) => {
                    let pid = std::process::id();
                    f.write_all(pid.to_string().as_bytes()).map_err(|e| Error::io(&path, e))?;
                    return Ok(DaemonLock { path, pid });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let mut s = String::new();
                    let owner = File::open(&path)
                        .and_then(|mut f| f.read_to_string(&mut s))
                        .ok()
                        .and_then(|_| s.trim().parse::<u32>().ok());
                    match owner {
                        Some(pid) if pid != std::process::id() && process_alive(pid) => {
                            let port = self.running_daemon().map_or(0, |i| i.port);
                            return Err(Error::AlreadyRunning { home: self.root.clone(), pid, port });
                        }
                        _ => {
                            let _ = fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        Err(Error::Home(format!("could not take the lock {}", path.display())))
    }
}

/// Held while a daemon runs; removes the lock file when dropped.
#[derive(Debug)]
pub struct DaemonLock {
    path: PathBuf,
    pid: u32,
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        if fs::read_to_string(&self.path).is_ok_and(|s| s.trim() == self.pid.to_string()) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Writes a file readable only by its owner (0600), replacing it.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))
}

/// Whether a process with this pid exists (Linux: `/proc/<pid>`), and is
/// not a zombie.
pub fn process_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(") ").is_none_or(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_private_and_tokens_are_stable_hex_0600() {
        let dir = std::env::temp_dir().join(format!("chaperone-home-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let home = Home::at(dir.join("h"));
        home.ensure().unwrap();
        assert_eq!(fs::metadata(home.root()).unwrap().permissions().mode() & 0o777, 0o700);
        let t1 = home.tokens().unwrap();
        let t2 = home.tokens().unwrap();
        assert_eq!(t1.mcp, t2.mcp);
        assert_ne!(t1.mcp, t1.extension);
        assert_ne!(t1.extension, t1.dashboard);
        for name in ["extension-token", "mcp-token", "dashboard-token"] {
            let meta = fs::metadata(home.root().join(name)).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{name}");
        }
        assert!(!format!("{t1:?}").contains(t1.mcp.expose()));
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn token_comparison_accepts_only_the_exact_value() {
        let t = Token::generate().unwrap();
        assert!(t.matches(t.expose()));
        assert!(!t.matches(&t.expose()[..63]));
        assert!(!t.matches(""));
        assert!(!t.matches(&t.expose().to_uppercase()));
    }

    #[test]
    fn second_lock_on_a_home_is_refused_while_the_first_is_held() {
        let dir = std::env::temp_dir().join(format!("chaperone-lock-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let home = Home::at(&dir);
        home.ensure().unwrap();
        let lock = home.lock().unwrap();
        // Same pid would take it over; simulate another live owner: pid 1.
        fs::write(home.lock_file(), "1").unwrap();
        assert!(matches!(home.lock(), Err(Error::AlreadyRunning { .. })));
        drop(lock);
        let _ = fs::remove_dir_all(&dir);
    }
}
