//! Stored secrets the agent typed, recognised in a capture without
//! keeping their values (issue 33).
//!
//! A stored secret's value crosses the extension socket once, in the one
//! fill message (ARCHITECTURE.md, "Invariants"). A page it was typed into
//! may send it on, under any name (`extra=…`); the network capture would
//! then carry it back to the bridge. So the worker, when it relays a fill,
//! keeps only [`Typed`]: the secret's name and, for each spelling of the
//! value ([`crate::redact::known_spellings`]: as is, upper- and
//! lower-cased, reversed, hex, base64 standard and URL-safe, padded or not
//! and at each alignment inside a longer base64 text, each of those as is,
//! percent-encoded and JSON-escaped), its length, its alphabet and a keyed
//! hash (SipHash-2-4 under a [`Key`] drawn at random when the worker
//! starts, never sent anywhere). Before a captured request leaves the
//! worker, [`mask_captured`] replaces every run of text whose keyed hash is
//! one of those by `{secret:NAME}` — in the URL, the headers, the form
//! fields, the raw or response body and the WebSocket frames. The value
//! itself is not kept, so neither the worker's memory nor anything it
//! sends holds it after the fill.
//!
//! The match is exact (every window of each form's length is hashed, where
//! the form's alphabet allows it), so a value sent in any of those
//! spellings is caught; a false match (a 64-bit collision) can only hide a
//! harmless run of text, never show a secret. A value split in two is not
//! recognised here: the bridge's `redact::KnownSet` masks its pieces (it
//! has the plaintext), and pages a secret was typed into are the
//! withholding rule's (`shared::withhold`). Pieces would multiply the
//! lengths hashed at every byte; the spellings' lengths are few (seven for
//! a 22-character ASCII value), see [`TypedSecrets::mask`]. Values shorter
//! than `redact::MIN_KNOWN_VALUE_CHARS` are not kept (they would match
//! everywhere); their fields are still masked by name in the bridge.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::network::{Captured, Header, RequestBody, ResponseBody};
use crate::redact::{Alphabet, MIN_KNOWN_VALUE_CHARS, known_spellings};

/// Most secrets remembered (the oldest typed go first).
pub const MAX_TYPED: usize = 32;

/// The worker's random hash key (two 64-bit halves).
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key(pub [u64; 2]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// One typed secret: its name and, per spelling, `(bytes, keyed hash,
/// alphabet)`. The alphabet comes from the spelling's kind (hex, base64…),
/// never from the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Typed {
    pub name: String,
    forms: Vec<(usize, u64, Alphabet)>,
}

impl Typed {
    /// What is kept of secret `name` whose value is `value`; `None` for a
    /// value too short to be recognised by value.
    pub fn new(key: Key, name: &str, value: &str) -> Option<Typed> {
        if value.chars().count() < MIN_KNOWN_VALUE_CHARS {
            return None;
        }
        let mut forms: Vec<(usize, u64, Alphabet)> = known_spellings(value)
            .iter()
            .map(|s| (s.text.len(), siphash24(key, s.text.as_bytes()), s.alphabet))
            .collect();
        forms.sort_unstable();
        forms.dedup();
        Some(Typed { name: name.to_string(), forms })
    }
}

/// What [`TypedSecrets::mask`] looks up, built from the typed secrets: every
/// `(bytes, hash)` and whose it is, sorted, and each form length (longest
/// first) with the set of alphabets of the forms of that length (bit `i`:
/// [`Alphabet::ALL`]`[i]`).
#[derive(Debug, Clone, Default)]
struct Index {
    hashes: Vec<(usize, u64, usize)>,
    lengths: Vec<(usize, u8)>,
}

