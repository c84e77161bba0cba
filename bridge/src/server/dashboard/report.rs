//! `chaperone report`: one session as one self-contained HTML file, to
//! keep or to send. The same reads as the dashboard (`query.rs`) and
//! nothing else; no script at all, the style inline and allowed by its
//! hash in a CSP meta tag (`default-src 'none'`), so the file loads
//! nothing, runs nothing and opens offline. Every value is escaped
//! ([`escape`]); page titles, names and reasons cannot become markup.

use std::fmt::Write as _;
use std::path::Path;

use shared::audit::AuditEntry;
use shared::dashboard::{Filters, SessionSummary};

use super::query;
use crate::error::Error;

/// Rows a report holds at most (the newest).
pub const MAX_REPORT_ROWS: usize = 20_000;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1em 1.5em;color:#1d1d1f}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.4em}\
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}\
th{background:#f0f0f3}td{overflow-wrap:anywhere;unicode-bidi:isolate}.summary{font-family:ui-monospace,monospace;font-size:.92em}\
.high{color:#b00020;font-weight:600}.medium{color:#a15c00}.deny,.denied{color:#b00020;font-weight:600}\
.approved,.allow{color:#176c2f}.reasons{margin:0;padding-left:1.1em;color:#555;font-size:.9em}\
.note{color:#666}.title{color:#555;font-size:.9em}dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:600}dd{margin:0}";

/// Which session a report is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    Session(String),
    Last,
}

/// HTML-escapes `s` for text and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `'sha256-…'` of the inline style, for the CSP meta tag.
fn style_hash() -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, STYLE.as_bytes());
    format!("'sha256-{}'", shared::files::base64_encode(digest.as_ref()))
}

/// The report of `which` from the database at `db`, read-only.
pub fn render_from(db: &Path, which: &Which) -> Result<String, Error> {
    if !db.exists() {
        return Err(Error::Usage(format!("no audit log at {}: nothing has been recorded yet", db.display())));
    }
    let conn = query::open(db, false)?;
    let session = match which {
        Which::Session(s) => s.clone(),
        Which::Last => query::last_session(&conn)?
            .ok_or_else(|| Error::Usage("the audit log is empty: there is no session to report".into()))?,
    };
    let summary = query::sessions(&conn, Some(&session))?.into_iter().next().ok_or_else(|| {
        Error::Usage(format!("no session {session} in the audit log (see `chaperone dashboard` or `chaperone audit`)"))
    })?;
    let filters = Filters { session: Some(session), ..Default::default() };
    let (rows, more) = query::rows(&conn, &filters, MAX_REPORT_ROWS)?;
    let (sites, days) = query::counts(&conn, &filters)?;
    Ok(render(&summary, &rows, more, &sites, &days))
}

fn render(
    s: &SessionSummary,
    rows: &[AuditEntry],
    more: bool,
    sites: &[shared::dashboard::Count],
    days: &[shared::dashboard::Count],
) -> String {
    let client = s.client.as_deref().unwrap_or("(unknown client)");
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {}; base-uri 'none'; form-action 'none'\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>Chaperone report: {} ({})</title><style>{STYLE}</style></head><body>\n",
        style_hash(),
        escape(client),
        escape(&s.session)
    );
    let _ = write!(h, "<h1>What {} did</h1>\n<dl>", escape(client));
    let facts: [(&str, String); 12] = [
        ("Session", s.session.clone()),
        ("Started", s.started.clone()),
        ("Ended", s.ended.clone().unwrap_or_else(|| "(not recorded: running, or the daemon stopped first)".into())),
        ("Last row", s.last.clone()),
        ("Tabs", s.tabs.to_string()),
        ("Actions", s.actions.to_string()),
        ("Asked", s.asked.to_string()),
        ("Approved", s.approved.to_string()),
        ("Denied", s.denied.to_string()),
        ("Timed out", s.timed_out.to_string()),
        ("Hand-offs", s.handoffs.to_string()),
        ("Report written", crate::time::now_rfc3339()),
    ];
    for (k, v) in facts {
        let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", escape(k), escape(&v));
    }
    h.push_str("</dl>\n<h2>Timeline</h2>\n");
    if more {
        let _ = write!(h, "<p class=\"note\">Only the newest {MAX_REPORT_ROWS} rows are in this report.</p>");
    }
    h.push_str(
        "<table><thead><tr><th>Time</th><th>Tool</th><th>Page</th><th>Action</th><th>Risk</th><th>Decision</th>\
         <th>Decided by</th><th>Outcome</th><th>Duration</th></tr></thead><tbody>\n",
    );
    for r in rows {
        let risk = r.risk.map_or("", |r| r.as_str());
        let decision = r.decision.map_or("", |d| d.as_str());
        let mut page = escape(r.url.as_deref().unwrap_or(""));
        if let Some(title) = &r.title {
            let _ = write!(page, "<div class=\"title\">{}</div>", escape(title));
        }
        let mut reasons = String::new();
        if !r.reasons.is_empty() {
            reasons.push_str("<ul class=\"reasons\">");
            for why in &r.reasons {
                let _ = write!(reasons, "<li>{}</li>", escape(why));
            }
            reasons.push_str("</ul>");
        }
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"summary\">{}</td><td class=\"{}\">{}{}</td>\
             <td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&r.time.replace('T', " ").replace('Z', "")),
            escape(&r.tool),
            page,
            escape(&r.summary),
            class(risk),
            escape(risk),
            reasons,
            class(decision),
            escape(decision),
            escape(r.decided_by.map_or("", |d| d.as_str())),
            escape(r.outcome.as_deref().unwrap_or("")),
            r.duration_ms.map(duration).unwrap_or_default(),
        );
    }
    h.push_str("</tbody></table>\n");
    for (title, first, counts) in [("Per site", "Site", sites), ("Per day (UTC)", "Day", days)] {
        let _ = write!(h, "<h2>{title}</h2><table><thead><tr><th>{first}</th><th>Rows</th></tr></thead><tbody>");
        for c in counts {
            let _ = write!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(&c.key), c.count);
        }
        h.push_str("</tbody></table>\n");
    }
    h.push_str("<p class=\"note\">Written by chaperone report from the local audit log. Secrets appear by name only.</p>\n</body></html>\n");
    h
}

