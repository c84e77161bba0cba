//! Data-driven snapshot expectations: `fixtures/sites/<site>/<page>.expect.txt`
//! next to each fixture page (format in `fixtures/README.md`).
//!
//! ```text
//! have heading "Account settings" level=1
//! have textbox "Email" [ref] required ="ada@example.test"
//! have checkbox "Remember me" [ref] checked
//! lack hunter2-correct-horse
//! ```

use std::path::{Path, PathBuf};

use crate::cdp::AxNode;

/// One line of an expectations file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expectation {
    /// A snapshot line with this role (one of `roles`) and name, carrying
    /// every token: `[ref]` (has a ref), `[noref]` (has none), `="v"`
    /// (value), or a word (`checked`, `required`, `level=1`, …).
    Have { line: usize, roles: Vec<String>, name: String, tokens: Vec<String> },
    /// Text that must not appear anywhere in the snapshot.
    Lack { line: usize, text: String },
    /// The line right after the element line with this role and name (its
    /// `options:` or `suggestions:` line) is exactly `text`, trimmed.
    After { line: usize, role: String, name: String, text: String },
}

/// The expectations for one fixture page.
#[derive(Debug, Clone)]
pub struct Expectations {
    pub file: PathBuf,
    pub items: Vec<Expectation>,
}

/// True for `e` + digits in brackets, e.g. `[e12]`.
fn is_ref_token(t: &str) -> bool {
    t.strip_prefix('[').and_then(|t| t.strip_suffix(']')).is_some_and(shared::tools::is_valid_ref)
}

/// Reads a double-quoted string at the start of `s` (with `\"`, `\\`, `\n`
/// escapes); returns the unescaped text and the rest.
fn parse_quoted(s: &str) -> Option<(String, &str)> {
    let s = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// Splits on whitespace but keeps `="a b"` together.
fn split_tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('=')
            && let Some((v, r)) = parse_quoted(after)
        {
            let mut q = String::new();
            shared::snapshot::quote(&v, &mut q);
            out.push(format!("={q}"));
            rest = r.trim_start();
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        out.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
    }
    out
}

/// A rendered snapshot line split into role, quoted name, the tokens
/// between name and value, and the quoted value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedLine {
    pub role: String,
    pub name: Option<String>,
    pub tokens: Vec<String>,
    pub value: Option<String>,
}

/// Parses `  - role "name" [e1] checked: "value"` (a text block, `- "…"`,
/// has role `text`). `None` for lines that are not element lines (headers,
/// notices). A row line (`- row|cell "A"|…`) gives its first element
/// ([`elements`] gives them all; a row line that starts with a quoted
/// string is a list item with that text, which this reads as `text`).
pub fn parse_line(line: &str) -> Option<ParsedLine> {
    let rest = line.trim_start().strip_prefix("- ")?;
    let first = split_parts(rest).into_iter().next()?;
    parse_part(first, None)
}

/// Splits a line (without its dash) at the row separators outside quotes.
fn split_parts(s: &str) -> Vec<&str> {
    let sep = shared::snapshot::ROW_SEPARATOR;
    let mut out = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if quoted && c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = !quoted;
        } else if !quoted && s[i..].starts_with(sep) {
            out.push(&s[start..i]);
            start = i + sep.len();
        }
    }
    if start <= s.len() {
        out.push(&s[start..]);
    }
    out.retain(|p| !p.is_empty());
    out
}

/// One element: `role "name" tokens: "value"`. A part starting with a
/// quote has the role `ditto` (from the row above) or is a text block.
fn parse_part(part: &str, ditto: Option<&str>) -> Option<ParsedLine> {
    let part = part.trim_start();
    let (role, mut rest) = if part.starts_with('"') {
        (ditto.unwrap_or(shared::snapshot::TEXT_ROLE).to_string(), part)
    } else {
        let role_end = part.find([' ', ':']).unwrap_or(part.len());
        (part[..role_end].to_string(), part[role_end..].trim_start())
    };
    if role.is_empty() {
        return None;
    }
    let mut name = None;
    if rest.starts_with('"') {
        let (n, r) = parse_quoted(rest)?;
        name = Some(n);
        rest = r;
    }
    let mut value = None;
    let mut head = rest;
    if let Some(idx) = rest.find(": \"")
        && let Some((v, _)) = parse_quoted(&rest[idx + 2..])
    {
        value = Some(v);
        head = &rest[..idx];
    }
    let tokens = head.split_whitespace().map(|t| t.trim_end_matches(':').to_string()).collect();
    Some(ParsedLine { role, name, tokens, value })
}

