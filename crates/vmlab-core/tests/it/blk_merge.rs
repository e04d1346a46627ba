//! 6.8's request path (blk.rs): requests wait in the I/O scheduler for a driver tag beyond the
//! device's queue depth and merge there with adjacent ones. One reader never finds a request
//! waiting; threads reading adjacent files of a tree do, so requests grow with concurrency — on
//! a shallow queue, not on a deep one — and 2.6.26, without blk-mq, merges nothing.

use vmlab_core::api::{self, RunOpts};

const SCENARIO: &str = include_str!("../../../../scenarios/real/mmap-sem-job.toml");

/// (elapsed s, requests after merging, mean request KiB, merges) of the job at `threads`.
fn job(threads: u32, sets: &[&str]) -> (f64, u64, f64, u64) {
    let mut all: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    all.push(format!("vars.threads={threads}"));
    // A smaller tree keeps the test quick; the files keep their mean size.
    all.push("filetree.0.total=64MiB".into());
    all.push("vars.files=409".into());
    let sc = vmlab_core::workload::load_scenario_str("mmap-sem-job.toml", SCENARIO, &all).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    let st = sim.k.disks[0].stat();
    let requests = st.read_ios;
    let mark = |n: &str| r.metrics.get(n).copied().expect("marks");
    let elapsed = mark("done") - mark("start");
    (elapsed, requests, st.read_sectors as f64 / 2.0 / requests.max(1) as f64, st.read_merges)
}

const SHALLOW: &[&str] = &["disk.0.spindles=1", "disk.0.queue_depth=2"];

#[test]
fn requests_grow_with_readers_on_a_shallow_queue() {
    let one = job(1, SHALLOW);
    let many = job(16, SHALLOW);
    eprintln!("1 thread {one:?}, 16 threads {many:?}");
    assert_eq!(one.3, 0, "a lone reader has nothing queued to merge into: {one:?}");
    assert!(many.3 > 0, "16 readers of adjacent files merge: {many:?}");
    assert!(many.2 > 1.2 * one.2, "mean request grows: {one:?} -> {many:?}");
    assert!(many.0 < one.0, "and the job is faster: {one:?} -> {many:?}");
}

#[test]
fn a_deep_queue_dispatches_at_once_and_merges_nothing() {
    let many = job(16, &["disk.0.spindles=1", "disk.0.queue_depth=64"]);
    assert_eq!(many.3, 0, "{many:?}");
}

/// A virtio ring without indirect descriptors bounds the requests in flight by their segments
/// (each takes its segments plus two descriptors) where the tags do not: those waiting merge.
#[test]
fn a_small_virtio_ring_holds_requests_back_where_the_tags_do_not() {
    let deep = ["disk.0.spindles=1", "disk.0.queue_depth=64"];
    let free = job(16, &deep);
    let mut ringed = deep.to_vec();
    ringed.push("disk.0.ring_descriptors=12");
    let held = job(16, &ringed);
    assert_eq!(free.3, 0, "{free:?}");
    assert!(held.3 > 0 && held.2 > free.2, "{free:?} -> {held:?}");
    // A ring as large as the tags' needs (64 one-segment requests: 192) changes nothing.
    let mut roomy = deep.to_vec();
    roomy.push("disk.0.ring_descriptors=192");
    assert_eq!(job(16, &roomy), free);
}

#[test]
fn profiles_without_blk_mq_do_not_merge() {
    let mut sets = SHALLOW.to_vec();
    sets.push("profile=linux-2.6.26");
    let many = job(16, &sets);
    assert_eq!(many.3, 0, "{many:?}");
    let mut sets = SHALLOW.to_vec();
    sets.push("reclaim.blk_mq=false");
    assert_eq!(job(16, &sets).3, 0);
}

/// The report carries the disk's `/sys/block/DEV/stat` fields: requests after merging, so the
/// merged bios plus the requests are the submissions.
#[test]
fn the_report_counts_requests_and_merges_as_sys_block_stat() {
    let mut all: Vec<String> = SHALLOW.iter().map(|s| s.to_string()).collect();
    all.extend(["vars.threads=16".into(), "filetree.0.total=64MiB".into(), "vars.files=409".into()]);
    let sc = vmlab_core::workload::load_scenario_str("mmap-sem-job.toml", SCENARIO, &all).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    assert_eq!(r.disks.len(), 1, "{:?}", r.disks);
    let st = r.disks[0].stat;
    assert_eq!(st, sim.k.disks[0].stat());
    assert!(st.read_merges > 0 && st.read_ios > 0, "{st:?}");
    assert_eq!(st.read_sectors * 512, sim.k.disks[0].bytes_read());
    // 2.6.26 has no request queue model: no disks table.
    let mut old = all.clone();
    old.push("profile=linux-2.6.26".into());
    let sc = vmlab_core::workload::load_scenario_str("mmap-sem-job.toml", SCENARIO, &old).expect("loads");
    assert!(api::run(&sc, RunOpts::default()).expect("runs").0.disks.is_empty());
}

#[test]
fn merged_requests_respect_max_sectors_kb() {
    let mut sets = SHALLOW.to_vec();
    sets.push("vm.max_sectors_kb=64");
    let (_, _, mean, merges) = job(16, &sets);
    assert!(mean <= 64.0, "mean request {mean} KiB with 64 KiB max_sectors_kb ({merges} merges)");
}

/// The full job's curve for docs/REAL.md: `VMLAB_JOB_SETS="k=v k=v"` adds sets (the host's disk,
/// readahead). Prints only.
#[test]
#[ignore]
fn print_job_curve() {
    let extra = std::env::var("VMLAB_JOB_SETS").unwrap_or_default();
    for t in [1, 2, 4, 8, 16] {
        let mut all: Vec<String> = extra.split_whitespace().map(|s| s.to_string()).collect();
        all.push(format!("vars.threads={t}"));
        let sc = vmlab_core::workload::load_scenario_str("mmap-sem-job.toml", SCENARIO, &all).expect("loads");
        let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
        let st = sim.k.disks[0].stat();
        let mark = |n: &str| r.metrics.get(n).copied().expect("marks");
        let requests = st.read_ios;
        let cpu: f64 = r.tasks.iter().filter(|x| !x.kthread).map(|x| x.cpu_s).sum();
        eprintln!(
            "threads {t:2}: elapsed {:.3} s, requests {requests}, mean {:.1} KiB, merges {}, task CPU {cpu:.3} s",
            mark("done") - mark("start"),
            st.read_sectors as f64 / 2.0 / requests.max(1) as f64,
            st.read_merges
        );
    }
}
