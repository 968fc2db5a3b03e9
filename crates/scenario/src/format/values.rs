//! The value types of scenario files with LSF's spellings: durations,
//! `end` (a duration or `"drain"`), word lists, IMPT_JOBBKLG (`infinit`),
//! `Y`/`N`, and LSF values written as strings or numbers.

use std::fmt;
use std::time::Duration;

use mcfed_protocol::bounds::{self, Bound};
use mcfed_protocol::words;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

/// The longest time or duration a scenario may hold. Every bound on
/// one (`end` and every `at`, a run time or limit, an update interval) is
/// within it, so a longer one — `1e20` seconds, `"99999999999h"` — is
/// refused where it is read, whatever its field, with its line, before
/// anything adds to it or converts it.
pub const MAX_DURATION: Bound = Bound {
    what: "duration",
    min: 0,
    max: bounds::SCENARIO_TIME.max,
    why: "the longest time or duration a scenario may hold",
};

/// `value` if it is within [`MAX_DURATION`].
fn bounded<E: de::Error>(value: Duration) -> Result<Duration, E> {
    MAX_DURATION
        .check_duration(value)
        .map_err(|error| E::custom(error))
}

/// The error for a duration beyond [`MAX_DURATION`], with the value as
/// written (`1e20 seconds`, `` `99999999999999999999h` ``).
fn too_long<E: de::Error>(written: String) -> E {
    match MAX_DURATION.check_duration(Duration::MAX) {
        Err(mut error) => {
            error.value = written;
            E::custom(error)
        }
        Ok(_) => E::custom(format!("{written} is too long a duration")),
    }
}

/// A number of seconds from a file: from zero, finite, and within
/// [`MAX_DURATION`] (a huge number is refused, never converted).
fn from_seconds<E: de::Error>(value: f64) -> Result<Duration, E> {
    if value.is_nan() || value < 0.0 {
        return Err(E::custom(format!(
            "a duration is a number of seconds from 0, not {}",
            if value.abs() >= 1e15 {
                format!("{value:e}")
            } else {
                value.to_string()
            }
        )));
    }
    match Duration::try_from_secs_f64(value) {
        Ok(duration) => bounded(duration),
        Err(_) => Err(too_long(words::seconds(value))),
    }
}

/// A duration written as text (`"30s"`, `"1h 30m"`), within
/// [`MAX_DURATION`]; `what` says what else the text could have been.
fn from_text<E: de::Error>(value: &str, what: &str) -> Result<Duration, E> {
    match humantime::parse_duration(value) {
        Ok(duration) => bounded(duration),
        Err(humantime::DurationError::NumberOverflow) => Err(too_long(format!("`{value}`"))),
        Err(error) => Err(E::custom(format!("`{value}` is not {what}: {error}"))),
    }
}

/// A whole number of seconds from a file, within [`MAX_DURATION`].
fn from_integer<E: de::Error>(value: i64) -> Result<Duration, E> {
    match u64::try_from(value) {
        Ok(secs) => bounded(Duration::from_secs(secs)),
        Err(_) => Err(E::custom(format!(
            "a duration cannot be negative ({value})"
        ))),
    }
}

/// When a run ends: at a time, or once it has drained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndValue {
    /// At this emulated time.
    At(Duration),
    /// When nothing is left to do.
    Drain,
}

impl<'de> Deserialize<'de> for EndValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EndVisitor;
        impl Visitor<'_> for EndVisitor {
            type Value = EndValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"drain\" or a duration such as \"30s\", \"5m\", \"1h 30m\"")
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<EndValue, E> {
                from_integer(value).map(EndValue::At)
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<EndValue, E> {
                bounded(Duration::from_secs(value)).map(EndValue::At)
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<EndValue, E> {
                from_seconds(value).map(EndValue::At)
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<EndValue, E> {
                if value.trim().eq_ignore_ascii_case("drain") {
                    return Ok(EndValue::Drain);
                }
                from_text(value, "\"drain\" nor a duration").map(EndValue::At)
            }
        }
        deserializer.deserialize_any(EndVisitor)
    }
}

/// A duration: `"30s"`, `"1h 30m"`, or a number of seconds, at most
/// [`MAX_DURATION`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationValue(pub Duration);

