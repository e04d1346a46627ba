//! Seed 002 (shm-big-iron): Andrea Arcangeli's 2.4 VM swapping SysV shm mapped by many processes.
//!
//! The fast tests run a small machine where a dozen processes map a cold shm segment and a batch
//! job forces swapping, and check the three mechanisms that tell 2.4.23aa1 from aa2:
//! - the page-table walk makes a shared page freeable only after visiting every mm that maps it
//!   (aa1), while objrmap makes it freeable on the first idle PTE found (aa2);
//! - aa1's `shm_writepage` only moves pages to the swap cache (I/O comes when the scan meets them
//!   again), aa2's starts the I/O at once;
//! - aa2 frees clean cache in its clean pass before any writepage work.
//!
//! The full reproduction (`vmlab reproduce shm-big-iron`, 32 GiB) is the ignored test at the end.

use vmlab_core::api::{run, RunOpts};
use vmlab_core::reproduce::{shm_big_iron, ReproduceOpts};
use vmlab_core::sim::Sim;
use vmlab_core::stats::report::RunReport;
use vmlab_core::vmscan::Aa24Stats;
use vmlab_core::workload::load_scenario_str;

const MAPPERS: u32 = 12;

/// A 2 GiB i386 box: `MAPPERS` processes attach a 192 MiB shm segment and then leave it alone;
/// two batch jobs grow hot anonymous memory past the end of RAM; a reader streams a file.
fn scenario(profile: &str) -> String {
    format!(
        r#"name = "shm-small"
profile = "{profile}"
seed = 3
duration = "40s"
interval = "1s"

[machine]
memory = "2GiB"
cpus = 4
arch = "i386"
cpu_mhz = 2000

[[disk]]
name = "data"
model = "san"
spindles = 2
bandwidth = "90MB/s"

[[disk]]
name = "swapdisk"
model = "hdd"
bandwidth = "40MB/s"

[swap]
size = "2GiB"
disk = "swapdisk"

[[file]]
name = "big"
size = "1GiB"
disk = "data"

[[process]]
name = "init"
program = '''
mmap sga shm=SEG 192MiB
touch sga write
exit
'''

[[process]]
name = "db"
count = {MAPPERS}
start = "1s"
program = '''
mmap sga shm=SEG 192MiB populate
sleep forever
'''

[[process]]
name = "batch"
count = 2
start = "3s"
program = '''
mmap heap anon 960MiB
threads 2 {{
    if tid == 0 {{
        for i in 0..120 {{
            touch heap write offset=i * 8MiB len=8MiB
            sleep 50ms
        }}
        sleep forever
    }} else {{
        loop {{
            touch heap
            sleep 500ms
        }}
    }}
}}
'''

[[process]]
name = "reader"
start = "10s"
program = '''
read big bs=1MiB
sleep forever
'''
"#
    )
}

fn run_small(profile: &str) -> (RunReport, Sim) {
    let text = scenario(profile);
    let sc = load_scenario_str("shm-small.toml", &text, &[]).expect("scenario loads");
    run(&sc, RunOpts::default()).expect("scenario runs")
}

fn stats(sim: &Sim) -> &Aa24Stats {
    sim.k.reclaim.aa24_stats().expect("the 2.4-aa engine runs")
}

#[test]
fn walk_needs_every_mapper_but_objrmap_does_not() {
    let (_, aa1) = run_small("linux-2.4.23aa1");
    let (_, aa2) = run_small("linux-2.4.23aa2");
    let (s1, s2) = (stats(&aa1), stats(&aa2));
    let first1 = s1.mm_visits_at_first_freeable_cache.expect("aa1 made a shm page freeable");
    let first2 = s2.mm_visits_at_first_freeable_cache.expect("aa2 made a shm page freeable");
    println!(
        "first freeable shm page after {first1} (aa1) / {first2} (aa2) mm visits; PTEs unmapped {} / {}",
        s1.walk_unmapped,
        s2.walk_unmapped + s2.objrmap_unmapped
    );
    // The first pass over the mms only ages young PTEs; after that aa1 needs to have walked every
    // process mapping the page, aa2 only the first one.
    assert!(first1 >= 2 * MAPPERS as u64 - 1, "aa1: first freeable shm page after {first1} mm visits");
    assert!(
        first2 <= first1 - MAPPERS as u64 + 2,
        "aa2: first freeable shm page after {first2} mm visits (aa1 {first1})"
    );
    assert!(s2.objrmap_unmapped > 0 && s1.objrmap_unmapped == 0);
}

