//! Secrets in Firefox: a stored canary, bound to the fixture's origin, is
//! asked for by name (the person must answer; nobody does here, so it is
//! never typed), and its value appears in no output (MCP responses, CLI
//! output, the database, the logs). The approve path is not played in
//! Firefox: WebDriver BiDi cannot click in extension pages.

use serde_json::json;
use tests::leaks::{Hit, Needles, canary};
use tests::ref_of;

use super::FxStack;
use crate::e2e::{new_tab, snapshot};

const SECRET_NAME: &str = "REPORTS_API_TOKEN";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_secret_waits_for_the_person_and_its_value_appears_in_no_output() {
    let mut s = FxStack::start(Some("approval_timeout_secs = 10\n"), false).await;
    let secret = canary();
    let origin = s.url("/").trim_end_matches('/').to_string();
    let set = s.daemon.cli(&["secret", "set", SECRET_NAME, "--site", &origin], &format!("{secret}\n")).unwrap();
    assert_eq!(set.code, 0, "secret set: {set:?}");
    let mut cli_out = format!("{}{}", set.stdout, set.stderr);

    let api = s.url("/settings/api/");
    new_tab(&mut s.mcp, &api).await;
    let page = s.page(&api).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let token = ref_of(&snap, "textbox", "API token").unwrap_or_else(|| panic!("no API token field:\n{snap}"));

    // A literal into the sensitive field is refused before dispatch.
    let r = s.mcp.call("browser_type", json!({ "ref": token, "text": "not-a-secret-1234" })).await.unwrap();
    r.expect_error("INVALID_REQUEST");

    // Typing a secret always waits for the person's answer in the
    // extension's window; nobody answers here (BiDi cannot click in
    // extension pages), so it times out and nothing is typed.
    let fill = json!({ "fields": [ { "ref": token, "value": { "secret": SECRET_NAME } } ] });
    let r = s.mcp.call("browser_fill_form", fill).await.unwrap();
    assert_eq!(r.error_code(), Some("APPROVAL_DENIED"), "{}", r.raw);
    let value = s.eval(&page, "document.getElementById('api_token').value").await;
    assert_eq!(value, json!(""), "a secret was typed without the person's answer");
    snapshot(&mut s.mcp, json!({})).await;
    s.mcp.ok("browser_extract_text", json!({})).await;
    let body = format!("control {secret}");

    for args in [&["secret", "list"][..], &["audit"], &["audit", "--json"], &["status"]] {
        let out = s.daemon.cli(args, "").unwrap();
        cli_out.push_str(&format!("{}{}", out.stdout, out.stderr));
    }
    let mcp_bytes = s.mcp.received().to_vec();
    let status = s.daemon.stop();
    assert!(status.is_some_and(|st| st.success()), "the daemon did not stop cleanly: {status:?}");

    let needles = Needles::for_secret(&secret);
    let mut hits: Vec<Hit> = Vec::new();
    let home = s.daemon.home().to_path_buf();
    for f in ["chaperone.db", "chaperone.db-wal", "chaperone.db-shm", "daemon.json", "config.toml"] {
        if let Ok(bytes) = std::fs::read(home.join(f)) {
            hits.extend(needles.find(f, &bytes));
        }
    }
    let (o, e) = s.daemon.logs();
    hits.extend(needles.find("daemon stdout", &std::fs::read(o).unwrap_or_default()));
    hits.extend(needles.find("daemon stderr", &std::fs::read(e).unwrap_or_default()));
    hits.extend(needles.find("MCP responses", &mcp_bytes));
    hits.extend(needles.find("CLI output", cli_out.as_bytes()));
    let (tree, files) = needles.find_in_tree(&home.join("logs"));
    assert!(!files.is_empty(), "no log file to scan");
    hits.extend(tree);
    // Control: the scan finds the canary where it is.
    assert!(!needles.find("control", body.as_bytes()).is_empty(), "the scan would not notice the canary");
    assert!(hits.is_empty(), "the secret leaked:\n{hits:#?}");
}
