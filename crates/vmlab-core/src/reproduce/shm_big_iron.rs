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
/// The rows `vmlab reproduce shm-big-iron` prints: aa1; aa1 with objrmap in the walk and
/// immediate shm swap I/O but no clean-cache pass (Andrea's point 3); aa2.
pub const PROFILES: [&str; 2] = ["linux-2.4.23aa1", "linux-2.4.23aa2"];

/// The three switches of 2.4.23aa2's `05_vm_28-shmem-big-iron-1`, as profile knobs.
pub const FIXES: [&str; 3] = ["objrmap_walk", "shm_writepage_io", "clean_cache_pass"];

/// One run: a profile row and the fixes switched on over it.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub profile: &'static str,
    /// `FIXES[i]` on when bit i is set; None: the row's own settings.
    pub fixes: Option<u8>,
}

impl Variant {
    fn sets(&self) -> Vec<String> {
        match self.fixes {
            None => Vec::new(),
            Some(m) => FIXES.iter().enumerate().map(|(i, f)| format!("reclaim.{f}={}", m & (1 << i) != 0)).collect(),
        }
    }
    /// The three switches the run has on: the mask's, or the row's own.
    fn switches(&self) -> [bool; 3] {
        match self.fixes {
            Some(m) => [0, 1, 2].map(|i| m & (1 << i) != 0),
            None => crate::profiles::find(self.profile)
                .map(|p| [p.objrmap_walk, p.shm_writepage_io, p.clean_cache_pass])
                .unwrap_or_default(),
        }
    }
    /// A rank of the run's host time, to start the longest runs first. The clean-cache pass
    /// visits `nr_inactive / vm_cache_scan_ratio` pages at every reclaim pass (a third of aa2's
    /// run in perf); objrmap's walk and immediate shm I/O keep the store's pages moving
    /// (aa1 with both took 1.3x plain aa1's user time, perf-reproduce.md session 23).
    fn cost(&self) -> u64 {
        let [objrmap, shm_io, clean] = self.switches();
        1 + objrmap as u64 + shm_io as u64 + 4 * clean as u64
    }
    fn label(&self, sim: &Sim) -> String {
        let p = &sim.k.profile;
        let on: Vec<&str> =
            [(p.objrmap_walk, "objrmap"), (p.shm_writepage_io, "shm-io"), (p.clean_cache_pass, "clean-pass")]
                .iter()
                .filter(|(b, _)| *b)
                .map(|(_, n)| *n)
                .collect();
        match self.fixes {
            None => self.profile.trim_start_matches("linux-").to_string(),
            Some(_) if on.is_empty() => format!("{} (no fix)", self.profile.trim_start_matches("linux-")),
            Some(_) => format!("{}+{}", self.profile.trim_start_matches("linux-"), on.join("+")),
        }
    }
}

/// The default rows.
pub fn variants(ablate: bool) -> Vec<Variant> {
    if ablate {
        return (0..8).map(|m| Variant { profile: PROFILES[0], fixes: Some(m) }).collect();
    }
    vec![
        Variant { profile: PROFILES[0], fixes: None },
        Variant { profile: PROFILES[0], fixes: Some(0b011) },
        Variant { profile: PROFILES[1], fixes: None },
    ]
}

/// The seed's measurements of one run, computed from the run's own output.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    /// At the first swap write of a shm page (the seed's "first 4k of shm").
    pub swapcache_kb_at_first_swapout: Option<f64>,
    pub first_swapout_s: Option<f64>,
    /// When `shmem_writepage` first moved a shm page into the swap cache.
    pub first_shm_swapcache_s: Option<f64>,
    /// At the first swap write of any page (an anonymous page the walk gave a slot may come first).
    pub swapcache_kb_at_first_any_swapout: Option<f64>,
    pub first_any_swapout_s: Option<f64>,
    pub cp_mb_per_s: f64,
    pub cp_mib_done: f64,
    /// The conversion phase (first shm page into the swap cache → first shm swap write), as the
    /// seed's 31 `vmstat 1` rows: mean sy and r over the rows it covers, and how many.
    pub sy_pct_conversion: f64,
    pub r_conversion: f64,
    pub conversion_rows: usize,
    pub sy_pct_mean: f64,
    pub swapping_samples: usize,
    pub minor_faults: f64,
    pub swpd_max_kb: u64,
    pub objrmap_unmapped_kb: f64,
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

/// The `vmstat 1` rows whose interval overlaps [a, b] (seconds).
fn conversion_rows(tl: &[Sample], a: f64, b: f64) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut prev = 0.0;
    for s in tl {
        if s.t_s > a && prev <= b {
            out.push(s.clone());
        }
        prev = s.t_s;
    }
    out
}

