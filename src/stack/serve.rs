//! `iotrial device serve SPEC`: one emulated device for any program. Serves the model through
//! FUSE in this process, puts a loop device (direct I/O on) on top, tells the caller the
//! device's path, serves until stopped (SIGINT / SIGTERM) or until the process that started it
//! is gone, then releases everything and returns the model's statistics. Every resource is in the ledger first, so even a SIGKILL of this
//! process leaves nothing behind once its guard (the ledger's device server process) sees it go.

use crate::cause::{Cause, HasCause};
use crate::emu::{EmuServer, Expectations, ModelSpec};
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::{sys, DeviceSpec};
use serde::Serialize;
use serde_json::Value as Json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Sequential I/O size the expectations are given for.
const EXPECT_SEQ_IO: u64 = 1 << 20;

/// A device being served.
#[derive(Debug, Clone, Serialize)]
pub struct Served {
    /// The loop device programs use.
    pub device: PathBuf,
    /// The spec as given.
    pub spec: String,
    pub model: String,
    pub capacity_bytes: u64,
    pub time_scale: f64,
    /// What `iotrial device probe` would measure on it (the model's analytic figures, in the
    /// model's time).
    pub expectations: Option<Expectations>,
    /// The sparse image holding the device's data, in `TMPDIR`.
    pub image: PathBuf,
    /// Whether that is in memory (a tmpfs). On the host's disk a reply waits whenever the
    /// host writes the server's pages back or throttles its writes.
    pub image_in_memory: bool,
}

/// Whether `dir` is on a tmpfs.
pub fn on_tmpfs(dir: &std::path::Path) -> bool {
    const TMPFS_MAGIC: u64 = 0x0102_1994;
    rustix::fs::statfs(dir).is_ok_and(|s| s.f_type as u64 == TMPFS_MAGIC)
}

/// The device could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The spec is wrong (exit status 2).
    #[error("{0}")]
    Spec(String),
    /// This host cannot serve it (no root, no FUSE, no loop devices).
    #[error("{0}")]
    Host(String),
    #[error("{0}")]
    Failed(String),
}

impl HasCause for ServeError {
    fn why(&self) -> Cause {
        match self {
            ServeError::Spec(_) => Cause::Input,
            ServeError::Host(_) => Cause::Host,
            ServeError::Failed(_) => Cause::Run,
        }
    }
}

fn model_of(spec: &str) -> Result<ModelSpec, ServeError> {
    match DeviceSpec::parse(spec).map_err(|e| ServeError::Spec(e.to_string()))? {
        DeviceSpec::Emu { model, .. } => Ok(model),
        other => Err(ServeError::Spec(format!(
            "{other}: device serve takes an emulated device (emu:hdd, emu:smr, emu:flash, emu:null)"
        ))),
    }
}

fn check_host() -> Result<(), ServeError> {
    if !rustix::process::geteuid().is_root() {
        return Err(ServeError::Host(
            "device serve needs root (a FUSE mount and a loop device)".into(),
        ));
    }
    for (path, what) in [("/dev/fuse", "FUSE"), ("/dev/loop-control", "loop devices")] {
        if !std::path::Path::new(path).exists() {
            return Err(ServeError::Host(format!(
                "this kernel has no {what} ({path} is missing)"
            )));
        }
    }
    Ok(())
}

/// Serves `spec` until `stop` is set or the parent process is gone (this process is handed to
/// another parent: the program that started it died, whatever killed it), and then sets
/// `stop` itself; calls `ready` once the device exists. Returns the model's statistics and the
/// server's counters at the end (`server.stopped_by` says which ended it), and a warning when
/// the device was still in use at the end (its users then saw I/O errors).
pub fn serve(
    spec: &str,
    ledger: &mut Ledger,
    stop: &AtomicBool,
    ready: impl FnOnce(&Served),
) -> Result<(Json, Option<String>), ServeError> {
    let parent = rustix::process::getppid();
    let model_spec = model_of(spec)?;
    check_host()?;
    let rec = |e: std::io::Error| ServeError::Failed(format!("write the ledger: {e}"));
    let work = std::env::temp_dir().join(format!("iotrial-serve-{}", std::process::id()));
    ledger
        .record(Resource::TempDir { path: work.clone() })
        .map_err(rec)?;
    std::fs::create_dir_all(&work)
        .map_err(|e| ServeError::Failed(format!("create {}: {e}", work.display())))?;
    let mountpoint = work.join("emu");
    let entry = ledger
        .record(Resource::Fuse {
            mountpoint: mountpoint.clone(),
        })
        .map_err(rec)?;
    let model = model_spec
        .build()
        .map_err(|e| ServeError::Spec(format!("{spec}: {e}")))?;
    let capacity = model.capacity();
    let name = model.name().to_string();
    let server = EmuServer::start(
        model,
        &work.join("image"),
        &mountpoint,
        model_spec.settings.scale,
    )
    .map_err(|e| ServeError::Failed(format!("{spec}: {e}")))?;
    server.set_stale(model_spec.settings.stale);
    let file = server.device_file();
    ledger.hold_server(entry, Box::new(server));
    ledger
        .record(Resource::Loop {
            backing: file.clone(),
        })
        .map_err(rec)?;
    let device = sys::attach_loop(&file, false).map_err(ServeError::Failed)?;
    cap_request_size(&device, ledger)?;
    ready(&Served {
        device,
        spec: spec.to_string(),
        model: name,
        capacity_bytes: capacity,
        time_scale: model_spec.settings.scale,
        expectations: model_spec.expectations(EXPECT_SEQ_IO).ok(),
        image: work.join("image"),
        image_in_memory: on_tmpfs(&work),
    });
    let mut stopped_by = "signal";
    while !stop.load(Ordering::Relaxed) {
        if rustix::process::getppid() != parent {
            stopped_by = "parent gone";
            stop.store(true, Ordering::Relaxed);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut stats = ledger.server_stats().pop().unwrap_or_default();
    if let Some(server) = stats.get_mut("server").and_then(|s| s.as_object_mut()) {
        server.insert("stopped_by".into(), stopped_by.into());
    }
    let errors = ledger.release_all();
    let warning = (!errors.is_empty()).then(|| {
        format!(
            "the device was still in use when serving stopped; its users saw I/O errors ({})",
            errors.join("; ")
        )
    });
    Ok((stats, warning))
}

/// Caps the block requests of the loop device at the largest request the server takes at
/// once ([`sys::request_cap`]), as a stack does for its emulated devices: with the kernel's
/// 1280 KiB, a 1280 KiB request reached the model as 1 MiB and 256 KiB, where a stack's twin
/// of it was sent two block requests. The previous value is in the ledger.
fn cap_request_size(device: &std::path::Path, ledger: &mut Ledger) -> Result<(), ServeError> {
    let disk = device.file_name().unwrap_or_default().to_string_lossy();
    let Some(sys::RequestCap {
        attr,
        now: Some(previous),
        cap,
    }) = sys::request_cap(&disk)
    else {
        return Ok(());
    };
    ledger
        .record(Resource::Sysfs {
            path: attr.clone(),
            previous,
        })
        .map_err(|e| ServeError::Failed(format!("write the ledger: {e}")))?;
    std::fs::write(&attr, &cap)
        .map_err(|e| ServeError::Failed(format!("write {cap} to {}: {e}", attr.display())))
}
