//! The kernel memory a task costs (`kernel/fork.c`, 2.6.36): `dup_task_struct` takes a
//! `task_struct` from its SLUB cache and a kernel stack of `THREAD_SIZE` from the buddy
//! allocator (`alloc_thread_info`: GFP_KERNEL, order `THREAD_ORDER`); `free_task` gives both
//! back when the task exits. Both are unmovable and live as long as the task, so a server that
//! forks a session per login strews them through memory in step with its page cache.
//!
//! Enabled by a scenario's `[fork]` table; without it tasks cost no kernel memory, as before.
//!
//! And the child's address space (`dup_mmap` → `copy_page_range`): each VMA is linked into the
//! child first, then its PTEs are copied one page table at a time, the child's table allocated
//! *before* any count is raised for the PTEs it will hold. So at every moment (and to a reclaim
//! that the table's allocation runs) each raised mapcount, rss and swap count has its PTE, and
//! a copy that fails for want of memory leaves a child that `exit_mmap` tears down exactly
//! (`copy_mm`'s `free_pt: mmput(mm)`). 2.4.17's `copy_page_range` (`mm/memory.c`) and 2.4.27's
//! `dup_mmap`/`copy_mm` (`kernel/fork.c`) do this under the child's `page_table_lock`, which
//! `pte_alloc` drops only to allocate; 6.8's `copy_pte_range` allocates the table
//! (`pte_alloc_map_lock`) before `copy_present_pte` raises a count, and its `dup_mm` ends a
//! failed `dup_mmap` with `mmput`.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmap::{pte, vm, VmaKind};
use crate::mmzone::Mt;
use crate::page_alloc::{AllocFail, Gfp};
use crate::slub::KmemCache;
use crate::stats::kfunc::KFunc;

pub struct TaskMem {
    pub task_struct_cache: KmemCache,
    pub stack_order: u32,
    /// Forks that failed for want of a stack or a task_struct (-ENOMEM).
    pub failed: u64,
}

impl TaskMem {
    pub fn new(stack_order: u32, task_struct: u64, nr_cpus: u64, t: crate::slub::SlubTunables) -> TaskMem {
        TaskMem {
            task_struct_cache: KmemCache::with_tunables("task_struct", task_struct, nr_cpus, Mt::Unmovable, t),
            stack_order,
            failed: 0,
        }
    }
}

/// `dup_task_struct`: (task_struct slab, stack pfn), or None when either allocation failed
/// (what was had is given back, as copy_process's error path does).
pub fn dup_task_struct(k: &mut Kernel, ctx: &mut Ctx) -> Option<(Pfn, Pfn)> {
    let mut tm = k.task_mem.take()?;
    let got = match tm.task_struct_cache.alloc(k, ctx) {
        Some(ts) => match k.alloc_pages(ctx, Gfp::kernel(), tm.stack_order) {
            Ok(st) => {
                k.g.kernel_stack += 1 << tm.stack_order;
                Some((ts, st))
            }
            Err(_) => {
                tm.task_struct_cache.free(k, ctx, ts);
                None
            }
        },
        None => None,
    };
    if got.is_none() {
        tm.failed += 1;
    }
    k.task_mem = Some(tm);
    got
}

/// `free_task`: the stack and the task_struct go back.
pub fn free_task(k: &mut Kernel, ctx: &mut Ctx, mem: (Pfn, Pfn)) {
    if mem.1 == NIL {
        return;
    }
    let Some(mut tm) = k.task_mem.take() else { return };
    k.g.kernel_stack -= 1 << tm.stack_order;
    k.free_pages(ctx, mem.1, tm.stack_order);
    tm.task_struct_cache.free(k, ctx, mem.0);
    k.task_mem = Some(tm);
}

/// A fork between two of its steps, kept in the forking task while it sleeps: on a throttled
/// allocation (the kernel's GFP_KERNEL order-0 allocation waits and retries inside the
/// allocator, it does not fail) or on mmap_sem, which another task holds. The fork goes on from
/// here when the task runs again, so nothing it did is done, or charged, a second time.
#[derive(Clone, Debug)]
pub struct Forking {
    /// `dup_task_struct`'s (task_struct, stack), NIL without `[fork]`.
    pub kmem: (Pfn, Pfn),
    /// The child's mm once `mm_init` has its pgd.
    pub child: Option<u32>,
    pub cursor: DupCursor,
}

