//! Who did it: the rules that keep a recording to what the person did
//! (README "Record me and flows", SECURITY.md).
//!
//! `isTrusted` is not "the person did it". A page's `checkbox.click()` or
//! `label.click()` gives a trusted `change`, `focus()` +
//! `execCommand('insertText')` a trusted `input`, and a page's
//! `location.assign`, `history.back()`, `requestSubmit()`, meta refresh or
//! timer navigates the tab as a link would. So:
//!
//! - [`step_counts`]: an element's event is a step only right after the
//!   person's own pointer or key input on that element (or a `<label>` of
//!   it): at most [`PERSON_INPUT_MS`] before (a choice in an open
//!   `<select>` list: [`PERSON_PICK_MS`]), and, where the browser says,
//!   with the page's transient user activation still on.
//! - [`navigation_counts`]: a navigation is a step only when the browser
//!   itself started it for the person, in the tab the person is using:
//!   typed in the address bar, a bookmark, a search from the address bar
//!   (`webNavigation` transition types), or Back/Forward the person pressed
//!   (the Navigation API's `traverse` with `userInitiated`). A link, a
//!   form, a script, a redirect, the history API: never — when the person
//!   clicked or pressed Enter, that click or Enter is the step and replays
//!   the navigation.
//! - [`looks_like_token`]: a path segment that looks like a token (a
//!   UUID, long hex, a JWT, a high-entropy base64url string, a long
//!   number) becomes a parameter of the flow without a value
//!   ([`tokenize_url`]); a replay fills it in ([`fill_url`]).

/// How long after the person's own pointer or key input on an element a
/// click, a check or typing in it still counts as theirs.
pub const PERSON_INPUT_MS: f64 = 1_000.0;
/// A choice in a `<select>`: the list opened by the person's click may
/// stay open while they read it. (A page cannot make a trusted `change` on
/// a `<select>`; the bound only ties the choice to the person's click.)
pub const PERSON_PICK_MS: f64 = 30_000.0;

/// What the page reports to the recorder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepEvent {
    /// A `click` on a link, a button or a button-like element.
    Click,
    /// An `input` in a text field or editable region.
    Typing,
    /// A `change` of a checkbox or a radio button.
    Check,
    /// A `change` of a `<select>`.
    Choose,
    /// A `keydown` of Enter in a field: itself the person's key.
    Enter,
}

/// Where the person's last pointer or key input was, seen from the
/// element of the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// On the element or inside it.
    On,
    /// On (or inside) a `<label>` whose control the element is.
    Label,
    /// Anywhere else.
    Elsewhere,
}

/// The person's last input in the page: where, and how long ago.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PersonInput {
    pub touch: Touch,
    pub age_ms: f64,
}

/// What the recorder knows about one event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepFacts {
    pub event: StepEvent,
    /// `event.isTrusted`.
    pub trusted: bool,
    /// `None`: no trusted pointer or key input in this page yet.
    pub last_input: Option<PersonInput>,
    /// `navigator.userActivation.isActive`; `None` where the browser does
    /// not say.
    pub activation: Option<bool>,
}

/// Why an event or a navigation is not the person's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotPerson {
    /// A synthetic event (`dispatchEvent`, `element.click()`'s own click).
    Untrusted,
    /// No pointer or key input of the person in the page yet.
    NoInput,
    /// The person's last input was on another element.
    Elsewhere,
    /// The person's input on the element was too long ago.
    TooLate,
    /// The page's transient user activation is off.
    NoActivation,
    /// Not the tab the person is using.
    OtherTab,
    /// A navigation the page (or a link, form or redirect) started.
    ByThePage,
}

impl NotPerson {
    pub fn as_str(self) -> &'static str {
        match self {
            NotPerson::Untrusted => "untrusted",
            NotPerson::NoInput => "no person input",
            NotPerson::Elsewhere => "person input elsewhere",
            NotPerson::TooLate => "person input too long ago",
            NotPerson::NoActivation => "no user activation",
            NotPerson::OtherTab => "not the person's tab",
            NotPerson::ByThePage => "started by the page",
        }
    }
}

/// Whether an event of an element is a step of the person's: see the
/// module docs.
pub fn step_counts(f: &StepFacts) -> Result<(), NotPerson> {
    if !f.trusted {
        return Err(NotPerson::Untrusted);
    }
    // A trusted Enter keydown is the person's key itself.
    if f.event == StepEvent::Enter {
        return Ok(());
    }
    let input = f.last_input.ok_or(NotPerson::NoInput)?;
    if input.touch == Touch::Elsewhere {
        return Err(NotPerson::Elsewhere);
    }
    let bound = if f.event == StepEvent::Choose { PERSON_PICK_MS } else { PERSON_INPUT_MS };
    // NaN and a clock going backwards are not "recent".
    if !(0.0..=bound).contains(&input.age_ms) {
        return Err(NotPerson::TooLate);
    }
    // The activation of a click lasts seconds, a list may stay open longer.
    if f.event != StepEvent::Choose && f.activation == Some(false) {
        return Err(NotPerson::NoActivation);
    }
    Ok(())
}

