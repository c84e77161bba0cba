//! The action pipeline (docs/design.md, "Policy, approvals and audit"):
//! every page-changing tool goes through `pipeline::run` (or
//! [`fill_form`]), in this order:
//!
//! 1. arguments validated (unknown fields were refused by `shared::tools`);
//! 2. the tab: one the agent opened (`PERMISSION_DENIED` otherwise,
//!    [`AppState::agent_tab`](crate::server::AppState::agent_tab), the rule every tool follows), then its
//!    per-tab lock, so actions on one page run one at a time while
//!    other tabs go on concurrently;
//! 3. (to 7.) the decision before dispatch, pure and table-tested in
//!    `shared::gate::dispatch` (its module docs are the spec of each
//!    refusal): `before_resolve` on the person's controls as the connected
//!    extension last reported them (STOP or Pause → `STOPPED`) and the last
//!    URL seen on that tab (the site's access, `config.toml`'s and the
//!    person's popup choices: `deny` refuses everything, `read` every
//!    action but a scroll or a hover; a secret bound elsewhere →
//!    `PERMISSION_DENIED`); then `Command::Resolve` of the ref
//!    (`STALE_REF` comes back with a hint to take a new snapshot); then
//!    `before_dispatch` on the element and its page URL: the site and the
//!    secret's binding again, the sensitive-field rule the extension
//!    applies too (`shared::gate::fields`), file inputs, options, the
//!    classification and the policy (`deny` → `PERMISSION_DENIED`, nothing
//!    dispatched; `allow`/`confirm` → `Command::Act` with a [`Gate`](shared::action::Gate): fresh
//!    request id, risk, reasons, decision, the per-risk decisions in force
//!    for this origin, the masked summary, the approval timeout, and the
//!    element's fingerprint as `expect`). The extension re-classifies live
//!    and asks the person when either side says confirm; the bridge waits
//!    the approval timeout plus [`COMMAND_TIMEOUT_MS`](shared::limits::COMMAND_TIMEOUT_MS);
//! 8. the report: `effect`, new URL (a denied site is not shown), live risk
//!    and reasons, who decided, what changed — wrapped as untrusted data.
//!
//! Files (`super::files`) use the same pipeline: `browser_upload_file` runs
//! `Action::UploadFiles` on the file input ([`upload`]; `before_dispatch` refuses
//! any element that is not `<input type=file>`), and a download an agent
//! tab started runs `Action::KeepDownload` with no element
//! ([`keep_download`], without the tab lock).
//!
//! # Secrets
//!
//! `{"secret": NAME}` becomes `Action::TypeSecret { name }`: the `Act`
//! carries the name, never the value, and summaries, log lines, audit rows
//! and results say `{secret:NAME}`. Before dispatch the bridge only checks
//! that the secret exists and reads its site binding
//! ([`SecretStore::sites`](crate::secrets::SecretStore::sites), nothing is
//! decrypted). A secret bound to no site makes the action `confirm` (a
//! `deny` stays) with [`Gate::person_must_answer`](shared::action::Gate::person_must_answer) set and the reason "the
//! secret NAME is not bound to a site": the extension asks the person even
//! under YOLO. The `Act` is sent with a grant (`ExtHub::call_granting`);
//! the extension asks for the value (`SecretRequest`) once its gate let
//! the action through, and [`release_secret`] answers — only for that
//! `Act` while the bridge waits for it, only on its connection, only once,
//! only for the origin decided for, and only if the secret's binding as it
//! is now allows that origin (a secret bound at the decision and unbound
//! since is refused: nobody approved it). The value is decrypted then, and
//! sent in that one `BridgeToExt::Secret` frame.
//!
//! # Audit
//!
//! Through the one writer, [`super::audit`], named by the caller's MCP
//! session. Refused before dispatch: one row (`decision` deny, `decided_by` policy,
//! or `stop` for STOP/Pause). Dispatched: one action row (decision
//! allow/confirm, `decided_by` policy for allow) with the effect or error
//! code as outcome. A `confirm` row is written *before* the `Act` (outcome
//! `pending`) and updated afterwards; an `allow` row once, afterwards. When a
//! person (or YOLO, a timeout, STOP) decided, a second decision row
//! (`approved`/`denied`, `decided_by` human|yolo|timeout|stop). Summaries are
//! masked ([`shared::mask`]): a literal typed into a sensitive field is
//! `••••` everywhere; log lines, and rows written before the target is
//! resolved, mask every literal. URLs lose their query.
//!
//! # Who denied an approval
//!
//! An error the extension returns for an `Act` says who denied it in its
//! typed [`WireError::denied_by`](shared::error::WireError::denied_by) (`shared::gate`, steps 1, 4 and 5):
//! `human` (the person's Deny), `timeout` (nobody answered in time) or
//! `stop` (STOP or Pause, before the approval, while it waited or before
//! the action ran); that is the decision row's `decided_by`. An error
//! without it (a live policy deny, a stale element…) writes no decision
//! row.
//!
//! # fill_form
//!
//! Every field is resolved, classified and decided first; if any field is
//! refused, nothing is typed. Then the fields run in order, each as its own
//! `Act` with its own gate (an approval covers exactly one `Act` on the
//! wire, so a form with two risky fields asks twice); `submit` presses Enter
//! in the last field and is classified with it. The result lists every
//! field and the merged classification.
//!
//! # Files
//!
//! `mod.rs`: these docs and [`Actions`] (per-tab locks, the last page seen,
//! gate ids); `pipeline.rs`: [`Plan`](pipeline::Plan), the decision around
//! `shared::gate` (`prepare_with`), the `Act` and its audit rows
//! (`execute`); `tools.rs`: the tool adapters (one `Plan` each,
//! `fill_form`, `close_other_tab`, a flow step, an upload, a download);
//! `secrets.rs`: an agent's value checked, a secret's binding read, the
//! value released after the extension's gate; `render.rs`: the result an
//! agent reads. `browser_screenshot` is a read, in `super::screenshot`.

