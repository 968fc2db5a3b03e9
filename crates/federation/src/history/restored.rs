//! A job a member restarted from its state directory holds, entered in
//! its history as it stands ([`HeldJob`], [`History::restored`]): its
//! state, origin, submission and first start as the state directory kept
//! them. The state directory keeps no events, so what happened between
//! its submission and the restart is not invented: the record says it was
//! restored (an event rendered when read: a restored job keeps no text
//! of its own), and the time whose states are not known is counted as
//! UNKWN (docs/reliability.md, "History after a restart").

use mcfed_protocol::{JobSpec, SimTime};

use super::record::Restored;
use super::{ForwardRecord, History, JobRecord, RecordOrigin};

/// What a restarted member knows of a job it holds.
pub(crate) struct HeldJob<'a> {
    /// Its id here.
    pub id: u64,
    /// Its queue here (the send queue for a job forwarded from here).
    pub queue: &'a str,
    /// The job.
    pub spec: &'a JobSpec,
    /// Where it came from.
    pub origin: RecordOrigin,
    /// When it entered this cluster.
    pub submitted_at: SimTime,
    /// When it was first submitted anywhere.
    pub first_submitted_at: SimTime,
    /// Its state: PEND, RUN, SSUSP, USUSP, PSUSP, WAIT or DONE.
    pub state: &'static str,
    /// When it entered that state, if the state directory says (a running
    /// job's last start or resumption, a job pending since its
    /// submission).
    pub since: Option<SimTime>,
    /// When it first started, if known.
    pub started_at: Option<SimTime>,
    /// Where it runs: hosts here, or the execution cluster.
    pub exec: Option<String>,
    /// For a job forwarded from here: its last forward.
    pub forwarded: Option<ForwardRecord>,
}

impl History {
    /// Enters `job`, held by a member restored from its state directory at
    /// `at`: in its state since when that state began if known (else
    /// since `at`); the time before, from its submission, whose states are
    /// not known, counted as unknown; and one event saying so.
    pub(crate) fn restored(&mut self, job: HeldJob<'_>, at: SimTime) {
        let queue = self.queue_name(job.queue);
        let mut record = JobRecord::new(
            job.submitted_at,
            job.id,
            queue,
            job.spec,
            job.origin,
            job.first_submitted_at,
        );
        let since = job
            .since
            .unwrap_or(at)
            .clamp(job.submitted_at, at.max(job.submitted_at));
        record.times.unknown = since.saturating_since(job.submitted_at);
        record.state = job.state;
        record.since = since;
        record.started_at = job.started_at;
        record.exec = job.exec;
        record.forwarded = job.forwarded.map(Box::new);
        record.restored = Some(Box::new(Restored {
            at,
            state: job.state,
            since: job.since,
        }));
        if job.state == "DONE" {
            record.ended_at = Some(since);
            self.ended.push_back((since, job.id));
        }
        self.insert(Box::new(record));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcfed_protocol::{JobSpec, SimTime};

    use super::*;

    /// A restored job's events: its submission, that it was restored
    /// (what was known then), then what happened after, also once its
    /// submission's event is written down (a `bmod`).
    #[test]
    fn a_restored_job_s_events_are_in_order() {
        let mut history = History::new(Duration::from_secs(60));
        let spec = JobSpec::simple("j", "u", Duration::from_secs(600));
        let at = SimTime::from_secs(100);
        history.restored(
            HeldJob {
                id: 4,
                queue: "q",
                spec: &spec,
                origin: RecordOrigin::Submitted,
                submitted_at: SimTime::from_secs(10),
                first_submitted_at: SimTime::from_secs(10),
                state: "USUSP",
                since: None,
                started_at: Some(SimTime::from_secs(20)),
                exec: Some("1*h1".to_owned()),
                forwarded: None,
            },
            at,
        );
        let texts = |history: &History| -> Vec<(u64, String)> {
            let record = history.job(4).expect("kept");
            record
                .events()
                .into_iter()
                .map(|event| (event.at.as_millis() / 1000, event.text))
                .collect()
        };
        let restored = "Restored from the state directory at 00:01:40: USUSP, since when is not known; its events before the restart are not kept";
        let submitted = "Submitted to queue <q>, 1 Task(s), user <u>";
        assert_eq!(
            texts(&history),
            [(10, submitted.to_owned()), (100, restored.to_owned())]
        );
        history.spec_mut(4).expect("kept");
        history.enter(4, SimTime::from_secs(130), "RUN", "Resumed".to_owned());
        assert_eq!(
            texts(&history),
            [
                (10, submitted.to_owned()),
                (100, restored.to_owned()),
                (130, "Resumed".to_owned())
            ]
        );
        let record = history.job(4).expect("kept");
        let times = record.times_at(SimTime::from_secs(150));
        assert_eq!(times.unknown, Duration::from_secs(90));
        assert_eq!(times.ususp, Duration::from_secs(30));
        assert_eq!(times.run, Duration::from_secs(20));
        assert_eq!(record.started_at, Some(SimTime::from_secs(20)));
    }
}
