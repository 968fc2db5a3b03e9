//! Every command README.md and docs/*.md show is run, and fails the test
//! on a panic or an error exit: the in-process ones as shown (files they
//! write go to a temporary directory, million-job traces are scaled down),
//! the LSF-style ones against live `mcfed cluster` processes started as the
//! README starts them (on ports the OS picks, so tests can run side by
//! side). The commands are found in the docs (every line of a `sh` block,
//! every `$ ` line of a `text` block) and each must have a plan in
//! [`PLANS`], so a command added to the docs without one fails the test,
//! as does a plan for a command the docs no longer show. The README's
//! tables — the sweep and a decision — are compared with what the commands
//! print.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

mod common;
use common::live::{Federation, eventually, links_up_with_updates, mcfed as mcfed30};
use common::mcfed_within;

/// What the test does with one documented command.
#[derive(Clone, Copy, Debug)]
enum Plan {
    /// Run these `mcfed` arguments (`{tmp}`: the test's temporary
    /// directory); `> FILE` sends standard output there.
    Run(&'static [&'static str]),
    /// Run these against the live federation (with its address and
    /// certificates); `!CODE PATTERN ...` expects that exit status and
    /// that text on standard error instead of success.
    Live(&'static [&'static str]),
    /// Part of starting the live federation (certificates, environment,
    /// the cluster processes).
    Setup,
    /// Not run by tests, and why.
    NotRun(&'static str),
}

const EXAMPLE1: &str = "scenarios/forwarding/example1-count-preemptable.toml";
const BENCH: &str =
    "a benchmark: minutes of wall clock, measured by hand (docs/performance.md gives its figures)";

