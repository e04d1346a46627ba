//! Executing program operations as system calls into the simulated mm. How a fault treats
//! mmap_sem is the mm's (`mmap_lock`); the lock state a task keeps is in its `sched::Task`.

use std::sync::Arc;

use rand::Rng;

use super::ast::{Access, Backing, OpKind, Pattern, Span};
use super::interp::{eval, render, Insn, OpState, ProgState, Program, TouchState, ERRNO, TID};
use crate::kernel::Ctx;
use crate::mmap::{pte, vm, Vma, VmaKind};
use crate::mmap_lock::{self, FaultStep};
use crate::sched::{Outcome, TState, QUANTUM_NS};
use crate::sim::{Sim, SimError};
use crate::stats::kfunc::KFunc;

const ENOMEM: i64 = 12;
const EINVAL: i64 = 22;
/// Back-off when an allocation failed and the OOM killer is at work.
const OOM_BACKOFF_NS: u64 = 10_000_000;

/// How long a task whose allocation failed waits before retrying: until writeback wakes it
/// when reclaim throttled, else a short back-off while the OOM killer's victim exits.
fn backoff(ctx: &mut Ctx) -> u64 {
    let t = std::mem::take(&mut ctx.throttle_until);
    if t > ctx.clock() {
        t
    } else {
        ctx.clock() + OOM_BACKOFF_NS
    }
}

enum Step {
    Done,
    Ongoing(OpState),
    Block(Outcome),
}

type R<T> = Result<T, SimError>;

fn err(span: Span, m: impl Into<String>) -> SimError {
    SimError { span: Some(span), message: m.into() }
}

fn ev(p: &Program, ps: &ProgState, e: &super::ast::Expr) -> R<i64> {
    eval(p, &ps.vars, e).map_err(|(s, m)| err(s, m))
}

fn ev_opt(p: &Program, ps: &ProgState, e: &Option<super::ast::Expr>, dflt: i64) -> R<i64> {
    match e {
        Some(e) => ev(p, ps, e),
        None => Ok(dflt),
    }
}

fn name(p: &Program, ps: &ProgState, t: &super::ast::Template) -> R<String> {
    render(p, &ps.vars, t).map_err(|(s, m)| err(s, m))
}

/// Run one quantum of a user task.
pub fn step(sim: &mut Sim, t: usize, ctx: &mut Ctx) -> Outcome {
    let Some(mut ps) = sim.s.tasks[t].prog.take() else { return Outcome::Exit };
    let prog = Arc::clone(&sim.programs[ps.prog]);
    let out = match run(sim, t, ctx, &mut ps, &prog) {
        Ok(o) => o,
        Err(e) => {
            sim.error = Some(e);
            Outcome::Exit
        }
    };

    sim.s.tasks[t].prog = Some(ps);
    if out == Outcome::Exit {
        do_exit(sim, t, ctx);
    }
    out
}

