//! Seed 001 — kswapd and high-order atomic allocations, 2.6.36 → 2.6.38 (Simon Kirby's "1.5 GB
//! free on 4 GB" report, Mel Gorman's kswapd series). Runs the postmark-like scenario and the
//! streaming-I/O scenario under both kernels and prints the seed's MMTests-style tables and
//! MemFree over time. Every figure comes from the runs; this module only chooses what to run
//! and measures.

use super::{run_seed_scenario_sampled, ReproduceOpts, SeedDef};
use crate::sim::Sim;
use crate::stats::alloc_diag::{AllocDiag, ZONES};
use crate::stats::compare;
use crate::stats::report::{ReproduceReport, RunReport};
use std::cell::RefCell;
use std::rc::Rc;

pub const PROFILES: [&str; 2] = ["linux-2.6.36", "linux-2.6.38"];
pub const POSTMARK: &str = "kswapd-high-order.toml";
pub const STREAMING: &str = "kswapd-high-order-streaming.toml";
pub const MAILSERVER: &str = "kswapd-high-order-mailserver.toml";

pub fn def() -> SeedDef {
    SeedDef {
        name: "kswapd-high-order",
        number: 1,
        // The mail server swap off and swap on, the postmark and the streaming scenario, each
        // under both profiles.
        runs: 4 * PROFILES.len(),
        profiles: &PROFILES,
        long_runs: Some("mail-server runs"),
        summary:
            "001: order-3 atomic allocations keep 2.6.36 kswapd reclaiming (too much free memory); 2.6.38 fixes it",
        run,
    }
}

/// /proc/vmstat counters the seed's tables use, copied into `metrics` by name.
const COUNTERS: &[&str] = &[
    "allocstall",
    "pgscan_direct",
    "pgsteal_direct",
    "pgscan_kswapd",
    "pgsteal_kswapd",
    "kswapd_low_wmark_hit_quickly",
    "kswapd_high_wmark_hit_quickly",
    "kswapd_skip_congestion_wait",
    "pageoutrun",
    "pgactivate",
    "pgdeactivate",
    "nr_vmscan_write",
    "pgmajfault",
    "pgpgin",
    "pgpgout",
    "pswpin",
    "pswpout",
    "pgrefill",
];

/// The mail-server runs lengthened by `--duration`: Simon Kirby's servers showed the problem
/// "after a day or week" of uptime, which the default ten minutes do not reach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LongRun {
    pub duration_s: u64,
    /// The timeline's interval: the scenario's one second up to 1,440 samples, then one sample
    /// every `duration / 1440` whole seconds (a minute for a day), so that a day's JSON stays
    /// the size of the default's. Sampling only reads the machine, so the history is the same.
    pub interval_s: u64,
}

impl LongRun {
    pub fn new(duration_s: u64) -> LongRun {
        LongRun { duration_s, interval_s: (duration_s / 1440).max(1) }
    }

    /// The steady window every windowed figure is taken over: the run's second half, as at the
    /// default length (so 12-24 h of a day).
    pub fn window_s(&self) -> (f64, f64) {
        (self.duration_s as f64 / 2.0, self.duration_s as f64)
    }

    /// The `--set`s that make a mail-server run this long.
    fn sets(&self) -> [String; 2] {
        [format!("duration={}s", self.duration_s), format!("interval={}s", self.interval_s)]
    }

    /// The sentence the text states the window in.
    fn statement(&self) -> String {
        let (a, b) = self.window_s();
        let span = |s: f64| {
            if s >= 3600.0 {
                format!("{} h", s / 3600.0)
            } else {
                format!("{s} s")
            }
        };
        format!(
            "Mail-server runs of {} (--duration); steady window: the second half, {a:.0}-{b:.0} s ({} to {}), for MemFree, the buddy figures and the tables' vmstat counters (counted from the window's first sample); timeline every {} s\n",
            span(self.duration_s as f64),
            span(a),
            span(b),
            self.interval_s
        )
    }

    /// Record the length and the window in a run's `params`.
    fn record(&self, r: &mut RunReport) {
        let (a, b) = self.window_s();
        r.params.insert("duration_s", serde_json::Value::from(self.duration_s));
        r.params.insert("window_start_s", serde_json::Value::from(a));
        r.params.insert("window_end_s", serde_json::Value::from(b));
        r.params.insert("timeline_interval_s", serde_json::Value::from(self.interval_s));
    }
}

