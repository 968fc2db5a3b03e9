//! Configurations that make no sense are refused, or explained, with the
//! file, line and field: two clusters on one address, an `end` before the
//! first submission, empty user names, zero run limits, queues that both
//! send and receive (forwarding cycles named); and `[[action]]` entries
//! are checked key by key.

use crate::common;

use common::{line_of, problems};
use mcfed_protocol::{JobAction, JobChanges};
use mcfed_scenario::model::ActionKind;
use mcfed_scenario::parse;

const BASE: &str = r#"
name = "base"

[[cluster]]
name = "C1"
address = "127.0.0.1:7200"
params = { MAX_USER_PRIORITY = 100 }
[[cluster.queue]]
name = "send"
SNDJOBS_TO = "high@C2"
[[cluster.queue]]
name = "normal"
[[cluster.host]]
name = "a"
MXJ = 2

[[cluster]]
name = "C2"
address = "127.0.0.1:7201"
[[cluster.host]]
name = "h"
MXJ = 4
[[cluster.queue]]
name = "high"
RCVJOBS_FROM = "C1"

[[submit]]
at = "1m"
cluster = "C1"
queue = "send"
name = "job1"
"#;

#[test]
fn the_base_is_accepted() {
    let scenario = parse("base.toml", BASE).expect("valid");
    assert!(scenario.warnings.is_empty(), "{:?}", scenario.warnings);
}

#[test]
fn two_clusters_on_one_address_are_refused() {
    let source = BASE.replace("127.0.0.1:7201", "127.0.0.1:7200");
    let found = problems(&source);
    assert_eq!(found.len(), 1, "{found:?}");
    let (line, field, message) = &found[0];
    assert_eq!(field, "cluster[1].address");
    assert_eq!(*line, line_of(&source, "name = \"C2\"") + 1);
    assert!(
        message.contains("`C1` and `C2` both listen on 127.0.0.1:7200"),
        "{message}"
    );
}

#[test]
fn an_end_before_the_first_submission_is_refused() {
    let source = format!("end = \"30s\"\n{BASE}");
    let found = problems(&source);
    assert_eq!(found.len(), 1, "{found:?}");
    let (line, field, message) = &found[0];
    assert_eq!((*line, field.as_str()), (1, "end"));
    assert!(
        message.contains("before the first submission (job1 at 00:01:00)"),
        "{message}"
    );
    // Later submissions are only warned about.
    let source = format!(
        "end = \"2m\"\n{BASE}\n[[submit]]\nat = \"5m\"\ncluster = \"C1\"\nqueue = \"send\"\nname = \"late\"\n"
    );
    let scenario = parse("late.toml", &source).expect("valid");
    assert_eq!(scenario.warnings.len(), 1, "{:?}", scenario.warnings);
    assert!(scenario.warnings[0].message.contains("1 submission(s)"));
}

#[test]
fn empty_user_names_and_zero_run_limits_are_refused() {
    for (line, field, message) in [
        ("user = \"\"\n", "submit[0].user", "is not a user name"),
        ("user = \"a b\"\n", "submit[0].user", "is not a user name"),
        (
            "run_limit = \"0s\"\n",
            "submit[0].run_limit",
            "longer than zero",
        ),
    ] {
        let source = format!("{BASE}{line}");
        let found = problems(&source);
        assert_eq!(found.len(), 1, "{line}: {found:?}");
        assert_eq!(found[0].1, field);
        assert_eq!(found[0].0, line_of(&source, line.trim()));
        assert!(found[0].2.contains(message), "{found:?}");
    }
}

#[test]
fn a_queue_that_sends_and_receives_is_explained_and_a_cycle_named() {
    // C2's `high` sends back to C1's `send`, which receives from C2.
    let source = BASE
        .replace(
            "SNDJOBS_TO = \"high@C2\"\n",
            "SNDJOBS_TO = \"high@C2\"\nRCVJOBS_FROM = \"C2\"\n",
        )
        .replace(
            "RCVJOBS_FROM = \"C1\"\n",
            "RCVJOBS_FROM = \"C1\"\nSNDJOBS_TO = \"send@C1\"\n",
        );
    let scenario = parse("cycle.toml", &source).expect("accepted, as LSF does");
    assert_eq!(scenario.warnings.len(), 2, "{:?}", scenario.warnings);
    let first = &scenario.warnings[0];
    assert_eq!(first.field.to_string(), "cluster[0].queue[0].SNDJOBS_TO");
    assert!(
        first
            .message
            .contains("forwarding cycle send@C1 -> high@C2 -> send@C1"),
        "{}",
        first.message
    );
    assert!(
        first.message.contains("never forwarded again"),
        "{}",
        first.message
    );
    assert!(
        scenario.warnings[1]
            .message
            .contains("forwarding cycle high@C2 -> send@C1 -> high@C2")
    );
}

