//! Advance reservations (issue 27 item 8; LSF's `brsvadd`): slots of some
//! hosts set aside for some users' jobs over a time window. A job uses one
//! by naming it (`bsub -U NAME`), kept among its resources as the word
//! `rsv==NAME` ([`reservation_word`]).
//!
//! - While a reservation is **active** (from its start to its end), the
//!   slots it holds — its slots less those its own jobs run on — are kept
//!   from every other job, and the counters leave them out of the
//!   queue's available slots (seed 004: "When an advance reservation is
//!   active on a remote cluster, slots within the advance reservation are
//!   excluded from the number of available slots").
//! - Before its start it is **inactive**: it counts nothing in the
//!   counters ("Inactive advance reservations do not affect the number of
//!   available slots since the slots may still be available for backfill
//!   jobs"), and the jobs that may use its slots are those that end, by
//!   their run limit, before it starts (backfill); a job without a run
//!   limit may not.
//! - A job naming a reservation runs only while it is active, only on its
//!   hosts and within its slots, and only for the users it lists; it
//!   pends otherwise.
//! - At its **end**, a closed reservation (brsvadd's default) kills its
//!   jobs still running or suspended (EXIT at the end's instant, as
//!   [`JobEvent::ReservationEnded`]: bhist and bjobs -l say which
//!   reservation ended, lsb.acct logs TERM_DEADLINE); an open one (`-o`,
//!   `open = true`) leaves them running as ordinary jobs. Its pending jobs keep pending: it never starts again.
//!
//! Reservations come from the configuration or are made and deleted at a
//! running cluster (`brsvadd`, `brsvdel`: [`live`]), which checks
//! overlaps and, for users other than the administrator, the
//! reservation policies ([`policy`]).
//!
//! A suspended job resumes only where these bounds let a job start
//! (`Cluster::resume_fits_reservations`), and a slot reservation's
//! predicted start leaves out the slots they will hold then
//! ([`predict`]).
//!
//! Each reservation's held slots are laid on its hosts with the most free
//! slots first, as a slot reservation's are (`bhosts` RSV does not show
//! them: `brsvs` does), its own running jobs' slots counting as its own;
//! where reservations overlap on hosts and that leaves one short, the
//! held slots are moved so that each holds what its hosts can give
//! ([`lay`]). A reservation's own jobs leave out the slots upcoming
//! reservations hold, as other jobs do.

mod lay;
pub mod live;
pub mod policy;
mod predict;

use mcfed_protocol::{JobEvent, JobSpec, SimTime};

use crate::config::{ConfigError, ConfigLocation};
use crate::job::{HostIndex, Job, JobId, JobState};
use crate::scheduler::{Cluster, SubmitError, Transition};

/// The prefix of a job's reservation word.
const WORD_PREFIX: &str = "rsv==";

/// The requirement word of a job that names reservation `name`.
pub fn reservation_word(name: &str) -> String {
    format!("{WORD_PREFIX}{name}")
}

/// The reservation a requirement word names, if it names one.
pub fn reservation_named(word: &str) -> Option<&str> {
    word.strip_prefix(WORD_PREFIX)
}

/// One advance reservation, as `brsvadd` makes it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AdvanceReservationConfig {
    /// Its name (`brsvadd -N`), which jobs name (`bsub -U`).
    pub name: String,
    /// The hosts whose slots it reserves (`-m`).
    pub hosts: Vec<String>,
    /// How many of their slots (`-n`); `None`: all of them.
    pub slots: Option<u32>,
    /// When it becomes active (`-b`).
    pub start: SimTime,
    /// When it ends (`-e`).
    pub end: SimTime,
    /// The users whose jobs may use it (`-u`); `all` for any user.
    pub users: Vec<String>,
    /// An open reservation (`-o`): its jobs still running at its end keep
    /// running, as ordinary jobs. A closed one (`false`, brsvadd's
    /// default) kills them at its end.
    pub open: bool,
}

