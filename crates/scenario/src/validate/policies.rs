//! Validating the scheduling policies of a scenario's clusters: lsb.params
//! (fairshare factors, PREEMPT_FOR, PREEMPT_JOBTYPE, NO_PREEMPT_*,
//! MBD_SLEEP_TIME, the fairshare adjustment plug-in), the policy keys of a
//! queue (pools, FAIRSHARE, limits, SLOT_RESERVE, BACKFILL,
//! TERMINATE_WHEN), host limits, and lsb.users. Each problem names its
//! field; the values are turned into `mcfed_cluster` configuration types.

use mcfed_cluster::fairshare::{AdjustmentPlugin, DEFAULT_MEMORY_THRESHOLD, FairshareOverrides};
use mcfed_cluster::{
    MaxReserveTime, PreemptFor, PreemptGuard, PreemptGuards, QueueConfig, SchedulingParams,
    SlotPoolConfig, UserGroupConfig, UserLimitConfig, UserShares,
};

mod aps;

use crate::check::Checker;
use crate::format::{LsfValue, RawCluster, RawFactors, RawParams, RawQueue};
use crate::locate::FieldPath;

/// A parameter of lsb.params and where it was written: the cluster's own
/// `params` wins over the federation's `[params]`.
pub(crate) fn pick<'a, T>(
    own: &'a Option<T>,
    shared: &'a Option<T>,
    cluster_path: &FieldPath,
    field: &str,
) -> Option<(&'a T, FieldPath)> {
    match (own, shared) {
        (Some(value), _) => Some((value, cluster_path.key("params").key(field))),
        (None, Some(value)) => Some((value, FieldPath::root().key("params").key(field))),
        (None, None) => None,
    }
}

