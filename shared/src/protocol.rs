//! Messages on the extension socket (`/ext`) and the native-messaging
//! bootstrap. Every frame is one JSON text message of one of these types;
//! unknown fields are refused on both sides.
//!
//! # One browser per bridge
//!
//! A bridge serves one authenticated `/ext` connection at a time. A second
//! socket that says a valid `hello` while one is live is refused: closed
//! with [`ANOTHER_BROWSER_CLOSE_CODE`] and [`ANOTHER_BROWSER_CLOSE_REASON`]
//! before any other frame, so it never sees a command. The live connection
//! is told ([`BridgeToExt::SecondBrowserRefused`]) and the popup shows it;
//! a refused extension learns it from the close code and shows that too.
//! The refusals are in `GET /status` ([`BridgeStatus::refused`]). Another
//! socket takes over only once the live one has closed.

use serde::{Deserialize, Serialize};

pub use crate::command::{Command, HistoryStep};
use crate::error::WireError;
use crate::snapshot::{PageSnapshot, PageText, SnapshotRequest, TextRequest};
pub use crate::tab::TabId;

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
    /// The value of the secret the `Act` with gate id `request` types,
    /// asked for once the gate let the action through; `origin` is the
    /// live page's (`scheme://host:port`). Answered with
    /// [`BridgeToExt::Secret`] or [`BridgeToExt::SecretRefused`] (see
    /// `crate::action`'s module docs).
    SecretRequest { request: u64, origin: String },
    /// The gate of the `Act` with gate id `request` asks the person now;
    /// nothing of it has run. Sent before the question is shown, so a
    /// connection lost while it waits lets the bridge answer
    /// `APPROVAL_DENIED` ("nothing ran") instead of `EFFECT_UNKNOWN`.
    Asking { request: u64 },
    /// The person approved the `Act` with gate id `request`; the worker
    /// runs it only after the bridge's [`BridgeToExt::Proceed`] with `go`
    /// (at most `COMMAND_TIMEOUT_MS`; none → nothing runs). From then on a
    /// lost connection is `EFFECT_UNKNOWN` to the agent.
    Proceeding { request: u64 },
    /// The tabs waiting for the person now (sent on every change, and
    /// after the welcome): what `browser_status` lists and what the MCP
    /// progress notifications of waiting calls say. Informational: only
    /// the popup ends a hand-off.
    Waiting { tabs: Vec<crate::handoff::Waiting> },
    /// A hand-off ended: one audit row.
    HandoffEnded { record: crate::handoff::Record },
    /// The bytes of the upload `upload` (`Action::UploadFiles::upload`),
    /// asked for once the gate let its `Act` through; answered with
    /// [`BridgeToExt::UploadChunk`]s or [`BridgeToExt::UploadRefused`]
    /// (see `crate::files`).
    UploadRequest { upload: u64 },
    /// A download in an http(s) tab (`crate::files`); answered with
    /// [`BridgeToExt::Download`].
    Download { event: crate::files::DownloadEvent },
    /// The person switched "Record me" on (`crate::record`): a new
    /// recording of flow `name`; `keep_text` is "Also keep the text I type".
    RecordStart { name: String, keep_text: bool },
    /// One step the person did while recording (checked again and turned
    /// into a flow step by the bridge: `crate::record::Recording::push`).
    /// `tab`: where it happened (the bridge ignores the agent's own tabs).
    Recorded { tab: TabId, step: crate::record::RecordedStep },
    /// "Record me" switched off: the bridge saves the flow.
    RecordStop {},
    /// The person pressed "Let <client> use this tab" in the popup: their
    /// tab `tab` becomes session `session`'s (`crate::sessions::give`).
    GiveTab { tab: TabId, session: crate::sessions::SessionKey },
    /// One finished request of an agent tab (`crate::network`), observed
    /// with `webRequest`; the bridge keeps it for the tab's session.
    Network {
        request: Box<crate::network::Captured>,
        /// Set when the worker kept only the request's line
        /// (`crate::withhold::without_parts`), and why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        withheld: Option<crate::withhold::Withheld>,
    },
    /// A sensitive field of the document tab `tab` showed since `since_ms`
    /// was filled (`crate::withhold`): the bridge keeps no part of that
    /// tab's requests kept so far that started since then (the worker
    /// strips those it sends later itself).
    Withhold { tab: TabId, since_ms: f64 },
    /// WebSocket messages of an agent tab's socket at `url` (the bodies
    /// build, from the debugger), in order; the bridge adds them to that
    /// socket's request (made when there is none yet).
    NetworkFrames { tab: TabId, url: String, messages: Vec<crate::network::WsMessage> },
    /// The person chose `access` for `origin` (`scheme://host:port`) in
    /// the popup's "This site" section, or "Never on this site" in the
    /// approval window. Only the extension's popup and approval pages can
    /// cause it; the bridge stores it after `crate::policy::popup_choice`
    /// (the popup only tightens `config.toml`) and answers with
    /// [`BridgeToExt::SiteRules`].
    SetSiteAccess { origin: String, access: crate::policy::SiteAccess },
}

