//! Logical lines of an LSF file: `#` comments removed (also after a value;
//! a `#` inside double quotes is kept), `\` continuations joined, and
//! `#INCLUDE "file"` directives replaced by the included file's lines.
//! Every logical line remembers where each of its pieces came from.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::limits::{MAX_FILE_BYTES, MAX_INCLUDE_DEPTH, MAX_INCLUDED_FILES, MAX_LINE_BYTES};
use crate::source::{Diagnostic, Location};

/// One logical line.
#[derive(Clone, Debug)]
pub struct Line {
    /// Its text, without comments or continuation backslashes.
    pub text: String,
    /// Where each piece starts: (byte offset in `text`, where it was read).
    pieces: Vec<(usize, Location)>,
    /// The comment lines right above it (no blank line between), without
    /// their `#`: kept with a queue's section on import and export.
    pub comments: Vec<String>,
}

/// The prefix of lines that LSF reads as comments and mcfed as content:
/// mcfed's own parameters and columns in files LSF loads (`#mcfed
/// MAX_FORWARDS = 3`).
pub const MCFED_PREFIX: &str = "#mcfed";

/// How many comment lines above one line are kept.
const MAX_KEPT_COMMENTS: usize = 100;

/// The content of an `#mcfed` line and the column it starts at; `None`
/// for any other line.
fn mcfed_content(raw: &str) -> Option<(&str, usize)> {
    let trimmed = raw.trim_start();
    let rest = trimmed.strip_prefix(MCFED_PREFIX)?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let content = rest.strip_prefix([' ', '\t']).unwrap_or(rest);
    let before = &raw[..raw.len() - content.len()];
    Some((content, before.chars().count() + 1))
}

/// A comment line's text: without its `#` and the blank after it.
fn comment_text(trimmed: &str) -> String {
    let text = trimmed.trim_start_matches('#');
    let text = text.strip_prefix(' ').unwrap_or(text).trim_end();
    text.chars().take(MAX_LINE_BYTES / 64).collect()
}

impl Line {
    /// Where byte `offset` of the text was read.
    pub fn at(&self, offset: usize) -> Location {
        let (start, origin) = self
            .pieces
            .iter()
            .rev()
            .find(|(start, _)| *start <= offset)
            .or(self.pieces.first())
            .cloned()
            .unwrap_or((
                0,
                Location {
                    file: Arc::from("?"),
                    line: 0,
                    column: 0,
                    outside: false,
                },
            ));
        let end = offset.min(self.text.len());
        let chars = self
            .text
            .get(start.min(end)..end)
            .map_or(0, |piece| piece.chars().count());
        Location {
            column: origin.column + u32::try_from(chars).unwrap_or(u32::MAX),
            ..origin
        }
    }

    /// Where the line starts (its first non-blank character).
    pub fn start(&self) -> Location {
        let offset = self.text.len() - self.text.trim_start().len();
        self.at(offset)
    }
}

/// Reads the file at `path` (named `display` in diagnostics) into logical
/// lines, following `#INCLUDE`s. The configuration directory is the
/// file's own: what is read from outside it (an `#INCLUDE "/etc/passwd"`,
/// a symlink to elsewhere) is never quoted in messages.
pub(crate) fn read_lines(path: &Path, display: &str) -> Result<Vec<Line>, Diagnostic> {
    let root = path.parent().and_then(|dir| {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        dir.canonicalize().ok()
    });
    let mut reader = Reader::new(root);
    reader.file(path, display, None, 0)?;
    Ok(reader.lines)
}

/// Splits `text` (the contents of `display`) into logical lines;
/// `#INCLUDE`s are resolved against `base`, the configuration directory.
pub(crate) fn text_lines(text: &str, display: &str, base: &Path) -> Result<Vec<Line>, Diagnostic> {
    let mut reader = Reader::new(base.canonicalize().ok());
    reader.text(text, Arc::from(display), base, 0, false)?;
    Ok(reader.lines)
}

