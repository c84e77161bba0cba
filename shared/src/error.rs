//! Stable error codes returned to agents (docs/design.md, "The agent's
//! tools").

use serde::{Deserialize, Serialize};

use crate::audit::DeniedBy;

/// A stable, machine-readable error code. The string form never changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    InvalidRequest,
    NotFound,
    StaleRef,
    Timeout,
    PermissionDenied,
    ApprovalDenied,
    Stopped,
    HumanRequired,
    SecurityChallenge,
    BudgetExceeded,
    ExtensionDisconnected,
    EffectUnknown,
    /// A download in an agent tab was cancelled: downloads are off
    /// (`[downloads] enabled` in `config.toml`).
    DownloadBlocked,
    /// The browser shows its own error page instead of the page (DNS,
    /// refused, TLS, offline, timeout…; `shared::navigation`), or the page
    /// kept going away before it could answer (it reloads or navigates
    /// itself faster than the content script can be put in).
    PageNotLoaded,
    /// The local model server (`[model]` in `config.toml`) did not answer
    /// in time or is down; nothing ran (`shared::model`).
    ModelUnavailable,
    /// `api_learn` / `api_client` refused to write what it made because a
    /// credential would have been in it (the file is named, the value
    /// never is); nothing was written.
    GenerationFailed,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::StaleRef => "STALE_REF",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ErrorCode::ApprovalDenied => "APPROVAL_DENIED",
            ErrorCode::Stopped => "STOPPED",
            ErrorCode::HumanRequired => "HUMAN_REQUIRED",
            ErrorCode::SecurityChallenge => "SECURITY_CHALLENGE",
            ErrorCode::BudgetExceeded => "BUDGET_EXCEEDED",
            ErrorCode::ExtensionDisconnected => "EXTENSION_DISCONNECTED",
            ErrorCode::EffectUnknown => "EFFECT_UNKNOWN",
            ErrorCode::DownloadBlocked => "DOWNLOAD_BLOCKED",
            ErrorCode::PageNotLoaded => "PAGE_NOT_LOADED",
            ErrorCode::ModelUnavailable => "MODEL_UNAVAILABLE",
            ErrorCode::GenerationFailed => "GENERATION_FAILED",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error as it crosses a boundary: a code and a short human message.
/// Messages never carry stack traces, secrets or page HTML.
///
/// On the wire `{"code": …, "message": …}`, plus `"denied_by"` and
/// `"challenge"` only when set (unknown fields refused). Agents see the
/// code, the message and the challenge, never who denied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireError {
    pub code: ErrorCode,
    pub message: String,
    /// Who said no, when the extension's gate refused an `Act` because of
    /// a person's answer, its absence or their STOP/Pause
    /// (`APPROVAL_DENIED`, `STOPPED`); the bridge writes it as the audit
    /// decision row. `None` for every other error (a policy refusal
    /// included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denied_by: Option<DeniedBy>,
    /// The challenge behind a `SECURITY_CHALLENGE` (kind and evidence),
    /// which the agent sees beside the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<crate::challenge::Challenge>,
}

impl WireError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut message: String = message.into();
        crate::limits::truncate_chars(&mut message, crate::limits::MAX_ERROR_MESSAGE_CHARS);
        Self { code, message, denied_by: None, challenge: None }
    }

    /// `INTERNAL`: a bug or a broken environment on our side, never the
    /// caller's input; `message` says what failed, not how (details go to
    /// the log).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// The same error, naming the challenge that caused it.
    pub fn with_challenge(mut self, challenge: crate::challenge::Challenge) -> Self {
        self.challenge = Some(challenge);
        self
    }

    /// The same error, saying who denied the action.
    pub fn with_denied_by(mut self, by: DeniedBy) -> Self {
        self.denied_by = Some(by);
        self
    }
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_their_stable_strings() {
        for code in [ErrorCode::InvalidRequest, ErrorCode::ExtensionDisconnected, ErrorCode::StaleRef] {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }

    #[test]
    fn who_denied_travels_only_when_set() {
        let plain = WireError::new(ErrorCode::StaleRef, "gone");
        assert_eq!(serde_json::to_string(&plain).unwrap(), r#"{"code":"STALE_REF","message":"gone"}"#);
        let parsed: WireError = serde_json::from_str(r#"{"code":"STALE_REF","message":"gone"}"#).unwrap();
        assert_eq!(parsed, plain);
        for (by, name) in [(DeniedBy::Human, "human"), (DeniedBy::Timeout, "timeout"), (DeniedBy::Stop, "stop")] {
            let e = WireError::new(ErrorCode::ApprovalDenied, "no").with_denied_by(by);
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(json, format!(r#"{{"code":"APPROVAL_DENIED","message":"no","denied_by":"{name}"}}"#));
            assert_eq!(serde_json::from_str::<WireError>(&json).unwrap(), e);
            assert_eq!(crate::audit::DecidedBy::from(by).as_str(), name);
        }
        // Still no unknown fields, and only the three who can deny.
        for bad in [
            r#"{"code":"STOPPED","message":"x","by":"stop"}"#,
            r#"{"code":"STOPPED","message":"x","denied_by":"yolo"}"#,
            r#"{"code":"STOPPED","message":"x","denied_by":"policy"}"#,
        ] {
            assert!(serde_json::from_str::<WireError>(bad).is_err(), "{bad}");
        }
    }
}
