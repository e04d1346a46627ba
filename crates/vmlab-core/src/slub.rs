//! SLUB slab pages for atomic network receive (`mm/slub.c` `allocate_slab`), fed by a
//! rate-driven softirq source (`[[netrx]]`). A receive burst needs a new kmalloc-2048/4096 slab:
//! SLUB first asks for its preferred order (3: 32 KiB) with `__GFP_NOWARN | __GFP_NORETRY` in
//! atomic context, and on failure falls back to the minimum order that holds one object. The
//! slab page goes back to the buddy allocator when its objects are freed — after `lifetime`.
//! Nothing here decides fragmentation or kswapd's behaviour: the atomic allocation goes through
//! the ordinary allocator and its slow path wakes kswapd at the slab's order.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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
    /// (parts per million, mean ns): packets for slow readers, held for an exponential time.
    pub slow: Option<(u32, u64)>,
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
    /// The kmalloc cache the objects share (None: one object a slab). Boxed, as the softirq
    /// takes the caches out of the source for every packet.
    pub cache: Option<Box<KmemCache>>,
    /// `skbuff_head_cache`: with it every packet is an skb, its `struct sk_buff` from this
    /// cache and its data from `cache` (`__alloc_skb`), both freed when it is consumed.
    pub head_cache: Option<Box<KmemCache>>,
    /// Objects alive: (free time, arrival number, slab pfn, slab order — or, with a cache, the
    /// head object's slab or NIL), soonest first.
    pub live: LiveObjects,
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
            slow: None,
            node,
            object: 0,
            on_ns: 0,
            off_ns: 0,
            drain: 0,
            last_free: 0,
            cache: None,
            head_cache: None,
            live: LiveObjects::default(),
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
        let mut head = self.head_cache.take();
        self.interrupt_with(k, ctx, cache.as_deref_mut(), head.as_deref_mut());
        self.cache = cache;
        self.head_cache = head;
    }

    fn interrupt_with(
        &mut self,
        k: &mut Kernel,
        ctx: &mut Ctx,
        cache: Option<&mut KmemCache>,
        mut head: Option<&mut KmemCache>,
    ) {
        if self.silent(ctx.now) {
            self.expire(k, ctx, cache, head);
            return;
        }
        // A slow reader's packet waits in its socket queue; the draw is made only when slow
        // readers are configured, so sources without them see the same random stream.
        let slow_life = self.slow.and_then(|(ppm, mean)| {
            let u = crate::dist::uniform01(&mut k.rng);
            (u * 1e6 < ppm as f64).then(|| {
                let v = crate::dist::uniform01(&mut k.rng).max(1e-12);
                (-crate::dist::ln(v) * mean as f64) as u64
            })
        });
        let life = if let Some(l) = slow_life {
            l
        } else if self.exp_lifetime {
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
                self.expire(k, ctx, Some(&mut *c), head.as_deref_mut());
                let h = match head.as_deref_mut() {
                    Some(h) => match h.alloc(k, ctx) {
                        Some(hp) => hp,
                        None => {
                            self.failed += 1;
                            return;
                        }
                    },
                    None => crate::mm_types::NIL,
                };
                let (slabs, fb) = (c.slabs, c.order_fallback);
                match c.alloc(k, ctx) {
                    Some(p) => {
                        self.allocated += c.slabs - slabs;
                        self.fallback += c.order_fallback - fb;
                        self.live.push((free_at, self.arrivals, p, h));
                    }
                    None => {
                        // `__alloc_skb` frees the head when the data allocation fails.
                        if let Some(hc) = head {
                            hc.free(k, ctx, h);
                        }
                        self.failed += 1;
                    }
                }
            }
            None => {
                self.expire(k, ctx, None, None);
                match allocate_slab(k, ctx, self.order) {
                    Some((p, o)) => {
                        if o == self.order {
                            self.allocated += 1;
                        } else {
                            self.fallback += 1;
                        }
                        self.live.push((free_at, self.arrivals, p, o));
                    }
                    None => self.failed += 1,
                }
            }
        }
    }

    /// Free every object whose lifetime is over (`kfree`, or `__free_slab` for whole slabs).
    pub fn expire(
        &mut self,
        k: &mut Kernel,
        ctx: &mut Ctx,
        mut cache: Option<&mut KmemCache>,
        mut head: Option<&mut KmemCache>,
    ) {
        while let Some((_, _, p, o)) = self.live.pop_due(ctx.now) {
            match cache.as_deref_mut() {
                Some(c) => {
                    c.free(k, ctx, p);
                    if let Some(h) = head.as_deref_mut() {
                        h.free(k, ctx, o);
                    }
                }
                None => free_slab(k, ctx, p, o),
            }
        }
    }
}

