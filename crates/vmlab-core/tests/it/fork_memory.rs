//! `[fork]`: every forked task holds a kernel stack and a task_struct until it exits.

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario_str;

const FORKER: &str = r#"name = "forker"
seed = 1
[machine]
memory = "256MiB"
cpus = 2
[fork]
thread_size = "8KiB"
task_struct = 5952
[vars]
children = 10
[[process]]
name = "parent"
program = '''
for i in 0..children {
    fork {
        sleep 10s
        exit
    }
}
sleep 20s
'''
"#;

fn run(sets: &[&str]) -> Sim {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario_str("forker.toml", FORKER, &sets).expect("loads");
    let mut s = Sim::new(&sc, resolve_profile(&sc, Some("linux-2.6.36")).expect("profile")).expect("builds");
    s.run().expect("runs");
    s
}

fn held(s: &Sim) -> (u64, u64) {
    let tm = s.k.task_mem.as_ref().expect("[fork] sets up the task_struct cache");
    (s.k.g.kernel_stack, tm.task_struct_cache.objects)
}

#[test]
fn live_children_hold_their_stacks_and_task_structs() {
    // Two pages of stack (THREAD_SIZE 8 KiB) and one task_struct per live child.
    assert_eq!(held(&run(&["duration=5s"])), (20, 10));
    assert_eq!(held(&run(&["duration=5s", "vars.children=3"])), (6, 3));
}

#[test]
fn exited_children_give_them_back() {
    let s = run(&["duration=15s"]);
    assert_eq!(held(&s), (0, 0));
    assert!(s.k.task_mem.as_ref().unwrap().task_struct_cache.slabs > 0, "the cache did allocate slabs");
}
