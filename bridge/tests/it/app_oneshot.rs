//! `app(state)` works without a socket, through `tower::ServiceExt::oneshot`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use bridge::ServeConfig;
use bridge::home::Tokens;
use bridge::server::AppState;
use http_body_util::BodyExt;
use tower::ServiceExt;

fn state() -> AppState {
    AppState::new(ServeConfig::new(Tokens::generate().unwrap()), 4321)
}

#[tokio::test]
async fn guards_and_status_through_oneshot() {
    let s = state();
    let token = s.config().tokens.mcp.expose().to_string();
    let req = |method: &str, path: &str, host: Option<&str>| {
        let mut b = Request::builder().method(method).uri(path).header("Authorization", format!("Bearer {token}"));
        if let Some(h) = host {
            b = b.header("Host", h);
        }
        b.body(Body::empty()).unwrap()
    };

    let r = bridge::app(s.clone()).oneshot(req("GET", "/status", None)).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = bridge::app(s.clone()).oneshot(req("GET", "/status", Some("127.0.0.1:1234"))).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = bridge::app(s.clone()).oneshot(req("OPTIONS", "/mcp", Some("localhost:4321"))).await.unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    let r = bridge::app(s.clone()).oneshot(req("GET", "/nothing", Some("localhost:4321"))).await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);

    let r = bridge::app(s.clone()).oneshot(req("GET", "/status", Some("localhost:4321"))).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let body = r.into_body().collect().await.unwrap().to_bytes();
    let status: shared::protocol::BridgeStatus = serde_json::from_slice(&body).unwrap();
    assert_eq!(status.port, 4321);
    assert_eq!(s.mcp_handlers_created(), 0);
}
