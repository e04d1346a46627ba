//! Address spaces (`mm_struct`), VMAs, anon_vmas and page tables. Page-table pages are frames
//! from the allocator (or a quicklist), so `PageTables:` and quicklists are real memory. The PTE
//! contents live in a compact store: one u32 per entry.

use std::collections::BTreeMap;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::sched_lock::RwSem;
use crate::stats::kfunc::KFunc;
use crate::workload::syscalls::{MapBacking, Mapped, MmapArgs};

/// PTE bits. A present PTE holds a pfn (28 bits: 1 TiB of frames); a non-present, non-zero PTE
/// is a swap entry (slot + 1).
pub mod pte {
    pub const PRESENT: u32 = 1 << 31;
    pub const YOUNG: u32 = 1 << 30;
    pub const DIRTY: u32 = 1 << 29;
    pub const WRITE: u32 = 1 << 28;
    pub const PFN_MASK: u32 = (1 << 28) - 1;
    #[inline]
    pub fn pfn(e: u32) -> u32 {
        e & PFN_MASK
    }
    #[inline]
    pub fn present(e: u32) -> bool {
        e & PRESENT != 0
    }
    #[inline]
    pub fn swap_slot(e: u32) -> Option<u32> {
        if e != 0 && e & PRESENT == 0 {
            Some(e - 1)
        } else {
            None
        }
    }
}

pub const PTRS_PER_TABLE: u64 = 512;

pub mod vm {
    pub const READ: u32 = 1;
    pub const WRITE: u32 = 2;
    pub const EXEC: u32 = 4;
    pub const SHARED: u32 = 8;
    pub const LOCKED: u32 = 0x2000;
    /// SysV shared memory (shmfs-backed, swap-backed).
    pub const SHM: u32 = 0x10000;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaKind {
    Anon,
    /// A file (or shm segment) mapped from page `pgoff`.
    File {
        file: u32,
        pgoff: u64,
    },
}

#[derive(Clone, Debug)]
pub struct Vma {
    pub start: u64,
    pub end: u64,
    pub flags: u32,
    pub kind: VmaKind,
    /// Per-VMA lock: write-locked by an mmap/munmap writer in progress.
    pub write_locked: bool,
    /// `swap_readahead_info`: the VMA-based swap readahead history.
    pub swap_ra: crate::swap_state::SwapRaInfo,
}

impl Vma {
    pub fn pages(&self) -> u64 {
        self.end - self.start
    }
    /// File page index backing virtual page `vpn`.
    pub fn pgoff_of(&self, vpn: u64) -> u64 {
        match self.kind {
            VmaKind::File { pgoff, .. } => pgoff + (vpn - self.start),
            VmaKind::Anon => vpn,
        }
    }
}

/// The processes that may map pages of one anon_vma (fork shares pages at the same address).
#[derive(Clone, Debug, Default)]
pub struct AnonVma {
    pub mms: Vec<u32>,
}

#[derive(Default)]
pub struct PteStore {
    pub entries: Vec<u32>,
    /// Frame backing each table.
    pub pfn: Vec<Pfn>,
    /// Non-zero entries per table.
    pub used: Vec<u16>,
    pub free_ids: Vec<u32>,
}

pub struct Mm {
    pub id: u32,
    pub vmas: Vec<Vma>,
    /// Last level: (vpn >> 9) → table id.
    pub ptes: BTreeMap<u64, u32>,
    /// Upper levels (PMD pages per 1 GiB, PUD pages per 512 GiB), keyed by level and index.
    pub upper: BTreeMap<(u8, u64), Pfn>,
    pub pgd: Option<Pfn>,
    pub anon_vma: u32,
    /// anon_vmas this mm appears in (its own and its ancestors').
    pub member_of: Vec<u32>,
    pub rss_anon: u64,
    pub rss_file: u64,
    pub rss_shmem: u64,
    pub locked_vm: u64,
    pub mmap_sem: RwSem,
    pub users: u32,
    pub next_vpn: u64,
    /// Named regions of the program (name → start vpn, pages), kept after munmap so a later
    /// `mmap NAME ... fixed` lands at the same address.
    pub regions: BTreeMap<String, (u64, u64)>,
    pub name: String,
    /// RLIMIT_MEMLOCK in pages (u64::MAX = unlimited).
    pub memlock_limit: u64,
    /// The memory cgroup the process is in (its pages are charged there).
    pub memcg: u8,
    /// Pages charged while the group was over `memory.high`, not yet handled
    /// (`current->memcg_nr_pages_over_high`).
    pub memcg_over_high: u64,
    /// The OOM killer chose this process (`signal->oom_mm`); `exit_mmap` removes the whole
    /// `Mm`, which stands for MMF_OOM_SKIP: the victim's memory is back.
    pub oom_victim: bool,
    last_tbl: (u64, u32),
    /// `ptes` again, as a flat array for keys below `DENSE_TBL_KEYS`: the lookup of every user
    /// access, which a tree search made a chain of cache misses. Changed only with `ptes`.
    tbl_dense: Vec<u32>,
    /// The virtual range [lo, hi) holding every write-locked VMA (grown by `vma_insert`, taken
    /// by `mmap_write_unlock`; a split stays inside it), so that an unlock visits those VMAs and
    /// not all of them: a region locked in one-page chunks has a VMA per page, and each chunk
    /// takes and drops mmap_sem.
    pub(crate) vma_write_locks: Option<(u64, u64)>,
}

/// Page-table keys (2 MiB of address space each) that `Mm::tbl_dense` covers: 512 GiB.
const DENSE_TBL_KEYS: u64 = 1 << 18;

pub const NO_TBL: u32 = u32::MAX;

impl Mm {
    /// The table id for key `vpn >> 9`, if the table exists.
    #[inline]
    fn table_of(&self, key: u64) -> Option<u32> {
        if key < DENSE_TBL_KEYS {
            match self.tbl_dense.get(key as usize) {
                Some(&t) if t != NO_TBL => Some(t),
                _ => None,
            }
        } else {
            self.ptes.get(&key).copied()
        }
    }
    fn set_dense(&mut self, key: u64, id: u32) {
        if key >= DENSE_TBL_KEYS {
            return;
        }
        if self.tbl_dense.len() <= key as usize {
            if id == NO_TBL {
                return;
            }
            self.tbl_dense.resize(key as usize + 1, NO_TBL);
        }
        self.tbl_dense[key as usize] = id;
    }
}

impl Kernel {
    pub fn mm(&self, id: u32) -> &Mm {
        self.mms[id as usize].as_ref().expect("live mm")
    }
    pub fn mm_mut(&mut self, id: u32) -> &mut Mm {
        self.mms[id as usize].as_mut().expect("live mm")
    }

