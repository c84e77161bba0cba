//! The words that make a page a challenge, in every language the risk rules
//! read: one table per language in `challenge/lang/<code>.tsv`, merged with
//! the built-in (English and first-language) lists of [`super`] once, behind
//! a `OnceLock`. A sign-in, code, CAPTCHA, consent or block page in another
//! language is then decided by the same rules as its English twin; each
//! table's test builds those twins, and harmless look-alikes, from the
//! table's own words (`cargo test -p shared challenge::lang`).
//!
//! A line is `kind<TAB>phrase`; `#` starts a comment. Phrases are written
//! as a person reads them and matched after [`super::norm`] (case,
//! diacritics and look-alike letters fold); a phrase in a script written
//! without spaces (Japanese, Chinese, Korean, Thai) matches inside words.
//! Kinds, and the list of [`super`] each joins:
//! - `sign-in`: sign-in buttons and titles ("Sign in", "Log in");
//! - `sign-up`: sign-up buttons; `username`: words of a username/e-mail
//!   field; `new-password`: words that make a password field a new one;
//! - `code`: words of a one-time-code field; `mfa`: two-step context
//!   ("verification code", "we sent a code to your phone");
//! - `robot`: human checks ("I am not a robot"); `characters`: image
//!   CAPTCHA prompts ("type the characters in the image");
//! - `blocked`: block pages ("access denied", "unusual traffic", "too
//!   many requests");
//! - `consent`: OAuth consent ("wants to access your account"); `allow`
//!   and `deny`: its buttons;
//! - `passkey`: passkey prompts ("use your passkey"); `passkey-topic`: the
//!   word for a passkey or security key.

use std::sync::OnceLock;

/// Marks a normalised phrase of a script written without spaces: it
/// matches anywhere inside the words of a text (see `super::matches`).
pub(super) const UNSPACED: char = '\u{1}';

/// The tables, by BCP 47 code.
pub const TABLES: &[(&str, &str)] = &[
    ("ar", include_str!("lang/ar.tsv")),
    ("bg", include_str!("lang/bg.tsv")),
    ("bn", include_str!("lang/bn.tsv")),
    ("ca", include_str!("lang/ca.tsv")),
    ("cs", include_str!("lang/cs.tsv")),
    ("da", include_str!("lang/da.tsv")),
    ("de", include_str!("lang/de.tsv")),
    ("el", include_str!("lang/el.tsv")),
    ("es", include_str!("lang/es.tsv")),
    ("et", include_str!("lang/et.tsv")),
    ("fa", include_str!("lang/fa.tsv")),
    ("fi", include_str!("lang/fi.tsv")),
    ("fr", include_str!("lang/fr.tsv")),
    ("ga", include_str!("lang/ga.tsv")),
    ("he", include_str!("lang/he.tsv")),
    ("hi", include_str!("lang/hi.tsv")),
    ("hr", include_str!("lang/hr.tsv")),
    ("hu", include_str!("lang/hu.tsv")),
    ("id", include_str!("lang/id.tsv")),
    ("it", include_str!("lang/it.tsv")),
    ("ja", include_str!("lang/ja.tsv")),
    ("ko", include_str!("lang/ko.tsv")),
    ("lt", include_str!("lang/lt.tsv")),
    ("lv", include_str!("lang/lv.tsv")),
    ("ms", include_str!("lang/ms.tsv")),
    ("mt", include_str!("lang/mt.tsv")),
    ("nb", include_str!("lang/nb.tsv")),
    ("nl", include_str!("lang/nl.tsv")),
    ("pl", include_str!("lang/pl.tsv")),
    ("pt", include_str!("lang/pt.tsv")),
    ("ro", include_str!("lang/ro.tsv")),
    ("ru", include_str!("lang/ru.tsv")),
    ("sk", include_str!("lang/sk.tsv")),
    ("sl", include_str!("lang/sl.tsv")),
    ("sr", include_str!("lang/sr.tsv")),
    ("sv", include_str!("lang/sv.tsv")),
    ("th", include_str!("lang/th.tsv")),
    ("tr", include_str!("lang/tr.tsv")),
    ("uk", include_str!("lang/uk.tsv")),
    ("ur", include_str!("lang/ur.tsv")),
    ("vi", include_str!("lang/vi.tsv")),
    ("zh-Hans", include_str!("lang/zh-Hans.tsv")),
    ("zh-Hant", include_str!("lang/zh-Hant.tsv")),
];

/// Every kind a table may use.
pub const KINDS: &[&str] = &[
    "sign-in",
    "sign-up",
    "username",
    "new-password",
    "code",
    "mfa",
    "robot",
    "characters",
    "blocked",
    "consent",
    "allow",
    "deny",
    "passkey",
    "passkey-topic",
];

