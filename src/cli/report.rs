//! Printing a run's decisions and checks, shared by `mcfed run` and
//! `mcfed launch` so both print the same thing.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use mcfed_scenario::{RunOutput, Scenario, render};

/// Prints `output`'s decisions (JSON lines or text), then, with `check`,
/// the scenario's expectations; the exit code says whether they held.
pub(crate) fn print(
    scenario: &Scenario,
    output: &RunOutput,
    json: bool,
    check: bool,
) -> anyhow::Result<ExitCode> {
    let mut out = BufWriter::new(io::stdout().lock());
    if json {
        for record in &output.decisions {
            writeln!(out, "{}", render::decision_json(record)?)?;
        }
    } else {
        writeln!(out, "# {}", scenario.name)?;
        if !scenario.description.is_empty() {
            writeln!(out, "# {}", scenario.description.trim())?;
        }
        writeln!(out)?;
        for record in &output.decisions {
            writeln!(out, "{}", render::decision_text(record))?;
        }
        let forwarded = output
            .decisions
            .iter()
            .filter(|record| record.target.is_some())
            .count();
        writeln!(
            out,
            "{} decisions ({} forwarded, {} pending); ran to {}",
            output.decisions.len(),
            forwarded,
            output.decisions.len() - forwarded,
            output.stats.end
        )?;
    }
    out.flush()?;
    drop(out);
    if !check {
        return Ok(ExitCode::SUCCESS);
    }
    let results = mcfed_scenario::check(scenario, output);
    let failed = results.iter().filter(|result| !result.held).count();
    let summary = format!(
        "{}{} of {} expectations held",
        render::checks_text(&results),
        results.len() - failed,
        results.len()
    );
    // Keep stdout pure JSON lines when JSON is asked for.
    if json {
        eprintln!("{summary}");
    } else {
        let mut out = io::stdout().lock();
        writeln!(out, "{summary}")?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
