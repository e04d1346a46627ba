//! Operations: the table of what each operation accepts (`OPS`), the generic argument reader
//! (positional, `key=value`, flags, in any order), and the step turning read arguments into
//! an `OpKind`, where combinations are checked (one backing per `mmap`, `theta` only with zipf).
//! Adding an operation = one `OPS` entry + one arm in `build` (+ the `OpKind` variant).

use super::*;
use crate::units::QuantityKind;

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
const IO_KEYS: &[(&str, Kind)] = &[("offset", Kind::Expr), ("len", Kind::Expr), ("bs", Kind::Expr)];
const REGION: &[(&str, Kind)] = &[("a region name", Kind::Tpl)];
const FILE: &[(&str, Kind)] = &[("a file name", Kind::Tpl)];

const fn spec(
    name: &'static str,
    positional: &'static [(&'static str, Kind)],
    required: usize,
    keys: &'static [(&'static str, Kind)],
    flags: &'static [&'static str],
) -> OpSpec {
    OpSpec { name, positional, required, keys, flags, block: false }
}

const OPS: &[OpSpec] = &[
    spec(
        "mmap",
        &[("a name", Kind::Tpl), ("a length", Kind::Expr)],
        1,
        &[
            ("file", Kind::Tpl),
            ("shm", Kind::Tpl),
            ("offset", Kind::Expr),
            ("prot", Kind::Word(&["read", "write", "rw"])),
        ],
        &["anon", "fixed", "shared", "private", "locked", "populate"],
    ),
    spec("munmap", REGION, 1, RANGE_KEYS, &[]),
    spec("mlock", REGION, 1, &[("offset", Kind::Expr), ("len", Kind::Expr), ("chunk", Kind::Expr)], &[]),
    spec("munlock", REGION, 1, RANGE_KEYS, &[]),
    spec("madvise", &[("a region name", Kind::Tpl), ("an advice", Kind::Word(&["dontneed"]))], 2, RANGE_KEYS, &[]),
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
    spec("write", FILE, 1, IO_KEYS, &["append"]),
    spec("create", FILE, 1, &[("size", Kind::Expr), ("disk", Kind::Tpl)], &[]),
    spec("unlink", FILE, 1, &[], &[]),
    spec("fsync", FILE, 1, &[], &[]),
    spec("send", &[("a length", Kind::Expr)], 1, &[("rate", Kind::Expr), ("sndbuf", Kind::Expr)], &[]),
    OpSpec { name: "fork", positional: &[], required: 0, keys: &[], flags: &[], block: true },
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
    spec("sleep", &[("a duration (or `forever`)", Kind::Expr)], 1, &[], &[]),
    spec("compute", &[("a duration", Kind::Expr)], 1, &[], &[]),
    spec("drop_caches", &[("a value", Kind::Expr)], 0, &[], &[]),
    spec("swapoff", &[], 0, &[], &[]),
    // `foreach VAR in queue NAME` is read by hand; this spec covers what follows NAME.
    OpSpec { name: "foreach", positional: &[], required: 0, keys: &[("count", Kind::Expr)], flags: &[], block: true },
    spec("mark", &[("a metric name", Kind::Tpl)], 1, &[], &[]),
    // `wait_until QUANTITY OP` is read by hand; this spec covers the value and what follows.
    spec("wait_until", &[("a value (bytes)", Kind::Expr)], 1, &[("every", Kind::Expr)], &[]),
];

/// The comparisons `wait_until` takes, longest first so `>=` is not read as `>`.
const CMP_OPS: &[(&str, BinOp)] =
    &[(">=", BinOp::Ge), ("<=", BinOp::Le), ("==", BinOp::Eq), ("!=", BinOp::Ne), (">", BinOp::Gt), ("<", BinOp::Lt)];

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
        match self.positional.get_mut(i).map(|v| std::mem::replace(v, Val::W(""))) {
            Some(Val::E(e)) => Some(e),
            _ => None,
        }
    }
    fn pos_tpl(&mut self, i: usize) -> Option<Template> {
        match self.positional.get_mut(i).map(|v| std::mem::replace(v, Val::W(""))) {
            Some(Val::T(t)) => Some(t),
            _ => None,
        }
    }
}

