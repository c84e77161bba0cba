//! The secret store (docs/design.md, "Secrets, sensitive fields and files"): named values the agent may type by name,
//! never see.
//!
//! - Rows live in the table `secrets` of `home/chaperone.db` (the audit
//!   log's file; this module opens its own connection, WAL,
//!   `synchronous=FULL`, `secure_delete=ON`, file 0600).
//! - Each value is sealed with AES-256-GCM (`ring::aead`) under a fresh
//!   random 96-bit nonce; the additional data is the secret's name, so a
//!   ciphertext copied or renamed to another name does not open.
//! - The key is 32 random bytes in `home/secret.key` (0600), made by the
//!   first [`SecretStore::set`] and by nothing else. A key of the wrong
//!   size, a key readable by others, a missing key while rows exist, or a
//!   ciphertext that does not authenticate is an error: never a fallback,
//!   never a fresh key in its place.
//! - Values in memory are [`SecretValue`]s: zeroised on drop, printed as
//!   `SecretValue(••••)`.
//!
//! # Site bindings
//!
//! A secret may be bound to origin patterns (`chaperone secret set NAME
//! --site https://app.example`, the `[[sites]]` syntax of `config.toml`,
//! matched by the same `shared::policy::origin_matches`). The patterns
//! live in the row's `sites` column (a JSON array, sorted, no duplicates)
//! and are part of the ciphertext's additional data, so a row whose
//! binding was edited does not open. The daemon types a bound secret only
//! on a page whose origin matches one of them; an unbound secret (no
//! patterns) is typed only after the person answered in the approval
//! window. [`SecretStore::sites`] reads a binding without the key and
//! without decrypting anything; [`SecretStore::set`] replaces value and
//! sites together.
//!
//! # Schema migration
//!
//! Databases made before bindings existed have no `sites` column: opening
//! one adds it (`ALTER TABLE … ADD COLUMN sites … DEFAULT '[]'`), so every
//! secret stored before is unbound (its additional data, the bare name, is
//! unchanged) until it is set again with `--site`.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::Serialize;
use zeroize::{Zeroize, Zeroizing};

use crate::error::Error;
use crate::home::Home;

/// What a valid name is, in words; part of every bad-name error.
pub const NAME_RULE: &str = shared::names::SECRET_NAME_RULE;
/// Longest value, in characters: what one `browser_type` may type.
pub const MAX_VALUE_CHARS: usize = shared::tools::MAX_TYPED_CHARS;
/// Size of `secret.key`, in bytes.
pub const KEY_LEN: usize = 32;
/// Most `--site` patterns one secret may be bound to.
pub const MAX_SITES: usize = 32;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS secrets (
    name        TEXT PRIMARY KEY NOT NULL,
    nonce       BLOB NOT NULL,
    ciphertext  BLOB NOT NULL,
    created     TEXT NOT NULL,
    updated     TEXT NOT NULL,
    sites       TEXT NOT NULL DEFAULT '[]'
);
";

/// The column databases made before site bindings lack (see the module
/// docs): old rows become unbound.
const MIGRATE_SITES: &str = "ALTER TABLE secrets ADD COLUMN sites TEXT NOT NULL DEFAULT '[]'";

/// Whether `name` matches `[A-Za-z0-9_.-]{1,64}`: the one rule, shared with
/// the `{"secret": NAME}` value source of the tools.
pub fn valid_name(name: &str) -> bool {
    shared::names::is_valid_secret_name(name)
}

fn check_name(name: &str) -> Result<(), Error> {
    if valid_name(name) { Ok(()) } else { Err(Error::SecretName(name.to_string())) }
}

/// Checks and normalises `--site` patterns: each one valid
/// (`shared::policy::check_origin_pattern`, the `[[sites]]` syntax), at
/// most [`MAX_SITES`]; sorted, duplicates dropped.
pub fn normalize_sites(sites: &[String]) -> Result<Vec<String>, Error> {
    let mut out = Vec::with_capacity(sites.len());
    for s in sites {
        shared::policy::check_origin_pattern(s)
            .map_err(|why| Error::SecretSite(format!("--site {s:?} is not an origin pattern: {why}")))?;
        // `https://a.example/` and `https://a.example` are one pattern.
        out.push(s.strip_suffix('/').unwrap_or(s).to_string());
    }
    out.sort();
    out.dedup();
    if out.len() > MAX_SITES {
        return Err(Error::SecretSite(format!("a secret is bound to at most {MAX_SITES} sites")));
    }
    Ok(out)
}

/// Whether a secret bound to `sites` may be typed on `url`: unbound (no
/// sites) never decides here (the person answers instead), bound ones
/// need one pattern whose origin `url` has.
pub fn site_allows(sites: &[String], url: &str) -> bool {
    shared::gate::dispatch::binding_allows(sites, url)
}

/// The additional data a value is sealed with: its name, and its binding
/// when it has one (so neither can be changed without the key).
fn aad(name: &str, sites_json: &str) -> Vec<u8> {
    let mut a = name.as_bytes().to_vec();
    if sites_json != "[]" {
        a.push(0);
        a.extend_from_slice(sites_json.as_bytes());
    }
    a
}

