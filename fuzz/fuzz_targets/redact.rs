//! `shared::redact` on any text, URL, header and JSON value: no panic, and
//! redacting JSON keeps its shape (same nesting, same keys).
#![no_main]

use libfuzzer_sys::fuzz_target;

fn shape(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => {
            let inner: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{}", shape(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        serde_json::Value::Array(a) => format!("[{}]", a.iter().map(shape).collect::<Vec<_>>().join(",")),
        _ => ".".into(),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = shared::redact::redact_text(&text);
    let _ = shared::redact::redact_url(&text);
    let (name, value) = text.split_once(':').unwrap_or(("authorization", &text));
    let _ = shared::redact::redact_header(name, value);
    let _ = shared::redact::is_sensitive_key(name);
    if let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(data) {
        let before = shape(&v);
        shared::redact::redact_json(&mut v);
        assert_eq!(shape(&v), before, "redact_json changed the shape");
    }
});
