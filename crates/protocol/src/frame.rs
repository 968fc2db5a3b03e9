//! Length-prefixed postcard frames.
//!
//! A frame is a 4-byte big-endian length followed by that many bytes of a
//! postcard-encoded [`Message`]. Frames longer than a maximum are refused
//! before any of their body is buffered, so a peer cannot make a receiver
//! allocate without bound.
//!
//! Within a frame, every count and size is bounded by the frame's length:
//!
//! - A sequence (`Vec`) or string declares its length before its content.
//!   serde preallocates a sequence for at most 1 MiB of elements whatever it
//!   declares, and postcard reads string bytes from the body it already has,
//!   so a declared length larger than the body fails with
//!   [`FrameError::Decode`] once the body runs out, having allocated no more
//!   than the body holds. Every element of the protocol's sequences takes at
//!   least one byte on the wire, so a decoded message holds at most as many
//!   elements as its frame has bytes; its memory is a small constant times
//!   [`MAX_FRAME_SIZE`] (e.g. an empty `String` is one byte on the wire and
//!   24 bytes in memory).
//! - Cluster and queue names are checked as they are decoded, as in a
//!   scenario file ([`ClusterName::new`](crate::names::ClusterName::new)),
//!   including their length ([`MAX_NAME_LEN`](crate::names::MAX_NAME_LEN)):
//!   an invalid name fails the frame with [`FrameError::Decode`].
//! - Durations are checked by serde (seconds plus nanoseconds must not
//!   overflow); integers are fixed-width and postcard refuses a varint that
//!   overflows its type.
//!
//! Counts that are meaningful only to a cluster (slots, backlogs, sequence
//! numbers) are plain integers here; the cores that act on them judge them.

use crate::message::Message;

/// The default largest frame body, in bytes (1 MiB). A counter update for a
/// thousand queues is well under 100 KiB.
pub const MAX_FRAME_SIZE: usize = 1 << 20;

/// Bytes in a frame's length prefix.
const LENGTH_PREFIX: usize = 4;

