//! Round trips through LSF configuration, as properties over generated
//! federations (`roundtrip/generate.rs`: every part of a cluster mcfed
//! models, slot pools, group shares, limits, RUNLIMIT and RUNTIME and GPUs
//! included, and what the TOML keeps as comments — queues' DESCRIPTIONs
//! and comment lines, hosts' models and types): scenario → `export` →
//! `import` gives the same clusters (the model a run is built from);
//! import → export → import is stable; and LSF → TOML → LSF → TOML is a
//! fixed point: the same files written again, the same TOML read back.
//! Each export is one LSF_ENVDIR per cluster, imported with `--envdir`.

use std::collections::BTreeMap;
use std::path::Path;

use mcfed_lsf::export::{ExportCluster, ExportedFile, export};
use mcfed_lsf::notes::{ClusterNotes, notes};
use mcfed_lsf::{ClusterSource, ImportOptions};
use mcfed_scenario::Scenario;
use proptest::prelude::*;

mod generate;
use generate::{federation, with_notes};

/// The files of `scenario` (with the notes of its TOML) as written under
/// `root`.
fn exported(
    scenario: &Scenario,
    notes: &BTreeMap<String, ClusterNotes>,
    root: &Path,
) -> Vec<ExportedFile> {
    let clusters: Vec<ExportCluster<'_>> = scenario
        .clusters
        .iter()
        .map(|spec| ExportCluster {
            config: &spec.config,
            forwarder: spec.forwarder.as_ref(),
            notes: notes.get(spec.config.name.as_str()),
        })
        .collect();
    export(&clusters, root).expect("exportable")
}

