//! Hand-offs: the tab is the person's until they say it is the agent's
//! again (docs/design.md, "Hand-off to the person").
//!
//! A tab is *waiting for the person* ([`Waiting`]) in three ways
//! ([`Trigger`]):
//! - `detected`: before the extension dispatches a page action, and after
//!   every navigation or new tab load it waits for, it runs the challenge
//!   decision (`crate::challenge::detect`) on the live page; a challenge
//!   means the action is not dispatched and the tab waits;
//! - `agent`: the agent called `browser_handoff {reason}`; the reason is
//!   shown to the person in quotes, as the agent's words;
//! - `person`: the person pressed "Take over" in the popup.
//!
//! Only the popup ends a hand-off (Done or Abort), STOP ends them all, and
//! each has a deadline (`human_timeout_secs`). Nothing from the bridge, a
//! tool or a page can end one: there is no such message.
//!
//! While a tab waits for the person it is theirs: every command on it but
//! listing tabs is refused with `HUMAN_REQUIRED` ([`check_handed`]), in
//! the bridge before anything is sent and in the extension again. An
//! agent session may ask for [`MAX_HANDOFFS_PER_MINUTE`] hand-offs a
//! minute ([`HandoffLimiter`]).
//!
//! Done is checked, not believed ([`check_done`]): the live page must show
//! no challenge and be on the same scheme and port and the same host or
//! registrable domain (full Public Suffix List,
//! [`crate::url::same_site_and_port`]) as the page where the hand-off
//! began — a login that went through an identity provider and came back
//! counts; a tab left on another site, another port of the same host or
//! another customer's subdomain of a shared suffix does not. A Done that fails the check is a *miss*: the
//! tab waits again with a note for the person; [`MAX_MISSES`] misses end it
//! as `still_there` (`HUMAN_REQUIRED`).
//!
//! Where no person can help (a headless browser, [`is_headless`]: the user
//! agent for Chromium, the native host's [`FIREFOX_HEADLESS_ENV`] for Firefox)
//! a detected challenge is `SECURITY_CHALLENGE {kind, evidence}` at once
//! ([`headless_error`]): nothing is dispatched and nothing waits.
//!
//! Every hand-off that ends is one audit row ([`Record`]).

use serde::{Deserialize, Serialize};

use crate::challenge::{Challenge, ChallengeKind};
use crate::command::Command;
use crate::error::{ErrorCode, WireError};
use crate::tab::TabId;

/// The longest reason an agent may give (characters).
pub const MAX_REASON_CHARS: usize = 300;
/// Done pressed while the page still shows a challenge (or is on another
/// site) this many times ends the hand-off as `still_there`.
pub const MAX_MISSES: u8 = 2;
/// Hand-offs one action may go through before it gives up
/// (`HUMAN_REQUIRED`): a challenge that comes back after a good Done is
/// handed over once more, not forever.
pub const MAX_HANDOFFS_PER_ACTION: u8 = 2;

/// How a tab came to wait for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Detected,
    Agent,
    Person,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Detected => "detected",
            Trigger::Agent => "agent",
            Trigger::Person => "person",
        }
    }
}

/// How a hand-off ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Done, and the check passed.
    Done,
    /// The person pressed Abort.
    Abort,
    /// Nobody ended it within `human_timeout_secs`.
    Timeout,
    /// STOP.
    Stop,
    /// Done pressed [`MAX_MISSES`] times while the page still needed the
    /// person (or was on another site).
    StillThere,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Abort => "abort",
            Outcome::Timeout => "timeout",
            Outcome::Stop => "stop",
            Outcome::StillThere => "still_there",
        }
    }

    /// What the waiting call gets when the hand-off did not end with a good
    /// Done (`None` for [`Outcome::Done`]).
    pub fn error(self, what: &str) -> Option<WireError> {
        let e = |code, msg: String| Some(WireError::new(code, msg));
        match self {
            Outcome::Done => None,
            Outcome::Abort => e(
                ErrorCode::HumanRequired,
                format!("the person aborted the hand-off ({what}); nothing was done on the page"),
            ),
            Outcome::Timeout => e(
                ErrorCode::HumanRequired,
                format!("nobody finished the hand-off ({what}) in time; nothing was done on the page"),
            ),
            Outcome::StillThere => e(
                ErrorCode::HumanRequired,
                format!("the page still needs the person ({what}) after they pressed Done twice; nothing was done"),
            ),
            Outcome::Stop => e(ErrorCode::Stopped, format!("the person pressed STOP during the hand-off ({what})")),
        }
    }
}

