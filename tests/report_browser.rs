//! Opens generated report.html files in headless Chromium and checks what a reader gets.
//!
//! Method: the page itself records every error (uncaught exceptions, failed loads, requests
//! blocked by its Content-Security-Policy, console errors and warnings) and, after drawing,
//! how many charts it drew from how many points, how many resources it fetched and how long
//! rendering took, as attributes of the body element. `chromium --dump-dom` prints the DOM
//! after the load event, so the test reads those attributes back. Independently, Chromium's
//! own log (`--enable-logging=stderr --v=0`) prints every console message as an
//! `INFO:CONSOLE` line; the report logs nothing, so any such line fails the test. A screenshot
//! of each page is saved under the target directory (`target/tmp/report_browser/`).
//!
//! When chromium is not on PATH (scripts/install-deps.sh installs it) the tests print why they
//! skipped and pass, or fail naming chromium when `CI` is set.

use assert_cmd::Command;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;

/// Chromium, from PATH.
fn chromium_path() -> PathBuf {
    common::which("chromium").expect("chromium on PATH")
}
const XSS: &str = "<script>alert(1)</script>";

fn chromium_missing(test: &str) -> bool {
    !common::ready(test, &[common::Need::Tool("chromium")])
}

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("report_browser")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn chromium(extra: &[String], page: &Path) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ]
    .map(String::from)
    .to_vec();
    args.push(format!("--user-data-dir={}", profile.path().display()));
    args.extend(extra.iter().cloned());
    args.push(format!("file://{}", page.display()));
    std::process::Command::new(chromium_path())
        .args(&args)
        .output()
        .expect("chromium runs")
}

/// What the page reported about itself, and Chromium's console lines.
struct Page {
    attrs: BTreeMap<String, String>,
    dom: String,
    console: Vec<String>,
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Attributes of the body element that carries `data-report-ready`.
fn body_attrs(dom: &str) -> BTreeMap<String, String> {
    let start = dom
        .match_indices("<body ")
        .map(|(i, _)| i)
        .find(|&i| {
            dom[i..]
                .split('>')
                .next()
                .unwrap()
                .contains("data-report-ready")
        })
        .expect("the page finished drawing (body has data-report-ready)");
    let tag = &dom[start + 6..start + dom[start..].find('>').unwrap()];
    let mut m = BTreeMap::new();
    for part in tag.split("\" ") {
        if let Some((k, v)) = part.split_once("=\"") {
            m.insert(k.trim().to_string(), unescape(v.trim_end_matches('"')));
        }
    }
    m
}

fn open(page: &Path, png: &Path) -> Page {
    let out = chromium(&["--dump-dom".into()], page);
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("net::ERR_"))
        .map(String::from)
        .collect();
    let shot = chromium(
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1400,3000".into(),
            "--hide-scrollbars".into(),
        ],
        page,
    );
    assert!(
        png.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    Page {
        attrs: body_attrs(&dom),
        dom,
        console,
    }
}

