//! Page reclaim (`mm/vmscan.c`). What is shared by every era lives here: the LRU list
//! operations, `pageout`, `__remove_mapping`; each era's engine (list layout, scan policy,
//! kswapd) is a submodule chosen by the profile's `engine` field.

pub mod aa24;
pub mod modern;
pub mod riel24;
pub mod split2636;
pub mod zone26;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, List, Pfn};
use crate::mmzone::{LRU_ACTIVE_ANON, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_NONE, LRU_UNEVICTABLE};
use crate::page_alloc::Gfp;
use crate::profiles::Engine;
use crate::stats::vmstat::Vm;

pub const SWAP_CLUSTER_MAX: u64 = 32;
pub const DEF_PRIORITY: i32 = 12;
/// reclaim_throttle's timeout for writeback: HZ/10.
pub const THROTTLE_NS: u64 = 100_000_000;

/// Which lruvec holds a page's lists: the node's (6.8), the zone's (2.6.36), or the global one (2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruScope {
    Node(usize),
    Zone(usize),
    Global,
}

#[inline]
pub fn scope_of(k: &Kernel, p: Pfn) -> LruScope {
    scope_in_zone(k, k.zone_of(p))
}

/// `scope_of` for a page already known to be in zone `zid` (the list ops need the zone anyway).
#[inline]
fn scope_in_zone(k: &Kernel, zid: usize) -> LruScope {
    match k.profile.engine {
        Engine::Modern => LruScope::Node(k.zones[zid].node),
        Engine::Split2636 | Engine::Zone26 => LruScope::Zone(zid),
        Engine::Riel24 | Engine::Aa24 => LruScope::Global,
    }
}

/// The list `l` of a scope, with the frame array (split borrow).
#[inline]
pub fn list_mut(k: &mut Kernel, s: LruScope, l: usize) -> (&mut List, &mut crate::mm_types::Frames) {
    match s {
        LruScope::Node(n) => (&mut k.nodes[n].lruvec.lists[l], &mut k.fr),
        LruScope::Zone(z) => (&mut k.zones[z].lruvec.lists[l], &mut k.fr),
        LruScope::Global => (&mut k.global_lru.lists[l], &mut k.fr),
    }
}

/// Put a page on list `l` of its lruvec, at the head (newest) or the tail (next to be scanned).
#[inline]
pub fn add_to_list(k: &mut Kernel, p: Pfn, l: usize, at_tail: bool) {
    debug_assert!(!k.fr.has(p, pg::LRU), "pfn {p} already on an LRU");
    if k.profile.engine == Engine::Riel24 {
        // 2.4 lists take new pages at the head only.
        return riel24::add_to_list(k, p, l);
    }
    let zid = k.zone_of(p);
    let s = scope_in_zone(k, zid);
    let (list, fr) = list_mut(k, s, l);
    if at_tail {
        list.push_tail(fr, p);
    } else {
        list.push_head(fr, p);
    }
    let f = &mut k.fr.flags[p as usize];
    *f = (*f & !pg::LRU_MASK) | pg::LRU | ((l as u32) << pg::LRU_SHIFT);
    k.zones[zid].lru_pages[l] += 1;
}

/// Take a page off whatever LRU list holds it.
#[inline]
pub fn del_page_from_lru(k: &mut Kernel, p: Pfn) {
    if !k.fr.has(p, pg::LRU) {
        return;
    }
    if k.profile.engine == Engine::Riel24 {
        return riel24::del_page_from_lru(k, p);
    }
    let l = k.fr.lru_list(p) as usize;
    let zid = k.zone_of(p);
    let s = scope_in_zone(k, zid);
    let (list, fr) = list_mut(k, s, l);
    list.remove(fr, p);
    let f = &mut k.fr.flags[p as usize];
    *f = (*f & !(pg::LRU | pg::LRU_MASK)) | ((LRU_NONE as u32) << pg::LRU_SHIFT);
    k.zones[zid].lru_pages[l] -= 1;
}

/// Is the page anon-like for LRU purposes (anon or shm: swap-backed)?
#[inline]
pub fn is_swapbacked(k: &Kernel, p: Pfn) -> bool {
    k.fr.flags[p as usize] & (pg::ANON | pg::SWAPBACKED) != 0
}

