//! The test federations' scenarios, built rather than copied: a
//! [`Scenario`] of [`Cluster`]s with their hosts and [`Queue`]s, written
//! as the TOML `mcfed` reads, and [`three_clusters`], the federation the
//! live tests share, which each test changes where it needs to.

use toml::Value;

/// A scenario, written by [`Scenario::text`].
#[derive(Clone, Debug)]
pub(crate) struct Scenario {
    name: String,
    params: Vec<(String, Value)>,
    clusters: Vec<Cluster>,
}

/// A cluster of a [`Scenario`].
#[derive(Clone, Debug)]
pub(crate) struct Cluster {
    name: String,
    params: Vec<(String, Value)>,
    /// Its hosts.
    pub(crate) hosts: Vec<Host>,
    /// Its queues, in the order the scenario gives them.
    pub(crate) queues: Vec<Queue>,
}

/// Alike hosts of a [`Cluster`]: `count` hosts called `name` (numbered
/// when more than one) of `mxj` slots each.
#[derive(Clone, Debug)]
pub(crate) struct Host {
    name: String,
    count: u32,
    mxj: u32,
}

impl Host {
    /// `count` hosts called `name` of `mxj` slots each.
    pub(crate) fn new(name: &str, count: u32, mxj: u32) -> Host {
        Host {
            name: name.to_owned(),
            count,
            mxj,
        }
    }
}

/// A queue of a [`Cluster`]: its name and keys.
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    name: String,
    keys: Vec<(String, Value)>,
}

impl Scenario {
    /// A scenario named `name`, without parameters or clusters.
    pub(crate) fn new(name: &str) -> Scenario {
        Scenario {
            name: name.to_owned(),
            params: Vec::new(),
            clusters: Vec::new(),
        }
    }

    /// With the federation-wide parameter `key` (`[params]`).
    pub(crate) fn param(mut self, key: &str, value: impl Into<Value>) -> Scenario {
        self.params.push((key.to_owned(), value.into()));
        self
    }

    /// With `cluster` after those given before.
    pub(crate) fn cluster(mut self, cluster: Cluster) -> Scenario {
        self.clusters.push(cluster);
        self
    }

    /// With cluster `name` changed by `change`.
    pub(crate) fn edit(mut self, name: &str, change: impl FnOnce(&mut Cluster)) -> Scenario {
        let cluster = self
            .clusters
            .iter_mut()
            .find(|cluster| cluster.name == name)
            .unwrap_or_else(|| panic!("no cluster {name}"));
        change(cluster);
        self
    }

    /// The scenario as TOML.
    pub(crate) fn text(&self) -> String {
        let mut text = format!("name = {}\n", Value::from(self.name.as_str()));
        if !self.params.is_empty() {
            text.push_str("[params]\n");
            push_keys(&mut text, &self.params);
        }
        for cluster in &self.clusters {
            cluster.write(&mut text);
        }
        text
    }
}

impl Cluster {
    /// A cluster named `name`, without hosts or queues.
    pub(crate) fn new(name: &str) -> Cluster {
        Cluster {
            name: name.to_owned(),
            params: Vec::new(),
            hosts: Vec::new(),
            queues: Vec::new(),
        }
    }

    /// With the cluster's own parameter `key` (`params = { ... }`).
    pub(crate) fn param(mut self, key: &str, value: impl Into<Value>) -> Cluster {
        self.params.push((key.to_owned(), value.into()));
        self
    }

    /// With `count` hosts called `name` of `mxj` slots each.
    pub(crate) fn hosts(mut self, name: &str, count: u32, mxj: u32) -> Cluster {
        self.hosts.push(Host::new(name, count, mxj));
        self
    }

    /// With `queue` after those given before.
    pub(crate) fn queue(mut self, queue: Queue) -> Cluster {
        self.queues.push(queue);
        self
    }

