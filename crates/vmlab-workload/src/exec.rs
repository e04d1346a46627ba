//! The interpreter: runs a task's compiled program for one quantum, making its operations
//! system calls through `Syscalls`. An operation that spans quanta (a page walk, a read, a
//! sleep) keeps its progress in `ProgState::op`.

use std::sync::Arc;

use rand::Rng;

use crate::ast::{Access, Backing, BinOp, Expr, MemQuantity, OpKind, Pattern, Span, Template, POLL_DEFAULT_NS};
use crate::interp::{
    eval, render, render_name, Insn, Name, OpState, ProgState, Program, TouchState, ERRNO, TID, TOUCH_AHEAD,
    TOUCH_DRAWN,
};
use crate::load::MAX_STORAGE_BYTES;
use crate::syscalls::{self as sys, MapBacking, MmapArgs, Outcome, Progress, Sys, Syscalls, WriteCalls};

const EINVAL: i64 = 22;
/// `tcp_wmem[1]`: a TCP socket's send buffer before autotuning grows it.
const DEFAULT_SNDBUF: i64 = 16384;
/// Instructions a program may run while simulated time stands still (no operation took any):
/// `loop { }` or `for i in 0..1000000000000 { x += 1 }` would otherwise hold the simulator forever, past
/// `duration`, since only operations advance the clock. Tens of milliseconds of wall time.
pub const MAX_STEPS_WITHOUT_TIME: u64 = 10_000_000;

/// The error for a program past `MAX_STEPS_WITHOUT_TIME`.
pub fn no_progress_message() -> String {
    format!(
        "{MAX_STEPS_WITHOUT_TIME} steps without an operation that takes time: a loop that does nothing would never end"
    )
}

/// A file the simulator cannot hold (its page index is 4 bytes a page).
fn too_big(bytes: u64) -> String {
    format!("a file of {bytes} bytes; the simulator holds files of up to 1 TiB")
}

/// A run failed because of the scenario (a runtime error in a program, a bad machine).
#[derive(Debug, Clone)]
pub struct RunError {
    pub span: Option<Span>,
    pub message: String,
}

impl RunError {
    pub fn msg(m: impl Into<String>) -> RunError {
        RunError { span: None, message: m.into() }
    }
}

enum Step {
    Done,
    Ongoing(OpState),
    Block(Outcome),
}

type R<T> = Result<T, RunError>;

/// The kernel's default `pid_max` (`PID_MAX_DEFAULT`, 0x8000): no process has more threads.
const PID_MAX_DEFAULT: i64 = 32768;

fn err(span: Span, m: impl Into<String>) -> RunError {
    RunError { span: Some(span), message: m.into() }
}

fn ev(p: &Program, ps: &ProgState, e: &Expr) -> R<i64> {
    eval(p, &ps.vars, e).map_err(|(s, m)| err(s, m))
}

fn ev_opt(p: &Program, ps: &ProgState, e: &Option<Expr>, dflt: i64) -> R<i64> {
    match e {
        Some(e) => ev(p, ps, e),
        None => Ok(dflt),
    }
}

fn name(p: &Program, ps: &ProgState, t: &Template) -> R<String> {
    render(p, &ps.vars, t).map_err(|(s, m)| err(s, m))
}

/// A name used only during the call (a file to open, a region to look up): not allocated.
fn name_buf(p: &Program, ps: &ProgState, t: &Template) -> R<Name> {
    render_name(p, &ps.vars, t).map_err(|(s, m)| err(s, m))
}

