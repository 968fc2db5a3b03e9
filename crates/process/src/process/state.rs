//! A cluster process's state directory (`mcfed cluster --state DIR`): the
//! member is journaled there, and a process started on a directory that
//! holds a journal resumes from it.
//!
//! * **First start** (empty directory): the member is built as usual (the
//!   jobs present at start submitted and dispatched), a new lineage is
//!   drawn, and a snapshot of it all is written before the process serves
//!   anything.
//! * **Restart**: the snapshot and the records after it are replayed (a
//!   torn last record is dropped; damage is refused, or salvaged with
//!   `--salvage`), the member is rebuilt from them
//!   ([`Member::restore`]) at the emulated time the journal's clock says
//!   it is now, and a fresh snapshot replaces the journal. Emulated time
//!   zero, the lineage, every job and every numbering come from the
//!   journal.
//! * While it runs, every input's records are appended with group commit
//!   before anything it produced leaves ([`JournalDurability`]); the
//!   journal is compacted once it outgrows [`COMPACT_MIN_BYTES`] and the
//!   last snapshot.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcfed_actors::{AfterDurable, Durability};
use mcfed_federation::{
    DurableState, GroupState, JOURNAL_FORMAT, JournalRecord, Member, MemberSpec, ProcessFacts,
};
use mcfed_journal::{Recovery, StateDir, Writer};
use mcfed_protocol::SimTime;

use super::{ClusterOptions, NodeError};

/// A journal smaller than this is never compacted (64 MiB: about half a
/// million job changes, replayed in well under a second). Compaction
/// writes the whole state, so it runs once the journal has also grown past
/// the last snapshot: its cost stays proportional to what it saves.
pub const COMPACT_MIN_BYTES: u64 = 64 << 20;

/// The member a process runs, and what it knows of its own state.
pub(super) struct Prepared {
    /// The member, built or restored.
    pub(super) member: Member,
    /// The states of the initial job groups (empty after a restart).
    pub(super) initial_states: Vec<GroupState>,
    /// The lineage and emulated time zero.
    pub(super) facts: ProcessFacts,
    /// Whether emulated time zero is settled (given, or from the journal);
    /// if not, the process takes its peers'.
    pub(super) epoch_pinned: bool,
    /// The journal, with a state directory.
    pub(super) durability: Option<Arc<JournalDurability>>,
}

/// Milliseconds since the Unix epoch, now.
pub(super) fn wall_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

/// Emulated time now, for a federation whose time zero is `epoch_ms`
/// running `speed` times faster than the wall clock.
fn emulated_now(epoch_ms: u64, speed: f64) -> SimTime {
    let elapsed = Duration::from_millis(wall_now_ms().saturating_sub(epoch_ms));
    SimTime::from(elapsed.mul_f64(speed.max(1e-6)))
}

/// Builds or restores the member of `spec` as `options` say; with a state
/// directory, opens it and starts its writer (whose failure is reported
/// through `on_failure`: the process must stop).
pub(super) fn prepare(
    options: &ClusterOptions,
    spec: MemberSpec<'_>,
    on_failure: impl Fn(String) + Send + 'static,
) -> Result<Prepared, NodeError> {
    let Some(dir) = &options.state else {
        let (member, initial_states) = Member::build(spec)?;
        return Ok(Prepared {
            member,
            initial_states,
            facts: ProcessFacts {
                lineage: mcfed_transport::new_incarnation(),
                epoch_unix_ms: options.epoch_unix_ms.unwrap_or_else(wall_now_ms),
            },
            epoch_pinned: options.epoch_unix_ms.is_some(),
            durability: None,
        });
    };
    let recovery = if options.salvage {
        Recovery::Salvage
    } else {
        Recovery::Refuse
    };
    let (mut state_dir, recovered) =
        StateDir::open_with::<DurableState, JournalRecord>(dir, JOURNAL_FORMAT, recovery)?;
    state_dir.keep_journals(options.keep_journals);
    let fresh = recovered.snapshot.is_none();
    let (member, initial_states, facts) = match recovered.snapshot {
        None => first_start(options, spec)?,
        Some(mut state) => {
            for record in recovered.records {
                state.apply(record);
            }
            if let Some(salvage) = &recovered.salvage {
                salvaged(dir, salvage, &mut state);
            }
            resume(options, spec, dir, state)?
        }
    };
    let bytes = mcfed_journal::encode_snapshot(&member.snapshot_view(Some(facts)))
        .map_err(|error| NodeError::State(format!("the snapshot does not encode: {error}")))?;
    state_dir.write_snapshot(&bytes)?;
    let writer = Writer::start(state_dir, on_failure)?;
    Ok(Prepared {
        member,
        initial_states,
        facts,
        // A first start without --epoch-ms may still take its peers'.
        epoch_pinned: !fresh || options.epoch_unix_ms.is_some(),
        durability: Some(Arc::new(JournalDurability {
            writer,
            facts: Mutex::new(facts),
        })),
    })
}