    /// `mm_alloc`/`mm_init`: a new, empty address space with its page-table root. No pgd, no
    /// mm: `mm_init` ends at `fail_nopgd` (`free_mm`) and the fork or exec fails with -ENOMEM
    /// (2.4.27 `copy_mm`, 6.x `mm_init`/`dup_mm`), so nothing is left of it here either.
    pub fn mm_create(&mut self, ctx: &mut Ctx, name: &str) -> Result<u32, crate::page_alloc::AllocFail> {
        let id = self.mms.len() as u32;
        let av = self.anon_vmas.len() as u32;
        self.anon_vmas.push(AnonVma { mms: vec![id] });
        self.mms.push(Some(Mm {
            id,
            vmas: Vec::new(),
            ptes: BTreeMap::new(),
            tbl_dense: Vec::new(),
            upper: BTreeMap::new(),
            pgd: None,
            anon_vma: av,
            member_of: vec![av],
            rss_anon: 0,
            rss_file: 0,
            rss_shmem: 0,
            locked_vm: 0,
            mmap_sem: RwSem::new(self.profile.rwsem),
            users: 1,
            next_vpn: 0x400, // 4 MiB: leave the low pages unmapped as real processes do
            regions: BTreeMap::new(),
            name: name.to_string(),
            memlock_limit: u64::MAX,
            memcg: 0,
            memcg_over_high: 0,
            oom_victim: false,
            last_tbl: (u64::MAX, NO_TBL),
            vma_write_locks: None,
        }));
        // The mm exists while its pgd is allocated (as the kernel's, already allocated when
        // `mm_init` calls `mm_alloc_pgd`), so reclaim meanwhile sees the same list of mms.
        match self.pgtable_alloc(ctx) {
            Ok(p) => {
                self.mm_mut(id).pgd = Some(p);
                Ok(id)
            }
            Err(e) => {
                // Gone as an exited mm goes (its slot empty, its anon_vma without members): a
                // reclaim walker's cursor may already name it.
                self.mms[id as usize] = None;
                self.anon_vmas[av as usize].mms.clear();
                Err(e)
            }
        }
    }

