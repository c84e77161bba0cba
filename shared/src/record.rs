//! Rules for what a flow may hold, checked where a flow enters the store
//! (a recording, an imported file) and again where it is read back
//! (docs/design.md, "Recording and flows").
//!
//! - [`check_flow`]: the bounds of `crate::flow` (steps, parameters,
//!   locators, characters of every field), parameter references, URLs
//!   (http/https only), and the sensitive-field rule: a value aimed at a
//!   sensitive field is always a [`ParamKind::Secret`] parameter with no
//!   default, never a literal.
//! - [`descriptor_sensitivity`]: `crate::sensitive` applied to what a
//!   descriptor says of its field (type, `name`, id, label, placeholder,
//!   accessible name), so the bridge re-checks what the extension decided.
//! - [`person`]: what counts as the person's own step or navigation, and
//!   tokens in URL paths.

pub mod person;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::flow::{
    Descriptor, Flow, Locator, MAX_FLOW_NAME_CHARS, MAX_LOCATOR_CHARS, MAX_LOCATORS, MAX_PARAMS, MAX_STEPS,
    MAX_VALUE_CHARS, ParamKind, Step, StepAction, Value, check_flow_name, is_valid_param_name,
};
use crate::limits::{MAX_NAME_CHARS, MAX_URL_CHARS};
use crate::sensitive::{FieldFacts, SensitiveKind, classify_field, classify_name};

/// Characters of a descriptor's role, tag and input type.
pub const MAX_SHORT_CHARS: usize = 40;
/// Characters of a flow's `created` timestamp.
pub const MAX_CREATED_CHARS: usize = 40;
/// The keys a `press_key` step may press.
pub const STEP_KEYS: &[&str] = &["Enter", "Tab", "Escape"];