/// Where `dup_mmap` stands, by address: the parent's VMA list cannot change under the mmap_sem
/// the fork holds, but its split points may (vmlab's MADV_DONTNEED splits without the lock).
#[derive(Clone, Copy, Debug, Default)]
pub struct DupCursor {
    /// The next page of the parent to copy.
    at: u64,
    /// The child has VMAs for the parent's address space below this page.
    linked: u64,
}

impl Kernel {
    /// `dup_mm` → `dup_mmap`: a copy of `parent`'s address space sharing every page, private
    /// writable ones copy-on-write in both. On failure the half-built child is gone again and
    /// the parent is as it was, but for the write-protected PTEs of what was already copied
    /// (as in the kernel: the next write takes a COW fault and reuses the page). The caller
    /// holds the parent's mmap_sem (`do_fork` does).
    pub fn dup_mm(&mut self, ctx: &mut Ctx, parent: u32, name: &str) -> Result<u32, AllocFail> {
        let child = self.dup_mm_init(ctx, parent, name)?;
        let mut cursor = DupCursor::default();
        if let Err(e) = self.dup_mmap(ctx, child, parent, &mut cursor) {
            self.exit_mmap(ctx, child);
            return Err(e);
        }
        Ok(child)
    }

    /// `dup_mm`'s `mm_init` (the pgd: no child without it) and what the child inherits besides
    /// its VMAs.
    pub fn dup_mm_init(&mut self, ctx: &mut Ctx, parent: u32, name: &str) -> Result<u32, AllocFail> {
        let child = self.mm_create(ctx, name)?;
        let members = self.mm(parent).member_of.clone();
        for &av in &members {
            self.anon_vmas[av as usize].mms.push(child);
        }
        let regions = self.mm(parent).regions.clone();
        let limit = self.mm(parent).memlock_limit;
        let memcg = self.mm(parent).memcg;
        let c = self.mm_mut(child);
        c.memcg = memcg;
        c.member_of.extend(members);
        c.regions = regions;
        c.memlock_limit = limit;
        Ok(child)
    }

    /// `dup_mmap`'s loop from `cursor` on: each of the parent's VMAs write-locked
    /// (`vma_start_write`, per-VMA locking), linked into the child, and its PTEs copied. `Err`
    /// leaves `cursor` at the page whose table could not be had, to go on from there or to
    /// tear the child down (`exit_mmap`).
    pub fn dup_mmap(
        &mut self,
        ctx: &mut Ctx,
        child: u32,
        parent: u32,
        cursor: &mut DupCursor,
    ) -> Result<(), AllocFail> {
        let mut walked = 0u64;
        let mut copied = Ok(());
        loop {
            let vmas = &self.mm(parent).vmas;
            let i = vmas.partition_point(|v| v.end <= cursor.at);
            if i == vmas.len() {
                break;
            }
            crate::mmap_lock::vma_start_write(self, parent, i);
            let v = self.mm(parent).vmas[i].clone();
            cursor.at = cursor.at.max(v.start);
            if cursor.linked < v.end {
                let from = cursor.linked.max(v.start);
                let mut c = v.clone();
                // mlock is not inherited across fork; the child's VMA locks end with its mmap_sem.
                c.flags &= !vm::LOCKED;
                c.write_locked = false;
                c.start = from;
                if let VmaKind::File { file, pgoff } = v.kind {
                    let pgoff = pgoff + (from - v.start);
                    c.kind = VmaKind::File { file, pgoff };
                    self.files[file as usize].i_mmap_add(child, from, v.end, pgoff);
                }
                self.vma_insert(child, c);
                cursor.linked = v.end;
            }
            copied = self.copy_page_range(ctx, child, parent, (v.end, v.flags), cursor, &mut walked);
            if copied.is_err() {
                break;
            }
        }
        self.charge(ctx, KFunc::CopyPageRange, walked * self.cost.pte_walk);
        copied
    }

