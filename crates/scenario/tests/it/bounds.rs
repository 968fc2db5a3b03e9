//! What enters through a scenario is bounded where it is read (issue 26,
//! items 7 and 8): a duration of any size in any field is refused with its
//! line and the bound, never converted into a panic; scenario and hosts
//! files are read only when they are regular files, up to a bound; a job's
//! name and user pass the check every job passes (`JobSpec::check_bounds`),
//! and every message shows control characters escaped.

use crate::common;

use std::path::Path;

use common::{line_of, problems};
use mcfed_scenario::{ScenarioError, load, parse};

/// Two clusters with a queue each, to which each case adds one key.
const BASE: &str = r#"
name = "bounds"
{top}
[[cluster]]
name = "C1"
[[cluster.host]]
name = "h1"
MXJ = 2
[[cluster.queue]]
name = "normal"
[[cluster]]
name = "C2"
[[cluster.host]]
name = "h2"
MXJ = 2
[[cluster.queue]]
name = "normal"
[[submit]]
at = 0
cluster = "C1"
queue = "normal"
name = "j"
{submit}
{tail}
"#;

/// Every key that holds a duration, with where it goes in [`BASE`]: the
/// text before it (a table header when it needs one) and the field path
/// the refusal must name.
const DURATION_KEYS: &[(&str, &str, &str)] = &[
    ("top", "end = {v}", "end"),
    ("top", "[params]\nCLEAN_PERIOD = {v}", "params.CLEAN_PERIOD"),
    (
        "top",
        "[params]\nMBD_SLEEP_TIME = {v}",
        "params.MBD_SLEEP_TIME",
    ),
    (
        "top",
        "[params]\nMC_RECLAIM_TIME = {v}",
        "params.MC_RECLAIM_TIME",
    ),
    (
        "top",
        "[params]\nMC_PLUGIN_UPDATE_INTERVAL = {v}",
        "params.MC_PLUGIN_UPDATE_INTERVAL",
    ),
    ("submit", "every = {v}\ncount = 2", "submit[0].every"),
    ("submit", "run_time = {v}", "submit[0].run_time"),
    ("submit", "run_limit = {v}", "submit[0].run_limit"),
    ("submit", "run_estimate = {v}", "submit[0].run_estimate"),
    (
        "tail",
        "[[submit]]\nat = {v}\ncluster = \"C1\"\nqueue = \"normal\"",
        "submit[1].at",
    ),
    (
        "tail",
        "[[action]]\nat = {v}\ncluster = \"C1\"\ncommand = \"bkill\"\njob = \"j\"",
        "action[0].at",
    ),
    (
        "tail",
        "[[action]]\nat = 60\ncluster = \"C1\"\ncommand = \"bmod\"\njob = \"j\"\nrun_limit = {v}",
        "action[0].run_limit",
    ),
    (
        "tail",
        "[[expect]]\nat = {v}\njob = \"j\"\nstate = \"RUN\"",
        "expect[0].at",
    ),
    ("tail", "[chaos.links]\ndelay = {v}", "chaos.links.delay"),
    (
        "tail",
        "[[chaos.partition]]\nbetween = [\"C1\", \"C2\"]\nfrom = 0\nuntil = {v}",
        "chaos.partition[0].until",
    ),
    (
        "tail",
        "[[chaos.outage]]\ncluster = \"C1\"\nat = 0\ndown_for = {v}",
        "chaos.outage[0].down_for",
    ),
    (
        "tail",
        "[[chaos.skew]]\ncluster = \"C1\"\nahead = {v}",
        "chaos.skew[0].ahead",
    ),
];

fn scenario_with(place: &str, text: &str) -> String {
    let mut source = BASE.to_owned();
    for slot in ["top", "submit", "tail"] {
        let value = if slot == place { text } else { "" };
        source = source.replace(&format!("{{{slot}}}"), value);
    }
    source
}

#[test]
fn a_duration_of_any_size_in_any_field_is_refused_with_its_line_and_the_bound() {
    for (value, shown) in [
        ("1e20", "duration = 1e20 seconds is out of bounds"),
        ("1e300", "duration = 1e300 seconds is out of bounds"),
        ("inf", "duration = inf seconds is out of bounds"),
        ("\"99999999999h\"", "duration = 4166666666d 15h"),
        (
            "\"99999999999999999999h\"",
            "duration = `99999999999999999999h`",
        ),
        ("99999999999", "duration = 1157407d 9h 46m 39s"),
    ] {
        for (place, template, field) in DURATION_KEYS {
            let source = scenario_with(place, &template.replace("{v}", value));
            let found = problems(&source);
            let (line, path, message) = &found[0];
            assert_eq!(path, field, "{value} in {field}: {found:?}");
            assert!(
                message.contains(shown) && message.contains("mcfed accepts 0s to 36500d"),
                "{value} in {field}: {message}"
            );
            let written = template
                .lines()
                .find(|text| text.contains("{v}"))
                .expect("the key");
            assert_eq!(
                *line,
                line_of(&source, &written.replace("{v}", value)),
                "{value} in {field}"
            );
        }
    }
}