/// A reservation as the scheduler keeps it.
#[derive(Clone, Debug)]
pub(crate) struct AdvanceReservation {
    pub(crate) config: AdvanceReservationConfig,
    /// Its hosts, by index.
    pub(crate) hosts: Vec<HostIndex>,
    /// The slots it reserves.
    pub(crate) slots: u32,
    /// Where it comes from: the configuration, or `brsvadd` at a running
    /// cluster (and who asked).
    pub(crate) origin: live::Origin,
}

impl AdvanceReservation {
    /// Whether it is active at `now`.
    pub(crate) fn active(&self, now: SimTime) -> bool {
        self.config.start <= now && now < self.config.end
    }

    /// Whether `user` may use it.
    pub(crate) fn admits(&self, user: &str) -> bool {
        self.config
            .users
            .iter()
            .any(|listed| listed == "all" || listed == user)
    }
}

/// What `brsvs` shows of one reservation at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdvanceReservationReport {
    /// RSVID.
    pub name: String,
    /// Its users.
    pub users: Vec<String>,
    /// The slots it reserves (NCPUS), and how many its jobs use.
    pub slots: u32,
    /// Slots its running jobs hold.
    pub used: u32,
    /// Its hosts.
    pub hosts: Vec<String>,
    /// Its window.
    pub start: SimTime,
    /// Its window's end.
    pub end: SimTime,
    /// Whether it is active then.
    pub active: bool,
}

/// Checks the reservations against the hosts (`host_index` names them)
/// and resolves them.
pub(crate) fn resolve(
    configs: Vec<AdvanceReservationConfig>,
    host_index: impl Fn(&str) -> Option<(HostIndex, u32)>,
) -> Result<Vec<AdvanceReservation>, ConfigError> {
    let mut resolved: Vec<AdvanceReservation> = Vec::with_capacity(configs.len());
    for (index, config) in configs.into_iter().enumerate() {
        let error = |(field, message): (&'static str, String)| ConfigError {
            location: ConfigLocation::Reservation { index, field },
            message,
        };
        if resolved
            .iter()
            .any(|other| other.config.name == config.name)
        {
            return Err(error((
                "name",
                format!("reservation `{}` is defined twice", config.name),
            )));
        }
        resolved.push(resolve_one(config, &host_index, live::Origin::Configured).map_err(error)?);
    }
    Ok(resolved)
}

/// Checks one reservation on its own (its name, hosts, slots, window and
/// users) and resolves it; a refusal names the field and why.
pub(crate) fn resolve_one(
    config: AdvanceReservationConfig,
    host_index: impl Fn(&str) -> Option<(HostIndex, u32)>,
    origin: live::Origin,
) -> Result<AdvanceReservation, (&'static str, String)> {
    if config.name.is_empty() || !config.name.chars().all(crate::host_types::is_name_char) {
        return Err((
            "name",
            format!("`{}` is not a reservation name", config.name),
        ));
    }
    let mut hosts = Vec::with_capacity(config.hosts.len());
    let mut capacity = 0u32;
    for name in &config.hosts {
        let (host, slots) =
            host_index(name).ok_or_else(|| ("hosts", format!("no host named `{name}`")))?;
        if !hosts.contains(&host) {
            hosts.push(host);
            capacity = capacity.saturating_add(slots);
        }
    }
    if hosts.is_empty() {
        return Err(("hosts", "a reservation needs hosts".to_owned()));
    }
    let slots = config.slots.unwrap_or(capacity);
    if slots == 0 || slots > capacity {
        return Err((
            "slots",
            format!("{slots} slots: its hosts have {capacity} (at least 1)"),
        ));
    }
    if config.end <= config.start {
        return Err((
            "end",
            format!(
                "the reservation ends ({}) before it starts ({})",
                config.end, config.start
            ),
        ));
    }
    if config.users.is_empty() {
        return Err((
            "users",
            "a reservation needs users (`all` for any)".to_owned(),
        ));
    }
    if let Some(user) = config
        .users
        .iter()
        .find(|user| user.is_empty() || !user.chars().all(crate::host_types::is_name_char))
    {
        return Err(("users", format!("`{user}` is not a user name")));
    }
    Ok(AdvanceReservation {
        config,
        hosts,
        slots,
        origin,
    })
}

