//! Streams whose writes carry fio's verify header: what lands in the target reads back as
//! each write's offset, writer, order and time, at every queue depth and backend.

use super::{
    run, BackendKind, EngineOptions, Op, Pacing, Pattern, Phase, Placement, Plan, PlanError, Seal,
    Step, Stop, StreamIo, StreamPlan,
};
use crate::verify::{inspect, Checksum};

const IO: u64 = 16 * 1024;
const REGION: u64 = 1 << 20;

fn stream(name: &str, seal: Seal, depth: u32, backend: BackendKind) -> StreamPlan {
    StreamPlan {
        name: name.into(),
        role: "write".into(),
        op: Op::Write,
        region_len: REGION,
        io_size: IO,
        pattern: Pattern::Sequential,
        pacing: Pacing::Max,
        samples: (REGION / IO) as usize,
        source: None,
        io: StreamIo {
            depth,
            backend: Some(backend),
            seal: Some(seal),
            ..Default::default()
        },
    }
}

/// Two streams write one pass each over their halves of a file; every interval of the file
/// then holds a header naming its stream, its offset and a numberio in write order.
fn written_file(seal: Seal, depth: u32, backend: BackendKind) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("target");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(2 * REGION)
        .unwrap();
    let phases = vec![Phase {
        name: "write".into(),
        step: Step::Streams {
            streams: vec![0, 1],
            stop: Stop::OpsEnd,
        },
    }];
    let streams = vec![
        stream("w0", seal, depth, backend),
        stream("w1", seal, depth, backend),
    ];
    let plan = Plan::new(streams, phases, false, 7);
    plan.check().unwrap();
    let placements: Vec<Placement> = (0..2)
        .map(|i| Placement {
            path: path.clone(),
            offset: i * REGION,
            len: REGION,
        })
        .collect();
    let opts = EngineOptions::buffered();
    let out = run(&plan, &placements, opts, |_| {}).unwrap();
    assert!(out
        .streams
        .iter()
        .all(|s| s.samples.iter().all(|x| x.errno == 0)));
    std::fs::read(&path).unwrap()
}

#[test]
fn every_interval_names_its_writer_offset_and_order() {
    for (sum, interval, depth, backend) in [
        (Checksum::Crc32c, 4096, 1, BackendKind::Psync),
        (Checksum::Meta, 512, 1, BackendKind::Psync),
        (Checksum::Md5, 16 * 1024, 8, BackendKind::IoUring),
    ] {
        let seal = Seal {
            checksum: sum,
            interval,
        };
        let data = written_file(seal, depth, backend);
        let mut last_time = [0u64; 2];
        for (k, piece) in data.chunks(interval as usize).enumerate() {
            let s = inspect(piece, None).unwrap_or_else(|e| panic!("{sum:?} interval {k}: {e}"));
            let at = (k as u64) * u64::from(interval);
            let writer = (at / REGION) as usize;
            assert_eq!(s.header.offset, at);
            assert_eq!(s.header.thread as usize, writer);
            // One pass in order: the n-th write of a stream lands n I/Os into its region.
            assert_eq!(
                u64::from(s.header.numberio),
                (at % REGION) / IO,
                "{sum:?} at {at}"
            );
            let t = u64::from(s.header.time_sec) * 1_000_000_000 + u64::from(s.header.time_nsec);
            if at % IO == 0 && depth == 1 {
                assert!(t >= last_time[writer], "write times in issue order");
                last_time[writer] = t;
            }
        }
    }
}

#[test]
fn an_interval_that_cannot_hold_its_header_is_refused() {
    let too_small = Seal {
        checksum: Checksum::Md5,
        interval: 56,
    };
    let plan = Plan::sampled(
        "write",
        vec![stream("w0", too_small, 1, BackendKind::Psync)],
        false,
        7,
    );
    assert!(matches!(plan.check(), Err(PlanError::BadSeal { .. })));
    let longer = Seal {
        checksum: Checksum::Crc32c,
        interval: 2 * IO as u32,
    };
    let plan = Plan::sampled(
        "write",
        vec![stream("w0", longer, 1, BackendKind::Psync)],
        false,
        7,
    );
    let e = plan.check().unwrap_err().to_string();
    assert!(
        e.contains("longer than the stream's 16384-byte I/Os"),
        "{e}"
    );
}
