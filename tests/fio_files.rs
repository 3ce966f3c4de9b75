//! fio job files in and out: every example in examples/ is a job iotrial can plan, a file with
//! an option iotrial does not model fails with exit 2 naming the option and its line, a small
//! job file runs, and the fio job exported from its trial reads back as the same streams.

mod common;

use assert_cmd::Command;
use common::figures::results_root;
use iotrial::workload;
use predicates::str::contains;
use std::path::Path;

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

fn plan_of(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> iotrial::engine::Plan {
    let text = std::fs::read_to_string(path).unwrap();
    let f = iotrial::fio::parse_text(&path.display().to_string(), &text, env)
        .unwrap_or_else(|e| panic!("{e}"));
    let job = workload::find("job").unwrap();
    let p = job
        .resolve(&f.overrides)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    job.plan(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_example_is_a_job_iotrial_plans() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut seen = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "fio") {
            let plan = plan_of(&path, &|v| (v == "SIZE").then(|| "64m".into()));
            assert!(!plan.streams.is_empty(), "{}", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 5, "examples/ holds the job files");
}

#[test]
fn what_iotrial_cannot_run_fails_with_exit_2_naming_the_line_and_why_and_makes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    for (text, needle) in [
        (
            "[global]\nbs=4k\n\n[w]\nrw=write\nbogus_option=1\n",
            "bad.fio:6: fio option 'bogus_option' is not supported by iotrial: it is not an option of fio 3.33",
        ),
        (
            "[global]\nbs=4k ; comment\n[w]\nioengine=rbd\n",
            "bad.fio:4: ioengine=rbd cannot be honoured: it is a network engine",
        ),
        (
            "[w]\nrw=write\nnuma_cpu_nodes=0-4095\n",
            "bad.fio:3: numa_cpu_nodes=0-4095: NUMA node ",
        ),
        (
            "[w]\nrw=write\nexec_prerun=touch /tmp/x\n",
            "bad.fio:3: fio option 'exec_prerun' cannot be honoured: iotrial never runs a shell command",
        ),
        ("[w]\nbs=4q\n", "bad.fio:2: bs: '4q' has an unknown size unit"),
    ] {
        let f = d.path().join("bad.fio");
        std::fs::write(&f, text).unwrap();
        iotrial()
            .args(["run", &format!("fio:{}", f.display()), "--out"])
            .arg(d.path().join("out"))
            .arg("--target")
            .arg(format!("dir:{}", target.path().display()))
            .assert()
            .code(2)
            .stderr(contains(needle));
        assert_eq!(
            std::fs::read_dir(target.path()).unwrap().count(),
            0,
            "nothing made on the target"
        );
    }
}

#[test]
fn a_job_file_runs_and_its_exported_job_reads_back_as_the_same_streams() {
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let f = out.path().join("small.fio");
    std::fs::write(
        &f,
        "[global]\nsize=${SMALL}\nbs=64k\nfilename=/dev/null\n[readers]\nrw=randread\nnumjobs=2\n[writer]\nrw=write\nioengine=io_uring\niodepth=4\n",
    )
    .unwrap();
    let a = iotrial()
        .env("SMALL", "1m")
        .args(["run", &format!("fio:{}", f.display()), "--json", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .assert()
        .success()
        .stderr(contains(
            "filename: iotrial does its I/O in a file of this name on the stack's target",
        ));
    let doc: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let groups = doc["verdict"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(
        (&groups[0]["name"], &groups[0]["ios"]),
        (&"readers".into(), &32.into())
    );
    assert_eq!(
        (&groups[1]["ioengine"], &groups[1]["ios"]),
        (&"io_uring".into(), &16.into())
    );
    let results = results_root(out.path());
    let w = iotrial()
        .args(["export-fio"])
        .arg(&results)
        .assert()
        .success();
    let listed = String::from_utf8_lossy(&w.get_output().stdout).to_string();
    let fio = results.join("trials/dir/job/r1/trial.fio");
    assert!(listed.contains(&fio.display().to_string()), "{listed}");
    let back = plan_of(&fio, &|v| (v == "IOTRIAL_DIR").then(|| "/tmp".into()));
    let original = plan_of(&f, &|_| Some("1m".into()));
    let shape = |p: &iotrial::engine::Plan| -> Vec<_> {
        p.streams
            .iter()
            .map(|s| {
                (
                    s.op,
                    s.pattern,
                    s.io_size,
                    s.io.depth,
                    s.io.backend,
                    s.io.bytes,
                )
            })
            .collect()
    };
    assert_eq!(shape(&back), shape(&original));
}

#[test]
fn a_study_runs_a_job_file_named_relative_to_it() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(
        work.path().join("tiny.fio"),
        "[tiny]\nrw=randwrite\nbs=64k\nsize=512k\n",
    )
    .unwrap();
    let study = work.path().join("s.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"s\"\n[[workloads]]\nkind = \"fio:tiny.fio\"\n[[stacks]]\nname = \"a\"\ndevices = [\"dir:{}\"]\n",
            data.display()
        ),
    )
    .unwrap();
    let out = work.path().join("out");
    iotrial()
        .current_dir(work.path().join("data"))
        .args(["study"])
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let root = results_root(&out);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("trials/a/tiny/r1/result.json")).unwrap())
            .unwrap();
    assert_eq!(
        (&doc["kind"], &doc["workload"]),
        (&"job".into(), &"tiny".into())
    );
    assert_eq!(doc["verdict"]["groups"][0]["ios"], 8);
}

#[test]
fn a_verify_job_names_the_offset_of_a_block_damaged_after_its_write() {
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let f = out.path().join("damaged.fio");
    std::fs::write(
        &f,
        "[global]\nfilename=data ; one file for the three jobs\nbs=4k\nsize=2m\nioengine=libaio\niodepth=8\n\
         [write]\nrw=randwrite\nverify=crc32c\ndo_verify=0\n\
         [damage]\nstonewall\nrw=write\noffset=1m\nsize=8k\n\
         [check]\nstonewall\nrw=read\nverify=crc32c\n",
    )
    .unwrap();
    let a = iotrial()
        .args(["run", &format!("fio:{}", f.display()), "--json", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(doc["verdict"]["verify_mismatches"], 2, "{}", doc["verdict"]);
    let v = &doc["streams"][2]["verify"];
    assert_eq!((&v["checked"], &v["mismatches"]), (&512.into(), &2.into()));
    let offsets: Vec<u64> = v["first"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, [1 << 20, (1 << 20) + 4096]);
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("check.0: verify found 2 of 512 intervals not as written (crc32c); the first at offset 1048576"),
        "{warnings}"
    );
}
