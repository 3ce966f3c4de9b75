//! Root integration tests of the emulated-device server: FUSE file semantics (timing, scale,
//! parallel requests, flush, discard, injected errors), the full stack FUSE -> loop (direct
//! I/O) -> ext4, and cleanup of the stale mount a SIGKILLed server leaves. Timing is checked on
//! the model's own timeline (the service time the server gave each request), never against a
//! wall-clock bound a loaded host could miss. Each test skips with the reason when not root or
//! without FUSE (a failure under `CI`), and leaves no mount, loop device or image.

mod common;

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ready_to_emulate, run, wait_until, FixedModel, Mounted, TestLoop};
use iotrial::emu::{abort_connection, fuse_mounts_at, EmuServer, ModelSpec, ReplyTimer};

const MIB: u64 = 1 << 20;

/// Returns from the test unless root, loop devices, FUSE and `tools` are here (prints why, or
/// fails under `CI`).
macro_rules! skip_unless_ready {
    ($name:expr $(, $tool:expr)*) => {
        if !ready_to_emulate($name, &[$($tool),*]) {
            return;
        }
    };
}

fn start(dir: &Path, model: FixedModel, scale: f64) -> EmuServer {
    EmuServer::start(
        Box::new(model),
        &dir.join("image"),
        &dir.join("fuse"),
        scale,
    )
    .expect("server starts")
}

/// A server of the model `spec` (`ModelSpec` syntax) at time scale `scale`.
fn start_spec(dir: &Path, spec: &str, scale: f64) -> EmuServer {
    let model = ModelSpec::parse(spec).unwrap().build().unwrap();
    EmuServer::start(model, &dir.join("image"), &dir.join("fuse"), scale).expect("server starts")
}

#[test]
fn reads_are_delayed_by_the_model_divided_by_scale() {
    skip_unless_ready!("reads_are_delayed_by_the_model_divided_by_scale");
    let dir = tempfile::tempdir().unwrap();
    // 20 ms modeled, scale 10 -> 2 ms real.
    let server = start(
        dir.path(),
        FixedModel::new(64 * MIB, 20_000_000, true),
        10.0,
    );
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(server.device_file())
        .unwrap();
    assert_eq!(f.metadata().unwrap().len(), 64 * MIB);
    f.write_all_at(b"hello", 4096).unwrap();
    let mut buf = [0u8; 5];
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        f.read_exact_at(&mut buf, 4096).unwrap();
        best = best.min(t.elapsed());
    }
    assert_eq!(&buf, b"hello");
    // No reply goes out before its due time, however loaded the host is.
    assert!(best >= Duration::from_micros(2_000), "read took {best:?}");
    drop(f);
    let stats = server.stats();
    assert_eq!(stats["model_stats"]["read"], 5);
    assert_eq!(stats["server"]["bytes_read"], 25);
    // On the model's timeline every read was given exactly its 20 ms, divided by the scale.
    assert_eq!(stats["server"]["service_us_mean"]["read"], 2_000.0);
    let late = stats["server"]["late_us_mean"].as_f64().unwrap();
    assert!(late.is_finite() && late >= 0.0, "{stats}");
    // The request thread's own part, the image read or store, is counted apart.
    for key in ["image_read_us_max", "image_write_us_max"] {
        assert!(
            stats["server"][key].as_f64().unwrap() > 0.0,
            "{key}: {stats}"
        );
    }
    server.stop().unwrap();
    assert!(fuse_mounts_at(&dir.path().join("fuse")).unwrap().is_empty());
}

