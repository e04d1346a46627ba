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
use crate::mm_types::{pg, Pfn};
use crate::mmzone::NR_LRU_LISTS;
use crate::mmzone::{
    KswapdPhase, ZoneType, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_UNEVICTABLE,
};
use crate::page_alloc::Gfp;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::trace::Tracepoint;

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
    may_deactivate_anon: bool,
    may_deactivate_file: bool,
    file_is_tiny: bool,
    cache_trim_mode: bool,
}

pub fn lru_add(k: &mut Kernel, p: Pfn) {
    let anon = is_swapbacked(k, p);
    if k.profile.unevictable_lru && k.fr.has(p, pg::MLOCKED) {
        k.fr.set(p, pg::UNEVICTABLE);
        add_to_list(k, p, LRU_UNEVICTABLE, false);
        return;
    }
    let active = k.fr.has(p, pg::ACTIVE);
    add_to_list(k, p, lru_index(anon, active), false);
}

/// `folio_mark_accessed`: inactive,unreferenced → referenced; inactive,referenced → active.
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    let f = k.fr.flags[p as usize];
    if f & pg::ACTIVE == 0 && f & pg::UNEVICTABLE == 0 && f & pg::REFERENCED != 0 {
        if f & pg::LRU != 0 {
            del_page_from_lru(k, p);
            k.fr.set(p, pg::ACTIVE);
            k.fr.clear(p, pg::REFERENCED);
            lru_add(k, p);
        } else {
            k.fr.set(p, pg::ACTIVE);
            k.fr.clear(p, pg::REFERENCED);
        }
        k.ev.inc(Vm::Pgactivate);
        crate::workingset::activation(k, p);
        if f & pg::WORKINGSET != 0 {
            k.ev.inc(if is_swapbacked(k, p) { Vm::WorkingsetRestoreAnon } else { Vm::WorkingsetRestoreFile });
        }
    } else if f & pg::REFERENCED == 0 {
        k.fr.set(p, pg::REFERENCED);
    }
}

/// Pages on list `l` of node `node` that live in zones up to `reclaim_idx`.
fn lru_size(k: &Kernel, node: usize, l: usize, reclaim_idx: usize) -> u64 {
    k.nodes[node]
        .zones
        .iter()
        .filter(|&&z| k.zones[z].kind as usize <= reclaim_idx)
        .map(|&z| k.zones[z].lru_pages[l])
        .sum()
}

