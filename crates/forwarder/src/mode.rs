//! MC_PLUGIN_SCHEDULE_ENHANCE: which forwarding policy a submission cluster
//! uses.
//!
//! LSF spells the setting as space-separated keywords: `RESOURCE_ONLY` on its
//! own, or `COUNT_PREEMPTABLE` with any of `HIGH_QUEUE_PRIORITY`,
//! `PREEMPTABLE_QUEUE_PRIORITY` and `PENDING_WHEN_NOSLOTS`; each of those
//! three implies `COUNT_PREEMPTABLE`, so it may be left out. Unset is LSF's
//! default policy. That makes one default and nine enhanced modes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A forwarding policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScheduleMode {
    /// MC_PLUGIN_SCHEDULE_ENHANCE unset: the queue with the most available
    /// slots.
    #[default]
    Default,
    /// `RESOURCE_ONLY`: the largest (available slots) - (pending slots).
    ResourceOnly,
    /// `COUNT_PREEMPTABLE`, with its optional keywords.
    CountPreemptable {
        /// `HIGH_QUEUE_PRIORITY`: the highest-priority remote queue first.
        high_queue_priority: bool,
        /// `PREEMPTABLE_QUEUE_PRIORITY`: when preemption is needed, the queue
        /// whose victims have the lowest priority first.
        preemptable_queue_priority: bool,
        /// `PENDING_WHEN_NOSLOTS`: pend at the submission cluster when no queue
        /// has slots even after preemption.
        pending_when_noslots: bool,
    },
}

/// The keywords MC_PLUGIN_SCHEDULE_ENHANCE accepts.
pub const MODE_KEYWORDS: [&str; 5] = [
    "RESOURCE_ONLY",
    "COUNT_PREEMPTABLE",
    "HIGH_QUEUE_PRIORITY",
    "PREEMPTABLE_QUEUE_PRIORITY",
    "PENDING_WHEN_NOSLOTS",
];

/// Why a MC_PLUGIN_SCHEDULE_ENHANCE value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModeParseError {
    /// A word that is not a keyword.
    #[error(
        "unknown MC_PLUGIN_SCHEDULE_ENHANCE keyword `{0}` (valid: RESOURCE_ONLY, COUNT_PREEMPTABLE, HIGH_QUEUE_PRIORITY, PREEMPTABLE_QUEUE_PRIORITY, PENDING_WHEN_NOSLOTS)"
    )]
    UnknownKeyword(String),
    /// A keyword given twice.
    #[error("MC_PLUGIN_SCHEDULE_ENHANCE keyword `{0}` appears twice")]
    Repeated(String),
    /// RESOURCE_ONLY with other keywords.
    #[error("RESOURCE_ONLY cannot be combined with other keywords")]
    ResourceOnlyCombined,
}

impl ScheduleMode {
    /// Every mode: the default and the nine enhanced ones.
    pub fn all() -> Vec<ScheduleMode> {
        let mut modes = vec![ScheduleMode::Default, ScheduleMode::ResourceOnly];
        for bits in 0..8u8 {
            modes.push(ScheduleMode::CountPreemptable {
                high_queue_priority: bits & 1 != 0,
                preemptable_queue_priority: bits & 2 != 0,
                pending_when_noslots: bits & 4 != 0,
            });
        }
        modes
    }

    /// Whether the mode falls back to preemptable slots (COUNT_PREEMPTABLE).
    pub fn counts_preemptable(self) -> bool {
        matches!(self, ScheduleMode::CountPreemptable { .. })
    }

    /// Whether HIGH_QUEUE_PRIORITY is set.
    pub fn high_queue_priority(self) -> bool {
        matches!(
            self,
            ScheduleMode::CountPreemptable {
                high_queue_priority: true,
                ..
            }
        )
    }

    /// Whether PREEMPTABLE_QUEUE_PRIORITY is set.
    pub fn preemptable_queue_priority(self) -> bool {
        matches!(
            self,
            ScheduleMode::CountPreemptable {
                preemptable_queue_priority: true,
                ..
            }
        )
    }

