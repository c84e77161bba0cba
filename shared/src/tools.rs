//! Arguments of the agent's MCP tools (DESIGN §3). Unknown fields are
//! refused, so no argument can smuggle in a risk level or an approval.

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
    /// Close `tab` (only tabs the agent opened).
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

/// A ref as the agent writes it: `e` followed by digits.
pub fn is_valid_ref(r: &str) -> bool {
    r.len() >= 2 && r.len() <= 12 && r.starts_with('e') && r[1..].bytes().all(|b| b.is_ascii_digit())
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
    fn refs_have_one_shape() {
        assert!(is_valid_ref("e1"));
        assert!(is_valid_ref("e12345"));
        for bad in ["", "e", "x1", "e1a", "E1", "e-1"] {
            assert!(!is_valid_ref(bad), "{bad}");
        }
    }
}
