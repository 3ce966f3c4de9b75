//! `iotrial device characterize`: times a device through the engine and fits the model that
//! explains it (`hdd`, `smr` or `flash`), DIXtrac-style for disks ([`disk`]), Skylight-style
//! for drive-managed SMR ([`smr`]), uFLIP-style for flash ([`flash`]). The result is a twin
//! ([`twin::Twin`]): every parameter identified with the method and the figures behind it,
//! every one not identified with the probe that would be needed, never a default passed off
//! as a measurement. `--read-only` runs only the probes that read, on a device opened
//! read-only, and lists what the write probes would have identified.

pub mod calm;
pub mod disk;
pub mod flash;
pub mod host;
pub mod hostpath;
pub mod matched;
pub mod matched_card;
pub mod smr;
pub mod stats;
pub mod twin;

use super::script::{Runner, ScriptError};
use super::{built_raw, released_after, ProbeError};
use crate::cause::{Cause, HasCause};
use crate::stack::build::guard;
use crate::stack::ledger::Ledger;
use crate::stack::provision::BuildOptions;
use crate::stack::{DeviceSpec, StackError};
use crate::units::Size;
use host::{HostLoad, HostWatch};
use hostpath::{HostPath, HostPaths};
use serde::Serialize;
use stats::{median, Draw};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use twin::Twin;

/// The smallest device characterize takes: room for its scattered reads and sequential runs.
pub const MIN_CAPACITY: u64 = 1 << 30;
/// Below this QD1 random 4 KiB read, the device is flash (a disk's is a seek and a rotation).
pub const FLASH_BELOW: f64 = 1.5e-3;

/// Where a probe reports what it is doing (a line at a time).
pub type Progress<'a> = dyn FnMut(&str) + 'a;

/// How to characterize.
#[derive(Debug, Clone)]
pub struct CharOptions {
    /// Run only the probes that read.
    pub read_only: bool,
    /// The device runs this many times faster than the device it stands for (an emulated
    /// device served with `scale=`): its times are multiplied by it. 1 for real devices.
    pub scale: f64,
    /// Seed of the probes' offsets.
    pub seed: u64,
    /// Block devices whose signatures the write probes may destroy.
    pub wipe: Vec<PathBuf>,
    /// The caller holds the host's CPUs out of idle sleep for the whole run
    /// ([`crate::probe::idle::PollIdle`]): recorded in the result and the twin file.
    pub poll_idle: bool,
}

impl Default for CharOptions {
    fn default() -> Self {
        CharOptions {
            read_only: false,
            scale: 1.0,
            seed: 1,
            wipe: Vec::new(),
            poll_idle: false,
        }
    }
}

/// What characterize found.
#[derive(Debug, Clone, Serialize)]
pub struct Characterized {
    pub device: String,
    pub capacity_bytes: u64,
    pub read_only: bool,
    pub time_scale: f64,
    pub twin: Twin,
    /// The twin as a device spec.
    pub spec: String,
    /// I/Os timed, and the device's seconds they took.
    pub ios: u64,
    pub device_seconds: f64,
    /// The host over each probe: its steal and iowait ([`host`]).
    pub host: Vec<HostLoad>,
    /// The host's CPUs were held out of idle sleep while it was timed (`--poll-idle`).
    pub poll_idle: bool,
}

impl Characterized {
    /// The twin file `--out` writes: the twin's preset file, saying how the host was held.
    pub fn twin_file(&self, when: &str) -> String {
        let text = self.twin.preset_file(&self.device, when);
        if !self.poll_idle {
            return text;
        }
        let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
        format!(
            "{first}\n# Timed with the host's CPUs held out of idle sleep (--poll-idle).\n{rest}"
        )
    }
}

