//! The snapshot wire model: requests, the page as the content script saw
//! it, and [`Node`]s in their short array form (module docs of
//! [`crate::snapshot`]).

use serde::{Deserialize, Serialize};

/// What the bridge asks the content script for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotRequest {
    /// Only the subtree of this ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Only elements with a ref (and headings for orientation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interactive_only: bool,
    /// Characters per page of output, as the bridge will render it
    /// ([`RenderOptions::max_chars`](super::RenderOptions::max_chars)).
    #[serde(default = "default_max_chars", skip_serializing_if = "is_default_max_chars")]
    pub max_chars: usize,
    /// The 1-based page the bridge will render: the walk may stop once
    /// that page is complete ([`PageEnd`](super::PageEnd)).
    #[serde(default = "first_page", skip_serializing_if = "is_first_page")]
    pub page: usize,
}

impl Default for SnapshotRequest {
    fn default() -> Self {
        SnapshotRequest { scope: None, interactive_only: false, max_chars: default_max_chars(), page: first_page() }
    }
}

fn default_max_chars() -> usize {
    crate::limits::DEFAULT_SNAPSHOT_CHARS
}

fn is_default_max_chars(n: &usize) -> bool {
    *n == default_max_chars()
}

fn first_page() -> usize {
    1
}

fn is_first_page(n: &usize) -> bool {
    *n == 1
}

/// What the bridge asks for with `browser_extract_text`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextRequest {
    /// Only the text inside this ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// Visible text of a page: one block per paragraph-like element, each cut
/// to [`MAX_TEXT_CHARS`](crate::limits::MAX_TEXT_CHARS). Never holds values
/// of form fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageText {
    pub url: String,
    pub title: String,
    pub blocks: Vec<String>,
}

impl<N> PageSnapshot<N> {
    /// Turns the gathered signals into `challenge` and drops them.
    pub fn decide_challenge(&mut self) {
        if let Some(signals) = self.signals.take() {
            self.challenge = crate::challenge::detect(&signals);
        }
    }
}

/// The page as the content script saw it. `N` is how the nodes are held:
/// read ([`Node`]s, everywhere but in one place) or, as the service worker
/// passes them on, left as the JSON text they came in
/// ([`crate::protocol::PassedSnapshot`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageSnapshot<N = Vec<Node>> {
    pub url: String,
    pub title: String,
    pub nodes: N,
    /// A challenge on the page (CAPTCHA, MFA, login…), surfaced in the header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<crate::challenge::Challenge>,
    /// What the content script saw of the page for challenge detection.
    /// The service worker decides ([`PageSnapshot::decide_challenge`]: real
    /// WASM, several times faster than the content script's wasm2js) and
    /// drops them; they never reach the bridge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<Box<crate::challenge::PageSignals>>,
    /// The walk stopped once the requested page was complete
    /// ([`PageEnd`](super::PageEnd)): `nodes` end partway into the next page and the
    /// number of pages is unknown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// One element a person can see or use.
