//! Who sleeps where under 2.4.9 (seed 000, history §21): for each task group named in
//! `tasks=` (comma-separated; a name ending in `*` takes every task whose name begins with the
//! rest), its user and system time, its time off the CPU by why (`io`: its reads and page
//! waits; `rs`: asleep after a quantum's work — the request queue, the writer's throttle; `oth`:
//! any other sleep, kswapd's naps among them; `run`: runnable, waiting for a CPU), and from the
//! 2.4.9 engine's per-task counters (`vmscan` `task.rs`) its write batches, pages written, request-queue
//! sleeps and their time, and its waits on a page's buffers in page_launder (direct reclaim's
//! `__wait_on_buffer`, history §22) and their time. One line per phase of the scenario's marks (`start`, `loaded`: the
//! dd step, the load, the sleep), plus every EVERY_S the dirty and writeback MiB, the disk's
//! write KiB/s, kswapd's naps (`interruptible_sleep_on_timeout` after a pass that left no
//! shortage) and each group's system time, other sleep, pages written and queue sleep since
//! the last line. All figures
//! are since the last line of the same kind. With `zones=on` a window line also gives kswapd's
//! CPU % over the window, its passes (failed) and the direct reclaim passes since the last
//! line, `nr_free_buffer_pages` (2.4.9's base for `balance_dirty`'s `nfract`) and each zone's
//! free / inactive_clean / inactive_dirty / active MiB at the line. An observer: the run is the
//! same without it.
//!
//! cargo run --profile ci -p vmlab-core --example riel24_task -- SCENARIO PROFILE EVERY_S tasks=NAME,... [zones=on] [KEY=VALUE...]

mod common;

use vmlab_core::sim::Sim;

/// Per group: user, sys, io, reclaim sleep, other, runnable, writes, pages, queue sleeps, queue
/// ns, buffer waits, buffer-wait ns.
const N: usize = 12;

fn snapshot(sim: &Sim, pat: &str) -> [u64; N] {
    let mut v = [0u64; N];
    let by_task = sim.k.reclaim.riel24_by_task().unwrap_or(&[]);
    for (i, t) in sim.s.tasks.iter().enumerate() {
        if !common::name_matches(&t.name, pat) {
            continue;
        }
        let times = common::task_times(sim, t);
        let io = by_task.get(i).copied().unwrap_or_default();
        let row = times.into_iter().chain([
            io.writes,
            io.pages,
            io.queue_sleeps,
            io.queue_sleep_ns,
            io.buffer_waits,
            io.buffer_wait_ns,
        ]);
        for (a, b) in v.iter_mut().zip(row) {
            *a += b;
        }
    }
    v
}

fn phase(sim: &Sim) -> &'static str {
    let has = |m: &str| sim.metrics.iter().any(|(n, _)| n == m);
    if has("loaded") {
        "sleep"
    } else if has("start") {
        "load"
    } else {
        "dd"
    }
}

fn secs(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1e9)
}

/// What the census carries between samples.
struct State {
    pats: Vec<String>,
    every_s: u64,
    /// Each group's counters at the last window line and at the last phase line.
    win_prev: Vec<[u64; N]>,
    ph_prev: Vec<[u64; N]>,
    ph_name: &'static str,
    ph_from: u64,
    naps_prev: u64,
    win_naps: u64,
    bo_sum: u64,
    bo_n: u64,
    /// `zones=on`: the window line's reclaim and zone columns; kswapd CPU over the window, and
    /// the engine's pass counters at the last line.
    zones: bool,
    ksw_sum: f64,
    passes_prev: [u64; 3],
}

/// kswapd CPU % over the window, its passes (failed) and the direct passes since `prev`,
/// `nr_free_buffer_pages` and each zone's lists (MiB).
fn zone_cols(sim: &Sim, ksw_pct: f64, prev: &mut [u64; 3]) -> String {
    let k = &sim.k;
    let mib = |pages: u64| pages / 256;
    let now = k.reclaim.riel24_stats().map_or([0; 3], |s| [s.kswapd_passes, s.kswapd_failed_passes, s.direct_passes]);
    let d: [u64; 3] = std::array::from_fn(|i| now[i] - prev[i]);
    *prev = now;
    let zones: Vec<String> = (0..k.zones.len())
        .filter(|&z| k.zones[z].present > 0)
        .map(|z| {
            let l = |name| vmlab_core::vmscan::zone_lru_pages(k, z, name);
            format!(
                "{} {}/{}/{}/{}",
                k.zones[z].kind.name(),
                mib(k.zone_free(z)),
                mib(l("Inact_clean")),
                mib(l("Inact_dirty")),
                mib(l("Active"))
            )
        })
        .collect();
    format!(
        "kswapd {ksw_pct:.0}% {} ({}) direct {} | nr_free_buffer_pages {} | {}",
        d[0],
        d[1],
        d[2],
        mib(vmlab_core::vmscan::riel24_nr_free_buffer_pages(k)),
        zones.join(" ")
    )
}

