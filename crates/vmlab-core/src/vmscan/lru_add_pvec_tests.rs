//! 2.6.36's per-CPU LRU-add pagevecs (`vmscan/swap.rs`, `split26.lru_add_pvec`): a page waiting
//! in one is not PG_lru, so an order > 0 isolation does not take it as a neighbour and
//! `mark_page_accessed` cannot activate it (Mel Gorman, "[PATCH 2/4] mm: pagevec: Defer deciding
//! what LRU to add a page to until pagevec drain time", linux-mm, 13 May 2013); a drain puts a
//! CPU's pages on their lists in the order they came. Each test runs the row with the pagevecs
//! off too, where the same steps give the other answer.

use super::free_page_list_tests::machine;
use super::*;
use crate::mmzone::Mt;

const DMA32: usize = 1;

/// A split-LRU row picked by its mechanism (LRU-add pagevecs), with `pvec` as their size, on a
/// two-CPU machine with a disk for the page cache.
fn kernel(pvec: u32) -> Kernel {
    let mut p = crate::profiles::all()
        .into_iter()
        .find(crate::vmscan::has_lru_add_pvecs)
        .expect("a split-LRU row with LRU-add pagevecs");
    p.split26.lru_add_pvec = pvec;
    let mut cfg = machine();
    cfg.cpus = 2;
    let mut k = Kernel::new(p, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    k
}

fn on_cpu(cpu: u32) -> Ctx {
    Ctx { cpu, is_kswapd: true, ..Default::default() }
}

/// Page-cache page `idx` of `file` in frame `p`, added by a task on `ctx`'s CPU.
fn cache(k: &mut Kernel, ctx: &mut Ctx, file: u32, idx: u64, p: Pfn) {
    k.add_to_page_cache(ctx, file, idx, p);
    k.fr.set(p, pg::UPTODATE);
}

/// The eight frames of an aligned order-3 block of DMA32 become page cache: seven added on CPU 0
/// and drained there, the last added on CPU 1. An order-3 isolation from the inactive file
/// list's tail (the block's first page) takes the seven, and the eighth only if it reached the
/// list. Returns the pages taken and the block.
fn isolate_block(pvec: u32) -> (Vec<Pfn>, Vec<Pfn>, Kernel) {
    let mut k = kernel(pvec);
    let file = k.file_create("block", 8 * 4096, 0, false);
    let base = k.rmqueue(DMA32, 3, Mt::Movable).expect("an order-3 block");
    assert_eq!(k.zones[DMA32].phys(base) & 7, 0, "aligned");
    let block: Vec<Pfn> = (base..base + 8).collect();
    let (mut c0, mut c1) = (on_cpu(0), on_cpu(1));
    for (i, &p) in block[..7].iter().enumerate() {
        cache(&mut k, &mut c0, file, i as u64, p);
    }
    crate::vmscan::lru_add_drain(&mut k, &c0);
    cache(&mut k, &mut c1, file, 7, block[7]);
    let mut out = Vec::new();
    let mut counts = [0u64; 4];
    let scanned = isolate_lru_pages(
        &mut k,
        &mut c0,
        DMA32,
        LRU_INACTIVE_FILE,
        1,
        3,
        Isolate::Inactive,
        true,
        &mut out,
        &mut counts,
    );
    assert_eq!(scanned, out.len() as u64);
    (out, block, k)
}

#[test]
fn a_neighbour_still_in_a_pagevec_is_not_isolated() {
    let (taken, block, k) = isolate_block(14);
    assert_eq!(taken[0], block[0], "the tail page first");
    assert_eq!(taken.len(), 7, "the seven on the list, not the one waiting on CPU 1");
    assert!(!taken.contains(&block[7]));
    assert_eq!(k.fr.lru_list(block[7]), crate::mmzone::LRU_PVEC, "still waiting");
    assert_eq!(k.g.lru_pvec, 1);
    k.check_frames().expect("pages conserved");
    let (taken, block, _) = isolate_block(0);
    assert_eq!(taken.len(), 8, "without pagevecs the whole block is taken");
    assert!(taken.contains(&block[7]));
}

/// A page-cache page read twice before its CPU drains: (active, on a list) after the two
/// accesses, then after a drain and one more access.
fn accessed_twice(pvec: u32) -> [(bool, bool); 2] {
    let mut k = kernel(pvec);
    let file = k.file_create("f", 4096, 0, false);
    let p = k.rmqueue(DMA32, 0, Mt::Movable).expect("a page");
    let mut ctx = on_cpu(0);
    cache(&mut k, &mut ctx, file, 0, p);
    let state = |k: &Kernel| (k.fr.has(p, pg::ACTIVE), k.fr.has(p, pg::LRU));
    crate::vmscan::mark_page_accessed(&mut k, p);
    crate::vmscan::mark_page_accessed(&mut k, p);
    let before = state(&k);
    crate::vmscan::lru_add_drain(&mut k, &ctx);
    let drained = (k.fr.has(p, pg::ACTIVE), k.fr.lru_list(p) as usize);
    if pvec > 0 {
        assert_eq!(drained, (false, LRU_INACTIVE_FILE), "the drain puts it on the inactive list, referenced");
        assert!(k.fr.has(p, pg::REFERENCED));
    }
    crate::vmscan::mark_page_accessed(&mut k, p);
    k.check_frames().expect("pages conserved");
    [before, state(&k)]
}

#[test]
fn a_page_in_a_pagevec_referenced_twice_is_not_activated_before_the_drain() {
    assert_eq!(accessed_twice(14), [(false, false), (true, true)], "activated by the first access after the drain");
    assert_eq!(accessed_twice(0), [(true, true), (true, true)], "without pagevecs the second access activates it");
}

#[test]
fn a_drain_puts_the_pages_on_their_lists_in_order() {
    let mut k = kernel(14);
    let file = k.file_create("f", 16 * 4096, 0, false);
    let mut ctx = on_cpu(1);
    let mut pages = Vec::new();
    for _ in 0..9 {
        pages.push(k.rmqueue(DMA32, 0, Mt::Movable).expect("a page"));
    }
    // Five page-cache pages, one anonymous page, three more page-cache pages.
    for (i, &p) in pages[..5].iter().enumerate() {
        cache(&mut k, &mut ctx, file, i as u64, p);
    }
    let anon = pages[5];
    k.fr.set(anon, pg::ANON | pg::SWAPBACKED | pg::UPTODATE);
    k.g.anon += 1;
    crate::vmscan::lru_cache_add(&mut k, &ctx, anon);
    for (i, &p) in pages[6..9].iter().enumerate() {
        cache(&mut k, &mut ctx, file, 5 + i as u64, p);
    }
    let lists = |k: &Kernel, l: usize| k.zones[DMA32].lruvec.lists[l].collect(&k.fr);
    assert!(lists(&k, LRU_INACTIVE_FILE).is_empty() && lists(&k, LRU_ACTIVE_ANON).is_empty(), "all waiting");
    assert!(!k.fr.has(anon, pg::ACTIVE), "PG_active waits for the drain");
    assert_eq!(k.reclaim.split().zone[DMA32].recent_scanned, [0, 0], "counted at the drain");
    assert_eq!(k.g.lru_pvec, 9);
    // One page freed while it waits leaves its pagevec; the others keep their order.
    crate::vmscan::del_page_from_lru(&mut k, pages[2]);
    k.remove_from_page_cache(pages[2], 0);
    k.free_pages(&mut ctx, pages[2], 0);
    k.check_frames().expect("pages conserved with a page freed from a pagevec");
    // Another CPU's drain leaves them; their own CPU's puts them on the lists.
    crate::vmscan::lru_add_drain(&mut k, &on_cpu(0));
    assert_eq!(k.g.lru_pvec, 8);
    crate::vmscan::lru_add_drain(&mut k, &ctx);
    assert_eq!(k.g.lru_pvec, 0);
    let mut file_pages: Vec<Pfn> = pages[..2].to_vec();
    file_pages.extend_from_slice(&pages[3..5]);
    file_pages.extend_from_slice(&pages[6..9]);
    let mut tail_first = lists(&k, LRU_INACTIVE_FILE);
    tail_first.reverse();
    assert_eq!(tail_first, file_pages, "oldest at the tail: the order they were added");
    assert_eq!(lists(&k, LRU_ACTIVE_ANON), vec![anon]);
    assert!(k.fr.has(anon, pg::ACTIVE));
    assert_eq!(k.reclaim.split().zone[DMA32].recent_scanned, [1, 7]);
    assert_eq!(k.reclaim.split().zone[DMA32].recent_rotated, [1, 0]);
    k.check_frames().expect("pages conserved");
    // The fourteenth page of a list fills its pagevec: the fourteen go on the list at once.
    let more = k.file_create("g", 14 * 4096, 0, false);
    let mut batch = Vec::new();
    for i in 0..14 {
        let p = k.rmqueue(DMA32, 0, Mt::Movable).expect("a page");
        cache(&mut k, &mut ctx, more, i, p);
        batch.push(p);
        assert_eq!(k.fr.has(p, pg::LRU), i == 13);
    }
    let mut tail_first = lists(&k, LRU_INACTIVE_FILE);
    tail_first.reverse();
    assert_eq!(tail_first[7..], batch[..], "a full pagevec goes to the head, in order");
    assert_eq!(k.g.lru_pvec, 0);
}
