//! The 2.4.9 scanners: `refill_inactive_scan` (active → inactive_dirty), `page_launder`
//! (inactive_dirty → inactive_clean, writing dirty pages), `reclaim_page` (inactive_clean → a
//! free page) and the page-table walk `swap_out`.

use super::buffers::{busy_buffer_page, sync_page_buffers, LaunderMask, BH_DIRTIED};
use super::lock::{spin_lock, spin_unlock, Holder};
use super::{
    activate_page, add_active, add_clean, add_dirty, add_to_list, age_down, age_up, buffers, count_clean_out,
    deactivate_page, del_page_from_lru, has_mapping, page_count, refresh, zone_free_plenty, zone_inactive_plenty,
    BUFFERS, CLEAN_TO_ACTIVE, CLEAN_TO_DIRTY, DEF_PRIORITY, PAGE_AGE_START, SLOT_ACTIVE, SLOT_CLEAN, SLOT_OFF,
};
use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmap::{pte, vm, PTRS_PER_TABLE};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

fn zone_flags(k: &mut Kernel, f: fn(&Kernel, usize) -> bool) -> Vec<bool> {
    let mut v = std::mem::take(&mut k.reclaim.riel24_mut().scratch);
    v.clear();
    v.extend((0..k.zones.len()).map(|z| f(k, z)));
    v
}

/// `refill_inactive_scan(DEF_PRIORITY)`: look at a 64th of the active list from its tail, under
/// the lru lock for the whole scan. Pages of zones with plenty of inactive pages are passed over;
/// the rest are aged, and those whose age has run down to 0 and that no one but the page cache
/// (and their buffers) holds go to inactive_dirty. A page mapped by a process — mlocked or not —
/// stays active. The age test is 2.4.0–2.4.10-pre4's (`page->age == 0 && page_count(page) <=
/// ...`, the old side of Jan Harkes' 4 Sep 2001 patch against 2.4.10-pre4); later 2.4.10-pres
/// dropped it.
pub fn refill_inactive_scan(k: &mut Kernel, ctx: &mut Ctx) -> u64 {
    k.reclaim.riel24_mut().stats.refill_inactive_scan += 1;
    let mut maxscan = k.reclaim.riel24_mut().active.len() >> DEF_PRIORITY;
    let taken = spin_lock(k, ctx);
    let mut plenty = zone_flags(k, zone_inactive_plenty);
    let mut visits = 0u64;
    let mut deactivated = 0u64;
    while maxscan > 0 && !k.reclaim.riel24_mut().active.is_empty() {
        let n = k.reclaim.riel24_mut().active.skip(&mut k.fr, maxscan, |z, _, hot| plenty[z] || hot == 0);
        if n > 0 {
            visits += n;
            maxscan -= n;
            continue;
        }
        let Some((p, hot)) = k.reclaim.riel24_mut().active.peek() else { break };
        visits += 1;
        maxscan -= 1;
        let z = k.reclaim.riel24_mut().active.zone(p);
        if plenty[z] || !hot {
            k.reclaim.riel24_mut().active.keep(&mut k.fr);
            continue;
        }
        if k.fr.test_clear(p, pg::REFERENCED) {
            age_up(k, p);
        } else {
            age_down(k, p);
            if k.fr.aux[p as usize] == 0 && page_count(k, p) <= if buffers(k, p) { 2 } else { 1 } {
                // deactivate_page_nolock
                k.reclaim.riel24_mut().active.take(&mut k.fr);
                k.reclaim.riel24_mut().lru.lists[SLOT_ACTIVE].len -= 1;
                k.fr.clear(p, pg::LRU | pg::ACTIVE | pg::REFERENCED);
                k.zones[z].lru_pages[SLOT_ACTIVE] -= 1;
                k.fr.aux[p as usize] = 0;
                add_dirty(k, p);
                deactivated += 1;
                plenty[z] = zone_inactive_plenty(k, z);
                continue;
            }
        }
        k.reclaim.riel24_mut().active.keep(&mut k.fr);
        refresh(k, p);
    }
    k.reclaim.riel24_mut().scratch = plenty;
    k.reclaim.riel24_mut().stats.zone_inactive_plenty += visits;
    k.ev.add(Vm::Pgrefill, visits);
    k.ev.add(Vm::Pgdeactivate, deactivated);
    k.events += visits;
    k.charge(ctx, KFunc::RefillInactiveScan, visits * k.cost.lru_scan);
    k.charge(ctx, KFunc::ZoneInactivePlenty, visits * k.cost.pte_walk);
    spin_unlock(k, ctx, taken, Holder::RefillInactiveScan);
    deactivated
}

