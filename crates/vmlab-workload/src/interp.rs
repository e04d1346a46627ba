//! The process-program interpreter. A program is compiled to a flat instruction list with
//! jumps, so a task can stop anywhere (waiting for disk I/O, for mmap_sem, for a timer) and
//! resume: the state is just `pc`, the variables and the progress of the current operation.

use rustc_hash::FxHashMap;

use crate::ast::{BinOp, Expr, OpKind, Span, Stmt, Template, TplPart, UnOp};
use crate::syscalls::WriteCalls;

#[derive(Clone, Debug)]
pub enum Insn {
    Set(usize, Expr),
    JumpIfZero(Expr, usize),
    Jump(usize),
    Op(Box<OpKind>, Span),
    /// Fork: the child starts at `start`; the parent continues after the body (a Jump follows).
    Fork {
        start: usize,
    },
    Threads {
        count: Expr,
        start: usize,
    },
    /// Take the next item of a shared queue into `var`, or jump to `exit` when it is empty.
    Take {
        var: usize,
        queue: Template,
        count: Expr,
        exit: usize,
    },
    /// End of a program or of a fork/thread body: the task exits.
    End,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub code: Vec<Insn>,
    pub slots: FxHashMap<String, usize>,
    pub nvars: usize,
}

pub const ERRNO: usize = 0;
pub const TID: usize = 1;
/// The machine's CPUs and NUMA nodes (what a program reads from /proc/cpuinfo or sysfs).
pub const NR_CPUS: usize = 2;
pub const NR_NODES: usize = 3;

#[derive(Debug, Clone)]
pub struct CompileError {
    pub span: Span,
    pub message: String,
}

struct Compiler {
    code: Vec<Insn>,
    slots: FxHashMap<String, usize>,
    breaks: Vec<Vec<usize>>,
}

