//! Scenario errors: one type for every problem found in a scenario (TOML syntax, unknown keys,
//! bad units, program syntax, bad `--set`, and the interpreter's runtime errors).
//!
//! Two audiences: a terminal user gets `Display` ("file.toml:12:5: message", grep- and
//! editor-friendly), and miette renders the same error with the source snippet, a label under
//! the span and a help line. Both come from the same fields, so they never disagree.

use std::fmt;

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceSpan};

use crate::ast::Span;

/// Where an error points.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Origin {
    /// A position in a named file (line and column 1-based).
    File { name: String, line: u32, col: u32 },
    /// A `--set KEY=VALUE` argument (the whole argument, as given).
    Set { arg: String },
    /// A file without a position (e.g. it could not be read, or a required key is missing).
    Whole { name: String },
}

/// An error in a scenario. See the module docs for how it prints.
/// Boxed so `Result<T, ScenarioError>` stays one pointer wide on the happy path.
#[derive(Clone)]
pub struct ScenarioError(Box<Inner>);

#[derive(Clone)]
struct Inner {
    origin: Origin,
    message: String,
    label: String,
    help: Option<String>,
    /// Byte range into `source` (the file, or the `--set` argument).
    span: Option<SourceSpan>,
    source: Option<NamedSource<String>>,
}

impl ScenarioError {
    /// An error about a whole file (or a program string) without a position.
    pub fn new(name: &str, message: impl Into<String>) -> Self {
        ScenarioError(Box::new(Inner {
            origin: Origin::Whole { name: name.to_string() },
            message: message.into(),
            label: "here".into(),
            help: None,
            span: None,
            source: None,
        }))
    }

    /// An error at byte range `offset..offset+len` of `text` (the file called `name`).
    /// Out-of-range offsets are clamped, never a panic.
    pub fn at(name: &str, text: &str, offset: usize, len: usize, message: impl Into<String>) -> Self {
        let offset = offset.min(text.len());
        let len = len.min(text.len() - offset);
        let (line, col) = line_col(text, offset);
        ScenarioError(Box::new(Inner {
            origin: Origin::File { name: name.to_string(), line, col },
            message: message.into(),
            label: "here".into(),
            help: None,
            span: Some(SourceSpan::new(offset.into(), len)),
            source: Some(NamedSource::new(name, text.to_string())),
        }))
    }

    /// An error at an AST span (for the interpreter's runtime errors: "no region named `x`").
    /// `text` must be the text the span points into (the scenario file; see
    /// `Scenario::error_at`, which also handles programs given with `--set`).
    pub fn at_span(name: &str, text: &str, span: Span, message: impl Into<String>) -> Self {
        Self::at(name, text, span.offset as usize, span.len as usize, message)
    }

    /// An error caused by a `--set` argument; `offset..offset+len` is a range of `arg`.
    pub fn for_set(arg: &str, offset: usize, len: usize, message: impl Into<String>) -> Self {
        let offset = offset.min(arg.len());
        let len = len.min(arg.len() - offset);
        ScenarioError(Box::new(Inner {
            origin: Origin::Set { arg: arg.to_string() },
            message: message.into(),
            label: "here".into(),
            help: None,
            span: Some(SourceSpan::new(offset.into(), len)),
            source: Some(NamedSource::new("--set", arg.to_string())),
        }))
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.0.help = Some(help.into());
        self
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.0.label = label.into();
        self
    }

    /// Rename the file (errors from `parse_program` don't know the file's name).
    pub fn in_file(mut self, name: &str) -> Self {
        match &mut self.0.origin {
            Origin::File { name: n, .. } | Origin::Whole { name: n } => *n = name.to_string(),
            Origin::Set { .. } => return self,
        }
        if let Some(src) = self.0.source.take() {
            self.0.source = Some(NamedSource::new(name, src.inner().clone()));
        }
        self
    }

    /// Re-home an error found while parsing a `--set` value (e.g. a program given with
    /// `--set process.0.program=...`, parsed against the argument text): it now names the set.
    pub fn into_set(mut self, arg: &str) -> Self {
        self.0.origin = Origin::Set { arg: arg.to_string() };
        if let Some(src) = self.0.source.take() {
            self.0.source = Some(NamedSource::new("--set", src.inner().clone()));
        }
        self
    }

    /// The message without the location prefix.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The help text, if any ("did you mean ...", "expected one of ...").
    pub fn help_text(&self) -> Option<&str> {
        self.0.help.as_deref()
    }

