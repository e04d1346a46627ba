//! The 2.6.26 / 2.6.27 reclaim engine: one active and one inactive list per zone, anonymous and
//! file pages mixed (the split LRU and the unevictable list came in 2.6.28).
//!
//! List slots: the zone's `lruvec` holds the inactive list in `LRU_INACTIVE_FILE` and the active
//! list in `LRU_ACTIVE_FILE`, whatever the page's type; the anon slots stay empty. Mlocked pages
//! stay on these lists (no PG_mlocked in this era): `page_referenced` counts a VM_LOCKED mapping
//! as a reference and `try_to_unmap` fails on one, so reclaim keeps activating them.
//!
//! What runs: `shrink_zone` with `zone->nr_scan_active/nr_scan_inactive` accumulated from
//! `size >> priority` (+1) and batched to SWAP_CLUSTER_MAX; `shrink_active_list`, which moves
//! mapped pages to the inactive list only when `calc_reclaim_mapped` says so (`swap_tendency =
//! mapped_ratio / 2 + distress + swappiness` plus the active/inactive imbalance term, `distress
//! = 100 >> min(prev_priority, priority)`); `shrink_inactive_list` → `shrink_page_list`; direct
//! reclaim's priority loop with `all_unreclaimable`, `congestion_wait` and `prev_priority`; and
//! kswapd — `wakeup_kswapd`, `balance_pgdat` with `temp_priority`, the SWAP_CLUSTER_MAX break
//! and `goto loop_again` until every zone meets its high watermark, then straight to sleep (no
//! HZ/10 nap before 2.6.32).
//!
//! The engine's per-zone and per-node state is `Zone26State` (`Kernel.zone26`), indexed by zone
//! id and node id.

use super::{add_to_list, del_page_from_lru, is_swapbacked, pageout, remove_mapping_and_free, KswapdAction};
use super::{LruScope, ReclaimEngine};
use super::{DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmzone::NR_LRU_LISTS;
use crate::mmzone::{KswapdPhase, LRU_ACTIVE_FILE, LRU_INACTIVE_FILE, LRU_UNEVICTABLE};
use crate::page_alloc::Gfp;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

/// HZ/10: `congestion_wait(WRITE, HZ/10)` in direct reclaim and balance_pgdat.
pub const HZ_10_NS: u64 = 100_000_000;
const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;
/// The inactive and active lists of a zone (see the module comment).
pub const LRU_INACTIVE: usize = LRU_INACTIVE_FILE;
pub const LRU_ACTIVE: usize = LRU_ACTIVE_FILE;

/// The `struct zone` fields this era's reclaim keeps.
#[derive(Clone, Debug)]
pub struct ZoneLocals {
    /// `zone->prev_priority`: the priority at which reclaim last got this zone going again;
    /// `distress` is computed from it.
    pub prev_priority: i32,
    /// `zone->nr_scan_active` / `nr_scan_inactive`: scan credit below SWAP_CLUSTER_MAX carried to
    /// the next `shrink_zone`.
    pub nr_scan_active: u64,
    pub nr_scan_inactive: u64,
    /// `zone->pages_scanned`: LRU pages scanned since a page was last freed into the zone.
    pub pages_scanned: u64,
    /// ZONE_ALL_UNRECLAIMABLE.
    pub all_unreclaimable: bool,
}

impl Default for ZoneLocals {
    fn default() -> Self {
        ZoneLocals {
            prev_priority: DEF_PRIORITY,
            nr_scan_active: 0,
            nr_scan_inactive: 0,
            pages_scanned: 0,
            all_unreclaimable: false,
        }
    }
}

/// kswapd()'s and balance_pgdat()'s locals for one node, kept between scheduler quanta.
#[derive(Clone, Debug, Default)]
pub struct KswapdLocals {
    /// kswapd()'s `order`.
    order: u32,
    /// A wakeup arrived while kswapd slept on its waitqueue.
    woken: bool,
    // balance_pgdat:
    sc_order: u32,
    priority: i32,
    nr_reclaimed: u64,
    total_scanned: u64,
    may_writepage: bool,
    all_zones_ok: bool,
    /// `temp_priority[]` per zone of the node (index into the node's zone list).
    temp_priority: [i32; 8],
    /// The priority loop broke after a congestion_wait: `out:` runs on the next step.
    pending_out: bool,
}

/// The engine's state: per zone id, per node id.
#[derive(Clone, Debug, Default)]
pub struct Zone26State {
    pub zones: Vec<ZoneLocals>,
    pub nodes: Vec<KswapdLocals>,
}

impl Zone26State {
    pub fn new(nzones: usize, nnodes: usize) -> Self {
        Zone26State { zones: vec![ZoneLocals::default(); nzones], nodes: vec![KswapdLocals::default(); nnodes] }
    }
}

/// `struct scan_control`.
#[derive(Clone, Debug, Default)]
struct Sc {
    nr_scanned: u64,
    order: u32,
    may_writepage: bool,
    may_swap: bool,
    is_kswapd: bool,
    /// `ctx.sleep_ns` when this reclaim began: more means a write it submitted found the request
    /// queue full (`get_request_wait`). Its own congestion_waits are added only when it ends.
    expected_sleep: u64,
}

/// Has this reclaimer blocked submitting a write to a full queue? The kernel sleeps inside
/// `get_request_wait` and carries on with the same pass when a request frees; vmlab cannot let
/// time pass inside a piece of work, so the pass ends here (what it had left to scan stays in
/// the zone's scan credit) and the task sleeps. Without this, one direct reclaim that finds only
/// dirty anon pages descends to priority 0 in the same instant and queues the whole inactive
/// list for swap-out at once.
#[inline]
fn blocked(ctx: &Ctx, sc: &Sc) -> bool {
    ctx.sleep_ns > sc.expected_sleep
}

#[inline]
fn wmark_ok(k: &Kernel, zid: usize, order: u32, mark: u64, classzone: usize) -> bool {
    k.zone_watermark_ok(zid, order, mark, classzone, false, false)
}

/// NR_ACTIVE + NR_INACTIVE of a zone.
#[inline]
fn zone_lru_pages(k: &Kernel, zid: usize) -> u64 {
    let z = &k.zones[zid];
    z.lru_pages[LRU_ACTIVE] + z.lru_pages[LRU_INACTIVE]
}

/// The node's zone ids, lowest first, without allocating.
fn node_zones(k: &Kernel, node: usize) -> ([usize; 8], usize) {
    let mut out = [0usize; 8];
    let zs = &k.nodes[node].zones;
    let n = zs.len().min(8);
    out[..n].copy_from_slice(&zs[..n]);
    (out, n)
}

// ---------------------------------------------------------------------------------------------
// LRU entry and access

/// `lru_cache_add` / `lru_cache_add_active`: anonymous pages (`do_anonymous_page`, the COW copy,
/// `read_swap_cache_async`) start on the active list, page cache (`add_to_page_cache_lru`,
/// shmem included) on the inactive list.
pub fn lru_add(k: &mut Kernel, p: Pfn) {
    if k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED) {
        // Only with `reclaim.unevictable_lru = true` set on this era: cull it as 2.6.28 would.
        k.fr.set(p, pg::UNEVICTABLE);
        add_to_list(k, p, LRU_UNEVICTABLE, false);
        return;
    }
    if k.fr.has(p, pg::ANON) || k.fr.has(p, pg::SWAPCACHE) {
        k.fr.set(p, pg::ACTIVE);
    }
    let l = if k.fr.has(p, pg::ACTIVE) { LRU_ACTIVE } else { LRU_INACTIVE };
    add_to_list(k, p, l, false);
}

