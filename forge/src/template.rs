//! Path templates from how segments vary across samples.
//!
//! The paths of one host form a tree of segments. At every node, children
//! that look like ids (integers, UUIDs, hex or base62 ids, dates) become one
//! parameter when at least two different values of the same kind were seen
//! there: one sample alone never makes a parameter. Short words and slugs
//! become a parameter when several vary in that one place
//! ([`MIN_SLUG_VALUES`] words, or two when one has a `-`/`_`/digit), each answered
//! at that place itself. In both cases children merge only when they answer
//! the same shape (the keys of their JSON answers overlap by at least
//! [`MIN_SHAPE_OVERLAP`] for every method both answered): two paths that
//! would merge into one template but answer different shapes stay apart.
//! When no answer of the whole input had a body (Chaperone's own capture:
//! the extension does not read response bodies), shapes cannot tell words
//! apart; then words merge only as members of a collection: children of a
//! plural literal (`/shelves/fantasy`, `/shelves/classics`…), without
//! children of their own, answered with the same methods, by the same
//! counts as above.
//! Table tests: `fixtures/forge/templates.json`.

use std::collections::{BTreeMap, BTreeSet};

use crate::segment::{self, Kind};

/// Distinct plain words in one place that make a slug parameter.
pub const MIN_SLUG_VALUES: usize = 3;
/// Jaccard overlap of answer keys for two places to be the same resource.
pub const MIN_SHAPE_OVERLAP: f64 = 0.5;

/// One observed request path.
#[derive(Debug, Clone)]
pub struct Sample {
    pub method: String,
    pub segments: Vec<String>,
    /// Keys of its JSON answer (see `schema::Shape::keys`), empty if none.
    pub keys: BTreeSet<String>,
}

/// One segment of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Lit(String),
    Param { kind: Kind, values: BTreeSet<String> },
}

/// A learned path template and the samples of each method on it.
#[derive(Debug, Clone)]
pub struct Template {
    pub segments: Vec<Seg>,
    /// method → indexes into the samples.
    pub ops: BTreeMap<String, Vec<usize>>,
}

impl Template {
    /// `/books/{}/loans`: the template with anonymous parameters.
    pub fn pattern(&self) -> String {
        let mut s = String::new();
        for seg in &self.segments {
            s.push('/');
            match seg {
                Seg::Lit(l) => s.push_str(l),
                Seg::Param { .. } => s.push_str("{}"),
            }
        }
        if s.is_empty() { "/".into() } else { s }
    }
}

#[derive(Debug, Default)]
struct Node {
    lits: BTreeMap<String, Node>,
    params: Vec<(Kind, BTreeSet<String>, Node)>,
    ops: BTreeMap<String, Vec<usize>>,
}

/// Learns templates from the samples of one host.
pub fn learn(samples: &[Sample]) -> Vec<Template> {
    let mut root = Node::default();
    for (i, s) in samples.iter().enumerate() {
        let mut n = &mut root;
        for seg in &s.segments {
            n = n.lits.entry(seg.clone()).or_default();
        }
        n.ops.entry(s.method.to_ascii_uppercase()).or_default().push(i);
    }
    let no_shapes = samples.iter().all(|s| s.keys.is_empty());
    settle(&mut root, samples, None, no_shapes);
    let mut out = Vec::new();
    collect(&root, &mut Vec::new(), &mut out);
    out
}

fn collect(n: &Node, path: &mut Vec<Seg>, out: &mut Vec<Template>) {
    if !n.ops.is_empty() {
        out.push(Template { segments: path.clone(), ops: n.ops.clone() });
    }
    for (k, c) in &n.lits {
        path.push(Seg::Lit(k.clone()));
        collect(c, path, out);
        path.pop();
    }
    for (kind, values, c) in &n.params {
        path.push(Seg::Param { kind: *kind, values: values.clone() });
        collect(c, path, out);
        path.pop();
    }
}

