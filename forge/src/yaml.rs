//! Writes a JSON value as block YAML. Every string and key is a
//! double-quoted scalar with JSON's escapes (which YAML shares), so no
//! value can turn into YAML syntax; numbers, booleans and null are plain.
//! [`from_str`] reads back exactly this subset (and JSON, which is YAML).

use serde_json::Value;

use crate::Error;

pub fn to_string(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => write_map(m, 0, &mut out),
        Value::Array(a) if !a.is_empty() => write_seq(a, 0, &mut out),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        other => other.to_string(),
    }
}

fn is_block(v: &Value) -> bool {
    matches!(v, Value::Object(m) if !m.is_empty()) || matches!(v, Value::Array(a) if !a.is_empty())
}

fn write_map(m: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    for (k, v) in m {
        out.push_str(&" ".repeat(indent));
        out.push_str(&Value::String(k.clone()).to_string());
        out.push(':');
        write_value(v, indent, out);
    }
}

fn write_seq(a: &[Value], indent: usize, out: &mut String) {
    for v in a {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        write_value(v, indent, out);
    }
}

fn write_value(v: &Value, indent: usize, out: &mut String) {
    if is_block(v) {
        out.push('\n');
        match v {
            Value::Object(m) => write_map(m, indent + 2, out),
            Value::Array(a) => write_seq(a, indent + 2, out),
            _ => {}
        }
    } else {
        out.push(' ');
        out.push_str(&scalar(v));
        out.push('\n');
    }
}

/// Reads what [`to_string`] writes (or JSON).
pub fn from_str(text: &str) -> Result<Value, Error> {
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        return serde_json::from_str(text).map_err(|e| Error::BadSpec(format!("line {}: not valid JSON", e.line())));
    }
    let lines: Vec<(usize, usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(n, l)| (n + 1, l.len() - l.trim_start().len(), l.trim_start()))
        .collect();
    let mut pos = 0;
    let v = block(&lines, &mut pos, 0)?;
    if pos != lines.len() {
        return Err(bad(lines[pos].0));
    }
    Ok(v)
}

fn bad(line: usize) -> Error {
    Error::BadSpec(format!("line {line}: only the YAML Chaperone writes is read (or JSON)"))
}

fn block(lines: &[(usize, usize, &str)], pos: &mut usize, indent: usize) -> Result<Value, Error> {
    let Some(&(n, ind, first)) = lines.get(*pos) else { return Ok(Value::Null) };
    if ind != indent {
        return Err(bad(n));
    }
    if first.starts_with('-') {
        let mut a = Vec::new();
        while let Some(&(n, ind, l)) = lines.get(*pos) {
            if ind != indent || !l.starts_with('-') {
                break;
            }
            *pos += 1;
            let rest = l[1..].trim();
            a.push(if rest.is_empty() { block(lines, pos, indent + 2)? } else { parse_scalar(rest, n)? });
        }
        Ok(Value::Array(a))
    } else {
        let mut m = serde_json::Map::new();
        while let Some(&(n, ind, l)) = lines.get(*pos) {
            if ind != indent || !l.starts_with('"') {
                if ind > indent {
                    return Err(bad(n));
                }
                break;
            }
            *pos += 1;
            let (key, rest) = split_key(l, n)?;
            let rest = rest.trim();
            let v = if rest.is_empty() { block(lines, pos, indent + 2)? } else { parse_scalar(rest, n)? };
            m.insert(key, v);
        }
        Ok(Value::Object(m))
    }
}

fn split_key(l: &str, n: usize) -> Result<(String, &str), Error> {
    let mut escaped = false;
    for (i, c) in l.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                let key: String = serde_json::from_str(&l[..=i]).map_err(|_| bad(n))?;
                let rest = l[i + 1..].strip_prefix(':').ok_or_else(|| bad(n))?;
                return Ok((key, rest));
            }
            _ => escaped = false,
        }
    }
    Err(bad(n))
}

fn parse_scalar(s: &str, n: usize) -> Result<Value, Error> {
    serde_json::from_str(s).map_err(|_| bad(n))
}