/// Mean MemFree over the second half of the run, percent of MemTotal.
pub fn memfree_mean_pct(r: &RunReport) -> f64 {
    let total = r.meminfo.get("MemTotal").copied().unwrap_or(0) as f64;
    let half = r.elapsed_s / 2.0;
    let xs: Vec<f64> =
        r.timeline.iter().filter(|s| s.t_s >= half && s.t_s <= r.elapsed_s + 1e-9).map(|s| s.free_kb as f64).collect();
    if xs.is_empty() || total == 0.0 {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64 * 100.0 / total
}

/// The number after `let NAME =` in a program (the postmark transaction count).
fn program_constant(sim_program: &str, name: &str) -> Option<f64> {
    let key = format!("let {name} =");
    let line = sim_program.lines().find(|l| l.trim_start().starts_with(&key))?;
    line.trim_start()[key.len()..].trim().parse::<f64>().ok()
}

/// Normal's (or any zone's) pages by what holds them, as SysRq-M would sort them: percent of the
/// zone's present pages in order file LRU, anon LRU, mlocked, slab + page tables, free (buddy
/// and per-CPU lists), other.
pub fn zone_composition(sim: &Sim, zid: usize) -> [f64; 6] {
    use crate::mm_types::pg;
    let k = &sim.k;
    let z = &k.zones[zid];
    let mut n = [0u64; 6];
    for pfn in z.start_pfn..z.end_pfn {
        let f = k.fr.flags[pfn as usize];
        let i = if k.page_is_free(zid, pfn) {
            4
        } else if f & (pg::MLOCKED | pg::UNEVICTABLE) != 0 {
            2
        } else if f & pg::LRU != 0 {
            if f & (pg::SWAPBACKED | pg::ANON) != 0 {
                1
            } else {
                0
            }
        } else if f & (pg::SLAB | pg::PGTABLE) != 0 {
            3
        } else {
            5
        };
        n[i] += 1;
    }
    let total = (z.end_pfn - z.start_pfn).max(1) as f64;
    n.map(|x| x as f64 * 100.0 / total)
}

/// What the aligned order-3 blocks of a zone (8 pages at a pfn multiple of 8) hold, the census
/// behind "can reclaim make an order-3 block here": a block reclaim can empty holds only free
/// pages and pages reclaim can free (file LRU pages; anon LRU pages only with swap); one page
/// of anything else (anon with swap off, mlocked, slab, page tables, TCP buffers, stacks, pages
/// isolated at the moment) pins the block. Lumpy reclaim takes a block's LRU pages whatever
/// their list, so these classes are what decide it.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockCensus {
    pub blocks: u64,
    /// Every page free.
    pub free: u64,
    /// Free and reclaimable pages only, at least one reclaimable.
    pub freeable: u64,
    /// Blocks pinned by exactly one page, by 2-7, by all 8.
    pub pinned_one: u64,
    pub pinned_some: u64,
    pub pinned_all: u64,
    /// Pinned blocks whose pins are only anon / mlocked / slab / page tables / other pages.
    pub pinned_by: [u64; 5],
    /// Free pages in pinned blocks: free memory no reclaim can merge to order 3.
    pub free_in_pinned: u64,
}

