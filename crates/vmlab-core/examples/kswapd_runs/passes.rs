//! The `zp` line (every sample, per interval): kswapd's per-zone decision in each priority pass
//! of `balance_pgdat`, from the `KswapdZoneCheck` event fired before the shrink. 2.6.36–2.6.38
//! shrink every zone up to `end_zone` unless `zone_watermark_ok(zone, order,
//! 8*high_wmark_pages(zone), end_zone, 0)` passes; this line says, for passes at order 0 and at
//! order > 0, how often each zone was reached, shrunk or left alone, at which step of the check a
//! shrunk zone failed — the total (`free - 2^order + 1 <= mark + lowmem_reserve[end_zone]`) or
//! the blocks of order >= k once the orders below k are taken off and the mark halved k times
//! — what a shrunk zone's shrink then scanned, and the zone's free pages in blocks of order >=
//! the pass's order at the check against what the last step needs (`8*high >> order`).

use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::MAX_ORDER;
use vmlab_core::trace::{kind, Tracepoint, Tracer};

const Z: usize = 8;
/// Steps of the check: 0 the total, k (1..) the blocks of order >= k; the last slot is "spared
/// by a what-if although it fails".
const STEPS: usize = 6;
const SPARED: usize = STEPS - 1;

#[derive(Clone, Copy, Default)]
struct PerZone {
    reached: u64,
    shrunk: u64,
    /// Shrunk zones by the step of the 8*HIGH check they failed (SPARED: failed but spared).
    failed_at: [u64; STEPS],
    /// Zones left alone that would also pass at 1 x HIGH.
    passed_high_too: u64,
    /// Pages the kswapd shrinks of this zone scanned (`mm_vmscan_lru_shrink_inactive`).
    scanned: u64,
    /// Sum of the free pages in blocks of order >= the pass's order at the check.
    big_free_sum: u64,
    /// Sum of what the last step needs: more than `8*high >> order` pages in those blocks.
    need_sum: u64,
    /// The zone was `end_zone`.
    was_end: u64,
}

#[derive(Clone, Copy, Default)]
struct Counts {
    /// [order 0, order > 0].
    z: [[PerZone; Z]; 2],
    /// Priority passes (counted where the zone walk starts again from a lower zone).
    passes: [u64; 2],
}

pub struct Passes {
    c: Counts,
    printed: std::cell::Cell<Counts>,
    /// Least and most of those free pages since the last line; `reset` is set by the line.
    range: [[(u64, u64); Z]; 2],
    reset: std::cell::Cell<bool>,
    /// The zone kswapd is shrinking now and the pass's order class, for its shrinks' scans.
    current: Option<(usize, usize)>,
    last_zid: Option<usize>,
    kswapd_task: usize,
}

/// The step of `zone_watermark_ok`'s order walk (`free - (1 << order) + 1`, 2.6.37+ two pages
/// less; the mark halved per order) at which `mark` fails for zone `zid`, or None when it passes.
fn failing_step(k: &Kernel, zid: usize, order: u32, mark: u64, classzone: usize) -> Option<usize> {
    let z = &k.zones[zid];
    let bias = if k.profile.split26.wmark_off_by_two { 1 } else { -1 };
    let reserve = z.lowmem_reserve.get(classzone).copied().unwrap_or(0) as i64;
    let mut min = mark as i64;
    let mut free = z.free_pages as i64 - (1i64 << order) - bias;
    if free <= min + reserve {
        return Some(0);
    }
    for o in 0..order as usize {
        free -= (z.nr_free[o] << o) as i64;
        min >>= 1;
        if free <= min {
            return Some(o + 1);
        }
    }
    None
}

impl Passes {
    pub fn new(k: &Kernel) -> Passes {
        Passes {
            c: Counts::default(),
            printed: std::cell::Cell::new(Counts::default()),
            range: [[(u64::MAX, 0); Z]; 2],
            reset: std::cell::Cell::new(false),
            current: None,
            last_zid: None,
            kswapd_task: k.nodes[0].kswapd.task,
        }
    }

