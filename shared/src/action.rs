//! Page actions on the wire (docs/design.md, "Policy, approvals and audit"): the bridge first asks the
//! extension to [`Resolve`](crate::protocol::Command::Resolve) a ref into
//! [`ResolvedElement`] facts, classifies and decides, then sends
//! [`Command::Act`](crate::protocol::Command::Act) with a [`Gate`]. The
//! extension re-resolves the element, checks it is still the same one
//! ([`Fingerprint`]), re-classifies it live with the same `shared::risk`
//! rules, asks the person in its own approval window if either side says
//! confirm, acts with real DOM operations, and reports the [`Effect`].
//!
//! Nothing here can approve anything: approvals exist only inside the
//! extension, bound to one `Act` request.
//!
//! # Secrets
//!
//! An `Act` that types a stored secret carries only its name
//! ([`Action::TypeSecret`]). The extension runs its whole gate first (STOP,
//! Pause, live classification, the person's approval or the policy, YOLO)
//! and only then asks the bridge for the value
//! ([`ExtToBridge::SecretRequest`](crate::protocol::ExtToBridge::SecretRequest)
//! with the `Act`'s [`Gate::request`] and the live page's origin). The
//! bridge answers ([`BridgeToExt::Secret`](crate::protocol::BridgeToExt::Secret),
//! a [`SecretText`]) once, only on the connection the `Act` went to, only
//! while that `Act` waits for its answer, and only when the origin is the
//! one it decided for and one the secret is bound to. The worker then hands
//! the content script a plain [`Action::Type`] with the value. A secret not
//! bound to any site sets [`Gate::person_must_answer`]: the person answers
//! in the approval window whatever the policy and YOLO say.

use serde::{Deserialize, Serialize};

use crate::audit::DecidedBy;
use crate::policy::{Decision, RiskDecisions};
use crate::risk::{ActionKind, ElementFacts, RiskLevel};

/// What to do. `Type` carries a literal the agent supplied (or, from the
/// worker to the content script only, a secret's value the bridge released
/// after the gate); a stored secret crosses the bridge's socket only as
/// `TypeSecret`, by name. `Debug` never prints a typed value or option
/// (they may be secrets): `Type { text: "••••" }`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    Click,
    /// Replace the field's value with `text` (focus, value setter,
    /// input/change events); then press Enter when `submit`.
    Type {
        text: String,
        submit: bool,
    },
    /// Type the stored secret `name` like `Type` (bridge → worker only):
    /// the worker fetches the value after its gate (see the module docs)
    /// and sends the content script a `Type`. The content script refuses
    /// this variant.
    TypeSecret {
        name: String,
        submit: bool,
    },
    /// Choose options by value or visible label.
    SelectOption {
        values: Vec<String>,
    },
    /// `key` as in `KeyboardEvent.key`, optionally with modifiers
    /// (`Shift+Enter`), on the target or the focused element.
    PressKey {
        key: String,
    },
    Scroll {
        direction: ScrollDirection,
    },
    Hover,
    /// Close the tab (`target` is `None`). Only sent for a tab the agent did
    /// not open: the extension classifies it high risk
    /// (`ActionKind::CloseTab { opened_by_agent: false }`), asks the person
    /// per the gate and then removes the tab with `chrome.tabs.remove`.
    CloseTab,
    /// Set these files on the `<input type=file>` `target` (bridge →
    /// worker: metadata only; the worker fetches the bytes after its gate
    /// and stages them in the page, see `crate::files`).
    UploadFiles {
        /// The bridge's id of the staged bytes (unique per upload), which
        /// the worker asks for once its gate let the action through.
        upload: u64,
        files: Vec<crate::files::UploadFile>,
    },
    /// Let a download the agent's tab started go on (`target` is `None`;
    /// bridge → worker only, answered once the gate let it through).
    /// `risky`: an executable or an archive.
    KeepDownload {
        name: String,
        mime: String,
        risky: bool,
    },
}

impl Action {
    /// How this action uses a site (`crate::policy::SiteUse`: a site with
    /// `access = "read"` takes only `Look`). Exhaustive: a new action must
    /// say.
    pub fn site_use(&self) -> crate::policy::SiteUse {
        use crate::policy::SiteUse;
        match self {
            Action::Scroll { .. } | Action::Hover => SiteUse::Look,
            Action::Click
            | Action::Type { .. }
            | Action::TypeSecret { .. }
            | Action::SelectOption { .. }
            | Action::PressKey { .. }
            | Action::CloseTab
            | Action::UploadFiles { .. }
            | Action::KeepDownload { .. } => SiteUse::Change,
        }
    }

