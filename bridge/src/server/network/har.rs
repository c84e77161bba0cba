//! HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) from
//! requests that were redacted before they got here. Cookies are never
//! listed (their headers are redacted). Response bodies are captured by
//! the bodies build only (`content.text`; otherwise `content.comment`
//! says why there is none); WebSocket messages are `_webSocketMessages`
//! as Chrome DevTools writes and imports them.

use serde_json::{Value, json};
use shared::network::{Captured, Header, RequestBody, ResponseBody};

fn headers(hs: &[Header]) -> Value {
    Value::Array(hs.iter().map(|h| json!({ "name": h.name, "value": h.value })).collect())
}

fn query(url: &str) -> Value {
    let q = url.split('#').next().unwrap_or("").split_once('?').map_or("", |(_, q)| q);
    Value::Array(
        q.split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (n, v) = p.split_once('=').unwrap_or((p, ""));
                json!({ "name": n, "value": v })
            })
            .collect(),
    )
}

fn http_version(status_line: &str) -> &str {
    status_line.split(' ').next().filter(|v| v.starts_with("HTTP/")).unwrap_or("HTTP/1.1")
}

fn status_text(status_line: &str) -> String {
    status_line.splitn(3, ' ').nth(2).unwrap_or("").to_string()
}

/// One HAR entry (`id` as `_chaperoneId`).
pub(super) fn entry(id: u64, c: &Captured) -> Value {
    let started = crate::time::rfc3339_millis(c.started_ms.max(0.0) as u64);
    let mut request = json!({
        "method": c.method,
        "url": c.url,
        "httpVersion": http_version(&c.status_line),
        "cookies": [],
        "headers": headers(&c.request_headers),
        "queryString": query(&c.url),
        "headersSize": -1,
        "bodySize": 0,
    });
    match &c.request_body {
        Some(RequestBody::Raw { text, .. }) => {
            request["bodySize"] = json!(text.len());
            request["postData"] = json!({ "mimeType": c.request_mime(), "text": text });
        }
        Some(RequestBody::Form { fields }) => {
            let params: Vec<Value> =
                fields.iter().flat_map(|(k, vs)| vs.iter().map(move |v| json!({ "name": k, "value": v }))).collect();
            let text = fields
                .iter()
                .flat_map(|(k, vs)| vs.iter().map(move |v| format!("{k}={v}")))
                .collect::<Vec<_>>()
                .join("&");
            request["bodySize"] = json!(text.len());
            let mime = if c.request_mime().is_empty() { "application/x-www-form-urlencoded" } else { c.request_mime() };
            request["postData"] = json!({ "mimeType": mime, "params": params, "text": text });
        }
        None => {}
    }
    let mut content = json!({ "size": c.size().max(0), "mimeType": c.response_mime() });
    match &c.response_body {
        Some(ResponseBody::Text { text, .. }) => {
            content["size"] = json!(text.len());
            content["text"] = json!(text);
        }
        Some(ResponseBody::NotText { .. }) => content["comment"] = json!("not a text body: not captured"),
        Some(ResponseBody::Unavailable { reason }) => content["comment"] = json!(format!("not available: {reason}")),
        None => content["comment"] = json!("response bodies are not captured by the default build"),
    }
    let wait = c.duration_ms.max(0.0);
    let mut e = json!({
        "startedDateTime": started,
        "time": wait,
        "request": request,
        "response": {
            "status": c.status,
            "statusText": status_text(&c.status_line),
            "httpVersion": http_version(&c.status_line),
            "cookies": [],
            "headers": headers(&c.response_headers),
            "content": content,
            "redirectURL": c.redirect_url.clone().unwrap_or_default(),
            "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": { "send": 0, "wait": wait, "receive": 0 },
        "_resourceType": c.resource_type,
        "_chaperoneId": id,
    });
    if !c.websocket_messages.is_empty() || c.resource_type == "websocket" {
        e["_webSocketMessages"] = Value::Array(
            c.websocket_messages
                .iter()
                .map(|m| {
                    json!({
                        "type": if m.sent { "send" } else { "receive" },
                        "time": m.time,
                        "opcode": m.opcode,
                        "data": m.data,
                    })
                })
                .collect(),
        );
    }
    if let Some(err) = &c.error {
        e["response"]["_error"] = json!(err);
    }
    e
}

/// The whole HAR document.
pub(super) fn document(entries: Vec<Value>) -> Value {
    json!({
        "log": {
            "version": "1.2",
            "creator": { "name": "chaperone", "version": shared::VERSION },
            "entries": entries,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_has_every_field_har_1_2_requires() {
        let c = Captured {
            tab: 1,
            url: "http://a.example/api?page=2&q=x".into(),
            method: "POST".into(),
            resource_type: "xmlhttprequest".into(),
            status: 201,
            status_line: "HTTP/1.1 201 Created".into(),
            error: None,
            started_ms: 1_780_000_000_123.0,
            duration_ms: 12.5,
            request_headers: vec![Header { name: "Content-Type".into(), value: "application/json".into() }],
            response_headers: vec![],
            request_body: Some(RequestBody::Raw { text: "{}".into(), cut: false }),
            redirect_url: None,
            from_cache: false,
            response_body: None,
            websocket_messages: Vec::new(),
        };
        let e = entry(3, &c);
        for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
            assert!(e.get(key).is_some(), "{key}");
        }
        assert!(e["startedDateTime"].as_str().unwrap().ends_with('Z'));
        assert_eq!(e["request"]["queryString"][0], json!({"name": "page", "value": "2"}));
        assert_eq!(e["request"]["postData"]["mimeType"], "application/json");
        assert_eq!(e["response"]["statusText"], "Created");
        assert_eq!(e["response"]["content"]["size"], 0);
        let d = document(vec![e]);
        assert_eq!(d["log"]["version"], "1.2");
    }
}
