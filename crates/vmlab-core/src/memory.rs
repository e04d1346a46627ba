//! Page faults (`mm/memory.c`, `filemap_fault`, `shmem_fault`): anonymous (zero page on read),
//! copy-on-write, file and shm faults, swap-in. Locking (mmap_sem / per-VMA) is the caller's —
//! see `mmap_lock` — because what a fault does with its lock while it waits for I/O is
//! exactly what differs between eras.

use crate::filemap::PageRes;
use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmap::{pte, vm, VmaKind};
use crate::page_alloc::{AllocFail, Gfp};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

#[cfg(test)]
#[path = "memory_shm_tests.rs"]
mod shm_tests;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The PTE is now present.
    Done,
    /// The page is under I/O until this time; retry the fault then. `major` when this fault
    /// started the I/O.
    Wait { until: u64, major: bool },
    /// No memory (the OOM killer may have been invoked).
    Oom,
    /// SIGSEGV/SIGBUS: no VMA, or an access the VMA does not allow.
    Segv,
}

impl Kernel {
    /// A user access to `vpn`: a TLB-hit access sets the young (and dirty) bits; anything else
    /// is a page fault.
    #[inline]
    pub fn access(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64, write: bool) -> Fault {
        if let Some(slot) = self.pte_slot(mm, vpn) {
            let e = self.pt.entries[slot];
            if pte::present(e) && (!write || e & pte::WRITE != 0) {
                self.pt.entries[slot] = e | pte::YOUNG | if write { pte::DIRTY } else { 0 };
                ctx.user_ns += 2;
                return Fault::Done;
            }
        }
        self.handle_mm_fault(ctx, mm, vpn, write)
    }

    /// `handle_mm_fault`, with the PGFAULT accounting of the profile's era.
    pub fn handle_mm_fault(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64, write: bool) -> Fault {
        let on_completion = self.profile.pgfault_on_completion;
        if !on_completion && !ctx.fault_resumed {
            self.ev.inc(Vm::Pgfault);
        }
        self.psi_workingset_read = false;
        let r = self.do_handle_mm_fault(ctx, mm, vpn, write);
        if on_completion && !matches!(r, Fault::Wait { .. }) {
            self.ev.inc(Vm::Pgfault);
        }
        if self.memcg.active() {
            let g = crate::memcontrol::ctx_memcg(self, ctx);
            if !matches!(r, Fault::Wait { .. }) {
                crate::memcontrol::count_event(self, g, Vm::Pgfault, 1);
            }
            if let Fault::Wait { major: true, .. } = r {
                crate::memcontrol::count_event(self, g, Vm::Pgmajfault, 1);
            }
        }
        if let Fault::Wait { until, major: true } = r {
            // Reading back a page of the workingset stalls on memory, not only on I/O
            // (swap_readpage / folio_wait_bit under psi_memstall_enter for PG_workingset).
            if std::mem::take(&mut self.psi_workingset_read) {
                crate::psi::memstall_wait(self, ctx, until);
            }
        }
        r
    }

    fn do_handle_mm_fault(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64, write: bool) -> Fault {
        self.charge(ctx, KFunc::HandleMmFault, self.cost.fault);
        crate::vmscan::fault_page_table_lock(self, ctx, mm);
        let Some(vi) = self.find_vma(mm, vpn) else { return Fault::Segv };
        let (flags, kind) = {
            let v = &self.mm(mm).vmas[vi];
            (v.flags, v.kind)
        };
        if write && flags & vm::WRITE == 0 {
            return Fault::Segv;
        }
        let slot = match self.pte_alloc(ctx, mm, vpn) {
            Ok(s) => s,
            Err(_) => return Fault::Oom,
        };
        let e = self.pt.entries[slot];
        if pte::present(e) {
            if write && e & pte::WRITE == 0 {
                return self.do_wp_page(ctx, mm, vpn, slot, flags);
            }
            self.pt.entries[slot] = e | pte::YOUNG | if write { pte::DIRTY } else { 0 };
            return Fault::Done;
        }
        if let Some(s) = pte::swap_slot(e) {
            return self.do_swap_page(ctx, mm, vi, vpn, slot, s, write, flags);
        }
        match kind {
            VmaKind::Anon => self.do_anonymous_page(ctx, mm, vpn, slot, write, flags),
            VmaKind::File { file, pgoff } => {
                let idx = pgoff + (vpn - self.mm(mm).vmas[vi].start);
                if self.files[file as usize].shmem {
                    self.shmem_fault(ctx, mm, slot, file, idx, write, flags)
                } else {
                    self.filemap_fault(ctx, mm, vpn, slot, file, idx, write, flags)
                }
            }
        }
    }