fn run(sim: &mut Sim, t: usize, ctx: &mut Ctx, ps: &mut ProgState, prog: &Program) -> R<Outcome> {
    loop {
        if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS || ctx.sleep_ns > 0 {
            return Ok(Outcome::Continue);
        }
        if ps.pc == usize::MAX {
            return Ok(Outcome::Exit);
        }
        if let Some(op) = ps.op.take() {
            match cont(sim, t, ctx, ps, prog, op)? {
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
                ps.vars[*v] = ev(prog, ps, e)?;
                ps.pc += 1;
            }
            Insn::JumpIfZero(e, to) => {
                ps.pc = if ev(prog, ps, e)? == 0 { *to } else { ps.pc + 1 };
            }
            Insn::Jump(to) => ps.pc = *to,
            Insn::End => return Ok(Outcome::Exit),
            Insn::Fork { start } => {
                do_fork(sim, t, ctx, ps, *start)?;
                ps.pc += 1;
            }
            Insn::Threads { count, start } => {
                let n = ev(prog, ps, count)?.max(0) as u32;
                let Some(mm) = sim.s.tasks[t].mm else { return Ok(Outcome::Exit) };
                for i in 0..n {
                    let name = format!("{}:{i}", sim.s.tasks[t].name);
                    let c = sim.s.new_task(&name, crate::sched::TaskKind::User, Some(mm));
                    let mut cps = ProgState::new(ps.prog, ps.vars.len());
                    cps.vars = ps.vars.clone();
                    cps.vars[TID] = i as i64;
                    cps.pc = *start;
                    sim.s.tasks[c].prog = Some(Box::new(cps));
                    sim.s.tasks[c].parent = Some(t);
                    sim.s.tasks[c].cpu_allowed = sim.s.tasks[t].cpu_allowed;
                    sim.s.set_runnable(c);
                    sim.user_alive += 1;
                }
                sim.k.mm_mut(mm).users += n;
                sim.s.tasks[t].children += n;
                ps.pc += 1;
                if sim.s.tasks[t].children > 0 {
                    sim.s.tasks[t].waiting_children = true;
                    return Ok(Outcome::Block { until: None, io: false });
                }
            }
            Insn::Take { var, queue, count, exit } => {
                let q = name(prog, ps, queue)?;
                let n = ev(prog, ps, count)?;
                let mm = sim.s.tasks[t].mm.unwrap_or(0);
                let next = sim.queues.entry((mm, q)).or_insert(0);
                if *next < n {
                    ps.vars[*var] = *next;
                    *next += 1;
                    ps.pc += 1;
                } else {
                    ps.pc = *exit;
                }
            }
            Insn::Op(kind, span) => match start(sim, t, ctx, ps, prog, kind, *span)? {
                Step::Done => ps.pc += 1,
                Step::Ongoing(s) => ps.op = Some(s),
                Step::Block(o) => return Ok(o),
            },
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

fn region(sim: &Sim, mm: u32, n: &str, span: Span) -> R<(u64, u64)> {
    sim.k.mm(mm).regions.get(n).copied().ok_or_else(|| {
        let known: Vec<&str> = sim.k.mm(mm).regions.keys().map(|s| s.as_str()).collect();
        let hint = super::error::suggest(n, known).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
        err(span, format!("no mapping named `{n}` in this process{hint}"))
    })
}

/// A named region's virtual pages [start+a, start+b) selected by `offset=`/`len=` (bytes).
#[allow(clippy::too_many_arguments)]
fn region_range(
    sim: &Sim,
    prog: &Program,
    ps: &ProgState,
    mm: u32,
    n: &super::ast::Template,
    offset: &Option<super::ast::Expr>,
    len: &Option<super::ast::Expr>,
    span: Span,
) -> R<(u64, u64, u64)> {
    let nm = name(prog, ps, n)?;
    let (s, pages) = region(sim, mm, &nm, span)?;
    let off = ev_opt(prog, ps, offset, 0)?;
    let l = match len {
        Some(l) => Some(ev(prog, ps, l)?),
        None => None,
    };
    let (a, b) = page_range(off, l, pages, span)?;
    Ok((s, a, b))
}

fn file_id(sim: &Sim, n: &str, span: Span) -> R<u32> {
    sim.k.file_ids.get(n).copied().ok_or_else(|| {
        let hint = super::error::suggest(n, sim.k.file_ids.keys().map(|s| s.as_str()))
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        err(span, format!("no file named `{n}`{hint}"))
    })
}

/// Take mmap_sem for write; Block if it must wait (the grant wakes the task holding it).
fn lock_write(sim: &mut Sim, t: usize, ctx: &mut Ctx, mm: u32) -> Option<Step> {
    mmap_lock::mmap_write_lock(&mut sim.k, t, ctx, &mut sim.s.tasks[t].mmap_lock, mm).map(Step::Block)
}

fn unlock_write(sim: &mut Sim, t: usize, ctx: &Ctx, mm: u32) {
    mmap_lock::mmap_write_unlock(&mut sim.k, ctx.clock(), &mut sim.s.tasks[t].mmap_lock, mm);
}

fn fault(sim: &mut Sim, t: usize, ctx: &mut Ctx, mm: u32, vpn: u64, write: bool) -> FaultStep {
    mmap_lock::do_user_addr_fault(&mut sim.k, t, ctx, &mut sim.s.tasks[t].mmap_lock, mm, vpn, write)
}

fn start(
    sim: &mut Sim,
    t: usize,
    ctx: &mut Ctx,
    ps: &mut ProgState,
    prog: &Program,
    kind: &OpKind,
    span: Span,
) -> R<Step> {
    let Some(mm) = sim.s.tasks[t].mm else { return Ok(Step::Block(Outcome::Exit)) };
    sim.k.charge(ctx, KFunc::Syscall, sim.k.cost.syscall);
    ps.vars[ERRNO] = 0;
    match kind {
        OpKind::Mmap { name: n, backing, len, offset, fixed, shared, write, locked, populate } => {
            if let Some(b) = lock_write(sim, t, ctx, mm) {
                return Ok(b);
            }
            let r = do_mmap(sim, ctx, ps, prog, mm, n, backing, len, offset, *fixed, *shared, *write, *locked, span);
            unlock_write(sim, t, ctx, mm);
            let (s, e, w) = r?;
            if *locked || *populate {
                return Ok(Step::Ongoing(OpState::Populate { vpn: s, end: e, write: w && !*shared, mlock_rest: None }));
            }
            Ok(Step::Done)
        }
        OpKind::Munmap { name: n, offset, len } => {
            let (s, a, b) = region_range(sim, prog, ps, mm, n, offset, len, span)?;
            if let Some(b) = lock_write(sim, t, ctx, mm) {
                return Ok(b);
            }
            sim.k.do_munmap(ctx, mm, s + a, b - a);
            unlock_write(sim, t, ctx, mm);
            Ok(Step::Done)
        }
        OpKind::Mlock { name: n, offset, len, chunk } => {
            let (s, a, b) = region_range(sim, prog, ps, mm, n, offset, len, span)?;
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
            let (s, a, b) = region_range(sim, prog, ps, mm, n, offset, len, span)?;
            if let Some(bl) = lock_write(sim, t, ctx, mm) {
                return Ok(bl);
            }
            let _ = crate::mlock::mlock_fixup(&mut sim.k, ctx, mm, s + a, s + b, false);
            unlock_write(sim, t, ctx, mm);
            Ok(Step::Done)
        }
        OpKind::MadviseDontneed { name: n, offset, len } => {
            let (s, a, b) = region_range(sim, prog, ps, mm, n, offset, len, span)?;
            let r = sim.k.vmas_in(mm, s + a, s + b);
            let vmas: Vec<Vma> = sim.k.mm(mm).vmas[r].to_vec();
            for v in &vmas {
                if v.flags & vm::LOCKED != 0 {
                    ps.vars[ERRNO] = EINVAL;
                    continue;
                }
                sim.k.zap_range(ctx, mm, v, v.start, v.end);
            }
            Ok(Step::Done)
        }
        OpKind::Touch { name: n, access, offset, len, stride, pattern, count, rate } => {
            let (s, a, b) = region_range(sim, prog, ps, mm, n, offset, len, span)?;
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
                gap_ns: if rate > 0 { 1_000_000_000 / rate } else { 0 },
                next_at: 0,
                cur: None,
            }))))
        }
        OpKind::Read { file, offset, len, bs } | OpKind::Write { file, offset, len, bs, .. } => {
            let is_write = matches!(kind, OpKind::Write { .. });
            let fname = name(prog, ps, file)?;
            let f = file_id(sim, &fname, span)?;
            crate::dcache::lookup(&mut sim.k, ctx, f);
            let fsize = sim.k.files[f as usize].size;
            let off = match kind {
                OpKind::Write { append: true, .. } => fsize,
                _ => ev_opt(prog, ps, offset, 0)?.max(0) as u64,
            };
            let l = match len {
                Some(l) => ev(prog, ps, l)?.max(0) as u64,
                None => fsize.saturating_sub(off),
            };
            if is_write {
                sim.k.files[f as usize].extend(off + l);
            }
            let end = (off + l).min(sim.k.files[f as usize].size).div_ceil(4096);
            let idx = off / 4096;
            if idx >= end {
                return Ok(Step::Done);
            }
            let bs = ev_opt(prog, ps, bs, 0)?.max(0) as u64;
            Ok(Step::Ongoing(if is_write {
                OpState::Write { file: f, idx, end }
            } else {
                OpState::Read { file: f, idx, end, base: idx, bs: bs.div_ceil(4096) }
            }))
        }
        OpKind::Create { file, size, disk } => {
            let fname = name(prog, ps, file)?;
            let bytes = ev_opt(prog, ps, size, 0)?.max(0) as u64;
            let d = match disk {
                Some(dn) => {
                    let dn = name(prog, ps, dn)?;
                    let _ = dn;
                    0
                }
                None => 0,
            };
            if let Some(&old) = sim.k.file_ids.get(&fname) {
                sim.k.file_unlink(ctx, old);
            }
            let f = sim.k.file_create_packed(&fname, bytes, d);
            crate::dcache::lookup(&mut sim.k, ctx, f);
            Ok(Step::Done)
        }
        OpKind::Unlink { file } => {
            let fname = name(prog, ps, file)?;
            match sim.k.file_ids.get(&fname).copied() {
                Some(f) => sim.k.file_unlink(ctx, f),
                None => ps.vars[ERRNO] = 2,
            }
            Ok(Step::Done)
        }
        OpKind::Fsync { file } => {
            let fname = name(prog, ps, file)?;
            let f = file_id(sim, &fname, span)?;
            let until = fsync(sim, ctx, f);
            if until > ctx.clock() {
                // Resumes in `cont` (OpState::Fsync), which completes the op.
                ps.op = Some(OpState::Fsync);
                return Ok(Step::Block(Outcome::Block { until: Some(until), io: true }));
            }
            Ok(Step::Done)
        }
        OpKind::Wait => {
            if sim.s.tasks[t].children > 0 {
                sim.s.tasks[t].waiting_children = true;
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
            let n = sim.s.cpus.len() as i64;
            if c < 0 || c >= n {
                ps.vars[ERRNO] = EINVAL;
                return Ok(Step::Done);
            }
            sim.s.tasks[t].cpu_allowed = Some(c as u32);
            if c as u32 != ctx.cpu {
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
                Ok(Step::Block(Outcome::Block { until: Some(ctx.clock() + ns), io: false }))
            }
        },
        OpKind::Compute { dur } => {
            let ns = ev(prog, ps, dur)?.max(0) as u64;
            Ok(Step::Ongoing(OpState::Compute { left: ns }))
        }
        OpKind::DropCaches { .. } => {
            sim.k.drop_caches(ctx);
            Ok(Step::Done)
        }
        OpKind::Mark { name: n } => {
            let nm = name(prog, ps, n)?;
            let v = ctx.clock() as f64 / 1e9;
            sim.metric(&nm, v);
            Ok(Step::Done)
        }
        OpKind::Fork { .. } | OpKind::Threads { .. } | OpKind::ForeachQueue { .. } => Ok(Step::Done),
    }
}