    pub fn find_vma(&self, mm: u32, vpn: u64) -> Option<usize> {
        let v = &self.mm(mm).vmas;
        let i = v.partition_point(|x| x.end <= vpn);
        if i < v.len() && v[i].start <= vpn {
            Some(i)
        } else {
            None
        }
    }

    /// Table id and slot of `vpn`'s PTE, if its table exists.
    #[inline]
    pub fn pte_slot(&mut self, mm: u32, vpn: u64) -> Option<usize> {
        let key = vpn >> 9;
        let m = self.mms[mm as usize].as_mut()?;
        let tbl = if m.last_tbl.0 == key {
            m.last_tbl.1
        } else {
            let t = m.table_of(key)?;
            m.last_tbl = (key, t);
            t
        };
        Some(tbl as usize * PTRS_PER_TABLE as usize + (vpn & 511) as usize)
    }

    /// Start loading `vpn`'s PTE into the cache: workloads touching pages at random over large
    /// mappings spend most of their host time waiting for these loads one at a time. A hint only
    /// (no simulated state is read or written), and it leaves `last_tbl` alone.
    #[inline]
    pub fn prefetch_pte(&self, mm: u32, vpn: u64) {
        let Some(m) = self.mms.get(mm as usize).and_then(|m| m.as_ref()) else { return };
        let tbl = if m.last_tbl.0 == vpn >> 9 { Some(m.last_tbl.1) } else { m.table_of(vpn >> 9) };
        let Some(t) = tbl else { return };
        if let Some(e) = self.pt.entries.get(t as usize * PTRS_PER_TABLE as usize + (vpn & 511) as usize) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch never faults and has no architectural effect; `e` is a live
            // element of `entries`.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(e as *const u32 as *const i8);
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = e;
        }
    }

    #[inline]
    pub fn pte_get(&mut self, mm: u32, vpn: u64) -> u32 {
        match self.pte_slot(mm, vpn) {
            Some(s) => self.pt.entries[s],
            None => 0,
        }
    }

    /// Set a PTE, keeping the table's use count.
    #[inline]
    pub fn pte_set_slot(&mut self, slot: usize, e: u32) {
        let old = self.pt.entries[slot];
        let t = slot / PTRS_PER_TABLE as usize;
        if old == 0 && e != 0 {
            self.pt.used[t] += 1;
        } else if old != 0 && e == 0 {
            self.pt.used[t] -= 1;
        }
        self.pt.entries[slot] = e;
    }

    /// `__pte_alloc` (and the upper levels): make sure `vpn` has a PTE slot.
    pub fn pte_alloc(&mut self, ctx: &mut Ctx, mm: u32, vpn: u64) -> Result<usize, crate::page_alloc::AllocFail> {
        if let Some(s) = self.pte_slot(mm, vpn) {
            return Ok(s);
        }
        for (level, shift) in [(2u8, 27u32), (1u8, 18u32)] {
            let key = (level, vpn >> shift);
            if !self.mm(mm).upper.contains_key(&key) {
                let p = self.pgtable_alloc(ctx)?;
                self.mm_mut(mm).upper.insert(key, p);
            }
        }
        let p = self.pte_alloc_one(ctx)?;
        let id = match self.pt.free_ids.pop() {
            Some(id) => {
                let s = id as usize * PTRS_PER_TABLE as usize;
                self.pt.entries[s..s + PTRS_PER_TABLE as usize].fill(0);
                self.pt.pfn[id as usize] = p;
                self.pt.used[id as usize] = 0;
                id
            }
            None => {
                let id = self.pt.pfn.len() as u32;
                self.pt.entries.resize(self.pt.entries.len() + PTRS_PER_TABLE as usize, 0);
                self.pt.pfn.push(p);
                self.pt.used.push(0);
                id
            }
        };
        let m = self.mm_mut(mm);
        m.ptes.insert(vpn >> 9, id);
        m.set_dense(vpn >> 9, id);
        m.last_tbl = (vpn >> 9, id);
        Ok(id as usize * PTRS_PER_TABLE as usize + (vpn & 511) as usize)
    }

