//! 2.6.36's `balance_pgdat` sums `lru_pages` over zones 0..end_zone once per priority pass,
//! before the per-zone loop (the `loop_again` context of Wu Fengguang's "mm: count only
//! reclaimable lru pages v2", linux-mm, 16 Jul 2009; the same loop is the context of the diffs
//! history §27.1 reads), and every zone's `shrink_slab` in the pass divides by that sum. So the
//! slab pressure a pass applies depends on what it scanned, not on what its own shrinking freed.

use super::*;
use crate::dcache::Vfs;
use crate::machine::MachineConfig;
use crate::mmzone::Mt;
use crate::profiles::Engine;

const DMA32: usize = 1;
const CACHE_PAGES: u64 = 256;

/// DMA's and Normal's memory free, DMA32's all taken: `CACHE_PAGES` of it clean page cache on
/// the inactive list (under writeback, so scanned but kept, if `writeback`), the rest held.
/// 2,000 looked-up files give the dentry and inode caches something to shrink.
fn kernel(p: crate::profiles::Profile, writeback: bool) -> (Kernel, Ctx) {
    let cfg = MachineConfig::of_zones(
        "x86_64",
        1,
        &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 24576), (ZoneType::Normal, 8192)],
    );
    let mut k = Kernel::new(p, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    k.vfs = Some(Box::new(Vfs::new(192, 800, 4, crate::slub::SlubTunables::default())));
    let mut ctx = Ctx::default();
    for i in 0..2000 {
        let f = k.file_create(&format!("d{i}"), 4096, 0, true);
        crate::dcache::lookup(&mut k, &mut ctx, f);
    }
    let file = k.file_create("cache", CACHE_PAGES * 4096, 0, false);
    let mut held = Vec::new();
    while let Some(p) = k.rmqueue(DMA32, 0, Mt::Movable) {
        held.push(p);
    }
    for (i, &p) in held.iter().take(CACHE_PAGES as usize).enumerate() {
        k.add_to_page_cache(&mut ctx, file, i as u64, p);
        k.fr.set(p, pg::UPTODATE);
        if writeback {
            k.fr.set(p, pg::WRITEBACK);
        }
    }
    // All of the cache on the list (the last pages added would otherwise still wait in the
    // CPU's LRU-add pagevec).
    crate::vmscan::lru_add_drain(&mut k, &ctx);
    (k, ctx)
}

/// One order-0 kswapd pass at priority 2 (DMA32 fails HIGH, so it is end_zone). Returns the
/// slab objects scanned, DMA32's reclaimable LRU pages before and after, and the pages kswapd
/// scanned in DMA32.
fn one_pass(p: crate::profiles::Profile, writeback: bool) -> (u64, u64, u64, u64) {
    let (mut k, mut ctx) = kernel(p, writeback);
    ctx.is_kswapd = true;
    let before = zone_reclaimable_pages(&k, DMA32);
    let slab_before = k.ev.get(Vm::SlabsScanned);
    locals(&mut k, 0);
    start_balance(&mut k, 0, 0, MAX_CLASSZONE);
    k.reclaim.split_mut().kswapd[0].priority = 2;
    balance_priority(&mut k, &mut ctx, 0);
    assert_eq!(k.reclaim.split().kswapd[0].end_zone, DMA32, "DMA32 fails HIGH: it is end_zone");
    let scanned = k.reclaim.split().kswapd[0].zone_scan_kswapd[DMA32];
    (k.ev.get(Vm::SlabsScanned) - slab_before, before, zone_reclaimable_pages(&k, DMA32), scanned)
}

#[test]
fn a_pass_scales_slab_pressure_by_the_lru_it_started_with() {
    let rows: Vec<_> = crate::profiles::all().into_iter().filter(|p| p.engine == Engine::Split2636).collect();
    assert!(!rows.is_empty());
    for p in rows {
        let name = p.name;
        let (slab_freed, lru0, lru1, scan_freed) = one_pass(p.clone(), false);
        let (slab_kept, lru0_kept, lru1_kept, scan_kept) = one_pass(p, true);
        assert_eq!(lru0, CACHE_PAGES, "{name}: the cache is on DMA32's LRU");
        assert!(lru1 + SWAP_CLUSTER_MAX <= lru0, "{name}: clean pages are reclaimed in the pass ({lru0} -> {lru1})");
        assert_eq!((lru0_kept, lru1_kept), (CACHE_PAGES, CACHE_PAGES), "{name}: pages under writeback are kept");
        assert!(
            scan_freed > 0 && scan_freed == scan_kept,
            "{name}: both passes scan alike: {scan_freed} / {scan_kept}"
        );
        assert!(slab_kept > 0, "{name}: the pass shrinks slab");
        assert_eq!(
            slab_freed, slab_kept,
            "{name}: the same scan over the same LRU applies the same slab pressure, whatever the pass freed"
        );
    }
}
