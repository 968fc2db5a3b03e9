//! lsb.users (user groups with their shares, users' limits) and
//! lsb.resources (one Limit section per limit).

use std::fmt::Write as _;

use mcfed_cluster::{ClusterConfig, Consumers};

use super::{Assignments, HEADER, cell};

pub(super) fn users(config: &ClusterConfig) -> Result<String, String> {
    let mut text = HEADER.to_owned();
    if !config.user_groups.is_empty() {
        text.push_str(
            "\nBegin UserGroup\nGROUP_NAME           GROUP_MEMBER                   USER_SHARES\n",
        );
        for group in &config.user_groups {
            let shares = match &group.user_shares {
                None => "()".to_owned(),
                Some(shares) if shares.entries.is_empty() => {
                    return Err(format!(
                        "user group {}: an empty USER_SHARES has no LSF spelling (`()` is no USER_SHARES at all)",
                        group.name
                    ));
                }
                Some(shares) => format!("({})", crate::import::share_list(shares)),
            };
            let members = format!("({})", group.members.join(" "));
            let _ = writeln!(text, "{:<20} {members:<30} {shares}", group.name);
        }
        text.push_str("End UserGroup\n");
    }
    if !config.users.is_empty() {
        text.push_str("\nBegin User\nUSER_NAME            MAX_JOBS  JL/P\n");
        for user in &config.users {
            let _ = writeln!(
                text,
                "{:<20} {:<9} {}",
                user.name,
                cell(user.max_jobs),
                cell(user.slots_per_processor)
            );
        }
        text.push_str("End User\n");
    }
    Ok(text)
}

/// lsb.resources: one Limit section per limit, one ResourceReservation
/// section per advance reservation policy.
pub(super) fn resources(config: &ClusterConfig) -> String {
    let mut text = HEADER.to_owned();
    for limit in &config.limits {
        let mut keys = Assignments::default();
        keys.set("NAME", &limit.name);
        for (key, consumers) in [
            ("USERS", &limit.users),
            ("PER_USER", &limit.per_user),
            ("QUEUES", &limit.queues),
            ("PER_QUEUE", &limit.per_queue),
            ("HOSTS", &limit.hosts),
            ("PER_HOST", &limit.per_host),
        ] {
            if let Some(consumers) = consumers {
                keys.set(key, consumer_words(consumers));
            }
        }
        for (key, value) in [("SLOTS", limit.slots), ("JOBS", limit.jobs)] {
            if let Some(value) = value {
                keys.set(key, value);
            }
        }
        let _ = write!(text, "\nBegin Limit\n{}End Limit\n", keys.0);
    }
    for policy in &config.reservation_policies {
        let mut keys = Assignments::default();
        keys.set("NAME", &policy.name);
        keys.set("USERS", policy.users.join(" "));
        if !policy.hosts.is_empty() {
            keys.set("HOSTS", policy.hosts.join(" "));
        }
        if !policy.windows.is_empty() {
            let windows: Vec<String> = policy.windows.iter().map(ToString::to_string).collect();
            keys.set("TIME_WINDOW", windows.join(" "));
        }
        let _ = write!(
            text,
            "\nBegin ResourceReservation\n{}End ResourceReservation\n",
            keys.0
        );
    }
    text
}

/// `all name ~excluded` as a Limit lists its consumers.
fn consumer_words(consumers: &Consumers) -> String {
    let all = consumers.all.then(|| "all".to_owned());
    let excluded = consumers.excluded.iter().map(|name| format!("~{name}"));
    all.into_iter()
        .chain(consumers.names.iter().cloned())
        .chain(excluded)
        .collect::<Vec<_>>()
        .join(" ")
}
