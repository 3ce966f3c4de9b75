//! JSON values written as YAML documents, in the block style Kubernetes manifests are read in:
//! mappings and sequences indented by two under their key, strings double-quoted (JSON's escapes are YAML's),
//! text of several lines as a literal block (`|`).

use serde_json::Value as Json;
use std::fmt::Write;

/// Words YAML 1.1 (which Kubernetes' parser follows) reads as booleans or null.
const RESERVED: &[&str] = &["y", "n", "yes", "no", "on", "off", "true", "false", "null"];

/// A mapping key, bare when it is plainly a name (and no word YAML reads otherwise).
fn key(k: &str) -> String {
    let bare = !RESERVED.contains(&k.to_ascii_lowercase().as_str())
        && !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c))
        && k.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    if bare {
        k.to_string()
    } else {
        Json::String(k.to_string()).to_string()
    }
}

/// A scalar on the line of its key or dash; None for a value that needs lines of its own.
fn inline(v: &Json) -> Option<String> {
    match v {
        Json::Null => Some("null".into()),
        Json::Bool(b) => Some(b.to_string()),
        Json::Number(n) => Some(n.to_string()),
        Json::String(s) if s.contains('\n') && !s.starts_with([' ', '\t']) => None,
        Json::String(s) => Some(Json::String(s.clone()).to_string()),
        Json::Array(a) if a.is_empty() => Some("[]".into()),
        Json::Object(o) if o.is_empty() => Some("{}".into()),
        _ => None,
    }
}

/// A literal block of `s` at `indent`, with the chomping its trailing newlines need.
fn literal(out: &mut String, s: &str, indent: usize) {
    let chomp = match s.len() - s.trim_end_matches('\n').len() {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let _ = writeln!(out, "|{chomp}");
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{:indent$}{line}", "");
        }
    }
}

fn node(out: &mut String, v: &Json, indent: usize) {
    match v {
        Json::Object(o) => {
            for (k, x) in o {
                let _ = write!(out, "{:indent$}{}:", "", key(k));
                value_after(out, x, indent);
            }
        }
        Json::Array(a) => {
            for x in a {
                let _ = write!(out, "{:indent$}-", "");
                match (inline(x), x) {
                    (Some(s), _) => {
                        let _ = writeln!(out, " {s}");
                    }
                    (None, Json::Object(o)) => {
                        // The first key on the dash's line, the rest under it.
                        let mut first = true;
                        for (k, y) in o {
                            if first {
                                let _ = write!(out, " {}:", key(k));
                                first = false;
                            } else {
                                let _ = write!(out, "{:w$}{}:", "", key(k), w = indent + 2);
                            }
                            value_after(out, y, indent + 2);
                        }
                    }
                    (None, other) => {
                        out.push('\n');
                        node(out, other, indent + 2);
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{:indent$}{}", "", inline(other).unwrap_or_default());
        }
    }
}

/// The value of a key whose `key:` is written at `indent`.
fn value_after(out: &mut String, v: &Json, indent: usize) {
    match (inline(v), v) {
        (Some(s), _) => {
            let _ = writeln!(out, " {s}");
        }
        (None, Json::String(s)) => {
            out.push(' ');
            literal(out, s, indent + 2);
        }
        (None, other) => {
            out.push('\n');
            node(out, other, indent + 2);
        }
    }
}

/// `docs` as a stream of YAML documents, each after `---`.
pub fn documents(docs: &[Json]) -> String {
    let mut out = String::new();
    for d in docs {
        out.push_str("---\n");
        node(&mut out, d, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_style() {
        let y = documents(&[json!({
            "apiVersion": "batch/v1",
            "spec": {"completions": 3, "on": true, "empty": {}, "none": []},
            "containers": [{"name": "t", "args": ["a b", "--x"]}, "plain"],
            "data": {"study.toml": "a = 1\n\nb = \"2\"\n"},
        })]);
        assert_eq!(
            y,
            "---\napiVersion: \"batch/v1\"\n\
             containers:\n  - args:\n      - \"a b\"\n      - \"--x\"\n    name: \"t\"\n  - \"plain\"\n\
             data:\n  study.toml: |\n    a = 1\n\n    b = \"2\"\n\
             spec:\n  completions: 3\n  empty: {}\n  none: []\n  \"on\": true\n"
        );
    }
}
