//! `__alloc_pages` of 2.4.9. Zones are tried in zonelist order (HighMem, Normal, DMA for page
//! cache): first any zone with at least pages_low free; then zones whose free + inactive_clean
//! is above pages_high, pages_low, and (after waking kswapd) pages_min — taking a page straight
//! off inactive_clean when the zone is nearly out of free pages; then direct reclaim, retried for
//! as long as it takes; the last pages are for PF_MEMALLOC. There are no per-CPU page lists.

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

fn got(k: &mut Kernel, ctx: &mut Ctx, z: usize, p: Pfn, gfp: Gfp, order: u32) -> Result<Pfn, AllocFail> {
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

fn rmqueue(k: &mut Kernel, z: usize, order: u32, gfp: Gfp) -> Option<Pfn> {
    k.rmqueue(z, order, gfp.mt)
}

/// `__alloc_pages_limit`: a zone whose free + inactive_clean pages are above the watermark.
#[allow(clippy::too_many_arguments)]
fn alloc_limit(k: &mut Kernel, ctx: &mut Ctx, zl: &[usize], order: u32, wm: usize, direct: bool, gfp: Gfp) -> Option<Result<Pfn, AllocFail>> {
    for &z in zl {
        if zone_free(k, z) + zone_clean(k, z) <= k.zones[z].wmark[wm] {
            continue;
        }
        let mut p = None;
        if direct && zone_free(k, z) < k.zones[z].wmark[PAGES_MIN] + 8 {
            p = super::scan::reclaim_page(k, ctx, z);
            if p.is_some() && z == 0 { k.riel.dbg_dma_reclaimed += 1; }
            if p.is_some() {
                k.ev.inc(Vm::PgstealDirect);
            }
        }
        if p.is_none() {
            p = rmqueue(k, z, order, gfp);
        }
        if let Some(p) = p {
            return Some(got(k, ctx, z, p, gfp, order));
        }
    }
    None
}

pub fn alloc_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Result<Pfn, AllocFail> {
    super::ensure(k);
    if std::env::var_os("VMLAB_RIEL_DEBUG").is_some() && ctx.clock() / 1_000_000_000 != k.riel.dbg_sec {
        k.riel.dbg_sec = ctx.clock() / 1_000_000_000;
        let zs: Vec<String> = (0..k.zones.len())
            .map(|z| format!("{} f{} c{} d{} a{}", k.zones[z].kind.name(), zone_free(k, z), zone_clean(k, z), super::zone_dirty(k, z), k.zones[z].lru_pages[super::SLOT_ACTIVE]))
            .collect();
        let st = &k.riel.stats;
        if k.riel.dbg_sec % 20 == 0 {
            let mut pinned = vec![0u64; k.zones.len()];
            for p in 0..k.fr.len() as u32 { if k.fr.mapcount[p as usize] > 0 { pinned[k.zone_of(p)] += 1; } }
            eprintln!("mapped per zone at {}: {:?}", k.riel.dbg_sec, pinned);
        }
        if k.riel.dbg_sec % 10 == 0 {
            let w = k.riel.dirty.walk();
            let pos: Vec<usize> = w.iter().enumerate().filter(|(_, &p)| k.zone_of(p) == 0).map(|(i, _)| i).collect();
            eprintln!("dirty ring len {} walk {} check {:?} DMA positions: n={} first {:?} last {:?}", k.riel.dirty.len(), w.len(), k.riel.dirty.check(&k.fr), pos.len(), pos.first(), pos.last());
        }
        if k.riel.dbg_sec % 50 == 0 {
            let mut hist = std::collections::BTreeMap::new();
            for p in k.riel.dirty.walk() {
                if k.zone_of(p) != 0 { continue; }
                let key = (k.fr.flags[p as usize] & 0xfff, k.fr.mapcount[p as usize], k.fr.extra[p as usize], k.riel.dirty.hot(&k.fr, p));
                *hist.entry(key).or_insert(0u32) += 1;
            }
            eprintln!("DMA dirty states (flags,mapcount,extra,hot)->n: {:?}", hist);
            let mut hist = std::collections::BTreeMap::new();
            for p in k.riel.active.walk() {
                if k.zone_of(p) != 0 { continue; }
                let key = (k.fr.flags[p as usize] & 0xfff, k.fr.mapcount[p as usize], k.fr.extra[p as usize], k.riel.active.hot(&k.fr, p));
                *hist.entry(key).or_insert(0u32) += 1;
            }
            eprintln!("DMA active states: {:?}", hist);
        }
        eprintln!("t={} dmacl {} dmarecl {} {} | launder {} refill {} iters {} passes {} failed {} direct {} kreclaimd {} dma_alloc {} steal_direct {}", k.riel.dbg_sec, k.riel.dbg_dma_cleaned, k.riel.dbg_dma_reclaimed, zs.join(" | "), st.page_launder, st.refill_inactive_scan, st.do_try_iterations, st.kswapd_passes, st.kswapd_failed_passes, st.direct_passes, st.kreclaimd_runs, k.ev.get(Vm::PgallocDma), k.ev.get(Vm::PgstealDirect));
    }
    k.charge(ctx, KFunc::AllocPages, k.cost.page_alloc);
    k.riel.memory_pressure += 1;
    let (zla, n) = k.zonelist(ctx.node, gfp);
    let zl = &zla[..n];
    let direct = order == 0 && gfp.direct_reclaim;
    let mut reclaimed = false;
    loop {
        for &z in zl {
            if zone_free(k, z) >= k.zones[z].wmark[PAGES_LOW] {
                if let Some(p) = rmqueue(k, z, order, gfp) {
                    return got(k, ctx, z, p, gfp, order);
                }
            } else if zone_free(k, z) < k.zones[z].wmark[PAGES_MIN] {
                wakeup_kreclaimd(k);
            }
        }
        if let Some(r) = alloc_limit(k, ctx, zl, order, PAGES_HIGH, direct, gfp) {
            return r;
        }
        if let Some(r) = alloc_limit(k, ctx, zl, order, PAGES_LOW, direct, gfp) {
            return r;
        }
        wakeup_kswapd(k);
        if gfp.direct_reclaim {
            // SCHED_YIELD; schedule()
            k.charge(ctx, KFunc::Schedule, k.cost.context_switch);
        }
        if let Some(r) = alloc_limit(k, ctx, zl, order, PAGES_MIN, direct, gfp) {
            return r;
        }
        if !ctx.in_reclaim && gfp.direct_reclaim && (order == 0 || free_shortage(k).is_some()) {
            if !reclaimed {
                reclaimed = true;
                try_to_free_pages(k, ctx);
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
            if let Some(p) = super::scan::reclaim_page(k, ctx, z) {
                k.ev.inc(Vm::PgstealDirect);
                return got(k, ctx, z, p, gfp, order);
            }
        }
        if zone_free(k, z) < k.zones[z].wmark[PAGES_MIN] / 4 && !ctx.in_reclaim {
            continue;
        }
        if let Some(p) = rmqueue(k, z, order, gfp) {
            return got(k, ctx, z, p, gfp, order);
        }
    }
    Err(AllocFail::NoMemory)
}
