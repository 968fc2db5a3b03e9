//! The catalogue of LSF parameters (`mcfed_lsf::catalog`) against the
//! scenario format: every key of a scenario's cluster that is LSF
//! configuration is imported from a parameter the catalogue models.

/// The keys a scenario's table accepts, read from the scenario parser's
/// own refusal of an unknown key (`expected one of ...`).
fn scenario_keys(toml: &str) -> Vec<String> {
    let error = match mcfed_scenario::parse("keys.toml", toml) {
        Ok(_) => panic!("an unknown key is accepted in:\n{toml}"),
        Err(error) => error.to_string(),
    };
    let listed = error
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("no key list in: {error}"))
        .1;
    listed
        .split(", ")
        .map(|key| key.trim().trim_matches('`').to_owned())
        .collect()
}

/// A scenario table: its name, a TOML giving it an unknown key, the LSF
/// file and section its keys come from, and its exceptions (key → the LSF
/// parameter it comes from, or "" when it is not LSF configuration).
type ScenarioTable = (
    &'static str,
    String,
    mcfed_lsf::catalog::FileSpec,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// Every key of a scenario's cluster that is LSF configuration comes from
/// a parameter the catalogue says mcfed models (in full or in part), and
/// the other keys are listed with why: a key added to the scenario format
/// and not to the importer makes this fail.
#[test]
fn the_catalogue_imports_every_key_the_scenario_format_has() {
    use mcfed_lsf::catalog::{self, Status};
    const CLUSTER: &str = "[[cluster]]\nname = \"x\"\n";
    let tables: [ScenarioTable; 8] = [
        (
            "params",
            "[params]\nBOGUS = 1\n".to_owned(),
            catalog::LSB_PARAMS,
            "Parameters",
            &[
                ("LSB_REQUEUE_TO_BOTTOM", "lsf.conf LSB_REQUEUE_TO_BOTTOM"),
                ("LSB_MIG2PEND", "lsf.conf LSB_MIG2PEND"),
            ],
        ),
        (
            "host",
            format!("{CLUSTER}[[cluster.host]]\nBOGUS = 1\n"),
            catalog::LSB_HOSTS,
            "Host",
            &[
                ("name", "lsf.cluster.NAME HOSTNAME"),
                ("count", ""), // mcfed's shorthand for alike hosts; exported one by one
                ("resources", "lsf.cluster.NAME RESOURCES"),
                ("closed", "lsf.cluster.NAME closed"),
                ("ncpus", "lsf.cluster.NAME ncpus"),
                ("ngpus", "lsf.cluster.NAME ngpus"),
                ("memory_mb", "lsf.cluster.NAME maxmem"),
                ("type", "lsf.cluster.NAME type"),
                ("model", "lsf.cluster.NAME model"),
            ],
        ),
        (
            "queue",
            format!("{CLUSTER}[[cluster.queue]]\nBOGUS = 1\n"),
            catalog::LSB_QUEUES,
            "Queue",
            &[("name", "QUEUE_NAME")],
        ),
        (
            "user",
            format!("{CLUSTER}[[cluster.user]]\nBOGUS = 1\n"),
            catalog::LSB_USERS,
            "User",
            &[("name", "USER_NAME")],
        ),
        (
            "user_group",
            format!("{CLUSTER}[[cluster.user_group]]\nBOGUS = 1\n"),
            catalog::LSB_USERS,
            "UserGroup",
            &[("name", "GROUP_NAME")],
        ),
        (
            "limit",
            format!("{CLUSTER}[[cluster.limit]]\nBOGUS = 1\n"),
            catalog::LSB_RESOURCES,
            "Limit",
            &[],
        ),
        (
            "reservation_policy",
            format!("{CLUSTER}[[cluster.reservation_policy]]\nBOGUS = 1\n"),
            catalog::LSB_RESOURCES,
            "ResourceReservation",
            &[],
        ),
        (
            "cluster",
            "[[cluster]]\nBOGUS = 1\n".to_owned(),
            catalog::LSB_PARAMS,
            "Parameters",
            &[
                ("name", ""),       // --cluster NAME=DIR
                ("lsf_config", ""), // the directory itself
                ("address", ""),    // where its process listens
                ("params", ""),
                ("host", ""),
                ("queue", ""),
                ("user", ""),
                ("user_group", ""),
                ("limit", ""),
                ("reservation_policy", ""),
                ("reservation", ""), // brsvadd makes them, not a file
                ("job", ""),         // jobs are not configuration
            ],
        ),
    ];
    for (table, toml, file, section, exceptions) in tables {
        let keys = scenario_keys(&toml);
        assert!(!keys.is_empty(), "{table}");
        for key in keys {
            let (file, section, param) = match exceptions.iter().find(|(k, _)| *k == key) {
                Some((_, "")) => continue,
                Some((_, from)) => match from.split_once(' ') {
                    Some(("lsf.cluster.NAME", param)) => (catalog::LSF_CLUSTER, "Host", param),
                    Some(("lsf.conf", param)) => (catalog::LSF_CONF, catalog::NO_SECTION, param),
                    _ => (file, section, *from),
                },
                None => (file, section, key.as_str()),
            };
            let status = file
                .section(section)
                .and_then(|spec| spec.param(param))
                .map(|param| param.status)
                .unwrap_or_else(|| panic!("{table}.{key}: {} {section} has no {param}", file.name));
            assert!(
                matches!(status, Status::Modelled(_) | Status::Partial(..)),
                "{table}.{key}: the catalogue does not import {} {section} {param} ({status:?})",
                file.name
            );
        }
    }
}
