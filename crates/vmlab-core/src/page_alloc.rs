//! The zoned buddy allocator (`mm/page_alloc.c`): free lists per order and migrate type, per-CPU
//! page lists, watermarks and `lowmem_reserve`, `zone_watermark_ok`, and the allocation slow path
//! (wake kswapd, direct reclaim, retries, OOM).

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmzone::{Mt, ZoneType, MAX_ORDER, MIGRATE_RESERVE, PAGEBLOCK_ORDER};
use crate::profiles::{HighOrderCheck, WmarkRule};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::trace::Tracepoint;

/// What the caller may do to get memory (`gfp_t`, reduced to what vmlab models).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gfp {
    /// Highest zone usable.
    pub highest: ZoneType,
    /// May sleep and reclaim directly (__GFP_DIRECT_RECLAIM / __GFP_WAIT).
    pub direct_reclaim: bool,
    /// Atomic context: ALLOC_HARDER / ALLOC_HIGH, never reclaims.
    pub atomic: bool,
    /// __GFP_NORETRY: give up after one reclaim attempt.
    pub noretry: bool,
    pub mt: Mt,
    /// __GFP_COLD: an order-0 page from the pcp list tail (the page least likely cache-hot).
    pub cold: bool,
}

impl Gfp {
    /// GFP_HIGHUSER_MOVABLE: anon and page-cache pages.
    pub fn highuser_movable() -> Gfp {
        Gfp {
            highest: ZoneType::Movable,
            direct_reclaim: true,
            atomic: false,
            noretry: false,
            mt: Mt::Movable,
            cold: false,
        }
    }
    /// GFP_KERNEL: page tables and kernel objects.
    pub fn kernel() -> Gfp {
        Gfp {
            highest: ZoneType::Normal,
            direct_reclaim: true,
            atomic: false,
            noretry: false,
            mt: Mt::Unmovable,
            cold: false,
        }
    }
    /// GFP_KERNEL | __GFP_HIGHMEM: a user PTE page under 2.4-aa's pte-highmem or 2.6's
    /// CONFIG_HIGHPTE. Unmovable: page tables are not migrated.
    pub fn highpte() -> Gfp {
        Gfp { highest: ZoneType::HighMem, ..Gfp::kernel() }
    }
    /// GFP_ATOMIC: interrupt context (network receive).
    pub fn atomic() -> Gfp {
        Gfp {
            highest: ZoneType::Normal,
            direct_reclaim: false,
            atomic: true,
            noretry: true,
            mt: Mt::Unmovable,
            cold: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocFail {
    /// No page and no way to get one (atomic, or OOM killer found nothing to kill).
    NoMemory,
    /// The OOM killer killed a process; the caller's task may be the victim.
    OomKilled,
    /// Reclaim must wait for writeback: back off and retry.
    Throttled,
}

/// Watermark index.
pub const WMARK_MIN: usize = 0;
pub const WMARK_LOW: usize = 1;
pub const WMARK_HIGH: usize = 2;

/// `congestion_wait(BLK_RW_ASYNC, HZ/50)`: the slow path's wait between reclaim and a retry.
const CONGESTION_WAIT_NS: u64 = 20_000_000;

/// The per-CPU lists in the order 2.6.3x numbers them (include/linux/mmzone.h:
/// `MIGRATE_UNMOVABLE` 0, `MIGRATE_RECLAIMABLE` 1, `MIGRATE_MOVABLE` 2); vmlab's `Mt` follows
/// the later kernels' numbering, movable before reclaimable. `free_pcppages_bulk` walks these.
const PCP_ROUND_ROBIN: [usize; 3] = [Mt::Unmovable as usize, Mt::Reclaimable as usize, Mt::Movable as usize];

impl Kernel {
    pub fn int_sqrt(x: u64) -> u64 {
        (x as f64).sqrt() as u64
    }

    /// `init_per_zone_wmark_min` + `setup_per_zone_wmarks` + `setup_per_zone_lowmem_reserve`
    /// for the profile's watermark rule.
    pub fn setup_watermarks(&mut self) {
        let t = &self.profile.tunables;
        let lowmem_pages: u64 = self
            .zones
            .iter()
            .filter(|z| z.kind != ZoneType::HighMem && z.kind != ZoneType::Movable)
            .map(|z| z.wmark_pages())
            .sum();
        let min_free_kbytes = if t.min_free_kbytes > 0 {
            t.min_free_kbytes
        } else {
            Kernel::int_sqrt(lowmem_pages * 4 * 16).clamp(128, t.min_free_kbytes_max)
        };
        self.min_free_kbytes = min_free_kbytes;
        let pages_min = min_free_kbytes / 4;
        let wsf = t.watermark_scale_factor;
        for z in self.zones.iter_mut() {
            match self.profile.wmark {
                WmarkRule::Linux24 => {
                    // zone_balance_ratio = { 32, 128, 128 } (DMA's 32 since 2.4.0-test5): ZONE_DMA
                    // keeps four times the reserve per page of the bigger zones.
                    let ratio = if z.kind == ZoneType::Dma { 32 } else { 128 };
                    let mask = (z.present / ratio).clamp(20, 255);
                    z.wmark = [mask, 2 * mask, 3 * mask];
                }
                WmarkRule::Linux2636 | WmarkRule::Linux68 => {
                    let tmp = (pages_min * z.wmark_pages()).checked_div(lowmem_pages).unwrap_or(0);
                    let min = if z.kind == ZoneType::HighMem { (z.wmark_pages() / 1024).clamp(32, 128) } else { tmp };
                    if self.profile.wmark == WmarkRule::Linux2636 {
                        z.wmark = [min, min + tmp / 4, min + tmp / 2];
                    } else {
                        let delta = (tmp / 4).max(z.wmark_pages() * wsf / 10000);
                        z.wmark = [min, min + delta, min + 2 * delta];
                    }
                }
            }
        }
        // lowmem_reserve[j] for zone i: pages of zones i+1..=j divided by ratio[i].
        let nz = self.zones.len();
        for i in 0..nz {
            let mut res = vec![0u64; 5];
            let node = self.zones[i].node;
            let kind_i = self.zones[i].kind as usize;
            let ratio = self.profile.tunables.lowmem_reserve_ratio[kind_i.min(3)];
            let mut sum = 0;
            for (j, r) in res.iter_mut().enumerate().skip(kind_i + 1) {
                if let Some(zj) = self.zones.iter().find(|z| z.node == node && z.kind as usize == j) {
                    sum += zj.wmark_pages();
                }
                *r = sum.checked_div(ratio).unwrap_or(0);
            }
            self.zones[i].lowmem_reserve = res;
        }
        if self.profile.migrate_reserve {
            for zid in 0..nz {
                self.setup_zone_migrate_reserve(zid);
            }
        }
    }

    /// `__zone_watermark_ok`: may an allocation of `order` proceed from zone `zid` leaving `mark`
    /// pages, for an allocation whose highest usable zone is `classzone`?
    pub fn zone_watermark_ok(
        &self,
        zid: usize,
        order: u32,
        mark: u64,
        classzone: usize,
        harder: bool,
        high: bool,
    ) -> bool {
        let mut min = mark as i64;
        if high {
            min -= min / 2;
        }
        if harder {
            min -= min / 4;
        }
        self.zone_watermark_ok_free(zid, order, min, classzone, self.zones[zid].free_pages as i64)
    }

    /// The test itself, against `min` with the free page count given, as the kernel's
    /// `zone_watermark_ok_safe` passes a drift-corrected one; observers ask what-ifs with it.
    #[inline]
    pub fn zone_watermark_ok_free(
        &self,
        zid: usize,
        order: u32,
        mut min: i64,
        classzone: usize,
        free_pages: i64,
    ) -> bool {
        let z = &self.zones[zid];
        let reserve = z.lowmem_reserve.get(classzone).copied().unwrap_or(0) as i64;
        match self.profile.high_order_check {
            HighOrderCheck::SubtractLowerOrders => {
                // 2.6.36: free_pages -= (1 << order) - 1; 2.6.37+ subtracts (1 << order) + 1.
                let bias = if self.profile.split26.wmark_off_by_two { 1 } else { -1 };
                let mut free = free_pages - (1i64 << order) - bias;
                if free <= min + reserve {
                    return false;
                }
                for o in 0..order as usize {
                    free -= (z.nr_free[o] << o) as i64;
                    min >>= 1;
                    if free <= min {
                        return false;
                    }
                }
                true
            }
            HighOrderCheck::AnyBlock => {
                let free = free_pages - ((1i64 << order) - 1);
                if free <= min + reserve {
                    return false;
                }
                if order == 0 {
                    return true;
                }
                (order as usize..MAX_ORDER).any(|o| z.nr_free[o] > 0)
            }
        }
    }

    /// Zones an allocation may use, preferred first: the local node's zones from the highest
    /// allowed down, then the other nodes' (the zonelist).
    pub fn zonelist(&self, node: usize, gfp: Gfp) -> ([usize; 32], usize) {
        let mut out = [0usize; 32];
        let mut n = 0;
        let nn = self.nodes.len();
        for k in 0..nn {
            let nid = (node + k) % nn;
            for &zid in self.nodes[nid].zones.iter().rev() {
                if self.zones[zid].kind <= gfp.highest && self.zones[zid].managed > 0 && n < 32 {
                    out[n] = zid;
                    n += 1;
                }
            }
        }
        (out, n)
    }

    /// The pageblock of frame `pfn` of zone `zid`, numbered on the memory map
    /// (`pfn_to_bitidx`: `pfn >> pageblock_order`).
    #[inline(always)]
    pub fn pageblock_of(&self, zid: usize, pfn: Pfn) -> usize {
        (self.zones[zid].phys(pfn) >> PAGEBLOCK_ORDER) as usize
    }

    /// The index buddies pair on (`page_idx`): 2.6.1x on, the memory map's pfn
    /// (`__free_one_page`'s `page_to_pfn(page) & ((1 << MAX_ORDER) - 1)`, 6.x
    /// `__find_buddy_pfn`); in 2.4 the page's offset in its zone (`__free_pages_ok`'s
    /// `page - zone->zone_mem_map`), which is the same wherever the zone starts on a
    /// MAX_ORDER-aligned pfn, as 2.4's `free_area_init_core` demands ("BUG: wrong zone
    /// alignment, it will crash").
    #[inline(always)]
    pub(crate) fn buddy_idx(&self, zid: usize, pfn: Pfn) -> u32 {
        let z = &self.zones[zid];
        let base = if self.profile.buddy_zone_relative { 0 } else { z.phys_start_pfn };
        pfn - z.start_pfn + base
    }

    /// Take a block of `order` from zone `zid`'s free lists: `__rmqueue_smallest` on the wanted
    /// migrate type, else `__rmqueue_fallback`.
    pub(crate) fn rmqueue(&mut self, zid: usize, order: u32, mt: Mt) -> Option<Pfn> {
        if let Some(pfn) = self.rmqueue_smallest(zid, order, mt, mt as usize) {
            return Some(pfn);
        }
        let got = self.rmqueue_fallback(zid, order, mt as usize);
        if got.is_some() || !self.profile.migrate_reserve {
            return got;
        }
        // __rmqueue: the reserve rather than fail.
        self.rmqueue_smallest(zid, order, mt, MIGRATE_RESERVE)
    }

    /// `__rmqueue_smallest`: the smallest free block of at least `order` on the `list` lists,
    /// split down to `order` (`mt` is the request's type, for the tracepoint).
    fn rmqueue_smallest(&mut self, zid: usize, order: u32, mt: Mt, list: usize) -> Option<Pfn> {
        for o in order as usize..MAX_ORDER {
            if let Some(pfn) = self.zones[zid].free_area[o][list].pop_head(&mut self.fr) {
                self.trace(Tracepoint::MmPageAllocZoneLocked {
                    zone: zid,
                    pfn,
                    block_order: o as u32,
                    order,
                    migratetype: mt,
                });
                self.take_free_block(zid, pfn, order, o, list);
                return Some(pfn);
            }
        }
        None
    }

    /// `setup_zone_migrate_reserve` (2.6.3x, run with the watermarks): the first pageblocks of
    /// each zone, as many as cover its MIN watermark and at most two, become MIGRATE_RESERVE,
    /// their free pages moved to the reserve lists; a block whose first page is reserved (the
    /// boot memmap) is skipped. Reserve blocks beyond the count go back to movable.
    fn setup_zone_migrate_reserve(&mut self, zid: usize) {
        let nr = 1u32 << PAGEBLOCK_ORDER;
        let z = &self.zones[zid];
        let mut reserve = (z.wmark[WMARK_MIN].div_ceil(nr as u64)).min(2);
        let (start, end) = (z.start_pfn, z.end_pfn);
        // Block starts on the memory map's grid, the first one being the zone's own start.
        let mut f = start;
        while f < end {
            let next = f + (nr - self.zones[zid].phys(f) % nr);
            if self.fr.has(f, pg::RESERVED) {
                f = next;
                continue;
            }
            let b = self.pageblock_of(zid, f);
            let mt = self.pageblock_mt[b] as usize;
            if reserve > 0 && mt == MIGRATE_RESERVE {
                reserve -= 1;
            } else if reserve > 0 && mt == Mt::Movable as usize {
                self.pageblock_mt[b] = MIGRATE_RESERVE as u8;
                self.move_freepages_block(zid, f, MIGRATE_RESERVE, None);
                reserve -= 1;
            } else if mt == MIGRATE_RESERVE {
                self.pageblock_mt[b] = Mt::Movable as u8;
                self.move_freepages_block(zid, f, Mt::Movable as usize, None);
            }
            f = next;
        }
    }

    /// `__rmqueue_fallback` (2.6.24–2.6.3x): take the LARGEST block of another migrate type, in
    /// the fallback order, so that one steal serves many later allocations. A block of at least
    /// half a pageblock (or any steal for a reclaimable allocation) moves every free page of its
    /// pageblock to the wanted type, and claims the pageblock when that was over half of it.
    fn rmqueue_fallback(&mut self, zid: usize, order: u32, pref: usize) -> Option<Pfn> {
        // Indices: Unmovable 0, Movable 1, Reclaimable 2 (`fallbacks[]`, RESERVE not modelled).
        const FALLBACKS: [[usize; 2]; 3] = [[2, 1], [2, 0], [0, 1]];
        // A labelled what-if (`whatif.rs`), no kernel's rule: no order-0 unmovable steal here.
        if order == 0
            && pref == Mt::Unmovable as usize
            && self.whatif.unmovable_o0_steal_refused == Some(self.zones[zid].kind)
        {
            return None;
        }
        for o in (order as usize..MAX_ORDER).rev() {
            for &alt in &FALLBACKS[pref] {
                let Some(pfn) = self.zones[zid].free_area[o][alt].pop_head(&mut self.fr) else { continue };
                let migratetype = [Mt::Unmovable, Mt::Movable, Mt::Reclaimable][pref];
                self.trace(Tracepoint::MmPageAllocZoneLocked {
                    zone: zid,
                    pfn,
                    block_order: o as u32,
                    order,
                    migratetype,
                });
                let mut use_mt = alt;
                if o as u32 >= PAGEBLOCK_ORDER / 2 || pref == Mt::Reclaimable as usize {
                    let moved = self.move_freepages_block(zid, pfn, pref, Some((pfn, o as u32)));
                    if moved >= 1 << (PAGEBLOCK_ORDER - 1) {
                        let b = self.pageblock_of(zid, pfn);
                        self.pageblock_mt[b] = pref as u8;
                    }
                    use_mt = pref;
                }
                self.trace(Tracepoint::MmPageAllocExtfrag {
                    zone: zid,
                    order,
                    fallback_order: o as u32,
                    start_mt: migratetype,
                    fallback_mt: [Mt::Unmovable, Mt::Movable, Mt::Reclaimable][alt],
                    stolen: use_mt == pref,
                });
                if o as u32 >= PAGEBLOCK_ORDER {
                    let first = self.pageblock_of(zid, pfn);
                    for b in first..(first + (1usize << (o as u32 - PAGEBLOCK_ORDER))).min(self.pageblock_mt.len()) {
                        self.pageblock_mt[b] = pref as u8;
                    }
                }
                self.take_free_block(zid, pfn, order, o, use_mt);
                return Some(pfn);
            }
        }
        None
    }

    /// `move_freepages_block`: put every free block of `pfn`'s pageblock on migrate type `mt`'s
    /// lists. `taken` (pfn, order) is already off its list but still counts, as the kernel moves
    /// it with the rest before `list_del`. Returns the pages moved: 0 for a pageblock that ends
    /// past the zone, which the kernel leaves alone (and so never claims).
    fn move_freepages_block(&mut self, zid: usize, pfn: Pfn, mt: usize, taken: Option<(Pfn, u32)>) -> u64 {
        let nr = 1u32 << PAGEBLOCK_ORDER;
        let z = &self.zones[zid];
        // The pageblock's bounds are the memory map's, clipped as the kernel clips them: a block
        // starting below the zone from `pfn` on, one ending past it not at all.
        let off = z.phys(pfn) & (nr - 1);
        let (zs, ze) = (z.start_pfn, z.end_pfn);
        let start = if pfn - zs >= off { pfn - off } else { pfn };
        let end = pfn + (nr - off);
        if end > ze {
            return 0;
        }
        let tail = self.profile.move_freepages_tail;
        let mut moved = 0;
        let mut p = start;
        while p < end {
            if let Some((_, o)) = taken.filter(|&(t, _)| t == p) {
                moved += 1u64 << o;
                p += 1 << o;
                continue;
            }
            if !self.fr.has(p, pg::BUDDY) {
                p += 1;
                continue;
            }
            let o = (self.fr.aux[p as usize] & 0xf) as usize;
            let old = (self.fr.aux[p as usize] >> 4) as usize;
            // `move_freepages`: list_del + list_add for every free block, those already on
            // `mt`'s lists included — the whole pageblock comes next in `mt`'s lists.
            let z = &mut self.zones[zid];
            z.free_area[o][old].remove(&mut self.fr, p);
            if tail {
                z.free_area[o][mt].push_tail(&mut self.fr, p);
            } else {
                z.free_area[o][mt].push_head(&mut self.fr, p);
            }
            self.fr.aux[p as usize] = o as u8 | ((mt as u8) << 4);
            moved += 1u64 << o;
            p += 1 << o;
        }
        moved
    }

    /// A free block of order `o` just left its list: account it, and `expand` it down to
    /// `order`, giving the upper halves back to migrate type `mt`'s lists.
    #[inline]
    fn take_free_block(&mut self, zid: usize, pfn: Pfn, order: u32, o: usize, mt: usize) {
        let fr = &mut self.fr;
        let z = &mut self.zones[zid];
        z.nr_free[o] -= 1;
        // del_page_from_free_list: the block is no longer the one reported.
        fr.clear(pfn, pg::BUDDY | pg::REPORTED);
        let mut cur = o;
        while cur > order as usize {
            cur -= 1;
            let buddy = pfn + (1 << cur);
            fr.set(buddy, pg::BUDDY);
            fr.aux[buddy as usize] = cur as u8 | ((mt as u8) << 4);
            z.free_area[cur][mt].push_head(fr, buddy);
            z.nr_free[cur] += 1;
        }
        z.free_pages -= 1 << order;
    }

    /// `free_one_page`: return a block to the buddy lists of its pageblock's migrate type.
    pub(crate) fn free_one_page(&mut self, zid: usize, pfn: Pfn, order: u32) {
        let mt = self.pageblock_mt[self.pageblock_of(zid, pfn)] as usize;
        self.free_one_page_mt(zid, pfn, order, mt);
    }

    /// `__free_one_page`: return a block to migrate type `mt`'s buddy lists, merging with free
    /// buddies (the merged block goes on `mt`'s lists whatever its buddies' were).
    pub(crate) fn free_one_page_mt(&mut self, zid: usize, pfn: Pfn, order: u32, mt: usize) {
        let mut order = order as usize;
        crate::vmscan::pages_freed(self, zid);
        let merge_tail = self.profile.buddy_merge_tail;
        // Buddies pair on `buddy_idx`; the zone's frames are `lo..hi` in that index.
        let lo = self.buddy_idx(zid, self.zones[zid].start_pfn);
        let fr = &mut self.fr;
        let z = &mut self.zones[zid];
        let (zs, hi) = (z.start_pfn, lo + (z.end_pfn - z.start_pfn));
        let frame = move |idx: u32| idx - lo + zs;
        let mut idx = pfn - zs + lo;
        z.free_pages += 1 << order;
        while order < MAX_ORDER - 1 {
            let bidx = idx ^ (1 << order);
            // page_is_buddy's zone check: a buddy outside the zone is never free in it.
            if bidx < lo || bidx + (1 << order) > hi {
                break;
            }
            let buddy = frame(bidx);
            if !fr.has(buddy, pg::BUDDY) || (fr.aux[buddy as usize] & 0xf) as usize != order {
                break;
            }
            // The free block remembers which migrate list it is on (aux bits 4..7).
            let bmt = (fr.aux[buddy as usize] >> 4) as usize;
            z.free_area[order][bmt].remove(fr, buddy);
            z.nr_free[order] -= 1;
            fr.clear(buddy, pg::BUDDY | pg::REPORTED);
            idx &= bidx;
            order += 1;
        }
        let pfn = frame(idx);
        fr.set(pfn, pg::BUDDY);
        fr.aux[pfn as usize] = order as u8 | ((mt as u8) << 4);
        // 2.6.35+: if the buddy of the block this one would merge into is free, more frees
        // there are likely soon; queue it at the tail so allocations take other blocks first.
        let mut to_tail = false;
        if merge_tail && order < MAX_ORDER - 2 {
            let combined = idx & !(1 << order);
            let hidx = combined ^ (1 << (order + 1));
            if hidx >= lo && hidx + (1 << (order + 1)) <= hi {
                let hb = frame(hidx);
                to_tail = fr.has(hb, pg::BUDDY) && (fr.aux[hb as usize] & 0xf) as usize == order + 1;
            }
        }
        if to_tail {
            z.free_area[order][mt].push_tail(fr, pfn);
        } else {
            z.free_area[order][mt].push_head(fr, pfn);
        }
        z.nr_free[order] += 1;
        self.page_reporting.notify_free(order, self.now);
    }

    /// The pcp list an order-0 page of migrate type `mt` uses.
    #[inline(always)]
    fn pcp_list(&self, mt: usize) -> usize {
        if self.profile.pcp_migratetype_lists {
            mt
        } else {
            0
        }
    }

    /// Allocate one order-0 page from the CPU's pcp list, refilling it in batches (`rmqueue_pcplist`;
    /// `rmqueue_bulk` puts stolen pages on the requester's list).
    /// A cold request refills the list the other way round and takes its tail, so it too gets
    /// the batch in the order `rmqueue_bulk` took it (2.6.36 `list_add_tail` + `list->prev`).
    fn rmqueue_pcp(&mut self, zid: usize, cpu: usize, mt: Mt, cold: bool) -> Option<Pfn> {
        let li = self.pcp_list(mt as usize);
        if self.zones[zid].pcp[cpu].lists[li].is_empty() {
            let batch = self.zones[zid].pcp[cpu].batch.max(1);
            for _ in 0..batch {
                match self.rmqueue(zid, 0, mt) {
                    Some(p) => {
                        self.fr.set(p, pg::PCP);
                        if self.profile.pcp_drain_recorded_mt {
                            // rmqueue_bulk's `set_page_private(page, migratetype)`.
                            self.fr.aux[p as usize] = (mt as u8) << 4;
                        }
                        let l = &mut self.zones[zid].pcp[cpu].lists[li];
                        if cold {
                            l.push_head(&mut self.fr, p);
                        } else {
                            l.push_tail(&mut self.fr, p);
                        }
                    }
                    None => break,
                }
            }
        }
        let fr = &mut self.fr;
        let l = &mut self.zones[zid].pcp[cpu].lists[li];
        let p = if cold { l.pop_tail(fr)? } else { l.pop_head(fr)? };
        fr.clear(p, pg::PCP);
        Some(p)
    }

    /// Try each zone of the zonelist against watermark `wm` (`get_page_from_freelist`).
    /// `harder`/`high`: ALLOC_HARDER / ALLOC_HIGH (the slow path's flags for atomic requests).
    fn get_page_from_freelist(
        &mut self,
        ctx: &mut Ctx,
        gfp: Gfp,
        order: u32,
        wm: Option<usize>,
        harder: bool,
        high: bool,
    ) -> Option<Pfn> {
        let node = ctx.node.min(self.zonelists.len() - 1);
        let hz = (gfp.highest as usize).min(4);
        let nz = self.zonelists[node][hz].len();
        let classzone = self.zonelists[node][hz].first().map(|&z| self.zones[z].kind as usize).unwrap_or(0);
        for i in 0..nz {
            let zid = self.zonelists[node][hz][i];
            if self.zones[zid].managed == 0 {
                continue;
            }
            if let Some(w) = wm {
                let mark = match w {
                    WMARK_MIN => self.zones[zid].min_wmark(),
                    WMARK_LOW => self.zones[zid].low_wmark(),
                    _ => self.zones[zid].high_wmark(),
                };
                if !self.zone_watermark_ok(zid, order, mark, classzone, harder, high) {
                    continue;
                }
            }
            let got = if order == 0 && (ctx.cpu as usize) < self.zones[zid].pcp.len() {
                self.rmqueue_pcp(zid, ctx.cpu as usize, gfp.mt, gfp.cold)
            } else {
                self.rmqueue(zid, order, gfp.mt)
            };
            if let Some(p) = got {
                self.trace_ctx(
                    ctx,
                    Tracepoint::MmPageAlloc {
                        zone: zid,
                        order,
                        migratetype: gfp.mt,
                        pfn: p,
                        gfp: crate::trace::GfpKind::of(&gfp),
                    },
                );
                let c = match self.zones[zid].kind {
                    ZoneType::Dma => Vm::PgallocDma,
                    ZoneType::Dma32 => Vm::PgallocDma32,
                    ZoneType::Normal => Vm::PgallocNormal,
                    ZoneType::HighMem => Vm::PgallocHigh,
                    ZoneType::Movable => Vm::PgallocMovable,
                };
                self.ev.add(c, 1 << order);
                return Some(p);
            }
        }
        None
    }

    /// `__alloc_pages`. A refusal (not a postponement) is noted in `ctx` for the fault handler,
    /// which in some eras kills the faulting task for it.
    pub fn alloc_pages(&mut self, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Result<Pfn, AllocFail> {
        let r = self.alloc_pages_nonote(ctx, gfp, order);
        if let Err(f) = r {
            ctx.alloc_refused = f == AllocFail::NoMemory;
        }
        r
    }

    /// `__alloc_pages`: the fast path at the LOW watermark, then the slow path.
    fn alloc_pages_nonote(&mut self, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Result<Pfn, AllocFail> {
        if let Some(r) = crate::vmscan::engine_alloc_pages(self, ctx, gfp, order) {
            return r;
        }
        self.charge(ctx, KFunc::AllocPages, self.cost.page_alloc);
        // The fast path is ALLOC_WMARK_LOW alone: __GFP_HIGH only lowers the mark in the slow path.
        if let Some(p) = self.get_page_from_freelist(ctx, gfp, order, Some(WMARK_LOW), false, false) {
            return Ok(p);
        }
        self.alloc_pages_slowpath(ctx, gfp, order)
    }

    fn alloc_pages_slowpath(&mut self, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Result<Pfn, AllocFail> {
        let (zl, n) = self.zonelist(ctx.node, gfp);
        let classzone = zl[..n].iter().map(|&z| self.zones[z].kind as usize).max().unwrap_or(0);
        let mut no_progress = 0;
        let mut attempts = 0;
        let entry_sleep = ctx.sleep_ns;
        let max_tries = 16;
        loop {
            let pass_start = ctx.clock();
            if !ctx.is_kswapd {
                if self.tracing {
                    self.trace_at = crate::trace::TraceAt { task: ctx.task, cpu: ctx.cpu, ns: ctx.clock() };
                    self.trace_gfp = crate::trace::GfpKind::of(&gfp);
                }
                crate::vmscan::wake_all_kswapd(self, &zl[..n], order, classzone);
            }
            if let Some(p) = self.get_page_from_freelist(ctx, gfp, order, Some(WMARK_MIN), gfp.atomic, gfp.atomic) {
                return Ok(p);
            }
            if ctx.in_reclaim {
                // PF_MEMALLOC: reclaim itself may dip into the reserves.
                if let Some(p) = self.get_page_from_freelist(ctx, gfp, order, None, true, true) {
                    return Ok(p);
                }
            }
            if !gfp.direct_reclaim || ctx.in_reclaim {
                return Err(AllocFail::NoMemory);
            }
            // __alloc_pages_direct_compact before direct reclaim (CONFIG_COMPACTION rows); 2.6.38
            // makes the first attempt asynchronous.
            if crate::vmscan::has_compaction(&self.profile) && order > 0 {
                let sync = !self.profile.split26.compaction_async || attempts > 0;
                if let Some(p) = crate::compaction::alloc_pages_direct_compact(self, ctx, gfp, order, sync) {
                    return Ok(p);
                }
            }
            attempts += 1;
            let reclaimed = crate::vmscan::try_to_free_pages(self, ctx, gfp, order, classzone);
            if let Some(p) = self.alloc_after_direct_reclaim(ctx, gfp, order, reclaimed) {
                return Ok(p);
            }
            if reclaimed == 0 && ctx.throttle_until > ctx.clock() {
                // The reclaim engine stopped in the middle of its work to reschedule or to wait
                // on a page under I/O (2.4 need_resched / wait_on_page); it resumes then.
                return Err(AllocFail::Throttled);
            }
            if reclaimed == 0 {
                no_progress += 1;
            } else {
                no_progress = 0;
            }
            if gfp.noretry {
                return Err(AllocFail::NoMemory);
            }
            if reclaimed == 0 && crate::vmscan::failed_reclaim_fails_alloc(self) {
                return self.alloc_above_high(ctx, gfp, order);
            }
            if ctx.sleep_ns > entry_sleep {
                // Reclaim blocked submitting writes to a full queue: the task sleeps now and
                // retries the allocation after.
                return Err(AllocFail::Throttled);
            }
            if reclaimed == 0 && self.g.writeback > 0 {
                // reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK): reclaim is waiting for pages under
                // writeback. Time must pass for that: the caller sleeps (woken as writeback
                // completes) and retries.
                let until = crate::vmscan::reclaim_throttle(self, ctx, ctx.node);
                ctx.throttle_until = until;
                return Err(AllocFail::Throttled);
            }
            if no_progress >= max_tries || (order > 3 && no_progress > 0) {
                // __alloc_pages_may_oom: one last try at HIGH, then the OOM killer.
                if let Some(p) = self.get_page_from_freelist(ctx, gfp, order, Some(WMARK_HIGH), false, false) {
                    return Ok(p);
                }
                if order > 3 {
                    return Err(AllocFail::NoMemory);
                }
                if crate::oom_kill::out_of_memory(self, ctx) {
                    if ctx.oom_victim {
                        return Err(AllocFail::OomKilled);
                    }
                    // The victim's memory comes back when it exits, which takes time this loop
                    // cannot let pass: the task backs off and retries the allocation after.
                    return Err(AllocFail::Throttled);
                }
                return Err(AllocFail::NoMemory);
            }
            // Reclaim claimed progress and the allocation still failed: the kernel goes round
            // again only after giving up the CPU — 2.6.26/2.6.36 `congestion_wait(BLK_RW_ASYNC,
            // HZ/50)` before `goto rebalance`, 2.6.38 `wait_iff_congested` (cond_resched when
            // nothing is congested), 6.x `cond_resched` in `should_reclaim_retry`. This loop
            // cannot let time pass. A pass that took no time at all (2.6's "don't OOM" progress,
            // claimed while a zone is still reclaimable but every page is under writeback, so
            // nothing was scanned) would go round for ever in one instant: the task waits
            // congestion_wait's HZ/50 instead (fuzz seed 19 input 843104). A pass that took CPU
            // backs off once it has spent the quantum, as cond_resched would let others run.
            // (Passes without progress count towards the OOM killer above, 16 at most.)
            if reclaimed > 0 && ctx.clock() == pass_start {
                ctx.throttle_until = ctx.clock() + CONGESTION_WAIT_NS;
                return Err(AllocFail::Throttled);
            }
            if reclaimed > 0 && ctx.sys_ns + ctx.user_ns >= crate::sched::QUANTUM_NS {
                ctx.throttle_until = ctx.clock() + 1;
                return Err(AllocFail::Throttled);
            }
        }
    }

    /// The last try of an allocation whose reclaim gave up: only a zone above its high watermark
    /// may serve (2.4.23's `__alloc_pages` after a `balance_classzone` that freed nothing).
    pub(crate) fn alloc_above_high(&mut self, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Result<Pfn, AllocFail> {
        self.get_page_from_freelist(ctx, gfp, order, Some(WMARK_HIGH), false, false).ok_or(AllocFail::NoMemory)
    }

    /// The allocation attempt that follows direct reclaim (`__alloc_pages_direct_reclaim`). 2.6.36
    /// on: if it fails after reclaim made progress, the freed pages may be sitting on per-CPU
    /// lists, unmerged and uncounted by the watermarks: drain every CPU's lists and try once
    /// more (6.8 likewise).
    pub(crate) fn alloc_after_direct_reclaim(
        &mut self,
        ctx: &mut Ctx,
        gfp: Gfp,
        order: u32,
        reclaimed: u64,
    ) -> Option<Pfn> {
        if let Some(p) = self.get_page_from_freelist(ctx, gfp, order, Some(WMARK_MIN), false, false) {
            return Some(p);
        }
        if reclaimed == 0 || !self.profile.drain_pcp_after_reclaim {
            return None;
        }
        let parked: u64 = self.zones.iter().map(|z| z.pcp_pages()).sum();
        self.charge(ctx, KFunc::FreePagesBulk, self.cost.page_free * parked);
        self.drain_all_pages();
        self.get_page_from_freelist(ctx, gfp, order, Some(WMARK_MIN), false, false)
    }

    /// Free a block (`__free_pages`): order-0 pages go to the CPU's pcp list, drained in batches.
    pub fn free_pages(&mut self, ctx: &mut Ctx, pfn: Pfn, order: u32) {
        self.free_hot_cold(ctx, pfn, order, false);
    }

    /// Free an order-0 page cold (`free_hot_cold_page(page, 1)`): it goes to the tail of the pcp
    /// list, so it is the next one drained to the buddy lists and the last one reused from pcp.
    /// Reclaim frees this way in 2.6.2x–3.x (`pagevec_init(&freed_pvec, 1)` in shrink_page_list).
    pub fn free_cold_page(&mut self, ctx: &mut Ctx, pfn: Pfn) {
        self.free_hot_cold(ctx, pfn, 0, true);
    }

    fn free_hot_cold(&mut self, ctx: &mut Ctx, pfn: Pfn, order: u32, cold: bool) {
        self.trace_ctx(ctx, Tracepoint::MmPageFree { pfn, order, cold });
        self.charge(ctx, KFunc::FreePages, self.cost.page_free);
        self.ev.add(Vm::Pgfree, 1 << order);
        let zid = self.zone_of(pfn);
        debug_assert!(
            self.fr.flags[pfn as usize] & (pg::LRU | pg::BUDDY | pg::PCP) == 0
                && self.fr.lru_list(pfn) != crate::mmzone::LRU_PVEC,
            "freeing page {pfn} in use: {:#x}",
            self.fr.flags[pfn as usize]
        );
        let i = pfn as usize;
        // Everything but PG_reserved cleared (and the hypervisor's discard, which only a touch
        // undoes), and on no LRU list.
        let flags =
            (self.fr.flags[i] & (pg::RESERVED | pg::DISCARDED)) | ((crate::mmzone::LRU_NONE as u32) << pg::LRU_SHIFT);
        self.fr.flags[i] = flags;
        self.fr.mapping[i] = 0;
        self.fr.mapcount[i] = 0;
        if self.profile.memcg && self.fr.extra[i] != 0 {
            crate::memcontrol::uncharge(self, pfn);
        }
        self.fr.extra[i] = 0;
        let cpu = ctx.cpu as usize;
        // The labelled what-if `kswapd_frees_to_buddy` (whatif.rs): no kernel does this.
        let to_buddy = cold && ctx.is_kswapd && self.whatif.kswapd_frees_to_buddy == Some(self.zones[zid].kind);
        if order == 0 && cpu < self.zones[zid].pcp.len() && !to_buddy {
            // free_hot_cold_page: the page goes on the list of its pageblock's type, and
            // remembers that type (`set_page_private`) for the drain.
            let mt = self.pageblock_mt[self.pageblock_of(zid, pfn)];
            // Reserve pages wait on the movable list (recorded as reserve, they drain back there).
            let list_mt = if mt as usize == MIGRATE_RESERVE { Mt::Movable as usize } else { mt as usize };
            let li = self.pcp_list(list_mt);
            if self.profile.pcp_drain_recorded_mt {
                self.fr.aux[i] = mt << 4;
            }
            self.fr.flags[i] = flags | pg::PCP;
            let fr = &mut self.fr;
            let pcp = &mut self.zones[zid].pcp[cpu];
            if cold {
                pcp.lists[li].push_tail(fr, pfn);
            } else {
                pcp.lists[li].push_head(fr, pfn);
            }
            // `pcp->count >= pcp->high` (2.6.26, 2.6.36, 6.8): the list never keeps `high` pages.
            if pcp.count() >= pcp.high {
                let batch = pcp.batch;
                self.charge(ctx, KFunc::FreePagesBulk, self.cost.page_free * batch);
                self.free_pcppages_bulk(zid, cpu, batch);
            }
        } else {
            self.free_one_page(zid, pfn, order);
        }
    }

    /// `free_pcppages_bulk`: free `count` pages from the tails of the lists, round robin. Each
    /// list probed adds one to `batch_free` and each page freed takes one off, so a list gets one
    /// page per turn plus one for every empty list skipped on the way to it. The turn follows
    /// 2.6.3x's numbering of the lists (`PCP_ROUND_ROBIN`), starting after the first: the
    /// reclaimable list is probed first, then the movable one.
    fn free_pcppages_bulk(&mut self, zid: usize, cpu: usize, count: u64) {
        let (mut to_free, mut turn, mut batch_free) = (count, 0usize, 0u64);
        let mut li;
        while to_free > 0 && self.zones[zid].pcp[cpu].count() > 0 {
            loop {
                batch_free += 1;
                turn = (turn + 1) % 3;
                li = PCP_ROUND_ROBIN[turn];
                if !self.zones[zid].pcp[cpu].lists[li].is_empty() {
                    break;
                }
            }
            while to_free > 0 && batch_free > 0 {
                let Some(p) = self.zones[zid].pcp[cpu].lists[li].pop_tail(&mut self.fr) else { break };
                self.pcp_page_to_buddy(zid, p);
                to_free -= 1;
                batch_free -= 1;
            }
        }
    }

    /// A page leaves a pcp list for the buddy lists: 2.6.3x–6.x `free_pcppages_bulk` frees it to
    /// the migrate type recorded when it was freed (`page_private`, 6.x
    /// `get_pcppage_migratetype`), which its pageblock may have left since; 2.6.2x's
    /// `free_pages_bulk` to its pageblock's type at the drain.
    fn pcp_page_to_buddy(&mut self, zid: usize, p: Pfn) {
        self.fr.clear(p, pg::PCP);
        if self.profile.pcp_drain_recorded_mt {
            let mt = (self.fr.aux[p as usize] >> 4) as usize;
            self.free_one_page_mt(zid, p, 0, mt);
        } else {
            self.free_one_page(zid, p, 0);
        }
    }

    /// `drain_all_pages`: give every pcp page back to the buddy lists.
    pub fn drain_all_pages(&mut self) {
        for zid in 0..self.zones.len() {
            for cpu in 0..self.zones[zid].pcp.len() {
                self.drain_zone_pages(zid, cpu);
            }
        }
    }

    /// `drain_pages(cpu)`: give one CPU's pcp pages back to the buddy lists.
    pub fn drain_cpu_pages(&mut self, cpu: usize) {
        for zid in 0..self.zones.len() {
            if cpu < self.zones[zid].pcp.len() {
                self.drain_zone_pages(zid, cpu);
            }
        }
    }

    /// `drain_pages`: one zone's per-CPU lists go back whole, by `free_pcppages_bulk` with
    /// `pcp->count` (2.6.36), so the lists are emptied in its round robin rather than one after
    /// another — which decides the list a pair split across two lists merges onto.
    fn drain_zone_pages(&mut self, zid: usize, cpu: usize) {
        let n = self.zones[zid].pcp[cpu].count();
        self.free_pcppages_bulk(zid, cpu, n);
    }

    /// `split_free_page` (2.6.35+, compaction's free scanner): take the free block headed by
    /// `pfn` off the buddy lists as `1 << order` single pages, obeying the LOW watermark as an
    /// allocation would; a block of at least half a pageblock makes its pageblocks movable.
    /// Returns the pages taken (0 when the watermark refuses).
    pub(crate) fn split_free_page(&mut self, zid: usize, pfn: Pfn) -> u32 {
        debug_assert!(self.fr.has(pfn, pg::BUDDY));
        let order = (self.fr.aux[pfn as usize] & 0xf) as u32;
        let mt = (self.fr.aux[pfn as usize] >> 4) as usize;
        let watermark = self.zones[zid].low_wmark() + (1u64 << order);
        if !self.zone_watermark_ok(zid, 0, watermark, 0, false, false) {
            return 0;
        }
        let z = &mut self.zones[zid];
        z.free_area[order as usize][mt].remove(&mut self.fr, pfn);
        z.nr_free[order as usize] -= 1;
        z.free_pages -= 1 << order;
        let none = (crate::mmzone::LRU_NONE as u32) << pg::LRU_SHIFT;
        for p in pfn..pfn + (1 << order) {
            self.fr.flags[p as usize] = none | (self.fr.flags[p as usize] & pg::DISCARDED);
            self.fr.aux[p as usize] = 0;
        }
        if order >= PAGEBLOCK_ORDER - 1 {
            let mut p = pfn;
            while p < pfn + (1 << order) - 1 {
                let b = self.pageblock_of(zid, p);
                self.pageblock_mt[b] = Mt::Movable as u8;
                p += 1 << PAGEBLOCK_ORDER;
            }
        }
        1 << order
    }

    /// The allocation attempt after direct compaction (the slow path's flags: the MIN mark).
    pub(crate) fn alloc_after_compaction(&mut self, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Option<Pfn> {
        self.get_page_from_freelist(ctx, gfp, order, Some(WMARK_MIN), gfp.atomic, gfp.atomic)
    }

    /// Whether a frame of zone `zid` is free: on a per-CPU list, or anywhere inside a free buddy
    /// block (only a block's first frame carries PG_buddy, as in the kernel; the others are
    /// found through the head their block aligns to). For censuses, not for the allocator.
    pub fn page_is_free(&self, zid: usize, pfn: Pfn) -> bool {
        if self.fr.has(pfn, pg::PCP) {
            return true;
        }
        let idx = self.buddy_idx(zid, pfn);
        (0..MAX_ORDER).any(|o| {
            let head = pfn - (idx & ((1u32 << o) - 1));
            self.zones[zid].spans(head)
                && self.fr.has(head, pg::BUDDY)
                && (self.fr.aux[head as usize] & 0xf) as usize == o
        })
    }

    /// Free pages of a zone as MemFree counts them (buddy + pcp).
    pub fn zone_free(&self, zid: usize) -> u64 {
        self.zones[zid].free_pages + self.zones[zid].pcp_pages()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::profiles::Profile;

    /// The labelled what-if `unmovable_o0_steal_refused` (no kernel's rule) does what it says:
    /// with DMA32's unmovable lists empty and one free page on its movable lists, an order-0
    /// unmovable take steals it under the kernel's rule and gets nothing under the what-if,
    /// while a reclaimable take still steals it.
    #[test]
    fn the_steal_refusal_what_if_leaves_an_order_0_unmovable_take_without_a_page() {
        let take = |whatif: crate::whatif::WhatIf, mt: Mt| {
            let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 8192)]);
            let p = crate::profiles::all()
                .into_iter()
                .find(|p| p.pcp_migratetype_lists && p.migrate_reserve)
                .expect("a row grouping pages by mobility");
            let mut k = Kernel::new(p, cfg, 1).unwrap();
            k.whatif = whatif;
            let mut held = Vec::new();
            while let Some(p) = k.rmqueue(1, 0, Mt::Movable) {
                held.push(p);
            }
            let back = held
                .into_iter()
                .find(|&p| k.pageblock_mt[k.pageblock_of(1, p)] == Mt::Movable as u8)
                .expect("a page of a movable pageblock");
            k.free_one_page(1, back, 0);
            (back, k.rmqueue(1, 0, mt))
        };
        let refuse = crate::whatif::WhatIf { unmovable_o0_steal_refused: Some(ZoneType::Dma32), ..Default::default() };
        let (back, got) = take(Default::default(), Mt::Unmovable);
        assert_eq!(got, Some(back), "the kernel's rule: the unmovable take steals the movable page");
        assert_eq!(take(refuse, Mt::Unmovable).1, None, "the what-if: no steal, no page");
        let (back, got) = take(refuse, Mt::Reclaimable);
        assert_eq!(got, Some(back), "a reclaimable take still steals");
    }

    /// The labelled what-if `kswapd_frees_to_buddy` (no kernel's rule): a page kswapd frees cold
    /// in a zone of the named type goes to the buddy lists, not to the tail of kswapd's per-CPU
    /// list; other zones, hot frees and other tasks' cold frees keep the per-CPU list.
    #[test]
    fn the_buddy_free_what_if_keeps_kswapds_cold_frees_off_its_per_cpu_list() {
        let free = |whatif: crate::whatif::WhatIf, zid: usize, kswapd: bool, cold: bool| {
            let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 8192)]);
            let p = crate::profiles::all()
                .into_iter()
                .find(|p| p.pcp_lists && p.reclaim_frees_cold)
                .expect("a row with per-CPU lists and cold reclaim frees");
            let mut k = Kernel::new(p, cfg, 1).unwrap();
            k.whatif = whatif;
            let p = k.rmqueue(zid, 0, Mt::Movable).expect("a page");
            let mut ctx = Ctx { is_kswapd: kswapd, ..Default::default() };
            k.free_hot_cold(&mut ctx, p, 0, cold);
            (k.fr.has(p, pg::PCP), k.zones[zid].pcp[0].count())
        };
        let on = crate::whatif::WhatIf { kswapd_frees_to_buddy: Some(ZoneType::Dma32), ..Default::default() };
        assert_eq!(free(Default::default(), 1, true, true), (true, 1), "the kernels: kswapd's cold free to its list");
        assert_eq!(free(on, 1, true, true), (false, 0), "the what-if: to the buddy lists");
        assert_eq!(free(on, 0, true, true), (true, 1), "another zone type keeps the list");
        assert_eq!(free(on, 1, false, true), (true, 1), "a direct reclaimer's cold free keeps the list");
        assert_eq!(free(on, 1, true, false), (true, 1), "a hot free keeps the list");
    }

    /// A one-zone kernel whose every free page sits on CPU 1's per-CPU list: the buddy lists
    /// are empty and the watermarks see no free memory.
    fn parked(drain: bool) -> Kernel {
        let cfg = MachineConfig::of_zones("x86_64", 2, &[(ZoneType::Dma, 4096)]);
        let p = Profile { drain_pcp_after_reclaim: drain, ..crate::profiles::default_row() };
        let mut k = Kernel::new(p, cfg, 1).unwrap();
        let mut ctx = Ctx { cpu: 0, in_reclaim: true, ..Default::default() };
        let mut held = Vec::new();
        while let Ok(p) = k.alloc_pages(&mut ctx, Gfp::kernel(), 0) {
            held.push(p);
        }
        k.zones[0].pcp[1].high = u64::MAX;
        ctx.cpu = 1;
        for p in held {
            k.free_pages(&mut ctx, p, 0);
        }
        assert!(k.zones[0].free_pages < k.zones[0].min_wmark(), "{}", k.zones[0].free_pages);
        k
    }

    #[test]
    fn a_failed_allocation_after_reclaim_drains_the_per_cpu_lists_and_retries() {
        let mut k = parked(true);
        let mut ctx = Ctx { cpu: 0, ..Default::default() };
        assert!(k.alloc_after_direct_reclaim(&mut ctx, Gfp::kernel(), 1, 0).is_none(), "no progress, no drain");
        assert!(k.alloc_after_direct_reclaim(&mut ctx, Gfp::kernel(), 1, 32).is_some());
        assert_eq!(k.zones[0].pcp_pages(), 0);
        let mut k = parked(false);
        assert!(k.alloc_after_direct_reclaim(&mut ctx, Gfp::kernel(), 1, 32).is_none());
        assert!(k.zones[0].pcp_pages() > 0);
    }

    /// Every page of zone 1 taken, then `unmov` / `recl` / `mov` pages parked on CPU 0's
    /// per-CPU lists of those types (`pcp_migratetype_lists`), each recorded with its list's
    /// type (`set_page_private`, `pcp_drain_recorded_mt`).
    fn parked_on_lists(unmov: &[Pfn], recl: &[Pfn], mov: &[Pfn]) -> Kernel {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 8192)]);
        let p = Profile { pcp_migratetype_lists: true, pcp_drain_recorded_mt: true, ..crate::profiles::default_row() };
        let mut k = Kernel::new(p, cfg, 1).unwrap();
        while k.rmqueue(1, 0, Mt::Movable).is_some() {}
        for (pages, mt) in [(unmov, Mt::Unmovable), (recl, Mt::Reclaimable), (mov, Mt::Movable)] {
            for &p in pages {
                k.fr.set(p, pg::PCP);
                k.fr.aux[p as usize] = (mt as u8) << 4;
                k.zones[1].pcp[0].lists[mt as usize].push_tail(&mut k.fr, p);
            }
        }
        k
    }