#[test]
fn aa1_converts_shm_to_swap_cache_before_writing_it() {
    let (r1, aa1) = run_small("linux-2.4.23aa1");
    let (r2, aa2) = run_small("linux-2.4.23aa2");
    let (s1, s2) = (stats(&aa1), stats(&aa2));
    let sc1 = s1.swapcache_at_first_swapout.expect("aa1 swapped");
    let sc2 = s2.swapcache_at_first_swapout.expect("aa2 swapped");
    println!("swap-cache pages at the first swap-out: aa1 {sc1}, aa2 {sc2}");
    // aa2's shm_writepage submits the write as it converts, aa1 waits for the scan to come back.
    assert!(sc2 <= 32, "aa2 had {sc2} swap-cache pages at its first swap-out");
    assert!(sc1 > sc2, "aa1 {sc1} swap-cache pages at the first swap-out, aa2 {sc2}");
    // The same at the first write of a shm page: aa2 writes the page it converts.
    let shm1 = s1.swapcache_at_first_shm_swapout.expect("aa1 wrote a shm page");
    let shm2 = s2.swapcache_at_first_shm_swapout.expect("aa2 wrote a shm page");
    println!("swap-cache pages at the first shm swap-out: aa1 {shm1}, aa2 {shm2}");
    assert!(shm2 <= 32 && shm1 > shm2, "first shm swap-out: aa1 {shm1}, aa2 {shm2} swap-cache pages");
    assert!(r1.counter("pswpout") > 0 && r2.counter("pswpout") > 0);
}

#[test]
fn clean_pass_frees_clean_cache_first() {
    let (_, aa1) = run_small("linux-2.4.23aa1");
    let (_, aa2) = run_small("linux-2.4.23aa2");
    assert_eq!(stats(&aa1).clean_pass_freed, 0);
    assert!(
        stats(&aa2).clean_pass_freed > stats(&aa2).freed,
        "aa2 freed {} in the clean pass, {} in the scan",
        stats(&aa2).clean_pass_freed,
        stats(&aa2).freed
    );
}

#[test]
fn same_seed_same_bytes() {
    let (a, _) = run_small("linux-2.4.23aa2");
    let (b, _) = run_small("linux-2.4.23aa2");
    assert_eq!(a.with_wall_s_zeroed().to_json_string(), b.with_wall_s_zeroed().to_json_string());
}

fn must_show_failures(rep: &vmlab_core::stats::report::ReproduceReport) -> Vec<String> {
    let m = |i: usize, k: &str| rep.runs[i].metrics.get(k).copied().unwrap_or(f64::NAN);
    let mut failed = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            failed.push(what);
        }
    };
    let sc = |i: usize| m(i, "swapcache_kb_at_first_swapout");
    // aa1.
    check(sc(0) >= 1048576.0, format!("aa1 swap cache at the first shm write {} kB < 1 GiB", sc(0)));
    check(m(0, "sy_pct_conversion") >= 70.0, format!("aa1 sy over the conversion {} < 70", m(0, "sy_pct_conversion")));
    check(m(0, "cp_mb_per_s") <= 10.0, format!("aa1 cp {} MB/s > 10", m(0, "cp_mb_per_s")));
    // aa1 + objrmap + immediate shm I/O, no clean-cache pass.
    check(sc(1) <= 262144.0, format!("aa1+objrmap+io swap cache {} kB > 256 MiB", sc(1)));
    check(
        m(1, "cp_mb_per_s") <= m(2, "cp_mb_per_s") / 10.0,
        format!("aa1+objrmap+io cp {} MB/s > a tenth of aa2's {}", m(1, "cp_mb_per_s"), m(2, "cp_mb_per_s")),
    );
    // aa2.
    check(sc(2) <= 262144.0, format!("aa2 swap cache {} kB > 256 MiB", sc(2)));
    check(
        m(2, "objrmap_unmapped_kb") <= 262144.0,
        format!("aa2 objrmap made {} kB freeable, not tens of MiB", m(2, "objrmap_unmapped_kb")),
    );
    check(m(2, "cp_mb_per_s") >= 60.0, format!("aa2 cp {} MB/s < 60", m(2, "cp_mb_per_s")));
    failed
}

