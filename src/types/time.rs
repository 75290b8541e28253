//! ISO 8601 timestamps, as the v2 API writes them: UTC with milliseconds
//! (`2023-03-20T08:37:35.000Z`), and the date bounds it reads (`from_date`, `to_date`).

use super::ParseError;

/// Latest date accepted: 9999-12-31T23:59:59Z.
const MAX_SECS: i64 = 253_402_300_799;

/// Which end of a range a date bounds: a fraction of a second rounds towards the inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateBound {
    /// `from_date`: a block at or after the date (a fraction rounds up).
    From,
    /// `to_date`: a block at or before the date (a fraction rounds down).
    To,
}

/// Parses a date bound into Unix seconds: a number of seconds since 1970 (`1679301455`), or
/// ISO 8601 (`2023-03-20`, `2023-03-20T08:37`, `2023-03-20T08:37:35.123Z`,
/// `2023-03-20T10:37:35+02:00`; no zone means UTC). Dates before 1970 count as 1970.
pub fn parse_date(s: &str, bound: DateBound) -> Result<u64, ParseError> {
    let s = s.trim();
    let bad = || {
        ParseError::new(format!(
            "'{}' is not a date; expected Unix seconds or ISO 8601 such as 2023-03-20T08:37:35Z",
            s.chars().take(64).collect::<String>()
        ))
    };
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let secs: i64 = s.parse().map_err(|_| bad())?;
        return if secs <= MAX_SECS {
            Ok(secs as u64)
        } else {
            Err(bad())
        };
    }
    let (ms, exact) = parse_iso(s).ok_or_else(bad)?;
    let secs = match bound {
        DateBound::From if !exact => ms.div_euclid(1000) + 1,
        _ => ms.div_euclid(1000),
    };
    Ok(secs.max(0) as u64)
}

/// Parses a point in time into Unix seconds, as `dateToBlock` reads its `date`: Unix seconds
/// (`1679301455`), Unix milliseconds (digits beyond the last second of 9999, which no seconds
/// value reaches: `1679301455000`), or ISO 8601 as [`parse_date`] reads it. A fraction of a
/// second rounds down: the instant is within that second.
pub fn parse_instant(s: &str) -> Result<u64, ParseError> {
    let t = s.trim();
    if let Some(n) = digits(t).filter(|n| (MAX_SECS + 1..=MAX_SECS * 1000).contains(n)) {
        return Ok((n / 1000) as u64);
    }
    parse_date(t, DateBound::To)
}

