//! What the daemon runs with: `ServeConfig` for `server::run`, and the
//! user's `home/config.toml`.

use std::net::IpAddr;
use std::path::Path;

use serde::Deserialize;

use crate::error::Error;
use crate::home::Tokens;

/// Everything `server::run` needs. Built by `chaperone serve` from the home
/// directory; tests build it directly.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub tokens: Tokens,
    /// Allowed `Origin`s on `/ext`, e.g. `chrome-extension://<id>`.
    pub extension_origins: Vec<String>,
}

impl ServeConfig {
    /// Pinned to our extension id.
    pub fn new(tokens: Tokens) -> Self {
        Self { tokens, extension_origins: vec![extension_origin(shared::EXTENSION_ID)] }
    }
}

pub fn extension_origin(id: &str) -> String {
    format!("chrome-extension://{id}")
}

/// `home/config.toml`. Every key is optional; unknown keys are errors, so a
/// typo never silently leaves a looser default in place.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub server: ServerSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Address to listen on; only loopback addresses are accepted.
    pub bind: Option<String>,
    /// Port; 0 picks a free one. `--port` wins.
    pub port: Option<u16>,
    /// Extension ids allowed on `/ext` (default: Chaperone's own id).
    pub extension_ids: Option<Vec<String>>,
}

impl FileConfig {
    /// Reads `path`; a missing file is the default configuration. A
    /// malformed file is an error that names the file and the line.
    pub fn load(path: &Path) -> Result<Self, Error> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::io(path, e)),
        };
        Self::parse(&text).map_err(|msg| Error::Config(format!("{}: {msg}", path.display())))
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str::<FileConfig>(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().to_string();
            match line {
                Some(l) => format!("line {l}: {msg}"),
                None => msg,
            }
        })
    }

    /// The address to bind: loopback only.
    pub fn bind_ip(&self) -> Result<IpAddr, Error> {
        let Some(raw) = self.server.bind.as_deref() else {
            return Ok(IpAddr::from([127, 0, 0, 1]));
        };
        let ip = match raw {
            "localhost" => IpAddr::from([127, 0, 0, 1]),
            other => other
                .parse::<IpAddr>()
                .map_err(|_| Error::Config(format!("server.bind = {other:?} is not an IP address")))?,
        };
        if !ip.is_loopback() {
            return Err(Error::NotLoopback(std::net::SocketAddr::new(ip, self.server.port.unwrap_or(0))));
        }
        Ok(ip)
    }

    pub fn extension_origins(&self) -> Result<Vec<String>, Error> {
        match &self.server.extension_ids {
            None => Ok(vec![extension_origin(shared::EXTENSION_ID)]),
            Some(ids) => ids
                .iter()
                .map(|id| {
                    if id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b)) {
                        Ok(extension_origin(id))
                    } else {
                        Err(Error::Config(format!("server.extension_ids: {id:?} is not a Chrome extension id")))
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_binds_loopback() {
        let c = FileConfig::parse("").unwrap();
        assert!(c.bind_ip().unwrap().is_loopback());
        assert_eq!(c.extension_origins().unwrap(), vec![extension_origin(shared::EXTENSION_ID)]);
    }

    #[test]
    fn non_loopback_bind_is_refused() {
        for addr in ["0.0.0.0", "::", "192.168.1.2", "10.0.0.1"] {
            let c = FileConfig::parse(&format!("[server]\nbind = \"{addr}\"\n")).unwrap();
            assert!(matches!(c.bind_ip(), Err(Error::NotLoopback(_))), "{addr}");
        }
        let c = FileConfig::parse("[server]\nbind = \"::1\"\n").unwrap();
        assert!(c.bind_ip().unwrap().is_loopback());
    }

    #[test]
    fn malformed_config_names_the_line() {
        let err = FileConfig::parse("[server]\nport = 1\nbnd = \"x\"\n").unwrap_err();
        assert!(err.starts_with("line 3:"), "{err}");
        let err = FileConfig::parse("[server]\nport = \"x\"\n").unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
    }
}
