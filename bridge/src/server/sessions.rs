//! Which MCP session owns which tab (the rules: `shared::sessions`).
//!
//! rmcp builds one [`McpServer`](super::mcp::McpServer) per session; each
//! holds a [`SessionHandle`] with a fresh [`SessionKey`]. The session is
//! registered here on its first message (`initialize` done, or a tool call)
//! with its client's label, and ended when rmcp drops the handler: the
//! client sent `DELETE /mcp`, the stdio proxy saw end of input (it sends the
//! `DELETE`), the session sat idle past rmcp's keep-alive, or the bridge
//! shuts down. Ending releases its tabs to the person (open, ungrouped) and
//! forgets the bridge's per-tab memory of them.
//!
//! Every change is pushed to the extension as `BridgeToExt::Sessions` (tab
//! groups, the popup's agent list).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};

use shared::protocol::TabId;
use shared::sessions::{GiveRefused, Owner, SessionInfo, SessionKey};

use super::AppState;

/// One session's tabs and its current one.
#[derive(Debug, Default, Clone)]
pub(crate) struct SessionTabs {
    /// [`shared::sessions::client_label`] of its `clientInfo.name`.
    pub(crate) client: String,
    /// The audit's short form of its `Mcp-Session-Id` (`mcp:0b5c2f9e`).
    pub(crate) short: String,
    pub(crate) tabs: Vec<TabId>,
    pub(crate) current: Option<TabId>,
}

/// Every open session and the owner of every agent tab.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    sessions: BTreeMap<SessionKey, SessionTabs>,
    owners: HashMap<TabId, SessionKey>,
}

impl Registry {
    /// Who owns `tab` ([`Owner::Person`] unless a session does).
    pub(crate) fn owner(&self, tab: TabId) -> Owner {
        self.owners.get(&tab).map_or(Owner::Person, |s| Owner::Session(*s))
    }

    /// Whether `me` may see `tab` (`shared::sessions::sees`).
    pub(crate) fn sees(&self, me: SessionKey, tab: TabId) -> bool {
        shared::sessions::sees(self.owner(tab), me)
    }

    /// The session owning `tab` and its entry, if any.
    pub(crate) fn owner_of(&self, tab: TabId) -> Option<(SessionKey, SessionTabs)> {
        let key = *self.owners.get(&tab)?;
        self.sessions.get(&key).map(|s| (key, s.clone()))
    }

    /// Whether any session owns `tab`.
    pub(crate) fn is_agent_tab(&self, tab: TabId) -> bool {
        self.owners.contains_key(&tab)
    }

    pub(crate) fn is_open(&self, key: SessionKey) -> bool {
        self.sessions.contains_key(&key)
    }

    /// Registers `key` (once; later calls update nothing but an unnamed
    /// client's label). Returns whether it is new.
    pub(crate) fn open(&mut self, key: SessionKey, client: &str, short: &str) -> bool {
        match self.sessions.get_mut(&key) {
            Some(s) => {
                if s.client == shared::sessions::UNNAMED_CLIENT && client != s.client {
                    s.client = client.to_string();
                }
                false
            }
            None => {
                self.sessions.insert(
                    key,
                    SessionTabs { client: client.to_string(), short: short.to_string(), ..Default::default() },
                );
                true
            }
        }
    }

    /// `me`'s tabs (empty for an unknown session).
    pub(crate) fn of(&self, me: SessionKey) -> SessionTabs {
        self.sessions.get(&me).cloned().unwrap_or_default()
    }

    /// `tab` becomes `me`'s and its current tab. Refused (false) when it is
    /// another session's or `me` is not open.
    pub(crate) fn add(&mut self, me: SessionKey, tab: TabId) -> bool {
        match self.owner(tab) {
            Owner::Session(s) if s != me => return false,
            _ => {}
        }
        let Some(s) = self.sessions.get_mut(&me) else { return false };
        if !s.tabs.contains(&tab) {
            s.tabs.push(tab);
        }
        s.current = Some(tab);
        self.owners.insert(tab, me);
        true
    }

    /// `tab` is gone (closed), whoever had it.
    pub(crate) fn remove(&mut self, tab: TabId) {
        let Some(me) = self.owners.remove(&tab) else { return };
        if let Some(s) = self.sessions.get_mut(&me) {
            s.tabs.retain(|t| *t != tab);
            if s.current == Some(tab) {
                s.current = s.tabs.last().copied();
            }
        }
    }

    /// The person gives their tab `tab` to `to` (`shared::sessions::give`).
    pub(crate) fn give(&mut self, tab: TabId, to: SessionKey) -> Result<(), GiveRefused> {
        shared::sessions::give(self.owner(tab), to, self.is_open(to))?;
        if let Some(s) = self.sessions.get_mut(&to)
            && !s.tabs.contains(&tab)
        {
            s.tabs.push(tab);
        }
        self.owners.insert(tab, to);
        Ok(())
    }

    /// Ends `key`: its tabs go back to the person; returns them.
    pub(crate) fn end(&mut self, key: SessionKey) -> Vec<TabId> {
        let Some(s) = self.sessions.remove(&key) else { return Vec::new() };
        for t in &s.tabs {
            self.owners.remove(t);
        }
        s.tabs
    }