/// A live object: (free time, arrival number, slab pfn, order or head slab).
pub type LiveObject = (u64, u64, Pfn, u32);

/// The live objects of a source as a priority queue on (free time, arrival number). With one
/// lifetime for every packet, objects expire in arrival order, so almost every push lands
/// behind the last and a FIFO serves them; an object that would expire before the FIFO's last
/// (exponential or slow-reader lifetimes) goes to a heap beside it. The smaller head of the two
/// is served first, so the order is the one a single heap gives: the keys are unique.
#[derive(Clone, Debug, Default)]
pub struct LiveObjects {
    fifo: VecDeque<LiveObject>,
    heap: BinaryHeap<Reverse<LiveObject>>,
}

impl LiveObjects {
    pub fn push(&mut self, o: LiveObject) {
        match self.fifo.back() {
            Some(last) if o < *last => self.heap.push(Reverse(o)),
            _ => self.fifo.push_back(o),
        }
    }

    /// The soonest object if it is due at `now`, taken out.
    pub fn pop_due(&mut self, now: u64) -> Option<LiveObject> {
        let from_heap = match (self.fifo.front(), self.heap.peek()) {
            (Some(f), Some(Reverse(h))) => h < f,
            (None, Some(_)) => true,
            (_, None) => false,
        };
        if from_heap {
            let Reverse(h) = self.heap.peek()?;
            if h.0 > now {
                return None;
            }
            self.heap.pop().map(|Reverse(h)| h)
        } else {
            if self.fifo.front()?.0 > now {
                return None;
            }
            self.fifo.pop_front()
        }
    }

    pub fn len(&self) -> usize {
        self.fifo.len() + self.heap.len()
    }

    /// Every live object, in no particular order (for observers that map objects to pages).
    pub fn iter(&self) -> impl Iterator<Item = &LiveObject> {
        self.fifo.iter().chain(self.heap.iter().map(|Reverse(o)| o))
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty() && self.heap.is_empty()
    }
}

/// `struct sk_buff` on 2.6.36 x86-64 (about 232 bytes), cache-line aligned in
/// `skbuff_head_cache`.
pub const SKB_HEAD_BYTES: u64 = 256;

/// The `kmalloc` size of a receive buffer for `mtu` as bnx2 asks for it (2.6.36
/// `bnx2_set_rx_ring_size`: MTU + Ethernet header + the chip's frame header and alignment;
/// `__alloc_skb`: + NET_SKB_PAD, rounded to a cache line, + `struct skb_shared_info`, about
/// 330 bytes with 18 fragments). MTU 1500 gives about 2 KB: kmalloc-2048.
pub fn skb_rx_data_bytes(mtu: u64) -> u64 {
    let buf = mtu + 14 + 18 + 8 + 16 + 64;
    buf.div_ceil(64) * 64 + 330
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

/// The boot parameters `slub_max_order`, `slub_min_objects` and `slub_min_order` (2.6.36
/// defaults: PAGE_ALLOC_COSTLY_ORDER, 0 = from the CPU count, 0). A scenario's `[slub]` sets them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlubTunables {
    pub max_order: u32,
    pub min_objects: u32,
    pub min_order: u32,
}

impl Default for SlubTunables {
    fn default() -> Self {
        SlubTunables { max_order: 3, min_objects: 0, min_order: 0 }
    }
}

const PAGE_SIZE: u64 = 4096;
/// `MAX_OBJS_PER_PAGE`: `page->objects` is 16 bits wide.
const MAX_OBJS_PER_PAGE: u64 = 65535;