impl<'de> Deserialize<'de> for DurationValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurationVisitor;
        impl Visitor<'_> for DurationVisitor {
            type Value = DurationValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration such as \"30s\", \"5m\", \"1h 30m\", or a number of seconds",
                )
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<DurationValue, E> {
                from_integer(value).map(DurationValue)
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<DurationValue, E> {
                bounded(Duration::from_secs(value)).map(DurationValue)
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<DurationValue, E> {
                from_seconds(value).map(DurationValue)
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<DurationValue, E> {
                from_text(value, "a duration").map(DurationValue)
            }
        }
        deserializer.deserialize_any(DurationVisitor)
    }
}

/// A list written either as a TOML array of strings or, as in LSF's files,
/// as one string of space-separated words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WordList(pub Vec<String>);

impl<'de> Deserialize<'de> for WordList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WordsVisitor;
        impl<'de> Visitor<'de> for WordsVisitor {
            type Value = WordList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of strings or a string of space-separated words")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<WordList, E> {
                Ok(WordList(
                    value.split_whitespace().map(str::to_owned).collect(),
                ))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WordList, A::Error> {
                let mut words = Vec::new();
                while let Some(word) = seq.next_element::<String>()? {
                    words.push(word);
                }
                Ok(WordList(words))
            }
        }
        deserializer.deserialize_any(WordsVisitor)
    }
}

/// IMPT_JOBBKLG: a number of jobs, or `infinit` for no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backlog(pub Option<u32>);

impl<'de> Deserialize<'de> for Backlog {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BacklogVisitor;
        impl Visitor<'_> for BacklogVisitor {
            type Value = Backlog;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative number of jobs or \"infinit\"")
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<Backlog, E> {
                u32::try_from(value)
                    .map(|limit| Backlog(Some(limit)))
                    .map_err(|_| E::custom(format!("IMPT_JOBBKLG must be a non-negative number of jobs or \"infinit\" (got {value})")))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<Backlog, E> {
                u32::try_from(value)
                    .map(|limit| Backlog(Some(limit)))
                    .map_err(|_| E::custom(format!("IMPT_JOBBKLG {value} is too large")))
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<Backlog, E> {
                if value.eq_ignore_ascii_case("infinit") {
                    Ok(Backlog(None))
                } else {
                    Err(E::custom(format!(
                        "IMPT_JOBBKLG must be a number or \"infinit\" (got \"{value}\")"
                    )))
                }
            }
        }
        deserializer.deserialize_any(BacklogVisitor)
    }
}

/// `Y`/`N` as LSF writes it, or a TOML boolean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct YesNo(pub bool);

impl<'de> Deserialize<'de> for YesNo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct YesNoVisitor;
        impl Visitor<'_> for YesNoVisitor {
            type Value = YesNo;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"Y\", \"N\" or a boolean")
            }
            fn visit_bool<E: de::Error>(self, value: bool) -> Result<YesNo, E> {
                Ok(YesNo(value))
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<YesNo, E> {
                match value {
                    "Y" | "y" | "YES" | "yes" => Ok(YesNo(true)),
                    "N" | "n" | "NO" | "no" => Ok(YesNo(false)),
                    other => Err(E::custom(format!(
                        "expected \"Y\" or \"N\", not \"{other}\""
                    ))),
                }
            }
        }
        deserializer.deserialize_any(YesNoVisitor)
    }
}

/// A value LSF writes bare (`NO_PREEMPT_RUN_TIME=60`), kept as text so its
/// own parser can say what is wrong with it; TOML numbers are accepted and
/// turned into text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LsfValue(pub String);

impl<'de> Deserialize<'de> for LsfValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl Visitor<'_> for TextVisitor {
            type Value = LsfValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string such as \"90m\" or \"50%\"")
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<LsfValue, E> {
                Ok(LsfValue(value.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, value: i64) -> Result<LsfValue, E> {
                Ok(LsfValue(value.to_string()))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<LsfValue, E> {
                Ok(LsfValue(value.to_string()))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<LsfValue, E> {
                Ok(LsfValue(value.to_string()))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}
