//! SLUB slab pages for atomic network receive (`mm/slub.c` `allocate_slab`), fed by a
//! rate-driven softirq source (`[[netrx]]`). A receive burst needs a new kmalloc-2048/4096 slab:
//! SLUB first asks for its preferred order (3: 32 KiB) with `__GFP_NOWARN | __GFP_NORETRY` in
//! atomic context, and on failure falls back to the minimum order that holds one object. The
//! slab page goes back to the buddy allocator when its objects are freed — after `lifetime`.
//! Nothing here decides fragmentation or kswapd's behaviour: the atomic allocation goes through
//! the ordinary allocator and its slow path wakes kswapd at the slab's order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;
use crate::page_alloc::Gfp;
use crate::stats::kfunc::KFunc;

/// `oo_order(s->min)`: one kmalloc-2048/4096 object fits an order-0 page.
pub const SLUB_MIN_ORDER: u32 = 0;

/// One `[[netrx]]` source: objects (skb data) allocated as a Poisson stream, each freed after
/// its lifetime. With `object` smaller than the slab, the objects share SLUB slabs of the
/// source's order (a kmalloc cache): a slab is refilled from the partial list and goes back to
/// the buddy allocator only when its last object is freed. Without it every arrival is a
/// whole slab of its own.
#[derive(Clone, Debug)]
pub struct NetRx {
    /// Mean arrivals per second.
    pub rate: u64,
    pub order: u32,
    pub lifetime_ns: u64,
    /// Lifetimes exponentially distributed with mean `lifetime_ns` (else all equal).
    pub exp_lifetime: bool,
    pub node: usize,
    /// Object size in bytes (0: one object a slab).
    pub object: u64,
    /// Bursty traffic: arrivals only during the first `on_ns` of every `on_ns + off_ns` (0: always).
    pub on_ns: u64,
    pub off_ns: u64,
    /// The socket reader consumes this many packets a second, in arrival order (0: no queue): a
    /// packet is freed after its `lifetime` and after the packets before it were consumed, so a
    /// burst faster than the reader piles up in the receive queue.
    pub drain: u64,
    /// When the reader consumed the last queued packet.
    pub last_free: u64,
    /// The kmalloc cache the objects share (None: one object a slab).
    pub cache: Option<KmemCache>,
    /// Objects alive: (free time, arrival number, slab pfn, slab order), soonest first.
    pub live: BinaryHeap<Reverse<(u64, u64, Pfn, u32)>>,
    pub arrivals: u64,
    /// Slabs allocated at the preferred order / at the fallback order / not at all (packet dropped).
    pub allocated: u64,
    pub fallback: u64,
    pub failed: u64,
}

impl NetRx {
    pub fn new(rate: u64, order: u32, lifetime_ns: u64, node: usize) -> NetRx {
        NetRx {
            rate,
            order,
            lifetime_ns,
            exp_lifetime: false,
            node,
            object: 0,
            on_ns: 0,
            off_ns: 0,
            drain: 0,
            last_free: 0,
            cache: None,
            live: BinaryHeap::new(),
            arrivals: 0,
            allocated: 0,
            fallback: 0,
            failed: 0,
        }
    }

    /// Time to the next arrival: exponential with mean 1/rate (inverse transform on `k.rng`).
    pub fn next_gap(&self, k: &mut Kernel) -> u64 {
        let u = crate::dist::uniform01(&mut k.rng).max(1e-12);
        let gap = -crate::dist::ln(u) * 1e9 / self.rate.max(1) as f64;
        (gap as u64).max(1)
    }

    /// Is `now` in the silent part of a burst period? The softirq still runs then (the reader
    /// keeps consuming the queue) but no packet arrives.
    fn silent(&self, now: u64) -> bool {
        let period = self.on_ns + self.off_ns;
        self.off_ns > 0 && now % period >= self.on_ns
    }

    /// The softirq at time `ctx.now`: free the objects whose time is over, then allocate one.
    pub fn interrupt(&mut self, k: &mut Kernel, ctx: &mut Ctx) {
        let mut cache = self.cache.take();
        self.interrupt_with(k, ctx, cache.as_mut());
        self.cache = cache;
    }