    /// Whether this action puts text into a field (a literal or a secret).
    pub fn types_text(&self) -> bool {
        matches!(self, Action::Type { .. } | Action::TypeSecret { .. })
    }
}

/// Whether typed text is one field of a `browser_fill_form` or a
/// `browser_type` of its own: the one fact [`ActionKind::of`] needs that an
/// [`Action`] does not carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typing {
    /// `browser_type`, and every `Act` the extension gets (an `Act` does
    /// not say whether it is a form's field; [`crate::risk::classify`]
    /// judges both kinds alike, so the live classification agrees).
    Alone,
    /// One field of `browser_fill_form`: [`ActionKind::FillForm`].
    FormField,
}

impl ActionKind {
    /// The kind the classifier judges `action` as — the one mapping from
    /// wire actions to risk kinds, used by the bridge before it dispatches
    /// and by the extension on the live element.
    ///
    /// - `Type` and `TypeSecret` are typing (a secret is classified like
    ///   the literal it stands for): [`ActionKind::Type`], or
    ///   [`ActionKind::FillForm`] for a form's field (`typing`).
    /// - `SelectOption` carries the values the agent asked for; the
    ///   classifier judges the option each one really chooses.
    /// - `PressKey` splits its modifiers (`Shift+Enter`).
    /// - `CloseTab` is, by its definition, a tab the agent did not open:
    ///   `opened_by_agent: false` (the agent's own tabs close without an
    ///   `Act`).
    pub fn of(action: &Action, typing: Typing) -> ActionKind {
        match action {
            Action::Click => ActionKind::Click,
            Action::Type { submit, .. } | Action::TypeSecret { submit, .. } => match typing {
                Typing::Alone => ActionKind::Type { submit: *submit },
                Typing::FormField => ActionKind::FillForm { submit: *submit },
            },
            Action::SelectOption { values } => ActionKind::SelectOption { options: values.clone() },
            Action::PressKey { key } => ActionKind::press_key(key),
            Action::Scroll { .. } => ActionKind::Scroll,
            Action::Hover => ActionKind::Hover,
            Action::CloseTab => ActionKind::CloseTab { opened_by_agent: false },
            Action::UploadFiles { .. } => ActionKind::Upload,
            Action::KeepDownload { risky, .. } => ActionKind::Download { risky: *risky },
        }
    }
}

impl std::fmt::Debug for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::sensitive::MASK;
        match self {
            Action::Click => f.write_str("Click"),
            Action::Type { text, submit } => f
                .debug_struct("Type")
                .field("text", &format_args!("\"{MASK}\" ({} chars)", text.chars().count()))
                .field("submit", submit)
                .finish(),
            Action::TypeSecret { name, submit } => {
                f.debug_struct("TypeSecret").field("name", name).field("submit", submit).finish()
            }
            Action::SelectOption { values } => {
                f.debug_struct("SelectOption").field("values", &format_args!("[{} masked]", values.len())).finish()
            }
            Action::PressKey { key } => f.debug_struct("PressKey").field("key", key).finish(),
            Action::Scroll { direction } => f.debug_struct("Scroll").field("direction", direction).finish(),
            Action::Hover => f.write_str("Hover"),
            Action::CloseTab => f.write_str("CloseTab"),
            Action::UploadFiles { upload, files } => {
                f.debug_struct("UploadFiles").field("upload", upload).field("files", files).finish()
            }
            Action::KeepDownload { name, mime, risky } => {
                f.debug_struct("KeepDownload").field("name", name).field("mime", mime).field("risky", risky).finish()
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ScrollDirection {
    /// Bring the target into view (the default with a ref).
    IntoView,
    Up,
    Down,
}

/// Identity of an element at resolution time; the extension refuses to
/// act (`STALE_REF`) when the live element no longer matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fingerprint {
    pub role: String,
    pub name: String,
    /// Position in the tree (e.g. a hash of the tag/index path).
    pub path: String,
}

/// What the extension reports about a ref.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolvedElement {
    pub facts: ElementFacts,
    pub fingerprint: Fingerprint,
    /// Sensitive-field kind per `shared::sensitive`, if any (`password`,
    /// `card`, …; a name this version does not know reads as
    /// [`SensitiveKind::Unknown`](crate::sensitive::SensitiveKind::Unknown),
    /// the strictest) — the value itself is never sent.
    pub sensitive: Option<crate::sensitive::SensitiveKind>,
    /// The page URL at resolution time.
    pub url: String,
}

