//! One-line summaries of page actions, masked for where they go
//! (docs/design.md, "Policy, approvals and audit" and "Secrets, sensitive
//! fields and files"): the approval window and the audit log show what will
//! be typed unless the target is a sensitive field; log lines never show a
//! typed literal at all.
//!
//! `click button "Delete account" [e12]`,
//! `type "••••" into textbox "API token" [e5], then press Enter`.

use crate::action::{Action, ScrollDirection};
use crate::sensitive::MASK;
use crate::snapshot::quote;

/// Longest typed literal shown in a summary (the rest is cut with `…`).
pub const MAX_SUMMARY_LITERAL_CHARS: usize = 60;

/// The element an action works on, as the summary names it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SummaryTarget<'a> {
    pub role: &'a str,
    pub name: &'a str,
    /// The agent's ref (`e12`).
    pub element_ref: &'a str,
}

/// What happens to values the agent supplied (typed text, option labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Literals {
    /// Shown, except into a sensitive field ([`MASK`]). For the approval
    /// window and the audit row.
    UnlessSensitive,
    /// Always [`MASK`]. For log lines, and for every summary written before
    /// the target is resolved (its sensitivity is not known yet).
    Masked,
}

fn literal(s: &str, hide: bool, out: &mut String) {
    if hide {
        out.push('"');
        out.push_str(MASK);
        out.push('"');
    } else {
        let mut cut = s.to_string();
        crate::limits::truncate_chars(&mut cut, MAX_SUMMARY_LITERAL_CHARS);
        quote(&cut, out);
    }
}

fn element(t: &SummaryTarget<'_>, out: &mut String) {
    if t.role.is_empty() {
        out.push_str("element");
    } else {
        out.push_str(t.role);
    }
    if !t.name.is_empty() {
        out.push(' ');
        quote(t.name, out);
    }
    if !t.element_ref.is_empty() {
        out.push_str(" [");
        out.push_str(t.element_ref);
        out.push(']');
    }
}

