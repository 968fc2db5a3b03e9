//! Round trips through LSF configuration, as properties over generated
//! federations: scenario → `export` → `import` gives the same clusters
//! (the model a run is built from), and import → export → import is
//! stable (the same clusters, and the same files written again).

use std::path::Path;

use mcfed_lsf::export::{ExportCluster, ExportedFile, export};
use mcfed_lsf::{ClusterSource, ImportOptions};
use mcfed_scenario::Scenario;
use proptest::prelude::*;

/// Choices drawn from proptest's bytes, so failures shrink.
struct Draw<'a>(&'a [u8], usize);

impl Draw<'_> {
    fn below(&mut self, n: usize) -> usize {
        let byte = self.0.get(self.1).copied().unwrap_or(0);
        self.1 += 1;
        usize::from(byte) % n.max(1)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn range(&mut self, low: u32, high: u32) -> u32 {
        let span = usize::try_from(high - low + 1).unwrap_or(1);
        low + u32::try_from(self.below(span)).unwrap_or(0)
    }
}

fn maybe(draw: &mut Draw<'_>, line: impl FnOnce(&mut Draw<'_>) -> String) -> String {
    if draw.chance(40) {
        line(draw)
    } else {
        String::new()
    }
}

fn factors(draw: &mut Draw<'_>) -> String {
    let mut text = String::new();
    for name in ["CPU_TIME_FACTOR", "RUN_JOB_FACTOR", "HIST_HOURS"] {
        if draw.chance(30) {
            let value = [0.1, 0.7, 2.5, 3.0, 10.0][draw.below(5)];
            text.push_str(&format!("{name} = {value:?}\n"));
        }
    }
    text
}

fn guard(draw: &mut Draw<'_>, name: &str) -> String {
    match draw.below(4) {
        0 => format!("{name} = \"{}m\"\n", draw.range(1, 120)),
        1 => format!("{name} = \"{}%\"\n", draw.range(1, 100)),
        _ => String::new(),
    }
}

