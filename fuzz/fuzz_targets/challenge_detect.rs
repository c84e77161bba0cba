//! `shared::challenge::detect` on any page signals built from the input
//! (vendor markers, login and MFA words mixed with arbitrary text), and the
//! signals as JSON, as they arrive with a snapshot: no panic.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use shared::challenge::{InputSignal, PageSignals, detect};

const WORDS: &[&str] = &[
    "g-recaptcha", "h-captcha", "cf-turnstile", "cf-challenge", "funcaptcha", "arkose", "px-captcha", "data-sitekey",
    "reCAPTCHA", "Verify you are human", "Just a moment...", "Sign in", "Log in", "Password", "password",
    "one-time-code", "Enter the code", "Two-factor authentication", "Use your passkey", "webauthn", "Allow access",
    "Authorize", "Access denied", "https://www.google.com/recaptcha/api2/anchor", "https://challenges.cloudflare.com/x",
    "https://accounts.example/login", "https://app.example/oauth/authorize", "current-password", "username", "email",
    "otp", "numeric", "Anmelden", "ログイン", "Войти",
];

fn text(u: &mut Unstructured) -> Result<String> {
    let mut s = String::new();
    for _ in 0..u.int_in_range(0..=4)? {
        if u.arbitrary()? {
            s.push_str(u.choose(WORDS)?);
        } else {
            s.push_str(u.arbitrary::<&str>()?);
        }
        s.push(' ');
    }
    Ok(s.trim_end().to_string())
}

fn texts(u: &mut Unstructured) -> Result<Vec<String>> {
    (0..u.int_in_range(0..=4)?).map(|_| text(u)).collect()
}

fn input(u: &mut Unstructured) -> Result<InputSignal> {
    Ok(InputSignal {
        input_type: text(u)?,
        autocomplete: text(u)?,
        name: text(u)?,
        id: text(u)?,
        label: text(u)?,
        placeholder: text(u)?,
        maxlength: u.arbitrary()?,
        inputmode: text(u)?,
        ..Default::default()
    })
}

fn signals(u: &mut Unstructured) -> Result<PageSignals> {
    Ok(PageSignals {
        url: text(u)?,
        title: text(u)?,
        headings: texts(u)?,
        buttons: texts(u)?,
        links: texts(u)?,
        iframes: texts(u)?,
        iframe_titles: texts(u)?,
        scripts: texts(u)?,
        widgets: texts(u)?,
        inputs: (0..u.int_in_range(0..=3)?).map(|_| input(u)).collect::<Result<_>>()?,
        forms: u.int_in_range(0..=3)?,
        text: text(u)?,
        ..Default::default()
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = serde_json::from_slice::<PageSignals>(data) {
        let _ = detect(&s);
    }
    if let Ok(s) = signals(&mut Unstructured::new(data)) {
        let _ = format!("{:?}", detect(&s));
    }
});
