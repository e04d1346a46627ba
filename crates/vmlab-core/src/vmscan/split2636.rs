//! The 2.6.36 / 2.6.38 reclaim engine: per-zone lruvecs with the split anon/file LRU and the
//! unevictable list; `get_scan_count` from `recent_scanned`/`recent_rotated` with
//! `nr_scan_try_batch`; `isolate_lru_pages` with the aligned-neighbour rule for order > 0 and
//! 2.6.36 lumpy reclaim (or 2.6.38 reclaim/compaction mode); `shrink_page_list`; direct reclaim;
//! and kswapd — `wakeup_kswapd`, `balance_pgdat`, `sleeping_prematurely`, the HZ/10 nap — in
//! its 2.6.36 form and with Mel Gorman's 2.6.38 series, chosen by `profile.split26` fields.

use super::{
    add_to_list, del_page_from_lru, free_reclaimed_page, is_swapbacked, lru_index, pageout, remove_mapping,
    KswapdAction, DEF_PRIORITY, SWAP_CLUSTER_MAX,
};
use super::{LruScope, ReclaimEngine, SPLIT_LRU_NAMES};
use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmzone::NR_LRU_LISTS;
use crate::mmzone::{
    KswapdPhase, ZoneType, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_UNEVICTABLE,
};
use crate::page_alloc::Gfp;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::trace::{ReclaimStat, Tracepoint};

/// HZ/10: kswapd's nap and `congestion_wait`'s timeout.
pub const HZ_10_NS: u64 = 100_000_000;
const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;
/// `MAX_NR_ZONES - 1`: "no classzone requested yet".
const MAX_CLASSZONE: usize = ZoneType::Movable as usize;

/// kswapd()'s locals and balance_pgdat()'s state, kept between scheduler quanta, plus
/// per-zone diagnostics (2.6.36 counts pgscan/pgsteal per zone).
#[derive(Clone, Debug, Default)]
pub struct KswapdLocals {
    inited: bool,
    /// kswapd()'s `order` and (2.6.38) `classzone_idx`.
    order: u32,
    cz: usize,
    /// `pgdat->classzone_idx` (2.6.38): the lowest classzone asked for since kswapd read it.
    pgdat_cz: usize,
    /// A wakeup arrived while kswapd slept on its waitqueue.
    woken: bool,
    // balance_pgdat:
    sc_order: u32,
    priority: i32,
    nr_reclaimed: u64,
    total_scanned: u64,
    may_writepage: bool,
    /// Zone id of end_zone, and its zone index (the classzone of the checks).
    end_zone: usize,
    bal_cz: usize,
    all_ok: bool,
    /// The priority loop ended (break); `out:` runs after the pending congestion_wait.
    pending_out: bool,
    /// Per zone id: kswapd pages scanned / reclaimed, direct pages scanned / reclaimed.
    pub zone_scan_kswapd: [u64; 8],
    pub zone_steal_kswapd: [u64; 8],
    pub zone_scan_direct: [u64; 8],
    pub zone_steal_direct: [u64; 8],
    /// Times kswapd went to full sleep.
    pub full_sleeps: u64,
    /// balance_pgdat entries at order 0 and at order > 0; loop_again passes at order > 0.
    pub balance_runs: [u64; 2],
    pub high_order_passes: u64,
    /// wakeup_kswapd calls for order > 0 that raised or kept kswapd_max_order > 0.
    pub high_order_wakeups: u64,
    /// How order > 0 balance_pgdat runs ended: balanced at the order, fell back to order 0.
    pub high_order_ends: [u64; 2],
    /// balance_pgdat priority passes at order > 0 below DEF_PRIORITY - 2 (lumpy or
    /// reclaim/compaction mode), and the lowest priority any pass reached.
    pub high_order_low_prio_passes: u64,
    pub lowest_priority: Option<i32>,
    /// `compact_zone_order` calls from balance_pgdat (kswapd compaction).
    pub kswapd_compactions: u64,
}

/// `struct scan_control`.
#[derive(Clone, Debug, Default)]
struct Sc {
    nr_to_reclaim: u64,
    nr_reclaimed: u64,
    nr_scanned: u64,
    order: u32,
    may_writepage: bool,
    may_swap: bool,
    may_unmap: bool,
    is_kswapd: bool,
    /// 2.6.36 `lumpy_reclaim_mode` / 2.6.38 RECLAIM_MODE_LUMPYRECLAIM.
    lumpy: bool,
    /// 2.6.38 RECLAIM_MODE_COMPACTION.
    compaction: bool,
}

/// The 2.6.36/38 engine's state: kswapd's locals per node, and per zone what the kernel keeps
/// in `struct zone` for this era's reclaim.
#[derive(Clone, Debug, Default)]
pub struct Split2636 {
    pub kswapd: Vec<KswapdLocals>,
    pub zone: Vec<ZoneReclaim>,
    /// `shrink_page_list`'s local `free_pages` list, kept between calls so that no call
    /// allocates: the pages it reclaimed, freed at its end when the profile has `free_page_list`.
    free_pages: Vec<Pfn>,
    /// Per CPU: `lru_add_pvecs` (`super::swap`), used when the profile has `lru_add_pvec`.
    pub lru_add_pvecs: Vec<super::swap::CpuPvecs>,
}

impl Split2636 {
    pub fn new(zones: usize, nodes: usize, cpus: usize) -> Split2636 {
        Split2636 {
            kswapd: vec![KswapdLocals::default(); nodes],
            zone: vec![ZoneReclaim::default(); zones],
            free_pages: Vec::new(),
            lru_add_pvecs: vec![Default::default(); cpus],
        }
    }
}

/// The reclaim fields of 2.6.36's `struct zone`.
#[derive(Clone, Debug, Default)]
pub struct ZoneReclaim {
    /// `ZONE_ALL_UNRECLAIMABLE` and `pages_scanned` since pages were last freed here.
    pub all_unreclaimable: bool,
    pub pages_scanned: u64,
    /// `reclaim_stat`: recent_scanned / recent_rotated per type (0 anon, 1 file).
    pub recent_scanned: [u64; 2],
    pub recent_rotated: [u64; 2],
    /// `nr_scan_try_batch`: scan counts below SWAP_CLUSTER_MAX saved per list.
    pub nr_saved_scan: [u64; 4],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Isolate {
    Inactive,
    Active,
    Both,
}

fn locals(k: &mut Kernel, node: usize) -> &mut KswapdLocals {
    let l = &mut k.reclaim.split_mut().kswapd[node];
    if !l.inited {
        l.inited = true;
        l.cz = MAX_CLASSZONE;
        l.pgdat_cz = MAX_CLASSZONE;
    }
    l
}

/// The node's zone ids, lowest first, without allocating.
fn node_zones(k: &Kernel, node: usize) -> ([usize; 8], usize) {
    let mut out = [0usize; 8];
    let zs = &k.nodes[node].zones;
    let n = zs.len().min(8);
    out[..n].copy_from_slice(&zs[..n]);
    (out, n)
}

#[inline]
fn zidx(k: &Kernel, zid: usize) -> usize {
    k.zones[zid].kind as usize
}

#[inline]
fn wmark_ok(k: &Kernel, zid: usize, order: u32, mark: u64, classzone: usize) -> bool {
    k.zone_watermark_ok(zid, order, mark, classzone, false, false)
}

/// Whether kswapd's run at `order` leaves zone `zid` out: the labelled what-if
/// `WhatIf::kswapd_high_order_spares` (`whatif.rs`), which no kernel has.
fn spared(k: &Kernel, zid: usize, order: u32) -> bool {
    order > 0 && k.whatif.kswapd_high_order_spares == Some(k.zones[zid].kind)
}

fn nr_swap_pages(k: &Kernel) -> u64 {
    crate::swap_state::free_swap_pages(k)
}

// ---------------------------------------------------------------------------------------------
// LRU entry and access

/// `lru_cache_add_*` / `page_add_new_anon_rmap`: new anonymous pages start on the active list
/// (2.6.28–3.x), everything else on the inactive list. `update_page_reclaim_stat` counts every
/// addition as scanned and an active one as rotated. At once: without LRU-add pagevecs, or for a
/// page added outside any task (`lru_cache_add` batches it on its CPU).
pub fn lru_add(k: &mut Kernel, p: Pfn) {
    if k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED) {
        k.fr.set(p, pg::UNEVICTABLE);
        add_to_list(k, p, LRU_UNEVICTABLE, false);
        return;
    }
    let anon = is_swapbacked(k, p);
    let l = super::swap::new_page_lru(k, p);
    let active = k.fr.has(p, pg::ACTIVE);
    add_to_list(k, p, l, false);
    let zid = k.zone_of(p);
    let lv = &mut k.reclaim.split_mut().zone[zid];
    let file = !anon as usize;
    lv.recent_scanned[file] += 1;
    if active {
        lv.recent_rotated[file] += 1;
    }
}

