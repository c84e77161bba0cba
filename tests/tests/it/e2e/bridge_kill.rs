//! The bridge killed with SIGKILL in a burst of actions (issue 14,
//! "Restarts and crashes"), at a random moment, round after round: the
//! audit database stays sound (`PRAGMA integrity_check`), every action the
//! agent was told had run has its audit row, the extension brings a new
//! daemon up by itself (the native host's bootstrap) and reconnects, and
//! the agent goes on with a new session. 3 rounds here;
//! `CHAPERONE_KILL_ROUNDS=30` for the long run.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;
use shared::protocol::DaemonInfo;
use tests::{Mcp, Stack, poll, process_alive, ref_of, send_signal};

use super::code;

fn daemon_info(home: &Path) -> Option<DaemonInfo> {
    serde_json::from_str(&std::fs::read_to_string(home.join("daemon.json")).ok()?).ok()
}

/// A pseudo-random number from the clock (xorshift of the nanoseconds).
fn random(round: u64) -> u64 {
    let mut x = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1) ^ round;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// Rows of `client` (the round's MCP client) with `tool`.
fn rows(home: &Path, client: &str, tool: &str) -> u64 {
    let db = rusqlite::Connection::open(home.join("chaperone.db")).expect("open chaperone.db");
    db.query_row("SELECT count(*) FROM audit WHERE client = ?1 AND tool = ?2", [client, tool], |r| r.get(0))
        .expect("count audit rows")
}

fn integrity(home: &Path) -> String {
    let db = rusqlite::Connection::open(home.join("chaperone.db")).expect("open chaperone.db");
    db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("integrity_check")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_killed_mid_burst_loses_no_acknowledged_row() {
    let rounds: u64 = std::env::var("CHAPERONE_KILL_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let s = Stack::start().await.expect("start the stack");
    let home = s.daemon.home().to_path_buf();
    let token = std::fs::read_to_string(home.join("mcp-token")).expect("mcp-token").trim().to_string();
    let (mut acked_total, mut rows_total, mut in_flight_errors) = (0u64, 0u64, 0u64);
    let mut reconnects = Vec::new();
    for round in 0..rounds {
        let info = daemon_info(&home).expect("daemon.json");
        let client = format!("kill-round-{round}");
        let mut mcp = Mcp::connect_as(info.port, &token, &client).await.expect("connect to the daemon");
        let shop = s.url(&format!("/shop/index.html?round={round}"));
        let r = mcp.call("browser_tabs", json!({ "action": "new", "url": shop })).await.expect("browser_tabs new");
        assert_eq!(code(&r), "", "round {round}: the agent cannot go on after the restart: {}", r.raw);
        let snap = mcp.ok("browser_snapshot", json!({})).await.snapshot();
        let add = ref_of(&snap, "button", "Add to cart").expect("Add to cart in the snapshot");

        // The burst, and SIGKILL at a random moment in it.
        let kill_after = Duration::from_millis(150 + random(round) % 1200);
        let burst = async {
            let mut acked = 0u64;
            let mut lost = None;
            for _ in 0..10_000 {
                match mcp.call("browser_click", json!({ "ref": add })).await {
                    Ok(r) if code(&r).is_empty() => acked += 1,
                    Ok(r) => panic!("round {round}: a click failed while the bridge lived: {}", r.raw),
                    Err(e) => {
                        lost = Some(format!("{e:#}"));
                        break;
                    }
                }
            }
            (acked, lost)
        };
        let killer = async {
            tokio::time::sleep(kill_after).await;
            assert!(send_signal(info.pid, "KILL"), "round {round}: SIGKILL the daemon");
            Instant::now()
        };
        let ((acked, lost), killed_at) = tokio::join!(burst, killer);
        assert!(lost.is_some(), "round {round}: the burst ended without the bridge going away");
        in_flight_errors += 1;
        let gone = poll(Duration::from_secs(5), Duration::from_millis(20), || async {
            (!process_alive(info.pid)).then_some(())
        })
        .await;
        assert!(gone.is_some(), "round {round}: daemon {} still alive after SIGKILL", info.pid);

        // Nothing acknowledged is missing, and the database is sound.
        assert_eq!(integrity(&home), "ok", "round {round}");
        let clicks = rows(&home, &client, "browser_click");
        assert!(
            clicks >= acked && clicks <= acked + 1,
            "round {round}: {acked} clicks acknowledged, {clicks} audit rows"
        );
        acked_total += acked;
        rows_total += clicks;

        // The extension starts a new daemon (native host) and reconnects.
        let back = poll(Duration::from_secs(60), Duration::from_millis(100), || async {
            let now = daemon_info(&home).filter(|i| i.pid != info.pid && process_alive(i.pid))?;
            let status: serde_json::Value = reqwest::Client::new()
                .get(format!("http://127.0.0.1:{}/status", now.port))
                .bearer_auth(&token)
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            (!status["browsers"].as_array()?.is_empty()).then_some(())
        })
        .await;
        assert!(back.is_some(), "round {round}: no new daemon with the extension connected within 60 s");
        let took = killed_at.elapsed();
        eprintln!("round {round}: killed after {kill_after:?}, {acked} acknowledged, {clicks} rows, back in {took:?}");
        reconnects.push(took);
    }
    reconnects.sort();
    eprintln!(
        "{rounds} rounds: {acked_total} acknowledged clicks, {rows_total} audit rows checked, {in_flight_errors} calls lost in flight; \
         reconnect min {:?} median {:?} max {:?}",
        reconnects[0],
        reconnects[reconnects.len() / 2],
        reconnects[reconnects.len() - 1]
    );
    // Stop the daemon the native host started last.
    if let Some(i) = daemon_info(&home) {
        send_signal(i.pid, "TERM");
    }
}
