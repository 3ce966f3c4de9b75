//! `iotrial launch k8s`: the study as a Kubernetes Indexed Job (`completionMode: Indexed`,
//! one completion per trial, `parallelism`, `backoffLimitPerIndex`), whose pod i runs the trial
//! at position i (`--shard auto` reads `JOB_COMPLETION_INDEX`; the count, which Kubernetes does
//! not give a pod, is in `IOTRIAL_SHARD_COUNT`). The pod is privileged with the node's /dev
//! mounted, so the loop devices and FUSE devices a trial makes at run time are visible in it;
//! no two trial pods share a node (a pod anti-affinity: a trial's node is its own, as Slurm's
//! `--exclusive` gives); the resolved study comes in a ConfigMap and the results go to a
//! volume every pod mounts (a PersistentVolumeClaim), where a merge Job, applied once the
//! trials' Job has finished, merges them.

use super::{io, yaml, LaunchDir, LaunchError, Launched, Submission};
use crate::study::plan::shard::SHARD_COUNT_VAR;
use crate::study::Expansion;
use crate::utc::utc_iso;
use serde_json::{json, Value as Json};
use std::path::Path;
use std::time::SystemTime;

/// Where the ConfigMap's study.toml is mounted in a pod.
pub const STUDY_MOUNT: &str = "/etc/iotrial";

/// How to launch on Kubernetes.
#[derive(Debug, Clone)]
pub struct K8sOptions {
    /// A container image with iotrial on its PATH and the tools the stacks need.
    pub image: String,
    /// Pods at once (default: every trial).
    pub parallelism: Option<usize>,
    /// Retries of a failed index (`backoffLimitPerIndex`).
    pub retries: u32,
    /// The PersistentVolumeClaim the results go to.
    pub claim: String,
    /// Where the pods mount it.
    pub results_path: String,
    pub namespace: Option<String>,
    /// Run `kubectl apply` on the trials' manifest.
    pub submit: bool,
}

/// A DNS-1123 name from `text`: lower case, `-` for anything else, at most `max` characters.
fn dns_name(text: &str, max: usize) -> String {
    let mut s: String = text
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s.truncate(max);
    s.trim_matches('-').to_string()
}

/// The objects' base name: `iotrial-<study>-<stamp>`, short enough for pod names.
fn base_name(dir: &LaunchDir) -> String {
    let launch = dir
        .root
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let launch = launch.strip_suffix("-k8s").unwrap_or(&launch);
    dns_name(&format!("iotrial-{launch}"), 47)
}

fn metadata(name: &str, o: &K8sOptions, base: &str) -> Json {
    let mut m = json!({
        "name": name,
        "labels": {"app.kubernetes.io/name": "iotrial", "iotrial/launch": base},
    });
    if let Some(ns) = &o.namespace {
        m["namespace"] = json!(ns);
    }
    m
}

/// Where the launch's shards and merged results are on the results volume.
fn on_volume(dir: &LaunchDir, o: &K8sOptions) -> String {
    let launch = dir.root.file_name().unwrap_or_default().to_string_lossy();
    format!("{}/{launch}", o.results_path.trim_end_matches('/'))
}

fn results_volume(o: &K8sOptions) -> Json {
    json!({"name": "results", "persistentVolumeClaim": {"claimName": o.claim}})
}

/// The ConfigMap holding the study and the Indexed Job running its trials.
pub fn trials_manifest(dir: &LaunchDir, o: &K8sOptions) -> Result<Vec<Json>, LaunchError> {
    let n = dir.record.trials.len();
    let base = base_name(dir);
    let study = std::fs::read_to_string(dir.root.join("study.toml"))
        .map_err(io("read the launch's study.toml"))?;
    let config = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(&format!("{base}-study"), o, &base),
        "data": {"study.toml": study},
    });
    let vol = on_volume(dir, o);
    let container = json!({
        "name": "trial",
        "image": o.image,
        "command": [
            "iotrial", "study", format!("{STUDY_MOUNT}/study.toml"),
            "--shard", "auto", "--resume", "--out", format!("{vol}/shards"),
        ],
        "env": [{"name": SHARD_COUNT_VAR, "value": n.to_string()}],
        "securityContext": {"privileged": true},
        "volumeMounts": [
            {"name": "dev", "mountPath": "/dev"},
            {"name": "results", "mountPath": o.results_path},
            {"name": "study", "mountPath": STUDY_MOUNT, "readOnly": true},
        ],
    });
    let labels = json!({"app.kubernetes.io/name": "iotrial", "iotrial/launch": base, "iotrial/role": "trial"});
    let job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(&base, o, &base),
        "spec": {
            "completionMode": "Indexed",
            "completions": n,
            "parallelism": o.parallelism.unwrap_or(n).min(n),
            "backoffLimitPerIndex": o.retries,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                        "labelSelector": {"matchLabels": {"iotrial/launch": base, "iotrial/role": "trial"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }]}},
                    "containers": [container],
                    "volumes": [
                        {"name": "dev", "hostPath": {"path": "/dev", "type": "Directory"}},
                        results_volume(o),
                        {"name": "study", "configMap": {"name": format!("{base}-study")}},
                    ],
                },
            },
        },
    });
    Ok(vec![config, job])
}