impl Index {
    fn of(typed: &[Typed]) -> Index {
        let mut hashes: Vec<(usize, u64, usize)> =
            typed.iter().enumerate().flat_map(|(i, t)| t.forms.iter().map(move |f| (f.0, f.1, i))).collect();
        // The newest secret wins a hash two share (the same value typed under two names).
        hashes.sort_unstable_by_key(|h| (h.0, h.1, std::cmp::Reverse(h.2)));
        hashes.dedup_by_key(|h| (h.0, h.1));
        let mut lengths: Vec<(usize, u8)> = Vec::new();
        for f in typed.iter().flat_map(|t| &t.forms) {
            let bit = 1u8 << Alphabet::ALL.iter().position(|a| *a == f.2).unwrap_or(0);
            match lengths.iter_mut().find(|l| l.0 == f.0) {
                Some(l) => l.1 |= bit,
                None => lengths.push((f.0, bit)),
            }
        }
        lengths.sort_unstable_by_key(|l| std::cmp::Reverse(l.0));
        Index { hashes, lengths }
    }

    fn find(&self, len: usize, hash: u64) -> Option<usize> {
        self.hashes.binary_search_by(|h| (h.0, h.1).cmp(&(len, hash))).ok().map(|i| self.hashes[i].2)
    }
}

/// The secrets typed so far (bounded by [`MAX_TYPED`]) and the key. Kept
/// across the worker's restarts as [`Self::to_json`] in the extension's
/// memory-only `chrome.storage.session` (the key and hashes, never a
/// value; u64s exact in the JSON text).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TypedSecrets {
    key: Key,
    typed: Vec<Typed>,
    #[serde(skip)]
    index: Index,
}

impl TypedSecrets {
    pub fn new(key: Key) -> TypedSecrets {
        TypedSecrets { key, typed: Vec::new(), index: Index::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.typed.is_empty()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// What [`Self::to_json`] wrote; `None` for anything else.
    pub fn from_json(text: &str) -> Option<TypedSecrets> {
        let mut t = serde_json::from_str::<TypedSecrets>(text).ok().filter(|t| t.typed.len() <= MAX_TYPED)?;
        t.index = Index::of(&t.typed);
        Some(t)
    }

    /// Remembers secret `name` typed with `value` (a repeat replaces the
    /// older entry of that name).
    pub fn remember(&mut self, name: &str, value: &str) {
        let Some(t) = Typed::new(self.key, name, value) else { return };
        self.typed.retain(|o| o.name != t.name);
        if self.typed.len() >= MAX_TYPED {
            self.typed.remove(0);
        }
        self.typed.push(t);
        self.index = Index::of(&self.typed);
    }

    /// `text` with every run matching a typed secret's spelling replaced by
    /// `{secret:NAME}` (longer forms first; scanned left to right).
    ///
    /// Cost: at each character, one keyed hash per distinct form length
    /// whose window fits the form's alphabet (a hex or base64 form is only
    /// hashed inside a run of hex or base64 characters that long, which
    /// ordinary text rarely has). A 22-character ASCII secret has seven
    /// lengths and, in text that is not base64 or hex, hashes about one
    /// window a byte: `mask_cost_is_bounded` measures it on 256 KB bodies.
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.mask_counting(text).0
    }

    /// [`Self::mask`], and how many windows it hashed.
    fn mask_counting<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        let lengths = &self.index.lengths;
        let shortest = lengths.last().map_or(usize::MAX, |l| l.0);
        if self.typed.is_empty() || text.len() < shortest {
            return (Cow::Borrowed(text), 0);
        }
        let bytes = text.as_bytes();
        let used = lengths.iter().fold(0u8, |m, l| m | l.1);
        // runs[a][i]: how many bytes from i on fit alphabet a (none for Any).
        let runs: Vec<Vec<u32>> = Alphabet::ALL
            .iter()
            .enumerate()
            .map(|(bit, a)| {
                if *a == Alphabet::Any || used & (1 << bit) == 0 {
                    return Vec::new();
                }
                let mut run = vec![0u32; bytes.len() + 1];
                for i in (0..bytes.len()).rev() {
                    run[i] = if a.admits(bytes[i]) { run[i + 1] + 1 } else { 0 };
                }
                run
            })
            .collect();
        let fits = |i: usize, len: usize, set: u8| {
            set & 1 != 0 || (1..Alphabet::ALL.len()).any(|bit| set & (1 << bit) != 0 && runs[bit][i] as usize >= len)
        };
        let mut hashed = 0;
        let mut out: Option<String> = None;
        let mut copied = 0; // bytes of `text` already in `out`
        let mut i = 0;
        while i < bytes.len() {
            let mut hit = None;
            if text.is_char_boundary(i) {
                for &(len, set) in lengths.iter().filter(|l| i + l.0 <= bytes.len()) {
                    if !text.is_char_boundary(i + len) || !fits(i, len, set) {
                        continue;
                    }
                    hashed += 1;
                    if let Some(t) = self.index.find(len, siphash24(self.key, &bytes[i..i + len])) {
                        hit = Some((len, self.typed[t].name.as_str()));
                        break;
                    }
                }
            }
            match hit {
                Some((len, name)) => {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    o.push_str(&text[copied..i]);
                    o.push_str("{secret:");
                    o.push_str(name);
                    o.push('}');
                    i += len;
                    copied = i;
                }
                None => i += 1,
            }
        }
        let masked = match out {
            None => Cow::Borrowed(text),
            Some(mut o) => {
                o.push_str(&text[copied..]);
                Cow::Owned(o)
            }
        };
        (masked, hashed)
    }