/// Run one quantum of a task: until its program blocks, ends, or the quantum is spent.
pub fn run<S: Syscalls>(sys: &mut S, ps: &mut ProgState, prog: &Arc<Program>) -> R<Outcome> {
    let mut steps = 0u64;
    let mut spent = sys.clock();
    let mut last_span = Span::default();
    loop {
        if sys.need_resched() {
            return Ok(Outcome::Continue);
        }
        let clock = sys.clock();
        if clock != spent {
            spent = clock;
            steps = 0;
            last_span = Span::default();
        }
        steps += 1;
        if steps > MAX_STEPS_WITHOUT_TIME {
            // `loop { }` evaluates nothing that has a position: name the process instead.
            let span = (last_span != Span::default()).then_some(last_span);
            let message = format!("process `{}`: {}", sys.comm(), no_progress_message());
            return Err(RunError { span, message });
        }
        if ps.pc == usize::MAX {
            return Ok(Outcome::Exit);
        }
        if let Some(op) = ps.op.take() {
            // A fault found while the operation runs (SIGSEGV, SIGBUS) is the operation's.
            let at = match prog.code.get(ps.pc) {
                Some(Insn::Op(_, span)) => Some(*span),
                _ => None,
            };
            let step = cont(sys, ps, op).map_err(|e| RunError { span: e.span.or(at), ..e })?;
            match step {
                Step::Done => {
                    ps.pc += 1;
                    continue;
                }
                Step::Ongoing(s) => {
                    ps.op = Some(s);
                    continue;
                }
                Step::Block(o) => return Ok(o),
            }
        }
        let Some(insn) = prog.code.get(ps.pc) else { return Ok(Outcome::Exit) };
        match insn {
            Insn::Set(v, e) => {
                last_span = e.span();
                ps.vars[*v] = ev(prog, ps, e)?;
                ps.pc += 1;
            }
            Insn::JumpIfZero(e, to) => {
                last_span = e.span();
                ps.pc = if ev(prog, ps, e)? == 0 { *to } else { ps.pc + 1 };
            }
            Insn::Jump(to) => ps.pc = *to,
            Insn::End => return Ok(Outcome::Exit),
            Insn::Fork { start } => {
                if sys.has_mm() {
                    let mut cps = ProgState::new(ps.prog, ps.vars.len());
                    cps.vars = ps.vars.clone();
                    cps.pc = *start;
                    if let Sys::Block(o) = sys.fork(cps) {
                        return Ok(o);
                    }
                }
                ps.pc += 1;
            }
            Insn::Threads { count, start } => {
                let n = ev(prog, ps, count)?.max(0);
                if n > PID_MAX_DEFAULT {
                    // clone() finds no pid left (`alloc_pid`: -EAGAIN) long before; a count this
                    // large is a mistake in the scenario, not a workload to simulate.
                    return Err(err(
                        count.span(),
                        format!("threads {n}: more threads than pids (pid_max is {PID_MAX_DEFAULT})"),
                    ));
                }
                let n = n as u32;
                if !sys.has_mm() {
                    return Ok(Outcome::Exit);
                }
                let threads = (0..n)
                    .map(|i| {
                        let mut cps = ProgState::new(ps.prog, ps.vars.len());
                        cps.vars = ps.vars.clone();
                        cps.vars[TID] = i as i64;
                        cps.pc = *start;
                        cps
                    })
                    .collect();
                sys.clone_threads(threads);
                ps.pc += 1;
                if sys.wait_children() {
                    return Ok(Outcome::Block { until: None, io: false });
                }
            }
            Insn::Take { var, queue, count, exit } => {
                let q = name(prog, ps, queue)?;
                let n = ev(prog, ps, count)?;
                match sys.queue_take(&q, n) {
                    Some(item) => {
                        ps.vars[*var] = item;
                        ps.pc += 1;
                    }
                    None => ps.pc = *exit,
                }
            }
            Insn::Op(kind, span) => {
                last_span = *span;
                match start(sys, ps, prog, kind, *span)? {
                    Step::Done => ps.pc += 1,
                    Step::Ongoing(s) => ps.op = Some(s),
                    Step::Block(o) => return Ok(o),
                }
            }
        }
    }
}

