//! What the bridge asks the extension to do ([`Command`], inside
//! `crate::protocol::BridgeToExt::Request`), apart from the other frames so
//! that the rules about commands (`crate::handoff::check_handed`) need not
//! depend on the whole socket protocol. `crate::protocol` re-exports both
//! types.

use serde::{Deserialize, Serialize};

use crate::snapshot::{SnapshotRequest, TextRequest};
use crate::tab::TabId;

/// What the bridge asks the extension to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// Tabs the agent opened (the person's other tabs are not listed).
    TabsList {
        tabs: Vec<TabId>,
    },
    /// Opens a tab (about:blank when `url` is absent) and makes it active.
    TabNew {
        url: Option<String>,
    },
    TabSelect {
        tab: TabId,
    },
    TabClose {
        tab: TabId,
    },
    /// Loads an http(s) URL (already validated by the bridge) and waits
    /// until the page has loaded.
    Navigate {
        tab: TabId,
        url: String,
    },
    History {
        tab: TabId,
        step: HistoryStep,
    },
    Snapshot {
        tab: TabId,
        request: SnapshotRequest,
    },
    /// Visible text of the page or of one element's subtree.
    ExtractText {
        tab: TabId,
        request: TextRequest,
    },
    /// A PNG of the tab's visible area (`chrome.tabs.captureVisibleTab`).
    /// The extension makes the tab active in its window first and refuses
    /// (`SECURITY_CHALLENGE`) when the page shows a security challenge.
    Screenshot {
        tab: TabId,
    },
    /// Facts about the element behind `target` (for classification).
    Resolve {
        tab: TabId,
        target: String,
    },
    /// Carry out one action behind the bridge's gate. The extension checks
    /// `expect`, re-classifies live, asks the person when either side says
    /// confirm, refuses while STOP is pressed.
    Act {
        tab: TabId,
        target: Option<String>,
        action: crate::action::Action,
        expect: Option<crate::action::Fingerprint>,
        gate: crate::action::Gate,
    },
    /// Find a flow step's recorded element on the tab's live page
    /// (`crate::replay`); answered with [`CommandResult::Located`] (a ref
    /// and its facts, or what the page has instead). A challenge on the
    /// page hands the tab to the person first, as before an action.
    Locate {
        tab: TabId,
        target: crate::flow::Descriptor,
    },
    /// Ask the person in the approval window about something that is not
    /// a page action (`flow_delete`: it deletes their recording). The
    /// extension applies STOP and Pause and spends the request id like an
    /// `Act`, always asks (never YOLO), and answers
    /// [`CommandResult::Answered`] or `APPROVAL_DENIED` / `STOPPED`.
    AskPerson {
        gate: crate::action::Gate,
    },
    /// The agent hands the tab to the person (`browser_handoff`): the
    /// extension shows the reason in the popup and answers once the
    /// person pressed Done and the page passed the check
    /// ([`CommandResult::HandedBack`]), or with `HUMAN_REQUIRED` /
    /// `STOPPED` (see `crate::handoff`).
    Handoff {
        tab: TabId,
        reason: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum HistoryStep {
    Back,
    Forward,
    Reload,
}
