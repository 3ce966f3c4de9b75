//! Sweeps: a list of values where a study file gives one expands into one workload (or one
//! stack) per value, named by it. A workload parameter's list is a TOML array
//! (`files = [100000, 500000]`) or the same in braces (`files = "{100000,500000}"`); a device's
//! is a brace list inside its spec (`emu:hdd,size={38GiB,72GiB}`). Several swept parameters of
//! one workload give every combination; brace lists in one stack's devices move together (six
//! drives of `size={4GiB,8GiB}` are six 4 GiB drives, then six 8 GiB ones).

use super::assign::Assignments;
use crate::params::ParamError;

/// One value of a sweep: the text with every brace list replaced by one of its values, and
/// the values chosen (for the name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub text: String,
    pub values: Vec<String>,
}

/// A brace list: where it stands in its text, and its values.
type List = (std::ops::Range<usize>, Vec<String>);

/// One choice of a stack's device sweep: the name suffix, the devices, the log device.
pub type SweptDevices = (String, Vec<String>, Option<String>);

/// The brace lists of `text` (`{a,b}`), in order; `Err` names what is malformed.
fn lists(text: &str) -> Result<Vec<List>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find('{').map(|i| i + at) {
        let close = text[open..]
            .find('}')
            .map(|i| i + open)
            .ok_or_else(|| format!("'{text}': a '{{' without its '}}'"))?;
        let values: Vec<String> = text[open + 1..close]
            .split(',')
            .map(|v| v.trim().to_string())
            .collect();
        if values.iter().any(String::is_empty) || text[open + 1..close].contains('{') {
            return Err(format!(
                "'{text}': a sweep is a list of values in braces, such as {{4GiB,8GiB}}"
            ));
        }
        out.push((open..close + 1, values));
        at = close + 1;
    }
    if text[at..].contains('}') {
        return Err(format!("'{text}': a '}}' without its '{{'"));
    }
    Ok(out)
}

/// Whether `text` holds a sweep.
pub fn is_sweep(text: &str) -> bool {
    text.contains('{')
}

/// The values of `text` with its brace lists taken together: value i of every list in the
/// i-th choice. Every list must have as many values. Text without braces is one choice.
pub fn together(text: &[&str]) -> Result<Vec<Vec<Choice>>, String> {
    let parsed: Vec<_> = text.iter().map(|t| lists(t)).collect::<Result<_, _>>()?;
    let n = parsed.iter().flatten().map(|(_, v)| v.len()).max();
    let Some(n) = n else {
        let one = text.iter().map(|t| Choice {
            text: t.to_string(),
            values: Vec::new(),
        });
        return Ok(vec![one.collect()]);
    };
    if parsed.iter().flatten().any(|(_, v)| v.len() != n) {
        return Err(format!(
            "the sweeps of {} list different numbers of values; lists that move together must be as long",
            text.join(" ")
        ));
    }
    Ok((0..n)
        .map(|i| {
            text.iter()
                .zip(&parsed)
                .map(|(t, ls)| {
                    let mut s = t.to_string();
                    for (r, v) in ls.iter().rev() {
                        s.replace_range(r.clone(), &v[i]);
                    }
                    Choice {
                        text: s,
                        values: ls.iter().map(|(_, v)| v[i].clone()).collect(),
                    }
                })
                .collect()
        })
        .collect())
}

/// A value as part of a name: characters a name may not hold become `_`.
pub fn name_part(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect()
}

/// The workloads a `set` sweeps to: every combination of its swept parameters' values (later
/// parameters vary fastest), each named `<name>-<param>-<value>...`; one `(name, set)` when
/// nothing is swept. A parameter assigned more than once sweeps by its last assignment.
pub fn workloads(name: &str, set: &Assignments) -> Result<Vec<(String, Assignments)>, ParamError> {
    let mut out = vec![(name.to_string(), Vec::new())];
    let last = |k: &str| set.0.iter().rposition(|(n, _)| n == k);
    for (i, (k, v)) in set.0.iter().enumerate() {
        if is_sweep(v) && last(k) != Some(i) {
            // A later assignment replaces this sweep.
            continue;
        }
        if !is_sweep(v) {
            for (_, a) in &mut out {
                a.push((k.clone(), v.clone()));
            }
            continue;
        }
        let values = together(&[v]).map_err(|e| ParamError::invalid(k, e))?;
        out = out
            .into_iter()
            .flat_map(|(n, a)| {
                values.iter().map(move |c| {
                    let mut a = a.clone();
                    a.push((k.clone(), c[0].text.clone()));
                    (format!("{n}-{k}-{}", name_part(&c[0].values[0])), a)
                })
            })
            .collect();
    }
    Ok(out.into_iter().map(|(n, a)| (n, Assignments(a))).collect())
}

/// The devices a stack's `devices` (and log device) sweep to, each with the name suffix of
/// its value: `[("", devices)]` when nothing is swept.
pub fn devices(devices: &[String], logdev: Option<&str>) -> Result<Vec<SweptDevices>, String> {
    let mut text: Vec<&str> = devices.iter().map(String::as_str).collect();
    text.extend(logdev);
    let choices = together(&text)?;
    let swept = text.iter().any(|t| is_sweep(t));
    Ok(choices
        .into_iter()
        .map(|mut c| {
            let log = logdev.map(|_| c.pop().expect("the log device's choice").text);
            let first = c.iter().find_map(|x| x.values.first().cloned());
            let suffix = match (swept, first) {
                (true, Some(v)) => format!("-{}", name_part(&v)),
                _ => String::new(),
            };
            (suffix, c.into_iter().map(|x| x.text).collect(), log)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Assignments {
        Assignments(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn a_list_expands_into_one_workload_per_value_named_by_it() {
        let got = workloads("fsck", &set(&[("files", "{1000, 2000}"), ("dirs", "10")])).unwrap();
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["fsck-files-1000", "fsck-files-2000"]);
        assert_eq!(got[1].1, set(&[("files", "2000"), ("dirs", "10")]));
        let two = workloads("f", &set(&[("a", "{1,2}"), ("b", "{4KiB,8KiB}")])).unwrap();
        let names: Vec<&str> = two.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "f-a-1-b-4KiB",
                "f-a-1-b-8KiB",
                "f-a-2-b-4KiB",
                "f-a-2-b-8KiB"
            ]
        );
        // A later assignment replaces an earlier sweep.
        let one = workloads("f", &set(&[("a", "{1,2}"), ("a", "3")])).unwrap();
        assert_eq!(one, vec![("f".into(), set(&[("a", "3")]))]);
    }

    #[test]
    fn device_lists_move_together() {
        let d = vec![
            "emu:hdd,size={38GiB,72GiB}".to_string(),
            "emu:hdd,size={38GiB,72GiB},scale=10".to_string(),
        ];
        let got = devices(&d, None).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, "-72GiB");
        assert_eq!(got[1].1[1], "emu:hdd,size=72GiB,scale=10");
        let plain = devices(&["image:size=1GiB".into()], Some("image:size=64MiB")).unwrap();
        assert_eq!(
            plain,
            vec![(
                String::new(),
                vec!["image:size=1GiB".into()],
                Some("image:size=64MiB".into())
            )]
        );
    }

    #[test]
    fn malformed_lists_say_what_a_sweep_is() {
        for bad in ["size={1,2", "size=1}", "size={1,,2}", "size={}"] {
            let e = together(&[bad]).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        let e = together(&["{1,2}", "{1,2,3}"]).unwrap_err();
        assert!(e.contains("as long"), "{e}");
    }
}
