//! Seed 004 (Török Edwin, LKML, Sep 2008): threads scanning a file tree with mmap() are no faster
//! than one thread, while read() scales with the disk's queue. Runs `scenarios/seeds/mmap-sem.toml`
//! for 1–16 threads in both modes under the kernel that had the convoy (2.6.26: a fault sleeps
//! on disk I/O holding mmap_sem) and the two that fixed it (2.6.38 FAULT_FLAG_ALLOW_RETRY,
//! 6.8 per-VMA locks), and prints the seed's table and speedups, plus the mmap_sem counters
//! that show why.

use super::{run_seed_scenario, ReproduceOpts, SeedDef};
use crate::sim::Sim;
use crate::stats::report::{ReproduceReport, RunReport};

pub const SCENARIO: &str = "mmap-sem.toml";
pub const PROFILES: &[&str] = &["linux-2.6.26", "linux-2.6.38", "linux-6.8"];
pub const THREADS: &[u32] = &[1, 2, 4, 8, 16];
pub const MODES: &[&str] = &["read", "mmap"];

pub fn def() -> SeedDef {
    SeedDef {
        name: "mmap-sem",
        number: 4,
        runs: PROFILES.len() * THREADS.len() * MODES.len(),
        profiles: PROFILES,
        long_runs: None,
        summary: "004: mmap faults serialise on mmap_sem (2.6.26) while read() scales; fixed by fault retry (2.6.38) and per-VMA locks (6.8)",
        run,
    }
}

fn run(opts: &ReproduceOpts) -> Result<(ReproduceReport, String), String> {
    run_table(opts, PROFILES, THREADS)
}

/// One cell of the table: a finished run and its elapsed time.
pub struct Cell {
    pub profile: String,
    pub mode: &'static str,
    pub threads: u32,
    pub elapsed_s: f64,
}

/// Run every (profile, threads, mode) and return the report, the text, and the cells.
pub fn run_table(
    opts: &ReproduceOpts,
    profiles: &[&str],
    threads: &[u32],
) -> Result<(ReproduceReport, String), String> {
    let mut runs = Vec::new();
    let mut cells = Vec::new();
    let mut tree = String::new();
    for &p in profiles {
        for &n in threads {
            for (mi, &mode) in MODES.iter().enumerate() {
                let sets = vec![format!("vars.threads={n}"), format!("vars.mmap={mi}")];
                let (mut rep, sim) = run_seed_scenario(opts, SCENARIO, p, &sets, Vec::new())?;
                if tree.is_empty() {
                    tree = describe(&sim);
                }
                let elapsed = annotate(&mut rep, &sim, mode, n)?;
                cells.push(Cell { profile: p.to_string(), mode, threads: n, elapsed_s: elapsed });
                runs.push(rep);
            }
        }
    }
    let text = render(&tree, profiles, threads, &cells, &runs);
    Ok((ReproduceReport::new("mmap-sem", runs), text))
}

/// Elapsed time between the program's `mark start` and `mark done`, and the lock and disk
/// figures that explain it, as metrics of the run.
fn annotate(rep: &mut RunReport, sim: &Sim, mode: &'static str, threads: u32) -> Result<f64, String> {
    let mark = |n: &str| {
        rep.metrics.get(n).copied().ok_or_else(|| format!("{SCENARIO}: the program never reached `mark {n}`"))
    };
    let elapsed = mark("done")? - mark("start")?;
    rep.params.insert("mode", serde_json::Value::from(mode));
    rep.params.insert("threads", serde_json::Value::from(threads));
    let st = sim.k.mmap_sem_stats();
    let m = &mut rep.metrics;
    m.insert("elapsed_s", elapsed);
    m.insert("mmap_sem_read_contended", st.read_contended as f64);
    m.insert("mmap_sem_write_contended", st.write_contended as f64);
    m.insert("mmap_sem_read_wait_s", st.read_wait_ns as f64 / 1e9);
    m.insert("mmap_sem_write_wait_s", st.write_wait_ns as f64 / 1e9);
    m.insert("mmap_sem_max_wait_ms", st.max_wait_ns as f64 / 1e6);
    m.insert("faults_io_wait_holding_mmap_sem", st.io_waits_holding as f64);
    let end = sim.s.now;
    if let Some(d) = sim.k.disks.first() {
        m.insert("disk_util_pct", d.util_percent(end));
        m.insert("disk_read_mb_s", if elapsed > 0.0 { d.bytes_read() as f64 / elapsed / 1e6 } else { 0.0 });
    }
    Ok(elapsed)
}

