//! The fields of one lsb.acct line, as LSF writes them: separated by
//! blanks; a string in double quotes (`""` when it is missing), a double
//! quote inside it doubled (`"say ""hi"""`); numbers bare. The cursor
//! hands them out in order, each under its name in the record's layout,
//! so every error says which field it is.

use std::borrow::Cow;

use super::MAX_FIELD_BYTES;

/// What is wrong with one field (the reader adds the file and line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FieldProblem {
    /// The field's position in the record, from 1.
    pub(crate) index: usize,
    /// The field's name in LSF's layout.
    pub(crate) name: &'static str,
    /// What is wrong.
    pub(crate) problem: String,
}

/// A cursor over the fields of one line.
pub(crate) struct Fields<'a> {
    line: &'a [u8],
    position: usize,
    /// How many fields were handed out.
    taken: usize,
}

impl<'a> Fields<'a> {
    /// The fields of `line` (without its line end).
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Fields {
            line,
            position: 0,
            taken: 0,
        }
    }

    /// How many fields were handed out.
    pub(crate) fn taken(&self) -> usize {
        self.taken
    }

    /// Whether every field has been read.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_blanks();
        self.position >= self.line.len()
    }

    fn skip_blanks(&mut self) {
        let rest = self.line.get(self.position..).unwrap_or_default();
        self.position += rest
            .iter()
            .position(|&byte| byte != b' ' && byte != b'\t')
            .unwrap_or(rest.len());
    }

    #[cold]
    fn problem(&self, name: &'static str, problem: impl Into<String>) -> FieldProblem {
        FieldProblem {
            index: self.taken,
            name,
            problem: problem.into(),
        }
    }

    /// Where the next field is, without copying it: one scan of its bytes
    /// (the reader's hot loop; what is wrong is named by the caller).
    #[inline]
    fn next_span(&mut self, name: &'static str) -> Result<Span, FieldProblem> {
        self.skip_blanks();
        self.taken += 1;
        self.span().map_err(|wrong| self.wrong(name, wrong))
    }

    fn span(&mut self) -> Result<Span, Wrong> {
        let line = self.line;
        let start = self.position;
        let Some(&first) = line.get(start) else {
            return Err(Wrong::Missing);
        };
        let span = if first == b'"' {
            self.quoted_span(start)?
        } else {
            let end = line[start..]
                .iter()
                .position(|&byte| byte == b' ' || byte == b'\t')
                .map_or(line.len(), |length| start + length);
            self.position = end;
            Span {
                start,
                end,
                quoted: false,
                doubled: false,
            }
        };
        if span.end - span.start > MAX_FIELD_BYTES {
            return Err(Wrong::TooLong);
        }
        Ok(span)
    }

    /// A quoted string's span, starting at the `"` at `start`.
    fn quoted_span(&mut self, start: usize) -> Result<Span, Wrong> {
        let line = self.line;
        let mut at = start + 1;
        let mut doubled = false;
        let end = loop {
            let Some(offset) = line.get(at..).and_then(|rest| memchr(b'"', rest)) else {
                return Err(Wrong::Unclosed);
            };
            let quote = at + offset;
            if line.get(quote + 1) == Some(&b'"') {
                doubled = true;
                at = quote + 2;
            } else {
                break quote;
            }
        };
        self.position = end + 1;
        if line
            .get(self.position)
            .is_some_and(|&byte| byte != b' ' && byte != b'\t')
        {
            return Err(Wrong::Trailing);
        }
        Ok(Span {
            start: start + 1,
            end,
            quoted: true,
            doubled,
        })
    }

    #[cold]
    fn wrong(&self, name: &'static str, wrong: Wrong) -> FieldProblem {
        let problem = match wrong {
            Wrong::Missing => "missing: the record ends before it".to_owned(),
            Wrong::Unclosed => "a quoted string is not closed".to_owned(),
            Wrong::Trailing => {
                "a quoted string is followed by more text without a blank".to_owned()
            }
            Wrong::TooLong => format!("longer than {MAX_FIELD_BYTES} bytes"),
        };
        self.problem(name, problem)
    }

    /// The next field, raw: a quoted string unescaped, or a bare word.
    fn next_raw(&mut self, name: &'static str) -> Result<Raw<'a>, FieldProblem> {
        let span = self.next_span(name)?;
        let bytes = &self.line[span.start..span.end];
        let bytes = if span.doubled {
            let mut unescaped = Vec::with_capacity(bytes.len());
            let mut rest = bytes;
            while let Some(quote) = memchr(b'"', rest) {
                unescaped.extend_from_slice(&rest[..=quote]);
                rest = rest.get(quote + 2..).unwrap_or_default();
            }
            unescaped.extend_from_slice(rest);
            Cow::Owned(unescaped)
        } else {
            Cow::Borrowed(bytes)
        };
        Ok(Raw {
            bytes,
            quoted: span.quoted,
        })
    }

    /// A string field (`%s`): quoted as LSF writes it, or a bare word.
    /// Bytes that are not UTF-8 are replaced (a command may hold any).
    pub(crate) fn string(&mut self, name: &'static str) -> Result<String, FieldProblem> {
        let raw = self.next_raw(name)?;
        Ok(match raw.bytes {
            Cow::Borrowed(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => text.to_owned(),
                Err(_) => String::from_utf8_lossy(bytes).into_owned(),
            },
            Cow::Owned(bytes) => String::from_utf8(bytes)
                .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()),
        })
    }

    /// A whole-number field (`%d`).
    pub(crate) fn int(&mut self, name: &'static str) -> Result<i64, FieldProblem> {
        let span = self.next_span(name)?;
        let bytes = &self.line[span.start..span.end];
        match integer(bytes).filter(|_| !span.quoted) {
            Some(value) => Ok(value),
            None => {
                let raw = Raw {
                    bytes: Cow::Borrowed(bytes),
                    quoted: span.quoted,
                };
                Err(self.problem(
                    name,
                    format!("expected a whole number, found {}", raw.shown()),
                ))
            }
        }
    }

    /// A number field (`%f`).
    pub(crate) fn float(&mut self, name: &'static str) -> Result<f64, FieldProblem> {
        let span = self.next_span(name)?;
        let bytes = &self.line[span.start..span.end];
        match number(bytes).filter(|_| !span.quoted) {
            Some(value) => Ok(value),
            None => {
                let raw = Raw {
                    bytes: Cow::Borrowed(bytes),
                    quoted: span.quoted,
                };
                Err(self.problem(name, format!("expected a number, found {}", raw.shown())))
            }
        }
    }

    /// A field mcfed does not use: any value (LSF's own records put `""`
    /// in some numeric fields).
    pub(crate) fn skip(&mut self, name: &'static str) -> Result<(), FieldProblem> {
        self.next_span(name).map(drop)
    }

    /// A count of the items of a list that follows: a whole number from
    /// 0 to `max`, and no more than the fields left could hold (so a
    /// count from a damaged line allocates nothing).
    pub(crate) fn count(&mut self, name: &'static str, max: usize) -> Result<usize, FieldProblem> {
        let value = self.int(name)?;
        let left = self.line.len().saturating_sub(self.position) / 2 + 1;
        match usize::try_from(value) {
            Ok(count) if count <= max && count <= left => Ok(count),
            _ if value < 0 => {
                Err(self.problem(name, format!("a count cannot be negative, found {value}")))
            }
            _ => Err(self.problem(
                name,
                format!("{value} items, more than the record holds or the limit of {max}"),
            )),
        }
    }
}

