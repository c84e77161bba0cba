//! The HTTP client of a local model server. One `POST` per call, JSON in
//! and out, no streaming, no proxy (a proxy would carry page data off the
//! machine), no redirects (a loopback server could point elsewhere), every
//! call bounded by `timeout_secs`. Any failure — refused, slow, an HTTP
//! error, a reply without content — is `MODEL_UNAVAILABLE`; details go to
//! the log only.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shared::error::{ErrorCode, WireError};
use shared::model::prompt::ModelRequest;

use super::{DEFAULT_TIMEOUT_SECS, ModelSection, Provider};

/// Longest reply read from the model server.
const MAX_REPLY_BYTES: usize = 256 * 1024;

pub struct ModelClient {
    http: reqwest::Client,
    endpoint: String,
    provider: Provider,
    name: String,
    timeout: Duration,
}

/// The model's answer text and how long it took.
#[derive(Debug, Clone)]
pub struct Reply {
    pub text: String,
    pub millis: u64,
    /// Prompt tokens as the server counted them, when it says.
    pub prompt_tokens: Option<u64>,
}

/// The body of one request: what goes to the server, all of it.
pub fn body(provider: Provider, name: &str, req: &ModelRequest) -> Value {
    let messages = json!([
        { "role": "system", "content": req.system },
        { "role": "user", "content": req.user },
    ]);
    match provider {
        Provider::Ollama => json!({
            "model": name,
            "messages": messages,
            "stream": false,
            "format": req.schema,
            "options": { "temperature": 0 },
        }),
        Provider::Openai => json!({
            "model": name,
            "messages": messages,
            "temperature": 0,
            "max_tokens": 64,
            "response_format": {
                "type": "json_schema",
                "json_schema": { "name": "pick", "strict": true, "schema": req.schema },
            },
        }),
    }
}

fn unavailable(what: &str) -> WireError {
    WireError::new(ErrorCode::ModelUnavailable, format!("the local model server {what}; nothing was done"))
}

impl ModelClient {
    pub fn new(section: &ModelSection) -> Result<Self, String> {
        let base = shared::model::loopback_url(&section.url)?;
        let base = base.as_str().trim_end_matches('/');
        let endpoint = match section.provider {
            Provider::Ollama => format!("{base}/api/chat"),
            Provider::Openai => format!("{}/v1/chat/completions", base.trim_end_matches("/v1")),
        };
        let timeout = Duration::from_secs(u64::from(section.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS)));
        let http = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| format!("cannot build the model client: {e}"))?;
        Ok(ModelClient { http, endpoint, provider: section.provider, name: section.name.clone(), timeout })
    }

    pub async fn ask(&self, req: &ModelRequest) -> Result<Reply, WireError> {
        let started = Instant::now();
        let send = self.http.post(&self.endpoint).json(&body(self.provider, &self.name, req)).send();
        // reqwest's timeout covers the body too; this bounds everything.
        let response = match tokio::time::timeout(self.timeout, send).await {
            Err(_) => return Err(unavailable("did not answer in time")),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, endpoint = %self.endpoint, "model server unreachable");
                return Err(unavailable(if e.is_timeout() { "did not answer in time" } else { "is not reachable" }));
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        let bytes = match tokio::time::timeout(self.timeout, response.bytes()).await {
            Ok(Ok(b)) => b,
            _ => return Err(unavailable("did not finish its answer in time")),
        };
        if !status.is_success() {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).to_string();
            tracing::warn!(status = status.as_u16(), body = %head, "model server error");
            return Err(unavailable(&format!("answered HTTP {}", status.as_u16())));
        }
        if bytes.len() > MAX_REPLY_BYTES {
            return Err(unavailable("sent an answer too long to read"));
        }
        let v: Value = serde_json::from_slice(&bytes).map_err(|_| unavailable("sent something other than JSON"))?;
        let (text, tokens) = match self.provider {
            Provider::Ollama => (v["message"]["content"].as_str(), v["prompt_eval_count"].as_u64()),
            Provider::Openai => (v["choices"][0]["message"]["content"].as_str(), v["usage"]["prompt_tokens"].as_u64()),
        };
        let Some(text) = text else {
            return Err(unavailable("sent a reply without an answer"));
        };
        let millis = started.elapsed().as_millis() as u64;
        tracing::info!(millis, model = %self.name, "model answered");
        Ok(Reply { text: text.to_string(), millis, prompt_tokens: tokens })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> ModelRequest {
        ModelRequest { system: "S".into(), user: "U".into(), schema: json!({"type": "object"}) }
    }

    #[test]
    fn each_provider_gets_the_schema_its_way() {
        let o = body(Provider::Ollama, "m", &req());
        assert_eq!(o["format"], json!({"type": "object"}));
        assert_eq!(o["stream"], json!(false));
        let a = body(Provider::Openai, "m", &req());
        assert_eq!(a["response_format"]["type"], json!("json_schema"));
        assert_eq!(a["response_format"]["json_schema"]["schema"], json!({"type": "object"}));
        assert_eq!(a["messages"][0]["content"], json!("S"));
    }

    #[tokio::test]
    async fn a_server_that_is_down_is_model_unavailable_quickly() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let section = ModelSection {
            provider: Provider::Openai,
            url: format!("http://127.0.0.1:{port}/v1"),
            name: "m".into(),
            max_calls_per_action: None,
            max_calls_per_session: None,
            timeout_secs: Some(2),
            traces: None,
        };
        let c = ModelClient::new(&section).unwrap();
        assert!(c.endpoint.ends_with(&format!("{port}/v1/chat/completions")), "{}", c.endpoint);
        let started = Instant::now();
        assert_eq!(c.ask(&req()).await.unwrap_err().code, ErrorCode::ModelUnavailable);
        assert!(started.elapsed() < Duration::from_secs(3));
    }
}
