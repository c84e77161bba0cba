//! The DOM walk behind a snapshot (docs/design.md, "Observation").
//!
//! Visible elements in flat-tree order (open shadow roots through their
//! slots, same-origin iframes in place, cross-origin iframes as one
//! `iframe` line), with role, accessible name, ref, level, states, masked
//! value and short description. Open dialogs come first; when one is modal
//! the rest of the page is inert and left out, as in Chromium's tree.
//!
//! Only "listed" roles (see [`roles::is_listed`]) become lines. Generic
//! containers fold away; loose text becomes `text` blocks (≤300 chars);
//! text that already names a listed element (button, link, heading, cell,
//! label of a control, legend, caption) is not repeated. Tables carry
//! their size, lists their item count; a list item holding one line is
//! folded into that line. A drop-down `<select>` carries its options and an
//! input with a `<datalist>` its suggestions ([`choices`];
//! `shared::snapshot`, "Choices").
//!
//! Visually hidden: a box of at most 1×1 px whose overflow (or `clip`,
//! `clip-path`) hides its content shows nothing, yet Chromium exposes it to
//! assistive technology (skip links, screen-reader-only buttons). Its
//! controls get lines marked `visually-hidden`; nothing else of it does —
//! its loose text, headings and images stay out, so text a person cannot
//! see never reaches an agent as a text block (names of controls may hold
//! such text, as `aria-label`s do). Text extraction leaves it all out.
//!
//! Offscreen: a line scrolled out of view is marked once for its subtree;
//! list items and table rows are not, nor their content (with a line of
//! their own or without one, as in interactive-only snapshots). A list item or
//! row that follows one wholly below the viewport is taken to be below it
//! too, without a rect of its own (document order is layout order in a
//! list; a reordered list only loses `visually-hidden` marks inside such
//! items, which rows below the fold never had).
//!
//! Cost: most of a walk is calls into the DOM through the wasm-bindgen
//! glue, and each node that crosses makes a wrapper in this world; so each
//! node is asked once, in one call, what the rules need ([`crate::reads`]: its
//! type and local name, whether it has attributes and ARIA ones,
//! `checkVisibility()`, a shadow root, element children, whether a text
//! node is only whitespace) and the answers are passed down. Computed
//! style only for elements `checkVisibility()` rejects; a text-only leaf
//! is read with one `textContent`, whitespace between elements not at
//! all; a rect only when no ancestor is offscreen; `aria-disabled` is
//! inherited down the walk instead of asked of every control's ancestors.
//! Pseudo-element styles only for elements that a `::before`/`::after`
//! rule in the page's sheets can match.

use shared::error::{ErrorCode, WireError};
use shared::limits::{MAX_NAME_CHARS, MAX_TEXT_CHARS, truncate_chars};
use shared::sensitive::{FieldFacts, MASK, classify_field, classify_name};
use shared::snapshot::{Node, PageEnd, PageSnapshot, SnapshotRequest, State, TEXT_ROLE};
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlIFrameElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement, Window};

use shared::challenge::{MAX_SIGNAL_ITEMS, PageSignals};

use crate::challenge;
use crate::choices;
use crate::dom::{self, Vis, attr, attr_is, attr_nonempty, has};
use crate::name::{self, Labels, NameEnv, Pseudo};
use crate::reads::{self, Facts, Kind};
use crate::refs;
use crate::roles;

/// More nodes than this are not collected (the frame limit is 12 MiB).
const MAX_NODES: usize = 150_000;
/// A generic element with more lines than this is no row ([`Walker::close_group`]).
const MAX_GROUP_LINES: usize = shared::snapshot::MAX_ROW_PARTS;
/// Deeper nesting than this is not walked.
const MAX_DEPTH: u32 = 512;
/// Loose text gathered for one block stops growing here.
const TEXT_SCAN: usize = 1_200;
/// Content that makes a table cell a container rather than a text cell.
const RICH: &str = "a[href],button,input,select,textarea,img,svg,iframe,h1,h2,h3,h4,h5,h6,ul,ol,table,details,[role],[tabindex],[contenteditable]";

pub fn take(req: &SnapshotRequest) -> Result<PageSnapshot, WireError> {
    let window = web_sys::window().ok_or_else(|| WireError::internal("no window"))?;
    let document = window.document().ok_or_else(|| WireError::internal("no document"))?;
    let elements = reserve_memory(&document, req);
    let pseudo = Pseudo::scan(&document);
    Labels::scan(&document).install();
    let result = walk(req, &window, &document, &pseudo, elements);
    Labels::uninstall();
    result
}

fn walk(
    req: &SnapshotRequest,
    window: &Window,
    document: &Document,
    pseudo: &Pseudo,
    elements: usize,
) -> Result<PageSnapshot, WireError> {
    let mut w = Walker::new(window, document, pseudo, req.interactive_only);
    // Lines come to about half the elements or fewer: room for that at
    // once instead of copying a growing list again and again.
    w.nodes.reserve(elements.min(MAX_NODES) / 2);
    w.end = Some(PageEnd::new(req));
    w.max_chars = req.max_chars;
    let mut modal = false;
    match &req.scope {
        Some(r) => {
            let el = refs::lookup(r)
                .ok_or_else(|| WireError::new(ErrorCode::StaleRef, format!("ref {r} is not on the page any more")))?;
            if let Some(win) = el.owner_document().and_then(|d| d.default_view()) {
                w.set_window(win);
            }
            w.scope = Some(el.clone());
            w.visit_from(&el);
        }
        None => modal = w.walk_page(document),
    }
    w.flush_text();
    let url = window.location().href().unwrap_or_default();
    let mut title = document.title();
    // The challenge signals: what this walk saw when it saw the whole
    // page, else a whole walk of their own (`signals_with`) — the same
    // walker either way, so the snapshot's `Challenge:` line and the check
    // before an action (`page_signals`) cannot disagree. The service worker
    // decides.
    let signals = match w.signals.take() {
        Some(sig) if !modal && !w.stopped && !w.full() => {
            Some(challenge::complete(sig.into_page_signals(&url, &title), document))
        }
        _ => signals_with(window, document, pseudo),
    };
    truncate_chars(&mut title, MAX_TEXT_CHARS);
    Ok(PageSnapshot { url, title, nodes: w.nodes, challenge: None, signals: signals.map(Box::new), partial: w.stopped })
}

