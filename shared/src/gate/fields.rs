//! What may go into a sensitive field (docs/design.md, "Secrets, sensitive
//! fields and files"): one rule, applied by the bridge before it dispatches
//! an `Act` ([`super::dispatch`]) and by the extension on the live element
//! ([`super::decide`]), so both sides refuse the same things with the same
//! codes.
//!
//! The field's kind is [`field_kind`]: its sensitive kind as the content
//! script detected it, a password input counting as `password`, a kind this
//! version does not know as [`SensitiveKind::Unknown`] (the strictest).
//! Then, in this order:
//!
//! - typing (a literal or a secret) or choosing an option in a field the
//!   agent may never fill (password, card, bank, unknown:
//!   [`SensitiveKind::agent_may_never_fill`]) → `PERMISSION_DENIED`: the
//!   person enters those themselves;
//! - a literal typed, or a printable key pressed (one character), into any
//!   other sensitive field → `INVALID_REQUEST`: the agent passes a stored
//!   secret's name instead;
//! - a secret typed into a field that is not sensitive → `INVALID_REQUEST`:
//!   its value would show in the next snapshot.
//!
//! Both "wrong kind of value for this field" refusals are `INVALID_REQUEST`
//! on both sides (README, SECURITY.md).

use crate::action::{Action, ResolvedElement};
use crate::error::{ErrorCode, WireError};
use crate::sensitive::SensitiveKind;

/// The sensitive kind of a field: the detected one, else `password` for a
/// password input; `None` for an ordinary field or no element.
pub fn field_kind(element: Option<&ResolvedElement>) -> Option<SensitiveKind> {
    let e = element?;
    e.sensitive.or(e.facts.input_type.eq_ignore_ascii_case("password").then_some(SensitiveKind::Password))
}

/// The refusal of `action` on `element` by the rule above, if any.
pub fn field_refusal(action: &Action, element: Option<&ResolvedElement>) -> Option<WireError> {
    let kind = field_kind(element);
    let fills = action.types_text() || matches!(action, Action::SelectOption { .. });
    match kind {
        Some(kind) if fills && kind.agent_may_never_fill() => Some(never_filled(kind)),
        Some(kind) if types_literal(action) => Some(WireError::new(
            ErrorCode::InvalidRequest,
            format!(
                "this is a sensitive field ({}); literal values are refused there. Ask the person to store the \
                 value with `chaperone secret set NAME` and pass {{\"secret\": \"NAME\"}} instead",
                kind.as_str()
            ),
        )),
        None if matches!(action, Action::TypeSecret { .. }) => Some(WireError::new(
            ErrorCode::InvalidRequest,
            "a secret goes only into a field Chaperone treats as sensitive (its value is then always masked); this \
             field is not one, so its value would show in the next snapshot",
        )),
        _ => None,
    }
}

/// A literal typed, or one printable key pressed.
fn types_literal(action: &Action) -> bool {
    match action {
        Action::Type { .. } => true,
        Action::PressKey { key } => key.chars().count() == 1,
        _ => false,
    }
}

fn never_filled(kind: SensitiveKind) -> WireError {
    let what = match kind {
        SensitiveKind::Password => {
            return WireError::new(
                ErrorCode::PermissionDenied,
                "Chaperone never fills password fields, not even from a secret: ask the person to log in by hand \
                 in this tab",
            );
        }
        SensitiveKind::Card => "card",
        SensitiveKind::Bank => "bank",
        _ => "this kind of sensitive",
    };
    WireError::new(
        ErrorCode::PermissionDenied,
        format!("Chaperone never fills {what} fields, not even from a secret: the person enters those themselves"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Fingerprint;
    use crate::risk::ElementFacts;
    use ErrorCode::{InvalidRequest, PermissionDenied};

    fn field(kind: Option<SensitiveKind>, input_type: &str) -> ResolvedElement {
        ResolvedElement {
            facts: ElementFacts { role: "textbox".into(), input_type: input_type.into(), ..ElementFacts::default() },
            fingerprint: Fingerprint { role: "textbox".into(), name: "f".into(), path: "1".into() },
            sensitive: kind,
            url: "https://shop.example/".into(),
        }
    }

    /// A name, the action, the element, and the refusal expected (its
    /// code and a part of its message).
    type Case = (&'static str, Action, Option<ResolvedElement>, Option<(ErrorCode, &'static str)>);

    #[test]
    fn table() {
        use SensitiveKind::*;
        let typed = Action::Type { text: "x".into(), submit: false };
        let secret = Action::TypeSecret { name: "API".into(), submit: false };
        let select = Action::SelectOption { values: vec!["a".into()] };
        let key = |k: &str| Action::PressKey { key: k.into() };
        let refused = |code, text| Some((code, text));
        let never_pw = refused(PermissionDenied, "never fills password fields");
        let never = refused(PermissionDenied, "never fills");
        let literal = refused(InvalidRequest, "literal values are refused");
        let plain = refused(InvalidRequest, "a secret goes only into a field");
        #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            ("a literal into an ordinary field", typed.clone(), Some(field(None, "text")), None),
            ("a literal into a password input", typed.clone(), Some(field(None, "password")), never_pw),
            ("a secret into a password field", secret.clone(), Some(field(Some(Password), "text")), never_pw),
            ("a secret into a card field", secret.clone(), Some(field(Some(Card), "")), never),
            ("a literal into a bank field", typed.clone(), Some(field(Some(Bank), "")), never),
            ("an option in a card field", select.clone(), Some(field(Some(Card), "")), never),
            ("an option in a password field", select.clone(), Some(field(Some(Password), "")), never_pw),
            ("a literal into an unknown kind", typed.clone(), Some(field(Some(Unknown), "text")), never),
            ("a secret into an unknown kind", secret.clone(), Some(field(Some(Unknown), "text")), never),
            ("an option in an unknown kind", select.clone(), Some(field(Some(Unknown), "")), never),
            ("a literal into a token field", typed.clone(), Some(field(Some(Token), "text")), literal),
            ("a printable key in an OTP field", key("7"), Some(field(Some(OneTimeCode), "text")), literal),
            ("Enter in an OTP field", key("Enter"), Some(field(Some(OneTimeCode), "text")), None),
            ("a printable key in an ordinary field", key("a"), Some(field(None, "text")), None),
            ("a printable key with nothing focused", key("a"), None, None),
            ("a secret into a token field", secret.clone(), Some(field(Some(Token), "text")), None),
            ("a secret into an ordinary field", secret.clone(), Some(field(None, "text")), plain),
            ("a secret into nothing", secret.clone(), None, plain),
            ("an option in an ordinary select", select.clone(), Some(field(None, "")), None),
            ("clicking a card field", Action::Click, Some(field(Some(Card), "text")), None),
            ("clicking a password input", Action::Click, Some(field(None, "password")), None),
        ];
        for (name, action, element, want) in cases {
            let got = field_refusal(&action, element.as_ref());
            match (want, got) {
                (None, None) => {}
                (Some((code, text)), Some(e)) => {
                    assert_eq!(e.code, code, "{name}: {e}");
                    assert!(e.message.contains(text), "{name}: {e}");
                }
                (want, got) => panic!("{name}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn a_password_input_is_a_password_field_whatever_its_kind_says() {
        assert_eq!(field_kind(Some(&field(None, "PASSWORD"))), Some(SensitiveKind::Password));
        assert_eq!(field_kind(Some(&field(Some(SensitiveKind::Token), "text"))), Some(SensitiveKind::Token));
        assert_eq!(field_kind(None), None);
    }
}
