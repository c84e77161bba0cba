//! What a drop-down `<select>` offers and an input's `<datalist>` suggests,
//! for the snapshot (`shared::snapshot::Choices`; the format is in that
//! module's "Choices").
//!
//! Labels are the options' `label` (the label attribute, else the text),
//! whitespace collapsed as the facts the classifier reads
//! (`facts::options_of`) collapse them, cut to the name limit. Options with
//! `hidden` (or in a hidden `<optgroup>`) are not listed nor counted;
//! disabled ones (their own attribute or their group's) are listed marked.
//! Outside a scoped snapshot at most `MAX_OPTIONS_SHOWN` are listed: the
//! first ones, and the current one in the last place when it comes later,
//! so a 5,000-option select costs that many reads plus one count. Scoped to
//! the element: up to `MAX_OPTIONS_SEEN` (those `browser_select_option`
//! chooses from), as long as their labels fit in the request's `max_chars`.

use js_sys::Reflect;
use shared::limits::{MAX_NAME_CHARS, MAX_OPTIONS_SHOWN, truncate_chars};
use shared::risk::MAX_OPTIONS_SEEN;
use shared::snapshot::{Choice, Choices};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::Element;

use crate::dom::{self, attr, collapse, has};

/// How many choices to list: the cap, or everything a scoped snapshot may
/// hold.
fn limit(full: bool) -> usize {
    if full { MAX_OPTIONS_SEEN } else { MAX_OPTIONS_SHOWN }
}

fn label_of(o: &JsValue, prop: &'static str) -> String {
    let mut label = collapse(&dom::prop(o, prop).as_string().unwrap_or_default(), MAX_NAME_CHARS * 4);
    truncate_chars(&mut label, MAX_NAME_CHARS);
    label
}

/// The options of a drop-down select. `masked`: its value is masked (a
/// sensitive field), so no option is marked as the current one.
pub fn of_select(el: &Element, full: bool, max_chars: usize, masked: bool) -> Option<Box<Choices>> {
    let opts = dom::prop(el, "options");
    let n = dom::prop_f64(&opts, "length").unwrap_or(0.0) as u32;
    if n == 0 {
        return None;
    }
    // Compared as f64: an f64 → i64 conversion is one wasm2js cannot lower.
    let selected = dom::prop_f64(el, "selectedIndex").unwrap_or(-1.0);
    let cap = limit(full);
    let mut out = Choices { scope_lists_more: !full, ..Choices::default() };
    let mut group_el: Option<Element> = None;
    let mut chars = 0usize;
    // Visible options seen, and how many of them when the last was listed.
    let mut seen = 0usize;
    let mut listed_at = 0usize;
    let mut cut = false;
    for i in 0..n {
        let o = Reflect::get_u32(&opts, i).unwrap_or(JsValue::UNDEFINED);
        // Not `dyn_ref`: options of a frame fail the top realm's instanceof.
        if !o.is_object() {
            continue;
        }
        let opt: &Element = o.unchecked_ref();
        let parent = opt.parent_element().filter(|p| p.local_name() == "optgroup");
        if has(opt, "hidden") || parent.as_ref().is_some_and(|p| has(p, "hidden")) {
            continue;
        }
        seen += 1;
        if out.items.len() >= cap {
            cut = true;
            break;
        }
        let is_current = f64::from(i) == selected;
        // The last place waits for the current option when it comes later.
        let last = out.items.len() + 1 == cap;
        if last && !is_current && selected > f64::from(i) {
            continue;
        }
        let label = label_of(&o, "label");
        chars += label.chars().count() + 4;
        if full && chars > max_chars.max(shared::snapshot::MIN_PAGE_CHARS) {
            cut = true;
            break;
        }
        let group = match &parent {
            None => 0,
            Some(p) => {
                if group_el.as_ref() != Some(p) {
                    let mut g = collapse(&attr(p, "label").unwrap_or_default(), MAX_NAME_CHARS * 4);
                    truncate_chars(&mut g, MAX_NAME_CHARS);
                    out.groups.push(g);
                    group_el = Some(p.clone());
                }
                out.groups.len().min(usize::from(u16::MAX)) as u16
            }
        };
        out.items.push(Choice {
            label,
            selected: is_current && !masked,
            disabled: dom::matches(opt, ":disabled"),
            group,
            gap: listed_at + 1 < seen,
        });
        listed_at = seen;
    }
    // Cut short: the visible options are all of them but the hidden ones
    // (one query, only for long lists).
    let visible = if cut {
        let hidden = el.query_selector_all("option[hidden], optgroup[hidden] > option").map_or(0, |l| l.length());
        n.saturating_sub(hidden) as usize
    } else {
        seen
    };
    out.more = visible.saturating_sub(out.items.len()) as u32;
    Some(Box::new(out))
}

/// The suggestions of an input's `<datalist>`: the values of its enabled,
/// non-hidden options (what typing one of them enters).
pub fn of_datalist(el: &Element, full: bool, max_chars: usize) -> Option<Box<Choices>> {
    let list = dom::prop(el, "list");
    if list.is_null() || list.is_undefined() {
        return None;
    }
    let opts = dom::prop(&list, "options");
    let n = (dom::prop_f64(&opts, "length").unwrap_or(0.0) as u32).min(MAX_OPTIONS_SEEN as u32);
    let cap = limit(full);
    let mut out = Choices { suggestions: true, scope_lists_more: !full, ..Choices::default() };
    let mut chars = 0usize;
    for i in 0..n {
        let o = Reflect::get_u32(&opts, i).unwrap_or(JsValue::UNDEFINED);
        // Not `dyn_ref`: options of a frame fail the top realm's instanceof.
        if !o.is_object() {
            continue;
        }
        let opt: &Element = o.unchecked_ref();
        if has(opt, "hidden") || dom::prop_bool(&o, "disabled") {
            continue;
        }
        let mut value = label_of(&o, "value");
        if value.is_empty() {
            value = label_of(&o, "label");
        }
        if value.is_empty() {
            continue;
        }
        chars += value.chars().count() + 4;
        if out.items.len() >= cap || (full && chars > max_chars.max(shared::snapshot::MIN_PAGE_CHARS)) {
            out.more += 1;
            continue;
        }
        out.items.push(Choice { label: value, ..Choice::default() });
    }
    (!out.items.is_empty()).then(|| Box::new(out))
}
