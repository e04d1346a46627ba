//! Where one task's time goes under 2.4-aa (seed 002's `cp`, history §28): every EVERY_S, the
//! `vmstat` row, the copy's progress, free memory per zone, and for the tasks named NAME (every
//! thread or process of that name, summed) their user and system time, their time off the CPU by
//! why (`Io`: its reads; `Reclaim`: asleep after a quantum of reclaim; `Other`; `Cpu`: runnable),
//! and what their own `try_to_free_pages_zone` calls did (`Aa24Stats::by_task`): calls, CPU in
//! them and of it the spins on `pagemap_lru_lock` / `page_table_lock` and the walk; then, outside
//! reclaim, their spin on `pagemap_lru_lock` in `lru_cache_add`; sleeps in the request queue after
//! their writepages and on their own `PG_launder` pages; pages scanned, freed by the scan and by
//! the clean-cache pass, writepages, `swap_out` calls. All figures are since
//! the last line, in seconds or pages. An observer: the run is the same without it.
//!
//! A NAME ending in `*` takes every task whose name begins with the rest (`batch*`, `kswapd*`).
//!
//! cargo run --profile ci -p vmlab-core --example aa24_task -- SCENARIO PROFILE EVERY_S task=NAME [KEY=VALUE...]

mod common;

use vmlab_core::sim::Sim;
use vmlab_core::vmscan::TaskReclaim;

/// The per-line counters: task times (6), then the reclaim fields (14).
const N: usize = 20;

fn snapshot(sim: &Sim, name: &str) -> [u64; N] {
    let mut v = [0u64; N];
    let by_task = sim.k.reclaim.aa24_stats().map(|s| s.by_task.as_slice()).unwrap_or(&[]);
    for (i, t) in sim.s.tasks.iter().enumerate() {
        if !common::name_matches(&t.name, name) {
            continue;
        }
        let [user, sys, io, reclaim, other, cpu] = common::task_times(sim, t);
        let r = by_task.get(i).copied().unwrap_or_default();
        let TaskReclaim {
            calls,
            failed,
            sys_ns,
            lru_spin_ns,
            ptl_spin_ns,
            walk_ns,
            lru_add_spin_ns,
            queue_sleep_ns,
            launder_wait_ns,
            scanned,
            freed,
            clean_freed,
            writepages,
            swap_out_calls,
        } = r;
        let row = [
            user,
            sys,
            io,
            reclaim,
            other,
            cpu,
            calls,
            failed,
            sys_ns,
            lru_spin_ns,
            ptl_spin_ns,
            walk_ns,
            lru_add_spin_ns,
            queue_sleep_ns,
            launder_wait_ns,
            scanned,
            freed,
            clean_freed,
            writepages,
            swap_out_calls,
        ];
        for (a, b) in v.iter_mut().zip(row) {
            *a += b;
        }
    }
    v
}

fn main() {
    let (common::Census { mut sim, every_s }, own) = common::setup_with("aa24_task", &["task"]);
    let name = own.iter().find(|(k, _)| k == "task").map(|(_, v)| v.clone()).unwrap_or_else(|| "cp".to_string());
    println!(
        "t cpMiB r sy so bi free_MiB(per zone) | {name}: user sys io reclaim_sleep other runnable (s) | \
         tfp: calls failed sys lru_spin ptl_spin walk lru_add_spin queue_sleep launder_wait (s) scanned freed clean_freed \
         writepages swap_out"
    );
    let mut prev = [0u64; N];
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        if !sim.s.now.is_multiple_of(every_s * 1_000_000_000) {
            return;
        }
        let now = snapshot(sim, &name);
        let d: [u64; N] = std::array::from_fn(|i| now[i].saturating_sub(prev[i]));
        prev = now;
        let s = sim.samples.last().cloned().unwrap_or_default();
        let cp = sim.metrics.iter().filter(|(n, _)| n.starts_with("cp_mib")).count() as u64 * 64;
        let free: Vec<String> = (0..sim.k.zones.len()).map(|z| (sim.k.zone_free(z) / 256).to_string()).collect();
        let secs = |ns: u64| format!("{:.2}", ns as f64 / 1e9);
        let times: Vec<String> = d[..6].iter().map(|&x| secs(x)).collect();
        let tfp_t: Vec<String> = d[8..15].iter().map(|&x| secs(x)).collect();
        let tfp_n: Vec<String> = d[15..].iter().map(|x| x.to_string()).collect();
        println!(
            "{} {cp} {} {} {} {} {} | {} | {} {} {} {}",
            sim.s.now / 1_000_000_000,
            s.r,
            s.sy,
            s.so,
            s.bi,
            free.join("/"),
            times.join(" "),
            d[6],
            d[7],
            tfp_t.join(" "),
            tfp_n.join(" "),
        );
    }));
    if let Err(e) = sim.run() {
        eprintln!("{e:?}");
        std::process::exit(1);
    }
}