/// `mark_page_accessed`: inactive,referenced → `activate_page` (PGACTIVATE, rotated);
/// otherwise just PG_referenced.
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    let f = k.fr.flags[p as usize];
    if f & (pg::ACTIVE | pg::UNEVICTABLE) == 0 && f & pg::REFERENCED != 0 && f & pg::LRU != 0 {
        del_page_from_lru(k, p);
        k.fr.set(p, pg::ACTIVE);
        let anon = is_swapbacked(k, p);
        add_to_list(k, p, lru_index(anon, true), false);
        k.ev.inc(Vm::Pgactivate);
        let zid = k.zone_of(p);
        let lv = &mut k.reclaim.split_mut().zone[zid];
        lv.recent_scanned[!anon as usize] += 1;
        lv.recent_rotated[!anon as usize] += 1;
        k.fr.clear(p, pg::REFERENCED);
    } else if f & pg::REFERENCED == 0 {
        k.fr.set(p, pg::REFERENCED);
    }
}

// ---------------------------------------------------------------------------------------------
// Isolation and shrinking

/// `__isolate_lru_page`: may this page be taken in `mode` for a `file` scan?
#[inline]
fn isolatable(k: &Kernel, p: Pfn, mode: Isolate, file: bool) -> bool {
    let f = k.fr.flags[p as usize];
    if f & pg::LRU == 0 || f & pg::UNEVICTABLE != 0 {
        return false;
    }
    if mode != Isolate::Both {
        if (f & pg::ACTIVE != 0) != (mode == Isolate::Active) {
            return false;
        }
        if (f & (pg::ANON | pg::SWAPBACKED) == 0) != file {
            return false;
        }
    }
    true
}

/// A page that is free (in the buddy allocator or on a pcp list): `page_count == 0`.
#[inline]
fn page_is_free(k: &Kernel, p: Pfn) -> bool {
    let f = k.fr.flags[p as usize] & !pg::LRU_MASK;
    f & (pg::BUDDY | pg::PCP) != 0 || f == 0
}

fn take(k: &mut Kernel, p: Pfn, out: &mut Vec<Pfn>, counts: &mut [u64; 4]) {
    let l = k.fr.lru_list(p) as usize;
    if l < 4 {
        counts[l] += 1;
    }
    del_page_from_lru(k, p);
    k.g.isolated += 1;
    out.push(p);
}

/// `isolate_lru_pages`: take pages from the tail of list `l` of zone `zid`; for order > 0 also
/// the other pages of each one's naturally aligned 2^order block that `mode` allows (lumpy
/// reclaim's neighbours; they count as scanned). Returns pages scanned.
#[allow(clippy::too_many_arguments)]
fn isolate_lru_pages(
    k: &mut Kernel,
    ctx: &mut Ctx,
    zid: usize,
    l: usize,
    nr: u64,
    order: u32,
    mode: Isolate,
    file: bool,
    out: &mut Vec<Pfn>,
    counts: &mut [u64; 4],
) -> u64 {
    out.clear();
    let stop_on_fail = k.profile.split26.lumpy_stop_on_fail;
    let total = k.fr.len() as u32;
    let mut scan = 0u64;
    let mut contig = 0u64;
    while scan < nr {
        let p = k.zones[zid].lruvec.lists[l].tail;
        if p == NIL {
            break;
        }
        take(k, p, out, counts);
        scan += 1;
        if order == 0 {
            continue;
        }
        // The block aligns on the memory map's pfn (`page_pfn & ~((1 << order) - 1)`).
        let base = p - (k.zones[zid].phys(p) & ((1u32 << order) - 1));
        for cur in base..base.saturating_add(1 << order).min(total) {
            if cur == p {
                continue;
            }
            if !k.zones[zid].spans(cur) {
                if stop_on_fail {
                    break;
                }
                continue;
            }
            if nr_swap_pages(k) == 0 && k.fr.has(cur, pg::ANON) && !k.fr.has(cur, pg::SWAPCACHE) {
                if stop_on_fail {
                    break;
                }
                continue;
            }
            if isolatable(k, cur, mode, file) {
                take(k, cur, out, counts);
                scan += 1;
                contig += 1;
            } else if stop_on_fail && !page_is_free(k, cur) {
                break;
            }
        }
    }
    k.charge(ctx, KFunc::ShrinkInactiveList, scan * k.cost.lru_scan);
    k.events += scan;
    let mode = match mode {
        Isolate::Inactive => 0,
        Isolate::Active => 1,
        Isolate::Both => 2,
    };
    let ev = Tracepoint::LruIsolate {
        classzone: zid,
        order,
        mode,
        nr_requested: nr,
        nr_scanned: scan,
        nr_skipped: contig,
        nr_taken: out.len() as u64,
        lru: l,
    };
    k.trace_ctx(ctx, ev);
    scan
}

/// Put an isolated page back at the head of the list its flags say (`putback_lru_pages`).
/// Returns whether it went to an active list.
fn putback(k: &mut Kernel, p: Pfn) -> bool {
    k.g.isolated -= 1;
    if k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED) {
        k.fr.clear(p, pg::ACTIVE);
        k.fr.set(p, pg::UNEVICTABLE);
        add_to_list(k, p, LRU_UNEVICTABLE, false);
        return false;
    }
    let active = k.fr.has(p, pg::ACTIVE);
    add_to_list(k, p, lru_index(is_swapbacked(k, p), active), false);
    active
}

/// 2.6.36 `set_lumpy_reclaim_mode` / 2.6.38 `set_reclaim_mode`: high orders, or any order > 0
/// once reclaim is struggling (priority < DEF_PRIORITY - 2), take whole blocks — by lumpy
/// reclaim, or (CONFIG_COMPACTION, 2.6.37+) by reclaiming order-0 pages for compaction.
fn set_reclaim_mode(k: &Kernel, sc: &mut Sc, priority: i32) {
    let want = sc.order > PAGE_ALLOC_COSTLY_ORDER || (sc.order > 0 && priority < DEF_PRIORITY - 2);
    if k.profile.split26.reclaim_compaction {
        sc.lumpy = false;
        sc.compaction = want;
    } else {
        sc.lumpy = want;
        sc.compaction = false;
    }
}

