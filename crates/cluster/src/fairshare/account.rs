//! One user's fairshare account in one queue, kept in O(1) per change as
//! the user's jobs start, stop and finish.

use mcfed_protocol::SimTime;

use super::decay::{DecayingTotal, MILLIS_PER_HOUR};

/// What a running job contributes to its user's account.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JobUse {
    /// Its slots.
    pub slots: u32,
    /// Its CPU utilisation (CPU hours per slot-hour).
    pub cpu_utilisation: f32,
    /// Its memory, MB.
    pub memory_mb: u64,
    /// When it last started or resumed.
    pub running_since: SimTime,
    /// How long it ran before that.
    pub ran_before: std::time::Duration,
}

impl JobUse {
    fn run_offset_ms(&self) -> i128 {
        i128::from(self.running_since.as_millis()) - self.ran_before.as_millis() as i128
    }

    fn cpu_hours_per_hour(&self) -> f64 {
        f64::from(self.slots) * f64::from(self.cpu_utilisation)
    }
}

/// One user's fairshare figures in one queue, kept up to date as the user's
/// jobs start, stop and finish.
#[derive(Clone, Debug, Default)]
pub struct ShareAccount {
    /// The user's shares.
    pub shares: u32,
    /// Running jobs.
    pub running_jobs: u32,
    /// Slots of running jobs (the formula's job_slots).
    pub running_slots: u32,
    /// Memory of running jobs, MB.
    pub memory_mb: u64,
    /// Sum over running jobs of (last start − run time before it), in ms:
    /// the run time of running jobs at `now` is
    /// `running_jobs * now − run_offset`.
    run_offset_ms: i128,
    /// Decayed CPU hours; grows at the CPU hours per hour of the running
    /// jobs (slots × CPU utilisation).
    cpu: DecayingTotal,
}

impl ShareAccount {
    /// An account with `shares` shares and no use.
    pub fn new(shares: u32) -> Self {
        ShareAccount {
            shares,
            ..ShareAccount::default()
        }
    }

    /// `job` starts (or resumes) running at `job.running_since`.
    pub fn job_runs(&mut self, job: &JobUse, hist_hours: f64) {
        self.running_jobs += 1;
        self.running_slots += job.slots;
        self.memory_mb += job.memory_mb;
        self.run_offset_ms += job.run_offset_ms();
        self.cpu
            .add_rate(job.running_since, job.cpu_hours_per_hour(), hist_hours);
    }

    /// `job` stops running at `now` (suspended, finished or terminated). Its
    /// CPU time stays in the history.
    pub fn job_stops(&mut self, now: SimTime, job: &JobUse, hist_hours: f64) {
        self.running_jobs = self.running_jobs.saturating_sub(1);
        self.running_slots = self.running_slots.saturating_sub(job.slots);
        self.memory_mb = self.memory_mb.saturating_sub(job.memory_mb);
        self.run_offset_ms -= job.run_offset_ms();
        self.cpu
            .add_rate(now, -job.cpu_hours_per_hour(), hist_hours);
    }

    /// Decayed CPU time at `now`, hours.
    pub fn cpu_time(&self, now: SimTime, hist_hours: f64) -> f64 {
        self.cpu.value_at(now, hist_hours)
    }

    /// Run time of running jobs at `now`, hours.
    pub fn run_time(&self, now: SimTime) -> f64 {
        let total =
            i128::from(self.running_jobs) * i128::from(now.as_millis()) - self.run_offset_ms;
        total.max(0) as f64 / MILLIS_PER_HOUR
    }
}
