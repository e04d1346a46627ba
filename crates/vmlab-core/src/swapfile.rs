//! `swapoff` (`mm/swapfile.c`: `sys_swapoff`, `try_to_unuse`, `unuse_mm` down to `unuse_pte`,
//! `shmem_unuse`). No 2.6.36 `mm/swapfile.c` is stored; the steps follow a stored 2.6.3x one
//! (swap_info[] array era) and a 2.6.34+ `unuse_pte` (MM_SWAPENTS), which 2.6.36 shares:
//!
//! - `sys_swapoff` takes the area's pages out of `nr_swap_pages` and `total_swap_pages` and
//!   clears SWP_WRITEOK *before* `try_to_unuse`: from then on reclaim finds no swap, so anon
//!   pages are not scanned for it and no slot is handed out.
//! - `try_to_unuse` walks the slots in use in order (`find_next_to_unuse`), one at a time: the
//!   slot's swap-cache page, or a new one read by `read_swap_cache_async(entry,
//!   GFP_HIGHUSER_MOVABLE, NULL, 0)` — an ordinary movable allocation through the zonelist,
//!   watermarks, kswapd wakeups and direct reclaim, with no readahead — then `wait_on_page_locked`
//!   (the read) and `wait_on_page_writeback`.
//! - every PTE holding the entry is pointed at the page (`unuse_pte`: old, write-protected,
//!   `activate_page`), every shmem index entry takes it back (`shmem_unuse`), and the page
//!   leaves the swap cache dirty (`delete_from_swap_cache`, `SetPageDirty`). A slot held only by
//!   the swap cache ends with its page, which nothing maps.
//! - an allocation that fails ends `try_to_unuse` with -ENOMEM and `sys_swapoff` puts the area
//!   back (SWP_WRITEOK, the counters). Not modelled: `security_vm_enough_memory`'s check before
//!   the start, PF_OOM_ORIGIN (the OOM killer's first pick is the swapoff task).
//!
//! The kernel searches every mm for each entry (`unuse_mm`, from the mm where the last entry was
//! found); vmlab indexes what holds each slot once, at the start (`unuse_index`), checks each
//! holder again when it gets there (`pte_same`), and indexes again if a slot is still held after
//! its holders are done (a fork copied the entry since). Each holder costs one rmap step; the
//! kernel's walk over every mm per entry is not charged.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmap::{pte, PTRS_PER_TABLE};
use crate::stats::kfunc::KFunc;

/// What holds a slot: a PTE of an mm at a page, or a shm segment's index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Holder {
    pub slot: u32,
    /// The mm's id, or `SHM | file` for a shm segment.
    pub owner: u32,
    /// The virtual page, or the segment's page index.
    pub at: u64,
}

/// `Holder::owner` bit of a shm index entry.
pub const SHM: u32 = 1 << 31;

/// What one step of `try_to_unuse` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Unuse {
    /// The slot is done (or was free); go on from the next one.
    Next,
    /// Wait for the slot's page (its read, or a swap write in flight) until this time.
    Wait(u64),
    /// No page could be allocated: -ENOMEM.
    NoMem,
}

/// `sys_swapoff` up to `try_to_unuse`: the area stops taking pages and leaves the swap counters.
/// False (-EINVAL) when there is no area, or a swapoff has already begun on it.
pub fn swapoff_begin(k: &mut Kernel) -> bool {
    match k.swap.as_mut() {
        Some(sw) if sw.writeok => sw.writeok = false,
        _ => return false,
    }
    unuse_index(k);
    true
}

/// `try_to_unuse` failed: the area goes back on the swap list as it was.
pub fn swapoff_abort(k: &mut Kernel) {
    if let Some(sw) = k.swap.as_mut() {
        sw.writeok = true;
        sw.unuse = Vec::new();
    }
}

/// The rest of `sys_swapoff` once no slot is in use: the area is gone.
pub fn swapoff_end(k: &mut Kernel) {
    debug_assert!(k.swap.as_ref().is_none_or(|sw| sw.inuse == 0), "swapoff ended with slots in use");
    k.swap = None;
}

/// `find_next_to_unuse`: the first slot at or after `from` that something holds (a PTE, a shm
/// entry, or the swap cache).
pub fn find_next_to_unuse(k: &Kernel, from: u32) -> Option<u32> {
    let sw = k.swap.as_ref()?;
    (from..sw.nslots).find(|&s| !sw.slot_free(s))
}

