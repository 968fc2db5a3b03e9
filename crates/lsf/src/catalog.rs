//! Every LSF parameter mcfed knows, by file and section, and what mcfed
//! makes of it: modelled (the scenario key of the same name, converted as
//! [`Conv`] says), modelled in part (how), or not modelled (a warning on
//! import). The importer, the exporter and the docs' table
//! (docs/lsf-import.md, checked by a test) all read this one table, so
//! modelling a new parameter is a change here plus its scenario key.

/// How an LSF value becomes a scenario value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// A whole number (0 to 2^32 - 1).
    Count,
    /// A number.
    Number,
    /// Seconds, written as a duration (`"30s"`).
    Seconds,
    /// LSF's NO_PREEMPT_* value: minutes, or a percentage of the run limit.
    Guard,
    /// Scheduling cycles of MBD_SLEEP_TIME, written as a duration.
    Cycles,
    /// Space-separated words.
    Words,
    /// A keyword value checked by mcfed's own parser for it.
    Keywords,
    /// `Y` or `N`.
    YesNo,
    /// A number of jobs or `infinit`.
    Backlog,
    /// A name.
    Name,
}

/// What mcfed makes of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Emulated as LSF does.
    Modelled(Conv),
    /// Emulated with a difference (the text says which).
    Partial(Conv, &'static str),
    /// Kept as a comment in the imported TOML (descriptions).
    Comment,
    /// Not emulated: a warning on import, the value is dropped.
    Ignored,
}

/// One parameter (a `KEY = value` name or a column name).
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// Its name as LSF spells it.
    pub name: &'static str,
    /// What mcfed makes of it.
    pub status: Status,
}

/// One kind of section of a file.
#[derive(Clone, Copy, Debug)]
pub struct SectionSpec {
    /// The section's name (`Queue`, `Host`, …).
    pub name: &'static str,
    /// Whether mcfed reads the section at all; an ignored section is one
    /// warning at its `Begin` line.
    pub read: bool,
    /// Its parameters (keys or columns).
    pub params: &'static [Param],
}

impl SectionSpec {
    /// The parameter named `name` (LSF compares names without regard to
    /// case).
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params
            .iter()
            .find(|param| param.name.eq_ignore_ascii_case(name))
    }

    /// Every parameter name, for "did you mean".
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.params.iter().map(|param| param.name)
    }
}

/// One configuration file.
#[derive(Clone, Copy, Debug)]
pub struct FileSpec {
    /// The file's name (`lsf.cluster.NAME` for the cluster file).
    pub name: &'static str,
    /// Its sections.
    pub sections: &'static [SectionSpec],
}

impl FileSpec {
    /// The section named `name`.
    pub fn section(&self, name: &str) -> Option<&'static SectionSpec> {
        self.sections
            .iter()
            .find(|section| section.name.eq_ignore_ascii_case(name))
    }
}

const fn m(name: &'static str, conv: Conv) -> Param {
    Param {
        name,
        status: Status::Modelled(conv),
    }
}

const fn p(name: &'static str, conv: Conv, how: &'static str) -> Param {
    Param {
        name,
        status: Status::Partial(conv, how),
    }
}

const fn i(name: &'static str) -> Param {
    Param {
        name,
        status: Status::Ignored,
    }
}

const fn read(name: &'static str, params: &'static [Param]) -> SectionSpec {
    SectionSpec {
        name,
        read: true,
        params,
    }
}

const fn skip(name: &'static str) -> SectionSpec {
    SectionSpec {
        name,
        read: false,
        params: &[],
    }
}

use Conv::*;

/// The dynamic-priority factors, in lsb.params and lsb.queues alike.
macro_rules! factors {
    () => {
        [
            m("CPU_TIME_FACTOR", Number),
            m("RUN_TIME_FACTOR", Number),
            m("RUN_JOB_FACTOR", Number),
            m("FWD_JOB_FACTOR", Number),
            m("FAIRSHARE_ADJUSTMENT_FACTOR", Number),
            m("HIST_HOURS", Number),
            m("GPU_RUN_TIME_FACTOR", Number),
        ]
    };
}