/// Where a job stands with the advance reservations.
pub(crate) enum ReservationBounds {
    /// It names none and no reservation holds slots from it.
    Free,
    /// It names none: the slots reservations hold from it, by host.
    Held(Vec<u32>),
    /// It names one it may use now: only these hosts, at most `budget`
    /// slots in all, less what other reservations hold on them.
    Within {
        hosts: Vec<HostIndex>,
        budget: u32,
        held: Vec<u32>,
    },
    /// It names one it may not use now.
    Closed,
    /// It names one the cluster does not have (deleted with `brsvdel`, or
    /// never made): it pends until one of that name is made.
    Missing,
}

impl Cluster {
    /// The reservation job `job` names, if any (index).
    fn named_reservation(&self, job: &Job) -> Option<Option<usize>> {
        let name = job
            .spec
            .resources
            .iter()
            .find_map(|word| reservation_named(word))?;
        Some(
            self.advance
                .iter()
                .position(|reservation| reservation.config.name == name),
        )
    }

    /// Slots of reservation `index` its own running jobs hold.
    fn advance_used(&self, index: usize) -> u32 {
        self.advance_used_by_host(index).iter().sum()
    }

    /// Slots of reservation `index` its own running jobs hold on each of
    /// its hosts (in its order).
    fn advance_used_by_host(&self, index: usize) -> Vec<u32> {
        let word = reservation_word(&self.advance[index].config.name);
        self.advance[index]
            .hosts
            .iter()
            .map(|&host| {
                self.hosts[host]
                    .jobs
                    .iter()
                    .filter_map(|&id| self.jobs.get(id))
                    .filter(|job| {
                        job.state == JobState::Running && job.spec.resources.contains(&word)
                    })
                    .flat_map(|job| job.placement.iter())
                    .filter(|place| place.host == host)
                    .map(|place| place.slots)
                    .sum()
            })
            .collect()
    }

    /// The running and suspended jobs placed in `reservation` (naming it,
    /// on its hosts), by id, once each.
    pub(crate) fn placed_jobs_of(&self, reservation: &AdvanceReservation) -> Vec<JobId> {
        let word = reservation_word(&reservation.config.name);
        let mut placed: Vec<JobId> = reservation
            .hosts
            .iter()
            .flat_map(|&host| self.hosts[host].jobs.iter().copied())
            .filter(|&id| {
                self.jobs.get(id).is_some_and(|job| {
                    matches!(
                        job.state,
                        JobState::Running | JobState::Suspended | JobState::UserSuspended
                    ) && job.spec.resources.contains(&word)
                })
            })
            .collect();
        placed.sort_unstable();
        placed.dedup();
        placed
    }

    /// The slots each reservation that `holds(index)` says holds slots
    /// keeps free, laid host by host (most free slots first), summed.
    fn advance_held(&self, holds: impl Fn(usize) -> bool) -> Vec<u32> {
        let claims: Vec<lay::Claim<'_>> = (0..self.advance.len())
            .filter(|&index| holds(index))
            .map(|index| lay::Claim {
                hosts: &self.advance[index].hosts,
                own: self.advance_used_by_host(index),
                left: self.advance[index].slots,
            })
            .collect();
        if claims.is_empty() {
            return vec![0; self.hosts.len()];
        }
        let free: Vec<u32> = (0..self.hosts.len())
            .map(|host| self.hosts[host].free())
            .collect();
        lay::lay(&claims, &free)
    }

