//! The read-only review dashboard (`chaperone dashboard`): the page, its
//! one script and one stylesheet (static files compiled into the binary,
//! no data, no token needed), and `GET /dashboard/data`, the one call that
//! reads the audit log. The rules are `shared::dashboard`'s: the dashboard
//! token as `Authorization: Bearer` (the MCP and extension tokens are
//! refused, a token in the query string is an unknown parameter), only the
//! page's own `Origin` (checked by the guard, `guard.rs`), and
//! [`CSP`](shared::dashboard::CSP) on every response.
//!
//! Nothing here changes state: no approvals, no settings. The page builds
//! every element with `textContent`; see `static/app.js`.
//!
//! `chaperone report` renders the same reads into one self-contained file
//! ([`report`]).

pub(crate) mod query;
pub mod report;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use shared::dashboard::{CSP, Filters};

use super::AppState;
use super::guard;

use shared::dashboard::DATA_PATH;

const INDEX_HTML: &str = include_str!("static/index.html");
const APP_JS: &str = include_str!("static/app.js");
const APP_CSS: &str = include_str!("static/app.css");

/// The dashboard's routes; the guard of `app()` runs before them.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/dashboard", get(redirect))
        .route("/dashboard/", get(|| async { page("text/html; charset=utf-8", INDEX_HTML) }))
        .route("/dashboard/app.js", get(|| async { page("text/javascript; charset=utf-8", APP_JS) }))
        .route("/dashboard/app.css", get(|| async { page("text/css; charset=utf-8", APP_CSS) }))
        .route(DATA_PATH, get(data))
}

/// The headers of every dashboard response.
fn locked_down(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    resp
}

fn page(kind: &'static str, body: &'static str) -> Response {
    locked_down(([(header::CONTENT_TYPE, kind)], body).into_response())
}

async fn redirect() -> Response {
    locked_down((StatusCode::PERMANENT_REDIRECT, [(header::LOCATION, "/dashboard/")]).into_response())
}

fn refuse(status: StatusCode, message: &'static str) -> Response {
    locked_down((status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response())
}

/// Whether the request carries the dashboard token (and no other).
pub(crate) fn has_dashboard_token(state: &AppState, headers: &HeaderMap) -> bool {
    guard::bearer(headers).is_some_and(|t| state.config().tokens.dashboard.matches(t))
}

async fn data(
    State(state): State<AppState>,
    headers: HeaderMap,
    filters: Result<Query<Filters>, axum::extract::rejection::QueryRejection>,
) -> Response {
    if !has_dashboard_token(&state, &headers) {
        tracing::warn!(path = DATA_PATH, reason = "token", "request refused");
        let mut resp = refuse(StatusCode::UNAUTHORIZED, "unauthorized\n");
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return resp;
    }
    let filters = match filters
        .map_err(|_| "unknown or malformed query parameter".to_string())
        .and_then(|q| q.0.checked())
    {
        Ok(f) => f,
        Err(reason) => {
            tracing::warn!(path = DATA_PATH, reason = %reason, "request refused");
            return refuse(StatusCode::BAD_REQUEST, "bad request: unknown, malformed or too long query parameter\n");
        }
    };
    let Some(path) = state.config().audit.as_ref().map(|a| a.path().to_path_buf()) else {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "no audit log\n");
    };
    let read = tokio::task::spawn_blocking(move || query::open(&path, true).and_then(|c| query::data(&c, &filters)));
    match read.await {
        Ok(Ok(d)) => locked_down(axum::Json(d).into_response()),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "dashboard read failed");
            refuse(StatusCode::INTERNAL_SERVER_ERROR, "the audit log could not be read\n")
        }
        Err(e) => {
            tracing::warn!(error = %e, "dashboard read failed");
            refuse(StatusCode::INTERNAL_SERVER_ERROR, "the audit log could not be read\n")
        }
    }
}
