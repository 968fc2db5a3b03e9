//! The Standard Workload Format (SWF) of the Parallel Workloads Archive:
//! one job per line, 18 whitespace-separated numeric fields, `-1` for
//! unknown; lines starting with `;` are header comments (`; MaxProcs: 128`).
//!
//! [`SwfReader`] reads a trace as a stream — one line in memory at a time,
//! and a bounded window of jobs when it sorts them — and yields one
//! [`SwfRecord`] per job line. Lines are bounded ([`MAX_LINE_BYTES`]); a
//! malformed line is an error naming the line and the field, and reading
//! can go on past it. A read that fails (a truncated gzip stream, a disk
//! error) ends the trace with one error naming the line it stopped at.
//!
//! **Submit times** must not go backwards: the reader either sorts jobs
//! within a window of [`DEFAULT_SORT_WINDOW`] jobs (the default,
//! [`SubmitOrder::Sort`]; a job earlier than one the window already let
//! out is refused with its line), or refuses every job earlier than the
//! one before it ([`SubmitOrder::Refuse`]). A submit time past a hundred
//! years ([`mcfed_protocol::bounds::SCENARIO_TIME`]) is refused with its
//! line. No time is ever changed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use mcfed_protocol::bounds::{SCENARIO_TIME, TRACE_FILE};

mod error;
mod fields;
pub(crate) mod order;

pub use error::SwfError;
use fields::{Tokens, parse_field};
pub use order::{DEFAULT_SORT_WINDOW, SubmitOrder};
use order::{Held, Window};

/// The longest line accepted, in bytes (a job line is under 200).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The most bytes without a line break before the input is refused as
/// not a trace at all (past an overlong line, the rest of it is skipped
/// up to here).
pub const MAX_UNBROKEN_BYTES: u64 = 16 << 20;

/// The names of the 18 fields, in order, as the archive's documentation
/// gives them.
pub const FIELDS: [&str; 18] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time used",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user ID",
    "group ID",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time",
];

/// One job line of a trace. Times are in seconds; `-1` (unknown) is kept
/// as it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwfRecord {
    /// Field 1: the job's number.
    pub job_number: i64,
    /// Field 2: submission time, seconds from the trace's start.
    pub submit_time: f64,
    /// Field 3: how long it waited.
    pub wait_time: f64,
    /// Field 4: how long it ran.
    pub run_time: f64,
    /// Field 5: processors it was allocated.
    pub allocated_processors: i64,
    /// Field 6: average CPU time used per processor.
    pub average_cpu_time: f64,
    /// Field 7: memory used per processor, in kilobytes.
    pub used_memory: f64,
    /// Field 8: processors requested.
    pub requested_processors: i64,
    /// Field 9: run time requested (the user's estimate, a limit).
    pub requested_time: f64,
    /// Field 10: memory requested per processor, in kilobytes.
    pub requested_memory: f64,
    /// Field 11: status (1 completed, 0 failed, 5 cancelled, ...).
    pub status: i64,
    /// Field 12: user ID.
    pub user_id: i64,
    /// Field 13: group ID.
    pub group_id: i64,
    /// Field 14: executable (application) number.
    pub executable: i64,
    /// Field 15: queue number.
    pub queue: i64,
    /// Field 16: partition number.
    pub partition: i64,
    /// Field 17: preceding job number.
    pub preceding_job: i64,
    /// Field 18: think time from the preceding job.
    pub think_time: f64,
}

impl SwfRecord {
    /// The processors the job needs: requested (field 8), else allocated
    /// (field 5); `None` when neither is known or positive.
    pub fn processors(&self) -> Option<u32> {
        [self.requested_processors, self.allocated_processors]
            .into_iter()
            .find(|&count| count > 0)
            .and_then(|count| u32::try_from(count).ok())
    }

    /// Renders the record as an SWF line.
    pub fn to_line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
            self.job_number,
            number(self.submit_time),
            number(self.wait_time),
            number(self.run_time),
            self.allocated_processors,
            number(self.average_cpu_time),
            number(self.used_memory),
            self.requested_processors,
            number(self.requested_time),
            number(self.requested_memory),
            self.status,
            self.user_id,
            self.group_id,
            self.executable,
            self.queue,
            self.partition,
            self.preceding_job,
            number(self.think_time),
        )
    }
}

fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// The header comments of a trace: `; Key: value` lines, in order, and
/// any other comment text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// `Key: value` pairs (`MaxProcs`, `MaxJobs`, `UnixStartTime`, ...).
    pub fields: Vec<(String, String)>,
}