/// Characterize could not finish.
#[derive(Debug, thiserror::Error)]
pub enum CharError {
    #[error(transparent)]
    Stack(#[from] StackError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The device failed an I/O of a probe: it cannot be characterized (input).
    #[error("the device fails I/O, so it cannot be characterized: {0}")]
    DeviceFails(ScriptError),
    #[error(transparent)]
    Script(ScriptError),
    /// The device is too small (input).
    #[error("{device} holds {size}: too small to characterize (at least {min})", size = Size(*.size), min = Size(MIN_CAPACITY))]
    TooSmall { device: String, size: u64 },
    /// Not a block device (input).
    #[error("characterize needs a block device: block:/dev/X (or emu:, image:), not {0}")]
    NotABlockDevice(String),
    /// The size of the device could not be read (run).
    #[error("the size of {path}: {source}")]
    Size {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("interrupted")]
    Interrupted,
}

impl From<ScriptError> for CharError {
    fn from(e: ScriptError) -> Self {
        match e {
            ScriptError::Io { .. } => CharError::DeviceFails(e),
            ScriptError::Interrupted => CharError::Interrupted,
            e => CharError::Script(e),
        }
    }
}

impl HasCause for CharError {
    fn why(&self) -> Cause {
        match self {
            CharError::Stack(e) => e.why(),
            CharError::Probe(e) => e.why(),
            CharError::DeviceFails(_)
            | CharError::TooSmall { .. }
            | CharError::NotABlockDevice(_) => Cause::Input,
            CharError::Script(_) | CharError::Size { .. } => Cause::Run,
            CharError::Interrupted => Cause::Interrupted,
        }
    }
}

/// Characterizes `device`: a `block:` device directly (refused when mounted or in use, and
/// for the write probes when it carries a signature not named in `wipe`), an `emu:` or
/// `image:` device built for the purpose and released after.
pub fn characterize(
    device: &DeviceSpec,
    opts: &CharOptions,
    ledger: &mut Ledger,
    stop: &AtomicBool,
    say: &mut Progress,
) -> Result<Characterized, CharError> {
    match device {
        DeviceSpec::Block(path) => {
            // Mounted, system, swap and held devices are refused even read-only; a signature
            // only stops the write probes.
            let wipe = if opts.read_only {
                vec![path.clone()]
            } else {
                opts.wipe.clone()
            };
            guard::check(path, &wipe)?;
            let cap = capacity(path)?;
            let mut watch = HostWatch::start();
            let (host, servable) = host_path(ledger, stop, opts.scale, say)?;
            watch.end("the emulator's own path", say);
            let mut c = on_device(
                &device.to_string(),
                path,
                cap,
                opts,
                host,
                &mut watch,
                stop,
                say,
            )?;
            if servable {
                let what = twin_matched(&mut c, path, opts.scale, ledger, stop, say)?;
                watch.end(what, say);
            }
            c.host = watch.laps;
            Ok(c)
        }
        DeviceSpec::Emu { model, .. } => {
            let opts = CharOptions {
                scale: model.settings.scale,
                ..opts.clone()
            };
            built(device, &opts, ledger, stop, say)
        }
        DeviceSpec::Image { .. } => built(device, opts, ledger, stop, say),
        DeviceSpec::Dir(_) | DeviceSpec::TempDir => {
            Err(CharError::NotABlockDevice(device.to_string()))
        }
    }
}

fn built(
    device: &DeviceSpec,
    opts: &CharOptions,
    ledger: &mut Ledger,
    stop: &AtomicBool,
    say: &mut Progress,
) -> Result<Characterized, CharError> {
    let name = device.to_string();
    let mut watch = HostWatch::start();
    let (host, servable) = host_path(ledger, stop, opts.scale, say)?;
    watch.end("the emulator's own path", say);
    let mut inner: Option<CharError> = None;
    let r = released_after(ledger, |l| {
        let raw = built_raw(device, &BuildOptions::default(), l, stop)?;
        let mut keep = |e| {
            inner = Some(e);
            ProbeError::Interrupted
        };
        let mut c = on_device(
            &name,
            &raw.path,
            raw.capacity,
            opts,
            host,
            &mut watch,
            stop,
            say,
        )
        .map_err(&mut keep)?;
        if servable {
            let what =
                twin_matched(&mut c, &raw.path, opts.scale, l, stop, say).map_err(&mut keep)?;
            watch.end(what, say);
        }
        c.host = std::mem::take(&mut watch.laps);
        Ok(c)
    });
    match (r, inner) {
        (_, Some(e)) => Err(e),
        (Ok(c), None) => Ok(c),
        (Err(e), None) => Err(e.into()),
    }
}

/// The twin of `c` served beside its device `dev`: a card's reads matched to the card's
/// ([`matched_card`]), a disk's buffer hits to the disk's ([`matched`]); its spec made again
/// from what that moved. What was timed, for the host's watch.
fn twin_matched(
    c: &mut Characterized,
    dev: &Path,
    scale: f64,
    ledger: &mut Ledger,
    stop: &AtomicBool,
    say: &mut Progress,
) -> Result<&'static str, CharError> {
    let at = matched::Beside {
        dev,
        scale,
        ledger,
        stop,
    };
    let what = if c.twin.model == "flash" {
        matched_card::match_reads(at, &mut c.twin, say)?;
        "the reads beside the twin"
    } else {
        matched::match_hits(at, &mut c.twin, say)?;
        "the buffer hits beside the twin"
    };
    accepted(&mut c.twin);
    c.spec = c.twin.spec();
    Ok(what)
}

