//! The process-program language: a scannerless recursive-descent parser producing `ast::Stmt`.
//!
//! Why scannerless: the same characters mean different things in different places. In an
//! expression `a-b` is a subtraction; in a name (`data/file-{i}`) it is part of the name. So the
//! parser reads characters on demand in the mode the grammar expects at that point (statement
//! word, expression token, name template) instead of running a context-free lexer first.
//!
//! Statements end at a newline, `;` or `}`. `#` starts a comment. Every node carries a span into
//! the *scenario file*: the program text starts at byte `base_offset` of `file_text`, and
//! line/column are computed against the whole file, so errors (here and at run time) point at
//! the exact character the user wrote.

use super::ast::*;
use super::error::{suggest, ScenarioError};
use super::units::parse_quantity;

/// Parse a program. `text` is the program string, found at byte `base_offset` of `file_text`
/// (the whole scenario file, used for line/column). Errors name the file `<program>`; the
/// loader renames them with `ScenarioError::in_file`.
pub fn parse_program(
    text: &str,
    base_offset: usize,
    file_text: &str,
) -> Result<Vec<Stmt>, ScenarioError> {
    Parser::new(text, base_offset, file_text).parse()
}

/// Where the content of a TOML string value starts, given the byte range of the value
/// (quotes included) in the file. Returns (offset, exact): `exact` is false for basic strings
/// (`"..."`, `"""..."""`), whose escapes make byte-exact mapping impossible — spans inside
/// them are approximate, which is why the docs recommend literal strings (`'''...'''`).
pub fn string_content_offset(file_text: &str, value_start: usize) -> (usize, bool) {
    let rest = file_text.get(value_start..).unwrap_or("");
    let (open, exact) = if rest.starts_with("'''") {
        (3, true)
    } else if rest.starts_with("\"\"\"") {
        (3, false)
    } else if rest.starts_with('\'') {
        (1, true)
    } else {
        (1, false)
    };
    let mut off = value_start + open;
    if open == 3 {
        // TOML drops a newline that immediately follows the opening delimiter.
        let after = file_text.get(off..).unwrap_or("");
        if after.starts_with("\r\n") {
            off += 2;
        } else if after.starts_with('\n') {
            off += 1;
        }
    }
    (off, exact)
}

/// Statement keywords (not operations), offered in "did you mean" suggestions too.
const KEYWORDS: &[&str] = &["let", "for", "repeat", "loop", "if", "else", "break"];

/// How an argument is read.
#[derive(Clone, Copy)]
enum Kind {
    Expr,
    Tpl,
    /// One of these bare words.
    Word(&'static [&'static str]),
}

/// The shape of an operation's arguments: positional ones (description for "needs ..."
/// messages), `key=value` ones and bare flags.
struct OpSpec {
    name: &'static str,
    positional: &'static [(&'static str, Kind)],
    /// How many positional arguments are required.
    required: usize,
    keys: &'static [(&'static str, Kind)],
    flags: &'static [&'static str],
    /// Whether a `{ block }` follows the arguments.
    block: bool,
}

const RANGE_KEYS: &[(&str, Kind)] = &[("offset", Kind::Expr), ("len", Kind::Expr)];
const IO_KEYS: &[(&str, Kind)] = &[
    ("offset", Kind::Expr),
    ("len", Kind::Expr),
    ("bs", Kind::Expr),
];
const REGION: &[(&str, Kind)] = &[("a region name", Kind::Tpl)];
const FILE: &[(&str, Kind)] = &[("a file name", Kind::Tpl)];

const fn spec(
    name: &'static str,
    positional: &'static [(&'static str, Kind)],
    required: usize,
    keys: &'static [(&'static str, Kind)],
    flags: &'static [&'static str],
) -> OpSpec {
    OpSpec {
        name,
        positional,
        required,
        keys,
        flags,
        block: false,
    }
}

const OPS: &[OpSpec] = &[
    spec(
        "mmap",
        &[("a name", Kind::Tpl), ("a length", Kind::Expr)],
        2,
        &[
            ("file", Kind::Tpl),
            ("shm", Kind::Tpl),
            ("offset", Kind::Expr),
            ("prot", Kind::Word(&["read", "write", "rw"])),
        ],
        &["anon", "fixed", "shared", "private", "locked", "populate"],
    ),
    spec("munmap", REGION, 1, RANGE_KEYS, &[]),
    spec(
        "mlock",
        REGION,
        1,
        &[
            ("offset", Kind::Expr),
            ("len", Kind::Expr),
            ("chunk", Kind::Expr),
        ],
        &[],
    ),
    spec("munlock", REGION, 1, RANGE_KEYS, &[]),
    spec(
        "madvise",
        &[
            ("a region name", Kind::Tpl),
            ("an advice", Kind::Word(&["dontneed"])),
        ],
        2,
        RANGE_KEYS,
        &[],
    ),
    spec(
        "touch",
        REGION,
        1,
        &[
            ("offset", Kind::Expr),
            ("len", Kind::Expr),
            ("stride", Kind::Expr),
            ("pattern", Kind::Word(&["seq", "uniform", "zipf"])),
            ("theta", Kind::Expr),
            ("count", Kind::Expr),
            ("rate", Kind::Expr),
        ],
        &["read", "write"],
    ),
    spec("read", FILE, 1, IO_KEYS, &[]),
    spec("write", FILE, 1, IO_KEYS, &[]),
    spec(
        "create",
        FILE,
        1,
        &[("size", Kind::Expr), ("disk", Kind::Tpl)],
        &[],
    ),
    spec("unlink", FILE, 1, &[], &[]),
    spec("fsync", FILE, 1, &[], &[]),
    OpSpec {
        name: "fork",
        positional: &[],
        required: 0,
        keys: &[],
        flags: &[],
        block: true,
    },
    spec("wait", &[], 0, &[], &[]),
    OpSpec {
        name: "threads",
        positional: &[("a thread count", Kind::Expr)],
        required: 1,
        keys: &[],
        flags: &[],
        block: true,
    },
    spec("exit", &[], 0, &[], &[]),
    spec("migrate", &[("a CPU number", Kind::Expr)], 1, &[], &[]),
    // `sleep forever` is recognised before the generic argument reader.
    spec(
        "sleep",
        &[("a duration (or `forever`)", Kind::Expr)],
        1,
        &[],
        &[],
    ),
    spec("compute", &[("a duration", Kind::Expr)], 1, &[], &[]),
    spec("drop_caches", &[("a value", Kind::Expr)], 0, &[], &[]),
    // `foreach VAR in queue NAME` is read by hand; this spec covers what follows NAME.
    OpSpec {
        name: "foreach",
        positional: &[],
        required: 0,
        keys: &[("count", Kind::Expr)],
        flags: &[],
        block: true,
    },
    spec("mark", &[("a metric name", Kind::Tpl)], 1, &[], &[]),
];

