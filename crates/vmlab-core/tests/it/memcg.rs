//! Memory cgroups on a machine larger than the groups' limits: limit reclaim counts as the kernel
//! counts it (pgscan_anon/file and the group's memory.stat, not kswapd or direct reclaim in
//! /proc/vmstat), `memory.high` throttles, `memory.low` protects a sibling, the memcg OOM killer
//! kills inside the group only, and a profile without memcg refuses `[[cgroup]]` at its name.

use vmlab_core::api::{self, RunOpts};
use vmlab_core::stats::memcg_fmt::CgroupReport;
use vmlab_core::stats::report::RunReport;

fn run(text: &str, sets: &[&str]) -> RunReport {
    crate::common::run_checked("memcg.toml", text, sets)
}

fn group<'a>(r: &'a RunReport, name: &str) -> &'a CgroupReport {
    r.cgroups.iter().find(|g| g.name == name).expect("group reported")
}

/// A file read twice in a group whose limit is a quarter of the file, on a machine with room
/// for all of it: only the group's limit can make it reclaim.
const LIMIT: &str = r#"
[machine]
memory = "1GiB"
cpus = 2

[[file]]
name = "data"
size = "256MiB"

[[cgroup]]
name = "job"
limit_in_bytes = "64MiB"

[[process]]
name = "reader"
cgroup = "job"
program = '''
read data
read data
'''
"#;

#[test]
fn limit_reclaim_counts_as_the_kernel_counts_it() {
    let r = run(LIMIT, &[]);
    let g = group(&r, "job");
    let file = r.counter("pgscan_file");
    assert!(file > 100_000, "two passes over 64 Ki pages through a 16 Ki page limit scan ≥ 100 k: {file}");
    assert_eq!(r.counter("pgscan_kswapd"), 0, "the machine has room: kswapd never runs");
    assert_eq!(r.counter("pgscan_direct"), 0, "limit reclaim is not direct reclaim in /proc/vmstat");
    assert_eq!(r.counter("allocstall"), 0);
    assert_eq!(g.stat.get("pgscan_direct").copied(), Some(file), "memory.stat counts it as the reclaimer's");
    let usage = g.files.get("memory.usage_in_bytes").copied().unwrap();
    assert!(usage <= 64 << 20, "usage {usage} over the limit");
    assert!(g.files.get("memory.max_usage_in_bytes").copied().unwrap() <= (64 << 20) + 4096);
    assert!(g.files.get("memory.failcnt").copied().unwrap() > 0);
    // The same run with a limit above the file never reclaims.
    let r = run(LIMIT, &["cgroup.job.limit_in_bytes=512MiB"]);
    assert_eq!(r.counter("pgscan_file"), 0);
    assert_eq!(group(&r, "job").files.get("memory.failcnt").copied(), Some(0));
}

/// Anonymous memory growing past `memory.high` (no `memory.max`) with no swap: reclaim cannot
/// bring it back, so the allocator is put to sleep, and harder the further it goes.
const HIGH: &str = r#"
[machine]
memory = "1GiB"
cpus = 2

[[cgroup]]
name = "job"
memory.high = "64MiB"

[[process]]
name = "grower"
cgroup = "job"
program = '''
mmap heap anon 96MiB
touch heap write
mark done
'''
"#;

#[test]
fn memory_high_throttles() {
    let r = run(HIGH, &[]);
    let g = group(&r, "job");
    let done = r.metrics.get("done").copied().expect("finishes");
    assert!(g.events.get("high").copied().unwrap() > 0);
    assert!(g.pressure.some.total > 100_000, "the penalty sleeps are memory stalls: {:?}", g.pressure);
    let r2 = run(HIGH, &["cgroup.job.memory.high=512MiB"]);
    let done2 = r2.metrics.get("done").copied().expect("finishes");
    assert!(done > done2 * 3.0 + 0.5, "throttled {done} s vs unthrottled {done2} s");
    assert_eq!(group(&r2, "job").events.get("high").copied(), Some(0));
    assert!(g.files.get("memory.peak").copied().unwrap() > 64 << 20, "high is not a hard limit");
}

