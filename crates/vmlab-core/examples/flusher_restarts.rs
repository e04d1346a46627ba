//! Where each restart of reclaim's flusher work begins against the inactive file tail (issue 17's
//! dirty-writer 384 MiB: the host activates thousands of pages under writeback after some
//! restarts, vmlab a few dozen). For every `WB_start_all` work: the file index the flusher starts
//! at (`writeback_index`) and the work's pages; the inactive file tail of the group that holds
//! the file's pages, as runs of consecutive indices by state (C clean, D dirty, W under
//! writeback, R under writeback with PG_reclaim); then, for `window_ms` (default 30), every
//! flusher pass (where it stopped, pages submitted), every reclaim call of the writer (the tail
//! it met, scanned, freed, activated under writeback or dirty, priorities) and its throttles,
//! and the pages whose writeback ended and were rotated. An observer: the run is the same with
//! or without it.
//!
//! It replays a `vmlab run --host` run from that run's JSON (its `params`: the host's `--set`s
//! and the command line's), as `--host` builds it: the machine is the host's, the workload in a
//! v1 group of the scenario's memory (and memory + swap), the other writers' dirty pages on a
//! disk of their own.
//!
//! cargo run --profile ci -p vmlab-core --example flusher_restarts -- SCENARIO RUN.json [window_ms=30] [file=out] [task=writer] [set=KEY=VALUE...]
//!
//! `set=` adds a `--set` after the run's own (a what-if on the replayed run).

use std::any::Any;

use vmlab_core::api::{render, RunOpts};
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::mmzone::LRU_INACTIVE_FILE;
use vmlab_core::stats::vmstat::Vm;
use vmlab_core::trace::{kind, Tracepoint, Tracer};
use vmlab_core::workload::load_scenario;

fn fail(msg: String) -> ! {
    eprintln!("flusher_restarts: {msg}");
    std::process::exit(2)
}

/// A page's state as the tail listing prints it.
fn state(k: &Kernel, p: u32) -> char {
    let f = k.fr.flags[p as usize];
    match (f & pg::WRITEBACK != 0, f & pg::RECLAIM != 0, f & pg::DIRTY != 0, f & pg::LOCKED != 0) {
        (true, true, ..) => 'R',
        (true, false, ..) => 'W',
        (_, _, true, _) => 'D',
        (_, _, _, true) => 'L',
        _ => 'C',
    }
}

/// The first `max` pages from the inactive file tail of group `g` as runs `state[first..last]`
/// (consecutive indices of `file` in one state; `x` another file's page).
fn tail_runs(k: &Kernel, g: u8, file: u32, max: usize) -> String {
    let list = &k.memcg.groups[g as usize].lruvec[0].lists[LRU_INACTIVE_FILE];
    let mut runs: Vec<(char, u64, u64, u64)> = Vec::new();
    let (mut p, mut n) = (list.tail, 0);
    while p != NIL && n < max {
        let (s, i) = if k.fr.mapping[p as usize] == file {
            (state(k, p), k.fr.index[p as usize] as u64)
        } else {
            ('x', u64::MAX)
        };
        match runs.last_mut() {
            Some(r) if r.0 == s && (s == 'x' || r.2 + 1 == i) => {
                r.2 = i;
                r.3 += 1;
            }
            _ => runs.push((s, i, i, 1)),
        }
        p = k.fr.links[p as usize].prev;
        n += 1;
    }
    let shown: Vec<String> = runs
        .iter()
        .take(12)
        .map(|&(s, a, b, c)| if s == 'x' { format!("x{c}") } else { format!("{s}[{a}..{b}]") })
        .collect();
    format!("len {} | {}{}", list.len, shown.join(" "), if runs.len() > 12 { " …" } else { "" })
}