/// The challenge signals of the current page (`PageRequest::Signals`: the
/// check before every action, after every navigation and behind Done),
/// gathered by the same walk as a snapshot of the whole page — open shadow
/// roots through their slots, same-origin iframes in place — so what the
/// snapshot's `Challenge:` line says is what the check sees.
pub fn page_signals() -> Option<PageSignals> {
    let window = web_sys::window()?;
    let document = window.document()?;
    let pseudo = Pseudo::scan(&document);
    Labels::scan(&document).install();
    let signals = signals_with(&window, &document, &pseudo);
    Labels::uninstall();
    signals
}

/// A whole-page walk for its signals alone (interactive lines only, no
/// page end). A modal dialog hides the rest of the page from the walk and
/// a page past [`MAX_NODES`] is not walked to its end: then the signals
/// come from `challenge::gather`'s own scan, for the snapshot and the
/// check alike.
fn signals_with(window: &Window, document: &Document, pseudo: &Pseudo) -> Option<PageSignals> {
    let mut w = Walker::new(window, document, pseudo, true);
    let modal = w.walk_page(document);
    w.flush_text();
    match w.signals.take() {
        Some(sig) if !modal && !w.full() => {
            let url = window.location().href().unwrap_or_default();
            Some(challenge::complete(sig.into_page_signals(&url, &document.title()), document))
        }
        _ => challenge::gather(),
    }
}

/// Challenge signals gathered by the walk (`shared::challenge::PageSignals`).
#[derive(Default)]
struct Signals {
    page: PageSignals,
    text_chars: usize,
    text_full: bool,
}

impl Signals {
    fn into_page_signals(self, url: &str, title: &str) -> PageSignals {
        PageSignals { url: url.to_string(), title: title.to_string(), ..self.page }
    }

    /// A visible element the walk has just described (`line`: its line).
    fn element(&mut self, el: &Element, tag: &str, line: Option<&Node>, rect: Option<&web_sys::DomRect>) {
        let p = &mut self.page;
        if let Some(n) = line {
            match n.role.as_ref() {
                "heading" => challenge::push_item(&mut p.headings, &n.name),
                "button" => challenge::push_item(&mut p.buttons, &n.name),
                "link" => challenge::push_item(&mut p.links, &n.name),
                _ => {}
            }
        }
        match tag {
            "input" if p.inputs.len() < MAX_SIGNAL_ITEMS => {
                let t = roles::input_type(el);
                if challenge::is_signal_input(&t) {
                    let label = line.map(|n| n.name.as_str()).unwrap_or_default();
                    p.inputs.push(challenge::field_signal(el, t, label));
                }
            }
            "iframe" | "frame" if p.iframes.len() < MAX_SIGNAL_ITEMS => {
                // Frames without a box (invisible widgets, trackers) do not count.
                let r = rect.cloned().unwrap_or_else(|| el.get_bounding_client_rect());
                if r.width() > 0.0 && r.height() > 0.0 {
                    let src = dom::prop(el, "src").as_string().unwrap_or_default();
                    challenge::push_frame(p, src, &el.get_attribute("title").unwrap_or_default());
                }
            }
            _ => {}
        }
    }

    fn wants_text(&self) -> bool {
        !self.text_full
    }

    fn text(&mut self, t: &str) {
        self.text_full = !challenge::push_text(&mut self.page.text, &mut self.text_chars, t);
    }
}

/// wasm2js grows memory a page at a time, copying the whole heap each
/// time: a big snapshot allocating piecemeal would copy it thousands of
/// times. Growing once up front, by an estimate from the page's element
/// count (or from the output asked for, when that is less), leaves the
/// allocator free space to carve from.
/// Returns the element count.
fn reserve_memory(doc: &Document, req: &SnapshotRequest) -> usize {
    let elements = doc.get_elements_by_tag_name("*").length() as usize;
    let asked = req.max_chars.saturating_mul(req.page.max(1)).saturating_mul(64);
    let want = (elements * 1_200).min(asked).clamp(2 << 20, 96 << 20);
    let v: Vec<u8> = Vec::with_capacity(want);
    drop(std::hint::black_box(v));
    elements
}

/// The visible text under `root` as blocks (`browser_extract_text`): the
/// same walk and visibility rules as a snapshot (shadow roots, same-origin
/// frames, nothing hidden or clipped away), every element's text
/// collected, split at block boundaries; form fields give no values.
pub fn text_blocks(root: &Element, max_blocks: usize) -> Vec<String> {
    let Some(doc) = root.owner_document() else { return Vec::new() };
    let Some(win) = doc.default_view() else { return Vec::new() };
    let pseudo = Pseudo::scan(&doc);
    let mut w = Walker::new(&win, &doc, &pseudo, false);
    w.text_only = true;
    w.visit_from(root);
    w.flush_text();
    w.nodes.into_iter().take(max_blocks).map(|n| n.name).collect()
}

