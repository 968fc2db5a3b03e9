//! An SWF line's fields: the whitespace-separated tokens, by a plain byte
//! scan, and each token's number, integers by a fast path (the reader's
//! hot loop: a million-job trace has 18 million fields).

/// A field's value: a finite number (integers and decimals both occur).
/// Integers — nearly every field of nearly every trace — take a fast path.
pub(super) fn parse_field(token: &[u8]) -> Option<f64> {
    let (negative, digits) = match token.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, token),
    };
    if !digits.is_empty() && digits.len() <= 15 {
        // One pass: accumulate while every byte is a digit. In `i64`
        // (at most 15 bytes of at most 255 cannot overflow it), which
        // x86-64 turns into an `f64` in one instruction, where a `u64`
        // takes a dozen: exact either way below 10^15.
        let mut value = 0i64;
        let mut integer = true;
        for &byte in digits {
            let digit = byte.wrapping_sub(b'0');
            integer &= digit < 10;
            value = value * 10 + i64::from(digit);
        }
        if integer {
            let value = value as f64;
            return Some(if negative { -value } else { value });
        }
    }
    std::str::from_utf8(token)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
}

/// The whitespace-separated tokens of a line, by a plain byte scan (the
/// reader's hot loop: a million-job trace has 18 million of them).
pub(super) struct Tokens<'a> {
    pub(super) line: &'a [u8],
    pub(super) position: usize,
}

impl<'a> Tokens<'a> {
    pub(super) fn next_token(&mut self) -> Option<&'a [u8]> {
        let line = self.line;
        let mut position = self.position;
        // Any control byte or space separates fields (SWF uses spaces and
        // tabs); one comparison per byte.
        while position < line.len() && line[position] <= b' ' {
            position += 1;
        }
        if position == line.len() {
            self.position = position;
            return None;
        }
        let start = position;
        while position < line.len() && line[position] > b' ' {
            position += 1;
        }
        self.position = position;
        Some(&line[start..position])
    }
}