/// `mark_page_accessed`: inactive,referenced → `activate_page`; otherwise set PG_referenced.
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    let f = k.fr.flags[p as usize];
    if f & (pg::ACTIVE | pg::UNEVICTABLE) == 0 && f & pg::REFERENCED != 0 && f & pg::LRU != 0 {
        del_page_from_lru(k, p);
        k.fr.set(p, pg::ACTIVE);
        add_to_list(k, p, LRU_ACTIVE, false);
        k.ev.inc(Vm::Pgactivate);
        k.fr.clear(p, pg::REFERENCED);
    } else if f & pg::REFERENCED == 0 {
        k.fr.set(p, pg::REFERENCED);
    }
}

/// `filemap_fault` ends with `mark_page_accessed` until 2.6.28 ("mm: don't mark_page_accessed
/// in fault path", Nick Piggin); `shmem_fault` does not.
pub fn nopage_accessed(k: &mut Kernel, p: Pfn) {
    if !is_swapbacked(k, p) {
        mark_page_accessed(k, p);
    }
}

/// A page came back to zone `zid`'s free lists: `free_pages_bulk` / `free_one_page` clear
/// ZONE_ALL_UNRECLAIMABLE and `pages_scanned`.
#[inline]
pub fn zone_freed(k: &mut Kernel, zid: usize) {
    if let Some(z) = k.reclaim.zone26_mut().zones.get_mut(zid) {
        z.all_unreclaimable = false;
        z.pages_scanned = 0;
    }
}

// ---------------------------------------------------------------------------------------------
// The mapped-reclaim decision

/// `vm_total_pages` (`nr_free_pagecache_pages()` at boot, before the watermarks exist): the
/// pages the buddy allocator manages.
fn vm_total_pages(k: &Kernel) -> u64 {
    k.zones.iter().map(|z| z.managed).sum::<u64>().max(1)
}

/// `zone_is_near_oom`: scanned three times the zone's LRU since anything was freed into it.
pub fn zone_is_near_oom(k: &Kernel, zid: usize) -> bool {
    k.reclaim.zone26().zones[zid].pages_scanned >= zone_lru_pages(k, zid) * 3
}

/// `calc_reclaim_mapped`'s `swap_tendency`, imbalance feedback included.
pub fn swap_tendency(k: &Kernel, zid: usize, priority: i32) -> u64 {
    let swappiness = k.profile.tunables.swappiness;
    let prev = k.reclaim.zone26().zones[zid].prev_priority;
    let distress = 100u64 >> prev.min(priority).clamp(0, 63);
    // NR_FILE_MAPPED + NR_ANON_PAGES (vmlab's anon gauge also counts unmapped swap-cache anon).
    let mapped_ratio = (k.g.mapped + k.g.anon) * 100 / vm_total_pages(k);
    let mut tendency = mapped_ratio / 2 + distress + swappiness;
    // A long active list relative to the inactive one makes unmapping easier, scaled down by a
    // low swappiness and by how little memory is mapped.
    let z = &k.zones[zid];
    let mut imbalance = z.lru_pages[LRU_ACTIVE] / (z.lru_pages[LRU_INACTIVE] + 1);
    imbalance = imbalance * (swappiness + 1) / 100;
    imbalance = imbalance * mapped_ratio / 100;
    tendency += imbalance;
    tendency
}

/// `calc_reclaim_mapped`: may `shrink_active_list` move mapped pages to the inactive list?
pub fn calc_reclaim_mapped(k: &Kernel, zid: usize, priority: i32) -> bool {
    zone_is_near_oom(k, zid) || swap_tendency(k, zid, priority) >= 100
}

