//! Scenarios that must be refused: a file whose `[[expect]]` entries say
//! `refused = "text"` (optionally with `line = N`) expects its
//! configuration to be refused with an error containing that text. Such a
//! file does not validate, so its expectations are read from its TOML
//! alone ([`expected_refusals`]) and checked against the problems the
//! refusal lists ([`check_refusals`]); `mcfed validate --check` and `mcfed
//! run --check` report them as they report any expectation.

use crate::expect::CheckResult;
use mcfed_scenario::ScenarioError;

/// One `[[expect]]` with `refused`.
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

/// Whether each expected refusal is among the problems of `error`.
pub fn check_refusals(expected: &[ExpectedRefusal], error: &ScenarioError) -> Vec<CheckResult> {
    let problems: Vec<(u32, String)> = match error {
        ScenarioError::Invalid { problems, .. } => problems
            .iter()
            .map(|problem| {
                (
                    u32::try_from(problem.line).unwrap_or(u32::MAX),
                    format!("{}: {}", problem.field, problem.message),
                )
            })
            .collect(),
        other => vec![(0, other.to_string())],
    };
    expected
        .iter()
        .map(|refusal| {
            let at = refusal
                .line
                .map(|line| format!(" at line {line}"))
                .unwrap_or_default();
            let found = problems.iter().find(|(line, text)| {
                text.contains(&refusal.message) && refusal.line.is_none_or(|want| want == *line)
            });
            CheckResult {
                origin: refusal.origin.clone(),
                expected: format!("the scenario is refused{at}: \"{}\"", refusal.message),
                held: found.is_some(),
                actual: match found {
                    Some((line, text)) => format!("refused at line {line}: {text}"),
                    None => problems
                        .iter()
                        .map(|(line, text)| format!("line {line}: {text}"))
                        .collect::<Vec<_>>()
                        .join("; "),
                },
            }
        })
        .collect()
}
