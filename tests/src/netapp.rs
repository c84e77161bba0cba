//! The server side of `fixtures/sites/netapp/`, a single-page app for the
//! network capture (issue 33). Its credentials are canaries made once per
//! test process ([`creds`]), so a test can search every sink for them:
//!
//! - `GET /netapp/app.js`: the app with the demo password filled in.
//! - `POST /netapp/api/login` (JSON `{username, password}`): the session
//!   cookie `nsid` (HttpOnly), `X-Access-Token` and `X-Id-Token` (a JWT)
//!   headers, and JSON with `access_token`, `refresh_token`, `id_token`
//!   and `beacon_token`.
//! - every other `/netapp/api/…` call needs `Authorization: Bearer
//!   <access>` (401) and the cookie; writes need `X-CSRF-Token` (403).
//!   `GET /csrf`, `GET|POST /items`, `PATCH|DELETE /items/N` (201 for a
//!   new item, 204 for a delete, 404 for item 9999), `GET /profile`,
//!   `POST /events`, `POST /notes` (the body kept, [`notes`]),
//!   `POST /beacon?token=…` (204). `GET /netapp/api/ping` (the bench's
//!   page `many.html`) needs nothing and is not kept.
//! - `GET /netapp/open/session` (the bodies build's page `live.html`):
//!   JSON with the access and refresh tokens, no credentials asked, not
//!   kept; `/netapp/ws`: a WebSocket echo server ([`WS_PATH`]).
//!
//! Every API request the server saw is kept ([`Log::seen`]), per fixture
//! server, so tests running at once do not mix.

use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, header};

use crate::leaks::canary;

/// The app's credentials, canaries of this process.
pub struct Creds {
    pub password: String,
    pub session: String,
    pub access: String,
    pub refresh: String,
    pub csrf: String,
    pub beacon: String,
    /// The JWT's `sid` claim.
    pub jwt_claim: String,
    pub jwt: String,
}

impl Creds {
    /// Every credential value, named.
    pub fn all(&self) -> Vec<(&'static str, &str)> {
        vec![
            ("password", &self.password),
            ("session cookie", &self.session),
            ("access token", &self.access),
            ("refresh token", &self.refresh),
            ("csrf token", &self.csrf),
            ("beacon token", &self.beacon),
            ("jwt claim", &self.jwt_claim),
            ("jwt", &self.jwt),
        ]
    }
}

pub fn creds() -> &'static Creds {
    static CREDS: OnceLock<Creds> = OnceLock::new();
    CREDS.get_or_init(|| {
        let jwt_claim = canary();
        let head = crate::leaks::base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
        let body = crate::leaks::base64url(format!(r#"{{"sub":"ann","sid":"{jwt_claim}"}}"#).as_bytes());
        let sig = crate::leaks::base64url(canary().as_bytes());
        Creds {
            password: canary(),
            session: canary(),
            access: canary(),
            refresh: canary(),
            csrf: canary(),
            beacon: canary(),
            jwt: format!("{head}.{body}.{sig}"),
            jwt_claim,
        }
    })
}

/// What one fixture server's net app saw (each test has its own server;
/// tests run at once in one process and must not count each other's calls).
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Seen>>);

#[derive(Default)]
struct Seen {
    requests: Vec<String>,
    notes: Vec<String>,
}

