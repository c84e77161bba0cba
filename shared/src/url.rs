//! Rules for URLs an agent asks the browser to load.

use crate::error::{ErrorCode, WireError};
use crate::limits::MAX_URL_CHARS;

/// Accepts only absolute `http:` and `https:` URLs with a host; everything
/// else (`file:`, `javascript:`, `data:`, `chrome:`, relative paths…) is an
/// `INVALID_REQUEST`. Returns the URL in the form browsers load it (WHATWG
/// URL parsing: host lower case, percent-decoded and IDNA-mapped —
/// `loc%61lhost` and full-width letters become `localhost` — default port
/// dropped), so site rules are checked on the URL the browser will really
/// open.
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
    if !rest.starts_with("//") {
        return Err(invalid("url must be absolute and start with http:// or https://"));
    }
    let parsed = url::Url::parse(url).map_err(|e| invalid(&format!("url is not valid ({e})")))?;
    match parsed.host_str() {
        Some(h) if !h.is_empty() => {}
        _ => return Err(invalid("url has no host")),
    }
    let canonical = parsed.to_string();
    if canonical.chars().count() > MAX_URL_CHARS {
        return Err(invalid("url is too long"));
    }
    Ok(canonical)
}

/// `scheme://host:port` (port always written) of an http(s) URL, for
/// comparing the page a decision was made for with the live page.
pub fn origin(url: &str) -> Option<String> {
    origin_parts(url).map(|(scheme, host, port)| format!("{scheme}://{host}:{port}"))
}

/// `scheme`, host and port (the default one when absent) of an absolute
/// http(s) URL as a browser parses it; `None` for anything else.
pub fn origin_parts(url: &str) -> Option<(String, String, u16)> {
    let u = url::Url::parse(url.trim()).ok()?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return None;
    }
    let host = u.host_str()?.to_string();
    let host = host.strip_suffix('.').map(str::to_string).unwrap_or(host);
    Some((u.scheme().to_string(), host, u.port_or_known_default()?))
}

/// The URL without its query string and fragment (for logs and audit).
pub fn strip_query(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// Public suffixes with two labels that are common enough to matter when
/// telling sites apart (`bank.co.uk` and `shop.co.uk` are two sites). Not
/// the whole Public Suffix List: a host under a suffix missing here is
/// grouped with its neighbours, which only makes "the same site" wider for
/// the hand-off check (`crate::handoff::check_done`), never a security
/// boundary.
const TWO_LABEL_SUFFIXES: &[&str] = &[
    "co.uk",
    "org.uk",
    "ac.uk",
    "gov.uk",
    "ltd.uk",
    "plc.uk",
    "me.uk",
    "nhs.uk",
    "com.au",
    "net.au",
    "org.au",
    "edu.au",
    "gov.au",
    "co.nz",
    "org.nz",
    "govt.nz",
    "co.jp",
    "ne.jp",
    "or.jp",
    "ac.jp",
    "go.jp",
    "co.kr",
    "or.kr",
    "com.br",
    "net.br",
    "gov.br",
    "com.cn",
    "net.cn",
    "org.cn",
    "gov.cn",
    "com.hk",
    "com.tw",
    "com.sg",
    "com.my",
    "co.in",
    "net.in",
    "org.in",
    "gov.in",
    "co.za",
    "org.za",
    "com.mx",
    "com.ar",
    "com.tr",
    "gov.tr",
    "co.il",
    "com.pl",
    "com.ua",
    "co.id",
    "co.th",
    "com.vn",
    "com.ph",
    "com.pk",
    "com.eg",
    "com.sa",
    "ac.ir",
    "co.ir",
    "github.io",
    "gitlab.io",
    "pages.dev",
    "workers.dev",
    "vercel.app",
    "netlify.app",
    "herokuapp.com",
    "appspot.com",
    "web.app",
    "firebaseapp.com",
    "azurewebsites.net",
    "cloudfront.net",
    "blogspot.com",
];

/// The site of an http(s) URL: its registrable domain (`accounts.bank.com`
/// → `bank.com`, `www.bank.co.uk` → `bank.co.uk`), or the whole host for
/// IP addresses and single-label hosts (`127.0.0.1`, `localhost`). Scheme
/// and port do not count. `None` for anything but http(s).
pub fn site_of(url: &str) -> Option<String> {
    let u = url::Url::parse(url.trim()).ok()?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return None;
    }
    let host = match u.host()? {
        url::Host::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
        ip => return Some(ip.to_string()),
    };
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() <= 2 {
        return Some(host);
    }
    let last_two = labels[labels.len() - 2..].join(".");
    let keep = if TWO_LABEL_SUFFIXES.contains(&last_two.as_str()) { 3 } else { 2 };
    Some(labels[labels.len().saturating_sub(keep)..].join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_registrable_domains() {
        for (url, site) in [
            ("https://accounts.bank.com/login", Some("bank.com")),
            ("https://BANK.com.:8443/", Some("bank.com")),
            ("http://www.shop.co.uk/a", Some("shop.co.uk")),
            ("https://shop.co.uk/", Some("shop.co.uk")),
            ("https://alice.github.io/x", Some("alice.github.io")),
            ("http://127.0.0.1:4000/", Some("127.0.0.1")),
            ("http://localhost:4000/", Some("localhost")),
            ("http://[::1]:80/", Some("[::1]")),
            ("http://xn--bcher-kva.example/", Some("xn--bcher-kva.example")),
            ("about:blank", None),
            ("chrome-extension://abc/popup.html", None),
            ("not a url", None),
        ] {
            assert_eq!(site_of(url).as_deref(), site, "{url}");
        }
    }

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
            "http://exa mple.com/",
            "https://a%00b/",
            "http://[::1/",
            "",
        ] {
            let err = validate_navigation_url(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest, "{bad}");
        }
    }

    #[test]
    fn urls_come_back_as_the_browser_will_load_them() {
        for (given, loaded) in [
            ("http://loc%61lhost:8080/a", "http://localhost:8080/a"),
            ("http://\u{ff4c}ocalhost:8080/a", "http://localhost:8080/a"),
            ("HTTPS://Example.COM:443/x?y#z", "https://example.com/x?y#z"),
            ("https://example.com", "https://example.com/"),
            ("http://127.0.0.1:80/a/../b", "http://127.0.0.1/b"),
            ("http://0x7f.1/", "http://127.0.0.1/"),
            ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ] {
            assert_eq!(validate_navigation_url(given).unwrap(), loaded, "{given}");
        }
        assert_eq!(origin_parts("http://LOC%61LHOST./x"), Some(("http".into(), "localhost".into(), 80)));
        assert_eq!(origin_parts("https://[::1]:9/"), Some(("https".into(), "[::1]".into(), 9)));
        assert_eq!(origin_parts("file:///etc/passwd"), None);
        assert_eq!(origin("https://Example.com/a?b").as_deref(), Some("https://example.com:443"));
        assert_eq!(origin("about:blank"), None);
    }

    #[test]
    fn query_and_fragment_are_stripped() {
        assert_eq!(strip_query("https://a.example/p?token=1#x"), "https://a.example/p");
        assert_eq!(strip_query("https://a.example/p"), "https://a.example/p");
    }
}
