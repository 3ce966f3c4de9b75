//! iotrial's verify headers are fio's own, for every checksum both implement (md5, crc64, crc32,
//! crc32c, crc16, crc7, sha256, sha512, xxhash, sha1, meta): blocks fio wrote with `verify=`
//! pass iotrial's checks, and blocks iotrial sealed pass `fio --verify_only`, which fails on one
//! flipped byte.

mod common;

use common::{ready, Need};
use iotrial::verify::{inspect, seal_block, BlockHeader, Checksum};
use std::path::Path;
use std::process::Command;

const BS: usize = 4096;
const SIZE: usize = 256 * 1024;

/// fio's arguments for a sequential write job over `file` checked with `verify`.
fn fio_job(file: &Path, verify: &str) -> Vec<String> {
    [
        "--name=v",
        "--ioengine=psync",
        "--rw=write",
        "--bs=4k",
        "--size=256k",
        "--randrepeat=1",
        "--output-format=terse",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("--filename={}", file.display()),
        format!("--verify={verify}"),
    ])
    .collect()
}

/// Runs fio; `--verify_state_save=0` keeps it from leaving its verify state file in the
/// working directory.
fn fio(args: &[String]) -> std::process::Output {
    Command::new("fio")
        .args(args)
        .arg("--verify_state_save=0")
        .output()
        .expect("run fio")
}

#[test]
fn blocks_fio_wrote_pass_iotrials_checks() {
    if !ready(
        "blocks_fio_wrote_pass_iotrials_checks",
        &[Need::Tool("fio")],
    ) {
        return;
    }
    for sum in Checksum::ALL
        .into_iter()
        .filter(|&c| c != Checksum::Pattern)
    {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data");
        let mut args = fio_job(&file, sum.name());
        args.push("--do_verify=0".into());
        let out = fio(&args);
        assert!(
            out.status.success(),
            "fio: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let data = std::fs::read(&file).unwrap();
        assert_eq!(data.len(), SIZE);
        let mut threads = std::collections::BTreeSet::new();
        for (i, block) in data.chunks(BS).enumerate() {
            let s =
                inspect(block, None).unwrap_or_else(|e| panic!("{}: block {i}: {e}", sum.name()));
            assert_eq!(s.checksum, sum);
            assert_eq!(s.header.offset, (i * BS) as u64, "{}", sum.name());
            assert_eq!(s.header.len as usize, BS);
            threads.insert(s.header.thread);
        }
        assert_eq!(threads.len(), 1, "one writer: {threads:?}");
    }
}

#[test]
fn blocks_iotrial_sealed_pass_fio_verify_only() {
    if !ready(
        "blocks_iotrial_sealed_pass_fio_verify_only",
        &[Need::Tool("fio")],
    ) {
        return;
    }
    for sum in Checksum::ALL
        .into_iter()
        .filter(|&c| !matches!(c, Checksum::Pattern | Checksum::Meta))
    {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data");
        let mut data: Vec<u8> = (0..SIZE as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 9) as u8)
            .collect();
        for (n, block) in data.chunks_mut(BS).enumerate() {
            let base = BlockHeader {
                offset: (n * BS) as u64,
                thread: 1,
                numberio: n as u16,
                time_sec: 1_764_000_000,
                ..Default::default()
            };
            seal_block(block, BS, &base, sum);
        }
        std::fs::write(&file, &data).unwrap();
        let mut args = fio_job(&file, sum.name());
        args.push("--verify_only".into());
        let out = fio(&args);
        assert!(
            out.status.success(),
            "fio --verify_only refused iotrial's {} blocks: {}{}",
            sum.name(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // One flipped byte in the data of the fifth block: fio must find it. (fio's sha512
        // field holds only some of the data's first and last bytes: the byte is among the
        // last.)
        data[5 * BS - 10] ^= 0x40;
        std::fs::write(&file, &data).unwrap();
        let out = fio(&args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && said.contains("verify"),
            "fio accepted a corrupted {} block: {said}",
            sum.name()
        );
    }
}
