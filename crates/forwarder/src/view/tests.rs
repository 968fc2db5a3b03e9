//! Tests of the remote view: updates, local increments, reconciliation.
use mcfed_protocol::{ForwardWatermark, QueueCounters, QueueFacts, QueueName};

use super::*;

fn cluster(name: &str) -> ClusterName {
    ClusterName::new(name).expect("valid")
}

fn remote(text: &str) -> QueueRef {
    text.parse().expect("valid")
}

fn counters(available: u32, pending: u32) -> QueueCounters {
    QueueCounters {
        cluster: cluster("C2"),
        queue: QueueName::new("high").expect("valid"),
        priority: 40,
        total_slots: 100,
        available_slots: available,
        running_slots: 100 - available,
        pending_slots: pending,
        preemptable_available_slots: available,
        lowest_preemptable_priority: None,
        impt_jobbklg: Some(50),
        imported_pending_jobs: 0,
        resources: vec![],
        slot_group: 0,
        gpu_slots: Default::default(),
        gpu_free_slots: Default::default(),
    }
}

fn update(seq: u64, available: u32, last_forward: u64) -> CounterUpdate {
    CounterUpdate {
        sender: cluster("C2"),
        seq,
        taken_at: SimTime::from_secs(seq * 30),
        queues: vec![counters(available, 0)],
        forwards_received: vec![ForwardWatermark {
            submission_cluster: cluster("C1"),
            last_forward_seq: last_forward,
        }],
    }
}

fn view() -> (RemoteView, RemoteQueueId) {
    let mut view = RemoteView::new();
    let id = view.add_queue(&remote("high@C2"));
    (view, id)
}

#[test]
fn unknown_until_the_first_update() {
    let (mut view, id) = view();
    assert!(view.figures(id).is_none());
    assert_eq!(
        view.apply_update(&cluster("C1"), &update(1, 10, 0)),
        UpdateOutcome::Applied
    );
    assert_eq!(view.figures(id).map(|f| f.available), Some(10));
    assert_eq!(
        view.view_age(id, SimTime::from_secs(40)),
        Some(Duration::from_secs(10))
    );
}

#[test]
fn forward_then_update_that_reflects_it() {
    let (mut view, id) = view();
    view.apply_update(&cluster("C1"), &update(1, 10, 0));
    let seq = view.record_forward(id, 4);
    assert_eq!(seq, 1);
    assert_eq!(view.figures(id).map(|f| f.available), Some(6));
    // The execution cluster received forward 1 and now reports 6 free.
    view.apply_update(&cluster("C1"), &update(2, 6, 1));
    assert_eq!(
        view.figures(id).map(|f| f.available),
        Some(6),
        "not counted twice"
    );
    assert_eq!(view.unreflected_forwards(&cluster("C2")), 0);
}

#[test]
fn update_that_does_not_yet_reflect_a_forward() {
    let (mut view, id) = view();
    view.apply_update(&cluster("C1"), &update(1, 10, 0));
    view.record_forward(id, 4);
    // Snapshot taken before forward 1 arrived: still 10 free there.
    view.apply_update(&cluster("C1"), &update(2, 10, 0));
    assert_eq!(
        view.figures(id).map(|f| f.available),
        Some(6),
        "stays counted"
    );
    assert_eq!(view.unreflected_forwards(&cluster("C2")), 1);
}

#[test]
fn duplicated_and_out_of_order_updates_are_ignored() {
    let (mut view, id) = view();
    view.apply_update(&cluster("C1"), &update(2, 7, 0));
    assert_eq!(
        view.apply_update(&cluster("C1"), &update(2, 9, 0)),
        UpdateOutcome::Stale { seq: 2, applied: 2 }
    );
    assert_eq!(
        view.apply_update(&cluster("C1"), &update(1, 3, 0)),
        UpdateOutcome::Stale { seq: 1, applied: 2 }
    );
    assert_eq!(view.figures(id).map(|f| f.available), Some(7));
    assert_eq!(view.applied_seq(&cluster("C2")), Some(2));
}

