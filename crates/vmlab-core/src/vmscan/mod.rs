//! Page reclaim (`mm/vmscan.c`). What is shared by every era lives here: the LRU list
//! operations, `pageout`, `__remove_mapping`. Each era's engine (list layout, scan policy,
//! kswapd) is a submodule implementing [`ReclaimEngine`] and owning its state in one
//! [`EngineState`] variant, chosen by the profile's `engine` field. This module is the only
//! place that asks which engine runs: the rest of the mm calls the functions below.

pub mod aa24;
pub mod modern;
pub mod riel24;
pub mod split2636;
pub mod swap;
pub mod throttle;
pub mod zone26;

#[cfg(test)]
mod balance_gap_tests;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, List, Pfn};
use crate::mmzone::{Lruvec, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_NONE, LRU_PVEC, LRU_UNEVICTABLE, NR_LRU_LISTS};
use crate::page_alloc::{AllocFail, Gfp};
use crate::profiles::Engine;
use crate::stats::explain::Reason;
use crate::stats::vmstat::Vm;
use crate::trace::Tracepoint;

pub use aa24::slab::BhStats;
pub use aa24::{Aa24Stats, TaskReclaim};
pub use riel24::bdflush::nr_free_buffer_pages as riel24_nr_free_buffer_pages;
pub use riel24::lock::WAITERS as RIEL24_LOCK_WAITERS;
pub use riel24::task::TaskIo as Riel24TaskIo;
pub use riel24::Stats as Riel24Stats;
pub use riel24::CLEAN_OUT as RIEL24_CLEAN_OUT;
pub use split2636::KswapdLocals as Split2636Kswapd;

