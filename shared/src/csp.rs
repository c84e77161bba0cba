//! Whether a document's Content Security Policy lets the content script
//! compile WebAssembly.
//!
//! The content script comes in two flavours (ARCHITECTURE.md, "The
//! content script's two flavours"): real WebAssembly, which runs its first
//! walk of a document several times faster, and the same code as plain
//! JavaScript (wasm2js), which any page accepts. Chromium checks a
//! content script's `WebAssembly.instantiate` against the *page's* policy,
//! even in the extension's isolated world, and a refusal fires a
//! `securitypolicyviolation` event the page can listen to: it would learn
//! that an extension read it. So the WebAssembly flavour is injected only
//! when no policy of the document could refuse it:
//!
//! - every policy counts, enforced (`Content-Security-Policy`) or
//!   report-only (`Content-Security-Policy-Report-Only`: it refuses
//!   nothing but reports, and the report is the event);
//! - a header value may hold several policies, separated by commas; each
//!   must allow it;
//! - in a policy, WebAssembly compilation is governed by `script-src`, or
//!   by `default-src` when there is no `script-src` (the first of a
//!   repeated directive counts); a policy with neither allows it;
//! - a source list allows it when it holds `'wasm-unsafe-eval'` or
//!   `'unsafe-eval'` (keywords in any case).
//!
//! A policy given by a `<meta http-equiv>` element is not in the headers:
//! the WebAssembly flavour itself looks for one before it compiles and
//! steps aside for the plain flavour when it finds any.

/// Whether WebAssembly may be compiled in a document whose CSP header
/// values (enforced and report-only alike) are `policies`.
pub fn allows_wasm<'a>(policies: impl IntoIterator<Item = &'a str>) -> bool {
    policies.into_iter().flat_map(|value| value.split(',')).all(policy_allows_wasm)
}

fn policy_allows_wasm(policy: &str) -> bool {
    let mut script_src = None;
    let mut default_src = None;
    for directive in policy.split(';') {
        let mut tokens = directive.split_ascii_whitespace();
        let Some(name) = tokens.next() else { continue };
        let slot = if name.eq_ignore_ascii_case("script-src") {
            &mut script_src
        } else if name.eq_ignore_ascii_case("default-src") {
            &mut default_src
        } else {
            continue;
        };
        if slot.is_none() {
            *slot = Some(tokens.collect::<Vec<_>>());
        }
    }
    match script_src.or(default_src) {
        None => true,
        Some(sources) => sources
            .iter()
            .any(|s| s.eq_ignore_ascii_case("'wasm-unsafe-eval'") || s.eq_ignore_ascii_case("'unsafe-eval'")),
    }
}

/// Whether a response header named `name` carries a policy
/// [`allows_wasm`] must read.
pub fn is_policy_header(name: &str) -> bool {
    name.eq_ignore_ascii_case("content-security-policy")
        || name.eq_ignore_ascii_case("content-security-policy-report-only")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_policies_let_the_content_script_compile_webassembly() {
        let cases: &[(&str, &[&str], bool)] = &[
            ("no policy at all", &[], true),
            ("an empty header", &[""], true),
            ("a policy about frames only", &["frame-ancestors 'self'"], true),
            ("upgrade-insecure-requests only", &["upgrade-insecure-requests; block-all-mixed-content"], true),
            ("script-src without eval", &["script-src 'self' https://cdn.example"], false),
            ("script-src with wasm-unsafe-eval", &["script-src 'self' 'wasm-unsafe-eval'"], true),
            ("script-src with unsafe-eval", &["script-src 'self' 'unsafe-eval'"], true),
            ("keywords in any case", &["SCRIPT-SRC 'self' 'WASM-UNSAFE-EVAL'"], true),
            ("default-src alone governs", &["default-src 'self'"], false),
            ("default-src with wasm-unsafe-eval", &["default-src 'self' 'wasm-unsafe-eval'"], true),
            ("script-src wins over default-src", &["default-src 'none'; script-src 'wasm-unsafe-eval'"], true),
            ("script-src refuses though default-src allows", &["default-src 'unsafe-eval'; script-src 'self'"], false),
            ("the first of a repeated directive counts", &["script-src 'self'; script-src 'wasm-unsafe-eval'"], false),
            ("script-src-elem does not govern compilation", &["script-src-elem 'self'"], true),
            ("a quoted name is a host, not a keyword", &["script-src wasm-unsafe-eval"], false),
            ("two policies in one value: both must allow", &["script-src 'unsafe-eval', default-src 'self'"], false),
            ("two headers: both must allow", &["script-src 'unsafe-eval'", "script-src 'self'"], false),
            ("a report-only policy counts like an enforced one", &["img-src *", "default-src 'none'"], false),
            ("a nonce is not eval", &["script-src 'nonce-abc' 'strict-dynamic'"], false),
            ("a directive without sources refuses", &["script-src"], false),
        ];
        for (name, policies, want) in cases {
            assert_eq!(allows_wasm(policies.iter().copied()), *want, "{name}: {policies:?}");
        }
    }

    #[test]
    fn both_policy_headers_are_read_and_no_other() {
        for (name, want) in [
            ("Content-Security-Policy", true),
            ("content-security-policy-report-only", true),
            ("X-Content-Security-Policy", false),
            ("Content-Type", false),
        ] {
            assert_eq!(is_policy_header(name), want, "{name}");
        }
    }
}
