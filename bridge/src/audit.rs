//! The audit log: SQLite in `home/chaperone.db` (WAL, `synchronous=FULL`,
//! file 0600). One row per action and per decision (docs/design.md, "Policy,
//! approvals and audit"). Every text field passes through `shared::redact`
//! and URLs lose their query string here, as a last line of defence behind
//! the masking done by callers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use shared::audit::{AuditEntry, DecidedBy};
use shared::redact::redact_text;

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
const ADDED_COLUMNS: &[(&str, &str)] = &[("client", "TEXT")];

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

/// What a caller records; `id` and `time` are assigned by the store.
#[derive(Debug, Clone, Default)]
pub struct NewEntry {
    pub session: String,
    /// The session's client label, if an MCP session caused the row.
    pub client: Option<String>,
    pub tab: Option<i64>,
    pub tool: String,
    pub summary: String,
    pub url: Option<String>,
    pub risk: Option<String>,
    pub reasons: Vec<String>,
    pub decision: Option<String>,
    pub decided_by: Option<DecidedBy>,
    pub outcome: Option<String>,
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
        let db = |e: rusqlite::Error| Error::Server(format!("audit database {}: {e}", path.display()));
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
    pub fn record(&self, e: &NewEntry) -> Result<i64, Error> {
        let now = crate::time::unix_now();
        let url = e.url.as_deref().map(|u| redact_text(shared::url::strip_query(u)));
        let reasons: Vec<String> = e.reasons.iter().map(|r| redact_text(r)).collect();
        let reasons = serde_json::to_string(&reasons).unwrap_or_else(|_| "[]".into());
        let conn = self.lock()?;
        conn.execute(
            "INSERT INTO audit (time, time_unix, session, tab, tool, summary, url, risk, reasons, decision, decided_by, outcome, client)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                crate::time::rfc3339(now),
                now as i64,
                redact_text(&e.session),
                e.tab,
                e.tool,
                redact_text(&e.summary),
                url,
                e.risk,
                reasons,
                e.decision.as_deref().map(redact_text),
                e.decided_by.map(DecidedBy::as_str),
                e.outcome.as_deref().map(redact_text),
                e.client.as_deref().map(redact_text),
            ],
        )
        .map_err(|e| Error::Server(format!("audit write: {e}")))?;
        Ok(conn.last_insert_rowid())
    }

    /// Sets the outcome of a recorded action.
    pub fn set_outcome(&self, id: i64, outcome: &str) -> Result<(), Error> {
        self.lock()?
            .execute("UPDATE audit SET outcome = ?1 WHERE id = ?2", params![redact_text(outcome), id])
            .map(|_| ())
            .map_err(|e| Error::Server(format!("audit write: {e}")))
    }

    /// Rows at or after `since_unix` (all when `None`), oldest first.
    pub fn list(&self, since_unix: Option<i64>) -> Result<Vec<AuditEntry>, Error> {
        let conn = self.lock()?;
        let mut stmt = conn
            .prepare(
                "SELECT id, time, session, tab, tool, summary, url, risk, reasons, decision, decided_by, outcome, client
                 FROM audit WHERE time_unix >= ?1 ORDER BY id",
            )
            .map_err(|e| Error::Server(format!("audit read: {e}")))?;
        let rows = stmt
            .query_map(params![since_unix.unwrap_or(i64::MIN)], |r| {
                let reasons: String = r.get(8)?;
                let decided_by: Option<String> = r.get(10)?;
                Ok(AuditEntry {
                    id: r.get(0)?,
                    time: r.get(1)?,
                    session: r.get(2)?,
                    tab: r.get(3)?,
                    tool: r.get(4)?,
                    summary: r.get(5)?,
                    url: r.get(6)?,
                    risk: r.get(7)?,
                    reasons: serde_json::from_str(&reasons).unwrap_or_default(),
                    decision: r.get(9)?,
                    decided_by: decided_by.as_deref().and_then(DecidedBy::parse),
                    outcome: r.get(11)?,
                    client: r.get(12)?,
                })
            })
            .map_err(|e| Error::Server(format!("audit read: {e}")))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| Error::Server(format!("audit read: {e}")))
    }

    /// Deletes rows older than `days`; returns how many went.
    pub fn prune(&self, days: u32) -> Result<usize, Error> {
        let cutoff = crate::time::unix_now() as i64 - i64::from(days) * 86_400;
        self.lock()?
            .execute("DELETE FROM audit WHERE time_unix < ?1", params![cutoff])
            .map_err(|e| Error::Server(format!("audit prune: {e}")))
    }

    /// The newest row id, if any.
    pub fn last_id(&self) -> Result<Option<i64>, Error> {
        self.lock()?
            .query_row("SELECT max(id) FROM audit", [], |r| r.get(0))
            .optional()
            .map(Option::flatten)
            .map_err(|e| Error::Server(format!("audit read: {e}")))
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Connection>, Error> {
        self.conn.lock().map_err(|_| Error::Server("audit database lock poisoned".into()))
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
            .record(&NewEntry {
                session: "s1".into(),
                client: Some("claude\u{202E}code".into()),
                tab: Some(7),
                tool: "browser_click".into(),
                summary: "click button \"Pay\" with Bearer abc.def.ghi".into(),
                url: Some("https://shop.example/checkout?token=SECRET123#x".into()),
                risk: Some("high".into()),
                reasons: vec!["name matches \"pay\"".into()],
                decision: Some("confirm".into()),
                decided_by: Some(DecidedBy::Human),
                outcome: None,
            })
            .unwrap();
        store.set_outcome(id, "navigated").unwrap();
        let rows = store.list(None).unwrap();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.url.as_deref(), Some("https://shop.example/checkout"));
        assert!(!r.summary.contains("abc.def.ghi"), "{}", r.summary);
        assert_eq!(r.decided_by, Some(DecidedBy::Human));
        assert_eq!(r.outcome.as_deref(), Some("navigated"));
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
            .record(&NewEntry { session: "s".into(), tool: "t".into(), summary: "x".into(), ..Default::default() })
            .unwrap();
        store.lock().unwrap().execute("UPDATE audit SET time_unix = time_unix - 40 * 86400", []).unwrap();
        store
            .record(&NewEntry { session: "s".into(), tool: "t".into(), summary: "y".into(), ..Default::default() })
            .unwrap();
        assert_eq!(store.prune(30).unwrap(), 1);
        let rows = store.list(None).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].summary, "y");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_old_table_gets_the_client_column_and_keeps_its_rows() {
        let dir = std::env::temp_dir().join(format!("chaperone-audit-migrate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("old.db");
        {
            // The table as it was before `client` existed.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(&SCHEMA.replace("CREATE TABLE IF NOT EXISTS", "CREATE TABLE")).unwrap();
            old.execute(
                "INSERT INTO audit (time, time_unix, session, tool, summary) VALUES ('t', 1, 'mcp:old', 'browser_click', 'x')",
                [],
            )
            .unwrap();
        }
        for _ in 0..2 {
            // Opening twice: the migration runs once.
            let store = AuditStore::open(&path).unwrap();
            drop(store);
        }
        let store = AuditStore::open(&path).unwrap();
        store
            .record(&NewEntry {
                session: "mcp:new".into(),
                client: Some("cursor".into()),
                tool: "t".into(),
                summary: "y".into(),
                ..Default::default()
            })
            .unwrap();
        let rows = store.list(None).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].session.as_str(), rows[0].client.as_deref()), ("mcp:old", None));
        assert_eq!((rows[1].session.as_str(), rows[1].client.as_deref()), ("mcp:new", Some("cursor")));
        let json = serde_json::to_value(&rows[0]).unwrap();
        assert!(json.get("client").is_none(), "{json}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