fn describe(sim: &Sim) -> String {
    let sizes: Vec<u64> = sim.k.files.iter().filter(|f| !f.shmem).map(|f| f.size).collect();
    let total: u64 = sizes.iter().sum();
    let mut sorted = sizes.clone();
    sorted.sort_unstable();
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
    let d = sim.k.disks.first().map(|d| *d.params());
    let disk = d
        .map(|p| {
            format!(
                "{} spindles{} ({} stripes), {:.0} MB/s and {:.1} ms seek each",
                p.spindles,
                if p.mirrored { " mirrored" } else { "" },
                p.stripes(),
                p.bandwidth_bps as f64 / 1e6,
                p.seek_ns as f64 / 1e6
            )
        })
        .unwrap_or_default();
    format!(
        "{} files, {:.0} MiB, mean {:.0} KiB, median {:.0} KiB; {} CPUs; disk: {}",
        sizes.len(),
        total as f64 / (1 << 20) as f64,
        total as f64 / sizes.len().max(1) as f64 / 1024.0,
        median as f64 / 1024.0,
        sim.k.cfg.cpus,
        disk
    )
}

fn cell<'a>(cells: &'a [Cell], p: &str, n: u32, mode: &str) -> Option<&'a Cell> {
    cells.iter().find(|c| c.profile == p && c.threads == n && c.mode == mode)
}

fn render(tree: &str, profiles: &[&str], threads: &[u32], cells: &[Cell], runs: &[RunReport]) -> String {
    let mut s = String::new();
    s.push_str("Seed 004 mmap-sem: N threads take files from a shared queue and read() each, or mmap() it,\n");
    s.push_str("touch every page and munmap() it; caches dropped before each run.\n");
    s.push_str(&format!("{tree}\n\n"));
    let header = |s: &mut String| {
        s.push_str("Number of threads ->");
        for n in threads {
            s.push_str(&format!(", {n},"));
        }
        s.push_str("\nKernel version");
        for _ in threads {
            s.push_str(", read, mmap");
        }
        s.push('\n');
    };
    s.push_str("Time to run the program, seconds (simulated)\n");
    header(&mut s);
    for &p in profiles {
        s.push_str(p);
        for &n in threads {
            for mode in MODES {
                match cell(cells, p, n, mode) {
                    Some(c) => s.push_str(&format!(", {:.2}", c.elapsed_s)),
                    None => s.push_str(", -"),
                }
            }
        }
        s.push('\n');
    }
    s.push_str("\nSpeedups relative to nthreads=1\n");
    header(&mut s);
    for &p in profiles {
        s.push_str(p);
        for &n in threads {
            for mode in MODES {
                let base = cell(cells, p, threads[0], mode).map(|c| c.elapsed_s);
                match (cell(cells, p, n, mode), base) {
                    (Some(c), Some(b)) if c.elapsed_s > 0.0 => s.push_str(&format!(", {:.2}", b / c.elapsed_s)),
                    _ => s.push_str(", -"),
                }
            }
        }
        s.push('\n');
    }
    s.push_str("\nWhy (mmap runs): mmap_sem waits and faults that slept on disk I/O holding it\n");
    s.push_str(&format!(
        "{:14} {:>7} {:>10} {:>10} {:>11} {:>11} {:>9} {:>11} {:>9}\n",
        "kernel", "threads", "rd_waits", "wr_waits", "rd_wait_s", "wr_wait_s", "max_ms", "io_holding", "disk_MB/s"
    ));
    for r in runs.iter().filter(|r| r.params.get("mode").and_then(|v| v.as_str()) == Some("mmap")) {
        let g = |k: &str| r.metrics.get(k).copied().unwrap_or(0.0);
        s.push_str(&format!(
            "{:14} {:>7} {:>10.0} {:>10.0} {:>11.2} {:>11.2} {:>9.1} {:>11.0} {:>9.1}\n",
            r.profile,
            r.params.get("threads").and_then(|v| v.as_u64()).unwrap_or(0),
            g("mmap_sem_read_contended"),
            g("mmap_sem_write_contended"),
            g("mmap_sem_read_wait_s"),
            g("mmap_sem_write_wait_s"),
            g("mmap_sem_max_wait_ms"),
            g("faults_io_wait_holding_mmap_sem"),
            g("disk_read_mb_s"),
        ));
    }
    s
}
