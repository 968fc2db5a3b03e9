//! End-to-end: `mcfed import lsf`, `mcfed export lsf` and scenarios with
//! `lsf_config` on the fixtures of `tests/lsf/`: the seed's four
//! forwarding examples written as lsb.* files, a site in the style of the
//! stock OpenLava/LSF templates, and malformed configurations.

use std::path::Path;
use std::process::Output;

use crate::common;
use common::{Mcfed, mcfed, stderr, succeeded};

const EXAMPLES: [(&str, &str); 4] = [
    ("example1", "example1-count-preemptable"),
    ("example2", "example2-preemptable-queue-priority"),
    ("example3", "example3-high-queue-priority"),
    ("example4", "example4-preemptable-slots"),
];

/// `--cluster` arguments for the three clusters of an example.
fn cluster_args(example: &str) -> Vec<String> {
    ["Cluster1", "Cluster2", "Cluster3"]
        .iter()
        .flat_map(|name| {
            [
                "--cluster".to_owned(),
                format!("{name}=tests/lsf/{example}/{name}"),
            ]
        })
        .collect()
}

/// Runs `mcfed` with `env` set in its environment.
fn mcfed_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    env.iter()
        .fold(Mcfed::new(args), |mcfed, (key, value)| {
            mcfed.env(key, value)
        })
        .run()
}

fn import(args: &[String], output: &Path) -> Output {
    let mut all: Vec<&str> = vec!["import", "lsf"];
    all.extend(args.iter().map(String::as_str));
    let output = output.to_str().expect("UTF-8 path");
    all.extend(["-o", output]);
    mcfed(&all)
}

/// The JSON lines of a run, without the scenario's own title.
fn decisions(scenario: &str) -> Vec<String> {
    let output = mcfed(&["run", scenario, "--report", "json"]);
    succeeded(&output)
        .lines()
        .filter(|line| line.contains("\"record\":\"decision\""))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_four_examples_from_lsf_files_pass_their_checks_with_the_same_decisions() {
    for (dir, toml) in EXAMPLES {
        let scenario = format!("tests/lsf/{dir}/scenario.toml");
        let stdout = succeeded(&mcfed(&["run", &scenario, "--check"]));
        assert!(stdout.contains("expectations held"), "{scenario}: {stdout}");
        assert!(!stdout.contains("FAIL"), "{scenario}: {stdout}");
        let from_lsf = decisions(&scenario);
        let from_toml = decisions(&format!("scenarios/forwarding/{toml}.toml"));
        assert!(!from_lsf.is_empty(), "{scenario} decides");
        assert_eq!(from_lsf, from_toml, "{scenario}: the same decisions");
    }
}

#[test]
fn imported_examples_are_the_toml_examples_clusters_and_validate_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (example, toml) in EXAMPLES {
        let out = dir.path().join(format!("{example}.toml"));
        let stdout = succeeded(&import(&cluster_args(example), &out));
        assert!(
            stdout.contains("3 clusters, 20 hosts, 5 queues"),
            "{stdout}"
        );
        let imported = mcfed_scenario::load(&out).expect("the import validates");
        let original =
            mcfed_scenario::load(Path::new(&format!("scenarios/forwarding/{toml}.toml")))
                .expect("valid");
        assert_eq!(imported.clusters.len(), original.clusters.len());
        for (left, right) in imported.clusters.iter().zip(&original.clusters) {
            // Example 4 gives its hosts ncpus 10 for MXJ `!`; the TOML
            // leaves processors to MXJ (10): the same count.
            assert_eq!(
                processors_counted(&left.config),
                processors_counted(&right.config),
                "{example}"
            );
            assert_eq!(left.forwarder, right.forwarder, "{example}");
            assert_eq!(left.subscribers, right.subscribers, "{example}");
        }
        let out = out.to_str().expect("UTF-8");
        succeeded(&mcfed(&["validate", out]));
        let written = std::fs::read_to_string(out).expect("written");
        assert!(written.contains("MAX_JOBS = "), "{written}");
        assert!(
            written.contains("  # lsb.queues:"),
            "every value names its line: {written}"
        );
    }
}