/// Index every swap PTE and shm index entry by slot (the walk `unuse_mm` and `shmem_unuse`
/// repeat per entry).
pub fn unuse_index(k: &mut Kernel) {
    let Some(mut idx) = k.swap.as_mut().map(|sw| std::mem::take(&mut sw.unuse)) else { return };
    idx.clear();
    for m in k.mms.iter().flatten() {
        for (&key, &id) in &m.ptes {
            let base = id as usize * PTRS_PER_TABLE as usize;
            for (i, &e) in k.pt.entries[base..base + PTRS_PER_TABLE as usize].iter().enumerate() {
                if let Some(slot) = pte::swap_slot(e) {
                    idx.push(Holder { slot, owner: m.id, at: key * PTRS_PER_TABLE + i as u64 });
                }
            }
        }
    }
    for (f, file) in k.files.iter().enumerate().filter(|(_, f)| f.shmem) {
        for (i, &e) in file.swapped.iter().enumerate().filter(|(_, &e)| e != 0) {
            idx.push(Holder { slot: e - 1, owner: SHM | f as u32, at: i as u64 });
        }
    }
    idx.sort_unstable();
    if let Some(sw) = k.swap.as_mut() {
        sw.unuse = idx;
    }
}

/// One entry of `try_to_unuse`'s loop for slot `s`.
pub fn unuse_slot(k: &mut Kernel, ctx: &mut Ctx, s: u32) -> Unuse {
    let Some(sw) = k.swap.as_ref() else { return Unuse::Next };
    if sw.slot_free(s) {
        return Unuse::Next;
    }
    let p = sw.cache[s as usize];
    if p == NIL {
        // `read_swap_cache_async`: a movable page from the allocator, read alone; the page's
        // owner is set when a PTE takes it.
        let p = match crate::swap_state::add_swapin_page(k, ctx, s, 0, 0, 0) {
            Ok(p) => p,
            Err(_) => return Unuse::NoMem,
        };
        let t = crate::swap_state::swap_read_run(k, ctx, s, vec![p]);
        return Unuse::Wait(k.wait_on_read(ctx, p, t));
    }
    if k.fr.has(p, pg::LOCKED) || k.fr.has(p, pg::WRITEBACK) {
        // `wait_on_page_locked` / `wait_on_page_writeback`: a write's end is not recorded
        // per page, so look again a millisecond on.
        return Unuse::Wait(k.wait_on_locked(ctx, p, ctx.clock() + 1_000_000).max(ctx.clock() + 1));
    }
    unuse_holders(k, ctx, s, p);
    if k.swap.as_ref().is_some_and(|sw| sw.count[s as usize] > 0) {
        unuse_index(k);
        unuse_holders(k, ctx, s, p);
    }
    debug_assert_eq!(k.swap.as_ref().map_or(0, |sw| sw.count[s as usize]), 0, "slot {s} still held");
    if k.fr.has(p, pg::SWAPCACHE) {
        crate::swap_state::delete_from_swap_cache(k, p);
    }
    if k.fr.has(p, pg::ANON) {
        // The page is now the only copy.
        k.fr.set(p, pg::DIRTY);
        if k.fr.mapcount[p as usize] == 0 {
            // Held by the swap cache alone: its last reference goes with try_to_unuse's.
            crate::swap_state::free_anon_page(k, ctx, p);
        } else {
            // `activate_page`, so it is not swapped out again at once.
            k.fr.set(p, pg::REFERENCED);
            crate::vmscan::mark_page_accessed(k, p);
        }
    }
    Unuse::Next
}

/// Every holder of slot `s` in the index takes page `p`.
fn unuse_holders(k: &mut Kernel, ctx: &mut Ctx, s: u32, p: Pfn) {
    let (lo, hi) = {
        let idx = &k.swap.as_ref().expect("swap").unuse;
        (idx.partition_point(|h| h.slot < s), idx.partition_point(|h| h.slot <= s))
    };
    for i in lo..hi {
        let h = k.swap.as_ref().expect("swap").unuse[i];
        k.charge(ctx, KFunc::DoSwapPage, k.cost.rmap_one);
        if h.owner & SHM != 0 {
            k.shmem_unuse(ctx, h.owner & !SHM, h.at, s, p);
        } else {
            k.unuse_pte(ctx, h.owner, h.at, s, p);
        }
    }
}
