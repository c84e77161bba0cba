//! Page-controlled text reaches every pure function in `shared` (in the
//! bridge and in the content script). None of them may panic on any input:
//! a panic in the bridge drops a request, one in the content script breaks
//! the page's snapshot. Deterministic pseudo-random strings built from the
//! pieces that trip byte-offset slicing (multi-byte characters next to
//! `%`, `=`, `:`, quotes, escapes, our own markers) go through each one.

use shared::action::{Action, Fingerprint, Gate, ResolvedElement};
use shared::challenge::{InputSignal, PageSignals};
use shared::gate::Live;
use shared::mask::{Literals, SummaryTarget};
use shared::policy::{Decision, RiskDecisions};
use shared::risk::{ActionKind, ElementFacts, RiskLevel};
use shared::sensitive::FieldFacts;

const PIECES: &[&str] = &[
    "é",
    "𝔘",
    "👩‍💻",
    "e\u{301}",
    "\u{0}",
    "\u{feff}",
    "\u{2028}",
    "%",
    "%2",
    "%zz",
    "%C3",
    "=",
    ":",
    "&",
    "?",
    "#",
    "/",
    "//",
    "://",
    "@",
    "\"",
    "\\",
    "\n",
    "\r\n",
    "\t",
    " ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "'",
    "Bearer ",
    "Basic ",
    "eyJhbGciOiJIUzI1NiJ9",
    ".",
    "ghp_",
    "sk-",
    "AKIA",
    "xoxb-",
    "-----BEGIN PRIVATE KEY-----",
    "-----END",
    "token",
    "password",
    "secret",
    "{secret:",
    "api key",
    "Authorization",
    "Cookie",
    "https",
    "http://u:p@h",
    "[ref=e1]",
    "e12",
    "a",
    "Z",
    "0",
    "9",
    "ß",
    "İ",
    "ﬁ",
    "\u{202e}",
    "••••",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn string(&mut self) -> String {
        let n = self.below(24);
        (0..n).map(|_| PIECES[self.below(PIECES.len())]).collect()
    }
}

