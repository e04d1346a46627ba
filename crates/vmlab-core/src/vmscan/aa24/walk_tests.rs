//! The counting rules that bound how much mapped shm 2.4.23's walk can hand to `shrink_cache`
//! (2.4.23-era `mm/vmscan.c`, as in `SimonKagstrom/mci500h-linux-2.4.27` commit e83d9e1):
//! `try_to_swap_out` returns `page_count(page) - !!page->buffers <= 2` — true only when the PTE
//! it dropped was the page's last; `swap_out_pmd` stops the walk when `count` (SWAP_CLUSTER_MAX)
//! reaches 0 and leaves `mm->swap_address` there; `shrink_cache` calls `swap_out` once each
//! time `max_mapped = nr_pages * vm_mapped_ratio` mapped pages have been passed. So a segment
//! every mm maps reaches the swap cache through the walk at SWAP_CLUSTER_MAX pages per
//! `nr_pages * vm_mapped_ratio` mapped pages scanned, whatever the number of CPUs: the walkers
//! queue on the `page_table_lock` of the one mm the shared `swap_mm` cursor is in.

use super::*;
use crate::machine::MachineConfig;
use crate::mmzone::ZoneType;
use crate::workload::syscalls::{MapBacking, MmapArgs};

pub(super) const MAPPERS: usize = 4;

/// The table's row that runs this engine with the page-table walk alone (no objrmap unmapping in
/// it), chosen by its mechanisms, so that a renamed or added row changes nothing here.
fn walk_only_row() -> crate::profiles::Profile {
    crate::profiles::all()
        .into_iter()
        .find(|p| p.engine == crate::profiles::Engine::Aa24 && !p.objrmap_walk)
        .expect("an aa row without objrmap")
}

