//! A loop device's worker (drivers/block/loop.c, 5.15+; read in torvalds/linux's 6.x loop.c):
//! the disk is an image file behind `losetup --direct-io=on`, and its write requests do not go
//! to the backing device when the block layer issues them. `loop_queue_rq` → `loop_queue_work`
//! puts the request on the device's command list and `queue_work`s the root cgroup's work
//! (`rootcg_work`) on `lo->workqueue` (`alloc_workqueue("loop%d", WQ_UNBOUND | WQ_FREEZABLE, 0)`);
//! a work already pending is not queued again, and queueing an idle one wakes a kworker of the
//! unbound pool (kernel/workqueue.c `kick_pool` → `wake_up_process`). That kworker runs
//! `loop_rootcg_workfn` → `loop_process_work` when the scheduler gives it a CPU: it takes the
//! commands off the list one by one until it is empty — commands queued while it runs included
//! — and for each `loop_handle_cmd` → `do_req_filebacked` → `lo_rw_aio` builds one `IOCB_DIRECT`
//! kiocb over the request's pages and calls the backing file's `write_iter`, which submits the
//! direct write and returns `-EIOCBQUEUED`; `cond_resched()` between commands. The request
//! completes from the backing write's completion (`lo_rw_aio_complete` →
//! `blk_mq_complete_request`). So a request's time is the worker's wait for a CPU, its walk of
//! the list up to it, and the backing device's service; on a busy host the first can be
//! milliseconds (docs/REAL.md, "Session 30 (dw44)" and "Session 31 (dw45)").
//!
//! vmlab: the worker is a kernel thread on the simulated CPUs ([`crate::sched::TaskKind::LoopWorker`]),
//! woken at a request's issue time when it sleeps; each command costs `io_submit` of CPU
//! (`lo_rw_aio`'s submission of one direct write) and then goes to the disk's model (the
//! backing device) at the worker's clock. What the command carries ends then: its pages'
//! writeback (`IoDone::Write`), or, for a bio of an ext4 io_end, one bio of that io_end, which
//! is released to `ext4-rsv-conversion` once it is put and every bio of it is submitted
//! ([`LoopIoEnd`]). The writeback throttle counts a queued request in flight from its issue
//! with no completion yet (`blk_wbt::UNKNOWN`); a writer that would sleep until that
//! completion waits for the worker instead and asks again ([`wait_for_worker`]). Reads and swap
//! writes go to the device at once, as before (not routed through the worker).

use std::collections::VecDeque;

use crate::kernel::{Ctx, IoDone, Kernel};
use crate::mm_types::Pfn;
use crate::sched::{Outcome, QUANTUM_NS};
use crate::stats::kfunc::KFunc;

/// What a command ends once its backing write completes.
#[derive(Clone, Debug)]
pub enum LoopEnd {
    /// Its pages end writeback at the completion (`IoDone::Write`).
    Pages(Vec<Pfn>),
    /// One bio of the io_end in slot `n` of [`Loops`]: the completion only counts toward it.
    IoEnd(u32),
}

/// A request on the worker's list (`lo->rootcg_cmd_list`).
#[derive(Clone, Debug)]
pub struct LoopCmd {
    /// When the block layer issued it (`loop_queue_rq`).
    pub issued: u64,
    pub offset: u64,
    pub bytes: u64,
    pub segs: u32,
    pub end: LoopEnd,
}

/// One loop device: its command list and its worker.
#[derive(Clone, Debug)]
pub struct LoopDev {
    pub cmds: VecDeque<LoopCmd>,
    /// The worker's task (usize::MAX: none).
    pub task: usize,
    /// Tasks that wait for the worker to submit what is queued (a writer throttled on a
    /// completion the worker has not given yet): woken when it has run.
    pub waiters: Vec<usize>,
    /// Tasks in `fsync` waiting for every queued command to complete: woken, once the worker
    /// has submitted the last, at the disk's last completion.
    pub drain_waiters: Vec<usize>,
    /// Executions of the work that submitted something, and commands submitted.
    pub runs: u64,
    pub submitted: u64,
    /// Σ over the worker's quanta of the wait of the command at the head of its list, from its
    /// issue to the quantum's start: the worker's wait for a CPU (and for its turn).
    pub waited_ns: u64,
}

