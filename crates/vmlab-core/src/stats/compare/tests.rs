use super::*;
use crate::stats::report::TaskCpu;

/// The first table set of seed 001, verbatim.
const SEED_001: &str = "                                            traceonly          kanyzone
Transactions per second:              156.00 ( 0.00%)   153.00 (-1.96%)
Data megabytes read per second:        21.51 ( 0.00%)    21.52 ( 0.05%)
Data megabytes written per second:     29.28 ( 0.00%)    29.11 (-0.58%)
Files created alone per second:       250.00 ( 0.00%)   416.00 (39.90%)
Files create/transact per second:      79.00 ( 0.00%)    76.00 (-3.95%)
Files deleted alone per second:       520.00 ( 0.00%)   420.00 (-23.81%)
Files delete/transact per second:      79.00 ( 0.00%)    76.00 (-3.95%)

MMTests Statistics: duration
User/Sys Time Running Test (seconds)         16.58      17.4
Total Elapsed Time (seconds)                218.48    222.47

VMstat Reclaim Statistics: vmscan
Direct reclaims                                  0          4
Direct reclaim pages scanned                     0        203
Direct reclaim pages reclaimed                   0        184
Kswapd pages scanned                        326631     322018
Kswapd pages reclaimed                      312632     309784
Kswapd low wmark quickly                         1          4
Kswapd high wmark quickly                      122        475
Kswapd skip congestion_wait                      1          0
Pages activated                             700040     705317
Pages deactivated                           212113     203922
Pages written                                 9875       6363

Total pages scanned                         326631    322221
Total pages reclaimed                       312632    309968
%age total pages scanned/reclaimed          95.71%    96.20%
%age total pages scanned/written             3.02%     1.97%

proc vmstat: Faults
Major Faults                                   300       254
Minor Faults                                645183    660284
Page ins                                    493588    486704
Page outs                                  4960088   4986704
Swap ins                                      1230       661
Swap outs                                     9869      6355
";

fn run(metrics: &[(&str, f64)], counters: &[(&str, u64)], user_s: f64, elapsed_s: f64) -> RunReport {
    let mut r = RunReport { elapsed_s, ..Default::default() };
    for &(k, v) in metrics {
        r.metrics.insert(k, v);
    }
    for &(k, v) in counters {
        r.vmstat.insert(k, v);
    }
    r.tasks.push(TaskCpu { pid: 1, name: "postmark".into(), cpu_s: user_s, cpu_pct: 0.0, kthread: false });
    r.tasks.push(TaskCpu { pid: 2, name: "kswapd0".into(), cpu_s: 99.0, cpu_pct: 0.0, kthread: true });
    r
}

fn seed_runs() -> Vec<(String, RunReport)> {
    const M: [&str; 7] = [
        "transactions_per_s",
        "data_read_mb_per_s",
        "data_written_mb_per_s",
        "files_created_alone_per_s",
        "files_create_transact_per_s",
        "files_deleted_alone_per_s",
        "files_delete_transact_per_s",
    ];
    const C: [&str; 17] = [
        "allocstall",
        "pgscan_direct",
        "pgsteal_direct",
        "pgscan_kswapd",
        "pgsteal_kswapd",
        "kswapd_low_wmark_hit_quickly",
        "kswapd_high_wmark_hit_quickly",
        "kswapd_skip_congestion_wait",
        "pgactivate",
        "pgdeactivate",
        "nr_vmscan_write",
        "pgmajfault",
        "pgfault",
        "pgpgin",
        "pgpgout",
        "pswpin",
        "pswpout",
    ];
    let a_m = [156.0, 21.51, 29.28, 250.0, 79.0, 520.0, 79.0];
    let b_m = [153.0, 21.52, 29.11, 416.0, 76.0, 420.0, 76.0];
    let a_c = [0, 0, 0, 326631, 312632, 1, 122, 1, 700040, 212113, 9875, 300, 645483, 493588, 4960088, 1230, 9869];
    let b_c = [4, 203, 184, 322018, 309784, 4, 475, 0, 705317, 203922, 6363, 254, 660538, 486704, 4986704, 661, 6355];
    let zip_m = |v: [f64; 7]| M.iter().copied().zip(v).collect::<Vec<_>>();
    let zip_c = |v: [u64; 17]| C.iter().copied().zip(v).collect::<Vec<_>>();
    vec![
        ("traceonly".to_string(), run(&zip_m(a_m), &zip_c(a_c), 16.58, 218.48)),
        ("kanyzone".to_string(), run(&zip_m(b_m), &zip_c(b_c), 17.4, 222.47)),
    ]
}

