//! The person's stored secrets masked by value in every tool result: a
//! backstop behind the rules that keep a secret off the page (a secret is
//! only typed into sensitive fields, whose values snapshots show as
//! `••••`). A page can still show one — echo it as a button's name, put it
//! in its title, its text, a URL — in any spelling a page makes of it;
//! [`mask_result`] replaces each by `{secret:NAME}`
//! (`shared::redact::KnownSet`: as is, percent-encoded, JSON-escaped,
//! upper- and lower-cased, reversed, hex, base64 at any alignment, and the
//! pieces of a value split in two) before the agent sees it, in the text
//! and in the structured data (`results::mask_known_values`). It runs once
//! per tool call, in the MCP dispatch (`mcp::McpServer::call_tool`), so
//! every result — page-derived or not, errors too — goes through it.
//!
//! Reading the secrets decrypts each of them; doing that on every call
//! would be slow. So what was read is cached per store, and it is read
//! again whenever the store's list of `(name, created, updated)` rows
//! differs from the one the cache was read from: `chaperone secret set`
//! and `secret remove` write the database from another process, and every
//! write moves one of those (a replacement moves `updated`, in
//! milliseconds). Listing the rows decrypts nothing; it is one SQLite
//! query on the blocking pool per call. The cache lives outside
//! `AppState` (one entry per open store, so the bridges a test process
//! runs side by side each have theirs) and holds the values' spellings
//! in the daemon's memory, like the store's own reads do while a secret is
//! typed; it is replaced when the list changes. Values are never logged:
//! a secret that cannot be read is logged by name, with the store's
//! error, and left out.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use rmcp::model::CallToolResult;
use shared::redact::{Known, KnownSet};
use zeroize::Zeroize;

use super::AppState;
use crate::secrets::SecretStore;

/// The rows a [`KnownSet`] was read from: `(name, created, updated)`.
type Rows = Vec<(String, String, String)>;

/// What was last read of one store.
struct Cached {
    store: Weak<SecretStore>,
    rows: Rows,
    set: Arc<KnownSet>,
}

/// One entry per open store.
static CACHE: Mutex<Vec<Cached>> = Mutex::new(Vec::new());

fn cache() -> MutexGuard<'static, Vec<Cached>> {
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

/// `result` with the person's stored secrets masked by value (see the
/// module docs); unchanged when the bridge has no secret store or it
/// holds none.
pub(super) async fn mask_result(state: &AppState, result: CallToolResult) -> CallToolResult {
    let known = known_set(state).await;
    if known.is_empty() {
        return result;
    }
    super::results::mask_known_values(result, &known)
}

/// The stored secrets, prepared for masking: from the cache while the
/// store's rows are the ones it was read from.
pub(super) async fn known_set(state: &AppState) -> Arc<KnownSet> {
    let Some(store) = state.config().secrets.clone() else { return Arc::default() };
    match tokio::task::spawn_blocking(move || current(&store)).await {
        Ok(set) => set,
        Err(e) => {
            tracing::warn!(error = %e, "reading the stored secrets to mask them failed");
            Arc::default()
        }
    }
}

fn current(store: &Arc<SecretStore>) -> Arc<KnownSet> {
    let cached = || {
        cache()
            .iter()
            .find(|c| std::ptr::eq(c.store.as_ptr(), Arc::as_ptr(store)))
            .map(|c| (c.rows.clone(), c.set.clone()))
    };
    let rows: Rows = match store.list() {
        Ok(list) => list.into_iter().map(|i| (i.name, i.created, i.updated)).collect(),
        Err(e) => {
            // What was read before is still better than nothing.
            tracing::warn!(error = %e, "listing the stored secrets to mask them failed");
            return cached().map(|(_, set)| set).unwrap_or_default();
        }
    };
    if let Some((was, set)) = cached()
        && was == rows
    {
        return set;
    }
    let mut known: Vec<Known> = rows
        .iter()
        .filter_map(|(name, _, _)| match store.get(name) {
            Ok(Some(value)) => Some(Known { name: name.clone(), value: value.expose().to_string() }),
            Ok(None) => None, // removed since the list was read
            Err(e) => {
                tracing::warn!(secret = %name, error = %e, "a stored secret could not be read to mask it");
                None
            }
        })
        .collect();
    let set = Arc::new(KnownSet::new(&known));
    known.iter_mut().for_each(|k| k.value.zeroize());
    let mut cache = cache();
    cache.retain(|c| c.store.strong_count() > 0 && !std::ptr::eq(c.store.as_ptr(), Arc::as_ptr(store)));
    cache.push(Cached { store: Arc::downgrade(store), rows, set: set.clone() });
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::home::Home;
    use crate::secrets::SecretValue;

    /// The cache follows the store's rows: a secret set, replaced or
    /// removed through another handle on the same files (as `chaperone
    /// secret set` does from its own process) is seen on the next read;
    /// an unchanged list is not decrypted again.
    #[test]
    fn the_cache_is_read_again_when_the_rows_change() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path());
        let daemon = Arc::new(SecretStore::open(&home).unwrap());
        let cli = SecretStore::open(&home).unwrap();
        assert!(current(&daemon).is_empty(), "no database yet");
        cli.set("CANARY", SecretValue::new("Sesame-Canary-4417-xyz".into()), &[]).unwrap();
        let first = current(&daemon);
        assert_eq!(first.mask("x Sesame-Canary-4417-xyz"), "x {secret:CANARY}");
        assert!(Arc::ptr_eq(&first, &current(&daemon)), "unchanged rows: the cached set");
        cli.set("CANARY", SecretValue::new("Other-Value-9931".into()), &[]).unwrap();
        let replaced = current(&daemon);
        assert_eq!(replaced.mask("Sesame-Canary-4417-xyz Other-Value-9931"), "Sesame-Canary-4417-xyz {secret:CANARY}");
        cli.remove("CANARY").unwrap();
        assert!(current(&daemon).is_empty());
        // Another store (another bridge in this process) has its own entry.
        let other_dir = tempfile::tempdir().unwrap();
        let other = Arc::new(SecretStore::open(&Home::at(other_dir.path())).unwrap());
        other.set("PIN", SecretValue::new("8812-4471".into()), &[]).unwrap();
        assert_eq!(current(&other).mask("8812-4471"), "{secret:PIN}");
        assert!(current(&daemon).is_empty());
    }
}
