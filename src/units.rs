//! Parsing and printing of the quantities users type: sizes (`1MiB`, `8GiB`, `4096`),
//! durations (`5s`, `250ms`), percentages (`2%`) and plain numbers. Every parser names what it accepts in its error.

use std::fmt;

/// A value could not be read as the quantity it stands for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnitError(pub String);

const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("b", 1),
    ("k", 1000),
    ("kb", 1000),
    ("kib", 1 << 10),
    ("m", 1_000_000),
    ("mb", 1_000_000),
    ("mib", 1 << 20),
    ("g", 1_000_000_000),
    ("gb", 1_000_000_000),
    ("gib", 1 << 30),
    ("t", 1_000_000_000_000),
    ("tb", 1_000_000_000_000),
    ("tib", 1 << 40),
];

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses a byte size: a number with an optional unit (`k`/`KB` = 1000, `KiB` = 1024, up to `T`/`TiB`).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let s = text.trim();
    let (num, unit) = split_number(s);
    let allowed = "a byte count such as 4096, 512KiB, 1MiB, 8GiB or 1000000";
    if num.is_empty() {
        return Err(UnitError(format!(
            "'{text}' is not a size; expected {allowed}"
        )));
    }
    let unit_l = unit.to_ascii_lowercase();
    let Some(&(_, mult)) = SIZE_UNITS.iter().find(|(u, _)| *u == unit_l) else {
        return Err(UnitError(format!(
            "'{text}' has an unknown size unit '{unit}'; expected {allowed}"
        )));
    };
    scaled(text, num, mult, allowed)
}

/// `num` (digits, maybe a fraction) times `mult`, as a whole number of bytes.
fn scaled(text: &str, num: &str, mult: u64, allowed: &str) -> Result<u64, UnitError> {
    let num = num.replace('_', "");
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| UnitError(format!("'{text}' is too large")));
    }
    let f: f64 = num
        .parse()
        .map_err(|_| UnitError(format!("'{text}' is not a size; expected {allowed}")))?;
    let bytes = f * mult as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 || bytes.fract() != 0.0 {
        return Err(UnitError(format!(
            "'{text}' is not a whole number of bytes; expected {allowed}"
        )));
    }
    Ok(bytes as u64)
}

/// Parses a size as fio reads it (its default `kb_base=1024`): every suffix is a power of
/// 1024, with or without `i` and `b` (`4k` = `4kb` = `4KiB` = 4096, `1m`, `8g`, `1t`), case
/// ignored; `0x` for hexadecimal; no suffix: bytes.
pub fn parse_fio_size(text: &str) -> Result<u64, UnitError> {
    let s = text.trim();
    let allowed = "a size as fio reads it, such as 4096, 4k, 1m, 8g or 0x1000";
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16)
            .map_err(|_| UnitError(format!("'{text}' is not a size; expected {allowed}")));
    }
    let (num, unit) = split_number(s);
    let u = unit.to_ascii_lowercase();
    let base = u.strip_suffix('b').unwrap_or(&u);
    let base = base.strip_suffix('i').unwrap_or(base);
    let power = match base {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => {
            return Err(UnitError(format!(
                "'{text}' has an unknown size unit '{unit}'; expected {allowed}"
            )))
        }
    };
    if num.is_empty() {
        return Err(UnitError(format!(
            "'{text}' is not a size; expected {allowed}"
        )));
    }
    scaled(text, num, 1u64 << (10 * power), allowed)
}

/// Parses a duration into seconds: `5s`, `250ms`, `100us`, `2m`, `1h`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<f64, UnitError> {
    let s = text.trim();
    let (num, unit) = split_number(s);
    let allowed = "a duration such as 5s, 250ms, 100us, 2m or 1h";
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(UnitError(format!(
                "'{text}' has an unknown time unit '{unit}'; expected {allowed}"
            )))
        }
    };
    let f: f64 = num
        .replace('_', "")
        .parse()
        .map_err(|_| UnitError(format!("'{text}' is not a duration; expected {allowed}")))?;
    Ok(f * mult)
}

