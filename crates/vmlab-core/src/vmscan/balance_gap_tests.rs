//! 2.6.36–2.6.38 `balance_pgdat`'s per-zone loop shrinks a zone "unless one zone has way too
//! many pages free already", and it asks that at the run's order:
//! `zone_watermark_ok(zone, order, 8*high_wmark_pages(zone), end_zone, 0)` (the 2.6.3x text is
//! the context of Mel Gorman's "check_zone_pressure" diff, linux-mm, Mar 2010, and the `-` side
//! of Andrea Arcangeli's "vmscan: kswapd must not free more than high_wmark pages", linux-mm,
//! "Re: too big min_free_kbytes", 27 Jan 2011). A zone whose free memory is all single pages
//! never meets an order-3 mark, however much of it there is, so a run balancing another zone
//! at order 3 keeps reclaiming it: the pile of single free pages in DMA32 of seed 001's
//! 12-h history (docs/notes/history/era-2.6.36-38-kswapd.md §27). Mel Gorman's and Andrea
//! Arcangeli's "kswapd should not free an excessive number of pages when balancing small
//! zones" (linux-mm, 22 Feb 2011, against 2.6.38-rc6) bounds the gap but keeps `order`.

use crate::kernel::{Ctx, Kernel};
use crate::machine::MachineConfig;
use crate::mm_types::{pg, Pfn};
use crate::mmzone::{Mt, ZoneType, LRU_INACTIVE_FILE, MAX_ORDER};
use crate::profiles::Engine;
use crate::trace::{kind, Tracepoint, Tracer};
use crate::whatif::WhatIf;

use super::KswapdAction;

const DMA32: usize = 1;
const NORMAL: usize = 2;

/// 16 MiB DMA, 96 MiB DMA32, 32 MiB Normal (the seed's shape, small) under `p`.
fn kernel(p: crate::profiles::Profile) -> Kernel {
    let cfg = MachineConfig::of_zones(
        "x86_64",
        1,
        &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 24576), (ZoneType::Normal, 8192)],
    );
    Kernel::new(p, cfg, 1).expect("kernel")
}

/// Take every free page of zone `zid` in pfn order.
fn take_all(k: &mut Kernel, zid: usize) -> Vec<Pfn> {
    let mut got = Vec::new();
    while let Some(p) = k.rmqueue(zid, 0, Mt::Movable) {
        got.push(p);
    }
    got.sort_unstable();
    got
}

/// DMA32 holds `lru` page-cache pages that reclaim can scan but not free (locked, as under
/// read I/O), and its free memory is either left in large blocks or, `shredded`, made of
/// single pages only (every other page freed). Normal is shredded, so it fails order 3 and
/// becomes the run's end_zone. Returns the pages kswapd scanned in DMA32 during one wake at
/// order 3, and whether DMA32 held more than 8 × HIGH free pages when it began.
fn order3_wake(p: crate::profiles::Profile, shredded: bool, lru: usize, whatif: WhatIf) -> (u64, bool) {
    let (k, over_8high) = order3_wake_observed(p, shredded, lru, whatif, None);
    let scanned = k.reclaim.split2636_kswapd(0).expect("split-LRU engine").zone_scan_kswapd[DMA32];
    (scanned, over_8high)
}

/// `order3_wake` with an observer attached before the wake; returns the kernel after it.
fn order3_wake_observed(
    p: crate::profiles::Profile,
    shredded: bool,
    lru: usize,
    whatif: WhatIf,
    observer: Option<Box<dyn Tracer>>,
) -> (Kernel, bool) {
    let mut k = kernel(p);
    k.whatif = whatif;
    let all = take_all(&mut k, DMA32);
    let (keep, free): (Vec<Pfn>, Vec<Pfn>) = if shredded {
        all.into_iter().partition(|&p| p % 2 == 0)
    } else {
        let (a, b) = all.split_at(lru);
        (a.to_vec(), b.to_vec())
    };
    for &p in &free {
        k.free_one_page(DMA32, p, 0);
    }
    for &p in keep.iter().take(lru) {
        k.fr.set(p, pg::LOCKED);
        super::add_to_list(&mut k, p, LRU_INACTIVE_FILE, false);
    }
    let normal = take_all(&mut k, NORMAL);
    for p in normal.into_iter().step_by(2) {
        k.free_one_page(NORMAL, p, 0);
    }
    let z = &k.zones[DMA32];
    let over_8high = z.free_pages > 8 * z.high_wmark();
    let big_free: u64 = (3..MAX_ORDER).map(|o| z.nr_free[o] << o).sum();
    assert_eq!(big_free == 0, shredded, "DMA32's free blocks of order >= 3: {big_free}");
    if let Some(o) = observer {
        k.attach_tracer(o);
    }
    super::wakeup_kswapd(&mut k, NORMAL, 3, ZoneType::Normal as usize);
    assert_eq!(k.nodes[0].kswapd.max_order, 3, "Normal fails order 3 at LOW: kswapd is asked for it");
    let mut ctx = Ctx::default();
    let mut steps = 0;
    while super::kswapd_step(&mut k, &mut ctx, 0) != KswapdAction::Sleep {
        steps += 1;
        assert!(steps < 100_000, "kswapd never went back to sleep");
    }
    (k, over_8high)
}

