//! The interrupt model: where a disk's completion handler runs and whose time it takes.

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario_str;

/// Two CPUs, one disk, one process that reads a file (so the disk completes requests).
const READER: &str = r#"name = "irq"
seed = 1
[machine]
memory = "256MiB"
cpus = 2
arch = "i386"
cpu_mhz = 1000
[[disk]]
name = "raid"
bandwidth = "24MB/s"
irq = "DAC960_BA_InterruptHandler"
[[file]]
name = "data"
size = "16MiB"
[[process]]
name = "reader"
program = '''
read data len=16MiB bs=64KiB
'''
"#;

fn sim(profile: &str, sets: &[&str]) -> Sim {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario_str("irq.toml", READER, &sets).expect("loads");
    Sim::new(&sc, resolve_profile(&sc, Some(profile)).expect("profile")).expect("builds")
}

fn row(s: &Sim) -> Option<(String, u64, u64)> {
    s.k.prof.irq.iter().find(|r| r.calls > 0).map(|r| (r.name.clone(), r.ns, r.calls))
}

#[test]
fn an_idle_cpu_absorbs_the_handler() {
    let mut s = sim("linux-2.4.9", &[]);
    let before: Vec<u64> = s.s.tasks.iter().map(|t| t.stime_ns + t.utime_ns).collect();
    s.interrupt(0, 98_000, true);
    let c = &s.s.cpus[0];
    // Busy in the handler for its time, nobody's quantum moved, no task charged.
    assert_eq!((c.busy_until, c.irq_delay, c.sy_ns), (98_000, 0, 98_000));
    assert_eq!(s.s.tasks.iter().map(|t| t.stime_ns + t.utime_ns).collect::<Vec<_>>(), before);
    assert_eq!(row(&s), Some(("DAC960_BA_InterruptHandler".to_string(), 98_000, 1)));
    // 2.4's lowest-priority delivery takes the next one to the other CPU.
    s.interrupt(0, 98_000, true);
    assert_eq!(s.s.cpus[1].busy_until, 98_000);
}

#[test]
fn a_running_task_finishes_later_by_the_handlers_time() {
    let mut s = sim("linux-2.4.9", &[]);
    s.s.cpus[0].running = Some(0);
    s.s.cpus[0].busy_until = 1_000_000;
    s.interrupt(0, 98_000, true);
    assert_eq!((s.s.cpus[0].busy_until, s.s.cpus[0].irq_delay), (1_098_000, 98_000));
}

/// ext4's io_end releases run in the unbound `ext4-rsv-conversion` worker, which the scheduler
/// puts on an idle CPU: its time leaves the task running on the disk's interrupt CPU alone,
/// where an interrupt's would delay it. With every CPU busy it takes the interrupt CPU's.
#[test]
fn a_completion_workers_time_goes_to_an_idle_cpu() {
    let mut s = sim("linux-6.8", &[]);
    s.s.cpus[0].running = Some(0);
    s.s.cpus[0].busy_until = 1_000_000;
    s.completion_work(0, 98_000);
    assert_eq!((s.s.cpus[0].busy_until, s.s.cpus[0].irq_delay), (1_000_000, 0), "the writer's CPU untouched");
    assert_eq!((s.s.cpus[1].busy_until, s.s.cpus[1].sy_ns), (98_000, 98_000), "the idle CPU did it");
    // Both busy: the interrupt CPU's task waits for it, as for an interrupt.
    s.s.cpus[1].running = Some(1);
    s.s.cpus[1].busy_until = 1_000_000;
    s.completion_work(0, 98_000);
    assert_eq!((s.s.cpus[0].busy_until, s.s.cpus[0].irq_delay), (1_098_000, 98_000));
    // An interrupt of the same disk goes to that CPU whatever the other does.
    let mut t = sim("linux-6.8", &[]);
    t.s.cpus[0].running = Some(0);
    t.s.cpus[0].busy_until = 1_000_000;
    t.interrupt(0, 98_000, true);
    assert_eq!(t.s.cpus[0].irq_delay, 98_000);
}

#[test]
fn completions_raise_interrupts_costed_by_the_era() {
    let run = |profile: &str, sets: &[&str]| {
        let mut s = sim(profile, sets);
        s.run().expect("runs");
        let reads = s.k.disks[0].reads();
        (row(&s), reads, s.k.cost.irq_end_request, s.k.cost.irq_handler, s.k.cost.copy_page)
    };
    // 2.4.9: one handler call a request (a submission merged into a queued one adds none); each
    // costs irq_end_request plus a copy_page per HighMem page (none at this size).
    let (r, reads, base, _, copy) = run("linux-2.4.9", &[]);
    let (name, ns, calls) = r.expect("2.4.9 charges its handler");
    assert_eq!(name, "DAC960_BA_InterruptHandler");
    assert!(calls > 0 && calls <= reads, "{calls} calls, {reads} reads");
    assert!(ns >= calls * base && ns <= calls * base + 4096 * copy, "{ns} over {calls} calls");
    // 6.8: the modern handler, a few µs a call.
    let (r, reads, _, modern, _) = run("linux-6.8", &[]);
    let (_, ns, calls) = r.expect("6.8 charges its handler");
    assert!(calls > 0 && calls <= reads && ns == calls * modern, "{calls} calls, {reads} reads, {ns} ns");
    assert!(modern < 10_000, "{modern}");
    // A measured figure from the scenario replaces the era's default.
    let (r, ..) = run("linux-2.4.9", &["machine.cost.irq_end_request=50us", "reclaim.bounce_highmem_io=false"]);
    let (_, ns, calls) = r.expect("row");
    assert_eq!(ns, calls * 50_000);
    // Profiles calibrated without interrupt time keep charging none.
    assert_eq!(run("linux-2.4.9", &["reclaim.irq=none"]).0, None);
}

#[test]
fn a_bad_irq_name_is_an_error() {
    let text = READER.replace("irq = \"DAC960_BA_InterruptHandler\"", "irq = \"two words\"");
    // The loader finds it, at the value's position.
    let e = load_scenario_str("irq.toml", &text, &[]).expect_err("fails");
    assert_eq!(e.to_string(), "irq.toml:11:7: irq must be a function name (one word)");
}