    /// A fresh anonymous page: zeroed, on the LRU, mapped.
    fn new_anon_page(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64) -> Result<Pfn, AllocFail> {
        let p = self.alloc_pages(ctx, Gfp::highuser_movable(), 0)?;
        self.charge(ctx, KFunc::ClearPage, self.cost.clear_page);
        self.first_touch(ctx, KFunc::ClearPage, p);
        self.fr.flags[p as usize] |= pg::ANON | pg::SWAPBACKED | pg::UPTODATE;
        self.fr.mapping[p as usize] = self.mm(mm).anon_vma;
        self.fr.index[p as usize] = vpn as u32;
        self.g.anon += 1;
        crate::memcontrol::charge(self, ctx, p);
        crate::vmscan::lru_cache_add(self, ctx, p);
        Ok(p)
    }

    fn map_new(&mut self, ctx: &mut Ctx, mm: u32, slot: usize, p: Pfn, flags: u32, e: u32) {
        self.page_add_rmap(p);
        self.pte_set_slot(slot, p | pte::PRESENT | pte::YOUNG | e);
        if flags & vm::LOCKED != 0 {
            crate::mlock::mlock_vma_page(self, ctx, p);
        }
        let m = self.mm_mut(mm);
        if flags & vm::SHM != 0 {
            m.rss_shmem += 1;
        } else {
            m.rss_file += 1;
        }
    }

    fn do_anonymous_page(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64, slot: usize, write: bool, flags: u32) -> Fault {
        self.charge(ctx, KFunc::DoAnonymousPage, 0);
        if !write {
            // The shared zero page: no memory until the first write.
            self.pte_set_slot(slot, self.zero_pfn | pte::PRESENT | pte::YOUNG);
            return Fault::Done;
        }
        match self.new_anon_page(ctx, mm, vpn) {
            Ok(p) => {
                self.map_anon(ctx, mm, slot, p, flags, true);
                Fault::Done
            }
            Err(_) => Fault::Oom,
        }
    }

    fn map_anon(&mut self, ctx: &mut Ctx, mm: u32, slot: usize, p: Pfn, flags: u32, write: bool) {
        self.page_add_rmap(p);
        let w = if write { pte::WRITE | pte::DIRTY } else { 0 };
        self.pte_set_slot(slot, p | pte::PRESENT | pte::YOUNG | w);
        self.mm_mut(mm).rss_anon += 1;
        if flags & vm::LOCKED != 0 {
            crate::mlock::mlock_vma_page(self, ctx, p);
        }
    }

