//! Generated federations for the round-trip properties: a submission
//! cluster `S` forwarding to one or two execution clusters `C1`, `C2`,
//! drawing every part of a cluster mcfed models from LSF configuration —
//! lsb.params (factors, the switches of the optional terms, CLEAN_PERIOD,
//! MAX_USER_PRIORITY, …), lsf.conf (LSB_REQUEUE_TO_BOTTOM, LSB_MIG2PEND), hosts (MXJ, JL/U, ncpus, GPUs, memory), queues
//! (limits, preemption, FAIRSHARE with users, groups, `group@`, `others`
//! and `default`, slot pools, RUNLIMIT and RUNTIME, …), user groups
//! (nested, `all`, their own USER_SHARES) and lsb.resources' Limits.

/// Choices drawn from proptest's bytes, so failures shrink.
pub(crate) struct Draw<'a>(&'a [u8], usize);

impl Draw<'_> {
    fn below(&mut self, n: usize) -> usize {
        let byte = self.0.get(self.1).copied().unwrap_or(0);
        self.1 += 1;
        usize::from(byte) % n.max(1)
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn range(&mut self, low: u32, high: u32) -> u32 {
        let span = usize::try_from(high - low + 1).unwrap_or(1);
        low + u32::try_from(self.below(span)).unwrap_or(0)
    }

    fn pick<'s>(&mut self, choices: &[&'s str]) -> &'s str {
        choices[self.below(choices.len())]
    }

    /// `line` with `percent` chance, else nothing.
    fn maybe(&mut self, percent: usize, line: impl FnOnce(&mut Self) -> String) -> String {
        if self.chance(percent) {
            line(self)
        } else {
            String::new()
        }
    }
}

/// The factors and switches of lsb.params and lsb.queues alike.
fn factors(draw: &mut Draw<'_>) -> String {
    let mut text = String::new();
    for name in [
        "CPU_TIME_FACTOR",
        "RUN_JOB_FACTOR",
        "HIST_HOURS",
        "FWD_JOB_FACTOR",
        "GPU_RUN_TIME_FACTOR",
    ] {
        text.push_str(&draw.maybe(20, |draw| {
            let value = [0.1, 0.7, 2.5, 3.0, 10.0][draw.below(5)];
            format!("{name} = {value:?}\n")
        }));
    }
    text.push_str(&draw.maybe(20, |draw| {
        let value = [0.0, 0.25, 0.5, 1.0][draw.below(4)];
        format!("COMMITTED_RUN_TIME_FACTOR = {value:?}\n")
    }));
    for name in [
        "RUN_TIME_DECAY",
        "ENABLE_HIST_RUN_TIME",
        "ENABLE_GPU_HIST_RUN_TIME",
    ] {
        text.push_str(&draw.maybe(20, |draw| {
            format!("{name} = \"{}\"\n", draw.pick(&["Y", "N"]))
        }));
    }
    text
}

fn guard(draw: &mut Draw<'_>, name: &str) -> String {
    match draw.below(4) {
        0 => format!("{name} = \"{}m\"\n", draw.range(1, 120)),
        1 => format!("{name} = \"{}%\"\n", draw.range(1, 100)),
        _ => String::new(),
    }
}

/// A run time in whole minutes, as LSF writes them.
fn minutes(draw: &mut Draw<'_>) -> String {
    match draw.below(3) {
        0 => format!("{}h", draw.range(1, 48)),
        1 => format!("{}h {}m", draw.range(1, 5), draw.range(1, 59)),
        _ => format!("{}m", draw.range(1, 600)),
    }
}

/// lsb.params of any cluster.
fn cluster_params(draw: &mut Draw<'_>) -> String {
    let mut text = factors(draw);
    text.push_str(&draw.maybe(20, |draw| {
        format!("CLEAN_PERIOD = \"{}s\"\n", draw.range(1, 86_400))
    }));
    text.push_str(&draw.maybe(20, |draw| {
        format!("MAX_USER_PRIORITY = {}\n", draw.range(1, 1000))
    }));
    // lsf.conf's keys (an off switch is LSF's default, not written back).
    for key in ["LSB_REQUEUE_TO_BOTTOM", "LSB_MIG2PEND"] {
        text.push_str(&draw.maybe(30, |draw| {
            format!("{key} = \"{}\"\n", draw.pick(&["Y", "Y", "N"]))
        }));
    }
    text
}

