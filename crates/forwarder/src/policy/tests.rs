//! Unit tests of `decide`: every mode, eligibility, tiers, the tie rule.

use mcfed_protocol::{ClusterName, CounterUpdate, QueueCounters, QueueName, QueueRef, SimTime};

use super::*;
use crate::view::RemoteView;

/// A remote queue's counters, written compactly.
#[derive(Clone, Copy, Debug)]
struct Q {
    priority: u32,
    total: u32,
    available: u32,
    pending: u32,
    preemptable: u32,
    victim: Option<u32>,
    backlog: Option<u32>,
    imported: u32,
    /// The host type some host of the queue is of.
    host_type: Option<&'static str>,
}

impl Q {
    fn new(priority: u32, available: u32, pending: u32) -> Self {
        Q {
            priority,
            total: 100,
            available,
            pending,
            preemptable: available,
            victim: None,
            backlog: Some(50),
            imported: 0,
            host_type: None,
        }
    }
    fn of_type(mut self, host_type: &'static str) -> Self {
        self.host_type = Some(host_type);
        self
    }
    fn preemptable(mut self, slots: u32, victim: u32) -> Self {
        self.preemptable = slots;
        self.victim = Some(victim);
        self
    }
    fn backlog(mut self, limit: Option<u32>, imported: u32) -> Self {
        self.backlog = limit;
        self.imported = imported;
        self
    }
}

/// A view with one queue `high@C<n+2>` per entry, each cluster having sent
/// one update taken at 30s.
fn view_of(queues: &[Q]) -> (RemoteView, Vec<RemoteQueueId>) {
    let mut view = RemoteView::new();
    let receiver = ClusterName::new("C1").expect("valid");
    let mut ids = Vec::new();
    for (index, q) in queues.iter().enumerate() {
        let cluster = ClusterName::new(&format!("C{}", index + 2)).expect("valid");
        let queue = QueueName::new("high").expect("valid");
        let id = view.add_queue(&QueueRef::new(queue.clone(), cluster.clone()));
        let counters = QueueCounters {
            cluster: cluster.clone(),
            queue,
            priority: q.priority,
            total_slots: q.total,
            available_slots: q.available,
            running_slots: q.total - q.available,
            pending_slots: q.pending,
            preemptable_available_slots: q.preemptable,
            lowest_preemptable_priority: q.victim,
            impt_jobbklg: q.backlog,
            imported_pending_jobs: q.imported,
            // As a cluster reports them: its hosts' resources, and the
            // type its hosts are of as `type==X`.
            resources: std::iter::once("bigmem".to_owned())
                .chain(q.host_type.map(|name| format!("type=={name}")))
                .collect(),
            slot_group: 0,
            gpu_slots: Default::default(),
            gpu_free_slots: Default::default(),
        };
        let update = CounterUpdate {
            sender: cluster,
            seq: 1,
            taken_at: SimTime::from_secs(30),
            queues: vec![counters],
            forwards_received: vec![],
        };
        assert_eq!(
            view.apply_update(&receiver, &update),
            crate::view::UpdateOutcome::Applied
        );
        ids.push(id);
    }
    (view, ids)
}

fn one_slot() -> JobRequest {
    JobRequest {
        slots: 1,
        resources: vec![],
        ..JobRequest::default()
    }
}

fn mode(text: &str) -> ScheduleMode {
    if text.is_empty() {
        ScheduleMode::Default
    } else {
        text.parse().expect("valid mode")
    }
}

fn run(text: &str, queues: &[Q]) -> (Decision, Vec<RemoteQueueId>) {
    let (view, ids) = view_of(queues);
    let decision = decide(&view, mode(text), &ids, &one_slot(), SimTime::from_secs(45));
    (decision, ids)
}

/// The index of the winner among `queues`, or `None` if the job pends.
fn winner(text: &str, queues: &[Q]) -> Option<usize> {
    let (decision, ids) = run(text, queues);
    decision.target().map(|target| {
        ids.iter()
            .position(|&id| id == target)
            .expect("target is a candidate")
    })
}

