//! 2.6.36–3.2 `shrink_page_list` keeps the pages it reclaims on a local list (`list_add`, so
//! newest first) and frees them at its end through `free_page_list`: pagevecs of 14 filled from
//! the list's head, each handed to `__pagevec_free`, which frees from the last slot down, cold
//! (Mel Gorman, "[PATCH 10/14] vmscan: Setup pagevec as late as possible in
//! shrink_page_list()", linux-mm, 29 Jun 2010; `__pagevec_free` and `free_hot_cold_page` in
//! galeksandrp-keenetic/linux-2.6.36 mm/page_alloc.c). A cold free goes to the per-CPU list's
//! tail, so the order of the frees is the order in which cold allocations (readahead) and the
//! bulk drains take the pages back.

use super::*;
use crate::machine::MachineConfig;
use crate::mmzone::Mt;

const DMA32: usize = 1;
/// Two full pagevecs and a remainder of two.
const RECLAIMED: usize = 30;

/// 16 MiB DMA, 96 MiB DMA32, 32 MiB Normal.
pub(super) fn machine() -> MachineConfig {
    MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 24576), (ZoneType::Normal, 8192)])
}

/// With every page of DMA32 held, `n` of them at scattered pfns (so that no order on a list can come from pfn
/// order) become clean page cache of one file, oldest at the inactive list's tail.
pub(super) fn scattered_cache(k: &mut Kernel, ctx: &mut Ctx, n: usize) -> Vec<Pfn> {
    let file = k.file_create("cache", n as u64 * 4096, 0, false);
    let mut held = Vec::new();
    while let Some(p) = k.rmqueue(DMA32, 0, Mt::Movable) {
        held.push(p);
    }
    let cache: Vec<Pfn> = held.iter().rev().step_by(7).take(n).copied().collect();
    for (i, &p) in cache.iter().enumerate() {
        k.add_to_page_cache(ctx, file, i as u64, p);
        k.fr.set(p, pg::UPTODATE);
    }
    cache
}

/// kswapd's scan control for one `shrink_inactive_list` call.
pub(super) fn kswapd_sc() -> Sc {
    Sc {
        nr_to_reclaim: SWAP_CLUSTER_MAX,
        may_writepage: true,
        may_swap: true,
        may_unmap: true,
        is_kswapd: true,
        ..Default::default()
    }
}

/// Reclaim `RECLAIMED` clean, unmapped page-cache pages of DMA32 in one `shrink_inactive_list`
/// call, with every other page of the zone held. Returns the pages in reclaim order and the
/// zone's movable per-CPU list from its tail (the order cold allocations take them back).
fn reclaim_then_read_tail(free_page_list: bool) -> (Vec<Pfn>, Vec<Pfn>) {
    let cfg = machine();
    // A row of the split-LRU engine that frees reclaim's pages cold onto per-migratetype lists,
    // chosen by its mechanisms, so a renamed or added row changes nothing here.
    let mut p = crate::profiles::all()
        .into_iter()
        .find(|p| p.engine == crate::profiles::Engine::Split2636 && p.reclaim_frees_cold && p.pcp_migratetype_lists)
        .expect("a split-LRU row with cold reclaim frees and per-migratetype lists");
    p.split26.free_page_list = free_page_list;
    let mut k = Kernel::new(p, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    assert!(k.profile.reclaim_frees_cold && k.profile.pcp_migratetype_lists);
    let mut ctx = Ctx { cpu: 0, is_kswapd: true, ..Default::default() };
    let cache = scattered_cache(&mut k, &mut ctx, RECLAIMED);
    let li = Mt::Movable as usize;
    assert!(k.zones[DMA32].pcp[0].lists[li].is_empty());
    let mut sc = kswapd_sc();
    let reclaimed = shrink_inactive_list(&mut k, &mut ctx, DMA32, SWAP_CLUSTER_MAX, &mut sc, DEF_PRIORITY, true);
    assert_eq!(reclaimed, RECLAIMED as u64, "every clean page is reclaimed");
    let pcp = &k.zones[DMA32].pcp[0];
    assert_eq!(pcp.count(), RECLAIMED as u64, "no drain: all reclaimed pages are on the list");
    let mut tail_first = pcp.lists[li].collect(&k.fr);
    tail_first.reverse();
    // The inactive list's tail is the oldest page: the first added, reclaimed first.
    (cache, tail_first)
}

#[test]
fn reclaim_frees_its_pages_at_the_end_in_pagevecs_of_14_last_slot_first() {
    let (reclaimed, tail_first) = reclaim_then_read_tail(true);
    // Freed: reclaimed[16..30] in reclaim order, then [2..16], then [0..2]; each to the tail.
    let mut freed: Vec<Pfn> = Vec::new();
    for pagevec in reclaimed.rchunks(14) {
        freed.extend_from_slice(pagevec);
    }
    let expect: Vec<Pfn> = freed.iter().rev().copied().collect();
    assert_eq!(tail_first, expect, "tail first: the oldest two reclaimed, newest first, then each pagevec's");
    assert_eq!(tail_first[..2], [reclaimed[1], reclaimed[0]]);
    assert_eq!(tail_first[2], reclaimed[15], "the third page back is the last of the middle pagevec");
    assert_eq!(*tail_first.last().unwrap(), reclaimed[16]);
}

#[test]
fn without_free_page_list_each_page_is_freed_as_it_is_reclaimed() {
    let (reclaimed, tail_first) = reclaim_then_read_tail(false);
    let expect: Vec<Pfn> = reclaimed.iter().rev().copied().collect();
    assert_eq!(tail_first, expect, "the last page reclaimed sits at the tail");
}
