//! A `job` stream asks for io_uring on a kernel that refuses it: here the refusal is made by a
//! seccomp filter on the real binary (io_uring_setup fails with ENOSYS, as on a kernel built
//! without io_uring or with kernel.io_uring_disabled set). The run goes on with psync at queue
//! depth 1, does every I/O it was asked for, and result.json's warnings say so.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes io_uring_setup fail with ENOSYS in this process and its children.
fn deny_io_uring() -> std::io::Result<()> {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const RET_ERRNO: u32 = 0x0005_0000;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let f = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let filter = [
        f(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        f(JEQ_K, 0, 1, libc::SYS_io_uring_setup as u32),
        f(RET_K, 0, 0, RET_ERRNO | libc::ENOSYS as u32),
        f(RET_K, 0, 0, RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: plain prctl calls with a filter that outlives them.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[test]
fn io_uring_refused_by_the_kernel_falls_back_to_psync_with_a_warning() {
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let job = out.path().join("uring.fio");
    std::fs::write(
        &job,
        "[writer]\nrw=randwrite\nbs=4k\nsize=256k\nioengine=io_uring\niodepth=8\n",
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iotrial"));
    cmd.args([
        "run",
        &format!("fio:{}", job.display()),
        "--json",
        "--monitor",
        "none",
    ])
    .arg("--target")
    .arg(format!("dir:{}", target.path().display()))
    .arg("--out")
    .arg(out.path());
    // SAFETY: deny_io_uring only makes system calls, allowed between fork and exec.
    unsafe {
        cmd.pre_exec(deny_io_uring);
    }
    let run = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("io_uring: the kernel refused a ring") && warnings.contains("psync"),
        "{warnings}"
    );
    // 256 KiB in 4 KiB writes: every one done.
    assert_eq!(doc["verdict"]["groups"][0]["ios"], 64, "{}", doc["verdict"]);
}