/// What is wrong with a field's bytes.
#[derive(Clone, Copy, Debug)]
enum Wrong {
    Missing,
    Unclosed,
    Trailing,
    TooLong,
}

/// Where a field's bytes are in the line (a quoted one's without its
/// quotes), and whether they hold doubled quotes.
struct Span {
    start: usize,
    end: usize,
    quoted: bool,
    doubled: bool,
}

/// One field's bytes, and whether they were quoted.
struct Raw<'a> {
    bytes: Cow<'a, [u8]>,
    quoted: bool,
}

impl Raw<'_> {
    /// The field as an error message shows it: at most 40 characters,
    /// control characters escaped.
    fn shown(&self) -> String {
        let text = String::from_utf8_lossy(&self.bytes);
        let mut shown: String = text
            .chars()
            .take(40)
            .flat_map(|character| {
                let escaped: Vec<char> = if character.is_control() {
                    character.escape_default().collect()
                } else {
                    vec![character]
                };
                escaped
            })
            .collect();
        if text.chars().count() > 40 {
            shown.push('…');
        }
        if self.quoted {
            format!("the string `\"{shown}\"`")
        } else {
            format!("`{shown}`")
        }
    }
}

/// A decimal integer with an optional sign, as `%d` writes it: a plain
/// byte loop for the up to 18 digits nearly every field has, the
/// standard parser beyond (which refuses what overflows an `i64`).
fn integer(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if digits.len() > 18 {
        return std::str::from_utf8(bytes).ok()?.parse().ok();
    }
    let value = digits
        .iter()
        .fold(0i64, |value, &digit| value * 10 + i64::from(digit - b'0'));
    Some(if negative { -value } else { value })
}

