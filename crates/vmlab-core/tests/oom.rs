//! The OOM killer: without swap, a process that touches more anonymous memory than the machine
//! has is chosen (largest footprint), killed, and its memory freed; a small bystander survives.

use vmlab_core::api::{self, RunOpts};

const SCENARIO: &str = r#"
[machine]
memory = "256MiB"
cpus = 2

[[process]]
name = "bystander"
program = '''
mmap small anon 16MiB
touch small write
sleep 5s
touch small write
mark bystander_done
'''

[[process]]
name = "hog"
start = "100ms"
program = '''
mmap big anon 512MiB
touch big write
mark hog_done
'''
"#;

#[test]
fn oom_killer_kills_the_largest_process_and_frees_its_memory() {
    let sc = vmlab_core::workload::load_scenario_str("oom.toml", SCENARIO, &[]).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    assert_eq!(r.counter("oom_kill"), 1, "exactly one OOM kill");
    assert!(r.metrics.get("hog_done").is_none(), "the hog must not finish");
    assert!(r.metrics.get("bystander_done").is_some(), "the bystander survives");
    // The hog's memory came back.
    let free_kb = r.meminfo.get("MemFree").copied().unwrap_or(0);
    assert!(free_kb > 200 * 1024, "MemFree {free_kb} kB after the kill");
    sim.k.check_frames().expect("frames consistent");
}