/// Visible open dialogs of the top document, outermost only, and whether
/// one of them is modal (`showModal()` or `aria-modal="true"`).
fn open_dialogs(doc: &Document, vis: &dom::Visibility) -> (Vec<Element>, bool) {
    let mut out: Vec<Element> = Vec::new();
    let mut modal = false;
    let Ok(list) = doc.query_selector_all(dom::OPEN_DIALOGS) else {
        return (out, false);
    };
    for i in 0..list.length() {
        let Some(el) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else { continue };
        if !vis.check(&el) || el.closest("[aria-hidden=true],[inert]").ok().flatten().is_some() {
            continue;
        }
        if out.iter().any(|o| o.contains(Some(&el))) {
            continue;
        }
        // Only showModal() makes the rest inert; Chromium 156 keeps the page
        // around an aria-modal dialog in its tree, and so do we.
        modal |= el.matches(":modal").unwrap_or(false);
        out.push(el);
    }
    (out, modal)
}

/// Where an element's box is, as far as the walk looked.
#[derive(Clone, Copy)]
enum Place<'r> {
    Rect(&'r web_sys::DomRect),
    /// A list item or row after one below the viewport ([`Walker::visit`]).
    Below,
    /// Not looked at (inside an offscreen subtree, or no box of its own).
    Unknown,
}

/// What becomes of the text nodes of an element's children.
#[derive(Clone, Copy)]
struct Text {
    /// Rendered (not `visibility: hidden`).
    shown: bool,
    /// Collected into text blocks (shown, and not already a name).
    collect: bool,
}

struct Walker<'a> {
    nodes: Vec<Node>,
    interactive_only: bool,
    focused: Option<Element>,
    vis: dom::Visibility,
    env: NameEnv<'a>,
    /// Window of the document being walked (changes inside iframes).
    win: Window,
    view_w: f64,
    view_h: f64,
    /// Dialogs already listed first.
    skip: Vec<Element>,
    /// > 0 inside an element whose text is its name (button, heading…).
    consuming: u32,
    /// > 0 inside a listed element already marked offscreen.
    offscreen: u32,
    /// Visually hidden boxes open around the element (clipped to nothing):
    /// only controls get lines, marked [`State::VisuallyHidden`]; no text
    /// is collected.
    clipped: u32,
    /// Elements with `aria-disabled="true"` around the one being visited.
    aria_disabled: u32,
    /// Disabled `<fieldset>`s and `<optgroup>`s around it: only under one
    /// can a control be `:disabled` without a `disabled` attribute.
    disabled_groups: u32,
    /// The element just visited among its siblings was a list item or row
    /// wholly below the viewport.
    after_fold: bool,
    /// Shadow trees and frames the walk is in.
    tree_depth: u32,
    /// The element a scoped snapshot was asked for: its choices are listed
    /// in full.
    scope: Option<Element>,
    /// The request's `max_chars` (bounds a full list of choices).
    max_chars: usize,
    text: String,
    text_depth: u16,
    /// Whether the element last described lies outside the viewport.
    last_offscreen: bool,
    /// Text extraction: no element lines, all visible text as blocks.
    text_only: bool,
    /// Where the requested page ends (snapshots only).
    end: Option<PageEnd>,
    /// List items open around the element being visited whose lines may
    /// still fold away ([`Walker::fold`]): lines are final only when none is.
    open_folds: u32,
    /// Where the lines of each generic block element open around the
    /// element being visited start ([`Walker::close_group`]): the first
    /// line of such an element gets its group mark only when it closes.
    groups: Vec<usize>,
    /// The requested page is complete: the walk unwinds without adding lines.
    stopped: bool,
    /// Challenge signals, gathered when snapshotting a whole page.
    signals: Option<Signals>,
}

impl<'a> Walker<'a> {
    fn new(win: &Window, doc: &Document, pseudo: &'a Pseudo, interactive_only: bool) -> Self {
        let mut w = Walker {
            nodes: Vec::new(),
            interactive_only,
            focused: deep_active_element(doc),
            vis: dom::Visibility::new(),
            env: NameEnv { pseudo },
            win: win.clone(),
            view_w: 0.0,
            view_h: 0.0,
            skip: Vec::new(),
            consuming: 0,
            offscreen: 0,
            clipped: 0,
            aria_disabled: 0,
            disabled_groups: 0,
            after_fold: false,
            tree_depth: 0,
            scope: None,
            max_chars: shared::limits::DEFAULT_SNAPSHOT_CHARS,
            text: String::new(),
            text_depth: 0,
            last_offscreen: false,
            text_only: false,
            end: None,
            open_folds: 0,
            groups: Vec::new(),
            stopped: false,
            signals: None,
        };
        w.set_window(win.clone());
        w
    }

    fn set_window(&mut self, win: Window) {
        self.view_w = win.inner_width().ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
        self.view_h = win.inner_height().ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
        self.win = win;
    }

    /// Walks the whole page, gathering challenge signals: open dialogs
    /// first, then the rest unless one is modal (returned).
    fn walk_page(&mut self, document: &Document) -> bool {
        self.signals = Some(Signals::default());
        let (dialogs, modal) = open_dialogs(document, &self.vis);
        for d in &dialogs {
            self.visit_from(d);
            self.flush_text();
        }
        if !modal && let Some(root) = document.document_element() {
            self.skip = dialogs;
            let facts = reads::facts(&self.vis, &root);
            self.visit(&root, facts, 0, 0, None);
        }
        modal
    }

    fn full(&self) -> bool {
        self.nodes.len() >= MAX_NODES
    }

