//! Everything that crosses between mcfed clusters: names, emulated time,
//! per-queue counters, counter updates, job forwarding messages, and the
//! length-prefixed postcard framing that carries them.
//!
//! The types here are plain data with serde derives. They are shared by the
//! sans-IO scheduling cores (which produce and consume them), the in-process
//! engines (which pass them between cores without encoding them) and the QUIC
//! transport (which encodes them with [`frame`]).

pub mod address;
pub mod bounds;
pub mod control;
pub mod counters;
pub mod frame;
pub mod job;
pub mod log_limit;
pub mod message;
pub mod names;
pub mod time;
pub mod words;

pub use bounds::{Bound, BoundError, FileBound, LogLimit, ReadError, TextBound, TextError};
pub use control::{
    ApsChange, ApsNumber, JobAction, JobChanges, JobControl, JobControlReply, SlotRelease,
};
pub use counters::{
    CounterUpdate, ForwardWatermark, GpuSlots, QueueCounters, QueueFacts, starts_at_once,
    takes_import,
};
pub use frame::{FrameDecoder, FrameError, MAX_FRAME_SIZE, decode_frame, encode_frame};
pub use job::{
    HeldJob, JobAccept, JobEvent, JobForward, JobLost, JobOptions, JobRecall, JobReject, JobReturn,
    JobSpec, JobStatus, JobSync, JobWithdraw, RejectReason,
};
pub use message::{Envelope, Hello, Message, PROTOCOL_VERSION, Resume};
pub use names::{ClusterName, MAX_NAME_LEN, NameError, QueueName, QueueRef};
pub use time::SimTime;
