//! Swap-in readahead (`swapin_readahead`). The host's 6.18 kernel, sweeping a 1.5 GiB heap
//! through a 1 GiB cgroup twice (docs/REAL.md, anon-overcommit), read 8 pages per major fault
//! on the second pass: pgmajfault 49,157 for pswpin 393,223, swap_ra 344,066, swap_ra_hit
//! 344,061. vm.page-cluster 3, vma_ra_enabled.
//! - 6.8 VMA readahead grows its window with the hits: a sequential swap-in sweep settles at
//!   `1 << page_cluster` pages per major fault, and nearly every readahead page is hit.
//! - A random swap-in pattern has no hits and no adjacent faults: the window stays at one page.
//! - The 2.6 cluster readahead reads the in-use slots of the aligned 8-slot block; a sweep
//!   swapped out in order reads them all, 8 per fault.
//! - 6.8 uses the cluster readahead instead while a rotational device swaps (as on the host,
//!   whose virtio disk reports rotational): its window also grows with the hits, to 8 slots.
//! - page_cluster 0 (or `swap_readahead = "none"`) reads one page per fault.

use vmlab_core::api::{self, RunOpts};
use vmlab_core::stats::report::RunReport;

const HEAP_PAGES: u64 = 384 * 256;

fn run_on(model: &str, profile: &str, touch2: &str, sets: &[&str]) -> RunReport {
    sweep(model, profile, touch2, sets).0
}

/// The sweep's report, and the kernel's profile row of `do_swap_page` with the cost it charged.
fn sweep(model: &str, profile: &str, touch2: &str, sets: &[&str]) -> (RunReport, u64, u64) {
    let sc = format!(
        r#"
profile = "{profile}"

[machine]
memory = "256MiB"
cpus = 2

[[disk]]
name = "sda"
model = "{model}"

[swap]
size = "512MiB"
disk = "sda"

[[process]]
name = "hog"
program = '''
mmap heap anon 384MiB
touch heap write
mark pass1
{touch2}
mark done
'''
"#
    );
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str("sweep.toml", &sc, &sets).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    assert!(r.metrics.get("done").is_some(), "the sweep finishes");
    sim.k.check_frames().expect("frames consistent");
    let dsp = sim.k.prof.get(vmlab_core::stats::kfunc::KFunc::DoSwapPage);
    (r, dsp, sim.k.cost.do_swap_page)
}

fn run(profile: &str, touch2: &str, sets: &[&str]) -> RunReport {
    run_on("ssd", profile, touch2, sets)
}

fn c(r: &RunReport, n: &str) -> u64 {
    r.counter(n)
}

#[test]
fn vma_readahead_reads_eight_pages_per_major_fault_on_a_sequential_swap_in_sweep() {
    let r = run("linux-6.8", "touch heap write", &[]);
    let (maj, pswpin, ra, hit) = (c(&r, "pgmajfault"), c(&r, "pswpin"), c(&r, "swap_ra"), c(&r, "swap_ra_hit"));
    eprintln!("6.8 seq: pgmajfault {maj} pswpin {pswpin} swap_ra {ra} swap_ra_hit {hit}");
    // Most of the heap comes back (a few batches are still resident: anon_lru.rs), none twice.
    assert!(pswpin <= HEAP_PAGES && pswpin * 5 >= HEAP_PAGES * 4, "pswpin {pswpin}: none read twice");
    assert!(maj * 7 < pswpin && pswpin <= maj * 8, "pgmajfault {maj} for pswpin {pswpin}: ~8 pages per major fault");
    assert_eq!(ra + maj, pswpin, "every page read is either a fault's or readahead");
    assert!(hit * 100 >= ra * 99, "swap_ra_hit {hit} of swap_ra {ra}");
}

#[test]
fn vma_readahead_stays_at_one_page_for_random_swap_ins() {
    let r = run("linux-6.8", "touch heap read pattern=uniform count=20000", &[]);
    let (maj, pswpin, ra) = (c(&r, "pgmajfault"), c(&r, "pswpin"), c(&r, "swap_ra"));
    eprintln!("6.8 random: pgmajfault {maj} pswpin {pswpin} swap_ra {ra}");
    assert!(maj > 5_000, "random reads fault pages back in ({maj})");
    assert!(ra * 20 < pswpin, "no window grows without hits: swap_ra {ra} of pswpin {pswpin}");
}

