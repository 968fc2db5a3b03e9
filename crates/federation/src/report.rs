//! What `bqueues` (and `mcfed run --show queues`) shows of a member's
//! queues: the scheduler's report, with what only the submission side
//! knows — its send queues' jobs still held here, and their MAX_RSCHED_TIME.

use mcfed_cluster::ClusterReport;
use mcfed_forwarder::SourceState;
use mcfed_protocol::SimTime;

use crate::Member;

impl Member {
    /// Every queue of this member at `now`, as `bqueues` shows it. A send
    /// queue's jobs not yet forwarded count where LSF counts them: waiting
    /// ones (and those given up after MAX_FORWARDS) as PEND, held ones
    /// (`bstop`) as SUSP, in slots, in NJOBS too.
    pub fn report(&self, now: SimTime) -> ClusterReport {
        let mut report = self.cluster().report(now);
        let Some(forwarder) = self.forwarder() else {
            return report;
        };
        for job in forwarder.jobs() {
            let name = forwarder.send_queue_name(job.send_queue_index());
            let Some(queue) = report
                .queues
                .iter_mut()
                .find(|queue| queue.queue == name.as_str())
            else {
                continue;
            };
            let slots = job.spec.slots;
            match job.state {
                SourceState::Waiting | SourceState::GaveUp => queue.pend += slots,
                SourceState::Held => queue.susp += slots,
                _ => continue,
            }
            queue.njobs += slots;
        }
        if let Some(send_queues) = self
            .config()
            .and_then(|config| config.forwarder.as_ref())
            .map(|forwarder| &forwarder.send_queues)
        {
            for queue in &mut report.queues {
                if let Some(send) = send_queues
                    .iter()
                    .find(|send| send.name.as_str() == queue.queue)
                {
                    queue.set_max_rsched_time(send.max_rsched_time);
                }
            }
        }
        report
    }
}
