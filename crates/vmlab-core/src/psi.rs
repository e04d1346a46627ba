//! Pressure stall information for memory (`kernel/sched/psi.c`): how long tasks were stalled in
//! memory reclaim, `memory.high` throttling, and waits for swap-in or the refault of a workingset
//! page (the kernel's `psi_memstall_enter`/`leave` sites). `some`: at least one task of the group
//! stalled; `full`: some task stalled and none running without a stall (a task asleep or in
//! plain I/O wait is idle), as psi.c's PSI_MEM_FULL. psi.c decides both per CPU and weights the
//! CPUs by their non-idle time; vmlab decides them over the group as a whole, and counts a task
//! waiting for a CPU as idle. Averages over 10, 60 and 300 s are folded every `PSI_FREQ` (2 s)
//! as `calc_avgs` does.
//!
//! vmlab knows a stall's interval when it starts (reclaim runs inside a quantum; an I/O wait ends
//! at its completion), and quanta on different CPUs report slightly out of order, so intervals
//! wait in a buffer until the clock is past them by more than a quantum, then fold in start order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::kernel::{Ctx, Kernel};
use crate::memcontrol::ROOT;

/// `PSI_FREQ`: 2 s.
pub const PSI_FREQ_NS: u64 = 2_000_000_000;
/// `EXP_10s`, `EXP_60s`, `EXP_300s`: 1/exp(2s/window) in 11-bit fixed point (`FIXED_1` = 2048).
const EXP: [u64; 3] = [1677, 1981, 2034];
const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
/// An interval is folded once the clock is this far past its start (quanta are ≤ 1 ms).
const FOLD_SLACK_NS: u64 = 10_000_000;

/// One group's stall accounting (the system's is the root's).
#[derive(Clone, Debug, Default)]
pub struct PsiGroup {
    /// Stall intervals not folded yet: (start, end, task).
    pending: Vec<(u64, u64, u32)>,
    /// Stalls begun and not ended yet (a reclaimer asleep in `reclaim_throttle`): (start,
    /// latest end, task, the task as recorded). Nothing from their start on is folded.
    open: Vec<(u64, u64, u32, u32)>,
    /// Intervals a task of the group ran on a CPU, not folded yet.
    pending_run: Vec<(u64, u64, u32)>,
    /// `some`: the union of folded intervals reaches `some_until`.
    some_until: u64,
    pub some_total_ns: u64,
    /// `full`: starts and ends of folded intervals not swept yet, (time, kind, task).
    events: BinaryHeap<Reverse<(u64, u8, u32)>>,
    /// Per task: (intervals running, intervals stalled) in progress at `sweep_at`.
    task_state: Vec<(u16, u16)>,
    /// Tasks stalled, and tasks running without a stall, at `sweep_at`.
    nr_stalled: u32,
    nr_productive: u32,
    sweep_at: u64,
    pub full_total_ns: u64,
    /// Averages in FIXED_1 units of percent: some, full × (10, 60, 300 s).
    avg: [[u64; 3]; 2],
    /// Totals at the last 2 s boundary, and that boundary.
    last: [u64; 2],
    next_boundary: u64,
}

/// Event kinds of the `full` sweep, in the order they apply at one instant.
const RUN_END: u8 = 0;
const STALL_END: u8 = 1;
const RUN_START: u8 = 2;
const STALL_START: u8 = 3;

impl PsiGroup {
    fn record(&mut self, start: u64, end: u64, task: u32) {
        if end > start {
            self.pending.push((start, end, task));
        }
    }

    fn record_run(&mut self, start: u64, end: u64, task: u32) {
        if end > start {
            self.pending_run.push((start, end, task));
        }
    }

    fn open(&mut self, start: u64, until: u64, task: u32, as_task: u32) {
        self.open.push((start, until, task, as_task));
    }

    /// End the open stall of `task` at `end` (no later than its timeout).
    fn close(&mut self, task: u32, end: u64) {
        if let Some(i) = self.open.iter().position(|o| o.2 == task) {
            let (s, until, _, as_task) = self.open.remove(i);
            self.record(s, end.min(until).max(s), as_task);
        }
    }

