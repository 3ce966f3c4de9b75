//! Phased plans through the library's trial runner: action phases (sync, unmount, mount,
//! drop_caches) between stream phases on a filesystem the stack built, each phase marked in
//! result.json and samples.csv; `fsck` runs the filesystem's checker, its run in result.json
//! and its output kept, and without a filesystem fails with its typed error; `idle` on a
//! directory says why there is no cleaning time; whatever the ending, nothing is left mounted
//! or attached.

mod common;

use common::outcome::{Counted, UNUSED_PARAMS};
use common::*;
use iotrial::cause::{Cause, HasCause};
use iotrial::engine::{
    Action, IdleLimits, Op, Pacing, Pattern, Phase, Plan, SampleSet, Step, Stop, StreamPlan,
};
use iotrial::params::{ParamError, ParamSpec, Params};
use iotrial::stack::build::provision::BuildOptions;
use iotrial::stack::ledger::Ledger;
use iotrial::stack::{DeviceSpec, StackError, StackSpec};
use iotrial::trial::{self, Setup, TrialError};
use iotrial::workload::{AnalysisError, Outcome, Workload};
use serde_json::json;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A workload whose plan is given: two write streams filling 1 MiB each, then the phases.
struct Phased(Vec<Phase>);

impl Workload for Phased {
    fn name(&self) -> &'static str {
        "phased"
    }
    fn about(&self) -> &'static str {
        "test workload"
    }
    fn params(&self) -> &'static [ParamSpec] {
        UNUSED_PARAMS
    }
    fn plan(&self, _: &Params) -> Result<Plan, ParamError> {
        let stream = |name: &str| StreamPlan {
            name: name.into(),
            role: "writer".into(),
            op: Op::Write,
            region_len: 1 << 20,
            io_size: 64 << 10,
            pattern: Pattern::Append,
            pacing: Pacing::Max,
            samples: 0,
            io: Default::default(),
            source: None,
        };
        Ok(Plan {
            streams: vec![stream("w0"), stream("w1")],
            phases: self.0.clone(),
            direct: false,
            seed: 1,
            dirty_limit: None,
            checker_args: Vec::new(),
            stores_at_most: None,
        })
    }
    fn analyze(
        &self,
        _: &Params,
        s: &SampleSet,
        _: &iotrial::workload::Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        let per_phase = (0..s.phases.len())
            .map(|p| {
                s.load_phase(p)
                    .map(|st| st.iter().map(|x| x.samples.len()).sum::<usize>())
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(Counted(json!({ "samples": per_phase }))))
    }
    fn report(&self) -> &'static dyn iotrial::present::KindReport {
        iotrial::workload::report_of("dvr").unwrap()
    }
}

fn streams(stop: Stop) -> Step {
    Step::Streams {
        streams: vec![0, 1],
        stop,
    }
}

fn phase(name: &str, step: Step) -> Phase {
    Phase {
        name: name.into(),
        step,
    }
}

/// Runs `phases`; the ledger holds the samples' spill directory until it is released.
fn run_on(
    phases: Vec<Phase>,
    stack: &StackSpec,
    devices: &[DeviceSpec],
    ledger: &mut Ledger,
) -> Result<trial::TrialOutput, TrialError> {
    let w = Phased(phases);
    let params = w.resolve(&[]).unwrap();
    let setup = Setup {
        workload: "phased",
        stack,
        devices,
        build: BuildOptions::default(),
        monitor: &iotrial::monitor::Settings::default(),
        repeat: 1,
        switch: None,
        cpus: Default::default(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    trial::run(&w, &params, &setup, ledger, &stop, false)
}

fn released(mut ledger: Ledger) {
    let errors = ledger.release_all();
    assert!(errors.is_empty(), "{errors:?}");
}

/// This process's stack directories: `iotrial-stack-<pid>-<n>` under the temporary directory.
fn stack_dirs() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("iotrial-stack-{}-", std::process::id()))
}

