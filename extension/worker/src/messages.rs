//! What the extension's own pages (`popup.html`, `approval.html`) and the
//! service worker say to each other (docs/design.md, "Policy, approvals
//! and audit"): the [`Message`]s a page sends with
//! `chrome.runtime.sendMessage`, the worker's [`Reply`], and what the
//! worker publishes for the pages ([`PageState`] under
//! `chrome.storage.session` key `gate`, [`ConnectionStatus`] under
//! [`CONNECTION_KEY`], [`HistoryEntry`] rows under `chrome.storage.local`
//! key `history`).
//!
//! Exactly:
//!
//! - A message is one JSON object `{"type": …, …}`, parsed into
//!   [`Message`]: an unknown `type`, a missing field, a field of the wrong
//!   type or an unknown field is refused with
//!   `{"type": "error", "message": …}` and does nothing (the pages build
//!   their messages from this same enum).
//! - Only this extension's pages are heard at all (`lib.rs` checks the
//!   sender's extension id and URL: content scripts, web pages and other
//!   extensions are refused). Which page may send what is decided in one
//!   place, [`Message::allowed_from`]: answers (`decide`) and the chime
//!   setting from the approval window and the popup; STOP, Pause, Resume,
//!   YOLO, clearing the history, dismissing the second-browser notices,
//!   the hand-off buttons (Done, Abort, Take over), "Let <client> use this
//!   tab" and "Record me" only from the popup; the connection status from any of our pages;
//!   the "This site" section (reading it and choosing **Agents may act**, **Read only** or
//!   **Never**, `crate::sites`) only from the popup, and "Never on this site" (deny one
//!   request and set Never for its origin) from the approval window and the popup.
//!   Anything else is refused with `"not allowed from this page"`.

use serde::{Deserialize, Serialize};
use shared::action::ControlState;

/// Which of the extension's own pages sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// `popup.html`, the toolbar popup.
    Popup,
    /// `approval.html`, the approval window.
    Approval,
    /// Any other page of this extension.
    Other,
}

/// A message from one of the extension's pages to the service worker.
///
/// Variants without fields are written `Name {}`: serde refuses unknown
/// fields only on struct variants of an internally tagged enum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Message {
    /// The connection to the bridge (reply: [`ConnectionStatus`]); wakes the
    /// worker, which reconnects if needed.
    Status {},
    /// The gate's state (reply: [`PageState`]).
    State {},
    /// The person's answer for one waiting request (reply: [`Reply::Ok`],
    /// `done: false` when no such request waits).
    Decide { request: u64, approve: bool },
    /// The generic settings path: the chime only.
    Settings { settings: Settings },
    /// STOP, Pause or Resume.
    Control { action: Control },
    /// YOLO on or off.
    Yolo { on: bool },
    /// Clears the approval history.
    ClearHistory {},
    /// Dismisses the second-browser notices.
    DismissRefusals {},
    /// The person's Done or Abort on one hand-off's card (reply:
    /// [`Reply::Ok`], `done: false` when no such hand-off is open).
    HandBack { id: u64, answer: HandBack },
    /// "Let <client> use this tab": the person's web tab in front becomes
    /// session `session`'s (reply: [`Reply::Ok`], `done: false` when there
    /// is no such tab, it is an agent's already, or the session is gone;
    /// `crate::sessions`).
    GiveTab { session: shared::sessions::SessionKey },
    /// "Take over": the tab the person is looking at becomes theirs until
    /// they press Done (reply: [`Reply::Ok`], `done: false` when there is
    /// no web tab to take).
    TakeOver {},
    /// "Record me" on (with the flow's name and "Also keep the text I
    /// type") or off (reply: [`Reply::Ok`], or [`Reply::Error`] saying why
    /// it cannot start; `crate::record`).
    Record {
        on: bool,
        #[serde(default)]
        name: String,
        #[serde(default)]
        keep_text: bool,
    },
    /// The popup's "This site": the web page in front and its access
    /// (reply: [`SiteView`]).
    ThisSite {},
    /// The person's choice in "This site" for the origin the popup shows
    /// (reply: [`Reply::Ok`], `done: false` when not connected or not an
    /// origin; the bridge refuses loosening `config.toml`).
    SetSiteAccess { origin: String, access: shared::policy::SiteAccess },
    /// "Never on this site" on one request: Never for its page's origin,
    /// and the request denied (reply: [`Reply::Ok`], `done: false` when no
    /// such request waits).
    NeverHere { request: u64 },
}