/// One execution cluster `C{index}`, receiving from `S`.
fn execution_cluster(draw: &mut Draw<'_>, index: usize) -> String {
    let mut text = format!("\n[[cluster]]\nname = \"C{index}\"\n\n[cluster.params]\n");
    text.push_str(&format!(
        "MC_PLUGIN_UPDATE_INTERVAL = \"{}s\"\n",
        draw.range(1, 120)
    ));
    text.push_str(&maybe(draw, |draw| {
        format!("MBD_SLEEP_TIME = \"{}s\"\n", draw.range(1, 90))
    }));
    text.push_str(&factors(draw));
    text.push_str(&maybe(draw, |_| {
        "PREEMPT_FOR = \"GROUP_MAX LEAST_RUN_TIME\"\n".to_owned()
    }));
    text.push_str(&guard(draw, "NO_PREEMPT_FINISH_TIME"));
    if draw.chance(20) {
        text.push_str(&format!(
            "FAIRSHARE_ADJUSTMENT_PLUGIN = \"memory\"\nFAIRSHARE_ADJUSTMENT_THRESHOLD = {:?}\n",
            [0.5, 1.0, 1.5][draw.below(3)]
        ));
    }
    let mut entries = Vec::new();
    for letter in ["a", "b", "c"].iter().take(1 + draw.below(3)) {
        let name = format!("c{index}{letter}");
        text.push_str(&format!(
            "\n[[cluster.host]]\nname = \"{name}\"\nMXJ = {}\n",
            draw.range(1, 8)
        ));
        text.push_str(&maybe(draw, |draw| {
            format!("count = {}\n", draw.range(1, 3))
        }));
        text.push_str(&maybe(draw, |draw| {
            format!("ncpus = {}\n", draw.range(1, 16))
        }));
        text.push_str(&maybe(draw, |draw| {
            format!("\"JL/U\" = {}\n", draw.range(1, 4))
        }));
        text.push_str(&maybe(draw, |draw| {
            format!("memory_mb = {}\n", draw.range(512, 65536))
        }));
        text.push_str(&maybe(draw, |_| "resources = [\"bigmem\"]\n".to_owned()));
        if draw.chance(10) {
            text.push_str("closed = true\n");
        }
        entries.push(name);
    }
    let queues = 1 + draw.below(3);
    for queue in 0..queues {
        text.push_str(&format!(
            "\n[[cluster.queue]]\nname = \"q{queue}\"\nPRIORITY = {}\n",
            draw.range(1, 99)
        ));
        if queue == 0 {
            let from = if draw.chance(50) { "S" } else { "allclusters" };
            text.push_str(&format!("RCVJOBS_FROM = \"{from}\"\n"));
            match draw.below(3) {
                0 => text.push_str(&format!("IMPT_JOBBKLG = {}\n", draw.range(0, 500))),
                1 => text.push_str("IMPT_JOBBKLG = \"infinit\"\n"),
                _ => {}
            }
        }
        let other = (queue + 1) % queues;
        let preemption = match draw.below(5) {
            0 => "PREEMPTIVE".to_owned(),
            1 => "PREEMPTABLE".to_owned(),
            2 if other != queue => format!("PREEMPTIVE[q{other}+{}]", draw.range(1, 5)),
            _ => String::new(),
        };
        if !preemption.is_empty() {
            text.push_str(&format!("PREEMPTION = \"{preemption}\"\n"));
        }
        for limit in ["QJOB_LIMIT", "UJOB_LIMIT", "HJOB_LIMIT"] {
            text.push_str(&maybe(draw, |draw| {
                format!("{limit} = {}\n", draw.range(1, 50))
            }));
        }
        if draw.chance(30) {
            text.push_str("FAIRSHARE = \"USER_SHARES[[alice, 3] [bob, 2] [default, 1]]\"\n");
        }
        text.push_str(&factors(draw));
        text.push_str(&maybe(draw, |draw| {
            format!(
                "SLOT_RESERVE = \"MAX_RESERVE_TIME[{}]\"\n",
                draw.range(1, 5)
            )
        }));
        text.push_str(&maybe(draw, |_| "BACKFILL = \"Y\"\n".to_owned()));
        text.push_str(&guard(draw, "NO_PREEMPT_RUN_TIME"));
        if draw.chance(30) {
            let hosts: Vec<&str> = entries
                .iter()
                .map(String::as_str)
                .take(1 + draw.below(entries.len()))
                .collect();
            text.push_str(&format!("HOSTS = \"{}\"\n", hosts.join(" ")));
        }
    }
    if draw.chance(50) {
        text.push_str("\n[[cluster.user_group]]\nname = \"g1\"\nGROUP_MEMBER = \"alice bob\"\n");
        text.push_str(&format!(
            "\n[[cluster.user]]\nname = \"g1\"\nMAX_JOBS = {}\n",
            draw.range(1, 40)
        ));
    }
    for user in ["alice", "default"] {
        if draw.chance(40) {
            text.push_str(&format!(
                "\n[[cluster.user]]\nname = \"{user}\"\nMAX_JOBS = {}\n",
                draw.range(1, 40)
            ));
            text.push_str(&maybe(draw, |_| "\"JL/P\" = 1.5\n".to_owned()));
        }
    }
    text
}

/// A federation: a submission cluster `S` forwarding to one or two
/// execution clusters.
fn federation(bytes: &[u8]) -> String {
    let mut draw = Draw(bytes, 0);
    let executions = 1 + draw.below(2);
    let modes = [
        "COUNT_PREEMPTABLE",
        "RESOURCE_ONLY",
        "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY",
        "COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY PENDING_WHEN_NOSLOTS",
    ];
    let sleep = draw.range(10, 60);
    let mut text = format!(
        "[[cluster]]\nname = \"S\"\n\n[cluster.params]\nMC_PLUGIN_SCHEDULE_ENHANCE = \"{}\"\nMBD_SLEEP_TIME = \"{sleep}s\"\n",
        modes[draw.below(modes.len())]
    );
    text.push_str(&maybe(&mut draw, |draw| {
        format!("MAX_FORWARDS = {}\n", draw.range(1, 20))
    }));
    let targets: Vec<String> = (1..=executions)
        .map(|index| format!("q0@C{index}"))
        .collect();
    text.push_str(&format!(
        "\n[[cluster.queue]]\nname = \"send\"\nPRIORITY = 30\nSNDJOBS_TO = \"{}\"\n",
        targets.join(" ")
    ));
    if draw.chance(50) {
        text.push_str(&format!(
            "MAX_RSCHED_TIME = \"{}s\"\n",
            sleep * draw.range(1, 10)
        ));
    }
    for index in 1..=executions {
        text.push_str(&execution_cluster(&mut draw, index));
    }
    text
}

fn exported(scenario: &Scenario) -> Vec<ExportedFile> {
    let clusters: Vec<ExportCluster<'_>> = scenario
        .clusters
        .iter()
        .map(|spec| ExportCluster {
            config: &spec.config,
            forwarder: spec.forwarder.as_ref(),
        })
        .collect();
    export(&clusters).expect("exportable")
}