const PARAMS: &[Param] = &{
    let f = factors!();
    [
        m("MC_PLUGIN_SCHEDULE_ENHANCE", Keywords),
        m("MC_PLUGIN_UPDATE_INTERVAL", Seconds),
        f[0],
        f[1],
        f[2],
        f[3],
        f[4],
        f[5],
        f[6],
        p(
            "PREEMPT_FOR",
            Keywords,
            "GROUP_JLP, GROUP_MAX, HOST_JLU, USER_JLP and LEAST_RUN_TIME; MINI_JOB, OPTIMAL_MINI_JOB and BUCKET_JOB are ignored with a warning",
        ),
        p(
            "PREEMPT_JOBTYPE",
            Keywords,
            "BACKFILL; EXCLUSIVE and AFFINITY are ignored with a warning",
        ),
        m("NO_PREEMPT_RUN_TIME", Guard),
        m("NO_PREEMPT_FINISH_TIME", Guard),
        p(
            "MBD_SLEEP_TIME",
            Seconds,
            "the length of a scheduling cycle, the unit of SLOT_RESERVE and MAX_RSCHED_TIME; mcfed schedules on every event, not once a cycle",
        ),
        p(
            "MAX_FORWARDS",
            Count,
            "mcfed's own cap on forwards of one job (not an LSF parameter)",
        ),
        p(
            "FAIRSHARE_ADJUSTMENT_PLUGIN",
            Keywords,
            "mcfed's: `memory` loads the seed's memory plug-in (LSF loads libfairshareadjust)",
        ),
        p(
            "FAIRSHARE_ADJUSTMENT_THRESHOLD",
            Number,
            "mcfed's: THRESHOLD of the memory plug-in",
        ),
        i("ABS_RUNLIMIT"),
        i("ACCT_ARCHIVE_AGE"),
        i("ACCT_ARCHIVE_SIZE"),
        i("ACCT_ARCHIVE_TIME"),
        i("ADVRSV_USER_LIMIT"),
        i("ALLOCATION_PLANNER"),
        i("BJOBS_RES_REQ_DISPLAY"),
        i("BSWITCH_MODIFY_RUSAGE"),
        i("CHUNK_JOB_DURATION"),
        i("CLEAN_PERIOD"),
        i("CLEAN_PERIOD_DONE"),
        i("COMMITTED_RUN_TIME_FACTOR"),
        i("COMPUTE_UNIT_TYPES"),
        i("CONDENSE_PENDING_REASONS"),
        i("CPU_PEAK_SAMPLE_DURATION"),
        i("DEFAULT_APPLICATION"),
        i("DEFAULT_HOST_SPEC"),
        i("DEFAULT_JOB_CWD"),
        i("DEFAULT_JOB_OUTDIR"),
        i("DEFAULT_JOBGROUP"),
        i("DEFAULT_PROJECT"),
        i("DEFAULT_QUEUE"),
        i("DEFAULT_RESREQ_ORDER"),
        i("DEFAULT_SLA_VELOCITY"),
        i("DEFAULT_USER_GROUP"),
        i("DETECT_IDLE_JOB_AFTER"),
        i("DIAGNOSE_LOGDIR"),
        i("DISABLE_UACCT_MAP"),
        i("EADMIN_TRIGGER_DURATION"),
        i("EGROUP_UPDATE_INTERVAL"),
        i("ENABLE_DEFAULT_EGO_SLA"),
        i("ENABLE_DIAGNOSE"),
        i("ENABLE_EVENT_STREAM"),
        i("ENABLE_EXIT_RATE_PER_SLOT"),
        i("ENABLE_GPU_HIST_RUN_TIME"),
        i("ENABLE_HIST_RUN_TIME"),
        i("ENABLE_HOST_INTERSECTION"),
        i("ENABLE_USER_RESUME"),
        i("ENFORCE_ONE_UG_LIMITS"),
        i("ENFORCE_UG_TREE"),
        i("EVALUATE_JOB_DEPENDENCY"),
        i("EVENT_UPDATE_INTERVAL"),
        i("EXIT_RATE_TYPE"),
        i("GLOBAL_EXIT_RATE"),
        i("JOB_ACCEPT_INTERVAL"),
        i("JOB_ATTA_DIR"),
        i("JOB_DEP_LAST_SUB"),
        i("JOB_EXIT_RATE_DURATION"),
        i("JOB_GROUP_CLEAN"),
        i("JOB_INCLUDE_POSTPROC"),
        i("JOB_POSITION_CONTROL_BY_ADMIN"),
        i("JOB_POSTPROC_TIMEOUT"),
        i("JOB_PRIORITY_OVER_TIME"),
        i("JOB_RUNLIMIT_RATIO"),
        i("JOB_SCHEDULING_INTERVAL"),
        i("JOB_SPOOL_DIR"),
        i("JOB_SWITCH2_EVENT"),
        i("JOB_TERMINATE_INTERVAL"),
        i("LOCAL_MAX_PREEXEC_RETRY"),
        i("LSB_SYNC_HOST_STAT_LIM"),
        i("MAX_ACCT_ARCHIVE_FILE"),
        i("MAX_CONCURRENT_QUERY"),
        i("MAX_EVENT_STREAM_FILE_NUMBER"),
        i("MAX_EVENT_STREAM_SIZE"),
        i("MAX_INFO_DIRS"),
        i("MAX_JOB_ARRAY_SIZE"),
        i("MAX_JOB_ATTA_SIZE"),
        i("MAX_JOB_NUM"),
        i("MAX_JOB_PREEMPT"),
        i("MAX_JOB_REQUEUE"),
        i("MAX_JOBID"),
        i("MAX_JOBINFO_QUERY_PERIOD"),
        i("MAX_PEND_JOBS"),
        i("MAX_PEND_SLOTS"),
        i("MAX_PREEXEC_RETRY"),
        i("MAX_SBD_CONNS"),
        i("MAX_SBD_FAIL"),
        i("MAX_TOTAL_TIME_PREEMPT"),
        i("MAX_USER_PRIORITY"),
        i("MBD_EGO_CONNECT_TIMEOUT"),
        i("MBD_EGO_READ_TIMEOUT"),
        i("MBD_EGO_TIME2LIVE"),
        i("MBD_QUERY_CPUS"),
        i("MBD_REFRESH_TIME"),
        i("MBD_USE_EGO_MXJ"),
        i("MC_PENDING_REASON_PKG_SIZE"),
        i("MC_PENDING_REASON_UPDATE_INTERVAL"),
        i("MC_RECLAIM_DELAY"),
        i("MC_RESOURCE_MATCHING_CRITERIA"),
        i("MC_RUSAGE_UPDATE_INTERVAL"),
        i("MC_SORT_BY_SUBMIT_TIME"),
        i("MIN_SWITCH_PERIOD"),
        i("NEWJOB_REFRESH"),
        i("NO_PREEMPT_INTERVAL"),
        i("MAX_JOB_MSG_NUM"),
        i("ORPHAN_JOB_TERM_GRACE_PERIOD"),
        i("PARALLEL_SCHED_BY_SLOT"),
        i("PEND_REASON_UPDATE_INTERVAL"),
        i("PERSISTENT_HOST_ORDER"),
        i("PG_SUSP_IT"),
        i("PREEMPT_DELAY"),
        i("PREEMPTABLE_RESOURCES"),
        i("PREEMPTION_WAIT_TIME"),
        i("PRIVILEGED_USER_FORCE_BKILL"),
        i("RELAX_JOB_DISPATCH_ORDER"),
        i("REMOTE_MAX_PREEXEC_RETRY"),
        i("RESIZABLE_JOBS"),
        i("RESOURCE_RESERVE_PER_TASK"),
        i("RUN_TIME_DECAY"),
        i("SBD_SLEEP_TIME"),
        i("SCHED_METRIC_ENABLE"),
        i("SCHED_METRIC_SAMPLE_PERIOD"),
        i("SCHED_PER_JOB_SORT"),
        i("SCHEDULER_THREADS"),
        i("SECURE_INFODIR_USER_ACCESS"),
        i("SECURE_JOB_INFO_LEVEL"),
        i("SIMPLIFIED_GUARANTEE"),
        i("SLA_TIMER"),
        i("STRICT_UG_CONTROL"),
        i("SUB_TRY_INTERVAL"),
        i("SYSTEM_MAPPING_ACCOUNT"),
        i("TRACK_ELIGIBLE_PENDINFO"),
        i("USE_SUSP_SLOTS"),
    ]
};

