//! Tasks, CPUs and simulated time: a discrete-event loop in nanoseconds. A CPU runs one task
//! for a quantum; the kernel work the task does in it is charged as CPU time, so `us/sy/id/wa`,
//! "kswapd at 100 %" and run times are measured, not assumed. State changes take effect at the
//! start of the quantum; quanta are short (≤ 1 ms of CPU) so interleavings stay faithful.

use std::collections::VecDeque;

use crate::kernel::{Ctx, IoDone, Kernel};
use crate::page_writeback::FlushAction;
use crate::vmscan::KswapdAction;
use crate::workload::interp::ProgState;

/// Longest stretch of CPU a task runs before others get a turn.
pub const QUANTUM_NS: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    User,
    Kswapd(usize),
    /// The flusher of writeback context `n` (`Kernel::wbs`).
    Flusher(usize),
    /// 2.4's kreclaimd: refills zones' free lists from their inactive_clean lists.
    Kreclaimd,
    /// The worker of the loop device on disk `n` (`loop_dev`).
    LoopWorker(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TState {
    Runnable,
    Running(u32),
    Blocked,
    Exited,
}

/// How a task's quantum ends (the interpreter's and the kernel threads' alike).
pub use crate::workload::syscalls::Outcome;

pub struct Task {
    pub pid: u32,
    pub name: String,
    pub kind: TaskKind,
    pub state: TState,
    pub mm: Option<u32>,
    /// sched_setaffinity to a single CPU.
    pub cpu_allowed: Option<u32>,
    /// Bound to the CPUs of one node (kswapd: `set_cpus_allowed_ptr(cpumask_of_node)`).
    pub node_allowed: Option<usize>,
    pub last_cpu: u32,
    pub utime_ns: u64,
    pub stime_ns: u64,
    /// Timer generation: a stale timer wakeup is ignored.
    pub gen: u64,
    pub wake_pending: bool,
    /// Woken from the `reclaim_wait` queue it joined in the quantum it is running.
    pub throttle_woken: bool,
    pub iowait: bool,
    pub forever: bool,
    pub prog: Option<Box<ProgState>>,
    pub parent: Option<usize>,
    /// Children (forked processes or threads) still alive, and whether we wait for them.
    pub children: u32,
    pub waiting_children: bool,
    /// RLIMIT_MEMLOCK of the process, in pages (u64::MAX: unlimited).
    pub memlock_limit: u64,
    /// The memory cgroup the process runs in (0: the root).
    pub memcg: u8,
    /// What the task holds of its mm's mmap_sem, kept across quanta (a fault waiting for I/O).
    pub mmap_lock: crate::mmap_lock::MmapLockState,
    /// The task's own random stream (`prandom`): its accesses do not depend on what others draw.
    pub rng: rand_pcg::Pcg64,
    /// `[fork]`: (task_struct slab, kernel stack) a forked task holds; NIL without them.
    pub kmem: (crate::mm_types::Pfn, crate::mm_types::Pfn),
    /// A fork this task has begun and sleeps in (`fork::Forking`).
    pub forking: Option<Box<crate::fork::Forking>>,
    /// Where the task's time off the CPU went, ns (see [`Wait`]).
    pub waits: [u64; Wait::COUNT],
    /// Since when it sleeps or waits for a CPU, and which [`Wait`] that is (u64::MAX: not
    /// started, so its time before `Start` is no wait).
    pub wait_since: u64,
    pub wait_kind: Wait,
}

/// Why a task is off the CPU: the split of elapsed time a run's host counterpart gets from its
/// group's `io.pressure` and `cpu.pressure` (and `getrusage`'s CPU time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Blocked on I/O (D state with iowait: a fault's read, a page under I/O).
    Io = 0,
    /// Asleep after a quantum's work, iowait off: reclaim waiting for its writes' room or in
    /// `reclaim_throttle`, the writeback throttle, a fault's back-off.
    Reclaim = 1,
    /// Any other sleep (locks, timers, children).
    Other = 2,
    /// Runnable, waiting for a CPU.
    Cpu = 3,
}

impl Wait {
    pub const COUNT: usize = 4;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The CPU finished its quantum.
    CpuDone(u32),
    /// Timer wakeup of a task (generation).
    Wake(usize, u64),
    /// A block I/O completed (index into `io_slab`).
    Io(usize),
    /// Take a timeline sample.
    Sample,
    /// Start a process.
    Start(usize),
    /// A kernel thread ran briefly on an idle CPU: the idle loop goes round once more.
    IdleTick(u32),
    /// A network-receive softirq of `[[netrx]]` source i (atomic slab allocation).
    NetRx(usize),
    /// An allocation or free of `[[kmem]]` source i (long-lived kernel memory).
    Kmem(usize),
    /// An interrupt handler that ran on an idle CPU returned: the CPU can take a task again.
    IrqEnd(u32),
    /// Clients' ACKs are due: free the acknowledged pages of TCP write queues.
    TcpAck,
    /// Free page reporting's delayed work is due (`page_reporting_process`).
    PageReporting,
    /// Disk i's scheduler may dispatch a held write (`blk_mq_run_hw_queue` after a completion).
    BlkRun(usize),
}

