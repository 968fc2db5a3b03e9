//! Unit tests of the fairshare rules.

use mcfed_protocol::SimTime;

use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn parses_user_shares() {
    let shares: UserShares =
        "USER_SHARES[[alice, 10] [bob, 5] [team@, 3] [lab, 4] [others, 2] [default, 1]]"
            .parse()
            .expect("valid");
    assert_eq!(shares.named("alice"), Some(10));
    assert_eq!(shares.named("lab"), Some(4));
    assert_eq!(
        shares
            .find(&ShareTarget::Members("team".into()))
            .map(|(_, e)| e.shares),
        Some(3)
    );
    assert_eq!(
        shares.find(&ShareTarget::Others).map(|(_, e)| e.shares),
        Some(2)
    );
    assert_eq!(
        shares.find(&ShareTarget::Default).map(|(_, e)| e.shares),
        Some(1)
    );
    assert_eq!(
        shares.to_string(),
        "USER_SHARES[[alice, 10] [bob, 5] [team@, 3] [lab, 4] [others, 2] [default, 1]]"
    );
    // lsb.users' spelling of a group's share tree, in parentheses.
    let group = UserShares::parse_list("([user1, 4] [others, 10])").expect("valid");
    assert_eq!(group.entries.len(), 2);
    assert!(
        UserShares::parse_list("()")
            .expect("valid")
            .entries
            .is_empty()
    );
}

#[test]
fn refuses_bad_user_shares() {
    for (text, expected) in [
        ("[[alice, 1]]", UserSharesParseError::NotUserShares),
        ("USER_SHARES[]", UserSharesParseError::Empty),
        (
            "USER_SHARES[[alice 1]]",
            UserSharesParseError::BadEntry("[alice 1]".into()),
        ),
        (
            "USER_SHARES[[alice, 0]]",
            UserSharesParseError::BadShares("[alice, 0]".into()),
        ),
        (
            "USER_SHARES[[alice, 1] [alice, 2]]",
            UserSharesParseError::Repeated("alice".into()),
        ),
        (
            "USER_SHARES[[others, 1] [others, 2]]",
            UserSharesParseError::Repeated("others".into()),
        ),
        (
            "USER_SHARES[[@, 1]]",
            UserSharesParseError::BadEntry("[@, 1]".into()),
        ),
    ] {
        assert_eq!(text.parse::<UserShares>(), Err(expected), "{text}");
    }
}

fn factors() -> FairshareFactors {
    FairshareFactors::default()
}

#[test]
fn defaults_are_the_seeds() {
    let f = factors();
    assert_eq!(
        (f.cpu_time, f.run_time, f.run_job, f.fwd_job),
        (0.7, 0.7, 3.0, None)
    );
    assert_eq!(
        (f.fairshare_adjustment, f.hist_hours, f.gpu_run_time),
        (0.0, 5.0, 0.0)
    );
}

#[test]
fn queue_values_override_cluster_values() {
    let cluster = FairshareOverrides {
        cpu_time: Some(1.0),
        run_job: Some(2.0),
        ..FairshareOverrides::default()
    };
    let queue = FairshareOverrides {
        run_job: Some(5.0),
        ..FairshareOverrides::default()
    };
    let resolved = queue.over(&cluster).resolve();
    assert_eq!(resolved.cpu_time, 1.0, "from the cluster");
    assert_eq!(resolved.run_job, 5.0, "the queue's wins");
    assert_eq!(resolved.run_time, 0.7, "the default");
}

/// An idle user: only `(1 + 0) * RUN_JOB_FACTOR` = 3, so shares / 3.
#[test]
fn idle_user_priority_is_shares_over_run_job_factor() {
    let p = dynamic_priority(10, &UsageTerms::default(), &factors());
    assert!(close(p, 10.0 / 3.0), "{p}");
}

