//! The located checks every part of validation records its problems
//! with ([`Checker`]), and the index of a scenario's jobs by name that
//! `[[action]]` and `[[expect]]` entries look them up in ([`job_index`]).

use std::str::FromStr;

use crate::locate::{FieldPath, Locator, Problem, Segment};

pub(crate) mod job_index;

/// Collects every problem of a scenario file, each located.
pub(crate) struct Checker<'a> {
    pub(crate) locator: &'a Locator<'a>,
    pub(crate) problems: Vec<Problem>,
    pub(crate) warnings: Vec<Problem>,
    /// The scenario file's directory: files it names are relative to it.
    pub(crate) base: std::path::PathBuf,
    /// Per cluster, the LSF configuration it was imported from
    /// (`lsf_config`), whose lines problems in it are reported at.
    pub(crate) imported: Vec<Option<mcfed_lsf::ClusterDoc>>,
    /// The advance reservations `brsvadd` actions make: (cluster, name,
    /// users), which jobs may name as they name configured ones.
    pub(crate) added_reservations: Vec<(String, String, Vec<String>)>,
}

impl Checker<'_> {
    /// Records a problem at `path`.
    pub(crate) fn problem(&mut self, path: FieldPath, message: impl Into<String>) {
        let message = self.imported_source(&path, message.into());
        let problem = self.locator.problem(path, message);
        self.problems.push(problem);
    }

    /// Records a warning at `path`: the scenario is accepted with it.
    pub(crate) fn warning(&mut self, path: FieldPath, message: impl Into<String>) {
        let message = self.imported_source(&path, message.into());
        let warning = self.locator.problem(path, message);
        self.warnings.push(warning);
    }

    /// Parses a name, or records why it is not one at `path`.
    pub(crate) fn name<T: FromStr<Err = mcfed_protocol::NameError>>(
        &mut self,
        path: FieldPath,
        text: &str,
    ) -> Option<T> {
        match text.parse() {
            Ok(name) => Some(name),
            Err(error) => {
                self.problem(path, error.to_string());
                None
            }
        }
    }

    /// `message`, prefixed with the LSF file and line its field was
    /// imported from when `path` is in an imported cluster.
    fn imported_source(&self, path: &FieldPath, message: String) -> String {
        let [Segment::Key(top), Segment::Index(cluster), rest @ ..] = path.0.as_slice() else {
            return message;
        };
        let Some(Some(doc)) = self.imported.get(*cluster).filter(|_| top == "cluster") else {
            return message;
        };
        let source = match rest {
            [Segment::Key(part), Segment::Key(key), ..] if part == "params" => {
                doc.source("params", None, Some(key))
            }
            [
                Segment::Key(part),
                Segment::Index(index),
                Segment::Key(key),
                ..,
            ] => doc.source(part, Some(*index), Some(key)),
            [Segment::Key(part), Segment::Index(index)] => doc.source(part, Some(*index), None),
            _ => None,
        };
        match source {
            Some(at) => format!("{at}: {message}"),
            None if matches!(rest.first(), Some(Segment::Key(key)) if key == "job" || key == "lsf_config" || key == "address" || key == "name") => {
                message
            }
            None => format!("{}: {message}", doc.dir),
        }
    }
}
