//! Turns byte offsets in a study file into line:column and a dotted key path, so errors can
//! point at the place a person has to edit.

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The dotted key path at `offset`, from the table header above it and the keys on its line:
/// `stacks[1].mkfs`, `workloads[0].set.samples`, `repeats`. `None` when nothing names a key.
pub fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let mut header: Option<String> = None;
    let mut counts: Vec<(String, usize)> = Vec::new();
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    for line in text[..line_start].lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = name.trim().to_string();
            let n = match counts.iter_mut().find(|(k, _)| *k == name) {
                Some((_, c)) => {
                    *c += 1;
                    *c
                }
                None => {
                    counts.push((name.clone(), 0));
                    0
                }
            };
            header = Some(format!("{name}[{n}]"));
        } else if let Some(name) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
            // `[workloads.set]` inside the latest `[[workloads]]` entry.
            let name = name.trim();
            header = Some(match name.split_once('.') {
                Some((arr, rest)) => match counts.iter().find(|(k, _)| k == arr) {
                    Some((_, c)) => format!("{arr}[{c}].{rest}"),
                    None => name.to_string(),
                },
                None => name.to_string(),
            });
        }
    }
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let keys = keys_on_line(&text[line_start..line_end], offset - line_start);
    let mut parts: Vec<String> = header.into_iter().collect();
    match keys.as_slice() {
        [] => {}
        [k] => parts.push(k.clone()),
        [first, .., last] => {
            parts.push(first.clone());
            parts.push(last.clone());
        }
    }
    (!parts.is_empty()).then(|| parts.join("."))
}

/// Keys (`key =`) that start before `upto` on `line`; also the key `upto` points into.
fn keys_on_line(line: &str, upto: usize) -> Vec<String> {
    let b = line.as_bytes();
    let mut keys = Vec::new();
    let mut i = 0;
    let mut in_str: Option<u8> = None;
    let mut token_start: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = in_str {
            if c == b'\\' && q == b'"' {
                i += 2;
                continue;
            }
            if c == q {
                in_str = None;
            }
            i += 1;
            continue;
        }
        if c == b'#' {
            break;
        }
        if c == b'"' || c == b'\'' {
            in_str = Some(c);
            token_start.get_or_insert(i);
            i += 1;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.' {
            token_start.get_or_insert(i);
        } else if c == b'=' {
            if let Some(s) = token_start {
                if s <= upto {
                    let k = line[s..i].trim().trim_matches(|ch| ch == '"' || ch == '\'');
                    keys.push(k.to_string());
                }
            }
            token_start = None;
        } else if !c.is_ascii_whitespace() {
            token_start = None;
        }
        i += 1;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let t = "a = 1\nbé = 2\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, t.find('2').unwrap()), (2, 6));
    }

    #[test]
    fn key_paths() {
        let t = "name = \"x\"\nrepeats = -1\n[[stacks]]\nname = \"a\"\n[[stacks]]\nmkfs = 3\n\
                 [[workloads]]\nset = { samples = \"x\", io_size = 1 }\n[quick]\ndevice = 1\n";
        let at = |needle: &str| key_at(t, t.find(needle).unwrap());
        assert_eq!(at("-1").as_deref(), Some("repeats"));
        assert_eq!(at("3").as_deref(), Some("stacks[1].mkfs"));
        assert_eq!(at("\"x\",").as_deref(), Some("workloads[0].set.samples"));
        assert_eq!(at("1 }").as_deref(), Some("workloads[0].set.io_size"));
        assert_eq!(at("1\n").as_deref(), Some("repeats"));
        assert_eq!(key_at(t, t.len() - 2).as_deref(), Some("quick.device"));
        assert_eq!(at("name = \"a\"").as_deref(), Some("stacks[0].name"));
    }
}