/// A quoted part of a short row has the `level=N` and the carried states
/// (`offscreen`, [`shared::snapshot::CARRIED`]) of the part above when it
/// does not say its own.
fn inherit_carried(p: &mut ParsedLine, above: &ParsedLine) {
    if !p.tokens.iter().any(|t| t.starts_with("level="))
        && let Some(level) = above.tokens.iter().find(|t| t.starts_with("level="))
    {
        let at = p.tokens.iter().position(|t| !is_ref_token(t)).unwrap_or(p.tokens.len());
        p.tokens.insert(at, level.clone());
    }
    for s in shared::snapshot::CARRIED.iter().map(|s| s.as_str()) {
        if above.tokens.iter().any(|t| t == s) && !p.tokens.iter().any(|t| t == s) {
            p.tokens.push(s.to_string());
        }
    }
}

/// Every element of a snapshot, each with its own text (its line, or its
/// part of a row line): row lines split into their parts, and the parts of
/// a short-form row (no role word where the row above says it) given the
/// roles of the row above.
pub fn elements(snapshot: &str) -> Vec<(ParsedLine, String)> {
    elements_by_line(snapshot).into_iter().map(|(_, p, text)| (p, text)).collect()
}

/// [`elements`], each with the 0-based number of its line.
pub fn elements_by_line(snapshot: &str) -> Vec<(usize, ParsedLine, String)> {
    let mut out = Vec::new();
    let mut above: Vec<ParsedLine> = Vec::new();
    for (n, line) in snapshot.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("- ") else {
            above.clear();
            continue;
        };
        let parts = split_parts(rest);
        if parts.len() < 2 {
            above.clear();
            if let Some(p) = parts.first().and_then(|p| parse_part(p, None)) {
                out.push((n, p, line.trim().to_string()));
            }
            continue;
        }
        // A full row has a role word on every part; a short one has quoted
        // parts whose roles are those of the row above.
        let short = parts[1..].iter().any(|p| p.starts_with('"')) && above.len() == parts.len();
        let mut roles = Vec::new();
        // A group row (siblings no list holds) writes its first part with
        // a role word in full; a quoted first part below it has that role.
        let group_above = above.len() == parts.len() && above.first().is_some_and(|r| r.role != "listitem");
        for (i, part) in parts.iter().enumerate() {
            // A row line that starts with a quoted string is a list item with that text.
            if i == 0
                && !group_above
                && let Some((v, _)) = parse_quoted(part.trim_start())
            {
                let p = ParsedLine { role: "listitem".into(), name: None, tokens: Vec::new(), value: Some(v) };
                roles.push(p.clone());
                out.push((n, p, part.trim().to_string()));
                continue;
            }
            let ditto = ((short && i > 0) || (group_above && i == 0)).then(|| above[i].role.as_str());
            if let Some(mut p) = parse_part(part, ditto) {
                if ditto.is_some() && part.trim_start().starts_with('"') {
                    inherit_carried(&mut p, &above[i]);
                }
                roles.push(p.clone());
                out.push((n, p, part.trim().to_string()));
            }
        }
        above = roles;
    }
    out
}

impl Expectations {
    /// Loads the expectations of a fixture page, e.g. `basic/index.html` →
    /// `fixtures/sites/basic/index.expect.txt`.
    pub fn for_page(page: &str) -> Expectations {
        let page = page.trim_start_matches('/');
        let p = crate::sites_dir().join(page);
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("index").to_string();
        Expectations::load(&p.with_file_name(format!("{stem}.expect.txt")))
    }

