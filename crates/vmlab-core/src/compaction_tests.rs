//! Compaction on a zone whose free memory is all single pages between movable anonymous pages:
//! the run must make a free block of the order it was asked for by moving pages, keep every
//! mapping pointing at its page, and stop where the kernel's `compact_finished` says.

use super::*;
use crate::machine::MachineConfig;
use crate::mmap::{do_mmap, madvise_dontneed, pte};
use crate::mmzone::ZoneType;
use crate::workload::syscalls::MmapArgs;

/// One 8192-page zone, every page used (anonymous pages of one process, then kernel pages),
/// then the anonymous pages at odd frames freed: no two free frames are buddies.
fn fragmented() -> (Kernel, Ctx, u32, u64, u64) {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 8192)]);
    let row = crate::profiles::all().into_iter().find(crate::vmscan::has_compaction).expect("a row with compaction");
    let mut k = Kernel::new(row, cfg, 1).expect("kernel");
    let mut ctx = Ctx { in_reclaim: true, ..Ctx::default() };
    let mm = k.mm_create(&mut ctx, "p").expect("pgd");
    let m = do_mmap(&mut k, &mut ctx, mm, &MmapArgs::anon("a", 8192 * 4096, false)).expect("mmap");
    let mut end = m.start;
    while end < m.end && k.handle_mm_fault(&mut ctx, mm, end, true) == crate::memory::Fault::Done {
        end += 1;
    }
    while k.alloc_pages(&mut ctx, Gfp::kernel(), 0).is_ok() {}
    for vpn in m.start..end {
        if pte::pfn(k.pte_get(mm, vpn)) % 2 == 1 {
            madvise_dontneed(&mut k, &mut ctx, mm, vpn, vpn + 1);
        }
    }
    k.drain_all_pages();
    ctx.in_reclaim = false;
    (k, ctx, mm, m.start, end)
}

fn free_at_or_above(k: &Kernel, order: usize) -> u64 {
    k.zones[0].nr_free[order..].iter().sum()
}

/// Every mapped page of the range, by its PTE: the pages migration must keep mapped.
fn mapped(k: &mut Kernel, mm: u32, start: u64, end: u64) -> usize {
    (start..end).filter(|&v| pte::present(k.pte_get(mm, v))).count()
}

#[test]
fn direct_compaction_makes_the_block_it_was_asked_for() {
    let (mut k, mut ctx, mm, start, end) = fragmented();
    assert_eq!(free_at_or_above(&k, 1), 0, "only single free pages before");
    assert!(fragmentation_index(&k, 0, 3) > EXTFRAG_THRESHOLD);
    let (free, anon, n) = (k.nr_free_pages(), k.g.anon, mapped(&mut k, mm, start, end));
    let r = compact_zone_order(&mut k, &mut ctx, 0, 3, Mt::Movable, true, Mode::DirectReclaim);
    assert_eq!(r, CompactResult::Partial, "stopped once an order-3 block was free");
    assert!(free_at_or_above(&k, 3) > 0);
    assert!(k.ev.get(Vm::CompactPagesMoved) > 0 && k.ev.get(Vm::CompactBlocksMoved) > 0);
    assert!(ctx.sys_ns > 0, "the caller paid for it");
    assert_eq!((k.nr_free_pages(), k.g.anon, k.g.isolated), (free, anon, 0), "pages conserved");
    assert_eq!(mapped(&mut k, mm, start, end), n, "every page still mapped");
    k.check_rmap().expect("rmap");
}

#[test]
fn kswapd_compaction_runs_until_the_scanners_meet() {
    let (mut k, mut ctx, _, _, _) = fragmented();
    let r = compact_zone_order(&mut k, &mut ctx, 0, 3, Mt::Unmovable, true, Mode::Kswapd);
    assert_eq!(r, CompactResult::Complete);
    let (mut k2, mut ctx2, _, _, _) = fragmented();
    compact_zone_order(&mut k2, &mut ctx2, 0, 3, Mt::Movable, true, Mode::DirectReclaim);
    assert!(
        k.ev.get(Vm::CompactPagesMoved) > k2.ev.get(Vm::CompactPagesMoved),
        "kswapd mode moves more than the direct run that stops at the first block: {} vs {}",
        k.ev.get(Vm::CompactPagesMoved),
        k2.ev.get(Vm::CompactPagesMoved)
    );
    assert!(free_at_or_above(&k, 3) > free_at_or_above(&k2, 3));
    k.check_rmap().expect("rmap");
}

#[test]
fn no_fragmentation_no_compaction() {
    let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 8192)]);
    let row = crate::profiles::all().into_iter().find(crate::vmscan::has_compaction).expect("row");
    let mut k = Kernel::new(row, cfg, 1).expect("kernel");
    let mut ctx = Ctx::default();
    assert_eq!(fragmentation_index(&k, 0, 3), -1000, "a free order-3 block exists");
    // An empty zone has its blocks: compaction_suitable lets the run start, and it finds a
    // suitable block at once without moving anything.
    let r = compact_zone_order(&mut k, &mut ctx, 0, 3, Mt::Movable, true, Mode::DirectReclaim);
    assert_eq!((r, k.ev.get(Vm::CompactPagesMoved)), (CompactResult::Partial, 0));
}

#[test]
fn direct_compaction_below_the_rows_order_does_nothing() {
    let (mut k, mut ctx, _, _, _) = fragmented();
    k.profile.split26.compaction_min_order = 4;
    assert!(alloc_pages_direct_compact(&mut k, &mut ctx, Gfp::kernel(), 3, true).is_none());
    assert_eq!(k.ev.get(Vm::CompactStall), 0);
    k.profile.split26.compaction_min_order = 1;
    let p = alloc_pages_direct_compact(&mut k, &mut ctx, Gfp::kernel(), 3, true);
    assert_eq!(k.ev.get(Vm::CompactStall), 1);
    assert!(p.is_some(), "the allocation after compaction succeeds");
    assert_eq!(k.ev.get(Vm::CompactSuccess), 1);
}
