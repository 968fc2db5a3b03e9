//! Checking a user's dynamic priority in a fairshare queue at a time, in
//! the queue's fairshare table of the snapshot taken then.

use mcfed_scenario::expect::UserPriority;

use super::{Check, Found, Run};

impl Check for UserPriority {
    fn check(&self, run: Run<'_>) -> Found {
        let UserPriority {
            cluster,
            queue,
            user,
            at,
            priority,
            tolerance,
        } = self;
        let expected = format!(
            "at {at} user {user} has dynamic priority {priority} (±{tolerance}) in {queue}@{cluster}"
        );
        let row = run.cluster_at(*at, cluster.as_str()).and_then(|snapshot| {
            snapshot
                .report
                .queues
                .iter()
                .find(|report| report.queue == queue.as_str())?
                .fairshare
                .as_ref()?
                .users
                .iter()
                .find(|row| row.answers_for(user))
        });
        match row {
            Some(row) => Found {
                expected,
                held: (row.priority - priority).abs() <= *tolerance,
                actual: format!(
                    "priority {:.4} (shares {}, started {}, cpu {:.1}s, run {:.0}s, adjust {:.3})",
                    row.priority, row.shares, row.started, row.cpu_time, row.run_time, row.adjust
                ),
                skipped: None,
            },
            None => Found::failed(
                expected,
                "the user has no row in the queue's fairshare table",
            ),
        }
    }
}