// Two queues used across modes: A has more free slots after pending work,
// B has the higher queue priority but fewer free slots.
fn a_b() -> [Q; 2] {
    [Q::new(40, 30, 20), Q::new(50, 10, 5)]
}

#[test]
fn default_mode_takes_the_most_available_slots() {
    // B has fewer available slots but a better (available - pending).
    let queues = [Q::new(40, 30, 28), Q::new(40, 20, 0)];
    assert_eq!(winner("", &queues), Some(0));
    let (decision, _) = run("", &queues);
    assert_eq!(decision.candidates[0].score(), Some(30));
}

#[test]
fn resource_only_takes_the_largest_available_minus_pending() {
    let queues = [Q::new(40, 30, 28), Q::new(40, 20, 0)];
    assert_eq!(winner("RESOURCE_ONLY", &queues), Some(1));
    // RESOURCE_ONLY ignores queue priority.
    assert_eq!(winner("RESOURCE_ONLY", &a_b()), Some(0));
    // ... and preemptable slots: with no free slots anywhere, still the score.
    let full = [Q::new(40, 0, 10).preemptable(80, 20), Q::new(40, 0, 2)];
    assert_eq!(winner("RESOURCE_ONLY", &full), Some(1));
}

#[test]
fn count_preemptable_uses_free_slots_first() {
    // Seed Example 1: 30 - 20 = 10 against 10 - 5 = 5.
    assert_eq!(
        winner(
            "COUNT_PREEMPTABLE",
            &[Q::new(40, 30, 20), Q::new(40, 10, 5)]
        ),
        Some(0)
    );
    // A queue with free slots beats one with a better preemptable figure.
    let queues = [Q::new(40, 0, 0).preemptable(90, 10), Q::new(40, 1, 0)];
    let (decision, _) = run("COUNT_PREEMPTABLE", &queues);
    assert_eq!(decision.tier, Some(Tier::FreeSlots));
    assert_eq!(winner("COUNT_PREEMPTABLE", &queues), Some(1));
    assert_eq!(
        decision.verdict(0),
        Verdict::Lost(LostOn::Tier {
            winner: Tier::FreeSlots
        })
    );
}

#[test]
fn count_preemptable_falls_back_to_preemptable_slots() {
    // Seed Example 4's figures: (80 - 20) = 60 against (70 - 5) = 65.
    let queues = [
        Q::new(40, 0, 20).preemptable(80, 20),
        Q::new(40, 0, 5).preemptable(70, 20),
    ];
    let (decision, _) = run("COUNT_PREEMPTABLE", &queues);
    assert_eq!(decision.tier, Some(Tier::AfterPreemption));
    assert_eq!(decision.candidates[1].score(), Some(65));
    assert_eq!(winner("COUNT_PREEMPTABLE", &queues), Some(1));
}

#[test]
fn count_preemptable_forwards_to_the_backlog_when_nothing_has_slots() {
    let queues = [Q::new(40, 0, 30), Q::new(40, 0, 10)];
    let (decision, _) = run("COUNT_PREEMPTABLE", &queues);
    assert_eq!(decision.tier, Some(Tier::Backlog));
    assert_eq!(winner("COUNT_PREEMPTABLE", &queues), Some(1));
}

#[test]
fn high_queue_priority_ranks_priority_before_slots() {
    // Seed Example 3: B has the higher priority though A has more slots.
    assert_eq!(
        winner("COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY", &a_b()),
        Some(1)
    );
    // But the free tier still comes first: a high-priority queue without
    // free slots loses to a low-priority queue with them.
    let queues = [Q::new(40, 5, 0), Q::new(90, 0, 0).preemptable(50, 1)];
    assert_eq!(
        winner("COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY", &queues),
        Some(0)
    );
}

