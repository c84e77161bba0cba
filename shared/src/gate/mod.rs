//! The extension's gate as pure functions (docs/design.md, "Policy,
//! approvals and audit"; SECURITY.md, "Consequential actions without the
//! person"): everything the service worker decides about one
//! `Command::Act`, with no IO, no clock and no browser, so that the whole
//! decision is table-tested natively. `extension/worker/src/gate.rs` is
//! the IO between the steps: it reads the person's controls, resolves the
//! live element, asks the person, fetches a secret and acts.
//!
//! The bridge decides first, before it dispatches the `Act`: that
//! decision is [`dispatch`] (pure as well, table-tested there). The rule
//! for sensitive fields is one, [`fields`], applied by both sides.
//!
//! An `Act` goes through these steps, in this order; the first refusal
//! ends it and nothing runs.
//!
//! 1. [`admit`], before the page is asked anything:
//!    - STOP → `STOPPED` ("pressed STOP … Resume"); Pause → `STOPPED`
//!      ("paused"); STOP is named when both are on. Both carry
//!      `denied_by: stop`.
//!    - the bridge's decision is `deny` → `PERMISSION_DENIED` (the bridge
//!      never sends one; the extension does not rely on that);
//!    - the `Gate`'s request id arrived before → `INVALID_REQUEST`. The
//!      worker spends an id when its `Act` arrives, whatever then happens
//!      to it: one `Act` per id, and one approval answers that `Act` only;
//!    - `CloseTab` with a ref, or a ref without the fingerprint it was
//!      resolved with (`expect`) → `INVALID_REQUEST`.
//! 2. The worker finds the live element: the one it resolved for the
//!    bridge just before (same tab, ref and fingerprint), or a fresh
//!    resolution (none for `CloseTab`, or for a key press when nothing has
//!    focus), and the page URL (the element's, else the tab's).
//! 3. [`decide`] on that element and page ([`Live`]):
//!    - the element's fingerprint is not `expect` → `STALE_REF`;
//!    - the page's origin (as the browser parses it) is not `gate.origin`
//!      → `STALE_REF`: a decision holds only for the site it was made for;
//!    - the sensitive-field rule the bridge applies too ([`fields`]):
//!      typing or choosing an option in a password, card or bank field, or
//!      one of a kind this version does not know → `PERMISSION_DENIED`; a
//!      literal or a printable key into another sensitive field, or a
//!      secret into a field that is not sensitive → `INVALID_REQUEST`;
//!    - [`classify`] of the live element ([`ActionKind::of`] with
//!      [`Typing::Alone`]: an `Act` does not say whether it is a form's
//!      field, and both kinds are judged alike) on the page URL, mapped
//!      through `gate.policy` (the origin's per-risk decisions): `deny` →
//!      `PERMISSION_DENIED` naming the risk and the reasons;
//!    - then the person must confirm when `gate.person_must_answer` (a
//!      secret bound to no site), `gate.changed` (a flow step's changed
//!      target, `crate::replay`), or the bridge's decision or the live one
//!      is `confirm`:
//!      - nobody needs to: [`GateStep::Run`] decided by `policy`;
//!      - YOLO is on and the person need not answer themselves:
//!        [`GateStep::Run`] decided by `yolo` (the history records
//!        [`YOLO_HISTORY`]);
//!      - else [`GateStep::Ask`] with a [`Question`]: the higher of the
//!        bridge's and the live risk, the bridge's reasons then the live
//!        ones it did not give, the approval timeout clamped to
//!        [`MIN_APPROVAL_TIMEOUT_SECS`]..=[`MAX_APPROVAL_TIMEOUT_SECS`],
//!        and what the window shows of the element and page.
//! 4. The worker asks the person (the element outlined, the window beside
//!    it); [`answered`] turns the [`Answer`] into who decided: Approve →
//!    `human`; Deny → `APPROVAL_DENIED` (`denied_by: human`); no answer in
//!    time → `APPROVAL_DENIED` (`denied_by: timeout`); STOP while it waited
//!    → `STOPPED` (`denied_by: stop`).
//! 5. [`halted`] right before the action runs, and again once a secret's
//!    value has arrived: STOP pressed at any time since step 1 →
//!    `STOPPED`; else STOP or Pause on now → step 1's refusals.
//!
//! The worker's report carries the live classification and who decided
//! (`policy`, `human`, `yolo`); every refusal the person caused carries
//! [`WireError::denied_by`], which the bridge writes as the audit
//! decision row.

pub mod dispatch;
pub mod fields;

pub use dispatch::{Dispatch, Proposal, Refused, SecretBinding, before_dispatch, before_resolve, site_refusal};
pub use fields::{field_kind, field_refusal};

use crate::action::{Action, ControlState, Fingerprint, Gate, ResolvedElement, Typing};
use crate::audit::{DecidedBy, DeniedBy};
use crate::error::{ErrorCode, WireError};
use crate::limits::{MAX_APPROVAL_TIMEOUT_SECS, MIN_APPROVAL_TIMEOUT_SECS};
use crate::policy::Decision;
use crate::risk::{ActionKind, Classification, ElementFacts, RiskLevel, classify};
use crate::url::Origin;

