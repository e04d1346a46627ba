//! `mm/swap.c`'s per-CPU LRU-add pagevecs as 2.6.28–3.10 have them (the 2.6.36/38 engine's
//! `split26.lru_add_pvec`): a new page does not reach its list at once; `__lru_cache_add` puts it
//! in its CPU's pagevec for the list it is meant for (`lru_add_pvecs[NR_LRU_LISTS]`), and when
//! that pagevec is full `____pagevec_lru_add` sets PG_lru (and PG_active for an active list),
//! counts it in `update_page_reclaim_stat` and adds it at the list's head, oldest first.
//! `lru_add_drain` (`drain_cpu_pagevecs`) empties one CPU's pagevecs in list order; reclaim calls
//! it for its own CPU on entry to `shrink_inactive_list` and `shrink_active_list`, compaction in
//! `compact_zone` (`migrate_prep_local`), `mlock`/`mlockall` on every CPU (`lru_add_drain_all`).
//!
//! Sources [R] (no stored tree holds a 2.6.36 `mm/swap.c`; these diffs' `-` sides are its code):
//! Shaohua Li, "Re: [RFC]mm: batch activate_page() to reduce lock contention" (linux-mm, 26 Jul
//! 2010: `____pagevec_lru_add`'s loop and `activate_page` as 2.6.35/2.6.36 have them); Mel
//! Gorman, "[PATCH 2/4] mm: pagevec: Defer deciding what LRU to add a page to until pagevec drain
//! time" (linux-mm, 13 May 2013: `__lru_cache_add` on `lru_add_pvecs[lru]`, `lru_cache_add_lru`
//! clearing PG_active, the drain's `for_each_lru` loop; per-list pagevecs until 3.11, and its
//! message: "mark_page_accessed cannot activate an inactive page that is located on an inactive
//! LRU pagevec"). `shrink_active_list` and `shrink_inactive_list` open with `lru_add_drain();
//! spin_lock_irq(&zone->lru_lock);` in every split-LRU `mm/vmscan.c` from the 2008 review
//! threads to 3.3.
//!
//! While a page waits it is not PG_lru: `__isolate_lru_page` refuses it (so an order > 0
//! isolation cannot take it as a neighbour) and `mark_page_accessed` cannot activate it, only set
//! PG_referenced. Its frame says where it is by the LRU field `LRU_PVEC` (PG_lru clear), so the
//! per-frame state does not grow.
//!
//! One departure [I]: a page freed or moved while it waits (truncation, unmap, exit, mlock's
//! culling) is taken out of its pagevec at once. In the kernel the pagevec's reference keeps the
//! frame until the drain, which then puts it on the list and `release_pages` frees it there.

use super::{add_to_list, is_swapbacked, lru_index};
use crate::kernel::Kernel;
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmzone::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_FILE, LRU_NONE, LRU_PVEC, LRU_UNEVICTABLE};

/// `PAGEVEC_SIZE`.
pub const PAGEVEC_SIZE: usize = 14;
/// The evictable lists, in `for_each_lru` order (the unevictable list takes no pagevec).
const PVEC_LISTS: usize = LRU_UNEVICTABLE;

/// `struct pagevec`: a fixed array, so that adding never allocates.
#[derive(Clone, Copy, Debug)]
pub struct Pagevec {
    nr: u8,
    pages: [Pfn; PAGEVEC_SIZE],
}

impl Default for Pagevec {
    fn default() -> Pagevec {
        Pagevec { nr: 0, pages: [NIL; PAGEVEC_SIZE] }
    }
}

impl Pagevec {
    pub fn pages(&self) -> &[Pfn] {
        &self.pages[..self.nr as usize]
    }
}

/// One CPU's `lru_add_pvecs`, indexed by list.
pub type CpuPvecs = [Pagevec; PVEC_LISTS];

