//! The `iotrial` command line: parses arguments, calls into the library, prints tables and
//! verdicts, and sets the exit status (0 ok, 1 failure, 2 bad input, 130 interrupted).

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use iotrial::cause::{Cause, HasCause};
use iotrial::params::{split_assignment, Params};
use iotrial::present::Rows;
use iotrial::report::{self, terminal};
use iotrial::result::{self, Analysis};
use iotrial::stack::ledger::Ledger;
use iotrial::stack::provision::BuildOptions;
use iotrial::stack::vm_key::{VmKey, VmSettings};
use iotrial::stack::{DeviceSpec, LayoutKind, StackSpec};
use iotrial::study::results::ResultsDir;
use iotrial::study::{builtin, expand, run, Manifest, Status};
use iotrial::trial;
use iotrial::workload::{self, Outcome};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "iotrial",
    version,
    about = "Run your application's disk workload on candidate storage stacks and see what each guarantees"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once per process: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Run one workload once on one target and write its results.
    Run {
        /// Workload kind (see `iotrial list workloads`), or fio:PATH for a fio job file run as
        /// the `job` workload.
        workload: String,
        /// Where to run: dir:PATH, image:[PATH][,size=SIZE], block:/dev/X. Default: a fresh
        /// temporary directory. Repeat for a filesystem over several devices (btrfs).
        #[arg(long)]
        target: Vec<String>,
        #[command(flatten)]
        stack: StackArgs,
        /// Set a workload parameter, e.g. --set samples=2048 --set region_size=8GiB.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Directory the results directory is created in.
        #[arg(long, default_value = "results")]
        out: PathBuf,
        /// Print result.json on stdout instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        monitor: MonitorArgs,
    },
    /// Re-derive a workload's verdict from a samples.csv, without doing any I/O.
    Analyze {
        workload: String,
        /// A samples.csv written by `iotrial run` (parameters are read from a result.json beside it).
        samples: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Run a study: workloads x stacks x repeats, a built-in one (`iotrial list studies`) or a
    /// study file; ends with a comparison table and report.html.
    Study {
        /// A built-in study name or a study file.
        study: String,
        /// Small sizes and sample counts (the study's [quick] section).
        #[arg(long)]
        quick: bool,
        /// Run only these stacks (repeat or separate with commas).
        #[arg(long)]
        only: Vec<String>,
        /// Run every stack on this device instead (e.g. emu:hdd, block:/dev/sdX, image:size=64GiB).
        #[arg(long)]
        device: Option<String>,
        /// Continue an interrupted study: the newest results directory of this study, or DIR.
        #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
        resume: Option<String>,
        /// Print every command and sysfs write it would do; run nothing.
        #[arg(long)]
        dry_run: bool,
        /// Directory the results directory is created in (default: the study's `out`, else results).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Allow destroying the signatures on this block device.
        #[arg(long, value_name = "DEVICE")]
        wipe: Vec<PathBuf>,
    },
    /// Characterize a device.
    Device {
        #[command(subcommand)]
        what: DeviceCommand,
    },
    /// Write the fio job that does what a job or dvr trial did (trial.fio beside each
    /// result.json under RESULT_DIR), to check its figures with fio on the same stack.
    ExportFio {
        /// A results directory, or one trial's directory.
        dir: PathBuf,
    },
    /// Record the block requests of a device while a command runs (or for a duration) as
    /// fio's iolog v3, which `iotrial run replay` and `fio --read_iolog` replay (root).
    Capture {
        /// The block device to record (/dev/X); nothing else is traced.
        #[arg(long)]
        device: PathBuf,
        /// The iolog to write.
        #[arg(long)]
        out: PathBuf,
        /// Record for this long (e.g. 60s) instead of while a command runs.
        #[arg(long)]
        duration: Option<String>,
        /// The command to run while recording (after --), without a shell.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Release what a killed run left behind (loop devices, mounts, FUSE servers, images,
    /// scheduler changes), as listed in its ledger.
    Cleanup,
    /// Rebuild report.html and report.md of a results directory (no I/O on any stack).
    Report {
        /// A results directory (holds trials/ and manifest.json).
        dir: PathBuf,
    },
    /// Compare the verdicts of two results directories: deltas and whether each is significant.
    Compare {
        /// Results directory before the change.
        a: PathBuf,
        /// Results directory after the change.
        b: PathBuf,
        /// Print a Markdown table instead of the terminal table.
        #[arg(long)]
        markdown: bool,
    },
    /// List what iotrial knows.
    List {
        #[arg(value_enum)]
        what: ListWhat,
    },
    /// The guest agent of a VM trial: the first process of the guest iotrial boots (never
    /// run by hand).
    #[command(hide = true)]
    Guest,
}

/// One stack described on the command line.
#[derive(clap::Args)]
struct StackArgs {
    /// Filesystem to make on the target device (ext4, xfs, btrfs, ...).
    #[arg(long)]
    fs: Option<String>,
    /// Extra mkfs arguments, as one string split on spaces (e.g. "-T largefile4").
    #[arg(long, allow_hyphen_values = true)]
    mkfs: Option<String>,
    /// Mount options (e.g. noatime,data=writeback).
    #[arg(long)]
    mount: Option<String>,
    /// Layout: files (default), partitions or regions (raw I/O).
    #[arg(long)]
    layout: Option<String>,
    /// I/O scheduler for the device (none, mq-deadline, bfq, kyber).
    #[arg(long)]
    scheduler: Option<String>,
    /// Scheduler tunable, e.g. --tunable read_expire=250.
    #[arg(long = "tunable", value_name = "KEY=VALUE")]
    tunables: Vec<String>,
    /// An external log device for xfs, zfs or ext3/4 (their journal) (a device spec, e.g. image:size=256MiB).
    #[arg(long, value_name = "SPEC")]
    logdev: Option<String>,
    /// With --fs zfs: how the pool lays the devices out (stripe, mirror, raidz).
    #[arg(long, value_name = "LAYOUT")]
    zpool: Option<String>,
    /// Allow destroying the signatures on this block device (name it exactly as in --target).
    #[arg(long, value_name = "DEVICE")]
    wipe: Vec<PathBuf>,
    /// MD RAID over the --target devices, the filesystem or raw layout on the array:
    /// raid10[,chunk=SIZE][,layout=n2|f2|o2] (also raid0, raid1, raid5, raid6).
    #[arg(long, value_name = "LEVEL[,chunk=SIZE][,layout=L]")]
    md: Option<String>,
    /// Run the trial in a KVM guest, the targets passed to it as virtio disks; settings:
    /// --vm=cpus=N,memory=SIZE,cache=none|writeback|writethrough,aio=threads|native|io_uring,
    /// accel=auto|kvm|tcg,kernel=PATH.
    #[arg(long, value_name = "SETTINGS", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    vm: Option<String>,
}

/// What watches a trial from outside its workload.
#[derive(clap::Args)]
struct MonitorArgs {
    /// Monitors: a comma list of diskstats, threads, memory, trace (root); or all; or none.
    #[arg(long, value_name = "LIST", default_value = iotrial::monitor::settings::DEFAULT)]
    monitor: String,
    /// Time between two samples of the monitors (10ms to 1h).
    #[arg(long, value_name = "DURATION", default_value = iotrial::monitor::settings::DEFAULT_INTERVAL)]
    monitor_interval: String,
}

impl MonitorArgs {
    /// The settings, or a usage error naming the flag and what is allowed.
    fn settings(&self) -> Result<iotrial::monitor::Settings> {
        use iotrial::monitor::{Settings, SettingsError};
        let flag = |e: SettingsError| {
            let name = match e {
                SettingsError::Interval(_) => "--monitor-interval",
                _ => "--monitor",
            };
            usage(format!("{name}: {e}"))
        };
        let s = Settings::parse(&self.monitor, &self.monitor_interval).map_err(flag)?;
        s.check_host().map_err(flag)?;
        Ok(s)
    }
}

#[derive(Subcommand)]
enum DeviceCommand {
    /// Serve an emulated device to any program: prints the loop device to use (fio, a
    /// database, a recorder), serves until Ctrl-C or SIGTERM, then releases everything and
    /// prints the model's statistics.
    Serve {
        /// The device: emu:MODEL[,k=v] (see `iotrial list models`).
        #[arg(required_unless_present = "for_ledger")]
        spec: Option<String>,
        /// Print the device, its model and the expectations `device probe` uses as JSON, and
        /// the statistics at the end as JSON.
        #[arg(long)]
        json: bool,
        /// Serve the emulated devices of the run whose ledger this is, and release what it
        /// lists when the run is gone (started by iotrial itself).
        #[arg(long, hide = true, value_name = "LEDGER")]
        for_ledger: Option<PathBuf>,
    },
    /// Seeker-style probe: random 4 KiB read access time, sequential read MB/s at the outer and
    /// inner 1%, random 4 KiB write IOPS, sequential write MB/s; beside the model's expectation
    /// for emu: devices. Writes to the device.
    Probe {
        /// The device: emu:MODEL[,k=v], image:[PATH][,size=], block:/dev/X.
        spec: String,
        /// Random I/Os per random phase.
        #[arg(long, default_value_t = 1000)]
        random_ios: usize,
        /// Bytes per sequential phase (at most 1% of the device).
        #[arg(long, default_value = "256MiB")]
        seq_bytes: String,
        /// Allow destroying the signatures on this block device.
        #[arg(long, value_name = "DEVICE")]
        wipe: Vec<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ListWhat {
    /// Workload kinds, their parameters, defaults and units.
    Workloads,
    /// Built-in studies.
    Studies,
    /// Device models for emu: devices, their parameters and defaults.
    Models,
}

/// An error caused by the user's input: exit status 2.
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Ended by Ctrl-C or SIGTERM: exit status 130.
#[derive(Debug)]
struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted; files made by the run were removed and no result was written")
    }
}
impl std::error::Error for Interrupted {}

fn usage(e: impl std::fmt::Display) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

/// A library error, ending the command with the exit status its cause says.
fn failed<E>(e: E) -> anyhow::Error
where
    E: HasCause + std::error::Error + Send + Sync + 'static,
{
    match e.why() {
        Cause::Input => usage(e),
        Cause::Interrupted => Interrupted.into(),
        Cause::Host | Cause::Run => e.into(),
    }
}

/// A flag's value the library refused: its message prefixed with the flag.
fn refused_flag<E: HasCause + std::fmt::Display>(flag: &str, e: E) -> anyhow::Error {
    let message = format!("{flag}: {e}");
    match e.why() {
        Cause::Input => usage(message),
        _ => anyhow::anyhow!(message),
    }
}

/// The error and its causes on one line, `outer: cause: ...`, leaving out a cause whose text the
/// line already holds (an error whose message quotes its source).
fn message(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal while stopping exits at once.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone());
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    match dispatch(cli, &stop) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("iotrial: {}", message(&e));
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::from(2)
            } else if e.downcast_ref::<Interrupted>().is_some() {
                ExitCode::from(130)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn dispatch(cli: Cli, stop: &Arc<AtomicBool>) -> Result<()> {
    match cli.command {
        Command::Run {
            workload,
            target,
            stack,
            set,
            out,
            json,
            monitor,
        } => cmd_run(&workload, target, &stack, &set, &out, json, &monitor, stop),
        Command::Analyze {
            workload,
            samples,
            set,
            json,
        } => cmd_analyze(&workload, &samples, &set, json),
        Command::Cleanup => cmd_cleanup(),
        Command::ExportFio { dir } => {
            for f in iotrial::fio::export_trial(&dir).map_err(failed)? {
                println!("wrote {}", f.display());
            }
            Ok(())
        }
        Command::Capture {
            device,
            out,
            duration,
            command,
        } => cmd_capture(&device, &out, duration, command, stop),
        Command::Device {
            what:
                DeviceCommand::Serve {
                    spec,
                    json,
                    for_ledger,
                },
        } => match for_ledger {
            Some(ledger) => {
                if iotrial::stack::server::process::serve_for_ledger(&ledger) {
                    Ok(())
                } else {
                    anyhow::bail!("some resources were left for `iotrial cleanup`")
                }
            }
            None => cmd_serve(spec.as_deref().unwrap_or_default(), json, stop),
        },
        Command::Device {
            what:
                DeviceCommand::Probe {
                    spec,
                    random_ios,
                    seq_bytes,
                    wipe,
                    json,
                },
        } => cmd_probe(&spec, random_ios, &seq_bytes, wipe, json, stop),
        Command::Report { dir } => {
            let files = report::html::write_report(&dir, workload::report_of).map_err(usage)?;
            println!("{}\n{}", files.html.display(), files.markdown.display());
            Ok(())
        }
        Command::Compare { a, b, markdown } => {
            let c = report::compare::compare_dirs(&a, &b, workload::report_of).map_err(usage)?;
            print!("{}", report::compare::render(&c, markdown));
            Ok(())
        }
        Command::List { what } => cmd_list(what),
        Command::Guest => iotrial::guest::main(),
        Command::Study {
            study,
            quick,
            only,
            device,
            resume,
            dry_run,
            out,
            wipe,
        } => cmd_study(
            &study, quick, only, device, resume, dry_run, out, wipe, stop,
        ),
    }
}

fn cmd_list(what: ListWhat) -> Result<()> {
    match what {
        ListWhat::Workloads => cmd_list_workloads(),
        ListWhat::Studies => {
            let rows = Rows {
                headings: ["study", "stacks", "workloads", "file", "what it runs"]
                    .map(String::from)
                    .to_vec(),
                rows: builtin::list()?
                    .into_iter()
                    .map(|b| {
                        vec![
                            b.name,
                            b.stacks.to_string(),
                            b.workloads.to_string(),
                            b.path,
                            b.description,
                        ]
                    })
                    .collect(),
            };
            println!("{}", terminal::table(&rows));
        }
        ListWhat::Models => {
            let rows = Rows {
                headings: ["model", "parameter", "default", "unit", "meaning"]
                    .map(String::from)
                    .to_vec(),
                rows: iotrial::emu::model_table()
                    .into_iter()
                    .map(|r| {
                        vec![
                            r.model.to_string(),
                            r.parameter.to_string(),
                            r.default.to_string(),
                            r.unit.to_string(),
                            r.meaning.to_string(),
                        ]
                    })
                    .collect(),
            };
            println!("{}", terminal::table(&rows));
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn cmd_study(
    name: &str,
    quick: bool,
    only: Vec<String>,
    device: Option<String>,
    resume: Option<String>,
    dry_run: bool,
    out: Option<PathBuf>,
    wipe: Vec<PathBuf>,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    let study = builtin::load(name).map_err(failed)?;
    if let Some(d) = &device {
        // A device this host cannot build is the trials' to report: they are skipped.
        match DeviceSpec::parse(d) {
            Err(e) if e.why() == Cause::Input => return Err(refused_flag("--device", e)),
            _ => {}
        }
    }
    let out_dir = out
        .clone()
        .unwrap_or_else(|| PathBuf::from(study.out.clone().unwrap_or_else(|| "results".into())));
    let resume = match resume.as_deref() {
        None => None,
        Some("") => Some(run::latest_results(&out_dir, &study.name).ok_or_else(|| {
            usage(format!(
                "--resume: no results directory of study {} in {}",
                study.name,
                out_dir.display()
            ))
        })?),
        Some(p) => Some(PathBuf::from(p)),
    };
    let opts = run::RunOptions {
        expand: iotrial::study::Options {
            quick,
            only,
            device,
        },
        resume,
        out,
        dry_run,
        wipe,
        progress: std::io::IsTerminal::is_terminal(&std::io::stdout()),
    };
    let mut say = std::io::stdout();
    let r = run::run(&study, &opts, stop, &mut say).map_err(failed)?;
    if dry_run {
        return Ok(());
    }
    println!("\n{}", r.table);
    if let Some(rep) = &r.report {
        println!("report: {}", rep.html.display());
        println!("        {}", rep.markdown.display());
    }
    if let Some(root) = &r.root {
        println!("results: {}", root.display());
    }
    if r.interrupted {
        return Err(Interrupted.into());
    }
    if r.failed > 0 {
        anyhow::bail!("{} trial(s) failed; see the manifest", r.failed);
    }
    Ok(())
}

fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>> {
    set.iter()
        .map(|s| split_assignment(s).map_err(usage))
        .collect()
}

/// The stack described by `--target` and the stack flags.
fn stack_from_args(target: &[String], a: &StackArgs) -> Result<(StackSpec, Vec<DeviceSpec>)> {
    let mut devices = Vec::new();
    for t in target {
        devices.push(DeviceSpec::parse(t).map_err(|e| refused_flag("--target", e))?);
    }
    if devices.is_empty() {
        devices.push(DeviceSpec::TempDir);
    }
    let device = devices[0].clone();
    let layout = match a.layout.as_deref() {
        None => None,
        Some("files") => Some(LayoutKind::Files),
        Some("partitions") => Some(LayoutKind::Partitions),
        Some("regions") => Some(LayoutKind::Regions),
        Some(o) => {
            return Err(usage(format!(
                "--layout: unknown layout '{o}'; allowed: files, partitions, regions"
            )))
        }
    };
    // A block device without a filesystem is used raw.
    let layout = layout.unwrap_or(if device.needs_root() && a.fs.is_none() {
        LayoutKind::Regions
    } else {
        LayoutKind::Files
    });
    let mut tunables = std::collections::BTreeMap::new();
    for t in &a.tunables {
        let (k, v) = split_assignment(t).map_err(|e| usage(format!("--tunable: {e}")))?;
        tunables.insert(k, v);
    }
    let mut name = device.kind().to_string();
    if let Some(md) = &a.md {
        name = format!("{name}-{}", md.split(',').next().unwrap_or_default());
    }
    if let Some(fs) = &a.fs {
        name = format!("{name}-{fs}");
    }
    if layout != LayoutKind::Files {
        name = format!("{name}-{}", layout.name());
    }
    let vm = match &a.vm {
        None => VmKey::Native,
        Some(text) => {
            name.push_str("-vm");
            VmKey::Guest(VmSettings::parse(text).map_err(|e| usage(format!("--vm: {e}")))?)
        }
    };
    let spec = StackSpec {
        name,
        devices: devices.iter().map(|d| d.to_string()).collect(),
        layout,
        fs: a.fs.clone(),
        mkfs: a
            .mkfs
            .as_deref()
            .map(|m| m.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
        mount: a.mount.clone().unwrap_or_default(),
        scheduler: a.scheduler.clone(),
        tunables,
        logdev: a.logdev.clone(),
        md: a.md.clone(),
        zpool: a.zpool.clone(),
        baseline: false,
        vm,
    };
    Ok((spec, devices))
}

#[allow(clippy::too_many_arguments)]
fn cmd_run(
    name: &str,
    target: Vec<String>,
    stack_args: &StackArgs,
    set: &[String],
    out: &Path,
    as_json: bool,
    monitor: &MonitorArgs,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    let (w, mut overrides) = match name.strip_prefix(iotrial::fio::PREFIX) {
        Some(path) => {
            let file = iotrial::fio::parse_file(Path::new(path)).map_err(failed)?;
            for n in &file.notes {
                eprintln!("note: {n}");
            }
            (workload::find("job").map_err(usage)?, file.overrides)
        }
        None => (workload::find(name).map_err(usage)?, Vec::new()),
    };
    overrides.extend(parse_sets(set)?);
    let params = w.resolve(&overrides).map_err(usage)?;
    let monitor = monitor.settings()?;
    let (stack, devices) = stack_from_args(&target, stack_args)?;
    // Refuse impossible parameters before anything is created on disk.
    w.plan(&params).map_err(usage)?;
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let setup = trial::Setup {
        workload: w.name(),
        stack: &stack,
        devices: &devices,
        build: BuildOptions {
            wipe: stack_args.wipe.clone(),
            ..Default::default()
        },
        monitor: &monitor,
    };
    let output = trial::run(w, &params, &setup, &mut ledger, stop, !as_json).map_err(failed)?;
    let results = ResultsDir::create(out, w.name())
        .with_context(|| format!("create results directory in {}", out.display()))?;
    // The run as a one-trial study: study.toml and the manifest every results directory has.
    let exp = expand::single_run(w.name(), &params, stack.clone(), &monitor)?;
    let mut manifest = Manifest::create(&results, &exp)?;
    let tmp = results.begin_trial(&stack.name, w.name(), 1)?;
    trial::write(&tmp, &output)?;
    let dir = results.commit_trial(&tmp, &stack.name, w.name(), 1)?;
    manifest.update(&results.root, &exp.trials[0].id, Status::Done, None)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&output.doc)?);
    } else {
        print_outcome(output.outcome.as_ref(), &output.doc.warnings);
        println!("results: {}", dir.display());
    }
    Ok(())
}

fn print_outcome(outcome: &dyn Outcome, warnings: &[String]) {
    println!("{}", terminal::table(&outcome.stream_rows()));
    for w in warnings {
        println!("warning: {w}");
    }
    println!("{}", outcome.verdict_line());
}

fn cmd_capture(
    device: &Path,
    out: &Path,
    duration: Option<String>,
    command: Vec<String>,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    use iotrial::monitor::capture::{capture, Until};
    let until = match (duration, command.is_empty()) {
        (Some(d), true) => Until::Duration(
            iotrial::units::parse_duration(&d)
                .map_err(|e| usage(format!("--duration: {}", e.0)))?,
        ),
        (None, false) => Until::Command(command),
        _ => {
            return Err(usage(
                "give either --duration or a command after --, not both",
            ))
        }
    };
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let c = capture(device, out, &until, &mut ledger, stop).map_err(failed)?;
    println!(
        "{}: {} requests, {} bytes in {:.2} s -> {}",
        c.device.display(),
        c.requests,
        c.bytes,
        c.seconds,
        c.out.display()
    );
    if c.lost_events > 0 {
        println!(
            "warning: the trace lost {} events; the log lacks requests",
            c.lost_events
        );
    }
    if let Some(code) = c.exit_status.filter(|&c| c != 0) {
        println!("warning: the command exited with status {code}");
    }
    Ok(())
}

fn cmd_probe(
    spec: &str,
    random_ios: usize,
    seq_bytes: &str,
    wipe: Vec<PathBuf>,
    as_json: bool,
    stop: &Arc<AtomicBool>,
) -> Result<()> {
    use iotrial::probe::{probe, ProbeOptions};
    let device = DeviceSpec::parse(spec).map_err(failed)?;
    let seq_bytes = iotrial::units::parse_size(seq_bytes)
        .map_err(|e| usage(format!("--seq-bytes: {}", e.0)))?;
    if random_ios == 0 {
        return Err(usage("--random-ios: must be at least 1"));
    }
    let opts = ProbeOptions {
        random_ios,
        seq_bytes,
        ..Default::default()
    };
    let build = BuildOptions {
        wipe,
        ..Default::default()
    };
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let r = probe(&device, &opts, &build, &mut ledger, stop).map_err(failed)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    let rows = Rows {
        headings: ["figure", "measured", "model expects", "difference", "note"]
            .map(String::from)
            .to_vec(),
        rows: r
            .figures
            .iter()
            .map(|f| {
                vec![
                    format!("{} ({})", f.name, f.unit),
                    format!("{:.3}", f.measured),
                    f.expected
                        .map(|e| format!("{e:.3}"))
                        .unwrap_or_else(|| "-".into()),
                    f.diff_pct
                        .map(|d| format!("{d:+.1}%"))
                        .unwrap_or_else(|| "-".into()),
                    if f.host_bound {
                        format!(
                            "may be host-bound ({:.0} µs of wall time per I/O): lower the scale",
                            f.wall_us_per_io
                        )
                    } else if f.time_scale != r.time_scale {
                        format!(
                            "at scale {}: the emulator's own ~{} µs per I/O under {}% of it",
                            f.time_scale,
                            iotrial::probe::HOST_PATH_US,
                            iotrial::probe::HOST_PATH_SHARE * 100.0
                        )
                    } else {
                        String::new()
                    },
                ]
            })
            .collect(),
    };
    println!(
        "{} ({} bytes){}",
        r.device,
        r.capacity_bytes,
        if r.time_scale != 1.0 {
            format!(", times scaled back by {}", r.time_scale)
        } else {
            String::new()
        }
    );
    println!("{}", terminal::table(&rows));
    Ok(())
}

fn cmd_cleanup() -> Result<()> {
    let dir = iotrial::stack::ledger::ledger_dir();
    let rep = iotrial::stack::cleanup::run(&dir);
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

fn cmd_serve(spec: &str, as_json: bool, stop: &Arc<AtomicBool>) -> Result<()> {
    use iotrial::stack::serve::serve;
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let ready = |s: &iotrial::stack::serve::Served| {
        if as_json {
            println!("{}", serde_json::to_string(s).expect("serializes"));
        } else {
            println!("{}", s.device.display());
            eprintln!(
                "serving {} ({} bytes, model {}) on {}; Ctrl-C to stop",
                s.spec,
                s.capacity_bytes,
                s.model,
                s.device.display()
            );
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
    };
    let (stats, warning) = serve(spec, &mut ledger, stop, ready).map_err(failed)?;
    if as_json {
        println!("{}", serde_json::to_string(&stats)?);
    } else {
        println!("{}", terminal::table(&stats_rows(&stats)));
    }
    if let Some(w) = warning {
        eprintln!("warning: {w}");
    }
    Ok(())
}

/// The server's counters and the model's statistics as two-column rows.
fn stats_rows(stats: &serde_json::Value) -> Rows {
    let mut rows = Vec::new();
    for (section, key) in [("server", "server"), ("model", "model_stats")] {
        for (k, v) in report::model::flatten(&stats[key]) {
            rows.push(vec![format!("{section} {k}"), v]);
        }
    }
    Rows {
        headings: vec!["statistic".into(), "value".into()],
        rows,
    }
}

fn cmd_analyze(name: &str, samples: &Path, set: &[String], as_json: bool) -> Result<()> {
    let w = workload::find(name).map_err(usage)?;
    let mut overrides = Vec::new();
    let beside = samples.with_file_name("result.json");
    let doc = if beside.exists() {
        let doc = result::read(&beside).map_err(usage)?;
        if doc.kind != w.name() {
            return Err(usage(format!(
                "{} is a result of workload kind {}, not {}",
                beside.display(),
                doc.kind,
                w.name()
            )));
        }
        overrides = Params::overrides_from_json(w.params(), &doc.params.clone().into());
        if !as_json {
            eprintln!("parameters and phases from {}", beside.display());
        }
        Some(doc)
    } else {
        None
    };
    overrides.extend(parse_sets(set)?);
    let params = w.resolve(&overrides).map_err(usage)?;
    let streams = result::read_samples(samples, doc.as_ref()).map_err(usage)?;
    let emulated: Vec<serde_json::Value> = doc
        .as_ref()
        .and_then(|d| d.stack["emulated"].as_array().cloned())
        .unwrap_or_default();
    let seen = workload::Seen {
        monitor: doc.as_ref().map(|d| &d.monitor),
        emulated: &emulated,
        time_scale: doc.as_ref().map_or(1.0, |d| d.time_scale),
    };
    let outcome = w.analyze(&params, &streams, &seen).map_err(usage)?;
    if as_json {
        let doc = Analysis {
            format_version: result::FORMAT_VERSION,
            kind: w.name().to_string(),
            params: result::params_object(&params),
            warnings: outcome.warnings(),
            streams: outcome.streams_json(),
            verdict: outcome.verdict_json(),
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print_outcome(outcome.as_ref(), &outcome.warnings());
    }
    Ok(())
}

fn cmd_list_workloads() {
    for w in workload::all() {
        println!("{}: {}", w.name(), w.about());
        let rows = Rows {
            headings: ["parameter", "default", "unit", "meaning"]
                .map(String::from)
                .to_vec(),
            rows: w
                .params()
                .iter()
                .map(|p| {
                    vec![
                        p.name.to_string(),
                        p.default.to_string(),
                        p.unit.to_string(),
                        p.help.to_string(),
                    ]
                })
                .collect(),
        };
        println!("{}\n", terminal::table(&rows));
    }
}

#[cfg(test)]
mod tests {
    use super::message;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot start in /dev/loop1: {source}")]
    struct Quoting {
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_already_quotes_is_said_once() {
        let e = anyhow::Error::new(Quoting {
            source: std::io::Error::other("not a directory"),
        });
        assert_eq!(message(&e), "cannot start in /dev/loop1: not a directory");
        let e = anyhow::Error::new(std::io::Error::other("gone")).context("reading x");
        assert_eq!(message(&e), "reading x: gone");
    }
}
