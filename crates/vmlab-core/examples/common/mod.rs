//! The start every census example shares: `SCENARIO PROFILE EVERY_S [KEY=VALUE...]`, the scenario
//! loaded and the machine built, with a bad argument reported as the CLI reports it (file, line,
//! column) rather than as a panic.

use vmlab_core::api::{diagnose, render};
use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario;

pub struct Census {
    pub sim: Sim,
    /// Seconds of simulated time between two census lines.
    pub every_s: u64,
}

fn fail(msg: String, code: i32) -> ! {
    eprintln!("{msg}");
    std::process::exit(code)
}

// Not every example has keys of its own.
#[allow(dead_code)]
pub fn setup(name: &str) -> Census {
    setup_with(name, &[]).0
}

/// `setup`, with the example's own `KEY=VALUE` arguments (`own` names the keys) taken out
/// before the rest go to the scenario: returned as (key, value) pairs.
pub fn setup_with(name: &str, own: &[&str]) -> (Census, Vec<(String, String)>) {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let mut args = Vec::new();
    let mut mine = Vec::new();
    for (i, a) in all.into_iter().enumerate() {
        match a.split_once('=') {
            Some((key, value)) if i >= 3 && own.contains(&key) => mine.push((key.to_string(), value.to_string())),
            _ => args.push(a),
        }
    }
    if args.len() < 3 {
        fail(format!("usage: {name} SCENARIO PROFILE EVERY_S [KEY=VALUE...]"), 2);
    }
    let every_s = match args[2].parse::<u64>() {
        Ok(s) if s > 0 => s,
        _ => fail(format!("{name}: EVERY_S is a whole number of seconds above 0, got {:?}", args[2]), 2),
    };
    let sc = load_scenario(std::path::Path::new(&args[0]), &args[3..]).unwrap_or_else(|e| fail(render(e), 1));
    let profile = resolve_profile(&sc, Some(&args[1])).unwrap_or_else(|e| fail(render(diagnose(&sc, e)), 1));
    let sim = Sim::new(&sc, profile).unwrap_or_else(|e| fail(render(diagnose(&sc, e)), 1));
    (Census { sim, every_s }, mine)
}

/// `FROM..TO` in whole seconds, FROM < TO; anything else is an error naming `key`.
#[allow(dead_code)]
pub fn parse_window(name: &str, key: &str, v: &str) -> (u64, u64) {
    let parsed = v.split_once("..").and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
    match parsed {
        Some((a, b)) if a < b => (a, b),
        _ => fail(format!("{name}: {key}=FROM_S..TO_S in whole seconds with FROM_S < TO_S, got {v:?}"), 2),
    }
}

/// `on` or `off`; anything else is an error naming `key`.
#[allow(dead_code)]
pub fn parse_on(name: &str, key: &str, v: &str) -> bool {
    match v {
        "on" => true,
        "off" => false,
        _ => fail(format!("{name}: {key}=on or {key}=off, got {v:?}"), 2),
    }
}

/// MemFree as a share of MemTotal, averaged over the minute readings between two census lines:
/// `setup_window` makes the simulation sample every minute (or every EVERY_S if shorter), and
/// `sample` returns Some((now %, window mean %)) when a census line is due.
// Each example compiles this module on its own, and not every census reads MemFree.
#[allow(dead_code)]
#[derive(Default)]
pub struct MemFreeWindow {
    sum: f64,
    n: u32,
}

#[allow(dead_code)]
pub fn setup_window(sim: &mut Sim, every_s: u64) -> MemFreeWindow {
    let minute = 60_000_000_000u64;
    sim.interval = minute.min(every_s * 1_000_000_000);
    MemFreeWindow::default()
}

impl MemFreeWindow {
    #[allow(dead_code)]
    pub fn sample(&mut self, sim: &Sim, every_s: u64) -> Option<(f64, f64)> {
        let mi = sim.meminfo();
        let free = mi.mem_free as f64 * 100.0 / mi.mem_total.max(1) as f64;
        self.sum += free;
        self.n += 1;
        if !sim.s.now.is_multiple_of(every_s * 1_000_000_000) {
            return None;
        }
        let mean = self.sum / self.n as f64;
        (self.sum, self.n) = (0.0, 0);
        Some((free, mean))
    }
}

/// Free pages a zone holds in blocks of `orders` (`/proc/buddyinfo`'s counts times the block
/// size).
#[allow(dead_code)]
pub fn free_in_orders(z: &vmlab_core::mmzone::Zone, orders: std::ops::Range<usize>) -> u64 {
    orders.map(|o| z.nr_free[o] << o).sum()
}

/// Of those, the pages on the MIGRATE_RESERVE lists.
#[allow(dead_code)]
pub fn reserve_in_orders(z: &vmlab_core::mmzone::Zone, orders: std::ops::Range<usize>) -> u64 {
    orders.map(|o| z.free_area[o][vmlab_core::mmzone::MIGRATE_RESERVE].len << o).sum()
}

