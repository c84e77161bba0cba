//! What of an agent tab's network capture is the person's (issue 47).
//!
//! The network tools show an agent what its tabs sent. Two things a tab
//! sends are never the agent's to read, whatever a redaction rule would
//! make of them:
//!
//! - **A handed tab's traffic.** While a tab waits for the person (a
//!   login, a CAPTCHA, "Take over"), the tab is theirs for every tool
//!   (`crate::handoff::check_handed`), the network tools included. A
//!   request that *starts* while the tab is handed is not followed at all
//!   (the worker never copies it); one that reaches the bridge while the
//!   tab is handed is dropped; none of the tab's requests is listed, read
//!   or exported while it is handed ([`Withheld::Handed`]).
//! - **What a page sends after a sensitive field in it was filled.** A
//!   password, card number, one-time code, or a field the agent typed a
//!   stored secret into: the page may send it on under any name, in any
//!   spelling, split, encrypted. Key-name and value redaction are a
//!   backstop; the rule is that such a request is *listed without its
//!   parts* ([`without_parts`]): method, scheme, host, port and path,
//!   type, status and timing stay; the query, the headers, the bodies and
//!   a socket's messages are never kept ([`Withheld::SensitiveField`]).
//!   The content script reports the first filled sensitive field of its
//!   document with when the value came ([`ContentReport`]); from then until
//!   the tab's next document loads, the tab's requests are tainted
//!   ([`Windows`]). The worker strips what it sends; the bridge
//!   strips, again and retroactively, what it already kept of that window
//!   (the report may arrive after a fast request).
//!
//! Both sides call the pure rules here.

use serde::{Deserialize, Serialize};

use crate::network::Captured;

/// Why a request's parts were not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Withheld {
    /// The tab was the person's (a hand-off) when the request was made.
    Handed,
    /// A sensitive field of the page that sent it had been filled.
    SensitiveField,
}

impl Withheld {
    /// What the tools say of a request whose parts were withheld.
    pub fn says(self) -> &'static str {
        match self {
            Withheld::Handed => "parts withheld: the tab was handed to the person",
            Withheld::SensitiveField => {
                "parts withheld: a password, card, code or secret field of the page that sent it was filled"
            }
        }
    }
}

/// What a content script reports to the worker about its document
/// (`chrome.runtime.sendMessage`, from the top frame only). Unknown types
/// and fields are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ContentReport {
    /// A sensitive field of this document holds a value (the person typed
    /// it, the page or autofill set it, or the agent typed a secret).
    /// `since_ms`: when the value came, or the document's start
    /// (`performance.timeOrigin`) when it was there before the script; ms
    /// since the epoch, the clock of `webRequest`'s `timeStamp`.
    SensitiveFilled { since_ms: f64 },
}

/// Most tainted windows kept a tab (the oldest go first).
pub const MAX_WINDOWS: usize = 16;

/// The spans of one tab's time during which its requests are tainted:
/// each from a document's start, open until the tab's next document
/// loads ([`Windows::close`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Windows {
    spans: Vec<(f64, Option<f64>)>,
}

impl Windows {
    /// A document that began at `from_ms` had a sensitive field filled.
    /// An open window that began later is widened to `from_ms`; one that
    /// began earlier already covers it.
    pub fn open(&mut self, from_ms: f64) {
        if let Some(open) = self.spans.iter_mut().find(|s| s.1.is_none()) {
            open.0 = open.0.min(from_ms);
            return;
        }
        self.spans.push((from_ms, None));
        if self.spans.len() > MAX_WINDOWS {
            self.spans.remove(0);
        }
    }

    /// The tab loaded another document at `at_ms`: the open window ends there.
    pub fn close(&mut self, at_ms: f64) {
        for s in self.spans.iter_mut().filter(|s| s.1.is_none()) {
            s.1 = Some(at_ms.max(s.0));
        }
    }