/// What [`admit`] looks at: the `Act` as it arrived and the person's
/// controls at that moment.
#[derive(Debug, Clone, Copy)]
pub struct Arrival<'a> {
    pub controls: ControlState,
    pub gate: &'a Gate,
    /// The worker saw this `gate.request` before (it is spent on arrival).
    pub request_seen: bool,
    pub action: &'a Action,
    pub target: Option<&'a str>,
    pub expect: Option<&'a Fingerprint>,
}

/// Step 1 (see the module docs): whether the `Act` may go on to the page.
pub fn admit(a: &Arrival<'_>) -> Result<(), WireError> {
    if let Some(e) = refused_by_controls(a.controls) {
        return Err(e);
    }
    if a.gate.decision == Decision::Deny {
        return Err(WireError::new(ErrorCode::PermissionDenied, "the policy denies this action"));
    }
    if a.request_seen {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this request id was used already"));
    }
    if matches!(a.action, Action::CloseTab | Action::KeepDownload { .. }) && a.target.is_some() {
        return Err(WireError::new(ErrorCode::InvalidRequest, "closing a tab or keeping a download takes no ref"));
    }
    if matches!(a.action, Action::UploadFiles { .. }) && a.target.is_none() {
        return Err(WireError::new(ErrorCode::InvalidRequest, "an upload needs the ref of a file input"));
    }
    if a.target.is_some() && a.expect.is_none() {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            "an action on a ref needs the fingerprint it was resolved with",
        ));
    }
    Ok(())
}

/// STOP or Pause, as the person set them in the popup: nothing runs.
pub fn refused_by_controls(controls: ControlState) -> Option<WireError> {
    let message = if controls.stopped {
        "the person pressed STOP in the Chaperone popup; nothing runs until they press Resume there"
    } else if controls.paused {
        "the person paused Chaperone; nothing runs until they press Resume in the popup"
    } else {
        return None;
    };
    Some(WireError::new(ErrorCode::Stopped, message).with_denied_by(DeniedBy::Stop))
}

/// What [`decide`] looks at: the admitted `Act` and the live page.
#[derive(Debug, Clone, Copy)]
pub struct Live<'a> {
    pub action: &'a Action,
    pub gate: &'a Gate,
    /// The fingerprint the bridge resolved the ref with.
    pub expect: Option<&'a Fingerprint>,
    /// The live element; `None` for `CloseTab` and for a page-level action
    /// with nothing focused.
    pub element: Option<&'a ResolvedElement>,
    /// The page URL: the element's, else the tab's; its
    /// [`Origin`](crate::url::Origin) is compared with `gate.origin`.
    pub url: &'a str,
    /// YOLO is on.
    pub yolo: bool,
}

/// What the gate does with an admitted `Act` (step 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateStep {
    /// Refused; nothing runs.
    Refuse(WireError),
    /// Runs without a question. `decided_by` is `Policy` (nobody needed to
    /// confirm) or `Yolo` (auto-approved: the history records it as
    /// [`YOLO_HISTORY`] with `shown_risk`).
    Run { decided_by: DecidedBy, class: Classification, shown_risk: RiskLevel },
    /// The person answers first ([`answered`]).
    Ask { class: Classification, question: Question },
}

/// What the approval window shows about one `Act` (besides the bridge's
/// masked summary and request id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The higher of the bridge's and the live risk.
    pub risk: RiskLevel,
    /// The bridge's reasons, then the live ones it did not give.
    pub reasons: Vec<String>,
    /// Seconds the person has (`gate.timeout_secs`, clamped).
    pub timeout_secs: u32,
    /// The element's role and name; empty for a tab or the focused page.
    pub role: String,
    pub name: String,
    /// The page URL without query string or fragment.
    pub url: String,
    /// What the element shows on the page, when its words differ from its
    /// name (`ElementFacts::visible_text`); else empty.
    pub shows: String,
    /// Where activating it goes (link or form target, redacted), when it is
    /// not the page itself; else empty.
    pub goes_to: String,
    /// A flow step's changed target: the recorded one beside the live one
    /// (`gate.changed`).
    pub changed: Option<Box<crate::replay::ChangedTarget>>,
}

/// Step 3 (see the module docs): the decision on the live element.
pub fn decide(l: &Live<'_>) -> GateStep {
    match decide_inner(l) {
        Ok(step) => step,
        Err(e) => GateStep::Refuse(e),
    }
}