/// Fails on any error, request or empty chart the page or Chromium reported.
fn assert_clean(p: &Page, charts_at_least: usize) {
    assert!(p.console.is_empty(), "console messages: {:#?}", p.console);
    assert_eq!(p.attrs["data-report-errors"], "[]", "errors in the page");
    assert_eq!(p.attrs["data-resources"], "0", "the page fetched resources");
    let total: usize = p.attrs["data-charts-total"].parse().unwrap();
    assert!(total >= charts_at_least, "{total} charts");
    assert_eq!(
        p.attrs["data-charts-drawn"],
        total.to_string(),
        "charts not drawn"
    );
    assert_eq!(p.attrs["data-charts-empty"], "0", "charts without data");
    // Every chart element says it drew from a positive number of points.
    let charts = p.dom.matches("class=\"chart\"").count();
    let with_points = p
        .dom
        .match_indices("data-points=\"")
        .filter(|(i, _)| !p.dom[i + 13..].starts_with('0'))
        .count();
    assert_eq!((charts, with_points), (total, total));
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Copies `src` trial into `root/trials/<dir>/dvr/r<rep>` with its headline figure scaled and
/// `stack` as the stack as built.
fn copy_trial(src: &Path, root: &Path, dir: &str, rep: u32, scale: f64, stack: &Value) -> String {
    let rel = format!("trials/{dir}/dvr/r{rep}");
    let d = root.join(&rel);
    std::fs::create_dir_all(&d).unwrap();
    for f in ["samples.csv", "timeseries.csv"] {
        std::fs::copy(src.join(f), d.join(f)).unwrap();
    }
    let mut doc = read_json(&src.join("result.json"));
    for k in ["record_mbit_guaranteed", "playback_preroll_s"] {
        if let Some(v) = doc["verdict"][k].as_f64() {
            doc["verdict"][k] = json!(v * scale);
        }
    }
    doc["stack"] = stack.clone();
    write_json(&d.join("result.json"), &doc);
    rel
}

#[test]
fn report_of_a_small_study_renders_cleanly_and_escapes_labels() {
    if chromium_missing("report_of_a_small_study_renders_cleanly_and_escapes_labels") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    iotrial()
        .args(["run", "dvr", "--out"])
        .arg(work.path())
        .args([
            "--set",
            "samples=120",
            "--set",
            "region_size=4MiB",
            "--set",
            "io_size=64KiB",
        ])
        .args(["--set", "window=5ms"])
        .assert()
        .success();
    let run = std::fs::read_dir(work.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let src = run.join("trials/dir/dvr/r1");
    let root = work.path().join("study");
    std::fs::create_dir_all(&root).unwrap();
    let stacks: [(&str, &str, &[f64]); 3] = [
        ("ext4-noatime", "ext4 noatime", &[1.0, 0.97, 1.02]),
        ("xfs", "xfs", &[1.2, 1.25, 1.18]),
        ("xss", XSS, &[0.8, 0.82]),
    ];
    let mut trials = Vec::new();
    for (dir, name, scales) in stacks {
        let stack = json!({
            "devices": [{"model": format!("HDD <i>{name}</i>"), "size_bytes": 8u64 << 30}],
            "mkfs": ["mkfs.ext4", "-T", "largefile4"],
            "mount": {"options": format!("rw,noatime,{name}")},
            "scheduler": "mq-deadline",
        });
        for (i, s) in scales.iter().enumerate() {
            let rel = copy_trial(&src, &root, dir, i as u32 + 1, *s, &stack);
            trials.push(json!({"stack": name, "workload": "dvr", "repeat": i + 1, "status": "done", "path": rel}));
        }
    }
    write_json(
        &root.join("manifest.json"),
        &json!({"study": format!("dvr {XSS}"), "trials": trials,
                "host": {"hostname": "<img src=x onerror=alert(2)>", "kernel": "6.1", "iotrial_version": "0.1.0"}}),
    );
    iotrial().arg("report").arg(&root).assert().success();
    let html = std::fs::read_to_string(root.join("report.html")).unwrap();
    assert!(
        !html.contains(XSS) && !html.contains("<img src=x"),
        "a label was not escaped"
    );
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;")
            || html.contains("&lt;script&gt;alert(1)&lt;/script&gt;")
    );
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(!md.contains(XSS) && md.contains("Welch"));

    let dir = out_dir("small");
    std::fs::copy(root.join("report.html"), dir.join("report.html")).unwrap();
    let page = open(&dir.join("report.html"), &dir.join("report.png"));
    assert_clean(&page, 2 * 3 + 3);
    // The hostile stack name is text in the page, and no script of its own ran or exists.
    assert!(page.dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_eq!(
        page.dom.matches("<script").count(),
        4,
        "only the report's own scripts"
    );
    println!("screenshot: {}", dir.join("report.png").display());
}

/// A seed-000-like sample set: `n` back-to-back I/Os per stream, 1 MiB each.
fn synthetic_samples(path: &Path, stack: usize, n: usize) {
    let mut rng: u64 = 0x9E37_79B9_7F4A_7C15 ^ stack as u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % 1_000_000) as f64 / 1_000_000.0
    };
    let mut s = String::from("stream,role,op,offset,bytes,issue_ns,latency_ns,error\n");
    let names: Vec<(String, &str, &str)> =
        std::iter::once(("playback0".into(), "playback", "read"))
            .chain((0..8).map(|i| (format!("record{i}"), "record", "write")))
            .chain(std::iter::once(("playback1".into(), "playback", "read")))
            .collect();
    for (name, role, op) in &names {
        let base = if *role == "record" {
            200.0 + 20.0 * stack as f64
        } else {
            400.0
        };
        let mut t: u64 = 0;
        for i in 0..n {
            let spike = if next() < 0.01 { 2.5 } else { 1.0 };
            let lat_ms = base * (0.6 + 0.8 * next()) * spike;
            let lat = (lat_ms * 1e6) as u64;
            s.push_str(&format!(
                "{name},{role},{op},{},1048576,{t},{lat},\n",
                i * 1_048_576
            ));
            t += lat;
        }
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn report_of_six_stacks_of_2048_samples_is_small_and_draws_every_chart() {
    if chromium_missing("report_of_six_stacks_of_2048_samples_is_small_and_draws_every_chart") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let root = work.path();
    let names = [
        "raw partitions",
        "ext4 defaults",
        "ext4 noatime",
        "ext4 writeback",
        "ext4 commit=1",
        "xfs",
    ];
    let mut trials = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let rel = format!("trials/s{i}/dvr/r1");
        let d = root.join(&rel);
        std::fs::create_dir_all(&d).unwrap();
        synthetic_samples(&d.join("samples.csv"), i, 2048);
        let out = iotrial()
            .args(["analyze", "dvr", "--json"])
            .arg(d.join("samples.csv"))
            .assert()
            .success();
        // The analysis part of result.json, and the rest of it (docs/result-format.md).
        let mut doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        doc["iotrial_version"] = json!("0.1.0");
        doc["workload"] = json!("dvr");
        doc["target"] = json!({"spec": "emu:synthetic", "layout": "files", "direct_io": true, "backend": "psync"});
        doc["stack"] = json!({"devices": [{"model": "synthetic"}], "layout": name});
        doc["time_scale"] = json!(1.0);
        doc["started_utc"] = json!("2026-11-22T02:15:42Z");
        doc["duration_s"] = json!(60.0);
        doc["phases"] = json!([]);
        write_json(&d.join("result.json"), &doc);
        trials.push(
            json!({"stack": name, "workload": "dvr", "repeat": 1, "status": "done", "path": rel}),
        );
    }
    write_json(
        &root.join("manifest.json"),
        &json!({"study": "dvr six stacks", "trials": trials}),
    );
    iotrial().arg("report").arg(root).assert().success();
    let size = std::fs::metadata(root.join("report.html")).unwrap().len();
    let dir = out_dir("large");
    std::fs::copy(root.join("report.html"), dir.join("report.html")).unwrap();
    let page = open(&dir.join("report.html"), &dir.join("report.png"));
    assert_clean(&page, 6 * 2 + 3);
    let render_ms: u64 = page.attrs["data-render-ms"].parse().unwrap();
    println!("6 stacks x 10 streams x 2048 samples: report.html {size} bytes, rendered in {render_ms} ms");
    assert!(size < 5_000_000, "report.html is {size} bytes");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("each bucket keeps its minimum and maximum"));
}

