//! The system-call layer a task's program calls into (`workload::syscalls::Syscalls`): each
//! call takes the locks it needs (mmap_sem, by the policy in `mmap_lock`) and calls the mm's
//! own functions (`mmap::do_mmap`, `mlock`, `filemap`, `page_writeback::vfs_fsync`), plus the
//! process calls (fork, clone, wait, exit) on the scheduler's tasks.

use std::sync::Arc;

use crate::kernel::Ctx;
use crate::mmap_lock::{self, FaultStep};
use crate::sched::{Outcome, TState, TaskKind, QUANTUM_NS};
use crate::sim::Sim;
use crate::stats::kfunc::KFunc;
use crate::workload::exec;
use crate::workload::interp::ProgState;
use crate::workload::syscalls::{Access, Mapped, MmapArgs, OpenFile, Progress, Sys, Syscalls, WriteCalls};

/// One task's view of the machine during one quantum.
pub struct TaskSyscalls<'a> {
    pub sim: &'a mut Sim,
    pub t: usize,
    pub ctx: &'a mut Ctx,
}

impl TaskSyscalls<'_> {
    fn mm(&self) -> u32 {
        self.sim.s.tasks[self.t].mm.unwrap_or(0)
    }

    /// Run `f` holding mmap_sem for write, or block to wait for it.
    fn with_mmap_write<T>(&mut self, f: impl FnOnce(&mut Self, u32) -> T) -> Sys<T> {
        let (t, mm) = (self.t, self.mm());
        if let Some(o) =
            mmap_lock::mmap_write_lock(&mut self.sim.k, t, self.ctx, &mut self.sim.s.tasks[t].mmap_lock, mm)
        {
            return Sys::Block(o);
        }
        let r = f(self, mm);
        let now = self.ctx.clock();
        mmap_lock::mmap_write_unlock(&mut self.sim.k, now, &mut self.sim.s.tasks[t].mmap_lock, mm);
        Sys::Ok(r)
    }
}

