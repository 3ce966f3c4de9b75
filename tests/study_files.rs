//! Study files: every kind of bad input gives an error naming the file, line, column and key;
//! the built-in `dvr` study parses and expands; `--quick`, `--only` and `--device` apply.

use iotrial::study::{builtin, expand, plan::file, Options, Origin, StudyError};

const GOOD: &str = r#"name = "t"
description = "test study"
device = "image:size=1GiB"

[quick]
device = "image:size=512MiB"
set = { samples = 16 }

[[workloads]]
kind = "dvr"
set = { samples = "64", region_size = "8MiB" }

[[stacks]]
name = "a"
fs = "ext4"

[[stacks]]
name = "b"
layout = "regions"
"#;

fn origin() -> Origin {
    Origin::File("my.toml".into())
}

/// Parses `text`, expecting an error; returns (line, column, key, message).
fn err(text: &str) -> (usize, usize, Option<String>, String) {
    match file::parse(text, &origin()) {
        Err(StudyError::At {
            file,
            line,
            column,
            key,
            message,
        }) => {
            assert_eq!(file, "my.toml");
            (line, column, key, message)
        }
        other => panic!("expected a located error, got {other:?}"),
    }
}

/// GOOD with `from` replaced by `to`.
fn edit(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn good_study_parses() {
    let s = file::parse(GOOD, &origin()).unwrap();
    assert_eq!(s.name, "t");
    assert_eq!(
        s.repeats, 3,
        "a study without `repeats` repeats every stack 3 times"
    );
    assert_eq!((s.max_repeats, s.interval, s.noise), (None, None, None));
    assert_eq!(s.stacks.len(), 2);
    assert_eq!(s.quick.set.get("samples"), Some("16"));
    assert_eq!(s.workloads[0].name, "dvr");
    assert!(
        !s.stacks[0].baseline,
        "a stack is ranked unless it says otherwise"
    );
    let s = file::parse(&edit("layout = \"regions\"", "baseline = true"), &origin()).unwrap();
    assert!(s.stacks[1].baseline);
}

#[test]
fn unknown_top_level_key() {
    let (line, col, key, msg) = err(&edit("description", "descripton"));
    assert_eq!((line, col), (2, 1));
    assert_eq!(key.as_deref(), Some("descripton"));
    assert!(
        msg.contains("unknown field `descripton`") && msg.contains("`description`"),
        "{msg}"
    );
}

#[test]
fn unknown_stack_key_names_the_stack_and_the_allowed_keys() {
    let (line, _, key, msg) = err(&edit("fs = \"ext4\"", "filesystem = \"ext4\""));
    assert_eq!(line, 15);
    assert_eq!(key.as_deref(), Some("stacks[0].filesystem"));
    assert!(
        msg.contains("expected one of") && msg.contains("`fs`"),
        "{msg}"
    );
}

#[test]
fn wrong_type() {
    let (line, col, key, msg) = err(&edit("fs = \"ext4\"", "fs = \"ext4\"\nmkfs = \"-T\""));
    assert_eq!((line, col), (16, 8));
    assert_eq!(key.as_deref(), Some("stacks[0].mkfs"));
    assert!(msg.contains("expected a sequence"), "{msg}");
    let (line, _, key, msg) = err(&edit("fs = \"ext4\"", "baseline = \"yes\""));
    assert_eq!(line, 15);
    assert_eq!(key.as_deref(), Some("stacks[0].baseline"));
    assert!(msg.contains("expected a boolean"), "{msg}");
}

#[test]
fn toml_syntax_error() {
    let (line, _, _, msg) = err(&edit("name = \"a\"", "name = \"a"));
    assert_eq!(line, 14);
    assert!(!msg.is_empty());
}

#[test]
fn duplicate_stack_names() {
    let (line, col, key, msg) = err(&edit("name = \"b\"", "name = \"a\""));
    assert_eq!((line, col), (18, 8));
    assert_eq!(key.as_deref(), Some("stacks[1].name"));
    assert!(msg.contains("already used by stacks[0]"), "{msg}");
}

#[test]
fn bad_stack_name() {
    let (line, _, key, msg) = err(&edit("name = \"b\"", "name = \"../b\""));
    assert_eq!(line, 18);
    assert_eq!(key.as_deref(), Some("stacks[1].name"));
    assert!(msg.contains("A-Z a-z 0-9"), "{msg}");
}

#[test]
fn unknown_workload_kind() {
    let (line, col, key, msg) = err(&edit("kind = \"dvr\"", "kind = \"tivo\""));
    assert_eq!((line, col), (10, 8));
    assert_eq!(key.as_deref(), Some("workloads[0].kind"));
    assert!(
        msg.contains("unknown workload 'tivo'; available: dvr"),
        "{msg}"
    );
}

#[test]
fn unknown_parameter() {
    let (line, col, key, msg) = err(&edit("samples = \"64\"", "sampels = \"64\""));
    assert_eq!((line, col), (11, 9));
    assert_eq!(key.as_deref(), Some("workloads[0].set.sampels"));
    assert!(msg.contains("allowed: recorders, players"), "{msg}");
}

#[test]
fn bad_parameter_value() {
    let (line, col, key, msg) = err(&edit("\"64\"", "\"many\""));
    assert_eq!((line, col), (11, 19));
    assert_eq!(key.as_deref(), Some("workloads[0].set.samples"));
    assert!(msg.contains("not a whole number"), "{msg}");
}

#[test]
fn impossible_parameters_found_by_the_plan() {
    let (line, _, key, msg) = err(&edit("\"8MiB\"", "\"4KiB\", io_size = \"1MiB\""));
    assert_eq!(line, 11);
    assert_eq!(key.as_deref(), Some("workloads[0].set.region_size"));
    assert!(msg.contains("at least io_size"), "{msg}");
}

#[test]
fn quick_overrides_are_checked_too() {
    let (line, _, key, msg) = err(&edit("samples = 16", "samples = 0"));
    assert_eq!(line, 7);
    assert_eq!(key.as_deref(), Some("quick.set.samples"));
    assert!(msg.starts_with("with --quick: "), "{msg}");
}

#[test]
fn parameter_value_of_the_wrong_type() {
    let (line, _, key, msg) = err(&edit("samples = 16", "samples = { n = 16 }"));
    assert_eq!(line, 7);
    assert_eq!(key.as_deref(), Some("quick.set.samples"));
    assert!(msg.contains("string, number or true/false"), "{msg}");
}

#[test]
fn zero_repeats() {
    let (line, col, key, msg) = err(&edit("description", "repeats = 0\ndescription"));
    assert_eq!((line, col), (2, 11));
    assert_eq!(key.as_deref(), Some("repeats"));
    assert!(msg.contains("from 1 to"), "{msg}");
}

#[test]
fn no_stacks_and_no_workloads() {
    let cut = GOOD.find("[[stacks]]").unwrap();
    let (_, _, key, msg) = err(&GOOD[..cut]);
    assert_eq!(key.as_deref(), Some("stacks"));
    assert!(msg.contains("no stacks"), "{msg}");
    let (_, _, key, msg) = err("name = \"x\"\n[[stacks]]\nname = \"a\"\n");
    assert_eq!(key.as_deref(), Some("workloads"));
    assert!(msg.contains("kind = one of: dvr"), "{msg}");
}

#[test]
fn filesystem_keys_on_a_raw_layout() {
    let (line, _, key, msg) = err(&edit(
        "layout = \"regions\"",
        "layout = \"regions\"\nmount = \"noatime\"",
    ));
    assert_eq!(line, 20);
    assert_eq!(key.as_deref(), Some("stacks[1].mount"));
    assert!(msg.contains("does not apply"), "{msg}");
}

#[test]
fn missing_name_and_bad_device() {
    let (line, _, _, msg) = err(&edit("name = \"t\"\n", ""));
    assert_eq!(line, 1);
    assert!(msg.contains("missing field `name`"), "{msg}");
    let (line, _, key, msg) = err(&edit("\"image:size=1GiB\"", "\"/dev/sdb\""));
    assert_eq!(line, 3);
    assert_eq!(key.as_deref(), Some("device"));
    assert!(msg.contains("allowed: dir:PATH, image:"), "{msg}");
    let (line, _, key, msg) = err(&edit(
        "fs = \"ext4\"",
        "fs = \"ext4\"\ndevices = [\"image:size=1GiB\", \"image:size=1KiB\"]",
    ));
    assert_eq!(line, 16);
    assert_eq!(key.as_deref(), Some("stacks[0].devices[1]"));
    assert!(msg.contains("at least 64MiB"), "{msg}");
    let (_, _, key, msg) = err(&edit(
        "fs = \"ext4\"",
        "fs = \"xfs\"\nlogdev = \"floppy:0\"",
    ));
    assert_eq!(key.as_deref(), Some("stacks[0].logdev"));
    assert!(msg.contains("unknown device kind 'floppy'"), "{msg}");
    // Kinds that need kernel support are judged when the stack is built, not here.
    let md = edit("fs = \"ext4\"", "fs = \"xfs\"\ndevices = [\"md:raid10\"]");
    assert!(file::parse(&md, &origin()).is_ok());
}

#[test]
fn error_display_names_file_line_and_key() {
    let e = file::parse(&edit("kind = \"dvr\"", "kind = \"tivo\""), &origin()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("my.toml:10:8: workloads[0].kind: unknown workload 'tivo'"),
        "{e}"
    );
    let e = builtin::load("no-such-study").unwrap_err().to_string();
    assert!(e.contains("built-in: dvr"), "{e}");
}

#[test]
fn builtin_dvr_is_the_seed_matrix() {
    let list = builtin::list().unwrap();
    let dvr = list.iter().find(|b| b.name == "dvr").unwrap();
    // The seed's six stacks, then a host-directory baseline that needs no root.
    assert_eq!((dvr.stacks, dvr.path.as_str()), (7, "studies/dvr.toml"));
    assert!(dvr.description.starts_with("Seed 000"));
    // The shipped file runs as it is and is the same study.
    let from_file = builtin::load("studies/dvr.toml").unwrap();
    assert_eq!(from_file, builtin::load("dvr").unwrap());

    let all = expand(&from_file, &Options::default()).unwrap();
    assert_eq!(all.study.repeats, 3, "three repeats of every stack");
    assert_eq!(all.trials.len(), 21);
    assert!(
        all.trials[7..14].iter().all(|t| t.repeat == 2),
        "round-robin: the second repeat of every stack after the first of all"
    );
    let mut exp = all;
    exp.trials.truncate(7);
    let ids: Vec<&str> = exp.trials.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "raw-partitions/dvr/r1",
            "ext4/dvr/r1",
            "ext4-noatime/dvr/r1",
            "ext4-writeback/dvr/r1",
            "ext4-commit1/dvr/r1",
            "xfs/dvr/r1",
            "host-dir/dvr/r1"
        ]
    );
    let host = exp.trials.pop().unwrap();
    assert_eq!(host.stack.devices, ["dir:/var/tmp"]);
    assert!(host.stack.baseline, "host-dir is shown, never ranked");
    assert!(exp.trials.iter().all(|t| !t.stack.baseline));
    assert_eq!(host.stack.scheduler, None);
    let mounts: Vec<&str> = exp.trials.iter().map(|t| t.stack.mount.as_str()).collect();
    assert_eq!(
        mounts,
        [
            "",
            "",
            "noatime",
            "noatime,data=writeback",
            "noatime,data=writeback,commit=1",
            ""
        ]
    );
    for t in &exp.trials {
        assert_eq!(t.stack.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(t.stack.devices, ["emu:hdd,drive=wd80emaz"]);
        assert_eq!(t.params.u64("samples"), 2048);
    }
    assert_eq!(exp.trials[0].stack.layout.name(), "partitions");
    assert_eq!(exp.trials[1].stack.mkfs, ["-T", "largefile4"]);
    assert_eq!(exp.trials[5].stack.fs.as_deref(), Some("xfs"));
    // Regions fit the device with room for the filesystems.
    // (the twin's 16 GiB; the seed's ten parts covered nearly all of its disk).
    let regions = exp.trials[0].params.u64("region_size") * 10;
    assert!(regions <= 16 << 30 && regions * 100 >= (16u64 << 30) * 90);
}

