//! Advance reservation policies (lsb.resources' `ResourceReservation`
//! sections): which users other than the administrator may make
//! reservations (`brsvadd`), on which hosts, and in which time windows.
//! An administrator's `brsvadd` is not checked; a user's is allowed when
//! one policy lists the user (USERS), every host asked for (HOSTS) and a
//! time window holding the whole reservation (TIME_WINDOW).
//!
//! Time windows are LSF's `[day:]hour[:minute]-[day:]hour[:minute]`, read
//! on emulated time as `brsvs` shows it: emulated time zero is 00:00 of
//! day 0 (a Sunday), a window without days recurs every day, one with
//! days every week.

use std::fmt;
use std::str::FromStr;

use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

/// Milliseconds in a day.
const DAY_MS: u64 = 24 * 3600 * 1000;
/// Milliseconds in a week.
const WEEK_MS: u64 = 7 * DAY_MS;

/// One `ResourceReservation` section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationPolicyConfig {
    /// NAME.
    pub name: String,
    /// USERS: who may make reservations under it (`all`, `~user` to
    /// leave one out). LSF's default is `all`.
    pub users: Vec<String>,
    /// HOSTS: the hosts they may reserve (`all`, `~host`); empty: all.
    pub hosts: Vec<String>,
    /// TIME_WINDOW: when reservations may lie; empty: any time.
    pub windows: Vec<TimeWindow>,
}

/// One recurring time window (`8:00-18:00`, `5:9:0-5:11:0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    /// Its start within its period, milliseconds.
    start: u64,
    /// Its end within its period, milliseconds (before `start`: it wraps
    /// past the period's end).
    end: u64,
    /// A day, or a week when days are given.
    period: u64,
}

impl TimeWindow {
    /// Whether `[start, end)` lies within one occurrence of the window.
    pub fn holds(&self, start: SimTime, end: SimTime) -> bool {
        let length = if self.end > self.start {
            self.end - self.start
        } else {
            self.end + self.period - self.start
        };
        let (begin, finish) = (i128::from(start.as_millis()), i128::from(end.as_millis()));
        let (window_start, period) = (i128::from(self.start), i128::from(self.period));
        // The last occurrence starting at or before `begin` (it may have
        // started before time zero, for a window past midnight).
        let occurrence = begin - (begin - window_start).rem_euclid(period);
        finish <= occurrence + i128::from(length)
    }
}

/// A time of a window: `hour`, `hour:minute` or `day:hour:minute`, with
/// whether it names a day.
fn time_of(text: &str) -> Result<(u64, bool), String> {
    let parts: Vec<&str> = text.split(':').collect();
    let number = |part: &str, max: u64, what: &str| {
        part.parse::<u64>()
            .ok()
            .filter(|value| *value <= max)
            .ok_or_else(|| format!("`{text}`: the {what} `{part}` is not between 0 and {max}"))
    };
    let (day, hour, minute) = match parts.as_slice() {
        [hour] => (None, number(hour, 23, "hour")?, 0),
        [hour, minute] => (
            None,
            number(hour, 23, "hour")?,
            number(minute, 59, "minute")?,
        ),
        [day, hour, minute] => (
            Some(number(day, 6, "day")?),
            number(hour, 23, "hour")?,
            number(minute, 59, "minute")?,
        ),
        _ => return Err(format!("`{text}` is not [day:]hour[:minute]")),
    };
    let in_day = (hour * 60 + minute) * 60 * 1000;
    Ok((day.unwrap_or(0) * DAY_MS + in_day, day.is_some()))
}

impl FromStr for TimeWindow {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (start, end) = text
            .split_once('-')
            .ok_or_else(|| format!("`{text}` is not a time window (begin-end, e.g. 8:00-18:00)"))?;
        let (start, start_day) = time_of(start.trim())?;
        let (end, end_day) = time_of(end.trim())?;
        if start_day != end_day {
            return Err(format!(
                "`{text}`: both ends of a time window use the same syntax (LSF)"
            ));
        }
        if start == end {
            return Err(format!("`{text}`: a time window may not be empty"));
        }
        Ok(TimeWindow {
            start,
            end,
            period: if start_day { WEEK_MS } else { DAY_MS },
        })
    }
}