    /// `do_wp_page`: write to a write-protected PTE (zero page, COW after fork, private file).
    fn do_wp_page(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64, slot: usize, flags: u32) -> Fault {
        self.charge(ctx, KFunc::DoWpPage, 0);
        let e = self.pt.entries[slot];
        let old = pte::pfn(e);
        if old == self.zero_pfn {
            return match self.new_anon_page(ctx, mm, vpn) {
                Ok(p) => {
                    self.pte_set_slot(slot, 0);
                    self.map_anon(ctx, mm, slot, p, flags, true);
                    Fault::Done
                }
                Err(_) => Fault::Oom,
            };
        }
        let anon = self.fr.has(old, pg::ANON);
        if flags & vm::SHARED != 0 {
            // Shared writable mapping: just make it writable and dirty.
            self.pt.entries[slot] = e | pte::WRITE | pte::DIRTY | pte::YOUNG;
            if !anon {
                crate::page_writeback::set_page_dirty(self, ctx, old);
            }
            return Fault::Done;
        }
        if anon && self.fr.mapcount[old as usize] == 1 {
            // Reuse: we are the only user.
            if self.fr.has(old, pg::SWAPCACHE) && !self.fr.has(old, pg::WRITEBACK) {
                crate::swap_state::delete_from_swap_cache(self, old);
            }
            self.pt.entries[slot] = e | pte::WRITE | pte::DIRTY | pte::YOUNG;
            self.ev.inc(Vm::Pgreuse);
            return Fault::Done;
        }
        let p = match self.new_anon_page(ctx, mm, vpn) {
            Ok(p) => p,
            Err(_) => return Fault::Oom,
        };
        // The allocation may have reclaimed: try_to_unmap can have turned this very PTE into a
        // swap entry (or none), and page_referenced cleared its young bit. The kernel drops the
        // PTE lock to allocate and re-checks `pte_same` after; on a change it frees the copy and
        // returns, and the write faults again on whatever the PTE is now.
        if self.pt.entries[slot] != e {
            crate::swap_state::free_anon_page(self, ctx, p);
            return self.handle_mm_fault(ctx, mm, vpn, true);
        }
        self.charge(ctx, KFunc::CopyPage, self.cost.copy_page.saturating_sub(self.cost.clear_page));
        self.page_remove_rmap(old);
        {
            let m = self.mm_mut(mm);
            if anon {
                m.rss_anon -= 1;
            } else if flags & vm::SHM != 0 {
                m.rss_shmem -= 1;
            } else {
                m.rss_file -= 1;
            }
        }
        if anon && self.fr.mapcount[old as usize] == 0 {
            crate::swap_state::free_anon_page(self, ctx, old);
        }
        self.pte_set_slot(slot, 0);
        self.map_anon(ctx, mm, slot, p, flags, true);
        Fault::Done
    }

    #[allow(clippy::too_many_arguments)]
    fn do_swap_page(
        &mut self,
        ctx: &mut Ctx,
        mm: u32,
        vi: usize,
        vpn: u64,
        slot: usize,
        s: u32,
        write: bool,
        flags: u32,
    ) -> Fault {
        self.charge(ctx, KFunc::DoSwapPage, self.cost.do_swap_page);
        let cached = self.swap.as_ref().map(|sw| sw.cache[s as usize]).unwrap_or(NIL);
        if cached == NIL {
            let av = self.mm(mm).anon_vma;
            return match crate::swap_state::swapin_readahead(self, ctx, mm, vi, vpn, slot, s, av) {
                Ok((p, t)) => {
                    self.ev.inc(Vm::Pgmajfault);
                    Fault::Wait { until: self.wait_on_read(ctx, p, t), major: true }
                }
                Err(_) => Fault::Oom,
            };
        }
        let p = cached;
        crate::swap_state::swap_cache_hit(self, mm, vi, vpn, p);
        if self.fr.has(p, pg::LOCKED) {
            return Fault::Wait { until: self.wait_on_locked(ctx, p, ctx.clock()), major: false };
        }
        if let (true, VmaKind::File { file, pgoff }) = (flags & vm::SHM != 0, self.mm(mm).vmas[vi].kind) {
            // A shm page that the page-table walk unmapped while it sat in the swap cache (2.4's
            // try_to_swap_out gives every swap-cache page a swap PTE). It is still the segment's
            // page, mapped elsewhere as such and held by the segment's index: map it back as
            // one, with the shared mapping's own protection, as 2.4's do_swap_page does with
            // `vma->vm_page_prot`. The index keeps its slot until shmem takes the page back.
            let idx = pgoff + (vpn - self.mm(mm).vmas[vi].start);
            let w = if flags & vm::WRITE != 0 { pte::WRITE | if write { pte::DIRTY } else { 0 } } else { 0 };
            self.map_shm_swapcache_page(ctx, mm, slot, s, p, (file, idx), flags, w);
            crate::vmscan::nopage_accessed(self, p);
            return Fault::Done;
        }
        if !self.fr.has(p, pg::ANON) {
            // A swap-cache page that no longer belongs to anyone we know: treat as fresh.
            self.fr.set(p, pg::ANON);
            self.g.anon += 1;
        }
        self.fr.mapping[p as usize] = self.mm(mm).anon_vma;
        self.fr.index[p as usize] = vpn as u32;
        crate::swap_state::swap_free(self, ctx, s);
        let exclusive = self.fr.mapcount[p as usize] == 0;
        let make_writable = write && exclusive;
        if make_writable && !self.fr.has(p, pg::WRITEBACK) {
            crate::swap_state::delete_from_swap_cache(self, p);
        }
        self.pte_set_slot(slot, 0);
        self.map_anon(ctx, mm, slot, p, flags, make_writable);
        if write && !make_writable {
            return self.do_wp_page(ctx, mm, vpn, slot, flags);
        }
        Fault::Done
    }