/// Part of an LRU visit that `page_ramdisk(page)` adds in page_launder's first test for a page
/// with buffers (`page->buffers && MAJOR(page->buffers->b_dev) == RAMDISK_MAJOR`, 2.4
/// `swap.h`): the buffer head is a second structure to read, in the buffer_head slab, which
/// refill_inactive_scan's visit never touches. A quarter of a visit: the seed's profile
/// (steady state, bandaid kernel) gives page_launder 1.18–1.27 × refill_inactive_scan's time
/// per page visited (772 µs a call over ≈ 2.6–2.8 k pages, 1188 µs over 5.1 k).
const RAMDISK_TEST_DIV: u64 = 4;

/// How a page_launder call ended: its pass done, with the pages it moved to inactive_clean (or
/// freed); or stopped to wait on a page's buffers until `until`, with `left` of its scan to go
/// when the caller resumes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunderEnd {
    Done(u64),
    Wait { cleaned: u64, until: u64, left: u64 },
}

/// `page_launder(gfp_mask, sync)` as in 2.4.9: one pass over a 64th of inactive_dirty from its
/// tail (or the rest of an earlier pass, `resume`). Pages in use go back to the active list;
/// pages of zones with plenty free are passed over; dirty pages are written; buffers are
/// stripped; clean unused pages go to the zone's inactive_clean list. The lock is dropped
/// around each write and each `try_to_free_buffers`.
pub fn page_launder(k: &mut Kernel, ctx: &mut Ctx, mask: LaunderMask, resume: Option<u64>) -> LaunderEnd {
    let can_fs = mask.fs;
    if resume.is_none() {
        k.reclaim.riel24_mut().stats.page_launder += 1;
    }
    let scanner = if ctx.is_kswapd { Vm::PgscanKswapd } else { Vm::PgscanDirect };
    let mut maxscan = resume.unwrap_or(k.reclaim.riel24_mut().dirty.len() >> DEF_PRIORITY);
    debug_assert!(
        k.reclaim.riel24().dirty_bufs <= k.reclaim.riel24().dirty.len(),
        "dirty_bufs {} > inactive_dirty {}",
        k.reclaim.riel24().dirty_bufs,
        k.reclaim.riel24().dirty.len()
    );
    let mut taken = spin_lock(k, ctx);
    let mut free_plenty = zone_flags(k, zone_free_plenty);
    let mut pending = Pending::default();
    let mut visits = 0u64;
    let mut cleaned = 0u64;
    while maxscan > 0 && !k.reclaim.riel24_mut().dirty.is_empty() {
        let (bufs_before, len_before) = (k.reclaim.riel24_mut().dirty_bufs, k.reclaim.riel24_mut().dirty.len());
        let n = k.reclaim.riel24_mut().dirty.skip(&mut k.fr, maxscan, |z, _, hot| hot == 0 && free_plenty[z]);
        if n > 0 {
            // Pages stepped over are not referenced; which of them have buffers is not kept per
            // chunk, so the list's share stands in for the run's.
            pending.visits += n;
            pending.bh_reads += n * bufs_before / len_before.max(1);
            maxscan -= n;
            continue;
        }
        let Some((p, _)) = k.reclaim.riel24_mut().dirty.peek() else { break };
        pending.visits += 1;
        maxscan -= 1;
        let z = k.reclaim.riel24_mut().dirty.zone(p);
        let f = k.fr.flags[p as usize];
        let bufs = buffers(k, p);
        if f & pg::REFERENCED == 0 && bufs {
            pending.bh_reads += 1;
        }
        if f & pg::REFERENCED != 0 || (!bufs && page_count(k, p) > 1) {
            // In use: back to the active list.
            take_dirty(k);
            k.fr.aux[p as usize] = PAGE_AGE_START;
            add_active(k, p);
            k.ev.inc(Vm::Pgactivate);
            continue;
        }
        let bh_busy = busy_buffer_page(k, p);
        if free_plenty[z] || f & pg::LOCKED != 0 || (f & pg::WRITEBACK != 0 && !bh_busy) {
            k.reclaim.riel24_mut().dirty.keep(&mut k.fr);
            continue;
        }
        if bh_busy {
            // try_to_free_buffers fails on the busy buffers: back to inactive_dirty, after it
            // submitted them or, for a caller that may wait, after the wait.
            take_dirty(k);
            flush(k, ctx, &mut pending, &mut visits);
            spin_unlock(k, ctx, taken, Holder::PageLaunder);
            let wait = sync_page_buffers(k, ctx, p, mask);
            taken = spin_lock(k, ctx);
            add_dirty(k, p);
            if let Some(until) = wait {
                k.reclaim.riel24_mut().scratch = free_plenty;
                k.ev.add(scanner, visits);
                k.events += visits;
                spin_unlock(k, ctx, taken, Holder::PageLaunder);
                return LaunderEnd::Wait { cleaned, until, left: maxscan };
            }
            continue;
        }
        if f & pg::DIRTY != 0 {
            if !has_mapping(k, p) {
                take_dirty(k);
                add_active(k, p);
                continue;
            }
            if !can_fs {
                k.reclaim.riel24_mut().dirty.keep(&mut k.fr);
                continue;
            }
            // writepage with the lock dropped; the page, now locked for the write, is met again
            // at the tail and rotated.
            flush(k, ctx, &mut pending, &mut visits);
            spin_unlock(k, ctx, taken, Holder::PageLaunder);
            crate::vmscan::pageout(k, ctx, p);
            taken = spin_lock(k, ctx);
            if maxscan > 0 {
                pending.visits += 1;
                maxscan -= 1;
            }
            k.reclaim.riel24_mut().dirty.keep(&mut k.fr);
            continue;
        }
        if bufs {
            take_dirty(k);
            flush(k, ctx, &mut pending, &mut visits);
            spin_unlock(k, ctx, taken, Holder::PageLaunder);
            try_to_free_buffers(k, ctx, p);
            taken = spin_lock(k, ctx);
            if !has_mapping(k, p) {
                // A buffer-cache-only page: freed when we drop our reference.
                cleaned += 1;
                reset_page(k, p);
                super::free_reclaimed(k, ctx, p);
            } else if page_count(k, p) > 1 {
                add_active(k, p);
            } else {
                launder_to_clean(k, z, p);
                cleaned += 1;
            }
            free_plenty[z] = zone_free_plenty(k, z);
            continue;
        }
        take_dirty(k);
        if has_mapping(k, p) {
            launder_to_clean(k, z, p);
            cleaned += 1;
            free_plenty[z] = zone_free_plenty(k, z);
        } else {
            add_active(k, p);
        }
    }
    flush(k, ctx, &mut pending, &mut visits);
    k.reclaim.riel24_mut().scratch = free_plenty;
    k.ev.add(scanner, visits);
    k.events += visits;
    spin_unlock(k, ctx, taken, Holder::PageLaunder);
    LaunderEnd::Done(cleaned)
}

