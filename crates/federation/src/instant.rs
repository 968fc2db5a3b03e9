//! The order in which a federation takes what happens at one instant: the
//! one rule both in-process engines follow ([`Rounds`], [`calls`]), so that
//! the event loop and the actor engine reach the same decisions whatever
//! their runtime would run first.
//!
//! At an instant `T` a driver
//!
//! 1. hands every member the inputs given at `T` — submissions and
//!    commands, in the order it was given them — before any member steps;
//! 2. delivers what members send at once, in the order sent: a message's
//!    receiver takes it — and what it sends on taking it (an accept, a
//!    reply) is delivered in turn — before any member steps. Every input
//!    and message touches the member that takes it;
//! 3. touches every member whose own timer is due at `T`
//!    ([`Member::next_wake`]: a job finishing, a reservation expiring, a
//!    recall);
//! 4. once nothing is in flight, steps the touched members together in a
//!    **round**: every one advances its scheduler ([`Member::advance`]), in
//!    member order; then every one whose forwarding session is due runs it
//!    ([`Member::session`]), in member order. What the round sent is
//!    delivered (2) — as are its receivers' replies — and the members it
//!    touched, and those whose timers came due again, step in the next
//!    round. The instant has settled when nothing is in flight and no
//!    member is touched;
//! 5. publishes the counter updates due at `T`, member by member in member
//!    order, each delivered and settled (2–4) before the next, so an update
//!    reflects everything that happened at its instant.
//!
//! Why: a member steps only when nothing is in flight, and on everything
//! that reached it by then — every input of `T` and every message those
//! caused — so a forwarding session at `T` decides all the jobs submitted
//! at `T` together, and a scheduler passes once over its jobs that
//! finished at `T` and the commands given at `T`. What a round sends
//! reaches its receivers after their own step of that round, as it would
//! after any delay: a job's finish at one cluster does not change where
//! jobs submitted at the same instant at another are sent, and a job
//! forwarded at `T` comes after the receiver's own jobs that finished at
//! `T`. And since the members of a round step on what was delivered before
//! it, no step depends on which member a runtime happened to run first:
//! the actor engine, whose actors could run in any order, takes every
//! instant as the event loop does. (The two once disagreed when a job
//! finished at one cluster at the instant two jobs were submitted at
//! another: the actors took the finish between the two submissions.)
//!
//! [`Member::next_wake`]: crate::Member::next_wake
//! [`Member::advance`]: crate::Member::advance
//! [`Member::session`]: crate::Member::session

/// The members touched at the current instant, stepped round by round in
/// member order.
#[derive(Clone, Debug, Default)]
pub struct Rounds {
    touched: Vec<bool>,
    list: Vec<usize>,
}

/// One call of a round to one member, in the order a round makes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// Advance the member's scheduler ([`crate::Member::advance`]).
    Advance(usize),
    /// Run the member's forwarding session, if one is due
    /// ([`crate::Member::session_due`], [`crate::Member::session`]).
    Session(usize),
}

impl Rounds {
    /// No member touched, for a federation of `members` members.
    pub fn new(members: usize) -> Self {
        Rounds {
            touched: vec![false; members],
            list: Vec::with_capacity(members),
        }
    }

    /// Member `member` took an input or a message, or its timer is due
    /// now: it steps in the next round.
    pub fn touch(&mut self, member: usize) {
        if let Some(touched) = self.touched.get_mut(member) {
            if !*touched {
                *touched = true;
                self.list.push(member);
            }
        }
    }

    /// Whether no member is touched: the instant has settled.
    pub fn is_settled(&self) -> bool {
        self.list.is_empty()
    }

    /// Takes the next round into `round` (emptied first): the touched
    /// members, in member order. They are no longer touched; what touches
    /// them again belongs to the round after.
    pub fn next_round(&mut self, round: &mut Vec<usize>) {
        round.clear();
        // Swapped, not copied: most rounds touch one member.
        std::mem::swap(round, &mut self.list);
        if round.len() > 1 {
            round.sort_unstable();
        }
        for &member in round.iter() {
            self.touched[member] = false;
        }
    }
}

/// The calls of `round`, in order: every member advances, then every member
/// runs its session (if one is due).
pub fn calls(round: &[usize]) -> impl Iterator<Item = Call> + '_ {
    let advances = round.iter().map(|&member| Call::Advance(member));
    advances.chain(round.iter().map(|&member| Call::Session(member)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_takes_the_touched_members_once_in_member_order() {
        let mut rounds = Rounds::new(4);
        assert!(rounds.is_settled());
        for member in [3, 1, 3, 0] {
            rounds.touch(member);
        }
        assert!(!rounds.is_settled());
        let mut round = vec![9];
        rounds.next_round(&mut round);
        assert_eq!(round, vec![0, 1, 3]);
        assert!(rounds.is_settled());
        // Touched again during the round: the next round.
        rounds.touch(1);
        rounds.next_round(&mut round);
        assert_eq!(round, vec![1]);
    }

    #[test]
    fn every_member_advances_before_any_session() {
        let calls: Vec<Call> = calls(&[0, 2]).collect();
        assert_eq!(
            calls,
            vec![
                Call::Advance(0),
                Call::Advance(2),
                Call::Session(0),
                Call::Session(2)
            ]
        );
    }

    #[test]
    fn an_unknown_member_is_ignored() {
        let mut rounds = Rounds::new(1);
        rounds.touch(5);
        assert!(rounds.is_settled());
    }
}
