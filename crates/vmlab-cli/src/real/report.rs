//! The run as `vmlab.run/1` JSON and as a short text summary. The JSON says what it is:
//! `params.real = true`, the host kernel, how the machine was emulated, and that `vmstat` holds
//! host-wide deltas.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::{json, Value};
use vmlab_core::disk::{DiskStat, DiskTimes};
use vmlab_core::stats::memcg_fmt::{Pressure, PsiLine};
use vmlab_core::stats::ordered::OrderedMap;
use vmlab_core::stats::report::{DiskReport, Machine, RunReport};
use vmlab_core::stats::{profile_fmt, timeline};
use vmlab_core::workload::Scenario;

use super::cgroup::Cgroup;
use super::run::Outcome;
use super::sample::HostSnap;

/// The workload's system time as a metric, as `run --host` reports the simulated one.
pub const SYS_METRIC: &str = "sys_s";

pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn host_cpus() -> u32 {
    std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1)
}

/// Node counters named `nr_*` that only ever grow (vmstat.c's node_stat_items that count events,
/// like NR_VMSCAN_WRITE), so their delta is what the run did.
const NR_EVENTS: &[&str] = &[
    "nr_vmscan_write",
    "nr_vmscan_immediate_reclaim",
    "nr_dirtied",
    "nr_written",
    "nr_throttled_written",
    "nr_foll_pin_acquired",
    "nr_foll_pin_released",
];

/// A /proc/vmstat line that is a level (a gauge), not a count of events.
fn is_gauge(k: &str) -> bool {
    (k.starts_with("nr_") && !NR_EVENTS.contains(&k)) || k == "workingset_nodes"
}

/// /proc/vmstat over the run: event counters as deltas, gauges as their end values.
fn vmstat_deltas(out: &Outcome) -> OrderedMap<u64> {
    let (Some(a), Some(b)) = (out.snaps.first(), out.snaps.last()) else { return OrderedMap::new() };
    b.vmstat.iter().map(|(k, v)| (k.clone(), if is_gauge(k) { *v } else { v.saturating_sub(a.get(k)) })).collect()
}

/// Every block device whose `/sys/block/DEV/stat` moved over the run (host-wide: every process):
/// counters as deltas, `in_flight` (a level) at the end.
pub fn block_deltas(a: &HostSnap, b: &HostSnap) -> Vec<DiskReport> {
    b.block
        .iter()
        .filter_map(|(name, y)| {
            let x = a.block.iter().find(|(n, _)| n == name).map_or([0; 11], |(_, x)| *x);
            let d: Vec<u64> = (0..11).map(|i| y[i].saturating_sub(x[i])).collect();
            // Fields 1-3 and 5-7 are the I/O; a device that did none did not take part.
            [0, 1, 2, 4, 5, 6].iter().any(|&i| d[i] > 0).then(|| DiskReport {
                name: name.clone(),
                stat: DiskStat {
                    read_ios: d[0],
                    read_merges: d[1],
                    read_sectors: d[2],
                    write_ios: d[4],
                    write_merges: d[5],
                    write_sectors: d[6],
                },
                times: Some(DiskTimes {
                    read_ticks: d[3],
                    write_ticks: d[7],
                    in_flight: y[8],
                    io_ticks: d[9],
                    time_in_queue: d[10],
                }),
            })
        })
        .collect()
}

