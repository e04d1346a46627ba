//! `pagemap_lru_lock`: the one spinlock over every 2.4 LRU list. The scanners hold it for a whole
//! scan (`refill_inactive_scan`) or between I/O calls (`page_launder`); a CPU that wants it while
//! another CPU holds it spins until the holder lets go, and that spinning is kernel CPU time
//! (`stext_lock` in a 2.4 profile).
//!
//! CPUs run in quanta computed one after the other, so a hold is recorded as an interval of
//! simulated time; a later acquisition on another CPU that falls inside one spins to its end.
//! Only holds long enough to matter (a scan) are recorded; single-page list operations only
//! check.
//!
//! A quantum computed earlier can run past the start of a hold that a quantum computed later
//! records (the loader's read burst against kswapd's next `refill_inactive_scan`). Such
//! acquisitions are kept until no hold can still cover them; when one is covered, its task owes
//! the spin, and the rest of its burst moves later by as much, where kswapd's next hold may cover
//! it again. This is what a spinning CPU meets in 2.4: kswapd lets go for the few µs of
//! `swap_out` between scans, the waiter gets the lock once, and its next acquisition a few µs
//! later finds kswapd back in the next scan.

use crate::kernel::{Ctx, Kernel};
use crate::stats::kfunc::KFunc;

/// Holds shorter than this are not recorded (one list operation takes well under a µs).
const MIN_HOLD_NS: u64 = 2_000;

#[derive(Clone, Debug, Default)]
pub struct LruLock {
    /// (taken, released, cpu) of recent long holds.
    holds: Vec<(u64, u64, u32)>,
    /// Acquisitions a hold recorded later could still cover: (time, cpu, task), in the order made.
    takes: Vec<(u64, u32, usize)>,
    /// Spin owed by tasks for holds recorded after their acquisitions: (task, ns).
    owed: Vec<(usize, u64)>,
    pub spin_ns: u64,
}

impl LruLock {
    /// End of the latest recorded hold by another CPU that covers time `t`.
    fn covered(&self, cpu: u32, t: u64) -> Option<u64> {
        self.holds.iter().filter(|h| h.2 != cpu && h.0 <= t && t < h.1).map(|h| h.1).max()
    }

    /// Re-time `task`'s pending acquisitions against the recorded holds: each one a hold covers
    /// waits to its end, and the task's later ones move by the same amount. Returns (spin owed,
    /// acquisitions that waited).
    fn settle(&mut self, task: usize) -> (u64, u64) {
        let (mut owed, mut waits) = (0, 0);
        let mut i = 0;
        while i < self.takes.len() {
            let (t, cpu, tk) = self.takes[i];
            if tk != task {
                i += 1;
                continue;
            }
            match self.covered(cpu, t) {
                Some(end) => {
                    let d = end - t;
                    owed += d;
                    waits += 1;
                    for take in self.takes[i..].iter_mut().filter(|x| x.2 == task) {
                        take.0 += d;
                    }
                }
                None => i += 1,
            }
        }
        (owed, waits)
    }
}

/// `spin_lock(&pagemap_lru_lock)`: returns the time the lock was taken.
pub fn spin_lock(k: &mut Kernel, ctx: &mut Ctx) -> u64 {
    let now = k.now;
    let l = &mut k.riel.lock;
    // Quanta computed from here on start at `now` or later, so their holds end after it.
    l.holds.retain(|h| h.1 > now);
    l.takes.retain(|x| x.0 >= now);
    // Spin this task owes from its earlier bursts, paid before it can try again.
    let mut wait = 0;
    if let Some(i) = l.owed.iter().position(|o| o.0 == ctx.task) {
        wait = l.owed.swap_remove(i).1;
    }
    let t = ctx.clock() + wait;
    let until = l.covered(ctx.cpu, t).unwrap_or(t);
    if until > t {
        k.riel.stats.lock_contended += 1;
    }
    wait += until - t;
    if wait > 0 {
        k.riel.lock.spin_ns += wait;
        k.charge(ctx, KFunc::LruLockSpin, wait);
    }
    let taken = ctx.clock();
    k.riel.lock.takes.push((taken, ctx.cpu, ctx.task));
    taken
}

/// `spin_unlock(&pagemap_lru_lock)` for a hold that began at `taken`.
pub fn spin_unlock(k: &mut Kernel, ctx: &Ctx, taken: u64) {
    let end = ctx.clock();
    if end < taken + MIN_HOLD_NS {
        return;
    }
    let l = &mut k.riel.lock;
    l.holds.push((taken, end, ctx.cpu));
    // Tasks whose acquisitions, computed before this hold was known, fall inside it.
    let mut hit: Vec<usize> = Vec::new();
    for &(t, cpu, task) in &l.takes {
        if cpu != ctx.cpu && taken <= t && t < end && !hit.contains(&task) {
            hit.push(task);
        }
    }
    for task in hit {
        let (owed, waits) = l.settle(task);
        k.riel.stats.lock_contended += waits;
        match l.owed.iter_mut().find(|o| o.0 == task) {
            Some(o) => o.1 += owed,
            None => l.owed.push((task, owed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_computed_early_waits_for_each_later_hold_it_runs_into() {
        let mut l = LruLock::default();
        // The loader (task 1, cpu 1) took the lock at 10, 20 and 30 µs, 10 µs apart, before
        // kswapd's quantum (cpu 0) was computed: holds 5–100 µs and 105–300 µs.
        l.takes = vec![(10_000, 1, 1), (20_000, 1, 1), (30_000, 1, 1), (15_000, 0, 0)];
        l.holds = vec![(5_000, 100_000, 0), (105_000, 300_000, 0)];
        let (owed, waits) = l.settle(1);
        // 10 → 100 (90 µs); the next moves to 110, inside the second hold → 300 (190 µs); the
        // last moves to 310, free.
        assert_eq!((owed, waits), (280_000, 2));
        assert_eq!(l.takes[2].0, 310_000);
        // kswapd's own acquisition is not its own hold's victim.
        assert_eq!(l.settle(0), (0, 0));
    }
}
