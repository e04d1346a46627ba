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

use crate::ast::*;
use crate::error::{suggest, ScenarioError};
use crate::units::parse_quantity;

/// Parse a program. `text` is the program string, found at byte `base_offset` of `file_text`
/// (the whole scenario file, used for line/column). Errors name the file `<program>`; the
/// loader renames them with `ScenarioError::in_file`.
pub fn parse_program(text: &str, base_offset: usize, file_text: &str) -> Result<Vec<Stmt>, ScenarioError> {
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

/// The operations (`mmap`, `touch`, ...): their argument table and AST builders.
mod ops;

/// Deepest nesting of blocks, parentheses and unary operators: bounded so hostile input gives
/// an error instead of a stack overflow.
const MAX_DEPTH: usize = 64;
/// Deepest expression tree. A chain `1 + 1 + ... + 1` is parsed in a loop but makes a tree as
/// deep as it is long, which compiling, evaluating and dropping walk recursively.
const MAX_EXPR_DEPTH: usize = 512;

/// The parser state: a cursor into the program text plus what is needed to turn local
/// offsets into file spans. `load.rs` uses it directly for `--set` programs (`with_shift`).
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
    /// The depth of the expression tree parsed last (0 for a number or a variable).
    expr_depth: usize,
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
    Span { len: end.saturating_sub(a.offset), ..a }
}

