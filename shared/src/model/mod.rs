//! The model tier as pure functions (README, "Letting a local model pick
//! elements"; SECURITY.md, "The model tier"): everything Chaperone decides
//! about a request to a local model and about its answer, with no IO, so
//! that every rule is table-tested. `bridge/src/model/` sends the request
//! and reads the reply; `bridge/src/server/act_model.rs` runs the pick
//! through the ordinary action pipeline.
//!
//! A pick goes through these steps; the model only ever chooses among
//! refs that code listed.
//!
//! 1. [`candidates::candidates`]: the snapshot's elements that carry a ref,
//!    each with its role, its name cut to [`MAX_CANDIDATE_NAME_CHARS`] and at
//!    most two context labels (the enclosing form or landmark, the heading
//!    above it), each cut too. **No field value is ever taken**: not a
//!    sensitive one, not one the person typed, so none can reach a model.
//! 2. [`candidates::rank`]: a lexical ranker of the caller's intent against
//!    role, name and context keeps at most [`MAX_CANDIDATES`].
//! 3. [`prompt::act_request`] / [`prompt::goal_request`]: the system prompt
//!    ([`prompt::FRAMING`]) says the candidate lines are untrusted page data
//!    and that the only job is to pick; the answer is constrained by a JSON
//!    schema whose `ref` is an `enum` of exactly the candidate refs plus
//!    `"none"` ([`prompt::act_schema`]; for goals `op`/`ref`/`input`,
//!    [`prompt::goal_schema`]). Input *values* of a goal never enter a
//!    prompt: only the caller's input keys.
//! 4. [`answer::check_act`] / [`answer::check_goal`]: the reply must be
//!    that JSON, with a ref from the list; anything else is no decision
//!    ([`answer::BadAnswer`]) and nothing runs.
//!
//! [`loopback_url`] is the rule for `[model] url`: the model server must be
//! on this machine.

pub mod answer;
pub mod candidates;
pub mod prompt;
pub mod trace;

/// Most candidates in one request to the model.
pub const MAX_CANDIDATES: usize = 30;
/// Longest candidate name sent to the model, in characters.
pub const MAX_CANDIDATE_NAME_CHARS: usize = 120;
/// Longest context label sent to the model, in characters.
pub const MAX_CONTEXT_CHARS: usize = 60;
/// Longest intent or goal sent to the model, in characters.
pub const MAX_INTENT_CHARS: usize = 500;
/// Most steps of one `browser_run_goal` (and its default).
pub const MAX_GOAL_STEPS: u32 = 20;
pub const DEFAULT_GOAL_STEPS: u32 = 8;

/// Whether `url` may be a model server's: `http`/`https` to a loopback
/// address (`127.0.0.0/8`, `[::1]`, `localhost`), no credentials in it.
/// `Err` says why not.
pub fn loopback_url(url: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url:?} is not a URL ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("{url:?} must be an http:// URL on this machine"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!("{url:?} must not carry a user name or password"));
    }
    let loopback = match parsed.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if !loopback {
        return Err(format!(
            "{url:?} is not on this machine: the model server must listen on loopback (127.0.0.1, [::1] or localhost)"
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_model_servers_are_accepted() {
        for ok in ["http://127.0.0.1:11434", "http://localhost:8080/", "http://[::1]:1/v1", "http://127.9.9.9"] {
            assert!(loopback_url(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("http://192.168.1.5:11434", "not on this machine"),
            ("http://10.0.0.1", "not on this machine"),
            ("http://0.0.0.0:11434", "not on this machine"),
            ("http://localhost.evil.example", "not on this machine"),
            ("http://127.0.0.1.nip.io", "not on this machine"),
            ("https://api.openai.com/v1", "not on this machine"),
            ("file:///tmp/x", "http://"),
            ("http://u:p@127.0.0.1", "user name"),
            ("127.0.0.1:11434", "is not a URL"),
            ("not a url", "is not a URL"),
        ] {
            let e = loopback_url(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
