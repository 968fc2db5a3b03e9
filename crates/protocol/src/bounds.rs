//! The one rule for every number that enters mcfed from outside — a
//! scenario or LSF file, a trace, a command-line flag, a `bsub` option, a
//! wire frame: it must lie within a [`Bound`], and a number out of bounds
//! is refused with the same words wherever it enters ([`BoundError`]).
//!
//! The caps are mcfed's, not LSF's. They are far above any real site (a
//! million hosts, ten million jobs in one scenario entry) and keep every
//! size mcfed derives from them — memory for jobs and hosts, slot sums in
//! `u32` counters — representable and allocatable.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The inclusive range a number from outside must lie in, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// What the number is, as the user wrote it (`count`, `MXJ`, `-n`).
    pub what: &'static str,
    /// The smallest value accepted.
    pub min: u64,
    /// The largest value accepted.
    pub max: u64,
    /// Why the cap is there, for the error.
    pub why: &'static str,
}

/// A number outside its [`Bound`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} = {value} is out of bounds: {range} ({why})")]
pub struct BoundError {
    /// What the number is.
    pub what: &'static str,
    /// The value given, as written back to the user.
    pub value: String,
    /// The accepted range, in words.
    pub range: String,
    /// Why the cap is there.
    pub why: &'static str,
}

impl Bound {
    /// Checks `value`.
    pub fn check(&self, value: u64) -> Result<u64, BoundError> {
        if self.holds(value) {
            Ok(value)
        } else {
            Err(self.error(
                value.to_string(),
                self.min.to_string(),
                self.max.to_string(),
            ))
        }
    }

    /// Whether `value` lies within the bound (what [`Bound::check`]
    /// tests, without building a result).
    #[inline]
    pub fn holds(&self, value: u64) -> bool {
        (self.min..=self.max).contains(&value)
    }

    /// Whether the duration `value` lies within the bound (in
    /// milliseconds, what [`Bound::check_duration`] tests).
    #[inline]
    pub fn holds_duration(&self, value: Duration) -> bool {
        // `as_millis` without its 128-bit arithmetic when the seconds fit.
        let millis = value
            .as_secs()
            .checked_mul(1000)
            .and_then(|millis| millis.checked_add(u64::from(value.subsec_millis())))
            .unwrap_or(u64::MAX);
        self.holds(millis)
    }

    /// Checks a signed or wider `value` (a negative or huge number from a
    /// parser), returning it as `u64`.
    pub fn check_i128(&self, value: i128) -> Result<u64, BoundError> {
        match u64::try_from(value) {
            Ok(value) => self.check(value),
            Err(_) => Err(self.error(
                value.to_string(),
                self.min.to_string(),
                self.max.to_string(),
            )),
        }
    }

    /// Checks `value` and returns it as `u32` (every bound that guards a
    /// `u32` has a `max` that fits).
    pub fn check_u32(&self, value: u64) -> Result<u32, BoundError> {
        let value = self.check(value)?;
        u32::try_from(value).map_err(|_| {
            self.error(
                value.to_string(),
                self.min.to_string(),
                u32::MAX.to_string(),
            )
        })
    }

    /// Checks a duration, whose bound is in milliseconds.
    pub fn check_duration(&self, value: Duration) -> Result<Duration, BoundError> {
        if self.holds_duration(value) {
            Ok(value)
        } else {
            Err(self.error(
                crate::words::duration(value),
                humanize_millis(self.min),
                humanize_millis(self.max),
            ))
        }
    }

    fn error(&self, value: String, min: String, max: String) -> BoundError {
        BoundError {
            what: self.what,
            value,
            range: format!("mcfed accepts {min} to {max}"),
            why: self.why,
        }
    }
}

/// Milliseconds in words: `0s`, `250ms`, `1m 30s`, `36500d (100 years)`.
fn humanize_millis(millis: u64) -> String {
    crate::words::duration(Duration::from_millis(millis))
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}..={}", self.what, self.min, self.max)
    }
}

/// Seconds in a (non-leap) year.
const YEAR_SECS: u64 = 365 * 24 * 3600;

