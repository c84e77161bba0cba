//! Time in UTC without a date crate: the clock as Unix seconds or
//! milliseconds, RFC 3339 timestamps, and calendar dates as day numbers.
//!
//! A *day number* counts days since 1970-01-01 (day 0), in UTC; negative
//! before it. Dates convert both ways with Howard Hinnant's
//! `days_from_civil` / `civil_from_days` algorithms (proleptic Gregorian
//! calendar), exact for every date this program meets.
//!
//! A leaf module: it imports nothing from the crate, so every other module
//! (the audit store, the log files, the secret store, the CLI, the daemon)
//! can use it without depending on one another.
//!
//! The clock never fails: a system clock set before 1970 reads as the
//! epoch.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds in a day.
pub const SECS_PER_DAY: u64 = 86_400;

/// Seconds since the Unix epoch, now.
pub fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Milliseconds since the Unix epoch, now.
pub fn unix_now_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Microseconds since the Unix epoch, now.
pub fn unix_now_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Today's day number (UTC).
pub fn today() -> i64 {
    day_of(unix_now())
}

/// The day number of Unix second `secs`.
pub fn day_of(secs: u64) -> i64 {
    i64::try_from(secs / SECS_PER_DAY).unwrap_or(i64::MAX)
}

/// `YYYY-MM-DDTHH:MM:SSZ` for Unix second `secs`.
pub fn rfc3339(secs: u64) -> String {
    let rem = secs % SECS_PER_DAY;
    format!("{}T{:02}:{:02}:{:02}Z", date(day_of(secs)), rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for Unix millisecond `ms`.
pub fn rfc3339_millis(ms: u64) -> String {
    let secs = rfc3339(ms / 1000);
    format!("{}.{:03}Z", secs.trim_end_matches('Z'), ms % 1000)
}

/// Now as [`rfc3339`].
pub fn now_rfc3339() -> String {
    rfc3339(unix_now())
}

/// Now as [`rfc3339_millis`], so two instants within one second differ.
pub fn now_rfc3339_millis() -> String {
    rfc3339_millis(unix_now_millis())
}

/// `YYYY-MM-DD` of a day number.
pub fn date(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The day number of a date; `month` 1–12, `day` 1–31 (not checked: out
/// of range values run on into the next month, as in the algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (m, d) = (i64::from(month), i64::from(day));
    let y = if m <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `(year, month, day)` of a day number.
pub fn civil_from_days(day: i64) -> (i64, u32, u32) {
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // Both in range by construction: 1–31 and 1–12.
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The day number of exactly `YYYY-MM-DD` (four, two and two ASCII
/// digits); `None` for anything else, including dates that do not exist
/// (`2026-02-30`).
pub fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &s[r];
        if part.bytes().all(|c| c.is_ascii_digit()) { part.parse().ok() } else { None }
    };
    let (y, m, d) = (i64::from(num(0..4)?), num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let day = days_from_civil(y, m, d);
    (civil_from_days(day) == (y, m, d)).then_some(day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_000_000), "2026-11-30T00:53:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_millis(1_796_000_000_042), "2026-11-30T00:53:20.042Z");
        assert_eq!(rfc3339_millis(999), "1970-01-01T00:00:00.999Z");
    }

    #[test]
    fn now_is_rfc3339_utc() {
        let t = now_rfc3339_millis();
        assert_eq!(t.len(), "2026-01-02T03:04:05.678Z".len(), "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T' && t.as_bytes()[19] == b'.', "{t}");
        assert_eq!(now_rfc3339().len(), "2026-01-02T03:04:05Z".len());
        assert!(unix_now() > 1_700_000_000);
        assert_eq!(today(), day_of(unix_now()));
    }

    #[test]
    fn day_numbers_and_dates_convert_both_ways() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 11, 29), 20_786);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        for day in [-800_000, -1, 0, 11_016, 11_017, 20_786, 20_787, 30_000, 2_932_896] {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day, "{day}");
            assert_eq!(parse_date(&date(day)), (0..=9999).contains(&y).then_some(day), "{day}");
        }
        assert_eq!(date(11_016), "2000-02-29");
    }

    #[test]
    fn dates_parse_only_in_one_shape() {
        assert_eq!(parse_date("2000-03-01"), Some(11_017));
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2024-02-29"), Some(days_from_civil(2024, 2, 29)));
        for bad in ["", "2026-13-01", "2026-1-01", "2026-01-1", "2026-02-30", "2025-02-29", "2026/01/01", "+026-01-01"]
        {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }
}
