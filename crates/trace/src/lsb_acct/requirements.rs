//! What a replay takes of a job's `-R` resource requirement string (as
//! lsb.acct logs it): what its `select[...]` requires of every host —
//! boolean resources, and the host type and model (`type==X`,
//! `model==X`, the words `mcfed_cluster::host_types::requirement_word`
//! makes) — and the memory and swap its `rusage[...]` reserves. The rest
//! is passed over: other sections (`order`, `span`, `same`, `cu`,
//! `affinity`), other comparisons (`mem>1024`), `type==any` and
//! `type==local` (which ask for nothing here), negations and any
//! selection with an alternative (`||`), whose requirement cannot be told
//! from a list of words.

/// The part of a requirement string a replay uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requirements {
    /// What every host of the job must have: boolean resources, and its
    /// type or model as `type==X` or `model==X`.
    pub resources: Vec<String>,
    /// Memory reserved (`rusage[mem=N]`), MB.
    pub mem_mb: Option<u64>,
    /// Swap reserved (`rusage[swp=N]`), MB.
    pub swap_mb: Option<u64>,
}

impl std::fmt::Display for Requirements {
    /// As LSF writes a requirement: `select[a && b] rusage[mem=M:swp=S]`
    /// (what is empty left out), which [`requirements`] reads back.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.resources.is_empty() {
            parts.push(format!("select[{}]", self.resources.join(" && ")));
        }
        let usage: Vec<String> = [("mem", self.mem_mb), ("swp", self.swap_mb)]
            .into_iter()
            .filter_map(|(key, value)| value.map(|mb| format!("{key}={mb}")))
            .collect();
        if !usage.is_empty() {
            parts.push(format!("rusage[{}]", usage.join(":")));
        }
        f.write_str(&parts.join(" "))
    }
}

/// The most memory or swap read from a requirement, MB (a petabyte; more
/// is a typo or damage, and is passed over).
const MAX_MB: u64 = 1 << 30;

/// The most resources taken from one requirement.
const MAX_RESOURCES: usize = 64;

/// Reads `text` as LSF writes a requirement: sections `name[...]`, and
/// text outside any section as a selection.
pub fn requirements(text: &str) -> Requirements {
    let mut found = Requirements::default();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let Some((name, inside, after)) = section(rest) else {
            // A selection without `select[...]`: up to the next section.
            let (selection, after) = rest.split_at(next_section(rest).unwrap_or(rest.len()));
            select(selection, &mut found);
            rest = after.trim_start();
            continue;
        };
        match name {
            "select" => select(inside, &mut found),
            "rusage" if found.mem_mb.is_none() && found.swap_mb.is_none() => {
                usage(inside, &mut found);
            }
            _ => {}
        }
        rest = after.trim_start();
    }
    found
}

/// Where the first section (`word[...]`) after a blank of `text` starts.
fn next_section(text: &str) -> Option<usize> {
    text.char_indices()
        .filter(|&(at, c)| c.is_ascii_whitespace() && section(&text[at + 1..]).is_some())
        .map(|(at, _)| at + 1)
        .next()
}

/// `name[inside] after`, when `text` starts with a section.
fn section(text: &str) -> Option<(&str, &str, &str)> {
    let open = text.find('[')?;
    let name = &text[..open];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let close = matching(&text[open..])? + open;
    Some((name, &text[open + 1..close], &text[close + 1..]))
}