#[test]
fn no_pure_function_panics_on_page_text() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..1_500 {
        let (a, b, c) = (rng.string(), rng.string(), rng.string());
        let _ = shared::redact::redact_text(&a);
        let _ = shared::redact::redact_url(&a);
        let _ = shared::redact::redact_url(&format!("https://h.example/{a}?{b}#{c}"));
        let _ = shared::redact::redact_header(&a, &b);
        let _ = shared::redact::is_sensitive_key(&a);
        let mut v = serde_json::json!({ a.clone(): b.clone(), "token": [c.clone()], "n": { b.clone(): 1 } });
        shared::redact::redact_json(&mut v);
        let mut out = String::new();
        shared::snapshot::quote(&a, &mut out);
        let _ = shared::text::quoted_spans(&a);
        let _ = shared::text::strip_bidi(&a);
        let mut cut = a.clone();
        shared::limits::truncate_chars(&mut cut, rng.below(10));
        let _ = shared::url::strip_query(&a);
        let _ = shared::url::validate_navigation_url(&a);
        let _ = shared::policy::origin_matches(&a, &b);
        let _ = shared::policy::origin_matches("https://*.example.com", &format!("https://{a}/"));
        let _ = shared::sensitive::classify_name(&a);
        let _ = shared::sensitive::classify_field(&FieldFacts {
            input_type: &a,
            autocomplete: &b,
            name: &c,
            id: &a,
            label: &b,
            placeholder: &c,
        });
        let _ = shared::risk::normalize(&a);
        let _ = shared::risk::icon_label(&a);
        let _ = shared::confusable::skeleton(&a);
        let facts = ElementFacts {
            role: b.clone(),
            name: a.clone(),
            input_type: c.clone(),
            visible_text: c.clone(),
            target: format!("https://h.example/{c}?action={a}&{b}"),
            form_method: if rng.below(2) == 0 { String::new() } else { "post".into() },
            painted_text: b.clone(),
            pings: vec![format!("https://h.example/{a}")],
            ..ElementFacts::default()
        };
        for kind in [ActionKind::Click, ActionKind::Type { submit: true }, ActionKind::press_key(&c)] {
            let _ = shared::risk::classify(&kind, Some(&facts), &format!("https://h.example/{b}"), None);
        }
        let _ = shared::risk::classify(&ActionKind::Navigate, None, &format!("https://h.example/{b}?do={a}"), None);
        let t = SummaryTarget { role: &b, name: &a, element_ref: &c };
        let typed = Action::Type { text: a.clone(), submit: false };
        let by_name = Action::TypeSecret { name: c.clone(), submit: true };
        for literals in [Literals::UnlessSensitive, Literals::Masked] {
            let _ = shared::mask::summarize(&typed, Some(&t), false, literals);
            let _ = shared::mask::summarize(&by_name, Some(&t), true, literals);
            let _ = shared::mask::summarize(&Action::PressKey { key: b.clone() }, Some(&t), true, literals);
        }
        let signals = PageSignals {
            url: format!("https://h.example/{a}"),
            title: b.clone(),
            headings: vec![a.clone(), c.clone()],
            buttons: vec![b.clone()],
            links: vec![c.clone()],
            inputs: vec![InputSignal::default()],
            text: format!("{a} {b} {c}"),
            ..PageSignals::default()
        };
        let _ = shared::challenge::detect(&signals);
        let _ = shared::untrusted::wrap_text(&a);
        // A recording fed page-controlled labels, names and typed text.
        let field = shared::flow::Descriptor {
            role: "textbox".into(),
            name: a.clone(),
            label: b.clone(),
            placeholder: c.clone(),
            input_type: b.clone(),
            locators: vec![shared::flow::Locator::Id(c.clone()), shared::flow::Locator::Name(a.clone())],
            ..shared::flow::Descriptor::default()
        };
        let _ = shared::record::value_kind(&a);
        let _ = shared::record::field_kind(&field, &c);
        let mut params = Vec::new();
        let _ = shared::record::keep_value(&field, &b, false, Some(&a), true, &mut params);
        let _ = shared::record::keep_choice(&field, &b, false, &c, false, &mut params);
        if let Ok(mut rec) = shared::record::Recording::new("fuzz", rng.below(2) == 0) {
            use shared::record::{RecordedAction, RecordedStep, Typed};
            for action in [
                RecordedAction::Navigate { url: format!("https://h.example/{a}?{b}") },
                RecordedAction::Fill { text: Some(Typed(b.clone())) },
                RecordedAction::Select { label: a.clone(), option: c.clone() },
                RecordedAction::PressKey { key: c.clone() },
            ] {
                let _ = rec.push(RecordedStep {
                    action,
                    target: Some(field.clone()),
                    autocomplete: c.clone(),
                    sensitive: false,
                    url: format!("https://h.example/{c}#{a}"),
                    title: a.clone(),
                });
            }
            if let Some(flow) = rec.finish(b.clone()) {
                let _ = shared::record::check_flow(&flow);
            }
        }
        // The extension's gate on a live element whose every text is the page's.
        let element = ResolvedElement {
            facts: facts.clone(),
            fingerprint: Fingerprint { role: b.clone(), name: a.clone(), path: c.clone() },
            sensitive: Some(shared::sensitive::SensitiveKind::from_wire(&b)),
            url: format!("https://h.example/{a}#{c}"),
        };
        let gate = Gate {
            request: 1,
            risk: RiskLevel::Medium,
            reasons: vec![a.clone()],
            decision: Decision::Confirm,
            policy: RiskDecisions::default(),
            summary: c.clone(),
            timeout_secs: rng.below(1_000) as u32,
            origin: b.clone(),
            person_must_answer: rng.below(2) == 0,
            changed: None,
        };
        let action = match rng.below(3) {
            0 => Action::Click,
            1 => by_name.clone(),
            _ => Action::SelectOption { values: vec![a.clone()] },
        };
        let _ = shared::gate::decide(&Live {
            action: &action,
            gate: &gate,
            expect: Some(&element.fingerprint),
            element: Some(&element),
            url: &element.url,
            yolo: false,
        });
    }
}