/// The Job merging the trials' results directories (apply it once the trials' Job is done).
pub fn merge_manifest(dir: &LaunchDir, o: &K8sOptions) -> Vec<Json> {
    let base = base_name(dir);
    let vol = on_volume(dir, o);
    vec![json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(&format!("{base}-merge"), o, &base),
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "iotrial", "iotrial/launch": base, "iotrial/role": "merge"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "merge",
                        "image": o.image,
                        "command": ["iotrial", "merge", format!("{vol}/merged"), format!("{vol}/shards"), "--allow-partial"],
                        "volumeMounts": [{"name": "results", "mountPath": o.results_path}],
                    }],
                    "volumes": [results_volume(o)],
                },
            },
        },
    })]
}

/// Writes a new launch of `exp` under `out` (trials.yaml, merge.yaml) and applies the trials'
/// manifest with `o.submit`.
pub fn launch(exp: &Expansion, out: &Path, o: &K8sOptions) -> Result<Launched, LaunchError> {
    if !o.results_path.starts_with('/') {
        return Err(LaunchError::Invalid(format!(
            "--results-path {} is not an absolute path",
            o.results_path
        )));
    }
    let mut dir = LaunchDir::create(out, exp, "k8s")?;
    let trials = dir.root.join("trials.yaml");
    let merge = dir.root.join("merge.yaml");
    let head = |what: &str| {
        format!(
            "# iotrial launch k8s: study {}, {} trials; {what}\n",
            dir.record.study,
            dir.record.trials.len()
        )
    };
    let t = head("a ConfigMap with the study and an Indexed Job, one trial per pod")
        + &yaml::documents(&trials_manifest(&dir, o)?);
    let m = head("the Job that merges the trials' results (apply it once their Job is done)")
        + &yaml::documents(&merge_manifest(&dir, o));
    std::fs::write(&trials, t).map_err(io("write trials.yaml"))?;
    std::fs::write(&merge, m).map_err(io("write merge.yaml"))?;
    let base = base_name(&dir);
    let ns: Vec<String> = o
        .namespace
        .iter()
        .flat_map(|n| ["--namespace".to_string(), n.clone()])
        .collect();
    let apply = |f: &Path| {
        let mut v = ns.clone();
        v.extend([
            "apply".to_string(),
            "-f".to_string(),
            f.display().to_string(),
        ]);
        v
    };
    let mut wait = ns.clone();
    wait.extend(
        ["wait", "--for=condition=Complete", "--timeout=-1s"]
            .map(String::from)
            .to_vec(),
    );
    wait.push(format!("job/{base}"));
    let commands = vec![
        format!("kubectl {}", apply(&trials).join(" ")),
        format!(
            "kubectl {}   # or until it has failed indexes: kubectl get job/{base}",
            wait.join(" ")
        ),
        format!("kubectl {}", apply(&merge).join(" ")),
    ];
    let mut submitted = None;
    if o.submit {
        super::engine("kubectl", &apply(&trials))?;
        let s = Submission {
            trials_job: base.clone(),
            merge_job: None,
            tasks: format!("0-{}", dir.record.trials.len().saturating_sub(1)),
            submitted_utc: utc_iso(SystemTime::now()),
        };
        dir.record.submissions.push(s.clone());
        dir.save()?;
        submitted = Some(s);
    }
    Ok(Launched {
        report: Path::new(&on_volume(&dir, o)).join("merged/report.html"),
        dir: dir.root.clone(),
        files: vec![trials, merge],
        commands,
        submitted,
        trials: dir.record.trials.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dns_labels() {
        assert_eq!(
            dns_name("iotrial-DVR_study-20261125T120000Z", 47),
            "iotrial-dvr-study-20261125t120000z"
        );
        assert!(dns_name(&"x".repeat(100), 47).len() <= 47);
    }
}
