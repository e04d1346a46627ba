//! The abstract syntax of a process program (the `program = '''...'''` text of a `[[process]]`).
//! The parser (`program.rs`) produces it; the interpreter (`interp.rs`) runs it inside a task.
//! Spans are byte offsets into the *scenario file*, so every runtime error can point at the file too.

use serde::Serialize;

/// A byte range in the scenario file, with the 1-based line and column of its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Span {
    pub offset: u32,
    pub len: u32,
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum UnOp {
    Neg,
    Not,
}

/// Integer expressions. Sizes (`1MiB`) and durations (`10ms`) are folded into integers by the
/// parser: sizes in bytes, durations in nanoseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Expr {
    Int(i64, Span),
    Var(String, Span),
    /// A variable named by its slot in the task's variables: what the compiler
    /// (`interp::compile`) turns each `Var` into; the parser never makes one.
    Slot(usize, Span),
    Bin(BinOp, Box<Expr>, Box<Expr>, Span),
    Un(UnOp, Box<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Int(_, s) | Expr::Var(_, s) | Expr::Slot(_, s) | Expr::Bin(_, _, _, s) | Expr::Un(_, _, s) => *s,
        }
    }
}

/// A name with `{expr}` holes: `chunk{j}`, `slot{j % slots}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Template {
    pub parts: Vec<TplPart>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum TplPart {
    Lit(String),
    Hole(Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Access {
    Read,
    Write,
}

/// What backs a mapping.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Backing {
    Anon,
    /// A regular file (`file=NAME`), mapped from byte offset `offset`.
    File(Template),
    /// A SysV shared-memory segment (`shm=NAME`): created on first attach, shmfs-backed.
    Shm(Template),
}

/// Access pattern of a `touch`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Pattern {
    /// Every `stride` bytes from `offset` to `offset+len`, once (or `count` accesses, wrapping).
    Seq,
    /// `count` uniformly random pages of the range.
    Uniform,
    /// `count` accesses over the range's pages, Zipf-distributed with exponent `theta`
    /// (theta given in thousandths so it stays an integer expression: `theta=990`).
    Zipf { theta_milli: Expr },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum OpKind {
    /// `mmap NAME anon|file=F|shm=S LEN [offset=N] [fixed] [shared] [prot=read|write|rw] [locked] [populate]`
    /// LEN may be left out for a file: the mapping then covers the file from `offset` to its end.
    Mmap {
        name: Template,
        backing: Backing,
        len: Option<Expr>,
        offset: Option<Expr>,
        fixed: bool,
        shared: bool,
        write: bool,
        locked: bool,
        populate: bool,
    },
    /// `munmap NAME [offset=N] [len=N]`
    Munmap { name: Template, offset: Option<Expr>, len: Option<Expr> },
    /// `mlock NAME [offset=N] [len=N] [chunk=N]`
    Mlock { name: Template, offset: Option<Expr>, len: Option<Expr>, chunk: Option<Expr> },
    /// `munlock NAME [offset=N] [len=N]`
    Munlock { name: Template, offset: Option<Expr>, len: Option<Expr> },
    /// `madvise NAME dontneed [offset=N] [len=N]`
    MadviseDontneed { name: Template, offset: Option<Expr>, len: Option<Expr> },
    /// `touch NAME [read|write] [offset=N] [len=N] [stride=N] [pattern=seq|uniform|zipf] [theta=N] [count=N] [rate=N]`
    /// `rate` is accesses per simulated second (0 = as fast as the CPU allows).
    Touch {
        name: Template,
        access: Access,
        offset: Option<Expr>,
        len: Option<Expr>,
        stride: Option<Expr>,
        pattern: Pattern,
        count: Option<Expr>,
        rate: Option<Expr>,
    },
    /// `read FILE [offset=N] [len=N] [bs=N]` — buffered read(2) through the page cache.
    Read { file: Template, offset: Option<Expr>, len: Option<Expr>, bs: Option<Expr> },
    /// `write FILE [offset=N] [len=N] [bs=N] [append]` — buffered write(2); extends the file if
    /// needed. `append` (O_APPEND) writes at the end of the file, ignoring `offset`.
    Write { file: Template, offset: Option<Expr>, len: Option<Expr>, bs: Option<Expr>, append: bool },
    /// `create FILE [size=N] [disk=NAME]` — a new (empty or sized) file.
    Create { file: Template, size: Option<Expr>, disk: Option<Template> },
    /// `unlink FILE`
    Unlink { file: Template },
    /// `fsync FILE`
    Fsync { file: Template },
    /// `send LEN rate=N [sndbuf=N]` — write(2) of LEN bytes to the task's TCP socket, whose
    /// client acknowledges `rate` bytes a second; the socket queues at most `sndbuf` bytes
    /// (default 16 KiB, `tcp_wmem[1]`), and the write waits for room beyond that.
    Send { len: Expr, rate: Expr, sndbuf: Option<Expr> },
    /// `fork { child program }` — the child gets a copy of the address space (COW).
    Fork { body: Vec<Stmt> },
    /// `wait` — wait for all children to exit.
    Wait,
    /// `threads N { body }` — N threads sharing this mm run `body`; the caller waits for them.
    /// Inside, the variable `tid` is 0..N-1.
    Threads { count: Expr, body: Vec<Stmt> },
    /// `exit`
    Exit,
    /// `migrate CPU` — sched_setaffinity to one CPU.
    Migrate { cpu: Expr },
    /// `sleep DURATION` or `sleep forever`
    Sleep { dur: Option<Expr> },
    /// `compute DURATION` — user-mode CPU work.
    Compute { dur: Expr },
    /// `drop_caches [N]` — echo N > /proc/sys/vm/drop_caches (default 3).
    DropCaches { what: Option<Expr> },
    /// `swapoff` — `swapoff -a`: every swapped page read back, then no swap. Sets `errno`
    /// (EINVAL: no swap area; ENOMEM: a page could not be allocated, the area stays on).
    Swapoff,
    /// `foreach VAR in queue QUEUE count=N { body }` — a work queue holding 0..N, shared by all
    /// threads of the process (keyed by QUEUE's name): each pass takes the next item into VAR,
    /// until the queue is empty. Typically `read tree{f}` inside, over a `tree{i}` file group.
    ForeachQueue { var: String, queue: Template, count: Expr, body: Vec<Stmt> },
    /// `mark NAME` — record the current simulated time as metric `NAME` (seconds).
    Mark { name: Template },
    /// `wait_until QUANTITY OP VALUE [every=DURATION]` — sleep until a machine-wide quantity
    /// (bytes) compares true against VALUE, looked at every `every` (default `POLL_DEFAULT_NS`).
    WaitUntil { quantity: MemQuantity, op: BinOp, value: Expr, every: Option<Expr> },
}

/// A machine-wide quantity a program can wait on, in bytes, as `/proc/meminfo` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MemQuantity {
    /// SwapTotal − SwapFree: slots in use, the swap cache's included.
    SwapUsed,
    /// MemFree.
    Free,
    /// Cached: page-cache pages (file and shm), the swap cache not counted.
    Cached,
}

impl MemQuantity {
    /// The names a program writes, in the order the docs list them.
    pub const NAMES: &'static [&'static str] = &["swap_used", "free", "cached"];
    pub fn from_name(s: &str) -> Option<MemQuantity> {
        Some(match s {
            "swap_used" => MemQuantity::SwapUsed,
            "free" => MemQuantity::Free,
            "cached" => MemQuantity::Cached,
            _ => return None,
        })
    }
}

/// How often a `wait_until` looks when its program does not say: often enough for a
/// `vmstat 1` timeline, rare enough to cost nothing next to the work it waits on.
pub const POLL_DEFAULT_NS: i64 = 100_000_000;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Op {
    pub kind: OpKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Stmt {
    Let {
        name: String,
        value: Expr,
        span: Span,
    },
    Assign {
        name: String,
        value: Expr,
        span: Span,
    },
    /// `for VAR in A..B { }` (B exclusive)
    For {
        var: String,
        from: Expr,
        to: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    /// `repeat N { }` or `loop { }` (count None = forever)
    Repeat {
        count: Option<Expr>,
        body: Vec<Stmt>,
        span: Span,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
        span: Span,
    },
    Break {
        span: Span,
    },
    Op(Op),
}