#[derive(Default)]
struct Restarts {
    file_name: String,
    task_name: String,
    window_ns: u64,
    file: Option<u32>,
    writer: Option<usize>,
    /// The start-all work last seen on the file's flusher (its `dirtied_before`).
    seen: Option<u64>,
    n: u32,
    /// The window of the restart being followed: its end.
    until: u64,
    at: u64,
    last_index: u64,
    submitted: u64,
    last_rotated: u64,
    last_writeback: u64,
    /// The writer's reclaim call being summed: scanned, freed, activated under writeback, dirty
    /// activated, priorities (first, last).
    call: Option<(u64, u64, u64, u64, u64, i32, i32)>,
    /// Per restart: activations in the window.
    totals: Vec<(u64, u64, u64)>,
    /// Every io_end release of the file's disk seen queued: (start, end).
    releases: std::collections::BTreeSet<(u64, u64)>,
    /// The writer's reclaim calls, whole run: (start, folios met under writeback).
    calls: Vec<(u64, u64)>,
    /// The call being summed for `calls`.
    open_call: Option<(u64, u64)>,
    /// At each reclaim call of the writer: the folios from the inactive tail to the first of
    /// the file's under writeback (none within the walk: u64::MAX).
    ahead: Vec<u64>,
    /// At each reclaim call of the writer: (start, the flusher's front — the file's
    /// `writeback_index` —, the file index of the inactive tail's first folio of the file).
    lead: Vec<(u64, u64, u64)>,
    /// At each reclaim call of the writer: the pages under writeback (all files).
    under: Vec<u64>,
    /// The writer's file batches that met folios under writeback: (instant, how many).
    met: Vec<(u64, u64)>,
}

/// The file index of the first of `file`'s folios from the inactive file tail of group `g`.
fn tail_index(k: &Kernel, g: u8, file: u32) -> Option<u64> {
    let list = &k.memcg.groups[g as usize].lruvec[0].lists[LRU_INACTIVE_FILE];
    let mut p = list.tail;
    while p != NIL {
        if k.fr.mapping[p as usize] == file {
            return Some(k.fr.index[p as usize] as u64);
        }
        p = k.fr.links[p as usize].prev;
    }
    None
}

/// The value of a step function `(instant, value)` at `t` (0 before its first step).
fn at(h: &[(u64, u64)], t: u64) -> u64 {
    h.partition_point(|s| s.0 <= t).checked_sub(1).map_or(0, |i| h[i].1)
}

/// Folios from the inactive file tail of group `g` before the first of `file`'s under writeback.
fn ahead_of_writeback(k: &Kernel, g: u8, file: u32, max: u64) -> u64 {
    let list = &k.memcg.groups[g as usize].lruvec[0].lists[LRU_INACTIVE_FILE];
    let (mut p, mut n) = (list.tail, 0);
    while p != NIL && n < max {
        if k.fr.mapping[p as usize] == file && k.fr.has(p, pg::WRITEBACK) {
            return n;
        }
        p = k.fr.links[p as usize].prev;
        n += 1;
    }
    u64::MAX
}

impl Restarts {
    fn ms(&self, ns: u64) -> String {
        format!("+{:.2}", (ns as f64 - self.at as f64) / 1e6)
    }
}

