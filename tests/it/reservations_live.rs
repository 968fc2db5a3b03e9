//! `mcfed brsvadd`, `brsvs` and `brsvdel` against a cluster process kept
//! with `--state` (issue 27 item 8): a reservation made live is listed,
//! refusals come with the admin commands' exit status, a user's request is
//! checked against the reservation policies, and what was made and
//! deleted survives SIGKILL and a restart from the state directory.

use std::process::Output;

use serde_json::Value;

use crate::common;
use common::journaled::Live;
use common::mcfed_at;

/// One cluster of two 4-slot hosts; `maint` configured on a1; policy
/// `lab` lets alice reserve a2 from 0:00 to 12:00.
const SCENARIO: &str = r#"
name = "live reservations"

[[cluster]]
name = "Cluster1"
[[cluster.host]]
name = "a"
count = 2
MXJ = 4
[[cluster.queue]]
name = "normal"

[[cluster.reservation]]
name = "maint"
hosts = "a1"
start = "5h"
end = "6h"
users = "all"

[[cluster.reservation_policy]]
NAME = "lab"
USERS = "alice"
HOSTS = "a2"
TIME_WINDOW = "0:00-12:00"
"#;

/// Runs `mcfed ARGS` against Cluster1.
fn run(live: &Live, command: &[&str]) -> Output {
    mcfed_at("Cluster1", &live.address("Cluster1"), &live.certs, command)
}

/// The reservations `brsvs` lists, by name.
fn names(live: &Live) -> Vec<String> {
    let rows: Value = live.ask("brsvs", "Cluster1", &[]);
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|row| row["rsvid"].as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn brsvadd_and_brsvdel_survive_a_restart_from_the_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let live = Live::new(dir.path(), SCENARIO, &["Cluster1"]);
    let mut process = live.start("Cluster1", &[]);
    let day = [
        "brsvadd",
        "-N",
        "day",
        "-m",
        "a2",
        "-n",
        "2",
        "-u",
        "alice bob",
        "-b",
        "8h",
        "-e",
        "9h 30m",
    ];
    let made = common::succeeded(&run(&live, &day));
    assert_eq!(made.trim(), "Reservation <day> is created");
    let again = common::refused(&run(&live, &day), 1);
    assert!(again.contains("already exists"), "{again}");
    let overlap = common::refused(
        &run(
            &live,
            &[
                "brsvadd", "-N", "x", "-m", "a1", "-n", "1", "-u", "bob", "-b", "5:30", "-e", "7h",
            ],
        ),
        1,
    );
    assert!(overlap.starts_with("Reservation overlaps"), "{overlap}");
    let policy = common::refused(
        &run(
            &live,
            &[
                "brsvadd", "-N", "his", "-m", "a2", "-u", "bob", "-b", "10h", "-e", "11h",
                "--user", "bob",
            ],
        ),
        1,
    );
    assert!(policy.contains("User <bob> is not allowed"), "{policy}");
    common::succeeded(&run(
        &live,
        &[
            "brsvadd", "-N", "hers", "-m", "a2", "-n", "1", "-u", "alice", "-b", "10h", "-e",
            "11h", "--user", "alice",
        ],
    ));
    assert_eq!(names(&live), ["maint", "day", "hers"]);
    let text = common::succeeded(&run(&live, &["brsvs"]));
    assert!(
        text.lines()
            .any(|line| line.split_whitespace().collect::<Vec<_>>()
                == [
                    "day",
                    "user",
                    "alice,bob",
                    "0/2",
                    "a2",
                    "08:00:00-09:30:00",
                    "inactive"
                ]),
        "{text}"
    );
    let deleted = common::succeeded(&run(&live, &["brsvdel", "maint"]));
    assert_eq!(deleted.trim(), "Reservation <maint> is being deleted");
    let gone = common::refused(&run(&live, &["brsvdel", "maint"]), 1);
    assert!(
        gone.contains("Reservation <maint> does not exist"),
        "{gone}"
    );
    assert_eq!(names(&live), ["day", "hers"]);

    // SIGKILL and a restart from the state: the same reservations.
    live.restart(&mut process);
    assert_eq!(names(&live), ["day", "hers"]);
    common::succeeded(&run(&live, &["brsvdel", "hers", "--user", "alice"]));
    live.restart(&mut process);
    assert_eq!(names(&live), ["day"]);
}
