//! What names a study and its trials the same way on every machine and in every run: the
//! study's hash (of the resolved study, so a built-in name, its file and the study.toml of its
//! results directory give the same one) and each trial's digest (of its workload kind,
//! resolved parameters, stack and repeat). Neither depends on time, host or where the results
//! go; `iotrial merge` combines only results directories whose study hashes agree.

use super::file::Study;
use crate::params::Params;
use crate::stack::StackSpec;
use sha2::{Digest, Sha256};

/// Hex digits of a trial's digest.
pub const DIGEST_LEN: usize = 12;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of the resolved study, in hex: its study.toml text without `out` (where results
/// go is not what was measured).
pub fn study_hash(resolved: &Study) -> String {
    let mut s = resolved.clone();
    s.out = None;
    hex(&Sha256::digest(s.to_toml().as_bytes()))
}

/// The first [`DIGEST_LEN`] hex digits of SHA-256 over the trial's workload (name and kind),
/// every resolved parameter, its stack as specified (devices written out) and its repeat.
pub fn trial_digest(
    workload: &str,
    kind: &str,
    params: &Params,
    stack: &StackSpec,
    repeat: usize,
) -> String {
    let canonical = serde_json::json!({
        "workload": workload,
        "kind": kind,
        "params": params.assignments(),
        "stack": stack,
        "repeat": repeat,
    });
    let h = hex(&Sha256::digest(canonical.to_string().as_bytes()));
    h[..DIGEST_LEN].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::{builtin, expand, Options, Trial};

    fn digest(t: &Trial) -> String {
        trial_digest(&t.workload, &t.kind, &t.params, &t.stack, t.repeat)
    }

    #[test]
    fn the_hash_is_the_resolved_study_s() {
        let dvr = builtin::load("dvr").unwrap();
        let quick = Options {
            quick: true,
            ..Options::default()
        };
        let a = expand(&dvr, &quick).unwrap();
        let b = expand(&dvr, &quick).unwrap();
        assert_eq!(study_hash(&a.study), study_hash(&b.study));
        assert_eq!(study_hash(&a.study).len(), 64);
        // The resolved study, expanded again (what study.toml of a results directory gives),
        // has the same hash and the same trials with the same digests.
        let again = expand(&a.study, &Options::default()).unwrap();
        assert_eq!(study_hash(&again.study), study_hash(&a.study));
        let digests =
            |e: &crate::study::Expansion| -> Vec<String> { e.trials.iter().map(digest).collect() };
        assert_eq!(digests(&again), digests(&a));
        // Where results go is not part of it; what runs is.
        let mut moved = a.study.clone();
        moved.out = Some("elsewhere".into());
        assert_eq!(study_hash(&moved), study_hash(&a.study));
        let full = expand(&dvr, &Options::default()).unwrap();
        assert_ne!(study_hash(&full.study), study_hash(&a.study));
    }

    #[test]
    fn digests_tell_trials_apart() {
        let dvr = builtin::load("dvr").unwrap();
        let exp = expand(&dvr, &Options::default()).unwrap();
        let mut all: Vec<String> = exp.trials.iter().map(digest).collect();
        assert_eq!(all[0], exp.trials[0].digest);
        assert!(all.iter().all(|d| d.len() == DIGEST_LEN));
        all.sort();
        all.dedup();
        assert_eq!(all.len(), exp.trials.len());
        let mut t = exp.trials[0].clone();
        let before = digest(&t);
        t.repeat += 1;
        assert_ne!(digest(&t), before);
    }
}