const QUEUE: &[Param] = &{
    let f = factors!();
    [
        m("QUEUE_NAME", Name),
        Param {
            name: "DESCRIPTION",
            status: Status::Comment,
        },
        m("PRIORITY", Count),
        p(
            "HOSTS",
            Words,
            "host names and host groups (expanded to their hosts), `all`; `~host` exclusions are applied; `+N` preference levels and `others` are ignored with a warning",
        ),
        m("PREEMPTION", Keywords),
        m("QJOB_LIMIT", Count),
        m("UJOB_LIMIT", Count),
        m("HJOB_LIMIT", Count),
        m("SLOT_POOL", Name),
        m("SLOT_SHARE", Count),
        m("MAX_SLOTS_IN_POOL", Count),
        m("USE_PRIORITY_IN_POOL", YesNo),
        p(
            "FAIRSHARE",
            Keywords,
            "USER_SHARES with users and `default`; `group@` gives each member the shares; a group's shared account is given to each member, with a warning",
        ),
        f[0],
        f[1],
        f[2],
        f[3],
        f[4],
        f[5],
        f[6],
        m("SLOT_RESERVE", Keywords),
        m("BACKFILL", YesNo),
        p(
            "TERMINATE_WHEN",
            Keywords,
            "PREEMPT; WINDOW and LOAD are ignored with a warning",
        ),
        m("NO_PREEMPT_RUN_TIME", Guard),
        m("NO_PREEMPT_FINISH_TIME", Guard),
        m("RCVJOBS_FROM", Words),
        m("IMPT_JOBBKLG", Backlog),
        m("SNDJOBS_TO", Words),
        p(
            "MAX_RSCHED_TIME",
            Cycles,
            "n × MBD_SLEEP_TIME of emulated time; `infinit` is no limit",
        ),
        i("ADMINISTRATORS"),
        i("APS_PRIORITY"),
        i("CHKPNT"),
        i("CHUNK_JOB_SIZE"),
        i("COMMITTED_RUN_TIME_FACTOR"),
        i("CORELIMIT"),
        i("CPULIMIT"),
        i("CPU_FREQUENCY"),
        i("DATALIMIT"),
        i("DEFAULT_EXTSCHED"),
        i("DEFAULT_HOST_SPEC"),
        i("DISPATCH_BY_QUEUE"),
        i("DISPATCH_ORDER"),
        i("DISPATCH_WINDOW"),
        i("ELIGIBLE_PEND_TIME_LIMIT"),
        i("ENABLE_HIST_RUN_TIME"),
        i("EXCLUSIVE"),
        i("FAIRSHARE_QUEUES"),
        i("FILELIMIT"),
        i("HOST_POST_EXEC"),
        i("HOST_PRE_EXEC"),
        i("IGNORE_DEADLINE"),
        i("IMPT_SLOTBKLG"),
        i("INTERACTIVE"),
        i("INTERRUPTIBLE_BACKFILL"),
        i("JOB_ACCEPT_INTERVAL"),
        i("JOB_ACTION_WARNING_TIME"),
        i("JOB_CONTROLS"),
        i("JOB_IDLE"),
        i("JOB_OVERRUN"),
        i("JOB_SIZE_LIST"),
        i("JOB_STARTER"),
        i("JOB_UNDERRUN"),
        i("JOB_WARNING_ACTION"),
        i("LOCAL_MAX_PREEXEC_RETRY"),
        i("MANDATORY_EXTSCHED"),
        i("MAX_JOB_PREEMPT"),
        i("MAX_JOB_REQUEUE"),
        i("MAX_PREEXEC_RETRY"),
        i("MAX_PROTOCOL_INSTANCES"),
        i("MAX_TOTAL_TIME_PREEMPT"),
        i("MEMLIMIT"),
        i("MIG"),
        i("MIN_SWITCH_PERIOD"),
        i("NEW_JOB_SCHED_DELAY"),
        i("NICE"),
        i("NO_PREEMPT_INTERVAL"),
        i("PEND_TIME_LIMIT"),
        i("PJOB_LIMIT"),
        i("POST_EXEC"),
        i("PRE_EXEC"),
        i("PREEMPT_DELAY"),
        i("PROCESSLIMIT"),
        i("PROCLIMIT"),
        i("QUEUE_GROUP"),
        i("RELAX_JOB_DISPATCH_ORDER"),
        i("REMOTE_MAX_PREEXEC_RETRY"),
        i("REQUEUE_EXIT_VALUES"),
        i("RERUNNABLE"),
        i("RESOURCE_RESERVE"),
        i("RES_REQ"),
        i("RESRSV_LIMIT"),
        i("RESUME_COND"),
        i("RUN_TIME_DECAY"),
        i("RUN_WINDOW"),
        i("RUNLIMIT"),
        i("SLA_GUARANTEES_IGNORE"),
        i("STACKLIMIT"),
        i("STOP_COND"),
        i("SUCCESS_EXIT_VALUES"),
        i("SWAPLIMIT"),
        i("TASKLIMIT"),
        i("THREADLIMIT"),
        i("USE_PAM_CREDS"),
        i("USERS"),
        i("r15s"),
        i("r1m"),
        i("r15m"),
        i("ut"),
        i("pg"),
        i("io"),
        i("ls"),
        i("it"),
        i("tmp"),
        i("swp"),
        i("mem"),
    ]
};

