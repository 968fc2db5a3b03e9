//! Numbers and text in the words every message uses: a duration in
//! units a person reads and a scenario accepts back (`1h 30m`, `36500d`,
//! not `5400s` or `Duration`'s `0ns`), a count with its noun in the right
//! number (`1 job`, `2 jobs`), and text from outside with its control
//! characters shown escaped (`\u{1b}`, `\n`), so that a message is what
//! the input holds and cannot drive a terminal.

use std::fmt::Write as _;
use std::time::Duration;

/// Seconds in the units [`duration`] writes, largest first.
const UNITS: [(u64, &str); 4] = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];

/// Seconds in a (non-leap) year, for [`duration`]'s note on long spans.
const YEAR_SECS: u64 = 365 * 86_400;

/// `value` in days, hours, minutes, seconds and below, each unit that is
/// not zero: `0s`, `250ms`, `1m 30s`, `36500d (100 years)`. Every form is
/// one `humantime` (and so a scenario) reads back as the same duration;
/// a span of a year or more also says how many years, which `humantime`'s
/// own `y` (365.25 days) would not give back exactly.
pub fn duration(value: Duration) -> String {
    if value.is_zero() {
        return "0s".to_owned();
    }
    let mut left = value.as_secs();
    let mut parts: Vec<String> = Vec::new();
    for (size, unit) in UNITS {
        if left >= size {
            parts.push(format!("{}{unit}", left / size));
            left %= size;
        }
    }
    let nanos = value.subsec_nanos();
    let (millis, micros, nanos) = (nanos / 1_000_000, nanos / 1_000 % 1_000, nanos % 1_000);
    for (amount, unit) in [(millis, "ms"), (micros, "us"), (nanos, "ns")] {
        if amount > 0 {
            parts.push(format!("{amount}{unit}"));
        }
    }
    let mut text = parts.join(" ");
    let years = value.as_secs() / YEAR_SECS;
    if years > 0 {
        let _ = write!(text, " ({})", count(years, "year"));
    }
    text
}

/// A number of seconds as written in a file or on a command line (which
/// may be too large for any [`Duration`]), in [`duration`]'s words when
/// it is one, else in scientific notation: `1e20 seconds`.
pub fn seconds(value: f64) -> String {
    match Duration::try_from_secs_f64(value) {
        Ok(exact) if value < 1e15 => duration(exact),
        _ => format!("{value:e} seconds"),
    }
}

/// `count` and its noun, singular for one: `1 job`, `0 jobs`, `3 hosts`.
/// Nouns whose plural is not `-s` are given with [`count_of`].
pub fn count(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// [`count`] with an irregular plural: `count_of(2, "entry", "entries")`.
pub fn count_of(count: u64, singular: &str, plural: &str) -> String {
    if count == 1 {
        format!("1 {singular}")
    } else {
        format!("{count} {plural}")
    }
}

/// `text` with every control character (a NUL, an escape, a newline, a
/// DEL or a C1 character) written as Rust writes it in a string
/// (`\u{0}`, `\u{1b}`, `\n`): one line that shows what the input holds.
pub fn escape_controls(text: &str) -> String {
    escape_controls_but(text, &[])
}

/// [`escape_controls`], keeping the characters of `kept` as they are (a
/// message of several lines keeps its `\n`).
pub fn escape_controls_but(text: &str, kept: &[char]) -> String {
    let escaped = |character: char| character.is_control() && !kept.contains(&character);
    if !text.chars().any(escaped) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        if escaped(character) {
            out.extend(character.escape_default());
        } else {
            out.push(character);
        }
    }
    out
}

/// `text` cut to at most `max_bytes` bytes (at a character boundary)
/// with what was left out said: `abc… (30000000 bytes)`. Text within the
/// bound is returned whole.
pub fn elide(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_writes_them() {
        for (value, expected) in [
            (Duration::ZERO, "0s"),
            (Duration::from_millis(250), "250ms"),
            (Duration::from_nanos(1_500), "1us 500ns"),
            (Duration::from_secs(90), "1m 30s"),
            (Duration::from_secs(5_400), "1h 30m"),
            (Duration::from_secs(86_400), "1d"),
            (Duration::from_millis(61_001), "1m 1s 1ms"),
            (Duration::from_secs(100 * YEAR_SECS), "36500d (100 years)"),
            (Duration::from_secs(YEAR_SECS + 3_600), "365d 1h (1 year)"),
        ] {
            assert_eq!(duration(value), expected, "{value:?}");
        }
    }

    #[test]
    fn every_duration_written_reads_back_the_same() {
        for value in [
            Duration::from_millis(250),
            Duration::from_secs(90),
            Duration::from_secs(100 * YEAR_SECS),
            Duration::new(123_456_789, 7_000_000),
            Duration::MAX,
        ] {
            let text = duration(value);
            let written = text.split(" (").next().unwrap_or_default();
            assert_eq!(
                humantime_like(written),
                value,
                "{text} does not read back as {value:?}"
            );
        }
    }

    /// Reads `duration`'s own forms (a test needs no parser crate).
    fn humantime_like(text: &str) -> Duration {
        let mut total = Duration::ZERO;
        for part in text.split(' ') {
            let split = part
                .find(|c: char| c.is_ascii_alphabetic())
                .expect("a unit");
            let (number, unit) = part.split_at(split);
            let number: u64 = number.parse().expect("a number");
            total += match unit {
                "d" => Duration::from_secs(number * 86_400),
                "h" => Duration::from_secs(number * 3_600),
                "m" => Duration::from_secs(number * 60),
                "s" => Duration::from_secs(number),
                "ms" => Duration::from_millis(number),
                "us" => Duration::from_micros(number),
                "ns" => Duration::from_nanos(number),
                other => panic!("unit {other}"),
            };
        }
        total
    }

    #[test]
    fn seconds_too_large_for_a_duration_are_written_short() {
        assert_eq!(seconds(1e300), "1e300 seconds");
        assert_eq!(seconds(1e20), "1e20 seconds");
        assert_eq!(seconds(90.0), "1m 30s");
        assert_eq!(seconds(f64::NAN), "NaN seconds");
    }

    #[test]
    fn counts_take_their_noun_in_the_right_number() {
        assert_eq!(count(1, "job"), "1 job");
        assert_eq!(count(0, "job"), "0 jobs");
        assert_eq!(count(2, "cluster"), "2 clusters");
        assert_eq!(count_of(1, "entry", "entries"), "1 entry");
        assert_eq!(count_of(3, "entry", "entries"), "3 entries");
    }

    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(escape_controls("plain"), "plain");
        assert_eq!(
            escape_controls("a\u{1b}[31mb\0c\nd\u{7f}\u{85}"),
            "a\\u{1b}[31mb\\u{0}c\\nd\\u{7f}\\u{85}"
        );
        assert_eq!(escape_controls_but("one\ntwo\t", &['\n']), "one\ntwo\\t");
    }

    #[test]
    fn long_text_is_elided_at_a_character_boundary() {
        assert_eq!(elide("short", 10), "short");
        assert_eq!(elide("ééé", 3), "é… (6 bytes)");
        let long = "x".repeat(1000);
        assert_eq!(elide(&long, 4), "xxxx… (1000 bytes)");
    }
}
