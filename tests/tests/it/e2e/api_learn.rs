//! `chaperone api learn` and `api client` end to end: a person uses the
//! library's single-page app in real Chromium (trusted CDP input), the
//! harness saves a DevTools-style HAR of it (bearer token, session cookie,
//! CSRF token and password inside), the real `chaperone` binary learns an
//! OpenAPI description from it and writes clients, and the clients call
//! the live library API.
//!
//! Measured against the authors' documentation
//! (`fixtures/forge/library.expected.json`): path templates ≥ 95 %
//! precision and recall, fields and query parameters ≥ 90 %.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use tests::har::HarRecorder;
use tests::libraryapi::{LibraryServer, PASSWORD, USERNAME};
use tests::{Browser, CdpSession};

fn tool(var: &str, fallback: &str) -> PathBuf {
    let p = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| tests::workspace_root().join(fallback));
    assert!(p.exists(), "{} is missing ({var}); `cargo xtask test` installs it", p.display());
    p
}

async fn status_is(page: &CdpSession, want: &str) {
    let ok = tests::poll(Duration::from_secs(10), Duration::from_millis(50), || async {
        let v = page.evaluate("document.getElementById('status').textContent").await.ok()?;
        (v.as_str()? == want).then_some(())
    })
    .await;
    assert!(ok.is_some(), "the app never showed {want:?}");
}

async fn status_starts(page: &CdpSession, prefix: &str) {
    let ok = tests::poll(Duration::from_secs(10), Duration::from_millis(50), || async {
        let v = page.evaluate("document.getElementById('status').textContent").await.ok()?;
        v.as_str()?.starts_with(prefix).then_some(())
    })
    .await;
    assert!(ok.is_some(), "the app never showed {prefix:?}…");
}

async fn click(page: &CdpSession, selector: &str, then: &str) {
    page.click_selector(selector).await.unwrap_or_else(|e| panic!("click {selector}: {e}"));
    status_is(page, then).await;
}

