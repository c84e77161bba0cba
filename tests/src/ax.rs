//! Chromium's accessibility tree as the yardstick for snapshots: the
//! interactive nodes of a page (main frame and same-origin frames, in tree
//! order), a way to tag their DOM elements so snapshot lines can be paired
//! with them, and the alignment of the two lists.
//!
//! Pairing: [`mark_elements`] sets `aria-description="ax-<n>"` on the DOM
//! element behind each interactive node (a description changes neither
//! role nor name). When the snapshot shows descriptions, lines are paired
//! by that marker; otherwise by a weighted LCS on document order
//! ([`align`]).

use std::collections::HashMap;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::cdp::{AxNode, CdpSession};

/// Chromium's role strings that differ from ours (ARIA / HTML-AAM names),
/// in one table: `(chromium, ours)`.
pub const ROLE_MAP: &[(&str, &str)] = &[
    ("image", "img"),
    ("ComboBoxSelect", "combobox"),
    ("ComboBoxMenuButton", "combobox"),
    ("PopUpButton", "combobox"),
    ("MenuListPopup", "listbox"),
    ("MenuListOption", "option"),
    ("ListBoxOption", "option"),
    ("DisclosureTriangle", "button"),
    ("ToggleButton", "button"),
    ("TextField", "textbox"),
    ("TextFieldWithComboBox", "combobox"),
    ("SearchBox", "searchbox"),
    ("InputTime", "textbox"),
    ("DateTime", "textbox"),
    ("Date", "textbox"),
    ("ColorWell", "button"),
    ("Iframe", "iframe"),
    ("LabelText", "label"),
];

/// Roles (after [`ROLE_MAP`]) that are interactive whatever their focusability.
pub const INTERACTIVE_ROLES: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// Further ARIA widget roles (ARIA 1.2 §5.3.2 widget and composite roles)
/// that count as interactive when Chromium says the node is focusable.
pub const FOCUSABLE_WIDGET_ROLES: &[&str] = &[
    "gridcell",
    "tabpanel",
    "scrollbar",
    "separator",
    "progressbar",
    "grid",
    "treegrid",
    "tree",
    "menu",
    "menubar",
    "tablist",
    "radiogroup",
    "row",
    "columnheader",
    "rowheader",
];

/// Chromium nodes whose whole subtree is left out (none at present).
pub const SKIP_SUBTREE: &[&str] = &[];

/// Chromium nodes left out themselves, their children kept: a drop-down
/// `<select>`'s popup, an unnamed `listbox` no snapshot shows; its options
/// count, against the select's `options:` line ([`our_lines`] reads its
/// choices as `option`s).
pub const SKIP_NODE: &[&str] = &["MenuListPopup"];

/// Chromium nodes whose descendants are left out: the user-agent shadow
/// parts of native inputs (the hour/minute spinbuttons and picker button
/// of a time or date input); the input itself counts.
pub const SKIP_DESCENDANTS: &[&str] = &["InputTime", "DateTime", "Date", "InputDate", "InputDateTime"];

/// Our role for a Chromium role string.
pub fn our_role(chromium: &str) -> String {
    ROLE_MAP.iter().find(|(c, _)| *c == chromium).map_or_else(|| chromium.to_string(), |(_, o)| (*o).to_string())
}

/// Collapses whitespace runs to one space and trims.
pub fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// True when our (possibly cut, `…`-terminated) name is Chromium's name.
pub fn names_agree(chromium: &str, ours: &str) -> bool {
    let (c, o) = (norm(chromium), norm(ours));
    if c == o {
        return true;
    }
    // Names are cut to MAX_NAME_CHARS with a trailing `…`.
    if let Some(prefix) = o.strip_suffix('…')
        && c.chars().count() > shared::limits::MAX_NAME_CHARS
    {
        return c.starts_with(prefix.trim_end());
    }
    false
}

