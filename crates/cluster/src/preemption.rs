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
use std::time::Duration;

use mcfed_protocol::QueueName;

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

/// PREEMPT_FOR (lsb.params): which job slot limits count only running jobs
/// when preemption is enabled, and whether the shortest-running job is the
/// one preempted (seed 003's second table and its victim rows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreemptFor {
    /// GROUP_JLP: a user group's per-processor limit counts running jobs
    /// only.
    pub group_jlp: bool,
    /// GROUP_MAX: a user group's MAX_JOBS counts running jobs only.
    pub group_max: bool,
    /// HOST_JLU: a host's per-user limit (JL/U) counts running jobs only.
    pub host_jlu: bool,
    /// USER_JLP: a user's per-processor limit counts running jobs only.
    pub user_jlp: bool,
    /// LEAST_RUN_TIME: preempt the job that has run for the shortest time.
    pub least_run_time: bool,
}

/// Why a PREEMPT_FOR value does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreemptForParseError {
    /// A keyword mcfed does not know.
    #[error(
        "unknown PREEMPT_FOR keyword `{0}` (expected GROUP_JLP, GROUP_MAX, HOST_JLU, USER_JLP or LEAST_RUN_TIME)"
    )]
    Unknown(String),
    /// A keyword of LSF that mcfed does not emulate.
    #[error("PREEMPT_FOR keyword `{0}` is not emulated by mcfed")]
    NotEmulated(String),
}

impl FromStr for PreemptFor {
    type Err = PreemptForParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut result = PreemptFor::default();
        for word in text.split_whitespace() {
            match word {
                "GROUP_JLP" => result.group_jlp = true,
                "GROUP_MAX" => result.group_max = true,
                "HOST_JLU" => result.host_jlu = true,
                "USER_JLP" => result.user_jlp = true,
                "LEAST_RUN_TIME" => result.least_run_time = true,
                "MINI_JOB" | "OPTIMAL_MINI_JOB" | "BUCKET_JOB" => {
                    return Err(PreemptForParseError::NotEmulated(word.to_owned()));
                }
                other => return Err(PreemptForParseError::Unknown(other.to_owned())),
            }
        }
        Ok(result)
    }
}

impl fmt::Display for PreemptFor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words: Vec<&str> = [
            (self.group_jlp, "GROUP_JLP"),
            (self.group_max, "GROUP_MAX"),
            (self.host_jlu, "HOST_JLU"),
            (self.user_jlp, "USER_JLP"),
            (self.least_run_time, "LEAST_RUN_TIME"),
        ]
        .into_iter()
        .filter_map(|(set, word)| set.then_some(word))
        .collect();
        f.write_str(&words.join(" "))
    }
}

/// A NO_PREEMPT_RUN_TIME or NO_PREEMPT_FINISH_TIME value: a time, or a
/// percentage of the job's run limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreemptGuard {
    /// A length of time.
    Time(Duration),
    /// A percentage (1 to 100) of the job's run limit (`bsub -W`); jobs
    /// without one are not protected.
    PercentOfRunLimit(u32),
}

/// Why a NO_PREEMPT_* value does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreemptGuardParseError {
    /// A bare number: LSF counts minutes, mcfed wants the unit written.
    #[error(
        "`{0}` has no unit: write minutes as \"{0}m\" (LSF counts minutes), or a percentage as \"{0}%\""
    )]
    NoUnit(String),
    /// Not a duration.
    #[error("`{0}` is neither a duration (\"90m\", \"2h\") nor a percentage (\"50%\")")]
    Bad(String),
    /// A percentage out of 1..=100.
    #[error("`{0}`: a percentage must be between 1 and 100")]
    BadPercent(String),
}

impl FromStr for PreemptGuard {
    type Err = PreemptGuardParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if let Some(number) = text.strip_suffix('%') {
            return number
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|percent| (1..=100).contains(percent))
                .map(PreemptGuard::PercentOfRunLimit)
                .ok_or_else(|| PreemptGuardParseError::BadPercent(text.to_owned()));
        }
        if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
            return Err(PreemptGuardParseError::NoUnit(text.to_owned()));
        }
        humantime::parse_duration(text)
            .map(PreemptGuard::Time)
            .map_err(|_| PreemptGuardParseError::Bad(text.to_owned()))
    }
}

impl fmt::Display for PreemptGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PreemptGuard::Time(time) => write!(f, "{}", humantime::format_duration(*time)),
            PreemptGuard::PercentOfRunLimit(percent) => write!(f, "{percent}%"),
        }
    }
}

