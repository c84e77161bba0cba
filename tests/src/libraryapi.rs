//! The library API: a fixture JSON API of twelve operations for the
//! `api learn` tests, with the single-page app of `fixtures/sites/library/`
//! served next to it (same origin). Its documentation, as its authors
//! wrote it, is `fixtures/forge/library.expected.json`.
//!
//! Integer (`/api/books/{bookId}`), UUID (`/api/authors/{authorId}`,
//! `/api/loans/{loanId}`) and slug (`/api/shelves/{shelfSlug}`) parameters;
//! nested objects and arrays of objects; query parameters; JSON bodies;
//! 201 and 204 answers; `POST /api/auth/login` sets a session cookie and
//! returns a bearer token (JWT-shaped) and a CSRF token. Every other call
//! needs the bearer token or the cookie (else 401); writes made with the
//! cookie alone also need `X-CSRF-Token`. `POST /api/collect` is the app's
//! analytics beacon (answered 204, to be left out by the learner).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{HeaderMap, Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};

/// The account the app logs in with.
pub const USERNAME: &str = "reader";
pub const PASSWORD: &str = "correct-horse-battery-staple";

pub const AUTHORS: &[(&str, &str, i64)] = &[
    ("3f2504e0-4f89-41d3-9a0c-0305e82c3301", "Ursula K. Le Guin", 1929),
    ("6ba7b810-9dad-41d1-80b4-00c04fd430c8", "Terry Pratchett", 1948),
    ("9c5b94b1-35ad-49bb-b118-8e8fc24abf80", "Octavia E. Butler", 1947),
];

/// id, title, author index, shelf slug, published.
pub const BOOKS: &[(i64, &str, usize, &str, &str)] = &[
    (1, "A Wizard of Earthsea", 0, "fantasy", "1968-11-01"),
    (2, "The Left Hand of Darkness", 0, "science-fiction", "1969-03-01"),
    (3, "The Dispossessed", 0, "science-fiction", "1974-05-01"),
    (4, "Guards! Guards!", 1, "fantasy", "1989-11-01"),
    (5, "Small Gods", 1, "fantasy", "1992-05-01"),
    (6, "Kindred", 2, "classics", "1979-06-01"),
    (7, "Parable of the Sower", 2, "science-fiction", "1993-10-01"),
    (8, "Dawn", 2, "science-fiction", "1987-05-01"),
    (9, "Mort", 1, "fantasy", "1987-11-12"),
    (10, "The Lathe of Heaven", 0, "classics", "1971-01-01"),
    (11, "Going Postal", 1, "humour", "2004-09-25"),
    (12, "Wild Seed", 2, "classics", "1980-01-01"),
];

pub const SHELVES: &[(&str, &str)] =
    &[("fantasy", "Fantasy"), ("science-fiction", "Science fiction"), ("classics", "Classics"), ("humour", "Humour")];

#[derive(Default)]
struct State {
    sessions: BTreeMap<String, String>,
    tokens: Vec<String>,
    csrf: Vec<String>,
    loans: BTreeMap<String, (i64, String, String)>,
    reviews: BTreeMap<i64, Vec<Value>>,
    name: String,
    counter: u64,
}

/// A running library server; stops on drop.
pub struct LibraryServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LibraryServer {
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the library server");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let addr = listener.local_addr().expect("library server address");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let state = Arc::new(Mutex::new(State { name: "Robin Reader".into(), ..State::default() }));
        let kept = state.clone();
        let root = crate::sites_dir().join("library");
        let thread = std::thread::Builder::new()
            .name("library-server".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("library runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let app = Router::new().fallback(move |req: Request<Body>| {
                        let state = state.clone();
                        let root = root.clone();
                        async move { handle(&root, &state, req).await }
                    });
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async move {
                            let _ = rx.await;
                        })
                        .await;
                });
            })
            .expect("spawn the library server");
        LibraryServer { addr, state: kept, shutdown: Some(tx), thread: Some(thread) }
    }

    /// `http://127.0.0.1:PORT`
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `127.0.0.1:PORT`
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Every credential the server has handed out so far: bearer tokens,
    /// CSRF tokens and session cookies (for leak scans).
    pub fn issued(&self) -> Vec<String> {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.tokens.iter().chain(&st.csrf).chain(st.sessions.keys()).cloned().collect()
    }
}

impl Drop for LibraryServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn json_answer(status: StatusCode, v: &Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from(v.to_string()))
        .unwrap_or_default()
}

fn status_only(status: StatusCode) -> Response<Body> {
    Response::builder().status(status).header(header::CACHE_CONTROL, "no-store").body(Body::empty()).unwrap_or_default()
}

fn error(status: StatusCode, msg: &str) -> Response<Body> {
    json_answer(status, &json!({ "error": msg }))
}

