//! The flow store: the person's recorded flows in SQLite, table `flows` of
//! `home/chaperone.db` (WAL, `synchronous=FULL`, `secure_delete`, file
//! 0600), one row per flow: its name, creation time, step and parameter
//! counts and the flow itself as JSON (`shared::flow::Flow`).
//!
//! Every flow is checked with `shared::record::check_flow` before it is
//! written (bounds, parameters, URLs, no literal for a sensitive field) and
//! again when read back, so a row edited outside Chaperone is refused
//! rather than replayed. `secure_delete` overwrites removed and replaced
//! flows instead of leaving them in free pages.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::Serialize;
use shared::flow::Flow;

use crate::error::Error;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS flows (
    name     TEXT    PRIMARY KEY,
    created  TEXT    NOT NULL,
    steps    INTEGER NOT NULL,
    params   INTEGER NOT NULL,
    flow     TEXT    NOT NULL
);
";

/// One row of `chaperone flow list` / `flow_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowSummary {
    pub name: String,
    pub created: String,
    pub steps: usize,
    pub params: usize,
}

/// A cheap, clonable handle on the `flows` table.
#[derive(Clone)]
pub struct FlowStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl FlowStore {
    /// Opens (creating 0600) the database at `path` and its `flows` table.
    pub fn open(path: &Path) -> Result<FlowStore, Error> {
        match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(path, e)),
        }
        let db = |e: rusqlite::Error| Error::FlowStore { path: path.to_path_buf(), message: e.to_string() };
        // Never let SQLite create the file itself (it would not be 0600).
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(db)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(db)?;
        conn.pragma_update(None, "secure_delete", "ON").map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        Ok(FlowStore { conn: Arc::new(Mutex::new(conn)), path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every flow's name, creation time and counts, sorted by name.
    pub fn list(&self) -> Result<Vec<FlowSummary>, Error> {
        let conn = self.lock()?;
        let read = |e: rusqlite::Error| self.db_error(format!("read: {e}"));
        let mut stmt = conn.prepare("SELECT name, created, steps, params FROM flows ORDER BY name").map_err(read)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(FlowSummary {
                    name: r.get(0)?,
                    created: r.get(1)?,
                    steps: r.get::<_, i64>(2)?.try_into().unwrap_or(0),
                    params: r.get::<_, i64>(3)?.try_into().unwrap_or(0),
                })
            })
            .map_err(read)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(read)
    }

    /// The flow called `name`; `None` when there is none. A stored flow
    /// that no longer passes `check_flow` is an error, never returned.
    pub fn get(&self, name: &str) -> Result<Option<Flow>, Error> {
        let json: Option<String> = self
            .lock()?
            .query_row("SELECT flow FROM flows WHERE name = ?1", params![name], |r| r.get(0))
            .optional()
            .map_err(|e| self.db_error(format!("read: {e}")))?;
        let Some(json) = json else { return Ok(None) };
        let damaged = |why: String| self.db_error(format!("the stored flow {name:?} is damaged ({why})"));
        let flow: Flow = serde_json::from_str(&json).map_err(|e| damaged(e.to_string()))?;
        shared::record::check_flow(&flow).map_err(|p| damaged(p.to_string()))?;
        if flow.name != name {
            return Err(damaged("its name does not match its row".into()));
        }
        Ok(Some(flow))
    }

    /// Stores `flow` after `check_flow`. An existing flow of the same name
    /// is replaced only when `replace`; otherwise [`Error::FlowExists`].
    pub fn save(&self, flow: &Flow, replace: bool) -> Result<(), Error> {
        shared::record::check_flow(flow).map_err(|p| Error::FlowInvalid(p.to_string()))?;
        let json = serde_json::to_string(flow)?;
        let sql = if replace {
            "INSERT OR REPLACE INTO flows (name, created, steps, params, flow) VALUES (?1, ?2, ?3, ?4, ?5)"
        } else {
            "INSERT INTO flows (name, created, steps, params, flow) VALUES (?1, ?2, ?3, ?4, ?5)"
        };
        let conn = self.lock()?;
        match conn
            .execute(sql, params![flow.name, flow.created, flow.steps.len() as i64, flow.params.len() as i64, json])
        {
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
                Err(Error::FlowExists(flow.name.clone()))
            }
            Err(e) => Err(self.db_error(format!("write: {e}"))),
        }
    }

    /// Removes `name`; `false` when there was no such flow.
    pub fn delete(&self, name: &str) -> Result<bool, Error> {
        let n = self
            .lock()?
            .execute("DELETE FROM flows WHERE name = ?1", params![name])
            .map_err(|e| self.db_error(format!("write: {e}")))?;
        Ok(n > 0)
    }

    fn lock(&self) -> Result<MutexGuard<'_, Connection>, Error> {
        self.conn.lock().map_err(|_| self.db_error("lock poisoned"))
    }

    fn db_error(&self, message: impl Into<String>) -> Error {
        Error::FlowStore { path: self.path.clone(), message: message.into() }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use shared::flow::{Descriptor, Locator, Param, ParamKind, Step, StepAction, Value};

    use super::*;

    pub(crate) fn sample(name: &str) -> Flow {
        Flow {
            name: name.into(),
            created: "2026-12-01T21:00:00Z".into(),
            steps: vec![
                Step {
                    action: StepAction::Navigate { url: "http://127.0.0.1:8080/flowshop/".into() },
                    target: None,
                    url: "http://127.0.0.1:8080/flowshop/".into(),
                    title: String::new(),
                    risk: None,
                },
                Step {
                    action: StepAction::Fill { value: Value::Param("email".into()) },
                    target: Some(Descriptor {
                        role: "textbox".into(),
                        name: "E-mail".into(),
                        tag: "input".into(),
                        input_type: "email".into(),
                        locators: vec![Locator::Id("email".into())],
                        ..Descriptor::default()
                    }),
                    url: "http://127.0.0.1:8080/flowshop/address.html".into(),
                    title: "Address".into(),
                    risk: None,
                },
            ],
            params: vec![Param { name: "email".into(), kind: ParamKind::Email, default: None }],
        }
    }

    fn store() -> (tempfile::TempDir, FlowStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = FlowStore::open(&dir.path().join("chaperone.db")).unwrap();
        (dir, store)
    }

    #[test]
    fn save_get_list_delete() {
        let (dir, store) = store();
        let mode = std::fs::metadata(dir.path().join("chaperone.db")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(store.list().unwrap().is_empty());
        store.save(&sample("checkout"), false).unwrap();
        store.save(&sample("another"), false).unwrap();
        assert_eq!(store.get("checkout").unwrap(), Some(sample("checkout")));
        assert_eq!(store.get("missing").unwrap(), None);
        let list = store.list().unwrap();
        assert_eq!(list.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["another", "checkout"]);
        assert_eq!((list[1].steps, list[1].params), (2, 1));
        assert!(store.delete("checkout").unwrap());
        assert!(!store.delete("checkout").unwrap());
        assert_eq!(store.get("checkout").unwrap(), None);
    }

    #[test]
    fn replace_only_when_asked() {
        let (_dir, store) = store();
        store.save(&sample("checkout"), false).unwrap();
        let mut longer = sample("checkout");
        longer.steps.push(longer.steps[0].clone());
        assert!(matches!(store.save(&longer, false), Err(Error::FlowExists(n)) if n == "checkout"));
        assert_eq!(store.get("checkout").unwrap().unwrap().steps.len(), 2);
        store.save(&longer, true).unwrap();
        assert_eq!(store.get("checkout").unwrap().unwrap().steps.len(), 3);
    }

    #[test]
    fn invalid_flows_are_not_stored() {
        let (_dir, store) = store();
        let mut bad = sample("checkout");
        bad.params.clear();
        assert!(matches!(store.save(&bad, false), Err(Error::FlowInvalid(m)) if m.contains("step 2")));
        assert!(store.list().unwrap().is_empty());
    }

    #[test]
    fn a_damaged_row_is_refused_not_replayed() {
        let (dir, store) = store();
        store.save(&sample("checkout"), false).unwrap();
        let conn = Connection::open(dir.path().join("chaperone.db")).unwrap();
        let mut flow = sample("checkout");
        flow.steps[1].action = StepAction::Navigate { url: "javascript:alert(1)".into() };
        conn.execute("UPDATE flows SET flow = ?1", params![serde_json::to_string(&flow).unwrap()]).unwrap();
        assert!(matches!(store.get("checkout"), Err(Error::FlowStore { message, .. }) if message.contains("damaged")));
    }
}
