//! The caller class of each frame's last hand-out in one zone, for the observers that count a
//! zone's pages by holder (`reserve.rs`, `blocks.rs`). A hand-out's class is settled at the next
//! tracepoint from what its caller did in between (`Handed::class`); a page handed out movable
//! and not yet anon becomes "file" when readahead adds it to the page cache.

use crate::common::{Handed, CLASS_FILE, CLASS_MOV_UNKNOWN, NCLASS};
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, Pfn};
use vmlab_core::mmzone::MAX_ORDER;
use vmlab_core::trace::Tracepoint;

/// Not handed out since the observer began (or freed since, where the observer clears it).
pub const NEVER: u8 = u8::MAX;

pub struct ZoneClasses {
    zid: usize,
    start: u32,
    class: Vec<u8>,
    pending: Option<(Handed, u32)>,
}

impl ZoneClasses {
    pub fn new(k: &Kernel, zid: usize) -> ZoneClasses {
        let z = &k.zones[zid];
        ZoneClasses { zid, start: z.start_pfn, class: vec![NEVER; (z.end_pfn - z.start_pfn) as usize], pending: None }
    }

    /// The class of `pfn`'s last hand-out, or NEVER.
    pub fn get(&self, pfn: Pfn) -> u8 {
        self.class[(pfn - self.start) as usize]
    }

    /// Forget the classes of a freed block.
    pub fn clear(&mut self, pfn: Pfn, order: u32) {
        let i = (pfn - self.start) as usize;
        let end = (i + (1usize << order)).min(self.class.len());
        self.class[i..end].fill(NEVER);
    }

    /// Every tracepoint, before the observer's own handling: settle the pending hand-out, note
    /// a new one of the zone, and a page-cache insertion.
    pub fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
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
            Tracepoint::FilemapAdd { pfn, .. } if k.zones[self.zid].spans(pfn) => {
                let i = (pfn - self.start) as usize;
                if self.class[i] == CLASS_MOV_UNKNOWN as u8 {
                    self.class[i] = CLASS_FILE as u8;
                }
            }
            _ => {}
        }
    }
}

/// What the frames of one pageblock hold: free pages by the order of their buddy block (a block
/// merged past the pageblock counts only its pages inside it), of them the ones on another
/// list than `list`'s, pages on per-CPU lists, and pages in use by class of last hand-out
/// (index NCLASS: NEVER).
#[derive(Default)]
pub struct Frames {
    pub by_order: [u64; MAX_ORDER],
    pub other_list: u64,
    pub pcp: u64,
    pub held: [u64; NCLASS + 1],
}

impl Frames {
    /// Add the frames `from..end` of zone `zid` (one pageblock, clipped to the zone).
    pub fn add(&mut self, k: &Kernel, zid: usize, classes: &ZoneClasses, from: Pfn, end: Pfn, list: usize) {
        let mut p = from;
        while p < end {
            let f = k.fr.flags[p as usize];
            if f & pg::BUDDY != 0 {
                let o = (k.fr.aux[p as usize] & 0xf) as usize;
                let pages = (1u64 << o).min((end - p) as u64);
                self.by_order[o] += pages;
                if (k.fr.aux[p as usize] >> 4) as usize != list {
                    self.other_list += pages;
                }
                p += 1 << o;
                continue;
            }
            if f & pg::PCP != 0 {
                self.pcp += 1;
            } else if !k.page_is_free(zid, p) {
                let c = classes.get(p);
                self.held[if c == NEVER { NCLASS } else { c as usize }] += 1;
            }
            p += 1;
        }
    }
}
