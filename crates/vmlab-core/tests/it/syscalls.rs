//! The system-call layer as a program sees it: `create FILE disk=DISK` puts the file on that disk.

use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario_str;

const TWO_DISKS: &str = r#"name = "create-disk"
seed = 1
[machine]
memory = "256MiB"
cpus = 1
[[disk]]
name = "sda"
[[disk]]
name = "sdb"
model = "ssd"
[[process]]
name = "writer"
program = '''
create log DISK_ARG
write log len=4MiB
fsync log
'''
"#;

fn run(disk_arg: &str) -> Sim {
    let text = TWO_DISKS.replace("DISK_ARG", disk_arg);
    let sc = load_scenario_str("create-disk.toml", &text, &[]).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    sim.run().expect("runs");
    sim
}

#[test]
fn a_created_files_io_goes_to_its_disk() {
    let sim = run("disk=sdb");
    assert_eq!(sim.k.disks[0].bytes_written(), 0, "nothing written to sda");
    assert_eq!(sim.k.disks[1].bytes_written(), 4 << 20, "the file's 4 MiB written to sdb");
    let sim = run("");
    assert_eq!(sim.k.disks[0].bytes_written(), 4 << 20, "without disk= the first disk");
    assert_eq!(sim.k.disks[1].bytes_written(), 0);
}

#[test]
fn a_disk_named_at_run_time_must_exist() {
    let text = TWO_DISKS.replace("create log DISK_ARG", "let d = 3\ncreate log disk=sd{d}");
    let sc = load_scenario_str("create-disk.toml", &text, &[]).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    let e = sim.run().expect_err("sd3 does not exist");
    assert!(e.message.starts_with("no disk named `sd3`"), "{}", e.message);
    let line = text.lines().position(|l| l.starts_with("create log")).expect("in the text") + 1;
    assert_eq!(e.span.map(|s| s.line as usize), Some(line));
}

/// `threads N` with N beyond any pid space is the scenario's mistake: a clear error at the
/// count, not an attempt to allocate N thread states (found by vmlab-fuzz, seed 18, input
/// 327384: `threads 1000000000000`, which aborted on a 342 GB allocation).
#[test]
fn a_thread_count_beyond_pid_max_is_refused() {
    let text = TWO_DISKS.replace("create log DISK_ARG", "let n = 9223372036854775807\nthreads n {\n    exit\n}");
    let sc = load_scenario_str("threads.toml", &text, &[]).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    let e = sim.run().expect_err("too many threads");
    assert!(e.message.contains("more threads than pids"), "{}", e.message);
    let line = text.lines().position(|l| l.starts_with("threads n")).expect("in the text") + 1;
    assert_eq!(e.span.map(|s| s.line as usize), Some(line));
    let ok = TWO_DISKS.replace("create log DISK_ARG", "threads 3 {\n    exit\n}\ncreate log");
    let sc = load_scenario_str("threads.toml", &ok, &[]).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    sim.run().expect("three threads run");
}

/// An mmap longer than the address space (`TASK_SIZE`) is refused where it is written, as the
/// kernel's `get_unmapped_area` refuses it with -ENOMEM; before, an anonymous mapping of 4 EiB
/// was made and touching it never ended a quantum (vmlab-fuzz seed 19, input 1391736). 100 TiB
/// still maps on x86-64.
#[test]
fn an_mmap_beyond_task_size_is_refused() {
    let prog =
        |len: &str| TWO_DISKS.replace("create log DISK_ARG", &format!("mmap big anon {len}\ntouch big write\nexit"));
    let text = prog("4611686018427387903");
    let sc = load_scenario_str("mmap.toml", &text, &[]).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    let e = sim.run().expect_err("4 EiB does not fit");
    assert!(e.message.contains("larger than a process's address space"), "{}", e.message);
    let line = text.lines().position(|l| l.starts_with("mmap big")).expect("in the text") + 1;
    assert_eq!(e.span.map(|s| s.line as usize), Some(line));
    let ok = TWO_DISKS.replace("create log DISK_ARG", "mmap big anon 100TiB\nexit");
    let sc = load_scenario_str("mmap.toml", &ok, &[]).expect("loads");
    let mut sim = Sim::new(&sc, resolve_profile(&sc, Some("linux-6.8")).expect("profile")).expect("builds");
    sim.run().expect("100 TiB maps");
}

/// A file written twice, nothing read (`profiles.rs` `write_marks_accessed`): 6.8's buffered
/// write never marks its pages accessed (`generic_perform_write`; `FGP_WRITEBEGIN` has no
/// `FGP_ACCESSED`), so the pages stay inactive; 2.6's `generic_perform_write` calls
/// `mark_page_accessed` on each, and the second write activates them.
#[test]
fn a_rewritten_file_stays_inactive_only_on_6_8() {
    let text = r#"name = "rewrite"
[machine]
memory = "256MiB"
cpus = 1
[[file]]
name = "f"
size = "0"
[[process]]
name = "writer"
program = '''
write f len=4MiB
write f offset=0 len=4MiB
'''
"#;
    let active_kb = |profile: &str| {
        let sc = load_scenario_str("rewrite.toml", text, &[]).expect("loads");
        let mut sim = Sim::new(&sc, resolve_profile(&sc, Some(profile)).expect("profile")).expect("builds");
        sim.run().expect("runs");
        sim.meminfo().active_file
    };
    assert_eq!(active_kb("linux-6.8"), 0, "6.8: written pages are not marked accessed");
    assert!(active_kb("linux-2.6.36") >= 4000, "2.6.36: the second write activates the 4 MiB");
}
