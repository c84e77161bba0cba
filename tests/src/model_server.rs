//! A scripted model server for the model tier's contract: it speaks
//! Ollama's `/api/chat` and OpenAI's `/v1/chat/completions` on 127.0.0.1,
//! records every request body it received ([`ScriptedModel::requests`]),
//! and answers from a queue of [`Answer`]s (the last one repeats).
//!
//! Not a stand-in for a model's quality: the tests that judge picks run
//! against a real model server (`tests/model-server/`); this one lets a
//! test make the model say exactly the wrong thing.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What the scripted model answers next.
#[derive(Debug, Clone)]
pub enum Answer {
    /// This text as the model's content, whatever it is.
    Raw(String),
    /// `{"ref": r}` for the first candidate line that contains `needle`
    /// (`"none"` when no line does).
    RefOf(String),
    /// A goal step: `op`, the ref of the first line containing `needle`
    /// (or `"none"` for an empty needle), `input`.
    Step { op: String, needle: String, input: String },
    /// Answer only after this long (a slow model).
    Slow(Duration),
    /// HTTP 500.
    Fail,
}

#[derive(Default)]
struct Script {
    answers: VecDeque<Answer>,
    requests: Vec<(String, Value)>,
}

type Shared = Arc<Mutex<Script>>;

/// A running scripted model server; stops on drop.
pub struct ScriptedModel {
    addr: SocketAddr,
    script: Shared,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The ref on the candidate line of `user` that contains `needle`.
pub fn ref_on_line(user: &str, needle: &str) -> Option<String> {
    user.lines()
        .filter(|l| {
            l.starts_with('e') && l.split(' ').next().is_some_and(|r| r[1..].bytes().all(|b| b.is_ascii_digit()))
        })
        .find(|l| l.contains(needle))
        .and_then(|l| l.split(' ').next())
        .map(str::to_string)
}

/// The user message of a request body (either provider).
pub fn user_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The schema of a request body (either provider).
pub fn schema(body: &Value) -> Value {
    if body.get("format").is_some() {
        body["format"].clone()
    } else {
        body["response_format"]["json_schema"]["schema"].clone()
    }
}

async fn handle(State(script): State<Shared>, uri: Uri, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let user = user_message(&request);
    let answer = {
        let mut s = script.lock().unwrap_or_else(|p| p.into_inner());
        s.requests.push((uri.path().to_string(), request.clone()));
        if s.answers.len() > 1 { s.answers.pop_front() } else { s.answers.front().cloned() }
    };
    let content = match answer.unwrap_or(Answer::Raw("{\"ref\":\"none\"}".into())) {
        Answer::Raw(t) => t,
        Answer::RefOf(needle) => {
            json!({ "ref": ref_on_line(&user, &needle).unwrap_or_else(|| "none".into()) }).to_string()
        }
        Answer::Step { op, needle, input } => {
            let r =
                if needle.is_empty() { "none".into() } else { ref_on_line(&user, &needle).unwrap_or("none".into()) };
            json!({ "op": op, "ref": r, "input": input }).to_string()
        }
        Answer::Slow(d) => {
            tokio::time::sleep(d).await;
            "{\"ref\":\"none\"}".into()
        }
        Answer::Fail => return (StatusCode::INTERNAL_SERVER_ERROR, "scripted failure").into_response(),
    };
    let reply = if uri.path().ends_with("/api/chat") {
        json!({ "message": { "role": "assistant", "content": content }, "done": true, "prompt_eval_count": 1 })
    } else {
        json!({ "choices": [{ "message": { "role": "assistant", "content": content } }], "usage": { "prompt_tokens": 1 } })
    };
    axum::Json(reply).into_response()
}

impl ScriptedModel {
    pub fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the scripted model");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let addr = listener.local_addr().expect("scripted model address");
        let script: Shared = Arc::default();
        let state = script.clone();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("scripted-model".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("model runtime");
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let app = Router::new().fallback(handle).with_state(state);
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async move {
                            let _ = rx.await;
                        })
                        .await;
                });
            })
            .expect("spawn the scripted model thread");
        ScriptedModel { addr, script, shutdown: Some(tx), thread: Some(thread) }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    /// Replaces the queue of answers.
    pub fn answer(&self, answers: Vec<Answer>) {
        self.script.lock().unwrap_or_else(|p| p.into_inner()).answers = answers.into();
    }

    /// Every request received so far: (path, body).
    pub fn requests(&self) -> Vec<(String, Value)> {
        self.script.lock().unwrap_or_else(|p| p.into_inner()).requests.clone()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How long the real model server may take to load the model and listen.
pub const REAL_MODEL_STARTUP: Duration = Duration::from_secs(180);

/// `CHAPERONE_TEST_MODEL`, else `<workspace>/target/model-tier/gemma-3-270m-q4_k_m.gguf`
/// (what `cargo xtask test` / `cargo xtask tools --model` install).
pub fn real_model_gguf() -> std::path::PathBuf {
    match std::env::var_os("CHAPERONE_TEST_MODEL") {
        Some(v) if !v.is_empty() => v.into(),
        _ => crate::workspace_root().join("target/model-tier/gemma-3-270m-q4_k_m.gguf"),
    }
}

/// `CHAPERONE_MODEL_SERVER_DIR`, else `<workspace>/target/model-tier/server`:
/// `server.mjs` beside the `node_modules` holding node-llama-cpp.
pub fn real_model_server_dir() -> std::path::PathBuf {
    match std::env::var_os("CHAPERONE_MODEL_SERVER_DIR") {
        Some(v) if !v.is_empty() => v.into(),
        _ => crate::workspace_root().join("target/model-tier/server"),
    }
}

/// The real model server (`tests/model-server/server.mjs`: llama.cpp with
/// a small GGUF, OpenAI-compatible, on 127.0.0.1), started as a child
/// process and killed on drop. It also exits by itself when this process
/// dies (its stdin is a pipe from here).
pub struct RealModel {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

/// The model's name on the real server (any name; one model is loaded).
pub const REAL_MODEL_NAME: &str = "gemma-3-270m";

impl RealModel {
    /// Starts the server and waits (at most [`REAL_MODEL_STARTUP`]) until
    /// it listens. `Err` says what is missing or how it failed.
    pub async fn start() -> anyhow::Result<RealModel> {
        use anyhow::{Context, bail};
        let gguf = real_model_gguf();
        let dir = real_model_server_dir();
        let script = dir.join("server.mjs");
        if !gguf.is_file() || !script.is_file() || !dir.join("node_modules/node-llama-cpp").is_dir() {
            bail!(
                "the model tier's test model is not installed (looked for {} and {}): run `cargo xtask tools --model` \
                 (or `cargo xtask test`, which installs it), or set CHAPERONE_TEST_MODEL and CHAPERONE_MODEL_SERVER_DIR",
                gguf.display(),
                script.display()
            );
        }
        let tmp = crate::temp_dir("model-server");
        let port_file = tmp.path().join("port");
        let log = std::fs::File::create(tmp.path().join("server.log"))?;
        let child = std::process::Command::new("node")
            .arg(&script)
            .arg(&gguf)
            .arg(&port_file)
            .current_dir(&dir)
            .stdin(std::process::Stdio::piped())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting node (the model tier's test server needs node ≥ 20)")?;
        let mut model = RealModel { child, port: 0, _dir: tmp };
        let started = std::time::Instant::now();
        loop {
            if let Some(p) = std::fs::read_to_string(&port_file).ok().and_then(|s| s.trim().parse::<u16>().ok()) {
                model.port = p;
                return Ok(model);
            }
            if let Some(status) = model.child.try_wait()? {
                bail!("the model server exited ({status}) before listening: {}", model.log_tail());
            }
            if started.elapsed() > REAL_MODEL_STARTUP {
                bail!("the model server did not listen within {REAL_MODEL_STARTUP:?}: {}", model.log_tail());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The end of the server's output (for failure messages).
    pub fn log_tail(&self) -> String {
        crate::tail(&self._dir.path().join("server.log"), 20)
    }
}

impl Drop for RealModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