/// Jobs one scenario entry (`[[cluster.job]]`, `[[submit]]`) makes with
/// `count`; a job takes a few hundred bytes, so the cap is a few GB.
pub const JOB_COUNT: Bound = Bound {
    what: "count",
    min: 1,
    max: 10_000_000,
    why: "jobs one entry makes; each takes memory",
};

/// Hosts one `[[cluster.host]]` entry makes with `count`.
pub const HOST_COUNT: Bound = Bound {
    what: "count",
    min: 1,
    max: 1_000_000,
    why: "hosts one entry makes; each takes memory",
};

/// Job slots of one host (`MXJ`, `ncpus`).
pub const HOST_SLOTS: Bound = Bound {
    what: "MXJ",
    min: 1,
    max: 1_000_000,
    why: "job slots of one host",
};

/// Job slots of one cluster, all its hosts together: slot counters are
/// `u32`, and the sum of any two of them must not overflow.
pub const CLUSTER_SLOTS: Bound = Bound {
    what: "slots of a cluster (MXJ summed over its hosts)",
    min: 0,
    max: 1_000_000_000,
    why: "slot counters must not overflow",
};

/// Slots one job asks for (`bsub -n`, a job table's `slots`, a trace's
/// processors).
pub const JOB_SLOTS: Bound = Bound {
    what: "slots",
    min: 1,
    max: 1_000_000,
    why: "slots one job asks for",
};

/// Memory one job uses, in MB.
pub const JOB_MEMORY_MB: Bound = Bound {
    what: "memory_mb",
    min: 0,
    max: 1 << 40,
    why: "memory one job uses, in MB",
};

/// A job's run time or run limit (`--run-time`, `-W`, a trace's run
/// time), in milliseconds: at most a hundred years.
pub const JOB_DURATION: Bound = Bound {
    what: "run time",
    min: 0,
    max: 100 * YEAR_SECS * 1000,
    why: "a hundred years of emulated time",
};

/// MC_PLUGIN_UPDATE_INTERVAL (and a sweep's `--interval`), in
/// milliseconds: at least a second, so a run has a bounded number of
/// updates per emulated second, and at most a day.
pub const UPDATE_INTERVAL: Bound = Bound {
    what: "MC_PLUGIN_UPDATE_INTERVAL",
    min: 1000,
    max: 24 * 3600 * 1000,
    why: "counter updates must come at most once per emulated second and at least once a day",
};

/// A scenario's `end` and every time in it, in milliseconds.
pub const SCENARIO_TIME: Bound = Bound {
    what: "time",
    min: 0,
    max: 100 * YEAR_SECS * 1000,
    why: "a hundred years of emulated time",
};

/// Clusters in one federation (a scenario, `mcfed replay --clusters`).
pub const CLUSTER_COUNT: Bound = Bound {
    what: "clusters",
    min: 1,
    max: 1000,
    why: "clusters in one federation; each is a member with its own state",
};

/// Jobs one batched `mcfed bsub` request carries.
pub const SUBMIT_BATCH: Bound = Bound {
    what: "jobs in one submission batch",
    min: 1,
    max: 4096,
    why: "one batch must fit one admin frame",
};

/// The inclusive largest size of a string from outside, and why: a job's
/// name, its user, a file it names. Such a string is refused when it is
/// longer, or when it holds a control character (a newline or an escape
/// sequence would print as forged rows or drive the terminal), as names of
/// clusters and queues already are ([`crate::names`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextBound {
    /// What the string is, as the user wrote it (`job name`, `-o`).
    pub what: &'static str,
    /// The most bytes (UTF-8) accepted.
    pub max_bytes: usize,
    /// Why the cap is there, for the error.
    pub why: &'static str,
}

/// A string from outside that a [`TextBound`] refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// Longer than the bound (the string is not copied into the error).
    #[error(
        "{what} of {len} bytes is out of bounds: mcfed accepts up to {max_bytes} bytes ({why})"
    )]
    TooLong {
        /// What the string is.
        what: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The bound.
        max_bytes: usize,
        /// Why the cap is there.
        why: &'static str,
    },
    /// Holds a control character.
    #[error(
        "{what} holds the control character {character:?} at byte {at}: refused (control characters would print as forged lines or terminal commands)"
    )]
    ControlCharacter {
        /// What the string is.
        what: &'static str,
        /// The character.
        character: char,
        /// Its byte offset.
        at: usize,
    },
}