pub fn order3_block_census(sim: &Sim, zid: usize) -> BlockCensus {
    use crate::mm_types::pg;
    let k = &sim.k;
    let z = &k.zones[zid];
    let swap = k.swap.is_some();
    let mut c = BlockCensus::default();
    // Aligned on the memory map, as the buddy allocator aligns them.
    let first = z.start_pfn + (8 - z.phys_start_pfn % 8) % 8;
    let mut b = first;
    while b + 8 <= z.end_pfn {
        let (mut free, mut pins, mut kinds) = (0u32, 0u32, 0u8);
        for pfn in b..b + 8 {
            let f = k.fr.flags[pfn as usize];
            let kind = if k.page_is_free(zid, pfn) {
                free += 1;
                continue;
            } else if f & (pg::MLOCKED | pg::UNEVICTABLE) != 0 {
                1
            } else if f & pg::LRU != 0 {
                if f & (pg::SWAPBACKED | pg::ANON) == 0 || swap {
                    continue;
                }
                0
            } else if f & pg::SLAB != 0 {
                2
            } else if f & pg::PGTABLE != 0 {
                3
            } else {
                4
            };
            pins += 1;
            kinds |= 1 << kind;
        }
        c.blocks += 1;
        match pins {
            0 if free == 8 => c.free += 1,
            0 => c.freeable += 1,
            1 => c.pinned_one += 1,
            8 => c.pinned_all += 1,
            _ => c.pinned_some += 1,
        }
        if pins > 0 {
            c.free_in_pinned += free as u64;
            if kinds.count_ones() == 1 {
                c.pinned_by[kinds.trailing_zeros() as usize] += 1;
            }
        }
        b += 8;
    }
    c
}

/// The counters at the first timeline sample of a `--duration` run's steady window, so that
/// the tables' counters are the window's, as its MemFree and buddy figures are: over a day the
/// hours before the window (the history's build-up) would otherwise outweigh it.
struct WindowStart {
    counters: crate::stats::ordered::OrderedMap<u64>,
    /// Per zone: kswapd's pgscan and pgsteal (2.6.36's per-zone counters).
    zones: Vec<(u64, u64)>,
}

impl WindowStart {
    fn take(sim: &Sim) -> WindowStart {
        let k = &sim.k;
        let zones = (0..k.zones.len()).map(|zid| zone_kswapd(sim, zid)).collect();
        WindowStart { counters: crate::stats::report::vmstat_map(&[], &k.ev), zones }
    }
}

/// kswapd's pgscan and pgsteal in zone `zid` so far (2.6.36's per-zone counters).
fn zone_kswapd(sim: &Sim, zid: usize) -> (u64, u64) {
    let k = &sim.k;
    let d = k.reclaim.split2636_kswapd(k.zones[zid].node).cloned().unwrap_or_default();
    (d.zone_scan_kswapd[zid.min(7)], d.zone_steal_kswapd[zid.min(7)])
}