impl Header {
    /// The value of header field `key` (case-insensitive), if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(key))
            .map(|(_, value)| value.as_str())
    }
}

/// Opens a trace file for reading: gzip when it starts with gzip's magic
/// bytes (whatever its name), plain text otherwise. Only a regular file
/// is read (a link is followed to one).
pub fn open(path: &Path) -> Result<SwfReader<Box<dyn BufRead + Send>>, SwfError> {
    let file_name = path.display().to_string();
    let io = |source| SwfError::Io {
        file: file_name.clone(),
        source,
    };
    let file: File = TRACE_FILE.open(path)?;
    let mut file = BufReader::new(file);
    let gzip = file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn BufRead + Send> = if gzip {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    };
    Ok(SwfReader::new(file_name, reader))
}

/// Reads a trace line by line: header comments into [`SwfReader::header`],
/// job lines as [`SwfRecord`]s, in submit order ([`SubmitOrder`]).
pub struct SwfReader<R> {
    file: String,
    reader: R,
    line: u64,
    buffer: Vec<u8>,
    header: Header,
    order: SubmitOrder,
    /// With [`SubmitOrder::Sort`]: the jobs held.
    window: Window,
    /// The latest submit time read (refusing) or let out (sorting), and
    /// its line.
    latest: Option<(f64, u64)>,
    /// The input ended, or reading it failed: nothing more is read.
    ended: bool,
}

impl<R: BufRead> SwfReader<R> {
    /// A reader of `reader`, named `file` in errors, sorting within
    /// [`DEFAULT_SORT_WINDOW`] jobs.
    pub fn new(file: impl Into<String>, reader: R) -> Self {
        SwfReader {
            file: file.into(),
            reader,
            line: 0,
            buffer: Vec::with_capacity(256),
            header: Header::default(),
            order: SubmitOrder::default(),
            window: Window::default(),
            latest: None,
            ended: false,
        }
    }

    /// Reads with `order` instead (a sorting window of at least one job).
    pub fn with_order(mut self, order: SubmitOrder) -> Self {
        self.order = match order {
            SubmitOrder::Sort { window } => SubmitOrder::Sort {
                window: window.max(1),
            },
            SubmitOrder::Refuse => SubmitOrder::Refuse,
        };
        self
    }

    /// The header comments read so far (all of them once the first job
    /// line has been read, since SWF puts them first).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The number of the last line read.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Reads the next line into the buffer; `false` at the end. A read
    /// that fails ends the input.
    fn next_line(&mut self) -> Result<bool, SwfError> {
        if self.ended {
            return Ok(false);
        }
        self.buffer.clear();
        self.line += 1;
        let limit = (MAX_LINE_BYTES + 1) as u64;
        let read = self.read_some(limit)?;
        if read == 0 {
            self.ended = true;
            return Ok(false);
        }
        if self.buffer.len() > MAX_LINE_BYTES {
            // Skip the rest of the overlong line before reporting it, up
            // to a bound.
            let mut skipped = read as u64;
            while !self.buffer.ends_with(b"\n") {
                self.buffer.clear();
                let more = self.read_some(limit)?;
                if more == 0 {
                    break;
                }
                skipped += more as u64;
                if skipped > MAX_UNBROKEN_BYTES {
                    self.ended = true;
                    return Err(SwfError::NotText {
                        file: self.file.clone(),
                        line: self.line,
                    });
                }
            }
            self.buffer.clear();
            return Err(SwfError::LineTooLong {
                file: self.file.clone(),
                line: self.line,
            });
        }
        Ok(true)
    }

    /// Reads up to `limit` bytes of a line into the buffer.
    fn read_some(&mut self, limit: u64) -> Result<usize, SwfError> {
        (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.buffer)
            .map_err(|source| {
                self.ended = true;
                SwfError::Read {
                    file: self.file.clone(),
                    line: self.line,
                    source,
                }
            })
    }

    fn header_line(&mut self, text: &str) {
        let text = text.trim_start_matches(';').trim();
        if let Some((key, value)) = text.split_once(':') {
            let key = key.trim();
            if !key.is_empty() && !key.contains(char::is_whitespace) {
                self.header
                    .fields
                    .push((key.to_owned(), value.trim().to_owned()));
            }
        }
    }

