//! Where kswapd's reclaim goes in a long split-LRU run, run by run: the pages each zone gave
//! up in `balance_pgdat` runs begun at order 0 and at order > 0, how the high-order runs ended,
//! and how much of a zone's reclaim came while it already held more than 8 × HIGH free pages
//! (the "way too many pages free already" bound of 2.6.36–2.6.38's per-zone loop, which the
//! kernel checks at the run's order: a zone whose free memory is all single pages never meets
//! it at order 3, however much is free). At each high-order run's end it also records which
//! zones pass HIGH at that order only through their MIGRATE_RESERVE blocks' free pages (the
//! check counts every free list). An observer: the run is the same with or without it.
//!
//! A second line per sample ("o3 …", per interval, not cumulative) times the order-3 runs: how
//! many `loop_again` passes each took, what each pass reclaimed and scanned per zone, how large
//! each zone's file LRU was when the pass began scanning, and how long the runs lasted in
//! simulated time against kswapd's CPU time — the terms in which a pass's `lru >> priority`
//! bite and the passes per hour make kswapd's reclaim rate.
//!
//! A third line per sample ("bi …") sets the zones beside the reporter's SysRq-M and vmstat
//! figures: each zone's free blocks per order (buddyinfo) and per order and migrate type
//! (pagetypeinfo), the share of its free pages in blocks of order 0–1 and of order ≥ 3, kswapd's
//! pgscan per zone in the interval and the Normal / DMA32 ratio, `pgdeactivate` / `pgrefill`, and
//! order > 0 wakeups and runs in the interval.
//!
//! With `detail=FROM_S..TO_S` (seconds of simulated time; the example's own key, not passed to
//! the scenario) it also follows Normal second by second inside that window, to set what kswapd
//! gives Normal against what Normal hands out: an `nz` line per second (Normal's buddy free
//! pages at the second's first event, least and most; the pages Normal handed out by path —
//! `get_page_from_freelist` at LOW, the slow path at MIN, the slow path's ALLOC_HARDER|ALLOC_HIGH
//! for atomic requests — and by caller class, as `dma32_census` sorts them; the pages taken off
//! its buddy lists by migrate type; the pages freed to it by reclaim and by everyone else;
//! kswapd's reclaim from Normal by priority and from DMA32; allocator wakeups of kswapd per zone)
//! and a `run` line per `balance_pgdat` run (its order at begin and end, simulated length,
//! `loop_again` passes, pages reclaimed from Normal by priority and from DMA32, the lowest
//! priority, Normal's free pages at begin and end, and the gap since the previous run: how long,
//! whether kswapd went to full sleep in it, and what Normal handed out and got back meanwhile).
//! Normal's composition and its aligned order-3 blocks' census are printed at the window's
//! first and last minute sample (`comp` lines). The path of an allocation is read as
//! `alloc_paths` reads it: a slow-path allocation follows, in the same task and for the same
//! order, the `mm_vmscan_wakeup_kswapd` its `wake_all_kswapd` fired.
//!
//! An `rsv` line per sample follows Normal's MIGRATE_RESERVE pageblocks (`reserve.rs`), and with
//! `detail=` a `form` line per order-3 run says which aligned order-3 blocks the run made free and
//! what their pages were before it (`form.rs`). A `vc` and a `dr` line per sample print the
//! /proc/vmstat counters of the interval and the direct-reclaim and below-LOW flows behind them
//! (`vmstat.rs`). An `own` line per sample says how Normal's file pages lie physically (runs of
//! one file's pages) and what its per-CPU refills split (`owners.rs`); with `detail=` an `fpg`
//! line per order-3 run follows the run's own frees (`freed.rs`). A `d32` line per sample says
//! who took DMA32's free blocks of order >= 3 in the interval (`supply.rs`), and a `pb` line who
//! holds the pages of DMA32's pageblocks by migrate type (`blocks.rs`). A `zp` line per sample
//! says which zones each `balance_pgdat` pass shrank and which step of the 8 × HIGH check made it
//! (`passes.rs`); an `fp` line what kswapd's batches freed and why they kept the rest, and an `lc`
//! line each zone's LRU at the sample (`fates.rs`). An `sd` line per sample gives each disk's
//! requests, latencies and busy time and the swap traffic (`disks.rs`).
//! With `detail=` an `end` line per order-3 run says what ended it: Normal's free pages by order
//! at its begin and end, and how the pages of
//! the order-3 blocks it made came free together — their places at the begin, the isolations
//! that took them, their distance on the inactive file list, their files, their hand-outs — and,
//! since the window began, who took the pages the runs freed next (`ends.rs`). With `buddies=on` a `bd` line per sample says
//! what DMA32's free single pages' buddies are and where the order-0 unmovable pages and the TCP
//! pages among them came from and went (`buddies.rs`).
//!
//! `whatif.KEY=ZONE` (the example's own keys, not the scenario's) switches on a labelled what-if
//! of `vmlab_core::whatif` — a departure from every kernel, for testing which way a cause runs;
//! the output's first line names the what-ifs on ("whatif none" without).
//!
//! cargo run --release -p vmlab-core --example kswapd_runs -- SCENARIO PROFILE EVERY_S [detail=FROM_S..TO_S] [buddies=on] [whatif.KEY=ZONE...] [KEY=VALUE...]