    /// 2.6.36 `free_pcppages_bulk` turns through the lists by the kernel's numbers, starting
    /// after 0: RECLAIMABLE (1) is probed first and gives a page, then MOVABLE (2) one, then
    /// UNMOVABLE is empty (batch_free 1), RECLAIMABLE is probed again (2) and gives the third.
    #[test]
    fn a_bulk_free_probes_the_reclaimable_list_before_the_movable_one() {
        let s = k_start();
        let recl: Vec<Pfn> = (s..s + 4).collect();
        let mov: Vec<Pfn> = (s + 8..s + 12).collect();
        let mut k = parked_on_lists(&[], &recl, &mov);
        k.free_pcppages_bulk(1, 0, 3);
        let l = &k.zones[1].pcp[0].lists;
        assert_eq!((l[Mt::Reclaimable as usize].len, l[Mt::Movable as usize].len), (2, 3));
    }

    /// `drain_pages` frees the lists by `free_pcppages_bulk` with `pcp->count`: the movable
    /// list (probed second, after the empty reclaimable one) gives its page first, so its
    /// unmovable buddy, freed next, merges the pair onto the unmovable lists. Draining the lists
    /// one after another, unmovable first, put the pair on the movable lists.
    #[test]
    fn a_drain_turns_through_the_lists_so_a_split_pair_merges_onto_the_later_freed_type() {
        let s = k_start();
        let mut k = parked_on_lists(&[s], &[], &[s + 1]);
        k.drain_cpu_pages(0);
        assert_eq!(k.zones[1].pcp[0].count(), 0);
        assert_eq!(k.zones[1].free_area[1][Mt::Unmovable as usize].len, 1, "the pair on the unmovable lists");
        assert_eq!(k.zones[1].free_area[1][Mt::Movable as usize].len, 0);
    }