    fn parse(&self, line: &[u8]) -> Result<SwfRecord, SwfError> {
        let mut values = [0f64; 18];
        let mut count = 0;
        let mut tokens = Tokens { line, position: 0 };
        while let Some(token) = tokens.next_token() {
            if count < 18 {
                values[count] = parse_field(token).ok_or_else(|| SwfError::Field {
                    file: self.file.clone(),
                    line: self.line,
                    index: count + 1,
                    name: FIELDS[count],
                    text: String::from_utf8_lossy(token).chars().take(40).collect(),
                })?;
            }
            count += 1;
        }
        if count != 18 {
            return Err(SwfError::FieldCount {
                file: self.file.clone(),
                line: self.line,
                found: count,
            });
        }
        let int = |index: usize| values[index] as i64;
        Ok(SwfRecord {
            job_number: int(0),
            submit_time: values[1],
            wait_time: values[2],
            run_time: values[3],
            allocated_processors: int(4),
            average_cpu_time: values[5],
            used_memory: values[6],
            requested_processors: int(7),
            requested_time: values[8],
            requested_memory: values[9],
            status: int(10),
            user_id: int(11),
            group_id: int(12),
            executable: int(13),
            queue: int(14),
            partition: int(15),
            preceding_job: int(16),
            think_time: values[17],
        })
    }
}

impl<R: BufRead> SwfReader<R> {
    /// The next job line as read (in file order), or a located error;
    /// `None` at the end.
    fn next_in_file(&mut self) -> Option<Result<SwfRecord, SwfError>> {
        loop {
            match self.next_line() {
                Ok(false) => return None,
                Ok(true) => {}
                Err(error) => return Some(Err(error)),
            }
            let line = self.buffer.trim_ascii();
            if line.is_empty() {
                continue;
            }
            if line.starts_with(b";") {
                let text = String::from_utf8_lossy(line).into_owned();
                self.header_line(&text);
                continue;
            }
            return Some(self.parse(line).and_then(|record| self.check_time(record)));
        }
    }

    /// Refuses a submit time past the bound.
    fn check_time(&self, record: SwfRecord) -> Result<SwfRecord, SwfError> {
        let max_ms = SCENARIO_TIME.max;
        if record.submit_time * 1000.0 > max_ms as f64 {
            return Err(SwfError::SubmitTooLate {
                file: self.file.clone(),
                line: self.line,
                seconds: record.submit_time,
                max: max_ms / 1000,
            });
        }
        Ok(record)
    }

    /// Refuses `record` (read at `line`) if it is earlier than the latest
    /// time read or let out; else makes it the latest.
    fn in_order(&mut self, record: SwfRecord, line: u64) -> Result<SwfRecord, SwfError> {
        match self.latest {
            Some((previous, previous_line)) if record.submit_time < previous => {
                Err(SwfError::SubmitBackwards {
                    file: self.file.clone(),
                    line,
                    seconds: record.submit_time,
                    previous,
                    previous_line,
                    hint: match self.order {
                        SubmitOrder::Sort { window } => {
                            format!(
                                ", a job already let out of the sorting window of {window} jobs"
                            )
                        }
                        SubmitOrder::Refuse => String::new(),
                    },
                })
            }
            _ => {
                self.latest = Some((record.submit_time, line));
                Ok(record)
            }
        }
    }
}

impl<R: BufRead> Iterator for SwfReader<R> {
    type Item = Result<SwfRecord, SwfError>;

