//! JSON Schemas merged across every sample, never from the first one.
//!
//! Rules (table tests: `fixtures/forge/schemas.json`):
//! - Types seen are unioned; `null` next to one type gives
//!   `type: [T, "null"]`, several other types an `anyOf`; integers seen
//!   next to fractions become `number`.
//! - An object property is `required` only when present in every object
//!   sample.
//! - Arrays merge every item of every sample into one `items` schema.
//! - A string gets a `format` (uuid, date, date-time, email, uri) only when
//!   every sample has it.
//! - A string becomes an `enum` when few distinct values
//!   ([`ENUM_MAX_VALUES`]) were seen over many samples
//!   ([`ENUM_MIN_SAMPLES`], each value at least twice on average x3), never
//!   under a sensitive key, never with a value that is a credential, an
//!   unknown header's value or an opaque identifier
//!   (`Credentials::may_show`), never for formatted strings.
//! - Objects and arrays nested deeper than [`MAX_DEPTH`] levels are not
//!   described (`{}`), so a hostile answer cannot make a description
//!   deeper than a JSON reader accepts.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use shared::redact;

use crate::credentials::Credentials;
use crate::segment;

pub const ENUM_MAX_VALUES: usize = 6;
pub const ENUM_MIN_SAMPLES: u64 = 6;
/// Distinct string values remembered per place; more means "not an enum".
const MAX_TRACKED_VALUES: usize = 32;
/// Levels of objects and arrays described; deeper ones are `{}`.
pub const MAX_DEPTH: usize = 24;

#[derive(Debug, Clone, Default)]
pub struct Shape {
    /// Values merged here (absences are not counted).
    pub seen: u64,
    null: u64,
    boolean: u64,
    integer: u64,
    number: u64,
    string: Option<Strings>,
    array: Option<Box<Shape>>,
    arrays: u64,
    object: Option<BTreeMap<String, Shape>>,
    objects: u64,
    /// Objects and arrays past [`MAX_DEPTH`], not looked into.
    deep: u64,
}

#[derive(Debug, Clone, Default)]
struct Strings {
    count: u64,
    values: BTreeMap<String, u64>,
    overflow: bool,
    formats: BTreeMap<&'static str, u64>,
}

impl Shape {
    pub fn of(v: &Value) -> Shape {
        let mut s = Shape::default();
        s.add(v);
        s
    }

    /// Merges one more sample.
    pub fn add(&mut self, v: &Value) {
        self.add_at(v, 0);
    }

    fn add_at(&mut self, v: &Value, depth: usize) {
        self.seen += 1;
        if depth >= MAX_DEPTH && (v.is_array() || v.is_object()) {
            self.deep += 1;
            return;
        }
        match v {
            Value::Null => self.null += 1,
            Value::Bool(_) => self.boolean += 1,
            Value::Number(n) => {
                if n.is_i64() || n.is_u64() {
                    self.integer += 1
                } else {
                    self.number += 1
                }
            }
            Value::String(s) => {
                let st = self.string.get_or_insert_with(Strings::default);
                st.count += 1;
                if let Some(f) = segment::format(s) {
                    *st.formats.entry(f).or_insert(0) += 1;
                }
                if !st.overflow {
                    if st.values.len() < MAX_TRACKED_VALUES || st.values.contains_key(s) {
                        *st.values.entry(s.clone()).or_insert(0) += 1;
                    } else {
                        st.overflow = true;
                        st.values.clear();
                    }
                }
            }
            Value::Array(items) => {
                self.arrays += 1;
                let inner = self.array.get_or_insert_with(Box::default);
                items.iter().for_each(|i| inner.add_at(i, depth + 1));
            }
            Value::Object(m) => {
                self.objects += 1;
                let props = self.object.get_or_insert_with(BTreeMap::new);
                for (k, v) in m {
                    props.entry(k.clone()).or_default().add_at(v, depth + 1);
                }
            }
        }
    }

    /// Top-level keys of an object (or of the objects in an array), for
    /// telling shapes apart.
    pub fn keys(&self) -> Vec<String> {
        if let Some(o) = &self.object {
            return o.keys().cloned().collect();
        }
        if let Some(a) = &self.array
            && let Some(o) = &a.object
        {
            return o.keys().map(|k| format!("[]{k}")).collect();
        }
        Vec::new()
    }