/// The configuration with every host's processors stated.
fn processors_counted(config: &mcfed_cluster::ClusterConfig) -> mcfed_cluster::ClusterConfig {
    let mut config = config.clone();
    for host in &mut config.hosts {
        host.processors = Some(host.processor_count());
    }
    config
}

/// The warnings of the template site, as `file:line: message`.
const TEMPLATE_WARNINGS: [&str; 24] = [
    "lsf.shared:18: column ARCHITECTURE is not modelled; ignored",
    "lsf.shared:23: column INTERVAL is not modelled; ignored",
    "lsf.shared:23: column INCREASING is not modelled; ignored",
    "lsf.shared:23: column DESCRIPTION is not modelled; ignored",
    "lsf.shared:27: Numeric resource `scratch` is not modelled; ignored",
    "lsf.conf:4: LSF_TOP is not modelled; ignored",
    "lsf.conf:5: LSF_ENVDIR is not modelled; ignored",
    "lsf.conf:6: LSF_LOGDIR is not modelled; ignored",
    "lsf.conf:8: LSF_MASTER_LIST is not modelled; ignored",
    "lsf.conf:9: LSB_SHAREDIR is not modelled; ignored",
    "site/lsb.params:7: DEFAULT_QUEUE is not modelled; ignored",
    "site/lsb.params:9: SBD_SLEEP_TIME is not modelled; ignored",
    "site/lsb.params:10: JOB_ACCEPT_INTERVAL is not modelled; ignored",
    "site/lsf.cluster.site:7: section ClusterAdmins is not modelled; ignored",
    "site/lsf.cluster.site:20: section ResourceMap is not modelled; ignored",
    "site/lsb.hosts:6: column r1m is not modelled; ignored",
    "site/lsb.queues:8: NICE is not modelled; ignored",
    "site/lsb.queues:14: r1m is not modelled; ignored",
    "site/lsb.queues:23: RUNLIMIT: the maximum run limit `1:00` (jobs asking for more are refused) is not modelled; ignored, the default `15` is the run limit of jobs that give none",
    "site/queues.d/low.queues:10: RES_REQ is not modelled; ignored",
    "site/lsb.resources:20: MEM is not modelled; ignored",
    "site/lsb.resources:17: Limit mem_cap: it limits neither SLOTS nor JOBS, the resources mcfed models; ignored",
    "site/lsb.resources:32: PROJECTS is not modelled; ignored",
    "site/lsb.resources:30: Limit project_cap: it applies only to the PROJECTS it names, which mcfed does not model; the limit is ignored",
];

/// `warning: FILE:LINE:COLUMN: message` lines as `file:line: message`
/// relative to `tests/lsf/template/`.
fn listed(stderr: &str, kind: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix(&format!("{kind}: tests/lsf/template/")))
        .map(|rest| {
            let (place, message) = rest.split_once(": ").expect("place: message");
            let (file_line, _column) = place.rsplit_once(':').expect("a column");
            format!("{file_line}: {message}")
        })
        .collect()
}