    /// A page-table page: from this CPU's quicklist when the profile has them, else the buddy
    /// allocator (GFP_KERNEL, zeroed).
    pub fn pgtable_alloc(&mut self, ctx: &mut Ctx) -> Result<Pfn, crate::page_alloc::AllocFail> {
        self.pgtable_alloc_gfp(ctx, crate::page_alloc::Gfp::kernel())
    }

    /// `pte_alloc_one`: the last level's page. With `pte_highmem` it is asked for as
    /// `GFP_KERNEL | __GFP_HIGHMEM` (2.4-aa's pte-highmem, Andrea Arcangeli, LKML, 16 Jan 2002;
    /// 2.6's CONFIG_HIGHPTE), so a box whose processes map GiBs of shm keeps their PTEs out of
    /// the 896 MiB that everything else in the kernel must fit in; the zonelist falls back to
    /// lowmem as for any HighMem allocation. The upper levels stay GFP_KERNEL in both.
    fn pte_alloc_one(&mut self, ctx: &mut Ctx) -> Result<Pfn, crate::page_alloc::AllocFail> {
        let gfp =
            if self.profile.pte_highmem { crate::page_alloc::Gfp::highpte() } else { crate::page_alloc::Gfp::kernel() };
        self.pgtable_alloc_gfp(ctx, gfp)
    }

    fn pgtable_alloc_gfp(
        &mut self,
        ctx: &mut Ctx,
        gfp: crate::page_alloc::Gfp,
    ) -> Result<Pfn, crate::page_alloc::AllocFail> {
        if let Some(p) = crate::quicklist::quicklist_alloc(self, ctx) {
            return Ok(p);
        }
        let p = self.alloc_pages(ctx, gfp, 0)?;
        self.charge(ctx, KFunc::ClearPage, self.cost.clear_page);
        self.first_touch(ctx, KFunc::ClearPage, p);
        self.fr.set(p, pg::PGTABLE);
        self.g.pagetable += 1;
        Ok(p)
    }

    pub fn pgtable_free(&mut self, ctx: &mut Ctx, p: Pfn) {
        if crate::quicklist::quicklist_free(self, ctx, p) {
            return;
        }
        self.fr.clear(p, pg::PGTABLE);
        self.g.pagetable -= 1;
        self.free_pages(ctx, p, 0);
    }

    /// Pick a free virtual range of `pages` (first fit above mmap_base, like a bottom-up layout).
    pub fn get_unmapped_area(&self, mm: u32, pages: u64) -> u64 {
        let m = self.mm(mm);
        let mut cand = 0x400u64;
        for v in &m.vmas {
            if v.start >= cand + pages {
                break;
            }
            cand = cand.max(v.end + 1);
        }
        // Align to a table boundary when large, so big mappings get their own page tables.
        cand
    }

    /// Insert a VMA (the range must be free).
    pub fn vma_insert(&mut self, mm: u32, vma: Vma) {
        let m = self.mm_mut(mm);
        if vma.write_locked {
            let (lo, hi) = m.vma_write_locks.unwrap_or((vma.start, vma.end));
            m.vma_write_locks = Some((lo.min(vma.start), hi.max(vma.end)));
        }
        let i = m.vmas.partition_point(|x| x.start < vma.start);
        m.vmas.insert(i, vma);
    }

    /// Split VMAs so that `vpn` is a boundary.
    pub fn vma_split_at(&mut self, mm: u32, vpn: u64) {
        if let Some(i) = self.find_vma(mm, vpn) {
            let m = self.mm_mut(mm);
            if m.vmas[i].start < vpn {
                let mut hi = m.vmas[i].clone();
                if let VmaKind::File { file, pgoff } = hi.kind {
                    hi.kind = VmaKind::File { file, pgoff: pgoff + (vpn - hi.start) };
                }
                hi.start = vpn;
                m.vmas[i].end = vpn;
                m.vmas.insert(i + 1, hi);
            }
        }
    }

    /// Indices of the VMAs inside [start, end) after splitting at both ends.
    pub fn vmas_in(&mut self, mm: u32, start: u64, end: u64) -> std::ops::Range<usize> {
        self.vma_split_at(mm, start);
        self.vma_split_at(mm, end);
        let v = &self.mm(mm).vmas;
        let a = v.partition_point(|x| x.end <= start);
        let b = v.partition_point(|x| x.start < end);
        a..b
    }

