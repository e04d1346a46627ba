//! Seed 001 (kswapd-high-order): 2.6.36 vs 2.6.38 kswapd under order-3 atomic allocations.
//!
//! The scenario is scaled to a quarter (1 GiB machine with the same DMA/DMA32/Normal shape, a
//! quarter of the files, transactions, anonymous reader and network rate) so a debug build runs
//! it in well under a minute; that the effects survive the scaling is part of the test.

use std::path::PathBuf;

use vmlab_core::reproduce::kswapd_high_order::{memfree_mean_pct, run_pair, POSTMARK, PROFILES};
use vmlab_core::stats::report::RunReport;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The seed scenario with its sizes divided by four.
fn scaled_scenario() -> String {
    let text = std::fs::read_to_string(root().join("scenarios/seeds/kswapd-high-order.toml")).expect("scenario");
    let subs = [
        (
            "zones = { DMA = \"16MiB\", DMA32 = \"3GiB\", Normal = \"1GiB\" }",
            "zones = { DMA = \"16MiB\", DMA32 = \"768MiB\", Normal = \"256MiB\" }",
        ),
        ("memory = \"4GiB\"", "memory = \"1GiB\""),
        ("let nfiles = 600000", "let nfiles = 150000"),
        ("let ntx = 1000000", "let ntx = 250000"),
        ("let blocks = 16", "let blocks = 4"),
        ("rate = \"2000/s\"", "rate = \"500/s\""),
        ("touch area write rate=60000", "touch area write rate=15000"),
    ];
    let mut s = text;
    for (a, b) in subs {
        assert!(s.contains(a), "the seed scenario no longer contains `{a}`");
        s = s.replace(a, b);
    }
    s
}

fn run(profile: &str) -> (RunReport, vmlab_core::sim::Sim) {
    let text = scaled_scenario();
    let sc = vmlab_core::workload::load_scenario_str("kswapd-high-order-scaled.toml", &text, &[]).expect("loads");
    let o = vmlab_core::api::RunOpts { profile: Some(profile), ..Default::default() };
    vmlab_core::api::run(&sc, o).expect("runs")
}

fn high_wmark_pct(sim: &vmlab_core::sim::Sim) -> f64 {
    let total: u64 = sim.k.zones.iter().map(|z| z.managed).sum();
    let high: u64 = sim.k.zones.iter().map(|z| z.high_wmark()).sum();
    high as f64 * 100.0 / total as f64
}

#[test]
fn kswapd_2638_reclaims_less_and_leaves_less_free_memory() {
    let (a, sa) = run(PROFILES[0]);
    let (b, sb) = run(PROFILES[1]);
    let (fa, fb) = (memfree_mean_pct(&a), memfree_mean_pct(&b));
    let scan = |r: &RunReport| r.counter("pgscan_kswapd");
    let hq = |r: &RunReport| r.counter("kswapd_high_wmark_hit_quickly");
    let msg = format!(
        "2.6.36: free {fa:.2}% scanned {} hq {} | 2.6.38: free {fb:.2}% scanned {} hq {} | high wmarks {:.2}%",
        scan(&a),
        hq(&a),
        scan(&b),
        hq(&b),
        high_wmark_pct(&sb)
    );
    // The order-3 wakeups happened in both kernels, and both kswapds balanced at order 3.
    for s in [&sa, &sb] {
        let d = s.k.reclaim.split2636_kswapd(0).expect("the 2.6.36/38 engine runs");
        assert!(d.high_order_wakeups > 0 && d.balance_runs[1] > 0, "no order-3 kswapd activity: {msg}");
    }
    // 2.6.38 stops high-order balancing once a quarter of the node is balanced.
    assert!(fb < fa, "2.6.38 should leave less memory free than 2.6.36: {msg}");
    assert!(fb <= 10.0, "2.6.38 MemFree above 10 %: {msg}");
    assert!(fb > high_wmark_pct(&sb), "2.6.38 MemFree under the sum of the high watermarks: {msg}");
    assert!(scan(&b) <= scan(&a), "2.6.38 kswapd should scan no more than 2.6.36: {msg}");
    // The backwards sleeping_prematurely of 2.6.38 counts a balanced node as "hit quickly".
    assert!(hq(&b) > hq(&a), "2.6.38 should count more kswapd_high_wmark_hit_quickly: {msg}");
    let _ = sa;
}

#[test]
fn runs_are_deterministic() {
    let (a, _) = run(PROFILES[1]);
    let (b, _) = run(PROFILES[1]);
    assert_eq!(a.with_wall_s_zeroed().to_json_string(), b.with_wall_s_zeroed().to_json_string());
}

/// The seed's own scale (4 GiB, the scenario as written), postmark under both kernels.
/// The postmark pair at full scale: the reproduce's own runs when the suite has them.
fn full_scale_postmark() -> Vec<RunReport> {
    if let Some(runs) = crate::common::suite_reproduce_runs("kswapd-high-order") {
        let runs = crate::common::runs_with(runs, &[("workload", "postmark")]);
        assert_eq!(runs.len(), PROFILES.len(), "the reproduce's postmark runs");
        return runs;
    }
    let opts = vmlab_core::reproduce::ReproduceOpts::default();
    run_pair(&opts, POSTMARK, "postmark").expect("runs")
}

fn metric(r: &RunReport, k: &str) -> f64 {
    r.metrics.get(k).copied().unwrap_or(f64::NAN)
}

