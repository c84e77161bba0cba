//! What is painted, and what acts through something else
//! (see "What the person sees" in the module docs of [`super`]).
//!
//! A page can make the person read "Delete account" on a control whose
//! text, in the DOM's order, says something else: letters drawn in reverse
//! (`unicode-bidi: bidi-override`, U+202E), letters that do not paint
//! (`font-size: 0`, transparent, moved off the control) between the real
//! ones, words put in another order (flex `order`, `row-reverse`,
//! positioned letters, a mirroring transform). The content script reads
//! what paints — each letter's box, in the order it is drawn — and reports
//! it as [`ElementFacts::painted_text`] when it differs from the DOM's
//! text, with the tricks it saw as [`PaintTrick`]s. Each trick is itself a
//! reason to ask (high: `confirm` by default, refused under
//! `high = "deny"`), and the painted text is classified like the name.
//!
//! Some controls act through another element: a `<label>` activates its
//! control (a hidden submit button submits its form), and a link with
//! `ping` also posts to the ping URLs. The content script reports the
//! label's control's form facts ([`ElementFacts::via_label`]) and the ping
//! URLs ([`ElementFacts::pings`]); the ping URLs go through the same target
//! rules as a form that posts.

use serde::{Deserialize, Serialize};

use super::{ElementFacts, Hits, RiskLevel, action_word, keyword_rules, page_kinds, short, shown_path};

/// A way the page paints a control's text otherwise than its DOM says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaintTrick {
    /// `unicode-bidi: bidi-override` or `isolate-override` (`<bdo>`) on the
    /// control or inside it, or an override character (U+202D, U+202E) in
    /// its text: letters drawn in the reverse of their order.
    BidiOverride,
    /// Letters of one word, in a left-to-right script, painted out of
    /// their DOM order (a later letter to the left of an earlier one on its
    /// line, or on a line above it): a word's parts swapped by flex or grid
    /// `order`, `row-reverse` or positioning, a mirroring transform, an
    /// override. (Whole words drawn in another order are not a trick on
    /// their own — a badge floated right is ordinary — but the painted
    /// text is then read in the order drawn and judged.)
    Reordered,
    /// Letters that do not paint between letters that do, inside one word
    /// (`font-size: 0`, transparent or background-coloured, `opacity: 0`,
    /// `visibility: hidden`, clipped, or moved off the control).
    HiddenLetters,
}

impl PaintTrick {
    /// The reason given to the person and the agent.
    pub fn reason(self) -> &'static str {
        match self {
            PaintTrick::BidiOverride => "the page draws this control's letters in reverse (a bidi override)",
            PaintTrick::Reordered => "the page paints this control's letters in another order than its text",
            PaintTrick::HiddenLetters => "the page hides letters inside this control's words",
        }
    }
}

/// One character of a control's text as the content script found it, in
/// DOM order: its box (client coordinates) and whether it paints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Glyph {
    pub ch: char,
    /// It paints where the person sees the control: rendered, visible,
    /// not transparent or background-coloured, not clipped away, not
    /// moved off the control, big enough to read.
    pub paints: bool,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Glyph {
    fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    fn cy(&self) -> f64 {
        self.y + self.h / 2.0
    }
}

/// Letters of a right-to-left script (Hebrew, Arabic, Syriac, Thaana,
/// N'Ko and their presentation forms): between two of those, or between
/// a Latin letter and one of those, the painted order is the reader's.
fn is_rtl_letter(c: char) -> bool {
    c.is_alphabetic() && matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF)
}

/// A letter whose order the check compares: alphanumeric, not
/// right-to-left.
fn is_ltr_letter(c: char) -> bool {
    c.is_alphanumeric() && !is_rtl_letter(c)
}

