//! The `pb` line (every sample): DMA32's pageblocks by migrate type, and who holds their pages —
//! what empties DMA32's unmovable lists. Per type: the pageblocks, their free pages in buddy
//! blocks (and of them the ones on another type's lists), on per-CPU lists, and the pages in
//! use by the caller class of their last hand-out; per interval, the pages handed out for
//! non-movable requests (`Handed`'s classes skb slab to kern?) that were freed, by the type of
//! the pageblock they were freed into. 2.6.36's `free_hot_cold_page` / `__free_one_page` put a
//! freed page on its pageblock's list, not on the list it was taken from, so an unmovable page
//! stolen from a movable pageblock that does not claim it goes back to the movable lists when
//! freed. An observer attached beside `Runs`.

use crate::common::{Handed, CLASSES, CLASS_FILE, CLASS_MOV_UNKNOWN, NCLASS};
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{ZoneType, MIGRATE_TYPES, PAGEBLOCK_ORDER};
use vmlab_core::trace::{Tracepoint, Tracer};

const NEVER: u8 = u8::MAX;
const TYPES: [&str; 4] = ["unmov", "mov", "recl", "reserve"];
/// The first class handed out for a non-movable, non-reclaimable request (skb slab).
const FIRST_UNMOV_CLASS: u8 = 4;

pub struct Blocks {
    zid: usize,
    start: u32,
    /// Per frame of DMA32: caller class of its last hand-out (NEVER: not since the start).
    class: Vec<u8>,
    pending: Option<(Handed, u32)>,
    /// Pages of non-movable hand-outs freed, by the type of their pageblock at the free.
    freed: [u64; MIGRATE_TYPES],
    printed: std::cell::Cell<[u64; MIGRATE_TYPES]>,
}

impl Blocks {
    pub fn new(k: &Kernel) -> Option<Blocks> {
        let zid = k.zones.iter().position(|z| z.kind == ZoneType::Dma32)?;
        let z = &k.zones[zid];
        let n = (z.end_pfn - z.start_pfn) as usize;
        Some(Blocks {
            zid,
            start: z.start_pfn,
            class: vec![NEVER; n],
            pending: None,
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
        let mut free = [[0u64; 2]; MIGRATE_TYPES];
        let mut pcp = [0u64; MIGRATE_TYPES];
        let mut held = [[0u64; NCLASS + 1]; MIGRATE_TYPES];
        let mut f = z.start_pfn;
        while f < z.end_pfn {
            let end = (f + nr - z.phys(f) % nr).min(z.end_pfn);
            let t = self.mt_of(k, f);
            blocks[t] += 1;
            let mut p = f;
            while p < end {
                let fl = k.fr.flags[p as usize];
                if fl & pg::BUDDY != 0 {
                    let o = (k.fr.aux[p as usize] & 0xf) as usize;
                    let pages = (1u64 << o).min((end - p) as u64);
                    free[t][0] += pages;
                    if (k.fr.aux[p as usize] >> 4) as usize != t {
                        free[t][1] += pages;
                    }
                    p += 1 << o;
                    continue;
                }
                if fl & pg::PCP != 0 {
                    pcp[t] += 1;
                } else if !k.page_is_free(self.zid, p) {
                    let c = self.class[(p - self.start) as usize];
                    held[t][if c == NEVER { NCLASS } else { c as usize }] += 1;
                }
                p += 1;
            }
            f = end;
        }
        let pv = self.printed.replace(self.freed);
        let per_type: Vec<String> = (0..MIGRATE_TYPES)
            .map(|t| {
                let h: Vec<String> = held[t].iter().map(|x| x.to_string()).collect();
                format!("{} {} {} ({}) {} {}", TYPES[t], blocks[t], free[t][0], free[t][1], pcp[t], h.join(","))
            })
            .collect();
        let freed: Vec<String> = (0..MIGRATE_TYPES).map(|t| (self.freed[t] - pv[t]).to_string()).collect();
        format!("pb {t_h:.1} | {} | {}", per_type.join(" | "), freed.join("/"))
    }
}

impl Tracer for Blocks {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if let Some((h, pages)) = self.pending.take() {
            let c = h.class(k, ev).unwrap_or(CLASS_MOV_UNKNOWN) as u8;
            let i = (h.pfn - self.start) as usize;
            let end = (i + pages as usize).min(self.class.len());
            self.class[i..end].fill(c);
        }
        match *ev {
            Tracepoint::MmPageAlloc { zone, order, migratetype, pfn, gfp } if zone == self.zid => {
                self.pending = Some((Handed::new(k, pfn, gfp, migratetype), 1 << order));
            }
            Tracepoint::MmPageFree { pfn, order, .. } if k.zones[self.zid].spans(pfn) => {
                let i = (pfn - self.start) as usize;
                let c = self.class[i];
                if c != NEVER && c >= FIRST_UNMOV_CLASS {
                    self.freed[self.mt_of(k, pfn)] += 1 << order;
                }
                let end = (i + (1usize << order)).min(self.class.len());
                self.class[i..end].fill(NEVER);
            }
            Tracepoint::FilemapAdd { pfn, .. } if k.zones[self.zid].spans(pfn) => {
                let i = (pfn - self.start) as usize;
                if self.class[i] == CLASS_MOV_UNKNOWN as u8 {
                    self.class[i] = CLASS_FILE as u8;
                }
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
