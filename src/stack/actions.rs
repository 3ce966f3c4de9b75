//! Every command and sysfs write a stack build does goes through [`Actions`]: run for real (and
//! logged, so result.json can say exactly what was done), or, with `--dry-run`, only logged.

use super::{sys, StackError};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs or logs system actions.
#[derive(Debug, Default)]
pub struct Actions {
    pub dry_run: bool,
    /// Every action, in order, as a line a person can read (commands as typed).
    pub log: Vec<String>,
}

impl Actions {
    pub fn new(dry_run: bool) -> Self {
        Actions {
            dry_run,
            log: Vec::new(),
        }
    }

    /// Runs `program args`; in a dry run returns an empty string.
    pub fn run(&mut self, program: &str, args: &[String]) -> Result<String, StackError> {
        self.log.push(sys::display_command(program, args));
        if self.dry_run {
            return Ok(String::new());
        }
        sys::run(program, args).map_err(StackError::Command)
    }

    /// Runs `program args` with `input` on its standard input.
    pub fn run_with_input(
        &mut self,
        program: &str,
        args: &[String],
        input: &str,
    ) -> Result<String, StackError> {
        self.log.push(format!(
            "{} <<< {:?}",
            sys::display_command(program, args),
            input
        ));
        if self.dry_run {
            return Ok(String::new());
        }
        let cmd = sys::display_command(program, args);
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| StackError::Command(format!("{cmd}: {e}")))?;
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(input.as_bytes())
            .map_err(|e| StackError::Command(format!("{cmd}: {e}")))?;
        let out = child
            .wait_with_output()
            .map_err(|e| StackError::Command(format!("{cmd}: {e}")))?;
        if !out.status.success() {
            return Err(StackError::Command(format!(
                "{cmd} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Writes `value` to a sysfs attribute.
    pub fn write_sysfs(&mut self, path: &Path, value: &str) -> Result<(), StackError> {
        self.log.push(format!("echo {value} > {}", path.display()));
        if self.dry_run {
            return Ok(());
        }
        std::fs::write(path, value)
            .map_err(|e| StackError::io(format!("write '{value}' to {}", path.display()), e))
    }

    /// Records an action that is not a command (creating a file, filling regions).
    pub fn note(&mut self, text: impl Into<String>) {
        self.log.push(format!("# {}", text.into()));
    }
}
