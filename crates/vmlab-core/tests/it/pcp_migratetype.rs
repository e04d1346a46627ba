//! Per-CPU page lists per migrate type (2.6.24+ `pcp->lists[]`, `Profile::pcp_migratetype_lists`):
//! a page freed from a movable pageblock stays on the movable list, so an unmovable order-0
//! allocation on the same CPU refills from the unmovable buddy lists instead of taking it.
use vmlab_core::kernel::{Ctx, Kernel};
use vmlab_core::machine::MachineConfig;
use vmlab_core::page_alloc::Gfp;

fn kernel(profile: &str) -> Kernel {
    let mib = 256u64;
    let zones = MachineConfig::layout(mib << 20, 1, "x86_64").expect("layout");
    let cfg = MachineConfig {
        memory_bytes: mib << 20,
        cpus: 2,
        nodes: 1,
        arch: "x86_64".into(),
        cpu_mhz: 3000,
        reserved_bytes: 0,
        reserved_low_bytes: 0,
        zones,
    };
    Kernel::new(vmlab_core::profiles::find(profile).expect("profile"), cfg, 1).expect("kernel")
}

/// Free a movable page, then allocate an unmovable one on the same CPU: is it the same page?
fn unmovable_reuses_movable_page(profile: &str) -> bool {
    let mut k = kernel(profile);
    let mut ctx = Ctx { cpu: 0, ..Default::default() };
    let p = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("movable page");
    k.free_pages(&mut ctx, p, 0);
    let q = k.alloc_pages(&mut ctx, Gfp::kernel(), 0).expect("unmovable page");
    let same = p == q;
    k.free_pages(&mut ctx, q, 0);
    same
}

#[test]
fn pcp_lists_keep_migrate_types_apart() {
    assert!(vmlab_core::profiles::find("linux-2.6.36").expect("profile").pcp_migratetype_lists);
    assert!(!unmovable_reuses_movable_page("linux-2.6.36"));
    // One list per CPU and zone: the hot page just freed is handed out whatever its type.
    assert!(!vmlab_core::profiles::find("linux-6.8").expect("profile").pcp_migratetype_lists);
    assert!(unmovable_reuses_movable_page("linux-6.8"));
}

/// Take two movable pages, free the first hot and the second cold, allocate again: a hot free
/// is reused first (pcp head), a cold one goes to the tail and waits behind the rest of the list.
#[test]
fn cold_free_goes_to_the_pcp_tail() {
    let mut k = kernel("linux-2.6.36");
    assert!(k.profile.reclaim_frees_cold);
    let mut ctx = Ctx { cpu: 0, ..Default::default() };
    let a = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("page a");
    let b = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("page b");
    k.free_cold_page(&mut ctx, b);
    k.free_pages(&mut ctx, a, 0);
    let first = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("first");
    assert_eq!(first, a, "the hot page comes back first");
    let mut seen_b = false;
    let mut taken = vec![first];
    // b sits behind the rest of the batch rmqueue_bulk put on the list.
    for i in 0..64 {
        let p = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("page");
        taken.push(p);
        if p == b {
            seen_b = true;
            assert!(i > 0, "the cold page was handed out before the rest of the list");
            break;
        }
    }
    assert!(seen_b, "the cold page never came back");
    for p in taken {
        k.free_pages(&mut ctx, p, 0);
    }
    assert!(!vmlab_core::profiles::find("linux-6.8").expect("profile").reclaim_frees_cold);
}

/// `__free_one_page` (2.6.35+, `Profile::buddy_merge_tail`): a block freed while the buddy of
/// the block it would merge into is free goes to the free list's tail, so the next allocation
/// of its order takes another block and the freed one keeps its chance to coalesce.
fn order1_reuses_block_about_to_merge(profile: &str) -> bool {
    let mut k = kernel(profile);
    let mut ctx = Ctx { cpu: 0, ..Default::default() };
    // Another free order-1 block, freed while its neighbours are in use.
    let d = k.alloc_pages(&mut ctx, Gfp::kernel(), 2).expect("order-2 block");
    let _e = k.alloc_pages(&mut ctx, Gfp::kernel(), 2).expect("order-2 block");
    k.free_pages(&mut ctx, d + 2, 1);
    // An order-3 block: free its upper half, then the second quarter. The quarter cannot merge
    // (its buddy, the first quarter, is in use) but the upper half, its order-2 neighbour, is free.
    let b = k.alloc_pages(&mut ctx, Gfp::kernel(), 3).expect("order-3 block");
    k.free_pages(&mut ctx, b + 4, 2);
    k.free_pages(&mut ctx, b + 2, 1);
    let next = k.alloc_pages(&mut ctx, Gfp::kernel(), 1).expect("order-1 block");
    next == b + 2
}

