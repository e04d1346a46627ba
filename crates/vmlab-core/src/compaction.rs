//! Memory compaction (`mm/compaction.c`, 2.6.35–2.6.38): a migrate scanner walks a zone up from
//! its start isolating LRU pages, a free scanner walks down from its end isolating free pages,
//! and `migrate_pages` moves the first into the second, so free memory gathers at the zone's
//! start in blocks large enough for a high-order allocation.
//!
//! Sources: 2.6.36's `mm/migrate.c` and `mm/page_alloc.c` (galeksandrp-keenetic/linux-2.6.36:
//! `split_free_page`, `__alloc_pages_direct_compact`); `mm/compaction.c` itself is in no stored
//! tree of the era, so its 2.6.36–2.6.38 form is taken from the posted diffs against it — the
//! revert of kswapd compaction ("mm: compaction: Prevent kswapd compacting memory to reduce CPU
//! usage", Andrea Arcangeli / Mel Gorman, linux-mm, 2 Mar 2011), whose context and `-` lines
//! show `compact_finished`, `compact_zone_order` and `try_to_compact_pages` as 2.6.38-rc had
//! them — and from Mel Gorman's "Use memory compaction instead of lumpy reclaim" series (Nov
//! 2010: `compaction_suitable`, async migration). See docs/notes/era-2.6.36-38.md.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmzone::{Mt, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, MAX_ORDER, MIGRATE_RESERVE, PAGEBLOCK_ORDER};
use crate::page_alloc::Gfp;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

/// `COMPACT_CLUSTER_MAX` (= SWAP_CLUSTER_MAX): pages isolated per migration batch.
const COMPACT_CLUSTER_MAX: usize = 32;
/// `COMPACT_MAX_DEFER_SHIFT`: a zone whose compaction failed is skipped up to 64 times.
const COMPACT_MAX_DEFER_SHIFT: u32 = 6;
/// `sysctl_extfrag_threshold`.
const EXTFRAG_THRESHOLD: i64 = 500;
/// HZ/10, `too_many_isolated`'s congestion_wait.
const HZ_10_NS: u64 = 100_000_000;

/// `COMPACT_SKIPPED` … `COMPACT_COMPLETE`, ordered as the kernel's values (callers take the max).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactResult {
    Skipped,
    Continue,
    Partial,
    Complete,
}

/// 2.6.38-rc's `compact_mode` (5a03b051): kswapd keeps going past the first free block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    DirectReclaim,
    Kswapd,
}

/// The buffers `struct compact_control` lists live in (kept between runs: no allocation per
/// page), and each zone's `compact_considered` / `compact_defer_shift`.
#[derive(Clone, Debug, Default)]
pub struct CompactState {
    migratepages: Vec<Pfn>,
    freepages: Vec<Pfn>,
    considered: Vec<u32>,
    defer_shift: Vec<u32>,
}

/// `struct compact_control`'s scalars.
struct Cc {
    zid: usize,
    order: u32,
    mt: Mt,
    sync: bool,
    mode: Mode,
    migrate_pfn: Pfn,
    free_pfn: Pfn,
}

const NR: u32 = 1 << PAGEBLOCK_ORDER;

/// `fragmentation_index`: 0 no free blocks, -1000 a block of `order` is free, else towards
/// 1000 the more the free memory is in blocks too small for `order`.
pub fn fragmentation_index(k: &Kernel, zid: usize, order: u32) -> i64 {
    let z = &k.zones[zid];
    let mut blocks = 0u64;
    let mut suitable = 0u64;
    for (o, &n) in z.nr_free.iter().enumerate() {
        blocks += n;
        if o as u32 >= order {
            suitable += n << (o as u32 - order);
        }
    }
    if blocks == 0 {
        return 0;
    }
    if suitable > 0 {
        return -1000;
    }
    1000 - ((1000 + ((z.free_pages * 1000) >> order) as i64) / blocks as i64)
}

