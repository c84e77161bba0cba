//! The person's stored secrets masked by value in what the agent reads of
//! a page (`server::known_secrets`): a page that shows a stored value — as
//! a button's name, its title, its text, base64 of it, split in two — is
//! read with `{secret:NAME}` there, in the text and in the structured
//! data, and the store written from "another process" (a second handle on
//! the same files, as `chaperone secret set` is) is followed on the next
//! call.

use std::sync::{Arc, Mutex};

use crate::common::*;
use bridge::home::Home;
use bridge::secrets::{SecretStore, SecretValue};
use serde_json::json;
use shared::protocol::{Command, CommandResult, Outcome};
use shared::snapshot::{Node, PageSnapshot, PageText};

const CANARY: &str = "Sesame-Canary-4417-xyz";
/// `CANARY` in base64, as a page's data attribute might show it.
const CANARY_BASE64: &str = "U2VzYW1lLUNhbmFyeS00NDE3LXh5eg==";
const LATER: &str = "Later-Value-8812-qq";

/// A fake extension like `browser_like`, whose page shows `shown` in a
/// node's name, the title, a text block and the visible text.
fn showing(shown: Arc<Mutex<Vec<String>>>) -> Responder {
    let browser = browser_like();
    Box::new(move |cmd| {
        let shown = shown.lock().unwrap().clone();
        let result = match cmd {
            Command::Snapshot { .. } => CommandResult::Snapshot {
                snapshot: PageSnapshot {
                    url: "http://127.0.0.1:9/keys".into(),
                    title: format!("Your key {}", shown[0]),
                    challenge: None,
                    signals: None,
                    partial: false,
                    nodes: shown
                        .iter()
                        .enumerate()
                        .map(|(i, s)| Node {
                            depth: 0,
                            role: "button".into(),
                            name: format!("Copy {s}"),
                            element_ref: Some(format!("e{}", i + 1)),
                            ..Node::default()
                        })
                        .collect(),
                },
            },
            Command::ExtractText { .. } => CommandResult::Text {
                text: PageText {
                    url: "http://127.0.0.1:9/keys".into(),
                    title: "Keys".into(),
                    blocks: vec![
                        format!("data-k={CANARY_BASE64}"),
                        "first Sesame-Canary,".into(),
                        "then -4417-xyz".into(),
                    ],
                },
            },
            _ => return browser(cmd),
        };
        Some(Outcome::Ok(result))
    })
}

#[tokio::test]
async fn a_stored_secret_a_page_shows_is_read_as_its_name() {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path());
    let daemon_store = SecretStore::open(&home).unwrap();
    daemon_store.set("CANARY", SecretValue::new(CANARY.into()), &[]).unwrap();
    let bridge = Bridge::start_with(move |c| c.secrets = Some(Arc::new(daemon_store))).await;
    let shown = Arc::new(Mutex::new(vec![CANARY.to_string(), LATER.to_string()]));
    let _ext = FakeExt::connect(&bridge, showing(shown)).await;
    let client = mcp_client(&bridge).await;
    let r = call_tool(&client, "browser_tabs", json!({"action": "new", "url": "http://127.0.0.1:9/keys"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");

    let r = call_tool(&client, "browser_snapshot", json!({})).await;
    let text = result_text(&r);
    let page = shared::untrusted::unwrap_text(&text).expect("the untrusted block stays whole");
    assert!(page.contains("button \"Copy {secret:CANARY}\" [e1]"), "{page}");
    assert!(page.contains(LATER), "not a stored secret (yet): {page}");
    let data = r.structured_content.clone().unwrap();
    assert_eq!(data["untrustedWebContent"], true);
    assert_eq!(data["data"]["title"], "Your key {secret:CANARY}", "{data}");
    assert!(!format!("{r:?}").contains(CANARY));

    let r = call_tool(&client, "browser_extract_text", json!({})).await;
    let all = format!("{r:?}");
    assert!(!all.contains(CANARY_BASE64) && !all.contains("Sesame-Canary") && !all.contains("-4417-xyz"), "{all}");
    assert!(result_text(&r).contains("data-k={secret:CANARY}"), "{}", result_text(&r));

    // `chaperone secret set` from another process: the next call sees it.
    let cli = SecretStore::open(&home).unwrap();
    cli.set("LATER", SecretValue::new(LATER.into()), &[]).unwrap();
    let r = call_tool(&client, "browser_snapshot", json!({})).await;
    let text = result_text(&r);
    assert!(text.contains("\"Copy {secret:LATER}\" [e2]") && !text.contains(LATER), "{text}");
    // Removed: its value is an ordinary string again.
    cli.remove("CANARY").unwrap();
    let r = call_tool(&client, "browser_snapshot", json!({})).await;
    assert!(result_text(&r).contains(CANARY), "{}", result_text(&r));
    let logs = String::from_utf8_lossy(&logs().lock().unwrap()).to_string();
    assert!(!logs.contains(LATER) && !logs.contains(CANARY_BASE64), "values are never logged");
}
