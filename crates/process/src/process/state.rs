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
    SnapshotBuilder,
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
        durability: Some(Arc::new(JournalDurability::new(writer, facts))),
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
    /// The snapshot being made, a slice between inputs.
    building: Mutex<Option<Building>>,
}

/// A snapshot being made, and how many of the jobs the member held when
/// it began may be encoded at its next input.
struct Building {
    builder: SnapshotBuilder,
    credit: usize,
}

/// Jobs a snapshot encodes for each record the member writes meanwhile
/// (besides those records): a snapshot of a million jobs is done within
/// half a million records, at about 2 µs of the member's thread each.
const SNAPSHOT_JOBS_PER_RECORD: usize = 2;

/// Jobs a snapshot encodes at an input, at least.
const SNAPSHOT_SLICE_MIN: usize = 256;

impl Durability for JournalDurability {
    fn write(&self, records: Vec<JournalRecord>, after: AfterDurable) {
        if let Ok(mut building) = self.building.lock() {
            if let Some(building) = building.as_mut() {
                if let Err(error) = building.builder.note(&records) {
                    self.fail_snapshot(error.to_string());
                }
                building.credit += records.len() * SNAPSHOT_JOBS_PER_RECORD;
            }
        }
        self.writer.append(records, after);
    }

    fn wants_snapshot(&self) -> bool {
        self.building
            .lock()
            .is_ok_and(|building| building.is_some())
            || self.writer.wants_snapshot(COMPACT_MIN_BYTES)
    }

    /// Encodes the next slice of the snapshot from the borrowed member,
    /// here on the member's thread, paced by the records written since
    /// (each job made, encoded and dropped in turn: no copy of the
    /// state), and once every job is encoded hands the writer the rest
    /// (keeping each job's newest entry, joining the bytes, writing them:
    /// on a thread of the writer's, [`SnapshotBuilder::finish_later`]).
    /// Made at once, a million jobs held the member's thread for over a
    /// second, slowing every submission and nearing the links' idle
    /// timeout (docs/performance.md).
    fn snapshot(&self, member: &Member) {
        let Ok(mut building) = self.building.lock() else {
            return;
        };
        let current = building.get_or_insert_with(|| {
            tracing::info!(
                jobs = member.node().cluster().job_count(),
                "a snapshot begins: the journal is compacted"
            );
            Building {
                builder: SnapshotBuilder::begin(member),
                credit: 0,
            }
        });
        let budget = std::mem::take(&mut current.credit).max(SNAPSHOT_SLICE_MIN);
        match current.builder.advance(member, budget) {
            Ok(false) => return,
            Ok(true) => {}
            Err(error) => {
                *building = None;
                self.fail_snapshot(error.to_string());
                return;
            }
        }
        let Some(Building { builder, .. }) = building.take() else {
            return;
        };
        let facts = self.facts.lock().ok().map(|facts| *facts);
        // Each job's newest entry is kept, and the whole joined, on the
        // thread that writes the snapshot, not the member's.
        match builder.finish_later(member, facts) {
            Ok(join) => self
                .writer
                .snapshot_with(Box::new(move || join().map_err(|error| error.to_string()))),
            Err(error) => self.fail_snapshot(error.to_string()),
        }
    }
}

impl JournalDurability {
    /// The journal of `writer`, for a process of `facts`.
    pub(super) fn new(writer: Writer<JournalRecord>, facts: ProcessFacts) -> JournalDurability {
        JournalDurability {
            writer,
            facts: Mutex::new(facts),
            building: Mutex::new(None),
        }
    }

    /// A snapshot could not be encoded: the writer fails with why (the
    /// process stops rather than go on with a journal it cannot compact).
    fn fail_snapshot(&self, why: String) {
        self.writer.snapshot_with(Box::new(move || Err(why)));
    }

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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcfed_cluster::{ClusterConfig, HostConfig, QueueConfig};
    use mcfed_federation::Effects;
    use mcfed_protocol::{ClusterName, JobSpec, QueueName};

    use super::*;

    /// A journaled one-slot cluster holding `jobs` jobs (one runs).
    fn member(jobs: usize) -> Member {
        let mut config = ClusterConfig::new(ClusterName::new("C").expect("valid"));
        config.hosts = vec![HostConfig::new("h", 1)];
        config.queues = vec![QueueConfig::new(QueueName::new("normal").expect("valid"))];
        let spec = MemberSpec {
            config: &config,
            forwarder: None,
            subscribers: &[],
            collectors: &[],
            initial_jobs: &[],
        };
        let (mut member, _) = Member::build(spec).expect("builds");
        member.enable_journal();
        let mut effects = Effects::default();
        for n in 0..jobs {
            let spec = JobSpec::simple(format!("job{n}"), "u", Duration::from_secs(3600));
            member
                .submit(SimTime::ZERO, "normal", spec, &mut effects)
                .expect("accepted");
        }
        member.step(SimTime::from_secs(1), &mut effects);
        member.take_journal();
        member
    }

    #[test]
    fn a_snapshot_made_between_inputs_is_the_state_at_its_end() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (state_dir, _) =
            StateDir::open::<DurableState, JournalRecord>(dir.path(), JOURNAL_FORMAT)
                .expect("opens");
        let writer =
            Writer::start(state_dir, |why| panic!("the writer failed: {why}")).expect("starts");
        let facts = ProcessFacts {
            lineage: 9,
            epoch_unix_ms: 1,
        };
        let durability = JournalDurability::new(writer, facts);
        let mut member = member(3 * SNAPSHOT_SLICE_MIN);
        let mut effects = Effects::default();
        let mut inputs = 0;
        // Each input: a job submitted, its record written, a slice made,
        // until the last slice hands the writer the snapshot (written on
        // its own thread, in place at the latest when the writer closes).
        let building = |durability: &JournalDurability| {
            durability
                .building
                .lock()
                .is_ok_and(|building| building.is_some())
        };
        while (inputs == 0 || building(&durability)) && inputs < 100 {
            durability.snapshot(&member);
            let spec = JobSpec::simple(format!("more{inputs}"), "u", Duration::from_secs(60));
            member
                .submit(SimTime::from_secs(2), "normal", spec, &mut effects)
                .expect("accepted");
            durability.write(member.take_journal(), Box::new(|| {}));
            inputs += 1;
            // Let the writer catch up with what was handed to it.
            while durability.writer.stats().records < inputs {
                std::thread::yield_now();
            }
        }
        assert!(
            (2..100).contains(&inputs),
            "made over several inputs: {inputs}"
        );
        let JournalDurability { writer, .. } = durability;
        writer.close();
        assert_eq!(
            std::fs::read_dir(dir.path())
                .expect("dir")
                .filter_map(|entry| entry.ok())
                .filter(|entry| entry.file_name().to_string_lossy().ends_with(".new"))
                .count(),
            0,
            "no temporary file left"
        );
        let (_, recovered) =
            StateDir::open::<DurableState, JournalRecord>(dir.path(), JOURNAL_FORMAT)
                .expect("opens");
        let mut state = recovered.snapshot.expect("a snapshot");
        assert_eq!(state.process, Some(facts));
        for record in recovered.records {
            state.apply(record);
        }
        state.process = None;
        assert_eq!(state, member.durable_state());
    }
}