impl TextBound {
    /// Checks `text`: at most [`TextBound::max_bytes`] bytes, no control
    /// character (C0, DEL or C1). The length is checked first, so an
    /// overlong string is refused without being scanned.
    pub fn check(&self, text: &str) -> Result<(), TextError> {
        if text.len() > self.max_bytes {
            return Err(TextError::TooLong {
                what: self.what,
                len: text.len(),
                max_bytes: self.max_bytes,
                why: self.why,
            });
        }
        // Most text is printable ASCII: one pass over the bytes, no
        // decoding (a control character outside ASCII is not ASCII).
        if is_printable_ascii(text.as_bytes()) {
            return Ok(());
        }
        match text.char_indices().find(|(_, c)| c.is_control()) {
            Some((at, character)) => Err(TextError::ControlCharacter {
                what: self.what,
                character,
                at,
            }),
            None => Ok(()),
        }
    }

    /// Whether `text` is plainly within the bound: no longer than
    /// [`TextBound::max_bytes`] and printable ASCII only. Text that is
    /// not may still pass [`TextBound::check`] (printable characters
    /// beyond ASCII).
    #[inline]
    pub fn holds_printable_ascii(&self, text: &str) -> bool {
        text.len() <= self.max_bytes && is_printable_ascii(text.as_bytes())
    }
}

/// Whether every byte is printable ASCII (0x20 to 0x7e), read eight bytes
/// at a time: a byte's high bit, in one of three sums over its low seven
/// bits, says whether it is 0x80 or above, DEL (0x7f), or below 0x20.
/// No sum carries from one byte into the next.
fn is_printable_ascii(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x80 * ONES;
    const LOW: u64 = 0x7f * ONES;
    let printable = |word: u64| {
        let low = word & LOW;
        // High bit set: the byte is 0x80 or above; its low bits plus one
        // reach 0x80 (0x7f or 0xff); its low bits plus 0x60 stay below
        // 0x80 (below 0x20).
        let refused = word | (low + ONES) | !(low + 0x60 * ONES);
        refused & HIGH == 0
    };
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word: [u8; 8] = word.try_into().expect("chunks of eight bytes");
        if !printable(u64::from_le_bytes(word)) {
            return false;
        }
    }
    // The last bytes, padded with spaces.
    // (Byte by byte: at most seven, cheaper than a call to copy them.)
    let mut last = [b' '; 8];
    for (slot, byte) in last.iter_mut().zip(words.remainder()) {
        *slot = *byte;
    }
    printable(u64::from_le_bytes(last))
}

/// A job's name (`bsub -J`, a scenario's `name`, a trace's
/// `NAME-JOBNUMBER`): LSF's own limit.
pub const JOB_NAME: TextBound = TextBound {
    what: "job name",
    max_bytes: 4094,
    why: "LSF's limit for a job name",
};

/// The user a job runs as.
pub const USER_NAME: TextBound = TextBound {
    what: "user name",
    max_bytes: 255,
    why: "mcfed's limit for a user name, as for every other name",
};

/// A file a job names (`bsub -o`, `-e`): LSF's limit for a path on UNIX.
pub const FILE_NAME: TextBound = TextBound {
    what: "file name",
    max_bytes: 4094,
    why: "LSF's limit for a file path",
};

/// A boolean resource a job asks for (`bsub -R`).
pub const RESOURCE_NAME: TextBound = TextBound {
    what: "resource name",
    max_bytes: 255,
    why: "mcfed's limit for a name",
};

/// Boolean resources one job asks for.
pub const JOB_RESOURCES: Bound = Bound {
    what: "resources",
    min: 0,
    max: 256,
    why: "boolean resources one job asks for",
};

/// The largest file of one kind mcfed reads whole, and what the file is.
/// Files are bounded by the bytes actually read, never by what metadata
/// says (a device, a FIFO or a file still growing says nothing true), and
/// only regular files are read: a symbolic link is followed, but what it
/// leads to must be a regular file (`/dev/zero` is refused before a byte
/// is read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileBound {
    /// What the file is (`scenario`, `certificate`).
    pub what: &'static str,
    /// The most bytes read.
    pub max_bytes: u64,
}

