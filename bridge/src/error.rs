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
    #[error("{0}")]
    Config(String),
    #[error("a daemon for {home} is already running (pid {pid}, port {port})")]
    AlreadyRunning { home: PathBuf, pid: u32, port: u16 },
    #[error("server error: {0}")]
    Server(String),
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