#[derive(Clone, Debug, Default)]
pub struct Cpu {
    pub running: Option<usize>,
    /// The task this CPU ran last (a switch to another one counts in `cs`).
    pub last: Option<usize>,
    pub outcome: Option<Outcome>,
    pub sleep_after: u64,
    /// Of `sleep_after`, the `reclaim_throttle` wait, and when that wait times out (0: none).
    pub throttle_sleep: u64,
    pub throttle_deadline: u64,
    pub busy_until: u64,
    /// Interrupt handlers' time taken from the running task's quantum, which ends that much later.
    pub irq_delay: u64,
    pub us_ns: u64,
    pub sy_ns: u64,
}

/// The scheduler's state.
pub struct Sched {
    pub now: u64,
    pub tasks: Vec<Task>,
    pub cpus: Vec<Cpu>,
    pub runq: VecDeque<usize>,
    heap: crate::timerqueue::TimerQueue<Event>,
    /// The pending `NetRx(i)` event of each network source, (time, seq), beside the heap: a
    /// source has one pending at a time and they are most of a busy server's events, so the
    /// heap stays small. `pop` serves the smallest (time, seq) of heap and lanes, as one heap would.
    netrx_lanes: Vec<Option<(u64, u64)>>,
    seq: u64,
    pub io_slab: Vec<Option<IoDone>>,
    io_free: Vec<usize>,
    /// Iowait integration for `wa`: Σ min(nr_iowait, cpus) dt.
    pub nr_iowait: u32,
    pub iowait_ns: u64,
    last_iowait_change: u64,
    next_pid: u32,
    /// Context switches (a CPU starting a different task than it ran last) and device
    /// interrupts (block I/O completions), for vmstat's `cs` and `in`.
    pub nr_switches: u64,
    pub nr_irqs: u64,
    /// Interrupts delivered with a modelled handler (the rotation of lowest-priority delivery).
    pub irq_seq: u64,
}

impl Sched {
    pub fn new(ncpu: usize) -> Sched {
        Sched {
            now: 0,
            tasks: Vec::new(),
            cpus: vec![Cpu::default(); ncpu],
            runq: VecDeque::new(),
            heap: Default::default(),
            netrx_lanes: Vec::new(),
            seq: 0,
            io_slab: Vec::new(),
            io_free: Vec::new(),
            nr_iowait: 0,
            iowait_ns: 0,
            last_iowait_change: 0,
            next_pid: 1,
            nr_switches: 0,
            nr_irqs: 0,
            irq_seq: 0,
        }
    }

    pub fn push(&mut self, t: u64, e: Event) {
        self.seq += 1;
        if let Event::NetRx(i) = e {
            if self.netrx_lanes.len() <= i {
                self.netrx_lanes.resize(i + 1, None);
            }
            debug_assert!(self.netrx_lanes[i].is_none(), "two pending events of netrx source {i}");
            self.netrx_lanes[i] = Some((t, self.seq));
            return;
        }
        self.heap.push(t, self.seq, e);
    }

    /// The lane with the soonest (time, seq), if any.
    fn first_lane(&self) -> Option<(usize, (u64, u64))> {
        let mut best: Option<(usize, (u64, u64))> = None;
        for (i, l) in self.netrx_lanes.iter().enumerate() {
            if let Some(k) = *l {
                if best.is_none_or(|(_, b)| k < b) {
                    best = Some((i, k));
                }
            }
        }
        best
    }

    pub fn pop(&mut self) -> Option<(u64, Event)> {
        if let Some((i, (t, seq))) = self.first_lane() {
            if self.heap.peek().is_none_or(|h| (t, seq) < h) {
                self.netrx_lanes[i] = None;
                return Some((t, Event::NetRx(i)));
            }
        }
        self.heap.pop()
    }

    pub fn peek_time(&self) -> Option<u64> {
        let heap = self.heap.peek().map(|(t, _)| t);
        match (heap, self.first_lane()) {
            (Some(h), Some((_, (l, _)))) => Some(h.min(l)),
            (h, l) => h.or(l.map(|(_, (t, _))| t)),
        }
    }

