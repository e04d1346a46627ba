//! Seed 000, "Google's mm problems" (lkml, 30 Oct 2001): Ben Smith's program mlocks 20 files of
//! 408 MiB through two slots on a 2 GiB i386 box. Runs `scenarios/seeds/google-mlock.toml` under
//! linux-2.4.9, linux-2.4.9-phillips (kswapd sleeps after every pass) and linux-6.8 (unevictable
//! LRU), and prints load time, kswapd CPU while loading and while the program sleeps, the flat
//! kernel profile in the gprof form of the seed, and the vmstat counters.

use super::{run_seed_scenario, ReproduceOpts, SeedDef};
use crate::mmap::vm;
use crate::stats::report::{ReproduceReport, RunReport};
use crate::stats::timeline::Sample;
use std::fmt::Write;

pub const NAME: &str = "google-mlock";
const FILE: &str = "google-mlock.toml";
pub const PROFILES: [&str; 3] = ["linux-2.4.9", "linux-2.4.9-phillips", "linux-6.8"];
/// The sleeping phase must be at least this long to be measured.
const MIN_SLEEP_S: f64 = 60.0;

pub fn def() -> SeedDef {
    SeedDef {
        name: NAME,
        number: 0,
        summary: "000 kswapd never sleeps with mlocked file pages on 2.4.9 (Oct 2001)",
        profiles: &PROFILES,
        runs: PROFILES.len(),
        long_runs: None,
        run,
    }
}

