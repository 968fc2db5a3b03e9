//! `bjobs` answers in pages: the rows a query asks for, by job id, from
//! after a given id, until a page holds about [`PAGE_BYTES`] — so an
//! answer never grows with the whole table (a million jobs are some
//! hundred megabytes of rows), and a client asks page after page over one
//! connection (`AdminRequest::JobsPage`).
//!
//! Each job is listed once, from where it is now: a job the scheduler or
//! a send queue holds from there, and only the jobs neither holds from the
//! history (those that ended within CLEAN_PERIOD) — so a job whose history
//! says it left (withdrawn, then kept after a crash) and that still runs
//! is one row, in its one state. A query for job ids looks those ids up
//! instead of going through the table.

use mcfed_cluster::{Job, JobId};
use mcfed_federation::Member;
use mcfed_federation::history::{GONE, JobRecord};
use mcfed_forwarder::node::SourceJob;
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

use super::{Finished, JobRow, JobsQuery, cluster_row, forwarder_row};
use crate::cmd::history::{finished_row, history_row};

/// About how many bytes of rows one page carries (well under the admin
/// channel's 64 MiB bound: a row is at most a few tens of kilobytes, its
/// strings being bounded by `JobSpec::check_bounds`).
pub const PAGE_BYTES: usize = 4 << 20;

/// One page of `bjobs` rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobsPage {
    /// The rows, by job id.
    pub rows: Vec<JobRow>,
    /// Set when more rows may follow: ask again from after this job id.
    pub next: Option<u64>,
}

/// Where a job's row comes from.
enum Held<'a> {
    /// The cluster's own queues.
    Scheduled(&'a Job),
    /// A send queue here.
    Sent(&'a SourceJob),
    /// The history: a job that ended within CLEAN_PERIOD.
    Ended(&'a JobRecord),
}

/// The rows of `member` at `now` that `query` asks for, by job id, from
/// after job `after` on, until they pass about `budget` bytes.
pub fn page(
    member: &Member,
    now: SimTime,
    query: &JobsQuery,
    after: Option<u64>,
    budget: usize,
) -> JobsPage {
    let mut held = candidates(member, query, after);
    held.sort_unstable_by_key(|(id, _)| *id);
    let cluster = member.name().as_str();
    let local_now = member.local_time(now);
    let mut page = JobsPage::default();
    let mut bytes = 0usize;
    for (index, (id, source)) in held.iter().enumerate() {
        let row = match source {
            Held::Scheduled(job) => cluster_row(member.node().cluster(), job),
            Held::Sent(job) => match member.forwarder() {
                Some(forwarder) => forwarder_row(forwarder, job, local_now),
                None => continue,
            },
            Held::Ended(record) => finished_row(cluster, &history_row(record, now)),
        };
        if !query.keeps(&row) {
            continue;
        }
        bytes += row_bytes(&row);
        page.rows.push(row);
        if bytes >= budget && index + 1 < held.len() {
            page.next = Some(*id);
            break;
        }
    }
    page
}

/// Every job `query` may ask for after `after`, with where its row comes
/// from, in no order.
fn candidates<'a>(
    member: &'a Member,
    query: &JobsQuery,
    after: Option<u64>,
) -> Vec<(u64, Held<'a>)> {
    let cluster = member.node().cluster();
    let forwarder = member.forwarder();
    let history = member.history();
    let is_held = |id: u64| {
        cluster.job(JobId(id)).is_some()
            || forwarder.is_some_and(|forwarder| forwarder.job(id).is_some())
    };
    let ended =
        |record: &JobRecord| record.has_ended() && record.state != GONE && !is_held(record.id);
    let live = query.finished != Finished::Only;
    let finished = query.finished != Finished::Not || !query.ids.is_empty();
    let wanted = |id: u64| after.is_none_or(|after| id > after);
    let mut held = Vec::new();
    if !query.ids.is_empty() {
        let mut ids: Vec<u64> = query.ids.iter().copied().filter(|&id| wanted(id)).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            if let Some(job) = cluster.job(JobId(id)).filter(|_| live) {
                held.push((id, Held::Scheduled(job)));
            } else if let Some(job) = forwarder
                .and_then(|forwarder| forwarder.job(id))
                .filter(|_| live)
            {
                held.push((id, Held::Sent(job)));
            } else if let Some(record) = history
                .and_then(|history| history.job(id))
                .filter(|record| finished && ended(record))
            {
                held.push((id, Held::Ended(record)));
            }
        }
        return held;
    }
    if live {
        held.extend(
            cluster
                .jobs()
                .filter(|job| wanted(job.id.0))
                .map(|job| (job.id.0, Held::Scheduled(job))),
        );
        if let Some(forwarder) = forwarder {
            held.extend(
                forwarder
                    .jobs()
                    .filter(|job| wanted(job.id))
                    .map(|job| (job.id, Held::Sent(job))),
            );
        }
    }
    if finished {
        if let Some(history) = history {
            held.extend(
                history
                    .jobs()
                    .into_iter()
                    .filter(|record| wanted(record.id) && ended(record))
                    .map(|record| (record.id, Held::Ended(record))),
            );
        }
    }
    held
}

