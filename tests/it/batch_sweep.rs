//! End-to-end: a sweep handed to a batch system (`mcfed sweep --emit
//! slurm|lsf DIR`), its job-array tasks run here without one — the index
//! variable set by hand, in a shuffled order, one task twice — and
//! `mcfed report DIR` giving the same table as the in-process sweep.

use std::path::Path;
use std::process::{Command, Output};

use crate::common;
use common::{mcfed, stderr, stdout, succeeded};

const SCENARIO: &str = "scenarios/chaos/churn.toml";
const GRID: [&str; 8] = [
    "--interval",
    "5s,30s",
    "--mode",
    "RESOURCE_ONLY,COUNT_PREEMPTABLE",
    "--seeds",
    "2",
    "--jitter",
    "3s",
];

/// The in-process sweep of the grid, in `format`.
fn in_process(format: &str) -> String {
    let mut args = vec!["sweep", SCENARIO, "--format", format];
    args.extend(GRID);
    succeeded(&mcfed(&args))
}

/// `mcfed sweep --emit SYSTEM DIR` of the grid.
fn emit(system: &str, dir: &Path) -> Output {
    let mut args = vec!["sweep", SCENARIO];
    args.extend(GRID);
    args.extend(["--emit", system, dir.to_str().expect("utf-8")]);
    mcfed(&args)
}

/// Runs the emitted script as array task `index` would run.
fn run_task(script: &Path, variable: &str, index: usize) -> Output {
    Command::new("sh")
        .arg(script)
        .env(variable, index.to_string())
        .env("MCFED", env!("CARGO_BIN_EXE_mcfed"))
        .output()
        .expect("run the array task")
}

fn report(dir: &Path, format: &str) -> Output {
    mcfed(&["report", dir.to_str().expect("utf-8"), "--format", format])
}

/// Every task of eight in a shuffled order, and task 5 run twice.
const TASKS: [usize; 9] = [5, 2, 8, 1, 7, 3, 6, 4, 5];

fn batch_sweep_matches_in_process(system: &str, script_name: &str, variable: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let sweep = dir.path().join("sweep");
    let output = emit(system, &sweep);
    succeeded(&output);
    let script = sweep.join(script_name);
    let script_text = std::fs::read_to_string(&script).expect("the script");
    let array = match system {
        "slurm" => "#SBATCH --array=1-8",
        _ => "#BSUB -J \"mcfed-sweep[1-8]\"",
    };
    assert!(script_text.contains(array), "{script_text}");
    let grid = std::fs::read_to_string(sweep.join("grid.tsv")).expect("the grid");
    assert_eq!(grid.lines().filter(|l| !l.starts_with('#')).count(), 8);

    // Before any task ran, every cell is listed as missing.
    let nothing = report(&sweep, "json");
    assert!(!nothing.status.success());
    assert!(
        stderr(&nothing).contains("8 cells missing"),
        "{}",
        stderr(&nothing)
    );

    for (done, &index) in TASKS.iter().enumerate() {
        let task = run_task(&script, variable, index);
        assert!(task.status.success(), "task {index}: {}", stderr(&task));
        if done == 3 {
            // Half-way, the report lists the cells still to come.
            let partial = report(&sweep, "markdown");
            assert!(!partial.status.success());
            assert!(
                stderr(&partial).contains("4 cells missing"),
                "{}",
                stderr(&partial)
            );
        }
    }
    for format in ["json", "markdown"] {
        let merged = report(&sweep, format);
        succeeded(&merged);
        assert_eq!(stdout(&merged), in_process(format), "{system}, {format}");
    }
}

#[test]
fn slurm_array_tasks_merge_into_the_in_process_sweep() {
    batch_sweep_matches_in_process("slurm", "sweep.slurm", "SLURM_ARRAY_TASK_ID");
}

#[test]
fn lsf_array_tasks_merge_into_the_in_process_sweep() {
    batch_sweep_matches_in_process("lsf", "sweep.lsf", "LSB_JOBINDEX");
}

#[test]
fn failed_and_foreign_cells_are_listed_not_skipped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sweep = dir.path().join("sweep");
    assert!(emit("slurm", &sweep).status.success());
    let dir_arg = sweep.to_str().expect("utf-8");
    for index in ["1", "2", "3"] {
        let cell = mcfed(&["sweep", "--cell", index, dir_arg]);
        succeeded(&cell);
    }
    // Cell 2's file is damaged, cell 3's was written for another grid.
    std::fs::write(sweep.join("cells/cell-2.json"), "{ not json").expect("damage");
    let three = std::fs::read_to_string(sweep.join("cells/cell-3.json")).expect("cell 3");
    std::fs::write(
        sweep.join("cells/cell-3.json"),
        three.replace("\"seed\":0", "\"seed\":7"),
    )
    .expect("move cell 3");
    let merged = report(&sweep, "markdown");
    assert!(!merged.status.success());
    let complaints = stderr(&merged);
    assert!(complaints.contains("5 cells missing"), "{complaints}");
    assert!(complaints.contains(": 4-8"), "{complaints}");
    assert!(complaints.contains("cell 2 failed"), "{complaints}");
    assert!(
        complaints.contains("cell 3 failed: its file was written for another grid"),
        "{complaints}"
    );
    // The table still shows what ran: one run in the first cell.
    assert!(
        stdout(&merged).contains("| 5s | RESOURCE_ONLY | 1 |"),
        "{}",
        stdout(&merged)
    );

    // Running a cell again replaces its file.
    let again = mcfed(&["sweep", "--cell", "2", dir_arg]);
    succeeded(&again);
    let merged = report(&sweep, "markdown");
    assert!(
        !stderr(&merged).contains("cell 2 failed"),
        "{}",
        stderr(&merged)
    );
}