/// `lru_cache_add_lru` → `__lru_cache_add` on `cpu`: page `p` waits in the pagevec of list `l`
/// (PG_active cleared until the drain sets it for an active list); a full pagevec goes to the
/// lists. `size` is the profile's pagevec size (1..=PAGEVEC_SIZE).
pub fn lru_cache_add(k: &mut Kernel, cpu: u32, p: Pfn, l: usize, size: usize) {
    debug_assert!(l < PVEC_LISTS && !k.fr.has(p, pg::LRU));
    k.fr.clear(p, pg::ACTIVE);
    k.fr.set_lru_list(p, LRU_PVEC);
    k.g.lru_pvec += 1;
    let pv = &mut k.reclaim.split_mut().lru_add_pvecs[cpu as usize][l];
    pv.pages[pv.nr as usize] = p;
    pv.nr += 1;
    if pv.nr as usize >= size.min(PAGEVEC_SIZE) {
        pagevec_lru_add(k, cpu, l);
    }
}

/// `____pagevec_lru_add`: the pagevec's pages to the head of list `l`, first page first.
fn pagevec_lru_add(k: &mut Kernel, cpu: u32, l: usize) {
    let pv = std::mem::take(&mut k.reclaim.split_mut().lru_add_pvecs[cpu as usize][l]);
    let active = l == LRU_ACTIVE_ANON || l == LRU_ACTIVE_FILE;
    let file = (l >= LRU_INACTIVE_FILE) as usize;
    k.g.lru_pvec -= pv.nr as u64;
    for &p in pv.pages() {
        k.fr.set_lru_list(p, LRU_NONE);
        if active {
            k.fr.set(p, pg::ACTIVE);
        }
        // update_page_reclaim_stat
        let zid = k.zone_of(p);
        let lv = &mut k.reclaim.split_mut().zone[zid];
        lv.recent_scanned[file] += 1;
        if active {
            lv.recent_rotated[file] += 1;
        }
        add_to_list(k, p, l, false);
    }
}

/// `lru_add_drain` on `cpu` (`drain_cpu_pagevecs`): its pagevecs in list order.
pub fn lru_add_drain(k: &mut Kernel, cpu: u32) {
    for l in 0..PVEC_LISTS {
        if k.reclaim.split().lru_add_pvecs[cpu as usize][l].nr > 0 {
            pagevec_lru_add(k, cpu, l);
        }
    }
}

/// `lru_add_drain_all`: `schedule_on_each_cpu(lru_add_drain_per_cpu)`, CPU by CPU.
pub fn lru_add_drain_all(k: &mut Kernel) {
    for cpu in 0..k.reclaim.split().lru_add_pvecs.len() {
        lru_add_drain(k, cpu as u32);
    }
}

/// Take a waiting page out of whichever pagevec holds it (the departure above): the others keep
/// their order.
pub fn lru_pvec_remove(k: &mut Kernel, p: Pfn) {
    for pvecs in k.reclaim.split_mut().lru_add_pvecs.iter_mut() {
        for pv in pvecs.iter_mut() {
            let n = pv.nr as usize;
            if let Some(i) = pv.pages[..n].iter().position(|&q| q == p) {
                pv.pages.copy_within(i + 1..n, i);
                pv.nr -= 1;
                pv.pages[n - 1] = NIL;
                k.fr.set_lru_list(p, LRU_NONE);
                k.g.lru_pvec -= 1;
                return;
            }
        }
    }
    unreachable!("pfn {p} marked as waiting in an LRU-add pagevec, but in none");
}

/// The list a new page is meant for: 2.6.28–3.x put new anonymous pages on the active list
/// (`page_add_new_anon_rmap` → `lru_cache_add_lru(page, LRU_ACTIVE_ANON)`), the rest inactive.
pub fn new_page_lru(k: &mut Kernel, p: Pfn) -> usize {
    if k.fr.has(p, pg::ANON) && !k.fr.has(p, pg::SWAPCACHE) {
        k.fr.set(p, pg::ACTIVE);
    }
    lru_index(is_swapbacked(k, p), k.fr.has(p, pg::ACTIVE))
}
