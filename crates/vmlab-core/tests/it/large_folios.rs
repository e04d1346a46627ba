//! Large page-cache folios on the read path (issue 17: the host's ext4 reads them, 6.8's XFS
//! does; `[[disk]] large_folios`): readahead allocates folios of the ramped order, reclaim takes
//! and frees a folio whole, and every counter moves by pages, as 6.8 counts them
//! (`folio_nr_pages` in isolate_lru_folios, shrink_folio_list, workingset_refault).

use vmlab_core::api::{self, RunOpts};
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::stats::report::RunReport;

/// A file set read twice through a group's limit (a third of it fits), beside nothing else: the
/// second pass refaults what the first evicted.
const SET: &str = r#"
profile = "linux-6.8"

[machine]
memory = "512MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[vars]
passes = 2

[[file]]
name = "set"
size = "96MiB"

[[cgroup]]
name = "job"
limit_in_bytes = "32MiB"

[[process]]
name = "reader"
cgroup = "job"
program = '''
repeat passes {
    read set bs=1MiB
}
'''
"#;

/// The run's report, and (large folios, pages in them) of the file set still cached at the end.
fn run(text: &str, sets: &[&str]) -> (RunReport, u64, u64) {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("large_folios.toml", text, &sets).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    sim.k.check_frames().expect("frames consistent");
    let (folios, pages) = cached_folios(&sim.k);
    (r, folios, pages)
}

fn cached_folios(k: &Kernel) -> (u64, u64) {
    let (mut folios, mut pages) = (0, 0);
    for f in &k.files {
        for &p in &f.pages {
            if p != NIL && !k.fr.has(p, pg::TAIL) && k.fr.folio_order(p) > 0 {
                folios += 1;
                pages += k.fr.folio_nr(p);
            }
        }
    }
    (folios, pages)
}

fn within(a: u64, b: u64, frac: f64) -> bool {
    (a as f64 - b as f64).abs() <= frac * b.max(1) as f64
}

#[test]
fn reclaim_of_large_folios_counts_pages_and_conserves_them() {
    let (base, f0, _) = run(SET, &[]);
    let (large, folios, in_folios) = run(SET, &["disk.sda.large_folios=true"]);
    assert_eq!(f0, 0, "single pages unless the file system reads folios");
    assert!(folios > 0 && in_folios > 4 * folios, "the cache holds large folios: {folios} holding {in_folios} pages");
    // The same pages are read, scanned, stolen and refaulted whether they come one by one or
    // in folios: the counters are in pages (were they in folios, these would be a fraction).
    for c in ["pgpgin", "pgscan_file", "pgsteal_file", "workingset_refault_file"] {
        let (b, l) = (base.counter(c), large.counter(c));
        assert!(b > 10_000, "{c}: the base run reclaims and refaults ({b})");
        assert!(within(l, b, 0.2), "{c}: {l} with large folios against {b} in single pages");
    }
    assert!(large.counter("pgsteal_file") <= large.counter("pgscan_file"));
}

#[test]
fn a_folio_read_through_is_marked_accessed_once() {
    // Fits in the group: nothing is reclaimed. The first pass references each folio once (not
    // once a page, which would activate it at its second page); the second activates them all.
    let fits = ["disk.sda.large_folios=true", "file.set.size=16MiB"];
    let mut one = fits.to_vec();
    one.push("vars.passes=1");
    let (r1, folios, _) = run(SET, &one);
    assert!(folios > 0);
    assert_eq!(r1.counter("pgactivate"), 0, "one pass only references");
    let (r2, _, _) = run(SET, &fits);
    let pages = 16 << 8;
    assert!(
        within(r2.counter("pgactivate"), pages, 0.05),
        "the second pass activates every page: {}",
        r2.counter("pgactivate")
    );
}

#[test]
fn writing_into_a_large_folio_splits_it_and_dirties_one_page() {
    let text = SET.replace(
        "repeat passes {\n    read set bs=1MiB\n}",
        "read set bs=1MiB\nwrite set offset=40KiB len=4KiB\nfsync set",
    );
    let (r, folios, _) = run(&text, &["disk.sda.large_folios=true", "file.set.size=16MiB"]);
    assert!(folios > 0, "the other folios stay whole");
    assert_eq!(r.counter("pgpgout"), 4, "one page written: {}", r.counter("pgpgout"));
}

#[test]
fn a_kernel_without_large_folios_refuses_them_at_the_disk() {
    let text = r#"
profile = "linux-2.6.36"

[machine]
memory = "256MiB"

[[disk]]
name = "sda"
large_folios = true

[[file]]
name = "f"
size = "1MiB"

[[process]]
name = "reader"
program = "read f"
"#;
    let sc = vmlab_core::workload::load_scenario_str("old.toml", text, &[]).expect("loads");
    let e = api::run(&sc, RunOpts::default()).err().expect("refused");
    let d = format!("{e:?}");
    assert!(d.contains("large_folios") && d.contains("linux-2.6.36"), "{d}");
    assert!(d.contains("old.toml:8:"), "positioned at the disk's name: {d}");
}

