//! Messages on the extension socket (`/ext`) and the native-messaging
//! bootstrap. Every frame is one JSON text message of one of these types;
//! unknown fields are refused on both sides.

use serde::{Deserialize, Serialize};

use crate::error::WireError;
use crate::snapshot::{PageSnapshot, PageText, SnapshotRequest, TextRequest};

/// Chrome's id of a tab.
pub type TabId = i64;

/// Extension → bridge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ExtToBridge {
    /// First frame on a new socket, within `HELLO_TIMEOUT_SECS`.
    Hello { token: String, version: String },
    /// Keeps the service worker and the socket alive.
    Ping { seq: u64 },
    /// The person changed a control in the popup (STOP, Pause, YOLO) or
    /// the number of pending approvals changed. Informational for the
    /// bridge: the extension enforces these itself.
    Control { state: crate::action::ControlState },
    /// Answer to a [`BridgeToExt::Request`].
    Response { id: u64, outcome: Outcome },
}

/// Result of one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok(CommandResult),
    Err(WireError),
}

/// Bridge → extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum BridgeToExt {
    /// Sent once the hello was accepted.
    Welcome {
        version: String,
    },
    Pong {
        seq: u64,
    },
    Request {
        id: u64,
        command: Command,
    },
}

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum HistoryStep {
    Back,
    Forward,
    Reload,
}

/// What the extension answers. `Image` is a screenshot: base64 PNG (no
/// `data:` prefix) and the page URL it shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CommandResult {
    Tabs { tabs: Vec<TabInfo> },
    Tab { tab: TabInfo },
    Closed { tab: TabId },
    Snapshot { snapshot: PageSnapshot },
    Text { text: PageText },
    Element { element: crate::action::ResolvedElement },
    Acted { report: crate::action::ActReport },
    Image { png_base64: String, url: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TabInfo {
    pub id: TabId,
    pub url: String,
    pub title: String,
    pub active: bool,
}

/// Request the service worker sends to the native host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum NativeRequest {
    Bootstrap,
}

/// What the native host answers: where the bridge listens and the
/// extension token for `/ext`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum NativeReply {
    Bridge { port: u16, token: String, version: String },
    Error { message: String },
}

/// Contents of `home/daemon.json`. Never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DaemonInfo {
    pub pid: u32,
    pub port: u16,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub version: String,
}

/// Answer of the bridge's `GET /status` (Bearer mcp-token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeStatus {
    pub version: String,
    pub pid: u32,
    pub port: u16,
    pub browsers: Vec<BrowserStatus>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrowserStatus {
    /// Connection number since the daemon started.
    pub connection: u64,
    pub extension_version: String,
    /// Seconds since this connection said hello.
    pub connected_secs: u64,
    /// Tabs the agent opened, as last seen.
    pub agent_tabs: Vec<TabId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_in_their_documented_shape() {
        let hello: ExtToBridge = serde_json::from_str(r#"{"type":"hello","token":"abc","version":"0.1.0"}"#).unwrap();
        assert_eq!(hello, ExtToBridge::Hello { token: "abc".into(), version: "0.1.0".into() });

        let resp = ExtToBridge::Response { id: 7, outcome: Outcome::Ok(CommandResult::Closed { tab: 3 }) };
        let json = serde_json::to_string(&resp).unwrap();
        assert_eq!(json, r#"{"type":"response","id":7,"outcome":{"ok":{"kind":"closed","tab":3}}}"#);
        assert_eq!(serde_json::from_str::<ExtToBridge>(&json).unwrap(), resp);

        let req =
            BridgeToExt::Request { id: 1, command: Command::Navigate { tab: 5, url: "https://a.example/".into() } };
        let json = serde_json::to_string(&req).unwrap();
        assert_eq!(
            json,
            r#"{"type":"request","id":1,"command":{"cmd":"navigate","tab":5,"url":"https://a.example/"}}"#
        );
    }

    #[test]
    fn unknown_fields_and_types_are_refused() {
        assert!(
            serde_json::from_str::<ExtToBridge>(r#"{"type":"hello","token":"a","version":"1","approve":true}"#)
                .is_err()
        );
        assert!(serde_json::from_str::<ExtToBridge>(r#"{"type":"approve","id":1}"#).is_err());
        assert!(serde_json::from_str::<Command>(r#"{"cmd":"evaluate","js":"1"}"#).is_err());
    }
}
