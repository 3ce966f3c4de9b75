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

#[test]
fn default_hdd() {
    let c = on("hdd,size=16GiB");
    for f in &c.twin.found {
        eprintln!("{} = {}  ({})", f.name, f.value, f.how);
    }
    for u in &c.twin.unknown {
        eprintln!("?? {} : {}", u.name, u.why);
    }
    eprintln!("{}", c.spec);
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
