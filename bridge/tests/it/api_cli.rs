//! `chaperone api learn|client` as a person runs them (issue 47): the real
//! binary on a HAR whose page copied its own credentials everywhere, and
//! clients written into folders that are, or hold, symbolic links.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use forge::credentials::spellings;

const BIN: &str = env!("CARGO_BIN_EXE_chaperone");
/// The page's bearer token and its `X-Acme-Ref` session header in
/// `fixtures/forge/copied-credentials.har`.
const BEARER: &str = "Zq7-Lm2.xR9~vB4nT8wK";
const ACME_REF: &str = "ac?me-7f3kq9zx2mw8";

fn chaperone(args: &[&str], home: &Path) -> Output {
    Command::new(BIN).args(args).arg("--home").arg(home).env_remove("CHAPERONE_HOME").output().expect("run chaperone")
}

fn said(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn har() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/forge/copied-credentials.har")
}

/// Every file under `dir` (links not followed), with its text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() {
                out.push((e.path(), String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned()));
            } else {
                out.push((e.path(), String::new()));
            }
        }
    }
    out
}

/// Which spellings of which credential are in `text` (ASCII case aside).
fn leaks(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    for (what, v) in [
        ("bearer", BEARER.to_string()),
        ("X-Acme-Ref", ACME_REF.to_string()),
        ("Authorization", format!("Bearer {BEARER}")),
    ] {
        for (n, s) in spellings(&v).iter().enumerate() {
            if lower.contains(&s.to_ascii_lowercase()) {
                out.push(format!("{what} spelling {n}"));
            }
        }
    }
    out
}

#[test]
fn api_learn_writes_no_spelling_of_the_credentials_a_page_copied() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let out = work.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // Control: the HAR holds the attacks (hex, base64, the header's value).
    let input = std::fs::read_to_string(har()).unwrap();
    let hex: String = BEARER.bytes().map(|b| format!("{b:02x}")).collect();
    for needle in [hex.as_str(), BEARER, "ac%3Fme-7f3kq9zx2mw8", "YWM/bWUtN2Yza3E5engybXc4"] {
        assert!(input.contains(needle), "control: {needle} in the HAR");
    }
    for name in ["spec.json", "spec.yaml"] {
        let spec = out.join(name);
        let o = chaperone(&["api", "learn", har().to_str().unwrap(), "-o", spec.to_str().unwrap()], &home);
        assert!(o.status.success(), "{}", said(&o));
        assert!(leaks(&said(&o)).is_empty(), "{}", said(&o));
    }
    let spec = out.join("spec.json");
    for (lang, dir) in [("python", "py"), ("typescript", "ts")] {
        let d = out.join(dir);
        let o = chaperone(&["api", "client", spec.to_str().unwrap(), "--lang", lang, "-o", d.to_str().unwrap()], &home);
        assert!(o.status.success(), "{lang}: {}", said(&o));
    }
    let written = files_under(&out);
    assert!(written.len() >= 10, "{written:?}");
    for (path, text) in &written {
        assert_eq!(leaks(text), Vec::<String>::new(), "{}:\n{text}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(!name.ends_with(".tmp"), "a temporary file was left: {}", path.display());
    }
    // The copies are parameters, and harmless values still examples.
    let spec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    let paths = spec["paths"].as_object().unwrap();
    for p in
        ["/api/files/{credential}", "/api/refs/{credential}/items", "/api/sessions/{credential}/{credential2}/state"]
    {
        assert!(paths.contains_key(p), "{p}: {:?}", paths.keys());
    }
    let status = paths["/api/items/{itemId}"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "status")
        .cloned()
        .unwrap();
    assert_eq!(status["example"], "active", "control: {status}");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(out.join("spec.json")).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
}

const SPEC: &str = r#"{"openapi": "3.1.0", "info": {"title": "T", "version": "1"}, "servers": [{"url": "http://127.0.0.1:9"}],
  "paths": {"/items/{id}": {"get": {"operationId": "getItem", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}], "responses": {"200": {"description": "OK"}}}}}}"#;

fn client(spec: &Path, dir: &Path, home: &Path, overwrite: bool) -> Output {
    let mut args = vec!["api", "client", spec.to_str().unwrap(), "--lang", "python", "-o", dir.to_str().unwrap()];
    if overwrite {
        args.push("--overwrite");
    }
    chaperone(&args, home)
}