/// The bytes of the file at `path`, at most [`MAX_FILE_BYTES`]: the bound
/// is on the bytes read (`/dev/zero`, a FIFO's writer, a file that grows),
/// not on what its metadata says. A FIFO or socket is refused before it
/// is opened (opening one waits for a writer).
pub(crate) fn read_bounded(path: &Path, display: &str) -> Result<String, String> {
    use std::io::Read as _;
    let metadata =
        std::fs::metadata(path).map_err(|error| format!("cannot read {display}: {error}"))?;
    if metadata.is_dir() {
        return Err(format!("cannot read {display}: it is a directory"));
    }
    if is_fifo_or_socket(&metadata) {
        return Err(format!(
            "cannot read {display}: it is a FIFO or a socket, not a file"
        ));
    }
    let file =
        std::fs::File::open(path).map_err(|error| format!("cannot read {display}: {error}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read {display}: {error}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{display} is longer than the {MAX_FILE_BYTES} bytes a configuration file may have"
        ));
    }
    String::from_utf8(bytes).map_err(|error| {
        format!(
            "{display} is not UTF-8 text (byte {} is not)",
            error.utf8_error().valid_up_to()
        )
    })
}

#[cfg(unix)]
fn is_fifo_or_socket(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = metadata.file_type();
    kind.is_fifo() || kind.is_socket()
}

#[cfg(not(unix))]
fn is_fifo_or_socket(_metadata: &std::fs::Metadata) -> bool {
    false
}

struct Reader {
    lines: Vec<Line>,
    included: usize,
    /// The files being read, outermost first: an include cycle is refused.
    stack: Vec<PathBuf>,
    /// The configuration directory, canonical; `None` when it cannot be
    /// known (then nothing counts as outside it).
    root: Option<PathBuf>,
}

impl Reader {
    fn new(root: Option<PathBuf>) -> Self {
        Reader {
            lines: Vec::new(),
            included: 0,
            stack: Vec::new(),
            root,
        }
    }

    fn file(
        &mut self,
        path: &Path,
        display: &str,
        from: Option<&Location>,
        depth: usize,
    ) -> Result<(), Diagnostic> {
        let refuse = |message: String| match from {
            Some(at) => Diagnostic::error(at, message),
            None => Diagnostic::general(message),
        };
        let text = read_bounded(path, display).map_err(refuse)?;
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if self.stack.contains(&canonical) {
            return Err(refuse(format!("{display} includes itself")));
        }
        let outside = self
            .root
            .as_ref()
            .is_some_and(|root| !canonical.starts_with(root));
        self.stack.push(canonical);
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let result = self.text(&text, Arc::from(display), &base, depth, outside);
        self.stack.pop();
        result
    }

    fn text(
        &mut self,
        text: &str,
        file: Arc<str>,
        base: &Path,
        depth: usize,
        outside: bool,
    ) -> Result<(), Diagnostic> {
        let file = Origin { file, outside };
        let mut physical = text.split('\n').enumerate();
        let mut comments: Vec<String> = Vec::new();
        while let Some((index, raw)) = physical.next() {
            let here = location(&file, index, 1);
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let trimmed = raw.trim_start();
            if let Some(rest) = trimmed.strip_prefix("#INCLUDE") {
                comments.clear();
                self.include(rest, &file, index, raw, base, depth)?;
                continue;
            }
            let (mut piece, mut column) = match mcfed_content(raw) {
                Some(content) => content,
                None if trimmed.starts_with('#') => {
                    if comments.len() < MAX_KEPT_COMMENTS {
                        comments.push(comment_text(trimmed));
                    }
                    continue;
                }
                None => (raw, 1),
            };
            if strip_comment(piece).trim().is_empty() && !piece.trim_end().ends_with('\\') {
                comments.clear();
                continue;
            }
            let mut line = Line {
                text: String::new(),
                pieces: Vec::new(),
                comments: std::mem::take(&mut comments),
            };
            let mut piece_index = index;
            loop {
                let code = strip_comment(piece);
                let (code, continued) = match code.trim_end().strip_suffix('\\') {
                    Some(before) => (before, true),
                    None => (code, false),
                };
                line.pieces
                    .push((line.text.len(), location(&file, piece_index, column)));
                line.text.push_str(code);
                if line.text.len() > MAX_LINE_BYTES {
                    return Err(Diagnostic::error(
                        &here,
                        format!(
                            "a line longer than {MAX_LINE_BYTES} bytes (with its continuations)"
                        ),
                    ));
                }
                if !continued {
                    break;
                }
                line.text.push(' ');
                match physical.next() {
                    Some((next_index, next)) => {
                        let next = next.strip_suffix('\r').unwrap_or(next);
                        (piece, column) = mcfed_content(next).unwrap_or((next, 1));
                        piece_index = next_index;
                    }
                    None => break,
                }
            }
            if !line.text.trim().is_empty() {
                self.lines.push(line);
            }
        }
        Ok(())
    }