#[test]
fn hdd_random_reads_get_the_models_access_time_on_its_timeline() {
    skip_unless_ready!("hdd_random_reads_get_the_models_access_time_on_its_timeline");
    let dir = tempfile::tempdir().unwrap();
    // The seeker figure: QD1 random 4 KiB reads over the whole capacity. What the server
    // reports is the service time the model gave each read on its own timeline, which does not
    // depend on how loaded the host is: the rotational phase a read arrives at stays uniform.
    let spec = ModelSpec::parse("hdd,scale=4").unwrap();
    let expected_ms = spec.expectations(MIB).unwrap().random_read_ms;
    let model = spec.build().unwrap();
    let capacity = model.capacity();
    let server = EmuServer::start(
        model,
        &dir.path().join("image"),
        &dir.path().join("fuse"),
        4.0,
    )
    .expect("server starts");
    let f = std::fs::File::open(server.device_file()).unwrap();
    let mut rng = iotrial::engine::rng::SplitMix64::new(7);
    let mut buf = vec![0u8; 4096];
    let reads = 1000;
    for _ in 0..reads {
        let off = rng.next_u64() % (capacity / 4096) * 4096;
        f.read_exact_at(&mut buf, off).unwrap();
    }
    drop(f);
    let stats = server.stats();
    assert_eq!(stats["server"]["requests"]["read"], reads);
    let model_ms = stats["server"]["service_us_mean"]["read"].as_f64().unwrap() * 4.0 / 1e3;
    let diff = model_ms / expected_ms - 1.0;
    eprintln!(
        "random 4 KiB read on the model's timeline: {model_ms:.3} ms, expected {expected_ms:.3} ms ({:+.1}%); replies late by {} µs on average",
        diff * 100.0,
        stats["server"]["late_us_mean"]
    );
    // 1000 reads of a ~4.5 ms-spread access time leave ~1% of sampling noise.
    assert!(diff.abs() < 0.05, "{model_ms} ms against {expected_ms} ms");
    server.stop().unwrap();
}

#[test]
fn many_requests_are_in_flight_at_once() {
    skip_unless_ready!("many_requests_are_in_flight_at_once");
    let dir = tempfile::tempdir().unwrap();
    // Each request takes 10 ms and they do not queue: 8 threads each read 10 times, and the
    // server holds several of their requests at once instead of serving one at a time.
    let server = start(
        dir.path(),
        FixedModel::new(64 * MIB, 10_000_000, false),
        1.0,
    );
    let file = server.device_file();
    std::thread::scope(|s| {
        for i in 0..8u64 {
            let file = &file;
            s.spawn(move || {
                let f = std::fs::File::open(file).unwrap();
                let mut buf = vec![0u8; 4096];
                for j in 0..10u64 {
                    f.read_exact_at(&mut buf, (i * 10 + j) * 4096).unwrap();
                }
            });
        }
    });
    let stats = server.stats();
    let max = stats["server"]["in_flight_max"].as_u64().unwrap();
    assert!(max >= 4, "at most {max} requests in flight");
    assert_eq!(stats["server"]["service_us_mean"]["read"], 10_000.0);
    server.stop().unwrap();
}

#[test]
fn fsync_flushes_and_punch_hole_discards() {
    skip_unless_ready!("fsync_flushes_and_punch_hole_discards");
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), FixedModel::new(64 * MIB, 0, true), 1.0);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(server.device_file())
        .unwrap();
    f.write_all_at(&vec![0xabu8; 4 * MIB as usize], 0).unwrap();
    f.sync_all().unwrap();
    let image = dir.path().join("image");
    let before = std::fs::metadata(&image).unwrap().blocks();
    rustix::fs::fallocate(
        &f,
        rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
        0,
        4 * MIB,
    )
    .unwrap();
    let after = std::fs::metadata(&image).unwrap().blocks();
    assert!(
        after + 4 * MIB / 512 <= before,
        "{before} -> {after} blocks"
    );
    let mut buf = [1u8; 512];
    f.read_exact_at(&mut buf, MIB).unwrap();
    assert!(buf.iter().all(|&b| b == 0));
    drop(f);
    let stats = server.stats();
    assert!(stats["model_stats"]["flush"].as_u64().unwrap() >= 1);
    assert_eq!(stats["model_stats"]["discard"], 1);
    assert_eq!(stats["server"]["bytes_discarded"], 4 * MIB);
    server.stop().unwrap();
}

#[test]
fn model_errors_reach_the_caller() {
    skip_unless_ready!("model_errors_reach_the_caller");
    let dir = tempfile::tempdir().unwrap();
    let mut model = FixedModel::new(64 * MIB, 0, true);
    model.fail = (MIB, 2 * MIB);
    let server = start(dir.path(), model, 1.0);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(server.device_file())
        .unwrap();
    let mut buf = [0u8; 4096];
    f.read_exact_at(&mut buf, 0).unwrap();
    let err = f.read_exact_at(&mut buf, MIB + 4096).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(5), "{err}");
    let err = f.write_all_at(&buf, MIB).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(5), "{err}");
    drop(f);
    assert_eq!(server.stats()["server"]["errors"], 2);
    server.stop().unwrap();
}

