//! `iotrial launch k8s`: the manifests it writes pass a Kubernetes schema validator
//! (kubernetes-validate, which scripts/install-deps.sh installs in a venv with the schemas
//! bundled, so it works offline; it refuses a misspelt field, so it does check), and running
//! each index's pod command here with `JOB_COMPLETION_INDEX` and the pod's environment (the
//! ConfigMap's study where the pod mounts it), then the merge Job's command, gives the
//! complete study. No cluster: this machine has no container engine.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The validator's venv.
fn venv() -> PathBuf {
    iotrial::vm::host::cache_dir().join("venv-k8s/bin")
}

/// The YAML documents of `file`, as JSON (through PyYAML, which the validator depends on).
fn documents(file: &Path) -> Vec<Value> {
    let out = Command::new(venv().join("python"))
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))",
        ])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `kubernetes-validate --strict` on `files`: (success, output).
fn validate(files: &[&Path]) -> (bool, String) {
    let out = Command::new(venv().join("kubernetes-validate"))
        .arg("--strict")
        .args(files)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Runs a container's command here: `iotrial` is the binary under test, a path under a
/// volume's mount path is the directory `mounts` gives it, and the container's and `extra`
/// environment is set.
fn run_container(c: &Value, mounts: &[(String, PathBuf)], extra: &[(&str, String)], work: &Path) {
    let local = |arg: &str| -> String {
        for (mount, dir) in mounts {
            if let Some(rest) = arg.strip_prefix(mount.as_str()) {
                return format!("{}{rest}", dir.display());
            }
        }
        arg.to_string()
    };
    let argv: Vec<String> = c["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| local(a.as_str().unwrap()))
        .collect();
    assert_eq!(argv[0], "iotrial");
    let mut cmd = iotrial(work);
    cmd.args(&argv[1..]);
    for e in c["env"].as_array().into_iter().flatten() {
        cmd.env(e["name"].as_str().unwrap(), e["value"].as_str().unwrap());
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.assert().success();
}

#[test]
fn the_indexed_job_validates_and_its_indexes_make_the_whole_study() {
    if !venv().join("kubernetes-validate").exists() {
        skip(
            "the_indexed_job_validates_and_its_indexes_make_the_whole_study",
            "kubernetes-validate is not installed (scripts/install-deps.sh installs it)",
        );
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let data = w.join("data");
    std::fs::create_dir(&data).unwrap();
    let study = w.join("kube.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"kube\"\nrepeats = 2\n[[workloads]]\nkind = \"dvr\"\nset = {{ samples = \"8\", region_size = \"2MiB\", io_size = \"64KiB\", window = \"20ms\" }}\n{}",
            dir_stacks(&data, &["a", "b", "c"])
        ),
    )
    .unwrap();
    let volume = w.join("volume");
    let a = iotrial(w)
        .args(["launch", "k8s"])
        .arg(&study)
        .arg("--out")
        .arg(w.join("out"))
        .args([
            "--max-parallel",
            "2",
            "--retries",
            "2",
            "--image",
            "registry.example/iotrial:1",
        ])
        .arg("--results-path")
        .arg(&volume)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let dir = PathBuf::from(
        said.lines()
            .find_map(|l| l.strip_prefix("launch directory: "))
            .unwrap(),
    );
    let (trials, merge) = (dir.join("trials.yaml"), dir.join("merge.yaml"));
    let (ok, text) = validate(&[&trials, &merge]);
    assert!(ok, "{text}");
    assert_eq!(
        text.matches("passed").count(),
        3,
        "ConfigMap, Job, merge Job: {text}"
    );
    // The validator does check: a misspelt field fails it.
    let bad = w.join("bad.yaml");
    let t = std::fs::read_to_string(&trials).unwrap();
    std::fs::write(&bad, t.replace("completionMode:", "completionMod:")).unwrap();
    let (ok, text) = validate(&[&bad]);
    assert!(!ok, "{text}");

    let docs = documents(&trials);
    let (config, job) = (&docs[0], &docs[1]);
    assert_eq!(config["kind"], "ConfigMap");
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 6);
    assert_eq!(spec["parallelism"], 2);
    assert_eq!(spec["backoffLimitPerIndex"], 2);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/iotrial:1");
    assert_eq!(c["securityContext"]["privileged"], true);
    let volumes = pod["volumes"].as_array().unwrap();
    let vol = |name: &str| volumes.iter().find(|v| v["name"] == name).unwrap().clone();
    assert_eq!(vol("dev")["hostPath"]["path"], "/dev");
    assert_eq!(
        vol("results")["persistentVolumeClaim"]["claimName"],
        "iotrial-results"
    );
    let mounts: Vec<(String, String)> = c["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().into(),
                m["mountPath"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        mounts.contains(&("dev".into(), "/dev".into())),
        "{mounts:?}"
    );
    assert!(
        pod["affinity"]["podAntiAffinity"].is_object(),
        "one trial pod per node"
    );
    // The study the pods read is the launch's resolved study.
    let text = config["data"]["study.toml"].as_str().unwrap();
    assert_eq!(
        text,
        std::fs::read_to_string(dir.join("study.toml")).unwrap()
    );

    // Each index's pod, here: the ConfigMap where the pod mounts it, the volume where it is.
    let config_dir = w.join("configmap");
    std::fs::create_dir(&config_dir).unwrap();
    std::fs::write(config_dir.join("study.toml"), text).unwrap();
    let study_mount = mounts.iter().find(|m| m.0 == "study").unwrap().1.clone();
    let results_mount = mounts.iter().find(|m| m.0 == "results").unwrap().1.clone();
    assert_eq!(results_mount, volume.display().to_string());
    let local = vec![(study_mount, config_dir.clone())];
    for i in 0..6 {
        run_container(c, &local, &[("JOB_COMPLETION_INDEX", i.to_string())], w);
    }
    let merge_docs = documents(&merge);
    let mc = &merge_docs[0]["spec"]["template"]["spec"]["containers"][0];
    run_container(mc, &[], &[], w);
    let launch = dir.file_name().unwrap();
    let merged = volume.join(launch).join("merged");
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("manifest.json")).unwrap())
            .unwrap();
    let trials = m["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 6);
    assert!(trials.iter().all(|t| t["status"] == "done"), "{m}");
    assert_eq!(
        m["merged_from"].as_array().unwrap().len(),
        6,
        "one results directory per pod"
    );
    assert!(merged.join("report.html").exists());
    assert!(
        said.contains(&format!("{}", merged.join("report.html").display())),
        "{said}"
    );
}
