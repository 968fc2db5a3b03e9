//! A host fails, and comes back (seed 001, "Rerun jobs": "A job typically
//! reruns because the host failed"). When a host fails, its jobs lose it:
//! those of RERUNNABLE queues pend again to run from the start, keeping
//! their priority (JPRIORITY, system and ADMIN values, pending time and
//! place: a rerun is not a requeue), and the others exit. The host takes
//! no job until it recovers.

use mcfed_protocol::{JobEvent, SimTime};

use crate::job::JobId;

use super::accounting::Holding;
use super::control::ControlError;
use super::{Cluster, Leaving, Transition};

/// What happens to a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HostEvent {
    /// It fails: its jobs rerun or exit, and it takes no job.
    Fail,
    /// It is back: it takes jobs again.
    Recover,
}

impl std::fmt::Display for HostEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HostEvent::Fail => "host failure",
            HostEvent::Recover => "host recovery",
        })
    }
}

impl Cluster {
    /// `event` happens to host `name` at `now`; what it did to jobs goes to
    /// `transitions`. Returns how many jobs were rerun and how many exited.
    pub fn host_event(
        &mut self,
        now: SimTime,
        name: &str,
        event: HostEvent,
        transitions: &mut Vec<Transition>,
    ) -> Result<(usize, usize), ControlError> {
        self.cycle.now = self.cycle.now.max(now);
        let host = (0..self.hosts.len())
            .find(|&host| self.hosts[host].config.name == name)
            .ok_or_else(|| ControlError::BadChange(format!("no host named `{name}`")))?;
        let failed = self.hosts[host].failed;
        match event {
            HostEvent::Fail if failed => Err(ControlError::BadChange(format!(
                "host `{name}` has failed already"
            ))),
            HostEvent::Fail if self.hosts[host].config.closed => Err(ControlError::BadChange(
                format!("host `{name}` is closed: it runs no job to fail"),
            )),
            HostEvent::Recover if !failed => Err(ControlError::BadChange(format!(
                "host `{name}` has not failed"
            ))),
            HostEvent::Fail => {
                let mut jobs: Vec<JobId> = self.hosts[host].jobs.clone();
                jobs.sort_unstable();
                let mut counts = (0, 0);
                for id in jobs {
                    if self.lose_host(id, now, transitions) {
                        counts.0 += 1;
                    } else {
                        counts.1 += 1;
                    }
                }
                self.hosts.fail(host);
                self.cycle.dirty = true;
                Ok(counts)
            }
            HostEvent::Recover => {
                self.hosts.recover(host);
                self.cycle.dirty = true;
                Ok((0, 0))
            }
        }
    }

    /// Placed job `id` loses its hosts at `now`: it reruns (RERUNNABLE:
    /// `true`) or exits.
    fn lose_host(&mut self, id: JobId, now: SimTime, transitions: &mut Vec<Transition>) -> bool {
        let Some(job) = self.jobs.get(id) else {
            return false;
        };
        let Some(holding) = Holding::of(job) else {
            return false;
        };
        let rerun = self.queues[job.queue].config.rerunnable;
        self.account(id, holding, Holding::Nothing, now);
        self.drop_reservation_of(id);
        if rerun {
            if let Some(job) = self.jobs.get_mut(id) {
                job.unplace();
            }
            self.add_pending(id);
            if let Some(job) = self.jobs.get(id) {
                transitions.push(Transition::of(
                    job,
                    JobEvent::Rerun,
                    now,
                    None,
                    &self.queues,
                ));
            }
        } else {
            let queues = &self.queues;
            let ended = self.jobs.end(id, Leaving::Exited, |job| {
                Transition::ended(job, JobEvent::Killed, now, queues)
            });
            transitions.extend(ended);
        }
        self.break_chunk(id, now, transitions);
        rerun
    }
}