impl Parser<'_> {
    pub(super) fn op(&mut self) -> R<Stmt> {
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
                OpKind::ForeachQueue { var, queue, count, body: a.body }
            }
            "wait_until" => self.wait_until(spec, start)?,
            _ => {
                let a = self.args(spec, start)?;
                self.build(spec.name, a, start)?
            }
        };
        // A block's span stops at its `{`: runtime errors point at the header, not the body.
        let end = if spec.block { self.header_end } else { self.last_end };
        Ok(Stmt::Op(Op { kind, span: self.span(start, end) }))
    }

    /// `wait_until QUANTITY OP VALUE [every=DURATION]`.
    fn wait_until(&mut self, spec: &OpSpec, start: usize) -> R<OpKind> {
        self.skip_ws();
        let qstart = self.pos;
        let names = MemQuantity::NAMES;
        let list = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        let w = self.peek_ident().unwrap_or("");
        let Some(quantity) = MemQuantity::from_name(w) else {
            let msg = match suggest(w, names.iter().copied()) {
                Some(s) if !w.is_empty() => format!("unknown quantity `{w}`; did you mean `{s}`?"),
                _ if w.is_empty() => format!("wait_until needs a quantity, found {}", self.found()),
                _ => format!("unknown quantity `{w}`"),
            };
            return Err(self.err_at(qstart, qstart + w.len(), msg).with_help(format!("quantities are: {list}")));
        };
        self.eat(w);
        self.skip_ws();
        let ostart = self.pos;
        let run =
            self.src[ostart..].find(|c: char| !matches!(c, '<' | '>' | '=' | '!')).unwrap_or(self.src.len() - ostart);
        let sym = &self.src[ostart..ostart + run];
        let Some(&(_, op)) = CMP_OPS.iter().find(|(s, _)| *s == sym) else {
            let msg = if sym.is_empty() {
                format!("wait_until needs a comparison after `{w}`, found {}", self.found())
            } else {
                format!("unknown comparison `{sym}`")
            };
            let end = ostart + run.max(1);
            return Err(self.err_at(ostart, end, msg).with_help("one of >= > <= < == !="));
        };
        self.eat(sym);
        let mut a = self.args(spec, start)?;
        let value = a.pos_expr(0).unwrap_or(Expr::Int(0, Span::default()));
        let vs = value.span();
        let local = |off: u32| (off as usize).saturating_sub(self.base + self.shift).min(self.src.len());
        self.no_literal_of(
            local(vs.offset),
            local(vs.offset + vs.len),
            QuantityKind::Duration,
            "a size, not a duration",
        )?;
        let every = a.expr("every");
        Ok(OpKind::WaitUntil { quantity, op, value, every })
    }

    /// Refuse number literals of `kind` between `from` and `to` (what `wait_until` compares
    /// is bytes: `4s` there is a slip the integer value would hide).
    fn no_literal_of(&self, from: usize, to: usize, kind: QuantityKind, what: &str) -> R<()> {
        let text = &self.src[from..to];
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            let c = rest.chars().next().unwrap_or(' ');
            let prev_ident = i > 0 && text[..i].chars().next_back().is_some_and(is_ident_char);
            if c.is_ascii_digit() && !prev_ident {
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == 'µ'))
                    .unwrap_or(rest.len());
                let lit = &rest[..len];
                if matches!(crate::units::parse_quantity(lit), Ok((_, k)) if k == kind) {
                    return Err(self
                        .err_at(
                            from + i,
                            from + i + len,
                            format!("`{lit}`: wait_until compares bytes, so this needs {what}"),
                        )
                        .with_help("for example `wait_until swap_used >= 4GiB`"));
                }
                i += len;
            } else {
                i += c.len_utf8();
            }
        }
        Ok(())
    }

    /// Read an operation's arguments (and its block, if it has one).
    fn args(&mut self, spec: &OpSpec, start: usize) -> R<Args> {
        let mut a = Args::default();
        // The first positional, when a name, is read before anything else so a region can be
        // called like a flag (`mmap fixed anon 4096` maps a region named `fixed`).
        if let Some((_, Kind::Tpl)) = spec.positional.first() {
            if !self.at_stmt_end() && self.peek() != Some('{') {
                a.positional.push(Val::T(self.template(spec.positional[0].0)?));
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
                        return Err(self.err_at(arg_start, arg_start + w.len(), format!("`{key}` given twice")));
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
                        let list = words.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ");
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
        let names = spec.keys.iter().map(|(k, _)| *k).chain(spec.flags.iter().copied());
        let msg = if w.is_empty() {
            format!("unexpected argument {} for `{}`", self.found(), spec.name)
        } else if is_key && spec.flags.contains(&w) {
            format!("`{w}` is a flag of `{}`: write it without `=`", spec.name)
        } else {
            let what = if is_key { "key" } else { "argument" };
            match suggest(w, names) {
                Some(s) => format!("unknown {what} `{w}` for `{}`; did you mean `{s}`?", spec.name),
                None => format!("unknown {what} `{w}` for `{}`", spec.name),
            }
        };
        self.err_at(at, at + w.len().max(1), msg).with_help(help)
    }

    /// Turn read arguments into the operation's AST node, checking combinations.
    fn build(&mut self, name: &str, mut a: Args, start: usize) -> R<OpKind> {
        let whole = |p: &Self| p.span(start, p.last_end);
        let name_of = |a: &mut Args| a.pos_tpl(0).unwrap_or(Template { parts: Vec::new(), span: Span::default() });
        Ok(match name {
            "mmap" => {
                let file = a.tpl("file");
                let shm = a.tpl("shm");
                let backings = usize::from(a.flag("anon")) + usize::from(file.is_some()) + usize::from(shm.is_some());
                if backings != 1 {
                    let msg = if backings == 0 {
                        "mmap needs a backing: `anon`, `file=NAME` or `shm=NAME`"
                    } else {
                        "mmap takes only one of `anon`, `file=NAME` and `shm=NAME`"
                    };
                    return Err(self.err_span(whole(self), msg));
                }
                if a.flag("shared") && a.flag("private") {
                    return Err(self.err_span(whole(self), "mmap cannot be both `shared` and `private`"));
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
                let shared = a.flag("shared") || (matches!(backing, Backing::Shm(_)) && !a.flag("private"));
                // Only a file has a size of its own to map by default.
                let len = a.pos_expr(1);
                if len.is_none() && !matches!(backing, Backing::File(_)) {
                    return Err(self
                        .err_at(start, self.last_end, "mmap needs a length")
                        .with_label("missing a length"));
                }
                OpKind::Mmap {
                    name: name_of(&mut a),
                    len,
                    offset: a.expr("offset"),
                    fixed: a.flag("fixed"),
                    shared,
                    write,
                    locked: a.flag("locked"),
                    populate: a.flag("populate"),
                    backing,
                }
            }
            "munmap" => OpKind::Munmap { name: name_of(&mut a), offset: a.expr("offset"), len: a.expr("len") },
            "mlock" => OpKind::Mlock {
                name: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
                chunk: a.expr("chunk"),
            },
            "munlock" => OpKind::Munlock { name: name_of(&mut a), offset: a.expr("offset"), len: a.expr("len") },
            "madvise" => {
                OpKind::MadviseDontneed { name: name_of(&mut a), offset: a.expr("offset"), len: a.expr("len") }
            }
            "touch" => {
                if a.flag("read") && a.flag("write") {
                    return Err(self.err_span(whole(self), "touch takes `read` or `write`, not both"));
                }
                let access = if a.flag("write") { Access::Write } else { Access::Read };
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
            "read" => {
                OpKind::Read { file: name_of(&mut a), offset: a.expr("offset"), len: a.expr("len"), bs: a.expr("bs") }
            }
            "write" => OpKind::Write {
                file: name_of(&mut a),
                offset: a.expr("offset"),
                len: a.expr("len"),
                bs: a.expr("bs"),
                append: a.flag("append"),
            },
            "create" => OpKind::Create { file: name_of(&mut a), size: a.expr("size"), disk: a.tpl("disk") },
            "unlink" => OpKind::Unlink { file: name_of(&mut a) },
            "fsync" => OpKind::Fsync { file: name_of(&mut a) },
            "send" => {
                let Some(rate) = a.expr("rate") else {
                    return Err(self
                        .err_span(whole(self), "`send` needs `rate=`: the bytes a second the client acknowledges")
                        .with_help("for example `send 48KiB rate=8KiB`"));
                };
                OpKind::Send {
                    len: a.pos_expr(0).unwrap_or(Expr::Int(0, Span::default())),
                    rate,
                    sndbuf: a.expr("sndbuf"),
                }
            }
            "fork" => OpKind::Fork { body: a.body },
            "wait" => OpKind::Wait,
            "threads" => OpKind::Threads {
                count: a.pos_expr(0).unwrap_or(Expr::Int(1, Span::default())),
                body: std::mem::take(&mut a.body),
            },
            "exit" => OpKind::Exit,
            "migrate" => OpKind::Migrate { cpu: a.pos_expr(0).unwrap_or(Expr::Int(0, Span::default())) },
            "compute" => OpKind::Compute { dur: a.pos_expr(0).unwrap_or(Expr::Int(0, Span::default())) },
            "drop_caches" => OpKind::DropCaches { what: a.pos_expr(0) },
            "swapoff" => OpKind::Swapoff,
            "mark" => OpKind::Mark { name: name_of(&mut a) },
            other => return Err(self.err_span(whole(self), format!("internal: no builder for `{other}`"))),
        })
    }
}