    /// The first frame of zone 1 (of the tests' two-zone machine) on an order-3 boundary.
    fn k_start() -> Pfn {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 8192)]);
        let k = Kernel::new(crate::profiles::default_row(), cfg, 1).unwrap();
        let z = &k.zones[1];
        (z.start_pfn..z.end_pfn).find(|&f| z.phys(f).is_multiple_of(8)).unwrap()
    }

    /// 2.6.36 `move_freepages` takes every free block of the pageblock off its list and puts it
    /// at the head of the new type's list (`list_del` + `list_add`), also the blocks that were
    /// already on that type's lists — so after a steal, the stolen pageblock's blocks are the
    /// next ones `__rmqueue_smallest` hands out, ahead of blocks of the type elsewhere.
    #[test]
    fn a_steal_puts_every_free_block_of_the_pageblock_at_the_head_of_the_new_type() {
        let (x, y, first, second) = steal_then_take_two(false);
        assert_eq!(first, Some(x), "X was moved to the head, ahead of Y");
        assert_eq!(second, Some(y));
    }

    /// Since 5.10 (`move_to_free_list` with `list_move_tail`) the moved blocks go behind those
    /// already on the new type's lists: the same steal hands out Y first.
    #[test]
    fn since_5_10_a_steal_puts_the_pageblock_at_the_tail_of_the_new_type() {
        let (x, y, first, second) = steal_then_take_two(true);
        assert_eq!(first, Some(y), "Y stays ahead of the moved X");
        assert_eq!(second, Some(x));
    }

    /// X (unmovable, inside movable pageblock A) and Y (unmovable, elsewhere) free; an order-1
    /// unmovable request steals A; then the next two unmovable single pages. `tail`: the
    /// moved blocks go to the tail of the new type's lists (`move_freepages_tail`).
    fn steal_then_take_two(tail: bool) -> (Pfn, Pfn, Option<Pfn>, Option<Pfn>) {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 8192)]);
        let p = Profile { move_freepages_tail: tail, ..crate::profiles::default_row() };
        let mut k = Kernel::new(p, cfg, 1).unwrap();
        let z = 1;
        while k.rmqueue(z, 0, Mt::Movable).is_some() {}
        let nr = 1u32 << PAGEBLOCK_ORDER;
        let (start, end) = (k.zones[z].start_pfn, k.zones[z].end_pfn);
        let a = (start..end)
            .find(|&f| {
                k.zones[z].phys(f).is_multiple_of(nr) && f + 2 * nr <= end && {
                    let (b0, b1) = (k.pageblock_of(z, f), k.pageblock_of(z, f + nr));
                    k.pageblock_mt[b0] == Mt::Movable as u8 && k.pageblock_mt[b1] == Mt::Movable as u8
                }
            })
            .expect("two movable pageblocks");
        let (x, y) = (a, a + nr);
        // X: an unmovable single page inside movable pageblock A (a pcp drain of a page an
        // unmovable refill took); half of A free and movable; then Y, unmovable, elsewhere.
        k.free_one_page_mt(z, x, 0, Mt::Unmovable as usize);
        k.free_one_page_mt(z, a + nr / 2, PAGEBLOCK_ORDER - 1, Mt::Movable as usize);
        k.free_one_page_mt(z, y, 0, Mt::Unmovable as usize);
        // An order-1 unmovable request finds no unmovable block that large: it steals A's
        // order-8 block, and with it A's free pages, X among them.
        let got = k.rmqueue(z, 1, Mt::Unmovable).expect("a fallback");
        assert_eq!(k.pageblock_of(z, got), k.pageblock_of(z, a));
        assert_eq!(k.pageblock_mt[k.pageblock_of(z, a)], Mt::Unmovable as u8, "A claimed");
        let first = k.rmqueue(z, 0, Mt::Unmovable);
        (x, y, first, k.rmqueue(z, 0, Mt::Unmovable))
    }

    /// Only a free block's first frame is PG_buddy: the census must find the other seven frames
    /// of a free order-3 block through their head, and a frame handed out is not free.
    #[test]
    fn every_frame_of_a_free_block_counts_as_free() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 8192)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).unwrap();
        let z = 1;
        while k.rmqueue(z, 0, Mt::Movable).is_some() {}
        let (start, end) = (k.zones[z].start_pfn, k.zones[z].end_pfn);
        let b = (start..end).find(|&f| k.zones[z].phys(f).is_multiple_of(8)).unwrap();
        assert!((b..b + 8).all(|p| !k.page_is_free(z, p)), "all taken");
        k.free_one_page_mt(z, b, 3, Mt::Movable as usize);
        assert!((b..b + 8).all(|p| k.page_is_free(z, p)), "the whole order-3 block is free");
        assert!(!k.fr.has(b + 5, pg::BUDDY), "a tail frame carries no flag of its own");
        assert_eq!(k.rmqueue(z, 0, Mt::Movable), Some(b));
        assert!(!k.page_is_free(z, b) && (b + 1..b + 8).all(|p| k.page_is_free(z, p)), "split: the rest stay free");
        assert!(!k.page_is_free(z, b + 8), "the next block is still taken");
    }

    /// 2.6.36 `move_freepages_block` returns 0 for a pageblock that runs past the zone's end
    /// ("Do not cross zone boundaries"), so `__rmqueue_fallback` never claims the zone's last,
    /// partial pageblock, however large the block it takes there.
    #[test]
    fn a_steal_in_the_zones_partial_last_pageblock_does_not_claim_it() {
        // DMA32 of 8,492 pages: its last pageblock holds 300 of 512.
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 8492)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).unwrap();
        let z = 1;
        while k.rmqueue(z, 0, Mt::Movable).is_some() {}
        let nr = 1u32 << PAGEBLOCK_ORDER;
        let end = k.zones[z].end_pfn;
        let last = (k.zones[z].start_pfn..end).rev().find(|&f| k.zones[z].phys(f).is_multiple_of(nr)).unwrap();
        assert!(last + nr > end && last + nr / 2 <= end, "a partial last pageblock with room for an order-8 block");
        let b = k.pageblock_of(z, last);
        assert_eq!(k.pageblock_mt[b], Mt::Movable as u8);
        k.free_one_page_mt(z, last, PAGEBLOCK_ORDER - 1, Mt::Movable as usize);
        assert_eq!(k.rmqueue(z, 0, Mt::Unmovable), Some(last), "the fallback takes the order-8 block");
        assert_eq!(k.pageblock_mt[b], Mt::Movable as u8, "a pageblock past the zone's end is not claimed");
    }
}
