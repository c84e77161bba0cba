//! Risk classification of one browser action
//! (docs/design.md, "Policy, approvals and audit").
//!
//! `classify(action, element, url, sensitive)` looks at the kind of action,
//! the resolved element (role, accessible name, form facts, context labels)
//! and the page URL, and returns the highest [`RiskLevel`] any rule produced
//! plus every reason, in a fixed order. The bridge classifies before it
//! dispatches, the extension again on the live element right before acting;
//! both call this same function, so the rules live here, as data.
//!
//! # Matching
//!
//! Names, option labels, context labels and URL path segments are split into
//! lower-case words by [`crate::sensitive::words`] (case, punctuation and
//! camelCase boundaries, and where a script written without spaces meets
//! one written with them; diacritics folded, Vietnamese tones and capitals
//! with diacritics included; bidirectional marks, tatweel and Arabic vowel
//! signs dropped; Arabic/Persian letter variants folded: أ/إ/آ→ا, ی/ى/ئ→ي,
//! ک→ك, ة→ه, Persian and Arabic-Indic digits to ASCII), with `ß`→`ss`,
//! `œ`→`oe` and `æ`→`ae` on top. A keyword is a sequence of words that must
//! appear as consecutive whole words. A trailing `*` on a keyword word means
//! "this word or any word starting with it" (inflections: `lösch*` matches
//! `löschen`, `lösche`, `Löschung`); a leading `*` means "or any word ending
//! with it" (German compounds: `*löschung` matches `Kontolöschung`; Arabic
//! articles: `*حذف` matches `الحذف`). Every prefix is commented where it is
//! declared; a prefix is only used where the words it also catches are
//! harmless to ask about.
//!
//! Han, Kana, Hangul and Thai ([`crate::sensitive::is_unspaced`]) have no
//! spaces between words (Korean attaches its particles and endings), so a
//! run of them is one word and a keyword word of two or more of those
//! characters matches *inside* it (`削除` in `アカウントを削除`, `결제` in
//! `결제하기`); a one-character keyword (`是`, `예`) only matches a whole
//! word. A not-phrase inside such a run blanks only its own characters
//! (`注文履歴` does not hide the `購入` of `購入履歴から再購入`).
//!
//! # Languages
//!
//! The rule constants hold en de fr es pt it nl; [`LANGUAGES`] (in
//! `risk/languages.rs`) adds ja ru uk pl tr ar fa zh-Hans zh-Hant ko vi id
//! cs sv th, one table per language, and `risk/lang/<code>.tsv` adds bg bn
//! ca da el et fi ga he hi hr hu lt lv ms mt nb ro sk sl sr ur as data, one
//! file per language with its own test cases (`languages::DATA`, which also
//! holds a table of cases for each of the other languages); all are
//! merged into the same rules when they are compiled (once, behind a `OnceLock`, into phrase sets indexed by
//! first word and first character, so a text is compared only with the
//! keywords that can match it). Every keyword of a language table has a row
//! in `fixtures/risk/controls.tsv` in that language (a test checks it).
//!
//! A language the rules do not cover must not lower protection. The
//! language-independent rules still ask: a form submit, Enter in a form, a
//! button on a payment or account URL, a link or form that acts when
//! loaded, and a plain button in a form that holds card, bank, identity or
//! password fields (`form_field_rules`). A name written mostly in a script
//! no language here uses (Georgian, Armenian, Tamil…) is at least medium
//! and says so ([`unread_script`]). What is not caught: a plain button
//! outside a form, on an ordinary URL, named in a Latin-script language the
//! lists do not know (a row in the table shows it).
//!
//! # Layout
//!
//! This file holds the types (what an action, its element and its
//! classification are); `risk/data.rs` the rules as data (the keyword
//! lists of the first seven languages, look-alikes, URL path words, icon
//! labels, the [`Language`] shape); `risk/languages.rs` and
//! `risk/lang/*.tsv` the other languages; `risk/matcher.rs` the phrase
//! matcher ([`normalize`], the compiled phrase sets); `risk/rules.rs` the
//! rules themselves ([`classify`]); `risk/paint.rs` text painted in an
//! order other than the DOM's; `risk/tests.rs` the tests, which read their
//! cases from `fixtures/risk/controls.tsv` and the language files. Every
//! public item is reachable as `shared::risk::<name>`.
//!
//! # Changing the rules
//!
//! Additions need no review. Removing a keyword or lowering a level needs a
//! written reason in the commit, and a row in `fixtures/risk/controls.tsv`
//! that shows the case. When in doubt, the rules err toward asking.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::sensitive::{SensitiveKind, words};