    /// How the advance reservations bound job `job` at `now` (inlined: a
    /// cluster without any pays one test in placement's hot path).
    #[inline]
    pub(crate) fn reservation_bounds(&self, job: &Job, now: SimTime) -> ReservationBounds {
        if self.advance.is_empty() && self.advance_live.deleted.is_empty() {
            return ReservationBounds::Free;
        }
        self.bounds_under_reservations(job, now)
    }

    /// [`Cluster::reservation_bounds`] when there are reservations.
    fn bounds_under_reservations(&self, job: &Job, now: SimTime) -> ReservationBounds {
        match self.named_reservation(job) {
            None => {
                let ends = job.spec.run_limit.map(|limit| now + limit);
                let held = self.advance_held(|index| self.holds_from(index, now, ends));
                if held.iter().all(|&slots| slots == 0) {
                    ReservationBounds::Free
                } else {
                    ReservationBounds::Held(held)
                }
            }
            Some(None) => ReservationBounds::Missing,
            Some(Some(index)) => {
                let reservation = &self.advance[index];
                if !reservation.active(now) || !reservation.admits(&job.spec.user) {
                    return ReservationBounds::Closed;
                }
                // Its job ends by its run limit, and by its reservation's
                // end when that one is closed.
                let limit_end = job.spec.run_limit.map(|limit| now + limit);
                let ends = if reservation.config.open {
                    limit_end
                } else {
                    Some(limit_end.map_or(reservation.config.end, |end| {
                        end.min(reservation.config.end)
                    }))
                };
                let held =
                    self.advance_held(|other| other != index && self.holds_from(other, now, ends));
                ReservationBounds::Within {
                    hosts: reservation.hosts.clone(),
                    budget: reservation.slots.saturating_sub(self.advance_used(index)),
                    held,
                }
            }
        }
    }

    /// Whether reservation `index` holds slots at `now` from a job that
    /// would start then and end by `ends` (`None`: never by itself): while
    /// it is active, and before its start when the job would still run
    /// then.
    fn holds_from(&self, index: usize, now: SimTime, ends: Option<SimTime>) -> bool {
        let reservation = &self.advance[index];
        reservation.active(now)
            || (now < reservation.config.start
                && ends.is_none_or(|end| end > reservation.config.start))
    }

    /// Whether suspended job `job` may resume on its hosts as the advance
    /// reservations stand now: not into slots one holds from it, and, for a
    /// job of an active reservation, within its hosts and slots. A job
    /// whose reservation has ended (an open one's) resumes as an ordinary
    /// job.
    pub(crate) fn resume_fits_reservations(&self, job: &Job) -> bool {
        let fits = |held: &[u32]| {
            job.placement.iter().all(|place| {
                self.hosts[place.host]
                    .free()
                    .saturating_sub(held[place.host])
                    >= place.slots
            })
        };
        match self.reservation_bounds(job, self.cycle.now) {
            ReservationBounds::Free | ReservationBounds::Closed | ReservationBounds::Missing => {
                true
            }
            ReservationBounds::Held(held) => fits(&held),
            ReservationBounds::Within {
                hosts,
                budget,
                held,
            } => {
                let slots: u32 = job.placement.iter().map(|place| place.slots).sum();
                slots <= budget
                    && job
                        .placement
                        .iter()
                        .all(|place| hosts.contains(&place.host))
                    && fits(&held)
            }
        }
    }

    /// Free slots of `hosts` that active advance reservations hold at
    /// `now` (seed 004: they are "excluded from the number of available
    /// slots").
    pub(crate) fn advance_held_on(&self, hosts: &[HostIndex], now: SimTime) -> u64 {
        if self.advance.is_empty() {
            return 0;
        }
        let held = self.advance_held(|index| self.advance[index].active(now));
        hosts
            .iter()
            .filter(|&&host| !self.hosts[host].config.closed)
            .map(|&host| u64::from(held[host]))
            .sum()
    }