/// page_launder moves a clean page of zone `z` to the zone's inactive_clean list.
fn launder_to_clean(k: &mut Kernel, z: usize, p: Pfn) {
    add_clean(k, p);
    if let Some(c) = k.reclaim.riel24_mut().stats.clean_in.get_mut(z) {
        *c += 1;
    }
}

/// page_launder's page visits not yet charged, and how many of them read a buffer head.
#[derive(Default)]
struct Pending {
    visits: u64,
    bh_reads: u64,
}

/// Charge the page visits of page_launder done since the last charge.
fn flush(k: &mut Kernel, ctx: &mut Ctx, pending: &mut Pending, visits: &mut u64) {
    let ns = pending.visits * k.cost.lru_scan + pending.bh_reads * k.cost.lru_scan / RAMDISK_TEST_DIV;
    k.charge(ctx, KFunc::PageLaunder, ns);
    *visits += pending.visits;
    pending.visits = 0;
    pending.bh_reads = 0;
}

/// Remove the page under inactive_dirty's cursor (`del_page_from_inactive_dirty_list`).
fn take_dirty(k: &mut Kernel) {
    let Some(p) = k.reclaim.riel24_mut().dirty.take(&mut k.fr) else { return };
    k.reclaim.riel24_mut().dirty_bufs -= buffers(k, p) as u64;
    k.reclaim.riel24_mut().lru.lists[super::SLOT_DIRTY].len -= 1;
    let z = k.zone_of(p);
    k.zones[z].lru_pages[super::SLOT_DIRTY] -= 1;
    k.fr.clear(p, pg::LRU | pg::ACTIVE);
    k.fr.set_lru_list(p, crate::mmzone::LRU_NONE);
}

