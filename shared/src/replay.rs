//! Replaying a flow (docs/design.md, "Replaying flows"): the pure rules
//! the bridge's replay engine (`bridge/src/server/flows.rs`) and the content
//! script's locate command (`extension/content/src/locate.rs`) follow, and
//! the shapes they exchange.
//!
//! # Finding a recorded element again ([`choose`])
//!
//! The content script gathers, for one [`Descriptor`], the visible elements
//! whose accessible name is the recorded one ([`same_name`]) and whose role
//! is the recorded one — any role when the descriptor does not know it
//! ([`role_known`]) — and for each locator in order the visible elements
//! it matches ([`Found`]). Then, in this order:
//!
//! 1. exactly one element has the recorded role and name → it wins
//!    ([`Via::RoleName`]);
//! 2. several do → the first locator that matches exactly one element,
//!    and one of those, picks it ([`Via::Locator`]); no locator does →
//!    [`Miss::Ambiguous`], reported as `NOT_FOUND` listing every element
//!    with the name ([`Missing::named`]): the replay never picks one of
//!    several look-alikes by position;
//! 3. none does (or the recording has no name) → the first locator that
//!    matches exactly one element wins ([`Via::Locator`]); a locator that
//!    matches several is skipped; none → [`Miss::NotFound`] (or
//!    [`Miss::Ambiguous`] when every locator that matched at all matched
//!    several).
//!
//! A winner found in step 3 whose role or name differs from the recording
//! is a **changed target** ([`Choice::changed`]): the bridge re-classifies it
//! and always asks the person, showing the recorded and the live target
//! side by side ([`ChangedTarget`], carried in `Gate::changed`). Nothing is
//! healed silently.
//!
//! # What a descriptor does not know is unknown, not different
//!
//! A step recorded by Chaperone always knows its element's role (and an
//! empty name is a recorded empty name). A step imported from a Chrome
//! DevTools Recorder file knows what its selectors say: `aria/Large tin`
//! (Puppeteer's ARIA selector: any role with that accessible name) gives
//! the name and no role; `aria/Large tin[role="radio"]` both; a step with
//! CSS, XPath or text selectors only gives neither. An unknown role or
//! name never makes a live element "changed" ([`matches_recorded`]), so a
//! Recorder file replays on the page it was recorded on, and on a
//! re-laid-out page with the same labels, without asking.
//!
//! An accessible name alone is weaker evidence than role and name: when
//! the role is unknown and the one element with the name is not the one
//! an identity locator (id, `name`, test id, `aria-label`: [`identity`])
//! finds as its only match, the two disagree and the step is a changed
//! target too ([`Choice::conflict`]): the person sees the element with the
//! name and what the locator finds instead. Positional locators (CSS
//! paths, XPaths, text) never count as disagreeing: on a re-laid-out page
//! they point elsewhere by design.
//!
//! # Values and parameters ([`bind`])
//!
//! `flow_run {params, secrets}` supplies parameters: every name must be a
//! parameter of the flow; a [`ParamKind::Secret`] parameter only as a stored
//! secret's name, every other only as text; a parameter that is neither
//! supplied nor has a default refuses the run before anything is done.
//!
//! # Risk and stopping
//!
//! A step's stored risk ([`crate::flow::Step::risk`]) can raise the live
//! classification, never lower it ([`floor`]). The run stops at the first
//! failure, and after a high-risk step whose effect is unknown
//! ([`stops_after`]); nothing is retried.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::action::{Effect, ResolvedElement};
use crate::audit::DecidedBy;
use crate::error::WireError;
use crate::flow::{Descriptor, Flow, Locator, ParamKind, StepAction, Value};
use crate::risk::RiskLevel;
pub use crate::target::{ChangedTarget, TargetSummary};

/// Elements of one kind listed in a [`Missing`] report.
pub const MAX_SEEN: usize = 8;
/// How long a step waits for its element to appear (polling the page).
pub const STEP_WAIT_MS: u64 = 5_000;
/// How often the bridge asks the page again while a step waits.
pub const STEP_POLL_MS: u64 = 100;

/// What the content script found for a descriptor: candidates by index,
/// which of them have the recorded role and name, and which each locator
/// matched (same order as [`Descriptor::locators`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub candidates: Vec<TargetSummary>,
    pub by_role_name: Vec<usize>,
    pub by_locator: Vec<Vec<usize>>,
}