/// 16 MiB DMA, 64 MiB Normal, 64 MiB HighMem, 64 MiB of swap.
pub(super) fn kernel() -> Kernel {
    let cfg = MachineConfig::of_zones(
        "i386",
        1,
        &[(ZoneType::Dma, 4096), (ZoneType::Normal, 16384), (ZoneType::HighMem, 16384)],
    );
    let mut k = Kernel::new(walk_only_row(), cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    k.swap = Some(crate::swap_state::SwapInfo::new(0, 0, 64 << 20));
    k
}

/// An `n`-page shm segment written by one process, which forks `MAPPERS` children and detaches:
/// every child maps every page, with the old PTEs `copy_page_range` gives a child. Returns the
/// children and the segment's pages in index order.
pub(super) fn segment_mapped_by_children(k: &mut Kernel, n: u64) -> (Vec<u32>, Vec<Pfn>) {
    let mut ctx = Ctx::default();
    let parent = k.mm_create(&mut ctx, "dbinit").expect("pgd");
    let a = MmapArgs {
        name: "sga".into(),
        backing: MapBacking::Shm("SGA".into()),
        offset: 0,
        len: Some(n as i64 * 4096),
        fixed: false,
        shared: true,
        write: true,
        locked: false,
    };
    let m = crate::mmap::do_mmap(k, &mut ctx, parent, &a).expect("mmap");
    for vpn in m.start..m.end {
        assert!(matches!(k.handle_mm_fault(&mut ctx, parent, vpn, true), crate::memory::Fault::Done));
    }
    let pages: Vec<Pfn> = (m.start..m.end).map(|v| pte::pfn(k.pte_get(parent, v))).collect();
    let kids: Vec<u32> = (0..MAPPERS).map(|i| k.dup_mm(&mut ctx, parent, &format!("db{i}")).expect("fork")).collect();
    k.do_munmap(&mut ctx, parent, m.start, n);
    assert!(pages.iter().all(|&p| k.fr.mapcount[p as usize] == MAPPERS as u16));
    (kids, pages)
}

fn pages_without_pte(k: &Kernel, pages: &[Pfn]) -> Vec<usize> {
    (0..pages.len()).filter(|&i| k.fr.mapcount[pages[i] as usize] == 0).collect()
}

/// One `swap_out` call tears down every mm but the last and makes SWAP_CLUSTER_MAX pages
/// freeable in the last; the next call resumes there and costs only SWAP_CLUSTER_MAX more PTEs.
#[test]
fn the_walk_makes_a_cluster_freeable_a_call_and_only_in_the_last_mapper() {
    let mut k = kernel();
    let n = 1024;
    let (kids, pages) = segment_mapped_by_children(&mut k, n);
    let mut ctx = Ctx::default();
    let cz = ZoneType::HighMem as usize;
    let mut so = new_swap_out(&mut k);
    assert_eq!(swap_out(&mut k, &mut ctx, &mut so, cz, u64::MAX), Some(true));
    let st = k.reclaim.aa24().stats.clone();
    let cluster = SWAP_CLUSTER_MAX;
    assert_eq!(st.walk_freeable_cache, cluster);
    assert_eq!(st.walk_unmapped, (MAPPERS as u64 - 1) * n + cluster, "whole mms torn down first");
    assert_eq!(pages_without_pte(&k, &pages), (0..cluster as usize).collect::<Vec<_>>());
    // Every other page is still mapped by the last child alone, where the cursor stays.
    let last = *kids.last().expect("children");
    assert_eq!(k.reclaim.aa24().swap_mm, Some(last));
    assert!(pages[cluster as usize..].iter().all(|&p| k.fr.mapcount[p as usize] == 1));
    let mut so = new_swap_out(&mut k);
    assert_eq!(swap_out(&mut k, &mut ctx, &mut so, cz, u64::MAX), Some(true));
    let st2 = &k.reclaim.aa24().stats;
    assert_eq!((st2.walk_unmapped - st.walk_unmapped, st2.walk_freeable_cache), (cluster, 2 * cluster));
}

/// `shrink_cache` converts what the walk left with no PTE (aa1's `shmem_writepage`: swap cache,
/// no I/O) and passes `nr_pages * vm_mapped_ratio` mapped pages before its next `swap_out`; with
/// fewer pages still to free the next walk comes sooner (issue 16's point 1).
#[test]
fn the_scan_passes_nr_times_vm_mapped_ratio_mapped_pages_between_walks() {
    let mut k = kernel();
    let n = 4096;
    let (_, pages) = segment_mapped_by_children(&mut k, n);
    let mut ctx = Ctx::default();
    let cz = ZoneType::HighMem as usize;
    let mut so = new_swap_out(&mut k);
    assert_eq!(swap_out(&mut k, &mut ctx, &mut so, cz, u64::MAX), Some(true));
    let ratio = k.profile.tunables.vm_mapped_ratio as i64;
    for nr in [SWAP_CLUSTER_MAX as i64, 1] {
        let before = k.reclaim.aa24().stats.writepages;
        let mut st = new_tfp(&k, cz);
        st.nr = nr;
        let max_mapped = nr * ratio;
        let mut held = None;
        let end = shrink_cache(&mut k, &mut ctx, &mut st, n, max_mapped, u64::MAX, &mut held);
        lru_unlock(&mut k, &ctx, &mut held);
        let ScanEnd::Mapped(left) = end else { panic!("nr {nr}: the scan ended without running out of max_mapped") };
        let converted = k.reclaim.aa24().stats.writepages - before;
        // Visited: the pages converted, then max_mapped + 1 mapped ones.
        assert_eq!(n - left, converted + max_mapped as u64 + 1, "nr {nr}");
        assert_eq!(st.nr, nr, "nothing clean to free");
        if nr == SWAP_CLUSTER_MAX as i64 {
            // The walk's cluster, found at the inactive tail (the segment's oldest pages).
            assert_eq!(converted, SWAP_CLUSTER_MAX);
            assert!(pages[..SWAP_CLUSTER_MAX as usize].iter().all(|&p| k.fr.has(p, pg::SWAPCACHE)));
        } else {
            assert_eq!(converted, 0, "the cluster went to the head of the list");
        }
    }
    assert_eq!(k.ev.get(Vm::Pswpout), 0, "aa1 converts without writing");
}

/// A cold buffer the database writes again is kept, not cycled through swap (history §22): the
/// walk meets the writer's young PTE, `try_to_swap_out` clears it and calls `mark_page_accessed`,
/// and a page that is inactive and `PG_referenced` (every shm page is, after `shmem_nopage`'s
/// fault) moves to the active list. The other mappers' PTEs still go, so only the writer maps it
/// afterwards, and the walk's cluster comes from the pages nobody wrote.
#[test]
fn a_buffer_written_again_is_activated_by_the_walk_not_freed() {
    let mut k = kernel();
    let n = 256;
    let (kids, pages) = segment_mapped_by_children(&mut k, n);
    let mut ctx = Ctx::default();
    let writer = kids[0];
    let start = k.mms[writer as usize].as_ref().expect("mm").vmas.iter().map(|v| v.start).min().expect("vma");
    let written = 64usize;
    for vpn in start..start + written as u64 {
        assert!(matches!(k.access(&mut ctx, writer, vpn, true), crate::memory::Fault::Done));
    }
    assert!(pages.iter().all(|&p| k.fr.has(p, pg::REFERENCED) && !k.fr.has(p, pg::ACTIVE)));
    let cz = ZoneType::HighMem as usize;
    let mut so = new_swap_out(&mut k);
    assert_eq!(swap_out(&mut k, &mut ctx, &mut so, cz, u64::MAX), Some(true));
    assert_eq!(k.reclaim.aa24().stats.walk_young, written as u64);
    for (i, &p) in pages.iter().enumerate() {
        if i < written {
            assert!(k.fr.has(p, pg::ACTIVE), "page {i}: written again, so activated");
            assert_eq!(k.fr.mapcount[p as usize], 1, "page {i}: still mapped by its writer");
        }
    }
    let cluster = SWAP_CLUSTER_MAX as usize;
    assert_eq!(pages_without_pte(&k, &pages), (written..written + cluster).collect::<Vec<_>>());
}
