//! Limits shared by the bridge and the extension.

/// Largest WebSocket frame accepted on `/ext` (12 MiB).
pub const MAX_FRAME_BYTES: usize = 12 * 1024 * 1024;
/// Seconds an `/ext` socket may stay open without a valid `hello`.
pub const HELLO_TIMEOUT_SECS: u64 = 5;
/// Invalid frames after which the bridge closes an `/ext` socket.
pub const MAX_INVALID_FRAMES: u32 = 6;
/// Concurrent `/ext` sockets that have not said `hello` yet.
pub const MAX_UNAUTHENTICATED_SOCKETS: usize = 10;
/// Heartbeat period of the service worker, in seconds.
pub const HEARTBEAT_SECS: u64 = 20;
/// Accessible names are cut to this many characters.
pub const MAX_NAME_CHARS: usize = 120;
/// Text blocks are cut to this many characters.
pub const MAX_TEXT_CHARS: usize = 300;
/// Options of a drop-down `<select>`, or suggestions of an input's
/// `<datalist>`, listed on its `options:` line in a snapshot; the rest are
/// counted (`+N more`) and listed by a snapshot scoped to the element (up
/// to `shared::risk::MAX_OPTIONS_SEEN`, the options an agent can choose).
pub const MAX_OPTIONS_SHOWN: usize = 25;
/// Default `max_chars` of a snapshot.
pub const DEFAULT_SNAPSHOT_CHARS: usize = 20_000;
/// Error messages are cut to this many characters.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 300;
/// Longest URL accepted from an agent.
pub const MAX_URL_CHARS: usize = 8_192;
/// Default time the bridge waits for the extension to answer a command.
pub const COMMAND_TIMEOUT_MS: u64 = 30_000;
/// Time a navigation may take before `TIMEOUT`.
pub const NAVIGATION_TIMEOUT_MS: u64 = 20_000;
/// Seconds the person has to answer an approval, unless `config.toml`
/// sets `approval_timeout_secs`.
pub const DEFAULT_APPROVAL_TIMEOUT_SECS: u32 = 120;
/// The range `approval_timeout_secs` must be in (`shared::policy` refuses
/// any other value); the extension clamps a `Gate`'s `timeout_secs` to it
/// too, so no frame can make an approval wait longer.
pub const MIN_APPROVAL_TIMEOUT_SECS: u32 = 1;
pub const MAX_APPROVAL_TIMEOUT_SECS: u32 = 600;
/// Seconds a hand-off waits for the person before `HUMAN_REQUIRED`, unless
/// `config.toml` sets `human_timeout_secs` (within the bounds below).
pub const DEFAULT_HUMAN_TIMEOUT_SECS: u32 = 600;
pub const MIN_HUMAN_TIMEOUT_SECS: u32 = 1;
pub const MAX_HUMAN_TIMEOUT_SECS: u32 = 3600;

/// Cuts `s` to at most `max` characters (not bytes), adding `…` when cut.
pub fn truncate_chars(s: &mut String, max: usize) {
    // No more bytes than `max`: no more characters either (the common
    // case, without walking the characters).
    if s.len() <= max {
        return;
    }
    if let Some((idx, _)) = s.char_indices().nth(max) {
        let keep = s[..idx].char_indices().nth(max.saturating_sub(1)).map_or(idx, |(i, _)| i);
        s.truncate(keep);
        s.push('…');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_counts_characters_and_marks_the_cut() {
        for (text, max, cut) in [
            ("ééééé", 3, "éé…"),
            ("abc", 3, "abc"),
            // As many characters as allowed, more bytes: kept whole.
            ("ééé", 3, "ééé"),
            ("abcd", 3, "ab…"),
            ("a", 0, "…"),
        ] {
            let mut s = text.to_string();
            truncate_chars(&mut s, max);
            assert_eq!(s, cut, "{text:?} to {max}");
        }
    }
}