/// After a salvage: says what was lost and kept, and moves every
/// numbering past what the lost records can have handed out (a journal
/// cut inside its header held at most what a journal grows to before it
/// is compacted: twice the larger of [`COMPACT_MIN_BYTES`] and the
/// snapshot).
fn salvaged(dir: &Path, salvage: &mcfed_journal::Salvage, state: &mut DurableState) {
    let lost = salvage.records_lost_at_most().unwrap_or_else(|| {
        let snapshot = std::fs::metadata(dir.join("snapshot")).map_or(0, |meta| meta.len());
        COMPACT_MIN_BYTES.max(snapshot).saturating_mul(2)
            / mcfed_journal::format::MIN_RECORD_FRAME as u64
    });
    state.skip_numbers(lost);
    tracing::warn!(
        what = %salvage.describe(),
        skipped = lost,
        next_job_id = state.next_job_id.max(state.next_source_id),
        "the journal was salvaged: every id, forward and update number moves past what the lost records can have handed out"
    );
}

/// A first start on an empty state directory.
fn first_start(
    options: &ClusterOptions,
    spec: MemberSpec<'_>,
) -> Result<(Member, Vec<GroupState>, ProcessFacts), NodeError> {
    let (mut member, initial_states) = Member::build(spec)?;
    member.enable_journal();
    let facts = ProcessFacts {
        lineage: mcfed_transport::new_incarnation(),
        epoch_unix_ms: options.epoch_unix_ms.unwrap_or_else(wall_now_ms),
    };
    tracing::info!(cluster = %spec.config.name, lineage = facts.lineage, "new state directory");
    Ok((member, initial_states, facts))
}

/// A restart from what the state directory kept.
fn resume(
    options: &ClusterOptions,
    spec: MemberSpec<'_>,
    dir: &Path,
    state: DurableState,
) -> Result<(Member, Vec<GroupState>, ProcessFacts), NodeError> {
    if let Some(cluster) = &state.cluster {
        if cluster != &spec.config.name {
            return Err(NodeError::State(format!(
                "{}: this state directory is cluster `{cluster}`'s, not `{}`'s",
                dir.display(),
                spec.config.name
            )));
        }
    }
    let facts = state.process.unwrap_or_else(|| ProcessFacts {
        lineage: mcfed_transport::new_incarnation(),
        epoch_unix_ms: options.epoch_unix_ms.unwrap_or_else(wall_now_ms),
    });
    if let Some(given) = options
        .epoch_unix_ms
        .filter(|&given| given != facts.epoch_unix_ms)
    {
        tracing::warn!(cluster = %spec.config.name, given, journal = facts.epoch_unix_ms, "--epoch-ms differs from the journal's emulated time zero: the journal's is kept");
    }
    let now = emulated_now(facts.epoch_unix_ms, options.speed);
    let jobs = state.jobs.len() + state.sources.len();
    let member = Member::restore(spec, state, now)?;
    tracing::info!(cluster = %spec.config.name, lineage = facts.lineage, jobs, at = %now, "resumed from the state directory");
    Ok((member, Vec::new(), facts))
}

/// The journal of a running process, as its member actor uses it.
pub(super) struct JournalDurability {
    writer: Writer<JournalRecord>,
    facts: Mutex<ProcessFacts>,
}

impl Durability for JournalDurability {
    fn write(&self, records: Vec<JournalRecord>, after: AfterDurable) {
        self.writer.append(records, after);
    }

    fn wants_snapshot(&self) -> bool {
        self.writer.wants_snapshot(COMPACT_MIN_BYTES)
    }

    /// Encodes the member's state here, in the member's thread, straight
    /// from the borrowed member ([`Member::snapshot_view`]: each job image
    /// made, encoded and dropped in turn), and hands the writer only the
    /// bytes. A copy of the whole state first (a million jobs are hundreds
    /// of megabytes and seconds of it) held the member's thread long
    /// enough to slow every submission and to near the links' idle
    /// timeout (docs/performance.md).
    fn snapshot(&self, member: &Member) {
        let facts = self.facts.lock().ok().map(|facts| *facts);
        let encoded = mcfed_journal::encode_snapshot(&member.snapshot_view(facts))
            .map_err(|error| error.to_string());
        self.writer.snapshot_with(Box::new(move || encoded));
    }
}

impl JournalDurability {
    /// Records emulated time zero taken from a peer.
    pub(super) fn adopt_epoch(&self, epoch_unix_ms: u64) {
        let facts = match self.facts.lock() {
            Ok(mut facts) => {
                facts.epoch_unix_ms = epoch_unix_ms;
                *facts
            }
            Err(_) => return,
        };
        self.writer
            .append(vec![JournalRecord::Process(facts)], Box::new(|| {}));
    }

    /// What the writer did so far (for logs).
    pub(super) fn stats(&self) -> mcfed_journal::WriterStats {
        self.writer.stats()
    }
}
