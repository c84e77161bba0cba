//! What a goal trace line may hold (`HOME/knowledge/traces.jsonl`): the
//! control's role and label with e-mail addresses and long numbers masked,
//! the op, the input *key*, and the outcome — never a value, never page
//! text beyond the label.

use serde::{Deserialize, Serialize};

use crate::limits::truncate_chars;

/// Days a trace line is kept.
pub const TRACE_RETENTION_DAYS: u64 = 90;

/// One step of a `browser_run_goal`, as written to the traces file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceLine {
    /// Seconds since the Unix epoch.
    pub at: u64,
    /// The op (`click`, `type`, …, `done`, or `none` for no decision).
    pub op: String,
    pub role: Option<String>,
    /// [`mask_label`] of the control's name.
    pub label: Option<String>,
    /// The caller's input key, never its value.
    pub input: Option<String>,
    /// `ok` or an error code.
    pub outcome: String,
}

/// `label` with e-mail addresses (`•@•`) and runs of four or more digits
/// (`••••`) masked, cut to 80 characters.
pub fn mask_label(label: &str) -> String {
    let mut out = Vec::new();
    for word in label.split(' ') {
        if word.contains('@') && word.split('@').all(|p| !p.is_empty()) {
            out.push("•@•".to_string());
            continue;
        }
        let mut w = String::new();
        let mut digits = String::new();
        let flush = |digits: &mut String, w: &mut String| {
            let n = digits.chars().filter(char::is_ascii_digit).count();
            w.push_str(if n >= 4 { "••••" } else { digits.as_str() });
            digits.clear();
        };
        for c in word.chars() {
            // Digits with the separators of card and phone numbers.
            if c.is_ascii_digit() || (!digits.is_empty() && matches!(c, '-' | '.' | '/')) {
                digits.push(c);
            } else {
                flush(&mut digits, &mut w);
                w.push(c);
            }
        }
        flush(&mut digits, &mut w);
        out.push(w);
    }
    let mut s = out.join(" ");
    truncate_chars(&mut s, 80);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABELS: &[(&str, &str, &str)] = &[
        ("plain label", "Save changes", "Save changes"),
        ("e-mail", "Send to ada@example.com now", "Send to •@• now"),
        ("card number", "Card 4111-1111-1111-1111", "Card ••••"),
        ("phone", "Call 0123456789", "Call ••••"),
        ("short numbers stay", "Page 2 of 12", "Page 2 of 12"),
        ("year-like four digits", "Invoice 2024", "Invoice ••••"),
        ("digits inside a word", "ref12345x", "ref••••x"),
    ];

    #[test]
    fn labels_are_masked() {
        for (name, label, want) in LABELS {
            assert_eq!(mask_label(label), *want, "{name}");
        }
        assert_eq!(mask_label(&"a".repeat(500)).chars().count(), 80);
    }
}