impl Default for LoopDev {
    fn default() -> Self {
        LoopDev {
            cmds: VecDeque::new(),
            task: usize::MAX,
            waiters: Vec::new(),
            drain_waiters: Vec::new(),
            runs: 0,
            submitted: 0,
            waited_ns: 0,
        }
    }
}

/// An ext4 io_end whose bios went to a loop device: released once it is put (`closed`) and
/// its last bio has been submitted and so has a completion.
#[derive(Clone, Debug, Default)]
pub struct LoopIoEnd {
    pub disk: usize,
    pub pages: Vec<Pfn>,
    pub bios: Vec<u32>,
    /// The latest completion of its submitted bios, and when it was put.
    pub end_at: u64,
    pub put_at: u64,
    /// Bios still on the worker's list.
    pub pending: u32,
    pub closed: bool,
}

/// Every loop device's state (indexed by disk), and the io_ends waiting for their bios.
#[derive(Clone, Debug, Default)]
pub struct Loops {
    pub devs: Vec<LoopDev>,
    io_ends: Vec<LoopIoEnd>,
    free: Vec<u32>,
    /// (time, task) wake-ups at a request's issue time for the scheduler (`Sim` drains them).
    pub wakes: Vec<(u64, usize)>,
}

impl Loops {
    fn dev(&mut self, disk: usize) -> &mut LoopDev {
        if self.devs.len() <= disk {
            self.devs.resize_with(disk + 1, Default::default);
        }
        &mut self.devs[disk]
    }

    /// A new io_end slot for `disk`.
    pub fn open_io_end(&mut self, disk: usize) -> u32 {
        let e = LoopIoEnd { disk, ..Default::default() };
        match self.free.pop() {
            Some(n) => {
                self.io_ends[n as usize] = e;
                n
            }
            None => {
                self.io_ends.push(e);
                (self.io_ends.len() - 1) as u32
            }
        }
    }

    /// Commands on `disk`'s list.
    pub fn queued(&self, disk: usize) -> usize {
        self.devs.get(disk).map_or(0, |d| d.cmds.len())
    }
}

/// `loop_queue_rq` at `ctx`'s clock: the command joins the list, the throttle counts it in
/// flight, and the worker is woken at that instant if it sleeps.
pub fn queue_cmd(k: &mut Kernel, ctx: &Ctx, disk: usize, offset: u64, bytes: u64, segs: u32, end: LoopEnd) {
    let now = ctx.clock();
    if let LoopEnd::IoEnd(n) = end {
        k.loops.io_ends[n as usize].pending += 1;
    }
    k.disks[disk].loop_queued(now);
    let dev = k.loops.dev(disk);
    dev.cmds.push_back(LoopCmd { issued: now, offset, bytes, segs, end });
    let task = dev.task;
    if task != usize::MAX {
        k.loops.wakes.push((now, task));
    }
}

/// The pages an io_end gathered, put at `at` (`ext4_put_io_end_defer`): released now if every
/// bio of it has been submitted, else when the worker submits the last.
pub fn put_io_end(k: &mut Kernel, n: u32, at: u64, pages: Vec<Pfn>, bios: &[u32]) {
    let e = &mut k.loops.io_ends[n as usize];
    e.pages = pages;
    e.bios.clear();
    e.bios.extend_from_slice(bios);
    e.put_at = at;
    e.closed = true;
    maybe_release(k, n);
}

fn maybe_release(k: &mut Kernel, n: u32) {
    let e = &mut k.loops.io_ends[n as usize];
    if !e.closed || e.pending > 0 {
        return;
    }
    let e = std::mem::take(e);
    k.loops.free.push(n);
    let at = e.end_at.max(e.put_at);
    crate::ext4_page_io::release_io_end(k, e.disk, at, e.pages, e.bios.iter().copied());
}