pub fn build(
    sc: &Scenario,
    out: &Outcome,
    cg: &Cgroup,
    swap: Option<u64>,
    sets: &[String],
    own: Option<&super::tracefs::Finished>,
) -> RunReport {
    let release = kernel_release();
    let (a, b) = (out.snaps.first().cloned().unwrap_or_default(), out.snaps.last().cloned().unwrap_or_default());
    let mut params: OrderedMap<Value> = OrderedMap::new();
    params.insert("real", json!(true));
    params.insert("kernel", json!(release));
    let ver = cg.version.name();
    let mut notes: OrderedMap<String> = OrderedMap::new();
    notes.insert(
        "machine_emulation",
        format!("memory cgroup {ver} limit of {} bytes, not real RAM (host RAM and CPUs are the host's)", cg.limit),
    );
    notes.insert("vmstat_scope", "host-wide /proc/vmstat deltas over the run (every process on the host); gauges (nr_* but nr_vmscan_write, nr_dirtied, nr_written...) are end values".to_string());
    notes.insert(
        "timeline_scope",
        "memory columns from the cgroup; rates, CPU split and kswapd host-wide; majflt_s from the cgroup".to_string(),
    );
    params.insert("swap_bytes", json!(swap.unwrap_or(0)));
    // What `run --host` reads as machine.inodes_in_use, for a record to pin (scripts/real-table.py).
    if let Some(n) = out.inodes_in_use {
        params.insert("inodes_in_use", json!(n));
    }
    // Other tenants' dirty and under-writeback page cache as it started (not simulated).
    if let Some((dirty, writeback)) = out.host_dirty_kb {
        params.insert("host_dirty_kb", json!(dirty));
        params.insert("host_writeback_kb", json!(writeback));
    }
    // Free memory by reporting state at the workload's start (bytes), for a record to pin.
    if let Some(f) = out.host_free {
        params.insert("host_unreported_small", json!(f.small));
        params.insert("host_unreported_large", json!(f.unreported_large()));
        params.insert("host_reported", json!(f.reported));
    }
    let cg_delta: OrderedMap<u64> =
        b.cg.stat
            .iter()
            .map(|(k, v)| (k.clone(), if is_event(k) { v.saturating_sub(a.cg.get(k)) } else { *v }))
            .collect();
    let own = own.map(|f| {
        let mut v = super::tracefs::own_json(f, &|k| cg_delta.get(k).copied());
        v["supervisor_cpu_s"] = json!(out.supervisor_cpu_s);
        v
    });
    params.insert(
        "cgroup",
        json!({
            "path": cg.path.display().to_string(),
            "version": ver,
            "limit_bytes": cg.limit,
            "max_usage_bytes": cg.max_usage().unwrap_or(out.peak_polled),
            "polled_peak_bytes": out.peak_polled,
            "failcnt": cg.failcnt(),
            "oom_killed": out.oom_killed,
            "usage_bytes": out.snaps.iter().map(|s| s.cg.usage).collect::<Vec<_>>(),
            "memory_stat": cg_delta,
        }),
    );
    let (pressure, scope) = pressure(&a, &b, cg);
    if let Some(s) = scope {
        notes.insert("pressure_scope", s.to_string());
    }
    if let (Some(x), Some(y)) = (a.psi, b.psi) {
        params.insert(
            "host_pressure",
            json!({"some_total_us": y[0].saturating_sub(x[0]), "full_total_us": y[1].saturating_sub(x[1])}),
        );
    }
    for (i, r) in ["cpu", "io"].iter().enumerate() {
        if let (Some(x), Some(y)) = (a.cg_cpu_io[i], b.cg_cpu_io[i]) {
            params.insert(
                format!("{r}_pressure"),
                json!({"some_total_us": y[0].saturating_sub(x[0]), "full_total_us": y[1].saturating_sub(x[1])}),
            );
        }
    }
    if let Some(why) = &out.stopped_by {
        notes.insert("stopped_by", why.clone());
    }
    if !out.io_errors.is_empty() {
        notes.insert("io_errors", out.io_errors.join("; "));
    }
    for s in sets {
        let (k, v) = s.split_once('=').unwrap_or((s, ""));
        params.insert(k, json!(v));
    }
    let mut metrics = OrderedMap::new();
    for (n, t) in &out.marks {
        metrics.insert(n.clone(), *t);
    }
    metrics.insert(SYS_METRIC, out.sys_s);
    let timeline = out.snaps.windows(2).map(|w| super::sample::sample(&w[0], &w[1], cg)).collect();
    RunReport {
        scenario: sc.file.name.clone().unwrap_or_else(|| sc.path.clone()),
        profile: format!("real-{release}"),
        seed: sc.file.seed,
        params,
        notes,
        machine: Machine { memory_bytes: cg.limit, cpus: host_cpus(), nodes: 1 },
        elapsed_s: out.elapsed,
        vmstat: vmstat_deltas(out),
        timeline,
        tasks: out.tasks.iter().cloned().chain(super::sample::kswapd_tasks(&a, &b)).collect(),
        metrics,
        wall_s: out.elapsed,
        pressure,
        disks: block_deltas(&a, &b),
        own,
        ..RunReport::default()
    }
}

