//! Seed 001's mail-server history (`scenarios/seeds/kswapd-high-order-mailserver.toml`) and the
//! 2.6.36 SLUB path it runs on: skb receive into kmalloc caches whose slab order follows
//! `calculate_order`, the `[slub]` boot parameters, swap off as `swap.size = 0`.

use vmlab_core::reproduce::kswapd_high_order::{run_pair_with, MAILSERVER};
use vmlab_core::stats::report::RunReport;

const SMALL: &str = r#"
name = "skb"
profile = "linux-2.6.36"
duration = "2s"
[machine]
memory = "256MiB"
cpus = 4
[[netrx]]
rate = "2000/s"
mtu = 1500
lifetime = "20ms"
"#;

fn run_small(text: &str, sets: &[&str]) -> vmlab_core::sim::Sim {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("skb.toml", text, &sets).expect("loads");
    vmlab_core::api::run(&sc, vmlab_core::api::RunOpts::default()).expect("runs").1
}

/// MTU 1500 receive buffers are kmalloc-2048 objects on order-3 slabs at 4 CPUs (Simon's
/// slabinfo), and the order falls as `calculate_order`'s object target falls with the CPU count
/// and as `slub_max_order` caps it; every packet also takes a 256-byte head from an order-0 slab.
#[test]
fn skb_slab_orders_follow_calculate_order() {
    let order = |sets: &[&str]| {
        let sim = run_small(SMALL, sets);
        let n = &sim.netrx[0];
        let data = n.cache.as_ref().expect("data cache");
        let head = n.head_cache.as_ref().expect("head cache");
        assert!(n.arrivals > 1000, "{} arrivals", n.arrivals);
        (data.size, data.order, head.order, data.slabs + data.order_fallback)
    };
    let (size, o4, head, slabs) = order(&[]);
    assert_eq!(size, 2048);
    assert_eq!((o4, head), (3, 0));
    assert!(slabs > 0);
    assert_eq!(order(&["machine.cpus=1"]).1, 2, "1 CPU: 8 objects a slab");
    assert_eq!(order(&["slub.max_order=1"]).1, 1);
    assert_eq!(order(&["netrx.0.mtu=9000"]).0, 16384);
}

/// The objects are freed as the stack consumes them: slabs go back to the buddy allocator and
/// the caches hold no more than the packets in flight need.
#[test]
fn skb_slabs_are_freed_when_the_packets_are_consumed() {
    let sim = run_small(SMALL, &[]);
    let n = &sim.netrx[0];
    let data = n.cache.as_ref().expect("data cache");
    // ~40 packets in flight at 2000/s × 20 ms: a few slabs of 16, one partial per CPU at most.
    assert!(data.pages <= 8 * 8, "{} data slab pages", data.pages);
    assert!(n.arrivals as f64 > 2.0 * 2000.0 * 0.8, "{} arrivals", n.arrivals);
}

#[test]
fn bad_slub_and_mtu_settings_are_positioned_errors() {
    let err = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match vmlab_core::workload::load_scenario_str("skb.toml", SMALL, &sets) {
            Ok(_) => panic!("accepted {sets:?}"),
            Err(e) => vmlab_core::api::render(e),
        }
    };
    let e = err(&["slub.min_order=3", "slub.max_order=1"]);
    assert!(e.contains("min_order 3 is above max_order 1"), "{e}");
    let e = err(&["netrx.0.object=4KiB"]);
    assert!(e.contains("`object` and `mtu` exclude each other"), "{e}");
    let e = err(&["netrx.0.mtu=20"]);
    assert!(e.contains("--set netrx.0.mtu=20"), "{e}");
}

/// `swap.size = 0` is swapoff: no swap area.
#[test]
fn swap_size_zero_is_swapoff() {
    let text = format!("{SMALL}\n[swap]\nsize = \"64MiB\"\n");
    assert!(run_small(&text, &[]).k.swap.is_some());
    assert!(run_small(&text, &["swap.size=0"]).k.swap.is_none());
}

fn metric(r: &RunReport, k: &str) -> f64 {
    r.metrics.get(k).copied().unwrap_or(f64::NAN)
}

