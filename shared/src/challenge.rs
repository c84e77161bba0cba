//! Challenge detection (docs/design.md, "Observation"): CAPTCHAs, MFA/OTP
//! entry, passkeys, password logins, OAuth consent screens and block pages.
//!
//! The content script only gathers [`PageSignals`] (cheap DOM facts); the
//! decision is the pure function [`detect`], so it is the same everywhere
//! and is tested natively over fixture data
//! (`fixtures/challenges/cases.json`): each case says why its decision is
//! right, the cases with a `page` stand for the fixture pages the e2e test
//! loads (every page under `fixtures/sites/challenges/` has one), and every
//! entry of the vendor tables below decides at least one case.
//!
//! # Rules, in order of precedence
//!
//! The first kind that matches wins: `captcha` > `blocked` > `passkey` >
//! `mfa` > `oauth_consent` > `login`. A CAPTCHA on a block page is still
//! something a person can pass; a block page may carry a login link; a
//! passkey prompt often offers "use a code instead"; an MFA step follows a
//! login.
//!
//! - **captcha**: a known widget or challenge-page marker on a visible
//!   element (`.g-recaptcha`, `.h-captcha`, `.cf-turnstile`, Cloudflare's
//!   challenge-page ids such as `#challenge-stage`, Arkose/FunCaptcha
//!   containers, HUMAN's `#px-captcha`, Akamai's `#sec-if-cpt-container`,
//!   GeeTest's `geetest_` classes, Friendly Captcha's `.frc-captcha`,
//!   `<altcha-widget>`, any other element with `data-sitekey`; widgets
//!   bound invisibly — to a button, `data-size=invisible`, Turnstile's
//!   `interaction-only`/`execute` appearances — are skipped by the content
//!   script); a visible widget frame, by its `src` (reCAPTCHA
//!   `/recaptcha/…/anchor|bframe` — v2, Enterprise — hCaptcha, Turnstile
//!   and Cloudflare's challenge platform, Arkose/FunCaptcha, DataDome's
//!   `captcha-delivery.com`, Akamai's `/_sec/cp_challenge/`) or by the
//!   title its vendor gives it ("reCAPTCHA", "… hCaptcha security
//!   challenge", "Widget containing a Cloudflare security challenge",
//!   "DataDome CAPTCHA", Arkose's "Verification challenge", any title
//!   with the word "captcha"); a script
//!   only challenge pages load (Cloudflare's `/cdn-cgi/challenge-platform/
//!   …/orchestrate/`, DataDome's `captcha-delivery.com`, AWS WAF's
//!   `captcha.js`, HUMAN's `captcha.js`) on a short page (see `blocked`) —
//!   Cloudflare's "Verify you are human" before its widget appears; a text
//!   field named or labelled like a CAPTCHA (`captcha` anywhere in its
//!   name or id, "type the characters you see", …); a generic phrase
//!   ("verify you are human", "I'm not a robot", "Press & Hold", in
//!   English, German, French, Spanish and a few more) in a checkbox label;
//!   in the title/a heading/a button with a CAPTCHA script, or on a short
//!   page with a checkbox or button; or in the text of a short page with a
//!   checkbox, an iframe or a CAPTCHA script (Cloudflare's "Checking your
//!   browser" interstitial); or an image CAPTCHA's "type the characters
//!   you see" on a short page with a text field. Text that merely mentions
//!   CAPTCHAs (a blog post) is not enough. Decided: reCAPTCHA v3 is
//!   invisible scoring, not a challenge — its `api.js?render=` script, its
//!   `grecaptcha-badge` (an anchor frame with `size=invisible`, titled
//!   "reCAPTCHA") and a v3 binding on a submit button are ignored; the
//!   same holds for bot-detection sensors ordinary pages carry
//!   (Cloudflare's `scripts/jsd`, DataDome's `tags.js`, HUMAN's `init.js`,
//!   AWS WAF's `challenge.js`). When such a site does challenge, a widget,
//!   its frame or the challenge page shows, and that is detected. Also
//!   decided: Friendly Captcha and ALTCHA (proof of work, sometimes
//!   started on their own) count as CAPTCHAs — the form waits on them and
//!   they may ask the person to click.
//! - **blocked**: a block/rate-limit phrase ("access denied", "403
//!   forbidden", "too many requests", "unusual traffic", "you have been
//!   blocked", Cloudflare "attention required" and its 10xx errors,
//!   CloudFront's "the request could not be satisfied", Google's "couldn't
//!   sign you in" / "this browser or app may not be secure", German,
//!   French, Spanish and Italian forms, …) in the title or one of the first
//!   two headings, unless the page reads as an article (1,500 characters
//!   of text or more and over 12 links/buttons: a help page titled
//!   "Unusual traffic from your computer network"); or in the text of a
//!   *small* page (under 1,200 characters of text, at most 12
//!   links/buttons and no more than one form). A review that says "access
//!   denied" on a product page does not qualify.
//! - **passkey**: a prompt phrase ("sign in with a passkey", "use your
//!   security key", German, French and Spanish forms, …) anywhere in the
//!   title, headings, buttons, links or text, or a device phrase ("use your device", "use Windows Hello", …)
//!   outside body text, with a button or link to act on; or the page's
//!   title/first heading naming a passkey/security key on a page with at
//!   most one text field. A settings page that *manages* passkeys ("Add a
//!   passkey") is not a prompt.
//! - **mfa**: an input with `autocomplete=one-time-code`; an input whose
//!   name/id/label/placeholder reads as a one-time code (`otp`, `2fa`,
//!   "verification code", see [`crate::sensitive`]); four or more
//!   single-character numeric inputs (split OTP boxes); or a code-like
//!   input (named `code`/`pin`, or numeric with a max length of 4–8) on a
//!   page whose title/headings/text speak of two-step verification or a
//!   verification code (English, German, French, Spanish, Portuguese,
//!   Italian, Dutch, Japanese, Korean, Chinese). Search, email and card
//!   fields and fields named discount/promo/coupon/gift/postal… codes never
//!   count as code fields, and "enter the code" alone is no context; or
//!   a push approval ("check your phone", "approve the sign-in request",
//!   "enter the number shown", Duo/Okta wording, German, French, Spanish)
//!   in the title, a heading or a button, or in the text of a short page.
//! - **oauth_consent**: a consent phrase ("wants to access your", "is
//!   requesting access", "authorize", …) or an OAuth-looking URL path
//!   (`/oauth`, `/authorize`, `/consent`) together with an allow-like button
//!   ("Allow", "Authorize", "Accept", "Approve", "Grant", "Continue" with
//!   a consent phrase; German, French, Spanish) *and* a deny-like one
//!   ("Cancel", "Deny", "Decline", "Don't allow", …). Cookie banners have
//!   the buttons but not the phrases.
//! - **login**: a visible password field (not `autocomplete=new-password`)
//!   with a username/email field or a sign-in button; a sign-up form (a
//!   `new-password` field, a username/email field and a "Sign up"/"Create
//!   account"/"Register" button) — decided: sign-up counts as `login`,
//!   because choosing and entering a password is the human's job
//!   (docs/design.md, "Secrets, sensitive fields and files"); an
//!   identifier-first sign-in step (title/heading "Sign in", one
//!   username/email field and a Next/Continue/Sign in button). A
//!   change-password form on a settings page (only password fields, a
//!   "Save"/"Update password" button; a password field counts as new when
//!   it has `autocomplete=new-password` or a label/name with "new",
//!   "confirm", "repeat", …) is *not* flagged:
//!   the agent can still use the rest of the page, and it can never fill
//!   password fields anyway.
//!
//! # Languages
//!
//! The phrase lists below hold English and the first languages; the words
//! of 43 more (every official EU language and the most used on the web:
//! sign in, username, new password, code, "verification code sent to your
//! phone", "I am not a robot", "type the characters in the image", access
//! denied, unusual traffic, too many requests, "wants to access your
//! account", allow/deny, "use your passkey") are one table per language in
//! `challenge/lang/<code>.tsv`, merged into the same lists once
//! (`challenge/lang.rs`), so a page in another language is decided like its English
//! twin. Phrases of scripts written without spaces (Japanese, Chinese,
//! Korean, Thai) match inside words. Each list is filtered once per page
//! to the phrases whose words the page has.
//!
//! Evidence is built only from this module's own words and phrase lists,
//! never from page text or field values, and is at most
//! [`MAX_EVIDENCE_CHARS`] long.