#[test]
fn preemptable_queue_priority_prefers_the_lowest_victim() {
    // Seed Example 2: victims of priority 30 and 20; the slot score would
    // favour the first (75 against 50).
    let queues = [
        Q::new(40, 0, 5).preemptable(80, 30),
        Q::new(40, 0, 20).preemptable(70, 20),
    ];
    let text = "COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY";
    assert_eq!(winner(text, &queues), Some(1));
    let (decision, _) = run(text, &queues);
    assert_eq!(
        decision.verdict(0),
        Verdict::Lost(LostOn::VictimPriority { winner: Some(20) })
    );
    // Plain COUNT_PREEMPTABLE takes the slot score instead.
    assert_eq!(winner("COUNT_PREEMPTABLE", &queues), Some(0));
}

#[test]
fn preemptable_queue_priority_does_not_apply_while_slots_are_free() {
    let queues = [
        Q::new(40, 10, 0).preemptable(10, 30),
        Q::new(40, 5, 0).preemptable(90, 1),
    ];
    assert_eq!(
        winner("COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY", &queues),
        Some(0)
    );
}

#[test]
fn a_queue_with_no_victim_ranks_after_one_with_a_victim() {
    let queues = [
        Q::new(40, 0, 0).backlog(Some(50), 0),
        Q::new(40, 0, 0).preemptable(1, 99),
    ];
    assert_eq!(
        winner("COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY", &queues),
        Some(1)
    );
}

#[test]
fn high_queue_priority_with_preemptable_queue_priority() {
    // Seed Example 4: priorities and victims tie, the slot score decides.
    let text = "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY";
    let queues = [
        Q::new(40, 0, 20).preemptable(80, 20),
        Q::new(40, 0, 5).preemptable(70, 20),
    ];
    assert_eq!(winner(text, &queues), Some(1));
    // Queue priority comes before the victim's priority.
    let queues = [
        Q::new(60, 0, 0).preemptable(10, 30),
        Q::new(40, 0, 0).preemptable(10, 1),
    ];
    assert_eq!(winner(text, &queues), Some(0));
}

#[test]
fn pending_when_noslots_pends_when_nothing_has_slots_even_after_preemption() {
    let text = "COUNT_PREEMPTABLE PENDING_WHEN_NOSLOTS";
    let full = [Q::new(40, 0, 3), Q::new(40, 0, 1)];
    let (decision, _) = run(text, &full);
    assert_eq!(
        decision.outcome,
        Outcome::Pend(PendReason::NoSlotsEvenAfterPreemption)
    );
    assert!((0..decision.candidates.len()).all(|i| decision.verdict(i) == Verdict::Held));
    // Without the keyword the job goes to a backlog.
    assert!(winner("COUNT_PREEMPTABLE", &full).is_some());
    // Preemptable slots are enough to forward.
    let preemptable = [Q::new(40, 0, 3), Q::new(40, 0, 1).preemptable(2, 5)];
    assert_eq!(winner(text, &preemptable), Some(1));
}

#[test]
fn pending_when_noslots_with_high_queue_priority() {
    let text = "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PENDING_WHEN_NOSLOTS";
    assert_eq!(winner(text, &a_b()), Some(1));
    assert_eq!(winner(text, &[Q::new(40, 0, 0), Q::new(50, 0, 0)]), None);
}

#[test]
fn pending_when_noslots_with_preemptable_queue_priority() {
    let text = "COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY PENDING_WHEN_NOSLOTS";
    let queues = [
        Q::new(40, 0, 0).preemptable(5, 30),
        Q::new(40, 0, 0).preemptable(5, 10),
    ];
    assert_eq!(winner(text, &queues), Some(1));
    assert_eq!(winner(text, &[Q::new(40, 0, 0), Q::new(40, 0, 0)]), None);
}

#[test]
fn all_keywords_together() {
    let text =
        "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY PENDING_WHEN_NOSLOTS";
    assert_eq!(winner(text, &a_b()), Some(1));
    let preempting = [
        Q::new(40, 0, 0).preemptable(5, 10),
        Q::new(50, 0, 0).preemptable(5, 30),
    ];
    assert_eq!(
        winner(text, &preempting),
        Some(1),
        "queue priority before victim"
    );
    assert_eq!(winner(text, &[Q::new(40, 0, 0), Q::new(50, 0, 0)]), None);
}