/// The zone's free blocks of order 0, 1, 2 and its free pages in blocks of order 3 and up,
/// as `o0/o1/o2/o3+`.
#[allow(dead_code)]
pub fn low_orders(z: &vmlab_core::mmzone::Zone) -> String {
    let o3 = free_in_orders(z, 3..vmlab_core::mmzone::MAX_ORDER);
    format!("{}/{}/{}/{o3}", z.nr_free[0], z.nr_free[1], z.nr_free[2])
}

/// Caller classes of a page handed out (`mm_page_alloc`), as `dma32_census` and `kswapd_runs`
/// sort them: page cache, anon, movable not yet either ("mov?": freed before readahead added
/// it), `[fs]` slab (MIGRATE_RECLAIMABLE), skb slab (GFP_ATOMIC SLUB), atomic non-slab,
/// kmalloc slab, page table, kernel stack, TCP page, `[[kmem]]` page, and GFP_KERNEL order-0
/// pages whose owner showed nothing before the next tracepoint ("kern?").
#[allow(dead_code)]
pub const NCLASS: usize = 12;
#[allow(dead_code)]
pub const CLASSES: [&str; NCLASS] =
    ["file", "anon", "mov?", "fs-slab", "skb-slab", "atomic?", "kmalloc", "pgtable", "stack", "tcp", "kmem", "kern?"];
#[allow(dead_code)]
pub const CLASS_FILE: usize = 0;
#[allow(dead_code)]
pub const CLASS_MOV_UNKNOWN: usize = 2;

/// A page just handed out, with the owner counts as they were: its class is read at the next
/// tracepoint from what its caller did in between (the frame's flags, a page-cache insertion,
/// the kernel-stack, socket or kmem page counts rising).
#[derive(Clone, Copy)]
#[allow(dead_code)]
pub struct Handed {
    pub pfn: u32,
    pub gfp: vmlab_core::trace::GfpKind,
    pub mt: vmlab_core::mmzone::Mt,
    stack: u64,
    sock: u64,
    kmem: u64,
}

#[allow(dead_code)]
impl Handed {
    pub fn new(
        k: &vmlab_core::kernel::Kernel,
        pfn: u32,
        gfp: vmlab_core::trace::GfpKind,
        mt: vmlab_core::mmzone::Mt,
    ) -> Handed {
        Handed { pfn, gfp, mt, stack: k.g.kernel_stack, sock: k.g.sock, kmem: k.g.kmem }
    }

    /// The class, or None for a movable page that is neither anon nor in the page cache yet
    /// (readahead inserts it a little later: the caller waits for `FilemapAdd` or the free).
    pub fn class(&self, k: &vmlab_core::kernel::Kernel, ev: &vmlab_core::trace::Tracepoint) -> Option<usize> {
        use vmlab_core::mm_types::pg;
        use vmlab_core::mmzone::Mt;
        use vmlab_core::trace::{GfpKind, Tracepoint};
        let f = k.fr.flags[self.pfn as usize];
        Some(match (self.gfp, self.mt) {
            (_, Mt::Reclaimable) => 3,
            (GfpKind::Atomic, _) => [5, 4][(f & pg::SLAB != 0) as usize],
            (GfpKind::Kernel, _) if f & pg::SLAB != 0 => 6,
            (GfpKind::Kernel, _) if f & pg::PGTABLE != 0 => 7,
            (GfpKind::Kernel, _) if k.g.kernel_stack > self.stack => 8,
            (GfpKind::Kernel, _) if k.g.sock > self.sock => 9,
            (GfpKind::Kernel, _) if k.g.kmem > self.kmem => 10,
            (GfpKind::Kernel, _) => 11,
            (GfpKind::HighuserMovable, _) => {
                if matches!(*ev, Tracepoint::FilemapAdd { pfn, .. } if pfn == self.pfn) {
                    0
                } else if f & (pg::ANON | pg::SWAPBACKED) != 0 {
                    1
                } else {
                    return None;
                }
            }
        })
    }
}

/// Does task name `name` fall under `pat`: the same name, or for a `pat` ending in `*` any name
/// beginning with the rest (`batch*`, `kswapd*`).
#[allow(dead_code)]
pub fn name_matches(name: &str, pat: &str) -> bool {
    match pat.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pat,
    }
}

/// Task `t`'s user and system time and its time off the CPU by `Wait` kind (io, reclaim,
/// other, runnable) at the simulation's clock, in ns. The wait in progress is closed only when
/// it ends, so it is counted up to now.
#[allow(dead_code)]
pub fn task_times(sim: &Sim, t: &vmlab_core::sched::Task) -> [u64; 6] {
    use vmlab_core::sched::{TState, Wait};
    let mut waits = t.waits;
    if matches!(t.state, TState::Blocked | TState::Runnable) && t.wait_since != u64::MAX {
        waits[t.wait_kind as usize] += sim.s.now.saturating_sub(t.wait_since);
    }
    [
        t.utime_ns,
        t.stime_ns,
        waits[Wait::Io as usize],
        waits[Wait::Reclaim as usize],
        waits[Wait::Other as usize],
        waits[Wait::Cpu as usize],
    ]
}