///
/// On the wire (content script → worker → bridge) a node is a short
/// array, not an object: a 10,000-row page carries tens of thousands of
/// them, and keys were a third of the bytes. `[depth, role, name, ref,
/// extras]`, trailing parts left out when empty (`[2,1,"Edit",7]`,
/// `[3,0,"Total"]`); the role is its index in [`WIRE_ROLES`] (a string
/// for any other), the ref `eN` is the number `N` (a string for any
/// other form); `extras` is an object with the rarer fields under short
/// keys ([`Extras`]). Anything else is refused. Every byte here is
/// encoded by the content script, decoded into a string and copied twice
/// between processes before the bridge reads it (BENCHMARKS.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    /// Nesting depth for indentation (0 = top level).
    pub depth: u16,
    /// Borrowed when the content script names it (no allocation a node),
    /// owned when read from the wire.
    pub role: std::borrow::Cow<'static, str>,
    pub name: String,
    /// `e12`: present on elements an agent can act on.
    pub element_ref: Option<String>,
    /// Heading level 1–6.
    pub level: Option<u8>,
    pub states: Vec<State>,
    /// Current value of a field (already masked for sensitive fields).
    pub value: Option<String>,
    /// Short description (`aria-description`, `aria-describedby`), rendered
    /// last as ` desc="…"` (cut like names).
    pub desc: Option<String>,
    /// Tables and grids: number of rows and columns, rendered as
    /// ` (R rows × C cols)`.
    pub table_size: Option<(u32, u32)>,
    /// Lists, listboxes, menus, trees: number of items, rendered as ` (N items)`.
    pub items: Option<u32>,
    /// A drop-down select's options or a datalist's suggestions, rendered
    /// on the line under this one (module docs, "Choices").
    pub choices: Option<Box<Choices>>,
    /// This node starts a *group*: it and the next `group − 1` nodes are
    /// the lines of one generic element (a plain `<div>` row, a card), all
    /// at this depth and without lines under them. Repeated groups of the
    /// same shape render as row lines (module docs, "Lines"); 0 otherwise.
    pub group: u16,
}

/// Roles sent as numbers (their index) on the wire, the commonest first
/// (a role is looked up by a scan). Append only: an index, once given,
/// keeps its meaning for as long as a content script of an older build
/// may talk to a newer bridge.
pub const WIRE_ROLES: [&str; 24] = [
    TEXT_ROLE,
    "button",
    "link",
    "listitem",
    "cell",
    "row",
    "heading",
    "list",
    "textbox",
    "checkbox",
    "img",
    "combobox",
    "radio",
    "columnheader",
    "table",
    "option",
    "menuitem",
    "tab",
    "navigation",
    "main",
    "banner",
    "contentinfo",
    "region",
    "form",
];

/// The ref `eN` as the number `N`, when it has that form: `e` and a
/// decimal without a sign or leading zero that fits a `u32`, as the content
/// script gives them out (it keys its tables on the number).
pub fn ref_number(r: &str) -> Option<u32> {
    let digits = r.strip_prefix('e')?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The ref `eN` of the number `N`: [`ref_number`]'s inverse. Written
/// digit by digit, not with `format!`: the content script names every
/// interactive element with it, and `core::fmt` is slow under wasm2js
/// (BENCHMARKS.md, "Faster walks").
pub fn ref_name(n: u32) -> String {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut name = String::with_capacity(1 + digits.len() - at);
    name.push('e');
    for &d in &digits[at..] {
        name.push(char::from(d));
    }
    name
}

/// A role or ref on the wire: a number, or a string when it has none.
enum NumberOrString {
    Number(u64),
    String(String),
}

impl<'de> Deserialize<'de> for NumberOrString {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = NumberOrString;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<NumberOrString, E> {
                Ok(NumberOrString::Number(n))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<NumberOrString, E> {
                Ok(NumberOrString::String(s.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<NumberOrString, E> {
                Ok(NumberOrString::String(s))
            }
        }
        d.deserialize_any(V)
    }
}

/// A [`Node`]'s fields after its ref, as its wire form's last part.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Extras {
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    level: Option<u8>,
    #[serde(rename = "s", default, skip_serializing_if = "Vec::is_empty")]
    states: Vec<State>,
    #[serde(rename = "v", default, skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(rename = "ds", default, skip_serializing_if = "Option::is_none")]
    desc: Option<String>,
    #[serde(rename = "rc", default, skip_serializing_if = "Option::is_none")]
    table_size: Option<(u32, u32)>,
    #[serde(rename = "ic", default, skip_serializing_if = "Option::is_none")]
    items: Option<u32>,
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    choices: Option<Box<Choices>>,
    #[serde(rename = "g", default)]
    group: u16,
}

/// [`Extras`] borrowed from a [`Node`] being sent (no copy a node).
#[derive(Serialize)]
struct ExtrasRef<'a> {
    #[serde(rename = "l", skip_serializing_if = "Option::is_none")]
    level: Option<u8>,
    #[serde(rename = "s", skip_serializing_if = "<[State]>::is_empty")]
    states: &'a [State],
    #[serde(rename = "v", skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    #[serde(rename = "ds", skip_serializing_if = "Option::is_none")]
    desc: Option<&'a str>,
    #[serde(rename = "rc", skip_serializing_if = "Option::is_none")]
    table_size: Option<(u32, u32)>,
    #[serde(rename = "ic", skip_serializing_if = "Option::is_none")]
    items: Option<u32>,
    #[serde(rename = "o", skip_serializing_if = "Option::is_none")]
    choices: Option<&'a Choices>,
    #[serde(rename = "g", skip_serializing_if = "is_zero16")]
    group: u16,
}

impl Node {
    /// The rarer fields, when it has any.
    fn extras(&self) -> Option<ExtrasRef<'_>> {
        let any = self.level.is_some()
            || !self.states.is_empty()
            || self.value.is_some()
            || self.desc.is_some()
            || self.table_size.is_some()
            || self.items.is_some()
            || self.choices.is_some()
            || self.group > 0;
        any.then(|| ExtrasRef {
            level: self.level,
            states: &self.states,
            value: self.value.as_deref(),
            desc: self.desc.as_deref(),
            table_size: self.table_size,
            items: self.items,
            choices: self.choices.as_deref(),
            group: self.group,
        })
    }
}