/// `page_referenced`: PG_referenced (test-and-cleared) plus every young PTE (test-and-cleared);
/// a VM_LOCKED mapping counts as a reference (`page_referenced_one`).
fn page_referenced(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> u32 {
    let mut referenced = k.fr.test_clear(p, pg::REFERENCED) as u32;
    if k.fr.mapcount[p as usize] > 0 {
        let (young, locked) = k.folio_referenced(ctx, p);
        referenced += young + locked as u32;
    }
    referenced
}

// ---------------------------------------------------------------------------------------------
// Isolation and shrinking

#[derive(Clone, Copy, PartialEq, Eq)]
enum Isolate {
    Inactive,
    Active,
    Both,
}

/// `__isolate_lru_page`'s mode test.
#[inline]
fn isolatable(k: &Kernel, p: Pfn, mode: Isolate) -> bool {
    let f = k.fr.flags[p as usize];
    if f & pg::LRU == 0 || f & pg::UNEVICTABLE != 0 {
        return false;
    }
    mode == Isolate::Both || (f & pg::ACTIVE != 0) == (mode == Isolate::Active)
}

fn take(k: &mut Kernel, p: Pfn, out: &mut Vec<Pfn>) {
    del_page_from_lru(k, p);
    k.g.isolated += 1;
    out.push(p);
}

/// `isolate_lru_pages`: up to `nr` pages from the tail of list `l` of zone `zid`; for order > 0
/// also the pages of each one's aligned 2^order block that `mode` allows (lumpy reclaim's
/// neighbours, counted as scanned). Returns pages scanned.
#[allow(clippy::too_many_arguments)]
fn isolate_lru_pages(
    k: &mut Kernel,
    ctx: &mut Ctx,
    zid: usize,
    l: usize,
    nr: u64,
    order: u32,
    mode: Isolate,
    out: &mut Vec<Pfn>,
) -> u64 {
    out.clear();
    let total = k.fr.len() as u32;
    let mut scan = 0u64;
    while scan < nr {
        let p = k.zones[zid].lruvec.lists[l].tail;
        if p == NIL {
            break;
        }
        take(k, p, out);
        scan += 1;
        if order == 0 {
            continue;
        }
        // The block aligns on the memory map's pfn (`page_pfn & ~((1 << order) - 1)`).
        let base = p - (k.zones[zid].phys(p) & ((1u32 << order) - 1));
        for cur in base..base.saturating_add(1 << order).min(total) {
            if cur != p && k.zones[zid].spans(cur) && isolatable(k, cur, mode) {
                take(k, cur, out);
                scan += 1;
            }
        }
    }
    k.charge(ctx, KFunc::ShrinkInactiveList, scan * k.cost.lru_scan);
    k.events += scan;
    scan
}

/// Put an isolated page back at the head of the list its PG_active says.
fn putback(k: &mut Kernel, p: Pfn) {
    k.g.isolated -= 1;
    if k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED) {
        k.fr.clear(p, pg::ACTIVE);
        k.fr.set(p, pg::UNEVICTABLE);
        add_to_list(k, p, LRU_UNEVICTABLE, false);
        return;
    }
    let l = if k.fr.has(p, pg::ACTIVE) { LRU_ACTIVE } else { LRU_INACTIVE };
    add_to_list(k, p, l, false);
}

/// `page_mapping_inuse`: mapped, in the swap cache, or its file is mmapped by someone.
fn page_mapping_inuse(k: &Kernel, p: Pfn) -> bool {
    if k.fr.mapcount[p as usize] > 0 || k.fr.has(p, pg::SWAPCACHE) {
        return true;
    }
    if k.fr.has(p, pg::ANON) {
        return false;
    }
    k.files.get(k.fr.mapping[p as usize] as usize).is_some_and(|f| !f.i_mmap.is_empty())
}

/// `shrink_page_list` over isolated pages: free what can be freed, start writeback of dirty
/// pages, put the rest back. Returns pages reclaimed.
fn shrink_page_list(k: &mut Kernel, ctx: &mut Ctx, pages: &[Pfn], sc: &mut Sc) -> u64 {
    let mut reclaimed = 0;
    let mut activated = 0;
    let lumpy = sc.order > PAGE_ALLOC_COSTLY_ORDER;
    for &p in pages {
        k.charge(ctx, KFunc::ShrinkFolioList, k.cost.lru_scan);
        let f = k.fr.flags[p as usize];
        // trylock_page fails on a page under read I/O.
        if f & pg::LOCKED != 0 {
            putback(k, p);
            continue;
        }
        sc.nr_scanned += 1;
        if f & pg::MLOCKED != 0 && k.profile.unevictable_lru {
            k.ev.inc(Vm::UnevictablePgsCulled);
            putback(k, p);
            continue;
        }
        let mapped = k.fr.mapcount[p as usize] > 0;
        if !sc.may_swap && mapped {
            putback(k, p);
            continue;
        }
        // Mapped and swap-cache pages double the slab pressure.
        if mapped || f & pg::SWAPCACHE != 0 {
            sc.nr_scanned += 1;
        }
        if f & pg::WRITEBACK != 0 {
            putback(k, p);
            continue;
        }
        let referenced = page_referenced(k, ctx, p) > 0;
        let mut activate = !lumpy && referenced && page_mapping_inuse(k, p);
        if !activate && k.fr.has(p, pg::ANON) && !k.fr.has(p, pg::SWAPCACHE) {
            activate = !crate::swap_state::add_to_swap(k, ctx, p);
        }
        // try_to_unmap fails (SWAP_FAIL) on a VM_LOCKED mapping.
        if !activate && k.fr.mapcount[p as usize] > 0 && !k.try_to_unmap(ctx, p) {
            activate = true;
        }
        if activate {
            k.fr.set(p, pg::ACTIVE);
            activated += 1;
            putback(k, p);
            continue;
        }
        if k.fr.has(p, pg::DIRTY) {
            if (!lumpy && referenced) || !sc.may_writepage {
                putback(k, p);
                continue;
            }
            // pageout(): PG_reclaim so end_page_writeback rotates it to the inactive tail.
            k.fr.set(p, pg::RECLAIM);
            if pageout(k, ctx, p) {
                k.ev.inc(Vm::NrVmscanWrite);
            }
            putback(k, p);
            continue;
        }
        // __remove_mapping: the radix-tree delete costs about what the insert did.
        k.charge(ctx, KFunc::ShrinkFolioList, k.cost.pagecache_add);
        k.g.isolated -= 1;
        remove_mapping_and_free(k, ctx, p, crate::memcontrol::ROOT);
        reclaimed += 1;
        k.events += 1;
    }
    k.ev.add(Vm::Pgactivate, activated);
    reclaimed
}

