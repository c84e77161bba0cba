//! Flow files as `chaperone flow import` reads them (either format:
//! `bridge::flow_cli::parse_flow_json`, which runs the Recorder importer
//! `bridge::recorder::import` or the flow decoder, then
//! `shared::record::check_flow`), the Recorder exporter on what was
//! imported, and single steps as the store and the extension send them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::flow::{Flow, Step};
use shared::record::{RecordedStep, Recording};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    if let Ok(flow) = bridge::recorder::import(&json) {
        // What was imported exports, and the export imports again.
        let out = bridge::recorder::export(&flow);
        bridge::recorder::import(&out).expect("an exported flow imports again");
    }
    if let Ok(flow) = bridge::flow_cli::parse_flow_json(json.clone(), None) {
        let _ = bridge::flow_cli::describe(&flow);
        let _ = bridge::recorder::export(&flow);
    }
    let _ = serde_json::from_value::<Flow>(json.clone());
    let _ = serde_json::from_value::<Step>(json.clone());
    if let Ok(step) = serde_json::from_value::<RecordedStep>(json) {
        if let Ok(mut rec) = Recording::new("fuzz", true) {
            let _ = rec.push(step.clone());
        }
        if let Ok(mut rec) = Recording::new("fuzz", false) {
            let _ = rec.push(step);
        }
    }
});
