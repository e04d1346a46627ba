//! Tracepoints: events the mm emits where the kernel has a tracepoint (`include/trace/events/
//! kmem.h`, `vmscan.h`), for observers outside the simulation — the seed diagnostics today, an
//! ftrace-format writer later. Observers only read: attaching one never changes a run. With
//! none attached a tracepoint costs one test of `Kernel::tracing`.

use std::any::Any;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;
use crate::mmzone::Mt;

/// The gfp mask of an allocation, by the name `show_gfp_flags` prints for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GfpKind {
    HighuserMovable,
    Kernel,
    Atomic,
}

impl GfpKind {
    pub fn of(g: &crate::page_alloc::Gfp) -> GfpKind {
        if g.atomic {
            GfpKind::Atomic
        } else if g.mt == Mt::Movable {
            GfpKind::HighuserMovable
        } else {
            GfpKind::Kernel
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            GfpKind::HighuserMovable => "GFP_HIGHUSER_MOVABLE",
            GfpKind::Kernel => "GFP_KERNEL",
            GfpKind::Atomic => "GFP_ATOMIC",
        }
    }
}

/// Who fired the tracepoint being delivered: task index, CPU, simulated time.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceAt {
    pub task: usize,
    pub cpu: u32,
    pub ns: u64,
}

/// 6.8's `struct reclaim_stat` for one `shrink_folio_list` batch, in pages: what the
/// batch's folios were when reclaim reached them (`mm_vmscan_lru_shrink_inactive` prints it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReclaimStat {
    /// Dirty or under writeback.
    pub nr_dirty: u64,
    /// Dirty and not yet under writeback.
    pub nr_unqueued_dirty: u64,
    /// Under writeback with PG_reclaim already set: marked by an earlier pass.
    pub nr_congested: u64,
    /// Under writeback, marked PG_reclaim and activated (case 2).
    pub nr_writeback: u64,
    /// kswapd met a marked folio under writeback again (case 1).
    pub nr_immediate: u64,
    /// Activated, [anon, file].
    pub nr_activate: [u64; 2],
    /// Referenced, kept on the inactive list.
    pub nr_ref_keep: u64,
    /// Mapped and could not be unmapped.
    pub nr_unmap_fail: u64,
    /// 2.6.36's engine (which fills the fields above as their names say, `nr_writeback` for the
    /// pages it keeps because they are under writeback): `trylock_page` failed, kept.
    pub nr_locked: u64,
    /// 2.6.36's engine: unevictable (mlocked) pages culled to their list.
    pub nr_culled: u64,
    /// 2.6.36's engine: mapped pages reached past the culls.
    pub nr_mapped: u64,
    /// 2.6.36's engine: anon pages `add_to_swap` found no slot for, activated.
    pub nr_noswap: u64,
    /// 2.6.36's engine: dirty pages handed to `pageout` (the rest of `nr_unqueued_dirty` kept unwritten).
    pub nr_pageout: u64,
    /// 2.6.36's engine: pages freed although PG_referenced was set (PAGEREF_RECLAIM_CLEAN, or any
    /// reference in a lumpy batch): a `read()`'s mark does not keep an unmapped clean page.
    pub nr_freed_referenced: u64,
    /// 2.6.36's engine: pages freed after `try_to_unmap` took them out of every page table.
    pub nr_freed_mapped: u64,
}