/// `webNavigation` transition types the browser gives navigations it
/// started for the person: the address bar, bookmarks, its suggestions.
pub const PERSON_TRANSITIONS: &[&str] = &["typed", "auto_bookmark", "generated", "keyword", "keyword_generated"];

/// What tells the recorder about a navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NavSignal<'a> {
    /// `webNavigation.onCommitted` of a tab's top frame (the worker).
    Committed { transition_type: &'a str, qualifiers: &'a [&'a str] },
    /// The Navigation API's `navigate` event in the page (the content
    /// script): `navigationType` and `userInitiated`.
    Navigate { navigation_type: &'a str, user_initiated: bool },
}

/// Whether a navigation is a step of the person's: see the module docs.
/// `person_tab`: the tab is the active tab of the last focused normal
/// window, not incognito.
pub fn navigation_counts(signal: NavSignal<'_>, person_tab: bool) -> Result<(), NotPerson> {
    if !person_tab {
        return Err(NotPerson::OtherTab);
    }
    let by_person = match signal {
        // Back/Forward is told apart only in the page (`history.back()`
        // by a script is a `forward_back` commit too); a client redirect
        // (meta refresh, `location` set while loading) is the page's.
        NavSignal::Committed { transition_type, qualifiers } => {
            PERSON_TRANSITIONS.contains(&transition_type)
                && !qualifiers.iter().any(|q| *q == "forward_back" || *q == "client_redirect")
        }
        NavSignal::Navigate { navigation_type, user_initiated } => navigation_type == "traverse" && user_initiated,
    };
    if by_person { Ok(()) } else { Err(NotPerson::ByThePage) }
}

// ---------------------------------------------------------------------------
// Tokens in paths.

/// Whether one path segment looks like a token (a capability or a session
/// value, not a place): a UUID; 16 or more hex digits; a JWT (`eyJ…` in
/// three dot-separated parts); a number of 10 or more digits; a run of 16
/// or more base64url characters with digits among its letters or that
/// switches between lower case, upper case and digits as random text does.
/// Slugs (`my-first-post`, `iphone-15-pro`), words, short numbers
/// (`/orders/123`), dates and file names are kept.
pub fn looks_like_token(segment: &str) -> bool {
    let s = segment;
    if s.is_empty() {
        return false;
    }
    if is_uuid(s) {
        return true;
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() == 3 && parts[0].starts_with("eyJ") && parts.iter().all(|p| !p.is_empty() && is_b64url(p)) {
        return true;
    }
    // Each run between separators is judged on its own.
    s.split(['-', '_', '.', '~', '=']).any(|run| {
        let n = run.chars().count();
        if !run.is_ascii() {
            return false;
        }
        let digits = run.bytes().filter(u8::is_ascii_digit).count();
        if digits == n {
            return n >= 10;
        }
        if n >= 16 && run.bytes().all(|b| b.is_ascii_hexdigit()) {
            return true;
        }
        n >= 16 && is_b64url(run) && (digits >= 2 || class_switches(run) * 10 >= n * 4)
    }) || (s.len() >= 24 && is_b64url(s) && class_switches(s) * 10 >= s.len() * 4)
}

fn is_b64url(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// How often consecutive characters change class (lower, upper, digit).
fn class_switches(s: &str) -> usize {
    let class = |b: u8| match b {
        b'a'..=b'z' => 0,
        b'A'..=b'Z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    s.as_bytes().windows(2).filter(|w| class(w[0]) != class(w[1])).count()
}

/// A URL's path segments that look like tokens replaced by `{{name}}`
/// placeholders; `name_of` names each token (the same token, the same
/// name). Only the path is touched; a URL without `scheme://` is
/// returned as it is.
pub fn tokenize_url(url: &str, mut name_of: impl FnMut(&str) -> Option<String>) -> String {
    let Some(scheme_end) = url.find("://") else { return url.to_string() };
    let rest = &url[scheme_end + 3..];
    let Some(path_start) = rest.find('/') else { return url.to_string() };
    let head = &url[..scheme_end + 3 + path_start];
    let path = &rest[path_start..];
    let cut = path.find(['?', '#']).unwrap_or(path.len());
    let (path, tail) = path.split_at(cut);
    let segments: Vec<String> = path
        .split('/')
        .map(|seg| {
            if looks_like_token(seg)
                && let Some(name) = name_of(seg)
            {
                format!("{{{{{name}}}}}")
            } else {
                seg.to_string()
            }
        })
        .collect();
    format!("{head}{}{tail}", segments.join("/"))
}

/// `text` (a page title, which is its URL while it loads) with each word
/// or path segment that looks like a token replaced by `{{token}}`.
pub fn tokenize_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if looks_like_token(word) {
            out.push_str("{{token}}");
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() || matches!(c, '/' | '?' | '#' | '&' | ',' | ':' | ';' | '(' | ')' | '"' | '\'') {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The `{{name}}` placeholders of a URL, in order.
pub fn url_placeholders(url: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = url;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        out.push(&after[..end]);
        rest = &after[end + 2..];
    }
    out
}

/// Why [`fill_url`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FillUrlError {
    /// No value for this parameter.
    Missing(String),
    /// The value is not one path segment of token characters.
    BadValue(String),
}

/// The URL with each `{{name}}` replaced by `value_of(name)`. A value must
/// be one path segment: 1–512 characters of `A-Z a-z 0-9 - _ . ~`, not `.`
/// or `..` — so a parameter can never move the URL to another path, query
/// or host.
pub fn fill_url(url: &str, mut value_of: impl FnMut(&str) -> Option<String>) -> Result<String, FillUrlError> {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = &after[..end];
        let value = value_of(name).ok_or_else(|| FillUrlError::Missing(name.to_string()))?;
        if !is_segment_value(&value) {
            return Err(FillUrlError::BadValue(name.to_string()));
        }
        out.push_str(&rest[..start]);
        out.push_str(&value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_segment_value(value: &str) -> bool {
    (1..=512).contains(&value.len())
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
        && value != "."
        && value != ".."
}

/// The values of the parameters a flow's navigation URLs hold, from the
/// run's `params` or a parameter's default, checked before any step runs:
/// every one given and each one path segment ([`fill_url`]).
pub fn bind_url_params(
    flow: &crate::flow::Flow,
    params: &std::collections::BTreeMap<String, String>,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut out = std::collections::BTreeMap::new();
    for step in &flow.steps {
        let crate::flow::StepAction::Navigate { url } = &step.action else { continue };
        for name in url_placeholders(url) {
            let declared = flow.params.iter().find(|p| p.name == name);
            let value = params.get(name).cloned().or_else(|| declared.and_then(|p| p.default.clone()));
            let Some(value) = value else { return Err(format!("missing parameters: {name}")) };
            if !is_segment_value(&value) {
                return Err(format!("the parameter {name} is one path segment: letters, digits, - _ . ~"));
            }
            out.insert(name.to_string(), value);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(event: StepEvent, touch: Option<(Touch, f64)>, activation: Option<bool>) -> StepFacts {
        StepFacts {
            event,
            trusted: true,
            last_input: touch.map(|(touch, age_ms)| PersonInput { touch, age_ms }),
            activation,
        }
    }

    #[test]
    fn which_events_are_the_persons() {
        use StepEvent::*;
        use Touch::*;
        let cases: &[(&str, StepFacts, Result<(), NotPerson>)] = &[
            // Controls: what the person really does.
            ("the person clicks the checkbox", facts(Check, Some((On, 40.0)), Some(true)), Ok(())),
            ("the person clicks the checkbox's label", facts(Check, Some((Label, 40.0)), Some(true)), Ok(())),
            ("the person types (keydown in the field)", facts(Typing, Some((On, 5.0)), Some(true)), Ok(())),
            ("the person clicks a field and types at once", facts(Typing, Some((On, 300.0)), Some(true)), Ok(())),
            ("the person clicks a button", facts(Click, Some((On, 90.0)), Some(true)), Ok(())),
            ("Enter in a field", facts(Enter, None, None), Ok(())),
            (
                "the person picks an option after reading the list",
                facts(Choose, Some((On, 8_000.0)), Some(false)),
                Ok(()),
            ),
            ("a browser without userActivation", facts(Check, Some((On, 40.0)), None), Ok(())),
            // Attacks: trusted events the page made.
            (
                "synthetic click",
                StepFacts { trusted: false, ..facts(Click, Some((On, 1.0)), Some(true)) },
                Err(NotPerson::Untrusted),
            ),
            ("checkbox.click() with no input yet", facts(Check, None, Some(false)), Err(NotPerson::NoInput)),
            (
                "checkbox.click() from the handler of the person's click elsewhere",
                facts(Check, Some((Elsewhere, 10.0)), Some(true)),
                Err(NotPerson::Elsewhere),
            ),
            (
                "focus() + execCommand('insertText') while the person typed in another field",
                facts(Typing, Some((Elsewhere, 100.0)), Some(true)),
                Err(NotPerson::Elsewhere),
            ),
            (
                "execCommand in the field the person left a minute ago",
                facts(Typing, Some((On, 60_000.0)), Some(false)),
                Err(NotPerson::TooLate),
            ),
            (
                "checkbox.click() on a timer, 2 s after the person touched it",
                facts(Check, Some((On, 2_000.0)), Some(true)),
                Err(NotPerson::TooLate),
            ),
            (
                "a list changed long after the person's click",
                facts(Choose, Some((On, 31_000.0)), None),
                Err(NotPerson::TooLate),
            ),
            ("a clock going backwards", facts(Click, Some((On, -5.0)), Some(true)), Err(NotPerson::TooLate)),
            ("no age", facts(Click, Some((On, f64::NAN)), Some(true)), Err(NotPerson::TooLate)),
            (
                "input right after the person's click but no activation",
                facts(Typing, Some((On, 100.0)), Some(false)),
                Err(NotPerson::NoActivation),
            ),
        ];
        for (name, f, want) in cases {
            assert_eq!(step_counts(f), *want, "{name}");
        }
    }

    #[test]
    fn which_navigations_are_the_persons() {
        let none: &[&str] = &[];
        let fb: &[&str] = &["forward_back"];
        let typed_back: &[&str] = &["forward_back", "from_address_bar"];
        let client: &[&str] = &["client_redirect"];
        let server: &[&str] = &["server_redirect", "from_address_bar"];
        let c =
            |t: &'static str, qs: &'static [&'static str]| NavSignal::Committed { transition_type: t, qualifiers: qs };
        let nav = |t: &'static str, u: bool| NavSignal::Navigate { navigation_type: t, user_initiated: u };
        let cases: &[(&str, NavSignal, bool, Result<(), NotPerson>)] = &[
            ("typed in the address bar", c("typed", none), true, Ok(())),
            ("typed, then a server redirect", c("typed", server), true, Ok(())),
            ("a bookmark", c("auto_bookmark", none), true, Ok(())),
            ("a search from the address bar", c("generated", none), true, Ok(())),
            ("the Back button (in the page)", nav("traverse", true), true, Ok(())),
            ("typed, in a background tab", c("typed", none), false, Err(NotPerson::OtherTab)),
            ("Back in a background tab", nav("traverse", true), false, Err(NotPerson::OtherTab)),
            ("a link (the person's click is the step)", c("link", none), true, Err(NotPerson::ByThePage)),
            ("location.assign / a timer", c("link", none), true, Err(NotPerson::ByThePage)),
            (
                "a form submitted (the click or Enter is the step)",
                c("form_submit", none),
                true,
                Err(NotPerson::ByThePage),
            ),
            ("meta refresh", c("link", client), true, Err(NotPerson::ByThePage)),
            ("back to a typed entry: told apart in the page", c("typed", typed_back), true, Err(NotPerson::ByThePage)),
            ("history.back() / Back button, as a commit", c("link", fb), true, Err(NotPerson::ByThePage)),
            ("reload", c("reload", none), true, Err(NotPerson::ByThePage)),
            ("history.back() by a script", nav("traverse", false), true, Err(NotPerson::ByThePage)),
            ("pushState / location by a script", nav("push", false), true, Err(NotPerson::ByThePage)),
            ("the person's link click (its click is the step)", nav("push", true), true, Err(NotPerson::ByThePage)),
            ("location.reload()", nav("reload", false), true, Err(NotPerson::ByThePage)),
            ("replaceState", nav("replace", false), true, Err(NotPerson::ByThePage)),
        ];
        for (name, signal, person_tab, want) in cases {
            assert_eq!(navigation_counts(*signal, *person_tab), *want, "{name}");
        }
    }

    #[test]
    fn which_path_segments_are_tokens() {
        let cases: &[(&str, bool)] = &[
            // Tokens.
            ("3fa85f64-5717-4562-b3fc-2c963f66afa6", true),
            ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", true),
            ("d41d8cd98f00b204e9800998ecf8427e", true),
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", true),
            ("kq3ZtP8wR2mX7vN4", true),
            ("Qm9vdHNTaG9wVG9rZW4x", true),
            ("AbCdEfGhIjKlMnOpQrStUvWx", true),
            ("1234567890123456789", true),
            ("reset-7f3a9c2e1b4d8f60a5e2", true),
            ("MTIzNDU2Nzg5MA", false), // 14 characters: too short to tell
            // Places.
            ("orders", false),
            ("123", false),
            ("2024", false),
            ("my-first-post", false),
            ("iphone-15-pro-max", false),
            ("iphone15promax", false),
            ("ProductDetailsPage", false),
            ("results.html", false),
            ("report-2024-12-03.pdf", false),
            ("en-US", false),
            ("supercalifragilisticexpialidocious", false),
            ("internationalization", false),
            ("%E2%9C%93", false),
            ("", false),
        ];
        for (seg, want) in cases {
            assert_eq!(looks_like_token(seg), *want, "{seg:?}");
        }
    }

    #[test]
    fn tokens_in_urls_become_placeholders() {
        let mut n = 0;
        let mut names = Vec::new();
        let mut name_of = |t: &str| {
            names.push(t.to_string());
            n += 1;
            Some(format!("path_token_{n}"))
        };
        for (url, want) in [
            (
                "https://shop.example/account/delete/kq3ZtP8wR2mX7vN4",
                "https://shop.example/account/delete/{{path_token_1}}",
            ),
            (
                "https://app.example/invite/3fa85f64-5717-4562-b3fc-2c963f66afa6/accept",
                "https://app.example/invite/{{path_token_2}}/accept",
            ),
            ("https://shop.example/orders/123", "https://shop.example/orders/123"),
            ("https://blog.example/2024/12/my-first-post", "https://blog.example/2024/12/my-first-post"),
            ("https://shop.example", "https://shop.example"),
            ("https://shop.example/", "https://shop.example/"),
        ] {
            assert_eq!(tokenize_url(url, &mut name_of), want, "{url}");
        }
        assert_eq!(url_placeholders("https://a.example/{{a}}/x/{{b}}"), ["a", "b"]);
        for (title, want) in [
            ("127.0.0.1:8080/reset/kq3ZtP8wR2mX7vN4.html", "127.0.0.1:8080/reset/{{token}}"),
            ("Invite 3fa85f64-5717-4562-b3fc-2c963f66afa6 (Acme)", "Invite {{token}} (Acme)"),
            ("Order 123 – My first post", "Order 123 – My first post"),
        ] {
            assert_eq!(tokenize_text(title), want, "{title}");
        }
        assert!(url_placeholders("https://a.example/{{a").is_empty());
    }

    #[test]
    fn placeholders_are_filled_with_one_segment() {
        let url = "https://shop.example/reset/{{path_token}}/confirm";
        let with = |v: &str| fill_url(url, |n| (n == "path_token").then(|| v.to_string()));
        assert_eq!(with("kq3ZtP8wR2mX7vN4"), Ok("https://shop.example/reset/kq3ZtP8wR2mX7vN4/confirm".into()));
        for bad in ["", ".", "..", "a/b", "../../account/delete", "x?y=1", "x#y", "%2e%2e", "@evil.example", "a b"] {
            assert_eq!(with(bad), Err(FillUrlError::BadValue("path_token".into())), "{bad:?}");
        }
        assert_eq!(fill_url(url, |_| None), Err(FillUrlError::Missing("path_token".into())));
        assert_eq!(fill_url("https://a.example/x", |_| None), Ok("https://a.example/x".into()));
    }

    #[test]
    fn url_parameters_are_bound_before_a_run() {
        use crate::flow::{Flow, Param, ParamKind, Step, StepAction};
        let nav = |url: &str| Step {
            action: StepAction::Navigate { url: url.into() },
            target: None,
            url: "https://a.example/".into(),
            title: String::new(),
            risk: None,
        };
        let flow = Flow {
            name: "reset".into(),
            created: String::new(),
            steps: vec![nav("https://a.example/reset/{{t}}"), nav("https://a.example/{{u}}")],
            params: vec![
                Param { name: "t".into(), kind: ParamKind::Text, default: None },
                Param { name: "u".into(), kind: ParamKind::Text, default: Some("home".into()) },
            ],
        };
        let given = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let ok = bind_url_params(&flow, &given(&[("t", "abc")])).unwrap();
        assert_eq!(ok.get("t").map(String::as_str), Some("abc"));
        assert_eq!(ok.get("u").map(String::as_str), Some("home"), "a default");
        assert!(bind_url_params(&flow, &given(&[])).unwrap_err().contains("missing parameters: t"));
        assert!(bind_url_params(&flow, &given(&[("t", "../x")])).unwrap_err().contains("one path segment"));
    }
}
