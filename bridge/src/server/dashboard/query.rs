//! The dashboard's reads: plain SQL over the audit table, on a connection
//! of their own (the store's writer is never held while the dashboard
//! reads). Bounded answers: [`MAX_SESSIONS`] agents, the newest
//! [`MAX_ROWS`] rows that match the filters, [`MAX_COUNTS`] sites and days.
//! Rows are read with the store's own mapping (`crate::audit::SELECT`,
//! `entry_of`): one typed row, `shared::audit::AuditEntry`.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, ToSql, params_from_iter};
use shared::audit::{AuditEntry, SESSION_ENDED, SESSION_TOOL};
use shared::dashboard::{Count, Data, Filters, MAX_COUNTS, MAX_ROWS, MAX_SESSIONS, SITE_SQL, SessionSummary};

use crate::audit::{SELECT, entry_of};
use crate::error::Error;

/// The index the per-agent reads use; created when the daemon's dashboard
/// first reads (an index only: old databases stay readable as they are).
const INDEXES: &str = "CREATE INDEX IF NOT EXISTS audit_session ON audit(session, id);";

fn db(e: rusqlite::Error) -> Error {
    Error::Audit(format!("dashboard read: {e}"))
}

/// A connection for reads. `writable`: the daemon's (it may add
/// [`INDEXES`]); otherwise read-only (`chaperone report`).
pub(crate) fn open(path: &Path, writable: bool) -> Result<Connection, Error> {
    let flags = if writable {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = Connection::open_with_flags(path, flags).map_err(db)?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
    if writable {
        conn.execute_batch(INDEXES).map_err(db)?;
    }
    Ok(conn)
}

/// `LIKE` pattern for `q`, with `\` escaping `%`, `_` and itself.
fn like(q: &str) -> String {
    let mut s = String::from("%");
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('%');
    s
}

/// The `WHERE` clause of the filters and its parameters.
fn where_clause(f: &Filters) -> (String, Vec<String>) {
    let mut conds: Vec<String> = Vec::new();
    let mut params: Vec<String> = Vec::new();
    if let Some(s) = &f.session {
        params.push(s.clone());
        conds.push(format!("session = ?{}", params.len()));
    }
    if let Some(site) = &f.site {
        params.push(site.clone());
        let n = params.len();
        conds.push(format!("(url = ?{n} OR substr(url, 1, length(?{n}) + 1) = ?{n} || '/')"));
    }
    if let Some(d) = f.decision {
        params.push(d.as_str().to_string());
        conds.push(format!("decision = ?{}", params.len()));
    }
    if let Some(r) = f.risk {
        params.push(r.as_str().to_string());
        conds.push(format!("risk = ?{}", params.len()));
    }
    if let Some(q) = &f.q {
        params.push(like(q));
        let n = params.len();
        conds.push(format!(
            "(summary LIKE ?{n} ESCAPE '\\' OR url LIKE ?{n} ESCAPE '\\' OR tool LIKE ?{n} ESCAPE '\\' \
             OR client LIKE ?{n} ESCAPE '\\' OR reasons LIKE ?{n} ESCAPE '\\' OR outcome LIKE ?{n} ESCAPE '\\' \
             OR session LIKE ?{n} ESCAPE '\\' OR title LIKE ?{n} ESCAPE '\\')"
        ));
    }
    let clause = if conds.is_empty() { String::new() } else { format!("WHERE {}", conds.join(" AND ")) };
    (clause, params)
}

fn bind(params: &[String]) -> impl rusqlite::Params + '_ {
    params_from_iter(params.iter().map(|p| p as &dyn ToSql))
}

/// Every agent (at most [`MAX_SESSIONS`], most recently active first), or
/// only `only`.
pub(crate) fn sessions(conn: &Connection, only: Option<&str>) -> Result<Vec<SessionSummary>, Error> {
    let filter = if only.is_some() { "WHERE session = ?1" } else { "" };
    // The session's own start and end rows (`SESSION_TOOL`) are neither
    // actions nor decisions; its start is its first row either way.
    let sql = format!(
        "SELECT session, max(client), min(time),
                max(CASE WHEN tool = '{SESSION_TOOL}' AND outcome = '{SESSION_ENDED}' THEN time END), max(time),
                count(DISTINCT tab),
                sum(decision = 'confirm'), sum(decision = 'approved'),
                sum(decision = 'denied' AND coalesce(decided_by, '') <> 'timeout'),
                sum(decision = 'denied' AND decided_by = 'timeout'),
                sum(tool = 'handoff'), sum(tool = '{SESSION_TOOL}'), count(*)
         FROM audit {filter} GROUP BY session ORDER BY max(id) DESC LIMIT {MAX_SESSIONS}"
    );
    let mut stmt = conn.prepare(&sql).map_err(db)?;
    let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<SessionSummary> {
        let n = |i: usize| r.get::<_, Option<i64>>(i).map(|v| v.unwrap_or(0).max(0) as u64);
        let (approved, denied, timed_out, handoffs, own, all) = (n(7)?, n(8)?, n(9)?, n(10)?, n(11)?, n(12)?);
        Ok(SessionSummary {
            session: r.get(0)?,
            client: r.get(1)?,
            started: r.get(2)?,
            ended: r.get(3)?,
            last: r.get(4)?,
            tabs: n(5)?,
            actions: all.saturating_sub(approved + denied + timed_out + handoffs + own),
            asked: n(6)?,
            approved,
            denied,
            timed_out,
            handoffs,
        })
    };
    let rows = match only {
        Some(s) => stmt.query_map([s], map),
        None => stmt.query_map([], map),
    }
    .map_err(db)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(db)
}