/// Every command the docs show, with what the test does with it.
const PLANS: &[(&str, Plan)] = &[
    (
        "cargo run --release -- run scenarios/forwarding/example1-count-preemptable.toml",
        Plan::Run(&["run scenarios/forwarding/example1-count-preemptable.toml"]),
    ),
    (
        "cargo test --workspace --locked",
        Plan::NotRun("the test suite itself"),
    ),
    (
        "cargo run --release -- gen swf -o /tmp/trace.swf --jobs 100000 --processors 32 --load 0.74",
        Plan::Run(&["gen swf -o {tmp}/trace.swf --jobs 2000 --processors 32 --load 0.74"]),
    ),
    (
        "cargo run --release -- replay /tmp/trace.swf --hosts 32",
        Plan::Run(&["replay {tmp}/trace.swf --hosts 32"]),
    ),
    (
        "mcfed run SCENARIO",
        Plan::Run(&["run scenarios/forwarding/example1-count-preemptable.toml"]),
    ),
    (
        "mcfed run SCENARIO --report json",
        Plan::Run(&["run scenarios/forwarding/example1-count-preemptable.toml --report json"]),
    ),
    (
        "mcfed run SCENARIO --report summary",
        Plan::Run(&["run scenarios/forwarding/example1-count-preemptable.toml --report summary"]),
    ),
    (
        "mcfed run SCENARIO --check",
        Plan::Run(&["run scenarios/forwarding/example1-count-preemptable.toml --check"]),
    ),
    (
        "mcfed validate SCENARIO",
        Plan::Run(&["validate scenarios/forwarding/example1-count-preemptable.toml"]),
    ),
    (
        "mcfed run SCENARIO --engine actors",
        Plan::Run(&["run scenarios/forwarding/example1-count-preemptable.toml --engine actors"]),
    ),
    (
        "mcfed run SCENARIO --show queues --at 10m",
        Plan::Run(&[
            "run scenarios/preemption/case-study-three-queues.toml --show queues --at 10m",
        ]),
    ),
    (
        "mcfed run SCENARIO --show jobs",
        Plan::Run(&["run scenarios/control/job-control.toml --show jobs"]),
    ),
    (
        "mcfed run scenarios/chaos/prompt-updates.toml --delay 45s",
        Plan::Run(&["run scenarios/chaos/prompt-updates.toml --delay 45s"]),
    ),
    (
        "mcfed run scenarios/chaos/reordered-updates.toml --report json --events > run.jsonl",
        Plan::Run(&[
            "run scenarios/chaos/reordered-updates.toml --report json --events > {tmp}/run.jsonl",
        ]),
    ),
    (
        "mcfed report run.jsonl --plots plots/",
        Plan::Run(&["report {tmp}/run.jsonl --plots {tmp}/plots/"]),
    ),
    (
        "mcfed report run.jsonl --format json",
        Plan::Run(&["report {tmp}/run.jsonl --format json"]),
    ),
    (
        "mcfed launch scenarios/chaos/launched-updates.toml --delay 45s --speed 20 --report json > launched.jsonl",
        Plan::Run(&[
            "launch scenarios/chaos/launched-updates.toml --delay 45s --speed 20 --report json --base-port 0 > {tmp}/launched.jsonl",
        ]),
    ),
    (
        "mcfed report launched.jsonl",
        Plan::Run(&["report {tmp}/launched.jsonl"]),
    ),
    (
        "mcfed launch scenarios/chaos/launched-updates.toml --report json --speed 20 --base-port 0 --delay 45s > run.jsonl",
        Plan::Run(&[
            "launch scenarios/chaos/launched-updates.toml --report json --speed 20 --base-port 0 --delay 45s > {tmp}/launched2.jsonl",
        ]),
    ),
    (
        "mcfed sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --plot docs/img/sweep-churn.svg",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --plot {tmp}/sweep-churn.svg > {tmp}/sweep.md",
        ]),
    ),
    (
        "mcfed sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --plot sweep.svg",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --plot {tmp}/sweep.svg",
        ]),
    ),
    (
        "time mcfed sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3",
        ]),
    ),
    (
        "mcfed launch scenarios/forwarding/example1-count-preemptable.toml --speed 20 --check",
        Plan::Run(&[
            "launch scenarios/forwarding/example1-count-preemptable.toml --speed 20 --check --base-port 0",
        ]),
    ),
    (
        "mcfed launch FILE --report json --base-port 0",
        Plan::Run(&[
            "launch scenarios/forwarding/example1-count-preemptable.toml --report json --base-port 0 --speed 40",
        ]),
    ),
    (
        "mcfed certs init certs --clusters Cluster1,Cluster2,Cluster3",
        Plan::Setup,
    ),
    (
        "mcfed certs init certs --scenario FILE",
        Plan::Run(&[
            "certs init {tmp}/certs-from-scenario --scenario scenarios/forwarding/example1-count-preemptable.toml",
        ]),
    ),
    (
        "export MCFED_SCENARIO=scenarios/forwarding/example1-count-preemptable.toml MCFED_CERTS=certs",
        Plan::Setup,
    ),
    ("export MCFED_CERTS=certs MCFED_SCENARIO=FILE", Plan::Setup),
    (
        "mcfed cluster --scenario $MCFED_SCENARIO --name Cluster2 --speed 10 &",
        Plan::Setup,
    ),
    (
        "mcfed cluster --scenario $MCFED_SCENARIO --name Cluster3 --speed 10 &",
        Plan::Setup,
    ),
    (
        "mcfed cluster --scenario $MCFED_SCENARIO --name Cluster1 --speed 10 &",
        Plan::Setup,
    ),
    (
        "mcfed cluster --scenario FILE --name Cluster2 [--certs certs] [--speed 10]",
        Plan::Setup,
    ),
    (
        "mcfed bclusters --cluster Cluster1",
        Plan::Live(&[
            "bclusters --cluster Cluster1",
            "bclusters --cluster Cluster1 -json",
            "bclusters --cluster Cluster1 -o json",
        ]),
    ),
    (
        "mcfed bsub --cluster Cluster1 -q send -J myjob -n 2 -W 2:00",
        Plan::Live(&["bsub --cluster Cluster1 -q send -J myjob -n 2 -W 2:00"]),
    ),
    (
        "mcfed bjobs --cluster Cluster1 -fwd",
        Plan::Live(&["bjobs --cluster Cluster1 -fwd"]),
    ),
    (
        "mcfed bjobs --cluster Cluster1 -l",
        Plan::Live(&["bjobs --cluster Cluster1 -l"]),
    ),
    (
        "mcfed bstop --cluster Cluster1 1",
        Plan::Live(&["bstop --cluster Cluster1 1"]),
    ),
    (
        "mcfed bsub --cluster Cluster1 -q send [-n SLOTS] [-W RUNLIMIT] [-R RES] [-u USER] [-J NAME] [-o FILE] [-e FILE] [-sp PRIORITY] [--run-time 1h]",
        Plan::Live(&[
            "bsub --cluster Cluster1 -q send",
            "bsub --cluster Cluster1 -q send -n 2 -W 30 -R bigmem -u alice -J full -o out.%J -e err.%J --run-time 1h",
            "bsub --cluster Cluster1 -q send -R select[bigmem&&fast] -o json",
            "bsub --cluster Cluster1 -q send -json",
            "!2 MAX_USER_PRIORITY bsub --cluster Cluster1 -q send -sp 5",
        ]),
    ),
    (
        "mcfed bjobs --cluster Cluster1 [JOBID ...] [-fwd] [-l] [-a] [-d] [-r] [-p] [-s] [-u USER] [-q QUEUE] [-w] [-o \"FIELD ...\"] [-json]",
        Plan::Live(&[
            "bjobs --cluster Cluster1",
            "bjobs --cluster Cluster1 1 2",
            "bjobs --cluster Cluster1 -fwd -l",
            "bjobs --cluster Cluster1 -a",
            "bjobs --cluster Cluster1 -d",
            "bjobs --cluster Cluster1 -r",
            "bjobs --cluster Cluster1 -p",
            "bjobs --cluster Cluster1 -s",
            "bjobs --cluster Cluster1 -u alice",
            "bjobs --cluster Cluster1 -q send -w",
            "bjobs --cluster Cluster1 -o \"jobid:6 stat queue forward_cluster\"",
            "bjobs --cluster Cluster1 -json",
            "bjobs --cluster Cluster1 -o json",
            "bjobs --cluster Cluster2 -a -o json",
        ]),
    ),
    (
        "mcfed bhist --cluster Cluster1 [-l] [-a] [-d] [-u USER] [-q QUEUE] [JOBID ...]",
        Plan::Live(&[
            "bhist --cluster Cluster1",
            "bhist --cluster Cluster1 -l 1",
            "bhist --cluster Cluster1 -a",
            "bhist --cluster Cluster1 -d",
            "bhist --cluster Cluster1 -a -u user1 -q send",
            "bhist --cluster Cluster2 -l -a",
            "bhist --cluster Cluster1 -a -json",
        ]),
    ),
    (
        "mcfed bacct --cluster Cluster1 [-u USER] [-q QUEUE] [JOBID ...]",
        Plan::Live(&[
            "bacct --cluster Cluster1",
            "bacct --cluster Cluster1 -u user1 -q send",
            "bacct --cluster Cluster1 1",
            "bacct --cluster Cluster2 -json",
        ]),
    ),
    (
        "mcfed bqueues --cluster Cluster2 [-l] [QUEUE ...]",
        Plan::Live(&[
            "bqueues --cluster Cluster2",
            "bqueues --cluster Cluster2 -l",
            "bqueues --cluster Cluster2 HighPriority",
            "bqueues --cluster Cluster2 -json",
        ]),
    ),
    (
        "mcfed bhosts --cluster Cluster2 [-l] [HOST ...]",
        Plan::Live(&[
            "bhosts --cluster Cluster2",
            "bhosts --cluster Cluster2 -l",
            "bhosts --cluster Cluster2 c2host1",
            "bhosts --cluster Cluster2 -json",
        ]),
    ),
    (
        "mcfed lsid --cluster Cluster1",
        Plan::Live(&["lsid --cluster Cluster1", "lsid --cluster Cluster1 -json"]),
    ),
    (
        "mcfed bparams --cluster Cluster1 [-l]",
        Plan::Live(&[
            "bparams --cluster Cluster1",
            "bparams --cluster Cluster1 -l",
            "bparams --cluster Cluster1 -json",
        ]),
    ),
    (
        "mcfed bresume --cluster Cluster1 JOBID ...",
        Plan::Live(&["bresume --cluster Cluster1 1"]),
    ),
    (
        "mcfed bmod --cluster Cluster1 [-W RUNLIMIT | -Wn] [-n SLOTS] [-sp PRIORITY] JOBID ...",
        Plan::Live(&[
            "bmod --cluster Cluster2 -W 30 -n 2 72",
            "bmod --cluster Cluster2 -Wn 72",
            "bmod --cluster Cluster1 -W 3:00 1",
            "!1 MAX_USER_PRIORITY bmod --cluster Cluster2 -sp 5 72",
        ]),
    ),
    (
        "mcfed bswitch --cluster Cluster1 QUEUE JOBID ...",
        Plan::Live(&["bswitch --cluster Cluster2 LowPriority 73"]),
    ),
    (
        "mcfed brequeue --cluster Cluster1 JOBID ...",
        Plan::Live(&["brequeue --cluster Cluster2 1"]),
    ),
    (
        "mcfed bstop --cluster Cluster1 JOBID ...",
        Plan::Live(&[
            "bstop --cluster Cluster2 74",
            "bstop --cluster Cluster1 -J full",
        ]),
    ),
    (
        "mcfed bkill --cluster Cluster1 JOBID ...",
        Plan::Live(&[
            "bkill --cluster Cluster1 1",
            "bkill --cluster Cluster1 -J full",
            "!1 no matching job bkill --cluster Cluster1 999",
        ]),
    ),
    (
        "mcfed gen swf -o trace.swf --jobs 10000 --processors 32 --load 0.74",
        Plan::Run(&["gen swf -o {tmp}/trace.swf --jobs 2000 --processors 32 --load 0.74"]),
    ),
    (
        "mcfed replay trace.swf --hosts 32",
        Plan::Run(&["replay {tmp}/trace.swf --hosts 32"]),
    ),
    (
        "mcfed replay trace.swf --hosts 8 --mxj 4 --clusters 3 --print-scenario",
        Plan::Run(&["replay {tmp}/trace.swf --hosts 8 --mxj 4 --clusters 3 --print-scenario"]),
    ),
    (
        "mcfed replay trace.swf --hosts 8 --mxj 4 --jobs-csv jobs.csv",
        Plan::Run(&["replay {tmp}/trace.swf --hosts 8 --mxj 4 --jobs-csv {tmp}/jobs.csv"]),
    ),
    (
        "mcfed gen swf -o easy.swf --jobs 1000000 --processors 32 --max-width 1 --load 0.74",
        Plan::Run(&[
            "gen swf -o {tmp}/easy.swf --jobs 2000 --processors 32 --max-width 1 --load 0.74",
        ]),
    ),
    (
        "mcfed gen swf -o deep.swf --jobs 1000000 --processors 16 --max-width 1 --load 1.5",
        Plan::Run(&[
            "gen swf -o {tmp}/deep.swf --jobs 2000 --processors 16 --max-width 1 --load 1.5",
        ]),
    ),
    (
        "mcfed gen swf -o fed.swf  --jobs 1000000 --processors 320 --max-width 1 --load 0.74",
        Plan::Run(&[
            "gen swf -o {tmp}/fed.swf --jobs 2000 --processors 320 --max-width 1 --load 0.74",
        ]),
    ),
    (
        "/usr/bin/time -f \"%e s %M KB\" mcfed replay easy.swf --hosts 32",
        Plan::Run(&["replay {tmp}/easy.swf --hosts 32"]),
    ),
    (
        "/usr/bin/time -f \"%e s %M KB\" mcfed replay deep.swf --hosts 16",
        Plan::Run(&["replay {tmp}/deep.swf --hosts 16"]),
    ),
    (
        "/usr/bin/time -f \"%e s %M KB\" mcfed replay fed.swf --hosts 32 --clusters 10",
        Plan::Run(&["replay {tmp}/fed.swf --hosts 32 --clusters 10"]),
    ),
    (
        "cargo bench -p mcfed-forwarder --bench decide",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo build --release -p mcfed-forwarder --example decide_loop",
        Plan::NotRun(BENCH),
    ),
    (
        "time target/release/examples/decide_loop 100 1000000",
        Plan::NotRun(BENCH),
    ),
    (
        "time target/release/examples/decide_loop 1000 100000",
        Plan::NotRun(BENCH),
    ),
    (
        "valgrind --tool=callgrind target/release/examples/decide_loop 100 2000",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo bench -p mcfed-report --bench report",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo bench -p mcfed-transport --bench wire",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo bench -p mcfed-transport --bench wire -- 20000 1000000",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo bench -p mcfed-cluster --bench dispatch",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo bench -p mcfed-engine --bench replay",
        Plan::NotRun(BENCH),
    ),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every command the docs show: the lines of `sh` blocks (joined over
/// `\` continuations, comments dropped) and the `$ ` lines of `text`
/// blocks that run `mcfed`, `cargo`, a timer or `export`.
fn documented_commands() -> BTreeSet<String> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root().join("docs"))
        .expect("docs")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut commands = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("doc");
        let mut block: Option<String> = None;
        let mut pending: Option<String> = None;
        for line in text.lines() {
            if let Some(fence) = line.strip_prefix("```") {
                block = match block {
                    Some(_) => None,
                    None => Some(fence.trim().to_owned()),
                };
                continue;
            }
            let Some(kind) = &block else { continue };
            let line = line.trim();
            if let Some(start) = pending.take() {
                let joined = format!("{start} {}", line.trim_end_matches('\\').trim());
                if line.ends_with('\\') {
                    pending = Some(joined);
                } else {
                    commands.insert(joined);
                }
                continue;
            }
            let line = match (kind.as_str(), line.strip_prefix("$ ")) {
                (_, Some(command)) => command,
                ("sh", _) => line,
                _ => continue,
            };
            let command = line.split("  #").next().unwrap_or_default().trim();
            let command = command.split(" # ").next().unwrap_or_default().trim();
            let runs = [
                "mcfed ",
                "cargo ",
                "time ",
                "/usr/bin/time ",
                "valgrind ",
                "export ",
            ];
            if !runs.iter().any(|start| command.starts_with(start)) {
                continue;
            }
            match command.strip_suffix('\\') {
                Some(start) => pending = Some(start.trim().to_owned()),
                None => {
                    commands.insert(command.to_owned());
                }
            }
        }
    }
    commands
}