#[test]
fn ext4_on_a_direct_io_loop_device_over_the_server() {
    skip_unless_ready!(
        "ext4_on_a_direct_io_loop_device_over_the_server",
        "losetup",
        "mkfs.ext4",
        "findmnt"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), FixedModel::new(256 * MIB, 50_000, true), 1.0);
    let lo = TestLoop::attach(&server.device_file(), true).expect("losetup");
    assert!(lo.direct_io(), "{} does not do direct I/O", lo.path());
    run("mkfs.ext4", &["-q", "-F", &lo.path()]).expect("mkfs.ext4");

    let fsdir = dir.path().join("fs");
    let data: Vec<u8> = (0..3 * MIB as usize).map(|i| (i * 7 % 251) as u8).collect();
    let m = Mounted::mount(&lo.path(), &fsdir, "ext4").unwrap();
    let mut out = std::fs::File::create(fsdir.join("file")).unwrap();
    out.write_all(&data).unwrap();
    out.sync_all().unwrap();
    drop(out);
    m.unmount().unwrap();
    // Read back after a fresh mount, so the data comes through the device.
    let m = Mounted::mount(&lo.path(), &fsdir, "ext4").unwrap();
    assert!(std::fs::read(fsdir.join("file")).unwrap() == data);
    m.unmount().unwrap();
    let dev = lo.path();
    drop(lo);

    let stats = server.stats();
    eprintln!("{stats}");
    assert!(stats["model_stats"]["write"].as_u64().unwrap() > 0);
    assert!(stats["model_stats"]["read"].as_u64().unwrap() > 0);
    assert!(stats["model_stats"]["flush"].as_u64().unwrap() > 0);
    server.stop().unwrap();

    let root = dir.path().to_str().unwrap();
    let loops = run("losetup", &["-a"]).unwrap();
    assert!(!loops.contains(root), "loop device left: {loops}");
    let mounts = run("findmnt", &["-rn", "-o", "TARGET"]).unwrap();
    assert!(!mounts.contains(root), "mount left: {mounts}");
    assert!(!loops
        .lines()
        .any(|l| l.starts_with(&format!("{dev}:")) && l.contains(root)));
}

const HELPER_ENV: &str = "IOTRIAL_EMU_HELPER_DIR";

/// Two devices on one reply timer: each gets its own model's service time, the timer counts
/// both, and one stopping fires its own queued replies only: the other's read, due later,
/// still waits its full modeled time.
#[test]
fn devices_sharing_a_timer_keep_their_own_times_and_stop_apart() {
    skip_unless_ready!("devices_sharing_a_timer_keep_their_own_times_and_stop_apart");
    let dir = tempfile::tempdir().unwrap();
    let timer = ReplyTimer::start().expect("timer starts");
    let serve = |name: &str, delay_ns| {
        EmuServer::start_on(
            &timer,
            Box::new(FixedModel::new(64 * MIB, delay_ns, false)),
            &dir.path().join(format!("{name}.img")),
            &dir.path().join(name),
            1.0,
        )
        .expect("server starts")
    };
    // 2 ms and 600 ms: b's read is still queued on the timer when a stops.
    let a = serve("a", 2_000_000);
    let b = serve("b", 600_000_000);
    assert_eq!(timer.devices(), 2);
    let open = |s: &EmuServer| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(s.device_file())
            .unwrap()
    };
    let (fa, fb) = (open(&a), open(&b));
    let mut buf = [0u8; 4096];
    for i in 0..4 {
        fa.read_exact_at(&mut buf, i * MIB).unwrap();
    }
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let t = Instant::now();
        fb.read_exact_at(&mut buf, 8 * MIB).unwrap();
        t.elapsed()
    });
    let b_server = |k: &str| b.stats()["server"][k].as_u64().unwrap_or(0);
    wait_until("b's read reaches its server", 60, || {
        b_server("in_flight") > 0
    });
    drop(fa);
    let stats = a.stats();
    assert_eq!(stats["server"]["timer_devices"], 2, "{stats}");
    assert_eq!(stats["server"]["service_us_mean"]["read"], 2_000.0);
    a.stop().unwrap();
    assert_eq!(timer.devices(), 1);
    let took = reader.join().unwrap();
    assert!(
        took >= Duration::from_millis(600),
        "b's reply went out with a's: {took:?}"
    );
    let stats = b.stats();
    assert_eq!(stats["server"]["timer_devices"], 1, "{stats}");
    assert_eq!(stats["server"]["service_us_mean"]["read"], 600_000.0);
    assert_eq!(
        stats["server"]["replies_timer"],
        stats["server"]["requests"]["read"]
    );
    b.stop().unwrap();
    assert_eq!(timer.devices(), 0);
    for name in ["a", "b"] {
        assert!(fuse_mounts_at(&dir.path().join(name)).unwrap().is_empty());
    }
}