/// One host entry of an execution cluster.
fn host(draw: &mut Draw<'_>, name: &str) -> String {
    let mut text = format!(
        "\n[[cluster.host]]\nname = \"{name}\"\nMXJ = {}\n",
        draw.range(1, 8)
    );
    text.push_str(&draw.maybe(40, |draw| format!("count = {}\n", draw.range(1, 3))));
    text.push_str(&draw.maybe(40, |draw| format!("ncpus = {}\n", draw.range(1, 16))));
    text.push_str(&draw.maybe(30, |draw| format!("ngpus = {}\n", draw.range(1, 8))));
    text.push_str(&draw.maybe(40, |draw| format!("\"JL/U\" = {}\n", draw.range(1, 4))));
    text.push_str(&draw.maybe(40, |draw| {
        format!("memory_mb = {}\n", draw.range(512, 65536))
    }));
    text.push_str(&draw.maybe(40, |_| "resources = [\"bigmem\"]\n".to_owned()));
    if draw.chance(10) {
        text.push_str("closed = true\n");
    }
    text
}

/// FAIRSHARE of a queue: users, a group collectively, a group's members,
/// `others` and `default`.
fn fairshare(draw: &mut Draw<'_>, groups: bool) -> String {
    let shares = if groups {
        draw.pick(&[
            "[alice, 3] [bob, 2] [default, 1]",
            "[g2, 3] [default, 1]",
            "[g1@, 2] [carol, 1] [others, 1]",
            "[g1, 4] [others, 2]",
        ])
    } else {
        draw.pick(&["[alice, 3] [bob, 2] [default, 1]", "[alice, 1] [others, 1]"])
    };
    format!("FAIRSHARE = \"USER_SHARES[{shares}]\"\n")
}

/// The ordinary queues `q0`… of an execution cluster; `q0` receives from
/// `S`.
fn queue(
    draw: &mut Draw<'_>,
    queue: usize,
    queues: usize,
    entries: &[String],
    groups: bool,
) -> String {
    let mut text = format!(
        "\n[[cluster.queue]]\nname = \"q{queue}\"\nPRIORITY = {}\n",
        draw.range(1, 99)
    );
    if queue == 0 {
        let from = if draw.chance(50) { "S" } else { "allclusters" };
        text.push_str(&format!("RCVJOBS_FROM = \"{from}\"\n"));
        match draw.below(3) {
            0 => text.push_str(&format!("IMPT_JOBBKLG = {}\n", draw.range(0, 500))),
            1 => text.push_str("IMPT_JOBBKLG = \"infinit\"\n"),
            _ => {}
        }
    }
    let other = (queue + 1) % queues;
    let preemption = match draw.below(5) {
        0 => "PREEMPTIVE".to_owned(),
        1 => "PREEMPTABLE".to_owned(),
        2 if other != queue => format!("PREEMPTIVE[q{other}+{}]", draw.range(1, 5)),
        _ => String::new(),
    };
    if !preemption.is_empty() {
        text.push_str(&format!("PREEMPTION = \"{preemption}\"\n"));
    }
    for limit in ["QJOB_LIMIT", "UJOB_LIMIT", "HJOB_LIMIT"] {
        text.push_str(&draw.maybe(30, |draw| format!("{limit} = {}\n", draw.range(1, 50))));
    }
    if draw.chance(40) {
        text.push_str(&fairshare(draw, groups));
    }
    text.push_str(&factors(draw));
    text.push_str(&draw.maybe(30, |draw| {
        format!(
            "SLOT_RESERVE = \"MAX_RESERVE_TIME[{}]\"\n",
            draw.range(1, 5)
        )
    }));
    text.push_str(&draw.maybe(30, |_| "BACKFILL = \"Y\"\n".to_owned()));
    text.push_str(&draw.maybe(20, |_| "TERMINATE_WHEN = \"PREEMPT\"\n".to_owned()));
    text.push_str(&guard(draw, "NO_PREEMPT_RUN_TIME"));
    text.push_str(&guard(draw, "NO_PREEMPT_FINISH_TIME"));
    text.push_str(&draw.maybe(30, |draw| format!("RUNLIMIT = \"{}\"\n", minutes(draw))));
    text.push_str(&draw.maybe(30, |draw| format!("RUNTIME = \"{}\"\n", minutes(draw))));
    if draw.chance(30) {
        let hosts: Vec<&str> = entries
            .iter()
            .map(String::as_str)
            .take(1 + draw.below(entries.len()))
            .collect();
        text.push_str(&format!("HOSTS = \"{}\"\n", hosts.join(" ")));
    }
    text
}