impl Log {
    fn with<T>(&self, f: impl FnOnce(&mut Seen) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Every API request seen so far: `METHOD /netapp/api/path?query`.
    pub fn seen(&self) -> Vec<String> {
        self.with(|s| s.requests.clone())
    }

    /// Bodies of `POST /notes`.
    pub fn notes(&self) -> Vec<String> {
        self.with(|s| s.notes.clone())
    }
}

/// Whether the fixture server hands `path` to this module.
pub(crate) fn owns(path: &str) -> bool {
    path.starts_with("/netapp/api/") || path.starts_with("/netapp/open/") || path == "/netapp/app.js" || path == WS_PATH
}

/// The WebSocket echo server: says `{"hello":"ann","token":<access>}`
/// first, then answers each text message with `echo: <message>`.
pub const WS_PATH: &str = "/netapp/ws";

async fn echo(mut socket: axum::extract::ws::WebSocket) {
    use axum::extract::ws::Message;
    let hello = format!(r#"{{"hello":"ann","token":"{}"}}"#, creds().access);
    if socket.send(Message::Text(hello.into())).await.is_err() {
        return;
    }
    let bound = std::time::Duration::from_secs(60);
    while let Ok(Some(Ok(m))) = tokio::time::timeout(bound, socket.recv()).await {
        let answer = match m {
            Message::Text(t) => Message::Text(format!("echo: {}", t.as_str()).into()),
            Message::Close(_) => return,
            _ => continue,
        };
        if socket.send(answer).await.is_err() {
            return;
        }
    }
}

fn json(code: StatusCode, body: String, extra: &[(&str, String)]) -> Response<Body> {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = code;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for (n, v) in extra {
        if let (Ok(n), Ok(v)) = (header::HeaderName::try_from(*n), HeaderValue::from_str(v)) {
            h.append(n, v);
        }
    }
    r
}

fn has(req_headers: &axum::http::HeaderMap, name: &str, want: &str) -> bool {
    req_headers.get(name).and_then(|v| v.to_str().ok()).is_some_and(|v| v.contains(want))
}

pub(crate) async fn handle(root: &std::path::Path, log: &Log, req: Request<Body>) -> Response<Body> {
    let c = creds();
    let path = req.uri().path().to_string();
    if path == "/netapp/app.js" {
        let text = std::fs::read_to_string(root.join("netapp/app.js")).unwrap_or_default();
        let mut r = Response::new(Body::from(text.replace("__DEMO_PASSWORD__", &c.password)));
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
        r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return r;
    }
    if path == WS_PATH {
        use axum::extract::FromRequestParts;
        let (mut parts, _) = req.into_parts();
        return match axum::extract::ws::WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
            Ok(ws) => ws.on_upgrade(echo),
            Err(e) => axum::response::IntoResponse::into_response(e),
        };
    }
    if path == "/netapp/open/session" {
        // The bodies build's JSON answer (`live.html`): not kept in `seen`.
        let body = format!(
            r#"{{"user":"ann","plan":"pro","access_token":"{}","nested":{{"refresh_token":"{}"}}}}"#,
            c.access, c.refresh
        );
        return json(StatusCode::OK, body, &[]);
    }
    if path == "/netapp/api/ping" {
        // The bench's many calls (`many.html`): not kept, no credentials.
        return json(StatusCode::OK, r#"{"pong":true}"#.into(), &[]);
    }
    let method = req.method().clone();
    let query = req.uri().query().map(|q| format!("?{q}")).unwrap_or_default();
    log.with(|s| s.requests.push(format!("{method} {path}{query}")));
    let headers = req.headers().clone();
    let body = axum::body::to_bytes(req.into_body(), 64 * 1024).await.unwrap_or_default();
    let body = String::from_utf8_lossy(&body).into_owned();
    let rest = path.strip_prefix("/netapp/api").unwrap_or("");
    if rest == "/login" && method == Method::POST {
        if !body.contains(&c.password) {
            return json(StatusCode::UNAUTHORIZED, r#"{"error":"bad password"}"#.into(), &[]);
        }
        let answer = format!(
            r#"{{"user":"ann","access_token":"{}","refresh_token":"{}","id_token":"{}","beacon_token":"{}"}}"#,
            c.access, c.refresh, c.jwt, c.beacon
        );
        return json(
            StatusCode::OK,
            answer,
            &[
                ("set-cookie", format!("nsid={}; HttpOnly; Path=/netapp; SameSite=Lax", c.session)),
                ("x-access-token", c.access.clone()),
                ("x-id-token", c.jwt.clone()),
            ],
        );
    }
    if rest == "/beacon" && method == Method::POST {
        let ok = query.contains(&c.beacon);
        return json(if ok { StatusCode::NO_CONTENT } else { StatusCode::FORBIDDEN }, String::new(), &[]);
    }
    if !has(&headers, "authorization", &format!("Bearer {}", c.access)) || !has(&headers, "cookie", &c.session) {
        return json(StatusCode::UNAUTHORIZED, r#"{"error":"not signed in"}"#.into(), &[]);
    }
    if method != Method::GET && !has(&headers, "x-csrf-token", &c.csrf) {
        return json(StatusCode::FORBIDDEN, r#"{"error":"csrf"}"#.into(), &[]);
    }
    let segs: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    match (method.as_str(), segs.as_slice()) {
        ("GET", ["csrf"]) => {
            json(StatusCode::OK, format!(r#"{{"csrf":"{}"}}"#, c.csrf), &[("x-csrf-token", c.csrf.clone())])
        }
        ("GET", ["items"]) => json(StatusCode::OK, r#"{"items":[{"id":1,"title":"Milk"}],"pages":10}"#.into(), &[]),
        ("POST", ["items"]) => {
            json(StatusCode::CREATED, r#"{"id":42}"#.into(), &[("location", "/netapp/api/items/42".into())])
        }
        ("GET", ["items", "9999"]) | ("PATCH", ["items", "9999"]) => {
            json(StatusCode::NOT_FOUND, r#"{"error":"no such item"}"#.into(), &[])
        }
        ("GET", ["items", _]) | ("PATCH", ["items", _]) => json(StatusCode::OK, r#"{"id":1,"done":true}"#.into(), &[]),
        ("DELETE", ["items", _]) => json(StatusCode::NO_CONTENT, String::new(), &[]),
        ("GET", ["profile"]) => json(StatusCode::OK, r#"{"name":"Ann","plan":"pro"}"#.into(), &[]),
        ("POST", ["events"]) => json(StatusCode::NO_CONTENT, String::new(), &[]),
        ("POST", ["notes"]) => {
            log.with(|s| s.notes.push(body));
            json(StatusCode::CREATED, r#"{"saved":true}"#.into(), &[])
        }
        _ => json(StatusCode::NOT_FOUND, r#"{"error":"no such route"}"#.into(), &[]),
    }
}

/// Runs the third-party HAR 1.2 validator (npm `har-validator`, installed
/// by `cargo xtask build` into `target/xtask-npm/`) on the file at `path`.
pub fn validate_har(path: &std::path::Path) -> Result<(), String> {
    let module = crate::workspace_root().join("target/xtask-npm/node_modules/har-validator");
    if !module.join("package.json").exists() {
        return Err(format!("har-validator is not installed at {} (run `cargo xtask build`)", module.display()));
    }
    let script = "const [m, p] = process.argv.slice(1); \
        const har = JSON.parse(require('fs').readFileSync(p, 'utf8')); \
        require(m).har(har).then(() => console.log('valid'), (e) => { \
          console.error(JSON.stringify(e.errors || String(e), null, 1)); process.exit(1); });";
    let out = std::process::Command::new("node")
        .arg("-e")
        .arg(script)
        .arg(&module)
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if out.status.success() && String::from_utf8_lossy(&out.stdout).contains("valid") {
        Ok(())
    } else {
        Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    }
}