impl ExtToBridge {
    /// Reads one frame. A snapshot answer — the one frame that can hold
    /// megabytes — is read straight into its shape: serde reads an
    /// internally tagged enum (`type`, then `kind`) by first buffering the
    /// whole value, twice here. Anything else, or a snapshot answer that
    /// does not fit exactly, goes through the generic enum, which accepts
    /// and refuses exactly as before.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        if let Ok(frame) = serde_json::from_str::<SnapshotResponseFrame>(text) {
            let outcome = match frame.outcome {
                SnapshotReply::Ok(ok) => Outcome::Ok(CommandResult::Snapshot { snapshot: ok.snapshot }),
                SnapshotReply::Err(e) => Outcome::Err(e),
            };
            return Ok(ExtToBridge::Response { id: frame.id, outcome });
        }
        serde_json::from_str(text)
    }
}

/// The content script's answer to a snapshot request (`{"ok":{"kind":
/// "snapshot","snapshot":…}}` or `{"err":…}`), read without buffering (see
/// [`ExtToBridge::from_json`]).
pub fn snapshot_outcome_from_json(text: &str) -> Result<Result<PageSnapshot, WireError>, serde_json::Error> {
    Ok(match serde_json::from_str::<SnapshotReply>(text)? {
        SnapshotReply::Ok(ok) => Ok(ok.snapshot),
        SnapshotReply::Err(e) => Err(e),
    })
}

/// A snapshot as the service worker holds it: everything but the nodes
/// read; the nodes, the bulk of it, left as JSON text (in the two-part
/// answer the head's empty `[]`, the nodes themselves staying a JS string:
/// [`frame_around_nodes`]). The bridge reads the whole frame strictly: a
/// frame whose nodes were not one JSON array of nodes is refused there.
pub type PassedSnapshot = PageSnapshot<Box<serde_json::value::RawValue>>;

/// [`snapshot_outcome_from_json`] without reading the nodes: what the
/// service worker needs (url, title, signals) and the nodes as text.
pub fn passed_snapshot_from_json(text: &str) -> Result<Result<PassedSnapshot, WireError>, serde_json::Error> {
    Ok(match serde_json::from_str::<SnapshotReply<Box<serde_json::value::RawValue>>>(text)? {
        SnapshotReply::Ok(ok) => Ok(ok.snapshot),
        SnapshotReply::Err(e) => Err(e),
    })
}

/// The [`ExtToBridge::Response`] frame answering request `id` with this
/// snapshot: the very text `ExtToBridge::Response { id, outcome:
/// Outcome::Ok(CommandResult::Snapshot { snapshot }) }` serialises to, its
/// nodes copied through.
pub fn passed_snapshot_frame(id: u64, snapshot: PassedSnapshot) -> Result<String, serde_json::Error> {
    serde_json::to_string(&SnapshotResponseFrame {
        _type: ResponseTag::Response,
        id,
        outcome: SnapshotReply::Ok(SnapshotOk { _kind: SnapshotTag::Snapshot, snapshot }),
    })
}

/// A snapshot answer as the content script sends it, in two parts: the
/// answer without its nodes (`"nodes":[]`, read by the service worker) and
/// the JSON array of the nodes, which the worker passes on without ever
/// copying it into its own memory ([`frame_around_nodes`]).
pub fn snapshot_reply_parts(snapshot: PageSnapshot) -> Result<(String, String), serde_json::Error> {
    let nodes = serde_json::to_string(&snapshot.nodes)?;
    let head = PageSnapshot { nodes: Vec::new(), ..snapshot };
    Ok((serde_json::to_string(&Outcome::Ok(CommandResult::Snapshot { snapshot: head }))?, nodes))
}