#[derive(PartialEq, Clone, Copy)]
enum Ref {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

/// `page_check_references` (2.6.34+).
fn page_check_references(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, sc: &Sc) -> Ref {
    let (young, locked) = if k.fr.mapcount[p as usize] > 0 { k.folio_referenced(ctx, p) } else { (0, false) };
    let referenced_page = k.fr.test_clear(p, pg::REFERENCED);
    // Lumpy reclaim ignores references: the block matters, not the page.
    if sc.lumpy || locked {
        return Ref::Reclaim;
    }
    if young > 0 {
        if k.fr.has(p, pg::ANON) {
            return Ref::Activate;
        }
        k.fr.set(p, pg::REFERENCED);
        if referenced_page {
            return Ref::Activate;
        }
        return Ref::Keep;
    }
    if referenced_page {
        return Ref::ReclaimClean;
    }
    Ref::Reclaim
}

/// `PAGEVEC_SIZE`: pages per `__pagevec_free` call in `free_page_list`.
const PAGEVEC_SIZE: usize = 14;

/// `shrink_page_list` over isolated pages: free what can be freed, start writeback of dirty
/// pages, put the rest back (`putback_lru_pages`). Returns pages reclaimed; `stat` says why the
/// others were not (the kernel keeps no such count; the trace event carries it to observers).
fn shrink_page_list(
    k: &mut Kernel,
    ctx: &mut Ctx,
    zid: usize,
    pages: &[Pfn],
    sc: &mut Sc,
    stat: &mut ReclaimStat,
) -> u64 {
    let batched = k.profile.split26.free_page_list;
    let mut free_pages = std::mem::take(&mut k.reclaim.split_mut().free_pages);
    free_pages.clear();
    let mut reclaimed = 0;
    let mut activated = 0;
    let mut rotated = [0u64; 2];
    for &p in pages {
        k.charge(ctx, KFunc::ShrinkFolioList, k.cost.lru_scan);
        let f = k.fr.flags[p as usize];
        let file = f & (pg::ANON | pg::SWAPBACKED) == 0;
        // trylock_page fails on a page under read I/O.
        let keep = |k: &mut Kernel, rotated: &mut [u64; 2]| {
            if putback(k, p) {
                rotated[file as usize] += 1;
            }
        };
        if f & pg::LOCKED != 0 {
            stat.nr_locked += 1;
            keep(k, &mut rotated);
            continue;
        }
        sc.nr_scanned += 1;
        if f & pg::MLOCKED != 0 && k.profile.unevictable_lru {
            k.ev.inc(Vm::UnevictablePgsCulled);
            stat.nr_culled += 1;
            keep(k, &mut rotated);
            continue;
        }
        let mapped = k.fr.mapcount[p as usize] > 0;
        stat.nr_mapped += mapped as u64;
        if !sc.may_unmap && mapped {
            keep(k, &mut rotated);
            continue;
        }
        if mapped || f & pg::SWAPCACHE != 0 {
            sc.nr_scanned += 1;
        }
        if f & pg::WRITEBACK != 0 {
            stat.nr_dirty += 1;
            stat.nr_writeback += 1;
            keep(k, &mut rotated);
            continue;
        }
        let r = page_check_references(k, ctx, p, sc);
        let mut activate = r == Ref::Activate;
        if r == Ref::Keep {
            stat.nr_ref_keep += 1;
            keep(k, &mut rotated);
            continue;
        }
        if !activate
            && k.fr.has(p, pg::ANON)
            && !k.fr.has(p, pg::SWAPCACHE)
            && !crate::swap_state::add_to_swap(k, ctx, p)
        {
            stat.nr_noswap += 1;
            activate = true;
        }
        if !activate && k.fr.mapcount[p as usize] > 0 && !k.try_to_unmap(ctx, p) {
            stat.nr_unmap_fail += 1;
            activate = true;
        }
        if activate {
            k.fr.set(p, pg::ACTIVE);
            activated += 1;
            stat.nr_activate[file as usize] += 1;
            keep(k, &mut rotated);
            continue;
        }
        if k.fr.has(p, pg::DIRTY) {
            stat.nr_dirty += 1;
            stat.nr_unqueued_dirty += 1;
            if r == Ref::ReclaimClean || !sc.may_writepage {
                keep(k, &mut rotated);
                continue;
            }
            stat.nr_pageout += 1;
            // pageout(): PG_reclaim so end_page_writeback rotates it to the inactive tail.
            k.fr.set(p, pg::RECLAIM);
            if pageout(k, ctx, p) && !file {
                k.ev.inc(Vm::NrVmscanWrite);
            }
            keep(k, &mut rotated);
            continue;
        }
        stat.nr_freed_referenced += (f & pg::REFERENCED != 0) as u64;
        stat.nr_freed_mapped += mapped as u64;
        // __remove_mapping: the radix-tree delete costs about what the insert did.
        k.charge(ctx, KFunc::ShrinkFolioList, k.cost.pagecache_add);
        k.g.isolated -= 1;
        remove_mapping(k, ctx, p, crate::memcontrol::ROOT);
        if batched {
            free_pages.push(p);
        } else {
            free_reclaimed_page(k, ctx, p);
        }
        reclaimed += 1;
        k.events += 1;
    }
    free_page_list(k, ctx, &free_pages);
    k.reclaim.split_mut().free_pages = free_pages;
    k.ev.add(Vm::Pgactivate, activated);
    let lv = &mut k.reclaim.split_mut().zone[zid];
    lv.recent_rotated[0] += rotated[0];
    lv.recent_rotated[1] += rotated[1];
    reclaimed
}

/// `free_page_list`: `pages` holds the call's reclaimed pages in reclaim order; the kernel's
/// local list has them newest first, and each pagevec of 14 taken from its head is freed from
/// its last slot down. So the newest 14 go first, oldest of them first, then the 14 before
/// them, and the oldest `len % 14` last: with cold frees, those end nearest the per-CPU list's
/// tail, where cold allocations and the bulk drains take from.
fn free_page_list(k: &mut Kernel, ctx: &mut Ctx, pages: &[Pfn]) {
    for pagevec in pages.rchunks(PAGEVEC_SIZE) {
        for &p in pagevec {
            free_reclaimed_page(k, ctx, p);
        }
    }
}

/// `shrink_inactive_list`.
fn shrink_inactive_list(
    k: &mut Kernel,
    ctx: &mut Ctx,
    zid: usize,
    nr: u64,
    sc: &mut Sc,
    priority: i32,
    file: bool,
) -> u64 {
    if k.profile.split26.reclaim_compaction {
        set_reclaim_mode(k, sc, priority);
    }
    super::swap::lru_add_drain(k, ctx.cpu);
    let mode = if sc.lumpy { Isolate::Both } else { Isolate::Inactive };
    let l = if file { LRU_INACTIVE_FILE } else { LRU_INACTIVE_ANON };
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let mut counts = [0u64; 4];
    let scanned = isolate_lru_pages(k, ctx, zid, l, nr, sc.order, mode, file, &mut buf, &mut counts);
    k.reclaim.split_mut().zone[zid].pages_scanned += scanned;
    k.ev.add(if sc.is_kswapd { Vm::PgscanKswapd } else { Vm::PgscanDirect }, scanned);
    super::count_zone_scan(k, zid, sc.is_kswapd, scanned);
    let zi = zid.min(7);
    let node = k.zones[zid].node;
    {
        let d = &mut k.reclaim.split_mut().kswapd[node];
        if sc.is_kswapd {
            d.zone_scan_kswapd[zi] += scanned;
        } else {
            d.zone_scan_direct[zi] += scanned;
        }
    }
    // clear_active_flags: lumpy took active pages too.
    let mut nr_active = 0;
    for &p in &buf {
        if k.fr.test_clear(p, pg::ACTIVE) {
            nr_active += 1;
        }
    }
    k.ev.add(Vm::Pgdeactivate, nr_active);
    k.ev.add(Vm::PgscanAnon, counts[LRU_INACTIVE_ANON] + counts[LRU_ACTIVE_ANON]);
    k.ev.add(Vm::PgscanFile, counts[LRU_INACTIVE_FILE] + counts[LRU_ACTIVE_FILE]);
    let lv = &mut k.reclaim.split_mut().zone[zid];
    lv.recent_scanned[0] += counts[LRU_INACTIVE_ANON] + counts[LRU_ACTIVE_ANON];
    lv.recent_scanned[1] += counts[LRU_INACTIVE_FILE] + counts[LRU_ACTIVE_FILE];
    let mut stat = ReclaimStat::default();
    let reclaimed = shrink_page_list(k, ctx, zid, &buf, sc, &mut stat);
    k.ev.add(if sc.is_kswapd { Vm::PgstealKswapd } else { Vm::PgstealDirect }, reclaimed);
    k.ev.add(if file { Vm::PgstealFile } else { Vm::PgstealAnon }, reclaimed);
    super::count_zone_steal(k, zid, sc.is_kswapd, reclaimed);
    let nid = k.zones[zid].node;
    k.trace_ctx(
        ctx,
        Tracepoint::LruShrinkInactive { nid, zid, nr_scanned: scanned, nr_reclaimed: reclaimed, priority, file, stat },
    );
    {
        let d = &mut k.reclaim.split_mut().kswapd[node];
        if sc.is_kswapd {
            d.zone_steal_kswapd[zi] += reclaimed;
        } else {
            d.zone_steal_direct[zi] += reclaimed;
        }
    }
    k.isolate_buf = buf;
    reclaimed
}

/// `shrink_active_list`: move active pages to the inactive list. A referenced page counts as
/// rotated (so its type gets less pressure) but still goes, unless it is executable file cache.
fn shrink_active_list(k: &mut Kernel, ctx: &mut Ctx, zid: usize, nr: u64, sc: &Sc, file: bool) {
    let l = if file { LRU_ACTIVE_FILE } else { LRU_ACTIVE_ANON };
    super::swap::lru_add_drain(k, ctx.cpu);
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let mut counts = [0u64; 4];
    let scanned = isolate_lru_pages(k, ctx, zid, l, nr, sc.order, Isolate::Active, file, &mut buf, &mut counts);
    k.reclaim.split_mut().zone[zid].pages_scanned += scanned;
    k.reclaim.split_mut().zone[zid].recent_scanned[file as usize] += buf.len() as u64;
    k.ev.add(Vm::Pgrefill, scanned);
    k.zones[zid].ev.pgrefill += scanned;
    let mut rotated = 0;
    let mut deact = 0;
    for &p in &buf {
        if k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED) {
            putback(k, p);
            continue;
        }
        if k.fr.mapcount[p as usize] > 0 && k.folio_referenced(ctx, p).0 > 0 {
            rotated += 1;
            if file && k.fr.has(p, pg::EXEC) {
                putback(k, p);
                continue;
            }
        }
        k.fr.clear(p, pg::ACTIVE);
        putback(k, p);
        deact += 1;
    }
    k.reclaim.split_mut().zone[zid].recent_rotated[file as usize] += rotated;
    k.ev.add(Vm::Pgdeactivate, deact);
    k.charge(ctx, KFunc::ShrinkActiveList, scanned * k.cost.lru_scan);
    k.isolate_buf = buf;
}

/// `inactive_anon_is_low`: `inactive * zone->inactive_ratio < active`. 2.6.36 asks this with
/// swap off too, so kswapd's background aging still deactivates anon pages nothing can reclaim.
fn inactive_anon_is_low(k: &Kernel, zid: usize) -> bool {
    if k.profile.split26.anon_aging_needs_swap && crate::swap_state::total_swap_pages(k) == 0 {
        return false;
    }
    let z = &k.zones[zid];
    let gb = z.present >> 18;
    let ratio = if gb > 0 { Kernel::int_sqrt(10 * gb) } else { 1 };
    z.lru_pages[LRU_INACTIVE_ANON] * ratio < z.lru_pages[LRU_ACTIVE_ANON]
}

