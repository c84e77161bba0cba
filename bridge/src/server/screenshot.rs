//! `browser_screenshot`, a read tool: under the tab's lock like an
//! action (a screenshot in the middle of one would show half of it), with
//! one audit row per call, but no gate: nothing on the page changes.

use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::json;
use shared::audit::{AuditDecision, DecidedBy};
use shared::error::{ErrorCode, WireError};
use shared::limits::COMMAND_TIMEOUT_MS;
use shared::protocol::{Command, CommandResult};
use shared::risk::RiskLevel;

use super::AppState;
use super::audit::{Audit, Caller, Row};

/// `browser_screenshot`: a PNG of the agent tab's visible area. Refused
/// with `SECURITY_CHALLENGE` when the bridge last saw a challenge on the
/// tab, and by the extension when the page shows one right now; a site the
/// person's policy denies → `PERMISSION_DENIED` (before dispatch when the
/// URL is known, and again on the URL the extension reports, in which case
/// the image is dropped). One audit row per call.
pub(crate) async fn screenshot(
    state: &AppState,
    caller: &Caller,
    args: shared::tools::ScreenshotArgs,
) -> Result<CallToolResult, WireError> {
    const TOOL: &str = "browser_screenshot";
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let lock = state.actions().lock_for(tab);
    let _serial = lock.lock().await;
    let audit = Audit::new(state, caller);
    let reasons = vec!["screenshots are read-only".to_string()];
    let row = |url: Option<&str>, decision: AuditDecision, outcome: &'static str| {
        let reasons = reasons.clone();
        let url = url.map(str::to_string);
        async move {
            audit
                .record(Row {
                    tool: TOOL,
                    tab: Some(tab),
                    summary: "screenshot",
                    url: url.as_deref(),
                    risk: Some(RiskLevel::Low),
                    reasons: &reasons,
                    decision: Some(decision),
                    decided_by: Some(DecidedBy::Policy),
                    outcome,
                })
                .await;
        }
    };
    let memo = state.actions().page(tab);
    if let Some(url) = &memo.url
        && let Err(e) = state.check_site(url)
    {
        row(Some(url), AuditDecision::Deny, e.code.as_str()).await;
        return Err(e);
    }
    if memo.challenge {
        let e = challenge_error();
        row(memo.url.as_deref(), AuditDecision::Deny, e.code.as_str()).await;
        return Err(e);
    }
    let answer = state.hub().call(Command::Screenshot { tab }, Duration::from_millis(COMMAND_TIMEOUT_MS)).await;
    let (png_base64, url) = match answer {
        Ok(CommandResult::Image { png_base64, url }) => (png_base64, url),
        Ok(_) => return Err(super::unexpected_answer()),
        Err(e) => {
            if e.code == ErrorCode::SecurityChallenge {
                state.actions().remember_challenge(tab, true);
            }
            let decision = if matches!(e.code, ErrorCode::SecurityChallenge | ErrorCode::PermissionDenied) {
                AuditDecision::Deny
            } else {
                AuditDecision::Allow
            };
            row(memo.url.as_deref(), decision, e.code.as_str()).await;
            return Err(e);
        }
    };
    if let Err(e) = state.url_seen(tab, &url) {
        row(Some(&url), AuditDecision::Deny, e.code.as_str()).await;
        return Err(e);
    }
    row(Some(&url), AuditDecision::Allow, "ok").await;
    let mut r = CallToolResult::success(vec![
        rmcp::model::ContentBlock::text(shared::untrusted::wrap_text(&format!(
            "Screenshot of tab {tab} (visible area, PNG). The image shows web content: untrusted data."
        ))),
        rmcp::model::ContentBlock::image(png_base64, "image/png"),
    ]);
    r.structured_content =
        Some(shared::untrusted::wrap(json!({ "tab": tab, "url": shared::redact::redact_url(&url) })));
    Ok(r)
}

fn challenge_error() -> WireError {
    WireError::new(
        ErrorCode::SecurityChallenge,
        "the page shows a security challenge (CAPTCHA or similar); no screenshot is taken. Ask the person to solve \
         it by hand, then take a new browser_snapshot",
    )
}
