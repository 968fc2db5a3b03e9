//! The one grammar of LSF's configuration files: `Begin NAME` … `End NAME`
//! sections holding either `KEY = value` lines or a column table (a header
//! line of column names, then one row per line), with `#` comments, `\`
//! continuations and `#INCLUDE "file"` handled in `lines`, and row values
//! in `cells`. Everything parsed keeps where it was read.

mod cells;
pub(crate) mod lines;

use std::path::Path;

pub use cells::{Cell, CellValue};
pub use lines::{Line, MCFED_PREFIX};

use crate::limits::{MAX_COLUMNS, MAX_SECTIONS};
use crate::source::{Diagnostic, Location, Spanned};

/// A parsed configuration file.
#[derive(Clone, Debug, Default)]
pub struct Document {
    /// Its sections, in order.
    pub sections: Vec<Section>,
}

/// One `Begin NAME` … `End NAME` section.
#[derive(Clone, Debug)]
pub struct Section {
    /// The section's name as written (`Queue`, `Host`, …).
    pub name: Spanned<String>,
    /// What it holds.
    pub body: Body,
    /// The comment lines right above its `Begin` line.
    pub comments: Vec<String>,
}

impl Section {
    /// Whether the section is named `name` (LSF compares names without
    /// regard to case).
    pub fn is(&self, name: &str) -> bool {
        self.name.value.eq_ignore_ascii_case(name)
    }

    /// Where it begins.
    pub fn at(&self) -> &Location {
        &self.name.at
    }
}

/// The body of a section.
#[derive(Clone, Debug)]
pub enum Body {
    /// `KEY = value` lines.
    Assignments(Vec<Assignment>),
    /// A column table.
    Table(Table),
    /// Nothing at all.
    Empty,
}

/// `KEY = value`.
#[derive(Clone, Debug)]
pub struct Assignment {
    /// The parameter's name.
    pub key: Spanned<String>,
    /// Its value, trimmed, comments removed (it may be empty).
    pub value: Spanned<String>,
}

impl Assignment {
    /// The value without one pair of surrounding double quotes.
    pub fn text(&self) -> &str {
        unquote(&self.value.value)
    }
}

/// The text without one pair of surrounding double quotes.
pub fn unquote(text: &str) -> &str {
    text.strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .unwrap_or(text)
}

/// A column table.
#[derive(Clone, Debug)]
pub struct Table {
    /// The column names of the header line.
    pub columns: Vec<Spanned<String>>,
    /// The rows, each with one cell per column (defaults filled in).
    pub rows: Vec<Row>,
}

impl Table {
    /// The index of the column named `name` (without regard to case).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|column| column.value.eq_ignore_ascii_case(name))
    }
}

/// One row of a table.
#[derive(Clone, Debug)]
pub struct Row {
    /// Where the row starts.
    pub at: Location,
    /// One cell per column.
    pub cells: Vec<Cell>,
}

impl Row {
    /// The cell of column `index`.
    pub fn cell(&self, index: usize) -> Option<&Cell> {
        self.cells.get(index)
    }
}

/// Parses the file at `path`, named `display` in diagnostics.
pub fn parse_file(path: &Path, display: &str) -> Result<Document, Diagnostic> {
    parse_lines(lines::read_lines(path, display)?)
}

/// Parses `text`, named `display` in diagnostics; `#INCLUDE`d files are
/// looked for relative to `base`.
pub fn parse_text(text: &str, display: &str, base: &Path) -> Result<Document, Diagnostic> {
    parse_lines(lines::text_lines(text, display, base)?)
}