#[test]
fn a_trials_device_chart_and_thread_table_are_drawn() {
    let test = "a_trials_device_chart_and_thread_table_are_drawn";
    if !common::ready_for_stacks(test, &["mkfs.ext4", "chromium"]) {
        return;
    }
    let (work, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    common::iotrial(work.path())
        .args(["run", "dvr", "--target", "image:size=2GiB", "--fs", "ext4"])
        .args(["--monitor-interval", "50ms", "--out"])
        .arg(out.path())
        .args([
            "--set",
            "recorders=2",
            "--set",
            "players=1",
            "--set",
            "samples=1000",
        ])
        .args([
            "--set",
            "region_size=32MiB",
            "--set",
            "io_size=64KiB",
            "--set",
            "window=50ms",
        ])
        .assert()
        .success();
    let root = std::fs::read_dir(out.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    iotrial().arg("report").arg(&root).assert().success();
    let dir = out_dir("monitors");
    std::fs::copy(root.join("report.html"), dir.join("report.html")).unwrap();
    let page = open(&dir.join("report.html"), &dir.join("report.png"));
    assert_clean(&page, 6);
    // The device chart: drawn from points, the phase shaded, the await on a second axis.
    let caption = page
        .dom
        .find("<strong>image-ext4: devices.</strong>")
        .expect("the device chart's caption");
    let figure = &page.dom[page.dom[..caption].rfind("<figure").unwrap()..caption];
    assert!(figure.contains("data-bands=\"2\""), "{figure}");
    let points: usize = figure
        .split("data-points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(points > 0, "{figure}");
    assert_eq!(
        figure.matches("class=\"u-axis\"").count(),
        3,
        "x, y and the right axis"
    );
    assert!(figure.contains("await ms</div>"), "{figure}");
    // The thread table: kernel thread groups and iotrial's own, with their CPU.
    let table = page
        .dom
        .find("busiest thread groups")
        .expect("the thread table");
    let rows = &page.dom[table..table + page.dom[table..].find("</table>").unwrap()];
    assert!(
        rows.contains("<td>kernel</td>") && rows.contains("<td>iotrial engine</td>"),
        "{rows}"
    );
    // report.md has the same tables.
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(
        md.contains("busiest thread groups") && md.contains("devices, iostat -x over the trial")
    );
    // dvr's comparison adds the device's mean await and the kernel threads' CPU.
    for column in ["device await (ms)", "kernel threads CPU (% of a core)"] {
        assert!(md.contains(column) && page.dom.contains(column), "{column}");
    }
    common::assert_cleaned_up(work.path(), &[]);
    println!("screenshot: {}", dir.join("report.png").display());
}

#[test]
fn report_of_a_stream_trial_shades_its_phases() {
    if chromium_missing("report_of_a_stream_trial_shades_its_phases") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    iotrial()
        .args(["run", "stream", "--out"])
        .arg(work.path())
        .arg("--target")
        .arg(format!("dir:{}", target.path().display()))
        .args([
            "--set",
            "writers=2",
            "--set",
            "duration=1s",
            "--set",
            "file_size=32MiB",
        ])
        .args([
            "--set",
            "io_size=256KiB",
            "--set",
            "interval=100ms",
            "--set",
            "settle_window=300ms",
        ])
        .assert()
        .success();
    let root = std::fs::read_dir(work.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    iotrial().arg("report").arg(&root).assert().success();
    let html = std::fs::read_to_string(root.join("report.html")).unwrap();
    assert!(
        html.contains("Throughput per interval"),
        "the stream section"
    );
    let dir = out_dir("stream");
    std::fs::copy(root.join("report.html"), dir.join("report.html")).unwrap();
    let page = open(&dir.join("report.html"), &dir.join("report.png"));
    assert_clean(&page, 2);
    // The throughput chart shades the streaming and the final sync.
    let caption = page
        .dom
        .find("Throughput per interval")
        .expect("the throughput chart");
    let figure = &page.dom[page.dom[..caption].rfind("<figure").unwrap()..];
    let figure = &figure[..figure.find("</figure>").unwrap()];
    assert!(figure.contains("data-bands=\"3\""), "{figure}");
    println!("screenshot: {}", dir.join("report.png").display());
}
