//! Stable error codes returned to agents (docs/design.md, "The agent's
//! tools").

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireError {
    pub code: ErrorCode,
    pub message: String,
}

impl WireError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut message: String = message.into();
        crate::limits::truncate_chars(&mut message, crate::limits::MAX_ERROR_MESSAGE_CHARS);
        Self { code, message }
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
}