const HOST_COLUMNS: &[Param] = &[
    p(
        "HOST_NAME",
        Name,
        "a host, a host group (each of its hosts), or `default` (every host not named)",
    ),
    p(
        "MXJ",
        Count,
        "a number; `!` is the host's ncpus; `()` (unlimited) is taken as ncpus with a warning",
    ),
    m("JL/U", Count),
    i("EXIT_RATE"),
    i("DISPATCH_WINDOW"),
    i("AFFINITY"),
    i("r15s"),
    i("r1m"),
    i("r15m"),
    i("ut"),
    i("pg"),
    i("io"),
    i("ls"),
    i("it"),
    i("tmp"),
    i("swp"),
    i("mem"),
];

const HOST_GROUP_COLUMNS: &[Param] = &[
    m("GROUP_NAME", Name),
    p(
        "GROUP_MEMBER",
        Words,
        "host names, other groups, `all`, `~host` exclusions and `name*` patterns, expanded where queues name the group",
    ),
    i("CONDENSE"),
    i("GROUP_ADMIN"),
];

const USER_COLUMNS: &[Param] = &[
    p(
        "USER_NAME",
        Name,
        "a user, a user group, `default`; `group@` gives each member the limits",
    ),
    m("MAX_JOBS", Count),
    m("JL/P", Number),
    i("MAX_PEND_JOBS"),
    i("MAX_PEND_SLOTS"),
    i("PRIORITY"),
];

