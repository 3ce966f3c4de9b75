//! Keeping the host's CPUs out of idle sleep while a device is timed (`device validate
//! --poll-idle`). A CPU that sleeps in idle between two I/Os wakes late when the next one
//! completes (tens of µs in a virtual machine, whose halted CPU the hypervisor has to run
//! again), and by how much varies from I/O to I/O: that lands in every response time measured,
//! on the device and on its twin alike, and widens both distributions. Holding the kernel's
//! CPU latency limit (`/dev/cpu_dma_latency`, PM QoS) at 0 µs keeps idle CPUs polling
//! instead, as cyclictest does; the kernel drops the request when the file is closed, so it
//! ends with the process however the process ends.

use crate::cause::{Cause, HasCause};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The kernel's CPU latency request file.
pub const LATENCY_FILE: &str = "/dev/cpu_dma_latency";

/// Why the CPUs could not be kept out of idle sleep.
#[derive(Debug, thiserror::Error)]
pub enum IdleError {
    /// The file could not be opened or written (not root, a kernel without PM QoS).
    #[error("keep the CPUs out of idle sleep: {path}: {source}")]
    Hold {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl HasCause for IdleError {
    fn why(&self) -> Cause {
        Cause::Host
    }
}

/// While it lives, the host's idle CPUs poll instead of sleeping.
#[derive(Debug)]
pub struct PollIdle {
    _request: File,
}

impl PollIdle {
    /// Asks the kernel for a CPU latency of 0 µs through [`LATENCY_FILE`].
    pub fn hold() -> Result<PollIdle, IdleError> {
        PollIdle::hold_at(Path::new(LATENCY_FILE))
    }

    /// Asks for a CPU latency of 0 µs through the request file at `path`.
    fn hold_at(path: &Path) -> Result<PollIdle, IdleError> {
        let failed = |source| IdleError::Hold {
            path: path.to_path_buf(),
            source,
        };
        let mut request = File::options().write(true).open(path).map_err(failed)?;
        // The request is a binary 32-bit value in µs.
        request.write_all(&0i32.to_ne_bytes()).map_err(failed)?;
        Ok(PollIdle { _request: request })
    }
}

/// The CPU latency limit in force, µs (the smallest request held by any process; the
/// kernel's default, 2 000 000 000, when none is).
pub fn latency_limit_us() -> std::io::Result<i32> {
    let mut b = [0u8; 4];
    File::open(LATENCY_FILE)?.read_exact(&mut b)?;
    Ok(i32::from_ne_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Needs root and a kernel with PM QoS; with `CI` set, a skip fails.
    #[test]
    fn the_limit_is_0_while_held_and_released_when_dropped() {
        if let Err(why) = PollIdle::hold().map(drop) {
            assert!(std::env::var_os("CI").is_none(), "skipped under CI: {why}");
            eprintln!("skipped: {why}");
            return;
        }
        let before = latency_limit_us().unwrap();
        let held = PollIdle::hold().unwrap();
        assert_eq!(latency_limit_us().unwrap(), 0);
        drop(held);
        // Back to what it was: the kernel's default, or another process's own request.
        assert_eq!(latency_limit_us().unwrap(), before);
    }

    #[test]
    fn a_file_that_cannot_be_opened_says_which() {
        let e = PollIdle::hold_at(Path::new("/nonexistent/cpu_dma_latency")).unwrap_err();
        assert_eq!(e.why(), Cause::Host);
        let text = e.to_string();
        assert!(text.contains("/nonexistent/cpu_dma_latency"), "{text}");
    }
}
