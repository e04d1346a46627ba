//! Memory the kernel takes at boot before the buddy allocator exists: the sparse vmemmap, the
//! array of `struct page` (`mm/sparse-vmemmap.c` → `vmemmap_alloc_block` →
//! `__earlyonly_bootmem_alloc` → `__alloc_bootmem_node_high`, 2.6.34–3.x, x86-64 with
//! SPARSEMEM_VMEMMAP). Its size follows from the machine's pages and the release's `struct
//! page`; where it lies follows from the bootmem goal, and that decides which zone loses it: on
//! a machine whose node ends more than 128 MiB above 4 GiB the goal moves to 4 GiB, so the
//! whole array (56 MiB on a 4-GiB machine of 56-byte pages) sits in Normal as one run of pages
//! no one frees. Without RAM above 4 GiB it comes from the bottom of DMA32.
//!
//! vmlab's frames are contiguous (no frames for the PCI hole), so "4 GiB" is the end of the DMA32
//! zone's frames and "16 MiB" (`MAX_DMA_ADDRESS`, the callers' goal) the end of DMA's; a block's
//! 2-MiB alignment is on the memory map's pfn (`phys_start`).

use crate::mmzone::ZoneType;

/// Pages of one vmemmap block: `vmemmap_populate` maps the array with 2-MiB PMD pages when the
/// CPU has PSE, each allocated on its own, aligned to its size.
pub const VMEMMAP_BLOCK: u32 = 512;

/// `(128 >> (20 - PAGE_SHIFT))`: how far above 4 GiB the node must end before the goal moves.
const HIGH_SLACK: u32 = 128 * 256;

/// One zone as boot sees it: kind, node, frame range, and the memory map's pfn of its first frame.
#[derive(Clone, Copy, Debug)]
pub struct BootZone {
    pub kind: ZoneType,
    pub node: usize,
    pub start: u32,
    pub end: u32,
    pub phys_start: u32,
}