impl Syscalls for TaskSyscalls<'_> {
    type Rng = rand_pcg::Pcg64;
    fn need_resched(&self) -> bool {
        self.ctx.sys_ns + self.ctx.user_ns >= QUANTUM_NS || self.ctx.sleep_ns > 0 || self.ctx.resched
    }
    fn quantum_spent(&self) -> bool {
        self.ctx.sys_ns + self.ctx.user_ns >= QUANTUM_NS || self.ctx.resched
    }
    fn clock(&self) -> u64 {
        self.ctx.clock()
    }
    fn compute(&mut self, ns: u64) -> u64 {
        let slice = ns.min(QUANTUM_NS);
        self.ctx.user_ns += slice;
        slice
    }
    fn rng(&mut self) -> &mut rand_pcg::Pcg64 {
        &mut self.sim.s.tasks[self.t].rng
    }
    fn has_mm(&self) -> bool {
        self.sim.s.tasks[self.t].mm.is_some()
    }
    fn comm(&self) -> String {
        self.sim.s.tasks[self.t].name.clone()
    }
    fn syscall_entry(&mut self) {
        self.sim.k.charge(self.ctx, KFunc::Syscall, self.sim.k.cost.syscall);
    }

    fn fork(&mut self, child: ProgState) -> Sys<()> {
        do_fork(self.sim, self.t, self.ctx, child)
    }
    fn clone_threads(&mut self, threads: Vec<ProgState>) {
        let (sim, t) = (&mut *self.sim, self.t);
        let Some(mm) = sim.s.tasks[t].mm else { return };
        let n = threads.len() as u32;
        for (i, cps) in threads.into_iter().enumerate() {
            let name = format!("{}:{i}", sim.s.tasks[t].name);
            let c = sim.s.new_task(&name, TaskKind::User, Some(mm));
            sim.k.task_created(c, sim.s.tasks[c].pid, &name);
            sim.s.tasks[c].prog = Some(Box::new(cps));
            sim.s.tasks[c].rng = crate::prandom::split(&mut sim.s.tasks[t].rng);
            sim.s.tasks[c].parent = Some(t);
            sim.s.tasks[c].cpu_allowed = sim.s.tasks[t].cpu_allowed;
            sim.s.set_runnable(c);
            sim.user_alive += 1;
        }
        sim.k.mm_mut(mm).users += n;
        sim.s.tasks[t].children += n;
    }
    fn wait_children(&mut self) -> bool {
        let task = &mut self.sim.s.tasks[self.t];
        if task.children > 0 {
            task.waiting_children = true;
        }
        task.children > 0
    }
    fn children_pending(&mut self) -> bool {
        let task = &mut self.sim.s.tasks[self.t];
        if task.waiting_children && task.children > 0 {
            return true;
        }
        task.waiting_children = false;
        false
    }
    fn queue_take(&mut self, queue: &str, n: i64) -> Option<i64> {
        let mm = self.sim.s.tasks[self.t].mm.unwrap_or(0);
        let next = self.sim.queues.entry((mm, queue.to_string())).or_insert(0);
        if *next < n {
            *next += 1;
            Some(*next - 1)
        } else {
            None
        }
    }
    fn nr_cpus(&self) -> i64 {
        self.sim.s.cpus.len() as i64
    }
    fn sched_setaffinity(&mut self, cpu: u32) -> bool {
        self.sim.s.tasks[self.t].cpu_allowed = Some(cpu);
        cpu != self.ctx.cpu
    }
    fn mark(&mut self, name: &str) {
        let v = self.ctx.clock() as f64 / 1e9;
        self.sim.metric(name, v);
    }

    fn mem_bytes(&self, q: crate::workload::ast::MemQuantity) -> u64 {
        use crate::workload::ast::MemQuantity;
        let k = &self.sim.k;
        let pages = match q {
            MemQuantity::SwapUsed => crate::swap_state::total_swap_pages(k) - crate::swap_state::free_swap_pages(k),
            MemQuantity::Free => k.nr_free_pages(),
            MemQuantity::Cached => k.g.file,
        };
        pages * crate::machine::PAGE_SIZE
    }

    fn region(&self, name: &str) -> Result<(u64, u64), String> {
        crate::mmap::region_lookup(&self.sim.k, self.mm(), name)
    }
    fn mmap(&mut self, a: &MmapArgs) -> Result<Sys<Mapped>, String> {
        match self.with_mmap_write(|s, mm| crate::mmap::do_mmap(&mut s.sim.k, s.ctx, mm, a)) {
            Sys::Ok(r) => r.map(Sys::Ok),
            Sys::Block(o) => Ok(Sys::Block(o)),
        }
    }
    fn munmap(&mut self, start: u64, pages: u64) -> Sys<()> {
        self.with_mmap_write(|s, mm| s.sim.k.do_munmap(s.ctx, mm, start, pages))
    }
    fn mlock_chunk(&mut self, start: u64, end: u64) -> Sys<Result<bool, i64>> {
        self.with_mmap_write(|s, mm| crate::mlock::mlock_chunk(&mut s.sim.k, s.ctx, mm, start, end))
    }
    fn munlock(&mut self, start: u64, end: u64) -> Sys<()> {
        self.with_mmap_write(|s, mm| {
            let _ = crate::mlock::mlock_fixup(&mut s.sim.k, s.ctx, mm, start, end, false);
        })
    }
    fn madvise_dontneed(&mut self, start: u64, end: u64) -> i64 {
        let mm = self.mm();
        crate::mmap::madvise_dontneed(&mut self.sim.k, self.ctx, mm, start, end)
    }
    fn access(&mut self, vpn: u64, write: bool) -> Access {
        let (t, mm) = (self.t, self.mm());
        let lk = &mut self.sim.s.tasks[t].mmap_lock;
        match mmap_lock::do_user_addr_fault(&mut self.sim.k, t, self.ctx, lk, mm, vpn, write) {
            FaultStep::Done => {
                self.sim.k.events += 1;
                Access::Done
            }
            FaultStep::Block(o) => Access::Block(o),
            FaultStep::Segv => Access::Segv,
            FaultStep::Oom => {
                if std::mem::take(&mut self.ctx.alloc_refused) && self.sim.k.profile.fault_oom_kills {
                    mmap_lock::out_of_memory_kill_current(&mut self.sim.k, self.ctx, mm);
                }
                Access::Oom(crate::oom_kill::alloc_retry_at(self.ctx))
            }
        }
    }
    fn access_present_run(&mut self, vpn: u64, n: u64, stride: u64, write: bool) -> u64 {
        let (t, mm) = (self.t, self.mm());
        let lk = &mut self.sim.s.tasks[t].mmap_lock;
        let done = mmap_lock::access_present_run(&mut self.sim.k, self.ctx, lk, mm, vpn, n, stride, write);
        self.sim.k.events += done;
        done
    }
    fn access_present_pages(&mut self, base: u64, pages: &[u64], write: bool) -> usize {
        let (t, mm) = (self.t, self.mm());
        let lk = &mut self.sim.s.tasks[t].mmap_lock;
        let done = mmap_lock::access_present_pages(&mut self.sim.k, self.ctx, lk, mm, base, pages, write);
        self.sim.k.events += done as u64;
        done
    }
    fn prefetch(&mut self, vpn: u64) {
        let mm = self.mm();
        self.sim.k.prefetch_pte(mm, vpn);
    }
    fn populate(&mut self, vpn: &mut u64, end: u64, write: bool) -> Progress {
        let (t, mm) = (self.t, self.mm());
        let lk = &mut self.sim.s.tasks[t].mmap_lock;
        crate::mlock::populate_vma_page_range(&mut self.sim.k, t, self.ctx, lk, mm, vpn, end, write)
    }

    fn open(&mut self, name: &str) -> Result<OpenFile, String> {
        let f = crate::filemap::file_lookup(&self.sim.k, name)?;
        // Skipped at 0 (vmlab's own table), as read_pages is: no output moves without a fit.
        if self.sim.k.cost.path_openat > 0 {
            self.sim.k.charge(self.ctx, KFunc::PathOpenat, self.sim.k.cost.path_openat);
        }
        crate::dcache::lookup(&mut self.sim.k, self.ctx, f);
        Ok(OpenFile { id: f, size: self.sim.k.files[f as usize].size })
    }
    fn extend(&mut self, file: u32, size: u64) -> u64 {
        let f = &mut self.sim.k.files[file as usize];
        f.extend(size);
        f.size
    }
    fn read(&mut self, file: u32, idx: &mut u64, end: u64, base: u64, bs: u64) -> Progress {
        crate::filemap::filemap_read(&mut self.sim.k, self.ctx, file, idx, end, base, bs)
    }
    fn write(&mut self, file: u32, idx: &mut u64, end: u64, calls: WriteCalls) -> Progress {
        crate::filemap::generic_perform_write(&mut self.sim.k, self.ctx, file, idx, end, calls)
    }
    fn create(&mut self, name: &str, size: u64, disk: Option<&str>) -> Result<(), String> {
        let d = match disk {
            None => 0,
            Some(dn) => self.sim.disk_ids.get(dn).copied().ok_or_else(|| {
                let hint = crate::workload::error::suggest(dn, self.sim.disk_ids.keys().map(|s| s.as_str()))
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                format!("no disk named `{dn}`{hint}")
            })?,
        };
        crate::filemap::do_creat(&mut self.sim.k, self.ctx, name, size, d);
        Ok(())
    }
    fn unlink(&mut self, name: &str) -> i64 {
        match self.sim.k.file_ids.get(name) {
            Some(f) => {
                self.sim.k.file_unlink(self.ctx, f);
                0
            }
            None => ENOENT,
        }
    }
    fn send(&mut self, left: &mut u64, rate: u64, sndbuf: u64) -> Progress {
        crate::tcp::tcp_sendmsg(&mut self.sim.k, self.ctx, self.t, left, rate, sndbuf)
    }
    fn fsync(&mut self, name: &str) -> Result<u64, String> {
        let f = crate::filemap::file_lookup(&self.sim.k, name)?;
        let until = crate::page_writeback::vfs_fsync(&mut self.sim.k, self.ctx, f);
        let d = self.sim.k.files[f as usize].disk;
        if self.sim.k.loops.queued(d) > 0 {
            // Its loop worker has not submitted them all: no completion to wait until yet.
            crate::loop_dev::wait_for_drain(&mut self.sim.k, d, self.ctx.task);
            return Ok(u64::MAX / 4);
        }
        Ok(until)
    }
    fn drop_caches(&mut self) {
        self.sim.k.drop_caches(self.ctx);
    }
    fn swapoff(&mut self, pos: &mut u64) -> Result<Progress, i64> {
        use crate::swapfile::{self, Unuse};
        if *pos == 0 {
            if !swapfile::swapoff_begin(&mut self.sim.k) {
                return Err(EINVAL);
            }
            *pos = 1;
        }
        loop {
            let Some(s) = swapfile::find_next_to_unuse(&self.sim.k, (*pos - 1) as u32) else {
                swapfile::swapoff_end(&mut self.sim.k);
                return Ok(Progress::Done);
            };
            *pos = s as u64 + 1;
            match swapfile::unuse_slot(&mut self.sim.k, self.ctx, s) {
                Unuse::Next => *pos += 1,
                Unuse::Wait(t) => {
                    return Ok(Progress::Block(crate::workload::syscalls::Outcome::Block { until: Some(t), io: true }))
                }
                Unuse::NoMem => {
                    swapfile::swapoff_abort(&mut self.sim.k);
                    return Err(ENOMEM);
                }
            }
            if self.need_resched() {
                return Ok(Progress::Preempted);
            }
        }
    }
}