    #[allow(clippy::too_many_arguments)]
    fn filemap_fault(
        &mut self,
        ctx: &mut Ctx,
        mm: u32,
        vpn: u64,
        slot: usize,
        file: u32,
        idx: u64,
        write: bool,
        flags: u32,
    ) -> Fault {
        self.charge(ctx, KFunc::FilemapFault, 0);
        if idx >= self.files[file as usize].npages() {
            return Fault::Segv;
        }
        let missing = self.filemap_fault_readahead(ctx, file, idx);
        match self.find_page_wait(ctx, file, idx) {
            PageRes::Ready(p) => {
                // Mapping and rmap are per page in this model: a large folio is split first.
                self.split_folio(self.fr.folio_head(p));
                self.filemap_fault_done(file, idx);
                if write && flags & vm::SHARED == 0 {
                    // Private write: copy into an anonymous page.
                    return match self.new_anon_page(ctx, mm, vpn) {
                        Ok(np) => {
                            self.charge(ctx, KFunc::CopyPage, self.cost.copy_page);
                            self.map_anon(ctx, mm, slot, np, flags, true);
                            Fault::Done
                        }
                        Err(_) => Fault::Oom,
                    };
                }
                let w = if write { pte::WRITE | pte::DIRTY } else { 0 };
                if write {
                    crate::page_writeback::set_page_dirty(self, ctx, p);
                }
                self.map_new(ctx, mm, slot, p, flags, w);
                crate::vmscan::nopage_accessed(self, p);
                Fault::Done
            }
            PageRes::Wait(t) => {
                if missing {
                    self.ev.inc(Vm::Pgmajfault);
                }
                Fault::Wait { until: t, major: missing }
            }
            PageRes::Oom => Fault::Oom,
        }
    }

