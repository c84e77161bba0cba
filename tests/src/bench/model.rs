//! The model tier suite (issue 35): `browser_act` with the real test model
//! (`tests/model-server/`: llama.cpp running Gemma 3 270M, what `cargo
//! xtask test` uses) on a fixed set of intents over the fixture pages.
//!
//! A recording proxy sits between the daemon and the model server
//! ([`ModelRig`]), so every figure comes from what was really sent and
//! answered:
//! - **accuracy**: the ref the model answered against the candidate line
//!   of the meant element (role and name), beside the lexical ranker's own
//!   first candidate (what a pick without any model would be) and whether
//!   the meant element was among the ≤ 30 candidates at all;
//! - **latency**: the model call (p50, p90) and the whole `browser_act`;
//! - **tokens** (o200k_base, what a cloud agent pays): the full
//!   interactive snapshot an agent would otherwise read, against what the
//!   agent sends and reads for one `browser_act` (its arguments and the
//!   result); and the prompt the local model read (o200k and the model's
//!   own count), which stays on the machine.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tests::model_server::{REAL_MODEL_NAME, RealModel, ref_on_line, user_message};

use super::Bench;
use super::pages::{self, card_name, row_link_name};
use super::playwright::Tokens;
use super::report::{Row, Suite};
use super::stats::Stats;

/// Seconds one model call may take (below the bench client's 120 s).
pub const MODEL_TIMEOUT_SECS: u32 = 100;

/// One request the daemon sent to the model server and its answer.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub request: Value,
    pub reply: Value,
    pub millis: f64,
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    http: reqwest::Client,
    log: Arc<Mutex<Vec<Exchange>>>,
}

/// The real model server and the recording proxy in front of it.
pub struct ModelRig {
    pub _model: RealModel,
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Exchange>>>,
    _thread: std::thread::JoinHandle<()>,
}

async fn forward(State(s): State<ProxyState>, uri: Uri, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let started = Instant::now();
    let url = format!("{}{}", s.upstream, uri.path());
    let answer = s.http.post(url).header("content-type", "application/json").body(body).send().await;
    let (status, bytes) = match answer {
        Ok(r) => (r.status(), r.bytes().await.unwrap_or_default()),
        Err(_) => (reqwest::StatusCode::BAD_GATEWAY, Bytes::new()),
    };
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    let reply: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    s.log.lock().unwrap_or_else(|p| p.into_inner()).push(Exchange { request, reply, millis });
    let status = StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    (status, [("content-type", "application/json")], bytes).into_response()
}

impl ModelRig {
    pub async fn start() -> Result<ModelRig> {
        let model = RealModel::start().await?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let log: Arc<Mutex<Vec<Exchange>>> = Arc::default();
        let state = ProxyState {
            upstream: model.url(),
            http: reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(600)).build()?,
            log: log.clone(),
        };
        let thread = std::thread::Builder::new().name("model-proxy".into()).spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("proxy runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("proxy listener");
                let _ = axum::serve(listener, Router::new().fallback(forward).with_state(state)).await;
            });
        })?;
        Ok(ModelRig { _model: model, addr, log, _thread: thread })
    }

    /// The daemon's `[model]` section, pointing at the proxy.
    pub fn config_section(&self) -> String {
        format!(
            "[model]\nprovider = \"openai\"\nurl = \"http://127.0.0.1:{}/v1\"\nname = \"{REAL_MODEL_NAME}\"\n\
             max_calls_per_action = 1\nmax_calls_per_session = 100000\ntimeout_secs = {MODEL_TIMEOUT_SECS}\n",
            self.addr.port()
        )
    }

    fn exchanges(&self) -> usize {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    fn last_since(&self, before: usize) -> Option<Exchange> {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.len() > before { log.last().cloned() } else { None }
    }
}

/// One intent of the set: on `page`, `action` for `intent`, meaning the
/// element with this role and exact name.
struct Intent {
    page: Page,
    action: &'static str,
    intent: String,
    role: &'static str,
    name: String,
    /// `text` / `values` for type and select_option.
    extra: Value,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Page {
    Settings,
    Newsletter,
    Form,
    Rows,
    Cards,
    Controls,
    Mail,
}

impl Page {
    fn path(self) -> String {
        match self {
            Page::Settings => "/model/settings.html".into(),
            Page::Newsletter => "/model/newsletter.html".into(),
            Page::Form => pages::form_path(),
            Page::Rows => pages::rows_path(2_000),
            Page::Cards => pages::cards_path(),
            Page::Controls => "/widgets/controls.html".into(),
            Page::Mail => "/mail/index.html".into(),
        }
    }

