//! The audit log: SQLite in `home/chaperone.db` (WAL, `synchronous=FULL`,
//! file 0600). One row per action and per decision (docs/design.md, "Policy,
//! approvals and audit"). Every text field passes through `shared::redact`
//! and URLs lose their query string here, as a last line of defence behind
//! the masking done by callers.
//!
//! The row is one typed shape, `shared::audit::AuditEntry`: what
//! [`AuditStore::list`] reads, `chaperone audit --json` prints and the
//! dashboard serves. [`SELECT`] and [`entry_of`] are the one mapping from
//! the table to it (the dashboard's reads use them too); what a writer
//! hands [`AuditStore::record`] is its `AuditRow`, before the store gives
//! it an id and a time.
//!
//! # Upgrades
//!
//! A database written by an older version opens as it is: the columns it
//! lacks ([`ADDED_COLUMNS`]) are added, and its rows keep `NULL` there.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use shared::audit::{AuditDecision, AuditEntry, AuditRow, DecidedBy};
use shared::redact::redact_text;
use shared::risk::RiskLevel;

use crate::error::Error;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    time        TEXT    NOT NULL,
    time_unix   INTEGER NOT NULL,
    session     TEXT    NOT NULL,
    tab         INTEGER,
    tool        TEXT    NOT NULL,
    summary     TEXT    NOT NULL,
    url         TEXT,
    risk        TEXT,
    reasons     TEXT    NOT NULL DEFAULT '[]',
    decision    TEXT,
    decided_by  TEXT,
    outcome     TEXT
);
CREATE INDEX IF NOT EXISTS audit_time ON audit(time_unix);
";

/// Columns added after the first schema, with their type: added to an
/// older table when it opens (rows already there keep `NULL`).
pub(crate) const ADDED_COLUMNS: &[(&str, &str)] = &[("client", "TEXT"), ("title", "TEXT"), ("duration_ms", "INTEGER")];

/// The columns of an [`AuditEntry`], in [`entry_of`]'s order; a query
/// appends its `WHERE`/`ORDER BY`.
pub(crate) const SELECT: &str = "SELECT id, time, session, client, tab, tool, summary, url, title, risk, reasons, \
                                 decision, decided_by, outcome, duration_ms FROM audit";

/// One row of [`SELECT`] as the typed entry. A stored word this version
/// does not know (a risk, decision or decider written by a newer one)
/// reads as absent.
pub(crate) fn entry_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<AuditEntry> {
    let word = |i: usize| r.get::<_, Option<String>>(i);
    let reasons = word(10)?.unwrap_or_default();
    let (id, time) = (r.get(0)?, r.get(1)?);
    let row = AuditRow {
        session: r.get(2)?,
        client: r.get(3)?,
        tab: r.get(4)?,
        tool: r.get(5)?,
        summary: r.get(6)?,
        url: r.get(7)?,
        title: r.get(8)?,
        risk: word(9)?.as_deref().and_then(risk_of),
        reasons: serde_json::from_str(&reasons).unwrap_or_default(),
        decision: word(11)?.as_deref().and_then(AuditDecision::parse),
        decided_by: word(12)?.as_deref().and_then(DecidedBy::parse),
        outcome: r.get(13)?,
        duration_ms: r.get::<_, Option<i64>>(14)?.and_then(|d| u64::try_from(d).ok()),
    };
    Ok(AuditEntry { id, time, row })
}

fn risk_of(s: &str) -> Option<RiskLevel> {
    [RiskLevel::Low, RiskLevel::Medium, RiskLevel::High].into_iter().find(|r| r.as_str() == s)
}

/// Adds the [`ADDED_COLUMNS`] an older `audit` table lacks.
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('audit')")?;
    let have = stmt.query_map([], |r| r.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
    for (name, kind) in ADDED_COLUMNS {
        if !have.iter().any(|h| h == name) {
            conn.execute_batch(&format!("ALTER TABLE audit ADD COLUMN {name} {kind};"))?;
        }
    }
    Ok(())
}