/// Checks a value can be stored: not empty, at most [`MAX_VALUE_CHARS`]
/// characters. The error never contains the value.
pub fn check_value(value: &str) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::SecretValue("the secret value is empty: nothing was stored".into()));
    }
    let chars = value.chars().count();
    if chars > MAX_VALUE_CHARS {
        return Err(Error::SecretValue(format!(
            "the secret value is {chars} characters long; the limit is {MAX_VALUE_CHARS}: nothing was stored"
        )));
    }
    Ok(())
}

/// Holds a secret in memory; zeroised on drop; `Debug`/`Display` print
/// `SecretValue(••••)`, never the value. Deliberately neither `Clone` nor
/// `Serialize`.
pub struct SecretValue(Zeroizing<String>);

impl SecretValue {
    pub fn new(s: String) -> Self {
        SecretValue(Zeroizing::new(s))
    }

    /// The value itself: for typing it into a page, nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretValue(••••)")
    }
}

impl std::fmt::Display for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretValue(••••)")
    }
}

/// One stored secret as `list` shows it: no value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretInfo {
    pub name: String,
    /// The origin patterns it may be typed on; empty: bound to no site
    /// (the person answers every time).
    pub sites: Vec<String>,
    /// RFC 3339, UTC, milliseconds (`2026-01-02T03:04:05.678Z`).
    pub created: String,
    /// RFC 3339, UTC, milliseconds; equals `created` until replaced.
    pub updated: String,
}

/// The store. `Send + Sync`; share it behind an `Arc`. Calls are blocking
/// (SQLite, file reads): from async code, run them on the blocking pool.
///
/// Nothing is created by [`open`](Self::open), [`get`](Self::get),
/// [`list`](Self::list) or [`remove`](Self::remove): the database is opened
/// when it exists, and the key is read when a value is first sealed or
/// opened. Only [`set`](Self::set) creates the home, the database and the
/// key.
pub struct SecretStore {
    home: Home,
    db_path: PathBuf,
    key_path: PathBuf,
    conn: Mutex<Option<Connection>>,
    key: Mutex<Option<Arc<LessSafeKey>>>,
    rng: SystemRandom,
}

impl std::fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretStore").field("db", &self.db_path).field("key", &self.key_path).finish_non_exhaustive()
    }
}

impl SecretStore {
    /// A store for `home`. Creates nothing and does not read the key; a
    /// database that exists is opened (and given the `secrets` table) now,
    /// so a broken one fails here.
    pub fn open(home: &Home) -> Result<Self, Error> {
        let store = SecretStore {
            home: home.clone(),
            db_path: home.db(),
            key_path: home.secret_key(),
            conn: Mutex::new(None),
            key: Mutex::new(None),
            rng: SystemRandom::new(),
        };
        drop(store.conn(false)?);
        Ok(store)
    }

    /// Stores `value` under `name`, bound to `sites` (origin patterns; none:
    /// unbound), replacing any value and binding of that name (its
    /// `created` time is kept, `updated` moves). Creates the home (0700),
    /// the database (0600) and, on first use, the key (0600).
    pub fn set(&self, name: &str, value: SecretValue, sites: &[String]) -> Result<(), Error> {
        check_name(name)?;
        check_value(value.expose())?;
        let sites = normalize_sites(sites)?;
        let sites_json = serde_json::to_string(&sites)?;
        self.home.ensure()?;
        let guard = self.conn(true)?;
        let conn = guard.as_ref().ok_or_else(|| self.db_error("the database could not be created"))?;
        let key = self.key_for_sealing(conn)?;

        let mut nonce = [0u8; NONCE_LEN];
        self.rng.fill(&mut nonce).map_err(|_| Error::Random)?;
        let tag_len = AES_256_GCM.tag_len();
        // Room for the tag up front, so the plaintext is never reallocated
        // (and so never left behind in freed memory).
        let mut sealed = Zeroizing::new(Vec::with_capacity(value.expose().len() + tag_len));
        sealed.extend_from_slice(value.expose().as_bytes());
        drop(value);
        key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(aad(name, &sites_json)),
            &mut *sealed,
        )
        .map_err(|_| Error::Server(format!("sealing secret {name:?} failed")))?;

