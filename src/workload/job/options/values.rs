//! fio's option values, read as fio reads them: booleans (`1`, `0`, or the bare key), integers,
//! sizes (`4k` = 4096, `0x1000`, `50%` of the file, `524z` zones), times (`60`, `5m`, `250ms`;
//! seconds unless the option says otherwise), and values per data direction (`4k,8k` for
//! reads and for writes and trims).

use super::super::spec::{Amount, PerDir};

/// One option as written: its key and its value (`None` for a bare key).
#[derive(Debug, Clone, Copy)]
pub struct Arg<'a> {
    pub key: &'a str,
    pub value: Option<&'a str>,
}

impl<'a> Arg<'a> {
    /// The value, which the option needs.
    pub fn need(&self) -> Result<&'a str, String> {
        match self.value.map(str::trim) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(format!("{} needs a value ({}=...)", self.key, self.key)),
        }
    }

    /// A boolean: the bare key, `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
    pub fn flag(&self) -> Result<bool, String> {
        match self.value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
            Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
            Some(o) => Err(format!("{}={o}: expected 1 or 0", self.key)),
        }
    }

    /// A whole number >= 0.
    pub fn int(&self) -> Result<u64, String> {
        int(self.need()?).map_err(|e| format!("{}: {e}", self.key))
    }

    /// A size in bytes.
    pub fn bytes(&self) -> Result<u64, String> {
        bytes(self.need()?).map_err(|e| format!("{}: {e}", self.key))
    }

    /// A size, a percentage or zones.
    pub fn amount(&self) -> Result<Amount, String> {
        amount(self.need()?).map_err(|e| format!("{}: {e}", self.key))
    }

    /// A time in seconds; a bare number is in `unit` seconds (1 for fio's seconds options,
    /// 1e-6 for its microsecond ones).
    pub fn seconds(&self, unit: f64) -> Result<f64, String> {
        seconds(self.need()?, unit).map_err(|e| format!("{}: {e}", self.key))
    }

    /// A value per data direction (`4k,8k`), each read by `one`, over `current`.
    pub fn dirs<T: Clone>(
        &self,
        current: &PerDir<T>,
        one: impl Fn(&str) -> Result<T, String>,
    ) -> Result<PerDir<T>, String> {
        per_dir(self.need()?, current, one).map_err(|e| format!("{}: {e}", self.key))
    }

    /// A float.
    pub fn float(&self) -> Result<f64, String> {
        let v = self.need()?;
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("{}={v}: not a number", self.key))
    }

    /// One of `words`.
    pub fn choice(&self, words: &[&'static str]) -> Result<&'static str, String> {
        let v = self.need()?;
        words
            .iter()
            .find(|w| w.eq_ignore_ascii_case(v))
            .copied()
            .ok_or_else(|| format!("{}={v}: expected one of {}", self.key, words.join(", ")))
    }
}

/// A whole number: decimal or `0x` hex, with `_` allowed.
pub fn int(v: &str) -> Result<u64, String> {
    let t = v.trim().replace('_', "");
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{v}' is not a whole number >= 0"))
}

/// A size in bytes as fio reads it: every suffix a power of 1024 (`4k`, `1m`, `8g`, `1t`).
pub fn bytes(v: &str) -> Result<u64, String> {
    crate::units::parse_fio_size(v).map_err(|e| e.0)
}

/// A size, `N%` of the whole, or `Nz` zones.
pub fn amount(v: &str) -> Result<Amount, String> {
    let t = v.trim();
    if let Some(p) = t.strip_suffix('%') {
        let p: f64 = p
            .trim()
            .parse()
            .ok()
            .filter(|p: &f64| (0.0..=100.0).contains(p))
            .ok_or_else(|| format!("'{v}' is not a percentage from 0 to 100"))?;
        return Ok(Amount::Percent(p));
    }
    if let Some(z) = t.strip_suffix(['z', 'Z']) {
        return Ok(Amount::Zones(int(z)?));
    }
    Ok(Amount::Bytes(bytes(t)?))
}

/// A time as fio reads it: a number with `us`/`usec`, `ms`/`msec`, `s`, `m`, `h` or `d`; a bare
/// number is in `unit` seconds.
pub fn seconds(v: &str, unit: f64) -> Result<f64, String> {
    let t = v.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = (&t[..end], t[end..].trim().to_ascii_lowercase());
    let mult = match suffix.as_str() {
        "" => unit,
        "ns" | "nsec" => 1e-9,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => {
            return Err(format!(
                "'{v}' has an unknown time unit '{suffix}'; expected us, ms, s, m, h or d"
            ))
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a time such as 60, 5m or 250ms"))?;
    Ok(n * mult)
}

/// fio's data pattern (`verify_pattern`, `buffer_pattern`): hex numbers (`0xaa555aa5`, bytes
/// as written), decimal numbers (their bytes from the least significant), and quoted strings
/// (`"abcd"`), one after the other.
pub fn pattern(v: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = v.trim();
    while !rest.is_empty() {
        if let Some(q) = rest.strip_prefix('"').or_else(|| rest.strip_prefix('\'')) {
            let quote = rest.as_bytes()[0] as char;
            let end = q
                .find(quote)
                .ok_or_else(|| format!("'{v}' has a string without its closing {quote}"))?;
            out.extend_from_slice(&q.as_bytes()[..end]);
            rest = q[end + 1..].trim_start();
        } else if let Some(h) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let end = h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len());
            let digits = &h[..end];
            if digits.is_empty() {
                return Err(format!("'{v}' has 0x without hex digits"));
            }
            let padded = if digits.len() % 2 == 1 {
                format!("0{digits}")
            } else {
                digits.to_string()
            };
            for k in (0..padded.len()).step_by(2) {
                out.push(u8::from_str_radix(&padded[k..k + 2], 16).expect("hex digits"));
            }
            rest = h[end..].trim_start();
        } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let mut n: u32 = rest[..end]
                .parse()
                .map_err(|_| format!("'{v}': {} is larger than 32 bits", &rest[..end]))?;
            if n == 0 {
                out.push(0);
            }
            while n > 0 {
                out.push((n & 0xff) as u8);
                n >>= 8;
            }
            rest = rest[end..].trim_start();
        } else if rest.starts_with('%') {
            return Err(format!(
                "'{v}': formats such as %o (each block's offset) are not supported; give numbers and strings"
            ));
        } else {
            return Err(format!(
                "'{v}' is not a pattern of hex numbers (0xaa55), decimal numbers or \"strings\""
            ));
        }
    }
    if out.is_empty() {
        return Err(format!("'{v}' is an empty pattern"));
    }
    Ok(out)
}