/// One era's reclaim: where a page enters the LRU, what an access does, kswapd's wake test and
/// step, direct reclaim. The state lives in the engine's [`EngineState`] variant, so every
/// method takes the kernel; the defaults are what an era without the hook does.
pub trait ReclaimEngine {
    /// Which lruvec holds the lists of zone `zid`'s pages.
    fn lru_scope(k: &Kernel, zid: usize) -> LruScope;
    /// The names of the list slots as the era's `/proc/meminfo` would call them (`None`: unused).
    fn lru_names() -> [Option<&'static str>; NR_LRU_LISTS];
    /// The inactive list a page of this type goes back to (`putback_lru_page`).
    fn inactive_list(anon: bool) -> usize {
        if anon {
            LRU_INACTIVE_ANON
        } else {
            LRU_INACTIVE_FILE
        }
    }
    /// A new page enters the LRU (`lru_cache_add`).
    fn lru_add(k: &mut Kernel, p: Pfn);
    /// The same on CPU `cpu`: an engine with per-CPU LRU-add pagevecs batches it there.
    fn lru_cache_add(k: &mut Kernel, _cpu: u32, p: Pfn) {
        Self::lru_add(k, p)
    }
    /// `lru_add_drain` on `cpu` (an engine without LRU-add pagevecs has nothing to drain).
    fn lru_add_drain(_k: &mut Kernel, _cpu: u32) {}
    /// `lru_add_drain_all`.
    fn lru_add_drain_all(_k: &mut Kernel) {}
    /// `mark_page_accessed` from read()/write().
    fn mark_page_accessed(k: &mut Kernel, p: Pfn);
    /// The same, by a task: an engine whose list move takes a lock the task may spin for says so.
    fn mark_page_accessed_by(k: &mut Kernel, _ctx: &mut Ctx, p: Pfn) {
        Self::mark_page_accessed(k, p)
    }
    /// A fault found `p` in the page cache.
    fn nopage_accessed(_k: &mut Kernel, _p: Pfn) {}
    /// A fault takes its mm's page_table_lock.
    fn fault_page_table_lock(_k: &mut Kernel, _ctx: &mut Ctx, _mm: u32) {}
    /// A PTE mapping `p` was added or removed.
    fn page_mapcount_changed(_k: &mut Kernel, _p: Pfn, _mapped: bool) {}
    /// Free a page the kernel itself held.
    fn free_kernel_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
        k.free_pages(ctx, p, 0)
    }
    /// Pages went back to zone `zid`'s buddy lists.
    fn pages_freed(_k: &mut Kernel, _zid: usize) {}
    /// A page was added to the page cache by a read (the buffer heads it gets).
    fn page_cache_added(_k: &mut Kernel, _ctx: &mut Ctx, _p: Pfn) {}
    /// write() copied data into page-cache page `p` and dirtied it (`newly`: it was clean).
    fn page_dirtied_by_write(_k: &mut Kernel, _ctx: &mut Ctx, _p: Pfn, _newly: bool) {}
    /// The task of `ctx` submitted `pages` for writing (0: a flusher about to wait before its
    /// batch) and the request queue asked it to sleep `wait_ns` (an observer's hook).
    fn write_submitted(_k: &mut Kernel, _ctx: &Ctx, _pages: u64, _wait_ns: u64) {}
    /// A hard interrupt on `cpu` at `at` took `ns` from whatever ran there.
    fn irq_interrupted(_k: &mut Kernel, _cpu: u32, _at: u64, _ns: u64) {}
    /// The engine's own `__alloc_pages`, or `None` for the shared allocator.
    fn alloc_pages(_k: &mut Kernel, _ctx: &mut Ctx, _gfp: Gfp, _order: u32) -> Option<Result<Pfn, AllocFail>> {
        None
    }
    fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize);
    /// `wake_all_kswapd`: by default each node's kswapd once, for the first zone of the list
    /// on that node.
    fn wake_all_kswapd(k: &mut Kernel, zonelist: &[usize], order: u32, classzone: usize) {
        let mut woken = [false; 64];
        for &zid in zonelist {
            let node = k.zones[zid].node.min(63);
            if !woken[node] {
                woken[node] = true;
                Self::wakeup_kswapd(k, zid, order, classzone);
            }
        }
    }
    /// Direct reclaim; returns pages reclaimed.
    fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, classzone: usize) -> u64;
    /// A direct reclaim call that finished and freed nothing ends the allocation (after one
    /// last try at the high watermark) instead of being retried until the OOM killer runs.
    fn failed_reclaim_fails_alloc() -> bool {
        false
    }
    /// What keeps node `node`'s kswapd awake, in the era's own test.
    fn kswapd_why(k: &Kernel, node: usize) -> Reason;
    fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction;
    /// 2.4.9's `inactive_target` (meminfo `Inact_target`), pages; `None` in eras without one.
    fn inactive_target(_k: &Kernel) -> Option<u64> {
        None
    }
    /// The era runs kreclaimd beside kswapd.
    fn has_kreclaimd() -> bool {
        false
    }
    fn set_kreclaimd_task(_k: &mut Kernel, _t: usize) {}
    /// The engine keeps per-memcg lruvecs and reclaims a group at its limit; without, a
    /// scenario with `[[cgroup]]`s is refused.
    fn memcg_reclaim() -> bool {
        false
    }
    /// The engine's reclaim takes a large page-cache folio whole (isolates it, counts its pages,
    /// frees it at its order); without, a disk whose file system reads large folios is refused.
    fn large_folios() -> bool {
        false
    }
    /// `try_to_free_mem_cgroup_pages`: reclaim `nr` pages from group `g` and its descendants.
    fn try_to_free_mem_cgroup_pages(_k: &mut Kernel, _ctx: &mut Ctx, _g: u8, _nr: u64, _may_swap: bool) -> u64 {
        0
    }
    fn kreclaimd_step(_k: &mut Kernel, _ctx: &mut Ctx) -> KswapdAction {
        KswapdAction::Sleep
    }
    /// `reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)` for the task of `ctx` on `node`: returns
    /// when the wait times out. Without `reclaim_wait` queues a wakeup reaches the task only
    /// once it sleeps, and the stall is the whole timeout.
    fn reclaim_throttle(k: &mut Kernel, ctx: &mut Ctx, _node: usize) -> u64 {
        let until = k.reclaim_throttle_unqueued(ctx);
        crate::psi::memstall_wait(k, ctx, until);
        until
    }
    /// `pages` finished writeback (the throttle's waker).
    fn writeback_done(k: &mut Kernel, pages: &[Pfn]) {
        k.writeback_done_unqueued(pages.len() as u64)
    }
    /// `lru_note_cost_refault`: a page of the workingset came back; engines with a reclaim cost
    /// model count it against its type.
    fn lru_note_cost_refault(_k: &mut Kernel, _p: Pfn, _file: bool) {}
}

/// The running engine's own state, one variant per engine (6.8 keeps everything in the
/// shared node lruvecs and kswapd state).
pub enum EngineState {
    Modern,
    Split2636(Box<split2636::Split2636>),
    Riel24(Box<riel24::Riel24>),
    Aa24(Box<aa24::Aa24State>),
    Zone26(Box<zone26::Zone26State>),
}

