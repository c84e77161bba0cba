//! The shape of names the person gives and the agent repeats: a stored
//! secret's name (`chaperone secret set NAME`, `{"secret": "NAME"}` in a
//! tool call, `{secret:NAME}` in summaries, audit rows and log lines).
//!
//! A leaf module (it imports nothing from the crate), so the tool
//! arguments (`tools`) and redaction (`redact`, which leaves a
//! `{secret:NAME}` mention alone) both use it without one depending on the
//! other.

/// Longest secret name, in characters (each one ASCII, so also bytes).
pub const MAX_SECRET_NAME_CHARS: usize = 64;

/// What a valid secret name is, in words (for error messages).
pub const SECRET_NAME_RULE: &str =
    "a secret name is 1 to 64 characters, each an ASCII letter (A-Z, a-z), a digit (0-9), '_', '.' or '-'";

/// Whether `name` can name a secret: `[A-Za-z0-9_.-]{1,64}`.
pub fn is_valid_secret_name(name: &str) -> bool {
    (1..=MAX_SECRET_NAME_CHARS).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_have_one_shape() {
        for good in ["A", "github_token", "api.key-2", &"x".repeat(MAX_SECRET_NAME_CHARS)] {
            assert!(is_valid_secret_name(good), "{good}");
        }
        for bad in ["", "a b", "../x", "ä", "a/b", "{secret}", &"x".repeat(MAX_SECRET_NAME_CHARS + 1)] {
            assert!(!is_valid_secret_name(bad), "{bad}");
        }
        assert!(SECRET_NAME_RULE.contains(&format!("1 to {MAX_SECRET_NAME_CHARS} characters")));
    }
}
