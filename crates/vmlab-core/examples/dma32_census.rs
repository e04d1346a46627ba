//! Why DMA32's free memory stays in high-order blocks (seed 001): every EVERY_S, DMA32's
//! allocations by gfp and order, the free blocks they split (`mm_page_alloc_zone_locked`), the
//! fallbacks (`mm_page_alloc_extfrag`), the frees by who and order and, for kswapd's order-0
//! frees, whether the page's buddy and the rest of its aligned order-3 block were free already
//! (reclaim order against physical order); the zone's watermark state, free pages by order and
//! migrate type, and its pageblocks by type. An observer: the run is the same without it.
//!
//! A second line per sample ("takes …") says who takes DMA32's free blocks of order ≥ 1: each
//! block taken off the lists (`mm_page_alloc_zone_locked`, by the pfn the request gets) is
//! counted by path — `__rmqueue_smallest` on the wanted type, `__rmqueue_fallback` (an
//! `mm_page_alloc_extfrag` follows), or a MIGRATE_RESERVE block — by its order, and by the
//! caller class of the page's first user, read when the page is handed out (`mm_page_alloc`;
//! an order-0 page may first wait on a per-CPU list): page cache, anon, `[fs]` slab (reclaimable),
//! skb slab (atomic), kmalloc slab, page table, kernel stack, TCP page, `[[kmem]]` page. The
//! class is read from what the caller does next (the frame's flags, a page-cache insertion,
//! the kernel-stack / socket / kmem page counts rising), before any other tracepoint fires.
//! Also kswapd's lumpy isolations in DMA32 and the order ≥ 3 free pages outside its reserve.
//!
//! cargo run --profile ci -p vmlab-core --example dma32_census -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]

mod common;

use common::{Handed, CLASSES, NCLASS};
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{ZoneType, MAX_ORDER, MIGRATE_RESERVE, MIGRATE_TYPES, PAGEBLOCK_ORDER};
use vmlab_core::sim::Sim;
use vmlab_core::trace::{GfpKind, Tracepoint, Tracer};

#[derive(Default, Clone)]
struct Census {
    zid: usize,
    /// Allocations (calls) by [movable, kernel, atomic][order 0, 1, 2, 3+].
    alloc: [[u64; 4]; 3],
    file: u64,
    /// Free blocks taken off the lists, by requested migrate type and [request order 0 / >0]
    /// and [block order 0, 1, 2, 3+].
    split: [[[u64; 4]; 2]; 3],
    /// Fallbacks by [start mt][fallback mt], those that stole the pageblock's free pages, those
    /// that took a block of order >= 3.
    extfrag: [[u64; 3]; 3],
    stolen: u64,
    extfrag_o3: u64,
    /// Frees (calls) by [kswapd, other][order 0, 1, 2, 3+].
    free: [[u64; 4]; 2],
    /// kswapd's order-0 frees: buddy already free (buddy list or a pcp list); the other seven
    /// pages of the aligned order-3 block free; the pfn adjacent to kswapd's previous free.
    k_buddy_free: u64,
    k_block_free: u64,
    k_adjacent: u64,
    k_last: u32,
    /// Hot order-0 frees by what the page was: slab, anon, page cache, other (TCP, kmem, tables).
    hot_kind: [u64; 4],
    /// Allocations made with the zone's buddy free pages below LOW / below MIN, and the least
    /// free seen.
    below_low: u64,
    below_min: u64,
    min_free: u64,
    every_ns: u64,
    window: u64,
    /// Per frame of the machine: the block its last take off DMA32's lists came from, when of
    /// order >= 1 (`tag`: bits 0-1 block order 1, 2, 3+; bits 2-3 path), until handed out.
    tag: Vec<u8>,
    last_take: u32,
    /// The page handed out last, its class not read yet.
    pending: Option<Pending>,
    /// Movable pages handed out that were neither anon nor page cache at once (readahead adds
    /// them to the cache a little later): pfn → tag.
    movable_wait: std::collections::HashMap<u32, u8>,
    /// Blocks of order >= 1 taken, by [path smallest, fallback, reserve][block order 1, 2, 3+]
    /// [caller class].
    taken: [[[u64; NCLASS]; 3]; 3],
    /// kswapd's lumpy isolations in DMA32 (`mm_vmscan_lru_isolate` mode 2) and pages taken.
    lumpy: [u64; 2],
}

