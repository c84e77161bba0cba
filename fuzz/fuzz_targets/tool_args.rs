//! Tool arguments as the bridge reads them (`serde_json::from_value` into
//! each tool's `shared::tools` type, unknown fields refused), then the pure
//! checks the tools run before anything reaches the browser: URLs, refs,
//! secret names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use shared::tools::*;

fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
    serde_json::from_value(v.clone()).ok()
}

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    if !v.is_object() {
        return;
    }
    if let Some(a) = parse::<NavigateArgs>(&v) {
        if let Some(url) = a.url.as_deref() {
            let _ = shared::url::validate_navigation_url(url);
        }
    }
    if let Some(a) = parse::<TabsArgs>(&v) {
        if let Some(url) = a.url.as_deref() {
            let _ = shared::url::validate_navigation_url(url);
        }
    }
    let _ = parse::<SnapshotArgs>(&v);
    let _ = parse::<ExtractTextArgs>(&v);
    let _ = parse::<StatusArgs>(&v);
    if let Some(a) = parse::<ClickArgs>(&v) {
        let _ = is_valid_ref(&a.element_ref);
    }
    let _ = parse::<TypeArgs>(&v);
    let _ = parse::<FillFormArgs>(&v);
    let _ = parse::<SelectOptionArgs>(&v);
    let _ = parse::<PressKeyArgs>(&v);
    let _ = parse::<ScrollArgs>(&v);
    let _ = parse::<HoverArgs>(&v);
    let _ = parse::<WaitForArgs>(&v);
    let _ = parse::<ScreenshotArgs>(&v);
    let _ = parse::<HandoffArgs>(&v);
    let _ = parse::<UploadFileArgs>(&v);
    let _ = parse::<DownloadsArgs>(&v);
    let _ = parse::<FlowListArgs>(&v);
    let _ = parse::<FlowNameArgs>(&v);
    let _ = parse::<FlowRunArgs>(&v);
    for s in v.as_object().into_iter().flat_map(|o| o.values()).filter_map(Value::as_str) {
        let _ = is_valid_ref(s);
        let _ = shared::names::is_valid_secret_name(s);
        let _ = shared::url::validate_navigation_url(s);
    }
});