#[test]
fn impt_jobbklg_full_leaves_only_jobs_that_start_at_once() {
    // Nothing free or reachable and a full backlog: the receiver would
    // refuse the job (mcfed_protocol::takes_import).
    let no_slots = Q::new(40, 0, 0).backlog(Some(5), 5);
    let queues = [no_slots, Q::new(40, 0, 90)];
    let (decision, _) = run("COUNT_PREEMPTABLE", &queues);
    assert_eq!(
        decision.candidates[0].eligibility,
        Eligibility::BacklogFull { limit: 5 }
    );
    assert_eq!(decision.target(), Some(decision.candidates[1].queue));
    // A job that starts at once adds nothing to the backlog: free slots or
    // slots after preemption keep the queue a candidate.
    let free = [Q::new(40, 3, 0).backlog(Some(5), 5)];
    assert_eq!(winner("COUNT_PREEMPTABLE", &free), Some(0));
    assert_eq!(winner("RESOURCE_ONLY", &free), Some(0));
    let preempting = [Q::new(40, 0, 0).backlog(Some(5), 5).preemptable(50, 1)];
    assert_eq!(winner("COUNT_PREEMPTABLE", &preempting), Some(0));
    // `infinit` never fills.
    let infinite = [Q::new(40, 0, 0).backlog(None, 10_000)];
    assert_eq!(winner("RESOURCE_ONLY", &infinite), Some(0));
}

/// Seed 004: "If no appropriate queues with free slots or space for new
/// pending jobs are found, the best queue is selected based on the number
/// of preemptable jobs and the pending job workload." No queue has a free
/// slot. A's backlog is full, but it reaches 8 slots by preemption with 2
/// pending: 8 - 2 = 6. B has backlog room and reaches 4 with none
/// pending: 4 - 0 = 4. C reaches nothing (the job would pend there). The
/// preemption tier holds A and B; A's 6 beats B's 4. (Before, a full
/// backlog put A out of every tier and B won.)
#[test]
fn the_fallback_tier_keeps_a_full_backlog_that_can_preempt() {
    let queues = [
        Q::new(40, 0, 2).backlog(Some(1), 1).preemptable(8, 10),
        Q::new(40, 0, 0).preemptable(4, 10),
        Q::new(40, 0, 0),
    ];
    let (decision, _) = run("COUNT_PREEMPTABLE", &queues);
    assert_eq!(decision.target(), Some(decision.candidates[0].queue));
    assert_eq!(decision.tier, Some(Tier::AfterPreemption));
    let standing = |index: usize| decision.candidates[index].standing;
    assert_eq!(
        standing(0),
        Some(Standing {
            tier: Tier::AfterPreemption,
            score: 6
        })
    );
    assert_eq!(
        standing(1),
        Some(Standing {
            tier: Tier::AfterPreemption,
            score: 4
        })
    );
    assert_eq!(standing(2).map(|s| s.tier), Some(Tier::Backlog));
}

#[test]
fn no_eligible_candidate_pends_with_each_reason() {
    let queues = [
        Q::new(40, 0, 0).backlog(Some(1), 1),
        Q::new(40, 0, 0).backlog(Some(0), 0),
    ];
    for text in ["", "RESOURCE_ONLY", "COUNT_PREEMPTABLE"] {
        let (decision, _) = run(text, &queues);
        assert_eq!(
            decision.outcome,
            Outcome::Pend(PendReason::NoEligibleQueue),
            "{text}"
        );
        assert!((0..decision.candidates.len()).all(|i| decision.verdict(i) == Verdict::Ineligible));
    }
}

