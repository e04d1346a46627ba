//! Seed 003: page-table quicklists that grow with the number of CPUs (2.6.26 → 2.6.27).
//!
//! Every run is the seed's program on a machine; each is simulated until `Quicklists:` stops
//! moving (steady state), so the table's cells are measured, not computed. The runs:
//! - the seed's box (8 GiB, 2 nodes × 4 CPUs, ~5 GiB free) under linux-2.6.26 and linux-2.6.27;
//! - the seed's table, `QList_max / (Free + QList_max)` for 2, 4, 8 and 16 CPUs per node: on one
//!   node (the setting of the seed's formula: one CPU forks, the node's other CPUs exit) and on
//!   two nodes (the seed's machine shape, where CPUs of the second node cache the first node's
//!   pages — see `explain_two_nodes`);
//! - the seed's 64-CPU / 1 TiB extrapolation as a run (`ONE_TIB`: the child touches one page per
//!   2 MiB of 1 GiB, so page tables build up 64 times faster per fault).
//!
//! Forked children all carry the parent's name; their per-task CPU entries are merged into one
//! per name in the JSON, or a run of tens of thousands of forks would list each of them.

use std::cell::RefCell;
use std::fmt::Write;
use std::rc::Rc;
use std::time::Instant;

use super::ReproduceOpts;
use crate::sim::{resolve_profile, Sim};
use crate::stats::report::{ReproduceReport, RunReport, TaskCpu};

pub const SEED: &str = "quicklists";
const BEFORE: &str = "linux-2.6.26";
/// Sets turning `quicklists.toml` into the seed's 1 TiB machine (see the scenario's comments).
pub const ONE_TIB: [&str; 7] = [
    "machine.memory=1TiB",
    "machine.cpus=64",
    "machine.nodes=8",
    "vars.in_use=8GiB",
    "vars.map=1GiB",
    "vars.step=2MiB",
    "duration=96h",
];
const AFTER: &str = "linux-2.6.27";
/// The two kernels every run is one of.
pub const PROFILES: [&str; 2] = [BEFORE, AFTER];
const TABLE_CPUS: [u32; 4] = [2, 4, 8, 16];
/// The reproduction's runs: the seed's box before and after, every table cell (one node before
/// and after, two nodes before, but for the seed's own box), and the 1 TiB pair.
pub const RUNS: usize = 2 + 3 * TABLE_CPUS.len() - 1 + 2;
/// The seed's table, in percent.
const SEED_TABLE: [f64; 4] = [5.8, 16.0, 30.0, 48.0];

/// Steady state: `Quicklists:` stayed within this fraction of its value over the last
/// `STEADY_WINDOW_NS` of simulated time.
const STEADY_TOLERANCE: f64 = 0.005;
const STEADY_WINDOW_NS: u64 = 3600 * 1_000_000_000;

/// What one run measured.
pub struct Measured {
    pub report: RunReport,
    pub quicklists_kb: u64,
    pub memfree_kb: u64,
    pub ratio_pct: f64,
    /// Simulated seconds until steady state (None: the duration ran out first).
    pub steady_s: Option<f64>,
    pub forks: u64,
    /// Per CPU: quicklist pages, and how many of them belong to each node.
    pub per_cpu: Vec<(u64, Vec<u64>)>,
    pub wall_s: f64,
}