impl Compiler {
    fn slot(&mut self, name: &str) -> usize {
        let n = self.slots.len();
        *self.slots.entry(name.to_string()).or_insert(n)
    }
    /// Check that every variable `e` reads is defined, and name each by its slot
    /// (`Expr::Slot`), so that running the program never looks a name up.
    fn resolve(&self, e: &mut Expr) -> Result<(), CompileError> {
        match e {
            Expr::Int(..) | Expr::Slot(..) => Ok(()),
            Expr::Var(n, sp) => match self.slots.get(n.as_str()) {
                Some(&s) => {
                    *e = Expr::Slot(s, *sp);
                    Ok(())
                }
                None => {
                    let cands: Vec<&str> = self.slots.keys().map(|s| s.as_str()).collect();
                    let hint =
                        crate::error::suggest(n, cands).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                    Err(CompileError { span: *sp, message: format!("undefined variable `{n}`{hint}") })
                }
            },
            Expr::Bin(_, a, b, _) => {
                self.resolve(a)?;
                self.resolve(b)
            }
            Expr::Un(_, a, _) => self.resolve(a),
        }
    }
    /// `e` resolved, as the code keeps it.
    fn resolved(&self, e: &Expr) -> Result<Expr, CompileError> {
        let mut e = e.clone();
        self.resolve(&mut e)?;
        Ok(e)
    }
    fn resolve_tpl(&self, t: &mut Template) -> Result<(), CompileError> {
        for p in &mut t.parts {
            if let TplPart::Hole(e) = p {
                self.resolve(e)?;
            }
        }
        Ok(())
    }
    fn resolve_op(&self, op: &mut OpKind) -> Result<(), CompileError> {
        let mut exprs: Vec<&mut Expr> = Vec::new();
        let mut tpls: Vec<&mut Template> = Vec::new();
        match op {
            OpKind::Mmap { name, backing, len, offset, .. } => {
                tpls.push(name);
                if let crate::ast::Backing::File(t) | crate::ast::Backing::Shm(t) = backing {
                    tpls.push(t);
                }
                exprs.extend(len.iter_mut().chain(offset.iter_mut()));
            }
            OpKind::Munmap { name, offset, len }
            | OpKind::Munlock { name, offset, len }
            | OpKind::MadviseDontneed { name, offset, len } => {
                tpls.push(name);
                exprs.extend(offset.iter_mut().chain(len.iter_mut()));
            }
            OpKind::Mlock { name, offset, len, chunk } => {
                tpls.push(name);
                exprs.extend(offset.iter_mut().chain(len.iter_mut()).chain(chunk.iter_mut()));
            }
            OpKind::Touch { name, offset, len, stride, count, rate, pattern, .. } => {
                tpls.push(name);
                exprs.extend(
                    offset
                        .iter_mut()
                        .chain(len.iter_mut())
                        .chain(stride.iter_mut())
                        .chain(count.iter_mut())
                        .chain(rate.iter_mut()),
                );
                if let crate::ast::Pattern::Zipf { theta_milli } = pattern {
                    exprs.push(theta_milli);
                }
            }
            OpKind::Read { file, offset, len, bs } | OpKind::Write { file, offset, len, bs, .. } => {
                tpls.push(file);
                exprs.extend(offset.iter_mut().chain(len.iter_mut()).chain(bs.iter_mut()));
            }
            OpKind::Create { file, size, disk } => {
                tpls.push(file);
                exprs.extend(size.iter_mut());
                tpls.extend(disk.iter_mut());
            }
            OpKind::Unlink { file } | OpKind::Fsync { file } => tpls.push(file),
            OpKind::Send { len, rate, sndbuf } => {
                exprs.push(len);
                exprs.push(rate);
                exprs.extend(sndbuf.iter_mut());
            }
            OpKind::Migrate { cpu } => exprs.push(cpu),
            OpKind::Sleep { dur } => exprs.extend(dur.iter_mut()),
            OpKind::Compute { dur } => exprs.push(dur),
            OpKind::DropCaches { what } => exprs.extend(what.iter_mut()),
            OpKind::Mark { name } => tpls.push(name),
            OpKind::WaitUntil { value, every, .. } => {
                exprs.push(value);
                exprs.extend(every.iter_mut());
            }
            OpKind::Wait | OpKind::Exit | OpKind::Swapoff => {}
            OpKind::Fork { .. } | OpKind::Threads { .. } | OpKind::ForeachQueue { .. } => {}
        }
        for e in exprs {
            self.resolve(e)?;
        }
        for t in tpls {
            self.resolve_tpl(t)?;
        }
        Ok(())
    }
    fn block(&mut self, body: &[Stmt]) -> Result<(), CompileError> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }
    fn stmt(&mut self, s: &Stmt) -> Result<(), CompileError> {
        match s {
            Stmt::Let { name, value, .. } => {
                let value = self.resolved(value)?;
                let v = self.slot(name);
                self.code.push(Insn::Set(v, value));
            }
            Stmt::Assign { name, value, span } => {
                if !self.slots.contains_key(name) {
                    return Err(CompileError {
                        span: *span,
                        message: format!("assignment to `{name}` before `let {name} = ...`"),
                    });
                }
                let value = self.resolved(value)?;
                let v = self.slot(name);
                self.code.push(Insn::Set(v, value));
            }
            Stmt::For { var, from, to, body, span } => {
                let (from, to) = (self.resolved(from)?, self.resolved(to)?);
                let v = self.slot(var);
                let end = self.slot(&format!("#end{}", span.offset));
                self.code.push(Insn::Set(v, from));
                self.code.push(Insn::Set(end, to));
                let top = self.code.len();
                let cond =
                    Expr::Bin(BinOp::Lt, Box::new(Expr::Slot(v, *span)), Box::new(Expr::Slot(end, *span)), *span);
                self.code.push(Insn::JumpIfZero(cond, usize::MAX));
                self.breaks.push(Vec::new());
                self.block(body)?;
                let inc = Expr::Bin(BinOp::Add, Box::new(Expr::Slot(v, *span)), Box::new(Expr::Int(1, *span)), *span);
                self.code.push(Insn::Set(v, inc));
                self.code.push(Insn::Jump(top));
                self.close_loop(top);
            }
            Stmt::Repeat { count, body, span } => {
                let top;
                if let Some(c) = count {
                    let c = self.resolved(c)?;
                    let v = self.slot(&format!("#rep{}", span.offset));
                    self.code.push(Insn::Set(v, c));
                    top = self.code.len();
                    let cond =
                        Expr::Bin(BinOp::Gt, Box::new(Expr::Slot(v, *span)), Box::new(Expr::Int(0, *span)), *span);
                    self.code.push(Insn::JumpIfZero(cond, usize::MAX));
                    self.breaks.push(Vec::new());
                    let dec =
                        Expr::Bin(BinOp::Sub, Box::new(Expr::Slot(v, *span)), Box::new(Expr::Int(1, *span)), *span);
                    self.code.push(Insn::Set(v, dec));
                } else {
                    // `loop` tests a condition that always holds, so that a loop whose body
                    // has nothing with a position (`loop { }`) still has one for the
                    // no-progress error.
                    top = self.code.len();
                    self.code.push(Insn::JumpIfZero(Expr::Int(1, *span), usize::MAX));
                    self.breaks.push(Vec::new());
                }
                self.block(body)?;
                self.code.push(Insn::Jump(top));
                self.close_loop(top);
            }
            Stmt::If { cond, then, els, .. } => {
                let cond = &self.resolved(cond)?;
                let j = self.code.len();
                self.code.push(Insn::JumpIfZero(cond.clone(), usize::MAX));
                self.block(then)?;
                if els.is_empty() {
                    let here = self.code.len();
                    self.code[j] = Insn::JumpIfZero(cond.clone(), here);
                } else {
                    let jend = self.code.len();
                    self.code.push(Insn::Jump(usize::MAX));
                    let here = self.code.len();
                    self.code[j] = Insn::JumpIfZero(cond.clone(), here);
                    self.block(els)?;
                    let end = self.code.len();
                    self.code[jend] = Insn::Jump(end);
                }
            }
            Stmt::Break { span } => {
                let at = self.code.len();
                match self.breaks.last_mut() {
                    Some(b) => b.push(at),
                    None => return Err(CompileError { span: *span, message: "`break` outside a loop".into() }),
                }
                self.code.push(Insn::Jump(usize::MAX));
            }
            Stmt::Op(op) => match &op.kind {
                OpKind::Fork { body } => {
                    let at = self.code.len();
                    self.code.push(Insn::Fork { start: at + 2 });
                    self.code.push(Insn::Jump(usize::MAX));
                    let saved = std::mem::take(&mut self.breaks);
                    self.block(body)?;
                    self.breaks = saved;
                    self.code.push(Insn::End);
                    let end = self.code.len();
                    self.code[at + 1] = Insn::Jump(end);
                }
                OpKind::Threads { count, body } => {
                    let count = self.resolved(count)?;
                    let at = self.code.len();
                    self.code.push(Insn::Threads { count, start: at + 2 });
                    self.code.push(Insn::Jump(usize::MAX));
                    let saved = std::mem::take(&mut self.breaks);
                    self.block(body)?;
                    self.breaks = saved;
                    self.code.push(Insn::End);
                    let end = self.code.len();
                    self.code[at + 1] = Insn::Jump(end);
                }
                OpKind::ForeachQueue { var, queue, count, body } => {
                    let count = self.resolved(count)?;
                    let mut queue = queue.clone();
                    self.resolve_tpl(&mut queue)?;
                    let v = self.slot(var);
                    let top = self.code.len();
                    self.code.push(Insn::Take { var: v, queue, count, exit: usize::MAX });
                    self.breaks.push(Vec::new());
                    self.block(body)?;
                    self.code.push(Insn::Jump(top));
                    let end = self.code.len();
                    if let Insn::Take { exit, .. } = &mut self.code[top] {
                        *exit = end;
                    }
                    for b in self.breaks.pop().unwrap_or_default() {
                        self.code[b] = Insn::Jump(end);
                    }
                }
                other => {
                    let mut kind = Box::new(other.clone());
                    self.resolve_op(&mut kind)?;
                    self.code.push(Insn::Op(kind, op.span));
                }
            },
        }
        Ok(())
    }
    /// Patch the loop head's exit jump and the breaks to the instruction after the loop.
    fn close_loop(&mut self, top: usize) {
        let end = self.code.len();
        if let Insn::JumpIfZero(c, usize::MAX) = &self.code[top] {
            let c = c.clone();
            self.code[top] = Insn::JumpIfZero(c, end);
        }
        for b in self.breaks.pop().unwrap_or_default() {
            self.code[b] = Insn::Jump(end);
        }
    }
}

