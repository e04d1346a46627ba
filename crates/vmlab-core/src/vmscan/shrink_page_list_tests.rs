//! 2.6.36 `shrink_page_list` gives a taken page back for a reason it does not count: a page it
//! cannot lock (`goto keep`), an unevictable page (`cull_mlocked`), one under writeback (kswapd
//! never waits: `keep_locked`), a dirty one it hands to `pageout` and keeps. The engine counts
//! those reasons on the batch's `mm_vmscan_lru_shrink_inactive` event for observers (the
//! `kswapd_runs` `fp` line), so each must be counted where the page is kept, once; and of the
//! pages it frees, those it freed with PG_referenced set (2.6.36 spares an unmapped page only
//! while it is dirty).

use super::free_page_list_tests::{kswapd_sc, machine, scattered_cache};
use super::*;
use crate::trace::{kind, Tracer};

const DMA32: usize = 1;
const PAGES: usize = 30;

#[derive(Default)]
struct Batches(Vec<(u64, u64, ReclaimStat)>);

impl Tracer for Batches {
    fn wants(&self) -> u32 {
        kind::LRU_SHRINK_INACTIVE
    }
    fn event(&mut self, _k: &Kernel, ev: &Tracepoint) {
        if let Tracepoint::LruShrinkInactive { nr_scanned, nr_reclaimed, stat, .. } = *ev {
            self.0.push((nr_scanned, nr_reclaimed, stat));
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn each_page_shrink_page_list_keeps_is_counted_by_its_reason() {
    let cfg = machine();
    let p = crate::profiles::all()
        .into_iter()
        .find(|p| p.engine == crate::profiles::Engine::Split2636 && p.unevictable_lru)
        .expect("a split-LRU row with the unevictable list");
    let mut k = Kernel::new(p, cfg, 1).expect("kernel");
    k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
    k.attach_tracer(Box::new(Batches::default()));
    let mut ctx = Ctx { cpu: 0, is_kswapd: true, ..Default::default() };
    let cache = scattered_cache(&mut k, &mut ctx, PAGES);
    // 3 locked, 2 mlocked, 4 under writeback, 5 dirty; the other 16 clean, 4 of them read once
    // more (PG_referenced, as `mark_page_accessed` leaves an unmapped page).
    for &p in &cache[0..3] {
        k.fr.set(p, pg::LOCKED);
    }
    for &p in &cache[3..5] {
        k.fr.set(p, pg::MLOCKED);
    }
    for &p in &cache[5..9] {
        k.fr.set(p, pg::WRITEBACK);
    }
    for &p in &cache[9..14] {
        crate::page_writeback::set_page_dirty(&mut k, &ctx, p);
    }
    for &p in &cache[14..18] {
        k.fr.set(p, pg::REFERENCED);
    }
    let mut sc = kswapd_sc();
    let reclaimed = shrink_inactive_list(&mut k, &mut ctx, DMA32, SWAP_CLUSTER_MAX, &mut sc, DEF_PRIORITY, true);
    assert_eq!(reclaimed, 16, "the clean pages are reclaimed");
    let b = &k.tracer::<Batches>().expect("tracer").0;
    assert_eq!(b.len(), 1, "one batch");
    let (scanned, freed, s) = b[0];
    assert_eq!((scanned, freed), (PAGES as u64, 16));
    assert_eq!(s.nr_locked, 3, "trylock_page failed");
    assert_eq!(s.nr_culled, 2, "mlocked pages culled");
    assert_eq!(s.nr_writeback, 4, "under writeback, kept");
    assert_eq!((s.nr_unqueued_dirty, s.nr_pageout), (5, 5), "dirty pages handed to pageout");
    assert_eq!(s.nr_dirty, 9, "dirty or under writeback");
    assert_eq!(s.nr_ref_keep + s.nr_activate[0] + s.nr_activate[1] + s.nr_mapped, 0, "nothing mapped or referenced");
    assert_eq!(s.nr_freed_referenced, 4, "PAGEREF_RECLAIM_CLEAN frees a clean page: counted as freed referenced");
    assert_eq!(s.nr_freed_mapped, 0, "no page was mapped");
    let kept = s.nr_locked + s.nr_culled + s.nr_writeback + s.nr_unqueued_dirty;
    assert_eq!(kept + freed, scanned, "every page taken is freed or kept for one reason");
}
