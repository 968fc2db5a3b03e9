//! `[[cluster.reservation_policy]]` (lsb.resources' ResourceReservation
//! sections): NAME, USERS, HOSTS and TIME_WINDOW, checked at their
//! fields: a name given once, hosts of the cluster (a host entry's name
//! standing for all its hosts), time windows LSF's way.

use mcfed_cluster::{HostConfig, ReservationPolicyConfig, TimeWindow};
use rustc_hash::FxHashMap;

use crate::check::Checker;
use crate::format::RawCluster;
use crate::locate::FieldPath;

impl Checker<'_> {
    /// The reservation policies of cluster `raw`, at `path`.
    pub(super) fn reservation_policies(
        &mut self,
        raw: &RawCluster,
        path: &FieldPath,
        host_groups: &FxHashMap<&str, Vec<String>>,
        hosts: &[HostConfig],
    ) -> Vec<ReservationPolicyConfig> {
        let mut policies: Vec<ReservationPolicyConfig> = Vec::new();
        for (index, policy) in raw.reservation_policy.iter().enumerate() {
            let at = path.key("reservation_policy").index(index);
            if policies.iter().any(|other| other.name == policy.NAME) {
                self.problem(
                    at.key("NAME"),
                    format!("reservation policy `{}` is defined twice", policy.NAME),
                );
                continue;
            }
            let mut host_names = Vec::new();
            for word in policy.HOSTS.iter().flat_map(|words| &words.0) {
                let (not, name) = match word.strip_prefix('~') {
                    Some(name) => ("~", name),
                    None => ("", word.as_str()),
                };
                if name == "all" {
                    host_names.push(word.clone());
                } else if let Some(group) = host_groups.get(name) {
                    host_names.extend(group.iter().map(|host| format!("{not}{host}")));
                } else if hosts.iter().any(|host| host.name == name) {
                    host_names.push(word.clone());
                } else {
                    self.problem(at.key("HOSTS"), format!("no host named `{name}`"));
                }
            }
            let mut windows = Vec::new();
            for text in policy.TIME_WINDOW.iter().flat_map(|words| &words.0) {
                match text.parse::<TimeWindow>() {
                    Ok(window) => windows.push(window),
                    Err(message) => self.problem(at.key("TIME_WINDOW"), message),
                }
            }
            policies.push(ReservationPolicyConfig {
                name: policy.NAME.clone(),
                users: policy
                    .USERS
                    .as_ref()
                    .map_or_else(|| vec!["all".to_owned()], |users| users.0.clone()),
                hosts: host_names,
                windows,
            });
        }
        policies
    }
}