/// Two queues sharing a slot pool (queue-based fairshare): the pool's
/// settings on its first queue, neither preemptive nor preemptable.
fn slot_pool(draw: &mut Draw<'_>) -> String {
    let mut text = String::new();
    for (index, name) in ["pa", "pb"].iter().enumerate() {
        text.push_str(&format!(
            "\n[[cluster.queue]]\nname = \"{name}\"\nPRIORITY = {}\nSLOT_POOL = \"pool\"\nSLOT_SHARE = {}\n",
            draw.range(1, 99),
            draw.range(1, 100)
        ));
        if index == 0 {
            text.push_str(&draw.maybe(50, |draw| {
                format!("MAX_SLOTS_IN_POOL = {}\n", draw.range(1, 40))
            }));
            text.push_str(&draw.maybe(50, |draw| {
                format!("USE_PRIORITY_IN_POOL = \"{}\"\n", draw.pick(&["Y", "N"]))
            }));
        }
        text.push_str(&draw.maybe(30, |draw| format!("RUNLIMIT = \"{}\"\n", minutes(draw))));
    }
    text
}

/// lsb.users' user groups: `g1` of users, `g2` nesting `g1`, maybe `all`,
/// with their own USER_SHARES (hierarchical fairshare).
fn user_groups(draw: &mut Draw<'_>) -> String {
    let mut text =
        String::from("\n[[cluster.user_group]]\nname = \"g1\"\nGROUP_MEMBER = \"alice bob\"\n");
    text.push_str(&draw.maybe(50, |draw| {
        format!(
            "USER_SHARES = \"[alice, {}] [bob, {}]\"\n",
            draw.range(1, 9),
            draw.range(1, 9)
        )
    }));
    text.push_str("\n[[cluster.user_group]]\nname = \"g2\"\nGROUP_MEMBER = \"g1 carol\"\n");
    text.push_str(&draw.maybe(50, |draw| {
        format!(
            "USER_SHARES = \"([g1, {}] [carol, {}])\"\n",
            draw.range(1, 9),
            draw.range(1, 9)
        )
    }));
    text.push_str(&draw.maybe(30, |_| {
        "\n[[cluster.user_group]]\nname = \"everyone\"\nGROUP_MEMBER = \"all\"\n".to_owned()
    }));
    text.push_str(&draw.maybe(40, |draw| {
        format!(
            "\n[[cluster.user]]\nname = \"g1\"\nMAX_JOBS = {}\n",
            draw.range(1, 40)
        )
    }));
    text
}