fn decide_inner(l: &Live<'_>) -> Result<GateStep, WireError> {
    let element = l.element;
    if let (Some(live), Some(want)) = (element, l.expect)
        && live.fingerprint != *want
    {
        return Err(WireError::new(
            ErrorCode::StaleRef,
            format!(
                "the element changed since it was resolved (now {} \"{}\"); take a new browser_snapshot",
                live.fingerprint.role, live.fingerprint.name
            ),
        ));
    }
    // The bridge decided (site rules included) for one site; the person
    // may have taken the tab elsewhere since.
    if Origin::of(l.url) != Origin::of(&l.gate.origin) {
        return Err(WireError::new(
            ErrorCode::StaleRef,
            "the tab is no longer on the page the action was decided for; take a new browser_snapshot",
        ));
    }
    if let Some(e) = field_refusal(l.action, element) {
        return Err(e);
    }
    let sensitive = field_kind(element);
    let facts = element.map(|e| &e.facts);
    let class = classify(&ActionKind::of(l.action, Typing::Alone), facts, l.url, sensitive);
    let live_decision = l.gate.policy.get(class.risk);
    if live_decision == Decision::Deny {
        return Err(WireError::new(
            ErrorCode::PermissionDenied,
            format!("the site policy denies {} risk actions here ({})", class.risk.as_str(), class.reasons.join("; ")),
        ));
    }

    let gate = l.gate;
    // A changed target is asked about whatever the bridge set beside it.
    let must_answer = gate.person_must_answer || gate.changed.is_some();
    let confirm = must_answer || gate.decision == Decision::Confirm || live_decision == Decision::Confirm;
    let shown_risk = class.risk.max(gate.risk);
    if !confirm {
        return Ok(GateStep::Run { decided_by: DecidedBy::Policy, class, shown_risk });
    }
    if l.yolo && !must_answer {
        return Ok(GateStep::Run { decided_by: DecidedBy::Yolo, class, shown_risk });
    }
    let mut reasons = gate.reasons.clone();
    for r in &class.reasons {
        if !reasons.contains(r) {
            reasons.push(r.clone());
        }
    }
    let question = Question {
        risk: shown_risk,
        reasons,
        timeout_secs: gate.timeout_secs.clamp(MIN_APPROVAL_TIMEOUT_SECS, MAX_APPROVAL_TIMEOUT_SECS),
        role: facts.map(|f| f.role.clone()).unwrap_or_default(),
        name: facts.map(|f| f.name.clone()).unwrap_or_default(),
        url: crate::url::strip_query(l.url).to_string(),
        shows: facts.map(shown_text).unwrap_or_default(),
        goes_to: facts.map(|f| goes_to(f, l.url)).unwrap_or_default(),
        changed: gate.changed.clone().map(Box::new),
    };
    Ok(GateStep::Ask { class, question })
}

/// A question that is not about a page action (`Command::AskPerson`:
/// `flow_delete` deletes the person's recording; a navigation to a URL
/// that may act, `crate::navigation`): STOP and Pause refuse it, the
/// request id is spent once as for an `Act`, and it is asked — the policy
/// and `gate.decision` cannot answer it; YOLO can only when
/// [`yolo_answers`].
pub fn question_only(controls: ControlState, gate: &Gate, request_seen: bool) -> Result<Question, WireError> {
    if let Some(e) = refused_by_controls(controls) {
        return Err(e);
    }
    if request_seen {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this request id was used already"));
    }
    Ok(Question {
        risk: gate.risk,
        reasons: gate.reasons.clone(),
        timeout_secs: gate.timeout_secs.clamp(MIN_APPROVAL_TIMEOUT_SECS, MAX_APPROVAL_TIMEOUT_SECS),
        role: String::new(),
        name: String::new(),
        url: String::new(),
        shows: String::new(),
        goes_to: String::new(),
        changed: None,
    })
}

/// Whether YOLO answers a question of [`question_only`] (asked after it
/// passed): YOLO is on and the question is not one the person must answer
/// themselves (`gate.person_must_answer`: `flow_delete` sets it, a
/// navigation does not — it is an agent's action like a click on a link).
pub fn yolo_answers(controls: ControlState, gate: &Gate) -> bool {
    controls.yolo && !gate.person_must_answer
}

/// The element's visible text when it says something its name does not;
/// what paints, when that differs from its text (`ElementFacts::painted_text`).
fn shown_text(facts: &ElementFacts) -> String {
    if !facts.painted_text.trim().is_empty() {
        return facts.painted_text.clone();
    }
    if crate::risk::shows_more_than_name(facts) { facts.visible_text.clone() } else { String::new() }
}

/// The element's link or form target, when it is not the page itself
/// (fragment dropped, credentials in it redacted).
fn goes_to(facts: &ElementFacts, page: &str) -> String {
    let target = facts.target.split('#').next().unwrap_or("");
    if target.is_empty() || target == page.split('#').next().unwrap_or("") {
        return String::new();
    }
    crate::redact::redact_url(target)
}

/// The approval history's word for an action YOLO let through.
pub const YOLO_HISTORY: &str = "auto (YOLO)";

/// How a question to the person ended (step 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Approve, in the approval window or the popup.
    Approved,
    /// Deny (or Esc).
    Denied,
    /// No answer within the question's `timeout_secs`.
    Timeout,
    /// STOP pressed while it waited.
    Stopped,
}

impl Answer {
    /// The approval history's word for it.
    pub fn history(self) -> &'static str {
        match self {
            Answer::Approved => "approved",
            Answer::Denied => "denied",
            Answer::Timeout => "timeout",
            Answer::Stopped => "stopped",
        }
    }
}