fn inactive_file_is_low(k: &Kernel, zid: usize) -> bool {
    let z = &k.zones[zid];
    z.lru_pages[LRU_ACTIVE_FILE] > z.lru_pages[LRU_INACTIVE_FILE]
}

/// `zone_reclaimable_pages`.
fn zone_reclaimable_pages(k: &Kernel, zid: usize) -> u64 {
    let z = &k.zones[zid];
    let mut n = z.lru_pages[LRU_ACTIVE_FILE] + z.lru_pages[LRU_INACTIVE_FILE];
    if nr_swap_pages(k) > 0 {
        n += z.lru_pages[LRU_ACTIVE_ANON] + z.lru_pages[LRU_INACTIVE_ANON];
    }
    n
}

fn zone_reclaimable(k: &Kernel, zid: usize) -> bool {
    k.reclaim.split().zone[zid].pages_scanned < zone_reclaimable_pages(k, zid) * 6
}

/// `get_scan_count` (2.6.36): anon/file pressure from `recent_scanned / recent_rotated` weighted
/// by swappiness, each list's `size >> priority` share batched to SWAP_CLUSTER_MAX through
/// `nr_saved_scan`.
fn get_scan_count(k: &mut Kernel, zid: usize, sc: &Sc, priority: i32) -> [u64; 4] {
    let swappiness = k.profile.tunables.swappiness;
    let noswap = !sc.may_swap || nr_swap_pages(k) == 0;
    let (anon, file, free, high) = {
        let z = &k.zones[zid];
        (
            z.lru_pages[LRU_ACTIVE_ANON] + z.lru_pages[LRU_INACTIVE_ANON],
            z.lru_pages[LRU_ACTIVE_FILE] + z.lru_pages[LRU_INACTIVE_FILE],
            z.free_pages,
            z.high_wmark(),
        )
    };
    let (fa, ff, den) = if noswap {
        (0, 1, 1)
    } else if file + free <= high {
        // Almost no page cache left: only anon can give.
        (1, 0, 1)
    } else {
        let lv = &mut k.reclaim.split_mut().zone[zid];
        if lv.recent_scanned[0] > anon / 4 {
            lv.recent_scanned[0] /= 2;
            lv.recent_rotated[0] /= 2;
        }
        if lv.recent_scanned[1] > file / 4 {
            lv.recent_scanned[1] /= 2;
            lv.recent_rotated[1] /= 2;
        }
        let ap = (swappiness + 1) * (lv.recent_scanned[0] + 1) / (lv.recent_rotated[0] + 1);
        let fp = (200 - swappiness + 1) * (lv.recent_scanned[1] + 1) / (lv.recent_rotated[1] + 1);
        (ap, fp, ap + fp + 1)
    };
    let mut nr = [0u64; 4];
    for (l, slot) in nr.iter_mut().enumerate() {
        let is_file = l >= LRU_INACTIVE_FILE;
        let mut scan = k.zones[zid].lru_pages[l];
        if priority > 0 || noswap {
            scan >>= priority;
            scan = scan * if is_file { ff } else { fa } / den;
        }
        // nr_scan_try_batch
        let saved = &mut k.reclaim.split_mut().zone[zid].nr_saved_scan[l];
        let total = *saved + scan;
        if total >= SWAP_CLUSTER_MAX {
            *saved = 0;
            *slot = total;
        } else {
            *saved = total;
        }
    }
    nr
}

/// 2.6.38 `compaction_suitable` (`compaction.rs`): would compaction run for this order?
fn compaction_suitable(k: &Kernel, zid: usize, order: u32) -> bool {
    crate::compaction::compaction_suitable(k, zid, order) == crate::compaction::CompactResult::Continue
}

/// 2.6.38 `should_continue_reclaim`: in reclaim/compaction mode keep reclaiming this zone until
/// 2 << order pages came back or compaction could run.
fn should_continue_reclaim(k: &Kernel, zid: usize, nr_reclaimed: u64, sc: &Sc) -> bool {
    if !sc.compaction || nr_reclaimed == 0 {
        return false;
    }
    let want = 2u64 << sc.order;
    let z = &k.zones[zid];
    let inactive = z.lru_pages[LRU_INACTIVE_ANON] + z.lru_pages[LRU_INACTIVE_FILE];
    if sc.nr_reclaimed < want && inactive > want {
        return true;
    }
    !compaction_suitable(k, zid, sc.order)
}