pub fn compile(stmts: &[Stmt]) -> Result<Program, CompileError> {
    let mut c = Compiler { code: Vec::new(), slots: FxHashMap::default(), breaks: Vec::new() };
    c.slot("errno");
    c.slot("tid");
    c.slot("nr_cpus");
    c.slot("nr_nodes");
    c.block(stmts)?;
    c.code.push(Insn::End);
    let nvars = c.slots.len();
    Ok(Program { code: c.code, slots: c.slots, nvars })
}

pub fn eval(p: &Program, vars: &[i64], e: &Expr) -> Result<i64, (Span, String)> {
    Ok(match e {
        Expr::Int(v, _) => *v,
        Expr::Slot(s, _) => vars[*s],
        Expr::Var(n, sp) => match p.slots.get(n) {
            Some(&s) => vars[s],
            None => return Err((*sp, format!("undefined variable `{n}`"))),
        },
        Expr::Un(UnOp::Neg, a, _) => eval(p, vars, a)?.wrapping_neg(),
        Expr::Un(UnOp::Not, a, _) => (eval(p, vars, a)? == 0) as i64,
        Expr::Bin(op, a, b, sp) => {
            let (x, y) = (eval(p, vars, a)?, eval(p, vars, b)?);
            match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div | BinOp::Rem if y == 0 => return Err((*sp, "division by zero".into())),
                BinOp::Div => x.wrapping_div(y),
                BinOp::Rem => x.wrapping_rem(y),
                BinOp::Eq => (x == y) as i64,
                BinOp::Ne => (x != y) as i64,
                BinOp::Lt => (x < y) as i64,
                BinOp::Le => (x <= y) as i64,
                BinOp::Gt => (x > y) as i64,
                BinOp::Ge => (x >= y) as i64,
                BinOp::And => (x != 0 && y != 0) as i64,
                BinOp::Or => (x != 0 || y != 0) as i64,
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
            }
        }
    })
}