async fn handle(root: &std::path::Path, state: &Mutex<State>, req: Request<Body>) -> Response<Body> {
    let path = req.uri().path().to_string();
    if !path.starts_with("/api/") {
        return static_file(root, &path);
    }
    let method = req.method().clone();
    let query: BTreeMap<String, String> =
        req.uri().query().map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default();
    let headers = req.headers().clone();
    let body = to_bytes(req.into_body(), 1 << 20).await.unwrap_or_default();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
    let segs: Vec<&str> = path.trim_start_matches("/api/").split('/').filter(|s| !s.is_empty()).collect();
    if method == Method::POST && segs == ["collect"] {
        return status_only(StatusCode::NO_CONTENT);
    }
    if method == Method::POST && segs == ["auth", "login"] {
        if body["username"] != USERNAME || body["password"] != PASSWORD {
            return error(StatusCode::UNAUTHORIZED, "wrong username or password");
        }
        st.counter += 1;
        let n = st.counter;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let token = format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWFkZXIiLCJuIjo{n}fQ.{nanos:x}Sig{n}");
        let csrf = format!("csrf{nanos:x}{n}");
        let session = format!("s{nanos:x}q{n}");
        st.tokens.push(token.clone());
        st.csrf.push(csrf.clone());
        st.sessions.insert(session.clone(), USERNAME.into());
        let user = user(&st);
        let mut r = json_answer(StatusCode::OK, &json!({ "token": token, "csrf": csrf, "user": user }));
        if let Ok(v) = format!("lib_session={session}; Path=/; HttpOnly; SameSite=Lax").parse() {
            r.headers_mut().insert(header::SET_COOKIE, v);
        }
        return r;
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| st.tokens.iter().any(|x| x == t));
    let cookie = cookie_session(&headers).is_some_and(|s| st.sessions.contains_key(&s));
    if !bearer && !cookie {
        return error(StatusCode::UNAUTHORIZED, "sign in first");
    }
    if method != Method::GET && !bearer {
        let ok =
            headers.get("x-csrf-token").and_then(|v| v.to_str().ok()).is_some_and(|c| st.csrf.iter().any(|x| x == c));
        if !ok {
            return error(StatusCode::FORBIDDEN, "missing CSRF token");
        }
    }
    route(&mut st, &method, &segs, &query, &body)
}

fn cookie_session(h: &HeaderMap) -> Option<String> {
    let c = h.get(header::COOKIE)?.to_str().ok()?;
    c.split(';').filter_map(|p| p.trim().split_once('=')).find(|(k, _)| *k == "lib_session").map(|(_, v)| v.to_string())
}

fn user(st: &State) -> Value {
    json!({ "id": 42, "name": st.name, "email": "robin@example.org", "memberSince": "2019-04-02" })
}

fn author_ref(i: usize) -> Value {
    json!({ "id": AUTHORS[i].0, "name": AUTHORS[i].1 })
}

fn slug(title: &str) -> String {
    let s: String =
        title.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    s.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
}

fn summary(b: &(i64, &str, usize, &str, &str)) -> Value {
    let tags: Vec<&str> = vec![b.3, if b.0 % 2 == 0 { "award" } else { "series" }];
    json!({ "id": b.0, "title": b.1, "slug": slug(b.1), "author": author_ref(b.2), "tags": tags,
            "published": b.4, "available": b.0 % 3 != 0 })
}

fn shelf_name(slug: &str) -> &'static str {
    SHELVES.iter().find(|s| s.0 == slug).map_or("Other", |s| s.1)
}

fn detail(b: &(i64, &str, usize, &str, &str)) -> Value {
    let mut v = summary(b);
    v["isbn"] = json!(format!("978-0-00-{:06}-{}", b.0 * 1111, b.0 % 10));
    v["pages"] = json!(180 + b.0 * 17);
    let statuses = ["available", "loaned", "repair"];
    v["copies"] =
        json!((0..(1 + b.0 % 3))
        .map(|i| json!({ "barcode": format!("LIB-{:04}-{i}", b.0), "status": statuses[((b.0 + i) % 3) as usize] }))
        .collect::<Vec<_>>());
    v["shelf"] = json!({ "slug": b.3, "name": shelf_name(b.3) });
    v
}

fn loan_json(id: &str, l: &(i64, String, String)) -> Value {
    json!({ "id": id, "bookId": l.0, "due": l.1, "status": l.2 })
}