/// How the winner was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", content = "locator", rename_all = "snake_case")]
pub enum Via {
    RoleName,
    /// The index of the locator in the descriptor.
    Locator(usize),
}

/// The element a step acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Index into [`Found::candidates`].
    pub candidate: usize,
    pub via: Via,
    /// Found only by a fallback locator, with another role or name; or
    /// found by a name alone that an identity locator contradicts.
    pub changed: bool,
    /// Found by its name alone (role unknown) while this identity locator
    /// (index into the descriptor's locators) matches exactly this other
    /// candidate.
    pub conflict: Option<(usize, usize)>,
}

impl Choice {
    fn plain(candidate: usize, via: Via, changed: bool) -> Choice {
        Choice { candidate, via, changed, conflict: None }
    }
}

/// Why no element was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Miss {
    /// Nothing matches.
    NotFound,
    /// More than one element matches and nothing tells them apart.
    Ambiguous,
}

/// Names compared as the person reads them: whitespace collapsed, case
/// ignored. Look-alike letters are *not* folded: "Dеlеtе" with Cyrillic
/// letters is another name.
pub fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    norm(a) == norm(b)
}

/// Whether the descriptor knows its element's role (see the module docs:
/// a recording always does, an imported `aria/Name` does not).
pub fn role_known(d: &Descriptor) -> bool {
    !d.role.is_empty()
}

/// Whether the descriptor knows its element's accessible name: it has one,
/// or it knows the role (a recording's empty name is recorded as empty).
pub fn name_known(d: &Descriptor) -> bool {
    !d.name.trim().is_empty() || role_known(d)
}

/// Whether a live element is the recorded one by role and name; what the
/// descriptor does not know is not compared.
pub fn matches_recorded(d: &Descriptor, live: &TargetSummary) -> bool {
    (!role_known(d) || d.role == live.role) && (!name_known(d) || same_name(&d.name, &live.name))
}

/// Whether a locator names one element by what it is (id, `name`, test
/// id, `aria-label`) rather than where it is (CSS, XPath, text): only these
/// can contradict a name (module docs).
pub fn identity(l: &Locator) -> bool {
    matches!(l, Locator::Id(_) | Locator::Name(_) | Locator::TestId { .. } | Locator::AriaLabel(_))
}

/// The decision described in the module docs.
pub fn choose(d: &Descriptor, f: &Found) -> Result<Choice, Miss> {
    let named = !d.name.trim().is_empty();
    let by_role_name: &[usize] = if named { &f.by_role_name } else { &[] };
    if let [one] = by_role_name {
        if !role_known(d) {
            let contradicted =
                d.locators.iter().zip(&f.by_locator).enumerate().find_map(|(i, (l, hits))| match hits.as_slice() {
                    [other] if identity(l) && other != one => Some((i, *other)),
                    _ => None,
                });
            if let Some(c) = contradicted {
                return Ok(Choice { candidate: *one, via: Via::RoleName, changed: true, conflict: Some(c) });
            }
        }
        return Ok(Choice::plain(*one, Via::RoleName, false));
    }
    if by_role_name.len() > 1 {
        for (i, hits) in f.by_locator.iter().enumerate() {
            if let [one] = hits.as_slice()
                && by_role_name.contains(one)
            {
                return Ok(Choice::plain(*one, Via::Locator(i), false));
            }
        }
        return Err(Miss::Ambiguous);
    }
    let mut several = false;
    for (i, hits) in f.by_locator.iter().enumerate() {
        match hits.as_slice() {
            [] => {}
            [one] => {
                let live = f.candidates.get(*one).cloned().unwrap_or_default();
                let changed = !matches_recorded(d, &live);
                return Ok(Choice::plain(*one, Via::Locator(i), changed));
            }
            _ => several = true,
        }
    }
    Err(if several { Miss::Ambiguous } else { Miss::NotFound })
}

/// What the approval window shows for a changed target (`None` when the
/// choice is not one): the recording, the element acted on, and how it was
/// found — for a name a locator contradicts, also what that locator finds.
pub fn changed_target(d: &Descriptor, f: &Found, c: &Choice) -> Option<ChangedTarget> {
    if !c.changed {
        return None;
    }
    let at = |i: usize| f.candidates.get(i).cloned().unwrap_or_default();
    let locator = |i: usize| d.locators.get(i).map(describe_locator).unwrap_or_default();
    let via = match (c.via, c.conflict) {
        (_, Some((l, other))) => format!("its name; but {} finds {}", locator(l), at(other).line()),
        (Via::Locator(i), None) => locator(i),
        (Via::RoleName, None) => "role and name".into(),
    };
    Some(ChangedTarget {
        recorded: TargetSummary { role: d.role.clone(), name: d.name.clone() },
        live: at(c.candidate),
        via,
    })
}

