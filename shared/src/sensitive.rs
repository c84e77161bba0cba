//! Sensitive-field detection (docs/design.md, "Secrets, sensitive fields and
//! files"): password inputs, `autocomplete` tokens for cards, one-time codes
//! and passwords, or a name/id/label/placeholder that reads like one. Values
//! of such fields are always shown as [`MASK`] and never recorded.
//!
//! One matcher over normalised words stands in for "one regex": `shared`
//! has no regex engine, and word matching is what the rule means anyway
//! (`apiToken`, `api_token`, `API token` all match; `tokenring` does not).

/// What a masked value looks like.
pub const MASK: &str = "••••";

/// The kind of a sensitive field. On the wire (`ResolvedElement::sensitive`)
/// its [`as_str`](Self::as_str) name; a name this version does not know
/// reads as [`Unknown`](Self::Unknown), which every rule treats as the
/// strictest kind (never filled by the agent, like a password): a security
/// decision must not depend on which side reads a newer name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SensitiveKind {
    Password,
    OneTimeCode,
    Pin,
    /// API keys, access tokens, client secrets.
    Token,
    /// Card number, CVV, expiry.
    Card,
    /// IBAN, account and routing numbers.
    Bank,
    /// Social security and similar national ids.
    NationalId,
    /// A kind named on the wire that this version does not know: the
    /// strictest (see the type's docs). Detection never gives it out.
    Unknown,
}

impl SensitiveKind {
    /// Every kind detection gives out, in the order of the enum (not
    /// [`Unknown`](Self::Unknown)).
    pub const ALL: [SensitiveKind; 7] = [
        SensitiveKind::Password,
        SensitiveKind::OneTimeCode,
        SensitiveKind::Pin,
        SensitiveKind::Token,
        SensitiveKind::Card,
        SensitiveKind::Bank,
        SensitiveKind::NationalId,
    ];

    /// The wire name (`ResolvedElement::sensitive`).
    pub fn as_str(self) -> &'static str {
        match self {
            SensitiveKind::Password => "password",
            SensitiveKind::OneTimeCode => "one_time_code",
            SensitiveKind::Pin => "pin",
            SensitiveKind::Token => "token",
            SensitiveKind::Card => "card",
            SensitiveKind::Bank => "bank",
            SensitiveKind::NationalId => "national_id",
            SensitiveKind::Unknown => "unknown",
        }
    }

    /// The kind of a wire name; `None` for a name this version does not know.
    pub fn parse(name: &str) -> Option<SensitiveKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The kind of a wire name, [`Unknown`](Self::Unknown) for a name this
    /// version does not know (how both sides read the wire).
    pub fn from_wire(name: &str) -> SensitiveKind {
        Self::parse(name).unwrap_or(SensitiveKind::Unknown)
    }

    /// Card and bank credentials and passwords are never entered by the
    /// agent, not even from the secret store (reference 000); nor is a
    /// field of a kind this version does not know.
    pub fn agent_may_never_fill(self) -> bool {
        matches!(self, SensitiveKind::Card | SensitiveKind::Bank | SensitiveKind::Password | SensitiveKind::Unknown)
    }
}

impl serde::Serialize for SensitiveKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for SensitiveKind {
    /// Any string: a name this version does not know is
    /// [`Unknown`](SensitiveKind::Unknown), never an error.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(SensitiveKind::from_wire(&name))
    }
}

/// The attributes of a form field that decide sensitivity.
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldFacts<'a> {
    pub input_type: &'a str,
    pub autocomplete: &'a str,
    pub name: &'a str,
    pub id: &'a str,
    pub label: &'a str,
    pub placeholder: &'a str,
}

/// Whether a field is sensitive, and why.
pub fn classify_field(f: &FieldFacts<'_>) -> Option<SensitiveKind> {
    if f.input_type.eq_ignore_ascii_case("password") {
        return Some(SensitiveKind::Password);
    }
    if let Some(kind) = classify_autocomplete(f.autocomplete) {
        return Some(kind);
    }
    [f.name, f.id, f.label, f.placeholder].into_iter().find_map(classify_name)
}

