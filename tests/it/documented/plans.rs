//! What the documented-commands test does with each command the docs
//! show: one plan per command form, written as the docs write it.

/// What the test does with one documented command.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Plan {
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

pub(crate) const EXAMPLE1: &str = "scenarios/forwarding/example1-count-preemptable.toml";
const FUZZ: &str = "fuzzing: minutes of wall clock per target on the nightly toolchain (docs/reliability.md gives the runs); `cargo test -p mcfed-fuzzing` runs the same inputs on stable";
const KILL_TEST: &str =
    "the kill test itself: `cargo test --workspace` runs tests/it/kill_under_load.rs";
const BENCH: &str =
    "a benchmark: minutes of wall clock, measured by hand (docs/performance.md gives its figures)";
const BUSY: &str =
    "the test suite on a busy machine, run by hand: the suite itself is what CI runs";
const TEST_BUILD: &str = "the test build and suite measured by hand: a cold build of the workspace's tests (docs/performance.md gives the figures)";

/// Every command the docs show, with what the test does with it.
pub(crate) const PLANS: &[(&str, Plan)] = &[
    ("cargo test --workspace --no-fail-fast", Plan::NotRun(BUSY)),
    (
        "cargo run --release -- run scenarios/forwarding/example1-count-preemptable.toml",
        Plan::Run(&["run scenarios/forwarding/example1-count-preemptable.toml"]),
    ),
    (
        "cargo test --workspace --locked",
        Plan::NotRun("the test suite itself"),
    ),
    (
        "export CARGO_TARGET_DIR=/tmp/mcfed-test-build",
        Plan::NotRun(TEST_BUILD),
    ),
    (
        "/usr/bin/time -f \"%e s wall, %U s user, %S s sys\" cargo test --workspace --no-run",
        Plan::NotRun(TEST_BUILD),
    ),
    (
        "/usr/bin/time -f \"%e s wall, %U s user, %S s sys\" cargo test --workspace --no-fail-fast",
        Plan::NotRun(TEST_BUILD),
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
        "mcfed report run.jsonl --html report.html",
        Plan::Run(&["report {tmp}/run.jsonl --html {tmp}/report.html"]),
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
        "mcfed report launched.jsonl --html report.html",
        Plan::Run(&["report {tmp}/launched.jsonl --html {tmp}/launched.html"]),
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
        "mcfed launch scenarios/chaos/churn.toml --speed 30 --web 7180",
        // Faster, on ports the OS picks (tests run side by side); the page
        // itself is looked at in a browser by tests/web.rs.
        Plan::Run(&[
            "launch scenarios/chaos/churn.toml --speed 300 --web 127.0.0.1:0 --base-port 0",
        ]),
    ),
    (
        "mcfed cluster --scenario FILE --name Cluster1 --web 7181",
        Plan::NotRun(
            "a process that runs until stopped: tests/web.rs starts `mcfed cluster ... --web 0` and reads its page",
        ),
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
        "mcfed launch scenarios/forwarding/example1-count-preemptable.toml --hosts scenarios/scale-out/example1-hosts.txt --print-commands",
        Plan::Run(&[
            "launch scenarios/forwarding/example1-count-preemptable.toml --hosts scenarios/scale-out/example1-hosts.txt --print-commands",
        ]),
    ),
    (
        "mcfed certs init certs --scenario scenarios/forwarding/example1-count-preemptable.toml --hosts scenarios/scale-out/example1-hosts.txt",
        Plan::Run(&[
            "certs init {tmp}/certs-for-hosts --scenario scenarios/forwarding/example1-count-preemptable.toml --hosts scenarios/scale-out/example1-hosts.txt",
        ]),
    ),
    (
        "mcfed cluster --scenario scenarios/forwarding/example1-count-preemptable.toml --hosts scenarios/scale-out/example1-hosts.txt --name Cluster1 --certs certs --epoch-ms 1795473027720 --speed 10",
        Plan::NotRun(
            "a cluster process that runs until stopped: tests/separate_hosts.rs starts the commands `launch --print-commands` prints, on three loopback addresses",
        ),
    ),
    (
        "mcfed bclusters --cluster Cluster1 --certs certs --scenario scenarios/forwarding/example1-count-preemptable.toml --hosts scenarios/scale-out/example1-hosts.txt",
        Plan::NotRun(
            "needs the processes above: tests/separate_hosts.rs asks them with this command",
        ),
    ),
    (
        "mcfed sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --emit slurm sweep-churn",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --emit slurm {tmp}/sweep-churn",
        ]),
    ),
    (
        "mcfed sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --emit lsf sweep-churn-lsf",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 1s,5s,15s,30s,60s --mode RESOURCE_ONLY,COUNT_PREEMPTABLE --seeds 3 --emit lsf {tmp}/sweep-churn-lsf",
        ]),
    ),
    (
        "mcfed report sweep-churn",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 5s,30s --emit slurm {tmp}/sweep-merged",
            "sweep --cell 2 {tmp}/sweep-merged",
            "sweep --cell 1 {tmp}/sweep-merged",
            "report {tmp}/sweep-merged",
        ]),
    ),
    (
        "mcfed report sweep-churn-lsf",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 5s --seeds 2 --emit lsf {tmp}/sweep-merged-lsf",
            "sweep --cell 1 {tmp}/sweep-merged-lsf",
            "sweep --cell 2 {tmp}/sweep-merged-lsf",
            "report {tmp}/sweep-merged-lsf --format json",
        ]),
    ),
    (
        "mcfed sweep --cell 7 sweep-churn",
        Plan::Run(&[
            "sweep scenarios/chaos/churn.toml --interval 1s,5s --seeds 4 --emit slurm {tmp}/sweep-cell",
            "sweep --cell 7 {tmp}/sweep-cell",
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
        "mcfed bsub --cluster Cluster1 -q send [-n SLOTS] [-W RUNLIMIT] [-R RES] [-U RESERVATION] [-u USER] [-J NAME] [-o FILE] [-e FILE] [-sp PRIORITY] [--run-time 1h]",
        Plan::Live(&[
            "bsub --cluster Cluster1 -q send",
            "bsub --cluster Cluster1 -q send -n 2 -W 30 -R bigmem -u alice -J full -o out.%J -e err.%J --run-time 1h",
            "bsub --cluster Cluster1 -q send -R select[bigmem&&fast] -o json",
            "bsub --cluster Cluster1 -q send -json",
            "!2 MAX_USER_PRIORITY bsub --cluster Cluster1 -q send -sp 5",
            "!2 rsv==maint bsub --cluster Cluster1 -q send -U maint",
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
        "mcfed brsvadd --cluster Cluster1 -N maint -m \"a1 a2\" -n 4 -u \"alice bob\" -b 1h -e \"2h 30m\" [-o] [--user USER]",
        Plan::Live(&[
            "brsvadd --cluster Cluster2 -N maint -m \"c2host1 c2host2\" -n 4 -u \"alice bob\" -b 10h -e \"12h 30m\"",
            "brsvadd --cluster Cluster2 -N lab -m c2host3 -n 2 -u all -b 11:00 -e 11:30 -o",
            "!1 exists brsvadd --cluster Cluster2 -N lab -m c2host4 -u all -b 11h -e 12h",
            "!1 overlaps brsvadd --cluster Cluster2 -N more -m c2host3 -n 9 -u all -b 11h -e 12h",
            "!1 allowed brsvadd --cluster Cluster2 -N his -m c2host4 -u bob -b 11h -e 12h --user bob",
        ]),
    ),
    (
        "mcfed brsvdel --cluster Cluster1 maint [NAME ...] [--user USER]",
        Plan::Live(&[
            "!1 made brsvdel --cluster Cluster2 lab --user alice",
            "brsvdel --cluster Cluster2 maint lab",
            "!1 exist brsvdel --cluster Cluster2 maint",
        ]),
    ),
    (
        "mcfed brsvs --cluster Cluster1",
        Plan::Live(&[
            "brsvs --cluster Cluster1",
            "brsvs --cluster Cluster1 -json",
            "brsvs --cluster Cluster1 -o json",
        ]),
    ),
    (
        "mcfed bresume --cluster Cluster1 JOBID ...",
        Plan::Live(&["bresume --cluster Cluster1 1"]),
    ),
    (
        "mcfed bmod --cluster Cluster1 [-W RUNLIMIT | -Wn] [-n SLOTS] [-sp PRIORITY] [-aps \"system=V|admin=V\" | -apsn] JOBID ...",
        Plan::Live(&[
            "bmod --cluster Cluster2 -W 30 -n 2 72",
            "bmod --cluster Cluster2 -Wn 72",
            "bmod --cluster Cluster1 -W 3:00 1",
            "!1 MAX_USER_PRIORITY bmod --cluster Cluster2 -sp 5 72",
            "!1 APS_PRIORITY bmod --cluster Cluster2 -aps admin=5 72",
            "!1 APS_PRIORITY bmod --cluster Cluster2 -apsn 72",
        ]),
    ),
    (
        "mcfed run scenarios/aps/formula-limits-grace.toml --check",
        Plan::Run(&["run scenarios/aps/formula-limits-grace.toml --check"]),
    ),
    (
        "mcfed run scenarios/aps/send-queue-aps-order.toml --check --engine actors",
        Plan::Run(&["run scenarios/aps/send-queue-aps-order.toml --check --engine actors"]),
    ),
    (
        "mcfed validate scenarios/aps/refused-dispatch-order-queue.toml --check",
        Plan::Run(&["validate scenarios/aps/refused-dispatch-order-queue.toml --check"]),
    ),
    (
        "mcfed bmig --cluster Cluster1 JOBID ...",
        Plan::Live(&["!1 Job bmig --cluster Cluster2 74"]),
    ),
    (
        "mcfed bresize --cluster Cluster1 release all JOBID ...",
        Plan::Live(&["!1 Job bresize --cluster Cluster2 release all 74"]),
    ),
    (
        "mcfed host-fail --cluster Cluster1 HOST",
        Plan::Live(&["!1 nohost host-fail --cluster Cluster2 nohost"]),
    ),
    (
        "mcfed host-recover --cluster Cluster1 HOST",
        Plan::Live(&["!1 nohost host-recover --cluster Cluster2 nohost"]),
    ),
    (
        "mcfed bjobs --cluster Cluster1 -aps [-u USER] [-q QUEUE] [JOBID ...]",
        Plan::Live(&[
            "bjobs --cluster Cluster1 -aps",
            "bjobs --cluster Cluster2 -aps -q HighPriority -u all",
            "bjobs --cluster Cluster2 -aps -o json",
            "bjobs --cluster Cluster2 -aps -json",
        ]),
    ),
    (
        "mcfed bjobs --cluster Cluster1 -prio",
        Plan::Live(&["bjobs --cluster Cluster2 -prio"]),
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
        "cargo run --release -p mcfed-federation --example snapshot_cost -- 1000000",
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
    (
        "cargo bench -p mcfed-cluster --bench aps",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo build --release -p mcfed-cluster --example aps_pass",
        Plan::NotRun(BENCH),
    ),
    (
        "valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_pass*' target/release/examples/aps_pass aps 5",
        Plan::NotRun(BENCH),
    ),
    (
        "mcfed gen swf -o deep16.swf --jobs 1000000 --processors 16 --max-width 16 --load 1.5",
        Plan::Run(&[
            "gen swf -o {tmp}/deep16.swf --jobs 2000 --processors 16 --max-width 16 --load 1.5",
        ]),
    ),
    (
        "/usr/bin/time -f \"%e s %U user %M KB\" mcfed replay deep16.swf --hosts 16 --quiet",
        Plan::Run(&["replay {tmp}/deep16.swf --hosts 16 --quiet"]),
    ),
    (
        "valgrind --tool=callgrind mcfed replay deep16.swf --hosts 16 --quiet",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo build --release -p mcfed-cluster --example deep_replay",
        Plan::NotRun(BENCH),
    ),
    (
        "valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured_replay*' target/release/examples/deep_replay 1000000",
        Plan::NotRun(BENCH),
    ),
    (
        "mcfed gen swf -o fed16.swf --jobs 1000000 --processors 80 --max-width 8 --unfit 0.02 --unfit-width 16 --load 1.5",
        Plan::Run(&[
            "gen swf -o {tmp}/fed16.swf --jobs 2000 --processors 80 --max-width 8 --unfit 0.02 --unfit-width 16 --load 1.5",
        ]),
    ),
    (
        "mcfed gen swf -o fed.swf --jobs 20000 --processors 320 --max-width 1 --load 0.74",
        Plan::Run(&[
            "gen swf -o {tmp}/fed.swf --jobs 2000 --processors 320 --max-width 1 --load 0.74",
        ]),
    ),
    (
        "valgrind --tool=callgrind target/release/mcfed replay fed.swf --hosts 32 --clusters 10",
        Plan::NotRun(BENCH),
    ),
    (
        "mcfed import lsf --envdir tests/lsf/envdir/conf -o federation.toml",
        Plan::Run(&[
            "import lsf --envdir tests/lsf/envdir/conf -o {tmp}/federation.toml",
            "validate {tmp}/federation.toml",
        ]),
    ),
    (
        "mcfed import lsf --cluster Cluster1=tests/lsf/example1/Cluster1 --cluster Cluster2=tests/lsf/example1/Cluster2 --cluster Cluster3=tests/lsf/example1/Cluster3 --shared tests/lsf/example1/lsf.shared -o federation.toml",
        Plan::Run(&[
            "import lsf --cluster Cluster1=tests/lsf/example1/Cluster1 --cluster Cluster2=tests/lsf/example1/Cluster2 --cluster Cluster3=tests/lsf/example1/Cluster3 --shared tests/lsf/example1/lsf.shared -o {tmp}/federation.toml",
        ]),
    ),
    (
        "mcfed import lsf --cluster Cluster1=tests/lsf/example1/Cluster1 --cluster Cluster2=tests/lsf/example1/Cluster2 --cluster Cluster3=tests/lsf/example1/Cluster3 -o federation.toml",
        Plan::Run(&[
            "import lsf --cluster Cluster1=tests/lsf/example1/Cluster1 --cluster Cluster2=tests/lsf/example1/Cluster2 --cluster Cluster3=tests/lsf/example1/Cluster3 -o {tmp}/federation.toml",
        ]),
    ),
    (
        "mcfed validate federation.toml",
        Plan::Run(&[
            "import lsf --cluster Cluster1=tests/lsf/example1/Cluster1 --cluster Cluster2=tests/lsf/example1/Cluster2 --cluster Cluster3=tests/lsf/example1/Cluster3 -o {tmp}/federation.toml",
            "validate {tmp}/federation.toml",
        ]),
    ),
    (
        "mcfed export lsf federation.toml -o lsf-out",
        Plan::Run(&[
            "import lsf --cluster Cluster1=tests/lsf/example1/Cluster1 --cluster Cluster2=tests/lsf/example1/Cluster2 --cluster Cluster3=tests/lsf/example1/Cluster3 -o {tmp}/federation.toml",
            "export lsf {tmp}/federation.toml -o {tmp}/lsf-out",
        ]),
    ),
    (
        "mcfed export lsf scenarios/forwarding/example1-count-preemptable.toml -o lsf-out",
        Plan::Run(&[
            "export lsf scenarios/forwarding/example1-count-preemptable.toml -o {tmp}/lsf-out",
        ]),
    ),
    (
        "mcfed run tests/lsf/example1/scenario.toml --check",
        Plan::Run(&["run tests/lsf/example1/scenario.toml --check"]),
    ),
    (
        "mcfed cluster --scenario FILE --name Cluster1 --state state/Cluster1",
        // Started, stopped (standard input closes at once), and started
        // again from the journal it wrote.
        Plan::Run(&[
            "certs init {tmp}/state-certs --clusters Cluster1,Cluster2,Cluster3",
            "cluster --scenario scenarios/forwarding/example1-count-preemptable.toml --name Cluster1 --certs {tmp}/state-certs --base-port 0 --report none --exit-on-stdin-eof --state {tmp}/state/Cluster1",
            "cluster --scenario scenarios/forwarding/example1-count-preemptable.toml --name Cluster1 --certs {tmp}/state-certs --base-port 0 --report none --exit-on-stdin-eof --state {tmp}/state/Cluster1",
        ]),
    ),
    (
        "mcfed launch FILE --state state",
        Plan::Run(&[
            "launch scenarios/forwarding/example1-count-preemptable.toml --state {tmp}/launch-state --base-port 0 --speed 40",
        ]),
    ),
    (
        "cargo test --test it kill_under_load -- --nocapture",
        Plan::NotRun(KILL_TEST),
    ),
    (
        "cargo +nightly fuzz run frame work/frame corpus/frame -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "cargo +nightly fuzz run message work/message corpus/message -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "cargo +nightly fuzz run scenario work/scenario corpus/scenario -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "cargo +nightly fuzz run swf work/swf corpus/swf -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "cargo +nightly fuzz run lsf work/lsf corpus/lsf -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "cargo +nightly fuzz run journal work/journal corpus/journal -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "mcfed bsub --cluster Cluster1 -q send --from jobs.txt --stats -o json > acknowledged.jsonl",
        Plan::Live(&[
            "bsub --cluster Cluster1 -q send --from tests/fixtures/bsub-from.txt --stats -o json",
        ]),
    ),
    (
        "/usr/bin/time -f \"%e s %U user %M KB\" mcfed replay nowhere.swf --hosts 8 --clusters 10 --quiet",
        Plan::NotRun(BENCH),
    ),
    (
        "valgrind --tool=callgrind mcfed replay nowhere.swf --hosts 8 --clusters 10 --quiet",
        Plan::NotRun(BENCH),
    ),
    (
        "cargo +nightly fuzz run lsb_acct work/lsb_acct corpus/lsb_acct -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "cargo +nightly fuzz run admin work/admin corpus/admin -- -max_total_time=300 -rss_limit_mb=2048 -malloc_limit_mb=256",
        Plan::NotRun(FUZZ),
    ),
    (
        "mcfed gen lsb-acct -o lsb.acct --jobs 2000 --queues normal,short --cluster east",
        Plan::Run(&[
            "gen lsb-acct -o {tmp}/lsb.acct --jobs 2000 --queues normal,short --cluster east",
        ]),
    ),
    (
        "mcfed replay lsb.acct --hosts 16 --mxj 2",
        Plan::Run(&["replay {tmp}/lsb.acct --hosts 16 --mxj 2"]),
    ),
    (
        "mcfed run scenarios/forwarding/example1-count-preemptable.toml --lsb-acct acct",
        Plan::Run(&[
            "run scenarios/forwarding/example1-count-preemptable.toml --lsb-acct {tmp}/acct",
        ]),
    ),
    (
        "mcfed replay lsb.acct --hosts 16 --mxj 2 --lsb-acct acct",
        Plan::Run(&["replay {tmp}/lsb.acct --hosts 16 --mxj 2 --lsb-acct {tmp}/acct"]),
    ),
    (
        "mcfed lsf-env --cluster Cluster1 --certs certs --scenario scenarios/forwarding/example1-count-preemptable.toml --dir lsf > lsf.sh",
        Plan::Run(&[
            "lsf-env --cluster Cluster1 --certs {tmp}/certs --scenario scenarios/forwarding/example1-count-preemptable.toml --dir {tmp}/lsf > {tmp}/lsf.sh",
        ]),
    ),
    (
        "mcfed gen lsb-acct -o big.acct --jobs 1000000 --processors 32 --max-width 1 --load 0.74",
        Plan::Run(&[
            "gen lsb-acct -o {tmp}/big.acct --jobs 2000 --processors 32 --max-width 1 --load 0.74",
        ]),
    ),
    (
        "/usr/bin/time -f \"%e s %M KB\" mcfed replay big.acct --hosts 32 -q",
        Plan::Run(&["replay {tmp}/big.acct --hosts 32 -q"]),
    ),
    (
        "/usr/bin/time -f \"%e s %M KB\" mcfed replay easy.swf --hosts 32 -q --lsb-acct out",
        Plan::Run(&["replay {tmp}/easy.swf --hosts 32 -q --lsb-acct {tmp}/out"]),
    ),
    (
        "valgrind --tool=callgrind mcfed replay big100k.acct --hosts 32 -q",
        Plan::NotRun(BENCH),
    ),
    (
        "valgrind --tool=massif --threshold=0.5 mcfed cluster --scenario held.toml --name Held --certs certs --state state --listen 127.0.0.1:0 --report none",
        Plan::NotRun(BENCH),
    ),
];
