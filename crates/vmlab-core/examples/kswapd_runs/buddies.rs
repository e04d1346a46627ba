//! The `bd` line (with `buddies=on`): what keeps DMA32's free single pages single. A free page
//! of order 0 on the buddy lists merges when its buddy is freed (2.6.36 `__free_one_page`), so
//! at the sample each single's buddy is either in use — counted by the caller class of its last
//! hand-out — or parked on a per-CPU list, which `__free_one_page` does not see until
//! `free_pcppages_bulk` drains it. Per interval it also counts where the order-0 unmovable
//! hand-outs landed (zonelist Normal, DMA32, DMA: `get_page_from_freelist`), the TCP pages among
//! them, and, for each TCP page freed in DMA32, what its buddy was at the free: a free buddy
//! block of order 0 (the pair forms when the page reaches the buddy lists), a per-CPU page, or a
//! page in use. And the pages the per-CPU lists hold per zone and list against `pcp->high`.

use crate::classes::{ZoneClasses, NEVER};
use crate::common::{Handed, CLASSES, NCLASS};
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, Pfn};
use vmlab_core::mmzone::{Mt, ZoneType, MIGRATE_TYPES};
use vmlab_core::trace::{GfpKind, Tracepoint, Tracer};

const TCP: usize = 9;
/// Zones the hand-out counts name, in zonelist order for GFP_KERNEL.
const ZONES: [ZoneType; 3] = [ZoneType::Normal, ZoneType::Dma32, ZoneType::Dma];

pub struct Buddies {
    zid: usize,
    classes: ZoneClasses,
    /// An order-0 GFP_KERNEL unmovable hand-out waiting for its class, and the zone it came from.
    pending: Option<(Handed, usize)>,
    /// By `ZONES`: order-0 unmovable GFP_KERNEL hand-outs, and the TCP pages of them; then TCP
    /// pages freed in DMA32 by their buddy's state — free order-0 block, per-CPU, in use.
    counts: Counts,
    printed: std::cell::Cell<Counts>,
    /// Per frame of DMA32: freed as a TCP page and not handed out since.
    freed_tcp: Vec<bool>,
    /// A hand-out of such a frame, waiting for its class.
    next_of_tcp: Option<Handed>,
}

/// Rows: hand-outs by zone; TCP pages of them by zone; TCP pages freed in DMA32 by buddy
/// state; frames freed as TCP pages by the class of their next hand-out (file, anon, mov?, TCP,
/// other).
type Counts = [[u64; 5]; 4];

impl Buddies {
    pub fn new(k: &Kernel) -> Option<Buddies> {
        let zid = k.zones.iter().position(|z| z.kind == ZoneType::Dma32)?;
        Some(Buddies {
            zid,
            classes: ZoneClasses::new(k, zid),
            pending: None,
            counts: [[0; 5]; 4],
            printed: Default::default(),
            freed_tcp: vec![false; (k.zones[zid].end_pfn - k.zones[zid].start_pfn) as usize],
            next_of_tcp: None,
        })
    }

    pub fn header() -> String {
        format!(
            "bd t_h | DMA32 free single pages on the buddy lists, by pageblock type unmov/mov/recl/reserve; pairs | the singles' buddies: on a per-CPU list / in use by class of last hand-out {},never (of the in-use ones on an LRU: file/anon) | per-CPU pages per zone unmov/mov/recl (cpus x high) | in interval: order-0 GFP_KERNEL unmovable hand-outs Normal/DMA32/DMA, of them TCP pages Normal/DMA32/DMA | TCP pages freed in DMA32 whose buddy was a free single / on a per-CPU list / in use | DMA32 frames freed as TCP pages, by the class of their next hand-out file/anon/mov?/tcp/other",
            CLASSES.join(",")
        )
    }

    /// Frame of the order-0 buddy of `pfn`: buddies pair on the memory map's pfn (2.6.1x on).
    fn buddy(&self, k: &Kernel, pfn: Pfn) -> Option<Pfn> {
        let z = &k.zones[self.zid];
        let b = if z.phys(pfn) & 1 == 0 { pfn + 1 } else { pfn.checked_sub(1)? };
        z.spans(b).then_some(b)
    }