const ENOENT: i64 = 2;
const ENOMEM: i64 = 12;
const EINVAL: i64 = 22;

/// Run one quantum of a user task.
pub fn step(sim: &mut Sim, t: usize, ctx: &mut Ctx) -> Outcome {
    let Some(mut ps) = sim.s.tasks[t].prog.take() else { return Outcome::Exit };
    let prog = Arc::clone(&sim.programs[ps.prog]);
    let out = match exec::run(&mut TaskSyscalls { sim, t, ctx }, &mut ps, &prog) {
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

/// `do_fork` → `copy_process`: the task's kernel memory (`dup_task_struct`), then `copy_mm` →
/// `dup_mm`: the child's mm and pgd (`mm_init`), and `dup_mmap` under the parent's mmap_sem
/// held for write, as every era takes it (2.4.27 `copy_mm`: `down_write(&oldmm->mmap_sem)`
/// around `dup_mmap`; 6.x `dup_mmap`: `mmap_write_lock_killable(oldmm)`, each VMA
/// `vma_start_write`). So a fault or an mmap of another thread of the parent waits for the copy,
/// and a copy waits for a fault sleeping on I/O with mmap_sem held (2.6.26's). The child's own
/// mmap_sem (6.x takes it nested) is not modelled: no task can reach the child before this
/// returns. A throttled allocation sleeps where it is, holding what it holds (`Forking`).
fn do_fork(sim: &mut Sim, t: usize, ctx: &mut Ctx, child: ProgState) -> Sys<()> {
    use crate::page_alloc::AllocFail;
    let Some(mm) = sim.s.tasks[t].mm else { return Sys::Ok(()) };
    let name = sim.s.tasks[t].name.clone();
    let mut f = match sim.s.tasks[t].forking.take() {
        Some(f) => f,
        None => {
            let kmem = if sim.k.task_mem.is_some() {
                match crate::fork::dup_task_struct(&mut sim.k, ctx) {
                    Some(m) => m,
                    None => return Sys::Ok(()),
                }
            } else {
                (crate::mm_types::NIL, crate::mm_types::NIL)
            };
            Box::new(crate::fork::Forking { kmem, child: None, cursor: Default::default() })
        }
    };
    let child_mm = match f.child {
        Some(c) => c,
        None => match sim.k.dup_mm_init(ctx, mm, &name) {
            Ok(c) => c,
            Err(e) => return fork_sleeps_or_fails(sim, t, ctx, f, e),
        },
    };
    f.child = Some(child_mm);
    if let Some(o) = mmap_lock::mmap_write_lock(&mut sim.k, t, ctx, &mut sim.s.tasks[t].mmap_lock, mm) {
        sim.s.tasks[t].forking = Some(f);
        return Sys::Block(o);
    }
    if let Err(e) = sim.k.dup_mmap(ctx, child_mm, mm, &mut f.cursor) {
        if e != AllocFail::Throttled {
            sim.k.exit_mmap(ctx, child_mm);
            f.child = None;
            let now = ctx.clock();
            mmap_lock::mmap_write_unlock(&mut sim.k, now, &mut sim.s.tasks[t].mmap_lock, mm);
        }
        return fork_sleeps_or_fails(sim, t, ctx, f, e);
    }
    let now = ctx.clock();
    mmap_lock::mmap_write_unlock(&mut sim.k, now, &mut sim.s.tasks[t].mmap_lock, mm);
    let kmem = f.kmem;
    let c = sim.s.new_task(&name, TaskKind::User, Some(child_mm));
    sim.k.task_created(c, sim.s.tasks[c].pid, &name);
    sim.s.tasks[c].prog = Some(Box::new(child));
    sim.s.tasks[c].rng = crate::prandom::split(&mut sim.s.tasks[t].rng);
    sim.s.tasks[c].parent = Some(t);
    sim.s.tasks[c].cpu_allowed = sim.s.tasks[t].cpu_allowed;
    sim.s.tasks[c].memlock_limit = sim.s.tasks[t].memlock_limit;
    sim.s.tasks[c].memcg = sim.s.tasks[t].memcg;
    sim.s.tasks[c].last_cpu = ctx.cpu;
    sim.s.tasks[c].kmem = kmem;
    sim.s.tasks[t].children += 1;
    sim.user_alive += 1;
    sim.s.set_runnable(c);
    Sys::Ok(())
}

/// A fork's allocation failed: a throttled one sleeps until the allocator's retry time and the
/// fork goes on from where it stopped; any other fails the fork (-ENOMEM), its memory given back.
fn fork_sleeps_or_fails(
    sim: &mut Sim,
    t: usize,
    ctx: &mut Ctx,
    f: Box<crate::fork::Forking>,
    e: crate::page_alloc::AllocFail,
) -> Sys<()> {
    if e == crate::page_alloc::AllocFail::Throttled {
        let until = crate::oom_kill::alloc_retry_at(ctx);
        sim.s.tasks[t].forking = Some(f);
        return Sys::Block(Outcome::Block { until: Some(until), io: false });
    }
    fork_abandon(sim, t, ctx, *f);
    Sys::Ok(())
}

/// What a fork that will not finish holds goes back: the half-built child (`mmput` →
/// `exit_mmap`) and the task's kernel memory.
fn fork_abandon(sim: &mut Sim, t: usize, ctx: &mut Ctx, f: crate::fork::Forking) {
    if let Some(c) = f.child {
        sim.k.exit_mmap(ctx, c);
    }
    if let Some(mm) = sim.s.tasks[t].mm {
        if sim.k.mms[mm as usize].is_some() {
            let now = ctx.clock();
            mmap_lock::mmap_write_unlock(&mut sim.k, now, &mut sim.s.tasks[t].mmap_lock, mm);
        }
    }
    crate::fork::free_task(&mut sim.k, ctx, f.kmem);
}

/// The task leaves: drop its locks, its mm reference (the last one frees the address space on
/// this CPU — quicklists fill here), and tell a waiting parent.
fn do_exit(sim: &mut Sim, t: usize, ctx: &mut Ctx) {
    let Some(mm) = sim.s.tasks[t].mm else { return };
    // Killed inside a fork (an OOM victim asleep in it): the half-built child goes too.
    if let Some(f) = sim.s.tasks[t].forking.take() {
        fork_abandon(sim, t, ctx, *f);
    }
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
    let kmem = std::mem::replace(&mut sim.s.tasks[t].kmem, (crate::mm_types::NIL, crate::mm_types::NIL));
    crate::fork::free_task(&mut sim.k, ctx, kmem);
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
            if !sim.k.profile.mmap_sem_killable && sim.k.mm(mm).mmap_sem.is_waiting(t) {
                // Asleep TASK_UNINTERRUPTIBLE in down_read/down_write: the signal is only seen
                // once the lock is granted, so the task stays queued and exits (releasing the lock
                // and its memory) when it next runs.
                if let Some(p) = sim.s.tasks[t].prog.as_mut() {
                    p.pc = usize::MAX;
                }
                return;
            }
            let now = sim.s.now;
            mmap_lock::mmap_lock_killed(&mut sim.k, t, now, &mut sim.s.tasks[t].mmap_lock, mm);
        }
    }
    sim.s.runq.retain(|&x| x != t);
    if sim.s.tasks[t].iowait {
        sim.s.set_runnable(t);
        sim.s.runq.retain(|&x| x != t);
    }
    let cpu = sim.s.tasks[t].last_cpu;
    // A task killed asleep in reclaim_throttle leaves the queue (its wait counts no more).
    crate::vmscan::throttle::finish_wait(&mut sim.k, t, cpu, sim.s.now);
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
