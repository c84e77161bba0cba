//! What the daemon runs with: `ServeConfig` for `server::run`, and the
//! user's `home/config.toml`.

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use shared::policy::{Policy, RiskDecisions, SiteRule};

use crate::audit::AuditStore;
use crate::error::Error;
use crate::flows::FlowStore;
use crate::home::Tokens;
use crate::secrets::SecretStore;

/// Everything `server::run` needs. Built by `chaperone serve` from the home
/// directory; tests build it directly.
#[derive(Clone)]
pub struct ServeConfig {
    pub tokens: Tokens,
    /// Allowed `Origin`s on `/ext`, e.g. `chrome-extension://<id>`.
    pub extension_origins: Vec<String>,
    /// Risk decisions and site rules from `config.toml`.
    pub policy: Policy,
    /// Where actions and decisions are recorded (`None` in some tests).
    pub audit: Option<AuditStore>,
    /// Where `{"secret": NAME}` values are read, at execution time only
    /// (`None`: every secret is unknown).
    pub secrets: Option<Arc<SecretStore>>,
    /// How long a hand-off waits for the person (`human_timeout_secs`).
    pub human_timeout_secs: u32,
    /// `[uploads]` and `[downloads]` (docs/design.md, "Secrets, sensitive fields and files").
    pub files: FilesPolicy,
    /// The person's flows (`flow_*` tools, recordings; `None`: no flows).
    pub flows: Option<crate::flows::FlowStore>,
    /// `browser_network_export` writes here (`HOME/exports`; `None`: no
    /// exports).
    pub exports_dir: Option<std::path::PathBuf>,
    /// `serve --allow-reveal`: `browser_network_request` may show captured
    /// values unredacted (each reveal audited).
    pub allow_reveal: bool,
    /// `[model]`: the local model of `browser_act`/`browser_run_goal`
    /// (`None`: those tools say how to set one up).
    pub model: Option<Arc<crate::model::ModelTier>>,
    /// The person's popup choices of site access (`None`: kept in memory
    /// only, for tests).
    pub site_rules: Option<crate::site_rules::SiteRuleStore>,
}

/// What the person allowed for files: upload folders (absolute; resolved
/// again at every upload) and whether downloads in agent tabs are kept, and
/// where. Off by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesPolicy {
    pub allowed_dirs: Vec<std::path::PathBuf>,
    /// `[uploads] allow_hard_links`: upload files with more than one name.
    pub allow_hard_links: bool,
    pub downloads_enabled: bool,
    /// `None` only in servers without a home (tests): downloads then stay off.
    pub downloads_dir: Option<std::path::PathBuf>,
    /// The largest download kept, in bytes (`[downloads] max_mb`; 0: the
    /// default, `shared::files::MAX_DOWNLOAD_BYTES`).
    pub downloads_max_bytes: u64,
}

impl FilesPolicy {
    /// The largest download kept, in bytes.
    pub fn max_download_bytes(&self) -> u64 {
        match self.downloads_max_bytes {
            0 => shared::files::MAX_DOWNLOAD_BYTES,
            n => n.min(shared::files::MAX_DOWNLOAD_BYTES),
        }
    }
}

impl ServeConfig {
    /// Pinned to our extension id, default policy, no audit store.
    pub fn new(tokens: Tokens) -> Self {
        Self {
            tokens,
            extension_origins: default_extension_origins(),
            policy: Policy::default(),
            audit: None,
            secrets: None,
            human_timeout_secs: shared::limits::DEFAULT_HUMAN_TIMEOUT_SECS,
            files: FilesPolicy::default(),
            flows: None,
            exports_dir: None,
            allow_reveal: false,
            model: None,
            site_rules: None,
        }
    }
}

impl std::fmt::Debug for ServeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeConfig")
            .field("tokens", &self.tokens)
            .field("extension_origins", &self.extension_origins)
            .field("policy", &self.policy)
            .field("audit", &self.audit.as_ref().map(AuditStore::path))
            .field("flows", &self.flows.as_ref().map(FlowStore::path))
            .finish()
    }
}

pub fn extension_origin(id: &str) -> String {
    format!("chrome-extension://{id}")
}