/// Two siblings under a parent at its limit: `a` reads its file first, then `b` streams a
/// larger one. With `memory.low` on `a`, the parent's limit reclaim takes `b`'s pages.
const LOW: &str = r#"
[machine]
memory = "1GiB"
cpus = 2

[[file]]
name = "hot"
size = "48MiB"

[[file]]
name = "stream"
size = "256MiB"

[[cgroup]]
name = "parent"
memory.max = "128MiB"

[[cgroup]]
name = "a"
parent = "parent"
memory.low = "64MiB"

[[cgroup]]
name = "b"
parent = "parent"

[[process]]
name = "hotreader"
cgroup = "a"
program = '''
read hot
'''

[[process]]
name = "streamer"
cgroup = "b"
start = "2s"
program = '''
read stream
'''
"#;

#[test]
fn memory_low_protects_a_sibling() {
    let cur = |r: &RunReport, n: &str| group(r, n).files.get("memory.current").copied().unwrap();
    let r = run(LOW, &[]);
    let a = cur(&r, "a");
    assert!(a >= 46 << 20, "a keeps its 48 MiB under its low: {a}");
    assert_eq!(group(&r, "a").stat.get("pgscan_direct").copied(), Some(0), "a is never scanned");
    assert!(group(&r, "b").stat.get("pgscan_direct").copied().unwrap() > 0);
    // Without the protection, the streamer's pressure takes a's pages too.
    let r = run(LOW, &["cgroup.a.memory.low=0"]);
    let a2 = cur(&r, "a");
    assert!(a2 < a / 2, "unprotected, a keeps {a2} of {a}");
}

/// A hog in a limited group without swap: the memcg OOM killer chooses it even though a larger
/// process runs outside the group.
const OOM: &str = r#"
[machine]
memory = "1GiB"
cpus = 2

[[cgroup]]
name = "box"
memory.max = "64MiB"

[[process]]
name = "big_outside"
program = '''
mmap big anon 256MiB
touch big write
sleep 3s
touch big write
mark outside_done
'''

[[process]]
name = "hog"
cgroup = "box"
start = "500ms"
program = '''
mmap heap anon 128MiB
touch heap write
mark hog_done
'''
"#;

#[test]
fn memcg_oom_kills_inside_the_group() {
    let r = run(OOM, &[]);
    assert_eq!(r.counter("oom_kill"), 1);
    assert!(r.metrics.get("hog_done").is_none(), "the hog is killed");
    assert!(r.metrics.get("outside_done").is_some(), "the larger process outside survives");
    let g = group(&r, "box");
    assert_eq!(g.events.get("oom_kill").copied(), Some(1));
    assert!(g.events.get("oom").copied().unwrap() >= 1);
    assert!(g.files.get("memory.current").copied().unwrap() < 4 << 20, "the victim's memory is uncharged");
}

#[test]
fn a_profile_without_memcg_refuses_cgroups_at_the_name() {
    let sc = vmlab_core::workload::load_scenario_str("memcg.toml", LIMIT, &[]).expect("loads");
    let e = api::run(&sc, RunOpts { profile: Some("linux-2.4.9"), ..Default::default() }).err().expect("refused");
    let d = format!("{e:?}");
    assert!(d.contains("no memory cgroups"), "{d}");
    let Err(e) =
        vmlab_core::workload::load_scenario_str("memcg.toml", LIMIT, &["process.reader.cgroup=nope".to_string()])
    else {
        panic!("an unknown group is an error")
    };
    assert!(format!("{e:?}").contains("no cgroup named `nope`"), "{e:?}");
}

/// Anonymous memory written twice through a 64 MiB limit: reclaim meets pages still under swap
/// writeback that it marked PG_reclaim, but there is no dirty file page in the run.
const SWAP_WRITEBACK: &str = r#"
profile = "linux-6.8"

[machine]
memory = "1GiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "256MiB"
disk = "sda"

[[cgroup]]
name = "job"
limit_in_bytes = "64MiB"

[[process]]
name = "hog"
cgroup = "job"
program = '''
mmap heap anon 96MiB
touch heap write
touch heap write
'''
"#;