/// What a run leaves behind besides its report (the Sim stays in its thread).
struct RunOut {
    report: RunReport,
    engine: Option<crate::vmscan::Riel24Stats>,
    /// name, free, inactive_clean, inactive_dirty, active, mapped (pages) at the end.
    zones: Vec<(&'static str, u64, u64, u64, u64, u64)>,
}

/// Seconds of simulated time in [a, b) covered by the sample ending at `s.t_s` (interval `dt`).
fn overlap(s: &Sample, dt: f64, a: f64, b: f64) -> f64 {
    let (lo, hi) = (s.t_s - dt, s.t_s);
    (hi.min(b) - lo.max(a)).max(0.0)
}

/// Average kswapd CPU % over [a, b), from the timeline.
fn kswapd_pct(tl: &[Sample], dt: f64, a: f64, b: f64) -> f64 {
    if b <= a {
        return f64::NAN;
    }
    let busy: f64 = tl.iter().map(|s| s.kswapd_cpu_pct * overlap(s, dt, a, b)).sum();
    busy / (b - a)
}

/// Add the seed's metrics to a run's report, timed from the program's start (its `start` mark,
/// after the data files were written; 0 without one): load time, kswapd CPU while loading (from
/// the first interval in which kswapd ran — free memory had run out — to the end of the loop),
/// when kswapd first took more than half a CPU, kswapd CPU from then to the end of the loop, and
/// kswapd CPU while the program sleeps.
pub fn measure(r: &mut RunReport, io_bound_s: f64, interval_s: f64) {
    let tl = r.timeline.clone();
    let t0 = r.metrics.get("start").copied().unwrap_or(0.0);
    let loaded = r.metrics.get("loaded").copied().unwrap_or(f64::NAN);
    let load = loaded - t0;
    let end = tl.last().map(|s| s.t_s).unwrap_or(0.0);
    let ran_out = tl.iter().find(|s| s.kswapd_cpu_pct > 0.0).map(|s| (s.t_s - interval_s - t0).max(0.0));
    let takes_over = tl.iter().find(|s| s.t_s > t0 && s.kswapd_cpu_pct > 50.0).map(|s| s.t_s - t0);
    let loading = match ran_out {
        Some(t) if load.is_finite() => kswapd_pct(&tl, interval_s, t0 + t, loaded),
        _ if load.is_finite() => 0.0,
        _ => f64::NAN,
    };
    // The seed times the pathology from kswapd's takeover ("after running the test application
    // for about 30 seconds, kswapd takes over and cpu utilization goes to 100%"), not from the
    // first interval kswapd ran at all, which on a machine full of dd's cache is the start.
    let after_takeover = match takes_over {
        Some(t) if load.is_finite() => kswapd_pct(&tl, interval_s, t0 + t, loaded),
        _ => f64::NAN,
    };
    let sleeping = if load.is_finite() && end - loaded >= MIN_SLEEP_S {
        kswapd_pct(&tl, interval_s, loaded, end)
    } else {
        f64::NAN
    };
    let whole = kswapd_pct(&tl, interval_s, 0.0, end);
    let m = &mut r.metrics;
    m.insert("load_s".to_string(), load);
    m.insert("io_bound_s".to_string(), io_bound_s);
    m.insert("load_vs_io_bound".to_string(), load / io_bound_s);
    m.insert("free_memory_ran_out_s".to_string(), ran_out.unwrap_or(f64::NAN));
    m.insert("kswapd_takes_over_s".to_string(), takes_over.unwrap_or(f64::NAN));
    m.insert("kswapd_cpu_pct_loading".to_string(), loading);
    m.insert("kswapd_cpu_pct_after_takeover".to_string(), after_takeover);
    m.insert("kswapd_cpu_pct_sleeping".to_string(), sleeping);
    m.insert("sleeping_window_s".to_string(), if load.is_finite() { end - loaded } else { 0.0 });
    m.insert("kswapd_cpu_pct_run".to_string(), whole);
}

fn run_one(opts: &ReproduceOpts, profile: &str, extra: &[String]) -> Result<RunOut, String> {
    let (mut report, sim) = run_seed_scenario(opts, FILE, profile, extra, Vec::new())?;
    let k = &sim.k;
    let io_bytes: f64 = k.files.iter().filter(|f| !f.shmem).map(|f| f.size as f64).sum();
    let bw = k.disks.first().map(|d| d.bandwidth_bps()).unwrap_or(1).max(1) as f64;
    let io_bound_s = io_bytes / bw;
    measure(&mut report, io_bound_s, sim.interval as f64 / 1e9);
    // Slots the program managed to lock: its locked memory over the size of a file.
    let locked: u64 = k
        .mms
        .iter()
        .flatten()
        .map(|m| m.vmas.iter().filter(|v| v.flags & vm::LOCKED != 0).map(|v| v.pages()).sum::<u64>())
        .sum();
    let file_pages = k.files.first().map(|f| f.npages()).unwrap_or(1).max(1);
    report.metrics.insert("slots".to_string(), locked.div_ceil(file_pages) as f64);
    let spin = report
        .kernel_profile
        .iter()
        .find(|e| e.function == crate::stats::kfunc::KFunc::LruLockSpin.name_in(k.profile.symbols))
        .map(|e| e.cpu_s)
        .unwrap_or(0.0);
    report.metrics.insert("lru_lock_spin_s".to_string(), spin);
    let engine = k.reclaim.riel24_stats().cloned();
    if let Some(st) = &engine {
        let m = &mut report.metrics;
        m.insert("kswapd_passes".to_string(), st.kswapd_passes as f64);
        m.insert("kswapd_failed_passes".to_string(), st.kswapd_failed_passes as f64);
        m.insert("kswapd_sleeps".to_string(), st.kswapd_sleeps as f64);
        m.insert("direct_reclaim_passes".to_string(), st.direct_passes as f64);
    }
    let mut mapped = vec![0u64; k.zones.len()];
    for p in 0..k.fr.len() as u32 {
        if k.fr.mapcount[p as usize] > 0 && !k.fr.has(p, crate::mm_types::pg::RESERVED) {
            mapped[k.zone_of(p)] += 1;
        }
    }
    let zones = (0..k.zones.len())
        .map(|z| {
            let l = |name| crate::vmscan::zone_lru_pages(k, z, name);
            (k.zones[z].kind.name(), k.zone_free(z), l("Inact_clean"), l("Inact_dirty"), l("Active"), mapped[z])
        })
        .collect();
    report.params.insert("profile".to_string(), serde_json::Value::String(profile.to_string()));
    for s in extra {
        if let Some((key, v)) = s.split_once('=') {
            report.params.insert(key.to_string(), serde_json::Value::String(v.to_string()));
        }
    }
    Ok(RunOut { report, engine, zones })
}

/// RLIMIT_MEMLOCK for the modern run: half of RAM, the cap 2.4 puts on mlock, so both kernels
/// lock the same number of slots.
fn memlock_set(opts: &ReproduceOpts) -> Result<String, String> {
    let sc = opts.load(FILE, &[])?;
    let mem =
        crate::workload::units::parse_size(&sc.file.machine.memory).map_err(|e| format!("machine.memory: {e}"))?;
    let name = sc.processes.first().map(|p| p.name.clone()).ok_or("the scenario has no process")?;
    Ok(format!("process.{name}.memlock={}", mem / 2))
}

fn run(opts: &ReproduceOpts) -> Result<(ReproduceReport, String), String> {
    let memlock = memlock_set(opts)?;
    let jobs = PROFILES
        .iter()
        .map(|&p| {
            // Every run gets the same RLIMIT_MEMLOCK (half of RAM), so all kernels lock the same
            // number of slots; on 2.4.9 it coincides with mlock's own half-of-RAM rule.
            let extra: Vec<String> = vec![memlock.clone()];
            Box::new(move || run_one(opts, p, &extra)) as Box<dyn FnOnce() -> Result<RunOut, String> + Send + '_>
        })
        .collect();
    let outs: Vec<Result<RunOut, String>> = opts.in_parallel(jobs);
    let outs: Vec<RunOut> = outs.into_iter().collect::<Result<_, _>>()?;
    let text = render(&outs);
    let rep = ReproduceReport::new(NAME, outs.into_iter().map(|o| o.report).collect());
    Ok((rep, text))
}

fn fmt(v: f64, prec: usize) -> String {
    if v.is_finite() {
        format!("{v:.prec$}")
    } else {
        "-".to_string()
    }
}

fn render(outs: &[RunOut]) -> String {
    let mut s = String::new();
    let r0 = &outs[0].report;
    let m = |o: &RunOut, k: &str| o.report.metrics.get(k).copied().unwrap_or(f64::NAN);
    let _ = writeln!(
        s,
        "Seed 000 google-mlock: 20 files of 427,683,520 bytes mlocked through the slots of one process\nmachine: {} MiB i386, {} CPUs; the files come off one disk\n",
        r0.machine.memory_bytes >> 20,
        r0.machine.cpus
    );
    let w = 24;
    let _ = write!(s, "{:36}", "");
    for o in outs {
        let _ = write!(s, "{:>w$}", o.report.profile);
    }
    s.push('\n');
    let rows: [(&str, &str, usize); 11] = [
        ("slots locked", "slots", 0),
        ("load time (s)", "load_s", 1),
        ("  I/O bound (s)", "io_bound_s", 1),
        ("  load time / I/O bound", "load_vs_io_bound", 2),
        ("free memory ran out at (s)", "free_memory_ran_out_s", 0),
        ("kswapd over 50 % of a CPU from (s)", "kswapd_takes_over_s", 0),
        ("kswapd CPU % while loading", "kswapd_cpu_pct_loading", 1),
        ("  from its takeover to the end", "kswapd_cpu_pct_after_takeover", 1),
        ("kswapd CPU % while sleeping", "kswapd_cpu_pct_sleeping", 1),
        ("kswapd CPU % whole run", "kswapd_cpu_pct_run", 1),
        ("lru lock spinning (CPU s)", "lru_lock_spin_s", 2),
    ];
    for (label, key, prec) in rows {
        let _ = write!(s, "{label:36}");
        for o in outs {
            let _ = write!(s, "{:>w$}", fmt(m(o, key), prec));
        }
        s.push('\n');
    }
    for (label, key) in
        [("kswapd passes (failed)", "kswapd_passes"), ("direct reclaim passes", "direct_reclaim_passes")]
    {
        let _ = write!(s, "{label:36}");
        for o in outs {
            let v = match (key, o.engine.is_some()) {
                (_, false) => "-".to_string(),
                ("kswapd_passes", true) => format!("{} ({})", fmt(m(o, key), 0), fmt(m(o, "kswapd_failed_passes"), 0)),
                _ => fmt(m(o, key), 0),
            };
            let _ = write!(s, "{v:>w$}");
        }
        s.push('\n');
    }
    // kswapd CPU over time.
    // Each run from its own program start (the data files are written first, in a time that
    // differs by kernel).
    let t0 = |o: &RunOut| o.report.metrics.get("start").copied().unwrap_or(0.0);
    let _ = writeln!(s, "\nkswapd CPU % over time since the program started (30 s averages):");
    let _ = write!(s, "{:>8}", "t (s)");
    for o in outs {
        let _ = write!(s, "{:>w$}", o.report.profile);
    }
    s.push('\n');
    let end = outs.iter().filter_map(|o| o.report.timeline.last().map(|x| x.t_s - t0(o))).fold(0.0, f64::max);
    let mut t = 0.0;
    while t < end {
        let _ = write!(s, "{:>8.0}", t + 30.0);
        for o in outs {
            let tl = &o.report.timeline;
            let (a, last) = (t0(o) + t, tl.last().map(|x| x.t_s).unwrap_or(0.0));
            let v = if a < last { kswapd_pct(tl, 1.0, a, (a + 30.0).min(last)) } else { f64::NAN };
            let _ = write!(s, "{:>w$}", fmt(v, 1));
        }
        s.push('\n');
        t += 30.0;
    }
    for o in outs {
        s.push('\n');
        s.push_str(&profile_table(o));
    }
    let _ = writeln!(s, "\nvmstat counters at the end:");
    let _ = write!(s, "{:28}", "");
    for o in outs {
        let _ = write!(s, "{:>w$}", o.report.profile);
    }
    s.push('\n');
    for c in [
        "pgpgin",
        "pgmajfault",
        "pgfault",
        "pgalloc_dma",
        "pgalloc_normal",
        "pgalloc_high",
        "pgrefill",
        "pgdeactivate",
        "pgactivate",
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "allocstall",
        "pageoutrun",
        "unevictable_pgs_mlocked",
        "unevictable_pgs_culled",
        "nr_unevictable",
        "nr_mlock",
    ] {
        let _ = write!(s, "{c:28}");
        for o in outs {
            let _ = write!(s, "{:>w$}", o.report.counter(c));
        }
        s.push('\n');
    }
    for o in outs.iter().filter(|o| o.engine.is_some()) {
        s.push_str(&engine_summary(o));
    }
    s
}

/// The seed's flat profile: % of all CPU time (idle included), cumulative and self seconds,
/// calls and µs per call where the engine counts them.
fn profile_table(o: &RunOut) -> String {
    let r = &o.report;
    let ncpu = r.machine.cpus.max(1) as f64;
    let total = r.timeline.last().map(|x| x.t_s).unwrap_or(r.elapsed_s) * ncpu;
    let busy: f64 = r.tasks.iter().map(|t| t.cpu_s).sum();
    let sys: f64 = r.kernel_profile.iter().map(|e| e.cpu_s).sum();
    let user = (busy - sys).max(0.0);
    let calls = |f: &str| -> Option<u64> {
        if let Some(c) = r.kernel_profile.iter().find(|e| e.function == f).and_then(|e| e.calls) {
            return Some(c);
        }
        let st = o.engine.as_ref()?;
        Some(match f {
            "refill_inactive_scan" => st.refill_inactive_scan,
            "page_launder" => st.page_launder,
            "reclaim_page" => st.reclaim_page,
            "try_to_free_buffers" => st.try_to_free_buffers,
            "zone_inactive_plenty" => st.zone_inactive_plenty,
            "swap_out" => st.swap_out,
            "spin_lock(pagemap_lru_lock)" => st.lock_contended,
            _ => return None,
        })
    };
    let mut rows: Vec<(String, f64)> = r.kernel_profile.iter().map(|e| (e.function.clone(), e.cpu_s)).collect();
    rows.push(("default_idle".to_string(), (total - busy).max(0.0)));
    rows.push(("USER".to_string(), user));
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut s = format!("Flat profile, {} (all {} CPUs, {:.0} s):\n", r.profile, ncpu as u32, total / ncpu);
    s.push_str("  %   cumulative   self               self\n time   seconds   seconds      calls  us/call  name\n");
    let mut cum = 0.0;
    for (name, secs) in rows.into_iter().take(14) {
        cum += secs;
        let pct = if total > 0.0 { secs * 100.0 / total } else { 0.0 };
        let (c, per) = match calls(&name) {
            Some(c) if c > 0 => (c.to_string(), format!("{:.2}", secs * 1e6 / c as f64)),
            _ => (String::new(), String::new()),
        };
        let _ = writeln!(s, "{pct:>6.2}{cum:>10.2}{secs:>9.2} {c:>10} {per:>8}  {name}");
    }
    s
}

fn engine_summary(o: &RunOut) -> String {
    let st = o.engine.as_ref().expect("engine stats");
    let mut s = format!(
        "\n{}: kswapd passes {}, failed {}, slept {} times; direct reclaim passes {}\n",
        o.report.profile, st.kswapd_passes, st.kswapd_failed_passes, st.kswapd_sleeps, st.direct_passes
    );
    let mut why = Vec::new();
    for (z, (name, ..)) in o.zones.iter().enumerate() {
        let (i, f) = (
            st.shortages.zone_inactive.get(z).copied().unwrap_or(0),
            st.shortages.zone_free.get(z).copied().unwrap_or(0),
        );
        if i + f > 0 {
            why.push(format!("{name}: inactive {i}, free {f}"));
        }
    }
    if st.shortages.global_inactive + st.shortages.global_free > 0 {
        why.push(format!("global: inactive {}, free {}", st.shortages.global_inactive, st.shortages.global_free));
    }
    let _ = writeln!(
        s,
        "  shortages left at the end of failed passes: {}",
        if why.is_empty() { "none".to_string() } else { why.join("; ") }
    );
    let a = st.alloc_pass;
    let _ = writeln!(
        s,
        "  allocations served by __alloc_pages: first loop {}, pages_high pass {}, pages_low pass {}, pages_min pass {}, last resort {}",
        a[0], a[1], a[2], a[3], a[4]
    );
    for (z, (name, ..)) in o.zones.iter().enumerate().take(4) {
        let (r, c) = (st.alloc_zone_pass[z], st.alloc_zone_reclaimed[z]);
        let _ = writeln!(
            s,
            "  {name:>10} by pass: {} / {} / {} / {} / {}; off inactive_clean {c}",
            r[0], r[1], r[2], r[3], r[4]
        );
    }
    if st.bh_slab_grown > 0 {
        let _ = writeln!(
            s,
            "  buffer_head slab: pages taken {}, reaped {}, most held {}, grows without a page {}",
            st.bh_slab_grown, st.bh_slab_reaped, st.bh_slab_max, st.bh_slab_failed
        );
    }
    if st.launder_bh_writes + st.launder_bh_waits > 0 {
        let _ = writeln!(
            s,
            "  page_launder on written pages' buffers: writes submitted {}, direct reclaim waits {} ({} on writes it had not started)",
            st.launder_bh_writes, st.launder_bh_waits, st.launder_bh_waits_other
        );
    }
    let b = st.bdflush;
    if b.by_writer + b.by_bdflush + b.by_kupdate > 0 {
        let _ = writeln!(
            s,
            "  buffers written (bdflush): by the writer's balance_dirty {}, bdflush {}, kupdate {}; balance_dirty over nfract {}, over nfract_sync {}, waits {} ({:.2} s)",
            b.by_writer, b.by_bdflush, b.by_kupdate, b.balance_async, b.balance_sync, b.writer_waits, b.writer_wait_ns as f64 / 1e9
        );
    }
    let secs = |v: &[u64]| v.iter().map(|ns| format!("{:.2}", *ns as f64 / 1e9)).collect::<Vec<_>>();
    let (w, h) = (secs(&st.spin_by_waiter), secs(&st.spin_by_holder));
    let _ = writeln!(
        s,
        "  lru lock spin (s) by spinner: {}; by holder: refill_inactive_scan {}, page_launder {}, other {}",
        crate::vmscan::RIEL24_LOCK_WAITERS
            .iter()
            .zip(&w)
            .map(|(n, v)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        h[0],
        h[1],
        h[2]
    );
    for (z, (name, ..)) in o.zones.iter().enumerate().take(4) {
        let out = st.clean_out[z];
        let _ = writeln!(
            s,
            "  {name:>10} inactive_clean: in from page_launder {}; out {}",
            st.clean_in[z],
            crate::vmscan::RIEL24_CLEAN_OUT
                .iter()
                .zip(out)
                .map(|(n, v)| format!("{n} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let _ = writeln!(s, "  zones at the end (pages):   free  inact_clean  inact_dirty     active   mapped (mlocked)");
    for (name, free, clean, dirty, active, mapped) in &o.zones {
        let _ = writeln!(s, "  {name:>10} {free:>16} {clean:>12} {dirty:>12} {active:>10} {mapped:>8}");
    }
    s
}