    /// `shmem_fault`: from the segment's page cache, from the swap cache, from swap, or a new page.
    #[allow(clippy::too_many_arguments)]
    fn shmem_fault(
        &mut self,
        ctx: &mut Ctx,
        mm: u32,
        slot: usize,
        file: u32,
        idx: u64,
        write: bool,
        flags: u32,
    ) -> Fault {
        if idx >= self.files[file as usize].npages() {
            return Fault::Segv;
        }
        let w = if write || flags & vm::WRITE != 0 { pte::WRITE | if write { pte::DIRTY } else { 0 } } else { 0 };
        if let Some(p) = self.files[file as usize].find(idx) {
            if self.fr.has(p, pg::LOCKED) {
                return Fault::Wait { until: self.wait_on_locked(ctx, p, ctx.clock()), major: false };
            }
            self.map_new(ctx, mm, slot, p, flags | vm::SHM, w);
            crate::vmscan::nopage_accessed(self, p);
            return Fault::Done;
        }
        let swapped = self.files[file as usize].swapped.get(idx as usize).copied().unwrap_or(0);
        if swapped != 0 {
            let s = swapped - 1;
            let cached = self.swap.as_ref().map(|sw| sw.cache[s as usize]).unwrap_or(NIL);
            if cached != NIL {
                let p = cached;
                if self.fr.has(p, pg::LOCKED) || self.fr.has(p, pg::WRITEBACK) {
                    return Fault::Wait { until: self.wait_on_locked(ctx, p, ctx.clock() + 1_000_000), major: false };
                }
                // Back from the swap cache into the segment.
                self.shmem_unuse(ctx, file, idx, s, p);
                self.map_new(ctx, mm, slot, p, flags | vm::SHM, w);
                crate::vmscan::nopage_accessed(self, p);
                return Fault::Done;
            }
            // Read it from swap into the swap cache; the retry moves it into the segment.
            let p = match self.alloc_pages(ctx, Gfp::highuser_movable(), 0) {
                Ok(p) => p,
                Err(_) => return Fault::Oom,
            };
            self.fr.flags[p as usize] |= pg::SWAPBACKED | pg::LOCKED | pg::SWAPCACHE;
            self.fr.mapping[p as usize] = file;
            self.fr.index[p as usize] = idx as u32;
            let (disk, base) = {
                let sw = self.swap.as_mut().expect("swap");
                sw.cache[s as usize] = p;
                sw.pfn_slot.insert(p, s);
                (sw.disk, sw.base)
            };
            self.g.swapcache += 1;
            crate::memcontrol::charge(self, ctx, p);
            crate::vmscan::lru_cache_add(self, ctx, p);
            let t = self.disks[disk].submit(ctx.clock(), base + s as u64 * 4096, 4096, false);
            self.inflight.insert(p, t);
            self.queue_io_done(t, disk, vec![p], false);
            self.ev.inc(Vm::Pswpin);
            self.ev.inc(Vm::Pgmajfault);
            self.ev.add(Vm::Pgpgin, 4);
            return Fault::Wait { until: self.wait_on_read(ctx, p, t), major: true };
        }
        let p = match self.alloc_pages(ctx, Gfp::highuser_movable(), 0) {
            Ok(p) => p,
            Err(_) => return Fault::Oom,
        };
        self.charge(ctx, KFunc::ClearPage, self.cost.clear_page);
        self.first_touch(ctx, KFunc::ClearPage, p);
        self.add_to_page_cache(ctx, file, idx, p);
        self.map_new(ctx, mm, slot, p, flags | vm::SHM, w);
        crate::vmscan::nopage_accessed(self, p);
        Fault::Done
    }