/// The mail-server pair at full scale: the reproduce's own runs when the suite has them.
fn full_scale(swap_off: bool) -> Vec<RunReport> {
    if let Some(runs) = crate::common::suite_reproduce_runs("kswapd-high-order") {
        let swap = if swap_off { "off" } else { "on" };
        let runs = crate::common::runs_with(runs, &[("workload", "mailserver"), ("swap", swap)]);
        assert_eq!(runs.len(), vmlab_core::reproduce::kswapd_high_order::PROFILES.len(), "the reproduce's runs");
        return runs;
    }
    let opts = vmlab_core::reproduce::ReproduceOpts::default();
    let sets: Vec<String> = if swap_off { vec!["swap.size=0".into()] } else { Vec::new() };
    run_pair_with(&opts, MAILSERVER, "mailserver", &sets).expect("runs")
}

/// The after side: the same history under 2.6.38, swap off, keeps free memory near the
/// watermarks.
#[test]
#[ignore = "full scale: release build, scripts/test-all.sh runs it"]
fn full_scale_mailserver_2638_settles_near_the_watermarks() {
    let runs = full_scale(true);
    let b = &runs[1];
    assert_eq!(b.params.get("swap").and_then(|v| v.as_str()), Some("off"));
    let free = metric(b, "memfree_mean_pct");
    assert!(free <= 5.0, "2.6.38 MemFree {free:.2}%");
    assert!(free > metric(b, "high_wmark_sum_pct"), "2.6.38 MemFree {free:.2}% under the high watermarks");
}

/// The history is calibrated to what Simon Kirby measured about his machine, not to an outcome:
/// his SysRq-M of 22 Nov 2010 (swap off) shows 1,045 MiB of anon, 266 task stacks in all, Mapped
/// 15.5 MiB, PageTables 15.4 MiB and at most 84 MiB in no counter (TCP write queues and the long-lived kernel pages
/// of `[[kmem]]` here); his forks were "under 3 per second". Once the boot
/// sessions are up the model's machine stays inside those figures under either kernel.
#[test]
#[ignore = "full scale: release build, scripts/test-all.sh runs it"]
fn full_scale_mailserver_machine_is_the_reporters() {
    let opts = vmlab_core::reproduce::ReproduceOpts::default();
    for profile in vmlab_core::reproduce::kswapd_high_order::PROFILES {
        let sc = opts.load(MAILSERVER, &["swap.size=0".into()]).expect("loads");
        let run_opts = vmlab_core::api::RunOpts { profile: Some(profile), ..Default::default() };
        let (_, sim) = vmlab_core::api::run(&sc, run_opts).expect("runs");
        let mi = sim.meminfo();
        let mib = |kb: u64| kb as f64 / 1024.0;
        let anon = mib(mi.active_anon + mi.inactive_anon);
        assert!((anon - 1045.0).abs() <= 0.1 * 1045.0, "{profile}: anon {anon:.0} MiB, Simon 1,045");
        let tasks = sim.s.tasks.iter().filter(|t| t.state != vmlab_core::sched::TState::Exited).count();
        assert!(tasks <= 266, "{profile}: {tasks} tasks, Simon 266 stacks");
        assert!(mib(mi.mapped) <= 15.5, "{profile}: Mapped {:.1} MiB", mib(mi.mapped));
        let pt = mib(mi.page_tables);
        assert!((pt - 15.4).abs() <= 0.15 * 15.4, "{profile}: PageTables {pt:.1} MiB, Simon 15.4");
        // TCP write queues and the `[[kmem]]` pages: what MemTotal less every counter leaves.
        let uncounted = (sim.k.g.sock + sim.k.g.kmem) as f64 * 4.0 / 1024.0;
        assert!(uncounted <= 84.0, "{profile}: {uncounted:.0} MiB in no counter");
    }
}

