//! The catalogue as the table docs/lsf-import.md shows.

use super::{FILES, Status};

/// The table docs/lsf-import.md shows: every parameter of every file with
/// what mcfed makes of it.
pub fn markdown() -> String {
    let mut text = String::new();
    for file in FILES {
        text.push_str(&format!("### {}\n\n", file.name));
        for section in file.sections.iter().filter(|section| section.read) {
            if section.name == super::NO_SECTION {
                text.push_str(
                    "No sections: `KEY=value` lines. Every key not listed is a warning at its line.\n\n",
                );
            } else {
                text.push_str(&format!("Section `{}`:\n\n", section.name));
            }
            text.push_str("| parameter | mcfed | how |\n|---|---|---|\n");
            for param in section.params {
                let (status, how) = match param.status {
                    Status::Modelled(_) => ("modelled", ""),
                    Status::Partial(_, how) => ("in part", how),
                    Status::Kept(how) => ("kept", how),
                    Status::Ignored => ("ignored", "a warning at its line"),
                };
                text.push_str(&format!("| `{}` | {status} | {how} |\n", param.name));
            }
            text.push('\n');
        }
        let skipped: Vec<&str> = file
            .sections
            .iter()
            .filter(|section| !section.read)
            .map(|section| section.name)
            .collect();
        if !skipped.is_empty() {
            text.push_str(&format!(
                "Sections ignored, one warning each: {}.\n\n",
                skipped.join(", ")
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docs_list_every_parameter_as_the_catalogue_does() {
        let docs = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/lsf-import.md"
        ))
        .expect("docs/lsf-import.md");
        let table = markdown();
        if std::env::var_os("MCFED_PRINT_CATALOG").is_some() {
            #[allow(clippy::print_stdout)]
            {
                println!("{table}");
            }
        }
        assert!(
            docs.contains(&table),
            "docs/lsf-import.md does not hold the catalogue's table (run with MCFED_PRINT_CATALOG=1 to print it)"
        );
    }
}
