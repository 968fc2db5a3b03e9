//! The event loop the properties that compare the indexed dispatch pass
//! with the plain walk (`Cluster::scan_every_job`) share: two clusters of
//! one configuration, given the same submissions at their times, the same
//! acts (job control, host failures: what each property does, through
//! [`Checks::act`]) and a pass at every instant something is due, must
//! agree on when they next wake, on every submission and on every
//! transition; each property checks the rest between steps ([`Checks`]).

use mcfed_cluster::{Cluster, ClusterConfig, JobId, JobOrigin, Transition};
use mcfed_protocol::{JobSpec, QueueName, SimTime};
use proptest::prelude::*;

/// The indexed cluster and the plain one, driven alike.
pub(crate) struct Twins {
    /// The cluster whose pass jumps over a failed job's bucket.
    pub(crate) indexed: Cluster,
    /// The same cluster told to try every pending job.
    pub(crate) plain: Cluster,
    /// The ids of the jobs accepted so far, in order.
    pub(crate) submitted: Vec<JobId>,
    /// The instant of the current step.
    pub(crate) now: SimTime,
}

/// A submission, at its time.
pub(crate) struct Submission {
    /// When.
    pub(crate) at: SimTime,
    /// To which queue.
    pub(crate) queue: QueueName,
    /// The job.
    pub(crate) spec: JobSpec,
}

/// What a property does and checks around the shared steps.
pub(crate) trait Checks<A> {
    /// Does `act` to both clusters (and checks what it changed).
    fn act(&mut self, twins: &mut Twins, act: &A) -> Result<(), TestCaseError>;

    /// Checks before the pass of a step (after its arrivals and acts).
    fn before_pass(&mut self, _twins: &Twins) -> Result<(), TestCaseError> {
        Ok(())
    }

    /// Checks after the pass of a step, which made `transitions` (the
    /// same in both clusters).
    fn after_pass(
        &mut self,
        twins: &Twins,
        transitions: &[Transition],
    ) -> Result<(), TestCaseError>;
}

/// Runs both clusters of `config` through `submissions` and `acts` (each
/// sorted by time), at most `steps` steps, stopping when nothing more is
/// due.
pub(crate) fn drive<A>(
    config: ClusterConfig,
    submissions: &[Submission],
    acts: &[(SimTime, A)],
    steps: usize,
    checks: &mut impl Checks<A>,
) -> Result<(), TestCaseError> {
    let indexed = Cluster::new(config).expect("valid configuration");
    let mut plain = indexed.clone();
    plain.scan_every_job(true);
    let mut twins = Twins {
        indexed,
        plain,
        submitted: Vec::new(),
        now: SimTime::ZERO,
    };
    let (mut next_job, mut next_act) = (0, 0);
    for _ in 0..steps {
        let due_job = submissions.get(next_job).map(|job| job.at);
        let due_act = acts.get(next_act).map(|act| act.0);
        let due_end = twins.indexed.next_event_time();
        prop_assert_eq!(due_end, twins.plain.next_event_time());
        let Some(at) = [due_job, due_act, due_end].into_iter().flatten().min() else {
            break;
        };
        twins.now = twins.now.max(at);
        let now = twins.now;
        while let Some(job) = submissions.get(next_job).filter(|job| job.at <= now) {
            let queue = job.queue.as_str();
            let a = twins
                .indexed
                .submit(now, queue, job.spec.clone(), JobOrigin::Local);
            let b = twins
                .plain
                .submit(now, queue, job.spec.clone(), JobOrigin::Local);
            prop_assert_eq!(&a, &b);
            if let Ok(id) = a {
                twins.submitted.push(id);
            }
            next_job += 1;
        }
        while let Some((_, act)) = acts.get(next_act).filter(|act| act.0 <= now) {
            checks.act(&mut twins, act)?;
            next_act += 1;
        }
        checks.before_pass(&twins)?;
        let (mut ta, mut tb): (Vec<Transition>, Vec<Transition>) = (Vec::new(), Vec::new());
        twins.indexed.advance(now, &mut ta);
        twins.plain.advance(now, &mut tb);
        prop_assert_eq!(&ta, &tb, "transitions at {}", now);
        checks.after_pass(&twins, &ta)?;
    }
    Ok(())
}