/// `try_to_free_buffers`: the buffers of a clean page go; the page loses their reference.
fn try_to_free_buffers(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    k.reclaim.riel24_mut().stats.try_to_free_buffers += 1;
    k.fr.extra[p as usize] &= !(BUFFERS | BH_DIRTIED);
    k.reclaim.riel24_mut().bh_live = k.reclaim.riel24_mut().bh_live.saturating_sub(1);
    k.charge(ctx, KFunc::TryToFreeBuffers, k.cost.lru_scan + k.cost.lru_scan / 2);
}

/// Give a frame back the state of a newly allocated page.
fn reset_page(k: &mut Kernel, p: Pfn) {
    let i = p as usize;
    k.fr.flags[i] &= pg::RESERVED;
    k.fr.set_lru_list(p, crate::mmzone::LRU_NONE);
    k.fr.mapping[i] = 0;
    k.fr.index[i] = 0;
    k.fr.mapcount[i] = 0;
    k.fr.extra[i] = 0;
    k.fr.aux[i] = 0;
}

/// `reclaim_page(zone)`: take the first freeable page off the zone's inactive_clean list, drop
/// it from the page or swap cache and hand it over. Pages found in use or dirty go back to the
/// active or inactive_dirty list.
pub fn reclaim_page(k: &mut Kernel, ctx: &mut Ctx, z: usize, taker: usize) -> Option<Pfn> {
    k.reclaim.riel24_mut().stats.reclaim_page += 1;
    let taken = spin_lock(k, ctx);
    let mut maxscan = k.zones[z].lruvec.lists[SLOT_CLEAN].len;
    let mut visits = 0u64;
    let mut found = None;
    while maxscan > 0 {
        maxscan -= 1;
        let p = k.zones[z].lruvec.lists[SLOT_CLEAN].tail;
        if p == crate::mm_types::NIL {
            break;
        }
        visits += 1;
        let f = k.fr.flags[p as usize];
        if f & pg::REFERENCED != 0 || (!buffers(k, p) && page_count(k, p) > 1) {
            activate_page(k, p);
            count_clean_out(k, z, CLEAN_TO_ACTIVE);
            continue;
        }
        if buffers(k, p) || f & (pg::DIRTY | pg::LOCKED | pg::WRITEBACK) != 0 {
            del_page_from_lru(k, p);
            add_dirty(k, p);
            count_clean_out(k, z, CLEAN_TO_DIRTY);
            continue;
        }
        if k.fr.has(p, pg::ANON) && !k.fr.has(p, pg::SWAPCACHE) {
            // "VM: reclaim_page, found unknown page": an anonymous page that left the swap cache
            // while on this list has no cache to leave. 2.4.9 takes it off the list and goes on;
            // here it goes where 2.4 keeps anonymous pages outside the swap cache.
            del_page_from_lru(k, p);
            add_to_list(k, p, SLOT_OFF);
            continue;
        }
        del_page_from_lru(k, p);
        if k.fr.has(p, pg::SWAPCACHE) {
            crate::swap_state::delete_from_swap_cache(k, p);
            if k.fr.has(p, pg::ANON) {
                crate::swap_state::release_anon_accounting(k, p);
            }
        } else {
            k.remove_from_page_cache(p, 0);
        }
        reset_page(k, p);
        k.reclaim.riel24_mut().memory_pressure += 1;
        count_clean_out(k, z, taker);
        found = Some(p);
        break;
    }
    let extra = if found.is_some() { k.cost.pagecache_add } else { 0 };
    k.charge(ctx, KFunc::ReclaimPage, visits * k.cost.lru_scan + extra);
    spin_unlock(k, ctx, taken, Holder::Other);
    found
}

