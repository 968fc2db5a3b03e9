//! The `-o` field lists of LSF 10.1's `bjobs`, `bqueues` and `bhosts`:
//! `"field[:[-][width]] ... [delimiter='c']"` (LSB_BJOBS_FORMAT and its
//! siblings in lsf.conf(5)).
//!
//! - a field alone is shown whole (its column as wide as its widest
//!   value);
//! - `field:` takes the field's recommended width, `field:W` at most `W`
//!   characters: a longer value is cut at its end, except a job name,
//!   whose first characters give way to a `*` (LSF's own rule);
//! - `field:-W` (or `field:-`) right-justifies; a second `:unit` is
//!   accepted and ignored (mcfed shows no memory sizes);
//! - `all` is every field;
//! - `delimiter='c'` puts `c` between fields instead of lining them up
//!   (two blanks apart, as mcfed's other columns).
//!
//! The `-json` keys are the field names in upper case (`jl_u` → `JL_U`),
//! as LSF's `-json` writes them.

use super::{Table, chars, pad, shown};

/// The widest `:W` accepted (an LSF field is at most a few thousand
/// characters; a larger width is a typo).
pub const MAX_WIDTH: usize = 4096;

/// One field a command's `-o` takes.
pub struct Field<R> {
    /// Its name (`jobid`).
    pub name: &'static str,
    /// Another name LSF takes for it (`id`), or `""`.
    pub alias: &'static str,
    /// Its column header (`JOBID`).
    pub header: &'static str,
    /// Its recommended width (`field:`).
    pub width: usize,
    /// Its value for a row.
    pub value: fn(&R) -> String,
}

impl<R> Clone for Field<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Field<R> {}

impl<R> std::fmt::Debug for Field<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl<R> PartialEq for Field<R> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// How wide one chosen field is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Width {
    /// At most this many characters (`None`: the whole value).
    pub max: Option<usize>,
    /// Right-justified (`:-`).
    pub right: bool,
}

/// The fields an `-o` list chose, and how each is shown.
pub struct Selection<R: 'static> {
    /// Each field with its width, in the order given.
    pub fields: Vec<(Field<R>, Width)>,
    /// `delimiter='c'`: what goes between fields instead of lining them
    /// up.
    pub delimiter: Option<char>,
}

impl<R> std::fmt::Debug for Selection<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selection")
            .field("fields", &self.fields)
            .field("delimiter", &self.delimiter)
            .finish()
    }
}

impl<R: 'static> Selection<R> {
    /// Every field of `known` whose name is in `names`, whole, in that
    /// order (a command's default columns).
    pub fn named(known: &'static [Field<R>], names: &[&str]) -> Self {
        Selection {
            fields: names
                .iter()
                .filter_map(|name| known.iter().find(|field| field.name == *name))
                .map(|field| (*field, Width::default()))
                .collect(),
            delimiter: None,
        }
    }

    /// The rows under the chosen fields, as a table of `command` whose
    /// `-json` keys are the field names in upper case.
    pub fn table(&self, command: &'static str, plural: &'static str, rows: &[R]) -> Table {
        let headers: Vec<&str> = self.fields.iter().map(|(field, _)| field.header).collect();
        let mut table = Table::new(command, plural, &headers);
        table.keys = self
            .fields
            .iter()
            .map(|(field, _)| field.name.to_ascii_uppercase())
            .collect();
        table.rows = rows
            .iter()
            .map(|row| {
                self.fields
                    .iter()
                    .map(|(field, _)| (field.value)(row))
                    .collect()
            })
            .collect();
        table
    }

    /// `table` as the chosen widths and delimiter lay it out, under its
    /// header unless `header` is false (`-noheader`).
    pub fn text(&self, table: &Table, header: bool) -> String {
        let widths: Vec<Width> = self.fields.iter().map(|(_, width)| *width).collect();
        let front: Vec<bool> = self
            .fields
            .iter()
            .map(|(field, _)| field.name == "job_name")
            .collect();
        let cut = |index: usize, cell: &str| -> String {
            let cell = shown(cell);
            match widths[index].max {
                Some(max) => truncate(&cell, max, front[index]),
                None => cell.into_owned(),
            }
        };
        let mut lines: Vec<Vec<String>> = Vec::with_capacity(table.rows.len() + 1);
        if header {
            lines.push(
                table
                    .headers
                    .iter()
                    .enumerate()
                    .map(|(index, title)| cut(index, title))
                    .collect(),
            );
        }
        for row in &table.rows {
            lines.push(
                row.iter()
                    .enumerate()
                    .map(|(index, cell)| cut(index, cell))
                    .collect(),
            );
        }
        let mut text = String::new();
        match self.delimiter {
            Some(delimiter) => {
                for line in lines {
                    text.push_str(&line.join(&delimiter.to_string()));
                    text.push('\n');
                }
            }
            None => {
                let columns: Vec<usize> = (0..widths.len())
                    .map(|index| {
                        widths[index].max.unwrap_or_else(|| {
                            lines
                                .iter()
                                .map(|line| line.get(index).map_or(0, |cell| chars(cell)))
                                .max()
                                .unwrap_or(0)
                        })
                    })
                    .collect();
                for line in lines {
                    let mut out = String::new();
                    for (index, cell) in line.iter().enumerate() {
                        let room = columns[index].saturating_sub(chars(cell));
                        let last = index + 1 == line.len();
                        if widths[index].right {
                            pad(&mut out, room);
                            out.push_str(cell);
                        } else {
                            out.push_str(cell);
                            if !last {
                                pad(&mut out, room);
                            }
                        }
                        if !last {
                            out.push_str("  ");
                        }
                    }
                    text.push_str(out.trim_end());
                    text.push('\n');
                }
            }
        }
        text
    }
}

