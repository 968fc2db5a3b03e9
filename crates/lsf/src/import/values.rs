//! Turning one LSF value into a scenario value, as the catalogue's
//! [`Conv`] says, or into an error naming the parameter and what was
//! expected.

use mcfed_cluster::{
    ApsPriority, MaxReserveTime, PreemptGuard, Preemption, PriorityEscalation, UserShares,
};
use mcfed_forwarder::ScheduleMode;
use mcfed_protocol::{ClusterName, QueueName};

use super::Diags;
use crate::catalog::Conv;
use crate::doc::Value;
use crate::source::Location;

/// The value of parameter `name`, written `text` at `at`, converted; `None`
/// (with the error recorded) when it is not what LSF expects. Keyword
/// values with words mcfed does not emulate lose those words with a
/// warning.
pub(crate) fn convert(
    conv: Conv,
    name: &str,
    text: &str,
    at: &Location,
    diags: &mut Diags,
) -> Option<(Value, Option<String>)> {
    let result = match conv {
        Conv::Count => count(name, text).map(|n| (Value::Int(n.into()), None)),
        Conv::Number => number(name, text).map(|n| (Value::Float(n), None)),
        Conv::Seconds => count(name, text).map(|n| (Value::Text(format!("{n}s")), None)),
        Conv::Guard => guard(name, text),
        Conv::Words => words(name, text).map(|words| (Value::Text(words.join(" ")), None)),
        Conv::YesNo => yes_no(name, text)
            .map(|yes| (Value::Text(if yes { "Y" } else { "N" }.to_owned()), None)),
        Conv::Flag => {
            flag(name, text).map(|yes| (Value::Text(if yes { "Y" } else { "N" }.to_owned()), None))
        }
        Conv::Backlog => backlog(text),
        Conv::Name => name_word(name, text).map(|word| (Value::Text(word), None)),
        Conv::Keywords => return keywords(name, text, at, diags),
        Conv::RunTime => return run_time(name, text, at, diags),
        Conv::Cycles => Err(format!("{name} needs MBD_SLEEP_TIME to be converted")),
    };
    match result {
        Ok(converted) => Some(converted),
        Err(message) => {
            diags.error(at, message);
            None
        }
    }
}

/// A whole number from 0 to 2^32 - 1.
pub(crate) fn count(name: &str, text: &str) -> Result<u32, String> {
    text.trim().parse::<u32>().map_err(|_| {
        format!(
            "{name} expects a whole number from 0 to {}, found `{text}`",
            u32::MAX
        )
    })
}

fn number(name: &str, text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|number| number.is_finite())
        .ok_or_else(|| format!("{name} expects a number, found `{text}`"))
}

/// LSF's NO_PREEMPT_RUN_TIME and NO_PREEMPT_FINISH_TIME: minutes, or a
/// percentage of the run limit.
fn guard(name: &str, text: &str) -> Result<(Value, Option<String>), String> {
    let text = text.trim();
    let (scenario, note) = if text.ends_with('%') {
        (text.to_owned(), None)
    } else {
        let minutes = count(name, text).map_err(|_| {
            format!("{name} expects minutes or a percentage (`50%`), found `{text}`")
        })?;
        (format!("{minutes}m"), Some(format!("{minutes} minutes")))
    };
    scenario
        .parse::<PreemptGuard>()
        .map_err(|error| format!("{name}: {error}"))?;
    Ok((Value::Text(scenario), note))
}

/// A run time as `bsub -W` and RUNLIMIT write it: `[hour:]minute` (the
/// minutes may be more than 59), written as minutes; a `/host` or
/// `/host_model` normalisation is dropped with a warning. `None` (the
/// error recorded) when it is not one, or is zero.
pub(crate) fn run_time(
    name: &str,
    text: &str,
    at: &Location,
    diags: &mut Diags,
) -> Option<(Value, Option<String>)> {
    let text = text.trim();
    let (time, host) = match text.split_once('/') {
        Some((time, host)) => (time, Some(host)),
        None => (text, None),
    };
    let minutes = match minutes(time) {
        Some(0) => {
            diags.error(
                at,
                format!("{name} must be longer than zero, found `{text}`"),
            );
            return None;
        }
        Some(minutes) => minutes,
        None => {
            diags.error(
                at,
                format!("{name} expects [hour:]minute (`90` or `1:30`), found `{text}`"),
            );
            return None;
        }
    };
    if let Some(host) = host {
        diags.warning(
            at,
            format!("{name}: normalisation by the CPU factor of `{host}` is not modelled; the time is taken as written"),
        );
    }
    let note = if time.contains(':') {
        format!("{time}: {minutes} minutes")
    } else {
        format!("{minutes} minutes")
    };
    Some((Value::Text(format!("{minutes}m")), Some(note)))
}

