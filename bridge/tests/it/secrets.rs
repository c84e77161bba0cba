//! `chaperone secret set|list|rm` as a user meets it (the real binary, a
//! temporary home, piped stdin or a pseudo-terminal), and the store the
//! daemon reads (`bridge::secrets::SecretStore`) on the same files.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use bridge::Error;
use bridge::home::Home;
use bridge::secrets::{SecretStore, SecretValue};

const BIN: &str = env!("CARGO_BIN_EXE_chaperone");

/// A temporary directory; the home is `DIR/home`, not created, so tests
/// can tell whether a command created it.
fn temp_home() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    (dir, home)
}

fn cmd(args: &[&str], home: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args(args).arg("--home").arg(home).env_remove("CHAPERONE_HOME").env("CHAPERONE_LOG", "off");
    c
}

/// Runs `chaperone ARGS --home HOME` with `stdin` piped in.
fn run_with(args: &[&str], home: &Path, stdin: &[u8]) -> Output {
    let mut child = cmd(args, home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chaperone");
    let mut input = child.stdin.take().unwrap();
    // The process may exit before reading (e.g. a bad name): ignore EPIPE.
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

fn run(args: &[&str], home: &Path) -> Output {
    run_with(args, home, b"")
}

fn set(home: &Path, name: &str, value: &[u8]) -> Output {
    run_with(&["secret", "set", name], home, value)
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}\nstdout: {}\nstderr: {}", o.status.code(), out(o), err(o));
    out(o)
}

fn store(home: &Path) -> SecretStore {
    SecretStore::open(&Home::at(home)).unwrap()
}

fn get(home: &Path, name: &str) -> Option<String> {
    store(home).get(name).unwrap().map(|v| v.expose().to_string())
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// `CANARY-` and 32 random hex digits.
fn canary() -> String {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 16];
    ring::rand::SystemRandom::new().fill(&mut b).unwrap();
    format!("CANARY-{}", hex(&b))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn base64(b: &[u8], alphabet: &[u8; 64]) -> String {
    let mut s = String::new();
    for chunk in b.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &x)| n | u32::from(x) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            s.push(alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    s
}

/// Every way the value could sit in a file: plain, hex (both cases),
/// base64 (standard and URL alphabets, at each of the three alignments),
/// reversed, UTF-16.
fn encodings(value: &str) -> Vec<(String, Vec<u8>)> {
    const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let v = value.as_bytes();
    let mut all = vec![
        ("plain".to_string(), v.to_vec()),
        ("hex".into(), hex(v).into_bytes()),
        ("HEX".into(), hex(v).to_uppercase().into_bytes()),
        ("reversed".into(), value.chars().rev().collect::<String>().into_bytes()),
        ("utf-16le".into(), value.encode_utf16().flat_map(u16::to_le_bytes).collect()),
        ("utf-16be".into(), value.encode_utf16().flat_map(u16::to_be_bytes).collect()),
    ];
    for skip in 0..3 {
        for (label, alphabet) in [("base64", STD), ("base64url", URL)] {
            // Whole groups only: the last one depends on what follows.
            let mut enc = base64(&v[skip..], alphabet);
            enc.truncate((v.len() - skip) / 3 * 4);
            all.push((format!("{label}+{skip}"), enc.into_bytes()));
        }
    }
    all
}

/// Which encoding of `value` `bytes` hold, if any.
fn holds(bytes: &[u8], value: &str) -> Option<String> {
    encodings(value).into_iter().find(|(_, needle)| bytes.windows(needle.len()).any(|w| w == needle)).map(|(l, _)| l)
}

/// Fails if any file under `dir` holds `value` in any encoding; returns
/// the names of the files scanned.
#[track_caller]
fn assert_nowhere_in(dir: &Path, value: &str) -> Vec<String> {
    let mut scanned = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let bytes = std::fs::read(&p).unwrap();
            if let Some(label) = holds(&bytes, value) {
                panic!("{} holds the value ({label})", p.display());
            }
            scanned.push(p.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    scanned
}

/// The scanner itself: it finds a value buried at any offset in each
/// encoding of a larger blob.
#[test]
fn the_scanner_finds_planted_copies() {
    const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    assert_eq!(base64(b"Man", STD), "TWFu");
    assert_eq!(base64(b"Ma", STD), "TWE");
    assert_eq!(base64(b"M", STD), "TQ");
    let value = canary();
    assert_eq!(holds(b"nothing here", &value), None);
    for prefix in 0..6 {
        let blob = format!("{}{value}tail", "p".repeat(prefix));
        let rev: String = blob.chars().rev().collect();
        let utf16: Vec<u8> = blob.encode_utf16().flat_map(u16::to_le_bytes).collect();
        for planted in [
            blob.clone().into_bytes(),
            hex(blob.as_bytes()).into_bytes(),
            base64(blob.as_bytes(), STD).into_bytes(),
            rev.into_bytes(),
            utf16,
        ] {
            assert!(holds(&planted, &value).is_some(), "prefix {prefix}: {}", String::from_utf8_lossy(&planted));
        }
    }
}

#[test]
fn set_list_rm_round_trip() {
    let (_d, home) = temp_home();
    assert_eq!(ok(&run(&["secret", "list"], &home)).trim(), "no secrets");
    assert_eq!(ok(&run(&["secret", "list", "--json"], &home)).trim(), "[]");

    assert_eq!(
        ok(&set(&home, "zeta.token", b"z-value\n")).trim(),
        "stored secret zeta.token (bound to no site: you approve every use)"
    );
    assert_eq!(
        ok(&set(&home, "alpha_pw", b"a-value")).trim(),
        "stored secret alpha_pw (bound to no site: you approve every use)"
    );
    assert_eq!(
        ok(&set(&home, "Mid-1", b"m-value\r\n")).trim(),
        "stored secret Mid-1 (bound to no site: you approve every use)"
    );

    let list = ok(&run(&["secret", "list"], &home));
    let names: Vec<&str> = list.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(names, ["Mid-1", "alpha_pw", "zeta.token"], "sorted by name (bytewise): {list}");
    for l in list.lines() {
        assert!(l.contains("created 20") && l.contains("updated 20") && l.contains('Z'), "{l}");
    }
    for v in ["z-value", "a-value", "m-value"] {
        assert!(!list.contains(v));
    }

    let json: serde_json::Value = serde_json::from_str(&ok(&run(&["secret", "list", "--json"], &home))).unwrap();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        let obj = r.as_object().unwrap();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["created", "name", "sites", "updated"], "no value field: {r}");
        assert_eq!(r["sites"], serde_json::json!([]), "bound to no site: {r}");
        let created = r["created"].as_str().unwrap();
        assert!(created.len() == 24 && created.ends_with('Z') && &created[10..11] == "T", "RFC 3339: {created}");
    }

    assert_eq!(ok(&run(&["secret", "rm", "alpha_pw"], &home)).trim(), "removed secret alpha_pw");
    assert_eq!(get(&home, "alpha_pw"), None);
    let again = run(&["secret", "rm", "alpha_pw"], &home);
    assert_eq!(again.status.code(), Some(1), "{}", err(&again));
    assert!(err(&again).contains("no secret named \"alpha_pw\""), "{}", err(&again));

    ok(&run(&["secret", "rm", "zeta.token"], &home));
    ok(&run(&["secret", "rm", "Mid-1"], &home));
    assert_eq!(ok(&run(&["secret", "list"], &home)).trim(), "no secrets");
}

#[test]
fn replacing_keeps_created_and_moves_updated() {
    let (_d, home) = temp_home();
    ok(&set(&home, "token", b"first"));
    let list = |home: &Path| -> serde_json::Value {
        serde_json::from_str(&ok(&run(&["secret", "list", "--json"], home))).unwrap()
    };
    let before = list(&home);
    assert_eq!(before[0]["created"], before[0]["updated"]);
    std::thread::sleep(Duration::from_millis(20));
    ok(&set(&home, "token", b"second"));
    let after = list(&home);
    assert_eq!(after.as_array().unwrap().len(), 1);
    assert_eq!(after[0]["created"], before[0]["created"]);
    assert!(after[0]["updated"].as_str().unwrap() > before[0]["updated"].as_str().unwrap(), "{after}");
    assert_eq!(get(&home, "token").as_deref(), Some("second"));
}

#[test]
fn stdin_value_is_stored_exactly() {
    let (_d, home) = temp_home();
    let cases: &[(&str, &[u8], &str)] = &[
        ("plain", b"p@ss w0rd", "p@ss w0rd"),
        ("lf", b"value\n", "value"),
        ("crlf", b"value\r\n", "value"),
        ("only-one", b"value\n\n", "value\n"),
        ("cr-kept", b"value\r", "value\r"),
        ("spaces", b"  padded  \n", "  padded  "),
        ("multi", b"line one\nline two\n", "line one\nline two"),
        ("unicode", "pässwörd ✓ 🔑\n".as_bytes(), "pässwörd ✓ 🔑"),
        ("quotes", b"'\"`$(rm -rf /)`\\n", "'\"`$(rm -rf /)`\\n"),
    ];
    for (name, input, expected) in cases {
        let o = set(&home, name, input);
        assert_eq!(ok(&o).trim(), format!("stored secret {name} (bound to no site: you approve every use)"));
        assert_eq!(get(&home, name).as_deref(), Some(*expected), "{name}");
    }
    // Exactly the limit, in 3-byte characters.
    let max = "€".repeat(shared::tools::MAX_TYPED_CHARS);
    ok(&set(&home, "max", format!("{max}\n").as_bytes()));
    assert_eq!(get(&home, "max").as_deref(), Some(max.as_str()));
}

#[test]
fn no_file_holds_the_value_in_any_encoding() {
    let (_d, home) = temp_home();
    let value = canary();
    let o = set(&home, "canary", format!("{value}\n").as_bytes());
    ok(&o);
    assert!(!out(&o).contains(&value) && !err(&o).contains(&value));
    let list = run(&["secret", "list"], &home);
    let json = run(&["secret", "list", "--json"], &home);
    for o in [&list, &json] {
        assert!(!out(o).contains(&value) && !err(o).contains(&value));
    }

    // With a connection open and a write pending in the WAL.
    let s = store(&home);
    assert_eq!(s.get("canary").unwrap().unwrap().expose(), value);
    let value2 = canary();
    s.set("canary2", SecretValue::new(value2.clone()), &[]).unwrap();
    let scanned = assert_nowhere_in(&home, &value);
    assert_nowhere_in(&home, &value2);
    for f in ["chaperone.db", "chaperone.db-wal", "chaperone.db-shm", "secret.key"] {
        assert!(scanned.iter().any(|s| s == f), "{f} was scanned: {scanned:?}");
    }
    // Replaced and removed: no copy either (old ciphertexts are overwritten).
    s.set("canary", SecretValue::new(canary()), &[]).unwrap();
    assert!(s.remove("canary2").unwrap());
    drop(s);
    assert_nowhere_in(&home, &value);
    assert_nowhere_in(&home, &value2);
}

#[test]
fn files_are_private() {
    let (_d, home) = temp_home();
    ok(&set(&home, "a", b"x"));
    assert_eq!(mode(&home), 0o700);
    assert_eq!(mode(&home.join("secret.key")), 0o600);
    assert_eq!(mode(&home.join("chaperone.db")), 0o600);
    assert_eq!(std::fs::metadata(home.join("secret.key")).unwrap().len(), 32);
    let s = store(&home);
    s.set("b", SecretValue::new("y".into()), &[]).unwrap();
    for f in ["chaperone.db-wal", "chaperone.db-shm"] {
        assert_eq!(mode(&home.join(f)), 0o600, "{f}");
    }
    let names: Vec<String> =
        std::fs::read_dir(&home).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("tmp")), "no temporary key file left: {names:?}");
}

