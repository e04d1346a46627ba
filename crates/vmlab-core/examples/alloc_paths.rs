//! Who takes a zone's free pages and who gives them back, window by window: the pages each
//! zone served, by requester (page cache, anon, `[fs]` slab — MIGRATE_RECLAIMABLE —, other
//! GFP_KERNEL at order 0 and above, GFP_ATOMIC — SLUB's slabs allocated in softirq, i.e. the
//! skb caches — at order 3 and below) and by path: the fast path (`get_page_from_freelist` at
//! LOW, so a lower zone serves only what every zone before it in the zonelist refused at LOW)
//! or the slow path (after `wake_all_kswapd` raised a wakeup: MIN, with ALLOC_HARDER|ALLOC_HIGH
//! for atomic requests). Against that, the pages freed back to each zone: by kswapd in runs
//! begun at order 0 and at order > 0, by direct reclaim, and by everyone else (exits, unlinks,
//! slab and skb frees). Also the kswapd wakeups each zone raised, by order. An observer: the
//! run is the same with or without it.
//!
//! The path is read from the tracepoints: a slow-path allocation is preceded, in the same
//! task and for the same order, by the `mm_vmscan_wakeup_kswapd` its `wake_all_kswapd` fired
//! (2.6.36 fires it for each zone failing LOW at the order). An allocation whose slow path
//! woke nothing (every zone passed LOW by then) counts as fast.
//!
//! cargo run --release -p vmlab-core --example alloc_paths -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]

mod common;

use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::{KswapdPhase, Mt};
use vmlab_core::sim::Sim;
use vmlab_core::trace::{GfpKind, Tracepoint, Tracer};

const Z: usize = 8;
/// Requesters: file, anon, fs slab (reclaimable), kernel order 0, kernel order > 0, atomic
/// order 3+, atomic order < 3.
const WHO: [&str; 7] = ["file", "anon", "recl", "kern0", "kern1+", "atom3", "atom<3"];
const FILE: usize = 0;
const ANON: usize = 1;

#[derive(Default, Clone)]
struct Paths {
    /// Pages served per zone, [requester][fast, slow].
    alloc: [[[u64; 2]; 7]; Z],
    /// Pages freed per zone (every `mm_page_free`, reclaim's included).
    freed: [u64; Z],
    /// Pages reclaimed per zone: kswapd in runs begun at order 0, at order > 0; direct.
    reclaimed: [[u64; 3]; Z],
    /// `mm_vmscan_wakeup_kswapd` per zone, order 0 / order > 0.
    wakeups: [[u64; 2]; Z],
    /// The pending slow path: (task, order) of the last wakeup raised by an allocating task.
    slow: Option<(usize, u32)>,
    /// Per frame, the path (1 fast, 2 slow) of its last movable allocation, so that a page
    /// cache insertion moves it from anon to file.
    movable_path: Vec<u8>,
    /// Order the current kswapd run began at.
    run_order: Option<u32>,
}