#[test]
fn quick_only_and_device() {
    let dvr = builtin::load("dvr").unwrap();
    let quick = Options {
        quick: true,
        ..Options::default()
    };
    let exp = expand(&dvr, &quick).unwrap();
    assert_eq!(exp.trials.len(), 21, "7 stacks, 3 repeats, quick too");
    // The quick study says what it cannot answer; the full one has no such note.
    let note = exp.study.note.as_deref().unwrap_or_default();
    assert!(note.contains("does not order the ext4 variants"), "{note}");
    assert!(expand(&dvr, &Options::default())
        .unwrap()
        .study
        .note
        .is_none());
    assert!(
        exp.study.to_toml().contains("note = "),
        "study.toml keeps it"
    );
    for t in &exp.trials {
        if t.stack.name != "host-dir" {
            assert_eq!(t.stack.devices, ["emu:hdd,drive=wd80emaz,size=4GiB"]);
        }
        assert_eq!(t.params.u64("samples"), 64);
        assert_eq!(t.params.u64("region_size"), 360 << 20);
    }

    let only = Options {
        only: vec!["xfs,ext4".into()],
        device: Some("block:/dev/sdz".into()),
        ..Options::default()
    };
    let exp = expand(&dvr, &only).unwrap();
    let names: Vec<&str> = exp.study.stacks.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ext4", "xfs"], "study order is kept");
    assert!(exp
        .trials
        .iter()
        .all(|t| t.stack.devices == ["block:/dev/sdz"]));
    assert_eq!(exp.study.device.as_deref(), Some("block:/dev/sdz"));

    let e = expand(
        &dvr,
        &Options {
            only: vec!["zfs".into()],
            ..Options::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("no stack 'zfs'") && e.contains("raw-partitions, ext4, ext4-noatime"),
        "{e}"
    );
}

#[test]
fn repeats_and_workload_names() {
    let text = GOOD.replace("description", "repeats = 2\ndescription")
        + "\n[[workloads]]\nname = \"dvr-buffered\"\nkind = \"dvr\"\nset = { direct = false, region_size = \"8MiB\" }\n";
    let s = file::parse(&text, &origin()).unwrap();
    let exp = expand(&s, &Options::default()).unwrap();
    let ids: Vec<&str> = exp.trials.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a/dvr/r1",
            "a/dvr-buffered/r1",
            "b/dvr/r1",
            "b/dvr-buffered/r1",
            "a/dvr/r2",
            "a/dvr-buffered/r2",
            "b/dvr/r2",
            "b/dvr-buffered/r2"
        ],
        "round-robin: repeat 1 of every stack before repeat 2 of any"
    );
    assert!(!exp.trials[1].params.bool("direct"));
    // --repeats replaces the study's; a shard keeps the run order within itself.
    let three = Options {
        repeats: Some(3),
        ..Options::default()
    };
    assert_eq!(expand(&s, &three).unwrap().trials.len(), 12);
    let shard = Options {
        shard: Some(iotrial::study::Shard { index: 1, count: 3 }),
        ..three
    };
    let ids: Vec<String> = expand(&s, &shard)
        .unwrap()
        .trials
        .iter()
        .map(|t| t.id.clone())
        .collect();
    assert_eq!(
        ids,
        [
            "a/dvr/r1",
            "b/dvr-buffered/r1",
            "b/dvr/r2",
            "a/dvr-buffered/r3"
        ]
    );
    // Two entries of one kind need distinct names.
    let dup = GOOD.to_string() + "\n[[workloads]]\nkind = \"dvr\"\n";
    let (line, _, key, msg) = err(&dup);
    assert_eq!(line, 22);
    assert_eq!(key.as_deref(), Some("workloads[1].name"));
    assert!(msg.contains("distinct `name`"), "{msg}");
}