/// Deepest nesting of blocks, parentheses and unary operators: bounded so hostile input gives
/// an error instead of a stack overflow.
const MAX_DEPTH: usize = 64;

/// A parsed argument value.
enum Val {
    E(Expr),
    T(Template),
    W(&'static str),
}

/// The arguments of one operation, as read by `Parser::args`.
#[derive(Default)]
struct Args {
    positional: Vec<Val>,
    keys: Vec<(&'static str, Val, usize)>,
    flags: Vec<&'static str>,
    body: Vec<Stmt>,
}

impl Args {
    fn take_key(&mut self, key: &str) -> Option<(Val, usize)> {
        let i = self.keys.iter().position(|(k, _, _)| *k == key)?;
        let (_, v, at) = self.keys.remove(i);
        Some((v, at))
    }
    fn expr(&mut self, key: &str) -> Option<Expr> {
        match self.take_key(key) {
            Some((Val::E(e), _)) => Some(e),
            _ => None,
        }
    }
    fn tpl(&mut self, key: &str) -> Option<Template> {
        match self.take_key(key) {
            Some((Val::T(t), _)) => Some(t),
            _ => None,
        }
    }
    fn word(&mut self, key: &str) -> Option<(&'static str, usize)> {
        match self.take_key(key) {
            Some((Val::W(w), at)) => Some((w, at)),
            _ => None,
        }
    }
    fn flag(&self, f: &str) -> bool {
        self.flags.contains(&f)
    }
    /// Positional argument `i` (the spec guarantees its kind).
    fn pos_expr(&mut self, i: usize) -> Option<Expr> {
        match self
            .positional
            .get_mut(i)
            .map(|v| std::mem::replace(v, Val::W("")))
        {
            Some(Val::E(e)) => Some(e),
            _ => None,
        }
    }
    fn pos_tpl(&mut self, i: usize) -> Option<Template> {
        match self
            .positional
            .get_mut(i)
            .map(|v| std::mem::replace(v, Val::W("")))
        {
            Some(Val::T(t)) => Some(t),
            _ => None,
        }
    }
}

pub(crate) struct Parser<'a> {
    src: &'a str,
    pos: usize,
    /// End of the last token consumed (spans stop there, not after trailing blanks).
    last_end: usize,
    base: usize,
    file: &'a str,
    /// Byte offsets where each line of `file` starts.
    line_starts: Vec<usize>,
    depth: usize,
    /// Where the arguments of the last operation ended (before its block, if any).
    header_end: usize,
    /// Added to every span offset (not to line/col): programs given with `--set` are parsed
    /// against the argument text but their spans live past the end of the file, see
    /// `Scenario::error_at`.
    shift: usize,
    /// Variables defined so far in the text (plus the built-ins), for `check_defined`.
    defined: Vec<String>,
}

type R<T> = Result<T, ScenarioError>;

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}
fn is_tpl_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// The span covering `a` through `b`.
fn join(a: Span, b: Span) -> Span {
    let end = (b.offset + b.len).max(a.offset + a.len);
    Span {
        len: end.saturating_sub(a.offset),
        ..a
    }
}

