//! Built-in studies: the seeds' experiments, shipped as study files under `studies/` and
//! embedded in the binary, so `iotrial study dvr` works anywhere and
//! `iotrial study studies/dvr.toml` runs the same file.

use super::error::StudyError;
use super::plan::file::{self, Origin, Study};
use std::path::Path;

/// Name, path in the source tree, and text of every built-in study.
const BUILTINS: &[(&str, &str, &str)] = &[
    (
        "dvr",
        "studies/dvr.toml",
        include_str!("../../studies/dvr.toml"),
    ),
    (
        "dvr-capacity",
        "studies/dvr-capacity.toml",
        include_str!("../../studies/dvr-capacity.toml"),
    ),
    (
        "dvr-powercut",
        "studies/dvr-powercut.toml",
        include_str!("../../studies/dvr-powercut.toml"),
    ),
    (
        "ext4-powercut",
        "studies/ext4-powercut.toml",
        include_str!("../../studies/ext4-powercut.toml"),
    ),
    (
        "streaming",
        "studies/streaming.toml",
        include_str!("../../studies/streaming.toml"),
    ),
    (
        "cameras",
        "studies/cameras.toml",
        include_str!("../../studies/cameras.toml"),
    ),
    (
        "cf-cacti",
        "studies/cf-cacti.toml",
        include_str!("../../studies/cf-cacti.toml"),
    ),
    (
        "fsck-scaling",
        "studies/fsck-scaling.toml",
        include_str!("../../studies/fsck-scaling.toml"),
    ),
    (
        "smr-metadata",
        "studies/smr-metadata.toml",
        include_str!("../../studies/smr-metadata.toml"),
    ),
];

/// One line of `iotrial list studies`.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltinInfo {
    pub name: String,
    pub description: String,
    pub stacks: usize,
    pub workloads: usize,
    /// The study's file in the source tree (`studies/dvr.toml`).
    pub path: String,
}

/// Names of the built-in studies.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|b| b.0).collect()
}

/// The built-in study `name`, parsed.
pub fn get(name: &str) -> Option<Result<Study, StudyError>> {
    BUILTINS.iter().find(|b| b.0 == name).map(|(n, p, text)| {
        file::parse(
            text,
            &Origin::Builtin {
                name: n.to_string(),
                path: p.to_string(),
            },
        )
    })
}

/// Every built-in study, for `iotrial list studies`.
pub fn list() -> Result<Vec<BuiltinInfo>, StudyError> {
    BUILTINS
        .iter()
        .map(|(name, path, _)| {
            let s = get(name).expect("listed")?;
            Ok(BuiltinInfo {
                name: name.to_string(),
                description: s.description,
                stacks: s.stacks.len(),
                workloads: s.workloads.len(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// A built-in study by name, else the study file at that path.
pub fn load(name_or_path: &str) -> Result<Study, StudyError> {
    if let Some(s) = get(name_or_path) {
        return s;
    }
    let path = Path::new(name_or_path);
    if !path.exists() {
        return Err(StudyError::NotFound {
            name: name_or_path.to_string(),
            builtins: names().join(", "),
        });
    }
    file::read(path)
}
