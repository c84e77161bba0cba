//! What the walk reads of every node, in one crossing into JS.
//!
//! The walk asks each node the same things: its type; for an element its
//! local name, whether it has attributes and any of the ARIA ones
//! ([`dom::Attrs`]), whether `checkVisibility()` passes, whether it hosts
//! an open shadow root and whether it has element children; for a text
//! node whether it holds more than whitespace. Asked one by one, that is
//! seven calls through the wasm-bindgen glue per element and two strings
//! copied into wasm memory (the local name, the text), which on a long
//! page cost more than the DOM reads themselves (BENCHMARKS.md, "Faster
//! walks"). [`facts`] asks them in one call that answers a packed
//! integer.
//!
//! The JS below only reads and packs; every decision stays in Rust. It is
//! the one piece of JS with logic in the content script, kept here next to
//! the Rust that decodes it (ARCHITECTURE.md, "Content script").
//!
//! A walk through children asks for them a step at a time ([`Step`]):
//! the next element or text with content, its facts read in the same
//! call, whitespace-only text and comments passed over in JS. Those are a
//! third of a typical page's nodes, and each cost three calls (the
//! sibling, its facts, dropping the handle).
//!
//! A shadow root is asked only of the elements that can host one: custom
//! elements and the few `attachShadow` accepts (the same list for
//! declarative shadow roots); the answer is kept with the name.
//!
//! Local names cross as small numbers: the JS side numbers each new name
//! it meets (at most [`MAX_TAGS`], after which it answers 0 and the name
//! is asked for the ordinary way), and this side learns the name the first
//! time it sees its number. Both tables live as long as the content
//! script and only grow by names the page uses.

use std::borrow::Cow;
use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use web_sys::{Element, Node};

use crate::dom::{self, Attrs, TagClass};

/// Distinct local names numbered; a page with more gets the rest by name.
const MAX_TAGS: u32 = 1_024;

#[wasm_bindgen(inline_js = r#"
const tags = new Map();
const hasContent = (text) => /[^ \t\n\f\r]/.test(text);
const hosts = new Set(['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5',
  'h6', 'header', 'main', 'nav', 'p', 'section', 'span']);
export function chaperoneNodeFacts(node, visibility, aria, maxTags) {
  const type = node.nodeType;
  if (type !== 1) {
    if (type !== 3) return 0;
    return hasContent(node.data) ? 2 : 3;
  }
  const name = node.localName;
  let entry = tags.get(name);
  if (entry === undefined) {
    entry = name.includes('-') || hosts.has(name) ? 1 : 0;
    if (tags.size < maxTags) { entry |= (tags.size + 1) << 1; tags.set(name, entry); }
  }
  const any = node.hasAttributes();
  return 1 | (any ? 4 : 0) | (any && node.matches(aria) ? 8 : 0)
    | (node.checkVisibility(visibility) ? 16 : 0) | ((entry & 1) && node.shadowRoot !== null ? 32 : 0)
    | (node.firstElementChild !== null ? 64 : 0) | ((entry >> 1) << 8);
}
let found = null;
export function chaperoneStep(node, first, visibility, aria, maxTags) {
  let n = first ? node.firstChild : node.nextSibling;
  let blank = 0;
  while (n !== null) {
    const type = n.nodeType;
    if (type === 1) break;
    if (type === 3) {
      if (hasContent(n.data)) break;
      blank = 128;
    }
    n = n.nextSibling;
  }
  found = n;
  return n === null ? blank : chaperoneNodeFacts(n, visibility, aria, maxTags) | blank;
}
export function chaperoneFound() {
  const n = found;
  found = null;
  return n;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = chaperoneNodeFacts)]
    fn node_facts(node: &Node, visibility: &JsValue, aria: &JsValue, max_tags: u32) -> u32;
    #[wasm_bindgen(js_name = chaperoneStep)]
    fn step(node: &Node, first: bool, visibility: &JsValue, aria: &JsValue, max_tags: u32) -> u32;
    #[wasm_bindgen(js_name = chaperoneFound)]
    fn found() -> Node;
}

