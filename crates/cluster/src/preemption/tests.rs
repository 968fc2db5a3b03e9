//! Unit tests of PREEMPTION, PREEMPT_FOR and the NO_PREEMPT_* guards.

use std::time::Duration;

use super::*;

fn queue(name: &str) -> QueueName {
    QueueName::new(name).expect("valid")
}

fn parse(text: &str) -> Preemption {
    text.parse().expect("parses")
}

#[test]
fn parses_every_form() {
    assert_eq!(parse(""), Preemption::default());
    assert_eq!(parse("PREEMPTIVE").preemptive, Some(Scope::ByPriority));
    let both = parse("PREEMPTIVE[low+2 normal] PREEMPTABLE[top]");
    assert_eq!(
        both.preemptive,
        Some(Scope::Listed(vec![
            PreemptTarget {
                queue: queue("low"),
                preference: Some(2)
            },
            PreemptTarget {
                queue: queue("normal"),
                preference: None
            },
        ]))
    );
    assert_eq!(both.preemptable, Some(Scope::Listed(vec![queue("top")])));
    assert_eq!(
        both.to_string(),
        "PREEMPTIVE[low+2 normal] PREEMPTABLE[top]"
    );
}

#[test]
fn refuses_bad_values() {
    assert!(matches!(
        "PREEMPT".parse::<Preemption>(),
        Err(PreemptionParseError::UnknownKeyword(_))
    ));
    assert!(matches!(
        "PREEMPTIVE[low".parse::<Preemption>(),
        Err(PreemptionParseError::Unclosed(_))
    ));
    assert!(matches!(
        "PREEMPTIVE[low+x]".parse::<Preemption>(),
        Err(PreemptionParseError::BadEntry { .. })
    ));
    assert!(matches!(
        "PREEMPTIVE PREEMPTIVE".parse::<Preemption>(),
        Err(PreemptionParseError::Repeated(_))
    ));
}

/// Seed 003's case study: A 99; B 10, preemptive and preemptable; C 1.
#[test]
fn three_queue_case_study() {
    let (a, b, c) = (queue("A"), queue("B"), queue("C"));
    let none = Preemption::default();
    let both = parse("PREEMPTIVE PREEMPTABLE");
    let facts_a = QueueFacts {
        name: &a,
        priority: 99,
        preemption: &none,
    };
    let facts_b = QueueFacts {
        name: &b,
        priority: 10,
        preemption: &both,
    };
    let facts_c = QueueFacts {
        name: &c,
        priority: 1,
        preemption: &none,
    };
    assert!(can_preempt(facts_a, facts_b), "A preempts B");
    assert!(can_preempt(facts_b, facts_c), "B preempts C");
    assert!(!can_preempt(facts_a, facts_c), "A cannot preempt C");
    assert!(!can_preempt(facts_b, facts_a));
    assert!(!can_preempt(facts_c, facts_b));
}

#[test]
fn preemptable_list_restricts_preemptors() {
    let (high, other, low) = (queue("high"), queue("other"), queue("low"));
    let preemptive = parse("PREEMPTIVE");
    let only_high = parse("PREEMPTABLE[high]");
    let facts = |name, priority, preemption| QueueFacts {
        name,
        priority,
        preemption,
    };
    assert!(can_preempt(
        facts(&high, 50, &preemptive),
        facts(&low, 1, &only_high)
    ));
    assert!(!can_preempt(
        facts(&other, 60, &preemptive),
        facts(&low, 1, &only_high)
    ));
}

#[test]
fn preference_numbers() {
    let p = parse("PREEMPTIVE[low+2 normal]");
    assert_eq!(preference(&p, &queue("low")), Some(2));
    assert_eq!(preference(&p, &queue("normal")), None);
    assert_eq!(preference(&p, &queue("absent")), None);
}

#[test]
fn preempt_for_parses_every_keyword() {
    let all: PreemptFor = "GROUP_JLP GROUP_MAX HOST_JLU USER_JLP LEAST_RUN_TIME"
        .parse()
        .expect("valid");
    assert!(all.group_jlp && all.group_max && all.host_jlu && all.user_jlp);
    assert!(all.least_run_time);
    assert_eq!(
        all.to_string(),
        "GROUP_JLP GROUP_MAX HOST_JLU USER_JLP LEAST_RUN_TIME"
    );
    assert_eq!("".parse::<PreemptFor>(), Ok(PreemptFor::default()));
    assert!(matches!(
        "MINI_JOB".parse::<PreemptFor>(),
        Err(PreemptForParseError::NotEmulated(_))
    ));
    assert!(matches!(
        "GROUP".parse::<PreemptFor>(),
        Err(PreemptForParseError::Unknown(_))
    ));
}

#[test]
fn guards_parse_times_and_percentages() {
    assert_eq!(
        "90m".parse(),
        Ok(PreemptGuard::Time(Duration::from_secs(5400)))
    );
    assert_eq!("50%".parse(), Ok(PreemptGuard::PercentOfRunLimit(50)));
    assert!(matches!(
        "60".parse::<PreemptGuard>(),
        Err(PreemptGuardParseError::NoUnit(_))
    ));
    assert!(matches!(
        "150%".parse::<PreemptGuard>(),
        Err(PreemptGuardParseError::BadPercent(_))
    ));
    assert!(matches!(
        "soon".parse::<PreemptGuard>(),
        Err(PreemptGuardParseError::Bad(_))
    ));
}

#[test]
fn run_time_guard_protects_jobs_that_ran_long_enough() {
    let minutes = |m: u64| Duration::from_secs(m * 60);
    let guards = PreemptGuards {
        run_time: Some(PreemptGuard::Time(minutes(30))),
        finish_time: None,
    };
    assert_eq!(guards.protection(minutes(29), None), None);
    assert_eq!(
        guards.protection(minutes(30), None),
        Some(Protection::RunTime)
    );
    let percent = PreemptGuards {
        run_time: Some(PreemptGuard::PercentOfRunLimit(50)),
        finish_time: None,
    };
    assert_eq!(percent.protection(minutes(100), None), None, "no run limit");
    assert_eq!(
        percent.protection(minutes(30), Some(minutes(60))),
        Some(Protection::RunTime)
    );
    assert_eq!(percent.protection(minutes(29), Some(minutes(60))), None);
}

#[test]
fn finish_time_guard_protects_jobs_about_to_finish() {
    let minutes = |m: u64| Duration::from_secs(m * 60);
    let guards = PreemptGuards {
        run_time: None,
        finish_time: Some(PreemptGuard::Time(minutes(10))),
    };
    assert_eq!(guards.protection(minutes(55), None), None, "no run limit");
    assert_eq!(guards.protection(minutes(49), Some(minutes(60))), None);
    assert_eq!(
        guards.protection(minutes(50), Some(minutes(60))),
        Some(Protection::FinishTime)
    );
    let percent = PreemptGuards {
        run_time: None,
        finish_time: Some(PreemptGuard::PercentOfRunLimit(25)),
    };
    assert_eq!(
        percent.protection(minutes(46), Some(minutes(60))),
        Some(Protection::FinishTime)
    );
    assert_eq!(percent.protection(minutes(44), Some(minutes(60))), None);
    let queue = PreemptGuards {
        run_time: Some(PreemptGuard::Time(minutes(5))),
        finish_time: None,
    };
    let merged = queue.over(&guards);
    assert_eq!(merged.run_time, queue.run_time);
    assert_eq!(merged.finish_time, guards.finish_time);
}