/// The summary of `action` on `target` (`None`: the page or the focused
/// element). `sensitive`: the target is a sensitive field.
pub fn summarize(action: &Action, target: Option<&SummaryTarget<'_>>, sensitive: bool, literals: Literals) -> String {
    let hide = sensitive || literals != Literals::UnlessSensitive;
    let mut out = String::new();
    let on = |prep: &str, out: &mut String| {
        if let Some(t) = target {
            out.push(' ');
            out.push_str(prep);
            out.push(' ');
            element(t, out);
        }
    };
    match action {
        Action::Click => {
            out.push_str("click");
            if let Some(t) = target {
                out.push(' ');
                element(t, &mut out);
            }
        }
        Action::Type { text, submit } => {
            out.push_str("type ");
            literal(text, hide, &mut out);
            on("into", &mut out);
            if *submit {
                out.push_str(", then press Enter");
            }
        }
        // A stored secret is named, never shown, wherever the summary goes.
        Action::TypeSecret { name, submit } => {
            out.push_str("type {secret:");
            out.push_str(name);
            out.push('}');
            on("into", &mut out);
            if *submit {
                out.push_str(", then press Enter");
            }
        }
        Action::SelectOption { values } => {
            out.push_str("select ");
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                literal(v, hide, &mut out);
            }
            on("in", &mut out);
        }
        Action::PressKey { key } => {
            out.push_str("press ");
            // Key names are not values, but a sensitive field hides even
            // which printable key went in.
            if hide && key.chars().count() == 1 {
                out.push_str(MASK);
            } else {
                let mut k = key.clone();
                crate::limits::truncate_chars(&mut k, 40);
                out.push_str(&k);
            }
            match target {
                Some(_) => on("on", &mut out),
                None => out.push_str(" on the focused element"),
            }
        }
        Action::Scroll { direction } => {
            out.push_str("scroll");
            match (direction, target) {
                (ScrollDirection::IntoView, Some(t)) => {
                    out.push(' ');
                    element(t, &mut out);
                    out.push_str(" into view");
                }
                (ScrollDirection::IntoView, None) => out.push_str(" into view"),
                (ScrollDirection::Up, _) => {
                    out.push_str(" up");
                    on("in", &mut out);
                }
                (ScrollDirection::Down, _) => {
                    out.push_str(" down");
                    on("in", &mut out);
                }
            }
        }
        Action::Hover => {
            out.push_str("hover over");
            if let Some(t) = target {
                out.push(' ');
                element(t, &mut out);
            }
        }
        Action::CloseTab => out.push_str("close a tab the agent did not open"),
        // Names, sizes and folders are the agent's and the disk's, not the
        // page's; each name is quoted (it may hold anything but `/`).
        Action::UploadFiles { files, .. } => {
            out.push_str("upload ");
            for (i, f) in files.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                crate::snapshot::quote(&f.name, &mut out);
                out.push_str(&format!(" ({}, from ", crate::files::human_size(f.size)));
                crate::snapshot::quote(&f.folder, &mut out);
                out.push_str(&format!(", sha256 {})", f.sha256));
            }
            on("into", &mut out);
        }
        Action::KeepDownload { name, mime, .. } => {
            out.push_str("download ");
            crate::snapshot::quote(name, &mut out);
            if !mime.is_empty() {
                out.push_str(" (");
                let mut m = mime.clone();
                crate::limits::truncate_chars(&mut m, 60);
                out.push_str(&m);
                out.push(')');
            }
            out.push_str(" into the download folder");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t<'a>(role: &'a str, name: &'a str, r: &'a str) -> SummaryTarget<'a> {
        SummaryTarget { role, name, element_ref: r }
    }

    #[test]
    fn summaries_name_the_action_and_the_element() {
        let b = t("button", "Delete account", "e12");
        assert_eq!(
            summarize(&Action::Click, Some(&b), false, Literals::UnlessSensitive),
            r#"click button "Delete account" [e12]"#
        );
        assert_eq!(
            summarize(&Action::Hover, Some(&b), false, Literals::Masked),
            r#"hover over button "Delete account" [e12]"#
        );
        assert_eq!(
            summarize(&Action::PressKey { key: "Enter".into() }, None, false, Literals::Masked),
            "press Enter on the focused element"
        );
        assert_eq!(
            summarize(&Action::Scroll { direction: ScrollDirection::Down }, None, false, Literals::Masked),
            "scroll down"
        );
        assert_eq!(
            summarize(&Action::Scroll { direction: ScrollDirection::IntoView }, Some(&b), false, Literals::Masked),
            r#"scroll button "Delete account" [e12] into view"#
        );
    }

    #[test]
    fn literals_are_masked_into_sensitive_fields_and_in_logs() {
        let f = t("textbox", "API token", "e5");
        let typed = Action::Type { text: "LITERAL-SECRET-123".into(), submit: true };
        let shown = summarize(&typed, Some(&f), true, Literals::UnlessSensitive);
        assert_eq!(shown, r#"type "••••" into textbox "API token" [e5], then press Enter"#);
        let q = t("searchbox", "Search", "e2");
        let typed = Action::Type { text: "red \"shoes\"".into(), submit: false };
        assert_eq!(
            summarize(&typed, Some(&q), false, Literals::UnlessSensitive),
            r#"type "red \"shoes\"" into searchbox "Search" [e2]"#
        );
        assert!(!summarize(&typed, Some(&q), false, Literals::Masked).contains("shoes"));
        let sel = Action::SelectOption { values: vec!["Delete".into(), "Archive".into()] };
        assert_eq!(
            summarize(&sel, Some(&t("combobox", "Actions", "e4")), false, Literals::UnlessSensitive),
            r#"select "Delete", "Archive" in combobox "Actions" [e4]"#
        );
        assert!(!summarize(&sel, None, false, Literals::Masked).contains("Delete"));
        let secret = Action::TypeSecret { name: "API_TOKEN".into(), submit: false };
        for sensitive in [true, false] {
            for literals in [Literals::UnlessSensitive, Literals::Masked] {
                assert_eq!(
                    summarize(&secret, Some(&f), sensitive, literals),
                    r#"type {secret:API_TOKEN} into textbox "API token" [e5]"#
                );
            }
        }
        let long = Action::Type { text: "x".repeat(500), submit: false };
        assert!(summarize(&long, None, false, Literals::UnlessSensitive).chars().count() < 80);
    }
}
