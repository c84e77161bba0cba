//! The one audit writer of the agent's tools (docs/design.md, "Policy,
//! approvals and audit"; which rows an action leaves: the header of
//! `actions/mod.rs`; navigation and tab rows: `mcp.rs`).
//!
//! Every row names its caller ([`Caller`]): `mcp:` and the first 8
//! characters of the MCP session id, or `mcp` for a request without a
//! session, and its client's label (column `client`, the sanitised
//! `clientInfo.name`). Rows go to the [`AuditStore`], which
//! redacts every field again and drops URLs' query strings.
//!
//! The store is SQLite with `synchronous=FULL`: each commit waits for an
//! fsync. So a write runs on tokio's blocking pool, never on the async
//! runtime, and the caller awaits it: the rows of one tool call are written
//! in the order it records them, and an action that must be on record
//! before it is dispatched is. A write that fails costs a `warn` log line;
//! the tool call goes on (an audit outage does not stop the browser).

use shared::audit::DecidedBy;
use shared::protocol::TabId;
use shared::risk::RiskLevel;
use shared::sessions::SessionKey;

use super::AppState;
use crate::audit::{AuditStore, NewEntry};

/// Who is calling: the session whose tabs it may use
/// (`shared::sessions`), and as the audit names it (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) session: String,
    /// The session's key; `SessionKey(0)` (owning nothing) for rows no
    /// MCP session caused.
    pub(crate) key: SessionKey,
    /// Its client's label (`shared::sessions::client_label`).
    pub(crate) client: Option<String>,
}

impl Caller {
    /// Session `key`'s caller: its short id and client label.
    pub(crate) fn of(key: SessionKey, session_id: Option<&str>, client: &str) -> Caller {
        Caller { key, client: Some(client.to_string()), ..Caller::from_session_id(session_id) }
    }

    /// A caller that is no MCP session (`session` names it in the audit).
    pub(crate) fn internal(session: &str) -> Caller {
        Caller { session: session.to_string(), key: SessionKey(0), client: None }
    }

    /// The caller of a request with MCP session id `session_id`, if any:
    /// `mcp:` and its first 8 letters, digits or dashes (enough to tell
    /// sessions apart, too short to reuse), else `mcp`.
    pub(crate) fn from_session_id(session_id: Option<&str>) -> Caller {
        let short = session_id
            .map(|id| id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(8).collect::<String>())
            .filter(|id| !id.is_empty());
        Caller {
            session: short.map_or_else(|| "mcp".to_string(), |id| format!("mcp:{id}")),
            key: SessionKey(0),
            client: None,
        }
    }
}

/// One row as a tool records it; `time` and `id` are the store's.
#[derive(Debug, Default)]
pub(crate) struct Row<'a> {
    pub(crate) tool: &'a str,
    pub(crate) tab: Option<TabId>,
    pub(crate) summary: &'a str,
    pub(crate) url: Option<&'a str>,
    pub(crate) risk: Option<RiskLevel>,
    pub(crate) reasons: &'a [String],
    pub(crate) decision: Option<&'a str>,
    pub(crate) decided_by: Option<DecidedBy>,
    pub(crate) outcome: &'a str,
}

/// The writer for one caller; does nothing when the bridge runs without an
/// audit store (tests of the server alone).
pub(crate) struct Audit<'a> {
    store: Option<&'a AuditStore>,
    caller: &'a Caller,
}

impl<'a> Audit<'a> {
    pub(crate) fn new(state: &'a AppState, caller: &'a Caller) -> Self {
        Audit { store: state.config().audit.as_ref(), caller }
    }

    /// Writes `row`; its id, or `None` without a store or when the write
    /// failed (logged).
    pub(crate) async fn record(&self, row: Row<'_>) -> Option<i64> {
        let store = self.store?.clone();
        let entry = NewEntry {
            session: self.caller.session.clone(),
            client: self.caller.client.clone(),
            tab: row.tab,
            tool: row.tool.to_string(),
            summary: row.summary.to_string(),
            url: row.url.map(|u| shared::url::strip_query(u).to_string()),
            risk: row.risk.map(|r| r.as_str().to_string()),
            reasons: row.reasons.to_vec(),
            decision: row.decision.map(str::to_string),
            decided_by: row.decided_by,
            outcome: Some(row.outcome.to_string()),
        };
        let tool = row.tool;
        match tokio::task::spawn_blocking(move || store.record(&entry)).await {
            Ok(Ok(id)) => Some(id),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, tool, "audit write failed");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, tool, "audit write failed");
                None
            }
        }
    }

    /// Sets the outcome of the row `id` (from [`record`](Self::record)).
    pub(crate) async fn set_outcome(&self, id: Option<i64>, outcome: &str) {
        let (Some(store), Some(id)) = (self.store.cloned(), id) else { return };
        let outcome = outcome.to_string();
        match tokio::task::spawn_blocking(move || store.set_outcome(id, &outcome)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, id, "audit write failed"),
            Err(e) => tracing::warn!(error = %e, id, "audit write failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_are_named_by_a_short_session_prefix() {
        assert_eq!(Caller::from_session_id(Some("0b5c2f9e-77aa-4d1e")).session, "mcp:0b5c2f9e");
        assert_eq!(Caller::from_session_id(Some("ab\ncd")).session, "mcp:abcd");
        assert_eq!(Caller::from_session_id(Some("\u{1b}[31m")).session, "mcp:31m");
        assert_eq!(Caller::from_session_id(Some("")).session, "mcp");
        assert_eq!(Caller::from_session_id(None).session, "mcp");
    }
}