impl EngineState {
    /// The state `engine` starts with on a machine of `zones` zones and `nodes` nodes.
    /// `zone_ends`: each zone's end pfn, in zone-id order.
    pub fn new(engine: Engine, zone_ends: &[u32], nodes: usize, cpus: usize) -> EngineState {
        let zones = zone_ends.len();
        match engine {
            Engine::Modern => EngineState::Modern,
            Engine::Split2636 => EngineState::Split2636(Box::new(split2636::Split2636::new(zones, nodes, cpus))),
            Engine::Riel24 => EngineState::Riel24(Box::new(riel24::Riel24::new(zone_ends))),
            Engine::Aa24 => EngineState::Aa24(Box::new(aa24::Aa24State::new(zones))),
            Engine::Zone26 => EngineState::Zone26(Box::new(zone26::Zone26State::new(zones, nodes))),
        }
    }
    pub(crate) fn riel24(&self) -> &riel24::Riel24 {
        match self {
            EngineState::Riel24(s) => s,
            _ => unreachable!("2.4.9 state asked for under another engine"),
        }
    }
    pub(crate) fn riel24_mut(&mut self) -> &mut riel24::Riel24 {
        match self {
            EngineState::Riel24(s) => s,
            _ => unreachable!("2.4.9 state asked for under another engine"),
        }
    }
    pub(crate) fn aa24(&self) -> &aa24::Aa24State {
        match self {
            EngineState::Aa24(s) => s,
            _ => unreachable!("2.4-aa state asked for under another engine"),
        }
    }
    pub(crate) fn aa24_mut(&mut self) -> &mut aa24::Aa24State {
        match self {
            EngineState::Aa24(s) => s,
            _ => unreachable!("2.4-aa state asked for under another engine"),
        }
    }
    pub(crate) fn zone26(&self) -> &zone26::Zone26State {
        match self {
            EngineState::Zone26(s) => s,
            _ => unreachable!("2.6.26 state asked for under another engine"),
        }
    }
    pub(crate) fn zone26_mut(&mut self) -> &mut zone26::Zone26State {
        match self {
            EngineState::Zone26(s) => s,
            _ => unreachable!("2.6.26 state asked for under another engine"),
        }
    }
    pub(crate) fn split(&self) -> &split2636::Split2636 {
        match self {
            EngineState::Split2636(s) => s,
            _ => unreachable!("2.6.36 state asked for under another engine"),
        }
    }
    pub(crate) fn split_mut(&mut self) -> &mut split2636::Split2636 {
        match self {
            EngineState::Split2636(s) => s,
            _ => unreachable!("2.6.36 state asked for under another engine"),
        }
    }
    /// The engine's global lists (the 2.4 engines), if it has them.
    pub fn global_lru(&self) -> Option<&Lruvec> {
        match self {
            EngineState::Riel24(s) => Some(&s.lru),
            EngineState::Aa24(s) => Some(&s.lru),
            _ => None,
        }
    }
    fn global_lru_mut(&mut self) -> &mut Lruvec {
        match self {
            EngineState::Riel24(s) => &mut s.lru,
            EngineState::Aa24(s) => &mut s.lru,
            _ => unreachable!("a global LRU asked for under an engine with none"),
        }
    }
    /// Pages on the engine's global lists (conservation checks).
    pub fn global_lru_pages(&self) -> u64 {
        self.global_lru().map_or(0, |l| l.lists.iter().map(|x| x.len).sum())
    }
    /// 2.4.9's counters, when that engine runs (seed reports).
    pub fn riel24_stats(&self) -> Option<&Riel24Stats> {
        match self {
            EngineState::Riel24(s) => Some(&s.stats),
            _ => None,
        }
    }
    /// 2.4.9's writes and request-queue sleeps per task, when that engine runs.
    pub fn riel24_by_task(&self) -> Option<&[Riel24TaskIo]> {
        match self {
            EngineState::Riel24(s) => Some(&s.by_task),
            _ => None,
        }
    }
    /// 2.4-aa's counters, when that engine runs (seed reports).
    pub fn aa24_stats(&self) -> Option<&Aa24Stats> {
        match self {
            EngineState::Aa24(s) => Some(&s.stats),
            _ => None,
        }
    }
    /// 2.4-aa's buffer_head slab counters, when that engine runs.
    pub fn aa24_bh_stats(&self) -> Option<&BhStats> {
        match self {
            EngineState::Aa24(s) => Some(s.bh_stats()),
            _ => None,
        }
    }
    /// 2.6.36/38 kswapd's locals and counters of node `node`, when that engine runs.
    pub fn split2636_kswapd(&self, node: usize) -> Option<&Split2636Kswapd> {
        match self {
            EngineState::Split2636(s) => s.kswapd.get(node),
            _ => None,
        }
    }
}

/// The split LRU's lists as `/proc/meminfo` names them (2.6.28+).
pub const SPLIT_LRU_NAMES: [Option<&str>; NR_LRU_LISTS] =
    [Some("Inactive(anon)"), Some("Active(anon)"), Some("Inactive(file)"), Some("Active(file)"), Some("Unevictable")];

/// Writes of `PG_launder` pages that a plugged 2.4 queue held went to the device at the unplug
/// and complete at `t` (kernel.rs `collect_dispatched`): the 2.4-aa engine, whose reclaimers
/// wait on such pages, learns when.
pub fn launder_dispatched(k: &mut Kernel, t: u64, pages: &[Pfn]) {
    if matches!(k.reclaim, EngineState::Aa24(_)) {
        aa24::launder_dispatched(k, t, pages);
    }
}

/// Pages of zone `zid` on the engine's list called `name` (0 if the era has no such list).
pub fn zone_lru_pages(k: &Kernel, zid: usize, name: &str) -> u64 {
    lru_names(k.profile.engine).iter().position(|n| *n == Some(name)).map_or(0, |l| k.zones[zid].lru_pages[l])
}

