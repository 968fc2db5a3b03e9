//! Why an SWF trace could not be read: each error names the file and,
//! past the start, the line (and the field, for a malformed one).

use mcfed_protocol::bounds::ReadError;

use super::{MAX_LINE_BYTES, MAX_UNBROKEN_BYTES};

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SwfError {
    /// The file could not be opened or read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The path is not a regular file (a device, a FIFO, a link to one).
    #[error(transparent)]
    NotAFile(#[from] ReadError),
    /// Reading failed past the start: the trace ends here.
    #[error("{file}:{line}: {source} (the trace ends here: is it cut short?)")]
    Read {
        /// The file.
        file: String,
        /// The line reading stopped in.
        line: u64,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// More than [`MAX_UNBROKEN_BYTES`] bytes without a line break: not a
    /// trace; the read ends.
    #[error(
        "{file}:{line}: more than {MAX_UNBROKEN_BYTES} bytes without a line break: not an SWF trace"
    )]
    NotText {
        /// The file.
        file: String,
        /// The line.
        line: u64,
    },
    /// A submit time past the bound.
    #[error(
        "{file}:{line}: field 2 (submit time): {seconds} s is out of bounds: mcfed accepts 0 to {max} s (a hundred years of emulated time)"
    )]
    SubmitTooLate {
        /// The file.
        file: String,
        /// The line.
        line: u64,
        /// The time, as read.
        seconds: f64,
        /// The bound, in seconds.
        max: u64,
    },
    /// A submit time earlier than one already read (with
    /// [`SubmitOrder::Refuse`]) or let out (beyond the sorting window).
    #[error(
        "{file}:{line}: field 2 (submit time): {seconds} s is earlier than {previous} s on line {previous_line}{hint}: refused (submit times must not go backwards)"
    )]
    SubmitBackwards {
        /// The file.
        file: String,
        /// The line.
        line: u64,
        /// Its submit time.
        seconds: f64,
        /// The later time already read or let out.
        previous: f64,
        /// Its line.
        previous_line: u64,
        /// Why it could not be sorted, if sorting.
        hint: String,
    },
    /// A line is longer than [`MAX_LINE_BYTES`].
    #[error("{file}:{line}: line longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong {
        /// The file.
        file: String,
        /// The line number (from 1).
        line: u64,
    },
    /// A job line has the wrong number of fields.
    #[error("{file}:{line}: {found} fields, an SWF job line has 18")]
    FieldCount {
        /// The file.
        file: String,
        /// The line number.
        line: u64,
        /// How many there were.
        found: usize,
    },
    /// A field is not a number.
    #[error("{file}:{line}: field {index} ({name}): `{text}` is not a number")]
    Field {
        /// The file.
        file: String,
        /// The line number.
        line: u64,
        /// The field's position (from 1).
        index: usize,
        /// The field's name.
        name: &'static str,
        /// What was there.
        text: String,
    },
}
