//! Property tests: the buddy allocator and the LRU lists conserve pages and keep their
//! per-frame state consistent under any sequence of operations.

use proptest::prelude::*;
use vmlab_core::kernel::{Ctx, Kernel};
use vmlab_core::machine::MachineConfig;
use vmlab_core::mm_types::{pg, Pfn};
use vmlab_core::page_alloc::Gfp;

fn kernel(mib: u64, cpus: u32) -> Kernel {
    kernel_of(vmlab_core::profiles::find("linux-6.8").expect("profile"), mib, cpus)
}

fn kernel_of(p: vmlab_core::profiles::Profile, mib: u64, cpus: u32) -> Kernel {
    let zones = MachineConfig::layout(mib << 20, 1, "x86_64").expect("layout");
    let cfg = MachineConfig {
        memory_bytes: mib << 20,
        cpus,
        nodes: 1,
        arch: "x86_64".into(),
        cpu_mhz: 3000,
        reserved_bytes: 0,
        reserved_low_bytes: 0,
        zones,
    };
    Kernel::new(p, cfg, 1).expect("kernel")
}

#[derive(Clone, Debug)]
enum Op {
    Alloc { order: u32, cpu: u32, atomic: bool },
    Free { which: usize },
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..=10, 0u32..2, any::<bool>()).prop_map(|(order, cpu, atomic)| Op::Alloc { order, cpu, atomic }),
        3 => any::<usize>().prop_map(|which| Op::Free { which }),
        1 => Just(Op::Drain),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn buddy_allocator_conserves_pages(ops in proptest::collection::vec(op(), 1..200)) {
        let mut k = kernel(64, 2);
        let total = k.total_pages();
        let mut held: Vec<(Pfn, u32)> = Vec::new();
        for o in ops {
            let mut ctx = Ctx { cpu: 0, in_reclaim: true, ..Default::default() };
            match o {
                Op::Alloc { order, cpu, atomic } => {
                    ctx.cpu = cpu;
                    let gfp = if atomic { Gfp::atomic() } else { Gfp::kernel() };
                    if let Ok(p) = k.alloc_pages(&mut ctx, gfp, order) {
                        // A block is aligned to its order on the memory map, and nobody else holds it.
                        let z = &k.zones[k.zone_of(p)];
                        prop_assert_eq!(z.phys(p) % (1 << order), 0);
                        prop_assert!(held.iter().all(|&(q, o)| p + (1 << order) <= q || q + (1 << o) <= p));
                        for i in 0..(1u32 << order) {
                            prop_assert!(!k.fr.has(p + i, pg::BUDDY) && !k.fr.has(p + i, pg::PCP));
                        }
                        held.push((p, order));
                        k.g.slab += 1 << order;
                    }
                }
                Op::Free { which } => {
                    if !held.is_empty() {
                        let (p, order) = held.swap_remove(which % held.len());
                        k.g.slab -= 1 << order;
                        k.free_pages(&mut ctx, p, order);
                    }
                }
                Op::Drain => k.drain_all_pages(),
            }
            let in_use: u64 = held.iter().map(|&(_, o)| 1u64 << o).sum();
            prop_assert_eq!(k.nr_free_pages() + in_use + k.g.reserved, total);
        }
        prop_assert!(k.check_frames().is_ok(), "{:?}", k.check_frames());
        for (p, o) in held.drain(..) {
            let mut ctx = Ctx::default();
            k.g.slab -= 1 << o;
            k.free_pages(&mut ctx, p, o);
        }
        k.drain_all_pages();
        // Everything merged back: the free lists hold every page again.
        prop_assert_eq!(k.nr_free_pages() + k.g.reserved, total);
        prop_assert!(k.check_frames().is_ok());
    }

    #[test]
    fn lru_lists_conserve_pages(ops in proptest::collection::vec((0u8..5, any::<usize>()), 1..300)) {
        let mut k = kernel(32, 1);
        let mut pages: Vec<Pfn> = Vec::new();
        for (kind, which) in ops {
            let mut ctx = Ctx { in_reclaim: true, ..Default::default() };
            match kind {
                // A new anon or file page enters the LRU.
                0 | 1 => {
                    if let Ok(p) = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0) {
                        if kind == 0 {
                            k.fr.set(p, pg::ANON | pg::SWAPBACKED);
                        }
                        vmlab_core::vmscan::lru_add(&mut k, p);
                        pages.push(p);
                    }
                }
                // Accessed through read(): referenced, then activated.
                2 if !pages.is_empty() => {
                    let p = pages[which % pages.len()];
                    vmlab_core::vmscan::mark_page_accessed(&mut k, p);
                }
                // Writeback finished on a page reclaim wanted: rotate to the tail.
                3 if !pages.is_empty() => {
                    let p = pages[which % pages.len()];
                    vmlab_core::vmscan::rotate_reclaimable_page(&mut k, p);
                }
                // Off the LRU and freed.
                4 if !pages.is_empty() => {
                    let p = pages.swap_remove(which % pages.len());
                    vmlab_core::vmscan::del_page_from_lru(&mut k, p);
                    k.fr.clear(p, pg::ANON | pg::SWAPBACKED | pg::ACTIVE | pg::REFERENCED);
                    k.free_pages(&mut ctx, p, 0);
                }
                _ => {}
            }
            prop_assert_eq!(k.nr_lru_pages(), pages.len() as u64);
            prop_assert!(k.check_conservation().is_ok(), "{:?}", k.check_conservation());
            let zl: u64 = k.zones.iter().map(|z| z.lru_pages.iter().sum::<u64>()).sum();
            prop_assert_eq!(zl, pages.len() as u64);
        }
        prop_assert!(k.check_frames().is_ok(), "{:?}", k.check_frames());
    }

    /// The same with per-CPU LRU-add pagevecs (a split-LRU row that has them, found by that):
    /// a page is on a list or waiting in one CPU's pagevec, never both or neither, whatever
    /// the adds, accesses, frees and drains on two CPUs.
    #[test]
    fn lru_add_pagevecs_conserve_pages(ops in proptest::collection::vec((0u8..6, 0u32..2, any::<usize>()), 1..300)) {
        let row = vmlab_core::profiles::all()
            .into_iter()
            .find(vmlab_core::vmscan::has_lru_add_pvecs)
            .expect("a row with LRU-add pagevecs");
        let mut k = kernel_of(row, 32, 2);
        let mut pages: Vec<Pfn> = Vec::new();
        for (kind, cpu, which) in ops {
            let mut ctx = Ctx { cpu, in_reclaim: true, ..Default::default() };
            match kind {
                0 | 1 => {
                    if let Ok(p) = k.alloc_pages(&mut ctx, Gfp::highuser_movable(), 0) {
                        if kind == 0 {
                            k.fr.set(p, pg::ANON | pg::SWAPBACKED);
                        }
                        vmlab_core::vmscan::lru_cache_add(&mut k, &ctx, p);
                        pages.push(p);
                    }
                }
                2 if !pages.is_empty() => {
                    let p = pages[which % pages.len()];
                    vmlab_core::vmscan::mark_page_accessed(&mut k, p);
                }
                3 if !pages.is_empty() => {
                    let p = pages.swap_remove(which % pages.len());
                    vmlab_core::vmscan::del_page_from_lru(&mut k, p);
                    k.fr.clear(p, pg::ANON | pg::SWAPBACKED | pg::ACTIVE | pg::REFERENCED);
                    k.free_pages(&mut ctx, p, 0);
                }
                4 => vmlab_core::vmscan::lru_add_drain(&mut k, &ctx),
                5 if which % 8 == 0 => vmlab_core::vmscan::lru_add_drain_all(&mut k),
                _ => {}
            }
            prop_assert_eq!(k.nr_lru_pages() + k.g.lru_pvec, pages.len() as u64);
            prop_assert!(k.g.lru_pvec <= 2 * 4 * 13, "at most 13 waiting per CPU and list");
            prop_assert!(k.check_conservation().is_ok(), "{:?}", k.check_conservation());
        }
        prop_assert!(k.check_frames().is_ok(), "{:?}", k.check_frames());
        vmlab_core::vmscan::lru_add_drain_all(&mut k);
        prop_assert_eq!((k.nr_lru_pages(), k.g.lru_pvec), (pages.len() as u64, 0));
        prop_assert!(k.check_frames().is_ok(), "{:?}", k.check_frames());
    }
}
