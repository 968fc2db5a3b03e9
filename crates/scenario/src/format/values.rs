//! The value types of scenario files with LSF's spellings: durations,
//! `end` (a duration or `"drain"`), word lists, IMPT_JOBBKLG (`infinit`),
//! `Y`/`N`, and LSF values written as strings or numbers.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

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
                u64::try_from(value)
                    .map(|secs| EndValue::At(Duration::from_secs(secs)))
                    .map_err(|_| E::custom(format!("a duration cannot be negative ({value})")))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<EndValue, E> {
                Ok(EndValue::At(Duration::from_secs(value)))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<EndValue, E> {
                if (0.0..1e15).contains(&value) {
                    Ok(EndValue::At(Duration::from_secs_f64(value)))
                } else {
                    Err(E::custom(format!(
                        "a duration must be a non-negative number of seconds ({value})"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<EndValue, E> {
                if value.trim().eq_ignore_ascii_case("drain") {
                    return Ok(EndValue::Drain);
                }
                humantime::parse_duration(value)
                    .map(EndValue::At)
                    .map_err(|error| {
                        E::custom(format!(
                            "`{value}` is neither \"drain\" nor a duration: {error}"
                        ))
                    })
            }
        }
        deserializer.deserialize_any(EndVisitor)
    }
}

/// A duration: `"30s"`, `"1h 30m"`, or a number of seconds.
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
                u64::try_from(value)
                    .map(|secs| DurationValue(Duration::from_secs(secs)))
                    .map_err(|_| E::custom(format!("a duration cannot be negative ({value})")))
            }
            fn visit_u64<E: de::Error>(self, value: u64) -> Result<DurationValue, E> {
                Ok(DurationValue(Duration::from_secs(value)))
            }
            fn visit_f64<E: de::Error>(self, value: f64) -> Result<DurationValue, E> {
                if value.is_finite() && value >= 0.0 {
                    Ok(DurationValue(Duration::from_secs_f64(value)))
                } else {
                    Err(E::custom(format!(
                        "a duration must be a non-negative number of seconds ({value})"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, value: &str) -> Result<DurationValue, E> {
                humantime::parse_duration(value)
                    .map(DurationValue)
                    .map_err(|error| E::custom(format!("`{value}` is not a duration: {error}")))
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