#[test]
fn bad_names_are_refused_before_anything_is_written() {
    let (_d, home) = temp_home();
    let long = "n".repeat(65);
    for name in ["", "a b", long.as_str(), "../x", "ä", "a/b", "x\ny"] {
        for args in [&["secret", "set", name][..], &["secret", "rm", name][..]] {
            let o = run_with(args, &home, b"some value\n");
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
            let e = err(&o);
            assert!(e.contains("1 to 64 characters") && e.contains("A-Z") && e.contains("'_', '.' or '-'"), "{e}");
            assert!(!e.contains("some value") && !out(&o).contains("some value"));
            assert!(!home.exists(), "{args:?} created the home");
        }
    }
    // 64 is fine.
    ok(&set(&home, &"n".repeat(64), b"v"));
}

#[test]
fn empty_or_over_long_values_are_refused_and_nothing_is_written() {
    let (_d, home) = temp_home();
    for input in [&b""[..], b"\n", b"\r\n"] {
        let o = set(&home, "empty", input);
        assert_eq!(o.status.code(), Some(2), "{input:?}: {}", err(&o));
        assert!(err(&o).contains("empty") && err(&o).contains("nothing was stored"), "{}", err(&o));
        assert!(!home.exists(), "nothing written for {input:?}");
    }
    let too_long = "a".repeat(shared::tools::MAX_TYPED_CHARS + 1);
    let o = set(&home, "long", too_long.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("10001 characters") && err(&o).contains("10000"), "{}", err(&o));
    assert!(!home.exists());
    let huge = vec![b'a'; 1 << 20];
    let o = set(&home, "huge", &huge);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("longer than 10000"), "{}", err(&o));
    let o = set(&home, "binary", b"\xff\xfe\xfd");
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("UTF-8"), "{}", err(&o));
    assert!(!home.exists());

    // With a store in place: a refused value changes nothing.
    ok(&set(&home, "kept", b"old"));
    let db_before = std::fs::read(home.join("chaperone.db")).unwrap();
    assert_eq!(set(&home, "kept", b"\n").status.code(), Some(2));
    assert_eq!(get(&home, "kept").as_deref(), Some("old"));
    assert_eq!(std::fs::read(home.join("chaperone.db")).unwrap(), db_before);
}