/// Run `file` under `profile` with `sets` until steady state (or the scenario's duration).
/// `per_cpu_detail` walks every quicklist at the end to tell which node each page is from.
pub fn measure(
    opts: &ReproduceOpts,
    file: &str,
    profile: &str,
    sets: &[String],
    per_cpu_detail: bool,
) -> Result<Measured, String> {
    let wall = Instant::now();
    let sc = opts.load_for(file, Some(profile), sets)?;
    let diag = |e| crate::api::render(crate::api::diagnose(&sc, e));
    let prof = resolve_profile(&sc, Some(profile)).map_err(diag)?;
    let mut sim = Sim::new(&sc, prof).map_err(diag)?;
    sim.progress = opts.begin_run(profile, sets).1;
    let steady_at: Rc<RefCell<Option<u64>>> = Rc::new(RefCell::new(None));
    let hist: Rc<RefCell<Vec<(u64, u64)>>> = Rc::new(RefCell::new(Vec::new()));
    {
        let (steady_at, hist) = (Rc::clone(&steady_at), Rc::clone(&hist));
        sim.on_sample = Some(Box::new(move |s: &mut Sim| {
            let now = s.s.now;
            let ql = s.k.g.quicklist;
            let mut h = hist.borrow_mut();
            h.push((now, ql));
            if ql == 0 || now < STEADY_WINDOW_NS {
                return;
            }
            let from = now - STEADY_WINDOW_NS;
            let first = h.partition_point(|&(t, _)| t < from);
            let tol = (ql as f64 * STEADY_TOLERANCE) as u64;
            let settled = h[first..].iter().all(|&(_, q)| q.abs_diff(ql) <= tol);
            if settled && first > 0 {
                *steady_at.borrow_mut() = Some(now);
                s.end_limit = now;
            }
        }));
    }
    sim.run().map_err(diag)?;
    let mut report = sim.report(wall.elapsed().as_secs_f64());
    merge_tasks(&mut report.tasks);
    let mi = sim.meminfo();
    let quicklists_kb = mi.quicklists.unwrap_or(0);
    let memfree_kb = mi.mem_free;
    let ratio_pct = if quicklists_kb + memfree_kb == 0 {
        0.0
    } else {
        quicklists_kb as f64 * 100.0 / (quicklists_kb + memfree_kb) as f64
    };
    let forks = sim.s.tasks.iter().filter(|t| t.parent.is_some()).count() as u64;
    let nodes = sim.k.nodes.len();
    let per_cpu = (0..sim.k.quicklists.len())
        .map(|c| {
            let l = &sim.k.quicklists[c];
            let mut by_node = vec![0u64; nodes];
            if per_cpu_detail {
                for p in l.collect(&sim.k.fr) {
                    by_node[sim.k.node_of(p)] += 1;
                }
            }
            (l.len, by_node)
        })
        .collect();
    let steady_s = steady_at.borrow().map(|t| t as f64 / 1e9);
    let cfg = &sim.k.cfg;
    report.params.insert("cpus_per_node", serde_json::json!(cfg.cpus / cfg.nodes.max(1)));
    report.params.insert("nodes", serde_json::json!(cfg.nodes));
    report.params.insert("memory_bytes", serde_json::json!(cfg.memory_bytes));
    report.metrics.insert("quicklists_kb", quicklists_kb as f64);
    report.metrics.insert("qlist_ratio_pct", round(ratio_pct, 3));
    report.metrics.insert("memfree_kb", memfree_kb as f64);
    report.metrics.insert("forks", forks as f64);
    report.metrics.insert("steady_s", steady_s.unwrap_or(-1.0));
    Ok(Measured {
        report,
        quicklists_kb,
        memfree_kb,
        ratio_pct,
        steady_s,
        forks,
        per_cpu,
        wall_s: wall.elapsed().as_secs_f64(),
    })
}

fn round(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x * m).round() / m
}

/// One entry per task name (children share their parent's name).
fn merge_tasks(tasks: &mut Vec<TaskCpu>) {
    let mut out: Vec<TaskCpu> = Vec::new();
    for t in tasks.drain(..) {
        match out.iter_mut().find(|o| o.name == t.name && o.kthread == t.kthread) {
            Some(o) => {
                o.cpu_s += t.cpu_s;
                o.cpu_pct += t.cpu_pct;
            }
            None => out.push(t),
        }
    }
    *tasks = out;
}

fn table_sets(nodes: u32, cpus_per_node: u32) -> Vec<String> {
    vec![format!("machine.nodes={nodes}"), format!("machine.cpus={}", nodes * cpus_per_node)]
}

fn mib(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

fn steady(m: &Measured) -> String {
    match m.steady_s {
        Some(s) => format!("steady after {:.1} h of simulated time, {} forks", s / 3600.0, m.forks),
        None => format!("NOT steady when the duration ran out ({} forks)", m.forks),
    }
}

fn meminfo_excerpt(out: &mut String, m: &Measured) {
    for k in ["MemTotal", "MemFree", "PageTables", "Quicklists"] {
        if let Some(v) = m.report.meminfo.get(k) {
            let _ = writeln!(out, "    {:<12}{:>10} kB", format!("{k}:"), v);
        }
    }
}

fn per_cpu_lines(out: &mut String, m: &Measured, cpus_per_node: usize) {
    let _ = writeln!(out, "    per-CPU quicklists (MiB; the node its pages came from):");
    for (c, (len, by_node)) in m.per_cpu.iter().enumerate() {
        let from: Vec<String> = by_node
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(n, &v)| format!("node{n} {:.0}%", v as f64 * 100.0 / (*len).max(1) as f64))
            .collect();
        let from = if from.is_empty() { "-".to_string() } else { from.join(", ") };
        let _ = writeln!(
            out,
            "      cpu{c:<2} (node {}) {:>8.1}   {from}",
            c / cpus_per_node.max(1),
            *len as f64 * 4.0 / 1024.0
        );
    }
}

