//! The linux-6.8 reclaim engine (classic LRU): node lruvecs with inactive/active anon/file and
//! the unevictable list; `get_scan_count` with swappiness and the reclaim cost model;
//! `shrink_lruvec` → `shrink_active_list` / `shrink_inactive_list` → `shrink_folio_list`; kswapd
//! with `balance_pgdat`, `pgdat_balanced`, `kswapd_failures` and the nap/sleep checks.

use super::{
    add_to_list, del_page_from_lru, is_swapbacked, lru_index, pageout, remove_mapping_and_free, KswapdAction,
    DEF_PRIORITY, SWAP_CLUSTER_MAX,
};
use super::{LruScope, ReclaimEngine, SPLIT_LRU_NAMES};
use crate::kernel::{Ctx, Kernel};
use crate::memcontrol::{self, MemcgEvent, ROOT};
use crate::mm_types::{pg, Pfn};
use crate::mmzone::Lruvec;
use crate::mmzone::NR_LRU_LISTS;
use crate::mmzone::{
    KswapdPhase, ZoneType, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_UNEVICTABLE,
};
use crate::page_alloc::Gfp;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::trace::{ReclaimStat, Tracepoint};

const MAX_RECLAIM_RETRIES: u32 = 16;
/// kswapd's nap in kswapd_try_to_sleep: HZ/10.
pub const KSWAPD_NAP_NS: u64 = 100_000_000;

/// `struct scan_control`.
#[derive(Clone, Debug, Default)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub nr_reclaimed: u64,
    pub nr_scanned: u64,
    pub priority: i32,
    pub order: u32,
    /// Highest zone index (ZoneType as usize) whose pages may be reclaimed.
    pub reclaim_idx: usize,
    pub may_writepage: bool,
    pub may_swap: bool,
    pub may_unmap: bool,
    pub is_kswapd: bool,
    /// Pages met under writeback that reclaim had already marked (PG_reclaim): nr.immediate.
    pub nr_immediate: u64,
    /// `ctx.sleep_ns` when this reclaim began: more than that means a write this reclaimer
    /// submitted found the request queue full, and it is asleep in the block layer from then.
    pub sleep_at_entry: u64,
    /// `target_mem_cgroup`: the group limit reclaim works for (ROOT: global reclaim).
    pub target: u8,
    /// A group under its `memory.low` was passed over; reclaim it on the retry.
    pub memcg_low_reclaim: bool,
    memcg_low_skipped: bool,
    may_deactivate_anon: bool,
    may_deactivate_file: bool,
    /// An active list was left alone this cycle (`sc->skipped_deactivate`); a cycle that then
    /// reclaimed nothing is retried with both lists deactivated (`sc->force_deactivate`).
    skipped_deactivate: bool,
    force_deactivate: bool,
    file_is_tiny: bool,
    cache_trim_mode: bool,
    /// The target's reclaim costs when this node's cycle began (`sc->anon_cost`, `file_cost`).
    anon_cost: u64,
    file_cost: u64,
}

/// One lruvec of the 6.8 layout: node `node`'s lists of group `g` (the root's are the node's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lv {
    pub node: usize,
    pub g: u8,
}

impl Lv {
    fn root(node: usize) -> Lv {
        Lv { node, g: ROOT }
    }
}

fn lv(k: &Kernel, v: Lv) -> &Lruvec {
    crate::workingset::lruvec(k, v.node, v.g)
}

fn lv_mut(k: &mut Kernel, v: Lv) -> &mut Lruvec {
    crate::workingset::lruvec_mut(k, v.node, v.g)
}

/// List `l` of lruvec `v`, with the frames (split borrow).
fn lv_list(k: &mut Kernel, v: Lv, l: usize) -> (&mut crate::mm_types::List, &mut crate::mm_types::Frames) {
    let list = if v.g == ROOT {
        &mut k.nodes[v.node].lruvec.lists[l]
    } else {
        &mut k.memcg.groups[v.g as usize].lruvec[v.node].lists[l]
    };
    (list, &mut k.fr)
}

/// `cgroup_reclaim`: is this limit reclaim?
fn cgroup_reclaim(sc: &ScanControl) -> bool {
    sc.target != ROOT
}

/// A reclaimer waits for writeback (`reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)`, or a v1
/// group's `folio_wait_writeback`): it sleeps until SWAP_CLUSTER_MAX pages finish writeback or
/// HZ/10, once per reclaim call (after that it is `blocked` and stops scanning).
fn writeback_wait(k: &mut Kernel, ctx: &mut Ctx, node: usize, sc: &ScanControl) {
    if blocked(ctx, sc) {
        return;
    }
    let until = super::throttle::reclaim_throttle(k, ctx, node, super::throttle::ThrottleReason::Writeback);
    let d = until - ctx.clock();
    ctx.sleep_ns += d;
    ctx.throttle_sleep_ns += d;
}

/// `writeback_throttling_sane`: global reclaim, or a group of the v2 hierarchy (whose dirty
/// pages the writers' own cgroup-writeback limits throttle).
fn writeback_throttling_sane(k: &Kernel, sc: &ScanControl) -> bool {
    !cgroup_reclaim(sc) || k.memcg.groups[sc.target as usize].api == crate::memcontrol::CgroupApi::V2
}

/// `lru_add_fn`: an mlocked page goes to the unevictable list (culled, unless it came from
/// there); a page that was unevictable and no longer is has been rescued.
pub fn lru_add(k: &mut Kernel, p: Pfn) {
    let anon = is_swapbacked(k, p);
    let was_unevictable = k.fr.test_clear(p, pg::UNEVICTABLE);
    if k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED) {
        k.fr.clear(p, pg::ACTIVE);
        k.fr.set(p, pg::UNEVICTABLE);
        if !was_unevictable {
            k.ev.inc(Vm::UnevictablePgsCulled);
        }
        add_to_list(k, p, LRU_UNEVICTABLE, false);
        return;
    }
    if was_unevictable {
        k.ev.inc(Vm::UnevictablePgsRescued);
    }
    let active = k.fr.has(p, pg::ACTIVE);
    add_to_list(k, p, lru_index(anon, active), false);
}

