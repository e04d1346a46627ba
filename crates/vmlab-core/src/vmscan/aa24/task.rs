//! Per-task accounting of 2.4-aa direct reclaim: what each task's own `try_to_free_pages_zone`
//! calls did, and its spin on `pagemap_lru_lock` in `lru_cache_add` outside them. Read around a
//! call's slice (not per page), so a census can say where one allocator's time went (seed 002's
//! `cp`, history §28: `examples/aa24_task.rs`). Nothing here changes what reclaim does.

use super::{grow, Aa24Stats};
use crate::kernel::{Ctx, Kernel};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

/// One task's direct reclaim, summed over its `try_to_free_pages_zone` calls.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskReclaim {
    /// Calls begun, and calls that gave up after `vm_passes` rounds.
    pub calls: u64,
    pub failed: u64,
    /// CPU spent in them, the spins and the walk included.
    pub sys_ns: u64,
    /// Of it: spinning on `pagemap_lru_lock`, on an mm's `page_table_lock`, and in the walk
    /// (`swap_out`, `try_to_swap_out`, objrmap).
    pub lru_spin_ns: u64,
    pub ptl_spin_ns: u64,
    pub walk_ns: u64,
    /// Spinning on `pagemap_lru_lock` in `lru_cache_add` of the pages its reads added, outside
    /// reclaim.
    pub lru_add_spin_ns: u64,
    /// Asleep after its own writepages, the request queue full (`get_request_wait`).
    pub queue_sleep_ns: u64,
    /// Asleep on a page it sent to disk (`wait_on_page` of a `PG_launder` page).
    pub launder_wait_ns: u64,
    /// `shrink_cache` pages looked at; freed by the scan and by the clean-cache pass;
    /// writepages; `swap_out` calls.
    pub scanned: u64,
    pub freed: u64,
    pub clean_freed: u64,
    pub writepages: u64,
    pub swap_out_calls: u64,
}

/// `task`'s entry, created on its first use.
pub(super) fn entry(st: &mut Aa24Stats, task: usize) -> &mut TaskReclaim {
    grow(&mut st.by_task, task, TaskReclaim::default());
    &mut st.by_task[task]
}

/// The counters a `TaskReclaim` is the difference of, read around one slice of a call.
pub(super) struct TaskSnap([u64; 10]);

impl TaskSnap {
    pub(super) fn take(k: &Kernel, ctx: &Ctx) -> TaskSnap {
        let st = &k.reclaim.aa24().stats;
        let p = &k.prof;
        TaskSnap([
            ctx.sys_ns,
            p.get(KFunc::LruLockSpin),
            p.get(KFunc::PageTableLockSpin),
            p.get(KFunc::SwapOut) + p.get(KFunc::TryToSwapOut) + p.get(KFunc::TryToUnmapSharedVma),
            ctx.sleep_ns,
            k.ev.get(Vm::PgscanDirect),
            st.freed,
            st.clean_pass_freed,
            st.writepages,
            st.swap_out_calls,
        ])
    }

    /// Add what changed since the snapshot to `ctx.task`'s entry; `launder_ns` / `queue_ns` is
    /// the `PG_launder` / request-queue wait the slice ended in.
    pub(super) fn add_since(&self, k: &mut Kernel, ctx: &Ctx, launder_ns: u64, queue_ns: u64) {
        let now = TaskSnap::take(k, ctx);
        let d: [u64; 10] = std::array::from_fn(|i| now.0[i].saturating_sub(self.0[i]));
        let r = entry(&mut k.reclaim.aa24_mut().stats, ctx.task);
        r.sys_ns += d[0];
        r.lru_spin_ns += d[1];
        r.ptl_spin_ns += d[2];
        r.walk_ns += d[3];
        r.queue_sleep_ns += d[4] + queue_ns;
        r.launder_wait_ns += launder_ns;
        r.scanned += d[5];
        r.freed += d[6];
        r.clean_freed += d[7];
        r.writepages += d[8];
        r.swap_out_calls += d[9];
    }
}