/// Fill `metrics` (and `params.workload`, `params.swap`) of one run; counters from `from` on
/// when given (a `--duration` run's window), else over the whole run.
fn measure(r: &mut RunReport, sim: &Sim, workload: &str, program: Option<&str>, from: Option<&WindowStart>) {
    r.params.insert("workload", serde_json::Value::from(workload));
    let swap = if sim.k.swap.is_some() { "on" } else { "off" };
    r.params.insert("swap", serde_json::Value::from(swap));
    let marks: Vec<(String, f64)> = r.metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let mark = |n: &str| marks.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    let mut m = crate::stats::ordered::OrderedMap::new();
    if let (Some(a), Some(b), Some(n)) =
        (mark("tx_start"), mark("tx_end"), program.and_then(|p| program_constant(p, "ntx")))
    {
        if b > a {
            m.insert("transactions_per_s", n / (b - a));
        }
    }
    m.insert("memfree_mean_pct", memfree_mean_pct(r));
    let k = &sim.k;
    let total: u64 = k.zones.iter().map(|z| z.managed).sum();
    let high: u64 = k.zones.iter().map(|z| z.high_wmark()).sum();
    m.insert("high_wmark_sum_pct", high as f64 * 100.0 / total.max(1) as f64);
    let before = |c: &str| from.and_then(|w| w.counters.get(c).copied()).unwrap_or(0);
    for c in COUNTERS {
        m.insert(*c, r.counter(c).saturating_sub(before(c)) as f64);
    }
    // Per-zone kswapd scanning (2.6.36 reports pgscan per zone) and what kswapd ran.
    for (zid, z) in k.zones.iter().enumerate() {
        let name = z.kind.name().to_lowercase();
        let (scan, steal) = zone_kswapd(sim, zid);
        let (scan0, steal0) = from.and_then(|w| w.zones.get(zid).copied()).unwrap_or((0, 0));
        m.insert(format!("pgscan_kswapd_{name}"), scan.saturating_sub(scan0) as f64);
        m.insert(format!("pgsteal_kswapd_{name}"), steal.saturating_sub(steal0) as f64);
    }
    // buddyinfo over the second half: how much of each zone's free memory sits in blocks an
    // order-3 request (and the order-3 watermark check) can use.
    let half = r.elapsed_s / 2.0;
    let late: Vec<&(f64, Vec<crate::sim::BuddySample>)> =
        sim.buddy_samples.iter().filter(|(t, _)| *t >= half).collect();
    for (zid, z) in k.zones.iter().enumerate() {
        let name = z.kind.name().to_lowercase();
        let (mut free, mut o3, mut by_order) = (0u64, 0u64, [0u64; crate::mmzone::MAX_ORDER]);
        for (_, zs) in &late {
            if let Some((zf, zo, nr)) = zs.get(zid) {
                free += zf;
                o3 += zo;
                for (o, c) in nr.iter().enumerate() {
                    by_order[o] += c;
                }
            }
        }
        let n = late.len().max(1) as f64;
        m.insert(format!("free_pages_mean_{name}"), free as f64 / n);
        m.insert(format!("free_order3_pct_{name}"), if free > 0 { o3 as f64 * 100.0 / free as f64 } else { 0.0 });
        let o01 = by_order[0] + 2 * by_order[1];
        m.insert(format!("free_order01_pct_{name}"), if free > 0 { o01 as f64 * 100.0 / free as f64 } else { 0.0 });
        for (o, c) in by_order.iter().enumerate().take(5) {
            m.insert(format!("free_blocks_order{o}_mean_{name}"), *c as f64 / n);
        }
    }
    let g = |m: &crate::stats::ordered::OrderedMap<f64>, key: &str| m.get(key).copied().unwrap_or(f64::NAN);
    m.insert("normal_free_order01_pct", g(&m, "free_order01_pct_normal"));
    m.insert("dma32_free_order3plus_pct", g(&m, "free_order3_pct_dma32"));
    m.insert("kswapd_scan_normal_per_dma32", g(&m, "pgscan_kswapd_normal") / g(&m, "pgscan_kswapd_dma32").max(1.0));
    for (zid, z) in k.zones.iter().enumerate() {
        if z.kind != crate::mmzone::ZoneType::Normal {
            continue;
        }
        let c = zone_composition(sim, zid);
        for (i, key) in ["file", "anon", "mlocked", "slab_tables", "free", "other"].iter().enumerate() {
            m.insert(format!("normal_{key}_pct_at_end"), c[i]);
        }
    }
    // Where order-0 movable allocations went inside and outside high-order kswapd runs, who
    // split each zone's order >= 3 free blocks, and each zone's layout when a run ended balanced.
    let none = AllocDiag::default();
    let ad = k.tracer::<AllocDiag>().unwrap_or(&none);
    let ends = ad.balanced_ends.max(1) as f64;
    m.insert("high_order_run_s", ad.run_ns as f64 / 1e9);
    for (zid, z) in k.zones.iter().enumerate().take(ZONES) {
        let name = z.kind.name().to_lowercase();
        m.insert(format!("movable0_alloc_outside_runs_{name}"), ad.movable0[0][zid] as f64);
        m.insert(format!("movable0_alloc_in_runs_{name}"), ad.movable0[1][zid] as f64);
        m.insert(format!("o3_blocks_split_by_movable0_{name}"), ad.split_o3[0][zid] as f64);
        m.insert(format!("o3_blocks_split_by_high_order_{name}"), ad.split_o3[1][zid] as f64);
        m.insert(format!("balanced_end_free_{name}"), ad.end_free[zid] as f64 / ends);
        m.insert(format!("balanced_end_nonmovable_order0_{name}"), ad.end_nonmovable0[zid] as f64 / ends);
        m.insert(format!("balanced_end_movable_order3_pages_{name}"), ad.end_movable_o3[zid] as f64 / ends);
    }
    // What a file LRU page's buddy (pfn ^ 1) was, sampled at balanced high-order run ends:
    // reclaiming the page can start an order-1 block only when the buddy is free or reclaimed
    // too. (Simon's Normal had 24 of 18,249 free pages in blocks of order >= 1.)
    let samples = ad.layout_samples.max(1) as f64;
    for (zid, z) in k.zones.iter().enumerate().take(ZONES) {
        let name = z.kind.name().to_lowercase();
        let [file, anon, bf, ba, bfree, bo] = ad.layout[zid];
        m.insert(format!("sampled_file_lru_pages_{name}"), file as f64 / samples);
        m.insert(format!("sampled_anon_lru_pages_{name}"), anon as f64 / samples);
        let pct = |x: u64| x as f64 * 100.0 / file.max(1) as f64;
        m.insert(format!("file_buddy_file_pct_{name}"), pct(bf));
        m.insert(format!("file_buddy_anon_pct_{name}"), pct(ba));
        m.insert(format!("file_buddy_free_pct_{name}"), pct(bfree));
        m.insert(format!("file_buddy_other_pct_{name}"), pct(bo));
    }
    let d = k.reclaim.split2636_kswapd(0).cloned().unwrap_or_default();
    m.insert("kswapd_balance_runs_order0", d.balance_runs[0] as f64);
    m.insert("kswapd_balance_runs_high_order", d.balance_runs[1] as f64);
    m.insert("kswapd_high_order_passes", d.high_order_passes as f64);
    m.insert("kswapd_high_order_balanced", d.high_order_ends[0] as f64);
    m.insert("kswapd_high_order_fell_to_order0", d.high_order_ends[1] as f64);
    m.insert("kswapd_high_order_lumpy_passes", d.high_order_low_prio_passes as f64);
    m.insert("kswapd_lowest_priority", d.lowest_priority.map_or(f64::NAN, f64::from));
    m.insert("kswapd_full_sleeps", d.full_sleeps as f64);
    let (mut alloc, mut fb, mut failed) = (0, 0, 0);
    for n in &sim.netrx {
        alloc += n.allocated;
        fb += n.fallback;
        failed += n.failed;
    }
    if let Some(v) = &k.vfs {
        m.insert("fs_slab_pages", (v.dentry_cache.pages + v.inode_cache.pages) as f64);
        m.insert("fs_dentries", v.nr_dentry as f64);
        m.insert("fs_inode_slab_order_fallback", v.inode_cache.order_fallback as f64);
        m.insert("fs_pruned_dentries", v.pruned_dentries as f64);
        m.insert("fs_pruned_inodes", v.pruned_inodes as f64);
        m.insert("fs_reclaimed_slab", v.reclaimed_slab as f64);
    }
    for c in ["kswapd_inodesteal", "pginodesteal", "slabs_scanned"] {
        m.insert(c, r.counter(c) as f64);
    }
    m.insert("tcp_pages_at_end", k.g.sock as f64);
    m.insert("tcp_pages_sent", k.tcp.pages_sent as f64);
    m.insert("tcp_alloc_waits", k.tcp.alloc_waits as f64);
    m.insert("netrx_slabs_order3", alloc as f64);
    m.insert("netrx_slabs_fallback", fb as f64);
    m.insert("netrx_slabs_failed", failed as f64);
    r.metrics = m;
}

