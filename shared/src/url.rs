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

/// The origin of an http(s) page: scheme, host and port (the default one
/// when the URL has none) as a browser parses the URL (WHATWG: host lower
/// case, percent-decoded, IDNA-mapped; a trailing dot dropped). Written
/// `scheme://host:port`, port always: the one form on the wire
/// (`Gate::origin`, `SecretRequest`) and in messages. The security checks
/// that a page is still the one a decision was made for (the extension's
/// gate, the secret's release on both sides) compare `Origin`s, never
/// strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// The origin of an absolute http(s) URL (or of an origin as
    /// [`Display`](std::fmt::Display) writes it); `None` for anything else.
    pub fn of(url: &str) -> Option<Origin> {
        let u = url::Url::parse(url.trim()).ok()?;
        if u.scheme() != "http" && u.scheme() != "https" {
            return None;
        }
        let host = u.host_str()?.to_string();
        let host = host.strip_suffix('.').map(str::to_string).unwrap_or(host);
        Some(Origin { scheme: u.scheme().to_string(), host, port: u.port_or_known_default()? })
    }

    /// Whether `text` is exactly an origin as [`Display`](std::fmt::Display)
    /// writes it (`https://example.com:443`), the only form a site rule
    /// chosen in the popup is stored and sent in.
    pub fn is_exact(text: &str) -> bool {
        Origin::of(text).is_some_and(|o| o.to_string() == text)
    }

    /// [`Origin::of`] as written on the wire: empty for a page that is not
    /// http(s) (`Gate::origin`).
    pub fn wire(url: &str) -> String {
        Origin::of(url).map(|o| o.to_string()).unwrap_or_default()
    }

    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

/// `scheme`, host and port of [`Origin::of`].
pub fn origin_parts(url: &str) -> Option<(String, String, u16)> {
    Origin::of(url).map(|o| (o.scheme, o.host, o.port))
}

/// The URL without its query string and fragment (for logs and audit).
pub fn strip_query(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// Shared-hosting suffixes that are not (or no longer) on the Public
/// Suffix List but whose subdomains belong to different customers: each
/// `name.glitch.me` is a site of its own. Checked before the list.
const EXTRA_PRIVATE_SUFFIXES: &[&str] = &["glitch.me"];

/// The registrable domain of a DNS host by the full Public Suffix List
/// (ICANN and private sections, embedded by the `psl` crate:
/// `accounts.bank.co.uk` → `bank.co.uk`, `alice.github.io` →
/// `alice.github.io`), plus [`EXTRA_PRIVATE_SUFFIXES`]. `None` for a
/// public suffix itself (`co.uk`, `github.io`), for single-label hosts
/// (`localhost`) and for IP addresses — those are only ever the same site
/// as the exact same host.
pub fn registrable_domain(host: &str) -> Option<String> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() || !host.contains('.') || host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return None;
    }
    for extra in EXTRA_PRIVATE_SUFFIXES {
        if host == *extra {
            return None;
        }
        if let Some(rest) = host.strip_suffix(extra).and_then(|r| r.strip_suffix('.')) {
            let label = rest.rsplit('.').next().unwrap_or(rest);
            return (!label.is_empty()).then(|| format!("{label}.{extra}"));
        }
    }
    psl::domain_str(&host).map(str::to_string)
}

/// The site of an http(s) URL: its registrable domain
/// ([`registrable_domain`]: `accounts.bank.com` → `bank.com`,
/// `www.bank.co.uk` → `bank.co.uk`), or the whole host for IP addresses,
/// single-label hosts and public suffixes themselves (`127.0.0.1`,
/// `localhost`). Scheme and port do not count here (see
/// [`same_site_and_port`]). `None` for anything but http(s).
pub fn site_of(url: &str) -> Option<String> {
    let (_, host, _) = origin_parts(url)?;
    Some(registrable_domain(&host).unwrap_or(host))
}