/// lsb.resources' Limits: consumers of each kind together, apart or left
/// out, with `all` and `~` exclusions; SLOTS and/or JOBS.
fn limits(draw: &mut Draw<'_>, entries: &[String], queues: usize, groups: bool) -> String {
    let mut text = String::new();
    for index in 0..draw.below(4) {
        text.push_str(&format!("\n[[cluster.limit]]\nNAME = \"l{index}\"\n"));
        let users: &[&str] = if groups {
            &["all", "alice", "all ~bob", "g1", "alice g2", "all ~g1"]
        } else {
            &["all", "alice", "all ~bob", "alice bob"]
        };
        let queue_names: Vec<String> = (0..queues).map(|queue| format!("q{queue}")).collect();
        let all_queues = format!("all ~q{}", queues - 1);
        let queue_lists = [
            "all",
            "q0",
            queue_names.last().map_or("q0", String::as_str),
            all_queues.as_str(),
        ];
        let first_host = entries[0].as_str();
        let all_hosts = entries.join(" ");
        let host_lists = ["all", first_host, all_hosts.as_str()];
        for (together, apart, choices) in [
            ("USERS", "PER_USER", users.to_vec()),
            ("QUEUES", "PER_QUEUE", queue_lists.to_vec()),
            ("HOSTS", "PER_HOST", host_lists.to_vec()),
        ] {
            match draw.below(3) {
                0 => text.push_str(&format!("{together} = \"{}\"\n", draw.pick(&choices))),
                1 => text.push_str(&format!("{apart} = \"{}\"\n", draw.pick(&choices))),
                _ => {}
            }
        }
        let (slots, jobs) = match draw.below(3) {
            0 => (true, false),
            1 => (false, true),
            _ => (true, true),
        };
        if slots {
            text.push_str(&format!("SLOTS = {}\n", draw.range(1, 40)));
        }
        if jobs {
            text.push_str(&format!("JOBS = {}\n", draw.range(1, 40)));
        }
    }
    text
}

/// One execution cluster `C{index}`, receiving from `S`.
fn execution_cluster(draw: &mut Draw<'_>, index: usize) -> String {
    let mut text = format!("\n[[cluster]]\nname = \"C{index}\"\n\n[cluster.params]\n");
    text.push_str(&draw.maybe(80, |draw| {
        format!("MC_PLUGIN_UPDATE_INTERVAL = \"{}s\"\n", draw.range(1, 120))
    }));
    text.push_str(&draw.maybe(40, |draw| {
        format!("MBD_SLEEP_TIME = \"{}s\"\n", draw.range(1, 90))
    }));
    text.push_str(&cluster_params(draw));
    text.push_str(&draw.maybe(40, |_| {
        "PREEMPT_FOR = \"GROUP_MAX LEAST_RUN_TIME\"\n".to_owned()
    }));
    text.push_str(&guard(draw, "NO_PREEMPT_FINISH_TIME"));
    if draw.chance(20) {
        text.push_str(&format!(
            "FAIRSHARE_ADJUSTMENT_PLUGIN = \"memory\"\nFAIRSHARE_ADJUSTMENT_THRESHOLD = {:?}\n",
            [0.5, 1.0, 1.5][draw.below(3)]
        ));
    }
    let mut entries = Vec::new();
    for letter in ["a", "b", "c"].iter().take(1 + draw.below(3)) {
        let name = format!("c{index}{letter}");
        text.push_str(&host(draw, &name));
        entries.push(name);
    }
    let groups = draw.chance(50);
    let queues = 1 + draw.below(3);
    for index in 0..queues {
        text.push_str(&queue(draw, index, queues, &entries, groups));
    }
    if draw.chance(40) {
        text.push_str(&slot_pool(draw));
    }
    if groups {
        text.push_str(&user_groups(draw));
    }
    for user in ["alice", "default"] {
        if draw.chance(40) {
            text.push_str(&format!(
                "\n[[cluster.user]]\nname = \"{user}\"\nMAX_JOBS = {}\n",
                draw.range(1, 40)
            ));
            text.push_str(&draw.maybe(40, |_| "\"JL/P\" = 1.5\n".to_owned()));
        }
    }
    text.push_str(&limits(draw, &entries, queues, groups));
    text
}

