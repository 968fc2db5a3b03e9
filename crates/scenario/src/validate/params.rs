//! The forwarding parameters of lsb.params: MC_PLUGIN_UPDATE_INTERVAL,
//! MC_PLUGIN_SCHEDULE_ENHANCE, and mcfed's own MAX_FORWARDS,
//! MC_UNREACHABLE_UPDATES and MC_RECLAIM_TIME, each from a cluster's own
//! `params` or else the federation's `[params]`. The scheduling parameters
//! of lsb.params are checked in `super::policies`.

use std::time::Duration;

use mcfed_forwarder::{
    DEFAULT_MAX_FORWARDS, DEFAULT_RECLAIM_TIME, DEFAULT_UNREACHABLE_UPDATES, ScheduleMode,
};

use super::policies::pick;
use crate::check::Checker;
use crate::format::RawParams;
use crate::locate::FieldPath;

/// A cluster's forwarding parameters, defaults filled in.
pub(super) struct ForwardingParams {
    /// MC_PLUGIN_UPDATE_INTERVAL (`None`: the cluster sends no counters).
    pub(super) update_interval: Option<Duration>,
    /// MC_PLUGIN_SCHEDULE_ENHANCE.
    pub(super) mode: ScheduleMode,
    /// MAX_FORWARDS.
    pub(super) max_forwards: u32,
    /// MC_UNREACHABLE_UPDATES (0: never stale).
    pub(super) unreachable_updates: u32,
    /// MC_RECLAIM_TIME (`None`: never).
    pub(super) reclaim_time: Option<Duration>,
}

impl Checker<'_> {
    /// The forwarding parameters of the cluster at `path`, whose own
    /// `params` are `own`.
    pub(super) fn forwarding_params(
        &mut self,
        federation: &RawParams,
        own: &RawParams,
        path: &FieldPath,
    ) -> ForwardingParams {
        ForwardingParams {
            update_interval: self.update_interval(federation, own, path),
            mode: self.schedule_mode(federation, own, path),
            max_forwards: own
                .MAX_FORWARDS
                .or(federation.MAX_FORWARDS)
                .unwrap_or(DEFAULT_MAX_FORWARDS),
            unreachable_updates: own
                .MC_UNREACHABLE_UPDATES
                .or(federation.MC_UNREACHABLE_UPDATES)
                .unwrap_or(DEFAULT_UNREACHABLE_UPDATES),
            reclaim_time: own
                .MC_RECLAIM_TIME
                .as_ref()
                .or(federation.MC_RECLAIM_TIME.as_ref())
                .map_or(Some(DEFAULT_RECLAIM_TIME), |time| {
                    Some(time.0).filter(|time| !time.is_zero())
                }),
        }
    }

    /// MC_PLUGIN_UPDATE_INTERVAL, which must be longer than zero. Unset, the
    /// cluster sends no counters (seed 004: information "is sent by each
    /// execution cluster when MC_PLUGIN_UPDATE_INTERVAL ... is defined").
    fn update_interval(
        &mut self,
        federation: &RawParams,
        own: &RawParams,
        path: &FieldPath,
    ) -> Option<Duration> {
        match pick(
            &own.MC_PLUGIN_UPDATE_INTERVAL,
            &federation.MC_PLUGIN_UPDATE_INTERVAL,
            path,
            "MC_PLUGIN_UPDATE_INTERVAL",
        ) {
            Some((interval, _)) if !interval.0.is_zero() => Some(interval.0),
            Some((_, field)) => {
                self.problem(field, "MC_PLUGIN_UPDATE_INTERVAL must be longer than zero");
                None
            }
            None => None,
        }
    }

    /// MC_PLUGIN_SCHEDULE_ENHANCE, a schedule mode keyword.
    fn schedule_mode(
        &mut self,
        federation: &RawParams,
        own: &RawParams,
        path: &FieldPath,
    ) -> ScheduleMode {
        match pick(
            &own.MC_PLUGIN_SCHEDULE_ENHANCE,
            &federation.MC_PLUGIN_SCHEDULE_ENHANCE,
            path,
            "MC_PLUGIN_SCHEDULE_ENHANCE",
        ) {
            None => ScheduleMode::Default,
            Some((text, field)) => match text.parse::<ScheduleMode>() {
                Ok(mode) => mode,
                Err(error) => {
                    self.problem(field, error.to_string());
                    ScheduleMode::Default
                }
            },
        }
    }
}