impl Serialize for Node {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let extras = self.extras();
        let len = if extras.is_some() {
            5
        } else if self.element_ref.is_some() {
            4
        } else if !self.name.is_empty() {
            3
        } else {
            2
        };
        let mut seq = s.serialize_seq(Some(len))?;
        seq.serialize_element(&self.depth)?;
        match WIRE_ROLES.iter().position(|r| *r == self.role) {
            Some(i) => seq.serialize_element(&i)?,
            None => seq.serialize_element(&self.role)?,
        }
        if len > 2 {
            seq.serialize_element(&self.name)?;
        }
        if len > 3 {
            match self.element_ref.as_deref().map(|r| (r, ref_number(r))) {
                Some((_, Some(n))) => seq.serialize_element(&n)?,
                other => seq.serialize_element(&other.map(|(r, _)| r))?,
            }
        }
        if let Some(x) = &extras {
            seq.serialize_element(x)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Wire;
        impl<'de> serde::de::Visitor<'de> for Wire {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a node: [depth, role, name, ref, extras] with the trailing parts optional")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                use serde::de::Error;
                let depth = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(0, &self))?;
                let role = match seq.next_element()?.ok_or_else(|| A::Error::invalid_length(1, &self))? {
                    NumberOrString::Number(i) => std::borrow::Cow::Borrowed(
                        *usize::try_from(i)
                            .ok()
                            .and_then(|i| WIRE_ROLES.get(i))
                            .ok_or_else(|| A::Error::custom("unknown role number"))?,
                    ),
                    NumberOrString::String(r) => std::borrow::Cow::Owned(r),
                };
                let name = seq.next_element::<String>()?.unwrap_or_default();
                let element_ref = match seq.next_element::<Option<NumberOrString>>()?.flatten() {
                    Some(NumberOrString::Number(n)) => {
                        Some(ref_name(u32::try_from(n).map_err(|_| A::Error::custom("ref number out of range"))?))
                    }
                    Some(NumberOrString::String(r)) => Some(r),
                    None => None,
                };
                let x = seq.next_element::<Extras>()?.unwrap_or_default();
                if seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    return Err(A::Error::invalid_length(6, &self));
                }
                Ok(Node {
                    depth,
                    role,
                    name,
                    element_ref,
                    level: x.level,
                    states: x.states,
                    value: x.value,
                    desc: x.desc,
                    table_size: x.table_size,
                    items: x.items,
                    choices: x.choices,
                    group: x.group,
                })
            }
        }
        d.deserialize_seq(Wire)
    }
}

