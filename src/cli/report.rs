//! Printing a run's decisions and checks, shared by `mcfed run` and
//! `mcfed launch` so both print the same thing.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;
use mcfed_protocol::words::{count, escape_controls};
use mcfed_run::{RunOutput, render};
use mcfed_scenario::Scenario;

/// How to print a run's decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Report {
    /// A table per decision.
    Text,
    /// One JSON object per decision, one per line.
    Json,
    /// Only the run's totals and how fast it ran.
    Summary,
}

/// What to print.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Printing {
    /// The format.
    pub(crate) report: Report,
    /// With JSON: every record (run, decisions, events, usage), not only
    /// decisions.
    pub(crate) events: bool,
    /// Whether faults were injected (for the run record).
    pub(crate) faulty: bool,
    /// Check the scenario's expectations.
    pub(crate) check: bool,
    /// How long the run took, for the summary.
    pub(crate) wall: Option<Duration>,
    /// With text: every job event too, in time order with the decisions
    /// (`--show jobs`).
    pub(crate) jobs: bool,
}

fn summary(
    out: &mut impl Write,
    scenario: &Scenario,
    output: &RunOutput,
    wall: Option<Duration>,
) -> io::Result<()> {
    let stats = &output.stats;
    // The engine counts decisions even when it does not keep their records;
    // `launch` keeps records only.
    let (decisions, forwarded, stale) = if stats.decisions > 0 || output.decisions.is_empty() {
        (
            stats.decisions as usize,
            stats.forwarded as usize,
            stats.stale_decisions as usize,
        )
    } else {
        (
            output.decisions.len(),
            output
                .decisions
                .iter()
                .filter(|r| r.target.is_some())
                .count(),
            output
                .decisions
                .iter()
                .filter(|r| r.oracle.as_ref().is_some_and(|o| o.stale))
                .count(),
        )
    };
    writeln!(out, "scenario: {}", scenario.name)?;
    writeln!(out, "emulated: {}", stats.end)?;
    if let Some(wall) = wall {
        writeln!(out, "wall: {:.3} s", wall.as_secs_f64())?;
        writeln!(
            out,
            "jobs submitted: {} ({:.0} per wall second)",
            stats.submitted,
            stats.submitted as f64 / wall.as_secs_f64().max(1e-9)
        )?;
    } else {
        writeln!(out, "jobs submitted: {}", stats.submitted)?;
    }
    write!(out, "{}", render::totals_text(stats))?;
    writeln!(
        out,
        "decisions: {decisions} ({forwarded} forwarded, {} pending, {stale} stale)",
        decisions - forwarded
    )?;
    writeln!(
        out,
        "events: {}, messages: {}, counter updates: {} ({} lost, {} ignored)",
        stats.events, stats.messages, stats.updates, stats.updates_lost, stats.updates_ignored
    )?;
    if stats.refused > 0 {
        writeln!(out, "submissions refused: {}", stats.refused)?;
    }
    for workload in &output.workloads {
        workload_summary(out, workload)?;
    }
    if let Some(metrics) = &output.metrics {
        write!(out, "{}", render::metrics_text(metrics))?;
    }
    Ok(())
}

fn workload_summary(
    out: &mut impl Write,
    workload: &mcfed_run::records::WorkloadReport,
) -> io::Result<()> {
    let skipped = &workload.skipped;
    writeln!(
        out,
        "workload {} ({}): {} read and handed to the federation (the totals above count those taken and refused), {} skipped ({} without run time, {} without processors, {})",
        workload.name,
        workload.file,
        count(workload.submitted, "job"),
        skipped.total(),
        skipped.no_run_time,
        skipped.no_processors,
        count(skipped.malformed, "malformed line")
    )?;
    if skipped.out_of_bounds > 0 {
        writeln!(
            out,
            "  {} skipped with processors or run time beyond mcfed's bounds",
            count(skipped.out_of_bounds, "job")
        )?;
    }
    if skipped.other_records + skipped.forwarded_in + skipped.out_of_order > 0 {
        writeln!(
            out,
            "  lsb.acct: {} not JOB_FINISH of a known version, {} forwarded in (replayed from their submission cluster's log), {} submitted before a job already let out of the sorting window",
            count(skipped.other_records, "record"),
            count(skipped.forwarded_in, "job"),
            count(skipped.out_of_order, "job")
        )?;
    }
    // What the trace holds is shown escaped: a control character in it
    // must not drive the terminal.
    for (key, value) in &workload.header {
        writeln!(
            out,
            "  ; {}: {}",
            escape_controls(key),
            escape_controls(value)
        )?;
    }
    if let Some(error) = &workload.first_error {
        writeln!(out, "  first malformed line: {}", escape_controls(error))?;
    }
    Ok(())
}

