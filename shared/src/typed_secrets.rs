//! Stored secrets the agent typed, recognised in a capture without
//! keeping their values (issue 33).
//!
//! A stored secret's value crosses the extension socket once, in the one
//! fill message (ARCHITECTURE.md, "Invariants"). A page it was typed into
//! may send it on, under any name (`extra=…`); the network capture would
//! then carry it back to the bridge. So the worker, when it relays a fill,
//! keeps only [`Typed`]: the secret's name and, for each spelling of the
//! value ([`crate::redact::known_forms`]: as is, percent-encoded, JSON
//! escaped, upper- and lower-cased, reversed, hex, base64 at any alignment), its length and a keyed hash (SipHash-2-4 under a [`Key`]
//! drawn at random when the worker starts, never sent anywhere). Before a
//! captured request leaves the worker, [`mask_captured`] replaces every
//! run of text whose keyed hash is one of those by `{secret:NAME}` — in
//! the URL, the headers, the form fields, the raw or response body and the
//! WebSocket frames. The value itself is not kept, so neither the worker's
//! memory nor anything it sends holds it after the fill.
//!
//! The match is exact (every window of each form's length is hashed), so
//! a value sent in any of the spellings the bridge's own `mask_known`
//! knows is caught; a false match (a 64-bit collision) can only hide a
//! harmless run of text, never show a secret. Values shorter than
//! `redact::MIN_KNOWN_VALUE_CHARS` are not kept (they would match
//! everywhere); their fields are still masked by name in the bridge.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::network::{Captured, Header, RequestBody, ResponseBody};
use crate::redact::{MIN_KNOWN_VALUE_CHARS, known_forms};

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

/// One typed secret: its name and, per spelling, `(bytes, keyed hash)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Typed {
    pub name: String,
    forms: Vec<(usize, u64)>,
}

impl Typed {
    /// What is kept of secret `name` whose value is `value`; `None` for a
    /// value too short to be recognised by value.
    pub fn new(key: Key, name: &str, value: &str) -> Option<Typed> {
        if value.chars().count() < MIN_KNOWN_VALUE_CHARS {
            return None;
        }
        let mut forms: Vec<(usize, u64)> = known_forms(value)
            .iter()
            .filter(|f| !f.is_empty())
            .map(|f| (f.len(), siphash24(key, f.as_bytes())))
            .collect();
        forms.sort_unstable();
        forms.dedup();
        Some(Typed { name: name.to_string(), forms })
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
}

impl TypedSecrets {
    pub fn new(key: Key) -> TypedSecrets {
        TypedSecrets { key, typed: Vec::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.typed.is_empty()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// What [`Self::to_json`] wrote; `None` for anything else.
    pub fn from_json(text: &str) -> Option<TypedSecrets> {
        serde_json::from_str::<TypedSecrets>(text).ok().filter(|t| t.typed.len() <= MAX_TYPED)
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
    }

    /// `text` with every run matching a typed secret replaced by
    /// `{secret:NAME}` (longer forms first; scanned left to right).
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.typed.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut lengths: Vec<usize> = self.typed.iter().flat_map(|t| t.forms.iter().map(|f| f.0)).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        lengths.dedup();
        let bytes = text.as_bytes();
        let mut out: Option<String> = None;
        let mut copied = 0; // bytes of `text` already in `out`
        let mut i = 0;
        while i < bytes.len() {
            let mut hit = None;
            if text.is_char_boundary(i) {
                for &len in lengths.iter().filter(|&&l| i + l <= bytes.len()) {
                    if !text.is_char_boundary(i + len) {
                        continue;
                    }
                    let h = siphash24(self.key, &bytes[i..i + len]);
                    if let Some(t) = self.typed.iter().find(|t| t.forms.contains(&(len, h))) {
                        hit = Some((len, t.name.as_str()));
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
        match out {
            None => Cow::Borrowed(text),
            Some(mut o) => {
                o.push_str(&text[copied..]);
                Cow::Owned(o)
            }
        }
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
            ("base64 of it", "b=VHIwdWI0ZG9yJjMgbm90ZQ==", "b={secret:NOTE}Q=="),
            ("mixed case is not a spelling a page makes", "tR0UB4DOR&3 note", "tR0UB4DOR&3 note"),
            ("short values are not masked by value", "pin=482", "pin=482"),
            ("nothing to mask", "", ""),
        ];
        for (name, input, want) in cases {
            assert_eq!(t.mask(input), *want, "{name}");
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
