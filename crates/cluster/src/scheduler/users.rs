//! The user book: users as the cluster numbers them on first sight, user
//! groups, the lsb.users limits each gets, and the slots each user and
//! group holds cluster-wide (MAX_JOBS).

use std::ops::Index;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::fairshare::GroupDirectory;
use crate::job::UserId;
use crate::limits::Held;

use super::accounting::Change;

/// MAX_JOBS and JL/P of one lsb.users entry.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct UserLimits {
    pub(crate) max_jobs: Option<u32>,
    pub(crate) slots_per_processor: Option<f64>,
}

/// A user as the cluster knows it.
#[derive(Clone, Debug)]
pub(crate) struct User {
    /// Its name, the allocation it was first seen with (kept, so that
    /// allocation's address stays this user's: see [`UserBook::intern`]).
    pub(crate) name: Arc<str>,
    /// User groups it belongs to.
    pub(crate) groups: Vec<usize>,
    /// MAX_JOBS and JL/P (own entry, else `default`).
    pub(crate) limits: UserLimits,
    /// Slots of its jobs, cluster-wide.
    pub(crate) held: Held,
}

/// A user group (its members, through subgroups, are in
/// [`UserBook::directory`]).
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub(crate) name: String,
    pub(crate) limits: UserLimits,
    pub(crate) held: Held,
}

/// The cluster's users and user groups.
#[derive(Clone, Debug, Default)]
pub(crate) struct UserBook {
    /// Users by number.
    list: Vec<User>,
    by_name: FxHashMap<String, UserId>,
    /// Users by the address of their kept name (`User::name`): a trace's
    /// jobs share their user's name, so a job's user is found without
    /// hashing the name.
    by_address: FxHashMap<usize, UserId>,
    groups: Vec<Group>,
    /// Every group's users (through subgroups) and share tree.
    directory: GroupDirectory,
    /// lsb.users limits of named users.
    named_limits: FxHashMap<String, UserLimits>,
    /// lsb.users limits of `default`: every user not named.
    default_limits: UserLimits,
    /// Whether some user or group has a MAX_JOBS. The limits are set when
    /// the book is made and never change (no `&mut` reaches them after):
    /// one flag answers every dispatch try while no MAX_JOBS is set.
    any_max_jobs: bool,
}

impl UserBook {
    /// No user yet; `groups` and the limits from lsb.users.
    pub(crate) fn new(
        groups: Vec<Group>,
        directory: GroupDirectory,
        named_limits: FxHashMap<String, UserLimits>,
        default_limits: UserLimits,
    ) -> Self {
        let max_jobs = |limits: &UserLimits| limits.max_jobs.is_some();
        let any_max_jobs = max_jobs(&default_limits)
            || named_limits.values().any(max_jobs)
            || groups.iter().any(|group| max_jobs(&group.limits));
        UserBook {
            groups,
            directory,
            named_limits,
            default_limits,
            any_max_jobs,
            ..UserBook::default()
        }
    }

    /// The user groups, by number.
    #[inline]
    pub(crate) fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// User group `group`.
    #[inline]
    pub(crate) fn group(&self, group: usize) -> &Group {
        &self.groups[group]
    }

    /// Every group's users (through subgroups) and share tree.
    #[inline]
    pub(crate) fn directory(&self) -> &GroupDirectory {
        &self.directory
    }

    /// The lsb.users limits of `default`: those of every user not named
    /// (the counters cap what a forwarded job's user could use by them).
    pub(crate) fn default_limits(&self) -> UserLimits {
        self.default_limits
    }

    /// Whether lsb.users gives any user or group a limit.
    pub(crate) fn has_limits(&self) -> bool {
        let set =
            |limits: &UserLimits| limits.max_jobs.is_some() || limits.slots_per_processor.is_some();
        set(&self.default_limits)
            || self.named_limits.values().any(set)
            || self.groups.iter().any(|group| set(&group.limits))
    }

    /// Whether some user or group has a MAX_JOBS (lsb.users): without
    /// one, no cluster-wide user limit can hold a job back.
    #[inline]
    pub(crate) fn any_max_jobs(&self) -> bool {
        self.any_max_jobs
    }