/// After side at full scale: 2.6.38 free memory near the high watermarks, kswapd scanning less
/// than 2.6.36 and compacting DMA32 (5a03b051) into more free order-3 blocks. Before kswapd
/// compaction was modelled this test also asked for more "high wmark hit quickly" (2.6.38's
/// inverted sleep check, afc7e326); with it kswapd's order-3 runs halve and the count is
/// 195 against 2.6.36's 208 (session 16), so that comparison no longer describes the row.
#[test]
#[ignore = "full scale: release build, scripts/test-all.sh runs it"]
fn full_scale_2638_settles_near_the_high_watermarks() {
    let runs = full_scale_postmark();
    let (a, b) = (&runs[0], &runs[1]);
    let msg = format!(
        "2.6.36 free {:.2}% scanned {} hq {} | 2.6.38 free {:.2}% scanned {} hq {} | high wmarks {:.2}%",
        metric(a, "memfree_mean_pct"),
        metric(a, "pgscan_kswapd"),
        metric(a, "kswapd_high_wmark_hit_quickly"),
        metric(b, "memfree_mean_pct"),
        metric(b, "pgscan_kswapd"),
        metric(b, "kswapd_high_wmark_hit_quickly"),
        metric(b, "high_wmark_sum_pct"),
    );
    assert!(metric(b, "memfree_mean_pct") <= 10.0, "{msg}");
    assert!(metric(b, "memfree_mean_pct") > metric(b, "high_wmark_sum_pct"), "{msg}");
    assert!(metric(b, "pgscan_kswapd") < metric(a, "pgscan_kswapd"), "{msg}");
    let moved = |r: &RunReport| r.counters.get("compact_pages_moved").copied().unwrap_or(0);
    assert!(moved(b) > 0 && moved(a) == 0, "compact_pages_moved {} / {} | {msg}", moved(a), moved(b));
    assert!(metric(b, "dma32_free_order3plus_pct") > metric(a, "dma32_free_order3plus_pct"), "{msg}");
}

/// The seed's headline — 2.6.36 servers keeping ~1.5 GB of 4 GB free, and swapping, with 2.6.38
/// swapping less — does not come out of this workload yet (see the seed-001 report): 2.6.36's
/// order-3 kswapd runs end as soon as the Normal zone passes its order-3 watermark, because the
/// memory reclaim frees coalesces into order-3 blocks far more than on the reporter's servers.
#[test]
#[ignore = "does not reproduce yet: 2.6.36 MemFree stays ~1 %, no swap-outs"]
fn full_scale_2636_keeps_a_quarter_of_memory_free_and_swaps() {
    let runs = full_scale_postmark();
    let (a, b) = (&runs[0], &runs[1]);
    assert!(metric(a, "memfree_mean_pct") >= 25.0, "2.6.36 MemFree {:.2}%", metric(a, "memfree_mean_pct"));
    assert!(metric(a, "pswpout") > 0.0, "2.6.36 did not swap");
    assert!(metric(b, "pswpout") < metric(a, "pswpout"), "2.6.38 swapped no less than 2.6.36");
}

/// Bursty receive traffic with a slow socket reader: packets arrive only during the `on` part
/// of each period, and the reader frees them one at a time at its own rate, so the slabs of a
/// burst stay allocated well after it (a receive queue), then all go back.
#[test]
fn netrx_bursts_pile_up_in_the_receive_queue_and_drain() {
    let text = r#"
name = "netrx-bursts"
seed = 3
duration = "5s"
[machine]
memory = "256MiB"
cpus = 2
[[netrx]]
rate = "2000/s"
order = 3
lifetime = "10ms"
on = "500ms"
off = "2500ms"
drain = "1000/s"
[[process]]
name = "idle"
program = '''
sleep 5s
'''
"#;
    let sc = vmlab_core::workload::load_scenario_str("netrx-bursts.toml", text, &[]).expect("loads");
    let o = vmlab_core::api::RunOpts { profile: Some("linux-2.6.36"), ..Default::default() };
    let (_, sim) = vmlab_core::api::run(&sc, o).expect("runs");
    let src = &sim.netrx[0];
    // Two bursts of 0.5 s at 2000/s: about 2,000 arrivals (Poisson), none in the silences.
    assert!((1700..2300).contains(&src.arrivals), "arrivals {}", src.arrivals);
    assert_eq!(src.failed, 0);
    // Each burst's ~1,000 packets take the reader ~1 s at 1000/s: the second burst (3 to 3.5 s)
    // is consumed by ~4 s, half a second after it ended, not 10 ms after.
    assert!(src.last_free > 3_800_000_000 && src.last_free < 4_300_000_000, "last free at {} ns", src.last_free);
    assert!(src.live.is_empty(), "{} packets still queued", src.live.len());

    let bad = text.replace("off = \"2500ms\"\n", "");
    // The loader finds it, at the value's position.
    let err = vmlab_core::workload::load_scenario_str("netrx-bursts.toml", &bad, &[]).expect_err("`on` alone");
    let msg = err.to_string();
    assert!(msg.starts_with("netrx-bursts.toml:") && msg.contains("go together"), "{msg}");
}

/// The MMTests-faithful variant (not run by `reproduce`; see
/// docs/notes/history/era-2.6.36-38-kswapd.md §13) stays a valid scenario with MMTests'
/// postmark parameters and the --consume-memory reader.
#[test]
fn mmtests_variant_loads() {
    let path = root().join("scenarios/seeds/kswapd-high-order-mmtests.toml");
    let text = std::fs::read_to_string(&path).expect("scenario");
    for a in ["let nfiles = 5000", "let minsz = 5K", "let maxsz = 512K", "let ntx = 30000", "let blk = 256M"] {
        assert!(text.contains(a), "the MMTests variant no longer contains `{a}`");
    }
    let sc = vmlab_core::workload::load_scenario(&path, &[]).expect("loads");
    assert_eq!(sc.processes.len(), 2);
}