fn route(
    st: &mut State,
    method: &Method,
    segs: &[&str],
    query: &BTreeMap<String, String>,
    body: &Value,
) -> Response<Body> {
    let book = |id: &str| id.parse::<i64>().ok().and_then(|n| BOOKS.iter().find(|b| b.0 == n));
    match (method.as_str(), segs) {
        ("GET", ["me"]) => json_answer(StatusCode::OK, &user(st)),
        ("PATCH", ["me"]) => match body["name"].as_str() {
            Some(n) if !n.is_empty() => {
                st.name = n.to_string();
                json_answer(StatusCode::OK, &user(st))
            }
            _ => error(StatusCode::BAD_REQUEST, "name is required"),
        },
        ("GET", ["books"]) => {
            let q = query.get("q").map(|s| s.to_ascii_lowercase()).unwrap_or_default();
            let limit = query.get("limit").and_then(|s| s.parse::<usize>().ok()).unwrap_or(5).clamp(1, 50);
            let page = query.get("page").and_then(|s| s.parse::<usize>().ok()).unwrap_or(1).max(1);
            let hits: Vec<Value> =
                BOOKS.iter().filter(|b| b.1.to_ascii_lowercase().contains(&q)).map(summary).collect();
            let items: Vec<Value> = hits.iter().skip((page - 1) * limit).take(limit).cloned().collect();
            json_answer(StatusCode::OK, &json!({ "items": items, "total": hits.len(), "page": page }))
        }
        ("GET", ["books", id]) => match book(id) {
            Some(b) => json_answer(StatusCode::OK, &detail(b)),
            None => error(StatusCode::NOT_FOUND, "no such book"),
        },
        ("GET", ["books", id, "reviews"]) => match book(id) {
            Some(b) => {
                let mut rs = st.reviews.get(&b.0).cloned().unwrap_or_else(|| {
                    vec![json!({ "id": b.0 * 100, "rating": 4, "text": "Lovely.", "reviewer": { "name": "Sam" },
                                 "created": "2026-01-02T10:00:00Z" })]
                });
                if query.get("sort").map(String::as_str) == Some("rating") {
                    rs.sort_by_key(|r| std::cmp::Reverse(r["rating"].as_i64().unwrap_or(0)));
                }
                json_answer(StatusCode::OK, &Value::Array(rs))
            }
            None => error(StatusCode::NOT_FOUND, "no such book"),
        },
        ("POST", ["books", id, "reviews"]) => match (book(id), body["rating"].as_i64(), body["text"].as_str()) {
            (Some(b), Some(r), Some(t)) if (1..=5).contains(&r) => {
                st.counter += 1;
                let review = json!({ "id": 1000 + st.counter, "rating": r, "text": t,
                                     "reviewer": { "name": st.name }, "created": "2026-12-04T15:00:00Z" });
                st.reviews.entry(b.0).or_default().push(review.clone());
                json_answer(StatusCode::CREATED, &review)
            }
            (None, _, _) => error(StatusCode::NOT_FOUND, "no such book"),
            _ => error(StatusCode::BAD_REQUEST, "rating (1-5) and text are required"),
        },
        ("GET", ["authors", id]) => match AUTHORS.iter().position(|a| a.0 == *id) {
            Some(i) => {
                let books: Vec<Value> =
                    BOOKS.iter().filter(|b| b.2 == i).map(|b| json!({ "id": b.0, "title": b.1 })).collect();
                json_answer(
                    StatusCode::OK,
                    &json!({ "id": AUTHORS[i].0, "name": AUTHORS[i].1, "born": AUTHORS[i].2, "books": books }),
                )
            }
            None => error(StatusCode::NOT_FOUND, "no such author"),
        },
        ("GET", ["shelves", s]) => match SHELVES.iter().find(|x| x.0 == *s) {
            Some(sh) => {
                let books: Vec<Value> =
                    BOOKS.iter().filter(|b| b.3 == sh.0).map(|b| json!({ "id": b.0, "title": b.1 })).collect();
                json_answer(
                    StatusCode::OK,
                    &json!({ "slug": sh.0, "name": sh.1, "description": format!("Books filed under {}.", sh.1), "books": books }),
                )
            }
            None => error(StatusCode::NOT_FOUND, "no such shelf"),
        },
        ("GET", ["loans"]) => {
            let want = query.get("status");
            let v: Vec<Value> = st
                .loans
                .iter()
                .filter(|(_, l)| want.is_none_or(|w| *w == l.2))
                .map(|(id, l)| loan_json(id, l))
                .collect();
            json_answer(StatusCode::OK, &Value::Array(v))
        }
        ("POST", ["loans"]) => match body["bookId"].as_i64().and_then(|n| book(&n.to_string())) {
            Some(b) => {
                st.counter += 1;
                let id = format!("00000000-0000-4000-8000-{:012x}", st.counter);
                let days = body["days"].as_i64().unwrap_or(14).clamp(1, 60);
                let l = (b.0, format!("2026-12-{:02}", (4 + days).min(31)), "active".to_string());
                let v = loan_json(&id, &l);
                st.loans.insert(id, l);
                json_answer(StatusCode::CREATED, &v)
            }
            None => error(StatusCode::BAD_REQUEST, "bookId must name a book"),
        },
        ("DELETE", ["loans", id]) => match st.loans.get_mut(*id) {
            Some(l) => {
                l.2 = "returned".into();
                status_only(StatusCode::NO_CONTENT)
            }
            None => error(StatusCode::NOT_FOUND, "no such loan"),
        },
        _ => error(StatusCode::NOT_FOUND, "no such endpoint"),
    }
}

fn static_file(root: &std::path::Path, path: &str) -> Response<Body> {
    let rel = path.trim_start_matches('/');
    let rel = if rel.is_empty() { "index.html" } else { rel };
    if rel.split('/').any(|s| s == ".." || s.starts_with('.')) {
        return status_only(StatusCode::NOT_FOUND);
    }
    let file: PathBuf = root.join(rel);
    let Ok(bytes) = std::fs::read(&file) else { return status_only(StatusCode::NOT_FOUND) };
    let ct = match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, ct)
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from(bytes))
        .unwrap_or_default()
}