/// The server process this test kills: the test binary run again for this test alone, told by
/// `HELPER_ENV` to serve (until its stdin, a pipe the test holds, closes) instead of testing.
fn serve_until_killed(dir: &Path) {
    let server = start(dir, FixedModel::new(64 * MIB, 0, true), 1.0);
    std::fs::write(dir.join("ready"), b"").unwrap();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
    drop(server);
}

#[test]
fn a_killed_server_leaves_a_mount_that_abort_connection_removes() {
    if let Some(dir) = std::env::var_os(HELPER_ENV) {
        return serve_until_killed(Path::new(&dir));
    }
    skip_unless_ready!("a_killed_server_leaves_a_mount_that_abort_connection_removes");
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("fuse");
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_killed_server_leaves_a_mount_that_abort_connection_removes",
        ])
        .env(HELPER_ENV, dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill the child (and reap it) whatever happens below.
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Reap(child);
    wait_until("the helper server is ready", 60, || {
        dir.path().join("ready").exists()
    });
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    // Guard: whatever the assertions say, do not leave the mount behind.
    struct Abort<'a>(&'a Path);
    impl Drop for Abort<'_> {
        fn drop(&mut self) {
            let _ = abort_connection(self.0);
        }
    }
    let _abort = Abort(&mnt);

    let stale = fuse_mounts_at(&mnt).unwrap();
    assert_eq!(stale.len(), 1, "expected the killed server's mount");
    let err = std::fs::metadata(mnt.join("disk")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(107), "{err}"); // ENOTCONN
    assert_eq!(abort_connection(&mnt).unwrap(), 1);
    assert!(fuse_mounts_at(&mnt).unwrap().is_empty());
    let conn = format!("/sys/fs/fuse/connections/{}", stale[0].minor);
    wait_until(&format!("{conn} is gone"), 60, || {
        !Path::new(&conn).exists()
    });
}

#[test]
fn stopping_under_an_attached_loop_device_aborts_instead_of_hanging() {
    skip_unless_ready!(
        "stopping_under_an_attached_loop_device_aborts_instead_of_hanging",
        "losetup"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path(), FixedModel::new(64 * MIB, 0, true), 1.0);
    let lo = TestLoop::attach(&server.device_file(), true).expect("losetup");
    let err = server.stop().unwrap_err();
    assert!(
        matches!(err, iotrial::emu::EmuError::BusyAborted { .. }),
        "{err}"
    );
    assert!(fuse_mounts_at(&dir.path().join("fuse")).unwrap().is_empty());
    // The loop device sees a dead backing file and still detaches.
    let mut buf = vec![0u8; 4096];
    let dev = std::fs::File::open(&lo.dev).unwrap();
    assert!(dev.read_exact_at(&mut buf, 0).is_err());
    drop(dev);
    drop(lo);
    let loops = run("losetup", &["-a"]).unwrap();
    assert!(!loops.contains(dir.path().to_str().unwrap()), "{loops}");
}

