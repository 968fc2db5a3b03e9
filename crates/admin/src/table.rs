//! What every command's printer shares: a [`Table`] (columns under LSF's
//! headers, or LSF 10.1's `-json`: `{"COMMAND": "bjobs", "JOBS": 2,
//! "RECORDS": [{"JOBID": "1", ...}]}`, every value a string), mcfed's own
//! `-o json` (an array of a command's rows, whose field names are a public
//! contract), and the formats of times and missing values.

use std::fmt::Write as _;

use mcfed_protocol::SimTime;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// An emulated time (seconds) as `HH:MM:SS[.mmm]`.
pub(crate) fn clock(secs: f64) -> String {
    SimTime::from_millis((secs * 1000.0).round().max(0.0) as u64).to_string()
}

/// A duration (seconds), written as a time of day is.
pub(crate) fn duration(secs: f64) -> String {
    clock(secs)
}

/// `-` for nothing.
pub(crate) fn dash<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| value.to_string())
}

/// A table: what a command prints as columns, or as LSF's `-json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The command (`bjobs`).
    pub command: &'static str,
    /// What a record is, plural, as LSF's JSON counts them (`JOBS`).
    pub plural: &'static str,
    /// The column names.
    pub headers: Vec<String>,
    /// The rows, one cell per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table of `command` with these headers and no rows yet.
    pub fn new(command: &'static str, plural: &'static str, headers: &[&str]) -> Self {
        Table {
            command,
            plural,
            headers: headers.iter().map(|&header| header.to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// The rows in left-aligned columns two spaces apart, under the
    /// headers, as LSF's commands print them.
    pub fn text(&self) -> String {
        let header: Vec<&str> = self.headers.iter().map(String::as_str).collect();
        columns(&header, &self.rows)
    }

    /// The rows as LSF 10.1's `-json` prints them.
    pub fn lsf_json(&self) -> String {
        let records: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let record: Map<String, Value> = self
                    .headers
                    .iter()
                    .zip(row)
                    .map(|(header, cell)| (header.clone(), Value::String(cell.clone())))
                    .collect();
                Value::Object(record)
            })
            .collect();
        let mut object = Map::new();
        object.insert("COMMAND".into(), json!(self.command));
        object.insert(self.plural.into(), json!(records.len()));
        object.insert("RECORDS".into(), Value::Array(records));
        json(&Value::Object(object))
    }
}

/// Lays out rows under a header in left-aligned columns two spaces apart,
/// as LSF's commands do.
pub(crate) fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|title| title.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut text = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (index, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            if index + 1 == cells.len() {
                out.push_str(cell);
            } else {
                let _ = write!(out, "{cell:<width$}  ");
            }
        }
        let _ = writeln!(text, "{}", out.trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
    text
}

/// Rows as pretty JSON (`-o json`: an array of the admin rows).
pub fn json<T: Serialize>(rows: &T) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_else(|error| format!("\"{error}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsf_json_has_the_command_a_count_and_string_records() {
        let mut table = Table::new("bjobs", "JOBS", &["JOBID", "STAT"]);
        table.rows.push(vec!["1".into(), "RUN".into()]);
        table.rows.push(vec!["2".into(), "PEND".into()]);
        let value: Value = serde_json::from_str(&table.lsf_json()).expect("JSON");
        assert_eq!(value["COMMAND"], "bjobs");
        assert_eq!(value["JOBS"], 2);
        assert_eq!(value["RECORDS"][1]["STAT"], "PEND");
        assert_eq!(value["RECORDS"][0]["JOBID"], "1");
    }
}