#[test]
fn the_template_site_imports_with_exactly_its_warnings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("site.toml");
    let args = vec![
        "--cluster".to_owned(),
        "site=tests/lsf/template/site".to_owned(),
    ];
    let output = import(&args, &out);
    succeeded(&output);
    assert_eq!(listed(&stderr(&output), "warning"), TEMPLATE_WARNINGS);
    let written = std::fs::read_to_string(&out).expect("written");
    for expected in [
        "FAIRSHARE = \"USER_SHARES[[everyone, 5] [others, 1]]\"  # lsb.queues:11",
        "PREEMPTION = \"PREEMPTIVE[low+2 normal]\"  # lsb.queues:25",
        "HOSTS = \"hostA hostB hostD\"  # lsb.queues:22",
        "RUNLIMIT = \"15m\"  # lsb.queues:23 (15 minutes)",
        "RUNTIME = \"10m\"  # lsb.queues:24 (0:10: 10 minutes)",
        "MXJ = 8  # lsb.hosts:7 (`!`: one slot per processor)",
        "ngpus = 4  # lsf.cluster.site:13",
        "NO_PREEMPT_RUN_TIME = \"30m\"  # queues.d/low.queues:7 (30 minutes)",
        "ENABLE_GPU_HIST_RUN_TIME = \"Y\"  # queues.d/low.queues:9",
        "COMMITTED_RUN_TIME_FACTOR = 0.5  # lsb.params:16",
        "RUN_TIME_DECAY = \"Y\"  # lsb.params:17",
        "CLEAN_PERIOD = \"7200s\"  # lsb.params:19",
        "MAX_USER_PRIORITY = 100  # lsb.params:20",
        "LSB_MIG2PEND = \"Y\"  # lsf.conf:12",
        "LSB_REQUEUE_TO_BOTTOM = \"Y\"  # lsf.conf:13",
        "GROUP_MEMBER = \"group_a group_b\"  # lsb.users:7",
        "USER_SHARES = \"[group_a, 3] [group_b, 1]\"  # lsb.users:7",
        "[[cluster.limit]]\nNAME = \"short_cap\"  # lsb.resources:5\nQUEUES = \"short\"  # lsb.resources:6\nSLOTS = 6  # lsb.resources:7",
        "PER_USER = \"all\"  # lsb.resources:13",
        "USERS = \"all ~alice\"  # lsb.resources:25\nPER_HOST = \"hostA hostC\"  # lsb.resources:26\nJOBS = 2  # lsb.resources:27",
        "NAME = \"group_cap\"  # lsb.resources:39\nUSERS = \"group_b\"  # lsb.resources:39\nSLOTS = 8  # lsb.resources:39",
        "QUEUES = \"pool_a pool_b\"  # lsb.resources:40\nJOBS = 10  # lsb.resources:40",
        "memory_mb = 65536  # lsf.cluster.site:13",
        "# DESCRIPTION = \"For normal low priority jobs, running only if hosts are lightly loaded.\"\n[[cluster.queue]]\nname = \"normal\"",
    ] {
        assert!(
            written.contains(expected),
            "missing `{expected}` in:\n{written}"
        );
    }
    assert!(
        !written.contains("NAME = \"project_cap\""),
        "a project limit stays out"
    );
    assert!(
        !written.contains("NAME = \"mem_cap\""),
        "a memory limit stays out"
    );
    assert!(!written.contains("login1"), "a client host runs no jobs");
    assert!(
        !written.contains("night"),
        "a commented-out queue stays out"
    );
    succeeded(&mcfed(&["validate", out.to_str().expect("UTF-8")]));

    let strict = import(
        &[vec!["--strict".to_owned()], args].concat(),
        &dir.path().join("strict.toml"),
    );
    assert_eq!(strict.status.code(), Some(2), "--strict refuses");
    assert_eq!(listed(&stderr(&strict), "error"), TEMPLATE_WARNINGS);
    assert!(!dir.path().join("strict.toml").exists());
}

