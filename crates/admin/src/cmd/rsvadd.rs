//! `brsvadd` (a scenario's `brsvadd` action): makes an advance reservation
//! at a running cluster (issue 27 item 8). The request carries the
//! reservation in `brsvadd`'s terms (`-N`, `-m`, `-n`, `-b`, `-e`, `-u`,
//! `-o`) and the user asking (`--user`; none: the administrator, whom no
//! reservation policy binds); the answer is LSF's line or the refusal.

use mcfed_cluster::AdvanceReservationConfig;
use mcfed_federation::Member;
use mcfed_protocol::SimTime;

use crate::AdminResponse;

/// Makes reservation `config` at `member` at `now`, asked by `by`.
pub fn apply(
    member: &mut Member,
    now: SimTime,
    config: AdvanceReservationConfig,
    by: Option<&str>,
) -> AdminResponse {
    match member.add_reservation(now, config, by) {
        Ok(message) => AdminResponse::ReservationChanged(message),
        Err(refused) => AdminResponse::Error(refused),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use mcfed_federation::{Effects, Member};

    use super::*;
    use crate::{AdminRequest, Applied};

    /// A cluster of two 4-slot hosts, `h1` and `h2`, with queue `normal`
    /// and `section` (TOML of the cluster's reservations or policies)
    /// added: the admin tests' reservation federation, written once.
    pub(crate) fn member_with(section: &str) -> Member {
        let text = format!(
            r#"
name = "rsv"
end = "1d"

[[cluster]]
name = "C1"

[[cluster.host]]
name = "h"
count = 2
MXJ = 4

[[cluster.queue]]
name = "normal"
{section}"#
        );
        let scenario = mcfed_scenario::parse("rsv.toml", &text).expect("valid");
        Member::build(scenario.clusters[0].member_spec())
            .expect("builds")
            .0
    }

    /// [`member_with`] a policy `day` that lets alice reserve h2 from
    /// 8:00 to 18:00.
    pub(crate) fn member() -> Member {
        member_with(
            r#"
[[cluster.reservation_policy]]
NAME = "day"
USERS = "alice"
HOSTS = "h2"
TIME_WINDOW = "8:00-18:00"
"#,
        )
    }

    /// `brsvadd -N NAME -m HOST -b START -e END -u alice`, in minutes.
    pub(crate) fn request(
        name: &str,
        host: &str,
        start: u64,
        end: u64,
        by: Option<&str>,
    ) -> AdminRequest {
        AdminRequest::ReservationAdd {
            config: AdvanceReservationConfig {
                name: name.to_owned(),
                hosts: vec![host.to_owned()],
                slots: None,
                start: SimTime::from_secs(start * 60),
                end: SimTime::from_secs(end * 60),
                users: vec!["alice".to_owned()],
                open: false,
            },
            by: by.map(str::to_owned),
        }
    }

    /// What `request` answers, as its command prints it.
    pub(crate) fn outcome(member: &mut Member, request: AdminRequest) -> Result<String, String> {
        let mut effects = Effects::default();
        match crate::apply(request, member, SimTime::ZERO, &mut effects) {
            Applied::Answer(answer) => answer.outcome(),
            Applied::ForProcess(request) => panic!("not a member's: {request:?}"),
        }
    }

    #[test]
    fn brsvadd_makes_a_reservation_brsvs_lists() {
        let mut member = member();
        let added = request("maint", "h1", 60, 120, None);
        assert!(added.changes_member(), "journaled before it is answered");
        assert_eq!(
            outcome(&mut member, added.clone()),
            Ok("Reservation <maint> is created".to_owned())
        );
        let rows = crate::cmd::reservations::rows(member.node(), SimTime::ZERO);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].rsvid.as_str(), rows[0].slots), ("maint", 4));
        let again = outcome(&mut member, added).expect_err("the name is used");
        assert!(again.contains("already exists"), "{again}");
        let overlap =
            outcome(&mut member, request("x", "h1", 90, 150, None)).expect_err("h1 is held");
        assert!(overlap.starts_with("Reservation overlaps"), "{overlap}");
    }

    #[test]
    fn a_users_brsvadd_is_checked_against_the_policies() {
        let mut member = member();
        let refused = outcome(
            &mut member,
            request("a", "h1", 9 * 60, 10 * 60, Some("alice")),
        )
        .expect_err("h1 is not in the policy");
        assert!(refused.contains("User <alice> is not allowed"), "{refused}");
        outcome(
            &mut member,
            request("a", "h2", 9 * 60, 10 * 60, Some("alice")),
        )
        .expect("within the policy");
    }
}