/// The newest `limit` rows matching `f`, oldest first, and whether more
/// matched.
pub(crate) fn rows(conn: &Connection, f: &Filters, limit: usize) -> Result<(Vec<AuditEntry>, bool), Error> {
    let (clause, params) = where_clause(f);
    let sql = format!("{SELECT} {clause} ORDER BY id DESC LIMIT {}", limit + 1);
    let mut stmt = conn.prepare(&sql).map_err(db)?;
    let mut rows = stmt.query_map(bind(&params), entry_of).map_err(db)?.collect::<Result<Vec<_>, _>>().map_err(db)?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    rows.reverse();
    Ok((rows, more))
}

/// Rows matching `f` per site and per UTC day (most first / newest first).
pub(crate) fn counts(conn: &Connection, f: &Filters) -> Result<(Vec<Count>, Vec<Count>), Error> {
    let (clause, params) = where_clause(f);
    let url_clause =
        if clause.is_empty() { "WHERE url IS NOT NULL".to_string() } else { format!("{clause} AND url IS NOT NULL") };
    let count = |r: &rusqlite::Row<'_>| Ok(Count { key: r.get(0)?, count: r.get::<_, i64>(1)?.max(0) as u64 });
    let sites = conn
        .prepare(&format!(
            "SELECT {SITE_SQL} AS site, count(*) FROM audit {url_clause} GROUP BY site ORDER BY 2 DESC, 1 LIMIT {MAX_COUNTS}"
        ))
        .map_err(db)?
        .query_map(bind(&params), count)
        .map_err(db)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(db)?;
    let days = conn
        .prepare(&format!(
            "SELECT substr(time, 1, 10) AS day, count(*) FROM audit {clause} GROUP BY day ORDER BY day DESC LIMIT {MAX_COUNTS}"
        ))
        .map_err(db)?
        .query_map(bind(&params), count)
        .map_err(db)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(db)?;
    Ok((sites, days))
}

/// The newest row id (0 when empty).
pub(crate) fn last_id(conn: &Connection) -> Result<i64, Error> {
    conn.query_row("SELECT coalesce(max(id), 0) FROM audit", [], |r| r.get(0)).map_err(db)
}

/// The session of the newest row, if any.
pub(crate) fn last_session(conn: &Connection) -> Result<Option<String>, Error> {
    use rusqlite::OptionalExtension;
    conn.query_row("SELECT session FROM audit ORDER BY id DESC LIMIT 1", [], |r| r.get(0)).optional().map_err(db)
}

