//! Roles per WAI-ARIA 1.2 and HTML-AAM: the explicit `role` (first valid,
//! non-abstract token), else the element's implicit role.
//!
//! Output names are the ARIA role names agents know (`img`, not Chromium's
//! computed `image`; `none` for `presentation`; `list` for `directory`).
//! Tests compare with Chromium after mapping `img` → `image`.

use web_sys::Element;

use crate::dom::{attr, attr_nonempty, has};

/// Concrete ARIA 1.2 roles (plus ARIA 1.3's `image`, `mark`, `comment`,
/// `suggestion`, and the deprecated `directory`), each as emitted.
const ARIA_ROLES: &[&str] = &[
    "alert",
    "alertdialog",
    "application",
    "article",
    "banner",
    "blockquote",
    "button",
    "caption",
    "cell",
    "checkbox",
    "code",
    "columnheader",
    "combobox",
    "comment",
    "complementary",
    "contentinfo",
    "definition",
    "deletion",
    "dialog",
    "directory",
    "document",
    "emphasis",
    "feed",
    "figure",
    "form",
    "generic",
    "grid",
    "gridcell",
    "group",
    "heading",
    "image",
    "img",
    "insertion",
    "link",
    "list",
    "listbox",
    "listitem",
    "log",
    "main",
    "mark",
    "marquee",
    "math",
    "menu",
    "menubar",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "meter",
    "navigation",
    "none",
    "note",
    "option",
    "paragraph",
    "presentation",
    "progressbar",
    "radio",
    "radiogroup",
    "region",
    "row",
    "rowgroup",
    "rowheader",
    "scrollbar",
    "search",
    "searchbox",
    "separator",
    "slider",
    "spinbutton",
    "status",
    "strong",
    "subscript",
    "suggestion",
    "superscript",
    "switch",
    "tab",
    "table",
    "tablist",
    "tabpanel",
    "term",
    "textbox",
    "time",
    "timer",
    "toolbar",
    "tooltip",
    "tree",
    "treegrid",
    "treeitem",
];

/// Roles that get a ref: things a person can act on. A `matches!`, not a
/// list searched in order: every element of a snapshot asks this.
pub fn is_interactive(role: &str) -> bool {
    matches!(
        role,
        "link"
            | "button"
            | "textbox"
            | "searchbox"
            | "checkbox"
            | "radio"
            | "combobox"
            | "listbox"
            | "option"
            | "menuitem"
            | "menuitemcheckbox"
            | "menuitemradio"
            | "tab"
            | "switch"
            | "slider"
            | "spinbutton"
            | "treeitem"
            | "scrollbar"
            | "gridcell"
    )
}

/// Roles whose accessible name may come from their content (ARIA 1.2
/// "name from: contents").
pub fn name_from_content(role: &str) -> bool {
    matches!(
        role,
        "button"
            | "cell"
            | "checkbox"
            | "columnheader"
            | "gridcell"
            | "heading"
            | "link"
            | "menuitem"
            | "menuitemcheckbox"
            | "menuitemradio"
            | "option"
            | "radio"
            | "row"
            | "rowheader"
            | "switch"
            | "tab"
            | "tooltip"
            | "treeitem"
            | "caption"
            | "code"
            | "deletion"
            | "emphasis"
            | "insertion"
            | "mark"
            | "strong"
            | "subscript"
            | "superscript"
            | "term"
            | "time"
            | "comment"
            | "suggestion"
    )
}

/// Roles the snapshot lists (others — generic, none, text-level
/// semantics, row groups — are folded into their surroundings: their text
/// shows as `text` blocks, their children move up).
pub fn is_listed(role: &str) -> bool {
    is_interactive(role)
        || matches!(
            role,
            "alert"
                | "alertdialog"
                | "application"
                | "article"
                | "banner"
                | "cell"
                | "columnheader"
                | "complementary"
                | "contentinfo"
                | "dialog"
                | "feed"
                | "figure"
                | "form"
                | "grid"
                | "gridcell"
                | "group"
                | "heading"
                | "img"
                | "iframe"
                | "list"
                | "listitem"
                | "log"
                | "main"
                | "marquee"
                | "math"
                | "menu"
                | "menubar"
                | "meter"
                | "navigation"
                | "note"
                | "progressbar"
                | "radiogroup"
                | "region"
                | "row"
                | "rowheader"
                | "search"
                | "status"
                | "table"
                | "tablist"
                | "tabpanel"
                | "timer"
                | "toolbar"
                | "tooltip"
                | "tree"
                | "treegrid"
        )
}

pub fn input_type(el: &Element) -> String {
    attr(el, "type").map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).unwrap_or_else(|| "text".into())
}