#[test]
fn list_and_rm_create_nothing() {
    let (_d, home) = temp_home();
    ok(&run(&["secret", "list"], &home));
    assert_eq!(run(&["secret", "rm", "x"], &home).status.code(), Some(1));
    assert!(!home.exists());
    // A home with only the audit database: still no key made.
    std::fs::create_dir(&home).unwrap();
    bridge::audit::AuditStore::open(&home.join("chaperone.db")).unwrap();
    assert_eq!(ok(&run(&["secret", "list"], &home)).trim(), "no secrets");
    assert_eq!(run(&["secret", "rm", "x"], &home).status.code(), Some(1));
    assert_eq!(get(&home, "x"), None);
    assert!(!home.join("secret.key").exists());
}

#[test]
fn secret_value_debug_and_display_hide_the_value() {
    let value = canary();
    let v = SecretValue::new(value.clone());
    for shown in [format!("{v:?}"), format!("{v}"), format!("{v:#?}"), format!("{:?}", Some(&v))] {
        assert!(!shown.contains(&value) && shown.contains("••••"), "{shown}");
    }
    assert_eq!(v.expose(), value);
}

#[test]
fn tampered_or_renamed_rows_fail_with_a_clear_error() {
    let (_d, home) = temp_home();
    ok(&set(&home, "bank", b"bank-pass"));
    ok(&set(&home, "shop", b"shop-pass"));
    let db = rusqlite::Connection::open(home.join("chaperone.db")).unwrap();

    // A ciphertext moved to another name does not open under it.
    db.execute("DELETE FROM secrets WHERE name = 'shop'", []).unwrap();
    db.execute("UPDATE secrets SET name = 'shop' WHERE name = 'bank'", []).unwrap();
    let e = store(&home).get("shop").unwrap_err();
    assert!(matches!(&e, Error::SecretUndecryptable(n) if n == "shop"), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("\"shop\" cannot be decrypted") && !msg.contains("bank-pass"), "{msg}");
    // ... and listing and removing still work.
    assert!(out(&run(&["secret", "list"], &home)).contains("shop"));

    // A byte more, a byte less, one flipped bit, another nonce.
    db.execute("UPDATE secrets SET name = 'bank' WHERE name = 'shop'", []).unwrap();
    assert_eq!(get(&home, "bank").as_deref(), Some("bank-pass"));
    let ct: Vec<u8> = db.query_row("SELECT ciphertext FROM secrets WHERE name = 'bank'", [], |r| r.get(0)).unwrap();
    let mut flipped = ct.clone();
    flipped[0] ^= 0x80;
    for bad in [[ct.as_slice(), &[0]].concat(), ct[..ct.len() - 1].to_vec(), flipped, Vec::new()] {
        db.execute("UPDATE secrets SET ciphertext = ?1 WHERE name = 'bank'", [&bad]).unwrap();
        let e = store(&home).get("bank").unwrap_err();
        assert!(matches!(e, Error::SecretUndecryptable(_)), "{e:?}");
    }
    db.execute("UPDATE secrets SET ciphertext = ?1 WHERE name = 'bank'", [&ct]).unwrap();
    assert_eq!(get(&home, "bank").as_deref(), Some("bank-pass"));
    db.execute("UPDATE secrets SET nonce = zeroblob(12) WHERE name = 'bank'", []).unwrap();
    assert!(matches!(store(&home).get("bank"), Err(Error::SecretUndecryptable(_))));
    // Removing the broken secret is always possible.
    ok(&run(&["secret", "rm", "bank"], &home));
}

