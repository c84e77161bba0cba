//! A DevTools-style HAR recorded through CDP's Network domain, as a
//! browser's "Save all as HAR" writes it: request and response headers
//! (with `Cookie`, `Authorization` and `Set-Cookie` from the extra-info
//! events), query strings, request bodies, response bodies as text and
//! Chromium's `_resourceType`. It holds credentials, like the real thing.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use serde_json::{Value, json};

use crate::{Cdp, CdpSession};

#[derive(Default, Clone)]
struct Pending {
    request: Value,
    extra_request_headers: Option<Value>,
    response: Option<Value>,
    extra_response_headers: Option<Value>,
    resource_type: String,
    done: bool,
}

/// Records the network traffic of one page until [`HarRecorder::finish`].
pub struct HarRecorder {
    page: CdpSession,
    entries: Arc<Mutex<BTreeMap<String, Pending>>>,
    order: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

fn headers(v: &Value) -> Vec<Value> {
    v.as_object()
        .map(|m| {
            m.iter()
                .flat_map(|(k, v)| {
                    // Chromium joins repeated headers (Set-Cookie) with '\n'.
                    v.as_str().unwrap_or("").split('\n').map(|x| json!({ "name": k, "value": x })).collect::<Vec<_>>()
                })
                .collect()
        })
        .unwrap_or_default()
}

impl HarRecorder {
    /// Enables the Network domain on `page` and starts recording.
    pub async fn start(cdp: &Cdp, page: &CdpSession) -> Result<HarRecorder> {
        let mut events = cdp.events();
        page.call("Network.enable", json!({ "maxPostDataSize": 1 << 20 })).await?;
        let entries: Arc<Mutex<BTreeMap<String, Pending>>> = Arc::default();
        let order: Arc<Mutex<Vec<String>>> = Arc::default();
        let (e2, o2, sid) = (entries.clone(), order.clone(), page.session_id.clone());
        let task = tokio::spawn(async move {
            while let Ok(ev) = events.recv().await {
                if ev["sessionId"].as_str() != Some(sid.as_str()) {
                    continue;
                }
                let p = &ev["params"];
                let Some(id) = p["requestId"].as_str().map(str::to_string) else { continue };
                let mut map = e2.lock().unwrap_or_else(|x| x.into_inner());
                match ev["method"].as_str().unwrap_or("") {
                    "Network.requestWillBeSent" => {
                        o2.lock().unwrap_or_else(|x| x.into_inner()).push(id.clone());
                        let e = map.entry(id).or_default();
                        e.request = p["request"].clone();
                        e.resource_type = p["type"].as_str().unwrap_or("Other").to_ascii_lowercase();
                    }
                    "Network.requestWillBeSentExtraInfo" => {
                        map.entry(id).or_default().extra_request_headers = Some(p["headers"].clone());
                    }
                    "Network.responseReceived" => {
                        map.entry(id).or_default().response = Some(p["response"].clone());
                    }
                    "Network.responseReceivedExtraInfo" => {
                        map.entry(id).or_default().extra_response_headers = Some(p["headers"].clone());
                    }
                    "Network.loadingFinished" | "Network.loadingFailed" => {
                        map.entry(id).or_default().done = true;
                    }
                    _ => {}
                }
            }
        });
        Ok(HarRecorder { page: page.clone(), entries, order, task })
    }