/// The person's folder a link points to: its one file, as it was.
fn assert_untouched(victim: &Path) {
    let names: Vec<String> =
        std::fs::read_dir(victim).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["notes.txt"], "the link's target was written into");
    assert_eq!(std::fs::read_to_string(victim.join("notes.txt")).unwrap(), "my notes");
}

#[test]
fn api_client_never_writes_through_a_symbolic_link() {
    use std::os::unix::fs::symlink;
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let spec = work.path().join("spec.json");
    std::fs::write(&spec, SPEC).unwrap();
    let victim = work.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("notes.txt"), "my notes").unwrap();

    // The output folder is a link: refused, with and without --overwrite.
    let linked = work.path().join("linked");
    symlink(&victim, &linked).unwrap();
    for overwrite in [true, false] {
        let o = client(&spec, &linked, &home, overwrite);
        assert_eq!(o.status.code(), Some(2), "{}", said(&o));
        assert!(said(&o).contains("symbolic link") && said(&o).contains("linked"), "{}", said(&o));
        assert!(!said(&o).contains("panicked"), "{}", said(&o));
        assert_untouched(&victim);
    }
    // A link above the folder, there before us, is the person's path to
    // it (as `/tmp` is on some systems): followed, and what we make below
    // it is a real folder.
    let theirs = work.path().join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    let via = work.path().join("via");
    symlink(&theirs, &via).unwrap();
    let o = client(&spec, &via.join("made"), &home, false);
    assert!(o.status.success(), "{}", said(&o));
    assert!(std::fs::symlink_metadata(theirs.join("made")).unwrap().is_dir());

    // A folder holding a link named like a file of the client, and a dangling one.
    let mine = work.path().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("keep.txt"), "mine").unwrap();
    symlink(victim.join("notes.txt"), mine.join("client.py")).unwrap();
    let o = client(&spec, &mine, &home, true);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("client.py") && said(&o).contains("symbolic link"), "{}", said(&o));
    assert!(!said(&o).contains("panicked"), "{}", said(&o));
    assert_untouched(&victim);
    assert!(!mine.join("README.md").exists() && !mine.join(".chaperone-generated").exists(), "nothing is written");
    std::fs::remove_file(mine.join("client.py")).unwrap();
    let nowhere = work.path().join("nowhere.py");
    symlink(&nowhere, mine.join("test_client.py")).unwrap();
    let o = client(&spec, &mine, &home, true);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("test_client.py") && said(&o).contains("symbolic link"), "{}", said(&o));
    assert!(!nowhere.exists(), "a dangling link's target was made");
    assert!(!mine.join("client.py").exists(), "nothing is written");
    // A marker that is a link does not make a folder ours.
    std::fs::remove_file(mine.join("test_client.py")).unwrap();
    symlink(victim.join("notes.txt"), mine.join(".chaperone-generated")).unwrap();
    let o = client(&spec, &mine, &home, false);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("--overwrite"), "{}", said(&o));
    let o = client(&spec, &mine, &home, true);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains(".chaperone-generated") && said(&o).contains("symbolic link"), "{}", said(&o));
    assert_untouched(&victim);

    // Control: with the link gone, --overwrite writes there, beside the person's file.
    std::fs::remove_file(mine.join(".chaperone-generated")).unwrap();
    let o = client(&spec, &mine, &home, true);
    assert!(o.status.success(), "{}", said(&o));
    assert!(mine.join("client.py").is_file() && mine.join(".chaperone-generated").is_file());
    assert_eq!(std::fs::read_to_string(mine.join("keep.txt")).unwrap(), "mine");
    // …and folders we make on the way are folders.
    let fresh = work.path().join("a/b/c");
    let o = client(&spec, &fresh, &home, false);
    assert!(o.status.success(), "{}", said(&o));
    assert!(fresh.join("client.py").is_file());

    // `api learn -o` onto a link: refused, the target untouched.
    let har = har();
    let out = work.path().join("spec-link.json");
    symlink(victim.join("notes.txt"), &out).unwrap();
    let o = chaperone(&["api", "learn", har.to_str().unwrap(), "-o", out.to_str().unwrap()], &home);
    assert_eq!(o.status.code(), Some(2), "{}", said(&o));
    assert!(said(&o).contains("symbolic link"), "{}", said(&o));
    assert_untouched(&victim);
}
