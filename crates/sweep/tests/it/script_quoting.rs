//! A batch sweep written into a directory whose name holds a space and a
//! quote (issue 29): the script passes `bash -n` and `sh -n`; its output
//! directive, read the way Slurm reads `#SBATCH` lines and LSF reads
//! `#BSUB` lines (both readers are ported below, from Slurm's
//! `_get_argument` and OpenLava's `parseLine`/`getNextValueQ_`), names
//! the logs directory exactly; and run as a task, it hands the directory
//! to `mcfed` as one argument. A path a reader cannot read back is
//! refused, naming why.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mcfed_chaos::ChaosOverrides;
use mcfed_forwarder::ScheduleMode;
use mcfed_sweep::batch::{self, BatchError, EmitRequest, Scheduler};

/// An `mcfed` stand-in that prints each argument on its own line.
const FAKE_MCFED: &str =
    "#!/bin/sh\nfor argument in \"$@\"; do printf '%s\\n' \"$argument\"; done\n";

struct Emitted {
    _temp: tempfile::TempDir,
    dir: PathBuf,
    script: PathBuf,
    fake: PathBuf,
}

/// Writes a two-cell sweep for `scheduler` into `root/name`, with the
/// stand-in `mcfed` in a directory whose name holds a space and a quote.
fn emit(scheduler: Scheduler, name: &str) -> Result<Emitted, BatchError> {
    let temp = tempfile::tempdir().expect("temp dir");
    let scenario = temp.path().join("scenario.toml");
    std::fs::write(&scenario, "name = \"s\"\n").expect("scenario");
    let bin = temp.path().join("bin it's");
    std::fs::create_dir_all(&bin).expect("bin");
    let fake = bin.join("fake mcfed");
    std::fs::write(&fake, FAKE_MCFED).expect("fake mcfed");
    make_executable(&fake);
    let dir = temp.path().join(name);
    let points = mcfed_sweep::grid::points(
        &[Duration::from_secs(5)],
        &[ScheduleMode::Default, ScheduleMode::ResourceOnly],
        1,
    );
    let script = batch::emit(&EmitRequest {
        dir: &dir,
        scheduler,
        scenario: &scenario,
        scenario_name: "s",
        chaos: &ChaosOverrides::default(),
        points: &points,
        executable: &fake,
    })?;
    let dir = std::fs::canonicalize(&dir).expect("written");
    Ok(Emitted {
        _temp: temp,
        dir,
        script,
        fake,
    })
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The shells accept the script's syntax.
fn shells_accept(script: &Path) {
    for shell in ["bash", "sh"] {
        let checked = Command::new(shell)
            .arg("-n")
            .arg(script)
            .output()
            .expect("a shell");
        assert!(
            checked.status.success(),
            "{shell} -n: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
    }
}

/// Runs the script as task `index` would run (`variable` set), with
/// `MCFED` unset or set; the arguments `mcfed` got.
fn task_arguments(
    script: &Path,
    variable: &str,
    index: usize,
    mcfed: Option<&Path>,
) -> Vec<String> {
    let mut command = Command::new("sh");
    command
        .arg(script)
        .env(variable, index.to_string())
        .env_remove("MCFED");
    if let Some(mcfed) = mcfed {
        command.env("MCFED", mcfed);
    }
    let output = command.output().expect("the task runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The directive line starting with `prefix`, without it.
fn directive<'a>(script: &'a str, prefix: &str) -> &'a str {
    script
        .lines()
        .find_map(|line| line.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in:\n{script}"))
}

/// Slurm's `_get_argument` (src/sbatch/opt.c) over a whole `#SBATCH`
/// line: whitespace separates arguments; `'` or `"` group until the same
/// quote; a backslash takes the next character as it is, inside quotes
/// too; an unescaped `#` outside quotes ends the line.
fn slurm_arguments(line: &str) -> Vec<String> {
    let mut arguments = Vec::new();
    let mut characters = line.chars().peekable();
    loop {
        while characters.next_if(|c| c.is_whitespace()).is_some() {}
        if characters.peek().is_none() {
            return arguments;
        }
        let mut argument = String::new();
        let mut quote: Option<char> = None;
        while let Some(&c) = characters.peek() {
            if quote.is_none() && c.is_whitespace() {
                break;
            }
            characters.next();
            match (c, quote) {
                ('\\', _) => argument.extend(characters.next()),
                (c, Some(open)) if c == open => quote = None,
                ('"' | '\'', None) => quote = Some(c),
                ('#', None) => {
                    arguments.push(argument);
                    return arguments;
                }
                (c, _) => argument.push(c),
            }
        }
        arguments.push(argument);
    }
}

/// Slurm's file name pattern: `%%` is `%`, `%a` the array task's index.
fn slurm_file_name(pattern: &str, index: usize) -> String {
    let mut name = String::new();
    let mut characters = pattern.chars();
    while let Some(c) = characters.next() {
        match (c, characters.clone().next()) {
            ('%', Some('%')) => {
                characters.next();
                name.push('%');
            }
            ('%', Some('a')) => {
                characters.next();
                name.push_str(&index.to_string());
            }
            (c, _) => name.push(c),
        }
    }
    name
}

/// OpenLava's `parseLine` and `getNextValueQ_` (lsbatch/cmd/cmd.sub.c,
/// lsf/lib/lib.conf.c) over the text after `#BSUB`: the quote is `'` if
/// one comes before any `"` in the rest of the line, else `"`; a word that
/// starts with it opens a value that ends at the same quote, its words
/// rejoined by single spaces; there is no escape.
fn lsf_arguments(line: &str) -> Vec<String> {
    let mut arguments = Vec::new();
    let mut rest = line;
    loop {
        let quote = match (rest.find('\''), rest.find('"')) {
            (Some(single), Some(double)) if single < double => '\'',
            (Some(_), None) => '\'',
            _ => '"',
        };
        let mut words = rest.split_whitespace();
        let Some(word) = words.next() else {
            return arguments;
        };
        rest = consumed(word, rest);
        let Some(opened) = word.strip_prefix(quote) else {
            arguments.push(word.to_owned());
            continue;
        };
        if let Some((value, _)) = opened.split_once(quote) {
            arguments.push(value.to_owned());
            continue;
        }
        let mut value = opened.to_owned();
        loop {
            let mut words = rest.split_whitespace();
            let word = words.next().expect("the value closes");
            rest = consumed(word, rest);
            value.push(' ');
            value.push_str(word);
            if let Some(at) = value.rfind(quote) {
                value.truncate(at);
                break;
            }
        }
        arguments.push(value);
    }
}

/// `rest` after its first occurrence of `word`.
fn consumed<'a>(word: &str, rest: &'a str) -> &'a str {
    let at = rest.find(word).expect("a word of rest") + word.len();
    &rest[at..]
}

/// LSF's output file name: `%I` is the task's index.
fn lsf_file_name(pattern: &str, index: usize) -> String {
    pattern.replace("%I", &index.to_string())
}

const ODD: &str = "sweep dir's \"odd\" one";

#[test]
fn a_slurm_script_names_an_odd_directory_exactly() {
    let emitted = emit(Scheduler::Slurm, &format!("{ODD} 100%")).expect("written");
    let text = std::fs::read_to_string(&emitted.script).expect("the script");
    shells_accept(&emitted.script);
    let arguments = slurm_arguments(directive(&text, "#SBATCH --output"));
    let [argument] = &arguments[..] else {
        panic!("one argument: {arguments:?}");
    };
    let pattern = argument.strip_prefix('=').expect("--output=");
    assert_eq!(
        PathBuf::from(slurm_file_name(pattern, 2)),
        emitted.dir.join("logs").join("cell-2.out"),
        "{text}"
    );
    for mcfed in [None, Some(emitted.fake.as_path())] {
        assert_eq!(
            task_arguments(&emitted.script, "SLURM_ARRAY_TASK_ID", 2, mcfed),
            ["sweep", "--cell", "2", emitted.dir.to_str().expect("utf-8")],
            "{text}"
        );
    }
}

#[test]
fn an_lsf_script_names_an_odd_directory_exactly() {
    for name in ["sweep dir's one", "the \"odd\" one"] {
        let emitted = emit(Scheduler::Lsf, name).expect("written");
        let text = std::fs::read_to_string(&emitted.script).expect("the script");
        shells_accept(&emitted.script);
        let output = text
            .lines()
            .filter_map(|line| line.strip_prefix("#BSUB "))
            .map(lsf_arguments)
            .find(|arguments| arguments.first().is_some_and(|option| option == "-o"))
            .expect("a -o line");
        assert_eq!(output.len(), 2, "{output:?}");
        assert_eq!(
            PathBuf::from(lsf_file_name(&output[1], 1)),
            emitted.dir.join("logs").join("cell-1.out"),
            "{text}"
        );
        assert_eq!(
            task_arguments(&emitted.script, "LSB_JOBINDEX", 1, None),
            ["sweep", "--cell", "1", emitted.dir.to_str().expect("utf-8")],
            "{text}"
        );
    }
}

#[test]
fn the_printed_commands_are_quoted_for_the_shell() {
    let emitted = emit(Scheduler::Slurm, ODD).expect("written");
    for command in [
        batch::merge_command(&emitted.dir),
        Scheduler::Slurm.submit_command(&emitted.script),
    ] {
        let words = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "for word in {}; do printf '%s\\n' \"$word\"; done",
                command
            ))
            .output()
            .expect("sh");
        let words: Vec<String> = String::from_utf8_lossy(&words.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        let path = words.last().expect("words");
        assert!(
            path == emitted.dir.to_str().expect("utf-8") || Path::new(path) == emitted.script,
            "{command}: {words:?}"
        );
        assert_eq!(
            words.len(),
            command
                .split_whitespace()
                .take_while(|word| !word.starts_with('\''))
                .count()
                + 1,
            "{command}: {words:?}"
        );
    }
}

#[test]
fn paths_a_reader_cannot_read_back_are_refused_saying_why() {
    for (scheduler, name, why) in [
        (
            Scheduler::Lsf,
            "both ' and \" quotes",
            "both kinds of quote",
        ),
        (Scheduler::Lsf, "two  spaces", "single spaces"),
        (Scheduler::Lsf, "100%", "`%`"),
        (Scheduler::Slurm, "new\nline", "control character"),
        (Scheduler::Lsf, "tab\there", "control character"),
    ] {
        let Err(error) = emit(scheduler, name) else {
            panic!("{name:?} is refused for {scheduler:?}");
        };
        let text = error.to_string();
        assert!(text.contains(why), "{name:?}: {text}");
        assert!(
            text.contains(" script cannot name this path") && !text.contains('\n'),
            "{text:?}"
        );
    }
}
