//! Starting a cluster process: its arguments, the process itself, and its
//! standard error (the listening line read back, the rest passed on).

use super::*;

/// The `mcfed cluster` arguments of cluster `index`, listening on `listen`
/// and told the addresses of its peers that are known.
pub(super) fn cluster_args(
    options: &LaunchOptions,
    scenario: &Scenario,
    certs: &Path,
    listen: &str,
    addresses: &[Option<String>],
    index: usize,
    epoch_ms: u64,
) -> Vec<OsString> {
    let spec = &scenario.clusters[index];
    let mut args: Vec<OsString> = vec![
        "cluster".into(),
        "--scenario".into(),
        options.scenario.clone().into(),
        "--name".into(),
        spec.config.name.to_string().into(),
        "--certs".into(),
        certs.into(),
        "--listen".into(),
        listen.into(),
        "--base-port".into(),
        options.base_port.to_string().into(),
        "--speed".into(),
        options.speed.to_string().into(),
        "--epoch-ms".into(),
        epoch_ms.to_string().into(),
        "--report".into(),
        "none".into(),
        "--exit-on-stdin-eof".into(),
        // The run's record gathered at the end holds every job event.
        "--record-events".into(),
    ];
    for peer in peers_of(spec) {
        if let Some(address) = scenario
            .clusters
            .iter()
            .position(|other| other.config.name == peer)
            .and_then(|position| addresses[position].as_ref())
        {
            args.push("--peer".into());
            args.push(format!("{peer}={address}").into());
        }
    }
    args.extend(options.chaos.to_args().into_iter().map(OsString::from));
    if options.oracle {
        args.push("--oracle".into());
    }
    if let Some(state) = &options.state {
        args.push("--state".into());
        args.push(state.join(spec.config.name.as_str()).into());
    }
    if let Some(dir) = &options.lsb_acct {
        args.push("--lsb-acct".into());
        args.push(dir.into());
    }
    args
}

/// Starts `mcfed cluster` with `args`; its standard error is piped (see
/// [`forward_stderr`] and [`listening`]).
pub(super) fn spawn(binary: &Path, cluster: &str, args: &[OsString]) -> Result<Child, LaunchError> {
    Command::new(binary)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| LaunchError::Spawn {
            cluster: cluster.to_owned(),
            source,
        })
}

type StderrLines = tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>;

pub(super) fn stderr_lines(child: &mut Child) -> Option<StderrLines> {
    use tokio::io::AsyncBufReadExt as _;
    child
        .stderr
        .take()
        .map(|stderr| tokio::io::BufReader::new(stderr).lines())
}

/// Copies what a process writes on standard error to the launcher's, until
/// it closes (but for where it listens).
pub(super) fn forward_stderr(lines: Option<StderrLines>) {
    if let Some(mut lines) = lines {
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                // A restarted process listens where it did before.
                if parse_listening_line(&line).is_none() {
                    pass_on(&line);
                }
            }
        });
    }
}

/// Writes a line of a process's standard error on the launcher's (a
/// launcher whose standard error is closed drops it).
pub(super) fn pass_on(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Waits, at most `limit`, until the process of `cluster` says where it
/// listens (passing on what else it writes on standard error), and returns
/// that address; then keeps passing its standard error on.
pub(super) async fn listening(
    cluster: &str,
    child: &mut Child,
    limit: Duration,
) -> Result<String, LaunchError> {
    let mut lines = stderr_lines(child);
    let read = async {
        let lines = lines.as_mut()?;
        while let Ok(Some(line)) = lines.next_line().await {
            match parse_listening_line(&line) {
                Some((name, address)) if name == cluster => return Some(address.to_owned()),
                _ => pass_on(&line),
            }
        }
        None
    };
    let address = tokio::time::timeout(limit, read).await;
    forward_stderr(lines);
    match address {
        Ok(Some(address)) => Ok(address),
        Ok(None) => {
            let status = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
            Err(LaunchError::ClusterDied {
                cluster: cluster.to_owned(),
                status: match status {
                    Ok(Ok(status)) => status.to_string(),
                    Ok(Err(error)) => error.to_string(),
                    Err(_) => "it closed its standard error".to_owned(),
                },
            })
        }
        Err(_) => Err(LaunchError::NotConnected {
            limit,
            detail: format!("the process of cluster `{cluster}` did not say where it listens"),
        }),
    }
}