#[test]
fn reproduces_seed_001_layout() {
    assert_eq!(compare(&seed_runs()), SEED_001);
}

#[test]
fn no_metrics_puts_names_above_duration() {
    let runs: Vec<(String, RunReport)> = seed_runs()
        .into_iter()
        .map(|(n, mut r)| {
            r.metrics = Default::default();
            (n, r)
        })
        .collect();
    let out = compare(&runs);
    let mut lines = out.lines();
    assert_eq!(lines.next().unwrap(), format!("{}{:>10}{:>10}", " ".repeat(40), "traceonly", "kanyzone"));
    assert_eq!(lines.next().unwrap(), "MMTests Statistics: duration");
    assert!(out.ends_with(&SEED_001[SEED_001.find("MMTests").unwrap() + 28..]));
}

#[test]
fn zsum_adds_per_zone_counters_and_allocstall_forms() {
    let r = run(&[], &[("allocstall_normal", 3), ("allocstall_dma32", 2), ("pgscan_direct_throttle", 7)], 0.0, 0.0);
    assert_eq!(zsum(&r, "allocstall"), 5);
    assert_eq!(zsum(&r, "pgscan_direct"), 0);
}

#[test]
fn deltas() {
    use DeltaStyle::*;
    assert_eq!(fmt_delta(delta_pct(250.0, 416.0, Mmtests2010)), "(39.90%)");
    assert_eq!(fmt_delta(delta_pct(250.0, 416.0, Relative)), "(66.40%)");
    assert_eq!(fmt_delta(delta_pct(0.0, 0.0, Relative)), "( 0.00%)");
    assert_eq!(fmt_delta(delta_pct(0.0, 5.0, Relative)), "(  inf%)");
    assert_eq!(fmt_delta(delta_pct(5.0, 0.0, Mmtests2010)), "( -inf%)");
    assert_eq!(fmt_delta(delta_pct(0.0, 5.0, Mmtests2010)), "(100.00%)");
}

#[test]
fn stat_deltas_missing_metrics_and_wide_names() {
    let mut runs = seed_runs();
    runs[1].1.metrics.insert("my_metric", 1.5);
    runs[0].0 = "a-very-long-column-name".into();
    let out = compare_with(&runs, &CompareOpts { delta: DeltaStyle::Relative, stat_deltas: true });
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("{}{:>24}{:>18}", " ".repeat(35), "a-very-long-column-name", "kanyzone"));
    assert_eq!(lines[8], format!("{:<35}{:>15} (   n/a){:>9} (   n/a)", "my_metric:", "-", "1.50"));
    assert!(
        out.contains("\nDirect reclaims                                  0 ( 0.00%)          4 (  inf%)\n"),
        "{out}"
    );
    assert!(
        out.contains("\nKswapd skip congestion_wait                      1 ( 0.00%)          0 (-100.00%)\n"),
        "{out}"
    );
    assert!(
        out.contains("\nSwap outs                                     9869 ( 0.00%)      6355 (-35.61%)\n"),
        "{out}"
    );
}

#[test]
fn empty_and_single() {
    assert_eq!(compare(&[]), "");
    let one = compare(&seed_runs()[..1]);
    assert!(one.starts_with("                                            traceonly\nTransactions per second:              156.00 ( 0.00%)\n"));
}
