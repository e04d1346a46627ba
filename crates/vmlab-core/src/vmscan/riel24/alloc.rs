//! `__alloc_pages` of 2.4.9. Zones are tried in zonelist order (HighMem, Normal, DMA for page
//! cache): first any zone with at least pages_low free; then zones whose free + inactive_clean
//! is at least pages_high, pages_low, and (after waking kswapd) pages_min — a caller that may
//! sleep taking its page straight off that zone's inactive_clean list, whatever the zone's free
//! count; then direct reclaim, retried for as long as it takes; the last pages are for
//! PF_MEMALLOC. There are no per-CPU page lists.

use super::lock::spin_lock;
use super::{free_shortage, try_to_free_pages, wakeup_kreclaimd, wakeup_kswapd, zone_clean, zone_free};
use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;
use crate::mmzone::{Mt, ZoneType};
use crate::page_alloc::{AllocFail, Gfp};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;

const PAGES_MIN: usize = 0;
const PAGES_LOW: usize = 1;
const PAGES_HIGH: usize = 2;

fn got(k: &mut Kernel, ctx: &mut Ctx, z: usize, p: Pfn, gfp: Gfp, order: u32, stage: usize) -> Result<Pfn, AllocFail> {
    k.reclaim.riel24_mut().stats.alloc_pass[stage] += 1;
    if let Some(row) = k.reclaim.riel24_mut().stats.alloc_zone_pass.get_mut(z) {
        row[stage] += 1;
    }
    let c = match k.zones[z].kind {
        ZoneType::Dma => Vm::PgallocDma,
        ZoneType::Dma32 => Vm::PgallocDma32,
        ZoneType::Normal => Vm::PgallocNormal,
        ZoneType::HighMem => Vm::PgallocHigh,
        ZoneType::Movable => Vm::PgallocMovable,
    };
    k.ev.add(c, 1 << order);
    if gfp.mt == Mt::Movable && !ctx.in_reclaim {
        // The page is bound for the LRU: lru_cache_add takes pagemap_lru_lock.
        spin_lock(k, ctx);
    }
    Ok(p)
}

/// Whose allocation a page off inactive_clean goes to, for the engine's clean-list traffic.
fn taker(gfp: Gfp) -> usize {
    if gfp.mt == Mt::Movable {
        super::CLEAN_FOR_CACHE
    } else {
        super::CLEAN_FOR_KERNEL
    }
}

fn rmqueue(k: &mut Kernel, z: usize, order: u32, gfp: Gfp) -> Option<Pfn> {
    k.rmqueue(z, order, gfp.mt)
}

/// `__alloc_pages_limit` as 2.4.9 has it: the first zone whose free + inactive_clean pages reach
/// the watermark (`>=`); a `direct_reclaim` caller (order 0, __GFP_WAIT) always tries
/// `reclaim_page` there first and falls back to the free list. (2.4.0–2.4.4 used `>` and reclaimed
/// only below pages_min + 8; Rik van Riel's "highmem deadlock removal" patch of 25 May 2001
/// changed both, and the 2.4.10-pre2 `page_alloc.c` — same line numbers as 2.4.9's — has them.)
#[allow(clippy::too_many_arguments)]
fn alloc_limit(
    k: &mut Kernel,
    ctx: &mut Ctx,
    zl: &[usize],
    order: u32,
    wm: usize,
    direct: bool,
    gfp: Gfp,
    stage: usize,
) -> Option<Result<Pfn, AllocFail>> {
    for &z in zl {
        if zone_free(k, z) + zone_clean(k, z) < k.zones[z].wmark[wm] {
            continue;
        }
        let mut p = None;
        if direct {
            // reclaim_page takes a clean page straight off inactive_clean: 2.4.9 counts no
            // reclaim event for it (the engine's own `reclaim_page` statistic does).
            p = super::scan::reclaim_page(k, ctx, z, taker(gfp));
            if p.is_some() {
                if let Some(c) = k.reclaim.riel24_mut().stats.alloc_zone_reclaimed.get_mut(z) {
                    *c += 1;
                }
            }
        }
        if p.is_none() {
            p = rmqueue(k, z, order, gfp);
        }
        if let Some(p) = p {
            return Some(got(k, ctx, z, p, gfp, order, stage));
        }
    }
    None
}

pub fn alloc_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Result<Pfn, AllocFail> {
    k.charge(ctx, KFunc::AllocPages, k.cost.page_alloc);
    k.reclaim.riel24_mut().memory_pressure += 1;
    let (zla, n) = k.zonelist(ctx.node, gfp);
    let zl = &zla[..n];
    let direct = order == 0 && gfp.direct_reclaim;
    let mut reclaimed = false;
    if gfp.direct_reclaim && !ctx.in_reclaim && super::parked(k, ctx.task) {
        // Back from a wait on buffers inside try_to_free_pages: the pass goes on, then
        // `goto try_again`.
        reclaimed = true;
        if !try_to_free_pages(k, ctx, super::buffers::direct_mask(gfp)) && super::parked(k, ctx.task) {
            return Err(AllocFail::Throttled);
        }
    }
    loop {
        for &z in zl {
            if zone_free(k, z) >= k.zones[z].wmark[PAGES_LOW] {
                if let Some(p) = rmqueue(k, z, order, gfp) {
                    return got(k, ctx, z, p, gfp, order, 0);
                }
            } else if zone_free(k, z) < k.zones[z].wmark[PAGES_MIN] {
                wakeup_kreclaimd(k);
            }
        }
        if let Some(r) = alloc_limit(k, ctx, zl, order, PAGES_HIGH, direct, gfp, 1) {
            return r;
        }
        if let Some(r) = alloc_limit(k, ctx, zl, order, PAGES_LOW, direct, gfp, 2) {
            return r;
        }
        wakeup_kswapd(k);
        if gfp.direct_reclaim {
            // SCHED_YIELD; schedule()
            k.charge(ctx, KFunc::Schedule, k.cost.context_switch);
        }
        if let Some(r) = alloc_limit(k, ctx, zl, order, PAGES_MIN, direct, gfp, 3) {
            return r;
        }
        if !ctx.in_reclaim && gfp.direct_reclaim && (order == 0 || free_shortage(k).is_some()) {
            if !reclaimed {
                reclaimed = true;
                if !try_to_free_pages(k, ctx, super::buffers::direct_mask(gfp)) && super::parked(k, ctx.task) {
                    // Asleep on a page's buffers (`__wait_on_buffer`).
                    return Err(AllocFail::Throttled);
                }
                continue;
            }
            // The kernel goes round `try_again` until a page turns up (GFP_HIGHUSER and
            // GFP_KERNEL have __GFP_FS). Let the other CPUs' time pass before the next round.
            ctx.throttle_until = ctx.clock() + 1;
            return Err(AllocFail::Throttled);
        }
        break;
    }
    // Last resort: direct reclaimers take from inactive_clean; only PF_MEMALLOC may empty a zone.
    for &z in zl {
        if direct {
            if let Some(p) = super::scan::reclaim_page(k, ctx, z, taker(gfp)) {
                return got(k, ctx, z, p, gfp, order, 4);
            }
        }
        if zone_free(k, z) < k.zones[z].wmark[PAGES_MIN] / 4 && !ctx.in_reclaim {
            continue;
        }
        if let Some(p) = rmqueue(k, z, order, gfp) {
            return got(k, ctx, z, p, gfp, order, 4);
        }
    }
    Err(AllocFail::NoMemory)
}