const PATHS: [&str; 3] = ["smallest", "fallback", "reserve"];

#[derive(Clone, Copy)]
struct Pending {
    h: Handed,
    tag: u8,
}

impl Census {
    fn count(&mut self, tag: u8, class: usize) {
        let (block, path) = ((tag & 3) as usize - 1, (tag >> 2) as usize);
        self.taken[path][block][class] += 1;
    }

    /// The class of the page handed out last, from what its caller did since.
    fn resolve(&mut self, k: &Kernel, p: Pending, ev: &Tracepoint) {
        match p.h.class(k, ev) {
            Some(class) => self.count(p.tag, class),
            None => {
                self.movable_wait.insert(p.h.pfn, p.tag);
            }
        }
    }
}

fn page_free(k: &Kernel, z: &vmlab_core::mmzone::Zone, pfn: u32) -> bool {
    if k.fr.has(pfn, pg::PCP) {
        return true;
    }
    for o in 0..MAX_ORDER as u32 {
        let Some(head) = pfn.checked_sub(z.phys(pfn) & ((1u32 << o) - 1)).filter(|&h| h >= z.start_pfn) else {
            break;
        };
        if k.fr.has(head, pg::BUDDY) && (k.fr.aux[head as usize] & 0xf) as u32 >= o {
            return true;
        }
    }
    false
}

