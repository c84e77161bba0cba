//! Network capture (issue 33): the requests of each session's tabs, kept
//! in this daemon's memory only, and the tools that show them.
//!
//! - The worker reports every finished request of an agent tab
//!   (`ExtToBridge::Network`); [`captured`] files it under the session
//!   that owns the tab now (a tab of the person, or one no session owns,
//!   is dropped). Each session keeps at most
//!   `shared::network::MAX_REQUESTS_PER_SESSION` requests and
//!   `MAX_BYTES_PER_SESSION` bytes; the oldest go first and are counted
//!   (`dropped`). A session's capture goes when the session ends.
//! - Ids are unique in the daemon, so another session's id is `NOT_FOUND`
//!   like one that never was.
//! - Nothing is written to disk except by `browser_network_export`, into
//!   `HOME/exports/` (0700; files 0600, written under a temporary name and
//!   renamed, so a link planted there is replaced, never followed).
//! - What is the person's is never kept whole (`shared::withhold`): a
//!   request reported while its tab is handed to the person is dropped,
//!   and none of a handed tab's requests is listed, read or exported
//!   while it is handed; a request from a page where a sensitive field was
//!   filled is kept without its parts (the worker strips it; a late
//!   report of the fill strips what was kept of that page here, [`withhold`]).
//! - Every output goes through `shared::redact::redact_captured` with the
//!   person's stored secrets as known values (`{secret:NAME}`); URL
//!   filters match the redacted URL, so a filter cannot probe a hidden
//!   value. `reveal` shows values unredacted only when the daemon was
//!   started with `--allow-reveal`, and each reveal is audited (id and
//!   part, never a value).

mod har;
mod tools;

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use shared::network::{Captured, MAX_BYTES_PER_SESSION, MAX_REQUESTS_PER_SESSION, MAX_WS_MESSAGES, WsMessage};
use shared::sessions::{Owner, SessionKey};
use shared::tab::TabId;
use shared::withhold::{Withheld, without_parts};

use super::AppState;

pub(crate) use tools::{dispatch, known, tools, write_private};

/// One kept request.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) id: u64,
    pub(crate) captured: Captured,
    /// Only the request's line was kept, and why.
    pub(crate) withheld: Option<Withheld>,
    weight: usize,
}

#[derive(Default)]
struct SessionCapture {
    entries: VecDeque<Entry>,
    bytes: usize,
    dropped: u64,
}

/// Every session's capture.
#[derive(Default)]
pub(crate) struct Network {
    sessions: Mutex<HashMap<SessionKey, SessionCapture>>,
    next_id: AtomicU64,
}

impl Network {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionKey, SessionCapture>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `c` for `session`, dropping its oldest requests past the bounds.
    pub(crate) fn push(&self, session: SessionKey, c: Captured, withheld: Option<Withheld>) -> u64 {
        self.push_bounded(session, c, withheld, MAX_REQUESTS_PER_SESSION, MAX_BYTES_PER_SESSION)
    }

