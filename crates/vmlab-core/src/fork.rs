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

impl Kernel {
    /// `dup_mm` → `dup_mmap`: a copy of `parent`'s address space sharing every page, private
    /// writable ones copy-on-write in both. On failure the half-built child is gone again and
    /// the parent is as it was, but for the write-protected PTEs of what was already copied
    /// (as in the kernel: the next write takes a COW fault and reuses the page).
    pub fn dup_mm(&mut self, ctx: &mut Ctx, parent: u32, name: &str) -> Result<u32, AllocFail> {
        let child = self.mm_create(ctx, name);
        let vmas = self.mm(parent).vmas.clone();
        let members = self.mm(parent).member_of.clone();
        for &av in &members {
            self.anon_vmas[av as usize].mms.push(child);
        }
        {
            let regions = self.mm(parent).regions.clone();
            let limit = self.mm(parent).memlock_limit;
            let memcg = self.mm(parent).memcg;
            let c = self.mm_mut(child);
            c.memcg = memcg;
            c.member_of.extend(members);
            c.regions = regions;
            c.memlock_limit = limit;
        }
        let mut walked = 0u64;
        let mut copied = Ok(());
        for mut v in vmas {
            // mlock is not inherited across fork.
            v.flags &= !vm::LOCKED;
            if let VmaKind::File { file, pgoff } = v.kind {
                self.files[file as usize].i_mmap_add(child, v.start, v.end, pgoff);
            }
            let (start, end, flags) = (v.start, v.end, v.flags);
            self.vma_insert(child, v);
            copied = self.copy_page_range(ctx, child, parent, (start, end, flags), &mut walked);
            if copied.is_err() {
                break;
            }
        }
        self.charge(ctx, KFunc::CopyPageRange, walked * self.cost.pte_walk);
        if let Err(e) = copied {
            self.exit_mmap(ctx, child);
            return Err(e);
        }
        Ok(child)
    }

    /// `copy_page_range` for one VMA: the child's page table first, then, for each PTE of the
    /// parent's as it is *after* that allocation (its reclaim may have unmapped or swapped
    /// what was there), the count the child's copy holds and the copy.
    fn copy_page_range(
        &mut self,
        ctx: &mut Ctx,
        child: u32,
        parent: u32,
        (start, end, flags): (u64, u64, u32),
        walked: &mut u64,
    ) -> Result<(), AllocFail> {
        let cow = flags & vm::SHARED == 0;
        // `copy_page_range` hands the child old PTEs, and clean ones in a shared mapping (the
        // parent's PTE keeps the dirty bit): 2.4's `copy_pte_range` and 6.x's
        // `__copy_present_ptes` alike. So a forked process's first reference to each inherited
        // page is still to come, and the page-table walks see it that way.
        let aged = pte::YOUNG | if flags & vm::SHARED != 0 { pte::DIRTY } else { 0 };
        for vpn in start..end {
            *walked += 1;
            // Only where the parent has a PTE does the child need a table (pmd_none skips).
            if self.pte_get(parent, vpn) == 0 {
                continue;
            }
            let cs = self.pte_alloc(ctx, child, vpn)?;
            let e = self.pte_get(parent, vpn);
            if e == 0 {
                continue;
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
                    let ps = self.pte_slot(parent, vpn).unwrap_or(0);
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmap::do_mmap;
    use crate::mmzone::ZoneType;
    use crate::workload::syscalls::{MapBacking, MmapArgs};

    /// A parent with two private anonymous regions, written (and so in several page tables),
    /// and a shared one only read (zero-page PTEs).
    fn parent() -> (Kernel, u32) {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 16384)]);
        let mut k = Kernel::new(crate::profiles::find("linux-6.8").expect("profile"), cfg, 1).expect("kernel");
        let mut ctx = Ctx::default();
        let mm = k.mm_create(&mut ctx, "parent");
        for (name, pages, shared, write) in [("a", 700, false, true), ("b", 300, false, true), ("z", 40, true, false)] {
            let a = MmapArgs {
                name: name.into(),
                backing: MapBacking::Anon,
                offset: 0,
                len: Some(pages * 4096),
                fixed: false,
                shared,
                write: true,
                locked: false,
            };
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
