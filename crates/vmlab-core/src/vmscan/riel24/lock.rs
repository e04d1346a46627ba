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

/// Who held the lock a spinner waited for: the seed's profile charges the spin to neither
/// (`stext_lock`), but which scan makes the waits is what ties the spin to the scans' share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    RefillInactiveScan = 0,
    PageLaunder = 1,
    /// `reclaim_page` and the 2.4-aa scans (which do not say).
    Other = 2,
}

/// (taken, released, cpu, holder) of a recorded hold.
type Hold = (u64, u64, u32, Holder);

#[derive(Clone, Debug, Default)]
pub struct LruLock {
    /// Recent long holds.
    holds: Vec<Hold>,
    /// Acquisitions a hold recorded later could still cover: (time, cpu, task), in the order made.
    takes: Vec<(u64, u32, usize)>,
    /// Spin owed by tasks for holds recorded after their acquisitions: (task, ns by holder).
    owed: Vec<(usize, [u64; 3])>,
    pub spin_ns: u64,
    /// `spin_ns` split by the holder waited for (`Holder as usize`).
    pub spin_by_holder: [u64; 3],
    /// `now` at the last pruning of `holds` and `takes`. Within one `now` nothing recorded can
    /// fall behind it (times only move later), so pruning again would change nothing.
    pruned_at: Option<u64>,
}

impl LruLock {
    /// End and holder of the latest-ending recorded hold by another CPU that covers time `t`.
    fn covered(&self, cpu: u32, t: u64) -> Option<(u64, Holder)> {
        self.holds.iter().filter(|h| h.2 != cpu && h.0 <= t && t < h.1).max_by_key(|h| h.1).map(|h| (h.1, h.3))
    }