/// The before side's must-shows. Not reproduced (docs/notes/era-2.6.36-38.md, "mail server"
/// and its follow-ups): in the 600 s run Normal's free memory is ~95 % single pages, but DMA32
/// keeps over half of its free memory in order >= 3 blocks, so the atomic order-3 allocations
/// succeed there and 2.6.36 keeps ~1 % free. Over 24 simulated hours 2.6.36 keeps ~5 % against
/// 2.6.38's ~2.8 %, flat after ~8 hours: DMA32 still serves the order-3 slabs. Simon's kswapd stayed
/// at order 3 because `balance_pgdat` kept going back to `loop_again` over a Normal pinned in every
/// block yet full of file pages (branch `seed001e`); the model's fights end in the order-0 fallback
/// once Normal's file pages are gone, and histories that keep them leave Normal's blocks freeable.
/// At Simon's read rate (his `vmstat 1` bi, branch `seed001f`) Normal ended ~89 % anon under both
/// kernels and 2.6.36's ~220 order-3 runs an hour all ended in that fallback. With the history
/// set to his machine-wide figures (branch `seed001g`: 200 long-lived sessions) Normal keeps his
/// share of anon but ~60 % file pages, a quarter of its order-3 blocks stay freeable, and every
/// order-3 run ends balanced. With the boot memmap, kernel stacks and his long-lived kernel
/// memory in Normal (branch `seed001i`) Normal holds his share of kernel memory and only single
/// free pages, but 43 % file pages and 0.5 % free against his 30 % and 19 %: a sixth of its
/// order-3 blocks stay freeable and every order-3 run still ends balanced.
#[test]
#[ignore = "does not reproduce: with the boot memmap and his kernel memory in Normal (seed001i), over hours 3-6 of 6 simulated hours, swap off, 2.6.36 keeps 1.55 % free and 2.6.38 1.44 %, every order-3 run ending balanced; the 600-s reproduce has no swap-outs with swap on"]
fn full_scale_mailserver_2636_must_shows() {
    let off = full_scale(true);
    let on = full_scale(false);
    let (a, b) = (&off[0], &off[1]);
    let msg = |r: &RunReport| {
        format!(
            "{} swap {}: free {:.2}% pswpout {} Normal order0-1 {:.1}% scan Normal/DMA32 {:.2}",
            r.profile,
            r.params.get("swap").and_then(|v| v.as_str()).unwrap_or("?"),
            metric(r, "memfree_mean_pct"),
            metric(r, "pswpout"),
            metric(r, "normal_free_order01_pct"),
            metric(r, "kswapd_scan_normal_per_dma32"),
        )
    };
    assert!(metric(a, "memfree_mean_pct") >= 25.0, "{}", msg(a));
    assert!(metric(b, "memfree_mean_pct") <= 5.0, "{}", msg(b));
    assert!(metric(&on[0], "pswpout") > 0.0, "{}", msg(&on[0]));
    assert!(metric(&on[0], "pswpout") >= 10.0 * metric(&on[1], "pswpout"), "{} | {}", msg(&on[0]), msg(&on[1]));
    assert!(metric(a, "normal_free_order01_pct") >= 90.0, "{}", msg(a));
    assert!(metric(a, "kswapd_scan_normal_per_dma32") > 1.0, "{}", msg(a));
}

/// Simon's short-lived monitoring processes (`process.monitor`, his "under 3 forks per second"
/// at his 15-day pgfault rate) churn Normal's per-CPU lists until 2.6.36's `__rmqueue_fallback`
/// claims the reserve pageblock for an unmovable refill (a block of it left on the movable lists
/// by a drain, more than half the pageblock free); nothing sets a reserve again, so Normal's
/// free pages between fights are single pages, as his were. Without them the pageblock stays
/// MIGRATE_RESERVE (docs/notes/history/era-2.6.36-38-kswapd.md §38.4: claimed at 43 s; §40.8: over seeds).
#[test]
#[ignore = "full scale: release build, scripts/test-all.sh runs it"]
fn full_scale_mailserver_monitors_claim_normals_reserve_pageblock() {
    use vmlab_core::mmzone::{ZoneType, MIGRATE_RESERVE};
    let opts = vmlab_core::reproduce::ReproduceOpts::default();
    let reserve_blocks = |monitors: u32, seed: u32| {
        let sets = [
            "swap.size=0".to_string(),
            "duration=120s".into(),
            format!("seed={seed}"),
            format!("process.monitor.count={monitors}"),
        ];
        let sc = opts.load(MAILSERVER, &sets).expect("loads");
        let (_, sim) = vmlab_core::api::run(&sc, vmlab_core::api::RunOpts::default()).expect("runs");
        let k = &sim.k;
        let nz = k.zones.iter().position(|z| z.kind == ZoneType::Normal).expect("a Normal zone");
        let z = &k.zones[nz];
        let mut blocks: Vec<usize> = (z.start_pfn..z.end_pfn)
            .map(|p| k.pageblock_of(nz, p))
            .filter(|&b| k.pageblock_mt[b] == MIGRATE_RESERVE as u8)
            .collect();
        blocks.dedup();
        blocks.len()
    };
    // The claim is likely, not certain: whether a history meets the early window that opens it
    // depends on its course (§40.3, §40.8: 2 of seeds 1-6 under 2.6.36 in 600 s, at 42-46 s, and
    // none without the monitors), so count over seeds rather than assert one history's.
    let seeds = 1..=6;
    let kept_without = seeds.clone().filter(|&n| reserve_blocks(0, n) >= 1).count();
    let claimed_with = seeds.filter(|&n| reserve_blocks(1, n) == 0).count();
    assert_eq!(kept_without, 6, "without the monitors Normal keeps its reserve in every history");
    assert!(claimed_with >= 1, "the monitors' churn claims it in some history: {claimed_with} of 6");
}

