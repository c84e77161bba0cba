//! The bridge's decision before it dispatches an `Act` (docs/design.md,
//! "Policy, approvals and audit"; `bridge/src/server/actions` is the IO
//! around it: the tab lock, `Command::Resolve`, the audit rows). Pure, so
//! that every refusal the bridge makes is table-tested here, beside the
//! extension's ([`super::decide`]), with the same codes.
//!
//! A planned action ([`Proposal`]) goes through these steps, in this
//! order; the first refusal ends it and nothing is dispatched.
//!
//! 1. [`before_resolve`], before the page is asked anything:
//!    - STOP or Pause, as the connected extension last reported them →
//!      `STOPPED` ([`super::refused_by_controls`]: the extension's words
//!      and `denied_by: stop`);
//!    - on the last URL the bridge saw on the tab, if any: the site's
//!      access ([`site_refusal`], the one site check of every tool:
//!      `config.toml`'s `[[sites]]` and the person's popup choices, the
//!      strictest wins) — `deny` refuses everything, `read` every action
//!      that could change something ([`Action::site_use`]: a scroll or a
//!      hover passes) → `PERMISSION_DENIED` naming the rule; a secret
//!      bound to sites, none of them this URL's origin →
//!      `PERMISSION_DENIED`, whatever the policy and YOLO say.
//! 2. The bridge resolves the ref; the page URL is the element's (else
//!    the last one seen).
//! 3. [`before_dispatch`] on that element and URL:
//!    - the site rule and the secret's binding again, on the page URL;
//!    - the sensitive-field rule both sides apply ([`super::fields`]):
//!      password, card, bank or an unknown kind filled →
//!      `PERMISSION_DENIED`; a literal (or a printable key) into another
//!      sensitive field, a secret into an ordinary one → `INVALID_REQUEST`;
//!    - files only into an `<input type=file>` → `INVALID_REQUEST`;
//!    - a `SelectOption` value no enabled option of the select has →
//!      `INVALID_REQUEST` naming the options there are (redacted: labels
//!      are page text), so nobody is asked about a choice that cannot be
//!      made;
//!    - [`classify`] of the element (a `browser_fill_form` field as a form
//!      field), raised to a flow step's stored risk, never lowered
//!      ([`crate::replay::floor`]);
//!    - [`crate::policy::decide`] on the page URL: `deny` →
//!      `PERMISSION_DENIED` with the rule and the (redacted) reasons;
//!    - a secret bound to no site: at least `confirm` and
//!      [`Dispatch::person_must_answer`] (the extension asks the person
//!      even under YOLO), with the reason saying how to bind it;
//!    - a flow step's changed target: the same, with the reason naming
//!      the recorded and the live element.
//!
//! [`classify`]: crate::risk::classify

use crate::action::{Action, ControlState, ResolvedElement, Typing};
use crate::error::{ErrorCode, WireError};
use crate::policy::{Decision, Policy, PopupRule, SiteUse};
use crate::replay::ChangedTarget;
use crate::risk::{ActionKind, Classification, RiskLevel, classify};

use super::fields::{field_kind, field_refusal};
use super::refused_by_controls;

/// A stored secret an action types: its name and its site binding (origin
/// patterns; empty: bound to no site), read without decrypting anything.
#[derive(Debug, Clone, Copy)]
pub struct SecretBinding<'a> {
    pub name: &'a str,
    pub sites: &'a [String],
}

/// One action as a tool planned it, and what the decision needs beside it.
#[derive(Debug, Clone, Copy)]
pub struct Proposal<'a> {
    /// `config.toml`'s policy: risk decisions and `[[sites]]`.
    pub policy: &'a Policy,
    /// The person's popup choices of site access in force now (with
    /// `policy.sites`, the rules [`site_refusal`] reads).
    pub popup: &'a [PopupRule],
    pub action: &'a Action,
    /// `FormField` for a `browser_fill_form` field.
    pub typing: Typing,
    /// The ref, for messages (`None`: a page-level action).
    pub target: Option<&'a str>,
    /// For `TypeSecret`: the secret's binding.
    pub secret: Option<SecretBinding<'a>>,
    /// A flow step's stored risk (raises the live one, never lowers it).
    pub floor: Option<RiskLevel>,
    /// A flow step's changed target.
    pub changed: Option<&'a ChangedTarget>,
}