    pub fn load(file: &Path) -> Expectations {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        Expectations::parse(file, &text).unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn parse(file: &Path, text: &str) -> Result<Expectations, String> {
        let mut items = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let l = raw.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let bad = |why: &str| format!("{}:{line}: {why}: {raw}", file.display());
            if let Some(text) = l.strip_prefix("lack ") {
                items.push(Expectation::Lack { line, text: text.trim().to_string() });
            } else if let Some(rest) = l.strip_prefix("have ") {
                let rest = rest.trim();
                let role_end = rest.find(' ').ok_or_else(|| bad("expected: have <role> \"<name>\" …"))?;
                let roles = rest[..role_end].split('|').map(str::to_string).collect();
                let (name, after) =
                    parse_quoted(rest[role_end..].trim_start()).ok_or_else(|| bad("the name must be double-quoted"))?;
                items.push(Expectation::Have { line, roles, name, tokens: split_tokens(after) });
            } else if let Some(rest) = l.strip_prefix("after ") {
                let rest = rest.trim();
                let role_end = rest.find(' ').ok_or_else(|| bad("expected: after <role> \"<name>\" <line>"))?;
                let (name, after) =
                    parse_quoted(rest[role_end..].trim_start()).ok_or_else(|| bad("the name must be double-quoted"))?;
                items.push(Expectation::After {
                    line,
                    role: rest[..role_end].to_string(),
                    name,
                    text: after.trim().to_string(),
                });
            } else {
                return Err(bad("lines start with `have `, `lack ` or `after `"));
            }
        }
        if items.is_empty() {
            return Err(format!("{}: no expectations", file.display()));
        }
        Ok(Expectations { file: file.to_path_buf(), items })
    }

    /// The snapshot element (its line, or its part of a row line) an
    /// expectation matches, if any.
    pub fn find(exp: &Expectation, snapshot: &str) -> Option<String> {
        let Expectation::Have { roles, name, tokens, .. } = exp else { return None };
        let found = elements(snapshot).into_iter().find(|(p, _)| {
            if !roles.contains(&p.role) || p.name.as_deref() != Some(name.as_str()) {
                return false;
            }
            tokens.iter().all(|t| match t.as_str() {
                "[ref]" => p.tokens.iter().any(|x| is_ref_token(x)),
                "[noref]" => !p.tokens.iter().any(|x| is_ref_token(x)),
                t if t.starts_with('=') => {
                    let want = parse_quoted(&t[1..]).map(|(v, _)| v);
                    want.is_some() && p.value == want
                }
                t => p.tokens.iter().any(|x| x == t),
            })
        });
        found.map(|(_, text)| text)
    }

    /// Checks a snapshot text; the error lists every unmet expectation.
    pub fn check(&self, snapshot: &str) -> Result<(), String> {
        let mut failures = Vec::new();
        for item in &self.items {
            match item {
                Expectation::Have { line, roles, name, tokens } => {
                    if Self::find(item, snapshot).is_none() {
                        failures.push(format!(
                            "line {line}: no snapshot line `- {} \"{name}\" {}`",
                            roles.join("|"),
                            tokens.join(" ")
                        ));
                    }
                }
                Expectation::Lack { line, text } => {
                    if snapshot.contains(text.as_str()) {
                        failures.push(format!("line {line}: the snapshot must not contain {text:?}"));
                    }
                }
                Expectation::After { line, role, name, text } => {
                    let next = line_after(snapshot, role, name);
                    if next != Some(text.as_str()) {
                        failures.push(format!(
                            "line {line}: after `- {role} \"{name}\"` the snapshot has {next:?}, not {text:?}"
                        ));
                    }
                }
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} unmet expectation(s) from {}:\n  {}\n--- snapshot ---\n{snapshot}",
                failures.len(),
                self.file.display(),
                failures.join("\n  ")
            ))
        }
    }

    /// Panics with every unmet expectation.
    pub fn assert_snapshot(&self, snapshot: &str) {
        if let Err(e) = self.check(snapshot) {
            panic!("{e}");
        }
    }

    /// Checks the expectations against Chromium's own accessibility tree
    /// (the yardstick for roles and names): every `have` has a node with
    /// one of its roles and its name (and `level=N` when given), and no
    /// `lack` text is a perceivable node's name or value.
    pub fn check_ax(&self, nodes: &[AxNode]) -> Result<(), String> {
        let mut failures = Vec::new();
        for item in &self.items {
            match item {
                Expectation::Have { line, roles, name, tokens } => {
                    let level = tokens.iter().find(|t| t.starts_with("level="));
                    let found = nodes.iter().any(|n| {
                        roles.contains(&n.role)
                            && n.name.trim() == name
                            && level.is_none_or(|l| n.states.iter().any(|s| s == l))
                    });
                    if !found {
                        failures.push(format!("line {line}: Chromium has no {} named {name:?}", roles.join("|")));
                    }
                }
                // Chromium has no such line; the faithfulness test compares
                // the options themselves.
                Expectation::After { .. } => {}
                Expectation::Lack { line, text } => {
                    if let Some(n) =
                        nodes.iter().find(|n| n.name.contains(text.as_str()) || n.value.contains(text.as_str()))
                    {
                        failures.push(format!("line {line}: Chromium exposes {text:?} in {n:?}"));
                    }
                }
            }
        }
        if failures.is_empty() {
            return Ok(());
        }
        let tree: Vec<String> = nodes
            .iter()
            .filter(|n| !n.name.is_empty() || !n.value.is_empty())
            .map(|n| format!("{} {:?} {:?} {:?}", n.role, n.name, n.value, n.states))
            .collect();
        Err(format!(
            "{} expectation(s) from {} disagree with Chromium's accessibility tree:\n  {}\n--- AX tree ---\n{}",
            failures.len(),
            self.file.display(),
            failures.join("\n  "),
            tree.join("\n")
        ))
    }
}