/// The origins whose `/ext` sockets the bridge accepts by default: our
/// extension in Chromium, and in the Firefox profiles Chaperone owns
/// (whose `moz-extension://` host `chaperone up` fixes, see
/// `crate::firefox`).
pub fn default_extension_origins() -> Vec<String> {
    vec![shared::chromium_extension_origin(), shared::firefox_extension_origin()]
}

/// `home/config.toml`. Every key is optional; unknown keys are errors, so a
/// typo never silently leaves a looser default in place.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(default)]
    pub server: ServerSection,
    /// `[risk] low/medium/high = "allow" | "confirm" | "deny"`.
    #[serde(default)]
    pub risk: RiskDecisions,
    /// `[[sites]] origin = "https://*.example.com"`, `access = "read"`,
    /// `"deny"` (or `"act"`, the default) or per-risk overrides.
    #[serde(default)]
    pub sites: Vec<SiteRule>,
    /// Seconds the person has to answer an approval (default 120, max 600).
    pub approval_timeout_secs: Option<u32>,
    /// Days audit rows are kept (default 30).
    pub retention_days: Option<u32>,
    /// Seconds a hand-off waits for the person before the agent gets
    /// `HUMAN_REQUIRED` (default 600, at most 3600).
    pub human_timeout_secs: Option<u32>,
    #[serde(default)]
    pub uploads: UploadsSection,
    #[serde(default)]
    pub downloads: DownloadsSection,
    /// `[model]`: a local model server for `browser_act` (loopback only).
    #[serde(default)]
    pub model: Option<crate::model::ModelSection>,
}

/// `[uploads]`: `allowed_dirs = ["/home/me/to-upload"]` (absolute; empty:
/// uploads off).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadsSection {
    #[serde(default)]
    pub allowed_dirs: Vec<String>,
    /// Upload files that have other names (hard links) too; off: such a
    /// file may be a link to one outside the folder.
    #[serde(default)]
    pub allow_hard_links: bool,
}

/// `[downloads]`: `enabled = true` keeps downloads of agent tabs (asking
/// per policy), in `dir` (absolute; default `HOME/downloads/default/`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownloadsSection {
    #[serde(default)]
    pub enabled: bool,
    pub dir: Option<String>,
    /// The largest download kept, in MB (at most 1024; a download is
    /// cancelled while it runs once it passes this).
    pub max_mb: Option<u64>,
}