    fn push_text(&mut self, t: &str, depth: u16) {
        if self.text.len() > TEXT_SCAN {
            return;
        }
        if self.text.trim().is_empty() {
            self.text_depth = depth;
        }
        self.text.push_str(t);
    }

    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        if self.stopped {
            // Possibly cut short; it belongs after the requested page anyway.
            self.text.clear();
            return;
        }
        let mut t = dom::collapse(&self.text, TEXT_SCAN);
        self.text.clear();
        if t.is_empty() || self.interactive_only || self.full() {
            return;
        }
        truncate_chars(&mut t, MAX_TEXT_CHARS);
        self.nodes.push(Node { depth: self.text_depth, role: TEXT_ROLE.into(), name: t, ..Node::default() });
    }

    /// Visits the subtree of `el` as the start of a walk (a dialog, a
    /// scope): what its ancestors pass down is read from them.
    fn visit_from(&mut self, el: &Element) {
        let disabled = el.parent_element().and_then(|p| dom::closest(&p, "[aria-disabled=true i]"));
        self.aria_disabled = u32::from(disabled.is_some());
        let group = el.parent_element().and_then(|p| dom::closest(&p, "fieldset[disabled],optgroup[disabled]"));
        self.disabled_groups = u32::from(group.is_some());
        self.tree_depth = u32::from(!self.env.pseudo.covers(el));
        let facts = reads::facts(&self.vis, el);
        self.visit(el, facts, 0, 0, None);
        self.aria_disabled = 0;
        self.disabled_groups = 0;
        self.tree_depth = 0;
    }

    /// Visits `el` and its subtree; `depth` is the number of listed
    /// ancestors, `nesting` the DOM depth (bounded); `in_list`: whether
    /// its DOM parent is a `ul`, `ol` or `menu` (`None` when the walk did
    /// not come from that parent: its start, a shadow root's children, a
    /// slot's assigned nodes, a frame's root).
    fn visit(&mut self, el: &Element, facts: Facts, depth: u16, nesting: u32, in_list: Option<bool>) {
        if self.stopped || self.full() || nesting > MAX_DEPTH {
            return;
        }
        let (tag, class) = facts.tag(el);
        let tag: &str = &tag;
        if class.skipped {
            return;
        }
        let attrs = facts.attrs();
        if dom::hidden_by_attribute(el, attrs) {
            return;
        }
        if !self.skip.is_empty() && self.skip.iter().any(|d| d == el) {
            return;
        }
        let vis = if class.boxless {
            // No boxes of their own, shown through their select or image map.
            if has(el, "hidden") { Vis::Gone } else { Vis::Shown }
        } else if facts.visible() {
            Vis::Shown
        } else {
            self.vis.classify(el, &self.win)
        };
        if vis == Vis::Gone {
            return;
        }
        let shown = vis != Vis::Invisible;
        // Clipped to (almost) nothing: `overflow: hidden` (or `clip`,
        // `clip-path`) on a box of at most 1×1 px hides its content
        // (visually-hidden and zero-size tricks). Exposed all the same, as
        // in Chromium's tree; text extraction leaves it out.
        let role = roles::role_in(el, tag, attrs, in_list).unwrap_or("generic");
        // A list item or table row after one wholly below the viewport is
        // taken to be below it too (in a list, document order is layout
        // order): no rect of its own, and its content is offscreen.
        let item = matches!(role, "listitem" | "row");
        let follows_fold = item && std::mem::take(&mut self.after_fold);
        let rect = (vis == Vis::Shown && self.offscreen == 0 && !follows_fold).then(|| el.get_bounding_client_rect());
        let clips = self.clipped == 0 && rect.as_ref().is_some_and(|r| self.clipped_away(el, r));
        if clips && self.text_only {
            return;
        }
        if clips {
            self.clipped += 1;
        }
        let block = class.block;
        if block {
            self.flush_text();
        }

        // Fields show their content as a value, images have none.
        let descend = if class.select { role == "listbox" } else { !class.leaf };
        let frame = class.frame;
        // Read once for the name and the walk below.
        let shadow = if descend && !frame && facts.shadow_host() { el.shadow_root() } else { None };
        let text_only = descend && !frame && shadow.is_none() && !class.slot && !facts.element_children();
        let known = name::Known { attrs, text_only, top_tree: self.tree_depth == 0 };
        let mut listed = shown && self.listed(el, tag, role);
        let mut consume = false;
        let mut idx = None;
        let mut child_depth = depth;
        let mut marked_offscreen = false;
        let mut folds = false;
        if listed {
            let place = match (&rect, follows_fold) {
                (Some(r), _) => Place::Rect(r),
                (None, true) => Place::Below,
                (None, false) => Place::Unknown,
            };
            match self.describe(el, tag, role, known, depth, place) {
                Some(node) => {
                    self.flush_text();
                    marked_offscreen = self.last_offscreen;
                    idx = Some(self.nodes.len());
                    folds = may_fold(&node);
                    self.nodes.push(node);
                    child_depth = depth.saturating_add(1);
                    consume = roles::name_from_content(role) && role != "row";
                }
                None => listed = false,
            }
        }
        // A list item or row without a line of its own (interactive-only
        // snapshots, inside a button…) out of view: its content is
        // offscreen as a listed one's would be, so asks for no rects and
        // gets no marks either.
        if !listed && item && self.clipped == 0 && (follows_fold || rect.as_ref().is_some_and(|r| self.out_of_view(r)))
        {
            marked_offscreen = true;
        }
        if shown && !consume && !self.text_only && self.consumes_label_text(el, tag) {
            consume = true;
        }
        if shown
            && self.clipped == 0
            && let Some(sig) = self.signals.as_mut()
        {
            sig.element(el, tag, idx.map(|i| &self.nodes[i]), rect.as_ref());
        }

        if folds {
            self.open_folds += 1;
        }
        // A plain `<div>` (or other generic block) may be one of a run of
        // rows or cards: where its lines start, marked when it closes.
        let group = !listed && block && descend && !frame && !text_only && !self.text_only && role == "generic";
        if group {
            self.groups.push(self.nodes.len());
        }
        let disables = descend && attrs.aria && dom::attr_is(el, "aria-disabled", "true");
        if disables {
            self.aria_disabled += 1;
        }
        let disables_group = descend && attrs.any && class.disables_content && has(el, "disabled");
        if disables_group {
            self.disabled_groups += 1;
        }
        if descend {
            if frame {
                self.visit_frame(el, child_depth, nesting);
            } else {
                if consume {
                    self.consuming += 1;
                }
                if marked_offscreen {
                    self.offscreen += 1;
                }
                let seen = shown && self.clipped == 0;
                let text = Text { shown: seen, collect: seen && self.consuming == 0 };
                if let Some(shadow) = shadow {
                    self.tree_depth += 1;
                    self.visit_children(&shadow, text, child_depth, nesting, None);
                    self.tree_depth -= 1;
                } else if class.slot {
                    if let dom::FlatChildren::Nodes(children) = dom::flat_children(el, "slot") {
                        let outer = std::mem::take(&mut self.after_fold);
                        for child in children {
                            self.visit_node(child, text, child_depth, nesting, None);
                        }
                        self.after_fold = outer;
                    }
                } else if text_only {
                    // Text only (the commonest leaf: a link, a cell, a
                    // span): one `textContent` instead of a call per child.
                    // Nothing to read when it is a name and the signals
                    // have their text.
                    if self.text_wanted(text) {
                        let t = el.text_content().unwrap_or_default();
                        self.take_text(&t, text, child_depth);
                    }
                } else {
                    self.visit_children(el, text, child_depth, nesting, Some(class.list));
                }
                if consume {
                    self.consuming -= 1;
                }
                if marked_offscreen {
                    self.offscreen -= 1;
                }
            }
        }
        if block || listed {
            self.flush_text();
        }
        if group {
            self.close_group();
        }
        if let Some(i) = idx {
            self.fold(i, role);
        }
        if folds {
            self.open_folds -= 1;
        }
        if disables {
            self.aria_disabled -= 1;
        }
        if disables_group {
            self.disabled_groups -= 1;
        }
        if clips {
            self.clipped -= 1;
        }
        self.after_fold =
            item && (follows_fold || rect.as_ref().is_some_and(|r| self.view_h > 0.0 && r.top() >= self.view_h));
        // Every line so far is final here unless a list item around is
        // still open: stop once the requested page is complete.
        if self.open_folds == 0 && !self.stopped && self.end.is_some() {
            // Lines a generic element still open may yet mark as a group
            // are not final: the page end looks only at the lines before.
            let len = self.nodes.len();
            let last = self.groups.iter().find(|&&s| len - s <= MAX_GROUP_LINES).map_or(len, |&s| s);
            if let Some(end) = self.end.as_mut()
                && end.reached(&self.nodes[..last])
            {
                self.stopped = true;
            }
        }
    }

    /// Visits the children of `parent` (`in_list`: as for
    /// [`Walker::visit`]), a [`reads::Step`] at a time.
    fn visit_children(&mut self, parent: &web_sys::Node, text: Text, depth: u16, nesting: u32, in_list: Option<bool>) {
        let outer = std::mem::take(&mut self.after_fold);
        let mut step = reads::first_child(&self.vis, parent);
        loop {
            // Whitespace only: a space between what is around it (the
            // signals take no whitespace), without reading it.
            if step.blank_before && text.collect && !self.stopped {
                self.push_text(" ", depth);
            }
            let Some(child) = step.node else { break };
            if self.stopped {
                break;
            }
            self.visit_read(&child, step.facts, text, depth, nesting, in_list);
            step = reads::next_sibling(&self.vis, &child);
        }
        self.after_fold = outer;
    }

    fn visit_node(&mut self, child: web_sys::Node, text: Text, depth: u16, nesting: u32, in_list: Option<bool>) {
        if self.stopped {
            return;
        }
        let facts = reads::facts(&self.vis, &child);
        self.visit_read(&child, facts, text, depth, nesting, in_list);
    }

    /// [`Walker::visit_node`] with the node's facts already read.
    fn visit_read(
        &mut self,
        child: &web_sys::Node,
        facts: Facts,
        text: Text,
        depth: u16,
        nesting: u32,
        in_list: Option<bool>,
    ) {
        match facts.kind() {
            Kind::Element => self.visit(child.unchecked_ref(), facts, depth, nesting + 1, in_list),
            Kind::Text => {
                if self.text_wanted(text)
                    && let Some(t) = child.node_value()
                {
                    self.take_text(&t, text, depth);
                }
            }
            // Whitespace only: a space between what is around it (the
            // signals take no whitespace), without reading it.
            Kind::Blank => {
                if text.collect {
                    self.push_text(" ", depth);
                }
            }
            Kind::Other => {}
        }
    }

    /// Whether text under an element with these rules is read at all: it
    /// is collected, or the challenge signals still want text.
    fn text_wanted(&self, text: Text) -> bool {
        text.collect || (text.shown && self.signals.as_ref().is_some_and(Signals::wants_text))
    }

    /// Text read under an element with these rules (see [`Walker::text_wanted`]).
    fn take_text(&mut self, t: &str, text: Text, depth: u16) {
        if text.shown
            && let Some(sig) = self.signals.as_mut()
            && sig.wants_text()
        {
            sig.text(t);
        }
        if text.collect {
            self.push_text(t, depth);
        }
    }

    /// Closes the generic element whose lines start where the innermost
    /// open one does: two or more lines, all at one depth (leaves) and
    /// without choices, become a group ([`Node::group`]) the renderer can
    /// write as a row line when its siblings have the same shape. An outer
    /// element with the same first line replaces an inner one's mark.
    fn close_group(&mut self) {
        let Some(start) = self.groups.pop() else { return };
        let lines = &self.nodes[start.min(self.nodes.len())..];
        if self.stopped || lines.len() < 2 || lines.len() > MAX_GROUP_LINES {
            return;
        }
        let depth = lines[0].depth;
        if lines.iter().all(|n| n.depth == depth && n.choices.is_none()) {
            self.nodes[start].group = lines.len() as u16;
        }
    }

    /// Compacts a list item: one holding exactly one line is replaced by
    /// that line, an empty one dropped; otherwise its first text block
    /// moves onto its own line (`- listitem: "text"`, as Playwright shows
    /// an item's text).
    fn fold(&mut self, i: usize, role: &str) {
        if role != "listitem" || !may_fold(&self.nodes[i]) {
            return;
        }
        let children = self.nodes.len() - i - 1;
        if children == 0 {
            self.nodes.pop();
        } else if children == 1 {
            let states = std::mem::take(&mut self.nodes[i].states);
            self.nodes.remove(i);
            let child = &mut self.nodes[i];
            child.depth = child.depth.saturating_sub(1);
            if states.contains(&State::Offscreen) && !child.states.contains(&State::Offscreen) {
                child.states.push(State::Offscreen);
            }
        } else if self.nodes[i].value.is_none() {
            let depth = self.nodes[i].depth + 1;
            if let Some(j) =
                (i + 1..self.nodes.len()).find(|&j| self.nodes[j].depth == depth && self.nodes[j].role == TEXT_ROLE)
                && self.nodes[j].name.chars().count() <= MAX_NAME_CHARS
            {
                let text = self.nodes.remove(j);
                self.nodes[i].value = Some(text.name);
                // A group that held the text is a line shorter.
                for k in i + 1..j {
                    let g = usize::from(self.nodes[k].group);
                    if g > 0 && k + g > j {
                        self.nodes[k].group -= 1;
                    }
                }
            }
        }
    }

    /// Whether an element with this role becomes a line.
    fn listed(&self, el: &Element, tag: &str, role: &str) -> bool {
        if self.text_only || !roles::is_listed(role) {
            return false;
        }
        let interactive = roles::is_interactive(role);
        if self.interactive_only && !(interactive || matches!(role, "heading" | "dialog" | "alertdialog")) {
            return false;
        }
        // Inside a button, link or heading only controls get lines; so
        // inside a visually hidden box.
        if (self.consuming > 0 || self.clipped > 0) && !interactive {
            return false;
        }
        match role {
            // A cell holding controls or structure is a container: its
            // content is listed instead.
            "cell" | "columnheader" | "rowheader" => {
                !(el.first_element_child().is_some() && dom::query_selector(el, RICH).is_some())
            }
            "iframe" => tag == "iframe" || tag == "frame",
            _ => true,
        }
    }

    /// Labels of controls, legends, captions and figcaptions: their text
    /// is the name of the element they label.
    fn consumes_label_text(&self, el: &Element, tag: &str) -> bool {
        match tag {
            "label" => !dom::prop(el, "control").is_null() && !dom::prop(el, "control").is_undefined(),
            "legend" => el.parent_element().is_some_and(|p| p.local_name() == "fieldset"),
            "caption" => true,
            _ => false,
        }
    }

    /// Boxes of at most 1×1 px whose overflow is clipped show nothing; so
    /// do such boxes with a `clip` (when positioned) or an `inset()`
    /// `clip-path` (the screen-reader-only patterns).
    fn clipped_away(&self, el: &Element, r: &web_sys::DomRect) -> bool {
        if r.width() > 1.0 || r.height() > 1.0 {
            return false;
        }
        let Some(style) = self.win.get_computed_style(el).ok().flatten() else { return false };
        let o = style.get_property_value("overflow").unwrap_or_default();
        if o.contains("hidden") || o.contains("clip") {
            return true;
        }
        let clip = style.get_property_value("clip").unwrap_or_default();
        let position = style.get_property_value("position").unwrap_or_default();
        let path = style.get_property_value("clip-path").unwrap_or_default();
        (clip.starts_with("rect") && matches!(position.as_str(), "absolute" | "fixed")) || path.starts_with("inset")
    }

    /// A box wholly outside the viewport (never, in a window without one).
    fn out_of_view(&self, r: &web_sys::DomRect) -> bool {
        self.view_h > 0.0
            && (r.bottom() <= 0.0 || r.right() <= 0.0 || r.top() >= self.view_h || r.left() >= self.view_w)
    }

    fn visit_frame(&mut self, el: &Element, depth: u16, nesting: u32) {
        // `local_name` was checked; no `instanceof` (frames nest realms).
        let frame = el.unchecked_ref::<HtmlIFrameElement>();
        let doc = frame.content_document();
        let Some(doc) = doc else { return };
        let (Some(root), Some(win)) = (doc.document_element(), doc.default_view()) else { return };
        self.flush_text();
        let outer = self.win.clone();
        self.set_window(win);
        self.tree_depth += 1;
        let facts = reads::facts(&self.vis, &root);
        self.visit(&root, facts, depth, nesting + 1, None);
        self.tree_depth -= 1;
        self.flush_text();
        self.set_window(outer);
    }

    /// The line for a listed element, or `None` when it turns out to show
    /// nothing (unnamed image or group, zero-size clipped control).
    fn describe(
        &mut self,
        el: &Element,
        tag: &str,
        role: &'static str,
        known: name::Known,
        depth: u16,
        place: Place,
    ) -> Option<Node> {
        let interactive = roles::is_interactive(role);
        let mut node = Node { depth, role: role.into(), ..Node::default() };

        if role == "iframe" {
            let frame = el.unchecked_ref::<HtmlIFrameElement>();
            if frame.content_document().is_some() {
                return None; // same-origin: walked in place
            }
            node.name = attr_nonempty(el, "title").unwrap_or_default();
            truncate_chars(&mut node.name, MAX_NAME_CHARS);
            let src = frame.src();
            if !src.is_empty() {
                node.value = Some(shared::snapshot::display_url(&src));
            }
            node.desc = Some("cross-origin frame: its content is not visible".into());
            return Some(node);
        }

        let mut name = if role == "row" {
            // A row's content is listed in its cells; only an author name counts.
            attr_nonempty(el, "aria-label").unwrap_or_default()
        } else {
            name::accessible_name_known(&self.env, el, tag, role, known)
        };
        if name.is_empty() && matches!(role, "img" | "group" | "region" | "figure") {
            return None;
        }
        truncate_chars(&mut name, MAX_NAME_CHARS);
        node.name = name;

        // Offscreen: scrolled out of view (kept, marked once per subtree).
        // Items of lists and rows of tables are not marked, nor is their
        // content: long lists would pay a word a row (browser_click
        // scrolls to its target anyway).
        self.last_offscreen = matches!(place, Place::Below);
        if self.clipped > 0 {
            node.states.push(State::VisuallyHidden);
        } else if let Place::Rect(r) = place
            && self.out_of_view(r)
        {
            self.last_offscreen = true;
            if self.offscreen == 0 && !matches!(role, "listitem" | "row") {
                node.states.push(State::Offscreen);
            }
        }

        let input_type = if tag == "input" { roles::input_type(el) } else { String::new() };
        if role == "heading" {
            node.level = heading_level(el, tag);
        }
        let around = Around { aria_disabled: self.aria_disabled > 0, disabled_group: self.disabled_groups > 0 };
        states_of(el, tag, role, known.attrs, around, self.focused.as_ref(), &mut node.states);
        node.value = value_of(el, tag, role, &input_type, &node.name);
        node.choices = match tag {
            "select" if role == "combobox" => {
                let full = self.scope.as_ref() == Some(el);
                let masked = node.value.as_deref() == Some(MASK);
                choices::of_select(el, full, self.max_chars, masked)
            }
            "input" if has(el, "list") && !is_sensitive(el, &input_type, &node.name) => {
                choices::of_datalist(el, self.scope.as_ref() == Some(el), self.max_chars)
            }
            _ => None,
        };
        match role {
            "table" | "grid" | "treegrid" => node.table_size = table_size(el, tag),
            "list" => node.items = list_items(el, tag),
            _ => {}
        }
        if let Some(mut d) = name::description(&self.env, el, known.attrs)
            && d != node.name
        {
            truncate_chars(&mut d, MAX_NAME_CHARS);
            node.desc = Some(d);
        }
        if interactive {
            node.element_ref = Some(refs::ref_for(el));
        }
        Some(node)
    }
}

