//! Where page allocations are served while kswapd balances for a high order, and who splits the
//! free blocks of order >= 3 (the seed-001 validation hooks: a 2.6.36 order-3 kswapd run ends
//! only when the preferred zone shows enough order-3 blocks at its HIGH watermark, so what
//! matters is whether allocators take those blocks before kswapd sees them). An observer of tracepoints
//! (`crate::trace`), attached by the seed's report; no effect on the simulation.

use crate::kernel::Kernel;
use crate::mm_types::pg;
use crate::mmzone::{Mt, MAX_ORDER, MIGRATE_TYPES};
use crate::trace::{Tracepoint, Tracer};

/// Zone ids tracked (larger ids are folded into the last slot).
pub const ZONES: usize = 8;

#[derive(Clone, Debug, Default)]
pub struct AllocDiag {
    /// Order-0 MOVABLE pages allocated per zone: [outside a high-order kswapd run, inside one].
    pub movable0: [[u64; ZONES]; 2],
    /// Free blocks of order >= 3 taken off a zone's free lists, by the request: [order-0
    /// MOVABLE (page cache, anon), order > 0 (slab), other].
    pub split_o3: [[u64; ZONES]; 3],
    /// Simulated time inside high-order kswapd balance runs (to the scheduling quantum).
    pub run_ns: u64,
    pub run_start: Option<u64>,
    /// At the end of each high-order run that ended balanced, per zone: free pages, order-0
    /// free pages on non-MOVABLE lists, pages in MOVABLE blocks of order >= 3 (sums; divide by
    /// `balanced_ends`).
    pub end_free: [u64; ZONES],
    pub end_nonmovable0: [u64; ZONES],
    pub end_movable_o3: [u64; ZONES],
    pub balanced_ends: u64,
    /// Every 32nd balanced end, per zone: [file LRU pages, anon LRU pages, and the file pages
    /// whose buddy (pfn ^ 1) is a file LRU page, an anon LRU page, free, anything else].
    pub layout: [[u64; 6]; ZONES],
    pub layout_samples: u64,
}

impl AllocDiag {
    pub fn run_started(&mut self, now: u64) {
        self.run_start = Some(now);
    }

    pub fn run_ended(&mut self, now: u64) {
        if let Some(s) = self.run_start.take() {
            self.run_ns += now.saturating_sub(s);
        }
    }
}

impl AllocDiag {
    /// kswapd of node 0 is inside a balance_pgdat for order > 0.
    fn in_high_order_run(&self) -> usize {
        self.run_start.is_some() as usize
    }

    fn alloc(&mut self, zid: usize, order: u32, mt: Mt) {
        if order == 0 && mt == Mt::Movable {
            let r = self.in_high_order_run();
            self.movable0[r][zid.min(ZONES - 1)] += 1;
        }
    }

    fn split(&mut self, zid: usize, block_order: u32, order: u32, mt: Mt) {
        if block_order >= 3 {
            let who = if order == 0 && mt == Mt::Movable {
                0
            } else if order > 0 {
                1
            } else {
                2
            };
            self.split_o3[who][zid.min(ZONES - 1)] += 1;
        }
    }

    /// A high-order run ended balanced: record each zone's free-page layout.
    fn balanced_end(&mut self, k: &Kernel) {
        let d = self;
        d.balanced_ends += 1;
        for (zid, z) in k.zones.iter().enumerate().take(ZONES) {
            d.end_free[zid] += z.free_pages;
            d.end_nonmovable0[zid] +=
                (0..MIGRATE_TYPES).filter(|&m| m != Mt::Movable as usize).map(|m| z.free_area[0][m].len).sum::<u64>();
            d.end_movable_o3[zid] += (3..MAX_ORDER).map(|o| z.free_area[o][Mt::Movable as usize].len << o).sum::<u64>();
        }
        if d.balanced_ends % 32 == 1 {
            d.layout_samples += 1;
            for (zid, z) in k.zones.iter().enumerate().take(ZONES) {
                let l = &mut d.layout[zid];
                l[1] += z.lru_pages[0] + z.lru_pages[1];
                for p in z.start_pfn..z.end_pfn {
                    let f = k.fr.flags[p as usize];
                    if f & pg::LRU == 0 || f & pg::ANON != 0 {
                        continue;
                    }
                    l[0] += 1;
                    let b = if z.phys(p) & 1 == 0 { p + 1 } else { p - 1 };
                    let g = if z.spans(b) { k.fr.flags[b as usize] } else { 0 };
                    let i = if z.spans(b) && k.page_is_free(zid, b) {
                        4
                    } else if g & pg::LRU != 0 {
                        if g & pg::ANON == 0 {
                            2
                        } else {
                            3
                        }
                    } else {
                        5
                    };
                    l[i] += 1;
                }
            }
        }
    }
}

impl Tracer for AllocDiag {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        match *ev {
            Tracepoint::MmPageAlloc { zone, order, migratetype, .. } => self.alloc(zone, order, migratetype),
            Tracepoint::MmPageAllocZoneLocked { zone, block_order, order, migratetype, .. } => {
                self.split(zone, block_order, order, migratetype)
            }
            Tracepoint::KswapdBalanceBegin { order, .. } if order > 0 => self.run_started(k.now),
            Tracepoint::KswapdBalanceEnd { order, .. } => {
                if order > 0 {
                    self.balanced_end(k);
                }
                self.run_ended(k.now);
            }
            _ => {}
        }
    }
    fn wants(&self) -> u32 {
        use crate::trace::kind;
        kind::MM_PAGE_ALLOC | kind::MM_PAGE_ALLOC_ZONE_LOCKED | kind::KSWAPD_BALANCE_BEGIN | kind::KSWAPD_BALANCE_END
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