fn expr_span(e: &Expr) -> Span {
    match e {
        Expr::Int(_, s) | Expr::Var(_, s) | Expr::Bin(_, _, _, s) | Expr::Un(_, _, s) => *s,
    }
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, base: usize, file: &'a str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(file.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Parser {
            src,
            pos: 0,
            last_end: 0,
            base,
            file,
            line_starts,
            depth: 0,
            header_end: 0,
            shift: 0,
            defined: vec!["errno".into(), "tid".into()],
        }
    }

    pub(crate) fn with_shift(mut self, shift: usize) -> Self {
        self.shift = shift;
        self
    }

    pub(crate) fn parse(mut self) -> R<Vec<Stmt>> {
        self.stmts(None)
    }

    // ---- positions and errors -------------------------------------------------------------

    /// The file span of local byte range `start..end`.
    fn span(&self, start: usize, end: usize) -> Span {
        let off = self.base.saturating_add(start);
        let line_idx = self
            .line_starts
            .partition_point(|&s| s <= off)
            .saturating_sub(1);
        let line_start = self.line_starts.get(line_idx).copied().unwrap_or(0);
        let col = self
            .file
            .get(line_start..off.min(self.file.len()))
            .map_or(1, |s| s.chars().count() + 1);
        Span {
            offset: off.saturating_add(self.shift) as u32,
            len: end.saturating_sub(start) as u32,
            line: line_idx as u32 + 1,
            col: col as u32,
        }
    }

    fn err_at(&self, start: usize, end: usize, msg: impl Into<String>) -> ScenarioError {
        let len = end
            .saturating_sub(start)
            .max(if start < self.src.len() { 1 } else { 0 });
        ScenarioError::at(
            "<program>",
            self.file,
            self.base.saturating_add(start),
            len,
            msg,
        )
    }

    fn err_span(&self, span: Span, msg: impl Into<String>) -> ScenarioError {
        let span = Span {
            offset: (span.offset as usize).saturating_sub(self.shift) as u32,
            ..span
        };
        ScenarioError::at_span("<program>", self.file, span, msg)
    }

    /// "`x`", "end of line" or "end of program": what the user wrote where we expected more.
    fn found(&self) -> String {
        let rest = &self.src[self.pos..];
        match rest.chars().next() {
            None => "end of program".into(),
            Some('\n') | Some('\r') => "end of line".into(),
            Some(c) if is_ident_char(c) => {
                let w: String = rest
                    .chars()
                    .take_while(|&c| is_ident_char(c) || c == '.')
                    .collect();
                format!("`{w}`")
            }
            Some(c) => format!("`{c}`"),
        }
    }

    fn expected(&self, what: &str) -> ScenarioError {
        let end = self.pos
            + self.src[self.pos..]
                .chars()
                .next()
                .map_or(0, char::len_utf8);
        self.err_at(
            self.pos,
            end,
            format!("expected {what}, found {}", self.found()),
        )
        .with_label(format!("expected {what}"))
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err_at(self.pos, self.pos + 1, "nesting too deep"));
        }
        Ok(())
    }

    // ---- characters -----------------------------------------------------------------------

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }
    fn peek2(&self) -> Option<char> {
        self.src[self.pos..].chars().nth(1)
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        self.last_end = self.pos;
        Some(c)
    }
    fn eat(&mut self, s: &str) -> bool {
        if self.src[self.pos..].starts_with(s) {
            self.pos += s.len();
            self.last_end = self.pos;
            true
        } else {
            false
        }
    }

    /// Skip blanks and a comment, but not the newline ending the statement.
    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '#' => {
                    self.pos = self.src[self.pos..]
                        .find('\n')
                        .map_or(self.src.len(), |i| self.pos + i);
                }
                _ => break,
            }
        }
    }
    /// Skip blanks, comments and newlines (and `;` when `semis`).
    fn skip_lines(&mut self, semis: bool) {
        loop {
            self.skip_ws();
            match self.peek() {
                Some('\n') => self.pos += 1,
                Some(';') if semis => self.pos += 1,
                _ => break,
            }
        }
    }

    fn at_stmt_end(&mut self) -> bool {
        self.skip_ws();
        matches!(self.peek(), None | Some('\n') | Some(';') | Some('}'))
    }

    /// The identifier at the cursor, without consuming it.
    fn peek_ident(&self) -> Option<&'a str> {
        let rest = &self.src[self.pos..];
        if !rest.starts_with(is_ident_start) {
            return None;
        }
        let end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
        Some(&rest[..end])
    }
    fn ident(&mut self, what: &str) -> R<(String, Span)> {
        self.skip_ws();
        match self.peek_ident() {
            Some(w) => {
                let start = self.pos;
                self.eat(w);
                Ok((w.to_string(), self.span(start, self.pos)))
            }
            None => Err(self.expected(what)),
        }
    }
    fn keyword(&mut self, kw: &str) -> R<()> {
        self.skip_ws();
        if self.peek_ident() == Some(kw) {
            self.eat(kw);
            Ok(())
        } else {
            Err(self.expected(&format!("`{kw}`")))
        }
    }
    fn expect_char(&mut self, c: char, what: &str) -> R<()> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    // ---- statements -----------------------------------------------------------------------

    /// Statements until EOF (`open` None) or the `}` matching the `{` at local offset `open`.
    fn stmts(&mut self, open: Option<usize>) -> R<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            self.skip_lines(true);
            match (self.peek(), open) {
                (None, None) => return Ok(out),
                (None, Some(o)) => return Err(self
                    .err_at(
                        o,
                        o + 1,
                        "unterminated block: expected `}` to close this `{`, found end of program",
                    )
                    .with_label("this block is never closed")
                    .with_help("add a `}` on its own line at the end of the block")),
                (Some('}'), Some(_)) => {
                    self.bump();
                    return Ok(out);
                }
                (Some('}'), None) => {
                    return Err(self
                        .err_at(self.pos, self.pos + 1, "expected a statement, found `}`")
                        .with_help("this `}` has no matching `{`"))
                }
                _ => {
                    out.push(self.stmt()?);
                    if !self.at_stmt_end() {
                        return Err(self.expected("end of statement (a new line or `;`)"));
                    }
                }
            }
        }
    }

    fn block(&mut self) -> R<Vec<Stmt>> {
        self.skip_ws();
        if self.peek() != Some('{') {
            return Err(self.expected("`{`"));
        }
        let open = self.pos;
        self.bump();
        self.enter()?;
        let body = self.stmts(Some(open))?;
        self.depth -= 1;
        Ok(body)
    }

    fn stmt(&mut self) -> R<Stmt> {
        let start = self.pos;
        let Some(word) = self.peek_ident() else {
            return Err(self.expected("a statement"));
        };
        match word {
            "let" => {
                self.eat(word);
                let (name, _) = self.ident("a variable name")?;
                self.check_assignable(&name, start)?;
                self.skip_ws();
                if !(self.peek() == Some('=') && self.peek2() != Some('=')) {
                    return Err(self.expected("`=`"));
                }
                self.bump();
                let value = self.expr()?;
                self.define(&name);
                Ok(Stmt::Let {
                    name,
                    value,
                    span: self.span(start, self.last_end),
                })
            }
            "for" => {
                self.eat(word);
                let (var, _) = self.ident("a loop variable")?;
                self.keyword("in")?;
                self.define(&var);
                let from = self.expr()?;
                self.skip_ws();
                if !self.eat("..") {
                    return Err(self.expected("`..` (a range is written `A..B`)"));
                }
                let to = self.expr()?;
                let span = self.span(start, self.last_end);
                let body = self.block()?;
                Ok(Stmt::For {
                    var,
                    from,
                    to,
                    body,
                    span,
                })
            }
            "repeat" => {
                self.eat(word);
                let count = self.expr()?;
                let span = self.span(start, self.last_end);
                let body = self.block()?;
                Ok(Stmt::Repeat {
                    count: Some(count),
                    body,
                    span,
                })
            }
            "loop" => {
                self.eat(word);
                let span = self.span(start, self.last_end);
                let body = self.block()?;
                Ok(Stmt::Repeat {
                    count: None,
                    body,
                    span,
                })
            }
            "if" => self.if_stmt(),
            "break" => {
                self.eat(word);
                Ok(Stmt::Break {
                    span: self.span(start, self.last_end),
                })
            }
            "else" => Err(self
                .err_at(start, start + 4, "`else` without `if`")
                .with_help("`else` must follow the `}` of an `if` block")),
            _ => {
                // `NAME = EXPR`, `NAME += EXPR`, `NAME -= EXPR`?
                let name_span = self.span(start, start + word.len());
                let save = self.pos;
                self.eat(word);
                self.skip_ws();
                let rest = &self.src[self.pos..];
                let op = if rest.starts_with("+=") {
                    Some(Some(BinOp::Add))
                } else if rest.starts_with("-=") {
                    Some(Some(BinOp::Sub))
                } else if rest.starts_with('=') && !rest.starts_with("==") {
                    Some(None)
                } else {
                    None
                };
                match op {
                    Some(op) => {
                        self.check_assignable(word, start)?;
                        self.eat(match op {
                            Some(BinOp::Add) => "+=",
                            Some(_) => "-=",
                            None => "=",
                        });
                        if op.is_some() {
                            self.check_defined(word, name_span)?;
                        }
                        let rhs = self.expr()?;
                        // A plain `x = e` also declares `x` (the interpreter decides whether
                        // that is allowed without `let`); only reads are checked here.
                        self.define(word);
                        let span = self.span(start, self.last_end);
                        let value = match op {
                            None => rhs,
                            Some(op) => {
                                let s = join(name_span, expr_span(&rhs));
                                Expr::Bin(
                                    op,
                                    Box::new(Expr::Var(word.to_string(), name_span)),
                                    Box::new(rhs),
                                    s,
                                )
                            }
                        };
                        Ok(Stmt::Assign {
                            name: word.to_string(),
                            value,
                            span,
                        })
                    }
                    None => {
                        self.pos = save;
                        self.op()
                    }
                }
            }
        }
    }

    fn define(&mut self, name: &str) {
        if !self.defined.iter().any(|d| d == name) {
            self.defined.push(name.to_string());
        }
    }

    /// A variable read must follow (in the text) a `let`, `for` or `foreach` defining it, or be
    /// a built-in. Textual order is a safe approximation: a read before any definition fails
    /// at run time anyway, so this only moves the error earlier (and adds a suggestion).
    fn check_defined(&self, name: &str, span: Span) -> R<()> {
        if self.defined.iter().any(|d| d == name) {
            return Ok(());
        }
        let msg = match suggest(name, self.defined.iter().map(String::as_str)) {
            Some(s) => format!("unknown variable `{name}`; did you mean `{s}`?"),
            None => format!("unknown variable `{name}`"),
        };
        Err(self
            .err_span(span, msg)
            .with_help(format!("define it first with `let {name} = ...`")))
    }

    /// `errno` and `tid` are set by the machine; assigning them is surely a mistake.
    fn check_assignable(&self, name: &str, start: usize) -> R<()> {
        if name == "errno" || name == "tid" {
            return Err(self.err_at(
                start,
                self.pos,
                format!("`{name}` is a built-in variable and cannot be assigned"),
            ));
        }
        Ok(())
    }

    fn if_stmt(&mut self) -> R<Stmt> {
        let start = self.pos;
        self.keyword("if")?;
        let cond = self.expr()?;
        let span = self.span(start, self.last_end);
        let then = self.block()?;
        // `else` may sit on the `}` line or the next one; look ahead, and put it back if absent.
        let save = (self.pos, self.last_end);
        self.skip_lines(false);
        let els = if self.peek_ident() == Some("else") {
            self.eat("else");
            self.skip_ws();
            if self.peek_ident() == Some("if") {
                self.enter()?;
                let nested = self.if_stmt()?;
                self.depth -= 1;
                vec![nested]
            } else {
                self.block()?
            }
        } else {
            (self.pos, self.last_end) = save;
            Vec::new()
        };
        Ok(Stmt::If {
            cond,
            then,
            els,
            span,
        })
    }

    // ---- operations -----------------------------------------------------------------------

    fn op(&mut self) -> R<Stmt> {
        let start = self.pos;
        let (word, word_span) = self.ident("an operation")?;
        let Some(spec) = OPS.iter().find(|s| s.name == word) else {
            let candidates = OPS.iter().map(|s| s.name).chain(KEYWORDS.iter().copied());
            let msg = match suggest(&word, candidates) {
                Some(s) => format!("unknown operation `{word}`; did you mean `{s}`?"),
                None => format!("unknown operation `{word}`"),
            };
            let all: Vec<&str> = OPS.iter().map(|s| s.name).collect();
            return Err(self
                .err_span(word_span, msg)
                .with_label("unknown operation")
                .with_help(format!("operations are: {}", all.join(", "))));
        };
        let kind = match spec.name {
            "sleep" => {
                self.skip_ws();
                if self.peek_ident() == Some("forever") {
                    self.eat("forever");
                    OpKind::Sleep { dur: None }
                } else {
                    let mut a = self.args(spec, start)?;
                    OpKind::Sleep { dur: a.pos_expr(0) }
                }
            }
            "foreach" => {
                let (var, _) = self.ident("a loop variable")?;
                self.keyword("in")?;
                self.keyword("queue")?;
                self.define(&var);
                self.skip_ws();
                let queue = self.template("a queue name")?;
                let mut a = self.args(spec, start)?;
                let Some(count) = a.expr("count") else {
                    return Err(self.err_at(
                        start,
                        self.last_end,
                        "foreach needs `count=N` (the number of items in the queue)",
                    ));
                };
                OpKind::ForeachQueue {
                    var,
                    queue,
                    count,
                    body: a.body,
                }
            }
            _ => {
                let a = self.args(spec, start)?;
                self.build(spec.name, a, start)?
            }
        };
        // A block's span stops at its `{`: runtime errors point at the header, not the body.
        let end = if spec.block {
            self.header_end
        } else {
            self.last_end
        };
        Ok(Stmt::Op(Op {
            kind,
            span: self.span(start, end),
        }))
    }

    /// Read an operation's arguments (and its block, if it has one).
    fn args(&mut self, spec: &OpSpec, start: usize) -> R<Args> {
        let mut a = Args::default();
        // The first positional, when a name, is read before anything else so a region can be
        // called like a flag (`mmap fixed anon 4096` maps a region named `fixed`).
        if let Some((_, Kind::Tpl)) = spec.positional.first() {
            if !self.at_stmt_end() && self.peek() != Some('{') {
                a.positional
                    .push(Val::T(self.template(spec.positional[0].0)?));
            }
        }
        loop {
            if self.at_stmt_end() || self.peek() == Some('{') {
                break;
            }
            let arg_start = self.pos;
            if let Some(w) = self.peek_ident() {
                let after = &self.src[self.pos + w.len()..];
                if after.starts_with('=') && !after.starts_with("==") {
                    let Some(&(key, kind)) = spec.keys.iter().find(|(k, _)| *k == w) else {
                        return Err(self.unknown_arg(spec, w, arg_start, true));
                    };
                    if a.keys.iter().any(|(k, _, _)| *k == key) {
                        return Err(self.err_at(
                            arg_start,
                            arg_start + w.len(),
                            format!("`{key}` given twice"),
                        ));
                    }
                    self.eat(w);
                    self.eat("=");
                    let v = self.value(kind, key)?;
                    a.keys.push((key, v, arg_start));
                    continue;
                }
                if let Some(&f) = spec.flags.iter().find(|f| **f == w) {
                    self.eat(w);
                    a.flags.push(f);
                    continue;
                }
            }
            match spec.positional.get(a.positional.len()) {
                Some(&(what, kind)) => {
                    let v = self.value(kind, what)?;
                    a.positional.push(v);
                }
                None => {
                    let w = self.peek_ident().unwrap_or("");
                    return Err(self.unknown_arg(spec, w, arg_start, false));
                }
            }
        }
        if a.positional.len() < spec.required {
            let (what, _) = spec.positional[a.positional.len()];
            return Err(self
                .err_at(start, self.last_end, format!("{} needs {what}", spec.name))
                .with_label(format!("missing {what}")));
        }
        self.header_end = self.last_end;
        if spec.block {
            a.body = self.block()?;
        }
        Ok(a)
    }

    fn value(&mut self, kind: Kind, what: &str) -> R<Val> {
        self.skip_ws();
        Ok(match kind {
            Kind::Expr => Val::E(self.expr()?),
            Kind::Tpl => Val::T(self.template(what)?),
            Kind::Word(words) => {
                let start = self.pos;
                let w = self.peek_ident().unwrap_or("");
                match words.iter().find(|x| **x == w) {
                    Some(x) => {
                        self.eat(w);
                        Val::W(x)
                    }
                    None => {
                        let list = words
                            .iter()
                            .map(|x| format!("`{x}`"))
                            .collect::<Vec<_>>()
                            .join(", ");
                        let msg = match suggest(w, words.iter().copied()) {
                            Some(s) if !w.is_empty() => {
                                format!("unknown {what} `{w}`; did you mean `{s}`?")
                            }
                            _ => format!("expected {what}: one of {list}, found {}", self.found()),
                        };
                        return Err(self
                            .err_at(start, start + w.len(), msg)
                            .with_help(format!("{what} is one of {list}")));
                    }
                }
            }
        })
    }

    fn unknown_arg(&self, spec: &OpSpec, w: &str, at: usize, is_key: bool) -> ScenarioError {
        let mut valid: Vec<String> = spec.keys.iter().map(|(k, _)| format!("{k}=")).collect();
        valid.extend(spec.flags.iter().map(|f| f.to_string()));
        let help = if valid.is_empty() {
            format!("`{}` takes no further arguments", spec.name)
        } else {
            format!("`{}` accepts: {}", spec.name, valid.join(" "))
        };
        let names = spec
            .keys
            .iter()
            .map(|(k, _)| *k)
            .chain(spec.flags.iter().copied());
        let msg = if w.is_empty() {
            format!("unexpected argument {} for `{}`", self.found(), spec.name)
        } else if is_key && spec.flags.contains(&w) {
            format!("`{w}` is a flag of `{}`: write it without `=`", spec.name)
        } else {
            let what = if is_key { "key" } else { "argument" };
            match suggest(w, names) {
                Some(s) => format!(
                    "unknown {what} `{w}` for `{}`; did you mean `{s}`?",
                    spec.name
                ),
                None => format!("unknown {what} `{w}` for `{}`", spec.name),
            }
        };
        self.err_at(at, at + w.len().max(1), msg).with_help(help)
    }

    /// Turn read arguments into the operation's AST node, checking combinations.
    fn build(&mut self, name: &str, mut a: Args, start: usize) -> R<OpKind> {
        let whole = |p: &Self| p.span(start, p.last_end);
        let name_of = |a: &mut Args| {
            a.pos_tpl(0).unwrap_or(Template {
                parts: Vec::new(),
                span: Span::default(),
            })
        };
        Ok(match name {
            "mmap" => {
                let file = a.tpl("file");
                let shm = a.tpl("shm");
                let backings = usize::from(a.flag("anon"))
                    + usize::from(file.is_some())
                    + usize::from(shm.is_some());
                if backings != 1 {
                    let msg = if backings == 0 {
                        "mmap needs a backing: `anon`, `file=NAME` or `shm=NAME`"
                    } else {
                        "mmap takes only one of `anon`, `file=NAME` and `shm=NAME`"
                    };
                    return Err(self.err_span(whole(self), msg));
                }
                if a.flag("shared") && a.flag("private") {
                    return Err(
                        self.err_span(whole(self), "mmap cannot be both `shared` and `private`")
                    );
                }
                let backing = match (file, shm) {
                    (Some(f), _) => Backing::File(f),
                    (_, Some(s)) => Backing::Shm(s),
                    _ => Backing::Anon,
                };
                let write = match a.word("prot") {
                    Some((p, _)) => p != "read",
                    // Files are mapped read-only unless asked; anonymous and shm memory is rw.
                    None => !matches!(backing, Backing::File(_)),
                };
                // SysV shm is always shared memory; `private` is the only way to opt out.
                let shared =
                    a.flag("shared") || (matches!(backing, Backing::Shm(_)) && !a.flag("private"));
                OpKind::Mmap {
                    name: name_of(&mut a),
                    len: a.pos_expr(1).unwrap_or(Expr::Int(0, Span::default())),
                    offset: a.expr("offset"),
                    fixed: a.flag("fixed"),
                    shared,
                    write,
                    locked: a.flag("locked"),
                    populate: a.flag("populate"),
                    backing,
                }
            }
            "munmap" => OpKind::Munmap {
                name: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
            },
            "mlock" => OpKind::Mlock {
                name: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
                chunk: a.expr("chunk"),
            },
            "munlock" => OpKind::Munlock {
                name: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
            },
            "madvise" => OpKind::MadviseDontneed {
                name: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
            },
            "touch" => {
                if a.flag("read") && a.flag("write") {
                    return Err(
                        self.err_span(whole(self), "touch takes `read` or `write`, not both")
                    );
                }
                let access = if a.flag("write") {
                    Access::Write
                } else {
                    Access::Read
                };
                let theta = a.take_key("theta");
                let pattern = match a.word("pattern") {
                    Some(("zipf", _)) => Pattern::Zipf {
                        theta_milli: match theta {
                            Some((Val::E(e), _)) => e,
                            _ => Expr::Int(990, whole(self)),
                        },
                    },
                    other => {
                        if let Some((_, at)) = theta {
                            return Err(self
                                .err_at(at, at + 5, "`theta=` only applies to `pattern=zipf`")
                                .with_help("add `pattern=zipf` or remove `theta=`"));
                        }
                        match other {
                            Some(("uniform", _)) => Pattern::Uniform,
                            _ => Pattern::Seq,
                        }
                    }
                };
                OpKind::Touch {
                    name: name_of(&mut a),
                    access,
                    offset: a.expr("offset"),
                    len: a.expr("len"),
                    stride: a.expr("stride"),
                    pattern,
                    count: a.expr("count"),
                    rate: a.expr("rate"),
                }
            }
            "read" => OpKind::Read {
                file: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
                bs: a.expr("bs"),
            },
            "write" => OpKind::Write {
                file: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
                bs: a.expr("bs"),
            },
            "create" => OpKind::Create {
                file: name_of(&mut a),
                size: a.expr("size"),
                disk: a.tpl("disk"),
            },
            "unlink" => OpKind::Unlink {
                file: name_of(&mut a),
            },
            "fsync" => OpKind::Fsync {
                file: name_of(&mut a),
            },
            "fork" => OpKind::Fork { body: a.body },
            "wait" => OpKind::Wait,
            "threads" => OpKind::Threads {
                count: a.pos_expr(0).unwrap_or(Expr::Int(1, Span::default())),
                body: std::mem::take(&mut a.body),
            },
            "exit" => OpKind::Exit,
            "migrate" => OpKind::Migrate {
                cpu: a.pos_expr(0).unwrap_or(Expr::Int(0, Span::default())),
            },
            "compute" => OpKind::Compute {
                dur: a.pos_expr(0).unwrap_or(Expr::Int(0, Span::default())),
            },
            "drop_caches" => OpKind::DropCaches {
                what: a.pos_expr(0),
            },
            "mark" => OpKind::Mark {
                name: name_of(&mut a),
            },
            other => {
                return Err(
                    self.err_span(whole(self), format!("internal: no builder for `{other}`"))
                )
            }
        })
    }

    // ---- names ----------------------------------------------------------------------------

    /// A name with `{expr}` holes: literal characters `[A-Za-z0-9_./-]`.
    fn template(&mut self, what: &str) -> R<Template> {
        self.skip_ws();
        let start = self.pos;
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            match self.peek() {
                Some(c) if is_tpl_char(c) => {
                    lit.push(c);
                    self.bump();
                }
                Some('{') => {
                    let open = self.pos;
                    self.bump();
                    if !lit.is_empty() {
                        parts.push(TplPart::Lit(std::mem::take(&mut lit)));
                    }
                    self.enter()?;
                    let e = self.expr()?;
                    self.depth -= 1;
                    self.skip_ws();
                    if self.peek() != Some('}') {
                        return Err(self
                            .expected("`}` to close the `{` of a name hole")
                            .with_help(format!(
                                "the hole opened at byte {} of the name: write `name{{expr}}`",
                                open - start
                            )));
                    }
                    self.bump();
                    parts.push(TplPart::Hole(e));
                }
                _ => break,
            }
        }
        if !lit.is_empty() {
            parts.push(TplPart::Lit(lit));
        }
        if parts.is_empty() {
            return Err(self
                .expected(what)
                .with_help("names use letters, digits, `_ . / -` and `{expr}` holes"));
        }
        Ok(Template {
            parts,
            span: self.span(start, self.last_end),
        })
    }

    // ---- expressions ----------------------------------------------------------------------

    fn expr(&mut self) -> R<Expr> {
        self.binary(0)
    }

    /// Precedence climbing. Levels: 0 `||`, 1 `&&`, 2 comparisons, 3 `+ -`, 4 `* / %`.
    fn binary(&mut self, level: usize) -> R<Expr> {
        if level > 4 {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            self.skip_ws();
            let Some(op) = self.peek_binop(level) else {
                return Ok(lhs);
            };
            let rhs = self.binary(level + 1)?;
            let span = join(expr_span(&lhs), expr_span(&rhs));
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs), span);
        }
    }

    /// Consume a binary operator of the given level, if one is at the cursor.
    fn peek_binop(&mut self, level: usize) -> Option<BinOp> {
        let table: &[(&str, BinOp)] = match level {
            0 => &[("||", BinOp::Or)],
            1 => &[("&&", BinOp::And)],
            2 => &[
                ("==", BinOp::Eq),
                ("!=", BinOp::Ne),
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            // `+=`/`-=` are assignments, never a `+` followed by `=`.
            3 => &[("+", BinOp::Add), ("-", BinOp::Sub)],
            _ => &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        };
        let rest = &self.src[self.pos..];
        let &(tok, op) = table.iter().find(|(t, _)| rest.starts_with(t))?;
        if level >= 3 && rest[tok.len()..].starts_with('=') {
            return None;
        }
        self.eat(tok);
        Some(op)
    }

    fn unary(&mut self) -> R<Expr> {
        self.skip_ws();
        let start = self.pos;
        let op = match self.peek() {
            Some('-') => UnOp::Neg,
            Some('!') => UnOp::Not,
            _ => return self.primary(),
        };
        self.bump();
        self.enter()?;
        let e = self.unary()?;
        self.depth -= 1;
        let span = join(self.span(start, start + 1), expr_span(&e));
        Ok(Expr::Un(op, Box::new(e), span))
    }

    fn primary(&mut self) -> R<Expr> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            Some(c) if c.is_ascii_digit() => self.number(),
            Some('(') => {
                self.bump();
                self.enter()?;
                let e = self.expr()?;
                self.depth -= 1;
                self.skip_ws();
                if self.peek() != Some(')') {
                    return Err(self.expected("`)`"));
                }
                self.bump();
                Ok(e)
            }
            Some(c) if is_ident_start(c) => {
                let (name, span) = self.ident("a variable")?;
                if self.peek() != Some('(') {
                    self.check_defined(&name, span)?;
                    return Ok(Expr::Var(name, span));
                }
                let op = match name.as_str() {
                    "min" => BinOp::Min,
                    "max" => BinOp::Max,
                    _ => {
                        return Err(self
                            .err_span(span, format!("unknown function `{name}`"))
                            .with_help("the functions are `min(a, b)` and `max(a, b)`"))
                    }
                };
                self.bump();
                self.enter()?;
                let a = self.expr()?;
                self.expect_char(',', "`,` between the two arguments")?;
                let b = self.expr()?;
                self.expect_char(')', "`)`")?;
                self.depth -= 1;
                Ok(Expr::Bin(
                    op,
                    Box::new(a),
                    Box::new(b),
                    self.span(start, self.last_end),
                ))
            }
            _ => Err(self.expected("an expression")),
        }
    }

    /// A number with an optional size or duration unit: `4096`, `1MiB`, `1.5s`, `1_000`.
    fn number(&mut self) -> R<Expr> {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '_') {
            self.bump();
        }
        if self.peek() == Some('.') && matches!(self.peek2(), Some(c) if c.is_ascii_digit()) {
            self.bump();
            while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '_') {
                self.bump();
            }
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_alphabetic() || c == 'µ') {
            self.bump();
        }
        let text = &self.src[start..self.pos];
        let span = self.span(start, self.pos);
        let (v, _) = parse_quantity(text).map_err(|e| self.err_span(span, e))?;
        let v =
            i64::try_from(v).map_err(|_| self.err_span(span, format!("`{text}` is too large")))?;
        Ok(Expr::Int(v, span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Stmt> {
        match parse_program(text, 0, text) {
            Ok(p) => p,
            Err(e) => panic!("{e} ({:?})", e.help_text()),
        }
    }
    fn err(text: &str) -> String {
        match parse_program(text, 0, text) {
            Ok(p) => panic!("parsed: {p:?}"),
            Err(e) => e.to_string(),
        }
    }

    const SEED000: &str = "let slots = 0
for s in 0..6 {
    mmap slot{s} anon 427683520 prot=read
    mlock slot{s}
    if errno != 0 {
        munmap slot{s}
        break
    }
    slots += 1
}
for j in 0..20 {
    let i = j % slots
    munlock slot{i}
    munmap slot{i}
    mmap slot{i} file=chunk{j} 427683520 fixed prot=read
    mlock slot{i} chunk=1MiB
}
mark loaded
sleep forever
";

    #[test]
    fn seed000_parses() {
        let p = parse(SEED000);
        assert_eq!(p.len(), 5);
        let Stmt::For { body, .. } = &p[1] else {
            panic!()
        };
        let Stmt::Op(Op {
            kind:
                OpKind::Mmap {
                    backing,
                    len,
                    write,
                    ..
                },
            span,
        }) = &body[0]
        else {
            panic!()
        };
        assert_eq!(*backing, Backing::Anon);
        assert!(matches!(len, Expr::Int(427683520, _)));
        assert!(!write);
        assert_eq!((span.line, span.col), (3, 5));
        assert_eq!(
            span.len as usize,
            "mmap slot{s} anon 427683520 prot=read".len()
        );
        let Stmt::For { body, .. } = &p[2] else {
            panic!()
        };
        let Stmt::Op(Op {
            kind:
                OpKind::Mmap {
                    backing: Backing::File(f),
                    fixed,
                    ..
                },
            ..
        }) = &body[3]
        else {
            panic!()
        };
        assert!(fixed);
        assert!(
            matches!(&f.parts[..], [TplPart::Lit(l), TplPart::Hole(Expr::Var(v, _))] if l == "chunk" && v == "j")
        );
        let Stmt::Op(Op {
            kind:
                OpKind::Mlock {
                    chunk: Some(Expr::Int(c, _)),
                    ..
                },
            ..
        }) = &body[4]
        else {
            panic!()
        };
        assert_eq!(*c, 1 << 20);
        assert!(matches!(
            p[4],
            Stmt::Op(Op {
                kind: OpKind::Sleep { dur: None },
                ..
            })
        ));
    }

    #[test]
    fn expressions_precedence_and_units() {
        let p = parse("let x = 1 + 2 * 3 == 7 && !0 || min(4K, 10ms) - -1");
        let Stmt::Let {
            value: Expr::Bin(BinOp::Or, l, r, _),
            ..
        } = &p[0]
        else {
            panic!("{p:?}")
        };
        assert!(matches!(**l, Expr::Bin(BinOp::And, _, _, _)));
        let Expr::Bin(BinOp::Sub, m, n, _) = &**r else {
            panic!()
        };
        assert!(matches!(**m, Expr::Bin(BinOp::Min, _, _, _)));
        assert!(matches!(**n, Expr::Un(UnOp::Neg, _, _)));
        let p = parse("let x = 0; let y = 0; x -= (1 + 2) * 3; y += 1.5s");
        assert_eq!(p.len(), 4);
        let Stmt::Assign {
            value: Expr::Bin(BinOp::Add, _, r, _),
            ..
        } = &p[3]
        else {
            panic!()
        };
        assert!(matches!(**r, Expr::Int(1_500_000_000, _)));
    }

    #[test]
    fn templates() {
        let p = parse("let i = 0\nread data/file{i+1}.x-y\nmark a.b-c");
        let Stmt::Op(Op {
            kind: OpKind::Read { file, .. },
            ..
        }) = &p[1]
        else {
            panic!()
        };
        assert_eq!(file.parts.len(), 3);
        assert!(matches!(&file.parts[2], TplPart::Lit(s) if s == ".x-y"));
        assert_eq!(file.span.len as usize, "data/file{i+1}.x-y".len());
    }

    #[test]
    fn all_ops_parse() {
        let p = parse(
            "mmap a shm=seg 1G shared locked populate prot=rw offset=4K
             mmap f file=data 1M private
             munmap a offset=0 len=4K
             mlock a offset=0 len=1M chunk=64K
             munlock a len=1M
             madvise a dontneed offset=0 len=4K
             touch a write stride=4K pattern=zipf theta=800 count=1000 rate=100
             touch a pattern=uniform count=10
             touch a
             write out{tid} offset=0 len=1M bs=64K
             create out size=1G disk=sdb
             unlink out; fsync out
             fork { touch a; exit }
             wait
             threads 4 { migrate tid % 2 }
             sleep 10ms; compute 1.5s; drop_caches; drop_caches 1
             foreach f in queue work count=372 { read tree{f} }
             loop { break }
             repeat 3 { if 1 { } else if 0 { } else { } }",
        );
        assert_eq!(p.len(), 23);
        let Stmt::Op(Op {
            kind:
                OpKind::Mmap {
                    shared,
                    write,
                    backing: Backing::Shm(_),
                    ..
                },
            ..
        }) = &p[0]
        else {
            panic!()
        };
        assert!(*shared && *write);
        let Stmt::Op(Op {
            kind: OpKind::Mmap { shared, write, .. },
            ..
        }) = &p[1]
        else {
            panic!()
        };
        assert!(!*shared && !*write);
        let Stmt::Op(Op {
            kind:
                OpKind::Touch {
                    pattern: Pattern::Zipf { theta_milli },
                    access,
                    ..
                },
            ..
        }) = &p[6]
        else {
            panic!()
        };
        assert!(matches!(theta_milli, Expr::Int(800, _)));
        assert_eq!(*access, Access::Write);
    }

    #[test]
    fn else_on_next_line() {
        let p = parse("let x = 1\nif x {\n wait\n}\nelse {\n exit\n}\nmark m");
        assert_eq!(p.len(), 3);
        let Stmt::If { els, .. } = &p[1] else {
            panic!()
        };
        assert_eq!(els.len(), 1);
    }

    #[test]
    fn errors() {
        assert_eq!(
            err("mmpa x anon 4K"),
            "<program>:1:1: unknown operation `mmpa`; did you mean `mmap`?"
        );
        assert_eq!(
            err("wait\nmmap x anon"),
            "<program>:2:1: mmap needs a length"
        );
        assert_eq!(
            err("mmap x 4K"),
            "<program>:1:1: mmap needs a backing: `anon`, `file=NAME` or `shm=NAME`"
        );
        assert_eq!(
            err("for i in 0..3 {\n  wait\n"),
            "<program>:1:15: unterminated block: expected `}` to close this `{`, found end of program"
        );
        assert_eq!(
            err("touch a strid=4K"),
            "<program>:1:9: unknown key `strid` for `touch`; did you mean `stride`?"
        );
        assert_eq!(
            err("mmap a anon 4K prot=rx"),
            "<program>:1:21: unknown prot `rx`; did you mean `rw`?"
        );
        assert_eq!(
            err("let x = 1 +"),
            "<program>:1:12: expected an expression, found end of program"
        );
        assert_eq!(
            err("sleep 10 20"),
            "<program>:1:10: unexpected argument `20` for `sleep`"
        );
        assert_eq!(
            err("let x = 3 4"),
            "<program>:1:11: expected end of statement (a new line or `;`), found `4`"
        );
        assert_eq!(err("sleep 10q"), "<program>:1:7: unknown unit `q` in `10q`: expected a size unit (B K KiB M MiB G GiB T TiB KB MB GB TB) or a duration unit (ns us µs ms s min h)");
        assert_eq!(err("}"), "<program>:1:1: expected a statement, found `}`");
        assert_eq!(
            err("mmap a anon=1 4K"),
            "<program>:1:8: `anon` is a flag of `mmap`: write it without `=`"
        );
        assert_eq!(
            err("touch a theta=5"),
            "<program>:1:9: `theta=` only applies to `pattern=zipf`"
        );
        assert_eq!(
            err("let errno = 1"),
            "<program>:1:1: `errno` is a built-in variable and cannot be assigned"
        );
        assert_eq!(
            err("mark x{1"),
            "<program>:1:9: expected `}` to close the `{` of a name hole, found end of program"
        );
        assert_eq!(
            err("let x = foo(1)"),
            "<program>:1:9: unknown function `foo`"
        );
        assert_eq!(
            err("let slots = 1\nsleep slot"),
            "<program>:2:7: unknown variable `slot`; did you mean `slots`?"
        );
        assert_eq!(err("x += 1"), "<program>:1:1: unknown variable `x`");
        assert!(
            err(&"(".repeat(1000)).contains("nesting too deep")
                || err(&"(".repeat(1000)).contains("expected")
        );
    }

    #[test]
    fn spans_use_file_offsets() {
        let file = "[[process]]\nprogram = '''\n  wait\n  mmpa x\n'''\n";
        let (base, exact) = string_content_offset(file, file.find("'''").unwrap());
        assert!(exact);
        let text = "  wait\n  mmpa x\n";
        let e = parse_program(text, base, file).unwrap_err();
        assert_eq!(e.line_col(), Some((4, 3)));
        let p = parse_program("  wait\n", base, file).unwrap();
        let Stmt::Op(op) = &p[0] else { panic!() };
        assert_eq!(
            (op.span.line, op.span.col, op.span.offset as usize),
            (3, 3, base + 2)
        );
    }
}
