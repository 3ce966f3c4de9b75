//! Twin files: a device twin kept as a file (`mydisk.twin`), as `device characterize --out`
//! writes it and as the seeds' twins ship: comment lines citing where each value comes from,
//! and one line, the device spec (`emu:hdd,rpm=7212,...`). Wherever a device spec is taken
//! (`--target`, a study's devices, `--device`) a twin file is taken by its path
//! (`./mydisk.twin`, `/x/y.twin`) or by its name (`mydisk`), with keys after it overriding it
//! (`mydisk,scale=10`). Names are looked up in the directories of `IOTRIAL_TWINS`
//! (colon-separated), then `$XDG_CONFIG_HOME/iotrial/twins` (or `~/.config/iotrial/twins`),
//! then among the twins built into iotrial (the seeds', from `twins/` in its source).

use std::path::{Path, PathBuf};

/// The file name extension of twin files.
pub const EXT: &str = "twin";

/// The seeds' twins, built in: (name, text).
pub static BUILT_IN: &[(&str, &str)] = &[
    ("wd80emaz", include_str!("../../../twins/wd80emaz.twin")),
    ("sata2-2tb", include_str!("../../../twins/sata2-2tb.twin")),
    ("cmr-8tb", include_str!("../../../twins/cmr-8tb.twin")),
    ("dm-smr-8tb", include_str!("../../../twins/dm-smr-8tb.twin")),
    ("lexar", include_str!("../../../twins/lexar.twin")),
    ("transcend", include_str!("../../../twins/transcend.twin")),
    ("duracell", include_str!("../../../twins/duracell.twin")),
];

/// A twin file that could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TwinFileError {
    #[error("twin file {path}: {message}")]
    Bad { path: String, message: String },
    #[error("no twin named '{name}' in {looked}; twins are files NAME.twin (`iotrial list models` lists those found)")]
    NotFound { name: String, looked: String },
}

/// A twin found: where it came from, and its spec.
#[derive(Debug, Clone, PartialEq)]
pub struct TwinFile {
    pub name: String,
    /// Its path, or `built in`.
    pub source: String,
    /// The device spec (`emu:...`).
    pub spec: String,
    /// Its first comment line.
    pub summary: String,
}

/// Reads a twin file's text: its one spec line and its first comment.
pub fn parse(name: &str, source: &str, text: &str) -> Result<TwinFile, TwinFileError> {
    let bad = |message: String| TwinFileError::Bad {
        path: source.to_string(),
        message,
    };
    let specs: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let [spec] = specs[..] else {
        return Err(bad(format!(
            "expected one device spec line (the rest '#' comments), found {}",
            specs.len()
        )));
    };
    if !spec.starts_with("emu:") {
        return Err(bad(format!("'{spec}' is not an emu: device spec")));
    }
    let summary = text
        .lines()
        .find_map(|l| l.trim().strip_prefix('#'))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    Ok(TwinFile {
        name: name.to_string(),
        source: source.to_string(),
        spec: spec.to_string(),
        summary,
    })
}

/// The directories twins are looked up in by name, in order.
pub fn dirs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var("IOTRIAL_TWINS")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect();
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
    if let Some(c) = config {
        out.push(c.join("iotrial").join("twins"));
    }
    out
}

/// Whether `head` (a spec's text before its first comma) names a twin: no `kind:` prefix.
pub fn names_a_twin(head: &str) -> bool {
    !head.is_empty() && !head.contains(':')
}

/// The twin `head` names: a path (it has a `/` or ends in `.twin`) or a name.
pub fn find(head: &str) -> Result<TwinFile, TwinFileError> {
    let is_path = head.contains('/') || head.ends_with(&format!(".{EXT}"));
    if is_path {
        let p = Path::new(head);
        let text = std::fs::read_to_string(p).map_err(|e| TwinFileError::Bad {
            path: head.to_string(),
            message: e.to_string(),
        })?;
        let name = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        return parse(&name, head, &text);
    }
    for d in dirs() {
        let p = d.join(format!("{head}.{EXT}"));
        if let Ok(text) = std::fs::read_to_string(&p) {
            return parse(head, &p.display().to_string(), &text);
        }
    }
    if let Some((n, text)) = BUILT_IN.iter().find(|(n, _)| *n == head) {
        return parse(n, "built in", text);
    }
    let mut looked: Vec<String> = dirs().iter().map(|d| d.display().to_string()).collect();
    looked.push("the built-in twins".into());
    Err(TwinFileError::NotFound {
        name: head.to_string(),
        looked: looked.join(", "),
    })
}

/// Every twin found by name: those of the directories (the first of a name wins), then the
/// built-in ones not shadowed.
pub fn all() -> Vec<TwinFile> {
    let mut out: Vec<TwinFile> = Vec::new();
    for d in dirs() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == EXT))
            .collect();
        paths.sort();
        for p in paths {
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if out.iter().any(|t| t.name == name) {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&p) {
                if let Ok(t) = parse(&name, &p.display().to_string(), &text) {
                    out.push(t);
                }
            }
        }
    }
    for (n, text) in BUILT_IN {
        if !out.iter().any(|t| t.name == *n) {
            if let Ok(t) = parse(n, "built in", text) {
                out.push(t);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::ModelSpec;

    /// Each built-in twin file is its seed's preset, every value written out: the same
    /// device as `drive=NAME` / `card=NAME`.
    #[test]
    fn built_in_twins_are_the_seeds_presets() {
        for (name, text) in BUILT_IN {
            let t = parse(name, "built in", text).unwrap();
            let file = ModelSpec::parse(t.spec.strip_prefix("emu:").unwrap()).unwrap();
            let key = if file.model.name == "flash" {
                "card"
            } else {
                "drive"
            };
            let preset = ModelSpec::parse(&format!("{},{key}={name}", file.model.name)).unwrap();
            assert_eq!(file.values, preset.values, "{name}");
            assert!(!t.summary.is_empty(), "{name}");
            // Every value the file sets is cited on a comment line naming it.
            for part in t.spec.split(',').skip(1) {
                let key = part.split('=').next().unwrap();
                assert!(
                    text.lines()
                        .any(|l| l.starts_with('#') && l.contains(&format!("{key} "))),
                    "{name}: {key} has no citation"
                );
            }
        }
    }

    #[test]
    fn twins_are_found_by_path_and_name_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mine.twin");
        std::fs::write(&p, "# my disk\n# rpm 7000: measured\nemu:hdd,rpm=7000\n").unwrap();
        let t = find(&p.display().to_string()).unwrap();
        assert_eq!(
            (t.name.as_str(), t.spec.as_str()),
            ("mine", "emu:hdd,rpm=7000")
        );
        assert_eq!(t.summary, "my disk");
        assert_eq!(find("wd80emaz").unwrap().source, "built in");
        assert!(matches!(
            find("nosuchtwin"),
            Err(TwinFileError::NotFound { .. })
        ));
        std::fs::write(&p, "# two\nemu:hdd\nemu:smr\n").unwrap();
        let e = find(&p.display().to_string()).unwrap_err().to_string();
        assert!(e.contains("one device spec line"), "{e}");
        std::fs::write(&p, "image:size=1GiB\n").unwrap();
        assert!(find(&p.display().to_string()).is_err());
        assert!(names_a_twin("mine") && !names_a_twin("emu:hdd"));
    }
}