/// `[hour:]minute` in minutes, at most 2^32 - 1.
fn minutes(text: &str) -> Option<u32> {
    let number = |part: &str| -> Option<u64> {
        (!part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
            .then(|| part.parse().ok())
            .flatten()
    };
    let total = match text.split_once(':') {
        Some((hours, minutes)) => number(hours)?
            .checked_mul(60)?
            .checked_add(number(minutes)?)?,
        None => number(text)?,
    };
    u32::try_from(total).ok()
}

/// Space-separated words, at least one.
pub(crate) fn words(name: &str, text: &str) -> Result<Vec<String>, String> {
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if words.is_empty() {
        Err(format!("{name} expects at least one name"))
    } else {
        Ok(words)
    }
}

fn yes_no(name: &str, text: &str) -> Result<bool, String> {
    match text.trim() {
        "Y" | "y" | "YES" | "yes" | "Yes" => Ok(true),
        "N" | "n" | "NO" | "no" | "No" => Ok(false),
        other => Err(format!("{name} expects Y or N, found `{other}`")),
    }
}

/// An lsf.conf switch: `1` or `0` as LSF documents it, or Y/N.
fn flag(name: &str, text: &str) -> Result<bool, String> {
    match text.trim() {
        "1" => Ok(true),
        "0" => Ok(false),
        other => yes_no(name, other)
            .map_err(|_| format!("{name} expects 1 or 0 (or Y or N), found `{other}`")),
    }
}

fn backlog(text: &str) -> Result<(Value, Option<String>), String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("infinit") {
        return Ok((Value::Text("infinit".to_owned()), None));
    }
    count("IMPT_JOBBKLG", text)
        .map(|n| (Value::Int(n.into()), None))
        .map_err(|_| format!("IMPT_JOBBKLG expects a number of jobs or `infinit`, found `{text}`"))
}

/// One name: a queue's for QUEUE_NAME, a cluster's for cluster names,
/// any word else.
fn name_word(name: &str, text: &str) -> Result<String, String> {
    let text = text.trim();
    if name == "QUEUE_NAME" {
        return text
            .parse::<QueueName>()
            .map(|queue| queue.to_string())
            .map_err(|error| format!("QUEUE_NAME: {error}"));
    }
    if name == "ClusterName" {
        return text
            .parse::<ClusterName>()
            .map(|cluster| cluster.to_string())
            .map_err(|error| format!("cluster name: {error}"));
    }
    match words(name, text)?.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(format!("{name} expects one name, found `{text}`")),
    }
}

/// Keyword values, each checked by mcfed's own parser for it.
fn keywords(
    name: &str,
    text: &str,
    at: &Location,
    diags: &mut Diags,
) -> Option<(Value, Option<String>)> {
    let checked: Result<String, String> = match name {
        "MC_PLUGIN_SCHEDULE_ENHANCE" => text
            .parse::<ScheduleMode>()
            .map(|mode| mode.to_string())
            .map_err(|error| error.to_string()),
        "PREEMPTION" => text
            .parse::<Preemption>()
            .map(|preemption| preemption.to_string())
            .map_err(|error| format!("PREEMPTION: {error}")),
        "FAIRSHARE" => text
            .parse::<UserShares>()
            .map(|shares| shares.to_string())
            .map_err(|error| format!("FAIRSHARE: {error}")),
        "SLOT_RESERVE" => text
            .parse::<MaxReserveTime>()
            .map(|time| format!("MAX_RESERVE_TIME[{}]", time.0))
            .map_err(|error| format!("SLOT_RESERVE: {error}")),
        "PREEMPT_FOR" => filter_words(
            name,
            text,
            &[
                "GROUP_JLP",
                "GROUP_MAX",
                "HOST_JLU",
                "USER_JLP",
                "LEAST_RUN_TIME",
            ],
            &["MINI_JOB", "OPTIMAL_MINI_JOB", "BUCKET_JOB"],
            at,
            diags,
        ),
        "PREEMPT_JOBTYPE" => filter_words(
            name,
            text,
            &["BACKFILL"],
            &["EXCLUSIVE", "AFFINITY"],
            at,
            diags,
        ),
        "TERMINATE_WHEN" => filter_words(name, text, &["PREEMPT"], &["WINDOW", "LOAD"], at, diags),
        "APS_PRIORITY" => text
            .parse::<ApsPriority>()
            .map(|aps| aps.to_string())
            .map_err(|error| format!("APS_PRIORITY: {error}")),
        "JOB_PRIORITY_OVER_TIME" => text
            .parse::<PriorityEscalation>()
            .map(|escalation| escalation.to_string())
            .map_err(|error| format!("JOB_PRIORITY_OVER_TIME: {error}")),
        "DISPATCH_ORDER" => match text.trim() {
            "QUEUE" => Ok("QUEUE".to_owned()),
            other => Err(format!("DISPATCH_ORDER expects `QUEUE`, found `{other}`")),
        },
        "FAIRSHARE_ADJUSTMENT_PLUGIN" => match text.trim() {
            "memory" | "none" => Ok(text.trim().to_owned()),
            other => Err(format!(
                "FAIRSHARE_ADJUSTMENT_PLUGIN expects `memory` or `none`, found `{other}`"
            )),
        },
        other => Err(format!("{other} has no keyword parser")),
    };
    match checked {
        Ok(text) if text.is_empty() => None,
        Ok(text) => Some((Value::Text(text), None)),
        Err(message) => {
            diags.error(at, message);
            None
        }
    }
}

/// The words of `text` mcfed emulates (`known`); LSF's words it does not
/// (`not_emulated`) are dropped with a warning; any other word is an error.
fn filter_words(
    name: &str,
    text: &str,
    known: &[&str],
    not_emulated: &[&str],
    at: &Location,
    diags: &mut Diags,
) -> Result<String, String> {
    let mut kept = Vec::new();
    for word in text.split_whitespace() {
        if known.contains(&word) {
            kept.push(word);
        } else if not_emulated.contains(&word) {
            diags.warning(at, format!("{name} `{word}` is not modelled; ignored"));
        } else {
            return Err(format!(
                "unknown {name} keyword `{word}`{}",
                crate::source::suggestion(word, known.iter().chain(not_emulated).copied())
            ));
        }
    }
    Ok(kept.join(" "))
}
