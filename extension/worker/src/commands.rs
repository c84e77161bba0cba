//! Runs one bridge command against the browser (docs/design.md, "Processes
//! and channels" and "Observation"). Page actions go through the gate
//! (`crate::gate`); tabs and the content script are reached through
//! `crate::tabs`; navigations and `Handoff` meet the person through
//! `crate::handoff`.

use shared::error::{ErrorCode, WireError};
use shared::limits::NAVIGATION_TIMEOUT_MS;
use shared::protocol::{Command, CommandResult, HistoryStep, Outcome, PageRequest, PassedSnapshot, TabId};
use shared::snapshot::{SnapshotRequest, TextRequest};
use wasm_bindgen::prelude::*;

use crate::chrome::{self, Tab};
use crate::navigation::{self, NAVIGATE_TRIES, Verdict};
use crate::tabs::{
    LoadWaiter, ask_page, ask_page_value, get_tab, info, is_web_url, load_timed_out, tab_error, tab_id, tab_url,
};
use crate::util::{js_error_text, obj};

/// What a command answers: an [`Outcome`], or a snapshot whose nodes
/// pass through unread.
pub enum Answer {
    Outcome(Box<Outcome>),
    Snapshot(Box<Snapshot>),
}

/// A page's snapshot as the worker holds it: all but the nodes read (and
/// the challenge decided), the nodes as the JS string the page sent
/// (`shared::protocol::snapshot_reply_parts`), never copied into wasm.
pub struct Snapshot {
    pub head: PassedSnapshot,
    pub nodes: js_sys::JsString,
}

pub async fn run(command: Command) -> Answer {
    // A tab handed to the person is theirs (the bridge refused already;
    // this is the second check).
    if let Err(e) = shared::handoff::check_handed(&command, &crate::handoff::handed_tabs()) {
        return Answer::Outcome(Box::new(Outcome::Err(e)));
    }
    let result = match command {
        Command::TabsList { tabs } => tabs_list(&tabs).await,
        Command::TabNew { url } => tab_new(url).await,
        Command::TabSelect { tab } => tab_select(tab).await,
        Command::TabClose { tab } => tab_close(tab).await,
        Command::Navigate { tab, url } => navigate(tab, &url).await,
        Command::History { tab, step } => history(tab, step).await,
        Command::Snapshot { tab, request } => {
            return match page_snapshot(tab, request).await {
                Ok(snapshot) => Answer::Snapshot(Box::new(snapshot)),
                Err(e) => Answer::Outcome(Box::new(Outcome::Err(e))),
            };
        }
        Command::ExtractText { tab, request } => extract_text(tab, request).await,
        Command::Screenshot { tab } => screenshot(tab).await,
        Command::Resolve { tab, target } => crate::gate::resolve(tab, &target).await,
        // Every action goes through the gate: STOP/Pause, live
        // re-classification, the person's approval (crate::gate).
        Command::Act { tab, target, action, expect, gate } => crate::gate::act(tab, target, action, expect, gate).await,
        Command::Handoff { tab, reason } => handoff(tab, reason).await,
        Command::Locate { tab, target } => locate(tab, target).await,
        Command::AskPerson { gate } => crate::gate::ask_only(gate).await,
    };
    Answer::Outcome(Box::new(match result {
        Ok(r) => Outcome::Ok(r),
        Err(e) => Outcome::Err(e),
    }))
}

type CmdResult = Result<CommandResult, WireError>;

async fn tabs_list(tabs: &[TabId]) -> CmdResult {
    let mut out = Vec::new();
    for &t in tabs {
        if let Ok(tab) = get_tab(t).await {
            out.push(info(&tab));
        }
    }
    Ok(CommandResult::Tabs { tabs: out })
}

async fn tab_new(url: Option<String>) -> CmdResult {
    let target = url.clone().unwrap_or_else(|| "about:blank".into());
    let props = obj(&[("url", JsValue::from_str(&target)), ("active", JsValue::TRUE)]);
    let created: Tab =
        chrome::tabs_create(&props).await.map_err(|e| WireError::internal(js_error_text(&e)))?.unchecked_into();
    let id = created.id().ok_or_else(|| WireError::internal("the new tab has no id"))? as TabId;
    if url.is_some() {
        let waiter = LoadWaiter::register(id, true);
        if created.status().as_deref() == Some("complete") {
            waiter.cancel();
        } else {
            waiter.wait(id).await?;
        }
        if let Some(e) = crate::load_errors::failed(id, &tab_url(id).await.unwrap_or_default()) {
            return Err(e);
        }
    }
    Ok(CommandResult::Tab { tab: info(&get_tab(id).await?) })
}