#[test]
fn malformed_configurations_are_errors_at_file_line_and_column() {
    let cases = [
        (
            "unclosed-section",
            "",
            "lsb.queues:2:7: section `Queue` is not ended: expected `End Queue`",
        ),
        (
            "bad-number",
            "",
            "lsb.queues:3:14: PRIORITY expects a whole number",
        ),
        (
            "unknown-preempt-queue",
            "",
            "lsb.queues:4:14: PREEMPTION names queue `lwo`, which lsb.queues does not define (did you mean `low`?)",
        ),
        (
            "sndjobs-not-in-shared",
            "bad",
            "bad/lsb.queues:3:14: SNDJOBS_TO: cluster `Cluster9` is not in lsf.shared's Cluster section (did you mean `Cluster2`?)",
        ),
        (
            "too-many-values",
            "",
            "lsb.hosts:3:23: this row has 4 values but the header (line 2) names 3 columns",
        ),
        ("unclosed-list", "", "lsb.users:3:13: `(` is not closed"),
        (
            "missing-include",
            "",
            "lsb.queues:4:1: cannot read tests/lsf/malformed/missing-include/queues.d/nothere.queues",
        ),
        (
            "unlimited-slots",
            "",
            "lsb.hosts:4:12: host `hostA`: MXJ is `!`, which needs the host's processors",
        ),
        (
            "bad-lsf-conf",
            "",
            "lsf.conf:2:1: LSB_MIG2PEND expects 1 or 0 (or Y or N), found `yes please`",
        ),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    for (case, sub, expected) in cases {
        let cluster_dir = Path::new("tests/lsf/malformed").join(case).join(sub);
        let args = vec![
            "--cluster".to_owned(),
            format!("bad={}", cluster_dir.display()),
        ];
        let out = dir.path().join(format!("{case}.toml"));
        let output = import(&args, &out);
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{case}: {stderr}");
        let wanted = format!("error: tests/lsf/malformed/{case}/{expected}");
        assert!(
            stderr.lines().any(|line| line.starts_with(&wanted)),
            "{case}: expected `{wanted}` in:\n{stderr}"
        );
        assert_eq!(
            stderr.matches("error:").count(),
            1,
            "{case}: one error: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "{case}: nothing written");
    }
}

#[test]
fn a_misspelt_parameter_is_a_warning_with_did_you_mean_and_an_error_when_strict() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = vec![
        "--cluster".to_owned(),
        "bad=tests/lsf/malformed/misspelt".to_owned(),
    ];
    let expected = "tests/lsf/malformed/misspelt/lsb.queues:3:1: unknown parameter `PRIORTY` in a Queue section (did you mean `PRIORITY`?); ignored";
    let output = import(&args, &dir.path().join("a.toml"));
    succeeded(&output);
    assert!(stderr(&output).contains(&format!("warning: {expected}")));
    let strict = import(
        &[vec!["--strict".to_owned()], args].concat(),
        &dir.path().join("b.toml"),
    );
    assert_eq!(strict.status.code(), Some(2));
    assert!(
        stderr(&strict).contains(&format!("error: {expected}")),
        "{}",
        stderr(&strict)
    );
}

#[test]
fn a_problem_found_after_import_is_reported_at_the_lsf_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cluster = dir.path().join("C1");
    std::fs::create_dir(&cluster).expect("dir");
    std::fs::write(
        cluster.join("lsb.hosts"),
        "Begin Host\nHOST_NAME MXJ\nh1 4\nEnd Host\n",
    )
    .expect("write");
    std::fs::write(
        cluster.join("lsb.queues"),
        "Begin Queue\nQUEUE_NAME = q\nSLOT_POOL = p\nEnd Queue\n",
    )
    .expect("write");
    let args = vec!["--cluster".to_owned(), format!("C1={}", cluster.display())];
    let output = import(&args, &dir.path().join("out.toml"));
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let wanted = format!(
        "error: {}:3:1: a queue in a SLOT_POOL needs its SLOT_SHARE",
        cluster.join("lsb.queues").display()
    );
    assert!(stderr.contains(&wanted), "expected `{wanted}` in {stderr}");
}

#[test]
fn a_scenario_may_not_give_an_lsf_config_cluster_its_own_queues() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("s.toml");
    let config = std::fs::canonicalize("tests/lsf/example1/Cluster2").expect("fixture");
    std::fs::write(
        &scenario,
        format!(
            "[[cluster]]\nname = \"Cluster2\"\nlsf_config = {:?}\n\n[[cluster.queue]]\nname = \"extra\"\n",
            config.display().to_string()
        ),
    )
    .expect("write");
    let output = mcfed(&["validate", scenario.to_str().expect("UTF-8")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("takes its queue from lsf_config; remove this queue"),
        "{}",
        stderr(&output)
    );
}