/// Whether a fill lands on a list of options rather than a text field: a
/// `<select>` (role `combobox` or `listbox`, not editable). A Recorder
/// file's `change` says only "set the value"; its selectors rarely say the
/// element is a `<select>`, so the live element decides, and the value is
/// chosen as an option (by value or label), never typed.
pub fn fill_chooses(live: &crate::risk::ElementFacts) -> bool {
    !live.editable && matches!(live.role.as_str(), "combobox" | "listbox")
}

/// A locator as the person reads it: `id "place"`, `css "form > button"`.
pub fn describe_locator(l: &Locator) -> String {
    let (kind, value) = match l {
        Locator::Id(v) => ("id", v.as_str()),
        Locator::Name(v) => ("name", v.as_str()),
        Locator::TestId { attr, value } => (attr.as_str(), value.as_str()),
        Locator::AriaLabel(v) => ("aria-label", v.as_str()),
        Locator::Css(v) => ("css", v.as_str()),
        Locator::XPath(v) => ("xpath", v.as_str()),
        Locator::Text(v) => ("text", v.as_str()),
    };
    let mut s = format!("{kind} ");
    crate::snapshot::quote(value, &mut s);
    s
}

/// The content script's answer to `PageRequest::Locate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Located {
    /// The element, under a ref the page gave it, with its facts.
    Found {
        #[serde(rename = "ref")]
        element_ref: String,
        element: Box<ResolvedElement>,
        via: Via,
        /// A checkbox's or radio's checked state (`None` for other elements).
        checked: Option<bool>,
        /// Set when the winner is a changed target.
        changed: Option<ChangedTarget>,
    },
    /// Nothing chosen: what was there.
    Missing { miss: Miss, seen: Box<Missing> },
}

/// What the page showed when a descriptor found nothing (or too much).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Missing {
    /// Elements with the recorded role and name.
    pub by_role_name: u32,
    /// Those elements (at most [`MAX_SEEN`]): the look-alikes an
    /// ambiguous step could not tell apart.
    pub named: Vec<TargetSummary>,
    /// Per locator, in the descriptor's order: how many elements it matched.
    pub by_locator: Vec<u32>,
    /// What the locators matched (at most [`MAX_SEEN`]).
    pub matched: Vec<TargetSummary>,
    /// Other visible elements with the recorded role (at most [`MAX_SEEN`]).
    pub same_role: Vec<TargetSummary>,
    /// The page's URL (query and fragment dropped).
    pub url: String,
}

/// The `NOT_FOUND` message for a step whose element was not chosen: what
/// was expected and what is there.
pub fn missing_message(d: &Descriptor, miss: Miss, seen: &Missing) -> String {
    let expected = TargetSummary { role: d.role.clone(), name: d.name.clone() };
    let mut s = match miss {
        Miss::NotFound => format!("no element on the page matches the recorded {}", expected.line()),
        Miss::Ambiguous => format!("more than one element matches the recorded {}", expected.line()),
    };
    let by = if role_known(d) { "by role and name" } else { "by name" };
    s.push_str(&format!("; {by}: {}", seen.by_role_name));
    for (l, n) in d.locators.iter().zip(&seen.by_locator) {
        s.push_str(&format!(", {}: {n}", describe_locator(l)));
    }
    if !seen.named.is_empty() {
        s.push_str("; the elements with the name: ");
        s.push_str(&seen.named.iter().map(TargetSummary::line).collect::<Vec<_>>().join(", "));
    }
    if !seen.matched.is_empty() {
        s.push_str("; the locators found ");
        s.push_str(&seen.matched.iter().map(TargetSummary::line).collect::<Vec<_>>().join(", "));
    }
    if !seen.same_role.is_empty() {
        s.push_str(&format!("; the page's {} elements: ", if d.role.is_empty() { "other" } else { &d.role }));
        s.push_str(&seen.same_role.iter().map(|t| t.line()).collect::<Vec<_>>().join(", "));
    }
    s
}

/// A parameter's value for one run.
#[derive(Clone, PartialEq, Eq)]
pub enum Bound {
    Text(String),
    /// A stored secret's name (typed only through the secret path).
    Secret(String),
}