/// One or more ASCII digits as a number.
fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// ISO 8601 to (Unix milliseconds, whether it fell on a whole second).
fn parse_iso(s: &str) -> Option<(i64, bool)> {
    let (date, rest) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let mut ymd = date.splitn(3, '-');
    let (y, m, d) = (ymd.next()?, ymd.next()?, ymd.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d) = (digits(y)?, digits(m)?, digits(d)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d < 1 || d > month_days[(m - 1) as usize] {
        return None;
    }
    let (clock, offset_secs) = split_zone(rest)?;
    let (secs_of_day, millis, exact) = parse_clock(clock)?;
    let days = days_from_civil(y, m as u32, d as u32);
    let ms = ((days * 86_400 + secs_of_day - offset_secs) * 1000) + millis;
    (ms <= MAX_SECS * 1000).then_some((ms, exact))
}

/// `08:37:35.123Z` to (`08:37:35.123`, 0); `+02:00` to an offset of 7200 s.
fn split_zone(rest: &str) -> Option<(&str, i64)> {
    if let Some(clock) = rest.strip_suffix(['Z', 'z']) {
        return Some((clock, 0));
    }
    let Some(i) = rest.rfind(['+', '-']) else {
        return Some((rest, 0));
    };
    let (clock, zone) = (&rest[..i], &rest[i..]);
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let hm = zone[1..].replace(':', "");
    if hm.len() != 4 {
        return None;
    }
    let (h, m) = (digits(&hm[..2])?, digits(&hm[2..])?);
    (h <= 23 && m <= 59).then_some((clock, sign * (h * 3600 + m * 60)))
}

/// `HH:MM[:SS[.fff]]` (or empty: midnight) to (seconds of the day, milliseconds, exact).
fn parse_clock(clock: &str) -> Option<(i64, i64, bool)> {
    if clock.is_empty() {
        return Some((0, 0, true));
    }
    let (hms, frac) = match clock.split_once(['.', ',']) {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (clock, None),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let h = digits(parts[0])?;
    let m = digits(parts[1])?;
    let sec = parts.get(2).map_or(Some(0), |p| digits(p))?;
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let (millis, exact) = match frac {
        None => (0, true),
        Some(f) if !f.is_empty() && f.len() <= 9 && digits(f).is_some() => {
            let padded = format!("{f:0<3}");
            (digits(&padded[..3])?, f.bytes().all(|b| b == b'0'))
        }
        Some(_) => return None,
    };
    Some((h * 3600 + m * 60 + sec, millis, exact))
}

/// (year, month, day), proleptic Gregorian, to days since 1970-01-01 (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Formats Unix milliseconds.
pub fn iso8601_ms(ms: i64) -> String {
    let mut out = String::with_capacity(24);
    push_iso8601_ms(&mut out, ms);
    out
}

/// Appends Unix milliseconds, formatted as [`iso8601_ms`] formats them.
pub fn push_iso8601_ms(out: &mut String, ms: i64) {
    use std::fmt::Write;
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    // Writing into a `String` cannot fail.
    write!(
        out,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    )
    .unwrap_or_default();
}

/// Formats Unix seconds.
pub fn iso8601_secs(secs: u64) -> String {
    iso8601_ms(secs_to_ms(secs))
}

/// Appends Unix seconds, formatted as [`iso8601_secs`] formats them.
pub fn push_iso8601_secs(out: &mut String, secs: u64) {
    push_iso8601_ms(out, secs_to_ms(secs));
}

fn secs_to_ms(secs: u64) -> i64 {
    (secs as i64).saturating_mul(1000)
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_moralis() {
        assert_eq!(iso8601_secs(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_secs(1_679_301_455), "2023-03-20T08:37:35.000Z");
        assert_eq!(iso8601_ms(1_679_497_075_980), "2023-03-22T14:57:55.980Z");
        assert_eq!(iso8601_secs(951_782_400), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn reads_seconds_and_iso_dates() {
        let from = |s| parse_date(s, DateBound::From);
        let to = |s| parse_date(s, DateBound::To);
        assert_eq!(from("1679301455"), Ok(1_679_301_455));
        assert_eq!(from("2023-03-20T08:37:35.000Z"), Ok(1_679_301_455));
        assert_eq!(from("2023-03-20T08:37:35Z"), Ok(1_679_301_455));
        assert_eq!(from("2023-03-20T10:37:35+02:00"), Ok(1_679_301_455));
        assert_eq!(from("2023-03-20T07:37:35-0100"), Ok(1_679_301_455));
        assert_eq!(from("2023-03-20 08:37:35"), Ok(1_679_301_455));
        assert_eq!(from("2023-03-20"), Ok(1_679_270_400));
        assert_eq!(from("2023-03-20T08:37"), Ok(1_679_301_420));
        // A fraction rounds towards the inside of the range.
        assert_eq!(from("2023-03-20T08:37:35.5Z"), Ok(1_679_301_456));
        assert_eq!(to("2023-03-20T08:37:35.5Z"), Ok(1_679_301_455));
        assert_eq!(from("2000-02-29"), Ok(951_782_400));
        assert_eq!(from("1969-12-31"), Ok(0));
        for s in iso_round_trip_samples() {
            let iso = iso8601_secs(s);
            assert_eq!(parse_date(&iso, DateBound::From), Ok(s));
        }
    }

    #[test]
    fn instants_in_seconds_milliseconds_and_iso() {
        assert_eq!(parse_instant("1679301455"), Ok(1_679_301_455));
        assert_eq!(parse_instant("1679301455999"), Ok(1_679_301_455));
        assert_eq!(parse_instant("253402300799"), Ok(253_402_300_799));
        assert_eq!(parse_instant("2023-03-20T08:37:35.999Z"), Ok(1_679_301_455));
        assert_eq!(parse_instant("300000000000"), Ok(300_000_000));
        assert!(parse_instant("253402300799001").is_err());
        assert!(parse_instant("tomorrow").is_err());
    }

    fn iso_round_trip_samples() -> Vec<u64> {
        vec![0, 59, 86_399, 951_782_400, 1_679_301_455, 4_102_444_800]
    }

    #[test]
    fn refuses_what_is_not_a_date() {
        for s in [
            "",
            "-1",
            "yesterday",
            "2023-13-01",
            "2023-02-29",
            "2023-3-20",
            "2023-03-20T24:00",
            "2023-03-20T08:60",
            "2023-03-20T08:37:35.Z",
            "2023-03-20T08:37:35+2",
            "1e9",
            "99999999999999999999",
            "10000-01-01",
            "0x10",
        ] {
            assert!(
                parse_date(s, DateBound::From).is_err(),
                "{s:?} was accepted"
            );
        }
    }
}