impl fmt::Display for TimeWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let write = |f: &mut fmt::Formatter<'_>, at: u64| {
            let minutes = at / 60_000;
            if self.period == WEEK_MS {
                write!(
                    f,
                    "{}:{}:{:02}",
                    minutes / 1440,
                    minutes / 60 % 24,
                    minutes % 60
                )
            } else {
                write!(f, "{}:{:02}", minutes / 60, minutes % 60)
            }
        };
        write(f, self.start)?;
        f.write_str("-")?;
        write(f, self.end)
    }
}

/// Whether `name` is in `list` (`all`, `~name` leaving it out).
fn listed(list: &[String], name: &str) -> bool {
    if list
        .iter()
        .any(|entry| entry.strip_prefix('~') == Some(name))
    {
        return false;
    }
    list.iter().any(|entry| entry == "all" || entry == name)
}

impl ReservationPolicyConfig {
    /// Whether this policy lets `user` reserve `hosts` from `start` to
    /// `end`.
    pub fn allows(&self, user: &str, hosts: &[String], start: SimTime, end: SimTime) -> bool {
        let users_ok = self.users.is_empty() || listed(&self.users, user);
        let hosts_ok = self.hosts.is_empty() || hosts.iter().all(|host| listed(&self.hosts, host));
        let time_ok =
            self.windows.is_empty() || self.windows.iter().any(|window| window.holds(start, end));
        users_ok && hosts_ok && time_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hours: u64, minutes: u64) -> SimTime {
        SimTime::from_secs(hours * 3600 + minutes * 60)
    }

    #[test]
    fn a_daily_window_holds_a_reservation_within_one_of_its_days() {
        let window: TimeWindow = "8:00-18:00".parse().expect("a window");
        assert_eq!(window.to_string(), "8:00-18:00");
        assert!(window.holds(at(9, 0), at(11, 0)));
        assert!(window.holds(at(8, 0), at(18, 0)));
        assert!(!window.holds(at(7, 59), at(9, 0)));
        assert!(!window.holds(at(17, 0), at(18, 1)));
        // The next day's occurrence.
        assert!(window.holds(at(24 + 9, 0), at(24 + 10, 0)));
        assert!(!window.holds(at(9, 0), at(24 + 10, 0)));
    }

    #[test]
    fn a_window_past_midnight_and_a_weekly_one() {
        let night: TimeWindow = "22-6".parse().expect("a window");
        assert!(night.holds(at(23, 0), at(24 + 5, 0)));
        assert!(night.holds(at(1, 0), at(2, 0)));
        assert!(!night.holds(at(21, 0), at(23, 0)));
        let friday: TimeWindow = "5:9:0-5:11:0".parse().expect("a window");
        assert!(friday.holds(at(5 * 24 + 9, 0), at(5 * 24 + 11, 0)));
        assert!(!friday.holds(at(9, 0), at(11, 0)));
        assert!(friday.holds(at(12 * 24 + 9, 30), at(12 * 24 + 10, 0)));
    }

    #[test]
    fn bad_windows_are_refused() {
        for text in ["8:00", "25-3", "8:61-9", "1:8:0-9:0", "8-8", "a-b"] {
            assert!(text.parse::<TimeWindow>().is_err(), "{text}");
        }
    }

    #[test]
    fn a_policy_lists_users_hosts_and_windows() {
        let policy = ReservationPolicyConfig {
            name: "day".to_owned(),
            users: vec!["all".to_owned(), "~carol".to_owned()],
            hosts: vec!["h1".to_owned()],
            windows: vec!["8:00-18:00".parse().expect("a window")],
        };
        let h1 = ["h1".to_owned()];
        assert!(policy.allows("alice", &h1, at(9, 0), at(10, 0)));
        assert!(!policy.allows("carol", &h1, at(9, 0), at(10, 0)));
        assert!(!policy.allows("alice", &["h2".to_owned()], at(9, 0), at(10, 0)));
        assert!(!policy.allows("alice", &h1, at(17, 0), at(19, 0)));
    }
}