/// The run's memory pressure as `RunReport::pressure` holds it: `total` is the stall time over
/// the run (a delta), the averages are the kernel's at the end. The workload's own group where
/// the host keeps one, else the host's `/proc/pressure/memory` (every task on the host).
fn pressure(a: &HostSnap, b: &HostSnap, cg: &Cgroup) -> (Option<Pressure>, Option<String>) {
    let (file, x, y) = match (a.cg_psi, b.cg_psi, &cg.psi_group) {
        (Some(x), Some(y), Some(g)) => (g.join("memory.pressure"), x, y),
        _ => match (a.psi, b.psi) {
            (Some(x), Some(y)) => ("/proc/pressure/memory".into(), x, y),
            _ => return (None, None),
        },
    };
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let line = |i: usize| {
        let name = ["some", "full"][i];
        let avg = |k: &str| -> f64 {
            text.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse().ok()))
                .unwrap_or(0.0)
        };
        PsiLine { avg10: avg("avg10"), avg60: avg("avg60"), avg300: avg("avg300"), total: y[i].saturating_sub(x[i]) }
    };
    let scope = if file.starts_with("/proc") {
        "host-wide /proc/pressure/memory over the run (every task on the host; no cgroup2 hierarchy for the workload's own)".to_string()
    } else {
        format!("{} over the run: the workload's tasks only", file.display())
    };
    (Some(Pressure { some: line(0), full: line(1) }), Some(scope))
}

/// memory.stat counters that count events (the rest are sizes).
fn is_event(k: &str) -> bool {
    let k = k.strip_prefix("total_").unwrap_or(k);
    k.starts_with("pg") || k.starts_with("workingset_") || k.starts_with("thp_") || k.starts_with("zswp")
}

