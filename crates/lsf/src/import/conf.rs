//! lsf.conf: `KEY=value` lines (no sections; `#` comments; a value may be
//! quoted), onto `[cluster.params]`. mcfed reads the keys its catalogue
//! models (LSB_REQUEUE_TO_BOTTOM, LSB_MIG2PEND); every other key is a
//! warning at its line, with "did you mean" when it is close to one of
//! them. A line that is not `KEY=value` and a key set twice are errors
//! at their line.
//!
//! A cluster's lsf.conf is its LSF_ENVDIR's (`--envdir`), else the one
//! beside its directory (`layout`). LSF_CONFDIR and LSB_CONFDIR say where
//! an LSF_ENVDIR's other files are.

use std::path::Path;

use super::Diags;
use super::values::convert;
use crate::catalog::{LSF_CONF, NO_SECTION, Param, Status};
use crate::doc::{ClusterDoc, Value};
use crate::grammar::Line;
use crate::grammar::lines::read_lines;
use crate::source::{Location, did_you_mean};

/// The values lsf.conf gives the keys mcfed models, converted, with where.
#[derive(Clone, Debug, Default)]
pub(crate) struct Conf {
    values: Vec<(&'static str, Value, Location)>,
    /// LSF_CONFDIR and LSB_CONFDIR: where an LSF_ENVDIR's files are.
    layout: Vec<(&'static str, String, Location)>,
}

/// lsf.conf's keys that say where the other files are.
const LAYOUT_KEYS: [&str; 2] = ["LSF_CONFDIR", "LSB_CONFDIR"];

impl Conf {
    /// Reads lsf.conf at `path`; problems go to `diags`.
    pub(crate) fn read(path: &Path, diags: &mut Diags) -> Conf {
        let mut conf = Conf::default();
        let lines = match read_lines(path, &path.display().to_string()) {
            Ok(lines) => lines,
            Err(error) => {
                diags.push(error);
                return conf;
            }
        };
        let mut seen: Vec<(String, u32)> = Vec::new();
        for line in lines.iter().filter(|line| !line.text.trim().is_empty()) {
            let Some((key, text, at)) = assignment(line, diags) else {
                continue;
            };
            if let Some((_, first)) = seen.iter().find(|(name, _)| *name == key) {
                diags.error(
                    &at,
                    format!("{key} is set twice in lsf.conf (first at line {first})"),
                );
                continue;
            }
            seen.push((key.clone(), at.line));
            let Some(param) = modelled(&key, &at, diags) else {
                continue;
            };
            let (Status::Modelled(conv) | Status::Partial(conv, _)) = param.status else {
                continue;
            };
            if let Some((value, _)) = convert(conv, param.name, &text, &at, diags) {
                match value {
                    Value::Text(path) if LAYOUT_KEYS.contains(&param.name) => {
                        conf.layout.push((param.name, path, at));
                    }
                    value => conf.values.push((param.name, value, at)),
                }
            }
        }
        conf
    }

    /// The value of layout key `key` (`LSF_CONFDIR`, `LSB_CONFDIR`), with
    /// where it was set.
    pub(crate) fn layout(&self, key: &str) -> Option<(&str, &Location)> {
        self.layout
            .iter()
            .find(|(name, _, _)| *name == key)
            .map(|(_, path, at)| (path.as_str(), at))
    }

    /// Puts the values into `doc`'s params.
    pub(crate) fn apply(&self, doc: &mut ClusterDoc) {
        for (name, value, at) in &self.values {
            doc.params.set(name, value.clone(), Some(at.clone()));
        }
    }
}

/// The parameter `key` names, if mcfed models it; a warning otherwise.
fn modelled(key: &str, at: &Location, diags: &mut Diags) -> Option<&'static Param> {
    let spec = LSF_CONF.section(NO_SECTION)?;
    if let Some(param) = spec.param(key) {
        return Some(param);
    }
    // Not the layout keys: LSF_LOGDIR, LSF_BINDIR, … are close to them
    // and real keys, not misspellings.
    let flags = spec.names().filter(|name| !LAYOUT_KEYS.contains(name));
    match did_you_mean(key, flags) {
        Some(close) => diags.warning(
            at,
            format!("unknown parameter `{key}` in lsf.conf (did you mean `{close}`?); ignored"),
        ),
        None => diags.not_modelled(at, key),
    }
    None
}

/// `KEY=value` of `line` (the value unquoted), or an error at the line.
fn assignment(line: &Line, diags: &mut Diags) -> Option<(String, String, Location)> {
    let at = line.start();
    let Some((key, value)) = line.text.split_once('=') else {
        diags.error(
            &at,
            format!("expected `KEY=value`, found `{}`", line.text.trim()),
        );
        return None;
    };
    let key = key.trim();
    let name_like = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !name_like {
        diags.error(
            &at,
            format!("expected a parameter name before `=`, found `{key}`"),
        );
        return None;
    }
    let value = value.trim();
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|&quote| {
            value
                .strip_prefix(quote)
                .and_then(|inner| inner.strip_suffix(quote))
        })
        .unwrap_or(value);
    Some((key.to_owned(), unquoted.to_owned(), at))
}