/// Writes `files` under `dir`, imports every cluster and validates the
/// federation.
fn reimported(files: &[ExportedFile], scenario: &Scenario, dir: &Path) -> Scenario {
    for file in files {
        let path = dir.join(&file.path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dir");
        std::fs::write(&path, &file.text).expect("write");
    }
    let sources: Vec<ClusterSource> = scenario
        .clusters
        .iter()
        .map(|spec| ClusterSource {
            name: spec.config.name.to_string(),
            dir: dir.join(spec.config.name.as_str()),
        })
        .collect();
    let options = ImportOptions {
        shared: None,
        strict: true,
    };
    let federation =
        mcfed_lsf::import(&sources, &options).unwrap_or_else(|error| panic!("imports:\n{error}"));
    let text = mcfed_lsf::render::federation(&federation, &[]).text;
    mcfed_scenario::parse("imported.toml", &text)
        .unwrap_or_else(|error| panic!("valid:\n{error}\n{text}"))
}

fn assert_same_clusters(left: &Scenario, right: &Scenario) -> Result<(), TestCaseError> {
    prop_assert_eq!(left.clusters.len(), right.clusters.len());
    for (a, b) in left.clusters.iter().zip(&right.clusters) {
        prop_assert_eq!(&a.config, &b.config);
        prop_assert_eq!(&a.forwarder, &b.forwarder);
        prop_assert_eq!(&a.subscribers, &b.subscribers);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_global_rejects: 4096, ..ProptestConfig::default() })]

    #[test]
    fn scenario_export_import_gives_the_same_clusters(bytes in prop::collection::vec(any::<u8>(), 256)) {
        let text = federation(&bytes);
        let scenario = mcfed_scenario::parse("generated.toml", &text);
        prop_assume!(scenario.is_ok());
        let scenario = scenario.expect("checked");
        let dir = tempfile::tempdir().expect("temp dir");
        let again = reimported(&exported(&scenario), &scenario, dir.path());
        assert_same_clusters(&scenario, &again)?;
    }

    #[test]
    fn import_export_import_is_stable(bytes in prop::collection::vec(any::<u8>(), 256)) {
        let scenario = mcfed_scenario::parse("generated.toml", &federation(&bytes));
        prop_assume!(scenario.is_ok());
        let scenario = scenario.expect("checked");
        let first_dir = tempfile::tempdir().expect("temp dir");
        let first_files = exported(&scenario);
        let imported = reimported(&first_files, &scenario, first_dir.path());
        let second_files = exported(&imported);
        prop_assert_eq!(&first_files, &second_files);
        let second_dir = tempfile::tempdir().expect("temp dir");
        let again = reimported(&second_files, &imported, second_dir.path());
        assert_same_clusters(&imported, &again)?;
    }
}

/// Most generated federations are valid, so the properties test
/// something.
#[test]
fn most_generated_federations_are_valid() {
    let mut valid = 0;
    for seed in 0u8..100 {
        let bytes: Vec<u8> = (0..256u16)
            .map(|i| {
                (i as u8)
                    .wrapping_mul(31)
                    .wrapping_add(seed.wrapping_mul(17))
            })
            .collect();
        if mcfed_scenario::parse("generated.toml", &federation(&bytes)).is_ok() {
            valid += 1;
        }
    }
    assert!(
        valid >= 50,
        "only {valid} of 100 generated federations are valid"
    );
}

/// The fixtures: import → export → import gives the same clusters.
#[test]
fn fixtures_import_export_import_to_the_same_clusters() {
    let sites: [&[(&str, &str)]; 2] = [
        &[
            ("Cluster1", "tests/lsf/example2/Cluster1"),
            ("Cluster2", "tests/lsf/example2/Cluster2"),
            ("Cluster3", "tests/lsf/example2/Cluster3"),
        ],
        &[("site", "tests/lsf/template/site")],
    ];
    for site in sites {
        let sources: Vec<ClusterSource> = site
            .iter()
            .map(|(name, dir)| ClusterSource {
                name: (*name).to_owned(),
                dir: dir.into(),
            })
            .collect();
        let federation = mcfed_lsf::import(&sources, &ImportOptions::default()).expect("imports");
        let text = mcfed_lsf::render::federation(&federation, &[]).text;
        let first = mcfed_scenario::parse("first.toml", &text).expect("valid");
        let dir = tempfile::tempdir().expect("temp dir");
        let again = reimported(&exported(&first), &first, dir.path());
        assert_same_clusters(&first, &again).expect("the same clusters");
    }
}
