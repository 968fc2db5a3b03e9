//! The mappings of issue 13's features, on small configuration
//! directories: run limits and estimates, user groups with their own
//! shares, lsb.resources' Limits, and lsf.conf's keys, with the warnings
//! and errors each gives.

use super::import_cluster;
use crate::doc::{ClusterDoc, Table, Value};
use crate::source::Diagnostic;

const HOSTS: &str = "Begin Host\nHOST_NAME MXJ\nh1 4\nh2 4\nh3 2\nEnd Host\n\nBegin HostGroup\nGROUP_NAME GROUP_MEMBER\nhg (h1 h2)\nEnd HostGroup\n";

/// Imports cluster `C1` from `files` (name, text) written to a temporary
/// directory; the messages of its warnings or errors.
fn import(files: &[(&str, &str)]) -> Result<(ClusterDoc, Vec<String>), Vec<String>> {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let messages = |list: Vec<Diagnostic>| -> Vec<String> {
        list.into_iter()
            .map(|diagnostic| {
                let line = diagnostic.at.map_or(0, |at| at.line);
                format!("{line}: {}", diagnostic.message)
            })
            .collect()
    };
    import_cluster("C1", dir.path(), None)
        .map(|(doc, warnings)| (doc, messages(warnings)))
        .map_err(|error| messages(error.errors))
}

fn text<'t>(table: &'t Table, key: &str) -> Option<&'t str> {
    table.text(key)
}

fn named<'d>(tables: &'d [Table], key: &str, name: &str) -> &'d Table {
    tables
        .iter()
        .find(|table| table.text(key) == Some(name))
        .unwrap_or_else(|| panic!("no `{name}` in {tables:?}"))
}

#[test]
fn run_limits_and_estimates_are_read_as_bsub_writes_them() {
    let queues = "Begin Queue\nQUEUE_NAME = a\nRUNLIMIT = 1:30\nESTIMATED_RUNTIME = 45/h1\nEnd Queue\n\nBegin Queue\nQUEUE_NAME = b\nRUNLIMIT = 10 120\nRUNTIME = 20\nEnd Queue\n";
    let (doc, warnings) = import(&[("lsb.hosts", HOSTS), ("lsb.queues", queues)]).expect("imports");
    let a = named(&doc.queues, "name", "a");
    assert_eq!(text(a, "RUNLIMIT"), Some("90m"));
    assert_eq!(text(a, "RUNTIME"), Some("45m"));
    let b = named(&doc.queues, "name", "b");
    assert_eq!(text(b, "RUNLIMIT"), Some("10m"), "the default limit");
    assert_eq!(text(b, "RUNTIME"), Some("20m"));
    assert_eq!(
        warnings,
        [
            "4: ESTIMATED_RUNTIME: normalisation by the CPU factor of `h1` is not modelled; the time is taken as written",
            "9: RUNLIMIT: the maximum run limit `120` (jobs asking for more are refused) is not modelled; ignored, the default `10` is the run limit of jobs that give none",
        ]
    );
}

#[test]
fn run_times_lsf_refuses_are_errors() {
    for (body, expected) in [
        (
            "RUNLIMIT = 0",
            "3: RUNLIMIT must be longer than zero, found `0`",
        ),
        (
            "RUNLIMIT = 1 2 3",
            "3: RUNLIMIT expects [default_limit] maximum_limit, found `1 2 3`",
        ),
        (
            "RUNTIME = 1h",
            "3: RUNTIME expects [hour:]minute (`90` or `1:30`), found `1h`",
        ),
        (
            "RUNTIME = 5\nESTIMATED_RUNTIME = 6",
            "4: ESTIMATED_RUNTIME sets the run-time estimate again (first at line 3): give RUNTIME or ESTIMATED_RUNTIME, not both",
        ),
        (
            "FAIRSHARE = USER_SHARES[[gx@, 1]]",
            "3: FAIRSHARE: `gx@` names no user group of lsb.users",
        ),
    ] {
        let queues = format!("Begin Queue\nQUEUE_NAME = a\n{body}\nEnd Queue\n");
        let errors = import(&[("lsb.hosts", HOSTS), ("lsb.queues", &queues)]).expect_err("refused");
        assert_eq!(errors, [expected], "{body}");
    }
}