#[test]
fn adaptive_repeats_are_read_checked_and_written_back() {
    let text = edit(
        "description",
        "repeats = 3\nmax_repeats = 6\ninterval = \"2%\"\nnoise = \"1.5%\"\ndescription",
    )
    .replace(
        "set = { samples = 16 }",
        "set = { samples = 16 }\nmax_repeats = 4",
    );
    let s = file::parse(&text, &origin()).unwrap();
    assert_eq!(s.max_repeats, Some(6));
    assert_eq!(s.interval.unwrap().share(), 0.02);
    assert_eq!(s.noise.unwrap().text(), "1.5%");
    assert_eq!(s.quick.max_repeats, Some(4));
    let r = s.repeat_rule();
    assert!(r.adaptive());
    assert_eq!(r.rule().noise, 0.015);
    // --quick takes its own maximum; study.toml of the results gives the same study back.
    let quick = expand(
        &s,
        &Options {
            quick: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(quick.study.max_repeats, Some(4));
    let back = file::parse(&quick.study.to_toml(), &origin()).unwrap();
    assert_eq!(back.max_repeats, Some(4));
    assert_eq!(back.interval, s.interval);
    assert_eq!(back.noise, s.noise);
    // Only the fixed repeats are trials of the expansion; the rest are added as needed.
    assert_eq!(quick.trials.len(), 6);
    // Bad values name their key.
    let (_, _, key, msg) = err(&edit("description", "max_repeats = 2\ndescription"));
    assert_eq!(key.as_deref(), Some("max_repeats"));
    assert!(msg.contains("below repeats (3)"), "{msg}");
    let (_, _, key, msg) = err(&edit("description", "interval = \"2\"\ndescription"));
    assert_eq!(key.as_deref(), Some("interval"));
    assert!(msg.contains("not a percentage"), "{msg}");
    let (_, _, key, _) = err(&edit("description", "noise = \"0%\"\ndescription"));
    assert_eq!(key.as_deref(), Some("noise"));
}

#[test]
fn no_device_anywhere() {
    let s = file::parse(&edit("device = \"image:size=1GiB\"\n", ""), &origin()).unwrap();
    let e = expand(&s, &Options::default()).unwrap_err().to_string();
    assert!(e.contains("stack 'a'") && e.contains("--device"), "{e}");
    assert!(expand(
        &s,
        &Options {
            quick: true,
            ..Options::default()
        }
    )
    .is_ok());
}

#[test]
fn resolved_study_round_trips_through_study_toml() {
    for opts in [
        Options::default(),
        Options {
            quick: true,
            only: vec!["ext4-noatime".into()],
            ..Options::default()
        },
    ] {
        let exp = expand(&builtin::load("dvr").unwrap(), &opts).unwrap();
        let text = exp.study.to_toml();
        assert!(
            text.contains("[workloads.set]\nrecorders = \"8\""),
            "{text}"
        );
        let back = file::parse(&text, &origin()).unwrap();
        assert_eq!(back, exp.study, "{text}");
        // Resolving a resolved study changes nothing.
        let again = expand(&back, &Options::default()).unwrap();
        assert_eq!(again.study, exp.study);
        assert_eq!(again.trials, exp.trials);
    }
}

const NAMED: &str = r#"name = "n"
[devices]
drive = "emu:hdd,size=1GiB"
ssd = "emu:ssd,size=256MiB"
[quick.devices]
drive = "emu:hdd,size=1GiB,scale=4"
ssd = "emu:ssd,size=256MiB,scale=4"
[[workloads]]
kind = "stream"
[[stacks]]
name = "md"
devices = ["drive", "drive"]
md = "raid10"
fs = "xfs"
logdev = "ssd"
"#;

#[test]
fn named_devices_stand_for_their_specs_and_quick_replaces_them() {
    let s = file::parse(NAMED, &origin()).unwrap();
    let plain = expand(&s, &Options::default()).unwrap();
    let st = &plain.study.stacks[0];
    assert_eq!(st.devices, ["emu:hdd,size=1GiB", "emu:hdd,size=1GiB"]);
    assert_eq!(st.logdev.as_deref(), Some("emu:ssd,size=256MiB"));
    let quick = Options {
        quick: true,
        ..Default::default()
    };
    let q = expand(&s, &quick).unwrap();
    assert_eq!(q.study.stacks[0].devices[1], "emu:hdd,size=1GiB,scale=4");
    assert_eq!(
        q.study.stacks[0].logdev.as_deref(),
        Some("emu:ssd,size=256MiB,scale=4")
    );
    // The resolved study (study.toml) is a study file of its own with the specs written in.
    let again = file::parse(&q.study.to_toml(), &origin()).unwrap();
    assert_eq!(again.stacks, q.study.stacks);
}

#[test]
fn unknown_device_names_and_stack_keys_name_their_key() {
    let (_, _, key, m) = err(&NAMED.replace("\"drive\", \"drive\"", "\"drive\", \"drives\""));
    assert_eq!(key.as_deref(), Some("stacks[0].devices[1]"));
    assert!(m.contains("'drives'") && m.contains("drive, ssd"), "{m}");
    let (_, _, key, m) =
        err(&NAMED.replace("ssd = \"emu:ssd,size=256MiB,scale=4\"", "hdd = \"emu:hdd\""));
    assert_eq!(key.as_deref(), Some("quick.devices.hdd"));
    assert!(m.contains("not one of them"), "{m}");
    let (_, _, key, m) = err(&NAMED.replace("md = \"raid10\"", "md = \"raid9\""));
    assert_eq!(key.as_deref(), Some("stacks[0].md"));
    assert!(
        m.contains("'raid9'") && m.contains("raid0, raid1, raid10"),
        "{m}"
    );
    let (_, _, key, _) = err(&NAMED.replace("md = \"raid10\"", "zpool = \"mirror\""));
    assert_eq!(key.as_deref(), Some("stacks[0].zpool"));
}

#[test]
fn sweeps_expand_into_one_workload_or_stack_per_value() {
    let text = edit(
        r#"set = { samples = "64", region_size = "8MiB" }"#,
        r#"set = { samples = [16, 32], region_size = "8MiB" }
quick = { samples = "{4,8,12}" }"#,
    )
    .replace(
        "name = \"a\"\nfs = \"ext4\"",
        "name = \"a\"\nfs = \"ext4\"\ndevices = [\"image:size={1GiB,2GiB}\"]",
    )
    .replace("description", "repeats = 1\ndescription");
    let study = file::parse(&text, &origin()).unwrap();
    let x = expand(&study, &Options::default()).unwrap();
    let ids: Vec<&str> = x.trials.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a-1GiB/dvr-samples-16/r1",
            "a-1GiB/dvr-samples-32/r1",
            "a-2GiB/dvr-samples-16/r1",
            "a-2GiB/dvr-samples-32/r1",
            "b/dvr-samples-16/r1",
            "b/dvr-samples-32/r1",
        ]
    );
    assert_eq!(x.trials[3].stack.devices, ["image:size=2GiB"]);
    assert_eq!(x.trials[1].params.u64("samples"), 32);
    // The resolved study runs the same trials (study.toml of the results directory).
    let again = expand(&x.study, &Options::default()).unwrap();
    assert_eq!(again.trials, x.trials);
    // --quick's list replaces the study's; --only takes a swept stack's name or its base.
    let quick = Options {
        quick: true,
        only: vec!["a-2GiB".into()],
        ..Default::default()
    };
    let q = expand(&study, &quick).unwrap();
    let ids: Vec<&str> = q.trials.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "a-2GiB/dvr-samples-4/r1",
            "a-2GiB/dvr-samples-8/r1",
            "a-2GiB/dvr-samples-12/r1"
        ]
    );
    // Every value is checked when the file is read, at its key.
    let (line, _, key, message) = err(&edit(r#"samples = "64""#, r#"samples = [16, "lots"]"#));
    assert_eq!(
        (line, key.as_deref()),
        (11, Some("workloads[0].set.samples"))
    );
    assert!(
        message.contains("'lots' is not a whole number"),
        "{message}"
    );
    let (_, _, key, message) = err(&edit(
        "device = \"image:size=1GiB\"",
        "device = \"image:size={1GiB,2GiB\"",
    ));
    assert_eq!(key.as_deref(), Some("device"));
    assert!(message.contains("without its"), "{message}");
}

/// Bytes free to iotrial (statfs's f_bavail × block size, what it lays files out in) on a
/// fresh filesystem made by `mkfs.ext4 -T largefile4` on a sparse image of `bytes`: the free
/// blocks less the reserved ones and the clusters ext4 keeps back for delayed allocation (2%
/// of the blocks, at most 4096).
fn ext4_largefile4_free(bytes: u64) -> Option<u64> {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("fs.img");
    std::fs::File::create(&img).unwrap().set_len(bytes).unwrap();
    let mkfs = std::process::Command::new("mkfs.ext4")
        .args(["-F", "-q", "-T", "largefile4"])
        .arg(&img)
        .status()
        .ok()?;
    assert!(mkfs.success(), "mkfs.ext4 failed");
    let out = std::process::Command::new("dumpe2fs")
        .arg("-h")
        .arg(&img)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in {text}"))
    };
    let held = field("Reserved block count:") + (field("Block count:") / 50).min(4096);
    Some((field("Free blocks:") - held) * field("Block size:"))
}

