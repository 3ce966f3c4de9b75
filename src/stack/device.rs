//! Device specs as users write them: `dir:PATH` (a directory; no root needed). Parsing is
//! strict and every error says what is allowed.

use std::fmt;
use std::path::PathBuf;

/// Where a trial runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    /// An existing directory; streams get one file each inside a fresh subdirectory.
    Dir(PathBuf),
    /// A fresh temporary directory (the default target).
    TempDir,
}

impl DeviceSpec {
    /// Parses `dir:PATH`.
    pub fn parse(text: &str) -> Result<DeviceSpec, String> {
        let allowed = "allowed: dir:PATH";
        let Some((kind, rest)) = text.split_once(':') else {
            return Err(format!("'{text}' is not a device spec; {allowed}"));
        };
        match kind {
            "dir" if !rest.is_empty() => Ok(DeviceSpec::Dir(PathBuf::from(rest))),
            "dir" => Err(format!("'{text}' names no directory; {allowed}")),
            _ => Err(format!(
                "unknown device kind '{kind}' in '{text}'; {allowed}"
            )),
        }
    }

    /// Short name for result paths (`dir`).
    pub fn kind(&self) -> &'static str {
        "dir"
    }
}

impl fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Dir(p) => write!(f, "dir:{}", p.display()),
            DeviceSpec::TempDir => write!(f, "dir:(temporary directory)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_specs() {
        assert_eq!(
            DeviceSpec::parse("dir:/srv/media").unwrap(),
            DeviceSpec::Dir("/srv/media".into())
        );
        assert!(DeviceSpec::parse("dir:")
            .unwrap_err()
            .contains("names no directory"));
        assert!(DeviceSpec::parse("floppy:/dev/fd0")
            .unwrap_err()
            .contains("unknown device kind 'floppy'"));
        assert!(DeviceSpec::parse("/srv")
            .unwrap_err()
            .contains("allowed: dir:PATH"));
    }
}