#[test]
fn an_order_3_run_shrinks_a_zone_of_single_free_pages_however_many_there_are() {
    let rows: Vec<_> = crate::profiles::all().into_iter().filter(|p| p.engine == Engine::Split2636).collect();
    assert!(!rows.is_empty());
    for p in rows {
        let name = p.name;
        let (fresh, over) = order3_wake(p.clone(), false, 2048, WhatIf::default());
        assert!(over, "{name}: DMA32 holds more than 8 x HIGH free pages in large blocks");
        assert_eq!(fresh, 0, "{name}: large free blocks meet 8 x HIGH at order 3: DMA32 is left alone");
        let (shredded, over) = order3_wake(p, true, 2048, WhatIf::default());
        assert!(over, "{name}: DMA32 holds more than 8 x HIGH free pages, all single");
        assert!(shredded > 0, "{name}: single pages never meet an order-3 mark: DMA32 is shrunk anyway");
    }
}

/// The labelled what-if `kswapd_high_order_spares` (no kernel's rule) does what it says: the
/// same order-3 wake that shrinks a DMA32 of single free pages leaves it unscanned, and kswapd
/// still goes back to sleep (`order3_wake` asserts it).
#[test]
fn the_spares_what_if_keeps_an_order_3_run_out_of_dma32() {
    let spare = WhatIf { kswapd_high_order_spares: Some(ZoneType::Dma32), ..WhatIf::default() };
    for p in crate::profiles::all().into_iter().filter(|p| p.engine == Engine::Split2636) {
        let name = p.name;
        let (kernel_rule, _) = order3_wake(p.clone(), true, 2048, WhatIf::default());
        let (spared, _) = order3_wake(p, true, 2048, spare);
        assert!(kernel_rule > 0, "{name}: the kernel's rule shrinks DMA32");
        assert_eq!(spared, 0, "{name}: the what-if leaves DMA32 out of the order-3 run");
    }
}

/// What `KswapdZoneCheck` reported, per zone: passes at order 3 that shrank it / left it alone,
/// and the end_zone index the checks were made against.
#[derive(Default)]
struct ZoneChecks {
    shrunk: [u64; 3],
    left: [u64; 3],
    end_zones: Vec<usize>,
}

impl Tracer for ZoneChecks {
    fn wants(&self) -> u32 {
        kind::KSWAPD_ZONE_CHECK
    }
    fn event(&mut self, _k: &Kernel, ev: &Tracepoint) {
        if let Tracepoint::KswapdZoneCheck { zid, order: 3, end_zone, shrink, .. } = *ev {
            if shrink {
                self.shrunk[zid] += 1;
            } else {
                self.left[zid] += 1;
            }
            self.end_zones.push(end_zone);
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The `KswapdZoneCheck` tracepoint (which the `kswapd_runs` example's `zp` line counts) reports
/// the decision the pass took: DMA32 with its free memory in large blocks is left alone at every
/// order-3 pass and never scanned; DMA32 of single pages is reported shrunk, and scanned; Normal,
/// the first pass's end_zone, is shrunk in both.
#[test]
fn the_zone_check_tracepoint_reports_each_pass_s_shrink_decision() {
    for p in crate::profiles::all().into_iter().filter(|p| p.engine == Engine::Split2636) {
        let name = p.name;
        for shredded in [false, true] {
            let obs = Box::new(ZoneChecks::default());
            let (k, _) = order3_wake_observed(p.clone(), shredded, 2048, WhatIf::default(), Some(obs));
            let c = k.tracer::<ZoneChecks>().expect("observer attached");
            let scanned = k.reclaim.split2636_kswapd(0).expect("split-LRU engine").zone_scan_kswapd[DMA32];
            assert!(c.shrunk[NORMAL] > 0 && c.left[NORMAL] == 0, "{name}: Normal fails 8 x HIGH at order 3");
            // Normal fails order 3 at HIGH: the first pass balances up to it (once Normal, with
            // no LRU, is all_unreclaimable, later passes may end lower).
            assert_eq!(c.end_zones.first(), Some(&(ZoneType::Normal as usize)), "{name}: end_zone is Normal");
            if shredded {
                assert!(c.shrunk[DMA32] > 0 && scanned > 0, "{name}: single pages: reported shrunk, and scanned");
            } else {
                assert!(c.left[DMA32] > 0, "{name}: large blocks: DMA32 reached");
                assert_eq!((c.shrunk[DMA32], scanned), (0, 0), "{name}: large blocks: reported left alone, unscanned");
            }
        }
    }
}
