//! Reading run records: one JSON object per line, each with a `record`
//! field (`run`, `decision`, `event`, `usage` or `summary`). Blank lines are skipped;
//! a line that does not parse is an error naming the file and line, and a
//! record kind this version does not know is skipped with a warning, so
//! files from newer versions still read.

use std::io::BufRead;
use std::path::Path;

use mcfed_forwarder::DecisionRecord;
use mcfed_run::records::{EventRecord, RecordRef, RunRecord, SummaryRecord, UsageRecord};
use serde::Deserialize;

/// Why records could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be read.
    #[error("cannot read {file}: {source}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a record.
    #[error("{file}:{line}: not a run record: {message}")]
    Parse {
        /// The file.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A plot could not be drawn or written.
    #[error("cannot draw {what}: {message}")]
    Plot {
        /// Which plot.
        what: String,
        /// Why.
        message: String,
    },
}

/// The records of one or more runs.
#[derive(Clone, Debug, Default)]
pub struct Records {
    /// Run headers, one per run.
    pub runs: Vec<RunRecord>,
    /// Decisions.
    pub decisions: Vec<DecisionRecord>,
    /// Job events.
    pub events: Vec<EventRecord>,
    /// Slot usage samples.
    pub usage: Vec<UsageRecord>,
    /// The order in which the decisions, events and samples were read.
    pub order: Vec<RecordRef>,
    /// Run summaries (metrics per cluster and queue), one per run that
    /// measured them.
    pub summaries: Vec<SummaryRecord>,
}

#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(borrow)]
    record: &'a str,
}

impl Records {
    /// Adds the records of one line; `file` and `line` name it in errors.
    pub fn push_line(&mut self, text: &str, file: &str, line: usize) -> Result<(), ReportError> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        let error = |message: String| ReportError::Parse {
            file: file.to_owned(),
            line,
            message,
        };
        let kind: Kind<'_> = serde_json::from_str(text).map_err(|e| error(e.to_string()))?;
        match kind.record {
            "decision" => {
                self.order.push(RecordRef::Decision(self.decisions.len()));
                self.decisions
                    .push(serde_json::from_str(text).map_err(|e| error(e.to_string()))?);
            }
            "event" => {
                self.order.push(RecordRef::Event(self.events.len()));
                self.events
                    .push(serde_json::from_str(text).map_err(|e| error(e.to_string()))?);
            }
            "usage" => {
                self.order.push(RecordRef::Usage(self.usage.len()));
                self.usage
                    .push(serde_json::from_str(text).map_err(|e| error(e.to_string()))?);
            }
            "run" => self
                .runs
                .push(serde_json::from_str(text).map_err(|e| error(e.to_string()))?),
            "summary" => self
                .summaries
                .push(serde_json::from_str(text).map_err(|e| error(e.to_string()))?),
            other => tracing::warn!(file, line, kind = other, "unknown record kind skipped"),
        }
        Ok(())
    }
}

impl Records {
    /// Adds every record of `other`.
    pub fn extend(&mut self, other: Records) {
        let (decisions, events, usage) =
            (self.decisions.len(), self.events.len(), self.usage.len());
        self.order
            .extend(other.order.into_iter().map(|reference| match reference {
                RecordRef::Decision(index) => RecordRef::Decision(decisions + index),
                RecordRef::Event(index) => RecordRef::Event(events + index),
                RecordRef::Usage(index) => RecordRef::Usage(usage + index),
            }));
        self.runs.extend(other.runs);
        self.decisions.extend(other.decisions);
        self.events.extend(other.events);
        self.usage.extend(other.usage);
        self.summaries.extend(other.summaries);
    }
}

/// Reads every record of the files at `paths`, one [`Records`] per file.
pub fn read_runs(paths: &[impl AsRef<Path>]) -> Result<Vec<Records>, ReportError> {
    paths.iter().map(|path| read_records(&[path])).collect()
}

/// Reads every record of the files at `paths`.
pub fn read_records(paths: &[impl AsRef<Path>]) -> Result<Records, ReportError> {
    let mut records = Records::default();
    for path in paths {
        let path = path.as_ref();
        let file = path.display().to_string();
        let handle = std::fs::File::open(path).map_err(|source| ReportError::Read {
            file: file.clone(),
            source,
        })?;
        let reader = std::io::BufReader::with_capacity(1 << 20, handle);
        records.read_lines(reader, &file)?;
    }
    Ok(records)
}

impl Records {
    /// Adds every record `reader` holds (standard input, a pipe); `file`
    /// names it in errors.
    pub fn read_lines(&mut self, reader: impl BufRead, file: &str) -> Result<(), ReportError> {
        for (index, line) in reader.lines().enumerate() {
            let line = line.map_err(|source| ReportError::Read {
                file: file.to_owned(),
                source,
            })?;
            self.push_line(&line, file, index + 1)?;
        }
        Ok(())
    }
}
