//! 2.4.22's request-queue throttle (ll_rw_blk.rs) reaches the disks through the profile:
//! `max_queue_sectors_kb` in the 2.4.23aa rows, none in 2.4.9 (its queue predates it), and
//! `blk_init_free_list`'s halving of `max_queue_sectors` on a box of under 30 MiB.

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario_str;

const BOX: &str = r#"name = "queue24"
seed = 1
[machine]
memory = "256MiB"
cpus = 1
arch = "i386"
[[disk]]
name = "hda"
model = "hdd"
[[process]]
name = "idle"
program = '''
compute 1ms
'''
"#;

fn sim(profile: &str, sets: &[&str]) -> Sim {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario_str("queue24.toml", BOX, &sets).expect("loads");
    Sim::new(&sc, resolve_profile(&sc, Some(profile)).expect("profile")).expect("builds")
}

/// Scattered 64-KiB writes at time 0 until `bytes` are in flight; then whether a new write
/// request would wait.
fn waits_after(s: &mut Sim, bytes: u64) -> Option<u64> {
    let d = &mut s.k.disks[0];
    for i in 0..bytes / (64 << 10) {
        d.submit(0, i * (16 << 20), 64 << 10, true);
    }
    d.request_wait(0, true)
}

#[test]
fn the_aa_rows_throttle_on_sectors_and_2_4_9_does_not() {
    for p in ["linux-2.4.23aa1", "linux-2.4.23aa2"] {
        let mut s = sim(p, &[]);
        assert_eq!(waits_after(&mut s, 4 << 20), Some(0), "{p}: 4 MiB in flight is not over");
        assert!(waits_after(&mut s, 64 << 10).is_some_and(|w| w > 0), "{p}: 4 MiB + 64 KiB is");
        let mut off = sim(p, &["reclaim.max_queue_sectors_kb=0"]);
        assert_eq!(waits_after(&mut off, 8 << 20), None, "{p} with the field 0");
    }
    for p in ["linux-2.4.9", "linux-2.6.26", "linux-6.8"] {
        assert_eq!(waits_after(&mut sim(p, &[]), 8 << 20), None, "{p}");
    }
}

#[test]
fn a_box_under_30_mib_gets_half_the_queue() {
    let mut small = sim("linux-2.4.23aa1", &["machine.memory=24MiB"]);
    assert!(waits_after(&mut small, (2 << 20) + (64 << 10)).is_some_and(|w| w > 0));
    let mut big = sim("linux-2.4.23aa1", &[]);
    assert_eq!(waits_after(&mut big, (2 << 20) + (64 << 10)), Some(0));
}