pub fn render(p: &Program, vars: &[i64], t: &Template) -> Result<String, (Span, String)> {
    Ok(render_name(p, vars, t)?.as_str().to_string())
}

/// `render` without an allocation for a name of up to `NAME_INLINE` bytes: the interpreter
/// renders a name for every file operation (`read pm{r}`), and a small allocation and free
/// each was a visible part of a file-heavy run's host time.
pub fn render_name(p: &Program, vars: &[i64], t: &Template) -> Result<Name, (Span, String)> {
    use std::fmt::Write;
    let mut s = Name { len: 0, bytes: [0; NAME_INLINE], spill: None };
    for part in &t.parts {
        // Writing to a `Name` cannot fail.
        let _ = match part {
            TplPart::Lit(l) => s.write_str(l),
            TplPart::Hole(e) => write!(s, "{}", eval(p, vars, e)?),
        };
    }
    Ok(s)
}

pub const NAME_INLINE: usize = 64;

/// A rendered name: on the stack, or in `spill` once it outgrows `bytes`.
pub struct Name {
    len: usize,
    bytes: [u8; NAME_INLINE],
    spill: Option<String>,
}

impl Name {
    pub fn as_str(&self) -> &str {
        match &self.spill {
            Some(s) => s,
            // Only whole `str`s are appended, so the bytes are valid UTF-8.
            None => std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default(),
        }
    }
}

