//! The person's popup choices of site access: table `site_rules` of
//! `home/chaperone.db` (WAL, `synchronous=FULL`, file 0600), one row per
//! exact origin (`scheme://host:port`) with `read` or `deny` and when it
//! was set. "Agents may act" removes the row.
//!
//! Only the extension's popup and approval pages write here (through
//! `ExtToBridge::SetSiteAccess`, after `shared::policy::popup_choice`):
//! there is no MCP tool, no CLI write and no page message for it.
//! `chaperone sites` lists these rows beside `config.toml`'s `[[sites]]`
//! access rules, read only. A row that does not parse (edited outside
//! Chaperone) is skipped with a warning, never loosened into `act`: the
//! popup shows the site as it is.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags, params};
use shared::policy::{PopupRule, SiteAccess};

use crate::error::Error;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS site_rules (
    origin  TEXT PRIMARY KEY,
    access  TEXT NOT NULL,
    set_at  TEXT NOT NULL
);
";

/// One stored popup choice, with when it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRule {
    pub rule: PopupRule,
    /// RFC 3339 UTC.
    pub set_at: String,
}

/// A cheap, clonable handle on the `site_rules` table.
#[derive(Clone)]
pub struct SiteRuleStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl std::fmt::Debug for SiteRuleStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteRuleStore").field("path", &self.path).finish_non_exhaustive()
    }
}

impl SiteRuleStore {
    /// Opens (creating 0600) the database at `path` and its `site_rules` table.
    pub fn open(path: &Path) -> Result<SiteRuleStore, Error> {
        match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(path, e)),
        }
        let db = |e: rusqlite::Error| Error::SiteRules { path: path.to_path_buf(), message: e.to_string() };
        // Never let SQLite create the file itself (it would not be 0600).
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(db)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        Ok(SiteRuleStore { conn: Arc::new(Mutex::new(conn)), path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every stored choice, by origin.
    pub fn list(&self) -> Result<Vec<StoredRule>, Error> {
        let conn = self.lock()?;
        read_rows(&conn).map_err(|e| self.db_error(format!("read: {e}")))
    }

    /// Stores `access` for `origin` (replacing its row), or removes the
    /// row when `access` is `None`.
    pub fn set(&self, origin: &str, access: Option<SiteAccess>) -> Result<(), Error> {
        let conn = self.lock()?;
        let write = |e: rusqlite::Error| self.db_error(format!("write: {e}"));
        match access {
            Some(a) => conn
                .execute(
                    "INSERT OR REPLACE INTO site_rules (origin, access, set_at) VALUES (?1, ?2, ?3)",
                    params![origin, a.as_str(), crate::time::now_rfc3339()],
                )
                .map_err(write)?,
            None => conn.execute("DELETE FROM site_rules WHERE origin = ?1", params![origin]).map_err(write)?,
        };
        Ok(())
    }

    fn lock(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.conn.lock().map_err(|_| self.db_error("lock poisoned"))
    }

    fn db_error(&self, message: impl Into<String>) -> Error {
        Error::SiteRules { path: self.path.clone(), message: message.into() }
    }
}

/// The stored choices of the database at `path`, opened read only (for
/// `chaperone sites`, which never writes): none when there is no database
/// or no table yet.
pub fn read_only_list(path: &Path) -> Result<Vec<StoredRule>, Error> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let db = |e: rusqlite::Error| Error::SiteRules { path: path.to_path_buf(), message: e.to_string() };
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(db)?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
    let exists: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'site_rules'", [], |r| r.get(0))
        .map_err(db)?;
    if exists == 0 {
        return Ok(Vec::new());
    }
    read_rows(&conn).map_err(db)
}

fn read_rows(conn: &Connection) -> Result<Vec<StoredRule>, rusqlite::Error> {
    let mut stmt = conn.prepare("SELECT origin, access, set_at FROM site_rules ORDER BY origin")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (origin, access, set_at) = row?;
        let parsed = SiteAccess::parse(&access).filter(|a| *a != SiteAccess::Act);
        match parsed {
            Some(access) if shared::url::Origin::is_exact(&origin) => {
                out.push(StoredRule { rule: PopupRule { origin, access }, set_at })
            }
            _ => tracing::warn!(origin = %origin, access = %access, "a site rule row that does not parse is skipped"),
        }
    }
    Ok(out)
}

