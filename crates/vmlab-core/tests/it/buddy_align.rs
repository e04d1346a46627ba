//! Buddies and pageblocks align on the machine's memory map, not on vmlab's packed frames: a
//! zone keeps its `zone_start_pfn` (x86-64 Normal at 4 GiB, past the PCI hole), blocks pair on
//! the pfn (2.6.1x on; 2.4 on the page's offset in its zone), and a block never merges across
//! the zone's start.
use vmlab_core::kernel::{Ctx, Kernel};
use vmlab_core::machine::{MachineConfig, ZoneLayout};
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{Mt, ZoneType, MAX_ORDER, PAGEBLOCK_ORDER};
use vmlab_core::page_alloc::Gfp;

fn machine(arch: &str, zones: &[(ZoneType, u64, Option<u64>)]) -> MachineConfig {
    MachineConfig {
        memory_bytes: zones.iter().map(|z| z.1).sum::<u64>() * 4096,
        cpus: 2,
        nodes: 1,
        arch: arch.into(),
        cpu_mhz: 3000,
        reserved_bytes: 0,
        reserved_low_bytes: 0,
        zones: zones.iter().map(|&(kind, pages, start_pfn)| ZoneLayout { kind, node: 0, pages, start_pfn }).collect(),
    }
}

/// A DMA zone and a Normal zone of 8,192 pages whose memory-map pfn is 5,096 (a multiple of 8,
/// not of 16), with no boot memmap in it.
fn unaligned(profile: &str) -> Kernel {
    let cfg = machine("x86_64", &[(ZoneType::Dma, 4096, None), (ZoneType::Normal, 8192, Some(5096))]);
    let mut p = vmlab_core::profiles::find(profile).expect("profile");
    p.memmap_struct_page = 0;
    Kernel::new(p, cfg, 1).expect("kernel")
}

/// The zone's free blocks as (memory-map pfn, order), sorted.
fn free_blocks(k: &Kernel, zid: usize) -> Vec<(u32, u32)> {
    let z = &k.zones[zid];
    let mut v: Vec<(u32, u32)> = (z.start_pfn..z.end_pfn)
        .filter(|&p| k.fr.has(p, pg::BUDDY))
        .map(|p| (z.phys(p), (k.fr.aux[p as usize] & 0xf) as u32))
        .collect();
    v.sort_unstable();
    v
}

/// `[start, end)` cut greedily into the largest blocks aligned on `base`-relative indices.
fn maximal_blocks(start: u32, end: u32, base: u32) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    let mut p = start;
    while p < end {
        let mut o = (p - base).trailing_zeros().min(MAX_ORDER as u32 - 1);
        while p + (1 << o) > end {
            o -= 1;
        }
        v.push((p, o));
        p += 1 << o;
    }
    v
}

#[test]
fn zones_start_where_the_memory_map_puts_them() {
    // Simon Kirby's mail server: Normal begins at 4 GiB, 212,088 pfns past DMA32's last frame.
    let simon = machine(
        "x86_64",
        &[(ZoneType::Dma, 4096, None), (ZoneType::Dma32, 832_392, None), (ZoneType::Normal, 193_920, None)],
    );
    assert_eq!(simon.zone_start_pfns(), vec![0, 4096, 1 << 20]);
    let k = Kernel::new(vmlab_core::profiles::find("linux-2.6.36").unwrap(), simon, 1).unwrap();
    assert_eq!(k.zones[2].start_pfn, 836_488, "frames stay packed");
    assert_eq!(k.zones[2].phys(k.zones[2].start_pfn), 1 << 20);
    assert_eq!(k.fr.flags.len(), 1_030_408, "no frames for the hole");
    k.check_conservation().unwrap();
    k.check_frames().unwrap();
    // i386: HighMem from 896 MiB.
    let zones = MachineConfig::layout(2 << 30, 1, "i386").unwrap();
    let cfg = MachineConfig { zones, ..machine("i386", &[]) };
    assert_eq!(cfg.zone_start_pfns(), vec![0, 4096, 896 << 8]);
    // A zone placed inside the one before it is refused.
    let bad = machine("x86_64", &[(ZoneType::Dma, 4096, None), (ZoneType::Normal, 8192, Some(4000))]);
    let e = Kernel::new(vmlab_core::profiles::find("linux-2.6.36").unwrap(), bad, 1).err().expect("refused");
    assert!(e.contains("Normal zone starts at pfn 4000"), "{e}");
}

#[test]
fn a_zone_at_an_unaligned_pfn_cannot_merge_across_its_start() {
    let mut k = unaligned("linux-2.6.36");
    let want = maximal_blocks(5096, 5096 + 8192, 0);
    assert_eq!(want[0], (5096, 3), "the first block is as large as the pfn's alignment allows");
    assert_eq!(free_blocks(&k, 1), want);
    // Take every page of the zone one at a time and give them all back: they merge into the
    // same blocks, none across the zone's start.
    let mut ctx = Ctx { cpu: 0, in_reclaim: true, ..Default::default() };
    let mut held = Vec::new();
    while let Ok(p) = k.alloc_pages(&mut ctx, Gfp::kernel(), 0) {
        held.push(p);
    }
    assert!(held.iter().filter(|&&p| k.zones[1].spans(p)).count() == 8192);
    for p in held.into_iter().rev() {
        k.free_pages(&mut ctx, p, 0);
    }
    k.drain_all_pages();
    assert_eq!(free_blocks(&k, 1), want);
    k.check_frames().unwrap();
}

#[test]
fn linux_2_4_pairs_buddies_from_the_zone_start() {
    // 2.4's `page - zone->zone_mem_map`: the same zone is eight order-10 blocks from its start.
    let k = unaligned("linux-2.4.9");
    assert!(k.profile.buddy_zone_relative);
    assert_eq!(free_blocks(&k, 1), maximal_blocks(5096, 5096 + 8192, 5096));
    let k = unaligned("linux-2.6.38");
    assert_eq!(free_blocks(&k, 1), maximal_blocks(5096, 5096 + 8192, 0));
}

#[test]
fn a_stolen_block_is_whole_pageblocks() {
    // An unmovable allocation in an all-movable zone steals its largest block (order 10) and
    // claims it: exactly the two pageblocks it covers change type, and every free page in them
    // moves to the unmovable lists.
    let mut k = unaligned("linux-2.6.36");
    let mut ctx = Ctx { cpu: 0, in_reclaim: true, ..Default::default() };
    let p = k.alloc_pages(&mut ctx, Gfp::kernel(), 3).expect("an order-3 block");
    let z = &k.zones[1];
    assert!(z.spans(p));
    let blocks: Vec<usize> = (z.start_pfn..z.end_pfn)
        .map(|q| k.pageblock_of(1, q))
        .filter(|&b| k.pageblock_mt[b] == Mt::Unmovable as u8)
        .collect();
    assert_eq!(blocks.len(), 2 << PAGEBLOCK_ORDER, "two whole pageblocks claimed");
    let unmovable_free: u64 = (0..MAX_ORDER).map(|o| z.free_area[o][Mt::Unmovable as usize].len << o).sum();
    assert_eq!(unmovable_free + 8, 2 << PAGEBLOCK_ORDER);
    assert_eq!(z.phys(p) % (1 << 10), 0, "the block came from an order-10 block's head");
}