/// Where the `]` that closes the `[` starting `text` is.
fn matching(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

/// A selection: its conjuncts that are bare resource names, or a host
/// type or model asked for.
fn select(selection: &str, found: &mut Requirements) {
    if selection.contains("||") || selection.contains(" or ") {
        return;
    }
    for conjunct in selection.split("&&").flat_map(|part| part.split(" and ")) {
        let term = conjunct
            .trim()
            .trim_matches(|c| c == '(' || c == ')')
            .trim();
        let Some(word) = requirement_word(term) else {
            continue;
        };
        if found.resources.len() < MAX_RESOURCES && !found.resources.contains(&word) {
            found.resources.push(word);
        }
    }
}

/// A conjunct as the word the cluster reads: a bare resource name as it
/// is, `type == "X"` as `type==X` (and `model`); `None` for anything else
/// and for `type==any` and `type==local`.
fn requirement_word(term: &str) -> Option<String> {
    if let Some((key, value)) = term.split_once("==") {
        let key = key.trim();
        let value = value.trim().trim_matches('"').trim();
        let name = !value.is_empty()
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        return match key {
            "type" if matches!(value, "any" | "local") => None,
            "type" | "model" if name => Some(format!("{key}=={value}")),
            _ => None,
        };
    }
    let bare = term
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && term
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    bare.then(|| term.to_owned())
}

/// A usage: `mem=N` and `swp=N` (MB, or with a unit), separated by `:`
/// or `,`; in a compound usage (`rusage[mem=1:swp=2 || mem=3]`), the
/// first alternative.
fn usage(inside: &str, found: &mut Requirements) {
    let first = inside.split("||").next().unwrap_or_default();
    for part in first.split([':', ',']) {
        let Some((key, value)) = part.split_once('=') else {
            continue;
        };
        let Some(megabytes) = megabytes(value.trim()) else {
            continue;
        };
        match key.trim() {
            "mem" => found.mem_mb = Some(megabytes),
            "swp" | "swap" => found.swap_mb = Some(megabytes),
            _ => {}
        }
    }
}

/// `1024`, `1024MB`, `2G`, `512K`, ... in MB (a fraction of a MB rounds
/// up); `None` when it is not such a size or is out of bounds.
fn megabytes(value: &str) -> Option<u64> {
    let digits_end = value
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(digits_end);
    let number: f64 = number.parse().ok()?;
    let scale = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "M" | "MB" => 1.0,
        "K" | "KB" => 1.0 / 1024.0,
        "G" | "GB" => 1024.0,
        "T" | "TB" => 1024.0 * 1024.0,
        _ => return None,
    };
    let megabytes = (number * scale).ceil();
    (megabytes.is_finite() && megabytes >= 0.0 && megabytes <= MAX_MB as f64)
        .then_some(megabytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        requirements(text).resources
    }

    #[test]
    fn boolean_resources_of_the_selection_are_taken() {
        assert_eq!(names("bigmem"), ["bigmem"]);
        assert_eq!(names("select[bigmem && gpu]"), ["bigmem", "gpu"]);
        assert_eq!(names("select[(bigmem) && type==any]"), ["bigmem"]);
        assert_eq!(names("bigmem order[r15s:pg]"), ["bigmem"]);
        assert_eq!(names("select[bigmem || gpu]"), Vec::<String>::new());
        assert_eq!(names("select[!bigmem]"), Vec::<String>::new());
        assert_eq!(
            names("select[mem>1024] span[hosts=1]"),
            Vec::<String>::new()
        );
        assert_eq!(
            names("select[type == local] order[r15s:pg] "),
            Vec::<String>::new()
        );
        assert_eq!(names("select[bigmem"), Vec::<String>::new());
        assert_eq!(names(""), Vec::<String>::new());
    }

    #[test]
    fn host_types_and_models_of_the_selection_are_taken() {
        assert_eq!(names("select[type==LINUX86]"), ["type==LINUX86"]);
        assert_eq!(
            names("select[bigmem && type == \"X86_64\" && (model==XeonE5-2.6)]"),
            ["bigmem", "type==X86_64", "model==XeonE5-2.6"]
        );
        assert_eq!(names("type==LINUX86 order[r15s]"), ["type==LINUX86"]);
        assert_eq!(names("select[type==local]"), Vec::<String>::new());
        assert_eq!(names("select[mem==4 && ncpus==2]"), Vec::<String>::new());
        assert_eq!(names("select[type==a*b]"), Vec::<String>::new());
        assert_eq!(
            names("select[type==LINUX86 || type==SUNSOL]"),
            Vec::<String>::new()
        );
        // Written back as LSF writes it, and read again the same.
        let text = requirements("select[model == XeonE5 && bigmem]").to_string();
        assert_eq!(text, "select[model==XeonE5 && bigmem]");
        assert_eq!(names(&text), ["model==XeonE5", "bigmem"]);
    }

    #[test]
    fn requirements_are_written_as_lsf_writes_them_and_read_back() {
        let wanted = Requirements {
            resources: vec!["bigmem".into(), "gpu".into()],
            mem_mb: Some(512),
            swap_mb: Some(64),
        };
        let text = wanted.to_string();
        assert_eq!(text, "select[bigmem && gpu] rusage[mem=512:swp=64]");
        assert_eq!(requirements(&text), wanted);
        assert_eq!(Requirements::default().to_string(), "");
    }

    #[test]
    fn memory_and_swap_of_the_usage_are_taken() {
        let found = requirements("select[mem>1024] rusage[mem=1024:swp=2GB] span[hosts=2]");
        assert_eq!((found.mem_mb, found.swap_mb), (Some(1024), Some(2048)));
        let found = requirements("rusage[mem=512:duration=10]");
        assert_eq!(found.mem_mb, Some(512));
        let found = requirements("rusage[mem=100 || mem=200]");
        assert_eq!(found.mem_mb, Some(100));
        let found = requirements("rusage[mem=1.5G,swp=x]");
        assert_eq!((found.mem_mb, found.swap_mb), (Some(1536), None));
        let found = requirements("rusage[mem=99999999999999999999]");
        assert_eq!(found.mem_mb, None);
    }
}
