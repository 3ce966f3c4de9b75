//! The recorder: where stream threads put their samples, in bounded memory. Each stream fills a
//! preallocated chunk; a full chunk goes to the recorder's writer thread, which appends it to
//! the stream's spill file (or keeps it, for a set held in memory) and hands the emptied chunk
//! back. A stream holds at most two chunks, so memory stays a few MiB per stream whatever the
//! number of samples, and a stream thread allocates nothing while it runs: handing a chunk
//! over, once per [`CHUNK`] samples, is its only extra work.

use super::sample::Sample;
use super::set::{PhaseRecord, SampleSet, SpillDir, StreamInfo};
use super::spill;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Samples per chunk (48 bytes each in a spill file, 56 in memory).
pub const CHUNK: usize = 8192;

/// Where a recorder keeps the samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// In memory (short runs: the device probe, tests).
    Memory,
    /// One spill file per stream in this directory (created; removed with the sample set).
    Spill(PathBuf),
}

/// A full chunk of stream `.0`.
type Chunk = (usize, Vec<Sample>);

/// What one stream thread writes its samples to.
pub struct StreamSink {
    index: usize,
    /// Index of the phase being sampled, stamped on every sample.
    pub phase: u16,
    buf: Vec<Sample>,
    tx: SyncSender<Chunk>,
    back: Receiver<Vec<Sample>>,
    /// Samples taken by this stream over the trial.
    pub count: u64,
}

