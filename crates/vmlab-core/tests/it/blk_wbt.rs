//! 6.8's writeback throttle (`block/blk-wbt.c`): the flusher's write requests in flight are
//! held to `wb_normal`, so a v1 group writing more than its limit has a few thousand pages
//! under writeback at a time, not all its dirty pages at once (docs/REAL.md, dirty-writer).

use std::cell::Cell;
use std::rc::Rc;

use vmlab_core::api::{self, RunOpts};

/// A 256 MiB file through a 64 MiB v1 group on a 2 GiB machine (its dirty thresholds never
/// reached: only limit reclaim's `WB_start_all` gets pages written), on a queue of 1280 KiB
/// requests with a write cache, as the host's loop device has, and 16 requests.
const WRITER: &str = r#"
profile = "linux-6.8"
duration = "20s"

[machine]
memory = "2GiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"
nr_requests = 16
write_cache = true

[vm]
max_sectors_kb = 1280

[[file]]
name = "out"
size = "0"

[[cgroup]]
name = "job"
limit_in_bytes = "64MiB"

[[process]]
name = "writer"
cgroup = "job"
program = '''
write out len=256MiB bs=1MiB
'''
"#;

/// The most pages of the group under writeback in any 5 ms sample.
fn max_writeback(sets: &[&str]) -> u64 {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("wbt.toml", WRITER, &sets).expect("loads");
    let most = Rc::new(Cell::new(0u64));
    let seen = most.clone();
    let hook: vmlab_core::sim::SampleHook = Box::new(move |sim: &mut vmlab_core::sim::Sim| {
        let g = sim.k.memcg.groups.iter().find(|g| g.name == "job").expect("group");
        seen.set(seen.get().max(g.nr_writeback));
    });
    api::run(&sc, RunOpts { interval_s: Some(0.005), on_sample: Some(hook), ..Default::default() }).expect("runs");
    most.get()
}

/// With the throttle the flusher has at most `wb_normal` requests in flight at the deepest
/// step: ¾ of 16 is a `max_depth` of 12, `wb_normal` 6, each request at most 320 pages (1280
/// KiB), plus the run it is building. Without it (`wbt_lat_usec = 0`) the 250 ms backlog of the
/// older request queue is the only bound, and most of the group's pages go under writeback at
/// once.
#[test]
fn the_flusher_keeps_few_pages_under_writeback() {
    let with = max_writeback(&[]);
    let without = max_writeback(&["disk.sda.wbt_lat_usec=0"]);
    assert!(with > 0, "the flusher wrote");
    assert!(with <= 6 * 320 + 256, "wb_normal bounds the pages under writeback: {with}");
    assert!(without > 2 * with, "without the throttle far more go at once: {without} against {with}");
}

/// anon-ring (scenarios/real/) scaled down: a queue of 8 MiB chunks, ten of them waiting, in a
/// 64 MiB group of a 2 GiB machine, on the `ssd` model (32 tags: `nr_requests` 64, so
/// `max_depth` 16 at step 0, at most 48; `wb_background` 4, `wb_normal` 8 at step 0). Limit
/// reclaim writes the waiting chunks to swap while the consumer's swap-ins keep reads recent.
pub(crate) const RING: &str = r#"
profile = "linux-6.8"
duration = "60s"

[machine]
memory = "2GiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "1GiB"

[[cgroup]]
name = "job"
limit_in_bytes = "64MiB"

[vars]
window = 10
chunk = "8MiB"
chunks = 16
steps = 30

[[process]]
name = "ring"
cgroup = "job"
program = '''
mmap ring anon 128MiB
for i in 0..steps {
    if i >= window {
        touch ring read offset=((i - window) % chunks) * chunk len=chunk
        madvise ring dontneed offset=((i - window) % chunks) * chunk len=chunk
    }
    touch ring write offset=(i % chunks) * chunk len=chunk
}
mark done
'''
"#;

/// The most tracked write requests in flight in the throttle's background and swap queues
/// (1 ms samples), `pswpout`, and when the ring is done (ns).
fn ring_writes(sets: &[&str]) -> (u32, u32, u64, f64) {
    use vmlab_core::blk_wbt::{RWQ_BG, RWQ_SWAP};
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("ring.toml", RING, &sets).expect("loads");
    let most = Rc::new(Cell::new((0u32, 0u32)));
    let seen = most.clone();
    let hook: vmlab_core::sim::SampleHook = Box::new(move |sim: &mut vmlab_core::sim::Sim| {
        let now = sim.k.now;
        let d = &sim.k.disks[0];
        let (bg, sw) = seen.get();
        seen.set((bg.max(d.wbt_inflight(now, RWQ_BG)), sw.max(d.wbt_inflight(now, RWQ_SWAP))));
    });
    let (r, _) =
        api::run(&sc, RunOpts { interval_s: Some(0.001), on_sample: Some(hook), ..Default::default() }).expect("runs");
    let (bg, sw) = most.get();
    (bg, sw, r.counter("pswpout"), r.metrics.get("done").copied().expect("the ring finishes"))
}

/// 6.8's `get_limit` puts a limit reclaimer's swap writes in `WBT_RWQ_BG` at `wb_background`
/// while its swap-ins are recent; from 6.11 (`reclaim.wbt_swap_hiprio`) they go in the swap
/// queue at `max_depth`. vmlab's reclaimer writes its batch and then sleeps until the
/// wakeup (see `swap_state::wbt_wait_swap`), so the lower limit shows as a longer run.
#[test]
fn a_limit_reclaimers_swap_writes_take_the_limit_their_kernel_gives_them() {
    let (bg68, sw68, out68, done68) = ring_writes(&[]);
    let (bg, sw, out, done) = ring_writes(&["reclaim.wbt_swap_hiprio=true"]);
    eprintln!(
        "6.8: bg {bg68} swap {sw68} pswpout {out68} done {done68}; 6.11+: bg {bg} swap {sw} pswpout {out} done {done}"
    );
    assert!(out68 > 20_000 && out > 20_000, "both swap: {out68}, {out}");
    assert_eq!((sw68, bg), (0, 0), "each kernel's queue: 6.8 the background one, 6.11+ the swap one");
    assert!(bg68 > 0 && sw > 0);
    // The limit counts requests: since the swap-in fault's plug holds its reclaim's writes
    // (fewer, larger requests) the lower one costs the ring little (0.4 % when written, 2.4 %
    // before), but never makes it faster.
    assert!(done68 > done, "6.8's lower limit holds the reclaimer longer: {done68} s against {done} s");
}
