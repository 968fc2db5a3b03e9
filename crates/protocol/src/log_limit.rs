//! At most one log line per kind of event from outside per interval, with
//! the count of those not logged (rate-limited warnings, issue 26).

use std::time::Duration;

/// At most one log line per kind of event from outside (a refused
/// handshake, a skipped trace line) per interval, with the count of those
/// not logged: 60,000 junk datagrams make a few lines, not thousands.
///
/// Sans-IO at heart ([`LogLimit::admit_at`] takes the time); a `static`
/// can hold one.
#[derive(Debug)]
pub struct LogLimit {
    interval: Duration,
    kinds: std::sync::Mutex<Vec<(&'static str, LogWindow)>>,
}

#[derive(Clone, Copy, Debug)]
struct LogWindow {
    /// When the last line of this kind was logged.
    logged_at: std::time::Instant,
    /// Events of this kind since then, not logged.
    suppressed: u64,
}

impl LogLimit {
    /// One line per kind per `interval`.
    pub const fn new(interval: Duration) -> Self {
        LogLimit {
            interval,
            kinds: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Whether an event of `kind` is logged now: `Some(n)`, n the events of
    /// that kind not logged since its last line (say so in the line), or
    /// `None` (counted, not logged).
    pub fn admit(&self, kind: &'static str) -> Option<u64> {
        self.admit_at(kind, std::time::Instant::now())
    }

    /// [`LogLimit::admit`] at time `now`.
    pub fn admit_at(&self, kind: &'static str, now: std::time::Instant) -> Option<u64> {
        let Ok(mut kinds) = self.kinds.lock() else {
            return Some(0);
        };
        let Some((_, window)) = kinds.iter_mut().find(|(known, _)| *known == kind) else {
            kinds.push((
                kind,
                LogWindow {
                    logged_at: now,
                    suppressed: 0,
                },
            ));
            return Some(0);
        };
        if now.saturating_duration_since(window.logged_at) < self.interval {
            window.suppressed += 1;
            return None;
        }
        let suppressed = std::mem::take(&mut window.suppressed);
        window.logged_at = now;
        Some(suppressed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_limit_lets_one_line_per_kind_per_interval_with_a_count() {
        let limit = LogLimit::new(Duration::from_secs(10));
        let start = std::time::Instant::now();
        assert_eq!(limit.admit_at("handshake", start), Some(0));
        for millis in 1..=2169 {
            let at = start + Duration::from_millis(millis);
            assert_eq!(limit.admit_at("handshake", at), None);
        }
        // Another kind has its own window.
        assert_eq!(limit.admit_at("skipped line", start), Some(0));
        let later = start + Duration::from_secs(10);
        assert_eq!(limit.admit_at("handshake", later), Some(2169));
        assert_eq!(
            limit.admit_at("handshake", later + Duration::from_secs(1)),
            None
        );
    }
}
