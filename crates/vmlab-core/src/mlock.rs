//! mlock (`mm/mlock.c`): VM_LOCKED on the VMA, and — with the unevictable LRU (2.6.28+) —
//! PG_mlocked pages moved off the scanned lists. Without it (2.4) locked pages stay on the
//! normal LRU, where reclaim keeps finding them and cannot free them.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmap::{pte, vm, Vma};
use crate::mmap_lock::{FaultStep, MmapLockState};
use crate::sched::{Outcome, QUANTUM_NS};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::workload::syscalls::Progress;

/// Why an mlock was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MlockErr {
    /// ENOMEM: over RLIMIT_MEMLOCK, or (2.4) over half of physical memory.
    NoMem,
}

/// `mlock_fixup` over [start, end): set VM_LOCKED (checking the limits), or clear it.
pub fn mlock_fixup(k: &mut Kernel, ctx: &mut Ctx, mm: u32, start: u64, end: u64, lock: bool) -> Result<(), MlockErr> {
    k.charge(ctx, KFunc::Syscall, k.cost.syscall);
    let r = k.vmas_in(mm, start, end);
    if lock {
        let newly: u64 = k.mm(mm).vmas[r.clone()].iter().filter(|v| v.flags & vm::LOCKED == 0).map(|v| v.pages()).sum();
        let locked = k.mm(mm).locked_vm + newly;
        if locked > k.mm(mm).memlock_limit {
            return Err(MlockErr::NoMem);
        }
        if k.profile.mlock_half_physmem && locked > k.total_pages() / 2 {
            return Err(MlockErr::NoMem);
        }
        let m = k.mm_mut(mm);
        for v in &mut m.vmas[r] {
            v.flags |= vm::LOCKED;
        }
        m.locked_vm = locked;
    } else {
        let vmas: Vec<Vma> = k.mm(mm).vmas[r.clone()].to_vec();
        for v in &vmas {
            if v.flags & vm::LOCKED != 0 {
                munlock_range(k, ctx, mm, v, v.start, v.end);
                k.mm_mut(mm).locked_vm -= v.pages();
            }
        }
        let m = k.mm_mut(mm);
        for v in &mut m.vmas[r] {
            v.flags &= !vm::LOCKED;
        }
    }
    Ok(())
}

/// `mlock_vma_page`: a page mapped into a VM_LOCKED VMA.
pub fn mlock_vma_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    k.charge(ctx, KFunc::MlockFixupPopulate, k.cost.mlock_page);
    if !k.profile.unevictable_lru || k.fr.has(p, pg::MLOCKED) {
        return;
    }
    k.fr.set(p, pg::MLOCKED);
    k.g.mlock += 1;
    k.ev.inc(Vm::UnevictablePgsMlocked);
    if k.fr.has(p, pg::LRU) {
        crate::vmscan::move_to_unevictable(k, p);
    }
}

/// `munlock_vma_pages_range`: clear PG_mlocked on pages no other locked VMA maps, and give
/// them back to the evictable LRU.
pub fn munlock_range(k: &mut Kernel, ctx: &mut Ctx, mm: u32, _v: &Vma, start: u64, end: u64) {
    if !k.profile.unevictable_lru {
        return;
    }
    let mut vpn = start;
    let mut walked = 0;
    while vpn < end {
        let Some(slot) = k.pte_slot(mm, vpn) else {
            vpn = ((vpn >> 9) + 1) << 9;
            continue;
        };
        let e = k.pt.entries[slot];
        walked += 1;
        if pte::present(e) {
            let p = pte::pfn(e);
            if k.fr.has(p, pg::MLOCKED) && !mapped_locked_elsewhere(k, ctx, p, mm, vpn) {
                k.fr.clear(p, pg::MLOCKED);
                k.g.mlock -= 1;
                k.ev.inc(Vm::UnevictablePgsMunlocked);
                if k.fr.has(p, pg::LRU) {
                    crate::vmscan::move_to_evictable(k, p);
                }
            }
        }
        vpn += 1;
    }
    k.charge(ctx, KFunc::MunlockVmaPages, walked * k.cost.mlock_page);
}

fn mapped_locked_elsewhere(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, mm: u32, vpn: u64) -> bool {
    if k.fr.mapcount[p as usize] <= 1 {
        return false;
    }
    let mut buf = std::mem::take(&mut k.rmap_buf);
    k.rmap_walk(ctx, p, &mut buf);
    let r = buf.iter().any(|m| !(m.mm == mm && m.vpn == vpn) && m.vma_flags & vm::LOCKED != 0);
    k.rmap_buf = buf;
    r
}

pub const ENOMEM: i64 = 12;

/// `populate_vma_page_range` / `__mm_populate`: fault in [*vpn, end) as user accesses do (with
/// the fault-locking policy's mmap_sem handling); pages already mapped in a VM_LOCKED VMA
/// become mlocked. Stops when the quantum is spent, or to sleep.
#[allow(clippy::too_many_arguments)]
pub fn populate_vma_page_range(
    k: &mut Kernel,
    t: usize,
    ctx: &mut Ctx,
    lk: &mut MmapLockState,
    mm: u32,
    vpn: &mut u64,
    end: u64,
    write: bool,
) -> Progress {
    while *vpn < end {
        if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS {
            return Progress::Preempted;
        }
        match crate::mmap_lock::do_user_addr_fault(k, t, ctx, lk, mm, *vpn, write) {
            FaultStep::Done => {
                k.events += 1;
                let e = k.pte_get(mm, *vpn);
                if pte::present(e) && pte::pfn(e) != k.zero_pfn {
                    if let Some(i) = k.find_vma(mm, *vpn) {
                        if k.mm(mm).vmas[i].flags & vm::LOCKED != 0 {
                            mlock_vma_page(k, ctx, pte::pfn(e));
                        }
                    }
                }
                *vpn += 1;
            }
            FaultStep::Block(o) => return Progress::Block(o),
            FaultStep::Segv => *vpn += 1,
            FaultStep::Oom => {
                return Progress::Block(Outcome::Block { until: Some(crate::oom_kill::alloc_retry_at(ctx)), io: false })
            }
        }
    }
    Progress::Done
}

/// One chunk of an mlock() (the caller holds mmap_sem for write): `Ok(write)` whether its pages
/// are then populated by write faults (a private writable VMA), `Err(ENOMEM)` when refused.
pub fn mlock_chunk(k: &mut Kernel, ctx: &mut Ctx, mm: u32, start: u64, end: u64) -> Result<bool, i64> {
    let r = mlock_fixup(k, ctx, mm, start, end, true);
    let w = k.find_vma(mm, start).map(|i| {
        let v = &k.mm(mm).vmas[i];
        v.flags & vm::WRITE != 0 && v.flags & vm::SHARED == 0
    });
    match r {
        Ok(()) => Ok(w.unwrap_or(false)),
        Err(_) => Err(ENOMEM),
    }
}