/// `chaperone sites`: the access rules of `config.toml` and the popup's,
/// as text (`json`: one JSON object).
pub fn render(config: &[shared::policy::SiteRule], popup: &[StoredRule], json: bool) -> String {
    let config: Vec<_> = config.iter().filter_map(|s| s.access.map(|a| (s.origin.as_str(), a))).collect();
    if json {
        let c: Vec<_> = config.iter().map(|(o, a)| serde_json::json!({"origin": o, "access": a.as_str()})).collect();
        let p: Vec<_> = popup
            .iter()
            .map(|r| serde_json::json!({"origin": r.rule.origin, "access": r.rule.access.as_str(), "set_at": r.set_at}))
            .collect();
        return serde_json::json!({"config": c, "popup": p}).to_string() + "\n";
    }
    let mut out =
        String::from("Site access (the most restrictive matching rule wins; every other site: Agents may act)\n");
    out.push_str("\nconfig.toml [[sites]]:\n");
    if config.is_empty() {
        out.push_str("  (none)\n");
    }
    for (origin, access) in &config {
        out.push_str(&format!("  {:<40} {} ({})\n", origin, access.label(), access.as_str()));
    }
    out.push_str("\nchosen in the extension popup:\n");
    if popup.is_empty() {
        out.push_str("  (none)\n");
    }
    for r in popup {
        out.push_str(&format!(
            "  {:<40} {} ({}), set {}\n",
            r.rule.origin,
            r.rule.access.label(),
            r.rule.access.as_str(),
            r.set_at
        ));
    }
    out.push_str("\nOnly the extension's popup changes popup choices; config.toml is yours to edit.\n");
    out
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn set_list_replace_remove_and_skip_damaged_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chaperone.db");
        let store = SiteRuleStore::open(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(store.list().unwrap().is_empty());
        store.set("https://bank.example:443", Some(SiteAccess::Read)).unwrap();
        store.set("http://127.0.0.1:8080", Some(SiteAccess::Deny)).unwrap();
        store.set("https://bank.example:443", Some(SiteAccess::Deny)).unwrap();
        let got: Vec<_> = store.list().unwrap().into_iter().map(|r| r.rule).collect();
        assert_eq!(
            got,
            [
                PopupRule { origin: "http://127.0.0.1:8080".into(), access: SiteAccess::Deny },
                PopupRule { origin: "https://bank.example:443".into(), access: SiteAccess::Deny },
            ]
        );
        store.set("https://bank.example:443", None).unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
        // Rows edited outside Chaperone are skipped, not read as `act`.
        let c = Connection::open(&path).unwrap();
        c.execute("INSERT INTO site_rules VALUES ('https://x.example:443', 'sometimes', 'now')", []).unwrap();
        c.execute("INSERT INTO site_rules VALUES ('x.example', 'deny', 'now')", []).unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
        // The CLI's read-only view sees the rows; no database is no rows.
        assert_eq!(read_only_list(&path).unwrap().len(), 1);
        assert!(read_only_list(&dir.path().join("none.db")).unwrap().is_empty());
        assert!(!dir.path().join("none.db").exists(), "the listing creates nothing");
    }

    #[test]
    fn the_listing_names_both_sources() {
        let config: Vec<shared::policy::SiteRule> = serde_json::from_str(
            r#"[{"origin":"https://*.bank.example","access":"read"},{"origin":"http://127.0.0.1:*","high":"allow"}]"#,
        )
        .unwrap();
        let popup = [StoredRule {
            rule: PopupRule { origin: "https://mail.example:443".into(), access: SiteAccess::Deny },
            set_at: "2026-12-04T15:00:00Z".into(),
        }];
        let text = render(&config, &popup, false);
        assert!(text.contains("https://*.bank.example") && text.contains("Read only"), "{text}");
        assert!(text.contains("https://mail.example:443") && text.contains("Never"), "{text}");
        assert!(!text.contains("127.0.0.1"), "risk-only rules are not access rules: {text}");
        let json: serde_json::Value = serde_json::from_str(&render(&config, &popup, true)).unwrap();
        assert_eq!(json["config"][0]["access"], "read");
        assert_eq!(json["popup"][0]["origin"], "https://mail.example:443");
    }
}