#[allow(clippy::too_many_arguments)]
fn do_mmap(
    sim: &mut Sim,
    ctx: &mut Ctx,
    ps: &mut ProgState,
    prog: &Program,
    mm: u32,
    n: &super::ast::Template,
    backing: &Backing,
    len: &Option<super::ast::Expr>,
    offset: &Option<super::ast::Expr>,
    fixed: bool,
    shared: bool,
    write: bool,
    locked: bool,
    span: Span,
) -> R<(u64, u64, bool)> {
    sim.k.charge(ctx, KFunc::DoMmap, sim.k.cost.mmap);
    let nm = name(prog, ps, n)?;
    let off = ev_opt(prog, ps, offset, 0)?.max(0) as u64;
    let bytes = match (len, backing) {
        (Some(l), _) => ev(prog, ps, l)?,
        // No length: the rest of the file (the parser allows this only for files).
        (None, Backing::File(f)) => {
            let id = file_id(sim, &name(prog, ps, f)?, span)?;
            sim.k.files[id as usize].size.saturating_sub(off) as i64
        }
        (None, _) => 0,
    };
    if bytes <= 0 {
        return Err(err(span, "mmap length must be positive"));
    }
    let pages = (bytes as u64).div_ceil(4096);
    let start = if fixed {
        let (s, _) = region(sim, mm, &nm, span)?;
        sim.k.do_munmap(ctx, mm, s, pages);
        s
    } else {
        sim.k.get_unmapped_area(mm, pages)
    };
    let mut flags = vm::READ | if write { vm::WRITE } else { 0 } | if shared { vm::SHARED } else { 0 };
    let kind = match backing {
        Backing::Anon => VmaKind::Anon,
        Backing::File(f) => {
            let fname = name(prog, ps, f)?;
            let id = file_id(sim, &fname, span)?;
            VmaKind::File { file: id, pgoff: off / 4096 }
        }
        Backing::Shm(sname) => {
            let sn = format!("SYSV:{}", name(prog, ps, sname)?);
            let id = match sim.k.file_ids.get(&sn) {
                Some(&id) => id,
                None => sim.k.file_create(&sn, pages * 4096, 0, true),
            };
            flags |= vm::SHM | vm::SHARED;
            VmaKind::File { file: id, pgoff: off / 4096 }
        }
    };
    if let VmaKind::File { file, pgoff } = kind {
        sim.k.files[file as usize].i_mmap_add(mm, start, start + pages, pgoff);
    }
    // vma_start_write: a new VMA is write-locked until mmap_write_unlock.
    let write_locked = mmap_lock::new_vma_write_locked(&sim.k);
    sim.k.vma_insert(mm, Vma { start, end: start + pages, flags, kind, write_locked, swap_ra: Default::default() });
    sim.k.mm_mut(mm).regions.insert(nm, (start, pages));
    if locked {
        if crate::mlock::mlock_fixup(&mut sim.k, ctx, mm, start, start + pages, true).is_err() {
            ps.vars[ERRNO] = ENOMEM;
        }
    }
    Ok((start, start + pages, write))
}

