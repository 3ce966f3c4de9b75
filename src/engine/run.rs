//! Running a plan's stream phases: an [`Engine`] holds what lasts from one phase to the next
//! (each stream's cursor, the recorder, the time origin) and runs one stream phase at a time,
//! its threads released together through a barrier; [`run`] is the one-phase, in-memory run
//! the device probe and tests use.

use super::realtime::{self, Tally};
use super::samples::record::{Keep, Recorder, StreamSink};
use super::sources::blockgen::{IoGen, PrepareCtx};
use super::sources::blockgen_run::{self, GenEnded, GenJob};
use super::sources::source::{Make, OpSource, SourceCtx};
use super::sources::source_run::{self, SourceEnded, SourceJob};
use super::stream::{self, slot_buffers, Cursor, Ended, Job};
use super::{
    open_stream, EngineError, EngineOptions, Pacing, Placement, Plan, Protocol, Step, Stop,
};
use super::{PhaseRecord, StreamInfo, StreamSamples};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How one stream phase went.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseOutcome {
    /// The phase ended before its stop condition (a stop request).
    pub incomplete: bool,
    /// When sampling began, ns since the origin (measured time), if it did.
    pub sampling_start_ns: Option<u64>,
    /// Samples taken in the phase.
    pub samples: u64,
    /// CPU time (user + system) the phase's stream threads used, s (real time, whatever the
    /// time scale).
    pub cpu_s: f64,
    /// Each real-time stream's buffer as the stream counted it live: (stream name, tally).
    pub buffers: Vec<(String, Tally)>,
    /// What the streams' generators found in the phase (verify mismatches), by stream name.
    pub reports: Vec<(String, serde_json::Value)>,
}

/// CPU time the calling thread has used since it started, ns.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A plan being run on placed targets, phase by phase.
pub struct Engine<'a> {
    plan: &'a Plan,
    placements: &'a [Placement],
    opts: EngineOptions,
    origin: Instant,
    cursors: Vec<Cursor>,
    /// Each source stream's source, made at the first phase it runs in.
    sources: Vec<Option<Box<dyn OpSource>>>,
    /// Each generated stream's generator, made at the prepare phase or the first phase it
    /// runs in.
    gens: Vec<Option<Box<dyn IoGen>>>,
    recorder: Recorder,
    warnings: Vec<String>,
}

/// One stream's work in a phase: block I/O, its own source's operations, or its own
/// generator's block I/O.
enum Work {
    Block(Job),
    Source(SourceJob),
    Gen(GenJob),
}

/// What a stream's thread handed back.
enum Back {
    /// A block stream, with its buffer's tally when it ran in real time.
    Block(Ended, Option<Tally>),
    Source(SourceEnded),
    Gen(GenEnded),
}

impl Back {
    fn samples(&self) -> usize {
        match self {
            Back::Block(e, _) => e.samples,
            Back::Source(e) => e.samples,
            Back::Gen(e) => e.samples,
        }
    }
}