    /// Whether PENDING_WHEN_NOSLOTS is set.
    pub fn pending_when_noslots(self) -> bool {
        matches!(
            self,
            ScheduleMode::CountPreemptable {
                pending_when_noslots: true,
                ..
            }
        )
    }
}

impl FromStr for ScheduleMode {
    type Err = ModeParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut seen: Vec<&str> = Vec::new();
        for word in text.split_whitespace() {
            if !MODE_KEYWORDS.contains(&word) {
                return Err(ModeParseError::UnknownKeyword(word.to_owned()));
            }
            if seen.contains(&word) {
                return Err(ModeParseError::Repeated(word.to_owned()));
            }
            seen.push(word);
        }
        if seen.is_empty() {
            return Ok(ScheduleMode::Default);
        }
        if seen.contains(&"RESOURCE_ONLY") {
            return if seen.len() == 1 {
                Ok(ScheduleMode::ResourceOnly)
            } else {
                Err(ModeParseError::ResourceOnlyCombined)
            };
        }
        Ok(ScheduleMode::CountPreemptable {
            high_queue_priority: seen.contains(&"HIGH_QUEUE_PRIORITY"),
            preemptable_queue_priority: seen.contains(&"PREEMPTABLE_QUEUE_PRIORITY"),
            pending_when_noslots: seen.contains(&"PENDING_WHEN_NOSLOTS"),
        })
    }
}

impl fmt::Display for ScheduleMode {
    /// The canonical spelling: `DEFAULT`, `RESOURCE_ONLY`, or
    /// `COUNT_PREEMPTABLE` followed by its keywords in a fixed order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ScheduleMode::Default => f.write_str("DEFAULT"),
            ScheduleMode::ResourceOnly => f.write_str("RESOURCE_ONLY"),
            ScheduleMode::CountPreemptable {
                high_queue_priority,
                preemptable_queue_priority,
                pending_when_noslots,
            } => {
                f.write_str("COUNT_PREEMPTABLE")?;
                if high_queue_priority {
                    f.write_str(" HIGH_QUEUE_PRIORITY")?;
                }
                if preemptable_queue_priority {
                    f.write_str(" PREEMPTABLE_QUEUE_PRIORITY")?;
                }
                if pending_when_noslots {
                    f.write_str(" PENDING_WHEN_NOSLOTS")?;
                }
                Ok(())
            }
        }
    }
}

impl Serialize for ScheduleMode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ScheduleMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == "DEFAULT" {
            return Ok(ScheduleMode::Default);
        }
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_every_mode() {
        for mode in ScheduleMode::all() {
            let text = mode.to_string();
            let parsed = if text == "DEFAULT" {
                ScheduleMode::Default
            } else {
                text.parse().expect("canonical spelling parses")
            };
            assert_eq!(parsed, mode, "{text}");
        }
        assert_eq!(ScheduleMode::all().len(), 10);
    }

    #[test]
    fn optional_keywords_imply_count_preemptable() {
        let mode: ScheduleMode = "PENDING_WHEN_NOSLOTS HIGH_QUEUE_PRIORITY"
            .parse()
            .expect("valid");
        assert_eq!(
            mode,
            ScheduleMode::CountPreemptable {
                high_queue_priority: true,
                preemptable_queue_priority: false,
                pending_when_noslots: true
            }
        );
        assert_eq!(
            mode.to_string(),
            "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PENDING_WHEN_NOSLOTS"
        );
    }

    #[test]
    fn refuses_bad_values() {
        assert_eq!(
            "COUNT_PREEMPTABLE HIGH_PRIORITY".parse::<ScheduleMode>(),
            Err(ModeParseError::UnknownKeyword("HIGH_PRIORITY".into()))
        );
        assert_eq!(
            "RESOURCE_ONLY COUNT_PREEMPTABLE".parse::<ScheduleMode>(),
            Err(ModeParseError::ResourceOnlyCombined)
        );
        assert_eq!(
            "COUNT_PREEMPTABLE COUNT_PREEMPTABLE".parse::<ScheduleMode>(),
            Err(ModeParseError::Repeated("COUNT_PREEMPTABLE".into()))
        );
        assert!("count_preemptable".parse::<ScheduleMode>().is_err());
    }
}