    fn label(self) -> String {
        match self {
            Page::Settings => "account settings (hostile)".into(),
            Page::Newsletter => "newsletter form".into(),
            Page::Form => format!("{}-control form", pages::FORM_CONTROLS),
            Page::Rows => "2,000-row list".into(),
            Page::Cards => format!("{}-card shop", pages::CARDS),
            Page::Controls => "ARIA controls (switches, sliders)".into(),
            Page::Mail => "mail compose form".into(),
        }
    }

    /// The fixture pages of `fixtures/sites/` are served by a second server.
    fn served_from_fixtures(self) -> bool {
        matches!(self, Page::Settings | Page::Newsletter | Page::Controls | Page::Mail)
    }
}

fn intent(page: Page, action: &'static str, intent: &str, role: &'static str, name: &str) -> Intent {
    Intent { page, action, intent: intent.into(), role, name: name.into(), extra: json!({}) }
}

fn typing(page: Page, i: &str, name: &str) -> Intent {
    Intent { extra: json!({ "text": "bench" }), ..intent(page, "type", i, "textbox", name) }
}

fn choosing(page: Page, i: &str, name: &str, value: &str) -> Intent {
    Intent { extra: json!({ "values": [value] }), ..intent(page, "select_option", i, "combobox", name) }
}

/// The intent set: 50 intents over seven pages. Actions that would leave
/// the page or ask the person (submit, links, Delete) are `hover`s: the
/// pick is what is measured.
fn intents() -> Vec<Intent> {
    use Page::*;
    let help = "Open the help centre and read every article about billing";
    vec![
        intent(Settings, "click", "the Save button of the billing form", "button", "Save"),
        intent(Settings, "click", "save my profile", "button", "Save profile"),
        typing(Settings, "the name on the invoice", "Name on invoice"),
        intent(Settings, "hover", "the API token field", "textbox", "API token"),
        choosing(Settings, "the plan dropdown", "Plan", "Team"),
        intent(Settings, "hover", "the help centre button", "button", help),
        intent(Settings, "hover", "the Delete account button", "button", "Delete account"),
        typing(Newsletter, "the email address field", "Email address"),
        typing(Newsletter, "your name", "Your name"),
        intent(Newsletter, "hover", "the Subscribe button", "button", "Subscribe"),
        intent(Newsletter, "hover", "the link to the account settings", "link", "Account settings"),
        typing(Form, "first name", "First name"),
        typing(Form, "the last name field", "Last name"),
        typing(Form, "the email address", "Email address"),
        typing(Form, "phone number", "Phone"),
        typing(Form, "the postal code", "Postal code"),
        typing(Form, "the city", "City"),
        typing(Form, "notes", "Notes"),
        typing(Form, "the about you box", "About you"),
        choosing(Form, "the country dropdown", "Country", "France"),
        choosing(Form, "language", "Language", "Deutsch"),
        choosing(Form, "the time zone", "Time zone", "CET"),
        intent(Form, "click", "the security alerts checkbox", "checkbox", "Security alerts"),
        intent(Form, "click", "the Pro plan", "radio", "Pro"),
        intent(Form, "click", "the Cancel button", "button", "Cancel"),
        intent(Form, "hover", "the Reset button", "button", "Reset"),
        intent(Form, "hover", "the Save button of the form", "button", "Save"),
        intent(Rows, "hover", "the Account link in the header", "link", "Account"),
        intent(Rows, "hover", "the Export button of the order tools", "button", "Export"),
        intent(Rows, "hover", "the compact view toggle", "button", "Compact view"),
        Intent { extra: json!({ "text": "Berlin" }), ..intent(Rows, "type", "the filter box", "searchbox", "Filter") },
        intent(Rows, "hover", &format!("the link of {}", row_link_name(1_500)), "link", &row_link_name(1_500)),
        intent(Rows, "hover", "the help link", "link", "Help"),
        intent(Cards, "hover", &format!("add {} to the cart", card_name(250)), "button", "Add to cart"),
        intent(Cards, "hover", "the shop heading link", "none", ""),
        intent(Cards, "hover", &format!("the Add to cart button of {}", card_name(3)), "button", "Add to cart"),
        intent(Controls, "hover", "the eco mode switch", "switch", "Eco mode"),
        intent(Controls, "hover", "the away mode toggle", "switch", "Away mode"),
        intent(Controls, "hover", "the target temperature slider", "slider", "Target temperature"),
        intent(Controls, "hover", "fan speed", "slider", "Fan speed"),
        intent(Controls, "hover", "the boost minutes", "spinbutton", "Boost minutes"),
        intent(Controls, "hover", "the Weekdays schedule", "radio", "Weekdays"),
        intent(Controls, "hover", "apply the schedule", "button", "Apply schedule"),
        intent(Controls, "hover", "the device search box", "searchbox", "Find a device"),
        intent(Controls, "hover", "the history link", "link", "View history"),
        typing(Mail, "the recipient", "To"),
        typing(Mail, "the subject line", "Subject"),
        typing(Mail, "the message body", "Message"),
        intent(Mail, "hover", "the Send button", "button", "Send"),
        intent(Mail, "hover", "save as draft", "button", "Save draft"),
    ]
}

/// The candidate line of the meant element in the prompt: role and name
/// (for the shop's many "Add to cart" buttons, the one under the card the
/// intent names). `None` when it was not among the candidates.
fn meant_ref(user: &str, it: &Intent) -> Option<String> {
    if it.role == "none" {
        return Some("none".into());
    }
    let needle = format!(" {} {}", it.role, serde_json::to_string(&it.name).unwrap_or_default());
    let card = (it.page == Page::Cards).then(|| {
        let n: String = it.intent.chars().filter(|c| c.is_ascii_digit()).collect();
        format!("\"{}\"", card_name(n.parse().unwrap_or(0)))
    });
    user.lines()
        .filter(|l| l.contains(&needle) || (it.role == "button" && it.name.len() > 60 && l.contains(&it.name)))
        .find(|l| card.as_ref().is_none_or(|c| l.contains(c.as_str())))
        .and_then(|l| l.split(' ').next())
        .map(str::to_string)
}

fn first_candidate(user: &str) -> Option<String> {
    ref_on_line(user, " ")
}

fn answered_ref(reply: &Value) -> Option<String> {
    let text = reply["choices"][0]["message"]["content"].as_str()?;
    let v: Value = serde_json::from_str(text).ok()?;
    v["ref"].as_str().map(str::to_string)
}

fn result_text(result: &Value) -> String {
    super::playwright::content_text(result)
}

pub async fn run(b: &mut Bench) -> Result<Suite> {
    if b.model.is_none() {
        bail!("the model suite needs the real model server (Bench started without it)");
    }
    let tokens = Tokens::new()?;
    let fixtures = tests::FixtureServer::serve(tests::sites_dir());
    let mut set = intents();
    if let Some(n) = b.config.model_intents {
        set.truncate(n.max(1));
    }
    let bench_pages: Vec<(Page, String)> =
        [Page::Form, Page::Rows, Page::Cards].into_iter().map(|p| (p, b.url(&p.path()))).collect();
    let url = |p: Page| {
        if p.served_from_fixtures() {
            fixtures.url(&p.path())
        } else {
            bench_pages.iter().find(|(q, _)| *q == p).map(|(_, u)| u.clone()).unwrap_or_default()
        }
    };

    let mut rows = Vec::new();
    let mut model_ms = Vec::new();
    let mut act_ms = Vec::new();
    let (mut right, mut ranker_right, mut listed, mut asked) = (0usize, 0usize, 0usize, 0usize);
    #[allow(clippy::type_complexity)]
    let mut per_page: Vec<(Page, usize, Vec<usize>, Vec<usize>, Vec<f64>)> = Vec::new();
    let mut misses = Vec::new();
    let mut current: Option<Page> = None;
    b.mcp.ok("browser_tabs", json!({ "action": "new", "url": url(set[0].page) })).await?;
    for it in &set {
        if current != Some(it.page) {
            b.mcp.ok("browser_navigate", json!({ "url": url(it.page) })).await?;
            current = Some(it.page);
            let snap = b.mcp.ok("browser_snapshot", json!({ "interactive_only": true })).await?;
            let full = tokens.count(&result_text(&snap.result));
            per_page.push((it.page, full, Vec::new(), Vec::new(), Vec::new()));
        }
        let mut args = json!({ "action": it.action, "intent": it.intent });
        for (k, v) in it.extra.as_object().into_iter().flatten() {
            args[k] = v.clone();
        }
        let rig = b.model.as_ref().context("model rig")?;
        let before = rig.exchanges();
        let t = b.mcp.call("browser_act", args.clone()).await?;
        let exchange =
            rig.last_since(before).with_context(|| format!("no model request for {:?}: {}", it.intent, t.result))?;
        asked += 1;
        act_ms.push(t.elapsed.as_secs_f64() * 1000.0);
        model_ms.push(exchange.millis);
        let user = user_message(&exchange.request);
        let system = exchange.request["messages"][0]["content"].as_str().unwrap_or_default();
        let meant = meant_ref(&user, it);
        let got = answered_ref(&exchange.reply);
        let ok = meant.is_some() && got == meant;
        right += usize::from(ok);
        listed += usize::from(meant.is_some());
        ranker_right += usize::from(it.role != "none" && meant.is_some() && first_candidate(&user) == meant);
        if !ok {
            misses.push(format!(
                "{:?} on {}: meant {}, model said {}",
                it.intent,
                it.page.label(),
                meant.as_deref().unwrap_or("(not among the candidates)"),
                got.as_deref().unwrap_or("(no ref)")
            ));
        }
        let agent = tokens.count(&args.to_string()) + tokens.count(&result_text(&t.result));
        let prompt = tokens.count(system) + tokens.count(&user);
        if let Some(p) = per_page.last_mut() {
            p.2.push(agent);
            p.3.push(prompt);
            p.4.push(exchange.millis);
        }
        eprintln!(
            "  model: {:>6.0} ms  {}  {:?} → {} (meant {})",
            exchange.millis,
            if ok { "✓" } else { "✗" },
            it.intent,
            got.as_deref().unwrap_or("-"),
            meant.as_deref().unwrap_or("-")
        );
    }

    let pct = |n: usize| 100.0 * n as f64 / asked.max(1) as f64;
    rows.push(Row {
        case: format!("model call, {asked} intents"),
        stats: Stats::of_ms(&model_ms),
        bytes: None,
        rows: None,
        note: format!(
            "accuracy {right}/{asked} ({:.0} %); lexical ranker's first candidate {ranker_right}/{asked} ({:.0} %); meant element among the candidates {listed}/{asked}",
            pct(right),
            pct(ranker_right)
        ),
    });
    rows.push(Row {
        case: "browser_act, whole call".into(),
        stats: Stats::of_ms(&act_ms),
        bytes: None,
        rows: None,
        note: "snapshot + ranker + model + the action through the gate".into(),
    });
    let mut page_figures = Vec::new();
    for (page, full, agent, prompt, ms) in &per_page {
        let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
        let (agent, prompt) = (mean(agent), mean(prompt));
        rows.push(Row {
            case: format!("tokens, {}", page.label()),
            stats: Stats::of_ms(ms),
            bytes: None,
            rows: None,
            note: format!(
                "full snapshot {full} tok vs browser_act {agent:.0} tok for the agent ({:.0}× fewer); local prompt {prompt:.0} tok",
                *full as f64 / agent.max(1.0)
            ),
        });
        page_figures.push(json!({ "page": page.label(), "snapshot_tokens": full, "agent_tokens_per_act": agent, "local_prompt_tokens": prompt }));
    }
    Ok(Suite {
        name: "model".into(),
        rows,
        checks: Vec::new(),
        reference: vec![
            format!(
                "test model: Gemma 3 270M Q4_K_M (llama.cpp via node-llama-cpp, 2 threads, greedy, JSON-schema grammar); {MODEL_TIMEOUT_SECS} s per call allowed"
            ),
            "tokens: o200k_base; the local prompt never leaves the machine".into(),
        ],
        extra: json!({
            "intents": asked,
            "accuracy": right as f64 / asked.max(1) as f64,
            "ranker_first_accuracy": ranker_right as f64 / asked.max(1) as f64,
            "meant_among_candidates": listed,
            "misses": misses,
            "pages": page_figures,
        }),
    })
}
