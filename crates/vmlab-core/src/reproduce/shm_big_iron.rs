//! Seed 002, shm-big-iron: a 32 GB, 8-way 2.4 box whose database maps a SysV shm segment from a
//! hundred processes has to swap part of the segment while a `cp` reads from the SAN.
//! `linux-2.4.23aa1` walks and destroys every address space before a shm page becomes freeable,
//! turns GiBs of shm into dirty swap cache before the first write, and the copy crawls;
//! `linux-2.4.23aa2` (objrmap in the walk, immediate shm swap I/O, clean-cache pass) swaps what
//! it needs and the copy runs at disk speed.

use std::fmt::Write;

use super::{run_seed_scenario, ReproduceOpts};
use crate::sim::Sim;
use crate::stats::report::{ReproduceReport, RunReport};
use crate::stats::timeline::{format_vmstat, Sample};

pub const SCENARIO: &str = "shm-big-iron.toml";
pub const PROFILES: [&str; 2] = ["linux-2.4.23aa1", "linux-2.4.23aa2"];

/// The seed's measurements of one run, computed from the run's own output.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    /// At the first swap write of a shm page (the seed's "first 4k of shm").
    pub swapcache_kb_at_first_swapout: Option<f64>,
    pub first_swapout_s: Option<f64>,
    /// At the first swap write of any page (an anonymous page the walk gave a slot may come first).
    pub swapcache_kb_at_first_any_swapout: Option<f64>,
    pub first_any_swapout_s: Option<f64>,
    pub cp_mb_per_s: f64,
    pub cp_mib_done: f64,
    pub sy_pct_mean: f64,
    pub swapping_samples: usize,
    pub minor_faults: f64,
    pub swpd_max_kb: u64,
}

/// Samples "while swapping": the kernel's swap-out path ran (`swap_out` walked page tables), swap
/// space in use changed, or pages moved to or from swap.
fn swapping(prev: &Sample, s: &Sample, walk_per_s: &[u64]) -> bool {
    let (a, b) = (prev.t_s.round() as usize, s.t_s.round() as usize);
    let walked = (a..b.min(walk_per_s.len())).any(|i| walk_per_s[i] > 0);
    walked || s.swpd_kb != prev.swpd_kb || s.so > 0 || s.si > 0
}

/// `cp` throughput from its progress marks (`cp_start`, `cp_mibN` after N MiB, `cp_done`):
/// MiB read over the time it took, or over the time it had if it did not finish.
fn cp_throughput(r: &RunReport) -> (f64, f64) {
    let Some(&start) = r.metrics.get("cp_start") else { return (0.0, 0.0) };
    let mut mib = 0.0f64;
    let mut at = start;
    for (k, &v) in r.metrics.iter() {
        if let Some(n) = k.strip_prefix("cp_mib").and_then(|n| n.parse::<f64>().ok()) {
            if n > mib {
                mib = n;
                at = v;
            }
        }
    }
    let end = if r.metrics.get("cp_done").is_some() { at } else { r.elapsed_s };
    let secs = (end - start).max(1e-9);
    (mib * 1.048576 / secs, mib)
}

pub fn figures(r: &RunReport, sim: &Sim) -> Figures {
    let st = sim.k.reclaim.aa24_stats().cloned().unwrap_or_default();
    let mut f = Figures {
        swapcache_kb_at_first_swapout: st.swapcache_at_first_shm_swapout.map(|p| (p * 4) as f64),
        first_swapout_s: st.first_shm_swapout_ns.map(|t| t as f64 / 1e9),
        swapcache_kb_at_first_any_swapout: st.swapcache_at_first_swapout.map(|p| (p * 4) as f64),
        first_any_swapout_s: st.first_swapout_ns.map(|t| t as f64 / 1e9),
        ..Default::default()
    };
    let (mbs, mib) = cp_throughput(r);
    f.cp_mb_per_s = mbs;
    f.cp_mib_done = mib;
    let mut sum = 0.0;
    for w in r.timeline.windows(2) {
        if swapping(&w[0], &w[1], &st.walk_ptes_per_s) {
            sum += w[1].sy as f64;
            f.swapping_samples += 1;
        }
    }
    f.sy_pct_mean = if f.swapping_samples > 0 { sum / f.swapping_samples as f64 } else { 0.0 };
    let minor_now = (r.counter("pgfault") - r.counter("pgmajfault")) as f64;
    f.minor_faults = match st.faults_at_first_reclaim {
        Some((pf, maj)) => minor_now - (pf - maj) as f64,
        None => 0.0,
    };
    f.swpd_max_kb = r.timeline.iter().map(|s| s.swpd_kb).max().unwrap_or(0);
    f
}

fn record(r: &mut RunReport, sim: &Sim, f: &Figures) {
    let m = &mut r.metrics;
    if let Some(v) = f.swapcache_kb_at_first_swapout {
        m.insert("swapcache_kb_at_first_swapout".to_string(), v);
    }
    if let Some(v) = f.first_swapout_s {
        m.insert("first_swapout_s".to_string(), v);
    }
    if let Some(v) = f.swapcache_kb_at_first_any_swapout {
        m.insert("swapcache_kb_at_first_any_swapout".to_string(), v);
    }
    if let Some(v) = f.first_any_swapout_s {
        m.insert("first_any_swapout_s".to_string(), v);
    }
    m.insert("cp_mb_per_s".to_string(), f.cp_mb_per_s);
    m.insert("cp_mib_read".to_string(), f.cp_mib_done);
    m.insert("sy_pct_mean".to_string(), f.sy_pct_mean);
    m.insert("minor_faults".to_string(), f.minor_faults);
    m.insert("swpd_max_kb".to_string(), f.swpd_max_kb as f64);
    let st = sim.k.reclaim.aa24_stats().cloned().unwrap_or_default();
    for (k, v) in [
        ("walk_ptes_unmapped", st.walk_unmapped),
        ("walk_ptes_young", st.walk_young),
        ("walk_ptes_active_page", st.walk_active),
        ("walk_freeable_anon", st.walk_freeable_anon),
        ("walk_freeable_cache", st.walk_freeable_cache),
        ("objrmap_ptes_unmapped", st.objrmap_unmapped),
        ("objrmap_trylock_failed", st.objrmap_trylock_failed),
        ("objrmap_stopped_young", st.objrmap_young),
        ("swap_out_calls", st.swap_out_calls),
        ("swap_out_success", st.swap_out_success),
        ("mms_walked_to_end", st.mms_walked),
        ("shrink_cache_writepages", st.writepages),
        ("shrink_cache_freed", st.freed),
        ("clean_pass_freed", st.clean_pass_freed),
        ("launder_waits", st.launder_waits),
    ] {
        m.insert(k.to_string(), v as f64);
    }
}