#[test]
fn a_block_about_to_merge_is_queued_last() {
    assert!(vmlab_core::profiles::find("linux-2.6.36").expect("profile").buddy_merge_tail);
    assert!(!order1_reuses_block_about_to_merge("linux-2.6.36"));
    assert!(vmlab_core::profiles::find("linux-6.8").expect("profile").buddy_merge_tail);
    // Before 2.6.35 the freed block went to the head and was the next one handed out.
    assert!(!vmlab_core::profiles::find("linux-2.6.26").expect("profile").buddy_merge_tail);
    assert!(order1_reuses_block_about_to_merge("linux-2.6.26"));
}

/// __GFP_COLD (page-cache reads in 2.6.36): a cold request takes the pcp tail. A reclaimed page
/// freed cold is therefore the next page a read gets, while a write (hot) takes the head.
#[test]
fn cold_allocation_takes_the_pcp_tail() {
    let mut k = kernel("linux-2.6.36");
    assert!(k.profile.page_cache_read_cold);
    let mut ctx = Ctx { cpu: 0, ..Default::default() };
    let cold = Gfp { cold: true, ..Gfp::highuser_movable() };
    let a = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("page a");
    let b = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("page b");
    k.free_cold_page(&mut ctx, b);
    k.free_pages(&mut ctx, a, 0);
    assert_eq!(k.alloc_pages(&mut ctx, cold, 0).expect("cold"), b, "a cold request takes the cold-freed page");
    assert_eq!(k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("hot"), a, "a hot request takes the head");
    // An empty list refilled for a cold request hands the batch out in physical order too.
    let mut k = kernel("linux-2.6.36");
    let first = k.alloc_pages(&mut ctx, cold, 0).expect("first");
    let second = k.alloc_pages(&mut ctx, cold, 0).expect("second");
    assert_eq!(second, first + 1, "cold refill out of physical order");
    assert!(!vmlab_core::profiles::find("linux-6.8").expect("profile").page_cache_read_cold);
}

/// `free_hot_cold_page` (galeksandrp-keenetic/linux-2.6.36 `mm/page_alloc.c`): `pcp->count++;
/// if (pcp->count >= pcp->high) free_pcppages_bulk(zone, pcp->batch, pcp)` — a CPU's list never
/// holds `high` pages after a free; the free that brings it to `high` gives a batch back. 2.6.26
/// has the same test, 6.8's `free_unref_page_commit` `pcp->count >= high` too.
#[test]
fn pcp_list_is_drained_when_a_free_brings_it_to_high() {
    for profile in ["linux-2.6.26", "linux-2.6.36", "linux-6.8"] {
        let mut k = kernel(profile);
        let mut ctx = Ctx { cpu: 0, ..Default::default() };
        let zid = k.zones.iter().rposition(|z| !z.pcp.is_empty() && z.managed > 0).expect("a zone with pcp lists");
        let (high, batch) = (k.zones[zid].pcp[0].high, k.zones[zid].pcp[0].batch);
        let pages: Vec<_> =
            (0..2 * high).map(|_| k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("page")).collect();
        assert!(pages.iter().all(|&p| k.zone_of(p) == zid), "{profile}: pages from one zone");
        k.drain_all_pages();
        let mut most = 0;
        for (i, &p) in pages.iter().enumerate() {
            k.free_pages(&mut ctx, p, 0);
            let n = k.zones[zid].pcp[0].count();
            most = most.max(n);
            if i as u64 + 1 == high {
                assert_eq!(n, high - batch, "{profile}: the free that reaches high drains a batch");
            }
        }
        assert_eq!(most, high - 1, "{profile}: the list never holds high pages");
    }
}

/// The order and migrate-type list of the free block holding `p`.
fn free_block_of(k: &Kernel, p: u32) -> Option<(u32, u8)> {
    let z = &k.zones[k.zone_of(p)];
    (0..vmlab_core::mmzone::MAX_ORDER as u32).find_map(|o| {
        let head = p.checked_sub(z.phys(p) % (1 << o)).filter(|&h| h >= z.start_pfn)?;
        let aux = k.fr.aux[head as usize];
        (k.fr.has(head, vmlab_core::mm_types::pg::BUDDY) && (aux & 0xf) as u32 == o).then_some((o, aux >> 4))
    })
}

/// A page sits on a pcp list while its pageblock changes type (a steal claimed it). 2.6.36's
/// drain frees it to the type recorded when it was freed (`page_private`); 2.6.26's to the
/// pageblock's type at the drain.
#[test]
fn pcp_drain_frees_to_the_migratetype_recorded_at_free() {
    use vmlab_core::mmzone::Mt;
    let drained_to = |profile: &str| {
        let mut k = kernel(profile);
        let mut ctx = Ctx { cpu: 0, ..Default::default() };
        let p = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("movable page");
        k.free_pages(&mut ctx, p, 0);
        let zid = k.zone_of(p);
        let b = k.pageblock_of(zid, p);
        assert_eq!(k.pageblock_mt[b], Mt::Movable as u8);
        k.pageblock_mt[b] = Mt::Unmovable as u8;
        k.drain_all_pages();
        free_block_of(&k, p).expect("p is free in a buddy block").1
    };
    assert!(vmlab_core::profiles::find("linux-2.6.36").unwrap().pcp_drain_recorded_mt);
    assert_eq!(drained_to("linux-2.6.36"), Mt::Movable as u8);
    assert_eq!(drained_to("linux-2.6.26"), Mt::Unmovable as u8);
}

