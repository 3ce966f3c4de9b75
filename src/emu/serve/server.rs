//! The emulated-device server: mounts a FUSE filesystem (directly with mount(2) on /dev/fuse,
//! no libfuse or fusermount) whose one file is a device model's disk, runs its worker threads
//! and reply timer, reports counters, and unmounts and joins everything on stop or drop.

use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fuser::{BackgroundSession, Config, Session, SessionACL};
use rustix::mount::{MountFlags, UnmountFlags};
use serde_json::{json, Value as Json};

use super::backing::Backing;
use super::conn;
use super::counters::{BufPool, Counters};
use super::cut::{Circuit, InFlight, Member, Power};
use super::error::EmuError;
use super::fs::{EmuFs, DISK_NAME, MAX_IO};
use super::journal::CutState;
use super::journal::{CutAt, CutReport, Journal};
use super::model::{Background, DeviceModel};
use super::replies::{Due, ModelState, Out, Sender};
use super::reqlog::RequestLog;
use super::shared_timer::{DevicePusher, SharedTimer};
use super::timer::Clock;

/// FUSE worker threads (each reads requests from its own cloned /dev/fuse descriptor).
const WORKERS: usize = 4;
/// Filesystem type and source shown in mountinfo / findmnt.
pub const FSTYPE: &str = "fuse.iotrial";
pub const SOURCE: &str = "iotrial-emu";

/// The reply timer the devices of one process share (a shared timer of their replies and
/// model ticks); start one with `ReplyTimer::start()`.
pub type ReplyTimer = SharedTimer<Due>;

/// A device model served as the file `<mountpoint>/disk`.
pub struct EmuServer {
    mountpoint: PathBuf,
    mounted: bool,
    /// FUSE connection number of our mount.
    minor: Option<u32>,
    scale: f64,
    clock: Clock,
    model: Arc<Mutex<ModelState>>,
    counters: Arc<Counters>,
    /// The reply timer, this device's alone or shared with the other devices of its process.
    timer: Arc<ReplyTimer>,
    /// Whether the device is still on its timer (it leaves it once, when it stops).
    timed: bool,
    out: Out,
    session: Option<BackgroundSession>,
    backing: Arc<Backing>,
    cut: Arc<CutState>,
}

/// Mounts a FUSE filesystem on `mountpoint` served through the returned /dev/fuse descriptor.
fn mount_fuse(mountpoint: &Path) -> Result<OwnedFd, EmuError> {
    let dev: OwnedFd = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map_err(EmuError::DevFuse)?
        .into();
    let data = format!(
        "fd={},rootmode=40000,user_id={},group_id={},max_read={}",
        dev.as_raw_fd(),
        rustix::process::getuid().as_raw(),
        rustix::process::getgid().as_raw(),
        MAX_IO
    );
    let data = std::ffi::CString::new(data).map_err(|e| EmuError::Mount {
        path: mountpoint.to_path_buf(),
        source: std::io::Error::other(e),
    })?;
    rustix::mount::mount(
        SOURCE,
        mountpoint,
        FSTYPE,
        MountFlags::NOSUID | MountFlags::NODEV,
        Some(data.as_c_str()),
    )
    .map_err(|e| EmuError::Mount {
        path: mountpoint.to_path_buf(),
        source: e.into(),
    })?;
    Ok(dev)
}

impl EmuServer {
    /// Serves `model` as `<mountpoint>/disk`, its data in the sparse image `backing` (created
    /// or resized to the model's capacity), with a reply timer of its own. Every modeled
    /// delay is divided by `scale`.
    pub fn start(
        model: Box<dyn DeviceModel>,
        backing: &Path,
        mountpoint: &Path,
        scale: f64,
    ) -> Result<EmuServer, EmuError> {
        let timer = ReplyTimer::start().map_err(|source| EmuError::Thread {
            name: "emu-timer",
            source,
        })?;
        Self::start_on(&timer, model, backing, mountpoint, scale)
    }

