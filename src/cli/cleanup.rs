//! `iotrial cleanup`: releases what killed runs left behind, as their ledgers list it; the
//! resources of a run still alive are left alone.

use anyhow::Result;

/// Releases the dead runs' resources and prints each one.
pub fn run() -> Result<()> {
    let dir = iotrial::stack::ledger::ledger_dir();
    let rep = iotrial::stack::release::cleanup::run(&dir);
    for r in &rep.released {
        println!("{r}");
    }
    for pid in &rep.live {
        println!("left alone: the resources of running process {pid}");
    }
    if rep.released.is_empty() && rep.errors.is_empty() {
        println!("nothing to clean up in {}", dir.display());
    }
    if !rep.errors.is_empty() {
        anyhow::bail!("cleanup incomplete: {}", rep.errors.join("; "));
    }
    Ok(())
}
