//! `mcfed import lsf` (a site's LSF configuration directories into a
//! federation's TOML, every value with its source line) and `mcfed export
//! lsf` (a scenario's clusters back into lsb.* files). The reading and
//! writing are in `mcfed-lsf`; this module wires them to files, checks
//! the imported federation as `mcfed validate` would and reports its
//! problems at the LSF lines they came from.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Subcommand;
use mcfed_lsf::export::ExportCluster;
use mcfed_lsf::render::Rendered;
use mcfed_lsf::{ClusterSource, Diagnostic, ImportOptions};
use mcfed_scenario::ScenarioError;

/// `mcfed import ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum ImportCommand {
    /// Read an LSF site's configuration (an LSF_ENVDIR: lsf.conf,
    /// lsf.shared, lsf.cluster.NAME, lsbatch/NAME/configdir/lsb.*; or
    /// each cluster's lsb.* directory) into a federation's TOML; every
    /// value carries its source file:line.
    Lsf(ImportLsfArgs),
}

/// `mcfed import lsf`.
#[derive(Debug, clap::Args)]
pub(crate) struct ImportLsfArgs {
    /// An LSF_ENVDIR: its lsf.conf, its lsf.shared, and each cluster
    /// lsf.shared lists with an lsf.cluster.NAME or a
    /// LSB_CONFDIR/NAME/configdir; repeat for one per cluster. Default,
    /// when no --cluster is given either: $LSF_ENVDIR.
    #[arg(long = "envdir", value_name = "DIR")]
    envdirs: Vec<PathBuf>,
    /// A cluster and its lsb.* directory; repeat for each cluster.
    /// lsf.shared, lsf.conf and lsf.cluster.NAME are looked for beside it
    /// (a warning for each not found).
    #[arg(long = "cluster", value_name = "NAME=DIR", value_parser = cluster_source)]
    clusters: Vec<ClusterSource>,
    /// lsf.shared for the --cluster directories (default: the one beside
    /// each).
    #[arg(long, value_name = "FILE")]
    shared: Option<PathBuf>,
    /// Treat every warning (a parameter not modelled, …) as an error.
    #[arg(long)]
    strict: bool,
    /// Where to write the federation (TOML).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
}

/// `mcfed export ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum ExportCommand {
    /// Write a scenario's clusters as LSF configuration, one LSF_ENVDIR per
    /// cluster: DIR/NAME/lsf.conf, lsf.shared, lsf.cluster.NAME and
    /// lsbatch/NAME/configdir/lsb.* (import them with --envdir DIR/NAME).
    Lsf(ExportLsfArgs),
}

/// `mcfed export lsf`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExportLsfArgs {
    /// The scenario or imported federation (TOML).
    scenario: PathBuf,
    /// The directory to write into (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: PathBuf,
}

fn cluster_source(text: &str) -> Result<ClusterSource, String> {
    match text.split_once('=') {
        Some((name, dir)) if !name.is_empty() && !dir.is_empty() => Ok(ClusterSource {
            name: name.to_owned(),
            dir: PathBuf::from(dir),
        }),
        _ => Err(format!("expected NAME=DIR, found `{text}`")),
    }
}

