//! What the history says happened, in LSF's words: a state change of
//! this cluster's scheduler ([`History::transition`]) or of a job forwarded
//! from here at its execution cluster ([`History::remote`]), as the event
//! `bhist` shows and the state it moves the job to.

use std::sync::Arc;

use mcfed_cluster::{Cluster, Transition};
use mcfed_protocol::{ClusterName, JobEvent, JobSpec, SimTime};

use super::History;

impl History {
    /// A job of this cluster's scheduler changed state.
    pub fn transition(&mut self, transition: &Transition, cluster: &Cluster) {
        let Some(record) = self.jobs.get_mut(&transition.job.0) else {
            return;
        };
        let at = transition.at;
        let by = transition
            .preempted_by
            .map(|by| format!(" by job <{by}>"))
            .unwrap_or_default();
        let (state, text) = match transition.event {
            JobEvent::Started => {
                let hosts = cluster.job(transition.job).map(|job| {
                    job.placement
                        .iter()
                        .map(|place| format!("{}*{}", place.slots, cluster.host_name(place.host)))
                        .collect::<Vec<_>>()
                        .join(" ")
                });
                record.exec = hosts.clone();
                ("RUN", format!("Started on <{}>", hosts.unwrap_or_default()))
            }
            JobEvent::Suspended => (
                "SSUSP",
                match cluster
                    .job(transition.job)
                    .and_then(|job| cluster.suspend_reason(job))
                {
                    Some(reason) if transition.preempted_by.is_none() => {
                        format!("Suspended: {}", reason.describe())
                    }
                    _ => format!("Suspended: preempted{by}"),
                },
            ),
            JobEvent::Resumed => ("RUN", "Resumed".to_owned()),
            JobEvent::Requeued if transition.preempted_by.is_some() => (
                "PEND",
                format!("Terminated and requeued: preempted{by} (TERMINATE_WHEN=PREEMPT)"),
            ),
            JobEvent::Requeued => ("PEND", "Killed and requeued by brequeue".to_owned()),
            JobEvent::Finished => ("DONE", "Done successfully".to_owned()),
            JobEvent::Killed => ("EXIT", "Exited: killed by bkill".to_owned()),
            JobEvent::RunLimit => (
                "EXIT",
                "Exited: the job reached its run limit (TERM_RUNLIMIT)".to_owned(),
            ),
            JobEvent::ReservationEnded => ("EXIT", reservation_ended_text(&record.spec)),
            JobEvent::Stopped => ("USUSP", "Suspended by bstop (USUSP)".to_owned()),
            JobEvent::Held => ("PSUSP", "Held by bstop (PSUSP)".to_owned()),
            JobEvent::Released => ("PEND", "Released by bresume".to_owned()),
            JobEvent::Switched => {
                record.keep_submission();
                record.queue = Arc::from(transition.queue.as_str());
                (
                    record.state,
                    format!("Switched to queue <{}>", transition.queue),
                )
            }
            JobEvent::Modified => {
                if let Some(job) = cluster.job(transition.job) {
                    record.keep_submission();
                    record.spec = job.spec.clone();
                }
                (record.state, modified_text(&record.spec))
            }
            JobEvent::Migrated => (
                "PEND",
                "Migrated by bmig: pending again, keeping its priority".to_owned(),
            ),
            JobEvent::Rerun => (
                "PEND",
                "Rerun: its host failed; pending again, keeping its priority".to_owned(),
            ),
            JobEvent::Resized => {
                if let Some(job) = cluster.job(transition.job) {
                    record.keep_submission();
                    record.spec = job.spec.clone();
                    record.exec = Some(
                        job.placement
                            .iter()
                            .map(|place| {
                                format!("{}*{}", place.slots, cluster.host_name(place.host))
                            })
                            .collect::<Vec<_>>()
                            .join(" "),
                    );
                }
                (
                    record.state,
                    format!("Resized to {} slots", transition.slots),
                )
            }
            JobEvent::Waiting => (
                "WAIT",
                "Dispatched into a chunk: waiting to run on its slot".to_owned(),
            ),
            JobEvent::Pended => ("PEND", "Its chunk was broken up: pending again".to_owned()),
        };
        self.enter(transition.job.0, at, state, text);
    }

