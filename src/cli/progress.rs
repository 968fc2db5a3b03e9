//! A progress bar on standard error for long runs: jobs finished and
//! submitted, emulated time and jobs per second. Shown only when standard
//! error is a terminal, after the run has taken a second, and not with
//! `--quiet`.

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcfed_engine::{EngineError, EventLoop, Progress};
use mcfed_run::{RunOptions, RunOutput};
use mcfed_scenario::Scenario;

/// Runs `scenario` with the event loop, with a progress bar unless `quiet`.
pub(crate) fn run(
    scenario: &Scenario,
    options: &RunOptions,
    quiet: bool,
) -> Result<RunOutput, EngineError> {
    let engine = EventLoop::new(scenario, options)?;
    if quiet || !std::io::stderr().is_terminal() {
        return Ok(engine.run(None));
    }
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut shown = false;
    let output = engine.run_observed(None, &mut |progress: &Progress| {
        let elapsed = started.elapsed();
        if !shown && elapsed > Duration::from_secs(1) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        let rate = progress.finished as f64 / elapsed.as_secs_f64().max(1e-9);
        bar.set_message(format!(
            "{} jobs finished of {} submitted, emulated {}, {:.0} jobs/s",
            progress.finished, progress.submitted, progress.now, rate
        ));
        bar.tick();
    });
    bar.finish_and_clear();
    Ok(output)
}
