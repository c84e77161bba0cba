//! What a control paints: each character of its text with its box and
//! whether it paints where the person sees the control
//! (`shared::risk::Glyph`), read from the live layout; the reading is
//! `shared::risk::paint::read_painted`'s (pure, table-tested).
//!
//! A character does not paint when its element is not rendered or is
//! invisible (`checkVisibility` with `opacityProperty` and
//! `visibilityProperty`), when its text is transparent (without a
//! `text-shadow` to draw it) or has the colour of the background behind
//! it, when an element between it and the control has a `clip-path` (or a
//! `clip` while positioned), when it is outside an element that clips its
//! overflow, when it is positioned (absolute or fixed) and drawn outside
//! the control, when it is off the document (left of or above the
//! origin), or when its box is too small to read (less than half a pixel
//! wide or 4 px high: `font-size: 0`, a negative `letter-spacing` that
//! makes the next letter cover it).

use js_sys::{Object, Reflect};
use shared::risk::PaintTrick;
use shared::risk::paint::{Glyph, painted_text_to_report, read_painted};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{CssStyleDeclaration, Element, Node, Window};

use crate::dom::{self, call};

/// Characters read per control.
const MAX_GLYPHS: usize = 400;
/// Elements under a control looked at.
const MAX_ELEMENTS: usize = 200;

/// A box in client coordinates.
#[derive(Clone, Copy)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Rect {
    fn of(v: &JsValue) -> Rect {
        let n = |k: &'static str| dom::prop_f64(v, k).unwrap_or(0.0);
        Rect { x: n("left"), y: n("top"), w: n("width"), h: n("height") }
    }

    fn contains(&self, x: f64, y: f64, slack: f64) -> bool {
        x >= self.x - slack && x <= self.x + self.w + slack && y >= self.y - slack && y <= self.y + self.h + slack
    }
}

/// What the elements above a text node (up to the control) do to it.
#[derive(Clone)]
struct Above {
    hidden: bool,
    positioned: bool,
    clips: Vec<Rect>,
    background: Option<[u8; 4]>,
    /// The text colour (inherited by its text) cannot be seen.
    text_hidden: bool,
}

struct Walk {
    win: Window,
    range: JsValue,
    vis: JsValue,
    control: Option<Rect>,
    scroll: (f64, f64),
    glyphs: Vec<Glyph>,
    elements: usize,
    overrides: bool,
}

/// The control's painted text (when it reads otherwise than its DOM text)
/// and the tricks seen.
pub fn painted(el: &Element) -> (String, Vec<PaintTrick>) {
    let Some(win) = web_sys::window() else { return (String::new(), Vec::new()) };
    let Some(doc) = win.document() else { return (String::new(), Vec::new()) };
    let Ok(range) = call(&doc, "createRange", &[]) else { return (String::new(), Vec::new()) };
    let vis: Object = Object::create(JsValue::NULL.unchecked_ref::<Object>());
    for k in ["opacityProperty", "visibilityProperty", "contentVisibilityAuto"] {
        let _ = Reflect::set(&vis, &JsValue::from_str(k), &JsValue::TRUE);
    }
    let rect = Rect::of(&el.get_bounding_client_rect().into());
    let control = (rect.w > 0.0 && rect.h > 0.0).then_some(rect);
    let scroll = (win.scroll_x().unwrap_or(0.0), win.scroll_y().unwrap_or(0.0));
    let mut walk =
        Walk { win, range, vis: vis.into(), control, scroll, glyphs: Vec::new(), elements: 0, overrides: false };
    let above = Above {
        hidden: false,
        positioned: false,
        clips: Vec::new(),
        background: background_behind(&walk, el),
        text_hidden: false,
    };
    walk.element(el, &above);
    let (text, tricks) = read_painted(&walk.glyphs, walk.overrides);
    (painted_text_to_report(&walk.glyphs, &text), tricks)
}

/// The first opaque-ish background colour above `el` (outside it), white
/// when none is set.
fn background_behind(w: &Walk, el: &Element) -> Option<[u8; 4]> {
    let mut cur = el.parent_element();
    let mut steps = 0;
    while let Some(e) = cur {
        steps += 1;
        if steps > 100 {
            return None;
        }
        if let Some(s) = w.win.get_computed_style(&e).ok().flatten() {
            if s.get_property_value("background-image").unwrap_or_default() != "none" {
                return None;
            }
            if let Some(c) = rgba(&s.get_property_value("background-color").unwrap_or_default())
                && c[3] > 200
            {
                return Some(c);
            }
        }
        cur = e.parent_element();
    }
    Some([255, 255, 255, 255])
}

