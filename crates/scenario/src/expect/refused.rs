//! `refused = "text"`, optionally with `line = N`: the scenario's
//! configuration is refused with an error containing that text (at that
//! line). A scenario accepted fails it. A refused file does not validate,
//! so its expectations are also read from its TOML alone
//! ([`expected_refusals`]).

use super::{Entry, Kind};
use crate::format::RawExpect;

/// The scenario is refused with an error containing `message` (at `line`,
/// if given): a scenario accepted fails this expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    /// Text the error contains.
    pub message: String,
    /// The line the error is at.
    pub line: Option<u32>,
}

impl Kind for Refused {
    const NAME: &'static str = "a refused scenario";
    const KEYS: &'static [&'static str] = &["refused", "line"];

    fn claims(raw: &RawExpect) -> bool {
        raw.refused.is_some()
    }

    fn validate(entry: &mut Entry<'_, '_>) -> Option<Self> {
        let raw = entry.raw;
        Some(Refused {
            message: raw.refused.clone()?,
            line: raw.line,
        })
    }
}

/// One `[[expect]]` with `refused`, read from a file that does not
/// validate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedRefusal {
    /// Text an error contains.
    pub message: String,
    /// The line that error is at.
    pub line: Option<u32>,
    /// Where it was written (`expect[0]`).
    pub origin: String,
}

/// The refusals `source` expects (none when it is not TOML, or expects
/// something else).
pub fn expected_refusals(source: &str) -> Vec<ExpectedRefusal> {
    let Ok(value) = source.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(entries) = value.get("expect").and_then(toml::Value::as_array) else {
        return Vec::new();
    };
    entries
        .iter()
        .enumerate()
        .filter_map(|(index, entry)| {
            let message = entry.get("refused")?.as_str()?.to_owned();
            let line = entry
                .get("line")
                .and_then(toml::Value::as_integer)
                .and_then(|line| u32::try_from(line).ok());
            Some(ExpectedRefusal {
                message,
                line,
                origin: format!("expect[{index}]"),
            })
        })
        .collect()
}
