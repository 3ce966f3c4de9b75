//! Which part of a study's trials one run takes: `--shard K/N` (a deterministic partition:
//! the trial at position i of the study's run order, from 0, belongs to shard (i mod N) + 1),
//! `--shard auto` (K and N from a Slurm job array task or a Kubernetes Indexed Job's pod), or
//! `--trial ID` (exactly the trials named). Every machine computes the same partition from the
//! resolved study alone, so N machines each running one shard run every trial exactly once.

use serde::{Deserialize, Serialize};

/// Names the number of shards when the scheduler's environment does not (a Kubernetes pod
/// knows its index, `JOB_COMPLETION_INDEX`, but not the Job's completion count), or when a
/// re-submitted job array has fewer tasks than the study has shards. `iotrial launch` sets it.
pub const SHARD_COUNT_VAR: &str = "IOTRIAL_SHARD_COUNT";

/// One shard of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based.
    pub index: usize,
    pub count: usize,
}

/// `--shard` could not be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("'{0}' is not K/N (1 <= K <= N, e.g. 2/3) or auto")]
    Syntax(String),
    #[error("auto: none of SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX is set; run it as a task of a Slurm job array or a pod of a Kubernetes Indexed Job, or give K/N")]
    NoIndex,
    #[error("auto: {var}={value} is not a whole number")]
    NotNumber { var: String, value: String },
    #[error("auto: {index_var} gives index {index} but there is no count of shards: set {count_var} (the Job's completions)", count_var = SHARD_COUNT_VAR)]
    NoCount { index_var: String, index: usize },
    #[error(
        "auto: index {index} (from {index_var}) is not below the count {count} (from {count_var})"
    )]
    OutOfRange {
        index_var: String,
        index: usize,
        count_var: String,
        count: usize,
    },
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// `K/N`, or `auto` read through `env` (see [`Shard::from_env`]).
    pub fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        if text.trim() == "auto" {
            return Shard::from_env(env);
        }
        let bad = || ShardError::Syntax(text.to_string());
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { index: k, count: n })
    }

    /// The shard a Slurm array task (`SLURM_ARRAY_TASK_ID` from 0, of `SLURM_ARRAY_TASK_COUNT`)
    /// or a Kubernetes Indexed Job's pod (`JOB_COMPLETION_INDEX` from 0) runs: index + 1 of the
    /// count. [`SHARD_COUNT_VAR`], when set, gives the count in either case.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let number = |var: &str| -> Result<Option<usize>, ShardError> {
            match env(var).filter(|v| !v.trim().is_empty()) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| ShardError::NotNumber {
                        var: var.to_string(),
                        value: v,
                    }),
            }
        };
        let (index_var, index) = match number("SLURM_ARRAY_TASK_ID")? {
            Some(i) => ("SLURM_ARRAY_TASK_ID", i),
            None => match number("JOB_COMPLETION_INDEX")? {
                Some(i) => ("JOB_COMPLETION_INDEX", i),
                None => return Err(ShardError::NoIndex),
            },
        };
        let count = match number(SHARD_COUNT_VAR)? {
            Some(n) => Some((SHARD_COUNT_VAR, n)),
            None if index_var == "SLURM_ARRAY_TASK_ID" => {
                number("SLURM_ARRAY_TASK_COUNT")?.map(|n| ("SLURM_ARRAY_TASK_COUNT", n))
            }
            None => None,
        };
        let Some((count_var, count)) = count else {
            return Err(ShardError::NoCount {
                index_var: index_var.to_string(),
                index,
            });
        };
        if index >= count {
            return Err(ShardError::OutOfRange {
                index_var: index_var.to_string(),
                index,
                count_var: count_var.to_string(),
                count,
            });
        }
        Ok(Shard {
            index: index + 1,
            count,
        })
    }

    /// Whether the trial at `position` (from 0) of the study's run order is this shard's.
    pub fn holds(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn k_of_n() {
        let none = env(&[]);
        assert_eq!(Shard::parse("2/3", &none), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(
                matches!(Shard::parse(bad, &none), Err(ShardError::Syntax(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn shards_partition_the_trials() {
        for n in 1..6 {
            for trials in 0..20 {
                let shards: Vec<Shard> = (1..=n).map(|k| Shard { index: k, count: n }).collect();
                for i in 0..trials {
                    assert_eq!(shards.iter().filter(|s| s.holds(i)).count(), 1);
                }
            }
        }
        // One shard per trial: shard K is the trial at position K-1 (a job array of one
        // task per trial).
        let s = Shard { index: 4, count: 7 };
        assert_eq!((0..7).filter(|&i| s.holds(i)).collect::<Vec<_>>(), [3]);
    }

    #[test]
    fn auto_from_slurm_and_kubernetes() {
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "6"),
        ]);
        assert_eq!(
            Shard::parse("auto", &slurm),
            Ok(Shard { index: 3, count: 6 })
        );
        // A re-submitted array of two tasks (ids 2 and 5) of a six-shard study.
        let resubmitted = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
            (SHARD_COUNT_VAR, "6"),
        ]);
        assert_eq!(
            Shard::from_env(&resubmitted),
            Ok(Shard { index: 6, count: 6 })
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0"), (SHARD_COUNT_VAR, "4")]);
        assert_eq!(Shard::from_env(&k8s), Ok(Shard { index: 1, count: 4 }));
        let no_count = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert!(matches!(
            Shard::from_env(&no_count),
            Err(ShardError::NoCount { .. })
        ));
        assert_eq!(Shard::from_env(&env(&[])), Err(ShardError::NoIndex));
        let past = env(&[
            ("SLURM_ARRAY_TASK_ID", "6"),
            ("SLURM_ARRAY_TASK_COUNT", "6"),
        ]);
        let e = Shard::from_env(&past).unwrap_err().to_string();
        assert!(e.contains("index 6") && e.contains("count 6"), "{e}");
        let bad = env(&[("JOB_COMPLETION_INDEX", "x"), (SHARD_COUNT_VAR, "2")]);
        assert!(matches!(
            Shard::from_env(&bad),
            Err(ShardError::NotNumber { .. })
        ));
    }
}