/// Call engine method `$m` of the engine the profile chose.
macro_rules! dispatch {
    ($k:expr, $m:ident($($a:expr),*)) => {
        match $k.profile.engine {
            Engine::Modern => <modern::Modern as ReclaimEngine>::$m($($a),*),
            Engine::Split2636 => <split2636::Split2636 as ReclaimEngine>::$m($($a),*),
            Engine::Riel24 => <riel24::Riel24 as ReclaimEngine>::$m($($a),*),
            Engine::Aa24 => <aa24::Aa24State as ReclaimEngine>::$m($($a),*),
            Engine::Zone26 => <zone26::Zone26State as ReclaimEngine>::$m($($a),*),
        }
    };
}

/// Call associated function `$m` (no kernel) of engine `$e`.
macro_rules! dispatch_static {
    ($e:expr, $m:ident($($a:expr),*)) => {
        match $e {
            Engine::Modern => <modern::Modern as ReclaimEngine>::$m($($a),*),
            Engine::Split2636 => <split2636::Split2636 as ReclaimEngine>::$m($($a),*),
            Engine::Riel24 => <riel24::Riel24 as ReclaimEngine>::$m($($a),*),
            Engine::Aa24 => <aa24::Aa24State as ReclaimEngine>::$m($($a),*),
            Engine::Zone26 => <zone26::Zone26State as ReclaimEngine>::$m($($a),*),
        }
    };
}

/// 2.4.9's `inactive_target`, when the engine has one.
pub fn inactive_target(k: &Kernel) -> Option<u64> {
    dispatch!(k, inactive_target(k))
}

/// 2.6's per-zone scan counts (`__count_zone_vm_events(PGSCAN_KSWAPD, zone, n)`), beside the
/// machine-wide ones.
pub fn count_zone_scan(k: &mut Kernel, zid: usize, kswapd: bool, n: u64) {
    let e = &mut k.zones[zid].ev;
    if kswapd {
        e.pgscan_kswapd += n;
    } else {
        e.pgscan_direct += n;
    }
}

/// 2.6's per-zone `pgsteal` (and vmlab's split of it by who reclaimed).
pub fn count_zone_steal(k: &mut Kernel, zid: usize, kswapd: bool, n: u64) {
    let e = &mut k.zones[zid].ev;
    if kswapd {
        e.pgsteal_kswapd += n;
    } else {
        e.pgsteal_direct += n;
    }
}

/// The names of the LRU list slots in the engine's era.
pub fn lru_names(engine: Engine) -> [Option<&'static str>; NR_LRU_LISTS] {
    dispatch_static!(engine, lru_names())
}

pub const SWAP_CLUSTER_MAX: u64 = 32;
pub const DEF_PRIORITY: i32 = 12;
/// reclaim_throttle's timeout for writeback: HZ/10.
pub const THROTTLE_NS: u64 = 100_000_000;

/// Which lruvec holds a page's lists: the node's (6.8), the zone's (2.6.36), or the global one (2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruScope {
    Node(usize),
    /// Node `.0`'s lruvec of memory cgroup `.1` (never the root, whose lruvecs are the nodes').
    Memcg(usize, u8),
    Zone(usize),
    Global,
}

#[inline]
pub fn scope_of(k: &Kernel, p: Pfn) -> LruScope {
    scope_in_zone(k, p, k.zone_of(p))
}

/// `scope_of` for a page already known to be in zone `zid` (the list ops need the zone anyway):
/// a page charged to a memory cgroup is on that group's lruvec of the node (`folio_lruvec`).
#[inline]
fn scope_in_zone(k: &Kernel, p: Pfn, zid: usize) -> LruScope {
    match dispatch!(k, lru_scope(k, zid)) {
        LruScope::Node(n) if k.memcg.active() && k.fr.extra[p as usize] != 0 => {
            LruScope::Memcg(n, k.fr.extra[p as usize])
        }
        s => s,
    }
}

/// The list `l` of a scope, with the frame array (split borrow).
#[inline]
pub fn list_mut(k: &mut Kernel, s: LruScope, l: usize) -> (&mut List, &mut crate::mm_types::Frames) {
    match s {
        LruScope::Node(n) => (&mut k.nodes[n].lruvec.lists[l], &mut k.fr),
        LruScope::Memcg(n, g) => (&mut k.memcg.groups[g as usize].lruvec[n].lists[l], &mut k.fr),
        LruScope::Zone(z) => (&mut k.zones[z].lruvec.lists[l], &mut k.fr),
        LruScope::Global => (&mut k.reclaim.global_lru_mut().lists[l], &mut k.fr),
    }
}

/// Put a page on list `l` of its lruvec, at the head (newest) or the tail (next to be scanned).
#[inline]
pub fn add_to_list(k: &mut Kernel, p: Pfn, l: usize, at_tail: bool) {
    debug_assert!(!k.fr.has(p, pg::LRU), "pfn {p} already on an LRU");
    if let EngineState::Riel24(_) = k.reclaim {
        // 2.4.9's lists are rings that take new pages at the head only.
        return riel24::add_to_list(k, p, l);
    }
    let zid = k.zone_of(p);
    let s = scope_in_zone(k, p, zid);
    let (list, fr) = list_mut(k, s, l);
    if at_tail {
        list.push_tail(fr, p);
    } else {
        list.push_head(fr, p);
    }
    let f = &mut k.fr.flags[p as usize];
    *f = (*f & !pg::LRU_MASK) | pg::LRU | ((l as u32) << pg::LRU_SHIFT);
    let nr = k.fr.folio_nr(p);
    k.lru_folio_tails += nr - 1;
    k.zones[zid].lru_pages[l] += nr;
    if let LruScope::Memcg(_, g) = s {
        k.memcg.groups[g as usize].lru_zone[zid][l] += nr;
    }
}

