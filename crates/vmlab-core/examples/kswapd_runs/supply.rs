//! The `d32` line (every sample, per interval): who takes DMA32's free blocks of order 3 and up
//! off its buddy lists. Once DMA32 has none outside its reserve, an order-3 atomic allocation
//! that Normal fails finds no zone passing its watermark and wakes kswapd at order 3 (2.6.36
//! `wake_all_kswapd`), so the order-3 wake rate follows this supply. A take of such a block is
//! read off `mm_page_alloc_zone_locked` (`block_order`); a refill's later takes pop the halves
//! its first split queued and are not counted again.

use crate::common::{Handed, CLASSES, CLASS_MOV_UNKNOWN, NCLASS};
use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::{Mt, ZoneType, MAX_ORDER};
use vmlab_core::trace::{Tracepoint, Tracer};

/// Takers: order >= 3 unmovable, order >= 3 other, order 1-2, order-0 refill movable, order-0
/// refill other.
const WHO: [&str; 5] = ["o3+unmov", "o3+other", "o1-2", "o0mov", "o0other"];

/// Cumulative counts; the line prints the difference from the previous line's.
#[derive(Clone, Copy, Default)]
struct Counts {
    /// Blocks of order >= 3 taken, and their pages, per taker.
    blocks: [u64; WHO.len()],
    pages: [u64; WHO.len()],
    /// Order-3 requests served by DMA32 and by the other zones.
    o3_here: u64,
    o3_elsewhere: u64,
    /// `__rmqueue_fallback` in DMA32: steals for unmovable / reclaimable / movable requests, and
    /// of them the ones that re-typed the pageblock's free pages.
    steals: [u64; 3],
    claimed: u64,
    /// Of the steals for unmovable requests: for order-0 requests / order > 0, and the ones
    /// that took a block of order >= 3.
    unmov_steals_o0: u64,
    unmov_steals_big: u64,
    /// The unmovable steals by the class of the DMA32 allocation that followed them (the request
    /// whose refill stole; the refill's other pages serve later requests of its type).
    steals_by_class: [u64; NCLASS],
    /// DMA32's free pages in blocks of order >= 3 (all types), set at each line.
    o3_free: u64,
}

pub struct Supply {
    zid: usize,
    c: Counts,
    printed: std::cell::Cell<Counts>,
    /// Unmovable steals since DMA32's last allocation, and the allocation they went to, whose
    /// class the next event settles.
    steals_pending: u64,
    pending: Option<(Handed, u64)>,
}

impl Supply {
    pub fn new(k: &Kernel) -> Option<Supply> {
        let zid = k.zones.iter().position(|z| z.kind == ZoneType::Dma32)?;
        let c = Counts { o3_free: o3_free(k, zid), ..Counts::default() };
        Some(Supply { zid, c, printed: std::cell::Cell::new(c), steals_pending: 0, pending: None })
    }

    pub fn header() -> String {
        format!(
            "d32 t_h | DMA32 free pages in blocks of order >= 3 at the line (change) | blocks (pages) of order >= 3 taken off its lists by {} | order-3 requests served DMA32 / other zones | fallback steals for unmov/recl/mov requests (pageblocks claimed; unmov ones for order-0 requests, of blocks of order >= 3) | o3+ pages formed by frees = change + taken | unmov steals by the class of the allocation they served ({})",
            WHO.join(" / "),
            CLASSES.join(",")
        )
    }

    /// The interval's line.
    pub fn line(&self, k: &Kernel, t_h: f64) -> String {
        let now = Counts { o3_free: o3_free(k, self.zid), ..self.c };
        let p = self.printed.replace(now);
        let change = now.o3_free as i64 - p.o3_free as i64;
        let d = |a: u64, b: u64| a - b;
        let taken: u64 = (0..WHO.len()).map(|i| d(now.pages[i], p.pages[i])).sum();
        let who: Vec<String> = (0..WHO.len())
            .map(|i| format!("{} ({})", d(now.blocks[i], p.blocks[i]), d(now.pages[i], p.pages[i])))
            .collect();
        format!(
            "d32 {t_h:.1} | {} ({change:+}) | {} | {} / {} | {}/{}/{} ({}; {}, {}) | {} | {}",
            now.o3_free,
            who.join(" / "),
            d(now.o3_here, p.o3_here),
            d(now.o3_elsewhere, p.o3_elsewhere),
            d(now.steals[0], p.steals[0]),
            d(now.steals[1], p.steals[1]),
            d(now.steals[2], p.steals[2]),
            d(now.claimed, p.claimed),
            d(now.unmov_steals_o0, p.unmov_steals_o0),
            d(now.unmov_steals_big, p.unmov_steals_big),
            change + taken as i64,
            (0..NCLASS)
                .map(|c| d(now.steals_by_class[c], p.steals_by_class[c]).to_string())
                .collect::<Vec<_>>()
                .join(",")
        )
    }
}

fn o3_free(k: &Kernel, zid: usize) -> u64 {
    let z = &k.zones[zid];
    (3..MAX_ORDER).map(|o| z.nr_free[o] << o).sum()
}

impl Tracer for Supply {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if let Some((h, n)) = self.pending.take() {
            self.c.steals_by_class[h.class(k, ev).unwrap_or(CLASS_MOV_UNKNOWN)] += n;
        }
        match *ev {
            Tracepoint::MmPageAlloc { zone, migratetype, pfn, gfp, .. }
                if zone == self.zid && self.steals_pending > 0 =>
            {
                self.pending = Some((Handed::new(k, pfn, gfp, migratetype), std::mem::take(&mut self.steals_pending)));
            }
            Tracepoint::MmPageAllocZoneLocked { zone, order, migratetype, block_order, .. } => {
                if order == 3 {
                    if zone == self.zid {
                        self.c.o3_here += 1;
                    } else {
                        self.c.o3_elsewhere += 1;
                    }
                }
                if zone != self.zid || block_order < 3 {
                    return;
                }
                let who = match (order, migratetype) {
                    (3.., Mt::Unmovable) => 0,
                    (3.., _) => 1,
                    (1 | 2, _) => 2,
                    (0, Mt::Movable) => 3,
                    _ => 4,
                };
                self.c.blocks[who] += 1;
                self.c.pages[who] += 1 << block_order;
            }
            Tracepoint::MmPageAllocExtfrag { zone, order, fallback_order, start_mt, stolen, .. }
                if zone == self.zid =>
            {
                let i = match start_mt {
                    Mt::Unmovable => 0,
                    Mt::Reclaimable => 1,
                    _ => 2,
                };
                self.c.steals[i] += 1;
                self.c.claimed += stolen as u64;
                if start_mt == Mt::Unmovable {
                    self.steals_pending += 1;
                    self.c.unmov_steals_o0 += (order == 0) as u64;
                    self.c.unmov_steals_big += (fallback_order >= 3) as u64;
                }
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
