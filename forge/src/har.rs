//! The HAR 1.2 subset the learner reads. Unknown fields are ignored (every
//! browser adds its own `_underscored` ones); missing optional parts are
//! empty.

use serde::Deserialize;

use crate::Error;

#[derive(Debug, Clone, Deserialize)]
pub struct Har {
    pub log: Log,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Log {
    /// The entries this crate could read; an entry it cannot (no
    /// `request`, a field of the wrong type) is left out, not fatal:
    /// exporters (k6, Fiddler, Firefox, proxies) each write their own
    /// variant.
    #[serde(default, deserialize_with = "lenient_entries")]
    pub entries: Vec<Entry>,
}

/// One element of `entries`: read as an [`Entry`] when it is one.
#[derive(Deserialize)]
#[serde(untagged)]
enum MaybeEntry {
    Entry(Box<Entry>),
    Other(serde::de::IgnoredAny),
}

fn lenient_entries<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Entry>, D::Error> {
    let all: Vec<MaybeEntry> = Deserialize::deserialize(d)?;
    Ok(all
        .into_iter()
        .filter_map(|e| match e {
            MaybeEntry::Entry(e) => Some(*e),
            MaybeEntry::Other(_) => None,
        })
        .collect())
}

/// A string that may be written as `null` (read as "").
fn string_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    pub request: Request,
    /// Absent in request-only captures (k6, load-test tools): status 0,
    /// left out like a failed request.
    #[serde(default)]
    pub response: Response,
    /// Chromium's `_resourceType` (`xhr`, `fetch`, `document`, `image`…),
    /// when the exporter wrote it.
    #[serde(default, rename = "_resourceType")]
    pub resource_type: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub method: String,
    pub url: String,
    #[serde(default)]
    pub headers: Vec<Pair>,
    #[serde(default)]
    pub query_string: Vec<Pair>,
    #[serde(default)]
    pub post_data: Option<PostData>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Response {
    pub status: i64,
    #[serde(default)]
    pub headers: Vec<Pair>,
    #[serde(default)]
    pub content: Option<Content>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Pair {
    pub name: String,
    #[serde(default, deserialize_with = "string_or_null")]
    pub value: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PostData {
    #[serde(default)]
    pub mime_type: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub params: Vec<Pair>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    #[serde(default)]
    pub mime_type: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub encoding: Option<String>,
}

/// Parses a HAR document. The error says what was wrong, not the content.
pub fn parse(text: &str) -> Result<Har, Error> {
    serde_json::from_str(text)
        .map_err(|e| Error::BadHar(format!("line {} column {}: {}", e.line(), e.column(), kind(&e))))
}

fn kind(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Io => "read error",
        serde_json::error::Category::Syntax => "not valid JSON",
        serde_json::error::Category::Data => "JSON that is not a HAR (expected {log: {entries: [...]}})",
        serde_json::error::Category::Eof => "the file ends too early",
    }
}

impl Pair {
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

/// The first header of that name (case-insensitive).
pub fn header<'a>(headers: &'a [Pair], name: &str) -> Option<&'a str> {
    headers.iter().find(|h| h.is(name)).map(|h| h.value.as_str())
}

/// The media type without parameters, lowercased (`application/json`).
pub fn media_type(ct: &str) -> String {
    ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether a media type is JSON (`application/json`, `…+json`).
pub fn is_json(media: &str) -> bool {
    media == "application/json" || media.ends_with("+json") || media == "text/json"
}

impl Entry {
    /// The response body as text (base64 bodies are skipped: the API
    /// answers that matter are JSON text).
    pub fn response_text(&self) -> Option<&str> {
        let c = self.response.content.as_ref()?;
        if c.encoding.as_deref().is_some_and(|e| e.eq_ignore_ascii_case("base64")) {
            return None;
        }
        c.text.as_deref()
    }

    /// The response's media type: the header, else `content.mimeType`.
    pub fn response_media(&self) -> String {
        let from_header = header(&self.response.headers, "content-type").map(media_type);
        match from_header {
            Some(m) if !m.is_empty() => m,
            _ => self.response.content.as_ref().map(|c| media_type(&c.mime_type)).unwrap_or_default(),
        }
    }

    /// The request body's media type.
    pub fn request_media(&self) -> String {
        let pd = self.request.post_data.as_ref().map(|p| media_type(&p.mime_type)).unwrap_or_default();
        if pd.is_empty() {
            header(&self.request.headers, "content-type").map(media_type).unwrap_or_default()
        } else {
            pd
        }
    }

    /// The response body parsed as JSON, if it is JSON.
    pub fn response_json(&self) -> Option<serde_json::Value> {
        if !is_json(&self.response_media()) {
            return None;
        }
        serde_json::from_str(self.response_text()?).ok()
    }

    /// The request body parsed as JSON, if it is JSON.
    pub fn request_json(&self) -> Option<serde_json::Value> {
        if !is_json(&self.request_media()) {
            return None;
        }
        serde_json::from_str(self.request.post_data.as_ref()?.text.as_deref()?).ok()
    }

    /// Form fields of an `application/x-www-form-urlencoded` body.
    pub fn request_form(&self) -> Option<Vec<(String, String)>> {
        if self.request_media() != "application/x-www-form-urlencoded" {
            return None;
        }
        let pd = self.request.post_data.as_ref()?;
        if !pd.params.is_empty() {
            return Some(pd.params.iter().map(|p| (decode(&p.name), decode(&p.value))).collect());
        }
        let text = pd.text.as_deref()?;
        Some(url::form_urlencoded::parse(text.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
    }
}

fn decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
}
