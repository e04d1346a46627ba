//! 6.8's `reclaim_throttle` (`mm/vmscan.c`, sndrzt/linux-6.8): a writer in a cgroup v1 group
//! whose limit reclaim meets dirty pages waits on its node's `reclaim_wait` queue until
//! `acct_reclaim_writeback` has seen more than SWAP_CLUSTER_MAX pages per waiter written, or
//! HZ/10. The wakeup is never lost: one that comes while the writer still runs the quantum in
//! which it throttled ends its wait there (prepare_to_wait before schedule_timeout).

use std::any::Any;

use vmlab_core::api::{self, RunOpts};
use vmlab_core::kernel::Kernel;
use vmlab_core::trace::{Tracepoint, Tracer};

// The writer of `memcg::limit_reclaim_gets_dirty_pages_written_by_the_flusher`.
use crate::memcg::DIRTY;

/// The writer's `mm_vmscan_throttled` events: (µs delayed, µs timeout).
#[derive(Default)]
struct Waits {
    writer: Option<usize>,
    waits: Vec<(u64, u64)>,
}

impl Tracer for Waits {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if let Tracepoint::Throttled { usec_delayed, usec_timeout, .. } = *ev {
            if Some(k.trace_at.task) == self.writer {
                self.waits.push((usec_delayed, usec_timeout));
            }
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn task_created(&mut self, task: usize, _pid: u32, comm: &str) {
        if comm == "writer" {
            self.writer = Some(task);
        }
    }
}

/// The writer's time off the CPU while it writes is its throttles' delays: a wake that came
/// while it still ran its quantum cut the sleep, so it does not sleep the full HZ/10 after
/// it. Before, such a wake was dropped and each of those throttles cost the writer 100 ms
/// however soon its pages were written.
#[test]
fn the_writer_sleeps_until_the_writeback_wakeup_not_the_timeout() {
    let sc = vmlab_core::workload::load_scenario_str("throttle.toml", DIRTY, &[]).expect("loads");
    let (r, sim) =
        api::run(&sc, RunOpts { tracers: vec![Box::new(Waits::default())], ..Default::default() }).expect("runs");
    let w = sim.k.tracer::<Waits>().expect("attached");
    let n = w.waits.len() as u64;
    assert!(n >= 5, "the writer throttles on writeback: {n} waits");
    let woken = w.waits.iter().filter(|&&(d, t)| d < t).count() as u64;
    assert!(woken * 2 > n, "most waits end at a writeback wakeup, not the timeout: {woken} of {n}");
    let delayed_s: f64 = w.waits.iter().map(|&(d, _)| d as f64 / 1e6).sum();
    let span = r.metrics.get("written").expect("written") - r.metrics.get("start").expect("started");
    let cpu = r.tasks.iter().find(|t| t.name == "writer").expect("writer").cpu_s;
    let off_cpu = span - cpu;
    // Besides its throttles the writer waits only for a CPU (two CPUs, the heap asleep most of
    // the time): 0.1 ms a throttle and 1 ms in all allow for that. (With the wake dropped, one
    // of ~270 waits here ends 100 ms late: 0.46 s off the CPU against 0.36 s of delays.)
    assert!(
        off_cpu <= delayed_s + 0.001 + 0.0001 * n as f64,
        "off the CPU {off_cpu:.3} s in {span:.3} s, throttles delayed it {delayed_s:.3} s over {n} waits"
    );
}
