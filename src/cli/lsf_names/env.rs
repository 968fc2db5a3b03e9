//! `mcfed lsf-env --cluster NAME`: makes a directory of LSF's command
//! names and prints the shell exports that put it to use (`eval "$(mcfed
//! lsf-env ...)"`).
//!
//! The directory (`--dir`, default `$XDG_CACHE_HOME/mcfed/lsf/NAME`, or
//! `~/.cache/mcfed/lsf/NAME`) holds `bin/` — one link to this mcfed per
//! LSF command ([`super::COMMANDS`]), which answers in LSF's syntax when
//! run under that name — and `conf/lsf.conf`, which says where they are
//! (LSF_BINDIR, LSF_ENVDIR), as LSF tools look for them. The exports set
//! LSF_BINDIR, LSF_ENVDIR and PATH, and the cluster and credentials the
//! commands use (MCFED_CLUSTER, MCFED_CERTS, and MCFED_SCENARIO,
//! MCFED_HOSTS or MCFED_ADDRESS when given), every path absolute and
//! every value quoted for the shell.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use super::COMMANDS;

/// `mcfed lsf-env`.
#[derive(Debug, clap::Args)]
pub(crate) struct LsfEnvArgs {
    /// The cluster LSF's commands talk to.
    #[arg(long)]
    cluster: String,
    /// The certificate directory (its admin.pem and ca.pem).
    #[arg(long, default_value = "certs")]
    certs: PathBuf,
    /// The scenario listing the cluster's address.
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// A hosts file (`CLUSTER HOST:PORT` per line) over the scenario's
    /// addresses.
    #[arg(long = "hosts", requires = "scenario")]
    hosts_file: Option<PathBuf>,
    /// The cluster's address (HOST:PORT), instead of the scenario's.
    #[arg(long)]
    address: Option<String>,
    /// Where to make the directory of commands.
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// Runs `mcfed lsf-env`.
pub(crate) fn lsf_env(args: LsfEnvArgs) -> anyhow::Result<ExitCode> {
    mcfed_protocol::ClusterName::new(&args.cluster)
        .map_err(|error| anyhow::anyhow!("--cluster: {error}"))?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => default_dir(&args.cluster)?,
    };
    let dir = std::path::absolute(&dir).with_context(|| format!("{}", dir.display()))?;
    let bin = dir.join("bin");
    let conf = dir.join("conf");
    std::fs::create_dir_all(&bin).with_context(|| format!("cannot create {}", bin.display()))?;
    std::fs::create_dir_all(&conf).with_context(|| format!("cannot create {}", conf.display()))?;
    let mcfed = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot find the mcfed binary")?;
    for name in COMMANDS {
        link(&mcfed, &bin.join(name))?;
    }
    std::fs::write(conf.join("lsf.conf"), lsf_conf(&args.cluster, &bin, &conf))
        .with_context(|| format!("cannot write {}", conf.join("lsf.conf").display()))?;
    let mut exports = vec![
        ("LSF_BINDIR", bin.display().to_string()),
        ("LSF_ENVDIR", conf.display().to_string()),
        ("MCFED_CLUSTER", args.cluster.clone()),
        ("MCFED_CERTS", absolute(&args.certs)?),
    ];
    if let Some(scenario) = &args.scenario {
        exports.push(("MCFED_SCENARIO", absolute(scenario)?));
    }
    if let Some(hosts) = &args.hosts_file {
        exports.push(("MCFED_HOSTS", absolute(hosts)?));
    }
    if let Some(address) = &args.address {
        exports.push(("MCFED_ADDRESS", address.clone()));
    }
    let mut text = String::new();
    for (name, value) in exports {
        let _ = writeln!(text, "export {name}={}", quoted(&value));
    }
    let _ = writeln!(
        text,
        "export PATH={}:\"$PATH\"",
        quoted(&bin.display().to_string())
    );
    crate::cli::lsf::print(&text)
}

/// `$XDG_CACHE_HOME/mcfed/lsf/CLUSTER`, else `~/.cache/mcfed/lsf/CLUSTER`.
fn default_dir(cluster: &str) -> anyhow::Result<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|value| !value.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        })
        .ok_or_else(|| anyhow::anyhow!("no HOME: give the directory with --dir"))?;
    Ok(cache.join("mcfed").join("lsf").join(cluster))
}

/// `path` made absolute, as a string.
fn absolute(path: &Path) -> anyhow::Result<String> {
    Ok(std::path::absolute(path)
        .with_context(|| format!("{}", path.display()))?
        .display()
        .to_string())
}

/// Links `name` to `mcfed`, replacing what a former run left there.
fn link(mcfed: &Path, name: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => {
            anyhow::bail!("{} is a directory, not a command", name.display())
        }
        Ok(_) => std::fs::remove_file(name)
            .with_context(|| format!("cannot replace {}", name.display()))?,
        Err(_) => {}
    }
    std::os::unix::fs::symlink(mcfed, name)
        .with_context(|| format!("cannot link {} to {}", name.display(), mcfed.display()))
}

/// The lsf.conf LSF tools read from LSF_ENVDIR.
fn lsf_conf(cluster: &str, bin: &Path, conf: &Path) -> String {
    format!(
        "# Written by `mcfed lsf-env`: LSF's commands in LSF_BINDIR are mcfed's\n# emulation of cluster {cluster}.\nLSF_BINDIR={}\nLSF_ENVDIR={}\nLSF_VERSION=10.1\n",
        bin.display(),
        conf.display()
    )
}

/// `value` in single quotes for a POSIX shell (a `'` inside as `'\''`).
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_for_the_shell() {
        assert_eq!(quoted("plain"), "'plain'");
        assert_eq!(quoted("it's $HOME"), "'it'\\''s $HOME'");
    }
}