impl<'a> Engine<'a> {
    /// An engine for `plan` on `placements` (one per stream), measuring time from `origin`,
    /// keeping samples as `keep` says (times multiplied by the time scale).
    pub fn new(
        plan: &'a Plan,
        placements: &'a [Placement],
        opts: EngineOptions,
        origin: Instant,
        keep: Keep,
    ) -> Result<Engine<'a>, EngineError> {
        plan.check()?;
        if plan.streams.len() != placements.len() {
            return Err(EngineError::Mismatch {
                streams: plan.streams.len(),
                placements: placements.len(),
            });
        }
        let info = plan
            .streams
            .iter()
            .map(|s| StreamInfo::new(&s.name, &s.role, s.op))
            .collect();
        Ok(Engine {
            plan,
            placements,
            opts,
            origin,
            cursors: (0..plan.streams.len())
                .map(|i| Cursor::new(plan.seed, i))
                .collect(),
            sources: (0..plan.streams.len()).map(|_| None).collect(),
            gens: (0..plan.streams.len()).map(|_| None).collect(),
            recorder: Recorder::new(info, keep, opts.time_scale)?,
            warnings: Vec::new(),
        })
    }

    /// Runs stream phase `phase` of the plan until its stop condition, calling `tick` about
    /// every 20 ms meanwhile (to draw progress or request a stop).
    pub fn run_phase(
        &mut self,
        phase: usize,
        mut tick: impl FnMut(&Protocol),
    ) -> Result<PhaseOutcome, EngineError> {
        let p = &self.plan.phases[phase];
        let Step::Streams { streams, stop } = &p.step else {
            return Err(EngineError::NotStreams(p.name.clone()));
        };
        let stop = *stop;
        let protocol = Arc::new(Protocol::starting(
            streams.len(),
            self.origin,
            stop.samples_everything(),
        ));
        let jobs = self.jobs(streams, stop, phase as u16)?;
        let barrier = Arc::new(Barrier::new(jobs.len() + 1));
        let cpus = self.opts.cpus;
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|work| {
                let (protocol, barrier) = (protocol.clone(), barrier.clone());
                let name = match &work {
                    Work::Block(j) => j.plan.name.clone(),
                    Work::Source(j) => j.plan.name.clone(),
                    Work::Gen(j) => self.plan.streams[j.stream].name.clone(),
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || {
                        let unpinned = cpus.and_then(|c| c.pin_calling_thread().err());
                        let back = match work {
                            Work::Block(job) => match &job.plan.pacing {
                                Pacing::Realtime(rt) => {
                                    let rt = rt.clone();
                                    let (e, t) = realtime::run::run(job, &rt, &protocol, &barrier);
                                    Back::Block(e, Some(t))
                                }
                                _ => Back::Block(stream::run(job, &protocol, &barrier), None),
                            },
                            Work::Source(job) => {
                                Back::Source(source_run::run(job, &protocol, &barrier))
                            }
                            Work::Gen(job) => {
                                Back::Gen(blockgen_run::run(job, &protocol, &barrier))
                            }
                        };
                        (back, thread_cpu_ns(), unpinned)
                    })
                    .expect("spawn stream thread")
            })
            .collect();
        let wall = match stop {
            Stop::Duration(s) => Some(s / self.opts.time_scale),
            _ => None,
        };
        // Sampling (of everything) and the deadline start now, as the streams are let go: set
        // before the barrier, so no stream's first I/O can come before them.
        protocol.release(wall);
        barrier.wait();
        while !handles.iter().all(|h| h.is_finished()) {
            tick(&protocol);
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut ended = Vec::with_capacity(handles.len());
        let mut cpu = Vec::with_capacity(handles.len());
        for (h, &i) in handles.into_iter().zip(streams) {
            let (back, ns, unpinned) = h.join().expect("stream thread panicked");
            if let (Some(e), Some(set)) = (unpinned, cpus) {
                let name = self.plan.streams[i].name.clone();
                self.warn(
                    &name,
                    vec![format!("ran on every CPU, not only {set:?}: {e}")],
                );
            }
            ended.push(back);
            cpu.push(ns);
        }
        let short = stop == Stop::AllHaveN
            && ended
                .iter()
                .zip(streams)
                .any(|(e, &i)| e.samples() < self.plan.streams[i].samples);
        let samples = ended.iter().map(|e| e.samples() as u64).sum();
        let mut buffers = Vec::new();
        let mut reports = Vec::new();
        for (e, &i) in ended.into_iter().zip(streams) {
            match e {
                Back::Block(e, tally) => {
                    if let Some(t) = tally {
                        buffers.push((self.plan.streams[i].name.clone(), t));
                    }
                    self.cursors[i] = e.cursor;
                    self.recorder.put(i, e.sink);
                }
                Back::Source(e) => {
                    self.sources[i] = Some(e.source);
                    self.recorder.put(i, e.sink);
                }
                Back::Gen(mut e) => {
                    if let Some(r) = e.gen.report() {
                        reports.push((self.plan.streams[i].name.clone(), r));
                    }
                    self.gens[i] = Some(e.gen);
                    self.recorder.put(i, e.sink);
                }
            }
        }
        Ok(PhaseOutcome {
            incomplete: protocol.stopped() || short,
            sampling_start_ns: protocol.sampling().then(|| protocol.t0_ns()),
            samples,
            cpu_s: cpu.iter().sum::<u64>() as f64 / 1e9,
            buffers,
            reports,
        })
    }

    /// The context a stream's source or generator is made with.
    fn ctx(&self, i: usize) -> SourceCtx<'a> {
        SourceCtx {
            placement: &self.placements[i],
            direct: self.opts.direct,
            seed: self.cursors[i].seed(),
            index: i,
            time_scale: self.opts.time_scale,
        }
    }

    /// Makes stream `i`'s source of operations unless it has one.
    fn make_source(&mut self, i: usize) -> Result<(), EngineError> {
        if self.sources[i].is_some() {
            return Ok(());
        }
        let s = &self.plan.streams[i];
        let Some(Make::Ops(make)) = s.source.as_ref().map(|src| &src.make) else {
            return Ok(());
        };
        let ctx = self.ctx(i);
        let made = make(&ctx).map_err(|e| EngineError::Source {
            stream: s.name.clone(),
            path: ctx.placement.path.clone(),
            source: e,
        })?;
        self.sources[i] = Some(made);
        Ok(())
    }

    /// Makes stream `i`'s generator unless it has one.
    fn make_gen(&mut self, i: usize) -> Result<(), EngineError> {
        if self.gens[i].is_some() {
            return Ok(());
        }
        let s = &self.plan.streams[i];
        let Some(Make::Block(make)) = s.source.as_ref().map(|src| &src.make) else {
            return Ok(());
        };
        let ctx = self.ctx(i);
        let g = make(&ctx).map_err(|e| EngineError::Source {
            stream: s.name.clone(),
            path: ctx.placement.path.clone(),
            source: e,
        })?;
        self.gens[i] = Some(g);
        Ok(())
    }

    /// The plan's `prepare` phase: every stream's generator or source lays out what it
    /// needs; block streams get their files made as [`super::prepare`] says (created,
    /// allocated, and filled for those that read). `stop` ends a long layout within a second.
    pub fn prepare(&mut self, stop: &std::sync::atomic::AtomicBool) -> Result<(), EngineError> {
        for i in 0..self.plan.streams.len() {
            let s = &self.plan.streams[i];
            let ctx = PrepareCtx {
                direct: self.opts.direct,
                stop,
            };
            let failed = |e: std::io::Error| EngineError::Source {
                stream: s.name.clone(),
                path: self.placements[i].path.clone(),
                source: e,
            };
            if s.source.as_ref().is_some_and(|src| src.is_block()) {
                self.make_gen(i)?;
                let g = self.gens[i].as_mut().expect("made");
                g.prepare(&ctx).map_err(failed)?;
            } else if s.source.is_some() {
                self.make_source(i)?;
                let src = self.sources[i].as_mut().expect("made");
                src.lay_out(&ctx).map_err(failed)?;
            } else if s.io.share.is_none() {
                super::prepare::lay_out(s, &self.placements[i], self.opts.direct, stop)?;
            }
        }
        Ok(())
    }

    /// The work of one phase: targets opened with each stream's backend (slot buffers made and
    /// registered) or sources made, cursors and sinks taken. What the kernel refused is kept
    /// as warnings.
    fn jobs(
        &mut self,
        streams: &[usize],
        stop: Stop,
        phase: u16,
    ) -> Result<Vec<Work>, EngineError> {
        let mut work = Vec::with_capacity(streams.len());
        for (k, &i) in streams.iter().enumerate() {
            let (s, p) = (&self.plan.streams[i], &self.placements[i]);
            let sink = |r: &mut Recorder| -> StreamSink { r.take(i, phase) };
            if let Some(Make::Block(_)) = s.source.as_ref().map(|src| &src.make) {
                work.push(Work::Gen(self.gen_job(i, k, stop, phase)?));
                continue;
            }
            if let Some(Make::Ops(make)) = s.source.as_ref().map(|src| &src.make) {
                let source = match self.sources[i].take() {
                    Some(made) => made,
                    None => {
                        let ctx = self.ctx(i);
                        make(&ctx).map_err(|e| EngineError::Source {
                            stream: s.name.clone(),
                            path: p.path.clone(),
                            source: e,
                        })?
                    }
                };
                work.push(Work::Source(SourceJob {
                    index: k,
                    plan: s.clone(),
                    source,
                    sink: sink(&mut self.recorder),
                    stop,
                }));
                continue;
            }
            let f = open_stream(s, &p.path, self.opts.direct).map_err(|e| EngineError::Open {
                stream: s.name.clone(),
                path: p.path.clone(),
                source: e,
            })?;
            let kind = s.io.backend.unwrap_or(self.opts.backend);
            let mut opened = kind.open(f.into(), s.io.depth.max(1) as usize);
            let depth = opened.backend.queue_depth();
            let cursor = self.cursors[i].clone();
            let bufs = slot_buffers(&cursor, s.io_size as usize, depth, s.io.zeros);
            opened.warnings.extend(opened.backend.register(&bufs));
            let name = s.name.clone();
            self.warn(&name, opened.warnings);
            work.push(Work::Block(Job {
                index: k,
                plan: s.clone(),
                placement: p.clone(),
                backend: opened.backend,
                bufs,
                cursor,
                sink: sink(&mut self.recorder),
                stop,
                time_scale: self.opts.time_scale,
            }));
        }
        Ok(work)
    }

    /// The work of generated stream `i` (the `k`th of the phase): its generator (made if this is
    /// its first phase), its files opened with the stream's backend, slot buffers made and
    /// registered.
    fn gen_job(
        &mut self,
        i: usize,
        k: usize,
        stop: Stop,
        phase: u16,
    ) -> Result<GenJob, EngineError> {
        self.make_gen(i)?;
        let s = &self.plan.streams[i];
        let mut gen = self.gens[i].take().expect("made");
        let fds = gen.open(self.opts.direct).map_err(|e| EngineError::Open {
            stream: s.name.clone(),
            path: self.placements[i].path.clone(),
            source: e,
        })?;
        let kind = s.io.backend.unwrap_or(self.opts.backend);
        let mut opened = kind.open_all(fds, s.io.depth.max(1) as usize);
        let depth = opened.backend.queue_depth();
        let bufs = slot_buffers(&self.cursors[i], s.io_size as usize, depth, s.io.zeros);
        opened.warnings.extend(opened.backend.register(&bufs));
        let (submit, complete) = gen.batching();
        if submit > 0 || complete > 0 {
            opened.backend.batching(submit.max(1), complete.max(1));
        }
        self.warn(&s.name, opened.warnings);
        Ok(GenJob {
            index: k,
            stream: i,
            phase: self.plan.phases[phase as usize].name.clone(),
            gen,
            backend: opened.backend,
            bufs,
            sink: self.recorder.take(i, phase),
            stop,
        })
    }

    /// Keeps `warnings` of stream `name`, each once.
    fn warn(&mut self, name: &str, warnings: Vec<String>) {
        for w in warnings {
            let w = format!("{name}: {w}");
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
    }

    /// What the kernel refused while the streams' backends were opened (io_uring features),
    /// each once, naming the stream.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Ends the run: every sample, with the phases as they ran.
    pub fn finish(self, phases: Vec<PhaseRecord>) -> Result<super::SampleSet, EngineError> {
        Ok(self.recorder.finish(phases)?)
    }
}