/// One interactive node of Chromium's tree.
#[derive(Debug, Clone)]
pub struct AxInteractive {
    /// Index in tree order (the `ax-<n>` marker).
    pub n: usize,
    /// Chromium's role string.
    pub chromium_role: String,
    /// The role in our vocabulary.
    pub role: String,
    pub name: String,
    pub backend_node_id: Option<i64>,
    /// Chromium's states (`focusable`, `checked`, …) that are on.
    pub states: Vec<String>,
}

/// Everything read from one page's accessibility trees.
#[derive(Debug, Clone, Default)]
pub struct AxPage {
    /// Interactive nodes in tree order, frames spliced in at their iframe.
    pub interactive: Vec<AxInteractive>,
    /// Every non-ignored node, roles in our vocabulary (for
    /// [`crate::Expectations::check_ax`]).
    pub all: Vec<AxNode>,
    /// Frames that were left out (cross-origin), by URL.
    pub skipped_frames: Vec<String>,
}

fn prop_on(n: &Value, name: &str) -> bool {
    n["properties"].as_array().is_some_and(|ps| {
        ps.iter().any(|p| {
            p["name"] == name && (p["value"]["value"].as_bool() == Some(true) || p["value"]["value"] == "true")
        })
    })
}

fn states_of(n: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for p in n["properties"].as_array().cloned().unwrap_or_default() {
        let name = p["name"].as_str().unwrap_or("").to_string();
        let v = &p["value"]["value"];
        if v.as_bool() == Some(true) || v.as_str() == Some("true") {
            out.push(name);
        } else if name == "level" {
            out.push(format!("level={v}"));
        } else if v.as_str() == Some("mixed") {
            out.push(format!("{name}=mixed"));
        }
    }
    out
}

/// Is this (non-ignored) node interactive by the test's definition?
fn is_interactive(role: &str, n: &Value) -> bool {
    INTERACTIVE_ROLES.contains(&role) || (FOCUSABLE_WIDGET_ROLES.contains(&role) && prop_on(n, "focusable"))
}

/// Reads the accessibility trees of the page's main frame and of every
/// same-origin frame (spliced in at their `<iframe>`), in tree order.
pub async fn read_page(page: &CdpSession) -> Result<AxPage> {
    page.call("Accessibility.enable", json!({})).await?;
    page.call("DOM.enable", json!({})).await?;
    let tree = page.call("Page.getFrameTree", json!({})).await?;
    let main = &tree["frameTree"]["frame"];
    let main_id = main["id"].as_str().context("no main frame id")?.to_string();
    let origin = main["securityOrigin"].as_str().unwrap_or("").to_string();
    let mut origins = HashMap::new();
    collect_origins(&tree["frameTree"], &mut origins);

    let mut out = AxPage::default();
    let mut interactive = Vec::new();
    walk_frame(page, &main_id, &origin, &origins, &mut interactive, &mut out, 0).await?;
    for (i, mut node) in interactive.into_iter().enumerate() {
        node.n = i;
        out.interactive.push(node);
    }
    Ok(out)
}

fn collect_origins(ft: &Value, out: &mut HashMap<String, (String, String)>) {
    let f = &ft["frame"];
    if let Some(id) = f["id"].as_str() {
        out.insert(
            id.to_string(),
            (f["securityOrigin"].as_str().unwrap_or("").to_string(), f["url"].as_str().unwrap_or("").to_string()),
        );
    }
    for c in ft["childFrames"].as_array().cloned().unwrap_or_default() {
        collect_origins(&c, out);
    }
}