/// 2.6.38 `compaction_suitable`: order-0 free memory above LOW + 2 << order (migration needs
/// the copies), and a failure that fragmentation explains (index above the threshold). The
/// kernel tests the index against -1 for COMPACT_PARTIAL, which `fragmentation_index` never
/// returns (it returns -1000), so PARTIAL is unreachable here as there.
pub fn compaction_suitable(k: &Kernel, zid: usize, order: u32) -> CompactResult {
    let watermark = k.zones[zid].low_wmark() + (2u64 << order);
    if !k.zone_watermark_ok(zid, 0, watermark, 0, false, false) {
        return CompactResult::Skipped;
    }
    let idx = fragmentation_index(k, zid, order);
    if (0..=EXTFRAG_THRESHOLD).contains(&idx) {
        return CompactResult::Skipped;
    }
    CompactResult::Continue
}

/// `too_many_isolated` (compaction's own): more isolated than inactive pages.
fn too_many_isolated(k: &Kernel, zid: usize) -> bool {
    let z = &k.zones[zid];
    k.g.isolated > z.lru_pages[LRU_INACTIVE_ANON] + z.lru_pages[LRU_INACTIVE_FILE]
}

/// `isolate_migratepages`: isolate LRU pages from the next pageblock of the migrate scanner,
/// up to COMPACT_CLUSTER_MAX. Async runs (2.6.38) skip blocks that are not MIGRATE_MOVABLE.
fn isolate_migratepages(k: &mut Kernel, ctx: &mut Ctx, cc: &mut Cc) -> usize {
    let low = cc.migrate_pfn.max(k.zones[cc.zid].start_pfn);
    // `ALIGN(low_pfn + pageblock_nr_pages, pageblock_nr_pages)`: from mid-block, the rest of
    // that block and all of the next.
    let end = low + NR + (NR - 1 - ((k.zones[cc.zid].phys(low) + NR + NR - 1) & (NR - 1)));
    if end > cc.free_pfn {
        cc.migrate_pfn = end;
        return 0;
    }
    if too_many_isolated(k, cc.zid) {
        // congestion_wait(BLK_RW_ASYNC, HZ/10) until fewer are isolated: nothing else runs
        // inside this step, so one wait stands for the loop.
        ctx.sleep_ns += HZ_10_NS;
    }
    if !cc.sync && k.pageblock_mt[k.pageblock_of(cc.zid, low)] != Mt::Movable as u8 {
        cc.migrate_pfn = end;
        return 0;
    }
    let mut list = std::mem::take(&mut k.compact.migratepages);
    let mut p = low;
    let mut scanned = 0u64;
    // The free scanner's restart point may lie past the zone's end (`low_pfn + pageblock`).
    let stop = end.min(k.zones[cc.zid].end_pfn);
    while p < stop {
        scanned += 1;
        if crate::migrate::isolatable(k, p) {
            crate::migrate::isolate(k, p);
            list.push(p);
            if list.len() == COMPACT_CLUSTER_MAX {
                break;
            }
        }
        p += 1;
    }
    k.charge(ctx, KFunc::Compaction, scanned * k.cost.lru_scan);
    k.events += scanned;
    k.compact.migratepages = list;
    cc.migrate_pfn = p;
    k.compact.migratepages.len()
}

/// `suitable_migration_target`: not the reserve, and movable or wholly free.
fn suitable_migration_target(k: &Kernel, zid: usize, p: Pfn) -> bool {
    let mt = k.pageblock_mt[k.pageblock_of(zid, p)] as usize;
    if mt == MIGRATE_RESERVE {
        return false;
    }
    if k.fr.has(p, pg::BUDDY) && (k.fr.aux[p as usize] & 0xf) as u32 >= PAGEBLOCK_ORDER {
        return true;
    }
    mt == Mt::Movable as usize
}