/// What one data call answers.
pub(crate) fn data(conn: &Connection, f: &Filters) -> Result<Data, Error> {
    let sessions = sessions(conn, None)?;
    let (rows, more) = rows(conn, f, MAX_ROWS)?;
    let (sites, days) = counts(conn, f)?;
    Ok(Data { sessions, rows, more, sites, days, last_id: last_id(conn)? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::AuditStore;
    use shared::audit::AuditRow;
    use shared::audit::{AuditDecision, DecidedBy, SESSION_STARTED};
    use shared::risk::RiskLevel;

    fn store(name: &str) -> (tempfile::TempDir, AuditStore) {
        let dir = tempfile::Builder::new().prefix(name).tempdir().unwrap();
        let store = AuditStore::open(&dir.path().join("chaperone.db")).unwrap();
        (dir, store)
    }

    fn entry(session: &str, tool: &str, url: &str, decision: AuditDecision, by: Option<DecidedBy>) -> AuditRow {
        AuditRow {
            session: session.into(),
            client: Some(format!("client-{session}")),
            tab: Some(1),
            tool: tool.into(),
            summary: format!("{tool} on {url}"),
            url: Some(url.into()),
            title: Some(format!("Title of {url}")),
            risk: Some(RiskLevel::Low),
            reasons: vec![],
            decision: Some(decision),
            decided_by: by,
            outcome: Some("ok".into()),
            duration_ms: Some(5),
        }
    }

    fn session_row(session: &str, outcome: &str) -> AuditRow {
        AuditRow {
            session: session.into(),
            client: Some(format!("client-{session}")),
            tool: SESSION_TOOL.into(),
            summary: format!("agent {outcome}"),
            outcome: Some(outcome.into()),
            ..Default::default()
        }
    }

    #[test]
    fn the_sql_site_is_the_pure_site() {
        let (_dir, store) = store("dash-site");
        let conn = open(store.path(), true).unwrap();
        for url in [
            "http://127.0.0.1:8080/a/b",
            "https://shop.example",
            "https://shop.example/",
            "about:blank",
            "chrome://newtab/x",
            "weird",
            "http://[::1]:9/p",
        ] {
            let sql: String =
                conn.query_row(&format!("SELECT {} FROM (SELECT ?1 AS url)", SITE_SQL), [url], |r| r.get(0)).unwrap();
            assert_eq!(sql, shared::dashboard::site_of(url), "{url}");
        }
    }

    #[test]
    fn agents_are_summed_and_filters_narrow_the_timeline() {
        use AuditDecision as D;
        let (_dir, store) = store("dash-data");
        let rows_in = [
            session_row("mcp:a", SESSION_STARTED),
            entry("mcp:a", "browser_click", "http://127.0.0.1:1/x", D::Allow, Some(DecidedBy::Policy)),
            entry("mcp:a", "browser_click", "http://localhost:1/y", D::Deny, Some(DecidedBy::SiteRule)),
            entry("mcp:a", "browser_click", "http://127.0.0.1:1/z", D::Confirm, None),
            entry("mcp:a", "browser_click", "http://127.0.0.1:1/z", D::Approved, Some(DecidedBy::Human)),
            session_row("mcp:a", SESSION_ENDED),
            entry("mcp:b", "browser_type", "http://127.0.0.1:1/z", D::Confirm, None),
            entry("mcp:b", "browser_type", "http://127.0.0.1:1/z", D::Denied, Some(DecidedBy::Timeout)),
            entry("mcp:b", "handoff", "http://127.0.0.1:1/w", D::Allow, None),
        ];
        for e in &rows_in {
            store.record(e).unwrap();
        }
        let conn = open(store.path(), true).unwrap();
        let d = data(&conn, &Filters::default()).unwrap();
        assert_eq!(d.sessions.iter().map(|s| s.session.as_str()).collect::<Vec<_>>(), ["mcp:b", "mcp:a"]);
        let a = &d.sessions[1];
        assert_eq!((a.actions, a.asked, a.approved, a.denied, a.timed_out, a.handoffs), (3, 1, 1, 0, 0, 0));
        assert_eq!(a.client.as_deref(), Some("client-mcp:a"));
        assert_eq!(a.ended.as_deref(), Some(a.last.as_str()), "its end row");
        let b = &d.sessions[0];
        assert_eq!((b.actions, b.asked, b.approved, b.denied, b.timed_out, b.handoffs), (1, 1, 0, 0, 1, 1));
        assert_eq!(b.ended, None, "still running");
        assert_eq!(d.rows.len(), 9);
        assert!(d.rows.windows(2).all(|w| w[0].id < w[1].id), "oldest first");
        assert_eq!(d.last_id, 9);
        assert_eq!(d.sites[0], Count { key: "http://127.0.0.1:1".into(), count: 6 });
        let refused = &d.rows[2];
        assert_eq!((refused.decision, refused.decided_by), (Some(D::Deny), Some(DecidedBy::SiteRule)));
        assert_eq!((refused.title.as_deref(), refused.duration_ms), (Some("Title of http://localhost:1/y"), Some(5)));

        let only = |f: Filters| rows(&conn, &f, 100).unwrap().0.iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(only(Filters { session: Some("mcp:b".into()), ..Default::default() }), [7, 8, 9]);
        assert_eq!(only(Filters { site: Some("http://localhost:1".into()), ..Default::default() }), [3]);
        assert_eq!(only(Filters { site: Some("http://localhost".into()), ..Default::default() }), Vec::<i64>::new());
        assert_eq!(only(Filters { decision: Some(D::Deny), ..Default::default() }), [3]);
        assert_eq!(only(Filters { risk: Some(RiskLevel::High), ..Default::default() }), Vec::<i64>::new());
        assert_eq!(only(Filters { q: Some("HANDOFF".into()), ..Default::default() }), [9]);
        assert_eq!(
            only(Filters { q: Some("title of http://127.0.0.1:1/w".into()), ..Default::default() }),
            [9],
            "titles are searched"
        );
        assert_eq!(only(Filters { q: Some("%".into()), ..Default::default() }), Vec::<i64>::new(), "% is literal");
        let (newest, more) = rows(&conn, &Filters::default(), 2).unwrap();
        assert_eq!((newest.iter().map(|r| r.id).collect::<Vec<_>>(), more), (vec![8, 9], true));
        assert_eq!(last_session(&conn).unwrap().as_deref(), Some("mcp:b"));
    }

    #[test]
    fn an_empty_store_answers_empty() {
        let (_dir, store) = store("dash-empty");
        let conn = open(store.path(), false).unwrap();
        let d = data(&conn, &Filters::default()).unwrap();
        assert!(d.sessions.is_empty() && d.rows.is_empty() && !d.more && d.last_id == 0);
        assert_eq!(last_session(&conn).unwrap(), None);
    }
}
