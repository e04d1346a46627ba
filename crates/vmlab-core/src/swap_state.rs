//! Swap areas, slots and the swap cache (`mm/swapfile.c`, `mm/swap_state.c`). A slot's count is
//! the number of PTEs (or shm index entries) holding it; the swap cache links slot ↔ page while
//! the page is both in memory and on swap.

use rustc_hash::FxHashMap;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmap::pte;
use crate::profiles::SwapReadahead;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

pub struct SwapInfo {
    pub disk: usize,
    /// Byte offset of the swap area on its disk.
    pub base: u64,
    pub nslots: u32,
    /// References per slot (PTEs + shm entries), not counting the swap cache.
    pub count: Vec<u16>,
    /// Slot → swap-cache page (NIL when not cached).
    pub cache: Vec<Pfn>,
    /// Workingset shadow of an evicted anon page, per slot.
    pub shadow: Vec<u32>,
    /// The memory cgroup each slot is charged to (`swap_cgroup`).
    pub memcg: Vec<u8>,
    pub pfn_slot: FxHashMap<Pfn, u32>,
    pub inuse: u32,
    /// `SWP_WRITEOK`: cleared by `swapoff`, which also takes the area's pages out of
    /// `nr_swap_pages` and `total_swap_pages` before `try_to_unuse` starts, so reclaim stops
    /// giving anon pages slots at once (`crate::swapfile`).
    pub writeok: bool,
    /// `try_to_unuse`'s map from a slot to what holds it, sorted by slot: the kernel walks every
    /// mm's page tables (`unuse_mm`) and shmem's index (`shmem_unuse`) for each entry, which
    /// vmlab does once, when the swapoff starts (`crate::swapfile::unuse_index`).
    pub(crate) unuse: Vec<crate::swapfile::Holder>,
    cursor: u32,
    /// `swap_cluster_readahead`'s history (globals in the kernel): readahead hits since the
    /// last window (`swapin_readahead_hits`), the slot of the last fault without hits
    /// (`prev_offset`) and the last window (`last_readahead_pages`).
    ra_hits: u32,
    ra_prev: u32,
    ra_last: u32,
}

impl SwapInfo {
    pub fn new(disk: usize, base: u64, bytes: u64) -> SwapInfo {
        let n = (bytes / 4096).min(u32::MAX as u64 - 2) as u32;
        SwapInfo {
            disk,
            base,
            nslots: n,
            count: vec![0; n as usize],
            cache: vec![NIL; n as usize],
            shadow: vec![0; n as usize],
            memcg: vec![0; n as usize],
            pfn_slot: FxHashMap::default(),
            inuse: 0,
            writeok: true,
            unuse: Vec::new(),
            cursor: 0,
            ra_hits: 0,
            ra_prev: 0,
            ra_last: 0,
        }
    }
    pub(crate) fn slot_free(&self, s: u32) -> bool {
        self.count[s as usize] == 0 && self.cache[s as usize] == NIL
    }
    /// `get_swap_page`: next free slot after the cursor, so consecutive swap-outs are contiguous
    /// on disk (the cluster allocator's effect).
    fn alloc(&mut self) -> Option<u32> {
        if !self.writeok || self.inuse >= self.nslots {
            return None;
        }
        for k in 0..self.nslots {
            let s = (self.cursor + k) % self.nslots;
            if self.slot_free(s) {
                self.cursor = (s + 1) % self.nslots;
                self.inuse += 1;
                return Some(s);
            }
        }
        None
    }
    /// Release the slot if nothing holds it; returns the group it was charged to, to uncharge.
    fn maybe_release(&mut self, s: u32) -> u8 {
        if self.slot_free(s) {
            self.inuse -= 1;
            return std::mem::take(&mut self.memcg[s as usize]);
        }
        0
    }
    /// `nr_swap_pages`: none once swapoff has begun on the area.
    pub fn free_slots(&self) -> u32 {
        if self.writeok {
            self.nslots - self.inuse
        } else {
            0
        }
    }
}

