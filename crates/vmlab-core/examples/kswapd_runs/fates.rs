//! The `fp` line (every sample, per interval): what became of the pages kswapd's
//! `shrink_inactive_list` batches took in DMA32 and Normal, for passes at order 0 and at orders
//! above 0 — pages scanned (`isolate_lru_pages`' count, which in 2.6.36 includes the neighbours
//! a high-order isolation takes around each tail page), of them neighbours, batches in lumpy
//! mode (ISOLATE_BOTH), pages freed, and why `shrink_page_list` kept the rest: `trylock_page`
//! failed, mlocked and culled, under writeback, referenced and kept (PAGEREF_KEEP), activated
//! (for a referenced mapping, for want of a swap slot, or because unmapping failed), dirty and
//! kept unwritten or handed to `pageout`; and of the pages freed, how many carried PG_referenced
//! (which 2.6.36 does not let keep a clean unmapped page) and how many were mapped. The engine's `reclaim_stat` on the
//! `mm_vmscan_lru_shrink_inactive` event carries the reasons. A `lc` line beside it walks each
//! zone's frames at the sample: its LRU lists as shares of the zone's present pages (the
//! reporter's SysRq-M gives Normal's file, anon and mlocked shares) and, of its file pages on
//! the LRU, how many are mapped, dirty, under writeback, PG_referenced or locked.
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use vmlab_core::trace::{kind, ReclaimStat, Tracepoint, Tracer};

const Z: usize = 8;

#[derive(Clone, Copy, Default)]
struct Fate {
    batches: u64,
    lumpy: u64,
    scanned: u64,
    neighbours: u64,
    reclaimed: u64,
    s: ReclaimStat,
}

pub struct Fates {
    /// [order 0, order > 0][zone].
    f: [[Fate; Z]; 2],
    printed: std::cell::Cell<[[Fate; Z]; 2]>,
    /// The order class of kswapd's last isolation, for the batch's shrink event after it.
    side: usize,
    kswapd_task: usize,
}

impl Fates {
    pub fn new(k: &Kernel) -> Fates {
        Fates {
            f: [[Fate::default(); Z]; 2],
            printed: std::cell::Cell::new([[Fate::default(); Z]; 2]),
            side: 0,
            kswapd_task: k.nodes[0].kswapd.task,
        }
    }

    pub fn header() -> String {
        "fp t_h | order-0 passes, then order>0 passes; per zone: batches (lumpy) / scanned (neighbours) / freed | kept: \
         locked / culled / writeback / ref_keep | activated: referenced / no swap slot / unmap failed | dirty: kept \
         unwritten / pageout | mapped met | freed: with PG_referenced / mapped\n\
         lc t_h | per zone: present | LRU % of present: inactive_anon active_anon inactive_file active_file \
         unevictable | file pages on the LRU: mapped / dirty / writeback / referenced / locked"
            .to_string()
    }

    /// The interval's `fp` line and the sample's `lc` line.
    pub fn lines(&self, k: &Kernel, t_h: f64) -> String {
        let now = self.f;
        let p = self.printed.replace(now);
        let mut out = format!("fp {t_h:.1}");
        for side in 0..2 {
            out += if side == 0 { " | o0" } else { " | o>0" };
            for (zid, z) in k.zones.iter().enumerate().take(Z) {
                let (a, b) = (&now[side][zid], &p[side][zid]);
                if z.present < 8192 || a.batches == b.batches {
                    continue;
                }
                let (s, r) = (&a.s, &b.s);
                let act = (s.nr_activate[0] + s.nr_activate[1]) - (r.nr_activate[0] + r.nr_activate[1]);
                let (noswap, unmap) = (s.nr_noswap - r.nr_noswap, s.nr_unmap_fail - r.nr_unmap_fail);
                let pageout = s.nr_pageout - r.nr_pageout;
                out += &format!(
                    " | {} {} ({}) / {} ({}) / {} | {} / {} / {} / {} | {} / {} / {} | {} / {} | {} | {} / {}",
                    z.kind.name(),
                    a.batches - b.batches,
                    a.lumpy - b.lumpy,
                    a.scanned - b.scanned,
                    a.neighbours - b.neighbours,
                    a.reclaimed - b.reclaimed,
                    s.nr_locked - r.nr_locked,
                    s.nr_culled - r.nr_culled,
                    s.nr_writeback - r.nr_writeback,
                    s.nr_ref_keep - r.nr_ref_keep,
                    act - noswap - unmap,
                    noswap,
                    unmap,
                    (s.nr_unqueued_dirty - r.nr_unqueued_dirty) - pageout,
                    pageout,
                    s.nr_mapped - r.nr_mapped,
                    s.nr_freed_referenced - r.nr_freed_referenced,
                    s.nr_freed_mapped - r.nr_freed_mapped,
                );
            }
        }
        out += &format!("\nlc {t_h:.1}");
        for z in k.zones.iter().take(Z) {
            if z.present < 8192 {
                continue;
            }
            // [list] pages, and of the file pages on the LRU: mapped, dirty, writeback, referenced, locked.
            let (mut lists, mut file) = ([0u64; 5], [0u64; 5]);
            for p in z.start_pfn..z.end_pfn {
                let f = k.fr.flags[p as usize];
                if f & pg::LRU == 0 {
                    continue;
                }
                if f & pg::UNEVICTABLE != 0 {
                    lists[4] += 1;
                    continue;
                }
                let l = k.fr.lru_list(p) as usize;
                if l < 4 {
                    lists[l] += 1;
                }
                if l == LRU_INACTIVE_FILE || l == LRU_ACTIVE_FILE {
                    file[0] += (k.fr.mapcount[p as usize] > 0) as u64;
                    file[1] += (f & pg::DIRTY != 0) as u64;
                    file[2] += (f & pg::WRITEBACK != 0) as u64;
                    file[3] += (f & pg::REFERENCED != 0) as u64;
                    file[4] += (f & pg::LOCKED != 0) as u64;
                }
            }
            let pct = |x: u64| 100.0 * x as f64 / z.present as f64;
            out += &format!(
                " | {} {} | {:.1} {:.1} {:.1} {:.1} {:.1} | {} / {} / {} / {} / {}",
                z.kind.name(),
                z.present,
                pct(lists[LRU_INACTIVE_ANON]),
                pct(lists[LRU_ACTIVE_ANON]),
                pct(lists[LRU_INACTIVE_FILE]),
                pct(lists[LRU_ACTIVE_FILE]),
                pct(lists[4]),
                file[0],
                file[1],
                file[2],
                file[3],
                file[4],
            );
        }
        out
    }
}

impl Tracer for Fates {
    fn wants(&self) -> u32 {
        kind::LRU_ISOLATE | kind::LRU_SHRINK_INACTIVE
    }
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if k.trace_at.task != self.kswapd_task {
            return;
        }
        match *ev {
            // Mode 1 is `shrink_active_list`'s isolation; 0 and 2 begin an inactive batch.
            Tracepoint::LruIsolate { classzone, order, mode, nr_skipped, .. } if mode != 1 && classzone < Z => {
                self.side = (order > 0) as usize;
                let f = &mut self.f[self.side][classzone];
                f.neighbours += nr_skipped;
                f.lumpy += (mode == 2) as u64;
            }
            Tracepoint::LruShrinkInactive { zid, nr_scanned, nr_reclaimed, stat, .. } if zid < Z => {
                let f = &mut self.f[self.side][zid];
                f.batches += 1;
                f.scanned += nr_scanned;
                f.reclaimed += nr_reclaimed;
                f.s += stat;
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