/// Whether [`Walker::fold`] may still change or drop this line and the
/// lines after it (an unnamed list item without a ref).
fn may_fold(node: &Node) -> bool {
    node.role == "listitem" && node.name.is_empty() && node.element_ref.is_none()
}

fn heading_level(el: &Element, tag: &str) -> Option<u8> {
    if let Some(l) = attr(el, "aria-level").and_then(|l| l.trim().parse::<u8>().ok()).filter(|l| *l >= 1) {
        return Some(l.min(9));
    }
    match tag.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(d - b'0'),
        _ => Some(2),
    }
}

/// Rows × columns of a table or grid.
fn table_size(el: &Element, tag: &str) -> Option<(u32, u32)> {
    let count = |v: Option<String>| v.and_then(|s| s.trim().parse::<i64>().ok()).filter(|n| *n >= 0).map(|n| n as u32);
    let (mut rows, mut cols) = (count(attr(el, "aria-rowcount")), count(attr(el, "aria-colcount")));
    if tag == "table" {
        let list = dom::prop(el, "rows");
        if rows.is_none() {
            rows = dom::prop_f64(&list, "length").map(|n| n as u32);
        }
        if cols.is_none() {
            let mut max = 0u32;
            let n = dom::prop_f64(&list, "length").unwrap_or(0.0) as u32;
            for i in 0..n.min(5) {
                let row = js_sys::Reflect::get_u32(&list, i).unwrap_or_default();
                let cells = dom::prop(&row, "cells");
                max = max.max(dom::prop_f64(&cells, "length").unwrap_or(0.0) as u32);
            }
            cols = Some(max);
        }
    } else {
        if rows.is_none() {
            rows = el.query_selector_all("[role=row]").ok().map(|l| l.length());
        }
        if cols.is_none() {
            let first = el.query_selector("[role=row]").ok().flatten();
            cols = first.and_then(|r| {
                r.query_selector_all(":scope > [role=cell],:scope > [role=gridcell],:scope > [role=columnheader],:scope > [role=rowheader]")
                    .ok()
                    .map(|l| l.length())
            });
        }
    }
    Some((rows?, cols.unwrap_or(0)))
}

