//! Reservations made and deleted at a running cluster (`brsvadd`,
//! `brsvdel`), with the rules an LSF administrator expects:
//!
//! - `brsvadd` refuses a name in use, unknown hosts, bad users, an end at
//!   or before the begin, a begin already past, and a reservation whose
//!   slots its hosts cannot give beside the other reservations of its
//!   window ("Reservation overlaps": at every instant of the window, the
//!   reservations active then, this one included, must fit their hosts'
//!   slots together — a maximum flow, the one `advance/lay.rs` lays held
//!   slots with, over the hosts' MXJ). A user other than the administrator
//!   must be allowed by a reservation policy ([`super::policy`]).
//! - `brsvdel` removes it; its running and suspended jobs are detached
//!   and go on as ordinary jobs (LSF's brsvdel: "The running jobs will be
//!   detached and treated as regular jobs"), its pending jobs pend ("The
//!   advance reservation the job names has been deleted"). A user other
//!   than the administrator deletes only what that user made (LSF: "Users
//!   … can delete only reservations that they created themselves").
//!
//! What was made or deleted live is kept for a journal
//! ([`LiveReservations`]): a cluster restored from it has the same
//! reservations.

use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

use super::policy::ReservationPolicyConfig;
use super::{AdvanceReservation, AdvanceReservationConfig, lay, reservation_word, resolve_one};
use crate::job::{JobId, JobState};
use crate::scheduler::Cluster;

/// Where a reservation comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The cluster's configuration.
    Configured,
    /// `brsvadd` at the running cluster, by `by` (`None`: the
    /// administrator).
    Added { by: Option<String> },
}

/// Why `brsvadd` or `brsvdel` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReservationError {
    /// A reservation of that name exists.
    #[error("Reservation <{0}> already exists: give another name (-N)")]
    NameUsed(String),
    /// A field is wrong on its own.
    #[error("Bad reservation request ({field}): {message}")]
    Invalid {
        /// The option (`-m`, `-n`, `-e`, …).
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The begin time has passed.
    #[error("The reservation's begin time {start} is in the past (it is {now})")]
    Past {
        /// Its begin.
        start: SimTime,
        /// The time now.
        now: SimTime,
    },
    /// Its hosts cannot give its slots beside other reservations.
    #[error(
        "Reservation overlaps: at {at} its hosts cannot hold its {slots} slots beside reservation(s) {others}"
    )]
    Overlaps {
        /// The first instant it does not fit.
        at: SimTime,
        /// Its slots.
        slots: u32,
        /// The reservations active then on its hosts.
        others: String,
    },
    /// No policy lets the user make it.
    #[error(
        "User <{user}> is not allowed to make this reservation: no advance reservation policy (lsb.resources ResourceReservation) allows user <{user}> on hosts <{hosts}> from {start} to {end}"
    )]
    NotPermitted {
        /// The requesting user.
        user: String,
        /// The hosts asked for.
        hosts: String,
        /// Its begin.
        start: SimTime,
        /// Its end.
        end: SimTime,
    },
    /// No reservation of that name.
    #[error("Reservation <{0}> does not exist")]
    NotFound(String),
    /// A user deletes a reservation someone else made.
    #[error("User <{user}> may delete only the reservations they made: not <{name}>")]
    NotCreator {
        /// The requesting user.
        user: String,
        /// The reservation.
        name: String,
    },
}

/// What `brsvdel` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleted {
    /// The running or suspended jobs that go on as ordinary jobs.
    pub detached: Vec<JobId>,
    /// The pending jobs that named it and keep pending.
    pub pending: usize,
}

/// The reservations made and deleted at a running cluster, as a journal
/// keeps them: restoring them gives the same reservations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveReservations {
    /// Made with `brsvadd` and not deleted, with who made each (`None`:
    /// the administrator), in order.
    pub added: Vec<(AdvanceReservationConfig, Option<String>)>,
    /// Every reservation deleted with `brsvdel`, configured or made live:
    /// a configured one stays deleted at a restore, and any name here
    /// tells the restored cluster that pending jobs may name a
    /// reservation it no longer has.
    pub deleted: Vec<String>,
}

impl LiveReservations {
    /// Folds in `brsvadd` of `config` by `by`.
    pub fn add(&mut self, config: AdvanceReservationConfig, by: Option<String>) {
        self.added.retain(|(added, _)| added.name != config.name);
        self.added.push((config, by));
    }

