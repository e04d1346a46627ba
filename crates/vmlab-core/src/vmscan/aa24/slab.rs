//! 2.4.23's slab side of reclaim, as the aa engine sees it: the `buffer_head` cache that file
//! reads fill (`block_read_full_page` → `create_empty_buffers`), `try_to_release_page` giving a
//! clean page's buffer heads back, and `kmem_cache_reap` returning wholly free slab pages to the
//! allocator — pages `shrink_caches` and `shrink_cache`'s mapped-page branch subtract from
//! `nr_pages` (2.4.23 `mm/vmscan.c`, `mm/slab.c`).
//!
//! Reconstructed, and chosen so that reaping is *over*-estimated rather than under: objects are
//! taken as packed (2.4's allocator refills `slabs_partial` before taking a free slab, so holes
//! are refilled; the free slabs are the slab pages beyond what the live objects need), and the
//! `buffer_head` cache is the only reapable cache, considered by every `kmem_cache_reap` call
//! (the kernel looks at `REAP_SCANLEN` = 10 caches per call from a clock hand). The dentry and
//! inode caches are empty in the seed's workload (a few files, no `[fs]` table): their
//! shrinkers are charged their cost and free nothing.

use super::Aa24State;
use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::stats::kfunc::KFunc;

/// `fr.extra` bit: the page has buffer heads (`page->buffers`); the other bits count pins.
pub const BUFFERS: u8 = 0x80;

/// The `buffer_head` cache.
#[derive(Default)]
pub struct BhCache {
    /// Slab pages, in use or free (`slabs_full` + `slabs_partial` + `slabs_free`).
    pages: Vec<Pfn>,
    /// Live buffer heads.
    pub live: u64,
    /// `DFLGS_GROWN`: the cache grew since `kmem_cache_reap` last looked; it is skipped once.
    grown: bool,
    pub stats: BhStats,
}

#[derive(Clone, Debug, Default)]
pub struct BhStats {
    pub grown: u64,
    pub reaped: u64,
    pub grow_failed: u64,
    pub released: u64,
    pub reap_calls: u64,
    pub max_pages: u64,
}

fn per_page(k: &Kernel) -> u64 {
    k.profile.bh_per_slab_page.max(1) as u64
}

fn cache(k: &mut Kernel) -> &mut BhCache {
    &mut k.reclaim.aa24_mut().bh
}

#[inline]
pub fn has_buffers(k: &Kernel, p: Pfn) -> bool {
    k.fr.extra[p as usize] & BUFFERS != 0
}

/// `page_count` beyond the cache reference and the PTEs, not counting the buffers.
#[inline]
pub fn pins(k: &Kernel, p: Pfn) -> u8 {
    k.fr.extra[p as usize] & !BUFFERS
}

/// A read added `p` to the page cache: one buffer head per 4 KiB block (`create_empty_buffers`).
/// The cache grows a lowmem page at a time (`kmem_cache_grow`, `SLAB_NOFS`); when no page can be
/// had the page goes without (2.4 would wait for a reserved buffer head; not modelled).
pub fn page_cache_added(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    if k.profile.bh_per_slab_page == 0 || has_buffers(k, p) || k.fr.has(p, pg::SWAPBACKED) {
        return;
    }
    let per = per_page(k);
    if cache(k).live >= cache(k).pages.len() as u64 * per {
        let gfp = crate::page_alloc::Gfp { noretry: true, ..crate::page_alloc::Gfp::kernel() };
        let throttle = ctx.throttle_until;
        match k.alloc_pages(ctx, gfp, 0) {
            Ok(s) => {
                k.fr.set(s, pg::SLAB);
                k.g.slab += 1;
                let c = cache(k);
                c.pages.push(s);
                c.grown = true;
                c.stats.grown += 1;
                c.stats.max_pages = c.stats.max_pages.max(c.pages.len() as u64);
            }
            Err(_) => {
                ctx.throttle_until = throttle;
                cache(k).stats.grow_failed += 1;
                return;
            }
        }
    }
    k.fr.extra[p as usize] |= BUFFERS;
    cache(k).live += 1;
}

/// `try_to_release_page` → `try_to_free_buffers` on a clean, unlocked page: its buffer heads go
/// back to the cache (the slab page stays with the cache until it is reaped).
pub fn try_to_release_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    if !has_buffers(k, p) {
        return;
    }
    k.fr.extra[p as usize] &= !BUFFERS;
    let c = cache(k);
    c.live = c.live.saturating_sub(1);
    c.stats.released += 1;
    k.charge(ctx, KFunc::TryToFreeBuffers, k.cost.lru_scan * 2);
}

/// `kmem_cache_reap`: the cache with the most free slabs gives back half of them, rounded up;
/// a cache that grew since the last call is skipped once. Returns the pages freed.
pub fn kmem_cache_reap(k: &mut Kernel, ctx: &mut Ctx) -> u64 {
    k.charge(ctx, KFunc::KmemCacheReap, k.cost.syscall * 2);
    let per = per_page(k);
    let c = cache(k);
    c.stats.reap_calls += 1;
    if c.grown {
        c.grown = false;
        return 0;
    }
    let needed = c.live.div_ceil(per) as usize;
    let free = c.pages.len().saturating_sub(needed);
    let n = free.div_ceil(2);
    for _ in 0..n {
        let Some(s) = cache(k).pages.pop() else { break };
        k.fr.clear(s, pg::SLAB);
        k.g.slab -= 1;
        k.free_pages(ctx, s, 0);
    }
    let c = cache(k);
    c.stats.reaped += n as u64;
    n as u64
}

/// `shrink_dcache_memory` / `shrink_icache_memory` (`vm_vfs_scan_ratio`): nothing to prune here.
pub fn shrink_vfs_caches(k: &mut Kernel, ctx: &mut Ctx) {
    k.charge(ctx, KFunc::KmemCacheReap, k.cost.syscall * 2);
}

impl Aa24State {
    pub fn bh_stats(&self) -> &BhStats {
        &self.bh.stats
    }
}