impl std::fmt::Debug for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Text(t) => write!(f, "Text({} chars)", t.chars().count()),
            Bound::Secret(n) => write!(f, "Secret({n})"),
        }
    }
}

/// Why a run's parameters are refused (before anything is done).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindError {
    Unknown(String),
    /// A secret parameter given as text.
    SecretAsText(String),
    /// A text parameter given as a secret.
    TextAsSecret(String),
    /// Neither supplied nor defaulted (names).
    Missing(Vec<String>),
    /// A step names a parameter the flow does not declare.
    Undeclared(String),
    TooLong(String),
}

impl BindError {
    pub fn message(&self) -> String {
        match self {
            BindError::Unknown(n) => format!("the flow has no parameter {n}"),
            BindError::SecretAsText(n) => format!(
                "{n} is a sensitive field's parameter: pass it in secrets as {{\"{n}\": {{\"secret\": \"NAME\"}}}}"
            ),
            BindError::TextAsSecret(n) => {
                format!("{n} is not a sensitive field's parameter: pass it in params as text")
            }
            BindError::Missing(ns) => format!("missing parameters (no default): {}", ns.join(", ")),
            BindError::Undeclared(n) => format!("the flow is malformed: a step uses the undeclared parameter {n}"),
            BindError::TooLong(n) => {
                format!("{n} is longer than {} characters", crate::flow::MAX_VALUE_CHARS)
            }
        }
    }
}

