//! Which `<input type>`s take typed text: the two lists the content script
//! (facts, implicit submission), the classifier and the challenge
//! detector sort fields by. Types are compared in lower case; `""` stands
//! for a missing or empty `type` attribute, which HTML treats as `text`.
//!
//! Two lists, on purpose:
//!
//! - [`TEXT_TYPES`]: fields a person types free text into — an input
//!   the content script calls `editable`, a form's text fields when it
//!   decides whether the form is a search form, a field the challenge
//!   detector reads as a login or code field. Date and time pickers are
//!   not among them: their value is picked, not written, and a date field
//!   beside a search box does not make the form something else.
//! - [`IMPLICIT_SUBMISSION_TYPES`]: HTML's "fields that block implicit
//!   submission" — [`TEXT_TYPES`] plus the date and time types. A form
//!   whose only such field gets Enter is submitted (the content script
//!   does what the browser would), and a click on one of them only focuses
//!   it (the classifier does not call that a state change).

/// Inputs a person types free text into (see the module docs).
pub const TEXT_TYPES: &[&str] = &["", "text", "search", "email", "url", "tel", "password", "number"];

/// HTML's fields that block implicit submission: [`TEXT_TYPES`] plus the
/// date and time inputs (see the module docs).
pub const IMPLICIT_SUBMISSION_TYPES: &[&str] = &[
    "",
    "text",
    "search",
    "email",
    "url",
    "tel",
    "password",
    "number",
    "date",
    "datetime-local",
    "month",
    "week",
    "time",
];

/// `input_type` (any case) is one of [`TEXT_TYPES`].
pub fn is_text_type(input_type: &str) -> bool {
    TEXT_TYPES.iter().any(|t| t.eq_ignore_ascii_case(input_type))
}

/// `input_type` (any case) is one of [`IMPLICIT_SUBMISSION_TYPES`].
pub fn blocks_implicit_submission(input_type: &str) -> bool {
    IMPLICIT_SUBMISSION_TYPES.iter().any(|t| t.eq_ignore_ascii_case(input_type))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_differ_by_exactly_the_date_and_time_pickers() {
        for t in TEXT_TYPES {
            assert!(IMPLICIT_SUBMISSION_TYPES.contains(t), "{t}");
        }
        let extra: Vec<&str> = IMPLICIT_SUBMISSION_TYPES.iter().copied().filter(|t| !TEXT_TYPES.contains(t)).collect();
        assert_eq!(extra, ["date", "datetime-local", "month", "week", "time"]);
        for t in TEXT_TYPES.iter().chain(IMPLICIT_SUBMISSION_TYPES) {
            assert_eq!(*t, t.to_ascii_lowercase(), "lists are lower case");
        }
    }

    #[test]
    fn membership_ignores_case() {
        assert!(is_text_type("EMAIL") && is_text_type("") && is_text_type("password"));
        assert!(!is_text_type("date") && !is_text_type("checkbox") && !is_text_type("textarea"));
        assert!(blocks_implicit_submission("Date") && blocks_implicit_submission("text"));
        assert!(!blocks_implicit_submission("submit") && !blocks_implicit_submission("radio"));
    }
}
