//! The writer: one thread that appends records with *group commit*.
//!
//! Callers hand it records with what to do once they are durable
//! ([`Writer::append`]). The thread takes everything queued since its last
//! sync, writes it in one `write`, syncs the file once (`fdatasync`), and
//! only then runs the callbacks, in the order the records were handed in —
//! so an acknowledgement or a message never leaves before the records it
//! depends on are on disk, and under load one sync covers many records. A
//! callback handed in with no records still waits for the records before
//! it, so callbacks keep their order.
//!
//! Snapshots ([`Writer::snapshot`]) go through the same thread, in order:
//! records handed in before a snapshot are in the journal it replaces,
//! records after it in the new one. The snapshot is encoded and written on
//! a thread of its own while records after it go on being appended (and
//! their callbacks run) as before; once it is on disk it is put in place
//! and those records copied into the new journal ([`crate::compact`]).

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde::Serialize;

use crate::compact::SnapshotFile;
use crate::dir::{JournalError, StateDir};
use crate::format::{self, HEADER_LEN};

/// What to run once records are durable.
pub type AfterDurable = Box<dyn FnOnce() + Send>;

enum Command<R> {
    Append {
        records: Vec<R>,
        after: AfterDurable,
    },
    Snapshot {
        encode: Encode,
    },
    /// The snapshot of this generation is written (or failed).
    Written {
        generation: u64,
    },
    Stop,
}

/// What makes a snapshot's bytes.
type Encode = Box<dyn FnOnce() -> Result<Vec<u8>, String> + Send>;

/// A snapshot being written on its own thread: there, its file and size
/// once synced.
struct InFlight {
    generation: u64,
    thread: JoinHandle<Result<(SnapshotFile, u64), JournalError>>,
}

/// Counts of what the writer did, for benchmarks and logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Records written.
    pub records: u64,
    /// Syncs (`fdatasync`) done.
    pub syncs: u64,
    /// Snapshots written.
    pub snapshots: u64,
}

#[derive(Default)]
struct Shared {
    tail_bytes: AtomicU64,
    snapshot_bytes: AtomicU64,
    records: AtomicU64,
    syncs: AtomicU64,
    snapshots: AtomicU64,
    /// A snapshot was asked for and not written yet.
    snapshot_queued: std::sync::atomic::AtomicBool,
    failure: Mutex<Option<String>>,
}

/// The handle of the writer thread of one state directory.
pub struct Writer<R> {
    commands: mpsc::Sender<Command<R>>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl<R: Serialize + Send + 'static> Writer<R> {
    /// Starts the writer of `dir`, appending to its journal file. If
    /// writing fails, `on_failure` is called with why (the process should
    /// stop: nothing more can be made durable) and later callbacks never
    /// run.
    pub fn start(
        dir: StateDir,
        on_failure: impl Fn(String) + Send + 'static,
    ) -> Result<Writer<R>, JournalError> {
        let file = dir.open_journal()?;
        let shared = Arc::new(Shared::default());
        let tail = file.metadata().map_or(0, |meta| meta.len());
        shared.tail_bytes.store(tail, Ordering::Relaxed);
        let (commands, receiver) = mpsc::channel();
        let thread_shared = shared.clone();
        let wake = commands.clone();
        let thread = std::thread::Builder::new()
            .name("mcfed-journal".to_owned())
            .spawn(move || {
                let mut state = Thread {
                    dir,
                    file,
                    journal_len: tail,
                    shared: thread_shared,
                    buffer: Vec::with_capacity(1 << 16),
                    waiting: Vec::new(),
                    wake,
                    in_flight: None,
                    since: Vec::new(),
                };
                if let Err(error) = state.run(&receiver) {
                    let why = error.to_string();
                    tracing::error!(%why, "the journal could not be written");
                    if let Ok(mut failure) = state.shared.failure.lock() {
                        *failure = Some(why.clone());
                    }
                    on_failure(why);
                }
            })
            .map_err(|source| JournalError::Io {
                path: "journal writer thread".into(),
                source,
            })?;
        Ok(Writer {
            commands,
            shared,
            thread: Some(thread),
        })
    }

