//! Reverse mapping (`mm/rmap.c`): from a page to the PTEs that map it — anon pages through their
//! anon_vma (same virtual address in every mm that shares it since fork), file and shm pages
//! through the file's i_mmap list. Used by reclaim to test young bits and to unmap.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmap::{pte, vm, PTRS_PER_TABLE};
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

    /// The reverse map agrees with the page tables (slow; tests and sweeps): every frame's
    /// mapcount is the number of present PTEs mapping it, every mm's rss the number of its
    /// present PTEs (the shared zero page is in neither), and every swap slot's count the number
    /// of swap PTEs and shm index entries holding it.
    pub fn check_rmap(&self) -> Result<(), String> {
        let mut maps = vec![0u32; self.fr.len()];
        let nslots = self.swap.as_ref().map_or(0, |sw| sw.nslots as usize);
        let mut holds = vec![0u32; nslots];
        for m in self.mms.iter().flatten() {
            let mut rss = 0u64;
            for (&key, &id) in &m.ptes {
                let base = id as usize * PTRS_PER_TABLE as usize;
                for (i, &e) in self.pt.entries[base..base + PTRS_PER_TABLE as usize].iter().enumerate() {
                    if pte::present(e) {
                        let p = pte::pfn(e);
                        if p != self.zero_pfn {
                            maps[p as usize] += 1;
                            rss += 1;
                        }
                    } else if let Some(s) = pte::swap_slot(e) {
                        let vpn = key * PTRS_PER_TABLE + i as u64;
                        let h = holds
                            .get_mut(s as usize)
                            .ok_or_else(|| format!("mm {} vpn {vpn}: swap entry {s} beyond the swap area", m.id))?;
                        *h += 1;
                    }
                }
            }
            let counted = m.rss_anon + m.rss_file + m.rss_shmem;
            if counted != rss {
                return Err(format!("mm {}: rss {counted} but {rss} present PTEs", m.id));
            }
        }
        for (p, (&n, &mc)) in maps.iter().zip(self.fr.mapcount.iter()).enumerate() {
            if n != mc as u32 {
                return Err(format!("pfn {p}: mapcount {mc} but {n} PTEs map it"));
            }
        }
        if let Some(sw) = self.swap.as_ref() {
            for f in self.files.iter().filter(|f| f.shmem) {
                for &e in f.swapped.iter().filter(|&&e| e != 0) {
                    holds[e as usize - 1] += 1;
                }
            }
            for (s, (&h, &c)) in holds.iter().zip(sw.count.iter()).enumerate() {
                if h != c as u32 {
                    return Err(format!("swap slot {s}: count {c} but {h} PTEs and shm entries hold it"));
                }
            }
        }
        Ok(())
    }
}