/// What a control paints, read from its glyphs: the tricks seen and the
/// text as painted (the painting letters; in the order they are drawn —
/// line by line, left to right — when their order differs from the DOM's).
/// `overrides`: the content script saw `unicode-bidi: *-override` on the
/// control or inside it.
pub fn read_painted(glyphs: &[Glyph], overrides: bool) -> (String, Vec<PaintTrick>) {
    let mut tricks = Vec::new();
    if overrides || glyphs.iter().any(|g| crate::text::is_bidi_override(g.ch)) {
        tricks.push(PaintTrick::BidiOverride);
    }
    // Letters that do not paint inside a word: a painting letter before
    // and after, no white space between.
    let hidden_inside = glyphs.iter().enumerate().any(|(i, g)| {
        if g.paints || !g.ch.is_alphanumeric() {
            return false;
        }
        let side = |mut it: Box<dyn Iterator<Item = &Glyph> + '_>| {
            it.find(|o| o.ch.is_whitespace() || (o.paints && o.ch.is_alphanumeric())).is_some_and(|o| o.paints)
        };
        side(Box::new(glyphs[..i].iter().rev())) && side(Box::new(glyphs[i + 1..].iter()))
    });
    if hidden_inside {
        tricks.push(PaintTrick::HiddenLetters);
    }
    // Consecutive painting left-to-right letters with no right-to-left
    // letter between them must be drawn left to right, or on a later line.
    // Out of order anywhere: the text is read as drawn. Out of order inside
    // one word (two letters, no white space between them in the DOM): a
    // trick — no ordinary layout draws a word's letters backwards, while a
    // badge floated to the right of its label is ordinary.
    let (mut reordered, mut inside_word) = (false, false);
    let mut prev: Option<(&Glyph, bool)> = None;
    let mut space_since = false;
    for g in glyphs {
        if is_rtl_letter(g.ch) {
            prev = None;
            continue;
        }
        if g.ch.is_whitespace() {
            space_since = true;
        }
        if !g.paints || !is_ltr_letter(g.ch) {
            continue;
        }
        if let Some((p, _)) = prev {
            let overlap = (p.y + p.h).min(g.y + g.h) - p.y.max(g.y);
            let same_line = overlap >= 0.5 * p.h.min(g.h);
            if (same_line && g.cx() < p.cx() - 1.0) || (!same_line && g.cy() < p.y) {
                reordered = true;
                if !space_since && p.ch.is_alphabetic() && g.ch.is_alphabetic() {
                    inside_word = true;
                }
            }
        }
        prev = Some((g, true));
        space_since = false;
    }
    if inside_word {
        tricks.push(PaintTrick::Reordered);
    }
    let text = if reordered { visual_text(glyphs) } else { dom_order_text(glyphs, true) };
    (text, tricks)
}

