//! Pressure stall information for memory (`kernel/sched/psi.c`): how long tasks were stalled in
//! memory reclaim, `memory.high` throttling, and waits for swap-in or the refault of a workingset
//! page (the kernel's `psi_memstall_enter`/`leave` sites). `some`: at least one task of the group
//! stalled; `full`: every live task of the group stalled at once. Averages over 10, 60 and 300 s
//! are folded every `PSI_FREQ` (2 s) as `calc_avgs` does.
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
    /// `some`: the union of folded intervals reaches `some_until`.
    some_until: u64,
    pub some_total_ns: u64,
    /// `full`: ends of the intervals in progress at `sweep_at`, and the measure so far.
    active: BinaryHeap<Reverse<u64>>,
    sweep_at: u64,
    pub full_total_ns: u64,
    /// Live tasks of the group (a task is non-idle for `full` while alive).
    pub nr_tasks: u32,
    /// Averages in FIXED_1 units of percent: some, full × (10, 60, 300 s).
    avg: [[u64; 3]; 2],
    /// Totals at the last 2 s boundary, and that boundary.
    last: [u64; 2],
    next_boundary: u64,
}

impl PsiGroup {
    fn record(&mut self, start: u64, end: u64, task: u32) {
        if end > start {
            self.pending.push((start, end, task));
        }
    }

    /// Fold every interval that starts before `upto`.
    fn fold(&mut self, upto: u64) {
        if self.pending.is_empty() {
            return;
        }
        self.pending.sort_unstable();
        let n = self.pending.partition_point(|&(s, _, _)| s < upto);
        for i in 0..n {
            let (s, e, task) = self.pending[i];
            if e > self.some_until {
                self.some_total_ns += e - s.max(self.some_until);
                self.some_until = e;
            }
            self.sweep_to(s);
            if task != KTHREAD {
                self.active.push(Reverse(e));
            }
        }
        self.pending.drain(..n);
    }

    /// Advance the `full` sweep to `t`: time when as many tasks are stalled as are live.
    fn sweep_to(&mut self, t: u64) {
        while self.sweep_at < t {
            let next_end = self.active.peek().map_or(u64::MAX, |r| r.0).min(t);
            if self.nr_tasks > 0 && self.active.len() as u32 >= self.nr_tasks {
                self.full_total_ns += next_end - self.sweep_at;
            }
            self.sweep_at = next_end;
            while self.active.peek().is_some_and(|r| r.0 <= self.sweep_at) {
                self.active.pop();
            }
        }
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
        let upto = now.saturating_sub(FOLD_SLACK_NS);
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
        self.update(now + FOLD_SLACK_NS);
        self.fold(u64::MAX);
        self.sweep_to(self.active.iter().map(|r| r.0).max().unwrap_or(self.sweep_at));
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

/// kswapd's `balance_pgdat` from `start` to `end`.
pub fn memstall_kthread(k: &mut Kernel, start: u64, end: u64) {
    if end > start {
        k.psi.record(start, end, KTHREAD);
    }
}

/// Record a stall of the task of `ctx` from `start` to `end`, in its group, every ancestor and
/// the system.
fn record(k: &mut Kernel, ctx: &Ctx, start: u64, end: u64) {
    if end <= start {
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

/// A task of group `g` started (+1) or exited (-1): `full` counts against live tasks.
pub fn task_count(k: &mut Kernel, mut g: u8, delta: i32) {
    let add = |n: &mut u32| *n = n.saturating_add_signed(delta);
    add(&mut k.psi.nr_tasks);
    while g != ROOT {
        add(&mut k.memcg.groups[g as usize].psi.nr_tasks);
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
    fn some_is_the_union_and_full_needs_every_task() {
        let mut g = PsiGroup { nr_tasks: 2, ..Default::default() };
        g.record(0, 100, 0);
        g.record(50, 150, 1);
        g.record(300, 400, 0);
        g.finish(1000);
        assert_eq!(g.some_total_ns, 250);
        assert_eq!(g.full_total_ns, 50);
    }
    #[test]
    fn a_fully_stalled_period_averages_toward_100_percent() {
        let mut g = PsiGroup { nr_tasks: 1, ..Default::default() };
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
