//! A scenario's `[[action]]`s in the in-process engines: each is the admin
//! command a live cluster would be given (`mcfed_admin`), applied to its
//! member at its time, so job control is written once.

use mcfed_admin::{AdminRequest, AdminResponse, Applied};
use mcfed_federation::{Effects, Member};
use mcfed_protocol::SimTime;
use mcfed_run::records::ActionRecord;
use mcfed_scenario::model::{Action, ActionKind};

/// The admin request `action` gives.
pub(crate) fn request_of(action: &Action) -> AdminRequest {
    match &action.action {
        ActionKind::Job(job_action) => AdminRequest::control(&action.job, job_action.clone()),
        ActionKind::Host(event) => AdminRequest::host(&action.job, *event),
        ActionKind::ReservationAdd { config, by } => AdminRequest::ReservationAdd {
            config: config.clone(),
            by: by.clone(),
        },
        ActionKind::ReservationDelete { by } => AdminRequest::ReservationDelete {
            name: action.job.clone(),
            by: by.clone(),
        },
    }
}

/// Gives `action` to `member` at `now`: what it did, as the run records
/// it.
pub(crate) fn play(
    action: &Action,
    member: &mut Member,
    now: SimTime,
    effects: &mut Effects,
) -> ActionRecord {
    let answer = match mcfed_admin::apply(request_of(action), member, now, effects) {
        Applied::Answer(answer) => answer,
        Applied::ForProcess(request) => {
            AdminResponse::Error(format!("not a member's command: {request:?}"))
        }
    };
    record_of(action, &answer)
}

/// The record of `action`, given its `answer`.
pub(crate) fn record_of(action: &Action, answer: &AdminResponse) -> ActionRecord {
    let record = match answer.outcome() {
        Ok(done) => ActionRecord::done(action, done),
        Err(why) => ActionRecord::refused(action, why),
    };
    if !record.done {
        tracing::info!(action = %action.origin, refused = %record.outcome, "action refused");
    }
    record
}