impl Tracer for Restarts {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        let now = k.trace_at.ns;
        let file = match self.file {
            Some(f) => f,
            None => match k.files.iter().position(|f| f.name == self.file_name) {
                Some(f) => *self.file.insert(f as u32),
                None => return,
            },
        };
        let f = &k.files[file as usize];
        let w = vmlab_core::page_writeback::wb_of(&k.disk_wb, f.disk);
        let group = |k: &Kernel| {
            let p = k.files[file as usize].pages.iter().copied().find(|&p| p != NIL);
            p.map_or(0, |p| vmlab_core::memcontrol::page_memcg(k, p))
        };
        self.releases.extend(k.releases.spans().filter(|s| s.0 == f.disk).map(|s| (s.1, s.2)));
        let me = Some(k.trace_at.task) == self.writer;
        match *ev {
            Tracepoint::MemcgReclaimBegin { .. } if me => {
                self.open_call = Some((now, 0));
                let g = k.files[file as usize].pages.iter().copied().find(|&p| p != NIL);
                let g = g.map_or(0, |p| vmlab_core::memcontrol::page_memcg(k, p));
                self.ahead.push(ahead_of_writeback(k, g, file, 1 << 20));
                self.under.push(k.g.writeback);
                if let Some(ti) = tail_index(k, g, file) {
                    self.lead.push((now, f.writeback_index, ti));
                }
            }
            Tracepoint::LruShrinkInactive { stat, file: true, .. } if me => {
                if let Some(c) = self.open_call.as_mut() {
                    c.1 += stat.nr_writeback;
                }
                if stat.nr_writeback > 0 {
                    self.met.push((now, stat.nr_writeback));
                }
            }
            Tracepoint::MemcgReclaimEnd { .. } if me => self.calls.extend(self.open_call.take()),
            _ => {}
        }
        let cut = k.wbs[w].dirtied_before;
        if cut.is_some() && cut != self.seen {
            self.seen = cut;
            self.n += 1;
            self.at = now;
            self.until = now + self.window_ns;
            self.submitted = 0;
            self.last_rotated = k.ev.get(Vm::Pgrotated);
            self.last_writeback = k.g.writeback;
            self.last_index = f.writeback_index;
            let first_dirty = (f.writeback_index as usize..f.pages.len())
                .chain(0..f.writeback_index as usize)
                .find(|&i| f.pages[i] != NIL && k.fr.has(f.pages[i], pg::DIRTY));
            println!(
                "restart {} at {:.3} s: work {} pages, writeback_index {} (first dirty {:?}), file {} pages, {} dirty, {} under writeback (all files)",
                self.n,
                now as f64 / 1e9,
                k.wbs[w].work,
                f.writeback_index,
                first_dirty,
                f.pages.len(),
                f.nr_dirty,
                k.g.writeback
            );
            println!("  tail: {}", tail_runs(k, group(k), file, 40_000));
            self.totals.push((0, 0, 0));
        }
        if now > self.until {
            return;
        }
        match *ev {
            Tracepoint::WbcWritepage { .. } if !me => self.submitted += 1,
            Tracepoint::MemcgReclaimBegin { .. } if me => {
                self.call = Some((now, 0, 0, 0, 0, i32::MAX, 0));
                println!("  {} ms writer reclaim; tail: {}", self.ms(now), tail_runs(k, group(k), file, 8_000));
            }
            Tracepoint::LruShrinkInactive { nr_scanned, nr_reclaimed, priority, file: true, stat, .. } if me => {
                if let Some(c) = self.call.as_mut() {
                    c.1 += nr_scanned;
                    c.2 += nr_reclaimed;
                    c.3 += stat.nr_writeback;
                    c.4 += stat.nr_activate[1] - stat.nr_writeback.min(stat.nr_activate[1]);
                    c.5 = c.5.min(priority);
                    c.6 = c.6.max(priority);
                }
            }
            Tracepoint::MemcgReclaimEnd { .. } if me => {
                if let Some((t, sc, fr, wb, d, plo, phi)) = self.call.take() {
                    println!(
                        "  {} ms   call of {:.2} ms: scanned {sc}, freed {fr}, activated {wb} under writeback + {d} other, priorities {phi}..{plo}",
                        self.ms(t),
                        (now - t) as f64 / 1e6
                    );
                    if let Some(tot) = self.totals.last_mut() {
                        tot.0 += wb;
                        tot.1 += d;
                        tot.2 += fr;
                    }
                }
            }
            Tracepoint::Throttled { usec_delayed, woken, .. } if me => {
                println!("  {} ms   throttled {usec_delayed} µs (woken {woken})", self.ms(now));
            }
            _ => {}
        }
        if f.writeback_index != self.last_index {
            println!(
                "  {} ms flusher at index {} ({} pages submitted since the restart)",
                self.ms(now),
                f.writeback_index,
                self.submitted
            );
            self.last_index = f.writeback_index;
        }
        let rot = k.ev.get(Vm::Pgrotated);
        if rot != self.last_rotated || k.g.writeback + 2048 <= self.last_writeback {
            println!(
                "  {} ms under writeback {} (was {}), rotated {}",
                self.ms(now),
                k.g.writeback,
                self.last_writeback,
                rot - self.last_rotated
            );
            self.last_rotated = rot;
        }
        self.last_writeback = k.g.writeback;
    }
    fn wants(&self) -> u32 {
        kind::WBC_WRITEPAGE
            | kind::MEMCG_RECLAIM_BEGIN
            | kind::MEMCG_RECLAIM_END
            | kind::LRU_SHRINK_INACTIVE
            | kind::THROTTLED
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn task_created(&mut self, task: usize, _pid: u32, comm: &str) {
        if comm == self.task_name {
            self.writer = Some(task);
        }
    }
    fn finish(&mut self) {
        // As the host traces' gaps.py and waves.py count them (docs/real/2026-11-29-dw42-runs.tar.gz).
        let r: Vec<(u64, u64)> = self.releases.iter().copied().collect();
        let mut gaps: Vec<f64> = r.windows(2).map(|w| w[1].0.saturating_sub(w[0].1) as f64 / 1e6).collect();
        gaps.sort_by(f64::total_cmp);
        if !gaps.is_empty() {
            let q = |f: f64| gaps[(f * (gaps.len() - 1) as f64) as usize];
            println!(
                "releases {}: gaps end to next start p10/p50/p90 {:.2} / {:.2} / {:.2} ms, over 4 ms: {}",
                r.len(),
                q(0.1),
                q(0.5),
                q(0.9),
                gaps.iter().filter(|&&g| g > 4.0).count()
            );
        }
        let mut some: Vec<u64> = self.ahead.iter().copied().filter(|&n| n != u64::MAX).collect();
        some.sort_unstable();
        if !some.is_empty() {
            let q = |f: f64| some[(f * (some.len() - 1) as f64) as usize];
            println!(
                "writer's reclaim calls: {}; with a folio of the file under writeback on the inactive list: {}, folios ahead of the first p10/p50/p90 {} / {} / {}",
                self.ahead.len(),
                some.len(),
                q(0.1),
                q(0.5),
                q(0.9)
            );
        }
        // As the host traces' lead.py (docs/real/2026-11-29-dw44-runs.tar.gz) counts them.
        let close = some.iter().filter(|&&n| n <= 2000).count();
        let mut lead: Vec<u64> = self.lead.iter().map(|l| l.1.saturating_sub(l.2)).collect();
        lead.sort_unstable();
        if !lead.is_empty() {
            let q = |f: f64| lead[(f * (lead.len() - 1) as f64) as usize];
            println!(
                "  of them <= 2,000 ahead: {close}; submitted ahead of the tail (front - tail index) p10/p50/p90 {} / {} / {}",
                q(0.1),
                q(0.5),
                q(0.9)
            );
        }
        self.under.sort_unstable();
        if !self.under.is_empty() {
            let q = |f: f64| self.under[(f * (self.under.len() - 1) as f64) as usize];
            println!("  pages under writeback at the calls p10/p50/p90 {} / {} / {}", q(0.1), q(0.5), q(0.9));
        }
        let front: Vec<(u64, u64)> = self.lead.iter().map(|l| (l.0, l.1)).collect();
        let tail: Vec<(u64, u64)> = self.lead.iter().map(|l| (l.0, l.2)).collect();
        let mut waves: Vec<(u64, u64, u64)> = Vec::new();
        for &(t, n) in &self.met {
            match waves.last_mut() {
                Some(w) if t - w.1 < 2_000_000 => {
                    w.1 = t;
                    w.2 += n;
                }
                _ => waves.push((t, t, n)),
            }
        }
        let ms20 = 20_000_000;
        let t0 = self.lead.first().map_or(0, |l| l.0);
        println!("waves (>= 1,000 under writeback met, batches < 2 ms apart): start_s met front-tail flusher_p/ms tail_p/ms (20 ms before)");
        for &(t, _, n) in waves.iter().filter(|w| w.2 >= 1000) {
            let speed = |h: &[(u64, u64)]| (at(h, t) as f64 - at(h, t.saturating_sub(ms20)) as f64) / 20.0;
            println!(
                "  {:7.3} {n:6} {:6} {:6.0} {:6.0}",
                (t - t0) as f64 / 1e9,
                at(&front, t).saturating_sub(at(&tail, t)),
                speed(&front),
                speed(&tail)
            );
        }
        if let (Some(a), Some(b)) = (self.lead.first(), self.lead.last()) {
            let ms = (b.0 - a.0) as f64 / 1e6;
            println!(
                "mean speeds over the writer's reclaim ({:.3} s): flusher {:.0} p/ms, tail {:.0} p/ms",
                ms / 1e3,
                (b.1 as f64 - a.1 as f64) / ms,
                (b.2 as f64 - a.2 as f64) / ms
            );
        }
        let inside = |t: u64| r.iter().any(|&(s, e)| s <= t && t < e);
        let met: Vec<&(u64, u64)> = self.calls.iter().filter(|c| c.1 > 0).collect();
        let big = met.iter().filter(|c| c.1 >= 1000);
        println!(
            "writer's reclaim calls meeting folios under writeback: {} ({} of them inside a release); of >= 1,000: {} inside, {} outside",
            met.len(),
            met.iter().filter(|c| inside(c.0)).count(),
            big.clone().filter(|c| inside(c.0)).count(),
            big.filter(|c| !inside(c.0)).count()
        );
        for (i, (wb, d, fr)) in self.totals.iter().enumerate() {
            println!(
                "restart {}: {wb} activated under writeback, {d} other, {fr} freed by the writer in the window",
                i + 1
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        fail("usage: flusher_restarts SCENARIO RUN.json [window_ms=30] [file=out] [task=writer]".into());
    }
    let mut extra = Vec::new();
    let mut obs =
        Restarts { file_name: "out".into(), task_name: "writer".into(), window_ns: 30_000_000, ..Default::default() };
    for a in &args[2..] {
        match a.split_once('=') {
            Some(("window_ms", v)) => {
                obs.window_ns =
                    v.parse::<u64>().unwrap_or_else(|_| fail(format!("window_ms: a whole number, got {v:?}")))
                        * 1_000_000
            }
            Some(("file", v)) => obs.file_name = v.into(),
            Some(("task", v)) => obs.task_name = v.into(),
            Some(("set", v)) => extra.push(v.to_string()),
            _ => fail(format!("unknown argument {a:?}")),
        }
    }
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| fail(format!("{}: {e}", args[1])));
    let run: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{}: {e}", args[1])));
    let params = run["params"].as_object().unwrap_or_else(|| fail(format!("{}: no params", args[1])));
    let host: Vec<String> = params
        .get("host")
        .and_then(|h| h.as_array())
        .unwrap_or_else(|| fail(format!("{}: not a `run --host` run (no params.host)", args[1])))
        .iter()
        .filter_map(|s| s.as_str().map(String::from))
        .collect();
    let cli: Vec<String> = params
        .iter()
        .filter(|(k, _)| *k != "host" && *k != "host_limit_group")
        .filter_map(|(k, v)| v.as_str().map(|v| format!("{k}={v}")))
        .chain(extra)
        .collect();
    let path = std::path::Path::new(&args[0]);
    let load = |sets: &[String]| load_scenario(path, sets).unwrap_or_else(|e| fail(render(e)));
    let own = load(&cli);
    // The host's sets come before and after the command line's; none of them sets what the other
    // does but the disk and the moment, which the command line's replace.
    let mut sc = load(&[&host[..], &cli[..]].concat());
    if sc.setup.machine.foreign_dirty_bytes > 0 && sc.file.machine.foreign_disk.is_none() {
        let mut d = load(&host).setup.disks.into_iter().next().unwrap_or_else(|| fail("no disk".into()));
        d.name = "host-root".into();
        sc.setup.machine.foreign_disk = sc.setup.disks.len();
        sc.setup.disks.push(d);
    }
    // `vmlab run --host`'s group (host.rs LIMIT_GROUP).
    sc.wrap_in_limit("vmlab-real", own.setup.machine.memory_bytes, own.setup.swap.as_ref().map_or(0, |s| s.bytes));
    let opts = RunOpts { tracers: vec![Box::new(obs)], ..Default::default() };
    match vmlab_core::api::run(&sc, opts) {
        Ok((rep, _)) => println!(
            "run: pgactivate {} pgrotated {} nr_vmscan_immediate_reclaim {} (the JSON: {} {} {})",
            rep.vmstat.get("pgactivate").copied().unwrap_or(0),
            rep.vmstat.get("pgrotated").copied().unwrap_or(0),
            rep.vmstat.get("nr_vmscan_immediate_reclaim").copied().unwrap_or(0),
            run["vmstat"]["pgactivate"],
            run["vmstat"]["pgrotated"],
            run["vmstat"]["nr_vmscan_immediate_reclaim"]
        ),
        Err(e) => fail(render(e)),
    }
}