/// The painting glyphs in DOM order (`only_painting`), or all of them;
/// white space collapsed.
fn dom_order_text(glyphs: &[Glyph], only_painting: bool) -> String {
    let s: String = glyphs
        .iter()
        .filter(|g| g.ch.is_whitespace() || g.paints || !only_painting)
        .map(|g| if g.ch.is_whitespace() { ' ' } else { g.ch })
        .collect();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The painting glyphs line by line (top to bottom), each line left to
/// right; a space where a gap is wider than a fifth of the letters' height.
fn visual_text(glyphs: &[Glyph]) -> String {
    let mut letters: Vec<&Glyph> = glyphs.iter().filter(|g| g.paints && !g.ch.is_whitespace()).collect();
    letters.sort_by(|a, b| a.cy().total_cmp(&b.cy()));
    let mut lines: Vec<Vec<&Glyph>> = Vec::new();
    for g in letters {
        match lines.last_mut() {
            Some(line) if line.iter().any(|o| g.cy() >= o.y && g.cy() <= o.y + o.h) => line.push(g),
            _ => lines.push(vec![g]),
        }
    }
    let mut out = String::new();
    for mut line in lines {
        line.sort_by(|a, b| a.cx().total_cmp(&b.cx()));
        if !out.is_empty() {
            out.push(' ');
        }
        let mut last: Option<&Glyph> = None;
        for g in line {
            if let Some(l) = last
                && g.x - (l.x + l.w) > 0.2 * g.h.min(l.h)
            {
                out.push(' ');
            }
            out.push(g.ch);
            last = Some(g);
        }
    }
    out
}

/// The painted text to report ([`ElementFacts::painted_text`]): empty when
/// it reads like the DOM's text of the same glyphs (same words) or paints
/// nothing.
pub fn painted_text_to_report(glyphs: &[Glyph], painted: &str) -> String {
    let shown = super::normalize(painted);
    if shown.is_empty() || shown == super::normalize(&dom_order_text(glyphs, false)) {
        return String::new();
    }
    let mut s = painted.to_string();
    crate::limits::truncate_chars(&mut s, crate::limits::MAX_NAME_CHARS);
    s
}

/// Tricks, the painted text, and the label's and pings' targets.
pub(super) fn paint_rules(el: &ElementFacts, hits: &mut Hits) {
    for t in &el.paint_tricks {
        hits.add(RiskLevel::High, t.reason());
    }
    if !el.painted_text.trim().is_empty() {
        keyword_rules(&format!("painted text \"{}\"", short(&el.painted_text)), &el.painted_text, Some(el), hits);
    }
    if el.via_label && el.is_submit_button && !el.form_is_search {
        hits.add(RiskLevel::High, "a label for a submit button: clicking it submits the form");
    }
    for ping in &el.pings {
        if let Some(w) = action_word(ping) {
            hits.add(RiskLevel::High, format!("link pings \"{}\" (\"{w}\" acts when loaded)", shown_path(ping)));
        }
        // A ping is a POST: like a form that posts there.
        let (payment, account) = page_kinds(ping);
        if let Some(p) = payment {
            hits.add(RiskLevel::High, format!("link pings a payment page (\"{p}\" in \"{}\")", shown_path(ping)));
        }
        if let Some(p) = account {
            hits.add(
                RiskLevel::High,
                format!("link pings an account/security page (\"{p}\" in \"{}\")", shown_path(ping)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::risk::{ActionKind, classify};

    fn button(name: &str) -> ElementFacts {
        ElementFacts { role: "button".into(), name: name.into(), ..Default::default() }
    }

    #[test]
    fn painted_tricks_and_indirect_targets_ask() {
        let page = "https://mail.example.test/drafts";
        let with = |f: &dyn Fn(&mut ElementFacts)| {
            let mut el = button("tnuocca eteleD");
            f(&mut el);
            el
        };
        // (case, facts, expected risk, a reason that must be given)
        let cases: Vec<(&str, ElementFacts, RiskLevel, &str)> = vec![
            ("reversed text alone reads harmless", button("tnuocca eteleD"), RiskLevel::Low, ""),
            (
                "bidi override paints Delete account",
                with(&|e| {
                    e.paint_tricks = vec![PaintTrick::BidiOverride, PaintTrick::Reordered];
                    e.painted_text = "Delete account".into();
                }),
                RiskLevel::High,
                "painted text \"Delete account\" matches \"delete\"",
            ),
            (
                "a trick on a harmless text still asks",
                {
                    let mut e = button("Save");
                    e.paint_tricks = vec![PaintTrick::Reordered];
                    e.painted_text = "evaS".into();
                    e
                },
                RiskLevel::High,
                "in another order than its text",
            ),
            (
                "hidden letters",
                {
                    let mut e = button("Dxexlxextxe account");
                    e.paint_tricks = vec![PaintTrick::HiddenLetters];
                    e.painted_text = "Delete account".into();
                    e
                },
                RiskLevel::High,
                "hides letters inside",
            ),
            (
                "painted text with no trick is classified",
                {
                    let mut e = button("Keep");
                    e.painted_text = "Delete account".into();
                    e
                },
                RiskLevel::High,
                "painted text \"Delete account\"",
            ),
            (
                "a label for a hidden submit button",
                ElementFacts {
                    role: "generic".into(),
                    name: "Continue".into(),
                    via_label: true,
                    is_submit_button: true,
                    in_form: true,
                    target: "https://mail.example.test/account/close".into(),
                    form_method: "post".into(),
                    ..Default::default()
                },
                RiskLevel::High,
                "a label for a submit button",
            ),
            (
                "a label for a checkbox is not a submit",
                ElementFacts {
                    role: "generic".into(),
                    name: "Remember me".into(),
                    via_label: true,
                    ..Default::default()
                },
                RiskLevel::Low,
                "",
            ),
            (
                "a ping to a deleting URL",
                ElementFacts {
                    role: "link".into(),
                    name: "Read more".into(),
                    target: "https://mail.example.test/news".into(),
                    pings: vec!["https://mail.example.test/account/delete".into()],
                    ..Default::default()
                },
                RiskLevel::High,
                "link pings \"/account/delete\"",
            ),
            (
                "a ping to an account page posts there",
                ElementFacts {
                    role: "link".into(),
                    name: "Read more".into(),
                    pings: vec!["https://mail.example.test/settings/account".into()],
                    ..Default::default()
                },
                RiskLevel::High,
                "link pings an account/security page",
            ),
            (
                "an analytics ping stays low",
                ElementFacts {
                    role: "link".into(),
                    name: "Read more".into(),
                    pings: vec!["https://stats.example.test/collect?e=click".into()],
                    ..Default::default()
                },
                RiskLevel::Low,
                "",
            ),
        ];
        for (case, el, risk, reason) in cases {
            let got = classify(&ActionKind::Click, Some(&el), page, None);
            assert_eq!(got.risk, risk, "{case}: {got:?}");
            if reason.is_empty() {
                assert!(got.reasons.is_empty(), "{case}: {got:?}");
            } else {
                assert!(got.reasons.iter().any(|r| r.contains(reason)), "{case}: no {reason:?} in {got:?}");
            }
        }
    }

    /// Glyphs of `text` laid out left to right, 10 px each, on one line
    /// starting at `x`; `hidden` marks which do not paint.
    fn line(text: &str, x: f64, y: f64) -> Vec<Glyph> {
        text.chars()
            .enumerate()
            .map(|(i, ch)| Glyph { ch, paints: true, x: x + 10.0 * i as f64, y, w: 10.0, h: 16.0 })
            .collect()
    }

    fn reversed(text: &str) -> Vec<Glyph> {
        // DOM order is `text`; each glyph is drawn mirrored: the last
        // character leftmost.
        let n = text.chars().count();
        text.chars()
            .enumerate()
            .map(|(i, ch)| Glyph { ch, paints: true, x: 10.0 * (n - 1 - i) as f64, y: 0.0, w: 10.0, h: 16.0 })
            .collect()
    }

    fn hide(mut g: Vec<Glyph>, which: &str) -> Vec<Glyph> {
        for (k, c) in which.chars().enumerate() {
            if c == 'x' {
                g[k].paints = false;
                g[k].w = 0.0;
            }
        }
        g
    }

    #[test]
    fn what_paints_is_read_in_the_order_it_is_drawn() {
        use PaintTrick::*;
        // Two words whose DOM order is swapped by flex `order`.
        let mut swapped = line("account", 70.0, 0.0);
        swapped.push(Glyph { ch: ' ', paints: true, x: 60.0, y: 0.0, w: 10.0, h: 16.0 });
        swapped.extend(line("Delete", 0.0, 0.0));
        // Flex `order` on the parts of one word: "ete account" + "Del".
        let mut split = line("ete account", 30.0, 0.0);
        split.extend(line("Del", 0.0, 0.0));
        // Column-reverse: the second word on the line above.
        let mut stacked = line("account", 0.0, 20.0);
        stacked.extend(line("Delete", 0.0, 0.0));
        // An Arabic button with a Latin brand name, drawn right to left.
        let mut arabic = vec![];
        for (i, ch) in "حذف".chars().enumerate() {
            arabic.push(Glyph { ch, paints: true, x: 200.0 - 10.0 * i as f64, y: 0.0, w: 10.0, h: 16.0 });
        }
        arabic.extend(line("Google", 100.0, 0.0));
        for (i, ch) in "و".chars().enumerate() {
            arabic.push(Glyph { ch, paints: true, x: 90.0 - 10.0 * i as f64, y: 0.0, w: 10.0, h: 16.0 });
        }
        arabic.extend(line("Drive", 0.0, 0.0));
        // Wrapped onto two lines in order.
        let mut wrapped = line("Delete ", 0.0, 0.0);
        wrapped.extend(line("account", 0.0, 20.0));
        // A count badge before its label in the DOM, floated to the right.
        let mut badge = line("3", 60.0, 0.0);
        badge.extend(line("Inbox", 0.0, 0.0));
        // Two words swapped with a space between them in the DOM.
        let mut words = line("account", 70.0, 0.0);
        words.push(Glyph { ch: ' ', paints: false, x: 0.0, y: 0.0, w: 0.0, h: 16.0 });
        words.extend(line("Delete", 0.0, 0.0));
        // A screen-reader-only word after the visible one.
        let sr_only = hide(line("Delete item", 0.0, 0.0), "       xxxx");
        // (case, glyphs, css override, painted text, tricks)
        type Case<'a> = (&'a str, Vec<Glyph>, bool, &'a str, Vec<PaintTrick>);
        let cases: Vec<Case> = vec![
            ("plain", line("Delete account", 0.0, 0.0), false, "Delete account", vec![]),
            ("css bidi override", reversed("tnuocca eteleD"), true, "Delete account", vec![BidiOverride, Reordered]),
            (
                "rlo character",
                {
                    let mut g = reversed("tnuocca eteleD");
                    g.insert(0, Glyph { ch: '\u{202E}', paints: false, x: 0.0, y: 0.0, w: 0.0, h: 16.0 });
                    g
                },
                false,
                "Delete account",
                vec![BidiOverride, Reordered],
            ),
            // Words with a space between them: read as drawn, no trick.
            ("flex order of words", swapped, false, "Delete account", vec![]),
            ("flex order inside a word", split, false, "Delete account", vec![Reordered]),
            ("column reverse", stacked, false, "Delete account", vec![Reordered]),
            ("mirrored", reversed("Save"), false, "evaS", vec![Reordered]),
            (
                "font-size 0 letters inside words",
                hide(line("Dxexlxextxe account", 0.0, 0.0), " x x x x x"),
                false,
                "Delete account",
                vec![HiddenLetters],
            ),
            ("screen-reader-only word", sr_only, false, "Delete", vec![]),
            ("arabic with a latin brand", arabic, false, "حذفGoogleوDrive", vec![]),
            ("wrapped", wrapped, false, "Delete account", vec![]),
            ("a badge floated right of its label", badge, false, "Inbox 3", vec![]),
            ("whole words swapped", words, false, "Delete account", vec![]),
            ("nothing paints", hide(line("ab", 0.0, 0.0), "xx"), false, "", vec![]),
        ];
        for (case, glyphs, css, want_text, want_tricks) in cases {
            let (text, tricks) = read_painted(&glyphs, css);
            assert_eq!((text.as_str(), &tricks), (want_text, &want_tricks), "{case}");
        }
    }

    #[test]
    fn the_painted_text_is_reported_only_when_it_reads_otherwise() {
        let plain = line("Delete account", 0.0, 0.0);
        assert_eq!(painted_text_to_report(&plain, "Delete account"), "");
        let flipped = reversed("tnuocca eteleD");
        assert_eq!(painted_text_to_report(&flipped, "Delete account"), "Delete account");
        let hidden = hide(line("Dxelete", 0.0, 0.0), " x");
        assert_eq!(painted_text_to_report(&hidden, "Delete"), "Delete");
        assert_eq!(painted_text_to_report(&hidden, ""), "");
    }

    #[test]
    fn tricks_cross_the_wire_by_name() {
        let t = serde_json::to_string(&[PaintTrick::BidiOverride, PaintTrick::Reordered, PaintTrick::HiddenLetters])
            .unwrap();
        assert_eq!(t, r#"["bidi_override","reordered","hidden_letters"]"#);
        assert!(serde_json::from_str::<PaintTrick>(r#""overlap""#).is_err());
    }
}