/// What a drop-down `<select>` offers or a `<datalist>` suggests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choices {
    /// A datalist's suggestions (`suggestions:`), not a select's options.
    #[serde(rename = "sg", default, skip_serializing_if = "std::ops::Not::not")]
    pub suggestions: bool,
    /// The choices listed, in document order.
    #[serde(rename = "c", default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Choice>,
    /// Choices not listed (`+N more`).
    #[serde(rename = "m", default, skip_serializing_if = "is_zero")]
    pub more: u32,
    /// A snapshot scoped to the element lists the ones not listed here.
    #[serde(rename = "h", default, skip_serializing_if = "std::ops::Not::not")]
    pub scope_lists_more: bool,
    /// Labels of the `<optgroup>`s the items are in ([`Choice::group`]).
    #[serde(rename = "g", default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One option or suggestion.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    #[serde(rename = "t")]
    pub label: String,
    /// The current choice.
    #[serde(rename = "s", default, skip_serializing_if = "std::ops::Not::not")]
    pub selected: bool,
    #[serde(rename = "x", default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// 1-based index into [`Choices::groups`]; 0 outside any group.
    #[serde(rename = "g", default, skip_serializing_if = "is_zero16")]
    pub group: u16,
    /// Choices before this one were left out (the current choice, listed
    /// after the first ones).
    #[serde(rename = "k", default, skip_serializing_if = "std::ops::Not::not")]
    pub gap: bool,
}

fn is_zero16(n: &u16) -> bool {
    *n == 0
}

