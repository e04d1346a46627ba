//! `shrink_node`: a reclaim pass pays the entry once, however many folios it frees, inside the
//! limit reclaim's memory stall (6.8's `try_charge_memcg` brackets the call with
//! `psi_memstall_enter`/`leave`); nothing at 0, vmlab's own table.

use vmlab_core::api::{self, RunOpts};
use vmlab_core::sim::Sim;
use vmlab_core::stats::ftrace::{FtraceWriter, TraceFormat};
use vmlab_core::stats::kfunc::KFunc;
use vmlab_core::stats::report::RunReport;
use vmlab_core::stats::vmstat::Vm;

/// A 512 MiB file read once through a 128 MiB group with the development host's 8 MiB readahead:
/// every charge past the limit reclaims the stream's own clean pages.
const STREAM: &str = r#"
profile = "linux-6.8"
[machine]
memory = "1GiB"
cpus = 2
[vm]
read_ahead_kb = 8192
[[disk]]
name = "sda"
model = "ssd"
[[file]]
name = "stream"
size = "512MiB"
[[cgroup]]
name = "job"
limit_in_bytes = "128MiB"
[[process]]
name = "streamer"
cgroup = "job"
program = '''
read stream bs=1MiB
'''
"#;

/// The run, and how many limit-reclaim calls it made (`mm_vmscan_memcg_reclaim_begin`).
fn run(sets: &[&str]) -> (RunReport, Sim, u64) {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("reclaim_pass_cost.toml", STREAM, &sets).expect("loads");
    let buf = crate::common::TraceBuf::default();
    let events = vec!["mm_vmscan_memcg_reclaim_begin".to_string()];
    let w = FtraceWriter::new(Box::new(buf.clone()), TraceFormat::Linux68, &events).expect("writer");
    let (r, sim) = api::run(&sc, RunOpts { tracers: vec![Box::new(w)], ..Default::default() }).expect("runs");
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let calls = text.lines().filter(|l| l.contains("mm_vmscan_memcg_reclaim_begin:")).count() as u64;
    (r, sim, calls)
}

fn some_us(r: &RunReport) -> u64 {
    r.pressure.as_ref().expect("6.8 reports pressure").some.total
}

#[test]
fn shrink_node_is_charged_once_per_pass_inside_the_stall() {
    let (base_r, base, calls) = run(&[]);
    let (with_r, with, _) = run(&["machine.cost.shrink_node=20us"]);
    assert_eq!(base.k.cost.shrink_node, 0, "vmlab's own table charges none");
    assert_eq!(base.k.prof.get(KFunc::ShrinkNode), 0);
    let freed = with.k.ev.get(Vm::PgstealFile);
    assert!(freed > 90_000, "384 MiB of the stream is reclaimed: {freed} pages");
    assert_eq!(freed, base.k.ev.get(Vm::PgstealFile), "the charge changes no reclaim");
    let each = with.k.cost.shrink_node;
    let extra = with.k.prof.get(KFunc::ShrinkNode);
    assert!(extra > 0 && extra % each == 0, "whole passes: {extra} ns of {each}");
    let passes = extra / each;
    // Per pass, not per call or page: each call makes one pass a priority level it goes down,
    // at most DEF_PRIORITY + 1 of them; in this small group most calls go down at least one.
    assert!(calls > 100 && (calls + 1..=calls * 13).contains(&passes), "{passes} passes for {calls} calls");
    assert!(passes * 8 < freed, "{passes} passes for {freed} pages");
    // The one reclaimer's stalls do not overlap, so each pass's charge lengthens the stall by
    // as much (totals in µs).
    let grew = some_us(&with_r) - some_us(&base_r);
    let want = extra / 1000;
    assert!(grew.abs_diff(want) <= want / 100 + 2, "stall grew {grew} µs for {want} µs of passes");
}
