//! The phrase matcher: a text's words ([`normalize`]), keywords compiled
//! once into phrase sets indexed by first word and first character, and
//! which keyword rules a text hits (the "Matching" rules of `risk.rs`'s
//! docs).

use super::*;

/// Words of `s` as the rules see them ([`crate::sensitive::words`]: look-alike
/// letters read as Latin, invisible characters and combining marks dropped,
/// so `De\u{200B}lete` and `Dеlеtе` with Cyrillic `е` read as `Delete`),
/// with `ß`→`ss`, `œ`→`oe`, `æ`→`ae` on top.
pub fn normalize(s: &str) -> Vec<String> {
    words(s)
        .into_iter()
        .map(|w| {
            if w.contains(['ß', 'œ', 'æ']) {
                w.replace('ß', "ss").replace('œ', "oe").replace('æ', "ae")
            } else {
                w
            }
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pat {
    pub(super) word: String,
    pub(super) prefix: bool,
    pub(super) suffix: bool,
    /// Written in a script without spaces ([`crate::sensitive::is_unspaced`]):
    /// matches anywhere inside a word.
    pub(super) inside: bool,
}

impl Pat {
    pub(super) fn matches(&self, w: &str) -> bool {
        w == self.word
            || (self.prefix && w.starts_with(&self.word))
            || (self.suffix && w.ends_with(&self.word))
            || (self.inside && w.contains(self.word.as_str()))
    }
}

/// A compiled keyword: its source text and its word patterns.
#[derive(Debug, Clone)]
pub(super) struct Phrase {
    pub(super) source: &'static str,
    pub(super) pats: Vec<Pat>,
}

pub(super) fn compile(source: &'static str) -> Phrase {
    let mut pats = Vec::new();
    for token in source.split_whitespace() {
        let suffix = token.starts_with('*');
        let prefix = token.ends_with('*');
        let ws = normalize(token.trim_matches('*'));
        let n = ws.len();
        for (i, w) in ws.into_iter().enumerate() {
            // One character of an unspaced script (是, 예) is too short to
            // find inside words: it matches only a whole word.
            let inside = w.chars().next().is_some_and(crate::sensitive::is_unspaced) && w.chars().nth(1).is_some();
            pats.push(Pat { word: w, prefix: prefix && i + 1 == n, suffix: suffix && i == 0, inside });
        }
    }
    Phrase { source, pats }
}

impl Phrase {
    /// Start indices where the phrase matches `ws`.
    pub(super) fn find(&self, ws: &[String]) -> Vec<usize> {
        let n = self.pats.len();
        if n == 0 || ws.len() < n {
            return Vec::new();
        }
        (0..=ws.len() - n).filter(|&i| self.pats.iter().zip(&ws[i..i + n]).all(|(p, w)| p.matches(w))).collect()
    }

    pub(super) fn in_words(&self, ws: &[String]) -> bool {
        let n = self.pats.len();
        n > 0 && ws.len() >= n && ws.windows(n).any(|w| self.pats.iter().zip(w).all(|(p, w)| p.matches(w)))
    }
}

/// A compiled keyword list, indexed so that a text is compared only with
/// the phrases that can match it: those whose first word is one of the
/// text's words, those whose first word is a prefix or suffix pattern, and,
/// only when the text has a word in an unspaced script, those whose first
/// word is found inside words. Results keep list order.
pub(super) struct PhraseSet {
    pub(super) phrases: Vec<Phrase>,
    pub(super) by_first: HashMap<String, Vec<usize>>,
    /// Phrases whose first word is an unspaced-script part, by its first
    /// character.
    pub(super) by_first_char: HashMap<char, Vec<usize>>,
    /// Phrases whose first word is a prefix or suffix pattern.
    pub(super) affixed: Vec<usize>,
}

impl PhraseSet {
    pub(super) fn new<'a>(sources: impl Iterator<Item = &'a &'static str>) -> PhraseSet {
        let phrases: Vec<Phrase> = sources.map(|s| compile(s)).collect();
        let mut set =
            PhraseSet { phrases, by_first: HashMap::new(), by_first_char: HashMap::new(), affixed: Vec::new() };
        for (i, p) in set.phrases.iter().enumerate() {
            match p.pats.first() {
                Some(f) if f.inside => {
                    let c = f.word.chars().next().unwrap_or_default();
                    set.by_first_char.entry(c).or_default().push(i)
                }
                Some(f) if f.prefix || f.suffix => set.affixed.push(i),
                Some(f) => set.by_first.entry(f.word.clone()).or_default().push(i),
                None => {}
            }
        }
        set
    }

    /// Indices of the phrases that may match `ws`, in list order.
    pub(super) fn candidates(&self, ws: &[String]) -> Vec<usize> {
        let mut out: Vec<usize> = ws.iter().filter_map(|w| self.by_first.get(w.as_str())).flatten().copied().collect();
        out.extend_from_slice(&self.affixed);
        // Every character, not only the first: the keyword may start
        // anywhere in a run of an unspaced script (and a not-phrase may have
        // blanked the start of a word, see `keyword_hits`).
        for w in ws.iter().filter(|w| !w.is_ascii()) {
            for c in w.chars().filter(|c| crate::sensitive::is_unspaced(*c)) {
                if let Some(list) = self.by_first_char.get(&c) {
                    out.extend_from_slice(list);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The first phrase of the list that matches `ws`.
    pub(super) fn first_in(&self, ws: &[String]) -> Option<&'static str> {
        self.candidates(ws).into_iter().map(|i| &self.phrases[i]).find(|p| p.in_words(ws)).map(|p| p.source)
    }
}

pub(super) struct CompiledRule {
    pub(super) rule: &'static KeywordRule,
    pub(super) keywords: PhraseSet,
    pub(super) not_phrases: PhraseSet,
}

pub(super) struct Compiled {
    pub(super) rules: Vec<CompiledRule>,
    pub(super) security_verbs: PhraseSet,
    pub(super) security_objects: PhraseSet,
    pub(super) affirmative: PhraseSet,
    pub(super) dismiss: Vec<Vec<String>>,
    pub(super) terms: PhraseSet,
    pub(super) search_context: PhraseSet,
    pub(super) look_alike_words: Vec<Vec<Phrase>>,
    pub(super) look_alike_unless: Vec<Vec<Phrase>>,
    pub(super) payment_paths: PhraseSet,
    pub(super) account_paths: PhraseSet,
    pub(super) action_paths: PhraseSet,
}

pub(super) fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| {
        // A list: the base constant, then each language's part of it.
        let list = |base: &'static [&'static str], part: fn(&Language) -> &'static [&'static str]| {
            PhraseSet::new(base.iter().chain(languages::all().flat_map(move |l| part(l).iter())))
        };
        let only = |l: &[&'static str]| l.iter().map(|s| compile(s)).collect::<Vec<_>>();
        Compiled {
            rules: KEYWORD_RULES
                .iter()
                .map(|r| CompiledRule {
                    rule: r,
                    keywords: PhraseSet::new(
                        r.keywords.iter().chain(languages::all().flat_map(|l| l.keywords(r.id).iter())),
                    ),
                    not_phrases: PhraseSet::new(
                        r.not_phrases.iter().chain(
                            languages::all()
                                .flat_map(|l| l.not_phrases.iter().filter(|(id, _)| *id == r.id).map(|(_, p)| p)),
                        ),
                    ),
                })
                .collect(),
            security_verbs: list(SECURITY_VERBS, |l| l.security_verbs),
            security_objects: list(SECURITY_OBJECTS, |l| l.security_objects),
            affirmative: list(AFFIRMATIVE, |l| l.affirmative),
            dismiss: DISMISS
                .iter()
                .chain(languages::all().flat_map(|l| l.dismiss.iter()))
                .map(|s| normalize(s))
                .collect(),
            terms: list(TERMS_WORDS, |l| l.terms),
            search_context: list(SEARCH_CONTEXT, |l| l.search_context),
            look_alike_words: LOOK_ALIKES.iter().map(|l| only(l.with_words)).collect(),
            look_alike_unless: LOOK_ALIKES.iter().map(|l| only(l.unless_words)).collect(),
            payment_paths: list(PAYMENT_PATHS, |l| l.payment_paths),
            account_paths: list(ACCOUNT_PATHS, |l| l.account_paths),
            action_paths: list(ACTION_PATHS, |l| l.action_paths),
        }
    })
}

pub(super) fn any_in(list: &PhraseSet, ws: &[String]) -> Option<&'static str> {
    list.first_in(ws)
}

/// One keyword match of a rule on a text: the rule and the keyword.
pub(super) struct KeywordHit {
    pub(super) rule: &'static KeywordRule,
    pub(super) keyword: String,
}

/// The longest keyword of each rule that matches `ws` and is not covered by
/// one of the rule's `not_phrases`; in rule order.
pub(super) fn keyword_hits(ws: &[String]) -> Vec<KeywordHit> {
    let c = compiled();
    let mut out = Vec::new();
    for r in &c.rules {
        // A not-phrase covers the words it matches; inside a run of an
        // unspaced script it covers only its own characters, which are
        // blanked out of a copy of the words (made only when one matches).
        let mut covered: Vec<bool> = Vec::new();
        let mut masked: Option<Vec<String>> = None;
        for np in r.not_phrases.candidates(ws).into_iter().map(|i| &r.not_phrases.phrases[i]) {
            for start in np.find(masked.as_deref().unwrap_or(ws)) {
                if covered.is_empty() {
                    covered = vec![false; ws.len()];
                }
                for (k, p) in np.pats.iter().enumerate() {
                    if p.inside {
                        let m = masked.get_or_insert_with(|| ws.to_vec());
                        m[start + k] = m[start + k].replace(p.word.as_str(), "\u{0}");
                    } else {
                        covered[start + k] = true;
                    }
                }
            }
        }
        let words = masked.as_deref().unwrap_or(ws);
        let uncovered = |k: &Phrase| {
            k.find(words).into_iter().any(|s| covered.is_empty() || covered[s..s + k.pats.len()].iter().any(|c| !c))
        };
        // The longest matching keyword names the reason best ("place order"
        // rather than "order", "注文を確定" rather than "注文"); ties keep list
        // order.
        let longest =
            |k: &&Phrase| std::cmp::Reverse((k.pats.len(), k.pats.iter().map(|p| p.word.len()).sum::<usize>()));
        let keywords = &r.keywords.phrases;
        if let Some(k) =
            r.keywords.candidates(words).into_iter().map(|i| &keywords[i]).filter(|k| uncovered(k)).min_by_key(longest)
        {
            out.push(KeywordHit { rule: r.rule, keyword: k.source.to_string() });
        }
    }
    if let (Some(verb), Some(object)) = (any_in(&c.security_verbs, ws), any_in(&c.security_objects, ws)) {
        out.push(KeywordHit { rule: &SECURITY, keyword: format!("{verb}\" + \"{object}") });
    }
    out
}