/// Run one scenario under both profiles.
pub fn run_pair(opts: &ReproduceOpts, file: &str, workload: &str) -> Result<Vec<RunReport>, String> {
    run_pair_with(opts, file, workload, &[])
}

/// Run one scenario under both profiles with extra `--set`s (the user's come after them).
pub fn run_pair_with(
    opts: &ReproduceOpts,
    file: &str,
    workload: &str,
    sets: &[String],
) -> Result<Vec<RunReport>, String> {
    let jobs = PROFILES.iter().map(|&p| pair_job(opts, file, workload, sets.to_vec(), p, None)).collect();
    opts.in_parallel(jobs).into_iter().collect()
}

/// One run of a pair, measured in its own thread (the simulation is dropped there).
fn pair_job<'a>(
    opts: &'a ReproduceOpts,
    file: &'a str,
    workload: &'a str,
    sets: Vec<String>,
    profile: &'a str,
    window_from_s: Option<f64>,
) -> Box<dyn FnOnce() -> Result<RunReport, String> + Send + 'a> {
    Box::new(move || {
        let start: Rc<RefCell<Option<WindowStart>>> = Rc::new(RefCell::new(None));
        let hook = window_from_s.map(|t0| {
            let start = Rc::clone(&start);
            let t0_ns = (t0 * 1e9) as u64;
            Box::new(move |s: &mut Sim| {
                if start.borrow().is_none() && s.s.now >= t0_ns {
                    *start.borrow_mut() = Some(WindowStart::take(s));
                }
            }) as crate::sim::SampleHook
        });
        let diag: Vec<Box<dyn crate::trace::Tracer>> = vec![Box::new(AllocDiag::default())];
        let (mut r, sim) = run_seed_scenario_sampled(opts, file, profile, &sets, diag, hook)?;
        let source = first_program(opts, file)?;
        measure(&mut r, &sim, workload, source.as_deref(), start.borrow().as_ref());
        Ok(r)
    })
}