fn rss(k: &Kernel, mm: u32) -> u64 {
    let m = k.mm(mm);
    m.rss_anon + m.rss_file + m.rss_shmem
}

/// `swap_amount`: a 32nd of the mm's resident pages, at least 8.
fn swap_amount(k: &Kernel, mm: u32) -> u64 {
    let r = rss(k, mm);
    let nr = r >> 5;
    if nr < 8 {
        r.min(8)
    } else {
        nr
    }
}

/// `swap_out(DEF_PRIORITY)`: walk the page tables of the allocating process, then of a few
/// processes in turn (`(mmlist_nr << 4) >> priority`, plus one), `swap_amount` present PTEs each.
/// VM_LOCKED areas are passed over whole.
pub fn swap_out(k: &mut Kernel, ctx: &mut Ctx) {
    k.reclaim.riel24_mut().stats.swap_out += 1;
    if let Some(mm) = ctx.mm.filter(|_| !ctx.is_kswapd) {
        if k.mms.get(mm as usize).is_some_and(|m| m.is_some()) {
            let n = swap_amount(k, mm);
            swap_out_mm(k, ctx, mm, n);
        }
    }
    let nr = k.mms.iter().filter(|m| m.is_some()).count() as u64;
    if nr == 0 {
        return;
    }
    let mut counter = (nr << 4) >> DEF_PRIORITY;
    loop {
        let total = k.mms.len();
        let mut i = k.reclaim.riel24_mut().swap_mm % total;
        while k.mms[i].is_none() {
            i = (i + 1) % total;
        }
        k.reclaim.riel24_mut().swap_mm = i + 1;
        let n = swap_amount(k, i as u32);
        swap_out_mm(k, ctx, i as u32, n);
        if counter == 0 {
            break;
        }
        counter -= 1;
    }
}