    /// Folds in `brsvdel` of `name`.
    pub fn delete(&mut self, name: &str) {
        self.added.retain(|(added, _)| added.name != name);
        if !self.deleted.iter().any(|deleted| deleted == name) {
            self.deleted.push(name.to_owned());
        }
    }
}

/// The advance reservation policies and the reservations deleted since
/// the start (with any, jobs may name a reservation the cluster no longer
/// has, even with none left).
#[derive(Clone, Debug, Default)]
pub(crate) struct LiveBook {
    pub(crate) policies: Vec<ReservationPolicyConfig>,
    pub(crate) deleted: Vec<String>,
}

impl Cluster {
    /// `brsvadd`: makes reservation `config` at `now`, asked by `by`
    /// (`None`: the administrator, whom no policy binds).
    pub fn add_reservation(
        &mut self,
        now: SimTime,
        config: AdvanceReservationConfig,
        by: Option<&str>,
    ) -> Result<(), ReservationError> {
        self.cycle.now = self.cycle.now.max(now);
        if self
            .advance
            .iter()
            .any(|reservation| reservation.config.name == config.name)
        {
            return Err(ReservationError::NameUsed(config.name));
        }
        if config.start < now {
            return Err(ReservationError::Past {
                start: config.start,
                now,
            });
        }
        if let Some(user) = by {
            self.check_policies(user, &config)?;
        }
        let origin = Origin::Added {
            by: by.map(str::to_owned),
        };
        let reservation = self.resolve_live(config, origin)?;
        self.check_overlap(&reservation)?;
        tracing::info!(cluster = %self.name, reservation = %reservation.config.name, "advance reservation added");
        self.advance.push(reservation);
        self.reservations_changed();
        Ok(())
    }

    /// `brsvdel`: deletes reservation `name` at `now`, asked by `by`
    /// (`None`: the administrator). Its running and suspended jobs are
    /// detached; its pending jobs pend.
    pub fn delete_reservation(
        &mut self,
        now: SimTime,
        name: &str,
        by: Option<&str>,
    ) -> Result<Deleted, ReservationError> {
        self.cycle.now = self.cycle.now.max(now);
        let index = self
            .advance
            .iter()
            .position(|reservation| reservation.config.name == name)
            .ok_or_else(|| ReservationError::NotFound(name.to_owned()))?;
        if let Some(user) = by {
            let made_by_user = matches!(&self.advance[index].origin, Origin::Added { by: Some(maker) } if maker == user);
            if !made_by_user {
                return Err(ReservationError::NotCreator {
                    user: user.to_owned(),
                    name: name.to_owned(),
                });
            }
        }
        let removed = self.advance.remove(index);
        if !self
            .advance_live
            .deleted
            .iter()
            .any(|deleted| deleted == name)
        {
            self.advance_live.deleted.push(name.to_owned());
        }
        let deleted = self.detach_jobs(&removed);
        tracing::info!(cluster = %self.name, reservation = %name, detached = deleted.detached.len(), "advance reservation deleted");
        self.reservations_changed();
        Ok(deleted)
    }

    /// What was made and deleted live, for a journal's snapshot.
    pub fn live_reservations(&self) -> LiveReservations {
        LiveReservations {
            added: self
                .advance
                .iter()
                .filter_map(|reservation| match &reservation.origin {
                    Origin::Added { by } => Some((reservation.config.clone(), by.clone())),
                    Origin::Configured => None,
                })
                .collect(),
            deleted: self.advance_live.deleted.clone(),
        }
    }

    /// Restores what a journal kept of the reservations made and deleted
    /// live (the jobs come back as they were written: detached ones
    /// already are). Returns the problems of those that no longer resolve
    /// (a host gone from the configuration), which are left out.
    pub fn restore_reservations(&mut self, live: LiveReservations) -> Vec<String> {
        for name in &live.deleted {
            self.advance
                .retain(|reservation| reservation.config.name != *name);
        }
        self.advance_live.deleted = live.deleted;
        let mut problems = Vec::new();
        for (config, by) in live.added {
            let name = config.name.clone();
            self.advance
                .retain(|reservation| reservation.config.name != name);
            match self.resolve_live(config, Origin::Added { by }) {
                Ok(reservation) => self.advance.push(reservation),
                Err(error) => problems.push(format!("reservation `{name}`: {error}")),
            }
        }
        self.reservations_changed();
        problems
    }

