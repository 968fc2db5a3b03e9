//! `brsvadd` and `brsvdel` actions (issue 27 item 8): an advance
//! reservation made or deleted at a cluster at a given time, in
//! `brsvadd`'s terms — `reservation` (`-N`), `hosts` (`-m`, host entries
//! standing for their hosts), `slots` (`-n`), `start` and `end` (`-b`,
//! `-e`), `users` (`-u`), `open` (`-o`) — and the user asking (`user`,
//! `--user`; none: the administrator). Whether the cluster takes it
//! (overlaps, policies, names in use) is for the run to say, as `brsvadd`
//! would print it.

use mcfed_cluster::AdvanceReservationConfig;
use mcfed_protocol::SimTime;

use crate::check::Checker;
use crate::format::RawAction;
use crate::locate::FieldPath;
use crate::model::{Action, ActionKind, ClusterSpec};

use super::actions::job_keys;

/// The reservation commands.
pub(super) const COMMANDS: [&str; 2] = ["brsvadd", "brsvdel"];

/// The keys only `brsvadd` takes.
fn add_keys(raw: &RawAction) -> [(&'static str, bool); 5] {
    [
        ("hosts", raw.hosts.is_some()),
        ("start", raw.start.is_some()),
        ("end", raw.end.is_some()),
        ("users", raw.users.is_some()),
        ("open", raw.open.is_some()),
    ]
}

impl Checker<'_> {
    /// A `brsvadd` or `brsvdel` action.
    pub(super) fn reservation_action(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        command: &str,
        at: Option<SimTime>,
        cluster: Option<&ClusterSpec>,
    ) -> Option<Action> {
        let deleting = command == "brsvdel";
        let slots = [("slots", raw.slots.is_some())];
        let keys = job_keys(raw)
            .into_iter()
            .filter(|(key, _)| *key != "slots")
            .chain([("host", raw.host.is_some())])
            .chain(add_keys(raw).into_iter().chain(slots).filter(|_| deleting));
        self.foreign_keys(path, command, keys);
        let name = self.needed(path, "reservation", raw.reservation.clone());
        let by = raw.user.clone();
        let kind = if deleting {
            ActionKind::ReservationDelete { by }
        } else {
            let config = self.reservation_config(path, raw, name.as_deref()?, cluster?)?;
            ActionKind::ReservationAdd { config, by }
        };
        Some(Action {
            at: at?,
            cluster: cluster?.config.name.clone(),
            job: name?,
            action: kind,
            origin: path.to_string(),
        })
    }

    /// `brsvadd`'s reservation: hosts, window and users given.
    fn reservation_config(
        &mut self,
        path: &FieldPath,
        raw: &RawAction,
        name: &str,
        cluster: &ClusterSpec,
    ) -> Option<AdvanceReservationConfig> {
        let hosts = self.needed(path, "hosts", raw.hosts.as_ref());
        let start = self.needed(path, "start", raw.start);
        let end = self.needed(path, "end", raw.end);
        let users = self.needed(path, "users", raw.users.as_ref());
        let hosts: Vec<String> = hosts?
            .0
            .iter()
            .flat_map(|word| {
                let hosts = &cluster.config.hosts;
                if hosts.iter().any(|host| host.name == *word) {
                    return vec![word.clone()];
                }
                // A host entry (`name` with `count`): its hosts name1..nameN.
                let entry: Vec<String> = hosts
                    .iter()
                    .filter(|host| {
                        host.name
                            .strip_prefix(word.as_str())
                            .is_some_and(|rest| rest.parse::<u32>().is_ok())
                    })
                    .map(|host| host.name.clone())
                    .collect();
                if entry.is_empty() {
                    vec![word.clone()]
                } else {
                    entry
                }
            })
            .collect();
        Some(AdvanceReservationConfig {
            name: name.to_owned(),
            hosts,
            slots: raw.slots,
            start: SimTime::from(start?.0),
            end: SimTime::from(end?.0),
            users: users?.0.clone(),
            open: raw.open.unwrap_or(false),
        })
    }

    /// Reservation keys in an action that is not `brsvadd` or `brsvdel`.
    pub(super) fn no_reservation_keys(&mut self, path: &FieldPath, raw: &RawAction, command: &str) {
        let keys = add_keys(raw).into_iter().chain([
            ("reservation", raw.reservation.is_some()),
            ("user", raw.user.is_some()),
        ]);
        self.foreign_keys(path, command, keys);
    }
}
