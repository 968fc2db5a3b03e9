//! One share account in one queue — a user's, or a share group's, whose
//! figures sum its members' — kept in O(1) per change as jobs start, stop
//! and finish.

use std::time::Duration;

use mcfed_protocol::SimTime;

use super::decay::{DecayingTotal, MILLIS_PER_HOUR, decayed_hours};

/// What a running job contributes to its account.
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
    pub ran_before: Duration,
    /// Its run limit (`bsub -W`, or its queue's RUNLIMIT): its committed
    /// run time.
    pub run_limit: Option<Duration>,
    /// Physical GPUs it uses (its GPUs per host times its hosts).
    pub gpus: u32,
}

impl JobUse {
    fn run_offset_ms(&self) -> i128 {
        i128::from(self.running_since.as_millis()) - self.ran_before.as_millis() as i128
    }

    fn cpu_hours_per_hour(&self) -> f64 {
        f64::from(self.slots) * f64::from(self.cpu_utilisation)
    }

    /// Hours of its run so far at `now`, all segments.
    fn run_hours(&self, now: SimTime) -> f64 {
        (now.saturating_since(self.running_since) + self.ran_before).as_millis() as f64
            / MILLIS_PER_HOUR
    }
}

/// How a running job stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopKind {
    /// Suspended: it will run again.
    Suspended,
    /// Finished, or terminated and requeued: its run is over, and its run
    /// time becomes history.
    Ended,
}