impl State {
    /// The phase line of every group for the phase that ends now.
    fn phase_line(&mut self, sim: &Sim) {
        let naps = sim.k.reclaim.riel24_stats().map_or(0, |s| s.kswapd_sleeps);
        for (g, pat) in self.pats.iter().enumerate() {
            let now = snapshot(sim, pat);
            let d: [u64; N] = std::array::from_fn(|i| now[i].saturating_sub(self.ph_prev[g][i]));
            self.ph_prev[g] = now;
            let t: Vec<String> = d[..6].iter().map(|&x| secs(x)).collect();
            println!(
                "PHASE {} {pat} {}..{}: {} | {} {} {} {} | {} {} | {}",
                self.ph_name,
                self.ph_from,
                sim.s.now / 1_000_000_000,
                t.join(" "),
                d[6],
                d[7],
                d[8],
                secs(d[9]),
                d[10],
                secs(d[11]),
                naps - self.naps_prev
            );
        }
        self.naps_prev = naps;
    }

    fn sample(&mut self, sim: &Sim) {
        let s = sim.samples.last().cloned().unwrap_or_default();
        self.bo_sum += s.bo;
        self.bo_n += 1;
        self.ksw_sum += s.kswapd_cpu_pct;
        let p = phase(sim);
        if p != self.ph_name {
            self.phase_line(sim);
            (self.ph_name, self.ph_from) = (p, sim.s.now / 1_000_000_000);
        }
        if !sim.s.now.is_multiple_of(self.every_s * 1_000_000_000) {
            return;
        }
        let mut cols = Vec::new();
        for (g, pat) in self.pats.iter().enumerate() {
            let now = snapshot(sim, pat);
            let prev = self.win_prev[g];
            cols.push(format!(
                "{} {} {} {} {}",
                secs(now[1] - prev[1]),
                secs(now[4] - prev[4]),
                now[7] - prev[7],
                now[8] - prev[8],
                secs(now[9] - prev[9])
            ));
            self.win_prev[g] = now;
        }
        if self.zones {
            let pct = self.ksw_sum / self.bo_n.max(1) as f64;
            cols.push(zone_cols(sim, pct, &mut self.passes_prev));
        }
        let naps = sim.k.reclaim.riel24_stats().map_or(0, |s| s.kswapd_sleeps);
        println!(
            "{} {p} {} {} {} {} | {}",
            sim.s.now / 1_000_000_000,
            sim.k.g.dirty / 256,
            sim.k.g.writeback / 256,
            self.bo_sum / self.bo_n.max(1),
            naps - self.win_naps,
            cols.join(" | ")
        );
        (self.bo_sum, self.bo_n, self.win_naps, self.ksw_sum) = (0, 0, naps, 0.0);
    }
}

fn main() {
    let (common::Census { mut sim, every_s }, own) = common::setup_with("riel24_task", &["tasks", "zones"]);
    let zones = own.iter().any(|(k, v)| k == "zones" && common::parse_on("riel24_task", k, v));
    let pats: Vec<String> = own
        .iter()
        .find(|(k, _)| k == "tasks")
        .map(|(_, v)| v.split(',').map(str::to_string).collect())
        .unwrap_or_else(|| vec!["kswapd*".to_string()]);
    println!("# window lines: t phase dirty_MiB writeback_MiB bo_KiB/s kswapd_naps | per group: sys oth (s) pages queue_sleeps queue_s");
    println!("# phase lines: PHASE name group from..to: user sys io rs oth run (s) | writes pages queue_sleeps queue_s | buffer_waits buffer_wait_s | kswapd naps");
    let n = pats.len();
    let st = std::rc::Rc::new(std::cell::RefCell::new(State {
        pats,
        every_s,
        win_prev: vec![[0; N]; n],
        ph_prev: vec![[0; N]; n],
        ph_name: "dd",
        ph_from: 0,
        naps_prev: 0,
        win_naps: 0,
        bo_sum: 0,
        bo_n: 0,
        zones,
        ksw_sum: 0.0,
        passes_prev: [0; 3],
    }));
    let in_run = st.clone();
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| in_run.borrow_mut().sample(sim)));
    if let Err(e) = sim.run() {
        eprintln!("{e:?}");
        std::process::exit(1);
    }
    st.borrow_mut().phase_line(&sim);
}