    pub fn new_task(&mut self, name: &str, kind: TaskKind, mm: Option<u32>) -> usize {
        let id = self.tasks.len();
        let pid = self.next_pid;
        self.next_pid += 1;
        self.tasks.push(Task {
            pid,
            name: name.to_string(),
            kind,
            state: TState::Blocked,
            mm,
            cpu_allowed: None,
            node_allowed: None,
            last_cpu: 0,
            utime_ns: 0,
            stime_ns: 0,
            gen: 0,
            wake_pending: false,
            throttle_woken: false,
            iowait: false,
            forever: false,
            prog: None,
            parent: None,
            children: 0,
            waiting_children: false,
            memlock_limit: u64::MAX,
            memcg: 0,
            mmap_lock: Default::default(),
            rng: crate::prandom::stream(0, crate::prandom::Stream::Process, u64::MAX),
            kmem: (crate::mm_types::NIL, crate::mm_types::NIL),
            forking: None,
            waits: [0; Wait::COUNT],
            wait_since: u64::MAX,
            wait_kind: Wait::Other,
        });
        id
    }

    pub fn add_io(&mut self, t: u64, d: IoDone) {
        let i = match self.io_free.pop() {
            Some(i) => {
                self.io_slab[i] = Some(d);
                i
            }
            None => {
                self.io_slab.push(Some(d));
                self.io_slab.len() - 1
            }
        };
        self.push(t, Event::Io(i));
    }

    pub fn take_io(&mut self, i: usize) -> Option<IoDone> {
        let d = self.io_slab[i].take();
        self.io_free.push(i);
        d
    }

    pub fn iowait_tick_pub(&mut self) {
        self.iowait_tick();
    }

    fn iowait_tick(&mut self) {
        let dt = self.now.saturating_sub(self.last_iowait_change);
        self.iowait_ns += (self.nr_iowait as u64).min(self.cpus.len() as u64) * dt;
        self.last_iowait_change = self.now;
    }

    /// Make a task runnable (explicit wakeup: lock grant, kswapd wakeup, child exit).
    pub fn wake(&mut self, t: usize) {
        match self.tasks[t].state {
            TState::Blocked => {
                self.set_runnable(t);
            }
            TState::Running(_) => self.tasks[t].wake_pending = true,
            _ => {}
        }
    }

    /// A wakeup from a `reclaim_wait` queue: a task still running the quantum in which it
    /// throttled does not sleep for it (`prepare_to_wait` before `schedule_timeout`).
    pub fn throttle_wake(&mut self, t: usize) {
        match self.tasks[t].state {
            TState::Blocked => self.set_runnable(t),
            TState::Running(_) => self.tasks[t].throttle_woken = true,
            _ => {}
        }
    }

    /// Close the task's current wait (a sleep or a wait for a CPU) at `now`.
    fn end_wait(&mut self, t: usize) {
        let task = &mut self.tasks[t];
        if task.wait_since != u64::MAX {
            task.waits[task.wait_kind as usize] += self.now.saturating_sub(task.wait_since);
        }
    }

    fn begin_wait(&mut self, t: usize, kind: Wait) {
        let task = &mut self.tasks[t];
        (task.wait_since, task.wait_kind) = (self.now, kind);
    }

    /// The sleep `block` began is one of reclaim's (see [`Wait::Reclaim`]).
    pub fn mark_reclaim_wait(&mut self, t: usize) {
        if self.tasks[t].wait_since == self.now {
            self.tasks[t].wait_kind = Wait::Reclaim;
        }
    }

    pub fn set_runnable(&mut self, t: usize) {
        if self.tasks[t].state == TState::Blocked {
            self.end_wait(t);
        }
        self.begin_wait(t, Wait::Cpu);
        if self.tasks[t].iowait {
            self.iowait_tick();
            self.nr_iowait -= 1;
            self.tasks[t].iowait = false;
        }
        self.tasks[t].gen += 1;
        self.tasks[t].state = TState::Runnable;
        self.runq.push_back(t);
    }

    pub fn block(&mut self, t: usize, until: Option<u64>, io: bool) {
        self.begin_wait(t, if io { Wait::Io } else { Wait::Other });
        self.tasks[t].state = TState::Blocked;
        self.tasks[t].gen += 1;
        if io {
            self.iowait_tick();
            self.nr_iowait += 1;
            self.tasks[t].iowait = true;
        }
        if let Some(u) = until {
            let g = self.tasks[t].gen;
            self.push(u.max(self.now), Event::Wake(t, g));
        }
    }

    /// The first runnable task allowed on `cpu` (of node `node`).
    pub fn pick(&mut self, cpu: u32, node: usize) -> Option<usize> {
        let i = self.runq.iter().position(|&t| {
            let task = &self.tasks[t];
            task.cpu_allowed.map(|c| c == cpu).unwrap_or(true) && task.node_allowed.map(|n| n == node).unwrap_or(true)
        })?;
        let t = self.runq.remove(i)?;
        self.end_wait(t);
        Some(t)
    }
}

