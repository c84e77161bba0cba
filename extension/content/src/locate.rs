//! Finding a flow step's recorded element on the live page
//! (`PageRequest::Locate`; the rules are `shared::replay`, the order is
//! its module docs).
//!
//! This module only gathers: the visible elements of the document whose
//! role and accessible name are the recorded ones (any role but generic
//! when the descriptor does not know it), and for each locator in
//! order the visible elements it matches (`id`, `name`, a test-id
//! attribute of `shared::flow::TEST_ID_ATTRS`, `aria-label`, a CSS
//! selector, an XPath, an element's own text). `shared::replay::choose`
//! decides; the winner gets a ref (`crate::refs`) and its facts
//! (`crate::facts::resolve`), so the action then goes through the usual
//! gate on exactly that element.
//!
//! Bounds: at most [`MAX_SCAN`] elements are looked at per search, at most
//! [`MAX_HITS`] kept per locator; only the top document (not shadow roots
//! or frames). Selectors and XPaths are handed to the DOM's own matchers
//! (which evaluate nothing); a selector the DOM refuses matches nothing.
//! Nothing here reads page text beyond accessible names.

use shared::error::WireError;
use shared::flow::{Descriptor, Locator, TEST_ID_ATTRS};
use shared::limits::{MAX_NAME_CHARS, truncate_chars};
use shared::protocol::{CommandResult, Outcome};
use shared::replay::{Found, Located, MAX_SEEN, Missing, TargetSummary};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element};

use crate::dom::{self, Visibility};
use crate::name::{self, NameEnv, Pseudo};
use crate::{facts, refs, roles};

/// Elements looked at per role or text search.
const MAX_SCAN: u32 = 20_000;
/// Matches kept per locator (more only count as "several").
const MAX_HITS: usize = 16;

/// `locate`: the element for `target`, or what the page has instead.
pub fn locate(target: &Descriptor) -> Outcome {
    match find(target) {
        Ok(located) => Outcome::Ok(CommandResult::Located { located }),
        Err(e) => Outcome::Err(e),
    }
}

/// The elements found so far, by identity, with their role and name.
struct Pool<'a> {
    env: &'a NameEnv<'a>,
    elements: Vec<Element>,
    summaries: Vec<TargetSummary>,
}

impl Pool<'_> {
    fn index(&mut self, el: &Element) -> usize {
        if let Some(i) = self.elements.iter().position(|e| e == el) {
            return i;
        }
        self.elements.push(el.clone());
        self.summaries.push(summary(self.env, el));
        self.elements.len() - 1
    }
}

fn summary(env: &NameEnv, el: &Element) -> TargetSummary {
    let tag = el.local_name();
    let attrs = dom::Attrs::of(el);
    let role = roles::role_of(el, &tag, attrs).unwrap_or("generic").to_string();
    let mut name = name::accessible_name(env, el, &tag, &role, attrs);
    truncate_chars(&mut name, MAX_NAME_CHARS);
    TargetSummary { role, name }
}

fn shown(vis: &Visibility, el: &Element) -> bool {
    vis.check(el) && el.closest("[aria-hidden=true],[inert]").ok().flatten().is_none()
}

fn find(d: &Descriptor) -> Result<Located, WireError> {
    let doc = facts::document()?;
    let pseudo = Pseudo::scan(&doc);
    let env = NameEnv { pseudo: &pseudo };
    let vis = Visibility::new();
    let mut pool = Pool { env: &env, elements: Vec::new(), summaries: Vec::new() };

    // Role and name: every element of the recorded role (cheap: tag and
    // attributes), named only when the role fits. A descriptor that does
    // not know its role (an imported `aria/Name`) takes every element with
    // a role and that name, as Puppeteer's ARIA selector does; generic
    // elements have no role to name them by.
    let mut by_role_name = Vec::new();
    let mut named = Vec::new();
    let mut same_role = Vec::new();
    let any_role = !shared::replay::role_known(d) && !d.name.trim().is_empty();
    if !d.role.is_empty() || any_role {
        for el in all_elements(&doc) {
            let tag = el.local_name();
            let role = roles::role_of(&el, &tag, dom::Attrs::of(&el)).unwrap_or("generic");
            let fits = if any_role { !matches!(role, "generic" | "none" | "presentation") } else { role == d.role };
            if !fits || !shown(&vis, &el) {
                continue;
            }
            // Named here; pooled (a linear search) only when it matches.
            let live = summary(&env, &el);
            if !d.name.trim().is_empty() && shared::replay::same_name(&live.name, &d.name) {
                by_role_name.push(pool.index(&el));
                if named.len() < MAX_SEEN {
                    named.push(live);
                }
            } else if !any_role && same_role.len() < MAX_SEEN {
                same_role.push(live);
            }
        }
    }
    let mut by_locator = Vec::with_capacity(d.locators.len());
    for l in &d.locators {
        let hits: Vec<usize> =
            matches(&doc, l).into_iter().filter(|e| shown(&vis, e)).take(MAX_HITS).map(|e| pool.index(&e)).collect();
        by_locator.push(hits);
    }
    let found = Found { candidates: pool.summaries.clone(), by_role_name, by_locator };
    match shared::replay::choose(d, &found) {
        Ok(choice) => {
            let el = &pool.elements[choice.candidate];
            let changed = shared::replay::changed_target(d, &found, &choice);
            Ok(Located::Found {
                element_ref: refs::ref_for(el),
                element: Box::new(facts::resolve(el)?),
                via: choice.via,
                checked: checked(el),
                changed,
            })
        }
        Err(miss) => {
            let mut matched = Vec::new();
            for hits in &found.by_locator {
                for &i in hits {
                    let s = &found.candidates[i];
                    if matched.len() < MAX_SEEN && !matched.contains(s) {
                        matched.push(s.clone());
                    }
                }
            }
            let url = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
            Ok(Located::Missing {
                miss,
                seen: Box::new(Missing {
                    by_role_name: found.by_role_name.len() as u32,
                    named,
                    by_locator: found.by_locator.iter().map(|h| h.len() as u32).collect(),
                    matched,
                    same_role,
                    url: shared::flow::step_url(&url),
                }),
            })
        }
    }
}