/// `isolate_freepages`: walk pageblocks down from the free scanner, splitting every free block
/// of a suitable one into order-0 pages, until there are as many as pages to migrate or the
/// scanners meet; the scanner restarts next time at the highest block it took pages from.
/// `want`: the batch's size (`cc->nr_migratepages`, which 2.6.36 updates only after the batch).
fn isolate_freepages(k: &mut Kernel, ctx: &mut Ctx, cc: &mut Cc, want: usize) {
    let (zs, ze) = (k.zones[cc.zid].start_pfn, k.zones[cc.zid].end_pfn);
    let low = cc.migrate_pfn.saturating_add(NR);
    let mut high = low;
    let mut pfn = cc.free_pfn;
    let mut list = std::mem::take(&mut k.compact.freepages);
    let mut scanned = 0u64;
    while pfn > low && want > list.len() {
        if pfn >= zs && pfn < ze && suitable_migration_target(k, cc.zid, pfn) {
            let end = (pfn + NR).min(ze);
            let mut isolated = 0;
            let mut p = pfn;
            while p < end {
                scanned += 1;
                let n = if k.fr.has(p, pg::BUDDY) { k.split_free_page(cc.zid, p) } else { 0 };
                list.extend(p..p + n);
                isolated += n;
                p += n.max(1);
            }
            if isolated > 0 {
                high = high.max(pfn);
            }
        }
        pfn = pfn.saturating_sub(NR);
    }
    k.charge(ctx, KFunc::Compaction, scanned * k.cost.lru_scan);
    k.events += scanned;
    k.compact.freepages = list;
    cc.free_pfn = high;
}

/// `compact_finished`.
fn compact_finished(k: &Kernel, cc: &Cc) -> CompactResult {
    if cc.free_pfn <= cc.migrate_pfn {
        return CompactResult::Complete;
    }
    let z = &k.zones[cc.zid];
    let mark = if cc.mode == Mode::Kswapd { z.high_wmark() } else { z.low_wmark() } + (1u64 << cc.order);
    if !k.zone_watermark_ok(cc.zid, cc.order, mark, 0, false, false) {
        return CompactResult::Continue;
    }
    // 5a03b051: "Generating only one page of the right order is not enough for kswapd" — its
    // run never ends here, only when the scanners meet.
    if cc.mode == Mode::Kswapd {
        return CompactResult::Continue;
    }
    for o in cc.order as usize..MAX_ORDER {
        if !z.free_area[o][cc.mt as usize].is_empty() || (o as u32 >= PAGEBLOCK_ORDER && z.nr_free[o] > 0) {
            return CompactResult::Partial;
        }
    }
    CompactResult::Continue
}

/// `migrate_pages` with `compaction_alloc` over the isolated batch. A page that cannot move is
/// a failure at once: the kernel's retries (ten passes, sleeping on the lock or writeback
/// after the second in sync mode) would find the same state, since nothing runs in between.
fn migrate_batch(k: &mut Kernel, ctx: &mut Ctx, cc: &mut Cc) {
    let list = std::mem::take(&mut k.compact.migratepages);
    let (mut moved, mut failed) = (0u64, 0u64);
    for (i, &old) in list.iter().enumerate() {
        if k.compact.freepages.is_empty() {
            isolate_freepages(k, ctx, cc, list.len());
        }
        let Some(new) = k.compact.freepages.pop() else {
            // -ENOMEM: the rest go back. The free scanner found nothing above the migrate
            // scanner, so the scanners have met (the kernel gets there through the next
            // `isolate_migratepages`' aligned end passing `free_pfn`; a batch that broke off
            // exactly at a pageblock boundary would retry forever there).
            for &p in &list[i..] {
                crate::migrate::putback(k, p);
            }
            failed += (list.len() - i) as u64;
            cc.free_pfn = cc.free_pfn.min(cc.migrate_pfn);
            break;
        };
        match crate::migrate::unmap_and_move(k, ctx, old, new) {
            Ok(()) => moved += 1,
            Err(_) => {
                crate::migrate::putback(k, old);
                k.free_pages(ctx, new, 0);
                failed += 1;
            }
        }
    }
    k.compact.migratepages = list;
    k.compact.migratepages.clear();
    k.ev.inc(Vm::CompactBlocksMoved);
    k.ev.add(Vm::CompactPagesMoved, moved);
    k.ev.add(Vm::CompactPagemigrateFailed, failed);
}

