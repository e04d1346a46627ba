//! The `pb` line (every sample): DMA32's pageblocks by migrate type, and who holds their pages —
//! what empties DMA32's unmovable lists. Per type: the pageblocks, their free pages in buddy
//! blocks (and of them the ones on another type's lists), on per-CPU lists, and the pages in
//! use by the caller class of their last hand-out; per interval, the pages handed out for
//! non-movable requests (`Handed`'s classes skb slab to kern?) that were freed, by the type of
//! the pageblock they were freed into. 2.6.36's `free_hot_cold_page` / `__free_one_page` put a
//! freed page on its pageblock's list, not on the list it was taken from, so an unmovable page
//! stolen from a movable pageblock that does not claim it goes back to the movable lists when
//! freed. An observer attached beside `Runs`.

use crate::classes::{Frames, ZoneClasses, NEVER};
use crate::common::CLASSES;
use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::{ZoneType, MIGRATE_TYPES, PAGEBLOCK_ORDER};
use vmlab_core::trace::{Tracepoint, Tracer};

const TYPES: [&str; 4] = ["unmov", "mov", "recl", "reserve"];
/// The first class handed out for a non-movable, non-reclaimable request (skb slab).
const FIRST_UNMOV_CLASS: u8 = 4;

pub struct Blocks {
    zid: usize,
    /// Per frame of DMA32: caller class of its last hand-out, cleared when it is freed.
    classes: ZoneClasses,
    /// Pages of non-movable hand-outs freed, by the type of their pageblock at the free.
    freed: [u64; MIGRATE_TYPES],
    printed: std::cell::Cell<[u64; MIGRATE_TYPES]>,
}

impl Blocks {
    pub fn new(k: &Kernel) -> Option<Blocks> {
        let zid = k.zones.iter().position(|z| z.kind == ZoneType::Dma32)?;
        Some(Blocks {
            zid,
            classes: ZoneClasses::new(k, zid),
            freed: [0; MIGRATE_TYPES],
            printed: std::cell::Cell::new([0; MIGRATE_TYPES]),
        })
    }

    pub fn header() -> String {
        format!(
            "pb t_h | per DMA32 pageblock type {}: pageblocks, free pages in buddy blocks (on other types' lists), on per-CPU lists, in use by class of last hand-out {},never | in interval: pages of non-movable hand-outs freed into unmov/mov/recl/reserve pageblocks",
            TYPES.join("/"),
            CLASSES.join(",")
        )
    }

    fn mt_of(&self, k: &Kernel, pfn: u32) -> usize {
        (k.pageblock_mt[k.pageblock_of(self.zid, pfn)] as usize).min(MIGRATE_TYPES - 1)
    }

    pub fn line(&self, k: &Kernel, t_h: f64) -> String {
        let z = &k.zones[self.zid];
        let nr = 1u32 << PAGEBLOCK_ORDER;
        let mut blocks = [0u64; MIGRATE_TYPES];
        let mut frames: [Frames; MIGRATE_TYPES] = Default::default();
        let mut f = z.start_pfn;
        while f < z.end_pfn {
            let end = (f + nr - z.phys(f) % nr).min(z.end_pfn);
            let t = self.mt_of(k, f);
            blocks[t] += 1;
            frames[t].add(k, self.zid, &self.classes, f, end, t);
            f = end;
        }
        let pv = self.printed.replace(self.freed);
        let per_type: Vec<String> = (0..MIGRATE_TYPES)
            .map(|t| {
                let x = &frames[t];
                let h: Vec<String> = x.held.iter().map(|x| x.to_string()).collect();
                let free: u64 = x.by_order.iter().sum();
                format!("{} {} {free} ({}) {} {}", TYPES[t], blocks[t], x.other_list, x.pcp, h.join(","))
            })
            .collect();
        let freed: Vec<String> = (0..MIGRATE_TYPES).map(|t| (self.freed[t] - pv[t]).to_string()).collect();
        format!("pb {t_h:.1} | {} | {}", per_type.join(" | "), freed.join("/"))
    }
}

impl Tracer for Blocks {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        self.classes.event(k, ev);
        if let Tracepoint::MmPageFree { pfn, order, .. } = *ev {
            if k.zones[self.zid].spans(pfn) {
                let c = self.classes.get(pfn);
                if c != NEVER && c >= FIRST_UNMOV_CLASS {
                    self.freed[self.mt_of(k, pfn)] += 1 << order;
                }
                self.classes.clear(pfn, order);
            }
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