/// Take a page off whatever LRU list holds it.
#[inline]
pub fn del_page_from_lru(k: &mut Kernel, p: Pfn) {
    if !k.fr.has(p, pg::LRU) {
        if k.fr.lru_list(p) == LRU_PVEC {
            swap::lru_pvec_remove(k, p);
        }
        return;
    }
    if let EngineState::Riel24(_) = k.reclaim {
        return riel24::del_page_from_lru(k, p);
    }
    let l = k.fr.lru_list(p) as usize;
    let zid = k.zone_of(p);
    let s = scope_in_zone(k, p, zid);
    let (list, fr) = list_mut(k, s, l);
    list.remove(fr, p);
    let f = &mut k.fr.flags[p as usize];
    *f = (*f & !(pg::LRU | pg::LRU_MASK)) | ((LRU_NONE as u32) << pg::LRU_SHIFT);
    let nr = k.fr.folio_nr(p);
    k.lru_folio_tails -= nr - 1;
    k.zones[zid].lru_pages[l] -= nr;
    if let LruScope::Memcg(_, g) = s {
        k.memcg.groups[g as usize].lru_zone[zid][l] -= nr;
    }
}

/// `lru_add_page_tail` for the tails of a folio just split on its list: each goes next to the
/// head on its newer side, in order, so the run keeps the folio's place; the list now holds them
/// one by one.
pub fn lru_add_split_tails(k: &mut Kernel, head: Pfn, nr: u64) {
    let l = k.fr.lru_list(head) as usize;
    let zid = k.zone_of(head);
    let s = scope_in_zone(k, head, zid);
    for t in head + 1..head + nr as Pfn {
        let (list, fr) = list_mut(k, s, l);
        list.insert_before(fr, head, t);
        let f = &mut k.fr.flags[t as usize];
        *f = (*f & !pg::LRU_MASK) | pg::LRU | ((l as u32) << pg::LRU_SHIFT);
    }
    k.lru_folio_tails -= nr - 1;
}

/// Is the page anon-like for LRU purposes (anon or shm: swap-backed)?
#[inline]
pub fn is_swapbacked(k: &Kernel, p: Pfn) -> bool {
    k.fr.flags[p as usize] & (pg::ANON | pg::SWAPBACKED) != 0
}

/// A new page enters the LRU (`folio_add_lru`).
#[inline]
pub fn lru_add(k: &mut Kernel, p: Pfn) {
    dispatch!(k, lru_add(k, p))
}

/// A new page enters the LRU from a task on `ctx`'s CPU (`lru_cache_add`): through that CPU's
/// LRU-add pagevec where the engine has them.
#[inline]
pub fn lru_cache_add(k: &mut Kernel, ctx: &Ctx, p: Pfn) {
    dispatch!(k, lru_cache_add(k, ctx.cpu, p))
}

/// `lru_add_drain`: the LRU-add pagevecs of `ctx`'s CPU to their lists.
#[inline]
pub fn lru_add_drain(k: &mut Kernel, ctx: &Ctx) {
    dispatch!(k, lru_add_drain(k, ctx.cpu))
}

/// `lru_add_drain_all`: every CPU's LRU-add pagevecs to their lists.
pub fn lru_add_drain_all(k: &mut Kernel) {
    dispatch!(k, lru_add_drain_all(k))
}

/// Free a page the kernel itself held (a bounce page at I/O end): 2.4.9's `__free_pages_ok`
/// also eases `memory_pressure`.
pub fn free_kernel_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    dispatch!(k, free_kernel_page(k, ctx, p))
}

/// `mark_page_accessed` from read()/write() (mapped accesses only set the PTE young bit).
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    dispatch!(k, mark_page_accessed(k, p))
}

/// `mark_page_accessed` by the task of `ctx` (read(), write()).
pub fn mark_page_accessed_by(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    dispatch!(k, mark_page_accessed_by(k, ctx, p))
}

/// A page fault found page `p` in the page cache (`filemap_nopage` / `shmem_nopage`): the 2.4
/// engines and 2.6.26/27's `filemap_fault` count that as an access (`mark_page_accessed`); later
/// kernels only set the young bit.
pub fn nopage_accessed(k: &mut Kernel, p: Pfn) {
    dispatch!(k, nopage_accessed(k, p))
}