#[test]
fn builtin_dvr_regions_fit_ext4_on_its_twin() {
    // Regression: regions of 1600 MiB on the 16 GiB twin left the file stacks no room on ext4.
    let dvr = builtin::load("dvr").unwrap();
    for (quick, bytes) in [(false, 16u64 << 30), (true, 4 << 30)] {
        let opts = Options {
            quick,
            ..Options::default()
        };
        let exp = expand(&dvr, &opts).unwrap();
        let t = exp.trials.iter().find(|t| t.stack.name == "ext4").unwrap();
        let Some(free) = ext4_largefile4_free(bytes) else {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
            assert!(!ci, "mkfs.ext4 or dumpe2fs missing, and CI is set");
            eprintln!("skipped builtin_dvr_regions_fit_ext4_on_its_twin: no mkfs.ext4 or dumpe2fs");
            return;
        };
        let plan = t.workload_impl().plan(&t.params).unwrap();
        let regions = iotrial::stack::build::files::region_lengths(&plan, free);
        assert!(
            regions.is_ok(),
            "quick {quick}: {regions:?} bytes needed, {free} free"
        );
    }
}

#[test]
fn workload_cpus_is_read_checked_and_written_back() {
    use iotrial::trial::cpus::Policy;
    let s = file::parse(GOOD, &origin()).unwrap();
    assert_eq!(s.workload_cpus, Policy::All);
    let exp = expand(&s, &Options::default()).unwrap();
    assert!(!exp.study.to_toml().contains("workload_cpus"));
    let text = edit(
        "device = \"image:size=1GiB\"\n",
        "device = \"image:size=1GiB\"\nworkload_cpus = \"apart\"\n",
    );
    let s = file::parse(&text, &origin()).unwrap();
    assert_eq!(s.workload_cpus, Policy::Apart);
    let exp = expand(&s, &Options::default()).unwrap();
    let toml = exp.study.to_toml();
    assert!(toml.contains("workload_cpus = \"apart\""), "{toml}");
    assert_eq!(file::parse(&toml, &origin()).unwrap(), exp.study);
    let (line, _, key, msg) = err(&edit(
        "device = \"image:size=1GiB\"\n",
        "device = \"image:size=1GiB\"\nworkload_cpus = \"timer\"\n",
    ));
    assert_eq!((line, key.as_deref()), (4, Some("workload_cpus")));
    assert!(
        msg.contains("`timer`") && msg.contains("all, apart"),
        "{msg}"
    );
    // The streaming study keeps its writers apart from the drives' timer; dvr does not.
    assert_eq!(
        builtin::load("streaming").unwrap().workload_cpus,
        Policy::Apart
    );
    assert_eq!(builtin::load("dvr").unwrap().workload_cpus, Policy::All);
}