/// A byte count printed in the largest binary unit that divides it exactly (`1MiB`, `1000000`).
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (unit, mult) in [
            ("TiB", 1u64 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ] {
            if n >= mult && n % mult == 0 {
                return write!(f, "{}{unit}", n / mult);
            }
        }
        write!(f, "{n}")
    }
}

/// A duration in seconds printed the way a user would type it (`5s`, `250ms`).
pub struct Duration(pub f64);

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        if s >= 1.0 || s == 0.0 {
            write!(f, "{}s", trim_float(s))
        } else if s >= 1e-3 {
            write!(f, "{}ms", trim_float(s * 1e3))
        } else {
            write!(f, "{}us", trim_float(s * 1e6))
        }
    }
}

/// Prints a float without trailing zeros (at most 6 decimals).
pub fn trim_float(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// A share written as a percentage (`2%`, `0.5%`, `150%`), from 0 (exclusive) to 1000%, kept
/// in millionths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Percent(u32);

impl Percent {
    /// The percentage of a share (0.02: 2%), to a millionth.
    pub fn from_share(share: f64) -> Percent {
        Percent((share * 1e6).round().clamp(0.0, 1e7) as u32)
    }

    /// `2%`, `0.5%`.
    pub fn parse(text: &str) -> Result<Percent, String> {
        let bad = || {
            format!("'{text}' is not a percentage; expected e.g. \"2%\" (above 0, at most 1000%)")
        };
        let n = text.trim().strip_suffix('%').ok_or_else(bad)?;
        let x: f64 = n.trim().parse().map_err(|_| bad())?;
        let p = Percent::from_share(x / 100.0);
        if !(x > 0.0 && x <= 1000.0) || p.0 == 0 {
            return Err(bad());
        }
        Ok(p)
    }

    /// The share (0.02 for 2%).
    pub fn share(self) -> f64 {
        f64::from(self.0) / 1e6
    }

    /// As a study file writes it.
    pub fn text(self) -> String {
        format!("{}%", f64::from(self.0) / 1e4)
    }
}

impl serde::Serialize for Percent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de> serde::Deserialize<'de> for Percent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Percent, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        Percent::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_read_and_written() {
        assert_eq!(Percent::parse("2%").unwrap().share(), 0.02);
        assert_eq!(Percent::parse(" 0.5 %").unwrap().text(), "0.5%");
        assert_eq!(Percent::parse("2%").unwrap().text(), "2%");
        assert_eq!(Percent::parse("150%").unwrap().share(), 1.5);
        for bad in ["2", "0%", "-1%", "1001%", "x%", "0.00001%"] {
            assert!(Percent::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fio_sizes_are_powers_of_1024() {
        for (t, b) in [
            ("4k", 4096),
            ("4KiB", 4096),
            ("4kb", 4096),
            ("1M", 1 << 20),
            ("8g", 8 << 30),
            ("512", 512),
            ("0x1000", 4096),
            ("1.5k", 1536),
        ] {
            assert_eq!(parse_fio_size(t), Ok(b), "{t}");
        }
        assert!(parse_fio_size("4q").unwrap_err().0.contains("4k"));
        assert!(parse_fio_size("k").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("1mib").unwrap(), 1 << 20);
        assert_eq!(parse_size("8GiB").unwrap(), 8 << 30);
        assert_eq!(parse_size("1M").unwrap(), 1_000_000);
        assert_eq!(parse_size("1.5KiB").unwrap(), 1536);
        assert!(parse_size("1.0001KiB").is_err());
        assert!(parse_size("MiB").is_err());
        assert!(parse_size("3 parsecs").is_err());
        assert!(parse_size("-1").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s").unwrap(), 5.0);
        assert_eq!(parse_duration("250ms").unwrap(), 0.25);
        assert_eq!(parse_duration("2m").unwrap(), 120.0);
        assert_eq!(parse_duration("10").unwrap(), 10.0);
        assert!(parse_duration("5 fortnights").is_err());
    }

    #[test]
    fn printing() {
        assert_eq!(Size(1 << 20).to_string(), "1MiB");
        assert_eq!(Size(1_000_000).to_string(), "1000000");
        assert_eq!(Duration(5.0).to_string(), "5s");
        assert_eq!(Duration(0.25).to_string(), "250ms");
    }
}