mod data;
mod languages;
mod matcher;
pub mod paint;
mod rules;
#[cfg(test)]
mod tests;

pub use data::*;
pub use languages::LANGUAGES;
pub use matcher::*;
pub use paint::PaintTrick;
pub use rules::*;

/// Builds the rule tables now. They are built once, on first use, and
/// that first use costs tens of milliseconds in the extension's
/// WebAssembly: the service worker calls this when it starts, so that no
/// action (the first click of every agent at once) waits for it.
pub fn warm() {
    let _ = matcher::compiled();
    let _ = languages::tables();
}

/// How consequential an action is. Ordered: `Low < Medium < High`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

impl RiskLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
        }
    }
}

/// The result: the highest level any rule produced, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    pub risk: RiskLevel,
    /// Human-readable, highest level first, then in rule order; no
    /// duplicates. Low-level reasons explain a deliberate downgrade.
    pub reasons: Vec<String>,
}

impl Classification {
    /// Combines two classifications (e.g. the fields of one `fill_form`):
    /// the higher level wins, reasons of both are kept.
    pub fn merge(mut self, other: Classification) -> Classification {
        self.risk = self.risk.max(other.risk);
        for r in other.reasons {
            if !self.reasons.contains(&r) {
                self.reasons.push(r);
            }
        }
        self
    }
}

/// Keyboard modifiers held with a key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Modifiers {
    pub shift: bool,
    pub ctrl: bool,
    pub alt: bool,
    pub meta: bool,
}

impl Modifiers {
    fn any(self) -> bool {
        self.shift || self.ctrl || self.alt || self.meta
    }
}

/// What the agent wants to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ActionKind {
    Click,
    /// Typing into a field. `submit`: press Enter afterwards.
    Type {
        #[serde(default)]
        submit: bool,
    },
    /// One field of a `fill_form` (classify each field and [`Classification::merge`]).
    /// `submit`: the form is submitted afterwards.
    FillForm {
        #[serde(default)]
        submit: bool,
    },
    /// Choosing options of a select/listbox; `options` are the visible labels
    /// of the chosen options (an "Actions" select with "Delete" is a delete).
    SelectOption {
        #[serde(default)]
        options: Vec<String>,
    },
    /// `key` as in `KeyboardEvent.key` (`Enter`, `Tab`, `a`, ` `/`Space`…).
    PressKey {
        key: String,
        #[serde(default)]
        modifiers: Modifiers,
    },
    Scroll,
    Hover,
    WaitFor,
    Screenshot,
    Snapshot,
    /// Loading a URL (the `url` argument of `classify` is the target).
    Navigate,
    Upload,
    /// Keeping a download an agent tab started; `risky`: an executable or
    /// an archive (`crate::files::download_risk`).
    Download {
        risky: bool,
    },
    CloseTab {
        opened_by_agent: bool,
    },
}

impl ActionKind {
    /// `PressKey` from a combo such as `Shift+Enter` or `Control+a`.
    pub fn press_key(combo: &str) -> ActionKind {
        let mut modifiers = Modifiers::default();
        let parts: Vec<&str> = if combo == "+" { vec!["+"] } else { combo.split('+').collect() };
        let (key, mods) = parts.split_last().map(|(k, m)| (*k, m)).unwrap_or(("", &[]));
        for m in mods {
            match m.to_ascii_lowercase().as_str() {
                "shift" => modifiers.shift = true,
                "ctrl" | "control" => modifiers.ctrl = true,
                "alt" | "option" => modifiers.alt = true,
                "meta" | "cmd" | "command" | "super" => modifiers.meta = true,
                _ => {}
            }
        }
        ActionKind::PressKey { key: key.to_string(), modifiers }
    }
}