mod pipeline;
mod render;
mod secrets;
mod tools;

pub(crate) use pipeline::{StepGate, controls_allow};
pub(crate) use secrets::{check_secret, release_secret};
pub(crate) use tools::{
    StepDo, click, close_other_tab, fill_form, flow_step, hover, keep_download, press_key, scroll, select_option,
    type_text, upload,
};

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use shared::protocol::TabId;

/// Per-tab locks, what the bridge last saw of each agent tab, and gate ids.
pub(crate) struct Actions {
    locks: Mutex<HashMap<TabId, Arc<tokio::sync::Mutex<()>>>>,
    pages: Mutex<HashMap<TabId, PageMemo>>,
    next_request: AtomicU64,
}

/// The last URL seen on a tab, and whether its last snapshot was a
/// security challenge.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageMemo {
    pub(crate) url: Option<String>,
    pub(crate) challenge: bool,
}

impl Actions {
    pub(crate) fn new() -> Self {
        // Gate ids stay unique across daemon restarts: start at the clock.
        let start = crate::time::unix_now_micros().max(1);
        Actions { locks: Mutex::default(), pages: Mutex::default(), next_request: AtomicU64::new(start) }
    }

    pub(crate) fn lock_for(&self, tab: TabId) -> Arc<tokio::sync::Mutex<()>> {
        self.locks.lock().unwrap_or_else(|p| p.into_inner()).entry(tab).or_default().clone()
    }

    fn pages(&self) -> std::sync::MutexGuard<'_, HashMap<TabId, PageMemo>> {
        self.pages.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn remember_url(&self, tab: TabId, url: &str) {
        self.pages().entry(tab).or_default().url = Some(url.to_string());
    }

    pub(crate) fn remember_challenge(&self, tab: TabId, challenge: bool) {
        self.pages().entry(tab).or_default().challenge = challenge;
    }

    pub(crate) fn page(&self, tab: TabId) -> PageMemo {
        self.pages().get(&tab).cloned().unwrap_or_default()
    }

    pub(crate) fn forget(&self, tab: TabId) {
        self.pages().remove(&tab);
        self.locks.lock().unwrap_or_else(|p| p.into_inner()).remove(&tab);
    }

    pub(crate) fn next_request(&self) -> u64 {
        self.next_request.fetch_add(1, Ordering::Relaxed)
    }
}
