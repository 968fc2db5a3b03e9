//! Helpers shared by the scenario crate's tests.

#![allow(dead_code, unreachable_pub)]

use mcfed_scenario::parse;

/// Every problem of `source` (read as `bad.toml`, which must be refused):
/// its line, field and message.
pub fn problems(source: &str) -> Vec<(usize, String, String)> {
    match parse("bad.toml", source) {
        Ok(_) => panic!("the scenario should be refused"),
        Err(error) => {
            let rendered = error.to_string();
            assert!(
                rendered.starts_with("bad.toml:"),
                "names the file: {rendered}"
            );
            error
                .problems()
                .iter()
                .map(|problem| {
                    (
                        problem.line,
                        problem.field.to_string(),
                        problem.message.clone(),
                    )
                })
                .collect()
        }
    }
}

/// The line (from 1) of the first line of `source` with `needle`.
pub fn line_of(source: &str, needle: &str) -> usize {
    source
        .lines()
        .position(|line| line.contains(needle))
        .map(|index| index + 1)
        .expect("needle is in the source")
}