    /// Re-time `task`'s pending acquisitions against the recorded holds: each one a hold covers
    /// waits to its end, and the task's later ones move by the same amount. Returns (spin owed
    /// by holder, acquisitions that waited).
    fn settle(&mut self, task: usize) -> ([u64; 3], u64) {
        let (mut owed, mut waits) = ([0; 3], 0);
        let mut i = 0;
        while i < self.takes.len() {
            let (t, cpu, tk) = self.takes[i];
            if tk != task {
                i += 1;
                continue;
            }
            match self.covered(cpu, t) {
                Some((end, holder)) => {
                    let d = end - t;
                    owed[holder as usize] += d;
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

    /// Settle `task` and add what it now owes to its debt; returns the acquisitions that waited.
    fn owe(&mut self, task: usize) -> u64 {
        let (owed, waits) = self.settle(task);
        match self.owed.iter_mut().find(|o| o.0 == task) {
            Some(o) => (0..3).for_each(|h| o.1[h] += owed[h]),
            None => self.owed.push((task, owed)),
        }
        waits
    }

    /// Tasks with an acquisition on another CPU than `cpu` inside one of `cpu`'s holds that
    /// ends after `from`.
    fn hit_by(&self, cpu: u32, from: u64) -> Vec<usize> {
        let mut hit: Vec<usize> = Vec::new();
        for &(t, c, task) in &self.takes {
            if c != cpu
                && !hit.contains(&task)
                && self.holds.iter().any(|h| h.2 == cpu && h.1 > from && h.0 <= t && t < h.1)
            {
                hit.push(task);
            }
        }
        hit
    }

    /// `spin_lock` by `task` on `cpu` at `at` (its clock), `now` being the scheduler's time: the
    /// spin it owes from earlier bursts, then the wait for a recorded hold covering it. Returns
    /// (spin in all, whether a hold covered the acquisition); the caller charges the spin, and
    /// the lock is taken at `at` + spin.
    pub fn acquire(&mut self, now: u64, at: u64, cpu: u32, task: usize) -> (u64, bool) {
        // Quanta computed from here on start at `now` or later, so their holds end after it.
        if self.pruned_at != Some(now) {
            self.holds.retain(|h| h.1 > now);
            self.takes.retain(|x| x.0 >= now);
            self.pruned_at = Some(now);
        }
        // Spin this task owes from its earlier bursts, paid before it can try again.
        let mut by = [0; 3];
        if let Some(i) = self.owed.iter().position(|o| o.0 == task) {
            by = self.owed.swap_remove(i).1;
        }
        let owed: u64 = by.iter().sum();
        let t = at + owed;
        let (until, holder) = self.covered(cpu, t).unwrap_or((t, Holder::Other));
        by[holder as usize] += until - t;
        let wait = owed + until - t;
        self.spin_ns += wait;
        (0..3).for_each(|h| self.spin_by_holder[h] += by[h]);
        let taken = at + wait;
        if taken < now {
            self.pruned_at = None;
        }
        self.takes.push((taken, cpu, task));
        (wait, until > t)
    }

    /// `spin_unlock` at `end` of a hold on `cpu` that began at `taken`: returns the acquisitions
    /// on other CPUs, computed before the hold was known, that now wait for it.
    pub fn release(&mut self, now: u64, taken: u64, end: u64, cpu: u32) -> u64 {
        self.release_by(now, taken, end, cpu, Holder::Other)
    }

    /// `release` of a hold by `holder`.
    pub fn release_by(&mut self, now: u64, taken: u64, end: u64, cpu: u32, holder: Holder) -> u64 {
        if end < taken + MIN_HOLD_NS {
            return 0;
        }
        if end <= now {
            self.pruned_at = None;
        }
        self.holds.push((taken, end, cpu, holder));
        // Tasks whose acquisitions, computed before this hold was known, fall inside it.
        let mut hit: Vec<usize> = Vec::new();
        for &(t, c, task) in &self.takes {
            if c != cpu && taken <= t && t < end && !hit.contains(&task) {
                hit.push(task);
            }
        }
        hit.into_iter().map(|task| self.owe(task)).sum()
    }

    /// A hard interrupt ran on `cpu` from `at` for `ns`. 2.4 takes pagemap_lru_lock with plain
    /// `spin_lock` (interrupts on), so a hold the CPU is in lasts `ns` longer, and its later holds
    /// and acquisitions (computed with its quantum) come `ns` later. Returns the acquisitions on
    /// other CPUs that now wait (or wait longer).
    pub fn interrupted(&mut self, cpu: u32, at: u64, ns: u64) -> u64 {
        let mut held = false;
        for h in self.holds.iter_mut().filter(|h| h.2 == cpu && h.1 > at) {
            if h.0 > at {
                h.0 += ns;
            }
            h.1 += ns;
            held = true;
        }
        for x in self.takes.iter_mut().filter(|x| x.1 == cpu && x.0 > at) {
            x.0 += ns;
        }
        if !held {
            return 0;
        }
        self.hit_by(cpu, at).into_iter().map(|task| self.owe(task)).sum()
    }
}

/// See `LruLock::interrupted`.
pub fn interrupted(k: &mut Kernel, cpu: u32, at: u64, ns: u64) {
    let waits = k.reclaim.riel24_mut().lock.interrupted(cpu, at, ns);
    k.reclaim.riel24_mut().stats.lock_contended += waits;
}

/// Who spun, for `Stats::spin_by_waiter`: kswapd, kreclaimd, a task in direct reclaim (its
/// `do_try_to_free_pages`), any other task (its allocations' `reclaim_page` and `lru_cache_add`).
pub const WAITERS: [&str; 4] = ["kswapd", "kreclaimd", "direct reclaim", "other"];

/// `spin_lock(&pagemap_lru_lock)`: returns the time the lock was taken.
pub fn spin_lock(k: &mut Kernel, ctx: &mut Ctx) -> u64 {
    let (wait, contended) = k.reclaim.riel24_mut().lock.acquire(k.now, ctx.clock(), ctx.cpu, ctx.task);
    if contended {
        k.reclaim.riel24_mut().stats.lock_contended += 1;
    }
    if wait > 0 {
        let r = k.reclaim.riel24_mut();
        let w = if ctx.is_kswapd {
            0
        } else if r.kreclaimd_task == Some(ctx.task) {
            1
        } else if ctx.in_reclaim {
            2
        } else {
            3
        };
        r.stats.spin_by_waiter[w] += wait;
        r.stats.spin_by_holder = r.lock.spin_by_holder;
        k.charge(ctx, KFunc::LruLockSpin, wait);
    }
    ctx.clock()
}

/// `spin_unlock(&pagemap_lru_lock)` for a hold by `holder` that began at `taken`.
pub fn spin_unlock(k: &mut Kernel, ctx: &Ctx, taken: u64, holder: Holder) {
    let now = k.now;
    let r = k.reclaim.riel24_mut();
    r.stats.lock_contended += r.lock.release_by(now, taken, ctx.clock(), ctx.cpu, holder);
}

#[cfg(test)]
mod tests {
    use super::*;
    const R: Holder = Holder::RefillInactiveScan;

    #[test]
    fn a_burst_computed_early_waits_for_each_later_hold_it_runs_into() {
        // The loader (task 1, cpu 1) took the lock at 10, 20 and 30 µs, 10 µs apart, before
        // kswapd's quantum (cpu 0) was computed: holds 5–100 µs and 105–300 µs.
        let mut l = LruLock {
            takes: vec![(10_000, 1, 1), (20_000, 1, 1), (30_000, 1, 1), (15_000, 0, 0)],
            holds: vec![(5_000, 100_000, 0, Holder::RefillInactiveScan), (105_000, 300_000, 0, Holder::PageLaunder)],
            ..Default::default()
        };
        let (owed, waits) = l.settle(1);
        // 10 → 100 (90 µs); the next moves to 110, inside the second hold → 300 (190 µs); the
        // last moves to 310, free.
        assert_eq!((owed, waits), ([90_000, 190_000, 0], 2));
        assert_eq!(l.takes[2].0, 310_000);
        // kswapd's own acquisition is not its own hold's victim.
        assert_eq!(l.settle(0), ([0; 3], 0));
    }

    #[test]
    fn an_interrupt_inside_a_hold_lengthens_the_spinners_wait() {
        // kswapd (cpu 0) holds the lock 0–100 µs; the loader (task 1, cpu 1) wants it at 50 µs
        // and spins to 100 µs.
        let mut l = LruLock { holds: vec![(0, 100_000, 0, R)], takes: vec![(50_000, 1, 1)], ..Default::default() };
        assert_eq!(l.owe(1), 1);
        assert_eq!(l.owed, vec![(1, [50_000, 0, 0])]);
        // A 98 µs disk interrupt lands on cpu 0 at 60 µs, inside the hold: the loader spins 98 µs
        // more.
        assert_eq!(l.interrupted(0, 60_000, 98_000), 1);
        assert_eq!(l.holds, vec![(0, 198_000, 0, R)]);
        assert_eq!(l.owed, vec![(1, [148_000, 0, 0])]);
        // One on the spinner's own CPU moves its acquisition, which now falls after the hold.
        assert_eq!(l.interrupted(1, 150_000, 60_000), 0);
        assert_eq!(l.takes[0].0, 258_000);
    }

    #[test]
    fn an_interrupt_outside_any_hold_costs_the_lock_nothing() {
        let mut l = LruLock { holds: vec![(0, 100_000, 0, R)], takes: vec![(150_000, 1, 1)], ..Default::default() };
        // cpu 0 is past its hold: nothing moves, nobody waits.
        assert_eq!(l.interrupted(0, 120_000, 98_000), 0);
        assert_eq!(l.holds, vec![(0, 100_000, 0, R)]);
        assert_eq!(l.settle(1), ([0; 3], 0));
        // A later hold of the interrupted CPU (computed with its quantum) comes later, and now
        // covers the loader's acquisition.
        l.holds.push((130_000, 140_000, 0, R));
        assert_eq!(l.interrupted(0, 120_000, 20_000), 1);
        assert_eq!(l.holds[1], (150_000, 160_000, 0, R));
        assert_eq!(l.owed, vec![(1, [10_000, 0, 0])]);
    }

    /// 2.4's `check_used_once` activates a page with `activate_page`, which takes pagemap_lru_lock
    /// (2.4.0 `mm/swap.c`): a task whose second write() into a page comes while kswapd's scan
    /// holds the lock on the other CPU spins to the scan's end. The first write (age START, no
    /// list move) and one into a page already active take no lock.
    #[test]
    fn a_write_that_activates_a_page_spins_behind_a_scan() {
        use crate::machine::MachineConfig;
        use crate::mm_types::pg;
        use crate::mmzone::{Mt, ZoneType};
        let cfg = MachineConfig::of_zones("i386", 2, &[(ZoneType::Dma, 4096), (ZoneType::Normal, 16384)]);
        let mut k =
            Kernel::new(crate::profiles::first_with_engine(crate::profiles::Engine::Riel24), cfg, 1).expect("kernel");
        k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
        let file = k.file_create("dd", 1 << 20, 0, false);
        let mut dd = Ctx { cpu: 1, task: 2, ..Default::default() };
        let p = k.rmqueue(1, 0, Mt::Movable).expect("free page");
        k.fr.set(p, pg::UPTODATE);
        k.add_to_page_cache(&mut dd, file, 0, p);
        // kswapd's refill_inactive_scan holds the lock on CPU 0 for the first 100 µs.
        k.reclaim.riel24_mut().lock.release_by(0, 0, 100_000, 0, Holder::RefillInactiveScan);
        let spun = |k: &mut Kernel, ctx: &mut Ctx| {
            let before = ctx.sys_ns;
            crate::vmscan::mark_page_accessed_by(k, ctx, p);
            ctx.sys_ns - before
        };
        assert_eq!(spun(&mut k, &mut dd), 0, "the first use only gives the page an age");
        assert!(!k.fr.has(p, pg::ACTIVE));
        let at = dd.clock();
        assert!(at < 100_000);
        assert_eq!(spun(&mut k, &mut dd), 100_000 - at, "the second use waits for the scan");
        assert!(k.fr.has(p, pg::ACTIVE));
        assert_eq!(k.reclaim.riel24().stats.spin_by_waiter, [0, 0, 0, 100_000 - at]);
        assert_eq!(k.reclaim.riel24().lock.spin_by_holder, [100_000 - at, 0, 0]);
        let mut other = Ctx { cpu: 1, task: 3, ..Default::default() };
        assert_eq!(spun(&mut k, &mut other), 0, "an active page moves nowhere");
    }
}