/// The line after the first element line with this role and name, trimmed.
pub fn line_after<'a>(snapshot: &'a str, role: &str, name: &str) -> Option<&'a str> {
    let mut lines = snapshot.lines();
    while let Some(l) = lines.next() {
        if parse_line(l).is_some_and(|p| p.role == role && p.name.as_deref() == Some(name)) {
            return lines.next().map(str::trim);
        }
    }
    None
}

/// One choice of an `options:` / `suggestions:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub label: String,
    pub selected: bool,
    pub disabled: bool,
    /// The `group "…"` it is listed under.
    pub group: Option<String>,
    /// Listed after `…`: options before it were left out.
    pub gap: bool,
}

/// A parsed `options:` or `suggestions:` line: the choices and the `+N
/// more` count.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChoiceLine {
    pub suggestions: bool,
    pub choices: Vec<Choice>,
    pub more: usize,
}

/// Parses `options: "A", *"B"; group "G": "C" disabled, …, "Z" (+12 more…)`
/// (the format of `shared::snapshot`); `None` for any other line.
pub fn parse_choices(line: &str) -> Option<ChoiceLine> {
    let t = line.trim_start();
    let (suggestions, mut rest) =
        if let Some(r) = t.strip_prefix("options: ") { (false, r) } else { (true, t.strip_prefix("suggestions: ")?) };
    let mut out = ChoiceLine { suggestions, ..ChoiceLine::default() };
    let mut group = None;
    let mut gap = false;
    loop {
        rest = rest.trim_start_matches([',', ';', ' ']);
        if rest.is_empty() {
            break;
        }
        if let Some(r) = rest.strip_prefix("…") {
            gap = true;
            rest = r;
        } else if let Some(r) = rest.strip_prefix("group ") {
            let (g, r) = parse_quoted(r)?;
            group = Some(g);
            rest = r.strip_prefix(':')?;
        } else if let Some(r) = rest.strip_prefix("(+") {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            out.more = digits.parse().ok()?;
            break;
        } else {
            let (selected, r) = match rest.strip_prefix('*') {
                Some(r) => (true, r),
                None => (false, rest),
            };
            let (label, r) = parse_quoted(r)?;
            let (disabled, r) = match r.strip_prefix(" disabled") {
                Some(r) => (true, r),
                None => (false, r),
            };
            out.choices.push(Choice { label, selected, disabled, group: group.clone(), gap });
            gap = false;
            rest = r;
        }
    }
    Some(out)
}

/// The elements of a snapshot that carry a ref, as written (a line
/// without indentation, or a part of a row line).
pub fn ref_lines(snapshot: &str) -> Vec<String> {
    elements(snapshot)
        .into_iter()
        .filter(|(p, _)| p.tokens.iter().any(|t| is_ref_token(t)))
        .map(|(_, text)| text)
        .collect()
}