/// The merged lists (built-in first).
pub(super) struct Lists {
    pub sign_in: Vec<&'static str>,
    pub sign_in_title: Vec<&'static str>,
    pub sign_up: Vec<&'static str>,
    pub username: Vec<&'static str>,
    pub new_password: Vec<&'static str>,
    pub code: Vec<&'static str>,
    pub mfa: Vec<&'static str>,
    pub robot: Vec<&'static str>,
    pub characters: Vec<&'static str>,
    pub blocked: Vec<&'static str>,
    pub blocked_text: Vec<&'static str>,
    pub consent: Vec<&'static str>,
    pub allow: Vec<&'static str>,
    pub deny: Vec<&'static str>,
    pub passkey: Vec<&'static str>,
    pub passkey_topic: Vec<&'static str>,
}

/// One phrase of a table, normalised as the rules compare it (a phrase in
/// an unspaced script carries the [`UNSPACED`] mark).
pub(super) fn normalise(phrase: &str) -> Option<String> {
    let n = super::norm(phrase).trim().to_string();
    if n.is_empty() {
        return None;
    }
    Some(if n.chars().any(crate::sensitive::is_unspaced) { format!("{UNSPACED}{n}") } else { n })
}

/// `(kind, phrase)` of one table, or the errors of its lines.
pub(super) fn parse(code: &str, text: &'static str) -> (Vec<(&'static str, &'static str)>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once('\t') {
            Some((kind, phrase)) if !phrase.contains('\t') && !phrase.trim().is_empty() => {
                match KINDS.iter().find(|k| **k == kind.trim()) {
                    Some(k) => out.push((*k, phrase.trim())),
                    None => errors.push(format!("{code}.tsv line {}: unknown kind {kind:?}", i + 1)),
                }
            }
            _ => errors.push(format!("{code}.tsv line {}: expected kind<TAB>phrase: {line:?}", i + 1)),
        }
    }
    (out, errors)
}

pub(super) fn lists() -> &'static Lists {
    static L: OnceLock<Lists> = OnceLock::new();
    L.get_or_init(|| {
        let mut l = Lists {
            sign_in: super::SIGN_IN.to_vec(),
            sign_in_title: super::SIGN_IN_TITLE.to_vec(),
            sign_up: super::SIGN_UP.to_vec(),
            username: super::USERNAME_WORDS.to_vec(),
            new_password: super::NEW_PASSWORD_WORDS.to_vec(),
            code: super::CODE_WORDS.to_vec(),
            mfa: super::MFA_CONTEXT.to_vec(),
            robot: super::HUMAN_CHECK.to_vec(),
            characters: super::TEXT_CAPTCHA.to_vec(),
            blocked: super::BLOCKED.to_vec(),
            blocked_text: super::BLOCKED_TEXT.to_vec(),
            consent: super::CONSENT.to_vec(),
            allow: super::ALLOW.to_vec(),
            deny: super::DENY.to_vec(),
            passkey: super::PASSKEY_PROMPT.to_vec(),
            passkey_topic: super::PASSKEY_TOPIC.to_vec(),
        };
        for (code, text) in TABLES {
            for (kind, phrase) in parse(code, text).0 {
                let Some(n) = normalise(phrase) else { continue };
                let targets: Vec<&mut Vec<&'static str>> = match kind {
                    "sign-in" => vec![&mut l.sign_in, &mut l.sign_in_title],
                    "sign-up" => vec![&mut l.sign_up],
                    "username" => vec![&mut l.username],
                    "new-password" => vec![&mut l.new_password],
                    "code" => vec![&mut l.code],
                    "mfa" => vec![&mut l.mfa],
                    "robot" => vec![&mut l.robot],
                    "characters" => vec![&mut l.characters],
                    "blocked" => vec![&mut l.blocked, &mut l.blocked_text],
                    "consent" => vec![&mut l.consent],
                    "allow" => vec![&mut l.allow],
                    "deny" => vec![&mut l.deny],
                    "passkey" => vec![&mut l.passkey],
                    "passkey-topic" => vec![&mut l.passkey_topic],
                    _ => vec![],
                };
                let n: &'static str = n.leak();
                for t in targets {
                    if !t.contains(&n) {
                        t.push(n);
                    }
                }
            }
        }
        l
    })
}

#[cfg(test)]
mod tests {
    use super::super::{ChallengeKind, InputSignal, PageSignals, detect};
    use super::*;

    fn input(t: &str, label: &str) -> InputSignal {
        InputSignal { input_type: t.into(), label: label.into(), ..Default::default() }
    }

    fn page(title: &str, text: &str, buttons: &[&str], inputs: Vec<InputSignal>) -> PageSignals {
        PageSignals {
            url: "https://www.example.test/page".into(),
            title: title.into(),
            buttons: buttons.iter().map(|b| b.to_string()).collect(),
            inputs,
            forms: 1,
            text: text.into(),
            ..Default::default()
        }
    }