    fn push_bounded(
        &self,
        session: SessionKey,
        c: Captured,
        withheld: Option<Withheld>,
        max_requests: usize,
        max_bytes: usize,
    ) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        // Whatever the worker sent, a withheld request keeps only its line.
        let c = if withheld.is_some() { without_parts(&c) } else { c };
        let weight = c.weight();
        let mut all = self.lock();
        let s = all.entry(session).or_default();
        s.entries.push_back(Entry { id, captured: c, withheld, weight });
        s.bytes += weight;
        while s.entries.len() > max_requests || (s.bytes > max_bytes && s.entries.len() > 1) {
            if let Some(old) = s.entries.pop_front() {
                s.bytes -= old.weight;
                s.dropped += 1;
            }
        }
        id
    }

    /// Adds `messages` to the newest WebSocket request of `session` on
    /// `tab` at `url`, or to a new one; at most `MAX_WS_MESSAGES` a
    /// socket (the rest counted in the socket's `_droppedMessages`, never
    /// kept).
    pub(crate) fn add_frames(&self, session: SessionKey, tab: TabId, url: &str, messages: Vec<WsMessage>) {
        let mut all = self.lock();
        let s = all.entry(session).or_default();
        let found = s
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.captured.tab == tab && e.captured.resource_type == "websocket" && e.captured.url == url);
        // A socket of a withheld page keeps no message.
        if found.as_ref().is_some_and(|e| e.withheld.is_some()) {
            return;
        }
        let entry = match found {
            Some(e) => e,
            None => {
                let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
                let c = Captured {
                    tab,
                    url: url.to_string(),
                    method: "GET".into(),
                    resource_type: "websocket".into(),
                    status: 101,
                    status_line: String::new(),
                    error: None,
                    started_ms: messages.first().map_or(0.0, |m| m.time * 1000.0),
                    duration_ms: 0.0,
                    request_headers: Vec::new(),
                    response_headers: Vec::new(),
                    request_body: None,
                    redirect_url: None,
                    from_cache: false,
                    response_body: None,
                    websocket_messages: Vec::new(),
                };
                let weight = c.weight();
                s.bytes += weight;
                s.entries.push_back(Entry { id, captured: c, withheld: None, weight });
                s.entries.back_mut().expect("just pushed")
            }
        };
        let room = MAX_WS_MESSAGES.saturating_sub(entry.captured.websocket_messages.len());
        let mut added = 0;
        for m in messages.into_iter().take(room) {
            added += m.data.len() + 24;
            entry.captured.websocket_messages.push(m);
        }
        entry.weight += added;
        s.bytes += added;
        while s.bytes > MAX_BYTES_PER_SESSION && s.entries.len() > 1 {
            if let Some(old) = s.entries.pop_front() {
                s.bytes -= old.weight;
                s.dropped += 1;
            }
        }
    }

    /// `session`'s requests (oldest first) and how many were dropped.
    pub(crate) fn of(&self, session: SessionKey) -> (Vec<Entry>, u64) {
        self.lock().get(&session).map_or((Vec::new(), 0), |s| (s.entries.iter().cloned().collect(), s.dropped))
    }

    /// Request `id`, if `session` has it.
    pub(crate) fn get(&self, session: SessionKey, id: u64) -> Option<Entry> {
        self.lock().get(&session).and_then(|s| s.entries.iter().find(|e| e.id == id).cloned())
    }

    /// Keeps only the line of every request of `tab` that started at or
    /// after `since_ms` (`shared::withhold`), in every session; how many.
    pub(crate) fn strip_since(&self, tab: TabId, since_ms: f64, why: Withheld) -> usize {
        let mut all = self.lock();
        let mut n = 0;
        for s in all.values_mut() {
            for e in s.entries.iter_mut().filter(|e| e.captured.tab == tab && e.captured.started_ms >= since_ms) {
                if e.withheld.is_none() {
                    e.captured = without_parts(&e.captured);
                    s.bytes -= e.weight;
                    e.weight = e.captured.weight();
                    s.bytes += e.weight;
                    e.withheld = Some(why);
                    n += 1;
                }
            }
        }
        n
    }

    /// Forgets everything `session` captured.
    pub(crate) fn end(&self, session: SessionKey) {
        self.lock().remove(&session);
    }
}

/// The tabs handed to the person now: theirs for the network tools too.
pub(crate) fn handed_tabs(state: &AppState) -> Vec<TabId> {
    state.hub().waiting().iter().map(|w| w.tab).collect()
}

/// `caller`'s requests that the network tools may show now (oldest
/// first) and how many were dropped: none of a tab handed to the person.
pub(crate) fn visible(state: &AppState, session: SessionKey) -> (Vec<Entry>, u64) {
    let handed = handed_tabs(state);
    let (mut entries, dropped) = state.inner.network.of(session);
    entries.retain(|e| !handed.contains(&e.captured.tab));
    (entries, dropped)
}

/// A request the worker reported: kept for the session owning its tab,
/// unless the tab is handed to the person now.
pub(crate) fn captured(state: &AppState, c: Captured, withheld: Option<Withheld>) {
    if handed_tabs(state).contains(&c.tab) {
        tracing::debug!(tab = c.tab, "network capture of a handed tab dropped");
        return;
    }
    let owner = state.registry().owner(c.tab);
    match owner {
        Owner::Session(key) => {
            state.inner.network.push(key, c, withheld);
        }
        Owner::Person => tracing::debug!(tab = c.tab, "network capture of a tab no session owns dropped"),
    }
}

/// A sensitive field of tab `tab`'s page was filled: what was kept of the
/// page's requests keeps only their lines.
pub(crate) fn withhold(state: &AppState, tab: TabId, since_ms: f64) {
    let n = state.inner.network.strip_since(tab, since_ms, Withheld::SensitiveField);
    tracing::info!(tab, stripped = n, "a sensitive field was filled: the page's requests withheld");
}