/// A role from a `role` attribute: the first token that names a concrete
/// role, normalised (`image` → `img`, `presentation` → `none`,
/// `directory` → `list`).
pub fn explicit_role(value: &str) -> Option<&'static str> {
    for token in value.split_ascii_whitespace() {
        let t = token.to_ascii_lowercase();
        if let Some(r) = ARIA_ROLES.iter().find(|r| **r == t) {
            return Some(match *r {
                "image" => "img",
                "presentation" => "none",
                "directory" => "list",
                r => r,
            });
        }
    }
    None
}

/// Global ARIA attributes that make `role="none"` be ignored (ARIA 1.2
/// presentational role conflict resolution).
fn has_global_aria(el: &Element) -> bool {
    [
        "aria-label",
        "aria-labelledby",
        "aria-describedby",
        "aria-description",
        "aria-live",
        "aria-owns",
        "aria-controls",
        "aria-details",
        "aria-keyshortcuts",
        "aria-roledescription",
        "aria-busy",
        "aria-dropeffect",
        "aria-flowto",
        "aria-grabbed",
        "aria-haspopup",
        "aria-errormessage",
    ]
    .iter()
    .any(|a| has(el, a))
}

fn focusable(el: &Element, tag: &str) -> bool {
    has(el, "tabindex")
        || match tag {
            "a" | "area" => has(el, "href") || has(el, "xlink:href"),
            "button" | "select" | "textarea" => !has(el, "disabled"),
            "input" => !has(el, "disabled") && !attr(el, "type").is_some_and(|t| t.eq_ignore_ascii_case("hidden")),
            "summary" | "iframe" => true,
            _ => has(el, "contenteditable"),
        }
}

/// The role of `el` as listed (`None` for hidden inputs and elements with
/// no role at all). `generic` and `none` are returned as such.
pub fn role_of(el: &Element, tag: &str, a: crate::dom::Attrs) -> Option<&'static str> {
    role_in(el, tag, a, None)
}

/// [`role_of`] for the walk, which knows more than the element: whether its
/// DOM parent is a `ul`, `ol` or `menu` (`None`: not known, asked of the
/// element; a list item's role depends on it).
pub fn role_in(el: &Element, tag: &str, a: crate::dom::Attrs, parent_list: Option<bool>) -> Option<&'static str> {
    if a.aria
        && let Some(r) = attr(el, "role")
    {
        // The first token that names a concrete role usable here.
        for token in r.split_ascii_whitespace() {
            let Some(role) = explicit_role(token) else { continue };
            if role == "none" {
                if !focusable(el, tag) && !has_global_aria(el) {
                    return Some("none");
                }
                break;
            }
            if role == "generic" && focusable(el, tag) {
                break;
            }
            if in_required_context(el, role) {
                return Some(role);
            }
        }
    }
    implicit_role(el, tag, a, parent_list)
}

/// Roles that only mean something inside their container (ARIA "required
/// context"); orphans fall back to the implicit role, as in Chromium.
/// `form` and `region` need an author-given name to be landmarks.
fn in_required_context(el: &Element, role: &str) -> bool {
    let context = match role {
        "menuitem" | "menuitemcheckbox" | "menuitemradio" => "[role=menu],[role=menubar],[role=group]",
        "gridcell" | "columnheader" | "rowheader" => "[role=row],tr",
        "option" => "[role=listbox],[role=combobox],select,datalist,[role=group]",
        "treeitem" => "[role=tree],[role=treegrid],[role=group]",
        "form" | "region" => return named_by_author(el),
        _ => return true,
    };
    el.parent_element().and_then(|p| crate::dom::closest(&p, context)).is_some()
}

/// Ancestors that scope `header`/`footer` (and unnamed `aside`) away from
/// the page landmarks.
const SECTIONING: &str =
    "article,aside,main,nav,section,[role=article],[role=complementary],[role=main],[role=navigation],[role=region]";

fn named_by_author(el: &Element) -> bool {
    attr_nonempty(el, "aria-label").is_some() || attr_nonempty(el, "aria-labelledby").is_some() || has(el, "title")
}

fn inside(el: &Element, selector: &'static str) -> bool {
    el.parent_element().and_then(|p| crate::dom::closest(&p, selector)).is_some()
}

/// The table-ish role of the closest table: cells in grids are gridcells.
fn table_kind(el: &Element) -> Option<&'static str> {
    let table = crate::dom::closest(el, "table,[role=table],[role=grid],[role=treegrid]")?;
    match attr(&table, "role").as_deref().and_then(explicit_role) {
        Some(r @ ("grid" | "treegrid")) => Some(r),
        Some("none") => None,
        _ => Some("table"),
    }
}

