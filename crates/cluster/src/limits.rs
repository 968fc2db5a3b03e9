//! Job slot limits and which jobs count against them (seed
//! `003_f223f39848659bbb.txt`, "Calculation of job slots in use").
//!
//! Without preemption every limit counts running and suspended jobs (and
//! nothing is ever suspended in mcfed then, since only preemption suspends).
//! With preemption enabled:
//!
//! | limit | suspended jobs count? |
//! |---|---|
//! | host MXJ | no |
//! | queue limits (QJOB_LIMIT, UJOB_LIMIT, HJOB_LIMIT) | yes, always |
//! | a user's MAX_JOBS (lsb.users) | no |
//! | a user's JL/P | yes, unless PREEMPT_FOR=USER_JLP |
//! | a user group's MAX_JOBS | yes, unless PREEMPT_FOR=GROUP_MAX |
//! | a user group's JL/P | yes, unless PREEMPT_FOR=GROUP_JLP |
//! | a host's per-user JL/U | yes, unless PREEMPT_FOR=HOST_JLU |
//!
//! [`counts_suspended`] is that table; the scheduler asks it for every
//! limit, so a preempting job can start only when suspending its victims
//! really frees what blocks it.

use crate::preemption::PreemptFor;

/// A kind of job slot limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotLimit {
    /// MXJ: slots on a host.
    HostSlots,
    /// QJOB_LIMIT, UJOB_LIMIT or HJOB_LIMIT: limits set on a queue.
    Queue,
    /// MAX_JOBS of an individual user (lsb.users).
    UserTotal,
    /// JL/P of an individual user (lsb.users).
    UserPerProcessor,
    /// MAX_JOBS of a user group (lsb.users).
    GroupTotal,
    /// JL/P of a user group (lsb.users).
    GroupPerProcessor,
    /// JL/U of a host (lsb.hosts): slots per user on the host.
    HostPerUser,
}

/// Whether suspended jobs count against `limit`, given whether preemption
/// is enabled in the cluster (some queue is PREEMPTIVE or PREEMPTABLE) and
/// PREEMPT_FOR.
pub fn counts_suspended(
    limit: SlotLimit,
    preemption_enabled: bool,
    preempt_for: PreemptFor,
) -> bool {
    if !preemption_enabled {
        return true;
    }
    match limit {
        SlotLimit::HostSlots | SlotLimit::UserTotal => false,
        SlotLimit::Queue => true,
        SlotLimit::UserPerProcessor => !preempt_for.user_jlp,
        SlotLimit::GroupTotal => !preempt_for.group_max,
        SlotLimit::GroupPerProcessor => !preempt_for.group_jlp,
        SlotLimit::HostPerUser => !preempt_for.host_jlu,
    }
}

/// The slots a per-processor limit allows on a host with `processors`
/// processors: rounded up, so JL/P 0.5 allows 2 slots on 4 processors and 1
/// on 1.
pub fn per_processor_slots(slots_per_processor: f64, processors: u32) -> u32 {
    let slots = (slots_per_processor * f64::from(processors)).ceil();
    if slots <= 0.0 {
        0
    } else if slots >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        slots as u32
    }
}

/// Slots held against a limit: running and suspended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// Slots of running jobs.
    pub running: u32,
    /// Slots of suspended jobs.
    pub suspended: u32,
}

impl Held {
    /// The slots that count when suspended jobs do (`true`) or do not.
    pub fn counted(&self, suspended_count: bool) -> u32 {
        if suspended_count {
            self.running + self.suspended
        } else {
            self.running
        }
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.running == 0 && self.suspended == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [SlotLimit; 7] = [
        SlotLimit::HostSlots,
        SlotLimit::Queue,
        SlotLimit::UserTotal,
        SlotLimit::UserPerProcessor,
        SlotLimit::GroupTotal,
        SlotLimit::GroupPerProcessor,
        SlotLimit::HostPerUser,
    ];

    /// Row 1: preemption not enabled: everything counts both.
    #[test]
    fn without_preemption_suspended_jobs_count_everywhere() {
        for limit in ALL {
            assert!(counts_suspended(limit, false, PreemptFor::default()));
            let all = PreemptFor {
                group_jlp: true,
                group_max: true,
                host_jlu: true,
                user_jlp: true,
                least_run_time: true,
            };
            assert!(counts_suspended(limit, false, all), "{limit:?}");
        }
    }

    /// Row 2: preemption enabled, no PREEMPT_FOR.
    #[test]
    fn with_preemption_hosts_and_user_totals_ignore_suspended_jobs() {
        let none = PreemptFor::default();
        assert!(!counts_suspended(SlotLimit::HostSlots, true, none));
        assert!(!counts_suspended(SlotLimit::UserTotal, true, none));
        assert!(counts_suspended(SlotLimit::Queue, true, none));
        assert!(counts_suspended(SlotLimit::UserPerProcessor, true, none));
        assert!(counts_suspended(SlotLimit::GroupTotal, true, none));
        assert!(counts_suspended(SlotLimit::GroupPerProcessor, true, none));
        assert!(counts_suspended(SlotLimit::HostPerUser, true, none));
    }

    /// Rows 3-6: each PREEMPT_FOR keyword frees exactly its own limit.
    #[test]
    fn each_preempt_for_keyword_frees_its_own_limit() {
        let cases = [
            (
                PreemptFor {
                    group_jlp: true,
                    ..PreemptFor::default()
                },
                SlotLimit::GroupPerProcessor,
            ),
            (
                PreemptFor {
                    group_max: true,
                    ..PreemptFor::default()
                },
                SlotLimit::GroupTotal,
            ),
            (
                PreemptFor {
                    host_jlu: true,
                    ..PreemptFor::default()
                },
                SlotLimit::HostPerUser,
            ),
            (
                PreemptFor {
                    user_jlp: true,
                    ..PreemptFor::default()
                },
                SlotLimit::UserPerProcessor,
            ),
        ];
        for (preempt_for, freed) in cases {
            for limit in ALL {
                let expected = match limit {
                    SlotLimit::HostSlots | SlotLimit::UserTotal => false,
                    SlotLimit::Queue => true,
                    other => other != freed,
                };
                assert_eq!(
                    counts_suspended(limit, true, preempt_for),
                    expected,
                    "{preempt_for} {limit:?}"
                );
            }
        }
    }

    #[test]
    fn per_processor_limits_round_up() {
        assert_eq!(per_processor_slots(0.5, 4), 2);
        assert_eq!(per_processor_slots(0.5, 1), 1);
        assert_eq!(per_processor_slots(1.5, 3), 5);
        assert_eq!(per_processor_slots(0.0, 8), 0);
    }

    #[test]
    fn held_counts_suspended_slots_only_when_asked() {
        let held = Held {
            running: 3,
            suspended: 2,
        };
        assert_eq!(held.counted(true), 5);
        assert_eq!(held.counted(false), 3);
        assert!(!held.is_empty());
        assert!(Held::default().is_empty());
    }
}