#[test]
fn nonsense_numbers_of_seconds_say_what_a_duration_is() {
    for value in ["nan", "-1.5", "-1e300", "-3"] {
        let source = scenario_with("top", &format!("end = {value}"));
        let found = problems(&source);
        assert!(
            found[0].2.contains("from 0") || found[0].2.contains("cannot be negative"),
            "{value}: {found:?}"
        );
        assert!(found[0].2.len() < 120, "short: {}", found[0].2);
    }
}

#[test]
fn durations_within_the_bound_are_still_checked_by_their_own() {
    // The update interval's own bound (a day) still applies below the
    // scenario-wide one.
    let source = scenario_with("top", "[params]\nMC_PLUGIN_UPDATE_INTERVAL = \"2d\"");
    let found = problems(&source);
    assert!(
        found[0]
            .2
            .contains("MC_PLUGIN_UPDATE_INTERVAL = 2d is out of bounds: mcfed accepts 1s to 1d"),
        "{found:?}"
    );
    parse("ok.toml", &scenario_with("top", "end = 3153600000")).expect("100 years is in");
}

#[test]
fn a_job_name_or_user_with_a_control_character_is_refused_at_its_line() {
    let source = scenario_with(
        "tail",
        "[[submit]]\nat = 0\ncluster = \"C1\"\nqueue = \"normal\"\nuser = \"bob\\u0007\"",
    )
    .replace("name = \"j\"", "name = \"a\\u001b[2Jb\"");
    let error = parse("bad.toml", &source).expect_err("refused");
    let rendered = error.to_string();
    assert!(
        !rendered.contains('\u{1b}') && !rendered.contains('\u{7}'),
        "{rendered:?}"
    );
    let problems = error.problems();
    let name = problems
        .iter()
        .find(|problem| problem.field.to_string() == "submit[0].name")
        .expect("the name is refused");
    assert_eq!(name.line, line_of(&source, "name = \"a\\u001b"));
    assert!(
        name.message
            .contains("job name holds the control character"),
        "{name:?}"
    );
    assert!(
        problems
            .iter()
            .any(|problem| problem.field.to_string() == "submit[1].user"
                && problem
                    .message
                    .contains("user name holds the control character")),
        "{problems:?}"
    );
}

#[test]
fn an_overlong_job_name_is_refused_before_its_jobs_are_made() {
    // A million jobs named with 4,090 bytes each would take 4 GB; the
    // longest name the entry makes (`...-1000000`, 4,098 bytes: over
    // LSF's 4,094) is checked first.
    let name = "n".repeat(4_090);
    let source = scenario_with("submit", "count = 1000000")
        .replace("name = \"j\"", &format!("name = \"{name}\""));
    let found = problems(&source);
    assert_eq!(found[0].1, "submit[0].name", "{found:?}");
    assert!(
        found[0]
            .2
            .contains("job name of 4098 bytes is out of bounds"),
        "{}",
        found[0].2
    );
}

#[test]
fn problems_show_control_characters_escaped() {
    let source = scenario_with(
        "tail",
        "[[action]]\nat = 60\ncluster = \"C1\"\ncommand = \"bkill\"\njob = \"x\\u001b[31m\"",
    );
    let rendered = parse("bad.toml", &source)
        .expect_err("no such job")
        .to_string();
    assert!(rendered.contains("\\u{1b}[31m"), "{rendered}");
    assert!(!rendered.contains('\u{1b}'), "{rendered:?}");
}

#[cfg(unix)]
#[test]
fn a_scenario_that_is_a_device_or_a_fifo_is_refused_unread() {
    let error = load(Path::new("/dev/zero")).expect_err("a device");
    assert!(matches!(error, ScenarioError::Read { .. }));
    assert!(
        error
            .to_string()
            .contains("/dev/zero: is a character device, not a regular file"),
        "{error}"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("scenario.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // No writer: reading it would block forever.
    let error = load(&fifo).expect_err("a FIFO");
    assert!(error.to_string().contains("is a FIFO"), "{error}");
}

#[cfg(unix)]
#[test]
fn a_hosts_file_that_is_a_device_is_refused_unread() {
    let mut scenario = parse("ok.toml", &scenario_with("top", "")).expect("valid");
    let error =
        mcfed_scenario::hosts::apply(&mut scenario, Path::new("/dev/zero")).expect_err("a device");
    assert!(
        error
            .to_string()
            .starts_with("cannot read hosts file /dev/zero: is a character device"),
        "{error}"
    );
}

#[cfg(unix)]
#[test]
fn a_trace_that_is_a_fifo_is_refused_unread() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("trace.swf");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let source = scenario_with(
        "tail",
        &format!(
            "[[workload]]\nswf = \"{}\"\ncluster = \"C1\"\nqueue = \"normal\"",
            fifo.display()
        ),
    );
    let found = problems(&source);
    assert_eq!(found[0].1, "workload[0].swf", "{found:?}");
    assert!(found[0].2.contains("is a FIFO"), "{found:?}");
}
