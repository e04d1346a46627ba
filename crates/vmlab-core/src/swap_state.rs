//! Swap areas, slots and the swap cache (`mm/swapfile.c`, `mm/swap_state.c`). A slot's count is
//! the number of PTEs (or shm index entries) holding it; the swap cache links slot ↔ page while
//! the page is both in memory and on swap.

use rustc_hash::FxHashMap;

use crate::kernel::{Ctx, IoDone, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

pub struct SwapInfo {
    pub disk: usize,
    /// Byte offset of the swap area on its disk.
    pub base: u64,
    pub nslots: u32,
    /// References per slot (PTEs + shm entries), not counting the swap cache.
    pub count: Vec<u16>,
    /// Slot → swap-cache page (NIL when not cached).
    pub cache: Vec<Pfn>,
    /// Workingset shadow of an evicted anon page, per slot.
    pub shadow: Vec<u32>,
    pub pfn_slot: FxHashMap<Pfn, u32>,
    pub inuse: u32,
    cursor: u32,
}

impl SwapInfo {
    pub fn new(disk: usize, base: u64, bytes: u64) -> SwapInfo {
        let n = (bytes / 4096).min(u32::MAX as u64 - 2) as u32;
        SwapInfo {
            disk,
            base,
            nslots: n,
            count: vec![0; n as usize],
            cache: vec![NIL; n as usize],
            shadow: vec![0; n as usize],
            pfn_slot: FxHashMap::default(),
            inuse: 0,
            cursor: 0,
        }
    }
    fn slot_free(&self, s: u32) -> bool {
        self.count[s as usize] == 0 && self.cache[s as usize] == NIL
    }
    /// `get_swap_page`: next free slot after the cursor, so consecutive swap-outs are contiguous
    /// on disk (the cluster allocator's effect).
    fn alloc(&mut self) -> Option<u32> {
        if self.inuse >= self.nslots {
            return None;
        }
        for k in 0..self.nslots {
            let s = (self.cursor + k) % self.nslots;
            if self.slot_free(s) {
                self.cursor = (s + 1) % self.nslots;
                self.inuse += 1;
                return Some(s);
            }
        }
        None
    }
    fn maybe_release(&mut self, s: u32) {
        if self.slot_free(s) {
            self.inuse -= 1;
        }
    }
    pub fn free_slots(&self) -> u32 {
        self.nslots - self.inuse
    }
}

pub fn page_swap_slot(k: &Kernel, p: Pfn) -> Option<u32> {
    k.swap.as_ref()?.pfn_slot.get(&p).copied()
}

pub fn total_swap_pages(k: &Kernel) -> u64 {
    k.swap.as_ref().map(|s| s.nslots as u64).unwrap_or(0)
}

pub fn free_swap_pages(k: &Kernel) -> u64 {
    k.swap.as_ref().map(|s| s.free_slots() as u64).unwrap_or(0)
}

/// `add_to_swap`: give an anon (or shm) page a slot and put it in the swap cache, dirty.
pub fn add_to_swap(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
    k.charge(ctx, KFunc::AddToSwap, k.cost.lru_scan * 2);
    let Some(sw) = k.swap.as_mut() else { return false };
    let Some(s) = sw.alloc() else { return false };
    sw.cache[s as usize] = p;
    sw.pfn_slot.insert(p, s);
    k.fr.set(p, pg::SWAPCACHE);
    k.g.swapcache += 1;
    k.fr.set(p, pg::DIRTY);
    true
}

/// `swap_duplicate`: one more PTE holds the slot.
pub fn swap_duplicate(k: &mut Kernel, s: u32) {
    if let Some(sw) = k.swap.as_mut() {
        sw.count[s as usize] = sw.count[s as usize].saturating_add(1);
    }
}

/// `swap_free`: a PTE no longer holds the slot.
pub fn swap_free(k: &mut Kernel, _ctx: &mut Ctx, s: u32) {
    if let Some(sw) = k.swap.as_mut() {
        let c = &mut sw.count[s as usize];
        debug_assert!(*c > 0, "swap slot {s} freed twice");
        *c = c.saturating_sub(1);
        sw.maybe_release(s);
    }
}

/// `delete_from_swap_cache`.
pub fn delete_from_swap_cache(k: &mut Kernel, p: Pfn) {
    let Some(sw) = k.swap.as_mut() else { return };
    if let Some(s) = sw.pfn_slot.remove(&p) {
        sw.cache[s as usize] = NIL;
        sw.maybe_release(s);
        k.fr.clear(p, pg::SWAPCACHE);
        k.g.swapcache -= 1;
    }
}

/// The last mapping of an anonymous page went away: free it now unless I/O still holds it
/// (then reclaim frees it later, as an unmapped swap-cache page).
pub fn free_anon_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    if k.fr.has(p, pg::WRITEBACK) || k.fr.has(p, pg::LOCKED) {
        return;
    }
    if k.fr.has(p, pg::SWAPCACHE) {
        delete_from_swap_cache(k, p);
    }
    crate::vmscan::del_page_from_lru(k, p);
    release_anon_accounting(k, p);
    k.free_pages(ctx, p, 0);
}