    /// `do_munmap`: unmap [start, start+pages): zap the PTEs, drop the VMAs, free empty tables.
    pub fn do_munmap(&mut self, ctx: &mut Ctx, mm: u32, start: u64, pages: u64) {
        self.charge(ctx, KFunc::DoMunmap, self.cost.mmap);
        let end = start + pages;
        let r = self.vmas_in(mm, start, end);
        let removed: Vec<Vma> = self.mm_mut(mm).vmas.drain(r).collect();
        for v in &removed {
            if v.flags & vm::LOCKED != 0 {
                crate::mlock::munlock_range(self, ctx, mm, v, v.start, v.end);
                self.mm_mut(mm).locked_vm -= v.pages();
            }
            self.zap_range(ctx, mm, v, v.start, v.end);
            if let VmaKind::File { file, .. } = v.kind {
                self.files[file as usize].i_mmap_remove(mm, v.start);
            }
        }
        self.free_pgtables(ctx, mm, start, end);
        // unmap_region ends with tlb_finish_mmu, which keeps the page-table cache in bounds.
        crate::quicklist::check_pgt_cache(self, ctx);
    }

    /// `zap_pte_range` over one VMA's part [start, end).
    pub fn zap_range(&mut self, ctx: &mut Ctx, mm: u32, v: &Vma, start: u64, end: u64) {
        let mut vpn = start;
        let mut walked = 0u64;
        while vpn < end {
            let Some(slot) = self.pte_slot(mm, vpn) else {
                vpn = ((vpn >> 9) + 1) << 9;
                continue;
            };
            let tbl_end = (((vpn >> 9) + 1) << 9).min(end);
            if self.pt.used[slot / PTRS_PER_TABLE as usize] == 0 {
                vpn = tbl_end;
                continue;
            }
            let mut s = slot;
            let tbl = slot / PTRS_PER_TABLE as usize;
            while vpn < tbl_end {
                if self.pt.used[tbl] == 0 {
                    // The rest of the table is empty: the walk still costs, but there is
                    // nothing to look at (speed only; same result and charge).
                    walked += tbl_end - vpn;
                    vpn = tbl_end;
                    break;
                }
                let e = self.pt.entries[s];
                walked += 1;
                if e != 0 {
                    self.pte_set_slot(s, 0);
                    if pte::present(e) {
                        if pte::pfn(e) != self.zero_pfn {
                            self.zap_page(ctx, mm, v, pte::pfn(e), e);
                        }
                    } else if let Some(slot) = pte::swap_slot(e) {
                        crate::swap_state::swap_free(self, ctx, slot);
                    }
                }
                vpn += 1;
                s += 1;
            }
        }
        self.charge(ctx, KFunc::UnmapVmas, walked * self.cost.pte_walk);
    }

    /// Drop one mapping of a page (`page_remove_rmap` + the unmap's reference).
    fn zap_page(&mut self, ctx: &mut Ctx, mm: u32, v: &Vma, p: Pfn, e: u32) {
        let anon = self.fr.has(p, pg::ANON);
        if e & pte::DIRTY != 0 && !anon {
            crate::page_writeback::set_page_dirty(self, ctx, p);
        }
        self.page_remove_rmap(p);
        let m = self.mm_mut(mm);
        if anon {
            m.rss_anon -= 1;
        } else if v.flags & vm::SHM != 0 {
            m.rss_shmem -= 1;
        } else {
            m.rss_file -= 1;
        }
        if anon && self.fr.mapcount[p as usize] == 0 {
            // Last mapping of an anonymous page: it goes (unless I/O still holds it).
            crate::swap_state::free_anon_page(self, ctx, p);
        }
        self.charge(ctx, KFunc::UnmapVmas, self.cost.page_free);
    }

