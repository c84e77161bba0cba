//! Flows: the person's own recorded actions, saved and replayed
//! (docs/design.md, "Recording and flows").
//!
//! This module is the one model both sides agree on: what a recorded step
//! says ([`Step`]), how its element is found again ([`Descriptor`],
//! [`Locator`]), where a typed value went ([`Value`], [`Param`]) and the
//! bounds every field is clamped to. The content script fills descriptors
//! from the live DOM; the bridge stores flows in SQLite, exports and imports
//! them as Chrome DevTools Recorder JSON, and replays them step by step
//! through the same gate as any agent action.
//!
//! # What a flow never holds
//!
//! - Page text: a step names its element (role, accessible name, label,
//!   placeholder, locators) and its page (URL without query string or
//!   fragment, title), nothing else of the page.
//! - A value typed into a sensitive field (`crate::sensitive`): such a
//!   step's value is always a [`Value::Param`] whose [`Param::kind`] is
//!   [`ParamKind::Secret`], supplied at run time as a secret's name.
//! - Any typed value unless the person switched "Also keep the text I type"
//!   on; personal-looking values are parameters either way (with a default
//!   only when the text is kept).
//!
//! # Replay never heals silently
//!
//! A step found only by a fallback locator whose role or name differs from
//! the recording is a *changed target*: it always asks the person, showing
//! both. A stored risk may raise the live classification, never lower it.

use serde::{Deserialize, Serialize};

/// Steps in one flow.
pub const MAX_STEPS: usize = 500;
/// Parameters of one flow.
pub const MAX_PARAMS: usize = 64;
/// Locator candidates kept per element, CSS path last.
pub const MAX_LOCATORS: usize = 8;
/// Characters of a flow name.
pub const MAX_FLOW_NAME_CHARS: usize = 64;
/// Characters of a locator's value (a CSS path, an id…).
pub const MAX_LOCATOR_CHARS: usize = 300;
/// Characters of a recorded value (a kept text, a parameter's default).
pub const MAX_VALUE_CHARS: usize = 1_000;
/// Recorded events a tab may send per second; the rest are dropped.
pub const MAX_EVENTS_PER_SEC: u32 = 25;

/// Attributes whose value is a test id, in the order they are tried.
pub const TEST_ID_ATTRS: &[&str] =
    &["data-testid", "data-test-id", "data-test", "data-qa", "data-cy", "data-automation-id", "data-e2e"];

/// A saved flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub name: String,
    /// RFC 3339.
    pub created: String,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub params: Vec<Param>,
}

/// One step: an action on an element (or the page) of a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub action: StepAction,
    /// The element acted on; `None` for a navigation (and a key pressed
    /// with no element focused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Descriptor>,
    /// The page the step happened on, without query string or fragment.
    pub url: String,
    /// The page's title (at most `limits::MAX_NAME_CHARS`).
    #[serde(default)]
    pub title: String,
    /// A risk the flow stores for this step (set by hand or by an import):
    /// replay gates the step at the higher of it and the live
    /// classification, never lower (`crate::replay::floor`). Absent: the
    /// live classification alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<crate::risk::RiskLevel>,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum StepAction {
    /// Go to `url` (http/https, no query string unless imported with one).
    Navigate {
        url: String,
    },
    Click,
    /// Replace the field's text (typing coalesced into one fill per field).
    Fill {
        value: Value,
    },
    /// Choose an option of a `<select>` by its visible label.
    Select {
        value: Value,
        /// The chosen option's `value` attribute, when the label is a
        /// literal: tools that select by value (the DevTools Recorder
        /// format) need it. Never kept for a parameter (it would give the
        /// choice away).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        option: Option<String>,
    },
    /// A checkbox or radio set to `checked`.
    Check {
        checked: bool,
    },
    /// A key that submits (`Enter`), on the target or the focused element.
    PressKey {
        key: String,
    },
}

/// A step's value: a literal kept from the recording, or a parameter
/// supplied when the flow runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Value {
    Literal(String),
    Param(String),
}

/// A parameter of a flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// `[a-z][a-z0-9_]{0,39}`, unique in the flow.
    pub name: String,
    pub kind: ParamKind,
    /// Only when the person kept the text, never for `Secret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// What kind of value a parameter holds (how it was recognised).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    Email,
    Phone,
    Date,
    Address,
    Url,
    /// Free text.
    Text,
    /// A sensitive field: supplied at run time only as a stored secret's
    /// name (`{"secret": NAME}`), never as a literal.
    Secret,
}