    /// Job `id` (of a send queue) changed state at its execution cluster
    /// `cluster`.
    pub fn remote(&mut self, id: u64, at: SimTime, cluster: &ClusterName, event: JobEvent) {
        let Some(record) = self.jobs.get(&id) else {
            return;
        };
        let (state, text) = match event {
            JobEvent::Started => ("RUN", format!("Started at cluster <{cluster}>")),
            // A stopped job (USUSP) is never preempted: suspended after
            // USUSP, `bresume` found its slots taken (SSUSP until they
            // are free, as in LSF).
            JobEvent::Suspended if record.state == "USUSP" => (
                "SSUSP",
                format!("Resumed by bresume at <{cluster}>: suspended until its slots are free"),
            ),
            JobEvent::Suspended => ("SSUSP", format!("Suspended at <{cluster}>: preempted")),
            JobEvent::Resumed => ("RUN", format!("Resumed at <{cluster}>")),
            JobEvent::Requeued => ("PEND", format!("Requeued at <{cluster}>")),
            JobEvent::Finished => ("DONE", format!("Done successfully at <{cluster}>")),
            JobEvent::Killed => ("EXIT", format!("Exited at <{cluster}>: killed")),
            JobEvent::RunLimit => (
                "EXIT",
                format!("Exited at <{cluster}>: run limit reached (TERM_RUNLIMIT)"),
            ),
            JobEvent::ReservationEnded => (
                "EXIT",
                format!(
                    "Exited at <{cluster}>: {}",
                    reservation_ended_text(&record.spec)
                ),
            ),
            JobEvent::Stopped => ("USUSP", format!("Suspended by bstop at <{cluster}>")),
            JobEvent::Held => ("PSUSP", format!("Held by bstop at <{cluster}>")),
            JobEvent::Released => ("PEND", format!("Released at <{cluster}>")),
            JobEvent::Switched => (
                record.state,
                format!("Switched to another queue at <{cluster}>"),
            ),
            JobEvent::Modified => (record.state, format!("Parameters changed at <{cluster}>")),
            JobEvent::Migrated => ("PEND", format!("Migrated at <{cluster}>")),
            JobEvent::Rerun => ("PEND", format!("Rerun at <{cluster}>: its host failed")),
            JobEvent::Resized => (record.state, format!("Resized at <{cluster}>")),
            JobEvent::Waiting => ("PEND", format!("Waiting in a chunk at <{cluster}>")),
            JobEvent::Pended => ("PEND", format!("Pending again at <{cluster}>")),
        };
        if event == JobEvent::Started {
            if let Some(record) = self.jobs.get_mut(&id) {
                record.exec = Some(cluster.to_string());
            }
        }
        self.enter(id, at, state, text);
    }
}

/// How `bhist` says a `bmod` changed a job.
fn modified_text(spec: &JobSpec) -> String {
    let limit = spec
        .run_limit
        .map(|limit| format!("{} min", limit.as_secs().div_ceil(60)))
        .unwrap_or_else(|| "none".to_owned());
    let priority = spec
        .user_priority()
        .map(|priority| format!(", priority {priority}"))
        .unwrap_or_default();
    format!(
        "Parameters changed by bmod: {} Task(s), run limit {limit}{priority}",
        spec.slots
    )
}

/// The history line of a job killed when the closed advance reservation it
/// ran in (`bsub -U`, the word `rsv==NAME` among its resources) ended.
fn reservation_ended_text(spec: &JobSpec) -> String {
    let name = spec
        .resources
        .iter()
        .find_map(|word| mcfed_cluster::advance::reservation_named(word))
        .unwrap_or("?");
    format!("Exited: killed when advance reservation <{name}> ended (TERM_DEADLINE)")
}