    /// `copy_page_range` for one VMA from `cursor.at` to `end`: the child's page table first,
    /// then, for each PTE of the parent's as it is *after* that allocation (its reclaim may have
    /// unmapped or swapped what was there), the count the child's copy holds and the copy.
    fn copy_page_range(
        &mut self,
        ctx: &mut Ctx,
        child: u32,
        parent: u32,
        (end, flags): (u64, u32),
        cursor: &mut DupCursor,
        walked: &mut u64,
    ) -> Result<(), AllocFail> {
        let cow = flags & vm::SHARED == 0;
        // `copy_page_range` hands the child old PTEs, and clean ones in a shared mapping (the
        // parent's PTE keeps the dirty bit): 2.4's `copy_pte_range` and 6.x's
        // `__copy_present_ptes` alike. So a forked process's first reference to each inherited
        // page is still to come, and the page-table walks see it that way.
        let aged = pte::YOUNG | if flags & vm::SHARED != 0 { pte::DIRTY } else { 0 };
        // A table at a time (a fork of a process mapping a big segment copies tens of millions
        // of PTEs): where the parent has no table the whole span is skipped, as pmd_none does;
        // the child's table is looked up (or allocated) once, at the first PTE that needs it.
        while cursor.at < end {
            let vpn = cursor.at;
            let span_end = end.min((vpn | 511) + 1);
            let Some(ps) = self.pte_slot(parent, vpn) else {
                *walked += span_end - vpn;
                cursor.at = span_end;
                continue;
            };
            let mut pbase = ps - (vpn & 511) as usize;
            let mut cbase = None;
            while cursor.at < span_end {
                let v = cursor.at;
                let off = (v & 511) as usize;
                if self.pt.entries[pbase + off] == 0 {
                    *walked += 1;
                    cursor.at += 1;
                    continue;
                }
                let cs = match cbase {
                    Some(b) => b + off,
                    None => {
                        // Only where the parent has a PTE does the child need a table. Its
                        // allocation may reclaim: the parent's PTEs are read as they are after it.
                        let cs = self.pte_alloc(ctx, child, v)?;
                        cbase = Some(cs - off);
                        match self.pte_slot(parent, v) {
                            Some(s) => pbase = s - off,
                            None => {
                                *walked += span_end - v;
                                cursor.at = span_end;
                                break;
                            }
                        }
                        cs
                    }
                };
                *walked += 1;
                cursor.at += 1;
                self.copy_pte(child, pbase + off, cs, (cow, aged, flags));
            }
        }
        Ok(())
    }