#[test]
fn forwards_beyond_free_slots_pend_and_fill_the_backlog() {
    let mut figures = Figures::from_counters(&counters(2, 0), SimTime::ZERO);
    figures.count_forward(1);
    assert_eq!((figures.available, figures.running), (1, 99));
    figures.count_forward(2);
    assert_eq!((figures.pending, figures.imported_pending), (2, 1));
}

#[test]
fn forwards_that_preempt_take_preemptable_slots() {
    let mut base = counters(0, 0);
    base.preemptable_available_slots = 5;
    let mut figures = Figures::from_counters(&base, SimTime::ZERO);
    figures.count_forward(3);
    assert_eq!((figures.preemptable_available, figures.pending), (2, 0));
}

#[test]
fn refused_forward_is_forgotten() {
    let (mut view, id) = view();
    view.apply_update(&cluster("C1"), &update(1, 10, 0));
    let first = view.record_forward(id, 4);
    view.record_forward(id, 2);
    view.forget_forward(&cluster("C2"), first);
    assert_eq!(view.figures(id).map(|f| f.available), Some(8));
}

#[test]
fn unknown_sender_is_reported() {
    let (mut view, _) = view();
    let mut stray = update(1, 1, 0);
    stray.sender = cluster("C9");
    assert_eq!(
        view.apply_update(&cluster("C1"), &stray),
        UpdateOutcome::UnknownSender
    );
}

fn facts(queue: &str, total: u32, slot_group: u32) -> QueueFacts {
    QueueFacts {
        queue: QueueName::new(queue).expect("valid"),
        priority: 40,
        total_slots: total,
        impt_jobbklg: Some(50),
        resources: vec![],
        slot_group,
        gpu_slots: Default::default(),
    }
}

#[test]
fn a_hello_makes_queues_known_with_an_empty_workload() {
    let (mut view, id) = view();
    view.apply_facts(&cluster("C2"), &[facts("high", 10, 0)], SimTime::ZERO);
    let figures = view.figures(id).copied().expect("known from the hello");
    assert!(!figures.from_counters);
    assert_eq!(
        (figures.total, figures.available, figures.pending),
        (10, 10, 0)
    );
    view.record_forward(id, 4);
    assert_eq!(view.figures(id).map(|f| f.available), Some(6));
    // The first update replaces the facts; the forward it does not
    // reflect stays counted.
    view.apply_update(&cluster("C1"), &update(1, 10, 0));
    let figures = view.figures(id).copied().expect("known");
    assert!(figures.from_counters);
    assert_eq!(figures.available, 6);
}

#[test]
fn without_counters_a_finished_forward_frees_its_slots() {
    let (mut view, id) = view();
    view.apply_facts(&cluster("C2"), &[facts("high", 4, 0)], SimTime::ZERO);
    let first = view.record_forward(id, 3);
    view.record_forward(id, 2);
    // 3 free slots taken, then the 2-slot job pends.
    assert_eq!(
        view.figures(id).map(|f| (f.available, f.pending)),
        Some((1, 2))
    );
    assert!(view.forward_finished(&cluster("C2"), first));
    assert_eq!(
        view.figures(id).map(|f| (f.available, f.pending)),
        Some((2, 0))
    );
    // A forward no longer in the log changes nothing.
    assert!(!view.forward_finished(&cluster("C2"), first));
}

