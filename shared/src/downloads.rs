//! Whose a download is, and what became of it (issues 29 and 30): the
//! rules the extension and the bridge share, as pure functions with table
//! tests. `crate::files` has the names, the risk and the wire types.
//!
//! # Attribution, failing closed
//!
//! `chrome.downloads` never says which tab started a download. The
//! extension gathers what it can ([`Provenance`]): the tab whose response
//! became the download (seen by `webRequest`; a `blob:`, `data:` or
//! `<a download>` download often has none), the tabs that opened that tab
//! (`openerTabId`, nearest first), the origin the download came from (its
//! referrer's, or a `blob:`/`filesystem:` URL's own) and the open tabs that
//! show that origin. [`attribute`] then decides, with the bridge's owners:
//!
//! - a known tab, or a tab on its opener chain, that a session owns →
//!   [`Attribution::Agent`] (what a tab an agent's tab opened downloads is
//!   that session's);
//! - a known tab with no session on its chain → [`Attribution::Person`];
//! - no known tab: [`Attribution::Unknown`] naming every session that has
//!   a tab showing the origin — or, when no origin is known at all (a
//!   `data:` URL with no referrer), every session that has an http(s) tab.
//!   An unknown download is cancelled while any such session exists; only
//!   when none does is it the person's.
//!
//! A download is the agent's unless it is positively the person's.

use crate::files::DownloadState;
pub use crate::files::Provenance;
use crate::sessions::{Owner, SessionKey};
use crate::tab::TabId;

/// Longest opener chain followed.
pub const MAX_OPENERS: usize = 16;

/// Whose a download is ([`attribute`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attribution {
    /// Started in `tab` of `session`, or in a tab that `tab` (the nearest
    /// of the session's tabs up the opener chain) opened.
    Agent { session: SessionKey, tab: TabId },
    /// Started in a tab no session owns, none of whose openers a session owns.
    Person,
    /// No tab known; these sessions show its origin (never empty).
    Unknown { sessions: Vec<SessionKey>, tab: TabId },
}

/// Decides whose the download `p` describes is (see the module docs);
/// `owner` is the bridge's registry.
pub fn attribute(p: &Provenance, owner: impl Fn(TabId) -> Owner) -> Attribution {
    if let Some(tab) = p.tab {
        let openers = || p.openers.iter().copied().take(MAX_OPENERS);
        for t in std::iter::once(tab).chain(openers()) {
            if let Owner::Session(session) = owner(t) {
                // The session's tab nearest up the chain decides: a tab that
                // only downloads closes as the download starts.
                let tab = openers().find(|o| owner(*o) == Owner::Session(session)).unwrap_or(tab);
                return Attribution::Agent { session, tab };
            }
        }
        return Attribution::Person;
    }
    let mut sessions: Vec<(SessionKey, TabId)> = Vec::new();
    for &t in &p.tabs_at_origin {
        if let Owner::Session(s) = owner(t)
            && !sessions.iter().any(|(k, _)| *k == s)
        {
            sessions.push((s, t));
        }
    }
    match sessions.first() {
        None => Attribution::Person,
        Some(&(_, tab)) => Attribution::Unknown { sessions: sessions.into_iter().map(|(s, _)| s).collect(), tab },
    }
}

/// The origin a download came from: a `blob:`/`filesystem:` URL's inner
/// http(s) origin, else its referrer's when that is http(s), else, for an
/// http(s) URL with no referrer, `None` (nothing says which page asked).
/// `origin_of` is the caller's URL parser (`scheme://host:port` of an
/// http(s) URL, empty otherwise).
pub fn download_origin(url: &str, referrer: &str, origin_of: impl Fn(&str) -> String) -> Option<String> {
    let lower = url.get(..11).unwrap_or(url).to_ascii_lowercase();
    let inner = if lower.starts_with("blob:") {
        Some(&url[5..])
    } else if lower.starts_with("filesystem:") {
        Some(&url[11..])
    } else {
        None
    };
    if let Some(inner) = inner {
        let o = origin_of(inner);
        if !o.is_empty() {
            return Some(o);
        }
    }
    let o = origin_of(referrer);
    (!o.is_empty()).then_some(o)
}

/// The state a download is listed in after Chromium interrupted it with
/// `reason` (`chrome.downloads.InterruptReason`).
pub fn interrupted_state(reason: &str) -> DownloadState {
    match reason {
        "USER_CANCELED" | "USER_SHUTDOWN" => DownloadState::Cancelled,
        "FILE_BLOCKED" | "FILE_VIRUS_INFECTED" | "FILE_SECURITY_CHECK_FAILED" | "SERVER_FORBIDDEN" => {
            DownloadState::BlockedByBrowser
        }
        "FILE_TOO_LARGE" => DownloadState::TooLarge,
        _ => DownloadState::Failed,
    }
}

/// Whether a running download of `received` bytes (of `total`, when the
/// server said) is over `limit`: cancelled at once, not after it finished.
pub fn over_limit(received: u64, total: Option<u64>, limit: u64) -> bool {
    received > limit || total.is_some_and(|t| t > limit)
}