    fn interrupt_with(&mut self, k: &mut Kernel, ctx: &mut Ctx, cache: Option<&mut KmemCache>) {
        if self.silent(ctx.now) {
            self.expire(k, ctx, cache);
            return;
        }
        let life = if self.exp_lifetime {
            let u = crate::dist::uniform01(&mut k.rng).max(1e-12);
            (-crate::dist::ln(u) * self.lifetime_ns as f64) as u64
        } else {
            self.lifetime_ns
        };
        let free_at = if let Some(gap) = 1_000_000_000u64.checked_div(self.drain) {
            self.last_free = (ctx.now + life).max(self.last_free + gap);
            self.last_free
        } else {
            ctx.now + life
        };
        self.arrivals += 1;
        match cache {
            Some(c) => {
                self.expire(k, ctx, Some(&mut *c));
                let (slabs, fb) = (c.slabs, c.order_fallback);
                match c.alloc(k, ctx) {
                    Some(p) => {
                        self.allocated += c.slabs - slabs;
                        self.fallback += c.order_fallback - fb;
                        self.live.push(Reverse((free_at, self.arrivals, p, 0)));
                    }
                    None => self.failed += 1,
                }
            }
            None => {
                self.expire(k, ctx, None);
                match allocate_slab(k, ctx, self.order) {
                    Some((p, o)) => {
                        if o == self.order {
                            self.allocated += 1;
                        } else {
                            self.fallback += 1;
                        }
                        self.live.push(Reverse((free_at, self.arrivals, p, o)));
                    }
                    None => self.failed += 1,
                }
            }
        }
    }