/// `shrink_inactive_list`: one SWAP_CLUSTER_MAX batch from the inactive tail (whole blocks,
/// active pages too, for orders above PAGE_ALLOC_COSTLY_ORDER).
fn shrink_inactive_list(k: &mut Kernel, ctx: &mut Ctx, zid: usize, nr: u64, sc: &mut Sc) -> u64 {
    let mode = if sc.order > PAGE_ALLOC_COSTLY_ORDER { Isolate::Both } else { Isolate::Inactive };
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let scanned = isolate_lru_pages(k, ctx, zid, LRU_INACTIVE, nr, sc.order, mode, &mut buf);
    // clear_active_flags
    let mut nr_active = 0;
    for &p in &buf {
        if k.fr.test_clear(p, pg::ACTIVE) {
            nr_active += 1;
        }
    }
    k.ev.add(Vm::Pgdeactivate, nr_active);
    k.reclaim.zone26_mut().zones[zid].pages_scanned += scanned;
    k.ev.add(if sc.is_kswapd { Vm::PgscanKswapd } else { Vm::PgscanDirect }, scanned);
    super::count_zone_scan(k, zid, sc.is_kswapd, scanned);
    let reclaimed = shrink_page_list(k, ctx, &buf, sc);
    k.ev.add(if sc.is_kswapd { Vm::PgstealKswapd } else { Vm::PgstealDirect }, reclaimed);
    super::count_zone_steal(k, zid, sc.is_kswapd, reclaimed);
    k.isolate_buf = buf;
    reclaimed
}

/// `shrink_active_list`: move active pages to the inactive list. Unmapped pages go unless
/// PG_referenced was set; mapped pages stay unless `reclaim_mapped`, and then only if no PTE
/// was young (and, without swap, only file pages).
fn shrink_active_list(k: &mut Kernel, ctx: &mut Ctx, zid: usize, nr: u64, sc: &Sc, priority: i32) {
    let reclaim_mapped = sc.may_swap && calc_reclaim_mapped(k, zid, priority);
    let noswap = crate::swap_state::total_swap_pages(k) == 0;
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let scanned = isolate_lru_pages(k, ctx, zid, LRU_ACTIVE, nr, sc.order, Isolate::Active, &mut buf);
    k.reclaim.zone26_mut().zones[zid].pages_scanned += scanned;
    k.ev.add(Vm::Pgrefill, scanned);
    k.zones[zid].ev.pgrefill += scanned;
    let mut deact = 0;
    for &p in &buf {
        let keep = if k.fr.mapcount[p as usize] > 0 {
            !reclaim_mapped || (noswap && k.fr.has(p, pg::ANON)) || page_referenced(k, ctx, p) > 0
        } else {
            k.fr.test_clear(p, pg::REFERENCED)
        };
        if !keep {
            k.fr.clear(p, pg::ACTIVE);
            deact += 1;
        }
        putback(k, p);
    }
    k.ev.add(Vm::Pgdeactivate, deact);
    k.charge(ctx, KFunc::ShrinkActiveList, scanned * k.cost.lru_scan);
    k.isolate_buf = buf;
}

/// `shrink_zone`: add this priority's share of each list to the zone's scan credit, then work it
/// off in SWAP_CLUSTER_MAX batches, active and inactive in turn. Returns pages reclaimed.
fn shrink_zone(k: &mut Kernel, ctx: &mut Ctx, zid: usize, sc: &mut Sc, priority: i32) -> u64 {
    let sh = priority.clamp(0, 63) as u32;
    let (active, inactive) = (k.zones[zid].lru_pages[LRU_ACTIVE], k.zones[zid].lru_pages[LRU_INACTIVE]);
    let z = &mut k.reclaim.zone26_mut().zones[zid];
    // "Add one to nr_to_scan just to make sure that the kernel will slowly sift through the
    // active list."
    z.nr_scan_active += (active >> sh) + 1;
    z.nr_scan_inactive += (inactive >> sh) + 1;
    let mut nr_active = z.nr_scan_active;
    let mut nr_inactive = z.nr_scan_inactive;
    if nr_inactive >= SWAP_CLUSTER_MAX {
        z.nr_scan_inactive = 0;
    } else {
        nr_inactive = 0;
    }
    if nr_active >= SWAP_CLUSTER_MAX {
        z.nr_scan_active = 0;
    } else {
        nr_active = 0;
    }
    let mut reclaimed = 0;
    while nr_active > 0 || nr_inactive > 0 {
        if nr_active > 0 {
            let n = nr_active.min(SWAP_CLUSTER_MAX);
            nr_active -= n;
            shrink_active_list(k, ctx, zid, n, sc, priority);
        }
        if nr_inactive > 0 {
            let n = nr_inactive.min(SWAP_CLUSTER_MAX);
            nr_inactive -= n;
            reclaimed += shrink_inactive_list(k, ctx, zid, n, sc);
        }
        if blocked(ctx, sc) {
            let z = &mut k.reclaim.zone26_mut().zones[zid];
            z.nr_scan_active += nr_active;
            z.nr_scan_inactive += nr_inactive;
            break;
        }
    }
    reclaimed
}

