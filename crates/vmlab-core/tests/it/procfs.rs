//! Each era's own /proc files: names and order from the release's source, only counters whose
//! mechanism is modelled, and the value fixes of issue 18 (AnonPages, cs, 2.4.9's reclaim_page).

use vmlab_core::api::{self, RunOpts};
use vmlab_core::sim::Sim;
use vmlab_core::stats::procfs::{all_vmstat_names, tables};
use vmlab_core::stats::report::RunReport;

/// Anonymous memory 1.5x RAM, written twice: swap-out and swap-in under every engine. The
/// process exits with pages still in the swap cache.
const SWAPPY: &str = r#"
[machine]
memory = "128MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "512MiB"
disk = "sda"

[[process]]
name = "hog"
program = '''
mmap heap anon 192MiB
touch heap write
touch heap write
'''
"#;

fn run(profile: &str) -> (RunReport, Sim) {
    let sc = vmlab_core::workload::load_scenario_str("swappy.toml", SWAPPY, &[]).expect("loads");
    api::run(&sc, RunOpts { profile: Some(profile), ..Default::default() }).expect("runs")
}

fn file<'a>(files: &'a [(&str, String)], name: &str) -> Option<&'a str> {
    files.iter().find(|(n, _)| *n == name).map(|(_, t)| t.as_str())
}

fn names(text: &str) -> Vec<String> {
    text.lines().map(|l| l.split([' ', ':']).next().unwrap_or("").to_string()).collect()
}

/// `sub` appears in `full` in the same order (each name once).
fn in_order(sub: &[String], full: &[String]) -> Result<(), String> {
    let mut at = 0;
    for n in sub {
        match full[at..].iter().position(|x| x == n) {
            Some(i) => at += i + 1,
            None => return Err(format!("`{n}` out of order or not in the release's list")),
        }
    }
    Ok(())
}

#[test]
fn vmstat_6_8_keeps_the_kernel_order_of_a_recorded_6_x_file() {
    // The name column of a 6.18 host's /proc/vmstat. Between 6.8 and 6.18 the only reordering
    // among names both have is pgdemote_*: vm events in 6.8, per-node stats since 6.10
    // (Li Zhijian, "mm/vmstat: move pgdemote_* to per-node stats", linux-mm, 2024).
    let host: Vec<String> = include_str!("../data/vmstat-names-6.18-host.txt").lines().map(str::to_string).collect();
    let ours = all_vmstat_names(tables::VMSTAT_6_8);
    let moved = |n: &str| n.starts_with("pgdemote_");
    let common: Vec<String> = ours.iter().filter(|n| host.contains(n) && !moved(n)).cloned().collect();
    let host_common: Vec<String> = host.iter().filter(|n| common.contains(n)).cloned().collect();
    assert_eq!(common, host_common, "6.8's table and the recorded 6.x file disagree on order");
    // Almost every 6.8 name is still there: the rest are config-dependent or removed later.
    let gone: Vec<&String> = ours.iter().filter(|n| !host.contains(n)).collect();
    assert!(gone.len() <= 10, "names not in the 6.x recording: {gone:?}");
    assert!(common.len() > 150, "{} names in common", common.len());
}

