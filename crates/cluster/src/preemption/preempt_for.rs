//! PREEMPT_FOR (lsb.params): which job slot limits ignore suspended jobs,
//! and whether the shortest-running job is preempted.

use std::fmt;
use std::str::FromStr;

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
