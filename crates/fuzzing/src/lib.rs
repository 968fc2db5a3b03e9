//! What mcfed's fuzz targets run. Each function takes any bytes and feeds
//! them to one decoder of input mcfed takes from outside; it must return
//! (no panic, no hang) having allocated no more than the input's size
//! warrants. The cargo-fuzz targets in `fuzz/` call these functions, and
//! `tests/it/corpus.rs` runs them over the corpus kept in `fuzz/corpus/` and
//! over generated inputs in the normal test suite.
//!
//! | target | decoder |
//! |---|---|
//! | `frame` | [`mcfed_protocol::FrameDecoder`], bytes arriving in pieces |
//! | `message` | a frame body as a [`mcfed_protocol::Message`] (and back) |
//! | `scenario` | [`mcfed_scenario::parse_within`], a scenario's TOML |
//! | `swf` | [`mcfed_trace::SwfReader`], an SWF trace |
//! | `lsf` | [`mcfed_lsf::grammar::parse_text`], an lsb.* file |
//! | `journal` | a journal file's records ([`mcfed_journal::format`]) |
//! | `lsb_acct` | [`mcfed_trace::lsb_acct::AcctReader`], an lsb.acct (and its writer) |
//! | `admin` | an admin channel's message ([`mcfed_admin::decode`]): a request a cluster process reads, an answer a client reads (and back); the requests applied to a member ([`mcfed_admin::apply`]) |

use std::path::Path;

mod member;
pub use member::member;

use mcfed_protocol::{FrameDecoder, MAX_FRAME_SIZE, Message, encode_frame};

/// The memory a fuzzed scenario may claim to need (it is refused above).
const SCENARIO_MEMORY: u64 = 256 << 20;

/// What a fuzz target runs: any bytes in, no panic out.
pub type Target = fn(&[u8]);

/// The fuzz targets, by name, for the corpus test.
pub const TARGETS: [(&str, Target); 8] = [
    ("frame", frame),
    ("message", message),
    ("scenario", scenario),
    ("swf", swf),
    ("lsf", lsf),
    ("journal", journal),
    ("lsb_acct", lsb_acct),
    ("admin", admin),
];

/// Frames from a peer, arriving in pieces: every whole frame decodes or
/// is refused; a message that decodes encodes back to the same frame.
pub fn frame(data: &[u8]) {
    let mut decoder = FrameDecoder::new(MAX_FRAME_SIZE);
    // The first byte picks how the stream is cut into reads.
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1);
    for piece in data.chunks(step) {
        decoder.extend(piece);
        loop {
            match decoder.next_message() {
                Ok(Some(message)) => round_trip(&message),
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

/// A frame's body, decoded as a message; one that decodes encodes and
/// decodes back to itself.
pub fn message(data: &[u8]) {
    if let Ok(message) = postcard::from_bytes::<Message>(data) {
        round_trip(&message);
    }
}

fn round_trip(message: &Message) {
    if let Message::JobForward(forward) = message {
        // What a receiving cluster asks of a job before taking it.
        let _ = forward.spec.check_bounds();
    }
    let mut out = Vec::new();
    if encode_frame(message, &mut out, MAX_FRAME_SIZE).is_err() {
        return;
    }
    let decoded = mcfed_protocol::decode_frame(&out, MAX_FRAME_SIZE)
        .ok()
        .flatten()
        .map(|(decoded, _)| decoded)
        .expect("a message that encodes decodes back");
    // Compared as frames: a NaN a peer sent is not equal to itself.
    let mut again = Vec::new();
    encode_frame(&decoded, &mut again, MAX_FRAME_SIZE).expect("it encodes again");
    assert_eq!(
        again, out,
        "a decoded message encodes back to the same frame"
    );
}

/// A scenario file. Inputs that name other files (an LSF directory, a
/// trace) are skipped: the fuzzer reads no file.
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.contains("lsf_config") || text.contains("swf") || text.contains("workload") {
        return;
    }
    let _ = mcfed_scenario::parse_within("fuzz.toml", text, Some(SCENARIO_MEMORY));
}

/// An SWF trace: every line is a record or a located error.
pub fn swf(data: &[u8]) {
    let reader = mcfed_trace::SwfReader::new("fuzz.swf", std::io::Cursor::new(data));
    for record in reader.flatten() {
        let _ = record.processors();
    }
}

/// LSF's accounting log: every line is a record, a located error, or
/// skipped and counted; a record read is written back, and what is written
/// reads back to a record that writes the same line (the writer's output
/// is a fixed point); a record's `-R` is read as a replay reads it.
pub fn lsb_acct(data: &[u8]) {
    use mcfed_trace::lsb_acct::{AcctReader, requirements, write_job_finish};
    let mut reader = AcctReader::new("fuzz.acct", std::io::Cursor::new(data));
    for record in reader.by_ref().flatten() {
        let _ = (
            record.slots(),
            record.original_run_time(),
            record.run_limit_seconds(),
        );
        let _ = requirements(record.requirements().unwrap_or_default());
        let mut line = Vec::new();
        if write_job_finish(&mut line, &record).is_err() {
            continue;
        }
        let again = AcctReader::new("again.acct", line.as_slice())
            .next()
            .expect("a written record is read back")
            .expect("a written record reads");
        let mut second = Vec::new();
        write_job_finish(&mut second, &again).expect("a record read back writes");
        assert_eq!(
            second, line,
            "written, read and written again: the same line"
        );
    }
    let _ = reader.skipped().reasons();
}

/// An LSF configuration file (no `#INCLUDE`: the fuzzer reads no file).
pub fn lsf(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.to_ascii_uppercase().contains("#INCLUDE") {
        return;
    }
    let _ = mcfed_lsf::grammar::parse_text(text, "lsb.fuzz", Path::new("/nonexistent"));
}

/// A journal file's body: its sound records, as a restarting process
/// reads them — resynchronizing past damage — folded into a state; a
/// snapshot.
pub fn journal(data: &[u8]) {
    let scan = mcfed_journal::format::scan_records::<mcfed_federation::JournalRecord>(data);
    assert!(scan.sound_end <= data.len());
    for damage in &scan.damage {
        assert!(damage.offset + damage.len <= data.len());
    }
    let mut state = mcfed_federation::DurableState::default();
    for record in scan.records {
        state.apply(record);
    }
    let _ = mcfed_journal::format::decode_snapshot::<mcfed_federation::DurableState>(data);
}

/// A message on the admin channel, decoded as the request a cluster
/// process reads and as the answer a client reads; one that decodes
/// encodes, and decodes back to what encodes the same bytes. Then the
/// requests the bytes hold, one after another, are applied to a member
/// holding jobs, as a cluster process answers them ([`member`]), and the
/// member woken when it asks: huge counts, times, names or ids must be
/// refused or answered, never panic.
pub fn admin(data: &[u8]) {
    admin_round_trip::<mcfed_admin::AdminRequest>(data);
    admin_round_trip::<mcfed_admin::AdminResponse>(data);
    member::apply_requests(data);
}

fn admin_round_trip<T>(data: &[u8])
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let Ok(value) = mcfed_admin::decode::<T>(data) else {
        return;
    };
    let out = mcfed_admin::encode(&value).expect("a decoded admin message encodes");
    let again = mcfed_admin::decode::<T>(&out).expect("an encoded admin message decodes");
    // Compared as bytes: a NaN a peer sent is not equal to itself.
    assert_eq!(
        mcfed_admin::encode(&again).expect("it encodes again"),
        out,
        "a decoded admin message encodes back to the same bytes"
    );
}
