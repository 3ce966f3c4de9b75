//! Every command and sysfs write a stack build does goes through [`Actions`]: run for real (and
//! logged, so result.json can say exactly what was done), or, with `--dry-run`, only logged.

use super::child::{output_or_stop, Ended};
use super::{sys, StackError};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs or logs system actions.
#[derive(Debug, Default)]
pub struct Actions {
    pub dry_run: bool,
    /// Every action, in order, as a line a person can read (commands as typed).
    pub log: Vec<String>,
    /// The run's stop flag: when it is set while a command runs, the command is ended and
    /// [`Actions::run`] answers [`StackError::Interrupted`].
    stop: Option<Arc<AtomicBool>>,
}

impl Actions {
    pub fn new(dry_run: bool) -> Self {
        Actions {
            dry_run,
            log: Vec::new(),
            stop: None,
        }
    }

    /// These actions, with commands that `stop` ends ([`Actions::run`]).
    pub fn stopped_by(mut self, stop: &Arc<AtomicBool>) -> Self {
        self.stop = Some(stop.clone());
        self
    }

    /// Runs `program args`; in a dry run returns an empty string. With a stop flag
    /// ([`Actions::stopped_by`]), a stop ends the command and answers
    /// [`StackError::Interrupted`].
    pub fn run(&mut self, program: &str, args: &[String]) -> Result<String, StackError> {
        self.log.push(sys::display_command(program, args));
        if self.dry_run {
            return Ok(String::new());
        }
        let Some(stop) = &self.stop else {
            return sys::run(program, args).map_err(StackError::Command);
        };
        let cmd = sys::display_command(program, args);
        match output_or_stop(Command::new(program).args(args), stop) {
            Err(e) => Err(StackError::Command(format!("{cmd}: {e}"))),
            Ok(Ended::Stopped) => Err(StackError::Interrupted),
            Ok(Ended::Ran(out)) => sys::finished(program, args, out).map_err(StackError::Command),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_ends_a_command_of_a_build_and_says_interrupted() {
        let stop = Arc::new(AtomicBool::new(true));
        let mut a = Actions::new(false).stopped_by(&stop);
        let r = a.run("sleep", &sys::args(&["3600"]));
        assert!(matches!(r, Err(StackError::Interrupted)), "{r:?}");
        assert_eq!(a.log, ["sleep 3600"]);
    }

    #[test]
    fn a_command_a_stop_could_end_still_gives_its_output_or_its_failure() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut a = Actions::new(false).stopped_by(&stop);
        assert_eq!(a.run("echo", &sys::args(&["made"])).unwrap(), "made\n");
        let Err(StackError::Command(e)) = a.run("ls", &sys::args(&["/no-such-path-iotrial"]))
        else {
            panic!("ls of a missing path succeeded");
        };
        // The command, its status, then its own message, which names the path again.
        let (command, message) = e.split_once("): ").unwrap();
        assert_eq!(command, "ls /no-such-path-iotrial failed (exit status: 2");
        assert!(message.contains("no-such-path-iotrial"), "{e}");
    }
}