use serde::{Deserialize, Serialize};

use crate::sensitive::{SensitiveKind, classify_name, fold_diacritic, words};

mod lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeKind {
    Captcha,
    Mfa,
    Passkey,
    Login,
    OauthConsent,
    Blocked,
}

impl ChallengeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChallengeKind::Captcha => "captcha",
            ChallengeKind::Mfa => "mfa",
            ChallengeKind::Passkey => "passkey",
            ChallengeKind::Login => "login",
            ChallengeKind::OauthConsent => "oauth_consent",
            ChallengeKind::Blocked => "blocked",
        }
    }
}

/// A detected challenge and the evidence that decided it (short, no values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Challenge {
    pub kind: ChallengeKind,
    pub evidence: String,
}

/// Longest evidence string.
pub const MAX_EVIDENCE_CHARS: usize = 120;
/// How much visible text the content script gathers.
pub const MAX_SIGNAL_TEXT_CHARS: usize = 2_000;
/// How many headings, buttons, links, frames, scripts and inputs it gathers.
pub const MAX_SIGNAL_ITEMS: usize = 40;

/// Cheap facts about a page, gathered by the content script from visible
/// elements (main frame and same-origin iframes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PageSignals {
    /// The page URL (only host and path are used).
    pub url: String,
    pub title: String,
    /// Visible headings (`h1`–`h6`, `role=heading`), in document order.
    pub headings: Vec<String>,
    /// Names of visible buttons (`button`, `role=button`, submit inputs).
    pub buttons: Vec<String>,
    /// Names of visible links.
    pub links: Vec<String>,
    /// `src` of visible iframes (absolute URLs; empty for a frame that has
    /// only a title).
    pub iframes: Vec<String>,
    /// `title` of each frame in `iframes`, in the same order (empty when it
    /// has none). Vendors name their widget frames ("reCAPTCHA", "Widget
    /// containing a Cloudflare security challenge", "DataDome CAPTCHA"),
    /// and the name holds when a site serves the frame from its own host.
    /// Older content scripts sent no titles: missing entries count as empty.
    pub iframe_titles: Vec<String>,
    /// `src` of scripts (absolute URLs).
    pub scripts: Vec<String>,
    /// Known CAPTCHA and challenge-page markers found on visible elements,
    /// as tokens (see `WIDGETS` below): `g-recaptcha`, `h-captcha`,
    /// `cf-turnstile`, `cf-challenge` (Cloudflare's challenge-page ids),
    /// `funcaptcha`, `arkose`, `px-captcha`, `akamai-challenge`,
    /// `geetest`, `frc-captcha`, `altcha`, or `data-sitekey` for any other
    /// element carrying that attribute. Widgets bound invisibly (to a
    /// button, `data-size=invisible`, Turnstile's `interaction-only` and
    /// `execute` appearances) are not reported.
    pub widgets: Vec<String>,
    /// Visible form fields (`input` other than hidden/submit/button/image).
    pub inputs: Vec<InputSignal>,
    /// Number of `form` elements.
    pub forms: usize,
    /// The first [`MAX_SIGNAL_TEXT_CHARS`] of visible text.
    pub text: String,
}

/// One visible form field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InputSignal {
    /// `type` attribute, lower case (`text` when absent).
    #[serde(rename = "type")]
    pub input_type: String,
    pub autocomplete: String,
    pub name: String,
    pub id: String,
    /// Text of its `<label>` or its `aria-label`.
    pub label: String,
    pub placeholder: String,
    pub maxlength: Option<u32>,
    pub inputmode: String,
}

impl InputSignal {
    fn is(&self, t: &str) -> bool {
        self.input_type.eq_ignore_ascii_case(t)
    }

    fn ac_has(&self, token: &str) -> bool {
        self.autocomplete.split_ascii_whitespace().any(|t| t.eq_ignore_ascii_case(token))
    }

    /// A field a person types text into (not a checkbox, radio, file, …).
    fn is_texty(&self) -> bool {
        crate::input::is_text_type(&self.input_type)
    }

    fn describe_words(&self) -> String {
        let mut s = String::new();
        for part in [&self.name, &self.id, &self.label, &self.placeholder] {
            s.push_str(&norm(part));
        }
        s
    }

    fn numeric(&self) -> bool {
        self.inputmode.eq_ignore_ascii_case("numeric")
            || self.inputmode.eq_ignore_ascii_case("decimal")
            || self.is("number")
            || self.is("tel")
    }
}

/// Builds the phrase lists of every language now (once; otherwise on the
/// first detection): see `crate::risk::warm`.
pub fn warm() {
    let _ = lang::lists();
}

/// Decides whether the page is a challenge a person must handle.
pub fn detect(s: &PageSignals) -> Option<Challenge> {
    let ctx = Ctx::new(s);
    let found = captcha(&ctx)
        .map(|e| (ChallengeKind::Captcha, e))
        .or_else(|| blocked(&ctx).map(|e| (ChallengeKind::Blocked, e)))
        .or_else(|| passkey(&ctx).map(|e| (ChallengeKind::Passkey, e)))
        .or_else(|| mfa(&ctx).map(|e| (ChallengeKind::Mfa, e)))
        .or_else(|| oauth_consent(&ctx).map(|e| (ChallengeKind::OauthConsent, e)))
        .or_else(|| login(&ctx).map(|e| (ChallengeKind::Login, e)))?;
    let (kind, mut evidence) = found;
    crate::limits::truncate_chars(&mut evidence, MAX_EVIDENCE_CHARS);
    Some(Challenge { kind, evidence })
}

