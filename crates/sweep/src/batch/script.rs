//! The job-array script of a batch sweep and the commands printed beside
//! it, every path quoted for the parser that reads it: the shell (the
//! script's body, `submit:` and `merge:`), Slurm's reader of `#SBATCH`
//! lines (quotes group, a backslash escapes, `%%` is a `%` in a file
//! name) and LSF's reader of `#BSUB` lines (a value starts with a quote
//! and ends at the same quote; words inside are joined by one space).
//! A path no parser could read back exactly is refused, naming why.

use std::fmt::Write as _;
use std::path::Path;

use mcfed_protocol::words;

use super::{BatchError, LOGS, Scheduler};

/// The script for `cells` tasks of the sweep in `dir` (absolute), which
/// run `executable` unless `MCFED` names another.
pub(super) fn script_text(
    scheduler: Scheduler,
    dir: &Path,
    cells: usize,
    executable: &Path,
) -> Result<String, BatchError> {
    let logs = dir.join(LOGS);
    let mut text = String::from("#!/bin/sh\n");
    match scheduler {
        Scheduler::Slurm => {
            let output = slurm_quoted(nameable(scheduler, &logs)?, "/cell-%a.out");
            let _ = write!(
                text,
                "#SBATCH --job-name=mcfed-sweep\n#SBATCH --array=1-{cells}\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --output={output}\n"
            );
        }
        Scheduler::Lsf => {
            let output = lsf_quoted(nameable(scheduler, &logs)?, "/cell-%I.out")
                .map_err(|why| unnameable(scheduler, &logs, why))?;
            let _ = write!(
                text,
                "#BSUB -J \"mcfed-sweep[1-{cells}]\"\n#BSUB -n 1\n#BSUB -o {output}\n"
            );
        }
    }
    nameable(scheduler, executable)?;
    let variable = scheduler.index_variable();
    let script = dir.join(scheduler.script_name());
    let _ = write!(
        text,
        "# A sweep of {count} written by mcfed: each array task runs one cell.\n# Submit: {submit}\n# Merge:  {merge}\nset -eu\nmcfed=${{MCFED:-{executable}}}\nexec \"$mcfed\" sweep --cell \"${{{variable}:?run this script as a job array task, or set {variable}}}\" {dir}\n",
        count = words::count(cells as u64, "cell"),
        submit = scheduler.submit_command(&script),
        merge = merge_command(dir),
        executable = shell_quote(executable),
        dir = shell_quote(dir),
    );
    Ok(text)
}

/// `mcfed report DIR`, with DIR quoted for a POSIX shell.
pub fn merge_command(dir: &Path) -> String {
    format!("mcfed report {}", shell_quote(dir))
}

/// `path` quoted for a POSIX shell: in single quotes, a single quote
/// written as `'\''`.
pub fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// `path` as text a script line can hold: UTF-8 (a file name is written
/// as it is), no control character (a newline would end the line).
fn nameable(scheduler: Scheduler, path: &Path) -> Result<&str, BatchError> {
    let text = path
        .to_str()
        .ok_or_else(|| unnameable(scheduler, path, "it is not UTF-8"))?;
    if text.chars().any(char::is_control) {
        return Err(unnameable(
            scheduler,
            path,
            "it holds a control character, which would end a line of the script",
        ));
    }
    Ok(text)
}

fn unnameable(scheduler: Scheduler, path: &Path, why: &'static str) -> BatchError {
    BatchError::Unnameable {
        path: path.to_owned(),
        scheduler: scheduler.name(),
        why,
    }
}

/// `literal` then `pattern` (a file name pattern, `/cell-%a.out`) as one
/// argument of an `#SBATCH` line: in double quotes, with a backslash
/// before a backslash or a double quote, and every `%` of `literal`
/// doubled (a file name pattern reads `%%` as `%`).
fn slurm_quoted(literal: &str, pattern: &str) -> String {
    let mut quoted = String::with_capacity(literal.len() + pattern.len() + 2);
    quoted.push('"');
    for character in literal.chars() {
        match character {
            '\\' | '"' => {
                quoted.push('\\');
                quoted.push(character);
            }
            '%' => quoted.push_str("%%"),
            _ => quoted.push(character),
        }
    }
    quoted.push_str(pattern);
    quoted.push('"');
    quoted
}

/// `literal` then `pattern` (`/cell-%I.out`) as the value of a `#BSUB`
/// option: in the quote it does not hold (LSF has no escape), when its
/// words are joined by single spaces (LSF rejoins a quoted value's words
/// so) and `literal` holds no `%` (LSF replaces `%J` and `%I` in a file
/// name, and has no escape for it).
fn lsf_quoted(literal: &str, pattern: &str) -> Result<String, &'static str> {
    if literal.contains('%') {
        return Err("LSF would read a `%` in it as a job or task number");
    }
    if literal.contains("  ") || literal.contains(|c: char| c.is_whitespace() && c != ' ') {
        return Err("LSF joins the words of a quoted value with single spaces");
    }
    let text = format!("{literal}{pattern}");
    match (text.contains('"'), text.contains('\'')) {
        (false, _) => Ok(format!("\"{text}\"")),
        (true, false) => Ok(format!("'{text}'")),
        (true, true) => Err("it holds both kinds of quote, and LSF has no escape"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_quotes_escape_what_its_reader_reads() {
        assert_eq!(
            slurm_quoted("/a b/it's \"x\"\\%/logs", "/cell-%a.out"),
            "\"/a b/it's \\\"x\\\"\\\\%%/logs/cell-%a.out\""
        );
    }

    #[test]
    fn lsf_quotes_take_the_quote_the_value_does_not_hold() {
        assert_eq!(
            lsf_quoted("/a b/it's", "/cell-%I.out"),
            Ok("\"/a b/it's/cell-%I.out\"".to_owned())
        );
        assert_eq!(
            lsf_quoted("/a \"b\"", "/cell-%I.out"),
            Ok("'/a \"b\"/cell-%I.out'".to_owned())
        );
        for refused in ["/a \"b\" it's", "/a  b", "/a\tb", "/100%"] {
            assert!(lsf_quoted(refused, "/cell-%I.out").is_err(), "{refused}");
        }
    }

    #[test]
    fn the_shell_reads_a_quoted_path_back() {
        assert_eq!(shell_quote(Path::new("/a b/it's")), r"'/a b/it'\''s'");
    }
}