const USER_GROUP_COLUMNS: &[Param] = &[
    m("GROUP_NAME", Name),
    p(
        "GROUP_MEMBER",
        Words,
        "users and other groups (expanded to their users); `all` is ignored with a warning",
    ),
    i("USER_SHARES"),
    i("GROUP_ADMIN"),
    i("PRIORITY"),
];

const LIMIT_KEYS: &[Param] = &[
    p("NAME", Name, "named in warnings"),
    p(
        "SLOTS",
        Count,
        "with QUEUES or PER_QUEUE alone: QJOB_LIMIT; with PER_USER = all as well: UJOB_LIMIT; with PER_HOST = all as well: HJOB_LIMIT; with USERS or PER_USER alone: MAX_JOBS; with PER_HOST alone: MXJ; the lowest limit wins",
    ),
    p(
        "QUEUES",
        Words,
        "one queue (a limit on several queues together is not modelled)",
    ),
    p("PER_QUEUE", Words, "each queue named"),
    p("USERS", Words, "one user or group"),
    p("PER_USER", Words, "`all` with QUEUES; else each user named"),
    p("PER_HOST", Words, "`all` with QUEUES; else each host named"),
    i("HOSTS"),
    i("PER_PROJECT"),
    i("PROJECTS"),
    i("JOBS"),
    i("MEM"),
    i("SWP"),
    i("TMP"),
    i("RESOURCE"),
    i("LIC_PROJECTS"),
    i("PER_LIC_PROJECT"),
    i("APPS"),
    i("PER_APP"),
    i("JOBS_PER_SCHED_CYCLE"),
    i("ELIGIBLE_PEND_JOBS"),
    i("INELIGIBLE"),
    i("CLUSTERS"),
    i("PER_CLUSTER"),
];