    /// `(line, col)` when the error points into a file.
    pub fn line_col(&self) -> Option<(u32, u32)> {
        match self.0.origin {
            Origin::File { line, col, .. } => Some((line, col)),
            _ => None,
        }
    }

    /// Whether the error was caused by a `--set` argument.
    pub fn is_from_set(&self) -> bool {
        matches!(self.0.origin, Origin::Set { .. })
    }

    /// Byte range in the source (the file or the `--set` argument).
    pub fn byte_range(&self) -> Option<std::ops::Range<usize>> {
        self.0.span.map(|s| s.offset()..s.offset() + s.len())
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.origin {
            Origin::File { name, line, col } => write!(f, "{name}:{line}:{col}: {}", self.0.message),
            Origin::Set { arg } => write!(f, "--set {arg}: {}", self.0.message),
            Origin::Whole { name } => write!(f, "{name}: {}", self.0.message),
        }
    }
}

// Debug prints like Display (plus help) so `Result::unwrap` in tests and `main() -> Result`
// show something a human can act on.
impl fmt::Debug for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")?;
        if let Some(h) = &self.0.help {
            write!(f, " (help: {h})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

impl Diagnostic for ScenarioError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new("vmlab::scenario"))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.0.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.0.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.0.span?;
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(Some(self.0.label.clone()), span))))
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`. Offsets past the end or
/// inside a multi-byte character are clamped down to the nearest character boundary.
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line as u32, col as u32)
}

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(&str, f64)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(word, c);
        // Transpositions and one-letter slips of short words score >= 0.8; unrelated words don't.
        let close = score >= 0.8 || strsim::damerau_levenshtein(word, c) <= 1;
        if close && best.is_none_or(|(_, s)| score > s) {
            best = Some((c, score));
        }
    }
    best.map(|(c, _)| c)
}

/// The backquoted names in a serde message: "unknown field `x`, expected one of `a`, `b`"
/// gives ["x", "a", "b"].
pub(crate) fn backquoted(msg: &str) -> Vec<&str> {
    msg.split('`').skip(1).step_by(2).collect()
}

/// Turn serde's "unknown field `memroy`, expected one of `memory`, ..." into our wording.
/// `table` describes where the key sits ("in [machine]"). Returns (message, help).
pub(crate) fn unknown_key_message(serde_msg: &str, table: &str) -> Option<(String, String)> {
    let rest = serde_msg.strip_prefix("unknown field ")?;
    let names = backquoted(rest);
    let (key, expected) = names.split_first()?;
    let msg = match suggest(key, expected.iter().copied()) {
        Some(s) => format!("unknown key `{key}` {table}; did you mean `{s}`?"),
        None => format!("unknown key `{key}` {table}"),
    };
    let help = if expected.is_empty() {
        "this table takes no keys".to_string()
    } else {
        format!("expected one of {}", expected.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", "))
    };
    Some((msg, help))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_has_location_prefix() {
        let text = "a = 1\nmachine = 2\n";
        let e = ScenarioError::at("s.toml", text, 6, 7, "bad");
        assert_eq!(e.to_string(), "s.toml:2:1: bad");
        assert_eq!(e.line_col(), Some((2, 1)));
        let e = ScenarioError::at("s.toml", text, 999, 3, "clamped");
        assert_eq!(e.to_string(), "s.toml:3:1: clamped");
        let e = ScenarioError::for_set("seed=x", 5, 1, "bad seed");
        assert_eq!(e.to_string(), "--set seed=x: bad seed");
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(line_col("é = 1", 3), (1, 3));
        assert_eq!(line_col("é", 1), (1, 1));
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("memroy", ["memory", "cpus", "nodes"]), Some("memory"));
        assert_eq!(suggest("mmpa", ["mmap", "munmap", "mlock"]), Some("mmap"));
        assert_eq!(suggest("zzzz", ["memory", "cpus"]), None);
        let (m, h) =
            unknown_key_message("unknown field `memroy`, expected one of `memory`, `cpus`", "in [machine]").unwrap();
        assert_eq!(m, "unknown key `memroy` in [machine]; did you mean `memory`?");
        assert_eq!(h, "expected one of `memory`, `cpus`");
    }

    #[test]
    fn diagnostic_has_label_and_source() {
        let e = ScenarioError::at("s.toml", "abc", 1, 1, "m").with_help("h").with_label("l");
        assert!(e.source_code().is_some());
        assert_eq!(e.labels().map(|l| l.count()), Some(1));
        assert_eq!(e.help().map(|h| h.to_string()), Some("h".into()));
    }
}