    /// Fold every interval that starts before `upto`.
    fn fold(&mut self, upto: u64) {
        if !self.pending.is_empty() {
            self.pending.sort_unstable();
            let n = self.pending.partition_point(|&(s, _, _)| s < upto);
            for i in 0..n {
                let (s, e, task) = self.pending[i];
                if e > self.some_until {
                    self.some_total_ns += e - s.max(self.some_until);
                    self.some_until = e;
                }
                if task != KTHREAD {
                    self.events.push(Reverse((s, STALL_START, task)));
                    self.events.push(Reverse((e, STALL_END, task)));
                }
            }
            self.pending.drain(..n);
        }
        if !self.pending_run.is_empty() {
            self.pending_run.sort_unstable();
            let n = self.pending_run.partition_point(|&(s, _, _)| s < upto);
            for &(s, e, task) in &self.pending_run[..n] {
                self.events.push(Reverse((s, RUN_START, task)));
                self.events.push(Reverse((e, RUN_END, task)));
            }
            self.pending_run.drain(..n);
        }
    }

    /// Advance the `full` sweep to `t`. psi.c's PSI_MEM_FULL: some task is stalled and every
    /// task that is running is one of the stalled (reclaim runs in a stall); a task asleep or
    /// waiting for plain I/O is idle and keeps nobody from `full`.
    fn sweep_to(&mut self, t: u64) {
        while self.sweep_at < t {
            let next = self.events.peek().map_or(u64::MAX, |r| r.0 .0).min(t);
            if self.nr_stalled > 0 && self.nr_productive == 0 {
                self.full_total_ns += next - self.sweep_at;
            }
            self.sweep_at = next;
            while let Some(&Reverse((when, kind, task))) = self.events.peek() {
                if when > self.sweep_at || when >= t {
                    break;
                }
                self.events.pop();
                self.apply(kind, task);
            }
        }
    }

    fn apply(&mut self, kind: u8, task: u32) {
        let i = task as usize;
        if i >= self.task_state.len() {
            self.task_state.resize(i + 1, (0, 0));
        }
        let before = self.task_state[i];
        let st = &mut self.task_state[i];
        match kind {
            RUN_START => st.0 += 1,
            RUN_END => st.0 = st.0.saturating_sub(1),
            STALL_START => st.1 += 1,
            _ => st.1 = st.1.saturating_sub(1),
        }
        let after = *st;
        let stalled = |s: (u16, u16)| s.1 > 0;
        let productive = |s: (u16, u16)| s.0 > 0 && s.1 == 0;
        self.nr_stalled = self.nr_stalled + stalled(after) as u32 - stalled(before) as u32;
        self.nr_productive = self.nr_productive + productive(after) as u32 - productive(before) as u32;
    }

    /// Stall time of (some, full) before `t`, once everything starting before `t` is folded.
    fn totals_at(&mut self, t: u64) -> [u64; 2] {
        self.sweep_to(t);
        [self.some_total_ns - self.some_until.saturating_sub(t), self.full_total_ns]
    }

    /// Fold up to `now - slack` and run `calc_avgs` for every 2 s period that ended.
    pub fn update(&mut self, now: u64) {
        if self.next_boundary == 0 {
            self.next_boundary = PSI_FREQ_NS;
        }
        let open_from = self.open.iter().map(|o| o.0).min().unwrap_or(u64::MAX);
        let upto = now.saturating_sub(FOLD_SLACK_NS).min(open_from);
        while self.next_boundary <= upto {
            let b = self.next_boundary;
            self.fold(b);
            let tot = self.totals_at(b);
            for (i, t) in tot.iter().enumerate() {
                let delta = t - self.last[i];
                self.last[i] = *t;
                // calc_avgs: the period's share in percent, FIXED_1 fixed point.
                let pct = (delta.min(PSI_FREQ_NS) as u128 * 100 * FIXED_1 as u128 / PSI_FREQ_NS as u128) as u64;
                for (w, e) in EXP.iter().enumerate() {
                    let a = &mut self.avg[i][w];
                    *a = (*a * e + pct * (FIXED_1 - e)) >> FSHIFT;
                }
            }
            self.next_boundary += PSI_FREQ_NS;
        }
        self.fold(upto);
    }

