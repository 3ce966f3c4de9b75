//! fio's option values, read as fio reads them: booleans (`1`, `0`, or the bare key), integers,
//! sizes (`4k` = 4096, `0x1000`, `50%` of the file, `524z` zones), times (`60`, `5m`, `250ms`;
//! seconds unless the option says otherwise), fio's arithmetic in parentheses
//! (`(4k*1024)`, [`arithmetic`]), values per data direction (`4k,8k` for reads and for writes
//! and trims), and data patterns.

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

/// A whole number: decimal or `0x` hex, with `_` allowed, or fio's arithmetic (`(2*64)`).
pub fn int(v: &str) -> Result<u64, String> {
    if v.trim_start().starts_with('(') {
        return whole(arithmetic(v, size_unit)?, v);
    }
    let t = v.trim().replace('_', "");
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{v}' is not a whole number >= 0"))
}

/// An arithmetic result as a whole number >= 0.
fn whole(x: f64, v: &str) -> Result<u64, String> {
    if !x.is_finite() || x < 0.0 || x >= u64::MAX as f64 {
        return Err(format!("'{v}' comes to {x}, not a whole number >= 0"));
    }
    Ok(x.round() as u64)
}

/// The multiplier of a size suffix as fio reads it with its default `kb_base=1024`: `k`, `m`,
/// `g`, `t`, `p` (with an optional `b`) are powers of 1024; `ki`, `mi`, `gi`, `ti`, `pi`
/// (with an optional `b`) powers of 1000, the other way round from the standards, as fio
/// keeps them for old job files; `b` is bytes.
fn size_unit(u: &str) -> Option<f64> {
    let l = u.to_ascii_lowercase();
    let l = l.strip_suffix('b').unwrap_or(&l);
    let (prefix, thousand) = match l.strip_suffix('i') {
        Some(p) => (p, true),
        None => (l, false),
    };
    let power = ["", "k", "m", "g", "t", "p"]
        .iter()
        .position(|x| *x == prefix)?;
    let base: f64 = if thousand { 1000.0 } else { 1024.0 };
    Some(base.powi(power as i32))
}

/// A size in bytes as fio reads it: a number (decimal, `0x` hex) with a suffix of
/// `size_unit`'s, or fio's arithmetic in parentheses (`(4k*1024)`).
pub fn bytes(v: &str) -> Result<u64, String> {
    let t = v.trim();
    if t.starts_with('(') {
        return whole(arithmetic(t, size_unit)?, v);
    }
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).map_err(|_| {
            format!("'{v}' is not a size; expected a size such as 4096, 4k, 1m or 0x1000")
        });
    }
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..end], t[end..].trim());
    let mult = size_unit(unit).ok_or_else(|| {
        format!("'{v}' has an unknown size unit '{unit}'; expected a size such as 4096, 4k, 1m, 8g or 0x1000")
    })?;
    let n: f64 = num.replace('_', "").parse().map_err(|_| {
        format!("'{v}' is not a size; expected a size such as 4096, 4k, 1m, 8g or 0x1000")
    })?;
    whole(n * mult, v)
}

/// The multiplier of a time suffix, in seconds.
fn time_unit(u: &str) -> Option<f64> {
    Some(match u.to_ascii_lowercase().as_str() {
        "ns" | "nsec" => 1e-9,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => return None,
    })
}

/// fio's arithmetic (`(4k*1024)`, `((10+2)*3)m`): numbers (decimal, with a fraction or an
/// exponent, or `0x` hex) each with an optional suffix `unit` reads, `+ - * / %`, `^` (power),
/// unary minus and parentheses.
pub fn arithmetic(v: &str, unit: fn(&str) -> Option<f64>) -> Result<f64, String> {
    let mut p = Expr {
        s: v.trim().as_bytes(),
        at: 0,
        unit,
        text: v,
    };
    let x = p.sum()?;
    p.blanks();
    if p.at < p.s.len() {
        return Err(p.bad("an operator or the end"));
    }
    if !x.is_finite() {
        return Err(format!(
            "'{v}' does not come to a number (a division by 0?)"
        ));
    }
    Ok(x)
}

/// A recursive-descent reader of [`arithmetic`].
struct Expr<'a> {
    s: &'a [u8],
    at: usize,
    unit: fn(&str) -> Option<f64>,
    text: &'a str,
}

