//! Looking for a secret where it must not be: the value as is and in the
//! encodings a careless sink would write it in (base64 at every alignment,
//! hex, URL-encoded, reversed), in raw bytes, files and directory trees.

use std::path::{Path, PathBuf};

/// A unique secret value for one test run: `CANARY-<32 random hex>`.
pub fn canary() -> String {
    let mut bytes = [0u8; 16];
    match std::fs::File::open("/dev/urandom") {
        Ok(mut f) => {
            use std::io::Read;
            f.read_exact(&mut bytes).expect("read /dev/urandom");
        }
        Err(e) => panic!("no /dev/urandom for the canary: {e}"),
    }
    format!("CANARY-{}", hex(&bytes, false))
}

/// The forms of one secret to search for.
pub struct Needles {
    forms: Vec<(String, Vec<u8>)>,
}

/// Where a needle was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub place: String,
    pub form: String,
    pub offset: usize,
}

impl Needles {
    /// `secret` as is, its random tail alone (after the last `-`), base64
    /// (standard and URL-safe, at the three alignments it can take inside
    /// a longer string), hex (both cases), URL-encoded and reversed.
    pub fn for_secret(secret: &str) -> Needles {
        let mut forms: Vec<(String, Vec<u8>)> = vec![("as is".into(), secret.as_bytes().to_vec())];
        if let Some((_, tail)) = secret.rsplit_once('-')
            && tail.len() >= 16
        {
            forms.push(("random part".into(), tail.as_bytes().to_vec()));
        }
        for (i, b64) in base64_cores(secret.as_bytes()).into_iter().enumerate() {
            let url_safe = b64.replace('+', "-").replace('/', "_");
            forms.push((format!("base64 (alignment {i})"), b64.into_bytes()));
            forms.push((format!("base64url (alignment {i})"), url_safe.into_bytes()));
        }
        forms.push(("hex".into(), hex(secret.as_bytes(), false).into_bytes()));
        forms.push(("HEX".into(), hex(secret.as_bytes(), true).into_bytes()));
        forms.push(("url-encoded".into(), url_encode(secret).into_bytes()));
        forms.push(("reversed".into(), secret.chars().rev().collect::<String>().into_bytes()));
        forms.dedup_by(|a, b| a.1 == b.1);
        Needles { forms }
    }

    /// Every form found in `bytes`, named by `place`.
    pub fn find(&self, place: &str, bytes: &[u8]) -> Vec<Hit> {
        let mut hits = Vec::new();
        for (form, needle) in &self.forms {
            if let Some(offset) = bytes.windows(needle.len()).position(|w| w == needle.as_slice()) {
                hits.push(Hit { place: place.to_string(), form: form.clone(), offset });
            }
        }
        hits
    }

    /// Every form found in the files under `dir` (recursively; a missing
    /// directory has none). Returns the hits and the files read.
    pub fn find_in_tree(&self, dir: &Path) -> (Vec<Hit>, Vec<PathBuf>) {
        let mut hits = Vec::new();
        let mut files = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for e in entries.flatten() {
                let path = e.path();
                match e.file_type() {
                    Ok(t) if t.is_dir() => stack.push(path),
                    Ok(t) if t.is_file() => {
                        if let Ok(bytes) = std::fs::read(&path) {
                            hits.extend(self.find(&path.display().to_string(), &bytes));
                            files.push(path);
                        }
                    }
                    _ => {}
                }
            }
        }
        (hits, files)
    }
}

fn hex(bytes: &[u8], upper: bool) -> String {
    let digits: &[u8; 16] = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    bytes.iter().flat_map(|b| [digits[usize::from(b >> 4)] as char, digits[usize::from(b & 15)] as char]).collect()
}

fn url_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Unpadded URL-safe base64 (RFC 4648 §5), as JWTs write it; also what
/// the net app's fixture tokens are made of (`crate::netapp`).
pub fn base64url(bytes: &[u8]) -> String {
    base64(bytes).replace('+', "-").replace('/', "_")
}

/// Unpadded base64, written here rather than taken from the code under
/// test: a sink is searched with an encoder of its own.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// The part of `secret`'s base64 that is the same wherever it sits in a
/// longer string, for each of the three byte alignments.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    (0..3)
        .map(|pad| {
            let mut padded = vec![b'\0'; pad];
            padded.extend_from_slice(secret);
            let full = base64(&padded);
            // Characters touched by the padding bytes or by the unknown
            // bytes after the secret are not part of the core.
            let start = if pad == 0 { 0 } else { 4 };
            let end = full.len().saturating_sub(4);
            full[start..end.max(start)].to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_values() {
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE");
        assert_eq!(base64(b"hello world"), "aGVsbG8gd29ybGQ");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8", "the URL-safe letters for + and /");
    }

    #[test]
    fn every_encoding_is_found_wherever_it_sits() {
        let secret = canary();
        let n = Needles::for_secret(&secret);
        for prefix in ["", "a", "ab", "abc"] {
            let s = format!("{prefix}{secret}!");
            let b64 = base64(s.as_bytes());
            assert!(!n.find("b64", b64.as_bytes()).is_empty(), "{prefix:?}");
        }
        let h = hex(secret.as_bytes(), false);
        assert!(n.find("x", format!("id={h}").as_bytes()).iter().any(|h| h.form == "hex"));
        let rev: String = secret.chars().rev().collect();
        assert!(!n.find("x", rev.as_bytes()).is_empty());
        let tail = secret.rsplit_once('-').unwrap().1;
        assert!(n.find("x", format!("token={tail}").as_bytes()).iter().any(|h| h.form == "random part"));
        assert!(n.find("x", b"CANARY-00000000000000000000000000000000").is_empty());
    }
}