    fn next(&mut self) -> Option<Self::Item> {
        let SubmitOrder::Sort { window } = self.order else {
            let record = match self.next_in_file()? {
                Ok(record) => record,
                Err(error) => return Some(Err(error)),
            };
            return Some(self.in_order(record, self.line));
        };
        // Fill the window; errors go out as they are met.
        while self.window.len() < window {
            match self.next_in_file() {
                Some(Ok(record)) => {
                    let line = self.line;
                    if self
                        .latest
                        .is_some_and(|(latest, _)| record.submit_time < latest)
                    {
                        return Some(self.in_order(record, line));
                    }
                    self.window.push(Held { record, line });
                }
                Some(Err(error)) => return Some(Err(error)),
                None => break,
            }
        }
        let earliest = self.window.pop()?;
        Some(self.in_order(earliest.record, earliest.line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "; Version: 2.2\n; MaxProcs: 128\n;   Note: free text\n; a comment without a key\n\n1 0 10 3600 16 -1 -1 16 7200 -1 1 3 1 -1 1 1 -1 -1\n2 5.5 0 60 -1 -1 -1 4 120 -1 1 7 1 -1 2 -1 -1 -1\n";

    fn read(text: &str) -> (Vec<Result<SwfRecord, SwfError>>, Header) {
        let mut reader = SwfReader::new("t.swf", text.as_bytes());
        let records: Vec<_> = reader.by_ref().collect();
        (records, reader.header().clone())
    }

    #[test]
    fn reads_records_and_header() {
        let (records, header) = read(TRACE);
        assert_eq!(records.len(), 2);
        let first = records[0].as_ref().expect("valid");
        assert_eq!(first.job_number, 1);
        assert_eq!(first.run_time, 3600.0);
        assert_eq!(first.processors(), Some(16));
        assert_eq!(first.requested_time, 7200.0);
        let second = records[1].as_ref().expect("valid");
        assert_eq!(second.submit_time, 5.5);
        assert_eq!(second.processors(), Some(4));
        assert_eq!(second.queue, 2);
        assert_eq!(header.get("maxprocs"), Some("128"));
        assert_eq!(header.get("Version"), Some("2.2"));
        assert_eq!(header.get("note"), Some("free text"));
        assert_eq!(header.fields.len(), 3);
    }

    #[test]
    fn allocated_processors_stand_in_for_unknown_requests() {
        let (records, _) = read("1 0 0 10 8 -1 -1 -1 -1 -1 1 1 1 -1 1 1 -1 -1\n");
        assert_eq!(records[0].as_ref().expect("valid").processors(), Some(8));
        let (records, _) = read("1 0 0 10 -1 -1 -1 -1 -1 -1 1 1 1 -1 1 1 -1 -1\n");
        assert_eq!(records[0].as_ref().expect("valid").processors(), None);
    }

    #[test]
    fn errors_name_the_line_and_field_and_reading_goes_on() {
        let (records, _) = read(
            "1 0 0 10 8 -1 -1 x -1 -1 1 1 1 -1 1 1 -1 -1\n1 2 3\n2 0 0 10 8 -1 -1 8 -1 -1 1 1 1 -1 1 1 -1 -1\n",
        );
        let message = records[0].as_ref().expect_err("bad field").to_string();
        assert_eq!(
            message,
            "t.swf:1: field 8 (requested processors): `x` is not a number"
        );
        let message = records[1].as_ref().expect_err("short line").to_string();
        assert_eq!(message, "t.swf:2: 3 fields, an SWF job line has 18");
        assert!(records[2].is_ok());
    }

    #[test]
    fn overlong_lines_are_refused_without_reading_them_whole() {
        let mut text = "9".repeat(MAX_LINE_BYTES + 10);
        text.push('\n');
        text.push_str("2 0 0 10 8 -1 -1 8 -1 -1 1 1 1 -1 1 1 -1 -1\n");
        let (records, _) = read(&text);
        assert!(matches!(
            records[0],
            Err(SwfError::LineTooLong { line: 1, .. })
        ));
        assert_eq!(records[1].as_ref().expect("next line").job_number, 2);
    }

    #[test]
    fn the_integer_fast_path_agrees_with_the_standard_parser() {
        for text in [
            "0",
            "-1",
            "42",
            "007",
            "123456789012345",
            "-98765",
            "1.5",
            "-0.25",
            "1e3",
            "3600.0",
        ] {
            assert_eq!(
                parse_field(text.as_bytes()),
                text.parse::<f64>().ok(),
                "{text}"
            );
        }
        for text in ["", "-", "x", "1-2", "inf", "NaN", "1234567890123456789012"] {
            let expected = text.parse::<f64>().ok().filter(|v| v.is_finite());
            assert_eq!(parse_field(text.as_bytes()), expected, "{text}");
        }
        // To the bit: the sign of a zero, the largest fast-path integers,
        // and fifteen bytes past '9' (which must not overflow the sum).
        for text in ["-0", "0", "999999999999999", "-999999999999999"] {
            let parsed = parse_field(text.as_bytes()).map(f64::to_bits);
            assert_eq!(parsed, text.parse::<f64>().ok().map(f64::to_bits), "{text}");
        }
        assert_eq!(parse_field(&[0xff; 15]), None);
    }

    #[test]
    fn lines_round_trip() {
        let (records, _) = read(TRACE);
        for record in records {
            let record = record.expect("valid");
            let (again, _) = read(&format!("{}\n", record.to_line()));
            assert_eq!(again[0].as_ref().expect("valid"), &record);
        }
    }
}
