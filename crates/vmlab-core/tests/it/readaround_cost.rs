//! `readaround_folio` and `remove_mapping`: a fault's read-around pays its own per-folio entry,
//! not `read()`'s `readahead_folio` (no read consumes those folios), once per folio it brings in;
//! reclaim pays `remove_mapping` once per clean page-cache folio it frees; both nothing at 0.

use vmlab_core::api::{self, RunOpts};
use vmlab_core::sim::Sim;
use vmlab_core::stats::kfunc::KFunc;
use vmlab_core::stats::vmstat::Vm;

/// A 64 MiB file mapped and touched once every 8 MiB with 8 MiB read-around, in MEMORY.
const AROUND: &str = r#"
profile = "linux-6.8"
[machine]
memory = "MEMORY"
cpus = 1
[vm]
read_ahead_kb = 8192
[[disk]]
name = "sda"
model = "ssd"
[[file]]
name = "f"
size = "64MiB"
[[process]]
name = "reader"
program = '''
mmap m file=f 64MiB
touch m read stride=8MiB
'''
"#;

fn run(memory: &str, sets: &[&str]) -> Sim {
    let text = AROUND.replace("MEMORY", memory);
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("readaround_cost.toml", &text, &sets).expect("loads");
    let (_, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    sim
}

fn ra_ns(s: &Sim) -> u64 {
    s.k.prof.get(KFunc::PageCacheRaReadahead)
}

#[test]
fn read_around_charges_its_own_entry_per_folio() {
    let base = run("256MiB", &[]);
    let pages = base.k.ev.get(Vm::Pgpgin) / 4;
    assert!(pages >= 8 * 1024, "the read-around read most of the file: {pages} pages");
    assert_eq!(base.k.ev.get(Vm::Pgmajfault), 8, "one miss a window");
    // read()'s entry is not the fault path's.
    let readahead = run("256MiB", &["machine.cost.readahead_folio=5us"]);
    assert_eq!(ra_ns(&readahead), ra_ns(&base), "readahead_folio charges no read-around folio");
    let around = run("256MiB", &["machine.cost.readaround_folio=5us"]);
    assert_eq!(around.k.ev.get(Vm::Pgpgin), base.k.ev.get(Vm::Pgpgin), "the charge reads nothing more");
    // 6.8's read-around is in single pages here: one folio a page read.
    assert_eq!(ra_ns(&around) - ra_ns(&base), pages * around.k.cost.readaround_folio);
}

#[test]
fn reclaim_charges_remove_mapping_per_folio_freed() {
    let base = run("16MiB", &[]);
    let with = run("16MiB", &["machine.cost.remove_mapping=5us"]);
    let freed = with.k.ev.get(Vm::PgstealFile);
    assert!(freed > 1000, "the file is read through 16 MiB: {freed} pages reclaimed");
    assert_eq!(freed, base.k.ev.get(Vm::PgstealFile), "the charge changes no reclaim");
    let extra = with.k.prof.get(KFunc::ShrinkFolioList) - base.k.prof.get(KFunc::ShrinkFolioList);
    assert_eq!(extra, freed * with.k.cost.remove_mapping, "one charge per folio freed, all of them base pages");
    assert_eq!(base.k.cost.remove_mapping, 0, "vmlab's own table charges none");
}
