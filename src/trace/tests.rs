//! Tests of the trace readers: each format, the errors' lines and messages, and a fuzz of
//! arbitrary text (never a panic).

use super::*;
use proptest::prelude::*;

fn p(text: &str) -> Result<Trace, TraceError> {
    parse(Path::new("t.log"), text)
}

#[test]
fn iolog_v3_as_fio_writes_it() {
    let t = p("fio version 3 iolog\n21 /tmp/f add\n3038 /tmp/f open\n3044 /tmp/f read 61440 4096\n10118 /tmp/f write 0 8192\n10200 /tmp/f sync\n41179 /tmp/f close\n").unwrap();
    assert_eq!(t.format, "iolog3");
    assert_eq!(t.files, vec!["/tmp/f".to_string()]);
    assert_eq!(t.ops.len(), 3);
    assert_eq!(
        t.ops[1],
        TraceOp {
            at_ns: Some(10_118_000),
            kind: TraceKind::Write,
            offset: 0,
            len: 8192,
            file: 0,
            wait_us: 0,
        }
    );
    assert_eq!(t.data_totals(), (2, 12288));
    assert!(t.timed());
    assert_eq!(t.extent(), 65536);
}

#[test]
fn iolog_v2_waits_files_and_what_was_not_added() {
    let t = p("fio version 2 iolog\na add\nb add\na write 0 4096\nb wait 1500 0\nb wait 500 0\nb datasync\nc read 0 512\n").unwrap();
    assert_eq!(t.files, ["a", "b", "c"]);
    let files: Vec<u32> = t.ops.iter().map(|o| o.file).collect();
    assert_eq!(files, [0, 1, 2]);
    assert_eq!(t.ops[1].kind, TraceKind::Datasync);
    assert_eq!((t.ops[0].wait_us, t.ops[1].wait_us), (0, 2000));
    assert_eq!(t.undeclared, Some((8, "c".to_string())));
    assert_eq!((t.extent_of(0), t.extent_of(2)), (4096, 512));
}

#[test]
fn iolog_v2_has_no_times() {
    let t = p("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n/dev/sdb trim 4096 4096\n/dev/sdb close\n").unwrap();
    assert_eq!((t.format, t.ops.len(), t.timed()), ("iolog2", 2, false));
    assert_eq!(t.ops[1].kind, TraceKind::Trim);
}

#[test]
fn blkparse_issues_are_read_and_the_summary_ends_it() {
    let text = "  8,0    1        1     0.000000000   697  Q  WS 3417048 + 8 [dd]\n  8,0    1        2     0.000100000   697  D  WS 3417048 + 8 [dd]\n  8,0    1        3     0.000500000   697  D   R 2048 + 16 [cat]\n  8,0    1        4     0.000600000   697  D  FN [kworker]\n  8,0    1        5     0.000700000   697  C  WS 3417048 + 8 [0]\n\nCPU1 (8,0):\n Reads Queued: 0\n";
    let t = p(text).unwrap();
    assert_eq!(t.format, "blkparse");
    assert_eq!(t.ops.len(), 3);
    assert_eq!(
        t.ops[0],
        TraceOp {
            at_ns: Some(0),
            kind: TraceKind::Write,
            offset: 3417048 * 512,
            len: 4096,
            file: 0,
            wait_us: 0,
        }
    );
    assert_eq!(t.ops[1].at_ns, Some(400_000));
    assert_eq!((t.ops[1].kind, t.ops[1].len), (TraceKind::Read, 8192));
    assert_eq!(t.ops[2].kind, TraceKind::Sync);
}

#[test]
fn write_v3_reads_back() {
    let t = p(
        "fio version 3 iolog\n5 /d add\n10 /d read 0 4096\n2010 /d write 8192 4096\n2020 /d sync\n",
    )
    .unwrap();
    let mut out = Vec::new();
    iolog::write_v3(&mut out, &t, "/dev/x").unwrap();
    let back = p(std::str::from_utf8(&out).unwrap()).unwrap();
    assert_eq!(back.ops.len(), 3);
    assert_eq!(back.ops[1].at_ns, Some(2_000_000));
    assert_eq!(back.data_totals(), t.data_totals());
}

#[test]
fn malformed_lines_name_the_line_and_what_was_expected() {
    let err = |t: &str| p(t).unwrap_err().to_string();
    let e = err("fio version 3 iolog\n1 /f add\nxx /f read 0 4096\n");
    assert!(
        e.contains("t.log, line 3") && e.contains("timestamp"),
        "{e}"
    );
    let e = err("fio version 2 iolog\n/f add\n/f jump 0 4096\n");
    assert!(e.contains("line 3") && e.contains("expected add"), "{e}");
    let e = err("fio version 2 iolog\n/f read 0\n");
    assert!(e.contains("line 2") && e.contains("missing length"), "{e}");
    let e = err("fio version 9 iolog\n");
    assert!(
        e.contains("line 1") && e.contains("fio version 2 iolog"),
        "{e}"
    );
    let e = err("8,0 1 1 0.1 7 D X 1 + 8 [x]\n");
    assert!(e.contains("line 1") && e.contains("RWBS"), "{e}");
    let e = err("hello\n");
    assert!(e.contains("not a trace"), "{e}");
    assert_eq!(p("x").unwrap_err().why(), Cause::Input);
}

proptest! {
    #[test]
    fn any_text_parses_or_errs_without_panicking(
        header in prop_oneof![Just("fio version 2 iolog".to_string()), Just("fio version 3 iolog".to_string()), Just("8,0 0 1 0.0 1 D W 0 + 8 [x]".to_string()), ".*"],
        lines in proptest::collection::vec("[ -~]{0,60}", 0..20),
        fields in proptest::collection::vec(
            (0u64..u64::MAX, prop_oneof![Just("read".to_string()), Just("write".to_string()), Just("add".to_string()), Just("sync".to_string()), Just("D".to_string()), Just("+".to_string()), "[a-z]{1,5}"], any::<u64>(), any::<u64>()),
            0..20),
    ) {
        let mut text = format!("{header}\n");
        for l in &lines {
            text.push_str(l);
            text.push('\n');
        }
        for (t, a, o, n) in &fields {
            text.push_str(&format!("{t} /f {a} {o} {n}\n8,0 0 1 {t} 1 D {a} {o} + {n} [x]\n"));
        }
        if let Ok(t) = p(&text) {
            for op in &t.ops {
                prop_assert!(op.offset.checked_add(op.len).is_some());
            }
        }
    }
}
