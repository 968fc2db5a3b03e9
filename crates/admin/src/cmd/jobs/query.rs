//! Which jobs `bjobs` asks for, evaluated at the cluster so that an answer
//! holds only the rows asked for: job ids, finished jobs, states, user,
//! queue, job name (`-J`, with `*` wildcards) and forwarded jobs.

use serde::{Deserialize, Serialize};

use super::JobRow;

/// Whether finished jobs (DONE, EXIT, within CLEAN_PERIOD) are asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Finished {
    /// Only jobs not finished (`bjobs`).
    #[default]
    Not,
    /// Those too (`bjobs -a`; and any job asked for by id).
    Also,
    /// Only them (`bjobs -d`).
    Only,
}

/// The jobs asked for; every filter given must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobsQuery {
    /// Only these jobs (in any state).
    pub ids: Vec<u64>,
    /// Finished jobs too, or only them.
    pub finished: Finished,
    /// Only running jobs (`-r`; with `-p` and `-s`: any of them).
    pub running: bool,
    /// Only pending jobs, PEND and PSUSP (`-p`).
    pub pending: bool,
    /// Only suspended jobs, SSUSP, USUSP and PSUSP (`-s`).
    pub suspended: bool,
    /// Only this user's jobs (`all`: everyone's).
    pub user: Option<String>,
    /// Only this queue's jobs.
    pub queue: Option<String>,
    /// Only jobs of this name (`-J`; `*` matches any characters).
    pub name: Option<String>,
    /// Only jobs forwarded to another cluster (`-fwd`).
    pub forwarded_only: bool,
}

impl JobsQuery {
    /// Whether `row` is asked for.
    pub fn keeps(&self, row: &JobRow) -> bool {
        let stat = row.stat.as_str();
        let by_state = self.running || self.pending || self.suspended;
        let state_ok = !by_state
            || (self.running && stat == "RUN")
            || (self.pending && matches!(stat, "PEND" | "PSUSP"))
            || (self.suspended && matches!(stat, "SSUSP" | "USUSP" | "PSUSP"));
        let finished = row.finish_time.is_some();
        let finished_ok = match self.finished {
            Finished::Not => !finished || self.ids.contains(&row.job_id),
            Finished::Also => true,
            Finished::Only => finished,
        };
        let user_ok = self
            .user
            .as_deref()
            .is_none_or(|user| user == "all" || user == row.user);
        let queue_ok = self.queue.as_deref().is_none_or(|queue| queue == row.queue);
        let name_ok = self
            .name
            .as_deref()
            .is_none_or(|pattern| name_matches(pattern, &row.job_name));
        let id_ok = self.ids.is_empty() || self.ids.contains(&row.job_id);
        let forwarded_ok = !self.forwarded_only || row.forwarded_to.is_some();
        state_ok && finished_ok && user_ok && queue_ok && name_ok && id_ok && forwarded_ok
    }
}

/// Whether `name` matches `pattern`, in which `*` stands for any
/// characters (none included), as `bjobs -J` takes it.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_with_wildcards_as_bjobs_j_takes_them() {
        assert!(name_matches("job", "job"));
        assert!(!name_matches("job", "job1"));
        assert!(name_matches("job*", "job1"));
        assert!(name_matches("*1", "job1"));
        assert!(name_matches("j*b*1", "job1"));
        assert!(name_matches("*", ""));
        assert!(!name_matches("a*a", "a"));
        assert!(name_matches("a*a", "aa"));
        assert!(!name_matches("x*", "job"));
    }
}