/// The document's elements in tree order, at most [`MAX_SCAN`].
fn all_elements(doc: &Document) -> Vec<Element> {
    let Ok(list) = doc.query_selector_all("body *") else { return Vec::new() };
    (0..list.length().min(MAX_SCAN)).filter_map(|i| list.item(i).and_then(|n| n.dyn_into::<Element>().ok())).collect()
}

/// `[attr="value"]` with the value escaped for a CSS string.
fn attr_selector(attr: &str, value: &str) -> String {
    let mut s = format!("[{attr}=\"");
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                s.push('\\');
                s.push(c);
            }
            '\n' | '\r' | '\u{c}' => s.push_str(&format!("\\{:x} ", c as u32)),
            '\0' => s.push('\u{fffd}'),
            c => s.push(c),
        }
    }
    s.push_str("\"]");
    s
}

fn select_all(doc: &Document, selector: &str) -> Vec<Element> {
    let Ok(list) = doc.query_selector_all(selector) else { return Vec::new() };
    let n = list.length().min(MAX_SCAN);
    (0..n).filter_map(|i| list.item(i).and_then(|n| n.dyn_into::<Element>().ok())).collect()
}

/// The elements one locator matches, in tree order.
fn matches(doc: &Document, l: &Locator) -> Vec<Element> {
    match l {
        Locator::Id(v) => select_all(doc, &attr_selector("id", v)),
        Locator::Name(v) => select_all(doc, &attr_selector("name", v)),
        // Only the known test-id attributes: a stored flow cannot make the
        // page match on any attribute it likes.
        Locator::TestId { attr, value } if TEST_ID_ATTRS.contains(&attr.as_str()) => {
            select_all(doc, &attr_selector(attr, value))
        }
        Locator::TestId { .. } => Vec::new(),
        Locator::AriaLabel(v) => select_all(doc, &attr_selector("aria-label", v)),
        Locator::Css(v) => select_all(doc, v),
        Locator::XPath(v) => xpath(doc, v),
        Locator::Text(v) => by_text(doc, v),
    }
}

#[wasm_bindgen]
extern "C" {
    type XPathDoc;
    #[wasm_bindgen(method, catch, js_name = evaluate)]
    fn evaluate_js(
        this: &XPathDoc,
        expr: &str,
        context: &JsValue,
        resolver: &JsValue,
        kind: u16,
        result: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

/// `document.evaluate(expr)` as an ordered snapshot of elements.
fn xpath(doc: &Document, expr: &str) -> Vec<Element> {
    const ORDERED_NODE_SNAPSHOT_TYPE: u16 = 7;
    let d: &XPathDoc = doc.unchecked_ref();
    let Ok(result) = d.evaluate_js(expr, doc, &JsValue::NULL, ORDERED_NODE_SNAPSHOT_TYPE, &JsValue::NULL) else {
        return Vec::new();
    };
    let n = dom::prop_f64(&result, "snapshotLength").unwrap_or(0.0).min(f64::from(MAX_SCAN)) as u32;
    (0..n)
        .filter_map(|i| dom::call(&result, "snapshotItem", &[JsValue::from(i)]).ok())
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .collect()
}

/// The innermost elements whose own text (whitespace collapsed, case
/// ignored) is `text`.
fn by_text(doc: &Document, text: &str) -> Vec<Element> {
    let mut out: Vec<Element> = Vec::new();
    for el in all_elements(doc) {
        let own = dom::collapse(&el.text_content().unwrap_or_default(), 400);
        if !shared::replay::same_name(&own, text) {
            continue;
        }
        // A parent with the same text is replaced by its child.
        out.retain(|o| !o.contains(Some(&el)));
        out.push(el);
    }
    out
}

/// A checkbox's or radio's state.
fn checked(el: &Element) -> Option<bool> {
    let tag = el.local_name();
    if tag == "input" && matches!(roles::input_type(el).as_str(), "checkbox" | "radio") {
        return Some(dom::prop_bool(el, "checked"));
    }
    let role = dom::attr(el, "role").unwrap_or_default();
    if matches!(role.as_str(), "checkbox" | "radio" | "switch" | "menuitemcheckbox" | "menuitemradio") {
        return Some(dom::attr_is(el, "aria-checked", "true"));
    }
    None
}