#[test]
fn a_drive_that_reorders_its_queue_answers_every_request_with_its_data() {
    skip_unless_ready!("a_drive_that_reorders_its_queue_answers_every_request_with_its_data");
    let dir = tempfile::tempdir().unwrap();
    // The drive decides a request's completion only when its head starts it, so replies come
    // from the timer's ticks as well as from arrivals. Eight threads write their own pattern at
    // random offsets of their own slice and read each block back: every request is answered,
    // with the data it wrote, and the drive served its queue out of arrival order.
    let spec = "hdd,size=4GiB,queue_order=rpo,age_limit=200ms,scale=4";
    let server = start_spec(dir.path(), spec, 4.0);
    let file = server.device_file();
    let slice = 512 * MIB;
    std::thread::scope(|s| {
        for i in 0..8u64 {
            let file = &file;
            s.spawn(move || {
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(file)
                    .unwrap();
                let mut rng = iotrial::engine::rng::SplitMix64::new(i + 1);
                let mut back = vec![0u8; 65536];
                for j in 0..24u64 {
                    let off = i * slice + rng.below(slice / 65536) * 65536;
                    let block = vec![(i * 31 + j) as u8; 65536];
                    f.write_all_at(&block, off).unwrap();
                    f.read_exact_at(&mut back, off).unwrap();
                    assert_eq!(back, block, "thread {i} block {j} at {off}");
                }
            });
        }
    });
    let stats = server.stats();
    assert_eq!(stats["server"]["errors"], 0, "{stats}");
    assert_eq!(
        stats["server"]["in_flight"], 0,
        "every request answered: {stats}"
    );
    assert_eq!(stats["server"]["requests"]["write"], 8 * 24, "{stats}");
    assert_eq!(stats["model_stats"]["queue_order"], "rpo");
    let waited = stats["model_stats"]["longest_queue_wait_ms"]
        .as_f64()
        .unwrap();
    assert!(waited > 0.0, "reads waited in the drive's queue: {stats}");
    server.stop().unwrap();
    assert!(fuse_mounts_at(&dir.path().join("fuse")).unwrap().is_empty());
}

/// A loop device's `max_sectors_kb`, set for a test and put back (before the device is
/// detached: the kernel keeps a user's limit when it reuses the device).
struct MaxSectors {
    path: String,
    was: String,
}

impl MaxSectors {
    fn set(lo: &TestLoop, kib: u32) -> MaxSectors {
        let path = format!("/sys/block/{}/queue/max_sectors_kb", lo.name());
        let was = std::fs::read_to_string(&path).unwrap().trim().to_string();
        std::fs::write(&path, kib.to_string()).unwrap();
        MaxSectors { path, was }
    }
}

impl Drop for MaxSectors {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.path, &self.was) {
            eprintln!("cleanup: {}: {e}", self.path);
        }
    }
}

/// Regression: a flash card that takes an open unit's writes in ascending order only saw the
/// pieces of one split write second first (several request threads race to the model) and
/// merged units a real card fills in order. The kernel splits every 1 MiB direct write into
/// 16 requests here; the card sees them in the order it queued them, so filling units from the
/// start costs no copy, except where a request waited 5 ms for one held up on a busy host and
/// went ahead of it (each such merges its unit once, and that unit is then closed short).
#[test]
fn the_pieces_of_a_split_write_reach_the_model_in_the_order_the_kernel_queued_them() {
    skip_unless_ready!(
        "the_pieces_of_a_split_write_reach_the_model_in_the_order_the_kernel_queued_them",
        "losetup"
    );
    let dir = tempfile::tempdir().unwrap();
    let spec = "flash,size=1GiB,au=4MiB,open_units=4,in_order=true,reorder=4KiB,scale=20";
    let server = start_spec(dir.path(), spec, 20.0);
    let lo = TestLoop::attach(&server.device_file(), true).expect("losetup");
    let limit = MaxSectors::set(&lo, 64);
    let writes = 64u64;
    {
        let f = OpenOptions::new()
            .write(true)
            .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
            .open(&lo.dev)
            .unwrap();
        let mut raw = vec![0u8; (MIB + 4096) as usize];
        let at = raw.as_ptr().align_offset(4096);
        let buf = &mut raw[at..at + MIB as usize];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i % 251) as u8 | 1;
        }
        for i in 0..writes {
            f.write_all_at(buf, i * MIB).unwrap();
        }
    }
    drop(limit);
    drop(lo);
    let stats = server.stats();
    eprintln!("{stats}");
    let n = stats["server"]["requests"]["write"].as_u64().unwrap();
    assert!(
        n >= writes * 16,
        "the kernel split the writes: {n} requests"
    );
    let copies = stats["model_stats"]["unit_copies"].as_u64().unwrap();
    let gave_up = stats["server"]["order_gave_up"].as_u64().unwrap();
    assert!(
        copies <= 2 * gave_up,
        "{copies} units merged with {gave_up} requests gone ahead: {stats}"
    );
    server.stop().unwrap();
    let root = dir.path().to_str().unwrap();
    let loops = run("losetup", &["-a"]).unwrap();
    assert!(!loops.contains(root), "loop device left: {loops}");
}