pub fn page_swap_slot(k: &Kernel, p: Pfn) -> Option<u32> {
    k.swap.as_ref()?.pfn_slot.get(&p).copied()
}

/// `total_swap_pages`: what reclaim sees (0 while a swapoff empties the only area).
pub fn total_swap_pages(k: &Kernel) -> u64 {
    k.swap.as_ref().filter(|s| s.writeok).map(|s| s.nslots as u64).unwrap_or(0)
}

/// `si_swapinfo`: SwapTotal and SwapFree as /proc/meminfo shows them, in pages. An area being
/// swapped off counts its slots still in use in both (`nr_to_be_unused`).
pub fn si_swapinfo(k: &Kernel) -> (u64, u64) {
    match k.swap.as_ref() {
        Some(s) if !s.writeok => (s.inuse as u64, s.inuse as u64),
        _ => (total_swap_pages(k), free_swap_pages(k)),
    }
}

pub fn free_swap_pages(k: &Kernel) -> u64 {
    k.swap.as_ref().map(|s| s.free_slots() as u64).unwrap_or(0)
}

/// `add_to_swap`: give an anon (or shm) page a slot and put it in the swap cache, dirty.
pub fn add_to_swap(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
    k.charge(ctx, KFunc::AddToSwap, k.cost.lru_scan * 2);
    let Some(sw) = k.swap.as_mut() else { return false };
    let Some(s) = sw.alloc() else { return false };
    if k.memcg.active() {
        match crate::memcontrol::try_charge_swap(k, p) {
            Some(g) => k.swap.as_mut().expect("swap").memcg[s as usize] = g,
            None => {
                k.swap.as_mut().expect("swap").maybe_release(s);
                return false;
            }
        }
    }
    let sw = k.swap.as_mut().expect("swap");
    sw.cache[s as usize] = p;
    sw.pfn_slot.insert(p, s);
    k.fr.set(p, pg::SWAPCACHE);
    k.g.swapcache += 1;
    k.fr.set(p, pg::DIRTY);
    true
}

/// `swap_duplicate`: one more PTE holds the slot.
pub fn swap_duplicate(k: &mut Kernel, s: u32) {
    if let Some(sw) = k.swap.as_mut() {
        sw.count[s as usize] = sw.count[s as usize].saturating_add(1);
    }
}

/// `swap_free`: a PTE no longer holds the slot.
pub fn swap_free(k: &mut Kernel, _ctx: &mut Ctx, s: u32) {
    if let Some(sw) = k.swap.as_mut() {
        let c = &mut sw.count[s as usize];
        debug_assert!(*c > 0, "swap slot {s} freed twice");
        *c = c.saturating_sub(1);
        let g = sw.maybe_release(s);
        if g != 0 {
            crate::memcontrol::uncharge_swap(k, g);
        }
    }
}

/// `delete_from_swap_cache`.
pub fn delete_from_swap_cache(k: &mut Kernel, p: Pfn) {
    let Some(sw) = k.swap.as_mut() else { return };
    if let Some(s) = sw.pfn_slot.remove(&p) {
        sw.cache[s as usize] = NIL;
        let g = sw.maybe_release(s);
        k.fr.clear(p, pg::SWAPCACHE);
        k.g.swapcache -= 1;
        if g != 0 {
            crate::memcontrol::uncharge_swap(k, g);
        }
    }
}

/// The last mapping of an anonymous page went away: free it now unless I/O still holds it
/// (then reclaim frees it later, as an unmapped swap-cache page).
pub fn free_anon_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    if k.fr.has(p, pg::WRITEBACK) || k.fr.has(p, pg::LOCKED) {
        return;
    }
    if k.fr.has(p, pg::SWAPCACHE) {
        delete_from_swap_cache(k, p);
    }
    crate::vmscan::del_page_from_lru(k, p);
    release_anon_accounting(k, p);
    k.free_pages(ctx, p, 0);
}

pub fn release_anon_accounting(k: &mut Kernel, p: Pfn) {
    if k.fr.has(p, pg::MLOCKED) {
        k.fr.clear(p, pg::MLOCKED);
        k.g.mlock -= 1;
    }
    if k.fr.has(p, pg::DIRTY) {
        k.fr.clear(p, pg::DIRTY);
    }
    k.g.anon -= 1;
}

