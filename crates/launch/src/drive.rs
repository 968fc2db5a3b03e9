//! Driving a launched federation: connecting to every process, playing the
//! scenario's submissions and outages at their emulated times, and
//! gathering every process's records.

use mcfed_run::metrics::{EndState, MetricsRecorder};
use mcfed_run::recorder::{Recorder, Recording};
use mcfed_run::records::ActionRecord;
use mcfed_scenario::model::Submission;

use super::timeline::{Next, Plan, Step};
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

/// Per cluster, what the processes the launcher killed (outages) had
/// recorded, kept before each kill.
#[derive(Default)]
pub(super) struct Gathered {
    records: Vec<DecisionRecord>,
    events: Vec<EventRecord>,
    usage: Vec<UsageRecord>,
    initial_states: Option<Vec<GroupState>>,
    metrics: MetricsRecorder,
    end_state: Option<EndState>,
    stats: RunStats,
}

impl Gathered {
    /// Keeps what a process answered.
    fn keep(&mut self, reply: RecordsReply) {
        self.records.extend(reply.records);
        self.events.extend(reply.events);
        self.usage.extend(reply.usage);
        self.initial_states.get_or_insert(reply.initial_states);
        if let Some(metrics) = reply.metrics {
            self.metrics.merge(metrics);
        }
        if reply.end_state.is_some() {
            self.end_state = reply.end_state;
        }
        if let Some(stats) = &reply.stats {
            self.stats.merge(stats);
        }
    }
}

pub(super) async fn records_of(session: &Session) -> Result<RecordsReply, LaunchError> {
    match session.ask(&AdminRequest::Records { from: 0 }).await? {
        AdminResponse::Records(reply) => Ok(*reply),
        _ => Err(ClientError::Unexpected(session.cluster().to_owned()).into()),
    }
}

/// A launched federation being driven: the launcher's connections to the
/// processes and what it has gathered so far.
pub(super) struct Drive<'a> {
    pub(super) options: &'a LaunchOptions,
    pub(super) scenario: &'a Scenario,
    pub(super) tls: &'a FederationTls,
    /// Each cluster's name and address.
    pub(super) targets: Vec<(String, String)>,
    pub(super) sessions: Vec<Link>,
    gathered: Vec<Gathered>,
    /// Submissions to a cluster that is down wait until it is back.
    waiting: Vec<Vec<Submission>>,
    /// What only the launcher sees: the `[[action]]`s it played, and
    /// submissions to a cluster the federation does not have (the
    /// processes record everything else).
    recorder: Recorder,
    /// How late (in emulated time) the launcher played a step, at worst.
    late: Duration,
}

pub(super) async fn drive(
    options: &LaunchOptions,
    scenario: &Scenario,
    tls: &FederationTls,
    running: &RefCell<Vec<Running>>,
    outages: &[Outage],
    epoch: SystemTime,
) -> Result<RunOutput, LaunchError> {
    let mut plan = Plan::open(scenario, outages)?;
    let targets: Vec<(String, String)> = running
        .borrow()
        .iter()
        .map(|process| (process.cluster.clone(), process.address.clone()))
        .collect();
    let sessions: Vec<Link> = connect_all(tls, &targets, options.connect_timeout)
        .await?
        .into_iter()
        .map(Link::Connected)
        .collect();
    tracing::info!(clusters = sessions.len(), "every cluster is connected");
    let mut drive = Drive {
        options,
        scenario,
        tls,
        gathered: targets.iter().map(|_| Gathered::default()).collect(),
        waiting: targets.iter().map(|_| Vec::new()).collect(),
        targets,
        sessions,
        recorder: Recorder::new(Recording {
            events: true,
            count_only: false,
        }),
        late: Duration::ZERO,
    };
    while let Some((at, next)) = plan.next() {
        tokio::time::sleep_until(wall_time_of(epoch, at, options.speed)).await;
        drive.late(epoch, at);
        match next {
            Next::Workload(submission) => drive.submit(submission).await?,
            Next::Step(Step::Submit(index)) => {
                drive.submit(scenario.submissions[index].clone()).await?;
            }
            Next::Step(Step::Action(index)) => drive.act(index).await?,
            Next::Step(Step::Down(cluster)) => drive.kill(cluster, at, running).await?,
            Next::Step(Step::Up(cluster)) => drive.restart(cluster, at, running).await?,
        }
    }
    let end = if scenario.drain {
        drive.until_drained().await?
    } else {
        tokio::time::sleep_until(wall_time_of(epoch, scenario.end, options.speed)).await;
        scenario.end
    };
    // Let what was sent at the last instant arrive.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut output = drive.gather(end).await?;
    output.workloads = plan.reports();
    Ok(output)
}