/// The text before and after the nodes in [`passed_snapshot_frame`]'s
/// frame for `snapshot` (its own nodes left out): the frame is `before +
/// nodes + after`, `nodes` being the second part of
/// [`snapshot_reply_parts`]. The bridge reads the whole frame as strictly
/// as any other.
pub fn frame_around_nodes(id: u64, snapshot: PassedSnapshot) -> Result<(String, String), serde_json::Error> {
    // A marker no field before the nodes can hold unescaped: every string
    // there is JSON-escaped, so `"nodes":` first appears as the key.
    const KEY: &str = "\"nodes\":0";
    let marker = serde_json::value::RawValue::from_string("0".to_string())?;
    let frame = passed_snapshot_frame(id, PageSnapshot { nodes: marker, ..snapshot })?;
    let at =
        frame.find(KEY).ok_or_else(|| <serde_json::Error as serde::ser::Error>::custom("no nodes in the frame"))?;
    let (before, after) = frame.split_at(at + KEY.len() - 1);
    Ok((before.to_string(), after[1..].to_string()))
}

/// `ExtToBridge::Response` holding a snapshot, field for field (the
/// order too: [`passed_snapshot_frame`] writes it).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SnapshotResponseFrame<N = Vec<crate::snapshot::Node>> {
    #[serde(rename = "type")]
    _type: ResponseTag,
    id: u64,
    outcome: SnapshotReply<N>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ResponseTag {
    Response,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SnapshotReply<N = Vec<crate::snapshot::Node>> {
    Ok(SnapshotOk<N>),
    Err(WireError),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SnapshotOk<N = Vec<crate::snapshot::Node>> {
    #[serde(rename = "kind")]
    _kind: SnapshotTag,
    snapshot: PageSnapshot<N>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SnapshotTag {
    Snapshot,
}

/// The service worker → content script message (`chrome.tabs.sendMessage`);
/// the content script answers with an [`Outcome`] as JSON text (a
/// snapshot in two parts: [`snapshot_reply_parts`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PageRequest {
    Snapshot {
        #[serde(default)]
        request: SnapshotRequest,
    },
    ExtractText {
        #[serde(default)]
        request: TextRequest,
    },
    /// `history.go(delta)`: used when `chrome.tabs.goBack/goForward` refuse
    /// entries that Chrome's history intervention marks as skippable.
    History { delta: i32 },
    /// One action the service worker has gated, on the element it
    /// classified (`verify`: acted on only while the live element still
    /// resolves to exactly these facts).
    Act { target: Option<String>, action: crate::action::Action, verify: Option<Box<crate::action::ResolvedElement>> },
    /// While an approval waits: scroll the element behind `target` (the
    /// focused element when absent) into view and outline it with an
    /// overlay the page cannot read; answered with
    /// [`CommandResult::Highlighted`]. `show: false` removes the overlay.
    Highlight { target: Option<String>, show: bool },
    /// Find a flow step's recorded element on the live page
    /// (`crate::replay::choose`), answered with [`CommandResult::Located`].
    Locate { target: crate::flow::Descriptor },
    /// The page's challenge signals (`crate::challenge::PageSignals`,
    /// gathered by the content script's own bounded scan), answered with
    /// [`CommandResult::Signals`]: the worker decides before dispatching
    /// an action and after a page load.
    Signals {},
    /// Facts about the element behind a ref (or the focused element) and
    /// the page's challenge signals (as [`PageRequest::Signals`]) read at
    /// the same moment, in one round trip: answered with
    /// [`CommandResult::ElementSignals`].
    ResolveWithSignals { target: Option<String> },
    /// Stages part of file `file` of the next upload in the page (`first`
    /// starts the file over); the next `Act` with `Action::UploadFiles`
    /// takes the staged files, whose sizes must match.
    UploadPart { file: u32, data: String, first: bool },
    /// "Record me" on or off in this page (`keep_text`: typed values are
    /// reported, except in sensitive fields); answered with
    /// [`CommandResult::Recording`].
    Record { on: bool, keep_text: bool },
}

impl PageRequest {
    /// Whether the worker may send this request again when it cannot tell
    /// if the page got it (the document's port closed before an answer).
    /// Only reads may: an action, a history step, an upload part or a
    /// recording switch could happen twice, or happen to the next document.
    pub fn may_repeat(&self) -> bool {
        match self {
            PageRequest::Snapshot { .. }
            | PageRequest::ExtractText { .. }
            | PageRequest::Locate { .. }
            | PageRequest::Signals {}
            | PageRequest::ResolveWithSignals { .. }
            | PageRequest::Highlight { .. } => true,
            PageRequest::Act { .. }
            | PageRequest::History { .. }
            | PageRequest::UploadPart { .. }
            | PageRequest::Record { .. } => false,
        }
    }
}

/// Result of one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok(CommandResult),
    Err(WireError),
}

/// Bridge → extension. Not `Clone`: a [`BridgeToExt::Secret`] is sent
/// once and never copied.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum BridgeToExt {
    /// Sent once the hello was accepted.
    Welcome {
        version: String,
        /// How long a hand-off waits for the person (`human_timeout_secs`
        /// in `config.toml`; the extension clamps it to
        /// `shared::limits::MIN/MAX_HUMAN_TIMEOUT_SECS`).
        human_timeout_secs: u32,
    },
    Pong {
        seq: u64,
    },
    Request {
        id: u64,
        /// Boxed: an `Act` is far larger than the other frames.
        command: Box<Command>,
    },
    /// The value for an [`ExtToBridge::SecretRequest`]: the only frame that
    /// ever carries a secret's value.
    Secret {
        request: u64,
        value: crate::action::SecretText,
    },
    /// The answer to [`ExtToBridge::Proceeding`]: `go` only while that
    /// `Act` still waits in the bridge, once; otherwise it must not run
    /// (the agent has already been told it did not).
    Proceed {
        request: u64,
        go: bool,
    },
    /// No value for an [`ExtToBridge::SecretRequest`] (no such `Act` waits
    /// on this connection, the value was already sent, the origin is not
    /// the secret's…); the `Act` fails with `error`.
    SecretRefused {
        request: u64,
        error: WireError,
    },
    /// Another socket presented the extension token while this connection
    /// was live, and was refused; `total` counts refusals since the daemon
    /// started.
    SecondBrowserRefused {
        refused: RefusedBrowser,
        total: u64,
    },
    /// Part of file `file` (index into the `Act`'s files) of the upload
    /// `upload`: at most `crate::files::UPLOAD_CHUNK_BYTES` bytes, base64;
    /// chunks come in order; `last` ends the upload.
    UploadChunk {
        upload: u64,
        file: u32,
        data: String,
        last: bool,
    },
    /// No bytes for an [`ExtToBridge::UploadRequest`]; the `Act` fails
    /// with `error`.
    UploadRefused {
        upload: u64,
        error: WireError,
    },
    /// What to do with the download `id` the extension reported.
    Download {
        id: u64,
        verdict: crate::files::DownloadVerdict,
    },
    /// Every open MCP session and its tabs (`crate::sessions`), sent after
    /// the welcome when there are any and on every change: each session's
    /// tabs in its own tab group, the popup's agent list. A tab in no
    /// session's list is the person's (ungrouped by the extension if it
    /// grouped it).
    Sessions {
        sessions: Vec<crate::sessions::SessionInfo>,
    },
    /// Every rule that sets a site's access (`config.toml` and the
    /// popup's), sent after the welcome and on every change: the popup's
    /// "This site" section decides from it with
    /// `crate::policy::SiteRules::access_for`, as the bridge does.
    SiteRules {
        rules: crate::policy::SiteRules,
    },
}