/// Why a flow is refused: which step (0-based, `None` for the flow itself)
/// and what is wrong. Never carries a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowProblem {
    pub step: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for FlowProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.step {
            Some(i) => write!(f, "step {}: {}", i + 1, self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for FlowProblem {}

fn flow_problem(message: impl Into<String>) -> FlowProblem {
    FlowProblem { step: None, message: message.into() }
}

/// Whether a flow may be stored: see the module doc.
pub fn check_flow(flow: &Flow) -> Result<(), FlowProblem> {
    if let Err(bad) = check_flow_name(&flow.name) {
        return Err(flow_problem(bad.message()));
    }
    if flow.created.chars().count() > MAX_CREATED_CHARS {
        return Err(flow_problem("created is too long"));
    }
    if flow.steps.is_empty() {
        return Err(flow_problem("a flow has at least one step"));
    }
    if flow.steps.len() > MAX_STEPS {
        return Err(flow_problem(format!("a flow has at most {MAX_STEPS} steps")));
    }
    if flow.params.len() > MAX_PARAMS {
        return Err(flow_problem(format!("a flow has at most {MAX_PARAMS} parameters")));
    }
    let mut names = HashSet::new();
    for p in &flow.params {
        if !is_valid_param_name(&p.name) {
            return Err(flow_problem(format!("parameter {:?}: names are [a-z][a-z0-9_]{{0,39}}", clip(&p.name))));
        }
        if !names.insert(p.name.as_str()) {
            return Err(flow_problem(format!("parameter {:?} is declared twice", p.name)));
        }
        match (&p.default, p.kind) {
            (Some(_), ParamKind::Secret) => {
                return Err(flow_problem(format!("parameter {:?} is a secret and has no default", p.name)));
            }
            (Some(d), _) if d.chars().count() > MAX_VALUE_CHARS => {
                return Err(flow_problem(format!("the default of {:?} is too long", p.name)));
            }
            _ => {}
        }
    }
    for (i, step) in flow.steps.iter().enumerate() {
        check_step(flow, step).map_err(|message| FlowProblem { step: Some(i), message })?;
    }
    Ok(())
}

fn check_step(flow: &Flow, step: &Step) -> Result<(), String> {
    check_url(&step.url, "url")?;
    if step.title.chars().count() > MAX_NAME_CHARS {
        return Err("title is too long".into());
    }
    if let Some(d) = &step.target {
        check_descriptor(d)?;
    }
    let value = match &step.action {
        StepAction::Navigate { url } => {
            check_url(url, "navigate url")?;
            for name in person::url_placeholders(url) {
                match flow.params.iter().find(|p| p.name == name) {
                    None => return Err(format!("parameter {:?} is not declared", clip(name))),
                    Some(p) if p.kind == ParamKind::Secret => {
                        return Err(format!("parameter {name:?} is a secret and cannot be part of a URL"));
                    }
                    Some(_) => {}
                }
            }
            None
        }
        StepAction::Click | StepAction::Check { .. } => None,
        StepAction::PressKey { key } => {
            if !STEP_KEYS.contains(&key.as_str()) {
                return Err(format!("key {:?} is not one of {}", clip(key), STEP_KEYS.join(", ")));
            }
            None
        }
        StepAction::Select { value: Value::Param(_), option: Some(_) } => {
            return Err("a chosen option's value is kept only with a literal choice".into());
        }
        StepAction::Select { option: Some(o), .. } if o.chars().count() > MAX_VALUE_CHARS => {
            return Err("option value is too long".into());
        }
        StepAction::Fill { value } | StepAction::Select { value, .. } => Some(value),
    };
    let needs_target = !matches!(step.action, StepAction::Navigate { .. } | StepAction::PressKey { .. });
    if needs_target && step.target.is_none() {
        return Err("this step acts on an element and has no target".into());
    }
    let Some(value) = value else { return Ok(()) };
    let sensitive = step.target.as_ref().and_then(descriptor_sensitivity);
    match value {
        Value::Literal(text) => {
            if let Some(kind) = sensitive {
                return Err(format!("a value for a sensitive field ({}) is never stored", kind.as_str()));
            }
            if text.chars().count() > MAX_VALUE_CHARS {
                return Err("value is too long".into());
            }
        }
        Value::Param(name) => {
            let Some(param) = flow.params.iter().find(|p| &p.name == name) else {
                return Err(format!("parameter {:?} is not declared", clip(name)));
            };
            if sensitive.is_some() && param.kind != ParamKind::Secret {
                return Err(format!("parameter {name:?} fills a sensitive field and must be of kind secret"));
            }
        }
    }
    Ok(())
}

fn check_url(url: &str, what: &str) -> Result<(), String> {
    if url.chars().count() > MAX_URL_CHARS {
        return Err(format!("{what} is too long"));
    }
    match crate::url::origin_parts(url) {
        Some(_) if !url.chars().any(char::is_control) => Ok(()),
        _ => Err(format!("{what} must be an absolute http:// or https:// URL")),
    }
}

fn check_descriptor(d: &Descriptor) -> Result<(), String> {
    for (field, text, max) in [
        ("role", &d.role, MAX_SHORT_CHARS),
        ("tag", &d.tag, MAX_SHORT_CHARS),
        ("input_type", &d.input_type, MAX_SHORT_CHARS),
        ("name", &d.name, MAX_NAME_CHARS),
        ("label", &d.label, MAX_NAME_CHARS),
        ("placeholder", &d.placeholder, MAX_NAME_CHARS),
    ] {
        if text.chars().count() > max {
            return Err(format!("target {field} is too long"));
        }
    }
    if d.locators.len() > MAX_LOCATORS {
        return Err(format!("a target has at most {MAX_LOCATORS} locators"));
    }
    for l in &d.locators {
        let text = match l {
            Locator::TestId { attr, value } => {
                if !crate::flow::TEST_ID_ATTRS.contains(&attr.as_str()) {
                    return Err(format!("{:?} is not a test-id attribute", clip(attr)));
                }
                value
            }
            Locator::Id(v)
            | Locator::Name(v)
            | Locator::AriaLabel(v)
            | Locator::Css(v)
            | Locator::XPath(v)
            | Locator::Text(v) => v,
        };
        if text.is_empty() || text.chars().count() > MAX_LOCATOR_CHARS {
            return Err(format!("a locator is empty or over {MAX_LOCATOR_CHARS} characters"));
        }
    }
    Ok(())
}

/// Whether the field a descriptor names is sensitive, by the
/// `crate::sensitive` rules on its type, `name` attribute, id, label,
/// placeholder and accessible name.
pub fn descriptor_sensitivity(d: &Descriptor) -> Option<SensitiveKind> {
    let first = |pick: fn(&Locator) -> Option<&str>| d.locators.iter().find_map(pick).unwrap_or("");
    let facts = FieldFacts {
        input_type: &d.input_type,
        autocomplete: "",
        name: first(|l| if let Locator::Name(v) = l { Some(v) } else { None }),
        id: first(|l| if let Locator::Id(v) = l { Some(v) } else { None }),
        label: &d.label,
        placeholder: &d.placeholder,
    };
    classify_field(&facts).or_else(|| classify_name(&d.name)).or_else(|| {
        d.locators.iter().find_map(|l| match l {
            Locator::AriaLabel(v) => classify_name(v),
            Locator::TestId { value, .. } => classify_name(value),
            _ => None,
        })
    })
}

/// A name or key cut for an error message.
fn clip(s: &str) -> String {
    let mut s = s.to_string();
    crate::limits::truncate_chars(&mut s, MAX_FLOW_NAME_CHARS);
    s
}

// ---------------------------------------------------------------------------
// Personal values become parameters.

/// What a recorded field is, by its type, `autocomplete` and words of its
/// label, `name`, id, placeholder and accessible name: the kind of
/// parameter a value typed into it becomes. `None`: nothing personal about
/// the field itself (a search box, a quantity).
pub fn field_kind(field: &Descriptor, autocomplete: &str) -> Option<ParamKind> {
    match field.input_type.as_str() {
        "email" => return Some(ParamKind::Email),
        "tel" => return Some(ParamKind::Phone),
        "url" => return Some(ParamKind::Url),
        "date" | "datetime-local" | "month" | "week" => return Some(ParamKind::Date),
        _ => {}
    }
    for token in autocomplete.split_ascii_whitespace() {
        let t = token.to_ascii_lowercase();
        let kind = match t.as_str() {
            "email" => Some(ParamKind::Email),
            t if t.starts_with("tel") => Some(ParamKind::Phone),
            "url" | "photo" => Some(ParamKind::Url),
            t if t.starts_with("bday") => Some(ParamKind::Date),
            "street-address" | "postal-code" | "country" | "country-name" => Some(ParamKind::Address),
            t if t.starts_with("address-") => Some(ParamKind::Address),
            "name" | "given-name" | "family-name" | "additional-name" | "nickname" | "honorific-prefix"
            | "honorific-suffix" | "organization" | "organization-title" | "username" => Some(ParamKind::Text),
            _ => None,
        };
        if kind.is_some() {
            return kind;
        }
    }
    let attr = |pick: fn(&Locator) -> Option<&str>| field.locators.iter().find_map(pick).unwrap_or("");
    let name_attr = attr(|l| if let Locator::Name(v) = l { Some(v) } else { None });
    let id = attr(|l| if let Locator::Id(v) = l { Some(v) } else { None });
    for text in [field.label.as_str(), name_attr, id, field.placeholder.as_str(), field.name.as_str()] {
        let words = crate::sensitive::words(text);
        for (list, kind) in FIELD_WORDS {
            if words.iter().any(|w| list.contains(&w.as_str())) {
                return Some(*kind);
            }
        }
    }
    (field.tag == "textarea").then_some(ParamKind::Text)
}

/// Words of a field's label, `name`, id or placeholder that make a value
/// typed into it personal, and the kind of parameter it becomes.
const FIELD_WORDS: &[(&[&str], ParamKind)] = &[
    (&["email", "mail"], ParamKind::Email),
    (&["phone", "tel", "telephone", "mobile", "cell", "fax"], ParamKind::Phone),
    (&["birthday", "birthdate", "dob", "birth", "date"], ParamKind::Date),
    (&["website", "homepage", "url"], ParamKind::Url),
    (
        &[
            "street",
            "address",
            "addr",
            "city",
            "town",
            "postcode",
            "postal",
            "zip",
            "zipcode",
            "country",
            "state",
            "region",
            "province",
            "county",
            "house",
            "apartment",
            "suite",
        ],
        ParamKind::Address,
    ),
    (
        &[
            "name",
            "firstname",
            "lastname",
            "surname",
            "given",
            "family",
            "fullname",
            "username",
            "user",
            "company",
            "organisation",
            "organization",
            "note",
            "notes",
            "comment",
            "comments",
            "message",
            "bio",
            "about",
        ],
        ParamKind::Text,
    ),
];

/// What a typed value looks like, whatever its field: an e-mail address,
/// a phone number, a date, a URL, a street address, or free text (several
/// words, or long). `None`: a short single word or number (a search term,
/// a quantity), kept as a literal when the text is kept.
pub fn value_kind(value: &str) -> Option<ParamKind> {
    let v = value.trim();
    if v.is_empty() {
        return None;
    }
    let has_space = v.contains(char::is_whitespace);
    if !has_space
        && let Some((local, domain)) = v.split_once('@')
        && !local.is_empty()
        && domain.contains('.')
        && !domain.contains('@')
    {
        return Some(ParamKind::Email);
    }
    let lower = v.to_ascii_lowercase();
    if !has_space && (lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("www.")) {
        return Some(ParamKind::Url);
    }
    if is_date(v) {
        return Some(ParamKind::Date);
    }
    let digits = v.chars().filter(char::is_ascii_digit).count();
    if digits >= 7 && v.chars().all(|c| c.is_ascii_digit() || " +-()./".contains(c)) {
        return Some(ParamKind::Phone);
    }
    if has_space && digits > 0 && v.chars().any(char::is_alphabetic) {
        return Some(ParamKind::Address);
    }
    if has_space || v.chars().count() > 24 || digits >= 4 {
        return Some(ParamKind::Text);
    }
    None
}

fn is_date(v: &str) -> bool {
    let parts: Vec<&str> = v.split(['-', '.', '/']).collect();
    if parts.len() != 3 || !parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) {
        return false;
    }
    let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
    matches!(lens.as_slice(), [4, 1..=2, 1..=2] | [1..=2, 1..=2, 2] | [1..=2, 1..=2, 4])
}

/// How a typed value is kept in a flow: the one rule (docs/design.md,
/// "Recording and flows").
///
/// - A sensitive field (the extension's verdict `sensitive`, or
///   [`descriptor_sensitivity`] / `autocomplete` here): a new
///   [`ParamKind::Secret`] parameter without a default; `typed` is never
///   looked at.
/// - A personal field or value ([`field_kind`], else [`value_kind`]): a
///   new parameter, whose default is `typed` only when `keep_text`.
/// - Anything else: the literal when `keep_text` and a value was typed;
///   otherwise a text parameter without a default.
///
/// New parameters are appended to `params`, named after the field (its
/// label, `name`, id, placeholder or accessible name, in that order) and
/// made unique. Errs when the flow already has [`MAX_PARAMS`].
pub fn keep_value(
    field: &Descriptor,
    autocomplete: &str,
    sensitive: bool,
    typed: Option<&str>,
    keep_text: bool,
    params: &mut Vec<crate::flow::Param>,
) -> Result<Value, String> {
    let sensitive = sensitive
        || descriptor_sensitivity(field).is_some()
        || classify_field(&FieldFacts { autocomplete, ..FieldFacts::default() }).is_some();
    let typed = typed.map(|t| {
        let mut t = t.to_string();
        crate::limits::truncate_chars(&mut t, MAX_VALUE_CHARS);
        t
    });
    let kind = if sensitive {
        Some(ParamKind::Secret)
    } else {
        field_kind(field, autocomplete).or_else(|| typed.as_deref().and_then(value_kind))
    };
    let (kind, default) = match (kind, typed) {
        (Some(ParamKind::Secret), _) => (ParamKind::Secret, None),
        (Some(kind), typed) => (kind, typed.filter(|_| keep_text)),
        (None, Some(typed)) if keep_text => return Ok(Value::Literal(typed)),
        (None, _) => (ParamKind::Text, None),
    };
    if params.len() >= MAX_PARAMS {
        return Err(format!("a flow has at most {MAX_PARAMS} parameters"));
    }
    let name = param_name(field, kind, params);
    params.push(crate::flow::Param { name: name.clone(), kind, default });
    Ok(Value::Param(name))
}

/// A parameter name for `field`: `[a-z][a-z0-9_]{0,39}`, unique in `taken`.
pub fn param_name(field: &Descriptor, kind: ParamKind, taken: &[crate::flow::Param]) -> String {
    let attr = |pick: fn(&Locator) -> Option<&str>| field.locators.iter().find_map(pick).unwrap_or("");
    let name_attr = attr(|l| if let Locator::Name(v) = l { Some(v) } else { None });
    let id = attr(|l| if let Locator::Id(v) = l { Some(v) } else { None });
    let base = [field.label.as_str(), name_attr, id, field.placeholder.as_str(), field.name.as_str()]
        .into_iter()
        .map(snake)
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| kind_name(kind).to_string());
    let mut name = base.clone();
    let mut n = 2;
    while taken.iter().any(|p| p.name == name) {
        let suffix = format!("_{n}");
        name = format!("{}{suffix}", &base[..base.len().min(40 - suffix.len())]);
        n += 1;
    }
    name
}

