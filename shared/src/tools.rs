//! Arguments of the agent's MCP tools (docs/design.md, "The agent's tools").
//! Unknown fields are refused, so no argument can smuggle in a risk level or
//! an approval.

use serde::{Deserialize, Serialize};

use crate::protocol::{HistoryStep, TabId};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum TabsAction {
    /// Tabs this agent opened.
    List,
    /// Open a new tab (optionally at `url`) and make it current.
    New,
    /// Make `tab` the current tab.
    Select,
    /// Close `tab`: a tab the agent opened at once; any other tab only
    /// after the person approves it (high risk).
    Close,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TabsArgs {
    pub action: TabsAction,
    /// Tab id for `select` and `close`.
    #[serde(default)]
    pub tab: Option<TabId>,
    /// http(s) URL for `new`.
    #[serde(default)]
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NavigateArgs {
    /// http(s) URL to load. Give either `url` or `step`.
    #[serde(default)]
    pub url: Option<String>,
    /// `back`, `forward` or `reload` instead of a URL.
    #[serde(default)]
    pub step: Option<HistoryStep>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SnapshotArgs {
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
    /// Only the subtree of this element ref (e.g. `e12`).
    #[serde(default)]
    pub scope: Option<String>,
    /// Characters per page of output (default 20000).
    #[serde(default)]
    pub max_chars: Option<usize>,
    /// 1-based page of a long snapshot.
    #[serde(default)]
    pub page: Option<usize>,
    /// Only elements that can be acted on (plus headings).
    #[serde(default)]
    pub interactive_only: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ExtractTextArgs {
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
    /// Only the text inside this element ref (e.g. `e12`).
    #[serde(default, rename = "ref")]
    pub element_ref: Option<String>,
    /// Most characters to return (default 20000).
    #[serde(default)]
    pub max_chars: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatusArgs {}

/// Longest `browser_wait_for` wait, in milliseconds.
pub const MAX_WAIT_MS: u64 = 30_000;
/// `browser_wait_for` without `ms` waits at most this long for its text.
pub const DEFAULT_WAIT_MS: u64 = 5_000;
/// Longest text one `browser_type`/`fill_form` field may carry.
pub const MAX_TYPED_CHARS: usize = 10_000;
/// Most fields of one `browser_fill_form`.
pub const MAX_FORM_FIELDS: usize = 50;
/// Most options of one `browser_select_option`.
pub const MAX_OPTIONS: usize = 50;

/// Where a typed value comes from: a plain string, or `{"secret": "NAME"}`
/// — a value the person stored with `chaperone secret set NAME`, resolved by
/// the bridge only when the action runs and sent only in the one message
/// that fills the field. (`{"param": "NAME"}` for flows becomes a further
/// variant, so the field's shape never changes for agents.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ValueSource {
    /// The text itself. Refused for sensitive fields (API tokens, PINs,
    /// one-time codes…): use a secret there.
    Literal(String),
    /// A stored secret, by name.
    Secret(SecretRef),
}

/// `{"secret": "NAME"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SecretRef {
    /// Name given to `chaperone secret set` (`[A-Za-z0-9_.-]{1,64}`).
    pub secret: String,
}

/// Whether `name` can name a secret (the rule lives in [`crate::names`]).
pub use crate::names::is_valid_secret_name;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClickArgs {
    /// Element ref from the latest snapshot (e.g. `e12`).
    #[serde(rename = "ref")]
    pub element_ref: String,
    /// Why you click, in a few words (shown to the person when asked).
    #[serde(default)]
    pub intent: Option<String>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TypeArgs {
    /// Ref of a text field (e.g. `e12`).
    #[serde(rename = "ref")]
    pub element_ref: String,
    /// The text that replaces the field's value.
    pub text: ValueSource,
    /// Press Enter afterwards (may submit the form).
    #[serde(default)]
    pub submit: Option<bool>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FormField {
    /// Ref of a text field (e.g. `e12`).
    #[serde(rename = "ref")]
    pub element_ref: String,
    /// The text that replaces the field's value.
    pub value: ValueSource,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FillFormArgs {
    /// Fields in the order they are filled.
    pub fields: Vec<FormField>,
    /// Press Enter in the last field afterwards (may submit the form).
    #[serde(default)]
    pub submit: Option<bool>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SelectOptionArgs {
    /// Ref of a select or listbox (e.g. `e12`).
    #[serde(rename = "ref")]
    pub element_ref: String,
    /// Options to choose, by value or visible label.
    pub values: Vec<String>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PressKeyArgs {
    /// A key as in `KeyboardEvent.key` (`Enter`, `Tab`, `ArrowDown`, `a`),
    /// optionally with modifiers (`Shift+Enter`, `Control+a`).
    pub key: String,
    /// Element to press it on; the focused element when absent.
    #[serde(default, rename = "ref")]
    pub element_ref: Option<String>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// Direction of `browser_scroll` (without a ref: by one screen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ScrollArgDirection {
    Up,
    Down,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScrollArgs {
    /// Element to bring into view (or to scroll inside, with `direction`).
    #[serde(default, rename = "ref")]
    pub element_ref: Option<String>,
    /// `up` or `down` by one screen; into view when only `ref` is given.
    #[serde(default)]
    pub direction: Option<ScrollArgDirection>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HoverArgs {
    /// Element ref (e.g. `e12`).
    #[serde(rename = "ref")]
    pub element_ref: String,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WaitForArgs {
    /// Wait until this text is visible on the page.
    #[serde(default)]
    pub text: Option<String>,
    /// Wait until this text is no longer visible.
    #[serde(default)]
    pub gone: Option<String>,
    /// Milliseconds: with `text`/`gone` the longest wait (default 5000),
    /// alone a plain pause. At most 30000.
    #[serde(default)]
    pub ms: Option<u64>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ScreenshotArgs {
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// `browser_handoff`: hand the tab to the person until they press Done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HandoffArgs {
    /// What the person should do, in your words (at most 300 characters);
    /// shown to them in quotes.
    pub reason: String,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// `browser_upload_file`: set files on one `<input type=file>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UploadFileArgs {
    /// Ref of the file input (e.g. `e12`).
    #[serde(rename = "ref")]
    pub element_ref: String,
    /// Absolute paths of the files, inside a folder the person allowed
    /// (`[uploads] allowed_dirs` in config.toml); more than one only for
    /// an input that takes several.
    pub paths: Vec<String>,
    /// Why you upload, in a few words (shown to the person when asked).
    #[serde(default)]
    pub intent: Option<String>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// `browser_downloads`: this session's downloads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DownloadsArgs {
    /// Only the downloads of this tab.
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// `browser_network_requests`: the requests of this session's tabs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetworkRequestsArgs {
    /// Only this tab's requests (one of yours).
    #[serde(default)]
    pub tab: Option<TabId>,
    /// A substring of the URL, or a regular expression between slashes
    /// (`/api\/items\/\d+/`).
    #[serde(default)]
    pub filter: Option<String>,
    /// Only this method (GET, POST…).
    #[serde(default)]
    pub method: Option<String>,
    /// `200`, a class such as `4xx`, or `failed`.
    #[serde(default)]
    pub status: Option<String>,
    /// Resource types to list (`xmlhttprequest`, `main_frame`, `image`,
    /// `script`, `stylesheet`, `font`, `ping`, `other`, or `static` for all
    /// static files). Static files are left out unless named here.
    #[serde(default)]
    pub types: Vec<String>,
    /// Page of the listing, from 1 (100 lines a page).
    #[serde(default)]
    pub page: Option<u32>,
}

/// `browser_network_request`: one request in full, or one part of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetworkRequestArgs {
    /// The request's id (`#id` in browser_network_requests).
    pub id: u64,
    /// Only this part: request-headers, request-body, response-headers or
    /// response-body.
    #[serde(default)]
    pub part: Option<crate::network::Part>,
    /// Show values unredacted. Refused (PERMISSION_DENIED) unless the
    /// person started the daemon with `--allow-reveal`; audited.
    #[serde(default)]
    pub reveal: bool,
}

/// `browser_network_export`: this session's requests as a HAR 1.2 file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetworkExportArgs {
    /// Only this tab's requests.
    #[serde(default)]
    pub tab: Option<TabId>,
    /// A URL substring or `/regex/`, as in browser_network_requests.
    #[serde(default)]
    pub filter: Option<String>,
    /// The file's name in the exports folder (`.har` is added; any folder
    /// part is dropped).
    #[serde(default)]
    pub name: Option<String>,
}

/// `flow_list`: the person's saved flows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlowListArgs {}

/// `flow_show` / `flow_delete`: one flow by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlowNameArgs {
    /// The flow's name, as `flow_list` gives it.
    pub name: String,
}

/// `flow_run`: replay a flow, every step through the gate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FlowRunArgs {
    pub name: String,
    /// Values of the flow's parameters (`flow_show` lists them), as text.
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, String>,
    /// Parameters of sensitive fields, each as `{"secret": "NAME"}` (a
    /// secret the person stored with `chaperone secret set NAME`).
    #[serde(default)]
    pub secrets: std::collections::BTreeMap<String, SecretRef>,
    /// Tab id; the current tab when absent (a flow that starts with a
    /// navigation opens one when there is none).
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// A ref as the agent writes it: `e` followed by digits.
pub fn is_valid_ref(r: &str) -> bool {
    r.len() >= 2 && r.len() <= 12 && r.starts_with('e') && r[1..].bytes().all(|b| b.is_ascii_digit())
}

/// What `browser_act` does with the element the model picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ActAction {
    Click,
    Type,
    SelectOption,
    Hover,
    PressKey,
}

/// `browser_act`: a local model picks the element `intent` means among
/// the page's elements; the action then runs as `browser_click` etc. would.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ActArgs {
    pub action: ActAction,
    /// The element you mean, in words ("the Save button of the billing form").
    pub intent: String,
    /// For `type`: a literal or `{"secret": NAME}`, as in `browser_type`.
    #[serde(default)]
    pub text: Option<ValueSource>,
    /// For `select_option`: options by value or visible label.
    #[serde(default)]
    pub values: Option<Vec<String>>,
    /// For `press_key`: a key as in `browser_press_key`.
    #[serde(default)]
    pub key: Option<String>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// `browser_run_goal`: the local model carries out a routine task step by
/// step; input values are filled by code, never shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunGoalArgs {
    /// What to do, in words ("sign up for the newsletter").
    pub goal: String,
    /// Values by key (`[A-Za-z0-9_.-]{1,64}`): a literal or `{"secret": NAME}`.
    /// The model sees only the keys.
    #[serde(default)]
    pub inputs: std::collections::BTreeMap<String, ValueSource>,
    /// Most steps (default 8, at most 20).
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// Tab id; the current tab when absent.
    #[serde(default)]
    pub tab: Option<TabId>,
}

/// `api_learn`: an OpenAPI 3.1 description learned from this session's
/// own network capture, written into the exports folder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApiLearnArgs {
    /// Keep only this host (`host` or `host:port`); default: the hosts that
    /// answered JSON.
    #[serde(default)]
    pub host: Option<String>,
    /// The file's name in the exports folder (`.json` is added unless it
    /// ends in `.yaml`/`.yml`; any folder part is dropped).
    #[serde(default)]
    pub name: Option<String>,
}

/// The language of a generated API client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ApiClientLang {
    Python,
    Typescript,
}

/// `api_client`: a client (with its tests) of a description in the
/// exports folder, written into a folder next to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApiClientArgs {
    /// A description's file name in the exports folder (as `api_learn`
    /// returned it; any folder part is dropped).
    pub spec: String,
    pub lang: ApiClientLang,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_arguments_refuse_unknown_fields() {
        assert!(serde_json::from_str::<NavigateArgs>(r#"{"url":"http://a.b/","skip_confirmation":true}"#).is_err());
        assert!(serde_json::from_str::<SnapshotArgs>(r#"{"risk":"low"}"#).is_err());
        let args: TabsArgs = serde_json::from_str(r#"{"action":"new","url":"http://a.b/"}"#).unwrap();
        assert_eq!(args.action, TabsAction::New);
    }

    #[test]
    fn action_arguments_cannot_carry_risk_or_approval() {
        for bad in [
            r#"{"ref":"e1","risk":"low"}"#,
            r#"{"ref":"e1","approved":true}"#,
            r#"{"ref":"e1","skip_confirmation":true}"#,
            r#"{"ref":"e1","decision":"allow"}"#,
        ] {
            assert!(serde_json::from_str::<ClickArgs>(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<HoverArgs>(bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<FillFormArgs>(r#"{"fields":[{"ref":"e1","value":"x","risk":"low"}]}"#).is_err());
        let a: ClickArgs = serde_json::from_str(r#"{"ref":"e1","intent":"open the menu"}"#).unwrap();
        assert_eq!(a.element_ref, "e1");
    }

    #[test]
    fn values_are_literals_or_named_secrets() {
        let a: TypeArgs = serde_json::from_str(r#"{"ref":"e3","text":"hello","submit":true}"#).unwrap();
        assert_eq!(a.text, ValueSource::Literal("hello".into()));
        let a: TypeArgs = serde_json::from_str(r#"{"ref":"e3","text":{"secret":"GITHUB"}}"#).unwrap();
        assert_eq!(a.text, ValueSource::Secret(SecretRef { secret: "GITHUB".into() }));
        // A secret reference carries a name only: no value, no other field.
        for bad in [
            r#"{"ref":"e3","text":{"secret":"A","value":"x"}}"#,
            r#"{"ref":"e3","text":{"secret":7}}"#,
            r#"{"ref":"e3","text":{}}"#,
            r#"{"ref":"e3","text":7}"#,
        ] {
            assert!(serde_json::from_str::<TypeArgs>(bad).is_err(), "{bad}");
        }
        let f: FillFormArgs =
            serde_json::from_str(r#"{"fields":[{"ref":"e1","value":"a"},{"ref":"e2","value":{"secret":"T"}}]}"#)
                .unwrap();
        assert_eq!(f.fields[0].value, ValueSource::Literal("a".into()));
        assert!(matches!(&f.fields[1].value, ValueSource::Secret(r) if r.secret == "T"));
        let s: ScrollArgs = serde_json::from_str(r#"{"direction":"down"}"#).unwrap();
        assert_eq!(s.direction, Some(ScrollArgDirection::Down));
        assert!(serde_json::from_str::<ScrollArgs>(r#"{"direction":"left"}"#).is_err());
    }

    #[test]
    fn flow_arguments_take_params_and_named_secrets_only() {
        let a: FlowRunArgs = serde_json::from_str(
            r#"{"name":"buy","params":{"email":"a@b.example"},"secrets":{"token":{"secret":"API"}}}"#,
        )
        .unwrap();
        assert_eq!(a.params["email"], "a@b.example");
        assert_eq!(a.secrets["token"].secret, "API");
        for bad in [
            r#"{"name":"buy","risk":"low"}"#,
            r#"{"name":"buy","approved":true}"#,
            r#"{"name":"buy","secrets":{"token":"CANARY"}}"#,
            r#"{"name":"buy","params":{"email":7}}"#,
            r#"{}"#,
        ] {
            assert!(serde_json::from_str::<FlowRunArgs>(bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<FlowNameArgs>(r#"{"name":"a","force":true}"#).is_err());
        assert!(serde_json::from_str::<FlowListArgs>(r#"{"all":true}"#).is_err());
    }

    #[test]
    fn refs_have_one_shape() {
        assert!(is_valid_ref("e1"));
        assert!(is_valid_ref("e12345"));
        for bad in ["", "e", "x1", "e1a", "E1", "e-1"] {
            assert!(!is_valid_ref(bad), "{bad}");
        }
    }

    #[test]
    fn api_tool_arguments_are_names_and_a_language() {
        let a: ApiLearnArgs = serde_json::from_str(r#"{"host":"127.0.0.1:8080","name":"lib"}"#).unwrap();
        assert_eq!(a.host.as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(serde_json::from_str::<ApiLearnArgs>("{}").unwrap(), ApiLearnArgs::default());
        let c: ApiClientArgs = serde_json::from_str(r#"{"spec":"lib.json","lang":"typescript"}"#).unwrap();
        assert_eq!(c.lang, ApiClientLang::Typescript);
        for bad in [
            r#"{"spec":"a.json","lang":"ruby"}"#,
            r#"{"spec":"a.json"}"#,
            r#"{"spec":"a","lang":"python","dir":"/tmp"}"#,
        ] {
            assert!(serde_json::from_str::<ApiClientArgs>(bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_str::<ApiLearnArgs>(r#"{"path":"/etc"}"#).is_err());
    }
}