        // Milliseconds: a replacement within the same second still moves `updated`.
        let now = crate::time::now_rfc3339_millis();
        conn.execute(
            "INSERT INTO secrets (name, nonce, ciphertext, created, updated, sites) VALUES (?1, ?2, ?3, ?4, ?4, ?5)
             ON CONFLICT(name) DO UPDATE SET
                 nonce = excluded.nonce, ciphertext = excluded.ciphertext, updated = excluded.updated,
                 sites = excluded.sites",
            params![name, &nonce[..], &sealed[..], now, sites_json],
        )
        .map_err(|e| self.db_error(format!("write: {e}")))?;
        Ok(())
    }

    /// The value stored under `name`, if any. Reads the key only when a row
    /// exists; a missing or damaged key, or a ciphertext that does not
    /// authenticate under this name, is an error.
    pub fn get(&self, name: &str) -> Result<Option<SecretValue>, Error> {
        Ok(self.get_with_sites(name)?.map(|(value, _)| value))
    }

    /// [`get`](Self::get), with the sites the value is bound to (read from
    /// the same row, and authenticated with it).
    pub fn get_with_sites(&self, name: &str) -> Result<Option<(SecretValue, Vec<String>)>, Error> {
        check_name(name)?;
        let guard = self.conn(false)?;
        let Some(conn) = guard.as_ref() else { return Ok(None) };
        let row: Option<(Vec<u8>, Vec<u8>, String)> = conn
            .query_row("SELECT nonce, ciphertext, sites FROM secrets WHERE name = ?1", params![name], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()
            .map_err(|e| self.db_error(format!("read: {e}")))?;
        drop(guard);
        let Some((nonce, ciphertext, sites_json)) = row else { return Ok(None) };
        let key = self.key_for_opening()?;
        let value = open_value(&key, name, &aad(name, &sites_json), &nonce, ciphertext)?;
        Ok(Some((value, self.parse_sites(name, &sites_json)?)))
    }

    /// The origin patterns `name` is bound to (empty: unbound), or `None`
    /// when there is no such secret. Reads no key and decrypts nothing: the
    /// daemon's check before an action is dispatched.
    pub fn sites(&self, name: &str) -> Result<Option<Vec<String>>, Error> {
        check_name(name)?;
        let guard = self.conn(false)?;
        let Some(conn) = guard.as_ref() else { return Ok(None) };
        let sites: Option<String> = conn
            .query_row("SELECT sites FROM secrets WHERE name = ?1", params![name], |r| r.get(0))
            .optional()
            .map_err(|e| self.db_error(format!("read: {e}")))?;
        sites.map(|s| self.parse_sites(name, &s)).transpose()
    }

    fn parse_sites(&self, name: &str, json: &str) -> Result<Vec<String>, Error> {
        serde_json::from_str(json).map_err(|_| self.db_error(format!("the site binding of {name:?} is damaged")))
    }

    /// Every stored secret's name, sites and times, sorted by name. No
    /// values.
    pub fn list(&self) -> Result<Vec<SecretInfo>, Error> {
        let guard = self.conn(false)?;
        let Some(conn) = guard.as_ref() else { return Ok(Vec::new()) };
        let read = |e: rusqlite::Error| self.db_error(format!("read: {e}"));
        let mut stmt = conn.prepare("SELECT name, created, updated, sites FROM secrets ORDER BY name").map_err(read)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?))
            })
            .map_err(read)?;
        let mut out = Vec::new();
        for row in rows {
            let (name, created, updated, sites) = row.map_err(read)?;
            let sites = self.parse_sites(&name, &sites)?;
            out.push(SecretInfo { name, sites, created, updated });
        }
        Ok(out)
    }

    /// Removes `name`; `false` when there was no such secret. Needs no key.
    pub fn remove(&self, name: &str) -> Result<bool, Error> {
        check_name(name)?;
        let guard = self.conn(false)?;
        let Some(conn) = guard.as_ref() else { return Ok(false) };
        let n = conn
            .execute("DELETE FROM secrets WHERE name = ?1", params![name])
            .map_err(|e| self.db_error(format!("write: {e}")))?;
        Ok(n > 0)
    }

    fn db_error(&self, message: impl Into<String>) -> Error {
        Error::SecretStore { path: self.db_path.clone(), message: message.into() }
    }

    /// The connection, opened on first use: only if the file exists unless
    /// `create` (then made 0600 first).
    fn conn(&self, create: bool) -> Result<MutexGuard<'_, Option<Connection>>, Error> {
        let mut guard = self.conn.lock().map_err(|_| self.db_error("lock poisoned"))?;
        if guard.is_some() {
            return Ok(guard);
        }
        if create {
            match OpenOptions::new().write(true).create_new(true).mode(0o600).open(&self.db_path) {
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(&self.db_path, e)),
            }
        } else if !self.db_path.exists() {
            return Ok(guard);
        }
        let db = |e: rusqlite::Error| self.db_error(e.to_string());
        // Never let SQLite create the file itself (it would not be 0600).
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.db_path, flags).map_err(db)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(db)?;
        // Replaced and removed ciphertexts are overwritten, not left in free pages.
        conn.pragma_update(None, "secure_delete", "ON").map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        migrate(&conn).map_err(db)?;
        *guard = Some(conn);
        Ok(guard)
    }

    fn cached_key(&self) -> Result<MutexGuard<'_, Option<Arc<LessSafeKey>>>, Error> {
        self.key.lock().map_err(|_| Error::SecretKey("secret key lock poisoned".into()))
    }

    /// The key for opening a stored value: it must exist.
    fn key_for_opening(&self) -> Result<Arc<LessSafeKey>, Error> {
        let mut cached = self.cached_key()?;
        if let Some(k) = cached.as_ref() {
            return Ok(k.clone());
        }
        let bytes = read_key(&self.key_path)?.ok_or_else(|| {
            Error::SecretKey(format!(
                "{} is missing, so the secrets stored in {} cannot be decrypted; restore the key file from a \
                 backup, or remove those secrets (`chaperone secret rm NAME`) and set them again",
                self.key_path.display(),
                self.db_path.display()
            ))
        })?;
        let key = Arc::new(less_safe_key(&bytes)?);
        *cached = Some(key.clone());
        Ok(key)
    }

    /// The key for sealing a new value: read, or made if there is none and
    /// no stored secret would be orphaned by a new one. Called with the
    /// connection lock held (lock order: connection, then key).
    fn key_for_sealing(&self, conn: &Connection) -> Result<Arc<LessSafeKey>, Error> {
        let mut cached = self.cached_key()?;
        if let Some(k) = cached.as_ref() {
            return Ok(k.clone());
        }
        let bytes = match read_key(&self.key_path)? {
            Some(bytes) => bytes,
            None => {
                let rows: i64 = conn
                    .query_row("SELECT count(*) FROM secrets", [], |r| r.get(0))
                    .map_err(|e| self.db_error(format!("read: {e}")))?;
                if rows > 0 {
                    return Err(Error::SecretKey(format!(
                        "{} is missing but {} holds {rows} secret(s) sealed with it; refusing to make a new key \
                         that would orphan them: restore the key file from a backup, or remove those secrets \
                         (`chaperone secret rm NAME`) first",
                        self.key_path.display(),
                        self.db_path.display()
                    )));
                }
                create_key(&self.rng, &self.key_path)?
            }
        };
        let key = Arc::new(less_safe_key(&bytes)?);
        *cached = Some(key.clone());
        Ok(key)
    }
}