/// The cycle that keeps a zone's free memory single when its unmovable lists are empty
/// (galeksandrp-keenetic/linux-2.6.36 `mm/page_alloc.c`): `rmqueue_bulk` fills an empty
/// unmovable per-CPU list with `pcp->batch` calls of `__rmqueue`, and each falls back in
/// `__rmqueue_fallback`, which takes the largest movable block — a pair before any single —
/// and, below `pageblock_order >> 1`, gives the other half back to the movable lists. Freed,
/// a stolen page goes to the per-CPU list of its pageblock's type (`free_hot_cold_page`:
/// movable), where the next movable order-0 allocation on that CPU takes it, so the pair does
/// not form again; only a drain to the buddy lists merges it with its buddy, and the refill's
/// unused pages, recorded unmovable (`set_page_private`), merge onto the unmovable lists.
#[test]
fn an_unmovable_refill_splits_pairs_and_a_movable_allocation_reuses_the_stolen_page() {
    use vmlab_core::mm_types::pg;
    use vmlab_core::mmzone::{Mt, ZoneType};
    let mut k = kernel("linux-2.6.36");
    let z = k.zones.iter().position(|z| z.kind == ZoneType::Dma32).expect("DMA32");
    let mut ctx = Ctx { cpu: 0, in_reclaim: true, ..Default::default() };
    while k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).is_ok() {}
    let batch = k.zones[z].pcp[0].batch as usize;
    assert!(batch > 2 && k.zones[z].free_area[0][Mt::Unmovable as usize].len == 0);
    // Aligned 8-page blocks of DMA32's movable pageblocks: frames 0-1 go back as a pair, frame 4
    // as a single; the rest stay in use, so nothing merges further.
    let (start, end, phys0) = (k.zones[z].start_pfn, k.zones[z].end_pfn, k.zones[z].phys_start_pfn);
    let phys = |p: u32| p - start + phys0;
    let bases: Vec<u32> = (start..end)
        .filter(|&f| phys(f).is_multiple_of(8) && k.pageblock_mt[k.pageblock_of(z, f)] == Mt::Movable as u8)
        .take(batch + 1)
        .collect();
    let buddy = |p: u32| if phys(p).is_multiple_of(2) { p + 1 } else { p - 1 };
    ctx.cpu = 1;
    for &b in &bases {
        for p in [b, b + 1, b + 4] {
            k.free_pages(&mut ctx, p, 0);
        }
    }
    k.drain_all_pages();
    assert_eq!((k.zones[z].nr_free[1], k.zones[z].nr_free[0]), (batch as u64 + 1, batch as u64 + 1));
    // A GFP_KERNEL order-0 page on CPU 0: the refill steals `batch` pages, one from each pair.
    ctx.cpu = 0;
    let p = k.alloc_pages(&mut ctx, Gfp::kernel(), 0).expect("a stolen page");
    let parked = k.zones[z].pcp[0].lists[Mt::Unmovable as usize].len;
    assert_eq!(parked, batch as u64 - 1, "the rest of the batch waits on the unmovable list");
    assert_eq!(k.zones[z].nr_free[1], 1, "largest first: every page of the batch split a pair");
    assert_eq!(k.zones[z].nr_free[0], 2 * batch as u64 + 1, "the pairs' other halves, single");
    assert!(bases.iter().any(|&b| p == b || p == b + 1));
    // Freed, it waits on the movable list, and a movable allocation takes it: its buddy stays single.
    k.free_pages(&mut ctx, p, 0);
    assert_eq!(k.zones[z].pcp[0].lists[Mt::Movable as usize].head, p);
    let q = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0).expect("a movable page");
    assert_eq!(q, p, "the movable allocation reuses the stolen page");
    assert!(k.fr.has(buddy(p), pg::BUDDY) && k.zones[z].nr_free[1] == 1, "no pair formed");
    // Drained instead, it merges with its buddy, and the parked pages merge onto the unmovable lists.
    k.free_pages(&mut ctx, p, 0);
    k.drain_all_pages();
    assert_eq!(k.zones[z].free_area[1][Mt::Movable as usize].len, 2, "the pair formed again");
    assert_eq!(k.zones[z].free_area[1][Mt::Unmovable as usize].len, parked);
}