    fn include(
        &mut self,
        rest: &str,
        file: &Origin,
        index: usize,
        raw: &str,
        base: &Path,
        depth: usize,
    ) -> Result<(), Diagnostic> {
        let column = raw.len() - raw.trim_start().len() + 1;
        let at = location(file, index, column);
        let rest = strip_comment(rest).trim();
        let Some(name) = rest
            .strip_prefix('"')
            .and_then(|inner| inner.strip_suffix('"'))
            .filter(|name| !name.is_empty())
        else {
            return Err(Diagnostic::error(
                &at,
                format!("expected #INCLUDE \"file\", found `#INCLUDE {rest}`"),
            ));
        };
        if depth + 1 > MAX_INCLUDE_DEPTH {
            return Err(Diagnostic::error(
                &at,
                format!("#INCLUDEs nest deeper than {MAX_INCLUDE_DEPTH} files"),
            ));
        }
        self.included += 1;
        if self.included > MAX_INCLUDED_FILES {
            return Err(Diagnostic::error(
                &at,
                format!("more than {MAX_INCLUDED_FILES} files are #INCLUDEd"),
            ));
        }
        let path = base.join(name);
        let display = path.display().to_string();
        self.file(&path, &display, Some(&at), depth + 1)
    }
}

/// The file lines are read from, and whether it is outside the
/// configuration directory.
struct Origin {
    file: Arc<str>,
    outside: bool,
}

fn location(origin: &Origin, index: usize, column: usize) -> Location {
    Location {
        file: Arc::clone(&origin.file),
        line: u32::try_from(index + 1).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
        outside: origin.outside,
    }
}

/// The line up to its first `#` outside double quotes.
fn strip_comment(line: &str) -> &str {
    let mut quoted = false;
    for (offset, character) in line.char_indices() {
        match character {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..offset],
            _ => {}
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line> {
        text_lines(text, "f", Path::new(".")).expect("reads")
    }

    #[test]
    fn comments_go_and_continuations_join() {
        let read =
            lines("# a comment\nA = 1   # trailing\nB = \"x # y\"\nC = one \\\n  two\n#D = 4\n\n");
        let texts: Vec<&str> = read.iter().map(|line| line.text.trim()).collect();
        assert_eq!(texts, ["A = 1", "B = \"x # y\"", "C = one    two"]);
        let joined = &read[2];
        let two = joined.text.find("two").expect("joined");
        let at = joined.at(two);
        assert_eq!((at.line, at.column), (5, 3));
    }

    #[test]
    fn a_bad_include_is_an_error_at_its_line() {
        let error =
            text_lines("A = 1\n#INCLUDE nothing\n", "f", Path::new(".")).expect_err("refused");
        assert_eq!(error.at.map(|at| at.line), Some(2));
        let error =
            text_lines("#INCLUDE \"/nonexistent/x\"\n", "f", Path::new(".")).expect_err("refused");
        assert!(error.message.contains("cannot read"), "{error}");
    }
}