async fn tab_select(tab: TabId) -> CmdResult {
    let id = tab_id(tab)?;
    let updated: Tab = chrome::tabs_update(id, &obj(&[("active", JsValue::TRUE)]))
        .await
        .map_err(|e| tab_error(tab, &e))?
        .unchecked_into();
    if let Some(w) = updated.window_id() {
        let _ = chrome::windows_update(w, &obj(&[("focused", JsValue::TRUE)])).await;
    }
    Ok(CommandResult::Tab { tab: info(&get_tab(tab).await?) })
}

async fn tab_close(tab: TabId) -> CmdResult {
    let id = tab_id(tab)?;
    get_tab(tab).await?;
    chrome::tabs_remove(id).await.map_err(|e| tab_error(tab, &e))?;
    Ok(CommandResult::Closed { tab })
}

async fn navigate(tab: TabId, url: &str) -> CmdResult {
    // The bridge has validated the URL already; refuse anything but http(s) anyway.
    if !is_web_url(url) {
        return Err(WireError::new(ErrorCode::InvalidRequest, "only http(s) URLs can be opened"));
    }
    let id = tab_id(tab)?;
    let before = get_tab(tab).await?.url().unwrap_or_default();
    // The bodies build: the debugger watches the page from its first request.
    crate::bodies::ready(tab).await;
    // The page's own reloads are not the load asked for (`crate::navigation`).
    let deadline = js_sys::Date::now() + NAVIGATION_TIMEOUT_MS as f64;
    for _ in 0..NAVIGATE_TRIES {
        let watch = navigation::Watch::start(tab);
        let mut waiter = LoadWaiter::register(tab, false);
        let asked = match chrome::tabs_update(id, &obj(&[("url", JsValue::from_str(url))])).await {
            Ok(t) => t.unchecked_into::<Tab>().pending_url().unwrap_or_else(|| url.to_string()),
            Err(e) => {
                waiter.cancel();
                return Err(tab_error(tab, &e));
            }
        };
        loop {
            let left = (deadline - js_sys::Date::now()).max(0.0) as u32;
            if left == 0 {
                waiter.cancel();
                return Err(load_timed_out());
            }
            waiter.wait_ms(tab, left).await?;
            match watch.verdict(&asked, &before) {
                Verdict::Landed => return landed(tab).await,
                Verdict::Pending => waiter = LoadWaiter::register(tab, false),
                Verdict::Superseded => break,
            }
        }
    }
    Err(WireError::new(
        ErrorCode::PageNotLoaded,
        "the page in the tab kept navigating on its own (a reload, a redirect by script), and each time it replaced \
         the navigation; the tab still shows that page",
    ))
}

/// After a navigation the agent waits for: a challenge on the page it
/// landed on hands the tab to the person first (`crate::handoff`), and the
/// agent learns where the tab is once they handed it back.
async fn landed(tab: TabId) -> CmdResult {
    // The browser's error page instead of the page: said in the agent's terms.
    if let Some(e) = crate::load_errors::failed(tab, &tab_url(tab).await.unwrap_or_default()) {
        return Err(e);
    }
    crate::handoff::clear_for_agent(tab, None).await?;
    Ok(CommandResult::Tab { tab: info(&get_tab(tab).await?) })
}

/// `Command::Handoff`: the person has the tab until Done (checked) or
/// Abort; the agent learns how long it waited and where the tab is.
async fn handoff(tab: TabId, reason: String) -> CmdResult {
    get_tab(tab).await?;
    let reason = shared::handoff::check_reason(&reason)?;
    let waited_ms = crate::handoff::hand_over(tab, shared::handoff::Trigger::Agent, None, Some(reason)).await?;
    Ok(CommandResult::HandedBack { waited_ms, tab: info(&get_tab(tab).await?) })
}

/// `Command::Locate`: a flow step's element on the live page. A challenge
/// on the page hands the tab to the person first (the step waits and then
/// looks again), as before an action.
async fn locate(tab: TabId, target: shared::flow::Descriptor) -> CmdResult {
    crate::tabs::require_web_page(tab).await?;
    crate::handoff::clear_for_agent(tab, None).await?;
    match ask_page(tab, &PageRequest::Locate { target }).await? {
        r @ CommandResult::Located { .. } => Ok(r),
        _ => Err(WireError::internal("the page sent an invalid answer")),
    }
}