/// A reclaimer's block plug over its swap writes: 6.x `shrink_lruvec` runs its scan loop between
/// `blk_start_plug` and `blk_finish_plug` (seen in Johannes Weiner's "mm: vmscan: fix extreme
/// overreclaim and swap floods", linux-mm, Aug 2022; the stored 6.8 tree has no `mm/`), so the
/// one-page bios `__swap_writepage` submits back-merge on the task's plug list
/// (`blk_attempt_plug_merge`) into requests of consecutive slots, up to the queue's limits. The
/// plug goes to the scheduler at `blk_finish_plug`, or when a new request finds it holding
/// `BLK_MAX_REQUEST_COUNT` requests or a last one of `BLK_PLUG_FLUSH_SIZE` or more
/// (`blk_add_rq_to_plug`, block/blk-mq.c). Without the plug a fast device dispatches each
/// page as it comes and nothing waits in the scheduler to merge with.
#[derive(Debug, Default)]
pub struct SwapPlug {
    /// Between `blk_start_plug` and `blk_finish_plug`.
    pub on: bool,
    /// The plugged pages and their slots, in submission order.
    slots: Vec<u32>,
    pages: Vec<Pfn>,
    /// Requests on the plug list, and pages in the last one.
    requests: u32,
    last_len: u32,
    /// The most pages a plugged request may merge (the swap disk's limit, read at
    /// `blk_start_plug`).
    max_pages: u32,
    /// Reused for the requests of one run.
    rqs: Vec<crate::blk::PlugRq>,
}

/// `BLK_MAX_REQUEST_COUNT`.
const BLK_MAX_REQUEST_COUNT: u32 = 32;
/// `BLK_PLUG_FLUSH_SIZE` (128 KiB), in pages.
const BLK_PLUG_FLUSH_PAGES: u32 = 32;

/// `blk_start_plug`: a reclaimer's swap writes wait on its plug (see [`SwapPlug`]). False when a
/// plug is already on (the outer one owns it) or there is no swap.
pub fn blk_start_plug(k: &mut Kernel) -> bool {
    let Some(sw) = k.swap.as_ref() else { return false };
    if k.swap_plug.on {
        return false;
    }
    let max_pages = (k.disks[sw.disk].bio_max_bytes(0) / 4096).clamp(1, u32::MAX as u64) as u32;
    k.swap_plug.max_pages = max_pages;
    k.swap_plug.on = true;
    true
}

/// `blk_finish_plug`: the plugged writes go to the disk now.
pub fn blk_finish_plug(k: &mut Kernel, ctx: &mut Ctx) {
    flush_plug(k, ctx);
    k.swap_plug.on = false;
}

/// Global reclaim under a swap-in fault's plug: what is on the plug goes now and the plug is off
/// until [`plug_restore`]. True when there was a plug to set aside.
pub fn plug_set_aside(k: &mut Kernel, ctx: &mut Ctx) -> bool {
    if !k.swap_plug.on {
        return false;
    }
    flush_plug(k, ctx);
    k.swap_plug.on = false;
    true
}

pub fn plug_restore(k: &mut Kernel) {
    k.swap_plug.on = true;
}

fn plug_add(k: &mut Kernel, ctx: &mut Ctx, s: u32, p: Pfn) {
    let pl = &k.swap_plug;
    let merges = pl.slots.last().is_some_and(|&l| l.wrapping_add(1) == s) && pl.last_len < pl.max_pages;
    if !merges && pl.requests > 0 && (pl.requests >= BLK_MAX_REQUEST_COUNT || pl.last_len >= BLK_PLUG_FLUSH_PAGES) {
        flush_plug(k, ctx);
    }
    let pl = &mut k.swap_plug;
    if merges {
        pl.last_len += 1;
    } else {
        pl.requests += 1;
        pl.last_len = 1;
    }
    pl.slots.push(s);
    pl.pages.push(p);
}

