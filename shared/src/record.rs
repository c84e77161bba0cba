//! Rules for what a flow may hold, checked where a flow enters the store
//! (a recording, an imported file) and again where it is read back
//! (docs/design.md, "Record me and flows").
//!
//! - [`check_flow`]: the bounds of `crate::flow` (steps, parameters,
//!   locators, characters of every field), parameter references, URLs
//!   (http/https only), and the sensitive-field rule: a value aimed at a
//!   sensitive field is always a [`ParamKind::Secret`] parameter with no
//!   default, never a literal.
//! - [`descriptor_sensitivity`]: `crate::sensitive` applied to what a
//!   descriptor says of its field (type, `name`, id, label, placeholder,
//!   accessible name), so the bridge re-checks what the extension decided.

use std::collections::HashSet;

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
            None
        }
        StepAction::Click | StepAction::Check { .. } => None,
        StepAction::PressKey { key } => {
            if !STEP_KEYS.contains(&key.as_str()) {
                return Err(format!("key {:?} is not one of {}", clip(key), STEP_KEYS.join(", ")));
            }
            None
        }
        StepAction::Fill { value } | StepAction::Select { value } => Some(value),
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
}