/// Walks one frame's tree in order; recursion into child frames happens at
/// their iframe node.
fn walk_frame<'a>(
    page: &'a CdpSession,
    frame_id: &'a str,
    origin: &'a str,
    origins: &'a HashMap<String, (String, String)>,
    interactive: &'a mut Vec<AxInteractive>,
    out: &'a mut AxPage,
    depth: u32,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send + 'a>> {
    Box::pin(async move {
        if depth > 8 {
            return Ok(());
        }
        let r = page
            .call("Accessibility.getFullAXTree", json!({ "frameId": frame_id }))
            .await
            .with_context(|| format!("getFullAXTree of frame {frame_id}"))?;
        let nodes = r["nodes"].as_array().cloned().unwrap_or_default();
        let by_id: HashMap<&str, &Value> = nodes.iter().filter_map(|n| Some((n["nodeId"].as_str()?, n))).collect();
        let Some(root) = nodes.iter().find(|n| n.get("parentId").is_none()).or(nodes.first()) else {
            return Ok(());
        };
        // Iterative pre-order walk (children in childIds order), leaving
        // out SKIP_SUBTREE subtrees and SKIP_DESCENDANTS descendants.
        let mut stack: Vec<&Value> = vec![root];
        let mut order: Vec<&Value> = Vec::new();
        while let Some(n) = stack.pop() {
            let role = n["role"]["value"].as_str().unwrap_or("");
            if SKIP_SUBTREE.contains(&role) {
                continue;
            }
            order.push(n);
            if SKIP_DESCENDANTS.contains(&role) {
                continue;
            }
            let kids: Vec<&Value> = n["childIds"]
                .as_array()
                .map(|ids| ids.iter().filter_map(|id| id.as_str().and_then(|id| by_id.get(id).copied())).collect())
                .unwrap_or_default();
            for k in kids.into_iter().rev() {
                stack.push(k);
            }
        }
        for n in order {
            let chromium_role = n["role"]["value"].as_str().unwrap_or("").to_string();
            let ignored = n["ignored"].as_bool() == Some(true);
            let backend = n["backendDOMNodeId"].as_i64();
            if !ignored {
                out.all.push(AxNode {
                    role: our_role(&chromium_role),
                    name: n["name"]["value"].as_str().unwrap_or("").to_string(),
                    value: n["value"]["value"].as_str().map(str::to_string).unwrap_or_default(),
                    states: states_of(n),
                });
                let role = our_role(&chromium_role);
                if is_interactive(&role, n) && !SKIP_NODE.contains(&chromium_role.as_str()) {
                    interactive.push(AxInteractive {
                        n: 0,
                        chromium_role: chromium_role.clone(),
                        role,
                        name: n["name"]["value"].as_str().unwrap_or("").to_string(),
                        backend_node_id: backend,
                        states: states_of(n),
                    });
                }
            }
            // A frame owner: splice in the child frame's tree when same-origin.
            if !ignored
                && chromium_role == "Iframe"
                && let Some(b) = backend
                && let Ok(d) = page.call("DOM.describeNode", json!({ "backendNodeId": b })).await
                && let Some(child) = d["node"]["frameId"].as_str()
                && child != frame_id
            {
                let (child_origin, url) = origins.get(child).cloned().unwrap_or_default();
                if child_origin == origin {
                    walk_frame(page, child, origin, origins, interactive, out, depth + 1).await?;
                } else {
                    out.skipped_frames.push(url);
                }
            }
        }
        Ok(())
    })
}

/// Sets `aria-description="ax-<n>"` on the element behind each node.
/// Returns how many elements were tagged.
pub async fn mark_elements(page: &CdpSession, nodes: &[AxInteractive]) -> Result<usize> {
    let mut marked = 0;
    for node in nodes {
        let Some(b) = node.backend_node_id else { continue };
        let Ok(r) = page.call("DOM.resolveNode", json!({ "backendNodeId": b })).await else { continue };
        let Some(obj) = r["object"]["objectId"].as_str() else { continue };
        let set = page
            .call(
                "Runtime.callFunctionOn",
                json!({
                    "objectId": obj,
                    "functionDeclaration": "function (d) { if (this.nodeType === 1) { this.setAttribute('aria-description', d); return true; } return false; }",
                    "arguments": [{ "value": format!("ax-{}", node.n) }],
                    "returnByValue": true,
                }),
            )
            .await;
        if set.is_ok_and(|v| v["result"]["value"] == true) {
            marked += 1;
        }
        let _ = page.call("Runtime.releaseObject", json!({ "objectId": obj })).await;
    }
    Ok(marked)
}

/// One element line of our snapshot that carries a ref.
#[derive(Debug, Clone)]
pub struct OurLine {
    pub role: String,
    pub name: String,
    pub element_ref: String,
    /// The `ax-<n>` marker, when the line shows the description.
    pub marker: Option<usize>,
    pub line: String,
}

