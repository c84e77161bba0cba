//! What an agent reads of an action that ran: one line (from the masked
//! summary, so a typed value is never repeated), the effect, what
//! changed, who approved — page-derived text redacted and wrapped as
//! untrusted data.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use shared::action::{ActReport, Effect};
use shared::audit::DecidedBy;

use super::pipeline::Prepared;
use crate::server::results::untrusted_result;

pub(super) fn effect_str(e: Effect) -> &'static str {
    match e {
        Effect::Navigated => "navigated",
        Effect::ValueChanged => "value_changed",
        Effect::DialogOpened => "dialog_opened",
        Effect::PageChanged => "page_changed",
        Effect::None => "none",
        Effect::Unknown => "unknown",
    }
}

/// `Clicked button "Delete account" [e12]`
pub(super) fn done_line(p: &Prepared) -> String {
    // From the fully masked summary: the result never repeats a typed value.
    let mut s = p.log_summary.clone();
    let verb_end = s.find(' ').unwrap_or(s.len());
    let past = match &s[..verb_end] {
        "click" => "Clicked",
        "type" => "Typed",
        "select" => "Selected",
        "press" => "Pressed",
        "scroll" => "Scrolled",
        "hover" => "Hovered",
        "close" => "Closed",
        "upload" => "Uploaded",
        "download" => "Kept the download",
        other => other,
    }
    .to_string();
    s.replace_range(..verb_end, &past);
    s
}

pub(super) fn effect_text(report: &ActReport) -> String {
    match report.effect {
        Effect::Navigated => {
            let mut s = "navigated to ".to_string();
            shared::snapshot::quote(&shared::redact::redact_url(&report.url), &mut s);
            s
        }
        Effect::ValueChanged => "the value changed".into(),
        Effect::DialogOpened => "a dialog opened".into(),
        Effect::PageChanged => "the page changed (browser_snapshot shows how)".into(),
        Effect::None => "no visible change".into(),
        Effect::Unknown => {
            "effect unknown: look at the page (browser_snapshot) before doing anything else; do not repeat it blindly"
                .into()
        }
    }
}

pub(super) fn report_json(p: &Prepared, report: &ActReport) -> Value {
    json!({
        "tab": p.plan.tab,
        "ref": p.plan.target,
        "effect": report.effect,
        "url": shared::redact::redact_url(&report.url),
        "risk": report.risk,
        "reasons": report.reasons,
        "decided_by": report.decided_by,
        "changes": report.changes.iter().map(|c| shared::redact::redact_text(c)).collect::<Vec<_>>(),
    })
}

pub(super) fn render(p: &Prepared, report: &ActReport) -> CallToolResult {
    let mut text = format!("{}: {}", done_line(p), effect_text(report));
    for c in report.changes.iter().take(20) {
        text.push_str("\n- ");
        let mut c = shared::redact::redact_text(c);
        shared::limits::truncate_chars(&mut c, shared::limits::MAX_NAME_CHARS);
        text.push_str(&c);
    }
    if report.decided_by != DecidedBy::Policy {
        text.push_str(&format!("\n(approved: {})", report.decided_by.as_str()));
    }
    untrusted_result(&text, report_json(p, report))
}