/// About how many bytes `row` takes on the wire (its strings and a bound
/// on the rest).
fn row_bytes(row: &JobRow) -> usize {
    const FIXED: usize = 160;
    let optional = |text: &Option<String>| text.as_deref().map_or(0, str::len);
    FIXED
        + row.user.len()
        + row.stat.len()
        + row.queue.len()
        + row.from_host.len()
        + row.job_name.len()
        + optional(&row.exec_host)
        + optional(&row.pending_reason)
        + optional(&row.output_file)
        + optional(&row.error_file)
        + row
            .forwarded_to
            .as_ref()
            .map_or(0, |to| to.cluster.len() + to.queue.len() + 32)
        + row
            .forwarded_from
            .as_ref()
            .map_or(0, |from| from.cluster.len() + 16)
        + row
            .resources
            .iter()
            .map(|resource| resource.len() + 2)
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcfed_federation::{Effects, Member};
    use mcfed_protocol::{JobSpec, SimTime};

    use super::*;

    /// A cluster of one one-slot host with `jobs` jobs: the first runs
    /// 10 s, the others an hour (so at 20 s one has ended, one runs and
    /// the rest pend); with a history, as a cluster process keeps.
    fn member(jobs: usize) -> Member {
        let scenario = mcfed_scenario::parse(
            "pages.toml",
            "name = \"pages\"\n[[cluster]]\nname = \"C\"\n[[cluster.host]]\nname = \"h\"\nMXJ = 1\n[[cluster.queue]]\nname = \"normal\"\n",
        )
        .expect("valid");
        let (mut member, _) = Member::build(scenario.clusters[0].member_spec()).expect("builds");
        member.keep_history(Duration::from_secs(3600));
        let mut effects = Effects::default();
        member.take_start(&mut effects);
        for n in 0..jobs {
            let runs = if n == 0 { 10 } else { 3600 };
            let user = if n % 2 == 0 { "even" } else { "odd" };
            let spec = JobSpec::simple(format!("job{n}"), user, Duration::from_secs(runs));
            member
                .submit(SimTime::ZERO, "normal", spec, &mut effects)
                .expect("accepted");
        }
        member.step(SimTime::from_secs(1), &mut effects);
        member.step(SimTime::from_secs(11), &mut effects);
        member.step(SimTime::from_secs(12), &mut effects);
        member
    }

    /// Every page of `query` with `budget` bytes a page, and the rows.
    fn pages(member: &Member, query: &JobsQuery, budget: usize) -> (usize, Vec<JobRow>) {
        let (mut count, mut rows, mut after) = (0, Vec::new(), None);
        loop {
            let page = page(member, SimTime::from_secs(20), query, after, budget);
            count += 1;
            assert!(
                page.rows
                    .iter()
                    .all(|row| after.is_none_or(|after| row.job_id > after))
            );
            rows.extend(page.rows);
            match page.next {
                Some(next) => after = Some(next),
                None => return (count, rows),
            }
        }
    }

    #[test]
    fn pages_list_every_row_once_in_id_order_as_one_answer_does() {
        let member = member(50);
        for query in [
            JobsQuery::default(),
            JobsQuery {
                finished: Finished::Also,
                ..JobsQuery::default()
            },
            JobsQuery {
                user: Some("odd".into()),
                ..JobsQuery::default()
            },
            JobsQuery {
                finished: Finished::Only,
                ..JobsQuery::default()
            },
        ] {
            let whole = page(&member, SimTime::from_secs(20), &query, None, usize::MAX);
            assert_eq!(whole.next, None);
            // A budget of one row a page: as many pages as rows (the last
            // one says no more follow).
            let (count, rows) = pages(&member, &query, 1);
            assert_eq!(rows, whole.rows, "{query:?}");
            assert_eq!(count, whole.rows.len().max(1), "{query:?}");
            let ids: Vec<u64> = rows.iter().map(|row| row.job_id).collect();
            assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "{ids:?}");
        }
        let all = page(
            &member,
            SimTime::from_secs(20),
            &JobsQuery {
                finished: Finished::Also,
                ..JobsQuery::default()
            },
            None,
            usize::MAX,
        );
        assert_eq!(all.rows.len(), 50);
        assert_eq!(all.rows[0].stat, "DONE");
        assert_eq!(all.rows[1].stat, "RUN");
    }

    #[test]
    fn a_query_by_id_looks_its_jobs_up() {
        let member = member(20);
        let query = JobsQuery {
            ids: vec![15, 1, 99, 15],
            ..JobsQuery::default()
        };
        let rows = page(&member, SimTime::from_secs(20), &query, None, usize::MAX).rows;
        let ids: Vec<u64> = rows.iter().map(|row| row.job_id).collect();
        assert_eq!(
            ids,
            [1, 15],
            "a finished job asked by id is listed, an unknown one is not"
        );
        assert_eq!(rows[0].stat, "DONE");
    }

    #[test]
    fn a_page_is_bounded_by_its_bytes() {
        let member = member(400);
        let query = JobsQuery::default();
        let first = page(&member, SimTime::from_secs(20), &query, None, 8 << 10);
        let bytes: usize = first.rows.iter().map(row_bytes).sum();
        assert!(first.next.is_some());
        assert!(first.rows.len() < 399, "{} rows", first.rows.len());
        assert!(
            ((8 << 10)..(8 << 10) + 1024).contains(&bytes),
            "{bytes} bytes"
        );
        let encoded =
            crate::encode(&crate::AdminResponse::JobsPage(first.clone())).expect("encodes");
        assert!(
            encoded.len() <= bytes,
            "the estimate bounds the wire size: {} > {bytes}",
            encoded.len()
        );
    }
}