#[test]
fn a_wrong_size_key_is_a_clear_error_and_is_left_alone() {
    let (_d, home) = temp_home();
    ok(&set(&home, "a", b"x"));
    let key = home.join("secret.key");
    for bad in [&[1u8; 16][..], &[1u8; 33][..], b""] {
        bridge::home::write_private(&key, bad).unwrap();
        let o = set(&home, "b", b"y");
        assert_eq!(o.status.code(), Some(1), "{}", err(&o));
        assert!(err(&o).contains("secret.key is") && err(&o).contains("exactly 32"), "{}", err(&o));
        let e = store(&home).get("a").unwrap_err();
        assert!(matches!(e, Error::SecretKey(_)) && e.to_string().contains("exactly 32"), "{e}");
        assert_eq!(std::fs::read(&key).unwrap(), bad, "never replaced");
        assert_eq!(get(&home, "b"), None);
    }
    // A deleted key is not silently replaced while secrets need it.
    std::fs::remove_file(&key).unwrap();
    let o = set(&home, "b", b"y");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("missing") && err(&o).contains("orphan"), "{}", err(&o));
    assert!(!key.exists());
}

#[test]
fn help_explains_secret_and_each_subcommand() {
    let (_d, home) = temp_home();
    let help = |args: &[&str]| {
        let o = Command::new(BIN).args(args).arg("--help").output().unwrap();
        ok(&o)
    };
    let top = help(&[]);
    assert!(top.contains("secret"), "{top}");
    let h = help(&["secret"]);
    for s in [
        "set",
        "list",
        "rm",
        "encrypted",
        "secret.key",
        "No command prints a stored value",
        "--site",
        "bound to no site",
        "ask every time until you set them again with --site",
    ] {
        assert!(h.contains(s), "secret --help lacks {s:?}:\n{h}");
    }
    let h = help(&["secret", "set"]);
    for s in [
        "terminal",
        "hidden",
        "stdin",
        "trailing newline",
        "10000",
        "A-Z a-z 0-9 _ . -",
        "--home",
        "--site <ORIGIN>",
        "[[sites]]",
        "replacing the value and the sites",
        "Repeat",
    ] {
        assert!(h.contains(s), "secret set --help lacks {s:?}:\n{h}");
    }
    let h = help(&["secret", "list"]);
    for s in ["names", "created", "Never values", "--json"] {
        assert!(h.contains(s), "secret list --help lacks {s:?}:\n{h}");
    }
    let h = help(&["secret", "rm"]);
    for s in ["Remove", "Exits 1", "--home"] {
        assert!(h.contains(s), "secret rm --help lacks {s:?}:\n{h}");
    }
    assert!(!home.exists());
}