fn kind_name(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Email => "email",
        ParamKind::Phone => "phone",
        ParamKind::Date => "date",
        ParamKind::Address => "address",
        ParamKind::Url => "url",
        ParamKind::Text => "text",
        ParamKind::Secret => "secret",
    }
}

/// `"E-mail address"` → `e_mail_address`; ASCII only, at most 32
/// characters, starting with a letter (`""` when nothing is left).
fn snake(text: &str) -> String {
    let words: Vec<String> = crate::sensitive::words(text)
        .into_iter()
        .map(|w| w.chars().map(crate::sensitive::fold_diacritic).filter(char::is_ascii_alphanumeric).collect())
        .filter(|w: &String| !w.is_empty())
        .collect();
    let mut out = words.join("_");
    while out.starts_with(|c: char| !c.is_ascii_lowercase()) {
        out.remove(0);
    }
    out.truncate(32);
    out.trim_end_matches('_').to_string()
}

// ---------------------------------------------------------------------------
// A recording: steps as the extension reports them, assembled into a flow.

/// A typed value on its way from the page to the bridge: `Debug` never
/// shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Typed(pub String);

impl std::fmt::Debug for Typed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(crate::sensitive::MASK)
    }
}

/// One step as the extension reports it (`ExtToBridge::Recorded`), before
/// the bridge turns it into a [`Step`] with [`Recording::push`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedStep {
    pub action: RecordedAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Descriptor>,
    /// The field's `autocomplete` attribute (for the sensitive-field and
    /// parameter rules; not stored).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub autocomplete: String,
    /// The extension found the field sensitive (its `autocomplete`, type,
    /// name…); the bridge checks again and keeps the stricter verdict.
    #[serde(default)]
    pub sensitive: bool,
    /// The page, without query string or fragment.
    pub url: String,
    #[serde(default)]
    pub title: String,
}