/// `cell` in at most `max` characters: its first ones, or, for a job
/// name (`front`), a `*` and its last ones.
fn truncate(cell: &str, max: usize, front: bool) -> String {
    let count = chars(cell);
    if count <= max {
        return cell.to_owned();
    }
    if front {
        let keep = max.saturating_sub(1);
        let tail: String = cell.chars().skip(count - keep).collect();
        format!("*{tail}")
    } else {
        cell.chars().take(max).collect()
    }
}

/// Reads an `-o` list of `command`'s `known` fields. Unknown names, a
/// width that is not a number or is out of bounds, a bad delimiter and
/// an empty list are errors naming what is wrong.
pub fn parse<R: 'static>(
    command: &str,
    known: &'static [Field<R>],
    spec: &str,
) -> Result<Selection<R>, String> {
    let (spec, delimiter) = delimiter(spec)?;
    let mut fields = Vec::new();
    for word in spec.split_whitespace() {
        let mut parts = word.split(':');
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let width = parts.next().map(|width| width_of(word, width));
        let width = width.transpose()?;
        // A second `:` is a unit prefix (KB, MB, ...): accepted, ignored.
        if name == "all" {
            for field in known {
                fields.push((*field, width.unwrap_or_default().resolve(field)));
            }
            continue;
        }
        let field = known
            .iter()
            .find(|field| field.name == name || (!field.alias.is_empty() && field.alias == name))
            .copied()
            .ok_or_else(|| {
                let names: Vec<&str> = known.iter().map(|field| field.name).collect();
                format!(
                    "`{}` is not a {command} field (mcfed knows {})",
                    shown(word),
                    names.join(" ")
                )
            })?;
        fields.push((field, width.unwrap_or_default().resolve(&field)));
    }
    if fields.is_empty() {
        return Err(format!("{command} -o needs at least one field"));
    }
    Ok(Selection { fields, delimiter })
}

/// A width as written after `:`: empty (the recommended width), `-`
/// (right-justified), `W` or `-W`.
#[derive(Clone, Copy, Debug, Default)]
struct Written {
    /// `field:` or `field:-`: the field's recommended width.
    recommended: bool,
    max: Option<usize>,
    right: bool,
}

impl Written {
    fn resolve<R>(self, field: &Field<R>) -> Width {
        Width {
            max: if self.recommended {
                Some(field.width)
            } else {
                self.max
            },
            right: self.right,
        }
    }
}