#[test]
fn no_readahead_reads_one_page_per_major_fault() {
    for set in ["reclaim.swap_readahead=none", "vm.page_cluster=0"] {
        let r = run("linux-6.8", "touch heap write", &[set]);
        assert_eq!(c(&r, "pgmajfault"), c(&r, "pswpin"), "{set}");
        assert_eq!(c(&r, "swap_ra"), 0, "{set}");
    }
}

#[test]
fn cluster_readahead_reads_the_aligned_block_on_2_6() {
    let r = run("linux-2.6.36", "touch heap write", &[]);
    let (maj, pswpin, ra, hit) = (c(&r, "pgmajfault"), c(&r, "pswpin"), c(&r, "swap_ra"), c(&r, "swap_ra_hit"));
    eprintln!("2.6.36 seq: pgmajfault {maj} pswpin {pswpin} swap_ra {ra} swap_ra_hit {hit}");
    assert!(maj * 6 < pswpin, "pgmajfault {maj} for pswpin {pswpin}");
    assert!(hit * 10 >= ra * 9, "swap_ra_hit {hit} of swap_ra {ra}");
}

#[test]
fn a_rotational_swap_disk_makes_6_8_read_clusters_that_grow_with_the_hits() {
    let small = [
        "machine.memory=128MiB",
        "process.hog.program=mmap heap anon 192MiB; touch heap write; mark pass1; touch heap write; mark done",
    ];
    let r = run_on("hdd", "linux-6.8", "", &small);
    let forced = run_on("hdd", "linux-6.8", "", &[small[0], small[1], "reclaim.swap_readahead=cluster"]);
    let (maj, pswpin, ra, hit) = (c(&r, "pgmajfault"), c(&r, "pswpin"), c(&r, "swap_ra"), c(&r, "swap_ra_hit"));
    eprintln!("6.8 hdd seq: pgmajfault {maj} pswpin {pswpin} swap_ra {ra} swap_ra_hit {hit}");
    assert_eq!(
        (maj, ra),
        (c(&forced, "pgmajfault"), c(&forced, "swap_ra")),
        "vma readahead falls back to the cluster one"
    );
    // Slots written out of address order would shrink its windows (the VMA scheme does not
    // care): the bound leaves room for that.
    assert!(maj * 5 < pswpin && pswpin <= maj * 8, "pgmajfault {maj} for pswpin {pswpin}");
    assert!(hit * 100 >= ra * 99, "swap_ra_hit {hit} of swap_ra {ra}");
}

/// `do_swap_page`'s cost entry: paid once per swap-in fault — the major faults that read and the
/// minor ones that find the page in the swap cache (readahead's) alike — and nothing at 0, vmlab's
/// own table, so only a host calibration that fits it moves a run.
#[test]
fn do_swap_page_is_charged_once_per_swap_in_fault() {
    let on_6_8 = |sets: &[&str]| sweep("ssd", "linux-6.8", "touch heap read", sets);
    let (base, base_ns, zero) = on_6_8(&[]);
    assert_eq!(zero, 0, "vmlab's own table charges nothing extra");
    let (dear, dear_ns, each) = on_6_8(&["machine.cost.do_swap_page=3us"]);
    assert_eq!(each, 3000);
    let extra = dear_ns - base_ns;
    assert_eq!(extra % each, 0, "whole charges only");
    let faults = extra / each;
    // Every page read back is mapped by one fault; readahead's pages by minor ones.
    assert!(c(&dear, "pgmajfault") > 0 && faults > c(&dear, "pgmajfault"), "{faults} faults");
    // Nearly every page read is faulted in once; a fault that finds its page still locked under
    // the read waits and enters do_swap_page again (6.8: `folio_lock_or_retry`, VM_FAULT_RETRY),
    // and pages still in the swap cache from their write are faulted without a read.
    let read = c(&dear, "pswpin");
    assert!(faults >= read * 9 / 10 && faults <= read * 5 / 4, "{faults} faults for {read} pages read");
    assert!(c(&base, "pswpin") > 0);
}
