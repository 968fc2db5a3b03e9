//! LSF's PREEMPTION queue parameter and the preemption relation it defines.
//!
//! Seed `003_f223f39848659bbb.txt`: a queue may be PREEMPTIVE (optionally
//! naming the lower-priority queues it preempts, each with an optional
//! preference number, `PREEMPTIVE[low+2 normal]`) and/or PREEMPTABLE
//! (optionally naming the higher-priority queues allowed to preempt it).
//!
//! The relation, for a would-be preemptor `p` and victim `v`:
//! - `v` is `PREEMPTABLE[list]`: only queues in the list may preempt it;
//! - otherwise `p` is `PREEMPTIVE[list]` with `v` in the list;
//! - or `p` is `PREEMPTIVE` with no list and `v` has a lower priority;
//! - or `v` is `PREEMPTABLE` with no list and `p` has a higher priority.
//!
//! So in the seed's case study (A 99; B 10 preemptive and preemptable; C 1)
//! A preempts B, B preempts C, and A cannot preempt C.
//!
//! The lsb.params and lsb.queues parameters that shape preemption are here
//! too: PREEMPT_FOR ([`PreemptFor`]: which slot limits ignore suspended
//! jobs, and preempting the shortest-running job), and NO_PREEMPT_RUN_TIME
//! and NO_PREEMPT_FINISH_TIME ([`PreemptGuards`]: jobs protected from
//! preemption).

use std::fmt;
use std::str::FromStr;

use mcfed_protocol::QueueName;

mod guards;
mod preempt_for;
#[cfg(test)]
mod tests;

pub use guards::{PreemptGuard, PreemptGuardParseError, PreemptGuards, Protection};
pub use preempt_for::{PreemptFor, PreemptForParseError};

/// One queue named in a PREEMPTIVE list, with its preference number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptTarget {
    /// The queue that may be preempted.
    pub queue: QueueName,
    /// `q+N`: a higher N is preferred for preemption; `None` comes after any
    /// number.
    pub preference: Option<u32>,
}

/// Which queues a PREEMPTIVE or PREEMPTABLE keyword covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope<T> {
    /// No list: every queue of lower (for PREEMPTIVE) or higher (for
    /// PREEMPTABLE) priority.
    ByPriority,
    /// Only the listed queues.
    Listed(Vec<T>),
}

/// A queue's PREEMPTION parameter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preemption {
    /// `PREEMPTIVE` or `PREEMPTIVE[...]`.
    pub preemptive: Option<Scope<PreemptTarget>>,
    /// `PREEMPTABLE` or `PREEMPTABLE[...]`.
    pub preemptable: Option<Scope<QueueName>>,
}

impl Preemption {
    /// Whether either keyword is present.
    pub fn is_enabled(&self) -> bool {
        self.preemptive.is_some() || self.preemptable.is_some()
    }
}

/// Why a PREEMPTION value does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreemptionParseError {
    /// A word other than PREEMPTIVE or PREEMPTABLE.
    #[error("unknown keyword `{0}` (expected PREEMPTIVE or PREEMPTABLE)")]
    UnknownKeyword(String),
    /// A keyword appears twice.
    #[error("`{0}` appears more than once")]
    Repeated(&'static str),
    /// A `[` without its `]`.
    #[error("`[` after {0} is not closed")]
    Unclosed(&'static str),
    /// A bad queue name or preference number in a list.
    #[error("bad entry `{entry}` in {keyword}[...]: {why}")]
    BadEntry {
        /// The keyword whose list holds the entry.
        keyword: &'static str,
        /// The entry as written.
        entry: String,
        /// What is wrong with it.
        why: String,
    },
}

const PREEMPTIVE: &str = "PREEMPTIVE";
const PREEMPTABLE: &str = "PREEMPTABLE";

impl FromStr for Preemption {
    type Err = PreemptionParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut result = Preemption::default();
        let mut rest = text.trim();
        while !rest.is_empty() {
            let word_end = rest
                .find(|c: char| c == '[' || c.is_whitespace())
                .unwrap_or(rest.len());
            let (word, after) = rest.split_at(word_end);
            let keyword = match word {
                PREEMPTIVE => PREEMPTIVE,
                PREEMPTABLE => PREEMPTABLE,
                other => return Err(PreemptionParseError::UnknownKeyword(other.to_owned())),
            };
            let (list, after) = match after.strip_prefix('[') {
                Some(inner) => {
                    let close = inner
                        .find(']')
                        .ok_or(PreemptionParseError::Unclosed(keyword))?;
                    (Some(&inner[..close]), &inner[close + 1..])
                }
                None => (None, after),
            };
            rest = after.trim_start();
            if keyword == PREEMPTIVE {
                if result.preemptive.is_some() {
                    return Err(PreemptionParseError::Repeated(PREEMPTIVE));
                }
                result.preemptive = Some(match list {
                    None => Scope::ByPriority,
                    Some(list) => Scope::Listed(parse_targets(list)?),
                });
            } else {
                if result.preemptable.is_some() {
                    return Err(PreemptionParseError::Repeated(PREEMPTABLE));
                }
                result.preemptable = Some(match list {
                    None => Scope::ByPriority,
                    Some(list) => Scope::Listed(
                        list.split_whitespace()
                            .map(|entry| parse_queue(PREEMPTABLE, entry))
                            .collect::<Result<_, _>>()?,
                    ),
                });
            }
        }
        Ok(result)
    }
}

