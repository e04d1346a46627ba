//! The allocator's slow path must not go round without simulated time passing. Fuzz seed 19
//! input 843104 (seed 001's streaming scenario on 64 MiB with a 1 MiB Normal zone and 4,000/s
//! order-3 atomic slab allocations) never finished: with every reclaimable page under
//! writeback, 2.6.36's direct reclaim scanned nothing, took no CPU, and still claimed progress
//! ("don't OOM" while a zone is reclaimable), so `__alloc_pages_slowpath` retried in the same
//! instant for ever. The kernel sleeps between those attempts (`congestion_wait(BLK_RW_ASYNC,
//! HZ/50)`), and so must the model.

use vmlab_core::sched::{TState, TaskKind};
use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario_str;

const WRITEBACK_BOUND: &str = r#"name = "alloc-retry"
profile = "linux-2.6.36"
seed = 1
interval = "1s"
duration = "1s"
[machine]
memory = "64MiB"
cpus = 2
zones = { DMA = "16MiB", DMA32 = "3MiB", Normal = "1MiB" }
[[disk]]
name = "sdb"
model = "hdd"
[swap]
size = "4MiB"
disk = "sdb"
[[netrx]]
rate = "4000/s"
order = 3
lifetime = "1s"
[[process]]
name = "stream"
program = '''
let size = 8M
create big size=size
write big len=size bs=1M
write big len=size bs=1M
read big bs=1M
'''
"#;

/// The scaled-down input, on every profile: each run reaches its simulated second. Before the
/// fix the 2.6.36 run never returned from one `alloc_pages` call (a hang, not a failure: the
/// test is bounded by the simulated duration, and each such retry now costs 20 ms of it).
#[test]
fn an_allocation_retrying_after_claimed_progress_lets_time_pass() {
    for name in vmlab_core::profiles::names() {
        let sc = load_scenario_str("alloc-retry.toml", WRITEBACK_BOUND, &[]).expect("loads");
        let mut sim = Sim::new(&sc, resolve_profile(&sc, Some(name)).expect("profile")).expect("builds");
        sim.run().expect("runs");
        // The stream finished, or the run reached its simulated second with it still going.
        let user = || sim.s.tasks.iter().filter(|t| t.kind == TaskKind::User);
        let finished = user().all(|t| t.state == TState::Exited);
        assert!(finished || sim.s.now >= 1_000_000_000, "{name}: ended at {} ns", sim.s.now);
        sim.k.check_frames().unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: allocstall {}", sim.k.ev.get(vmlab_core::stats::vmstat::Vm::Allocstall));
    }
}