pub fn figures(r: &RunReport, sim: &Sim) -> Figures {
    let st = sim.k.reclaim.aa24_stats().cloned().unwrap_or_default();
    let mut f = Figures {
        swapcache_kb_at_first_swapout: st.swapcache_at_first_shm_swapout.map(|p| (p * 4) as f64),
        first_swapout_s: st.first_shm_swapout_ns.map(|t| t as f64 / 1e9),
        swapcache_kb_at_first_any_swapout: st.swapcache_at_first_swapout.map(|p| (p * 4) as f64),
        first_any_swapout_s: st.first_swapout_ns.map(|t| t as f64 / 1e9),
        first_shm_swapcache_s: st.first_shm_to_swapcache_ns.map(|t| t as f64 / 1e9),
        objrmap_unmapped_kb: (st.objrmap_pages_freeable * 4) as f64,
        ..Default::default()
    };
    if let Some(a) = f.first_shm_swapcache_s {
        let b = f.first_swapout_s.unwrap_or(r.elapsed_s);
        let rows = conversion_rows(&r.timeline, a, b);
        if !rows.is_empty() {
            f.conversion_rows = rows.len();
            f.sy_pct_conversion = rows.iter().map(|s| s.sy as f64).sum::<f64>() / rows.len() as f64;
            f.r_conversion = rows.iter().map(|s| s.r as f64).sum::<f64>() / rows.len() as f64;
        }
    }
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
    if let Some(v) = f.first_shm_swapcache_s {
        m.insert("first_shm_swapcache_s".to_string(), v);
    }
    m.insert("sy_pct_conversion".to_string(), f.sy_pct_conversion);
    m.insert("r_conversion".to_string(), f.r_conversion);
    m.insert("conversion_rows".to_string(), f.conversion_rows as f64);
    m.insert("objrmap_unmapped_kb".to_string(), f.objrmap_unmapped_kb);
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
    let bh = sim.k.reclaim.aa24_bh_stats().cloned().unwrap_or_default();
    for (k, v) in [
        ("kmem_cache_reap_calls", bh.reap_calls),
        ("kmem_cache_reap_pages", bh.reaped),
        ("bh_slab_pages_max", bh.max_pages),
        ("bh_released", bh.released),
    ] {
        m.insert(k.to_string(), v as f64);
    }
}

/// The timeline from a few rows before the conversion phase (or, without one, before swapping
/// starts) to a few rows after the first shm swap write.
fn phase_window<'a>(r: &'a RunReport, sim: &Sim, f: &Figures) -> &'a [Sample] {
    let stats = sim.k.reclaim.aa24_stats().cloned().unwrap_or_default();
    let walk = &stats.walk_ptes_per_s;
    let tl = &r.timeline;
    let first = match f.first_shm_swapcache_s {
        Some(a) => tl.iter().position(|s| s.t_s > a).unwrap_or(0),
        None => tl.windows(2).position(|w| swapping(&w[0], &w[1], walk)).unwrap_or(0),
    };
    let last = match f.first_swapout_s {
        Some(b) => tl.iter().position(|s| s.t_s > b).unwrap_or(tl.len()),
        None => tl.len(),
    };
    let lo = first.saturating_sub(3);
    let hi = (last + 4).min(tl.len()).max(lo);
    &tl[lo..hi]
}

fn mib(kb: f64) -> f64 {
    kb / 1024.0
}

/// A variant's run, measured in its own thread: its report, figures, label and (without
/// `--ablate`) the timeline of its conversion phase.
type VariantOut = Result<(RunReport, Figures, String, String), String>;

fn variant_job(opts: &ReproduceOpts, v: Variant) -> Box<dyn FnOnce() -> VariantOut + Send + '_> {
    Box::new(move || {
        let (mut r, sim) = run_seed_scenario(opts, SCENARIO, v.profile, &v.sets(), Vec::new())?;
        let f = figures(&r, &sim);
        record(&mut r, &sim, &f);
        let p = &sim.k.profile;
        r.params.insert("profile", serde_json::json!(v.profile));
        r.params.insert(
            "fixes",
            serde_json::json!({
                "objrmap_walk": p.objrmap_walk,
                "shm_writepage_io": p.shm_writepage_io,
                "clean_cache_pass": p.clean_cache_pass,
            }),
        );
        let label = v.label(&sim);
        let mut window = String::new();
        if !opts.ablate {
            let _ = writeln!(window, "== {label}: {} MiB, {} CPUs ==", r.machine.memory_bytes >> 20, r.machine.cpus);
            let _ = write!(window, "{}", format_vmstat(phase_window(&r, &sim, &f)));
            let _ = writeln!(window);
        }
        Ok((r, f, label, window))
    })
}