fn classify_autocomplete(ac: &str) -> Option<SensitiveKind> {
    ac.split_ascii_whitespace().find_map(|t| {
        let t = t.to_ascii_lowercase();
        match t.as_str() {
            "current-password" | "new-password" => Some(SensitiveKind::Password),
            "one-time-code" => Some(SensitiveKind::OneTimeCode),
            t if t.starts_with("cc-") => Some(SensitiveKind::Card),
            _ => None,
        }
    })
}

/// Phrases (as normalised word sequences) and what they mean.
const PHRASES: &[(&[&str], SensitiveKind)] = &[
    (&["password"], SensitiveKind::Password),
    (&["passwd"], SensitiveKind::Password),
    (&["pwd"], SensitiveKind::Password),
    (&["passphrase"], SensitiveKind::Password),
    (&["pass", "word"], SensitiveKind::Password),
    (&["passwort"], SensitiveKind::Password),
    (&["contrasena"], SensitiveKind::Password),
    (&["mot", "de", "passe"], SensitiveKind::Password),
    (&["wachtwoord"], SensitiveKind::Password),
    (&["senha"], SensitiveKind::Password),
    (&["passcode"], SensitiveKind::Pin),
    (&["pin"], SensitiveKind::Pin),
    (&["pincode"], SensitiveKind::Pin),
    (&["otp"], SensitiveKind::OneTimeCode),
    (&["totp"], SensitiveKind::OneTimeCode),
    (&["one", "time", "code"], SensitiveKind::OneTimeCode),
    (&["one", "time", "password"], SensitiveKind::OneTimeCode),
    (&["2fa"], SensitiveKind::OneTimeCode),
    (&["mfa"], SensitiveKind::OneTimeCode),
    (&["verification", "code"], SensitiveKind::OneTimeCode),
    (&["authentication", "code"], SensitiveKind::OneTimeCode),
    (&["token"], SensitiveKind::Token),
    (&["secret"], SensitiveKind::Token),
    (&["api", "key"], SensitiveKind::Token),
    (&["apikey"], SensitiveKind::Token),
    (&["access", "key"], SensitiveKind::Token),
    (&["private", "key"], SensitiveKind::Token),
    (&["client", "secret"], SensitiveKind::Token),
    (&["cvv"], SensitiveKind::Card),
    (&["cvv2"], SensitiveKind::Card),
    (&["cvc"], SensitiveKind::Card),
    (&["csc"], SensitiveKind::Card),
    (&["security", "code"], SensitiveKind::Card),
    (&["card", "number"], SensitiveKind::Card),
    (&["cardnumber"], SensitiveKind::Card),
    (&["card", "no"], SensitiveKind::Card),
    (&["cc", "number"], SensitiveKind::Card),
    (&["ccnumber"], SensitiveKind::Card),
    (&["ccnum"], SensitiveKind::Card),
    (&["credit", "card"], SensitiveKind::Card),
    (&["debit", "card"], SensitiveKind::Card),
    (&["iban"], SensitiveKind::Bank),
    (&["account", "number"], SensitiveKind::Bank),
    (&["routing", "number"], SensitiveKind::Bank),
    (&["sort", "code"], SensitiveKind::Bank),
    (&["bank", "account"], SensitiveKind::Bank),
    (&["ssn"], SensitiveKind::NationalId),
    (&["social", "security"], SensitiveKind::NationalId),
];

/// Whether a field name, id, label or placeholder reads as sensitive.
pub fn classify_name(s: &str) -> Option<SensitiveKind> {
    if s.is_empty() {
        return None;
    }
    let words = words(s);
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    PHRASES.iter().find(|(phrase, _)| refs.windows(phrase.len()).any(|w| w == *phrase)).map(|(_, kind)| *kind)
}