/// Byte range → page range [first, end) inside a region of `pages` pages.
fn page_range(off: i64, len: Option<i64>, pages: u64, span: Span) -> R<(u64, u64)> {
    if off < 0 || len.map(|l| l < 0).unwrap_or(false) {
        return Err(err(span, "offset and length must not be negative"));
    }
    let first = off as u64 / 4096;
    let end = match len {
        Some(l) => (off as u64 + l as u64).div_ceil(4096),
        None => pages,
    };
    if end > pages || first > end {
        return Err(err(
            span,
            format!("range [{off}, +{}) is outside the region of {} bytes", len.unwrap_or(0), pages * 4096),
        ));
    }
    Ok((first, end))
}

fn region<S: Syscalls>(sys: &S, n: &str, span: Span) -> R<(u64, u64)> {
    sys.region(n).map_err(|m| err(span, m))
}

/// A named region's virtual pages [start+a, start+b) selected by `offset=`/`len=` (bytes).
fn region_range<S: Syscalls>(
    sys: &S,
    prog: &Program,
    ps: &ProgState,
    n: &Template,
    offset: &Option<Expr>,
    len: &Option<Expr>,
    span: Span,
) -> R<(u64, u64, u64)> {
    let nm = name_buf(prog, ps, n)?;
    let (s, pages) = region(sys, nm.as_str(), span)?;
    let off = ev_opt(prog, ps, offset, 0)?;
    let l = match len {
        Some(l) => Some(ev(prog, ps, l)?),
        None => None,
    };
    let (a, b) = page_range(off, l, pages, span)?;
    Ok((s, a, b))
}