    /// Fold everything (end of run): totals include every recorded stall.
    pub fn finish(&mut self, now: u64) {
        for (s, until, _, as_task) in std::mem::take(&mut self.open) {
            self.record(s, until.min(now).max(s), as_task);
        }
        self.update(now + FOLD_SLACK_NS);
        self.fold(u64::MAX);
        let last = self.events.iter().map(|r| r.0 .0).max().unwrap_or(self.sweep_at);
        self.sweep_to(last.saturating_add(1));
    }

    /// (avg10, avg60, avg300) of `some` (0) or `full` (1) in percent.
    pub fn avgs(&self, which: usize) -> [f64; 3] {
        let a = self.avg[which];
        [a[0] as f64 / FIXED_1 as f64, a[1] as f64 / FIXED_1 as f64, a[2] as f64 / FIXED_1 as f64]
    }

    /// The `/proc/pressure/memory` (or `memory.pressure`) text.
    pub fn format(&self) -> String {
        let mut s = String::new();
        for (i, name) in ["some", "full"].iter().enumerate() {
            let a = self.avgs(i);
            let total_us = if i == 0 { self.some_total_ns } else { self.full_total_ns } / 1000;
            s += &format!("{name} avg10={:.2} avg60={:.2} avg300={:.2} total={total_us}\n", a[0], a[1], a[2]);
        }
        s
    }
}

/// The task of a kernel thread's stall: it counts for `some` of the system only (`full` asks
/// whether the workload's tasks all stall).
const KTHREAD: u32 = u32::MAX;

/// Whether anything reads the stall accounting: the system's `/proc/pressure/memory` (kernels
/// with PSI) or a memory cgroup's pressure. Otherwise recording it is work for nobody, and every
/// quantum of every run would pay for it.
fn wanted(k: &Kernel) -> bool {
    k.profile.psi || k.memcg.active()
}

/// kswapd's `balance_pgdat` from `start` to `end`.
pub fn memstall_kthread(k: &mut Kernel, start: u64, end: u64) {
    if end > start && wanted(k) {
        k.psi.record(start, end, KTHREAD);
    }
}

/// Record a stall of the task of `ctx` from `start` to `end`, in its group, every ancestor and
/// the system.
fn record(k: &mut Kernel, ctx: &Ctx, start: u64, end: u64) {
    if end <= start || !wanted(k) {
        return;
    }
    let task = ctx.task as u32;
    k.psi.record(start, end, task);
    let mut g = crate::memcontrol::ctx_memcg(k, ctx);
    while g != ROOT {
        k.memcg.groups[g as usize].psi.record(start, end, task);
        g = k.memcg.groups[g as usize].parent;
    }
}

/// `psi_memstall_enter` at `start` … `psi_memstall_leave` now: reclaim or throttling that ran
/// on the CPU.
pub fn memstall(k: &mut Kernel, ctx: &Ctx, start: u64) {
    let end = ctx.clock();
    record(k, ctx, start, end);
}

/// A memstall that sleeps `ns` after the work done so far (the `memory.high` penalty).
pub fn memstall_sleep(k: &mut Kernel, ctx: &Ctx, ns: u64) {
    let start = ctx.clock() + ctx.sleep_ns;
    record(k, ctx, start, start + ns);
}

/// A task waits until `until` for the read of a page that was part of the workingset (a
/// refault) or for a swap-in: `folio_wait_bit` / `swap_readpage` under `psi_memstall_enter`.
pub fn memstall_wait(k: &mut Kernel, ctx: &Ctx, until: u64) {
    let start = ctx.clock();
    record(k, ctx, start, until);
}