impl Checker<'_> {
    fn guard(&mut self, value: Option<(&LsfValue, FieldPath)>) -> Option<PreemptGuard> {
        let (value, path) = value?;
        match value.0.parse::<PreemptGuard>() {
            Ok(guard) => Some(guard),
            Err(error) => {
                self.problem(path, error.to_string());
                None
            }
        }
    }

    /// lsb.params' scheduling parameters of a cluster.
    pub(crate) fn scheduling_params(
        &mut self,
        federation: &RawParams,
        raw: &RawCluster,
        path: &FieldPath,
    ) -> SchedulingParams {
        let own = &raw.params;
        // The cluster's own value wins; `Cluster::new` checks the ranges and
        // its problems are located in whichever table set the value.
        let own_values = own.factor_values();
        let shared_values = federation.factor_values();
        let own_switches = own.switch_values();
        let shared_switches = federation.switch_values();
        let fairshare_factors = FairshareOverrides::from_values(
            std::array::from_fn(|index| own_values[index].or(shared_values[index])),
            std::array::from_fn(|index| own_switches[index].or(shared_switches[index])),
        );
        let mut params = SchedulingParams {
            fairshare_factors,
            ..SchedulingParams::default()
        };
        if let Some((text, field)) = pick(
            &own.PREEMPT_FOR,
            &federation.PREEMPT_FOR,
            path,
            "PREEMPT_FOR",
        ) {
            match text.parse::<PreemptFor>() {
                Ok(preempt_for) => params.preempt_for = preempt_for,
                Err(error) => self.problem(field, error.to_string()),
            }
        }
        if let Some((text, field)) = pick(
            &own.PREEMPT_JOBTYPE,
            &federation.PREEMPT_JOBTYPE,
            path,
            "PREEMPT_JOBTYPE",
        ) {
            if self.preempt_jobtype(text, &field) {
                params.preempt_backfill = true;
            }
        }
        params.preempt_guards = PreemptGuards {
            run_time: self.guard(pick(
                &own.NO_PREEMPT_RUN_TIME,
                &federation.NO_PREEMPT_RUN_TIME,
                path,
                "NO_PREEMPT_RUN_TIME",
            )),
            finish_time: self.guard(pick(
                &own.NO_PREEMPT_FINISH_TIME,
                &federation.NO_PREEMPT_FINISH_TIME,
                path,
                "NO_PREEMPT_FINISH_TIME",
            )),
        };
        if let Some((time, field)) = pick(
            &own.MBD_SLEEP_TIME,
            &federation.MBD_SLEEP_TIME,
            path,
            "MBD_SLEEP_TIME",
        ) {
            if time.0.is_zero() {
                self.problem(field, "MBD_SLEEP_TIME must be longer than zero");
            } else {
                params.sleep_time = Some(time.0);
            }
        }
        if let Some(plugin) = self.fairshare_adjustment(own, federation, path) {
            params.fairshare_adjustment = plugin;
        }
        if let Some((period, field)) = pick(
            &own.CLEAN_PERIOD,
            &federation.CLEAN_PERIOD,
            path,
            "CLEAN_PERIOD",
        ) {
            if period.0.is_zero() {
                self.problem(field, "CLEAN_PERIOD must be longer than zero");
            } else {
                params.clean_period = Some(period.0);
            }
        }
        params.max_user_priority = own.MAX_USER_PRIORITY.or(federation.MAX_USER_PRIORITY);
        self.aps_params(own, federation, path, &mut params);
        params
    }

    /// PREEMPT_JOBTYPE, at `field`: whether it lists BACKFILL, the only job
    /// type emulated.
    fn preempt_jobtype(&mut self, text: &str, field: &FieldPath) -> bool {
        let mut backfill = false;
        for word in text.split_whitespace() {
            match word {
                "BACKFILL" => backfill = true,
                "EXCLUSIVE" | "AFFINITY" => self.problem(
                    field.clone(),
                    format!("PREEMPT_JOBTYPE `{word}` is not emulated by mcfed"),
                ),
                other => self.problem(
                    field.clone(),
                    format!("unknown PREEMPT_JOBTYPE `{other}` (expected BACKFILL)"),
                ),
            }
        }
        backfill
    }

    /// FAIRSHARE_ADJUSTMENT_PLUGIN and its FAIRSHARE_ADJUSTMENT_THRESHOLD:
    /// the plug-in if `memory`, `None` to keep the default.
    fn fairshare_adjustment(
        &mut self,
        own: &RawParams,
        federation: &RawParams,
        path: &FieldPath,
    ) -> Option<AdjustmentPlugin> {
        let threshold = pick(
            &own.FAIRSHARE_ADJUSTMENT_THRESHOLD,
            &federation.FAIRSHARE_ADJUSTMENT_THRESHOLD,
            path,
            "FAIRSHARE_ADJUSTMENT_THRESHOLD",
        );
        if let Some((value, field)) = &threshold {
            if !(value.is_finite() && **value > 0.0) {
                self.problem(
                    field.clone(),
                    "FAIRSHARE_ADJUSTMENT_THRESHOLD must be a positive number",
                );
            }
        }
        match pick(
            &own.FAIRSHARE_ADJUSTMENT_PLUGIN,
            &federation.FAIRSHARE_ADJUSTMENT_PLUGIN,
            path,
            "FAIRSHARE_ADJUSTMENT_PLUGIN",
        ) {
            Some((name, _)) if name == "memory" => {
                let threshold = threshold
                    .map(|(&value, _)| value)
                    .filter(|value| value.is_finite() && *value > 0.0)
                    .unwrap_or(DEFAULT_MEMORY_THRESHOLD);
                return Some(AdjustmentPlugin::Memory { threshold });
            }
            Some((name, _)) if name == "none" => {}
            Some((name, field)) => self.problem(
                field,
                format!(
                    "unknown fairshare adjustment plug-in `{name}` (expected `memory` or `none`)"
                ),
            ),
            None => {
                if let Some((_, field)) = threshold {
                    self.problem(
                        field,
                        "FAIRSHARE_ADJUSTMENT_THRESHOLD is used only by FAIRSHARE_ADJUSTMENT_PLUGIN = \"memory\"",
                    );
                }
            }
        }
        None
    }

    /// The scheduling-policy keys of a queue.
    pub(crate) fn queue_policies(
        &mut self,
        raw: &RawQueue,
        path: &FieldPath,
        config: &mut QueueConfig,
    ) {
        config.user_job_limit = raw.UJOB_LIMIT;
        config.host_job_limit = raw.HJOB_LIMIT;
        if let Some(pool) = self.slot_pool(raw, path) {
            config.slot_pool = Some(pool);
        }
        if let Some(text) = &raw.FAIRSHARE {
            match text.parse::<UserShares>() {
                Ok(shares) => config.fairshare = Some(shares),
                Err(error) => self.problem(path.key("FAIRSHARE"), error.to_string()),
            }
        }
        config.fairshare_factors =
            FairshareOverrides::from_values(raw.factor_values(), raw.switch_values());
        if let Some(text) = &raw.SLOT_RESERVE {
            match text.parse::<MaxReserveTime>() {
                Ok(time) => config.slot_reserve = Some(time.0),
                Err(error) => self.problem(path.key("SLOT_RESERVE"), error.to_string()),
            }
        }
        config.backfill = raw.BACKFILL.is_some_and(|yes| yes.0);
        if let Some(text) = &raw.TERMINATE_WHEN {
            if self.terminate_when(text, path) {
                config.terminate_when_preempt = true;
            }
        }
        config.run_limit = self.lsf_duration(raw.RUNLIMIT.as_ref(), path, "RUNLIMIT");
        config.run_estimate = self.lsf_duration(raw.RUNTIME.as_ref(), path, "RUNTIME");
        config.preempt_guards = PreemptGuards {
            run_time: self.guard(
                raw.NO_PREEMPT_RUN_TIME
                    .as_ref()
                    .map(|value| (value, path.key("NO_PREEMPT_RUN_TIME"))),
            ),
            finish_time: self.guard(
                raw.NO_PREEMPT_FINISH_TIME
                    .as_ref()
                    .map(|value| (value, path.key("NO_PREEMPT_FINISH_TIME"))),
            ),
        };
        self.queue_aps(raw, path, config);
    }

    /// A queue's RUNLIMIT or RUNTIME (`field`): a duration longer than
    /// zero. A bare number is refused: LSF counts minutes, mcfed asks for
    /// the unit.
    fn lsf_duration(
        &mut self,
        value: Option<&LsfValue>,
        path: &FieldPath,
        field: &'static str,
    ) -> Option<std::time::Duration> {
        let text = value?.0.trim();
        let problem = if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
            format!("`{text}` has no unit: write minutes as \"{text}m\" (LSF counts minutes)")
        } else {
            match humantime::parse_duration(text) {
                Ok(duration) if !duration.is_zero() => return Some(duration),
                Ok(_) => format!("{field} must be longer than zero"),
                Err(_) => format!("`{text}` is not a duration (\"30m\", \"2h\")"),
            }
        };
        self.problem(path.key(field), problem);
        None
    }

    /// The slot pool a queue is in (SLOT_POOL, SLOT_SHARE,
    /// MAX_SLOTS_IN_POOL, USE_PRIORITY_IN_POOL), if any.
    fn slot_pool(&mut self, raw: &RawQueue, path: &FieldPath) -> Option<SlotPoolConfig> {
        match (&raw.SLOT_POOL, raw.SLOT_SHARE) {
            (Some(pool), Some(share)) => {
                if pool.is_empty() || pool.contains(char::is_whitespace) {
                    self.problem(
                        path.key("SLOT_POOL"),
                        format!("`{pool}` is not a pool name"),
                    );
                }
                return Some(SlotPoolConfig {
                    pool: pool.clone(),
                    share,
                    max_slots: raw.MAX_SLOTS_IN_POOL,
                    use_priority: raw.USE_PRIORITY_IN_POOL.map(|yes| yes.0),
                });
            }
            (Some(_), None) => self.problem(
                path.key("SLOT_POOL"),
                "a queue in a SLOT_POOL needs its SLOT_SHARE (percent of the pool)",
            ),
            (None, Some(_)) => self.problem(
                path.key("SLOT_SHARE"),
                "SLOT_SHARE needs SLOT_POOL (the pool it is a share of)",
            ),
            (None, None) => {
                for (field, set) in [
                    ("MAX_SLOTS_IN_POOL", raw.MAX_SLOTS_IN_POOL.is_some()),
                    ("USE_PRIORITY_IN_POOL", raw.USE_PRIORITY_IN_POOL.is_some()),
                ] {
                    if set {
                        self.problem(path.key(field), format!("{field} needs SLOT_POOL"));
                    }
                }
            }
        }
        None
    }

    /// A queue's TERMINATE_WHEN: whether it lists PREEMPT, the only
    /// condition emulated.
    fn terminate_when(&mut self, text: &str, path: &FieldPath) -> bool {
        let mut preempt = false;
        for word in text.split_whitespace() {
            match word {
                "PREEMPT" => preempt = true,
                "WINDOW" | "LOAD" => self.problem(
                    path.key("TERMINATE_WHEN"),
                    format!("TERMINATE_WHEN `{word}` is not emulated by mcfed (only PREEMPT)"),
                ),
                other => self.problem(
                    path.key("TERMINATE_WHEN"),
                    format!("unknown TERMINATE_WHEN `{other}` (expected PREEMPT)"),
                ),
            }
        }
        preempt
    }

    /// lsb.users: user limits and user groups.
    pub(crate) fn users(
        &mut self,
        raw: &RawCluster,
        path: &FieldPath,
    ) -> (Vec<UserLimitConfig>, Vec<UserGroupConfig>) {
        let users = raw
            .user
            .iter()
            .map(|user| UserLimitConfig {
                name: user.name.clone(),
                max_jobs: user.MAX_JOBS,
                slots_per_processor: user.JL_P,
            })
            .collect();
        let groups = raw
            .user_group
            .iter()
            .enumerate()
            .map(|(index, group)| {
                if group.GROUP_MEMBER.0.is_empty() {
                    self.problem(
                        path.key("user_group").index(index).key("GROUP_MEMBER"),
                        "a user group needs at least one member",
                    );
                }
                let group_path = path.key("user_group").index(index);
                let user_shares = group.USER_SHARES.as_ref().and_then(|text| {
                    UserShares::parse_list(text)
                        .map_err(|error| {
                            self.problem(group_path.key("USER_SHARES"), error.to_string())
                        })
                        .ok()
                });
                UserGroupConfig {
                    name: group.name.clone(),
                    members: group.GROUP_MEMBER.0.clone(),
                    user_shares,
                }
            })
            .collect();
        (users, groups)
    }
}