/// `blk_mq_flush_plug_list`: each run of consecutive slots becomes the requests the queue's
/// limits allow (`RequestQueue::plug`), submitted at the task's clock.
fn flush_plug(k: &mut Kernel, ctx: &mut Ctx) {
    let mut pl = std::mem::take(&mut k.swap_plug);
    let (disk, base) = {
        let sw = k.swap.as_ref().expect("swap");
        (sw.disk, sw.base)
    };
    let mut latest = 0;
    let mut i = 0;
    let rwq = swap_rwq(k, ctx).0;
    k.disks[disk].set_wbt_rwq(rwq);
    while i < pl.slots.len() {
        let mut j = i + 1;
        while j < pl.slots.len() && pl.slots[j] == pl.slots[j - 1].wrapping_add(1) {
            j += 1;
        }
        let run = &pl.pages[i..j];
        if !k.disks[disk].plug(run, crate::blk::BioShape::PerPage, true, &mut pl.rqs) {
            // No request queue: one request per page, as unplugged.
            pl.rqs.clear();
            pl.rqs.extend((0..run.len()).map(|f| crate::blk::PlugRq { first: f, pages: 1, segs: 1 }));
        }
        for rq in &pl.rqs {
            let off = base + (pl.slots[i] as u64 + rq.first as u64) * 4096;
            let t = k.disks[disk].submit_segs(ctx.clock(), off, rq.pages as u64 * 4096, rq.segs, true);
            k.queue_io_done(t, disk, run[rq.first..rq.first + rq.pages].to_vec(), true);
            latest = latest.max(t);
        }
        i = j;
    }
    k.disks[disk].set_wbt_rwq(crate::blk_wbt::RWQ_BG);
    if !pl.slots.is_empty() {
        // The plug is 6.8's (blk_mq), whose disks have no sector throttle: the time backlog.
        crate::page_writeback::congestion_wait_on_submit(ctx, &k.disks[disk], latest);
    }
    pl.slots.clear();
    pl.pages.clear();
    pl.requests = 0;
    pl.last_len = 0;
    k.swap_plug = pl;
}

/// 6.8's writeback throttle on a swap write that would start a request (`blk_mq_submit_bio`:
/// a bio that merges into the plug's last request passes no `wbt_wait`). Its queue and limit
/// are `get_limit`'s (profile `wbt_swap_hiprio`), counted with the requests on the writer's own
/// plug, which hold their slots from allocation. The kernel's writer sleeps in `rq_qos_wait`
/// (its plug flushed by `io_schedule`), then writes the page and goes on with its batch in
/// order; vmlab cannot sleep inside reclaim, so — as for a full request queue — the plug is
/// flushed, the page is written now, and the reclaimer owes the sleep until the wakeup,
/// which it takes once its scan stops (`blocked`). Later requests of the batch over the limit
/// push the wakeup to their queue's later completions.
fn wbt_wait_swap(k: &mut Kernel, ctx: &mut Ctx, slot: u32) {
    let Some(disk) = k.swap.as_ref().map(|sw| sw.disk) else { return };
    let pl = &k.swap_plug;
    if pl.on && pl.slots.last().is_some_and(|&l| l.wrapping_add(1) == slot) && pl.last_len < pl.max_pages {
        return;
    }
    let plugged = if pl.on { pl.requests } else { 0 };
    let (rwq, hiprio) = swap_rwq(k, ctx);
    let now = ctx.clock();
    let Some(limit) = k.disks[disk].wbt_limit(now, hiprio).filter(|&l| l > 0) else { return };
    if k.disks[disk].wbt_inflight(now, rwq) + plugged < limit {
        return;
    }
    if plugged > 0 {
        flush_plug(k, ctx);
    }
    // A completion a loop worker has not given yet (`blk_wbt::UNKNOWN`) owes no sleep here:
    // reclaim cannot wait for the worker mid-batch (a departure on loop disks only).
    if let Some(t) = k.disks[disk].wbt_wait(ctx.clock(), rwq, limit, 0).filter(|&t| t != crate::blk_wbt::UNKNOWN) {
        ctx.sleep_ns = ctx.sleep_ns.max(t.saturating_sub(ctx.clock()));
    }
}