fn list_items(el: &Element, tag: &str) -> Option<u32> {
    let sel = match tag {
        "ul" | "ol" | "menu" if !has(el, "role") => ":scope > li",
        "dl" => ":scope > dt",
        _ => ":scope > [role=listitem]",
    };
    el.query_selector_all(sel).ok().map(|l| l.length())
}

/// The ARIA state attributes [`states_of`] reads: one `matches` call tells
/// whether any is there before reading them one by one.
const STATE_ATTRS: &str = "[aria-checked],[aria-selected],[aria-expanded],[aria-pressed],[aria-disabled],\
                           [aria-required],[aria-readonly],[aria-invalid]";

/// What an element's ancestors pass down to its states.
#[derive(Clone, Copy)]
struct Around {
    /// Under an element with `aria-disabled="true"` (the flat tree, as
    /// Chromium's tree inherits it).
    aria_disabled: bool,
    /// Under a disabled `<fieldset>` or `<optgroup>`.
    disabled_group: bool,
}

/// `a`: the element's attributes; `around`: what its ancestors pass down.
fn states_of(
    el: &Element,
    tag: &str,
    role: &str,
    a: dom::Attrs,
    around: Around,
    focused: Option<&Element>,
    s: &mut Vec<State>,
) {
    let attrs = a.aria && dom::matches(el, STATE_ATTRS);
    if tag == "input" && matches!(role, "checkbox" | "radio" | "switch" | "menuitemcheckbox" | "menuitemradio") {
        let input = el.unchecked_ref::<HtmlInputElement>();
        if input.indeterminate() {
            s.push(State::Mixed);
        } else if input.checked() {
            s.push(State::Checked);
        }
    } else if attrs {
        match attr(el, "aria-checked").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            Some("true") => s.push(State::Checked),
            Some("mixed") => s.push(State::Mixed),
            _ => {}
        }
    }
    if tag == "option" {
        if dom::prop_bool(el, "selected") {
            s.push(State::Selected);
        }
    } else if attrs && attr_is(el, "aria-selected", "true") {
        s.push(State::Selected);
    }
    if tag == "summary" {
        let open = el.parent_element().is_some_and(|p| p.local_name() == "details" && has(&p, "open"));
        s.push(if open { State::Expanded } else { State::Collapsed });
    } else if attrs {
        match attr(el, "aria-expanded").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            Some("true") => s.push(State::Expanded),
            Some("false") => s.push(State::Collapsed),
            _ => {}
        }
    }
    if attrs
        && matches!(attr(el, "aria-pressed").map(|v| v.trim().to_ascii_lowercase()).as_deref(), Some("true" | "mixed"))
    {
        s.push(State::Pressed);
    }
    let form_control = matches!(tag, "button" | "input" | "select" | "textarea" | "option" | "optgroup" | "fieldset");
    // `:disabled` is the attribute unless a disabled fieldset or optgroup
    // is around (one cheap call instead of a selector match).
    let disabled = form_control
        && if around.disabled_group { dom::matches(el, ":disabled") } else { a.any && has(el, "disabled") };
    if disabled
        || (attrs && attr_is(el, "aria-disabled", "true"))
        || (roles::is_interactive(role) && around.aria_disabled)
    {
        s.push(State::Disabled);
    }
    let field = matches!(tag, "input" | "select" | "textarea");
    if (field && has(el, "required")) || (attrs && attr_is(el, "aria-required", "true")) {
        s.push(State::Required);
    }
    if (matches!(tag, "input" | "textarea") && has(el, "readonly")) || (attrs && attr_is(el, "aria-readonly", "true")) {
        s.push(State::Readonly);
    }
    if attrs && attr(el, "aria-invalid").is_some_and(|v| !matches!(v.trim(), "" | "false")) {
        s.push(State::Invalid);
    }
    if focused.is_some_and(|f| f == el) {
        s.push(State::Focused);
    }
}