/// The postmark scenario's machine as run (with the user's `--set`s): memory, CPUs, zones.
fn machine_line(opts: &ReproduceOpts) -> Result<String, String> {
    let sc = opts.load(POSTMARK, &[])?;
    let m = &sc.file.machine;
    let zones = match &m.zones {
        Some(t) => {
            let z: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{k} {}", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
                .collect();
            format!(" ({})", z.join(", "))
        }
        None => String::new(),
    };
    Ok(format!("{} {} CPUs{zones}", m.memory, m.cpus))
}

/// The scenario's first process program text (for its `let ntx = N`).
fn first_program(opts: &ReproduceOpts, file: &str) -> Result<Option<String>, String> {
    let sc = opts.load(file, &[])?;
    Ok(sc.file.processes.first().map(|p| p.program.clone()))
}

/// The seed's table for a pair of runs, columns named by profile, with the workload metrics the
/// seed prints (the vmstat counters appear in the vmscan tables instead).
pub fn table(runs: &[RunReport]) -> String {
    let shown: Vec<(String, RunReport)> = runs
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let keep = ["transactions_per_s", "memfree_mean_pct"];
            let mut m = crate::stats::ordered::OrderedMap::new();
            for k in keep {
                if let Some(v) = r.metrics.get(k) {
                    m.insert(k, *v);
                }
            }
            r.metrics = m;
            (r.profile.clone(), r)
        })
        .collect();
    compare::compare(&shown)
}

/// MemFree over time, sampled at ~12 points of the longer run, MiB per profile.
pub fn memfree_over_time(runs: &[RunReport]) -> String {
    let end = runs.iter().map(|r| r.elapsed_s).fold(0.0, f64::max);
    let mut s = format!("{:>8}", "t (s)");
    for r in runs {
        s += &format!("{:>16}", r.profile);
    }
    s += "   MemFree (MiB)\n";
    let steps = 12;
    for i in 1..=steps {
        let t = end * i as f64 / steps as f64;
        s += &format!("{:>8.0}", t);
        for r in runs {
            let v = r.timeline.iter().rfind(|x| x.t_s <= t + 1e-9).map(|x| x.free_kb as f64 / 1024.0);
            s += &match v {
                Some(v) => format!("{:>16.0}", v),
                None => format!("{:>16}", "-"),
            };
        }
        s.push('\n');
    }
    s
}

