//! Times as UTC text: ISO 8601 for result.json and the manifest, a compact stamp for results
//! directory names. No time zone database, no dependency: civil dates from days since 1970.

use std::time::{SystemTime, UNIX_EPOCH};

/// Civil date (year, month, day) of a count of days since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// UTC date and time of `t`: (y, mo, d, h, mi, s).
fn utc_parts(t: SystemTime) -> (i64, u32, u32, u64, u64, u64) {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, mo, d) = civil_from_days((secs / 86_400) as i64);
    let r = secs % 86_400;
    (y, mo, d, r / 3600, r % 3600 / 60, r % 60)
}

/// `2026-11-22T02:15:42Z`.
pub fn utc_iso(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `20261122T021542Z`, for directory names.
pub fn utc_stamp(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(t);
    format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn utc_formatting() {
        let t = UNIX_EPOCH + Duration::from_secs(1_795_313_742);
        assert_eq!(utc_iso(t), "2026-11-22T02:15:42Z");
        assert_eq!(utc_stamp(t), "20261122T021542Z");
        assert_eq!(
            utc_iso(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
    }
}