/// `shrink_zone`.
fn shrink_zone(k: &mut Kernel, ctx: &mut Ctx, zid: usize, sc: &mut Sc, priority: i32) {
    if !k.profile.split26.reclaim_compaction {
        set_reclaim_mode(k, sc, priority);
    }
    loop {
        let mut nr = get_scan_count(k, zid, sc, priority);
        let mut reclaimed = 0;
        while nr[LRU_INACTIVE_ANON] > 0 || nr[LRU_ACTIVE_FILE] > 0 || nr[LRU_INACTIVE_FILE] > 0 {
            for l in [LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, LRU_INACTIVE_FILE, LRU_ACTIVE_FILE] {
                if nr[l] == 0 {
                    continue;
                }
                let n = nr[l].min(SWAP_CLUSTER_MAX);
                nr[l] -= n;
                let file = l >= LRU_INACTIVE_FILE;
                if l == LRU_ACTIVE_ANON || l == LRU_ACTIVE_FILE {
                    let low = if file { inactive_file_is_low(k, zid) } else { inactive_anon_is_low(k, zid) };
                    if low {
                        shrink_active_list(k, ctx, zid, n, sc, file);
                    }
                } else {
                    reclaimed += shrink_inactive_list(k, ctx, zid, n, sc, priority, file);
                }
            }
            if sc.nr_reclaimed + reclaimed >= sc.nr_to_reclaim && priority < DEF_PRIORITY {
                break;
            }
        }
        sc.nr_reclaimed += reclaimed;
        // 2.6.36 also wants a free swap slot here; from 2.6.37 a full swap still rebalances.
        if inactive_anon_is_low(k, zid) && (k.profile.split26.anon_aging_needs_swap || nr_swap_pages(k) > 0) {
            shrink_active_list(k, ctx, zid, SWAP_CLUSTER_MAX, sc, false);
        }
        if !should_continue_reclaim(k, zid, reclaimed, sc) {
            break;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Direct reclaim

/// `try_to_free_pages` → `do_try_to_free_pages`: shrink the zonelist's zones from priority 12
/// down until SWAP_CLUSTER_MAX pages are back, waiting in congestion_wait below priority 10.
pub fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, _classzone: usize) -> u64 {
    k.ev.inc(Vm::Allocstall);
    let mut sc = Sc {
        nr_to_reclaim: SWAP_CLUSTER_MAX,
        order,
        may_writepage: true,
        may_swap: true,
        may_unmap: true,
        ..Default::default()
    };
    let (zl, n) = k.zonelist(ctx.node, gfp);
    let mut total_scanned = 0;
    for priority in (0..=DEF_PRIORITY).rev() {
        sc.nr_scanned = 0;
        for &zid in &zl[..n] {
            if k.zones[zid].present == 0
                || (k.reclaim.split_mut().zone[zid].all_unreclaimable && priority != DEF_PRIORITY)
            {
                continue;
            }
            shrink_zone(k, ctx, zid, &mut sc, priority);
        }
        // The filesystem's own slab allocations are GFP_NOFS: the dcache/icache shrinkers refuse.
        let lru_pages: u64 = zl[..n].iter().map(|&z| zone_reclaimable_pages(k, z)).sum();
        sc.nr_reclaimed +=
            crate::dcache::shrink_slab(k, ctx, sc.nr_scanned, lru_pages, gfp.mt != crate::mmzone::Mt::Reclaimable);
        total_scanned += sc.nr_scanned;
        if sc.nr_reclaimed >= sc.nr_to_reclaim {
            break;
        }
        if total_scanned > SWAP_CLUSTER_MAX + SWAP_CLUSTER_MAX / 2 {
            // wakeup_flusher_threads(laptop_mode ? 0 : total_scanned): no laptop mode here.
            crate::page_writeback::queue_flusher_work(k, total_scanned);
            sc.may_writepage = true;
        }
        if sc.nr_scanned > 0 && priority < DEF_PRIORITY - 2 {
            // congestion_wait(BLK_RW_ASYNC, HZ/10): the task sleeps after this piece of work.
            ctx.sleep_ns += HZ_10_NS;
        }
    }
    // "Top priority shrink_zones still had more to do? don't OOM, then": progress is claimed
    // while a zone of the zonelist has been scanned less than six times its reclaimable pages
    // since it last freed one. Whether a zone was merely visited (2.6.35) is no test: a zone of
    // unswappable anon is visited at every priority and frees nothing, and the allocation would
    // retry forever instead of reaching the OOM killer (Minchan Kim, "[PATCH v2] vmscan: check
    // all_unreclaimable in direct reclaim path", linux-mm, 12 Sep 2010, merged for 2.6.36).
    if sc.nr_reclaimed > 0 {
        sc.nr_reclaimed
    } else if zl[..n].iter().any(|&z| k.zones[z].present > 0 && zone_reclaimable(k, z)) {
        1
    } else {
        0
    }
}

// ---------------------------------------------------------------------------------------------
// kswapd

/// `pgdat_balanced` (2.6.38): the balanced zones hold more than a quarter of the node's pages
/// up to the classzone.
fn pgdat_balanced(k: &Kernel, node: usize, balanced: u64, cz: usize) -> bool {
    let present: u64 = k.nodes[node].zones.iter().filter(|&&z| zidx(k, z) <= cz).map(|&z| k.zones[z].present).sum();
    balanced > present / 4
}

/// What keeps 2.6.36/38's `balance_pgdat` going: the highest zone that fails its high watermark
/// at the order being balanced for (its `end_zone`).
pub fn kswapd_why(k: &Kernel, node: usize) -> crate::stats::explain::Reason {
    use crate::stats::explain::{Reason, Why};
    let order = k.reclaim.split().kswapd[node].sc_order;
    let (zs, n) = node_zones(k, node);
    for &zid in zs[..n].iter().rev() {
        let z = &k.zones[zid];
        if z.present == 0 || k.reclaim.split().zone[zid].all_unreclaimable {
            continue;
        }
        if !wmark_ok(k, zid, order, z.high_wmark(), 0) {
            return Reason::new(Why::BelowHigh, node, Some(zid), order);
        }
    }
    Reason::new(Why::Balanced, node, None, order)
}

/// `sleeping_prematurely`: true means "do not sleep yet".
fn sleeping_prematurely(k: &Kernel, node: usize, order: u32, remaining: bool, cz: usize) -> bool {
    if remaining {
        return true;
    }
    let s = k.profile.split26;
    let (zs, n) = node_zones(k, node);
    let cz = if s.kswapd_classzone { cz } else { 0 };
    let mut balanced = 0;
    let mut all_ok = true;
    for &zid in &zs[..n] {
        let z = &k.zones[zid];
        if z.present == 0 {
            continue;
        }
        if k.reclaim.split().zone[zid].all_unreclaimable {
            if s.unreclaimable_balanced {
                balanced += z.present;
            }
            continue;
        }
        let zone_order = if spared(k, zid, order) { 0 } else { order };
        if wmark_ok(k, zid, zone_order, z.high_wmark(), cz) {
            balanced += z.present;
        } else {
            if !k.profile.pgdat_balanced_quarter || order == 0 {
                // 2.6.36: any zone failing `order` at HIGH keeps kswapd awake.
                return true;
            }
            all_ok = false;
        }
    }
    if order > 0 && k.profile.pgdat_balanced_quarter {
        let b = pgdat_balanced(k, node, balanced, cz);
        return if s.sleep_check_inverted { b } else { !b };
    }
    !all_ok
}

/// `wakeup_kswapd` for zone `zid`.
pub fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
    if k.zones[zid].present == 0 {
        return;
    }
    let node = k.zones[zid].node;
    let s = k.profile.split26;
    let low = k.zones[zid].low_wmark();
    if s.kswapd_classzone {
        // 2.6.38: the request is recorded first; the LOW check only decides the wake itself.
        let ks_max = k.nodes[node].kswapd.max_order;
        if order > 0 {
            k.reclaim.split_mut().kswapd[node].high_order_wakeups += 1;
        }
        if ks_max < order {
            k.nodes[node].kswapd.max_order = order;
            let l = locals(k, node);
            l.pgdat_cz = l.pgdat_cz.min(classzone);
        }
        if !waitqueue_active(k, node) || wmark_ok(k, zid, order, low, 0) {
            return;
        }
    } else {
        // 2.6.36: a zone fine at LOW for this order neither wakes nor raises the order.
        if wmark_ok(k, zid, order, low, 0) {
            return;
        }
        k.trace(Tracepoint::WakeupKswapd { nid: node, zid, order, gfp: k.trace_gfp });
        let ks = &mut k.nodes[node].kswapd;
        ks.max_order = ks.max_order.max(order);
        if order > 0 {
            k.reclaim.split_mut().kswapd[node].high_order_wakeups += 1;
        }
        if !waitqueue_active(k, node) {
            return;
        }
    }
    let ks = &mut k.nodes[node].kswapd;
    match ks.phase {
        KswapdPhase::Napping => ks.woken_during_nap = true,
        KswapdPhase::Sleeping => k.reclaim.split_mut().kswapd[node].woken = true,
        _ => return,
    }
    let t = ks.task;
    k.wakeups.push(t);
}

/// kswapd sits on its waitqueue only while it tries to sleep.
fn waitqueue_active(k: &Kernel, node: usize) -> bool {
    matches!(k.nodes[node].kswapd.phase, KswapdPhase::Napping | KswapdPhase::Sleeping)
}

/// One step of kswapd: the top of kswapd()'s loop, a nap's end, or one priority pass of
/// balance_pgdat.
pub fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    locals(k, node);
    match k.nodes[node].kswapd.phase {
        KswapdPhase::Sleeping => {
            if !std::mem::take(&mut k.reclaim.split_mut().kswapd[node].woken) {
                return KswapdAction::Sleep;
            }
            k.nodes[node].kswapd.sleeping = false;
            after_sleep_attempt(k, node);
            KswapdAction::Continue
        }
        KswapdPhase::TrySleep => loop_top(k, ctx, node),
        KswapdPhase::Napping => {
            let ks = &mut k.nodes[node].kswapd;
            ks.napping = false;
            let remaining = std::mem::take(&mut ks.woken_during_nap);
            let (order, cz) = (k.reclaim.split_mut().kswapd[node].order, k.reclaim.split_mut().kswapd[node].cz);
            if !sleeping_prematurely(k, node, order, remaining, cz) {
                let ks = &mut k.nodes[node].kswapd;
                ks.phase = KswapdPhase::Sleeping;
                ks.sleeping = true;
                k.reclaim.split_mut().kswapd[node].full_sleeps += 1;
                return KswapdAction::Sleep;
            }
            k.ev.inc(if remaining { Vm::KswapdLowWmarkHitQuickly } else { Vm::KswapdHighWmarkHitQuickly });
            after_sleep_attempt(k, node);
            KswapdAction::Continue
        }
        KswapdPhase::Balancing => {
            k.charge(ctx, KFunc::BalancePgdat, k.cost.syscall);
            if std::mem::take(&mut k.reclaim.split_mut().kswapd[node].pending_out) {
                balance_out(k, node);
                return KswapdAction::Continue;
            }
            balance_priority(k, ctx, node)
        }
    }
}

/// The top of kswapd()'s loop: take the order (and classzone) wakeups asked for; balance again
/// at once if that is more than kswapd just did, else try to sleep.
fn loop_top(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    k.charge(ctx, KFunc::BalancePgdat, k.cost.syscall);
    let s = k.profile.split26;
    let new_order = std::mem::take(&mut k.nodes[node].kswapd.max_order);
    let l = locals(k, node);
    let new_cz = std::mem::replace(&mut l.pgdat_cz, MAX_CLASSZONE);
    if l.order < new_order || (s.kswapd_classzone && l.cz > new_cz) {
        l.order = new_order;
        l.cz = new_cz;
        let (o, cz) = (l.order, l.cz);
        start_balance(k, node, o, cz);
        return KswapdAction::Continue;
    }
    let (order, cz) = (l.order, l.cz);
    if !sleeping_prematurely(k, node, order, false, cz) {
        let ks = &mut k.nodes[node].kswapd;
        ks.phase = KswapdPhase::Napping;
        ks.napping = true;
        ks.woken_during_nap = false;
        return KswapdAction::Nap(HZ_10_NS);
    }
    // Premature without a nap: the second check sees the same zones.
    k.ev.inc(Vm::KswapdHighWmarkHitQuickly);
    after_sleep_attempt(k, node);
    KswapdAction::Continue
}

/// After a sleep attempt (slept, napped or not): `order = pgdat->kswapd_max_order`, and in
/// 2.6.38 the classzone too, both reset; then balance_pgdat.
fn after_sleep_attempt(k: &mut Kernel, node: usize) {
    let reset = k.profile.split26.kswapd_reset_after_sleep;
    let mo = k.nodes[node].kswapd.max_order;
    if reset {
        k.nodes[node].kswapd.max_order = 0;
    }
    let l = locals(k, node);
    l.order = mo;
    if reset {
        l.cz = std::mem::replace(&mut l.pgdat_cz, MAX_CLASSZONE);
    }
    let (o, cz) = (l.order, l.cz);
    start_balance(k, node, o, cz);
}

