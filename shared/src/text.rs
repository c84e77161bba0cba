//! Text from pages and agents, made safe to show: one rule for which
//! characters can reorder or hide the text around them, used wherever such
//! a string reaches the person or the agent (snapshots, summaries, hand-off
//! reasons, client labels, reasons, download names).
//!
//! Bidirectional controls (the embeddings and overrides U+202A–U+202E, the
//! isolates U+2066–U+2069, the marks U+200E/U+200F and U+061C) make a
//! renderer draw the characters after them in another order: an agent's
//! hand-off reason ending in U+202E would draw the words after it *after
//! the closing quote*, in Chaperone's voice. They are removed by
//! [`strip_bidi`]. The extension's pages also draw every such string in an
//! isolate (`<bdi>`, see `extension/worker/src/ui.rs`), so even letters of a
//! right-to-left script cannot move the quotes around them.

use std::borrow::Cow;

/// The bidirectional controls: LRE, RLE, PDF, LRO, RLO (U+202A–U+202E),
/// LRI, RLI, FSI, PDI (U+2066–U+2069), LRM, RLM (U+200E, U+200F) and the
/// Arabic letter mark (U+061C).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// The overrides that draw letters in the reverse of their order
/// (LRO U+202D, RLO U+202E): a sign that a page wants the person to read
/// something else than its text says.
pub fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202D}' | '\u{202E}')
}

/// Characters that draw nothing or rearrange what is drawn: the
/// [bidi controls](is_bidi_control), zero-width spaces and joiners, word
/// joiner and invisible operators (U+2060–U+206F), BOM, interlinear
/// annotation marks, soft hyphen, Mongolian vowel separator and tag
/// characters.
pub fn is_invisible_format(c: char) -> bool {
    is_bidi_control(c)
        || matches!(c,
            '\u{200B}'..='\u{200F}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{00AD}'
            | '\u{180E}'
            | '\u{E0000}'..='\u{E007F}'
        )
}

/// `s` without its bidirectional controls ([`is_bidi_control`]); borrowed
/// when it has none.
pub fn strip_bidi(s: &str) -> Cow<'_, str> {
    if s.chars().any(is_bidi_control) {
        Cow::Owned(s.chars().filter(|c| !is_bidi_control(*c)).collect())
    } else {
        Cow::Borrowed(s)
    }
}

/// Every string in `v` (keys included) without bidi controls: a tool
/// result's data, before it reaches the agent.
pub fn strip_bidi_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(t) = strip_bidi(s) {
                *s = t;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_bidi_json),
        Value::Object(o) => {
            if o.keys().any(|k| k.chars().any(is_bidi_control)) {
                let old = std::mem::take(o);
                for (k, mut x) in old {
                    strip_bidi_json(&mut x);
                    o.insert(strip_bidi(&k).into_owned(), x);
                }
            } else {
                o.values_mut().for_each(strip_bidi_json);
            }
        }
        _ => {}
    }
}

/// One piece of a line built by Chaperone around quoted strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Span<'a> {
    /// Chaperone's own words.
    Ours(&'a str),
    /// A quoted string from a page or an agent, without its quotes and with
    /// `\"` and `\\` unescaped.
    Quoted(String),
}