    /// Stops recording, fetches the response bodies and returns the HAR.
    pub async fn finish(self) -> Result<Value> {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        self.task.abort();
        let ids: Vec<String> = self.order.lock().unwrap_or_else(|x| x.into_inner()).clone();
        let mut out = Vec::new();
        for id in ids {
            let p = self.entries.lock().unwrap_or_else(|x| x.into_inner()).get(&id).cloned().unwrap_or_default();
            let Some(resp) = p.response.clone() else { continue };
            let body = self.page.call("Network.getResponseBody", json!({ "requestId": id })).await.ok();
            let (text, b64) = body
                .map(|b| (b["body"].as_str().unwrap_or("").to_string(), b["base64Encoded"].as_bool().unwrap_or(false)))
                .unwrap_or_default();
            let req = &p.request;
            let url = req["url"].as_str().unwrap_or("").to_string();
            let query: Vec<Value> = url::Url::parse(&url)
                .map(|u| u.query_pairs().map(|(k, v)| json!({ "name": k, "value": v })).collect())
                .unwrap_or_default();
            let req_headers = headers(p.extra_request_headers.as_ref().unwrap_or(&req["headers"]));
            let resp_headers = headers(p.extra_response_headers.as_ref().unwrap_or(&resp["headers"]));
            let mut request = json!({
                "method": req["method"], "url": url, "httpVersion": "HTTP/1.1",
                "headers": req_headers, "queryString": query, "cookies": [], "headersSize": -1, "bodySize": 0,
            });
            if let Some(pd) = req["postData"].as_str() {
                let ct = req["headers"]
                    .as_object()
                    .and_then(|m| m.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-type")))
                    .and_then(|(_, v)| v.as_str())
                    .unwrap_or("")
                    .to_string();
                request["postData"] = json!({ "mimeType": ct, "text": pd });
                request["bodySize"] = json!(pd.len());
            }
            let mut content = json!({ "size": text.len(), "mimeType": resp["mimeType"], "text": text });
            if b64 {
                content["encoding"] = json!("base64");
            }
            out.push(json!({
                "startedDateTime": "2026-12-04T15:00:00.000Z",
                "time": 1,
                "request": request,
                "response": {
                    "status": resp["status"], "statusText": resp["statusText"], "httpVersion": "HTTP/1.1",
                    "headers": resp_headers, "cookies": [], "content": content,
                    "redirectURL": "", "headersSize": -1, "bodySize": -1,
                },
                "cache": {}, "timings": { "send": 0, "wait": 1, "receive": 0 },
                "_resourceType": p.resource_type,
            }));
        }
        Ok(json!({ "log": { "version": "1.2", "creator": { "name": "chaperone-tests", "version": "1" },
                            "pages": [], "entries": out } }))
    }
}

/// One request as Chrome DevTools' own HAR importer reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    pub method: String,
    pub url: String,
    pub status: i64,
}

/// Opens `har_text` with Chrome DevTools' own importer, the code behind
/// the Network panel's "Import HAR file" (`models/har/har.js` of the
/// frontend bundled in Chromium: `HARRoot` reads the file,
/// `Importer.requestsFromHARLog` makes the panel's requests), in a
/// `devtools://` page of `cdp`'s browser. An error when the frontend
/// refuses the file.
pub async fn devtools_import(cdp: &Cdp, har_text: &str) -> Result<Vec<Imported>> {
    let page = cdp.new_page("devtools://devtools/bundled/devtools_app.html").await?;
    let literal = serde_json::to_string(har_text)?;
    let js = format!(
        "(async () => {{ try {{ const m = await import('./models/har/har.js'); \
         const log = new m.HARFormat.HARRoot(JSON.parse({literal})).log; \
         const reqs = m.Importer.Importer.requestsFromHARLog(log); \
         return {{ ok: reqs.map(r => [r.requestMethod, r.url(), r.statusCode]) }}; \
         }} catch (e) {{ return {{ error: String(e) }}; }} }})()"
    );
    let v = page.evaluate(&js).await;
    let _ = cdp.close_target(&page.target_id).await;
    let v = v?;
    if let Some(e) = v.get("error") {
        anyhow::bail!("Chrome DevTools' HAR importer refused the file: {e}");
    }
    let rows = v["ok"].as_array().ok_or_else(|| anyhow::anyhow!("the importer answered {v}"))?;
    Ok(rows
        .iter()
        .map(|r| Imported {
            method: r[0].as_str().unwrap_or_default().to_string(),
            url: r[1].as_str().unwrap_or_default().to_string(),
            status: r[2].as_i64().unwrap_or(-1),
        })
        .collect())
}