/// `" word word "`: lower case, diacritics folded, split on anything not
/// alphanumeric, so phrases match whole words with `contains(" p ")`.
fn norm(s: &str) -> String {
    let w = words(s);
    let mut out = String::with_capacity(s.len() + 2);
    out.push(' ');
    for x in w {
        out.push_str(&x);
        out.push(' ');
    }
    out
}

/// Lower case with diacritics folded, for phrases in scripts without
/// spaces between words (Japanese, Chinese, Korean).
fn fold(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).map(fold_diacritic).collect()
}

/// The signals, normalised once.
struct Ctx<'a> {
    s: &'a PageSignals,
    title: String,
    headings: Vec<String>,
    buttons: Vec<String>,
    links: Vec<String>,
    text: String,
    /// Title, headings and text folded (for phrases without spaces).
    raw: String,
    path: String,
    inputs: Vec<(&'a InputSignal, String)>,
    /// Hashes of every word on the page: a phrase with a word outside it
    /// cannot match, which skips most substring searches.
    vocab: Vocab,
    /// Whether the page has text in a script written without spaces (only
    /// then can an [`lang::UNSPACED`] phrase match).
    unspaced: bool,
    /// Per phrase list (by address), the phrases that may match this page
    /// (all their words are on it): each list, 40-odd languages long, is
    /// filtered once per page instead of once per string.
    present: std::cell::RefCell<std::collections::HashMap<(usize, usize), Vec<&'static str>>>,
}

/// A set of word hashes (FNV-1a), to rule out phrases cheaply.
#[derive(Default)]
struct Vocab(std::collections::HashSet<u64, std::hash::BuildHasherDefault<PassThrough>>);

impl Vocab {
    fn add(&mut self, normalised: &str) {
        for w in normalised.split(' ').filter(|w| !w.is_empty()) {
            self.0.insert(crate::fnv1a(w));
        }
    }

    fn may_contain(&self, phrase: &str) -> bool {
        phrase.split(' ').all(|w| self.0.contains(&crate::fnv1a(w)))
    }
}

/// The hasher for already-hashed keys.
#[derive(Default)]
struct PassThrough(u64);

impl std::hash::Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

impl<'a> Ctx<'a> {
    fn new(s: &'a PageSignals) -> Self {
        let mut raw = fold(&s.title);
        for h in &s.headings {
            raw.push('\n');
            raw.push_str(&fold(h));
        }
        raw.push('\n');
        raw.push_str(&fold(&s.text));
        let mut c = Ctx {
            s,
            title: norm(&s.title),
            headings: s.headings.iter().map(|h| norm(h)).collect(),
            buttons: s.buttons.iter().map(|b| norm(b)).collect(),
            links: s.links.iter().map(|l| norm(l)).collect(),
            text: norm(&s.text),
            raw,
            path: url_path(&s.url).to_ascii_lowercase(),
            inputs: s.inputs.iter().map(|i| (i, i.describe_words())).collect(),
            vocab: Vocab::default(),
            unspaced: false,
            present: Default::default(),
        };
        let mut vocab = Vocab::default();
        vocab.add(&c.title);
        vocab.add(&c.text);
        for h in c.headings.iter().chain(&c.buttons).chain(&c.links).chain(c.inputs.iter().map(|(_, w)| w)) {
            vocab.add(h);
        }
        c.vocab = vocab;
        let unspaced = |t: &str| !t.is_ascii() && t.chars().any(crate::sensitive::is_unspaced);
        c.unspaced =
            [&c.title, &c.text].into_iter().chain(&c.headings).chain(&c.buttons).chain(&c.links).any(|t| unspaced(t))
                || c.inputs.iter().any(|(_, w)| unspaced(w));
        c
    }