/// WebSocket messages the worker reported: kept for the session owning
/// the tab.
pub(crate) fn frames(state: &AppState, tab: TabId, url: String, messages: Vec<WsMessage>) {
    if handed_tabs(state).contains(&tab) {
        return;
    }
    match state.registry().owner(tab) {
        Owner::Session(key) => state.inner.network.add_frames(key, tab, &url, messages),
        Owner::Person => tracing::debug!(tab, "WebSocket messages of a tab no session owns dropped"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(tab: i64, url: &str) -> Captured {
        Captured {
            tab,
            url: url.into(),
            method: "GET".into(),
            resource_type: "xmlhttprequest".into(),
            status: 200,
            status_line: String::new(),
            error: None,
            started_ms: 0.0,
            duration_ms: 1.0,
            request_headers: vec![],
            response_headers: vec![],
            request_body: None,
            redirect_url: None,
            from_cache: false,
            response_body: None,
            websocket_messages: Vec::new(),
        }
    }

    #[test]
    fn each_session_keeps_its_own_requests_and_ids_are_not_shared() {
        let n = Network::default();
        let a = n.push(SessionKey(1), cap(1, "http://a/1"), None);
        let b = n.push(SessionKey(2), cap(2, "http://b/1"), None);
        assert_ne!(a, b);
        assert!(n.get(SessionKey(1), a).is_some());
        assert!(n.get(SessionKey(2), a).is_none(), "another session's id is not found");
        assert_eq!(n.of(SessionKey(2)).0.len(), 1);
        n.end(SessionKey(1));
        assert!(n.get(SessionKey(1), a).is_none(), "gone with the session");
        assert!(n.of(SessionKey(1)).0.is_empty());
    }

    #[test]
    fn websocket_messages_join_their_socket_and_are_bounded() {
        let n = Network::default();
        let msg = |i: usize| WsMessage { sent: i.is_multiple_of(2), time: 1.0, opcode: 1, data: format!("m{i}") };
        let mut sock = cap(1, "ws://a/echo");
        sock.resource_type = "websocket".into();
        let id = n.push(SessionKey(1), sock, None);
        n.add_frames(SessionKey(1), 1, "ws://a/echo", (0..3).map(msg).collect());
        n.add_frames(SessionKey(1), 1, "ws://a/echo", (3..MAX_WS_MESSAGES + 10).map(msg).collect());
        let e = n.get(SessionKey(1), id).unwrap();
        assert_eq!(e.captured.websocket_messages.len(), MAX_WS_MESSAGES);
        assert_eq!(e.captured.websocket_messages[3].data, "m3");
        // No handshake seen: a socket request is made for them.
        n.add_frames(SessionKey(1), 2, "ws://a/other", vec![msg(0)]);
        let (all, _) = n.of(SessionKey(1));
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].captured.resource_type, "websocket");
        assert_eq!(all[1].captured.websocket_messages.len(), 1);
        assert!(n.of(SessionKey(2)).0.is_empty(), "another session has none");
    }

    #[test]
    fn the_oldest_requests_go_first_and_are_counted() {
        let n = Network::default();
        for i in 0..10 {
            n.push_bounded(SessionKey(1), cap(1, &format!("http://a/{i}")), None, 4, usize::MAX);
        }
        let (kept, dropped) = n.of(SessionKey(1));
        assert_eq!(dropped, 6);
        assert_eq!(
            kept.iter().map(|e| e.captured.url.as_str()).collect::<Vec<_>>(),
            ["http://a/6", "http://a/7", "http://a/8", "http://a/9"]
        );
        // The byte bound too.
        let m = Network::default();
        let w = cap(1, "http://a/0").weight();
        for i in 0..10 {
            m.push_bounded(SessionKey(1), cap(1, &format!("http://a/{i}")), None, 100, w * 3);
        }
        assert_eq!(m.of(SessionKey(1)).0.len(), 3);
        assert_eq!(m.of(SessionKey(1)).1, 7);
    }

    #[test]
    fn a_late_fill_report_strips_what_was_kept_of_that_page() {
        let n = Network::default();
        let mut before = cap(1, "http://a/before?q=1");
        before.started_ms = 50.0;
        let mut post = cap(1, "http://a/login?pw=Hunter2-77");
        post.started_ms = 120.0;
        post.request_body = Some(shared::network::RequestBody::Raw { text: "pw=Hunter2-77".into(), cut: false });
        let mut other_tab = cap(2, "http://a/x?pw=Hunter2-77");
        other_tab.started_ms = 130.0;
        let b = n.push(SessionKey(1), before, None);
        let p = n.push(SessionKey(1), post, None);
        let o = n.push(SessionKey(1), other_tab, None);
        assert_eq!(n.strip_since(1, 100.0, Withheld::SensitiveField), 1);
        let p = n.get(SessionKey(1), p).unwrap();
        assert_eq!(p.withheld, Some(Withheld::SensitiveField));
        assert!(!format!("{:?}", p.captured).contains("Hunter2"), "{:?}", p.captured);
        assert!(n.get(SessionKey(1), b).unwrap().withheld.is_none(), "a request before the page began stays");
        assert!(n.get(SessionKey(1), o).unwrap().withheld.is_none(), "another tab stays");
        // A withheld request stays withheld whatever is sent later.
        let mut again = cap(1, "http://a/again?pw=Hunter2-77");
        again.request_body = Some(shared::network::RequestBody::Raw { text: "Hunter2-77".into(), cut: false });
        let a = n.push(SessionKey(1), again, Some(Withheld::SensitiveField));
        assert!(!format!("{:?}", n.get(SessionKey(1), a).unwrap().captured).contains("Hunter2"));
    }
}
