//! Driving a launched federation: connecting to every process, playing the
//! scenario's submissions and outages at their emulated times, and
//! gathering every process's records.

use super::*;

pub(super) fn wall_time_of(epoch: SystemTime, at: SimTime, speed: f64) -> tokio::time::Instant {
    let offset = Duration::from_millis(at.as_millis()).div_f64(speed.max(1e-6));
    let target = epoch + offset;
    let now = tokio::time::Instant::now();
    match target.duration_since(SystemTime::now()) {
        Ok(ahead) => now + ahead,
        Err(_) => now,
    }
}

/// Connects to one process, retrying until `deadline`.
pub(super) async fn connect_one(
    tls: &FederationTls,
    cluster: &str,
    address: &str,
    deadline: tokio::time::Instant,
    limit: Duration,
) -> Result<Session, LaunchError> {
    loop {
        match Session::connect(tls, cluster, address, Duration::from_secs(2)).await {
            Ok(session) => return Ok(session),
            Err(error) if tokio::time::Instant::now() >= deadline => {
                return Err(LaunchError::NotConnected {
                    limit,
                    detail: error.to_string(),
                });
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

pub(super) async fn connect_all(
    tls: &FederationTls,
    targets: &[(String, String)],
    limit: Duration,
) -> Result<Vec<Session>, LaunchError> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut sessions = Vec::new();
    for (cluster, address) in targets {
        sessions.push(connect_one(tls, cluster, address, deadline, limit).await?);
    }
    // Wait until every process is connected to all its peers, both ways.
    loop {
        let mut missing = Vec::new();
        for session in &sessions {
            if let AdminResponse::Status(status) = session.ask(&AdminRequest::Status).await? {
                for peer in status
                    .peers
                    .iter()
                    .filter(|peer| !(peer.outbound && peer.inbound > 0))
                {
                    missing.push(format!(
                        "{} <-> {}{}",
                        status.cluster,
                        peer.cluster,
                        peer.last_error
                            .as_ref()
                            .map(|error| format!(" ({error})"))
                            .unwrap_or_default()
                    ));
                }
            }
        }
        if missing.is_empty() {
            return Ok(sessions);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(LaunchError::NotConnected {
                limit,
                detail: format!("not connected: {}", missing.join(", ")),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What the launcher does, in emulated-time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Step {
    /// A cluster comes back (first, at an instant: it may get submissions).
    Up(usize),
    /// A cluster goes down.
    Down(usize),
    /// A submission.
    Submit(usize),
    /// A job control command (`[[action]]`), after the submissions of
    /// its instant.
    Action(usize),
}

/// Everything the launcher does, in order: the submissions and the
/// outages' kills and restarts.
pub(super) fn timeline(scenario: &Scenario, outages: &[Outage]) -> Vec<(SimTime, Step)> {
    let mut steps: Vec<(SimTime, Step)> = scenario
        .submissions
        .iter()
        .enumerate()
        .take_while(|(_, submission)| submission.at <= scenario.end)
        .map(|(index, submission)| (submission.at, Step::Submit(index)))
        .collect();
    steps.extend(
        scenario
            .actions
            .iter()
            .enumerate()
            .filter(|(_, action)| action.at <= scenario.end)
            .map(|(index, action)| (action.at, Step::Action(index))),
    );
    for outage in outages {
        let Some(index) = scenario
            .clusters
            .iter()
            .position(|spec| spec.config.name == outage.cluster)
        else {
            continue;
        };
        if outage.at <= scenario.end {
            steps.push((outage.at, Step::Down(index)));
            if outage.until <= scenario.end {
                steps.push((outage.until, Step::Up(index)));
            }
        }
    }
    steps.sort();
    steps
}

/// The launcher's admin connection to one cluster's process.
pub(super) enum Link {
    /// Connected.
    Connected(Session),
    /// Started again after an outage; connected when first needed.
    Starting,
    /// Killed for an outage.
    Down,
}

impl Link {
    /// The session, connecting first to a process started again; `None`
    /// while the cluster is down.
    async fn session(
        &mut self,
        tls: &FederationTls,
        cluster: &str,
        address: &str,
        options: &LaunchOptions,
    ) -> Result<Option<&Session>, LaunchError> {
        if let Link::Starting = self {
            let deadline = tokio::time::Instant::now() + options.connect_timeout;
            let session =
                connect_one(tls, cluster, address, deadline, options.connect_timeout).await?;
            *self = Link::Connected(session);
        }
        Ok(match self {
            Link::Connected(session) => Some(session),
            Link::Starting | Link::Down => None,
        })
    }
}

/// Per cluster, the decision records and initial states of the processes
/// the launcher killed (outages), kept before each kill.
#[derive(Default)]
pub(super) struct Gathered {
    records: Vec<DecisionRecord>,
    events: Vec<EventRecord>,
    usage: Vec<UsageRecord>,
    initial_states: Option<Vec<GroupState>>,
}

pub(super) async fn records_of(session: &Session) -> Result<RecordsReply, LaunchError> {
    match session.ask(&AdminRequest::Records { from: 0 }).await? {
        AdminResponse::Records(reply) => Ok(reply),
        _ => Err(ClientError::Unexpected(session.cluster().to_owned()).into()),
    }
}

pub(super) async fn drive(
    options: &LaunchOptions,
    scenario: &Scenario,
    tls: &FederationTls,
    running: &RefCell<Vec<Running>>,
    outages: &[Outage],
    epoch: SystemTime,
) -> Result<RunOutput, LaunchError> {
    let targets: Vec<(String, String)> = running
        .borrow()
        .iter()
        .map(|process| (process.cluster.clone(), process.address.clone()))
        .collect();
    let mut sessions: Vec<Link> = connect_all(tls, &targets, options.connect_timeout)
        .await?
        .into_iter()
        .map(Link::Connected)
        .collect();
    tracing::info!(clusters = sessions.len(), "every cluster is connected");
    let mut events: Vec<EventRecord> = Vec::new();
    let mut stats = RunStats {
        end: scenario.end,
        ..RunStats::default()
    };
    let mut gathered: Vec<Gathered> = targets.iter().map(|_| Gathered::default()).collect();
    // Submissions to a cluster that is down wait until it is back.
    let mut waiting: Vec<Vec<usize>> = targets.iter().map(|_| Vec::new()).collect();
    for (at, step) in timeline(scenario, outages) {
        tokio::time::sleep_until(wall_time_of(epoch, at, options.speed)).await;
        match step {
            Step::Submit(index) => {
                let submission = &scenario.submissions[index];
                let Some(cluster) = targets
                    .iter()
                    .position(|(name, _)| name == submission.cluster.as_str())
                else {
                    continue;
                };
                let (name, address) = &targets[cluster];
                match sessions[cluster]
                    .session(tls, name, address, options)
                    .await?
                {
                    Some(session) => {
                        submit(session, scenario, index, &mut stats, &mut events).await?
                    }
                    None => waiting[cluster].push(index),
                }
            }
            Step::Action(index) => {
                let action = &scenario.actions[index];
                let Some(cluster) = targets
                    .iter()
                    .position(|(name, _)| name == action.cluster.as_str())
                else {
                    continue;
                };
                let (name, address) = &targets[cluster];
                if let Some(session) = sessions[cluster]
                    .session(tls, name, address, options)
                    .await?
                {
                    act(session, scenario, index, &mut stats).await?;
                }
            }
            Step::Down(cluster) => {
                let (name, address) = &targets[cluster];
                if sessions[cluster]
                    .session(tls, name, address, options)
                    .await?
                    .is_none()
                {
                    continue;
                }
                let Link::Connected(session) =
                    std::mem::replace(&mut sessions[cluster], Link::Down)
                else {
                    continue;
                };
                // Keep what it decided: the killed process takes it along.
                let reply = records_of(&session).await?;
                session.close().await;
                let kept = &mut gathered[cluster];
                kept.records.extend(reply.records);
                kept.events.extend(reply.events);
                kept.usage.extend(reply.usage);
                kept.initial_states.get_or_insert(reply.initial_states);
                tracing::info!(cluster = %name, at = %at, "outage: killing the process");
                let mut processes = running.borrow_mut();
                let process = &mut processes[cluster];
                process.down = true;
                let _ = process.child.start_kill();
            }
            Step::Up(cluster) => {
                if !matches!(sessions[cluster], Link::Down) {
                    continue;
                }
                // Reap the killed process, then start the same command.
                loop {
                    let exited = {
                        let mut processes = running.borrow_mut();
                        !matches!(processes[cluster].child.try_wait(), Ok(None))
                    };
                    if exited {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                {
                    let mut processes = running.borrow_mut();
                    let process = &mut processes[cluster];
                    process.child = spawn(&options.binary, &process.cluster, &process.args)?;
                    forward_stderr(stderr_lines(&mut process.child));
                    process.down = false;
                }
                tracing::info!(cluster = %targets[cluster].0, at = %at, "outage over: the process is started again");
                // Connect when needed, so that the other clusters'
                // submissions are not held up by its start.
                sessions[cluster] = Link::Starting;
                let (name, address) = &targets[cluster];
                for index in std::mem::take(&mut waiting[cluster]) {
                    if let Some(session) = sessions[cluster]
                        .session(tls, name, address, options)
                        .await?
                    {
                        submit(session, scenario, index, &mut stats, &mut events).await?;
                    }
                }
            }
        }
    }
    tokio::time::sleep_until(wall_time_of(epoch, scenario.end, options.speed)).await;
    // Let what was sent at the last instant arrive.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut decisions: Vec<(usize, DecisionRecord)> = Vec::new();
    let mut usage: Vec<UsageRecord> = Vec::new();
    let mut initial_states = Vec::new();
    for (index, (link, kept)) in sessions.iter_mut().zip(gathered).enumerate() {
        decisions.extend(kept.records.into_iter().map(|record| (index, record)));
        events.extend(kept.events);
        usage.extend(kept.usage);
        let mut states = kept.initial_states;
        let (name, address) = &targets[index];
        if let Some(session) = link.session(tls, name, address, options).await? {
            let reply = records_of(session).await?;
            decisions.extend(reply.records.into_iter().map(|record| (index, record)));
            events.extend(reply.events);
            usage.extend(reply.usage);
            states.get_or_insert(reply.initial_states);
        }
        initial_states.push(states.unwrap_or_default());
    }
    for link in sessions {
        if let Link::Connected(session) = link {
            session.close().await;
        }
    }
    let mut output = in_time_order(decisions, events, usage, scenario.end);
    output.initial_states = initial_states;
    output.stats = stats;
    Ok(output)
}

/// The records gathered from the processes (decisions with their
/// cluster's index), in time order: cluster order, then each cluster's own
/// order, within an instant (as the event loop settles clusters); the
/// usage samples a run up to `end` would take.
pub(super) fn in_time_order(
    mut decisions: Vec<(usize, DecisionRecord)>,
    mut events: Vec<EventRecord>,
    mut usage: Vec<UsageRecord>,
    end: SimTime,
) -> RunOutput {
    decisions.sort_by(|(a_index, a), (b_index, b)| {
        a.time.total_cmp(&b.time).then_with(|| a_index.cmp(b_index))
    });
    events.sort_by(|a, b| a.time.total_cmp(&b.time));
    let end = end.as_secs_f64();
    usage.retain(|sample| sample.time <= end);
    usage.sort_by(|a, b| {
        a.time
            .total_cmp(&b.time)
            .then_with(|| a.cluster.cmp(&b.cluster))
    });
    RunOutput {
        decisions: decisions.into_iter().map(|(_, record)| record).collect(),
        events,
        usage,
        ..RunOutput::default()
    }
}

/// What the processes still running have decided and recorded so far,
/// for a launch that fails: asked with a short timeout each, so a dead or
/// stuck process does not hold it up.
pub(super) async fn gather_partial(
    tls: &FederationTls,
    running: &RefCell<Vec<Running>>,
    end: SimTime,
) -> Option<RunOutput> {
    let targets: Vec<(usize, String, String)> = running
        .borrow()
        .iter()
        .enumerate()
        .filter(|(_, process)| !process.down)
        .map(|(index, process)| (index, process.cluster.clone(), process.address.clone()))
        .collect();
    let (mut decisions, mut events, mut usage) = (Vec::new(), Vec::new(), Vec::new());
    for (index, cluster, address) in targets {
        let Ok(session) = Session::connect(tls, &cluster, &address, Duration::from_secs(1)).await
        else {
            continue;
        };
        let reply = tokio::time::timeout(Duration::from_secs(2), records_of(&session)).await;
        session.close().await;
        if let Ok(Ok(reply)) = reply {
            decisions.extend(reply.records.into_iter().map(|record| (index, record)));
            events.extend(reply.events);
            usage.extend(reply.usage);
        }
    }
    (!decisions.is_empty() || !events.is_empty())
        .then(|| in_time_order(decisions, events, usage, end))
}

/// Gives `[[action]]` `index` through `session` (a refusal is counted,
/// as the in-process engines count it).
pub(super) async fn act(
    session: &Session,
    scenario: &Scenario,
    index: usize,
    stats: &mut RunStats,
) -> Result<(), LaunchError> {
    let action = &scenario.actions[index];
    let request = match &action.action {
        mcfed_scenario::model::ActionKind::Job(job_action) => AdminRequest::Control {
            job: mcfed_federation::JobRef::Name(action.job.clone()),
            action: job_action.clone(),
        },
        mcfed_scenario::model::ActionKind::Host(event) => AdminRequest::Host {
            host: action.job.clone(),
            event: *event,
        },
    };
    stats.actions += 1;
    match session.ask(&request).await {
        Ok(_) => {}
        Err(ClientError::Refused { message, .. }) => {
            stats.actions_refused += 1;
            tracing::info!(action = %action.origin, %message, "action refused");
        }
        Err(error) => return Err(error.into()),
    }
    Ok(())
}

/// Plays submission `index` through `session`.
pub(super) async fn submit(
    session: &Session,
    scenario: &Scenario,
    index: usize,
    stats: &mut RunStats,
    events: &mut Vec<EventRecord>,
) -> Result<(), LaunchError> {
    let submission = &scenario.submissions[index];
    let request = AdminRequest::Submit {
        queue: submission.queue.to_string(),
        spec: submission.spec.clone(),
    };
    match session.ask(&request).await {
        Ok(AdminResponse::Submitted(submitted)) => {
            stats.submitted += 1;
            // The job's submission, as the event loop records it.
            let mut event = EventRecord::new(
                submission.at.as_secs_f64(),
                &submitted.cluster,
                &submission.spec.name,
                submitted.job_id,
                "submitted",
            );
            event.queue = Some(submitted.queue.clone());
            if submitted.forwarded {
                event.source_cluster = Some(submitted.cluster);
                event.source_job_id = Some(submitted.job_id);
            }
            events.push(event);
        }
        Ok(_) => stats.submitted += 1,
        Err(ClientError::Refused { message, .. }) => {
            stats.refused += 1;
            tracing::warn!(job = %submission.spec.name, cluster = %submission.cluster, %message, "submission refused");
        }
        Err(error) => return Err(error.into()),
    }
    Ok(())
}