#[test]
fn user_groups_keep_their_members_and_shares() {
    let users = "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\nga (alice bob) ([alice, 2] [bob, 1])\ngb (ga carol ~bob) ()\ngc (all ~dave) ()\ngd (!) ()\nge (ga gc) ([ga, 1] [gc, 2])\nEnd UserGroup\n";
    let queues = "Begin Queue\nQUEUE_NAME = q\nFAIRSHARE = USER_SHARES[[ge, 3] [ga@, 1] [others, 1]]\nEnd Queue\n";
    let (doc, warnings) = import(&[
        ("lsb.hosts", HOSTS),
        ("lsb.users", users),
        ("lsb.queues", queues),
    ])
    .expect("imports");
    let group = |name| named(&doc.user_groups, "name", name);
    assert_eq!(text(group("ga"), "GROUP_MEMBER"), Some("alice bob"));
    assert_eq!(
        text(group("ga"), "USER_SHARES"),
        Some("[alice, 2] [bob, 1]")
    );
    assert_eq!(
        text(group("gb"), "GROUP_MEMBER"),
        Some("alice carol"),
        "exclusions applied"
    );
    assert_eq!(text(group("gb"), "USER_SHARES"), None);
    assert_eq!(text(group("gc"), "GROUP_MEMBER"), Some("all"));
    assert_eq!(text(group("ge"), "GROUP_MEMBER"), Some("ga gc"), "nested");
    assert_eq!(text(group("ge"), "USER_SHARES"), Some("[ga, 1] [gc, 2]"));
    assert!(doc.user_groups.iter().all(|g| g.text("name") != Some("gd")));
    assert_eq!(
        text(&doc.queues[0], "FAIRSHARE"),
        Some("USER_SHARES[[ge, 3] [ga@, 1] [others, 1]]")
    );
    assert_eq!(
        warnings,
        [
            "5: user group gc: exclusions from `all` are not modelled; the group holds every user",
            "6: user group gd: `!` (members from an external egroup program) is not modelled; ignored",
            "6: user group gd has no members mcfed can model; left out",
        ]
    );
    let errors = import(&[(
        "lsb.users",
        "Begin UserGroup\nGROUP_NAME GROUP_MEMBER USER_SHARES\ngx (alice) ([alice])\nEnd UserGroup\n",
    )])
    .expect_err("refused");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("3: USER_SHARES: bad share assignment `[alice]`"));
}

#[test]
fn resource_reservation_sections_become_reservation_policies() {
    let resources = "Begin ResourceReservation\nNAME = day\nUSERS = alice\nHOSTS = hg ~h2\nTIME_WINDOW = 8:00-18:00 20-22\nEnd ResourceReservation\n\nBegin ResourceReservation\nNAME = typo\nHOSTS = h9\nEnd ResourceReservation\n\nBegin ResourceReservation\nNAME = late\nTIME_WINDOW = 25:00-26:00\nEnd ResourceReservation\n\nBegin ResourceReservation\nUSERS = bob\nCREATOR = bob\nEnd ResourceReservation\n";
    let (doc, warnings) =
        import(&[("lsb.hosts", HOSTS), ("lsb.resources", resources)]).expect("imports");
    let keys = |table: &Table| -> Vec<(String, Option<String>)> {
        table
            .entries
            .iter()
            .map(|entry| (entry.key.clone(), table.text(&entry.key).map(str::to_owned)))
            .collect()
    };
    let pair = |key: &str, value: &str| (key.to_owned(), Some(value.to_owned()));
    assert_eq!(
        doc.reservation_policies.len(),
        2,
        "{:?}",
        doc.reservation_policies
    );
    assert_eq!(
        keys(&doc.reservation_policies[0]),
        [
            pair("NAME", "day"),
            pair("USERS", "alice"),
            pair("HOSTS", "h1 h2 ~h2"),
            pair("TIME_WINDOW", "8:00-18:00 20-22"),
        ]
    );
    assert_eq!(
        keys(&doc.reservation_policies[1]),
        [pair("NAME", "lsb.resources:18"), pair("USERS", "bob")]
    );
    assert_eq!(
        warnings,
        [
            "10: ResourceReservation typo: HOSTS names `h9`, which is not a host or host group of the cluster (did you mean `h1`?); the policy is ignored",
            "15: ResourceReservation late: TIME_WINDOW `25:00`: the hour `25` is not between 0 and 23; the policy is ignored",
            "20: unknown parameter `CREATOR` in a ResourceReservation section; ignored",
            "18: a ResourceReservation without NAME (mcfed names every policy) is named `lsb.resources:18`",
        ]
    );
}