/// The throttle's queue of this writer's swap writes and whether `get_limit` gives them
/// `max_depth`: from 6.11 every swap write (`REQ_SWAP`, `WBT_RWQ_SWAP`); in 6.8 kswapd's only
/// (`WBT_RWQ_KSWAPD`), a direct reclaimer's sharing the flusher's `WBT_RWQ_BG`.
fn swap_rwq(k: &Kernel, ctx: &Ctx) -> (u8, bool) {
    if k.profile.wbt_swap_hiprio || ctx.is_kswapd {
        (crate::blk_wbt::RWQ_SWAP, true)
    } else {
        (crate::blk_wbt::RWQ_BG, false)
    }
}

/// `swap_writepage`: start writing a swap-cache page to its slot (after the writeback
/// throttle's wait, [`wbt_wait_swap`]).
pub fn swap_writepage(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> bool {
    let Some(s) = page_swap_slot(k, p) else { return false };
    wbt_wait_swap(k, ctx, s);
    k.fr.clear(p, pg::DIRTY);
    k.fr.set(p, pg::WRITEBACK);
    k.g.writeback += 1;
    if k.swap_plug.on {
        // The submission's cost is charged before the plug may flush at the task's clock.
        k.charge(ctx, KFunc::Pageout, k.cost.io_submit);
        plug_add(k, ctx, s, p);
    } else {
        let (disk, base) = {
            let sw = k.swap.as_ref().expect("swap");
            (sw.disk, sw.base)
        };
        let rwq = swap_rwq(k, ctx).0;
        k.disks[disk].set_wbt_rwq(rwq);
        let t = k.disks[disk].submit(ctx.clock(), base + s as u64 * 4096, 4096, true);
        k.disks[disk].set_wbt_rwq(crate::blk_wbt::RWQ_BG);
        k.charge(ctx, KFunc::Pageout, k.cost.io_submit);
        k.queue_io_done(t, disk, vec![p], true);
        crate::page_writeback::congestion_wait_on_submit(ctx, &k.disks[disk], t);
    }
    k.ev.inc(Vm::Pswpout);
    k.ev.add(Vm::Pgpgout, 4);
    k.events += 1;
    true
}

/// `vma->swap_readahead_info` (4.14+): the page of the VMA's last swap fault, the window read
/// then, and how many of its readahead pages faults have found since.
#[derive(Clone, Copy, Debug, Default)]
pub struct SwapRaInfo {
    pub vpn: u64,
    pub win: u32,
    pub hits: u32,
}

/// `SWAP_RA_ORDER_CEILING` (x86-64): the VMA window is at most 32 pages whatever page_cluster is.
const SWAP_RA_ORDER_CEILING: u64 = 5;
/// `SWAP_RA_HITS_MAX`: the hit count lives in the low PAGE_SHIFT / 2 bits of the packed value.
const SWAP_RA_HITS_MAX: u32 = 63;

/// A new swap-cache page for slot `s`, locked for its read (`__read_swap_cache_async` up to the
/// I/O). `workingset_refault` runs for every page it adds, readahead ones included.
pub(crate) fn add_swapin_page(
    k: &mut Kernel,
    ctx: &mut Ctx,
    s: u32,
    anon_vma: u32,
    vpn: u64,
    extra: u32,
) -> Result<Pfn, crate::page_alloc::AllocFail> {
    let p = k.alloc_pages(ctx, crate::page_alloc::Gfp::highuser_movable(), 0)?;
    k.fr.flags[p as usize] |= pg::ANON | pg::SWAPBACKED | pg::LOCKED | pg::SWAPCACHE | extra;
    k.fr.mapping[p as usize] = anon_vma;
    k.fr.index[p as usize] = vpn as u32;
    {
        let sw = k.swap.as_mut().expect("swap");
        sw.cache[s as usize] = p;
        sw.pfn_slot.insert(p, s);
    }
    k.g.swapcache += 1;
    k.g.anon += 1;
    crate::memcontrol::charge(k, ctx, p);
    crate::workingset::refault_anon(k, p, s);
    crate::vmscan::lru_cache_add(k, ctx, p);
    Ok(p)
}

/// `swap_readpage` of `pages`, the pages of consecutive slots from `first`: one request, as the
/// readahead loop's block plug merges them (6.8: one bio per page, merged in the plug up to the
/// queue's limits, each merge counted). Returns when the last request completes.
pub(crate) fn swap_read_run(k: &mut Kernel, ctx: &mut Ctx, first: u32, pages: Vec<Pfn>) -> u64 {
    let (disk, base) = {
        let sw = k.swap.as_ref().expect("swap");
        (sw.disk, sw.base)
    };
    let n = pages.len() as u64;
    let mut rqs = Vec::new();
    if !k.disks[disk].plug(&pages, crate::blk::BioShape::PerPage, false, &mut rqs) {
        rqs.push(crate::blk::PlugRq { first: 0, pages: pages.len(), segs: n as u32 });
    }
    let mut t = 0;
    for rq in &rqs {
        let off = base + (first as u64 + rq.first as u64) * 4096;
        let done = k.disks[disk].submit_segs(ctx.clock(), off, rq.pages as u64 * 4096, rq.segs, false);
        k.charge(ctx, KFunc::DoSwapPage, k.cost.io_submit);
        let piece = pages[rq.first..rq.first + rq.pages].to_vec();
        for &p in &piece {
            k.inflight.insert(p, done);
        }
        k.queue_io_done(done, disk, piece, false);
        t = t.max(done);
    }
    k.ev.add(Vm::Pswpin, n);
    k.ev.add(Vm::Pgpgin, 4 * n);
    k.events += n;
    t
}

/// `swap_read_run`, and when it completes if the run holds slot `s`.
fn read_run_holding(k: &mut Kernel, ctx: &mut Ctx, first: u32, pages: Vec<Pfn>, s: u32) -> Option<u64> {
    let n = pages.len() as u32;
    let t = swap_read_run(k, ctx, first, pages);
    (first <= s && s < first + n).then_some(t)
}

/// Read slot `s` into a new swap-cache page (`swap_readpage`); returns the page and when the
/// read completes. `None` when no page could be allocated.
pub fn swapin(
    k: &mut Kernel,
    ctx: &mut Ctx,
    s: u32,
    anon_vma: u32,
    vpn: u64,
) -> Result<(Pfn, u64), crate::page_alloc::AllocFail> {
    let p = add_swapin_page(k, ctx, s, anon_vma, vpn, 0)?;
    let t = swap_read_run(k, ctx, s, vec![p]);
    Ok((p, t))
}

/// `__swapin_nr_pages`: the readahead window after `hits` hits, given the previous fault's page
/// and window. Without hits, only a fault next to the previous one reads ahead (2 pages).
fn swapin_nr_pages_win(prev: u64, cur: u64, hits: u32, max: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        if cur != prev.wrapping_add(1) && cur.wrapping_add(1) != prev {
            pages = 1;
        }
    } else {
        pages = pages.next_power_of_two().max(4);
    }
    // Don't shrink the window faster than by half.
    pages.min(max).max(prev_win / 2)
}