    /// Every agent tab, in session order.
    pub(crate) fn all_tabs(&self) -> Vec<TabId> {
        self.sessions.values().flat_map(|s| s.tabs.iter().copied()).collect()
    }

    /// The current tab of the newest session that has one.
    pub(crate) fn newest_current(&self) -> Option<TabId> {
        self.sessions.values().rev().find_map(|s| s.current)
    }

    /// What the extension is told (`BridgeToExt::Sessions`).
    pub(crate) fn infos(&self) -> Vec<SessionInfo> {
        self.sessions
            .iter()
            .map(|(k, s)| SessionInfo {
                key: *k,
                client: s.client.clone(),
                colour: shared::sessions::group_colour(*k),
                tabs: s.tabs.clone(),
            })
            .collect()
    }
}

/// Hands out session keys.
#[derive(Debug, Default)]
pub(crate) struct Keys(AtomicU64);

impl Keys {
    pub(crate) fn next(&self) -> SessionKey {
        SessionKey(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// A session's key, held by its MCP handler; dropping the last clone ends
/// the session (see the module docs).
pub(crate) struct SessionHandle {
    pub(crate) key: SessionKey,
    state: AppState,
}

impl SessionHandle {
    pub(crate) fn new(state: AppState) -> Self {
        SessionHandle { key: state.inner.session_keys.next(), state }
    }
}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        self.state.end_session(self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: SessionKey = SessionKey(1);
    const B: SessionKey = SessionKey(2);
    const C: SessionKey = SessionKey(3);

    fn two_sessions() -> Registry {
        let mut r = Registry::default();
        assert!(r.open(A, "alpha", "mcp:aaaa"));
        assert!(r.open(B, "beta", "mcp:bbbb"));
        assert!(r.add(A, 10));
        assert!(r.add(A, 11));
        assert!(r.add(B, 20));
        r
    }

    #[test]
    fn each_session_sees_its_tabs_and_no_other() {
        let r = two_sessions();
        // (who, tab, sees): 30 is the person's.
        let table = [
            (A, 10, true),
            (A, 11, true),
            (A, 20, false),
            (A, 30, false),
            (B, 20, true),
            (B, 10, false),
            (B, 11, false),
            (C, 10, false),
            (C, 30, false),
        ];
        for (me, tab, want) in table {
            assert_eq!(r.sees(me, tab), want, "{me:?} tab {tab}");
        }
        assert_eq!(r.of(A).tabs, [10, 11]);
        assert_eq!(r.of(A).current, Some(11));
        assert_eq!(r.of(B).current, Some(20));
        assert_eq!(r.all_tabs(), [10, 11, 20]);
    }

    #[test]
    fn a_session_cannot_take_another_sessions_tab() {
        let mut r = two_sessions();
        assert!(!r.add(B, 10));
        assert_eq!(r.owner(10), Owner::Session(A));
        assert!(!r.of(B).tabs.contains(&10));
        assert!(!r.add(C, 31), "an unopened session gets nothing");
        assert_eq!(r.owner(31), Owner::Person);
    }

    #[test]
    fn ending_a_session_gives_its_tabs_back_to_the_person_for_good() {
        let mut r = two_sessions();
        assert_eq!(r.end(A), [10, 11]);
        assert_eq!(r.owner(10), Owner::Person);
        assert!(!r.is_agent_tab(11));
        assert!(r.end(A).is_empty(), "ending twice releases nothing");
        // A new session guessing the old ids sees nothing.
        assert!(r.open(C, "gamma", "mcp:cccc"));
        assert!(!r.sees(C, 10) && !r.sees(C, 11));
        // B keeps its own.
        assert!(r.sees(B, 20));
        assert_eq!(r.infos().iter().map(|i| i.key).collect::<Vec<_>>(), [B, C]);
    }

    #[test]
    fn the_person_gives_their_tab_to_one_live_session() {
        let mut r = two_sessions();
        assert_eq!(r.give(30, B), Ok(()));
        assert!(r.sees(B, 30) && !r.sees(A, 30));
        assert_eq!(r.give(30, A), Err(GiveRefused::AnotherAgents));
        assert_eq!(r.give(10, B), Err(GiveRefused::AnotherAgents));
        assert_eq!(r.give(31, C), Err(GiveRefused::SessionGone));
        // A given tab is not the current one until the agent selects it.
        assert_eq!(r.of(B).current, Some(20));
        assert_eq!(r.end(B), [20, 30]);
        assert_eq!(r.owner(30), Owner::Person);
    }

    #[test]
    fn closing_a_tab_moves_the_current_one_back() {
        let mut r = two_sessions();
        r.remove(11);
        assert_eq!(r.of(A).tabs, [10]);
        assert_eq!(r.of(A).current, Some(10));
        r.remove(10);
        assert_eq!(r.of(A).current, None);
        r.remove(999);
        assert_eq!(r.owner(20), Owner::Session(B));
    }

    #[test]
    fn a_nameless_client_may_name_itself_later_but_a_name_sticks() {
        let mut r = Registry::default();
        assert!(r.open(A, shared::sessions::UNNAMED_CLIENT, "mcp"));
        assert!(!r.open(A, "late", "mcp"));
        assert_eq!(r.of(A).client, "late");
        assert!(!r.open(A, "other", "mcp"));
        assert_eq!(r.of(A).client, "late");
    }
}