#[test]
fn missing_resource_and_too_many_slots_are_ineligible() {
    let (mut view, ids) = view_of(&[Q::new(40, 50, 0)]);
    let gpu = view.resource_id("gpu");
    let bigmem = view.resource_id("bigmem");
    let needs_gpu = JobRequest {
        slots: 1,
        resources: vec![gpu],
        ..JobRequest::default()
    };
    let decision = decide(
        &view,
        ScheduleMode::ResourceOnly,
        &ids,
        &needs_gpu,
        SimTime::from_secs(45),
    );
    assert_eq!(
        decision.candidates[0].eligibility,
        Eligibility::MissingResource(gpu)
    );
    let needs_bigmem = JobRequest {
        slots: 1,
        resources: vec![bigmem],
        ..JobRequest::default()
    };
    let decision = decide(
        &view,
        ScheduleMode::ResourceOnly,
        &ids,
        &needs_bigmem,
        SimTime::from_secs(45),
    );
    assert_eq!(decision.candidates[0].eligibility, Eligibility::Eligible);
    let huge = JobRequest {
        slots: 101,
        resources: vec![],
        ..JobRequest::default()
    };
    let decision = decide(
        &view,
        ScheduleMode::ResourceOnly,
        &ids,
        &huge,
        SimTime::from_secs(45),
    );
    assert_eq!(
        decision.candidates[0].eligibility,
        Eligibility::TooFewSlots { total: 100 }
    );
}

/// Host types (issue 27 item 9; seed 004: "A remote queue hostgroup
/// satisfies host type requirements when any one of the hosts available
/// is the host type requested by a job. As for boolean resources, the
/// submission cluster assumes all slots within a hostgroup are of the same
/// host type."): a job asking for `type==LINUX86` goes only to a queue some
/// host of which is of that type, scored on all of its slots; a queue of
/// another type, or none, is ineligible and the record says why.
#[test]
fn a_host_type_request_is_met_by_any_host_of_the_type() {
    let queues = [
        Q::new(40, 60, 0).of_type("LINUXPPC64"),
        Q::new(40, 50, 0),
        Q::new(40, 30, 0).of_type("LINUX86"),
    ];
    let (mut view, ids) = view_of(&queues);
    let linux = view.resource_id("type==LINUX86");
    let job = JobRequest {
        slots: 30,
        resources: vec![linux],
        ..JobRequest::default()
    };
    let decision = decide(
        &view,
        ScheduleMode::ResourceOnly,
        &ids,
        &job,
        SimTime::from_secs(45),
    );
    assert_eq!(decision.target(), Some(ids[2]), "all 30 free slots count");
    assert_eq!(
        decision.candidates[0].eligibility,
        Eligibility::MissingResource(linux)
    );
    assert_eq!(
        decision.candidates[1].eligibility,
        Eligibility::MissingResource(linux)
    );
    let why = crate::record::missing_text("type==LINUX86");
    assert_eq!(why, "no host of the queue is of type `LINUX86`");
    let plain = decide(
        &view,
        ScheduleMode::ResourceOnly,
        &ids,
        &one_slot(),
        SimTime::from_secs(45),
    );
    assert_eq!(
        plain.target(),
        Some(ids[0]),
        "a job asking no type goes anywhere"
    );
}

#[test]
fn unknown_queues_pend_until_the_first_update() {
    let mut view = RemoteView::new();
    let ids = vec![
        view.add_queue(&"high@C2".parse().expect("valid")),
        view.add_queue(&"high@C3".parse().expect("valid")),
    ];
    let decision = decide(
        &view,
        ScheduleMode::ResourceOnly,
        &ids,
        &one_slot(),
        SimTime::from_secs(5),
    );
    assert_eq!(decision.outcome, Outcome::Pend(PendReason::NoCountersYet));
    assert!(
        decision
            .candidates
            .iter()
            .all(|c| c.eligibility == Eligibility::Unknown)
    );
    assert_eq!(decision.view_age, None);
}

#[test]
fn no_remote_queue_at_all() {
    let view = RemoteView::new();
    let decision = decide(
        &view,
        ScheduleMode::ResourceOnly,
        &[],
        &one_slot(),
        SimTime::ZERO,
    );
    assert_eq!(decision.outcome, Outcome::Pend(PendReason::NoRemoteQueues));
}