/// The seed's "must show" at full scale (32 GiB, 100 processes, 51 M PTEs, 5 GiB of shm):
/// several minutes in a release build.
/// `cargo test --release -p vmlab-core --test it -- --ignored seed_shm_big_iron::`
#[test]
#[ignore = "does not reproduce: the middle row's cp condition fails (that copy waits only for the context store's one-time write-out, then reads at disk speed, because nothing brings shm to the inactive tail while it runs), and with -aa's page tables in HighMem (pte_highmem) aa2's cp reads 57.7 MB/s, below 60; session 24's audit of the copy's path against 2.4.23 found no step that would hold it, and session 25's reading of the reporters' texts no workload statement that would (docs/notes/era-2.4.23aa.md)"]
fn reproduce_full_scale() {
    let opts = ReproduceOpts::default();
    let (rep, text) = shm_big_iron::run(&opts).expect("reproduce runs");
    println!("{text}");
    assert_eq!(rep.runs.len(), 3);
    for r in &rep.runs {
        assert!(r.params.get("fixes").is_some() && r.params.get("profile").is_some());
    }
    let failed = must_show_failures(&rep);
    assert!(failed.is_empty(), "not reproduced: {failed:?}");
}

/// Andrea: "On the low end (<8G) these effects … weren't visible". The same definition at a
/// sixth of the size (the scale knobs and the machine's memory divided alike): aa1 must not
/// storm — not GiBs of swap cache before the first shm write together with sy ≥ 70 over it.
#[test]
#[ignore = "release only: three 5 GiB runs, ~3 min on a loaded 2-core box; scripts/test-all.sh runs it"]
fn scaled_down_does_not_storm() {
    let sets = [
        "machine.memory=5GiB",
        "vars.SGA=320MiB",
        "vars.HOT=40MiB",
        "vars.PGA=16MiB",
        "vars.CTX=512MiB",
        "vars.BATCH=736MiB",
        "vars.BATCHFAST=640MiB",
        "vars.CPSIZE=1GiB",
        "vars.DATA=1GiB",
    ];
    let opts = ReproduceOpts { sets: sets.iter().map(|s| s.to_string()).collect(), ..Default::default() };
    let (rep, text) = shm_big_iron::run(&opts).expect("reproduce runs");
    println!("{text}");
    let m = |k: &str| rep.runs[0].metrics.get(k).copied().unwrap_or(0.0);
    let storm = m("swapcache_kb_at_first_swapout") >= 1048576.0 && m("sy_pct_conversion") >= 70.0;
    assert!(!storm, "aa1 storms at 5 GiB: {:?}", rep.runs[0].metrics);
}

/// The seed file (aa1) at a toy size, `extra` `--set`s on top, run for 4 s.
fn run_seed_tiny(extra: &[&str]) -> Sim {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/seeds/shm-big-iron.toml");
    let sets: Vec<String> = [
        "machine.memory=1GiB",
        "duration=4s",
        "vars.SGA=16MiB",
        "vars.HOT=4MiB",
        "vars.PGA=1MiB",
        "vars.CTX=16MiB",
        "vars.BATCH=64MiB",
        "vars.BATCHFAST=64MiB",
        "vars.CPSIZE=64MiB",
        "vars.DATA=16MiB",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect();
    let sc = vmlab_core::workload::load_scenario(&path, &sets).expect("the seed loads");
    run(&sc, RunOpts::default()).expect("the seed runs").1
}

/// Andrea's "second copy" (`vars.SHM2`, `SHM2PROCS`, `SHM2AT`): off by default; on, every page
/// of the second file is in memory and mapped by every one of its processes, as "fault in all the
/// pagetables from all tasks touching the shm vma" has it.
#[test]
fn second_shm_instance_is_mapped_whole_by_its_processes() {
    let off = run_seed_tiny(&[]);
    assert!(!off.k.files.iter().any(|f| f.name.contains("SHM2SEG")), "the default has no second instance");
    let on = run_seed_tiny(&["vars.SHM2=32MiB", "vars.SHM2PROCS=5", "vars.SHM2AT=1s"]);
    let f = on.k.files.iter().find(|f| f.name.contains("SHM2SEG")).expect("the second instance exists");
    assert!(f.shmem);
    assert_eq!(f.nrpages, 32 << 8, "the creator filled all 32 MiB");
    let counts: Vec<u32> = f.pages.iter().map(|&p| on.k.fr.mapcount[p as usize] as u32).collect();
    assert!(counts.iter().all(|&c| c == 5), "mapcounts {:?}", &counts[..8]);
    let bad = vmlab_core::workload::load_scenario(
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/seeds/shm-big-iron.toml"),
        &["vars.SHM2=lots".to_string()],
    );
    assert!(bad.is_err(), "a size that is not one is an error, not a panic");
}