#[test]
fn site_bindings_are_set_listed_replaced_and_validated() {
    let (_d, home) = temp_home();
    let sites = ["--site", "https://github.com", "--site", "https://*.github.com", "--site", "https://github.com/"];
    let o = run_with(&[&["secret", "set", "gh"][..], &sites].concat(), &home, b"v1");
    assert_eq!(ok(&o).trim(), "stored secret gh for https://*.github.com, https://github.com");
    let both = vec!["https://*.github.com".to_string(), "https://github.com".into()];
    assert_eq!(store(&home).sites("gh").unwrap(), Some(both.clone()));
    let list = ok(&run(&["secret", "list"], &home));
    assert!(list.contains("sites https://*.github.com https://github.com"), "{list}");
    let json: serde_json::Value = serde_json::from_str(&ok(&run(&["secret", "list", "--json"], &home))).unwrap();
    assert_eq!(json[0]["sites"], serde_json::json!(both));

    // Setting it again replaces the value and the sites…
    ok(&run_with(&["secret", "set", "gh", "--site", "http://127.0.0.1:*"], &home, b"v2"));
    assert_eq!(get(&home, "gh").as_deref(), Some("v2"));
    assert_eq!(store(&home).sites("gh").unwrap(), Some(vec!["http://127.0.0.1:*".to_string()]));
    // …and without --site leaves it bound to no site.
    ok(&set(&home, "gh", b"v3"));
    assert_eq!(store(&home).sites("gh").unwrap(), Some(vec![]));
    assert!(ok(&run(&["secret", "list"], &home)).contains("sites no site (asks every time)"));

    // A bad pattern: exit 2, the pattern and what is wrong, nothing written.
    let (_d2, fresh) = temp_home();
    for (bad, why) in [
        ("github.com", "https://host"),
        ("https://GitHub.com", "lower case"),
        ("https://github.com/login", "path"),
        ("ftp://github.com", "http or https"),
        ("https://*.com", "dot"),
        ("https://github.com:0", "port"),
        ("https://gith*b.com", "*"),
    ] {
        for h in [&fresh, &home] {
            let o = run_with(&["secret", "set", "other", "--site", bad], h, b"x");
            assert_eq!(o.status.code(), Some(2), "{bad}: {}", err(&o));
            assert!(err(&o).contains(bad) && err(&o).contains(why), "{bad}: {}", err(&o));
        }
        assert!(!fresh.exists(), "{bad}: the home was created");
        assert_eq!(get(&home, "other"), None, "{bad} was stored");
    }
    assert_eq!(get(&home, "gh").as_deref(), Some("v3"));
}