pub fn text(rep: &RunReport, out: &Outcome, cg: &Cgroup) -> String {
    let mut o = String::new();
    let p = |k: &str| rep.params.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let _ = writeln!(o, "vmlab real: {}  host kernel {}  seed {}", rep.scenario, p("kernel"), rep.seed);
    let ver = cg.version.name();
    let _ = writeln!(o, "machine: {} MiB emulated by the memory limit of cgroup {ver} {} (not real RAM: host has {} CPUs and its own RAM)", cg.limit >> 20, cg.path.display(), rep.machine.cpus);
    let _ = writeln!(
        o,
        "workload ended after {:.2} s wall{}\n",
        rep.elapsed_s,
        out.stopped_by.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
    );
    let _ = writeln!(o, "Timeline (memory columns: the cgroup; rates and CPU: host-wide):");
    o.push_str(&timeline::format_vmstat_with(&rep.timeline, timeline::VmstatOpts { time: true }));
    o.push('\n');
    o.push_str(&profile_fmt::format_tasks(&rep.tasks));
    o.push('\n');
    let marks: Vec<_> = rep.metrics.iter().filter(|(k, _)| *k != SYS_METRIC).collect();
    if !marks.is_empty() {
        let _ = writeln!(o, "Marks (seconds since start):");
        for (k, v) in marks {
            let _ = writeln!(o, "  {k:32} {v:.3}");
        }
        o.push('\n');
    }
    let _ = writeln!(o, "system time of the workload's processes: {:.3} s ({SYS_METRIC})", out.sys_s);
    let _ =
        writeln!(o, "vmlab's own CPU time while they ran (sampling, reading the trace): {:.3} s", out.supervisor_cpu_s);
    let max = cg.max_usage().unwrap_or(out.peak_polled);
    let _ = writeln!(
        o,
        "cgroup: peak usage {:.1} MiB of a {:.1} MiB limit, limit hit {} times",
        max as f64 / 1048576.0,
        cg.limit as f64 / 1048576.0,
        cg.failcnt()
    );
    if let Some(p) = &rep.pressure {
        let secs = |us: u64| us as f64 / 1e6;
        let _ = writeln!(
            o,
            "memory pressure stalls: some {:.3} s, full {:.3} s ({})",
            secs(p.some.total),
            secs(p.full.total),
            rep.notes.get("pressure_scope").map(String::as_str).unwrap_or("")
        );
    }
    if !out.oom_killed.is_empty() {
        let _ = writeln!(o, "OOM-killed in the cgroup: {}", out.oom_killed.join(", "));
    }
    for e in &out.io_errors {
        let _ = writeln!(o, "I/O stopped short (the run did less than the scenario asks): {e}");
    }
    if !rep.disks.is_empty() {
        o.push_str("host-wide ");
        o.push_str(&vmlab_core::stats::report::disks_text(&rep.disks));
    }
    let _ = writeln!(o, "/proc/vmstat deltas (host-wide, non-zero events):");
    for (k, v) in rep.vmstat.iter() {
        if *v != 0 && !is_gauge(k) {
            let _ = writeln!(o, "{k} {v}");
        }
    }
    if let Some(own) = &rep.own {
        own_text(&mut o, own, rep);
    }
    o
}

/// The workload's own counters beside the host-wide deltas.
fn own_text(o: &mut String, own: &Value, rep: &RunReport) {
    let n = |k: &str| own[k].as_u64().unwrap_or(0);
    let _ = writeln!(
        o,
        "\nThe workload's own counters (its tasks' tracepoints, and its cgroup's memory.stat; own.notes in the JSON say what each counts), {} events{}:",
        n("events"),
        if n("lost_events") > 0 { format!(", {} LOST: incomplete", n("lost_events")) } else { String::new() }
    );
    let _ = writeln!(o, "  {:30} {:>14} {:>14}", "counter", "own", "host-wide");
    if let Some(c) = own["counters"].as_object() {
        for (k, v) in super::tracefs::counter_names().filter_map(|k| Some((k, c.get(k)?))) {
            let _ =
                writeln!(o, "  {k:30} {:>14} {:>14}", v.as_u64().unwrap_or(0), rep.vmstat.get(k).copied().unwrap_or(0));
        }
    }
}

pub fn emit(rep: &RunReport, text: &str, json: Option<&str>) -> ExitCode {
    match crate::write_json(json, &rep.to_json_string()) {
        Ok(true) => crate::emit_status(text),
        Ok(false) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_deltas_are_the_stat_files_fields_over_the_run_with_in_flight_at_the_end() {
        let snap = |vda: [u64; 11]| HostSnap {
            block: vec![("loop0".into(), [5; 11]), ("vda".into(), vda)],
            ..Default::default()
        };
        let a = snap([100, 10, 800, 50, 200, 20, 6400, 900, 3, 1000, 950]);
        let b = snap([160, 70, 2800, 110, 230, 520, 16_400, 1900, 1, 1400, 2010]);
        let d = block_deltas(&a, &b);
        assert_eq!(d.len(), 1, "a device whose I/O fields did not move is left out: {d:?}");
        assert_eq!((d[0].name.as_str(), d[0].stat.read_ios, d[0].stat.write_merges), ("vda", 60, 500));
        assert_eq!(
            d[0].times,
            Some(DiskTimes { read_ticks: 60, write_ticks: 1000, in_flight: 1, io_ticks: 400, time_in_queue: 1060 })
        );
    }
}