    /// As [`EmuServer::start`], its replies timed by `timer`, which other devices of this
    /// process may share.
    pub fn start_on(
        timer: &Arc<ReplyTimer>,
        model: Box<dyn DeviceModel>,
        backing: &Path,
        mountpoint: &Path,
        scale: f64,
    ) -> Result<EmuServer, EmuError> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(EmuError::BadScale(scale));
        }
        let capacity = model.capacity();
        if capacity == 0 {
            return Err(EmuError::ZeroCapacity);
        }
        let backing = Backing::open(backing, capacity).map_err(|source| EmuError::Backing {
            path: backing.to_path_buf(),
            source,
        })?;
        let mp_err = |source| EmuError::Mountpoint {
            path: mountpoint.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(mountpoint).map_err(mp_err)?;
        let mountpoint = mountpoint.canonicalize().map_err(mp_err)?;

        let clock = Clock::new();
        let power = Arc::new(Power::default());
        let mono_base = super::reqlog::mono_now_ns().saturating_sub(clock.now_ns());
        let cut = Arc::new(CutState::new(Arc::clone(&power), mono_base));
        let backing = Arc::new(backing);
        let sender = Sender {
            clock,
            counters: Arc::new(Counters::default()),
            pool: Arc::new(BufPool::new(MAX_IO as usize)),
            power: Arc::clone(&power),
        };
        let mut state = ModelState::new(model);
        state.power = power;
        state.mono_base_ns = mono_base;
        let model = Arc::new(Mutex::new(state));
        let counters = Arc::clone(&sender.counters);
        let (tick_model, timer_sender) = (Arc::clone(&model), sender.clone());
        let fire = move |due, item, pusher: &DevicePusher<Due>| match item {
            Due::Reply(p, errno) => {
                let late = timer_sender.clock.now_ns().saturating_sub(due);
                timer_sender.counters.late_path(true, due, late);
                timer_sender.send(due, p, errno)
            }
            Due::Tick => {
                let out = Out {
                    sender: timer_sender.clone(),
                    timer: pusher.clone(),
                    scale,
                };
                tick_model
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .tick(&out);
            }
        };
        let pusher = timer.join(&clock, Box::new(fire));
        let out = Out {
            sender,
            timer: pusher,
            scale,
        };
        let timer = Arc::clone(timer);
        let fs = EmuFs::new(
            Arc::clone(&model),
            capacity,
            (Arc::clone(&backing), Arc::clone(&cut)),
            out.clone(),
        );

        let dev = mount_fuse(&mountpoint).inspect_err(|_| {
            // The device never served: it leaves the timer it joined.
            timer.leave(&out.timer);
        })?;
        // Read from mountinfo: a stat of the mount would wait for the server to answer.
        let minor = conn::fuse_mounts_at(&mountpoint)
            .ok()
            .and_then(|m| m.last().map(|m| m.minor));
        let mut server = EmuServer {
            mountpoint,
            mounted: true,
            minor,
            scale,
            clock,
            model,
            counters,
            timer,
            timed: true,
            out,
            session: None,
            backing,
            cut,
        };
        let mut config = Config::default();
        config.n_threads = Some(WORKERS);
        config.clone_fd = true;
        let session = super::rt::spawning_real_time(|| {
            Session::from_fd(fs, dev, SessionACL::Owner, config).and_then(Session::spawn)
        })
        .map_err(|source| EmuError::Session {
            path: server.mountpoint.clone(),
            source,
        });
        // On error, `server` drops here and removes the mount.
        server.session = Some(session?);
        Ok(server)
    }

    /// The file that stands for the device (attach a loop device to it).
    pub fn device_file(&self) -> PathBuf {
        self.mountpoint.join(DISK_NAME)
    }

    /// The mount point (canonical).
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// The model's own statistics and the server's counters.
    pub fn stats(&self) -> Json {
        let m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        let mut server = self.counters.to_json();
        let queue = self.timer.queue();
        server["timer_realtime"] = json!(queue.realtime());
        let (standby_fired, standby_wakes) = self.timer.standby_of(&self.out.timer);
        server["timer_cpus"] = json!(queue.placement().cpus());
        server["timer_standby"] = json!(queue.placement().standby.is_some());
        server["timer_devices"] = json!(self.timer.devices());
        server["timer_standby_fired"] = json!(standby_fired);
        server["timer_standby_wakes"] = json!(standby_wakes);
        json!({
            "model": m.model.name(),
            "capacity": m.model.capacity(),
            "scale": self.scale,
            "model_stats": m.model.stats(),
            "server": server,
            "outstanding_ns": m.outstanding.total_ns(),
        })
    }

    /// Does the model's background work due by now and says whether more is pending (see
    /// [`DeviceModel::background`]), with the model's clock now: `(now_ns, background)`.
    ///
    /// With `fast_forward_ns` above 0, a device that has background work pending and no
    /// request in service has its clock moved forward over that work, by at most
    /// `fast_forward_ns` of model time, instead of the caller waiting it out in real time:
    /// what the device would do left alone, done at once. Requests that come later find it
    /// that much further on.
    pub fn background(&self, fast_forward_ns: u64) -> (u64, Background) {
        let mut m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        // A model that reports completions later reports those due by now first.
        m.tick(&self.out);
        let now = m.last_ns;
        let b = m.model.background(now);
        if fast_forward_ns == 0 || !b.pending || b.host_done_ns > now {
            return (now, b);
        }
        let until = now.saturating_add(fast_forward_ns);
        let ahead = m.model.background(until);
        let to = match ahead.pending {
            true => until,
            false => ahead.idle_at_ns.clamp(now, until),
        };
        m.offset_ns += to - now;
        m.last_ns = to;
        (to, m.model.background(to))
    }

    /// Starts logging every request the device receives, times counted from the
    /// CLOCK_MONOTONIC instant `origin_mono_ns` (a log already running starts over).
    pub fn start_log(&self, origin_mono_ns: u64) {
        let log = RequestLog::new(&self.clock, origin_mono_ns);
        self.model.lock().unwrap_or_else(|e| e.into_inner()).log = Some(log);
    }

    /// Stops logging and writes the log to `path` as CSV (`t_s,op,offset,bytes,service_us`)
    /// and the replies' lateness second by second, from the device's start, to `lateness`;
    /// returns the requests written and those the full log dropped.
    pub fn stop_log(&self, path: &Path, lateness: &Path) -> Result<(u64, u64), EmuError> {
        let log = self
            .model
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .log
            .take();
        let Some(log) = log else {
            return Err(EmuError::NoLog);
        };
        log.write_csv(path).map_err(|source| EmuError::Log {
            path: path.to_path_buf(),
            source,
        })?;
        let (clock_mono_ns, origin_mono_ns) = log.clocks();
        self.counters
            .series
            .write_csv(lateness, self.clock.now_ns(), clock_mono_ns, origin_mono_ns)
            .map_err(|source| EmuError::Log {
                path: lateness.to_path_buf(),
                source,
            })?;
        Ok((log.len() as u64, log.dropped()))
    }

    /// Makes the device a used disk ([`super::stale`]).
    pub fn set_stale(&self, stale: bool) {
        self.cut
            .stale
            .store(stale, std::sync::atomic::Ordering::Relaxed);
    }

    /// Plans a power cut: from now on the device keeps what each write overwrites until its
    /// model makes it durable ([`super::journal`]). Planning twice changes nothing.
    pub fn plan_cut(&self) {
        self.cut.lock().get_or_insert_with(Journal::default);
        self.model
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .journaling = true;
    }

    /// The device's place on a [`Circuit`]: its power and its clock.
    pub fn member(&self) -> Member {
        Member {
            power: Arc::clone(&self.cut.power),
            mono_base_ns: self.cut.mono_base_ns,
        }
    }

    /// Puts the device on `circuit`, which cuts its power.
    pub fn wire(&self, circuit: Arc<Circuit>) {
        self.model.lock().unwrap_or_else(|e| e.into_inner()).circuit = Some(circuit);
    }

    /// The circuit the device is on, if any.
    pub fn circuit(&self) -> Option<Arc<Circuit>> {
        let m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        m.circuit.clone()
    }

    /// When the device's power went (CLOCK_MONOTONIC ns), if it did (its circuit's deadline
    /// checked: it goes then even if no request came).
    pub fn off_at_mono(&self) -> Option<u64> {
        let m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        m.powered_off(self.clock.now_ns());
        drop(m);
        self.cut.power.off_at().map(|t| t + self.cut.mono_base_ns)
    }

    /// After its power went: what the device loses is taken back from its image (the writes
    /// its model still held, the one in flight as `in_flight` says, torn where `seed` draws)
    /// and every reply still pending goes out now, failed. Returns what the cut did.
    pub fn cut(&self, in_flight: InFlight, seed: u64) -> Result<CutReport, EmuError> {
        let Some(off) = self.off_at_mono().map(|t| t - self.cut.mono_base_ns) else {
            return Err(EmuError::Powered);
        };
        self.timer.hurry(&self.out.timer);
        let mut guard = self.cut.lock();
        let Some(journal) = guard.as_mut() else {
            return Err(EmuError::NoCutPlanned);
        };
        let mut m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        m.fail_deferred(&self.out);
        journal.resolve(&std::mem::take(&mut m.resolved));
        let model_ns = ((off as f64 * self.scale) as u64).saturating_add(m.offset_ns);
        let unsettled = m.model.unsettled(model_ns);
        drop(m);
        let at = CutAt {
            model_ns,
            off_ns: off,
            mono_base_ns: self.cut.mono_base_ns,
        };
        journal
            .cut(at, &unsettled, in_flight, seed, &self.backing)
            .map_err(|source| EmuError::Backing {
                path: self.backing.paths()[0].clone(),
                source,
            })
    }

    /// Powers the device up again over its image with `model`, a fresh one (its cache empty,
    /// its head parked): requests are served from now on, the cut journal and the circuit
    /// are gone.
    pub fn revive(&self, model: Box<dyn DeviceModel>) {
        let mut guard = self.cut.lock();
        *guard = None;
        let mut m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        m.replace(&self.out, model);
        self.cut.power.switch_on();
    }

    /// Unmounts and joins every thread. If the mount is busy (a loop device still holds the
    /// file), its FUSE connection is aborted and it is lazily unmounted, and
    /// [`EmuError::BusyAborted`] says so.
    pub fn stop(mut self) -> Result<(), EmuError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), EmuError> {
        let mut result = Ok(());
        // No request may be left waiting for a model that will not be asked again.
        self.model
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(&self.out);
        if std::mem::take(&mut self.mounted) {
            match super::conn::unmount_patiently(
                &self.mountpoint,
                std::time::Duration::from_secs(1),
            ) {
                Ok(()) => {}
                Err(e) => {
                    self.force_unmount();
                    result = Err(if e == rustix::io::Errno::BUSY {
                        EmuError::BusyAborted {
                            path: self.mountpoint.clone(),
                        }
                    } else {
                        EmuError::Unmount {
                            path: self.mountpoint.clone(),
                            source: e.into(),
                        }
                    });
                }
            }
        }
        if let Some(session) = self.session.take() {
            // Once the connection is gone the session ends, cleanly or with an I/O error;
            // only a panic (the thread's join failing) is worth reporting.
            if session.guard.join().is_err() && result.is_ok() {
                result = Err(EmuError::Panicked("fuse session"));
            }
        }
        if std::mem::take(&mut self.timed) && !self.timer.leave(&self.out.timer) && result.is_ok() {
            result = Err(EmuError::Panicked("emu-timer"));
        }
        result
    }

    /// Aborts our FUSE connection and detaches the mount, so no thread waits on it.
    fn force_unmount(&self) {
        if let Some(minor) = self.minor {
            let _ = conn::abort_minor(&self.mountpoint, minor);
        }
        let _ = rustix::mount::unmount(&self.mountpoint, UnmountFlags::DETACH);
    }
}

impl Drop for EmuServer {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