fn implicit_role(el: &Element, tag: &str, a: crate::dom::Attrs, parent_list: Option<bool>) -> Option<&'static str> {
    let role = match tag {
        "a" | "area" => {
            // An SVG link may give its target only as `xlink:href`.
            if has(el, "href") || has(el, "xlink:href") { "link" } else { "generic" }
        }
        "address" | "details" | "fieldset" | "hgroup" | "optgroup" => "group",
        "article" => "article",
        "aside" => {
            if inside(el, "article,aside,nav,section") && !named_by_author(el) {
                "generic"
            } else {
                "complementary"
            }
        }
        "blockquote" => "blockquote",
        "button" => "button",
        "caption" => "caption",
        "code" => "code",
        "datalist" => "listbox",
        "del" | "s" => "deletion",
        "dd" => "definition",
        "dfn" | "dt" => "term",
        "dialog" => "dialog",
        "dl" | "menu" | "ol" | "ul" => "list",
        "em" => "emphasis",
        "figure" => "figure",
        "footer" => {
            if inside(el, SECTIONING) {
                "generic"
            } else {
                "contentinfo"
            }
        }
        "header" => {
            if inside(el, SECTIONING) {
                "generic"
            } else {
                "banner"
            }
        }
        "form" => "form",
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => "heading",
        "hr" => "separator",
        "iframe" | "frame" => "iframe",
        "img" => {
            let labelled = attr_nonempty(el, "aria-label").is_some() || attr_nonempty(el, "aria-labelledby").is_some();
            if attr(el, "alt").is_some_and(|a| a.is_empty()) && !labelled { "none" } else { "img" }
        }
        "svg" => {
            if named_by_author(el) || crate::dom::query_selector(el, ":scope > title").is_some() {
                "img"
            } else {
                return None;
            }
        }
        "input" => {
            let ty = input_type(el);
            match ty.as_str() {
                "hidden" => return None,
                "button" | "submit" | "reset" | "image" => "button",
                "checkbox" => {
                    if has(el, "switch") {
                        "switch"
                    } else {
                        "checkbox"
                    }
                }
                "radio" => "radio",
                "range" => "slider",
                "number" => "spinbutton",
                "search" if !has(el, "list") => "searchbox",
                "text" | "email" | "tel" | "url" | "search" if has(el, "list") => "combobox",
                "file" | "color" => "button",
                _ => "textbox",
            }
        }
        "ins" => "insertion",
        "li" => {
            let in_list = parent_list.unwrap_or_else(|| {
                el.parent_element().is_some_and(|p| matches!(p.local_name().as_str(), "ul" | "ol" | "menu"))
            });
            if in_list { "listitem" } else { "generic" }
        }
        "main" => "main",
        "mark" => "mark",
        "math" => "math",
        "meter" => "meter",
        "nav" => "navigation",
        "option" => "option",
        "output" => "status",
        "p" => "paragraph",
        "progress" => "progressbar",
        "search" => "search",
        "section" => {
            if named_by_author(el) {
                "region"
            } else {
                "generic"
            }
        }
        "select" => {
            let multi = has(el, "multiple")
                || attr(el, "size").and_then(|s| s.trim().parse::<u32>().ok()).is_some_and(|s| s > 1);
            if multi { "listbox" } else { "combobox" }
        }
        "strong" => "strong",
        "sub" => "subscript",
        "sup" => "superscript",
        "summary" => "button",
        "table" => "table",
        "tbody" | "thead" | "tfoot" => "rowgroup",
        "td" => match table_kind(el) {
            Some("grid" | "treegrid") => "gridcell",
            Some(_) => "cell",
            None => "generic",
        },
        "th" => {
            if table_kind(el).is_none() {
                "generic"
            } else {
                th_role(el)
            }
        }
        "textarea" => "textbox",
        "time" => "time",
        "tr" => {
            if table_kind(el).is_some() {
                "row"
            } else {
                "generic"
            }
        }
        "b" | "bdi" | "bdo" | "body" | "data" | "div" | "i" | "pre" | "q" | "samp" | "small" | "span" | "u" => {
            if a.any && is_editable_root(el) { "textbox" } else { "generic" }
        }
        _ => {
            if a.any && is_editable_root(el) {
                "textbox"
            } else {
                return None;
            }
        }
    };
    Some(role)
}

fn is_editable_root(el: &Element) -> bool {
    match attr(el, "contenteditable").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        Some("" | "true" | "plaintext-only") => {
            !el.parent_element().is_some_and(|p| crate::dom::prop_bool(&p, "isContentEditable"))
        }
        _ => false,
    }
}

/// `th`: columnheader unless `scope=row`/`rowgroup`, or it sits in a row
/// whose other cells are data cells and it is not in the first row.
fn th_role(el: &Element) -> &'static str {
    match attr(el, "scope").map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("row" | "rowgroup") => return "rowheader",
        Some("col" | "colgroup") => return "columnheader",
        _ => {}
    }
    let in_thead = el.parent_element().and_then(|tr| tr.parent_element()).is_some_and(|g| g.local_name() == "thead");
    if in_thead {
        return "columnheader";
    }
    // A header cell first in a row that also holds data cells heads the row.
    let row = el.parent_element();
    let has_td = row.as_ref().is_some_and(|r| crate::dom::query_selector(r, ":scope > td").is_some());
    let first = el.previous_element_sibling().is_none();
    if has_td && first { "rowheader" } else { "columnheader" }
}