#[test]
fn queues_of_one_slot_group_share_their_free_slots() {
    let mut view = RemoteView::new();
    let a = view.add_queue(&remote("a@C2"));
    let b = view.add_queue(&remote("b@C2"));
    let c = view.add_queue(&remote("c@C2"));
    // a and b share hosts (group 0); c is on other hosts (group 2).
    view.apply_facts(
        &cluster("C2"),
        &[facts("a", 10, 0), facts("b", 10, 0), facts("c", 10, 2)],
        SimTime::ZERO,
    );
    view.record_forward(a, 4);
    let available = |view: &RemoteView, id| view.figures(id).map(|f| f.available);
    assert_eq!(
        [
            available(&view, a),
            available(&view, b),
            available(&view, c)
        ],
        [Some(6), Some(6), Some(10)]
    );
    view.record_forward(b, 6);
    assert_eq!(
        [available(&view, a), available(&view, b)],
        [Some(0), Some(0)]
    );
    // Only b runs its job; a's figures show no running slots of b's.
    assert_eq!(view.figures(a).map(|f| f.running), Some(4));
    // A job that pends in a takes no free slots from b.
    view.record_forward(a, 1);
    assert_eq!(view.figures(a).map(|f| f.pending), Some(1));
    assert_eq!(view.figures(b).map(|f| f.pending), Some(0));
}

#[test]
fn a_queue_marked_full_takes_nothing_until_its_cluster_changes() {
    let (mut view, id) = view();
    view.apply_facts(&cluster("C2"), &[facts("high", 4, 0)], SimTime::ZERO);
    let seq = view.record_forward(id, 1);
    view.mark_backlog_full(id);
    let figures = view.figures(id).copied().expect("known");
    // Full (50), plus the logged forward, now counted as pending there.
    assert_eq!((figures.available, figures.imported_pending), (0, 51));
    // Without counters, a job of this cluster finishing lifts the mark.
    view.forward_finished(&cluster("C2"), seq);
    assert_eq!(view.figures(id).map(|f| f.available), Some(4));
}

#[test]
fn gpu_slots_come_from_the_counters_and_forwards_take_free_ones() {
    let (mut view, id) = view();
    let mut with_gpus = update(1, 10, 0);
    with_gpus.queues[0].gpu_slots = GpuSlots::from_hosts([(2, 8), (4, 4)]);
    with_gpus.queues[0].gpu_free_slots = GpuSlots::from_hosts([(1, 6)]);
    view.apply_update(&cluster("C1"), &with_gpus);
    let fit = view.fit_epoch();
    let (total, free) = view.gpu_slots(id);
    assert_eq!((total.slots_for(2), total.slots_for(3)), (12, 4));
    assert_eq!(free.slots_for(1), 6);
    // A forward that takes free slots takes them from the GPU hosts too,
    // as far as the submission cluster can tell.
    view.record_forward(id, 4);
    assert_eq!(view.gpu_slots(id).1.slots_for(1), 2);
    // An update that only moves the free GPUs changes decisions, not what
    // could ever fit.
    let mut busier = update(2, 10, 1);
    busier.queues[0].gpu_slots = GpuSlots::from_hosts([(2, 8), (4, 4)]);
    view.apply_update(&cluster("C1"), &busier);
    assert!(view.last_update_changed());
    assert_eq!(view.gpu_slots(id).1.slots_for(1), 0);
    assert_eq!(view.fit_epoch(), fit);
    // Hosts with GPUs gone: what could fit changed.
    view.apply_update(&cluster("C1"), &update(3, 10, 1));
    assert_eq!(view.gpu_slots(id).0.slots_for(1), 0);
    assert_ne!(view.fit_epoch(), fit);
}

#[test]
fn the_victim_goes_with_the_last_preemptable_slot() {
    let (mut view, id) = view();
    let mut full = update(1, 0, 0);
    full.queues[0].preemptable_available_slots = 2;
    full.queues[0].lowest_preemptable_priority = Some(10);
    view.apply_update(&cluster("C1"), &full);
    view.record_forward(id, 1);
    let figures = view.figures(id).copied().expect("known");
    assert_eq!(
        (figures.preemptable_available, figures.victim_priority),
        (1, Some(10))
    );
    view.record_forward(id, 1);
    let figures = view.figures(id).copied().expect("known");
    assert_eq!(
        (figures.preemptable_available, figures.victim_priority),
        (0, None),
        "nothing is left to preempt: no victim"
    );
}
