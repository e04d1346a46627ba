//! `readahead_folio`: a cold read pays the per-folio part of readahead once per folio it brings
//! in — per page when the file system reads base pages, once per large folio otherwise — and
//! nothing at 0 (vmlab's own table); and with `ra_order_in_state` on (a host kernel that keeps
//! the readahead order in `file_ra_state`) a synchronous miss reads order-0 folios while the
//! asynchronous windows of a long read still ramp.

use vmlab_core::api::{self, RunOpts};
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::sim::Sim;
use vmlab_core::stats::kfunc::KFunc;

/// One file of SIZE read once, cold, in one call.
const READ: &str = r#"
profile = "linux-6.8"
[machine]
memory = "256MiB"
cpus = 1
[[disk]]
name = "sda"
model = "ssd"
large_folios = LARGE
[[file]]
name = "f"
size = "SIZE"
[[process]]
name = "reader"
program = '''
read f bs=1MiB
'''
"#;

fn run(size: &str, large: bool, sets: &[&str]) -> Sim {
    let text = READ.replace("SIZE", size).replace("LARGE", &large.to_string());
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("readahead_cost.toml", &text, &sets).expect("loads");
    let (_, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    sim
}

/// (folios, pages) of the file in the cache.
fn cached(sim: &Sim) -> (u64, u64) {
    let f = &sim.k.files[0];
    let heads = f.pages.iter().filter(|&&p| p != NIL && !sim.k.fr.has(p, pg::TAIL)).count() as u64;
    (heads, f.nrpages)
}

#[test]
fn readahead_folio_is_charged_once_per_folio_read() {
    for (size, large) in [("64KiB", false), ("64KiB", true), ("8MiB", true)] {
        let base = run(size, large, &[]);
        let with = run(size, large, &["machine.cost.readahead_folio=5us"]);
        let (folios, pages) = cached(&with);
        assert_eq!(cached(&base), (folios, pages), "{size}: the charge changes no folio");
        assert_eq!(pages, sim_pages(size), "{size}: the whole file read");
        let each = with.k.cost.readahead_folio;
        let extra = with.k.prof.get(KFunc::PageCacheRaReadahead) - base.k.prof.get(KFunc::PageCacheRaReadahead);
        assert_eq!(extra, folios * each, "{size}, large folios {large}: one charge per folio");
        if large {
            assert!(folios * 4 <= pages, "{size}: large folios, {folios} folios for {pages} pages");
        } else {
            assert_eq!(folios, pages, "{size}: base pages, one folio a page");
        }
    }
}

fn sim_pages(size: &str) -> u64 {
    match size {
        "64KiB" => 16,
        _ => 2048,
    }
}

#[test]
fn vmlabs_own_table_charges_no_readahead_folio() {
    let s = run("64KiB", false, &[]);
    assert_eq!(s.k.cost.readahead_folio, 0);
}

#[test]
fn with_the_order_in_ra_state_a_small_file_is_read_a_folio_a_page() {
    let off = ["reclaim.ra_order_in_state=true"];
    let (small_on, small_off) = (cached(&run("64KiB", true, &[])), cached(&run("64KiB", true, &off)));
    assert!(small_on.0 * 4 <= small_on.1, "6.8: the sync window in large folios, {small_on:?}");
    assert_eq!(small_off.0, small_off.1, "order 0 for the sync window, {small_off:?}");
    let (big_off, big_base) = (cached(&run("8MiB", true, &off)), cached(&run("8MiB", false, &[])));
    assert!(big_off.0 * 4 <= big_off.1, "the async windows still ramp, {big_off:?}");
    assert!(big_off.0 < big_base.0, "fewer folios than base pages, {big_off:?} {big_base:?}");
}