fn fsync(sim: &mut Sim, ctx: &mut Ctx, f: u32) -> u64 {
    let n = sim.k.files[f as usize].pages.len();
    let mut run = Vec::new();
    let mut first = 0;
    for idx in 0..n {
        let p = sim.k.files[f as usize].pages[idx];
        let dirty = p != crate::mm_types::NIL
            && sim.k.fr.flags[p as usize] & (crate::mm_types::pg::DIRTY | crate::mm_types::pg::WRITEBACK)
                == crate::mm_types::pg::DIRTY;
        if dirty {
            if run.is_empty() {
                first = idx as u64;
            }
            run.push(p);
        } else if !run.is_empty() {
            crate::page_writeback::submit_write(&mut sim.k, ctx, f, first, std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        crate::page_writeback::submit_write(&mut sim.k, ctx, f, first, run);
    }
    let d = sim.k.files[f as usize].disk;
    sim.k.disks[d].queued_until()
}

fn cont(sim: &mut Sim, t: usize, ctx: &mut Ctx, ps: &mut ProgState, _prog: &Program, op: OpState) -> R<Step> {
    let Some(mm) = sim.s.tasks[t].mm else { return Ok(Step::Block(Outcome::Exit)) };
    match op {
        OpState::Slept | OpState::Fsync => {
            if sim.s.tasks[t].waiting_children && sim.s.tasks[t].children > 0 {
                return Ok(Step::Block(Outcome::Block { until: None, io: false }));
            }
            sim.s.tasks[t].waiting_children = false;
            Ok(Step::Done)
        }
        OpState::Compute { left } => {
            let slice = left.min(QUANTUM_NS);
            ctx.user_ns += slice;
            if left > slice {
                Ok(Step::Ongoing(OpState::Compute { left: left - slice }))
            } else {
                Ok(Step::Done)
            }
        }
        OpState::Touch(mut st) => {
            while st.i < st.count {
                if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS {
                    return Ok(Step::Ongoing(OpState::Touch(st)));
                }
                if st.gap_ns > 0 && ctx.clock() < st.next_at {
                    let until = st.next_at;
                    ps.op = Some(OpState::Touch(st));
                    return Ok(Step::Block(Outcome::Block { until: Some(until), io: false }));
                }
                let idx = match st.cur {
                    Some(c) => c,
                    None => {
                        let i = match st.kind {
                            0 => (st.i * st.stride) % st.npages,
                            1 => sim.k.rng.gen_range(0..st.npages),
                            _ => st.zipf.as_ref().map(|z| z.sample(&mut sim.k.rng)).unwrap_or(0).min(st.npages - 1),
                        };
                        st.cur = Some(i);
                        i
                    }
                };
                let r = fault(sim, t, ctx, mm, st.start + idx, st.write);
                match r {
                    FaultStep::Done => {
                        st.cur = None;
                        st.i += 1;
                        sim.k.events += 1;
                        if st.gap_ns > 0 {
                            st.next_at = ctx.clock() + st.gap_ns;
                        }
                    }
                    FaultStep::Block(o) => {
                        ps.op = Some(OpState::Touch(st));
                        return Ok(Step::Block(o));
                    }
                    FaultStep::Segv => {
                        return Err(SimError::msg(format!(
                            "{}: SIGSEGV touching a page outside its mapping or without permission",
                            sim.s.tasks[t].name
                        )))
                    }
                    FaultStep::Oom => {
                        ps.op = Some(OpState::Touch(st));
                        return Ok(Step::Block(Outcome::Block { until: Some(backoff(ctx)), io: false }));
                    }
                }
            }
            Ok(Step::Done)
        }
        OpState::Populate { mut vpn, end, write, mlock_rest } => {
            while vpn < end {
                if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS {
                    return Ok(Step::Ongoing(OpState::Populate { vpn, end, write, mlock_rest }));
                }
                match fault(sim, t, ctx, mm, vpn, write) {
                    FaultStep::Done => {
                        sim.k.events += 1;
                        // Pages that were already mapped become mlocked now.
                        let e = sim.k.pte_get(mm, vpn);
                        if pte::present(e) && pte::pfn(e) != sim.k.zero_pfn {
                            if let Some(i) = sim.k.find_vma(mm, vpn) {
                                if sim.k.mm(mm).vmas[i].flags & vm::LOCKED != 0 {
                                    crate::mlock::mlock_vma_page(&mut sim.k, ctx, pte::pfn(e));
                                }
                            }
                        }
                        vpn += 1;
                    }
                    FaultStep::Block(o) => {
                        ps.op = Some(OpState::Populate { vpn, end, write, mlock_rest });
                        return Ok(Step::Block(o));
                    }
                    FaultStep::Segv => vpn += 1,
                    FaultStep::Oom => {
                        ps.op = Some(OpState::Populate { vpn, end, write, mlock_rest });
                        return Ok(Step::Block(Outcome::Block { until: Some(backoff(ctx)), io: false }));
                    }
                }
            }
            // Next mlock chunk, if any.
            if let Some((next, stop, chunk)) = mlock_rest {
                if next < stop {
                    if let Some(b) = lock_write(sim, t, ctx, mm) {
                        ps.op = Some(OpState::Populate { vpn, end, write, mlock_rest });
                        return Ok(b);
                    }
                    let ce = (next + chunk).min(stop);
                    let r = crate::mlock::mlock_fixup(&mut sim.k, ctx, mm, next, ce, true);
                    unlock_write(sim, t, ctx, mm);
                    let w = sim.k.find_vma(mm, next).map(|i| {
                        let v = &sim.k.mm(mm).vmas[i];
                        v.flags & vm::WRITE != 0 && v.flags & vm::SHARED == 0
                    });
                    return Ok(Step::Ongoing(match r {
                        Ok(()) => OpState::Populate {
                            vpn: next,
                            end: ce,
                            write: w.unwrap_or(false),
                            mlock_rest: Some((ce, stop, chunk)),
                        },
                        Err(_) => {
                            ps.vars[ERRNO] = ENOMEM;
                            OpState::Populate { vpn: ce, end: ce, write: false, mlock_rest: Some((ce, stop, chunk)) }
                        }
                    }));
                }
            }
            Ok(Step::Done)
        }
        OpState::Read { file, mut idx, end, base, bs } => {
            while idx < end {
                if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS {
                    return Ok(Step::Ongoing(OpState::Read { file, idx, end, base, bs }));
                }
                let call_end = match (idx - base).checked_div(bs) {
                    Some(calls) => (base + (calls + 1) * bs).min(end),
                    None => end,
                };
                if bs != 0 && (idx - base) % bs == 0 {
                    sim.k.charge(ctx, KFunc::Syscall, sim.k.cost.syscall);
                }
                match sim.k.filemap_read_page(ctx, file, idx, call_end - idx) {
                    crate::filemap::PageRes::Ready(p) => {
                        sim.k.charge(ctx, KFunc::CopyUserGeneric, sim.k.cost.copy_user_page);
                        crate::vmscan::mark_page_accessed(&mut sim.k, p);
                        sim.k.events += 1;
                        idx += 1;
                    }
                    crate::filemap::PageRes::Wait(until) => {
                        ps.op = Some(OpState::Read { file, idx, end, base, bs });
                        return Ok(Step::Block(Outcome::Block { until: Some(until), io: true }));
                    }
                    crate::filemap::PageRes::Oom => {
                        ps.op = Some(OpState::Read { file, idx, end, base, bs });
                        return Ok(Step::Block(Outcome::Block { until: Some(backoff(ctx)), io: false }));
                    }
                }
            }
            Ok(Step::Done)
        }
        OpState::Write { file, mut idx, end } => {
            let mut n = 0;
            while idx < end {
                if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS || ctx.sleep_ns > 0 {
                    return Ok(Step::Ongoing(OpState::Write { file, idx, end }));
                }
                let p = match sim.k.files[file as usize].find(idx) {
                    Some(p) => {
                        if sim.k.fr.has(p, crate::mm_types::pg::LOCKED) {
                            let until = sim.k.inflight.get(&p).copied().unwrap_or(ctx.clock());
                            ps.op = Some(OpState::Write { file, idx, end });
                            return Ok(Step::Block(Outcome::Block { until: Some(until), io: true }));
                        }
                        p
                    }
                    None => match sim.k.alloc_pages(ctx, crate::page_alloc::Gfp::highuser_movable(), 0) {
                        Ok(p) => {
                            sim.k.fr.set(p, crate::mm_types::pg::UPTODATE);
                            sim.k.add_to_page_cache(ctx, file, idx, p);
                            p
                        }
                        Err(_) => {
                            ps.op = Some(OpState::Write { file, idx, end });
                            return Ok(Step::Block(Outcome::Block { until: Some(backoff(ctx)), io: false }));
                        }
                    },
                };
                sim.k.charge(ctx, KFunc::GenericFileWrite, sim.k.cost.copy_user_page);
                crate::page_writeback::set_page_dirty(&mut sim.k, p);
                crate::vmscan::mark_page_accessed(&mut sim.k, p);
                sim.k.events += 1;
                idx += 1;
                n += 1;
                if n % 32 == 0 {
                    crate::page_writeback::balance_dirty_pages(&mut sim.k, ctx, file);
                }
            }
            crate::page_writeback::balance_dirty_pages(&mut sim.k, ctx, file);
            Ok(Step::Done)
        }
    }
}

fn do_fork(sim: &mut Sim, t: usize, ctx: &mut Ctx, ps: &ProgState, start: usize) -> R<()> {
    let Some(mm) = sim.s.tasks[t].mm else { return Ok(()) };
    let name = sim.s.tasks[t].name.clone();
    let child_mm = match sim.k.dup_mm(ctx, mm, &name) {
        Ok(m) => m,
        Err(_) => return Ok(()),
    };
    let c = sim.s.new_task(&name, crate::sched::TaskKind::User, Some(child_mm));
    let mut cps = ProgState::new(ps.prog, ps.vars.len());
    cps.vars = ps.vars.clone();
    cps.pc = start;
    sim.s.tasks[c].prog = Some(Box::new(cps));
    sim.s.tasks[c].parent = Some(t);
    sim.s.tasks[c].cpu_allowed = sim.s.tasks[t].cpu_allowed;
    sim.s.tasks[c].memlock_limit = sim.s.tasks[t].memlock_limit;
    sim.s.tasks[c].last_cpu = ctx.cpu;
    sim.s.tasks[t].children += 1;
    sim.user_alive += 1;
    sim.s.set_runnable(c);
    Ok(())
}

/// The task leaves: drop its locks, its mm reference (the last one frees the address space on
/// this CPU — quicklists fill here), and tell a waiting parent.
fn do_exit(sim: &mut Sim, t: usize, ctx: &mut Ctx) {
    let Some(mm) = sim.s.tasks[t].mm else { return };
    if sim.s.tasks[t].prog.take().is_some() && sim.k.mms[mm as usize].is_some() {
        mmap_lock::mmap_lock_release(&mut sim.k, ctx, &mut sim.s.tasks[t].mmap_lock, mm);
    }
    if sim.k.mms[mm as usize].is_some() {
        let m = sim.k.mm_mut(mm);
        m.users -= 1;
        if m.users == 0 {
            sim.k.exit_mmap(ctx, mm);
        }
    }
    sim.s.tasks[t].mm = None;
    if let Some(p) = sim.s.tasks[t].parent {
        if sim.s.tasks[p].children > 0 {
            sim.s.tasks[p].children -= 1;
        }
        if sim.s.tasks[p].children == 0 && sim.s.tasks[p].waiting_children {
            sim.s.tasks[p].waiting_children = false;
            sim.k.wakeups.push(p);
        }
    }
}

/// End a task that is not running (an OOM victim).
pub fn kill_task(sim: &mut Sim, t: usize) {
    if let Some(mm) = sim.s.tasks[t].mm {
        if sim.k.mms[mm as usize].is_some() {
            let mut g = std::mem::take(&mut sim.k.wakeups);
            sim.k.mm_mut(mm).mmap_sem.cancel(t, &mut g, sim.s.now);
            sim.k.wakeups = g;
        }
    }
    sim.s.runq.retain(|&x| x != t);
    if sim.s.tasks[t].iowait {
        sim.s.set_runnable(t);
        sim.s.runq.retain(|&x| x != t);
    }
    let cpu = sim.s.tasks[t].last_cpu;
    let mut ctx = Ctx { cpu, node: sim.k.cfg.node_of_cpu(cpu), task: t, now: sim.s.now, ..Default::default() };
    do_exit(sim, t, &mut ctx);
    if sim.s.tasks[t].forever {
        sim.user_forever -= 1;
    }
    sim.s.tasks[t].state = TState::Exited;
    sim.s.tasks[t].gen += 1;
    sim.user_alive -= 1;
    sim.check_workload_end();
}