/// A cheap, clonable handle; calls run on the blocking pool.
#[derive(Clone)]
pub struct AuditStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl AuditStore {
    /// Opens (creating 0600) the database and its schema.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if !path.exists() {
            crate::home::write_private(path, b"")?;
        }
        let db = |e: rusqlite::Error| Error::Audit(format!("{}: {e}", path.display()));
        let conn = Connection::open(path).map_err(db)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        migrate(&conn).map_err(db)?;
        Ok(AuditStore { conn: Arc::new(Mutex::new(conn)), path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records one row and returns its id.
    pub fn record(&self, e: &AuditRow) -> Result<i64, Error> {
        let now = crate::time::unix_now();
        let url = e.url.as_deref().map(|u| redact_text(shared::url::strip_query(u)));
        let reasons: Vec<String> = e.reasons.iter().map(|r| redact_text(r)).collect();
        let reasons = serde_json::to_string(&reasons).unwrap_or_else(|_| "[]".into());
        let conn = self.lock()?;
        conn.execute(
            "INSERT INTO audit (time, time_unix, session, tab, tool, summary, url, risk, reasons, decision, decided_by, \
             outcome, client, title, duration_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                crate::time::rfc3339(now),
                now as i64,
                redact_text(&e.session),
                e.tab,
                e.tool,
                redact_text(&e.summary),
                url,
                e.risk.map(RiskLevel::as_str),
                reasons,
                e.decision.map(AuditDecision::as_str),
                e.decided_by.map(DecidedBy::as_str),
                e.outcome.as_deref().map(redact_text),
                e.client.as_deref().map(redact_text),
                e.title.as_deref().map(redact_text),
                e.duration_ms.map(|d| i64::try_from(d).unwrap_or(i64::MAX)),
            ],
        )
        .map_err(|e| Error::Audit(format!("write: {e}")))?;
        Ok(conn.last_insert_rowid())
    }

    /// Sets the outcome of a recorded action, and its duration when known.
    pub fn set_outcome(&self, id: i64, outcome: &str, duration_ms: Option<u64>) -> Result<(), Error> {
        let duration = duration_ms.map(|d| i64::try_from(d).unwrap_or(i64::MAX));
        self.lock()?
            .execute(
                "UPDATE audit SET outcome = ?1, duration_ms = coalesce(?2, duration_ms) WHERE id = ?3",
                params![redact_text(outcome), duration, id],
            )
            .map(|_| ())
            .map_err(|e| Error::Audit(format!("write: {e}")))
    }

    /// Rows at or after `since_unix` (all when `None`), oldest first.
    pub fn list(&self, since_unix: Option<i64>) -> Result<Vec<AuditEntry>, Error> {
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare(&format!("{SELECT} WHERE time_unix >= ?1 ORDER BY id"))
            .map_err(|e| Error::Audit(format!("read: {e}")))?;
        let rows = stmt
            .query_map(params![since_unix.unwrap_or(i64::MIN)], entry_of)
            .map_err(|e| Error::Audit(format!("read: {e}")))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| Error::Audit(format!("read: {e}")))
    }

    /// Deletes rows older than `days`; returns how many went.
    pub fn prune(&self, days: u32) -> Result<usize, Error> {
        let cutoff = crate::time::unix_now() as i64 - i64::from(days) * 86_400;
        self.lock()?
            .execute("DELETE FROM audit WHERE time_unix < ?1", params![cutoff])
            .map_err(|e| Error::Audit(format!("prune: {e}")))
    }

    /// The newest row id, if any.
    pub fn last_id(&self) -> Result<Option<i64>, Error> {
        self.lock()?
            .query_row("SELECT max(id) FROM audit", [], |r| r.get(0))
            .optional()
            .map(Option::flatten)
            .map_err(|e| Error::Audit(format!("read: {e}")))
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, Error> {
        self.conn.lock().map_err(|_| Error::Audit("lock poisoned".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn rows_are_stored_redacted_without_query_strings_in_a_private_wal_database() {
        let dir = std::env::temp_dir().join(format!("chaperone-audit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("chaperone.db");
        let store = AuditStore::open(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let mode: String = store.lock().unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = store.lock().unwrap().query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        assert_eq!(sync, 2, "synchronous=FULL");

        let id = store
            .record(&AuditRow {
                session: "s1".into(),
                client: Some("claude\u{202E}code".into()),
                tab: Some(7),
                tool: "browser_click".into(),
                summary: "click button \"Pay\" with Bearer abc.def.ghi".into(),
                url: Some("https://shop.example/checkout?token=SECRET123#x".into()),
                title: Some("Checkout <b>now</b> Bearer abc.def.ghi".into()),
                risk: Some(RiskLevel::High),
                reasons: vec!["name matches \"pay\"".into()],
                decision: Some(AuditDecision::Confirm),
                decided_by: Some(DecidedBy::Human),
                outcome: Some("pending".into()),
                duration_ms: Some(12),
            })
            .unwrap();
        store.set_outcome(id, "navigated", Some(1_234)).unwrap();
        let rows = store.list(None).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.url.as_deref(), Some("https://shop.example/checkout"));
        assert!(!r.summary.contains("abc.def.ghi"), "{}", r.summary);
        assert_eq!(r.decided_by, Some(DecidedBy::Human));
        assert_eq!(r.outcome.as_deref(), Some("navigated"));
        assert_eq!(r.duration_ms, Some(1_234), "the outcome's time replaces the pending row's");
        assert_eq!((r.risk, r.decision), (Some(RiskLevel::High), Some(AuditDecision::Confirm)));
        let title = r.title.as_deref().unwrap_or_default();
        assert!(title.starts_with("Checkout <b>now</b>") && !title.contains("abc.def.ghi"), "{title}");
        store.set_outcome(id, "navigated", None).unwrap();
        assert_eq!(store.list(None).unwrap()[0].duration_ms, Some(1_234), "an unknown duration keeps the known one");
        assert_eq!(r.reasons, vec!["name matches \"pay\"".to_string()]);
        assert_eq!(r.client.as_deref(), Some("claude\u{202E}code"), "stored as given; labels are sanitised before");
        drop(store);
        let raw = std::fs::read(&path).unwrap();
        let wal = std::fs::read(dir.join("chaperone.db-wal")).unwrap_or_default();
        for bytes in [&raw, &wal] {
            assert!(!String::from_utf8_lossy(bytes).contains("SECRET123"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn pruning_keeps_recent_rows() {
        let dir = std::env::temp_dir().join(format!("chaperone-audit-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = AuditStore::open(&dir.join("a.db")).unwrap();
        store
            .record(&AuditRow { session: "s".into(), tool: "t".into(), summary: "x".into(), ..Default::default() })
            .unwrap();
        store.lock().unwrap().execute("UPDATE audit SET time_unix = time_unix - 40 * 86400", []).unwrap();
        store
            .record(&AuditRow { session: "s".into(), tool: "t".into(), summary: "y".into(), ..Default::default() })
            .unwrap();
        assert_eq!(store.prune(30).unwrap(), 1);
        let rows = store.list(None).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].summary, "y");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn older_tables_get_the_new_columns_and_keep_their_rows() {
        let dir = tempfile::Builder::new().prefix("chaperone-audit-migrate").tempdir().unwrap();
        // The first schema, and the one with `client` but neither `title`
        // nor `duration_ms` (the dashboard's first version).
        let first = SCHEMA.replace("CREATE TABLE IF NOT EXISTS", "CREATE TABLE");
        let with_client = format!("{first}\nALTER TABLE audit ADD COLUMN client TEXT;");
        for (name, schema) in [("first.db", first.as_str()), ("client.db", with_client.as_str())] {
            let path = dir.path().join(name);
            {
                let old = Connection::open(&path).unwrap();
                old.execute_batch(schema).unwrap();
                old.execute(
                    "INSERT INTO audit (time, time_unix, session, tool, summary, risk, decision, decided_by, outcome) \
                     VALUES ('t', 1, 'mcp:old', 'browser_click', 'x', 'high', 'deny', 'policy', 'PERMISSION_DENIED')",
                    [],
                )
                .unwrap();
            }
            for _ in 0..2 {
                // Opening twice: the migration runs once.
                drop(AuditStore::open(&path).unwrap());
            }
            let store = AuditStore::open(&path).unwrap();
            store
                .record(&AuditRow {
                    session: "mcp:new".into(),
                    client: Some("cursor".into()),
                    tool: "t".into(),
                    summary: "y".into(),
                    title: Some("A page".into()),
                    duration_ms: Some(7),
                    ..Default::default()
                })
                .unwrap();
            let rows = store.list(None).unwrap();
            assert_eq!(rows.len(), 2, "{name}");
            let (old, new) = (&rows[0], &rows[1]);
            assert_eq!(
                (old.session.as_str(), old.client.as_deref(), old.title.as_deref(), old.duration_ms),
                ("mcp:old", None, None, None),
                "{name}"
            );
            assert_eq!(
                (old.risk, old.decision, old.decided_by),
                (Some(RiskLevel::High), Some(AuditDecision::Deny), Some(DecidedBy::Policy)),
                "{name}"
            );
            assert_eq!(
                (new.client.as_deref(), new.title.as_deref(), new.duration_ms),
                (Some("cursor"), Some("A page"), Some(7)),
                "{name}"
            );
            let json = serde_json::to_value(old).unwrap();
            assert!(
                json.get("client").is_none() && json.get("title").is_none() && json.get("duration_ms").is_none(),
                "{json}"
            );
            let cols: Vec<String> = store
                .lock()
                .unwrap()
                .prepare("SELECT name FROM pragma_table_info('audit')")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            for (col, _) in ADDED_COLUMNS {
                assert_eq!(cols.iter().filter(|c| c == col).count(), 1, "{name}: {col} once");
            }
        }
    }

    #[test]
    fn words_this_version_does_not_know_read_as_absent() {
        let dir = tempfile::Builder::new().prefix("chaperone-audit-words").tempdir().unwrap();
        let store = AuditStore::open(&dir.path().join("a.db")).unwrap();
        store.lock().unwrap()
            .execute(
                "INSERT INTO audit (time, time_unix, session, tool, summary, risk, decision, decided_by, reasons, duration_ms) \
                 VALUES ('t', 1, 's', 't', 'x', 'extreme', 'perhaps', 'oracle', 'not json', -5)",
                [],
            )
            .unwrap();
        let r = &store.list(None).unwrap()[0];
        assert_eq!((r.risk, r.decision, r.decided_by, r.duration_ms), (None, None, None, None));
        assert!(r.reasons.is_empty());
    }
}