#[test]
fn every_documented_command_has_a_plan() {
    let documented = documented_commands();
    let planned: BTreeSet<String> = PLANS.iter().map(|(form, _)| (*form).to_owned()).collect();
    let missing: Vec<&String> = documented.difference(&planned).collect();
    let stale: Vec<&String> = planned.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "documented commands no test runs: {missing:#?}"
    );
    assert!(
        stale.is_empty(),
        "plans for commands the docs no longer show: {stale:#?}"
    );
    for (form, plan) in PLANS {
        match plan {
            Plan::NotRun(why) => assert!(!why.is_empty(), "{form}: say why it is not run"),
            Plan::Run(commands) | Plan::Live(commands) => assert!(!commands.is_empty(), "{form}"),
            Plan::Setup => {}
        }
    }
}

/// Splits a command line into arguments (double quotes group words).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Fails on an error exit or a panic.
fn check(what: &str, output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "`mcfed {what}` panicked: {stderr}"
    );
    assert!(
        output.status.success(),
        "`mcfed {what}` failed ({:?}): {stderr}",
        output.status.code()
    );
}

#[test]
fn the_in_process_commands_run_as_documented_and_the_readme_tables_are_theirs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tmp = dir.path().to_str().expect("utf-8");
    for (form, plan) in PLANS {
        let Plan::Run(commands) = plan else { continue };
        for command in *commands {
            let command = command.replace("{tmp}", tmp);
            let (command, into) = match command.split_once(" > ") {
                Some((command, file)) => (command.to_owned(), Some(file.to_owned())),
                None => (command, None),
            };
            let args = words(&command);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = mcfed_within(&args, Duration::from_secs(120));
            check(&format!("{command} (for `{form}`)"), &output);
            if let Some(file) = into {
                std::fs::write(file, &output.stdout).expect("write output");
            }
        }
    }
    // The README's sweep table is what the sweep prints.
    let printed = std::fs::read_to_string(dir.path().join("sweep.md")).expect("sweep table");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.starts_with("| ") || line.starts_with("|---"))
            .filter(|line| !line.contains("candidate") && !line.starts_with("  "))
            .map(str::to_owned)
            .collect()
    };
    let readme_sweep: Vec<String> = rows(&readme)
        .into_iter()
        .skip_while(|line| !line.starts_with("| interval "))
        .take_while(|line| line.starts_with('|'))
        .collect();
    assert!(readme_sweep.len() > 2, "the README has a sweep table");
    assert_eq!(
        readme_sweep,
        rows(&printed),
        "the README's sweep table drifted"
    );
    // The README's decision is what example 1 prints.
    let run = mcfed30(&["run", EXAMPLE1]);
    check("run example 1", &run);
    let printed = String::from_utf8_lossy(&run.stdout);
    let start = readme.find("## Reading a decision").expect("section");
    let block = &readme[start..];
    let block = &block[block.find("```text\n").expect("block") + 8..];
    let block = &block[..block.find("```").expect("end")];
    for line in block.lines() {
        assert!(
            printed.lines().any(|printed| printed == line),
            "the README's decision line drifted:\n{line}\nprinted:\n{printed}"
        );
    }
}