    /// A pass is due: what reservations hold changed.
    fn reservations_changed(&mut self) {
        self.cycle.dirty = true;
        self.cycle.version += 1;
    }

    /// `config` checked on its own against the hosts.
    fn resolve_live(
        &self,
        config: AdvanceReservationConfig,
        origin: Origin,
    ) -> Result<AdvanceReservation, ReservationError> {
        let field_option = |field: &'static str| match field {
            "name" => "-N",
            "hosts" => "-m",
            "slots" => "-n",
            "end" => "-e",
            "users" => "-u",
            other => other,
        };
        resolve_one(
            config,
            |name| {
                let host =
                    (0..self.hosts.len()).find(|&host| self.hosts[host].config.name == name)?;
                Some((host, self.hosts[host].config.max_slots))
            },
            origin,
        )
        .map_err(|(field, message)| ReservationError::Invalid {
            field: field_option(field),
            message,
        })
    }

    /// A user's `brsvadd` must be allowed by one policy.
    fn check_policies(
        &self,
        user: &str,
        config: &AdvanceReservationConfig,
    ) -> Result<(), ReservationError> {
        let allowed = self
            .advance_live
            .policies
            .iter()
            .any(|policy| policy.allows(user, &config.hosts, config.start, config.end));
        if allowed {
            return Ok(());
        }
        Err(ReservationError::NotPermitted {
            user: user.to_owned(),
            hosts: config.hosts.join(" "),
            start: config.start,
            end: config.end,
        })
    }

    /// Refuses `new` when, at some instant of its window, the reservations
    /// active then and it cannot all hold their slots on their hosts.
    fn check_overlap(&self, new: &AdvanceReservation) -> Result<(), ReservationError> {
        let (start, end) = (new.config.start, new.config.end);
        let mut instants: Vec<SimTime> = std::iter::once(start)
            .chain(
                self.advance
                    .iter()
                    .map(|other| other.config.start)
                    .filter(|&at| start < at && at < end),
            )
            .collect();
        instants.sort_unstable();
        instants.dedup();
        let capacity: Vec<u32> = (0..self.hosts.len())
            .map(|host| self.hosts[host].config.max_slots)
            .collect();
        for at in instants {
            let active: Vec<&AdvanceReservation> = self
                .advance
                .iter()
                .filter(|other| other.config.start <= at && at < other.config.end)
                .collect();
            if !active
                .iter()
                .any(|other| other.hosts.iter().any(|host| new.hosts.contains(host)))
            {
                continue;
            }
            let claims: Vec<lay::Claim<'_>> = active
                .iter()
                .copied()
                .chain(std::iter::once(new))
                .map(|reservation| lay::Claim {
                    hosts: &reservation.hosts,
                    own: vec![0; reservation.hosts.len()],
                    left: reservation.slots,
                })
                .collect();
            let wanted: u64 = claims.iter().map(|claim| u64::from(claim.left)).sum();
            let laid: u64 = lay::lay(&claims, &capacity)
                .iter()
                .map(|&slots| u64::from(slots))
                .sum();
            if laid < wanted {
                let others: Vec<&str> = active
                    .iter()
                    .filter(|other| other.hosts.iter().any(|host| new.hosts.contains(host)))
                    .map(|other| other.config.name.as_str())
                    .collect();
                return Err(ReservationError::Overlaps {
                    at,
                    slots: new.slots,
                    others: others.join(", "),
                });
            }
        }
        Ok(())
    }

    /// Detaches the running and suspended jobs of `removed` (they go on as
    /// ordinary jobs: their reservation word goes) and counts its pending
    /// ones.
    fn detach_jobs(&mut self, removed: &AdvanceReservation) -> Deleted {
        let word = reservation_word(&removed.config.name);
        let detached = self.placed_jobs_of(removed);
        for &id in &detached {
            if let Some(job) = self.jobs.get_mut(id) {
                job.spec.resources.retain(|resource| *resource != word);
            }
            self.note_change(id);
        }
        let pending = self
            .jobs
            .values()
            .filter(|job| {
                matches!(job.state, JobState::Pending | JobState::PendingSuspended)
                    && job.spec.resources.contains(&word)
            })
            .count();
        Deleted { detached, pending }
    }
}