/// What the extension knows about the target element. The content script
/// fills this from the live DOM; every field has a safe default (empty or
/// false), which never lowers a risk that the name or URL rules produce.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ElementFacts {
    /// ARIA role, explicit or implicit (`button`, `link`, `checkbox`,
    /// `textbox`, `searchbox`, `combobox`, `menuitem`, `columnheader`…).
    pub role: String,
    /// Accessible name (at most 120 characters is enough).
    pub name: String,
    /// `type` of an `<input>`/`<button>`, lower case; empty otherwise.
    pub input_type: String,
    /// Accepts typed text: text-like `<input>`, `<textarea>`, contenteditable.
    pub editable: bool,
    /// Activating it submits a form: `<button>` whose type is `submit`
    /// (explicit, or no `type` attribute) or `<input type=submit|image>`,
    /// with a form owner (`el.form != null`).
    pub is_submit_button: bool,
    /// Has a form owner (`el.form != null`, or inside a `<form>`).
    pub in_form: bool,
    /// The form is a search: the form or an ancestor has `role=search` (or
    /// is `<search>`), or its only text field is `type=search` or named
    /// like search/query/`q`.
    pub form_is_search: bool,
    /// Rich-text editor: contenteditable, or `role=textbox` with
    /// `aria-multiline=true`.
    pub is_rich_text: bool,
    /// The page marks it as consent (e.g. a checkbox whose label links to
    /// terms or privacy, `name`/`id` containing terms/consent/gdpr).
    pub consent_hint: bool,
    /// Names of enclosing dialog, form, fieldset/region and the nearest
    /// heading, innermost first.
    pub context: Vec<String>,
    /// What the person sees on the control, which the page may word
    /// differently from its accessible name: the rendered text (`innerText`
    /// plus generated content), the `value` of an input button, or, when
    /// nothing is rendered, its `title` or the label of its icon
    /// ([`icon_label`]). At most 120 characters; empty when nothing shows.
    /// Classified like the name (see "What the person sees" in the module
    /// docs).
    pub visible_text: String,
    /// Where activating it goes: the resolved `href` of the link it is or
    /// is inside; for a control in a form, the form's submission URL
    /// (`formaction` of a submit button, else the form's `action`, else the
    /// page). Empty otherwise. Its path goes through the same URL rules as
    /// navigation.
    pub target: String,
    /// The form's submission method (`get`, `post`, `dialog`), lower case;
    /// empty outside a form.
    pub form_method: String,
    /// The form's fields as `type:name`, in document order; hidden fields
    /// as `hidden:name#digest`, a hash of their value (the value itself is
    /// never sent). Not classified: compared, so that a form rewritten
    /// between the decision and the action is refused.
    pub form_fields: Vec<String>,
    /// The options of a `<select>` (at most [`MAX_OPTIONS_SEEN`]): an agent
    /// may choose one by its value, which the person never sees, so the
    /// rules read the label of the option that will really be chosen
    /// ([`chosen_option`]) as well as its value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<OptionFacts>,
    /// What the person reads on the control when it differs from
    /// [`Self::visible_text`]: only the letters that paint, in the order
    /// they are painted (see [`PaintTrick`]). Empty otherwise. Classified
    /// like the name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub painted_text: String,
    /// Ways the page paints the control's text otherwise than its DOM
    /// says; each is a high-risk reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paint_tricks: Vec<PaintTrick>,
    /// It is a `<label>` (or inside one): a click activates the label's
    /// control, whose form facts (`is_submit_button`, `in_form`, `target`,
    /// `form_method`, `form_fields`) these are.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub via_label: bool,
    /// URLs a click also posts to (`<a ping>`, resolved), at most
    /// [`MAX_PINGS`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pings: Vec<String>,
}

/// Ping URLs reported in [`ElementFacts::pings`].
pub const MAX_PINGS: usize = 8;

/// One option of a `<select>`: its `value` and the label the person sees.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionFacts {
    pub value: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
}

/// Options of one `<select>` reported in [`ElementFacts::options`].
pub const MAX_OPTIONS_SEEN: usize = 2_000;

/// Which option `want` chooses: the first enabled one whose value is
/// exactly `want` or whose label is `want` (spaces trimmed). The content
/// script selects with this same rule.
pub fn chosen_option(options: &[OptionFacts], want: &str) -> Option<usize> {
    options.iter().position(|o| !o.disabled && (o.value == want || o.label == want.trim()))
}
