//! Rules for URLs an agent asks the browser to load.

use crate::error::{ErrorCode, WireError};
use crate::limits::MAX_URL_CHARS;

/// Accepts only absolute `http:` and `https:` URLs with a host; everything
/// else (`file:`, `javascript:`, `data:`, `chrome:`, relative paths…) is an
/// `INVALID_REQUEST`. Returns the URL trimmed of surrounding whitespace.
pub fn validate_navigation_url(raw: &str) -> Result<String, WireError> {
    let url = raw.trim();
    let invalid = |why: &str| WireError::new(ErrorCode::InvalidRequest, why.to_string());
    if url.is_empty() {
        return Err(invalid("url is empty"));
    }
    if url.chars().count() > MAX_URL_CHARS {
        return Err(invalid("url is too long"));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(invalid("url contains whitespace or control characters"));
    }
    let Some((scheme, rest)) = url.split_once(':') else {
        return Err(invalid("url must be absolute and start with http:// or https://"));
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(invalid("only http:// and https:// URLs can be opened"));
    }
    let Some(after) = rest.strip_prefix("//") else {
        return Err(invalid("url must be absolute and start with http:// or https://"));
    };
    let authority = after.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    if host.is_empty() || host.starts_with(':') {
        return Err(invalid("url has no host"));
    }
    Ok(url.to_string())
}

/// The URL without its query string and fragment (for logs and audit).
pub fn strip_query(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_with_a_host_are_accepted() {
        for ok in ["http://127.0.0.1:8080/a", "https://example.com", "HTTPS://Example.com/x?y#z", "  http://a.b/  "] {
            assert!(validate_navigation_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,hi",
            "chrome://settings",
            "chrome-extension://abc/popup.html",
            "about:blank",
            "/relative",
            "example.com",
            "http:/x",
            "http://",
            "http://:80/",
            "http://a b/",
            "",
        ] {
            let err = validate_navigation_url(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest, "{bad}");
        }
    }

    #[test]
    fn query_and_fragment_are_stripped() {
        assert_eq!(strip_query("https://a.example/p?token=1#x"), "https://a.example/p");
        assert_eq!(strip_query("https://a.example/p"), "https://a.example/p");
    }
}