/// `folio_mark_accessed`: inactive,unreferenced → referenced; inactive,referenced → active.
/// Only a folio on the LRU is activated by `lru_activate`, which counts PGACTIVATE, for the
/// node and for the folio's group (6.x `mm/swap.c`); one off the LRU is only marked active
/// (`__lru_cache_activate_folio`, meant for a folio still in a per-CPU `lru_add` batch, which
/// counts nothing) and goes to the active list when it is put back.
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    let f = k.fr.flags[p as usize];
    if f & pg::ACTIVE == 0 && f & pg::UNEVICTABLE == 0 && f & pg::REFERENCED != 0 {
        let on_lru = f & pg::LRU != 0;
        if on_lru {
            del_page_from_lru(k, p);
        }
        k.fr.set(p, pg::ACTIVE);
        k.fr.clear(p, pg::REFERENCED);
        if on_lru {
            lru_add(k, p);
            let nr = k.fr.folio_nr(p);
            k.ev.add(Vm::Pgactivate, nr);
            memcontrol::count_event(k, memcontrol::page_memcg(k, p), Vm::Pgactivate, nr);
        }
        crate::workingset::activation(k, p);
    } else if f & pg::REFERENCED == 0 {
        k.fr.set(p, pg::REFERENCED);
    }
}

/// Pages on list `l` of lruvec `v` and of the lruvecs of `v`'s descendants (`lruvec_page_state`,
/// hierarchical) that live in zones up to `reclaim_idx`.
fn lru_size(k: &Kernel, v: Lv, l: usize, reclaim_idx: usize) -> u64 {
    let zones = k.nodes[v.node].zones.iter().filter(|&&z| k.zones[z].kind as usize <= reclaim_idx);
    if v.g == ROOT {
        return zones.map(|&z| k.zones[z].lru_pages[l]).sum();
    }
    let gs = &k.memcg.groups;
    zones
        .map(|&z| {
            (1..gs.len()).filter(|&c| k.memcg.is_descendant(c as u8, v.g)).map(|c| gs[c].lru_zone[z][l]).sum::<u64>()
        })
        .sum()
}

/// Pages on list `l` of lruvec `v` alone in zones up to `reclaim_idx` (`lruvec_lru_size`).
fn lru_size_local(k: &Kernel, v: Lv, l: usize, reclaim_idx: usize) -> u64 {
    let zones = k.nodes[v.node].zones.iter().filter(|&&z| k.zones[z].kind as usize <= reclaim_idx);
    let gs = &k.memcg.groups;
    if v.g == ROOT {
        return zones
            .map(|&z| k.zones[z].lru_pages[l] - gs.iter().skip(1).map(|g| g.lru_zone[z][l]).sum::<u64>())
            .sum();
    }
    zones.map(|&z| gs[v.g as usize].lru_zone[z][l]).sum()
}