    /// `free_pgtables`: free page tables wholly inside [start, end) that no VMA still uses.
    pub fn free_pgtables(&mut self, ctx: &mut Ctx, mm: u32, start: u64, end: u64) {
        let keys: Vec<(u64, u32)> =
            self.mm(mm).ptes.range((start >> 9)..=((end.max(1) - 1) >> 9)).map(|(k, v)| (*k, *v)).collect();
        for (key, id) in keys {
            let (ts, te) = (key << 9, (key + 1) << 9);
            let still_used = self.mm(mm).vmas.iter().any(|v| v.start < te && v.end > ts);
            if still_used || self.pt.used[id as usize] != 0 {
                continue;
            }
            let m = self.mm_mut(mm);
            m.ptes.remove(&key);
            m.set_dense(key, NO_TBL);
            m.last_tbl = (u64::MAX, NO_TBL);
            let p = self.pt.pfn[id as usize];
            self.pt.free_ids.push(id);
            self.pgtable_free(ctx, p);
        }
        // Upper levels whose whole span has no tables left.
        let uppers: Vec<((u8, u64), Pfn)> = self.mm(mm).upper.iter().map(|(k, v)| (*k, *v)).collect();
        for ((level, idx), p) in uppers {
            let shift = if level == 1 { 18 } else { 27 };
            let (ts, te) = ((idx << shift) >> 9, ((idx + 1) << shift) >> 9);
            if self.mm(mm).ptes.range(ts..te).next().is_none()
                && !self.mm(mm).vmas.iter().any(|v| v.start < (te << 9) && v.end > (ts << 9))
            {
                self.mm_mut(mm).upper.remove(&(level, idx));
                self.pgtable_free(ctx, p);
            }
        }
    }

    /// `exit_mmap`: unmap everything and free every page table, the pgd last.
    pub fn exit_mmap(&mut self, ctx: &mut Ctx, mm: u32) {
        self.charge(ctx, KFunc::ExitMmap, self.cost.mmap);
        let vmas: Vec<Vma> = std::mem::take(&mut self.mm_mut(mm).vmas);
        for v in &vmas {
            if v.flags & vm::LOCKED != 0 {
                crate::mlock::munlock_range(self, ctx, mm, v, v.start, v.end);
            }
            self.zap_range(ctx, mm, v, v.start, v.end);
            if let VmaKind::File { file, .. } = v.kind {
                self.files[file as usize].i_mmap_remove(mm, v.start);
            }
        }
        self.mm_mut(mm).locked_vm = 0;
        self.free_pgtables(ctx, mm, 0, u64::MAX >> 13);
        if let Some(p) = self.mm_mut(mm).pgd.take() {
            self.pgtable_free(ctx, p);
        }
        let members = std::mem::take(&mut self.mm_mut(mm).member_of);
        for av in members {
            self.anon_vmas[av as usize].mms.retain(|&x| x != mm);
        }
        crate::quicklist::check_pgt_cache(self, ctx);
        let st = self.mm(mm).mmap_sem.stats;
        self.mmap_sem_retired.add(&st);
        self.mms[mm as usize] = None;
    }
}

/// A name the process gave a mapping, with the nearest known one in the message.
pub fn region_lookup(k: &Kernel, mm: u32, n: &str) -> Result<(u64, u64), String> {
    k.mm(mm).regions.get(n).copied().ok_or_else(|| {
        let known: Vec<&str> = k.mm(mm).regions.keys().map(|s| s.as_str()).collect();
        let hint =
            crate::workload::error::suggest(n, known).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
        format!("no mapping named `{n}` in this process{hint}")
    })
}

