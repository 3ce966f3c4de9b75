//! Streams that do their own operations (an [`OpSource`]): on a directory target, each stream
//! gets an empty directory of its own, creates a small tree and a file (mkdir, create, write,
//! fsync, close, stat) in one phase and removes it (unlink, rmdir) in a later one with the same
//! source; every operation is one sample with its own op in samples.csv, tagged with its phase.

mod common;

use common::outcome::{Counted, UNUSED_PARAMS};

use iotrial::engine::buffer::AlignedBuf;
use iotrial::engine::sources::fsops;
use iotrial::engine::{
    Action, Op, OpSource, Pacing, Pattern, Phase, Plan, SampleSet, Source, SourceCtx, Step, Stop,
    StreamPlan,
};
use iotrial::params::{ParamError, ParamSpec, Params};
use iotrial::stack::build::provision::BuildOptions;
use iotrial::stack::ledger::Ledger;
use iotrial::stack::{DeviceSpec, StackSpec};
use iotrial::trial::{self, Setup};
use iotrial::workload::{AnalysisError, Outcome, Workload};
use serde_json::json;
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const DIRS: usize = 20;

/// Creates DIRS directories and one 8 KiB file in them, then (asked again) removes them all.
struct Tree {
    paths: Vec<CString>,
    file: CString,
    fd: Option<OwnedFd>,
    buf: AlignedBuf,
    step: usize,
    ready: Option<Op>,
}

impl Tree {
    fn make(ctx: &SourceCtx) -> std::io::Result<Box<dyn OpSource>> {
        let root = &ctx.placement.path;
        assert!(root.is_dir(), "a source stream is placed in a directory");
        assert_eq!(std::fs::read_dir(root)?.count(), 0, "an empty one");
        let c = |p: std::path::PathBuf| CString::new(p.as_os_str().as_bytes()).unwrap();
        let mut paths = Vec::new();
        let mut at = root.clone();
        for i in 0..DIRS {
            // Two levels: d0/, d0/d1, d2/, d2/d3, ...
            at = if i % 2 == 0 {
                root.join(format!("d{i}"))
            } else {
                at.join(format!("d{i}"))
            };
            paths.push(c(at.clone()));
        }
        let mut buf = AlignedBuf::new(8192);
        buf.fill_random(ctx.seed);
        Ok(Box::new(Tree {
            paths,
            file: c(root.join("d0/f")),
            fd: None,
            buf,
            step: 0,
            ready: None,
        }))
    }

    /// The whole life: mkdirs, the file's create/write/fsync/close/stat, end of stage, then
    /// unlink and rmdirs deepest first, end.
    fn op_at(step: usize) -> Option<Op> {
        match step {
            s if s < DIRS => Some(Op::Mkdir),
            s if s == DIRS => Some(Op::Create),
            s if s == DIRS + 1 => Some(Op::Write),
            s if s == DIRS + 2 => Some(Op::Fsync),
            s if s == DIRS + 3 => Some(Op::Close),
            s if s == DIRS + 4 => Some(Op::Stat),
            s if s == DIRS + 5 => None,
            s if s == DIRS + 6 => Some(Op::Unlink),
            s if s < 2 * DIRS + 7 => Some(Op::Rmdir),
            _ => None,
        }
    }
}

impl OpSource for Tree {
    fn prepare(&mut self) -> Option<Op> {
        let op = Tree::op_at(self.step);
        self.step += 1;
        self.ready = op;
        op
    }

    fn perform(&mut self) -> Result<u64, i32> {
        let s = self.step - 1;
        match self.ready.expect("prepared") {
            Op::Mkdir => fsops::mkdir(&self.paths[s]),
            Op::Create => {
                self.fd = Some(fsops::create(&self.file, false)?);
                Ok(0)
            }
            Op::Write => fsops::write_all(self.fd.as_ref().unwrap(), &self.buf, 8192),
            Op::Fsync => fsops::fsync(self.fd.as_ref().unwrap()),
            Op::Close => fsops::close(self.fd.take().unwrap()),
            Op::Stat => fsops::stat(&self.file),
            Op::Unlink => fsops::unlink(&self.file),
            Op::Rmdir => {
                // Deepest first: the odd ones, then the even ones, from the end.
                let k = s - (DIRS + 7);
                let order: Vec<usize> = (0..DIRS)
                    .rev()
                    .filter(|i| i % 2 == 1)
                    .chain((0..DIRS).rev().filter(|i| i % 2 == 0))
                    .collect();
                fsops::rmdir(&self.paths[order[k]])
            }
            other => panic!("not in this source: {other:?}"),
        }
    }
}

