//! fsck's plan and parameters.

use super::*;

fn params(set: &[(&str, &str)]) -> Result<Params, ParamError> {
    let o: Vec<(String, String)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Fsck.resolve(&o)
}

#[test]
fn the_plan_fills_then_unmounts_checks_and_mounts_again() {
    let p = params(&[
        ("files", "10"),
        ("threads", "3"),
        ("checker_args", "-o ag_stride=8"),
    ])
    .unwrap();
    let plan = Fsck.plan(&p).unwrap();
    plan.check().unwrap();
    let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "prepare",
            "fill",
            "sync",
            "unmount",
            "drop_caches",
            "fsck",
            "mount"
        ]
    );
    assert_eq!(plan.streams.len(), 3);
    assert!(plan.streams.iter().all(|s| s.source.is_some()));
    let files: Vec<u64> = fill_specs(&p, SyncPolicy::Fsync)
        .iter()
        .map(|s| s.files)
        .collect();
    assert_eq!(files, [4, 3, 3]);
    assert_eq!(plan.checker_args, ["-o", "ag_stride=8"]);
}

#[test]
fn impossible_parameters_name_their_key() {
    for (k, v) in [
        ("files", "0"),
        ("threads", "0"),
        ("dirs", "0"),
        ("sync", "always"),
    ] {
        let p = params(&[(k, v)]).unwrap();
        let e = Fsck.plan(&p).unwrap_err().to_string();
        assert!(e.contains(k), "{k}: {e}");
    }
    let e = Fsck
        .plan(&params(&[("sync", "always")]).unwrap())
        .unwrap_err();
    assert!(e.to_string().contains("none, fsync, end"), "{e}");
}

#[test]
fn the_plan_bounds_what_the_fill_stores() {
    let p = params(&[
        ("files", "1000"),
        ("threads", "2"),
        ("dirs", "5"),
        ("file_size", "5000"),
    ])
    .unwrap();
    // 1000 files of two 4 KiB blocks and a metadata block, 10 directories of one block.
    let want = 1000 * (8192 + 4096) + 10 * 4096;
    assert_eq!(Fsck.plan(&p).unwrap().stores_at_most, Some(want));
    let empty = params(&[("files", "10"), ("file_size", "0")]).unwrap();
    assert_eq!(stores_at_most(&empty), 10 * 4096 + 20 * 4096);
}