fn start<S: Syscalls>(sys: &mut S, ps: &mut ProgState, prog: &Program, kind: &OpKind, span: Span) -> R<Step> {
    if !sys.has_mm() {
        return Ok(Step::Block(Outcome::Exit));
    }
    sys.syscall_entry();
    ps.vars[ERRNO] = 0;
    match kind {
        OpKind::Mmap { name: n, backing, len, offset, fixed, shared, write, locked, populate } => {
            let args = MmapArgs {
                name: name(prog, ps, n)?,
                offset: ev_opt(prog, ps, offset, 0)?.max(0) as u64,
                len: match len {
                    Some(l) => Some(ev(prog, ps, l)?),
                    None => None,
                },
                backing: match backing {
                    Backing::Anon => MapBacking::Anon,
                    Backing::File(f) => MapBacking::File(name(prog, ps, f)?),
                    Backing::Shm(s) => MapBacking::Shm(name(prog, ps, s)?),
                },
                fixed: *fixed,
                shared: *shared,
                write: *write,
                locked: *locked,
            };
            let m = match sys.mmap(&args).map_err(|m| err(span, m))? {
                Sys::Ok(m) => m,
                Sys::Block(o) => return Ok(Step::Block(o)),
            };
            if m.errno != 0 {
                ps.vars[ERRNO] = m.errno;
            }
            if *locked || *populate {
                return Ok(Step::Ongoing(OpState::Populate {
                    vpn: m.start,
                    end: m.end,
                    write: m.write && !*shared,
                    mlock_rest: None,
                }));
            }
            Ok(Step::Done)
        }
        OpKind::Munmap { name: n, offset, len } => {
            let (s, a, b) = region_range(sys, prog, ps, n, offset, len, span)?;
            Ok(match sys.munmap(s + a, b - a) {
                Sys::Ok(()) => Step::Done,
                Sys::Block(o) => Step::Block(o),
            })
        }
        OpKind::Mlock { name: n, offset, len, chunk } => {
            let (s, a, b) = region_range(sys, prog, ps, n, offset, len, span)?;
            let chunk = match chunk {
                Some(c) => (ev(prog, ps, c)?.max(4096) as u64).div_ceil(4096),
                None => b - a,
            };
            Ok(Step::Ongoing(OpState::Populate {
                vpn: s + a,
                end: s + a,
                write: false,
                mlock_rest: Some((s + a, s + b, chunk)),
            }))
        }
        OpKind::Munlock { name: n, offset, len } => {
            let (s, a, b) = region_range(sys, prog, ps, n, offset, len, span)?;
            Ok(match sys.munlock(s + a, s + b) {
                Sys::Ok(()) => Step::Done,
                Sys::Block(o) => Step::Block(o),
            })
        }
        OpKind::MadviseDontneed { name: n, offset, len } => {
            let (s, a, b) = region_range(sys, prog, ps, n, offset, len, span)?;
            let e = sys.madvise_dontneed(s + a, s + b);
            if e != 0 {
                ps.vars[ERRNO] = e;
            }
            Ok(Step::Done)
        }
        OpKind::Touch { name: n, access, offset, len, stride, pattern, count, rate } => {
            let (s, a, b) = region_range(sys, prog, ps, n, offset, len, span)?;
            let stride = (ev_opt(prog, ps, stride, 4096)?.max(1) as u64).div_ceil(4096).max(1);
            let npages = b - a;
            if npages == 0 {
                return Ok(Step::Done);
            }
            let (kind, zipf) = match pattern {
                Pattern::Seq => (0u8, None),
                Pattern::Uniform => (1, None),
                Pattern::Zipf { theta_milli } => {
                    let th = ev(prog, ps, theta_milli)? as f64 / 1000.0;
                    let z = crate::dist::Zipf::new(npages, th).map_err(|e| err(span, format!("zipf: {e:?}")))?;
                    (2, Some(z))
                }
            };
            let dflt = if kind == 0 { npages.div_ceil(stride) } else { npages };
            let count = ev_opt(prog, ps, count, dflt as i64)?.max(0) as u64;
            let rate = ev_opt(prog, ps, rate, 0)?.max(0) as u64;
            Ok(Step::Ongoing(OpState::Touch(Box::new(TouchState {
                start: s + a,
                npages,
                stride,
                i: 0,
                count,
                write: *access == Access::Write,
                kind,
                zipf,
                gap_ns: 1_000_000_000u64.checked_div(rate).unwrap_or(0),
                next_at: 0,
                ahead: [0; TOUCH_DRAWN],
                drawn: 0,
                seq_pos: 0,
            }))))
        }
        OpKind::Read { file, offset, len, bs } | OpKind::Write { file, offset, len, bs, .. } => {
            let is_write = matches!(kind, OpKind::Write { .. });
            let fname = name_buf(prog, ps, file)?;
            let f = sys.open(fname.as_str()).map_err(|m| err(span, m))?;
            let off = match kind {
                OpKind::Write { append: true, .. } => f.size,
                _ => ev_opt(prog, ps, offset, 0)?.max(0) as u64,
            };
            let l = match len {
                Some(l) => ev(prog, ps, l)?.max(0) as u64,
                None => f.size.saturating_sub(off),
            };
            if is_write && off + l > MAX_STORAGE_BYTES {
                return Err(err(span, too_big(off + l)));
            }
            let size = if is_write { sys.extend(f.id, off + l) } else { f.size };
            let end = (off + l).min(size).div_ceil(4096);
            let idx = off / 4096;
            if idx >= end {
                return Ok(Step::Done);
            }
            let bs = ev_opt(prog, ps, bs, 0)?.max(0) as u64;
            Ok(Step::Ongoing(if is_write {
                OpState::Write { file: f.id, idx, end, calls: WriteCalls { off, stop: off + l, bs } }
            } else {
                OpState::Read { file: f.id, idx, end, base: idx, bs: bs.div_ceil(4096) }
            }))
        }
        OpKind::Create { file, size, disk } => {
            let fname = name_buf(prog, ps, file)?;
            let bytes = ev_opt(prog, ps, size, 0)?.max(0) as u64;
            if bytes > MAX_STORAGE_BYTES {
                return Err(err(span, too_big(bytes)));
            }
            let disk = match disk {
                Some(d) => Some(name(prog, ps, d)?),
                None => None,
            };
            sys.create(fname.as_str(), bytes, disk.as_deref()).map_err(|m| err(span, m))?;
            Ok(Step::Done)
        }
        OpKind::Unlink { file } => {
            let fname = name_buf(prog, ps, file)?;
            let e = sys.unlink(fname.as_str());
            if e != 0 {
                ps.vars[ERRNO] = e;
            }
            Ok(Step::Done)
        }
        OpKind::Fsync { file } => {
            let fname = name_buf(prog, ps, file)?;
            let until = sys.fsync(fname.as_str()).map_err(|m| err(span, m))?;
            if until > sys.clock() {
                // Resumes in `cont` (OpState::Fsync), which completes the op.
                ps.op = Some(OpState::Fsync);
                return Ok(Step::Block(Outcome::Block { until: Some(until), io: true }));
            }
            Ok(Step::Done)
        }
        OpKind::Send { len, rate, sndbuf } => {
            let left = ev(prog, ps, len)?.max(0) as u64;
            let r = ev(prog, ps, rate)?;
            if r <= 0 {
                return Err(err(span, format!("`send` needs a positive `rate=` (bytes a second), not {r}")));
            }
            let sndbuf = ev_opt(prog, ps, sndbuf, DEFAULT_SNDBUF)?.max(0) as u64;
            if left == 0 {
                return Ok(Step::Done);
            }
            Ok(Step::Ongoing(OpState::Send { left, rate: r as u64, sndbuf }))
        }
        OpKind::Wait => {
            if sys.wait_children() {
                ps.op = Some(OpState::Slept);
                return Ok(Step::Block(Outcome::Block { until: None, io: false }));
            }
            Ok(Step::Done)
        }
        OpKind::Exit => {
            ps.pc = usize::MAX;
            Ok(Step::Block(Outcome::Exit))
        }
        OpKind::Migrate { cpu } => {
            let c = ev(prog, ps, cpu)?;
            if c < 0 || c >= sys.nr_cpus() {
                ps.vars[ERRNO] = EINVAL;
                return Ok(Step::Done);
            }
            if sys.sched_setaffinity(c as u32) {
                ps.pc += 1;
                return Ok(Step::Block(Outcome::Continue));
            }
            Ok(Step::Done)
        }
        OpKind::Sleep { dur } => match dur {
            None => {
                ps.op = Some(OpState::Slept);
                Ok(Step::Block(Outcome::SleepForever))
            }
            Some(d) => {
                let ns = ev(prog, ps, d)?.max(0) as u64;
                ps.op = Some(OpState::Slept);
                Ok(Step::Block(Outcome::Block { until: Some(sys.clock() + ns), io: false }))
            }
        },
        OpKind::Compute { dur } => {
            let ns = ev(prog, ps, dur)?.max(0) as u64;
            Ok(Step::Ongoing(OpState::Compute { left: ns }))
        }
        OpKind::DropCaches { .. } => {
            sys.drop_caches();
            Ok(Step::Done)
        }
        OpKind::Swapoff => Ok(swapoff(sys, ps, 0)),
        OpKind::Mark { name: n } => {
            let nm = name_buf(prog, ps, n)?;
            sys.mark(nm.as_str());
            Ok(Step::Done)
        }
        OpKind::WaitUntil { quantity, op, value, every } => {
            let value = ev(prog, ps, value)?;
            let every = ev_opt(prog, ps, every, POLL_DEFAULT_NS)?;
            if every <= 0 {
                return Err(err(span, format!("`wait_until` needs a positive `every=` period, not {every} ns")));
            }
            Ok(poll(sys, ps, *quantity, *op, value, every as u64))
        }
        OpKind::Fork { .. } | OpKind::Threads { .. } | OpKind::ForeachQueue { .. } => Ok(Step::Done),
    }
}

