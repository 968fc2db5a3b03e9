//! Scenario errors that point at the file, line and field.
//!
//! Every problem found in a scenario carries the path of the field at fault
//! (`cluster[1].queue[0].SNDJOBS_TO[0]`). [`Locator`] walks the parsed TOML,
//! which keeps the byte span of every key and value, to turn that path into
//! a line and column.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

use mcfed_protocol::ReadError;
use mcfed_protocol::words::escape_controls;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// The path of a field in a scenario file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// The root.
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// This path followed by key `key`.
    pub fn key(&self, key: &str) -> Self {
        let mut path = self.clone();
        path.0.push(Segment::Key(key.to_owned()));
        path
    }

    /// This path followed by index `index`.
    pub fn index(&self, index: usize) -> Self {
        let mut path = self.clone();
        path.0.push(Segment::Index(index));
        path
    }

    /// Converts a serde_path_to_error path.
    pub fn from_serde(path: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment as S;
        FieldPath(
            path.iter()
                .filter_map(|segment| match segment {
                    S::Seq { index } => Some(Segment::Index(*index)),
                    S::Map { key } => Some(Segment::Key(key.clone())),
                    S::Enum { variant } => Some(Segment::Key(variant.clone())),
                    S::Unknown => None,
                })
                .collect(),
        )
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (position, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if position == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// One problem in a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The field at fault.
    pub field: FieldPath,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read: it is missing, not a regular file
    /// (`/dev/zero`, a FIFO) or larger than mcfed reads
    /// ([`mcfed_protocol::bounds::CONFIG_FILE`]).
    #[error("cannot read scenario {source}")]
    Read {
        /// The file.
        file: String,
        /// Why (it names the file).
        #[source]
        source: ReadError,
    },
    /// The file has problems.
    #[error("{}", render_problems(file, problems))]
    Invalid {
        /// The file.
        file: String,
        /// Every problem found.
        problems: Vec<Problem>,
    },
    /// A hosts file given with the scenario has a problem.
    #[error(transparent)]
    Hosts(#[from] HostsError),
}

impl ScenarioError {
    /// The problems, if the file was read.
    pub fn problems(&self) -> &[Problem] {
        match self {
            ScenarioError::Read { .. } | ScenarioError::Hosts(_) => &[],
            ScenarioError::Invalid { problems, .. } => problems,
        }
    }
}

fn render_problems(file: &str, problems: &[Problem]) -> String {
    let lines: Vec<String> = problems
        .iter()
        .map(|problem| problem.render(file))
        .collect();
    lines.join("\n")
}

impl Problem {
    /// `file:line:column: field `path`: message`, on one line: control
    /// characters (a job name's escape sequence, a newline in a value)
    /// are shown escaped.
    pub fn render(&self, file: &str) -> String {
        escape_controls(&format!(
            "{file}:{}:{}: field `{}`: {}",
            self.line, self.column, self.field, self.message
        ))
    }
}

/// Turns field paths and byte offsets into lines and columns.
pub struct Locator<'a> {
    source: &'a str,
    root: Option<Spanned<DeTable<'a>>>,
}

impl<'a> Locator<'a> {
    /// A locator over `source` (which may not even parse).
    pub fn new(source: &'a str) -> Self {
        Locator {
            source,
            root: DeTable::parse(source).ok(),
        }
    }

    /// 1-based line and column of byte `offset`.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.source.len());
        let before = &self.source[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }

    /// The span of the deepest part of `path` present in the file: the key
    /// when the path ends at a key, the value otherwise.
    pub fn span(&self, path: &FieldPath) -> Option<Range<usize>> {
        let root = self.root.as_ref()?;
        let mut best = root.span();
        let mut table: Option<&DeTable<'_>> = Some(root.get_ref());
        let mut array: Option<&[Spanned<DeValue<'_>>]> = None;
        for segment in &path.0 {
            let value = match (segment, table, array) {
                (Segment::Key(key), Some(current), _) => {
                    let Some((found_key, value)) = current
                        .iter()
                        .find(|(candidate, _)| candidate.get_ref().as_ref() == key.as_str())
                    else {
                        return Some(best);
                    };
                    best = found_key.span();
                    value
                }
                (Segment::Index(index), _, Some(items)) => {
                    let Some(value) = items.get(*index) else {
                        return Some(best);
                    };
                    best = value.span();
                    value
                }
                _ => return Some(best),
            };
            table = None;
            array = None;
            match value.get_ref() {
                DeValue::Table(inner) => table = Some(inner),
                DeValue::Array(items) => array = Some(items),
                _ => {}
            }
        }
        Some(best)
    }

    /// A problem at `path`, located.
    pub fn problem(&self, path: FieldPath, message: impl Into<String>) -> Problem {
        let (line, column) = self
            .span(&path)
            .map_or((0, 0), |span| self.line_column(span.start));
        Problem {
            field: path,
            line,
            column,
            message: message.into(),
        }
    }
}

/// A problem with a hosts file, naming its line.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// The file cannot be read (missing, not a regular file, or larger
    /// than [`mcfed_protocol::bounds::CONFIG_FILE`]).
    #[error("cannot read hosts file {0}")]
    Io(#[source] ReadError),
    /// A line is wrong.
    #[error("{}", escape_controls(&format!("{}:{line}: {message}", path.display())))]
    Line {
        /// The file.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
}