fn value_of(el: &Element, tag: &str, role: &str, input_type: &str, name: &str) -> Option<String> {
    let raw = match tag {
        "input" => {
            if matches!(input_type, "checkbox" | "radio" | "button" | "submit" | "reset" | "image" | "file" | "hidden")
            {
                return None;
            }
            el.unchecked_ref::<HtmlInputElement>().value()
        }
        "textarea" => el.unchecked_ref::<HtmlTextAreaElement>().value(),
        "select" => {
            if role == "listbox" {
                return None; // its options are listed with `selected`
            }
            name::selected_text(el.unchecked_ref::<HtmlSelectElement>())
        }
        "progress" | "meter" => attr(el, "value").unwrap_or_default(),
        _ => {
            if matches!(role, "slider" | "spinbutton" | "progressbar" | "scrollbar" | "meter") {
                attr(el, "aria-valuetext").or_else(|| attr(el, "aria-valuenow")).unwrap_or_default()
            } else if role == "textbox" && has(el, "contenteditable") {
                dom::collapse(&el.text_content().unwrap_or_default(), MAX_TEXT_CHARS * 2)
            } else {
                return None;
            }
        }
    };
    if raw.is_empty() {
        return None;
    }
    if is_sensitive(el, input_type, name) {
        return Some(MASK.to_string());
    }
    let mut v = raw;
    truncate_chars(&mut v, MAX_TEXT_CHARS);
    Some(v)
}