/// The reply to [`Message::ThisSite`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteView {
    /// `scheme://host:port`; empty when no web page is in front.
    pub origin: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<shared::policy::AccessIn>,
}

/// The two buttons of a hand-off card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandBack {
    Done,
    Abort,
}

/// What [`Message::Settings`] may change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The chime for new requests; unchanged when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chime: Option<bool>,
}

/// The person's controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    Stop,
    Pause,
    Resume,
}

impl Message {
    /// Whether `page` may send this message: the one rule (see the module
    /// docs).
    pub fn allowed_from(&self, page: Page) -> bool {
        match self {
            // Read-only, for any page of ours.
            Message::Status {} => true,
            // The pages that show requests read them and answer them.
            Message::State {} | Message::Decide { .. } | Message::Settings { .. } => {
                matches!(page, Page::Popup | Page::Approval)
            }
            // The person's controls live in the popup only.
            // So do hand-offs: only the popup ends or starts one.
            Message::Control { .. }
            | Message::Yolo { .. }
            | Message::ClearHistory {}
            | Message::DismissRefusals {}
            | Message::HandBack { .. }
            | Message::TakeOver {}
            | Message::GiveTab { .. }
            | Message::Record { .. }
            | Message::ThisSite {}
            | Message::SetSiteAccess { .. } => page == Page::Popup,
            Message::NeverHere { .. } => matches!(page, Page::Popup | Page::Approval),
        }
    }

    /// Parses a page's message (JSON text), refusing anything that is not
    /// exactly one [`Message`].
    pub fn parse(json: &str) -> Result<Message, String> {
        serde_json::from_str(json).map_err(|e| format!("invalid message: {e}"))
    }
}

/// The worker's reply to [`Message::Decide`], [`Message::Settings`],
/// [`Message::Control`], [`Message::Yolo`], [`Message::ClearHistory`] and
/// [`Message::DismissRefusals`], and to any refused message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    Ok { done: bool },
    Error { message: String },
}

/// What the popup and the approval window show: the reply to
/// [`Message::State`] and the `gate` key of `chrome.storage.session`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PageState {
    pub control: ControlState,
    pub chime: bool,
    pub pending: Vec<PendingView>,
}

/// One request waiting for the person, as the pages show it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingView {
    pub request: u64,
    pub summary: String,
    pub risk: String,
    pub reasons: Vec<String>,
    pub role: String,
    pub name: String,
    /// Page URL without query string or fragment.
    pub url: String,
    /// What the element shows on the page, when its words differ from
    /// its name (`ElementFacts::visible_text`); else empty.
    #[serde(default)]
    pub shows: String,
    /// Where activating it goes (link or form target, redacted), when it
    /// is not the page itself; else empty.
    #[serde(default)]
    pub goes_to: String,
    /// A flow step's changed target: recorded and live, side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<shared::replay::ChangedTarget>,
    /// Epoch ms.
    pub deadline: f64,
    /// The agent whose tab asks (`shared::sessions::client_label`), and its
    /// session; absent for a question about no tab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentRef>,
}

/// The agent an approval card names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRef {
    pub session: shared::sessions::SessionKey,
    pub client: String,
}

/// One line of the approval history (`chrome.storage.local`, key `history`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// RFC 3339 UTC.
    pub time: String,
    pub summary: String,
    pub risk: String,
    /// `approved`, `denied`, `timeout`, `stopped`, `auto (YOLO)`
    /// (`shared::gate::Answer::history`, `shared::gate::YOLO_HISTORY`).
    pub decision: String,
    pub url: String,
}