/// The bridge's decision, carried to the extension with the action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// Unique per `Act`; an approval answers exactly this id once.
    pub request: u64,
    pub risk: RiskLevel,
    pub reasons: Vec<String>,
    /// `Allow` or `Confirm` (a `Deny` is never sent: nothing is dispatched).
    pub decision: Decision,
    /// The policy for this page's origin, so the extension maps its own
    /// live classification to a decision with the same rules.
    pub policy: RiskDecisions,
    /// Masked summary shown in the approval window and the audit log.
    pub summary: String,
    /// Seconds the person has to answer.
    pub timeout_secs: u32,
    /// `scheme://host:port` of the page the bridge decided for
    /// (`shared::url::Origin`, as written on the wire; empty when it did not know the page). The
    /// extension refuses (`STALE_REF`) when the live page is elsewhere, so
    /// a decision made for one site never runs on another.
    pub origin: String,
    /// The person answers this `Act` in the approval window even when the
    /// decision is `allow` and YOLO is on (a secret bound to no site, a
    /// flow step's changed target: `reasons` says so). STOP and Pause
    /// still refuse it.
    pub person_must_answer: bool,
    /// A flow step whose element was found only by a fallback locator with
    /// another role or name (`crate::replay`): the approval window shows the
    /// recorded and the live target side by side. Sent with
    /// `person_must_answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<crate::target::ChangedTarget>,
}

/// A secret's value on the wire ([`BridgeToExt::Secret`](crate::protocol::BridgeToExt::Secret)):
/// serialised as a plain string, `Debug` prints `SecretText(••••)`.
/// Deliberately not `Clone`.
#[derive(PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SecretText(String);

impl SecretText {
    pub fn new(value: String) -> Self {
        SecretText(value)
    }

    /// The value, for the one fill it is released for.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The value, moved out (into the `Type` the content script gets).
    pub fn into_inner(self) -> String {
        self.0
    }
}

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretText({})", crate::sensitive::MASK)
    }
}

/// What changed after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Navigated,
    ValueChanged,
    DialogOpened,
    /// The page's content changed (text, elements, attributes) while the
    /// outcome settled, with no navigation, dialog or value change: what
    /// changed is for a new snapshot to show.
    PageChanged,
    None,
    Unknown,
}

/// The extension's report of one `Act`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActReport {
    pub effect: Effect,
    /// URL after the action.
    pub url: String,
    /// The live classification at execution time.
    pub risk: RiskLevel,
    pub reasons: Vec<String>,
    /// Who let it run: `policy` (no confirmation needed), `human`, `yolo`.
    pub decided_by: DecidedBy,
    /// Short descriptions of what appeared or disappeared (names only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

/// The person's controls as the extension reports them (popup state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlState {
    pub stopped: bool,
    pub paused: bool,
    pub yolo: bool,
    /// Approval requests waiting for the person.
    pub pending: u32,
}