/// The role of text blocks (paragraphs, loose text). Their text is the
/// node's name and is cut to [`MAX_TEXT_CHARS`](crate::limits::MAX_TEXT_CHARS)
/// rather than to the name limit.
pub const TEXT_ROLE: &str = "text";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Checked,
    Mixed,
    Selected,
    Expanded,
    Collapsed,
    Pressed,
    Disabled,
    Required,
    Readonly,
    Invalid,
    Focused,
    Offscreen,
    /// Clipped to nothing on screen (the screen-reader-only pattern: a box of
    /// at most 1×1 px with its overflow or `clip` hiding it) but exposed to
    /// assistive technology, as Chromium's tree exposes it.
    VisuallyHidden,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Checked => "checked",
            State::Mixed => "mixed",
            State::Selected => "selected",
            State::Expanded => "expanded",
            State::Collapsed => "collapsed",
            State::Pressed => "pressed",
            State::Disabled => "disabled",
            State::Required => "required",
            State::Readonly => "readonly",
            State::Invalid => "invalid",
            State::Focused => "focused",
            State::Offscreen => "offscreen",
            State::VisuallyHidden => "visually-hidden",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_refs_as_given_out_have_a_number() {
        assert_eq!(ref_number("e1"), Some(1));
        assert_eq!(ref_number("e4096"), Some(4096));
        for bad in ["", "e", "e0", "e01", "e-1", "e+1", "E1", "1", "e1 ", "e1.0", "e99999999999"] {
            assert_eq!(ref_number(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ref_names_are_the_numbers_refs_parse_to() {
        for n in [1, 9, 10, 99, 100, 4096, 1_000_000, u32::MAX] {
            let name = ref_name(n);
            assert_eq!(name, format!("e{n}"));
            assert_eq!(ref_number(&name), Some(n));
        }
        // A wire ref past u32 is no ref the content script gave out.
        assert!(serde_json::from_str::<Node>("[0,1,\"Go\",4294967296]").is_err());
        assert_eq!(
            serde_json::from_str::<Node>("[0,1,\"Go\",4294967295]").unwrap().element_ref.as_deref(),
            Some("e4294967295")
        );
    }

    #[test]
    fn nodes_travel_as_short_arrays() {
        let cases = [
            (node(0, "main", "", None), r#"[0,19]"#),
            (node(3, "text", "Total", None), r#"[3,0,"Total"]"#),
            (node(2, "button", "Edit", Some("e7")), r#"[2,1,"Edit",7]"#),
            (node(1, "textbox", "", Some("e1")), r#"[1,8,"",1]"#),
            (Node { level: Some(2), ..node(0, "heading", "Orders", None) }, r#"[0,6,"Orders",null,{"l":2}]"#),
            (Node { group: 4, ..node(1, "text", "Order 1", None) }, r#"[1,0,"Order 1",null,{"g":4}]"#),
            // Roles not in the table and refs of another form as strings.
            (node(1, "switch", "Dark", Some("e08")), r#"[1,"switch","Dark","e08"]"#),
            (node(1, "slider", "", Some("x")), r#"[1,"slider","","x"]"#),
            (
                Node {
                    states: vec![State::Checked, State::Disabled],
                    value: Some("on".into()),
                    desc: Some("d".into()),
                    table_size: Some((3, 4)),
                    items: Some(9),
                    ..node(4, "checkbox", "", Some("e2"))
                },
                r#"[4,9,"",2,{"s":["checked","disabled"],"v":"on","ds":"d","rc":[3,4],"ic":9}]"#,
            ),
        ];
        for (n, json) in cases {
            assert_eq!(serde_json::to_string(&n).unwrap(), json);
            assert_eq!(serde_json::from_str::<Node>(json).unwrap(), n, "{json}");
        }
        // A role or ref sent as a string reads the same as its number.
        assert_eq!(
            serde_json::from_str::<Node>(r#"[2,"button","Edit","e7"]"#).unwrap(),
            node(2, "button", "Edit", Some("e7"))
        );
        // Every role of the table travels as its index and back.
        for (i, role) in WIRE_ROLES.iter().enumerate() {
            let json = serde_json::to_string(&node(0, role, "", None)).unwrap();
            assert_eq!(json, format!("[0,{i}]"));
            assert_eq!(serde_json::from_str::<Node>(&json).unwrap().role, *role);
        }
        // Append only: the indices as first shipped (7471998) keep their
        // roles, so a frame from an older content script reads the same.
        let shipped = [
            TEXT_ROLE,
            "button",
            "link",
            "listitem",
            "cell",
            "row",
            "heading",
            "list",
            "textbox",
            "checkbox",
            "img",
            "combobox",
            "radio",
            "columnheader",
            "table",
            "option",
            "menuitem",
            "tab",
            "navigation",
            "main",
            "banner",
            "contentinfo",
            "region",
            "form",
        ];
        assert_eq!(&WIRE_ROLES[..shipped.len()], &shipped[..], "a shipped role index changed meaning");
        let mut unique = WIRE_ROLES.to_vec();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), WIRE_ROLES.len(), "a role twice in WIRE_ROLES");
        for bad in [
            "[]",
            "[1]",
            r#"["1","x"]"#,
            r#"[1,"x","n","e1",{},0]"#,
            r#"[1,"x","n","e1",{"zz":1}]"#,
            r#"[1,"x","n",5.5]"#,
            r#"[1,24]"#,
            r#"[1,-1]"#,
            r#"[1,"x","n",-3]"#,
            r#"[1,"x","n",true]"#,
            r#"{"d":1,"r":"x"}"#,
            "null",
        ] {
            assert!(serde_json::from_str::<Node>(bad).is_err(), "{bad}");
        }
    }

    fn node(depth: u16, role: &'static str, name: &str, r: Option<&str>) -> Node {
        Node { depth, role: role.into(), name: name.into(), element_ref: r.map(Into::into), ..Node::default() }
    }

    #[test]
    fn requests_serialise_only_what_differs_from_the_default() {
        assert_eq!(serde_json::to_string(&SnapshotRequest::default()).unwrap(), "{}");
        let r: SnapshotRequest = serde_json::from_str("{}").unwrap();
        assert_eq!(r, SnapshotRequest::default());
        let r = SnapshotRequest { max_chars: 500, page: 3, ..SnapshotRequest::default() };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, r#"{"max_chars":500,"page":3}"#);
        assert_eq!(serde_json::from_str::<SnapshotRequest>(&json).unwrap(), r);
    }
}