    fn write(&self, text: &mut String) {
        text.push_str("\n[[cluster]]\n");
        push_keys(text, &[("name".to_owned(), self.name.as_str().into())]);
        if !self.params.is_empty() {
            let params: Vec<String> = self
                .params
                .iter()
                .map(|(key, value)| format!("{key} = {value}"))
                .collect();
            text.push_str(&format!("params = {{ {} }}\n", params.join(", ")));
        }
        for host in &self.hosts {
            text.push_str("[[cluster.host]]\n");
            let mut keys = vec![("name".to_owned(), Value::from(host.name.as_str()))];
            if host.count != 1 {
                keys.push(("count".to_owned(), Value::from(host.count)));
            }
            keys.push(("MXJ".to_owned(), Value::from(host.mxj)));
            push_keys(text, &keys);
        }
        for queue in &self.queues {
            text.push_str("[[cluster.queue]]\n");
            push_keys(text, &[("name".to_owned(), queue.name.as_str().into())]);
            push_keys(text, &queue.keys);
        }
    }
}

impl Queue {
    /// A queue named `name`, without keys.
    pub(crate) fn new(name: &str) -> Queue {
        Queue {
            name: name.to_owned(),
            keys: Vec::new(),
        }
    }

    /// A queue receiving jobs from `from` (RCVJOBS_FROM).
    pub(crate) fn receiving(name: &str, from: &str) -> Queue {
        Queue::new(name).key("RCVJOBS_FROM", from)
    }

    /// A send queue forwarding to `to` (SNDJOBS_TO).
    pub(crate) fn sending(name: &str, to: &str) -> Queue {
        Queue::new(name).key("SNDJOBS_TO", to)
    }

    /// With `key` set to `value`.
    pub(crate) fn key(mut self, key: &str, value: impl Into<Value>) -> Queue {
        self.keys.push((key.to_owned(), value.into()));
        self
    }
}

fn push_keys(text: &mut String, keys: &[(String, Value)]) {
    for (key, value) in keys {
        text.push_str(&format!("{key} = {value}\n"));
    }
}

/// The federation the live tests share: Cluster1 sends its queue `send`
/// to `high` on Cluster2 (four hosts of 4 slots: 16) and on Cluster3 (one
/// host of 5 slots), collecting their counters (COUNT_PREEMPTABLE), which
/// they publish every 10 s.
pub(crate) fn three_clusters(name: &str) -> Scenario {
    Scenario::new(name)
        .param("MC_PLUGIN_UPDATE_INTERVAL", "10s")
        .cluster(
            Cluster::new("Cluster1")
                .param("MC_PLUGIN_SCHEDULE_ENHANCE", "COUNT_PREEMPTABLE")
                .queue(Queue::sending("send", "high@Cluster2 high@Cluster3")),
        )
        .cluster(
            Cluster::new("Cluster2")
                .hosts("c2host", 4, 4)
                .queue(Queue::receiving("high", "Cluster1")),
        )
        .cluster(
            Cluster::new("Cluster3")
                .hosts("c3host", 1, 5)
                .queue(Queue::receiving("high", "Cluster1")),
        )
}

#[test]
fn the_three_clusters_are_the_toml_the_live_tests_copied() {
    let copied = r#"name = "restart"
[params]
MC_PLUGIN_UPDATE_INTERVAL = "10s"

[[cluster]]
name = "Cluster1"
params = { MC_PLUGIN_SCHEDULE_ENHANCE = "COUNT_PREEMPTABLE" }
[[cluster.queue]]
name = "send"
SNDJOBS_TO = "high@Cluster2 high@Cluster3"

[[cluster]]
name = "Cluster2"
[[cluster.host]]
name = "c2host"
count = 4
MXJ = 4
[[cluster.queue]]
name = "high"
RCVJOBS_FROM = "Cluster1"

[[cluster]]
name = "Cluster3"
[[cluster.host]]
name = "c3host"
MXJ = 5
[[cluster.queue]]
name = "high"
RCVJOBS_FROM = "Cluster1"
"#;
    assert_eq!(three_clusters("restart").text(), copied);
}