/// The `chrome.contentSettings` pattern that matches exactly the origin
/// `scheme://host:port` (as `crate::url::Origin` writes it) — where the
/// extension lets an agent tab's page download several files without the
/// browser asking (`extension/worker/src/autodownloads.rs`); `None` for
/// anything but http(s).
pub fn automatic_downloads_pattern(origin: &str) -> Option<String> {
    let (scheme, rest) = origin.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.is_empty() || rest.contains(['/', '*', '?', '#', ' ']) {
        return None;
    }
    Some(format!("{scheme}://{rest}/*"))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const A: SessionKey = SessionKey(1);
    const B: SessionKey = SessionKey(2);

    fn owners() -> impl Fn(TabId) -> Owner {
        let map: HashMap<TabId, SessionKey> = [(10, A), (11, A), (20, B)].into_iter().collect();
        move |t| map.get(&t).map_or(Owner::Person, |s| Owner::Session(*s))
    }

    fn p(tab: Option<TabId>, openers: &[TabId], origin: Option<&str>, at: &[TabId]) -> Provenance {
        Provenance { tab, openers: openers.to_vec(), origin: origin.map(str::to_string), tabs_at_origin: at.to_vec() }
    }

    #[test]
    fn attribution_table() {
        let agent = |s, tab| Attribution::Agent { session: s, tab };
        let unknown = |s: &[SessionKey], tab| Attribution::Unknown { sessions: s.to_vec(), tab };
        let cases: Vec<(&str, Provenance, Attribution)> = vec![
            ("plain link in an agent tab", p(Some(10), &[], Some("http://a:80"), &[10]), agent(A, 10)),
            ("plain link in the person's tab", p(Some(5), &[], Some("http://a:80"), &[5]), Attribution::Person),
            (
                "the person's tab wins over an agent tab at the same origin",
                p(Some(5), &[], Some("http://a:80"), &[5, 10]),
                Attribution::Person,
            ),
            ("a new tab an agent tab opened", p(Some(30), &[10], None, &[]), agent(A, 10)),
            ("a new tab already adopted", p(Some(11), &[10], None, &[]), agent(A, 10)),
            ("opened by a tab an agent tab opened", p(Some(31), &[30, 20], None, &[]), agent(B, 20)),
            ("opened by the person's tab", p(Some(31), &[5], None, &[]), Attribution::Person),
            ("blob: with an agent tab at its origin", p(None, &[], Some("http://a:80"), &[5, 10]), unknown(&[A], 10)),
            (
                "blob: with two sessions at its origin",
                p(None, &[], Some("http://a:80"), &[20, 5, 10, 11]),
                unknown(&[B, A], 20),
            ),
            ("blob: at an origin only the person shows", p(None, &[], Some("http://p:80"), &[5]), Attribution::Person),
            ("data: without referrer, agents have tabs", p(None, &[], None, &[5, 11]), unknown(&[A], 11)),
            ("data: without referrer, no agent tab open", p(None, &[], None, &[5, 6]), Attribution::Person),
            ("nothing at all open", p(None, &[], None, &[]), Attribution::Person),
        ];
        for (name, prov, want) in cases {
            assert_eq!(attribute(&prov, owners()), want, "{name}");
        }
    }

    #[test]
    fn a_long_opener_chain_is_cut() {
        let mut chain: Vec<TabId> = (100..100 + MAX_OPENERS as TabId).collect();
        chain.push(10);
        assert_eq!(attribute(&p(Some(99), &chain, None, &[]), owners()), Attribution::Person);
        chain.insert(0, 10);
        assert_eq!(attribute(&p(Some(99), &chain, None, &[]), owners()), Attribution::Agent { session: A, tab: 10 });
    }

    #[test]
    fn download_origins() {
        let cases = [
            ("blob:http://a:81/uuid", "", Some("http://a:81")),
            ("BLOB:https://a/uuid", "http://other/", Some("https://a:443")),
            ("filesystem:http://a/temporary/x", "", Some("http://a:80")),
            ("blob:null/uuid", "http://r:8/page", Some("http://r:8")),
            ("data:text/plain,hi", "http://r/page", Some("http://r:80")),
            ("data:text/plain,hi", "", None),
            ("http://files/x.sh", "", None),
            ("http://files/x.sh", "https://page/", Some("https://page:443")),
            ("http://files/x.sh", "chrome://newtab/", None),
        ];
        for (url, referrer, want) in cases {
            assert_eq!(
                download_origin(url, referrer, crate::url::Origin::wire).as_deref(),
                want,
                "{url} from {referrer}"
            );
        }
    }

    #[test]
    fn content_settings_patterns_match_one_origin() {
        let cases = [
            ("http://127.0.0.1:8080", Some("http://127.0.0.1:8080/*")),
            ("https://shop.example:443", Some("https://shop.example:443/*")),
            ("https://[::1]:443", Some("https://[::1]:443/*")),
            ("", None),
            ("file:///etc", None),
            ("chrome-extension://abc", None),
            ("http://*.example:80", None),
            ("http://", None),
        ];
        for (origin, want) in cases {
            assert_eq!(automatic_downloads_pattern(origin).as_deref(), want, "{origin}");
        }
    }

    #[test]
    fn interrupt_reasons_and_limits() {
        assert_eq!(interrupted_state("USER_CANCELED"), DownloadState::Cancelled);
        assert_eq!(interrupted_state("FILE_BLOCKED"), DownloadState::BlockedByBrowser);
        assert_eq!(interrupted_state("FILE_TOO_LARGE"), DownloadState::TooLarge);
        assert_eq!(interrupted_state("NETWORK_FAILED"), DownloadState::Failed);
        assert_eq!(interrupted_state("anything"), DownloadState::Failed);
        assert!(!over_limit(10, Some(10), 10));
        assert!(over_limit(11, None, 10));
        assert!(over_limit(0, Some(11), 10), "a declared size over the limit is refused at once");
        assert!(!over_limit(5, None, 10));
    }
}