impl StreamSink {
    /// Records one sample, stamped with the sink's phase; hands the chunk over when it is full.
    #[inline]
    pub fn push(&mut self, mut s: Sample) {
        s.phase = self.phase;
        self.buf.push(s);
        self.count += 1;
        if self.buf.len() == CHUNK {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        let full = std::mem::take(&mut self.buf);
        if self.tx.send((self.index, full)).is_ok() {
            // The writer sends a chunk back for each it takes; one spare waits from the start.
            self.buf = self.back.recv().unwrap_or_default();
        }
    }
}

/// Where the writer thread puts chunks.
enum Store {
    Memory(Vec<Vec<Sample>>),
    Spill(PathBuf, Vec<Option<BufWriter<std::fs::File>>>),
}

impl Store {
    fn append(&mut self, index: usize, chunk: &[Sample]) -> io::Result<()> {
        match self {
            Store::Memory(v) => {
                v[index].extend_from_slice(chunk);
                Ok(())
            }
            Store::Spill(dir, files) => {
                if files[index].is_none() {
                    let f = std::fs::File::create(spill::path(dir, index))?;
                    files[index] = Some(BufWriter::with_capacity(1 << 20, f));
                }
                let w = files[index].as_mut().expect("opened above");
                spill::write(w, chunk)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Store::Spill(_, files) = self {
            for w in files.iter_mut().flatten() {
                io::Write::flush(w)?;
            }
        }
        Ok(())
    }
}

/// The writer thread: multiplies each sample's times by `scale` (measured time on a
/// time-scaled emulated device -> the model's time), stores it, returns the chunk.
fn write_chunks(
    rx: Receiver<Chunk>,
    back: Vec<SyncSender<Vec<Sample>>>,
    mut store: Store,
    scale: f64,
) -> io::Result<Store> {
    let mut failed = None;
    for (index, mut chunk) in rx {
        if scale != 1.0 {
            for s in &mut chunk {
                s.issue_ns = (s.issue_ns as f64 * scale) as u64;
                s.latency_ns = (s.latency_ns as f64 * scale) as u64;
                s.lag_ns = (s.lag_ns as f64 * scale) as u64;
            }
        }
        if failed.is_none() {
            failed = store.append(index, &chunk).err();
        }
        chunk.clear();
        let _ = back[index].send(chunk);
    }
    match failed {
        Some(e) => Err(e),
        None => store.flush().map(|_| store),
    }
}

/// The samples of one trial, as its streams take them.
pub struct Recorder {
    streams: Vec<StreamInfo>,
    sinks: Vec<Option<StreamSink>>,
    writer: Option<JoinHandle<io::Result<Store>>>,
    spill: Option<SpillDir>,
}

impl Recorder {
    /// A recorder for `streams`, keeping samples as `keep` says, times multiplied by `scale`.
    pub fn new(streams: Vec<StreamInfo>, keep: Keep, scale: f64) -> io::Result<Recorder> {
        let n = streams.len();
        let (store, spill) = match keep {
            Keep::Memory => (Store::Memory(vec![Vec::new(); n]), None),
            Keep::Spill(dir) => {
                std::fs::create_dir_all(&dir)?;
                let guard = SpillDir(dir.clone());
                (
                    Store::Spill(dir, (0..n).map(|_| None).collect()),
                    Some(guard),
                )
            }
        };
        let (tx, rx) = sync_channel::<Chunk>(2 * n.max(1));
        let mut backs = Vec::with_capacity(n);
        let mut sinks = Vec::with_capacity(n);
        for index in 0..n {
            let (back_tx, back_rx) = sync_channel(2);
            back_tx
                .send(Vec::with_capacity(CHUNK))
                .expect("a fresh channel has room");
            backs.push(back_tx);
            sinks.push(Some(StreamSink {
                index,
                phase: 0,
                buf: Vec::with_capacity(CHUNK),
                tx: tx.clone(),
                back: back_rx,
                count: 0,
            }));
        }
        drop(tx);
        let writer = std::thread::Builder::new()
            .name("samples".into())
            .spawn(move || write_chunks(rx, backs, store, scale))?;
        Ok(Recorder {
            streams,
            sinks,
            writer: Some(writer),
            spill,
        })
    }

    /// Takes stream `i`'s sink for a phase, stamping `phase` on its samples.
    pub fn take(&mut self, i: usize, phase: u16) -> StreamSink {
        let mut s = self.sinks[i]
            .take()
            .expect("each stream runs once per phase");
        s.phase = phase;
        s
    }

    /// Gives stream `i`'s sink back after a phase.
    pub fn put(&mut self, i: usize, sink: StreamSink) {
        self.sinks[i] = Some(sink);
    }

    /// Samples taken so far by stream `i` (its sink must be back).
    pub fn count(&self, i: usize) -> u64 {
        self.sinks[i].as_ref().map_or(0, |s| s.count)
    }

    /// Writes out what the streams hold and returns every sample, with the phases as they ran.
    pub fn finish(mut self, phases: Vec<PhaseRecord>) -> io::Result<SampleSet> {
        for sink in self.sinks.iter_mut().flatten() {
            if !sink.buf.is_empty() {
                sink.hand_over();
            }
        }
        self.sinks.clear();
        let writer = self.writer.take().expect("finish runs once");
        let store = writer
            .join()
            .map_err(|_| io::Error::other("the samples writer thread panicked"))??;
        let streams = std::mem::take(&mut self.streams);
        Ok(match store {
            Store::Memory(v) => SampleSet::from_memory(streams, phases, v),
            Store::Spill(..) => {
                let dir = self.spill.take().expect("a spill store has its directory");
                SampleSet::spilled(streams, phases, dir)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Op;

    fn info(n: usize) -> Vec<StreamInfo> {
        (0..n)
            .map(|i| StreamInfo {
                name: format!("w{i}"),
                role: "w".into(),
                op: Op::Write,
            })
            .collect()
    }

    fn fill(r: &mut Recorder, per_stream: u64) {
        for i in 0..2 {
            let mut sink = r.take(i, 1);
            for k in 0..per_stream {
                sink.push(Sample {
                    offset: k,
                    issue_ns: k * 10,
                    latency_ns: 3,
                    ..Default::default()
                });
            }
            r.put(i, sink);
        }
    }

    #[test]
    fn spilled_samples_come_back_in_order_scaled_and_the_files_go() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("spill");
        let mut r = Recorder::new(info(2), Keep::Spill(dir.clone()), 2.0).unwrap();
        let n = 3 * CHUNK as u64 + 5;
        fill(&mut r, n);
        assert_eq!(r.count(1), n);
        let set = r.finish(Vec::new()).unwrap();
        assert!(dir.join("0000.samples").exists());
        let all = set.load().unwrap();
        assert_eq!(all[1].samples.len() as u64, n);
        let last = all[1].samples.last().unwrap();
        assert_eq!(
            (last.offset, last.issue_ns, last.latency_ns, last.phase),
            (n - 1, (n - 1) * 20, 6, 1)
        );
        assert!(all[0]
            .samples
            .windows(2)
            .all(|w| w[0].offset + 1 == w[1].offset));
        drop(set);
        assert!(!dir.exists(), "the spill directory goes with the set");
    }

    #[test]
    fn memory_sets_hold_the_same() {
        let mut r = Recorder::new(info(2), Keep::Memory, 1.0).unwrap();
        fill(&mut r, CHUNK as u64 + 1);
        let set = r.finish(Vec::new()).unwrap();
        let all = set.load().unwrap();
        assert_eq!(all[0].samples.len(), CHUNK + 1);
        assert_eq!(all[0].samples[CHUNK].issue_ns, CHUNK as u64 * 10);
    }
}
