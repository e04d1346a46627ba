//! `wait_until`: a program that waits on the machine's state, here until swap is in use. A heap
//! grows past the end of RAM at a steady pace, so swap fills gradually; the waiter must start
//! after the `vmstat` row in which swap passed its threshold and no later than the poll after.

use crate::common::run_checked;

const GROWTH: &str = r#"name = "wait-until-swap"
seed = 1
duration = "30s"
interval = "1s"
[machine]
memory = "128MiB"
cpus = 2
[[disk]]
name = "sda"
[swap]
size = "256MiB"
disk = "sda"
[[process]]
name = "grower"
program = '''
mmap heap anon 224MiB
for i in 0..56 {
    touch heap write offset=i * 4MiB len=4MiB
    sleep 200ms
}
mark grown
sleep forever
'''
[[process]]
name = "waiter"
program = '''
mark waiting
wait_until swap_used >= THRESHOLD every=100ms
mark swapped
sleep forever
'''
"#;

fn run(threshold: &str, profile: &str) -> vmlab_core::stats::report::RunReport {
    let text = GROWTH.replace("THRESHOLD", threshold);
    run_checked("wait-until.toml", &text, &[&format!("profile={profile}")])
}

#[test]
fn a_program_waits_until_swap_is_in_use() {
    for profile in ["linux-6.8", "linux-2.4.23aa1"] {
        let r = run("32MiB", profile);
        let at = *r.metrics.get("swapped").unwrap_or_else(|| panic!("{profile}: the waiter never started"));
        let first = r.timeline.iter().find(|s| s.swap_used_kb >= 32 << 10).expect("swap reached 32 MiB");
        eprintln!("{profile}: swapped at {at:.2} s; swap first ≥ 32 MiB in the row ending {:.0} s", first.t_s);
        assert!(at > 0.5, "{profile}: it must wait, not start at once ({at} s)");
        // The row before the one in which swap passed the threshold ended with less in use.
        assert!(at > first.t_s - 1.0, "{profile}: started at {at} s, before swap reached 32 MiB");
        assert!(
            at <= first.t_s + 0.1 + 1e-9,
            "{profile}: started at {at} s, a poll after the row ending {}",
            first.t_s
        );
    }
}

#[test]
fn a_condition_that_never_holds_keeps_the_program_waiting() {
    let r = run("1GiB", "linux-6.8");
    assert!(r.metrics.get("waiting").is_some());
    assert!(r.metrics.get("grown").is_some(), "the grower ran to its end");
    assert!(r.metrics.get("swapped").is_none(), "swap never reaches 1 GiB");
}