    /// The table test of one language: every phrase makes the page its
    /// English twin would be (a sign-in form, a code step, a CAPTCHA, a
    /// block page, a consent screen, a passkey prompt), and pages that
    /// only mention the words stay ordinary.
    fn table_test(code: &str) {
        let (_, text) = TABLES.iter().copied().find(|(c, _)| *c == code).expect("a table");
        let (rows, errors) = parse(code, text);
        assert!(errors.is_empty(), "{errors:#?}");
        let of = |k: &str| rows.iter().filter(|(kind, _)| *kind == k).map(|(_, p)| *p).collect::<Vec<_>>();
        let mut failures = Vec::new();
        let mut check = |what: String, s: PageSignals, want: Option<ChallengeKind>| {
            let got = detect(&s);
            if got.as_ref().map(|c| c.kind) != want {
                failures.push(format!("{code}: {what}: expected {want:?}, got {got:?}"));
            }
        };
        for k in [
            "sign-in",
            "username",
            "code",
            "mfa",
            "robot",
            "characters",
            "blocked",
            "consent",
            "allow",
            "deny",
            "passkey",
        ] {
            assert!(!of(k).is_empty(), "{code}: no {k:?} phrase");
        }
        let (allow, deny, code_word) = (of("allow")[0], of("deny")[0], of("code")[0]);
        for p in of("sign-in") {
            // A password form signs in with its button…
            check(
                format!("password form with the button {p:?}"),
                page("", "", &[p], vec![input("text", "x"), input("password", "")]),
                Some(ChallengeKind::Login),
            );
            // …and an identifier step is titled and buttoned so.
            check(
                format!("identifier step titled {p:?}"),
                page(p, "", &[p], vec![input("email", "")]),
                Some(ChallengeKind::Login),
            );
            // A link or a heading alone does not make a sign-in page.
            let mut home = page("", "", &[], vec![input("search", "")]);
            home.links = vec![p.to_string()];
            home.headings = vec![p.to_string()];
            check(format!("home page with a link {p:?}"), home, None);
        }
        for u in of("username") {
            check(
                format!("password form with a field {u:?}"),
                page("", "", &[], vec![input("text", u), input("password", "")]),
                Some(ChallengeKind::Login),
            );
            check(format!("a lone field {u:?}"), page("", "", &[allow], vec![input("text", u)]), None);
        }
        for m in of("mfa") {
            check(
                format!("code field under {m:?}"),
                page(m, "", &["OK"], vec![input("text", code_word)]),
                Some(ChallengeKind::Mfa),
            );
            // The phrase without a field for the code is a help page.
            check(format!("{m:?} without a field"), page(m, "", &["OK"], vec![]), None);
        }
        for r in of("robot") {
            check(
                format!("checkbox {r:?}"),
                page("", "", &[], vec![input("checkbox", r)]),
                Some(ChallengeKind::Captcha),
            );
            let mut article = page("", &format!("{r} {}", "lorem ipsum ".repeat(150)), &[], vec![]);
            article.links = (0..20).map(|i| format!("l{i}")).collect();
            article.forms = 0;
            check(format!("an article quoting {r:?}"), article, None);
        }
        for ch in of("characters") {
            check(
                format!("image CAPTCHA {ch:?}"),
                page(ch, "", &["OK"], vec![input("text", "")]),
                Some(ChallengeKind::Captcha),
            );
        }
        for b in of("blocked") {
            check(format!("block page {b:?}"), page(b, "", &[], vec![]), Some(ChallengeKind::Blocked));
            let mut article = page("Blog", &format!("{} {b}", "lorem ipsum ".repeat(150)), &[], vec![]);
            article.links = (0..20).map(|i| format!("l{i}")).collect();
            check(format!("an article quoting {b:?}"), article, None);
        }
        for c in of("consent") {
            for a in of("allow") {
                check(
                    format!("consent {c:?} with {a:?}"),
                    page("", &format!("Example App {c}"), &[a, deny], vec![]),
                    Some(ChallengeKind::OauthConsent),
                );
            }
        }
        for d in of("deny") {
            check(format!("cookie banner {allow:?}/{d:?}"), page("", "Cookies", &[allow, d], vec![]), None);
        }
        for p in of("passkey") {
            check(format!("passkey prompt {p:?}"), page("", "", &[p], vec![]), Some(ChallengeKind::Passkey));
        }
        assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    }

    crate::table_tests! {
        TABLES;
        table_ar => "ar", table_bg => "bg", table_bn => "bn", table_ca => "ca", table_cs => "cs",
        table_da => "da", table_de => "de", table_el => "el", table_es => "es", table_et => "et",
        table_fa => "fa", table_fi => "fi", table_fr => "fr", table_ga => "ga", table_he => "he",
        table_hi => "hi", table_hr => "hr", table_hu => "hu", table_id => "id", table_it => "it",
        table_ja => "ja", table_ko => "ko", table_lt => "lt", table_lv => "lv", table_ms => "ms",
        table_mt => "mt", table_nb => "nb", table_nl => "nl", table_pl => "pl", table_pt => "pt",
        table_ro => "ro", table_ru => "ru", table_sk => "sk", table_sl => "sl", table_sr => "sr",
        table_sv => "sv", table_th => "th", table_tr => "tr", table_uk => "uk", table_ur => "ur",
        table_vi => "vi", table_zh_hans => "zh-Hans", table_zh_hant => "zh-Hant",
    }
}