impl Drive<'_> {
    /// The launcher woke to play a step due at `at`: notes how late, in
    /// emulated time.
    fn late(&mut self, epoch: SystemTime, at: SimTime) {
        let elapsed = SystemTime::now()
            .duration_since(epoch)
            .unwrap_or_default()
            .mul_f64(self.options.speed.max(1e-6));
        let late = elapsed.saturating_sub(Duration::from_millis(at.as_millis()));
        self.late = self.late.max(late);
    }

    /// The session to cluster `index`, connecting first if its process was
    /// started again; none while it is down.
    pub(super) async fn session(&mut self, index: usize) -> Result<Option<&Session>, LaunchError> {
        let (name, address) = &self.targets[index];
        self.sessions[index]
            .session(self.tls, name, address, self.options)
            .await
    }

    async fn submit(&mut self, submission: Submission) -> Result<(), LaunchError> {
        let Some(cluster) = self
            .targets
            .iter()
            .position(|(name, _)| name == submission.cluster.as_str())
        else {
            self.recorder
                .refused_unknown_cluster(&submission.spec.name, &submission.cluster);
            return Ok(());
        };
        if self.session(cluster).await?.is_none() {
            self.waiting[cluster].push(submission);
            return Ok(());
        }
        let Link::Connected(session) = &self.sessions[cluster] else {
            return Ok(());
        };
        submit(session, &submission).await
    }

    async fn act(&mut self, index: usize) -> Result<(), LaunchError> {
        let Some(cluster) = self
            .targets
            .iter()
            .position(|(name, _)| name == self.scenario.actions[index].cluster.as_str())
        else {
            return Ok(());
        };
        if self.session(cluster).await?.is_none() {
            return Ok(());
        }
        let Link::Connected(session) = &self.sessions[cluster] else {
            return Ok(());
        };
        let record = act(session, self.scenario, index).await?;
        self.recorder.action(record);
        Ok(())
    }

    /// An outage begins: keeps what the process decided, then kills it.
    async fn kill(
        &mut self,
        cluster: usize,
        at: SimTime,
        running: &RefCell<Vec<Running>>,
    ) -> Result<(), LaunchError> {
        if self.session(cluster).await?.is_none() {
            return Ok(());
        }
        let Link::Connected(session) = std::mem::replace(&mut self.sessions[cluster], Link::Down)
        else {
            return Ok(());
        };
        // Keep what it decided: the killed process takes it along.
        let reply = records_of(&session).await?;
        session.close().await;
        self.gathered[cluster].keep(reply);
        tracing::info!(cluster = %self.targets[cluster].0, at = %at, "outage: killing the process");
        let mut processes = running.borrow_mut();
        let process = &mut processes[cluster];
        process.down = true;
        let _ = process.child.start_kill();
        Ok(())
    }

    /// An outage ends: starts the same command again, then plays the
    /// submissions that waited for it.
    async fn restart(
        &mut self,
        cluster: usize,
        at: SimTime,
        running: &RefCell<Vec<Running>>,
    ) -> Result<(), LaunchError> {
        if !matches!(self.sessions[cluster], Link::Down) {
            return Ok(());
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
            process.child = spawn(&self.options.binary, &process.cluster, &process.args)?;
            forward_stderr(stderr_lines(&mut process.child));
            process.down = false;
        }
        tracing::info!(cluster = %self.targets[cluster].0, at = %at, "outage over: the process is started again");
        // Connect when needed, so that the other clusters' submissions are
        // not held up by its start.
        self.sessions[cluster] = Link::Starting;
        for submission in std::mem::take(&mut self.waiting[cluster]) {
            self.submit(submission).await?;
        }
        Ok(())
    }

    /// Asks every process for what it recorded, adds what was kept of
    /// killed ones, and closes the sessions: the run's output, ended at
    /// `end`.
    async fn gather(mut self, end: SimTime) -> Result<RunOutput, LaunchError> {
        let mut decisions: Vec<(usize, DecisionRecord)> = Vec::new();
        let mut usage: Vec<UsageRecord> = Vec::new();
        let mut events: Vec<EventRecord> = self.recorder.output().events.clone();
        let mut initial_states = Vec::new();
        let mut end_states = Vec::new();
        let mut stats = *self.recorder.stats();
        let mut metrics = MetricsRecorder::default();
        let mut lags = Vec::new();
        let gathered = std::mem::take(&mut self.gathered);
        for (index, mut kept) in gathered.into_iter().enumerate() {
            if let Some(session) = self.session(index).await? {
                kept.keep(records_of(session).await?);
            }
            decisions.extend(kept.records.into_iter().map(|record| (index, record)));
            events.extend(kept.events);
            usage.extend(kept.usage);
            initial_states.push(kept.initial_states.unwrap_or_default());
            metrics.merge(kept.metrics);
            stats.merge(&kept.stats);
            lags.push(mcfed_run::records::ClusterLag {
                cluster: self.targets[index].0.clone(),
                max_lag: Duration::from_millis(kept.stats.lag_max_ms).as_secs_f64(),
                max_delivery: Duration::from_millis(kept.stats.delivery_max_ms).as_secs_f64(),
            });
            end_states.extend(kept.end_state);
        }
        for link in self.sessions {
            if let Link::Connected(session) = link {
                session.close().await;
            }
        }
        let mut output = in_time_order(decisions, events, usage, end);
        output.initial_states = initial_states;
        output.actions = self.recorder.output().actions.clone();
        lags.push(mcfed_run::records::ClusterLag {
            cluster: "(launcher)".to_owned(),
            max_lag: self.late.as_secs_f64(),
            max_delivery: 0.0,
        });
        output.lags = lags;
        output.stats = stats;
        output.stats.end = end;
        mcfed_run::metrics::add_end_totals(&mut output.stats.jobs, &end_states);
        output.metrics = Some(mcfed_run::metrics::finish(metrics, end_states, end));
        Ok(output)
    }
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