mod blocks;
mod buddies;
mod classes;
#[path = "../common/mod.rs"]
mod common;
mod detail;
mod disks;
mod ends;
mod fates;
mod form;
mod freed;
mod owners;
mod passes;
mod reserve;
mod supply;
mod vmstat;

use vmlab_core::kernel::Kernel;
use vmlab_core::mmzone::{
    ZoneType, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, MAX_ORDER, MIGRATE_TYPES,
};
use vmlab_core::reproduce::kswapd_high_order::{order3_block_census, zone_composition};
use vmlab_core::sim::Sim;
use vmlab_core::stats::vmstat::Vm;
use vmlab_core::trace::{Tracepoint, Tracer};

const Z: usize = 8;

#[derive(Default, Clone)]
struct Runs {
    /// Order the current run began at (None: kswapd is not balancing).
    run_order: Option<u32>,
    /// kswapd pages reclaimed per zone in runs begun at order 0 / order > 0.
    steal: [[u64; Z]; 2],
    /// Of those in high-order runs: reclaimed while the zone held > 8 × HIGH free pages.
    steal_over_8high: [u64; Z],
    /// High-order runs begun, ended balanced at their order, ended at order 0.
    o3_begun: u64,
    o3_balanced: u64,
    o3_fell_back: u64,
    /// High-order runs ended balanced in which the zone passed HIGH at the order, and in which
    /// it passed only through its MIGRATE_RESERVE free pages.
    end_pass: [u64; Z],
    end_pass_by_reserve: [u64; Z],
    /// Order-3 runs timed, per run: `loop_again` passes, simulated length.
    o3: O3Runs,
}

/// Cumulative figures of the order-3 runs, diffed per interval by the sampler.
#[derive(Default, Clone)]
struct O3Runs {
    /// At the current run's begin: simulated ns, and kswapd's `high_order_passes` counter.
    begun_ns: u64,
    begun_passes: u64,
    /// Runs ended (balanced or fallen back), their passes, the most passes of one run.
    ended: u64,
    passes: u64,
    max_passes: u64,
    /// Their summed and longest simulated length, ns.
    len_ns: u64,
    max_len_ns: u64,
    /// The counter value of the last pass whose start LRU was read.
    seen_pass: u64,
    /// Passes whose LRU was read (at their first isolation), and per zone the summed file LRU
    /// (active + inactive) and inactive file it found.
    lru_read: u64,
    lru_file: [u64; Z],
    lru_inactive_file: [u64; Z],
    /// Per zone, pages scanned and reclaimed from the LRU in order-3 runs.
    scanned: [u64; Z],
    reclaimed: [u64; Z],
    /// Passes that went below DEF_PRIORITY (a priority-12 sweep that got < 32 pages).
    below_def_prio: u64,
    last_prio_pass: u64,
}

fn high_order_passes(k: &Kernel) -> u64 {
    k.reclaim.split2636_kswapd(0).map_or(0, |d| d.high_order_passes)
}

/// `zone_watermark_ok` at HIGH, classzone 0, without the MIGRATE_RESERVE lists' blocks of
/// `order` and above: would the zone pass without its reserve blocks?
fn passes_without_reserve(k: &Kernel, zid: usize, order: u32) -> bool {
    let z = &k.zones[zid];
    let reserve = common::reserve_in_orders(z, order as usize..MAX_ORDER);
    let free = z.free_pages as i64 - reserve as i64;
    k.zone_watermark_ok_free(zid, order, z.high_wmark() as i64, 0, free)
}

