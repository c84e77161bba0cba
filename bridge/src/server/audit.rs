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
//!
//! # What the writer adds to every row
//!
//! - **The page's title**: the title last seen on the row's tab
//!   ([`AppState::page_seen`]: snapshots, extracted text, navigation, tab
//!   selection), only if it was seen at the row's URL (query stripped):
//!   a title never names another page. Untrusted page text, redacted like
//!   the rest; the dashboard and the report show it only as text.
//! - **The duration**: from the tool call's start ([`Caller::started`]) to
//!   when the row's outcome is known — at [`Audit::record`], or at
//!   [`Audit::set_outcome`] for a row written `pending` before dispatch.
//!   A decision row's duration includes the wait for the person.
//! - **Who decided**: a row the caller marks `policy` is a site rule's
//!   (`DecidedBy::SiteRule`) when `shared::audit::attribute` says the
//!   site's rules made that decision (its access, or its per-risk
//!   override), from the rules in force now ([`AppState::site_rules`],
//!   `shared::policy::site_override`).
//! - **Agents' start and end**: one `session` row when an MCP session
//!   first speaks ([`session_started`]) and one when it ends
//!   ([`session_ended`]), so the dashboard's started/ended are the
//!   session's own, not its first and last action's.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use shared::audit::{AuditDecision, DecidedBy, SESSION_ENDED, SESSION_STARTED, SESSION_TOOL, SiteSays};
use shared::policy::SiteAccess;
use shared::protocol::TabId;
use shared::risk::RiskLevel;
use shared::sessions::SessionKey;

use super::AppState;
use shared::audit::AuditRow;

/// Titles at most this long are kept (characters); longer ones are cut.
pub(crate) const MAX_TITLE_CHARS: usize = 300;

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
    /// When the tool call (or the event) this caller makes rows for began:
    /// rows' durations count from here.
    pub(crate) started: Instant,
}

impl Caller {
    /// Session `key`'s caller: its short id and client label.
    pub(crate) fn of(key: SessionKey, session_id: Option<&str>, client: &str) -> Caller {
        Caller { key, client: Some(client.to_string()), ..Caller::from_session_id(session_id) }
    }

    /// A caller that is no MCP session (`session` names it in the audit).
    pub(crate) fn internal(session: &str) -> Caller {
        Caller { session: session.to_string(), key: SessionKey(0), client: None, started: Instant::now() }
    }

    /// Session `key`'s caller as its registry entry names it.
    pub(crate) fn session(key: SessionKey, short: String, client: String) -> Caller {
        Caller { session: short, key, client: Some(client), started: Instant::now() }
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
            started: Instant::now(),
        }
    }
}

/// One row as a tool records it; `time` and `id` are the store's, the
/// title, duration and a site rule as decider the writer's (module docs).
#[derive(Debug, Default)]
pub(crate) struct Row<'a> {
    pub(crate) tool: &'a str,
    pub(crate) tab: Option<TabId>,
    pub(crate) summary: &'a str,
    pub(crate) url: Option<&'a str>,
    pub(crate) risk: Option<RiskLevel>,
    pub(crate) reasons: &'a [String],
    pub(crate) decision: Option<AuditDecision>,
    pub(crate) decided_by: Option<DecidedBy>,
    pub(crate) outcome: &'a str,
}

/// The title last seen on each tab, with the URL it was seen at.
#[derive(Debug, Default)]
pub(crate) struct PageTitles(Mutex<HashMap<TabId, (String, String)>>);

impl PageTitles {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<TabId, (String, String)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `title` was seen on `tab` at `url`.
    pub(crate) fn seen(&self, tab: TabId, url: &str, title: &str) {
        let mut title = title.trim().to_string();
        shared::limits::truncate_chars(&mut title, MAX_TITLE_CHARS);
        self.map().insert(tab, (shared::url::strip_query(url).to_string(), title));
    }

    /// The title of `tab` if it was seen at `url` (query ignored) and is
    /// not empty.
    pub(crate) fn at(&self, tab: TabId, url: &str) -> Option<String> {
        let map = self.map();
        let (seen_at, title) = map.get(&tab)?;
        (seen_at == shared::url::strip_query(url) && !title.is_empty()).then(|| title.clone())
    }

    pub(crate) fn forget(&self, tab: TabId) {
        self.map().remove(&tab);
    }
}

/// The writer for one caller; does nothing when the bridge runs without an
/// audit store (tests of the server alone).
pub(crate) struct Audit<'a> {
    state: &'a AppState,
    caller: &'a Caller,
}