/// A tab waiting for the person, as the popup shows it and the bridge
/// reports it (`browser_status`, MCP progress).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiting {
    /// Unique for the worker's lifetime; what the popup's buttons name.
    pub id: u64,
    pub tab: TabId,
    /// The challenge on the page, when one was detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<Challenge>,
    /// `scheme://host:port` of the tab's page now: kept current while the
    /// hand-off waits (a tab that navigates shows where it is, never only
    /// where it began).
    pub origin: String,
    /// `scheme://host:port` of the page where it began (what Done is
    /// checked against); empty in lists from before this field.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub began_origin: String,
    /// The agent's words (`browser_handoff`), at most [`MAX_REASON_CHARS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub trigger: Trigger,
    /// Epoch milliseconds.
    pub since_ms: u64,
    /// Dones that failed the check so far.
    #[serde(default)]
    pub misses: u8,
    /// Why the last Done did not count, for the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Waiting {
    /// What the person is asked to do, in a few words.
    pub fn need(&self) -> &'static str {
        match (self.challenge.as_ref().map(|c| c.kind), self.trigger) {
            (Some(k), _) => need_of(k),
            (None, Trigger::Agent) => "The agent asks for your help",
            (None, _) => "You are using this tab",
        }
    }

    /// A short label for results and audit rows: the challenge kind, or
    /// the trigger when there is none.
    pub fn what(&self) -> &'static str {
        match &self.challenge {
            Some(c) => c.kind.as_str(),
            None => match self.trigger {
                Trigger::Agent => "asked by the agent",
                _ => "taken over by the person",
            },
        }
    }
}

/// The person's task for each challenge kind.
pub fn need_of(kind: ChallengeKind) -> &'static str {
    match kind {
        ChallengeKind::Captcha => "Solve the CAPTCHA",
        ChallengeKind::Mfa => "Enter the verification code",
        ChallengeKind::Passkey => "Use your passkey or security key",
        ChallengeKind::Login => "Sign in",
        ChallengeKind::OauthConsent => "Review the permission request",
        ChallengeKind::Blocked => "The site blocked this browser",
    }
}

/// One audit row per ended hand-off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub tab: TabId,
    /// The challenge kind, or `agent` / `person` when there was none.
    pub kind: String,
    pub origin: String,
    pub trigger: Trigger,
    pub outcome: Outcome,
    pub duration_ms: u64,
}

/// What a Done found on the live page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DoneCheck {
    /// No challenge, same site: the hand-off is over.
    Resolved,
    /// Not yet: the tab waits again; the note says why.
    Again(String),
    /// The last allowed miss: ends as [`Outcome::StillThere`].
    GiveUp,
}

/// The check behind Done: `began` is the URL where the hand-off began,
/// `now` the tab's URL, `challenge` the decision on the live page,
/// `misses` the failed Dones before this one. `now` must be the same
/// place as `began` ([`crate::url::same_site_and_port`]: same scheme and
/// port, and the same host or registrable domain by the full Public
/// Suffix List).
pub fn check_done(began: &str, now: &str, challenge: Option<&Challenge>, misses: u8) -> DoneCheck {
    let home = crate::url::Origin::of(began).map(|o| o.to_string());
    let here = crate::url::Origin::of(now).map(|o| o.to_string());
    let note = if home.is_none() || !crate::url::same_site_and_port(began, now) {
        Some(format!(
            "This tab is on {}, not on {}. Go back to {} and press Done again.",
            here.as_deref().unwrap_or("another page"),
            home.as_deref().unwrap_or("the site"),
            home.as_deref().unwrap_or("the site"),
        ))
    } else {
        challenge.map(|c| format!("The page still asks: {}. Press Done again when it is finished.", need_of(c.kind)))
    };
    match note {
        None => DoneCheck::Resolved,
        Some(_) if misses + 1 >= MAX_MISSES => DoneCheck::GiveUp,
        Some(n) => DoneCheck::Again(n),
    }
}