/// `swap_cache_get_folio`: a fault found its page in the swap cache. A readahead page counts a
/// hit (PG_readahead is cleared, so a retried fault does not count it twice), and under VMA
/// readahead the VMA remembers the fault and the hit.
pub fn swap_cache_hit(k: &mut Kernel, mm: u32, vi: usize, vpn: u64, p: Pfn) {
    let hit = k.fr.test_clear(p, pg::READAHEAD);
    if hit {
        k.ev.inc(Vm::SwapRaHit);
    }
    match swap_ra_mode(k) {
        SwapReadahead::Vma if k.profile.tunables.page_cluster > 0 => {
            let ra = &mut k.mm_mut(mm).vmas[vi].swap_ra;
            if hit {
                ra.hits = (ra.hits + 1).min(SWAP_RA_HITS_MAX);
            }
            ra.vpn = vpn;
        }
        SwapReadahead::Cluster if hit => {
            if let Some(sw) = k.swap.as_mut() {
                sw.ra_hits += 1;
            }
        }
        _ => {}
    }
}

/// The profile's swap readahead as `swap_use_vma_readahead` decides it: VMA-based only while no
/// rotational device swaps.
fn swap_ra_mode(k: &Kernel) -> SwapReadahead {
    match (k.profile.swap_readahead, k.swap.as_ref()) {
        (SwapReadahead::Vma, Some(sw)) if k.disks[sw.disk].params().seek_ns > 0 => SwapReadahead::Cluster,
        (m, _) => m,
    }
}