/// A page fault takes its mm's page_table_lock: with the 2.4 page-table walk it may have to
/// spin while `swap_out` holds it.
#[inline]
pub fn fault_page_table_lock(k: &mut Kernel, ctx: &mut Ctx, mm: u32) {
    dispatch!(k, fault_page_table_lock(k, ctx, mm))
}

/// Pages went back to zone `zid`'s buddy lists (`free_one_page`, `free_pcppages_bulk`).
#[inline]
pub fn pages_freed(k: &mut Kernel, zid: usize) {
    dispatch!(k, pages_freed(k, zid))
}

/// A read added a page to the page cache.
#[inline]
pub fn page_cache_added(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    dispatch!(k, page_cache_added(k, ctx, p))
}

/// One pass of 2.4.9's bdflush and kupdate in flusher `w`'s task (profile field `bdflush`,
/// read by the 2.4.9 engine only).
pub fn bdflush_pass(k: &mut Kernel, ctx: &mut Ctx, w: usize) -> crate::page_writeback::FlushAction {
    riel24::bdflush::bdflush_pass(k, ctx, w)
}

/// write() dirtied page-cache page `p` (see [`ReclaimEngine::page_dirtied_by_write`]).
#[inline]
pub fn page_dirtied_by_write(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, newly: bool) {
    dispatch!(k, page_dirtied_by_write(k, ctx, p, newly))
}

/// A workingset page refaulted (`workingset_refault` → `lru_note_cost_refault`).
#[inline]
pub fn lru_note_cost_refault(k: &mut Kernel, p: Pfn, file: bool) {
    dispatch!(k, lru_note_cost_refault(k, p, file))
}

/// A task submitted writes and the queue asked it to sleep (see
/// [`ReclaimEngine::write_submitted`]).
pub fn write_submitted(k: &mut Kernel, ctx: &Ctx, pages: u64, wait_ns: u64) {
    dispatch!(k, write_submitted(k, ctx, pages, wait_ns))
}

/// A hard interrupt (see [`ReclaimEngine::irq_interrupted`]).
pub fn irq_interrupted(k: &mut Kernel, cpu: u32, at: u64, ns: u64) {
    dispatch!(k, irq_interrupted(k, cpu, at, ns))
}

/// An mlocked page on an evictable list moves to the unevictable one: culled (2.6.28+
/// `putback_lru_page`, 6.8 `__mlock_folio`).
pub fn move_to_unevictable(k: &mut Kernel, p: Pfn) {
    del_page_from_lru(k, p);
    k.fr.clear(p, pg::ACTIVE);
    if !k.fr.test_clear(p, pg::UNEVICTABLE) {
        k.ev.inc(Vm::UnevictablePgsCulled);
    }
    k.fr.set(p, pg::UNEVICTABLE);
    add_to_list(k, p, LRU_UNEVICTABLE, false);
}

pub fn move_to_evictable(k: &mut Kernel, p: Pfn) {
    del_page_from_lru(k, p);
    k.fr.clear(p, pg::UNEVICTABLE);
    k.ev.inc(Vm::UnevictablePgsRescued);
    let anon = is_swapbacked(k, p);
    let l = dispatch!(k, inactive_list(anon));
    add_to_list(k, p, l, false);
}

/// `folio_rotate_reclaimable`: writeback done on a page reclaim wanted: move it to the tail
/// of its inactive list so the next scan frees it (unless it was locked, redirtied or made
/// unevictable meanwhile).
pub fn rotate_reclaimable_page(k: &mut Kernel, p: Pfn) {
    if !k.fr.has(p, pg::LRU) || k.fr.flags[p as usize] & (pg::UNEVICTABLE | pg::DIRTY | pg::LOCKED) != 0 {
        return;
    }
    let l = if k.fr.has(p, pg::ACTIVE) {
        if !k.profile.rotate_active {
            return;
        }
        let anon = is_swapbacked(k, p);
        dispatch!(k, inactive_list(anon))
    } else {
        k.fr.lru_list(p) as usize
    };
    del_page_from_lru(k, p);
    k.fr.clear(p, pg::ACTIVE);
    add_to_list(k, p, l, true);
    // lru_move_tail counts folio_nr_pages.
    k.ev.add(Vm::Pgrotated, k.fr.folio_nr(p));
}

/// `wakeup_kswapd` for an allocation that failed the LOW watermark in zone `zid`.
pub fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
    dispatch!(k, wakeup_kswapd(k, zid, order, classzone))
}

/// `wake_all_kswapd` from the allocation slow path: 2.6.x calls `wakeup_kswapd` for every zone
/// of the zonelist (each checks its own watermark); 6.8 wakes each node's kswapd once.
pub fn wake_all_kswapd(k: &mut Kernel, zonelist: &[usize], order: u32, classzone: usize) {
    dispatch!(k, wake_all_kswapd(k, zonelist, order, classzone))
}

