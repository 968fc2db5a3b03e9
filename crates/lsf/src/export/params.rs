//! lsb.params (LSF's keys in its Parameters section, mcfed's own in a
//! second one on `#mcfed` lines) and lsf.conf (where the cluster's files
//! are, and the keys mcfed models).

use std::fmt::Write as _;
use std::path::Path;

use mcfed_cluster::{AdjustmentPlugin, ClusterConfig};
use mcfed_forwarder::{DEFAULT_MAX_FORWARDS, ScheduleMode};

use super::{Assignments, ExportCluster, HEADER, whole};
use crate::grammar::MCFED_PREFIX;

pub(super) fn params(cluster: &ExportCluster<'_>) -> Result<String, String> {
    let config = cluster.config;
    let mut keys = Assignments::default();
    let mut own = Assignments::default();
    if let Some(interval) = config.update_interval {
        keys.set(
            "MC_PLUGIN_UPDATE_INTERVAL",
            whole("MC_PLUGIN_UPDATE_INTERVAL", interval, 1, "seconds")?,
        );
    }
    if let Some(forwarder) = cluster.forwarder {
        if forwarder.mode != ScheduleMode::Default {
            keys.set("MC_PLUGIN_SCHEDULE_ENHANCE", forwarder.mode);
        }
        if forwarder.max_forwards != DEFAULT_MAX_FORWARDS {
            own.set("MAX_FORWARDS", forwarder.max_forwards);
        }
    }
    let params = &config.params;
    keys.factors(&params.fairshare_factors);
    let preempt_for = params.preempt_for.to_string();
    if !preempt_for.is_empty() {
        keys.set("PREEMPT_FOR", preempt_for);
    }
    if params.preempt_backfill {
        keys.set("PREEMPT_JOBTYPE", "BACKFILL");
    }
    keys.guards(&params.preempt_guards)?;
    if let Some(sleep) = params.sleep_time {
        keys.set(
            "MBD_SLEEP_TIME",
            whole("MBD_SLEEP_TIME", sleep, 1, "seconds")?,
        );
    }
    if let Some(period) = params.clean_period {
        keys.set("CLEAN_PERIOD", whole("CLEAN_PERIOD", period, 1, "seconds")?);
    }
    if let Some(priority) = params.max_user_priority {
        keys.set("MAX_USER_PRIORITY", priority);
    }
    if let Some(escalation) = params.job_priority_over_time {
        keys.set("JOB_PRIORITY_OVER_TIME", escalation);
    }
    if let AdjustmentPlugin::Memory { threshold } = params.fairshare_adjustment {
        own.set("FAIRSHARE_ADJUSTMENT_PLUGIN", "memory");
        own.set("FAIRSHARE_ADJUSTMENT_THRESHOLD", threshold);
    }
    let mut text = format!("{HEADER}\nBegin Parameters\n{}End Parameters\n", keys.0);
    if !own.0.is_empty() {
        text.push_str(
            "\n# mcfed's own parameters (docs/lsf-import.md): LSF reads these lines\n# as comments.\n",
        );
        let _ = writeln!(text, "{MCFED_PREFIX} Begin Parameters");
        for line in own.0.lines() {
            let _ = writeln!(text, "{MCFED_PREFIX} {line}");
        }
        let _ = writeln!(text, "{MCFED_PREFIX} End Parameters");
    }
    Ok(text)
}

/// lsf.conf: where the cluster's files are (`envdir`, and its `lsbatch`),
/// and LSB_REQUEUE_TO_BOTTOM and LSB_MIG2PEND when on (`1`; off is LSF's
/// default, left out).
pub(super) fn lsf_conf(config: &ClusterConfig, envdir: &Path) -> String {
    let mut text = format!(
        "{HEADER}\nLSF_CONFDIR={}\nLSB_CONFDIR={}\n",
        envdir.display(),
        envdir.join("lsbatch").display()
    );
    let params = &config.params;
    for (key, on) in [
        ("LSB_REQUEUE_TO_BOTTOM", params.requeue_to_bottom),
        ("LSB_MIG2PEND", params.mig2pend),
    ] {
        if on {
            let _ = writeln!(text, "{key}=1");
        }
    }
    text
}