    fn mask_in(&self, s: &mut String) {
        if let Cow::Owned(m) = self.mask(s) {
            *s = m;
        }
    }

    /// Every text of `c` masked ([`Self::mask`]).
    pub fn mask_captured(&self, c: &mut Captured) {
        if self.typed.is_empty() {
            return;
        }
        self.mask_in(&mut c.url);
        self.mask_in(&mut c.status_line);
        for s in c.error.iter_mut().chain(c.redirect_url.iter_mut()) {
            self.mask_in(s);
        }
        for Header { name, value } in c.request_headers.iter_mut().chain(c.response_headers.iter_mut()) {
            self.mask_in(name);
            self.mask_in(value);
        }
        match &mut c.request_body {
            Some(RequestBody::Form { fields }) => {
                for (k, vs) in fields {
                    self.mask_in(k);
                    vs.iter_mut().for_each(|v| self.mask_in(v));
                }
            }
            Some(RequestBody::Raw { text, .. }) => self.mask_in(text),
            None => {}
        }
        if let Some(ResponseBody::Text { text, .. }) = &mut c.response_body {
            self.mask_in(text);
        }
        for f in &mut c.websocket_messages {
            self.mask_in(&mut f.data);
        }
    }
}

/// `c` masked with `typed` (see [`TypedSecrets::mask_captured`]).
pub fn mask_captured(typed: &TypedSecrets, mut c: Captured) -> Captured {
    typed.mask_captured(&mut c);
    c
}