/// The `ax-<n>` number in a line, if any.
fn marker_in(line: &str) -> Option<usize> {
    let mut rest = line;
    while let Some(i) = rest.find("ax-") {
        let before = rest[..i].chars().last();
        let digits: String = rest[i + 3..].chars().take_while(char::is_ascii_digit).collect();
        let after = rest[i + 3 + digits.len()..].chars().next();
        if !digits.is_empty()
            && before.is_none_or(|c| !c.is_alphanumeric())
            && after.is_none_or(|c| !c.is_alphanumeric() && c != '-')
        {
            return digits.parse().ok();
        }
        rest = &rest[i + 3..];
    }
    None
}

/// The elements with a ref, in order (a line, or a part of a row line);
/// each choice of an `options:` line after one becomes an `option` line
/// with that element's ref (a select's options are Chromium's
/// `MenuListOption`s). `suggestions:` lines (a datalist) are not counted:
/// Chromium shows them only while the suggestions pop up.
pub fn our_lines(snapshot: &str) -> Vec<OurLine> {
    let by_line = crate::expect::elements_by_line(snapshot);
    let mut parts = by_line.into_iter().peekable();
    let mut out: Vec<OurLine> = Vec::new();
    let mut last_ref: Option<String> = None;
    for (n, l) in snapshot.lines().enumerate() {
        if let Some(c) = crate::expect::parse_choices(l) {
            if let (false, Some(r)) = (c.suggestions, &last_ref) {
                for choice in c.choices {
                    out.push(OurLine {
                        role: "option".into(),
                        name: choice.label,
                        element_ref: r.clone(),
                        marker: None,
                        line: l.trim().to_string(),
                    });
                }
            }
            continue;
        }
        last_ref = None;
        while let Some((_, p, text)) = parts.next_if(|(at, _, _)| *at == n) {
            let Some(r) = p.tokens.iter().find(|t| {
                t.strip_prefix('[').and_then(|t| t.strip_suffix(']')).is_some_and(shared::tools::is_valid_ref)
            }) else {
                continue;
            };
            let element_ref = r[1..r.len() - 1].to_string();
            last_ref = Some(element_ref.clone());
            out.push(OurLine {
                role: p.role.clone(),
                name: p.name.clone().unwrap_or_default(),
                element_ref,
                marker: marker_in(&text),
                line: text,
            });
        }
    }
    out
}

/// How Chromium's interactive nodes were paired with our lines:
/// `pairs[i]` is the index in `ours` paired with `ax[i]`.
#[derive(Debug, Clone)]
pub struct Alignment {
    pub pairs: Vec<Option<usize>>,
    /// True when the snapshot showed `ax-<n>` markers (the rest was
    /// paired by LCS).
    pub by_marker: bool,
}