    /// A swap-cache page of a shm segment's slot is the segment's page (file, index), never an
    /// anonymous one — even when swap readahead read it, as it reads every slot near a fault,
    /// for an anonymous owner. Taken over before any PTE maps it, so every mapping of it is
    /// `unuse_pte` (swapoff): point the swap PTE of `mm` at `vpn`, if it still holds slot `s`, at
    /// `s`'s page `p`. The PTE is old and not writable, as `mk_pte(page, vma->vm_page_prot)`
    /// makes it for a private mapping (a later write reuses the page through `do_wp_page`); a
    /// shm mapping's page goes back to its segment, as `do_swap_page` does with one. False when
    /// the PTE no longer holds `s` (the task faulted it in or exited since the index was made).
    pub(crate) fn unuse_pte(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64, s: u32, p: Pfn) -> bool {
        if self.mms.get(mm as usize).is_none_or(|m| m.is_none()) {
            return false;
        }
        let Some(slot) = self.pte_slot(mm, vpn) else { return false };
        if pte::swap_slot(self.pt.entries[slot]) != Some(s) {
            return false;
        }
        let Some(vi) = self.find_vma(mm, vpn) else { return false };
        let v = &self.mm(mm).vmas[vi];
        let flags = v.flags;
        if let (true, VmaKind::File { file, pgoff }) = (flags & vm::SHM != 0, v.kind) {
            let idx = pgoff + (vpn - v.start);
            self.map_shm_swapcache_page(ctx, mm, slot, s, p, (file, idx), flags, 0);
            self.pt.entries[slot] &= !pte::YOUNG;
            return true;
        }
        if self.fr.mapcount[p as usize] == 0 {
            self.fr.mapping[p as usize] = self.mm(mm).anon_vma;
            self.fr.index[p as usize] = vpn as u32;
        }
        crate::swap_state::swap_free(self, ctx, s);
        self.pte_set_slot(slot, 0);
        self.map_anon(ctx, mm, slot, p, flags, false);
        self.pt.entries[slot] &= !pte::YOUNG;
        true
    }

    /// `shmem_unuse` for one index entry: page `idx` of shm segment `file`, swapped to slot `s`,
    /// takes `s`'s page `p` back into the segment's page cache — `shmem_fault`'s step too, for a
    /// page it finds in the swap cache. False when the entry no longer holds `s`.
    pub(crate) fn shmem_unuse(&mut self, ctx: &mut Ctx, file: u32, idx: u64, s: u32, p: Pfn) -> bool {
        let f = file as usize;
        if self.files.get(f).and_then(|fl| fl.swapped.get(idx as usize)).copied() != Some(s + 1) {
            return false;
        }
        self.shm_claim_swapcache_page(p, file, idx);
        crate::swap_state::delete_from_swap_cache(self, p);
        self.files[f].swapped[idx as usize] = 0;
        crate::swap_state::swap_free(self, ctx, s);
        let fl = &mut self.files[f];
        fl.pages[idx as usize] = p;
        fl.nrpages += 1;
        self.g.file += 1;
        self.g.shmem += 1;
        // Its swap copy was just freed: the page is the only copy again.
        self.fr.set(p, pg::DIRTY);
        true
    }

    /// A shm page in the swap cache mapped at the swap PTE `slot` that held slot `s`
    /// (`do_swap_page`, `unuse_pte`): still the segment's page (`file`, `idx`), mapped with the
    /// shared mapping's own protection (`w`, the PTE's write bits); the segment's index keeps
    /// its slot until shmem takes the page back.
    #[allow(clippy::too_many_arguments)]
    fn map_shm_swapcache_page(
        &mut self,
        ctx: &mut Ctx,
        mm: u32,
        slot: usize,
        s: u32,
        p: Pfn,
        (file, idx): (u32, u64),
        flags: u32,
        w: u32,
    ) {
        self.shm_claim_swapcache_page(p, file, idx);
        crate::swap_state::swap_free(self, ctx, s);
        self.pte_set_slot(slot, 0);
        self.map_new(ctx, mm, slot, p, flags, w);
    }

    /// A swap-cache page of a shm segment's slot is the segment's page (file, index), never an
    /// anonymous one — even when swap readahead read it, as it reads every slot near a fault,
    /// for an anonymous owner. Taken over before any PTE maps it, so every mapping of it is
    /// counted, and later uncounted, as shm.
    fn shm_claim_swapcache_page(&mut self, p: Pfn, file: u32, idx: u64) {
        if self.fr.has(p, pg::ANON) {
            self.fr.clear(p, pg::ANON);
            self.g.anon -= 1;
        }
        self.fr.mapping[p as usize] = file;
        self.fr.index[p as usize] = idx as u32;
    }
}