/// WebSocket close code of an `/ext` socket refused because another
/// browser is connected (the private-use range 4000–4999).
pub const ANOTHER_BROWSER_CLOSE_CODE: u16 = 4001;
/// The close reason sent with [`ANOTHER_BROWSER_CLOSE_CODE`].
pub const ANOTHER_BROWSER_CLOSE_REASON: &str = "another browser is connected to this bridge";

/// One refused second browser.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedBrowser {
    /// When, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The extension version its hello claimed (anyone with the token can
    /// claim any version).
    pub extension_version: String,
}

/// Refused second browsers since the daemon started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedBrowsers {
    pub total: u64,
    /// The most recent ones, oldest first (at most
    /// [`MAX_REMEMBERED_REFUSALS`]).
    pub recent: Vec<RefusedBrowser>,
}

/// Refusals the bridge remembers in detail.
pub const MAX_REMEMBERED_REFUSALS: usize = 10;

/// What the extension answers. `Image` is a screenshot: base64 PNG (no
/// `data:` prefix) and the page URL it shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CommandResult {
    Tabs {
        tabs: Vec<TabInfo>,
    },
    Tab {
        tab: TabInfo,
    },
    Closed {
        tab: TabId,
    },
    Snapshot {
        snapshot: PageSnapshot,
    },
    Text {
        text: PageText,
    },
    Element {
        element: crate::action::ResolvedElement,
    },
    Acted {
        report: crate::action::ActReport,
    },
    Image {
        png_base64: String,
        url: String,
    },
    /// Where the highlighted element is, so the approval window can be
    /// placed beside it (`None` when nothing is outlined).
    Highlighted {
        at: Option<ElementBox>,
    },
    /// The answer to [`PageRequest::Signals`] (never sent to the bridge).
    Signals {
        signals: Box<crate::challenge::PageSignals>,
    },
    /// The answer to [`PageRequest::ResolveWithSignals`] (never sent to
    /// the bridge).
    ElementSignals {
        element: crate::action::ResolvedElement,
        signals: Box<crate::challenge::PageSignals>,
    },
    /// The answer to [`PageRequest::Record`] (never sent to the bridge):
    /// whether the page now records.
    Recording {
        on: bool,
    },
    /// The answer to [`Command::Locate`] / [`PageRequest::Locate`].
    Located {
        located: crate::replay::Located,
    },
    /// The person approved a [`Command::AskPerson`].
    Answered {
        decided_by: crate::audit::DecidedBy,
    },
    /// The person handed the tab back ([`Command::Handoff`]): how long
    /// the agent waited and where the tab is now.
    HandedBack {
        waited_ms: u64,
        tab: TabInfo,
    },
}