/// `inactive_is_low`.
fn inactive_is_low(k: &Kernel, node: usize, inactive_lru: usize, reclaim_idx: usize) -> bool {
    let inactive = lru_size(k, node, inactive_lru, reclaim_idx);
    let active = lru_size(k, node, inactive_lru + 1, reclaim_idx);
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 { Kernel::int_sqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

fn can_reclaim_anon(k: &Kernel, sc: &ScanControl) -> bool {
    sc.may_swap && crate::swap_state::free_swap_pages(k) > 0
}

/// `lru_note_cost`: reclaim work on one type makes the other cheaper to scan.
fn lru_note_cost(k: &mut Kernel, node: usize, file: bool, cost: u64) {
    let total: u64 = (0..4).map(|l| k.nodes[node].lruvec.size(l)).sum();
    let lv = &mut k.nodes[node].lruvec;
    if file {
        lv.file_cost += cost;
    } else {
        lv.anon_cost += cost;
    }
    if lv.anon_cost + lv.file_cost > total / 4 {
        lv.anon_cost /= 2;
        lv.file_cost /= 2;
    }
}

/// `get_scan_count`: how many pages of each evictable list to scan at this priority.
fn get_scan_count(k: &Kernel, node: usize, sc: &ScanControl) -> [u64; 4] {
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
    let lv = &k.nodes[node].lruvec;
    let total_cost = lv.anon_cost + lv.file_cost;
    let anon_cost = total_cost + lv.anon_cost;
    let file_cost = total_cost + lv.file_cost;
    let total = anon_cost + file_cost;
    let ap = swappiness * (total + 1) / (anon_cost + 1);
    let fp = (200 - swappiness) * (total + 1) / (file_cost + 1);
    let denom = ap + fp;
    let mut nr = [0u64; 4];
    for (l, slot) in nr.iter_mut().enumerate() {
        let file = l >= LRU_INACTIVE_FILE;
        let size = lru_size(k, node, l, sc.reclaim_idx);
        let scan = size >> sc.priority;
        *slot = match bal {
            B::Equal => scan,
            B::Fract => {
                let frac = if file { fp } else { ap };
                if denom == 0 {
                    0
                } else {
                    (scan * frac).div_ceil(denom)
                }
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
fn isolate(
    k: &mut Kernel,
    ctx: &mut Ctx,
    node: usize,
    l: usize,
    nr: u64,
    reclaim_idx: usize,
    out: &mut Vec<Pfn>,
) -> u64 {
    out.clear();
    let mut scanned = 0;
    let mut skipped = 0;
    let list_len = k.nodes[node].lruvec.lists[l].len;
    while scanned < nr && skipped + scanned < list_len {
        let Some(p) = k.nodes[node].lruvec.lists[l].pop_tail(&mut k.fr) else { break };
        let zid = k.zone_of(p);
        if k.zones[zid].kind as usize > reclaim_idx {
            k.nodes[node].lruvec.lists[l].push_head(&mut k.fr, p);
            skipped += 1;
            continue;
        }
        k.fr.clear(p, pg::LRU);
        k.fr.set_lru_list(p, crate::mmzone::LRU_NONE);
        k.zones[zid].lru_pages[l] -= 1;
        k.g.isolated += 1;
        out.push(p);
        scanned += 1;
    }
    k.charge(ctx, KFunc::ShrinkInactiveList, (scanned + skipped) * k.cost.lru_scan);
    k.events += scanned + skipped;
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
    k.g.isolated -= 1;
    if k.fr.has(p, pg::ACTIVE) && !k.fr.has(p, pg::MLOCKED) {
        crate::workingset::activation(k, p);
    }
    lru_add(k, p);
}

/// `shrink_active_list`: age active pages to the inactive list; referenced executable file
/// pages get another trip.
fn shrink_active_list(k: &mut Kernel, ctx: &mut Ctx, node: usize, l: usize, nr: u64, sc: &ScanControl) {
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let n = isolate(k, ctx, node, l, nr, sc.reclaim_idx, &mut buf);
    k.prof.add(KFunc::ShrinkActiveList, 0);
    k.ev.add(Vm::Pgrefill, n);
    let mut deact = 0;
    for &p in &buf {
        if k.fr.has(p, pg::MLOCKED) && k.profile.unevictable_lru {
            putback(k, p);
            continue;
        }
        if k.fr.mapcount[p as usize] > 0 {
            let (young, _) = k.folio_referenced(ctx, p);
            if young > 0 && !is_swapbacked(k, p) && k.fr.has(p, pg::EXEC) {
                putback(k, p);
                continue;
            }
        }
        k.fr.clear(p, pg::ACTIVE | pg::REFERENCED);
        k.fr.set(p, pg::WORKINGSET);
        deact += 1;
        putback(k, p);
    }
    k.ev.add(Vm::Pgdeactivate, deact);
    k.charge(ctx, KFunc::ShrinkActiveList, n * k.cost.lru_scan);
    let ev = Tracepoint::LruShrinkActive {
        nid: node,
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
fn shrink_folio_list(k: &mut Kernel, ctx: &mut Ctx, pages: &[Pfn], sc: &mut ScanControl) -> (u64, u64) {
    let mut reclaimed = 0;
    let mut written = 0;
    let mut activated = 0;
    for &p in pages {
        k.charge(ctx, KFunc::ShrinkFolioList, k.cost.lru_scan);
        let f = k.fr.flags[p as usize];
        if f & pg::LOCKED != 0 {
            putback(k, p);
            continue;
        }
        if f & pg::MLOCKED != 0 && k.profile.unevictable_lru {
            k.ev.inc(Vm::UnevictablePgsCulled);
            putback(k, p);
            continue;
        }
        if f & pg::WRITEBACK != 0 {
            if f & pg::RECLAIM != 0 {
                k.ev.inc(Vm::NrVmscanImmediateReclaim);
                sc.nr_immediate += 1;
            }
            k.fr.set(p, pg::RECLAIM);
            putback(k, p);
            continue;
        }
        let mut locked_vma = false;
        let r = check_references(k, ctx, p, &mut locked_vma);
        if locked_vma && k.profile.unevictable_lru {
            // Found in a VM_LOCKED VMA: mlock it now and cull it to the unevictable list.
            k.fr.set(p, pg::MLOCKED);
            k.g.mlock += 1;
            k.ev.inc(Vm::UnevictablePgsCulled);
            putback(k, p);
            continue;
        }
        match r {
            Ref::Activate => {
                k.fr.set(p, pg::ACTIVE);
                activated += 1;
                putback(k, p);
                continue;
            }
            Ref::Keep => {
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
            activated += 1;
            putback(k, p);
            continue;
        }
        if k.fr.mapcount[p as usize] > 0 && (!sc.may_unmap || !k.try_to_unmap(ctx, p)) {
            k.fr.set(p, pg::ACTIVE);
            activated += 1;
            putback(k, p);
            continue;
        }
        if k.fr.has(p, pg::DIRTY) {
            let file = !is_swapbacked(k, p);
            if file && (!sc.is_kswapd || !k.fr.has(p, pg::RECLAIM)) {
                // Only kswapd writes file pages, and only ones it has seen dirty before; wake
                // the flusher for the rest and give them another trip round the LRU.
                k.ev.inc(Vm::NrVmscanImmediateReclaim);
                k.fr.set(p, pg::RECLAIM | pg::ACTIVE);
                activated += 1;
                k.flusher_wanted = true;
                if k.flusher_task != usize::MAX {
                    k.wakeups.push(k.flusher_task);
                }
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
        // Clean and unmapped: free it.
        k.g.isolated -= 1;
        remove_mapping_and_free(k, ctx, p);
        reclaimed += 1;
        k.events += 1;
    }
    k.ev.add(Vm::Pgactivate, activated);
    (reclaimed, written)
}

/// `shrink_inactive_list`.
fn shrink_inactive_list(k: &mut Kernel, ctx: &mut Ctx, node: usize, l: usize, nr: u64, sc: &mut ScanControl) -> u64 {
    let mut buf = std::mem::take(&mut k.isolate_buf);
    let n = isolate(k, ctx, node, l, nr, sc.reclaim_idx, &mut buf);
    let file = l >= LRU_INACTIVE_FILE;
    sc.nr_scanned += n;
    k.ev.add(if sc.is_kswapd { Vm::PgscanKswapd } else { Vm::PgscanDirect }, n);
    k.ev.add(if file { Vm::PgscanFile } else { Vm::PgscanAnon }, n);
    let (reclaimed, written) = shrink_folio_list(k, ctx, &buf, sc);
    k.ev.add(if sc.is_kswapd { Vm::PgstealKswapd } else { Vm::PgstealDirect }, reclaimed);
    k.ev.add(if file { Vm::PgstealFile } else { Vm::PgstealAnon }, reclaimed);
    lru_note_cost(k, node, file, written + n - reclaimed);
    let ev = Tracepoint::LruShrinkInactive {
        nid: node,
        zid: 0,
        nr_scanned: n,
        nr_reclaimed: reclaimed,
        priority: sc.priority,
        file,
    };
    k.trace_ctx(ctx, ev);
    k.isolate_buf = buf;
    reclaimed
}

/// `shrink_lruvec`.
fn shrink_lruvec(k: &mut Kernel, ctx: &mut Ctx, node: usize, sc: &mut ScanControl) {
    let mut nr = get_scan_count(k, node, sc);
    let targets = nr;
    let mut reclaimed = 0u64;
    let proportional = !sc.is_kswapd && sc.priority == DEF_PRIORITY;
    let mut scan_adjusted = false;
    while nr[LRU_INACTIVE_ANON] > 0 || nr[LRU_ACTIVE_FILE] > 0 || nr[LRU_INACTIVE_FILE] > 0 {
        if blocked(ctx, sc) {
            // The kernel's reclaimer is asleep in submit_bio (no free request) until the disk
            // catches up, and isolates its next batch only after that. vmlab cannot sleep
            // here: the scan ends, the caller sleeps, then retries.
            break;
        }
        for l in [LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, LRU_INACTIVE_FILE, LRU_ACTIVE_FILE] {
            if nr[l] == 0 {
                continue;
            }
            let n = nr[l].min(SWAP_CLUSTER_MAX);
            nr[l] -= n;
            if l == LRU_ACTIVE_ANON || l == LRU_ACTIVE_FILE {
                let may = if l == LRU_ACTIVE_ANON { sc.may_deactivate_anon } else { sc.may_deactivate_file };
                if may {
                    shrink_active_list(k, ctx, node, l, n, sc);
                }
            } else {
                reclaimed += shrink_inactive_list(k, ctx, node, l, n, sc);
            }
        }
        if reclaimed < sc.nr_to_reclaim || proportional || scan_adjusted {
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
        scan_adjusted = true;
    }
    sc.nr_reclaimed += reclaimed;
    if can_reclaim_anon(k, sc) && inactive_is_low(k, node, LRU_INACTIVE_ANON, sc.reclaim_idx) {
        shrink_active_list(k, ctx, node, LRU_ACTIVE_ANON, SWAP_CLUSTER_MAX, sc);
    }
}

/// Has this reclaimer, since it began, submitted a write that it must sleep for?
fn blocked(ctx: &Ctx, sc: &ScanControl) -> bool {
    ctx.sleep_ns > sc.sleep_at_entry
}

/// `shrink_node` (with `prepare_scan_count`).
pub fn shrink_node(k: &mut Kernel, ctx: &mut Ctx, node: usize, sc: &mut ScanControl) {
    let before = sc.nr_reclaimed;
    let lv = &k.nodes[node].lruvec;
    let refault_file = lv.refaults[1] != lv.last_refaults[1];
    let refault_anon = lv.refaults[0] != lv.last_refaults[0];
    sc.may_deactivate_anon = refault_anon || inactive_is_low(k, node, LRU_INACTIVE_ANON, sc.reclaim_idx);
    sc.may_deactivate_file = refault_file || inactive_is_low(k, node, LRU_INACTIVE_FILE, sc.reclaim_idx);
    let inactive_file = lru_size(k, node, LRU_INACTIVE_FILE, sc.reclaim_idx);
    sc.cache_trim_mode = (inactive_file >> sc.priority) > 0 && !sc.may_deactivate_file;
    // file_is_tiny: the file LRU plus free memory is under the high watermarks.
    let mut free = 0;
    let mut high = 0;
    for &z in &k.nodes[node].zones {
        if k.zones[z].kind as usize <= sc.reclaim_idx {
            free += k.zone_free(z);
            high += k.zones[z].high_wmark();
        }
    }
    let file = inactive_file + lru_size(k, node, LRU_ACTIVE_FILE, sc.reclaim_idx);
    let anon = lru_size(k, node, LRU_INACTIVE_ANON, sc.reclaim_idx);
    sc.file_is_tiny = file + free <= high && !(sc.may_deactivate_anon && (anon >> sc.priority) > 0);
    shrink_lruvec(k, ctx, node, sc);
    if sc.nr_reclaimed > before {
        k.nodes[node].kswapd.failures = 0;
    }
}

fn snapshot_refaults(k: &mut Kernel, node: usize) {
    let lv = &mut k.nodes[node].lruvec;
    lv.last_refaults = lv.refaults;
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
    let nn = k.nodes.len();
    loop {
        for i in 0..nn {
            let node = (zl_node + i) % nn;
            shrink_node(k, ctx, node, &mut sc);
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.priority == 0 || blocked(ctx, &sc) {
            break;
        }
        if sc.nr_immediate > 0 && sc.nr_reclaimed == 0 {
            // The tail is full of pages under writeback: throttle rather than scan harder.
            break;
        }
        sc.priority -= 1;
    }
    for node in 0..nn {
        snapshot_refaults(k, node);
    }
    if sc.nr_reclaimed == 0 {
        k.drain_all_pages();
    }
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
    // age_active_anon
    if can_reclaim_anon(k, &sc) && inactive_is_low(k, node, LRU_INACTIVE_ANON, highest) {
        shrink_active_list(k, ctx, node, LRU_ACTIVE_ANON, SWAP_CLUSTER_MAX, &sc);
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

fn finish_balance(k: &mut Kernel, node: usize, order: u32) {
    snapshot_refaults(k, node);
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
}