/// A finite number as `%f` writes it: a whole number with a fraction of
/// zeros (`-1.000000`, `60.0`, what nearly every such field holds) by the
/// integer loop, anything else by the standard parser.
fn number(bytes: &[u8]) -> Option<f64> {
    let whole = match bytes.iter().position(|&byte| byte == b'.') {
        Some(dot) if bytes[dot + 1..].iter().all(|&byte| byte == b'0') => &bytes[..dot],
        Some(_) => &[][..],
        None => bytes,
    };
    if let Some(value) = integer(whole).filter(|value| value.unsigned_abs() < 1 << 53) {
        let value = value as f64;
        // `-0.0` keeps its sign, as the standard parser gives it.
        return Some(if bytes.first() == Some(&b'-') && value == 0.0 {
            -0.0
        } else {
            value
        });
    }
    std::str::from_utf8(bytes)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
}

/// The position of the first `needle` in `haystack`.
fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&byte| byte == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_numbers_and_doubled_quotes() {
        let mut fields = Fields::new(br#""JOB_FINISH" "10.1" 12 -1.5 "" "say ""hi""" x"#);
        assert_eq!(fields.string("type").as_deref(), Ok("JOB_FINISH"));
        assert_eq!(fields.string("version").as_deref(), Ok("10.1"));
        assert_eq!(fields.int("n"), Ok(12));
        assert_eq!(fields.float("f"), Ok(-1.5));
        assert_eq!(fields.string("empty").as_deref(), Ok(""));
        assert_eq!(fields.string("quote").as_deref(), Ok(r#"say "hi""#));
        assert_eq!(fields.string("bare").as_deref(), Ok("x"));
        assert!(fields.at_end());
        let missing = fields.int("more").expect_err("the end");
        assert_eq!((missing.index, missing.name), (8, "more"));
    }

    #[test]
    fn the_integer_fast_path_agrees_with_the_standard_parser() {
        for text in [
            "0",
            "-1",
            "+7",
            "42",
            "007",
            "123456789012345678",
            "-123456789012345678",
            "1234567890123456789",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "",
            "-",
            "+",
            "1.5",
            "1e3",
            "x",
            "1-2",
            "--1",
        ] {
            assert_eq!(integer(text.as_bytes()), text.parse::<i64>().ok(), "{text}");
        }
    }

    #[test]
    fn the_number_fast_path_agrees_with_the_standard_parser() {
        for text in [
            "-1.000000",
            "60.0",
            "0.00",
            "-0.0",
            "12.5",
            "3400.500000",
            "1e3",
            "7",
            "-7.",
            ".5",
            "1.0e2",
            "inf",
            "NaN",
            "",
            ".",
            "-",
            "1.2.3",
            "9007199254740993.0",
        ] {
            let expected = text.parse::<f64>().ok().filter(|value| value.is_finite());
            let found = number(text.as_bytes());
            assert_eq!(
                found.map(f64::to_bits),
                expected.map(f64::to_bits),
                "{text}"
            );
        }
    }

    #[test]
    fn malformed_fields_are_named() {
        let mut fields = Fields::new(br#"1 "two" "open"#);
        assert_eq!(fields.int("a"), Ok(1));
        let error = fields.int("b").expect_err("quoted");
        assert_eq!(error.index, 2);
        assert_eq!(
            error.problem,
            "expected a whole number, found the string `\"two\"`"
        );
        let error = fields.string("c").expect_err("unclosed");
        assert_eq!(error.problem, "a quoted string is not closed");
        let mut fields = Fields::new(br#""a"b 99999999999 5"#);
        assert!(fields.string("a").is_err());
        let mut fields = Fields::new(b"99999999999 5");
        assert!(fields.count("n", 1_000).is_err());
    }
}