fn is_sensitive(el: &Element, input_type: &str, name: &str) -> bool {
    let autocomplete = attr(el, "autocomplete").unwrap_or_default();
    let field_name = attr(el, "name").unwrap_or_default();
    let id = el.id();
    let placeholder = attr(el, "placeholder").unwrap_or_default();
    let facts = FieldFacts {
        input_type,
        autocomplete: &autocomplete,
        name: &field_name,
        id: &id,
        label: name,
        placeholder: &placeholder,
    };
    classify_field(&facts).is_some()
        || attr(el, "aria-label").is_some_and(|l| classify_name(&l).is_some())
        || crate::dom::holds_secret(el)
}

/// `document.activeElement`, followed into open shadow roots and
/// same-origin iframes.
fn deep_active_element(doc: &Document) -> Option<Element> {
    let mut active = doc.active_element()?;
    for _ in 0..32 {
        let inner = if let Some(shadow) = active.shadow_root() {
            shadow.active_element()
        } else if matches!(active.local_name().as_str(), "iframe" | "frame") {
            active.unchecked_ref::<HtmlIFrameElement>().content_document().and_then(|d| d.active_element())
        } else {
            None
        };
        match inner {
            Some(i) => active = i,
            None => break,
        }
    }
    // The body being "active" means nothing has focus.
    if active.local_name() == "body" { None } else { Some(active) }
}