/// `do_mmap` (the caller holds mmap_sem for write): a new VMA under the region's name, and
/// VM_LOCKED set on it for MAP_LOCKED (`errno` ENOMEM when that is refused; populating it is
/// the caller's, after unlocking).
pub fn do_mmap(k: &mut Kernel, ctx: &mut Ctx, mm: u32, a: &MmapArgs) -> Result<Mapped, String> {
    k.charge(ctx, KFunc::DoMmap, k.cost.mmap);
    let off = a.offset;
    let bytes = match (a.len, &a.backing) {
        (Some(l), _) => l,
        // No length: the rest of the file (the parser allows this only for files).
        (None, MapBacking::File(f)) => {
            let id = crate::filemap::file_lookup(k, f)?;
            k.files[id as usize].size.saturating_sub(off) as i64
        }
        (None, _) => 0,
    };
    if bytes <= 0 {
        return Err("mmap length must be positive".into());
    }
    let task_size = k.cfg.task_size();
    if bytes as u64 > task_size {
        return Err(format!(
            "mmap of {bytes} bytes is larger than a process's address space ({task_size} bytes, x86-64's \
             TASK_SIZE): the kernel refuses it with ENOMEM"
        ));
    }
    let pages = (bytes as u64).div_ceil(4096);
    let start = if a.fixed {
        let (s, _) = region_lookup(k, mm, &a.name)?;
        k.do_munmap(ctx, mm, s, pages);
        s
    } else {
        k.get_unmapped_area(mm, pages)
    };
    let mut flags = vm::READ | if a.write { vm::WRITE } else { 0 } | if a.shared { vm::SHARED } else { 0 };
    let kind = match &a.backing {
        MapBacking::Anon => VmaKind::Anon,
        MapBacking::File(f) => {
            let id = crate::filemap::file_lookup(k, f)?;
            VmaKind::File { file: id, pgoff: off / 4096 }
        }
        MapBacking::Shm(sname) => {
            let sn = format!("SYSV:{sname}");
            let id = match k.file_ids.get(sn.as_str()) {
                Some(id) => id,
                None => k.file_create(&sn, pages * 4096, 0, true),
            };
            flags |= vm::SHM | vm::SHARED;
            VmaKind::File { file: id, pgoff: off / 4096 }
        }
    };
    if let VmaKind::File { file, pgoff } = kind {
        k.files[file as usize].i_mmap_add(mm, start, start + pages, pgoff);
    }
    let write_locked = crate::mmap_lock::new_vma_write_locked(k);
    k.vma_insert(mm, Vma { start, end: start + pages, flags, kind, write_locked, swap_ra: Default::default() });
    k.mm_mut(mm).regions.insert(a.name.clone(), (start, pages));
    let mut errno = 0;
    if a.locked && crate::mlock::mlock_fixup(k, ctx, mm, start, start + pages, true).is_err() {
        errno = crate::mlock::ENOMEM;
    }
    Ok(Mapped { start, end: start + pages, write: a.write, errno })
}

/// MADV_DONTNEED over [start, end): zaps every VMA there but locked ones (EINVAL).
pub fn madvise_dontneed(k: &mut Kernel, ctx: &mut Ctx, mm: u32, start: u64, end: u64) -> i64 {
    let r = k.vmas_in(mm, start, end);
    let vmas: Vec<Vma> = k.mm(mm).vmas[r].to_vec();
    let mut errno = 0;
    for v in &vmas {
        if v.flags & vm::LOCKED != 0 {
            errno = EINVAL;
            continue;
        }
        k.zap_range(ctx, mm, v, v.start, v.end);
    }
    errno
}

