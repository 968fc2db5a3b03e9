//! Users and user groups (lsb.users): the groups, the limits of named
//! users and of `default`, and which per-host tallies the limits need.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::config::{ConfigError, DEFAULT_USER, QueueConfig, UserGroupConfig, UserLimitConfig};
use crate::fairshare::GroupDirectory;
use crate::limits::Held;
use crate::scheduler::{Group, HostBook, Tracking, UserBook, UserLimits};

/// The user book, with no user yet: the groups and the limits of lsb.users.
pub(super) fn user_book(
    users: &[UserLimitConfig],
    user_groups: &[UserGroupConfig],
) -> Result<UserBook, ConfigError> {
    let mut groups = groups(user_groups)?;
    let directory = GroupDirectory::build(user_groups)?;
    let mut seen = FxHashSet::default();
    let mut named_limits = FxHashMap::default();
    let mut default_limits = UserLimits::default();
    for (index, entry) in users.iter().enumerate() {
        if !seen.insert(entry.name.as_str()) {
            return Err(ConfigError::user(
                index,
                "name",
                format!("`{}` has two entries in lsb.users", entry.name),
            ));
        }
        if let Some(per_processor) = entry.slots_per_processor {
            if !(per_processor.is_finite() && per_processor > 0.0) {
                return Err(ConfigError::user(
                    index,
                    "JL/P",
                    "JL/P must be a positive number of slots per processor",
                ));
            }
        }
        let limits = UserLimits {
            max_jobs: entry.max_jobs,
            slots_per_processor: entry.slots_per_processor,
        };
        if entry.name == DEFAULT_USER {
            default_limits = limits;
        } else if let Some(group) = groups.iter_mut().find(|group| group.name == entry.name) {
            group.limits = limits;
        } else {
            named_limits.insert(entry.name.clone(), limits);
        }
    }
    Ok(UserBook::new(
        groups,
        directory,
        named_limits,
        default_limits,
    ))
}

/// The user groups, checked, with no limits yet.
fn groups(user_groups: &[UserGroupConfig]) -> Result<Vec<Group>, ConfigError> {
    let mut groups: Vec<Group> = Vec::with_capacity(user_groups.len());
    for (index, group) in user_groups.iter().enumerate() {
        if group.name == DEFAULT_USER || group.name.is_empty() {
            return Err(ConfigError::user_group(
                index,
                "name",
                format!("`{}` cannot name a user group", group.name),
            ));
        }
        if groups.iter().any(|other| other.name == group.name) {
            return Err(ConfigError::user_group(
                index,
                "name",
                format!("user group `{}` is defined twice", group.name),
            ));
        }
        if group.members.is_empty() {
            return Err(ConfigError::user_group(
                index,
                "GROUP_MEMBER",
                format!("user group `{}` has no members", group.name),
            ));
        }
        groups.push(Group {
            name: group.name.clone(),
            limits: UserLimits::default(),
            held: Held::default(),
        });
    }
    Ok(groups)
}

/// Which per-host tallies the limits need: JL/U or a user's JL/P, a
/// group's JL/P, HJOB_LIMIT.
pub(super) fn tracking(
    hosts: &HostBook,
    user_configs: &[UserLimitConfig],
    users: &UserBook,
    queues: &[QueueConfig],
) -> Tracking {
    let groups = users.groups();
    Tracking {
        host_user: hosts
            .iter()
            .any(|host| host.config.user_slot_limit.is_some())
            || user_configs
                .iter()
                .filter(|entry| !groups.iter().any(|group| group.name == entry.name))
                .any(|entry| entry.slots_per_processor.is_some()),
        host_group: groups
            .iter()
            .any(|group| group.limits.slots_per_processor.is_some()),
        host_queue: queues.iter().any(|queue| queue.host_job_limit.is_some()),
    }
}
