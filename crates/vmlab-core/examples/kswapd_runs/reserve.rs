//! The `rsv` line: Normal's MIGRATE_RESERVE pageblocks over the run. Per sample, what their
//! frames are (free pages by order and by the list they sit on, per-CPU pages, and the
//! pages in use by the caller class of their last hand-out), and over the interval every
//! way a page of theirs reached a caller: reused from a per-CPU list after an order-0 free
//! (2.6.36's `free_hot_cold_page` puts a reserve page on the movable list, where any movable
//! request may take it before `free_pcppages_bulk` returns it), taken off the reserve lists
//! (`__rmqueue`'s last resort, by request order and by path: fast at LOW or slow at MIN), or
//! taken off another type's lists (a page `rmqueue_bulk` took for a per-CPU list records the
//! request's type, and a drain frees it there). Pageblocks entering or leaving
//! MIGRATE_RESERVE are counted where the type can change at run time (`__rmqueue_fallback`'s
//! steals, seen as `mm_page_alloc_extfrag`), and the line says if its census found a pageblock
//! changed otherwise. An observer attached beside `Runs`.

use crate::classes::{Frames, ZoneClasses, NEVER};
use crate::common::CLASSES;
use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::{Mt, ZoneType, MIGRATE_RESERVE, PAGEBLOCK_ORDER};
use vmlab_core::trace::{Tracepoint, Tracer};

/// How a page last came to be handed out: freed onto a per-CPU list, taken off the reserve
/// lists, taken off another type's lists.
const PATHS: [&str; 3] = ["pcp-reuse", "reserve-list", "other-list"];

#[derive(Default, Clone, Copy)]
struct Flows {
    /// Reserve-pageblock pages handed out, [path][requested type unmovable/movable/reclaimable].
    handed: [[u64; 3]; 3],
    /// Reserve-pageblock pages taken off the buddy lists, [reserve list, other list][order 0,
    /// order > 0][fast, slow].
    taken: [[[u64; 2]; 2]; 2],
    /// Reserve-pageblock pages freed at order 0 (to a per-CPU list) and at order > 0.
    freed: [u64; 2],
    /// Pageblocks that became MIGRATE_RESERVE / stopped being it, seen at the minute samples.
    entered: u64,
    left: u64,
}

pub struct Reserve {
    nz: usize,
    start: u32,
    /// Per frame of Normal: caller class of its last hand-out (NEVER: not since the start).
    classes: ZoneClasses,
    /// Per frame of Normal: index into PATHS of how it last reached the buddy's edge.
    src: Vec<u8>,
    /// The slow path pending: (task, order) of the last wakeup an allocating task raised.
    slow: Option<(usize, u32)>,
    cum: Flows,
    prev: std::cell::Cell<Flows>,
    blocks: Vec<usize>,
    /// A steal happened: look at the types at the next event (a steal of a whole pageblock or
    /// more sets their type after its tracepoint).
    recheck: bool,
    /// The last `mm_page_alloc_extfrag` in Normal (request order, block order, requested type,
    /// list taken from), and each reserve pageblock lost with the steal seen just before it.
    last_steal: Option<(u32, u32, Mt, Mt)>,
    claims: Vec<String>,
}

impl Reserve {
    pub fn new(k: &Kernel) -> Option<Reserve> {
        let nz = k.zones.iter().position(|z| z.kind == ZoneType::Normal)?;
        let z = &k.zones[nz];
        let n = (z.end_pfn - z.start_pfn) as usize;
        let mut r = Reserve {
            nz,
            start: z.start_pfn,
            classes: ZoneClasses::new(k, nz),
            src: vec![NEVER; n],
            slow: None,
            cum: Flows::default(),
            prev: std::cell::Cell::new(Flows::default()),
            blocks: Vec::new(),
            recheck: false,
            last_steal: None,
            claims: Vec::new(),
        };
        r.blocks = r.reserve_blocks(k);
        Some(r)
    }

    pub fn header() -> String {
        format!(
            "rsv t_h | Normal's reserve pageblocks (first pfn) entered/left | free pages by block order o0..o10 (of them on other types' lists) pcp | in use by class of last hand-out {},never | in interval: handed out {} by requested unmov/mov/recl | taken off reserve lists o0 fast/slow o>0 fast/slow; off other lists o0 fast/slow o>0 fast/slow | freed o0/o>0",
            CLASSES.join(","),
            PATHS.join(" / ")
        )
    }

    /// First pfns of Normal's pageblocks now of type MIGRATE_RESERVE.
    fn reserve_blocks(&self, k: &Kernel) -> Vec<usize> {
        let z = &k.zones[self.nz];
        let nr = 1u32 << PAGEBLOCK_ORDER;
        let mut v = Vec::new();
        let mut f = z.start_pfn;
        while f < z.end_pfn {
            if k.pageblock_mt[k.pageblock_of(self.nz, f)] as usize == MIGRATE_RESERVE {
                v.push(f as usize);
            }
            f += nr - z.phys(f) % nr;
        }
        v
    }