/// Batches summed field by field (observers and tests add up a run's batches).
impl std::ops::AddAssign for ReclaimStat {
    fn add_assign(&mut self, s: ReclaimStat) {
        self.nr_dirty += s.nr_dirty;
        self.nr_unqueued_dirty += s.nr_unqueued_dirty;
        self.nr_congested += s.nr_congested;
        self.nr_writeback += s.nr_writeback;
        self.nr_immediate += s.nr_immediate;
        self.nr_activate[0] += s.nr_activate[0];
        self.nr_activate[1] += s.nr_activate[1];
        self.nr_ref_keep += s.nr_ref_keep;
        self.nr_unmap_fail += s.nr_unmap_fail;
        self.nr_locked += s.nr_locked;
        self.nr_culled += s.nr_culled;
        self.nr_mapped += s.nr_mapped;
        self.nr_noswap += s.nr_noswap;
        self.nr_pageout += s.nr_pageout;
        self.nr_freed_referenced += s.nr_freed_referenced;
        self.nr_freed_mapped += s.nr_freed_mapped;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracepoint {
    /// `mm_page_alloc`: an allocation of `order` served from zone `zone`.
    MmPageAlloc {
        zone: usize,
        order: u32,
        migratetype: Mt,
        pfn: Pfn,
        gfp: GfpKind,
    },
    /// `mm_page_free` (2.6.3x `mm_page_free_direct`; `cold`: a cold order-0 free, which 2.6.3x
    /// traces as `mm_pagevec_free` with cold=1 — reclaim's freed pages).
    MmPageFree {
        pfn: Pfn,
        order: u32,
        cold: bool,
    },
    /// `mm_filemap_add_to_page_cache` / `mm_filemap_delete_from_page_cache`.
    FilemapAdd {
        ino: u32,
        pfn: Pfn,
        index: u64,
        /// The folio's order (6.8 prints `folio_order`; a single page is 0).
        order: u32,
    },
    FilemapDelete {
        ino: u32,
        pfn: Pfn,
        index: u64,
    },
    /// `mm_vmscan_wakeup_kswapd`: an allocation woke node `nid`'s kswapd for zone `zid`.
    WakeupKswapd {
        nid: usize,
        zid: usize,
        order: u32,
        gfp: GfpKind,
    },
    /// `mm_vmscan_kswapd_wake`: node `nid`'s kswapd woke for `order`.
    KswapdWake {
        nid: usize,
        order: u32,
    },
    /// `mm_vmscan_kswapd_sleep`.
    KswapdSleep {
        nid: usize,
    },
    /// `mm_vmscan_direct_reclaim_begin` / `_end`.
    DirectReclaimBegin {
        order: u32,
        may_writepage: bool,
        gfp: GfpKind,
    },
    DirectReclaimEnd {
        nr_reclaimed: u64,
    },
    /// `mm_vmscan_memcg_reclaim_begin` / `_end` (2.6.37+, 6.8's direct-reclaim template):
    /// one limit reclaim, `try_to_free_mem_cgroup_pages`. The host's trace splits its limit
    /// reclaims with these; without them a comparison can only group shrink events by priority.
    MemcgReclaimBegin {
        order: u32,
        gfp: GfpKind,
    },
    MemcgReclaimEnd {
        nr_reclaimed: u64,
    },
    /// `mm_vmscan_lru_isolate`: `mode` 0 inactive, 1 active, 2 both (lumpy); `lru` the list.
    LruIsolate {
        classzone: usize,
        order: u32,
        mode: u32,
        nr_requested: u64,
        nr_scanned: u64,
        nr_skipped: u64,
        nr_taken: u64,
        lru: usize,
    },
    /// `mm_vmscan_lru_shrink_inactive`; `stat` is 6.8's `struct reclaim_stat` (2.6.36's engine
    /// fills it for observers, though its event prints no such fields; zero for the others).
    LruShrinkInactive {
        nid: usize,
        zid: usize,
        nr_scanned: u64,
        nr_reclaimed: u64,
        priority: i32,
        file: bool,
        stat: ReclaimStat,
    },
    /// `mm_vmscan_lru_shrink_active`.
    LruShrinkActive {
        nid: usize,
        nr_taken: u64,
        nr_deactivated: u64,
        nr_referenced: u64,
        priority: i32,
        file: bool,
    },
    /// `mm_vmscan_writepage` (6.x `mm_vmscan_write_folio`): reclaim started writing `pfn`.
    Writepage {
        pfn: Pfn,
        file: bool,
    },
    /// `writeback_dirty_folio` (6.x; `writeback_dirty_page` before folios): a file page on
    /// disk `bdi` became dirty and was accounted (`folio_account_dirtied`).
    WritebackDirty {
        bdi: usize,
        ino: u32,
        index: u64,
    },
    /// `wbc_writepage`: `write_cache_pages` is about to write one page to disk `bdi` under this
    /// `writeback_control` (`nr_to_write` before this page).
    WbcWritepage {
        bdi: usize,
        nr_to_write: i64,
        /// WB_SYNC_ALL (fsync) rather than WB_SYNC_NONE (the flusher).
        sync_all: bool,
        kupdate: bool,
        background: bool,
        /// `older_than_this` in ns of simulated time (kupdate's expiry cut-off), else None.
        older_ns: Option<u64>,
    },
    /// `mm_page_alloc_zone_locked`: a free block of `block_order` at `pfn` taken off zone
    /// `zone`'s free lists for a request of `order` and `migratetype` (split if larger: the
    /// request gets the block's first pages).
    MmPageAllocZoneLocked {
        zone: usize,
        pfn: Pfn,
        block_order: u32,
        order: u32,
        migratetype: Mt,
    },
    /// `mm_page_alloc_extfrag`: `__rmqueue_fallback` took a block of `fallback_order` from
    /// `fallback_mt`'s lists for a request of `order` and `start_mt`; `stolen` when it moved the
    /// pageblock's free pages to `start_mt` (the block then splits onto `start_mt`'s lists).
    MmPageAllocExtfrag {
        zone: usize,
        order: u32,
        fallback_order: u32,
        start_mt: Mt,
        fallback_mt: Mt,
        stolen: bool,
    },
    /// kswapd of `node` begins a `balance_pgdat` pass for `order` (vmlab's own: the kernel's
    /// nearest is `mm_vmscan_kswapd_wake`).
    KswapdBalanceBegin {
        node: usize,
        order: u32,
    },
    /// That pass ended with the node balanced at `order`.
    KswapdBalanceEnd {
        node: usize,
        order: u32,
    },
    /// vmlab's own (2.6.3x `balance_pgdat` has no tracepoint there): in a priority pass at
    /// `order`, kswapd reached zone `zid` of the zones up to `end_zone` (its index, the
    /// classzone of the check) and `shrink` says whether it shrinks it — false when the zone
    /// passes the "way too many pages free" check (`8*high_wmark_pages` at the pass's order) or
    /// a what-if spares it. Fired before the shrink, so an observer reads the zone as the check
    /// read it.
    KswapdZoneCheck {
        node: usize,
        zid: usize,
        order: u32,
        priority: i32,
        end_zone: usize,
        shrink: bool,
    },
    /// `mm_vmscan_throttled`: a reclaimer's `reclaim_throttle` wait on node `nid` ended after
    /// `usec_delayed` of its `usec_timeout`. `woken` (vmlab's own field, not printed): a
    /// `wake_up` on its queue ended it; otherwise the timeout did, or the task ran again first
    /// for another reason.
    Throttled {
        nid: usize,
        usec_timeout: u64,
        usec_delayed: u64,
        reason: crate::vmscan::throttle::ThrottleReason,
        woken: bool,
    },
    /// vmlab's own (6.8 has no tracepoint in `__acct_reclaim_writeback`): the waiter of the
    /// event's task was woken from node `nid`'s writeback queue once `nr_written` pages had
    /// finished writeback since the first of `nr_throttled` waiters throttled.
    ThrottleWake {
        nid: usize,
        nr_written: u64,
        nr_throttled: u32,
    },
    /// vmlab's own (`workingset_refault` has no tracepoint): a folio of `nr` pages came back
    /// over a shadow, `distance` evictions and activations after it left, against the
    /// `workingset_size` that `workingset_test_recent` summed from `lists` (the evicting
    /// lruvec's inactive/active anon, inactive/active file, as `lruvec_page_state` read them);
    /// `activated` when the distance was within it, `restored` when the shadow also had
    /// PG_workingset.
    WorkingsetRefault {
        file: bool,
        nr: u64,
        distance: u64,
        workingset_size: u64,
        activated: bool,
        restored: bool,
        lists: [u64; 4],
    },
    /// `memcg_flush_stats` (6.1x `include/trace/events/memcg.h`; the host's 6.18 prints it, 6.8
    /// had none): the memcg statistics of group `memcg`'s subtree were flushed, `force` by the
    /// periodic worker (`flush_memcg_stats_dwork`), else by a reader or a reclaim pass. vmlab
    /// flushes only where the kernel's `needs_flush` would pass and does not count the pending
    /// updates, so the line carries no `stats_updates`.
    MemcgFlushStats {
        memcg: u8,
        force: bool,
    },
}

impl Tracepoint {
    /// The event's bit in a `Tracer::wants` mask (`kind::*`): one per tracepoint, as ftrace
    /// enables each event on its own (`events/<system>/<event>/enable`).
    #[inline(always)]
    pub const fn kind(&self) -> u32 {
        match self {
            Tracepoint::MmPageAlloc { .. } => kind::MM_PAGE_ALLOC,
            Tracepoint::MmPageFree { .. } => kind::MM_PAGE_FREE,
            Tracepoint::FilemapAdd { .. } => kind::FILEMAP_ADD,
            Tracepoint::FilemapDelete { .. } => kind::FILEMAP_DELETE,
            Tracepoint::WakeupKswapd { .. } => kind::WAKEUP_KSWAPD,
            Tracepoint::KswapdWake { .. } => kind::KSWAPD_WAKE,
            Tracepoint::KswapdSleep { .. } => kind::KSWAPD_SLEEP,
            Tracepoint::DirectReclaimBegin { .. } => kind::DIRECT_RECLAIM_BEGIN,
            Tracepoint::DirectReclaimEnd { .. } => kind::DIRECT_RECLAIM_END,
            Tracepoint::MemcgReclaimBegin { .. } => kind::MEMCG_RECLAIM_BEGIN,
            Tracepoint::MemcgReclaimEnd { .. } => kind::MEMCG_RECLAIM_END,
            Tracepoint::LruIsolate { .. } => kind::LRU_ISOLATE,
            Tracepoint::LruShrinkInactive { .. } => kind::LRU_SHRINK_INACTIVE,
            Tracepoint::LruShrinkActive { .. } => kind::LRU_SHRINK_ACTIVE,
            Tracepoint::Writepage { .. } => kind::WRITEPAGE,
            Tracepoint::WritebackDirty { .. } => kind::WRITEBACK_DIRTY,
            Tracepoint::WbcWritepage { .. } => kind::WBC_WRITEPAGE,
            Tracepoint::MmPageAllocZoneLocked { .. } => kind::MM_PAGE_ALLOC_ZONE_LOCKED,
            Tracepoint::MmPageAllocExtfrag { .. } => kind::MM_PAGE_ALLOC_EXTFRAG,
            Tracepoint::KswapdBalanceBegin { .. } => kind::KSWAPD_BALANCE_BEGIN,
            Tracepoint::KswapdBalanceEnd { .. } => kind::KSWAPD_BALANCE_END,
            Tracepoint::KswapdZoneCheck { .. } => kind::KSWAPD_ZONE_CHECK,
            Tracepoint::Throttled { .. } => kind::THROTTLED,
            Tracepoint::ThrottleWake { .. } => kind::THROTTLE_WAKE,
            Tracepoint::WorkingsetRefault { .. } => kind::WORKINGSET_REFAULT,
            Tracepoint::MemcgFlushStats { .. } => kind::MEMCG_FLUSH_STATS,
        }
    }
}

/// `Tracepoint::kind` bits.
pub mod kind {
    pub const MM_PAGE_ALLOC: u32 = 1 << 0;
    pub const MM_PAGE_FREE: u32 = 1 << 1;
    pub const FILEMAP_ADD: u32 = 1 << 2;
    pub const FILEMAP_DELETE: u32 = 1 << 3;
    pub const WAKEUP_KSWAPD: u32 = 1 << 4;
    pub const KSWAPD_WAKE: u32 = 1 << 5;
    pub const KSWAPD_SLEEP: u32 = 1 << 6;
    pub const DIRECT_RECLAIM_BEGIN: u32 = 1 << 7;
    pub const DIRECT_RECLAIM_END: u32 = 1 << 8;
    pub const LRU_ISOLATE: u32 = 1 << 9;
    pub const LRU_SHRINK_INACTIVE: u32 = 1 << 10;
    pub const LRU_SHRINK_ACTIVE: u32 = 1 << 11;
    pub const WRITEPAGE: u32 = 1 << 12;
    pub const WRITEBACK_DIRTY: u32 = 1 << 13;
    pub const WBC_WRITEPAGE: u32 = 1 << 14;
    pub const MM_PAGE_ALLOC_ZONE_LOCKED: u32 = 1 << 15;
    pub const MM_PAGE_ALLOC_EXTFRAG: u32 = 1 << 16;
    pub const KSWAPD_BALANCE_BEGIN: u32 = 1 << 17;
    pub const KSWAPD_BALANCE_END: u32 = 1 << 18;
    pub const THROTTLED: u32 = 1 << 19;
    pub const THROTTLE_WAKE: u32 = 1 << 20;
    pub const MEMCG_RECLAIM_BEGIN: u32 = 1 << 21;
    pub const MEMCG_RECLAIM_END: u32 = 1 << 22;
    pub const WORKINGSET_REFAULT: u32 = 1 << 23;
    pub const KSWAPD_ZONE_CHECK: u32 = 1 << 24;
    pub const MEMCG_FLUSH_STATS: u32 = 1 << 25;
    pub const ALL: u32 = u32::MAX;
}

/// An observer of tracepoints. It sees the kernel as it is when the event fires.
pub trait Tracer: Any {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint);
    /// The events this observer reads (`Tracepoint::kind` bits); the others are not delivered
    /// to anyone unless another observer wants them. Default: all.
    fn wants(&self) -> u32 {
        kind::ALL
    }
    fn as_any(&self) -> &dyn Any;
    /// A task was created (task index, pid, name), for observers that print who fired an event.
    fn task_created(&mut self, _task: usize, _pid: u32, _comm: &str) {}
    /// The run is over: flush what is buffered.
    fn finish(&mut self) {}
}

impl Kernel {
    /// Some attached observer reads events of `kinds` (`Tracepoint::kind` bits).
    #[inline(always)]
    pub fn traces(&self, kinds: u32) -> bool {
        self.trace_mask & kinds != 0
    }