/// One account's fairshare figures in one queue, kept up to date as its
/// jobs start, stop and finish. Every figure is a sum over jobs, so a
/// group's account is the sum of its members'.
#[derive(Clone, Debug, Default)]
pub struct ShareAccount {
    /// The account's shares.
    pub shares: u32,
    /// Running jobs.
    pub running_jobs: u32,
    /// Slots of running jobs (the formula's job_slots, reserved slots
    /// aside).
    pub running_slots: u32,
    /// Memory of running jobs, MB.
    pub memory_mb: u64,
    /// Physical GPUs of running jobs.
    pub gpus: u32,
    /// Sum over running jobs of (last start − run time before it), in ms:
    /// the run time of running jobs at `now` is
    /// `running_jobs * now − run_offset`.
    run_offset_ms: i128,
    /// Decayed CPU hours; grows at the CPU hours per hour of the running
    /// jobs (slots × CPU utilisation).
    cpu: DecayingTotal,
    /// Decayed run time of the running jobs' current runs (RUN_TIME_DECAY):
    /// grows at one hour per hour per running job; a run's decayed hours
    /// leave it when the run stops.
    decayed_run: DecayingTotal,
    /// Decayed run time of ended jobs (ENABLE_HIST_RUN_TIME).
    history: DecayingTotal,
    /// Sum of the run limits of running jobs that have one, in ms.
    committed_ms: i128,
    /// Running jobs with a run limit, and their run offset (as above).
    limited_jobs: u32,
    limited_offset_ms: i128,
    /// GPU-weighted run offset of running GPU jobs (GPUs × run offset).
    gpu_offset_ms: i128,
    /// Decayed GPU-hours of ended GPU jobs (ENABLE_GPU_HIST_RUN_TIME).
    gpu_history: DecayingTotal,
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
        let at = job.running_since;
        self.running_jobs += 1;
        self.running_slots += job.slots;
        self.memory_mb += job.memory_mb;
        self.gpus += job.gpus;
        let offset = job.run_offset_ms();
        self.run_offset_ms += offset;
        self.cpu.add_rate(at, job.cpu_hours_per_hour(), hist_hours);
        self.decayed_run.add_rate(at, 1.0, hist_hours);
        if let Some(limit) = job.run_limit {
            self.committed_ms += limit.as_millis() as i128;
            self.limited_jobs += 1;
            self.limited_offset_ms += offset;
        }
        self.gpu_offset_ms += i128::from(job.gpus) * offset;
    }

    /// `job` stops running at `now` (`how`). Its CPU time stays in the
    /// history; an ended job's run time (and GPU run time) goes to the
    /// historical run time.
    pub fn job_stops(&mut self, now: SimTime, job: &JobUse, how: StopKind, hist_hours: f64) {
        self.running_jobs = self.running_jobs.saturating_sub(1);
        self.running_slots = self.running_slots.saturating_sub(job.slots);
        self.memory_mb = self.memory_mb.saturating_sub(job.memory_mb);
        self.gpus = self.gpus.saturating_sub(job.gpus);
        let offset = job.run_offset_ms();
        self.run_offset_ms -= offset;
        self.cpu
            .add_rate(now, -job.cpu_hours_per_hour(), hist_hours);
        let segment = now.saturating_since(job.running_since).as_millis() as f64 / MILLIS_PER_HOUR;
        self.decayed_run.add_rate(now, -1.0, hist_hours);
        self.decayed_run
            .add(now, -decayed_hours(segment, hist_hours), hist_hours);
        if let Some(limit) = job.run_limit {
            self.committed_ms -= limit.as_millis() as i128;
            self.limited_jobs = self.limited_jobs.saturating_sub(1);
            self.limited_offset_ms -= offset;
        }
        self.gpu_offset_ms -= i128::from(job.gpus) * offset;
        if how == StopKind::Ended {
            let hours = job.run_hours(now);
            self.history.add(now, hours, hist_hours);
            if job.gpus > 0 {
                self.gpu_history
                    .add(now, hours * f64::from(job.gpus), hist_hours);
            }
        }
    }

    /// Decayed CPU time at `now`, hours.
    pub fn cpu_time(&self, now: SimTime, hist_hours: f64) -> f64 {
        self.cpu.value_at(now, hist_hours)
    }

    /// Run time of running jobs at `now`, hours.
    pub fn run_time(&self, now: SimTime) -> f64 {
        Self::hours(self.running_jobs, self.run_offset_ms, now)
    }

    /// Decayed run time of the running jobs' current runs at `now`, hours
    /// (RUN_TIME_DECAY).
    pub fn decayed_run_time(&self, now: SimTime, hist_hours: f64) -> f64 {
        self.decayed_run.value_at(now, hist_hours).max(0.0)
    }

    /// Decayed run time of ended jobs at `now`, hours
    /// (ENABLE_HIST_RUN_TIME).
    pub fn historical_run_time(&self, now: SimTime, hist_hours: f64) -> f64 {
        self.history.value_at(now, hist_hours)
    }

    /// Committed run time still to come at `now`: over running jobs with a
    /// run limit, the limits less their run time so far, hours (never
    /// below 0).
    pub fn committed_run_time(&self, now: SimTime) -> f64 {
        let ran =
            i128::from(self.limited_jobs) * i128::from(now.as_millis()) - self.limited_offset_ms;
        (self.committed_ms - ran).max(0) as f64 / MILLIS_PER_HOUR
    }

    /// GPU-hours of running GPU jobs at `now` (each job's run time times
    /// its GPUs).
    pub fn gpu_run_time(&self, now: SimTime) -> f64 {
        let total = i128::from(self.gpus) * i128::from(now.as_millis()) - self.gpu_offset_ms;
        total.max(0) as f64 / MILLIS_PER_HOUR
    }

    /// Decayed GPU-hours of ended GPU jobs at `now`
    /// (ENABLE_GPU_HIST_RUN_TIME).
    pub fn historical_gpu_run_time(&self, now: SimTime, hist_hours: f64) -> f64 {
        self.gpu_history.value_at(now, hist_hours)
    }

    fn hours(jobs: u32, offset_ms: i128, now: SimTime) -> f64 {
        let total = i128::from(jobs) * i128::from(now.as_millis()) - offset_ms;
        total.max(0) as f64 / MILLIS_PER_HOUR
    }
}
