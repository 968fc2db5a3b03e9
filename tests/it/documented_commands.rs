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

use crate::common;
use common::live::{Federation, links_up_with_updates};
use common::{eventually, mcfed, root};

#[path = "documented/plans.rs"]
mod plans;
use plans::{EXAMPLE1, PLANS, Plan};

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

/// What is wrong with the messages of `stderr`, if anything: a cause said
/// twice (`X: X`, as `No such file or directory (os error 2): No such
/// file or directory (os error 2)`), or a raw control character (a
/// message shows them escaped).
fn unclean_message(stderr: &str) -> Option<String> {
    for line in stderr.lines() {
        if let Some(control) = line.chars().find(|c| c.is_control()) {
            return Some(format!("raw control character {control:?} in: {line:?}"));
        }
        if line.matches("(os error").count() > 1 {
            return Some(format!("an OS error said twice: {line}"));
        }
        let parts: Vec<&str> = line.split(": ").collect();
        for start in 0..parts.len() {
            for len in 1..=(parts.len() - start) / 2 {
                let (first, second) = (
                    &parts[start..start + len],
                    &parts[start + len..start + 2 * len],
                );
                if first == second && first.iter().map(|part| part.len()).sum::<usize>() >= 12 {
                    return Some(format!("`{}` said twice: {line}", first.join(": ")));
                }
            }
        }
    }
    None
}

/// Fails on a message [`unclean_message`] finds fault with.
fn clean_messages(what: &str, output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    if let Some(fault) = unclean_message(&stderr) {
        panic!("`mcfed {what}`: {fault}");
    }
}

#[test]
fn the_message_check_finds_doubled_causes_and_raw_control_characters() {
    for bad in [
        "mcfed: cannot read /nonexistent.jsonl: No such file or directory (os error 2): No such file or directory (os error 2)",
        "mcfed: cannot listen on 127.0.0.1:7100: Address already in use (os error 98): Address already in use (os error 98)",
        "mcfed: st/C1/snapshot: the snapshot file ends inside its header: the snapshot file ends inside its header",
        "bad.toml:3:1: field `name`: job `a\u{1b}[2Jb` is unknown",
    ] {
        assert!(unclean_message(bad).is_some(), "{bad}");
    }
    for good in [
        "mcfed: cannot read /nonexistent.jsonl: No such file or directory (os error 2)",
        "bad.toml:3:1: field `name`: job `a\\u{1b}[2Jb` is unknown",
        "warning: x: y: x: z",
    ] {
        assert_eq!(unclean_message(good), None, "{good}");
    }
}

#[test]
fn the_readme_says_how_to_pick_free_ports() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let fixed: Vec<&str> = readme
        .lines()
        .filter(|line| line.starts_with("mcfed cluster "))
        .filter(|line| !line.contains("--base-port 0") && !line.contains("--listen"))
        .collect();
    if fixed.is_empty() {
        return;
    }
    let section = &readme[readme.find("## Clusters as processes").expect("section")..];
    for needed in [
        "Address\nalready in use",
        "--base-port 17100",
        "--base-port 0",
    ] {
        assert!(
            section.contains(needed),
            "the README starts processes on fixed ports ({fixed:?}) without saying how to pick free ones: `{needed}`"
        );
    }
}

/// Fails on an error exit or a panic, or a message said twice or with a
/// raw control character.
fn check(what: &str, output: &Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "`mcfed {what}` panicked: {stderr}"
    );
    clean_messages(what, output);
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
            let output = mcfed(&args);
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
    let run = mcfed(&["run", EXAMPLE1]);
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
    let made = mcfed(&[
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
            // The command starts at its verb: `b...` or `host-...`.
            let at = [" b", " host-"]
                .iter()
                .filter_map(|verb| rest.find(verb))
                .min()
                .expect("a b-command or a host- command");
            let (pattern, command) = (&rest[..at], rest[at + 1..].to_owned());
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
    let output = mcfed(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("panicked"),
        "`mcfed {command}` panicked: {stderr}"
    );
    clean_messages(&command, &output);
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
        "mcfed bsub --cluster Cluster1 -q send [-n SLOTS] [-W RUNLIMIT] [-R RES] [-U RESERVATION] [-u USER] [-J NAME] [-o FILE] [-e FILE] [-sp PRIORITY] [--run-time 1h]",
        "mcfed bsub --cluster Cluster1 -q send --from jobs.txt --stats -o json > acknowledged.jsonl",
        "mcfed bmod --cluster Cluster1 [-W RUNLIMIT | -Wn] [-n SLOTS] [-sp PRIORITY] [-aps \"system=V|admin=V\" | -apsn] JOBID ...",
        "mcfed bmig --cluster Cluster1 JOBID ...",
        "mcfed bresize --cluster Cluster1 release all JOBID ...",
        "mcfed host-fail --cluster Cluster1 HOST",
        "mcfed host-recover --cluster Cluster1 HOST",
        "mcfed bjobs --cluster Cluster1 -aps [-u USER] [-q QUEUE] [JOBID ...]",
        "mcfed bjobs --cluster Cluster1 -prio",
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
        "mcfed brsvadd --cluster Cluster1 -N maint -m \"a1 a2\" -n 4 -u \"alice bob\" -b 1h -e \"2h 30m\" [-o] [--user USER]",
        "mcfed brsvdel --cluster Cluster1 maint [NAME ...] [--user USER]",
        "mcfed brsvs --cluster Cluster1",
    ] {
        for command in plan_of(form) {
            live(&fed, command);
        }
    }
    let history = live(&fed, "bhist --cluster Cluster1 -l 1");
    assert!(history.contains("Exited: killed by bkill"), "{history}");
}