#[test]
fn every_limit_of_slots_or_jobs_becomes_a_cluster_limit() {
    let queues =
        "Begin Queue\nQUEUE_NAME = q1\nEnd Queue\nBegin Queue\nQUEUE_NAME = q2\nEnd Queue\n";
    let resources = "Begin Limit\nNAME = a\nPER_HOST = hg\nUSERS = all ~bob\nJOBS = 3\nEnd Limit\n\nBegin Limit\nNAME = b\nQUEUES = q9\nSLOTS = 1\nEnd Limit\n\nBegin Limit\nNAME = c\nAPPS = app1\nSLOTS = 1\nEnd Limit\n\nBegin Limit\nSLOTS = 2\nPER_QUEUE = all\nEnd Limit\n\nBegin Limit\nNAME PER_USER QUEUES HOSTS SLOTS JOBS MEM\nr1 - (q1 q2) h* 4 - 100\nEnd Limit\n";
    let (doc, warnings) = import(&[
        ("lsb.hosts", HOSTS),
        ("lsb.queues", queues),
        ("lsb.resources", resources),
    ])
    .expect("imports");
    let keys = |table: &Table| -> Vec<(String, Value)> {
        table
            .entries
            .iter()
            .map(|entry| (entry.key.clone(), entry.value.clone()))
            .collect()
    };
    let words = |key: &str, value: &str| (key.to_owned(), Value::Text(value.to_owned()));
    let number = |key: &str, value: u64| (key.to_owned(), Value::Int(value));
    assert_eq!(doc.limits.len(), 3, "{:?}", doc.limits);
    assert_eq!(
        keys(&doc.limits[0]),
        [
            words("NAME", "a"),
            words("PER_HOST", "h1 h2"),
            words("USERS", "all ~bob"),
            number("JOBS", 3),
        ]
    );
    assert_eq!(
        keys(&doc.limits[1]),
        [
            words("NAME", "lsb.resources:20"),
            number("SLOTS", 2),
            words("PER_QUEUE", "all"),
        ]
    );
    assert_eq!(
        keys(&doc.limits[2]),
        [
            words("NAME", "r1"),
            words("QUEUES", "q1 q2"),
            words("HOSTS", "h1 h2 h3"),
            number("SLOTS", 4),
        ]
    );
    assert_eq!(
        warnings,
        [
            "10: Limit b: QUEUES names `q9`, which is not a queue of lsb.queues (did you mean `q1`?); the limit is ignored",
            "16: APPS is not modelled; ignored",
            "14: Limit c: it applies only to the APPS it names, which mcfed does not model; the limit is ignored",
            "20: a Limit without NAME (mcfed names every limit) is named `lsb.resources:20`",
            "26: column MEM is not modelled; ignored",
        ]
    );
    let both = "Begin Limit\nNAME = d\nUSERS = alice\nPER_USER = bob\nSLOTS = 1\nEnd Limit\n";
    let errors = import(&[("lsb.hosts", HOSTS), ("lsb.resources", both)]).expect_err("refused");
    assert_eq!(
        errors,
        ["3: Limit d: USERS and PER_USER cannot both be set (LSF refuses them in one Limit)"]
    );
}

#[test]
fn absolute_priority_scheduling_keys_are_imported() {
    let queues = "Begin Queue\nQUEUE_NAME = aps\nPRIORITY = 40\nAPS_PRIORITY = WEIGHT[[QPRIORITY, 10] [JPRIORITY, 1]] LIMIT[[QPRIORITY, 100]]\nQUEUE_GROUP = other\nCHUNK_JOB_SIZE = 4\nRERUNNABLE = y\nEnd Queue\n\nBegin Queue\nQUEUE_NAME = other\nPRIORITY = 30\nEnd Queue\n";
    let params = "Begin Parameters\nMAX_USER_PRIORITY = 100\nJOB_PRIORITY_OVER_TIME = 2/10\nEnd Parameters\n";
    let (doc, warnings) = import(&[
        ("lsb.hosts", HOSTS),
        ("lsb.queues", queues),
        ("lsb.params", params),
    ])
    .expect("imports");
    assert_eq!(warnings, Vec::<String>::new());
    let aps = named(&doc.queues, "name", "aps");
    let formula = text(aps, "APS_PRIORITY").expect("APS_PRIORITY");
    assert!(
        formula.contains("QPRIORITY") && formula.contains("LIMIT"),
        "{formula}"
    );
    assert_eq!(text(aps, "QUEUE_GROUP"), Some("other"));
    assert_eq!(text(aps, "RERUNNABLE"), Some("Y"));
    assert_eq!(
        aps.get("CHUNK_JOB_SIZE").map(|entry| &entry.value),
        Some(&Value::Int(4))
    );
    assert_eq!(text(&doc.params, "JOB_PRIORITY_OVER_TIME"), Some("2/10"));
}

