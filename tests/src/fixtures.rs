//! The fixture server: serves `fixtures/sites/` from disk on 127.0.0.1:0.
//!
//! URL `/<site>/<path>` maps to `fixtures/sites/<site>/<path>`; a directory
//! maps to its `index.html`. Headers: every `_headers` file on the way from
//! `fixtures/sites/` down to the file's directory adds `Name: value` lines
//! to the response (deeper files override the same header name). `_headers`
//! files themselves, dot-files and `..` are never served. Every response
//! carries `Cache-Control: no-store`.
//!
//! A `POST` (a submitted form) is answered with the file at its path, like
//! a `GET`, and its body is kept: [`FixtureServer::posted`] lets a test
//! check what a page really sent. A `POST` to a path with a `receive`
//! segment (the uploads of `fixtures/sites/files/`) may be up to 32 MiB and
//! is answered `ok`.
//!
//! `GET …/dl?size=N&cd=HEADER` is a download: `N` bytes of
//! [`download_bytes`] with `Content-Disposition: HEADER` as given
//! (percent-decoded), so tests can serve hostile file names; `&chunked=1`
//! streams it with no `Content-Length`. A `POST` to a `dl` path is answered
//! the same way (a form answered with a download).

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, header};

/// A running fixture server; stops on drop.
pub struct FixtureServer {
    addr: SocketAddr,
    posted: Posted,
    netapp: crate::netapp::Log,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FixtureServer {
    /// Serves `fixtures/sites/` of this workspace.
    pub fn start() -> Self {
        Self::serve(crate::sites_dir())
    }

    /// Serves `root` (a directory laid out like `fixtures/sites/`). The
    /// server runs on its own thread and runtime, so it works from any test.
    pub fn serve(root: PathBuf) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the fixture server");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let addr = listener.local_addr().expect("fixture server address");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let posted = Posted::default();
        let log = posted.clone();
        let netapp = crate::netapp::Log::default();
        let net_log = netapp.clone();
        let thread = std::thread::Builder::new()
            .name("fixture-server".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("fixture runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let app = Router::new().fallback(move |req: Request<Body>| {
                        let root = root.clone();
                        let log = log.clone();
                        let net_log = net_log.clone();
                        async move { handle(&root, &log, &net_log, req).await }
                    });
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async move {
                            let _ = rx.await;
                        })
                        .await;
                });
            })
            .expect("spawn the fixture server thread");
        FixtureServer { addr, posted, netapp, shutdown: Some(tx), thread: Some(thread) }
    }

    /// Every `POST` so far: `(path, body)`.
    pub fn posted(&self) -> Vec<Post> {
        self.posted.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What the net app of this server saw (`crate::netapp`).
    pub fn netapp(&self) -> &crate::netapp::Log {
        &self.netapp
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT`
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    /// The absolute URL of `path` (e.g. `/basic/index.html`).
    pub fn url(&self, path: &str) -> String {
        let path = path.strip_prefix('/').unwrap_or(path);
        format!("{}/{}", self.origin(), path)
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn status(code: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Body::from(text.to_string()));
    *r.status_mut() = code;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Maps a URL path to a file under `root`, refusing anything that could
/// leave it or reveal a `_headers`/dot file.
pub(crate) fn resolve(root: &Path, url_path: &str) -> Option<PathBuf> {
    let mut rel = PathBuf::new();
    for seg in url_path.split('/') {
        if seg.is_empty() {
            continue;
        }
        if seg.starts_with('.') || seg == "_headers" || seg.contains('\\') || seg.contains('%') {
            return None;
        }
        rel.push(seg);
    }
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let mut full = root.join(&rel);
    if full.is_dir() {
        full.push("index.html");
    }
    full.is_file().then_some(full)
}

/// The headers the `_headers` files between `root` and `file` add.
pub(crate) fn headers_for(root: &Path, file: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let Ok(rel) = file.strip_prefix(root) else { return out };
    let mut dir = root.to_path_buf();
    let mut dirs = vec![dir.clone()];
    if let Some(parent) = rel.parent() {
        for c in parent.components() {
            dir.push(c);
            dirs.push(dir.clone());
        }
    }
    for d in dirs {
        let Ok(text) = std::fs::read_to_string(d.join("_headers")) else { continue };
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some((name, value)) = line.split_once(':') {
                let (name, value) = (name.trim().to_string(), value.trim().to_string());
                out.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                out.push((name, value));
            }
        }
    }
    out
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// One `POST`: its path and body.
type Post = (String, Vec<u8>);

/// Bodies of `POST`s, in arrival order.
#[derive(Clone, Default)]
struct Posted(Arc<Mutex<Vec<Post>>>);

/// Largest `POST` body kept.
const MAX_POST_BYTES: usize = 64 * 1024;
/// Largest upload body kept (a `receive` path).
const MAX_UPLOAD_BYTES: usize = 32 * 1024 * 1024;
/// Largest generated download.
const MAX_DOWNLOAD_BYTES: usize = 64 * 1024 * 1024;

/// The bytes of a generated download of `size` bytes (a fixed pattern,
/// so a test can hash what was served).
pub fn download_bytes(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(31).wrapping_add(i / 251) % 256) as u8).collect()
}

/// `…/dl?size=N&cd=HEADER` (see the module docs).
fn download(req: &Request<Body>) -> Response<Body> {
    let query = req.uri().query().unwrap_or("");
    let pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let size = get("size").and_then(|s| s.parse::<usize>().ok()).unwrap_or(0).min(MAX_DOWNLOAD_BYTES);
    // `chunked=1`: streamed in 64 KiB pieces with no Content-Length, so
    // only the bytes received tell how large it is.
    let mut resp = if get("chunked").as_deref() == Some("1") {
        let bytes = download_bytes(size);
        let pieces: Vec<Result<Vec<u8>, std::io::Error>> = bytes.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
        Response::new(Body::from_stream(futures_util::stream::iter(pieces)))
    } else {
        Response::new(Body::from(download_bytes(size)))
    };
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(v) = get("cd").and_then(|cd| HeaderValue::from_bytes(cd.as_bytes()).ok()) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    resp
}

async fn handle(root: &Path, posted: &Posted, net: &crate::netapp::Log, req: Request<Body>) -> Response<Body> {
    // The net app's API (`netapp.rs`).
    if crate::netapp::owns(req.uri().path()) {
        return crate::netapp::handle(root, net, req).await;
    }
    if req.method() == Method::POST {
        let path = req.uri().path().to_string();
        let uri = req.uri().clone();
        let upload = path.split('/').any(|s| s == "receive");
        let limit = if upload { MAX_UPLOAD_BYTES } else { MAX_POST_BYTES };
        let Ok(body) = axum::body::to_bytes(req.into_body(), limit).await else {
            return status(StatusCode::PAYLOAD_TOO_LARGE, "body too large");
        };
        posted.0.lock().unwrap_or_else(|p| p.into_inner()).push((path.clone(), body.to_vec()));
        if upload {
            return status(StatusCode::OK, "ok");
        }
        if path.rsplit('/').next() == Some("dl") {
            // A form answered with a download.
            let get = Request::builder().method(Method::GET).uri(uri).body(Body::empty()).expect("a GET request");
            return download(&get);
        }
        let get = Request::builder().method(Method::GET).uri(path).body(Body::empty()).expect("a GET request");
        return serve_file(root, get).await;
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return status(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    }
    if req.uri().path().rsplit('/').next() == Some("dl") {
        return download(&req);
    }
    serve_file(root, req).await
}

async fn serve_file(root: &Path, req: Request<Body>) -> Response<Body> {
    let Some(file) = resolve(root, req.uri().path()) else {
        return status(StatusCode::NOT_FOUND, "not found");
    };
    let Ok(bytes) = tokio::fs::read(&file).await else {
        return status(StatusCode::NOT_FOUND, "not found");
    };
    let body = if req.method() == Method::HEAD { Body::empty() } else { Body::from(bytes) };
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(&file)));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    for (name, value) in headers_for(root, &file) {
        if let (Ok(n), Ok(v)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(&value)) {
            h.insert(n, v);
        }
    }
    resp
}