fn fls(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// 2.6.36 `slab_order`: the smallest order from `slub_min_order` up at which `min_objects`
/// objects fit with at most 1/`fract_leftover` of the slab wasted.
fn slab_order(size: u64, min_objects: u64, max_order: u32, fract_leftover: u64, min_order: u32) -> u32 {
    if (PAGE_SIZE << min_order) / size > MAX_OBJS_PER_PAGE {
        return fls(size * MAX_OBJS_PER_PAGE - 1).saturating_sub(12).saturating_sub(1);
    }
    let mut order = min_order.max(fls(min_objects * size - 1).saturating_sub(12));
    while order <= max_order {
        let slab = PAGE_SIZE << order;
        if slab >= min_objects * size && slab % size <= slab / fract_leftover {
            break;
        }
        order += 1;
    }
    order
}

/// 2.6.36 `calculate_order`: aim for `slub_min_objects` (default 4·(fls(nr_cpu_ids)+1)) objects
/// a slab, relaxing the waste limit and then the object count until an order ≤ `slub_max_order`
/// fits; a single object may go up to MAX_ORDER.
pub fn calculate_order_with(size: u64, nr_cpus: u64, t: SlubTunables) -> u32 {
    let mut min_objects = if t.min_objects > 0 { t.min_objects as u64 } else { 4 * (fls(nr_cpus) as u64 + 1) };
    let max_objects = ((PAGE_SIZE << t.max_order) / size).max(1);
    min_objects = min_objects.min(max_objects);
    while min_objects > 1 {
        let mut fraction = 16;
        while fraction >= 4 {
            let order = slab_order(size, min_objects, t.max_order, fraction, t.min_order);
            if order <= t.max_order {
                return order;
            }
            fraction /= 2;
        }
        min_objects -= 1;
    }
    let order = slab_order(size, 1, t.max_order, 1, t.min_order);
    if order <= t.max_order {
        return order;
    }
    slab_order(size, 1, crate::mmzone::MAX_ORDER as u32 - 1, 1, t.min_order)
}

/// `calculate_order` with the default boot parameters.
pub fn calculate_order(size: u64, nr_cpus: u64) -> u32 {
    calculate_order_with(size, nr_cpus, SlubTunables::default())
}

/// `set_min_partial(s, ilog2(s->size))`: empty slabs a node keeps on its partial list, 5 to 10.
pub fn min_partial(size: u64) -> u64 {
    (fls(size) as u64 - 1).clamp(5, 10)
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
    pub nr_partial: u64,
    /// `s->min_partial`: empty slabs kept on the partial list when a CPU slab is deactivated.
    pub min_partial: u64,
    /// `kmem_cache_cpu.page` per CPU (frozen: neither on the partial list nor discarded while
    /// it is a CPU slab), indexed by the allocating CPU.
    pub cpu_slab: Vec<Pfn>,
    pub pages: u64,
    pub objects: u64,
    /// Slabs allocated at the preferred order, and at `min` because that failed.
    pub slabs: u64,
    pub order_fallback: u64,
    /// GFP_ATOMIC (network receive): no reclaim, ALLOC_HARDER; else GFP_KERNEL/NOFS.
    pub atomic: bool,
    /// GFP_NOWAIT: no direct reclaim, no ALLOC_HARDER (`kmem.rs`, which has no task).
    pub nowait: bool,
}

impl KmemCache {
    pub fn new(name: &'static str, size: u64, nr_cpus: u64, mt: crate::mmzone::Mt) -> KmemCache {
        KmemCache::with_tunables(name, size, nr_cpus, mt, SlubTunables::default())
    }

    pub fn with_tunables(
        name: &'static str,
        size: u64,
        nr_cpus: u64,
        mt: crate::mmzone::Mt,
        t: SlubTunables,
    ) -> KmemCache {
        let size = size.clamp(8, PAGE_SIZE << t.max_order.max(3));
        KmemCache {
            name,
            size,
            order: calculate_order_with(size, nr_cpus, t),
            min_order: fls((size - 1) >> 12),
            mt,
            partial: Default::default(),
            nr_partial: 0,
            min_partial: min_partial(size),
            cpu_slab: vec![crate::mm_types::NIL; nr_cpus.max(1) as usize],
            pages: 0,
            objects: 0,
            slabs: 0,
            order_fallback: 0,
            atomic: false,
            nowait: false,
        }
    }

    /// A kmalloc cache for atomic allocations with a fixed slab order (the `[[netrx]]` source's).
    pub fn kmalloc_atomic(size: u64, order: u32) -> KmemCache {
        let mut c = KmemCache::new("kmalloc", size, 1, crate::mmzone::Mt::Unmovable);
        c.order = order.max(c.min_order);
        c.atomic = true;
        c
    }

    /// `kmalloc-N` as `kmem_cache_init` creates it: the power-of-two size class holding
    /// `bytes`, its order from `calculate_order`, used from softirq with GFP_ATOMIC.
    pub fn kmalloc(bytes: u64, nr_cpus: u64, t: SlubTunables) -> KmemCache {
        let size = bytes.max(8).next_power_of_two();
        let mut c = KmemCache::with_tunables("kmalloc", size, nr_cpus, crate::mmzone::Mt::Unmovable, t);
        c.atomic = true;
        c
    }

    fn capacity(&self, order: u32) -> u32 {
        ((PAGE_SIZE << order) / self.size) as u32
    }

    fn is_cpu_slab(&self, p: Pfn) -> bool {
        self.cpu_slab.contains(&p)
    }

    /// `slab_alloc` on `ctx.cpu`: an object from the CPU slab, else the first partial slab, else
    /// a new slab (`new_slab` → `allocate_slab`: `oo` with NOWARN|NORETRY, then `min`). None
    /// when no page could be had.
    pub fn alloc(&mut self, k: &mut Kernel, ctx: &mut Ctx) -> Option<Pfn> {
        use crate::mm_types::NIL;
        let cpu = ctx.cpu as usize % self.cpu_slab.len();
        let c = self.cpu_slab[cpu];
        if c != NIL && k.fr.index[c as usize] < self.capacity(k.fr.aux[c as usize] as u32) {
            k.fr.index[c as usize] += 1;
            self.objects += 1;
            return Some(c);
        }
        // `deactivate_slab` → `unfreeze_slab`: a full CPU slab goes onto no list (it comes back
        // via the partial list when one of its objects is freed); an empty one stays on the
        // partial list's tail while the node has fewer than `min_partial`, else is discarded.
        self.cpu_slab[cpu] = NIL;
        if c != NIL && k.fr.index[c as usize] == 0 {
            if self.nr_partial < self.min_partial {
                self.partial.push_tail(&mut k.fr, c);
                self.nr_partial += 1;
            } else {
                let o = k.fr.aux[c as usize] as u32;
                self.pages -= 1 << o;
                free_slab(k, ctx, c, o);
            }
        }
        let p = match self.partial.pop_head(&mut k.fr) {
            Some(p) => {
                self.nr_partial -= 1;
                p
            }
            None => {
                k.charge(ctx, KFunc::SlabAlloc, k.cost.page_alloc);
                let gfp = if self.atomic {
                    Gfp::atomic()
                } else {
                    Gfp {
                        highest: crate::mmzone::ZoneType::Normal,
                        direct_reclaim: !self.nowait,
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
        self.cpu_slab[cpu] = p;
        k.fr.index[p as usize] += 1;
        self.objects += 1;
        Some(p)
    }

    /// `slab_free` of an object of slab `p`: a full slab goes to the partial list's tail, an
    /// empty one (not a CPU slab) back to the buddy allocator (2.6.36 `__slab_free` discards
    /// it whatever `min_partial` says). Returns the pages freed.
    pub fn free(&mut self, k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> u64 {
        let o = k.fr.aux[p as usize] as u32;
        let was_full = k.fr.index[p as usize] >= self.capacity(o);
        k.fr.index[p as usize] -= 1;
        self.objects -= 1;
        if self.is_cpu_slab(p) {
            return 0;
        }
        if k.fr.index[p as usize] == 0 {
            if !was_full {
                self.partial.remove(&mut k.fr, p);
                self.nr_partial -= 1;
            }
            self.pages -= 1 << o;
            free_slab(k, ctx, p, o);
            return 1 << o;
        }
        if was_full {
            self.partial.push_tail(&mut k.fr, p);
            self.nr_partial += 1;
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Served in the order one heap of (time, arrival) gives, whether the pushes come in order
    /// (one lifetime) or not (exponential lifetimes, slow readers).
    #[test]
    fn live_objects_expire_in_heap_order() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for spread in [0u64, 50, 5_000] {
            let (mut live, mut heap) = (LiveObjects::default(), BinaryHeap::new());
            let (mut got, mut want) = (Vec::new(), Vec::new());
            let mut now = 0u64;
            for arrival in 0..20_000u64 {
                now += rnd() % 100;
                let free_at = now + 1_000 + if spread > 0 { rnd() % spread } else { 0 };
                let o = (free_at, arrival, (arrival % 7) as Pfn, 3);
                live.push(o);
                heap.push(Reverse(o));
                while let Some(o) = live.pop_due(now) {
                    got.push(o);
                }
                while heap.peek().is_some_and(|Reverse(o)| o.0 <= now) {
                    want.push(heap.pop().expect("peeked").0);
                }
                assert_eq!(live.len(), heap.len());
            }
            assert_eq!(got, want, "spread {spread}");
            assert!(!live.is_empty());
        }
    }
}