#[test]
fn each_era_prints_its_own_files_in_its_own_order() {
    let (r24, s24) = run("linux-2.4.9");
    let (r68, s68) = run("linux-6.8");
    let (r36, s36) = run("linux-2.6.36");
    let (f24, f68, f36) = (s24.proc_files(), s68.proc_files(), s36.proc_files());
    // 2.4 has no /proc/vmstat; its paging counters are /proc/stat's page and swap lines.
    assert!(file(&f24, "vmstat").is_none() && r24.vmstat.is_empty());
    let stat24 = file(&f24, "stat").unwrap();
    let line = |p: &str| stat24.lines().find(|l| l.starts_with(p)).unwrap_or_default().to_string();
    assert_eq!(line("page "), format!("page {} {}", r24.counter("pgpgin"), r24.counter("pgpgout")));
    assert_eq!(line("swap "), format!("swap {} {}", r24.counter("pswpin"), r24.counter("pswpout")));
    assert!(r24.counter("pswpout") > 0);
    assert!(!file(&f68, "stat").unwrap().contains("\npage "));

    let m24 = names(file(&f24, "meminfo").unwrap());
    let m68 = names(file(&f68, "meminfo").unwrap());
    for n in ["Inact_dirty", "Inact_clean", "Inact_target", "MemShared"] {
        assert!(m24.iter().any(|x| x == n) && !m68.iter().any(|x| x == n), "{n}");
    }
    assert!(m68.iter().any(|x| x == "MemAvailable") && !m24.iter().any(|x| x == "MemAvailable"));
    // 2.4's table in bytes comes first, and its labels are 14 wide.
    assert!(file(&f24, "meminfo").unwrap().starts_with("        total:    used:    free:"));
    assert!(file(&f24, "meminfo").unwrap().contains("\nMemTotal:      "));
    assert!(file(&f68, "meminfo").unwrap().starts_with("MemTotal:        "));
    let lines24: Vec<String> = tables::LINUX_2_4_9.meminfo.lines.iter().map(|l| l.0.to_string()).collect();
    in_order(&m24[3..], &lines24).unwrap();
    let lines68: Vec<String> = tables::LINUX_6_8.meminfo.lines.iter().map(|l| l.0.to_string()).collect();
    in_order(&m68, &lines68).unwrap();

    let v68 = names(file(&f68, "vmstat").unwrap());
    let v36 = names(file(&f36, "vmstat").unwrap());
    in_order(&v68, &all_vmstat_names(tables::VMSTAT_6_8)).unwrap();
    in_order(&v36, &all_vmstat_names(tables::VMSTAT_2_6_36)).unwrap();
    // 2.6's per-zone reclaim counters and kswapd_steal; 6.x's allocstall per zone.
    assert!(v36.iter().any(|n| n == "kswapd_steal") && v36.iter().any(|n| n.starts_with("pgscan_kswapd_")));
    assert!(!v68.iter().any(|n| n == "allocstall" || n == "kswapd_skip_congestion_wait"));
    assert!(v68.iter().any(|n| n.starts_with("allocstall_")));
    // The JSON carries the same files, and the era-independent counters beside them.
    assert_eq!(r68.vmstat.iter().map(|(k, _)| k.to_string()).collect::<Vec<_>>(), v68);
    assert_eq!(
        r36.counter("pgscan_kswapd"),
        r36.vmstat.iter().filter(|(k, _)| k.starts_with("pgscan_kswapd_")).map(|(_, v)| v).sum::<u64>()
    );
    let steal36: u64 = r36.vmstat.iter().filter(|(k, _)| k.starts_with("pgsteal_")).map(|(_, v)| v).sum();
    assert_eq!(steal36, r36.counter("pgsteal_kswapd") + r36.counter("pgsteal_direct"));
    // Zeros are printed: the file is whole.
    assert!(file(&f68, "vmstat").unwrap().lines().any(|l| l.ends_with(" 0")));
}

#[test]
fn counters_without_a_mechanism_are_not_printed() {
    for p in ["linux-6.8", "linux-2.6.36", "linux-2.6.38", "linux-2.6.26"] {
        let (r, sim) = run(p);
        // Rows that compact (`compaction.rs`) print 2.6.36's compact_* counters; the rest none.
        let compacts = vmlab_core::vmscan::has_compaction(&sim.k.profile);
        assert_eq!(r.vmstat.iter().any(|(k, _)| k == "compact_stall"), compacts, "{p}: compact_stall printed");
        for (k, _) in r.vmstat.iter() {
            assert!(
                !((k.starts_with("compact_") && !compacts)
                    || k.starts_with("thp_")
                    || k.starts_with("pgmigrate_")
                    || k.starts_with("numa_")),
                "{p} prints {k}, which nothing in vmlab counts"
            );
        }
    }
}

#[test]
fn anon_pages_leaves_out_swap_cache_no_process_maps() {
    let (r, _) = run("linux-6.8");
    assert!(r.meminfo.get("SwapCached").copied().unwrap_or(0) > 0, "the run ends with swap cache");
    assert_eq!(r.meminfo.get("AnonPages"), Some(&0), "the only process has exited");
    assert_eq!(r.counter("nr_anon_pages"), 0);
}

#[test]
fn reclaim_page_is_not_direct_reclaim_in_2_4_9() {
    let (r, sim) = run("linux-2.4.9");
    let taken = sim.k.reclaim.riel24_stats().unwrap().reclaim_page;
    assert!(taken > 0, "allocations took pages off inactive_clean");
    if r.counter("allocstall") == 0 {
        assert_eq!(r.counter("pgsteal_direct"), 0, "no direct reclaim ran, so none stole pages");
    }
    assert!(r.counter("pgsteal_direct") < taken, "reclaim_page's pages are not counted as direct reclaim");
}

#[test]
fn context_switches_count_the_idle_task() {
    // One task faulting pages back from swap: every wait for the disk switches its CPU to the
    // idle task and back, so `ctxt` grows with the waits, not only with task-to-task switches.
    let (r, sim) = run("linux-6.8");
    let stat = file(&sim.proc_files(), "stat").unwrap().to_string();
    let ctxt: u64 = stat.lines().find_map(|l| l.strip_prefix("ctxt ")).unwrap().parse().unwrap();
    let waits = r.counter("pgmajfault");
    assert!(waits > 1000, "{waits} major faults");
    assert!(ctxt >= waits / 4, "ctxt {ctxt} for {waits} major faults");
    let cs: u64 = r.timeline.iter().map(|s| s.cs).sum();
    assert!(cs > 0);
}