/// A rectangle in pixels (CSS pixels at 100% zoom, which are the screen
/// pixels `chrome.windows` uses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rect {
    pub left: i32,
    pub top: i32,
    pub width: i32,
    pub height: i32,
}

/// An element's box as its page sees it: in the viewport, with the
/// viewport's size, the window as the page knows it (`screenX`,
/// `screenY`, `outerWidth`, `outerHeight` — zeros where the browser does
/// not tell, e.g. headed without a window manager) and the screen's
/// available area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElementBox {
    pub element: Rect,
    pub viewport_width: i32,
    pub viewport_height: i32,
    pub window: Rect,
    pub screen: Rect,
}

impl ElementBox {
    /// The element's box on the screen: the window's position (`window`,
    /// from `chrome.windows` when the worker has it, else what the page
    /// saw) plus the browser's frame around the viewport (borders at the
    /// sides and bottom alike, the rest — tabs, toolbar — above) plus the
    /// box in the viewport.
    pub fn on_screen(&self, window: Option<Rect>) -> ScreenPlace {
        let w = window.filter(|w| w.width > 0 && w.height > 0).unwrap_or(self.window);
        let side = ((w.width - self.viewport_width) / 2).max(0);
        let top_frame = (w.height - self.viewport_height - side).max(0);
        ScreenPlace {
            left: w.left + side + self.element.left,
            top: w.top + top_frame + self.element.top,
            width: self.element.width,
            height: self.element.height,
            screen_left: self.screen.left,
            screen_top: self.screen.top,
            screen_width: self.screen.width,
            screen_height: self.screen.height,
        }
    }
}

/// An element's box and the screen's available area, in screen pixels
/// (CSS pixels at 100% zoom), as the page sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenPlace {
    pub left: i32,
    pub top: i32,
    pub width: i32,
    pub height: i32,
    pub screen_left: i32,
    pub screen_top: i32,
    pub screen_width: i32,
    pub screen_height: i32,
}