/// The timeline from a few seconds before swapping starts.
fn storm_window<'a>(r: &'a RunReport, sim: &Sim) -> &'a [Sample] {
    let stats = sim.k.reclaim.aa24_stats().cloned().unwrap_or_default();
    let walk = &stats.walk_ptes_per_s;
    let first = r.timeline.windows(2).position(|w| swapping(&w[0], &w[1], walk)).unwrap_or(0);
    &r.timeline[first.saturating_sub(2)..]
}

fn mib(kb: f64) -> f64 {
    kb / 1024.0
}

pub fn run(opts: &ReproduceOpts) -> Result<(ReproduceReport, String), String> {
    let mut runs = Vec::new();
    let mut out = String::new();
    let mut figs = Vec::new();
    for prof in PROFILES {
        let (mut r, sim) = run_seed_scenario(opts, SCENARIO, prof, &[], Vec::new())?;
        let f = figures(&r, &sim);
        record(&mut r, &sim, &f);
        let _ = writeln!(out, "== {prof}: {} MiB, {} CPUs ==", r.machine.memory_bytes >> 20, r.machine.cpus);
        let _ = write!(out, "{}", format_vmstat(storm_window(&r, &sim)));
        let _ = writeln!(out);
        runs.push(r);
        figs.push(f);
    }
    let _ = writeln!(out, "{:<44} {:>18} {:>18}", "", PROFILES[0], PROFILES[1]);
    let row = |out: &mut String, name: &str, a: String, b: String| {
        let _ = writeln!(out, "{name:<44} {a:>18} {b:>18}");
    };
    let sc = |f: &Figures| match f.swapcache_kb_at_first_swapout {
        Some(kb) => format!("{:.0} MiB", mib(kb)),
        None => "no swap-out".to_string(),
    };
    let t = |f: &Figures| f.first_swapout_s.map(|s| format!("{s:.1} s")).unwrap_or_else(|| "-".into());
    let sca = |f: &Figures| match f.swapcache_kb_at_first_any_swapout {
        Some(kb) => format!("{:.0} MiB", mib(kb)),
        None => "no swap-out".to_string(),
    };
    let ta = |f: &Figures| f.first_any_swapout_s.map(|s| format!("{s:.1} s")).unwrap_or_else(|| "-".into());
    row(&mut out, "swap cache at the first swap-out of shm", sc(&figs[0]), sc(&figs[1]));
    row(&mut out, "first swap-out of shm at", t(&figs[0]), t(&figs[1]));
    row(&mut out, "swap cache at the first swap-out (any page)", sca(&figs[0]), sca(&figs[1]));
    row(&mut out, "first swap-out (any page) at", ta(&figs[0]), ta(&figs[1]));
    row(&mut out, "cp throughput (MB/s)", format!("{:.1}", figs[0].cp_mb_per_s), format!("{:.1}", figs[1].cp_mb_per_s));
    row(&mut out, "cp progress (MiB)", format!("{:.0}", figs[0].cp_mib_done), format!("{:.0}", figs[1].cp_mib_done));
    row(
        &mut out,
        "sy % while swapping (mean)",
        format!("{:.0}", figs[0].sy_pct_mean),
        format!("{:.0}", figs[1].sy_pct_mean),
    );
    row(
        &mut out,
        "minor faults since reclaim began",
        format!("{:.0}", figs[0].minor_faults),
        format!("{:.0}", figs[1].minor_faults),
    );
    row(
        &mut out,
        "swap used, peak (MiB)",
        format!("{:.0}", mib(figs[0].swpd_max_kb as f64)),
        format!("{:.0}", mib(figs[1].swpd_max_kb as f64)),
    );
    for key in [
        "walk_ptes_unmapped",
        "walk_ptes_young",
        "walk_ptes_active_page",
        "walk_freeable_anon",
        "walk_freeable_cache",
        "objrmap_ptes_unmapped",
        "objrmap_trylock_failed",
        "objrmap_stopped_young",
        "mms_walked_to_end",
        "swap_out_calls",
        "swap_out_success",
        "shrink_cache_writepages",
        "shrink_cache_freed",
        "clean_pass_freed",
        "launder_waits",
    ] {
        let g = |r: &RunReport| format!("{:.0}", r.metrics.get(key).copied().unwrap_or(0.0));
        row(&mut out, key, g(&runs[0]), g(&runs[1]));
    }
    for (r, prof) in runs.iter().zip(PROFILES) {
        let top: Vec<String> =
            r.kernel_profile.iter().take(5).map(|e| format!("{} {:.1}s", e.function, e.cpu_s)).collect();
        let _ = writeln!(out, "kernel profile {prof}: {}", top.join(", "));
    }
    Ok((ReproduceReport::new("shm-big-iron", runs), out))
}