    fn in_reserve(&self, k: &Kernel, pfn: u32) -> bool {
        k.zones[self.nz].spans(pfn) && k.pageblock_mt[k.pageblock_of(self.nz, pfn)] as usize == MIGRATE_RESERVE
    }

    /// A steal may have changed a pageblock's type.
    fn check(&mut self, k: &Kernel) {
        let now = self.reserve_blocks(k);
        self.cum.entered += now.iter().filter(|b| !self.blocks.contains(b)).count() as u64;
        let lost = self.blocks.iter().filter(|b| !now.contains(b)).count();
        self.cum.left += lost as u64;
        if lost > 0 {
            let by = self.last_steal.map_or("no steal seen".to_string(), |(o, fo, st, fb)| {
                format!("order {o} {st:?} request, order-{fo} block off the {fb:?} list")
            });
            self.claims.push(format!("{:.4} h: {by}", k.now as f64 / 3.6e12));
        }
        self.blocks = now;
    }

    pub fn line(&self, k: &Kernel) -> String {
        let z = &k.zones[self.nz];
        let nr = 1u32 << PAGEBLOCK_ORDER;
        let mut x = Frames::default();
        for &b in &self.blocks {
            let b = b as u32;
            let end = (b + nr - z.phys(b) % nr).min(z.end_pfn);
            x.add(k, self.nz, &self.classes, b, end, MIGRATE_RESERVE);
        }
        let Frames { by_order, other_list, pcp, held } = x;
        let (c, pv) = (self.cum, self.prev.replace(self.cum));
        let unseen = self.reserve_blocks(k) != self.blocks;
        let join = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
        let handed: Vec<String> = (0..3)
            .map(|i| (0..3).map(|m| (c.handed[i][m] - pv.handed[i][m]).to_string()).collect::<Vec<_>>().join("/"))
            .collect();
        let taken: Vec<String> = (0..2)
            .map(|l| {
                (0..2)
                    .map(|o| {
                        format!("{}/{}", c.taken[l][o][0] - pv.taken[l][o][0], c.taken[l][o][1] - pv.taken[l][o][1])
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        format!(
            "rsv {:.1} | {} ({}) +{}/-{}{} | {} ({}) pcp {} | {} | {} | {}; {} | {}/{}",
            k.now as f64 / 3.6e12,
            self.blocks.len(),
            join(&self.blocks.iter().map(|&b| b as u64).collect::<Vec<_>>()),
            c.entered - pv.entered,
            c.left - pv.left,
            if unseen { " (changed unseen)" } else { "" },
            join(&by_order),
            other_list,
            pcp,
            join(&held),
            handed.join(" : "),
            taken[0],
            taken[1],
            c.freed[0] - pv.freed[0],
            c.freed[1] - pv.freed[1],
        ) + &if self.claims.is_empty() { String::new() } else { format!(" | claimed: {}", self.claims.join("; ")) }
    }
}

impl Tracer for Reserve {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if std::mem::take(&mut self.recheck) {
            self.check(k);
        }
        self.classes.event(k, ev);
        let task = k.trace_at.task;
        match *ev {
            Tracepoint::WakeupKswapd { order, .. } => self.slow = Some((task, order)),
            Tracepoint::MmPageAllocZoneLocked { zone, pfn, order, .. } if zone == self.nz => {
                if !self.in_reserve(k, pfn) {
                    return;
                }
                // The block is off its list but still says which list it was on.
                let list = ((k.fr.aux[pfn as usize] >> 4) as usize != MIGRATE_RESERVE) as usize;
                let slow = (self.slow == Some((task, order))) as usize;
                self.cum.taken[list][(order > 0) as usize][slow] += 1 << order;
                let i = (pfn - self.start) as usize;
                let end = (i + (1usize << order)).min(self.src.len());
                self.src[i..end].fill(1 + list as u8);
            }
            Tracepoint::MmPageAlloc { zone, order, migratetype, pfn, .. } => {
                if self.slow == Some((task, order)) {
                    self.slow = None;
                }
                if zone != self.nz {
                    return;
                }
                if self.in_reserve(k, pfn) {
                    let s = self.src[(pfn - self.start) as usize];
                    if s != NEVER {
                        self.cum.handed[s as usize][(migratetype as usize).min(2)] += 1 << order;
                    }
                }
            }
            Tracepoint::MmPageFree { pfn, order, .. } if self.in_reserve(k, pfn) => {
                self.cum.freed[(order > 0) as usize] += 1 << order;
                if order == 0 {
                    self.src[(pfn - self.start) as usize] = 0;
                }
            }
            Tracepoint::MmPageAllocExtfrag { zone, order, fallback_order, start_mt, fallback_mt, .. }
                if zone == self.nz =>
            {
                self.recheck = true;
                self.last_steal = Some((order, fallback_order, start_mt, fallback_mt));
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