/// `vmlab reproduce kswapd-high-order --duration 1h`, through the reproduce itself: the four
/// mail-server runs last an hour, Mel's runs keep their length, and every windowed figure is
/// taken over the stated window (its second half). What holds at that length is asserted: 2.6.38 keeps
/// free memory near its watermarks, and 2.6.36 swaps with swap on. What does not: 2.6.36's MemFree
/// rises only after ~6-8 h of the history swap off (docs/notes/history/era-2.6.36-38-kswapd.md
/// §32, §41), both kernels swap at about the same slow rate (§39.3, §40.6), and Normal's free
/// pages stay partly in its MIGRATE_RESERVE pageblock's large blocks while kswapd scans DMA32
/// more than Normal (§36, §41). Those are printed with their figures, not asserted.
#[test]
#[ignore = "full scale, one simulated hour of the mail server: minutes"]
fn full_scale_mailserver_an_hour_through_the_reproduce() {
    let def = vmlab_core::reproduce::find("kswapd-high-order").expect("the seed");
    let opts = vmlab_core::reproduce::ReproduceOpts { duration_s: Some(3600), ..Default::default() };
    let (rep, text) = vmlab_core::reproduce::run(&def, opts).expect("runs");
    assert!(text.contains("steady window: the second half, 1800-3600 s (1800 s to 1 h)"), "{text}");
    let mail = |swap: &str| {
        let runs = crate::common::runs_with(rep.runs.clone(), &[("workload", "mailserver"), ("swap", swap)]);
        assert_eq!(runs.len(), 2, "the mail server swap {swap} under both kernels");
        for r in &runs {
            assert_eq!(r.elapsed_s, 3600.0, "{}", r.profile);
            assert_eq!(r.params.get("window_start_s").and_then(|v| v.as_f64()), Some(1800.0));
            assert_eq!(r.params.get("duration_s").and_then(|v| v.as_u64()), Some(3600));
        }
        runs
    };
    let (off, on) = (mail("off"), mail("on"));
    let postmark = crate::common::runs_with(rep.runs.clone(), &[("workload", "postmark")]);
    assert!(postmark.iter().all(|r| r.elapsed_s < 3600.0 && r.params.get("duration_s").is_none()), "Mel's runs");
    let (a, b) = (&off[0], &off[1]);
    let m = metric;
    // Hold at 1 h.
    assert!(m(b, "memfree_mean_pct") <= 5.0, "2.6.38 swap off MemFree {:.2}%", m(b, "memfree_mean_pct"));
    assert!(m(b, "memfree_mean_pct") > m(b, "high_wmark_sum_pct"), "2.6.38 under its high watermarks");
    // Over the whole run: the window's counters start at 30 min, and the must-show asks for swap-outs
    // in the swap-on regime, not in a window of it.
    assert!(on[0].counter("pswpout") > 0, "2.6.36 swaps with swap on");
    // Not held at 1 h, printed with their figures (the must-shows' bounds in brackets).
    eprintln!(
        "1 h, not held: 2.6.36 swap off MemFree {:.2}% [>= 25]; pswpout 2.6.36 / 2.6.38 swap on {} / {} [>= 10x]; \
         2.6.36 Normal free in order 0-1 {:.1}% [>= 90]; kswapd pgscan Normal / DMA32 {:.3} [> 1]",
        m(a, "memfree_mean_pct"),
        m(&on[0], "pswpout"),
        m(&on[1], "pswpout"),
        m(a, "normal_free_order01_pct"),
        m(a, "kswapd_scan_normal_per_dma32"),
    );
}

