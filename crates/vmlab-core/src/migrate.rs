//! Page migration (`mm/migrate.c`): move a page's contents and identity to another frame, as
//! 2.6.36's `migrate_pages` → `unmap_and_move` → `move_to_new_page` → `migrate_page` do it
//! (galeksandrp-keenetic/linux-2.6.36 `mm/migrate.c`). Compaction is the one caller.
//!
//! What the kernel does in steps under the page lock — migration PTEs, the radix-tree slot
//! swap with frozen refcounts, the copy, `remove_migration_ptes` — happens here in one call,
//! since nothing else runs between the steps in a simulation. What decides whether a page
//! moves is kept: the tests `unmap_and_move` makes before it touches anything.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmap::pte;
use crate::mmzone::LRU_NONE;
use crate::stats::kfunc::KFunc;

/// Why a page did not move: all are `-EAGAIN` in 2.6.36 (`migrate_pages` retries them, then
/// gives up after ten passes and puts the page back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Busy {
    /// `trylock_page` failed: read I/O holds it. A sync pass past the second would sleep in
    /// `lock_page`; vmlab's caller cannot sleep inside its step, so it counts as a failure.
    Locked,
    /// `PageWriteback`: same, for `wait_on_page_writeback`.
    Writeback,
    /// References beyond the page cache and the mappings (`page_count != expected_count` in
    /// `migrate_page_move_mapping`): a pin or buffers held elsewhere.
    Pinned,
    /// An anonymous page no PTE maps and not in the swap cache: `page_lock_anon_vma` finds no
    /// anon_vma and the page is not migrated.
    NoAnonVma,
}

/// `__isolate_lru_page(page, ISOLATE_BOTH, 0)` as compaction's migrate scanner calls it: a page
/// on an evictable LRU list, taken whatever its list. Large folios are not taken (2.6.3x has no
/// large page-cache folios; a 6.x caller would need `migrate_folio`).
#[inline]
pub fn isolatable(k: &Kernel, p: Pfn) -> bool {
    let f = k.fr.flags[p as usize];
    f & pg::LRU != 0 && f & (pg::UNEVICTABLE | pg::TAIL | pg::ORDER_MASK) == 0
}

/// Take an isolatable page off its LRU list for migration (`del_page_from_lru_list` and
/// NR_ISOLATED_*).
pub fn isolate(k: &mut Kernel, p: Pfn) {
    debug_assert!(isolatable(k, p));
    crate::vmscan::del_page_from_lru(k, p);
    k.g.isolated += 1;
}

/// `putback_lru_page`: an isolated page goes back to the head of the list its flags name — for
/// a migrated page that is its new frame, so migration makes a page the newest on its list.
pub fn putback(k: &mut Kernel, p: Pfn) {
    k.g.isolated -= 1;
    let l = crate::vmscan::lru_index(crate::vmscan::is_swapbacked(k, p), k.fr.has(p, pg::ACTIVE));
    crate::vmscan::add_to_list(k, p, l, false);
}

/// The tests `unmap_and_move` and `migrate_page_move_mapping` make before moving anything.
pub fn can_move(k: &Kernel, p: Pfn) -> Result<(), Busy> {
    let i = p as usize;
    let f = k.fr.flags[i];
    if f & pg::LOCKED != 0 {
        return Err(Busy::Locked);
    }
    if f & pg::WRITEBACK != 0 {
        return Err(Busy::Writeback);
    }
    // Under memcg `extra` holds the page's group, not references.
    if !k.profile.memcg && k.fr.extra[i] != 0 {
        return Err(Busy::Pinned);
    }
    if f & pg::ANON != 0 && k.fr.mapcount[i] == 0 && f & pg::SWAPCACHE == 0 {
        return Err(Busy::NoAnonVma);
    }
    Ok(())
}

