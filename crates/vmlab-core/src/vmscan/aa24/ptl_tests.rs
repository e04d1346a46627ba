//! `mm->page_table_lock` as 2.4.23's walk holds it. `swap_out_mm` (2.4.23-era `mm/vmscan.c`, as
//! in `SimonKagstrom/mci500h-linux-2.4.27` commit e83d9e1) takes the walked mm's lock with
//! `spin_lock` before it reads `mm->swap_address` and lets go at `out_unlock`, after the walk:
//! a fault of that mm (`handle_mm_fault` takes the same lock) spins for what is left of the walk,
//! and only then. The simulation runs a task's whole quantum at its dispatch time, so a task
//! simulated after the walker may reach the lock at a time before the walk took it; the lock is
//! free at that time. Two walks of one mm never overlap: a second walker waits for the first
//! one's `spin_unlock` whatever its clock. objrmap (2.4.23aa2's `try_to_unmap_shared_vma`, and
//! the 2.6-aa `mm/objrmap.c` it shares functions with: `spin_trylock(&mm->page_table_lock)` in
//! `try_to_unmap_one`) only trylocks another mm's lock: it fails inside a walker's hold, not
//! before it. Walkers queued one behind the other keep the lock busy without a break.

use super::walk_tests::{kernel, segment_mapped_by_children};
use super::*;
use crate::mmzone::ZoneType;

const T0: u64 = 1_000_000_000;

fn fault_spin(k: &mut Kernel, mm: u32, at: u64) -> u64 {
    let mut c = Ctx { now: at, ..Default::default() };
    page_table_lock(k, &mut c, mm);
    c.sys_ns
}

#[test]
fn a_fault_spins_only_inside_the_walks_hold_of_its_mm() {
    let mut k = kernel();
    let (kids, _) = segment_mapped_by_children(&mut k, 1024);
    // The walker was dispatched at T0 and scanned the inactive list for 300 us before it walked.
    let mut w = Ctx { now: T0, sys_ns: 300_000, ..Default::default() };
    let mut so = new_swap_out(&mut k);
    assert_eq!(swap_out(&mut k, &mut w, &mut so, ZoneType::HighMem as usize, u64::MAX), Some(true));
    let mm = kids[0];
    let (from, until) = k.reclaim.aa24().ptl_hold(mm);
    assert!(from >= T0 + 300_000, "the lock is taken when the walk of the mm starts");
    assert!(until > from + 10_000, "a walk that unmaps 1,024 PTEs holds it a while: {from}..{until}");
    // Another CPU, dispatched at the same instant, faults before the walk took the lock.
    assert_eq!(fault_spin(&mut k, mm, T0), 0);
    assert_eq!(fault_spin(&mut k, mm, from - 1), 0);
    // ... inside the hold it spins until the walker lets go.
    let mid = from + (until - from) / 2;
    assert_eq!(fault_spin(&mut k, mm, mid), until - mid);
    assert_eq!(fault_spin(&mut k, mm, from), until - from);
    assert_eq!(fault_spin(&mut k, mm, until), 0);
    // The spin is charged on the fault path too.
    let before = k.prof.get(KFunc::PageTableLockSpin);
    let mut c = Ctx { now: mid, ..Default::default() };
    let vpn = k.mm(mm).vmas[0].start;
    k.handle_mm_fault(&mut c, mm, vpn, false);
    let spun = k.prof.get(KFunc::PageTableLockSpin) - before;
    assert!(spun > 0 && spun <= until - mid, "{spun}");
    // A second walker simulated after the first, with an earlier clock, waits for the whole walk.
    let mut w2 = Ctx { now: T0, ..Default::default() };
    walker_page_table_lock(&mut k, &mut w2, mm);
    assert_eq!(w2.sys_ns, until - T0);
    // objrmap's trylock of that mm fails inside the hold only.
    let s = k.reclaim.aa24();
    assert!(!s.ptl_held_at(mm, T0) && s.ptl_held_at(mm, mid) && !s.ptl_held_at(mm, until));
    // The queued walker walks the mm again as soon as it has the lock: the lock stays busy from
    // the first walk's start to the second's end, and a fault inside the first waits for both.
    assert_eq!(w2.clock(), until);
    k.reclaim.aa24_mut().set_swap_address(mm, 0);
    swap_out_mm(&mut k, &mut w2, mm, SWAP_CLUSTER_MAX, ZoneType::HighMem as usize);
    let (from2, until2) = k.reclaim.aa24().ptl_hold(mm);
    assert!(until2 > until, "the second walk took time");
    assert_eq!(from2, from);
    assert_eq!(fault_spin(&mut k, mm, mid), until2 - mid);
    // A later walk after a free interval starts a hold of its own.
    let mut w3 = Ctx { now: until2 + 1_000, ..Default::default() };
    k.reclaim.aa24_mut().set_swap_address(mm, 0);
    swap_out_mm(&mut k, &mut w3, mm, SWAP_CLUSTER_MAX, ZoneType::HighMem as usize);
    assert_eq!(k.reclaim.aa24().ptl_hold(mm).0, until2 + 1_000);
    assert_eq!(fault_spin(&mut k, mm, until2 + 500), 0);
}
