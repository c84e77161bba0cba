//! MCP sessions and their tabs as data and pure rules.
//!
//! Every MCP session (one `Mcp-Session-Id`, whether the client speaks HTTP
//! or goes through the `chaperone mcp` stdio proxy) is its own agent. A tab
//! has one [`Owner`]: the person (every tab no session opened, every tab a
//! session released) or one session. [`sees`] is the one rule for which
//! tabs a session may list, read, act on, close or wait on: only its own.
//! Every other tab does not exist for it — the bridge answers `NOT_FOUND`
//! with [`no_such_tab`], the same words the extension uses for a tab id that
//! is not open at all, so a session cannot tell another agent's tab (or the
//! person's) from a closed one.
//!
//! A session gets a tab in two ways only: it opens it, or the person gives
//! it one of their own tabs from the popup ([`give`]). When a session ends
//! its tabs go back to the person ([`Owner::Person`]): a later session
//! cannot inherit them by guessing ids, because nothing ever makes a
//! person's tab a session's but the person.
//!
//! [`client_label`] is the client's self-chosen name (`clientInfo.name`) as
//! the person sees it: tab group titles, the popup's agent list, approval
//! cards and audit rows. [`group_colour`] gives each session a Chrome tab
//! group colour.

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, WireError};
use crate::tab::TabId;

/// Longest client label, in characters (a tab group title stays short).
pub const MAX_CLIENT_LABEL_CHARS: usize = 32;

/// The label of a client that sent no usable name.
pub const UNNAMED_CLIENT: &str = "agent";

/// One MCP session of a bridge, numbered by the bridge from 1 in the order
/// they start (never reused while the bridge runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionKey(pub u64);

/// Who a tab belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The person: tabs they opened, and tabs a session released.
    Person,
    /// The session that opened it or that the person gave it to.
    Session(SessionKey),
}

/// Whether session `me` may see a tab owned by `owner` (list it, snapshot
/// it, act on it, select, close or wait on it): only its own tabs.
pub fn sees(owner: Owner, me: SessionKey) -> bool {
    owner == Owner::Session(me)
}

/// The `NOT_FOUND` for a tab a session may not see, word for word the
/// extension's answer for a tab id that is not open.
pub fn no_such_tab(tab: TabId) -> WireError {
    WireError::new(ErrorCode::NotFound, format!("no tab {tab}"))
}

/// Why the person's "Let <client> use this tab" was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveRefused {
    /// The tab already belongs to a session (the person gives only their own).
    AnotherAgents,
    /// The session has ended.
    SessionGone,
}

impl GiveRefused {
    pub fn message(self) -> &'static str {
        match self {
            GiveRefused::AnotherAgents => "this tab is already used by an agent",
            GiveRefused::SessionGone => "that agent is no longer connected",
        }
    }
}

/// The person gives a tab owned by `owner` to session `to` (`alive`: the
/// session is still open). A tab already `to`'s stays so.
pub fn give(owner: Owner, to: SessionKey, alive: bool) -> Result<Owner, GiveRefused> {
    if !alive {
        return Err(GiveRefused::SessionGone);
    }
    match owner {
        Owner::Person => Ok(Owner::Session(to)),
        Owner::Session(s) if s == to => Ok(owner),
        Owner::Session(_) => Err(GiveRefused::AnotherAgents),
    }
}

/// Characters dropped from a client label: controls and everything
/// [`crate::text::is_invisible_format`] names (a name cannot reorder or
/// hide text around it in the popup or a tab strip).
fn is_dropped(c: char) -> bool {
    c.is_control() || crate::text::is_invisible_format(c)
}

/// The client's `clientInfo.name` as shown to the person: invisible and
/// reordering characters dropped, runs of white space one space, trimmed,
/// at most [`MAX_CLIENT_LABEL_CHARS`] characters (cut ones end with `…`);
/// [`UNNAMED_CLIENT`] when nothing is left.
pub fn client_label(name: &str) -> String {
    let mut out = String::new();
    let mut space = false;
    for c in name.chars().filter(|c| !is_dropped(*c) || c.is_whitespace()) {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    if out.chars().count() > MAX_CLIENT_LABEL_CHARS {
        out = out.chars().take(MAX_CLIENT_LABEL_CHARS - 1).collect::<String>().trim_end().to_string();
        out.push('…');
    }
    if out.is_empty() { UNNAMED_CLIENT.to_string() } else { out }
}

/// Chrome's tab group colours (`chrome.tabGroups.Color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum GroupColour {
    Blue,
    Red,
    Yellow,
    Green,
    Pink,
    Purple,
    Cyan,
    Orange,
    Grey,
}

impl GroupColour {
    /// Chrome's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            GroupColour::Blue => "blue",
            GroupColour::Red => "red",
            GroupColour::Yellow => "yellow",
            GroupColour::Green => "green",
            GroupColour::Pink => "pink",
            GroupColour::Purple => "purple",
            GroupColour::Cyan => "cyan",
            GroupColour::Orange => "orange",
            GroupColour::Grey => "grey",
        }
    }
}

