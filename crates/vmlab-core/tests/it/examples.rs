//! The example scenarios: each runs, its JSON honours the vmlab.run/1 contract, and each shows
//! the behaviour it exists to show. Runs are deterministic.

use std::path::PathBuf;

use vmlab_core::api::{self, RunOpts};
use vmlab_core::sim::Sim;
use vmlab_core::stats::report::RunReport;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(name: &str, sets: &[&str]) -> (RunReport, Sim) {
    let path = root().join("scenarios/examples").join(format!("{name}.toml"));
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario(&path, &sets).expect("example loads");
    api::run(&sc, RunOpts::default()).expect("example runs")
}

fn counter(r: &RunReport, name: &str) -> u64 {
    r.counter(name)
}

fn check_contract(r: &RunReport) {
    let v = serde_json::to_value(r).expect("serialises");
    for key in [
        "schema",
        "scenario",
        "profile",
        "seed",
        "machine",
        "elapsed_s",
        "vmstat",
        "meminfo",
        "timeline",
        "tasks",
        "kernel_profile",
        "metrics",
        "events",
        "wall_s",
    ] {
        assert!(v.get(key).is_some(), "JSON lacks `{key}`");
    }
    assert_eq!(v["schema"], "vmlab.run/1");
    for key in ["memory_bytes", "cpus", "nodes"] {
        assert!(v["machine"].get(key).is_some(), "machine lacks `{key}`");
    }
    let tl = v["timeline"].as_array().expect("timeline is an array");
    assert!(!tl.is_empty(), "no timeline samples");
    for key in ["t_s", "free_kb", "cached_kb", "swap_used_kb", "si", "so", "bi", "bo", "us", "sy", "id", "wa", "r", "b"]
    {
        assert!(tl[0].get(key).is_some(), "timeline sample lacks `{key}`");
    }
    let tasks = v["tasks"].as_array().expect("tasks");
    assert!(tasks.iter().all(|t| t.get("name").is_some() && t.get("cpu_s").is_some() && t.get("cpu_pct").is_some()));
    let kp = v["kernel_profile"].as_array().expect("kernel_profile");
    assert!(kp.iter().all(|t| t.get("function").is_some() && t.get("cpu_s").is_some()));
    assert!(v["vmstat"].get("pgfault").is_some() && v["meminfo"].get("MemTotal").is_some());
    assert!(r.events > 0);
    // Reclaim can only steal what it scanned.
    for (steal, scan) in [
        ("pgsteal_kswapd", "pgscan_kswapd"),
        ("pgsteal_direct", "pgscan_direct"),
        ("pgsteal_anon", "pgscan_anon"),
        ("pgsteal_file", "pgscan_file"),
    ] {
        assert!(counter(r, steal) <= counter(r, scan), "{steal} {} > {scan} {}", counter(r, steal), counter(r, scan));
    }
}

#[test]
fn anon_overcommit_swaps_out_and_back_in() {
    let (r, sim) = run("anon-overcommit", &[]);
    check_contract(&r);
    assert!(counter(&r, "pswpout") > 100_000, "pswpout {}", counter(&r, "pswpout"));
    assert!(counter(&r, "pswpin") > 100_000, "pswpin {}", counter(&r, "pswpin"));
    // 6.8's VMA swap readahead on the sequential second pass: the host's 6.18 kernel read
    // 393,223 pages in 49,157 major faults (docs/REAL.md).
    let (maj, pswpin) = (counter(&r, "pgmajfault"), counter(&r, "pswpin"));
    assert!(maj * 7 < pswpin && pswpin <= maj * 8, "pgmajfault {maj} for pswpin {pswpin}");
    assert!(r.timeline.iter().any(|s| s.so > 0), "the timeline never shows swap-out");
    assert_eq!(counter(&r, "oom_kill"), 0);
    sim.k.check_frames().expect("frames consistent at the end");
}

#[test]
fn zipf_file_working_set_refaults() {
    let (r, sim) = run("zipf-file", &["machine.memory=512MiB"]);
    check_contract(&r);
    assert!(counter(&r, "workingset_refault_file") > 1000, "refaults {}", counter(&r, "workingset_refault_file"));
    assert!(counter(&r, "pgmajfault") > counter(&r, "workingset_refault_file") / 4);
    sim.k.check_frames().expect("frames consistent at the end");
}

#[test]
fn stream_does_not_evict_the_hot_set() {
    let (r, sim) = run("stream-hotset", &[]);
    check_contract(&r);
    let hot = sim.k.file_ids["hot"] as usize;
    let stream = sim.k.file_ids["stream"] as usize;
    let hot_f = &sim.k.files[hot];
    assert!(
        hot_f.nrpages * 100 >= hot_f.npages() * 95,
        "hot set resident: {} of {} pages",
        hot_f.nrpages,
        hot_f.npages()
    );
    let st = &sim.k.files[stream];
    assert!(
        st.nrpages * 2 < st.npages(),
        "the stream should have been reclaimed: {} of {} cached",
        st.nrpages,
        st.npages()
    );
    assert!(counter(&r, "pgsteal_file") > 500_000);
    sim.k.check_frames().expect("frames consistent at the end");
}

#[test]
fn runs_are_deterministic() {
    let (a, _) = run("anon-overcommit", &["machine.memory=512MiB"]);
    let (b, _) = run("anon-overcommit", &["machine.memory=512MiB"]);
    let (a, b) = (a.with_wall_s_zeroed().to_json_string(), b.with_wall_s_zeroed().to_json_string());
    assert!(a == b, "two runs of one scenario and seed differ");
    let (c, _) = run("anon-overcommit", &["machine.memory=512MiB", "seed=2"]);
    assert_eq!(c.seed, 2);
}

#[test]
fn changing_memory_changes_the_outcome_physically() {
    // More memory than the workload needs: no swapping at all.
    let (r, _) = run("anon-overcommit", &["machine.memory=4GiB"]);
    assert_eq!(counter(&r, "pswpout"), 0, "4 GiB holds a 1.5 GiB heap without swapping");
    assert_eq!(counter(&r, "allocstall"), 0);
}
