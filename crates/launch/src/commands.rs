//! `mcfed launch --print-commands`: instead of starting the clusters here,
//! the commands that start each one on its own host, with the certificates
//! to make and copy first.

use std::fmt::Write as _;

use super::*;
use crate::addresses::default_address;

/// What the printed commands carry beyond the launch's own options.
#[derive(Clone, Debug)]
pub struct PrintOptions {
    /// The certificate directory the commands name.
    pub certs: PathBuf,
    /// Emulated time zero, in milliseconds since the Unix epoch, shared by
    /// every cluster.
    pub epoch_ms: u64,
}

/// The commands that start `options.scenario`'s clusters each on its host:
/// how to make and hand out the certificates, one `mcfed cluster` command
/// per cluster (under a comment naming its host), and how to ask one.
pub fn print_commands(
    options: &LaunchOptions,
    print: &PrintOptions,
) -> Result<String, LaunchError> {
    let scenario =
        mcfed_scenario::hosts::load_with_hosts(&options.scenario, options.hosts.as_deref())?;
    let scenario_arg = shell_word(&options.scenario.display().to_string());
    let hosts_arg = options
        .hosts
        .as_ref()
        .map(|hosts| format!(" --hosts {}", shell_word(&hosts.display().to_string())));
    let certs_arg = shell_word(&print.certs.display().to_string());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Federation `{}`: one `mcfed cluster` per host.\n#\n# 1. Once, on a trusted machine: certificates naming each cluster's host.\nmcfed certs init {certs_arg} --scenario {scenario_arg}{}\n#\n# 2. Copy to each cluster's host: {scenario_arg}{}, {certs_arg}/ca.pem and that\n#    cluster's {certs_arg}/cluster-NAME.pem and .key; {certs_arg}/admin.pem and\n#    admin.key to where you run bsub, bjobs, ... Keep {certs_arg}/ca.key offline.\n#\n# 3. On each host, its command. Emulated time zero is the same for all\n#    (--epoch-ms): start every cluster before then.",
        scenario.name,
        hosts_arg.as_deref().unwrap_or(""),
        options
            .hosts
            .as_ref()
            .map(|hosts| format!(", {}", shell_word(&hosts.display().to_string())))
            .unwrap_or_default(),
    );
    let chaos = options.chaos.to_args().join(" ");
    for (index, spec) in scenario.clusters.iter().enumerate() {
        let address = default_address(&scenario, index, options.base_port);
        let host = mcfed_protocol::address::split_address(&address)
            .map_or(address.as_str(), |split| split.host);
        let where_ = match &spec.address {
            Some(_) => format!("on {host}, listening on {address}"),
            None => format!("on this machine (no address given), listening on {address}"),
        };
        let _ = writeln!(out, "\n# {} {where_}", spec.config.name);
        let _ = write!(
            out,
            "mcfed cluster --scenario {scenario_arg}{} --name {} --certs {certs_arg} --epoch-ms {} --speed {}",
            hosts_arg.as_deref().unwrap_or(""),
            spec.config.name,
            print.epoch_ms,
            options.speed,
        );
        if options.base_port != DEFAULT_BASE_PORT {
            let _ = write!(out, " --base-port {}", options.base_port);
        }
        if !chaos.is_empty() {
            let _ = write!(out, " {chaos}");
        }
        if options.oracle {
            let _ = write!(out, " --oracle");
        }
        out.push('\n');
    }
    if let Some(first) = scenario.clusters.first() {
        let _ = writeln!(
            out,
            "\n# 4. From anywhere with the admin certificate: ask a cluster, submit jobs.\nmcfed bclusters --cluster {} --certs {certs_arg} --scenario {scenario_arg}{}",
            first.config.name,
            hosts_arg.as_deref().unwrap_or(""),
        );
    }
    Ok(out)
}

/// `word` as one shell word: as is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("scenarios/a-b.toml"), "scenarios/a-b.toml");
        assert_eq!(shell_word("my dir/x"), "'my dir/x'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