fn parse_queue(keyword: &'static str, entry: &str) -> Result<QueueName, PreemptionParseError> {
    QueueName::new(entry).map_err(|error| PreemptionParseError::BadEntry {
        keyword,
        entry: entry.to_owned(),
        why: error.to_string(),
    })
}

fn parse_targets(list: &str) -> Result<Vec<PreemptTarget>, PreemptionParseError> {
    list.split_whitespace()
        .map(|entry| {
            let (queue, preference) = match entry.split_once('+') {
                Some((queue, number)) => {
                    let preference =
                        number
                            .parse::<u32>()
                            .map_err(|_| PreemptionParseError::BadEntry {
                                keyword: PREEMPTIVE,
                                entry: entry.to_owned(),
                                why: format!("`{number}` is not a preference number"),
                            })?;
                    (queue, Some(preference))
                }
                None => (entry, None),
            };
            Ok(PreemptTarget {
                queue: parse_queue(PREEMPTIVE, queue)?,
                preference,
            })
        })
        .collect()
}

impl fmt::Display for Preemption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        if let Some(scope) = &self.preemptive {
            f.write_str(PREEMPTIVE)?;
            if let Scope::Listed(targets) = scope {
                let entries: Vec<String> = targets
                    .iter()
                    .map(|target| match target.preference {
                        Some(preference) => format!("{}+{preference}", target.queue),
                        None => target.queue.to_string(),
                    })
                    .collect();
                write!(f, "[{}]", entries.join(" "))?;
            }
            first = false;
        }
        if let Some(scope) = &self.preemptable {
            if !first {
                f.write_str(" ")?;
            }
            f.write_str(PREEMPTABLE)?;
            if let Scope::Listed(queues) = scope {
                let entries: Vec<&str> = queues.iter().map(QueueName::as_str).collect();
                write!(f, "[{}]", entries.join(" "))?;
            }
        }
        Ok(())
    }
}

/// The queue facts the relation needs: name, priority and PREEMPTION.
#[derive(Clone, Copy, Debug)]
pub struct QueueFacts<'a> {
    /// The queue's name.
    pub name: &'a QueueName,
    /// The queue's PRIORITY.
    pub priority: u32,
    /// The queue's PREEMPTION.
    pub preemption: &'a Preemption,
}

/// Whether jobs of `preemptor` may preempt running jobs of `victim`.
pub fn can_preempt(preemptor: QueueFacts<'_>, victim: QueueFacts<'_>) -> bool {
    if preemptor.name == victim.name {
        return false;
    }
    if let Some(Scope::Listed(allowed)) = &victim.preemption.preemptable {
        return allowed.contains(preemptor.name);
    }
    match &preemptor.preemption.preemptive {
        Some(Scope::Listed(targets)) if targets.iter().any(|t| &t.queue == victim.name) => {
            return true;
        }
        Some(Scope::ByPriority) if victim.priority < preemptor.priority => return true,
        _ => {}
    }
    matches!(victim.preemption.preemptable, Some(Scope::ByPriority))
        && preemptor.priority > victim.priority
}

/// The preference number `preemptor` gives `victim` in its PREEMPTIVE list.
pub fn preference(preemptor: &Preemption, victim: &QueueName) -> Option<u32> {
    match &preemptor.preemptive {
        Some(Scope::Listed(targets)) => targets
            .iter()
            .find(|target| &target.queue == victim)
            .and_then(|target| target.preference),
        _ => None,
    }
}