fn parse_lines(lines: Vec<Line>) -> Result<Document, Diagnostic> {
    let mut document = Document::default();
    let mut open: Option<(Spanned<String>, Vec<String>, Vec<Line>)> = None;
    for line in lines {
        let mut words = line.text.split_whitespace();
        let first = words.next().unwrap_or_default();
        if first.eq_ignore_ascii_case("Begin") {
            let at = line.start();
            if let Some((name, _, _)) = &open {
                return Err(Diagnostic::error(
                    &at,
                    format!(
                        "expected `End {}` (the section begun at line {}) before another `Begin`",
                        name.value, name.at.line
                    ),
                ));
            }
            let name = section_name(&line, words.next(), words.next(), "Begin")?;
            open = Some((name, line.comments, Vec::new()));
        } else if first.eq_ignore_ascii_case("End") {
            let at = line.start();
            let Some((name, comments, body)) = open.take() else {
                return Err(Diagnostic::error(&at, "`End` without a `Begin` before it"));
            };
            let end = section_name(&line, words.next(), words.next(), "End")?;
            if !end.value.eq_ignore_ascii_case(&name.value) {
                return Err(Diagnostic::error(
                    &end.at,
                    format!(
                        "expected `End {}` (the section begun at line {}), found `End {}`",
                        name.value, name.at.line, end.value
                    ),
                ));
            }
            if document.sections.len() >= MAX_SECTIONS {
                return Err(Diagnostic::error(
                    &at,
                    format!("more than {MAX_SECTIONS} sections"),
                ));
            }
            let body = section_body(body)?;
            document.sections.push(Section {
                name,
                body,
                comments,
            });
        } else if let Some((_, _, body)) = &mut open {
            body.push(line);
        } else {
            return Err(Diagnostic::error(
                &line.start(),
                format!(
                    "expected `Begin SECTION`, found `{}` outside any section",
                    abbreviate(line.text.trim())
                ),
            ));
        }
    }
    if let Some((name, _, _)) = open {
        return Err(Diagnostic::error(
            &name.at,
            format!(
                "section `{}` is not ended: expected `End {}` before the end of the file",
                name.value, name.value
            ),
        ));
    }
    Ok(document)
}

/// The name after `Begin` or `End`.
fn section_name(
    line: &Line,
    name: Option<&str>,
    extra: Option<&str>,
    keyword: &str,
) -> Result<Spanned<String>, Diagnostic> {
    let Some(name) = name else {
        return Err(Diagnostic::error(
            &line.start(),
            format!("expected a section name after `{keyword}`"),
        ));
    };
    let offset = line.text.find(name).unwrap_or(0);
    if let Some(extra) = extra {
        let extra_at = line.at(line.text[offset + name.len()..]
            .find(extra)
            .map_or(0, |at| at + offset + name.len()));
        return Err(Diagnostic::error(
            &extra_at,
            format!("expected the end of the line after `{keyword} {name}`, found `{extra}`"),
        ));
    }
    Ok(Spanned {
        value: name.to_owned(),
        at: line.at(offset),
    })
}

/// A section's lines as assignments or as a table: the first line decides
/// (it has a `=`: assignments; else it is a table's header).
fn section_body(lines: Vec<Line>) -> Result<Body, Diagnostic> {
    let Some(first) = lines.first() else {
        return Ok(Body::Empty);
    };
    if first.text.contains('=') {
        lines
            .iter()
            .map(assignment)
            .collect::<Result<Vec<_>, _>>()
            .map(Body::Assignments)
    } else {
        table(&lines).map(Body::Table)
    }
}

fn assignment(line: &Line) -> Result<Assignment, Diagnostic> {
    let Some(equals) = line.text.find('=') else {
        return Err(Diagnostic::error(
            &line.start(),
            format!(
                "expected `PARAMETER = value`, found `{}`",
                abbreviate(line.text.trim())
            ),
        ));
    };
    let key_text = &line.text[..equals];
    let key = key_text.trim();
    let key_offset = key_text.len() - key_text.trim_start().len();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(Diagnostic::error(
            &line.at(key_offset),
            format!(
                "expected one parameter name before `=`, found `{}`",
                abbreviate(key)
            ),
        ));
    }
    let value_text = &line.text[equals + 1..];
    let value_offset = equals + 1 + (value_text.len() - value_text.trim_start().len());
    Ok(Assignment {
        key: Spanned {
            value: key.to_owned(),
            at: line.at(key_offset),
        },
        value: Spanned {
            value: value_text.trim().to_owned(),
            at: line.at(value_offset),
        },
    })
}

