//! SLUB slab pages for atomic network receive (`mm/slub.c` `allocate_slab`), fed by a
//! rate-driven softirq source (`[[netrx]]`). A receive burst needs a new kmalloc-2048/4096 slab:
//! SLUB first asks for its preferred order (3: 32 KiB) with `__GFP_NOWARN | __GFP_NORETRY` in
//! atomic context, and on failure falls back to the minimum order that holds one object. The
//! slab page goes back to the buddy allocator when its objects are freed — after `lifetime`.
//! Nothing here decides fragmentation or kswapd's behaviour: the atomic allocation goes through
//! the ordinary allocator and its slow path wakes kswapd at the slab's order.

use std::collections::VecDeque;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;
use crate::page_alloc::Gfp;
use crate::stats::kfunc::KFunc;

/// `oo_order(s->min)`: one kmalloc-2048/4096 object fits an order-0 page.
pub const SLUB_MIN_ORDER: u32 = 0;

/// One `[[netrx]]` source: slab allocations arriving as a Poisson stream.
#[derive(Clone, Debug)]
pub struct NetRx {
    /// Mean arrivals per second.
    pub rate: u64,
    pub order: u32,
    pub lifetime_ns: u64,
    pub node: usize,
    /// Slabs alive: (free time, pfn, order), in free-time order (the lifetime is constant).
    pub live: VecDeque<(u64, Pfn, u32)>,
    /// Slabs allocated at the preferred order / at the fallback order / not at all (packet dropped).
    pub allocated: u64,
    pub fallback: u64,
    pub failed: u64,
}

impl NetRx {
    pub fn new(rate: u64, order: u32, lifetime_ns: u64, node: usize) -> NetRx {
        NetRx { rate, order, lifetime_ns, node, live: VecDeque::new(), allocated: 0, fallback: 0, failed: 0 }
    }

    /// Time to the next arrival: exponential with mean 1/rate (inverse transform on `k.rng`).
    pub fn next_gap(&self, k: &mut Kernel) -> u64 {
        let u = crate::dist::uniform01(&mut k.rng).max(1e-12);
        let gap = -crate::dist::ln(u) * 1e9 / self.rate.max(1) as f64;
        (gap as u64).max(1)
    }

    /// The softirq at time `ctx.now`: free the slabs whose objects are gone, then allocate one.
    pub fn interrupt(&mut self, k: &mut Kernel, ctx: &mut Ctx) {
        self.expire(k, ctx);
        match allocate_slab(k, ctx, self.order) {
            Some((p, o)) => {
                if o == self.order {
                    self.allocated += 1;
                } else {
                    self.fallback += 1;
                }
                self.live.push_back((ctx.now + self.lifetime_ns, p, o));
            }
            None => self.failed += 1,
        }
    }

    /// `__free_slab` for every slab whose lifetime is over.
    pub fn expire(&mut self, k: &mut Kernel, ctx: &mut Ctx) {
        while let Some(&(t, p, o)) = self.live.front() {
            if t > ctx.now {
                break;
            }
            self.live.pop_front();
            free_slab(k, ctx, p, o);
        }
    }

    /// When the next slab is due to be freed.
    pub fn next_expiry(&self) -> Option<u64> {
        self.live.front().map(|&(t, _, _)| t)
    }
}

/// `allocate_slab`: the preferred order with NORETRY|NOWARN in atomic context, then `s->min`.
pub fn allocate_slab(k: &mut Kernel, ctx: &mut Ctx, order: u32) -> Option<(Pfn, u32)> {
    k.charge(ctx, KFunc::SlabAlloc, k.cost.page_alloc);
    let gfp = Gfp::atomic();
    let (p, o) = match k.alloc_pages(ctx, gfp, order) {
        Ok(p) => (p, order),
        Err(_) if order > SLUB_MIN_ORDER => match k.alloc_pages(ctx, gfp, SLUB_MIN_ORDER) {
            Ok(p) => (p, SLUB_MIN_ORDER),
            Err(_) => return None,
        },
        Err(_) => return None,
    };
    for i in 0..1u32 << o {
        k.fr.set(p + i, crate::mm_types::pg::SLAB);
    }
    k.g.slab += 1 << o;
    Some((p, o))
}

/// `__free_slab`: the slab's pages go back to the buddy allocator.
pub fn free_slab(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, order: u32) {
    for i in 1..1u32 << order {
        k.fr.flags[(p + i) as usize] &= !crate::mm_types::pg::SLAB;
    }
    k.g.slab -= 1 << order;
    k.free_pages(ctx, p, order);
}