/// `swapin_nr_pages`: the cluster window for a fault on slot `s`, from the hits since the last
/// window. The previous slot only moves on a fault without hits.
fn swapin_nr_pages(sw: &mut SwapInfo, s: u32, page_cluster: u64) -> u32 {
    let max = 1u32 << page_cluster;
    if max <= 1 {
        return 1;
    }
    let hits = std::mem::take(&mut sw.ra_hits);
    let pages = swapin_nr_pages_win(sw.ra_prev as u64, s as u64, hits, max, sw.ra_last);
    if hits == 0 {
        sw.ra_prev = s;
    }
    sw.ra_last = pages;
    pages
}

/// The slot range `[lo, hi)` the cluster modes read around slot `s` (`valid_swaphandles`): the
/// in-use slots of the aligned `1 << page_cluster` block. vmlab's slot 0 is a data slot (its
/// swap header is not modelled), so the block is not trimmed at 0.
fn valid_swaphandles(sw: &SwapInfo, s: u32, cluster: u64, around: bool) -> (u32, u32) {
    let n = 1u64 << cluster;
    let base = (s as u64 / n * n) as u32;
    let end = (base as u64 + n).min(sw.nslots as u64) as u32;
    let used = |x: u32| !sw.slot_free(x);
    if !around {
        let mut hi = base;
        while hi < end && used(hi) {
            hi += 1;
        }
        return (base, hi);
    }
    let mut hi = s + 1;
    while hi < end && used(hi) {
        hi += 1;
    }
    let mut lo = s;
    while lo > base && used(lo - 1) {
        lo -= 1;
    }
    (lo, hi)
}

