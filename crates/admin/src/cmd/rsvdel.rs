//! `brsvdel` (a scenario's `brsvdel` action): deletes an advance
//! reservation at a running cluster (issue 27 item 8). Its running jobs
//! are detached and go on as ordinary jobs (LSF's `brsvdel`: "The running
//! jobs will be detached and treated as regular jobs"); its pending jobs
//! keep pending. A user other than the administrator (`--user`) deletes
//! only the reservations that user made.

use mcfed_federation::Member;
use mcfed_protocol::SimTime;

use crate::AdminResponse;

/// Deletes reservation `name` at `member` at `now`, asked by `by`.
pub fn apply(member: &mut Member, now: SimTime, name: &str, by: Option<&str>) -> AdminResponse {
    match member.delete_reservation(now, name, by) {
        Ok(message) => AdminResponse::ReservationChanged(message),
        Err(refused) => AdminResponse::Error(refused),
    }
}

#[cfg(test)]
mod tests {
    use crate::AdminRequest;
    use crate::cmd::rsvadd::tests::{member, outcome, request};

    fn delete(name: &str, by: Option<&str>) -> AdminRequest {
        AdminRequest::ReservationDelete {
            name: name.to_owned(),
            by: by.map(str::to_owned),
        }
    }

    #[test]
    fn brsvdel_deletes_once_and_users_delete_only_their_own() {
        let mut member = member();
        outcome(&mut member, request("admins", "h1", 60, 120, None)).expect("added");
        outcome(
            &mut member,
            request("hers", "h2", 9 * 60, 10 * 60, Some("alice")),
        )
        .expect("added");
        assert!(delete("admins", None).changes_member());
        let refused = outcome(&mut member, delete("admins", Some("alice"))).expect_err("not hers");
        assert!(
            refused.contains("only the reservations they made"),
            "{refused}"
        );
        assert_eq!(
            outcome(&mut member, delete("hers", Some("alice"))),
            Ok("Reservation <hers> is being deleted".to_owned())
        );
        assert_eq!(
            outcome(&mut member, delete("admins", None)),
            Ok("Reservation <admins> is being deleted".to_owned())
        );
        assert_eq!(
            outcome(&mut member, delete("admins", None)),
            Err("Reservation <admins> does not exist".to_owned())
        );
    }
}