/// What the bridge sends with an action that passed [`before_dispatch`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    pub class: Classification,
    /// `Allow` or `Confirm`.
    pub decision: Decision,
    /// The person answers, whatever YOLO says (a secret bound to no site,
    /// a flow step's changed target).
    pub person_must_answer: bool,
}

/// A refusal of [`before_dispatch`], with the classification when the
/// policy refused on it (for the audit row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub error: WireError,
    pub class: Option<Classification>,
}

impl From<WireError> for Refused {
    fn from(error: WireError) -> Self {
        Refused { error, class: None }
    }
}

/// Step 1 (see the module docs): `controls` as the extension last
/// reported them, `known_url` the last URL seen on the tab.
pub fn before_resolve(p: &Proposal<'_>, controls: ControlState, known_url: Option<&str>) -> Result<(), WireError> {
    if let Some(e) = refused_by_controls(controls) {
        return Err(e);
    }
    match known_url {
        Some(url) => on_site(p, url),
        None => Ok(()),
    }
}

/// Step 3 (see the module docs) on the resolved `element` (`None` for a
/// page-level action) and the page `url`.
pub fn before_dispatch(p: &Proposal<'_>, element: Option<&ResolvedElement>, url: &str) -> Result<Dispatch, Refused> {
    on_site(p, url)?;
    if let Some(e) = field_refusal(p.action, element) {
        return Err(e.into());
    }
    file_input(p.action, element)?;
    options(p, element)?;
    let mut class = classify(&ActionKind::of(p.action, p.typing), element.map(|e| &e.facts), url, field_kind(element));
    if let (risk, true) = crate::replay::floor(class.risk, p.floor) {
        class.risk = risk;
        class.reasons.push(format!("the flow stores this step as {} risk", risk.as_str()));
    }
    let (mut decision, why) = crate::policy::decide(p.policy, url, class.risk);
    if decision == Decision::Deny {
        let error = WireError::new(
            ErrorCode::PermissionDenied,
            // The reasons quote page text (at most 60 characters each): redacted.
            format!(
                "refused by the person's policy ({why}): {}",
                crate::redact::redact_text(&class.reasons.join("; "))
            ),
        );
        return Err(Refused { error, class: Some(class) });
    }
    let mut person_must_answer = false;
    if let Some(s) = p.secret.filter(|s| s.sites.is_empty()) {
        class.reasons.push(unbound_reason(s.name));
        decision = decision.max(Decision::Confirm);
        person_must_answer = true;
    }
    if let Some(c) = p.changed {
        class.reasons.push(format!(
            "changed target: the flow recorded {}, the page now has {} (found by {})",
            c.recorded.line(),
            c.live.line(),
            c.via
        ));
        decision = decision.max(Decision::Confirm);
        person_must_answer = true;
    }
    Ok(Dispatch { class, decision, person_must_answer })
}

/// The one site check of every tool: `PERMISSION_DENIED` naming the rule
/// and the origin when `what` is refused on `url` by the site's access
/// (`policy.sites` and the popup's choices, the strictest wins:
/// [`crate::policy::access_in`]; the words: [`crate::policy::refusal`]).
/// Reading and navigating are [`SiteUse::Look`]; an action says what it
/// is ([`Action::site_use`]).
pub fn site_refusal(policy: &Policy, popup: &[PopupRule], url: &str, what: SiteUse) -> Option<WireError> {
    let access = crate::policy::access_in(&policy.sites, popup, url);
    crate::policy::refusal(&access, url, what).map(|why| WireError::new(ErrorCode::PermissionDenied, why))
}

/// Whether `sites` (a secret's binding, origin patterns) allow `url`.
pub fn binding_allows(sites: &[String], url: &str) -> bool {
    sites.iter().any(|p| crate::policy::origin_matches(p, url))
}