impl Expr<'_> {
    fn bad(&self, wanted: &str) -> String {
        format!(
            "'{}': {wanted} expected at character {}",
            self.text,
            self.at + 1
        )
    }

    fn blanks(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.blanks();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut x = self.product()?;
        loop {
            if self.eat(b'+') {
                x += self.product()?;
            } else if self.eat(b'-') {
                x -= self.product()?;
            } else {
                return Ok(x);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut x = self.power()?;
        loop {
            if self.eat(b'*') {
                x *= self.power()?;
            } else if self.eat(b'/') {
                x /= self.power()?;
            } else if self.eat(b'%') {
                x %= self.power()?;
            } else {
                return Ok(x);
            }
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let x = self.unary()?;
        if self.eat(b'^') {
            return Ok(x.powf(self.power()?));
        }
        Ok(x)
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.eat(b'-') {
            return Ok(-self.unary()?);
        }
        let x = if self.eat(b'(') {
            let x = self.sum()?;
            if !self.eat(b')') {
                return Err(self.bad("')'"));
            }
            x
        } else {
            self.number()?
        };
        // A suffix after a number or a parenthesis multiplies it.
        let start = self.at;
        while self.s.get(self.at).is_some_and(u8::is_ascii_alphabetic) {
            self.at += 1;
        }
        if start == self.at {
            return Ok(x);
        }
        let u = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
        match (self.unit)(u) {
            Some(m) => Ok(x * m),
            None => {
                self.at = start;
                Err(self.bad(&format!("a known unit instead of '{u}'")))
            }
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        self.blanks();
        let rest = &self.s[self.at..];
        if rest.starts_with(b"0x") || rest.starts_with(b"0X") {
            let n = rest[2..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
            let h = std::str::from_utf8(&rest[2..2 + n]).unwrap_or("");
            let x = u64::from_str_radix(h, 16).map_err(|_| self.bad("hex digits"))?;
            self.at += 2 + n;
            return Ok(x as f64);
        }
        let mut n = rest
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'.')
            .count();
        // An exponent: 1e3, 2.5E-1.
        if n > 0 && matches!(rest.get(n), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(rest.get(n + 1), Some(b'-' | b'+')));
            let digits = rest[n + 1 + sign..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if digits > 0 {
                n += 1 + sign + digits;
            }
        }
        let t = std::str::from_utf8(&rest[..n]).unwrap_or("");
        let x: f64 = t.parse().map_err(|_| self.bad("a number"))?;
        self.at += n;
        Ok(x)
    }
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
    if t.starts_with('(') {
        // Bare numbers in `unit` seconds, suffixed ones in theirs.
        let x = arithmetic(t, time_unit)?;
        let suffixed = t.contains(|c: char| c.is_ascii_alphabetic() && c != 'x' && c != 'X');
        return Ok(if suffixed { x } else { x * unit });
    }
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = (&t[..end], t[end..].trim().to_ascii_lowercase());
    let mult = match suffix.as_str() {
        "" => unit,
        u => time_unit(u).ok_or_else(|| {
            format!("'{v}' has an unknown time unit '{suffix}'; expected us, ms, s, m, h or d")
        })?,
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{v}' is not a time such as 60, 5m or 250ms"))?;
    Ok(n * mult)
}

/// The longest pattern fio takes (its MAX_PATTERN_SIZE).
pub const MAX_PATTERN: usize = 512;

/// fio's data pattern (`verify_pattern`, `buffer_pattern`), read as fio's pattern parser reads
/// it, one piece after the other: `"a string"` (its bytes), `'a file'` (the bytes it holds, up
/// to 512), hex numbers (`0xaa555aa5`: the bytes as written, an odd digit count padded in
/// front; `0xff0x14` is two numbers), and decimal numbers from -2^31 to 2^31-1 (their bytes
/// from the least significant, a negative one four bytes; a decimal ends where a `0x` starts,
/// so `-120xdeadface` is -12 then 0xdeadface).
pub fn pattern(v: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = v.trim();
    while !rest.is_empty() {
        if let Some(q) = rest.strip_prefix('"') {
            let end = q
                .find('"')
                .ok_or_else(|| format!("'{v}' has a string without its closing \""))?;
            out.extend_from_slice(&q.as_bytes()[..end]);
            rest = &q[end + 1..];
        } else if let Some(q) = rest.strip_prefix('\'') {
            let end = q
                .find('\'')
                .ok_or_else(|| format!("'{v}' has a file name without its closing '"))?;
            let name = &q[..end];
            let bytes = std::fs::read(name)
                .map_err(|e| format!("cannot read the pattern file {name}: {e}"))?;
            out.extend_from_slice(&bytes[..bytes.len().min(MAX_PATTERN)]);
            rest = &q[end + 1..];
        } else if let Some(h) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let mut end = h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len());
            // `0xff0x14`: the run's last 0 starts the next number.
            if end > 1 && h[end..].starts_with(['x', 'X']) && h[..end].ends_with('0') {
                end -= 1;
            }
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
            rest = &h[end..];
        } else if rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
            // A decimal ends at the next "0x", or at its last digit.
            let sign = usize::from(rest.starts_with(['-', '+']));
            let mut end = sign
                + rest[sign..]
                    .find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(rest.len() - sign);
            if let Some(x) = rest[..end.min(rest.len())].find("0x").or_else(|| {
                rest.find(['x', 'X'])
                    .filter(|&x| x > sign && x == end && rest[..x].ends_with('0'))
                    .map(|x| x - 1)
            }) {
                end = x;
            }
            let n: i64 = rest[..end]
                .parse()
                .map_err(|_| format!("'{v}': '{}' is not a decimal number", &rest[..end]))?;
            if n < i64::from(i32::MIN) || n > i64::from(i32::MAX) {
                return Err(format!(
                    "'{v}': {n} is outside -2147483648..2147483647, what a pattern's decimal takes"
                ));
            }
            let mut u = n as i32 as u32;
            if u == 0 {
                out.push(0);
            }
            while u > 0 {
                out.push((u & 0xff) as u8);
                u >>= 8;
            }
            rest = &rest[end..];
        } else if rest.starts_with('%') {
            return Err(format!(
                "'{v}': formats such as %o (each block's offset) are not supported; give numbers, \"strings\" and 'files'"
            ));
        } else {
            return Err(format!(
                "'{v}' is not a pattern of hex numbers (0xaa55), decimal numbers, \"strings\" or 'files'"
            ));
        }
        rest = rest.trim_start();
    }
    if out.is_empty() {
        return Err(format!("'{v}' is an empty pattern"));
    }
    if out.len() > MAX_PATTERN {
        return Err(format!(
            "'{v}' is {} bytes; fio takes patterns of up to {MAX_PATTERN}",
            out.len()
        ));
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
    fn sizes_and_arithmetic_as_fio_reads_them() {
        assert_eq!(bytes("4k"), Ok(4096));
        assert_eq!(bytes("4KB"), Ok(4096));
        // fio's kb_base=1024 keeps old job files' meaning: the i suffixes are powers of 1000.
        assert_eq!(bytes("4KiB"), Ok(4000));
        assert_eq!(bytes("1mi"), Ok(1_000_000));
        assert_eq!(bytes("1.5m"), Ok(1_572_864));
        assert_eq!(bytes("0x1000"), Ok(4096));
        assert_eq!(bytes("(4k*1024)"), Ok(4 << 20));
        assert_eq!(bytes("((1+2)*3)k"), Ok(9 * 1024));
        assert_eq!(bytes("(2^10 - 24)"), Ok(1000));
        assert_eq!(bytes("(0x10 * -(-2))"), Ok(32));
        assert_eq!(int("(64/4)"), Ok(16));
        assert_eq!(seconds("(1+2)", 1.0), Ok(3.0));
        assert_eq!(seconds("(2*1m)", 1.0), Ok(120.0));
        assert!(bytes("(4k*)").unwrap_err().contains("character"));
        assert!(bytes("(4q)").unwrap_err().contains("unit"));
        assert!(bytes("(1-2)").is_err());
        assert!(bytes("(1/0)").is_err());
        assert!(bytes("4q").unwrap_err().contains("unknown size unit"));
    }

    #[test]
    fn patterns_as_fio_reads_them() {
        assert_eq!(pattern("0xaa555aa5"), Ok(vec![0xaa, 0x55, 0x5a, 0xa5]));
        assert_eq!(pattern("0xabc"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(pattern("258"), Ok(vec![2, 1]));
        assert_eq!(pattern("0xff\"ab\""), Ok(vec![0xff, b'a', b'b']));
        assert!(pattern("%o").unwrap_err().contains("offset"));
        assert!(pattern("zz").is_err());
        // fio's own examples of its pattern parser.
        assert_eq!(pattern("-1024"), Ok(vec![0x00, 0xfc, 0xff, 0xff]));
        assert_eq!(pattern("66"), Ok(vec![0x42]));
        assert_eq!(pattern("0xFF0X1"), Ok(vec![0xff, 0x01]));
        assert_eq!(
            pattern("\"123\"0xFFeeCC"),
            Ok(vec![0x31, 0x32, 0x33, 0xff, 0xee, 0xcc])
        );
        assert_eq!(
            pattern("-100xab\"1\""),
            Ok(vec![0xf6, 0xff, 0xff, 0xff, 0xab, 0x31])
        );
        assert_eq!(
            pattern("\"abcd\"-120xdeadface"),
            Ok(vec![
                b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff, 0xde, 0xad, 0xfa, 0xce
            ])
        );
        assert_eq!(pattern("0"), Ok(vec![0]));
        assert!(pattern("4294967296").is_err());
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("p");
        std::fs::write(&f, [7u8; 600]).unwrap();
        let p = pattern(&format!("'{}'", f.display())).unwrap();
        assert_eq!((p.len(), p[0], p[511]), (MAX_PATTERN, 7, 7));
        assert!(
            pattern(&format!("'{}'0x01", f.display())).is_err(),
            "over 512 bytes"
        );
        assert!(pattern("'/nonexistent/p'")
            .unwrap_err()
            .contains("cannot read"));
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