/// The value of every parameter the flow's steps use (see the module docs).
pub fn bind(
    flow: &Flow,
    params: &BTreeMap<String, String>,
    secrets: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, Bound>, BindError> {
    let declared = |n: &str| flow.params.iter().find(|p| p.name == n);
    for (n, v) in params {
        let p = declared(n).ok_or_else(|| BindError::Unknown(n.clone()))?;
        if p.kind == ParamKind::Secret {
            return Err(BindError::SecretAsText(n.clone()));
        }
        if v.chars().count() > crate::flow::MAX_VALUE_CHARS {
            return Err(BindError::TooLong(n.clone()));
        }
    }
    for n in secrets.keys() {
        let p = declared(n).ok_or_else(|| BindError::Unknown(n.clone()))?;
        if p.kind != ParamKind::Secret {
            return Err(BindError::TextAsSecret(n.clone()));
        }
    }
    let mut out = BTreeMap::new();
    let mut missing = Vec::new();
    for step in &flow.steps {
        let (StepAction::Fill { value: Value::Param(n) } | StepAction::Select { value: Value::Param(n), .. }) =
            &step.action
        else {
            continue;
        };
        let p = declared(n).ok_or_else(|| BindError::Undeclared(n.clone()))?;
        if out.contains_key(n) || missing.contains(n) {
            continue;
        }
        let bound = match (p.kind, params.get(n), secrets.get(n)) {
            (ParamKind::Secret, _, Some(s)) => Some(Bound::Secret(s.clone())),
            (ParamKind::Secret, _, None) => None,
            (_, Some(v), _) => Some(Bound::Text(v.clone())),
            (_, None, _) => p.default.clone().map(Bound::Text),
        };
        match bound {
            Some(b) => {
                out.insert(n.clone(), b);
            }
            None => missing.push(n.clone()),
        }
    }
    if missing.is_empty() { Ok(out) } else { Err(BindError::Missing(missing)) }
}

/// The risk a step is gated with: the live classification, raised to the
/// stored risk when that is higher (never lowered). `true` when raised.
pub fn floor(live: RiskLevel, stored: Option<RiskLevel>) -> (RiskLevel, bool) {
    match stored {
        Some(s) if s > live => (s, true),
        _ => (live, false),
    }
}

/// Whether the run stops after a step that ran: its effect is unknown and
/// its risk (as gated) is high — a double order is worse than a stopped run.
pub fn stops_after(risk: RiskLevel, effect: Effect) -> bool {
    effect == Effect::Unknown && risk == RiskLevel::High
}

/// Whether a step may run on the page the tab shows: the same origin as
/// where it was recorded (a flow recorded on one site never acts on
/// another).
pub fn same_origin(recorded: &str, live: &str) -> bool {
    match (crate::url::Origin::of(recorded), crate::url::Origin::of(live)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
    /// It ran.
    Done,
    /// Nothing to do (a checkbox already as recorded).
    Skipped,
    /// It failed or was refused; the run stopped here.
    Failed,
    /// Not reached: an earlier step stopped the run.
    NotRun,
}

/// One step of `flow_run`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepReport {
    /// 1-based.
    pub step: usize,
    /// `click button "Place order"` (values masked).
    pub summary: String,
    pub outcome: StepOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<RiskLevel>,
    /// `allow`, `confirm` or `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<Effect>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// How the element was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<ChangedTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
    /// The tab's URL after the step (redacted).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    pub ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Param, Step};

    fn t(role: &str, name: &str) -> TargetSummary {
        TargetSummary { role: role.into(), name: name.into() }
    }

    fn order_button() -> Descriptor {
        Descriptor {
            role: "button".into(),
            name: "Place order".into(),
            tag: "button".into(),
            locators: vec![Locator::Id("place".into()), Locator::Css("form > button".into())],
            ..Descriptor::default()
        }
    }

    #[test]
    fn the_winner_and_the_changed_target_rule() {
        let d = order_button();
        let cands = vec![t("button", "Place order"), t("button", "Delete account"), t("button", "place  ORDER")];
        let found = |by_role_name: Vec<usize>, by_locator: Vec<Vec<usize>>| Found {
            candidates: cands.clone(),
            by_role_name,
            by_locator,
        };
        let ok = |candidate, via, changed| Ok(Choice::plain(candidate, via, changed));
        let cases: Vec<(&str, Found, Result<Choice, Miss>)> = vec![
            ("role and name, one", found(vec![0], vec![vec![], vec![]]), ok(0, Via::RoleName, false)),
            (
                "role and name win over a locator that points elsewhere",
                found(vec![0], vec![vec![1], vec![1]]),
                ok(0, Via::RoleName, false),
            ),
            (
                "two by role and name, the id tells them apart",
                found(vec![0, 2], vec![vec![2], vec![0, 2]]),
                ok(2, Via::Locator(0), false),
            ),
            (
                "two by role and name, the first single locator hit outside them does not count",
                found(vec![0, 2], vec![vec![1], vec![0]]),
                ok(0, Via::Locator(1), false),
            ),
            ("two by role and name, nothing tells", found(vec![0, 2], vec![vec![], vec![0, 2]]), Err(Miss::Ambiguous)),
            (
                "gone by name, the id finds another button: changed",
                found(vec![], vec![vec![1], vec![]]),
                ok(1, Via::Locator(0), true),
            ),
            (
                "gone by name, the id finds the same name differently spaced: not changed",
                found(vec![], vec![vec![2], vec![]]),
                ok(2, Via::Locator(0), false),
            ),
            (
                "a locator with several hits is skipped for the next",
                found(vec![], vec![vec![0, 1], vec![1]]),
                ok(1, Via::Locator(1), true),
            ),
            ("only locators with several hits", found(vec![], vec![vec![0, 1], vec![]]), Err(Miss::Ambiguous)),
            ("nothing at all", found(vec![], vec![vec![], vec![]]), Err(Miss::NotFound)),
        ];
        for (what, f, want) in cases {
            assert_eq!(choose(&d, &f), want, "{what}");
        }
        // Another role under the same name is a changed target too.
        let f = Found { candidates: vec![t("link", "Place order")], by_role_name: vec![], by_locator: vec![vec![0]] };
        assert_eq!(choose(&d, &f), Ok(Choice::plain(0, Via::Locator(0), true)));
        // Look-alike letters are another name.
        let f =
            Found { candidates: vec![t("button", "Plаce order")], by_role_name: vec![], by_locator: vec![vec![0]] };
        assert!(choose(&d, &f).unwrap().changed);
    }

    #[test]
    fn an_unnamed_recording_goes_by_its_locators() {
        let d =
            Descriptor { role: "textbox".into(), locators: vec![Locator::Name("q".into())], ..Descriptor::default() };
        // by_role_name is ignored without a name (every textbox would match).
        let f = Found {
            candidates: vec![t("textbox", ""), t("textbox", "")],
            by_role_name: vec![0, 1],
            by_locator: vec![vec![1]],
        };
        assert_eq!(choose(&d, &f), Ok(Choice::plain(1, Via::Locator(0), false)));
        let f = Found { candidates: vec![t("textbox", "Search")], by_role_name: vec![], by_locator: vec![vec![0]] };
        assert!(choose(&d, &f).unwrap().changed, "a name where the recording had none");
    }

    /// A Recorder file's `aria/Large tin`: the name, no role; `#size-l`
    /// and an XPath as fallbacks. Candidates: 0 the radio as recorded, 1 a
    /// link with the same name, 2 another radio, 3 a checkbox.
    #[test]
    fn an_unknown_role_is_unknown_not_different() {
        let d = Descriptor {
            name: "Large tin".into(),
            locators: vec![
                Locator::Id("size-l".into()),
                Locator::XPath("//form/label[2]/input".into()),
                Locator::Name("size".into()),
            ],
            ..Descriptor::default()
        };
        let cands =
            vec![t("radio", "Large tin"), t("link", "Large tin"), t("radio", "Small tin"), t("checkbox", "Gift")];
        let found = |by_role_name: Vec<usize>, by_locator: Vec<Vec<usize>>| Found {
            candidates: cands.clone(),
            by_role_name,
            by_locator,
        };
        let ok = |candidate, via, changed| Ok(Choice::plain(candidate, via, changed));
        let cases: Vec<(&str, Found, Result<Choice, Miss>)> = vec![
            (
                "the page it was recorded on: the name finds it, the id agrees",
                found(vec![0], vec![vec![0], vec![0], vec![0, 2]]),
                ok(0, Via::RoleName, false),
            ),
            (
                "a re-laid-out twin: other ids, the XPath points at another radio, the name finds it",
                found(vec![0], vec![vec![], vec![2], vec![0, 2]]),
                ok(0, Via::RoleName, false),
            ),
            (
                "the name on a link now, no locator says otherwise: any role has the name (Puppeteer's rule)",
                found(vec![1], vec![vec![], vec![], vec![]]),
                ok(1, Via::RoleName, false),
            ),
            (
                "the name belongs to another element than the id: changed, both shown",
                found(vec![1], vec![vec![0], vec![], vec![]]),
                Ok(Choice { candidate: 1, via: Via::RoleName, changed: true, conflict: Some((0, 0)) }),
            ),
            (
                "a `name` attribute with one match elsewhere contradicts too",
                found(vec![1], vec![vec![], vec![], vec![2]]),
                Ok(Choice { candidate: 1, via: Via::RoleName, changed: true, conflict: Some((2, 2)) }),
            ),
            (
                "two elements with the name, the id tells them apart",
                found(vec![0, 1], vec![vec![1], vec![0], vec![]]),
                ok(1, Via::Locator(0), false),
            ),
            (
                "two elements with the name, only the XPath hits one of them: it decides",
                found(vec![0, 1], vec![vec![], vec![0], vec![0, 2]]),
                ok(0, Via::Locator(1), false),
            ),
            (
                "two elements with the name, nothing tells them apart: not found, never the first",
                found(vec![0, 1], vec![vec![], vec![2], vec![0, 2]]),
                Err(Miss::Ambiguous),
            ),
            (
                "no element with the name, the id finds one: a changed target (another name)",
                found(vec![], vec![vec![2], vec![], vec![]]),
                ok(2, Via::Locator(0), true),
            ),
            (
                "no element with the name, the id finds it differently spaced: not changed, whatever its role",
                found(vec![], vec![vec![0], vec![], vec![]]),
                ok(0, Via::Locator(0), false),
            ),
            ("nothing", found(vec![], vec![vec![], vec![], vec![]]), Err(Miss::NotFound)),
        ];
        for (what, f, want) in cases {
            assert_eq!(choose(&d, &f), want, "{what}");
        }

        // The window shows both: the element with the name, and what the
        // id finds instead.
        let f = found(vec![1], vec![vec![0], vec![], vec![]]);
        let c = choose(&d, &f).unwrap();
        let shown = changed_target(&d, &f, &c).unwrap();
        assert_eq!(shown.recorded, t("", "Large tin"));
        assert_eq!(shown.live, t("link", "Large tin"));
        assert_eq!(shown.via, "its name; but id \"size-l\" finds radio \"Large tin\"");
        assert_eq!(shown.recorded.line(), "element \"Large tin\"");
        assert_eq!(changed_target(&d, &f, &Choice::plain(0, Via::RoleName, false)), None);

        // Known and unknown, compared field by field.
        let known = Descriptor { role: "radio".into(), name: "Large tin".into(), ..Descriptor::default() };
        let nothing = Descriptor { locators: vec![Locator::Css("#a".into())], ..Descriptor::default() };
        let nameless = Descriptor { role: "textbox".into(), ..Descriptor::default() };
        for (what, d, live, same) in [
            ("role unknown, same name", &d, t("radio", "large  TIN"), true),
            ("role unknown, other name", &d, t("radio", "Small tin"), false),
            ("role known, other role", &known, t("link", "Large tin"), false),
            ("role known, same", &known, t("radio", "Large tin"), true),
            ("nothing known", &nothing, t("button", "Delete account"), true),
            ("a recorded empty name", &nameless, t("textbox", "Search"), false),
            ("a recorded empty name, still empty", &nameless, t("textbox", ""), true),
        ] {
            assert_eq!(matches_recorded(d, &live), same, "{what}");
        }
        // A recorder step with no aria selector goes by its locators; what
        // it finds is not "changed" (nothing to compare), the gate still
        // classifies the live element.
        let f = Found { candidates: vec![t("button", "Go")], by_role_name: vec![], by_locator: vec![vec![0]] };
        assert_eq!(choose(&nothing, &f), Ok(Choice::plain(0, Via::Locator(0), false)));
    }

    #[test]
    fn a_fill_on_a_select_chooses() {
        use crate::risk::ElementFacts;
        let facts =
            |role: &str, editable: bool| ElementFacts { role: role.into(), editable, ..ElementFacts::default() };
        for (what, f, chooses) in [
            ("a <select>", facts("combobox", false), true),
            ("a <select multiple>", facts("listbox", false), true),
            ("an editable combobox (typed)", facts("combobox", true), false),
            ("a text field", facts("textbox", true), false),
            ("a search field", facts("searchbox", true), false),
        ] {
            assert_eq!(fill_chooses(&f), chooses, "{what}");
        }
    }

    #[test]
    fn an_ambiguous_name_lists_every_look_alike() {
        let d = Descriptor {
            name: "Large tin".into(),
            locators: vec![Locator::Id("size-l".into())],
            ..Descriptor::default()
        };
        let seen = Missing {
            by_role_name: 2,
            named: vec![t("radio", "Large tin"), t("link", "Large tin")],
            by_locator: vec![0],
            ..Missing::default()
        };
        assert_eq!(
            missing_message(&d, Miss::Ambiguous, &seen),
            "more than one element matches the recorded element \"Large tin\"; by name: 2, id \"size-l\": 0; the \
             elements with the name: radio \"Large tin\", link \"Large tin\""
        );
    }

    #[test]
    fn the_not_found_message_says_what_was_expected_and_what_is_there() {
        let d = order_button();
        let seen = Missing {
            by_role_name: 0,
            by_locator: vec![0, 2],
            matched: vec![t("button", "Back"), t("button", "Delete account")],
            same_role: vec![t("button", "Back")],
            url: "http://127.0.0.1:1/flowshop-missing/review.html".into(),
            ..Missing::default()
        };
        let m = missing_message(&d, Miss::Ambiguous, &seen);
        assert!(m.starts_with("more than one element matches the recorded button \"Place order\""), "{m}");
        assert!(m.contains("id \"place\": 0, css \"form > button\": 2"), "{m}");
        assert!(m.contains("the locators found button \"Back\", button \"Delete account\""), "{m}");
        assert!(m.contains("the page's button elements: button \"Back\""), "{m}");
        let m = missing_message(&d, Miss::NotFound, &Missing { by_locator: vec![0, 0], ..Missing::default() });
        assert_eq!(
            m,
            "no element on the page matches the recorded button \"Place order\"; by role and name: 0, id \"place\": \
             0, css \"form > button\": 0"
        );
    }

    fn flow(params: Vec<Param>, steps: Vec<StepAction>) -> Flow {
        Flow {
            name: "f".into(),
            created: "2026-12-01T00:00:00Z".into(),
            steps: steps
                .into_iter()
                .map(|action| Step {
                    action,
                    target: None,
                    url: "https://a.example/".into(),
                    title: String::new(),
                    risk: None,
                })
                .collect(),
            params,
        }
    }

    fn param(name: &str, kind: ParamKind, default: Option<&str>) -> Param {
        Param { name: name.into(), kind, default: default.map(str::to_string) }
    }

    #[test]
    fn parameters_are_bound_or_the_run_is_refused() {
        let f = flow(
            vec![
                param("email", ParamKind::Email, None),
                param("city", ParamKind::Text, Some("Graz")),
                param("token", ParamKind::Secret, None),
                param("unused", ParamKind::Text, None),
            ],
            vec![
                StepAction::Fill { value: Value::Param("email".into()) },
                StepAction::Fill { value: Value::Param("city".into()) },
                StepAction::Fill { value: Value::Param("token".into()) },
                StepAction::Fill { value: Value::Param("email".into()) },
                StepAction::Fill { value: Value::Literal("kept".into()) },
                StepAction::Click,
            ],
        );
        let m = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let ok = bind(&f, &m(&[("email", "a@b.example")]), &m(&[("token", "API_TOKEN")])).unwrap();
        assert_eq!(ok["email"], Bound::Text("a@b.example".into()));
        assert_eq!(ok["city"], Bound::Text("Graz".into()), "the default");
        assert_eq!(ok["token"], Bound::Secret("API_TOKEN".into()));
        assert!(!ok.contains_key("unused"), "only what the steps use");
        let over = bind(&f, &m(&[("email", "x"), ("city", "Wien")]), &m(&[("token", "T")])).unwrap();
        assert_eq!(over["city"], Bound::Text("Wien".into()), "a value beats the default");

        let long = "x".repeat(crate::flow::MAX_VALUE_CHARS + 1);
        type Map = BTreeMap<String, String>;
        let cases: Vec<(Map, Map, BindError)> = vec![
            (m(&[("email", "x"), ("nope", "1")]), m(&[("token", "T")]), BindError::Unknown("nope".into())),
            (m(&[("email", "x"), ("token", "CANARY")]), m(&[]), BindError::SecretAsText("token".into())),
            (m(&[]), m(&[("email", "E"), ("token", "T")]), BindError::TextAsSecret("email".into())),
            (m(&[]), m(&[]), BindError::Missing(vec!["email".into(), "token".into()])),
            (m(&[("email", long.as_str())]), m(&[("token", "T")]), BindError::TooLong("email".into())),
        ];
        for (params, secrets, want) in cases {
            assert_eq!(bind(&f, &params, &secrets), Err(want.clone()), "{want:?}");
            assert!(!want.message().contains("CANARY"));
        }
        let bad = flow(vec![], vec![StepAction::Select { value: Value::Param("size".into()), option: None }]);
        assert_eq!(bind(&bad, &m(&[]), &m(&[])), Err(BindError::Undeclared("size".into())));
        assert_eq!(format!("{:?}", Bound::Text("CANARY-x".into())), "Text(8 chars)");
    }

    #[test]
    fn stored_risk_raises_never_lowers() {
        use RiskLevel::*;
        for (live, stored, want) in [
            (Low, None, (Low, false)),
            (Low, Some(High), (High, true)),
            (Medium, Some(Low), (Medium, false)),
            (High, Some(Low), (High, false)),
            (High, Some(High), (High, false)),
            (Low, Some(Medium), (Medium, true)),
        ] {
            assert_eq!(floor(live, stored), want, "{live:?} {stored:?}");
        }
    }

    #[test]
    fn unknown_effects_stop_after_high_risk_steps_only() {
        use RiskLevel::*;
        for (risk, effect, stop) in [
            (High, Effect::Unknown, true),
            (High, Effect::Navigated, false),
            (Medium, Effect::Unknown, false),
            (Low, Effect::Unknown, false),
            (High, Effect::None, false),
        ] {
            assert_eq!(stops_after(risk, effect), stop, "{risk:?} {effect:?}");
        }
    }

    #[test]
    fn steps_run_only_on_the_recorded_origin() {
        for (recorded, live, ok) in [
            ("http://127.0.0.1:8080/flowshop/", "http://127.0.0.1:8080/flowshop/review.html?x=1", true),
            ("https://shop.example/a", "https://shop.example:443/b", true),
            ("https://shop.example/a", "https://evil.example/a", false),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:9090/", false),
            ("https://shop.example/", "http://shop.example/", false),
            ("not a url", "https://shop.example/", false),
        ] {
            assert_eq!(same_origin(recorded, live), ok, "{recorded} {live}");
        }
    }

    #[test]
    fn located_answers_keep_their_shape() {
        let m = Located::Missing { miss: Miss::NotFound, seen: Box::default() };
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["kind"], "missing");
        assert_eq!(json["miss"], "not_found");
        assert_eq!(serde_json::from_value::<Located>(json).unwrap(), m);
        assert_eq!(serde_json::to_value(Via::Locator(2)).unwrap(), serde_json::json!({"by": "locator", "locator": 2}));
        assert_eq!(serde_json::to_value(Via::RoleName).unwrap(), serde_json::json!({"by": "role_name"}));
        assert!(
            serde_json::from_str::<Located>(r#"{"kind":"missing","miss":"not_found","seen":{},"approve":1}"#).is_err()
        );
    }
}