/// `unmap_and_move` of isolated page `old` into `new`, a free frame of the same zone already
/// taken from the buddy lists (`compaction_alloc`). On success `old` is freed and `new` is put
/// back on the LRU; on failure nothing changed and both stay the caller's.
pub fn unmap_and_move(k: &mut Kernel, ctx: &mut Ctx, old: Pfn, new: Pfn) -> Result<(), Busy> {
    can_move(k, old)?;
    debug_assert_eq!(k.zone_of(old), k.zone_of(new), "compaction migrates within a zone");
    // try_to_unmap(TTU_MIGRATION | TTU_IGNORE_MLOCK) then remove_migration_ptes: every PTE
    // ends up mapping `new`, old (`pte_mkold`), keeping its write bit; a dirty bit moves to the
    // page as try_to_unmap moves it.
    let mut buf = std::mem::take(&mut k.rmap_buf);
    k.rmap_walk(ctx, old, &mut buf);
    for m in &buf {
        let e = k.pt.entries[m.slot];
        if e & pte::DIRTY != 0 {
            crate::page_writeback::set_page_dirty(k, ctx, old);
        }
        k.pt.entries[m.slot] = pte::PRESENT | (e & pte::WRITE) | new;
    }
    k.charge(ctx, KFunc::TryToUnmap, 2 * buf.len() as u64 * k.cost.rmap_one);
    k.rmap_buf = buf;
    // migrate_page_move_mapping: the page-cache or swap-cache slot now holds `new`.
    let (o, n) = (old as usize, new as usize);
    if k.fr.flags[o] & pg::SWAPCACHE != 0 {
        if let Some(sw) = k.swap.as_mut() {
            if let Some(s) = sw.pfn_slot.remove(&old) {
                sw.cache[s as usize] = new;
                sw.pfn_slot.insert(new, s);
            }
        }
    } else if k.fr.flags[o] & pg::ANON == 0 {
        let (file, idx) = (k.fr.mapping[o] as usize, k.fr.index[o] as usize);
        if let Some(slot) = k.files.get_mut(file).and_then(|f| f.pages.get_mut(idx)) {
            if *slot == old {
                *slot = new;
            }
        }
    }
    // move_to_new_page + migrate_page_copy: the new frame takes the page's identity and state
    // (flags but the LRU ones, which putback sets; the mapcount the PTEs above give it; the
    // memcg charge, `mem_cgroup_end_migration`), the old one keeps nothing.
    let keep = !(pg::LRU | pg::LRU_MASK | pg::BUDDY | pg::PCP);
    k.fr.flags[n] = (k.fr.flags[o] & keep) | ((LRU_NONE as u32) << pg::LRU_SHIFT);
    k.fr.mapping[n] = k.fr.mapping[o];
    k.fr.index[n] = k.fr.index[o];
    k.fr.mapcount[n] = k.fr.mapcount[o];
    k.fr.aux[n] = k.fr.aux[o];
    k.fr.extra[n] = k.fr.extra[o];
    k.fr.flags[o] = (LRU_NONE as u32) << pg::LRU_SHIFT;
    k.fr.mapping[o] = 0;
    k.fr.mapcount[o] = 0;
    k.fr.extra[o] = 0;
    k.charge(ctx, KFunc::Compaction, k.cost.copy_page);
    // The old page's last reference goes: `putback_lru_page` of a page no one holds frees it
    // (to the per-CPU list, which is why `__alloc_pages_direct_compact` drains it after).
    k.free_pages(ctx, old, 0);
    putback(k, new);
    Ok(())
}

/// A frame no page lives in any more (tests): nothing of the kernel's points at it.
pub fn unreferenced(k: &Kernel, p: Pfn) -> bool {
    let in_swap_cache = k.swap.as_ref().is_some_and(|sw| sw.pfn_slot.contains_key(&p) || sw.cache.contains(&p));
    let in_page_cache = k.files.iter().any(|f| f.pages.contains(&p));
    !in_swap_cache && !in_page_cache && k.fr.mapcount[p as usize] == 0 && p != NIL
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
