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
    /// Whether the file is outside the configuration directory (an
    /// `#INCLUDE` of `/etc/passwd`, a symlink out of it): messages about
    /// it never quote its content ([`Diagnostic::error`]).
    pub outside: bool,
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
    /// An error at `at` (what the message quotes is left out when `at` is
    /// outside the configuration directory).
    pub fn error(at: &Location, message: impl Into<String>) -> Self {
        Diagnostic::located(Severity::Error, at, message.into())
    }

    /// A warning at `at` (what the message quotes is left out when `at` is
    /// outside the configuration directory).
    pub fn warning(at: &Location, message: impl Into<String>) -> Self {
        Diagnostic::located(Severity::Warning, at, message.into())
    }

    fn located(severity: Severity, at: &Location, message: String) -> Self {
        let message = if at.outside {
            withhold_quotes(&message)
        } else {
            message
        };
        Diagnostic {
            severity,
            at: Some(at.clone()),
            message,
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

    /// A warning about no line in particular (a file not found).
    pub fn general_warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            at: None,
            message: message.into(),
        }
    }

    /// `file:line: message`, the short form warnings are listed in
    /// (control characters escaped).
    pub fn short(&self) -> String {
        let text = match &self.at {
            Some(at) => format!("{}: {}", at.short(), self.message),
            None => self.message.clone(),
        };
        escape_controls(&text)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        let text = match &self.at {
            Some(at) => format!("{kind}: {at}: {}", self.message),
            None => format!("{kind}: {}", self.message),
        };
        f.write_str(&escape_controls(&text))
    }
}

/// `text` with every control character (a NUL, an escape, a newline)
/// written as Rust writes it in a string (`\u{0}`, `\u{1b}`, `\n`), so
/// a message is one line that shows what the file holds and cannot move
/// a terminal's cursor.
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if character.is_control() {
            escaped.extend(character.escape_default());
        } else {
            escaped.push(character);
        }
    }
    escaped
}

/// A message about a file outside the configuration directory: what it
/// quotes (the `…`-quoted parts, which may be the file's content) is
/// withheld.
fn withhold_quotes(message: &str) -> String {
    let mut kept = String::with_capacity(message.len());
    for (index, part) in message.split('`').enumerate() {
        if index % 2 == 0 {
            kept.push_str(part);
        } else {
            kept.push_str("`…`");
        }
    }
    kept.push_str(" (the file is outside the configuration directory: its content is not shown)");
    kept
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