    /// Fire a tracepoint. Inlined, the event's kind is a constant: an event no observer wants
    /// costs one test, as with none attached.
    #[inline]
    pub fn trace(&mut self, ev: Tracepoint) {
        if self.traces(ev.kind()) {
            self.emit(ev);
        }
    }

    /// Fire a tracepoint from `ctx`'s task and CPU, at its clock.
    #[inline]
    pub fn trace_ctx(&mut self, ctx: &Ctx, ev: Tracepoint) {
        if self.tracing {
            // Kept for every event, delivered or not: an event fired without a ctx reports
            // the last one's task and time (`trace`), whichever kinds are delivered.
            self.trace_at = TraceAt { task: ctx.task, cpu: ctx.cpu, ns: ctx.clock() };
            if self.traces(ev.kind()) {
                self.emit(ev);
            }
        }
    }

    /// Fire a tracepoint at clock `ns` of the task that fired the last one: an event of another
    /// task's clock (a flusher's) that vmlab runs on behalf of whoever reached it first.
    #[inline]
    pub fn trace_at_clock(&mut self, ns: u64, ev: Tracepoint) {
        if self.traces(ev.kind()) {
            self.trace_at.ns = ns;
            self.emit(ev);
        }
    }

    /// Tell the observers about a new task.
    pub fn task_created(&mut self, task: usize, pid: u32, comm: &str) {
        for t in &mut self.tracers {
            t.task_created(task, pid, comm);
        }
    }