fn summary(runs: &[RunReport]) -> String {
    let mut s = String::new();
    for r in runs {
        let g = |k: &str| r.metrics.get(k).copied().unwrap_or(f64::NAN);
        s += &format!(
            "  {:<14} MemFree (2nd half) {:>5.1}% of MemTotal (high watermarks {:.2}%), kswapd scanned {:>9} (Normal {:>9}, DMA32 {:>9}), swap-outs {:>6}, high wmark quickly {:>5}\n",
            r.profile,
            g("memfree_mean_pct"),
            g("high_wmark_sum_pct"),
            g("pgscan_kswapd"),
            g("pgscan_kswapd_normal"),
            g("pgscan_kswapd_dma32"),
            g("pswpout"),
            g("kswapd_high_wmark_hit_quickly"),
        );
        s += &format!(
            "  {:<14} order-3 kswapd runs {:>5} ({:>6} loop_again passes, {:>5} below priority 10; lowest priority {:>2}; ended balanced {:>5}, fell back to order 0 {:>4}); 2nd-half free pages DMA32 {:>7.0} ({:>4.1}% in order>=3 blocks), Normal {:>6.0} ({:>4.1}%)\n",
            "",
            g("kswapd_balance_runs_high_order"),
            g("kswapd_high_order_passes"),
            g("kswapd_high_order_lumpy_passes"),
            g("kswapd_lowest_priority"),
            g("kswapd_high_order_balanced"),
            g("kswapd_high_order_fell_to_order0"),
            g("free_pages_mean_dma32"),
            g("free_order3_pct_dma32"),
            g("free_pages_mean_normal"),
            g("free_order3_pct_normal"),
        );
        s += &format!(
            "  {:<14} inside high-order runs ({:.2} s): order-0 movable pages from Normal {:>7}, DMA32 {:>7} (outside: {:>8} / {:>8}); Normal order>=3 blocks split by order-0 movable {:>6}, by high-order {:>6}\n",
            "",
            g("high_order_run_s"),
            g("movable0_alloc_in_runs_normal"),
            g("movable0_alloc_in_runs_dma32"),
            g("movable0_alloc_outside_runs_normal"),
            g("movable0_alloc_outside_runs_dma32"),
            g("o3_blocks_split_by_movable0_normal"),
            g("o3_blocks_split_by_high_order_normal"),
        );
        s += &format!(
            "  {:<14} Normal when a high-order run ended balanced (mean): free {:>6.0}, order-0 on non-movable lists {:>5.0}, in movable order>=3 blocks {:>5.0}\n",
            "",
            g("balanced_end_free_normal"),
            g("balanced_end_nonmovable_order0_normal"),
            g("balanced_end_movable_order3_pages_normal"),
        );
        if g("tcp_pages_sent") > 0.0 {
            s += &format!(
                "  {:<14} TCP write queues: {:>7} pages at the end (in no meminfo field); {:>9} pages queued in the run, {:>5} writes waited for a page\n",
                "",
                g("tcp_pages_at_end"),
                g("tcp_pages_sent"),
                g("tcp_alloc_waits"),
            );
        }
        if r.metrics.get("fs_slab_pages").is_some() {
            s += &format!(
                "  {:<14} fs metadata slab {:>7} pages at the end ({:>7} dentries); pruned {:>8} dentries, {:>8} inodes; inode steal {:>8} pages (kswapd {:>8}); slab pages reclaimed {:>7}\n",
                "",
                g("fs_slab_pages"),
                g("fs_dentries"),
                g("fs_pruned_dentries"),
                g("fs_pruned_inodes"),
                g("kswapd_inodesteal") + g("pginodesteal"),
                g("kswapd_inodesteal"),
                g("fs_reclaimed_slab"),
            );
        }
    }
    s
}

/// The mail-server observables beside what Simon Kirby measured on his servers (linux-mm,
/// Nov-Dec 2010, quoted in Mel Gorman's V3 cover letter and the thread around it). Nothing in
/// the history was calibrated to the right-hand column except Normal's composition.
pub fn reporter_table(runs: &[RunReport]) -> String {
    let rows: &[(&str, &str, &str)] = &[
        ("normal_file_pct_at_end", "Normal: file LRU % (calibrated)", "30"),
        ("normal_anon_pct_at_end", "Normal: anon LRU % (calibrated)", "26.5"),
        ("normal_mlocked_pct_at_end", "Normal: mlocked % (calibrated)", "3.7"),
        ("normal_slab_tables_pct_at_end", "Normal: slab + page tables % (calibrated)", "6.5"),
        ("normal_other_pct_at_end", "Normal: other %", "~14"),
        ("normal_free_pct_at_end", "Normal: free %", "19"),
        ("memfree_mean_pct", "MemFree, 2nd half, % of MemTotal", ">= 37 (1.5 GB), swap off"),
        ("normal_free_order01_pct", "Normal free in order 0-1 blocks %", "100"),
        ("free_blocks_order0_mean_normal", "Normal free order-0 blocks", "19,801 (7,618 in a fight)"),
        ("free_blocks_order1_mean_normal", "Normal free order-1 blocks", "8,446 (76 in a fight)"),
        ("free_blocks_order2_mean_normal", "Normal free order-2 blocks", "0"),
        ("free_blocks_order3_mean_normal", "Normal free order-3 blocks", "0"),
        ("dma32_free_order3plus_pct", "DMA32 free in order >= 3 blocks %", "4.5"),
        ("free_pages_mean_dma32", "DMA32 free pages", "~366,000 (44 %)"),
        ("kswapd_scan_normal_per_dma32", "kswapd pgscan Normal / DMA32", "45"),
        ("pgdeactivate", "pgdeactivate", "155 M (15 days)"),
        ("pgrefill", "pgrefill", "27 M (15 days)"),
        ("pswpout", "pswpout", "> 0 with swap on"),
    ];
    let mut s = format!("{:<44}", "");
    for r in runs {
        let swap = r.params.get("swap").and_then(|v| v.as_str()).unwrap_or("?");
        s += &format!("{:>22}", format!("{} swap {swap}", r.profile.trim_start_matches("linux-")));
    }
    s += "   Simon's servers\n";
    for (key, label, simon) in rows {
        s += &format!("{label:<44}");
        for r in runs {
            let v = r.metrics.get(key).copied().unwrap_or(f64::NAN);
            s += &format!("{:>22}", if v.abs() >= 1000.0 { format!("{v:.0}") } else { format!("{v:.2}") });
        }
        s += &format!("   {simon}\n");
    }
    s
}