/// Direct reclaim (`try_to_free_pages`); returns pages reclaimed.
pub fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, classzone: usize) -> u64 {
    let was = ctx.in_reclaim;
    ctx.in_reclaim = true;
    let start = ctx.clock();
    let g = crate::trace::GfpKind::of(&gfp);
    k.trace_ctx(ctx, Tracepoint::DirectReclaimBegin { order, may_writepage: true, gfp: g });
    let r = dispatch!(k, try_to_free_pages(k, ctx, gfp, order, classzone));
    k.trace_ctx(ctx, Tracepoint::DirectReclaimEnd { nr_reclaimed: r });
    ctx.in_reclaim = was;
    crate::psi::memstall(k, ctx, start);
    r
}

/// Reclaim waits for writeback (`reclaim_throttle`) on `node`; returns when the wait times out.
pub fn reclaim_throttle(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> u64 {
    dispatch!(k, reclaim_throttle(k, ctx, node))
}

/// `pages` finished writeback: wake reclaimers waiting for it.
pub fn writeback_done(k: &mut Kernel, pages: &[Pfn]) {
    dispatch!(k, writeback_done(k, pages))
}

/// Does a finished direct reclaim call that freed nothing end the allocation?
pub fn failed_reclaim_fails_alloc(k: &Kernel) -> bool {
    dispatch_static!(k.profile.engine, failed_reclaim_fails_alloc())
}

/// Does the profile's engine reclaim memory cgroups?
pub fn has_memcg_reclaim(p: &crate::profiles::Profile) -> bool {
    dispatch_static!(p.engine, memcg_reclaim())
}

pub fn has_large_folios(p: &crate::profiles::Profile) -> bool {
    dispatch_static!(p.engine, large_folios())
}

/// CONFIG_COMPACTION as the row's engine runs it: memory compaction for allocations of
/// `split26.compaction_min_order` and above (only the 2.6.36/38 engine calls it so far).
pub fn has_compaction(p: &crate::profiles::Profile) -> bool {
    p.engine == Engine::Split2636 && p.split26.compaction_min_order > 0
}

/// Per-CPU LRU-add pagevecs as the row's engine runs them (`split26.lru_add_pvec`; only the
/// 2.6.36/38 engine has them so far).
pub fn has_lru_add_pvecs(p: &crate::profiles::Profile) -> bool {
    p.engine == Engine::Split2636 && p.split26.lru_add_pvec > 0
}

/// Limit reclaim (`try_to_free_mem_cgroup_pages`); returns pages reclaimed.
pub fn try_to_free_mem_cgroup_pages(k: &mut Kernel, ctx: &mut Ctx, g: u8, nr: u64, may_swap: bool) -> u64 {
    dispatch!(k, try_to_free_mem_cgroup_pages(k, ctx, g, nr, may_swap))
}

/// What kswapd does after one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KswapdAction {
    /// More work: stay runnable.
    Continue,
    /// Sleep this long unless woken (the HZ/10 nap, congestion_wait).
    Nap(u64),
    /// Sleep until woken.
    Sleep,
    /// reclaim_throttle: wait for writeback progress (woken by completions, or this long).
    Throttle(u64),
    /// `cond_resched()`: end this quantum so the work done so far becomes visible to the tasks
    /// running on other CPUs before kswapd goes on (it stays runnable).
    Yield,
}

/// One step of node `node`'s kswapd.
pub fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    ctx.is_kswapd = true;
    ctx.in_reclaim = true;
    // What kept kswapd awake is read before the step, its cost after (`vmlab explain`).
    let before = ctx.sys_ns;
    let start = ctx.clock();
    let why = dispatch!(k, kswapd_why(k, node));
    if k.tracing && k.nodes[node].kswapd.traced_asleep {
        // kswapd() fires mm_vmscan_kswapd_wake once woken, before balance_pgdat.
        k.nodes[node].kswapd.traced_asleep = false;
        let order = k.nodes[node].kswapd.max_order;
        k.trace_ctx(ctx, Tracepoint::KswapdWake { nid: node, order });
    }
    let action = dispatch!(k, kswapd_step(k, ctx, node));
    k.kswapd_why.add(why, ctx.sys_ns - before);
    // balance_pgdat runs under psi_memstall_enter.
    crate::psi::memstall_kthread(k, start, ctx.clock());
    if action == KswapdAction::Sleep && k.tracing && !k.nodes[node].kswapd.traced_asleep {
        k.nodes[node].kswapd.traced_asleep = true;
        k.trace_ctx(ctx, Tracepoint::KswapdSleep { nid: node });
    }
    action
}

/// A PTE mapping `p` was added (`mapped`) or removed.
#[inline]
pub fn page_mapcount_changed(k: &mut Kernel, p: Pfn, mapped: bool) {
    dispatch!(k, page_mapcount_changed(k, p, mapped))
}

/// Engines with their own `__alloc_pages` (2.4.9) allocate here; `None` for the shared one.
#[inline]
pub fn engine_alloc_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Option<Result<Pfn, AllocFail>> {
    dispatch!(k, alloc_pages(k, ctx, gfp, order))
}

/// Does the engine run kreclaimd (2.4.0–2.4.9)?
pub fn has_kreclaimd(p: &crate::profiles::Profile) -> bool {
    dispatch_static!(p.engine, has_kreclaimd())
}

