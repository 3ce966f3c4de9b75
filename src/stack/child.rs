//! External tools that a stop request ends. mkfs zeroing an 8 TB disk's inode tables, or a
//! filesystem's checker, can run for many minutes; a SIGINT or SIGTERM sent to iotrial alone
//! (a scheduler's or a container runtime's, which does not reach its process group as a
//! terminal's Ctrl-C does) must end the tool and let the run release what it made, not wait
//! for the tool to finish.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// How long [`wait_or_stop`] sleeps between looks at the stop flag.
const TICK_NS: i64 = 100_000_000;

/// Waits until process `pid` (a child of this process, not yet reaped) exits; once `stop` is
/// set, sends it one SIGTERM (a second would end an iotrial child at once, before it released
/// what it made). Returns at once when the process cannot be watched (already reaped); the
/// caller's wait then reaps or fails.
pub fn wait_or_stop(pid: i32, stop: &AtomicBool) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let Some(p) = rustix::process::Pid::from_raw(pid) else {
        return;
    };
    let Ok(fd) = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) else {
        return;
    };
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: TICK_NS,
    };
    let mut sent = false;
    loop {
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        if poll(&mut fds, Some(&tick)).unwrap_or(0) > 0 {
            return;
        }
        if !sent && stop.load(Ordering::Relaxed) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::TERM);
            sent = true;
        }
    }
}

/// How a tool run by [`output_or_stop`] ended.
#[derive(Debug)]
pub enum Ended {
    /// It ran to its end (whatever its exit status): its output.
    Ran(Output),
    /// The stop flag was set while it ran; it was ended with SIGTERM.
    Stopped,
}

/// Runs `cmd` with standard input closed and its output collected, as
/// [`Command::output`] does, but ends it when `stop` is set meanwhile.
pub fn output_or_stop(cmd: &mut Command, stop: &AtomicBool) -> std::io::Result<Ended> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Each pipe is drained by its own thread, so a tool that fills one never blocks.
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    wait_or_stop(child.id() as i32, stop);
    let status = child.wait()?;
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if stop.load(Ordering::Relaxed) {
        return Ok(Ended::Stopped);
    }
    Ok(Ended::Ran(Output {
        status,
        stdout,
        stderr,
    }))
}

/// Reads `pipe` to its end in a thread of its own; the bytes read.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn a_tool_that_ends_by_itself_gives_its_output_and_status() {
        let stop = AtomicBool::new(false);
        let mut cmd = Command::new("ls");
        cmd.args(["-d", "/", "/no-such-path-iotrial"]);
        let Ended::Ran(o) = output_or_stop(&mut cmd, &stop).unwrap() else {
            panic!("not stopped");
        };
        assert_eq!(String::from_utf8_lossy(&o.stdout), "/\n");
        assert!(String::from_utf8_lossy(&o.stderr).contains("no-such-path-iotrial"));
        assert!(!o.status.success());
    }

    #[test]
    fn a_stop_ends_a_tool_that_would_run_for_an_hour() {
        let stop = AtomicBool::new(true);
        let mut cmd = Command::new("sleep");
        cmd.arg("3600");
        assert!(matches!(
            output_or_stop(&mut cmd, &stop).unwrap(),
            Ended::Stopped
        ));
    }

    #[test]
    fn the_stopped_tool_is_ended_by_sigterm() {
        let stop = AtomicBool::new(true);
        let mut child = Command::new("sleep").arg("3600").spawn().unwrap();
        wait_or_stop(child.id() as i32, &stop);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }
}