impl Tracer for Census {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if let Some(p) = self.pending.take() {
            self.resolve(k, p, ev);
        }
        match *ev {
            Tracepoint::MmPageAlloc { zone, pfn, gfp, migratetype, .. } if zone == self.zid => {
                let tag = std::mem::take(&mut self.tag[pfn as usize]);
                if tag != 0 {
                    self.pending = Some(Pending { h: Handed::new(k, pfn, gfp, migratetype), tag });
                }
            }
            Tracepoint::MmPageAllocZoneLocked { zone, pfn, block_order, .. } if zone == self.zid => {
                // Every page handed out was first taken as a block's head: a fresh tag each take.
                let reserve = k.pageblock_mt[k.pageblock_of(zone, pfn)] as usize == MIGRATE_RESERVE;
                self.tag[pfn as usize] =
                    if block_order == 0 { 0 } else { (block_order.min(3) as u8) | ((reserve as u8 * 2) << 2) };
                self.last_take = pfn;
            }
            Tracepoint::MmPageAllocExtfrag { zone, .. } if zone == self.zid => {
                // Follows the fallback's own zone_locked event: the block just tagged.
                let t = &mut self.tag[self.last_take as usize];
                if *t != 0 {
                    *t = (*t & 3) | (1 << 2);
                }
            }
            Tracepoint::FilemapAdd { pfn, .. } => {
                if let Some(tag) = self.movable_wait.remove(&pfn) {
                    self.count(tag, 0);
                }
            }
            Tracepoint::MmPageFree { pfn, .. } => {
                if let Some(tag) = self.movable_wait.remove(&pfn) {
                    self.count(tag, 2);
                }
            }
            Tracepoint::LruIsolate { classzone, mode: 2, nr_taken, .. } if classzone == self.zid => {
                self.lumpy[0] += 1;
                self.lumpy[1] += nr_taken;
            }
            _ => {}
        }
        let z = &k.zones[self.zid];
        match *ev {
            Tracepoint::MmPageAlloc { zone, order, gfp, .. } if zone == self.zid => {
                let g = match gfp {
                    GfpKind::HighuserMovable => 0,
                    GfpKind::Kernel => 1,
                    GfpKind::Atomic => 2,
                };
                self.alloc[g][(order as usize).min(3)] += 1;
                self.below_low += (z.free_pages < z.low_wmark()) as u64;
                self.below_min += (z.free_pages < z.min_wmark()) as u64;
                if k.now / self.every_ns != self.window {
                    self.window = k.now / self.every_ns;
                    self.min_free = u64::MAX;
                }
                self.min_free = self.min_free.min(z.free_pages);
            }
            Tracepoint::FilemapAdd { pfn, .. } if z.spans(pfn) => self.file += 1,
            Tracepoint::MmPageAllocZoneLocked { zone, block_order, order, migratetype, .. } if zone == self.zid => {
                self.split[migratetype as usize][(order > 0) as usize][(block_order as usize).min(3)] += 1;
            }
            Tracepoint::MmPageAllocExtfrag { zone, fallback_order, start_mt, fallback_mt, stolen, .. }
                if zone == self.zid =>
            {
                self.extfrag[start_mt as usize][fallback_mt as usize] += 1;
                self.stolen += stolen as u64;
                self.extfrag_o3 += (fallback_order >= 3) as u64;
            }
            Tracepoint::MmPageFree { pfn, order, cold } if z.spans(pfn) => {
                // Reclaim frees cold (2.6.3x `pagevec_init(&freed_pvec, 1)`); nothing else here does.
                let kswapd = cold;
                self.free[(!kswapd) as usize][(order as usize).min(3)] += 1;
                if !kswapd && order == 0 {
                    let f = k.fr.flags[pfn as usize];
                    let kind = if f & pg::SLAB != 0 {
                        0
                    } else if f & pg::ANON != 0 {
                        1
                    } else if k.fr.mapping[pfn as usize] != 0 {
                        2
                    } else {
                        3
                    };
                    self.hot_kind[kind] += 1;
                }
                if kswapd && order == 0 {
                    // Buddies and blocks on the memory map's pfns, as the allocator pairs them.
                    let zs = z.start_pfn;
                    let phys = z.phys(pfn);
                    let buddy = pfn + 1 - 2 * (phys & 1);
                    self.k_buddy_free += (z.spans(buddy) && page_free(k, z, buddy)) as u64;
                    let b0 = pfn - (phys & 7);
                    self.k_block_free +=
                        (b0 >= zs && b0 + 8 <= z.end_pfn && (b0..b0 + 8).all(|p| p == pfn || page_free(k, z, p)))
                            as u64;
                    self.k_adjacent += (pfn == self.k_last + 1 || pfn + 1 == self.k_last) as u64;
                    self.k_last = pfn;
                }
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn sub<const N: usize>(a: &[u64; N], b: &[u64; N]) -> [u64; N] {
    std::array::from_fn(|i| a[i] - b[i])
}

fn main() {
    let common::Census { mut sim, every_s } = common::setup("dma32_census");
    let zid = sim.k.zones.iter().position(|z| z.kind == ZoneType::Dma32).expect("a DMA32 zone");
    {
        let z = &sim.k.zones[zid];
        println!(
            "DMA32 zid {zid} pfns {}..{} managed {} wmark {:?} lowmem_reserve {:?} pcp high/batch {}/{} cpus {}",
            z.start_pfn,
            z.end_pfn,
            z.managed,
            z.wmark,
            z.lowmem_reserve,
            z.pcp.first().map_or(0, |p| p.high),
            z.pcp.first().map_or(0, |p| p.batch),
            z.pcp.len()
        );
    }
    sim.k.attach_tracer(Box::new(Census {
        zid,
        min_free: u64::MAX,
        every_ns: every_s * 1_000_000_000,
        tag: vec![0; sim.k.fr.flags.len()],
        ..Default::default()
    }));
    sim.interval = every_s * 1_000_000_000;
    let mut prev = Census::default();
    println!(
        "t_h | alloc mov/ker/atm o0,o1,o2,o3+ (file) | splits by mt unmov/mov/recl: req0 blk o0,o1,o2,o3+ ; req>0 blk ... | extfrag [start->fb] U>M U>R M>U M>R R>U R>M stolen fb_o3+ | frees cold(reclaim) o0..3+ / hot o0..3+ | reclaim o0: buddy_free% block8_free% adjacent% | allocs below LOW/MIN, least free | now: free wmark pcp | nr_free o0..o10 | free pages by mt o0-2,o3+ | pageblocks U/M/R"
    );
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        let c = sim.k.tracer::<Census>().expect("census").clone();
        let z = &sim.k.zones[zid];
        let pct = |a: u64, b: u64| a as f64 * 100.0 / b.max(1) as f64;
        let mut line = format!("{:.2} |", sim.s.now as f64 / 3.6e12);
        for (a, b) in c.alloc.iter().zip(&prev.alloc) {
            line += &format!(" {}", sub(a, b).map(|x| x.to_string()).join(","));
        }
        line += &format!(" ({}) |", c.file - prev.file);
        for (a, b) in c.split.iter().zip(&prev.split) {
            for (x, y) in a.iter().zip(b) {
                line += &format!(" {}", sub(x, y).map(|v| v.to_string()).join(","));
            }
            line += " ;";
        }
        line += " |";
        for (s, (a, b)) in c.extfrag.iter().zip(&prev.extfrag).enumerate() {
            for (f, (x, y)) in a.iter().zip(b).enumerate() {
                if s != f {
                    line += &format!(" {}", x - y);
                }
            }
        }
        line += &format!(" {} {} |", c.stolen - prev.stolen, c.extfrag_o3 - prev.extfrag_o3);
        for (a, b) in c.free.iter().zip(&prev.free) {
            line += &format!(" {}", sub(a, b).map(|x| x.to_string()).join(","));
        }
        line += &format!(
            " (hot o0 slab/anon/file/other {})",
            sub(&c.hot_kind, &prev.hot_kind).map(|x| x.to_string()).join(",")
        );
        let k0 = c.free[0][0] - prev.free[0][0];
        line += &format!(
            " | {:.1} {:.1} {:.1} |",
            pct(c.k_buddy_free - prev.k_buddy_free, k0),
            pct(c.k_block_free - prev.k_block_free, k0),
            pct(c.k_adjacent - prev.k_adjacent, k0)
        );
        line += &format!(" {} {} {} |", c.below_low - prev.below_low, c.below_min - prev.below_min, c.min_free);
        line += &format!(" {} {:?} {} |", z.free_pages, z.wmark, z.pcp_pages());
        line += &format!(" {} |", z.nr_free.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","));
        let by_type: Vec<String> = (0..MIGRATE_TYPES)
            .map(|mt| {
                let band = |r: std::ops::Range<usize>| -> u64 { r.map(|o| z.free_area[o][mt].len << o).sum() };
                format!("{},{}", band(0..3), band(3..MAX_ORDER))
            })
            .collect();
        line += &format!(" {} |", by_type.join("/"));
        let mov: Vec<String> = (0..MAX_ORDER).map(|o| z.free_area[o][1].len.to_string()).collect();
        line += &format!(" movable nr o0..o10 {} |", mov.join(","));
        let mut blocks = [0u64; 4];
        let pb = 1u32 << PAGEBLOCK_ORDER;
        for b in (z.phys_start_pfn / pb)..z.phys(z.end_pfn).div_ceil(pb) {
            blocks[(sim.k.pageblock_mt[b as usize] as usize).min(3)] += 1;
        }
        line += &format!(" {}/{}/{}/{}", blocks[0], blocks[1], blocks[2], blocks[3]);
        println!("{line}");
        let mut takes = format!("takes {:.2} |", sim.s.now as f64 / 3.6e12);
        for (path, name) in PATHS.iter().enumerate() {
            takes += &format!(" {name}:");
            for block in 0..3 {
                let d: [u64; NCLASS] = sub(&c.taken[path][block], &prev.taken[path][block]);
                let who: Vec<String> =
                    d.iter().zip(CLASSES).filter(|(n, _)| **n > 0).map(|(n, w)| format!("{w} {n}")).collect();
                takes +=
                    &format!(" o{}{} {} ({});", block + 1, ["", "", "+"][block], d.iter().sum::<u64>(), who.join(", "));
            }
            takes += " |";
        }
        let outside: u64 =
            (3..MAX_ORDER).map(|o| (0..MIGRATE_RESERVE).map(|mt| z.free_area[o][mt].len << o).sum::<u64>()).sum();
        takes += &format!(
            " movable waiting {} | lumpy isolations {} pages {} | free in o3+ outside reserve {}",
            c.movable_wait.len(),
            c.lumpy[0] - prev.lumpy[0],
            c.lumpy[1] - prev.lumpy[1],
            outside
        );
        println!("{takes}");
        prev = c;
    }));
    if let Err(e) = sim.run() {
        eprintln!("{}", e.message);
        std::process::exit(1);
    }
}
