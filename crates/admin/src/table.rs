//! What every command's printer shares: a [`Table`] (columns under LSF's
//! headers, or LSF 10.1's `-json`: `{"COMMAND": "bjobs", "JOBS": 2,
//! "RECORDS": [{"JOBID": "1", ...}]}`, every value a string), the `-o
//! "field[:width] ... [delimiter='c']"` lists of LSF's commands
//! ([`fields`]), mcfed's own `-o json` (an array of a command's rows, whose
//! field names are a public contract), and the formats of times and
//! missing values.
//!
//! Every text printer shows what came from outside (job, user and file
//! names) through [`shown`]: a control character is escaped, so no name
//! can forge a row or send a terminal an escape sequence; `-json` is
//! escaped by JSON itself.

pub mod fields;

use std::borrow::Cow;
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

/// `text` as a terminal may show it: control characters (line breaks,
/// escape, carriage return, C1 controls) and the bidirectional overrides
/// written as Rust escapes (`\n`, `\u{1b}`), everything else as it is.
pub fn shown(text: &str) -> Cow<'_, str> {
    let unsafe_char =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if unsafe_char(character) {
            escaped.extend(character.escape_default());
        } else {
            escaped.push(character);
        }
    }
    Cow::Owned(escaped)
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
    /// The keys of LSF's `-json`, one per column: the headers, unless
    /// the columns are `-o` fields (whose keys are their names in upper
    /// case: `jl_u` → `JL_U` under the header `JL/U`).
    pub keys: Vec<String>,
    /// The rows, one cell per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table of `command` with these headers and no rows yet.
    pub fn new(command: &'static str, plural: &'static str, headers: &[&str]) -> Self {
        let headers: Vec<String> = headers.iter().map(|&header| header.to_owned()).collect();
        Table {
            command,
            plural,
            keys: headers.clone(),
            headers,
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
                    .keys
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
/// as LSF's commands do; every cell [`shown`] (escaped), and padded by
/// hand, so a cell of any length lines up (the formatting machinery's
/// widths stop at 65,535).
pub(crate) fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let header: Vec<Cow<'_, str>> = header.iter().map(|title| shown(title)).collect();
    let rows: Vec<Vec<Cow<'_, str>>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| shown(cell)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|title| chars(title)).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(chars(cell));
        }
    }
    let mut text = String::new();
    let mut line = |cells: &[Cow<'_, str>]| {
        let mut out = String::new();
        for (index, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            out.push_str(cell);
            if index + 1 < cells.len() {
                pad(&mut out, width.saturating_sub(chars(cell)) + 2);
            }
        }
        let _ = writeln!(text, "{}", out.trim_end());
    };
    line(&header);
    for row in &rows {
        line(row);
    }
    text
}

/// The characters of `text` (its width on a terminal, near enough).
pub(crate) fn chars(text: &str) -> usize {
    text.chars().count()
}

/// `count` blanks after `out`.
pub(crate) fn pad(out: &mut String, count: usize) {
    out.extend(std::iter::repeat_n(' ', count));
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

    #[test]
    fn names_cannot_forge_rows_or_control_a_terminal() {
        assert_eq!(shown("plain name"), "plain name");
        assert_eq!(shown("a\nb"), "a\\nb");
        assert_eq!(shown("\u{1b}[2J"), "\\u{1b}[2J");
        assert_eq!(shown("x\ry"), "x\\ry");
        assert_eq!(shown("\u{202e}abc"), "\\u{202e}abc");
        let mut table = Table::new("bjobs", "JOBS", &["JOBID", "JOB_NAME"]);
        table
            .rows
            .push(vec!["1".into(), "a\n2  forged\u{1b}[31m".into()]);
        let text = table.text();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
    }

    #[test]
    fn a_cell_past_the_formatting_width_limit_is_laid_out() {
        let long = "n".repeat(70_000);
        let mut table = Table::new("bjobs", "JOBS", &["JOB_NAME", "STAT"]);
        table.rows.push(vec![long.clone(), "RUN".into()]);
        let text = table.text();
        let row = text.lines().nth(1).expect("a row");
        assert_eq!(row, format!("{long}  RUN"));
        let header = text.lines().next().expect("the header");
        assert_eq!(header.len(), 70_000 + 2 + 4);
    }
}