/// A file that could not be read within its [`FileBound`].
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The path leads to something that is not a regular file.
    #[error("{path}: is {kind}, not a regular file: refused as {what}")]
    NotAFile {
        /// The file.
        path: PathBuf,
        /// What it is (`a character device`, `a FIFO`, ...).
        kind: &'static str,
        /// What the file should have been.
        what: &'static str,
    },
    /// The file holds more than the bound.
    #[error(
        "{path}: more than {max_bytes} bytes: refused as {what} (mcfed reads at most {max_bytes} bytes of one)"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound.
        max_bytes: u64,
        /// What the file should have been.
        what: &'static str,
    },
}

impl ReadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. }
            | ReadError::NotAFile { path, .. }
            | ReadError::TooLarge { path, .. } => path,
        }
    }
}

impl FileBound {
    /// Opens `path` for reading if it leads to a regular file. It is
    /// opened without blocking (a FIFO would wait for a writer) and its
    /// type is taken from the open file, so a link swapped meanwhile
    /// changes nothing.
    pub fn open(&self, path: &Path) -> Result<std::fs::File, ReadError> {
        let io = |source| ReadError::Io {
            path: path.to_owned(),
            source,
        };
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            // Regular files ignore O_NONBLOCK; a FIFO opens at once.
            let nonblock = i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).unwrap_or(0);
            options.custom_flags(nonblock);
        }
        let file = options.open(path).map_err(io)?;
        let kind = file.metadata().map_err(io)?.file_type();
        if kind.is_file() {
            return Ok(file);
        }
        Err(ReadError::NotAFile {
            path: path.to_owned(),
            kind: describe_file_type(kind),
            what: self.what,
        })
    }

    /// Reads the regular file `path` whole, refusing it past
    /// [`FileBound::max_bytes`] bytes read.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        use std::io::Read as _;
        let file = self.open(path)?;
        let mut bytes = Vec::new();
        file.take(self.max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|source| ReadError::Io {
                path: path.to_owned(),
                source,
            })?;
        if bytes.len() as u64 > self.max_bytes {
            return Err(ReadError::TooLarge {
                path: path.to_owned(),
                max_bytes: self.max_bytes,
                what: self.what,
            });
        }
        Ok(bytes)
    }

    /// [`FileBound::read`], as UTF-8 text.
    pub fn read_to_string(&self, path: &Path) -> Result<String, ReadError> {
        String::from_utf8(self.read(path)?).map_err(|error| ReadError::Io {
            path: path.to_owned(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not UTF-8 text (byte {})", error.utf8_error().valid_up_to()),
            ),
        })
    }
}

