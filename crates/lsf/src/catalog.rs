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
    /// A run time as `bsub -W` takes it, `[hour:]minute`, written as a
    /// duration.
    RunTime,
    /// Space-separated words.
    Words,
    /// A keyword value checked by mcfed's own parser for it.
    Keywords,
    /// `Y` or `N`.
    YesNo,
    /// lsf.conf's `1` or `0` (`Y`/`N` and `yes`/`no` are taken too),
    /// written as `Y` or `N`.
    Flag,
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
    /// Not modelled, but kept for export (the text says how): a queue's
    /// DESCRIPTION, a host's model and type.
    Kept(&'static str),
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

pub(super) const fn m(name: &'static str, conv: Conv) -> Param {
    Param {
        name,
        status: Status::Modelled(conv),
    }
}

pub(super) const fn p(name: &'static str, conv: Conv, how: &'static str) -> Param {
    Param {
        name,
        status: Status::Partial(conv, how),
    }
}

pub(super) const fn i(name: &'static str) -> Param {
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

mod markdown;
pub use markdown::markdown;

mod tables;
use tables::*;

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
        read("ResourceReservation", RESOURCE_RESERVATION_KEYS),
        skip("PowerPolicy"),
        skip("ReservationUsage"),
    ],
};

/// lsf.cluster.NAME.
pub const LSF_CLUSTER: FileSpec = FileSpec {
    name: "lsf.cluster.NAME",
    sections: &[
        read("Host", CLUSTER_HOST_COLUMNS),
        read("EmulatedHost", EMULATED_HOST_COLUMNS),
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
        read("HostType", HOST_TYPE_COLUMNS),
        read("HostModel", HOST_MODEL_COLUMNS),
    ],
};

/// The name of lsf.conf's one pseudo-section: the file has none, only
/// `KEY=value` lines.
pub const NO_SECTION: &str = "";

/// lsf.conf: `KEY=value` lines, no sections; mcfed reads the keys it
/// models and warns about every other.
pub const LSF_CONF: FileSpec = FileSpec {
    name: "lsf.conf",
    sections: &[read(NO_SECTION, LSF_CONF_KEYS)],
};

/// Every file, in the order the docs list them.
pub const FILES: [FileSpec; 8] = [
    LSB_PARAMS,
    LSB_QUEUES,
    LSB_HOSTS,
    LSB_USERS,
    LSB_RESOURCES,
    LSF_CLUSTER,
    LSF_SHARED,
    LSF_CONF,
];

#[cfg(test)]
mod tests {
    use super::*;

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
