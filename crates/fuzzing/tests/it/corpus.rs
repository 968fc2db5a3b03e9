//! The fuzz targets in the normal suite: every input of the corpus kept in
//! `fuzz/corpus/TARGET/`, then generated inputs — random bytes, and corpus
//! inputs with bytes flipped, cut short or spliced — all of which must
//! decode or be refused without a panic.
//!
//! `MCFED_WRITE_CORPUS=1 cargo test -p mcfed-fuzzing --test it corpus`
//! writes the binary seeds (frames, message bodies, journal bodies) again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcfed_fuzzing::TARGETS;
use mcfed_protocol::{
    ClusterName, CounterUpdate, ForwardWatermark, HeldJob, Hello, JobAction, JobControl,
    JobForward, JobSpec, JobSync, JobWithdraw, MAX_FRAME_SIZE, Message, QueueCounters, QueueName,
    Resume, SimTime, encode_frame,
};
use proptest::prelude::*;

pub(crate) fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(target))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|entry| entry.path())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .collect()
}

fn target(name: &str) -> fn(&[u8]) {
    TARGETS
        .iter()
        .find(|(target, _)| *target == name)
        .map(|(_, run)| *run)
        .expect("a target")
}

fn name(text: &str) -> ClusterName {
    ClusterName::new(text).expect("valid")
}

/// One message of every kind that carries data.
fn messages() -> Vec<Message> {
    let queue = QueueName::new("high").expect("valid");
    vec![
        Message::Hello(Hello::with_incarnation(name("Cluster1"), 7).listening_on(7100)),
        Message::Resume(Resume {
            lineage: 9,
            epoch_unix_ms: 1_700_000_000_000,
        }),
        Message::CounterUpdate(CounterUpdate {
            sender: name("Cluster2"),
            seq: 3,
            taken_at: SimTime::from_secs(90),
            queues: vec![QueueCounters {
                cluster: name("Cluster2"),
                queue: queue.clone(),
                priority: 40,
                total_slots: 16,
                available_slots: 4,
                running_slots: 12,
                pending_slots: 2,
                preemptable_available_slots: 8,
                lowest_preemptable_priority: Some(20),
                impt_jobbklg: Some(50),
                imported_pending_jobs: 1,
                resources: vec!["bigmem".to_owned()],
                slot_group: 1,
                gpu_slots: Default::default(),
                gpu_free_slots: Default::default(),
            }],
            forwards_received: vec![ForwardWatermark {
                submission_cluster: name("Cluster1"),
                last_forward_seq: 5,
            }],
        }),
        Message::JobForward(JobForward {
            forward_seq: 6,
            source_job: 11,
            queue,
            send_queue: QueueName::new("send").expect("valid"),
            spec: JobSpec::simple("job11", "alice", Duration::from_secs(600)),
            submitted_at: SimTime::from_secs(80),
            attempt: 1,
        }),
        Message::JobSync(JobSync {
            jobs: vec![HeldJob {
                source_job: 11,
                forward_seq: 6,
            }],
        }),
        Message::JobWithdraw(JobWithdraw {
            source_job: 11,
            forward_seq: 6,
            pending_only: true,
            reason: "taken back".to_owned(),
        }),
        Message::JobControl(JobControl {
            source_job: 11,
            action: JobAction::Kill,
        }),
    ]
}

/// Writes the binary seeds when asked.
pub(crate) fn write_seeds() {
    if std::env::var_os("MCFED_WRITE_CORPUS").is_none() {
        return;
    }
    super::seeds::write();
    let mut stream = vec![7u8];
    for (index, message) in messages().iter().enumerate() {
        let mut frame = Vec::new();
        encode_frame(message, &mut frame, MAX_FRAME_SIZE).expect("encodes");
        let body = frame[4..].to_vec();
        std::fs::write(corpus_dir("message").join(message.kind()), &body).expect("write");
        std::fs::write(
            corpus_dir("frame").join(format!("{index}-{}", message.kind())),
            &frame,
        )
        .expect("write");
        stream.extend_from_slice(&frame);
    }
    std::fs::write(corpus_dir("frame").join("stream"), &stream).expect("write");
    // A forwarded job whose name would forge a row and drive the terminal,
    // and whose user is past the bound: refused by JobSpec::check_bounds.
    let mut forged = JobSpec::simple(
        "ok\n12 alice RUN \u{1b}[2J",
        "u".repeat(300),
        Duration::from_secs(60),
    );
    forged.resources = vec!["bigmem".to_owned(); 300];
    let forged = Message::JobForward(JobForward {
        forward_seq: 7,
        source_job: 12,
        queue: QueueName::new("high").expect("valid"),
        send_queue: QueueName::new("send").expect("valid"),
        spec: forged,
        submitted_at: SimTime::from_secs(90),
        attempt: 0,
    });
    assert!(
        matches!(&forged, Message::JobForward(forward) if forward.spec.check_bounds().is_err())
    );
    let mut frame = Vec::new();
    encode_frame(&forged, &mut frame, MAX_FRAME_SIZE).expect("encodes");
    std::fs::write(
        corpus_dir("message").join("regression-forged-name"),
        &frame[4..],
    )
    .expect("write");
    std::fs::write(corpus_dir("frame").join("regression-forged-name"), &frame).expect("write");
    let records = [
        mcfed_federation::JournalRecord::Published { seq: 4 },
        mcfed_federation::JournalRecord::SourceGone { id: 3 },
        mcfed_federation::JournalRecord::Lineage {
            cluster: name("Cluster2"),
            lineage: 12,
        },
    ];
    let mut body = Vec::new();
    for record in &records {
        let payload = postcard::to_allocvec(record).expect("encodes");
        mcfed_journal::format::encode_frame(&payload, &mut body);
    }
    std::fs::write(corpus_dir("journal").join("records"), &body).expect("write");
    // Damage with sound records after it (refused, or salvaged), a torn
    // last record, zeros where the last write went.
    let mut damaged = body.clone();
    damaged[body.len() / 2] ^= 0x40;
    std::fs::write(corpus_dir("journal").join("records-damaged"), &damaged).expect("write");
    std::fs::write(
        corpus_dir("journal").join("records-torn"),
        &body[..body.len() - 3],
    )
    .expect("write");
    let mut zeros = body.clone();
    zeros.extend_from_slice(&[0; 64]);
    std::fs::write(corpus_dir("journal").join("records-zero-tail"), &zeros).expect("write");
}

#[test]
fn every_corpus_input_is_decoded_or_refused() {
    write_seeds();
    for (name, run) in TARGETS {
        let inputs = corpus(name);
        assert!(!inputs.is_empty(), "fuzz/corpus/{name} is empty");
        for input in inputs {
            run(&input);
        }
    }
}

/// A corpus input of `target` with `edits` applied: (position, byte)
/// replacements, then cut at `cut`.
fn mutated(target: &str, pick: usize, edits: &[(usize, u8)], cut: usize) -> Vec<u8> {
    let inputs = corpus(target);
    let mut input = inputs[pick % inputs.len()].clone();
    for &(at, byte) in edits {
        if !input.is_empty() {
            let at = at % input.len();
            input[at] = byte;
        }
    }
    let cut = cut % (input.len() + 1);
    input.truncate(input.len() - cut.min(input.len() / 2));
    input
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        for (_, run) in TARGETS {
            run(&bytes);
        }
    }

    #[test]
    fn mutated_corpus_inputs_never_panic(
        pick in any::<usize>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cut in any::<usize>(),
    ) {
        for (name, _) in TARGETS {
            target(name)(&mutated(name, pick, &edits, cut));
        }
    }
}