/// Per-interval counters for the timeline.
#[derive(Clone, Debug, Default)]
pub struct SampleState {
    pub last_us: u64,
    pub last_sy: u64,
    pub last_iowait: u64,
    pub last_t: u64,
    pub last_ev: Vec<u64>,
    pub last_kswapd_ns: u64,
    pub last_switches: u64,
    pub last_irqs: u64,
}

/// Run one quantum of a kernel thread.
pub fn run_kthread(k: &mut Kernel, ctx: &mut Ctx, kind: TaskKind) -> Outcome {
    match kind {
        TaskKind::Kswapd(node) => {
            // Several balance steps per quantum, until it has used its slice or wants to sleep.
            loop {
                match crate::vmscan::kswapd_step(k, ctx, node) {
                    KswapdAction::Continue => {
                        if ctx.sys_ns >= QUANTUM_NS {
                            return Outcome::Continue;
                        }
                        if ctx.sys_ns == 0 {
                            ctx.sys_ns = 1;
                        }
                    }
                    KswapdAction::Yield => return Outcome::Continue,
                    KswapdAction::Nap(ns) => return Outcome::Block { until: Some(ctx.clock() + ns), io: false },
                    KswapdAction::Sleep => return Outcome::Block { until: None, io: false },
                    KswapdAction::Throttle(ns) => {
                        let until = crate::vmscan::reclaim_throttle(k, ctx, node);
                        debug_assert_eq!(until, ctx.clock() + ns);
                        return Outcome::Block { until: Some(until), io: false };
                    }
                }
            }
        }
        TaskKind::Flusher(w) => loop {
            ctx.is_flusher = true;
            let pass =
                if k.profile.bdflush { crate::vmscan::bdflush_pass } else { crate::page_writeback::flusher_pass };
            match pass(k, ctx, w) {
                FlushAction::More => {
                    if ctx.sys_ns >= QUANTUM_NS {
                        return Outcome::Continue;
                    }
                }
                FlushAction::Sleep(ns) => {
                    // 2.4's bdflush and kupdate run `tq_disk` before they sleep (directly, or
                    // through `wait_for_some_buffers` → `wait_on_buffer`).
                    k.run_tq_disk(ctx.clock());
                    return Outcome::Block { until: Some(ctx.clock() + ns), io: false };
                }
            }
        },
        TaskKind::Kreclaimd => loop {
            match crate::vmscan::kreclaimd_step(k, ctx) {
                KswapdAction::Continue => {
                    if ctx.sys_ns >= QUANTUM_NS {
                        return Outcome::Continue;
                    }
                    if ctx.sys_ns == 0 {
                        ctx.sys_ns = 1;
                    }
                }
                KswapdAction::Nap(ns) | KswapdAction::Throttle(ns) => {
                    return Outcome::Block { until: Some(ctx.clock() + ns), io: false }
                }
                KswapdAction::Sleep => return Outcome::Block { until: None, io: false },
                KswapdAction::Yield => return Outcome::Continue,
            }
        },
        TaskKind::LoopWorker(d) => crate::loop_dev::loop_process_work(k, ctx, d),
        TaskKind::User => Outcome::Exit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// The network sources' lanes beside the heap give the order a single heap of
    /// (time, push order) gives, ties included.
    #[test]
    fn netrx_lanes_pop_in_time_then_push_order() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut s = Sched::new(1);
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut push = |s: &mut Sched, r: &mut BinaryHeap<Reverse<(u64, u64, Event)>>, t: u64, e: Event| {
            seq += 1;
            s.push(t, e);
            r.push(Reverse((t, seq, e)));
        };
        for i in 0..3 {
            push(&mut s, &mut reference, rnd() % 10, Event::NetRx(i));
        }
        for _ in 0..30_000 {
            let Reverse((t, _, e)) = reference.pop().expect("never empty");
            assert_eq!(s.peek_time(), Some(t));
            assert_eq!(s.pop(), Some((t, e)));
            // Coarse times, so that ties between a lane and the heap happen.
            let next = t + rnd() % 4;
            if let Event::NetRx(i) = e {
                push(&mut s, &mut reference, next, Event::NetRx(i));
            }
            if rnd() % 3 == 0 {
                push(&mut s, &mut reference, t + rnd() % 6, Event::Wake(0, rnd() % 5));
            }
            if reference.is_empty() {
                push(&mut s, &mut reference, t + 1, Event::Sample);
            }
        }
    }
}