/// `--duration` takes the tables' counters over the steady window (from its first sample), as
/// MemFree and the buddy figures: each is at most the run's own counter, and kswapd, which wakes
/// from the first minute, scanned in both halves.
#[test]
fn duration_counts_the_tables_counters_over_the_window() {
    let def = vmlab_core::reproduce::find("kswapd-high-order").expect("the seed");
    let opts = vmlab_core::reproduce::ReproduceOpts { duration_s: Some(120), ..Default::default() };
    let (rep, text) = vmlab_core::reproduce::run(&def, opts).expect("runs");
    assert!(text.contains("counted from the window's first sample"), "{text}");
    let runs = crate::common::runs_with(rep.runs.clone(), &[("workload", "mailserver")]);
    assert_eq!(runs.len(), 4);
    for r in &runs {
        let whole = r.counter("pgscan_kswapd") as f64;
        let window = metric(r, "pgscan_kswapd");
        assert!(
            window > 0.0 && window < whole,
            "{} {:?}: window {window}, run {whole}",
            r.profile,
            r.params.get("swap")
        );
        let zones = metric(r, "pgscan_kswapd_normal") + metric(r, "pgscan_kswapd_dma32");
        assert!(zones <= window, "{}: per-zone {zones} > {window}", r.profile);
    }
    // Mel's runs keep whole-run counters.
    for r in crate::common::runs_with(rep.runs.clone(), &[("workload", "postmark")]) {
        assert_eq!(metric(&r, "pgscan_kswapd"), r.counter("pgscan_kswapd") as f64, "{}", r.profile);
    }
}

/// The 22 Nov 2010 restart (`vars.restart_at`, off by default; Simon Kirby, "Re: Free memory
/// never fully used, swapping", linux-mm, 22 Nov 2010: "restarted dovecot (with old processes
/// left around)"): each daemon leaves an old instance that keeps every page it had and grows no
/// more, beside a new instance that starts at `daemon_heap` and grows; `restart_kill_after` ends
/// the old set ("Killing the old processes"). Swap off, so resident pages are all the pages.
#[test]
fn restart_leaves_the_old_daemons_idle_beside_a_new_set() {
    use vmlab_core::sched::TState;
    let opts = vmlab_core::reproduce::ReproduceOpts::default();
    // (an old instance: forked by a daemon, alive, resident anon pages) for each daemon task.
    let daemons = |extra: &[&str]| {
        let sets: Vec<String> =
            ["swap.size=0", "duration=40s", "vars.daemon_growth=64KiB", "vars.daemon_growth_every=1s"]
                .iter()
                .chain(extra)
                .map(|s| s.to_string())
                .collect();
        let sc = opts.load(MAILSERVER, &sets).expect("loads");
        let (_, sim) = vmlab_core::api::run(&sc, vmlab_core::api::RunOpts::default()).expect("runs");
        let tasks = &sim.s.tasks;
        let is_daemon = |i: usize| tasks[i].name.starts_with("daemon.");
        (0..tasks.len())
            .filter(|&i| is_daemon(i))
            .map(|i| {
                let t = &tasks[i];
                let alive = t.state != TState::Exited;
                let rss = t.mm.filter(|_| alive).map_or(0, |m| sim.k.mm(m).rss_anon);
                (t.parent.is_some_and(is_daemon), alive, rss)
            })
            .collect::<Vec<_>>()
    };
    // 64 MiB at start, 64 KiB a second: 16,384 pages and 16 a step.
    let (heap, step) = (16_384, 16);
    let without = daemons(&[]);
    assert_eq!(without.len(), 3, "{without:?}");
    assert!(without.iter().all(|&(old, alive, rss)| !old && alive && rss >= heap + 38 * step), "{without:?}");

    let with = daemons(&["vars.restart_at=20s"]);
    let old: Vec<_> = with.iter().filter(|d| d.0).collect();
    let new: Vec<_> = with.iter().filter(|d| !d.0).collect();
    assert_eq!((old.len(), new.len()), (3, 3), "{with:?}");
    // The old set holds what it had grown to before the 20th step, and not a page more.
    assert!(old.iter().all(|&&(_, alive, rss)| alive && rss == heap + 19 * step), "{with:?}");
    // The new set started cold at the restart and grew for the ~20 s since.
    assert!(
        new.iter().all(|&&(_, alive, rss)| alive && (heap + 18 * step..=heap + 21 * step).contains(&rss)),
        "{with:?}"
    );

    let killed = daemons(&["vars.restart_at=20s", "vars.restart_kill_after=10s"]);
    assert!(killed.iter().all(|&(old, alive, _)| old != alive), "old set ended, new set running: {killed:?}");
}
