//! Memory cgroups and pressure in the report: each group's control files as the kernel prints
//! them (v2 `memory.current`, `memory.peak`, `memory.events`, `memory.stat` in bytes and events;
//! v1 `usage_in_bytes`, `max_usage_in_bytes`, `failcnt`s), and PSI (`/proc/pressure/memory`,
//! `memory.pressure`), for JSON and for text.

use serde::{Deserialize, Serialize};

use super::ordered::OrderedMap;
use super::vmstat::Vm;
use crate::kernel::Kernel;
use crate::memcontrol::{CgroupApi, MEMCG_EVENT_NAMES, UNLIMITED};
use crate::mmzone::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_UNEVICTABLE};
use crate::psi::PsiGroup;

/// One line of a pressure file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Microseconds, as the kernel's `total=`.
    pub total: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    pub some: PsiLine,
    pub full: PsiLine,
}

/// One group at the end of the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupReport {
    pub name: String,
    #[serde(default)]
    pub parent: Option<String>,
    /// "v1" or "v2": the interface the scenario used, and the files shown.
    pub api: String,
    /// Control file → value (bytes, counts), in the kernel's names for the interface.
    pub files: OrderedMap<u64>,
    pub events: OrderedMap<u64>,
    pub stat: OrderedMap<u64>,
    pub pressure: Pressure,
}