fn settle(n: &mut Node, samples: &[Sample], parent: Option<&str>, no_shapes: bool) {
    // Ids, one kind at a time.
    let mut by_kind: BTreeMap<Kind, Vec<String>> = BTreeMap::new();
    let mut wordy: Vec<String> = Vec::new();
    for k in n.lits.keys() {
        let kind = segment::kind(k);
        if kind.is_id() {
            by_kind.entry(kind).or_default().push(k.clone());
        } else if matches!(kind, Kind::Slug | Kind::Word) && !n.lits[k].ops.is_empty() {
            wordy.push(k.clone());
        }
    }
    for (kind, keys) in by_kind {
        if keys.len() < 2 {
            continue;
        }
        let cluster = largest_cluster(n, &keys, samples, false);
        if cluster.len() >= 2 {
            merge_into_param(n, kind, &cluster);
        }
    }
    if wordy.len() >= 2 {
        let mut cluster = largest_cluster(n, &wordy, samples, true);
        if no_shapes && parent.is_some_and(crate::naming::is_plural) {
            cluster = members(n, &wordy);
        }
        let marked = cluster.iter().filter(|k| segment::kind(k) == Kind::Slug).count();
        if cluster.len() >= MIN_SLUG_VALUES || (cluster.len() >= 2 && marked >= 1) {
            merge_into_param(n, Kind::Slug, &cluster);
        }
    }
    for (k, c) in n.lits.iter_mut() {
        settle(c, samples, Some(k.as_str()), no_shapes);
    }
    for (_, _, c) in &mut n.params {
        settle(c, samples, None, no_shapes);
    }
}

/// Of `keys` (words under a plural literal), the largest group of leaves
/// answered with the same methods.
fn members(n: &Node, keys: &[String]) -> Vec<String> {
    let mut groups: BTreeMap<Vec<&String>, Vec<String>> = BTreeMap::new();
    for k in keys {
        let c = &n.lits[k];
        if c.lits.is_empty() && c.params.is_empty() {
            groups.entry(c.ops.keys().collect()).or_default().push(k.clone());
        }
    }
    groups.into_values().max_by_key(Vec::len).unwrap_or_default()
}

fn merge_into_param(n: &mut Node, kind: Kind, keys: &[String]) {
    let mut merged = Node::default();
    let mut values = BTreeSet::new();
    for k in keys {
        if let Some(c) = n.lits.remove(k) {
            absorb(&mut merged, c);
            values.insert(k.clone());
        }
    }
    match n.params.iter_mut().find(|(k, _, _)| *k == kind) {
        Some((_, vs, node)) => {
            vs.extend(values);
            absorb(node, merged);
        }
        None => n.params.push((kind, values, merged)),
    }
}

fn absorb(into: &mut Node, from: Node) {
    for (m, idx) in from.ops {
        into.ops.entry(m).or_default().extend(idx);
    }
    for (k, c) in from.lits {
        absorb(into.lits.entry(k).or_default(), c);
    }
    for (kind, vs, c) in from.params {
        match into.params.iter_mut().find(|(k, _, _)| *k == kind) {
            Some((_, v2, n2)) => {
                v2.extend(vs);
                absorb(n2, c);
            }
            None => into.params.push((kind, vs, c)),
        }
    }
}

/// method → union of answer keys, for the samples at this node itself.
fn signature(n: &Node, samples: &[Sample]) -> BTreeMap<String, BTreeSet<String>> {
    n.ops
        .iter()
        .map(|(m, idx)| (m.clone(), idx.iter().flat_map(|i| samples[*i].keys.iter().cloned()).collect()))
        .collect()
}

/// Whether two places answer the same shape. `strict` (words): they must
/// share a method, with keys on at least one side.
pub fn compatible(
    a: &BTreeMap<String, BTreeSet<String>>,
    b: &BTreeMap<String, BTreeSet<String>>,
    strict: bool,
) -> bool {
    let mut shared = 0;
    for (m, ka) in a {
        let Some(kb) = b.get(m) else { continue };
        shared += 1;
        if ka.is_empty() && kb.is_empty() {
            if strict {
                return false;
            }
            continue;
        }
        if ka.is_empty() || kb.is_empty() {
            if strict {
                return false;
            }
            continue;
        }
        let inter = ka.intersection(kb).count() as f64;
        let union = ka.union(kb).count() as f64;
        if inter / union < MIN_SHAPE_OVERLAP {
            return false;
        }
    }
    !strict || shared > 0
}

fn largest_cluster(n: &Node, keys: &[String], samples: &[Sample], strict: bool) -> Vec<String> {
    let sigs: Vec<_> = keys.iter().map(|k| signature(&n.lits[k], samples)).collect();
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for i in 0..keys.len() {
        match clusters.iter_mut().find(|c| c.iter().all(|j| compatible(&sigs[i], &sigs[*j], strict))) {
            Some(c) => c.push(i),
            None => clusters.push(vec![i]),
        }
    }
    clusters.sort_by_key(|c| std::cmp::Reverse(c.len()));
    clusters.first().map(|c| c.iter().map(|i| keys[*i].clone()).collect()).unwrap_or_default()
}