/// The ref of the first element with this role and name (e.g. `e12`).
pub fn ref_of(snapshot: &str, role: &str, name: &str) -> Option<String> {
    elements(snapshot).into_iter().map(|(p, _)| p).find_map(|p| {
        if p.role == role && p.name.as_deref() == Some(name) {
            p.tokens.iter().find(|t| is_ref_token(t)).map(|t| t[1..t.len() - 1].to_string())
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAP: &str = "Page URL: http://x/\nPage title: \"T\"\n- heading \"Account settings\" level=1\n  - textbox \"Email\" [e7] required: \"••••\"\n  - checkbox \"Remember me\" [e9] checked\n  - combobox \"Country\" [e10]: \"France\"\n";

    fn exps(text: &str) -> Expectations {
        Expectations::parse(Path::new("t.expect.txt"), text).unwrap()
    }

    #[test]
    fn lines_parse_into_parts() {
        let p = parse_line("  - textbox \"Email\" [e7] required: \"••••\"").unwrap();
        assert_eq!(p.role, "textbox");
        assert_eq!(p.name.as_deref(), Some("Email"));
        assert_eq!(p.tokens, vec!["[e7]", "required"]);
        assert_eq!(p.value.as_deref(), Some("••••"));
        let p = parse_line("- combobox \"Country\" [e10]: \"France\"").unwrap();
        assert_eq!(p.tokens, vec!["[e10]"]);
        assert_eq!(p.value.as_deref(), Some("France"));
        assert!(parse_line("Page URL: x").is_none());
    }

    #[test]
    fn row_lines_give_every_element_with_the_roles_of_the_row_above() {
        use shared::snapshot::{Node, PageSnapshot, RenderOptions, render};
        let node = |depth: u16, role: &'static str, name: &str, r: Option<&str>| Node {
            depth,
            role: role.into(),
            name: name.into(),
            element_ref: r.map(Into::into),
            ..Node::default()
        };
        let mut nodes = vec![node(0, "list", "", None)];
        for i in 1..=3 {
            let mut item = node(1, "listitem", "", None);
            item.value = Some(format!("Order {i} | \"x\""));
            nodes.push(item);
            nodes.push(node(2, "link", &format!("Item {i} | y"), Some(&format!("e{i}0"))));
            nodes.push(node(2, "text", "note", None));
            nodes.push(node(2, "button", "Delete", Some(&format!("e{i}1"))));
        }
        nodes.push(node(0, "text", "Footer", None));
        let snap =
            PageSnapshot { url: "http://x/".into(), title: "T".into(), nodes: nodes.clone(), ..Default::default() };
        let text = render(&snap, RenderOptions { max_chars: 100_000, page: 1 }).text;
        let got: Vec<(String, String, Option<String>)> = elements(&text)
            .into_iter()
            .map(|(p, _)| (p.role, p.name.unwrap_or_default(), p.tokens.into_iter().find(|t| is_ref_token(t))))
            .collect();
        let want: Vec<(String, String, Option<String>)> = nodes
            .iter()
            .map(|n| (n.role.to_string(), n.name.clone(), n.element_ref.as_ref().map(|r| format!("[{r}]"))))
            .collect();
        assert_eq!(got, want, "{text}");
        assert_eq!(ref_of(&text, "button", "Delete").as_deref(), Some("e11"));
        assert_eq!(ref_lines(&text).len(), 6);
        assert_eq!(parse_line("- \"Footer\"").map(|p| p.role).as_deref(), Some("text"));
    }

    /// The compact form of plain `<div>` rows and cards (group rows) reads
    /// back to the same elements, in the same order, with the same names,
    /// refs, states and values, as the same nodes a line each.
    #[test]
    fn div_rows_in_compact_form_read_back_to_the_same_elements() {
        use shared::snapshot::{Node, PageSnapshot, RenderOptions, State, render};
        let node = |depth: u16, role: &'static str, name: &str, r: Option<String>| Node {
            depth,
            role: role.into(),
            name: name.into(),
            element_ref: r,
            ..Node::default()
        };
        let mut refs = 0;
        let mut next_ref = || {
            refs += 1;
            Some(format!("e{refs}"))
        };
        let mut nodes = vec![node(0, "heading", "Orders", None)];
        // Plain div rows: text, link, two buttons; one checked checkbox row
        // shape in between, names with separators and quotes.
        for i in 1..=40 {
            let start = nodes.len();
            nodes.push(node(1, "text", &format!("Order {i} · \"gift\" | 3 items"), None));
            nodes.push(node(1, "link", &format!("Item {i}"), next_ref()));
            nodes.push(node(1, "button", "Edit", next_ref()));
            let mut del = node(1, "button", if i % 7 == 0 { "" } else { "Delete" }, next_ref());
            if i % 5 == 0 {
                del.states = vec![State::Disabled];
            }
            // Rows below the fold: `offscreen` said once, then carried.
            if i > 30 {
                del.states.push(State::Offscreen);
            }
            nodes.push(del);
            nodes[start].group = 4;
        }
        nodes.push(node(0, "heading", "Products", None));
        // A grid of cards: image, heading, price, field with a value, button.
        for i in 1..=30 {
            let start = nodes.len();
            nodes.push(node(2, "img", &format!("Photo of product {i}"), None));
            let mut h = node(2, "heading", &format!("Product {i}"), None);
            // Level 3, carried; one card says level 2, one none at all.
            h.level = match i {
                12 => Some(2),
                17 => None,
                _ => Some(3),
            };
            nodes.push(h);
            nodes.push(node(2, "text", &format!("{i}.99 €"), None));
            let mut qty = node(2, "spinbutton", "Quantity", next_ref());
            qty.value = Some("1".into());
            nodes.push(qty);
            let mut add = node(2, "button", "Add to cart", next_ref());
            // Offscreen from card 9 on, except card 22.
            if i > 8 && i != 22 {
                add.states = vec![State::Offscreen];
            }
            nodes.push(add);
            nodes[start].group = 5;
        }
        nodes.push(node(0, "text", "Footer", None));
        let read = |nodes: &[Node]| -> (String, Vec<ParsedLine>) {
            let snap = PageSnapshot {
                url: "http://x/".into(),
                title: "T".into(),
                nodes: nodes.to_vec(),
                ..Default::default()
            };
            let text = render(&snap, RenderOptions { max_chars: 1_000_000, page: 1 }).text;
            let parsed = elements(&text).into_iter().map(|(p, _)| p).collect();
            (text, parsed)
        };
        let (compact, got) = read(&nodes);
        let plain: Vec<Node> = nodes.iter().map(|n| Node { group: 0, ..n.clone() }).collect();
        let (full, want) = read(&plain);
        // The compact form is compact: a row a line, role words only in the first row.
        assert_eq!(compact.lines().filter(|l| l.contains('|')).count(), 70, "{compact}");
        assert!(compact.len() * 10 < full.len() * 8, "{} vs {} bytes", compact.len(), full.len());
        assert_eq!(got.len(), nodes.len(), "{compact}");
        assert_eq!(got, want, "compact:\n{compact}\nfull:\n{full}");
        // Levels and `offscreen` are said once and carried down (a full
        // row, card 17 and 22, says them again).
        assert_eq!(compact.matches("level=3").count(), 4, "{compact}");
        assert_eq!(compact.matches("offscreen").count(), 5, "{compact}");
        assert!(full.matches("offscreen").count() > 30, "{full}");
    }

    #[test]
    fn matching_expectations_pass() {
        exps("have heading \"Account settings\" level=1 [noref]\nhave textbox \"Email\" [ref] required =\"••••\"\nhave checkbox \"Remember me\" [ref] checked\nhave combobox|listbox \"Country\" [ref] =\"France\"\nlack hunter2")
            .check(SNAP)
            .unwrap();
    }

    #[test]
    fn unmet_expectations_are_all_reported() {
        let err = exps("have button \"Save\" [ref]\nhave checkbox \"Remember me\" [ref] disabled\nhave heading \"Account settings\" [ref]\nhave combobox \"Country\" =\"Italy\"\nlack Remember")
            .check(SNAP)
            .unwrap_err();
        assert!(err.starts_with("5 unmet"), "{err}");
    }

    #[test]
    fn refs_are_found_by_role_and_name() {
        assert_eq!(ref_of(SNAP, "checkbox", "Remember me").as_deref(), Some("e9"));
        assert_eq!(ref_lines(SNAP).len(), 3);
    }

    #[test]
    fn choice_lines_parse_and_after_expectations_match() {
        let line = r#"  options: "None", *"Tea \"green\""; group "Hot": "Coffee" disabled, …, "Soup" (+12 more: browser_snapshot scope=e3 lists them all)"#;
        let c = parse_choices(line).unwrap();
        assert!(!c.suggestions);
        assert_eq!(c.more, 12);
        let labels: Vec<&str> = c.choices.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["None", "Tea \"green\"", "Coffee", "Soup"]);
        assert!(c.choices[1].selected && !c.choices[0].selected);
        assert!(c.choices[2].disabled && c.choices[2].group.as_deref() == Some("Hot"));
        assert!(c.choices[3].gap && !c.choices[2].gap);
        assert_eq!(parse_choices(r#"suggestions: "A""#).unwrap().choices.len(), 1);
        assert!(parse_choices("- button \"x\"").is_none());
        let snap = format!("{SNAP}  options: *\"France\", \"Italy\"\n");
        exps("after combobox \"Country\" options: *\"France\", \"Italy\"").check(&snap).unwrap();
        assert!(exps("after combobox \"Country\" options: \"France\"").check(&snap).is_err());
    }

    #[test]
    fn bad_lines_are_refused() {
        assert!(Expectations::parse(Path::new("x"), "button \"x\"").is_err());
        assert!(Expectations::parse(Path::new("x"), "have button x").is_err());
    }
}