/// How a recorded element is found again on the live page: role and
/// accessible name first, then the locators in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Descriptor {
    /// ARIA role (explicit or implicit), as the snapshot names it. Empty:
    /// unknown (an imported Recorder step whose `aria/` selector names no
    /// role, or that has none) — any role, never a different one
    /// (`crate::replay::matches_recorded`).
    pub role: String,
    /// Accessible name (at most `limits::MAX_NAME_CHARS`). Empty with an
    /// empty role: unknown too; with a role: a recorded empty name.
    pub name: String,
    /// Text of the field's `<label>`, when it has one.
    pub label: String,
    pub placeholder: String,
    /// Lower-case tag name.
    pub tag: String,
    /// `type` of an `<input>`/`<button>`, lower case.
    pub input_type: String,
    /// At most [`MAX_LOCATORS`], CSS path last.
    pub locators: Vec<Locator>,
}

/// One way to find an element besides its role and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", content = "value", rename_all = "snake_case", deny_unknown_fields)]
pub enum Locator {
    Id(String),
    /// The `name` attribute.
    Name(String),
    /// A test-id attribute ([`TEST_ID_ATTRS`]) and its value.
    TestId {
        attr: String,
        value: String,
    },
    AriaLabel(String),
    /// A CSS selector (the recorded CSS path, or an imported one).
    Css(String),
    /// An XPath (imported from Recorder files only).
    XPath(String),
    /// Text content (imported `text/…` selectors only).
    Text(String),
}

/// Why a flow name is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadName {
    Empty,
    TooLong,
    /// Only letters, digits, space, `-`, `_` and `.`; starting with a
    /// letter or digit.
    Characters,
}

impl BadName {
    pub fn message(self) -> &'static str {
        match self {
            BadName::Empty => "a flow name must not be empty",
            BadName::TooLong => "a flow name has at most 64 characters",
            BadName::Characters => {
                "a flow name uses letters, digits, space, '-', '_' and '.', and starts with a letter or digit"
            }
        }
    }
}

/// The shape of a flow's name (the popup, the CLI and the MCP tools use this).
pub fn check_flow_name(name: &str) -> Result<(), BadName> {
    if name.is_empty() {
        return Err(BadName::Empty);
    }
    if name.chars().count() > MAX_FLOW_NAME_CHARS {
        return Err(BadName::TooLong);
    }
    let first_ok = name.chars().next().is_some_and(char::is_alphanumeric);
    let all_ok = name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.'));
    if !first_ok || !all_ok || name.ends_with(' ') {
        return Err(BadName::Characters);
    }
    Ok(())
}

/// The shape of a parameter's name: `[a-z][a-z0-9_]{0,39}`.
pub fn is_valid_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 40
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A page URL as a step keeps it: without query string and fragment.
pub fn step_url(url: &str) -> String {
    let cut = url.find(['?', '#']).unwrap_or(url.len());
    url[..cut].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_names() {
        for ok in ["checkout", "Buy shoes 2", "a.b-c_d", "Bestellung ändern"] {
            assert_eq!(check_flow_name(ok), Ok(()), "{ok}");
        }
        let long = "x".repeat(65);
        for (bad, why) in [
            ("", BadName::Empty),
            (long.as_str(), BadName::TooLong),
            (" lead", BadName::Characters),
            ("trail ", BadName::Characters),
            ("../etc", BadName::Characters),
            ("a/b", BadName::Characters),
            ("tab\tname", BadName::Characters),
            ("-flag", BadName::Characters),
        ] {
            assert_eq!(check_flow_name(bad), Err(why), "{bad:?}");
        }
    }

    #[test]
    fn param_names() {
        assert!(is_valid_param_name("email"));
        assert!(is_valid_param_name("address_line_2"));
        assert!(!is_valid_param_name("2nd"));
        assert!(!is_valid_param_name("Email"));
        assert!(!is_valid_param_name(""));
        assert!(!is_valid_param_name(&"a".repeat(41)));
    }

    #[test]
    fn step_urls_drop_query_and_fragment() {
        assert_eq!(step_url("https://shop.example/p/1?ref=mail#top"), "https://shop.example/p/1");
        assert_eq!(step_url("https://shop.example/cart#x"), "https://shop.example/cart");
        assert_eq!(step_url("https://shop.example/"), "https://shop.example/");
    }

    #[test]
    fn wire_shape() {
        let step = Step {
            action: StepAction::Fill { value: Value::Param("email".into()) },
            target: Some(Descriptor {
                role: "textbox".into(),
                name: "E-mail".into(),
                tag: "input".into(),
                input_type: "email".into(),
                locators: vec![Locator::Id("mail".into()), Locator::Css("form > input:nth-of-type(2)".into())],
                ..Descriptor::default()
            }),
            url: "https://shop.example/address".into(),
            title: "Address".into(),
            risk: None,
        };
        let json = serde_json::to_value(&step).unwrap();
        assert_eq!(json["action"], serde_json::json!({"kind": "fill", "value": {"param": "email"}}));
        assert_eq!(json["target"]["locators"][0], serde_json::json!({"by": "id", "value": "mail"}));
        let back: Step = serde_json::from_value(json).unwrap();
        assert_eq!(back, step);
        assert!(serde_json::from_str::<Step>(r#"{"action":{"kind":"click"},"url":"u","extra":1}"#).is_err());
    }
}