/// A new page enters the LRU (`folio_add_lru`).
#[inline]
pub fn lru_add(k: &mut Kernel, p: Pfn) {
    match k.profile.engine {
        Engine::Riel24 => riel24::lru_cache_add(k, p),
        Engine::Split2636 => split2636::lru_add(k, p),
        Engine::Aa24 => aa24::lru_add(k, p),
        Engine::Modern => modern::lru_add(k, p),
        Engine::Zone26 => zone26::lru_add(k, p),
    }
}

/// Free a page the kernel itself held (a bounce page at I/O end): 2.4.9's `__free_pages_ok`
/// also eases `memory_pressure`.
pub fn free_kernel_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    match k.profile.engine {
        Engine::Riel24 => riel24::free_reclaimed(k, ctx, p),
        _ => k.free_pages(ctx, p, 0),
    }
}

/// `mark_page_accessed` from read()/write() (mapped accesses only set the PTE young bit).
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    match k.profile.engine {
        Engine::Riel24 => riel24::mark_page_accessed(k, p),
        Engine::Split2636 => split2636::mark_page_accessed(k, p),
        Engine::Aa24 => aa24::mark_page_accessed(k, p),
        Engine::Modern => modern::mark_page_accessed(k, p),
        Engine::Zone26 => zone26::mark_page_accessed(k, p),
    }
}

/// A page fault found page `p` in the page cache (`filemap_nopage` / `shmem_nopage`): the 2.4
/// engines and 2.6.26/27's `filemap_fault` count that as an access (`mark_page_accessed`); later
/// kernels only set the young bit.
pub fn nopage_accessed(k: &mut Kernel, p: Pfn) {
    match k.profile.engine {
        Engine::Aa24 => aa24::mark_page_accessed(k, p),
        Engine::Zone26 => zone26::nopage_accessed(k, p),
        _ => {}
    }
}

/// A page fault takes its mm's page_table_lock: with the 2.4 page-table walk it may have to
/// spin while `swap_out` holds it.
#[inline]
pub fn fault_page_table_lock(k: &mut Kernel, ctx: &mut Ctx, mm: u32) {
    if k.profile.engine == Engine::Aa24 {
        aa24::page_table_lock(k, ctx, mm);
    }
}

pub fn move_to_unevictable(k: &mut Kernel, p: Pfn) {
    del_page_from_lru(k, p);
    k.fr.clear(p, pg::ACTIVE);
    k.fr.set(p, pg::UNEVICTABLE);
    add_to_list(k, p, LRU_UNEVICTABLE, false);
}

pub fn move_to_evictable(k: &mut Kernel, p: Pfn) {
    del_page_from_lru(k, p);
    k.fr.clear(p, pg::UNEVICTABLE);
    k.ev.inc(Vm::UnevictablePgsRescued);
    let l =
        if is_swapbacked(k, p) && k.profile.engine != Engine::Zone26 { LRU_INACTIVE_ANON } else { LRU_INACTIVE_FILE };
    add_to_list(k, p, l, false);
}

/// `folio_rotate_reclaimable`: writeback done on a page reclaim wanted: move it to the tail
/// of its inactive list so the next scan frees it.
pub fn rotate_reclaimable_page(k: &mut Kernel, p: Pfn) {
    if !k.fr.has(p, pg::LRU) || k.fr.has(p, pg::ACTIVE) || k.fr.has(p, pg::UNEVICTABLE) {
        return;
    }
    let l = k.fr.lru_list(p) as usize;
    del_page_from_lru(k, p);
    add_to_list(k, p, l, true);
    k.ev.inc(Vm::Pgrotated);
}

/// `wakeup_kswapd` for an allocation that failed the LOW watermark in zone `zid`.
pub fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
    match k.profile.engine {
        Engine::Riel24 => riel24::wakeup_kswapd(k),
        Engine::Split2636 => split2636::wakeup_kswapd(k, zid, order, classzone),
        Engine::Aa24 => aa24::wakeup_kswapd(k, zid, order, classzone),
        Engine::Modern => modern::wakeup_kswapd(k, zid, order, classzone),
        Engine::Zone26 => zone26::wakeup_kswapd(k, zid, order, classzone),
    }
}

/// `wake_all_kswapd` from the allocation slow path: 2.6.x calls `wakeup_kswapd` for every zone
/// of the zonelist (each checks its own watermark); 6.8 wakes each node's kswapd once.
pub fn wake_all_kswapd(k: &mut Kernel, zonelist: &[usize], order: u32, classzone: usize) {
    match k.profile.engine {
        Engine::Split2636 | Engine::Zone26 => {
            for &zid in zonelist {
                wakeup_kswapd(k, zid, order, classzone);
            }
        }
        Engine::Modern | Engine::Riel24 | Engine::Aa24 => {
            let mut woken = [false; 64];
            for &zid in zonelist {
                let node = k.zones[zid].node.min(63);
                if !woken[node] {
                    woken[node] = true;
                    wakeup_kswapd(k, zid, order, classzone);
                }
            }
        }
    }
}

