//! A study's raw baseline: the first stack that writes its drives raw (a `regions` or
//! `partitions` layout). A trial of another stack may be judged against that stack's finished
//! trial of the same workload (stream's `raw_fraction`), scaled by how much of the raw stack's
//! write bandwidth its own data can use: a RAID10 over the same six drives, three drives' worth.

use super::manifest::{Manifest, Status};
use super::{Study, Trial};
use crate::stack::LayoutKind;
use crate::workload::Reference;
use std::path::Path;

/// The reference for trial `t` of `study` (resolved), when the raw stack's trial of the same
/// workload (the same repeat, else the first) comes before `t` in the manifest's run order and
/// is done in the results directory `root`.
pub fn for_trial(study: &Study, manifest: &Manifest, root: &Path, t: &Trial) -> Option<Reference> {
    let raw = study
        .stacks
        .iter()
        .find(|s| s.layout != LayoutKind::Files && s.name != t.stack.name)?;
    // Only a trial that runs before `t` counts, as in a run of the whole study in order: a
    // resumed run, a shard and a merge then judge `t` alike.
    let before = manifest.trials.iter().position(|r| r.id == t.id)?;
    let done = [t.repeat, 1].into_iter().find_map(|r| {
        let id = Trial::make_id(&raw.name, &t.workload, r);
        manifest.trials[..before]
            .iter()
            .find(|rec| rec.id == id && rec.status == Status::Done)
    })?;
    let doc = crate::result::read(&root.join(&done.path).join("result.json")).ok()?;
    Some(Reference {
        stack: raw.name.clone(),
        kind: doc.kind,
        verdict: doc.verdict,
        share: t.stack.data_devices() / raw.data_devices(),
    })
}

/// How [`note`] begins.
pub const NOTE_START: &str = "raw figures are relative to stack ";

/// What a trial's warnings say of the reference it was judged against.
pub fn note(r: &Reference, stack_devices: f64) -> String {
    let t = |x: f64| crate::units::trim_float((x * 1000.0).round() / 1000.0);
    format!(
        "{NOTE_START}{}, scaled by {}: this stack's data can use {} devices' worth of write bandwidth, {}'s {}",
        r.stack,
        t(r.share),
        t(stack_devices),
        r.stack,
        t(stack_devices / r.share)
    )
}
