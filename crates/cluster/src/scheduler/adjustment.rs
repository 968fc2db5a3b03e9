//! The fairshare adjustment plug-in as a cluster runs it: the plug-in,
//! and the cluster-wide figures it is given (memory in use by running
//! jobs, memory per slot of the hosts).

use std::sync::Arc;

use crate::fairshare::{AdjustmentInput, FairshareAdjustment, ShareAccount};

use super::accounting::Change;
use super::hosts::HostBook;

/// The plug-in and its cluster-wide inputs.
#[derive(Clone, Debug)]
pub(crate) struct Adjustment {
    plugin: Option<Arc<dyn FairshareAdjustment>>,
    /// Memory of running jobs, MB.
    memory_in_use_mb: u64,
    /// Host memory per slot, MB.
    slot_memory_mb: f64,
}

impl Adjustment {
    /// `plugin` on `hosts`, with nothing running.
    pub(crate) fn new(plugin: Option<Arc<dyn FairshareAdjustment>>, hosts: &HostBook) -> Self {
        let slots: u64 = hosts
            .iter()
            .map(|host| u64::from(host.config.max_slots))
            .sum();
        let memory: u64 = hosts.iter().map(|host| host.config.memory_mb).sum();
        let slot_memory_mb = if slots == 0 {
            0.0
        } else {
            memory as f64 / slots as f64
        };
        Adjustment {
            plugin,
            memory_in_use_mb: 0,
            slot_memory_mb,
        }
    }

    /// Runs `plugin` from now on.
    pub(crate) fn set_plugin(&mut self, plugin: Arc<dyn FairshareAdjustment>) {
        self.plugin = Some(plugin);
    }

    /// Memory of running jobs, MB.
    pub(crate) fn memory_in_use_mb(&self) -> u64 {
        self.memory_in_use_mb
    }

    /// A job using `memory_mb` starts or stops running (`change.run`).
    pub(crate) fn account(&mut self, memory_mb: u64, change: Change) {
        if change.run > 0 {
            self.memory_in_use_mb += memory_mb;
        } else if change.run < 0 {
            self.memory_in_use_mb -= memory_mb;
        }
    }

    /// The plug-in's value for the user whose account is `account`, with
    /// `cpu_time` and `run_time` (hours) already computed; 0 without a
    /// plug-in or when `factor` (FAIRSHARE_ADJUSTMENT_FACTOR) gives it no
    /// weight.
    pub(crate) fn value(
        &self,
        factor: f64,
        account: &ShareAccount,
        cpu_time: f64,
        run_time: f64,
    ) -> f64 {
        let Some(plugin) = self.plugin.as_ref().filter(|_| factor > 0.0) else {
            return 0.0;
        };
        let job_slots = f64::from(account.running_slots);
        plugin.adjustment(&AdjustmentInput {
            cpu_time,
            run_time,
            job_slots,
            fwd_job_slots: 0.0,
            used_slots: job_slots,
            used_memory_mb: account.memory_mb as f64,
            cluster_memory_in_use_mb: self.memory_in_use_mb as f64,
            slot_memory_mb: self.slot_memory_mb,
        })
    }
}