fn swap_out_mm(k: &mut Kernel, ctx: &mut Ctx, mm: u32, mut count: u64) {
    if count == 0 {
        return;
    }
    if k.reclaim.riel24_mut().swap_address.len() <= mm as usize {
        k.reclaim.riel24_mut().swap_address.resize(mm as usize + 1, 0);
    }
    let addr = k.reclaim.riel24_mut().swap_address[mm as usize];
    let mut steps = 0u64;
    let mut i = k.mm(mm).vmas.partition_point(|v| v.end <= addr);
    let mut next_addr = 0;
    'vmas: while i < k.mm(mm).vmas.len() {
        let (start, end, flags) = {
            let v = &k.mm(mm).vmas[i];
            (v.start, v.end, v.flags)
        };
        i += 1;
        steps += 4;
        if flags & vm::LOCKED != 0 {
            continue;
        }
        let mut vpn = start.max(addr);
        while vpn < end {
            let Some(slot) = k.pte_slot(mm, vpn) else {
                // No page table here (pmd_none): the whole table's range is passed over.
                vpn = ((vpn / PTRS_PER_TABLE) + 1) * PTRS_PER_TABLE;
                steps += 1;
                continue;
            };
            steps += 1;
            let e = k.pt.entries[slot];
            if pte::present(e) {
                let p = pte::pfn(e);
                if p != k.zero_pfn && !k.fr.has(p, pg::RESERVED) {
                    try_to_swap_out(k, ctx, mm, flags, slot, p);
                    count -= 1;
                    if count == 0 {
                        next_addr = vpn + 1;
                        break 'vmas;
                    }
                }
            }
            vpn += 1;
        }
    }
    k.reclaim.riel24_mut().swap_address[mm as usize] = next_addr;
    k.charge(ctx, KFunc::SwapOut, steps * k.cost.pte_walk);
}

/// `try_to_swap_out` for one present PTE of an unlocked VMA.
fn try_to_swap_out(k: &mut Kernel, ctx: &mut Ctx, mm: u32, vflags: u32, slot: usize, p: Pfn) {
    k.reclaim.riel24_mut().stats.zone_inactive_plenty += 1;
    let z = k.zone_of(p);
    if zone_inactive_plenty(k, z) {
        return;
    }
    let e = k.pt.entries[slot];
    if e & pte::YOUNG != 0 {
        k.pt.entries[slot] = e & !pte::YOUNG;
        k.fr.set(p, pg::REFERENCED);
        refresh(k, p);
        return;
    }
    if k.fr.flags[p as usize] & (pg::LOCKED | pg::WRITEBACK) != 0 {
        return;
    }
    let anon = k.fr.has(p, pg::ANON);
    let dirty = e & pte::DIRTY != 0;
    let newe = if k.fr.has(p, pg::SWAPCACHE) {
        let s = crate::swap_state::page_swap_slot(k, p).expect("swap-cache page has a slot");
        crate::swap_state::swap_duplicate(k, s);
        if dirty {
            k.fr.set(p, pg::DIRTY);
        }
        s + 1
    } else if has_mapping(k, p) {
        if dirty {
            // `set_page_dirty`: PG_dirty, which page_launder writes with writepage.
            crate::page_writeback::set_page_dirty(k, ctx, p);
            k.fr.extra[p as usize] &= !BH_DIRTIED;
        }
        0
    } else if !dirty && !k.fr.has(p, pg::DIRTY) {
        0
    } else {
        // A dirty anonymous page: give it a swap slot and put it in the swap cache, which puts it
        // on the LRU (inactive_dirty) for page_launder to write.
        if !crate::swap_state::add_to_swap(k, ctx, p) {
            return;
        }
        if k.fr.has(p, pg::LRU) && k.fr.lru_list(p) as usize == SLOT_OFF {
            del_page_from_lru(k, p);
            super::lru_cache_add(k, p);
        }
        let s = crate::swap_state::page_swap_slot(k, p).expect("just added");
        crate::swap_state::swap_duplicate(k, s);
        s + 1
    };
    k.unmap_pte(mm, vflags, slot, p, newe);
    k.charge(ctx, KFunc::SwapOut, k.cost.rmap_one);
    if anon && k.fr.mapcount[p as usize] == 0 && !k.fr.has(p, pg::SWAPCACHE) {
        // The last reference to a clean anonymous page.
        crate::swap_state::free_anon_page(k, ctx, p);
        return;
    }
    if !k.fr.has(p, pg::REFERENCED) {
        deactivate_page(k, p);
    }
}