struct TreeWork;

impl Workload for TreeWork {
    fn name(&self) -> &'static str {
        "treework"
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
            role: "tree".into(),
            op: Op::Mkdir,
            region_len: 0,
            io_size: 8192,
            pattern: Pattern::Sequential,
            pacing: Pacing::Max,
            samples: 0,
            source: Some(Source::new("a small tree", Tree::make)),
            io: Default::default(),
        };
        let phase = |name: &str, step| Phase {
            name: name.into(),
            step,
        };
        let all = |stop| Step::Streams {
            streams: vec![0, 1],
            stop,
        };
        Ok(Plan {
            streams: vec![stream("t0"), stream("t1")],
            phases: vec![
                phase("create", all(Stop::OpsEnd)),
                phase("sync", Step::Action(Action::Sync)),
                phase("remove", all(Stop::OpsEnd)),
            ],
            direct: false,
            seed: 7,
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
        let mut per_phase = Vec::new();
        for p in 0..s.phases.len() {
            let mut ops = std::collections::BTreeMap::<String, usize>::new();
            for st in s.load_phase(p)? {
                for x in &st.samples {
                    assert_eq!(x.errno, 0, "{x:?}");
                    *ops.entry(x.op.as_str().to_string()).or_default() += 1;
                }
            }
            per_phase.push(json!(ops));
        }
        Ok(Box::new(Counted(json!(per_phase))))
    }
    fn report(&self) -> &'static dyn iotrial::present::KindReport {
        iotrial::workload::report_of("dvr").unwrap()
    }
}

#[test]
fn source_streams_create_then_remove_a_tree_with_every_op_sampled() {
    let target = tempfile::tempdir().unwrap();
    let stack = StackSpec {
        name: "dir".into(),
        ..Default::default()
    };
    let devices = [DeviceSpec::Dir(target.path().to_path_buf())];
    let w = TreeWork;
    let params = w.resolve(&[]).unwrap();
    let setup = Setup {
        workload: "treework",
        stack: &stack,
        devices: &devices,
        build: BuildOptions::default(),
        monitor: &iotrial::monitor::Settings::default(),
        repeat: 1,
        switch: None,
        cpus: Default::default(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut ledger = Ledger::detached();
    let out = trial::run(&w, &params, &setup, &mut ledger, &stop, false).unwrap();
    let each = |n: usize| 2 * n; // two streams
    assert_eq!(
        out.doc.verdict,
        json!([
            {},
            {"mkdir": each(DIRS), "create": each(1), "write": each(1), "fsync": each(1),
             "close": each(1), "stat": each(1)},
            {},
            {"unlink": each(1), "rmdir": each(DIRS)}
        ])
    );
    let dir = tempfile::tempdir().unwrap();
    trial::write(dir.path(), &out).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("samples.csv")).unwrap();
    assert_eq!(
        csv.lines()
            .filter(|l| l.contains(",create,tree,mkdir,"))
            .count(),
        40
    );
    assert!(csv.contains(",create,tree,write,0,8192,"), "{csv}");
    assert_eq!(
        csv.lines()
            .filter(|l| l.contains(",remove,tree,rmdir,"))
            .count(),
        40
    );
    // Read back, every sample keeps its op.
    let back = iotrial::result::csv::read_samples(&dir.path().join("samples.csv")).unwrap();
    let ops: usize = back
        .load()
        .unwrap()
        .iter()
        .flat_map(|s| &s.samples)
        .filter(|s| s.op == Op::Fsync)
        .count();
    assert_eq!(ops, 2);
    drop(out);
    let errors = ledger.release_all();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}
