//! The values of one row of a column table: words, `(a list of words)`,
//! `[bracketed values]`, `"quoted text"`, and `()` or `-` for the default.

use super::Line;
use crate::source::{Diagnostic, Location};

/// One value of a table row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// What it holds.
    pub value: CellValue,
    /// Where it starts.
    pub at: Location,
}

/// What a cell holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellValue {
    /// `()` or `-`, or no value at the end of a short row: the column's
    /// default.
    Default,
    /// A word, quoted text (without its quotes) or bracketed values
    /// (with their brackets).
    Word(String),
    /// `(a b c)`: the words inside the parentheses, as written.
    List(String),
}

impl CellValue {
    /// The text of the cell, `None` for the default.
    pub fn text(&self) -> Option<&str> {
        match self {
            CellValue::Default => None,
            CellValue::Word(text) | CellValue::List(text) => Some(text),
        }
    }
}

/// Splits a row into its cells.
pub(crate) fn split_row(line: &Line) -> Result<Vec<Cell>, Diagnostic> {
    let text = line.text.as_str();
    let mut cells = Vec::new();
    let mut offset = 0;
    while offset < text.len() {
        let rest = &text[offset..];
        let trimmed = rest.trim_start();
        if trimmed.is_empty() {
            break;
        }
        offset += rest.len() - trimmed.len();
        let at = line.at(offset);
        let (value, length) = match trimmed.as_bytes()[0] {
            b'(' => {
                let close = trimmed.find(')').ok_or_else(|| {
                    Diagnostic::error(&at, "`(` is not closed: expected `)` after the list")
                })?;
                let inner = trimmed[1..close].trim();
                let value = if inner.is_empty() {
                    CellValue::Default
                } else {
                    CellValue::List(inner.to_owned())
                };
                (value, close + 1)
            }
            b'"' => {
                let close = trimmed[1..].find('"').ok_or_else(|| {
                    Diagnostic::error(&at, "`\"` is not closed: expected a closing `\"`")
                })?;
                (CellValue::Word(trimmed[1..=close].to_owned()), close + 2)
            }
            _ => {
                let length =
                    word_length(trimmed).map_err(|message| Diagnostic::error(&at, message))?;
                let word = &trimmed[..length];
                let value = if word == "-" {
                    CellValue::Default
                } else {
                    CellValue::Word(word.to_owned())
                };
                (value, length)
            }
        };
        cells.push(Cell { value, at });
        offset += length;
    }
    Ok(cells)
}

/// The length of the word at the start of `text`: up to whitespace outside
/// brackets.
fn word_length(text: &str) -> Result<usize, &'static str> {
    let mut depth = 0usize;
    for (offset, character) in text.char_indices() {
        match character {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 => return Ok(offset),
            _ => {}
        }
    }
    if depth > 0 {
        Err("`[` is not closed: expected `]`")
    } else {
        Ok(text.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::lines::text_lines;

    fn cells(text: &str) -> Vec<CellValue> {
        let lines = text_lines(text, "f", std::path::Path::new(".")).expect("lines");
        split_row(&lines[0])
            .expect("cells")
            .into_iter()
            .map(|cell| cell.value)
            .collect()
    }

    #[test]
    fn rows_split_into_words_lists_and_defaults() {
        assert_eq!(
            cells("groupA (u1 u2)  ([u1, 4] [default, 1]) - () ! \"a b\""),
            [
                CellValue::Word("groupA".into()),
                CellValue::List("u1 u2".into()),
                CellValue::List("[u1, 4] [default, 1]".into()),
                CellValue::Default,
                CellValue::Default,
                CellValue::Word("!".into()),
                CellValue::Word("a b".into()),
            ]
        );
        assert_eq!(
            cells("g [a, 1][b, 2]"),
            [
                CellValue::Word("g".into()),
                CellValue::Word("[a, 1][b, 2]".into())
            ]
        );
    }

    #[test]
    fn an_unclosed_list_is_an_error_at_its_column() {
        let lines = text_lines("host1  (a b", "f", std::path::Path::new(".")).expect("lines");
        let error = split_row(&lines[0]).expect_err("refused");
        assert_eq!(error.at.map(|at| at.column), Some(8));
    }
}