const CLUSTER_HOST_COLUMNS: &[Param] = &[
    m("HOSTNAME", Name),
    p(
        "server",
        Count,
        "0 (a client host, which runs no jobs) leaves the host out",
    ),
    m("RESOURCES", Words),
    p(
        "ncpus",
        Count,
        "mcfed's column: the host's processors (LSF detects them), the unit of JL/P and MXJ `!`",
    ),
    p(
        "maxmem",
        Count,
        "mcfed's column: the host's memory in MB (or with a K, M, G or T suffix), for the memory adjustment plug-in",
    ),
    p(
        "closed",
        YesNo,
        "mcfed's column: `Y` for a host closed by the administrator (`badmin hclose`)",
    ),
    i("model"),
    i("type"),
    i("REXPRI"),
    i("RUNWINDOW"),
    i("nd"),
    i("r15s"),
    i("r1m"),
    i("r15m"),
    i("ut"),
    i("pg"),
    i("io"),
    i("ls"),
    i("it"),
    i("tmp"),
    i("swp"),
    i("mem"),
];

const SHARED_CLUSTER_COLUMNS: &[Param] = &[
    p(
        "ClusterName",
        Name,
        "the clusters SNDJOBS_TO and RCVJOBS_FROM may name",
    ),
    i("Servers"),
];

const RESOURCE_COLUMNS: &[Param] = &[
    p(
        "RESOURCENAME",
        Name,
        "Boolean resources are the names hosts' RESOURCES may use",
    ),
    p(
        "TYPE",
        Words,
        "Boolean; Numeric and String resources are ignored with a warning",
    ),
    i("INTERVAL"),
    i("INCREASING"),
    i("DESCRIPTION"),
    i("RELEASE"),
    i("CONSUMABLE"),
];

/// lsb.params.
pub const LSB_PARAMS: FileSpec = FileSpec {
    name: "lsb.params",
    sections: &[read("Parameters", PARAMS)],
};

/// lsb.queues.
pub const LSB_QUEUES: FileSpec = FileSpec {
    name: "lsb.queues",
    sections: &[read("Queue", QUEUE)],
};

/// lsb.hosts.
pub const LSB_HOSTS: FileSpec = FileSpec {
    name: "lsb.hosts",
    sections: &[
        read("Host", HOST_COLUMNS),
        read("HostGroup", HOST_GROUP_COLUMNS),
        skip("HostPartition"),
        skip("ComputeUnit"),
    ],
};

