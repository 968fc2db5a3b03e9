//! Length-prefixed postcard frames.
//!
//! A frame is a 4-byte big-endian length followed by that many bytes of a
//! postcard-encoded [`Message`]. Frames longer than a maximum are refused
//! before any of their body is buffered, so a peer cannot make a receiver
//! allocate without bound.

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
    use crate::message::Hello;
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
            spec: JobSpec::simple("job1", "alice", Duration::from_secs(3600)),
            submitted_at: SimTime::from_secs(5),
            attempt: 0,
        });
        let hello = Message::Hello(Hello::with_incarnation(name("Cluster1"), 77));
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
        for message in [sample_update(), forward, hello, recall, sync, lost] {
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

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut decoder = FrameDecoder::new(1024);
            decoder.extend(&bytes);
            while let Ok(Some(_)) = decoder.next_message() {}
        }
    }
}
