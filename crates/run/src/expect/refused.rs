//! Scenarios that must be refused: a file whose `[[expect]]` entries say
//! `refused = "text"` (optionally with `line = N`) expects its
//! configuration to be refused with an error containing that text. Such a
//! file does not validate, so its expectations are read from its TOML
//! alone ([`expected_refusals`]) and checked against the problems the
//! refusal lists ([`check_refusals`]); `mcfed validate --check` and `mcfed
//! run --check` report them as they report any expectation. A scenario
//! that is accepted fails them. (Also `mcfed_run::refusal`.)

use mcfed_scenario::ScenarioError;
use mcfed_scenario::expect::Refused;

use super::{Check, CheckResult, Found, Run};

pub use mcfed_scenario::expect::{ExpectedRefusal, expected_refusals};

impl Check for Refused {
    fn check(&self, _run: Run<'_>) -> Found {
        Found::failed(
            format!("the scenario is refused: \"{}\"", self.message),
            "the scenario was accepted",
        )
    }
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
                skipped: None,
            }
        })
        .collect()
}
