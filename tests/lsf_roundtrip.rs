//! Round trips through LSF configuration, as properties over generated
//! federations (`lsf_roundtrip/generate.rs`: every part of a cluster mcfed
//! models, slot pools, group shares, limits, RUNLIMIT and RUNTIME and GPUs
//! included): scenario → `export` → `import` gives the same clusters (the
//! model a run is built from), and import → export → import is stable
//! (the same clusters, and the same files written again).

use std::path::Path;

use mcfed_lsf::export::{ExportCluster, ExportedFile, export};
use mcfed_lsf::{ClusterSource, ImportOptions};
use mcfed_scenario::Scenario;
use proptest::prelude::*;

#[path = "lsf_roundtrip/generate.rs"]
mod generate;
use generate::federation;

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
    fn scenario_export_import_gives_the_same_clusters(bytes in prop::collection::vec(any::<u8>(), 512)) {
        let text = federation(&bytes);
        let scenario = mcfed_scenario::parse("generated.toml", &text);
        prop_assume!(scenario.is_ok());
        let scenario = scenario.expect("checked");
        let dir = tempfile::tempdir().expect("temp dir");
        let again = reimported(&exported(&scenario), &scenario, dir.path());
        assert_same_clusters(&scenario, &again)?;
    }

    #[test]
    fn import_export_import_is_stable(bytes in prop::collection::vec(any::<u8>(), 512)) {
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

/// `count` byte strings from a fixed xorshift generator.
fn byte_strings(count: u64) -> impl Iterator<Item = Vec<u8>> {
    (1..=count).map(|seed| {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..512)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state.to_le_bytes()[0]
            })
            .collect()
    })
}

/// Most generated federations are valid, so the properties test
/// something; and together they reach every feature the generators draw,
/// so the properties cover them.
#[test]
fn most_generated_federations_are_valid_and_reach_every_feature() {
    let valid: Vec<Scenario> = byte_strings(100)
        .filter_map(|bytes| mcfed_scenario::parse("generated.toml", &federation(&bytes)).ok())
        .collect();
    if std::env::var_os("MCFED_SHOW_INVALID").is_some() {
        for bytes in byte_strings(100) {
            if let Err(error) = mcfed_scenario::parse("generated.toml", &federation(&bytes)) {
                eprintln!("{error}");
            }
        }
        eprintln!("{} of 100 valid", valid.len());
    }
    assert!(
        valid.len() >= 50,
        "only {} of 100 generated federations are valid",
        valid.len()
    );
    let configs: Vec<&mcfed_cluster::ClusterConfig> = valid
        .iter()
        .flat_map(|scenario| scenario.clusters.iter().map(|spec| &spec.config))
        .collect();
    let queues = || configs.iter().flat_map(|config| config.queues.iter());
    let targets = || {
        queues()
            .filter_map(|queue| queue.fairshare.as_ref())
            .flat_map(|shares| shares.entries.iter().map(|entry| &entry.target))
    };
    use mcfed_cluster::fairshare::ShareTarget;
    let features: [(&str, bool); 17] = [
        (
            "GPUs",
            configs.iter().any(|c| c.hosts.iter().any(|h| h.gpus > 0)),
        ),
        (
            "a JOBS limit",
            configs
                .iter()
                .any(|c| c.limits.iter().any(|l| l.jobs.is_some())),
        ),
        (
            "a PER_HOST limit",
            configs
                .iter()
                .any(|c| c.limits.iter().any(|l| l.per_host.is_some())),
        ),
        (
            "a limit with exclusions",
            configs.iter().any(|c| {
                c.limits
                    .iter()
                    .any(|l| l.users.as_ref().is_some_and(|u| !u.excluded.is_empty()))
            }),
        ),
        (
            "group USER_SHARES",
            configs
                .iter()
                .any(|c| c.user_groups.iter().any(|g| g.user_shares.is_some())),
        ),
        (
            "a group of `all`",
            configs.iter().any(|c| {
                c.user_groups
                    .iter()
                    .any(|g| g.members.iter().any(|m| m == "all"))
            }),
        ),
        ("`others`", targets().any(|t| *t == ShareTarget::Others)),
        (
            "`group@`",
            targets().any(|t| matches!(t, ShareTarget::Members(_))),
        ),
        (
            "a group's shares",
            targets().any(|t| matches!(t, ShareTarget::Name(name) if name.starts_with('g'))),
        ),
        (
            "a slot pool",
            queues().any(|q| q.slot_pool.as_ref().is_some_and(|p| p.max_slots.is_some())),
        ),
        ("RUNLIMIT", queues().any(|q| q.run_limit.is_some())),
        ("RUNTIME", queues().any(|q| q.run_estimate.is_some())),
        (
            "CLEAN_PERIOD and MAX_USER_PRIORITY",
            configs
                .iter()
                .any(|c| c.params.clean_period.is_some() && c.params.max_user_priority.is_some()),
        ),
        (
            "lsf.conf's LSB_REQUEUE_TO_BOTTOM and LSB_MIG2PEND",
            configs
                .iter()
                .any(|c| c.params.requeue_to_bottom && c.params.mig2pend),
        ),
        (
            "the switches",
            queues().any(|q| q.fairshare_factors.run_time_decay.is_some())
                && configs
                    .iter()
                    .any(|c| c.params.fairshare_factors.gpu_hist_run_time.is_some()),
        ),
        (
            "COMMITTED_RUN_TIME_FACTOR",
            queues().any(|q| q.fairshare_factors.committed_run_time.is_some()),
        ),
        (
            "a fairshare send queue with FWD_JOB_FACTOR",
            queues().any(|q| {
                !q.send_to.is_empty()
                    && q.fairshare.is_some()
                    && q.fairshare_factors.fwd_job.is_some()
            }),
        ),
    ];
    for (feature, reached) in features {
        assert!(reached, "no valid generated federation has {feature}");
    }
    assert!(
        configs
            .iter()
            .any(|c| c.update_interval.is_none()
                && c.queues.iter().any(|q| q.receive_from.is_some())),
        "no execution cluster without MC_PLUGIN_UPDATE_INTERVAL"
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