async fn history(tab: TabId, step: HistoryStep) -> CmdResult {
    let id = tab_id(tab)?;
    get_tab(tab).await?;
    let waiter = LoadWaiter::register(tab, false);
    let r = match step {
        HistoryStep::Back => chrome::tabs_go_back(id).await,
        HistoryStep::Forward => chrome::tabs_go_forward(id).await,
        HistoryStep::Reload => chrome::tabs_reload(id).await,
    };
    if let Err(e) = r {
        let text = js_error_text(&e);
        let delta = match step {
            HistoryStep::Back => -1,
            HistoryStep::Forward => 1,
            HistoryStep::Reload => 0,
        };
        if delta != 0 && text.contains("Cannot find") {
            // Chrome skips entries its history intervention marks (pages
            // left without a user gesture); the page's own history does not.
            let msg = PageRequest::History { delta };
            if let Err(e) = ask_page(tab, &msg).await {
                waiter.cancel();
                // The browser's error page runs no script of ours.
                if e.code == ErrorCode::PageNotLoaded {
                    return Err(WireError::new(
                        ErrorCode::InvalidRequest,
                        "the tab shows the browser's error page, and Chrome has no history entry to go to from \
                         there (it skips pages opened without a click); navigate to the URL instead",
                    ));
                }
                return Err(e);
            }
        } else {
            waiter.cancel();
            return Err(tab_error(tab, &e));
        }
    }
    waiter.wait(tab).await?;
    landed(tab).await
}

// ---------------------------------------------------------------- snapshot

/// A snapshot from the page, its challenge decided here from the signals
/// the content script gathered (which go no further). Its nodes are not
/// read here, nor copied into wasm: the bridge reads them.
///
/// Only http(s) pages have the content script; other pages are refused
/// when they do not answer (`ask_page_text`), which saves a `tabs.get` a
/// call.
async fn page_snapshot(tab: TabId, request: SnapshotRequest) -> Result<Snapshot, WireError> {
    let msg = PageRequest::Snapshot { request };
    let reply = ask_page_value(tab, &msg).await?;
    // `{head, nodes}`; errors come as one JSON text.
    let part = |k: &str| js_sys::Reflect::get(&reply, &JsValue::from_str(k)).ok().filter(JsValue::is_string);
    let (text, nodes) = match (reply.as_string(), part("head"), part("nodes")) {
        (Some(text), _, _) => (text, None),
        (None, Some(head), Some(nodes)) => (head.as_string().unwrap_or_default(), Some(nodes)),
        _ => return Err(WireError::internal("the page gave no answer")),
    };
    match shared::protocol::passed_snapshot_from_json(&text) {
        Ok(Ok(mut head)) => {
            head.decide_challenge();
            let Some(nodes) = nodes else {
                return Err(WireError::internal("the page sent an invalid snapshot"));
            };
            Ok(Snapshot { head, nodes: nodes.unchecked_into() })
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err(WireError::internal("the page sent an invalid snapshot")),
    }
}

async fn extract_text(tab: TabId, request: TextRequest) -> CmdResult {
    let msg = PageRequest::ExtractText { request };
    match ask_page(tab, &msg).await? {
        r @ CommandResult::Text { .. } => Ok(r),
        _ => Err(WireError::internal("the page sent invalid text")),
    }
}

/// `Command::Screenshot`: asks the page whether it shows a security
/// challenge (a fresh interactive-only snapshot; refused when it does),
/// makes the tab the active one of its window, then captures it as PNG.
async fn screenshot(tab: TabId) -> CmdResult {
    let request = SnapshotRequest { interactive_only: true, ..SnapshotRequest::default() };
    let snapshot = page_snapshot(tab, request).await?;
    if snapshot.head.challenge.is_some() {
        return Err(WireError::new(
            ErrorCode::SecurityChallenge,
            "the page shows a security challenge (CAPTCHA or similar); no screenshot is taken. Ask the person to \
             solve it by hand",
        ));
    }
    let url = snapshot.head.url;
    let page = get_tab(tab).await?;
    let window = page.window_id().ok_or_else(|| WireError::internal("the tab has no window"))?;
    if page.active() != Some(true) {
        chrome::tabs_update(tab_id(tab)?, &obj(&[("active", JsValue::TRUE)])).await.map_err(|e| tab_error(tab, &e))?;
    }
    // The tab may have navigated since the check: capture only the same page.
    let now = info(&get_tab(tab).await?).url;
    if now != url {
        return Err(WireError::new(
            ErrorCode::StaleRef,
            "the page changed while the screenshot was prepared; try again",
        ));
    }
    let data = chrome::tabs_capture_visible_tab(window, &obj(&[("format", JsValue::from_str("png"))]))
        .await
        .map_err(|e| WireError::internal(format!("cannot capture the tab: {}", js_error_text(&e))))?;
    let data = data.as_string().unwrap_or_default();
    let png_base64 = data
        .strip_prefix("data:image/png;base64,")
        .ok_or_else(|| WireError::internal("the capture is not a PNG"))?
        .to_string();
    Ok(CommandResult::Image { png_base64, url })
}