fn chaperone(args: &[&str], home: &Path) -> (i32, String) {
    let out = Command::new(tests::chaperone_bin()).args(args).arg("--home").arg(home).output().expect("run chaperone");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// The person's session with the app, recorded as a HAR.
async fn record(server: &LibraryServer) -> Value {
    let browser = Browser::plain().await.expect("launch Chromium");
    let page = browser.cdp.new_page("about:blank").await.expect("a page");
    let rec = HarRecorder::start(&browser.cdp, &page).await.expect("record the network");
    page.navigate(&format!("{}/", server.base())).await.expect("open the app");
    use_the_app(&page).await;
    rec.finish().await.expect("the HAR")
}

/// The person uses every part of the app open in `page` (trusted input):
/// login, books, reviews, loans, shelves, search, rename.
pub(super) async fn use_the_app(page: &CdpSession) {
    page.click_and_type("#username", USERNAME).await.unwrap();
    page.click_and_type("#password", PASSWORD).await.unwrap();
    click(page, "#login", "signed in").await;
    for id in ["1", "4", "7"] {
        click(page, "#search", "books page 1").await;
        if id == "7" {
            click(page, "#next", "books page 2").await;
        }
        click(page, &format!("#books button[data-id='{id}']"), &format!("book {id}")).await;
        page.click_selector("#author-link").await.unwrap();
        status_starts(page, "author ").await;
        page.click_and_type("#review-text", &format!("Review of book {id}")).await.unwrap();
        click(page, "#post-review", "review 201").await;
        click(page, "#borrow", "borrowed 201").await;
    }
    click(page, "#sort-rating", "reviews 7").await;
    for shelf in ["fantasy", "science-fiction", "classics", "humour"] {
        click(page, &format!("button[data-shelf='{shelf}']"), &format!("shelf {shelf}")).await;
    }
    click(page, "#my-loans", "loans 3").await;
    click(page, "#loans li:first-child button", "returned 204").await;
    click(page, "#active-loans", "loans 2").await;
    click(page, "#loans li:first-child button", "returned 204").await;
    page.click_and_type("#q", "the").await.unwrap();
    click(page, "#search", "books page 1").await;
    click(page, "#next", "books page 2").await;
    page.click_and_type("#newname", "Robin R.").await.unwrap();
    click(page, "#rename", "renamed").await;
}

#[tokio::test]
async fn learns_the_library_api_from_a_devtools_har_and_its_clients_work() {
    let server = LibraryServer::start();
    let work = tests::temp_dir("api-learn");
    let home = work.path().join("home");
    let har = record(&server).await;
    let har_text = har.to_string();
    let har_path = work.path().join("devtools.har");
    std::fs::write(&har_path, &har_text).unwrap();

    // Control: the HAR really holds the credentials the spec must not.
    let entries = har["log"]["entries"].as_array().unwrap();
    let login = entries.iter().find(|e| e["request"]["url"].as_str().unwrap().ends_with("/api/auth/login")).unwrap();
    let answer: Value = serde_json::from_str(login["response"]["content"]["text"].as_str().unwrap()).unwrap();
    let token = answer["token"].as_str().unwrap().to_string();
    let csrf = answer["csrf"].as_str().unwrap().to_string();
    let cookie = login["response"]["headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"].as_str().unwrap().eq_ignore_ascii_case("set-cookie"))
        .and_then(|h| h["value"].as_str())
        .and_then(|v| v.split(';').next())
        .and_then(|v| v.split_once('='))
        .map(|(_, v)| v.to_string())
        .expect("the login answer sets a cookie");
    let secrets = [token.as_str(), csrf.as_str(), cookie.as_str(), PASSWORD];
    for s in secrets {
        assert!(har_text.contains(s), "the HAR should hold every credential (control)");
    }
    assert!(har_text.contains("Bearer "), "requests carry the bearer token");

    // Learn, for the API's host.
    let spec_path = work.path().join("library.json");
    let (code, out) = chaperone(
        &["api", "learn", har_path.to_str().unwrap(), "--host", &server.host(), "-o", spec_path.to_str().unwrap()],
        &home,
    );
    assert_eq!(code, 0, "{out}");
    let spec_text = std::fs::read_to_string(&spec_path).unwrap();
    for s in secrets {
        assert!(!spec_text.contains(s), "a credential reached the spec");
    }
    let spec: Value = serde_json::from_str(&spec_text).unwrap();

    // Measured against the authors' documentation.
    let expected: forge::measure::Expected = serde_json::from_str(
        &std::fs::read_to_string(tests::workspace_root().join("fixtures/forge/library.expected.json")).unwrap(),
    )
    .unwrap();
    let scores = forge::measure::score(&spec, &expected);
    eprintln!("scores: {}", serde_json::to_string(&scores).unwrap());
    assert!(scores.templates.precision >= 0.95 && scores.templates.recall >= 0.95, "{:?}", scores.templates);
    assert!(scores.fields.precision >= 0.90 && scores.fields.recall >= 0.90, "{:?}", scores.fields);
    assert!(scores.query.precision >= 0.90 && scores.query.recall >= 0.90, "{:?}", scores.query);
    // Security schemes, described without values.
    let schemes = &spec["components"]["securitySchemes"];
    assert_eq!(schemes["bearerAuth"]["scheme"], "bearer", "{schemes}");
    assert_eq!(schemes["libSessionCookie"]["in"], "cookie", "{schemes}");
    assert_eq!(schemes["csrfToken"]["in"], "header", "{schemes}");
    assert_eq!(spec["paths"]["/api/auth/login"]["post"]["security"], serde_json::json!([]));
    // The beacon and the page are not the API.
    assert!(spec["paths"].get("/api/collect").is_none());
    assert!(spec["paths"].get("/").is_none() && spec["paths"].get("/app.js").is_none());

    // The validator accepts it, also as YAML.
    let python = tool("CHAPERONE_OPENAPI_PYTHON", "target/xtask-venv/bin/python");
    let v = Command::new(&python).args(["-m", "openapi_spec_validator"]).arg(&spec_path).output().unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    let yaml_path = work.path().join("library.yaml");
    let (code, out) =
        chaperone(&["api", "learn", har_path.to_str().unwrap(), "-o", yaml_path.to_str().unwrap()], &home);
    assert_eq!(code, 0, "{out}");
    let v = Command::new(&python).args(["-m", "openapi_spec_validator"]).arg(&yaml_path).output().unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));

    // The Python client: its own tests pass.
    let py = work.path().join("py");
    let (code, out) = chaperone(
        &["api", "client", spec_path.to_str().unwrap(), "--lang", "python", "-o", py.to_str().unwrap(), "--check"],
        &home,
    );
    assert_eq!(code, 0, "{out}");
    // A script: log in, fetch a book the capture never saw, a wrong token.
    let script = format!(
        r#"
import json
from client import Client, ApiError
api = Client({base:?})
token = api.auth_login(body={{"username": {user:?}, "password": {pw:?}}})["token"]
book = Client({base:?}, token=token).get_book(12)
print(json.dumps(book))
try:
    Client({base:?}, token="wrong").get_book(12)
    print("no error")
except ApiError as e:
    print("status", e.status)
"#,
        base = server.base(),
        user = USERNAME,
        pw = PASSWORD
    );
    let out = Command::new("python3").arg("-c").arg(&script).current_dir(&py).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let mut lines = text.lines();
    let book: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(book["id"], 12);
    assert_eq!(book["title"], "Wild Seed");
    assert_eq!(lines.next(), Some("status 401"));

    // The TypeScript client type-checks and its tests pass.
    let ts = work.path().join("ts");
    let tsc = tool("CHAPERONE_TSC", "target/xtask-npm/node_modules/.bin/tsc");
    let (code, out) = chaperone(
        &[
            "api",
            "client",
            spec_path.to_str().unwrap(),
            "--lang",
            "typescript",
            "-o",
            ts.to_str().unwrap(),
            "--check",
            "--tsc",
            tsc.to_str().unwrap(),
        ],
        &home,
    );
    assert_eq!(code, 0, "{out}");

    // Refusals: a folder with the person's own files…
    let mine = work.path().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "my notes").unwrap();
    let (code, out) = chaperone(
        &["api", "client", spec_path.to_str().unwrap(), "--lang", "python", "-o", mine.to_str().unwrap()],
        &home,
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("--overwrite"), "{out}");
    assert!(!mine.join("client.py").exists());
    assert_eq!(std::fs::read_to_string(mine.join("notes.txt")).unwrap(), "my notes");
    // …and a description that would put a credential into the client.
    let mut bad = spec.clone();
    let item = bad["paths"]["/api/me"].clone();
    bad["paths"][format!("/api/tokens/{token}")] = item;
    let bad_path = work.path().join("bad.json");
    std::fs::write(&bad_path, bad.to_string()).unwrap();
    let out_dir = work.path().join("bad-client");
    let (code, out) = chaperone(
        &["api", "client", bad_path.to_str().unwrap(), "--lang", "python", "-o", out_dir.to_str().unwrap()],
        &home,
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("GENERATION_FAILED") && out.contains("client.py"), "{out}");
    assert!(!out.contains(&token), "the refusal names the file, never the value");
    assert!(!out_dir.exists(), "nothing was written");
}
