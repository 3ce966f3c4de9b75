//! fio's options of what writes carry: `verify` (every checksum of fio's but SHA-3, and meta
//! and pattern: fio's own header, byte for byte), `verify_interval`, `verify_pattern`, `do_verify`,
//! `verify_backlog`, `verify_fatal`; and without verifying, `buffer_pattern`, `zero_buffers`,
//! `refill_buffers`, `scramble_buffers`, `buffer_compress_percentage`, `buffer_compress_chunk`,
//! `dedupe_percentage`, `dedupe_mode`, `dedupe_working_set_percentage`, `dedupe_global`.

use crate::verify::Checksum;
use crate::workload::job::options::values::{pattern, Arg};
use crate::workload::job::options::{honoured, Opt};
use crate::workload::job::spec::{JobSpec, VerifySpec};

/// The job's verify settings, made with fio's defaults the first time an option asks.
fn verify_of(j: &mut JobSpec) -> &mut VerifySpec {
    j.verify.get_or_insert(VerifySpec {
        checksum: Checksum::Crc32c,
        interval: 0,
        pattern: None,
        check: true,
        backlog: 0,
        fatal: false,
        implied: false,
        state_save: false,
        state_load: false,
        experimental: false,
    })
}

fn verify(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    if v == "0" || v == "none" || v == "null" {
        j.verify = None;
        return Ok(());
    }
    let Some(c) = Checksum::parse(v) else {
        let known: Vec<&str> = Checksum::ALL.iter().map(|c| c.name()).collect();
        return Err(match v {
            "sha3-224" | "sha3-256" | "sha3-384" | "sha3-512" => format!(
                "verify={v}: iotrial does not compute fio's SHA-3 checksums; it checks {}",
                known.join(", ")
            ),
            _ => format!(
                "verify={v}: expected {}, crc32c-intel, null or 0",
                known.join(", ")
            ),
        });
    };
    verify_of(j).checksum = c;
    Ok(())
}

/// A percentage, 0 to 100.
fn pct(a: &Arg) -> Result<u32, String> {
    let n = a.int()?;
    if n > 100 {
        return Err(format!("{}={n}: a percentage, 0 to 100", a.key));
    }
    Ok(n as u32)
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    honoured(&["verify"], verify).differs(
        "every checksum but fio's SHA-3 ones, each stored as fio 3.33 stores it (its sha512 field holds only some of the data's first and last bytes, its sha256 field a non-standard hash: fio's own); verify=null does not verify",
    ),
    opt!(["verify_interval"], |j, a| {
        let n = a.bytes()?;
        if n == 0 {
            return Err("verify_interval must be greater than 0".into());
        }
        verify_of(j).interval = n;
    }),
    opt!(["verify_pattern"], |j, a| {
        let p = pattern(a.need()?).map_err(|e| format!("{}: {e}", a.key))?;
        verify_of(j).pattern = Some(p);
    }),
    opt!(["do_verify"], |j, a| {
        let on = a.flag()?;
        if let Some(v) = &mut j.verify {
            v.check = on;
        } else if !on {
            // do_verify=0 before verify=: remembered for when it comes.
            verify_of(j).check = false;
            j.verify.as_mut().expect("made").checksum = Checksum::Crc32c;
        }
    }),
    opt!(["verify_backlog"], |j, a| verify_of(j).backlog = a.int()?),
    opt!(["verify_only"], |j, a| j.verify_only = a.flag()?).differs(
        "iotrial reads the job's region back in the job's order and checks the blocks its headers say the job wrote (fio re-creates the write offsets); the files are kept as they are",
    ),
    opt!(["verify_state_save"], |j, a| verify_of(j).state_save = a.flag()?)
        .differs(
            "iotrial's own state file (which blocks each completed write covered), under fio's name local-JOB-CLONE-verify.state in the working directory; fio cannot read it, nor iotrial fio's",
        )
        .default_differs(
            "off: iotrial writes a state file only when asked (fio's default is on)",
        ),
    opt!(["verify_state_load"], |j, a| verify_of(j).state_load = a.flag()?).differs(
        "reads iotrial's own state file (see verify_state_save) and checks only the blocks it says were written; a missing state file ends the job with why. Across trials it checks the data only where the files outlive the trial (a `block:` target): a `dir:` or `image:` target's files go with the trial",
    ),
    opt!(["experimental_verify"], |j, a| verify_of(j).experimental = a.flag()?).differs(
        "iotrial reads back what its own record of the written blocks lists either way, which is what fio's experimental verify re-creates",
    ),
    opt!(["verify_fatal"], |j, a| verify_of(j).fatal = a.flag()?),
    opt!(["zero_buffers"], |j, a| j.buffers.zero = a.flag()?),
    opt!(["refill_buffers"], |j, a| j.buffers.refill = a.flag()?),
    opt!(["scramble_buffers"], |j, a| j.buffers.scramble =
        a.flag()?),
    opt!(["buffer_compress_percentage"], |j, a| j
        .buffers
        .compress_pct =
        pct(a)?),
    opt!(["buffer_compress_chunk"], |j, a| j.buffers.compress_chunk =
        a.bytes()?),
    opt!(["dedupe_percentage"], |j, a| j.buffers.dedupe_pct = pct(a)?),
    opt!(["dedupe_mode"], |j, a| j.buffers.dedupe_working_set =
        a.choice(&["repeat", "working_set"])? == "working_set"),
    opt!(["dedupe_working_set_percentage"], |j, a| j
        .buffers
        .dedupe_ws_pct =
        pct(a)?),
    opt!(["dedupe_global"], |j, a| j.buffers.dedupe_global =
        a.flag()?),
    opt!(["buffer_pattern"], |j, a| {
        j.buffer_pattern = Some(pattern(a.need()?).map_err(|e| format!("{}: {e}", a.key))?)
    }),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;

    #[test]
    fn verify_as_fio_words_it() {
        let mut j = JobSpec::new("j");
        for (k, v) in [
            ("verify", "crc32c-intel"),
            ("verify_interval", "512"),
            ("verify_pattern", "0xaa555aa5"),
            ("verify_backlog", "1024"),
            ("verify_fatal", "1"),
        ] {
            apply(&mut j, k, Some(v)).unwrap();
        }
        let v = j.verify.clone().unwrap();
        assert_eq!(
            (v.checksum, v.interval, v.backlog, v.fatal),
            (Checksum::Crc32c, 512, 1024, true)
        );
        assert_eq!(v.pattern, Some(vec![0xaa, 0x55, 0x5a, 0xa5]));
        for (name, sum) in [
            ("crc64", Checksum::Crc64),
            ("sha256", Checksum::Sha256),
            ("xxhash", Checksum::Xxhash),
        ] {
            apply(&mut j, "verify", Some(name)).unwrap();
            assert_eq!(j.verify.as_ref().unwrap().checksum, sum);
        }
        let e = apply(&mut j, "verify", Some("sha3-256")).unwrap_err();
        assert!(e.contains("SHA-3") && e.contains("sha512"), "{e}");
        apply(&mut j, "verify", Some("0")).unwrap();
        assert!(j.verify.is_none());
    }
}