/// lsb.users.
pub const LSB_USERS: FileSpec = FileSpec {
    name: "lsb.users",
    sections: &[
        read("User", USER_COLUMNS),
        read("UserGroup", USER_GROUP_COLUMNS),
        skip("UserMap"),
    ],
};

/// lsb.resources.
pub const LSB_RESOURCES: FileSpec = FileSpec {
    name: "lsb.resources",
    sections: &[
        read("Limit", LIMIT_KEYS),
        skip("GuaranteedResourcePool"),
        skip("HostExport"),
        skip("SharedResourceExport"),
        skip("ResourceReservation"),
        skip("PowerPolicy"),
        skip("ReservationUsage"),
    ],
};

/// lsf.cluster.NAME.
pub const LSF_CLUSTER: FileSpec = FileSpec {
    name: "lsf.cluster.NAME",
    sections: &[
        read("Host", CLUSTER_HOST_COLUMNS),
        skip("ClusterAdmins"),
        skip("Parameters"),
        skip("ResourceMap"),
        skip("RemoteClusters"),
    ],
};

/// lsf.shared.
pub const LSF_SHARED: FileSpec = FileSpec {
    name: "lsf.shared",
    sections: &[
        read("Cluster", SHARED_CLUSTER_COLUMNS),
        read("Resource", RESOURCE_COLUMNS),
        skip("HostType"),
        skip("HostModel"),
    ],
};

/// Every file, in the order the docs list them.
pub const FILES: [FileSpec; 7] = [
    LSB_PARAMS,
    LSB_QUEUES,
    LSB_HOSTS,
    LSB_USERS,
    LSB_RESOURCES,
    LSF_CLUSTER,
    LSF_SHARED,
];

/// The table docs/lsf-import.md shows: every parameter of every file with
/// what mcfed makes of it.
pub fn markdown() -> String {
    let mut text = String::new();
    for file in FILES {
        text.push_str(&format!("### {}\n\n", file.name));
        for section in file.sections.iter().filter(|section| section.read) {
            text.push_str(&format!(
                "Section `{}`:\n\n| parameter | mcfed | how |\n|---|---|---|\n",
                section.name
            ));
            for param in section.params {
                let (status, how) = match param.status {
                    Status::Modelled(_) => ("modelled", ""),
                    Status::Partial(_, how) => ("in part", how),
                    Status::Comment => ("kept", "written as a comment above the queue"),
                    Status::Ignored => ("ignored", "a warning at its line"),
                };
                text.push_str(&format!("| `{}` | {status} | {how} |\n", param.name));
            }
            text.push('\n');
        }
        let skipped: Vec<&str> = file
            .sections
            .iter()
            .filter(|section| !section.read)
            .map(|section| section.name)
            .collect();
        if !skipped.is_empty() {
            text.push_str(&format!(
                "Sections ignored, one warning each: {}.\n\n",
                skipped.join(", ")
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docs_list_every_parameter_as_the_catalogue_does() {
        let docs = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/lsf-import.md"
        ))
        .expect("docs/lsf-import.md");
        let table = markdown();
        if std::env::var_os("MCFED_PRINT_CATALOG").is_some() {
            #[allow(clippy::print_stdout)]
            {
                println!("{table}");
            }
        }
        assert!(
            docs.contains(&table),
            "docs/lsf-import.md does not hold the catalogue's table (run with MCFED_PRINT_CATALOG=1 to print it)"
        );
    }

    #[test]
    fn no_parameter_is_listed_twice_in_a_section() {
        for file in FILES {
            for section in file.sections {
                let mut names: Vec<String> = section.names().map(str::to_ascii_uppercase).collect();
                names.sort();
                let before = names.len();
                names.dedup();
                assert_eq!(before, names.len(), "{} {}", file.name, section.name);
            }
        }
    }
}
