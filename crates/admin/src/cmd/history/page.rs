//! `bhist` and `bacct` answer in pages, as `bjobs` does
//! ([`crate::cmd::jobs::page`]): the history's jobs by id, from after a
//! given id, until a page holds about [`PAGE_BYTES`] — so an answer never
//! grows with the whole history (16,600 jobs with 4,094-byte names and
//! their events pass the admin channel's 64 MiB bound), and a client asks
//! page after page over one connection (`AdminRequest::HistoryPage`).

use mcfed_federation::Member;
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

use super::{HistoryReply, HistoryRow, history_row};
use crate::cmd::jobs::PAGE_BYTES;

/// One page of a cluster's history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryPage {
    /// The cluster, its emulated time and CLEAN_PERIOD, and this page's
    /// jobs, by id.
    pub reply: HistoryReply,
    /// Set when more jobs may follow: ask again from after this job id.
    pub next: Option<u64>,
}

/// The page of `member`'s history at `now` from after job `after` on, of
/// about [`PAGE_BYTES`]; an error when it keeps no history.
pub fn apply(member: &Member, now: SimTime, after: Option<u64>) -> crate::AdminResponse {
    match page(member, now, after, PAGE_BYTES) {
        Some(page) => crate::AdminResponse::HistoryPage(page),
        None => crate::AdminResponse::Error("no history".into()),
    }
}

/// The jobs of `member`'s history at `now`, by id, from after job `after`
/// on, until they pass about `budget` bytes; `None` when it keeps no
/// history.
pub fn page(
    member: &Member,
    now: SimTime,
    after: Option<u64>,
    budget: usize,
) -> Option<HistoryPage> {
    let history = member.history()?;
    let records = history.jobs();
    let first = after.map_or(0, |after| {
        records.partition_point(|record| record.id <= after)
    });
    let records = &records[first..];
    let mut jobs = Vec::new();
    let mut next = None;
    let mut bytes = 0usize;
    for (index, record) in records.iter().enumerate() {
        let row = history_row(record, now);
        bytes += row_bytes(&row);
        jobs.push(row);
        if bytes >= budget && index + 1 < records.len() {
            next = Some(record.id);
            break;
        }
    }
    Some(HistoryPage {
        reply: HistoryReply {
            cluster: member.name().to_string(),
            now: now.as_secs_f64(),
            clean_period: history.clean_period().as_secs_f64(),
            jobs,
        },
        next,
    })
}

/// About how many bytes `row` takes on the wire (at least as many: the
/// numbers are counted at their widest).
fn row_bytes(row: &HistoryRow) -> usize {
    const FIXED: usize = 256;
    let optional = |text: &Option<String>| text.as_deref().map_or(0, str::len);
    FIXED
        + row.job_name.len()
        + row.user.len()
        + row.queue.len()
        + row.stat.len()
        + row.origin.len()
        + row
            .forwarded_from
            .as_ref()
            .map_or(0, |from| from.cluster.len() + 16)
        + optional(&row.exec_host)
        + optional(&row.forwarded_to)
        + optional(&row.output_file)
        + optional(&row.error_file)
        + row
            .events
            .iter()
            .map(|event| event.event.len() + 16)
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcfed_federation::{Effects, Member};
    use mcfed_protocol::{JobSpec, SimTime};

    use super::*;

    /// A cluster of one one-slot host with `jobs` jobs of 10 s, with a
    /// history: at 20 s one has ended, one runs, the rest pend.
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
            let spec = JobSpec::simple(format!("job{n}"), "u", Duration::from_secs(10));
            member
                .submit(SimTime::ZERO, "normal", spec, &mut effects)
                .expect("accepted");
        }
        for at in [1, 11, 12] {
            member.step(SimTime::from_secs(at), &mut effects);
        }
        member
    }

    #[test]
    fn pages_list_the_whole_history_once_each_bounded_by_its_bytes() {
        let member = member(300);
        let now = SimTime::from_secs(20);
        let whole = super::super::history(&member, now).0;
        assert_eq!(whole.len(), 300);
        let budget = 8 << 10;
        let (mut rows, mut after, mut pages) = (Vec::new(), None, 0);
        loop {
            let page = page(&member, now, after, budget).expect("a history");
            pages += 1;
            let bytes: usize = page.reply.jobs.iter().map(row_bytes).sum();
            assert!(bytes < budget + 1024, "{bytes} bytes");
            let encoded =
                crate::encode(&crate::AdminResponse::HistoryPage(page.clone())).expect("encodes");
            assert!(
                encoded.len() <= bytes + 256,
                "the estimate bounds the wire size"
            );
            rows.extend(page.reply.jobs);
            match page.next {
                Some(next) => {
                    assert!(after.is_none_or(|after| next > after), "it moves on");
                    after = Some(next);
                }
                None => break,
            }
        }
        assert!(pages > 2, "{pages} pages");
        assert_eq!(rows, whole);
        assert_eq!(rows[0].stat, "DONE");
    }
}