#[test]
fn action_phases_run_between_stream_phases_on_a_built_filesystem() {
    if !ready_for_stacks(
        "action_phases_run_between_stream_phases_on_a_built_filesystem",
        &["mkfs.ext4", "mount"],
    ) {
        return;
    }
    let stack = StackSpec {
        name: "ext4".into(),
        devices: vec!["image:size=128MiB".into()],
        fs: Some("ext4".into()),
        ..Default::default()
    };
    let devices = [DeviceSpec::parse("image:size=128MiB").unwrap()];
    let phases = vec![
        phase("fill", streams(Stop::OpsEnd)),
        phase("sync", Step::Action(Action::Sync)),
        phase("unmount", Step::Action(Action::Unmount)),
        phase("check", Step::Action(Action::Fsck)),
        phase("mount", Step::Action(Action::Mount)),
        phase("drop", Step::Action(Action::DropCaches)),
        phase("again", streams(Stop::Ops(3))),
    ];
    let mut ledger = Ledger::detached();
    let out = run_on(phases, &stack, &devices, &mut ledger).unwrap();
    let doc = &out.doc;
    let kinds: Vec<(&str, &str)> = doc
        .phases
        .iter()
        .map(|p| (p.name.as_str(), p.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("prepare", "prepare"),
            ("fill", "stream"),
            ("sync", "sync"),
            ("unmount", "unmount"),
            ("check", "fsck"),
            ("mount", "mount"),
            ("drop", "drop_caches"),
            ("again", "stream")
        ]
    );
    let checker = doc.phases[4].measured.as_ref().expect("the checker's run");
    assert_eq!(checker["exit"], json!(0), "{checker}");
    assert!(checker["command"]
        .as_str()
        .unwrap()
        .starts_with("e2fsck -f -n"));
    assert!(checker["peak_rss_bytes"].as_u64().unwrap() > 0, "{checker}");
    assert!(
        !checker["passes"].as_array().unwrap().is_empty(),
        "{checker}"
    );
    for w in doc.phases.windows(2) {
        assert!(w[0].end_s.unwrap() <= w[1].start_s, "{:?}", doc.phases);
    }
    // One pass of 1 MiB in 64 KiB writes per stream, then three writes each.
    assert_eq!(doc.verdict, json!({"samples": [0, 32, 0, 0, 0, 0, 0, 6]}));
    assert_eq!(doc.phases[7].samples, 6);
    assert!(doc.phases[2].stop.is_none() && doc.phases[1].stop.is_some());
    let dir = tempfile::tempdir().unwrap();
    trial::write(dir.path(), &out).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("samples.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains(",fill,")).count(), 32);
    assert_eq!(csv.lines().filter(|l| l.contains(",again,")).count(), 6);
    let kept = std::fs::read_to_string(dir.path().join("check.checker.txt")).unwrap();
    assert!(kept.contains("Pass 1"), "{kept}");
    // The second phase goes on where the first left off: past the end of its 1 MiB, at 0.
    assert!(csv.contains("w0,again,writer,write,0,"), "{csv}");
    drop(out);
    released(ledger);
    assert!(mounts_under(&stack_dirs()).is_empty());
    assert!(loops_under(&stack_dirs()).is_empty());
}

/// A stack on a fresh directory: (the directory, the stack, its devices).
fn dir_stack() -> (tempfile::TempDir, StackSpec, [DeviceSpec; 1]) {
    let target = tempfile::tempdir().unwrap();
    let stack = StackSpec {
        name: "dir".into(),
        ..Default::default()
    };
    let devices = [DeviceSpec::Dir(target.path().to_path_buf())];
    (target, stack, devices)
}

#[test]
fn fsck_without_a_filesystem_fails_with_its_typed_error_and_leaves_nothing() {
    let (target, stack, devices) = dir_stack();
    let phases = vec![
        phase("fill", streams(Stop::Bytes(128 << 10))),
        phase("check", Step::Action(Action::Fsck)),
    ];
    let mut ledger = Ledger::detached();
    let e = run_on(phases, &stack, &devices, &mut ledger)
        .err()
        .expect("the action fails");
    released(ledger);
    assert!(
        matches!(e, TrialError::Stack(StackError::Invalid(_))),
        "{e}"
    );
    assert_eq!(e.why(), Cause::Input);
    assert!(e.to_string().contains("fsck"), "{e}");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

#[test]
fn idle_on_a_directory_says_why_there_is_no_cleaning_time() {
    let (_target, stack, devices) = dir_stack();
    let phases = vec![
        phase("fill", streams(Stop::Bytes(128 << 10))),
        phase("rest", Step::Action(Action::Idle(IdleLimits::DEFAULT))),
    ];
    let mut ledger = Ledger::detached();
    let out = run_on(phases, &stack, &devices, &mut ledger).unwrap();
    let idle = out.doc.phases[2].idle.clone().expect("an idle record");
    assert_eq!(idle.cleaning_s, None);
    assert_eq!(idle.how, "none");
    assert!(idle.note.unwrap().contains("directory"));
    assert!(out.doc.phases[1].idle.is_none());
    drop(out);
    released(ledger);
}

#[test]
fn unmount_on_a_directory_is_refused_as_input() {
    let (_target, stack, devices) = dir_stack();
    let phases = vec![phase("down", Step::Action(Action::Unmount))];
    let mut ledger = Ledger::detached();
    let e = run_on(phases, &stack, &devices, &mut ledger).err().unwrap();
    released(ledger);
    assert_eq!(e.why(), Cause::Input, "{e}");
    assert!(e.to_string().contains("unmount"), "{e}");
}