impl ScreenPlace {
    /// Where a `width` × `height` window goes so that it does not cover
    /// the element: at the screen's edge on the side away from it (the
    /// side with more room when the element is central), vertically
    /// centred on the element and kept on the screen. `(left, top)`.
    pub fn window_beside(&self, width: i32, height: i32) -> (i32, i32) {
        let room_left = self.left - self.screen_left;
        let room_right = (self.screen_left + self.screen_width) - (self.left + self.width);
        let max_left = (self.screen_left + self.screen_width - width).max(self.screen_left);
        let left = if room_right >= room_left { max_left } else { self.screen_left };
        let centre = self.top + self.height / 2;
        let max_top = (self.screen_top + self.screen_height - height).max(self.screen_top);
        let top = (centre - height / 2).clamp(self.screen_top, max_top);
        (left, top)
    }
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

/// What the native host answers: where the bridge listens, the extension
/// token for `/ext`, and whether the browser that started the host runs
/// headless (`shared::handoff::env_says_headless`; absent: headed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum NativeReply {
    Bridge {
        port: u16,
        token: String,
        version: String,
        #[serde(default)]
        headless: bool,
    },
    Error {
        message: String,
    },
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
    /// At most one: the bridge serves one browser at a time.
    pub browsers: Vec<BrowserStatus>,
    /// Second browsers refused while one was connected (absent from a
    /// daemon that predates the field: none).
    #[serde(default)]
    pub refused: RefusedBrowsers,
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
    fn only_reads_are_sent_again_after_a_port_closed() {
        // (request as the worker sends it, may it be repeated)
        let cases = [
            (r#"{"type":"snapshot"}"#, true),
            (r#"{"type":"extract_text"}"#, true),
            (r#"{"type":"signals"}"#, true),
            (r#"{"type":"resolve_with_signals","target":"e3"}"#, true),
            (r#"{"type":"highlight","target":"e3","show":true}"#, true),
            (r#"{"type":"act","target":"e3","action":{"kind":"click"}}"#, false),
            (r#"{"type":"history","delta":-1}"#, false),
            (r#"{"type":"upload_part","file":0,"data":"","first":true}"#, false),
            (r#"{"type":"record","on":true,"keep_text":false}"#, false),
        ];
        for (json, repeat) in cases {
            let req: PageRequest = serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"));
            assert_eq!(req.may_repeat(), repeat, "{json}");
        }
    }

    fn overlaps(a: (i32, i32, i32, i32), b: (i32, i32, i32, i32)) -> bool {
        a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
    }

    #[test]
    fn an_element_box_is_placed_on_the_screen_through_its_window() {
        let b = ElementBox {
            element: Rect { left: 24, top: 500, width: 80, height: 20 },
            viewport_width: 1000,
            viewport_height: 813,
            // Headed without a window manager: the page is told nothing.
            window: Rect::default(),
            screen: Rect { left: 0, top: 0, width: 1600, height: 1000 },
        };
        // From chrome.windows: 1000×900 at (200, 50): no side border, 87 px above.
        let p = b.on_screen(Some(Rect { left: 200, top: 50, width: 1000, height: 900 }));
        assert_eq!((p.left, p.top, p.width, p.height), (224, 637, 80, 20));
        // Without it, the page's own (empty) idea: the viewport at the origin.
        let p = b.on_screen(None);
        assert_eq!((p.left, p.top), (24, 500));
        // A window with 8 px borders: 8 at the side, the rest above.
        let b = ElementBox { window: Rect { left: 10, top: 20, width: 1016, height: 921 }, ..b };
        let p = b.on_screen(None);
        assert_eq!((p.left, p.top), (10 + 8 + 24, 20 + (921 - 813 - 8) + 500));
    }

    #[test]
    fn the_approval_window_goes_beside_the_element_not_over_it() {
        let screen = |left, top, width, height| ScreenPlace {
            left,
            top,
            width,
            height,
            screen_left: 0,
            screen_top: 0,
            screen_width: 1280,
            screen_height: 800,
        };
        // A "Buy now" on the left, one on the right, one low, one near the middle.
        for el in
            [screen(40, 300, 120, 40), screen(1100, 120, 120, 40), screen(300, 760, 100, 30), screen(560, 380, 160, 40)]
        {
            let (left, top) = el.window_beside(480, 600);
            let win = (left, top, 480, 600);
            assert!(!overlaps(win, (el.left, el.top, el.width, el.height)), "{el:?} covered by {win:?}");
            assert!(left >= 0 && left + 480 <= 1280 && top >= 0 && top + 600 <= 800, "{win:?} off the screen");
        }
        // A screen with an offset (second monitor, taskbar on top).
        let el = ScreenPlace { screen_left: 1280, screen_top: 40, ..screen(1300, 500, 100, 30) };
        let (left, top) = el.window_beside(480, 600);
        assert_eq!((left, top), (1280 + 1280 - 480, 215));
    }

    #[test]
    fn frames_round_trip_in_their_documented_shape() {
        let hello: ExtToBridge = serde_json::from_str(r#"{"type":"hello","token":"abc","version":"0.1.0"}"#).unwrap();
        assert_eq!(hello, ExtToBridge::Hello { token: "abc".into(), version: "0.1.0".into() });

        let resp = ExtToBridge::Response { id: 7, outcome: Outcome::Ok(CommandResult::Closed { tab: 3 }) };
        let json = serde_json::to_string(&resp).unwrap();
        assert_eq!(json, r#"{"type":"response","id":7,"outcome":{"ok":{"kind":"closed","tab":3}}}"#);
        assert_eq!(serde_json::from_str::<ExtToBridge>(&json).unwrap(), resp);

        let req = BridgeToExt::Request {
            id: 1,
            command: Box::new(Command::Navigate { tab: 5, url: "https://a.example/".into() }),
        };
        let json = serde_json::to_string(&req).unwrap();
        assert_eq!(
            json,
            r#"{"type":"request","id":1,"command":{"cmd":"navigate","tab":5,"url":"https://a.example/"}}"#
        );
    }

    #[test]
    fn snapshot_answers_read_directly_match_the_generic_reading() {
        let snapshot = PageSnapshot {
            url: "https://a.example/".into(),
            title: "A".into(),
            nodes: vec![crate::snapshot::Node {
                depth: 1,
                role: "button".into(),
                name: "Go".into(),
                element_ref: Some("e1".into()),
                ..Default::default()
            }],
            challenge: None,
            signals: None,
            partial: true,
        };
        let frames = [
            ExtToBridge::Response {
                id: 9,
                outcome: Outcome::Ok(CommandResult::Snapshot { snapshot: snapshot.clone() }),
            },
            ExtToBridge::Response {
                id: 10,
                outcome: Outcome::Err(WireError::new(crate::error::ErrorCode::StaleRef, "gone")),
            },
            ExtToBridge::Response { id: 11, outcome: Outcome::Ok(CommandResult::Closed { tab: 3 }) },
            ExtToBridge::Ping { seq: 4 },
        ];
        for frame in frames {
            let json = serde_json::to_string(&frame).unwrap();
            assert_eq!(ExtToBridge::from_json(&json).unwrap(), frame, "{json}");
            assert_eq!(serde_json::from_str::<ExtToBridge>(&json).unwrap(), frame, "{json}");
        }
        // Fields in another order read the same.
        let reordered = r#"{"outcome":{"ok":{"snapshot":{"nodes":[],"title":"","url":"u"},"kind":"snapshot"}},"id":2,"type":"response"}"#;
        assert!(matches!(
            ExtToBridge::from_json(reordered).unwrap(),
            ExtToBridge::Response { id: 2, outcome: Outcome::Ok(CommandResult::Snapshot { .. }) }
        ));
        // Whatever the generic reading refuses, the direct one refuses too.
        for bad in [
            r#"{"type":"response","id":2,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[],"title":"","url":"u"},"approve":true}}}"#,
            r#"{"type":"response","id":2,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[],"title":"","url":"u","x":1}}}}"#,
            r#"{"type":"response","id":2,"extra":1,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[],"title":"","url":"u"}}}}"#,
            r#"{"type":"response","id":2,"id":3,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[],"title":"","url":"u"}}}}"#,
            r#"{"type":"request","id":2,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[],"title":"","url":"u"}}}}"#,
            r#"{"type":"response","id":2,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[[1,"button","Go","e1",{"zz":1}]],"title":"","url":"u"}}}}"#,
            r#"{"type":"response","id":2,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[[1,"button","Go","e1",{},6]],"title":"","url":"u"}}}}"#,
            r#"{"type":"response","id":2,"outcome":{"ok":{"kind":"snapshot","snapshot":{"nodes":[{"r":"button"}],"title":"","url":"u"}}}}"#,
        ] {
            assert!(serde_json::from_str::<ExtToBridge>(bad).is_err(), "generic reading accepted {bad}");
            assert!(ExtToBridge::from_json(bad).is_err(), "direct reading accepted {bad}");
        }
        assert_eq!(
            snapshot_outcome_from_json(
                &serde_json::to_string(&Outcome::Ok(CommandResult::Snapshot { snapshot: snapshot.clone() })).unwrap()
            )
            .unwrap()
            .unwrap(),
            snapshot
        );
    }

    #[test]
    fn a_passed_snapshot_is_the_frame_the_typed_one_would_be() {
        let signals = crate::challenge::PageSignals {
            url: "https://a.example/login".into(),
            title: "Sign in".into(),
            headings: vec!["Sign in".into()],
            buttons: vec!["Sign in".into()],
            inputs: vec![crate::challenge::InputSignal { input_type: "password".into(), ..Default::default() }],
            ..Default::default()
        };
        let mut typed = PageSnapshot {
            url: "https://a.example/login".into(),
            title: "Sign in \"now\" \u{1f600}".into(),
            nodes: vec![
                crate::snapshot::Node {
                    role: "heading".into(),
                    name: "Sign in".into(),
                    level: Some(1),
                    ..Default::default()
                },
                crate::snapshot::Node {
                    depth: 1,
                    role: "textbox".into(),
                    name: "Pass\u{2028}word \"x\"".into(),
                    element_ref: Some("e1".into()),
                    ..Default::default()
                },
            ],
            challenge: None,
            signals: Some(Box::new(signals)),
            partial: true,
        };
        let answer = serde_json::to_string(&Outcome::Ok(CommandResult::Snapshot { snapshot: typed.clone() })).unwrap();
        let mut passed = passed_snapshot_from_json(&answer).unwrap().unwrap();
        passed.decide_challenge();
        typed.decide_challenge();
        assert!(typed.challenge.is_some() && passed.challenge == typed.challenge, "the worker decides as before");
        assert!(passed.signals.is_none(), "signals never go on to the bridge");
        let frame = passed_snapshot_frame(4, passed).unwrap();
        let expected =
            ExtToBridge::Response { id: 4, outcome: Outcome::Ok(CommandResult::Snapshot { snapshot: typed }) };
        assert_eq!(frame, serde_json::to_string(&expected).unwrap());
        assert_eq!(ExtToBridge::from_json(&frame).unwrap(), expected);
        // Errors and answers that are not JSON stay what they were.
        let err = r#"{"err":{"code":"STALE_REF","message":"gone"}}"#;
        assert!(matches!(passed_snapshot_from_json(err), Ok(Err(e)) if e.code == crate::error::ErrorCode::StaleRef));
        for bad in [r#"{"ok":{"kind":"snapshot","snapshot":{"url":"u","title":"","nodes":[}}}"#, "", "{\"ok\":1}"] {
            assert!(passed_snapshot_from_json(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_snapshot_in_two_parts_makes_the_same_frame() {
        let node = |role: &'static str, name: &str| crate::snapshot::Node {
            role: role.into(),
            name: name.into(),
            element_ref: Some("e3".into()),
            ..Default::default()
        };
        for title in ["Plain", "\"nodes\":0", "x\",\"nodes\":0,\"y", "\\\"nodes\\\":0 \u{2028}"] {
            for nodes in [vec![], vec![node("button", "\"nodes\":0"), node("link", "a]}")]] {
                let typed = PageSnapshot {
                    url: format!("https://a.example/?q=\"nodes\":0&t={title}"),
                    title: title.into(),
                    nodes,
                    challenge: None,
                    signals: None,
                    partial: false,
                };
                let (head, nodes) = snapshot_reply_parts(typed.clone()).unwrap();
                assert!(head.contains(r#""nodes":[]"#), "{head}");
                let mut passed = passed_snapshot_from_json(&head).unwrap().unwrap();
                passed.decide_challenge();
                let (before, after) = frame_around_nodes(8, passed).unwrap();
                let frame = format!("{before}{nodes}{after}");
                let expected =
                    ExtToBridge::Response { id: 8, outcome: Outcome::Ok(CommandResult::Snapshot { snapshot: typed }) };
                assert_eq!(frame, serde_json::to_string(&expected).unwrap(), "{title}");
                assert_eq!(ExtToBridge::from_json(&frame).unwrap(), expected);
            }
        }
    }

    #[test]
    fn page_requests_have_their_documented_shape() {
        let act = PageRequest::Act { target: Some("e3".into()), action: crate::action::Action::Click, verify: None };
        let json = serde_json::to_string(&act).unwrap();
        assert_eq!(json, r#"{"type":"act","target":"e3","action":{"kind":"click"},"verify":null}"#);
        assert_eq!(serde_json::from_str::<PageRequest>(&json).unwrap(), act);
        let snap: PageRequest = serde_json::from_str(r#"{"type":"snapshot"}"#).unwrap();
        assert_eq!(snap, PageRequest::Snapshot { request: SnapshotRequest::default() });
        // Nothing but the worker's own shapes: no extra field can ride along.
        assert!(serde_json::from_str::<PageRequest>(r#"{"type":"resolve","target":"e1","approved":true}"#).is_err());
        assert!(serde_json::from_str::<PageRequest>(r#"{"type":"evaluate","js":"1"}"#).is_err());
    }

    #[test]
    fn secret_frames_have_their_documented_shape() {
        let ask: ExtToBridge =
            serde_json::from_str(r#"{"type":"secret_request","request":7,"origin":"https://a.example:443"}"#).unwrap();
        assert_eq!(ask, ExtToBridge::SecretRequest { request: 7, origin: "https://a.example:443".into() });
        let value = BridgeToExt::Secret { request: 7, value: crate::action::SecretText::new("CANARY-v".into()) };
        let json = serde_json::to_string(&value).unwrap();
        assert_eq!(json, r#"{"type":"secret","request":7,"value":"CANARY-v"}"#);
        assert_eq!(serde_json::from_str::<BridgeToExt>(&json).unwrap(), value);
        assert!(!format!("{value:?}").contains("CANARY"), "Debug prints the value: {value:?}");
        let refused = BridgeToExt::SecondBrowserRefused {
            refused: RefusedBrowser { at_ms: 1_700_000_000_000, extension_version: "0.1.0".into() },
            total: 2,
        };
        let json = serde_json::to_string(&refused).unwrap();
        assert_eq!(
            json,
            r#"{"type":"second_browser_refused","refused":{"at_ms":1700000000000,"extension_version":"0.1.0"},"total":2}"#
        );
        assert!(
            serde_json::from_str::<ExtToBridge>(r#"{"type":"secret_request","request":7,"origin":"o","name":"X"}"#)
                .is_err()
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
