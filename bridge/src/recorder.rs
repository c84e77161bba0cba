//! Chrome DevTools Recorder JSON (`UserFlow`) in and out.

use shared::flow::Flow;

/// Why a Recorder file is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RecorderError(pub String);

/// A flow as a Recorder `UserFlow`.
pub fn export(flow: &Flow) -> serde_json::Value {
    serde_json::json!({ "title": flow.name, "steps": [] })
}

/// A Recorder `UserFlow` as a flow.
pub fn import(_json: &serde_json::Value) -> Result<Flow, RecorderError> {
    Err(RecorderError("Recorder files cannot be imported yet".into()))
}