/// `note_zone_scanning_priority`.
#[inline]
fn note_zone_scanning_priority(k: &mut Kernel, zid: usize, priority: i32) {
    let z = &mut k.reclaim.zone26_mut().zones[zid];
    if priority < z.prev_priority {
        z.prev_priority = priority;
    }
}

// ---------------------------------------------------------------------------------------------
// Direct reclaim

/// `try_to_free_pages` → `do_try_to_free_pages`: shrink the zonelist's zones from priority 12 down
/// until SWAP_CLUSTER_MAX pages are back, waiting in congestion_wait below priority 10. Returns
/// what it reclaimed, 0 also when the zones were not all unreclaimable (2.6.26's `ret =
/// nr_reclaimed`, Nishanth Aravamudan's "smarter retry of costly-order allocations"), where
/// `__alloc_pages` goes for the OOM killer at once. vmlab's allocator keeps its shared count of
/// failed reclaims instead: here a direct reclaim runs as one piece of work, without the kswapd
/// pass and write completions that overlap it in the kernel and feed its inactive list, and a
/// single 0 would kill a task the kernel would not have killed.
pub fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, _classzone: usize) -> u64 {
    k.ev.inc(Vm::Allocstall);
    let mut sc = Sc { order, may_writepage: true, may_swap: true, expected_sleep: ctx.sleep_ns, ..Default::default() };
    let (zl, n) = k.zonelist(ctx.node, gfp);
    let lru_pages: u64 = zl[..n].iter().map(|&z| zone_lru_pages(k, z)).sum();
    // The filesystem's own slab allocations are GFP_NOFS: the dcache/icache shrinkers refuse.
    let fs = gfp.mt != crate::mmzone::Mt::Reclaimable;
    let mut total_scanned = 0;
    let mut nr_reclaimed = 0;
    let mut all_unreclaimable = true;
    let mut ret = 0;
    let mut final_priority = 0;
    let mut congestion_waits = 0;
    for priority in (0..=DEF_PRIORITY).rev() {
        sc.nr_scanned = 0;
        // shrink_zones
        all_unreclaimable = true;
        for &zid in &zl[..n] {
            if k.zones[zid].present == 0 {
                continue;
            }
            note_zone_scanning_priority(k, zid, priority);
            if k.reclaim.zone26_mut().zones[zid].all_unreclaimable && priority != DEF_PRIORITY {
                continue; // Let kswapd poll it.
            }
            all_unreclaimable = false;
            nr_reclaimed += shrink_zone(k, ctx, zid, &mut sc, priority);
            if blocked(ctx, &sc) {
                break;
            }
        }
        nr_reclaimed += crate::dcache::shrink_slab(k, ctx, sc.nr_scanned, lru_pages, fs);
        total_scanned += sc.nr_scanned;
        if nr_reclaimed >= SWAP_CLUSTER_MAX {
            ret = nr_reclaimed;
            final_priority = priority;
            break;
        }
        if blocked(ctx, &sc) {
            final_priority = priority;
            break;
        }
        if total_scanned > SWAP_CLUSTER_MAX + SWAP_CLUSTER_MAX / 2 {
            // wakeup_pdflush(laptop_mode ? 0 : total_scanned): background_writeout of that many.
            crate::page_writeback::queue_flusher_work(k, total_scanned);
            sc.may_writepage = true;
        }
        if sc.nr_scanned > 0 && priority < DEF_PRIORITY - 2 {
            // congestion_wait(WRITE, HZ/10): the task sleeps after this piece of work.
            congestion_waits += HZ_10_NS;
        }
    }
    ctx.sleep_ns += congestion_waits;
    if ret == 0 && !all_unreclaimable {
        ret = nr_reclaimed;
    }
    for &zid in &zl[..n] {
        k.reclaim.zone26_mut().zones[zid].prev_priority = final_priority;
    }
    ret
}

// ---------------------------------------------------------------------------------------------
// kswapd

/// What keeps 2.6.26's `balance_pgdat` going: the highest zone that fails its high watermark at
/// the order being balanced for (its `end_zone`).
pub fn kswapd_why(k: &Kernel, node: usize) -> crate::stats::explain::Reason {
    use crate::stats::explain::{Reason, Why};
    let order = k.reclaim.zone26().nodes.get(node).map_or(0, |l| l.sc_order);
    let (zs, n) = node_zones(k, node);
    for &zid in zs[..n].iter().rev() {
        if k.zones[zid].present == 0 || k.reclaim.zone26().zones[zid].all_unreclaimable {
            continue;
        }
        if !wmark_ok(k, zid, order, k.zones[zid].high_wmark(), 0) {
            return Reason::new(Why::BelowHigh, node, Some(zid), order);
        }
    }
    Reason::new(Why::Balanced, node, None, order)
}

/// `wakeup_kswapd` for zone `zid`: a zone fine at LOW for this order neither wakes kswapd nor
/// raises its order.
pub fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, _classzone: usize) {
    if k.zones[zid].present == 0 {
        return;
    }
    if wmark_ok(k, zid, order, k.zones[zid].low_wmark(), 0) {
        return;
    }
    let node = k.zones[zid].node;
    let ks = &mut k.nodes[node].kswapd;
    ks.max_order = ks.max_order.max(order);
    // waitqueue_active: only a sleeping kswapd is woken.
    if ks.phase != KswapdPhase::Sleeping {
        return;
    }
    let t = ks.task;
    k.reclaim.zone26_mut().nodes[node].woken = true;
    k.wakeups.push(t);
}