/// The `chrome.storage.session` key of [`ConnectionStatus`].
pub const CONNECTION_KEY: &str = "connection";

/// The connection to the bridge as the pages show it: the reply to
/// [`Message::Status`], and what `conn` publishes under [`CONNECTION_KEY`]
/// whenever it changes (never the token).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionStatus {
    pub connected: bool,
    /// The bridge's port, once known.
    pub port: Option<u16>,
    /// When the connection came up (ms since the epoch), while connected.
    pub since: Option<f64>,
    /// Why there is no connection (empty while connected, and before the
    /// first attempt).
    pub reason: String,
}

impl ConnectionStatus {
    /// The popup's status line.
    pub fn line(&self) -> String {
        if self.connected {
            let port = self.port.map(|p| format!(" (port {p})")).unwrap_or_default();
            format!("Connected to bridge{port}")
        } else {
            let reason = if self.reason.is_empty() { "starting" } else { &self.reason };
            format!("Not connected: {reason}")
        }
    }
}

/// The `chrome.storage.session` key of [`RecordState`].
pub const RECORD_KEY: &str = "record";

/// "Record me" as the popup shows it (`crate::record` keeps it; it
/// survives a worker restart).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordState {
    pub on: bool,
    pub name: String,
    pub keep_text: bool,
    /// Steps reported to the bridge in this recording.
    pub steps: u32,
    /// Pages armed since the recording started (tests wait on it).
    pub armed: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_status_reads_back_as_written_and_as_the_popup_shows_it() {
        let up = ConnectionStatus { connected: true, port: Some(8123), since: Some(1.5e12), reason: String::new() };
        let json = serde_json::to_string(&up).unwrap();
        assert_eq!(serde_json::from_str::<ConnectionStatus>(&json).unwrap(), up);
        assert_eq!(up.line(), "Connected to bridge (port 8123)");
        let cases = [
            (ConnectionStatus { connected: true, ..Default::default() }, "Connected to bridge"),
            (ConnectionStatus { reason: "no bridge".into(), ..Default::default() }, "Not connected: no bridge"),
            // Nothing published yet.
            (ConnectionStatus::default(), "Not connected: starting"),
        ];
        for (status, line) in cases {
            assert_eq!(status.line(), line);
        }
        // An error reply is not a status.
        assert!(serde_json::from_str::<ConnectionStatus>(r#"{"type":"error","message":"not allowed"}"#).is_err());
    }

    #[test]
    fn every_message_is_allowed_from_exactly_its_pages() {
        let everyone = [Page::Popup, Page::Approval, Page::Other];
        let ui_pages = [Page::Popup, Page::Approval];
        let popup = [Page::Popup];
        let cases: Vec<(&str, &[Page])> = vec![
            (r#"{"type":"status"}"#, &everyone),
            (r#"{"type":"state"}"#, &ui_pages),
            (r#"{"type":"decide","request":7,"approve":true}"#, &ui_pages),
            (r#"{"type":"settings","settings":{"chime":false}}"#, &ui_pages),
            (r#"{"type":"settings","settings":{}}"#, &ui_pages),
            (r#"{"type":"control","action":"stop"}"#, &popup),
            (r#"{"type":"control","action":"pause"}"#, &popup),
            (r#"{"type":"control","action":"resume"}"#, &popup),
            (r#"{"type":"yolo","on":true}"#, &popup),
            (r#"{"type":"clear_history"}"#, &popup),
            (r#"{"type":"dismiss_refusals"}"#, &popup),
            (r#"{"type":"hand_back","id":3,"answer":"done"}"#, &popup),
            (r#"{"type":"hand_back","id":3,"answer":"abort"}"#, &popup),
            (r#"{"type":"take_over"}"#, &popup),
            (r#"{"type":"record","on":true,"name":"checkout","keep_text":false}"#, &popup),
            (r#"{"type":"record","on":false}"#, &popup),
            (r#"{"type":"this_site"}"#, &popup),
            (r#"{"type":"set_site_access","origin":"https://bank.example:443","access":"read"}"#, &popup),
            (r#"{"type":"set_site_access","origin":"https://bank.example:443","access":"act"}"#, &popup),
            (r#"{"type":"set_site_access","origin":"https://bank.example:443","access":"deny"}"#, &popup),
            (r#"{"type":"never_here","request":7}"#, &ui_pages),
        ];
        for (json, allowed) in cases {
            let m = Message::parse(json).unwrap_or_else(|e| panic!("{json}: {e}"));
            for page in everyone {
                assert_eq!(m.allowed_from(page), allowed.contains(&page), "{json} from {page:?}");
            }
            // What the pages send is what the worker parses.
            let again = serde_json::to_string(&m).unwrap();
            assert_eq!(Message::parse(&again).unwrap(), m, "{again}");
        }
    }

    #[test]
    fn anything_but_one_exact_message_is_refused() {
        for bad in [
            r#"{}"#,
            r#"[]"#,
            r#""status""#,
            r#"{"type":"approve_all"}"#,
            r#"{"type":"STATUS"}"#,
            r#"{"type":"status","yolo":true}"#,
            r#"{"type":"clear_history","all":true}"#,
            r#"{"type":"decide","request":7}"#,
            r#"{"type":"decide","request":-1,"approve":true}"#,
            r#"{"type":"decide","request":1.5,"approve":true}"#,
            r#"{"type":"decide","request":"7","approve":true}"#,
            r#"{"type":"decide","request":7,"approve":"yes"}"#,
            r#"{"type":"decide","request":7,"approve":true,"risk":"low"}"#,
            r#"{"type":"settings","settings":{"yolo":true,"paused":false}}"#,
            r#"{"type":"settings","settings":{"chime":"on"}}"#,
            r#"{"type":"settings"}"#,
            r#"{"type":"control","action":"resume_all"}"#,
            r#"{"type":"control"}"#,
            r#"{"type":"yolo"}"#,
            r#"{"type":"yolo","on":1}"#,
            r#"{"type":"hand_back","id":3,"answer":"approve"}"#,
            r#"{"type":"hand_back","id":3}"#,
            r#"{"type":"hand_back","answer":"done"}"#,
            r#"{"type":"take_over","tab":5}"#,
            r#"{"type":"set_site_access","origin":"https://bank.example:443"}"#,
            r#"{"type":"set_site_access","origin":"https://bank.example:443","access":"allow"}"#,
            r#"{"type":"set_site_access","origin":"https://bank.example:443","access":"read","config":true}"#,
            r#"{"type":"this_site","origin":"https://bank.example:443"}"#,
            r#"{"type":"never_here"}"#,
            r#"{"type":"never_here","request":7,"origin":"https://evil.example:443"}"#,
        ] {
            let got = Message::parse(bad);
            assert!(got.is_err(), "{bad} was accepted as {got:?}");
            assert!(got.unwrap_err().starts_with("invalid message: "), "{bad}");
        }
    }

    #[test]
    fn replies_and_the_page_state_keep_their_shape() {
        let ok = serde_json::to_value(Reply::Ok { done: false }).unwrap();
        assert_eq!(ok, serde_json::json!({"type": "ok", "done": false}));
        let err = serde_json::to_value(Reply::Error { message: "not allowed".into() }).unwrap();
        assert_eq!(err, serde_json::json!({"type": "error", "message": "not allowed"}));
        let state = serde_json::to_value(PageState::default()).unwrap();
        assert_eq!(
            state,
            serde_json::json!({
                "control": {"stopped": false, "paused": false, "yolo": false, "pending": 0},
                "chime": false,
                "pending": [],
            })
        );
    }
}