pub fn run(opts: &ReproduceOpts) -> Result<(ReproduceReport, String), String> {
    let mut runs = Vec::new();
    let mut out = String::new();
    let mut figs = Vec::new();
    let mut labels = Vec::new();
    let vs = variants(opts.ablate);
    let costs: Vec<u64> = vs.iter().map(Variant::cost).collect();
    let jobs = vs.into_iter().map(|v| variant_job(opts, v)).collect();
    for done in opts.in_parallel_costliest_first(jobs, &costs) {
        let (r, f, label, window) = done?;
        out += &window;
        labels.push(label);
        runs.push(r);
        figs.push(f);
    }
    let w = 26;
    let _ = write!(out, "{:<44}", "");
    for l in &labels {
        let _ = write!(out, " {l:>w$}");
    }
    let _ = writeln!(out);
    let row = |out: &mut String, name: &str, cells: Vec<String>| {
        let _ = write!(out, "{name:<44}");
        for c in cells {
            let _ = write!(out, " {c:>w$}");
        }
        let _ = writeln!(out);
    };
    let mibs = |v: Option<f64>| v.map(|kb| format!("{:.0} MiB", mib(kb))).unwrap_or_else(|| "no swap-out".into());
    let secs = |v: Option<f64>| v.map(|s| format!("{s:.1} s")).unwrap_or_else(|| "-".into());
    row(
        &mut out,
        "swap cache at the first swap-out of shm",
        figs.iter().map(|f| mibs(f.swapcache_kb_at_first_swapout)).collect(),
    );
    row(
        &mut out,
        "first shm page into the swap cache at",
        figs.iter().map(|f| secs(f.first_shm_swapcache_s)).collect(),
    );
    row(&mut out, "first swap-out of shm at", figs.iter().map(|f| secs(f.first_swapout_s)).collect());
    row(&mut out, "conversion phase: vmstat rows", figs.iter().map(|f| f.conversion_rows.to_string()).collect());
    row(
        &mut out,
        "conversion phase: sy % (mean)",
        figs.iter().map(|f| format!("{:.0}", f.sy_pct_conversion)).collect(),
    );
    row(&mut out, "conversion phase: r (mean)", figs.iter().map(|f| format!("{:.1}", f.r_conversion)).collect());
    row(&mut out, "cp throughput (MB/s)", figs.iter().map(|f| format!("{:.1}", f.cp_mb_per_s)).collect());
    row(&mut out, "cp progress (MiB)", figs.iter().map(|f| format!("{:.0}", f.cp_mib_done)).collect());
    row(&mut out, "minor faults since reclaim began", figs.iter().map(|f| format!("{:.0}", f.minor_faults)).collect());
    row(
        &mut out,
        "objrmap: shm made freeable (MiB)",
        figs.iter().map(|f| format!("{:.0}", mib(f.objrmap_unmapped_kb))).collect(),
    );
    row(&mut out, "sy % while swapping (mean)", figs.iter().map(|f| format!("{:.0}", f.sy_pct_mean)).collect());
    row(&mut out, "swap used, peak (MiB)", figs.iter().map(|f| format!("{:.0}", mib(f.swpd_max_kb as f64))).collect());
    row(
        &mut out,
        "swap cache at the first swap-out (any page)",
        figs.iter().map(|f| mibs(f.swapcache_kb_at_first_any_swapout)).collect(),
    );
    for key in [
        "walk_ptes_unmapped",
        "walk_ptes_young",
        "walk_freeable_anon",
        "walk_freeable_cache",
        "objrmap_ptes_unmapped",
        "mms_walked_to_end",
        "swap_out_calls",
        "swap_out_success",
        "shrink_cache_writepages",
        "shrink_cache_freed",
        "clean_pass_freed",
        "kmem_cache_reap_pages",
        "bh_slab_pages_max",
    ] {
        row(&mut out, key, runs.iter().map(|r| format!("{:.0}", r.metrics.get(key).copied().unwrap_or(0.0))).collect());
    }
    if !opts.ablate {
        for (r, l) in runs.iter().zip(&labels) {
            let top: Vec<String> =
                r.kernel_profile.iter().take(4).map(|e| format!("{} {:.1}s", e.function, e.cpu_s)).collect();
            let _ = writeln!(out, "kernel profile {l}: {}", top.join(", "));
        }
    }
    Ok((ReproduceReport::new("shm-big-iron", runs), out))
}