    /// The run ended: observers flush.
    pub fn finish_tracers(&mut self) {
        for t in &mut self.tracers {
            t.finish();
        }
    }

    #[cold]
    fn emit(&mut self, ev: Tracepoint) {
        let mut tracers = std::mem::take(&mut self.tracers);
        let bit = ev.kind();
        for t in &mut tracers {
            if t.wants() & bit != 0 {
                t.event(self, &ev);
            }
        }
        self.tracers = tracers;
    }

    pub fn attach_tracer(&mut self, t: Box<dyn Tracer>) {
        self.trace_mask |= t.wants();
        self.tracers.push(t);
        self.tracing = true;
    }

    /// The attached observer of type `T`, if any.
    pub fn tracer<T: Tracer>(&self) -> Option<&T> {
        self.tracers.iter().find_map(|t| t.as_any().downcast_ref::<T>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the events it is given, wanting `mask`.
    struct Count {
        mask: u32,
        seen: Vec<u32>,
    }

    impl Tracer for Count {
        fn event(&mut self, _k: &Kernel, ev: &Tracepoint) {
            self.seen.push(ev.kind());
        }
        fn wants(&self) -> u32 {
            self.mask
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    fn kernel() -> Kernel {
        let cfg = crate::machine::MachineConfig::of_zones("x86_64", 1, &[(crate::mmzone::ZoneType::Normal, 4096)]);
        Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel")
    }

    fn fire_both(k: &mut Kernel, ctx: &Ctx) {
        k.trace_ctx(ctx, Tracepoint::MmPageFree { pfn: 7, order: 0, cold: false });
        k.trace(Tracepoint::KswapdSleep { nid: 0 });
    }

    #[test]
    fn an_observer_gets_only_the_kinds_it_wants_and_the_others_all() {
        let mut k = kernel();
        k.attach_tracer(Box::new(Count { mask: kind::KSWAPD_SLEEP, seen: Vec::new() }));
        let ctx = Ctx { task: 3, ..Default::default() };
        fire_both(&mut k, &ctx);
        assert_eq!(k.tracer::<Count>().expect("attached").seen, vec![kind::KSWAPD_SLEEP]);
        // The unwanted event still set who fired last: a later event without a ctx reports it.
        assert_eq!(k.trace_at.task, 3);

        let mut k = kernel();
        k.attach_tracer(Box::new(Count { mask: kind::KSWAPD_SLEEP, seen: Vec::new() }));
        k.attach_tracer(Box::new(Count { mask: kind::ALL, seen: Vec::new() }));
        fire_both(&mut k, &ctx);
        let seen: Vec<_> =
            k.tracers.iter().map(|t| t.as_any().downcast_ref::<Count>().expect("count").seen.clone()).collect();
        assert_eq!(seen, vec![vec![kind::KSWAPD_SLEEP], vec![kind::MM_PAGE_FREE, kind::KSWAPD_SLEEP]]);
    }
}
