//! End-to-end: `mcfed import lsf`, `mcfed export lsf` and scenarios with
//! `lsf_config` on the fixtures of `tests/lsf/`: the seed's four
//! forwarding examples written as lsb.* files, a site in the style of the
//! stock OpenLava/LSF templates, and malformed configurations. What the
//! library imports from them (clusters, warnings, errors at file, line and
//! column) is tested with the library (crates/lsf/tests/it/fixtures.rs);
//! here, what the binary adds: exit statuses, files written or not,
//! `--strict`, `--envdir` and LSF_ENVDIR, runs of the imported scenarios.

use std::path::Path;
use std::process::Output;

use crate::common;
use common::{Mcfed, mcfed, refused, stderr, succeeded};

const EXAMPLES: [(&str, &str); 4] = [
    ("example1", "example1-count-preemptable"),
    ("example2", "example2-preemptable-queue-priority"),
    ("example3", "example3-high-queue-priority"),
    ("example4", "example4-preemptable-slots"),
];

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

/// What only the binary shows of an import the library refuses (the
/// errors and warnings themselves are tested with the library, in
/// crates/lsf/tests/it/fixtures.rs): exit status 2, one `error:` line per
/// error naming the file, line and column, no panic, nothing written; and
/// `--strict` prints each warning as an error and writes nothing.
#[test]
fn a_refused_import_exits_2_with_its_errors_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (case, sub) in [
        ("unclosed-section", ""),
        ("bad-number", ""),
        ("unknown-preempt-queue", ""),
        ("sndjobs-not-in-shared", "bad"),
        ("too-many-values", ""),
        ("unclosed-list", ""),
        ("missing-include", ""),
        ("unlimited-slots", ""),
        ("bad-lsf-conf", ""),
    ] {
        let cluster_dir = Path::new("tests/lsf/malformed").join(case).join(sub);
        let args = vec![
            "--cluster".to_owned(),
            format!("bad={}", cluster_dir.display()),
        ];
        let out = dir.path().join(format!("{case}.toml"));
        let stderr = refused(&import(&args, &out), 2);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|line| line.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{case}: one error: {stderr}");
        let place = format!("error: tests/lsf/malformed/{case}/");
        // `FILE:LINE:COLUMN: message`
        let line_column: Vec<&str> = errors[0]
            .strip_prefix(&place)
            .and_then(|rest| rest.split_once(": "))
            .map(|(at, _)| at.rsplitn(3, ':').take(2).collect())
            .unwrap_or_default();
        assert!(
            line_column.len() == 2 && line_column.iter().all(|n| n.parse::<u32>().is_ok()),
            "{case}: at file:line:column: {}",
            errors[0]
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "{case}: nothing written");
    }

    let site = vec![
        "--cluster".to_owned(),
        "site=tests/lsf/template/site".to_owned(),
    ];
    let lenient = import(&site, &dir.path().join("site.toml"));
    let warnings: Vec<String> = stderr(&lenient)
        .lines()
        .filter_map(|line| line.strip_prefix("warning: "))
        .map(str::to_owned)
        .collect();
    succeeded(&lenient);
    assert!(!warnings.is_empty(), "the template site has warnings");
    let strict_out = dir.path().join("strict.toml");
    let strict = import(&[vec!["--strict".to_owned()], site].concat(), &strict_out);
    let errors: Vec<String> = refused(&strict, 2)
        .lines()
        .filter_map(|line| line.strip_prefix("error: "))
        .map(str::to_owned)
        .collect();
    assert_eq!(errors, warnings, "--strict makes each warning an error");
    assert!(!strict_out.exists(), "nothing written");
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
        "name = \"east01\"  # lsf.cluster.east:6\nMXJ = 4  # lsb.hosts:3\ntype = \"LINUX86\"  # lsf.cluster.east:6\nmodel = \"XeonE5\"",
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
    let stdout = succeeded(&mcfed(&[
        "run",
        "tests/lsf/template/scenario.toml",
        "--check",
    ]));
    assert!(stdout.contains("4 of 4 expectations held"), "{stdout}");
}
