//! Reverse mapping (`mm/rmap.c`): from a page to the PTEs that map it — anon pages through their
//! anon_vma (same virtual address in every mm that shares it since fork), file and shm pages
//! through the file's i_mmap list. Used by reclaim to test young bits and to unmap.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmap::{pte, vm};
use crate::stats::kfunc::KFunc;

/// One PTE that maps a page.
#[derive(Clone, Copy, Debug)]
pub struct Mapping {
    pub mm: u32,
    pub vpn: u64,
    pub slot: usize,
    pub vma_flags: u32,
}

impl Kernel {
    /// `page_add_*_rmap`.
    #[inline]
    pub fn page_add_rmap(&mut self, p: Pfn) {
        let i = p as usize;
        if self.fr.mapcount[i] == 0 {
            if self.fr.flags[i] & pg::ANON == 0 {
                self.g.mapped += 1;
            } else {
                self.g.anon_mapped += 1;
            }
        }
        self.fr.mapcount[i] += 1;
        crate::vmscan::page_mapcount_changed(self, p, true);
    }

    /// `page_remove_rmap`.
    #[inline]
    pub fn page_remove_rmap(&mut self, p: Pfn) {
        let i = p as usize;
        debug_assert!(self.fr.mapcount[i] > 0, "mapcount underflow on pfn {p}");
        self.fr.mapcount[i] -= 1;
        if self.fr.mapcount[i] == 0 {
            if self.fr.flags[i] & pg::ANON == 0 {
                self.g.mapped -= 1;
            } else {
                self.g.anon_mapped -= 1;
            }
        }
        crate::vmscan::page_mapcount_changed(self, p, false);
    }

    /// Every PTE mapping `p`, into `out` (cleared first). Costs one rmap step per candidate.
    pub fn rmap_walk(&mut self, ctx: &mut Ctx, p: Pfn, out: &mut Vec<Mapping>) {
        out.clear();
        if self.fr.mapcount[p as usize] == 0 {
            return;
        }
        let mut visited = 0u64;
        if self.fr.has(p, pg::ANON) {
            let av = self.fr.mapping[p as usize] as usize;
            let vpn = self.fr.index[p as usize] as u64;
            let n = self.anon_vmas[av].mms.len();
            for k in 0..n {
                let mm = self.anon_vmas[av].mms[k];
                visited += 1;
                if self.mms[mm as usize].is_none() {
                    continue;
                }
                if let Some(slot) = self.pte_slot(mm, vpn) {
                    let e = self.pt.entries[slot];
                    if pte::present(e) && pte::pfn(e) == p {
                        let flags = self.find_vma(mm, vpn).map(|i| self.mm(mm).vmas[i].flags).unwrap_or(0);
                        out.push(Mapping { mm, vpn, slot, vma_flags: flags });
                    }
                }
            }
        } else {
            let file = self.fr.mapping[p as usize] as usize;
            let idx = self.fr.index[p as usize] as u64;
            let n = self.files[file].i_mmap.len();
            for k in 0..n {
                let m = self.files[file].i_mmap[k];
                visited += 1;
                if idx < m.pgoff || idx >= m.pgoff + (m.end - m.start) {
                    continue;
                }
                let vpn = m.start + (idx - m.pgoff);
                if let Some(slot) = self.pte_slot(m.mm, vpn) {
                    let e = self.pt.entries[slot];
                    if pte::present(e) && pte::pfn(e) == p {
                        let flags = self.find_vma(m.mm, vpn).map(|i| self.mm(m.mm).vmas[i].flags).unwrap_or(0);
                        out.push(Mapping { mm: m.mm, vpn, slot, vma_flags: flags });
                    }
                }
            }
        }
        self.charge(ctx, KFunc::FolioReferenced, visited * self.cost.rmap_one);
    }

    /// `folio_referenced`: test-and-clear the young bit of every mapping. Returns the number of
    /// young PTEs and whether a VM_LOCKED VMA maps the page.
    pub fn folio_referenced(&mut self, ctx: &mut Ctx, p: Pfn) -> (u32, bool) {
        let mut buf = std::mem::take(&mut self.rmap_buf);
        self.rmap_walk(ctx, p, &mut buf);
        let mut young = 0;
        let mut locked = false;
        for m in &buf {
            if m.vma_flags & vm::LOCKED != 0 {
                locked = true;
            }
            let e = self.pt.entries[m.slot];
            if e & pte::YOUNG != 0 {
                self.pt.entries[m.slot] = e & !pte::YOUNG;
                young += 1;
            }
        }
        self.rmap_buf = buf;
        (young, locked)
    }

    /// A PTE of `mm` in a VMA with `vma_flags` stops mapping `p`: it becomes `newe` (a swap
    /// entry, or none), the page loses the mapping (`page_remove_rmap`) and the mm its rss.
    pub fn unmap_pte(&mut self, mm: u32, vma_flags: u32, slot: usize, p: Pfn, newe: u32) {
        self.pte_set_slot(slot, newe);
        let anon = self.fr.has(p, pg::ANON);
        self.page_remove_rmap(p);
        if let Some(m) = self.mms[mm as usize].as_mut() {
            let rss = if anon {
                &mut m.rss_anon
            } else if vma_flags & vm::SHM != 0 {
                &mut m.rss_shmem
            } else {
                &mut m.rss_file
            };
            *rss = rss.saturating_sub(1);
        }
    }

    /// `try_to_unmap`: remove every mapping of `p`. Anon pages must be in the swap cache (their
    /// PTEs become swap entries). Fails (returns false) on an mlocked VMA, leaving the rest mapped.
    pub fn try_to_unmap(&mut self, ctx: &mut Ctx, p: Pfn) -> bool {
        let mut buf = std::mem::take(&mut self.rmap_buf);
        self.rmap_walk(ctx, p, &mut buf);
        let anon = self.fr.has(p, pg::ANON);
        let slot = if anon { crate::swap_state::page_swap_slot(self, p) } else { None };
        let mut ok = true;
        for m in &buf {
            if m.vma_flags & vm::LOCKED != 0 {
                ok = false;
                continue;
            }
            let e = self.pt.entries[m.slot];
            if e & pte::DIRTY != 0 {
                crate::page_writeback::set_page_dirty(self, ctx, p);
            }
            let newe = match slot {
                Some(s) => {
                    crate::swap_state::swap_duplicate(self, s);
                    s + 1
                }
                None => 0,
            };
            self.unmap_pte(m.mm, m.vma_flags, m.slot, p, newe);
        }
        self.charge(ctx, KFunc::TryToUnmap, buf.len() as u64 * self.cost.rmap_one);
        self.rmap_buf = buf;
        ok && self.fr.mapcount[p as usize] == 0
    }
}