/// Why `browser_select_option` cannot choose `want` from `options` (no
/// enabled option has that value or label: [`crate::risk::chosen_option`])
/// and what it can choose: the options nearest to what was asked (same
/// letters ignoring case, a prefix of one another, a long common start),
/// then the list in order, within [`MAX_ERROR_MESSAGE_CHARS`]; `+N more`
/// names the snapshot scoped to `element_ref` that lists them all. The
/// bridge says this before anything is dispatched; the content script, if
/// the list changed since, says it too.
///
/// [`MAX_ERROR_MESSAGE_CHARS`]: crate::limits::MAX_ERROR_MESSAGE_CHARS
pub fn missing_option_message(options: &[crate::risk::OptionFacts], want: &str, element_ref: Option<&str>) -> String {
    use crate::snapshot::quote;
    let budget = crate::limits::MAX_ERROR_MESSAGE_CHARS;
    let mut msg = String::new();
    let disabled = options.iter().any(|o| o.disabled && (o.value == want || o.label == want.trim()));
    if disabled {
        msg.push_str("option ");
        quote(want, &mut msg);
        msg.push_str(" is disabled");
    } else {
        msg.push_str("no option ");
        quote(want, &mut msg);
        msg.push_str(" in this list");
    }
    let enabled: Vec<&crate::risk::OptionFacts> =
        options.iter().filter(|o| !o.disabled && !o.label.is_empty()).collect();
    if enabled.is_empty() {
        msg.push_str("; it has no option that can be chosen");
        return msg;
    }
    let w = want.trim().to_lowercase();
    let closeness = |label: &str| -> usize {
        let l = label.to_lowercase();
        let common = l.chars().zip(w.chars()).take_while(|(a, b)| a == b).count();
        if l == w {
            1_000
        } else if !w.is_empty() && (l.starts_with(&w) || w.starts_with(&l)) {
            500 + common
        } else if w.chars().count() >= 3 && (l.contains(&w) || w.contains(&l)) {
            300 + common
        } else if common >= 3 {
            common
        } else {
            0
        }
    };
    let mut near: Vec<(usize, usize)> =
        enabled.iter().enumerate().map(|(i, o)| (closeness(&o.label), i)).filter(|(c, _)| *c > 0).collect();
    near.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut piece = String::new();
    let fits = |msg: &str, piece: &str, reserve: usize| msg.chars().count() + piece.chars().count() + reserve <= budget;
    const RESERVE: usize = 70; // " (+N more: browser_snapshot scope=eN lists them all)"
    let mut first = true;
    for (_, i) in near.iter().take(3) {
        piece.clear();
        piece.push_str(if first { "; nearest: " } else { ", " });
        quote(&enabled[*i].label, &mut piece);
        if !fits(&msg, &piece, RESERVE) {
            break;
        }
        msg.push_str(&piece);
        first = false;
    }
    let mut listed = 0;
    for (k, o) in enabled.iter().enumerate() {
        piece.clear();
        piece.push_str(if k == 0 { "; options: " } else { ", " });
        quote(&o.label, &mut piece);
        if !fits(&msg, &piece, RESERVE) {
            break;
        }
        msg.push_str(&piece);
        listed += 1;
    }
    let more = enabled.len() - listed;
    if more > 0 {
        msg.push_str(&format!(" (+{more} more"));
        if let Some(r) = element_ref {
            msg.push_str(&format!(": browser_snapshot scope={r} lists them all"));
        }
        msg.push(')');
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_prints_a_typed_value() {
        let typed = Action::Type { text: "CANARY-typed-value".into(), submit: true };
        let shown = format!("{typed:?} {typed:#?}");
        assert!(!shown.contains("CANARY"), "{shown}");
        assert!(shown.contains("Type") && shown.contains("submit"), "{shown}");
        let sel = Action::SelectOption { values: vec!["CANARY-option".into()] };
        assert!(!format!("{sel:?}").contains("CANARY"));
        // The wire still carries the value: only Debug hides it.
        assert!(serde_json::to_string(&typed).unwrap().contains("CANARY-typed-value"));
        let value = SecretText::new("CANARY-secret-value".into());
        assert_eq!(format!("{value:?} {value:#?}"), "SecretText(••••) SecretText(••••)");
        assert_eq!(serde_json::to_string(&value).unwrap(), r#""CANARY-secret-value""#);
    }

    #[test]
    fn every_action_has_its_one_kind() {
        use crate::risk::Modifiers;
        let type_text = |submit| Action::Type { text: "x".into(), submit };
        let type_secret = |submit| Action::TypeSecret { name: "S".into(), submit };
        let shift = Modifiers { shift: true, ..Modifiers::default() };
        // Every variant (the match below breaks the build when one is added).
        let cases: Vec<(Action, Typing, ActionKind)> = vec![
            (Action::Click, Typing::Alone, ActionKind::Click),
            (Action::Click, Typing::FormField, ActionKind::Click),
            (type_text(false), Typing::Alone, ActionKind::Type { submit: false }),
            (type_text(true), Typing::Alone, ActionKind::Type { submit: true }),
            (type_text(true), Typing::FormField, ActionKind::FillForm { submit: true }),
            (type_secret(false), Typing::Alone, ActionKind::Type { submit: false }),
            (type_secret(true), Typing::FormField, ActionKind::FillForm { submit: true }),
            (
                Action::SelectOption { values: vec!["a".into(), "Delete".into()] },
                Typing::Alone,
                ActionKind::SelectOption { options: vec!["a".into(), "Delete".into()] },
            ),
            (
                Action::PressKey { key: "Shift+Enter".into() },
                Typing::Alone,
                ActionKind::PressKey { key: "Enter".into(), modifiers: shift },
            ),
            (
                Action::PressKey { key: "a".into() },
                Typing::FormField,
                ActionKind::PressKey { key: "a".into(), modifiers: Modifiers::default() },
            ),
            (Action::Scroll { direction: ScrollDirection::Down }, Typing::Alone, ActionKind::Scroll),
            (Action::Scroll { direction: ScrollDirection::IntoView }, Typing::Alone, ActionKind::Scroll),
            (Action::Hover, Typing::Alone, ActionKind::Hover),
            (Action::CloseTab, Typing::Alone, ActionKind::CloseTab { opened_by_agent: false }),
            (Action::CloseTab, Typing::FormField, ActionKind::CloseTab { opened_by_agent: false }),
            (Action::UploadFiles { upload: 1, files: Vec::new() }, Typing::Alone, ActionKind::Upload),
            (
                Action::KeepDownload { name: "a.zip".into(), mime: String::new(), risky: true },
                Typing::Alone,
                ActionKind::Download { risky: true },
            ),
        ];
        for (action, typing, want) in &cases {
            match action {
                Action::Click
                | Action::Type { .. }
                | Action::TypeSecret { .. }
                | Action::SelectOption { .. }
                | Action::PressKey { .. }
                | Action::Scroll { .. }
                | Action::Hover
                | Action::CloseTab
                | Action::UploadFiles { .. }
                | Action::KeepDownload { .. } => {}
            }
            assert_eq!(&ActionKind::of(action, *typing), want, "{action:?} {typing:?}");
        }
    }

    #[test]
    fn a_form_field_is_judged_like_typing_alone() {
        // Why the extension may classify every `Act` as `Typing::Alone`.
        use crate::risk::classify;
        use crate::sensitive::SensitiveKind;
        let field =
            ElementFacts { role: "textbox".into(), name: "Message".into(), in_form: true, ..Default::default() };
        for submit in [false, true] {
            for sensitive in [None, Some(SensitiveKind::Token)] {
                for url in ["https://a.example/compose", "https://a.example/checkout/pay"] {
                    let action = Action::TypeSecret { name: "S".into(), submit };
                    let alone = classify(&ActionKind::of(&action, Typing::Alone), Some(&field), url, sensitive);
                    let form = classify(&ActionKind::of(&action, Typing::FormField), Some(&field), url, sensitive);
                    assert_eq!(alone, form, "{submit} {sensitive:?} {url}");
                }
            }
        }
    }

    #[test]
    fn a_secret_crosses_to_the_extension_by_name_only() {
        let by_name = Action::TypeSecret { name: "API_TOKEN".into(), submit: true };
        let json = serde_json::to_string(&by_name).unwrap();
        assert_eq!(json, r#"{"kind":"type_secret","name":"API_TOKEN","submit":true}"#);
        assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), by_name);
        assert!(format!("{by_name:?}").contains("API_TOKEN"));
        assert!(by_name.types_text() && Action::Type { text: String::new(), submit: false }.types_text());
        assert!(!Action::Click.types_text());
        // No value can ride along with the name.
        assert!(
            serde_json::from_str::<Action>(r#"{"kind":"type_secret","name":"A","submit":false,"text":"x"}"#).is_err()
        );
    }

    #[test]
    fn a_missing_option_names_the_nearest_ones_and_the_list_within_bounds() {
        use crate::risk::OptionFacts;
        let opt = |l: &str| OptionFacts { value: l.to_lowercase(), label: l.into(), disabled: false };
        let mut options: Vec<OptionFacts> = ["Afghanistan", "Norway", "Sweden", "Switzerland", "Swaziland"]
            .iter()
            .map(|l| opt(l))
            .chain((0..240).map(|i| opt(&format!("Country {i}"))))
            .collect();
        options.push(OptionFacts { disabled: true, ..opt("Same day") });
        let m = missing_option_message(&options, "Swedenland", Some("e3"));
        assert!(m.starts_with("no option \"Swedenland\" in this list; nearest: \"Sweden\""), "{m}");
        assert!(m.contains("; options: \"Afghanistan\", \"Norway\""), "{m}");
        assert!(m.ends_with("more: browser_snapshot scope=e3 lists them all)"), "{m}");
        assert!(m.chars().count() <= crate::limits::MAX_ERROR_MESSAGE_CHARS, "{} chars: {m}", m.chars().count());
        let d = missing_option_message(&options, "Same day", None);
        assert!(d.starts_with("option \"Same day\" is disabled"), "{d}");
        assert!(!d.contains("scope="), "{d}");
        let small = missing_option_message(&options[..2], "x\"\n- button", Some("e1"));
        assert_eq!(small, "no option \"x\\\"\\n- button\" in this list; options: \"Afghanistan\", \"Norway\"");
        assert!(missing_option_message(&[], "a", None).ends_with("no option that can be chosen"));
    }
}