/// `psi_memstall_enter` at `start` of a sleep that ends at a wakeup not known yet, or at
/// `until` (`reclaim_throttle`); `memstall_end` ends it. kswapd's counts as a kernel thread's.
pub fn memstall_begin(k: &mut Kernel, ctx: &Ctx, start: u64, until: u64) {
    if !wanted(k) {
        return;
    }
    let task = ctx.task as u32;
    if ctx.is_kswapd {
        k.psi.open(start, until, task, KTHREAD);
        return;
    }
    k.psi.open(start, until, task, task);
    let mut g = crate::memcontrol::ctx_memcg(k, ctx);
    while g != ROOT {
        k.memcg.groups[g as usize].psi.open(start, until, task, task);
        g = k.memcg.groups[g as usize].parent;
    }
}

/// `psi_memstall_leave` at `end` of the stall `memstall_begin` opened for `task`.
pub fn memstall_end(k: &mut Kernel, task: usize, end: u64) {
    if !wanted(k) {
        return;
    }
    let task = task as u32;
    k.psi.close(task, end);
    for g in k.memcg.groups.iter_mut().skip(1) {
        g.psi.close(task, end);
    }
}

/// A task of group `g` ran on a CPU from `start` to `end` (a quantum): running tasks that are
/// not stalled keep the group out of `full`.
pub fn running(k: &mut Kernel, mut g: u8, task: usize, start: u64, end: u64) {
    if !wanted(k) {
        return;
    }
    let task = task as u32;
    k.psi.record_run(start, end, task);
    while g != ROOT {
        k.memcg.groups[g as usize].psi.record_run(start, end, task);
        g = k.memcg.groups[g as usize].parent;
    }
}

/// Fold the groups' intervals up to `now` (the sampler calls this).
pub fn update(k: &mut Kernel, now: u64) {
    k.psi.update(now);
    for g in k.memcg.groups.iter_mut().skip(1) {
        g.psi.update(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn some_is_the_union_and_full_needs_nobody_running() {
        let mut g = PsiGroup::default();
        // Task 1 runs [0, 50), then stalls [50, 150); task 0 stalls [0, 100) and [300, 400)
        // while task 1 runs [300, 350).
        g.record_run(0, 50, 1);
        g.record(0, 100, 0);
        g.record(50, 150, 1);
        g.record(300, 400, 0);
        g.record_run(300, 350, 1);
        g.finish(1000);
        assert_eq!(g.some_total_ns, 250);
        // [50, 150) has nobody running productively, nor [350, 400) (task 1 asleep).
        assert_eq!(g.full_total_ns, 150);
    }
    #[test]
    fn a_task_running_its_own_reclaim_is_full() {
        let mut g = PsiGroup::default();
        g.record_run(0, 100, 0);
        g.record(20, 80, 0);
        g.record_run(0, 100, 1);
        g.record(90, 100, 1);
        g.finish(1000);
        assert_eq!(g.some_total_ns, 70);
        // Task 1 runs productively until 90, when task 0's stall has ended.
        assert_eq!(g.full_total_ns, 0);
        let mut h = PsiGroup::default();
        h.record_run(0, 100, 0);
        h.record(20, 80, 0);
        h.finish(1000);
        assert_eq!(h.full_total_ns, 60, "alone, a task in reclaim is a full stall (TSK_MEMSTALL_RUNNING)");
    }
    #[test]
    fn a_fully_stalled_period_averages_toward_100_percent() {
        let mut g = PsiGroup::default();
        g.record(0, 20 * PSI_FREQ_NS, 0);
        g.update(20 * PSI_FREQ_NS + FOLD_SLACK_NS);
        let a = g.avgs(0);
        // calc_load's decay: after n periods at 100 %, 100 × (1 − (e/2048)^n), within the
        // fixed point's rounding.
        for (w, e) in EXP.iter().enumerate() {
            let want = 100.0 * (1.0 - (*e as f64 / 2048.0).powi(20));
            assert!((a[w] - want).abs() < 1.0, "window {w}: {} vs {want} ({a:?})", a[w]);
        }
        assert!(a[0] > a[1] && a[1] > a[2]);
    }
}