/// balance_pgdat's entry and `loop_again:`.
fn start_balance(k: &mut Kernel, node: usize, order: u32, cz: usize) {
    let first = k.nodes[node].zones.first().copied().unwrap_or(0);
    let ks = &mut k.nodes[node].kswapd;
    ks.phase = KswapdPhase::Balancing;
    ks.sleeping = false;
    ks.bal_order = order;
    let l = &mut k.reclaim.split_mut().kswapd[node];
    l.sc_order = order;
    l.bal_cz = cz;
    l.balance_runs[(order > 0) as usize] += 1;
    k.trace(Tracepoint::KswapdBalanceBegin { node, order });
    let l = &mut k.reclaim.split_mut().kswapd[node];
    l.end_zone = first;
    loop_again(k, node);
}

fn loop_again(k: &mut Kernel, node: usize) {
    let l = &mut k.reclaim.split_mut().kswapd[node];
    l.total_scanned = 0;
    l.nr_reclaimed = 0;
    l.may_writepage = true;
    l.priority = DEF_PRIORITY;
    l.all_ok = false;
    l.pending_out = false;
    if l.sc_order > 0 {
        l.high_order_passes += 1;
    }
    k.ev.inc(Vm::Pageoutrun);
}

/// One `for (priority = DEF_PRIORITY; priority >= 0; priority--)` iteration of balance_pgdat.
fn balance_priority(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    let s = k.profile.split26;
    let quarter = k.profile.pgdat_balanced_quarter;
    let (zs, n) = node_zones(k, node);
    let (order, priority) = {
        let l = &k.reclaim.split_mut().kswapd[node];
        (l.sc_order, l.priority)
    };
    let mut sc = Sc {
        nr_to_reclaim: u64::MAX,
        nr_reclaimed: k.reclaim.split_mut().kswapd[node].nr_reclaimed,
        order,
        may_writepage: k.reclaim.split_mut().kswapd[node].may_writepage,
        may_swap: true,
        may_unmap: true,
        is_kswapd: true,
        ..Default::default()
    };
    // The highest zone that fails `order` at HIGH (classzone 0) is where balancing must reach.
    let mut end: Option<usize> = None;
    for &zid in zs[..n].iter().rev() {
        if k.zones[zid].present == 0 || (k.reclaim.split_mut().zone[zid].all_unreclaimable && priority != DEF_PRIORITY)
        {
            continue;
        }
        // Background aging of the anon list, so pages get a chance to be referenced.
        if inactive_anon_is_low(k, zid) {
            shrink_active_list(k, ctx, zid, SWAP_CLUSTER_MAX, &sc, false);
        }
        if !spared(k, zid, order) && !wmark_ok(k, zid, order, k.zones[zid].high_wmark(), 0) {
            end = Some(zid);
            break;
        }
    }
    let Some(end_zone) = end else {
        let l = &mut k.reclaim.split_mut().kswapd[node];
        l.all_ok = true;
        l.nr_reclaimed = sc.nr_reclaimed;
        balance_out(k, node);
        return KswapdAction::Continue;
    };
    let end_idx = zidx(k, end_zone);
    {
        let l = &mut k.reclaim.split_mut().kswapd[node];
        l.end_zone = end_zone;
        if s.kswapd_classzone {
            l.bal_cz = end_idx;
        }
    }
    let bal_cz = k.reclaim.split_mut().kswapd[node].bal_cz;
    {
        let l = &mut k.reclaim.split_mut().kswapd[node];
        if order > 0 && priority < DEF_PRIORITY - 2 {
            l.high_order_low_prio_passes += 1;
        }
        l.lowest_priority = Some(l.lowest_priority.map_or(priority, |p| p.min(priority)));
    }
    let mut all_ok = true;
    let mut under_min = false;
    let mut balanced = 0u64;
    let mut total_scanned = k.reclaim.split_mut().kswapd[node].total_scanned;
    // The slab shrinkers' pressure is scaled by the LRU as the pass found it: balance_pgdat sums
    // `lru_pages` over zones 0..end_zone once, before the per-zone loop (the loop_again context
    // of Wu Fengguang's "mm: count only reclaimable lru pages v2", linux-mm, 16 Jul 2009), so
    // what this pass's shrinking frees does not raise the pressure on slab for the zones after.
    let lru_pages: u64 = zs[..n].iter().filter(|&&z| z <= end_zone).map(|&z| zone_reclaimable_pages(k, z)).sum();
    for &zid in &zs[..n] {
        if zid > end_zone {
            break;
        }
        if k.zones[zid].present == 0 || (k.reclaim.split_mut().zone[zid].all_unreclaimable && priority != DEF_PRIORITY)
        {
            continue;
        }
        sc.nr_scanned = 0;
        // The what-if's spared zone is not shrunk (its slab call below still ages the caches).
        let spare = spared(k, zid, order);
        // A zone with "way too many" free pages for this order is not shrunk.
        let shrink = !spare && !wmark_ok(k, zid, order, 8 * k.zones[zid].high_wmark(), end_idx);
        k.trace(Tracepoint::KswapdZoneCheck { node, zid, order, priority, end_zone: end_idx, shrink });
        if shrink {
            shrink_zone(k, ctx, zid, &mut sc, priority);
        }
        let nr_slab = crate::dcache::shrink_slab(k, ctx, sc.nr_scanned, lru_pages, true);
        sc.nr_reclaimed += nr_slab;
        total_scanned += sc.nr_scanned;
        // 5a03b051 (2.6.38 until 2.6.38.1): a zone fine at order 0 but not at `order` is
        // compacted (asynchronously, in kswapd mode) rather than only reclaimed.
        let mut compaction = false;
        if s.kswapd_compaction
            && !spare
            && order > 0
            && wmark_ok(k, zid, 0, k.zones[zid].high_wmark(), end_idx)
            && !wmark_ok(k, zid, order, k.zones[zid].high_wmark(), end_idx)
        {
            let sync = !s.compaction_async;
            let mt = crate::mmzone::Mt::Unmovable;
            crate::compaction::compact_zone_order(k, ctx, zid, order, mt, sync, crate::compaction::Mode::Kswapd);
            k.reclaim.split_mut().kswapd[node].kswapd_compactions += 1;
            compaction = true;
        }
        if spare {
            // Not this run's to balance: counted as balanced where 2.6.38 counts zones.
            if zidx(k, zid) <= bal_cz {
                balanced += k.zones[zid].present;
            }
            continue;
        }
        if k.reclaim.split_mut().zone[zid].all_unreclaimable {
            continue;
        }
        if !compaction && nr_slab == 0 && !zone_reclaimable(k, zid) {
            k.reclaim.split_mut().zone[zid].all_unreclaimable = true;
        }
        if total_scanned > 2 * SWAP_CLUSTER_MAX && total_scanned > sc.nr_reclaimed + sc.nr_reclaimed / 2 {
            sc.may_writepage = true;
        }
        if !wmark_ok(k, zid, order, k.zones[zid].high_wmark(), end_idx) {
            all_ok = false;
            if !wmark_ok(k, zid, order, k.zones[zid].min_wmark(), end_idx) {
                under_min = true;
            }
        } else if zidx(k, zid) <= bal_cz {
            balanced += k.zones[zid].present;
        }
    }
    let done = all_ok || (quarter && order > 0 && pgdat_balanced(k, node, balanced, bal_cz));
    let l = &mut k.reclaim.split_mut().kswapd[node];
    l.total_scanned = total_scanned;
    l.nr_reclaimed = sc.nr_reclaimed;
    l.may_writepage = sc.may_writepage;
    l.all_ok = done;
    if done {
        balance_out(k, node);
        return KswapdAction::Continue;
    }
    let mut action = KswapdAction::Continue;
    if total_scanned > 0 && priority < DEF_PRIORITY - 2 {
        if under_min {
            k.ev.inc(Vm::KswapdSkipCongestionWait);
        } else {
            action = KswapdAction::Nap(HZ_10_NS);
        }
    }
    let l = &mut k.reclaim.split_mut().kswapd[node];
    if sc.nr_reclaimed >= SWAP_CLUSTER_MAX || priority == 0 {
        l.pending_out = true;
    } else {
        l.priority -= 1;
    }
    if action == KswapdAction::Continue && std::mem::take(&mut l.pending_out) && balance_out(k, node) {
        // `out:` ... cond_resched(); goto loop_again: allocators on the other CPUs run meanwhile.
        return KswapdAction::Yield;
    }
    action
}