/// Adds the `sites` column to a table made before it existed.
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let has_sites: bool =
        conn.query_row("SELECT count(*) FROM pragma_table_info('secrets') WHERE name = 'sites'", [], |r| {
            r.get::<_, i64>(0).map(|n| n > 0)
        })?;
    if !has_sites {
        conn.execute_batch(MIGRATE_SITES)?;
    }
    Ok(())
}

fn less_safe_key(bytes: &[u8]) -> Result<LessSafeKey, Error> {
    UnboundKey::new(&AES_256_GCM, bytes)
        .map(LessSafeKey::new)
        .map_err(|_| Error::SecretKey(format!("a secret key is exactly {KEY_LEN} bytes")))
}

/// Opens one stored value; any failure is [`Error::SecretUndecryptable`].
fn open_value(
    key: &LessSafeKey,
    name: &str,
    aad: &[u8],
    nonce: &[u8],
    ciphertext: Vec<u8>,
) -> Result<SecretValue, Error> {
    let fail = || Error::SecretUndecryptable(name.to_string());
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| fail())?;
    let mut buf = Zeroizing::new(ciphertext);
    let len = key.open_in_place(nonce, Aad::from(aad), &mut buf[..]).map_err(|_| fail())?.len();
    buf.truncate(len);
    match String::from_utf8(std::mem::take(&mut *buf)) {
        Ok(s) => Ok(SecretValue::new(s)),
        Err(e) => {
            e.into_bytes().zeroize();
            Err(fail())
        }
    }
}

/// Reads `secret.key`: `None` if absent; an error if it is not a regular
/// file of exactly [`KEY_LEN`] bytes readable by its owner only.
fn read_key(path: &Path) -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let meta = f.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::SecretKey(format!("{} is not a regular file", path.display())));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Error::SecretKey(format!(
            "{} has mode {mode:04o}, readable by others; refusing to use it: run `chmod 600 {}` if it is yours",
            path.display(),
            path.display()
        )));
    }
    if meta.len() != KEY_LEN as u64 {
        return Err(wrong_size(path, meta.len()));
    }
    let mut bytes = Zeroizing::new(Vec::with_capacity(KEY_LEN + 1));
    Read::by_ref(&mut f).take(KEY_LEN as u64 + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() != KEY_LEN {
        return Err(wrong_size(path, bytes.len() as u64));
    }
    Ok(Some(bytes))
}

fn wrong_size(path: &Path, len: u64) -> Error {
    Error::SecretKey(format!(
        "{} is {len} bytes, but a secret key is exactly {KEY_LEN}: the file is damaged or not Chaperone's; \
         restore it from a backup (without the right key the stored secrets cannot be decrypted)",
        path.display()
    ))
}

/// Makes a new key file (0600) atomically: written and synced under a
/// temporary name, then linked into place only if no key exists yet. If
/// another process made one first, that one is used.
fn create_key(rng: &SystemRandom, path: &Path) -> Result<Zeroizing<Vec<u8>>, Error> {
    let mut bytes = Zeroizing::new(vec![0u8; KEY_LEN]);
    rng.fill(&mut bytes[..]).map_err(|_| Error::Random)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".secret.key.{}.tmp", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let write = || -> std::io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
        f.write_all(&bytes)?;
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            // Make the new name durable too (best effort).
            let _ = File::open(dir).and_then(|d| d.sync_all());
            Ok(bytes)
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            read_key(path)?.ok_or_else(|| Error::SecretKey(format!("{} vanished while being read", path.display())))
        }
        Err(e) => Err(Error::io(path, e)),
    }
}

// ---- Reading a value for `chaperone secret set` ----

/// Bytes that can hold [`MAX_VALUE_CHARS`] characters plus a "\r\n".
const MAX_INPUT_BYTES: usize = MAX_VALUE_CHARS * 4 + 2;