/// `840 ms`, `12.3 s`, `4 min 5 s`.
pub(crate) fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000),
    }
}

/// A CSS class name from a stored word: letters only, else none.
fn class(word: &str) -> &str {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase()) { word } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::AuditStore;
    use shared::audit::AuditRow;

    #[test]
    fn markup_is_escaped_and_the_file_loads_and_runs_nothing() {
        let dir = tempfile::Builder::new().prefix("report").tempdir().unwrap();
        let db = dir.path().join("chaperone.db");
        let store = AuditStore::open(&db).unwrap();
        let evil = "<img src=x onerror=alert(1)><script>alert(2)</script>";
        store
            .record(&AuditRow {
                session: "mcp:abcd".into(),
                client: Some(format!("agent {evil}")),
                tab: Some(3),
                tool: "browser_click".into(),
                summary: format!("click button \"{evil}\""),
                url: Some("http://127.0.0.1:9/\"><script>x</script>?q=1".into()),
                title: Some(format!("title {evil}")),
                risk: Some(shared::risk::RiskLevel::Low),
                reasons: vec![evil.into()],
                decision: Some(shared::audit::AuditDecision::Allow),
                decided_by: None,
                outcome: Some("ok\" onmouseover=\"x".into()),
                duration_ms: Some(65_432),
            })
            .unwrap();
        store
            .record(&AuditRow {
                session: "mcp:abcd".into(),
                tool: "browser_type".into(),
                summary: "type {secret:API_TOKEN} into textbox \"API token\"".into(),
                ..Default::default()
            })
            .unwrap();
        let html = render_from(&db, &Which::Last).unwrap();
        assert!(!html.contains("<img") && !html.contains("<script"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"), "{html}");
        assert!(html.contains("{secret:API_TOKEN}"));
        assert!(!html.contains("src=\"") && !html.contains("href=") && !html.contains("url("), "loads nothing");
        assert!(html.contains("default-src 'none'"));
        assert!(html.contains(&style_hash()));
        assert!(!html.contains("\" onmouseover"), "{html}");
        assert!(html.contains("title &lt;img src=x"), "the title, as text: {html}");
        assert!(html.contains("1 min 5 s"), "the duration: {html}");
        assert_eq!(render_from(&db, &Which::Session("mcp:abcd".into())).unwrap().len(), html.len());
        let e = render_from(&db, &Which::Session("mcp:none".into())).unwrap_err();
        assert!(e.to_string().contains("no session mcp:none"), "{e}");
        let e = render_from(&dir.path().join("absent.db"), &Which::Last).unwrap_err();
        assert!(e.to_string().contains("no audit log"), "{e}");
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration(840), "840 ms");
        assert_eq!(duration(12_345), "12.3 s");
        assert_eq!(duration(245_000), "4 min 5 s");
    }

    #[test]
    fn the_style_hash_is_sha256_base64() {
        assert!(style_hash().starts_with("'sha256-") && style_hash().ends_with("='"));
    }
}