/// balance_pgdat's `out:`. Returns true when it went back to `loop_again`.
fn balance_out(k: &mut Kernel, node: usize) -> bool {
    let s = k.profile.split26;
    let l = &mut k.reclaim.split_mut().kswapd[node];
    if !l.all_ok {
        // Fragmentation may keep a high order unreachable: a whole pass that got less than
        // SWAP_CLUSTER_MAX falls back to order 0.
        if l.nr_reclaimed < SWAP_CLUSTER_MAX {
            if l.sc_order > 0 {
                l.high_order_ends[1] += 1;
            }
            l.sc_order = 0;
            if s.kswapd_return_order {
                l.order = 0;
            }
        }
        loop_again(k, node);
        return true;
    }
    if s.kswapd_return_order {
        let order = l.sc_order;
        if order > 0 {
            // Before sleeping at a high order, every zone up to end_zone must be fine at order 0.
            let (zs, n) = node_zones(k, node);
            let end_zone = k.reclaim.split_mut().kswapd[node].end_zone;
            let priority = k.reclaim.split_mut().kswapd[node].priority;
            for &zid in &zs[..n] {
                if zid > end_zone {
                    break;
                }
                if k.zones[zid].present == 0
                    || (k.reclaim.split_mut().zone[zid].all_unreclaimable && priority != DEF_PRIORITY)
                {
                    continue;
                }
                if !wmark_ok(k, zid, 0, k.zones[zid].high_wmark(), 0) {
                    let l = &mut k.reclaim.split_mut().kswapd[node];
                    l.sc_order = 0;
                    l.order = 0;
                    loop_again(k, node);
                    return true;
                }
            }
        }
        let ez = k.reclaim.split_mut().kswapd[node].end_zone;
        let ez_idx = zidx(k, ez);
        let l = &mut k.reclaim.split_mut().kswapd[node];
        l.order = order;
        l.cz = ez_idx;
    }
    let order = k.reclaim.split().kswapd[node].sc_order;
    k.trace(Tracepoint::KswapdBalanceEnd { node, order });
    let ks = &mut k.nodes[node].kswapd;
    if k.reclaim.split_mut().kswapd[node].sc_order > 0 {
        k.reclaim.split_mut().kswapd[node].high_order_ends[0] += 1;
    }
    ks.reclaim_order = k.reclaim.split_mut().kswapd[node].order;
    ks.phase = KswapdPhase::TrySleep;
    false
}

