//! The bridge's error type. Details go to logs; clients get a stable code
//! and a short message (see `shared::error`).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("refusing to listen on {0}: the bridge binds loopback addresses only (127.0.0.1, ::1)")]
    NotLoopback(std::net::SocketAddr),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Settings that cannot be used (a profile folder that is a file, a
    /// browser that is not there…); see the precise variants below.
    #[error("{0}")]
    Config(String),
    /// `config.toml` that cannot be used: fix the file (the message names
    /// the line).
    #[error("{}: {message}", path.display())]
    ConfigFile { path: PathBuf, message: String },
    /// A command-line value that cannot be used (`--since`, `--url`…):
    /// run the command again with another.
    #[error("{0}")]
    Usage(String),
    /// The home directory cannot be found or used (not a directory, a
    /// damaged token, its lock).
    #[error("{0}")]
    Home(String),
    /// The port asked for is taken: pick another (`--port`, 0 picks a free
    /// one).
    #[error("port {port} is already in use on {ip}; pick another with --port (0 picks a free one)")]
    PortInUse { ip: std::net::IpAddr, port: u16 },
    /// Listening failed for another reason.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The daemon did not start (it exited, or did not write
    /// `daemon.json` in time); the message has its last output.
    #[error("{0}")]
    DaemonStart(String),
    /// A daemon is recorded for this home but does not answer: it may
    /// have died (`chaperone status`, `up`).
    #[error("the daemon (pid {pid}) does not answer on port {port}")]
    DaemonUnreachable { pid: u32, port: u16 },
    /// The browser `up` started exited, or its extension never connected.
    #[error("{0}")]
    BrowserStart(String),
    /// The system's random generator failed: no token, key or nonce was
    /// made, nothing was written.
    #[error("the system random generator failed")]
    Random,
    /// Encoding a value as JSON failed (a bug, never the person's input).
    #[error("JSON encoding: {0}")]
    Json(#[from] serde_json::Error),
    #[error("a daemon for {home} is already running (pid {pid}, port {port})")]
    AlreadyRunning { home: PathBuf, pid: u32, port: u16 },
    /// Anything else the daemon could not do (details in the message).
    #[error("server error: {0}")]
    Server(String),
    /// The audit log (`HOME/chaperone.db`) could not be opened, read or
    /// written; the message says which and why.
    #[error("audit log: {0}")]
    Audit(String),
    /// A secret name outside `[A-Za-z0-9_.-]{1,64}`.
    #[error("invalid secret name {0:?}: {rule}", rule = shared::names::SECRET_NAME_RULE)]
    SecretName(String),
    /// A secret value that cannot be stored (empty, too long, not UTF-8).
    /// Never carries the value itself.
    #[error("{0}")]
    SecretValue(String),
    #[error("no secret named {0:?}")]
    SecretNotFound(String),
    /// A `--site` binding that is not a valid origin pattern (or too many).
    #[error("{0}")]
    SecretSite(String),
    /// `secret.key` is missing where it is needed, unreadable or the wrong
    /// size.
    #[error("{0}")]
    SecretKey(String),
    /// A stored secret failed authentication: its ciphertext, its name or
    /// `secret.key` was changed. Nothing is returned in its place.
    #[error(
        "secret {0:?} cannot be decrypted: its stored ciphertext, its name or secret.key was changed; \
         set it again with `chaperone secret set {0}`"
    )]
    SecretUndecryptable(String),
    /// The secrets table could not be read or written.
    #[error("secret store {path}: {message}")]
    SecretStore { path: PathBuf, message: String },
    /// A profile name outside the rule (`profiles::NAME_RULE`, given as `rule`).
    #[error("invalid profile name {name:?}: {rule}")]
    ProfileName { name: String, rule: &'static str },
    #[error("no profile named {0:?}")]
    ProfileNotFound(String),
    /// `profile rm` / `profile open` on a profile a browser holds.
    #[error("profile {name:?} is in use by {holder} (Chromium's SingletonLock); close that browser first")]
    /// `holder`: the process holding the lock, as `profiles::LockHolder` shows it.
    ProfileInUse { name: String, holder: String },
    /// `up` on a profile a browser holds: nothing was started.
    #[error(
        "PROFILE_LOCKED: profile {name:?} is in use by {holder} (Chromium's SingletonLock); close that browser \
         or use another profile (--profile NAME)"
    )]
    ProfileLocked { name: String, holder: String },
    /// A flow file or recording that breaks `shared::record::check_flow`
    /// (or cannot be read as a flow); the message names the step.
    #[error("invalid flow: {0}")]
    FlowInvalid(String),
    #[error("a flow named {0:?} already exists (use --name to import under another name, or `chaperone flow rm {0}`)")]
    FlowExists(String),
    #[error("no flow named {0:?}")]
    FlowNotFound(String),
    /// The flows table could not be read or written.
    #[error("flow store {path}: {message}")]
    FlowStore { path: PathBuf, message: String },
    /// `chaperone api …`: a HAR or spec that cannot be used, a folder it
    /// may not write, a credential it refused to write (never the value).
    #[error("{0}")]
    Api(String),
    /// The popup's site rules could not be read or written.
    #[error("site rules {path}: {message}")]
    SiteRules { path: PathBuf, message: String },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variants a caller can act on say what to do, without the
    /// "server error" of the catch-all.
    #[test]
    fn precise_variants_say_what_to_do() {
        let cases: Vec<(Error, &str)> = vec![
            (Error::PortInUse { ip: [127, 0, 0, 1].into(), port: 8765 }, "pick another with --port"),
            (Error::DaemonUnreachable { pid: 42, port: 8765 }, "(pid 42) does not answer on port 8765"),
            (
                Error::ConfigFile { path: "/h/config.toml".into(), message: "line 3: bad".into() },
                "/h/config.toml: line 3",
            ),
            (Error::Random, "random generator failed"),
            (Error::Audit("write: disk I/O error".into()), "audit log: write"),
            (Error::BrowserStart("cannot start the browser /x: not found".into()), "cannot start the browser"),
        ];
        for (e, want) in cases {
            let text = e.to_string();
            assert!(text.contains(want), "{text}");
            assert!(!text.starts_with("server error"), "{text}");
        }
    }
}