    pub fn header() -> String {
        "zp t_h | order-0 passes, then order>0 passes: N | per zone: reached / was end_zone / shrunk (failed 8*HIGH at \
         the total / at o>=1 / o>=2 / o>=3 / o>=4; spared) / left alone (of them passing HIGH too) / scanned by its \
         shrinks | free pages in blocks of order >= the pass's order at the check: mean [least..most], need > mean"
            .to_string()
    }

    /// The interval's line; the least/most reset per interval.
    pub fn line(&self, k: &Kernel, t_h: f64) -> String {
        let now = self.c;
        let p = self.printed.replace(now);
        let mut out = format!("zp {t_h:.1}");
        for side in 0..2 {
            out += &format!(" | o{} passes {}", if side == 0 { "0" } else { ">0" }, now.passes[side] - p.passes[side]);
            for (zid, z) in k.zones.iter().enumerate().take(Z) {
                let (a, b) = (&now.z[side][zid], &p.z[side][zid]);
                let reached = a.reached - b.reached;
                if z.present < 8192 || reached == 0 {
                    continue;
                }
                let shrunk = a.shrunk - b.shrunk;
                let steps: Vec<String> = (0..STEPS).map(|s| (a.failed_at[s] - b.failed_at[s]).to_string()).collect();
                let per = |x: u64| x as f64 / reached as f64;
                let (lo, hi) = self.range[side][zid];
                out += &format!(
                    " | {} {}/{}/{} ({}) / {} ({}) / {} | big {:.0} [{}..{}] need {:.0}",
                    z.kind.name(),
                    reached,
                    a.was_end - b.was_end,
                    shrunk,
                    steps.join("/"),
                    reached - shrunk,
                    a.passed_high_too - b.passed_high_too,
                    a.scanned - b.scanned,
                    per(a.big_free_sum - b.big_free_sum),
                    lo,
                    hi,
                    per(a.need_sum - b.need_sum),
                );
            }
        }
        // The least/most are the interval's: the next event starts them again.
        self.reset.set(true);
        out
    }
}

impl Tracer for Passes {
    fn wants(&self) -> u32 {
        kind::KSWAPD_ZONE_CHECK | kind::LRU_SHRINK_INACTIVE
    }
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if self.reset.replace(false) {
            self.range = [[(u64::MAX, 0); Z]; 2];
        }
        match *ev {
            Tracepoint::KswapdZoneCheck { zid, order, end_zone, shrink, .. } if zid < Z => {
                let side = (order > 0) as usize;
                // A pass walks the zones upwards: a zone not above the last one begins the next.
                self.c.passes[side] += self.last_zid.is_none_or(|l| zid <= l) as u64;
                self.last_zid = Some(zid);
                let z = &k.zones[zid];
                let high = z.high_wmark();
                let pz = &mut self.c.z[side][zid];
                pz.reached += 1;
                pz.was_end += (z.kind as usize == end_zone) as u64;
                let big: u64 = (order as usize..MAX_ORDER).map(|o| z.nr_free[o] << o).sum();
                pz.big_free_sum += big;
                pz.need_sum += (8 * high) >> order;
                let r = &mut self.range[side][zid];
                *r = (r.0.min(big), r.1.max(big));
                let failed = failing_step(k, zid, order, 8 * high, end_zone);
                if shrink {
                    pz.shrunk += 1;
                    pz.failed_at[failed.unwrap_or(0).min(SPARED - 1)] += 1;
                    self.current = Some((zid, side));
                } else {
                    self.current = None;
                    match failed {
                        Some(_) => pz.failed_at[SPARED] += 1,
                        None => pz.passed_high_too += failing_step(k, zid, order, high, end_zone).is_none() as u64,
                    }
                }
            }
            Tracepoint::LruShrinkInactive { zid, nr_scanned, .. } if k.trace_at.task == self.kswapd_task => {
                if let Some((cz, side)) = self.current {
                    if cz == zid {
                        self.c.z[side][zid].scanned += nr_scanned;
                    }
                }
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
