//! Memory pressure (`/proc/pressure/memory`) as 6.8 counts it: a release with PSI reports it
//! with or without cgroups, one without reports none; and a `read()` that waits for a page being
//! read back after it was evicted from the workingset is a memory stall (`folio_wait_bit_common`
//! under `psi_memstall_enter`), where the same wait for a page read for the first time is not.

use vmlab_core::stats::report::RunReport;

fn run(text: &str, sets: &[&str]) -> RunReport {
    crate::common::run_checked("psi.toml", text, sets)
}

/// A scaled-down heap-fileset (scenarios/real/heap-fileset.toml): a 40 MiB heap read every
/// 0.3 s beside a reader in a 64 MiB group with swap, which reads `set` ten times over (36 MiB:
/// it never fits beside the heap; the heap's active pages make its refaults activate, and from
/// the third pass on they are restores), or `stream` (the same 360 MiB) once.
const READS: &str = r#"
profile = "linux-6.8"

[machine]
memory = "1GiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "128MiB"

[[file]]
name = "set"
size = "36MiB"

[[file]]
name = "stream"
size = "360MiB"

[[cgroup]]
name = "job"
limit_in_bytes = "64MiB"

[[process]]
name = "heap"
cgroup = "job"
program = '''
mmap heap anon 40MiB
touch heap write
repeat 40 {
    touch heap read
    sleep 300ms
}
'''

[[process]]
name = "reader"
cgroup = "job"
start = "1s"
program = '''
repeat 10 {
    read set bs=1MiB
}
'''
"#;

fn some_s(r: &RunReport) -> f64 {
    r.pressure.as_ref().expect("6.8 reports pressure").some.total as f64 / 1e6
}

#[test]
fn waits_for_restored_pages_are_memory_stalls_and_first_reads_are_not() {
    let thrash = run(READS, &[]);
    let stream_prog = "process.reader.program=read stream bs=1MiB";
    let stream = run(READS, &[stream_prog]);
    let restores = thrash.counter("workingset_restore_file");
    assert!(restores > 10_000, "passes 3–10 refault pages that were active: {restores} restores");
    assert_eq!(stream.counter("workingset_restore_file"), 0, "a once-read stream restores nothing");
    // Both read 360 MiB through the same limit, so both reclaim about as much (a stall each);
    // only the set's waits for restored pages add to that.
    let (t, s) = (some_s(&thrash), some_s(&stream));
    assert!(s * 5.0 < t, "the stream's stalls are its limit reclaim only: {s:.3} s against {t:.3} s");
    let anon = thrash.counter("workingset_restore_anon");
    assert_eq!(anon, 0, "no anon restore stalls in the fault path either, so the difference is the reads");
}

#[test]
fn only_a_release_with_psi_reports_pressure() {
    let no_groups =
        READS.replace("cgroup = \"job\"\n", "").replace("[[cgroup]]\nname = \"job\"\nlimit_in_bytes = \"64MiB\"\n", "");
    let r = run(&no_groups, &["machine.memory=64MiB"]);
    assert!(r.pressure.is_some(), "6.8 has /proc/pressure/memory without cgroups");
    let old = run(&no_groups.replace("linux-6.8", "linux-2.6.38"), &["machine.memory=64MiB"]);
    assert!(old.pressure.is_none(), "2.6.38 has no PSI (4.20+)");
}
