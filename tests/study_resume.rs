//! The manifest and `--resume` on a fake results directory: finished trials are kept, partial
//! ones discarded, and only what is missing is run again; a different study is refused.

use iotrial::study::results::manifest::{manifest_path, resume};
use iotrial::study::results::ResultsDir;
use iotrial::study::{builtin, expand, Expansion, Manifest, Options, Status, StudyError};
use std::path::Path;

/// `--quick --repeats 1`: one trial per stack keeps the cases below short to state.
fn quick() -> Options {
    Options {
        quick: true,
        repeats: Some(1),
        ..Options::default()
    }
}

fn dvr(opts: &Options) -> Expansion {
    expand(&builtin::load("dvr").unwrap(), opts).unwrap()
}

/// Writes a finished trial the way the runner does: a `.partial` directory, renamed.
fn finish(r: &ResultsDir, m: &mut Manifest, id: &str, record: bool) {
    let rec = m.trial(id).unwrap().clone();
    m.update(&r.root, id, Status::Running, None).unwrap();
    let tmp = r
        .begin_trial(&rec.stack, &rec.workload, rec.repeat)
        .unwrap();
    std::fs::write(tmp.join("result.json"), r#"{"verdict": {}}"#).unwrap();
    let fin = r
        .commit_trial(&tmp, &rec.stack, &rec.workload, rec.repeat)
        .unwrap();
    assert_eq!(fin, r.root.join(&rec.path));
    if record {
        m.update(&r.root, id, Status::Done, None).unwrap();
    }
}

fn status_on_disk(root: &Path, id: &str) -> Status {
    Manifest::load(root).unwrap().trial(id).unwrap().status
}

#[test]
fn new_manifest_and_study_toml() {
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create(out.path(), "dvr").unwrap();
    let exp = dvr(&quick());
    let m = Manifest::create(&r, &exp).unwrap();
    assert_eq!(
        m.trials.len(),
        7,
        "six stacks of the seed and the host-dir baseline"
    );
    assert!(m.trials.iter().all(|t| t.status == Status::Pending));
    assert_eq!(m.trials[1].path, "trials/ext4/dvr/r1");
    assert_eq!(Manifest::load(&r.root).unwrap(), m);
    let text = std::fs::read_to_string(manifest_path(&r.root)).unwrap();
    assert!(text.contains("\"status\": \"pending\""), "{text}");
    assert!(text.contains("\"kernel\""), "host facts are recorded");
    // study.toml is the resolved study and runs as a study file.
    let study_toml = r.root.join("study.toml");
    let again = builtin::load(study_toml.to_str().unwrap()).unwrap();
    assert_eq!(again, exp.study);
    // The manifest alone gives the same trials back.
    assert_eq!(m.expansion().unwrap().trials, exp.trials);
    assert!(!r.root.join("manifest.tmp").exists());
}

#[test]
fn status_changes_are_saved_with_timestamps() {
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create(out.path(), "dvr").unwrap();
    let mut m = Manifest::create(&r, &dvr(&quick())).unwrap();
    let id = "xfs/dvr/r1";
    m.update(&r.root, id, Status::Running, None).unwrap();
    let rec = Manifest::load(&r.root).unwrap().trial(id).unwrap().clone();
    assert_eq!(rec.status, Status::Running);
    assert!(rec.started_utc.is_some() && rec.finished_utc.is_none());
    m.update(&r.root, id, Status::Skipped, Some("needs root".into()))
        .unwrap();
    let rec = Manifest::load(&r.root).unwrap().trial(id).unwrap().clone();
    assert_eq!(rec.reason.as_deref(), Some("needs root"));
    assert!(rec.finished_utc.is_some());
    assert!(matches!(
        m.set_status("zfs/dvr/r1", Status::Done, None),
        Err(StudyError::UnknownTrial(_))
    ));
    assert_eq!(m.counts(), (0, 0, 1, 6));
}

#[test]
fn resume_runs_only_what_is_missing() {
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create(out.path(), "dvr").unwrap();
    let exp = dvr(&quick());
    let mut m = Manifest::create(&r, &exp).unwrap();
    // raw-partitions: done and recorded.
    finish(&r, &mut m, "raw-partitions/dvr/r1", true);
    // ext4: renamed into place, then interrupted before the manifest said so.
    finish(&r, &mut m, "ext4/dvr/r1", false);
    // ext4-noatime: interrupted mid-trial, a partial directory left behind.
    m.update(&r.root, "ext4-noatime/dvr/r1", Status::Running, None)
        .unwrap();
    let partial = r.begin_trial("ext4-noatime", "dvr", 1).unwrap();
    std::fs::write(partial.join("samples.csv"), "half").unwrap();
    // ext4-writeback: recorded done, but its directory has gone.
    finish(&r, &mut m, "ext4-writeback/dvr/r1", true);
    std::fs::remove_dir_all(r.trial_dir("ext4-writeback", "dvr", 1)).unwrap();
    // ext4-commit1 failed; xfs was skipped.
    m.update(
        &r.root,
        "ext4-commit1/dvr/r1",
        Status::Failed,
        Some("mkfs failed".into()),
    )
    .unwrap();
    m.update(
        &r.root,
        "xfs/dvr/r1",
        Status::Skipped,
        Some("needs root".into()),
    )
    .unwrap();

    let res = resume(&r.root, &dvr(&quick())).unwrap();
    let todo: Vec<&str> = res.todo.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        todo,
        [
            "ext4-noatime/dvr/r1",
            "ext4-writeback/dvr/r1",
            "ext4-commit1/dvr/r1",
            "xfs/dvr/r1",
            "host-dir/dvr/r1"
        ]
    );
    assert!(!partial.exists(), "partial trial directory discarded");
    assert!(r
        .trial_dir("raw-partitions", "dvr", 1)
        .join("result.json")
        .exists());
    assert_eq!(status_on_disk(&r.root, "ext4/dvr/r1"), Status::Done);
    for id in todo {
        assert_eq!(status_on_disk(&r.root, id), Status::Pending);
        assert_eq!(res.manifest.trial(id).unwrap().reason, None);
    }
    // Resuming from the manifest alone finds the same work.
    let m = Manifest::load(&r.root).unwrap();
    let again = resume(&r.root, &m.expansion().unwrap()).unwrap();
    assert_eq!(again.todo.len(), 5);
}