    /// Appends `records`; `after` runs once they (and everything handed in
    /// before) are durable.
    pub fn append(&self, records: Vec<R>, after: AfterDurable) {
        let _ = self.commands.send(Command::Append { records, after });
    }

    /// Replaces the journal by a snapshot (encoded), after everything
    /// handed in before.
    pub fn snapshot(&self, bytes: Vec<u8>) {
        self.snapshot_with(Box::new(move || Ok(bytes)));
    }

    /// Replaces the journal by the snapshot `encode` makes, away from the
    /// caller's thread (so the caller does not pay for encoding a large
    /// state) and from the records' (which go on being made durable while
    /// it is written), after everything handed in before.
    pub fn snapshot_with(&self, encode: Encode) {
        self.shared.snapshot_queued.store(true, Ordering::Relaxed);
        let _ = self.commands.send(Command::Snapshot { encode });
    }

    /// The compaction policy: whether the journal since the last snapshot
    /// has grown past `min_bytes` and past the last snapshot's size (so
    /// compaction costs at most about as much as what it saves), and no
    /// snapshot is queued already.
    pub fn wants_snapshot(&self, min_bytes: u64) -> bool {
        let tail = self.tail_bytes();
        tail > min_bytes
            && tail > self.snapshot_bytes()
            && !self.shared.snapshot_queued.load(Ordering::Relaxed)
    }

