//! Placeholder for the flow store of branch `record` (same API), so that
//! replay builds before that branch is merged. Replaced by `record`'s
//! `bridge/src/flows.rs` on merge.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use shared::flow::Flow;

use crate::error::Error;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowSummary {
    pub name: String,
    pub created: String,
    pub steps: usize,
    pub params: usize,
}

#[derive(Clone)]
pub struct FlowStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

fn db(e: rusqlite::Error) -> Error {
    Error::Config(format!("flow store: {e}"))
}

impl FlowStore {
    pub fn open(path: &Path) -> Result<FlowStore, Error> {
        let conn = Connection::open(path).map_err(db)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS flows (name TEXT PRIMARY KEY, created TEXT NOT NULL, steps INTEGER NOT NULL, \
             params INTEGER NOT NULL, flow TEXT NOT NULL);",
        )
        .map_err(db)?;
        Ok(FlowStore { conn: Arc::new(Mutex::new(conn)), path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn list(&self) -> Result<Vec<FlowSummary>, Error> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut stmt = conn.prepare("SELECT name, created, steps, params FROM flows ORDER BY name").map_err(db)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(FlowSummary { name: r.get(0)?, created: r.get(1)?, steps: r.get(2)?, params: r.get(3)? })
            })
            .map_err(db)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(db)
    }

    pub fn get(&self, name: &str) -> Result<Option<Flow>, Error> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let json: Option<String> =
            conn.query_row("SELECT flow FROM flows WHERE name = ?1", [name], |r| r.get(0)).optional().map_err(db)?;
        json.map(|j| serde_json::from_str(&j).map_err(|e| Error::Config(e.to_string()))).transpose()
    }

    pub fn save(&self, flow: &Flow, replace: bool) -> Result<(), Error> {
        let json = serde_json::to_string(flow).map_err(|e| Error::Config(e.to_string()))?;
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let verb = if replace { "INSERT OR REPLACE" } else { "INSERT" };
        conn.execute(
            &format!("{verb} INTO flows (name, created, steps, params, flow) VALUES (?1, ?2, ?3, ?4, ?5)"),
            params![flow.name, flow.created, flow.steps.len(), flow.params.len(), json],
        )
        .map_err(db)?;
        Ok(())
    }

    pub fn delete(&self, name: &str) -> Result<bool, Error> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        Ok(conn.execute("DELETE FROM flows WHERE name = ?1", [name]).map_err(db)? > 0)
    }
}
