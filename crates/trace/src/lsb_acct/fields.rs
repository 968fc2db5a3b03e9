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
        while self
            .line
            .get(self.position)
            .is_some_and(|&byte| byte == b' ' || byte == b'\t')
        {
            self.position += 1;
        }
    }

    fn problem(&self, name: &'static str, problem: impl Into<String>) -> FieldProblem {
        FieldProblem {
            index: self.taken,
            name,
            problem: problem.into(),
        }
    }

    /// The next field, raw: a quoted string unescaped, or a bare word.
    fn next_raw(&mut self, name: &'static str) -> Result<Raw<'a>, FieldProblem> {
        self.skip_blanks();
        self.taken += 1;
        let rest = self.line.get(self.position..).unwrap_or_default();
        if rest.is_empty() {
            return Err(self.problem(name, "missing: the record ends before it"));
        }
        if rest[0] == b'"' {
            return self.quoted(name);
        }
        let length = rest
            .iter()
            .position(|&byte| byte == b' ' || byte == b'\t')
            .unwrap_or(rest.len());
        if length > MAX_FIELD_BYTES {
            return Err(self.problem(name, format!("longer than {MAX_FIELD_BYTES} bytes")));
        }
        self.position += length;
        Ok(Raw {
            bytes: Cow::Borrowed(&rest[..length]),
            quoted: false,
        })
    }

    /// A quoted string starting at the cursor.
    fn quoted(&mut self, name: &'static str) -> Result<Raw<'a>, FieldProblem> {
        let line = self.line;
        let start = self.position + 1;
        let mut at = start;
        let mut owned: Option<Vec<u8>> = None;
        loop {
            let Some(offset) = line.get(at..).and_then(|rest| memchr(b'"', rest)) else {
                return Err(self.problem(name, "a quoted string is not closed"));
            };
            let quote = at + offset;
            if line.get(quote + 1) == Some(&b'"') {
                // A doubled quote: one `"` of the string.
                let buffer = owned.get_or_insert_with(Vec::new);
                buffer.extend_from_slice(&line[at..=quote]);
                at = quote + 2;
            } else {
                let bytes = match owned {
                    Some(mut buffer) => {
                        buffer.extend_from_slice(&line[at..quote]);
                        Cow::Owned(buffer)
                    }
                    None => Cow::Borrowed(&line[start..quote]),
                };
                if bytes.len() > MAX_FIELD_BYTES {
                    return Err(self.problem(name, format!("longer than {MAX_FIELD_BYTES} bytes")));
                }
                self.position = quote + 1;
                if self
                    .line
                    .get(self.position)
                    .is_some_and(|&byte| byte != b' ' && byte != b'\t')
                {
                    return Err(self.problem(
                        name,
                        "a quoted string is followed by more text without a blank",
                    ));
                }
                return Ok(Raw {
                    bytes,
                    quoted: true,
                });
            }
            if at - start > MAX_FIELD_BYTES {
                return Err(self.problem(name, format!("longer than {MAX_FIELD_BYTES} bytes")));
            }
        }
    }

    /// A string field (`%s`): quoted as LSF writes it, or a bare word.
    /// Bytes that are not UTF-8 are replaced (a command may hold any).
    pub(crate) fn string(&mut self, name: &'static str) -> Result<String, FieldProblem> {
        let raw = self.next_raw(name)?;
        Ok(match raw.bytes {
            Cow::Borrowed(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Cow::Owned(bytes) => String::from_utf8(bytes)
                .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()),
        })
    }

    /// A whole-number field (`%d`).
    pub(crate) fn int(&mut self, name: &'static str) -> Result<i64, FieldProblem> {
        let raw = self.next_raw(name)?;
        let text = std::str::from_utf8(&raw.bytes).ok();
        match text.filter(|_| !raw.quoted).map(str::parse::<i64>) {
            Some(Ok(value)) => Ok(value),
            _ => Err(self.problem(
                name,
                format!("expected a whole number, found {}", raw.shown()),
            )),
        }
    }

    /// A number field (`%f`).
    pub(crate) fn float(&mut self, name: &'static str) -> Result<f64, FieldProblem> {
        let raw = self.next_raw(name)?;
        let text = std::str::from_utf8(&raw.bytes).ok();
        match text.filter(|_| !raw.quoted).map(str::parse::<f64>) {
            Some(Ok(value)) if value.is_finite() => Ok(value),
            _ => Err(self.problem(name, format!("expected a number, found {}", raw.shown()))),
        }
    }

    /// A field mcfed does not use: any value (LSF's own records put `""`
    /// in some numeric fields).
    pub(crate) fn skip(&mut self, name: &'static str) -> Result<(), FieldProblem> {
        self.next_raw(name).map(drop)
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