/// README.md, "Your site's LSF configuration": both commands, as shown
/// (outputs in a temporary directory).
#[test]
fn the_readme_commands_run() {
    let readme = std::fs::read_to_string("README.md").expect("README");
    let dir = tempfile::tempdir().expect("temp dir");
    let federation = dir.path().join("federation.toml");
    let out = dir.path().join("lsf-out");
    let mut ran = 0;
    for line in readme
        .lines()
        .filter(|line| line.starts_with("mcfed import lsf") || line.starts_with("mcfed export lsf"))
    {
        let command = line.split('#').next().unwrap_or_default();
        let args: Vec<String> = command
            .split_whitespace()
            .skip(1)
            .map(|word| match word {
                "federation.toml" => federation.display().to_string(),
                "lsf-out" => out.display().to_string(),
                other => other.to_owned(),
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        succeeded(&mcfed(&args));
        ran += 1;
    }
    assert_eq!(ran, 2, "the README shows an import and an export");
    assert!(
        out.join("Cluster2/lsbatch/Cluster2/configdir/lsb.queues")
            .exists()
    );
}

#[test]
fn the_documented_commands_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let federation = dir.path().join("federation.toml");
    let exported = dir.path().join("lsf-out");
    let (federation, exported) = (
        federation.to_str().expect("UTF-8"),
        exported.to_str().expect("UTF-8"),
    );
    // docs/lsf-import.md, "Importing".
    succeeded(&mcfed(&[
        "import",
        "lsf",
        "--cluster",
        "Cluster1=tests/lsf/example1/Cluster1",
        "--cluster",
        "Cluster2=tests/lsf/example1/Cluster2",
        "--cluster",
        "Cluster3=tests/lsf/example1/Cluster3",
        "--shared",
        "tests/lsf/example1/lsf.shared",
        "-o",
        federation,
    ]));
    succeeded(&mcfed(&["validate", federation]));
    succeeded(&mcfed(&["validate", "tests/lsf/example1/scenario.toml"]));
    succeeded(&mcfed(&[
        "run",
        "tests/lsf/example1/scenario.toml",
        "--check",
    ]));
    // "Exporting".
    succeeded(&mcfed(&[
        "export",
        "lsf",
        "scenarios/forwarding/example1-count-preemptable.toml",
        "-o",
        exported,
    ]));
    let reimported = dir.path().join("again.toml");
    succeeded(&mcfed(&[
        "import",
        "lsf",
        "--strict",
        "--envdir",
        &format!("{exported}/Cluster1"),
        "--envdir",
        &format!("{exported}/Cluster2"),
        "--envdir",
        &format!("{exported}/Cluster3"),
        "-o",
        reimported.to_str().expect("UTF-8"),
    ]));
    // "An LSF tree": the conventional layout, from its LSF_ENVDIR alone.
    let site = dir.path().join("site.toml");
    succeeded(&mcfed(&[
        "import",
        "lsf",
        "--envdir",
        "tests/lsf/envdir/conf",
        "-o",
        site.to_str().expect("UTF-8"),
    ]));
    succeeded(&mcfed(&["validate", site.to_str().expect("UTF-8")]));
}

/// A site in LSF's conventional layout (tests/lsf/envdir: two clusters,
/// lsf.shared with resources, types and models, lsf.conf, lsf.cluster
/// files with host ranges) is imported with `--envdir` alone, or with
/// nothing but `LSF_ENVDIR` set, and runs; exported, it is the same
/// site again.
#[test]
fn a_conventional_lsf_tree_is_imported_from_its_envdir_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("site.toml");
    let output = import(
        &["--envdir".to_owned(), "tests/lsf/envdir/conf".to_owned()],
        &out,
    );
    let stdout = succeeded(&output);
    assert!(
        stdout.contains("2 clusters, 11 hosts, 5 queues, 1 warnings"),
        "{stdout}"
    );
    let warned = stderr(&output);
    assert_eq!(
        warned.trim(),
        "warning: tests/lsf/envdir/conf/lsf.shared:15:25: column ARCHITECTURE is not modelled; ignored"
    );
    let toml = std::fs::read_to_string(&out).expect("written");
    for expected in [
        "name = \"east-gpu5\"",
        "# model = \"XeonE5\"\n# type = \"LINUX86\"\n[[cluster.host]]\nname = \"east01\"",
        "resources = [\"bigmem\"]",
        "# The queue every job lands in unless it asks for another.\n# DESCRIPTION = \"For normal low priority jobs, on the compute hosts but east02.\"\n[[cluster.queue]]",
        "HOSTS = \"east01 east03 east04 east-gpu1 east-gpu2 east-gpu5\"",
        "SNDJOBS_TO = \"recv@west\"",
        "LSB_REQUEUE_TO_BOTTOM = \"Y\"  # lsf.conf:5",
        "# Cluster west from tests/lsf/envdir/conf/lsbatch/west/configdir",
    ] {
        assert!(toml.contains(expected), "no `{expected}` in:\n{toml}");
    }
    let from_env = dir.path().join("env.toml");
    let output = mcfed_env(
        &["import", "lsf", "-o", from_env.to_str().expect("UTF-8")],
        &[("LSF_ENVDIR", "tests/lsf/envdir/conf")],
    );
    succeeded(&output);
    let from_env = std::fs::read_to_string(&from_env).expect("written");
    let body = |text: &str| text.split_once("\n\n").map(|(_, body)| body.to_owned());
    assert_eq!(
        body(&from_env),
        body(&toml),
        "LSF_ENVDIR reads the same site"
    );
    let none = mcfed_env(&["import", "lsf", "-o", "x.toml"], &[("LSF_ENVDIR", "")]);
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(stderr(&none).contains("give --envdir DIR"));
    succeeded(&mcfed(&["validate", out.to_str().expect("UTF-8")]));
    let exported = dir.path().join("out");
    succeeded(&mcfed(&[
        "export",
        "lsf",
        out.to_str().expect("UTF-8"),
        "-o",
        exported.to_str().expect("UTF-8"),
    ]));
    let again = dir.path().join("again.toml");
    let output = import(
        &[
            "--envdir".to_owned(),
            exported.join("east").display().to_string(),
            "--envdir".to_owned(),
            exported.join("west").display().to_string(),
        ],
        &again,
    );
    succeeded(&output);
    let again = std::fs::read_to_string(&again).expect("written");
    assert_eq!(
        mcfed_lsf::notes::notes(&again),
        mcfed_lsf::notes::notes(&toml),
        "descriptions, comments, models and types come back"
    );
}