/// The tab a command would touch, if it touches one. Listing tabs,
/// opening a new one and asking the person a question touch none.
fn tab_of(command: &Command) -> Option<TabId> {
    match command {
        Command::TabsList { .. } | Command::TabNew { .. } | Command::AskPerson { .. } => None,
        Command::TabSelect { tab }
        | Command::TabClose { tab }
        | Command::Navigate { tab, .. }
        | Command::History { tab, .. }
        | Command::Snapshot { tab, .. }
        | Command::ExtractText { tab, .. }
        | Command::Screenshot { tab }
        | Command::Resolve { tab, .. }
        | Command::Act { tab, .. }
        | Command::Locate { tab, .. }
        | Command::Handoff { tab, .. } => Some(*tab),
    }
}

/// A tab handed to the person is theirs: every command on it is refused
/// at once with `HUMAN_REQUIRED` (nothing is sent to the tab, nothing is
/// read from it), until the hand-off ends. Listing tabs stays allowed.
/// `handed` are the tabs waiting for the person now. The bridge checks
/// this before it sends a command to the extension, and the extension
/// again before it runs one.
///
/// Refused rather than queued: a queued command would need a bound of
/// its own, and the agent learns at once what is going on
/// (`browser_status` lists the waiting tabs). The call that opened the
/// hand-off is the one that waits for it.
pub fn check_handed(command: &Command, handed: &[TabId]) -> Result<(), WireError> {
    match tab_of(command) {
        Some(tab) => check_handed_tab(tab, handed),
        None => Ok(()),
    }
}

/// [`check_handed`] for a tool that reads what the bridge holds of `tab`
/// (the network tools, `crate::withhold`): a handed tab is the person's
/// for every tool.
pub fn check_handed_tab(tab: TabId, handed: &[TabId]) -> Result<(), WireError> {
    match tab {
        tab if handed.contains(&tab) => Err(WireError::new(
            ErrorCode::HumanRequired,
            format!(
                "tab {tab} is handed to the person: nothing is done on it or read from it until they hand it \
                 back (browser_status lists the tabs waiting for the person); nothing was done"
            ),
        )),
        _ => Ok(()),
    }
}

/// Hand-offs one agent session may ask for (`browser_handoff`) in
/// [`HANDOFF_WINDOW_MS`]; more are refused (`BUDGET_EXCEEDED`), so an
/// agent cannot bury the person in cards.
pub const MAX_HANDOFFS_PER_MINUTE: usize = 3;
/// The sliding window of [`MAX_HANDOFFS_PER_MINUTE`].
pub const HANDOFF_WINDOW_MS: u64 = 60_000;

/// One session's recent hand-off requests (a sliding window).
#[derive(Debug, Clone, Default)]
pub struct HandoffLimiter {
    starts: std::collections::VecDeque<u64>,
}

impl HandoffLimiter {
    /// Counts a hand-off asked for at `now_ms` (epoch or monotonic
    /// milliseconds, the same clock every call), or refuses it when
    /// [`MAX_HANDOFFS_PER_MINUTE`] were asked for in the last
    /// [`HANDOFF_WINDOW_MS`]. A refused one does not count.
    pub fn admit(&mut self, now_ms: u64) -> Result<(), WireError> {
        while self.starts.front().is_some_and(|&t| now_ms.saturating_sub(t) >= HANDOFF_WINDOW_MS || t > now_ms) {
            self.starts.pop_front();
        }
        if self.starts.len() >= MAX_HANDOFFS_PER_MINUTE {
            let oldest = self.starts.front().copied().unwrap_or(now_ms);
            let wait_s = (HANDOFF_WINDOW_MS - now_ms.saturating_sub(oldest)).div_ceil(1000);
            return Err(WireError::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "too many hand-offs: at most {MAX_HANDOFFS_PER_MINUTE} a minute for one session; \
                     the person was not asked. Try again in {wait_s} s"
                ),
            ));
        }
        self.starts.push_back(now_ms);
        Ok(())
    }
}