/// Whether `now` is where a person may finish something that began on
/// `began`: the same scheme and port, and either the same host or the
/// same registrable domain by the full Public Suffix List
/// ([`registrable_domain`]). IP addresses, `localhost` and public
/// suffixes need the exact host. Another port of the same host, another
/// scheme, or another customer of a shared suffix (`a.github.io` vs
/// `b.github.io`) is not the same place.
pub fn same_site_and_port(began: &str, now: &str) -> bool {
    let (Some((s1, h1, p1)), Some((s2, h2, p2))) = (origin_parts(began), origin_parts(now)) else {
        return false;
    };
    if s1 != s2 || p1 != p2 {
        return false;
    }
    if h1.eq_ignore_ascii_case(&h2) {
        return true;
    }
    match (registrable_domain(&h1), registrable_domain(&h2)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
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
            ("https://deep.alice.github.io/x", Some("alice.github.io")),
            ("https://github.io/", Some("github.io")),
            ("https://alice.glitch.me/", Some("alice.glitch.me")),
            ("https://x.alice.glitch.me/", Some("alice.glitch.me")),
            ("https://a.b.kawasaki.jp/", Some("a.b.kawasaki.jp")),
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
    fn the_same_place_is_the_same_scheme_port_and_site() {
        // (began, now, same?)
        let cases: &[(&str, &str, &str, bool)] = &[
            ("same page", "https://shop.example.com/cart", "https://shop.example.com/x", true),
            ("another host of the site", "https://shop.example.com/", "https://www.example.com/", true),
            ("default port written", "https://example.com/", "https://example.com:443/", true),
            ("co.uk siblings", "https://www.example.co.uk/", "https://login.example.co.uk/", true),
            ("another port of the same host", "http://127.0.0.1:4000/", "http://127.0.0.1:4001/", false),
            ("another port of a domain", "https://example.com/", "https://example.com:8443/", false),
            ("another scheme", "https://example.com/", "http://example.com/", false),
            ("another github.io customer", "https://alice.github.io/", "https://mallory.github.io/", false),
            ("another glitch.me customer", "https://alice.glitch.me/", "https://mallory.glitch.me/", false),
            ("the suffix itself", "https://alice.github.io/", "https://github.io/", false),
            ("another co.uk site", "https://bank.co.uk/", "https://evil.co.uk/", false),
            ("IP needs the exact host", "http://127.0.0.1:4000/", "http://127.0.0.2:4000/", false),
            ("IP and localhost", "http://127.0.0.1:4000/", "http://localhost:4000/", false),
            ("IPv6", "http://[::1]:4000/", "http://[::1]:4000/b", true),
            ("look-alike suffix", "https://bank.com/", "https://bank.com.evil.example/", false),
            ("user info is not the host", "https://bank.com/", "https://bank.com@evil.example/", false),
            ("trailing dot and case", "https://bank.com/", "https://BANK.com./x", true),
            ("blob of the same site", "https://bank.com/", "blob:https://bank.com/0b8e", false),
            ("punycode look-alike", "https://bank.com/", "https://bаnk.com/", false),
            ("not http", "https://bank.com/", "about:blank", false),
            ("began nowhere", "about:blank", "about:blank", false),
        ];
        for (name, began, now, want) in cases {
            assert_eq!(same_site_and_port(began, now), *want, "{name}: {began} → {now}");
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
        assert_eq!(Origin::wire("https://Example.com/a?b"), "https://example.com:443");
        assert_eq!(Origin::wire("about:blank"), "");
        assert_eq!(Origin::of("about:blank"), None);
    }

    #[test]
    fn origins_compare_as_the_browser_parses_them() {
        let o = |u: &str| Origin::of(u).unwrap();
        // One origin, however it is written (its own written form too).
        for same in [
            "https://shop.example/a?b#c",
            "HTTPS://SHOP.EXAMPLE:443/",
            "https://shop.example./x",
            "https://sh%6Fp.example/",
            "https://shop.example:443",
        ] {
            assert_eq!(o(same), o("https://shop.example"), "{same}");
            assert_eq!(o(same).to_string(), "https://shop.example:443");
        }
        // Control: another scheme, port or host is another origin.
        for other in
            ["http://shop.example/", "https://shop.example:8443/", "https://evil.example/", "https://a.shop.example/"]
        {
            assert_ne!(o(other), o("https://shop.example"), "{other}");
        }
        for none in ["", "chrome://newtab/", "file:///etc/passwd", "javascript:alert(1)", "shop.example"] {
            assert_eq!(Origin::of(none), None, "{none}");
        }
    }

    #[test]
    fn query_and_fragment_are_stripped() {
        assert_eq!(strip_query("https://a.example/p?token=1#x"), "https://a.example/p");
        assert_eq!(strip_query("https://a.example/p"), "https://a.example/p");
    }

    #[test]
    fn an_exact_origin_is_written_with_its_port_and_nothing_else() {
        assert!(Origin::is_exact("https://example.com:443"));
        assert!(Origin::is_exact("http://127.0.0.1:8080"));
        for not in ["https://example.com", "https://example.com:443/", "https://Example.com:443", "file:///x", ""] {
            assert!(!Origin::is_exact(not), "{not:?}");
        }
    }
}