impl<'a> Audit<'a> {
    pub(crate) fn new(state: &'a AppState, caller: &'a Caller) -> Self {
        Audit { state, caller }
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.caller.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// What the site rules in force say about `url` for a row of `risk`.
    fn site_says(&self, url: &str, risk: Option<RiskLevel>) -> SiteSays {
        let restricted = self.state.access_for(url).access != SiteAccess::Act;
        let overrides = risk
            .and_then(|r| shared::policy::site_override(&self.state.config().policy, url, r))
            .map(|(_, d)| AuditDecision::from(d));
        SiteSays { restricted, overrides }
    }

    /// The entry `row` becomes (module docs: title, duration, decider).
    fn entry(&self, row: &Row<'_>) -> AuditRow {
        let decision = row.decision;
        let url = row.url.map(|u| shared::url::strip_query(u).to_string());
        let decided_by = match (&url, row.decided_by) {
            (Some(u), Some(DecidedBy::Policy)) => {
                shared::audit::attribute(row.decided_by, decision, self.site_says(u, row.risk))
            }
            _ => row.decided_by,
        };
        let title = match (row.tab, &url) {
            (Some(tab), Some(u)) => self.state.page_titles().at(tab, u),
            _ => None,
        };
        AuditRow {
            session: self.caller.session.clone(),
            client: self.caller.client.clone(),
            tab: row.tab,
            tool: row.tool.to_string(),
            summary: row.summary.to_string(),
            url,
            title,
            risk: row.risk,
            reasons: row.reasons.to_vec(),
            decision,
            decided_by,
            outcome: Some(row.outcome.to_string()),
            duration_ms: Some(self.elapsed_ms()),
        }
    }

    /// Writes `row`; its id, or `None` without a store or when the write
    /// failed (logged).
    pub(crate) async fn record(&self, row: Row<'_>) -> Option<i64> {
        let store = self.state.config().audit.as_ref()?.clone();
        let entry = self.entry(&row);
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

    /// Sets the outcome of the row `id` (from [`record`](Self::record))
    /// and its duration, now.
    pub(crate) async fn set_outcome(&self, id: Option<i64>, outcome: &str) {
        let (Some(store), Some(id)) = (self.state.config().audit.clone(), id) else { return };
        let outcome = outcome.to_string();
        let duration = Some(self.elapsed_ms());
        match tokio::task::spawn_blocking(move || store.set_outcome(id, &outcome, duration)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, id, "audit write failed"),
            Err(e) => tracing::warn!(error = %e, id, "audit write failed"),
        }
    }
}

/// The row of an agent's session starting (its first message), written
/// by the server's task tracker: tool `session`, outcome `started`.
pub(crate) async fn session_started(state: AppState, caller: Caller) {
    let summary = format!("agent connected: {}", caller.client.as_deref().unwrap_or("(unknown client)"));
    Audit::new(&state, &caller)
        .record(Row { tool: SESSION_TOOL, summary: &summary, outcome: SESSION_STARTED, ..Row::default() })
        .await;
}

/// The row of an agent's session ending: tool `session`, outcome `ended`,
/// how many of its tabs stay open for the person.
pub(crate) async fn session_ended(state: AppState, caller: Caller, tabs_left: usize) {
    let summary = format!("agent disconnected; {tabs_left} of its tabs left open for the person");
    Audit::new(&state, &caller)
        .record(Row { tool: SESSION_TOOL, summary: &summary, outcome: SESSION_ENDED, ..Row::default() })
        .await;
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

    #[test]
    fn a_title_names_only_the_page_it_was_seen_on() {
        let t = PageTitles::default();
        t.seen(3, "https://shop.example/cart?id=1", "  <b>Cart</b> ");
        assert_eq!(t.at(3, "https://shop.example/cart").as_deref(), Some("<b>Cart</b>"));
        assert_eq!(t.at(3, "https://shop.example/cart?other=2").as_deref(), Some("<b>Cart</b>"));
        assert_eq!(t.at(3, "https://shop.example/checkout"), None, "another page");
        assert_eq!(t.at(4, "https://shop.example/cart"), None, "another tab");
        t.seen(3, "https://shop.example/cart", &"x".repeat(MAX_TITLE_CHARS + 50));
        assert_eq!(t.at(3, "https://shop.example/cart").map(|s| s.chars().count()), Some(MAX_TITLE_CHARS));
        t.seen(3, "https://shop.example/cart", "   ");
        assert_eq!(t.at(3, "https://shop.example/cart"), None, "an empty title is none");
        t.forget(3);
        assert_eq!(t.at(3, "https://shop.example/cart"), None);
    }
}