/// Whether a browser says it runs headless (its user agent names
/// `HeadlessChrome`): no person can solve anything there.
pub fn is_headless_user_agent(ua: &str) -> bool {
    ua.contains("HeadlessChrome")
}

/// The variable Firefox sets in its own environment when it runs
/// `--headless`, which the processes it starts (the native host among
/// them) inherit. Firefox's user agent does not say it runs headless.
pub const FIREFOX_HEADLESS_ENV: &str = "MOZ_HEADLESS";

/// Whether [`FIREFOX_HEADLESS_ENV`]'s value (as the native host finds it)
/// says the browser that started it runs headless: set, not empty, not `0`.
pub fn env_says_headless(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether nobody can help in this browser: its user agent says so
/// (Chromium) or its native host found it started headless (Firefox).
pub fn is_headless(user_agent: &str, host_says_headless: bool) -> bool {
    host_says_headless || is_headless_user_agent(user_agent)
}

/// A challenge where no person can help: refused at once.
pub fn headless_error(challenge: &Challenge) -> WireError {
    WireError::new(
        ErrorCode::SecurityChallenge,
        format!(
            "the page shows a security challenge ({}) and this browser is headless, so no person can handle it; \
             nothing was done. Run Chaperone headed (`chaperone up` without --headless) and try again",
            challenge.kind.as_str()
        ),
    )
    .with_challenge(challenge.clone())
}

/// Checks an agent's reason: not empty, at most [`MAX_REASON_CHARS`],
/// no control characters but newlines and tabs; bidi controls removed
/// ([`crate::text::strip_bidi`]: they could draw the reason's last words
/// after its closing quote, in Chaperone's voice).
pub fn check_reason(reason: &str) -> Result<String, WireError> {
    let stripped = crate::text::strip_bidi(reason);
    let r = stripped.trim();
    let bad = |m: &str| Err(WireError::new(ErrorCode::InvalidRequest, m));
    if r.is_empty() {
        return bad("reason must say what the person should do");
    }
    if r.chars().count() > MAX_REASON_CHARS {
        return bad("reason is longer than 300 characters");
    }
    if r.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return bad("reason contains control characters");
    }
    Ok(r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captcha() -> Challenge {
        Challenge { kind: ChallengeKind::Captcha, evidence: "reCAPTCHA iframe".into() }
    }

    #[test]
    fn done_counts_only_without_a_challenge_on_the_same_site() {
        let began = "https://shop.example.com/cart";
        // (now, challenge, misses before) → verdict
        let cases: Vec<(&str, Option<Challenge>, u8, &str)> = vec![
            ("https://shop.example.com/cart", None, 0, "resolved"),
            // A login through another host that came back: same site.
            ("https://www.example.com/account", None, 0, "resolved"),
            // Another port of the same host is another place.
            ("https://shop.example.com:8443/x", None, 0, "again"),
            ("http://shop.example.com/cart", None, 0, "again"),
            ("https://shop.example.com/cart", Some(captcha()), 0, "again"),
            ("https://shop.example.com/cart", Some(captcha()), 1, "give up"),
            // Left on the identity provider: not done.
            ("https://accounts.idp.test/signin", None, 0, "again"),
            ("https://accounts.idp.test/signin", None, 1, "give up"),
            ("https://example.co.uk/", None, 0, "again"),
            ("about:blank", None, 0, "again"),
        ];
        for (now, ch, misses, want) in cases {
            let got = match check_done(began, now, ch.as_ref(), misses) {
                DoneCheck::Resolved => "resolved",
                DoneCheck::Again(_) => "again",
                DoneCheck::GiveUp => "give up",
            };
            assert_eq!(got, want, "{now} {ch:?} {misses}");
        }
        // Hosts without a registrable domain are their own site.
        assert_eq!(check_done("http://127.0.0.1:4000/a", "http://127.0.0.1:4000/b", None, 0), DoneCheck::Resolved);
        assert!(matches!(
            check_done("http://127.0.0.1:4000/a", "http://localhost:4000/a", None, 0),
            DoneCheck::Again(_)
        ));
    }

    #[test]
    fn done_on_another_port_or_customer_does_not_count() {
        for (name, began, now) in [
            ("another port", "http://127.0.0.1:4000/login", "http://127.0.0.1:4001/login"),
            ("another glitch.me customer", "https://bank.glitch.me/", "https://mallory.glitch.me/"),
            ("another github.io customer", "https://bank.github.io/", "https://mallory.github.io/"),
        ] {
            assert!(matches!(check_done(began, now, None, 0), DoneCheck::Again(_)), "{name}");
        }
        assert_eq!(
            check_done("https://www.example.co.uk/", "https://login.example.co.uk/", None, 0),
            DoneCheck::Resolved
        );
    }

    #[test]
    fn a_handed_tab_refuses_everything_but_the_tab_list() {
        use crate::action::{Action, Gate};
        use crate::snapshot::{SnapshotRequest, TextRequest};
        let handed = [7];
        let gate = Gate {
            request: 1,
            risk: crate::risk::RiskLevel::Low,
            reasons: Vec::new(),
            decision: crate::policy::Decision::Allow,
            policy: crate::policy::RiskDecisions::default(),
            summary: "click".into(),
            timeout_secs: 120,
            origin: String::new(),
            person_must_answer: false,
            changed: None,
        };
        // (name, command, allowed?)
        let cases: Vec<(&str, Command, bool)> = vec![
            ("list tabs", Command::TabsList { tabs: vec![7, 8] }, true),
            ("new tab", Command::TabNew { url: Some("https://a.example/".into()) }, true),
            ("ask the person", Command::AskPerson { gate: gate.clone() }, true),
            ("navigate", Command::Navigate { tab: 7, url: "https://evil.example/".into() }, false),
            ("navigate another tab", Command::Navigate { tab: 8, url: "https://a.example/".into() }, true),
            ("history", Command::History { tab: 7, step: crate::protocol::HistoryStep::Back }, false),
            ("snapshot", Command::Snapshot { tab: 7, request: SnapshotRequest::default() }, false),
            ("snapshot another tab", Command::Snapshot { tab: 8, request: SnapshotRequest::default() }, true),
            ("extract text", Command::ExtractText { tab: 7, request: TextRequest::default() }, false),
            ("screenshot", Command::Screenshot { tab: 7 }, false),
            ("select", Command::TabSelect { tab: 7 }, false),
            ("close", Command::TabClose { tab: 7 }, false),
            ("resolve", Command::Resolve { tab: 7, target: "e1".into() }, false),
            (
                "act",
                Command::Act { tab: 7, target: Some("e1".into()), action: Action::Click, expect: None, gate },
                false,
            ),
            ("hand off again", Command::Handoff { tab: 7, reason: "again".into() }, false),
        ];
        for (name, cmd, allowed) in cases {
            let got = check_handed(&cmd, &handed);
            assert_eq!(got.is_ok(), allowed, "{name}: {got:?}");
            if let Err(e) = got {
                assert_eq!(e.code, ErrorCode::HumanRequired, "{name}");
                assert!(e.message.contains("handed to the person"), "{name}: {}", e.message);
            }
        }
        // Nothing handed: everything goes.
        assert!(check_handed(&Command::Screenshot { tab: 7 }, &[]).is_ok());
    }

    #[test]
    fn hand_offs_are_limited_per_minute() {
        let mut l = HandoffLimiter::default();
        // (name, at ms, admitted?)
        let cases = [
            ("first", 1_000, true),
            ("second", 2_000, true),
            ("third", 3_000, true),
            ("fourth in the minute", 4_000, false),
            ("still within a minute of the first", 60_999, false),
            ("the first has left the window", 61_000, true),
            ("the window is full again", 61_500, false),
            ("the second and third left", 63_000, true),
            ("a clock that went back is not a reason to refuse forever", 10, true),
        ];
        for (name, at, want) in cases {
            let got = l.admit(at);
            assert_eq!(got.is_ok(), want, "{name}: {got:?}");
            if let Err(e) = got {
                assert_eq!(e.code, ErrorCode::BudgetExceeded, "{name}");
                assert!(e.message.contains("at most 3 a minute"), "{}", e.message);
            }
        }
    }

    #[test]
    fn the_note_says_what_is_wrong() {
        let DoneCheck::Again(n) = check_done("http://127.0.0.1:1/a", "http://localhost:1/b", None, 0) else {
            panic!("not again")
        };
        assert!(n.contains("localhost") && n.contains("127.0.0.1"), "{n}");
        let DoneCheck::Again(n) = check_done("http://127.0.0.1:1/a", "http://127.0.0.1:1/a", Some(&captcha()), 0)
        else {
            panic!("not again")
        };
        assert!(n.contains("Solve the CAPTCHA"), "{n}");
    }

    #[test]
    fn outcomes_map_to_the_documented_codes() {
        assert_eq!(Outcome::Done.error("captcha"), None);
        for (o, code) in [
            (Outcome::Abort, ErrorCode::HumanRequired),
            (Outcome::Timeout, ErrorCode::HumanRequired),
            (Outcome::StillThere, ErrorCode::HumanRequired),
            (Outcome::Stop, ErrorCode::Stopped),
        ] {
            let e = o.error("captcha").unwrap();
            assert_eq!(e.code, code, "{o:?}");
            assert!(e.message.contains("captcha"), "{}", e.message);
        }
        let json = serde_json::to_string(&Outcome::StillThere).unwrap();
        assert_eq!(json, "\"still_there\"");
        assert_eq!(Outcome::StillThere.as_str(), "still_there");
    }

    #[test]
    fn headless_is_read_from_the_user_agent_and_refuses_with_the_challenge() {
        assert!(is_headless_user_agent(
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/142.0.0.0 Safari/537.36"
        ));
        assert!(!is_headless_user_agent(
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
        ));
        // Firefox: the user agent never says it; the native host's
        // environment does.
        let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0";
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("firefox --headless", Some("1"), true),
            ("firefox headed", None, false),
            ("MOZ_HEADLESS empty", Some(""), false),
            ("MOZ_HEADLESS=0", Some("0"), false),
            ("any other value", Some("true"), true),
        ];
        for (name, env, want) in cases {
            assert_eq!(is_headless(firefox, env_says_headless(*env)), *want, "{name}");
        }
        assert!(is_headless("Mozilla/5.0 HeadlessChrome/142.0.0.0", false), "Chromium headless by its user agent");
        let e = headless_error(&captcha());
        assert_eq!(e.code, ErrorCode::SecurityChallenge);
        assert_eq!(e.challenge, Some(captcha()));
        assert!(e.message.contains("headed"), "{}", e.message);
    }

    #[test]
    fn reasons_are_checked() {
        assert_eq!(check_reason("  sign in to the bank ").unwrap(), "sign in to the bank");
        assert!(check_reason("   ").is_err());
        assert!(check_reason(&"x".repeat(301)).is_err());
        assert!(check_reason(&"é".repeat(300)).is_ok());
        assert!(check_reason("a\u{1b}[2Jb").is_err());
        assert!(check_reason("line one\nline two").is_ok());
        assert_eq!(check_reason("ok\u{202E} \u{2066}x\u{2069}\u{200F}").unwrap(), "ok x");
        assert!(check_reason("\u{202E}\u{202C}").is_err(), "only bidi controls: nothing to say");
    }

    #[test]
    fn the_person_is_told_what_is_needed() {
        let mut w = Waiting {
            id: 1,
            tab: 3,
            challenge: Some(captcha()),
            origin: "https://a.example:443".into(),
            began_origin: "https://a.example:443".into(),
            reason: None,
            trigger: Trigger::Detected,
            since_ms: 0,
            misses: 0,
            note: None,
        };
        assert_eq!(w.need(), "Solve the CAPTCHA");
        assert_eq!(w.what(), "captcha");
        w.challenge = None;
        w.trigger = Trigger::Agent;
        assert_eq!(w.need(), "The agent asks for your help");
        assert_eq!(w.what(), "asked by the agent");
    }
}