/// The colours sessions take in turn (grey last: it reads as "inactive").
const COLOURS: [GroupColour; 9] = [
    GroupColour::Blue,
    GroupColour::Green,
    GroupColour::Purple,
    GroupColour::Orange,
    GroupColour::Cyan,
    GroupColour::Pink,
    GroupColour::Yellow,
    GroupColour::Red,
    GroupColour::Grey,
];

/// The tab group colour of session `key`: sessions started one after the
/// other get different colours until all nine are used.
pub fn group_colour(key: SessionKey) -> GroupColour {
    COLOURS[(key.0.saturating_sub(1) % COLOURS.len() as u64) as usize]
}

/// One connected agent as the extension sees it (the bridge's
/// `BridgeToExt::Sessions`): for its tab group, the popup's list and the
/// approval cards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionInfo {
    pub key: SessionKey,
    /// [`client_label`] of its `clientInfo.name`.
    pub client: String,
    pub colour: GroupColour,
    /// Its tabs, in the order it got them.
    pub tabs: Vec<TabId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: SessionKey = SessionKey(1);
    const B: SessionKey = SessionKey(2);

    #[test]
    fn a_session_sees_only_its_own_tabs() {
        // (owner, who asks, sees)
        let table = [
            (Owner::Session(A), A, true),
            (Owner::Session(A), B, false),
            (Owner::Session(B), A, false),
            (Owner::Person, A, false),
            (Owner::Person, B, false),
        ];
        for (owner, me, want) in table {
            assert_eq!(sees(owner, me), want, "{owner:?} seen by {me:?}");
        }
    }

    #[test]
    fn the_person_gives_only_their_own_tabs_to_a_live_session() {
        // (owner, to, alive, result)
        let table = [
            (Owner::Person, A, true, Ok(Owner::Session(A))),
            (Owner::Session(A), A, true, Ok(Owner::Session(A))),
            (Owner::Session(B), A, true, Err(GiveRefused::AnotherAgents)),
            (Owner::Person, A, false, Err(GiveRefused::SessionGone)),
            (Owner::Session(A), A, false, Err(GiveRefused::SessionGone)),
        ];
        for (owner, to, alive, want) in table {
            assert_eq!(give(owner, to, alive), want, "{owner:?} to {to:?} alive={alive}");
        }
    }

    #[test]
    fn hidden_tabs_read_like_closed_ones() {
        let e = no_such_tab(42);
        assert_eq!(e.code, ErrorCode::NotFound);
        assert_eq!(e.message, "no tab 42");
    }

    #[test]
    fn client_labels_are_visible_single_line_and_short() {
        let long = "x".repeat(100);
        let cut = format!("{}…", "x".repeat(MAX_CLIENT_LABEL_CHARS - 1));
        let table: &[(&str, &str)] = &[
            ("claude-code", "claude-code"),
            ("  Cursor  ", "Cursor"),
            ("my\nagent\t2", "my agent 2"),
            ("a\u{1b}[31mred", "a[31mred"),
            ("\u{202E}edoc", "edoc"),
            ("safe\u{2066}evil\u{2069}", "safeevil"),
            ("zero\u{200B}width\u{FEFF}", "zerowidth"),
            ("tag\u{E0041}s", "tags"),
            ("", UNNAMED_CLIENT),
            ("\u{200F}\u{0007} \n", UNNAMED_CLIENT),
            ("Ассистент", "Ассистент"),
            ("代理", "代理"),
            (&long, &cut),
        ];
        for (name, want) in table {
            let got = client_label(name);
            assert_eq!(&got, want, "{name:?}");
            assert!(got.chars().count() <= MAX_CLIENT_LABEL_CHARS, "{got:?}");
            assert!(!got.chars().any(is_dropped), "{got:?}");
        }
    }

    #[test]
    fn a_cut_label_does_not_end_in_a_space_before_the_ellipsis() {
        let name = format!("{} tail of the name", "a".repeat(MAX_CLIENT_LABEL_CHARS - 2));
        let got = client_label(&name);
        assert!(got.ends_with("a…"), "{got:?}");
    }

    #[test]
    fn consecutive_sessions_get_different_colours() {
        let colours: Vec<_> = (1..=9).map(|k| group_colour(SessionKey(k))).collect();
        for (i, c) in colours.iter().enumerate() {
            assert!(!colours[..i].contains(c), "{c:?} repeats");
        }
        assert_eq!(group_colour(SessionKey(10)), group_colour(SessionKey(1)));
        assert_eq!(group_colour(SessionKey(0)), GroupColour::Blue);
        let json = serde_json::to_string(&GroupColour::Grey).unwrap();
        assert_eq!(json, "\"grey\"");
        for c in COLOURS {
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{}\"", c.as_str()));
        }
    }
}