/// SipHash-2-4 of `data` under `key` (Aumasson and Bernstein's reference).
pub fn siphash24(key: Key, data: &[u8]) -> u64 {
    let [k0, k1] = key.0;
    let mut v0 = k0 ^ 0x736f_6d65_7073_6575;
    let mut v1 = k1 ^ 0x646f_7261_6e64_6f6d;
    let mut v2 = k0 ^ 0x6c79_6765_6e65_7261;
    let mut v3 = k1 ^ 0x7465_6462_7974_6573;
    let round = |v0: &mut u64, v1: &mut u64, v2: &mut u64, v3: &mut u64| {
        *v0 = v0.wrapping_add(*v1);
        *v1 = v1.rotate_left(13) ^ *v0;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v3);
        *v3 = v3.rotate_left(16) ^ *v2;
        *v0 = v0.wrapping_add(*v3);
        *v3 = v3.rotate_left(21) ^ *v0;
        *v2 = v2.wrapping_add(*v1);
        *v1 = v1.rotate_left(17) ^ *v2;
        *v2 = v2.rotate_left(32);
    };
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let m = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        v3 ^= m;
        round(&mut v0, &mut v1, &mut v2, &mut v3);
        round(&mut v0, &mut v1, &mut v2, &mut v3);
        v0 ^= m;
    }
    let mut last = [0u8; 8];
    let rest = chunks.remainder();
    last[..rest.len()].copy_from_slice(rest);
    last[7] = data.len() as u8;
    let m = u64::from_le_bytes(last);
    v3 ^= m;
    round(&mut v0, &mut v1, &mut v2, &mut v3);
    round(&mut v0, &mut v1, &mut v2, &mut v3);
    v0 ^= m;
    v2 ^= 0xff;
    for _ in 0..4 {
        round(&mut v0, &mut v1, &mut v2, &mut v3);
    }
    v0 ^ v1 ^ v2 ^ v3
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: Key = Key([0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908]);

    #[test]
    fn siphash_matches_the_reference_vectors() {
        // The paper's appendix: key 00..0f, messages 00, 00 01, … (first ones).
        let data: Vec<u8> = (0u8..64).collect();
        assert_eq!(siphash24(KEY, &data[..0]), 0x726f_db47_dd0e_0e31);
        assert_eq!(siphash24(KEY, &data[..1]), 0x74f8_39c5_93dc_67fd);
        assert_eq!(siphash24(KEY, &data[..8]), 0x93f5_f579_9a93_2462);
        assert_eq!(siphash24(KEY, &data[..15]), 0xa129_ca61_49be_45e5);
    }

    /// Named cases: what a page sent → what leaves the worker, with the
    /// secrets NOTE = `Tr0ub4dor&3 note` and ÉTÉ = `été-2026` typed.
    #[test]
    fn typed_values_become_their_names_wherever_they_are() {
        let mut t = TypedSecrets::new(KEY);
        t.remember("NOTE", "Tr0ub4dor&3 note");
        t.remember("ETE", "été-2026");
        t.remember("PIN", "482"); // too short: not kept
        let cases: &[(&str, &str, &str)] = &[
            ("JSON under a harmless key", r#"{"extra":"Tr0ub4dor&3 note"}"#, r#"{"extra":"{secret:NOTE}"}"#),
            ("query, encodeURIComponent", "/n?extra=Tr0ub4dor%263%20note&x=1", "/n?extra={secret:NOTE}&x=1"),
            ("form encoding, + for space", "extra=Tr0ub4dor%263+note", "extra={secret:NOTE}"),
            ("lower-case hex", "extra=Tr0ub4dor%263%20note", "extra={secret:NOTE}"),
            ("inside running text", "my note is Tr0ub4dor&3 note, ok", "my note is {secret:NOTE}, ok"),
            ("twice", "Tr0ub4dor&3 noteTr0ub4dor&3 note", "{secret:NOTE}{secret:NOTE}"),
            ("non-ASCII value", "v=été-2026;", "v={secret:ETE};"),
            ("non-ASCII, percent-encoded", "v=%C3%A9t%C3%A9-2026", "v={secret:ETE}"),
            ("a prefix of the value is not it", "Tr0ub4dor&3 not", "Tr0ub4dor&3 not"),
            ("lower-cased by the page", "tr0ub4dor&3 note", "{secret:NOTE}"),
            ("upper-cased by the page", "x=TR0UB4DOR&3 NOTE", "x={secret:NOTE}"),
            ("reversed by the page", "eton 3&rod4bu0rT", "{secret:NOTE}"),
            ("hex of its bytes", "h=547230756234646f722633206e6f7465", "h={secret:NOTE}"),
            ("base64 of it", "b=VHIwdWI0ZG9yJjMgbm90ZQ==", "b={secret:NOTE}"),
            ("mixed case is not a spelling a page makes", "tR0UB4DOR&3 note", "tR0UB4DOR&3 note"),
            ("short values are not masked by value", "pin=482", "pin=482"),
            ("nothing to mask", "", ""),
        ];
        for (name, input, want) in cases {
            assert_eq!(t.mask(input), *want, "{name}");
        }
    }

    /// `fixtures/redaction/known.tsv`, its fifth column: what the worker
    /// shows of each input with the table's secrets typed, by
    /// [`TypedSecrets::mask`] and in every text of a capture by
    /// [`mask_captured`].
    #[test]
    fn typed_values_in_every_spelling_from_the_fixture_table() {
        let (known, cases) = crate::redact::known_table();
        let mut t = TypedSecrets::new(KEY);
        for k in &known {
            t.remember(&k.name, &k.value);
        }
        let mut failures = Vec::new();
        for (line, what, input, _, worker) in &cases {
            let got = t.mask(input);
            if got != *worker {
                failures.push(format!(
                    "line {line}: {what}\n  input    {input:?}\n  expected {worker:?}\n  got      {got:?}"
                ));
            }
            let c = mask_captured(&t, carrying(input));
            assert_eq!(c, carrying(worker), "line {line}: {what}, in a capture");
        }
        assert!(cases.len() >= 50, "{}", cases.len());
        assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    }

    /// A capture carrying `s` in each of its texts.
    fn carrying(s: &str) -> Captured {
        Captured {
            tab: 1,
            url: format!("http://a/x?e={s}"),
            method: "POST".into(),
            resource_type: "xmlhttprequest".into(),
            status: 200,
            status_line: s.into(),
            error: Some(s.into()),
            started_ms: 0.0,
            duration_ms: 1.0,
            request_headers: vec![Header { name: "X-Note".into(), value: s.into() }],
            response_headers: vec![Header { name: s.into(), value: format!("v {s}") }],
            request_body: Some(RequestBody::Form { fields: vec![("extra".into(), vec![s.into(), "1".into()])] }),
            redirect_url: Some(format!("http://a/{s}")),
            from_cache: false,
            response_body: Some(ResponseBody::Text { text: format!("{{\"echo\":\"{s}\"}}"), cut: false }),
            websocket_messages: vec![crate::network::WsMessage { sent: true, time: 0.0, opcode: 1, data: s.into() }],
        }
    }

    /// What masking costs, in keyed hashes, on the largest bodies the
    /// worker keeps (256 KB) with the table's five secrets typed: about one
    /// hash per byte and per distinct length of the forms any byte may
    /// start (`Alphabet::Any`); the base64 and hex lengths only count where
    /// a run of base64 or hex that long is. Timings are printed
    /// (`--nocapture`), not asserted; once measured natively in release:
    /// 23 lengths, 9 of them any-byte; about 170 ms a 256 KB JSON or HTML
    /// body (9 hashes a byte), 400 ms one of pure base64 or hex (all 23).
    #[test]
    fn mask_cost_is_bounded() {
        let (known, _) = crate::redact::known_table();
        let mut t = TypedSecrets::new(KEY);
        for k in &known {
            t.remember(&k.name, &k.value);
        }
        let lengths = |alphabet: Alphabet| {
            let bit = Alphabet::ALL.iter().position(|a| *a == alphabet).unwrap();
            t.index.lengths.iter().filter(|l| l.1 & (1 << bit) != 0).count()
        };
        let any = lengths(Alphabet::Any);
        let all = t.index.lengths.len();
        eprintln!("distinct form lengths: {all}, of them any-byte: {any}");
        const BODY: usize = 256 * 1024;
        let fill = |piece: &str| piece.repeat(BODY / piece.len() + 1)[..BODY].to_string();
        let mut seed = 0x1234_5678_u64;
        let random: Vec<u8> = (0..BODY * 3 / 4)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let bodies = [
            (
                "JSON",
                fill(r#"{"id":18231,"title":"Buy milk and bread","done":false,"tags":["home","shop"]},"#),
                any + 1,
            ),
            ("HTML", fill("<li class=\"item\"><a href=\"/p/42?ref=nav\">Next page</a></li>\n"), any + 1),
            ("base64", crate::files::base64_encode(&random), all),
            ("hex", random.iter().map(|b| format!("{b:02x}")).collect::<String>()[..BODY].to_string(), all),
        ];
        for (what, body, per_byte) in bodies {
            let started = std::time::Instant::now();
            let (masked, hashed) = t.mask_counting(&body);
            let took = started.elapsed();
            // Random hex and base64 hold `4821` (PIN4) now and then.
            assert!(matches!(masked, Cow::Borrowed(_)) || what == "hex" || what == "base64", "{what}: nothing to mask");
            eprintln!(
                "{what}: {} bytes, {hashed} hashes ({:.2} a byte), {took:?}",
                body.len(),
                hashed as f64 / body.len() as f64
            );
            assert!(hashed <= per_byte * body.len(), "{what}: {hashed} hashes, over {per_byte} a byte");
        }
    }

    #[test]
    fn nothing_typed_masks_nothing_and_another_key_does_not_match() {
        let t = TypedSecrets::new(KEY);
        assert!(matches!(t.mask("Tr0ub4dor&3 note"), Cow::Borrowed(_)));
        let mut other = TypedSecrets::new(Key([1, 2]));
        other.remember("NOTE", "Tr0ub4dor&3 note");
        let mut mine = TypedSecrets::new(KEY);
        mine.remember("NOTE", "Tr0ub4dor&3 note");
        assert_ne!(other.typed[0].forms, mine.typed[0].forms, "hashes depend on the key");
        assert!(format!("{:?}", mine).contains("NOTE") && !format!("{:?}", mine).contains("Tr0ub4dor"));
    }

    #[test]
    fn kept_across_restarts_as_json_without_the_value() {
        let mut t = TypedSecrets::new(Key([u64::MAX - 1, 1 << 60]));
        t.remember("NOTE", "Tr0ub4dor&3 note");
        let json = t.to_json();
        assert!(!json.contains("Tr0ub4dor") && json.contains("NOTE"), "{json}");
        let back = TypedSecrets::from_json(&json).expect("read back");
        assert_eq!(back.mask("x Tr0ub4dor&3 note"), "x {secret:NOTE}", "the key and hashes survive exactly");
        assert!(TypedSecrets::from_json("{}").is_none());
        assert!(TypedSecrets::from_json("not json").is_none());
    }

    #[test]
    fn the_list_is_bounded_and_a_name_typed_again_replaces_its_value() {
        let mut t = TypedSecrets::new(KEY);
        t.remember("A", "first-value");
        t.remember("A", "second-value");
        assert_eq!(t.mask("first-value second-value"), "first-value {secret:A}");
        for i in 0..MAX_TYPED + 5 {
            t.remember(&format!("S{i}"), &format!("value-{i:04}"));
        }
        assert_eq!(t.typed.len(), MAX_TYPED);
        assert_eq!(t.mask("value-0000"), "value-0000", "the oldest went");
        assert_eq!(t.mask(&format!("value-{:04}", MAX_TYPED + 4)), format!("{{secret:S{}}}", MAX_TYPED + 4));
    }

    #[test]
    fn every_text_of_a_capture_is_masked() {
        let mut t = TypedSecrets::new(KEY);
        t.remember("NOTE", "Tr0ub4dor&3 note");
        let v = "Tr0ub4dor&3 note";
        let c = Captured {
            tab: 1,
            url: "http://a/x?e=Tr0ub4dor%263%20note".into(),
            method: "POST".into(),
            resource_type: "xmlhttprequest".into(),
            status: 200,
            status_line: String::new(),
            error: None,
            started_ms: 0.0,
            duration_ms: 1.0,
            request_headers: vec![Header { name: "X-Note".into(), value: v.into() }],
            response_headers: vec![Header { name: "X-Echo".into(), value: v.into() }],
            request_body: Some(RequestBody::Form { fields: vec![("extra".into(), vec![v.into()])] }),
            redirect_url: Some(format!("http://a/{v}")),
            from_cache: false,
            response_body: Some(ResponseBody::Text { text: format!("{{\"echo\":\"{v}\"}}"), cut: false }),
            websocket_messages: vec![crate::network::WsMessage {
                sent: true,
                time: 0.0,
                opcode: 1,
                data: format!("note {v}"),
            }],
        };
        let m = mask_captured(&t, c);
        let all = serde_json::to_string(&m).unwrap();
        assert!(!all.contains("Tr0ub4dor"), "{all}");
        assert_eq!(all.matches("{secret:NOTE}").count(), 7, "{all}");
    }
}
