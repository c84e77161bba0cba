//! Request guards: Host, Origin, OPTIONS (every route) and the mcp token
//! (`/mcp`, `/status`), plus the auth-failure rate limiter, and the answer
//! to an `/mcp` body that is not one JSON-RPC message.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;

/// Path of the extension socket: the only place an `Origin` is accepted.
pub(crate) const EXT_PATH: &str = "/ext";

fn refuse(status: StatusCode) -> Response {
    let body = match status {
        StatusCode::FORBIDDEN => "forbidden\n",
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed\n",
        StatusCode::UNAUTHORIZED => "unauthorized\n",
        StatusCode::TOO_MANY_REQUESTS => "too many failed attempts, try again later\n",
        StatusCode::SERVICE_UNAVAILABLE => "busy, try again later\n",
        _ => "refused\n",
    };
    let mut resp = (status, body).into_response();
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    }
    resp
}

pub(crate) fn refuse_status(status: StatusCode) -> Response {
    refuse(status)
}

/// The one `Host` value of the request (HTTP/1.1 `Host`, or the HTTP/2
/// `:authority` when there is no `Host` header).
fn host_of(req: &Request) -> Option<&str> {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (Some(h), None) => h.to_str().ok(),
        (None, _) => req.uri().authority().map(|a| a.as_str()),
        (Some(_), Some(_)) => None,
    }
}

/// Runs before every route.
pub(crate) async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let host_ok = host_of(&req).is_some_and(|h| state.inner.allowed_hosts.iter().any(|a| a == h));
    if !host_ok {
        tracing::warn!(path = %path, reason = "host", "request refused");
        return refuse(StatusCode::FORBIDDEN);
    }
    if req.method() == Method::OPTIONS {
        tracing::warn!(path = %path, reason = "options", "request refused");
        return refuse(StatusCode::METHOD_NOT_ALLOWED);
    }
    let mut origins = req.headers().get_all(header::ORIGIN).iter();
    let origin = (origins.next(), origins.next());
    if path == EXT_PATH {
        let pinned = match origin {
            (Some(o), None) => {
                o.to_str().is_ok_and(|o| state.inner.config.extension_origins.iter().any(|allowed| allowed == o))
            }
            _ => false,
        };
        if !pinned {
            tracing::warn!(path = %path, reason = "origin", "request refused");
            return refuse(StatusCode::FORBIDDEN);
        }
    } else if path == shared::dashboard::DATA_PATH {
        // The one endpoint that accepts an `Origin`: its own page's only.
        let own = match origin {
            (None, None) => true,
            (Some(o), None) => {
                o.to_str().is_ok_and(|o| shared::dashboard::data_origin_allowed(Some(o), state.inner.port))
            }
            _ => false,
        };
        if !own {
            tracing::warn!(path = %path, reason = "origin", "request refused");
            return refuse(StatusCode::FORBIDDEN);
        }
    } else if origin.0.is_some() {
        tracing::warn!(path = %path, reason = "origin", "request refused");
        return refuse(StatusCode::FORBIDDEN);
    }
    let mut resp = next.run(req).await;
    strip_cors(resp.headers_mut());
    resp
}

/// Belt and braces: nothing behind the guard should add CORS headers, and
/// if something ever does, they do not leave the bridge.
fn strip_cors(headers: &mut HeaderMap) {
    let names: Vec<_> = headers.keys().filter(|k| k.as_str().starts_with("access-control-")).cloned().collect();
    for name in names {
        headers.remove(name);
    }
}

/// The token of an `Authorization: Bearer <token>` header (exactly one).
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return None;
    };
    let (scheme, token) = value.to_str().ok()?.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// `/mcp` and `/status`: the mcp token, and no other.
pub(crate) async fn require_mcp_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let ok = bearer(req.headers()).is_some_and(|t| state.inner.config.tokens.mcp.matches(t));
    if !ok {
        tracing::warn!(path = %req.uri().path(), reason = "token", "request refused");
        return refuse(StatusCode::UNAUTHORIZED);
    }
    next.run(req).await
}

/// What a POST to `/mcp` whose body is not one JSON-RPC message gets: 400
/// and a JSON-RPC parse error (the MCP transport's rule).
pub(crate) const BAD_BODY: &str = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the body is not one JSON-RPC message"}}"#;

/// `/mcp`: rmcp answers a JSON body it cannot read as one JSON-RPC message
/// (not JSON, nested deeper than serde_json's 128 levels, another shape)
/// with 415 and serde's error text. That becomes [`BAD_BODY`], a 400; the
/// detail goes to the log only. A 415 for a body that is not
/// `application/json` stays what it is.
pub(crate) async fn mcp_bad_body(req: Request, next: Next) -> Response {
    let json = req.method() == Method::POST
        && req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    let resp = next.run(req).await;
    if !json || resp.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return resp;
    }
    tracing::warn!(reason = "body", "MCP request refused: the body is not one JSON-RPC message");
    (StatusCode::BAD_REQUEST, [(header::CONTENT_TYPE, "application/json")], BAD_BODY).into_response()
}

/// Counts failed authentications in a fixed window; once `max` failures
/// were seen, [`AuthLimiter::locked`] is true until the window ends.
pub(crate) struct AuthLimiter {
    max: u32,
    window: Duration,
    state: Mutex<(Instant, u32)>,
}

impl AuthLimiter {
    pub(crate) fn new(max: u32, window: Duration) -> Self {
        AuthLimiter { max, window, state: Mutex::new((Instant::now(), 0)) }
    }

    fn with<T>(&self, f: impl FnOnce(&mut (Instant, u32)) -> T) -> T {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.0.elapsed() >= self.window {
            *s = (Instant::now(), 0);
        }
        f(&mut s)
    }

    pub(crate) fn locked(&self) -> bool {
        self.with(|s| s.1 >= self.max)
    }

    pub(crate) fn record_failure(&self) {
        self.with(|s| s.1 = s.1.saturating_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_takes_exactly_one_bearer_header() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "bearer abc".parse().unwrap());
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer a".parse().unwrap());
        h.append(header::AUTHORIZATION, "Bearer b".parse().unwrap());
        assert_eq!(bearer(&h), None);
    }

    #[test]
    fn limiter_locks_after_max_failures_and_reopens_after_the_window() {
        let l = AuthLimiter::new(2, Duration::from_millis(50));
        assert!(!l.locked());
        l.record_failure();
        assert!(!l.locked());
        l.record_failure();
        assert!(l.locked());
        std::thread::sleep(Duration::from_millis(60));
        assert!(!l.locked());
    }
}