/// `compact_zone_order` → `compact_zone`: compact zone `zid` for an allocation of `order` and
/// migrate type `mt`. Its CPU is charged to `ctx`.
pub fn compact_zone_order(
    k: &mut Kernel,
    ctx: &mut Ctx,
    zid: usize,
    order: u32,
    mt: Mt,
    sync: bool,
    mode: Mode,
) -> CompactResult {
    let ret = compaction_suitable(k, zid, order);
    if ret != CompactResult::Continue {
        return ret;
    }
    // migrate_prep_local: this CPU's new pages onto their lists, where the scanner can take them.
    crate::vmscan::lru_add_drain(k, ctx);
    let z = &k.zones[zid];
    let phys_end = z.phys(z.end_pfn - 1) + 1;
    let free_pfn = z.end_pfn - (phys_end & (NR - 1));
    let mut cc = Cc { zid, order, mt, sync, mode, migrate_pfn: z.start_pfn, free_pfn };
    let was = ctx.in_reclaim;
    ctx.in_reclaim = true;
    let ret = loop {
        let r = compact_finished(k, &cc);
        if r != CompactResult::Continue {
            break r;
        }
        if isolate_migratepages(k, ctx, &mut cc) == 0 {
            continue;
        }
        migrate_batch(k, ctx, &mut cc);
    };
    // release_freepages.
    while let Some(p) = k.compact.freepages.pop() {
        k.free_pages(ctx, p, 0);
    }
    ctx.in_reclaim = was;
    ret
}

fn defer_state(k: &mut Kernel, zid: usize) -> (&mut u32, &mut u32) {
    let n = k.zones.len();
    let c = &mut k.compact;
    if c.considered.len() < n {
        c.considered.resize(n, 0);
        c.defer_shift.resize(n, 0);
    }
    (&mut c.considered[zid], &mut c.defer_shift[zid])
}

/// `compaction_deferred`: after failures, skip compaction in a zone 2^shift times.
fn compaction_deferred(k: &mut Kernel, zid: usize) -> bool {
    let (considered, shift) = defer_state(k, zid);
    let limit = 1u32 << *shift;
    *considered = (*considered + 1).min(limit);
    *considered < limit
}

fn defer_compaction(k: &mut Kernel, zid: usize) {
    let (considered, shift) = defer_state(k, zid);
    *considered = 0;
    *shift = (*shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
}

/// `try_to_compact_pages`: compact each zone of the zonelist until one would satisfy the
/// allocation at LOW.
fn try_to_compact_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, sync: bool) -> CompactResult {
    k.ev.inc(Vm::CompactStall);
    let (zl, n) = k.zonelist(ctx.node, gfp);
    let mut rc = CompactResult::Skipped;
    for &zid in &zl[..n] {
        let status = compact_zone_order(k, ctx, zid, order, gfp.mt, sync, Mode::DirectReclaim);
        rc = rc.max(status);
        if k.zone_watermark_ok(zid, order, k.zones[zid].low_wmark(), 0, false, false) {
            break;
        }
    }
    rc
}

/// `__alloc_pages_direct_compact`, for a sleeping allocation of `order` ≥ the row's
/// `compaction_min_order` (2.6.36: only above PAGE_ALLOC_COSTLY_ORDER; 2.6.38: any order > 0).
/// `sync`: 2.6.38's first attempt is asynchronous. The pages migration freed sit on this CPU's
/// list, so it is drained before the allocation is tried again.
pub fn alloc_pages_direct_compact(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, sync: bool) -> Option<Pfn> {
    if order == 0 || order < k.profile.split26.compaction_min_order {
        return None;
    }
    let (zl, n) = k.zonelist(ctx.node, gfp);
    let &preferred = zl[..n].first()?;
    if compaction_deferred(k, preferred) {
        return None;
    }
    let rc = try_to_compact_pages(k, ctx, gfp, order, sync);
    if rc == CompactResult::Skipped {
        return None;
    }
    k.drain_cpu_pages(ctx.cpu as usize);
    if let Some(p) = k.alloc_after_compaction(ctx, gfp, order) {
        let (considered, shift) = defer_state(k, preferred);
        (*considered, *shift) = (0, 0);
        k.ev.inc(Vm::CompactSuccess);
        return Some(p);
    }
    k.ev.inc(Vm::CompactFail);
    defer_compaction(k, preferred);
    None
}

#[cfg(test)]
#[path = "compaction_tests.rs"]
mod tests;
