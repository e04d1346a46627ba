//! Long-lived kernel allocations of a running server that no workload call makes: driver page
//! pools (DRBD's `alloc_page(GFP_HIGHUSER)`), pipe buffers, vmalloc areas, socket pages, and the
//! kmalloc objects of long-lived kernel state. A scenario's `[[kmem]]` source keeps a
//! population of them: objects arrive at population / lifetime a second, each lives an
//! exponential time of mean `lifetime`, so the population stays where the scenario puts it
//! while its pages turn over and are placed anew by the zonelist and the watermarks of the
//! moment. Pages, not names, decide where they land: nothing here chooses a zone.
//!
//! Whole pages are in no meminfo field (`Gauges::kmem`), as on the real machine; objects live
//! in a kmalloc cache of their size class, so their slabs count as unreclaimable slab. Both
//! are MIGRATE_UNMOVABLE. The allocations are made without direct reclaim (GFP_NOWAIT): the
//! source has no task to reclaim on behalf of. Until both zones are below MIN that places a
//! page as GFP_KERNEL's first attempts would (LOW, then MIN, same zone order).

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;
use crate::page_alloc::Gfp;
use crate::slub::{KmemCache, LiveObjects};

pub struct KmemSource {
    /// Objects alive in the steady state.
    pub population: u64,
    /// Mean lifetime of one, ns.
    pub lifetime_ns: u64,
    /// The kmalloc cache the objects come from (None: order-0 pages of their own).
    pub cache: Option<Box<KmemCache>>,
    pub live: LiveObjects,
    pub arrivals: u64,
    /// Allocations that found no page (the object is not made).
    pub failed: u64,
    /// The first event made the population the source starts with: boot-time state, its ages
    /// memoryless like the lifetimes.
    started: bool,
}

impl KmemSource {
    pub fn new(population: u64, lifetime_ns: u64, cache: Option<Box<KmemCache>>) -> KmemSource {
        KmemSource {
            population,
            lifetime_ns,
            cache,
            live: LiveObjects::default(),
            arrivals: 0,
            failed: 0,
            started: false,
        }
    }

    /// Time to the next arrival: exponential with mean lifetime / population.
    pub fn next_gap(&self, k: &mut Kernel) -> u64 {
        let u = crate::dist::uniform01(&mut k.rng).max(1e-12);
        let mean = self.lifetime_ns as f64 / self.population.max(1) as f64;
        ((-crate::dist::ln(u) * mean) as u64).max(1)
    }

    /// Free what is due, then allocate (the whole population on the first call).
    pub fn event(&mut self, k: &mut Kernel, ctx: &mut Ctx) {
        let mut cache = self.cache.take();
        self.expire(k, ctx, cache.as_deref_mut());
        let n = if self.started { 1 } else { self.population };
        self.started = true;
        for _ in 0..n {
            self.alloc_one(k, ctx, cache.as_deref_mut());
        }
        self.cache = cache;
    }

    fn alloc_one(&mut self, k: &mut Kernel, ctx: &mut Ctx, cache: Option<&mut KmemCache>) {
        let u = crate::dist::uniform01(&mut k.rng).max(1e-12);
        let free_at = ctx.now + (-crate::dist::ln(u) * self.lifetime_ns as f64) as u64;
        self.arrivals += 1;
        let p: Option<Pfn> = match cache {
            Some(c) => c.alloc(k, ctx),
            None => {
                let gfp = Gfp { direct_reclaim: false, ..Gfp::kernel() };
                k.alloc_pages(ctx, gfp, 0).ok().inspect(|_| k.g.kmem += 1)
            }
        };
        match p {
            Some(p) => self.live.push((free_at, self.arrivals, p, 0)),
            None => self.failed += 1,
        }
    }

    fn expire(&mut self, k: &mut Kernel, ctx: &mut Ctx, mut cache: Option<&mut KmemCache>) {
        while let Some((_, _, p, _)) = self.live.pop_due(ctx.now) {
            match cache.as_deref_mut() {
                Some(c) => {
                    c.free(k, ctx, p);
                }
                None => {
                    k.g.kmem -= 1;
                    k.free_pages(ctx, p, 0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::{Mt, ZoneType};

    fn kernel() -> Kernel {
        let cfg = MachineConfig::of_zones(
            "x86_64",
            2,
            &[(ZoneType::Dma, 4096), (ZoneType::Dma32, 24576), (ZoneType::Normal, 8192)],
        );
        Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel")
    }

    fn run(k: &mut Kernel, src: &mut KmemSource, until_ns: u64) {
        let mut now = 0;
        while now < until_ns {
            let mut ctx = Ctx { now, ..Default::default() };
            src.event(k, &mut ctx);
            k.check_conservation().unwrap();
            now += src.next_gap(k);
        }
    }

    #[test]
    fn uncounted_pages_keep_their_population_and_are_unmovable() {
        let mut k = kernel();
        let hour = 3_600_000_000_000u64;
        let mut src = KmemSource::new(2000, hour, None);
        run(&mut k, &mut src, 3 * hour);
        // Poisson population of mean 2000: far inside ±15 %.
        assert!((1700..2300).contains(&k.g.kmem), "{}", k.g.kmem);
        assert_eq!(src.live.len() as u64, k.g.kmem);
        assert!(src.arrivals > 2000 + 4000, "turned over: {}", src.arrivals);
        let unmovable = k.pageblock_mt.iter().filter(|&&m| m == Mt::Unmovable as u8).count();
        assert!(unmovable > 0, "the pages claimed unmovable pageblocks");
        // Normal is first in the zonelist and the machine is nearly empty: it takes them all.
        let normal = &k.zones[2];
        assert!(src.live.len() as u64 <= normal.managed - normal.free_pages + 64);
    }

    #[test]
    fn objects_live_in_a_kmalloc_cache_as_slab() {
        let mut k = kernel();
        let hour = 3_600_000_000_000u64;
        let mut c = KmemCache::with_tunables("kmalloc", 512, 2, Mt::Unmovable, Default::default());
        c.nowait = true;
        let mut src = KmemSource::new(4000, hour, Some(Box::new(c)));
        run(&mut k, &mut src, hour);
        let c = src.cache.as_ref().unwrap();
        assert_eq!(c.objects, src.live.len() as u64);
        assert!(k.g.slab >= c.objects / 8, "slab {} objects {}", k.g.slab, c.objects);
        assert_eq!(k.g.kmem, 0);
    }
}