/// `swapin_readahead` for a fault on `vpn` (PTE `pte_slot`, VMA `vi` of `mm`) whose slot `s` is
/// not in the swap cache: read `s` and, per the profile's `swap_readahead`, its neighbours.
/// Returns the faulting page and when its read completes. Runs of consecutive slots go to disk
/// as one request; the readahead pages carry PG_readahead (`swap_ra`).
#[allow(clippy::too_many_arguments)]
pub fn swapin_readahead(
    k: &mut Kernel,
    ctx: &mut Ctx,
    mm: u32,
    vi: usize,
    vpn: u64,
    pte_slot: usize,
    s: u32,
    anon_vma: u32,
) -> Result<(Pfn, u64), crate::page_alloc::AllocFail> {
    let pc = k.profile.tunables.page_cluster;
    let mode = swap_ra_mode(k);
    // The window, in virtual pages (Vma) or slots (cluster modes).
    let (lo, hi) = match mode {
        SwapReadahead::None => return swapin(k, ctx, s, anon_vma, vpn),
        _ if pc == 0 => return swapin(k, ctx, s, anon_vma, vpn),
        SwapReadahead::ClusterFromBase | SwapReadahead::ClusterAround => {
            let sw = k.swap.as_ref().expect("swap");
            let (lo, hi) = valid_swaphandles(sw, s, pc, mode == SwapReadahead::ClusterAround);
            (lo as u64, hi as u64)
        }
        SwapReadahead::Cluster => {
            let sw = k.swap.as_mut().expect("swap");
            let n = swapin_nr_pages(sw, s, pc) as u64;
            let lo = s as u64 / n * n;
            (lo, (lo + n).min(sw.nslots as u64))
        }
        SwapReadahead::Vma => {
            let max_win = 1u32 << pc.min(SWAP_RA_ORDER_CEILING);
            let v = &mut k.mm_mut(mm).vmas[vi];
            let prev = v.swap_ra;
            let win = swapin_nr_pages_win(prev.vpn, vpn, prev.hits, max_win, prev.win);
            v.swap_ra = SwapRaInfo { vpn, win, hits: 0 };
            let w = win as u64;
            let left = if vpn == prev.vpn + 1 {
                vpn
            } else if prev.vpn == vpn + 1 {
                (vpn + 1).saturating_sub(w)
            } else {
                vpn.saturating_sub((w - 1) / 2)
            };
            let pmd = vpn & !511;
            (left.max(v.start).max(pmd), (left + w).min(v.end).min(pmd + 512))
        }
    };
    // 6.8's swap_cluster_readahead and swap_vma_readahead allocate the window's pages between
    // blk_start_plug and blk_finish_plug, and each allocation's memcg charge may reclaim
    // (`__read_swap_cache_async` → `mem_cgroup_swapin_charge_folio`). That reclaim's own
    // blk_start_plug in shrink_lruvec is then a nested no-op, so its swap writes stay on the
    // fault's plug across priorities and calls until the plug's own flush rules or the
    // readahead's blk_finish_plug send them, after the window's reads.
    let plugged = k.profile.blk_mq && blk_start_plug(k);
    let r = readahead_window(k, ctx, mode, (lo, hi), pte_slot, vpn, s, anon_vma);
    if plugged {
        blk_finish_plug(k, ctx);
    }
    r
}

/// The pages of `swapin_readahead`'s window `lo..hi` read, the target's first.
#[allow(clippy::too_many_arguments)]
fn readahead_window(
    k: &mut Kernel,
    ctx: &mut Ctx,
    mode: SwapReadahead,
    (lo, hi): (u64, u64),
    pte_slot: usize,
    vpn: u64,
    s: u32,
    anon_vma: u32,
) -> Result<(Pfn, u64), crate::page_alloc::AllocFail> {
    let target = add_swapin_page(k, ctx, s, anon_vma, vpn, 0)?;
    let mut target_t = None;
    let mut target_queued = false;
    let mut run: Vec<Pfn> = Vec::new();
    let mut run_first = 0u32;
    for x in lo..hi {
        // The slot at this place of the window, and whose page it would be.
        let (rs, rvpn) = if mode == SwapReadahead::Vma {
            // One page table covers the window: it stays inside the fault's PMD.
            let e = k.pt.entries[pte_slot - (vpn & 511) as usize + (x & 511) as usize];
            match pte::swap_slot(e) {
                Some(rs) => (rs, x),
                None => continue,
            }
        } else {
            (x as u32, vpn)
        };
        let p = if rs == s {
            if target_queued {
                continue;
            }
            target_queued = true;
            target
        } else {
            let wanted = |k: &Kernel| {
                k.swap.as_ref().is_some_and(|sw| sw.cache[rs as usize] == NIL && sw.count[rs as usize] > 0)
            };
            if !wanted(k) {
                continue;
            }
            match add_swapin_page(k, ctx, rs, anon_vma, rvpn, pg::READAHEAD) {
                Ok(p) => p,
                Err(_) => break,
            }
        };
        if p != target {
            k.ev.inc(Vm::SwapRa);
        }
        if !run.is_empty() && rs != run_first + run.len() as u32 {
            target_t = read_run_holding(k, ctx, run_first, std::mem::take(&mut run), s).or(target_t);
        }
        if run.is_empty() {
            run_first = rs;
        }
        run.push(p);
    }
    if !run.is_empty() {
        target_t = read_run_holding(k, ctx, run_first, run, s).or(target_t);
    }
    let t = match target_t {
        Some(t) => t,
        // The window stopped short of the target (a free slot below it, or no memory).
        None => swap_read_run(k, ctx, s, vec![target]),
    };
    Ok((target, t))
}
