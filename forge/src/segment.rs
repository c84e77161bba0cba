//! What a path segment or a string value looks like. Pure functions; the
//! table tests read `fixtures/forge/segments.tsv`.

/// The kind of one path segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Decimal digits (at most 19).
    Integer,
    /// `8-4-4-4-12` hex digits.
    Uuid,
    /// At least 8 hex digits with a digit among them (`5f2b9c0e`, object ids).
    Hex,
    /// At least 10 letters and digits mixing both (`aB3dE5fG7h`).
    Base62,
    /// `YYYY-MM-DD`.
    Date,
    /// Lowercase words joined by `-` or `_`, or a word with digits
    /// (`the-hobbit`, `book_2`).
    Slug,
    /// Letters only (`books`, `search`): a literal unless many vary.
    Word,
    /// Anything else (`v1.json`, `a+b`): always a literal.
    Other,
}

impl Kind {
    /// Whether this kind names an id: two different values in one place
    /// make it a parameter.
    pub fn is_id(self) -> bool {
        matches!(self, Kind::Integer | Kind::Uuid | Kind::Hex | Kind::Base62 | Kind::Date)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Integer => "integer",
            Kind::Uuid => "uuid",
            Kind::Hex => "hex",
            Kind::Base62 => "base62",
            Kind::Date => "date",
            Kind::Slug => "slug",
            Kind::Word => "word",
            Kind::Other => "other",
        }
    }
}

/// Classifies one (percent-decoded) path segment.
pub fn kind(s: &str) -> Kind {
    if s.is_empty() {
        return Kind::Other;
    }
    if s.len() <= 19 && s.bytes().all(|b| b.is_ascii_digit()) {
        return Kind::Integer;
    }
    if is_uuid(s) {
        return Kind::Uuid;
    }
    if is_date(s) {
        return Kind::Date;
    }
    let hex = s.bytes().all(|b| b.is_ascii_hexdigit());
    let digits = s.bytes().any(|b| b.is_ascii_digit());
    let letters = s.bytes().any(|b| b.is_ascii_alphabetic());
    if hex
        && s.len() >= 8
        && digits
        && (s.bytes().all(|b| !b.is_ascii_uppercase()) || s.bytes().all(|b| !b.is_ascii_lowercase()))
    {
        return Kind::Hex;
    }
    if s.len() >= 10 && s.bytes().all(|b| b.is_ascii_alphanumeric()) && digits && letters {
        return Kind::Base62;
    }
    if s.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Kind::Word;
    }
    let slug_chars = s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    let starts = s.as_bytes()[0].is_ascii_alphanumeric();
    if slug_chars && starts && letters && !s.ends_with('-') && !s.ends_with('_') {
        return Kind::Slug;
    }
    Kind::Other
}

pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter()
            .enumerate()
            .all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { *c == b'-' } else { c.is_ascii_hexdigit() })
}

pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
        && (1..=12).contains(&s[5..7].parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&s[8..10].parse::<u32>().unwrap_or(0))
}

/// RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
pub fn is_date_time(s: &str) -> bool {
    if s.len() < 20 || !is_date(&s[..10]) {
        return false;
    }
    let rest = &s[10..];
    let Some(rest) = rest.strip_prefix('T').or_else(|| rest.strip_prefix('t')) else { return false };
    let b = rest.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' || ![0, 1, 3, 4, 6, 7].iter().all(|i| b[*i].is_ascii_digit()) {
        return false;
    }
    let mut tail = &rest[8..];
    if let Some(f) = tail.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        tail = &f[n..];
    }
    if tail == "Z" || tail == "z" {
        return true;
    }
    let t = tail.as_bytes();
    t.len() == 6
        && (t[0] == b'+' || t[0] == b'-')
        && t[3] == b':'
        && [1, 2, 4, 5].iter().all(|i| t[*i].is_ascii_digit())
}

pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else { return false };
    !local.is_empty()
        && local.len() <= 64
        && !s.contains(char::is_whitespace)
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
}

pub fn is_uri(s: &str) -> bool {
    (s.starts_with("https://") || s.starts_with("http://"))
        && !s.contains(char::is_whitespace)
        && url::Url::parse(s).is_ok_and(|u| u.host_str().is_some())
}

/// The OpenAPI `format` a string value has, if any.
pub fn format(s: &str) -> Option<&'static str> {
    if is_uuid(s) {
        Some("uuid")
    } else if is_date_time(s) {
        Some("date-time")
    } else if is_date(s) {
        Some("date")
    } else if is_email(s) {
        Some("email")
    } else if is_uri(s) {
        Some("uri")
    } else {
        None
    }
}