    /// Free every object whose lifetime is over (`kfree`, or `__free_slab` for whole slabs).
    pub fn expire(&mut self, k: &mut Kernel, ctx: &mut Ctx, mut cache: Option<&mut KmemCache>) {
        while let Some(&Reverse((t, _, p, o))) = self.live.peek() {
            if t > ctx.now {
                break;
            }
            self.live.pop();
            match cache.as_deref_mut() {
                Some(c) => {
                    c.free(k, ctx, p);
                }
                None => free_slab(k, ctx, p, o),
            }
        }
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

/// `slub_max_order` (PAGE_ALLOC_COSTLY_ORDER) and `MAX_OBJS_PER_PAGE`.
const SLUB_MAX_ORDER: u32 = 3;
const PAGE_SIZE: u64 = 4096;

fn fls(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// 2.6.36 `slab_order`: the smallest order from which `min_objects` objects fit with at most
/// 1/`fract_leftover` of the slab wasted.
fn slab_order(size: u64, min_objects: u64, max_order: u32, fract_leftover: u64) -> u32 {
    let mut order = fls(min_objects * size - 1).saturating_sub(12);
    while order <= max_order {
        let slab = PAGE_SIZE << order;
        if slab >= min_objects * size && slab % size <= slab / fract_leftover {
            break;
        }
        order += 1;
    }
    order
}

/// 2.6.36 `calculate_order`: aim for 4·(fls(nr_cpu_ids)+1) objects a slab, relaxing the waste
/// limit and then the object count until an order ≤ slub_max_order fits.
pub fn calculate_order(size: u64, nr_cpus: u64) -> u32 {
    let max_objects = ((PAGE_SIZE << SLUB_MAX_ORDER) / size).max(1);
    let mut min_objects = (4 * (fls(nr_cpus) as u64 + 1)).min(max_objects);
    while min_objects > 1 {
        let mut fraction = 16;
        while fraction >= 4 {
            let order = slab_order(size, min_objects, SLUB_MAX_ORDER, fraction);
            if order <= SLUB_MAX_ORDER {
                return order;
            }
            fraction /= 2;
        }
        min_objects -= 1;
    }
    slab_order(size, 1, crate::mmzone::MAX_ORDER as u32 - 1, 1)
}

/// A SLUB cache of small kernel objects (`struct kmem_cache` with one node). A slab page's
/// object count lives in its head frame: `index` = objects in use, `aux` = the slab's order;
/// the partial list is threaded through the head frames' `next`/`prev` (a slab page is on no
/// LRU, buddy or pcp list). Objects are handles: the pfn of the slab that holds them. A slab
/// goes back to the buddy allocator only when its last object is freed, so long-lived
/// objects scattered over many slabs pin those pages wherever they were allocated.
#[derive(Clone, Debug)]
pub struct KmemCache {
    pub name: &'static str,
    pub size: u64,
    /// `oo`: the preferred order; `min`: the order that holds one object.
    pub order: u32,
    pub min_order: u32,
    /// `__GFP_RECLAIMABLE` for SLAB_RECLAIM_ACCOUNT caches (dentry, inode).
    pub mt: crate::mmzone::Mt,
    pub partial: crate::mm_types::List,
    /// The CPU slab (frozen: neither on the partial list nor discarded while it is the CPU slab).
    pub cpu_slab: Pfn,
    pub pages: u64,
    pub objects: u64,
    /// Slabs allocated at the preferred order, and at `min` because that failed.
    pub slabs: u64,
    pub order_fallback: u64,
    /// GFP_ATOMIC (network receive): no reclaim, ALLOC_HARDER; else GFP_KERNEL/NOFS.
    pub atomic: bool,
}

impl KmemCache {
    pub fn new(name: &'static str, size: u64, nr_cpus: u64, mt: crate::mmzone::Mt) -> KmemCache {
        let size = size.clamp(8, PAGE_SIZE << SLUB_MAX_ORDER);
        KmemCache {
            name,
            size,
            order: calculate_order(size, nr_cpus),
            min_order: fls((size - 1) >> 12),
            mt,
            partial: Default::default(),
            cpu_slab: crate::mm_types::NIL,
            pages: 0,
            objects: 0,
            slabs: 0,
            order_fallback: 0,
            atomic: false,
        }
    }

    /// A kmalloc cache for atomic allocations with a fixed slab order (the `[[netrx]]` source's).
    pub fn kmalloc_atomic(size: u64, order: u32) -> KmemCache {
        let mut c = KmemCache::new("kmalloc", size, 1, crate::mmzone::Mt::Unmovable);
        c.order = order.max(c.min_order);
        c.atomic = true;
        c
    }

    fn capacity(&self, order: u32) -> u32 {
        ((PAGE_SIZE << order) / self.size) as u32
    }

    /// `slab_alloc`: an object from the CPU slab, else the first partial slab, else a new slab
    /// (`new_slab` → `allocate_slab`: `oo` with NOWARN|NORETRY, then `min`). None when no page
    /// could be had.
    pub fn alloc(&mut self, k: &mut Kernel, ctx: &mut Ctx) -> Option<Pfn> {
        use crate::mm_types::NIL;
        let c = self.cpu_slab;
        if c != NIL && k.fr.index[c as usize] < self.capacity(k.fr.aux[c as usize] as u32) {
            k.fr.index[c as usize] += 1;
            self.objects += 1;
            return Some(c);
        }
        // A full CPU slab is deactivated onto no list: it comes back via the partial list when
        // one of its objects is freed.
        self.cpu_slab = NIL;
        let p = match self.partial.pop_head(&mut k.fr) {
            Some(p) => p,
            None => {
                k.charge(ctx, KFunc::SlabAlloc, k.cost.page_alloc);
                let gfp = if self.atomic {
                    Gfp::atomic()
                } else {
                    Gfp {
                        highest: crate::mmzone::ZoneType::Normal,
                        direct_reclaim: true,
                        atomic: false,
                        noretry: true,
                        mt: self.mt,
                        cold: false,
                    }
                };
                let (p, o) = match k.alloc_pages(ctx, gfp, self.order) {
                    Ok(p) => {
                        self.slabs += 1;
                        (p, self.order)
                    }
                    Err(_) if self.order > self.min_order => {
                        let p = k.alloc_pages(ctx, Gfp { noretry: self.atomic, ..gfp }, self.min_order).ok()?;
                        self.order_fallback += 1;
                        (p, self.min_order)
                    }
                    Err(_) => return None,
                };
                for i in 0..1u32 << o {
                    k.fr.set(p + i, crate::mm_types::pg::SLAB);
                }
                k.fr.aux[p as usize] = o as u8;
                k.fr.index[p as usize] = 0;
                k.g.slab += 1 << o;
                self.pages += 1 << o;
                p
            }
        };
        self.cpu_slab = p;
        k.fr.index[p as usize] += 1;
        self.objects += 1;
        Some(p)
    }

    /// `slab_free` of an object of slab `p`: a full slab goes to the partial list's tail, an
    /// empty one (not the CPU slab) back to the buddy allocator. Returns the pages freed.
    pub fn free(&mut self, k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> u64 {
        let o = k.fr.aux[p as usize] as u32;
        let was_full = k.fr.index[p as usize] >= self.capacity(o);
        k.fr.index[p as usize] -= 1;
        self.objects -= 1;
        if p == self.cpu_slab {
            return 0;
        }
        if k.fr.index[p as usize] == 0 {
            if !was_full {
                self.partial.remove(&mut k.fr, p);
            }
            self.pages -= 1 << o;
            free_slab(k, ctx, p, o);
            return 1 << o;
        }
        if was_full {
            self.partial.push_tail(&mut k.fr, p);
        }
        0
    }
}