/// Splits a line such as `click button "Save" — agent's intent: "…"`
/// into Chaperone's words and the quoted strings (between `"…"`, with `\"`
/// inside as [`crate::snapshot::quote`] escapes it, or between `“…”`), so
/// that each quoted string can be drawn in an isolate of its own. The
/// quotes stay with Chaperone's words. An unclosed quote runs to the end.
pub fn quoted_spans(line: &str) -> Vec<Span<'_>> {
    let mut out = Vec::new();
    let mut ours_from = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let close = match c {
            '"' => '"',
            '\u{201C}' => '\u{201D}',
            _ => continue,
        };
        let start = i + c.len_utf8();
        if start > ours_from {
            out.push(Span::Ours(&line[ours_from..start]));
        }
        let mut quoted = String::new();
        let mut end = line.len();
        while let Some((j, d)) = chars.next() {
            if d == '\\' && close == '"' {
                match chars.peek() {
                    Some(&(_, e @ ('"' | '\\'))) => {
                        quoted.push(e);
                        chars.next();
                    }
                    _ => quoted.push(d),
                }
                continue;
            }
            if d == close {
                end = j;
                break;
            }
            quoted.push(d);
        }
        out.push(Span::Quoted(quoted));
        ours_from = end;
    }
    if ours_from < line.len() {
        out.push(Span::Ours(&line[ours_from..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_are_removed_and_nothing_else() {
        let cases: &[(&str, &str, &str)] = &[
            ("plain", "sign in to the bank", "sign in to the bank"),
            (
                "rlo",
                "ok\u{202E} knab ruoy si egap siht deifirev enorepahC",
                "ok knab ruoy si egap siht deifirev enorepahC",
            ),
            ("lro and pdf", "a\u{202D}b\u{202C}c", "abc"),
            ("embeddings", "\u{202A}x\u{202B}y", "xy"),
            ("isolates", "\u{2066}a\u{2067}b\u{2068}c\u{2069}", "abc"),
            ("marks", "a\u{200E}b\u{200F}c\u{061C}d", "abcd"),
            ("hebrew stays", "שלום world", "שלום world"),
            ("arabic stays", "حذف الحساب", "حذف الحساب"),
            ("zwj emoji stays", "👩\u{200D}💻", "👩\u{200D}💻"),
            ("persian zwnj stays", "می\u{200C}خواهم", "می\u{200C}خواهم"),
        ];
        for (name, input, want) in cases {
            assert_eq!(strip_bidi(input), *want, "{name}");
            assert!(!strip_bidi(input).chars().any(is_bidi_control), "{name}");
        }
        assert!(matches!(strip_bidi("nothing to do"), Cow::Borrowed(_)));
    }

    #[test]
    fn every_bidi_control_is_invisible_and_overrides_are_controls() {
        for c in ('\u{0}'..='\u{10FFFF}').filter(|c| is_bidi_control(*c)) {
            assert!(is_invisible_format(c), "{c:?}");
        }
        for c in ['\u{202D}', '\u{202E}'] {
            assert!(is_bidi_override(c) && is_bidi_control(c));
        }
        assert!(!is_bidi_override('\u{200F}'));
    }

    #[test]
    fn json_strings_lose_their_bidi_controls() {
        let mut v = serde_json::json!({
            "name": "Save\u{202E}evaS",
            "list": ["a\u{2066}b", 3, null, {"k\u{200F}": "\u{061C}x"}],
            "n": 1.5,
        });
        strip_bidi_json(&mut v);
        assert_eq!(v, serde_json::json!({ "name": "SaveevaS", "list": ["ab", 3, null, {"k": "x"}], "n": 1.5 }));
    }

    #[test]
    fn lines_split_into_our_words_and_quoted_strings() {
        use Span::*;
        let q = |s: &str| Quoted(s.to_string());
        let cases: Vec<(&str, &str, Vec<Span>)> = vec![
            ("no quotes", "submits a form", vec![Ours("submits a form")]),
            (
                "summary with intent",
                "click button \"Save\" — agent's intent: \"tidy up\"",
                vec![Ours("click button \""), q("Save"), Ours("\" — agent's intent: \""), q("tidy up"), Ours("\"")],
            ),
            ("escaped quote inside", r#"x "a\"b\\c" y"#, vec![Ours("x \""), q("a\"b\\c"), Ours("\" y")]),
            (
                "curly quotes",
                "The agent says: \u{201C}go\u{201D}",
                vec![Ours("The agent says: \u{201C}"), q("go"), Ours("\u{201D}")],
            ),
            ("unclosed", "name \"abc", vec![Ours("name \""), q("abc")]),
            ("empty quote", "\"\"", vec![Ours("\""), q(""), Ours("\"")]),
            ("lone backslash", r#""a\b""#, vec![Ours("\""), q("a\\b"), Ours("\"")]),
        ];
        for (name, line, want) in cases {
            assert_eq!(quoted_spans(line), want, "{name}");
        }
    }
}
