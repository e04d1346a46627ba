//! `pagemap_lru_lock`: the one spinlock over every 2.4 LRU list. The scanners hold it for a whole
//! scan (`refill_inactive_scan`) or between I/O calls (`page_launder`); a CPU that wants it while
//! another CPU holds it spins until the holder lets go, and that spinning is kernel CPU time
//! (`stext_lock` in a 2.4 profile).
//!
//! CPUs run in quanta computed one after the other, so a hold is recorded as an interval of
//! simulated time; a later acquisition on another CPU that falls inside one spins to its end.
//! Only holds long enough to matter (a scan) are recorded; single-page list operations only
//! check.

use crate::kernel::{Ctx, Kernel};
use crate::stats::kfunc::KFunc;

/// Holds shorter than this are not recorded (one list operation takes well under a µs).
const MIN_HOLD_NS: u64 = 2_000;

#[derive(Clone, Debug, Default)]
pub struct LruLock {
    /// (taken, released, cpu) of recent long holds.
    holds: Vec<(u64, u64, u32)>,
    pub spin_ns: u64,
}

/// `spin_lock(&pagemap_lru_lock)`: returns the time the lock was taken.
pub fn spin_lock(k: &mut Kernel, ctx: &mut Ctx) -> u64 {
    let now = k.now;
    let l = &mut k.riel.lock;
    if !l.holds.is_empty() {
        l.holds.retain(|h| h.1 > now);
    }
    let t = ctx.clock();
    let mut until = t;
    for &(s, e, cpu) in &l.holds {
        if cpu != ctx.cpu && s <= t && t < e {
            until = until.max(e);
        }
    }
    if until > t {
        let wait = until - t;
        l.spin_ns += wait;
        k.riel.stats.lock_contended += 1;
        k.charge(ctx, KFunc::LruLockSpin, wait);
    }
    ctx.clock()
}

/// `spin_unlock(&pagemap_lru_lock)` for a hold that began at `taken`.
pub fn spin_unlock(k: &mut Kernel, ctx: &Ctx, taken: u64) {
    let end = ctx.clock();
    if end >= taken + MIN_HOLD_NS {
        k.riel.lock.holds.push((taken, end, ctx.cpu));
    }
}