/// A federation: a submission cluster `S` forwarding to one or two
/// execution clusters.
pub(crate) fn federation(bytes: &[u8]) -> String {
    let mut draw = Draw(bytes, 0);
    let executions = 1 + draw.below(2);
    let modes = [
        "COUNT_PREEMPTABLE",
        "RESOURCE_ONLY",
        "COUNT_PREEMPTABLE HIGH_QUEUE_PRIORITY",
        "COUNT_PREEMPTABLE PREEMPTABLE_QUEUE_PRIORITY PENDING_WHEN_NOSLOTS",
    ];
    let sleep = draw.range(10, 60);
    let mut text = format!(
        "[[cluster]]\nname = \"S\"\n\n[cluster.params]\nMC_PLUGIN_SCHEDULE_ENHANCE = \"{}\"\nMBD_SLEEP_TIME = \"{sleep}s\"\n",
        modes[draw.below(modes.len())]
    );
    text.push_str(&draw.maybe(40, |draw| format!("MAX_FORWARDS = {}\n", draw.range(1, 20))));
    text.push_str(&cluster_params(&mut draw));
    let targets: Vec<String> = (1..=executions)
        .map(|index| format!("q0@C{index}"))
        .collect();
    text.push_str(&format!(
        "\n[[cluster.queue]]\nname = \"send\"\nPRIORITY = 30\nSNDJOBS_TO = \"{}\"\n",
        targets.join(" ")
    ));
    if draw.chance(50) {
        text.push_str(&format!(
            "MAX_RSCHED_TIME = \"{}s\"\n",
            sleep * draw.range(1, 10)
        ));
    }
    if draw.chance(40) {
        // Fairshare on a send queue orders forwarding; FWD_JOB_FACTOR
        // weighs the user's forwarded slots.
        text.push_str(&fairshare(&mut draw, false));
        text.push_str(&draw.maybe(60, |draw| {
            format!("FWD_JOB_FACTOR = {:?}\n", [0.5, 1.0, 2.0][draw.below(3)])
        }));
    }
    for index in 1..=executions {
        text.push_str(&execution_cluster(&mut draw, index));
    }
    text
}

/// Descriptions an LSF site may write, each a trap for a writer: quotes,
/// a `#` (a comment outside quotes), a trailing `\` (a continuation), a
/// text in quotes of its own, one long enough to be wrapped, non-ASCII.
const DESCRIPTIONS: [&str; 8] = [
    r#"For "urgent" jobs of the night shift"#,
    "Jobs # one to five, by queue",
    r"Ends in a backslash \",
    r#""Fully quoted""#,
    "A long description that LSF keeps on several lines with continuations, as administrators write them when they explain a queue",
    "Ünïcode — and a dash",
    r#"Both "quotes" and # a hash"#,
    "plain",
];

/// Comment lines above a queue's `Begin Queue`.
const COMMENTS: [&[&str]; 3] = [
    &["The queue of the night shift."],
    &["Two lines,", "", "and an empty one between."],
    &[r#"With "quotes", a # and a \ in it."#],
];

/// `text` with what the TOML of an imported site keeps as comments above
/// its tables — queues' comment lines and DESCRIPTIONs, hosts' models and
/// types — drawn from `bytes`.
pub(crate) fn with_notes(text: &str, bytes: &[u8]) -> String {
    let mut draw = Draw(bytes, 0);
    let mut out = String::new();
    for line in text.lines() {
        if line == "[[cluster.queue]]" {
            if draw.chance(50) {
                for comment in COMMENTS[draw.below(COMMENTS.len())] {
                    out.push_str(format!("# {comment}").trim_end());
                    out.push('\n');
                }
            }
            if draw.chance(70) {
                let description = DESCRIPTIONS[draw.below(DESCRIPTIONS.len())];
                let escaped = description.replace('\\', "\\\\").replace('"', "\\\"");
                out.push_str(&format!("# DESCRIPTION = \"{escaped}\"\n"));
            }
        } else if line == "[[cluster.host]]" {
            if draw.chance(50) {
                out.push_str(&format!(
                    "# model = \"{}\"\n",
                    draw.pick(&["XeonE5", "Power9"])
                ));
            }
            if draw.chance(50) {
                out.push_str(&format!(
                    "# type = \"{}\"\n",
                    draw.pick(&["LINUX86", "LINUXPPC64"])
                ));
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