/// Starts the README's federation: certificates, then the three cluster
/// processes of example 1 with `MCFED_SCENARIO` and `MCFED_CERTS` set
/// (each on a port the OS picks, told where the earlier ones listen).
fn readme_federation(dir: &Path) -> (Federation, Vec<common::live::Process>) {
    let certs = dir.join("certs");
    let made = mcfed30(&[
        "certs",
        "init",
        certs.to_str().expect("utf-8"),
        "--clusters",
        "Cluster1,Cluster2,Cluster3",
    ]);
    check("certs init", &made);
    let fed = Federation::new(root().join(EXAMPLE1), certs);
    let processes = ["Cluster2", "Cluster3", "Cluster1"]
        .into_iter()
        .map(|name| fed.start(name, None))
        .collect();
    (fed, processes)
}

/// Runs one live command (`!CODE PATTERN ...` for an expected refusal).
fn live(fed: &Federation, command: &str) -> String {
    let (expected, command) = match command.strip_prefix('!') {
        Some(rest) => {
            let (code, rest) = rest.split_once(' ').expect("!CODE PATTERN COMMAND");
            let (pattern, command) = rest
                .split_once(" b")
                .map(|(pattern, tail)| (pattern, format!("b{tail}")))
                .expect("a b-command");
            (
                Some((code.parse::<i32>().expect("code"), pattern.to_owned())),
                command,
            )
        }
        None => (None, command.to_owned()),
    };
    let mut args = words(&command);
    let cluster = args
        .iter()
        .position(|arg| arg == "--cluster")
        .map(|at| args[at + 1].clone())
        .expect("--cluster");
    args.extend([
        "--address".to_owned(),
        fed.address(&cluster),
        "--certs".to_owned(),
        fed.certs.to_str().expect("utf-8").to_owned(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = mcfed30(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "`mcfed {command}` panicked: {stderr}"
    );
    match expected {
        None => check(&command, &output),
        Some((code, pattern)) => {
            assert_eq!(
                output.status.code(),
                Some(code),
                "`mcfed {command}`: {stderr}"
            );
            assert!(stderr.contains(&pattern), "`mcfed {command}`: {stderr}");
        }
    }
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn plan_of(form: &str) -> &'static [&'static str] {
    PLANS
        .iter()
        .find_map(|(known, plan)| match plan {
            Plan::Live(commands) if *known == form => Some(*commands),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no live plan for {form}"))
}

#[test]
fn the_lsf_commands_run_as_documented_against_live_clusters() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (fed, _processes) = readme_federation(dir.path());
    eventually(Duration::from_secs(30), "Cluster1 has counters", || {
        let links = live(&fed, "bclusters --cluster Cluster1 -o json");
        links_up_with_updates(&serde_json::from_str(&links).expect("JSON"))
    });
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    // The README's session, in its order, compared where no clock shows.
    let clusters = live(&fed, "bclusters --cluster Cluster1");
    for line in clusters.lines() {
        assert!(
            readme.contains(line),
            "the README's bclusters drifted: {line}"
        );
    }
    let submitted = live(
        &fed,
        plan_of("mcfed bsub --cluster Cluster1 -q send -J myjob -n 2 -W 2:00")[0],
    );
    assert!(
        readme.contains(submitted.trim()),
        "the README's bsub drifted: {submitted}"
    );
    eventually(Duration::from_secs(20), "job 1 is forwarded", || {
        live(&fed, "bjobs --cluster Cluster1 -fwd").contains("Cluster2")
    });
    let forwarded = live(&fed, plan_of("mcfed bjobs --cluster Cluster1 -fwd")[0]);
    let header = forwarded.lines().next().unwrap_or_default();
    assert!(
        readme.contains(header),
        "the README's bjobs -fwd drifted: {header}"
    );
    let long = live(&fed, plan_of("mcfed bjobs --cluster Cluster1 -l")[0]);
    assert!(
        readme.contains(long.lines().next().unwrap_or_default()),
        "{long}"
    );
    eventually(Duration::from_secs(20), "job 1 is accepted", || {
        live(&fed, "bjobs --cluster Cluster1 -l").contains("(job <91>)")
    });
    let stopped = live(&fed, plan_of("mcfed bstop --cluster Cluster1 1")[0]);
    assert!(
        readme.contains(stopped.trim()),
        "the README's bstop drifted: {stopped}"
    );
    // Every other documented form, in an order that gives each a job to
    // act on.
    for form in [
        "mcfed bresume --cluster Cluster1 JOBID ...",
        "mcfed bsub --cluster Cluster1 -q send [-n SLOTS] [-W RUNLIMIT] [-R RES] [-u USER] [-J NAME] [-o FILE] [-e FILE] [-sp PRIORITY] [--run-time 1h]",
        "mcfed bmod --cluster Cluster1 [-W RUNLIMIT | -Wn] [-n SLOTS] [-sp PRIORITY] JOBID ...",
        "mcfed bswitch --cluster Cluster1 QUEUE JOBID ...",
        "mcfed brequeue --cluster Cluster1 JOBID ...",
        "mcfed bstop --cluster Cluster1 JOBID ...",
        "mcfed bkill --cluster Cluster1 JOBID ...",
        "mcfed bjobs --cluster Cluster1 [JOBID ...] [-fwd] [-l] [-a] [-d] [-r] [-p] [-s] [-u USER] [-q QUEUE] [-w] [-o \"FIELD ...\"] [-json]",
        "mcfed bhist --cluster Cluster1 [-l] [-a] [-d] [-u USER] [-q QUEUE] [JOBID ...]",
        "mcfed bacct --cluster Cluster1 [-u USER] [-q QUEUE] [JOBID ...]",
        "mcfed bqueues --cluster Cluster2 [-l] [QUEUE ...]",
        "mcfed bhosts --cluster Cluster2 [-l] [HOST ...]",
        "mcfed bclusters --cluster Cluster1",
        "mcfed lsid --cluster Cluster1",
        "mcfed bparams --cluster Cluster1 [-l]",
    ] {
        for command in plan_of(form) {
            live(&fed, command);
        }
    }
    let history = live(&fed, "bhist --cluster Cluster1 -l 1");
    assert!(history.contains("Exited: killed by bkill"), "{history}");
}
