//! MIGRATE_RESERVE (2.6.36 `setup_zone_migrate_reserve`, `__rmqueue`): the first pageblocks of
//! a zone that cover its MIN watermark (at most two) are kept for when every other free list is
//! empty. 6.8 has no reserve.
use vmlab_core::kernel::{Ctx, Kernel};
use vmlab_core::machine::{MachineConfig, ZoneLayout};
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{Mt, ZoneType, MIGRATE_RESERVE, PAGEBLOCK_ORDER};
use vmlab_core::page_alloc::Gfp;

fn kernel(profile: &str, pages: u64) -> Kernel {
    let cfg = MachineConfig {
        memory_bytes: pages * 4096,
        cpus: 1,
        nodes: 1,
        arch: "x86_64".into(),
        cpu_mhz: 3000,
        reserved_bytes: 0,
        reserved_low_bytes: 0,
        zones: vec![ZoneLayout { kind: ZoneType::Normal, node: 0, pages, start_pfn: None }],
    };
    let mut p = vmlab_core::profiles::find(profile).expect("profile");
    p.memmap_struct_page = 0;
    Kernel::new(p, cfg, 1).expect("kernel")
}

fn reserve_blocks(k: &Kernel) -> Vec<usize> {
    let z = &k.zones[0];
    let mut v: Vec<usize> = (z.start_pfn..z.end_pfn)
        .map(|p| k.pageblock_of(0, p))
        .filter(|&b| k.pageblock_mt[b] == MIGRATE_RESERVE as u8)
        .collect();
    v.dedup();
    v
}

#[test]
fn the_reserve_covers_the_min_watermark_from_the_zone_start() {
    for pages in [16_384u64, 262_144] {
        let k = kernel("linux-2.6.36", pages);
        let z = &k.zones[0];
        let want = z.wmark[0].div_ceil(1 << PAGEBLOCK_ORDER).min(2) as usize;
        // Frame 0 is taken at boot (pfn 0's firmware page): a block whose first page is
        // reserved is skipped.
        let first = k.pageblock_of(0, z.start_pfn) + k.fr.has(z.start_pfn, pg::RESERVED) as usize;
        assert_eq!(reserve_blocks(&k), (first..first + want).collect::<Vec<_>>(), "{pages} pages");
        // Every free block that starts in a reserve pageblock moved to the reserve lists, whole
        // (`move_freepages` steps by the block's order, so an order-10 block takes its second
        // pageblock's pages along), and no other block did.
        let mut on_reserve_lists = 0;
        for o in 0..vmlab_core::mmzone::MAX_ORDER {
            for p in z.free_area[o][MIGRATE_RESERVE].collect(&k.fr) {
                assert_eq!(k.pageblock_mt[k.pageblock_of(0, p)], MIGRATE_RESERVE as u8);
                on_reserve_lists += 1u64 << o;
            }
        }
        assert!(on_reserve_lists >= (want as u64) << PAGEBLOCK_ORDER, "{on_reserve_lists}");
        k.check_frames().unwrap();
    }
    assert!(reserve_blocks(&kernel("linux-6.8", 16_384)).is_empty());
}

#[test]
fn the_reserve_is_given_out_last() {
    let mut k = kernel("linux-2.6.36", 16_384);
    let reserve = reserve_blocks(&k);
    assert!(!reserve.is_empty());
    let mut ctx = Ctx { cpu: 0, in_reclaim: true, ..Default::default() };
    let mut from_reserve = Vec::new();
    while let Ok(p) = k.alloc_pages(&mut ctx, Gfp::kernel(), 0) {
        from_reserve.push(reserve.contains(&k.pageblock_of(0, p)));
    }
    let first = from_reserve.iter().position(|&r| r).expect("the reserve is used in the end");
    assert!(from_reserve[first..].iter().all(|&r| r), "nothing else after the reserve");
    assert_eq!(from_reserve.len() - first, reserve.len() << PAGEBLOCK_ORDER);
    assert_ne!(k.pageblock_mt[reserve[0]], Mt::Unmovable as u8, "the reserve is never stolen");
}