fn expr_span(e: &Expr) -> Span {
    match e {
        Expr::Int(_, s) | Expr::Var(_, s) | Expr::Slot(_, s) | Expr::Bin(_, _, _, s) | Expr::Un(_, _, s) => *s,
    }
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, base: usize, file: &'a str) -> Self {
        let line_starts = std::iter::once(0).chain(file.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Parser {
            src,
            pos: 0,
            last_end: 0,
            base,
            file,
            line_starts,
            depth: 0,
            expr_depth: 0,
            header_end: 0,
            shift: 0,
            defined: vec!["errno".into(), "tid".into(), "nr_cpus".into(), "nr_nodes".into()],
        }
    }

    /// Variables the program may read without defining them (the scenario's `[vars]`).
    pub(crate) fn with_defined<'n>(mut self, names: impl IntoIterator<Item = &'n str>) -> Self {
        for n in names {
            self.define(n);
        }
        self
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
        let line_idx = self.line_starts.partition_point(|&s| s <= off).saturating_sub(1);
        let line_start = self.line_starts.get(line_idx).copied().unwrap_or(0);
        let col = self.file.get(line_start..off.min(self.file.len())).map_or(1, |s| s.chars().count() + 1);
        Span {
            offset: off.saturating_add(self.shift) as u32,
            len: end.saturating_sub(start) as u32,
            line: line_idx as u32 + 1,
            col: col as u32,
        }
    }

    fn err_at(&self, start: usize, end: usize, msg: impl Into<String>) -> ScenarioError {
        let len = end.saturating_sub(start).max(if start < self.src.len() { 1 } else { 0 });
        ScenarioError::at("<program>", self.file, self.base.saturating_add(start), len, msg)
    }

    fn err_span(&self, span: Span, msg: impl Into<String>) -> ScenarioError {
        let span = Span { offset: (span.offset as usize).saturating_sub(self.shift) as u32, ..span };
        ScenarioError::at_span("<program>", self.file, span, msg)
    }

    /// "`x`", "end of line" or "end of program": what the user wrote where we expected more.
    fn found(&self) -> String {
        let rest = &self.src[self.pos..];
        match rest.chars().next() {
            None => "end of program".into(),
            Some('\n') | Some('\r') => "end of line".into(),
            Some(c) if is_ident_char(c) => {
                let w: String = rest.chars().take_while(|&c| is_ident_char(c) || c == '.').collect();
                format!("`{w}`")
            }
            Some(c) => format!("`{c}`"),
        }
    }

    fn expected(&self, what: &str) -> ScenarioError {
        let end = self.pos + self.src[self.pos..].chars().next().map_or(0, char::len_utf8);
        self.err_at(self.pos, end, format!("expected {what}, found {}", self.found()))
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
                    self.pos = self.src[self.pos..].find('\n').map_or(self.src.len(), |i| self.pos + i);
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
                (None, Some(o)) => {
                    return Err(self
                        .err_at(o, o + 1, "unterminated block: expected `}` to close this `{`, found end of program")
                        .with_label("this block is never closed")
                        .with_help("add a `}` on its own line at the end of the block"))
                }
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
                Ok(Stmt::Let { name, value, span: self.span(start, self.last_end) })
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
                Ok(Stmt::For { var, from, to, body, span })
            }
            "repeat" => {
                self.eat(word);
                let count = self.expr()?;
                let span = self.span(start, self.last_end);
                let body = self.block()?;
                Ok(Stmt::Repeat { count: Some(count), body, span })
            }
            "loop" => {
                self.eat(word);
                let span = self.span(start, self.last_end);
                let body = self.block()?;
                Ok(Stmt::Repeat { count: None, body, span })
            }
            "if" => self.if_stmt(),
            "break" => {
                self.eat(word);
                Ok(Stmt::Break { span: self.span(start, self.last_end) })
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
                                Expr::Bin(op, Box::new(Expr::Var(word.to_string(), name_span)), Box::new(rhs), s)
                            }
                        };
                        Ok(Stmt::Assign { name: word.to_string(), value, span })
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
        Err(self.err_span(span, msg).with_help(format!("define it first with `let {name} = ...`")))
    }

    /// `errno`, `tid`, `nr_cpus` and `nr_nodes` are set by the machine; assigning them is surely
    /// a mistake.
    fn check_assignable(&self, name: &str, start: usize) -> R<()> {
        if matches!(name, "errno" | "tid" | "nr_cpus" | "nr_nodes") {
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
        Ok(Stmt::If { cond, then, els, span })
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
                        return Err(self.expected("`}` to close the `{` of a name hole").with_help(format!(
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
            return Err(self.expected(what).with_help("names use letters, digits, `_ . / -` and `{expr}` holes"));
        }
        Ok(Template { parts, span: self.span(start, self.last_end) })
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
        let mut depth = self.expr_depth;
        loop {
            self.skip_ws();
            let at = self.pos;
            let Some(op) = self.peek_binop(level) else {
                self.expr_depth = depth;
                return Ok(lhs);
            };
            let rhs = self.binary(level + 1)?;
            depth = self.deeper(depth.max(self.expr_depth), at)?;
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

    /// One level above a subtree `depth` deep, for an operator at byte `at`.
    fn deeper(&self, depth: usize, at: usize) -> R<usize> {
        if depth + 1 > MAX_EXPR_DEPTH {
            return Err(self
                .err_at(at, at + 1, format!("expression too deep (more than {MAX_EXPR_DEPTH} operators)"))
                .with_help("split it into several `let`s"));
        }
        Ok(depth + 1)
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
        self.expr_depth = self.deeper(self.expr_depth, start)?;
        let span = join(self.span(start, start + 1), expr_span(&e));
        Ok(Expr::Un(op, Box::new(e), span))
    }

    fn primary(&mut self) -> R<Expr> {
        self.skip_ws();
        let start = self.pos;
        self.expr_depth = 0;
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
                let da = self.expr_depth;
                self.expect_char(',', "`,` between the two arguments")?;
                let b = self.expr()?;
                self.expr_depth = self.deeper(da.max(self.expr_depth), start)?;
                self.expect_char(')', "`)`")?;
                self.depth -= 1;
                Ok(Expr::Bin(op, Box::new(a), Box::new(b), self.span(start, self.last_end)))
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
        let v = i64::try_from(v).map_err(|_| self.err_span(span, format!("`{text}` is too large")))?;
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
        let Stmt::For { body, .. } = &p[1] else { panic!() };
        let Stmt::Op(Op { kind: OpKind::Mmap { backing, len, write, .. }, span }) = &body[0] else { panic!() };
        assert_eq!(*backing, Backing::Anon);
        assert!(matches!(len, Some(Expr::Int(427683520, _))));
        assert!(!write);
        assert_eq!((span.line, span.col), (3, 5));
        assert_eq!(span.len as usize, "mmap slot{s} anon 427683520 prot=read".len());
        let Stmt::For { body, .. } = &p[2] else { panic!() };
        let Stmt::Op(Op { kind: OpKind::Mmap { backing: Backing::File(f), fixed, .. }, .. }) = &body[3] else {
            panic!()
        };
        assert!(fixed);
        assert!(matches!(&f.parts[..], [TplPart::Lit(l), TplPart::Hole(Expr::Var(v, _))] if l == "chunk" && v == "j"));
        let Stmt::Op(Op { kind: OpKind::Mlock { chunk: Some(Expr::Int(c, _)), .. }, .. }) = &body[4] else { panic!() };
        assert_eq!(*c, 1 << 20);
        assert!(matches!(p[4], Stmt::Op(Op { kind: OpKind::Sleep { dur: None }, .. })));
    }

    #[test]
    fn expressions_precedence_and_units() {
        let p = parse("let x = 1 + 2 * 3 == 7 && !0 || min(4K, 10ms) - -1");
        let Stmt::Let { value: Expr::Bin(BinOp::Or, l, r, _), .. } = &p[0] else { panic!("{p:?}") };
        assert!(matches!(**l, Expr::Bin(BinOp::And, _, _, _)));
        let Expr::Bin(BinOp::Sub, m, n, _) = &**r else { panic!() };
        assert!(matches!(**m, Expr::Bin(BinOp::Min, _, _, _)));
        assert!(matches!(**n, Expr::Un(UnOp::Neg, _, _)));
        let p = parse("let x = 0; let y = 0; x -= (1 + 2) * 3; y += 1.5s");
        assert_eq!(p.len(), 4);
        let Stmt::Assign { value: Expr::Bin(BinOp::Add, _, r, _), .. } = &p[3] else { panic!() };
        assert!(matches!(**r, Expr::Int(1_500_000_000, _)));
    }

    #[test]
    fn templates() {
        let p = parse("let i = 0\nread data/file{i+1}.x-y\nmark a.b-c");
        let Stmt::Op(Op { kind: OpKind::Read { file, .. }, .. }) = &p[1] else { panic!() };
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
        let Stmt::Op(Op { kind: OpKind::Mmap { shared, write, backing: Backing::Shm(_), .. }, .. }) = &p[0] else {
            panic!()
        };
        assert!(*shared && *write);
        let Stmt::Op(Op { kind: OpKind::Mmap { shared, write, .. }, .. }) = &p[1] else { panic!() };
        assert!(!*shared && !*write);
        let Stmt::Op(Op { kind: OpKind::Touch { pattern: Pattern::Zipf { theta_milli }, access, .. }, .. }) = &p[6]
        else {
            panic!()
        };
        assert!(matches!(theta_milli, Expr::Int(800, _)));
        assert_eq!(*access, Access::Write);
    }

    #[test]
    fn send_parses_and_needs_a_rate() {
        let p = parse("send 48KiB rate=2KiB sndbuf=256KiB\nsend 1M rate=100");
        let Stmt::Op(Op { kind: OpKind::Send { len, rate, sndbuf }, .. }) = &p[0] else { panic!("{p:?}") };
        assert!(matches!(len, Expr::Int(49152, _)));
        assert!(matches!(rate, Expr::Int(2048, _)));
        assert!(matches!(sndbuf, Some(Expr::Int(262144, _))));
        assert!(matches!(&p[1], Stmt::Op(Op { kind: OpKind::Send { sndbuf: None, .. }, .. })));
        assert_eq!(
            err("wait\nsend 4K"),
            "<program>:2:1: `send` needs `rate=`: the bytes a second the client acknowledges"
        );
        assert_eq!(err("send 4K rat=1"), "<program>:1:9: unknown key `rat` for `send`; did you mean `rate`?");
    }

    #[test]
    fn else_on_next_line() {
        let p = parse("let x = 1\nif x {\n wait\n}\nelse {\n exit\n}\nmark m");
        assert_eq!(p.len(), 3);
        let Stmt::If { els, .. } = &p[1] else { panic!() };
        assert_eq!(els.len(), 1);
    }

    #[test]
    fn errors() {
        assert_eq!(err("mmpa x anon 4K"), "<program>:1:1: unknown operation `mmpa`; did you mean `mmap`?");
        assert_eq!(err("wait\nmmap x anon"), "<program>:2:1: mmap needs a length");
        assert_eq!(err("mmap x 4K"), "<program>:1:1: mmap needs a backing: `anon`, `file=NAME` or `shm=NAME`");
        assert_eq!(
            err("for i in 0..3 {\n  wait\n"),
            "<program>:1:15: unterminated block: expected `}` to close this `{`, found end of program"
        );
        assert_eq!(err("touch a strid=4K"), "<program>:1:9: unknown key `strid` for `touch`; did you mean `stride`?");
        assert_eq!(err("mmap a anon 4K prot=rx"), "<program>:1:21: unknown prot `rx`; did you mean `rw`?");
        assert_eq!(err("let x = 1 +"), "<program>:1:12: expected an expression, found end of program");
        assert_eq!(err("sleep 10 20"), "<program>:1:10: unexpected argument `20` for `sleep`");
        assert_eq!(err("let x = 3 4"), "<program>:1:11: expected end of statement (a new line or `;`), found `4`");
        assert_eq!(err("sleep 10q"), "<program>:1:7: unknown unit `q` in `10q`: expected a size unit (B K KiB M MiB G GiB T TiB KB MB GB TB) or a duration unit (ns us µs ms s min h)");
        assert_eq!(err("}"), "<program>:1:1: expected a statement, found `}`");
        assert_eq!(err("mmap a anon=1 4K"), "<program>:1:8: `anon` is a flag of `mmap`: write it without `=`");
        assert_eq!(err("touch a theta=5"), "<program>:1:9: `theta=` only applies to `pattern=zipf`");
        assert_eq!(err("let errno = 1"), "<program>:1:1: `errno` is a built-in variable and cannot be assigned");
        assert_eq!(
            err("mark x{1"),
            "<program>:1:9: expected `}` to close the `{` of a name hole, found end of program"
        );
        assert_eq!(err("let x = foo(1)"), "<program>:1:9: unknown function `foo`");
        assert_eq!(err("let slots = 1\nsleep slot"), "<program>:2:7: unknown variable `slot`; did you mean `slots`?");
        assert_eq!(err("x += 1"), "<program>:1:1: unknown variable `x`");
        assert!(err(&"(".repeat(1000)).contains("nesting too deep") || err(&"(".repeat(1000)).contains("expected"));
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
        assert_eq!((op.span.line, op.span.col, op.span.offset as usize), (3, 3, base + 2));
    }

    #[test]
    fn wait_until_reads_quantity_comparison_value_and_period() {
        let p = parse("wait_until swap_used >= 4GiB\nwait_until free < 1GiB + 512MiB every=10ms\nwait_until cached!=0");
        let ops: Vec<_> = p
            .iter()
            .map(|s| match s {
                Stmt::Op(Op { kind: OpKind::WaitUntil { quantity, op, value, every }, .. }) => {
                    (*quantity, *op, value.clone(), every.clone())
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!((ops[0].0, ops[0].1), (MemQuantity::SwapUsed, BinOp::Ge));
        assert!(matches!(ops[0].2, Expr::Int(v, _) if v == 4 << 30));
        assert!(ops[0].3.is_none());
        assert_eq!((ops[1].0, ops[1].1), (MemQuantity::Free, BinOp::Lt));
        assert!(matches!(ops[1].2, Expr::Bin(BinOp::Add, ..)));
        assert!(matches!(ops[1].3, Some(Expr::Int(10_000_000, _))));
        assert_eq!((ops[2].0, ops[2].1), (MemQuantity::Cached, BinOp::Ne));
    }

    #[test]
    fn wait_until_errors_point_at_the_bad_part() {
        assert_eq!(
            err("wait_until swap_usd >= 4GiB"),
            "<program>:1:12: unknown quantity `swap_usd`; did you mean `swap_used`?"
        );
        assert_eq!(err("wait_until >= 4GiB"), "<program>:1:12: wait_until needs a quantity, found `>`");
        assert_eq!(
            err("wait_until free 4GiB"),
            "<program>:1:17: wait_until needs a comparison after `free`, found `4GiB`"
        );
        assert_eq!(err("wait_until free => 4GiB"), "<program>:1:17: unknown comparison `=>`");
        assert_eq!(err("wait_until free >> 4GiB"), "<program>:1:17: unknown comparison `>>`");
        assert_eq!(
            err("wait_until swap_used >= 4s"),
            "<program>:1:25: `4s`: wait_until compares bytes, so this needs a size, not a duration"
        );
        assert!(err("wait_until swap_used >= 4GQ").starts_with("<program>:1:25: unknown unit `GQ`"));
        assert_eq!(err("wait_until swap_used >="), "<program>:1:1: wait_until needs a value (bytes)");
        assert!(err("wait_until free > 1GiB evry=1s").contains("unknown key `evry` for `wait_until`"));
        // The period is a duration and may say so.
        parse("wait_until free > 1GiB every=250ms");
    }
}