#[test]
fn nr_vmscan_immediate_reclaim_counts_dirty_file_pages_only() {
    let r = run(SWAP_WRITEBACK, &[]);
    assert!(r.counter("pswpout") > 16_000, "the heap goes to swap: {}", r.counter("pswpout"));
    // 6.8's shrink_folio_list counts NR_VMSCAN_IMMEDIATE where it leaves a dirty file folio to
    // the flusher; a folio met again under writeback is stat->nr_immediate, not a vmstat event.
    assert_eq!(r.counter("nr_vmscan_immediate_reclaim"), 0);
}

/// 256 MiB written through a 64 MiB limit beside a 16 MiB heap read again and again, on a
/// machine whose global dirty thresholds the group never reaches: only reclaim can get the
/// file's dirty pages written (also `reclaim_throttle`'s writer).
pub(crate) const DIRTY: &str = r#"
profile = "linux-6.8"

[machine]
memory = "2GiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "256MiB"
disk = "sda"

[[file]]
name = "out"
size = "0"

[[cgroup]]
name = "job"
limit_in_bytes = "64MiB"

[[process]]
name = "heap"
cgroup = "job"
program = '''
mmap heap anon 16MiB
touch heap write
repeat 40 {
    touch heap read
    sleep 100ms
}
mark heap_done
'''

[[process]]
name = "writer"
cgroup = "job"
start = "100ms"
program = '''
mark start
write out len=256MiB bs=1MiB
mark written
'''
"#;

/// 6.8's limit reclaim leaves dirty file pages to the flusher (NR_VMSCAN_IMMEDIATE, PG_reclaim)
/// and, when every page it took was dirty and unqueued, wakes the flusher to write everything
/// (`wakeup_flusher_threads`, WB_start_all) and, in a v1 group, waits for writeback
/// (`reclaim_throttle`). The writes end with the pages rotated to the inactive tail, where the
/// next reclaim frees them: the writer gets through without the OOM killer.
#[test]
fn limit_reclaim_gets_dirty_pages_written_by_the_flusher() {
    let r = run(DIRTY, &[]);
    assert_eq!(r.counter("oom_kill"), 0, "no OOM kill in the group");
    assert!(r.metrics.get("written").is_some() && r.metrics.get("heap_done").is_some(), "both finish");
    let pages = 256 * 256;
    assert!(r.counter("nr_dirtied") >= pages, "every page written was dirtied: {}", r.counter("nr_dirtied"));
    assert!(
        r.counter("nr_written") * 10 >= pages * 7,
        "most of the file was written back before the end: {}",
        r.counter("nr_written")
    );
    assert!(r.counter("nr_vmscan_immediate_reclaim") > 0, "reclaim met dirty file pages");
    assert!(r.counter("pgrotated") > 0, "written pages marked PG_reclaim went to the inactive tail");
    assert_eq!(r.counter("nr_vmscan_write"), r.counter("pswpout"), "limit reclaim writes no file page itself");
    let g = group(&r, "job");
    assert_eq!(g.events.get("oom_kill").copied(), Some(0));
}

/// The same writer in a v2 group: cgroup writeback holds the writer to the group's own dirty
/// limit (`balance_dirty_pages` with the memcg domain, `mdtc_calc_avail`), so limit reclaim finds
/// clean pages to take and needs no flusher wakeup of its own; nothing is OOM-killed either.
#[test]
fn a_v2_group_throttles_its_writer_against_its_own_dirty_limit() {
    let v2 = DIRTY.replace("limit_in_bytes = \"64MiB\"", "memory.max = \"64MiB\"");
    let r = run(&v2, &[]);
    assert_eq!(r.counter("oom_kill"), 0, "no OOM kill in the group");
    assert!(r.metrics.get("written").is_some(), "the writer finishes");
    assert_eq!(r.counter("pswpout"), 0, "the heap stays");
    let v1 = run(DIRTY, &[]);
    assert!(
        r.counter("nr_vmscan_immediate_reclaim") * 4 < v1.counter("nr_vmscan_immediate_reclaim").max(4),
        "reclaim meets fewer dirty pages than under v1: {} vs {}",
        r.counter("nr_vmscan_immediate_reclaim"),
        v1.counter("nr_vmscan_immediate_reclaim")
    );
}