/// Default days audit rows are kept (`[audit] retention_days`; log files
/// have their own, `crate::logging::DEFAULT_LOG_RETENTION_DAYS`).
pub const DEFAULT_RETENTION_DAYS: u32 = 30;

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
        Self::parse(&text).map_err(|message| Error::ConfigFile { path: path.to_path_buf(), message })
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let config = toml::from_str::<FileConfig>(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            let msg = e.message().to_string();
            match line {
                Some(l) => format!("line {l}: {msg}"),
                None => msg,
            }
        })?;
        // Semantic checks: name the line of the offending site rule.
        config.policy().map_err(|msg| {
            let line = config
                .sites
                .iter()
                .find(|s| msg.contains(&format!("{:?}", s.origin)))
                .and_then(|s| text.lines().position(|l| l.contains(&s.origin)))
                .or_else(|| {
                    msg.starts_with("approval_timeout_secs")
                        .then(|| text.lines().position(|l| l.trim_start().starts_with("approval_timeout_secs")))
                        .flatten()
                });
            match line {
                Some(l) => format!("line {}: {msg}", l + 1),
                None => msg,
            }
        })?;
        if let Some(t) = config.human_timeout_secs
            && !(shared::limits::MIN_HUMAN_TIMEOUT_SECS..=shared::limits::MAX_HUMAN_TIMEOUT_SECS).contains(&t)
        {
            let line = text.lines().position(|l| l.trim_start().starts_with("human_timeout_secs")).map_or(0, |l| l + 1);
            return Err(format!(
                "line {line}: human_timeout_secs must be between {} and {}, not {t}",
                shared::limits::MIN_HUMAN_TIMEOUT_SECS,
                shared::limits::MAX_HUMAN_TIMEOUT_SECS
            ));
        }
        let line_of = |key: &str| text.lines().position(|l| l.trim_start().starts_with(key)).map_or(0, |l| l + 1);
        for dir in &config.uploads.allowed_dirs {
            if !dir.starts_with('/') || dir.contains('\0') {
                return Err(format!(
                    "line {}: uploads.allowed_dirs entries must be absolute paths, not {dir:?}",
                    line_of("allowed_dirs")
                ));
            }
        }
        if let Some(dir) = &config.downloads.dir
            && (!dir.starts_with('/') || dir.contains('\0'))
        {
            return Err(format!("line {}: downloads.dir must be an absolute path, not {dir:?}", line_of("dir")));
        }
        if let Some(model) = &config.model
            && let Err((key, msg)) = model.validate()
        {
            let in_section = text.find("[model]").map_or(0, |at| text[..at].matches('\n').count());
            let line = text
                .lines()
                .enumerate()
                .skip(in_section)
                .find(|(_, l)| l.trim_start().starts_with(key))
                .map_or(in_section + 1, |(i, _)| i + 1);
            return Err(format!("line {line}: {msg}"));
        }
        if config.retention_days == Some(0) {
            return Err("retention_days must be at least 1".into());
        }
        Ok(config)
    }

    /// The validated policy.
    pub fn policy(&self) -> Result<Policy, String> {
        let policy = Policy {
            risk: self.risk,
            sites: self.sites.clone(),
            approval_timeout_secs: self.approval_timeout_secs.unwrap_or(shared::limits::DEFAULT_APPROVAL_TIMEOUT_SECS),
        };
        policy.validate()?;
        Ok(policy)
    }

    /// The files policy, with `home_downloads` (`HOME/downloads/default`)
    /// as the download folder unless `[downloads] dir` says otherwise.
    pub fn files(&self, home_downloads: std::path::PathBuf) -> FilesPolicy {
        FilesPolicy {
            allowed_dirs: self.uploads.allowed_dirs.iter().map(std::path::PathBuf::from).collect(),
            allow_hard_links: self.uploads.allow_hard_links,
            downloads_enabled: self.downloads.enabled,
            downloads_dir: Some(self.downloads.dir.as_ref().map_or(home_downloads, std::path::PathBuf::from)),
            downloads_max_bytes: self.downloads.max_mb.map_or(0, |mb| mb.saturating_mul(1_000_000).max(1)),
        }
    }

    pub fn human_timeout_secs(&self) -> u32 {
        self.human_timeout_secs.unwrap_or(shared::limits::DEFAULT_HUMAN_TIMEOUT_SECS)
    }

    pub fn retention_days(&self) -> u32 {
        self.retention_days.unwrap_or(DEFAULT_RETENTION_DAYS)
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
            None => Ok(default_extension_origins()),
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
    fn deeply_nested_toml_is_an_error_not_a_stack_overflow() {
        for text in [
            format!("bind = {}", "[".repeat(100_000)),
            format!("bind = {}0{}", "[".repeat(100_000), "]".repeat(100_000)),
            format!("bind = {}", "{a = ".repeat(100_000)),
            "[a.".repeat(30_000),
        ] {
            assert!(FileConfig::parse(&text).is_err());
        }
    }

    #[test]
    fn default_binds_loopback() {
        let c = FileConfig::parse("").unwrap();
        assert!(c.bind_ip().unwrap().is_loopback());
        assert_eq!(c.extension_origins().unwrap(), default_extension_origins());
    }

    #[test]
    fn files_are_off_by_default_and_paths_must_be_absolute() {
        let home = std::path::PathBuf::from("/h/downloads/default");
        let off = FileConfig::parse("").unwrap().files(home.clone());
        assert!(off.allowed_dirs.is_empty() && !off.downloads_enabled);
        assert_eq!(off.downloads_dir.as_deref(), Some(home.as_path()));
        let on = FileConfig::parse(
            "[uploads]\nallowed_dirs = [\"/srv/up\", \"/tmp/x\"]\n[downloads]\nenabled = true\ndir = \"/srv/dl\"\n",
        )
        .unwrap()
        .files(home);
        assert_eq!(on.allowed_dirs.len(), 2);
        assert!(on.downloads_enabled);
        assert_eq!(on.downloads_dir.as_deref(), Some(std::path::Path::new("/srv/dl")));
        for (bad, want) in [
            ("[uploads]\nallowed_dirs = [\"docs\"]\n", "line 2: uploads.allowed_dirs"),
            ("\n[downloads]\ndir = \"~/dl\"\n", "line 3: downloads.dir"),
            ("[uploads]\nallowed = []\n", "line 2"),
            ("[downloads]\nopen_when_done = true\n", "line 2"),
        ] {
            let e = FileConfig::parse(bad).unwrap_err();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_human_timeout_is_bounded_and_named_by_line() {
        assert_eq!(FileConfig::parse("").unwrap().human_timeout_secs(), 600);
        assert_eq!(FileConfig::parse("human_timeout_secs = 3600\n").unwrap().human_timeout_secs(), 3600);
        assert_eq!(FileConfig::parse("human_timeout_secs = 1\n").unwrap().human_timeout_secs(), 1);
        for bad in ["human_timeout_secs = 0\n", "\nhuman_timeout_secs = 3601\n"] {
            let e = FileConfig::parse(bad).unwrap_err();
            assert!(e.contains("human_timeout_secs must be between 1 and 3600"), "{e}");
            assert!(e.starts_with(&format!("line {}:", bad.lines().position(|l| !l.is_empty()).unwrap() + 1)), "{e}");
        }
        assert!(FileConfig::parse("human_timeout_secs = -1\n").is_err());
        assert!(FileConfig::parse("human_timeout_secs = \"10\"\n").is_err());
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
    fn policy_comes_from_the_config_and_never_falls_back_to_looser() {
        let c = FileConfig::parse(
            "approval_timeout_secs = 300\n[risk]\nmedium = \"confirm\"\n[[sites]]\norigin = \"https://*.bank.example\"\naccess = \"deny\"\n",
        )
        .unwrap();
        let p = c.policy().unwrap();
        assert_eq!(p.approval_timeout_secs, 300);
        assert_eq!(p.risk.medium, shared::policy::Decision::Confirm);
        assert!(shared::policy::denying_rule(&p, "https://www.bank.example/login").is_some());
        for bad in [
            "approval_timeout_secs = 601\n",
            "[risk]\nhigh = \"maybe\"\n",
            "[[sites]]\norigin = \"https://a.example\"\n",
            "[[sites]]\norigin = \"not a pattern\"\naccess = \"deny\"\n",
            "retention_days = 0\n",
        ] {
            assert!(FileConfig::parse(bad).is_err(), "{bad}");
        }
        let err = FileConfig::parse("[server]\nport = 0\n\n[[sites]]\norigin = \"https://a.example\"\n").unwrap_err();
        assert!(err.starts_with("line 5:"), "{err}");
    }

    #[test]
    fn a_model_server_off_loopback_is_refused_naming_the_line() {
        let ok = "[model]\nprovider = \"ollama\"\nurl = \"http://127.0.0.1:11434\"\nname = \"qwen2.5:3b\"\n";
        assert!(FileConfig::parse(ok).unwrap().model.is_some());
        assert!(FileConfig::parse("").unwrap().model.is_none());
        let bad =
            "retention_days = 3\n\n[model]\nprovider = \"openai\"\nname = \"m\"\nurl = \"http://192.168.1.20:8080\"\n";
        let e = FileConfig::parse(bad).unwrap_err();
        assert!(e.starts_with("line 6: model.url") && e.contains("loopback"), "{e}");
        let e = FileConfig::parse(&ok.replace("ollama", "cloud")).unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = FileConfig::parse(&format!("{ok}timeout_secs = 0\n")).unwrap_err();
        assert!(e.starts_with("line 5: model.timeout_secs"), "{e}");
    }

    #[test]
    fn malformed_config_names_the_line() {
        let err = FileConfig::parse("[server]\nport = 1\nbnd = \"x\"\n").unwrap_err();
        assert!(err.starts_with("line 3:"), "{err}");
        let err = FileConfig::parse("[server]\nport = \"x\"\n").unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
    }
}