/// Why two nodes give more than the seed's formula: the formula's node has one forking CPU and
/// c−1 CPUs each holding node_free/16 of that node's pages, which shrinks the node's free memory
/// they are sized by. On two nodes the children also exit on the second node's c CPUs; their
/// lists hold node-0 pages (quicklist_free does not look at the page's node) but are bounded by
/// node 1's free memory, which those pages never reduce.
fn explain_two_nodes(c: u32) -> f64 {
    let c = c as f64;
    100.0 * (2.0 * c - 1.0) / (2.0 * (15.0 + c))
}

/// One run to make: scenario file, profile, extra sets, whether to walk the quicklists.
struct Job {
    file: &'static str,
    profile: &'static str,
    sets: Vec<String>,
    detail: bool,
}

fn job(file: &'static str, profile: &'static str, sets: Vec<String>, detail: bool) -> Job {
    Job { file, profile, sets, detail }
}

/// Run independent jobs on up to `threads` worker threads; results come back in job order and
/// do not depend on the number of threads (each run has its own machine and RNG).
fn run_jobs(opts: &ReproduceOpts, jobs: &[Job], threads: usize) -> Result<Vec<Measured>, String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<Measured, String>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|sc| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(j) = jobs.get(i) else { break };
                let r = measure(opts, j.file, j.profile, &j.sets, j.detail);
                if let (Ok(m), true) = (&r, std::io::IsTerminal::is_terminal(&std::io::stderr())) {
                    crate::reproduce::note!("  {} {} {:?}: {:.1} s", j.file, j.profile, j.sets, m.wall_s);
                }
                *results[i].lock().expect("no panics while holding it") = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|m| m.into_inner().expect("no poisoning").unwrap_or_else(|| Err("a run did not finish".into())))
        .collect()
}

/// Worker threads for the 8 GiB runs: the machine's CPUs, at most 8 (`VMLAB_JOBS` overrides).
fn threads() -> usize {
    if let Some(n) = std::env::var("VMLAB_JOBS").ok().and_then(|v| v.parse::<usize>().ok()) {
        return n.max(1);
    }
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(8)
}