/// One look of a `wait_until`: done when the condition holds, else asleep until the next look.
/// Polling at a fixed period keeps the simulator free of per-event hooks, and the wake time
/// depends only on simulated state, so runs stay deterministic.
fn poll<S: Syscalls>(sys: &mut S, ps: &mut ProgState, q: MemQuantity, op: BinOp, value: i64, every: u64) -> Step {
    let now = i64::try_from(sys.mem_bytes(q)).unwrap_or(i64::MAX);
    let holds = match op {
        BinOp::Ge => now >= value,
        BinOp::Gt => now > value,
        BinOp::Le => now <= value,
        BinOp::Lt => now < value,
        BinOp::Eq => now == value,
        _ => now != value,
    };
    if holds {
        return Step::Done;
    }
    ps.op = Some(OpState::Poll { q, op, value, every });
    Step::Block(Outcome::Block { until: Some(sys.clock() + every), io: false })
}

/// A sequential touch's next page after `n` more accesses: `(i * stride) % npages` kept as a
/// running sum (a division per page was a tenth of a sweep's host time). A run never goes past
/// the region's end, so it wraps at most at its last page.
fn seq_advance(st: &mut TouchState, n: u64) {
    st.seq_pos += n * st.stride;
    if st.seq_pos >= st.npages {
        st.seq_pos %= st.npages;
    }
}