/// fio's per-direction list (`r,w,t`): a value not ending in a comma applies to the directions
/// after it; an empty one keeps the current value. `one` reads one value.
pub fn per_dir<T: Clone>(
    v: &str,
    current: &PerDir<T>,
    one: impl Fn(&str) -> Result<T, String>,
) -> Result<PerDir<T>, String> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{v}' has more than three comma-separated values (reads, writes, trims)"
        ));
    }
    let cur = [&current.read, &current.write, &current.trim];
    let mut out: Vec<T> = Vec::with_capacity(3);
    let mut last: Option<T> = None;
    for (d, c) in cur.iter().enumerate() {
        let value = match parts.get(d) {
            Some(p) if p.trim().is_empty() => {
                last = None;
                (*c).clone()
            }
            Some(p) => {
                let x = one(p.trim())?;
                last = Some(x.clone());
                x
            }
            None => last.clone().unwrap_or_else(|| (*c).clone()),
        };
        out.push(value);
    }
    let mut it = out.into_iter();
    Ok(PerDir {
        read: it.next().expect("three"),
        write: it.next().expect("three"),
        trim: it.next().expect("three"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_fio_reads_them() {
        assert_eq!(seconds("3600", 1.0), Ok(3600.0));
        assert_eq!(seconds("5m", 1.0), Ok(300.0));
        assert_eq!(seconds("10s", 1.0), Ok(10.0));
        assert_eq!(seconds("2000", 1e-6), Ok(2000e-6));
        assert_eq!(seconds("250ms", 1.0), Ok(0.25));
        assert!(seconds("5x", 1.0).is_err());
        assert_eq!(amount("50%"), Ok(Amount::Percent(50.0)));
        assert_eq!(amount("524z"), Ok(Amount::Zones(524)));
        assert_eq!(amount("4K"), Ok(Amount::Bytes(4096)));
        assert_eq!(int("0x10"), Ok(16));
        let a = Arg {
            key: "norandommap",
            value: None,
        };
        assert_eq!(a.flag(), Ok(true));
    }

    #[test]
    fn patterns_as_fio_reads_them() {
        assert_eq!(pattern("0xaa555aa5"), Ok(vec![0xaa, 0x55, 0x5a, 0xa5]));
        assert_eq!(pattern("0xabc"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(pattern("258"), Ok(vec![2, 1]));
        assert_eq!(pattern("0xff\"ab\""), Ok(vec![0xff, b'a', b'b']));
        assert!(pattern("%o").unwrap_err().contains("offset"));
        assert!(pattern("zz").is_err());
    }

    #[test]
    fn per_direction_values_inherit_as_fio_says() {
        let d = PerDir::all(4096u64);
        let p = |v| per_dir(v, &d, bytes).unwrap();
        assert_eq!(p("256k"), PerDir::all(256 << 10));
        let x = p("8k,32k");
        assert_eq!((x.read, x.write, x.trim), (8192, 32768, 32768));
        let x = p("8k,32k,");
        assert_eq!((x.read, x.write, x.trim), (8192, 32768, 4096));
        let x = p(",8k");
        assert_eq!((x.read, x.write, x.trim), (4096, 8192, 8192));
        let x = p(",8k,");
        assert_eq!((x.read, x.write, x.trim), (4096, 8192, 4096));
        assert!(per_dir("1,2,3,4", &d, bytes).is_err());
    }
}