pub fn set_kreclaimd_task(k: &mut Kernel, t: usize) {
    dispatch!(k, set_kreclaimd_task(k, t))
}

/// One step of kreclaimd.
pub fn kreclaimd_step(k: &mut Kernel, ctx: &mut Ctx) -> KswapdAction {
    ctx.in_reclaim = true;
    dispatch!(k, kreclaimd_step(k, ctx))
}

/// The nap timer of a napping kswapd fired (not woken early).
pub fn kswapd_nap_expired(k: &mut Kernel, node: usize) {
    let ks = &mut k.nodes[node].kswapd;
    if ks.phase == crate::mmzone::KswapdPhase::Napping {
        ks.napping = false;
    }
}

/// Free an isolated, unmapped, clean page that reclaim decided to drop (`__remove_mapping` +
/// free). Leaves a workingset shadow on the clock of `target`, the group reclaim works for
/// (ROOT for global reclaim).
pub fn remove_mapping_and_free(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, target: u8) {
    remove_mapping(k, ctx, p, target);
    free_reclaimed_page(k, ctx, p);
}

/// `__remove_mapping`: take a reclaimed page out of its page cache or swap cache (or drop its
/// anon accounting), leaving the workingset shadow; the page is not freed yet.
pub fn remove_mapping(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, target: u8) {
    let shadow = if k.profile.workingset { crate::workingset::eviction(k, p, target) } else { 0 };
    if k.fr.has(p, pg::SWAPCACHE) {
        if let Some(s) = crate::swap_state::page_swap_slot(k, p) {
            if let Some(sw) = k.swap.as_mut() {
                sw.shadow[s as usize] = shadow;
            }
        }
        crate::swap_state::delete_from_swap_cache(k, p);
        if k.fr.has(p, pg::ANON) {
            crate::swap_state::release_anon_accounting(k, p);
        }
    } else if k.fr.has(p, pg::ANON) {
        crate::swap_state::release_anon_accounting(k, p);
    } else {
        // __remove_mapping's page-cache side, per folio (CostTable::remove_mapping); skipped at
        // 0, vmlab's own table, so that no output moves without a fit.
        if k.cost.remove_mapping > 0 {
            k.charge(ctx, crate::stats::kfunc::KFunc::ShrinkFolioList, k.cost.remove_mapping);
        }
        k.remove_from_page_cache(p, shadow);
    }
}

/// Give a page `remove_mapping` released back to the allocator: cold where the profile's
/// reclaim frees cold (`pagevec_init(&freed_pvec, 1)`).
pub fn free_reclaimed_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    if k.fr.folio_order(p) > 0 {
        k.free_folio(ctx, p);
    } else if k.profile.reclaim_frees_cold {
        k.free_cold_page(ctx, p);
    } else {
        k.free_pages(ctx, p, 0);
    }
}

/// `pageout`: start writing a dirty page. Anon pages are already in the swap cache; shm pages
/// move from their file into the swap cache first (`shmem_writepage`).
pub fn pageout(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
    k.trace_ctx(ctx, Tracepoint::Writepage { pfn: p, file: !is_swapbacked(k, p) });
    if k.fr.has(p, pg::ANON) || k.fr.has(p, pg::SWAPCACHE) {
        return crate::swap_state::swap_writepage(k, ctx, p);
    }
    if k.fr.has(p, pg::SWAPBACKED) {
        if !shmem_move_to_swapcache(k, ctx, p) {
            return false;
        }
        if !k.profile.shm_writepage_io {
            // Stock 2.4 shm_writepage: the page is now dirty swap cache; the I/O waits for a
            // later pass over it.
            return true;
        }
        return crate::swap_state::swap_writepage(k, ctx, p);
    }
    crate::page_writeback::writepage(k, ctx, p);
    true
}

/// `shmem_writepage`'s first half: give the shm page a swap slot, record it in the segment's
/// index, and turn the page into a dirty swap-cache page.
pub fn shmem_move_to_swapcache(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
    if !crate::swap_state::add_to_swap(k, ctx, p) {
        return false;
    }
    let s = crate::swap_state::page_swap_slot(k, p).expect("just added");
    crate::swap_state::swap_duplicate(k, s);
    let file = k.fr.mapping[p as usize] as usize;
    let idx = k.fr.index[p as usize] as usize;
    k.remove_from_page_cache(p, 0);
    let f = &mut k.files[file];
    if f.swapped.len() < f.pages.len() {
        f.swapped.resize(f.pages.len(), 0);
    }
    f.swapped[idx] = s + 1;
    // Still counted as the segment's memory until freed: keep it swap-backed, not anon.
    k.charge(ctx, crate::stats::kfunc::KFunc::ShmWritepage, k.cost.pagecache_add);
    true
}

/// Helper for engines: LRU index for a page type and activity.
#[inline]
pub fn lru_index(anon: bool, active: bool) -> usize {
    (if anon { LRU_INACTIVE_ANON } else { LRU_INACTIVE_FILE }) + active as usize
}
