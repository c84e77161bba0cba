//! The model tier's IO (README, "Letting a local model pick elements"):
//! the `[model]` section of `config.toml`, the HTTP client of a local
//! model server ([`client`]: Ollama's `/api/chat` or an OpenAI-compatible
//! `/v1/chat/completions`, loopback only), the call budgets and the goal
//! traces file. What is sent and what an answer may say are decided in
//! `shared::model`; the tools are `server::act_model`.

pub mod client;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Deserialize;
use shared::error::{ErrorCode, WireError};
use shared::model::trace::{TRACE_RETENTION_DAYS, TraceLine};
use shared::sessions::SessionKey;

static TRACES_OFF: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `chaperone serve --no-traces`: set once before the daemon starts.
pub fn set_traces_off(off: bool) {
    TRACES_OFF.store(off, std::sync::atomic::Ordering::Relaxed);
}

pub fn traces_off() -> bool {
    TRACES_OFF.load(std::sync::atomic::Ordering::Relaxed)
}

/// Default most model calls for one `browser_act` (one retry).
pub const DEFAULT_CALLS_PER_ACTION: u32 = 2;
/// Default most model calls of one MCP session.
pub const DEFAULT_CALLS_PER_SESSION: u32 = 20;
/// Default seconds one model call may take.
pub const DEFAULT_TIMEOUT_SECS: u32 = 30;

/// Which wire format the model server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// `POST /api/chat` with `format` = the schema.
    Ollama,
    /// `POST /v1/chat/completions` with `response_format: {type: "json_schema"}`.
    Openai,
}

/// `[model]` in `config.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    pub provider: Provider,
    /// Loopback only (`shared::model::loopback_url`).
    pub url: String,
    /// The model's name on that server (`qwen2.5:3b`).
    pub name: String,
    pub max_calls_per_action: Option<u32>,
    pub max_calls_per_session: Option<u32>,
    pub timeout_secs: Option<u32>,
    /// Write `HOME/knowledge/traces.jsonl` for goals (default on;
    /// `chaperone serve --no-traces` turns it off too).
    pub traces: Option<bool>,
}

impl ModelSection {
    /// Checks the section; the message names what is wrong (the caller
    /// adds the line).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        shared::model::loopback_url(&self.url).map_err(|m| ("url", format!("model.url: {m}")))?;
        if self.name.trim().is_empty() || self.name.len() > 200 {
            return Err(("name", "model.name must name the model (e.g. \"qwen2.5:3b\")".into()));
        }
        for (key, v, max) in [
            ("max_calls_per_action", self.max_calls_per_action, 10),
            ("max_calls_per_session", self.max_calls_per_session, 100_000),
            ("timeout_secs", self.timeout_secs, 600),
        ] {
            if let Some(v) = v
                && !(1..=max).contains(&v)
            {
                return Err((key, format!("model.{key} must be between 1 and {max}, not {v}")));
            }
        }
        Ok(())
    }
}

/// The model tier as the daemon runs it: settings, client, the calls each
/// session made, and where traces go.
pub struct ModelTier {
    pub section: ModelSection,
    client: client::ModelClient,
    calls: Mutex<HashMap<SessionKey, u32>>,
    traces: Option<PathBuf>,
    trace_lock: Mutex<()>,
}

impl std::fmt::Debug for ModelTier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTier").field("section", &self.section).field("traces", &self.traces).finish()
    }
}

impl ModelTier {
    /// `traces`: the traces file, or `None` when they are off.
    pub fn new(section: ModelSection, traces: Option<PathBuf>) -> Result<Self, String> {
        section.validate().map_err(|(_, m)| m)?;
        let client = client::ModelClient::new(&section)?;
        let traces = if section.traces == Some(false) { None } else { traces };
        Ok(ModelTier { section, client, calls: Mutex::default(), traces, trace_lock: Mutex::new(()) })
    }

    pub fn calls_per_action(&self) -> u32 {
        self.section.max_calls_per_action.unwrap_or(DEFAULT_CALLS_PER_ACTION)
    }

    pub fn calls_per_session(&self) -> u32 {
        self.section.max_calls_per_session.unwrap_or(DEFAULT_CALLS_PER_SESSION)
    }

    /// Counts one call for `session`, or `BUDGET_EXCEEDED` when its budget
    /// is spent (nothing is sent then).
    pub fn spend(&self, session: SessionKey) -> Result<(), WireError> {
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        let used = calls.entry(session).or_default();
        if *used >= self.calls_per_session() {
            return Err(WireError::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "this session used its {} model calls (model.max_calls_per_session); act by ref instead",
                    self.calls_per_session()
                ),
            ));
        }
        *used += 1;
        Ok(())
    }

    /// Sends `request` to the model server.
    pub async fn ask(&self, request: &shared::model::prompt::ModelRequest) -> Result<client::Reply, WireError> {
        self.client.ask(request).await
    }

    /// Appends one trace line (0600), dropping lines older than the
    /// retention first. Failures are logged, never the agent's problem.
    pub fn trace(&self, line: &TraceLine) {
        let Some(path) = &self.traces else { return };
        let _guard = self.trace_lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = append_trace(path, line) {
            tracing::warn!(error = %e, "cannot write the goal trace");
        }
    }
}

fn append_trace(path: &std::path::Path, line: &TraceLine) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let oldest = line.at.saturating_sub(TRACE_RETENTION_DAYS * 86_400);
    if let Ok(text) = std::fs::read_to_string(path) {
        let kept: Vec<&str> =
            text.lines().filter(|l| serde_json::from_str::<TraceLine>(l).is_ok_and(|t| t.at >= oldest)).collect();
        if kept.len() != text.lines().count() {
            let mut body = kept.join("\n");
            if !body.is_empty() {
                body.push('\n');
            }
            std::fs::write(path, body)?;
        }
    }
    let mut f = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    let mut json = serde_json::to_string(line).map_err(std::io::Error::other)?;
    json.push('\n');
    f.write_all(json.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(url: &str) -> ModelSection {
        ModelSection {
            provider: Provider::Ollama,
            url: url.into(),
            name: "m".into(),
            max_calls_per_action: None,
            max_calls_per_session: Some(2),
            timeout_secs: None,
            traces: None,
        }
    }

    #[test]
    fn budgets_end_in_budget_exceeded_per_session() {
        let tier = ModelTier::new(section("http://127.0.0.1:9"), None).unwrap();
        let (a, b) = (SessionKey(1), SessionKey(2));
        assert!(tier.spend(a).is_ok() && tier.spend(a).is_ok());
        assert_eq!(tier.spend(a).unwrap_err().code, ErrorCode::BudgetExceeded);
        assert!(tier.spend(b).is_ok());
    }

    #[test]
    fn off_loopback_urls_are_refused() {
        let e = ModelTier::new(section("http://192.168.1.9:11434"), None).unwrap_err();
        assert!(e.contains("model.url") && e.contains("loopback"), "{e}");
    }

    #[test]
    fn traces_are_private_and_old_lines_go() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knowledge").join("traces.jsonl");
        let tier = ModelTier::new(section("http://127.0.0.1:9"), Some(path.clone())).unwrap();
        let line = |at| TraceLine {
            at,
            op: "click".into(),
            role: Some("button".into()),
            label: Some("Save".into()),
            input: None,
            outcome: "ok".into(),
        };
        tier.trace(&line(1));
        tier.trace(&line(TRACE_RETENTION_DAYS * 86_400 + 10));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
