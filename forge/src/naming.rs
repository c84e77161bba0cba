//! Readable, stable names: operationIds (`listBooks`, `getBook`,
//! `createBookLoan`, `deleteLoan`) and parameter names (`bookId`,
//! `shelfSlug`). Table tests: `fixtures/forge/names.tsv`.

use crate::segment::Kind;
use crate::template::Seg;

/// Segments that say nothing about the resource (`api`, `v1`, `rest`).
fn is_noise(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    l == "api"
        || l == "rest"
        || l == "json"
        || (l.len() >= 2 && l.starts_with('v') && l[1..].bytes().all(|b| b.is_ascii_digit()))
}

/// Words of a segment: `book-loans` → [book, loans]; `bookLoans` → [book, loans].
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `books` → `book`, `categories` → `category`, `addresses` → `address`.
pub fn singular(w: &str) -> String {
    if let Some(s) = w.strip_suffix("ies")
        && w.len() > 4
    {
        return format!("{s}y");
    }
    if let Some(s) = w.strip_suffix("lves") {
        return format!("{s}lf");
    }
    for suf in ["sses", "shes", "ches", "xes"] {
        if w.ends_with(suf) {
            return w[..w.len() - 2].to_string();
        }
    }
    if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && w.len() > 3 {
        return w[..w.len() - 1].to_string();
    }
    w.to_string()
}

pub fn is_plural(w: &str) -> bool {
    singular(w) != w
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// lowerCamelCase of words.
pub fn camel(ws: &[String]) -> String {
    let mut s = String::new();
    for (i, w) in ws.iter().enumerate() {
        if i == 0 { s.push_str(w) } else { s.push_str(&cap(w)) }
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) { format!("n{s}") } else { s }
}

pub fn pascal(ws: &[String]) -> String {
    cap(&camel(ws))
}

/// Names for the parameters of a template, in path order.
pub fn param_names(segs: &[Seg]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut prev: Option<&str> = None;
    for s in segs {
        match s {
            Seg::Lit(l) => prev = (!is_noise(l)).then_some(l.as_str()),
            Seg::Param { kind, .. } => {
                let suffix = match kind {
                    Kind::Slug | Kind::Word => "slug",
                    Kind::Date => "date",
                    _ => "id",
                };
                let mut ws: Vec<String> =
                    prev.map(|p| words(p).iter().map(|w| singular(w)).collect()).unwrap_or_default();
                ws.push(suffix.to_string());
                let base = camel(&ws);
                let mut name = base.clone();
                let mut n = 2;
                while names.contains(&name) {
                    name = format!("{base}{n}");
                    n += 1;
                }
                names.push(name);
                prev = None;
            }
        }
    }
    names
}

/// The operationId of `method` on a template (not yet made unique).
pub fn operation_id(method: &str, segs: &[Seg]) -> String {
    let lits: Vec<(usize, &str)> = segs
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Seg::Lit(l) if !is_noise(l) => Some((i, l.as_str())),
            _ => None,
        })
        .collect();
    let item = matches!(segs.last(), Some(Seg::Param { .. }));
    let last_lit = lits.last().map(|(_, l)| *l).unwrap_or("");
    let plural_end = !item && last_lit.split(['-', '_']).next_back().is_some_and(is_plural);
    // Words of every literal, singular before the last one.
    let mut ws: Vec<String> = Vec::new();
    for (n, (_, l)) in lits.iter().enumerate() {
        let is_last = n + 1 == lits.len();
        for w in words(l) {
            ws.push(if is_last && !item && !matches!(method, "POST") { w } else { singular(&w) });
        }
    }
    let m = method.to_ascii_uppercase();
    let verb = match (m.as_str(), item, plural_end) {
        ("GET", true, _) => "get",
        ("GET", false, true) => "list",
        ("GET", false, false) => "get",
        ("POST", false, true) => "create",
        ("POST", false, false) => "",
        ("POST", true, _) => "post",
        ("PUT", _, _) => "replace",
        ("PATCH", _, _) => "update",
        ("DELETE", _, _) => "delete",
        _ => "",
    };
    let mut all = Vec::new();
    if verb.is_empty() && (ws.is_empty() || m != "POST") {
        all.push(m.to_ascii_lowercase());
    } else if !verb.is_empty() {
        all.push(verb.to_string());
    }
    let no_words = ws.is_empty();
    all.extend(ws);
    if no_words {
        all.push("root".into());
    }
    camel(&all)
}
