//! `mcfed bsub --from FILE`: many jobs over one admin connection.
//!
//! Each line of the file (or standard input) holds `bsub`'s job options;
//! the jobs are sent in batches ([`AdminRequest::SubmitMany`]) with several
//! requests in flight at once, so a journaled cluster's group commit makes
//! many of them durable per sync. Each job is printed once acknowledged, in
//! the file's order; `--stats` reports the submission rate and the
//! acknowledgement latency of each job (from its request being sent to its
//! acknowledgement) on standard error.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use hdrhistogram::Histogram;
use mcfed_admin::cmd::submit;
use mcfed_admin::{AdminRequest, AdminResponse, Submitted};
use mcfed_process::client::{Session, admin_tls};
use mcfed_protocol::JobSpec;
use mcfed_protocol::bounds::SUBMIT_BATCH;

use super::lsf::submit::{BsubArgs, JobArgs};

/// One line of a `--from` file: `bsub`'s job options.
#[derive(Debug, Parser)]
#[command(no_binary_name = true, disable_help_flag = true)]
struct Line {
    #[command(flatten)]
    job: JobArgs,
    /// The job's output file.
    #[arg(short = 'o', value_name = "FILE")]
    output_file: Option<String>,
}

/// The jobs of the file: queue and spec, each line's options over the
/// command line's.
fn read_jobs(args: &BsubArgs) -> anyhow::Result<Vec<(String, JobSpec)>> {
    let path = args.from.as_ref().context("--from")?;
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(path).with_context(|| format!("{}", path.display()))?,
        ))
    };
    let mut jobs = Vec::new();
    for (index, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("{}:{}", path.display(), index + 1))?;
        if line.trim_start().starts_with('#') {
            continue;
        }
        // Shell words: `-J "with space"` is one name.
        let words = shlex::split(&line).ok_or_else(|| {
            anyhow::anyhow!(
                "{}:{}: a quote is not closed (the line is read as shell words)",
                path.display(),
                index + 1
            )
        })?;
        if words.is_empty() {
            continue;
        }
        let parsed = Line::try_parse_from(merged(&args.job, words)).map_err(|error| {
            anyhow::anyhow!(
                "{}:{}: {}",
                path.display(),
                index + 1,
                error.to_string().trim()
            )
        })?;
        let job = parsed
            .job
            .job(args.job.queue.as_deref(), parsed.output_file.clone())
            .with_context(|| format!("{}:{}", path.display(), index + 1))?;
        jobs.push(job);
    }
    Ok(jobs)
}

/// A line's words, after the command line's queue unless the line names
/// its own; LSF's one-dash long options spelled as clap reads them.
fn merged(defaults: &JobArgs, words: Vec<String>) -> Vec<std::ffi::OsString> {
    let mut all = Vec::new();
    let own_queue = words.iter().any(|word| word.starts_with("-q"));
    if let (Some(queue), false) = (&defaults.queue, own_queue) {
        all.extend(["-q".to_owned(), queue.clone()]);
    }
    all.extend(words);
    crate::cli::lsf_spellings(all.into_iter().map(Into::into))
}

/// Runs `mcfed bsub --from`.
pub(crate) fn submit_from(args: &BsubArgs) -> anyhow::Result<ExitCode> {
    let jobs = read_jobs(args)?;
    let batch = usize::try_from(SUBMIT_BATCH.check(args.batch)?)?;
    let target = args.target.target()?;
    let tls = admin_tls(&target.certs)?;
    let address = target.address.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let started = Instant::now();
    let outcome = runtime.block_on(async {
        let session =
            Session::connect(&tls, &target.cluster, &address, Duration::from_secs(5)).await?;
        let outcome = pipeline(&session, jobs, batch, args).await;
        session.close().await;
        outcome
    })?;
    let elapsed = started.elapsed();
    if args.stats {
        outcome.report(elapsed);
    }
    Ok(if outcome.refused == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What a `--from` run did.
struct Outcome {
    acknowledged: u64,
    refused: u64,
    /// Acknowledgement latencies, in microseconds.
    latency: Histogram<u64>,
}

impl Outcome {
    fn report(&self, elapsed: Duration) {
        let rate = self.acknowledged as f64 / elapsed.as_secs_f64().max(1e-9);
        let ms = |quantile: f64| self.latency.value_at_quantile(quantile) as f64 / 1000.0;
        let _ = writeln!(
            std::io::stderr().lock(),
            "submitted {} jobs ({} refused) in {:.2} s: {:.0} jobs/s; acknowledgement latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            self.acknowledged,
            self.refused,
            elapsed.as_secs_f64(),
            rate,
            ms(0.5),
            ms(0.99),
            self.latency.max() as f64 / 1000.0
        );
    }
}

/// Sends `jobs` in batches of `batch`, `args.window` requests at once (at
/// `args.rate` jobs a second at most), printing each acknowledgement in
/// order.
async fn pipeline(
    session: &Session,
    jobs: Vec<(String, JobSpec)>,
    batch: usize,
    args: &BsubArgs,
) -> anyhow::Result<Outcome> {
    use futures_util::StreamExt as _;
    let mut outcome = Outcome {
        acknowledged: 0,
        refused: 0,
        // Microseconds, up to a minute (longer ones count as a minute).
        latency: Histogram::new_with_bounds(1, 60_000_000, 3)?,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let started = tokio::time::Instant::now();
    let mut batches: VecDeque<Vec<(String, JobSpec)>> = VecDeque::new();
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        batches.push_back(jobs.by_ref().take(batch).collect());
    }
    let mut sent = 0usize;
    let requests = futures_util::stream::iter(batches.into_iter().map(|jobs| {
        let due = args
            .rate
            .filter(|rate| *rate > 0.0)
            .map(|rate| started + Duration::from_secs_f64(sent as f64 / rate));
        sent += jobs.len();
        async move {
            if let Some(due) = due {
                tokio::time::sleep_until(due).await;
            }
            let asked = Instant::now();
            let answer = session.ask(&AdminRequest::SubmitMany { jobs }).await;
            (asked.elapsed(), answer)
        }
    }))
    .buffered(args.window.max(1));
    tokio::pin!(requests);
    while let Some((took, answer)) = requests.next().await {
        let AdminResponse::SubmittedMany(results) = answer? else {
            anyhow::bail!("cluster `{}` gave an unexpected answer", session.cluster());
        };
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        for result in results {
            match result {
                Ok(job) => {
                    outcome.acknowledged += 1;
                    outcome.latency.saturating_record(micros);
                    print_job(&mut out, &job, args)?;
                }
                Err(error) => {
                    outcome.refused += 1;
                    writeln!(std::io::stderr().lock(), "job refused: {error}")?;
                }
            }
        }
    }
    out.flush()?;
    Ok(outcome)
}

fn print_job(out: &mut impl Write, job: &Submitted, args: &BsubArgs) -> anyhow::Result<()> {
    if args.json {
        writeln!(
            out,
            "{}",
            submit::submitted_table(job).lsf_json().trim_end()
        )?;
    } else if args.json_alias() {
        writeln!(out, "{}", serde_json::to_string(job)?)?;
    } else {
        writeln!(out, "{}", submit::submitted(job).trim_end())?;
    }
    Ok(())
}