fn run(opts: &ReproduceOpts) -> Result<(ReproduceReport, String), String> {
    // Eight independent runs, in the order of the tables: the mail server swap off and on, then
    // Mel Gorman's postmark and streaming runs, each under both kernels.
    // `--duration` lengthens only the mail-server history; Mel's runs end with their benchmark.
    let long = opts.duration_s.map(LongRun::new);
    let long_sets: Vec<String> = long.iter().flat_map(LongRun::sets).collect();
    let plan: [(&str, &str, &[&str], bool); 4] = [
        (MAILSERVER, "mailserver", &["swap.size=0"], true),
        (MAILSERVER, "mailserver", &[], true),
        (POSTMARK, "postmark", &[], false),
        (STREAMING, "streaming", &[], false),
    ];
    let mut jobs = Vec::new();
    for (file, workload, sets, lengthened) in plan {
        for p in PROFILES {
            let mut sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            if lengthened {
                sets.extend(long_sets.iter().cloned());
            }
            let window_from = long.filter(|_| lengthened).map(|l| l.window_s().0);
            jobs.push(pair_job(opts, file, workload, sets, p, window_from));
        }
    }
    let mut all = opts.in_parallel(jobs).into_iter().collect::<Result<Vec<_>, _>>()?.into_iter();
    let mut take = |n: usize| all.by_ref().take(n).collect::<Vec<RunReport>>();
    let n = PROFILES.len();
    let mut ms = take(n);
    ms.extend(take(n));
    let pm = take(n);
    let st = take(n);
    let mut text = String::new();
    text += "Seed 001 kswapd-high-order: the mail-server history on the reporter's machine (4 GiB, DMA32 832,392 pages, Normal 193,920 pages; skb receive into SLUB)\n\n";
    if let Some(l) = long {
        for r in ms.iter_mut() {
            l.record(r);
        }
        text += &l.statement();
        text.push('\n');
    }
    text += &reporter_table(&ms);
    text += "\nMemFree over time, mail server (swap off: first two columns; swap on: last two)\n";
    text += &memfree_over_time(&ms);
    text += &summary(&ms);
    text += &format!(
        "\n\nMel Gorman's runs: {}, order-3 atomic SLUB allocations from network receive\n\n",
        machine_line(opts)?
    );
    text += "postmark (small-file transactions) with a background anonymous reader\n\n";
    text += &table(&pm);
    text += "\nMemFree over time, postmark\n";
    text += &memfree_over_time(&pm);
    text += &summary(&pm);
    text += "\n\nstreaming I/O (file of twice memory written, then read)\n\n";
    text += &table(&st);
    text += "\nMemFree over time, streaming\n";
    text += &memfree_over_time(&st);
    text += &summary(&st);
    let mut runs = ms;
    runs.extend(pm);
    runs.extend(st);
    Ok((ReproduceReport::new("kswapd-high-order", runs), text))
}