    /// The user numbered `id`.
    pub(crate) fn get(&self, id: UserId) -> Option<&User> {
        self.list.get(id as usize)
    }

    /// The number of user `name`, if it has submitted.
    pub(crate) fn id_of(&self, name: &str) -> Option<UserId> {
        self.by_name.get(name).copied()
    }

    /// Every user, by number.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, User> {
        self.list.iter()
    }

    /// The number of user `name`, numbering it on first sight (then with
    /// `true`). A name sharing the allocation the user was first seen with
    /// is found by its address alone; any other by its text.
    pub(crate) fn intern(&mut self, name: &Arc<str>) -> (UserId, bool) {
        if let Some(&id) = self.by_address.get(&address(name)) {
            return (id, false);
        }
        if let Some(&id) = self.by_name.get(&**name) {
            return (id, false);
        }
        let id = UserId::try_from(self.list.len()).unwrap_or(UserId::MAX);
        let limits = self
            .named_limits
            .get(&**name)
            .copied()
            .unwrap_or(self.default_limits);
        let groups = self
            .groups
            .iter()
            .enumerate()
            .filter(|(_, group)| self.directory.contains(&group.name, name))
            .map(|(index, _)| index)
            .collect();
        self.list.push(User {
            name: Arc::clone(name),
            groups,
            limits,
            held: Held::default(),
        });
        self.by_name.insert(name.to_string(), id);
        self.by_address.insert(address(name), id);
        (id, true)
    }

    /// A job of `user` holding `slots` slots moves by `change`: the user's
    /// and its groups' tallies follow.
    pub(crate) fn account(&mut self, user: UserId, slots: u32, change: Change) {
        let user = &mut self.list[user as usize];
        change.apply_held(&mut user.held, slots);
        for &group in &user.groups {
            change.apply_held(&mut self.groups[group].held, slots);
        }
    }
}

impl Index<UserId> for UserBook {
    type Output = User;

    fn index(&self, id: UserId) -> &User {
        &self.list[id as usize]
    }
}

/// The address of `name`'s text: while the allocation is kept alive (as
/// each user's name is) no other name has it.
fn address(name: &Arc<str>) -> usize {
    Arc::as_ptr(name).cast::<u8>() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_is_found_by_its_names_allocation_or_by_its_text() {
        let mut book = UserBook::default();
        let alice: Arc<str> = Arc::from("alice");
        assert_eq!(book.intern(&alice), (0, true));
        assert_eq!(
            book.intern(&Arc::clone(&alice)),
            (0, false),
            "same allocation"
        );
        let other_alice: Arc<str> = Arc::from("alice");
        assert_eq!(book.intern(&other_alice), (0, false), "same text elsewhere");
        let bob: Arc<str> = Arc::from("bob");
        assert_eq!(book.intern(&bob), (1, true));
        assert_eq!(book.intern(&alice), (0, false));
        assert_eq!(book.id_of("bob"), Some(1));
        assert_eq!(&*book[1].name, "bob");
    }

    #[test]
    fn any_max_jobs_answers_for_default_named_users_and_groups_alike() {
        let max_jobs = UserLimits {
            max_jobs: Some(3),
            slots_per_processor: None,
        };
        let per_processor_only = UserLimits {
            max_jobs: None,
            slots_per_processor: Some(1.0),
        };
        let group = |limits| Group {
            name: "staff".into(),
            limits,
            held: Held::default(),
        };
        let named = |limits| FxHashMap::from_iter([("alice".to_string(), limits)]);
        let book = |groups, named, default| {
            UserBook::new(groups, GroupDirectory::default(), named, default).any_max_jobs()
        };
        assert!(!UserBook::default().any_max_jobs());
        assert!(!book(
            vec![group(per_processor_only)],
            named(per_processor_only),
            per_processor_only
        ));
        assert!(book(Vec::new(), FxHashMap::default(), max_jobs), "default");
        assert!(
            book(Vec::new(), named(max_jobs), UserLimits::default()),
            "named"
        );
        assert!(
            book(
                vec![group(max_jobs)],
                FxHashMap::default(),
                UserLimits::default()
            ),
            "group"
        );
    }
}