/// Lower-case words: splits on anything not alphanumeric, on camelCase
/// boundaries and where a script written without spaces ([`is_unspaced`])
/// meets one written with them (`PayPalで支払う` → `pay`, `pal`, `で支払う`);
/// drops diacritics of Latin letters (also after lower-casing, so `USUŃ`
/// and `usuń` read alike); reads look-alike letters, invisible and
/// bidirectional characters and combining marks as
/// [`crate::confusable::fold`] says. A run of an unspaced script is one
/// word: matchers look for their keywords inside it (`crate::risk`).
///
/// A run of letters written all in Greek is read in capitals first
/// ([`crate::confusable::greek_runs_upper`]): Greek capitals drop their
/// accents, so `Διαγραφή`, `ΔΙΑΓΡΑΦΗ` and `διαγραφή` read alike (a Greek
/// letter inside a Latin word is still read as the Latin letter it looks
/// like). Indic vowel signs and viramas belong to their word.
pub fn words(s: &str) -> Vec<String> {
    use crate::confusable::{Fold, fold};
    let greek = crate::confusable::greek_runs_upper(s);
    let s = greek.as_deref().unwrap_or(s);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    let mut prev_unspaced = false;
    for c in s.chars() {
        let c = match fold(c) {
            Fold::Keep(c) => c,
            Fold::Drop => continue,
        };
        let unspaced = is_unspaced(c);
        if c.is_alphanumeric() || unspaced || is_indic_mark(c) {
            if !cur.is_empty() && ((c.is_uppercase() && prev_lower) || unspaced != prev_unspaced) {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            prev_unspaced = unspaced;
            if c.is_ascii() {
                cur.push(c.to_ascii_lowercase());
                continue;
            }
            if unspaced {
                // No case, no diacritics to fold.
                cur.push(c);
                continue;
            }
            for l in c.to_lowercase() {
                // Lower-casing may produce a letter that folds (`Ś` → `ś`)
                // or a combining mark (`İ` → `i` + U+0307).
                if let Fold::Keep(l) = fold(l) {
                    cur.push(fold_diacritic(l));
                }
            }
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Vowel signs, viramas and other marks of the Indic scripts (Devanagari
/// to Sinhala) that `char::is_alphanumeric` does not count as letters: they
/// are part of their word (`क्रेडिट` is one word), not a break. The dandas
/// are punctuation.
fn is_indic_mark(c: char) -> bool {
    matches!(c as u32, 0x0900..=0x0DFF) && !matches!(c, '\u{0964}' | '\u{0965}')
}

/// Letters of scripts written without spaces between words, or whose words
/// carry their particles and endings attached (Korean): Han ideographs,
/// Hiragana, Katakana (with the prolonged sound mark and iteration marks),
/// Hangul, Thai, Lao, Khmer and Myanmar, including their vowel and tone
/// marks. In these a keyword matches as a part of a word.
pub fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E01..=0x0E5B     // Thai
        | 0x0E81..=0x0EDF   // Lao
        | 0x1000..=0x109F   // Myanmar
        | 0x1100..=0x11FF   // Hangul Jamo
        | 0x1780..=0x17FF   // Khmer
        | 0x3005..=0x3007   // 々 〆 〇
        | 0x3041..=0x30FF   // Hiragana, Katakana, ー
        | 0x3130..=0x318F   // Hangul compatibility Jamo
        | 0x31F0..=0x31FF   // Katakana phonetic extensions
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xAC00..=0xD7A3   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0xFF66..=0xFF9F   // half-width Katakana
        | 0x20000..=0x3134F // CJK extensions B–G
    )
}

/// Maps common accented Latin letters to their base letter.
pub fn fold_diacritic(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'ç' => 'c',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_never_fills_passwords_cards_or_bank_details() {
        for kind in SensitiveKind::ALL {
            let never = matches!(kind, SensitiveKind::Password | SensitiveKind::Card | SensitiveKind::Bank);
            assert_eq!(kind.agent_may_never_fill(), never, "{kind:?}");
        }
    }

    #[test]
    fn unknown_kinds_are_the_strictest_and_read_from_any_string() {
        assert!(SensitiveKind::Unknown.agent_may_never_fill());
        assert!(!SensitiveKind::ALL.contains(&SensitiveKind::Unknown), "detection never gives it out");
        for kind in SensitiveKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(serde_json::from_str::<SensitiveKind>(&json).unwrap(), kind);
        }
        for name in ["\"some-new-kind\"", "\"\"", "\"PASSWORD\"", "\"unknown\""] {
            assert_eq!(serde_json::from_str::<SensitiveKind>(name).unwrap(), SensitiveKind::Unknown, "{name}");
        }
        // Still a string on the wire: anything else is an error.
        assert!(serde_json::from_str::<SensitiveKind>("3").is_err());
    }

    #[test]
    fn names_that_read_as_secrets_are_sensitive() {
        for (s, kind) in [
            ("api_token", SensitiveKind::Token),
            ("apiToken", SensitiveKind::Token),
            ("API key", SensitiveKind::Token),
            ("user[password]", SensitiveKind::Password),
            ("Mot de passe", SensitiveKind::Password),
            ("Contraseña", SensitiveKind::Password),
            ("otp", SensitiveKind::OneTimeCode),
            ("Enter the verification code", SensitiveKind::OneTimeCode),
            ("cardNumber", SensitiveKind::Card),
            ("CVV", SensitiveKind::Card),
            ("IBAN", SensitiveKind::Bank),
            ("ssn", SensitiveKind::NationalId),
            ("PIN", SensitiveKind::Pin),
        ] {
            assert_eq!(classify_name(s), Some(kind), "{s}");
        }
    }

    #[test]
    fn ordinary_fields_are_not_sensitive() {
        for s in [
            "email",
            "Discount code",
            "search",
            "code",
            "tokenring",
            "Spinner",
            "Opinion",
            "username",
            "Shipping address",
        ] {
            assert_eq!(classify_name(s), None, "{s}");
        }
    }

    #[test]
    fn unspaced_scripts_are_runs_split_from_spaced_ones() {
        assert_eq!(words("PayPalで支払う"), ["pay", "pal", "で支払う"]);
        assert_eq!(words("Google アカウントを削除"), ["google", "アカウントを削除"]);
        assert_eq!(words("使用PayPal支付"), ["使用", "pay", "pal", "支付"]);
        assert_eq!(words("카카오로 로그인"), ["카카오로", "로그인"]);
        // Thai tone and vowel marks belong to the word.
        assert_eq!(words("ส่งข้อความ"), ["ส่งข้อความ"]);
        assert_eq!(words("2段階認証"), ["2", "段階認証"]);
    }

    #[test]
    fn wire_names_round_trip() {
        for k in SensitiveKind::ALL {
            assert_eq!(SensitiveKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(SensitiveKind::parse("something-new"), None);
    }

    #[test]
    fn type_and_autocomplete_decide_before_names() {
        let f = FieldFacts { input_type: "password", name: "x", ..Default::default() };
        assert_eq!(classify_field(&f), Some(SensitiveKind::Password));
        let f = FieldFacts { input_type: "text", autocomplete: "section-a cc-number", ..Default::default() };
        assert_eq!(classify_field(&f), Some(SensitiveKind::Card));
        let f = FieldFacts { input_type: "text", autocomplete: "one-time-code", ..Default::default() };
        assert_eq!(classify_field(&f), Some(SensitiveKind::OneTimeCode));
        let f = FieldFacts { input_type: "text", label: "Your API token", ..Default::default() };
        assert_eq!(classify_field(&f), Some(SensitiveKind::Token));
        let f = FieldFacts { input_type: "email", autocomplete: "email", name: "email", ..Default::default() };
        assert_eq!(classify_field(&f), None);
    }
}