/// Why a frame could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The frame's declared body is longer than the receiver accepts.
    #[error("frame of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// The declared or encoded length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The body is not a valid postcard-encoded message.
    #[error("frame body does not decode as a message: {0}")]
    Decode(#[source] postcard::Error),
    /// The message could not be encoded.
    #[error("message does not encode: {0}")]
    Encode(#[source] postcard::Error),
}

/// Appends `message` to `out` as one frame.
pub fn encode_frame(message: &Message, out: &mut Vec<u8>, max: usize) -> Result<(), FrameError> {
    let start = out.len();
    out.extend_from_slice(&[0; LENGTH_PREFIX]);
    let encoded = postcard::to_extend(message, std::mem::take(out)).map_err(FrameError::Encode);
    match encoded {
        Ok(buffer) => *out = buffer,
        Err(error) => {
            out.truncate(start);
            return Err(error);
        }
    }
    let len = out.len() - start - LENGTH_PREFIX;
    if len > max {
        out.truncate(start);
        return Err(FrameError::TooLarge { len, max });
    }
    let prefix = u32::try_from(len).map_err(|_| FrameError::TooLarge { len, max })?;
    out[start..start + LENGTH_PREFIX].copy_from_slice(&prefix.to_be_bytes());
    Ok(())
}

/// Decodes one frame from the front of `bytes`.
///
/// Returns the message and how many bytes it took, or `None` when `bytes`
/// does not yet hold a whole frame. A declared length over `max` is an error
/// as soon as the prefix is seen.
pub fn decode_frame(bytes: &[u8], max: usize) -> Result<Option<(Message, usize)>, FrameError> {
    let Some(prefix) = bytes.get(..LENGTH_PREFIX) else {
        return Ok(None);
    };
    let mut len_bytes = [0; LENGTH_PREFIX];
    len_bytes.copy_from_slice(prefix);
    let len = u32::from_be_bytes(len_bytes) as usize;
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    let Some(body) = bytes.get(LENGTH_PREFIX..LENGTH_PREFIX + len) else {
        return Ok(None);
    };
    let message = postcard::from_bytes(body).map_err(FrameError::Decode)?;
    Ok(Some((message, LENGTH_PREFIX + len)))
}

/// Accumulates bytes from a stream and yields whole messages.
#[derive(Debug)]
pub struct FrameDecoder {
    buffer: Vec<u8>,
    /// Where the undecoded bytes start in `buffer`; decoded bytes are
    /// dropped in one go when more bytes arrive.
    start: usize,
    max: usize,
}

impl FrameDecoder {
    /// A decoder that refuses frames longer than `max` bytes.
    pub fn new(max: usize) -> Self {
        FrameDecoder {
            buffer: Vec::new(),
            start: 0,
            max,
        }
    }

    /// Adds bytes read from the stream.
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// The next whole message, if the buffer holds one.
    ///
    /// After an error the stream is out of step and should be closed.
    pub fn next_message(&mut self) -> Result<Option<Message>, FrameError> {
        match decode_frame(&self.buffer[self.start..], self.max)? {
            Some((message, used)) => {
                self.start += used;
                if self.start == self.buffer.len() {
                    self.buffer.clear();
                    self.start = 0;
                }
                Ok(Some(message))
            }
            None => Ok(None),
        }
    }

    /// Bytes received but not yet decoded.
    pub fn buffered(&self) -> usize {
        self.buffer.len() - self.start
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use proptest::prelude::*;

    use super::*;
    use crate::counters::{CounterUpdate, ForwardWatermark, QueueCounters};
    use crate::job::{JobForward, JobSpec};
    use crate::message::{Envelope, Hello};
    use crate::names::{ClusterName, QueueName};
    use crate::time::SimTime;

    fn name(s: &str) -> ClusterName {
        ClusterName::new(s).expect("valid name")
    }

    fn sample_update() -> Message {
        Message::CounterUpdate(CounterUpdate {
            sender: name("Cluster2"),
            seq: 7,
            taken_at: SimTime::from_secs(60),
            queues: vec![QueueCounters {
                cluster: name("Cluster2"),
                queue: QueueName::new("HighPriority").expect("valid"),
                priority: 40,
                total_slots: 100,
                available_slots: 30,
                running_slots: 70,
                pending_slots: 20,
                preemptable_available_slots: 30,
                lowest_preemptable_priority: Some(20),
                impt_jobbklg: Some(50),
                imported_pending_jobs: 3,
                resources: vec!["bigmem".into()],
                slot_group: 0,
                gpu_slots: crate::GpuSlots::from_hosts([(2, 40)]),
                gpu_free_slots: crate::GpuSlots::from_hosts([(1, 10), (2, 5)]),
            }],
            forwards_received: vec![ForwardWatermark {
                submission_cluster: name("Cluster1"),
                last_forward_seq: 12,
            }],
        })
    }

    #[test]
    fn round_trips_every_kind() {
        let forward = Message::JobForward(JobForward {
            forward_seq: 1,
            source_job: 101,
            queue: QueueName::new("HighPriority").expect("valid"),
            send_queue: QueueName::new("send").expect("a queue name"),
            spec: JobSpec::simple("job1", "alice", Duration::from_secs(3600)),
            submitted_at: SimTime::from_secs(5),
            attempt: 0,
        });
        let hello = Message::Hello(Hello::with_incarnation(name("Cluster1"), 77).with_queues(
            vec![crate::counters::QueueFacts {
                queue: QueueName::new("HighPriority").expect("valid"),
                priority: 40,
                total_slots: 100,
                impt_jobbklg: None,
                resources: vec!["bigmem".into()],
                slot_group: 1,
                gpu_slots: crate::GpuSlots::from_hosts([(2, 40)]),
            }],
        ));
        let recall = Message::JobRecall(crate::job::JobRecall {
            source_job: 3,
            dest_job: 9,
            reason: "pending longer than MAX_RSCHED_TIME".into(),
        });
        let sync = Message::JobSync(crate::job::JobSync {
            jobs: vec![crate::job::HeldJob {
                source_job: 3,
                forward_seq: 4,
            }],
        });
        let lost = Message::JobLost(crate::job::JobLost {
            source_job: 3,
            forward_seq: 4,
            reason: "restarted".into(),
        });
        let mut spec = JobSpec::simple("job2", "bob", Duration::from_secs(60));
        spec.set_options(crate::job::JobOptions {
            output_file: Some("out.%J".into()),
            error_file: None,
            user_priority: Some(7),
            mem_request_mb: Some(4096),
            swap_request_mb: Some(512),
            max_slots: Some(8),
            auto_resize: true,
            job_priority: Some(70),
        });
        let with_options = Message::JobForward(JobForward {
            forward_seq: 2,
            source_job: 102,
            queue: QueueName::new("HighPriority").expect("valid"),
            send_queue: QueueName::new("send").expect("a queue name"),
            spec,
            submitted_at: SimTime::from_secs(6),
            attempt: 1,
        });
        let control = Message::JobControl(crate::control::JobControl {
            source_job: 3,
            action: crate::control::JobAction::Modify(crate::control::JobChanges {
                run_limit: Some(None),
                slots: Some(2),
                user_priority: None,
                aps: Some(crate::control::ApsChange::System(
                    crate::control::ApsNumber(10.5),
                )),
            }),
        });
        let migrate = Message::JobControl(crate::control::JobControl {
            source_job: 4,
            action: crate::control::JobAction::Migrate,
        });
        let release = Message::JobControl(crate::control::JobControl {
            source_job: 5,
            action: crate::control::JobAction::Release(crate::control::SlotRelease::Hosts(vec![(
                "hostA".into(),
                2,
            )])),
        });
        let reply = Message::JobControlReply(crate::control::JobControlReply {
            source_job: 3,
            dest_job: Some(9),
            action: crate::control::JobAction::Switch(QueueName::new("short").expect("valid")),
            outcome: Err("the job is running".into()),
        });
        for message in [
            sample_update(),
            forward,
            hello,
            recall,
            sync,
            lost,
            with_options,
            control,
            migrate,
            release,
            reply,
        ] {
            let mut out = Vec::new();
            encode_frame(&message, &mut out, MAX_FRAME_SIZE).expect("encodes");
            let (decoded, used) = decode_frame(&out, MAX_FRAME_SIZE)
                .expect("decodes")
                .expect("whole frame");
            assert_eq!(used, out.len());
            assert_eq!(decoded, message);
        }
    }

    #[test]
    fn partial_frames_wait_for_more_bytes() {
        let mut out = Vec::new();
        encode_frame(&sample_update(), &mut out, MAX_FRAME_SIZE).expect("encodes");
        let mut decoder = FrameDecoder::new(MAX_FRAME_SIZE);
        for byte in &out[..out.len() - 1] {
            decoder.extend(std::slice::from_ref(byte));
            assert!(decoder.next_message().expect("no error").is_none());
        }
        decoder.extend(&out[out.len() - 1..]);
        assert_eq!(
            decoder.next_message().expect("no error"),
            Some(sample_update())
        );
        assert_eq!(decoder.buffered(), 0);
    }

    #[test]
    fn oversized_frames_are_refused_from_the_prefix() {
        let prefix = (u32::try_from(MAX_FRAME_SIZE).expect("fits") + 1).to_be_bytes();
        let error = decode_frame(&prefix, MAX_FRAME_SIZE).expect_err("too large");
        assert!(matches!(error, FrameError::TooLarge { .. }));

        let mut out = vec![9, 9];
        let error = encode_frame(&sample_update(), &mut out, 8).expect_err("too large");
        assert!(matches!(error, FrameError::TooLarge { max: 8, .. }));
        assert_eq!(
            out,
            vec![9, 9],
            "a refused frame leaves the buffer as it was"
        );
    }

    #[test]
    fn garbage_is_a_typed_error() {
        let mut frame = 3u32.to_be_bytes().to_vec();
        frame.extend_from_slice(&[0xff, 0xff, 0xff]);
        assert!(matches!(
            decode_frame(&frame, MAX_FRAME_SIZE),
            Err(FrameError::Decode(_))
        ));
    }

    /// A placeholder name, long enough not to occur by chance in a frame.
    const PLACEHOLDER: &str = "Placeholder0123456789";

    /// Encodes `message` as a frame, then replaces the name [`PLACEHOLDER`]
    /// in its body with `replacement` (any string, valid as a name or not)
    /// and fixes the length prefix: the frame a peer could send.
    fn frame_with_name(message: &Message, replacement: &str) -> Vec<u8> {
        let mut frame = Vec::new();
        encode_frame(message, &mut frame, MAX_FRAME_SIZE).expect("encodes");
        let body = &frame[LENGTH_PREFIX..];
        // postcard writes a string as a varint length and its bytes.
        let find = postcard::to_allocvec(PLACEHOLDER).expect("encodes");
        let replace = postcard::to_allocvec(replacement).expect("encodes");
        let at = body
            .windows(find.len())
            .position(|window| window == find.as_slice())
            .expect("the placeholder is in the body");
        let mut new_body = body[..at].to_vec();
        new_body.extend_from_slice(&replace);
        new_body.extend_from_slice(&body[at + find.len()..]);
        let mut out = u32::try_from(new_body.len())
            .expect("fits")
            .to_be_bytes()
            .to_vec();
        out.extend_from_slice(&new_body);
        out
    }

    /// Messages with [`PLACEHOLDER`] in each place a name travels.
    fn messages_with_placeholder() -> Vec<Message> {
        let mut sender = sample_update();
        if let Message::CounterUpdate(update) = &mut sender {
            update.sender = name(PLACEHOLDER);
        }
        let mut queue = sample_update();
        if let Message::CounterUpdate(update) = &mut queue {
            update.queues[0].queue = QueueName::new(PLACEHOLDER).expect("valid");
        }
        let mut watermark = sample_update();
        if let Message::CounterUpdate(update) = &mut watermark {
            update.forwards_received[0].submission_cluster = name(PLACEHOLDER);
        }
        let hello = Message::Hello(Hello::with_incarnation(name(PLACEHOLDER), 77));
        let forward = Message::JobForward(JobForward {
            forward_seq: 1,
            source_job: 101,
            queue: QueueName::new(PLACEHOLDER).expect("valid"),
            send_queue: QueueName::new("send").expect("a queue name"),
            spec: JobSpec::simple("job1", "alice", Duration::from_secs(3600)),
            submitted_at: SimTime::from_secs(5),
            attempt: 0,
        });
        vec![sender, queue, watermark, hello, forward]
    }

    #[test]
    fn frames_with_valid_names_decode_to_those_names() {
        for message in messages_with_placeholder() {
            let frame = frame_with_name(&message, "Cluster9");
            let (decoded, used) = decode_frame(&frame, MAX_FRAME_SIZE)
                .expect("decodes")
                .expect("whole frame");
            assert_eq!(used, frame.len());
            let mut expected = Vec::new();
            encode_frame(&decoded, &mut expected, MAX_FRAME_SIZE).expect("encodes");
            assert_eq!(expected, frame, "the altered name is the one decoded");
            assert_ne!(decoded, message);
        }
    }

    #[test]
    fn frames_with_invalid_names_are_refused() {
        let too_long = "x".repeat(crate::names::MAX_NAME_LEN + 1);
        for message in messages_with_placeholder() {
            for bad in [
                "",
                "Cluster 9",
                "a@b",
                "tab\there",
                "nul\0",
                too_long.as_str(),
            ] {
                let frame = frame_with_name(&message, bad);
                let result = decode_frame(&frame, MAX_FRAME_SIZE);
                assert!(
                    matches!(result, Err(FrameError::Decode(_))),
                    "{} with name {bad:?} should be refused, got {result:?}",
                    message.kind()
                );
                let mut decoder = FrameDecoder::new(MAX_FRAME_SIZE);
                decoder.extend(&frame);
                assert!(decoder.next_message().is_err());
            }
        }
    }

    #[test]
    fn envelopes_refuse_invalid_names() {
        let envelope = Envelope {
            from: name("Cluster1"),
            to: name(PLACEHOLDER),
            message: Message::Hello(Hello::new(name("Cluster1"))),
        };
        let bytes = postcard::to_allocvec(&envelope).expect("encodes");
        assert_eq!(
            postcard::from_bytes::<Envelope>(&bytes).expect("decodes"),
            envelope
        );
        let find = postcard::to_allocvec(PLACEHOLDER).expect("encodes");
        let at = bytes
            .windows(find.len())
            .position(|window| window == find.as_slice())
            .expect("the placeholder is encoded");
        let mut altered = bytes[..at].to_vec();
        altered.extend_from_slice(&postcard::to_allocvec("Cluster 2").expect("encodes"));
        altered.extend_from_slice(&bytes[at + find.len()..]);
        assert!(postcard::from_bytes::<Envelope>(&altered).is_err());

        let json = serde_json::to_string(&envelope).expect("encodes");
        let altered = json.replace(PLACEHOLDER, "");
        assert!(serde_json::from_str::<Envelope>(&altered).is_err());
        assert_eq!(
            serde_json::from_str::<Envelope>(&json).expect("decodes"),
            envelope
        );
    }

    /// `body` under a length prefix of its own size is refused as
    /// undecodable.
    fn assert_body_refused(body: &[u8]) {
        let mut altered = u32::try_from(body.len())
            .expect("fits")
            .to_be_bytes()
            .to_vec();
        altered.extend_from_slice(body);
        assert!(matches!(
            decode_frame(&altered, MAX_FRAME_SIZE),
            Err(FrameError::Decode(_))
        ));
    }

    #[test]
    fn huge_declared_counts_are_refused_within_the_frame() {
        // A job sync that claims far more jobs than its body holds.
        let empty = Message::JobSync(crate::job::JobSync { jobs: Vec::new() });
        let mut frame = Vec::new();
        encode_frame(&empty, &mut frame, MAX_FRAME_SIZE).expect("encodes");
        assert_eq!(frame.last(), Some(&0), "the body ends with the count 0");
        let mut body = frame[LENGTH_PREFIX..frame.len() - 1].to_vec();
        body.extend_from_slice(&postcard::to_allocvec(&u64::from(u32::MAX)).expect("encodes"));
        body.extend_from_slice(&[0; 8]);
        assert_body_refused(&body);

        // A string that claims to be longer than its body.
        let frame = frame_with_name(&messages_with_placeholder()[3], "Cluster9");
        let mut body = frame[LENGTH_PREFIX..].to_vec();
        let at = body
            .windows(9)
            .position(|window| window == b"\x08Cluster9")
            .expect("the name is encoded");
        body[at] = 0x7f;
        assert_body_refused(&body);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut decoder = FrameDecoder::new(1024);
            decoder.extend(&bytes);
            while let Ok(Some(_)) = decoder.next_message() {}
        }
    }
}
