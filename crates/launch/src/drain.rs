//! When a launched run that drains (`end = "drain"`, the default with a
//! workload) is over: once everything has been played, the launcher asks
//! every process whether it has work left ([`AdminRequest::Activity`]),
//! and applies the federation's drain rule ([`Quiescence`], as the
//! in-process engines do): nothing is due at any member (no job running,
//! no timer), and a forwarder still holding jobs has had a whole round of
//! counter updates to let them go. Because messages between processes may
//! be on their way when they are asked, the run only counts as drained
//! after two quiet answers in a row.

use mcfed_federation::{Activity, Quiescence};

use super::drive::Drive;
use super::*;
use mcfed_admin::ActivityReply;

/// Polls between asking, in wall time: a quarter of the longest update
/// interval at the run's speed, within these bounds.
const POLL_MIN: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_millis(250);

/// How many quiet answers in a row end the run.
const QUIET_ROUNDS: u32 = 2;

/// What the federation said at one poll.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Federation {
    /// The latest emulated time of a process, in seconds.
    now: f64,
    /// Some process has work due.
    busy: bool,
    /// Some forwarder holds jobs.
    holding: bool,
}

impl Federation {
    fn add(&mut self, reply: &ActivityReply) {
        self.now = self.now.max(reply.now);
        self.busy |= reply.next_wake.is_some();
        self.holding |= reply.holding;
    }
}

/// Whether the run is over, poll after poll: the federation's drain rule
/// ([`Quiescence`]), and the launcher's allowance for messages in flight
/// between processes (two quiet answers in a row).
#[derive(Debug)]
struct DrainRule {
    rule: Quiescence,
    quiet: u32,
}

impl DrainRule {
    fn new(longest_interval: Duration) -> Self {
        DrainRule {
            rule: Quiescence::new(longest_interval),
            quiet: 0,
        }
    }

    /// Takes one poll's answers; whether the run is over.
    fn drained(&mut self, federation: Federation) -> bool {
        let now = SimTime::from_millis((federation.now * 1000.0).round() as u64);
        let activity = Activity {
            busy: federation.busy,
            holding: federation.holding,
        };
        let drained = self.rule.drained(now, now, activity);
        self.quiet = if federation.busy { 0 } else { self.quiet + 1 };
        drained && self.quiet >= QUIET_ROUNDS
    }
}

impl Drive<'_> {
    /// Waits until the federation has no work left; the emulated time then.
    pub(super) async fn until_drained(&mut self) -> Result<SimTime, LaunchError> {
        let longest = self.scenario.longest_update_interval();
        let poll = longest
            .div_f64(4.0 * self.options.speed.max(1e-6))
            .clamp(POLL_MIN, POLL_MAX);
        let mut rule = DrainRule::new(longest);
        loop {
            let mut federation = Federation::default();
            for index in 0..self.targets.len() {
                let Some(session) = self.session(index).await? else {
                    continue;
                };
                match session.ask(&AdminRequest::Activity).await? {
                    AdminResponse::Activity(reply) => federation.add(&reply),
                    _ => return Err(ClientError::Unexpected(session.cluster().to_owned()).into()),
                }
            }
            if rule.drained(federation) {
                let end = SimTime::from_millis((federation.now * 1000.0).round() as u64);
                tracing::info!(end = %end, "drained: no cluster has work left");
                return Ok(end);
            }
            tokio::time::sleep(poll).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll(now: f64, busy: bool, holding: bool) -> Federation {
        Federation { now, busy, holding }
    }

    #[test]
    fn two_quiet_polls_in_a_row_end_the_run() {
        let mut rule = DrainRule::new(Duration::from_secs(30));
        assert!(!rule.drained(poll(1.0, true, false)));
        assert!(!rule.drained(poll(2.0, false, false)));
        // Something arrived in between: busy again, start over.
        assert!(!rule.drained(poll(3.0, true, false)));
        assert!(!rule.drained(poll(4.0, false, false)));
        assert!(rule.drained(poll(5.0, false, false)));
    }

    #[test]
    fn a_holding_forwarder_gets_a_whole_update_interval() {
        let mut rule = DrainRule::new(Duration::from_secs(30));
        assert!(!rule.drained(poll(10.0, false, true)));
        assert!(!rule.drained(poll(20.0, false, true)));
        assert!(!rule.drained(poll(40.0, false, true)));
        assert!(rule.drained(poll(41.0, false, true)));
    }
}