/// The site rule, then a secret bound to sites none of which is `url`'s.
fn on_site(p: &Proposal<'_>, url: &str) -> Result<(), WireError> {
    if let Some(e) = site_refusal(p.policy, p.popup, url, p.action.site_use()) {
        return Err(e);
    }
    let Some(s) = p.secret.filter(|s| !s.sites.is_empty()) else { return Ok(()) };
    if binding_allows(s.sites, url) {
        return Ok(());
    }
    let origin = crate::url::Origin::of(url).map_or_else(|| "this page".into(), |o| o.to_string());
    Err(WireError::new(
        ErrorCode::PermissionDenied,
        format!(
            "the secret {} is bound to other sites by the person; it is never typed on {origin}, whatever the \
             policy says",
            s.name
        ),
    ))
}

/// Why the person answers an action that types `name`, bound to no site.
fn unbound_reason(name: &str) -> String {
    format!("the secret {name} is not bound to a site (`chaperone secret set {name} --site ORIGIN` binds it)")
}

/// Files go only into an `<input type=file>`.
fn file_input(action: &Action, element: Option<&ResolvedElement>) -> Result<(), WireError> {
    match (action, element) {
        (Action::UploadFiles { .. }, Some(e)) if e.facts.input_type.eq_ignore_ascii_case("file") => Ok(()),
        (Action::UploadFiles { .. }, _) => Err(WireError::new(
            ErrorCode::InvalidRequest,
            "files go only into a file input (<input type=file>); give the ref of one from browser_snapshot",
        )),
        _ => Ok(()),
    }
}

