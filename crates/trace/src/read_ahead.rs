//! A workload read ahead on a thread of its own: the trace is read, parsed
//! and mapped in batches while the engine runs, so on a machine with a core
//! to spare a replay's time is the engine's, not the engine's plus the
//! reader's. The order of the submissions is the trace's, whatever the
//! threads do; what the stream reports (skipped lines, the header, the
//! first error) is as of the end of the batch being taken, which is the
//! same in every run.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

use crate::swf::SwfError;
use crate::workload::{Skipped, Submission, WorkloadSpec, WorkloadStream};

/// Submissions per batch: large enough that handing a batch over costs
/// nothing per job, small enough that a short run reads little past its end.
const BATCH: usize = 1024;

/// Batches read and not yet taken (memory: a few thousand submissions).
const BATCHES_AHEAD: usize = 4;

/// A batch of submissions and what the stream reported once it was read.
struct Batch {
    submissions: Vec<Submission>,
    skipped: Skipped,
    /// The header comments: in the first batch only.
    header: Option<Vec<(String, String)>>,
    /// The first malformed line, from the batch in which it was met on.
    first_error: Option<String>,
}

/// Where the batches come from.
enum Source {
    /// The reading thread.
    Thread(Receiver<Batch>),
    /// This thread, when no other could be started.
    Inline(Box<(WorkloadStream, Batcher)>),
}

/// A workload's submissions, read by a thread of its own.
pub struct ReadAhead {
    spec: Arc<WorkloadSpec>,
    source: Source,
    current: std::vec::IntoIter<Submission>,
    skipped: Skipped,
    header: Vec<(String, String)>,
    first_error: Option<String>,
}

impl ReadAhead {
    /// Opens `spec`'s trace (errors now, on this thread) and starts reading
    /// it.
    pub fn open(spec: Arc<WorkloadSpec>) -> Result<Self, SwfError> {
        let stream = WorkloadStream::open(Arc::clone(&spec))?;
        let (sender, batches) = sync_channel(BATCHES_AHEAD);
        let source = match thread::Builder::new()
            .name(format!("read {}", spec.name))
            .spawn(move || read(stream, &sender))
        {
            Ok(_) => Source::Thread(batches),
            Err(error) => {
                // No thread to spare: read on this one, the same way.
                tracing::debug!(%error, "workload read on the engine's thread");
                return Self::open_inline(spec);
            }
        };
        Ok(Self::with_source(spec, source))
    }

    /// Opens `spec`'s trace to be read on the caller's thread, batch by
    /// batch as it is taken.
    fn open_inline(spec: Arc<WorkloadSpec>) -> Result<Self, SwfError> {
        let stream = WorkloadStream::open(Arc::clone(&spec))?;
        let source = Source::Inline(Box::new((stream, Batcher::default())));
        Ok(Self::with_source(spec, source))
    }

    fn with_source(spec: Arc<WorkloadSpec>, source: Source) -> Self {
        let mut stream = ReadAhead {
            spec,
            source,
            current: Vec::new().into_iter(),
            skipped: Skipped::default(),
            header: Vec::new(),
            first_error: None,
        };
        stream.refill();
        stream
    }

    /// The next submission, without taking it.
    pub fn peek(&self) -> Option<&Submission> {
        self.current.as_slice().first()
    }

    /// Takes the next batch when the current one is used up (so that
    /// [`ReadAhead::peek`] sees the next submission whenever there is one).
    fn refill(&mut self) {
        while self.current.as_slice().is_empty() {
            let Some(batch) = self.next_batch() else {
                return;
            };
            self.skipped = batch.skipped;
            if let Some(header) = batch.header {
                self.header = header;
            }
            if batch.first_error.is_some() {
                self.first_error = batch.first_error;
            }
            self.current = batch.submissions.into_iter();
        }
    }

    /// The workload's specification.
    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// Jobs skipped, as of the batch being taken.
    pub fn skipped(&self) -> Skipped {
        self.skipped
    }

    /// The trace's header comments.
    pub fn header(&self) -> &[(String, String)] {
        &self.header
    }

    /// The first malformed line, if any.
    pub fn first_error(&self) -> Option<&str> {
        self.first_error.as_deref()
    }

    /// The next batch, `None` after the last.
    fn next_batch(&mut self) -> Option<Batch> {
        match &mut self.source {
            Source::Thread(batches) => batches.recv().ok(),
            Source::Inline(inline) => {
                let (stream, batcher) = &mut **inline;
                batcher.next(stream)
            }
        }
    }
}

impl Iterator for ReadAhead {
    type Item = Submission;

    fn next(&mut self) -> Option<Submission> {
        if self.current.as_slice().len() > 1 {
            return self.current.next();
        }
        // The batch's last: the next batch is taken first, so that `peek`
        // sees it. Either way the submission is moved once, straight to
        // the caller (a move before a call that may unwind is a copy more).
        let mut last = std::mem::replace(&mut self.current, Vec::new().into_iter());
        self.refill();
        last.next()
    }
}