impl Tracer for Runs {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        match *ev {
            Tracepoint::KswapdBalanceBegin { order, .. } => {
                self.run_order = Some(order);
                self.o3_begun += (order > 0) as u64;
                // The event fires before the run's first `loop_again` counts its pass.
                self.o3.begun_ns = k.now;
                self.o3.begun_passes = high_order_passes(k);
            }
            Tracepoint::KswapdBalanceEnd { order, .. } => {
                let begun = self.run_order.take().unwrap_or(0);
                if begun > 0 {
                    let o = &mut self.o3;
                    let passes = high_order_passes(k) - o.begun_passes;
                    let len = k.now - o.begun_ns;
                    o.ended += 1;
                    o.passes += passes;
                    o.max_passes = o.max_passes.max(passes);
                    o.len_ns += len;
                    o.max_len_ns = o.max_len_ns.max(len);
                }
                if begun > 0 && order > 0 {
                    self.o3_balanced += 1;
                    for (zid, z) in k.zones.iter().enumerate().take(Z) {
                        if z.present == 0 || !k.zone_watermark_ok(zid, order, z.high_wmark(), 0, false, false) {
                            continue;
                        }
                        self.end_pass[zid] += 1;
                        self.end_pass_by_reserve[zid] += !passes_without_reserve(k, zid, order) as u64;
                    }
                } else if begun > 0 {
                    self.o3_fell_back += 1;
                }
            }
            Tracepoint::LruIsolate { classzone: zid, nr_taken, lru, .. } => {
                if self.run_order.is_none_or(|o| o == 0) || k.trace_at.task != k.nodes[0].kswapd.task {
                    return;
                }
                let pass = high_order_passes(k);
                if pass == self.o3.seen_pass {
                    return;
                }
                // The pass's first isolation: the LRU as the pass found it, with the pages this
                // isolation just took put back on their list.
                let o = &mut self.o3;
                o.seen_pass = pass;
                o.lru_read += 1;
                for (zid2, z) in k.zones.iter().enumerate().take(Z) {
                    let back = |l: usize| if zid2 == zid && lru == l { nr_taken } else { 0 };
                    let inactive = z.lru_pages[LRU_INACTIVE_FILE] + back(LRU_INACTIVE_FILE);
                    o.lru_inactive_file[zid2] += inactive;
                    o.lru_file[zid2] += inactive + z.lru_pages[LRU_ACTIVE_FILE] + back(LRU_ACTIVE_FILE);
                }
            }
            Tracepoint::LruShrinkInactive { zid, nr_reclaimed, nr_scanned, priority, .. } => {
                let Some(order) = self.run_order else { return };
                if k.trace_at.task != k.nodes[0].kswapd.task || zid >= Z {
                    return;
                }
                let hi = (order > 0) as usize;
                if hi == 1 {
                    let o = &mut self.o3;
                    o.scanned[zid] += nr_scanned;
                    o.reclaimed[zid] += nr_reclaimed;
                    let pass = high_order_passes(k);
                    if priority < vmlab_core::vmscan::DEF_PRIORITY && o.last_prio_pass != pass {
                        o.last_prio_pass = pass;
                        o.below_def_prio += 1;
                    }
                }
                self.steal[hi][zid] += nr_reclaimed;
                let z = &k.zones[zid];
                if hi == 1 && z.free_pages > 8 * z.high_wmark() {
                    self.steal_over_8high[zid] += nr_reclaimed;
                }
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Normal's pages by holder (percent: file, anon, mlocked, slab + page tables, free, other) and
/// what its aligned order-3 blocks hold, beside Simon's SysRq-M shares.
fn comp_line(sim: &Sim) {
    let Some(nz) = sim.k.zones.iter().position(|z| z.kind == ZoneType::Normal) else { return };
    let c = zone_composition(sim, nz).map(|x| format!("{x:.1}")).join("/");
    let b = order3_block_census(sim, nz);
    println!(
        "comp {:.3} | Normal % file/anon/mlocked/slab+tables/free/other {c} | order-3 blocks {} free {} freeable {} pinned by 1 / 2-7 / 8 pages {}/{}/{} (by anon/mlocked/slab/tables/other only {:?}) free pages in pinned blocks {}",
        sim.s.now as f64 / 3.6e12,
        b.blocks,
        b.free,
        b.freeable,
        b.pinned_one,
        b.pinned_some,
        b.pinned_all,
        b.pinned_by,
        b.free_in_pinned
    );
}

fn main() {
    let keys: Vec<&str> = ["detail", "buddies"].into_iter().chain(vmlab_core::whatif::WhatIf::KEYS).collect();
    let (common::Census { mut sim, every_s }, own) = common::setup_with("kswapd_runs", &keys);
    for (key, value) in own.iter().filter(|(key, _)| key.starts_with("whatif.")) {
        if let Err(e) = sim.k.whatif.set(key, value) {
            eprintln!("kswapd_runs: {e}");
            std::process::exit(2);
        }
    }
    println!("whatif {}", sim.k.whatif.label());
    sim.k.attach_tracer(Box::new(Runs::default()));
    // Normal's reserve pageblocks, printed after each hour's lines.
    if let Some(r) = reserve::Reserve::new(&sim.k) {
        println!("{}", reserve::Reserve::header());
        sim.k.attach_tracer(Box::new(r));
    }
    // Normal's file pages' physical runs and its refills' supply, printed after each hour's lines.
    if let Some(o) = owners::Owners::new(&sim.k) {
        println!("{}", owners::Owners::header());
        sim.k.attach_tracer(Box::new(o));
    }
    // Who takes DMA32's order >= 3 free blocks, printed after each hour's lines.
    if let Some(s) = supply::Supply::new(&sim.k) {
        println!("{}", supply::Supply::header());
        sim.k.attach_tracer(Box::new(s));
    }
    // Who holds DMA32's pageblocks by type, printed after each hour's lines.
    if let Some(b) = blocks::Blocks::new(&sim.k) {
        println!("{}", blocks::Blocks::header());
        sim.k.attach_tracer(Box::new(b));
    }
    // What DMA32's single free pages' buddies are (`buddies=on`), printed after each hour's lines.
    if own.iter().rfind(|(k, _)| k == "buddies").is_some_and(|(_, v)| common::parse_on("kswapd_runs", "buddies", v)) {
        if let Some(b) = buddies::Buddies::new(&sim.k) {
            println!("{}", buddies::Buddies::header());
            sim.k.attach_tracer(Box::new(b));
        }
    }
    // kswapd's per-zone shrink decisions per pass, printed after each hour's lines.
    println!("{}", passes::Passes::header());
    sim.k.attach_tracer(Box::new(passes::Passes::new(&sim.k)));
    // What kswapd's batches did with the pages they took, and each zone's LRU, after each hour's lines.
    println!("{}", fates::Fates::header());
    sim.k.attach_tracer(Box::new(fates::Fates::new(&sim.k)));
    // The vmstat counters per interval, printed after each hour's lines.
    println!("{}", vmstat::VmstatLine::header());
    sim.k.attach_tracer(Box::new(vmstat::VmstatLine::new(&sim.k)));
    let detail = own.iter().rfind(|(k, _)| k == "detail").map(|(k, v)| common::parse_window("kswapd_runs", k, v));
    if let Some((from, to)) = detail {
        println!("{}", detail::Detail::header());
        sim.k.attach_tracer(Box::new(detail::Detail::new(&sim.k, from, to)));
    }
    // Normal's composition and order-3 block census at the detail window's first and last sample.
    let mut comp_due = detail.map(|(from, to)| [from * 1_000_000_000, to * 1_000_000_000]).unwrap_or([u64::MAX; 2]);
    // Each disk's requests and latencies, and the swap traffic, printed after each hour's lines.
    println!("{}", disks::Disks::header());
    let mut sd = disks::Disks::new(&sim);
    // MemFree is read every minute for the window's mean; the rest is printed every EVERY_S.
    let mut window = common::setup_window(&mut sim, every_s);
    // The order-3 figures and kswapd's CPU time at the previous line: the "o3" line is per interval.
    let (mut prev, mut prev_passes, mut prev_cpu) = (O3Runs::default(), 0u64, 0u64);
    // The "bi" line's interval figures: kswapd pgscan per zone, pgdeactivate, pgrefill, order > 0
    // wakeups and balance_pgdat runs at the previous line.
    let (mut prev_scan, mut prev_deact, mut prev_refill, mut prev_wake, mut prev_runs) =
        ([0u64; Z], 0u64, 0u64, 0u64, 0u64);
    println!(
        "t_h memfree_window_mean% | per zone: free o0/o1/o2/o3+ reserve_o3+ high | o3 runs begun/balanced/fell_back | per zone \
         kswapd steal in o0 runs / o3 runs (of which while free > 8*HIGH) | per zone o3 ends passing HIGH (only by reserve) \
         | kswapd pgscan per zone, lumpy passes, lowest priority, pgscan_anon, pswpout | pswpin, swap slots in use, \
         per zone anon active/inactive"
    );
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        for due in comp_due.iter_mut() {
            if sim.s.now >= *due {
                *due = u64::MAX;
                comp_line(sim);
            }
        }
        let Some((_, mean)) = window.sample(sim, every_s) else { return };
        let mut line = format!("{:.1} {mean:.2} |", sim.s.now as f64 / 3.6e12);
        let big: Vec<usize> = (0..sim.k.zones.len().min(Z)).filter(|&z| sim.k.zones[z].present >= 8192).collect();
        for &zid in &big {
            let z = &sim.k.zones[zid];
            line += &format!(
                " {} {} {} {} {} |",
                z.kind.name(),
                z.free_pages,
                common::low_orders(z),
                common::reserve_in_orders(z, 3..MAX_ORDER),
                z.high_wmark()
            );
        }
        let r = sim.k.tracer::<Runs>().cloned().unwrap_or_default();
        line += &format!(" {}/{}/{} |", r.o3_begun, r.o3_balanced, r.o3_fell_back);
        for &zid in &big {
            line += &format!(" {}/{}({})", r.steal[0][zid], r.steal[1][zid], r.steal_over_8high[zid]);
        }
        line += " |";
        for &zid in &big {
            line += &format!(" {}({})", r.end_pass[zid], r.end_pass_by_reserve[zid]);
        }
        let d = sim.k.reclaim.split2636_kswapd(0).cloned().unwrap_or_default();
        let scan: Vec<String> = big.iter().map(|&z| d.zone_scan_kswapd[z].to_string()).collect();
        line += &format!(
            " | {} {} {} {} {}",
            scan.join("/"),
            d.high_order_low_prio_passes,
            d.lowest_priority.map_or(-1, |p| p),
            sim.k.ev.get(Vm::PgscanAnon),
            sim.k.ev.get(Vm::Pswpout)
        );
        // The swap regime: pages read from swap (faults, and a swapoff's `try_to_unuse`), slots in
        // use (`-` once the area is gone), and each zone's anon LRU active/inactive.
        let anon: Vec<String> = big
            .iter()
            .map(|&z| {
                let l = &sim.k.zones[z].lru_pages;
                format!("{}/{}", l[LRU_ACTIVE_ANON], l[LRU_INACTIVE_ANON])
            })
            .collect();
        line += &format!(
            " | pswpin {} swap_inuse {} anon a/i {}",
            sim.k.ev.get(Vm::Pswpin),
            sim.k.swap.as_ref().map_or("-".to_string(), |s| s.inuse.to_string()),
            anon.join(" ")
        );
        println!("{line}");
        let (o, p) = (&r.o3, &prev);
        let passes_begun = d.high_order_passes - prev_passes;
        let ended = o.ended - p.ended;
        let kt = sim.k.nodes[0].kswapd.task;
        let cpu = sim.s.tasks[kt].stime_ns + sim.s.tasks[kt].utime_ns;
        let per = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let mut o3 = format!(
            "o3 {:.1} runs {} passes {} ({:.1}/run, max {} all-time) below_prio12 {} |",
            sim.s.now as f64 / 3.6e12,
            ended,
            o.passes - p.passes,
            per(o.passes - p.passes, ended),
            o.max_passes,
            o.below_def_prio - p.below_def_prio
        );
        let lr = o.lru_read - p.lru_read;
        for &zid in &big {
            o3 += &format!(
                " {} reclaimed/pass {:.1} scanned/pass {:.1} file_lru@pass {:.0} (inactive {:.0}) |",
                sim.k.zones[zid].kind.name(),
                per(o.reclaimed[zid] - p.reclaimed[zid], passes_begun),
                per(o.scanned[zid] - p.scanned[zid], passes_begun),
                per(o.lru_file[zid] - p.lru_file[zid], lr),
                per(o.lru_inactive_file[zid] - p.lru_inactive_file[zid], lr),
            );
        }
        let interval_ns = every_s * 1_000_000_000;
        o3 += &format!(
            " passes begun {} | run ms mean {:.3} max {:.3} (all-time) | in o3 runs {:.1} ms ({:.4}% of time) | kswapd cpu {:.1} ms",
            passes_begun,
            per(o.len_ns - p.len_ns, ended) / 1e6,
            o.max_len_ns as f64 / 1e6,
            (o.len_ns - p.len_ns) as f64 / 1e6,
            (o.len_ns - p.len_ns) as f64 * 100.0 / interval_ns as f64,
            (cpu - prev_cpu) as f64 / 1e6
        );
        println!("{o3}");
        (prev, prev_passes, prev_cpu) = (o.clone(), d.high_order_passes, cpu);
        let t_h = sim.s.now as f64 / 3.6e12;
        let mut bi = format!("bi {t_h:.1} |");
        for &zid in &big {
            let z = &sim.k.zones[zid];
            let pct = |n: u64| n as f64 * 100.0 / z.free_pages.max(1) as f64;
            let orders: Vec<String> = (0..MAX_ORDER).map(|o| z.nr_free[o].to_string()).collect();
            let types: Vec<String> = (0..MIGRATE_TYPES)
                .map(|mt| (0..MAX_ORDER).map(|o| z.free_area[o][mt].len.to_string()).collect::<Vec<_>>().join(","))
                .collect();
            bi += &format!(
                " {} free {} o0-1 {:.1}% o3+ {:.1}% buddy {} by type unmov/mov/recl/reserve {} |",
                z.kind.name(),
                z.free_pages,
                pct(common::free_in_orders(z, 0..2)),
                pct(common::free_in_orders(z, 3..MAX_ORDER)),
                orders.join(","),
                types.join(" ")
            );
        }
        let zone_of = |t: ZoneType| big.iter().copied().find(|&z| sim.k.zones[z].kind == t);
        let scan_h: Vec<u64> = (0..Z).map(|z| d.zone_scan_kswapd[z] - prev_scan[z]).collect();
        let ratio = match (zone_of(ZoneType::Normal), zone_of(ZoneType::Dma32)) {
            (Some(n), Some(d32)) => format!("{:.3}", per(scan_h[n], scan_h[d32])),
            _ => "-".into(),
        };
        let scans: Vec<String> = big.iter().map(|&z| format!("{} {}", sim.k.zones[z].kind.name(), scan_h[z])).collect();
        let (deact, refill) = (sim.k.ev.get(Vm::Pgdeactivate), sim.k.ev.get(Vm::Pgrefill));
        bi += &format!(
            " kswapd pgscan in interval {} normal/dma32 {ratio} | pgdeactivate {} (+{}) pgrefill {} (+{}) | o3 wakeups {} (+{}) o3 runs {} (+{})",
            scans.join(" "),
            deact,
            deact - prev_deact,
            refill,
            refill - prev_refill,
            d.high_order_wakeups,
            d.high_order_wakeups - prev_wake,
            d.balance_runs[1],
            d.balance_runs[1] - prev_runs
        );
        println!("{bi}");
        if let Some(r) = sim.k.tracer::<reserve::Reserve>() {
            println!("{}", r.line(&sim.k));
        }
        if let Some(o) = sim.k.tracer::<owners::Owners>() {
            println!("{}", o.line(&sim.k, t_h));
        }
        if let Some(s) = sim.k.tracer::<supply::Supply>() {
            println!("{}", s.line(&sim.k, t_h));
        }
        if let Some(b) = sim.k.tracer::<blocks::Blocks>() {
            println!("{}", b.line(&sim.k, t_h));
        }
        if let Some(b) = sim.k.tracer::<buddies::Buddies>() {
            println!("{}", b.line(&sim.k, t_h));
        }
        if let Some(p) = sim.k.tracer::<passes::Passes>() {
            println!("{}", p.line(&sim.k, t_h));
        }
        if let Some(f) = sim.k.tracer::<fates::Fates>() {
            println!("{}", f.lines(&sim.k, t_h));
        }
        if let Some(v) = sim.k.tracer::<vmstat::VmstatLine>() {
            println!("{}", v.lines(&sim.k, t_h));
        }
        println!("{}", sd.line(sim));
        prev_scan.copy_from_slice(&d.zone_scan_kswapd[..Z]);
        (prev_deact, prev_refill, prev_wake, prev_runs) = (deact, refill, d.high_order_wakeups, d.balance_runs[1]);
    }));
    if let Err(e) = sim.run() {
        eprintln!("{}", e.message);
        std::process::exit(1);
    }
}