#[test]
fn bad_cells_and_changed_scenarios_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("churn.toml");
    std::fs::copy(SCENARIO, &scenario).expect("copy the scenario");
    let sweep = dir.path().join("sweep");
    let dir_arg = sweep.to_str().expect("utf-8");
    let emitted = mcfed(&[
        "sweep",
        scenario.to_str().expect("utf-8"),
        "--interval",
        "5s",
        "--emit",
        "lsf",
        dir_arg,
    ]);
    succeeded(&emitted);

    let beyond = mcfed(&["sweep", "--cell", "2", dir_arg]);
    assert!(!beyond.status.success());
    assert!(
        stderr(&beyond).contains("there is no cell 2: the grid has cells 1 to 1"),
        "{}",
        stderr(&beyond)
    );
    let zero = mcfed(&["sweep", "--cell", "0", dir_arg]);
    assert!(!zero.status.success());

    let with_faults = mcfed(&["sweep", "--cell", "1", dir_arg, "--loss", "0.5"]);
    assert!(!with_faults.status.success());
    assert!(stderr(&with_faults).contains("grid's own faults"));

    // The script without its index variable says what it needs.
    let bare = Command::new("sh")
        .arg(sweep.join("sweep.lsf"))
        .env_remove("LSB_JOBINDEX")
        .output()
        .expect("sh");
    assert!(!bare.status.success());
    assert!(stderr(&bare).contains("LSB_JOBINDEX"), "{}", stderr(&bare));

    assert!(mcfed(&["sweep", "--cell", "1", dir_arg]).status.success());
    // A directory with results is not overwritten by another sweep.
    let again = mcfed(&[
        "sweep",
        scenario.to_str().expect("utf-8"),
        "--interval",
        "1s",
        "--emit",
        "slurm",
        dir_arg,
    ]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already holds results"),
        "{}",
        stderr(&again)
    );

    // A cell of a scenario edited since is refused.
    let edited = std::fs::read_to_string(&scenario).expect("read") + "\n# edited\n";
    std::fs::write(&scenario, edited).expect("edit");
    let changed = mcfed(&["sweep", "--cell", "1", dir_arg]);
    assert!(!changed.status.success());
    assert!(
        stderr(&changed).contains("changed since the sweep was written"),
        "{}",
        stderr(&changed)
    );

    let unknown = mcfed(&[
        "sweep",
        SCENARIO,
        "--interval",
        "5s",
        "--emit",
        "pbs",
        dir_arg,
    ]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains("unknown batch system `pbs`"),
        "{}",
        stderr(&unknown)
    );
}

/// A sweep written into a directory whose name holds a space and quotes
/// (issue 29): its task runs, and the `submit:` and `merge:` lines it
/// printed, run as printed by a shell, reach it.
#[test]
fn printed_commands_and_the_script_survive_an_odd_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sweep = dir.path().join("my sweeps/it's \"odd\"");
    let emitted = mcfed(&[
        "sweep",
        SCENARIO,
        "--interval",
        "5s",
        "--emit",
        "slurm",
        sweep.to_str().expect("utf-8"),
    ]);
    let printed = succeeded(&emitted);
    let line = |prefix: &str| -> String {
        printed
            .lines()
            .find_map(|line| line.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in {printed}"))
            .trim()
            .to_owned()
    };
    let task = run_task(&sweep.join("sweep.slurm"), "SLURM_ARRAY_TASK_ID", 1);
    succeeded(&task);
    let bin = Path::new(env!("CARGO_BIN_EXE_mcfed"))
        .parent()
        .expect("the binary's directory");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let merged = Command::new("sh")
        .arg("-c")
        .arg(line("merge:"))
        .env("PATH", &path)
        .output()
        .expect("sh");
    assert!(
        merged.status.success(),
        "{}: {}",
        line("merge:"),
        stderr(&merged)
    );
    assert!(stdout(&merged).contains("| 5s |"), "{}", stdout(&merged));
    // `sbatch` is not here: a stand-in that checks its one argument.
    let submit = line("submit:").replacen("sbatch", "test -f", 1);
    let found = Command::new("sh")
        .arg("-c")
        .arg(&submit)
        .output()
        .expect("sh");
    assert!(found.status.success(), "{submit}");
}