/// A file type in words.
fn describe_file_type(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// A scenario file, a hosts file, an LSF configuration file (each
/// `#INCLUDE` on its own).
pub const CONFIG_FILE: FileBound = FileBound {
    what: "a configuration file",
    max_bytes: 16 << 20,
};

/// A PEM file: a certificate (chain) or a key.
pub const PEM_FILE: FileBound = FileBound {
    what: "a certificate or key",
    max_bytes: 1 << 20,
};

/// A trace: read as a stream, never whole; only its type is checked
/// ([`FileBound::open`]), its lines are bounded by the reader.
pub const TRACE_FILE: FileBound = FileBound {
    what: "a trace",
    max_bytes: u64::MAX,
};

pub use crate::log_limit::LogLimit;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_passes_outside_is_refused_with_the_same_words() {
        assert_eq!(JOB_COUNT.check(5), Ok(5));
        let error = JOB_COUNT.check(1_000_000_000).expect_err("too many");
        assert_eq!(
            error.to_string(),
            "count = 1000000000 is out of bounds: mcfed accepts 1 to 10000000 (jobs one entry makes; each takes memory)"
        );
        assert!(HOST_SLOTS.check(0).is_err());
        assert!(HOST_SLOTS.check_u32(u64::from(u32::MAX)).is_err());
        assert!(JOB_SLOTS.check_i128(-3).is_err());
    }

    #[test]
    fn durations_are_bounded_in_milliseconds() {
        assert!(UPDATE_INTERVAL.check_duration(Duration::ZERO).is_err());
        let error = UPDATE_INTERVAL
            .check_duration(Duration::from_millis(10))
            .expect_err("too short");
        assert!(error.to_string().contains("10ms"), "{error}");
        assert!(
            UPDATE_INTERVAL
                .check_duration(Duration::from_secs(30))
                .is_ok()
        );
        assert!(JOB_DURATION.check_duration(Duration::MAX).is_err());
    }

    #[test]
    fn text_is_bounded_in_bytes_and_control_characters_are_refused() {
        assert_eq!(JOB_NAME.check(&"j".repeat(4094)), Ok(()));
        assert_eq!(JOB_NAME.check(""), Ok(()));
        let error = JOB_NAME.check(&"j".repeat(4095)).expect_err("too long");
        assert_eq!(
            error.to_string(),
            "job name of 4095 bytes is out of bounds: mcfed accepts up to 4094 bytes (LSF's limit for a job name)"
        );
        // Bytes, not characters: 2,048 two-byte characters are 4,096 bytes.
        assert!(JOB_NAME.check(&"é".repeat(2048)).is_err());
        for forged in ["a\nb", "x\u{1b}[2J", "tab\there", "del\u{7f}", "c1\u{85}"] {
            let error = JOB_NAME.check(forged).expect_err("control character");
            assert!(
                matches!(error, TextError::ControlCharacter { .. }),
                "{forged:?}: {error}"
            );
        }
        let error = USER_NAME.check("ro\not").expect_err("newline");
        assert_eq!(
            error.to_string(),
            "user name holds the control character '\\n' at byte 2: refused (control characters would print as forged lines or terminal commands)"
        );
        assert_eq!(FILE_NAME.check("/home/u/out.%J résumé"), Ok(()));
    }

    #[test]
    fn printable_ascii_is_read_eight_bytes_at_a_time_as_byte_by_byte() {
        // Every byte value at every place of texts up to two words and a
        // bit long, among printable neighbours: the word-wise answer is
        // the byte-wise one.
        for len in 1..=17 {
            for at in 0..len {
                for byte in 0..=u8::MAX {
                    let mut text = vec![b'~'; len];
                    text[at] = byte;
                    let expected = text.iter().all(|b| (0x20..0x7f).contains(b));
                    assert_eq!(
                        is_printable_ascii(&text),
                        expected,
                        "{byte:#x} at {at} of {len}"
                    );
                }
            }
        }
        assert!(is_printable_ascii(b""));
        assert!(is_printable_ascii(
            b" !~ 0123456789 abcdefghijklmnopqrstuvwxyz"
        ));
    }

    #[test]
    fn files_are_bounded_by_the_bytes_read_and_must_be_regular() {
        let dir = std::env::temp_dir().join(format!("mcfed-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let small = dir.join("small");
        std::fs::write(&small, b"0123456789").expect("write");
        let bound = FileBound {
            what: "a test file",
            max_bytes: 10,
        };
        assert_eq!(bound.read(&small).expect("fits"), b"0123456789");
        let tight = FileBound {
            max_bytes: 9,
            ..bound
        };
        let error = tight.read(&small).expect_err("too large");
        assert!(matches!(error, ReadError::TooLarge { .. }), "{error}");
        // A device says nothing true in its metadata (/dev/zero has size
        // 0 and never ends): refused before a byte is read.
        let error = CONFIG_FILE
            .read(Path::new("/dev/zero"))
            .expect_err("a device");
        assert_eq!(
            error.to_string(),
            "/dev/zero: is a character device, not a regular file: refused as a configuration file"
        );
        #[cfg(unix)]
        {
            // Through a symbolic link too.
            let link = dir.join("link");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
            assert!(matches!(
                CONFIG_FILE.read(&link),
                Err(ReadError::NotAFile { .. })
            ));
        }
        #[cfg(unix)]
        {
            // A FIFO would block a plain open until a writer came.
            let fifo = dir.join("fifo");
            let _ = std::fs::remove_file(&fifo);
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &fifo,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .expect("mkfifo");
            let error = CONFIG_FILE.read(&fifo).expect_err("a FIFO");
            assert!(error.to_string().contains("is a FIFO"), "{error}");
        }
        assert!(matches!(
            CONFIG_FILE.read(&dir),
            Err(ReadError::NotAFile { .. }) | Err(ReadError::Io { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