impl std::fmt::Write for Name {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if let Some(h) = &mut self.spill {
            h.push_str(s);
        } else if self.len + s.len() <= NAME_INLINE {
            self.bytes[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
            self.len += s.len();
        } else {
            let mut h = String::with_capacity(2 * (self.len + s.len()));
            h.push_str(std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default());
            h.push_str(s);
            self.spill = Some(h);
        }
        Ok(())
    }
}

/// Progress of an operation that spans several quanta.
#[derive(Clone, Debug)]
pub enum OpState {
    Touch(Box<TouchState>),
    /// Fault in [vpn, end) (mlock / MAP_POPULATE), then continue with the rest of an mlock.
    Populate {
        vpn: u64,
        end: u64,
        write: bool,
        mlock_rest: Option<(u64, u64, u64)>,
    },
    /// Buffered read of pages [idx, end) in `read()` calls of `bs` pages counted from `base`
    /// (bs = 0: one call for everything); the call size is readahead's request size.
    Read {
        file: u32,
        idx: u64,
        end: u64,
        base: u64,
        bs: u64,
    },
    /// Buffered write of pages [idx, end), the bytes [calls.off, calls.stop) in `write()` calls of
    /// `calls.bs` bytes.
    Write {
        file: u32,
        idx: u64,
        end: u64,
        calls: WriteCalls,
    },
    Compute {
        left: u64,
    },
    /// Sleep done by blocking; the op completes when the task runs again.
    Slept,
    /// `wait_until`: look again at `q` every `every` ns until it compares true with `value`.
    Poll {
        q: crate::ast::MemQuantity,
        op: crate::ast::BinOp,
        value: i64,
        every: u64,
    },
    /// fsync: wait until this time.
    Fsync,
    /// A socket write with `left` bytes still to queue.
    Send {
        left: u64,
        rate: u64,
        sndbuf: u64,
    },
    /// `swapoff` under way (`Syscalls::swapoff`'s position).
    Swapoff {
        pos: u64,
    },
}

#[derive(Clone, Debug)]
pub struct TouchState {
    pub start: u64,
    pub npages: u64,
    pub stride: u64,
    pub i: u64,
    pub count: u64,
    pub write: bool,
    pub kind: u8,
    pub zipf: Option<crate::dist::Zipf>,
    pub gap_ns: u64,
    pub next_at: u64,
    /// A random touch's pages of accesses `i..drawn` (`ahead[0]` is access `i`'s), drawn ahead
    /// of their access (`TOUCH_DRAWN` at most) so the kernel side can prefetch their PTEs: a
    /// random touch over a large mapping is otherwise one cache miss per page. The draws come
    /// from the task's own generator in the same order as one at a time, and never past `count`,
    /// so the pages, and the generator's state once the touch is done, are those of drawing
    /// each page just before its access.
    pub ahead: [u64; TOUCH_DRAWN],
    pub drawn: u64,
    /// A sequential touch's next page, `(i * stride) % npages` (it draws nothing ahead).
    pub seq_pos: u64,
}

/// How many accesses ahead a random touch's PTE is prefetched, at least.
pub const TOUCH_AHEAD: usize = 8;
/// How many of its pages a random touch holds drawn: its accesses go to the kernel side in
/// runs of `TOUCH_DRAWN - TOUCH_AHEAD`, each page prefetched `TOUCH_AHEAD` accesses or more
/// before its own.
pub const TOUCH_DRAWN: usize = 40;

/// A task's interpreter state.
#[derive(Clone, Debug)]
pub struct ProgState {
    pub prog: usize,
    pub pc: usize,
    pub vars: Vec<i64>,
    pub op: Option<OpState>,
}

impl ProgState {
    pub fn new(prog: usize, nvars: usize) -> ProgState {
        ProgState { prog, pc: 0, vars: vec![0; nvars], op: None }
    }
}