/// Pairs by the `ax-<n>` markers the snapshot shows, then the rest (nodes
/// whose description the snapshot does not show, e.g. one replaced by
/// `aria-describedby`) by a weighted LCS over document order: same role and
/// name 3, same role 2, same non-empty name 1; different role and name
/// never pair. Lines carrying a marker only pair by it.
pub fn align(ax: &[AxInteractive], ours: &[OurLine]) -> Alignment {
    let mut pairs = vec![None; ax.len()];
    let mut taken = vec![false; ours.len()];
    let by_marker = ours.iter().any(|l| l.marker.is_some());
    for (j, l) in ours.iter().enumerate() {
        if let Some(m) = l.marker
            && let Some(i) = ax.iter().position(|a| a.n == m)
            && pairs[i].is_none()
        {
            pairs[i] = Some(j);
            taken[j] = true;
        }
    }
    let rest_ax: Vec<usize> = (0..ax.len()).filter(|&i| pairs[i].is_none()).collect();
    let rest_ours: Vec<usize> = (0..ours.len()).filter(|&j| !taken[j] && ours[j].marker.is_none()).collect();
    let score = |a: &AxInteractive, o: &OurLine| -> u32 {
        let role = a.role == o.role;
        let name = names_agree(&a.name, &o.name);
        match (role, name) {
            (true, true) => 3,
            (true, false) => 2,
            (false, true) if !norm(&a.name).is_empty() => 1,
            _ => 0,
        }
    };
    let (n, m) = (rest_ax.len(), rest_ours.len());
    let mut dp = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let s = score(&ax[rest_ax[i]], &ours[rest_ours[j]]);
            let take = if s > 0 { s + dp[i + 1][j + 1] } else { 0 };
            dp[i][j] = take.max(dp[i + 1][j]).max(dp[i][j + 1]);
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        let s = score(&ax[rest_ax[i]], &ours[rest_ours[j]]);
        if s > 0 && dp[i][j] == s + dp[i + 1][j + 1] {
            pairs[rest_ax[i]] = Some(rest_ours[j]);
            i += 1;
            j += 1;
        } else if dp[i][j] == dp[i + 1][j] {
            i += 1;
        } else {
            j += 1;
        }
    }
    Alignment { pairs, by_marker }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ax(n: usize, role: &str, name: &str) -> AxInteractive {
        AxInteractive {
            n,
            chromium_role: role.into(),
            role: role.into(),
            name: name.into(),
            backend_node_id: None,
            states: vec![],
        }
    }

    #[test]
    fn markers_are_found_only_as_whole_tokens() {
        assert_eq!(marker_in(r#"- button "Save" [e3] desc="ax-12""#), Some(12));
        assert_eq!(marker_in(r#"- button "Save" [e3] ax-7"#), Some(7));
        assert_eq!(marker_in(r#"- button "max-3" [e3]"#), None);
        assert_eq!(marker_in(r#"- button "Save" [e3]"#), None);
    }

    #[test]
    fn lcs_pairs_in_order_and_reports_missing() {
        let a = vec![ax(0, "link", "Home"), ax(1, "button", "Save"), ax(2, "textbox", "Email"), ax(3, "button", "Go")];
        let snap = "- link \"Home\" [e1]\n- textbox \"E-mail\" [e2]\n- button \"Go\" [e3]\n- heading \"X\" level=1\n";
        let ours = our_lines(snap);
        assert_eq!(ours.len(), 3);
        let al = align(&a, &ours);
        assert!(!al.by_marker);
        assert_eq!(al.pairs, vec![Some(0), None, Some(1), Some(2)]);
    }

    #[test]
    fn markers_pair_first_and_the_rest_by_order() {
        let a = vec![ax(0, "link", "Home"), ax(1, "textbox", "Password"), ax(2, "button", "Go")];
        let snap = "- button \"Go\" [e3] desc=\"ax-2\"\n- link \"Start\" [e1] desc=\"ax-0\"\n- textbox \"Password\" [e2] desc=\"At least 12\"\n";
        let al = align(&a, &our_lines(snap));
        assert!(al.by_marker);
        assert_eq!(al.pairs, vec![Some(1), Some(2), Some(0)]);
    }

    #[test]
    fn options_lines_count_as_options_of_their_select() {
        let snap = "- combobox \"Size\" [e4]: \"M\"\n  options: \"S\", *\"M\"; group \"Big\": \"L\" disabled\n- combobox \"City\" [e5]\n  suggestions: \"Oslo\"\n";
        let ours = our_lines(snap);
        let got: Vec<(&str, &str, &str)> =
            ours.iter().map(|o| (o.role.as_str(), o.name.as_str(), o.element_ref.as_str())).collect();
        assert_eq!(
            got,
            [
                ("combobox", "Size", "e4"),
                ("option", "S", "e4"),
                ("option", "M", "e4"),
                ("option", "L", "e4"),
                ("combobox", "City", "e5")
            ]
        );
    }

    #[test]
    fn cut_names_agree_with_long_names() {
        let long = "word ".repeat(40);
        let mut cut = norm(&long);
        shared::limits::truncate_chars(&mut cut, shared::limits::MAX_NAME_CHARS);
        assert!(names_agree(&long, &cut));
        assert!(!names_agree("Save", "Save…"));
        assert!(names_agree(" Save\n draft ", "Save draft"));
    }
}