/// A `secret set` on a pseudo-terminal: the prompt on stderr, the typed
/// value stored but never echoed, the terminal left as it was.
mod tty {
    use std::os::fd::{AsFd, OwnedFd};

    use nix::pty::openpty;
    use nix::sys::termios::{LocalFlags, tcgetattr};

    use super::*;

    struct Prompted {
        child: std::process::Child,
        master: std::fs::File,
        stderr: std::sync::mpsc::Receiver<u8>,
    }

    fn spawn_on_pty(home: &Path, name: &str) -> Prompted {
        let pty = openpty(None, None).unwrap();
        assert!(tcgetattr(pty.slave.as_fd()).unwrap().local_flags.contains(LocalFlags::ECHO));
        let slave: OwnedFd = pty.slave;
        let mut c = cmd(&["secret", "set", name], home);
        c.stdin(Stdio::from(slave)).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        drop(c); // closes our copy of the slave
        let mut stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut b = [0u8; 1];
            while let Ok(1) = stderr.read(&mut b) {
                if tx.send(b[0]).is_err() {
                    break;
                }
            }
        });
        let p = Prompted { child, master: std::fs::File::from(pty.master), stderr: rx };
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !String::from_utf8_lossy(&seen).contains("(typing is hidden): ") {
            let left = deadline.saturating_duration_since(Instant::now());
            match p.stderr.recv_timeout(left) {
                Ok(b) => seen.push(b),
                Err(_) => panic!("no prompt; stderr so far: {}", String::from_utf8_lossy(&seen)),
            }
        }
        assert!(String::from_utf8_lossy(&seen).contains(&format!("value for secret {name}")));
        p
    }

    /// The rest of stderr, up to its end.
    fn rest(rx: &std::sync::mpsc::Receiver<u8>) -> String {
        let mut all = Vec::new();
        while let Ok(b) = rx.recv_timeout(Duration::from_secs(10)) {
            all.push(b);
        }
        String::from_utf8_lossy(&all).into_owned()
    }

    /// Everything the terminal showed (the master side), once the child
    /// is gone.
    fn drain(master: std::fs::File) -> Vec<u8> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut master = master;
            let mut all = Vec::new();
            let mut b = [0u8; 4096];
            // EIO once the slave side is closed everywhere.
            while let Ok(n @ 1..) = master.read(&mut b) {
                all.extend_from_slice(&b[..n]);
            }
            let _ = tx.send(all);
        });
        rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default()
    }

    #[test]
    fn the_typed_value_is_not_echoed_and_is_stored() {
        let (_d, home) = temp_home();
        let value = canary();
        let mut p = spawn_on_pty(&home, "typed");
        p.master.write_all(format!("{value}\n").as_bytes()).unwrap();
        let status = p.child.wait().unwrap();
        let mut stdout = String::new();
        p.child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        let rest = rest(&p.stderr).into_bytes();
        assert!(status.success(), "exit {status}; stderr: {}", String::from_utf8_lossy(&rest));
        assert_eq!(stdout.trim(), "stored secret typed (bound to no site: you approve every use)");
        let shown = drain(p.master);
        assert!(!String::from_utf8_lossy(&shown).contains(&value), "echoed: {shown:?}");
        assert!(!String::from_utf8_lossy(&rest).contains(&value));
        assert_eq!(get(&home, "typed").as_deref(), Some(value.as_str()));
    }

    #[test]
    fn an_empty_line_is_refused() {
        let (_d, home) = temp_home();
        let mut p = spawn_on_pty(&home, "blank");
        p.master.write_all(b"\n").unwrap();
        let status = p.child.wait().unwrap();
        let rest = rest(&p.stderr);
        assert_eq!(status.code(), Some(2), "{rest}");
        assert!(rest.contains("empty"), "{rest}");
        assert!(!home.join("secret.key").exists() && !home.join("chaperone.db").exists());
    }

    #[test]
    fn an_interrupt_restores_echo_and_stores_nothing() {
        let (_d, home) = temp_home();
        let p = spawn_on_pty(&home, "interrupted");
        let mut child = p.child;
        // Echo is off while the prompt waits.
        let deadline = Instant::now() + Duration::from_secs(5);
        while tcgetattr(p.master.as_fd()).unwrap().local_flags.contains(LocalFlags::ECHO) {
            assert!(Instant::now() < deadline, "echo never went off");
            std::thread::sleep(Duration::from_millis(10));
        }
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
            nix::sys::signal::Signal::SIGINT,
        )
        .unwrap();
        let status = child.wait().unwrap();
        let rest = rest(&p.stderr);
        assert_eq!(status.code(), Some(130), "{rest}");
        assert!(rest.contains("cancelled"), "{rest}");
        assert!(tcgetattr(p.master.as_fd()).unwrap().local_flags.contains(LocalFlags::ECHO), "echo restored");
        assert!(!home.join("secret.key").exists());
    }
}