    /// The first phrase contained as whole words in the normalised `hay`
    /// (one of the page's own strings, so its words are in the vocabulary).
    fn find(&self, hay: &str, phrases: &[&'static str]) -> Option<&'static str> {
        let mut cache = self.present.borrow_mut();
        let present = cache.entry((phrases.as_ptr() as usize, phrases.len())).or_insert_with(|| {
            let may = |p: &&str| match p.strip_prefix(lang::UNSPACED) {
                Some(_) => self.unspaced,
                None => self.vocab.may_contain(p),
            };
            phrases.iter().copied().filter(may).collect()
        });
        present.iter().copied().find_map(|p| match p.strip_prefix(lang::UNSPACED) {
            Some(raw) => hay.contains(raw).then_some(raw),
            None => has_words(hay, p).then_some(p),
        })
    }

    /// The first phrase of `phrases` in the title or a heading.
    fn in_title_or_headings(&self, phrases: &[&'static str]) -> Option<&'static str> {
        self.find(&self.title, phrases).or_else(|| self.headings.iter().find_map(|h| self.find(h, phrases)))
    }

    fn in_buttons(&self, phrases: &[&'static str]) -> Option<&'static str> {
        self.buttons.iter().find_map(|b| self.find(b, phrases))
    }

    fn in_links(&self, phrases: &[&'static str]) -> Option<&'static str> {
        self.links.iter().find_map(|b| self.find(b, phrases))
    }

    fn in_text(&self, phrases: &[&'static str]) -> Option<&'static str> {
        self.find(&self.text, phrases)
    }

    fn in_raw(&self, phrases: &[&'static str]) -> Option<&'static str> {
        phrases.iter().copied().find(|p| self.raw.contains(p))
    }

    /// Any phrase anywhere: title, headings, buttons, links or text.
    fn anywhere(&self, phrases: &[&'static str]) -> Option<&'static str> {
        self.in_title_or_headings(phrases)
            .or_else(|| self.in_buttons(phrases))
            .or_else(|| self.in_links(phrases))
            .or_else(|| self.in_text(phrases))
    }

    fn has_checkbox(&self) -> bool {
        self.s.inputs.iter().any(|i| i.is("checkbox"))
    }

    fn text_inputs(&self) -> impl Iterator<Item = &(&'a InputSignal, String)> {
        self.inputs.iter().filter(|(i, _)| i.is_texty())
    }

    fn small_page(&self) -> bool {
        self.s.text.chars().count() < 1_200 && self.s.buttons.len() + self.s.links.len() <= 12 && self.s.forms <= 1
    }
}

/// Whether the normalised `hay` holds `phrase`: as whole words, or, for a
/// phrase in a script written without spaces (marked
/// [`lang::UNSPACED`]), anywhere inside its words.
fn matches(hay: &str, phrase: &str) -> bool {
    match phrase.strip_prefix(lang::UNSPACED) {
        Some(raw) => hay.contains(raw),
        None => has_words(hay, phrase),
    }
}

/// Whether the normalised `hay` (`" a b c "`) holds `phrase` as whole
/// words, without allocating.
fn has_words(hay: &str, phrase: &str) -> bool {
    let h = hay.as_bytes();
    hay.match_indices(phrase).any(|(i, m)| i > 0 && h[i - 1] == b' ' && h.get(i + m.len()) == Some(&b' '))
}

fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    rest.find('/').map_or("", |i| &rest[i..])
}

fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next().unwrap_or("");
    host.to_ascii_lowercase()
}

fn host_is(host: &str, domain: &str) -> bool {
    host == domain || host.strip_suffix(domain).is_some_and(|p| p.ends_with('.'))
}

// ---------------------------------------------------------------- captcha

/// Widget markers (as the content script reports them) and their names.
const WIDGETS: &[(&str, &str)] = &[
    ("g-recaptcha", "reCAPTCHA widget"),
    ("h-captcha", "hCaptcha widget"),
    ("cf-turnstile", "Turnstile widget"),
    ("cf-challenge", "Cloudflare challenge page"),
    ("funcaptcha", "FunCaptcha widget"),
    ("arkose", "Arkose widget"),
    ("px-captcha", "HUMAN (PerimeterX) press-and-hold"),
    ("akamai-challenge", "Akamai challenge"),
    ("geetest", "GeeTest widget"),
    ("frc-captcha", "Friendly Captcha widget"),
    ("altcha", "ALTCHA widget"),
    ("data-sitekey", "CAPTCHA widget (data-sitekey)"),
];

/// Hosts whose visible frames are CAPTCHA widgets or challenges.
const FRAME_HOSTS: &[(&str, &str)] = &[
    ("hcaptcha.com", "hCaptcha"),
    ("challenges.cloudflare.com", "Turnstile"),
    ("arkoselabs.com", "Arkose/FunCaptcha"),
    ("funcaptcha.com", "Arkose/FunCaptcha"),
    ("captcha-delivery.com", "DataDome"),
];

/// Path fragments of frame URLs served from the site's own host.
const FRAME_PATHS: &[(&str, &str)] = &[
    ("/hcaptcha", "hCaptcha"),
    ("/cdn-cgi/challenge-platform", "Turnstile"),
    ("/turnstile/", "Turnstile"),
    ("/fc/gc", "Arkose/FunCaptcha"),
    ("/_sec/cp_challenge/", "Akamai challenge"),
];

/// Words of the titles vendors give their widget frames (whole words of
/// the normalised title, where camelCase splits: "hCaptcha" reads
/// "h captcha"), in order: the first that matches names it.
const FRAME_TITLES: &[(&str, &str)] = &[
    ("re captcha", "reCAPTCHA"),
    ("recaptcha", "reCAPTCHA"),
    ("h captcha", "hCaptcha"),
    ("cloudflare security challenge", "Turnstile"),
    ("data dome captcha", "DataDome"),
    ("data dome device check", "DataDome"),
    ("verification challenge", "Arkose/FunCaptcha"),
    ("captcha", "CAPTCHA"),
];

/// Phrases of generic human checks.
const HUMAN_CHECK: &[&str] = &[
    "verify you are human",
    "verify that you are human",
    "verify you re human",
    "verify you are a human",
    "verifying you are human",
    "i m not a robot",
    "i am not a robot",
    "im not a robot",
    "i m human",
    "i am human",
    "are you a robot",
    "prove you are human",
    "prove you re human",
    "confirm you are human",
    "confirm you re human",
    "confirm you are a human",
    "confirm that you are human",
    "confirm that you re human",
    "human verification",
    "complete the security check",
    "checking your browser",
    "checking if the site connection is secure",
    "needs to review the security of your connection",
    "press and hold",
    "press hold to confirm",
    "activate and hold",
    "select all images",
    "solve this puzzle",
    "type the characters",
    "ich bin kein roboter",
    "ich bin ein mensch",
    "bestatigen sie dass sie ein mensch sind",
    "sind sie ein mensch",
    "uberprufung ihres browsers",
    "ihr browser wird uberpruft",
    "ob die verbindung zur website sicher ist",
    "je ne suis pas un robot",
    "je suis un humain",
    "verifiez que vous etes humain",
    "verifiez que vous etes un humain",
    "verifions que vous etes humain",
    "verification de votre navigateur",
    "no soy un robot",
    "soy humano",
    "verifica que eres un ser humano",
    "verifique que es un ser humano",
    "confirma que eres humano",
    "comprobando su navegador",
    "verificando su navegador",
    "nao sou um robo",
    "non sono un robot",
    "ik ben geen robot",
];

/// Phrases asking to copy the text of an image CAPTCHA.
const TEXT_CAPTCHA: &[&str] = &[
    "type the characters",
    "enter the characters",
    "characters you see",
    "type characters",
    "characters shown",
    "characters in the image",
    "code shown in the image",
    "text in the image",
    "geben sie die zeichen",
    "saisissez les caracteres",
    "tapez les caracteres",
    "escribe los caracteres",
    "introduce los caracteres",
    "ingresa los caracteres",
];

/// Hosts of CAPTCHA embed scripts (loading one is no challenge by itself:
/// sites load them before showing a widget, or for invisible scoring).
const CAPTCHA_SCRIPT_HOSTS: &[&str] = &[
    "hcaptcha.com",
    "challenges.cloudflare.com",
    "arkoselabs.com",
    "funcaptcha.com",
    "recaptcha.net",
    "geetest.com",
    "frcapi.com",
    "friendlycaptcha.com",
    "captcha.awswaf.com",
];

/// Scripts only challenge pages load: a host (empty: any) and path
/// fragments that must all be in the URL's path. Bot-detection sensors
/// that ordinary pages carry (Cloudflare's `/cdn-cgi/challenge-platform/
/// scripts/jsd/`, DataDome's `tags.js`, HUMAN's `init.js`, Akamai's
/// sensor, AWS WAF's `challenge.js`) are not here.
const CHALLENGE_PAGE_SCRIPTS: &[(&str, &[&str], &str)] = &[
    ("", &["/cdn-cgi/challenge-platform/", "/orchestrate/"], "Cloudflare challenge"),
    ("captcha-delivery.com", &[], "DataDome"),
    ("awswaf.com", &["/captcha.js"], "AWS WAF CAPTCHA"),
    ("px-cdn.net", &["captcha"], "HUMAN (PerimeterX)"),
    ("", &["/captcha/captcha.js"], "HUMAN (PerimeterX)"),
];

fn captcha(c: &Ctx<'_>) -> Option<String> {
    let l = lang::lists();
    for w in &c.s.widgets {
        let w = w.to_ascii_lowercase();
        if let Some((_, what)) = WIDGETS.iter().find(|(token, _)| w == *token) {
            return Some(format!("{what} on the page"));
        }
    }
    for (i, src) in c.s.iframes.iter().enumerate() {
        let title = c.s.iframe_titles.get(i).map(String::as_str).unwrap_or("");
        if let Some(what) = captcha_frame(src, title) {
            return Some(format!("{what} iframe"));
        }
    }
    if let Some(what) = challenge_page_script(c)
        && c.small_page()
    {
        return Some(format!("{what} script on a short page"));
    }
    if c.text_inputs().any(|(i, w)| {
        !i.is("password")
            && (format!("{} {}", i.name, i.id).to_ascii_lowercase().contains("captcha")
                || has_words(w, "captcha")
                || l.characters.iter().any(|p| matches(w, p)))
    }) {
        return Some("a field asking for the CAPTCHA text".into());
    }
    // A generic human check: the phrase labels a checkbox…
    if let Some(p) = c.s.inputs.iter().filter(|i| i.is("checkbox")).find_map(|i| c.find(&norm(&i.label), &l.robot)) {
        return Some(format!("checkbox \"{p}\""));
    }
    // …or heads the page, with something to tick, press or load.
    let prominent = c.in_title_or_headings(&l.robot).or_else(|| c.in_buttons(&l.robot));
    if let Some(p) = prominent {
        let script = captcha_script(c);
        // A long page (a blog post about CAPTCHAs) needs a CAPTCHA script.
        if script || c.small_page() && (c.has_checkbox() || !c.s.buttons.is_empty()) {
            return Some(format!("\"{p}\" with a control to complete it"));
        }
    }
    if c.small_page() {
        // An interstitial ("Checking your browser…") with a widget frame or script.
        if (c.has_checkbox() || !c.s.iframes.is_empty() || captcha_script(c))
            && let Some(p) = c.in_text(&l.robot)
        {
            return Some(format!("\"{p}\" on a short page with a widget"));
        }
        // An image CAPTCHA: "type the characters you see" and a field for them.
        let field = c.text_inputs().any(|(i, _)| !i.is("password") && !i.is("search") && !i.is("email"));
        if field && let Some(p) = c.in_title_or_headings(&l.characters).or_else(|| c.in_text(&l.characters)) {
            return Some(format!("\"{p}\" with a field on a short page"));
        }
    }
    None
}

/// Whether the page loads a CAPTCHA embed script or a challenge page's.
fn captcha_script(c: &Ctx<'_>) -> bool {
    c.s.scripts.iter().any(|s| {
        let h = url_host(s);
        CAPTCHA_SCRIPT_HOSTS.iter().any(|d| host_is(&h, d)) || s.contains("/recaptcha/")
    }) || challenge_page_script(c).is_some()
}

/// The vendor of a script that only challenge pages load, if any.
fn challenge_page_script(c: &Ctx<'_>) -> Option<&'static str> {
    c.s.scripts.iter().find_map(|s| {
        let host = url_host(s);
        let path = url_path(s).to_ascii_lowercase();
        CHALLENGE_PAGE_SCRIPTS
            .iter()
            .find(|(h, parts, _)| (h.is_empty() || host_is(&host, h)) && parts.iter().all(|p| path.contains(p)))
            .map(|(_, _, what)| *what)
    })
}

/// Which widget or challenge a visible frame belongs to, by its `src` or
/// its `title`, if any.
fn captcha_frame(src: &str, title: &str) -> Option<&'static str> {
    let host = url_host(src);
    let path = url_path(src).to_ascii_lowercase();
    let lower = src.to_ascii_lowercase();
    if path.contains("/recaptcha/") {
        // The invisible badge (v3 scoring, invisible v2 before it
        // challenges) shows no challenge, whatever its frame is titled.
        if lower.contains("size=invisible") {
            return None;
        }
        if path.contains("anchor") || path.contains("bframe") {
            return Some("reCAPTCHA");
        }
    }
    if let Some((_, what)) = FRAME_HOSTS.iter().find(|(d, _)| host_is(&host, d)) {
        return Some(what);
    }
    if let Some((_, what)) = FRAME_PATHS.iter().find(|(p, _)| path.contains(p)) {
        return Some(what);
    }
    let title = norm(title);
    FRAME_TITLES.iter().find(|(p, _)| has_words(&title, p)).map(|(_, what)| *what)
}

// ---------------------------------------------------------------- blocked

const BLOCKED: &[&str] = &[
    "access denied",
    "access to this page has been denied",
    "access forbidden",
    "403 forbidden",
    "error 403",
    "http 403",
    "403 error",
    "too many requests",
    "429 too many requests",
    "error 429",
    "http 429",
    "rate limit exceeded",
    "rate limited",
    "you have been rate limited",
    "you are being rate limited",
    "unusual traffic",
    "you have been blocked",
    "you ve been blocked",
    "sorry you have been blocked",
    "request blocked",
    "the request could not be satisfied",
    "attention required",
    "error 1006",
    "error 1009",
    "error 1010",
    "error 1012",
    "error 1020",
    "error 1015",
    "this request was blocked",
    "automated queries",
    "pardon our interruption",
    "access is temporarily restricted",
    "couldn t sign you in",
    "this browser or app may not be secure",
    "acceso denegado",
    "acces refuse",
    "acces interdit",
    "zugriff verweigert",
    "accesso negato",
    "demasiadas solicitudes",
    "trop de requetes",
    "zu viele anfragen",
    "ungewohnlichen datenverkehr",
    "trafic exceptionnel",
    "trafico inusual",
    "traffico insolito",
    "sie wurden blockiert",
    "vous avez ete bloque",
    "has sido bloqueado",
];

/// Phrases strong enough in the text of a small page.
const BLOCKED_TEXT: &[&str] = &[
    "access denied",
    "access to this page has been denied",
    "403 forbidden",
    "too many requests",
    "429 too many requests",
    "unusual traffic",
    "you have been blocked",
    "you ve been blocked",
    "rate limit exceeded",
    "you have been rate limited",
    "you are being rate limited",
    "this request was blocked",
    "the request could not be satisfied",
    "automated queries",
    "you don t have permission to access",
    "access is temporarily restricted",
    "this browser or app may not be secure",
    "ungewohnlichen datenverkehr",
    "trafic exceptionnel",
    "trafico inusual",
    "traffico insolito",
    "zugriff verweigert",
    "acces refuse",
    "acceso denegado",
];

fn blocked(c: &Ctx<'_>) -> Option<String> {
    // The title and the first two headings: a review further down titled
    // "Access denied" does not make a block page, nor does an article
    // *about* one (a help page titled "Unusual traffic from your computer
    // network": long text and many links).
    let article = c.s.text.chars().count() >= 1_500 && c.s.buttons.len() + c.s.links.len() > 12;
    if !article {
        let l = lang::lists();
        let top =
            c.find(&c.title, &l.blocked).or_else(|| c.headings.iter().take(2).find_map(|h| c.find(h, &l.blocked)));
        if let Some(p) = top {
            return Some(format!("block page: \"{p}\" in the title or a top heading"));
        }
    }
    if c.small_page()
        && let Some(p) = c.in_text(&lang::lists().blocked_text)
    {
        return Some(format!("block page: \"{p}\" on a short page"));
    }
    None
}

// ---------------------------------------------------------------- passkey

const PASSKEY_PROMPT: &[&str] = &[
    "sign in with a passkey",
    "sign in with your passkey",
    "sign in with passkey",
    "log in with a passkey",
    "use your passkey",
    "use a passkey",
    "use passkey",
    "continue with passkey",
    "continue with a passkey",
    "verify with your passkey",
    "confirm with your passkey",
    "use your security key",
    "use a security key",
    "insert your security key",
    "touch your security key",
    "tap your security key",
    "sign in with your security key",
    "verify with your security key",
    "mit passkey anmelden",
    "passkey verwenden",
    "verwenden sie ihren passkey",
    "sicherheitsschlussel verwenden",
    "verwenden sie ihren sicherheitsschlussel",
    "se connecter avec une cle d acces",
    "utiliser une cle d acces",
    "utilisez votre cle d acces",
    "utilisez votre cle de securite",
    "iniciar sesion con una llave de acceso",
    "usa tu llave de acceso",
    "usar una llave de acceso",
    "usa tu llave de seguridad",
];

/// Prompt phrases too common in prose to count in body text: only in the
/// title, headings, buttons and links.
const DEVICE_PROMPT: &[&str] = &[
    "use your device",
    "use your phone or tablet",
    "use another device",
    "use your fingerprint face or screen lock",
    "use your screen lock",
    "use windows hello",
    "use touch id",
    "use face id",
];

const PASSKEY_TOPIC: &[&str] = &[
    "passkey",
    "passkeys",
    "security key",
    "webauthn",
    "use your device",
    "sicherheitsschlussel",
    "cle d acces",
    "cle de securite",
    "llave de acceso",
    "llave de seguridad",
];

fn passkey(c: &Ctx<'_>) -> Option<String> {
    let has_control = !c.s.buttons.is_empty() || !c.s.links.is_empty();
    if has_control {
        let l = lang::lists();
        let p = c.anywhere(&l.passkey).or_else(|| {
            c.in_title_or_headings(DEVICE_PROMPT)
                .or_else(|| c.in_buttons(DEVICE_PROMPT))
                .or_else(|| c.in_links(DEVICE_PROMPT))
        });
        if let Some(p) = p {
            return Some(format!("passkey prompt: \"{p}\""));
        }
    }
    let first = c.headings.first().map(String::as_str).unwrap_or("");
    let l = lang::lists();
    let topic = c.find(&c.title, &l.passkey_topic).or_else(|| c.find(first, &l.passkey_topic));
    if let Some(p) = topic
        && has_control
        && c.text_inputs().count() <= 1
    {
        return Some(format!("passkey prompt: \"{p}\" heads a page without a form"));
    }
    None
}

// ---------------------------------------------------------------- mfa

const MFA_CONTEXT: &[&str] = &[
    "two step verification",
    "2 step verification",
    "two step authentication",
    "2 step authentication",
    "two factor",
    "2 factor",
    "2fa",
    "multi factor",
    "mfa",
    "verification code",
    "authentication code",
    "one time code",
    "one time password",
    "one time passcode",
    "authenticator app",
    "enter the 6 digit code",
    "code we sent",
    "code was sent",
    "sent a code",
    "sent you a code",
    "verify it s you",
    "verify your identity",
    "bestatigungscode",
    "verifizierungscode",
    "authentifizierungscode",
    "zwei faktor",
    "bestatigung in zwei schritten",
    "code de verification",
    "code de validation",
    "validation en deux etapes",
    "verification en deux etapes",
    "authentification a deux facteurs",
    "codigo de verificacion",
    "verificacion en dos pasos",
    "autenticacion de dos factores",
    "codigo de verificacao",
    "verificacao em duas etapas",
    "autenticacao de dois fatores",
    "codice di verifica",
    "verifica in due passaggi",
    "autenticazione a due fattori",
    "verificatiecode",
    "tweestapsverificatie",
    "einmalcode",
    "einmalpasswort",
    "einen code gesendet",
    "wir haben ihnen einen code",
    "code a usage unique",
    "nous vous avons envoye un code",
    "envoye un code",
    "codigo de un solo uso",
    "te enviamos un codigo",
    "hemos enviado un codigo",
];

/// Push approval: the person approves the sign-in on another device; no
/// field to fill. In the title, a heading or a button, or in the text of
/// a short page.
const PUSH_APPROVAL: &[&str] = &[
    "check your phone",
    "approve sign in request",
    "approve the sign in request",
    "approve the request",
    "approve the notification",
    "tap yes on the notification",
    "tap yes on your phone",
    "we sent a notification",
    "sent a notification to",
    "push notification sent",
    "check for a duo push",
    "enter the number shown",
    "respond to the notification",
    "waiting for approval",
    "prufen sie ihr smartphone",
    "prufen sie ihr telefon",
    "uberprufen sie ihr smartphone",
    "uberprufen sie ihr telefon",
    "anmeldeanforderung genehmigen",
    "anmeldeanfrage genehmigen",
    "tippen sie auf ja",
    "verifiez votre telephone",
    "consultez votre telephone",
    "approuver la demande de connexion",
    "approuvez la demande de connexion",
    "appuyez sur oui",
    "revisa tu telefono",
    "consulta tu telefono",
    "comprueba tu telefono",
    "aprobar solicitud de inicio de sesion",
    "aprobar la solicitud de inicio de sesion",
    "aprueba la solicitud",
    "toca si en la notificacion",
];

/// Context phrases in scripts without spaces between words.
const MFA_CONTEXT_RAW: &[&str] =
    &["確認コード", "認証コード", "2段階認証", "二段階認証", "两步验证", "兩步驗證", "인증 코드", "2단계 인증"];

/// Codes that are not one-time codes.
const OTHER_CODES: &[&str] = &[
    "discount",
    "promo",
    "promotion",
    "coupon",
    "voucher",
    "gift",
    "referral",
    "invite",
    "invitation",
    "postal",
    "zip",
    "post",
    "country",
    "area",
    "tracking",
    "source",
    "product",
    "sku",
    "color",
    "colour",
    "language",
    "currency",
    "redeem",
    "reward",
];

/// Words in a field's name/label that make it code-like.
const CODE_WORDS: &[&str] = &["code", "pin", "otp", "passcode", "digits", "codigo", "codice"];

fn mfa(c: &Ctx<'_>) -> Option<String> {
    for (i, _) in &c.inputs {
        if i.ac_has("one-time-code") {
            return Some("a field with autocomplete=one-time-code".into());
        }
    }
    for (i, _) in c.text_inputs() {
        let named_otp = [&i.name, &i.id, &i.label, &i.placeholder]
            .into_iter()
            .any(|s| classify_name(s) == Some(SensitiveKind::OneTimeCode));
        // A password-type field named "PIN" or "passcode" is a login, not
        // a one-time code, unless it is short.
        if named_otp && (!i.is("password") || i.maxlength.is_some_and(|m| m <= 10)) {
            return Some("a field named like a one-time code".into());
        }
    }
    let single_digit_boxes =
        c.text_inputs().filter(|(i, _)| i.maxlength == Some(1) && (i.numeric() || i.is("text"))).count();
    if single_digit_boxes >= 4 {
        return Some(format!("{single_digit_boxes} one-character code boxes"));
    }
    let code_field = c.text_inputs().any(|(i, w)| {
        if i.is("search") || i.is("email") || i.is("url") || i.is("password") {
            return false;
        }
        // Card fields (CVC, "security code") are not one-time codes.
        if i.autocomplete.to_ascii_lowercase().contains("cc-")
            || [&i.name, &i.id, &i.label, &i.placeholder]
                .into_iter()
                .any(|s| matches!(classify_name(s), Some(SensitiveKind::Card | SensitiveKind::Bank)))
        {
            return false;
        }
        if OTHER_CODES.iter().any(|o| has_words(w, o)) {
            return false;
        }
        let named = lang::lists().code.iter().any(|cw| matches(w, cw));
        let short_numeric = i.numeric() && i.maxlength.is_some_and(|m| (4..=8).contains(&m));
        named || short_numeric
    });
    if code_field {
        let context = c
            .in_title_or_headings(&lang::lists().mfa)
            .or_else(|| c.in_text(&lang::lists().mfa))
            .or_else(|| c.in_raw(MFA_CONTEXT_RAW));
        if let Some(p) = context {
            return Some(format!("a code field and \"{p}\""));
        }
    }
    let push = c.in_title_or_headings(PUSH_APPROVAL).or_else(|| c.in_buttons(PUSH_APPROVAL));
    let push = push.or_else(|| if c.small_page() { c.in_text(PUSH_APPROVAL) } else { None });
    if let Some(p) = push {
        return Some(format!("push approval: \"{p}\""));
    }
    None
}

// ---------------------------------------------------------------- oauth consent

const CONSENT: &[&str] = &[
    "wants to access your",
    "would like to access your",
    "wants access to your",
    "wants to access",
    "would like to access",
    "is requesting access",
    "is requesting permission",
    "requests access to your",
    "wants permission to",
    "authorize access",
    "grant access",
    "allow access to your",
    "authorize application",
    "authorize app",
    "permissions requested",
    "wants to use your",
    "mochte auf ihr",
    "mochte zugriff auf",
    "souhaite acceder a votre",
    "demande l acces a votre",
    "quiere acceder a tu",
    "solicita acceso a tu",
    "solicita permiso para",
];

const ALLOW: &[&str] = &[
    "allow",
    "authorize",
    "authorise",
    "accept",
    "approve",
    "grant",
    "allow access",
    "continue",
    "zulassen",
    "erlauben",
    "akzeptieren",
    "autoriser",
    "accepter",
    "permitir",
    "autorizar",
    "aceptar",
];
const DENY: &[&str] = &[
    "cancel",
    "deny",
    "decline",
    "don t allow",
    "do not allow",
    "reject",
    "not now",
    "no thanks",
    "abbrechen",
    "ablehnen",
    "annuler",
    "refuser",
    "cancelar",
    "rechazar",
    "denegar",
];

fn oauth_consent(c: &Ctx<'_>) -> Option<String> {
    let l = lang::lists();
    let allow = c.buttons.iter().chain(&c.links).find_map(|b| c.find(b, &l.allow));
    let deny = c.buttons.iter().chain(&c.links).find_map(|b| c.find(b, &l.deny));
    let (Some(allow), Some(_)) = (allow, deny) else { return None };
    let phrase = c.in_title_or_headings(&l.consent).or_else(|| c.in_text(&l.consent));
    if let Some(p) = phrase {
        return Some(format!("consent screen: \"{p}\" with \"{allow}\" and a way to refuse"));
    }
    let oauth_path = ["/oauth", "/authorize", "/consent", "/o/oauth2"].iter().any(|p| c.path.contains(p));
    if oauth_path && allow != "continue" {
        return Some(format!("consent screen: an OAuth URL path with \"{allow}\" and a way to refuse"));
    }
    None
}

// ---------------------------------------------------------------- login

const SIGN_IN: &[&str] = &[
    "sign in",
    "signin",
    "log in",
    "login",
    "log on",
    "logon",
    "continue",
    "next",
    "submit",
    "anmelden",
    "einloggen",
    "se connecter",
    "connexion",
    "iniciar sesion",
    "entrar",
    "accedi",
    "inloggen",
    "aanmelden",
];
const SIGN_IN_RAW: &[&str] = &["ログイン", "登录", "登入", "로그인"];
const SIGN_IN_TITLE: &[&str] = &[
    "sign in",
    "log in",
    "login",
    "signin",
    "sign in to your account",
    "anmelden",
    "se connecter",
    "connexion",
    "iniciar sesion",
];
const SIGN_UP: &[&str] = &[
    "sign up",
    "signup",
    "create account",
    "create an account",
    "create my account",
    "register",
    "join",
    "join now",
    "get started",
    "registrieren",
    "s inscrire",
    "registrarse",
    "crear cuenta",
];
/// Words that mark a password field as a new one (sign-up, change password).
const NEW_PASSWORD_WORDS: &[&str] = &[
    "new",
    "confirm",
    "confirmation",
    "repeat",
    "retype",
    "again",
    "verify",
    "create",
    "choose",
    "neues",
    "nouveau",
    "nueva",
];
const USERNAME_WORDS: &[&str] = &[
    "user",
    "username",
    "user name",
    "login",
    "email",
    "e mail",
    "identifier",
    "account",
    "phone",
    "userid",
    "benutzername",
    "utilisateur",
    "usuario",
    "courriel",
];

/// Text fields besides the password a sign-in form may have (username,
/// e-mail, a code, a captcha answer) before the form reads as a profile or
/// settings form instead.
const MAX_SIGN_IN_OTHER_FIELDS: usize = 3;

fn login(c: &Ctx<'_>) -> Option<String> {
    let l = lang::lists();
    let passwords: Vec<(&InputSignal, &String)> =
        c.inputs.iter().filter(|(i, _)| i.is("password")).map(|(i, w)| (*i, w)).collect();
    let is_new =
        |(i, w): &(&InputSignal, &String)| i.ac_has("new-password") || l.new_password.iter().any(|n| matches(w, n));
    let any_new = passwords.iter().any(is_new);
    let username = c.text_inputs().any(|(i, w)| {
        !i.is("password")
            && (i.ac_has("username")
                || i.ac_has("email")
                || i.ac_has("webauthn")
                || i.is("email")
                || l.username.iter().any(|u| matches(w, u)))
    });
    let sign_in_button = c
        .in_buttons(&l.sign_in)
        .or_else(|| c.s.buttons.iter().find_map(|b| SIGN_IN_RAW.iter().copied().find(|r| b.contains(r))));
    let sign_up_button = c.in_buttons(&l.sign_up);
    // A sign-in form asks for who you are and a password, little else; a
    // profile or settings form that also shows a password field (display
    // name, phone, address…) is not a sign-in step.
    let other_fields = c.text_inputs().filter(|(i, _)| !i.is("password")).count();
    if other_fields > MAX_SIGN_IN_OTHER_FIELDS && sign_in_button.is_none() {
        return None;
    }
    // Several fields, no sign-in button, no sign-in title: a contact or
    // order form that happens to ask for a PIN.
    if other_fields >= 2 && sign_in_button.is_none() && c.in_title_or_headings(&l.sign_in_title).is_none() {
        return None;
    }
    if !passwords.is_empty() && !any_new && (username || sign_in_button.is_some()) {
        let with = if username { "a username field" } else { "a sign-in button" };
        return Some(format!("password sign-in form with {with}"));
    }
    if !passwords.is_empty() && username && sign_up_button.is_some() {
        return Some("sign-up form asking for a new password".into());
    }
    if passwords.is_empty()
        && username
        && c.text_inputs().count() == 1
        && c.in_title_or_headings(&l.sign_in_title).is_some()
        && sign_in_button.is_some()
    {
        return Some("identifier-first sign-in step".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Case {
        name: String,
        /// Expected kind, or null for benign pages.
        expect: Option<ChallengeKind>,
        /// Why that is the right decision.
        why: String,
        /// The fixture page these signals stand for
        /// (`/challenges/…` under `fixtures/sites/`), which the e2e test
        /// loads and expects the same decision of.
        #[serde(default)]
        page: Option<String>,
        signals: PageSignals,
    }

    fn cases() -> Vec<Case> {
        serde_json::from_str(include_str!("../../fixtures/challenges/cases.json")).expect("cases.json parses")
    }

    #[test]
    fn every_case_gets_its_expected_kind() {
        let cases = cases();
        assert!(cases.len() >= 150, "too few cases: {}", cases.len());
        let mut failures = Vec::new();
        for case in &cases {
            let got = detect(&case.signals);
            if got.as_ref().map(|c| c.kind) != case.expect {
                failures.push(format!("{}: expected {:?}, got {:?}", case.name, case.expect, got));
            }
            if let Some(c) = got {
                assert!(c.evidence.chars().count() <= MAX_EVIDENCE_CHARS, "{}: {}", case.name, c.evidence);
                assert!(!c.evidence.is_empty());
            }
        }
        assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    }

    #[test]
    fn every_case_says_why_and_names_an_existing_page() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sites");
        let mut names = std::collections::HashSet::new();
        for case in cases() {
            assert!(names.insert(case.name.clone()), "two cases named {:?}", case.name);
            assert!(case.why.trim().len() >= 10, "{}: say why", case.name);
            if let Some(page) = &case.page {
                let rel = page.strip_prefix('/').unwrap_or(page);
                assert!(root.join(rel).is_file(), "{}: no fixture page {page}", case.name);
            }
        }
    }

    /// Every page under `fixtures/sites/challenges/` (but documents that
    /// only live in a frame, `*.frame.html`) stands for a case, so the e2e
    /// test, which reads the pages from the cases, loads them all.
    #[test]
    fn every_challenge_fixture_page_has_a_case() {
        fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).expect("fixture dir").flatten() {
                let path = e.path();
                let name = e.file_name().to_string_lossy().to_string();
                if path.is_dir() {
                    walk(&path, root, out);
                } else if name.ends_with(".html") && !name.ends_with(".frame.html") {
                    let rel = path.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/");
                    out.push(format!("/{rel}"));
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sites");
        let mut pages = Vec::new();
        walk(&root.join("challenges"), &root, &mut pages);
        let cases = cases();
        let named: std::collections::HashSet<&str> = cases.iter().filter_map(|c| c.page.as_deref()).collect();
        let mut missing: Vec<&String> = pages.iter().filter(|p| !named.contains(p.as_str())).collect();
        missing.sort();
        assert!(missing.is_empty(), "fixture pages without a case in cases.json: {missing:?}");
        assert_eq!(named.len(), cases.iter().filter(|c| c.page.is_some()).count(), "a page named by two cases");
    }

    /// Every entry of the vendor tables is exercised by a CAPTCHA case: no
    /// marker, frame host, path, title or challenge-page script goes
    /// untested.
    #[test]
    fn every_vendor_marker_is_exercised_by_a_case() {
        let cases = cases();
        let captcha: Vec<&PageSignals> =
            cases.iter().filter(|c| c.expect == Some(ChallengeKind::Captcha)).map(|c| &c.signals).collect();
        let any = |f: &dyn Fn(&PageSignals) -> bool| captcha.iter().any(|s| f(s));
        for (token, _) in WIDGETS {
            assert!(any(&|s| s.widgets.iter().any(|w| w == token)), "widget {token}");
        }
        for (domain, _) in FRAME_HOSTS {
            assert!(any(&|s| s.iframes.iter().any(|f| host_is(&url_host(f), domain))), "frame host {domain}");
        }
        for (part, _) in FRAME_PATHS {
            assert!(
                any(&|s| s.iframes.iter().any(|f| url_path(f).to_ascii_lowercase().contains(part))),
                "frame path {part}"
            );
        }
        for (words, _) in FRAME_TITLES {
            assert!(any(&|s| s.iframe_titles.iter().any(|t| has_words(&norm(t), words))), "frame title {words}");
        }
        for (host, parts, _) in CHALLENGE_PAGE_SCRIPTS {
            let hit = |u: &String| {
                (host.is_empty() || host_is(&url_host(u), host))
                    && parts.iter().all(|p| url_path(u).to_ascii_lowercase().contains(p))
            };
            assert!(any(&|s| s.scripts.iter().any(hit)), "challenge-page script {host} {parts:?}");
        }
    }

    #[test]
    fn every_kind_and_benign_pages_are_covered() {
        let cases = cases();
        for kind in [
            ChallengeKind::Captcha,
            ChallengeKind::Mfa,
            ChallengeKind::Passkey,
            ChallengeKind::Login,
            ChallengeKind::OauthConsent,
            ChallengeKind::Blocked,
        ] {
            assert!(cases.iter().filter(|c| c.expect == Some(kind)).count() >= 2, "{kind:?}");
        }
        assert!(cases.iter().filter(|c| c.expect.is_none()).count() >= 30);
    }

    #[test]
    fn evidence_never_carries_field_values_or_page_text() {
        let s = PageSignals {
            title: "Verify you are human SECRET-TITLE".into(),
            text: "hunter2 SECRET-TEXT".into(),
            buttons: vec!["Verify".into()],
            inputs: vec![InputSignal {
                input_type: "checkbox".into(),
                label: "I'm not a robot SECRET-LABEL".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let c = detect(&s).expect("captcha");
        assert_eq!(c.kind, ChallengeKind::Captcha);
        assert!(!c.evidence.contains("SECRET"), "{}", c.evidence);
    }

    #[test]
    fn empty_page_is_no_challenge() {
        assert_eq!(detect(&PageSignals::default()), None);
    }

    #[test]
    fn url_parts() {
        assert_eq!(url_host("https://u:p@www.Google.com:443/recaptcha/api2/anchor?k=1"), "www.google.com");
        assert_eq!(url_path("https://a.test/recaptcha/api2/anchor?k=1"), "/recaptcha/api2/anchor");
        assert_eq!(url_path("https://a.test"), "");
        assert!(host_is("newassets.hcaptcha.com", "hcaptcha.com"));
        assert!(!host_is("nothcaptcha.com", "hcaptcha.com"));
    }
}