#[test]
fn actions_are_read_and_checked_key_by_key() {
    let source = format!(
        "{BASE}
[[action]]
at = \"10m\"
cluster = \"C1\"
command = \"bmod\"
job = \"job1\"
slots = 2
priority = 60

[[action]]
at = \"5m\"
cluster = \"C1\"
command = \"bkill\"
job = \"job1\"
"
    );
    let scenario = parse("actions.toml", &source).expect("valid");
    assert_eq!(scenario.actions.len(), 2);
    assert_eq!(
        scenario.actions[0].action,
        ActionKind::Job(JobAction::Kill),
        "time order"
    );
    assert_eq!(
        scenario.actions[1].action,
        ActionKind::Job(JobAction::Modify(JobChanges {
            run_limit: None,
            slots: Some(2),
            user_priority: Some(60),
            aps: None,
        }))
    );
    assert_eq!(scenario.actions[1].origin, "action[0]");
    for (entry, field, message) in [
        (
            "command = \"bfly\"\njob = \"job1\"\n",
            "action[0].command",
            "unknown command `bfly`",
        ),
        (
            "command = \"bkill\"\njob = \"nobody\"\n",
            "action[0].job",
            "no job is named `nobody`",
        ),
        (
            "command = \"bkill\"\njob = \"job1\"\nqueue = \"high\"\n",
            "action[0].queue",
            "does not belong in a `bkill` action",
        ),
        (
            "command = \"bswitch\"\njob = \"job1\"\nqueue = \"normal\"\nrelease = \"h1\"\n",
            "action[0].release",
            "does not belong in a `bswitch` action",
        ),
        (
            "command = \"host_fail\"\nhost = \"h1\"\nslots = 2\n",
            "action[0].slots",
            "does not belong in a `host_fail` action",
        ),
        (
            "command = \"brsvadd\"\nreservation = \"r\"\njob = \"job1\"\n",
            "action[0].job",
            "does not belong in a `brsvadd` action",
        ),
        (
            "command = \"brsvdel\"\nreservation = \"r\"\nhosts = \"h1\"\n",
            "action[0].hosts",
            "does not belong in a `brsvdel` action",
        ),
        (
            "command = \"bkill\"\njob = \"job1\"\nuser = \"alice\"\n",
            "action[0].user",
            "does not belong in a `bkill` action",
        ),
        (
            "command = \"bswitch\"\njob = \"job1\"\n",
            "action[0].queue",
            "needs `queue`",
        ),
        (
            "command = \"bswitch\"\njob = \"job1\"\nqueue = \"nosuch\"\n",
            "action[0].queue",
            "no cluster has a queue `nosuch`",
        ),
        (
            "command = \"bmod\"\njob = \"job1\"\n",
            "action[0].command",
            "changes `run_limit`",
        ),
        (
            "command = \"bmod\"\njob = \"job1\"\nrun_limit = \"0s\"\n",
            "action[0].run_limit",
            "longer than zero",
        ),
        (
            "command = \"bmod\"\njob = \"job1\"\npriority = 101\n",
            "action[0].priority",
            "between 1 and MAX_USER_PRIORITY (100)",
        ),
    ] {
        let source = format!("{BASE}\n[[action]]\nat = \"10m\"\ncluster = \"C1\"\n{entry}");
        let found = problems(&source);
        assert!(
            found
                .iter()
                .any(|(_, f, m)| f == field && m.contains(message)),
            "{entry}: {found:?}"
        );
    }
    // A job submitted after the action.
    let source = format!(
        "{BASE}\n[[action]]\nat = \"30s\"\ncluster = \"C1\"\ncommand = \"bkill\"\njob = \"job1\"\n"
    );
    let found = problems(&source);
    assert!(
        found[0]
            .2
            .contains("submitted at 00:01:00, after this action"),
        "{found:?}"
    );
}