/// `mcfed import lsf`.
pub(crate) fn import(command: ImportCommand) -> anyhow::Result<ExitCode> {
    let ImportCommand::Lsf(mut args) = command;
    if args.envdirs.is_empty() && args.clusters.is_empty() {
        match std::env::var_os("LSF_ENVDIR") {
            Some(envdir) if !envdir.is_empty() => args.envdirs.push(PathBuf::from(envdir)),
            _ => anyhow::bail!(
                "give --envdir DIR (an LSF_ENVDIR) or --cluster NAME=DIR, or set LSF_ENVDIR"
            ),
        }
    }
    let options = ImportOptions {
        envdirs: args.envdirs.clone(),
        shared: args.shared.clone(),
        strict: args.strict,
    };
    let federation = match mcfed_lsf::import(&args.clusters, &options) {
        Ok(federation) => federation,
        Err(error) => {
            print_all(&error.warnings);
            print_all(&error.errors);
            eprintln!(
                "mcfed: the LSF configuration was not imported ({} error(s))",
                error.errors.len()
            );
            return Ok(ExitCode::from(2));
        }
    };
    print_all(&federation.warnings);
    let mut header = vec![
        "Imported by `mcfed import lsf`: each value's comment names the LSF file and".to_owned(),
        "line it came from (docs/lsf-import.md).".to_owned(),
    ];
    header.extend(
        args.envdirs
            .iter()
            .map(|envdir| format!("  LSF_ENVDIR {}", envdir.display())),
    );
    header.extend(
        args.clusters
            .iter()
            .map(|source| format!("  {} = {}", source.name, source.dir.display())),
    );
    let rendered = mcfed_lsf::render::federation(&federation, &header);
    let file = args.output.display().to_string();
    if let Some(code) = check(&file, &rendered) {
        return Ok(code);
    }
    std::fs::write(&args.output, &rendered.text).with_context(|| format!("cannot write {file}"))?;
    let hosts: usize = federation
        .clusters
        .iter()
        .map(|cluster| cluster.hosts.len())
        .sum();
    let queues: usize = federation
        .clusters
        .iter()
        .map(|cluster| cluster.queues.len())
        .sum();
    writeln!(
        std::io::stdout().lock(),
        "wrote {file}: {} clusters, {hosts} hosts, {queues} queues, {} warnings",
        federation.clusters.len(),
        federation.warnings.len()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn print_all(diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        eprintln!("{diagnostic}");
    }
}

/// Checks the federation as `mcfed validate` will; its problems are
/// reported at the LSF lines their values came from. `None` when valid.
fn check(file: &str, rendered: &Rendered) -> Option<ExitCode> {
    let at = |line: usize, column: usize| match rendered.origin(line) {
        Some(origin) => origin.to_string(),
        None => format!("{file}:{line}:{column}"),
    };
    match mcfed_scenario::parse(file, &rendered.text) {
        Ok(scenario) => {
            for warning in &scenario.warnings {
                eprintln!(
                    "warning: {}: {}",
                    at(warning.line, warning.column),
                    warning.message
                );
            }
            None
        }
        Err(ScenarioError::Invalid { problems, .. }) => {
            for problem in &problems {
                eprintln!(
                    "error: {}: {}",
                    at(problem.line, problem.column),
                    problem.message
                );
            }
            eprintln!(
                "mcfed: the imported federation is not valid ({} problem(s)); nothing written",
                problems.len()
            );
            Some(ExitCode::from(2))
        }
        Err(error) => {
            eprintln!("mcfed: {error}");
            Some(ExitCode::from(2))
        }
    }
}

/// `mcfed export lsf`.
pub(crate) fn export(command: ExportCommand) -> anyhow::Result<ExitCode> {
    let ExportCommand::Lsf(args) = command;
    let scenario = mcfed_scenario::load(&args.scenario)?;
    // The DESCRIPTIONs, comments, models and types the TOML keeps as
    // comments (the scenario itself has no place for them).
    let notes = mcfed_lsf::notes::read(&args.scenario).map_err(anyhow::Error::msg)?;
    let clusters: Vec<ExportCluster<'_>> = scenario
        .clusters
        .iter()
        .map(|spec| ExportCluster {
            config: &spec.config,
            forwarder: spec.forwarder.as_ref(),
            notes: notes.get(spec.config.name.as_str()),
        })
        .collect();
    let root = std::path::absolute(&args.output)
        .with_context(|| format!("cannot resolve {}", args.output.display()))?;
    let files = mcfed_lsf::export::export(&clusters, &root)?;
    for exported in &files {
        let path = args.output.join(&exported.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, &exported.text)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !scenario.submissions.is_empty()
        || !scenario.workloads.is_empty()
        || scenario.chaos.is_some()
        || scenario
            .clusters
            .iter()
            .any(|spec| !spec.initial_jobs.is_empty())
    {
        eprintln!(
            "note: jobs, submissions, workloads, expectations and chaos are not LSF configuration: not exported"
        );
    }
    writeln!(
        std::io::stdout().lock(),
        "wrote {} files for {} clusters under {} (one LSF_ENVDIR each: import lsf --envdir {}/NAME)",
        files.len(),
        clusters.len(),
        args.output.display(),
        args.output.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