/// One step of kswapd: the top of kswapd()'s loop, or one priority pass of balance_pgdat.
pub fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    match k.nodes[node].kswapd.phase {
        KswapdPhase::Sleeping | KswapdPhase::Napping => {
            if !std::mem::take(&mut k.reclaim.zone26_mut().nodes[node].woken) {
                return KswapdAction::Sleep;
            }
            // After schedule(): `order = pgdat->kswapd_max_order` (left set: the next loop top
            // reads and clears it).
            let ks = &mut k.nodes[node].kswapd;
            ks.sleeping = false;
            ks.napping = false;
            let order = ks.max_order;
            k.reclaim.zone26_mut().nodes[node].order = order;
            start_balance(k, node, order);
            KswapdAction::Continue
        }
        KswapdPhase::TrySleep => {
            // The loop top: a larger order asked for meanwhile means balance again at once.
            k.charge(ctx, KFunc::BalancePgdat, k.cost.syscall);
            let new_order = std::mem::take(&mut k.nodes[node].kswapd.max_order);
            let l = &mut k.reclaim.zone26_mut().nodes[node];
            if l.order < new_order {
                l.order = new_order;
                start_balance(k, node, new_order);
                return KswapdAction::Continue;
            }
            let ks = &mut k.nodes[node].kswapd;
            ks.phase = KswapdPhase::Sleeping;
            ks.sleeping = true;
            KswapdAction::Sleep
        }
        KswapdPhase::Balancing => {
            k.charge(ctx, KFunc::BalancePgdat, k.cost.syscall);
            if std::mem::take(&mut k.reclaim.zone26_mut().nodes[node].pending_out) {
                return balance_out(k, node);
            }
            balance_priority(k, ctx, node)
        }
    }
}

/// balance_pgdat's entry.
fn start_balance(k: &mut Kernel, node: usize, order: u32) {
    let ks = &mut k.nodes[node].kswapd;
    ks.phase = KswapdPhase::Balancing;
    ks.sleeping = false;
    ks.bal_order = order;
    k.reclaim.zone26_mut().nodes[node].sc_order = order;
    loop_again(k, node);
}

/// `loop_again:`.
fn loop_again(k: &mut Kernel, node: usize) {
    let l = &mut k.reclaim.zone26_mut().nodes[node];
    l.total_scanned = 0;
    l.nr_reclaimed = 0;
    l.may_writepage = true;
    l.priority = DEF_PRIORITY;
    l.all_zones_ok = false;
    l.pending_out = false;
    l.temp_priority = [DEF_PRIORITY; 8];
    k.ev.inc(Vm::Pageoutrun);
}

/// One `for (priority = DEF_PRIORITY; priority >= 0; priority--)` iteration of balance_pgdat.
fn balance_priority(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    let (zs, n) = node_zones(k, node);
    let (order, priority) = (k.reclaim.zone26_mut().nodes[node].sc_order, k.reclaim.zone26_mut().nodes[node].priority);
    let mut sc = Sc {
        order,
        may_writepage: k.reclaim.zone26_mut().nodes[node].may_writepage,
        may_swap: true,
        is_kswapd: true,
        expected_sleep: ctx.sleep_ns,
        ..Default::default()
    };
    let skip = |k: &Kernel, zid: usize| {
        k.zones[zid].present == 0 || (k.reclaim.zone26().zones[zid].all_unreclaimable && priority != DEF_PRIORITY)
    };
    // The highest zone that fails `order` at HIGH is where balancing must reach.
    let mut end: Option<usize> = None;
    for (i, &zid) in zs[..n].iter().enumerate().rev() {
        if skip(k, zid) {
            continue;
        }
        if !wmark_ok(k, zid, order, k.zones[zid].high_wmark(), 0) {
            end = Some(i);
            break;
        }
    }
    let Some(end_i) = end else {
        k.reclaim.zone26_mut().nodes[node].all_zones_ok = true;
        return balance_out(k, node);
    };
    let end_idx = k.zones[zs[end_i]].kind as usize;
    let lru_pages: u64 = zs[..=end_i].iter().map(|&z| zone_lru_pages(k, z)).sum();
    let mut all_zones_ok = true;
    let mut nr_reclaimed = k.reclaim.zone26_mut().nodes[node].nr_reclaimed;
    let mut total_scanned = k.reclaim.zone26_mut().nodes[node].total_scanned;
    for (i, &zid) in zs[..=end_i].iter().enumerate() {
        if skip(k, zid) {
            continue;
        }
        if !wmark_ok(k, zid, order, k.zones[zid].high_wmark(), end_idx) {
            all_zones_ok = false;
        }
        k.reclaim.zone26_mut().nodes[node].temp_priority[i] = priority;
        sc.nr_scanned = 0;
        note_zone_scanning_priority(k, zid, priority);
        // Equal pressure on every zone, unless one has way too many pages free already.
        if !wmark_ok(k, zid, order, 8 * k.zones[zid].high_wmark(), end_idx) {
            nr_reclaimed += shrink_zone(k, ctx, zid, &mut sc, priority);
        }
        let nr_slab = crate::dcache::shrink_slab(k, ctx, sc.nr_scanned, lru_pages, true);
        nr_reclaimed += nr_slab;
        total_scanned += sc.nr_scanned;
        if k.reclaim.zone26_mut().zones[zid].all_unreclaimable {
            continue;
        }
        if nr_slab == 0 && k.reclaim.zone26_mut().zones[zid].pages_scanned >= zone_lru_pages(k, zid) * 6 {
            k.reclaim.zone26_mut().zones[zid].all_unreclaimable = true;
        }
        if total_scanned > SWAP_CLUSTER_MAX * 2 && total_scanned > nr_reclaimed + nr_reclaimed / 2 {
            sc.may_writepage = true;
        }
    }
    let l = &mut k.reclaim.zone26_mut().nodes[node];
    l.nr_reclaimed = nr_reclaimed;
    l.total_scanned = total_scanned;
    l.may_writepage = sc.may_writepage;
    l.all_zones_ok = all_zones_ok;
    if all_zones_ok {
        return balance_out(k, node);
    }
    // "kswapd is getting into trouble. Take a nap, then take another pass across the zones."
    let nap = total_scanned > 0 && priority < DEF_PRIORITY - 2;
    // "so kswapd doesn't build up large priorities ... when it is freeing in parallel with
    // allocators": a pass that got SWAP_CLUSTER_MAX pages ends the priority loop.
    let done = nr_reclaimed >= SWAP_CLUSTER_MAX || priority == 0;
    if !done {
        l.priority -= 1;
    }
    match (nap, done) {
        (true, true) => {
            l.pending_out = true;
            KswapdAction::Nap(HZ_10_NS)
        }
        (true, false) => KswapdAction::Nap(HZ_10_NS),
        (false, true) => balance_out(k, node),
        (false, false) => KswapdAction::Continue,
    }
}