#[test]
fn resume_refuses_a_different_study() {
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create(out.path(), "dvr").unwrap();
    Manifest::create(&r, &dvr(&quick())).unwrap();
    let full = Options {
        repeats: Some(1),
        ..Options::default()
    };
    let e = resume(&r.root, &dvr(&full)).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, StudyError::Mismatch { .. }), "{msg}");
    assert!(
        msg.contains("parameter samples = 64 then, 2048 now"),
        "{msg}"
    );
    let only = Options {
        only: vec!["xfs".into()],
        ..quick()
    };
    let msg = resume(&r.root, &dvr(&only)).unwrap_err().to_string();
    assert!(msg.contains("then, [xfs] now"), "{msg}");
    let e = resume(out.path(), &dvr(&quick())).unwrap_err();
    assert!(matches!(e, StudyError::Io { .. }), "{e}");
}

#[test]
fn resume_names_a_changed_device() {
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create(out.path(), "dvr").unwrap();
    Manifest::create(&r, &dvr(&Options::default())).unwrap();
    let other = Options {
        device: Some("image:size=4GiB".into()),
        ..Options::default()
    };
    let msg = resume(&r.root, &dvr(&other)).unwrap_err().to_string();
    assert!(
        msg.contains(
            "stack 'raw-partitions' devices [emu:hdd,drive=wd80emaz] then, [image:size=4GiB] now"
        ),
        "{msg}"
    );
}

#[test]
fn a_shard_resumes_its_own_trials_and_refuses_another_shard() {
    let shard = |k| Options {
        shard: Some(iotrial::study::Shard { index: k, count: 3 }),
        ..quick()
    };
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create_part(out.path(), "dvr", Some("shard2of3")).unwrap();
    let exp = dvr(&shard(2));
    let ids: Vec<&str> = exp.trials.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["ext4/dvr/r1", "ext4-commit1/dvr/r1"],
        "positions 1 and 4 of 7"
    );
    let mut m = Manifest::create(&r, &exp).unwrap();
    assert_eq!(m.trials.len(), 2, "a shard's manifest lists its own trials");
    assert_eq!(
        m.hash(),
        iotrial::study::plan::identity::study_hash(&dvr(&quick()).study),
        "a shard records the whole study's hash"
    );
    for (rec, t) in m.trials.iter().zip(&exp.trials) {
        assert_eq!(rec.digest, t.digest);
    }
    finish(&r, &mut m, "ext4/dvr/r1", true);
    let res = resume(&r.root, &dvr(&shard(2))).unwrap();
    let todo: Vec<&str> = res.todo.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(todo, ["ext4-commit1/dvr/r1"]);
    // The manifest alone gives the shard's trials back.
    let m = Manifest::load(&r.root).unwrap();
    assert_eq!(m.expansion().unwrap().trials, exp.trials);
    let e = resume(&r.root, &dvr(&shard(1))).unwrap_err().to_string();
    assert!(e.contains("shard 2/3 then, shard 1/3 now"), "{e}");
    let e = resume(&r.root, &dvr(&quick())).unwrap_err().to_string();
    assert!(e.contains("shard 2/3 then, the whole study now"), "{e}");
}