/// Each term on its own, against hand-computed values.
#[test]
fn each_term_against_hand_computed_values() {
    let all = FairshareFactors {
        cpu_time: 0.7,
        run_time: 0.7,
        run_job: 3.0,
        fwd_job: Some(2.0),
        fairshare_adjustment: 0.5,
        hist_hours: 5.0,
        gpu_run_time: 0.25,
        committed_run_time: 0.5,
        ..FairshareFactors::default()
    };
    let usage = UsageTerms {
        cpu_time: 2.0,
        run_time: 1.5,
        historical_run_time: 0.5,
        committed_run_time: 4.0,
        job_slots: 4.0,
        fwd_job_slots: 3.0,
        fairshare_adjustment: 6.0,
        historical_gpu_run_time: 1.0,
        gpu_run_time: 3.0,
        gpus: 2.0,
    };
    let terms = DenominatorTerms::new(&usage, &all);
    assert!(close(terms.cpu_time, 1.4), "2.0 h * 0.7");
    assert!(close(terms.run_time, 1.4), "(0.5 + 1.5) h * 0.7");
    assert!(
        close(terms.committed_run_time, 2.0),
        "4 h still committed * 0.5"
    );
    assert!(close(terms.job_slots, 15.0), "(1 + 4) * 3");
    assert!(close(terms.fwd_job_slots, 8.0), "(1 + 3) * 2");
    assert!(close(terms.fairshare_adjustment, 3.0), "6 * 0.5");
    assert!(
        close(terms.gpu_run_time, 1.0),
        "(1 + 3) GPU-hours * 0.25 (each job's hours already weighed by its GPUs)"
    );
    let p = dynamic_priority(100, &usage, &all);
    // 1.4 + 1.4 + 2 + 15 + 8 + 3 + 1 = 31.8
    assert!(close(p, 100.0 / 31.8), "{p}");
    // FWD_JOB_FACTOR not defined: the term is absent.
    let no_fwd = FairshareFactors {
        fwd_job: None,
        ..all
    };
    assert_eq!(DenominatorTerms::new(&usage, &no_fwd).fwd_job_slots, 0.0);
}

/// The denominator never goes below 0.01: at most 100 × shares.
#[test]
fn the_floor_caps_priority_at_100_times_shares() {
    let free = FairshareFactors {
        cpu_time: 0.0,
        run_time: 0.0,
        run_job: 0.0,
        ..factors()
    };
    let p = dynamic_priority(7, &UsageTerms::default(), &free);
    assert!(close(p, 700.0), "{p}");
    let tiny = FairshareFactors {
        run_job: 0.001,
        ..free
    };
    assert!(close(
        dynamic_priority(7, &UsageTerms::default(), &tiny),
        700.0
    ));
    let above = FairshareFactors {
        run_job: 0.02,
        ..free
    };
    assert!(close(
        dynamic_priority(7, &UsageTerms::default(), &above),
        350.0
    ));
}

#[test]
fn one_hour_decays_to_a_tenth_after_hist_hours() {
    assert!(close(decay_factor(5.0, 5.0), 0.1));
    assert!(close(decay_factor(10.0, 5.0), 0.01));
    assert!(close(decay_factor(2.5, 5.0), 0.1_f64.sqrt()));
    assert_eq!(decay_factor(7.0, 0.0), 1.0, "HIST_HOURS=0: no decay");
    let mut total = DecayingTotal::default();
    total.add(SimTime::ZERO, 1.0, 5.0);
    let later = SimTime::from_secs(5 * 3600);
    assert!(close(total.value_at(later, 5.0), 0.1));
    assert!(close(total.value_at(later, 10.0), 0.1_f64.sqrt()));
}

/// Growth at a constant rate integrates the decay exactly:
/// ∫₀ᵀ r·0.1^(s/H) ds = r·H/ln 10·(1 − 0.1^(T/H)).
#[test]
fn growth_integrates_the_decay() {
    let mut total = DecayingTotal::default();
    total.add_rate(SimTime::ZERO, 2.0, 5.0);
    let one_hour = SimTime::from_secs(3600);
    let expected = 2.0 * 5.0 / std::f64::consts::LN_10 * (1.0 - 0.1_f64.powf(0.2));
    assert!(close(total.value_at(one_hour, 5.0), expected));
    // Without decay, plain accumulation.
    assert!(close(total.value_at(one_hour, 0.0), 2.0));
    // Settling part-way changes nothing.
    let mut split = DecayingTotal::default();
    split.add_rate(SimTime::ZERO, 2.0, 5.0);
    split.add_rate(SimTime::from_secs(1800), 0.0, 5.0);
    assert!(close(split.value_at(one_hour, 5.0), expected));
}

fn job_use(slots: u32, since: u64, ran_before: u64) -> JobUse {
    JobUse {
        slots,
        cpu_utilisation: 1.0,
        memory_mb: 0,
        running_since: SimTime::from_secs(since),
        ran_before: std::time::Duration::from_secs(ran_before),
        run_limit: None,
        gpus: 0,
    }
}

