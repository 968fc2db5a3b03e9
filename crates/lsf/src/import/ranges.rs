//! LSF 10.1's host name ranges: `hostA[1-3]`, `host[01-10]` (the width of
//! a number with a leading zero is kept: host01 … host10), `host[1-3,7]`,
//! with the integers at the end of the name, one pair of brackets per
//! name (lsb.hosts(5), "Pattern definition"). lsf.cluster.NAME's Host
//! section, host groups, queues' HOSTS and limits' HOSTS and PER_HOST all
//! read them here.

use crate::limits::MAX_GROUP_MEMBERS;

/// The hosts `word` names when it is a range: `None` when it is not one
/// (no brackets at its end), an error in the reader's words when it is a
/// malformed one.
pub(crate) fn expand(word: &str) -> Option<Result<Vec<String>, String>> {
    let inner = word.strip_suffix(']')?;
    let (prefix, spec) = inner.split_once('[')?;
    Some(expand_spec(word, prefix, spec))
}

fn expand_spec(word: &str, prefix: &str, spec: &str) -> Result<Vec<String>, String> {
    if prefix.is_empty() || prefix.contains(['[', ']', '*']) || spec.contains(['[', ']']) {
        return Err(format!(
            "host range `{word}`: expected a host name with one `[…]` of numbers at its end, such as `host[1-3,7]`"
        ));
    }
    let mut hosts = Vec::new();
    for item in spec.split(',') {
        let (first, last) = match item.split_once('-') {
            Some((first, last)) => (first.trim(), last.trim()),
            None => (item.trim(), item.trim()),
        };
        let (Some(low), Some(high)) = (number(first), number(last)) else {
            return Err(format!(
                "host range `{word}`: `{}` is not a number or a range of numbers (`1-3`)",
                item.trim()
            ));
        };
        if low > high {
            return Err(format!(
                "host range `{word}`: {first}-{last} goes down; the first number must not be above the second"
            ));
        }
        if hosts.len() as u64 + (high - low) >= MAX_GROUP_MEMBERS as u64 {
            return Err(format!(
                "host range `{word}` names more than {MAX_GROUP_MEMBERS} hosts"
            ));
        }
        let width = if first.len() > 1 && first.starts_with('0') {
            first.len()
        } else {
            0
        };
        hosts.extend((low..=high).map(|n| format!("{prefix}{n:0width$}")));
    }
    Ok(hosts)
}

/// A non-negative integer of at most 9 digits.
fn number(text: &str) -> Option<u64> {
    (!text.is_empty() && text.len() <= 9 && text.bytes().all(|byte| byte.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(word: &str) -> Vec<String> {
        expand(word).expect("a range").expect("valid")
    }

    #[test]
    fn the_forms_of_lsf_10_1_expand() {
        assert_eq!(hosts("host[1-3]"), ["host1", "host2", "host3"]);
        assert_eq!(hosts("host[1-3,7]"), ["host1", "host2", "host3", "host7"]);
        assert_eq!(hosts("n[08-11]"), ["n08", "n09", "n10", "n11"]);
        assert_eq!(hosts("h[5]"), ["h5"]);
        assert_eq!(hosts("h[1 - 2, 4]"), ["h1", "h2", "h4"]);
        assert_eq!(expand("hostA"), None);
        assert_eq!(expand("[1-2]x"), None);
    }

    #[test]
    fn malformed_ranges_are_refused_in_words() {
        for (word, expected) in [
            ("host[3-1]", "goes down"),
            ("host[a-b]", "`a-b` is not a number"),
            ("[1-3]", "one `[…]` of numbers"),
            ("a[1]b[2]", "one `[…]` of numbers"),
            ("host[1-99999999]", "more than"),
            ("host[]", "`` is not a number"),
        ] {
            let error = expand(word).expect("a range").expect_err(word);
            assert!(error.contains(expected), "{word}: {error}");
        }
    }
}