#[test]
fn pause_is_read_checked_quickened_and_written_back() {
    use std::time::Duration;
    let s = file::parse(GOOD, &origin()).unwrap();
    assert!(s.pause.is_none());
    assert!(!expand(&s, &Options::default())
        .unwrap()
        .study
        .to_toml()
        .contains("pause"));
    let text = edit(
        "device = \"image:size=1GiB\"\n",
        "device = \"image:size=1GiB\"\npause = \"1m\"\n",
    )
    .replace("[quick]\n", "[quick]\npause = \"1500ms\"\n");
    let s = file::parse(&text, &origin()).unwrap();
    assert_eq!(s.pause.duration(), Duration::from_secs(60));
    let full = expand(&s, &Options::default()).unwrap();
    let toml = full.study.to_toml();
    assert!(toml.contains("pause = \"60s\""), "{toml}");
    assert_eq!(file::parse(&toml, &origin()).unwrap(), full.study);
    let quick = Options {
        quick: true,
        ..Options::default()
    };
    let q = expand(&s, &quick).unwrap();
    assert_eq!(q.study.pause.duration(), Duration::from_millis(1500));
    assert_eq!(file::parse(&q.study.to_toml(), &origin()).unwrap(), q.study);
    // The pause is part of how the study ran: it changes the study's hash, not a trial's digest.
    let plain = expand(&file::parse(GOOD, &origin()).unwrap(), &Options::default()).unwrap();
    let hash = iotrial::study::plan::identity::study_hash;
    assert_ne!(hash(&full.study), hash(&plain.study));
    let digests = |e: &iotrial::study::Expansion| -> Vec<String> {
        e.trials.iter().map(|t| t.digest.clone()).collect()
    };
    assert_eq!(digests(&full), digests(&plain));
    let (line, _, key, msg) = err(&edit(
        "device = \"image:size=1GiB\"\n",
        "device = \"image:size=1GiB\"\npause = \"a while\"\n",
    ));
    assert_eq!((line, key.as_deref()), (4, Some("pause")));
    assert!(msg.contains("a while") && msg.contains("5s"), "{msg}");
    let (_, _, key, msg) = err(&GOOD.replace("[quick]\n", "[quick]\npause = \"2d\"\n"));
    assert_eq!(key.as_deref(), Some("quick.pause"));
    assert!(msg.contains("2d"), "{msg}");
    // The streaming study pauses between its trials at full size, not under --quick.
    let streaming = builtin::load("streaming").unwrap();
    assert!(!streaming.pause.is_none());
    assert!(expand(&streaming, &quick).unwrap().study.pause.is_none());
    assert!(builtin::load("dvr").unwrap().pause.is_none());
}