/// `inactive_is_low`: over the whole lruvec, whatever zones the reclaim may take from (the
/// zone-limited sizes went in 5.5, "mm: vmscan: enforce inactive:active ratio at the reclaim
/// root", Johannes Weiner).
/// With groups it reads the flushed memcg statistics (`lruvec_page_state`), so after the
/// pass that shrank the lists it still sees them as they were at the pass's start.
fn inactive_is_low(k: &Kernel, v: Lv, inactive_lru: usize) -> bool {
    let inactive = crate::workingset::lru_state(k, v.node, v.g, inactive_lru);
    let active = crate::workingset::lru_state(k, v.node, v.g, inactive_lru + 1);
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 { Kernel::int_sqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

fn can_reclaim_anon(k: &Kernel, sc: &ScanControl) -> bool {
    if !sc.may_swap {
        return false;
    }
    if cgroup_reclaim(sc) {
        return memcontrol::nr_swap_pages(k, sc.target) > 0;
    }
    crate::swap_state::free_swap_pages(k) > 0
}

/// `can_age_anon_pages`: aging anon is worth it while there is swap at all, full or not, and
/// whether or not this reclaim may swap.
fn can_age_anon_pages(k: &Kernel) -> bool {
    crate::swap_state::total_swap_pages(k) > 0
}

/// `lru_note_cost`: reclaim work on one type makes the other cheaper to scan; charged to the
/// lruvec and every ancestor's. Since 6.2 (Johannes Weiner, "mm: vmscan: make rotations a
/// secondary factor in balancing anon vs file", linux-mm, Oct 2022) a page of I/O — written by
/// reclaim, or a workingset page read back — weighs a cluster's worth (`SWAP_CLUSTER_MAX`) and
/// a page scanned but not reclaimed one.
fn lru_note_cost(k: &mut Kernel, v: Lv, file: bool, nr_io: u64, nr_rotated: u64) {
    let cost = nr_io * SWAP_CLUSTER_MAX + nr_rotated;
    if cost == 0 {
        return;
    }
    let mut v = v;
    loop {
        // The decay threshold reads `lruvec_page_state`: with groups, the flushed sizes.
        let total: u64 = (0..4).map(|l| crate::workingset::lru_state(k, v.node, v.g, l)).sum();
        let lv = lv_mut(k, v);
        if file {
            lv.file_cost += cost;
        } else {
            lv.anon_cost += cost;
        }
        if lv.anon_cost + lv.file_cost > total / 4 {
            lv.anon_cost /= 2;
            lv.file_cost /= 2;
        }
        if v.g == ROOT {
            return;
        }
        v.g = k.memcg.groups[v.g as usize].parent;
    }
}

/// `get_scan_count`: how many pages of each evictable list to scan at this priority.
fn get_scan_count(k: &Kernel, v: Lv, sc: &ScanControl) -> [u64; 4] {
    let swappiness = k.profile.tunables.swappiness;
    #[derive(PartialEq)]
    enum B {
        Equal,
        Fract,
        Anon,
        File,
    }
    let bal = if !can_reclaim_anon(k, sc) {
        B::File
    } else if sc.priority == 0 && swappiness > 0 {
        B::Equal
    } else if sc.file_is_tiny {
        B::Anon
    } else if sc.cache_trim_mode {
        B::File
    } else {
        B::Fract
    };
    let total_cost = sc.anon_cost + sc.file_cost;
    let anon_cost = total_cost + sc.anon_cost;
    let file_cost = total_cost + sc.file_cost;
    let total = anon_cost + file_cost;
    let ap = swappiness * (total + 1) / (anon_cost + 1);
    let fp = (200 - swappiness) * (total + 1) / (file_cost + 1);
    let denom = ap + fp;
    let protection = memcontrol::protection(k, sc.target, v.g, sc.memcg_low_reclaim);
    let mut nr = [0u64; 4];
    for (l, slot) in nr.iter_mut().enumerate() {
        let file = l >= LRU_INACTIVE_FILE;
        let size = lru_size_local(k, v, l, sc.reclaim_idx);
        let scan = if protection > 0 {
            // Scale the scan by how far the group's usage is above its protection, and keep
            // reclaim moving with at least a batch.
            let cgroup_size = k.memcg.groups[v.g as usize].usage.max(protection);
            (size - size * protection / (cgroup_size + 1)).max(SWAP_CLUSTER_MAX)
        } else {
            size
        };
        let scan = scan >> sc.priority;
        *slot = match bal {
            B::Equal => scan,
            B::Fract => {
                let frac = if file { fp } else { ap };
                // Rounded down, as 6.8 does for every online group (vmlab's never go offline).
                (scan * frac).checked_div(denom).unwrap_or(0)
            }
            B::File => {
                if file {
                    scan
                } else {
                    0
                }
            }
            B::Anon => {
                if file {
                    0
                } else {
                    scan
                }
            }
        };
    }
    nr
}

/// Isolate up to `nr` eligible pages from the tail of list `l` (`isolate_lru_folios`). Pages of
/// zones above `reclaim_idx` are skipped to the head. Returns pages scanned.
fn isolate(k: &mut Kernel, ctx: &mut Ctx, v: Lv, l: usize, nr: u64, reclaim_idx: usize, out: &mut Vec<Pfn>) -> u64 {
    out.clear();
    // The list as the release worker on the other CPU has left it by this clock (its ends'
    // rotations to the tail).
    crate::ext4_page_io::catch_up(k, ctx.clock());
    let mut scanned = 0;
    let mut skipped = 0;
    // Entries looked at: a folio is one entry and `scanned` counts its pages.
    let mut visited = 0;
    let list_len = lv(k, v).lists[l].len;
    while scanned < nr && visited < list_len {
        let (list, fr) = lv_list(k, v, l);
        let Some(p) = list.pop_tail(fr) else { break };
        visited += 1;
        let zid = k.zone_of(p);
        if k.zones[zid].kind as usize > reclaim_idx {
            let (list, fr) = lv_list(k, v, l);
            list.push_head(fr, p);
            skipped += 1;
            continue;
        }
        k.fr.clear(p, pg::LRU);
        k.fr.set_lru_list(p, crate::mmzone::LRU_NONE);
        // A folio is taken whole and counts its pages (isolate_lru_folios' nr_pages).
        let pages = k.fr.folio_nr(p);
        k.lru_folio_tails -= pages - 1;
        k.zones[zid].lru_pages[l] -= pages;
        if v.g != ROOT {
            k.memcg.groups[v.g as usize].lru_zone[zid][l] -= pages;
        }
        k.g.isolated += pages;
        out.push(p);
        scanned += pages;
    }
    k.charge(ctx, KFunc::ShrinkInactiveList, visited * k.cost.lru_scan);
    k.events += visited;
    let ev = Tracepoint::LruIsolate {
        classzone: reclaim_idx,
        order: 0,
        mode: 0,
        nr_requested: nr,
        nr_scanned: scanned,
        nr_skipped: skipped,
        nr_taken: out.len() as u64,
        lru: l,
    };
    k.trace_ctx(ctx, ev);
    scanned
}

/// Put an isolated page back on the right list (`move_folios_to_lru`, which ages the
/// nonresident clock for each page it puts back active: 5.8's "age nonresident information
/// alongside anonymous pages").
fn putback(k: &mut Kernel, p: Pfn) {
    k.g.isolated -= k.fr.folio_nr(p);
    if k.fr.has(p, pg::ACTIVE) && !k.fr.has(p, pg::MLOCKED) {
        crate::workingset::activation(k, p);
    }
    lru_add(k, p);
}

/// `shrink_active_list`: age active pages to the inactive list; referenced executable file
/// pages get another trip.
fn shrink_active_list(k: &mut Kernel, ctx: &mut Ctx, v: Lv, l: usize, nr: u64, sc: &ScanControl) {
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let n = isolate(k, ctx, v, l, nr, sc.reclaim_idx, &mut buf);
    k.prof.add(KFunc::ShrinkActiveList, 0);
    if !cgroup_reclaim(sc) {
        k.ev.add(Vm::Pgrefill, n);
    }
    memcontrol::count_event(k, v.g, Vm::Pgrefill, n);
    let mut deact = 0;
    let mut rotated = 0;
    for &p in &buf {
        if k.fr.has(p, pg::MLOCKED) && k.profile.unevictable_lru {
            putback(k, p);
            continue;
        }
        if k.fr.mapcount[p as usize] > 0 {
            let (young, _) = k.folio_referenced(ctx, p);
            if young > 0 && !is_swapbacked(k, p) && k.fr.has(p, pg::EXEC) {
                rotated += k.fr.folio_nr(p);
                putback(k, p);
                continue;
            }
        }
        // PG_referenced stays: folio_referenced has not cleared it since 2.6.34, so a page
        // used since its activation comes straight back at its next access.
        k.fr.clear(p, pg::ACTIVE);
        k.fr.set(p, pg::WORKINGSET);
        deact += k.fr.folio_nr(p);
        putback(k, p);
    }
    k.ev.add(Vm::Pgdeactivate, deact);
    memcontrol::count_event(k, v.g, Vm::Pgdeactivate, deact);
    lru_note_cost(k, v, l >= LRU_INACTIVE_FILE, 0, rotated);
    k.charge(ctx, KFunc::ShrinkActiveList, n * k.cost.lru_scan);
    let ev = Tracepoint::LruShrinkActive {
        nid: v.node,
        nr_taken: n,
        nr_deactivated: deact,
        nr_referenced: n - deact,
        priority: sc.priority,
        file: l >= crate::mmzone::LRU_INACTIVE_FILE,
    };
    k.trace_ctx(ctx, ev);
    k.isolate_buf = buf;
}

#[derive(PartialEq)]
enum Ref {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

/// `folio_check_references`.
fn check_references(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, locked_vma: &mut bool) -> Ref {
    let (young, locked) = if k.fr.mapcount[p as usize] > 0 { k.folio_referenced(ctx, p) } else { (0, false) };
    let referenced_page = k.fr.test_clear(p, pg::REFERENCED);
    if locked {
        *locked_vma = true;
        return Ref::Activate;
    }
    if young > 0 {
        // Every mapped page starts with the young bit of the fault that instantiated it, so a
        // second look decides. Since 5.9 ("protect the workingset on anonymous LRU") this holds
        // for anon as well: new anon pages start inactive, and one reference no longer
        // activates them.
        k.fr.set(p, pg::REFERENCED);
        if referenced_page || young > 1 || (k.fr.has(p, pg::EXEC) && !is_swapbacked(k, p)) {
            return Ref::Activate;
        }
        return Ref::Keep;
    }
    if referenced_page && !is_swapbacked(k, p) {
        return Ref::ReclaimClean;
    }
    Ref::Reclaim
}

/// `shrink_folio_list` over isolated pages; frees what it can, puts the rest back.
/// Returns (reclaimed, written).
fn shrink_folio_list(
    k: &mut Kernel,
    ctx: &mut Ctx,
    v: Lv,
    pages: &[Pfn],
    sc: &mut ScanControl,
    st: &mut ReclaimStat,
) -> (u64, u64) {
    let mut reclaimed = 0;
    let mut written = 0;
    let mut activated = 0;
    // The batch comes from one list, so one type.
    let v_file = pages.first().is_some_and(|&p| !is_swapbacked(k, p));
    for &p in pages {
        k.charge(ctx, KFunc::ShrinkFolioList, k.cost.lru_scan);
        // PG_writeback as it is at this folio's clock: the worker's ends up to it have happened.
        crate::ext4_page_io::catch_up(k, ctx.clock());
        let f = k.fr.flags[p as usize];
        if f & pg::LOCKED != 0 {
            putback(k, p);
            continue;
        }
        if f & pg::MLOCKED != 0 && k.profile.unevictable_lru {
            // Culled to the unevictable list by lru_add (folio_putback_lru).
            putback(k, p);
            continue;
        }
        // folio_check_dirty_writeback: only file pages; anon pages are written by reclaim.
        let nr = k.fr.folio_nr(p);
        if !is_swapbacked(k, p) {
            if f & (pg::DIRTY | pg::WRITEBACK) != 0 {
                st.nr_dirty += nr;
            }
            if f & (pg::DIRTY | pg::WRITEBACK) == pg::DIRTY {
                st.nr_unqueued_dirty += nr;
            }
            if f & (pg::WRITEBACK | pg::RECLAIM) == pg::WRITEBACK | pg::RECLAIM {
                st.nr_congested += nr;
            }
        }
        if f & pg::WRITEBACK != 0 {
            // Seen again under writeback: only the scan's own count (stat->nr_immediate, which
            // throttles). 6.8 counts NR_VMSCAN_IMMEDIATE at one place, the dirty file page
            // below that is left for the flusher.
            if f & pg::RECLAIM != 0 && !sc.is_kswapd && !writeback_throttling_sane(k, sc) {
                // Case 3, a cgroup v1 limit reclaim: folio_wait_writeback on a page it marked
                // before. vmlab's reclaimer cannot wait mid-batch: it puts the page back and
                // sleeps until writes complete (the page is then at the inactive tail, clean).
                writeback_wait(k, ctx, v.node, sc);
                putback(k, p);
                continue;
            }
            // Cases 1 and 2: mark it for immediate reclaim and activate it; the end of its
            // write moves it to the inactive tail (folio_rotate_reclaimable).
            if f & pg::RECLAIM != 0 {
                sc.nr_immediate += nr;
            }
            if sc.is_kswapd && f & pg::RECLAIM != 0 {
                st.nr_immediate += nr;
            } else {
                st.nr_writeback += nr;
            }
            k.fr.set(p, pg::RECLAIM | pg::ACTIVE);
            activated += k.fr.folio_nr(p);
            putback(k, p);
            continue;
        }
        let mut locked_vma = false;
        let r = check_references(k, ctx, p, &mut locked_vma);
        if locked_vma && k.profile.unevictable_lru {
            // Found in a VM_LOCKED VMA: mlock it now (mlock_vma_folio from the rmap walk);
            // putting it back culls it to the unevictable list.
            k.fr.set(p, pg::MLOCKED);
            k.g.mlock += 1;
            k.ev.inc(Vm::UnevictablePgsMlocked);
            putback(k, p);
            continue;
        }
        match r {
            Ref::Activate => {
                k.fr.set(p, pg::ACTIVE);
                activated += k.fr.folio_nr(p);
                putback(k, p);
                continue;
            }
            Ref::Keep => {
                st.nr_ref_keep += nr;
                putback(k, p);
                continue;
            }
            _ => {}
        }
        let anon = k.fr.has(p, pg::ANON);
        // No congestion check before a write: 2.6's may_write_to_queue is gone by 6.8, and swap
        // never was subject to it ("write it back even if that would block, for some
        // throttling", pageout()). A reclaimer that finds the request queue full sleeps in submit_bio and
        // then goes on with the rest of its isolated batch; vmlab writes the batch now and
        // the reclaimer sleeps after it, until the last write has room (shrink_lruvec stops).
        if anon
            && !k.fr.has(p, pg::SWAPCACHE)
            && (!can_reclaim_anon(k, sc) || !crate::swap_state::add_to_swap(k, ctx, p))
        {
            k.fr.set(p, pg::ACTIVE);
            activated += k.fr.folio_nr(p);
            putback(k, p);
            continue;
        }
        if k.fr.mapcount[p as usize] > 0 && (!sc.may_unmap || !k.try_to_unmap(ctx, p)) {
            st.nr_unmap_fail += nr;
            k.fr.set(p, pg::ACTIVE);
            activated += k.fr.folio_nr(p);
            putback(k, p);
            continue;
        }
        if k.fr.has(p, pg::DIRTY) {
            let file = !is_swapbacked(k, p);
            if file && (!sc.is_kswapd || !k.fr.has(p, pg::RECLAIM)) {
                // Only kswapd writes file pages, and only ones it has seen dirty before; the
                // rest get another trip round the LRU, to be reclaimed when their write ends.
                // Counted by the folio's pages (node_stat_mod_folio), as the activation is.
                k.ev.add(Vm::NrVmscanImmediateReclaim, k.fr.folio_nr(p));
                k.fr.set(p, pg::RECLAIM | pg::ACTIVE);
                activated += k.fr.folio_nr(p);
                putback(k, p);
                continue;
            }
            if r == Ref::ReclaimClean || !sc.may_writepage {
                putback(k, p);
                continue;
            }
            if pageout(k, ctx, p) {
                written += 1;
                if !file {
                    k.ev.inc(Vm::NrVmscanWrite);
                }
            }
            k.fr.set(p, pg::RECLAIM);
            putback(k, p);
            continue;
        }
        // Clean and unmapped: free it (a folio whole, at its order).
        let nr = k.fr.folio_nr(p);
        k.g.isolated -= nr;
        remove_mapping_and_free(k, ctx, p, sc.target);
        reclaimed += nr;
        k.events += 1;
    }
    k.ev.add(Vm::Pgactivate, activated);
    memcontrol::count_event(k, v.g, Vm::Pgactivate, activated);
    st.nr_activate[usize::from(v_file)] += activated;
    (reclaimed, written)
}

/// `shrink_inactive_list`.
fn shrink_inactive_list(k: &mut Kernel, ctx: &mut Ctx, v: Lv, l: usize, nr: u64, sc: &mut ScanControl) -> u64 {
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let n = isolate(k, ctx, v, l, nr, sc.reclaim_idx, &mut buf);
    let file = l >= LRU_INACTIVE_FILE;
    sc.nr_scanned += n;
    // Limit reclaim is neither kswapd's nor direct reclaim in /proc/vmstat: only the group's
    // own memory.stat counts it as the reclaimer's; pgscan_anon/file count every scan.
    let scan_item = if sc.is_kswapd { Vm::PgscanKswapd } else { Vm::PgscanDirect };
    if !cgroup_reclaim(sc) {
        k.ev.add(scan_item, n);
    }
    memcontrol::count_event(k, v.g, scan_item, n);
    k.ev.add(if file { Vm::PgscanFile } else { Vm::PgscanAnon }, n);
    let mut stat = ReclaimStat::default();
    let (reclaimed, written) = shrink_folio_list(k, ctx, v, &buf, sc, &mut stat);
    if n > 0 && stat.nr_unqueued_dirty == n {
        // Every page taken was dirty and not queued: the flushers are behind. Wake them to write
        // everything; a cgroup v1 limit reclaim has no dirty limit of its own
        // (!writeback_throttling_sane) and waits here for writeback instead.
        crate::page_writeback::wakeup_flusher_threads(k);
        if !writeback_throttling_sane(k, sc) {
            writeback_wait(k, ctx, v.node, sc);
        }
    }
    let steal_item = if sc.is_kswapd { Vm::PgstealKswapd } else { Vm::PgstealDirect };
    if !cgroup_reclaim(sc) {
        k.ev.add(steal_item, reclaimed);
    }
    memcontrol::count_event(k, v.g, steal_item, reclaimed);
    k.ev.add(if file { Vm::PgstealFile } else { Vm::PgstealAnon }, reclaimed);
    lru_note_cost(k, v, file, written, n - reclaimed);
    let ev = Tracepoint::LruShrinkInactive {
        nid: v.node,
        zid: 0,
        nr_scanned: n,
        nr_reclaimed: reclaimed,
        priority: sc.priority,
        file,
        stat,
    };
    k.trace_ctx(ctx, ev);
    k.isolate_buf = buf;
    reclaimed
}

/// `shrink_lruvec`.
fn shrink_lruvec(k: &mut Kernel, ctx: &mut Ctx, v: Lv, sc: &mut ScanControl) {
    let mut nr = get_scan_count(k, v, sc);
    let targets = nr;
    let mut reclaimed = 0u64;
    // Global direct reclaim at DEF_PRIORITY scans its whole targets; kswapd and limit reclaim
    // stop once they have their pages, after one nudge towards proportional scanning (6.0,
    // Johannes Weiner, "mm: vmscan: fix extreme overreclaim and swap floods", linux-mm, Aug
    // 2022: no more scanning of what is left of the larger type's target).
    let proportional = !sc.is_kswapd && !cgroup_reclaim(sc) && sc.priority == DEF_PRIORITY;
    // blk_start_plug. Limit reclaim only, as the yield below: it is the yield that ends a
    // quantum's writing early, and without the plug its writes dispatch page by page to an idle
    // device; global reclaim still writes down the list in one quantum and merges in the
    // scheduler's backlog (its plug is left for when it yields too).
    let plugged = cgroup_reclaim(sc) && crate::swap_state::blk_start_plug(k);
    // Nor does it write onto the plug of a swap-in fault it runs under (the kernel's would).
    let set_aside = !cgroup_reclaim(sc) && crate::swap_state::plug_set_aside(k, ctx);
    while nr[LRU_INACTIVE_ANON] > 0 || nr[LRU_ACTIVE_FILE] > 0 || nr[LRU_INACTIVE_FILE] > 0 {
        if blocked(ctx, sc) {
            // The kernel's reclaimer is asleep in submit_bio (no free request) until the disk
            // catches up, and isolates its next batch only after that. vmlab cannot sleep
            // here: the scan ends, the caller sleeps, then retries.
            break;
        }
        if cgroup_reclaim(sc) && own_writes_landed(k, ctx) {
            ctx.resched = true;
            break;
        }
        // The statistics' flushers (a `memory.stat` reader, the 2 s worker) are other tasks: one
        // that runs while this pass scans folds the lists in as they stand at that batch, not as
        // the pass left them.
        crate::workingset::periodic_flush(k, ctx.clock());
        for l in [LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, LRU_INACTIVE_FILE, LRU_ACTIVE_FILE] {
            if nr[l] == 0 {
                continue;
            }
            let n = nr[l].min(SWAP_CLUSTER_MAX);
            nr[l] -= n;
            if l == LRU_ACTIVE_ANON || l == LRU_ACTIVE_FILE {
                let may = if l == LRU_ACTIVE_ANON { sc.may_deactivate_anon } else { sc.may_deactivate_file };
                if may {
                    shrink_active_list(k, ctx, v, l, n, sc);
                } else {
                    sc.skipped_deactivate = true;
                }
            } else {
                reclaimed += shrink_inactive_list(k, ctx, v, l, n, sc);
            }
        }
        if reclaimed < sc.nr_to_reclaim || proportional {
            continue;
        }
        // Target met: stop the type with less left to scan, scale the other down.
        let nr_file = nr[LRU_INACTIVE_FILE] + nr[LRU_ACTIVE_FILE];
        let nr_anon = nr[LRU_INACTIVE_ANON] + nr[LRU_ACTIVE_ANON];
        if nr_file == 0 || nr_anon == 0 {
            break;
        }
        let (small, big) = if nr_file > nr_anon {
            (LRU_INACTIVE_ANON, LRU_INACTIVE_FILE)
        } else {
            (LRU_INACTIVE_FILE, LRU_INACTIVE_ANON)
        };
        let tgt_small = targets[small] + targets[small + 1] + 1;
        let pct = (nr[small] + nr[small + 1]) * 100 / tgt_small;
        nr[small] = 0;
        nr[small + 1] = 0;
        for l in [big, big + 1] {
            let tgt = targets[l] * (100 - pct) / 100;
            let done = targets[l] - nr[l];
            nr[l] = tgt.saturating_sub(done);
        }
    }
    if plugged {
        crate::swap_state::blk_finish_plug(k, ctx);
    }
    if set_aside {
        crate::swap_state::plug_restore(k);
    }
    sc.nr_reclaimed += reclaimed;
    if can_age_anon_pages(k) && inactive_is_low(k, v, LRU_INACTIVE_ANON) {
        shrink_active_list(k, ctx, v, LRU_ACTIVE_ANON, SWAP_CLUSTER_MAX, sc);
    }
}

/// `shrink_node_memcgs`: every group of the target's subtree, parents first, each by its
/// protection: under its effective `memory.min` never, under `memory.low` only on the retry
/// that found nothing else.
fn shrink_node_memcgs(k: &mut Kernel, ctx: &mut Ctx, node: usize, sc: &mut ScanControl) {
    if !k.memcg.active() {
        return shrink_lruvec(k, ctx, Lv::root(node), sc);
    }
    let mut walk = std::mem::take(&mut k.memcg_walk);
    k.memcg.subtree(sc.target, &mut walk);
    for &g in &walk {
        memcontrol::calculate_protection(k, sc.target, g);
        if memcontrol::below_min(k, sc.target, g) {
            continue;
        }
        if memcontrol::below_low(k, sc.target, g) {
            if !sc.memcg_low_reclaim {
                sc.memcg_low_skipped = true;
                continue;
            }
            memcontrol::memory_event(k, g, MemcgEvent::Low);
        }
        shrink_lruvec(k, ctx, Lv { node, g }, sc);
        if blocked(ctx, sc) {
            break;
        }
    }
    k.memcg_walk = walk;
}

/// Has this reclaimer, since it began, submitted a write that it must sleep for, or must it
/// yield for writes that have landed ([`own_writes_landed`])?
fn blocked(ctx: &Ctx, sc: &ScanControl) -> bool {
    ctx.sleep_ns > sc.sleep_at_entry || ctx.resched
}

/// Would a write this task submitted in this quantum have completed by its clock? The
/// kernel's completions are interrupts: `folio_end_writeback` → `folio_rotate_reclaimable`
/// puts a written page at the inactive tail while its reclaimer is still scanning, and the
/// next batch frees it. vmlab delivers completions between quanta, so a reclaimer that went on
/// would find none and write down the whole list, priority after priority, in one quantum
/// (anon-overcommit in a v1 group on this host's disk: 617 k pages written for 347 k freed,
/// against 530 k and 525 k on the host). It stops, and the task ends its quantum instead.
/// `io_queue` holds only the running task's I/O of this quantum, so its earliest write is this
/// task's; writes still on its plug have not started and cannot have landed.
fn own_writes_landed(k: &Kernel, ctx: &Ctx) -> bool {
    k.io_queue_first_write <= ctx.clock()
}

/// `shrink_node`.
pub fn shrink_node(k: &mut Kernel, ctx: &mut Ctx, node: usize, sc: &mut ScanControl) {
    let before = sc.nr_reclaimed;
    flush_before_scan(k, ctx.clock(), sc.target);
    prepare_scan_count(k, node, sc);
    shrink_node_memcgs(k, ctx, node, sc);
    // The pass's own work, however few folios it took: a limit reclaim freeing one 2 MiB folio
    // pays it for 512 pages, one of 4 KiB folios for 32.
    k.charge(ctx, KFunc::ShrinkNode, k.cost.shrink_node);
    if sc.nr_reclaimed > before {
        k.nodes[node].kswapd.failures = 0;
    }
}

/// The memcg statistics flush at the start of a node's pass: 6.8 flushes the target's subtree
/// (`mem_cgroup_flush_stats`); with `memcg_flush_ratelimited` only a periodic flusher a full
/// cycle late would, so the pass reads what the periodic flush left (as of `now`, the
/// reclaimer's clock at this pass).
fn flush_before_scan(k: &mut Kernel, now: u64, target: u8) {
    // A periodic flush that just ran covered the whole tree, the target's subtree with it.
    if !crate::workingset::periodic_flush(k, now) && !k.profile.memcg_flush_ratelimited {
        crate::workingset::flush_stats(k, target);
        k.trace_at_clock(now, Tracepoint::MemcgFlushStats { memcg: target, force: false });
    }
}

/// `prepare_scan_count`: the reclaim target's state, read once per node and cycle for every
/// lruvec of its subtree.
fn prepare_scan_count(k: &Kernel, node: usize, sc: &mut ScanControl) {
    let target = Lv { node, g: sc.target };
    let lv = lv(k, target);
    // Every group of the subtree is balanced by the target's costs as they stood at the start,
    // not as the groups walked before it left them.
    sc.anon_cost = lv.anon_cost;
    sc.file_cost = lv.file_cost;
    // WORKINGSET_ACTIVATE as `lruvec_page_state` reads it, as `snapshot_refaults` took it: with
    // groups, the last flush's. Reading the live count against a flushed snapshot would see news
    // at every pass between two periodic flushes, and deactivate the active list at each.
    let refaults = crate::workingset::activations_state(k, lv);
    let refault_file = refaults[1] != lv.last_refaults[1];
    let refault_anon = refaults[0] != lv.last_refaults[0];
    sc.may_deactivate_anon = sc.force_deactivate || refault_anon || inactive_is_low(k, target, LRU_INACTIVE_ANON);
    sc.may_deactivate_file = sc.force_deactivate || refault_file || inactive_is_low(k, target, LRU_INACTIVE_FILE);
    // Cache-trim mode reads the inactive file list through `lruvec_page_state` too: with groups,
    // as the last flush left it, so a list reclaim has just emptied still counts as plenty.
    let inactive_file = crate::workingset::lru_state(k, node, sc.target, LRU_INACTIVE_FILE);
    sc.cache_trim_mode = (inactive_file >> sc.priority) > 0 && !sc.may_deactivate_file;
    // file_is_tiny, global reclaim only: the node's file LRU and free memory under the sum of its
    // zones' high watermarks while there is inactive anon to scan and anon is not being
    // deactivated — the cache trap, where a thrashing file LRU wins every balance.
    sc.file_is_tiny = false;
    if !cgroup_reclaim(sc) {
        let zones = &k.nodes[node].zones;
        let free: u64 = zones.iter().map(|&z| k.zone_free(z)).sum();
        let high: u64 = zones.iter().filter(|&&z| k.zones[z].managed > 0).map(|&z| k.zones[z].high_wmark()).sum();
        // `node_page_state`: the node's own counters, not the memcg statistics.
        let file =
            lru_size(k, target, LRU_INACTIVE_FILE, usize::MAX) + lru_size(k, target, LRU_ACTIVE_FILE, usize::MAX);
        let anon = lru_size(k, target, LRU_INACTIVE_ANON, usize::MAX);
        sc.file_is_tiny = file + free <= high && !sc.may_deactivate_anon && (anon >> sc.priority) > 0;
    }
}

/// `snapshot_refaults`: WORKINGSET_ACTIVATE as `lruvec_page_state` has it, i.e. with groups as
/// of the last flush: activations since then are news to the next reclaim.
fn snapshot_refaults(k: &mut Kernel, v: Lv) {
    let now = crate::workingset::activations_state(k, lv(k, v));
    lv_mut(k, v).last_refaults = now;
}

/// `do_try_to_free_pages` for direct reclaim.
pub fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, classzone: usize) -> u64 {
    k.ev.inc(Vm::Allocstall);
    let zl_node = ctx.node;
    let stall = match ZoneType::Normal {
        _ if classzone >= ZoneType::Movable as usize => Vm::AllocstallMovable,
        _ if classzone >= ZoneType::Normal as usize => Vm::AllocstallNormal,
        _ if classzone >= ZoneType::Dma32 as usize => Vm::AllocstallDma32,
        _ => Vm::AllocstallDma,
    };
    k.ev.inc(stall);
    let mut sc = ScanControl {
        nr_to_reclaim: SWAP_CLUSTER_MAX,
        priority: DEF_PRIORITY,
        order,
        reclaim_idx: classzone.min(gfp.highest as usize),
        may_writepage: true,
        may_swap: true,
        may_unmap: true,
        is_kswapd: false,
        sleep_at_entry: ctx.sleep_ns,
        ..Default::default()
    };
    do_try_to_free_pages(k, ctx, zl_node, &mut sc);
    if sc.nr_reclaimed == 0 {
        k.drain_all_pages();
    }
    sc.nr_reclaimed
}

/// `do_try_to_free_pages`: priority passes over the nodes from `first_node` until enough is
/// reclaimed; if nothing was and a group's `memory.low` was spared, again without sparing it.
fn do_try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, first_node: usize, sc: &mut ScanControl) {
    let nn = k.nodes.len();
    loop {
        for i in 0..nn {
            let node = (first_node + i) % nn;
            shrink_node(k, ctx, node, sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim || blocked(ctx, sc) {
            break;
        }
        if sc.priority == 0 || (sc.nr_immediate > 0 && sc.nr_reclaimed == 0) {
            // (The second: the tail is full of pages under writeback: throttle rather than
            // scan harder.)
            // The inactive:active balance is decided from estimates (list sizes and refault
            // news as last flushed, the whole subtree's); a cycle that left an active list
            // alone and freed nothing is retried with both lists deactivated before reclaim
            // gives up and a limit reclaim's caller goes to the OOM killer. Under
            // `force_deactivate` no list is skipped, so the retry is taken once per round. Only
            // after a full round: the kernel retries after its priority loop, and a reclaim that
            // stopped for writeback would still be in it.
            if sc.priority == 0 && sc.nr_reclaimed == 0 && sc.skipped_deactivate {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            if sc.nr_reclaimed == 0 && sc.memcg_low_skipped && !sc.memcg_low_reclaim {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = false;
                sc.memcg_low_reclaim = true;
                sc.memcg_low_skipped = false;
                continue;
            }
            break;
        }
        sc.priority -= 1;
    }
    for node in 0..nn {
        snapshot_refaults(k, Lv { node, g: sc.target });
    }
}

/// `try_to_free_mem_cgroup_pages`: reclaim for group `g` at its limit, from its subtree only.
pub fn try_to_free_mem_cgroup_pages(k: &mut Kernel, ctx: &mut Ctx, g: u8, nr: u64, may_swap: bool) -> u64 {
    let mut sc = ScanControl {
        nr_to_reclaim: nr.max(SWAP_CLUSTER_MAX),
        priority: DEF_PRIORITY,
        reclaim_idx: ZoneType::Movable as usize,
        may_writepage: true,
        may_swap,
        may_unmap: true,
        is_kswapd: false,
        sleep_at_entry: ctx.sleep_ns,
        target: g,
        ..Default::default()
    };
    do_try_to_free_pages(k, ctx, ctx.node, &mut sc);
    sc.nr_reclaimed
}

/// `pgdat_balanced`: ANY managed zone up to `highest` meets the high watermark for `order`.
pub fn pgdat_balanced(k: &Kernel, node: usize, order: u32, highest: usize) -> bool {
    let mut any_managed = false;
    for &z in &k.nodes[node].zones {
        let zone = &k.zones[z];
        if zone.kind as usize > highest || zone.managed == 0 {
            continue;
        }
        any_managed = true;
        if k.zone_watermark_ok(z, order, zone.high_wmark(), highest, false, false) {
            return true;
        }
    }
    !any_managed
}

/// What keeps 6.8's kswapd balancing: `pgdat_balanced()` fails, i.e. no zone up to the
/// classzone meets its high watermark at the order it reclaims for.
pub fn kswapd_why(k: &Kernel, node: usize) -> crate::stats::explain::Reason {
    use crate::stats::explain::{Reason, Why};
    let ks = &k.nodes[node].kswapd;
    let order = if ks.phase == KswapdPhase::Balancing { ks.bal_order } else { ks.reclaim_order };
    let cz = ks.bal_classzone;
    if pgdat_balanced(k, node, order, cz) {
        return Reason::new(Why::Balanced, node, None, order);
    }
    let top = k.nodes[node].zones.iter().copied().rfind(|&z| k.zones[z].kind as usize <= cz && k.zones[z].managed > 0);
    Reason::new(Why::NoZoneAboveHigh, node, top, order)
}

fn prepare_kswapd_sleep(k: &Kernel, node: usize, order: u32, highest: usize) -> bool {
    if k.profile.kswapd_failures && k.nodes[node].kswapd.failures >= MAX_RECLAIM_RETRIES {
        return true;
    }
    pgdat_balanced(k, node, order, highest)
}

pub fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
    let node = k.zones[zid].node;
    if k.zones[zid].managed == 0 {
        return;
    }
    if k.profile.kswapd_failures && k.nodes[node].kswapd.failures >= MAX_RECLAIM_RETRIES {
        return;
    }
    let ks = &mut k.nodes[node].kswapd;
    ks.max_order = ks.max_order.max(order);
    ks.classzone_idx = ks.classzone_idx.max(classzone);
    if pgdat_balanced(k, node, order, classzone) {
        return;
    }
    if matches!(k.nodes[node].kswapd.phase, KswapdPhase::Sleeping | KswapdPhase::Napping) {
        k.trace(Tracepoint::WakeupKswapd { nid: node, zid, order, gfp: k.trace_gfp });
    }
    let ks = &mut k.nodes[node].kswapd;
    match ks.phase {
        KswapdPhase::Sleeping => {
            ks.phase = KswapdPhase::TrySleep;
            ks.sleeping = false;
            ks.woken_during_nap = false;
            // Fresh from a full sleep: go straight to balancing.
            start_balance(k, node);
            k.wakeups.push(k.nodes[node].kswapd.task);
        }
        KswapdPhase::Napping => {
            ks.woken_during_nap = true;
            k.wakeups.push(ks.task);
        }
        _ => {}
    }
}

fn start_balance(k: &mut Kernel, node: usize) {
    let ks = &mut k.nodes[node].kswapd;
    ks.bal_order = ks.max_order;
    ks.bal_classzone = if ks.classzone_idx == 0 { ZoneType::Movable as usize } else { ks.classzone_idx };
    ks.max_order = 0;
    ks.classzone_idx = 0;
    ks.bal_priority = DEF_PRIORITY;
    ks.bal_reclaimed = 0;
    ks.phase = KswapdPhase::Balancing;
    k.ev.inc(Vm::Pageoutrun);
}

/// One step of kswapd: a balance_pgdat priority pass, or a sleep decision.
pub fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    match k.nodes[node].kswapd.phase {
        KswapdPhase::Sleeping => KswapdAction::Sleep,
        KswapdPhase::Balancing => {
            if balance_step(k, ctx, node) {
                // Reclaim is running into pages still under writeback: wait for the disk.
                return KswapdAction::Throttle(super::THROTTLE_NS);
            }
            KswapdAction::Continue
        }
        KswapdPhase::TrySleep => {
            let (order, cz) = (k.nodes[node].kswapd.reclaim_order, k.nodes[node].kswapd.bal_classzone);
            if prepare_kswapd_sleep(k, node, order, cz) {
                let ks = &mut k.nodes[node].kswapd;
                ks.phase = KswapdPhase::Napping;
                ks.napping = true;
                ks.woken_during_nap = false;
                KswapdAction::Nap(KSWAPD_NAP_NS)
            } else {
                k.ev.inc(Vm::KswapdHighWmarkHitQuickly);
                start_balance(k, node);
                KswapdAction::Continue
            }
        }
        KswapdPhase::Napping => {
            // Back from the nap (timer or wakeup).
            let ks = &k.nodes[node].kswapd;
            let (order, cz, woken) = (ks.reclaim_order, ks.bal_classzone, ks.woken_during_nap);
            if !woken && prepare_kswapd_sleep(k, node, order, cz) {
                let ks = &mut k.nodes[node].kswapd;
                ks.phase = KswapdPhase::Sleeping;
                ks.sleeping = true;
                ks.napping = false;
                return KswapdAction::Sleep;
            }
            k.ev.inc(if woken { Vm::KswapdLowWmarkHitQuickly } else { Vm::KswapdHighWmarkHitQuickly });
            start_balance(k, node);
            KswapdAction::Continue
        }
    }
}

/// One priority iteration of `balance_pgdat`. Returns true when kswapd should throttle.
fn balance_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> bool {
    k.charge(ctx, KFunc::BalancePgdat, k.cost.syscall);
    let ks = &k.nodes[node].kswapd;
    let (order, highest, priority) = (ks.bal_order, ks.bal_classzone, ks.bal_priority);
    if pgdat_balanced(k, node, order, highest) || priority < 1 {
        finish_balance(k, node, order);
        return false;
    }
    let mut nr_to_reclaim = 0;
    for &z in &k.nodes[node].zones {
        if k.zones[z].kind as usize <= highest && k.zones[z].managed > 0 {
            nr_to_reclaim += k.zones[z].high_wmark().max(SWAP_CLUSTER_MAX);
        }
    }
    let mut sc = ScanControl {
        nr_to_reclaim,
        priority,
        order,
        reclaim_idx: highest,
        may_writepage: true,
        may_swap: true,
        may_unmap: true,
        is_kswapd: true,
        sleep_at_entry: ctx.sleep_ns,
        ..Default::default()
    };
    crate::workingset::periodic_flush(k, ctx.clock());
    if can_age_anon_pages(k) && inactive_is_low(k, Lv::root(node), LRU_INACTIVE_ANON) {
        kswapd_age_node(k, ctx, node, &sc);
    }
    shrink_node(k, ctx, node, &mut sc);
    let raise = sc.nr_scanned >= sc.nr_to_reclaim;
    let ks = &mut k.nodes[node].kswapd;
    ks.bal_reclaimed += sc.nr_reclaimed;
    if order > 0 && sc.nr_reclaimed >= (2u64 << order) {
        ks.bal_order = 0;
    }
    // A pass cut short because kswapd blocked submitting a write is not finished: the kernel
    // completes it after the sleep, so the next step repeats this priority.
    if !blocked(ctx, &sc) && (!raise || sc.nr_reclaimed == 0) {
        ks.bal_priority -= 1;
    }
    // shrink_node: "if (sc->nr.immediate) reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)".
    sc.nr_immediate > 0 && sc.nr_reclaimed < sc.nr_to_reclaim
}

/// `kswapd_age_node`: once the node's inactive anon is low, kswapd deactivates a batch of every
/// group's active anon list, each group's own ratio aside.
fn kswapd_age_node(k: &mut Kernel, ctx: &mut Ctx, node: usize, sc: &ScanControl) {
    if !k.memcg.active() {
        return shrink_active_list(k, ctx, Lv::root(node), LRU_ACTIVE_ANON, SWAP_CLUSTER_MAX, sc);
    }
    let mut walk = std::mem::take(&mut k.memcg_walk);
    k.memcg.subtree(ROOT, &mut walk);
    for &g in &walk {
        shrink_active_list(k, ctx, Lv { node, g }, LRU_ACTIVE_ANON, SWAP_CLUSTER_MAX, sc);
    }
    k.memcg_walk = walk;
}

fn finish_balance(k: &mut Kernel, node: usize, order: u32) {
    snapshot_refaults(k, Lv::root(node));
    let ks = &mut k.nodes[node].kswapd;
    if ks.bal_reclaimed == 0 {
        ks.failures += 1;
    }
    ks.reclaim_order = order;
    ks.phase = KswapdPhase::TrySleep;
}

/// The 6.8 engine: per-node split LRU, `get_scan_count` from reclaim costs, `kswapd_failures`.
pub struct Modern;

impl ReclaimEngine for Modern {
    fn lru_scope(k: &Kernel, zid: usize) -> LruScope {
        LruScope::Node(k.zones[zid].node)
    }
    fn lru_names() -> [Option<&'static str>; NR_LRU_LISTS] {
        SPLIT_LRU_NAMES
    }
    fn lru_add(k: &mut Kernel, p: Pfn) {
        lru_add(k, p)
    }
    fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
        mark_page_accessed(k, p)
    }
    fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
        wakeup_kswapd(k, zid, order, classzone)
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
    fn lru_note_cost_refault(k: &mut Kernel, p: Pfn, file: bool) {
        let v = Lv { node: k.node_of(p), g: memcontrol::page_memcg(k, p) };
        lru_note_cost(k, v, file, k.fr.folio_nr(p), 0);
    }
    fn memcg_reclaim() -> bool {
        true
    }
    fn large_folios() -> bool {
        true
    }
    fn reclaim_throttle(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> u64 {
        super::throttle::reclaim_throttle(k, ctx, node, super::throttle::ThrottleReason::Writeback)
    }
    fn writeback_done(k: &mut Kernel, pages: &[Pfn]) {
        for &p in pages {
            super::throttle::acct_reclaim_writeback(k, p);
        }
    }
    fn try_to_free_mem_cgroup_pages(k: &mut Kernel, ctx: &mut Ctx, g: u8, nr: u64, may_swap: bool) -> u64 {
        try_to_free_mem_cgroup_pages(k, ctx, g, nr, may_swap)
    }
}

#[cfg(test)]
#[path = "modern_tests.rs"]
mod tests;