/// A scenario around the template site (`lsf_config`) runs with what was
/// imported: lsb.resources' `short_cap` holds the `short` queue to 6
/// slots, and only hostA's 4 GPUs (lsf.cluster.site's `ngpus`) serve GPU
/// jobs, one at a time (alice's: `big_jobs` would hold others' jobs on
/// hostA, where erin's run).
#[test]
fn a_scenario_runs_an_imported_site_with_its_limits_and_gpus() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("site.toml");
    let config = std::fs::canonicalize("tests/lsf/template/site").expect("fixture");
    std::fs::write(
        &scenario,
        format!(
            r#"end = "1h"

[[cluster]]
name = "site"
lsf_config = {:?}

[[cluster.job]]
name = "short"
queue = "short"
user = "erin"
count = 10
run_time = "2h"

[[cluster.job]]
name = "gpu"
queue = "low"
user = "alice"
count = 2
gpus = 4
run_time = "2h"

[[expect]]
at = "0s"
cluster = "site"
queue = "short"
running_slots = 6
pending_slots = 4

[[expect]]
job = "short-7"
at = "10m"
state = "PEND"
reason_contains = "resource limit"

[[expect]]
job = "gpu-1"
at = "10m"
state = "RUN"

[[expect]]
job = "gpu-2"
at = "10m"
state = "PEND"
reason_contains = "GPUs"
"#,
            config.display().to_string()
        ),
    )
    .expect("write");
    let stdout = succeeded(&mcfed(&[
        "run",
        scenario.to_str().expect("UTF-8"),
        "--check",
    ]));
    assert!(stdout.contains("4 of 4 expectations held"), "{stdout}");
}