/// Reads a value from a pipe or file: all of `input`, less exactly one
/// trailing "\n" or "\r\n". Refuses empty, over-long and non-UTF-8 input.
pub fn read_value(input: &mut impl Read) -> Result<SecretValue, Error> {
    // Capacity reserved up front: the buffer never grows, so no copy of the
    // value is left behind in freed memory.
    let mut buf = Zeroizing::new(Vec::with_capacity(MAX_INPUT_BYTES + 1));
    input
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::SecretValue(format!("cannot read the secret value from stdin: {e}")))?;
    if buf.len() > MAX_INPUT_BYTES {
        return Err(Error::SecretValue(format!(
            "the secret value is longer than {MAX_VALUE_CHARS} characters: nothing was stored"
        )));
    }
    finish_value(buf)
}

/// Strips one trailing newline, checks UTF-8, emptiness and length.
fn finish_value(mut buf: Zeroizing<Vec<u8>>) -> Result<SecretValue, Error> {
    let strip = if buf.ends_with(b"\r\n") { 2 } else { usize::from(buf.ends_with(b"\n")) };
    let keep = buf.len() - strip;
    buf.truncate(keep);
    let value = match String::from_utf8(std::mem::take(&mut *buf)) {
        Ok(s) => SecretValue::new(s),
        Err(e) => {
            e.into_bytes().zeroize();
            return Err(Error::SecretValue("the secret value is not valid UTF-8: nothing was stored".into()));
        }
    };
    check_value(value.expose())?;
    Ok(value)
}

/// Puts the terminal settings back when dropped.
struct RestoreTerminal(nix::sys::termios::Termios);

impl Drop for RestoreTerminal {
    fn drop(&mut self) {
        let _ = nix::sys::termios::tcsetattr(std::io::stdin(), nix::sys::termios::SetArg::TCSANOW, &self.0);
    }
}

