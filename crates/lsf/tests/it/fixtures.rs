//! The LSF trees under the workspace's `tests/lsf` imported through the
//! library (what `mcfed import lsf` calls): the seed's four forwarding
//! examples written as lsb.* files are the TOML examples' clusters; a site
//! in the style of the stock OpenLava/LSF templates imports with exactly
//! its warnings (errors under `strict`); each malformed configuration is
//! one error at its file, line and column. What the binary adds (exit
//! codes, nothing written on an error, `--strict`, LSF_ENVDIR) is tested
//! with the binary.

use std::path::Path;

use mcfed_lsf::{ClusterSource, Diagnostic, FederationDoc, ImportOptions, import};

use crate::fixture;

const EXAMPLES: [(&str, &str); 4] = [
    ("example1", "example1-count-preemptable"),
    ("example2", "example2-preemptable-queue-priority"),
    ("example3", "example3-high-queue-priority"),
    ("example4", "example4-preemptable-slots"),
];

/// The clusters of fixture `dir` given as `NAME=DIR` each.
fn sources(dir: &str, names: &[&str]) -> Vec<ClusterSource> {
    names
        .iter()
        .map(|name| ClusterSource {
            name: (*name).to_owned(),
            dir: fixture(&format!("{dir}/{name}")),
        })
        .collect()
}

/// `diagnostic` as `mcfed` prints it, the fixtures' paths from the
/// workspace's root (`tests/lsf/malformed/...`), as the binary's tests
/// give them.
fn shown(diagnostic: &Diagnostic) -> String {
    let malformed = fixture("malformed").display().to_string();
    diagnostic
        .to_string()
        .replace(&malformed, "tests/lsf/malformed")
}

/// The federation as the TOML `mcfed import lsf` writes (without its
/// header comment), which must be a valid scenario.
fn rendered(doc: &FederationDoc) -> (String, mcfed_scenario::Scenario) {
    let text = mcfed_lsf::render::federation(doc, &[]).text;
    let scenario = mcfed_scenario::parse("imported.toml", &text)
        .unwrap_or_else(|error| panic!("the import validates: {error}\n{text}"));
    (text, scenario)
}

#[test]
fn imported_examples_are_the_toml_examples_clusters_and_validate_unchanged() {
    for (example, toml) in EXAMPLES {
        let doc = import(
            &sources(example, &["Cluster1", "Cluster2", "Cluster3"]),
            &ImportOptions::default(),
        )
        .unwrap_or_else(|error| panic!("{example} imports:\n{error}"));
        let hosts: usize = doc.clusters.iter().map(|cluster| cluster.hosts.len()).sum();
        let queues: usize = doc
            .clusters
            .iter()
            .map(|cluster| cluster.queues.len())
            .sum();
        assert_eq!(
            (doc.clusters.len(), hosts, queues),
            (3, 20, 5),
            "{example}: 3 clusters, 20 hosts, 5 queues"
        );
        let (written, imported) = rendered(&doc);
        let original = mcfed_scenario::load(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../../scenarios/forwarding/{toml}.toml")),
        )
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
const TEMPLATE_WARNINGS: [&str; 25] = [
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
    "site/lsb.resources:56: unknown parameter `MAX_SLOTS` in a ResourceReservation section; ignored",
];

/// Diagnostics as `file:line: message`, the file relative to
/// `tests/lsf/template/`.
fn listed(diagnostics: &[Diagnostic]) -> Vec<String> {
    let template = format!("{}/", fixture("template").display());
    diagnostics
        .iter()
        .map(|diagnostic| {
            let at = diagnostic.at.as_ref().expect("located");
            let file = at.file.strip_prefix(&template).unwrap_or(&at.file);
            format!("{file}:{}: {}", at.line, diagnostic.message)
        })
        .collect()
}

#[test]
fn the_template_site_imports_with_exactly_its_warnings() {
    let site = sources("template", &["site"]);
    let doc = import(&site, &ImportOptions::default())
        .unwrap_or_else(|error| panic!("the template imports:\n{error}"));
    assert_eq!(listed(&doc.warnings), TEMPLATE_WARNINGS);
    let (written, _) = rendered(&doc);
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
        "[[cluster.reservation_policy]]\nNAME = \"dayPolicy\"  # lsb.resources:46\nUSERS = \"alice bob\"  # lsb.resources:47\nHOSTS = \"hostA hostC\"  # lsb.resources:48\nTIME_WINDOW = \"8:00-18:00\"  # lsb.resources:49",
        "NAME = \"lateShift\"  # lsb.resources:53\nUSERS = \"all ~carol\"  # lsb.resources:54\nTIME_WINDOW = \"20:00-8:00\"  # lsb.resources:55",
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

    let strict = ImportOptions {
        strict: true,
        ..ImportOptions::default()
    };
    let refused = import(&site, &strict).expect_err("strict refuses the warnings");
    assert_eq!(listed(&refused.errors), TEMPLATE_WARNINGS);
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
    for (case, sub, expected) in cases {
        let mut dir = fixture(&format!("malformed/{case}"));
        if !sub.is_empty() {
            dir.push(sub);
        }
        let source = ClusterSource {
            name: "bad".to_owned(),
            dir,
        };
        let error =
            import(&[source], &ImportOptions::default()).expect_err(&format!("{case} is refused"));
        let errors: Vec<String> = error.errors.iter().map(shown).collect();
        let wanted = format!("error: tests/lsf/malformed/{case}/{expected}");
        assert_eq!(errors.len(), 1, "{case}: one error: {errors:#?}");
        assert!(
            errors[0].starts_with(&wanted),
            "{case}: expected `{wanted}`, found `{}`",
            errors[0]
        );
    }
}