pub fn run(opts: &ReproduceOpts) -> Result<(ReproduceReport, String), String> {
    let mut out = String::new();
    let _ =
        writeln!(out, "Seed 003 — quicklists: page-table caches that grow with the number of CPUs (2.6.26 → 2.6.27)");
    let _ = writeln!(
        out,
        "The seed's program: a parent on CPU 0 forks a child every second; the child maps 10 MiB, touches"
    );
    let _ = writeln!(
        out,
        "every page, moves to the next CPU (round robin over CPUs 1..N-1) and exits there. Every run goes on"
    );
    let _ = writeln!(out, "until Quicklists: has stayed within 0.5% for an hour of simulated time.\n");

    // The 8 GiB runs: the seed's box before and after, then the table's cells.
    let q = "quicklists.toml";
    let mut jobs = vec![job(q, BEFORE, vec![], true), job(q, AFTER, vec![], true)];
    for &c in &TABLE_CPUS {
        jobs.push(job(q, BEFORE, table_sets(1, c), false));
        jobs.push(job(q, AFTER, table_sets(1, c), false));
        // Two nodes x 4 CPUs is the seed's box, measured above.
        if c != 4 {
            jobs.push(job(q, BEFORE, table_sets(2, c), false));
        }
    }
    let wall = Instant::now();
    let mut res = run_jobs(opts, &jobs, threads())?.into_iter();
    let wall_8g = wall.elapsed().as_secs_f64();
    let before = res.next().ok_or("missing run")?;
    let after = res.next().ok_or("missing run")?;
    let mut one_node: Vec<Measured> = Vec::new();
    let mut one_node_after: Vec<Measured> = Vec::new();
    let mut two_nodes: Vec<Option<Measured>> = Vec::new();
    for &c in &TABLE_CPUS {
        one_node.push(res.next().ok_or("missing run")?);
        one_node_after.push(res.next().ok_or("missing run")?);
        two_nodes.push(if c == 4 { None } else { Some(res.next().ok_or("missing run")?) });
    }

    let _ = writeln!(out, "8 GiB, 2 nodes x 4 CPUs, ~5 GiB free (scenarios/seeds/quicklists.toml)");
    for m in [&before, &after] {
        let _ = writeln!(out, "  {}  ({})", m.report.profile, steady(m));
        meminfo_excerpt(&mut out, m);
        let _ = writeln!(out, "    Quicklists / (MemFree + Quicklists) = {:.1}%", m.ratio_pct);
        per_cpu_lines(&mut out, m, 4);
    }
    let _ = writeln!(
        out,
        "  Quicklists: {:.0} MiB -> {:.0} MiB ({:.2}x; the seed saw 844,800 kB = 825 MiB before the fix)\n",
        mib(before.quicklists_kb),
        mib(after.quicklists_kb),
        after.quicklists_kb as f64 / before.quicklists_kb.max(1) as f64
    );

    let two = |i: usize| -> &Measured { two_nodes[i].as_ref().unwrap_or(&before) };
    let _ = writeln!(out, "QList_max / (Free + QList_max), each cell a run to steady state (8 GiB, ~5 GiB free):\n");
    let _ = writeln!(out, " Number of CPUs per node                      2       4       8      16");
    let _ = writeln!(out, " =========================================  ================================");
    let row = |out: &mut String, label: &str, v: &[f64]| {
        let _ = write!(out, " {label:<43}");
        for x in v {
            let _ = write!(out, "{:>7.1}%", x);
        }
        let _ = writeln!(out);
    };
    row(&mut out, "seed (its formula (c-1)/(16+c-1))", &SEED_TABLE);
    row(&mut out, "linux-2.6.26, 1 node x c CPUs", &one_node.iter().map(|m| m.ratio_pct).collect::<Vec<_>>());
    row(&mut out, "linux-2.6.26, 2 nodes x c CPUs", &(0..4).map(|i| two(i).ratio_pct).collect::<Vec<_>>());
    row(
        &mut out,
        "  (2c-1)/(2(15+c)), see below",
        &TABLE_CPUS.iter().map(|&c| explain_two_nodes(c)).collect::<Vec<_>>(),
    );
    row(&mut out, "linux-2.6.27, 1 node x c CPUs", &one_node_after.iter().map(|m| m.ratio_pct).collect::<Vec<_>>());
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        " The seed's formula describes one node: its forking CPU caches nothing, its c-1 other CPUs each"
    );
    let _ = writeln!(
        out,
        " hold node_free/16 of that node's pages. On two nodes the children also exit on the second node's"
    );
    let _ = writeln!(
        out,
        " c CPUs: quicklist_free() keeps a page of any node, and their bound follows node 1's free memory,"
    );
    let _ = writeln!(out, " which the node-0 pages they hoard never reduce — hence more than the formula.");
    for (i, &c) in TABLE_CPUS.iter().enumerate() {
        for m in [&one_node[i], &one_node_after[i]] {
            if m.steady_s.is_none() {
                let _ = writeln!(out, " warning: {} 1 node x {c} CPUs did not reach steady state", m.report.profile);
            }
        }
        if two(i).steady_s.is_none() {
            let _ = writeln!(out, " warning: 2 nodes x {c} CPUs did not reach steady state");
        }
    }
    let _ = writeln!(out);
    if opts.timing {
        crate::reproduce::note!(
            "vmlab: quicklists: {} runs of 8 GiB on {} threads: {:.1} s wall",
            jobs.len(),
            threads(),
            wall_8g
        );
    }

    // 1 TiB, one run at a time (each holds a 1 TiB machine's frames).
    let _ = writeln!(out, "1 TiB, 8 nodes x 8 CPUs x 128 GiB; the child touches one page per 2 MiB of 1 GiB:");
    let _ = writeln!(out, "  --set {}", ONE_TIB.join(" --set "));
    let mut big = Vec::new();
    for profile in [BEFORE, AFTER] {
        reset_peak_rss();
        let sets: Vec<String> = ONE_TIB.iter().map(|s| s.to_string()).collect();
        let m = measure(opts, "quicklists.toml", profile, &sets, false)?;
        let rss = peak_rss_kb();
        let _ = writeln!(out, "  {}  ({})", m.report.profile, steady(&m));
        meminfo_excerpt(&mut out, &m);
        let _ = writeln!(
            out,
            "    Quicklists = {:.0} GB = {:.1}% of MemFree + Quicklists{}",
            m.quicklists_kb as f64 * 1024.0 / 1e9,
            m.ratio_pct,
            if profile == BEFORE { " (the seed predicted ~300 GB)" } else { "" }
        );
        if opts.timing {
            crate::reproduce::note!(
                "vmlab: quicklists {} 1 TiB: {:.1} s wall, peak RSS {}",
                m.report.profile,
                m.wall_s,
                rss.map(|k| format!("{:.2} GiB", k as f64 / 1048576.0)).unwrap_or_else(|| "unknown".into())
            );
        }
        big.push(m);
    }

    let mut runs = vec![before.report, after.report];
    for (i, m) in one_node.into_iter().enumerate() {
        runs.push(m.report);
        runs.push(one_node_after.remove(0).report);
        if let Some(t) = two_nodes[i].take() {
            runs.push(t.report);
        }
    }
    runs.extend(big.into_iter().map(|m| m.report));
    Ok((ReproduceReport::new(SEED, runs), out))
}

/// Reset VmHWM (Linux: `echo 5 > /proc/self/clear_refs`) so the next reading is one run's peak.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// VmHWM of this process (Linux), kB.
fn peak_rss_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