    /// `copy_present_pte` / `copy_nonpresent_pte`: the parent's PTE as it is now, into the
    /// child's slot `cs`, with the count the copy holds.
    fn copy_pte(&mut self, child: u32, ps: usize, cs: usize, (cow, aged, flags): (bool, u32, u32)) {
        let e = self.pt.entries[ps];
        if e == 0 {
            return;
        }
        let ce = if pte::present(e) && pte::pfn(e) == self.zero_pfn {
            e & !aged
        } else if pte::present(e) {
            let p = pte::pfn(e);
            self.fr.mapcount[p as usize] += 1;
            let is_anon = self.fr.flags[p as usize] & pg::ANON != 0;
            let m = self.mm_mut(child);
            if is_anon {
                m.rss_anon += 1;
            } else if flags & vm::SHM != 0 {
                m.rss_shmem += 1;
            } else {
                m.rss_file += 1;
            }
            let e = if cow && e & pte::WRITE != 0 {
                self.pt.entries[ps] &= !pte::WRITE;
                e & !pte::WRITE
            } else {
                e
            };
            e & !aged
        } else {
            if let Some(slot) = pte::swap_slot(e) {
                crate::swap_state::swap_duplicate(self, slot);
            }
            e
        };
        self.pte_set_slot(cs, ce);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmap::do_mmap;
    use crate::mmzone::ZoneType;
    use crate::workload::syscalls::MmapArgs;

    /// A parent with two private anonymous regions, written (and so in several page tables),
    /// and a shared one only read (zero-page PTEs).
    fn parent() -> (Kernel, u32) {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
        let mut ctx = Ctx::default();
        let mm = k.mm_create(&mut ctx, "parent").expect("pgd");
        for (name, pages, shared, write) in [("a", 700, false, true), ("b", 300, false, true), ("z", 40, true, false)] {
            let a = MmapArgs::anon(name, pages * 4096, shared);
            let m = do_mmap(&mut k, &mut ctx, mm, &a).expect("mmap");
            for vpn in m.start..m.end {
                assert_eq!(k.handle_mm_fault(&mut ctx, mm, vpn, write), crate::memory::Fault::Done);
            }
        }
        (k, mm)
    }

    /// A fork that runs out of memory part way through copying the page tables leaves no child,
    /// every count as it was, the parent's pages mapped where they were, and the child's page
    /// tables freed again. Memory is emptied and then `spare` pages handed back, so the copy
    /// fails at a different table each time (with no reclaim and no OOM killer: PF_MEMALLOC).
    #[test]
    fn a_fork_that_fails_for_memory_leaves_everything_as_it_was() {
        for spare in [0, 1, 2, 3, 4] {
            let (mut k, mm) = parent();
            let mut ctx = Ctx { in_reclaim: true, ..Ctx::default() };
            let mapcount = k.fr.mapcount.clone();
            let m = k.mm(mm);
            let rss = (m.rss_anon, m.rss_file, m.rss_shmem);
            let vmas: Vec<(u64, u64)> = m.vmas.iter().map(|v| (v.start, v.end)).collect();
            let ptes: Vec<u32> = vmas.iter().flat_map(|&(s, e)| s..e).map(|vpn| pte::pfn(k.pte_get(mm, vpn))).collect();
            let mut held = Vec::new();
            while let Ok(p) = k.alloc_pages(&mut ctx, Gfp::kernel(), 0) {
                held.push(p);
            }
            for p in held.drain(..spare) {
                k.free_pages(&mut ctx, p, 0);
            }
            let free = k.nr_free_pages();
            assert!(k.dup_mm(&mut ctx, mm, "child").is_err(), "spare {spare}: the copy needs more tables");
            assert_eq!(k.mms.iter().flatten().count(), 1, "spare {spare}: the half-built child is gone");
            k.check_rmap().unwrap_or_else(|e| panic!("spare {spare}: {e}"));
            assert!(k.fr.mapcount == mapcount, "spare {spare}: a mapcount moved");
            let m = k.mm(mm);
            assert_eq!((m.rss_anon, m.rss_file, m.rss_shmem), rss, "spare {spare}: the parent's rss");
            let now: Vec<u32> = vmas.iter().flat_map(|&(s, e)| s..e).map(|vpn| pte::pfn(k.pte_get(mm, vpn))).collect();
            assert!(now == ptes, "spare {spare}: the parent's PTEs map what they mapped");
            assert!(k.nr_free_pages() >= free, "spare {spare}: the child's tables went back");
        }
    }

    /// No pgd, no mm (`mm_init`'s `fail_nopgd`): with memory empty, creating an address space
    /// fails and leaves no mm behind, nor a page-table page counted; so does a fork, before it
    /// copies anything.
    #[test]
    fn no_mm_without_its_pgd() {
        let (mut k, mm) = parent();
        let mut ctx = Ctx { in_reclaim: true, ..Ctx::default() };
        while k.alloc_pages(&mut ctx, Gfp::kernel(), 0).is_ok() {}
        let (mms, tables) = (k.mms.iter().flatten().count(), k.g.pagetable);
        assert!(k.mm_create(&mut ctx, "exec").is_err(), "an mm without a pgd");
        assert!(k.dup_mm(&mut ctx, mm, "child").is_err(), "a fork's child without a pgd");
        assert_eq!(k.mms.iter().flatten().count(), mms, "no mm is left");
        assert_eq!(k.g.pagetable, tables, "no table is counted");
        assert!(k.mms.iter().flatten().all(|m| m.pgd.is_some()), "every mm has its pgd");
        k.check_rmap().expect("consistent");
    }

    /// A copy that stops for want of a page table (where the kernel's allocation would sleep)
    /// goes on from where it stopped once memory is back, and ends with the child a copy made
    /// in one go has: the same rss, the same mapcounts, and the page walk charged once.
    #[test]
    fn a_copy_that_stops_goes_on_where_it_stopped() {
        let (mut k1, mm1) = parent();
        let mut ctx = Ctx::default();
        let cost = k1.prof.get(KFunc::CopyPageRange);
        let c1 = k1.dup_mm(&mut ctx, mm1, "child").expect("fork");
        let cost_once = k1.prof.get(KFunc::CopyPageRange) - cost;
        let rss = |k: &Kernel, m: u32| (k.mm(m).rss_anon, k.mm(m).rss_file, k.mm(m).rss_shmem);
        for spare in [1, 2, 3, 5] {
            let (mut k, mm) = parent();
            let mut ctx = Ctx { in_reclaim: true, ..Ctx::default() };
            let cost = k.prof.get(KFunc::CopyPageRange);
            let mut held = Vec::new();
            while let Ok(p) = k.alloc_pages(&mut ctx, Gfp::kernel(), 0) {
                held.push(p);
            }
            for p in held.drain(..spare) {
                k.free_pages(&mut ctx, p, 0);
            }
            let child = k.dup_mm_init(&mut ctx, mm, "child").expect("the pgd fits");
            let mut cursor = DupCursor::default();
            assert!(k.dup_mmap(&mut ctx, child, mm, &mut cursor).is_err(), "spare {spare}: the copy stops");
            k.check_rmap().unwrap_or_else(|e| panic!("spare {spare}, stopped: {e}"));
            for p in held.drain(..) {
                k.free_pages(&mut ctx, p, 0);
            }
            k.dup_mmap(&mut ctx, child, mm, &mut cursor).expect("the copy goes on");
            k.check_rmap().unwrap_or_else(|e| panic!("spare {spare}: {e}"));
            assert_eq!(rss(&k, child), rss(&k1, c1), "spare {spare}: the child's rss");
            assert!(k.fr.mapcount == k1.fr.mapcount, "spare {spare}: every mapcount as after one copy");
            assert_eq!(k.prof.get(KFunc::CopyPageRange) - cost, cost_once, "spare {spare}: the walk charged once");
        }
    }

    /// Under per-VMA locking the copy write-locks each of the parent's VMAs (`vma_start_write`),
    /// so a fault there waits for the fork; the child's VMAs are not locked.
    #[test]
    fn the_copy_write_locks_the_parents_vmas() {
        let (mut k, mm) = parent();
        let mut ctx = Ctx::default();
        let child = k.dup_mm(&mut ctx, mm, "child").expect("fork");
        let per_vma = k.profile.fault_locking == crate::profiles::FaultLocking::PerVma;
        assert!(per_vma, "the parent() kernel locks per VMA");
        assert!(k.mm(mm).vmas.iter().all(|v| v.write_locked), "each parent VMA write-locked");
        assert!(k.mm(child).vmas.iter().all(|v| !v.write_locked), "no child VMA locked");
        let mut lk = crate::mmap_lock::MmapLockState { holds_write: true, ..Default::default() };
        crate::mmap_lock::mmap_write_unlock(&mut k, 0, &mut lk, mm);
        assert!(k.mm(mm).vmas.iter().all(|v| !v.write_locked), "mmap_write_unlock ends them");
    }

    /// A sparse parent (a region of 2,000 pages, a page faulted in every 700: most of its
    /// tables never made): the child gets a table only where the parent has one, each PTE the
    /// parent's with the accessed bit cleared, and the walk charges every page of the region once,
    /// the skipped tables' pages included.
    #[test]
    fn a_fork_copies_a_sparse_parent_table_by_table() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
        let mut ctx = Ctx::default();
        let mm = k.mm_create(&mut ctx, "parent").expect("pgd");
        let m = do_mmap(&mut k, &mut ctx, mm, &MmapArgs::anon("s", 2000 * 4096, false)).expect("mmap");
        for vpn in (m.start..m.end).step_by(700) {
            assert_eq!(k.handle_mm_fault(&mut ctx, mm, vpn, true), crate::memory::Fault::Done);
        }
        let before = k.prof.get(KFunc::CopyPageRange);
        let child = k.dup_mm(&mut ctx, mm, "child").expect("fork");
        assert_eq!(
            k.prof.get(KFunc::CopyPageRange) - before,
            (m.end - m.start) * k.cost.pte_walk,
            "each page walked once"
        );
        let tables = |k: &Kernel, mm: u32| k.mm(mm).ptes.keys().copied().collect::<Vec<u64>>();
        assert_eq!(tables(&k, child), tables(&k, mm), "a table where the parent has one");
        assert!(tables(&k, mm).len() < (m.end - m.start).div_ceil(512) as usize, "the parent is sparse");
        for vpn in m.start..m.end {
            let (pe, ce) = (k.pte_get(mm, vpn), k.pte_get(child, vpn));
            assert_eq!(ce, pe & !pte::YOUNG, "vpn {vpn}: the parent's PTE, old");
        }
        k.check_rmap().expect("consistent");
    }

    /// With memory enough, the same fork succeeds and the counts agree.
    #[test]
    fn a_fork_with_memory_enough_is_consistent() {
        let (mut k, mm) = parent();
        let mut ctx = Ctx::default();
        let child = k.dup_mm(&mut ctx, mm, "child").expect("fork");
        k.check_rmap().expect("consistent");
        assert_eq!(k.mm(child).rss_anon, k.mm(mm).rss_anon);
    }
}
