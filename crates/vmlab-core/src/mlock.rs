//! mlock (`mm/mlock.c`): VM_LOCKED on the VMA, and — with the unevictable LRU (2.6.28+) —
//! PG_mlocked pages moved off the scanned lists. Without it (2.4) locked pages stay on the
//! normal LRU, where reclaim keeps finding them and cannot free them.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmap::{pte, vm, Vma};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

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