impl ReclaimEngine for Split2636 {
    fn lru_scope(_k: &Kernel, zid: usize) -> LruScope {
        LruScope::Zone(zid)
    }
    fn lru_names() -> [Option<&'static str>; NR_LRU_LISTS] {
        SPLIT_LRU_NAMES
    }
    fn lru_add(k: &mut Kernel, p: Pfn) {
        lru_add(k, p)
    }
    /// `lru_cache_add_lru` through `cpu`'s pagevec of the page's list when the row has them; a
    /// page for the unevictable list goes there at once (`add_page_to_unevictable_list`).
    fn lru_cache_add(k: &mut Kernel, cpu: u32, p: Pfn) {
        let size = k.profile.split26.lru_add_pvec as usize;
        if size == 0 || (k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED)) {
            return lru_add(k, p);
        }
        let l = super::swap::new_page_lru(k, p);
        super::swap::lru_cache_add(k, cpu, p, l, size)
    }
    fn lru_add_drain(k: &mut Kernel, cpu: u32) {
        super::swap::lru_add_drain(k, cpu)
    }
    fn lru_add_drain_all(k: &mut Kernel) {
        super::swap::lru_add_drain_all(k)
    }
    fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
        mark_page_accessed(k, p)
    }
    /// `free_one_page` / `free_pcppages_bulk`: any page coming back makes the zone worth
    /// scanning again.
    fn pages_freed(k: &mut Kernel, zid: usize) {
        let z = &mut k.reclaim.split_mut().zone[zid];
        z.all_unreclaimable = false;
        z.pages_scanned = 0;
    }
    fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
        wakeup_kswapd(k, zid, order, classzone)
    }
    /// 2.6.x calls `wakeup_kswapd` for every zone of the zonelist (each checks its own
    /// watermark).
    fn wake_all_kswapd(k: &mut Kernel, zonelist: &[usize], order: u32, classzone: usize) {
        for &zid in zonelist {
            wakeup_kswapd(k, zid, order, classzone);
        }
    }
    fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, classzone: usize) -> u64 {
        try_to_free_pages(k, ctx, gfp, order, classzone)
    }
    fn kswapd_why(k: &Kernel, node: usize) -> crate::stats::explain::Reason {
        kswapd_why(k, node)
    }
    fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
        kswapd_step(k, ctx, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::Mt;

    /// 16 MiB DMA, 96 MiB DMA32, 32 MiB Normal: the seed's shape, small, under the engine's
    /// first row (2.6.36's mechanisms) with `later`'s choices set on it (2.6.37/38's).
    fn kernel(later: impl FnOnce(&mut crate::profiles::Profile)) -> Kernel {
        let cfg = MachineConfig::of_zones(
            "x86_64",
            1,
            &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 24576), (ZoneType::Normal, 8192)],
        );
        let mut p = crate::profiles::first_with_engine(crate::profiles::Engine::Split2636);
        later(&mut p);
        Kernel::new(p, cfg, 1).expect("kernel")
    }

    /// 2.6.36's row: none of the later choices.
    fn as_2636(_: &mut crate::profiles::Profile) {}

    /// Mel Gorman's 2.6.38 kswapd series: classzone balancing, 25 % of the node balanced, the
    /// inverted sleep check, an unreclaimable zone counting as balanced, and `balance_pgdat`'s
    /// `out:` keeping the order while reclaim progresses.
    fn kswapd_series(p: &mut crate::profiles::Profile) {
        p.pgdat_balanced_quarter = true;
        p.split26.kswapd_classzone = true;
        p.split26.sleep_check_inverted = true;
        p.split26.unreclaimable_balanced = true;
        p.split26.kswapd_return_order = true;
    }

    /// Allocate every page of zone `zid` (pfn order), then free every other one: order-0 holes only.
    fn shred(k: &mut Kernel, zid: usize) {
        let mut ctx = Ctx::default();
        let mut got = Vec::new();
        while let Some(p) = k.rmqueue(zid, 0, Mt::Movable) {
            got.push(p);
        }
        got.sort_unstable();
        for p in got.into_iter().step_by(2) {
            k.free_one_page(zid, p, 0);
        }
        let _ = &mut ctx;
    }

    #[test]
    fn watermark_check_is_off_by_two_from_2637() {
        // A zone with exactly min + reserve + 1 free pages passes order 0 in 2.6.36 and fails in
        // 2.6.38, which subtracts (1 << order) + 1.
        for (off_by_two, ok) in [(false, true), (true, false)] {
            let profile = format!("wmark_off_by_two {off_by_two}");
            let k = kernel(|p| p.split26.wmark_off_by_two = off_by_two);
            let z = 1;
            let free = k.zones[z].free_pages;
            assert!(k.zone_watermark_ok(z, 0, free - 1, 0, false, false) == ok, "{profile}");
        }
    }

    #[test]
    fn sleep_checks_2636_any_zone_2638_quarter_of_node_and_backwards() {
        let cz = ZoneType::Normal as usize;
        // 2.6.36: premature exactly while some zone fails the order at HIGH.
        let mut k = kernel(as_2636);
        assert!(!sleeping_prematurely(&k, 0, 3, false, cz), "fresh memory: 2.6.36 sleeps");
        shred(&mut k, 2);
        assert!(!wmark_ok(&k, 2, 3, k.zones[2].high_wmark(), 0));
        assert!(sleeping_prematurely(&k, 0, 3, false, cz), "Normal fails order 3: 2.6.36 stays awake");
        assert!(!sleeping_prematurely(&k, 0, 0, false, cz), "order 0 is fine everywhere");
        // 2.6.38: the node is balanced while DMA32 (75 %) is, and for order > 0 the check
        // returns pgdat_balanced() itself — a balanced node is "premature" (fixed in 3.0).
        let mut k = kernel(kswapd_series);
        assert!(sleeping_prematurely(&k, 0, 3, false, cz), "balanced node reads as premature");
        shred(&mut k, 2);
        assert!(sleeping_prematurely(&k, 0, 3, false, cz), "still balanced without Normal");
        shred(&mut k, 1);
        assert!(!pgdat_balanced(&k, 0, k.zones[0].present, cz));
        assert!(!sleeping_prematurely(&k, 0, 3, false, cz), "unbalanced node: 2.6.38 goes to sleep");
    }

    /// balance_pgdat's `out:` in 2.6.38 (Mel Gorman's kswapd series V4 3/6, 10 Dec 2010): a pass
    /// that leaves the node unbalanced goes back to `loop_again` at the same order as long as it
    /// reclaimed SWAP_CLUSTER_MAX pages; only a pass that got fewer drops to order 0. So when no
    /// zone can reach order 3 but reclaim keeps making progress, kswapd stays at order 3 — the
    /// loop issue 15's 12-h history shows, and what 5a03b051's kswapd compaction (not modelled)
    /// would have broken.
    #[test]
    fn unbalanced_high_order_pass_keeps_its_order_while_reclaim_progresses() {
        let mut k = kernel(kswapd_series);
        locals(&mut k, 0);
        for (reclaimed, after) in [(SWAP_CLUSTER_MAX, 3), (SWAP_CLUSTER_MAX - 1, 0)] {
            let l = &mut k.reclaim.split_mut().kswapd[0];
            (l.sc_order, l.order, l.all_ok, l.nr_reclaimed, l.priority) = (3, 3, false, reclaimed, 5);
            assert!(balance_out(&mut k, 0), "an unbalanced node goes back to loop_again");
            let l = &k.reclaim.split().kswapd[0];
            assert_eq!((l.sc_order, l.order), (after, after), "{reclaimed} reclaimed");
            assert_eq!((l.priority, l.nr_reclaimed), (DEF_PRIORITY, 0), "loop_again restarts the sweep");
        }
        // A balanced end at order 3 returns through the order-0 recheck, which fails on a zone
        // below HIGH at order 0: again loop_again, now at order 0.
        let total = k.zones[1].free_pages;
        while k.zones[1].free_pages > k.zones[1].high_wmark() / 2 {
            k.rmqueue(1, 0, Mt::Movable).expect("free page");
        }
        assert!(k.zones[1].free_pages < total);
        let l = &mut k.reclaim.split_mut().kswapd[0];
        (l.sc_order, l.order, l.all_ok, l.end_zone) = (3, 3, true, 2);
        assert!(balance_out(&mut k, 0), "order-0 recheck fails: loop_again");
        assert_eq!(k.reclaim.split().kswapd[0].sc_order, 0);
    }

    #[test]
    fn unmovable_fallback_steals_the_largest_block_and_claims_its_pageblock() {
        let mut k = kernel(as_2636);
        let z = 1;
        let p = k.rmqueue(z, 3, Mt::Unmovable).expect("a block");
        let b = k.pageblock_of(k.zone_of(p), p);
        assert_eq!(k.pageblock_mt[b], Mt::Unmovable as u8, "the stolen pageblock is claimed");
        // The rest of that pageblock now serves unmovable requests without another steal.
        let q = k.rmqueue(z, 3, Mt::Unmovable).expect("another block");
        assert_eq!(k.pageblock_of(k.zone_of(q), q), b);
        k.free_one_page(z, p, 3);
        k.free_one_page(z, q, 3);
        k.check_frames().expect("consistent free lists");
    }

    /// Simon Kirby's zones (linux-mm, "Free memory never fully used, swapping", 24 Nov 2010:
    /// DMA 3,943, DMA32 832,392, Normal 193,920 present pages) give his /proc/zoneinfo
    /// watermarks and `protection:` lines exactly (2.6.36 `init_per_zone_wmark_min`,
    /// `setup_per_zone_wmarks`, `setup_per_zone_lowmem_reserve` with ratios 256/256/32): the
    /// 757-page reserve DMA32 keeps against Normal-capable requests is the only thing between
    /// its fast path and an order-3 skb slab.
    #[test]
    fn simons_zones_give_his_zoneinfo_watermarks_and_protection() {
        let cfg = MachineConfig::of_zones(
            "x86_64",
            4,
            &[(ZoneType::Dma, 3943), (ZoneType::Dma32, 832_392), (ZoneType::Normal, 193_920)],
        );
        let p = crate::profiles::first_with_engine(crate::profiles::Engine::Split2636);
        let k = Kernel::new(p, cfg, 1).expect("kernel");
        let got: Vec<([u64; 3], Vec<u64>)> =
            k.zones.iter().map(|z| (z.wmark, z.lowmem_reserve[..4].to_vec())).collect();
        assert_eq!(got[0], ([7, 8, 10], vec![0, 3251, 4009, 4009]), "DMA");
        assert_eq!(got[1], ([1640, 2050, 2460], vec![0, 0, 757, 757]), "DMA32");
        assert_eq!(got[2], ([382, 477, 573], vec![0, 0, 0, 0]), "Normal");
    }

    /// 2.6.36 `__alloc_pages_nodemask` tries every zone at LOW (no ALLOC_HIGH/HARDER) before the
    /// slow path, and only the slow path calls `wake_all_kswapd`. So SLUB's first, `oo`-order
    /// try for an skb slab wakes kswapd at order 3 only when *every* zone of the zonelist fails
    /// the order-3 LOW check (Simon's trace: `zid=2 order=3` then `zid=1 order=3`, one pair per
    /// allocation); when it does, the order stays recorded although `allocate_slab`'s fallback
    /// to `s->min` succeeds (Simon, 25 Nov 2010: "it is too late -- kswapd is woken").
    #[test]
    fn skb_slab_wakes_kswapd_at_order_3_only_when_every_zone_fails_it() {
        let mut k = kernel(as_2636);
        let mut ctx = Ctx::default();
        shred(&mut k, 2);
        let (p, o) = crate::slub::allocate_slab(&mut k, &mut ctx, 3).expect("DMA32 serves it");
        assert_eq!(o, 3);
        assert_eq!(k.zones.iter().position(|z| z.spans(p)), Some(1), "served by DMA32's fast path");
        assert_eq!(k.nodes[0].kswapd.max_order, 0, "no slow path, no wakeup");
        assert_eq!(k.reclaim.split().kswapd[0].high_order_wakeups, 0);
        // DMA32 and DMA without a free order-3 block: the first try enters the slow path, both
        // populated zones that fail order 3 at LOW record the wakeup, and the order-0 fallback
        // then succeeds.
        shred(&mut k, 1);
        shred(&mut k, 0);
        let (_, o) = crate::slub::allocate_slab(&mut k, &mut ctx, 3).expect("the order-0 fallback");
        assert_eq!(o, 0);
        assert_eq!(k.nodes[0].kswapd.max_order, 3, "kswapd was asked for order 3 anyway");
        assert_eq!(k.reclaim.split().kswapd[0].high_order_wakeups, 3, "Normal, DMA32 and DMA");
    }

    /// Normal holding only active anon pages, no swap configured: one pass of kswapd's
    /// zone walk. 2.6.36 still runs the background anon aging then (its `inactive_anon_is_low`
    /// has no swap test); Minchan Kim's "vmscan: prevent background aging of anon page in no
    /// swap system" (linux-mm, 2 Sep 2010; merged for 2.6.37) made it wait for a swap area.
    #[test]
    fn kswapd_ages_anon_without_swap_in_2636_only() {
        for (needs_swap, ages, with_swap) in [(false, true, false), (true, false, false), (true, true, true)] {
            let profile = format!("anon_aging_needs_swap {needs_swap}");
            let mut k = kernel(|p| p.split26.anon_aging_needs_swap = needs_swap);
            if with_swap {
                k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 64 << 20));
            }
            assert_eq!(crate::swap_state::total_swap_pages(&k) > 0, with_swap);
            let z = 2;
            for _ in 0..256 {
                let p = k.rmqueue(z, 0, Mt::Movable).expect("a free page");
                k.fr.set(p, pg::ANON | pg::SWAPBACKED | pg::ACTIVE);
                add_to_list(&mut k, p, LRU_ACTIVE_ANON, false);
            }
            let before = k.ev.get(Vm::Pgdeactivate);
            let mut ctx = Ctx::default();
            start_balance(&mut k, 0, 0, ZoneType::Normal as usize);
            balance_priority(&mut k, &mut ctx, 0);
            let deactivated = k.ev.get(Vm::Pgdeactivate) - before;
            let inactive = k.zones[z].lru_pages[LRU_INACTIVE_ANON];
            assert_eq!(inactive, deactivated, "{profile}: Normal is the only zone with anon");
            assert_eq!(inactive > 0, ages, "{profile}, swap {with_swap}: {inactive} deactivated");
        }
    }

    #[test]
    fn wakeup_2636_does_not_raise_the_order_for_a_zone_fine_at_low() {
        let mut k = kernel(as_2636);
        wakeup_kswapd(&mut k, 1, 3, ZoneType::Normal as usize);
        assert_eq!(k.nodes[0].kswapd.max_order, 0);
        shred(&mut k, 2);
        wakeup_kswapd(&mut k, 2, 3, ZoneType::Normal as usize);
        assert_eq!(k.nodes[0].kswapd.max_order, 3);
        // 2.6.38 records the order even for a zone that is fine (the LOW check only gates the wake).
        let mut k = kernel(kswapd_series);
        wakeup_kswapd(&mut k, 1, 3, ZoneType::Normal as usize);
        assert_eq!(k.nodes[0].kswapd.max_order, 3);
    }
}

#[cfg(test)]
#[path = "slab_pressure_tests.rs"]
mod slab_pressure_tests;

#[cfg(test)]
#[path = "free_page_list_tests.rs"]
mod free_page_list_tests;

#[cfg(test)]
#[path = "shrink_page_list_tests.rs"]
mod shrink_page_list_tests;

#[cfg(test)]
#[path = "lru_add_pvec_tests.rs"]
mod lru_add_pvec_tests;
