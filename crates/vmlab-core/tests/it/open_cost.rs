//! `path_openat`: what opening a named file costs beside its pages is charged once per open —
//! per `read`/`write` of a file, whatever its size — and not at all at 0 (vmlab's own table).

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::stats::kfunc::KFunc;
use vmlab_core::workload::load_scenario_str;

const READER: &str = r#"name = "open-cost"
seed = 1
[machine]
memory = "256MiB"
cpus = 1
[[disk]]
name = "sda"
model = "ssd"
[[file]]
name = "s{i}"
count = 8
size = "SIZE"
[[process]]
name = "reader"
program = '''
repeat PASSES {
    for f in 0..8 {
        read s{f}
    }
}
'''
"#;

fn run(size: &str, passes: u32, sets: &[&str]) -> Sim {
    let text = READER.replace("SIZE", size).replace("PASSES", &passes.to_string());
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario_str("open-cost.toml", &text, &sets).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    sim.run().expect("runs");
    sim
}

#[test]
fn path_openat_is_charged_once_per_open() {
    for (size, passes) in [("4KiB", 1), ("4KiB", 3), ("64KiB", 3)] {
        let s = run(size, passes, &["machine.cost.path_openat=5us"]);
        let each = s.k.cost.path_openat;
        assert!(each > 0);
        assert_eq!(
            s.k.prof.get(KFunc::PathOpenat),
            u64::from(8 * passes) * each,
            "{size} files, {passes} passes: one charge per open, none per page"
        );
    }
}

#[test]
fn vmlabs_own_table_charges_no_open() {
    let s = run("4KiB", 2, &[]);
    assert_eq!(s.k.cost.path_openat, 0);
    assert_eq!(s.k.prof.get(KFunc::PathOpenat), 0);
}