/// Cuts a stream into batches.
#[derive(Default)]
struct Batcher {
    started: bool,
    error_sent: bool,
    done: bool,
}

impl Batcher {
    /// The next batch of `stream`, `None` once the last was given.
    fn next(&mut self, stream: &mut WorkloadStream) -> Option<Batch> {
        if self.done {
            return None;
        }
        // Sized once: collected, the batch grew by doubling (a realloc
        // and a copy of its submissions each time).
        let mut submissions = Vec::with_capacity(BATCH);
        submissions.extend(stream.by_ref().take(BATCH));
        self.done = submissions.len() < BATCH;
        let first_error = match stream.first_error() {
            Some(error) if !self.error_sent => {
                self.error_sent = true;
                Some(error.to_owned())
            }
            _ => None,
        };
        let header = (!self.started).then(|| stream.header().fields.clone());
        self.started = true;
        Some(Batch {
            submissions,
            skipped: stream.skipped(),
            header,
            first_error,
        })
    }
}

/// Reads `stream` to its end in batches, until the receiver is gone.
fn read(mut stream: WorkloadStream, sender: &SyncSender<Batch>) {
    let mut batcher = Batcher::default();
    while let Some(batch) = batcher.next(&mut stream) {
        if sender.send(batch).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn spec(dir: &tempfile::TempDir, lines: &str, limit: Option<u64>) -> Arc<WorkloadSpec> {
        let path = dir.path().join("t.swf");
        std::fs::File::create(&path)
            .expect("test input")
            .write_all(lines.as_bytes())
            .expect("test input");
        Arc::new(WorkloadSpec {
            name: "t".into(),
            swf: path,
            format: crate::workload::TraceFormat::Swf,
            cluster: mcfed_protocol::ClusterName::new("c1").expect("test input"),
            queue: "normal".into(),
            queue_map: Vec::new(),
            partition_map: Vec::new(),
            user: "u{uid}".into(),
            limit,
            time_scale: 1.0,
        })
    }

    /// A trace of `jobs` one-slot jobs, every tenth without a run time and
    /// line 5 malformed.
    fn trace(jobs: usize) -> String {
        let mut text = String::from("; MaxProcs: 4\n");
        for number in 1..=jobs {
            if number == 5 {
                text.push_str("5 x\n");
                continue;
            }
            let run = if number % 10 == 0 { -1 } else { 60 };
            text.push_str(&format!(
                "{number} {number} 0 {run} 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1\n"
            ));
        }
        text
    }

    #[test]
    fn yields_what_the_stream_yields_in_order_with_its_report() {
        let dir = tempfile::tempdir().expect("test input");
        for jobs in [0, 1, BATCH - 1, BATCH, 3 * BATCH + 7] {
            let spec = spec(&dir, &trace(jobs), None);
            let expected: Vec<String> = WorkloadStream::open(Arc::clone(&spec))
                .expect("test input")
                .map(|submission| submission.spec.name.to_string())
                .collect();
            let mut stream = WorkloadStream::open(Arc::clone(&spec)).expect("test input");
            stream.by_ref().for_each(drop);
            let opened = [
                ReadAhead::open(Arc::clone(&spec)).expect("test input"),
                ReadAhead::open_inline(Arc::clone(&spec)).expect("test input"),
            ];
            for mut ahead in opened {
                let got: Vec<String> = ahead
                    .by_ref()
                    .map(|submission| submission.spec.name.to_string())
                    .collect();
                assert_eq!(got, expected, "{jobs} jobs");
                assert_eq!(ahead.skipped(), stream.skipped(), "{jobs} jobs");
                assert_eq!(ahead.first_error(), stream.first_error());
                assert_eq!(ahead.header(), stream.header().fields.as_slice());
            }
        }
    }

    #[test]
    fn limit_and_an_early_drop_end_the_reader() {
        let dir = tempfile::tempdir().expect("test input");
        let spec = spec(&dir, &trace(5 * BATCH), Some(100));
        let ahead = ReadAhead::open(Arc::clone(&spec)).expect("test input");
        // 100 job lines read (the malformed one is not a job): ten of them
        // without a run time.
        assert_eq!(ahead.count(), 100 - 10);
        // Taking one and dropping the rest must not hang.
        let spec = spec_without_limit(&spec);
        let mut ahead = ReadAhead::open(spec).expect("test input");
        assert!(ahead.next().is_some());
        drop(ahead);
    }

    fn spec_without_limit(spec: &WorkloadSpec) -> Arc<WorkloadSpec> {
        Arc::new(WorkloadSpec {
            limit: None,
            ..spec.clone()
        })
    }

    #[test]
    fn a_missing_trace_is_an_error_at_open() {
        let dir = tempfile::tempdir().expect("test input");
        let mut spec = WorkloadSpec::clone(&spec(&dir, "", None));
        spec.swf = dir.path().join("missing.swf");
        assert!(ReadAhead::open(Arc::new(spec)).is_err());
    }
}