/// Where a page walk stopped: `Preempted` continues in the next quantum, `Block` after a sleep.
fn resume(p: Progress, ps: &mut ProgState, st: OpState) -> Option<Step> {
    match p {
        Progress::Done => None,
        Progress::Preempted => Some(Step::Ongoing(st)),
        Progress::Block(o) => {
            ps.op = Some(st);
            Some(Step::Block(o))
        }
    }
}

fn cont<S: Syscalls>(sys: &mut S, ps: &mut ProgState, op: OpState) -> R<Step> {
    if !sys.has_mm() {
        return Ok(Step::Block(Outcome::Exit));
    }
    match op {
        OpState::Slept | OpState::Fsync => {
            if sys.children_pending() {
                return Ok(Step::Block(Outcome::Block { until: None, io: false }));
            }
            Ok(Step::Done)
        }
        OpState::Poll { q, op, value, every } => Ok(poll(sys, ps, q, op, value, every)),
        OpState::Compute { left } => {
            let slice = sys.compute(left);
            if left > slice {
                Ok(Step::Ongoing(OpState::Compute { left: left - slice }))
            } else {
                Ok(Step::Done)
            }
        }
        OpState::Touch(mut st) => {
            while st.i < st.count {
                if sys.quantum_spent() {
                    return Ok(Step::Ongoing(OpState::Touch(st)));
                }
                if st.gap_ns > 0 && sys.clock() < st.next_at {
                    let until = st.next_at;
                    ps.op = Some(OpState::Touch(st));
                    return Ok(Step::Block(Outcome::Block { until: Some(until), io: false }));
                }
                let idx = if st.kind == 0 {
                    if st.gap_ns == 0 {
                        // The pages up to the end of the region (or of the count) in one call;
                        // the page it stops at, if any, goes the one-page way below.
                        let run = (st.count - st.i).min((st.npages - st.seq_pos).div_ceil(st.stride));
                        let done = sys.access_present_run(st.start + st.seq_pos, run, st.stride, st.write);
                        if done > 0 {
                            st.i += done;
                            seq_advance(&mut st, done);
                            continue;
                        }
                    }
                    st.seq_pos
                } else {
                    while st.drawn < st.count && st.drawn < st.i + TOUCH_DRAWN as u64 {
                        let i = match st.kind {
                            1 => sys.rng().gen_range(0..st.npages),
                            _ => st.zipf.as_ref().map(|z| z.sample(sys.rng())).unwrap_or(0).min(st.npages - 1),
                        };
                        st.ahead[(st.drawn - st.i) as usize] = i;
                        sys.prefetch(st.start + i);
                        st.drawn += 1;
                    }
                    let held = (st.drawn - st.i) as usize;
                    if st.gap_ns == 0 {
                        // The pages prefetched long enough ago (all of them at the end).
                        let n = if st.drawn == st.count { held } else { held - TOUCH_AHEAD };
                        let done = sys.access_present_pages(st.start, &st.ahead[..n], st.write);
                        if done > 0 {
                            st.i += done as u64;
                            st.ahead.copy_within(done..held, 0);
                            continue;
                        }
                    }
                    st.ahead[0]
                };
                match sys.access(st.start + idx, st.write) {
                    sys::Access::Done => {
                        st.i += 1;
                        if st.kind == 0 {
                            seq_advance(&mut st, 1);
                        } else {
                            st.ahead.copy_within(1..(st.drawn - st.i + 1) as usize, 0);
                        }
                        if st.gap_ns > 0 {
                            st.next_at = sys.clock() + st.gap_ns;
                        }
                    }
                    sys::Access::Block(o) => {
                        ps.op = Some(OpState::Touch(st));
                        return Ok(Step::Block(o));
                    }
                    sys::Access::Segv => {
                        return Err(RunError::msg(format!(
                            "{}: SIGSEGV touching a page outside its mapping or without permission",
                            sys.comm()
                        )))
                    }
                    sys::Access::Oom(until) => {
                        ps.op = Some(OpState::Touch(st));
                        return Ok(Step::Block(Outcome::Block { until: Some(until), io: false }));
                    }
                }
            }
            Ok(Step::Done)
        }
        OpState::Populate { mut vpn, end, write, mlock_rest } => {
            let p = sys.populate(&mut vpn, end, write);
            if let Some(s) = resume(p, ps, OpState::Populate { vpn, end, write, mlock_rest }) {
                return Ok(s);
            }
            // Next mlock chunk, if any.
            if let Some((next, stop, chunk)) = mlock_rest {
                if next < stop {
                    let ce = (next + chunk).min(stop);
                    return Ok(Step::Ongoing(match sys.mlock_chunk(next, ce) {
                        Sys::Block(o) => {
                            ps.op = Some(OpState::Populate { vpn, end, write, mlock_rest });
                            return Ok(Step::Block(o));
                        }
                        Sys::Ok(Ok(w)) => {
                            OpState::Populate { vpn: next, end: ce, write: w, mlock_rest: Some((ce, stop, chunk)) }
                        }
                        Sys::Ok(Err(e)) => {
                            ps.vars[ERRNO] = e;
                            OpState::Populate { vpn: ce, end: ce, write: false, mlock_rest: Some((ce, stop, chunk)) }
                        }
                    }));
                }
            }
            Ok(Step::Done)
        }
        OpState::Read { file, mut idx, end, base, bs } => {
            let p = sys.read(file, &mut idx, end, base, bs);
            Ok(resume(p, ps, OpState::Read { file, idx, end, base, bs }).unwrap_or(Step::Done))
        }
        OpState::Write { file, mut idx, end, calls } => {
            let p = sys.write(file, &mut idx, end, calls);
            Ok(resume(p, ps, OpState::Write { file, idx, end, calls }).unwrap_or(Step::Done))
        }
        OpState::Send { mut left, rate, sndbuf } => {
            let p = sys.send(&mut left, rate, sndbuf);
            Ok(resume(p, ps, OpState::Send { left, rate, sndbuf }).unwrap_or(Step::Done))
        }
        OpState::Swapoff { pos } => Ok(swapoff(sys, ps, pos)),
    }
}

fn swapoff<S: Syscalls>(sys: &mut S, ps: &mut ProgState, mut pos: u64) -> Step {
    match sys.swapoff(&mut pos) {
        Ok(p) => resume(p, ps, OpState::Swapoff { pos }).unwrap_or(Step::Done),
        Err(e) => {
            ps.vars[ERRNO] = e;
            Step::Done
        }
    }
}
