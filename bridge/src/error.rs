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
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