/// The vmemmap's pfn ranges, merged, for `struct_page` bytes per page (0: none) — one array per
/// node, on that node (`sparse_mem_map_populate(pnum, nid)`). `goal_high`: the release has
/// `__alloc_bootmem_node_high`'s move of the goal to 4 GiB. `taken(pfn)`: pages reserved
/// before (kernel image, firmware), which bootmem skips.
pub fn vmemmap_ranges(
    zones: &[BootZone],
    struct_page: u64,
    goal_high: bool,
    taken: impl Fn(u32) -> bool,
) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    if struct_page == 0 || zones.is_empty() {
        return out;
    }
    let end_of = |kind: ZoneType| zones.iter().filter(|z| z.kind == kind).map(|z| z.end).max();
    let dma_end = end_of(ZoneType::Dma).unwrap_or(0);
    // MAX_DMA32_PFN exists only where there is a DMA32 zone (x86-64).
    let dma32_end = end_of(ZoneType::Dma32);
    let nodes = zones.iter().map(|z| z.node).max().unwrap_or(0) + 1;
    for n in 0..nodes {
        let (Some(start), Some(end)) = (
            zones.iter().filter(|z| z.node == n).map(|z| z.start).min(),
            zones.iter().filter(|z| z.node == n).map(|z| z.end).max(),
        ) else {
            continue;
        };
        let bytes = (end - start) as u64 * struct_page;
        let blocks = bytes.div_ceil(4096 * VMEMMAP_BLOCK as u64) as u32;
        let mut goal = dma_end;
        if let Some(high) = dma32_end {
            if goal_high && end > high + HIGH_SLACK && goal < high {
                goal = high;
            }
        }
        let goal = goal.clamp(start, end);
        let fits = |b: u32| b + VMEMMAP_BLOCK <= end && !(b..b + VMEMMAP_BLOCK).any(&taken);
        // The first frame at or after `lo` that starts a block aligned on the memory map and
        // lying in one zone (no block spans a hole); `end` when none is left.
        let first = |lo: u32| -> u32 {
            for z in zones.iter().filter(|z| z.node == n && z.end > lo) {
                let at = lo.max(z.start);
                let a = at + (VMEMMAP_BLOCK - (at - z.start + z.phys_start) % VMEMMAP_BLOCK) % VMEMMAP_BLOCK;
                if a + VMEMMAP_BLOCK <= z.end {
                    return a;
                }
            }
            end
        };
        // Bottom-up from the goal; below it when the node has no room above (bootmem retries
        // without the goal).
        let mut b = first(goal);
        let mut placed = 0;
        let mut wrapped = false;
        while placed < blocks {
            if b + VMEMMAP_BLOCK > end {
                if wrapped {
                    break;
                }
                wrapped = true;
                b = first(start);
                continue;
            }
            if wrapped && b >= goal {
                break;
            }
            let free = fits(b) && !out.iter().any(|&(s, e)| b < e && s < b + VMEMMAP_BLOCK);
            if free {
                match out.last_mut() {
                    Some(last) if last.1 == b => last.1 += VMEMMAP_BLOCK,
                    _ => out.push((b, b + VMEMMAP_BLOCK)),
                }
                placed += 1;
            }
            b = first(b + VMEMMAP_BLOCK);
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zones of one node laid end to end from pfn 0.
    fn node(sizes: &[(ZoneType, u32)]) -> Vec<BootZone> {
        let mut at = 0;
        sizes
            .iter()
            .map(|&(kind, pages)| {
                let z = BootZone { kind, node: 0, start: at, end: at + pages, phys_start: at };
                at += pages;
                z
            })
            .collect()
    }

    fn pages_in(r: &[(u32, u32)], z: &BootZone) -> u32 {
        r.iter().map(|&(s, e)| e.min(z.end).saturating_sub(s.max(z.start))).sum()
    }

    #[test]
    fn memmap_goes_to_normal_when_the_node_crosses_4g_by_more_than_128m() {
        // Simon Kirby's layout: DMA, DMA32 as present, Normal 0x100000–0x130000 (768 MiB).
        let z = node(&[(ZoneType::Dma, 4096), (ZoneType::Dma32, 832_392), (ZoneType::Normal, 196_608)]);
        let r = vmemmap_ranges(&z, 56, true, |p| p == 0);
        let total: u32 = z.iter().map(|z| z.end - z.start).sum();
        let want = (total as u64 * 56).div_ceil(4096 * 512) as u32 * 512;
        assert_eq!(pages_in(&r, &z[2]), want, "{r:?}");
        assert_eq!(r.len(), 1, "one contiguous run: {r:?}");
        // The same machine without the 2.6.34 goal: bottom of DMA32.
        let r = vmemmap_ranges(&z, 56, false, |p| p == 0);
        assert_eq!(pages_in(&r, &z[1]), want);
        assert_eq!(r[0].0, 4096);
    }

    #[test]
    fn memmap_stays_in_dma32_without_enough_ram_above_4g() {
        for normal in [0, 16_384, 32_768] {
            let mut sizes = vec![(ZoneType::Dma, 4096), (ZoneType::Dma32, 782_336)];
            if normal > 0 {
                sizes.push((ZoneType::Normal, normal));
            }
            let z = node(&sizes);
            let r = vmemmap_ranges(&z, 56, true, |p| p == 0);
            assert!(pages_in(&r, &z[1]) > 0, "normal {normal}: {r:?}");
            assert_eq!(r.iter().map(|&(s, e)| e - s).sum::<u32>(), pages_in(&r, &z[1]));
        }
        // One page more than 128 MiB above and it moves.
        let z = node(&[(ZoneType::Dma, 4096), (ZoneType::Dma32, 782_336), (ZoneType::Normal, 32_769)]);
        let r = vmemmap_ranges(&z, 56, true, |p| p == 0);
        assert_eq!(pages_in(&r, &z[1]), 0, "{r:?}");
    }

    #[test]
    fn the_kernel_reserves_the_memmap_in_the_zone_the_rule_picks() {
        use crate::kernel::Kernel;
        use crate::machine::MachineConfig;
        // 16 MiB DMA, 480 MiB DMA32, 512 MiB Normal (more than 128 MiB above "4 GiB").
        let cfg = MachineConfig::of_zones(
            "x86_64",
            1,
            &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 122_880), (ZoneType::Normal, 131_072)],
        );
        // A 2.6.36 x86-64 memmap: 56-byte pages, the vmemmap's goal high.
        let mut p = crate::profiles::Profile {
            memmap_struct_page: 56,
            memmap_goal_high: true,
            ..crate::profiles::default_row()
        };
        let k = Kernel::new(p.clone(), cfg.clone(), 1).unwrap();
        let lost: Vec<u64> = k.zones.iter().map(|z| z.present - z.managed).collect();
        assert_eq!(lost[2], 3584, "258,048 pages x 56 bytes in 2-MiB blocks: {lost:?}");
        assert_eq!(k.g.reserved, lost.iter().sum::<u64>());
        k.check_conservation().unwrap();
        k.check_frames().unwrap();
        p.memmap_goal_high = false;
        let k = Kernel::new(p.clone(), cfg.clone(), 1).unwrap();
        assert_eq!(k.zones[1].present - k.zones[1].managed, 3584);
        assert_eq!(k.zones[2].present, k.zones[2].managed);
        k.check_frames().unwrap();
        p.memmap_struct_page = 0;
        let k = Kernel::new(p, cfg, 1).unwrap();
        assert_eq!(k.zones[2].present, k.zones[2].managed);
    }

    #[test]
    fn memmap_skips_taken_pages_and_scales_with_struct_page() {
        let z = node(&[(ZoneType::Dma, 4096), (ZoneType::Dma32, 258_048)]);
        let r56 = vmemmap_ranges(&z, 56, true, |p| p < 8192);
        assert!(r56.iter().all(|&(s, _)| s >= 8192), "{r56:?}");
        let r64 = vmemmap_ranges(&z, 64, true, |p| p < 8192);
        let n = |r: &[(u32, u32)]| r.iter().map(|&(s, e)| e - s).sum::<u32>();
        assert!(n(&r64) >= n(&r56));
        assert_eq!(n(&vmemmap_ranges(&z, 0, true, |_| false)), 0);
    }
}