    pub fn line(&self, k: &Kernel, t_h: f64) -> String {
        let z = &k.zones[self.zid];
        let mut singles = [0u64; MIGRATE_TYPES];
        // Index 0: per-CPU; 1..=NCLASS+1: in use by class (the last: never handed out).
        let mut by = [0u64; NCLASS + 2];
        let (mut lru_file, mut lru_anon) = (0u64, 0u64);
        for t in 0..MIGRATE_TYPES {
            let mut p = z.free_area[0][t].head;
            while p != vmlab_core::mm_types::NIL {
                let b_mt = k.pageblock_mt[k.pageblock_of(self.zid, p)] as usize;
                singles[b_mt.min(MIGRATE_TYPES - 1)] += 1;
                if let Some(b) = self.buddy(k, p) {
                    let f = k.fr.flags[b as usize];
                    if f & pg::PCP != 0 {
                        by[0] += 1;
                    } else {
                        let c = self.classes.get(b);
                        by[1 + if c == NEVER { NCLASS } else { c as usize }] += 1;
                        if f & pg::LRU != 0 {
                            if f & (pg::ANON | pg::SWAPBACKED) != 0 {
                                lru_anon += 1;
                            } else {
                                lru_file += 1;
                            }
                        }
                    }
                }
                p = k.fr.links[p as usize].next;
            }
        }
        let held: Vec<String> = by[1..].iter().map(|x| x.to_string()).collect();
        let pcp: Vec<String> = k
            .zones
            .iter()
            .filter(|z| z.kind != ZoneType::Dma && !z.pcp.is_empty())
            .map(|z| {
                let l = [Mt::Unmovable, Mt::Movable, Mt::Reclaimable]
                    .map(|m| z.pcp.iter().map(|c| c.lists[m as usize].len).sum::<u64>().to_string());
                format!("{} {} ({}x{})", z.kind.name(), l.join("/"), z.pcp.len(), z.pcp[0].high)
            })
            .collect();
        let pv = self.printed.replace(self.counts);
        let d: Vec<String> = (0..4)
            .map(|i| {
                (0..[3, 3, 3, 5][i]).map(|z| (self.counts[i][z] - pv[i][z]).to_string()).collect::<Vec<_>>().join("/")
            })
            .collect();
        let j = |a: &[u64]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/");
        format!(
            "bd {t_h:.1} | {} {}; pairs {} | {} / {} ({lru_file}/{lru_anon}) | {} | {} , {} | {} | {}",
            singles.iter().sum::<u64>(),
            j(&singles),
            z.nr_free[1],
            by[0],
            held.join(","),
            pcp.join(" "),
            d[0],
            d[1],
            d[2],
            d[3],
        )
    }
}

impl Tracer for Buddies {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        self.classes.event(k, ev);
        if let Some(h) = self.next_of_tcp.take() {
            let c = match h.class(k, ev) {
                Some(c @ 0..=1) => c,
                None | Some(2) => 2,
                Some(TCP) => 3,
                Some(_) => 4,
            };
            self.counts[3][c] += 1;
        }
        if let Some((h, zi)) = self.pending.take() {
            if h.class(k, ev) == Some(TCP) {
                self.counts[1][zi] += 1;
            }
        }
        if let Tracepoint::MmPageAlloc { zone, order, migratetype, pfn, gfp } = *ev {
            if zone == self.zid {
                let i = (pfn - k.zones[zone].start_pfn) as usize;
                if order == 0 && self.freed_tcp[i] {
                    self.next_of_tcp = Some(Handed::new(k, pfn, gfp, migratetype));
                }
                let end = (i + (1 << order)).min(self.freed_tcp.len());
                self.freed_tcp[i..end].fill(false);
            }
        }
        match *ev {
            Tracepoint::MmPageAlloc { zone, order: 0, migratetype: Mt::Unmovable, pfn, gfp: GfpKind::Kernel } => {
                if let Some(zi) = ZONES.iter().position(|&t| t == k.zones[zone].kind) {
                    self.counts[0][zi] += 1;
                    self.pending = Some((Handed::new(k, pfn, GfpKind::Kernel, Mt::Unmovable), zi));
                }
            }
            Tracepoint::MmPageFree { pfn, order, .. } if k.zones[self.zid].spans(pfn) => {
                if order == 0 && self.classes.get(pfn) == TCP as u8 {
                    // A buddy frame with PG_buddy heads a free block of order 0: a larger one would
                    // hold the page being freed.
                    let s = match self.buddy(k, pfn).map(|b| k.fr.flags[b as usize]) {
                        Some(f) if f & pg::BUDDY != 0 => 0,
                        Some(f) if f & pg::PCP != 0 => 1,
                        _ => 2,
                    };
                    self.counts[2][s] += 1;
                    self.freed_tcp[(pfn - k.zones[self.zid].start_pfn) as usize] = true;
                }
                self.classes.clear(pfn, order);
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
