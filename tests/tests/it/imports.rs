//! The import maps stay true: `extension/worker`, `extension/content` and
//! `shared` each document in their `lib.rs` which of their modules may use
//! which (a table in the crate docs, each module using only modules listed
//! after it, so the imports form a DAG). These tests read every module's
//! `crate::` paths and fail when the code and the table disagree, either
//! way: an import the table does not list (a new arrow, maybe a cycle), or
//! a listed one the code no longer has (a stale map).
//!
//! What counts as a use: any `crate::<module>` path outside comments
//! (`use` lines and inline paths alike, with `use crate::{a, b::C}`
//! naming `a` and `b`), in the module's file and its folder. A module's
//! `#[cfg(test)] mod tests` (the last item of a file, by the house style,
//! or a `tests.rs` of its folder) is left out: tests may reach across.
//! `lib.rs` itself may use every module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One crate's map: its source folder and the modules any module may use
/// without listing them (small helpers with no imports of their own
/// beyond each other).
struct Map {
    src: &'static str,
    free: &'static [&'static str],
}

const WORKER: Map = Map { src: "extension/worker/src", free: &["chrome", "util"] };
const CONTENT: Map = Map { src: "extension/content/src", free: &[] };
const SHARED: Map = Map { src: "shared/src", free: &[] };

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository").to_path_buf()
}

/// The table: the first ```` ```text ```` block of `lib.rs`'s `//!` docs.
/// Each line is `name[, name…]`, two or more spaces, then `dep, dep…` or
/// `(none)`; the `lib` line is the crate root's and is skipped. Returns
/// the modules in table order with what each may use.
fn table(lib_rs: &str) -> Vec<(String, BTreeSet<String>)> {
    let docs: Vec<&str> = lib_rs
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    let start = docs.iter().position(|l| l.trim() == "```text").expect("lib.rs docs have a ```text table");
    let mut rows = Vec::new();
    for line in docs[start + 1..].iter().take_while(|l| l.trim() != "```") {
        let Some(gap) = line.find("  ") else { panic!("table line without two spaces between columns: {line:?}") };
        let (names, deps) = (line[..gap].trim(), line[gap..].trim());
        if names == "lib" {
            continue;
        }
        let deps: BTreeSet<String> =
            if deps == "(none)" { BTreeSet::new() } else { deps.split(',').map(|d| d.trim().to_string()).collect() };
        for name in names.split(',') {
            rows.push((name.trim().to_string(), deps.clone()));
        }
    }
    rows
}

/// `mod x;` / `pub mod x;` declarations of `lib.rs`.
fn declared(lib_rs: &str) -> BTreeSet<String> {
    lib_rs
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_string)
        })
        .collect()
}