    /// The JSON Schema of everything merged. `key` is the property this
    /// schema describes (for the sensitive-key rule).
    pub fn to_schema(&self, key: Option<&str>, creds: &Credentials) -> Value {
        let mut alts: Vec<Value> = Vec::new();
        if self.boolean > 0 {
            alts.push(json!({"type": "boolean"}));
        }
        if self.number > 0 {
            alts.push(json!({"type": "number"}));
        } else if self.integer > 0 {
            alts.push(json!({"type": "integer"}));
        }
        if let Some(st) = &self.string {
            alts.push(st.to_schema(key, creds));
        }
        if let Some(items) = &self.array {
            let it = if items.seen == 0 { json!({}) } else { items.to_schema(key, creds) };
            alts.push(json!({"type": "array", "items": it}));
        }
        if let Some(props) = &self.object {
            let mut p = Map::new();
            let mut required = Vec::new();
            for (k, s) in props {
                if creds.is_credential(k) {
                    continue;
                }
                p.insert(k.clone(), s.to_schema(Some(k), creds));
                if s.seen == self.objects {
                    required.push(Value::String(k.clone()));
                }
            }
            let mut o = Map::new();
            o.insert("type".into(), json!("object"));
            o.insert("properties".into(), Value::Object(p));
            if !required.is_empty() {
                o.insert("required".into(), Value::Array(required));
            }
            alts.push(Value::Object(o));
        }
        if self.deep > 0 {
            alts.push(json!({}));
        }
        let nullable = self.null > 0;
        match alts.len() {
            0 if nullable => json!({"type": "null"}),
            0 => json!({}),
            1 => {
                let mut s = alts.pop().unwrap_or_default();
                if nullable && let Some(t) = s.get("type").cloned() {
                    s["type"] = json!([t, "null"]);
                    if let Some(e) = s.get_mut("enum").and_then(Value::as_array_mut) {
                        e.push(Value::Null);
                    }
                }
                s
            }
            _ => {
                if nullable {
                    alts.push(json!({"type": "null"}));
                }
                json!({"anyOf": alts})
            }
        }
    }
}

impl Strings {
    fn to_schema(&self, key: Option<&str>, creds: &Credentials) -> Value {
        let mut s = Map::new();
        s.insert("type".into(), json!("string"));
        let format = self.formats.iter().find(|(_, n)| **n == self.count).map(|(f, _)| *f);
        if let Some(f) = format {
            s.insert("format".into(), json!(f));
            return Value::Object(s);
        }
        let distinct = self.values.len();
        let sensitive = key.is_some_and(redact::is_sensitive_key);
        if !self.overflow
            && !sensitive
            && (1..=ENUM_MAX_VALUES).contains(&distinct)
            && self.count >= ENUM_MIN_SAMPLES
            && self.count >= 3 * distinct as u64
            && self.values.keys().all(|v| !v.is_empty() && v.len() <= 40 && creds.may_show(v))
        {
            s.insert("enum".into(), Value::Array(self.values.keys().map(|v| json!(v)).collect()));
        }
        Value::Object(s)
    }
}

/// The schema of a scalar parameter from its sample values (path, query,
/// form): integer, number, boolean or string with a format.
pub fn scalar_schema(values: &[String], key: Option<&str>, creds: &Credentials) -> Value {
    fn unsigned(v: &str) -> &str {
        v.strip_prefix('-').unwrap_or(v)
    }
    let digits = |s: &str| !s.is_empty() && s.len() <= 19 && s.bytes().all(|b| b.is_ascii_digit());
    if !values.is_empty() && values.iter().all(|v| digits(unsigned(v))) {
        return json!({"type": "integer"});
    }
    // `2.25`, `-0.5`: a decimal point with digits on both sides.
    let decimal = |v: &str| unsigned(v).split_once('.').is_some_and(|(a, b)| digits(a) && digits(b));
    if !values.is_empty() && values.iter().all(|v| digits(unsigned(v)) || decimal(v)) {
        return json!({"type": "number"});
    }
    if !values.is_empty() && values.iter().all(|v| v == "true" || v == "false") {
        return json!({"type": "boolean"});
    }
    let mut shape = Shape::default();
    values.iter().for_each(|v| shape.add(&Value::String(v.clone())));
    if values.is_empty() { json!({"type": "string"}) } else { shape.to_schema(key, creds) }
}