#[test]
fn account_tracks_run_time_and_cpu_time() {
    let mut account = ShareAccount::new(10);
    // Two slots at half CPU: 1 CPU hour per hour.
    let first = JobUse {
        cpu_utilisation: 0.5,
        memory_mb: 100,
        ..job_use(2, 3600, 0)
    };
    // A second job that already ran 30 minutes before a suspension.
    let second = JobUse {
        memory_mb: 50,
        ..job_use(1, 3600, 1800)
    };
    account.job_runs(&first, 0.0);
    account.job_runs(&second, 0.0);
    let later = SimTime::from_secs(2 * 3600);
    assert!(close(account.run_time(later), 1.0 + 1.5));
    assert!(close(account.cpu_time(later, 0.0), 2.0));
    assert_eq!((account.running_slots, account.memory_mb), (3, 150));
    account.job_stops(later, &first, StopKind::Ended, 0.0);
    assert!(close(account.run_time(later), 1.5));
    assert!(close(account.cpu_time(later, 0.0), 2.0), "history stays");
    assert_eq!((account.running_jobs, account.running_slots), (1, 1));
}

/// RUN_TIME_DECAY: one job running 5 hours with HIST_HOURS 5 has run
/// 5 / ln 10 * (1 - 0.1) = 1.954 decayed hours; when it ends, its run
/// leaves the running figure and its 5 plain hours become history, which
/// decays to 0.5 after another 5 hours.
#[test]
fn decayed_and_historical_run_time_against_hand_computed_values() {
    let mut account = ShareAccount::new(10);
    let job = job_use(1, 0, 0);
    account.job_runs(&job, 5.0);
    let five = SimTime::from_secs(5 * 3600);
    let decayed = 5.0 / std::f64::consts::LN_10 * 0.9;
    assert!(close(account.decayed_run_time(five, 5.0), decayed));
    assert!(close(account.run_time(five), 5.0));
    account.job_stops(five, &job, StopKind::Ended, 5.0);
    assert!(close(account.decayed_run_time(five, 5.0), 0.0));
    assert!(close(account.historical_run_time(five, 5.0), 5.0));
    let ten = SimTime::from_secs(10 * 3600);
    assert!(close(account.historical_run_time(ten, 5.0), 0.5));
    // A suspension is not an end: no history.
    let mut suspended = ShareAccount::new(1);
    suspended.job_runs(&job, 5.0);
    suspended.job_stops(five, &job, StopKind::Suspended, 5.0);
    assert!(close(suspended.historical_run_time(five, 5.0), 0.0));
}

/// Committed run time: a job with a 4-hour run limit, 1 hour in, has 3
/// hours still committed; GPU run time: 2 GPUs for 1 hour are 2 GPU-hours,
/// which go to the GPU history when the job ends.
#[test]
fn committed_and_gpu_run_time_against_hand_computed_values() {
    let mut account = ShareAccount::new(10);
    let job = JobUse {
        run_limit: Some(std::time::Duration::from_secs(4 * 3600)),
        gpus: 2,
        ..job_use(1, 0, 0)
    };
    account.job_runs(&job, 5.0);
    let hour = SimTime::from_secs(3600);
    assert!(close(account.committed_run_time(hour), 3.0));
    assert!(close(account.gpu_run_time(hour), 2.0));
    account.job_stops(hour, &job, StopKind::Ended, 5.0);
    assert!(close(account.committed_run_time(hour), 0.0));
    assert!(close(account.gpu_run_time(hour), 0.0));
    assert!(close(account.historical_gpu_run_time(hour, 5.0), 2.0));
}

/// The seed's memory plug-in: (1 + slots) * ((mem / slots) / (slot_mem * THRESHOLD)).
#[test]
fn memory_plugin_against_hand_computed_values() {
    let plugin = MemoryAdjustment { threshold: 2.0 };
    let input = AdjustmentInput {
        job_slots: 4.0,
        used_slots: 4.0,
        used_memory_mb: 16_000.0,
        slot_memory_mb: 1_000.0,
        ..AdjustmentInput::default()
    };
    // (1 + 4) * ((16000 / 4) / (1000 * 2)) = 5 * 2 = 10.
    assert!(close(plugin.adjustment(&input), 10.0));
    let idle = AdjustmentInput {
        used_slots: 0.0,
        ..input
    };
    assert_eq!(plugin.adjustment(&idle), 0.0);
    let no_memory = AdjustmentInput {
        slot_memory_mb: 0.0,
        ..input
    };
    assert_eq!(plugin.adjustment(&no_memory), 0.0);
    assert!(AdjustmentPlugin::None.build().is_none());
    let built = AdjustmentPlugin::Memory { threshold: 2.0 }
        .build()
        .expect("a plug-in");
    assert!(close(built.adjustment(&input), 10.0));
}