fn pressure(g: &PsiGroup, now: u64) -> Pressure {
    let mut g = g.clone();
    g.finish(now);
    let line = |i: usize, total_ns: u64| {
        let a = g.avgs(i);
        PsiLine { avg10: round2(a[0]), avg60: round2(a[1]), avg300: round2(a[2]), total: total_ns / 1000 }
    };
    Pressure { some: line(0, g.some_total_ns), full: line(1, g.full_total_ns) }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `/proc/pressure/memory` at `now`.
pub fn system_pressure(k: &Kernel, now: u64) -> Pressure {
    pressure(&k.psi, now)
}

/// The header of `lru_rows`' CSV lines.
pub const LRU_ROW_HEADER: &str = "t_s,group,inactive_anon,active_anon,inactive_file,active_file,dirty,writeback";

/// One CSV line per group but the root at `t_s`: its subtree's LRU lists and its dirty and
/// under-writeback file pages, in pages, as `memory.stat` would give them (divided by 4096) —
/// so a run's list balance can be followed beside the host's own `memory.stat` samples.
pub fn lru_rows(k: &Kernel, t_s: f64, out: &mut String) {
    use std::fmt::Write as _;
    let gs = &k.memcg.groups;
    let mut sub = Vec::new();
    for (i, g) in gs.iter().enumerate().skip(1) {
        k.memcg.subtree(i as u8, &mut sub);
        // In pages: a list's length counts a large folio once.
        let lru =
            |l: usize| -> u64 { sub.iter().map(|&c| gs[c as usize].lru_zone.iter().map(|z| z[l]).sum::<u64>()).sum() };
        let _ = writeln!(
            out,
            "{t_s:.3},{},{},{},{},{},{},{}",
            g.name,
            lru(LRU_INACTIVE_ANON),
            lru(LRU_ACTIVE_ANON),
            lru(LRU_INACTIVE_FILE),
            lru(LRU_ACTIVE_FILE),
            g.nr_dirty,
            g.nr_writeback
        );
    }
}

/// Every group but the root, in declaration order.
pub fn cgroup_reports(k: &Kernel, now: u64) -> Vec<CgroupReport> {
    let gs = &k.memcg.groups;
    let mut out = Vec::new();
    let mut sub = Vec::new();
    for (i, g) in gs.iter().enumerate().skip(1) {
        k.memcg.subtree(i as u8, &mut sub);
        // In pages: a list's length counts a large folio once.
        let lru =
            |l: usize| -> u64 { sub.iter().map(|&c| gs[c as usize].lru_zone.iter().map(|z| z[l]).sum::<u64>()).sum() };
        let ev = |c: Vm| -> u64 { sub.iter().map(|&s| gs[s as usize].ev.get(c)).sum() };
        let bytes = |pages: u64| if pages == UNLIMITED { u64::MAX } else { pages * 4096 };
        let mut files = OrderedMap::new();
        match g.api {
            CgroupApi::V2 => {
                files.insert("memory.current", g.usage * 4096);
                files.insert("memory.peak", g.peak * 4096);
                files.insert("memory.max", bytes(g.limits.max));
                files.insert("memory.high", bytes(g.limits.high));
                files.insert("memory.low", g.limits.low * 4096);
                files.insert("memory.min", g.limits.min * 4096);
                files.insert("memory.swap.current", g.swap * 4096);
                files.insert("memory.swap.max", bytes(g.limits.swap_max));
            }
            CgroupApi::V1 => {
                files.insert("memory.usage_in_bytes", g.usage * 4096);
                files.insert("memory.max_usage_in_bytes", g.peak * 4096);
                files.insert("memory.limit_in_bytes", bytes(g.limits.max));
                files.insert("memory.failcnt", g.failcnt);
                files.insert("memory.memsw.usage_in_bytes", (g.usage + g.swap) * 4096);
                files.insert("memory.memsw.limit_in_bytes", bytes(g.limits.memsw_max));
                files.insert("memory.memsw.failcnt", g.memsw_failcnt);
            }
        }
        let mut events = OrderedMap::new();
        for (j, n) in MEMCG_EVENT_NAMES.iter().enumerate() {
            events.insert(*n, g.events[j]);
        }
        let (ia, aa, ifl, af, un) = (
            lru(LRU_INACTIVE_ANON),
            lru(LRU_ACTIVE_ANON),
            lru(LRU_INACTIVE_FILE),
            lru(LRU_ACTIVE_FILE),
            lru(LRU_UNEVICTABLE),
        );
        let mut stat = OrderedMap::new();
        // memory_stat_format's order; sizes in bytes, events in counts. anon/file are the
        // pages on the group's lists (isolated pages aside).
        stat.insert("anon", (ia + aa) * 4096);
        stat.insert("file", (ifl + af) * 4096);
        stat.insert("inactive_anon", ia * 4096);
        stat.insert("active_anon", aa * 4096);
        stat.insert("inactive_file", ifl * 4096);
        stat.insert("active_file", af * 4096);
        stat.insert("unevictable", un * 4096);
        for c in [
            Vm::WorkingsetRefaultAnon,
            Vm::WorkingsetRefaultFile,
            Vm::WorkingsetActivateAnon,
            Vm::WorkingsetActivateFile,
            Vm::WorkingsetRestoreAnon,
            Vm::WorkingsetRestoreFile,
        ] {
            stat.insert(c.name(), ev(c));
        }
        let (sk, sd) = (ev(Vm::PgscanKswapd), ev(Vm::PgscanDirect));
        let (tk, td) = (ev(Vm::PgstealKswapd), ev(Vm::PgstealDirect));
        stat.insert("pgscan", sk + sd);
        stat.insert("pgsteal", tk + td);
        stat.insert("pgscan_kswapd", sk);
        stat.insert("pgscan_direct", sd);
        stat.insert("pgsteal_kswapd", tk);
        stat.insert("pgsteal_direct", td);
        for c in [Vm::Pgfault, Vm::Pgmajfault, Vm::Pgrefill, Vm::Pgactivate, Vm::Pgdeactivate] {
            stat.insert(c.name(), ev(c));
        }
        out.push(CgroupReport {
            name: g.name.clone(),
            parent: (g.parent != crate::memcontrol::ROOT).then(|| gs[g.parent as usize].name.clone()),
            api: if g.api == CgroupApi::V1 { "v1" } else { "v2" }.to_string(),
            files,
            events,
            stat,
            pressure: pressure(&g.psi, now),
        });
    }
    out
}

fn pressure_text(p: &Pressure) -> String {
    let l = |n: &str, x: &PsiLine| {
        format!("{n} avg10={:.2} avg60={:.2} avg300={:.2} total={}\n", x.avg10, x.avg60, x.avg300, x.total)
    };
    l("some", &p.some) + &l("full", &p.full)
}

/// The text report's section: each group's files in the kernel's formats.
pub fn text(system: Option<&Pressure>, groups: &[CgroupReport]) -> String {
    let mut s = String::new();
    if let Some(p) = system {
        s += "/proc/pressure/memory\n";
        s += &pressure_text(p);
    }
    for g in groups {
        s += &format!("\ncgroup {} ({})\n", g.name, g.api);
        for (f, v) in g.files.iter() {
            if *v == u64::MAX {
                s += &format!("  {f}: max\n");
            } else {
                s += &format!("  {f}: {v}\n");
            }
        }
        if g.api == "v2" {
            s += "  memory.events:\n";
            for (n, v) in g.events.iter() {
                s += &format!("    {n} {v}\n");
            }
            s += "  memory.pressure:\n";
            for line in pressure_text(&g.pressure).lines() {
                s += &format!("    {line}\n");
            }
        }
        s += "  memory.stat:\n";
        for (n, v) in g.stat.iter() {
            s += &format!("    {n} {v}\n");
        }
    }
    s
}