#[test]
fn absolute_priority_values_lsf_refuses_are_errors_at_their_line() {
    for (body, expected) in [
        ("APS_PRIORITY = WEIGHT[[BOGUS, 1]]", "3: APS_PRIORITY: "),
        (
            "DISPATCH_ORDER = USER",
            "3: DISPATCH_ORDER expects `QUEUE`, found `USER`",
        ),
    ] {
        let queues = format!("Begin Queue\nQUEUE_NAME = a\n{body}\nEnd Queue\n");
        let errors = import(&[("lsb.hosts", HOSTS), ("lsb.queues", &queues)]).expect_err("refused");
        assert!(
            errors.len() == 1 && errors[0].starts_with(expected),
            "{body}: {errors:?}"
        );
    }
}

#[test]
fn lsf_conf_gives_its_modelled_keys_and_warns_about_the_others() {
    let conf = "# site\nLSF_LOGDIR=/var/log/lsf\nLSB_REQUEUE_TO_BOTTOM = 1\nLSB_MIG2PND=1\n\nLSB_MIG2PEND=\"y\"  # quoted\n";
    let (doc, warnings) = import(&[("lsb.hosts", HOSTS), ("lsf.conf", conf)]).expect("imports");
    assert_eq!(text(&doc.params, "LSB_REQUEUE_TO_BOTTOM"), Some("Y"));
    assert_eq!(text(&doc.params, "LSB_MIG2PEND"), Some("Y"));
    assert_eq!(
        warnings,
        [
            "2: LSF_LOGDIR is not modelled; ignored",
            "4: unknown parameter `LSB_MIG2PND` in lsf.conf (did you mean `LSB_MIG2PEND`?); ignored",
        ]
    );
    let (doc, _) =
        import(&[("lsb.hosts", HOSTS), ("lsf.conf", "LSB_MIG2PEND=0\n")]).expect("imports");
    assert_eq!(text(&doc.params, "LSB_MIG2PEND"), Some("N"));
}

#[test]
fn lsf_conf_lines_lsf_would_not_take_are_errors_at_their_line() {
    for (conf, expected) in [
        (
            "LSB_MIG2PEND=2\n",
            "1: LSB_MIG2PEND expects 1 or 0 (or Y or N), found `2`",
        ),
        (
            "\nLSB_MIG2PEND\n",
            "2: expected `KEY=value`, found `LSB_MIG2PEND`",
        ),
        (
            "LSB_MIG2PEND=1\nLSB_MIG2PEND=0\n",
            "2: LSB_MIG2PEND is set twice in lsf.conf (first at line 1)",
        ),
        (
            "1ABC=1\n",
            "1: expected a parameter name before `=`, found `1ABC`",
        ),
    ] {
        let errors = import(&[("lsb.hosts", HOSTS), ("lsf.conf", conf)])
            .err()
            .unwrap_or_else(|| panic!("`{conf}` is refused"));
        assert_eq!(errors, [expected], "{conf}");
    }
}

#[test]
fn a_clusters_lsf_conf_is_its_directorys_or_its_parents() {
    let parent = tempfile::tempdir().expect("temp dir");
    let dir = parent.path().join("C1");
    std::fs::create_dir(&dir).expect("dir");
    std::fs::write(dir.join("lsb.hosts"), HOSTS).expect("write");
    std::fs::write(parent.path().join("lsf.conf"), "LSB_MIG2PEND=1\n").expect("write");
    let (doc, _) = import_cluster("C1", &dir, None).expect("imports");
    assert_eq!(text(&doc.params, "LSB_MIG2PEND"), Some("Y"), "the parent's");
    std::fs::write(dir.join("lsf.conf"), "LSB_REQUEUE_TO_BOTTOM=1\n").expect("write");
    let (doc, _) = import_cluster("C1", &dir, None).expect("imports");
    assert_eq!(text(&doc.params, "LSB_MIG2PEND"), None, "its own, only");
    assert_eq!(text(&doc.params, "LSB_REQUEUE_TO_BOTTOM"), Some("Y"));
}