/// `rgb(r, g, b)` / `rgba(r, g, b, a)` as computed styles give them.
fn rgba(s: &str) -> Option<[u8; 4]> {
    let inner = s.strip_prefix("rgba(").or_else(|| s.strip_prefix("rgb("))?.strip_suffix(')')?;
    let parts: Vec<f64> = inner.split([',', ' ', '/']).filter(|p| !p.is_empty()).filter_map(css_number).collect();
    let (r, g, b) = (*parts.first()?, *parts.get(1)?, *parts.get(2)?);
    let a = parts.get(3).copied().unwrap_or(1.0);
    Some([r as u8, g as u8, b as u8, (a * 255.0).round() as u8])
}

/// A number as computed styles write it (`12`, `0.5`, `-3`, `1e-05`), read
/// as `str::parse::<f64>` reads it to the precision a colour needs; `None`
/// for anything else (`50%`, `none`, an empty string). Not `str::parse`:
/// its general algorithm is ~4 KB of WebAssembly that V8 compiled again in
/// every tab, for colours (BENCHMARKS.md, "Less code to tier up").
fn css_number(s: &str) -> Option<f64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (number, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let (mut mantissa, mut scale) = (0u64, 0i32);
    for (d, in_fraction) in whole.bytes().map(|d| (d, false)).chain(fraction.bytes().map(|d| (d, true))) {
        if !d.is_ascii_digit() {
            return None;
        }
        // Past 17 digits a digit no longer changes a colour.
        if mantissa < 10u64.pow(17) {
            mantissa = mantissa * 10 + u64::from(d - b'0');
            scale -= i32::from(in_fraction);
        } else {
            scale += i32::from(!in_fraction);
        }
    }
    if let Some(e) = exponent {
        let (sign, digits) = match e.as_bytes().first() {
            Some(b'-') => (-1, &e[1..]),
            Some(b'+') => (1, &e[1..]),
            _ => (1, e),
        };
        if digits.is_empty() || !digits.bytes().all(|d| d.is_ascii_digit()) {
            return None;
        }
        scale += sign * digits.bytes().fold(0i32, |n, d| (n * 10 + i32::from(d - b'0')).min(400));
    }
    // Both exact up to 2^53 and 10^22, so one rounding, as `parse` rounds.
    let m = mantissa as f64;
    let v = if scale >= 0 { m * 10f64.powi(scale) } else { m / 10f64.powi(-scale) };
    Some(if negative { -v } else { v })
}

fn close(a: [u8; 4], b: [u8; 4]) -> bool {
    (0..3).all(|i| a[i].abs_diff(b[i]) <= 12)
}

impl Walk {
    fn style(&self, el: &Element) -> Option<CssStyleDeclaration> {
        self.win.get_computed_style(el).ok().flatten()
    }

    fn element(&mut self, el: &Element, above: &Above) {
        self.elements += 1;
        if self.elements > MAX_ELEMENTS || self.glyphs.len() >= MAX_GLYPHS {
            return;
        }
        let tag = el.local_name();
        if matches!(tag.as_str(), "script" | "style" | "template" | "rt" | "rp" | "noscript") {
            return;
        }
        let mut here = above.clone();
        if let Some(s) = self.style(el) {
            let p = |k: &str| s.get_property_value(k).unwrap_or_default();
            if p("unicode-bidi").ends_with("override") {
                self.overrides = true;
            }
            // `display: contents` has no box of its own (checkVisibility
            // says false) but its text paints.
            if p("display") == "contents" {
                if matches!(p("visibility").as_str(), "hidden" | "collapse") {
                    here.hidden = true;
                }
            } else if let Ok(f) = call(el, "checkVisibility", std::slice::from_ref(&self.vis))
                && f.as_bool() == Some(false)
            {
                here.hidden = true;
            }
            let position = p("position");
            let positioned = position == "absolute" || position == "fixed";
            here.positioned |= positioned;
            if p("clip-path") != "none" || (positioned && p("clip") != "auto" && !p("clip").is_empty()) {
                here.hidden = true;
            }
            if p("overflow-x") != "visible" || p("overflow-y") != "visible" {
                here.clips.push(Rect::of(&el.get_bounding_client_rect().into()));
            }
            if p("background-image") != "none" {
                // An image or gradient: its colour is not known.
                here.background = None;
            } else if let Some(bg) = rgba(&p("background-color")).filter(|c| c[3] > 200) {
                here.background = Some(bg);
            }
            let fill = rgba(&p("-webkit-text-fill-color")).or_else(|| rgba(&p("color")));
            let shadow = p("text-shadow");
            if let Some(c) = fill
                && (shadow == "none" || shadow.is_empty())
                && (c[3] < 20 || here.background.is_some_and(|bg| close(bg, c)))
            {
                here.text_hidden = true;
            } else {
                here.text_hidden = false;
            }
        }
        let mut child = el.first_child();
        while let Some(n) = child {
            match n.node_type() {
                Node::ELEMENT_NODE => {
                    if let Some(e) = n.dyn_ref::<Element>() {
                        self.element(e, &here);
                    }
                }
                Node::TEXT_NODE => self.text(&n, &here),
                _ => {}
            }
            if self.glyphs.len() >= MAX_GLYPHS {
                return;
            }
            child = n.next_sibling();
        }
    }