impl PreemptGuard {
    /// The guard as a time for a job with run limit `run_limit`, if it
    /// applies to that job.
    fn time(self, run_limit: Option<Duration>) -> Option<Duration> {
        match self {
            PreemptGuard::Time(time) => Some(time),
            PreemptGuard::PercentOfRunLimit(percent) => {
                run_limit.map(|limit| limit * percent / 100)
            }
        }
    }
}

/// NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME, as set at one level
/// (a queue, or lsb.params).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreemptGuards {
    /// NO_PREEMPT_RUN_TIME: jobs that have run this long are not preempted.
    pub run_time: Option<PreemptGuard>,
    /// NO_PREEMPT_FINISH_TIME: jobs with a run limit that will reach it
    /// within this time are not preempted.
    pub finish_time: Option<PreemptGuard>,
}

/// Why a running job may not be preempted now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// It has run at least NO_PREEMPT_RUN_TIME.
    RunTime,
    /// It will reach its run limit within NO_PREEMPT_FINISH_TIME.
    FinishTime,
}

impl PreemptGuards {
    /// These values over `below`'s: a queue's over the cluster's.
    pub fn over(&self, below: &PreemptGuards) -> PreemptGuards {
        PreemptGuards {
            run_time: self.run_time.or(below.run_time),
            finish_time: self.finish_time.or(below.finish_time),
        }
    }