/// balance_pgdat's `out:`: every zone's prev_priority becomes the priority it was last scanned
/// at in this run; unless all zones are fine, `cond_resched()` and `goto loop_again` (2.6.26 has
/// no fallback to order 0 for a fragmented node).
fn balance_out(k: &mut Kernel, node: usize) -> KswapdAction {
    let (zs, n) = node_zones(k, node);
    let tp = k.reclaim.zone26_mut().nodes[node].temp_priority;
    for (i, &zid) in zs[..n].iter().enumerate() {
        k.reclaim.zone26_mut().zones[zid].prev_priority = tp[i];
    }
    if !k.reclaim.zone26_mut().nodes[node].all_zones_ok {
        loop_again(k, node);
        // cond_resched(): allocators on the other CPUs run meanwhile.
        return KswapdAction::Yield;
    }
    let ks = &mut k.nodes[node].kswapd;
    ks.reclaim_order = k.reclaim.zone26_mut().nodes[node].sc_order;
    ks.phase = KswapdPhase::TrySleep;
    KswapdAction::Continue
}

impl ReclaimEngine for Zone26State {
    fn lru_scope(_k: &Kernel, zid: usize) -> LruScope {
        LruScope::Zone(zid)
    }
    fn lru_names() -> [Option<&'static str>; NR_LRU_LISTS] {
        let mut n = [None; NR_LRU_LISTS];
        n[LRU_INACTIVE_FILE] = Some("Inactive");
        n[LRU_ACTIVE_FILE] = Some("Active");
        n[LRU_UNEVICTABLE] = Some("Unevictable");
        n
    }
    /// One inactive list for both types.
    fn inactive_list(_anon: bool) -> usize {
        LRU_INACTIVE_FILE
    }
    fn lru_add(k: &mut Kernel, p: Pfn) {
        lru_add(k, p)
    }
    fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
        mark_page_accessed(k, p)
    }
    fn nopage_accessed(k: &mut Kernel, p: Pfn) {
        nopage_accessed(k, p)
    }
    fn pages_freed(k: &mut Kernel, zid: usize) {
        zone_freed(k, zid)
    }
    fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
        wakeup_kswapd(k, zid, order, classzone)
    }
    /// 2.6.x calls `wakeup_kswapd` for every zone of the zonelist.
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
    use crate::mmzone::{Mt, ZoneType};

    /// 16 MiB DMA, 96 MiB DMA32, 32 MiB Normal.
    fn kernel() -> Kernel {
        let cfg = MachineConfig::of_zones(
            "x86_64",
            1,
            &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 24576), (ZoneType::Normal, 8192)],
        );
        Kernel::new(crate::profiles::first_with_engine(crate::profiles::Engine::Zone26), cfg, 1).expect("kernel")
    }

    /// Fill zone `zid` with clean, unmapped page-cache pages of one file until it has `target`
    /// free pages or fewer; returns the pages.
    fn fill_with_cache(k: &mut Kernel, zid: usize, target: u64) -> Vec<Pfn> {
        let mut ctx = Ctx::default();
        if k.disks.is_empty() {
            k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
        }
        let file = k.file_create("cache", 1 << 30, 0, false);
        let mut got = Vec::new();
        while k.zones[zid].free_pages > target {
            let Some(p) = k.rmqueue(zid, 0, Mt::Movable) else { break };
            k.fr.set(p, pg::UPTODATE);
            k.add_to_page_cache(&mut ctx, file, got.len() as u64, p);
            got.push(p);
        }
        got
    }

    #[test]
    fn swappiness_60_with_little_mapped_does_not_reclaim_mapped() {
        let mut k = kernel();
        let z = 2;
        // An empty zone is "near OOM" (0 scanned >= 3 x 0 pages): give it a small LRU.
        assert!(calc_reclaim_mapped(&k, z, DEF_PRIORITY));
        let target = k.zones[z].free_pages - 64;
        fill_with_cache(&mut k, z, target);
        assert_eq!(k.reclaim.zone26_mut().zones[z].prev_priority, DEF_PRIORITY);
        // Nothing mapped, no distress at DEF_PRIORITY: 0/2 + (100 >> 12) + 60.
        assert_eq!(swap_tendency(&k, z, DEF_PRIORITY), 60);
        assert!(!calc_reclaim_mapped(&k, z, DEF_PRIORITY));
        // Priority 2 still gives only 25 of distress.
        assert_eq!(swap_tendency(&k, z, 2), 85);
        assert!(!calc_reclaim_mapped(&k, z, 2));
    }

    #[test]
    fn distress_at_low_priority_reclaims_mapped() {
        let mut k = kernel();
        let z = 2;
        let target = k.zones[z].free_pages - 64;
        fill_with_cache(&mut k, z, target);
        // The scanning priority itself: 100 >> 1 = 50 → 110.
        assert_eq!(swap_tendency(&k, z, 1), 110);
        assert!(calc_reclaim_mapped(&k, z, 1));
        // Or a zone whose last reclaim needed priority 0, scanned now at DEF_PRIORITY.
        k.reclaim.zone26_mut().zones[z].prev_priority = 0;
        assert_eq!(swap_tendency(&k, z, DEF_PRIORITY), 160);
        assert!(calc_reclaim_mapped(&k, z, DEF_PRIORITY));
        // Swappiness 0 with nothing mapped: only priority 0's full distress reaches 100.
        k.profile.tunables.swappiness = 0;
        k.reclaim.zone26_mut().zones[z].prev_priority = DEF_PRIORITY;
        assert_eq!(swap_tendency(&k, z, 0), 100);
        assert!(calc_reclaim_mapped(&k, z, 0));
        assert!(!calc_reclaim_mapped(&k, z, 1), "50 of distress and nothing mapped");
    }

    #[test]
    fn much_mapped_memory_reclaims_mapped_without_distress() {
        let mut k = kernel();
        let z = 2;
        let target = k.zones[z].free_pages - 64;
        fill_with_cache(&mut k, z, target);
        // 90 % of memory mapped: 45 + 0 + 60 = 105.
        k.g.anon = vm_total_pages(&k).div_ceil(10) * 9;
        assert_eq!(swap_tendency(&k, z, DEF_PRIORITY), 105);
        assert!(calc_reclaim_mapped(&k, z, DEF_PRIORITY));
        // And a zone scanned three times over is near OOM whatever the tendency.
        k.g.anon = 0;
        assert!(!calc_reclaim_mapped(&k, z, DEF_PRIORITY));
        k.reclaim.zone26_mut().zones[z].pages_scanned = 3 * 64 - 1;
        assert!(!zone_is_near_oom(&k, z));
        k.reclaim.zone26_mut().zones[z].pages_scanned = 3 * 64;
        assert!(zone_is_near_oom(&k, z), "64 LRU pages scanned three times over");
        assert!(calc_reclaim_mapped(&k, z, DEF_PRIORITY));
    }

    #[test]
    fn active_list_keeps_referenced_unmapped_pages_and_deactivates_the_rest() {
        let mut k = kernel();
        let z = 2;
        let target = k.zones[z].free_pages - 64;
        let pages = fill_with_cache(&mut k, z, target);
        assert_eq!(k.zones[z].lru_pages[LRU_INACTIVE], 64, "page cache starts inactive");
        // Two accesses activate; one more sets PG_referenced on the active page.
        for &p in &pages[..32] {
            mark_page_accessed(&mut k, p);
            mark_page_accessed(&mut k, p);
        }
        assert_eq!(k.zones[z].lru_pages[LRU_ACTIVE], 32);
        for &p in &pages[..8] {
            mark_page_accessed(&mut k, p);
        }
        let mut ctx = Ctx::default();
        let sc = Sc { may_swap: true, ..Default::default() };
        shrink_active_list(&mut k, &mut ctx, z, 32, &sc, DEF_PRIORITY);
        assert_eq!(k.zones[z].lru_pages[LRU_ACTIVE], 8, "the referenced ones stay");
        assert_eq!(k.zones[z].lru_pages[LRU_INACTIVE], 56);
        assert!(pages[..8].iter().all(|&p| k.fr.has(p, pg::ACTIVE) && !k.fr.has(p, pg::REFERENCED)));
        assert_eq!(k.g.isolated, 0);
    }

    #[test]
    fn kswapd_balances_a_zone_below_its_high_watermark() {
        let mut k = kernel();
        let z = 2;
        let low = k.zones[z].low_wmark();
        let high = k.zones[z].high_wmark();
        let pages = fill_with_cache(&mut k, z, low);
        assert!(!pages.is_empty());
        assert!(!wmark_ok(&k, z, 0, high, 0));
        // Sleeping kswapd, zone below LOW: the wakeup takes.
        wakeup_kswapd(&mut k, z, 0, ZoneType::Normal as usize);
        assert!(k.reclaim.zone26_mut().nodes[0].woken);
        let mut ctx = Ctx::default();
        let mut steps = 0;
        loop {
            let a = kswapd_step(&mut k, &mut ctx, 0);
            steps += 1;
            if a == KswapdAction::Sleep {
                break;
            }
            assert!(steps < 1000, "kswapd never went back to sleep");
        }
        k.drain_all_pages();
        assert!(wmark_ok(&k, z, 0, high, 0), "Normal balanced at its high watermark");
        assert!(k.ev.get(Vm::PgstealKswapd) > 0);
        assert!(k.ev.get(Vm::Pageoutrun) >= 1);
        assert_eq!(k.nodes[0].kswapd.phase, KswapdPhase::Sleeping);
        assert_eq!(k.g.isolated, 0);
        k.check_frames().expect("consistent free lists");
        for l in [LRU_INACTIVE, LRU_ACTIVE] {
            assert_eq!(k.zones[z].lruvec.lists[l].len, k.zones[z].lru_pages[l], "list {l} count");
        }
        assert_eq!(k.zones[z].lru_pages[crate::mmzone::LRU_INACTIVE_ANON], 0, "the anon slots stay empty");
        // A zone above LOW does not wake it again.
        wakeup_kswapd(&mut k, z, 0, ZoneType::Normal as usize);
        assert!(!k.reclaim.zone26_mut().nodes[0].woken);
    }
}