fn table(lines: &[Line]) -> Result<Table, Diagnostic> {
    let Some((header, rows)) = lines.split_first() else {
        return Ok(Table {
            columns: Vec::new(),
            rows: Vec::new(),
        });
    };
    let mut columns: Vec<Spanned<String>> = Vec::new();
    for cell in cells::split_row(header)? {
        let CellValue::Word(name) = cell.value else {
            return Err(Diagnostic::error(
                &cell.at,
                "expected a column name in the table's header line",
            ));
        };
        if let Some(earlier) = columns
            .iter()
            .find(|column| column.value.eq_ignore_ascii_case(&name))
        {
            return Err(Diagnostic::error(
                &cell.at,
                format!(
                    "column `{name}` appears twice in the header (first at column {})",
                    earlier.at.column
                ),
            ));
        }
        if columns.len() >= MAX_COLUMNS {
            return Err(Diagnostic::error(
                &cell.at,
                format!("a table may have at most {MAX_COLUMNS} columns"),
            ));
        }
        columns.push(Spanned {
            value: name,
            at: cell.at,
        });
    }
    let mut table = Table {
        columns,
        rows: Vec::new(),
    };
    for line in rows {
        let mut cells = cells::split_row(line)?;
        if let Some(extra) = cells.get(table.columns.len()) {
            return Err(Diagnostic::error(
                &extra.at,
                format!(
                    "this row has {} values but the header (line {}) names {} columns",
                    cells.len(),
                    header.start().line,
                    table.columns.len()
                ),
            ));
        }
        let at = line.start();
        while cells.len() < table.columns.len() {
            cells.push(Cell {
                value: CellValue::Default,
                at: at.clone(),
            });
        }
        table.rows.push(Row { at, cells });
    }
    Ok(table)
}

/// At most 60 characters of `text`, for messages.
fn abbreviate(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Document, Diagnostic> {
        parse_text(text, "lsb.test", Path::new("."))
    }

    #[test]
    fn sections_of_both_kinds_parse() {
        let document = parse(
            "# header\nBegin Queue\nQUEUE_NAME = normal # c\nPRIORITY   = 30\nEnd Queue\n\n\
             Begin Host\nHOST_NAME MXJ JL/U # Keywords\ndefault ! ()\nhostA 4\nEnd Host\n",
        )
        .expect("parses");
        assert_eq!(document.sections.len(), 2);
        let Body::Assignments(assignments) = &document.sections[0].body else {
            panic!("assignments");
        };
        assert_eq!(assignments[1].key.value, "PRIORITY");
        assert_eq!(assignments[1].value.value, "30");
        assert_eq!(
            (assignments[1].value.at.line, assignments[1].value.at.column),
            (4, 14)
        );
        let Body::Table(table) = &document.sections[1].body else {
            panic!("table");
        };
        assert_eq!(table.columns.len(), 3);
        assert_eq!(table.rows[1].cells[2].value, CellValue::Default);
    }

    #[test]
    fn malformed_files_are_errors_with_line_and_column() {
        let cases = [
            (
                "Begin Queue\nPRIORITY 30 = x\nEnd Queue\n",
                2,
                "one parameter name",
            ),
            ("Begin Queue\nA = 1\nEnd Host\n", 3, "expected `End Queue`"),
            ("Begin Queue\nA = 1\n", 1, "is not ended"),
            ("A = 1\n", 1, "expected `Begin SECTION`"),
            (
                "Begin Host\nHOST_NAME MXJ\nh 1 2\nEnd Host\n",
                3,
                "names 2 columns",
            ),
            ("Begin\n", 1, "section name"),
            ("End Queue\n", 1, "without a `Begin`"),
            (
                "Begin Queue\nQUEUE_NAME = a\nPRIORITY\nEnd Queue\n",
                3,
                "PARAMETER = value",
            ),
        ];
        for (text, line, expected) in cases {
            let error = parse(text).expect_err(text);
            assert_eq!(error.at.as_ref().map(|at| at.line), Some(line), "{error}");
            assert!(error.message.contains(expected), "{error}");
        }
    }
}