    /// The next start or end of an advance reservation after `now`: a pass
    /// is due then (jobs waiting for it may start, slots it held free up).
    pub(crate) fn next_reservation_boundary(&self, now: SimTime) -> Option<SimTime> {
        self.advance
            .iter()
            .flat_map(|reservation| [reservation.config.start, reservation.config.end])
            .filter(|&at| at > now)
            .min()
    }

    /// Kills the jobs still running or suspended in each closed
    /// reservation (brsvadd without `-o`) that ended since the last look
    /// and by `now`, at its end.
    pub(crate) fn close_reservations(&mut self, now: SimTime, transitions: &mut Vec<Transition>) {
        let last = self.advance_seen;
        for index in 0..self.advance.len() {
            let reservation = &self.advance[index];
            let end = reservation.config.end;
            if reservation.config.open || end <= last || end > now {
                continue;
            }
            for id in self.placed_jobs_of(reservation) {
                tracing::debug!(cluster = %self.name, job = %id, reservation = %self.advance[index].config.name, "advance reservation closed: job killed");
                self.kill(id, end, JobEvent::ReservationEnded, transitions);
            }
        }
    }

    /// Notes that the reservations' state changed at `now` (one started
    /// or ended since the last pass), so a pass is due.
    pub(crate) fn cross_reservation_boundaries(&mut self, now: SimTime) {
        let last = self.advance_seen;
        if self
            .advance
            .iter()
            .flat_map(|reservation| [reservation.config.start, reservation.config.end])
            .any(|at| at > last && at <= now)
        {
            self.cycle.dirty = true;
            self.cycle.version += 1;
        }
        self.advance_seen = self.advance_seen.max(now);
    }

    /// Refuses a job for send queue `queue` that names an advance
    /// reservation (`bsub -U`): a reservation holds slots of this cluster's
    /// hosts, which a forwarded job never runs on, and no execution
    /// cluster knows it (LSF's remote reservations, `-U NAME@cluster`,
    /// are not modelled); pending at the submission cluster for ever
    /// would help no one.
    pub fn check_not_forwarding_reservation(
        &self,
        queue: &str,
        spec: &JobSpec,
    ) -> Result<(), SubmitError> {
        let Some(name) = spec
            .resources
            .iter()
            .find_map(|word| reservation_named(word))
        else {
            return Ok(());
        };
        if self.advance.iter().all(|rsv| rsv.config.name != name) {
            // As a local queue says of a reservation it does not know.
            return Err(SubmitError::CannotRun(
                mcfed_protocol::RejectReason::MissingResource(reservation_word(name)),
            ));
        }
        Err(SubmitError::ReservationForwarded {
            reservation: name.to_owned(),
            queue: queue.to_owned(),
        })
    }

    /// Every advance reservation as `brsvs` shows it at `now`.
    pub fn advance_reservations(&self, now: SimTime) -> Vec<AdvanceReservationReport> {
        (0..self.advance.len())
            .map(|index| {
                let reservation = &self.advance[index];
                AdvanceReservationReport {
                    name: reservation.config.name.clone(),
                    users: reservation.config.users.clone(),
                    slots: reservation.slots,
                    used: self.advance_used(index),
                    hosts: reservation
                        .hosts
                        .iter()
                        .map(|&host| self.hosts[host].config.name.clone())
                        .collect(),
                    start: reservation.config.start,
                    end: reservation.config.end,
                    active: reservation.active(now),
                }
            })
            .collect()
    }

    /// Whether reservation word `word` can ever be met in a queue on
    /// `hosts` by `user`: the reservation exists, admits the user, and has
    /// a host among them.
    pub(crate) fn reservation_reachable(
        &self,
        word: &str,
        hosts: &[HostIndex],
        user: &str,
    ) -> bool {
        let Some(name) = reservation_named(word) else {
            return true;
        };
        self.advance.iter().any(|reservation| {
            reservation.config.name == name
                && reservation.admits(user)
                && reservation.hosts.iter().any(|host| hosts.contains(host))
        })
    }
}