/// Asks for a value on the terminal of stdin with echo off (the prompt goes
/// to stderr). `Ok(None)` if interrupted (Ctrl-C, SIGTERM, SIGHUP), with
/// the terminal restored. The terminal's line discipline caps one line at
/// about 4096 bytes; longer values go through a pipe.
pub async fn prompt_value(name: &str) -> Result<Option<SecretValue>, Error> {
    use std::os::fd::AsFd;

    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    use tokio::signal::unix::{SignalKind, signal};

    let term_err = |e: nix::Error| Error::SecretValue(format!("cannot turn off echo on the terminal: {e}"));
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).map_err(term_err)?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    quiet.local_flags.insert(LocalFlags::ECHONL | LocalFlags::ICANON);
    // Handlers first: a signal while echo is off must not end the process
    // with the terminal left silent.
    let signals = [SignalKind::interrupt(), SignalKind::terminate(), SignalKind::hangup()].map(|k| signal(k).ok());
    let mut f = File::from(stdin.as_fd().try_clone_to_owned().map_err(|e| Error::io("<stdin>", e))?);

    // Echo off before the prompt shows, so nothing typed is ever echoed.
    tcsetattr(&stdin, SetArg::TCSAFLUSH, &quiet).map_err(term_err)?;
    let restore = RestoreTerminal(saved);
    eprint!("value for secret {name} (typing is hidden): ");
    let _ = std::io::stderr().flush();

    let (tx, rx) = tokio::sync::oneshot::channel();
    // A plain thread, not the blocking pool: an interrupted read is left
    // behind, and the runtime must not wait for it at exit.
    std::thread::spawn(move || {
        // The tty delivers one line per read in canonical mode.
        let mut buf = Zeroizing::new(vec![0u8; MAX_INPUT_BYTES + 1]);
        let mut len = 0;
        let result = loop {
            match f.read(&mut buf[len..]) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    len += n;
                    if buf[..len].contains(&b'\n') || len == buf.len() {
                        break Ok(());
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        buf.truncate(len);
        let _ = tx.send(result.map(|()| buf));
    });

    let [mut int, mut term, mut hup] = signals;
    let outcome = tokio::select! {
        r = rx => Some(r),
        () = recv(&mut int) => None,
        () = recv(&mut term) => None,
        () = recv(&mut hup) => None,
    };
    drop(restore);
    let Some(read) = outcome else {
        eprintln!();
        return Ok(None);
    };
    let buf = read
        .map_err(|_| Error::SecretValue("the terminal reader stopped".into()))?
        .map_err(|e| Error::SecretValue(format!("cannot read the secret value from the terminal: {e}")))?;
    if buf.len() > MAX_INPUT_BYTES {
        return Err(Error::SecretValue(format!(
            "the secret value is longer than {MAX_VALUE_CHARS} characters: nothing was stored"
        )));
    }
    // Only the line typed: anything after the first newline is ignored.
    let mut buf = buf;
    if let Some(i) = buf.iter().position(|&b| b == b'\n') {
        buf.truncate(i + 1);
    }
    finish_value(buf).map(Some)
}

async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::at(dir.path().join("home"));
        (dir, home)
    }

    fn v(s: &str) -> SecretValue {
        SecretValue::new(s.to_string())
    }

    fn raw_conn(home: &Home) -> Connection {
        Connection::open(home.db()).unwrap()
    }

    #[test]
    fn store_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<SecretStore>();
        check::<SecretValue>();
    }

    #[test]
    fn names_follow_the_rule() {
        for ok in ["a", "A", "0", "api_token", "github.com-pat", "x.y_z-1", &"n".repeat(64), "..", "-x"] {
            assert!(valid_name(ok), "{ok:?}");
        }
        for bad in ["", "a b", "../x", "a/b", "ä", "tab\t", "new\nline", "nul\0", "semi;colon", &"n".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
        let e = check_name("a b").unwrap_err().to_string();
        assert!(e.contains("1 to 64") && e.contains("A-Z"), "{e}");
    }

    #[test]
    fn secret_value_never_prints_its_value() {
        let s = v("hunter2-the-value");
        assert_eq!(format!("{s:?}"), "SecretValue(••••)");
        assert_eq!(format!("{s}"), "SecretValue(••••)");
        assert_eq!(format!("{s:#?}"), "SecretValue(••••)");
        assert_eq!(s.expose(), "hunter2-the-value");
    }

    #[test]
    fn round_trip_replace_list_remove() {
        let (_d, home) = temp_home();
        let store = SecretStore::open(&home).unwrap();
        assert!(!home.root().exists(), "open creates nothing");
        assert!(store.get("a").unwrap().is_none());
        assert!(store.list().unwrap().is_empty());
        assert!(!store.remove("a").unwrap());
        assert!(!home.root().exists(), "get/list/remove create nothing");

        store.set("b", v("value of b"), &[]).unwrap();
        store.set("a", v("välue ✓ of a"), &[]).unwrap();
        assert_eq!(store.get("a").unwrap().unwrap().expose(), "välue ✓ of a");
        assert_eq!(store.get("b").unwrap().unwrap().expose(), "value of b");
        assert!(store.get("c").unwrap().is_none());

        let before = store.list().unwrap();
        assert_eq!(before.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(before[0].created, before[0].updated);
        std::thread::sleep(std::time::Duration::from_millis(20));
        store.set("a", v("new a"), &[]).unwrap();
        let after = store.list().unwrap();
        assert_eq!(after[0].created, before[0].created, "created is kept");
        assert!(after[0].updated > before[0].updated, "updated moves: {after:?}");
        assert_eq!(store.get("a").unwrap().unwrap().expose(), "new a");

        // A second store (another process, say) reads the same values.
        let other = SecretStore::open(&home).unwrap();
        assert_eq!(other.get("b").unwrap().unwrap().expose(), "value of b");

        assert!(store.remove("a").unwrap());
        assert!(!store.remove("a").unwrap());
        assert!(store.get("a").unwrap().is_none());
        assert_eq!(store.list().unwrap().len(), 1);
    }

    #[test]
    fn each_value_gets_a_fresh_nonce() {
        let (_d, home) = temp_home();
        let store = SecretStore::open(&home).unwrap();
        store.set("a", v("same"), &[]).unwrap();
        let first: (Vec<u8>, Vec<u8>) = raw_conn(&home)
            .query_row("SELECT nonce, ciphertext FROM secrets", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        store.set("a", v("same"), &[]).unwrap();
        let second: (Vec<u8>, Vec<u8>) = raw_conn(&home)
            .query_row("SELECT nonce, ciphertext FROM secrets", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(first.0.len(), NONCE_LEN);
        assert_ne!(first.0, second.0);
        assert_ne!(first.1, second.1);
        assert_eq!(first.1.len(), "same".len() + AES_256_GCM.tag_len());
    }

    #[test]
    fn tampered_or_renamed_ciphertexts_do_not_open() {
        let (_d, home) = temp_home();
        SecretStore::open(&home).unwrap().set("a", v("the value of a"), &[]).unwrap();
        let db = raw_conn(&home);
        db.execute("UPDATE secrets SET name = 'b' WHERE name = 'a'", []).unwrap();
        let e = SecretStore::open(&home).unwrap().get("b").unwrap_err();
        assert!(matches!(&e, Error::SecretUndecryptable(n) if n == "b"), "{e:?}");
        assert!(e.to_string().contains("cannot be decrypted"), "{e}");

        db.execute("UPDATE secrets SET name = 'a' WHERE name = 'b'", []).unwrap();
        assert_eq!(SecretStore::open(&home).unwrap().get("a").unwrap().unwrap().expose(), "the value of a");
        let ct: Vec<u8> = db.query_row("SELECT ciphertext FROM secrets", [], |r| r.get(0)).unwrap();
        for i in [0, ct.len() / 2, ct.len() - 1] {
            let mut bad = ct.clone();
            bad[i] ^= 1;
            db.execute("UPDATE secrets SET ciphertext = ?1", params![bad]).unwrap();
            let e = SecretStore::open(&home).unwrap().get("a").unwrap_err();
            assert!(matches!(e, Error::SecretUndecryptable(_)), "byte {i}: {e:?}");
        }
        db.execute("UPDATE secrets SET ciphertext = ?1, nonce = x'00'", params![ct]).unwrap();
        assert!(matches!(SecretStore::open(&home).unwrap().get("a"), Err(Error::SecretUndecryptable(_))));
    }

    #[test]
    fn a_wrong_size_or_open_or_missing_key_is_an_error_never_a_fallback() {
        let (_d, home) = temp_home();
        SecretStore::open(&home).unwrap().set("a", v("x"), &[]).unwrap();
        let key = fs::read(home.secret_key()).unwrap();
        assert_eq!(key.len(), KEY_LEN);

        for bad in [&key[..31], &[key.as_slice(), b"\n"].concat()[..], b""] {
            crate::home::write_private(&home.secret_key(), bad).unwrap();
            for e in [
                SecretStore::open(&home).unwrap().get("a").unwrap_err(),
                SecretStore::open(&home).unwrap().set("b", v("y"), &[]).unwrap_err(),
            ] {
                assert!(matches!(e, Error::SecretKey(_)), "{e:?}");
                assert!(e.to_string().contains("exactly 32"), "{e}");
            }
            assert_eq!(fs::read(home.secret_key()).unwrap(), bad, "the bad key is left alone");
        }

        crate::home::write_private(&home.secret_key(), &key).unwrap();
        fs::set_permissions(home.secret_key(), fs::Permissions::from_mode(0o644)).unwrap();
        let e = SecretStore::open(&home).unwrap().get("a").unwrap_err();
        assert!(matches!(e, Error::SecretKey(_)) && e.to_string().contains("0644"), "{e}");
        fs::set_permissions(home.secret_key(), fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(SecretStore::open(&home).unwrap().get("a").unwrap().unwrap().expose(), "x");

        // Another valid-looking key: the value does not open.
        crate::home::write_private(&home.secret_key(), &[7u8; KEY_LEN]).unwrap();
        assert!(matches!(SecretStore::open(&home).unwrap().get("a"), Err(Error::SecretUndecryptable(_))));

        // No key at all while a row exists: get fails, set refuses to make
        // a new key that would orphan the row.
        fs::remove_file(home.secret_key()).unwrap();
        let e = SecretStore::open(&home).unwrap().get("a").unwrap_err();
        assert!(matches!(e, Error::SecretKey(_)) && e.to_string().contains("missing"), "{e}");
        let e = SecretStore::open(&home).unwrap().set("b", v("y"), &[]).unwrap_err();
        assert!(matches!(e, Error::SecretKey(_)) && e.to_string().contains("orphan"), "{e}");
        assert!(!home.secret_key().exists());
        // Once the orphaned row is gone, a new key may be made.
        assert!(SecretStore::open(&home).unwrap().remove("a").unwrap());
        SecretStore::open(&home).unwrap().set("b", v("y"), &[]).unwrap();
        assert_eq!(SecretStore::open(&home).unwrap().get("b").unwrap().unwrap().expose(), "y");
    }

    #[test]
    fn key_and_database_are_private_and_wal() {
        let (_d, home) = temp_home();
        let store = SecretStore::open(&home).unwrap();
        store.set("a", v("x"), &[]).unwrap();
        assert_eq!(fs::metadata(home.root()).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(fs::metadata(home.secret_key()).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(home.db()).unwrap().permissions().mode() & 0o777, 0o600);
        let guard = store.conn(false).unwrap();
        let conn = guard.as_ref().unwrap();
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        assert_eq!(sync, 2);
        // No temporary key file is left behind.
        let names: Vec<_> = fs::read_dir(home.root()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(names.iter().all(|n| !n.to_string_lossy().contains(".tmp")), "{names:?}");
    }

    #[test]
    fn shares_the_file_with_the_audit_log() {
        let (_d, home) = temp_home();
        home.ensure().unwrap();
        let audit = crate::audit::AuditStore::open(&home.db()).unwrap();
        audit.record(&shared::audit::AuditRow { tool: "t".into(), summary: "s".into(), ..Default::default() }).unwrap();
        let store = SecretStore::open(&home).unwrap();
        assert!(store.list().unwrap().is_empty());
        store.set("a", v("x"), &[]).unwrap();
        assert_eq!(audit.list(None).unwrap().len(), 1);
        assert_eq!(store.get("a").unwrap().unwrap().expose(), "x");
    }

    #[test]
    fn library_refuses_bad_names_and_values() {
        let (_d, home) = temp_home();
        let store = SecretStore::open(&home).unwrap();
        assert!(matches!(store.set("a b", v("x"), &[]), Err(Error::SecretName(_))));
        assert!(matches!(store.get("../x"), Err(Error::SecretName(_))));
        assert!(matches!(store.remove(""), Err(Error::SecretName(_))));
        assert!(matches!(store.set("a", v(""), &[]), Err(Error::SecretValue(_))));
        let long = "é".repeat(MAX_VALUE_CHARS + 1);
        let e = store.set("a", SecretValue::new(long), &[]).unwrap_err();
        assert!(matches!(e, Error::SecretValue(_)) && e.to_string().contains("10000"), "{e}");
        assert!(!home.root().exists(), "nothing was written");
        store.set("a", SecretValue::new("é".repeat(MAX_VALUE_CHARS)), &[]).unwrap();
        assert_eq!(store.get("a").unwrap().unwrap().expose().chars().count(), MAX_VALUE_CHARS);
    }

    #[test]
    fn bindings_are_stored_listed_replaced_and_sealed_with_the_value() {
        let (_d, home) = temp_home();
        let store = SecretStore::open(&home).unwrap();
        let sites = ["https://b.example".to_string(), "http://127.0.0.1:*".into(), "https://b.example/".into()];
        store.set("a", v("bound value"), &sites).unwrap();
        let want = vec!["http://127.0.0.1:*".to_string(), "https://b.example".into()];
        assert_eq!(store.sites("a").unwrap(), Some(want.clone()), "sorted, deduplicated");
        assert_eq!(store.list().unwrap()[0].sites, want);
        assert_eq!(store.get("a").unwrap().unwrap().expose(), "bound value");
        assert_eq!(store.sites("nope").unwrap(), None);
        assert!(site_allows(&want, "https://b.example/login"));
        assert!(site_allows(&want, "http://127.0.0.1:5555/"));
        assert!(!site_allows(&want, "http://localhost:5555/"));
        assert!(!site_allows(&[], "https://b.example/"));

        // The binding is part of the seal: edited, the value does not open.
        let db = raw_conn(&home);
        db.execute("UPDATE secrets SET sites = '[\"https://evil.example\"]'", []).unwrap();
        assert!(matches!(SecretStore::open(&home).unwrap().get("a"), Err(Error::SecretUndecryptable(_))));
        db.execute("UPDATE secrets SET sites = '[]'", []).unwrap();
        assert!(matches!(SecretStore::open(&home).unwrap().get("a"), Err(Error::SecretUndecryptable(_))));

        // Setting it again replaces value and sites; no sites: unbound.
        store.set("a", v("unbound value"), &[]).unwrap();
        assert_eq!(store.sites("a").unwrap(), Some(vec![]));
        assert_eq!(store.get("a").unwrap().unwrap().expose(), "unbound value");

        // A bad pattern: a clear error, nothing written.
        for bad in ["example.com", "https://Example.com", "https://a.example/path", "ftp://a.example", "*"] {
            let e = store.set("c", v("x"), &[bad.to_string()]).unwrap_err();
            assert!(matches!(e, Error::SecretSite(_)) && e.to_string().contains(bad), "{bad}: {e}");
        }
        assert_eq!(store.sites("c").unwrap(), None);
        let many: Vec<String> = (0..=MAX_SITES).map(|i| format!("https://s{i}.example")).collect();
        assert!(matches!(store.set("c", v("x"), &many), Err(Error::SecretSite(_))));
    }

    #[test]
    fn a_table_from_before_bindings_is_migrated_and_its_secrets_are_unbound() {
        let (_d, home) = temp_home();
        SecretStore::open(&home).unwrap().set("old", v("stored long ago"), &[]).unwrap();
        let (nonce, ct): (Vec<u8>, Vec<u8>) = raw_conn(&home)
            .query_row("SELECT nonce, ciphertext FROM secrets", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        // The database as an earlier version left it: no `sites` column.
        let db = raw_conn(&home);
        db.execute_batch(
            "DROP TABLE secrets;
             CREATE TABLE secrets (name TEXT PRIMARY KEY NOT NULL, nonce BLOB NOT NULL, ciphertext BLOB NOT NULL,
                                   created TEXT NOT NULL, updated TEXT NOT NULL);",
        )
        .unwrap();
        db.execute(
            "INSERT INTO secrets VALUES ('old', ?1, ?2, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')",
            params![nonce, ct],
        )
        .unwrap();
        drop(db);

        let store = SecretStore::open(&home).unwrap();
        assert_eq!(store.sites("old").unwrap(), Some(vec![]), "an old secret is unbound");
        assert_eq!(store.get("old").unwrap().unwrap().expose(), "stored long ago");
        let listed = store.list().unwrap();
        assert_eq!((listed[0].name.as_str(), listed[0].sites.len()), ("old", 0));
        // Re-set with a site, it is bound; opening again migrates nothing twice.
        store.set("old", v("stored long ago"), &["https://app.example".into()]).unwrap();
        let again = SecretStore::open(&home).unwrap();
        assert_eq!(again.sites("old").unwrap(), Some(vec!["https://app.example".to_string()]));
        assert_eq!(again.get("old").unwrap().unwrap().expose(), "stored long ago");
    }

    #[test]
    fn read_value_strips_exactly_one_newline() {
        let read = |s: &[u8]| read_value(&mut &s[..]).map(|v| v.expose().to_string());
        assert_eq!(read(b"abc").unwrap(), "abc");
        assert_eq!(read(b"abc\n").unwrap(), "abc");
        assert_eq!(read(b"abc\r\n").unwrap(), "abc");
        assert_eq!(read(b"abc\n\n").unwrap(), "abc\n");
        assert_eq!(read(b"abc\r").unwrap(), "abc\r");
        assert_eq!(read(b" a b \n").unwrap(), " a b ");
        assert_eq!(read(b"line1\nline2\n").unwrap(), "line1\nline2");
        for empty in [&b""[..], b"\n", b"\r\n"] {
            let e = read(empty).unwrap_err();
            assert!(matches!(e, Error::SecretValue(_)) && e.to_string().contains("empty"), "{e}");
        }
        assert!(matches!(read(b"\xff\xfe"), Err(Error::SecretValue(_))));
        let max = "€".repeat(MAX_VALUE_CHARS);
        assert_eq!(read(format!("{max}\r\n").as_bytes()).unwrap(), max);
        let e = read(format!("{max}x").as_bytes()).unwrap_err();
        assert!(e.to_string().contains("10001 characters"), "{e}");
        let huge = vec![b'a'; 1 << 20];
        assert!(matches!(read(&huge), Err(Error::SecretValue(_))));
    }
}