thread_local! {
    /// Local names and their classes by the name's JS-side number less one
    /// (leaked: at most [`MAX_TAGS`] short strings for the life of the
    /// page).
    static TAGS: RefCell<Vec<(&'static str, TagClass)>> = const { RefCell::new(Vec::new()) };
}

/// What kind of node [`facts`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Element,
    /// A text node holding more than (ASCII) whitespace.
    Text,
    /// A text node of spaces, tabs and line breaks only.
    Blank,
    /// A comment, processing instruction, …
    Other,
}

/// The packed answer of one [`facts`] call.
#[derive(Debug, Clone, Copy)]
pub struct Facts(u32);

impl Facts {
    pub fn kind(self) -> Kind {
        match self.0 & 3 {
            1 => Kind::Element,
            2 => Kind::Text,
            3 => Kind::Blank,
            _ => Kind::Other,
        }
    }

    pub fn attrs(self) -> Attrs {
        Attrs { any: self.0 & 4 != 0, aria: self.0 & 8 != 0 }
    }

    /// `checkVisibility({visibilityProperty: true})` passed.
    pub fn visible(self) -> bool {
        self.0 & 16 != 0
    }

    /// It hosts an open shadow root.
    pub fn shadow_host(self) -> bool {
        self.0 & 32 != 0
    }

    /// It has element children.
    pub fn element_children(self) -> bool {
        self.0 & 64 != 0
    }

    /// The element's local name and its [`TagClass`] (`el`: the element
    /// these facts are of).
    pub fn tag(self, el: &Element) -> (Cow<'static, str>, TagClass) {
        let code = (self.0 >> 8) as usize;
        let learn = |name: String| {
            let class = dom::classify_tag(&name);
            (name, class)
        };
        if code == 0 {
            let (name, class) = learn(el.local_name());
            return (Cow::Owned(name), class);
        }
        TAGS.with(|t| {
            let mut t = t.borrow_mut();
            if let Some(&(name, class)) = t.get(code - 1) {
                return (Cow::Borrowed(name), class);
            }
            let (name, class) = learn(el.local_name());
            if code - 1 == t.len() {
                let name: &'static str = Box::leak(name.into_boxed_str());
                t.push((name, class));
                return (Cow::Borrowed(name), class);
            }
            (Cow::Owned(name), class)
        })
    }
}

/// The [`Facts`] of `node` (`vis`: the walk's `checkVisibility` options).
pub fn facts(vis: &dom::Visibility, node: &Node) -> Facts {
    Facts(node_facts(node, vis.options(), dom::aria_selector(), MAX_TAGS))
}

/// One step of a walk through a node's children: the next element or
/// text node that is not only whitespace, with its [`Facts`], and whether
/// whitespace-only text came before it. Comments and the like are passed
/// over, as the walk ignores them; a step past the last child has no node
/// but may still have whitespace before it (a space at the end of an
/// inline run).
pub struct Step {
    pub node: Option<Node>,
    pub facts: Facts,
    pub blank_before: bool,
}

/// The first [`Step`] into `parent`'s children.
pub fn first_child(vis: &dom::Visibility, parent: &Node) -> Step {
    step_from(vis, parent, true)
}

/// The [`Step`] after `node`, among its siblings.
pub fn next_sibling(vis: &dom::Visibility, node: &Node) -> Step {
    step_from(vis, node, false)
}

fn step_from(vis: &dom::Visibility, node: &Node, first: bool) -> Step {
    let packed = step(node, first, vis.options(), dom::aria_selector(), MAX_TAGS);
    let facts = Facts(packed & !BLANK_BEFORE);
    // Kind 0 is only answered past the last child: the step skips other
    // node types. Only then is there no node to take.
    let node = (facts.kind() != Kind::Other).then(found);
    Step { node, facts, blank_before: packed & BLANK_BEFORE != 0 }
}

/// The bit of a [`step`] answer saying whitespace came before its node.
const BLANK_BEFORE: u32 = 128;
