//! `brsvs`: the cluster's advance reservations (issue 27 item 8), with
//! LSF's columns: the rows a running cluster gives for
//! [`crate::AdminRequest::Reservations`], and their printer.

use mcfed_cluster::{AdvanceReservationReport, ClusterNode};
use mcfed_protocol::SimTime;
use serde::{Deserialize, Serialize};

use crate::table::Table;

/// One advance reservation, as `brsvs` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReservationRow {
    /// RSVID: its name.
    pub rsvid: String,
    /// USER: the users it is for.
    pub users: Vec<String>,
    /// Slots its jobs use.
    pub used: u32,
    /// Slots it reserves.
    pub slots: u32,
    /// RSV_HOSTS: its hosts.
    pub hosts: Vec<String>,
    /// When it starts, emulated seconds.
    pub start: f64,
    /// When it ends, emulated seconds.
    pub end: f64,
    /// Whether it is active at the time asked.
    pub active: bool,
}

impl From<AdvanceReservationReport> for ReservationRow {
    fn from(report: AdvanceReservationReport) -> Self {
        ReservationRow {
            rsvid: report.name,
            users: report.users,
            used: report.used,
            slots: report.slots,
            hosts: report.hosts,
            start: report.start.as_secs_f64(),
            end: report.end.as_secs_f64(),
            active: report.active,
        }
    }
}

/// Every advance reservation of the cluster, at `now`.
pub fn rows(node: &ClusterNode, now: SimTime) -> Vec<ReservationRow> {
    node.cluster()
        .advance_reservations(now)
        .into_iter()
        .map(ReservationRow::from)
        .collect()
}

/// `brsvs`' columns: RSVID TYPE USER NCPUS (used/reserved) RSV_HOSTS
/// TIME_WINDOW (emulated times), and mcfed's STATE (active or inactive).
pub fn reservations_table(rows: &[ReservationRow]) -> Table {
    let mut table = Table::new(
        "brsvs",
        "RESERVATIONS",
        &[
            "RSVID",
            "TYPE",
            "USER",
            "NCPUS",
            "RSV_HOSTS",
            "TIME_WINDOW",
            "STATE",
        ],
    );
    table.rows = rows
        .iter()
        .map(|row| {
            vec![
                row.rsvid.clone(),
                "user".to_owned(),
                row.users.join(","),
                format!("{}/{}", row.used, row.slots),
                row.hosts.join(","),
                format!(
                    "{}-{}",
                    crate::table::clock(row.start),
                    crate::table::clock(row.end)
                ),
                if row.active { "active" } else { "inactive" }.to_owned(),
            ]
        })
        .collect();
    table
}

/// `brsvs`.
pub fn reservations(rows: &[ReservationRow]) -> String {
    if rows.is_empty() {
        return "No reservation found\n".to_owned();
    }
    // Table::text shows every cell escaped (names come from outside).
    reservations_table(rows).text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brsvs_lists_each_reservation_with_its_use_and_window() {
        let member = crate::cmd::rsvadd::tests::member_with(
            r#"
[[cluster.reservation]]
name = "maint"
hosts = "h1"
slots = 3
start = "10m"
end = "40m"
users = "alice bob"
"#,
        );
        let rows = rows(member.node(), SimTime::from_secs(60));
        assert_eq!(rows.len(), 1);
        let text = reservations(&rows);
        let line = text.lines().nth(1).expect("a row");
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "maint",
                "user",
                "alice,bob",
                "0/3",
                "h1",
                "00:10:00-00:40:00",
                "inactive"
            ]
        );
        assert_eq!(reservations(&[]), "No reservation found\n");
    }
}