/// What the person did, as the extension reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedAction {
    /// The tab went to `url` (without query string or fragment).
    Navigate {
        url: String,
    },
    Click,
    /// Typing into a field, coalesced; `text` only when the person keeps
    /// the text and the field is not sensitive.
    Fill {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<Typed>,
    },
    /// An option of a `<select>` chosen, by its visible label, and the
    /// option's `value` attribute (page-defined, not typed).
    Select {
        label: String,
        #[serde(default)]
        option: String,
    },
    Check {
        checked: bool,
    },
    PressKey {
        key: String,
    },
}

/// Why [`Recording::push`] refused a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushError {
    /// The step breaks the protocol's bounds or shape: counts towards
    /// dropping the connection.
    Malformed(String),
    /// The flow has [`MAX_STEPS`] steps (or [`MAX_PARAMS`] parameters).
    Full,
}

/// A flow being recorded: the pure half of the bridge's recorder.
#[derive(Debug, Clone)]
pub struct Recording {
    name: String,
    keep_text: bool,
    steps: Vec<Step>,
    params: Vec<crate::flow::Param>,
    /// Tokens of navigation URLs already made parameters: a hash of the
    /// token (never the token) and the parameter's name.
    tokens: Vec<(u64, String)>,
}

impl Recording {
    pub fn new(name: &str, keep_text: bool) -> Result<Recording, crate::flow::BadName> {
        check_flow_name(name)?;
        Ok(Recording { name: name.to_string(), keep_text, steps: Vec::new(), params: Vec::new(), tokens: Vec::new() })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn keep_text(&self) -> bool {
        self.keep_text
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Adds one reported step:
    ///
    /// - refused as [`PushError::Malformed`] when a field is over its bound
    ///   or the URL is not http(s) (the extension clamps before sending, so
    ///   only a misbehaving sender gets here);
    /// - the extension reports only navigations the person started in the
    ///   browser (`person::navigation_counts`: typed, bookmark, Back/Forward;
    ///   a link's or a form's is its click or Enter); one to the URL the
    ///   last step, a navigation too, went to is not a step;
    /// - a path segment that looks like a token (`person::looks_like_token`)
    ///   is never kept: in a navigation's URL it becomes a `{{path_token}}`
    ///   parameter without a value, in a step's page URL and title
    ///   (a loading page's title is its URL) `{{token}}`;
    /// - typing into the field the last step typed into, or choosing again
    ///   in the list the last step chose in, replaces that step;
    /// - values are kept by [`keep_value`], selections by [`keep_choice`].
    pub fn push(&mut self, raw: RecordedStep) -> Result<(), PushError> {
        let malformed = PushError::Malformed;
        check_url(&raw.url, "url").map_err(malformed)?;
        if raw.title.chars().count() > MAX_NAME_CHARS || raw.autocomplete.chars().count() > MAX_SHORT_CHARS {
            return Err(PushError::Malformed("title or autocomplete is too long".into()));
        }
        if let Some(d) = &raw.target {
            check_descriptor(d).map_err(malformed)?;
        }
        let url = page_url(&raw.url);
        let target = raw.target.clone();
        let action = match raw.action {
            RecordedAction::Navigate { url: to } => {
                check_url(&to, "navigate url").map_err(malformed)?;
                // The same tokens again name the same parameters: nothing
                // new is declared for a repeat.
                let to = self.tokenize(&crate::flow::step_url(&to))?;
                if self.steps.last().is_some_and(|s| matches!(&s.action, StepAction::Navigate { url } if *url == to)) {
                    return Ok(());
                }
                StepAction::Navigate { url: to }
            }
            RecordedAction::Click => StepAction::Click,
            RecordedAction::PressKey { key } => {
                if !STEP_KEYS.contains(&key.as_str()) {
                    return Err(PushError::Malformed("key is not one a step may press".into()));
                }
                StepAction::PressKey { key }
            }
            RecordedAction::Check { checked } => StepAction::Check { checked },
            RecordedAction::Fill { text } => {
                let field = target.as_ref().ok_or_else(|| PushError::Malformed("a fill has no target".into()))?;
                if text.as_ref().is_some_and(|t| t.0.chars().count() > MAX_VALUE_CHARS) {
                    return Err(PushError::Malformed("value is too long".into()));
                }
                self.drop_last_fill_of(field);
                let value = keep_value(
                    field,
                    &raw.autocomplete,
                    raw.sensitive,
                    text.as_ref().map(|t| t.0.as_str()),
                    self.keep_text,
                    &mut self.params,
                )
                .map_err(|_| PushError::Full)?;
                StepAction::Fill { value }
            }
            RecordedAction::Select { label, option } => {
                let field = target.as_ref().ok_or_else(|| PushError::Malformed("a select has no target".into()))?;
                if label.chars().count() > MAX_VALUE_CHARS || option.chars().count() > MAX_VALUE_CHARS {
                    return Err(PushError::Malformed("label is too long".into()));
                }
                self.drop_last_fill_of(field);
                let value =
                    keep_choice(field, &raw.autocomplete, raw.sensitive, &label, self.keep_text, &mut self.params)
                        .map_err(|_| PushError::Full)?;
                let option = matches!(value, Value::Literal(_)).then_some(option);
                StepAction::Select { value, option }
            }
        };
        if self.steps.len() >= MAX_STEPS {
            return Err(PushError::Full);
        }
        let needs_target = !matches!(action, StepAction::Navigate { .. } | StepAction::PressKey { .. });
        if needs_target && target.is_none() {
            return Err(PushError::Malformed("this step acts on an element and has no target".into()));
        }
        let target = if matches!(action, StepAction::Navigate { .. }) { None } else { target };
        let title = person::tokenize_text(&raw.title);
        self.steps.push(Step { action, target, url, title, risk: None });
        Ok(())
    }

    /// `url` with each token in its path a parameter without a value (the
    /// same token, the same parameter).
    fn tokenize(&mut self, url: &str) -> Result<String, PushError> {
        let mut full = false;
        let out = person::tokenize_url(url, |token| {
            let key = token_key(token);
            if let Some((_, name)) = self.tokens.iter().find(|(k, _)| *k == key) {
                return Some(name.clone());
            }
            if self.params.len() >= MAX_PARAMS {
                full = true;
                return None;
            }
            let field = Descriptor { label: "path token".into(), ..Descriptor::default() };
            let name = param_name(&field, ParamKind::Text, &self.params);
            self.params.push(crate::flow::Param { name: name.clone(), kind: ParamKind::Text, default: None });
            self.tokens.push((key, name.clone()));
            Some(name)
        });
        if full { Err(PushError::Full) } else { Ok(out) }
    }

    /// Typing coalesced across reports: a fill (or choice) of the field the
    /// last step filled (or chose in) replaces it, and the parameter it made.
    fn drop_last_fill_of(&mut self, field: &Descriptor) {
        let Some(last) = self.steps.last() else { return };
        let (StepAction::Fill { value } | StepAction::Select { value, .. }) = &last.action else { return };
        if last.target.as_ref() != Some(field) {
            return;
        }
        if let Value::Param(p) = value {
            let p = p.clone();
            self.params.retain(|q| q.name != p);
        }
        self.steps.pop();
    }

    /// The flow, created at `created`; `None` when nothing was recorded.
    pub fn finish(self, created: String) -> Option<Flow> {
        if self.steps.is_empty() {
            return None;
        }
        Some(Flow { name: self.name, created, steps: self.steps, params: self.params })
    }
}

/// A step's page: no query string or fragment, each token in the path
/// `{{token}}` (where the step was, never a value).
fn page_url(url: &str) -> String {
    person::tokenize_url(&crate::flow::step_url(url), |_| Some("token".into()))
}

fn token_key(token: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    token.hash(&mut h);
    h.finish()
}

/// How a chosen option is kept: like [`keep_value`] when the field is
/// sensitive or personal (a country, a birth year); otherwise its label is
/// a literal whatever `keep_text` says — it is the page's own text, which
/// the replay needs to choose the same option.
pub fn keep_choice(
    field: &Descriptor,
    autocomplete: &str,
    sensitive: bool,
    label: &str,
    keep_text: bool,
    params: &mut Vec<crate::flow::Param>,
) -> Result<Value, String> {
    let sensitive = sensitive || descriptor_sensitivity(field).is_some();
    if !sensitive && field_kind(field, autocomplete).is_none() {
        let mut label = label.to_string();
        crate::limits::truncate_chars(&mut label, MAX_VALUE_CHARS);
        return Ok(Value::Literal(label));
    }
    keep_value(field, autocomplete, sensitive, Some(label), keep_text, params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{Param, Step};

    fn field(name: &str, input_type: &str, locators: Vec<Locator>) -> Descriptor {
        Descriptor {
            role: "textbox".into(),
            name: name.into(),
            label: name.into(),
            tag: "input".into(),
            input_type: input_type.into(),
            locators,
            ..Descriptor::default()
        }
    }

    fn fill(target: Descriptor, value: Value) -> Step {
        Step {
            action: StepAction::Fill { value },
            target: Some(target),
            url: "https://shop.example/address".into(),
            title: "Address".into(),
            risk: None,
        }
    }

    fn flow(steps: Vec<Step>, params: Vec<Param>) -> Flow {
        Flow { name: "checkout".into(), created: "2026-12-01T21:00:00Z".into(), steps, params }
    }

    fn param(name: &str, kind: ParamKind, default: Option<&str>) -> Param {
        Param { name: name.into(), kind, default: default.map(str::to_string) }
    }

    #[test]
    fn sensitivity_of_descriptors() {
        let cases = [
            (field("Password", "password", vec![]), Some(SensitiveKind::Password)),
            (field("Secret word", "text", vec![]), Some(SensitiveKind::Token)),
            (field("x", "text", vec![Locator::Name("api_token".into())]), Some(SensitiveKind::Token)),
            (field("x", "text", vec![Locator::Id("cardNumber".into())]), Some(SensitiveKind::Card)),
            (field("x", "text", vec![Locator::AriaLabel("One-time code".into())]), Some(SensitiveKind::OneTimeCode)),
            (field("E-mail", "email", vec![Locator::Id("email".into())]), None),
            (field("Street", "text", vec![Locator::Css("form > input".into())]), None),
        ];
        for (d, want) in cases {
            assert_eq!(descriptor_sensitivity(&d), want, "{d:?}");
        }
    }

    #[test]
    fn flows_that_pass() {
        let email = field("E-mail", "email", vec![Locator::Id("email".into())]);
        let pw = field("Password", "password", vec![]);
        let ok = flow(
            vec![
                fill(email.clone(), Value::Param("email".into())),
                fill(email, Value::Literal("kept text".into())),
                fill(pw, Value::Param("password".into())),
            ],
            vec![param("email", ParamKind::Email, Some("a@b.example")), param("password", ParamKind::Secret, None)],
        );
        assert_eq!(check_flow(&ok), Ok(()));
    }

    #[test]
    fn flows_that_are_refused() {
        let email = || field("E-mail", "email", vec![]);
        let pw = || field("Password", "password", vec![]);
        let nav = |url: &str| Step {
            action: StepAction::Navigate { url: url.into() },
            target: None,
            url: "https://shop.example/".into(),
            title: String::new(),
            risk: None,
        };
        let long = "x".repeat(MAX_VALUE_CHARS + 1);
        let many_locators = field("E-mail", "email", vec![Locator::Id("a".into()); MAX_LOCATORS + 1]);
        let cases: Vec<(Flow, Option<usize>, &str)> = vec![
            (flow(vec![], vec![]), None, "at least one step"),
            (Flow { name: "../x".into(), ..flow(vec![nav("https://a.example/")], vec![]) }, None, "flow name"),
            (flow(vec![nav("https://a.example/"); MAX_STEPS + 1], vec![]), None, "at most 500 steps"),
            (flow(vec![nav("javascript:alert(1)")], vec![]), Some(0), "http"),
            (flow(vec![nav("file:///etc/passwd")], vec![]), Some(0), "http"),
            (flow(vec![nav("https://a.example/reset/{{t}}")], vec![]), Some(0), "not declared"),
            (
                flow(vec![nav("https://a.example/reset/{{t}}")], vec![param("t", ParamKind::Secret, None)]),
                Some(0),
                "cannot be part of a URL",
            ),
            (flow(vec![fill(pw(), Value::Literal("hunter2".into()))], vec![]), Some(0), "never stored"),
            (
                flow(vec![fill(pw(), Value::Param("p".into()))], vec![param("p", ParamKind::Text, None)]),
                Some(0),
                "kind secret",
            ),
            (
                flow(vec![fill(pw(), Value::Param("p".into()))], vec![param("p", ParamKind::Secret, Some("x"))]),
                None,
                "has no default",
            ),
            (flow(vec![fill(email(), Value::Param("nope".into()))], vec![]), Some(0), "not declared"),
            (flow(vec![fill(email(), Value::Literal(long))], vec![]), Some(0), "too long"),
            (flow(vec![fill(many_locators, Value::Literal("a".into()))], vec![]), Some(0), "at most 8 locators"),
            (flow(vec![nav("https://a.example/")], vec![param("a", ParamKind::Text, None); 2]), None, "declared twice"),
            (flow(vec![nav("https://a.example/")], vec![param("Bad", ParamKind::Text, None)]), None, "names are"),
            (
                flow(
                    vec![Step {
                        action: StepAction::Click,
                        target: None,
                        url: "https://a.example/".into(),
                        title: "".into(),
                        risk: None,
                    }],
                    vec![],
                ),
                Some(0),
                "no target",
            ),
            (
                flow(
                    vec![Step {
                        action: StepAction::PressKey { key: "F12".into() },
                        target: None,
                        url: "https://a.example/".into(),
                        title: "".into(),
                        risk: None,
                    }],
                    vec![],
                ),
                Some(0),
                "not one of",
            ),
            (
                flow(
                    vec![fill(
                        field("E", "text", vec![Locator::TestId { attr: "onclick".into(), value: "x".into() }]),
                        Value::Literal("a".into()),
                    )],
                    vec![],
                ),
                Some(0),
                "test-id",
            ),
        ];
        for (f, step, needle) in cases {
            let err = check_flow(&f).expect_err(needle);
            assert_eq!(err.step, step, "{err}");
            assert!(err.to_string().contains(needle), "{err} should say {needle:?}");
        }
    }

    #[test]
    fn what_values_look_like() {
        for (v, want) in [
            ("ada@example.org", Some(ParamKind::Email)),
            ("+44 20 7946 0958", Some(ParamKind::Phone)),
            ("(030) 1234567", Some(ParamKind::Phone)),
            ("2026-12-24", Some(ParamKind::Date)),
            ("24.12.2026", Some(ParamKind::Date)),
            ("https://ada.example/me", Some(ParamKind::Url)),
            ("www.example.org", Some(ParamKind::Url)),
            ("12 Baker Street", Some(ParamKind::Address)),
            ("Please ring twice", Some(ParamKind::Text)),
            ("AB1234", Some(ParamKind::Text)),
            ("supercalifragilisticexpialidocious", Some(ParamKind::Text)),
            ("boots", None),
            ("M", None),
            ("2", None),
            ("", None),
            ("a@b", None),
        ] {
            assert_eq!(value_kind(v), want, "{v:?}");
        }
    }

    #[test]
    fn what_fields_are() {
        let by_label = |label: &str| field(label, "text", vec![]);
        for (d, ac, want) in [
            (field("x", "email", vec![]), "", Some(ParamKind::Email)),
            (field("x", "tel", vec![]), "", Some(ParamKind::Phone)),
            (field("x", "date", vec![]), "", Some(ParamKind::Date)),
            (by_label("x"), "shipping street-address", Some(ParamKind::Address)),
            (by_label("x"), "postal-code", Some(ParamKind::Address)),
            (by_label("x"), "given-name", Some(ParamKind::Text)),
            (by_label("E-mail"), "", Some(ParamKind::Email)),
            (by_label("Phone number"), "", Some(ParamKind::Phone)),
            (by_label("Street"), "", Some(ParamKind::Address)),
            (by_label("Postcode"), "", Some(ParamKind::Address)),
            (by_label("City"), "", Some(ParamKind::Address)),
            (by_label("Full name"), "", Some(ParamKind::Text)),
            (by_label("Order note"), "", Some(ParamKind::Text)),
            (field("", "text", vec![Locator::Name("zip".into())]), "", Some(ParamKind::Address)),
            (by_label("Search"), "", None),
            (by_label("Quantity"), "", None),
        ] {
            assert_eq!(field_kind(&d, ac), want, "{d:?} {ac:?}");
        }
    }

    #[test]
    fn how_values_are_kept() {
        let search = field("Search", "search", vec![Locator::Id("q".into())]);
        let email = field("E-mail", "email", vec![]);
        let token = field("API token", "text", vec![Locator::Name("api_token".into())]);
        let plain = field("Nickname for the order", "text", vec![]);
        let p = |name: &str, kind, default: Option<&str>| param(name, kind, default);
        // (field, autocomplete, extension says sensitive, typed, keep text) -> (value, new param)
        type Case<'a> = (&'a Descriptor, &'a str, bool, Option<&'a str>, bool, Value, Option<Param>);
        let cases: Vec<Case> = vec![
            (&search, "", false, Some("boots"), true, Value::Literal("boots".into()), None),
            (&search, "", false, None, false, Value::Param("search".into()), Some(p("search", ParamKind::Text, None))),
            (
                &search,
                "",
                false,
                Some("ada@example.org"),
                true,
                Value::Param("search".into()),
                Some(p("search", ParamKind::Email, Some("ada@example.org"))),
            ),
            (
                &email,
                "",
                false,
                Some("ada@example.org"),
                true,
                Value::Param("e_mail".into()),
                Some(p("e_mail", ParamKind::Email, Some("ada@example.org"))),
            ),
            (&email, "", false, None, false, Value::Param("e_mail".into()), Some(p("e_mail", ParamKind::Email, None))),
            // Sensitive by its name, by the extension's verdict, by autocomplete: never a default.
            (
                &token,
                "",
                false,
                Some("tok-123"),
                true,
                Value::Param("api_token".into()),
                Some(p("api_token", ParamKind::Secret, None)),
            ),
            (
                &plain,
                "",
                true,
                Some("x"),
                true,
                Value::Param("nickname_for_the_order".into()),
                Some(p("nickname_for_the_order", ParamKind::Secret, None)),
            ),
            (
                &search,
                "one-time-code",
                false,
                Some("123456"),
                true,
                Value::Param("search".into()),
                Some(p("search", ParamKind::Secret, None)),
            ),
        ];
        for (d, ac, sensitive, typed, keep, want, want_param) in cases {
            let mut params = Vec::new();
            let got = keep_value(d, ac, sensitive, typed, keep, &mut params).unwrap();
            assert_eq!(got, want, "{d:?} {typed:?} keep={keep}");
            assert_eq!(params.first(), want_param.as_ref(), "{d:?} {typed:?} keep={keep}");
        }
        // Names stay unique; the bound holds.
        let mut params = vec![param("search", ParamKind::Text, None)];
        assert_eq!(keep_value(&search, "", false, None, false, &mut params), Ok(Value::Param("search_2".into())));
        let mut full = (0..MAX_PARAMS).map(|i| param(&format!("p{i}"), ParamKind::Text, None)).collect();
        assert!(keep_value(&search, "", false, None, false, &mut full).is_err());
    }

    #[test]
    fn choices_are_literals_unless_personal() {
        let size =
            Descriptor { role: "combobox".into(), label: "Size".into(), tag: "select".into(), ..Descriptor::default() };
        let country = Descriptor { label: "Country".into(), ..size.clone() };
        let mut params = Vec::new();
        assert_eq!(keep_choice(&size, "", false, "M", false, &mut params), Ok(Value::Literal("M".into())));
        assert_eq!(keep_choice(&country, "", false, "France", false, &mut params), Ok(Value::Param("country".into())));
        assert_eq!(params, [param("country", ParamKind::Address, None)]);
    }

    fn rec(action: RecordedAction, target: Option<Descriptor>, url: &str) -> RecordedStep {
        RecordedStep {
            action,
            target,
            autocomplete: String::new(),
            sensitive: false,
            url: url.into(),
            title: "T".into(),
        }
    }

    #[test]
    fn a_recording_becomes_a_flow() {
        let shop = "https://shop.example/";
        let search = field("Search", "search", vec![Locator::Id("q".into())]);
        let go =
            Descriptor { role: "button".into(), name: "Search".into(), tag: "button".into(), ..Descriptor::default() };
        let email = field("E-mail", "email", vec![]);
        let pw = field("Password", "password", vec![]);
        let typed = |t: &str| RecordedAction::Fill { text: Some(Typed(t.into())) };
        for keep in [false, true] {
            let mut r = Recording::new("shop", keep).unwrap();
            let steps = [
                rec(RecordedAction::Navigate { url: "https://shop.example/?utm=mail#top".into() }, None, shop),
                rec(typed("bo"), Some(search.clone()), shop),
                rec(typed("boots"), Some(search.clone()), shop),
                rec(RecordedAction::Click, Some(go.clone()), shop),
                // The click's navigation is not reported (its click is the step).
                rec(typed("ada@example.org"), Some(email.clone()), "https://shop.example/results?q=boots"),
                rec(typed("hunter2"), Some(pw.clone()), "https://shop.example/results"),
                rec(RecordedAction::PressKey { key: "Enter".into() }, None, "https://shop.example/results"),
                // Typed by the person in the address bar: a step, its token a parameter.
                RecordedStep {
                    title: "shop.example/account/kq3ZtP8wR2mX7vN4".into(),
                    ..rec(
                        RecordedAction::Navigate { url: "https://shop.example/account/kq3ZtP8wR2mX7vN4".into() },
                        None,
                        "https://shop.example/done",
                    )
                },
                // The same URL again: not a step.
                rec(
                    RecordedAction::Navigate { url: "https://shop.example/account/kq3ZtP8wR2mX7vN4?x=1".into() },
                    None,
                    shop,
                ),
                rec(RecordedAction::Click, Some(go.clone()), "https://shop.example/account/kq3ZtP8wR2mX7vN4"),
            ];
            for s in steps {
                r.push(s).unwrap();
            }
            let flow = r.finish("2026-12-01T21:00:00Z".into()).unwrap();
            assert_eq!(check_flow(&flow), Ok(()));
            let param = |name: &str| flow.params.iter().find(|p| p.name == name).unwrap().clone();
            let kinds: Vec<&StepAction> = flow.steps.iter().map(|s| &s.action).collect();
            let search_value = if keep { Value::Literal("boots".into()) } else { Value::Param("search".into()) };
            assert_eq!(
                kinds,
                [
                    &StepAction::Navigate { url: shop.into() },
                    &StepAction::Fill { value: search_value },
                    &StepAction::Click,
                    &StepAction::Fill { value: Value::Param("e_mail".into()) },
                    &StepAction::Fill { value: Value::Param("password".into()) },
                    &StepAction::PressKey { key: "Enter".into() },
                    &StepAction::Navigate { url: "https://shop.example/account/{{path_token}}".into() },
                    &StepAction::Click,
                ]
            );
            assert_eq!(flow.steps[7].url, "https://shop.example/account/{{token}}", "no token in a page URL");
            assert_eq!(flow.steps[6].title, "shop.example/account/{{token}}", "nor in a title");
            assert_eq!(param("path_token").kind, ParamKind::Text);
            assert_eq!(param("path_token").default, None, "a token is never kept");
            assert_eq!(flow.steps[3].url, "https://shop.example/results", "no query string");
            let default = |name: &str| param(name).default;
            assert_eq!(default("e_mail"), keep.then(|| "ada@example.org".to_string()));
            assert_eq!(default("password"), None);
            let json = serde_json::to_string(&flow).unwrap();
            assert!(!json.contains("hunter2"));
            assert_eq!(json.contains("ada@example.org"), keep);
            assert!(!json.contains("kq3ZtP8wR2mX7vN4"), "the token is nowhere: {json}");
        }
    }

    #[test]
    fn malformed_reports_are_refused() {
        let mut r = Recording::new("shop", true).unwrap();
        let long_title = RecordedStep {
            title: "t".repeat(MAX_NAME_CHARS + 1),
            ..rec(RecordedAction::Click, Some(field("a", "", vec![])), "https://a.example/")
        };
        for bad in [
            rec(RecordedAction::Click, None, "https://a.example/"),
            rec(RecordedAction::Click, Some(field("a", "", vec![])), "javascript:alert(1)"),
            rec(RecordedAction::Fill { text: None }, None, "https://a.example/"),
            rec(RecordedAction::PressKey { key: "F5".into() }, None, "https://a.example/"),
            rec(RecordedAction::Click, Some(field(&"n".repeat(MAX_NAME_CHARS + 1), "", vec![])), "https://a.example/"),
            long_title,
        ] {
            assert!(matches!(r.push(bad.clone()), Err(PushError::Malformed(_))), "{bad:?}");
        }
        assert!(r.steps().is_empty());
        assert!(r.finish(String::new()).is_none());
    }

    #[test]
    fn typed_text_never_shows_in_debug() {
        let step = rec(RecordedAction::Fill { text: Some(Typed("hunter2".into())) }, None, "https://a.example/");
        assert!(!format!("{step:?}").contains("hunter2"));
    }
}
