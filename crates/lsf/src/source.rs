//! Where something was read: a file, a line and a column, and the
//! diagnostics (warnings and errors) that point there.

use std::fmt;
use std::sync::Arc;

/// A place in an LSF configuration file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file as it is named to the user (the cluster's directory joined
    /// with the file's name, or an `#INCLUDE`d path).
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl Location {
    /// `file:line`, the form the imported TOML's comments use.
    pub fn short(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// The file's name without its directory, with the line: `lsb.queues:12`.
    pub fn file_name_line(&self) -> String {
        let name = self.file.rsplit(['/', '\\']).next().unwrap_or(&self.file);
        format!("{name}:{}", self.line)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A value read from a file, with where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it starts.
    pub at: Location,
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The configuration is imported, but something in it is not emulated
    /// or is emulated in part (`--strict` makes it an error).
    Warning,
    /// The configuration cannot be imported.
    Error,
}

/// A warning or an error, located.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// Where, if it is in a file.
    pub at: Option<Location>,
    /// What, in an administrator's words.
    pub message: String,
}

impl Diagnostic {
    /// An error at `at`.
    pub fn error(at: &Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            at: Some(at.clone()),
            message: message.into(),
        }
    }

    /// A warning at `at`.
    pub fn warning(at: &Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            at: Some(at.clone()),
            message: message.into(),
        }
    }

    /// An error about no line in particular (a missing file, a cluster).
    pub fn general(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            at: None,
            message: message.into(),
        }
    }

    /// `file:line: message`, the short form warnings are listed in.
    pub fn short(&self) -> String {
        match &self.at {
            Some(at) => format!("{}: {}", at.short(), self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match &self.at {
            Some(at) => write!(f, "{kind}: {at}: {}", self.message),
            None => write!(f, "{kind}: {}", self.message),
        }
    }
}

/// The closest of `known` to `name`, if one is close enough to be a
/// likely misspelling: "did you mean `PRIORITY`?".
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let upper = name.to_ascii_uppercase();
    known
        .into_iter()
        .map(|candidate| {
            let distance = strsim::osa_distance(&upper, &candidate.to_ascii_uppercase());
            (distance, candidate)
        })
        .filter(|&(distance, candidate)| {
            distance > 0 && distance <= (candidate.len().max(3) / 3).clamp(1, 3)
                || (distance == 0 && candidate != name)
        })
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// `"; did you mean `X`?"` when one of `known` is close to `name`, else
/// nothing.
pub fn suggestion<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(name, known)
        .map(|close| format!(" (did you mean `{close}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_and_far_ones_are_not() {
        let known = ["PRIORITY", "QJOB_LIMIT", "UJOB_LIMIT"];
        assert_eq!(did_you_mean("PRIORTY", known), Some("PRIORITY"));
        assert_eq!(did_you_mean("priority", known), Some("PRIORITY"));
        assert_eq!(did_you_mean("QJOB_LIMT", known), Some("QJOB_LIMIT"));
        assert_eq!(did_you_mean("RES_REQ", known), None);
        assert_eq!(did_you_mean("lwo", ["low", "high"]), Some("low"));
        assert_eq!(did_you_mean("PRIORITY", known), None);
    }
}
