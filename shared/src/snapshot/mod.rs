//! The snapshot model the content script produces, and its compact text
//! rendering for agents (docs/design.md, "Observation").
//!
//! The content script walks the DOM and sends a flat list of [`Node`]s in
//! document order (depth gives the structure). The bridge renders them to
//! lines such as `- button "Delete account" [e12]` and paginates.
//!
//! # Lines
//!
//! Compact, because agents pay for every byte (issue 13: at most 0.4× the
//! bytes of Playwright MCP on the same page, measured side by side in
//! `cargo xtask bench snapshot`). One element a line: one space of
//! indentation per level ([`MAX_INDENT`] at most), `- `, then the role,
//! the quoted name, a table's `(R rows × C cols)` or a list's `(N items)`,
//! the `[ref]`, `level=N`, state words, `: "value"`, `desc="…"`, each only
//! when there is one. A text block is a quoted string alone (`- "Order
//! total: 12 €"`): no role word.
//!
//! A list item or table row ([`ROW_ROLES`]) whose content is only leaf
//! lines one level down (at most [`MAX_ROW_PARTS`] parts, none with
//! options) is one *row line*: its own line, then each child after
//! [`ROW_SEPARATOR`] (`|`), written as it would be on its own line without
//! indentation and dash (a text block as `text "…"`). A list item that has
//! only its text (the first text block of an item moves onto the item,
//! `- listitem: "…"`) starts its row line with that quoted text alone,
//! without `listitem:`. The row line right
//! below a row line of the same shape (same depth, same roles part by part)
//! leaves out the role word of each part that has a name or text — the
//! row above says it — so a long list of alike rows costs little more than
//! what differs:
//!
//! ```text
//! - list (2000 items)
//!  - "Order 1 · shipped to Berlin"|link "Item 1" [e10]|button "Edit" [e11]|button "Delete" [e12]
//!  - "Order 2 · pending to Lyon"|"Item 2"[e13]|"Edit"[e14]|"Delete"[e15]
//! - table "Orders" (3 rows × 2 cols)
//!  - row|columnheader "Order"|columnheader "Total"
//!  - row|cell "A-1"|cell "12 €"
//!  - row|"A-2"|"9 €"
//! ```
//!
//! Siblings of one shape that no list or table holds get row lines too:
//! the content script marks the lines of each generic element (a plain
//! `<div>` row, a product card) whose lines are all leaves at one depth
//! ([`Node::group`]); two or more such groups in a row with the same
//! roles part by part are written one a line, every line a part — the
//! first row in full (a text block as `text "…"`), the rows below it
//! without the role words. A lone group keeps a line an element.
//!
//! ```text
//! - text "Order 1 · shipped"|link "Item 1" [e10]|button "Edit" [e11]
//! - "Order 2 · pending"|"Item 2"[e12]|"Edit"[e13]
//! ```
//!
//! So in a row line the first part, when it is a quoted string, is a list
//! item's text (or, below a row that starts with a role word, a part of
//! that role), and any later part that starts with a quote takes the role
//! of the same part of the row above; every part keeps its name, ref, states and value (a
//! ref is never without its name), except that such a quoted part also
//! leaves out its `level=N` and `offscreen` when the part above has the
//! same ([`CARRIED`]): where a card sits, not what it is. A row whose
//! quoted part lacks a level or `offscreen` the part above has is written
//! in full, so a quoted part without them always has those above:
//!
//! ```text
//! - img "Photo 1"|heading "Lamp" level=3|text "12 €"|button "Add" [e4]
//! - "Photo 5"|"Desk"|"80 €"|"Add"[e8] offscreen
//! - "Photo 6"|"Chair"|"40 €"|"Add"[e9]
//! ```
//!
//! (the second and third rows' headings are level 3, the third row's
//! button is offscreen). In a quoted part of a short row the ref follows
//! the closing quote without a space (`"Edit"[e14]`: one o200k_base token
//! less a ref, measured on the 2,000-row list). States that say what an element is (`checked`,
//! `disabled`, …) are always written. A short row that starts a page is
//! written in full, so each page reads on its own. Quotes escape `"`, `\`
//! and line breaks, so no page text can end a part, a line or a row.
//!
//! # Choices
//!
//! A drop-down `<select>` (role `combobox`) carries its options, and an
//! input with a `<datalist>` its suggestions ([`Choices`]); they are
//! rendered on one line of their own right under the element's line, one
//! step deeper, as part of the same node (pages never split the two):
//!
//! ```text
//! - combobox "Delivery" [e9]: "Standard (3–5 days)"
//!  options: "Pick up in store"; group "Standard": "Economy", *"Standard (3–5 days)"; group "Express": "Same day" disabled
//! - combobox "Country" [e10]: "Sweden"
//!  options: "Afghanistan", "Åland Islands", …, *"Sweden" (+225 more: browser_snapshot scope=e10 lists them all)
//! - combobox "City" [e11]
//!  suggestions: "Stockholm", "Göteborg"
//! ```
//!
//! Labels are quoted like names (cut to the name limit, credentials
//! redacted), in document order, separated by `, `; `*` marks the current
//! choice (never in a sensitive field, whose value is masked), ` disabled`
//! an option that cannot be chosen; an `<optgroup>` opens with `group
//! "label": ` after a `; `. Hidden options are not listed. At most
//! [`MAX_OPTIONS_SHOWN`](crate::limits::MAX_OPTIONS_SHOWN) are listed: the
//! first ones, and the current one after `…, ` when it comes later; `(+N
//! more…)` counts the others and, when the element has a ref, names the
//! scoped snapshot that lists them. A snapshot scoped to the element itself
//! lists up to `MAX_OPTIONS_SEEN` (the options `browser_select_option` can
//! choose from), within its `max_chars`. Listboxes (`<select multiple>`,
//! `size` > 1, ARIA listboxes and open popups) list their options as
//! `option` lines instead, each with its `selected` state and a ref.
//!
//! # Layout
//!
//! [`model`] is the wire model: what the bridge asks for and what the
//! content script answers ([`Node`]s as short arrays, [`WIRE_ROLES`]).
//! [`render`](mod@render) turns it into the lines above and pages them; its
//! [`PageEnd`] tells the walk when a page is complete. Both are re-exported
//! here, so `shared::snapshot::X` names every item.

pub mod model;
pub mod render;

pub use model::*;
pub use render::*;
