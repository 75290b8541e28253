//! ISO 8601 timestamps, as the v2 API writes them: UTC with milliseconds
//! (`2023-03-20T08:37:35.000Z`).

/// Formats Unix milliseconds.
pub fn iso8601_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        sod / 3600,
        (sod % 3600) / 60,
        sod % 60
    )
}

/// Formats Unix seconds.
pub fn iso8601_secs(secs: u64) -> String {
    iso8601_ms((secs as i64).saturating_mul(1000))
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
}
