//! Known answers on the models themselves, in this process: characterize recovers the
//! parameters of models drawn at random, on the model's own timeline (the served devices'
//! known answers, through the kernel, are `tests/characterize.rs`).

use super::*;
use crate::emu::ModelSpec;

fn on(spec: &str) -> Characterized {
    let s = ModelSpec::parse(spec).unwrap();
    let m = s.build().unwrap();
    characterize_model(m, &CharOptions::default(), &mut |l: &str| eprintln!("{l}")).unwrap()
}

fn show(spec: &str) {
    let c = on(spec);
    for f in &c.twin.found {
        eprintln!("{} = {}  ({})", f.name, f.value, f.how);
    }
    for u in &c.twin.unknown {
        eprintln!("?? {} : {}", u.name, u.why);
    }
    eprintln!(
        "{}\n{} I/Os, {:.1} s of device time",
        c.spec, c.ios, c.device_seconds
    );
}

#[test]
fn show_rpo() {
    show("hdd,size=32GiB,queue_order=rpo,age_limit=200ms,rpm=5400,write_buffer=8MiB");
}

#[test]
fn show_smr() {
    show("smr,size=16GiB,cache=256MiB,band=16MiB,idle=300ms");
}

#[test]
fn show_flash() {
    show("flash,size=8GiB,au=2MiB,open_units=5,read_rate=30,write_rate=15");
}

#[test]
fn full_stroke_pairs() {
    let s = ModelSpec::parse("hdd,size=16GiB").unwrap();
    let m = s.build().unwrap();
    static NEVER: AtomicBool = AtomicBool::new(false);
    let mut run = Runner::on_model(m, &NEVER);
    let cap = 16u64 << 30;
    let steps: Vec<crate::probe::script::Step> = (0..8)
        .flat_map(|i| {
            [
                crate::probe::script::Step::read(i * 1_000_000, 4096),
                crate::probe::script::Step::read(cap - 10_000_000 + i * 999_424, 4096),
            ]
        })
        .collect();
    for t in run.run(&steps).unwrap() {
        eprintln!("{} {:.3}", t.offset, t.latency * 1e3);
    }
}

#[test]
fn qd32_rpo() {
    use crate::probe::script::Step;
    for (order, qd) in [
        ("fifo", 32),
        ("rpo,age_limit=200ms", 32),
        ("rpo,age_limit=200ms", 8),
        ("rpo,age_limit=100ms", 8),
        ("rpo,age_limit=1s", 32),
    ] {
        let s = ModelSpec::parse(&format!("hdd,size=32GiB,queue_order={order}")).unwrap();
        let m = s.build().unwrap();
        static NEVER: AtomicBool = AtomicBool::new(false);
        let mut run = Runner::on_model(m, &NEVER);
        let mut d = Draw::new(3);
        let mut pre = vec![Step::flush(), Step::Idle(0.5)];
        pre.extend((0..100).map(|_| Step::write(d.aligned(0, 32 << 30, 4096), 1 << 20)));
        pre.push(Step::flush());
        run.run(&pre).unwrap();
        let steps: Vec<Step> = (0..2000)
            .map(|_| Step::read(d.aligned(0, 32 << 30, 4096), 4096))
            .collect();
        let t = run.run_at(&steps, qd).unwrap();
        let span = t.iter().map(|t| t.done()).fold(0.0, f64::max);
        eprintln!(
            "{order} {qd}: {} IOPS, max {}",
            2000.0 / span,
            t.iter().map(|t| t.latency).fold(0.0, f64::max)
        );
    }
}

#[test]
fn sawtooth_dump() {
    use crate::probe::script::Step;
    for spec in ["hdd,size=16GiB", "smr,size=16GiB,cache=256MiB"] {
        let s = ModelSpec::parse(spec).unwrap();
        let m = s.build().unwrap();
        static NEVER: AtomicBool = AtomicBool::new(false);
        let mut run = Runner::on_model(m, &NEVER);
        let x = 1u64 << 30;
        let mut steps = Vec::new();
        for j in 0..120u64 {
            let xj = x + j * (64 << 20);
            let gap = (2 << 20) + 256 * 1024 + j * 25 * 4096;
            steps.extend([Step::read(xj, 4096), Step::read(xj + gap, 4096)]);
        }
        let t = run.run(&steps).unwrap();
        let l: Vec<String> = t
            .iter()
            .skip(1)
            .step_by(2)
            .map(|t| format!("{:.1}", t.latency * 1e3))
            .collect();
        eprintln!("{spec}: {}", l.join(" "));
    }
}

#[test]
#[ignore]
fn probe_dev() {
    use crate::probe::script::Step;
    let dev = std::env::var("DEV").unwrap();
    static NEVER: AtomicBool = AtomicBool::new(false);
    let mut run = Runner::new(std::path::Path::new(&dev), 1.0, false, &NEVER);
    for gap in [8192u64, 65536, 1 << 20] {
        let mut steps = Vec::new();
        for i in 0..5u64 {
            let x = (1 << 30) + i * (256 << 20);
            steps.extend([
                Step::read(x, 4096),
                Step::Idle(0.05),
                Step::read(x, 4096),
                Step::read(x + gap, 4096),
            ]);
        }
        let t = run.run(&steps).unwrap();
        eprintln!(
            "{gap}: {:?}",
            t.iter()
                .map(|t| (t.latency * 1e4).round() / 10.0)
                .collect::<Vec<_>>()
        );
    }
}