/// The emulator's own paths on this host ([`hostpath`]); when no device can be emulated here
/// (no root, FUSE or loop devices), the path measured on this project's reference machine.
/// True when it was measured here, so a twin can be served beside the device.
fn host_path(
    ledger: &mut Ledger,
    stop: &AtomicBool,
    scale: f64,
    say: &mut Progress,
) -> Result<(HostPaths, bool), CharError> {
    match hostpath::measure(ledger, stop, scale, say) {
        Ok(h) => Ok((h, true)),
        Err(CharError::Interrupted) => Err(CharError::Interrupted),
        Err(e) => {
            let us = crate::emu::autoscale::HOST_PATH_US;
            say(&format!(
                "the emulator's own path could not be measured here ({e}): taken as {us:.0} µs per request"
            ));
            Ok((
                HostPaths::both(HostPath {
                    fixed: us * 1e-6 * scale,
                    per_byte: 0.0,
                }),
                false,
            ))
        }
    }
}

/// The size of a block device, bytes.
pub fn capacity(path: &Path) -> Result<u64, CharError> {
    use std::io::Seek;
    let err = |source| CharError::Size {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::open(path).map_err(err)?;
    f.seek(std::io::SeekFrom::End(0)).map_err(err)
}

/// Runs the probes on the block device `dev` of `cap` bytes, the host watched probe by probe.
#[allow(clippy::too_many_arguments)]
fn on_device(
    name: &str,
    dev: &Path,
    cap: u64,
    opts: &CharOptions,
    host: HostPaths,
    watch: &mut HostWatch,
    stop: &AtomicBool,
    say: &mut Progress,
) -> Result<Characterized, CharError> {
    if cap < MIN_CAPACITY {
        return Err(CharError::TooSmall {
            device: name.to_string(),
            size: cap,
        });
    }
    let mut run = Runner::new(dev, opts.scale, !opts.read_only, stop);
    probes(name, &mut run, cap, opts, host, watch, say)
}

/// Characterizes `model` itself, in this process, on its own timeline (no device, no host
/// between them but a fixed gap): how the methods fare on a model whose answer is known.
pub fn characterize_model(
    model: Box<dyn crate::emu::DeviceModel>,
    opts: &CharOptions,
    say: &mut Progress,
) -> Result<Characterized, CharError> {
    static NEVER: AtomicBool = AtomicBool::new(false);
    let cap = model.capacity();
    let name = format!("model {}", model.name());
    let mut run = Runner::on_model(model, &NEVER);
    run.writable = !opts.read_only;
    let mut watch = HostWatch::start();
    let mut c = probes(&name, &mut run, cap, opts, HostPaths::NONE, &mut watch, say)?;
    c.host = watch.laps;
    Ok(c)
}

/// Runs every probe through `run` on a device of `cap` bytes, each ended on `watch`.
fn probes(
    name: &str,
    run: &mut Runner,
    cap: u64,
    opts: &CharOptions,
    host: HostPaths,
    watch: &mut HostWatch,
    say: &mut Progress,
) -> Result<Characterized, CharError> {
    let cap = cap / (1 << 20) * (1 << 20);
    let mut draw = Draw::new(opts.seed);
    say(&format!(
        "characterizing {name} ({}){}{}",
        Size(cap),
        if opts.read_only { ", read-only" } else { "" },
        if opts.scale != 1.0 {
            format!(", times multiplied by its scale {}", opts.scale)
        } else {
            String::new()
        }
    ));
    let offs: Vec<u64> = (0..100)
        .map(|_| draw.aligned(0, cap - 4096, 4096))
        .collect();
    let first = median(&run.reads(&offs, 4096)?);
    let twin = if first < FLASH_BELOW {
        let mut t = Twin::new(
            "flash",
            format!(
                "random 4 KiB reads take {:.3} ms (median of 100), no seek nor rotation",
                first * 1e3
            ),
        );
        say(&format!(
            "model: flash ({:.3} ms random reads)",
            first * 1e3
        ));
        flash::reads(run, cap, &mut draw, host.flash, &mut t, say)?;
        watch.end("the flash reads", say);
        if opts.read_only {
            read_only_unknowns(
                &mut t,
                &[
                    "au",
                    "open_units",
                    "write_rate",
                    "copy_rate",
                    "erase",
                    "in_order",
                    "reorder",
                ],
            );
        } else {
            flash::writes(run, cap, &mut t, say)?;
            watch.end("the flash writes", say);
        }
        t
    } else {
        say(&format!(
            "a disk ({:.3} ms random reads); its mechanics and buffer:",
            first * 1e3
        ));
        let mut t = Twin::new("hdd", "");
        let mut d = disk::reads(run, cap, host.disk.clone(), &mut draw, &mut t, say)?;
        watch.end("the disk's reads", say);
        if opts.read_only {
            t.model_why = format!("random 4 KiB reads take {:.3} ms: a seek and a rotation; whether it is shingled needs write probes (skipped: read-only)", d.random_read * 1e3);
            disk::queue::queue(run, &d, &mut draw, &mut t, say)?;
            watch.end("the queue", say);
            read_only_unknowns(
                &mut t,
                &[
                    "write_back",
                    "write_buffer",
                    "write_slots",
                    "flush",
                    "queue_depth",
                ],
            );
        } else {
            let (shingled, cached, left) = smr::decide(run, &d, &mut draw)?;
            watch.end("the shingle test", say);
            match shingled {
                Some(why) => {
                    say("model: smr (drive-managed shingled)");
                    t.model = "smr";
                    t.model_why = why;
                    t.set(
                        "write_back",
                        "true",
                        "writes are acknowledged before a random access could hold them",
                    );
                    smr::shingles(run, &d, &mut draw, cached, &mut t, say)?;
                    watch.end("the persistent cache and bands", say);
                    for p in ["write_buffer", "write_slots"] {
                        t.unknown(p, "the persistent cache takes scattered writes at the host's pace, so no burst fills the write buffer: needs bursts of writes that go in place (band-aligned)");
                    }
                    t.unknown(
                        "in_place_min",
                        "needs band-aligned writes of growing length, timed against cached ones",
                    );
                }
                None => {
                    t.model_why = match left {
                        disk::writes::Left::Nothing => format!("random 4 KiB reads take {:.3} ms (a seek and a rotation) and scattered writes made durable take as long: a conventional disk", d.random_read * 1e3),
                        disk::writes::Left::Destaging { .. } => format!("random 4 KiB reads take {:.3} ms (a seek and a rotation); scattered writes each followed by a flush are fast, but a long burst of them fills a buffer: a conventional disk that does not wait for flushes", d.random_read * 1e3),
                    };
                    say("model: hdd");
                    disk::writes::writes(run, &mut d, &mut draw, left, &mut t, say)?;
                    watch.end("the writes", say);
                    disk::queue::depth(run, &d, &mut draw, &mut t, say)?;
                    disk::queue::queue(run, &d, &mut draw, &mut t, say)?;
                    watch.end("the queue", say);
                }
            }
        }
        t
    };
    let mut twin = twin;
    twin.set("size", Size(cap).to_string(), "the device's size");
    twin.close();
    accepted(&mut twin);
    let spec = twin.spec();
    Ok(Characterized {
        device: name.to_string(),
        capacity_bytes: cap,
        read_only: opts.read_only,
        time_scale: opts.scale,
        spec,
        twin,
        ios: run.ios,
        device_seconds: run.seconds,
        host: Vec::new(),
        poll_idle: opts.poll_idle,
    })
}

/// Makes the twin's spec one the model accepts: a value measured that the model refuses (a
/// rate that came out infinite, an average seek outside what its curve can fit) is moved to
/// the parameters not identified, with the model's reason.
fn accepted(twin: &mut Twin) {
    use crate::emu::{ModelSpec, SpecError};
    for _ in 0..twin.found.len() {
        let text = twin.spec();
        let key = match ModelSpec::parse(text.trim_start_matches("emu:"))
            .and_then(|s| s.build().map(|_| ()))
        {
            Ok(()) => return,
            Err(SpecError::Invalid { key, message, .. }) => (key, message),
            Err(e) => (String::new(), e.to_string()),
        };
        // A default refused beside a measured value (avg_seek against a full_stroke): the
        // measured one the model's message names goes.
        let Some(i) = twin.found.iter().position(|f| f.name == key.0).or_else(|| {
            twin.found
                .iter()
                .position(|f| f.name != "size" && key.1.contains(f.name))
        }) else {
            return;
        };
        let f = twin.found.remove(i);
        twin.unknown(
            f.name,
            format!(
                "measured {}, which the model refuses ({}): needs the probe repeated",
                f.value, key.1
            ),
        );
        twin.close();
    }
}

fn read_only_unknowns(t: &mut Twin, params: &[&'static str]) {
    for p in params {
        t.unknown(p, "needs the write probes, skipped by --read-only");
    }
}

#[cfg(test)]
mod tests;