/// Writes `files` under `dir`, imports every cluster's LSF_ENVDIR
/// (strictly: not one warning) and renders the federation's TOML.
fn imported_toml(files: &[ExportedFile], scenario: &Scenario, dir: &Path) -> String {
    for file in files {
        let path = dir.join(&file.path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dir");
        std::fs::write(&path, &file.text).expect("write");
    }
    let options = ImportOptions {
        envdirs: scenario
            .clusters
            .iter()
            .map(|spec| dir.join(spec.config.name.as_str()))
            .collect(),
        shared: None,
        strict: true,
    };
    let federation =
        mcfed_lsf::import(&[], &options).unwrap_or_else(|error| panic!("imports:\n{error}"));
    mcfed_lsf::render::federation(&federation, &[]).text
}

fn parsed(text: &str) -> Scenario {
    mcfed_scenario::parse("imported.toml", text)
        .unwrap_or_else(|error| panic!("valid:\n{error}\n{text}"))
}

/// Writes `files` under `dir`, imports them and validates the federation.
fn reimported(files: &[ExportedFile], scenario: &Scenario, dir: &Path) -> Scenario {
    parsed(&imported_toml(files, scenario, dir))
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

/// `text` with the directory `dir` written as `DIR`.
fn without(text: &str, dir: &Path) -> String {
    text.replace(&dir.display().to_string(), "DIR")
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
        let files = exported(&scenario, &BTreeMap::new(), dir.path());
        let again = reimported(&files, &scenario, dir.path());
        assert_same_clusters(&scenario, &again)?;
    }

    #[test]
    fn import_export_import_is_stable(bytes in prop::collection::vec(any::<u8>(), 512)) {
        let scenario = mcfed_scenario::parse("generated.toml", &federation(&bytes));
        prop_assume!(scenario.is_ok());
        let scenario = scenario.expect("checked");
        let first_dir = tempfile::tempdir().expect("temp dir");
        let first_files = exported(&scenario, &BTreeMap::new(), first_dir.path());
        let imported = reimported(&first_files, &scenario, first_dir.path());
        let second_files = exported(&imported, &BTreeMap::new(), first_dir.path());
        prop_assert_eq!(&first_files, &second_files);
        let second_dir = tempfile::tempdir().expect("temp dir");
        let second_files = exported(&imported, &BTreeMap::new(), second_dir.path());
        let again = reimported(&second_files, &imported, second_dir.path());
        assert_same_clusters(&imported, &again)?;
    }

    /// LSF → TOML → LSF → TOML: a site's files (those a generated TOML
    /// exports to), imported, exported and imported again give the same
    /// TOML — the same clusters, DESCRIPTIONs, comments, models and types
    /// — but for the directory it was read from, and the files exported
    /// from it are the same; the site's own files come back as they were
    /// but for a DESCRIPTION holding both a `"` and a `#` (written with `'`).
    #[test]
    fn lsf_toml_lsf_toml_is_a_fixed_point(
        bytes in prop::collection::vec(any::<u8>(), 512),
        note_bytes in prop::collection::vec(any::<u8>(), 128),
    ) {
        let text = with_notes(&federation(&bytes), &note_bytes);
        let scenario = mcfed_scenario::parse("generated.toml", &text);
        prop_assume!(scenario.is_ok());
        let scenario = scenario.expect("checked");
        let first = tempfile::tempdir().expect("temp dir");
        let site = exported(&scenario, &notes(&text), first.path());
        let toml = imported_toml(&site, &scenario, first.path());
        let lsf = exported(&parsed(&toml), &notes(&toml), first.path());
        if !text.contains("a hash") {
            prop_assert_eq!(&site, &lsf);
        }
        let second = tempfile::tempdir().expect("temp dir");
        let lsf_elsewhere = exported(&parsed(&toml), &notes(&toml), second.path());
        let toml_again = imported_toml(&lsf_elsewhere, &scenario, second.path());
        prop_assert_eq!(without(&toml, first.path()), without(&toml_again, second.path()));
        prop_assert_eq!(notes(&toml), notes(&toml_again));
        assert_same_clusters(&parsed(&toml), &parsed(&toml_again))?;
        let lsf_again = exported(&parsed(&toml_again), &notes(&toml_again), first.path());
        prop_assert_eq!(&lsf, &lsf_again);
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

/// The fixtures, LSF trees as sites write them (the conventional layout
/// with host ranges and models, the seed's example, the template site):
/// LSF → TOML → LSF → TOML gives the same clusters, DESCRIPTIONs,
/// comments, models and types, and the LSF files written the second time
/// are the first ones.
#[test]
fn fixtures_lsf_toml_lsf_toml_is_a_fixed_point() {
    let envdir = ImportOptions {
        envdirs: vec![crate::fixture("envdir/conf")],
        ..ImportOptions::default()
    };
    let example: Vec<ClusterSource> = ["Cluster1", "Cluster2", "Cluster3"]
        .iter()
        .map(|name| ClusterSource {
            name: (*name).to_owned(),
            dir: crate::fixture(&format!("example2/{name}")),
        })
        .collect();
    let template = vec![ClusterSource {
        name: "site".to_owned(),
        dir: crate::fixture("template/site"),
    }];
    let sites = [
        (envdir, Vec::new()),
        (ImportOptions::default(), example),
        (ImportOptions::default(), template),
    ];
    for (options, sources) in sites {
        let federation = mcfed_lsf::import(&sources, &options).expect("imports");
        let toml = mcfed_lsf::render::federation(&federation, &[]).text;
        let first = parsed(&toml);
        let dir = tempfile::tempdir().expect("temp dir");
        let lsf = exported(&first, &notes(&toml), dir.path());
        let toml_again = imported_toml_lenient(&lsf, &first, dir.path());
        let again = parsed(&toml_again);
        assert_same_clusters(&first, &again).expect("the same clusters");
        assert_eq!(notes(&toml), notes(&toml_again));
        assert!(
            notes(&toml)
                .values()
                .any(|cluster| !cluster.queues.is_empty() || !cluster.hosts.is_empty()),
            "the fixture keeps something"
        );
        let lsf_again = exported(&again, &notes(&toml_again), dir.path());
        assert_eq!(lsf, lsf_again);
    }
}

/// [`imported_toml`] without `strict`: a site's HostModel CPU factors are
/// written back, and they are a warning.
fn imported_toml_lenient(files: &[ExportedFile], scenario: &Scenario, dir: &Path) -> String {
    for file in files {
        let path = dir.join(&file.path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dir");
        std::fs::write(&path, &file.text).expect("write");
    }
    let options = ImportOptions {
        envdirs: scenario
            .clusters
            .iter()
            .map(|spec| dir.join(spec.config.name.as_str()))
            .collect(),
        ..ImportOptions::default()
    };
    let federation =
        mcfed_lsf::import(&[], &options).unwrap_or_else(|error| panic!("imports:\n{error}"));
    mcfed_lsf::render::federation(&federation, &[]).text
}