#[test]
fn ties_go_to_the_queue_listed_first() {
    for text in [
        "",
        "RESOURCE_ONLY",
        "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY PREEMPTABLE_QUEUE_PRIORITY",
    ] {
        let queues = [Q::new(40, 10, 0), Q::new(40, 10, 0), Q::new(40, 10, 0)];
        assert_eq!(winner(text, &queues), Some(0), "{text}");
        let (decision, _) = run(text, &queues);
        assert_eq!(decision.verdict(2), Verdict::Lost(LostOn::Order));
    }
}

#[test]
fn view_age_is_that_of_the_oldest_view_consulted() {
    let (decision, _) = run("RESOURCE_ONLY", &a_b());
    assert_eq!(decision.view_age, Some(std::time::Duration::from_secs(15)));
    assert!(
        decision
            .candidates
            .iter()
            .all(|c| c.view_age(decision.at) == Some(std::time::Duration::from_secs(15)))
    );
}

#[test]
fn every_mode_decides_every_job_shape_without_panicking() {
    let queues = [
        Q::new(40, 0, 0),
        Q::new(40, 3, 9).preemptable(9, 2),
        Q::new(70, 0, 2).backlog(Some(0), 0),
        Q::new(10, 100, 0).backlog(None, 0),
    ];
    for mode in ScheduleMode::all() {
        let (view, ids) = view_of(&queues);
        for slots in [1, 3, 50, 100, 101] {
            let job = JobRequest {
                slots,
                resources: vec![],
                ..JobRequest::default()
            };
            let decision = decide(&view, mode, &ids, &job, SimTime::from_secs(45));
            let winners = (0..decision.candidates.len())
                .filter(|&i| decision.verdict(i) == Verdict::Won)
                .count();
            assert_eq!(
                winners,
                usize::from(decision.target().is_some()),
                "{mode} {slots}"
            );
        }
    }
}

mod packed_ranks {
    use proptest::prelude::*;

    use super::super::{compare, decide};
    use super::{Q, view_of};
    use crate::mode::ScheduleMode;
    use crate::policy::{JobRequest, Verdict};
    use mcfed_protocol::SimTime;

    fn queue() -> impl Strategy<Value = Q> {
        (
            1u32..4,
            0u32..4,
            0u32..4,
            0u32..4,
            proptest::option::of(1u32..4),
        )
            .prop_map(|(priority, available, pending, extra, victim)| {
                let q = Q::new(priority, available, pending);
                match victim {
                    Some(victim) => q.preemptable(available + extra, victim),
                    None => q,
                }
            })
    }

    proptest! {
        /// The scan's packed ranks pick the candidate that `compare` ranks
        /// first, in every mode: the winner beats or ties every other
        /// eligible queue, and ties go to the earliest.
        #[test]
        fn winner_is_best_by_compare(
            mode_index in 0usize..10,
            queues in proptest::collection::vec(queue(), 1..6),
            slots in 1u32..3,
        ) {
            let mode = ScheduleMode::all()[mode_index];
            let (view, ids) = view_of(&queues);
            let job = JobRequest {
                slots,
                ..JobRequest::default()
            };
            let decision = decide(&view, mode, &ids, &job, SimTime::from_secs(45));
            let keys: Vec<_> = decision.candidates.iter().enumerate().map(|(i, c)| c.rank_key(i)).collect();
            let best = (0..keys.len()).filter(|&i| keys[i].is_some()).min_by(|&a, &b| {
                compare(mode, keys[a].as_ref().expect("filtered"), keys[b].as_ref().expect("filtered")).0
            });
            let chosen = decision.best.map(|(index, _)| index);
            prop_assert_eq!(chosen, best);
            if let Some(index) = best {
                prop_assert!(matches!(decision.verdict(index), Verdict::Won | Verdict::Held));
            }
        }
    }
}