    /// Whether a request that started at `started_ms` is tainted.
    pub fn covers(&self, started_ms: f64) -> bool {
        self.spans.iter().any(|&(from, until)| started_ms >= from && until.is_none_or(|u| started_ms < u))
    }

    /// Whether a window is open now.
    pub fn is_open(&self) -> bool {
        self.spans.iter().any(|s| s.1.is_none())
    }
}

/// `url` without its query and fragment (and without userinfo): what a
/// withheld request still shows of where it went.
pub fn path_only(url: &str) -> String {
    let cut = url.find(['?', '#']).unwrap_or(url.len());
    let base = &url[..cut];
    // Userinfo (`https://user:pw@host/…`) is a credential too.
    match base.split_once("://") {
        Some((scheme, rest)) => {
            let auth_end = rest.find('/').unwrap_or(rest.len());
            let (auth, path) = rest.split_at(auth_end);
            let host = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => base.to_string(),
    }
}

/// `c` with only what a withheld request shows: method, [`path_only`] of
/// its URL (and of a redirect's target), type, status, timing and whether
/// it came from the cache. Headers, bodies, messages, the status line and
/// the error text are gone.
pub fn without_parts(c: &Captured) -> Captured {
    Captured {
        tab: c.tab,
        url: path_only(&c.url),
        method: c.method.clone(),
        resource_type: c.resource_type.clone(),
        status: c.status,
        status_line: String::new(),
        error: c.error.as_ref().map(|_| "the request failed".to_string()),
        started_ms: c.started_ms,
        duration_ms: c.duration_ms,
        request_headers: Vec::new(),
        response_headers: Vec::new(),
        request_body: None,
        redirect_url: c.redirect_url.as_deref().map(path_only),
        from_cache: c.from_cache,
        response_body: None,
        websocket_messages: Vec::new(),
    }
}

/// Whether a finished top-frame request of `status` with `response_headers`
/// replaced the tab's document (so the tab's open window ends): a 2xx
/// other than 204/205 that is not a download (`Content-Disposition:
/// attachment`). A redirect, an error, a 204 or a download leaves the page
/// that sent it in place.
pub fn replaces_document(status: u16, response_headers: &[crate::network::Header]) -> bool {
    let download = response_headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("content-disposition")
            && h.value.trim_start().to_ascii_lowercase().starts_with("attachment")
    });
    (200..300).contains(&status) && status != 204 && status != 205 && !download
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{Header, RequestBody};

    #[test]
    fn windows_cover_a_document_until_the_next_loads() {
        struct Case {
            name: &'static str,
            steps: &'static [(&'static str, f64)],
            tainted: &'static [f64],
            clean: &'static [f64],
        }
        let cases = [
            Case { name: "nothing filled", steps: &[], tainted: &[], clean: &[0.0, 100.0] },
            Case {
                name: "open from the document's start, before the report",
                steps: &[("open", 100.0)],
                tainted: &[100.0, 150.0, 1e12],
                clean: &[99.0],
            },
            Case {
                name: "the login post is tainted, the next page is not",
                steps: &[("open", 100.0), ("close", 300.0)],
                tainted: &[100.0, 299.0],
                clean: &[99.0, 300.0, 400.0],
            },
            Case {
                name: "a second fill widens the open window, never narrows it",
                steps: &[("open", 100.0), ("open", 200.0), ("open", 50.0)],
                tainted: &[50.0, 150.0, 250.0],
                clean: &[49.0],
            },
            Case {
                name: "two documents, two windows",
                steps: &[("open", 100.0), ("close", 200.0), ("open", 300.0), ("close", 400.0)],
                tainted: &[150.0, 350.0],
                clean: &[250.0, 450.0],
            },
            Case {
                name: "a close with no window open is nothing",
                steps: &[("close", 100.0), ("open", 200.0)],
                tainted: &[250.0],
                clean: &[150.0],
            },
        ];
        for c in cases {
            let mut w = Windows::default();
            for (op, t) in c.steps {
                match *op {
                    "open" => w.open(*t),
                    _ => w.close(*t),
                }
            }
            for t in c.tainted {
                assert!(w.covers(*t), "{}: {t} should be tainted", c.name);
            }
            for t in c.clean {
                assert!(!w.covers(*t), "{}: {t} should be clean", c.name);
            }
        }
    }

    #[test]
    fn windows_are_bounded_oldest_first() {
        let mut w = Windows::default();
        for i in 0..(MAX_WINDOWS as u32 + 4) {
            w.open(f64::from(i) * 10.0);
            w.close(f64::from(i) * 10.0 + 5.0);
        }
        assert_eq!(w.spans.len(), MAX_WINDOWS);
        assert!(!w.covers(1.0), "the oldest window went first");
        assert!(w.covers(f64::from(MAX_WINDOWS as u32 + 3) * 10.0 + 1.0));
    }

    #[test]
    fn path_only_keeps_where_not_what() {
        let cases = [
            ("https://a.test/login?pw=Hunter2#x", "https://a.test/login"),
            ("https://u:secret@a.test:8443/p/q?x=1", "https://a.test:8443/p/q"),
            ("http://127.0.0.1:9/", "http://127.0.0.1:9/"),
            ("https://a.test", "https://a.test"),
            ("https://a.test#frag?x", "https://a.test"),
            ("not a url?pw=1", "not a url"),
        ];
        for (url, want) in cases {
            assert_eq!(path_only(url), want, "{url}");
        }
    }

    #[test]
    fn without_parts_keeps_no_value() {
        let c = Captured {
            tab: 3,
            url: "https://a.test/login?pw=Hunter2-77".into(),
            method: "POST".into(),
            resource_type: "main_frame".into(),
            status: 302,
            status_line: "HTTP/1.1 302 Hunter2-77".into(),
            error: Some("net::ERR Hunter2-77".into()),
            started_ms: 1.0,
            duration_ms: 2.0,
            request_headers: vec![Header { name: "X-Pw".into(), value: "Hunter2-77".into() }],
            response_headers: vec![Header { name: "Location".into(), value: "/?pw=Hunter2-77".into() }],
            request_body: Some(RequestBody::Form { fields: vec![("pw".into(), vec!["Hunter2-77".into()])] }),
            redirect_url: Some("https://a.test/home?echo=Hunter2-77".into()),
            from_cache: false,
            response_body: None,
            websocket_messages: Vec::new(),
        };
        let w = without_parts(&c);
        let all = format!("{w:?}");
        assert!(!all.contains("Hunter2"), "{all}");
        assert_eq!(w.url, "https://a.test/login");
        assert_eq!(w.redirect_url.as_deref(), Some("https://a.test/home"));
        assert_eq!((w.method.as_str(), w.status, w.tab), ("POST", 302, 3));
    }

    #[test]
    fn a_document_is_replaced_only_by_a_page() {
        let attach = [Header { name: "Content-Disposition".into(), value: " Attachment; filename=a.sh".into() }];
        let inline = [Header { name: "content-disposition".into(), value: "inline".into() }];
        let cases: [(u16, &[Header], bool); 7] = [
            (200, &[], true),
            (200, &inline, true),
            (200, &attach, false),
            (204, &[], false),
            (205, &[], false),
            (302, &[], false),
            (0, &[], false),
        ];
        for (status, headers, want) in cases {
            assert_eq!(replaces_document(status, headers), want, "{status} {headers:?}");
        }
    }

    #[test]
    fn reports_are_exact() {
        let r: ContentReport = serde_json::from_str(r#"{"type":"sensitive_filled","since_ms":12.5}"#).unwrap();
        assert_eq!(r, ContentReport::SensitiveFilled { since_ms: 12.5 });
        assert!(serde_json::from_str::<ContentReport>(r#"{"type":"sensitive_filled","since_ms":1,"x":1}"#).is_err());
        assert!(serde_json::from_str::<ContentReport>(r#"{"type":"recorded","since_ms":1}"#).is_err());
    }
}
