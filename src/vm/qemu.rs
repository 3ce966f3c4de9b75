//! The guest's QEMU process: its command line (machine, CPUs, memory, kernel and initramfs,
//! the console in a file, the control channel on a virtio serial port, each of the stack's
//! devices as a virtio-blk disk with the chosen cache and AIO modes), starting it so that it
//! dies with the run, and the last lines of its console for errors.

use super::host::QEMU;
use crate::engine::cpus::CpuSet;
use crate::stack::spec::vm_key::{Accel, Cache};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Everything the command line is made from.
#[derive(Debug, Clone)]
pub struct Machine {
    pub qemu: PathBuf,
    pub accel: Accel,
    pub cpus: u32,
    pub memory: u64,
    pub kernel: PathBuf,
    pub initramfs: PathBuf,
    pub console: PathBuf,
    pub socket: PathBuf,
    pub cache: Cache,
    pub aio: &'static str,
    /// Block devices, in the order the guest's serial numbers `iotrial0`, `iotrial1`, ...
    pub disks: Vec<PathBuf>,
    /// Kernel modules the guest loads while it boots (`iotrial.modules=` on its command line).
    pub modules: Vec<String>,
    /// The host CPUs every QEMU thread runs on (its vCPUs, its I/O workers); None: every CPU.
    pub host_cpus: Option<CpuSet>,
}

/// The kernel command line argument that names the modules to load while booting.
pub const MODULES_ARG: &str = "iotrial.modules";

/// The serial number of disk `i`, by which the guest finds it.
pub fn serial(i: usize) -> String {
    format!("iotrial{i}")
}

impl Machine {
    /// QEMU's arguments.
    pub fn args(&self) -> Vec<String> {
        let (accel, cpu) = match self.accel {
            Accel::Kvm => ("kvm", "host"),
            _ => ("tcg", "max"),
        };
        let mut a: Vec<String> = [
            "-name",
            "iotrial-guest,debug-threads=on",
            "-machine",
            &format!("q35,accel={accel}"),
            "-cpu",
            cpu,
            "-smp",
            &self.cpus.to_string(),
            "-m",
            &format!("{}M", self.memory >> 20),
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
            "-kernel",
            &self.kernel.display().to_string(),
            "-initrd",
            &self.initramfs.display().to_string(),
            "-append",
            &self.cmdline(),
            "-chardev",
            &format!("file,id=console,path={}", self.console.display()),
            "-serial",
            "chardev:console",
            "-chardev",
            &format!("socket,id=ctl,path={}", self.socket.display()),
            "-device",
            "virtio-serial-pci",
            "-device",
            &format!("virtserialport,chardev=ctl,name={}", super::channel::PORT),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for (i, d) in self.disks.iter().enumerate() {
            a.push("-drive".into());
            a.push(format!(
                "file={},if=none,id=disk{i},format=raw,cache={},aio={}",
                d.display(),
                self.cache.name(),
                self.aio
            ));
            a.push("-device".into());
            a.push(format!("virtio-blk-pci,drive=disk{i},serial={}", serial(i)));
        }
        a
    }

    /// The guest kernel's command line.
    fn cmdline(&self) -> String {
        let mut c = "console=ttyS0 quiet panic=-1".to_string();
        if !self.modules.is_empty() {
            c.push_str(&format!(" {MODULES_ARG}={}", self.modules.join(",")));
        }
        c
    }

    /// Starts QEMU, on [`Machine::host_cpus`] when given; it is killed if this thread's
    /// process dies first.
    pub fn spawn(&self) -> std::io::Result<Child> {
        let cpus = self.host_cpus;
        let mut cmd = Command::new(&self.qemu);
        cmd.args(self.args())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: prctl and sched_setaffinity are async-signal-safe and pinning allocates
        // nothing; nothing else runs between fork and exec. Every thread QEMU starts inherits
        // the CPU set.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                match cpus {
                    Some(set) => set.pin_calling_thread(),
                    None => Ok(()),
                }
            });
        }
        cmd.spawn()
    }

    /// The command line as text, for the stack as built.
    pub fn command_line(&self) -> String {
        crate::stack::sys::display_command(QEMU, &self.args())
    }
}

/// QEMU's version line (`QEMU emulator version 7.2.x`).
pub fn version(qemu: &Path) -> String {
    Command::new(qemu)
        .arg("-version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// The last `n` lines of the guest's console.
pub fn console_tail(console: &Path, n: usize) -> String {
    let text = std::fs::read(console).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whether the console shows a kernel panic.
pub fn panicked(console: &Path) -> bool {
    std::fs::read(console).is_ok_and(|t| String::from_utf8_lossy(&t).contains("Kernel panic"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disks_carry_cache_aio_and_serials() {
        let m = Machine {
            qemu: QEMU.into(),
            accel: Accel::Tcg,
            cpus: 2,
            memory: 1 << 30,
            kernel: "/k".into(),
            initramfs: "/i".into(),
            console: "/w/console.log".into(),
            socket: "/w/ctl.sock".into(),
            cache: Cache::None,
            aio: "native",
            disks: vec!["/dev/loop3".into(), "/dev/loop4".into()],
            modules: vec!["xfs".into()],
            host_cpus: None,
        };
        let line = m.command_line();
        assert!(
            line.contains("-machine q35,accel=tcg -cpu max -smp 2 -m 1024M"),
            "{line}"
        );
        assert!(
            line.contains("file=/dev/loop4,if=none,id=disk1,format=raw,cache=none,aio=native"),
            "{line}"
        );
        assert!(
            line.contains("virtio-blk-pci,drive=disk1,serial=iotrial1"),
            "{line}"
        );
        assert!(line.contains("socket,id=ctl,path=/w/ctl.sock"), "{line}");
        assert!(
            line.contains("'console=ttyS0 quiet panic=-1 iotrial.modules=xfs'"),
            "{line}"
        );
    }

    #[test]
    fn the_console_tail_is_its_last_lines() {
        let d = tempfile::tempdir().unwrap();
        let c = d.path().join("console.log");
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&c, format!("{text}Kernel panic - not syncing: VFS\n")).unwrap();
        let tail = console_tail(&c, 20);
        assert_eq!(tail.lines().count(), 20);
        assert!(
            tail.starts_with("line 12") && tail.ends_with("not syncing: VFS"),
            "{tail}"
        );
        assert!(panicked(&c));
    }
}