/// Step 4 (see the module docs): who decided, or the refusal the person's
/// answer (or its absence) makes. `timeout_secs` is the question's.
pub fn answered(answer: Answer, timeout_secs: u32) -> Result<DecidedBy, WireError> {
    Err(match answer {
        Answer::Approved => return Ok(DecidedBy::Human),
        Answer::Denied => WireError::new(ErrorCode::ApprovalDenied, "the person denied this action; it did not run")
            .with_denied_by(DeniedBy::Human),
        Answer::Timeout => WireError::new(
            ErrorCode::ApprovalDenied,
            format!("approval timeout: no answer from the person within {timeout_secs} s; the action did not run"),
        )
        .with_denied_by(DeniedBy::Timeout),
        Answer::Stopped => WireError::new(
            ErrorCode::Stopped,
            "the person pressed STOP while this action waited for approval; it did not run",
        )
        .with_denied_by(DeniedBy::Stop),
    })
}

/// Step 5 (see the module docs): whether an action the gate let through
/// must not run after all. `stop_pressed_since`: STOP was pressed after
/// the `Act` arrived (even if Resume followed).
pub fn halted(controls: ControlState, stop_pressed_since: bool) -> Option<WireError> {
    if stop_pressed_since {
        return Some(
            WireError::new(ErrorCode::Stopped, "the person pressed STOP; the action did not run")
                .with_denied_by(DeniedBy::Stop),
        );
    }
    refused_by_controls(controls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::RiskDecisions;
    use crate::sensitive::SensitiveKind;

    const PAGE: &str = "https://shop.example/notes?session=abc#top";
    const ORIGIN: &str = "https://shop.example:443";

    fn gate() -> Gate {
        Gate {
            request: 7,
            risk: RiskLevel::Low,
            reasons: Vec::new(),
            decision: Decision::Allow,
            policy: RiskDecisions::default(),
            summary: "click".into(),
            timeout_secs: 120,
            origin: ORIGIN.into(),
            person_must_answer: false,
            changed: None,
        }
    }

    fn element(role: &str, name: &str) -> ResolvedElement {
        ResolvedElement {
            facts: ElementFacts { role: role.into(), name: name.into(), ..ElementFacts::default() },
            fingerprint: Fingerprint { role: role.into(), name: name.into(), path: "0/1/2".into() },
            sensitive: None,
            url: PAGE.into(),
        }
    }

    fn field(sensitive: Option<&str>, input_type: &str) -> ResolvedElement {
        let mut e = element("textbox", "Field");
        e.facts.editable = true;
        e.facts.input_type = input_type.into();
        e.sensitive = sensitive.map(SensitiveKind::from_wire);
        e
    }

    #[test]
    fn questions_without_an_action_are_always_asked_unless_stopped() {
        let on = |stopped, paused, yolo| ControlState { stopped, paused, yolo, pending: 0 };
        let g = Gate {
            risk: RiskLevel::High,
            reasons: vec!["deletes the recording".into()],
            timeout_secs: 9_999,
            ..gate()
        };
        let must = Gate { person_must_answer: true, ..g.clone() };
        assert!(!yolo_answers(on(false, false, true), &must), "the person answers flow_delete, YOLO or not");
        assert!(yolo_answers(on(false, false, true), &g), "YOLO answers an agent's navigation");
        assert!(!yolo_answers(on(false, false, false), &g), "without YOLO the person answers");
        let q = question_only(on(false, false, true), &must, false).expect("asked under YOLO too");
        assert_eq!(
            (q.risk, q.reasons.as_slice(), q.timeout_secs),
            (RiskLevel::High, &g.reasons[..], MAX_APPROVAL_TIMEOUT_SECS)
        );
        let allow = Gate { decision: Decision::Allow, ..g.clone() };
        assert!(question_only(on(false, false, false), &allow, false).is_ok(), "a decision of allow answers nothing");
        for (controls, seen, code) in [
            (on(true, false, false), false, ErrorCode::Stopped),
            (on(false, true, true), false, ErrorCode::Stopped),
            (on(false, false, false), true, ErrorCode::InvalidRequest),
        ] {
            assert_eq!(question_only(controls, &g, seen).unwrap_err().code, code, "{controls:?} {seen}");
        }
    }

    fn changed_target() -> crate::replay::ChangedTarget {
        use crate::replay::TargetSummary;
        crate::replay::ChangedTarget {
            recorded: TargetSummary { role: "button".into(), name: "Place order".into() },
            live: TargetSummary { role: "button".into(), name: "Save draft".into() },
            via: "id \"place\"".into(),
        }
    }

    fn typed() -> Action {
        Action::Type { text: "hello".into(), submit: false }
    }

    fn secret() -> Action {
        Action::TypeSecret { name: "API_TOKEN".into(), submit: false }
    }

    fn select() -> Action {
        Action::SelectOption { values: vec!["1".into()] }
    }

    /// One `decide` case: changes to a plain low-risk click on "Save
    /// draft" with the default policy, and what must come out.
    struct Case {
        name: &'static str,
        action: Action,
        gate: Gate,
        element: Option<ResolvedElement>,
        /// `None`: the element's own fingerprint.
        expect: Option<Fingerprint>,
        /// The page URL (its origin is compared with the gate's).
        url: &'static str,
        yolo: bool,
        want: Want,
    }

    #[derive(Debug)]
    enum Want {
        Run(DecidedBy),
        Ask(RiskLevel),
        Refuse(ErrorCode, &'static str),
    }

    fn case(name: &'static str, want: Want) -> Case {
        Case {
            name,
            action: Action::Click,
            gate: gate(),
            element: Some(element("button", "Save draft")),
            expect: None,
            url: PAGE,
            yolo: false,
            want,
        }
    }

    fn run(c: &Case) -> GateStep {
        let expect = c.expect.clone().or_else(|| c.element.as_ref().map(|e| e.fingerprint.clone()));
        decide(&Live {
            action: &c.action,
            gate: &c.gate,
            expect: expect.as_ref(),
            element: c.element.as_ref(),
            url: c.url,
            yolo: c.yolo,
        })
    }

    fn cases() -> Vec<Case> {
        use ErrorCode::{InvalidRequest, PermissionDenied, StaleRef};
        use Want::{Ask, Refuse, Run};
        let delete = || Some(element("button", "Delete account"));
        let deny_high =
            || Gate { policy: RiskDecisions { high: Decision::Deny, ..RiskDecisions::default() }, ..gate() };
        let confirm_all = || Gate {
            policy: RiskDecisions { low: Decision::Confirm, medium: Decision::Confirm, high: Decision::Confirm },
            ..gate()
        };
        vec![
            // ---- the policy decides
            case("allow: low risk under the default policy runs", Run(DecidedBy::Policy)),
            Case {
                gate: Gate { decision: Decision::Confirm, risk: RiskLevel::High, ..gate() },
                ..case("confirm: the bridge says confirm", Ask(RiskLevel::High))
            },
            Case {
                element: delete(),
                ..case("confirm: the live element is high risk though the bridge said allow", Ask(RiskLevel::High))
            },
            Case {
                gate: confirm_all(),
                ..case("confirm: the origin's policy confirms even low risk", Ask(RiskLevel::Low))
            },
            Case {
                element: delete(),
                gate: deny_high(),
                ..case(
                    "live deny: the origin's policy denies high risk",
                    Refuse(PermissionDenied, "the site policy denies high risk actions here"),
                )
            },
            Case { gate: deny_high(), ..case("live deny applies only to its risk level", Run(DecidedBy::Policy)) },
            // ---- YOLO
            Case { element: delete(), yolo: true, ..case("YOLO answers a question with yes", Run(DecidedBy::Yolo)) },
            Case { yolo: true, ..case("YOLO has nothing to answer when nobody is asked", Run(DecidedBy::Policy)) },
            Case {
                gate: Gate { person_must_answer: true, ..gate() },
                yolo: true,
                ..case("YOLO does not answer for person_must_answer", Ask(RiskLevel::Low))
            },
            Case {
                gate: Gate { person_must_answer: true, ..gate() },
                ..case("person_must_answer asks even when both sides allow", Ask(RiskLevel::Low))
            },
            Case {
                gate: Gate { changed: Some(changed_target()), ..gate() },
                yolo: true,
                ..case(
                    "a flow step's changed target asks under YOLO, even without person_must_answer",
                    Ask(RiskLevel::Low),
                )
            },
            Case {
                element: delete(),
                gate: deny_high(),
                yolo: true,
                ..case("YOLO does not lift a live deny", Refuse(PermissionDenied, "site policy denies"))
            },
            // ---- the element and the page
            Case {
                expect: Some(Fingerprint { role: "button".into(), name: "Save draft".into(), path: "9".into() }),
                ..case(
                    "stale fingerprint: same name, another place",
                    Refuse(StaleRef, "the element changed since it was resolved"),
                )
            },
            Case {
                expect: Some(Fingerprint { role: "button".into(), name: "Send".into(), path: "0/1/2".into() }),
                yolo: true,
                ..case("stale fingerprint wins over YOLO", Refuse(StaleRef, "now button \"Save draft\""))
            },
            Case {
                url: "HTTPS://Shop.Example.:443/other?x",
                ..case("the same origin, written otherwise", Run(DecidedBy::Policy))
            },
            Case {
                url: "https://evil.example/notes",
                ..case("wrong origin: the tab went to another site", Refuse(StaleRef, "no longer on the page"))
            },
            Case {
                url: "https://shop.example:8443/notes",
                ..case("wrong origin: another port", Refuse(StaleRef, "no longer on the page"))
            },
            Case {
                url: "chrome://newtab/",
                ..case("wrong origin: not a web page any more", Refuse(StaleRef, "no longer on the page"))
            },
            // ---- sensitive fields
            Case {
                action: typed(),
                element: Some(field(Some("password"), "password")),
                ..case("password typed", Refuse(PermissionDenied, "never fills password fields"))
            },
            Case {
                action: typed(),
                element: Some(field(None, "PASSWORD")),
                ..case(
                    "password typed, known by its input type only",
                    Refuse(PermissionDenied, "never fills password fields"),
                )
            },
            Case {
                action: secret(),
                element: Some(field(Some("password"), "password")),
                yolo: true,
                ..case("password typed from a secret, YOLO on", Refuse(PermissionDenied, "never fills password fields"))
            },
            Case {
                action: typed(),
                element: Some(field(Some("card"), "text")),
                ..case("card typed", Refuse(PermissionDenied, "never fills"))
            },
            Case {
                action: secret(),
                element: Some(field(Some("bank"), "text")),
                ..case("bank typed from a secret", Refuse(PermissionDenied, "never fills"))
            },
            Case {
                action: select(),
                element: Some(field(Some("card"), "")),
                ..case("card expiry selected", Refuse(PermissionDenied, "never fills"))
            },
            Case {
                action: select(),
                element: Some(field(Some("bank"), "")),
                ..case("bank selected", Refuse(PermissionDenied, "never fills"))
            },
            Case {
                action: select(),
                element: Some(field(Some("password"), "")),
                ..case("an option chosen in a password field", Refuse(PermissionDenied, "never fills password"))
            },
            Case {
                element: Some(field(Some("card"), "text")),
                ..case("clicking a card field only focuses it", Run(DecidedBy::Policy))
            },
            Case {
                action: secret(),
                element: Some(field(None, "text")),
                ..case(
                    "TypeSecret into a field that is not sensitive",
                    Refuse(InvalidRequest, "a secret goes only into a field"),
                )
            },
            Case {
                action: secret(),
                element: Some(field(None, "text")),
                gate: Gate { person_must_answer: true, ..gate() },
                yolo: true,
                ..case(
                    "TypeSecret into a plain field, whoever would answer",
                    Refuse(InvalidRequest, "a secret goes only into a field"),
                )
            },
            Case {
                action: secret(),
                element: Some(field(Some("token"), "text")),
                gate: Gate { decision: Decision::Confirm, risk: RiskLevel::High, ..gate() },
                ..case("TypeSecret into a token field asks (high risk)", Ask(RiskLevel::High))
            },
            Case {
                action: secret(),
                element: Some(field(Some("token"), "text")),
                yolo: true,
                ..case("TypeSecret into a token field under YOLO", Run(DecidedBy::Yolo))
            },
            Case {
                action: secret(),
                element: Some(field(Some("token"), "text")),
                gate: Gate { person_must_answer: true, ..gate() },
                yolo: true,
                ..case("an unbound secret asks under YOLO", Ask(RiskLevel::High))
            },
            Case {
                action: secret(),
                element: Some(field(Some("some-new-kind"), "text")),
                ..case(
                    "an unknown sensitive kind is the strictest: no secret goes there",
                    Refuse(PermissionDenied, "never fills"),
                )
            },
            Case {
                action: typed(),
                element: Some(field(Some("some-new-kind"), "text")),
                yolo: true,
                ..case(
                    "an unknown sensitive kind is the strictest: no literal, YOLO or not",
                    Refuse(PermissionDenied, "never fills"),
                )
            },
            Case {
                action: select(),
                element: Some(field(Some("some-new-kind"), "")),
                ..case("an unknown sensitive kind is the strictest: no option", Refuse(PermissionDenied, "never fills"))
            },
            Case {
                element: Some(field(Some("some-new-kind"), "text")),
                ..case("clicking a field of an unknown kind asks nobody", Run(DecidedBy::Policy))
            },
            Case {
                action: typed(),
                element: Some(field(Some("one_time_code"), "text")),
                ..case(
                    "a literal into another sensitive field (the bridge refuses it first)",
                    Refuse(InvalidRequest, "literal values are refused"),
                )
            },
            Case {
                action: Action::PressKey { key: "7".into() },
                element: Some(field(Some("one_time_code"), "text")),
                ..case("a printable key in a sensitive field", Refuse(InvalidRequest, "literal values are refused"))
            },
            // ---- tabs and the focused element
            Case {
                action: Action::CloseTab,
                element: None,
                gate: Gate { decision: Decision::Confirm, risk: RiskLevel::High, ..gate() },
                ..case("closing a tab the agent did not open asks", Ask(RiskLevel::High))
            },
            Case {
                action: Action::CloseTab,
                element: None,
                url: "https://other.example/",
                ..case("closing a tab that went elsewhere", Refuse(StaleRef, "no longer on the page"))
            },
            Case {
                action: Action::PressKey { key: "Tab".into() },
                element: None,
                ..case("a navigation key with nothing focused", Run(DecidedBy::Policy))
            },
        ]
    }

    #[test]
    fn decide_table() {
        for c in cases() {
            let got = run(&c);
            match (&c.want, &got) {
                (Want::Run(by), GateStep::Run { decided_by, .. }) => assert_eq!(by, decided_by, "{}", c.name),
                (Want::Ask(risk), GateStep::Ask { question, .. }) => assert_eq!(*risk, question.risk, "{}", c.name),
                (Want::Refuse(code, text), GateStep::Refuse(e)) => {
                    assert_eq!((*code, e.denied_by), (e.code, None), "{}: {e}", c.name);
                    assert!(e.message.contains(text), "{}: {e}", c.name);
                }
                (want, got) => panic!("{}: want {want:?}, got {got:?}", c.name),
            }
        }
    }

    #[test]
    fn the_question_shows_both_sides_and_what_the_page_shows() {
        let mut e = element("link", "Continue");
        e.facts.visible_text = "Delete account".into();
        e.facts.target = "https://user:pw@shop.example/account/delete?token=s3cret#now".into();
        let g = Gate {
            decision: Decision::Confirm,
            risk: RiskLevel::Medium,
            reasons: vec!["from the bridge".into()],
            timeout_secs: 0,
            ..gate()
        };
        let action = Action::Click;
        let live =
            Live { action: &action, gate: &g, expect: Some(&e.fingerprint), element: Some(&e), url: PAGE, yolo: false };
        let GateStep::Ask { class, question } = decide(&live) else { panic!("asks") };
        assert_eq!(class.risk, RiskLevel::High);
        assert_eq!(question.risk, RiskLevel::High, "the higher of both");
        assert_eq!(question.reasons[0], "from the bridge");
        assert_eq!(&question.reasons[1..], &class.reasons[..], "then the live reasons");
        assert_eq!(question.timeout_secs, MIN_APPROVAL_TIMEOUT_SECS);
        assert_eq!((question.role.as_str(), question.name.as_str()), ("link", "Continue"));
        assert_eq!(question.url, "https://shop.example/notes");
        assert_eq!(question.shows, "Delete account");
        assert!(question.goes_to.starts_with("https://") && question.goes_to.contains("/account/delete"));
        assert!(!question.goes_to.contains("pw@") && !question.goes_to.contains("s3cret"), "{}", question.goes_to);

        // Reasons are not repeated; the timeout never exceeds the maximum;
        // a name that says what the page shows hides `shows`; a link to
        // the page itself has no `goes_to`.
        let mut plain = element("button", "Delete account");
        plain.facts.visible_text = "delete ACCOUNT".into();
        plain.facts.target = "https://shop.example/notes?session=abc#other".into();
        let first = decide(&Live { element: Some(&plain), expect: Some(&plain.fingerprint), ..live });
        let GateStep::Ask { class, .. } = first else { panic!("asks") };
        let g = Gate { reasons: class.reasons.clone(), timeout_secs: 100_000, ..g.clone() };
        let again = decide(&Live { gate: &g, element: Some(&plain), expect: Some(&plain.fingerprint), ..live });
        let GateStep::Ask { question, .. } = again else { panic!("asks") };
        assert_eq!(question.reasons, class.reasons);
        assert_eq!(question.timeout_secs, MAX_APPROVAL_TIMEOUT_SECS);
        assert_eq!((question.shows.as_str(), question.goes_to.as_str()), ("", ""));

        // What paints, when it differs from the DOM's text, is what the
        // window says the page shows; a paint trick asks.
        let mut flipped = element("button", "tnuocca eteleD");
        flipped.facts.visible_text = "tnuocca eteleD".into();
        flipped.facts.painted_text = "Delete account".into();
        flipped.facts.paint_tricks = vec![crate::risk::PaintTrick::BidiOverride];
        let g = Gate { decision: Decision::Allow, risk: RiskLevel::Low, reasons: vec![], ..gate() };
        let step = decide(&Live { gate: &g, element: Some(&flipped), expect: Some(&flipped.fingerprint), ..live });
        let GateStep::Ask { question, .. } = step else { panic!("a paint trick asks") };
        assert_eq!((question.risk, question.shows.as_str()), (RiskLevel::High, "Delete account"));

        // A tab or the focused page: no element to describe.
        let close = Action::CloseTab;
        let g = Gate { decision: Decision::Confirm, ..gate() };
        let step = decide(&Live { action: &close, gate: &g, element: None, expect: None, ..live });
        let GateStep::Ask { question, .. } = step else { panic!("asks") };
        assert_eq!((question.role, question.name, question.shows, question.goes_to), Default::default());
        assert!(question.reasons.iter().any(|r| r.contains("did not open")), "{:?}", question.reasons);
    }

    #[test]
    fn a_run_carries_the_live_classification_and_the_shown_risk() {
        let e = element("button", "Delete account");
        let g = Gate { risk: RiskLevel::Medium, ..gate() };
        let action = Action::Click;
        let live =
            Live { action: &action, gate: &g, expect: Some(&e.fingerprint), element: Some(&e), url: PAGE, yolo: true };
        let GateStep::Run { decided_by, class, shown_risk } = decide(&live) else { panic!("runs") };
        assert_eq!((decided_by, class.risk, shown_risk), (DecidedBy::Yolo, RiskLevel::High, RiskLevel::High));
        assert!(class.reasons.iter().any(|r| r.contains("delete")), "{:?}", class.reasons);
    }

    #[test]
    fn admit_table() {
        let stopped = ControlState { stopped: true, ..ControlState::default() };
        let paused = ControlState { paused: true, ..ControlState::default() };
        let both = ControlState { stopped: true, paused: true, yolo: true, pending: 3 };
        let fp = Fingerprint { role: "button".into(), name: "Send".into(), path: "1".into() };
        let denied = Gate { decision: Decision::Deny, ..gate() };
        let g = gate();
        let (enter, close) = (Action::PressKey { key: "Enter".into() }, Action::CloseTab);
        let ok = Arrival {
            controls: ControlState::default(),
            gate: &g,
            request_seen: false,
            action: &Action::Click,
            target: Some("e1"),
            expect: Some(&fp),
        };
        let stop = Some((ErrorCode::Stopped, Some(DeniedBy::Stop), "pressed STOP"));
        let pause = Some((ErrorCode::Stopped, Some(DeniedBy::Stop), "paused"));
        let invalid = |m| Some((ErrorCode::InvalidRequest, None, m));
        /// The refusal expected: its code, who denied, a part of its message.
        type Refusal<'m> = Option<(ErrorCode, Option<DeniedBy>, &'m str)>;
        let cases: Vec<(&str, Arrival<'_>, Refusal<'_>)> = vec![
            ("a fresh, well-formed Act", ok, None),
            (
                "YOLO on, something pending",
                Arrival { controls: ControlState { yolo: true, pending: 2, ..ok.controls }, ..ok },
                None,
            ),
            ("a key press on the focused element", Arrival { action: &enter, target: None, expect: None, ..ok }, None),
            ("closing a tab", Arrival { action: &close, target: None, expect: None, ..ok }, None),
            ("STOP", Arrival { controls: stopped, ..ok }, stop),
            ("Pause", Arrival { controls: paused, ..ok }, pause),
            ("STOP is named when both are on", Arrival { controls: both, ..ok }, stop),
            ("STOP before a reused id", Arrival { controls: stopped, request_seen: true, ..ok }, stop),
            ("STOP before a bridge deny", Arrival { controls: paused, gate: &denied, ..ok }, pause),
            (
                "bridge deny",
                Arrival { gate: &denied, ..ok },
                Some((ErrorCode::PermissionDenied, None, "the policy denies")),
            ),
            (
                "bridge deny before a reused id",
                Arrival { gate: &denied, request_seen: true, ..ok },
                Some((ErrorCode::PermissionDenied, None, "the policy denies")),
            ),
            ("request id reused", Arrival { request_seen: true, ..ok }, invalid("used already")),
            ("closing a tab with a ref", Arrival { action: &close, ..ok }, invalid("takes no ref")),
            ("a ref without its fingerprint", Arrival { expect: None, ..ok }, invalid("needs the fingerprint")),
        ];
        for (name, arrival, want) in cases {
            let got = admit(&arrival).err();
            match (want, got) {
                (None, None) => {}
                (Some((code, by, text)), Some(e)) => {
                    assert_eq!((e.code, e.denied_by), (code, by), "{name}: {e}");
                    assert!(e.message.contains(text), "{name}: {e}");
                }
                (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn answers_say_who_decided() {
        assert_eq!(answered(Answer::Approved, 120), Ok(DecidedBy::Human));
        for (answer, code, by, text, history) in [
            (Answer::Denied, ErrorCode::ApprovalDenied, DeniedBy::Human, "the person denied", "denied"),
            (
                Answer::Timeout,
                ErrorCode::ApprovalDenied,
                DeniedBy::Timeout,
                "timeout: no answer from the person within 45 s",
                "timeout",
            ),
            (Answer::Stopped, ErrorCode::Stopped, DeniedBy::Stop, "pressed STOP while this action waited", "stopped"),
        ] {
            let e = answered(answer, 45).unwrap_err();
            assert_eq!((e.code, e.denied_by), (code, Some(by)), "{answer:?}");
            assert!(e.message.contains(text), "{answer:?}: {e}");
            assert_eq!(answer.history(), history);
        }
        assert_eq!(Answer::Approved.history(), "approved");
        assert_eq!(YOLO_HISTORY, "auto (YOLO)");
    }

    #[test]
    fn halted_table() {
        let off = ControlState::default();
        let on = |stopped, paused| ControlState { stopped, paused, ..off };
        for (name, controls, since, want) in [
            ("nothing pressed", off, false, None),
            ("YOLO does not halt", ControlState { yolo: true, ..off }, false, None),
            ("STOP pressed since, then Resume", off, true, Some("pressed STOP; the action did not run")),
            ("STOP on now", on(true, false), false, Some("pressed STOP in the Chaperone popup")),
            ("Pause on now", on(false, true), false, Some("paused")),
            ("STOP since wins", on(false, true), true, Some("pressed STOP; the action did not run")),
        ] {
            match (want, halted(controls, since)) {
                (None, None) => {}
                (Some(text), Some(e)) => {
                    assert_eq!((e.code, e.denied_by), (ErrorCode::Stopped, Some(DeniedBy::Stop)), "{name}");
                    assert!(e.message.contains(text), "{name}: {e}");
                }
                (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
            }
        }
    }
}