/// The folio order of each page of the scenario's first file, in index order.
fn orders_by_index(k: &Kernel) -> Vec<u32> {
    k.files[0].pages.iter().map(|&p| if p == NIL { u32::MAX } else { k.fr.folio_order(k.fr.folio_head(p)) }).collect()
}

#[test]
fn a_miss_reads_single_pages_when_readahead_keeps_its_order() {
    // One pass over a file that fits, with the host's 8 MiB readahead: the first window (512
    // pages for 1 MiB reads) follows a miss, the rest are asynchronous windows.
    let sets = ["disk.sda.large_folios=true", "file.set.size=32MiB", "vars.passes=1", "vm.read_ahead_kb=8192"];
    let orders = |extra: &[&str]| {
        let mut s = sets.to_vec();
        s.extend_from_slice(extra);
        let s: Vec<String> = s.iter().map(|x| x.to_string()).collect();
        let sc = vmlab_core::workload::load_scenario_str("ra.toml", SET, &s).expect("loads");
        let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
        sim.k.check_frames().expect("frames consistent");
        (r, orders_by_index(&sim.k))
    };
    let (r68, o68) = orders(&[]);
    let (rkept, okept) = orders(&["reclaim.ra_order_in_state=true"]);
    let first = |o: &[u32], n: usize| o[..n].iter().copied().max().unwrap();
    // 6.8: the miss asks for order 0 + 2.
    assert!(o68[..512].iter().all(|&o| o == 2), "6.8 reads the first window in order-2 folios");
    // Order kept in file_ra_state: the miss reads single pages, the next window order 2, and the
    // ramp still reaches PMD order.
    assert_eq!(first(&okept, 512), 0, "the first window is single pages");
    assert_eq!(okept[512], 2, "the first asynchronous window asks for order 2");
    assert_eq!(okept.iter().copied().max(), Some(9), "the ramp still reaches PMD order");
    assert!(okept.iter().all(|&o| o != u32::MAX) && o68.iter().all(|&o| o != u32::MAX), "the file is cached");
    // The same pages are read either way.
    assert_eq!(r68.counter("pgpgin"), rkept.counter("pgpgin"));
    let singles = okept.iter().filter(|&&o| o == 0).count();
    assert_eq!(singles, 512, "only the window after the miss is in single pages");
}

#[test]
fn a_file_read_again_from_its_start_ramps_as_the_first_read_did() {
    // 6.8's ondemand_readahead (and 2.6.3x's) takes index 0 as the start of a stream whatever
    // the last read was; the 2.6.2x form (`ra_start_of_file` off) sees a jump back from EOF and
    // reads the first request alone, so the second pass's windows start one request late.
    const TWICE: &str = r#"
profile = "linux-6.8"

[machine]
memory = "512MiB"

[[disk]]
name = "sda"
model = "ssd"
large_folios = true

[vars]
again = 1

[[file]]
name = "set"
size = "32MiB"

[[process]]
name = "reader"
program = '''
read set bs=1MiB
repeat again {
    drop_caches
    read set bs=1MiB
}
'''
"#;
    let orders = |extra: &[&str]| {
        let mut s = vec!["vm.read_ahead_kb=8192", "reclaim.ra_order_in_state=true"];
        s.extend_from_slice(extra);
        let s: Vec<String> = s.iter().map(|x| x.to_string()).collect();
        let sc = vmlab_core::workload::load_scenario_str("twice.toml", TWICE, &s).expect("loads");
        let (_, sim) = api::run(&sc, RunOpts::default()).expect("runs");
        sim.k.check_frames().expect("frames consistent");
        orders_by_index(&sim.k)
    };
    let once = orders(&["vars.again=0"]);
    let twice = orders(&[]);
    let old = orders(&["reclaim.ra_start_of_file=false"]);
    assert!(once.iter().all(|&o| o != u32::MAX) && twice.iter().all(|&o| o != u32::MAX), "the file is cached");
    assert_eq!(twice, once, "the second pass reads the same folios as the first");
    let singles = |o: &[u32]| o.iter().take_while(|&&x| x == 0).count();
    assert_eq!(singles(&once), 512, "one initial window of single pages");
    assert!(singles(&old) > 512, "2.6.2x: the bare request, then a new initial window: {}", singles(&old));
}

#[test]
fn the_cgroup_series_counts_a_large_folio_by_its_pages() {
    // `--cgroup-series` is compared with the host's memory.stat, which counts pages; a list
    // entry is a whole folio.
    let sc = vmlab_core::workload::load_scenario_str("large_folios.toml", SET, &["disk.sda.large_folios=true".into()])
        .expect("loads");
    let (_, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    let (folios, pages) = cached_folios(&sim.k);
    let cached: u64 = sim.k.files.iter().map(|f| f.pages.iter().filter(|&&p| p != NIL).count() as u64).sum();
    let mut out = String::new();
    vmlab_core::stats::memcg_fmt::lru_rows(&sim.k, 0.0, &mut out);
    let row = out.lines().find(|l| l.split(',').nth(1) == Some("job")).expect("the job's row");
    let col = |i: usize| row.split(',').nth(i).unwrap().parse::<u64>().unwrap();
    assert!(folios > 0 && pages > folios, "the set ends in large folios: {folios} folios, {pages} pages");
    assert_eq!(col(4) + col(5), cached, "file lists in pages: {row}");
}
