//! Writing an imported federation as a scenario's TOML: each value on its
//! own line with a comment naming the LSF file and line it came from, and
//! the table of which output line came from where (so problems found in
//! the TOML can be reported at the LSF line).

use std::fmt::Write as _;

use crate::doc::{ClusterDoc, Entry, FederationDoc, Table, Value};
use crate::source::Location;

/// TOML text and, for each of its lines, the LSF place it came from.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// The TOML.
    pub text: String,
    /// Per line (index 0 is line 1): where its value was read.
    pub origins: Vec<Option<Location>>,
}

impl Rendered {
    fn line(&mut self, text: &str, origin: Option<&Location>) {
        self.text.push_str(text);
        self.text.push('\n');
        self.origins.push(origin.cloned());
    }

    fn comment(&mut self, text: &str) {
        for line in text.lines() {
            self.line(format!("# {line}").trim_end(), None);
        }
    }

    /// Where output line `line` (1-based) came from.
    pub fn origin(&self, line: usize) -> Option<&Location> {
        self.origins.get(line.checked_sub(1)?)?.as_ref()
    }
}

/// The whole federation, as `mcfed import lsf` writes it; `header` lines
/// open the file as comments.
pub fn federation(doc: &FederationDoc, header: &[String]) -> Rendered {
    let mut out = Rendered::default();
    for line in header {
        out.comment(line);
    }
    if !doc.warnings.is_empty() {
        out.comment(&format!(
            "{} warning(s): settings not modelled or modelled in part:",
            doc.warnings.len()
        ));
        for warning in &doc.warnings {
            out.comment(&format!("  {}", warning.short()));
        }
    }
    for cluster in &doc.clusters {
        out.line("", None);
        out.comment(&format!("Cluster {} from {}", cluster.name, cluster.dir));
        out.line("[[cluster]]", None);
        cluster_body(&mut out, cluster, "cluster.");
    }
    out
}

/// One cluster as a document of its own, whose top level is the cluster's
/// table (what a scenario's `lsf_config` reads).
pub fn cluster_root(cluster: &ClusterDoc) -> Rendered {
    let mut out = Rendered::default();
    cluster_body(&mut out, cluster, "");
    out
}

fn cluster_body(out: &mut Rendered, cluster: &ClusterDoc, prefix: &str) {
    out.line(&format!("name = {}", quote(&cluster.name)), None);
    if !cluster.params.entries.is_empty() {
        out.line("", None);
        out.line(&format!("[{prefix}params]"), None);
        entries(out, &cluster.params, &cluster.dir);
    }
    for (part, tables) in [
        ("host", &cluster.hosts),
        ("queue", &cluster.queues),
        ("user_group", &cluster.user_groups),
        ("user", &cluster.users),
        ("limit", &cluster.limits),
        ("reservation_policy", &cluster.reservation_policies),
    ] {
        for table in tables {
            out.line("", None);
            if let Some(comment) = &table.comment {
                out.comment(comment);
            }
            for kept in &table.kept {
                out.line(
                    &format!("# {} = {}", kept.key, quote(&kept.value)),
                    kept.from.as_ref(),
                );
            }
            let first = table.entries.iter().find_map(|entry| entry.from.as_ref());
            out.line(&format!("[[{prefix}{part}]]"), first);
            entries(out, table, &cluster.dir);
        }
    }
}

fn entries(out: &mut Rendered, table: &Table, dir: &str) {
    for entry in &table.entries {
        let mut line = format!("{} = {}", key(&entry.key), value(&entry.value));
        if let Some(comment) = comment(entry, dir) {
            let _ = write!(line, "  # {comment}");
        }
        out.line(&line, entry.from.as_ref());
    }
}

/// `file:line (note)`, the file relative to the cluster's directory when
/// it is in it (an `#INCLUDE`d `queues.d/low.queues`), else its name.
fn comment(entry: &Entry, dir: &str) -> Option<String> {
    let place = |from: &Location| {
        let relative = from
            .file
            .strip_prefix(dir)
            .and_then(|rest| rest.strip_prefix(['/', '\\']));
        match relative {
            Some(relative) => format!("{relative}:{}", from.line),
            None => from.file_name_line(),
        }
    };
    match (&entry.from, &entry.note) {
        (Some(from), Some(note)) => Some(format!("{} ({note})", place(from))),
        (Some(from), None) => Some(place(from)),
        (None, Some(note)) => Some(note.clone()),
        (None, None) => None,
    }
}

/// A key, quoted when TOML needs it (`"JL/U"`).
fn key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_owned()
    } else {
        quote(key)
    }
}

fn quote(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

fn value(value: &Value) -> String {
    match value {
        Value::Int(number) => number.to_string(),
        Value::Float(number) => format!("{number:?}"),
        Value::Text(text) => quote(text),
        Value::Bool(yes) => yes.to_string(),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(|item| quote(item)).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_value_line_names_its_source() {
        let from = Location {
            file: Arc::from("dir/lsb.queues"),
            line: 7,
            column: 14,
            outside: false,
        };
        let mut queue = Table::default();
        queue.set("name", Value::Text("normal".into()), Some(from.clone()));
        queue.set("PRIORITY", Value::Int(30), Some(from.clone()));
        queue.set("CPU_TIME_FACTOR", Value::Float(3.0), None);
        let cluster = ClusterDoc {
            name: "C1".into(),
            dir: "dir".into(),
            queues: vec![queue],
            ..ClusterDoc::default()
        };
        let rendered = federation(
            &FederationDoc {
                clusters: vec![cluster],
                warnings: Vec::new(),
            },
            &["imported".to_owned()],
        );
        assert!(
            rendered.text.contains("PRIORITY = 30  # lsb.queues:7\n"),
            "{}",
            rendered.text
        );
        assert!(rendered.text.contains("CPU_TIME_FACTOR = 3.0\n"));
        let line = rendered
            .text
            .lines()
            .position(|line| line.starts_with("PRIORITY"))
            .expect("written")
            + 1;
        assert_eq!(rendered.origin(line), Some(&from));
        let parsed: toml::Table = rendered.text.parse().expect("valid TOML");
        assert!(parsed.contains_key("cluster"));
    }
}