    /// Whether a job that has run for `ran` (suspensions excluded) with run
    /// limit `run_limit` is protected, and by which guard.
    pub fn protection(&self, ran: Duration, run_limit: Option<Duration>) -> Option<Protection> {
        if let Some(limit) = self.run_time.and_then(|guard| guard.time(run_limit)) {
            if ran >= limit {
                return Some(Protection::RunTime);
            }
        }
        if let (Some(window), Some(run_limit)) = (
            self.finish_time.and_then(|guard| guard.time(run_limit)),
            run_limit,
        ) {
            if run_limit.saturating_sub(ran) <= window {
                return Some(Protection::FinishTime);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(name: &str) -> QueueName {
        QueueName::new(name).expect("valid")
    }

    fn parse(text: &str) -> Preemption {
        text.parse().expect("parses")
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(parse(""), Preemption::default());
        assert_eq!(parse("PREEMPTIVE").preemptive, Some(Scope::ByPriority));
        let both = parse("PREEMPTIVE[low+2 normal] PREEMPTABLE[top]");
        assert_eq!(
            both.preemptive,
            Some(Scope::Listed(vec![
                PreemptTarget {
                    queue: queue("low"),
                    preference: Some(2)
                },
                PreemptTarget {
                    queue: queue("normal"),
                    preference: None
                },
            ]))
        );
        assert_eq!(both.preemptable, Some(Scope::Listed(vec![queue("top")])));
        assert_eq!(
            both.to_string(),
            "PREEMPTIVE[low+2 normal] PREEMPTABLE[top]"
        );
    }

    #[test]
    fn refuses_bad_values() {
        assert!(matches!(
            "PREEMPT".parse::<Preemption>(),
            Err(PreemptionParseError::UnknownKeyword(_))
        ));
        assert!(matches!(
            "PREEMPTIVE[low".parse::<Preemption>(),
            Err(PreemptionParseError::Unclosed(_))
        ));
        assert!(matches!(
            "PREEMPTIVE[low+x]".parse::<Preemption>(),
            Err(PreemptionParseError::BadEntry { .. })
        ));
        assert!(matches!(
            "PREEMPTIVE PREEMPTIVE".parse::<Preemption>(),
            Err(PreemptionParseError::Repeated(_))
        ));
    }

    /// Seed 003's case study: A 99; B 10, preemptive and preemptable; C 1.
    #[test]
    fn three_queue_case_study() {
        let (a, b, c) = (queue("A"), queue("B"), queue("C"));
        let none = Preemption::default();
        let both = parse("PREEMPTIVE PREEMPTABLE");
        let facts_a = QueueFacts {
            name: &a,
            priority: 99,
            preemption: &none,
        };
        let facts_b = QueueFacts {
            name: &b,
            priority: 10,
            preemption: &both,
        };
        let facts_c = QueueFacts {
            name: &c,
            priority: 1,
            preemption: &none,
        };
        assert!(can_preempt(facts_a, facts_b), "A preempts B");
        assert!(can_preempt(facts_b, facts_c), "B preempts C");
        assert!(!can_preempt(facts_a, facts_c), "A cannot preempt C");
        assert!(!can_preempt(facts_b, facts_a));
        assert!(!can_preempt(facts_c, facts_b));
    }

    #[test]
    fn preemptable_list_restricts_preemptors() {
        let (high, other, low) = (queue("high"), queue("other"), queue("low"));
        let preemptive = parse("PREEMPTIVE");
        let only_high = parse("PREEMPTABLE[high]");
        let facts = |name, priority, preemption| QueueFacts {
            name,
            priority,
            preemption,
        };
        assert!(can_preempt(
            facts(&high, 50, &preemptive),
            facts(&low, 1, &only_high)
        ));
        assert!(!can_preempt(
            facts(&other, 60, &preemptive),
            facts(&low, 1, &only_high)
        ));
    }

    #[test]
    fn preference_numbers() {
        let p = parse("PREEMPTIVE[low+2 normal]");
        assert_eq!(preference(&p, &queue("low")), Some(2));
        assert_eq!(preference(&p, &queue("normal")), None);
        assert_eq!(preference(&p, &queue("absent")), None);
    }

    #[test]
    fn preempt_for_parses_every_keyword() {
        let all: PreemptFor = "GROUP_JLP GROUP_MAX HOST_JLU USER_JLP LEAST_RUN_TIME"
            .parse()
            .expect("valid");
        assert!(all.group_jlp && all.group_max && all.host_jlu && all.user_jlp);
        assert!(all.least_run_time);
        assert_eq!(
            all.to_string(),
            "GROUP_JLP GROUP_MAX HOST_JLU USER_JLP LEAST_RUN_TIME"
        );
        assert_eq!("".parse::<PreemptFor>(), Ok(PreemptFor::default()));
        assert!(matches!(
            "MINI_JOB".parse::<PreemptFor>(),
            Err(PreemptForParseError::NotEmulated(_))
        ));
        assert!(matches!(
            "GROUP".parse::<PreemptFor>(),
            Err(PreemptForParseError::Unknown(_))
        ));
    }

    #[test]
    fn guards_parse_times_and_percentages() {
        assert_eq!(
            "90m".parse(),
            Ok(PreemptGuard::Time(Duration::from_secs(5400)))
        );
        assert_eq!("50%".parse(), Ok(PreemptGuard::PercentOfRunLimit(50)));
        assert!(matches!(
            "60".parse::<PreemptGuard>(),
            Err(PreemptGuardParseError::NoUnit(_))
        ));
        assert!(matches!(
            "150%".parse::<PreemptGuard>(),
            Err(PreemptGuardParseError::BadPercent(_))
        ));
        assert!(matches!(
            "soon".parse::<PreemptGuard>(),
            Err(PreemptGuardParseError::Bad(_))
        ));
    }

    #[test]
    fn run_time_guard_protects_jobs_that_ran_long_enough() {
        let minutes = |m: u64| Duration::from_secs(m * 60);
        let guards = PreemptGuards {
            run_time: Some(PreemptGuard::Time(minutes(30))),
            finish_time: None,
        };
        assert_eq!(guards.protection(minutes(29), None), None);
        assert_eq!(
            guards.protection(minutes(30), None),
            Some(Protection::RunTime)
        );
        let percent = PreemptGuards {
            run_time: Some(PreemptGuard::PercentOfRunLimit(50)),
            finish_time: None,
        };
        assert_eq!(percent.protection(minutes(100), None), None, "no run limit");
        assert_eq!(
            percent.protection(minutes(30), Some(minutes(60))),
            Some(Protection::RunTime)
        );
        assert_eq!(percent.protection(minutes(29), Some(minutes(60))), None);
    }

    #[test]
    fn finish_time_guard_protects_jobs_about_to_finish() {
        let minutes = |m: u64| Duration::from_secs(m * 60);
        let guards = PreemptGuards {
            run_time: None,
            finish_time: Some(PreemptGuard::Time(minutes(10))),
        };
        assert_eq!(guards.protection(minutes(55), None), None, "no run limit");
        assert_eq!(guards.protection(minutes(49), Some(minutes(60))), None);
        assert_eq!(
            guards.protection(minutes(50), Some(minutes(60))),
            Some(Protection::FinishTime)
        );
        let percent = PreemptGuards {
            run_time: None,
            finish_time: Some(PreemptGuard::PercentOfRunLimit(25)),
        };
        assert_eq!(
            percent.protection(minutes(46), Some(minutes(60))),
            Some(Protection::FinishTime)
        );
        assert_eq!(percent.protection(minutes(44), Some(minutes(60))), None);
        let queue = PreemptGuards {
            run_time: Some(PreemptGuard::Time(minutes(5))),
            finish_time: None,
        };
        let merged = queue.over(&guards);
        assert_eq!(merged.run_time, queue.run_time);
        assert_eq!(merged.finish_time, guards.finish_time);
    }
}
