//! The `/ext` frame reader: `ExtToBridge::from_json` (the snapshot fast
//! path, then the generic enum) must accept and refuse exactly what the
//! generic enum does, with the same value, and never panic. The bridge's
//! frames and the worker → content-script messages are decoded too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::protocol::{BridgeToExt, ExtToBridge, Outcome, PageRequest};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let fast = ExtToBridge::from_json(text).ok();
    let generic = serde_json::from_str::<ExtToBridge>(text).ok();
    assert_eq!(fast, generic, "from_json and the generic enum disagree on {text:?}");
    if let Some(frame) = fast {
        // What the bridge reads, it can write back and read again.
        let again = serde_json::to_string(&frame).expect("a frame serialises");
        assert_eq!(ExtToBridge::from_json(&again).ok().as_ref(), Some(&frame), "round trip of {again}");
    }
    let _ = serde_json::from_str::<BridgeToExt>(text);
    let _ = serde_json::from_str::<PageRequest>(text);
    let _ = serde_json::from_str::<Outcome>(text);
    let _ = shared::protocol::snapshot_outcome_from_json(text);
});