/// A `SelectOption` value no enabled option of the select has
/// ([`crate::action::missing_option_message`], redacted).
fn options(p: &Proposal<'_>, element: Option<&ResolvedElement>) -> Result<(), WireError> {
    let (Action::SelectOption { values }, Some(e)) = (p.action, element) else { return Ok(()) };
    if e.facts.options.is_empty() {
        return Ok(());
    }
    match values.iter().find(|v| crate::risk::chosen_option(&e.facts.options, v).is_none()) {
        Some(missing) => {
            let msg = crate::action::missing_option_message(&e.facts.options, missing, p.target);
            Err(WireError::new(ErrorCode::InvalidRequest, crate::redact::redact_text(&msg)))
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Fingerprint;
    use crate::action::ScrollDirection;
    use crate::audit::DeniedBy;
    use crate::policy::{RiskDecisions, SiteAccess, SiteRule};
    use crate::risk::{ElementFacts, OptionFacts};
    use crate::sensitive::SensitiveKind;
    use ErrorCode::{InvalidRequest, PermissionDenied, Stopped};

    const PAGE: &str = "https://shop.example/notes?session=abc";

    fn policy() -> Policy {
        let rule =
            |origin: &str, access, high| SiteRule { origin: origin.into(), access, low: None, medium: None, high };
        Policy {
            sites: vec![
                rule("https://blocked.example", Some(SiteAccess::Deny), None),
                rule("https://docs.example", Some(SiteAccess::Read), None),
                rule("https://strict.example", None, Some(Decision::Deny)),
            ],
            ..Policy::default()
        }
    }

    /// The person's popup choices: one site read only, one Never, and an
    /// attempt to loosen a `config.toml` deny (which cannot: the
    /// strictest wins).
    fn popup() -> Vec<PopupRule> {
        let rule = |origin: &str, access| PopupRule { origin: origin.into(), access };
        vec![
            rule("https://wiki.example:443", SiteAccess::Read),
            rule("https://never.example:443", SiteAccess::Deny),
            rule("https://blocked.example:443", SiteAccess::Act),
        ]
    }

    /// What every table starts from: a click on `e1`, no popup choice.
    fn proposal<'a>(policy: &'a Policy, action: &'a Action) -> Proposal<'a> {
        Proposal {
            policy,
            popup: &[],
            action,
            typing: Typing::Alone,
            target: Some("e1"),
            secret: None,
            floor: None,
            changed: None,
        }
    }

    fn element(role: &str, name: &str) -> ResolvedElement {
        ResolvedElement {
            facts: ElementFacts { role: role.into(), name: name.into(), ..ElementFacts::default() },
            fingerprint: Fingerprint { role: role.into(), name: name.into(), path: "0/1".into() },
            sensitive: None,
            url: PAGE.into(),
        }
    }

    fn field(kind: Option<SensitiveKind>, input_type: &str) -> ResolvedElement {
        let mut e = element("textbox", "Field");
        e.facts.editable = true;
        e.facts.input_type = input_type.into();
        e.sensitive = kind;
        e
    }

    fn select_field() -> ResolvedElement {
        let mut e = element("combobox", "Size");
        e.facts.options = ["Small", "Large"]
            .iter()
            .map(|l| OptionFacts { label: (*l).into(), value: l.to_lowercase(), ..OptionFacts::default() })
            .collect();
        e
    }

    fn file_input() -> ResolvedElement {
        let mut e = element("button", "Choose file");
        e.facts.input_type = "file".into();
        e
    }

    /// The refusal expected: its code and a part of its message.
    type Refusal = Option<(ErrorCode, &'static str)>;

    #[test]
    fn before_resolve_table() {
        let (p, popup) = (policy(), popup());
        let (click, scroll, hover) =
            (Action::Click, Action::Scroll { direction: ScrollDirection::Down }, Action::Hover);
        let bound = ["https://shop.example".to_string()];
        let base = Proposal { popup: &popup, ..proposal(&p, &click) };
        let secret = Action::TypeSecret { name: "API".into(), submit: false };
        let typing_bound =
            Proposal { action: &secret, secret: Some(SecretBinding { name: "API", sites: &bound }), ..base };
        let typing = Action::Type { text: "hi".into(), submit: false };
        let off = ControlState::default();
        let stopped = ControlState { stopped: true, ..off };
        let paused = ControlState { paused: true, ..off };
        #[rustfmt::skip]
        let cases: Vec<(&str, Proposal<'_>, ControlState, Option<&str>, Refusal)> = vec![
            ("nothing known yet", base, off, None, None),
            ("an allowed site", base, off, Some(PAGE), None),
            ("STOP", base, stopped, Some(PAGE), Some((Stopped, "pressed STOP"))),
            ("Pause", base, paused, None, Some((Stopped, "paused"))),
            ("STOP before a denied site", base, stopped, Some("https://blocked.example/"), Some((Stopped, "STOP"))),
            (
                "a denied site",
                base,
                off,
                Some("https://blocked.example/x"),
                Some((PermissionDenied, "denies access to https://blocked.example")),
            ),
            // ---- site access: config.toml's and the popup's, the strictest wins
            ("a config deny the popup tried to loosen", base, off, Some("https://blocked.example/"), Some((PermissionDenied, "denies access to https://blocked.example"))),
            ("a config read-only site refuses a click", base, off, Some("https://docs.example/a"), Some((PermissionDenied, "https://docs.example:443 is read only for agents (rule https://docs.example in config.toml"))),
            ("a config read-only site lets a scroll through", Proposal { action: &scroll, ..base }, off, Some("https://docs.example/a"), None),
            ("a popup read-only site refuses typing", Proposal { action: &typing, ..base }, off, Some("https://wiki.example/p"), Some((PermissionDenied, "read only for agents (chosen in the extension popup)"))),
            ("a popup read-only site refuses a bound secret on its site", Proposal { popup: &popup, ..typing_bound }, off, Some("https://wiki.example/p"), Some((PermissionDenied, "read only"))),
            ("a popup read-only site lets a hover through", Proposal { action: &hover, ..base }, off, Some("https://wiki.example/p"), None),
            ("a popup read-only site spelled otherwise (case, trailing dot, default port)", base, off, Some("https://WIKI.Example.:443/p"), Some((PermissionDenied, "read only"))),
            ("a popup read-only site behind userinfo", base, off, Some("https://evil.example@wiki.example/p"), Some((PermissionDenied, "read only"))),
            ("a popup read-only site is that origin only", base, off, Some("http://wiki.example/p"), None),
            ("a site the person set to Never refuses even a scroll", Proposal { action: &scroll, ..base }, off, Some("https://never.example/"), Some((PermissionDenied, "set https://never.example:443 to Never"))),
            ("STOP before a read-only site", base, stopped, Some("https://wiki.example/"), Some((Stopped, "STOP"))),
            // ---- a secret's binding
            ("a bound secret on its site", typing_bound, off, Some(PAGE), None),
            (
                "a bound secret elsewhere",
                typing_bound,
                off,
                Some("https://evil.example/login"),
                Some((PermissionDenied, "the secret API is bound to other sites")),
            ),
            (
                "a bound secret on another port",
                typing_bound,
                off,
                Some("https://shop.example:8443/"),
                Some((PermissionDenied, "never typed on https://shop.example:8443")),
            ),
        ];
        for (name, proposal, controls, known, want) in cases {
            match (want, before_resolve(&proposal, controls, known)) {
                (None, Ok(())) => {}
                (Some((code, text)), Err(e)) => {
                    assert_eq!(e.code, code, "{name}: {e}");
                    assert!(e.message.contains(text), "{name}: {e}");
                    let by = (code == Stopped).then_some(DeniedBy::Stop);
                    assert_eq!(e.denied_by, by, "{name}: STOP and Pause say who");
                }
                (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
            }
        }
    }

    /// What [`before_dispatch`] must give: a refusal, or the decision,
    /// whether the person must answer, and a part of one reason.
    #[derive(Debug)]
    enum Want {
        Refuse(ErrorCode, &'static str),
        Policy(Decision, &'static str),
        Person(&'static str),
    }

    #[test]
    fn before_dispatch_table() {
        use SensitiveKind::{Card, Password, Token, Unknown};
        use Want::{Person, Policy as Pass, Refuse};
        let p = policy();
        let unbound: [String; 0] = [];
        let bound = ["https://shop.example".to_string()];
        let (click, typed, secret) = (
            Action::Click,
            Action::Type { text: "hi".into(), submit: false },
            Action::TypeSecret { name: "API".into(), submit: false },
        );
        let (select_large, select_huge) = (
            Action::SelectOption { values: vec!["Large".into()] },
            Action::SelectOption { values: vec!["Huge".into()] },
        );
        let upload = Action::UploadFiles { upload: 1, files: vec![] };
        let key7 = Action::PressKey { key: "7".into() };
        let changed = ChangedTarget {
            recorded: crate::replay::TargetSummary { role: "button".into(), name: "Place order".into() },
            live: crate::replay::TargetSummary { role: "button".into(), name: "Save draft".into() },
            via: "id \"place\"".into(),
        };
        let popup = popup();
        let base = Proposal { popup: &popup, ..proposal(&p, &click) };
        let hover = Action::Hover;
        let with_secret =
            |sites| Proposal { action: &secret, secret: Some(SecretBinding { name: "API", sites }), ..base };
        let save = element("button", "Save draft");
        let delete = element("button", "Delete account");
        #[rustfmt::skip]
        let cases: Vec<(&str, Proposal<'_>, Option<ResolvedElement>, &str, Want)> = vec![
            ("a low-risk click runs", base, Some(save.clone()), PAGE, Pass(Decision::Allow, "")),
            ("a high-risk click confirms", base, Some(delete.clone()), PAGE, Pass(Decision::Confirm, "delete")),
            ("a denied site, seen only on the element's URL", base, Some(save.clone()), "https://blocked.example/", Refuse(PermissionDenied, "denies access")),
            ("a popup read-only site, seen only on the element's URL", base, Some(save.clone()), "https://wiki.example/", Refuse(PermissionDenied, "read only for agents")),
            ("a hover on a read-only site", Proposal { action: &hover, ..base }, Some(save.clone()), "https://docs.example/", Pass(Decision::Allow, "")),
            ("a site set to Never, seen only on the element's URL", Proposal { action: &hover, ..base }, Some(save.clone()), "https://never.example/", Refuse(PermissionDenied, "to Never")),
            ("the policy denies high risk there", base, Some(delete.clone()), "https://strict.example/", Refuse(PermissionDenied, "refused by the person's policy")),
            ("the policy's deny is for its risk only", base, Some(save.clone()), "https://strict.example/", Pass(Decision::Allow, "")),
            ("a flow step's stored risk raises the live one", Proposal { floor: Some(RiskLevel::High), ..base }, Some(save.clone()), PAGE, Pass(Decision::Confirm, "stores this step as high")),
            ("a stored risk never lowers it", Proposal { floor: Some(RiskLevel::Low), ..base }, Some(delete.clone()), PAGE, Pass(Decision::Confirm, "delete")),
            ("a stored high risk where the policy denies it", Proposal { floor: Some(RiskLevel::High), ..base }, Some(save.clone()), "https://strict.example/", Refuse(PermissionDenied, "refused by the person's policy")),
            ("a changed target: the person answers", Proposal { changed: Some(&changed), ..base }, Some(save.clone()), PAGE, Person("changed target: the flow recorded button \"Place order\"")),
            ("a changed target where the policy denies: the deny stays", Proposal { changed: Some(&changed), ..base }, Some(delete.clone()), "https://strict.example/", Refuse(PermissionDenied, "refused by")),
            // ---- sensitive fields: the rule the extension applies too
            ("a literal into an ordinary field", Proposal { action: &typed, ..base }, Some(field(None, "text")), PAGE, Pass(Decision::Allow, "")),
            ("a literal into a token field", Proposal { action: &typed, ..base }, Some(field(Some(Token), "text")), PAGE, Refuse(InvalidRequest, "literal values are refused")),
            ("a printable key into a token field", Proposal { action: &key7, ..base }, Some(field(Some(Token), "text")), PAGE, Refuse(InvalidRequest, "literal values are refused")),
            ("a literal into a password input", Proposal { action: &typed, ..base }, Some(field(None, "password")), PAGE, Refuse(PermissionDenied, "never fills password fields")),
            ("a bound secret into a password field", with_secret(&bound), Some(field(Some(Password), "password")), PAGE, Refuse(PermissionDenied, "never fills password fields")),
            ("a bound secret into a card field", with_secret(&bound), Some(field(Some(Card), "text")), PAGE, Refuse(PermissionDenied, "never fills card fields")),
            ("a bound secret into a field of an unknown kind", with_secret(&bound), Some(field(Some(Unknown), "text")), PAGE, Refuse(PermissionDenied, "never fills")),
            ("a literal into a field of an unknown kind", Proposal { action: &typed, ..base }, Some(field(Some(Unknown), "text")), PAGE, Refuse(PermissionDenied, "never fills")),
            ("a bound secret into an ordinary field", with_secret(&bound), Some(field(None, "text")), PAGE, Refuse(InvalidRequest, "a secret goes only into a field")),
            ("a bound secret into a token field on its site", with_secret(&bound), Some(field(Some(Token), "text")), PAGE, Pass(Decision::Confirm, "sensitive field")),
            ("a bound secret, the element on another site", with_secret(&bound), Some(field(Some(Token), "text")), "https://evil.example/", Refuse(PermissionDenied, "bound to other sites")),
            ("an unbound secret: the person answers", with_secret(&unbound), Some(field(Some(Token), "text")), PAGE, Person("the secret API is not bound to a site")),
            ("an unbound secret where the policy denies: the deny stays", with_secret(&unbound), Some(field(Some(Token), "text")), "https://strict.example/", Refuse(PermissionDenied, "refused by")),
            // ---- files and options
            ("files into a file input", Proposal { action: &upload, ..base }, Some(file_input()), PAGE, Pass(Decision::Allow, "uploads a file")),
            ("files into a text field", Proposal { action: &upload, ..base }, Some(field(None, "text")), PAGE, Refuse(InvalidRequest, "files go only into a file input")),
            ("files into nothing", Proposal { action: &upload, target: None, ..base }, None, PAGE, Refuse(InvalidRequest, "files go only into a file input")),
            ("an option the select has", Proposal { action: &select_large, ..base }, Some(select_field()), PAGE, Pass(Decision::Allow, "")),
            ("an option the select does not have", Proposal { action: &select_huge, ..base }, Some(select_field()), PAGE, Refuse(InvalidRequest, "Huge")),
            ("an option in a card field", Proposal { action: &select_large, ..base }, Some(field(Some(Card), "")), PAGE, Refuse(PermissionDenied, "never fills card fields")),
        ];
        for (name, proposal, element, url, want) in cases {
            let got = before_dispatch(&proposal, element.as_ref(), url);
            match (&want, &got) {
                (Refuse(code, text), Err(r)) => {
                    assert_eq!(r.error.code, *code, "{name}: {}", r.error);
                    assert!(r.error.message.contains(text), "{name}: {}", r.error);
                    let policy = r.error.message.starts_with("refused by the person's policy");
                    assert_eq!(r.class.is_some(), policy, "{name}: the classification comes with a policy deny");
                }
                (Pass(decision, reason), Ok(d)) => {
                    assert_eq!((d.decision, d.person_must_answer), (*decision, false), "{name}: {d:?}");
                    assert!(d.class.reasons.iter().any(|r| r.contains(reason)) || reason.is_empty(), "{name}: {d:?}");
                }
                (Person(reason), Ok(d)) => {
                    assert_eq!((d.decision, d.person_must_answer), (Decision::Confirm, true), "{name}: {d:?}");
                    assert!(d.class.reasons.iter().any(|r| r.contains(reason)), "{name}: {d:?}");
                }
                (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn both_sides_refuse_a_field_of_an_unknown_kind_with_the_same_code() {
        use crate::action::Gate;
        let p = policy();
        let secret = Action::TypeSecret { name: "API".into(), submit: false };
        let bound = ["https://shop.example".to_string()];
        // What the extension's content script sent, read by a version that
        // does not know the kind.
        let e: ResolvedElement = serde_json::from_value(serde_json::json!({
            "facts": serde_json::to_value(ElementFacts { role: "textbox".into(), editable: true, ..ElementFacts::default() }).unwrap(),
            "fingerprint": { "role": "textbox", "name": "", "path": "1" },
            "sensitive": "passkey_of_the_future",
            "url": PAGE,
        }))
        .unwrap();
        assert_eq!(e.sensitive, Some(SensitiveKind::Unknown));
        let proposal = Proposal { secret: Some(SecretBinding { name: "API", sites: &bound }), ..proposal(&p, &secret) };
        let bridge = before_dispatch(&proposal, Some(&e), PAGE).unwrap_err().error;
        let gate = Gate {
            request: 1,
            risk: RiskLevel::Low,
            reasons: vec![],
            decision: Decision::Allow,
            policy: RiskDecisions::default(),
            summary: String::new(),
            timeout_secs: 60,
            origin: "https://shop.example:443".into(),
            person_must_answer: false,
            changed: None,
        };
        let live = super::super::Live {
            action: &secret,
            gate: &gate,
            expect: Some(&e.fingerprint),
            element: Some(&e),
            url: PAGE,
            yolo: true,
        };
        let super::super::GateStep::Refuse(extension) = super::super::decide(&live) else { panic!("refused") };
        assert_eq!((bridge.code, extension.code), (PermissionDenied, PermissionDenied));
        assert_eq!(bridge.message, extension.message, "one rule, one message");
        // Control: the same field of a known, fillable kind passes both.
        let known = ResolvedElement { sensitive: Some(SensitiveKind::Token), ..e.clone() };
        assert!(before_dispatch(&proposal, Some(&known), PAGE).is_ok());
        let live = super::super::Live { element: Some(&known), ..live };
        assert!(matches!(super::super::decide(&live), super::super::GateStep::Run { .. }));
    }
}