/// Direct reclaim (`try_to_free_pages`); returns pages reclaimed.
pub fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, classzone: usize) -> u64 {
    let was = ctx.in_reclaim;
    ctx.in_reclaim = true;
    let r = match k.profile.engine {
        Engine::Riel24 => riel24::try_to_free_pages(k, ctx) as u64,
        Engine::Split2636 => split2636::try_to_free_pages(k, ctx, gfp, order, classzone),
        Engine::Aa24 => aa24::try_to_free_pages(k, ctx, gfp, order, classzone),
        Engine::Modern => modern::try_to_free_pages(k, ctx, gfp, order, classzone),
        Engine::Zone26 => zone26::try_to_free_pages(k, ctx, gfp, order, classzone),
    };
    ctx.in_reclaim = was;
    r
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
    let (why, action) = match k.profile.engine {
        Engine::Riel24 => {
            riel24::ensure(k);
            (riel24::kswapd_why(k, node), riel24::kswapd_step(k, ctx, node))
        }
        Engine::Split2636 => (split2636::kswapd_why(k, node), split2636::kswapd_step(k, ctx, node)),
        Engine::Aa24 => (aa24::kswapd_why(k, node), aa24::kswapd_step(k, ctx, node)),
        Engine::Modern => (modern::kswapd_why(k, node), modern::kswapd_step(k, ctx, node)),
        Engine::Zone26 => (zone26::kswapd_why(k, node), zone26::kswapd_step(k, ctx, node)),
    };
    k.kswapd_why.add(why, ctx.sys_ns - before);
    action
}

/// A PTE mapping `p` was added (`mapped`) or removed.
#[inline]
pub fn page_mapcount_changed(k: &mut Kernel, p: Pfn, mapped: bool) {
    if k.profile.engine == Engine::Riel24 {
        riel24::page_mapcount_changed(k, p, mapped);
    }
}

/// Engines with their own `__alloc_pages` (2.4.9) allocate here; `None` for the shared one.
#[inline]
pub fn engine_alloc_pages(
    k: &mut Kernel,
    ctx: &mut Ctx,
    gfp: Gfp,
    order: u32,
) -> Option<Result<Pfn, crate::page_alloc::AllocFail>> {
    match k.profile.engine {
        Engine::Riel24 => Some(riel24::alloc::alloc_pages(k, ctx, gfp, order)),
        _ => None,
    }
}

/// Does the engine run kreclaimd (2.4.0–2.4.9)?
pub fn has_kreclaimd(p: &crate::profiles::Profile) -> bool {
    p.engine == Engine::Riel24
}

pub fn set_kreclaimd_task(k: &mut Kernel, t: usize) {
    riel24::ensure(k);
    k.riel.kreclaimd_task = Some(t);
}

/// One step of kreclaimd.
pub fn kreclaimd_step(k: &mut Kernel, ctx: &mut Ctx) -> KswapdAction {
    ctx.in_reclaim = true;
    riel24::kreclaimd_step(k, ctx)
}

/// The nap timer of a napping kswapd fired (not woken early).
pub fn kswapd_nap_expired(k: &mut Kernel, node: usize) {
    let ks = &mut k.nodes[node].kswapd;
    if ks.phase == crate::mmzone::KswapdPhase::Napping {
        ks.napping = false;
    }
}

/// Free an isolated, unmapped, clean page that reclaim decided to drop (`__remove_mapping` +
/// free). Leaves a workingset shadow.
pub fn remove_mapping_and_free(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    let node = k.node_of(p);
    let shadow = if k.profile.workingset { crate::workingset::eviction(k, node) } else { 0 };
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
        k.remove_from_page_cache(p, shadow);
    }
    if k.profile.reclaim_frees_cold {
        k.free_cold_page(ctx, p);
    } else {
        k.free_pages(ctx, p, 0);
    }
}

/// `pageout`: start writing a dirty page. Anon pages are already in the swap cache; shm pages
/// move from their file into the swap cache first (`shmem_writepage`).
pub fn pageout(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
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

pub const _ACTIVE_ANON: usize = LRU_ACTIVE_ANON;