const EINVAL: i64 = 22;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::ZoneType;

    fn kernel() -> Kernel {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
        Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel")
    }

    /// An i386 box (16 MiB DMA, 64 MiB Normal, 64 MiB HighMem) under the table's first row with
    /// `pte_highmem`, or that row with it turned off.
    fn highmem_box(pte_highmem: bool) -> Kernel {
        let cfg = MachineConfig::of_zones(
            "i386",
            1,
            &[(ZoneType::Dma, 4096), (ZoneType::Normal, 16384), (ZoneType::HighMem, 16384)],
        );
        let row = crate::profiles::all().into_iter().find(|p| p.pte_highmem).expect("a row with pte_highmem");
        Kernel::new(crate::profiles::Profile { pte_highmem, ..row }, cfg, 1).expect("kernel")
    }

    fn kind_of(k: &Kernel, p: Pfn) -> ZoneType {
        k.zones[k.zone_of(p)].kind
    }

    /// pte-highmem moves the last level only: the PTE page comes from HighMem, the pgd and the
    /// pmd stay in lowmem; without it all three are lowmem pages.
    #[test]
    fn pte_highmem_puts_the_pte_page_in_highmem() {
        for on in [true, false] {
            let mut k = highmem_box(on);
            let mut ctx = Ctx::default();
            let mm = k.mm_create(&mut ctx, "t").expect("pgd");
            let slot = k.pte_alloc(&mut ctx, mm, 0x400).expect("table");
            let table = k.pt.pfn[slot / PTRS_PER_TABLE as usize];
            let want = if on { ZoneType::HighMem } else { ZoneType::Normal };
            assert_eq!(kind_of(&k, table), want, "pte_highmem {on}");
            let upper: Vec<Pfn> = k.mm(mm).upper.values().copied().chain(k.mm(mm).pgd).collect();
            assert_eq!(upper.len(), 3, "pgd and two upper levels");
            for p in upper {
                assert_ne!(kind_of(&k, p), ZoneType::HighMem, "an upper level in HighMem (pte_highmem {on})");
            }
            assert_eq!(k.g.pagetable, 4, "PageTables counts the PTE page wherever it lies");
        }
    }

    /// With HighMem used up, a PTE page falls back to lowmem as any `__GFP_HIGHMEM` allocation
    /// does (the HighMem zonelist goes on to Normal and DMA).
    #[test]
    fn pte_highmem_falls_back_to_lowmem() {
        let mut k = highmem_box(true);
        let mut ctx = Ctx::default();
        let mm = k.mm_create(&mut ctx, "t").expect("pgd");
        let mut held = 0u64;
        loop {
            let p = k.alloc_pages(&mut ctx, crate::page_alloc::Gfp::highpte(), 0).expect("a page");
            held += 1;
            if kind_of(&k, p) != ZoneType::HighMem {
                break;
            }
            assert!(held <= 16384, "HighMem served more pages than it has");
        }
        let slot = k.pte_alloc(&mut ctx, mm, 0x400).expect("table");
        let table = k.pt.pfn[slot / PTRS_PER_TABLE as usize];
        assert_ne!(kind_of(&k, table), ZoneType::HighMem);
    }

    /// The flat table index and the tree agree, on both sides of the flat array's end, after
    /// tables come and go.
    #[test]
    fn table_lookup_follows_alloc_and_free() {
        let mut k = kernel();
        let mut ctx = Ctx::default();
        let mm = k.mm_create(&mut ctx, "t").expect("pgd");
        let high = DENSE_TBL_KEYS << 9;
        let vpns = [0x400u64, 0x400 + 511, 0x400 + 512, 5 << 20, high - 1, high, high + 3 * 512 + 7];
        let mut slots = Vec::new();
        for &v in &vpns {
            slots.push(k.pte_alloc(&mut ctx, mm, v).expect("table"));
        }
        for (i, &v) in vpns.iter().enumerate() {
            k.mm_mut(mm).last_tbl = (u64::MAX, NO_TBL);
            assert_eq!(k.pte_slot(mm, v), Some(slots[i]), "vpn {v:#x}");
            let key = v >> 9;
            assert_eq!(k.mm(mm).table_of(key), k.mm(mm).ptes.get(&key).copied(), "vpn {v:#x}");
        }
        assert_eq!(k.pte_slot(mm, 0x400 + 1024), None, "no table there");
        assert_eq!(k.pte_slot(mm, high + 512), None, "no table there");
        // No VMA covers them: every table is freed, and the lookups say so on both sides.
        k.free_pgtables(&mut ctx, mm, 0, high + 4 * 512);
        for &v in &vpns {
            k.mm_mut(mm).last_tbl = (u64::MAX, NO_TBL);
            assert_eq!(k.pte_slot(mm, v), None, "vpn {v:#x} after free_pgtables");
        }
        assert!(k.mm(mm).ptes.is_empty());
    }

    /// `copy_page_range`: the child's PTEs are old, and clean in a shared mapping; the parent's
    /// keep both bits.
    #[test]
    fn fork_gives_the_child_old_ptes() {
        let mut k = kernel();
        let mut ctx = Ctx::default();
        let mm = k.mm_create(&mut ctx, "parent").expect("pgd");
        let mut maps = Vec::new();
        for (name, shared) in [("shared", true), ("private", false)] {
            let a = MmapArgs::anon(name, 8 * 4096, shared);
            let m = do_mmap(&mut k, &mut ctx, mm, &a).expect("mmap");
            for vpn in m.start..m.end {
                assert!(matches!(k.handle_mm_fault(&mut ctx, mm, vpn, true), crate::memory::Fault::Done));
            }
            maps.push((m.start, m.end, shared));
        }
        let child = k.dup_mm(&mut ctx, mm, "child").expect("fork");
        for (start, end, shared) in maps {
            for vpn in start..end {
                let (pe, ce) = (k.pte_get(mm, vpn), k.pte_get(child, vpn));
                assert!(pte::present(pe) && pte::present(ce) && pte::pfn(pe) == pte::pfn(ce));
                assert!(pe & pte::YOUNG != 0 && pe & pte::DIRTY != 0, "parent keeps young and dirty");
                assert_eq!(ce & pte::YOUNG, 0, "child's PTE is old");
                assert_eq!(ce & pte::DIRTY == 0, shared, "child's PTE is clean only in a shared mapping");
            }
        }
    }
}