/// Every decision and job event of `output`, in the order they happened.
fn decisions_and_events(out: &mut impl Write, output: &RunOutput) -> io::Result<()> {
    use mcfed_run::records::RecordRef;
    for reference in &output.order {
        match *reference {
            RecordRef::Decision(index) => {
                writeln!(out, "{}", render::decision_text(&output.decisions[index]))?;
            }
            RecordRef::Event(index) => {
                writeln!(out, "{}", render::event_text(&output.events[index]))?
            }
            RecordRef::Usage(_) => {}
        }
    }
    Ok(())
}

/// Prints `output` as `printing` says, then, with `check`, the scenario's
/// expectations; the exit code says whether they held.
pub(crate) fn print(
    scenario: &Scenario,
    output: &RunOutput,
    printing: &Printing,
) -> anyhow::Result<ExitCode> {
    let mut out = BufWriter::new(io::stdout().lock());
    match printing.report {
        Report::Json if printing.events => {
            for line in render::run_json_lines(
                &mcfed_run::records::RunRecord::of(scenario, printing.faulty),
                output,
            )? {
                writeln!(out, "{line}")?;
            }
        }
        Report::Json => {
            for record in &output.decisions {
                writeln!(out, "{}", render::decision_json(record)?)?;
            }
            if let Some(summary) = output.summary() {
                writeln!(out, "{}", serde_json::to_string(&summary)?)?;
            }
        }
        Report::Summary => summary(&mut out, scenario, output, printing.wall)?,
        Report::Text => {
            writeln!(out, "# {}", scenario.name)?;
            if !scenario.description.is_empty() {
                writeln!(out, "# {}", scenario.description.trim())?;
            }
            writeln!(out)?;
            if printing.jobs {
                decisions_and_events(&mut out, output)?;
            } else {
                for record in &output.decisions {
                    writeln!(out, "{}", render::decision_text(record))?;
                }
            }
            if !output.actions.is_empty() {
                writeln!(out, "actions:")?;
                for action in &output.actions {
                    writeln!(out, "  {}", render::action_text(action))?;
                }
            }
            let forwarded = output
                .decisions
                .iter()
                .filter(|record| record.target.is_some())
                .count();
            writeln!(
                out,
                "{} ({} forwarded, {} pending); ran to {}",
                count(output.decisions.len() as u64, "decision"),
                forwarded,
                output.decisions.len() - forwarded,
                output.stats.end
            )?;
        }
    }
    out.flush()?;
    drop(out);
    if let Some(error) = &output.jobs_csv_error {
        anyhow::bail!("jobs.csv is incomplete: {error}");
    }
    if let Some(error) = &output.lsb_acct_error {
        anyhow::bail!("the lsb.acct logs are incomplete: {error}");
    }
    if !printing.check {
        return Ok(ExitCode::SUCCESS);
    }
    let results = mcfed_run::check(scenario, output);
    let (summary, failed) = render::checks_summary(&results);
    // Keep stdout pure JSON lines when JSON is asked for.
    if printing.report == Report::Json {
        eprintln!("{summary}");
    } else {
        let mut out = io::stdout().lock();
        writeln!(out, "{summary}")?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