impl Tracer for Paths {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        let task = k.trace_at.task;
        let kswapd = k.nodes[0].kswapd.task;
        match *ev {
            Tracepoint::WakeupKswapd { zid, order, .. } => {
                self.wakeups[zid.min(Z - 1)][(order > 0) as usize] += 1;
                // Only an allocator's slow path wakes kswapd (kswapd never does). The NIC's
                // softirq runs with a context of task index 0, which is also kswapd's task, so
                // the task is no test of who woke it.
                self.slow = Some((task, order));
            }
            Tracepoint::MmPageAlloc { zone, order, migratetype, pfn, gfp } => {
                let slow = self.slow.take() == Some((task, order));
                let who = match gfp {
                    GfpKind::HighuserMovable => {
                        if self.movable_path.len() <= pfn as usize {
                            self.movable_path.resize(k.fr.flags.len().max(pfn as usize + 1), 0);
                        }
                        self.movable_path[pfn as usize] = 1 + slow as u8;
                        ANON
                    }
                    GfpKind::Kernel if migratetype == Mt::Reclaimable => 2,
                    GfpKind::Kernel => 3 + (order > 0) as usize,
                    GfpKind::Atomic => 5 + (order < 3) as usize,
                };
                self.alloc[zone.min(Z - 1)][who][slow as usize] += 1 << order;
            }
            Tracepoint::FilemapAdd { pfn, .. } => {
                let Some(&p) = self.movable_path.get(pfn as usize) else { return };
                if p == 0 {
                    return;
                }
                let a = &mut self.alloc[k.zone_of(pfn).min(Z - 1)];
                let s = (p - 1) as usize;
                a[ANON][s] -= 1;
                a[FILE][s] += 1;
                self.movable_path[pfn as usize] = 0;
            }
            Tracepoint::MmPageFree { pfn, order, .. } => {
                self.freed[k.zone_of(pfn).min(Z - 1)] += 1 << order;
                if let Some(p) = self.movable_path.get_mut(pfn as usize) {
                    *p = 0;
                }
            }
            Tracepoint::KswapdBalanceBegin { order, .. } => self.run_order = Some(order),
            Tracepoint::KswapdBalanceEnd { .. } => self.run_order = None,
            Tracepoint::LruShrinkInactive { zid, nr_reclaimed, .. } => {
                let col = if task != kswapd {
                    2
                } else if k.nodes[0].kswapd.phase == KswapdPhase::Balancing {
                    (self.run_order.unwrap_or(k.nodes[0].kswapd.bal_order) > 0) as usize
                } else {
                    0
                };
                self.reclaimed[zid.min(Z - 1)][col] += nr_reclaimed;
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn main() {
    let common::Census { mut sim, every_s } = common::setup("alloc_paths");
    sim.k.attach_tracer(Box::new(Paths::default()));
    let mut window = common::setup_window(&mut sim, every_s);
    let mut last = Paths::default();
    let mut last_free = [0u64; Z];
    println!(
        "t_h memfree_window_mean% | per zone (DMA32, Normal), pages in the window: free now (o0/o1/o2/o3+), change; \
         served fast/slow by requester ({}); freed; reclaimed kswapd o0-run/o>0-run/direct; wakeups o0/o>0",
        WHO.join(" ")
    );
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        let Some((_, mean)) = window.sample(sim, every_s) else { return };
        let mut line = format!("{:.1} {mean:.2}", sim.s.now as f64 / 3.6e12);
        let Some(p) = sim.k.tracer::<Paths>().cloned() else { return };
        let big: Vec<usize> = (0..sim.k.zones.len().min(Z)).filter(|&z| sim.k.zones[z].present >= 8192).collect();
        for &zid in &big {
            let z = &sim.k.zones[zid];
            let change = z.free_pages as i64 - last_free[zid] as i64;
            last_free[zid] = z.free_pages;
            line += &format!(" | {} {} ({}) {:+}:", z.kind.name(), z.free_pages, common::low_orders(z), change);
            for (w, name) in WHO.iter().enumerate() {
                let d = |s: usize| p.alloc[zid][w][s] - last.alloc[zid][w][s];
                line += &format!(" {name} {}/{}", d(0), d(1));
            }
            let r = |c: usize| p.reclaimed[zid][c] - last.reclaimed[zid][c];
            line += &format!(
                "; freed {}; reclaimed {}/{}/{}; wakeups {}/{}",
                p.freed[zid] - last.freed[zid],
                r(0),
                r(1),
                r(2),
                p.wakeups[zid][0] - last.wakeups[zid][0],
                p.wakeups[zid][1] - last.wakeups[zid][1]
            );
        }
        last = p;
        println!("{line}");
    }));
    if let Err(e) = sim.run() {
        eprintln!("{}", e.message);
        std::process::exit(1);
    }
}