pub fn release_anon_accounting(k: &mut Kernel, p: Pfn) {
    if k.fr.has(p, pg::MLOCKED) {
        k.fr.clear(p, pg::MLOCKED);
        k.g.mlock -= 1;
    }
    if k.fr.has(p, pg::DIRTY) {
        k.fr.clear(p, pg::DIRTY);
    }
    k.g.anon -= 1;
}

/// `swap_writepage`: start writing a swap-cache page to its slot.
pub fn swap_writepage(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
    let Some(s) = page_swap_slot(k, p) else { return false };
    let (disk, base) = {
        let sw = k.swap.as_ref().expect("swap");
        (sw.disk, sw.base)
    };
    k.fr.clear(p, pg::DIRTY);
    k.fr.set(p, pg::WRITEBACK);
    k.g.writeback += 1;
    let t = k.disks[disk].submit(ctx.clock(), base + s as u64 * 4096, 4096, true);
    k.charge(ctx, KFunc::Pageout, k.cost.io_submit);
    let irq = !k.disks[disk].last_merged();
    k.io_queue.push((t, IoDone::Write { pages: vec![p], disk, irq }));
    crate::page_writeback::congestion_wait_on_submit(ctx, t);
    k.ev.inc(Vm::Pswpout);
    k.ev.add(Vm::Pgpgout, 4);
    k.events += 1;
    true
}

/// Read slot `s` into a new swap-cache page (`swap_readpage`); returns the page and when the
/// read completes. `None` when no page could be allocated.
pub fn swapin(k: &mut Kernel, ctx: &mut Ctx, s: u32, anon_vma: u32, vpn: u64) -> Result<(Pfn, u64), crate::page_alloc::AllocFail> {
    let p = k.alloc_pages(ctx, crate::page_alloc::Gfp::highuser_movable(), 0)?;
    k.fr.flags[p as usize] |= pg::ANON | pg::SWAPBACKED | pg::LOCKED | pg::SWAPCACHE;
    k.fr.mapping[p as usize] = anon_vma;
    k.fr.index[p as usize] = vpn as u32;
    let (disk, base) = {
        let sw = k.swap.as_mut().expect("swap");
        sw.cache[s as usize] = p;
        sw.pfn_slot.insert(p, s);
        (sw.disk, sw.base)
    };
    k.g.swapcache += 1;
    k.g.anon += 1;
    crate::workingset::refault_anon(k, p, s);
    crate::vmscan::lru_add(k, p);
    let t = k.disks[disk].submit(ctx.clock(), base + s as u64 * 4096, 4096, false);
    k.charge(ctx, KFunc::DoSwapPage, k.cost.io_submit);
    k.inflight.insert(p, t);
    let irq = !k.disks[disk].last_merged();
    k.io_queue.push((t, IoDone::Read { pages: vec![p], disk, irq }));
    k.ev.inc(Vm::Pswpin);
    k.ev.add(Vm::Pgpgin, 4);
    k.events += 1;
    Ok((p, t))
}