    fn text(&mut self, node: &Node, above: &Above) {
        let data = node.node_value().unwrap_or_default();
        let mut offset: u32 = 0;
        for ch in data.chars() {
            if self.glyphs.len() >= MAX_GLYPHS {
                return;
            }
            let len = ch.len_utf16() as u32;
            let start = offset;
            offset += len;
            let r = self.glyph_box(node, start, start + len);
            let cx = r.x + r.w / 2.0;
            let cy = r.y + r.h / 2.0;
            let readable = if ch.is_whitespace() { true } else { r.w >= 0.5 && r.h >= 4.0 };
            let clipped = above.clips.iter().any(|c| !c.contains(cx, cy, 1.0));
            let moved_off =
                above.positioned && self.control.is_some_and(|c| !c.contains(cx, cy, 2.0f64.max(r.h / 2.0)));
            let off_document = r.x + r.w + self.scroll.0 < 0.0 || r.y + r.h + self.scroll.1 < 0.0;
            let paints = !above.hidden && !above.text_hidden && readable && !clipped && !moved_off && !off_document;
            self.glyphs.push(Glyph { ch, paints, x: r.x, y: r.y, w: r.w, h: r.h });
        }
    }

    fn glyph_box(&self, node: &Node, start: u32, end: u32) -> Rect {
        let set = call(&self.range, "setStart", &[JsValue::from(node.clone()), start.into()])
            .and_then(|_| call(&self.range, "setEnd", &[JsValue::from(node.clone()), end.into()]));
        match set.and_then(|_| call(&self.range, "getBoundingClientRect", &[])) {
            Ok(r) => Rect::of(&r),
            Err(_) => Rect { x: 0.0, y: 0.0, w: 0.0, h: 0.0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers of computed colours read as the standard parser reads them;
    /// what it refuses is refused.
    #[test]
    fn css_numbers_read_as_the_standard_parser_reads_them() {
        for s in [
            "0",
            "255",
            "12",
            "0.5",
            "0.1",
            "0.333333",
            "0.00392157",
            "127.5",
            "-3",
            "+4",
            ".5",
            "5.",
            "1e-05",
            "2.5E+2",
            "1e3",
            "007",
            "123456789012345678901",
        ] {
            assert_eq!(css_number(s), s.parse::<f64>().ok(), "{s}");
        }
        for s in ["", ".", "-", "50%", "none", "1e", "1e+", "e5", "1.2.3", "0x10", " 1", "1 ", "--1"] {
            assert_eq!(css_number(s), None, "{s}");
        }
    }

    #[test]
    fn computed_colours_are_read_with_their_alpha() {
        assert_eq!(rgba("rgb(12, 34, 56)"), Some([12, 34, 56, 255]));
        assert_eq!(rgba("rgba(255, 255, 255, 0.5)"), Some([255, 255, 255, 128]));
        assert_eq!(rgba("rgba(0, 0, 0, 0)"), Some([0, 0, 0, 0]));
        assert_eq!(rgba("rgb(1 2 3 / 0.2)"), Some([1, 2, 3, 51]));
        assert_eq!(rgba("color(srgb 1 0 0)"), None);
        assert_eq!(rgba("rgb(1, 2)"), None);
    }
}