/// A writer that would sleep until a completion the worker of `disk` has not given yet: it
/// waits for the worker to submit what is queued (then it is woken and asks again).
pub fn wait_for_worker(k: &mut Kernel, disk: usize, task: usize) {
    let dev = k.loops.dev(disk);
    if !dev.waiters.contains(&task) {
        dev.waiters.push(task);
    }
    if dev.cmds.is_empty() {
        // Nothing left to submit: whatever it waits for has a completion now.
        let w = std::mem::take(&mut dev.waiters);
        k.wakeups.extend(w);
    }
}

/// A task in `fsync` (`filemap_fdatawait` on the pages it started) whose disk's worker still
/// has commands queued: it sleeps until the worker has submitted them, then until the disk's
/// last completion and its io_ends' release.
pub fn wait_for_drain(k: &mut Kernel, disk: usize, task: usize) {
    let dev = k.loops.dev(disk);
    if !dev.drain_waiters.contains(&task) {
        dev.drain_waiters.push(task);
    }
}

/// When `disk`'s last submitted write and the release of its io_ends are done.
fn drained_at(k: &Kernel, disk: usize) -> u64 {
    k.disks[disk].queued_until().max(k.releases.idle_at(disk))
}

/// One quantum of the worker (`loop_process_work`): submit the commands on the list that were
/// issued by the worker's clock, in order, until the list is empty or its quantum is used.
pub fn loop_process_work(k: &mut Kernel, ctx: &mut Ctx, disk: usize) -> Outcome {
    let mut any = false;
    let dev = k.loops.dev(disk);
    if let Some(head) = dev.cmds.front().filter(|c| c.issued <= ctx.now) {
        dev.waited_ns += ctx.now - head.issued;
    }
    while let Some(head) = k.loops.dev(disk).cmds.front() {
        if head.issued > ctx.clock() {
            // Issued later than the worker has got to (quanta are played out at their start):
            // it is woken for it then.
            let at = head.issued;
            finish_run(k, disk, any);
            return Outcome::Block { until: Some(at), io: false };
        }
        if ctx.sys_ns >= QUANTUM_NS {
            finish_run(k, disk, any);
            return Outcome::Continue;
        }
        let cmd = k.loops.devs[disk].cmds.pop_front().expect("the head");
        any = true;
        // lo_rw_aio: one direct kiocb over the request's pages, submitted to the backing file.
        k.charge(ctx, KFunc::LoopHandleCmd, k.cost.io_submit);
        let done = k.disks[disk].submit_loop_cmd(ctx.clock(), cmd.offset, cmd.bytes, cmd.segs);
        k.loops.devs[disk].submitted += 1;
        match cmd.end {
            LoopEnd::Pages(pages) => k.queue_io_done(done, disk, pages, true),
            LoopEnd::IoEnd(n) => {
                let irq = !k.disks[disk].last_merged();
                k.io_queue.push((done, IoDone::Write { pages: Vec::new(), disk, irq }));
                let e = &mut k.loops.io_ends[n as usize];
                e.end_at = e.end_at.max(done);
                e.pending -= 1;
                maybe_release(k, n);
            }
        }
    }
    finish_run(k, disk, any);
    Outcome::Block { until: None, io: false }
}

/// The end of a quantum of the worker: waiters see the completions it has given, and once
/// the list is empty an `fsync` wakes at the last of them.
fn finish_run(k: &mut Kernel, disk: usize, any: bool) {
    let dev = &mut k.loops.devs[disk];
    dev.runs += any as u64;
    if !dev.waiters.is_empty() {
        let w = std::mem::take(&mut dev.waiters);
        k.wakeups.extend(w);
    }
    if dev.cmds.is_empty() && !dev.drain_waiters.is_empty() {
        let w = std::mem::take(&mut k.loops.devs[disk].drain_waiters);
        let at = drained_at(k, disk);
        k.loops.wakes.extend(w.into_iter().map(|t| (at, t)));
    }
}

#[cfg(test)]
#[path = "loop_dev_tests.rs"]
mod tests;
