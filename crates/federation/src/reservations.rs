//! `brsvadd` and `brsvdel` at a member (issue 27 item 8): its scheduler
//! makes or deletes the advance reservation, and a journaled member writes
//! it down ([`JournalRecord::ReservationAdded`],
//! [`JournalRecord::ReservationDeleted`]) with the jobs a deletion
//! detached, so a process restarted from its state has the same
//! reservations.

use mcfed_cluster::AdvanceReservationConfig;
use mcfed_protocol::SimTime;

use crate::journal::JournalRecord;
use crate::member::Member;

impl Member {
    /// `brsvadd`: makes reservation `config` at `now`, asked by `by`
    /// (`None`: the administrator). What it prints (LSF's words), or why
    /// it was refused.
    pub fn add_reservation(
        &mut self,
        now: SimTime,
        config: AdvanceReservationConfig,
        by: Option<&str>,
    ) -> Result<String, String> {
        let name = config.name.clone();
        self.node
            .add_reservation(now, config.clone(), by)
            .map_err(|error| error.to_string())?;
        if let Some(journal) = &mut self.journal {
            journal.push(JournalRecord::ReservationAdded {
                config,
                by: by.map(str::to_owned),
            });
        }
        Ok(format!("Reservation <{name}> is created"))
    }

    /// `brsvdel`: deletes reservation `name` at `now`, asked by `by`. Its
    /// running jobs go on as ordinary jobs, its pending ones pend.
    pub fn delete_reservation(
        &mut self,
        now: SimTime,
        name: &str,
        by: Option<&str>,
    ) -> Result<String, String> {
        let deleted = self
            .node
            .delete_reservation(now, name, by)
            .map_err(|error| error.to_string())?;
        if let Some(journal) = &mut self.journal {
            journal.push(JournalRecord::ReservationDeleted {
                name: name.to_owned(),
            });
        }
        // The detached jobs, as they stand now.
        self.note_changes(&[]);
        let mut message = format!("Reservation <{name}> is being deleted");
        if !deleted.detached.is_empty() {
            let ids: Vec<String> = deleted.detached.iter().map(|id| id.0.to_string()).collect();
            message.push_str(&format!(
                "; job(s) {} go on as ordinary jobs",
                ids.join(" ")
            ));
        }
        if deleted.pending > 0 {
            message.push_str(&format!(
                "; {} pending job(s) that name it keep pending",
                deleted.pending
            ));
        }
        Ok(message)
    }
}