/// What [`run`] produced.
#[derive(Debug)]
pub struct RunOutput {
    /// Each stream's samples, times since sampling began.
    pub streams: Vec<StreamSamples>,
    /// True when the run ended before every stream had its samples (a stop request).
    pub incomplete: bool,
    /// Whether sampling began at all.
    pub sampling_started: bool,
    /// Each real-time stream's buffer as it counted it: (stream name, tally).
    pub buffers: Vec<(String, Tally)>,
}

/// Runs the first stream phase of `plan` on `placements`, which must be ready (its `prepare`
/// phase is not run: a device probe reads what a device holds), samples in memory, calling
/// `tick` about every 20 ms; times are since sampling began.
pub fn run(
    plan: &Plan,
    placements: &[Placement],
    opts: EngineOptions,
    tick: impl FnMut(&Protocol),
) -> Result<RunOutput, EngineError> {
    let origin = Instant::now();
    let mut engine = Engine::new(plan, placements, opts, origin, Keep::Memory)?;
    let first = plan
        .phases
        .iter()
        .position(|p| matches!(p.step, Step::Streams { .. }))
        .ok_or_else(|| EngineError::NotStreams(plan.phases[0].name.clone()))?;
    let out = engine.run_phase(first, tick)?;
    let start = PhaseRecord::sampling_start_of(out.sampling_start_ns.unwrap_or(0), opts.time_scale);
    let record = PhaseRecord {
        sampling_start_s: Some(start),
        samples: out.samples,
        cpu_s: Some(out.cpu_s),
        ..PhaseRecord::stream(&plan.phases[first].name)
    };
    let mut records: Vec<PhaseRecord> = plan.phases[..first]
        .iter()
        .map(|p| PhaseRecord::stream(&p.name))
        .collect();
    records.push(record);
    let set = engine.finish(records)?;
    Ok(RunOutput {
        streams: set.load_phase(first)?,
        incomplete: out.incomplete,
        sampling_started: out.sampling_start_ns.is_some(),
        buffers: out.buffers,
    })
}