fn width_of(word: &str, width: &str) -> Result<Written, String> {
    let (right, digits) = match width.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, width),
    };
    if digits.is_empty() {
        return Ok(Written {
            recommended: true,
            max: None,
            right,
        });
    }
    match digits.parse::<usize>() {
        Ok(max) if (1..=MAX_WIDTH).contains(&max) => Ok(Written {
            recommended: false,
            max: Some(max),
            right,
        }),
        _ => Err(format!(
            "`{}`: the width after `:` is a number from 1 to {MAX_WIDTH}",
            shown(word)
        )),
    }
}

/// Takes `delimiter='c'` (or `"c"`) out of `spec`: the rest, and `c`.
fn delimiter(spec: &str) -> Result<(String, Option<char>), String> {
    let Some(at) = spec.find("delimiter=") else {
        return Ok((spec.to_owned(), None));
    };
    let after = &spec[at + "delimiter=".len()..];
    let mut characters = after.chars();
    let quote = characters.next();
    let character = characters.next();
    let close = characters.next();
    match (quote, character, close) {
        (Some(open @ ('\'' | '"')), Some(character), Some(close))
            if close == open && !character.is_control() =>
        {
            let used = open.len_utf8() * 2 + character.len_utf8();
            let rest = format!("{}{}", &spec[..at], &after[used..]);
            Ok((rest, Some(character)))
        }
        _ => Err(format!(
            "`{}`: write the delimiter as delimiter='c', one character in quotes",
            shown(&spec[at..])
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        id: u64,
        name: &'static str,
        queue: &'static str,
    }

    const FIELDS: &[Field<Row>] = &[
        Field {
            name: "jobid",
            alias: "id",
            header: "JOBID",
            width: 7,
            value: |row| row.id.to_string(),
        },
        Field {
            name: "job_name",
            alias: "name",
            header: "JOB_NAME",
            width: 10,
            value: |row| row.name.to_owned(),
        },
        Field {
            name: "queue",
            alias: "",
            header: "QUEUE",
            width: 10,
            value: |row| row.queue.to_owned(),
        },
    ];

    fn rows() -> Vec<Row> {
        vec![
            Row {
                id: 1,
                name: "a_rather_long_job_name",
                queue: "normal_queue_name",
            },
            Row {
                id: 22,
                name: "short",
                queue: "q",
            },
        ]
    }

    fn render(spec: &str) -> String {
        let selection = parse("bjobs", FIELDS, spec).expect("a valid list");
        let table = selection.table("bjobs", "JOBS", &rows());
        selection.text(&table, true)
    }

    #[test]
    fn widths_cut_job_names_at_the_front_and_other_fields_at_the_end() {
        let text = render("jobid job_name:10 queue:6");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "JOBID  JOB_NAME    QUEUE");
        assert_eq!(lines[1], "1      *_job_name  normal");
        assert_eq!(lines[2], "22     short       q");
    }

    #[test]
    fn right_justified_recommended_and_delimited_fields() {
        let text = render("id:-3 name queue: delimiter=','");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "JOB,JOB_NAME,QUEUE");
        assert_eq!(lines[1], "1,a_rather_long_job_name,normal_que");
        let text = render("jobid:-5 queue");
        assert_eq!(text.lines().nth(2), Some("   22  q"));
    }

    #[test]
    fn keys_are_upper_case_field_names() {
        let selection = parse("bjobs", FIELDS, "all").expect("all");
        assert_eq!(selection.fields.len(), 3);
        let table = selection.table("bjobs", "JOBS", &rows());
        assert_eq!(table.keys, ["JOBID", "JOB_NAME", "QUEUE"]);
    }

    #[test]
    fn bad_lists_are_refused_with_what_is_wrong() {
        let error = |spec| parse("bjobs", FIELDS, spec).expect_err(spec);
        assert!(error("nosuch").contains("`nosuch` is not a bjobs field"));
        assert!(error("jobid:x").contains("the width after `:`"));
        assert!(error("jobid:0").contains("from 1 to 4096"));
        assert!(error("jobid:99999999999999999999").contains("from 1"));
        assert!(error("jobid delimiter=,").contains("delimiter='c'"));
        assert!(error("").contains("at least one field"));
        assert!(error("delimiter=';'").contains("at least one field"));
        assert!(error("bad\u{1b}name").contains("bad\\u{1b}name"));
    }
}