/// Gives `[[action]]` `index` through `session`: what it did, as the
/// in-process engines record it.
pub(super) async fn act(
    session: &Session,
    scenario: &Scenario,
    index: usize,
) -> Result<ActionRecord, LaunchError> {
    let action = &scenario.actions[index];
    let request = match &action.action {
        mcfed_scenario::model::ActionKind::Job(job_action) => {
            AdminRequest::control(&action.job, job_action.clone())
        }
        mcfed_scenario::model::ActionKind::Host(event) => AdminRequest::host(&action.job, *event),
        mcfed_scenario::model::ActionKind::ReservationAdd { config, by } => {
            AdminRequest::ReservationAdd {
                config: config.clone(),
                by: by.clone(),
            }
        }
        mcfed_scenario::model::ActionKind::ReservationDelete { by } => {
            AdminRequest::ReservationDelete {
                name: action.job.clone(),
                by: by.clone(),
            }
        }
    };
    let answer = match session.ask(&request).await {
        Ok(answer) => answer,
        Err(ClientError::Refused { message, .. }) => AdminResponse::Error(message),
        Err(error) => return Err(error.into()),
    };
    let record = match answer.outcome() {
        Ok(done) => ActionRecord::done(action, done),
        Err(why) => {
            tracing::info!(action = %action.origin, %why, "action refused");
            ActionRecord::refused(action, why)
        }
    };
    Ok(record)
}

/// Plays `submission` through `session` (its process counts and records
/// it, taken or refused).
pub(super) async fn submit(session: &Session, submission: &Submission) -> Result<(), LaunchError> {
    let request = AdminRequest::Submit {
        queue: submission.queue.to_string(),
        spec: submission.spec.clone(),
    };
    match session.ask(&request).await {
        Ok(_) => Ok(()),
        Err(ClientError::Refused { message, .. }) => {
            tracing::debug!(job = %submission.spec.name, cluster = %submission.cluster, %message, "submission refused");
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}