    /// Bytes in the journal file since the last snapshot.
    pub fn tail_bytes(&self) -> u64 {
        self.shared.tail_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the last snapshot written.
    pub fn snapshot_bytes(&self) -> u64 {
        self.shared.snapshot_bytes.load(Ordering::Relaxed)
    }

    /// What the writer did so far.
    pub fn stats(&self) -> WriterStats {
        WriterStats {
            records: self.shared.records.load(Ordering::Relaxed),
            syncs: self.shared.syncs.load(Ordering::Relaxed),
            snapshots: self.shared.snapshots.load(Ordering::Relaxed),
        }
    }

    /// Why writing failed, if it did.
    pub fn failure(&self) -> Option<String> {
        self.shared
            .failure
            .lock()
            .ok()
            .and_then(|failure| failure.clone())
    }

    /// Writes and syncs what is queued, runs its callbacks, and stops the
    /// thread.
    pub fn close(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let _ = self.commands.send(Command::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl<R> Drop for Writer<R> {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The writer thread's state.
struct Thread<R> {
    dir: StateDir,
    file: File,
    /// Bytes in the journal file.
    journal_len: u64,
    shared: Arc<Shared>,
    /// Encoded frames not yet written.
    buffer: Vec<u8>,
    /// Callbacks waiting for the buffer to be durable.
    waiting: Vec<AfterDurable>,
    /// Where a snapshot's thread says it is written.
    wake: mpsc::Sender<Command<R>>,
    /// The snapshot being written, if one is.
    in_flight: Option<InFlight>,
    /// The frames appended since the snapshot being written was taken:
    /// the journal that follows it.
    since: Vec<u8>,
}

impl<R: Serialize + Send + 'static> Thread<R> {
    fn run(&mut self, receiver: &mpsc::Receiver<Command<R>>) -> Result<(), JournalError> {
        while let Ok(first) = receiver.recv() {
            let mut next = Some(first);
            let mut stop = false;
            // Everything queued now goes in one group.
            while let Some(command) = next.take() {
                match command {
                    Command::Append { records, after } => {
                        self.encode(&records)?;
                        self.waiting.push(after);
                    }
                    Command::Snapshot { encode } => {
                        self.commit()?;
                        self.install()?;
                        self.begin(encode)?;
                    }
                    Command::Written { generation } => {
                        if self
                            .in_flight
                            .as_ref()
                            .is_some_and(|in_flight| in_flight.generation == generation)
                        {
                            self.commit()?;
                            self.install()?;
                        }
                    }
                    Command::Stop => stop = true,
                }
                if stop || self.waiting.len() >= 65_536 {
                    break;
                }
                next = receiver.try_recv().ok();
            }
            self.commit()?;
            if stop {
                break;
            }
        }
        self.commit()?;
        self.install()
    }

    /// Takes a snapshot of the journal as it stands (everything before it
    /// durable) and has `encode` make it and its file written on a thread
    /// of its own, which wakes this one when done.
    fn begin(&mut self, encode: Encode) -> Result<(), JournalError> {
        let file = self.dir.begin_snapshot(self.journal_len);
        let generation = file.generation();
        let wake = self.wake.clone();
        let thread = std::thread::Builder::new()
            .name("mcfed-snapshot".to_owned())
            .spawn(move || {
                let written = encode()
                    .map_err(|why| JournalError::Io {
                        path: file.path().to_owned(),
                        source: std::io::Error::other(format!(
                            "the snapshot does not encode: {why}"
                        )),
                    })
                    .and_then(|bytes| file.write(&bytes))
                    .map(|len| (file, len));
                let _ = wake.send(Command::Written { generation });
                written
            })
            .map_err(|source| JournalError::Io {
                path: "journal snapshot thread".into(),
                source,
            })?;
        self.in_flight = Some(InFlight { generation, thread });
        Ok(())
    }

    /// Waits for the snapshot being written, if one is, and puts it in
    /// place with the records appended since it was taken (committed: call
    /// [`Thread::commit`] first).
    fn install(&mut self) -> Result<(), JournalError> {
        let Some(in_flight) = self.in_flight.take() else {
            return Ok(());
        };
        let (file, bytes) = in_flight.thread.join().map_err(|_| JournalError::Io {
            path: self.dir.path().join("snapshot.new"),
            source: std::io::Error::other("the thread writing the snapshot panicked"),
        })??;
        let since = std::mem::take(&mut self.since);
        self.file = self.dir.install_snapshot(file, &since)?;
        self.journal_len = (HEADER_LEN + since.len()) as u64;
        self.shared
            .tail_bytes
            .store(self.journal_len, Ordering::Relaxed);
        self.shared.snapshot_bytes.store(bytes, Ordering::Relaxed);
        self.shared.snapshots.fetch_add(1, Ordering::Relaxed);
        self.shared.snapshot_queued.store(false, Ordering::Relaxed);
        Ok(())
    }

    fn encode(&mut self, records: &[R]) -> Result<(), JournalError> {
        for record in records {
            // Encoded straight into the buffer, after room for the frame's
            // header, which is filled in once the payload's size is known.
            let start = self.buffer.len();
            self.buffer
                .extend_from_slice(&[0; format::FRAME_HEADER_LEN]);
            let encoded = postcard::to_extend(record, std::mem::take(&mut self.buffer));
            match encoded {
                Ok(buffer) => self.buffer = buffer,
                Err(error) => {
                    return Err(JournalError::Io {
                        path: self.dir.journal_path(),
                        source: std::io::Error::other(format!("a record does not encode: {error}")),
                    });
                }
            }
            let payload = self.buffer.len() - start - format::FRAME_HEADER_LEN;
            if payload == 0 || payload > format::MAX_RECORD {
                // Written, it could not be read back: the process stops
                // before anything that depends on it is acknowledged.
                return Err(JournalError::Io {
                    path: self.dir.journal_path(),
                    source: std::io::Error::other(format!(
                        "a record of {payload} bytes cannot be journaled (1 to {} bytes)",
                        format::MAX_RECORD
                    )),
                });
            }
            format::fill_frame_header(&mut self.buffer[start..]);
        }
        self.shared
            .records
            .fetch_add(records.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Writes and syncs the buffer (if anything is in it), then runs the
    /// callbacks waiting for it.
    fn commit(&mut self) -> Result<(), JournalError> {
        if !self.buffer.is_empty() {
            let path = self.dir.journal_path();
            let io = |source| JournalError::Io {
                path: path.clone(),
                source,
            };
            self.file.write_all(&self.buffer).map_err(io)?;
            self.file.sync_data().map_err(io)?;
            if self.in_flight.is_some() {
                self.since.extend_from_slice(&self.buffer);
            }
            self.journal_len += self.buffer.len() as u64;
            self.shared
                .tail_bytes
                .store(self.journal_len, Ordering::Relaxed);
            self.shared.syncs.fetch_add(1, Ordering::Relaxed);
            self.buffer.clear();
        }
        for after in self.waiting.drain(..) {
            after();
        }
        Ok(())
    }
}