/// The code of a file without comments and without its trailing
/// `#[cfg(test)] mod …` block.
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]")
            && lines[i + 1..]
                .iter()
                .map(|l| l.trim_start())
                .find(|l| !l.starts_with("#["))
                .is_some_and(|l| l.starts_with("mod ") && l.trim_end().ends_with('{'))
        {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The first path segments after each `crate::` in `code`.
fn used(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        // Not `shared::crate::` or `foocrate::`.
        if code[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::{C, D}, e}`: the names at depth one.
            let mut depth = 1;
            let mut expect_name = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => break,
                    '}' => depth -= 1,
                    ',' if depth == 1 => expect_name = true,
                    c if expect_name && depth == 1 && !c.is_whitespace() => {
                        out.insert(ident(&group[i..]));
                        expect_name = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("directory entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// What each top-level module of the crate uses of the crate's other
/// modules (its file and its folder together).
fn imports(src: &Path, modules: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut paths = Vec::new();
    files(src, &mut paths);
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in paths {
        let rel = p.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a path").as_os_str().to_string_lossy().into_owned();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if module == "lib" || p.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let deps: Vec<String> =
            used(&code(&text)).into_iter().filter(|d| modules.contains(d) && *d != module).collect();
        out.entry(module).or_default().extend(deps);
    }
    out
}

/// Everything wrong with one crate's map, one line each.
fn problems(map: &Map) -> Vec<String> {
    let src = repo().join(map.src);
    let lib_rs = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let modules = declared(&lib_rs);
    let rows = table(&lib_rs);
    let actual = imports(&src, &modules);
    let free: BTreeSet<String> = map.free.iter().map(|s| s.to_string()).collect();
    let mut problems = Vec::new();

    let position: BTreeMap<&str, usize> = rows.iter().enumerate().map(|(i, (m, _))| (m.as_str(), i)).collect();
    for m in &modules {
        if !position.contains_key(m.as_str()) && !free.contains(m) {
            problems.push(format!("{m}: declared in lib.rs but not in its table"));
        }
    }
    for (i, (m, listed)) in rows.iter().enumerate() {
        if !modules.contains(m) {
            problems.push(format!("{m}: in the table but not a module"));
            continue;
        }
        let have: BTreeSet<String> = actual.get(m).cloned().unwrap_or_default().difference(&free).cloned().collect();
        for d in have.difference(listed) {
            problems.push(format!("{m} uses crate::{d}, which the table does not list for it"));
        }
        for d in listed.difference(&have) {
            problems.push(format!("{m}: the table lists {d}, which the code does not use"));
        }
        for d in listed {
            if position.get(d.as_str()).is_some_and(|&j| j <= i) {
                problems.push(format!("{m} may use {d}, which is listed before it (the table must read as a DAG)"));
            }
        }
    }
    for f in &free {
        let other: Vec<&String> = actual.get(f).into_iter().flatten().filter(|d| !free.contains(*d)).collect();
        if !other.is_empty() {
            problems.push(format!("{f} is free for all to use, so it may use only {:?}; it uses {other:?}", map.free));
        }
    }
    problems
}

fn check(map: &Map) {
    let problems = problems(map);
    assert!(
        problems.is_empty(),
        "{}/lib.rs: the import table and the code disagree (fix the import or the table):\n  {}",
        map.src,
        problems.join("\n  ")
    );
}

#[test]
fn worker_imports_match_the_table_in_its_lib_rs() {
    check(&WORKER);
}

#[test]
fn content_script_imports_match_the_table_in_its_lib_rs() {
    check(&CONTENT);
}

#[test]
fn shared_imports_match_the_table_in_its_lib_rs() {
    check(&SHARED);
}

/// A cycle in `graph` (each module and what it uses), as the modules
/// around it, or `None` when the uses form a DAG.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<&'a str>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| *p == m) {
            let mut c: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
            c.push(m.to_string());
            return Some(c);
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for d in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|m| visit(m, graph, &mut done, &mut Vec::new()))
}

/// What each submodule of the bridge's `server` uses of its siblings:
/// `crate::server::x` anywhere, `super::x` in `server/*.rs` and
/// `super::super::x` one folder down.
fn server_imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = repo().join("bridge/src/server");
    let modules = declared(&std::fs::read_to_string(src.join("mod.rs")).expect("server/mod.rs"));
    let mut paths = Vec::new();
    files(&src, &mut paths);
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in paths {
        let rel = p.strip_prefix(&src).expect("under server");
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let module = parts[0].strip_suffix(".rs").unwrap_or(&parts[0]).to_string();
        let depth = parts.len() - usize::from(parts.last().is_some_and(|l| l == "mod.rs"));
        if module == "mod" || module == "tests" || p.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let code = code(&text)
            .replace("crate::", "top::")
            .replace("top::server::", "crate::")
            .replace(&"super::".repeat(depth), "crate::");
        let deps = used(&code).into_iter().filter(|d| modules.contains(d) && *d != module).collect::<Vec<_>>();
        out.entry(module).or_default().extend(deps);
    }
    out
}

/// The bridge keeps no table (its modules change more often than the
/// two sides' protocol), but its imports must still form a DAG: among
/// its top-level modules and among the server's. A cycle is a module
/// that cannot be read, tested or moved without the others.
#[test]
fn bridge_modules_import_no_cycle() {
    let src = repo().join("bridge/src");
    let lib_rs = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let top = imports(&src, &declared(&lib_rs));
    if let Some(c) = cycle(&top) {
        panic!("bridge/src: the modules import each other in a cycle: {}", c.join(" → "));
    }
    if let Some(c) = cycle(&server_imports()) {
        panic!("bridge/src/server: the modules import each other in a cycle: {}", c.join(" → "));
    }
}

#[test]
fn the_reader_sees_every_kind_of_use() {
    let text = "//! crate::nope\nuse crate::a::X;\nuse crate::{b, c::{D, E}, d};\nfn f() { crate::e::g(); \
                shared::crate_x(); }\n#[cfg(test)]\nmod tests {\n    use crate::f;\n}\n";
    assert_eq!(used(&code(text)), ["a", "b", "c", "d", "e"].into_iter().map(String::from).collect());
    let lib = "//! ```text\n//! lib    all\n//! a      b, c\n//! b, c   (none)\n//! ```\nmod a;\npub mod b;\nmod c;\n";
    let rows = table(lib);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].1, ["b", "c"].into_iter().map(String::from).collect());
    assert!(rows[2].1.is_empty());
    assert_eq!(declared(lib), ["a", "b", "c"].into_iter().map(String::from).collect());
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    assert_eq!(cycle(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
    assert_eq!(cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])).map(|c| c.len()), Some(4));
}
