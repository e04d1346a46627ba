//! Seed 002's box at the copy's start (history §25): one `vmlab reproduce shm-big-iron` row with
//! the reproduce's own figures (swap cache at the first shm write, the conversion's sy, the `cp`'s
//! MB/s, objrmap, `swap_out` calls), and what the two LRU lists hold when the `cp` starts — the
//! seed's "some gigs of free cache at the head of the lru" against Andrea's "million of dirty
//! swapcache in a row at the end". Then, every EVERY_S while the copy runs, so/bi and the walk's
//! calls since the last line. An observer: the run is the same without it.
//!
//! cargo run --profile ci -p vmlab-core --example aa24_box -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]
//! (the middle row: PROFILE linux-2.4.23aa1 with reclaim.objrmap_walk=true reclaim.shm_writepage_io=true)

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::mmzone::{LRU_ACTIVE_FILE as ACTIVE, LRU_INACTIVE_FILE as INACTIVE};
use vmlab_core::reproduce::shm_big_iron::figures;
use vmlab_core::sim::Sim;

/// What a page on the aa engine's lists is, for the copy-start table.
/// `shm2_*`: the second instance of Andrea's test (`vars.SHM2`), mapped by `SHM2PROCS` processes.
const KINDS: [&str; 9] = [
    "seg_mapped",
    "seg_unmapped",
    "ctx",
    "swapcache",
    "file_clean",
    "file_other",
    "anon",
    "shm2_mapped",
    "shm2_unmapped",
];

fn kind(k: &Kernel, p: u32, seg: u32, shm2: u32) -> usize {
    let i = p as usize;
    let f = k.fr.flags[i];
    if f & pg::SWAPCACHE != 0 {
        return 3;
    }
    if f & pg::ANON != 0 {
        return 6;
    }
    let m = k.fr.mapping[i];
    if (m as usize) < k.files.len() && k.files[m as usize].shmem {
        let mapped = k.fr.mapcount[i] > 0;
        return match (m == seg, m == shm2) {
            (true, _) => usize::from(!mapped),
            (_, true) => 7 + usize::from(!mapped),
            _ => 2,
        };
    }
    if k.fr.mapcount[i] == 0 && f & (pg::DIRTY | pg::LOCKED | pg::WRITEBACK) == 0 {
        4
    } else {
        5
    }
}

/// Pages of each kind on a list, and how far from the tail the first clean file page lies.
fn count(k: &Kernel, tail: u32, seg: u32, shm2: u32) -> ([u64; 9], Option<u64>) {
    let (mut n, mut first, mut e, mut at) = ([0u64; 9], None, tail, 0u64);
    while e != NIL {
        let c = kind(k, e, seg, shm2);
        n[c] += 1;
        if c == 4 && first.is_none() {
            first = Some(at);
        }
        at += 1;
        e = k.fr.links[e as usize].prev;
    }
    (n, first)
}

fn mib(pages: u64) -> u64 {
    pages * 4 / 1024
}

#[derive(Default)]
struct Seen {
    started: bool,
    /// `swap_out` calls when the copy started.
    calls_at_start: u64,
    calls: u64,
    objrmap: u64,
}

fn main() {
    let common::Census { mut sim, every_s } = common::setup("aa24_box");
    let seen = Rc::new(RefCell::new(Seen::default()));
    let s2 = Rc::clone(&seen);
    let (mut so, mut bi) = (0u64, 0u64);
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        let (Some(a), Some(lru)) = (sim.k.reclaim.aa24_stats(), sim.k.reclaim.global_lru()) else { return };
        let mut st = s2.borrow_mut();
        let s = sim.samples.last().cloned().unwrap_or_default();
        if st.started {
            (so, bi) = (so + s.so, bi + s.bi);
        }
        let t = sim.s.now / 1_000_000_000;
        if !st.started && sim.metrics.iter().any(|(n, _)| n == "cp_start") {
            st.started = true;
            let k = &sim.k;
            let file = |name: &str| k.files.iter().position(|f| f.name.contains(name)).map_or(NIL, |i| i as u32);
            let (seg, shm2) = (file("DBSGA"), file("SHM2SEG"));
            let (ina, first) = count(k, lru.lists[INACTIVE].tail, seg, shm2);
            let (act, _) = count(k, lru.lists[ACTIVE].tail, seg, shm2);
            println!("copy starts at {t} s: swpd {} MiB, cache {} MiB", s.swpd_kb / 1024, s.cache_kb / 1024);
            for (name, n) in [("inactive", ina), ("active", act)] {
                let cells: Vec<String> = KINDS.iter().zip(n).map(|(k, v)| format!("{k} {}", mib(v))).collect();
                println!("  {name} MiB: {}", cells.join(", "));
            }
            println!("  first clean file page from the inactive tail: {first:?} pages");
            (st.calls_at_start, st.calls, st.objrmap) = (a.swap_out_calls, a.swap_out_calls, a.objrmap_pages_freeable);
            println!("t cpMiB swpdMiB so_MiB bi_MiB swap_out_calls objrmap_MiB (since the last line)");
            return;
        }
        if st.started && t.is_multiple_of(every_s) {
            let cp = sim.metrics.iter().filter(|(n, _)| n.starts_with("cp_mib")).count() as u64 * 64;
            println!(
                "{t} {cp} {} {} {} {} {}",
                s.swpd_kb / 1024,
                so / 1024,
                bi / 1024,
                a.swap_out_calls - st.calls,
                mib(a.objrmap_pages_freeable - st.objrmap)
            );
            (so, bi, st.calls, st.objrmap) = (0, 0, a.swap_out_calls, a.objrmap_pages_freeable);
        }
    }));
    let wall = std::time::Instant::now();
    if let Err(e) = sim.run() {
        eprintln!("{e:?}");
        std::process::exit(1);
    }
    let r = sim.report(wall.elapsed().as_secs_f64());
    let f = figures(&r, &sim);
    let a = sim.k.reclaim.aa24_stats().cloned().unwrap_or_default();
    let kb = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{:.0}", x / 1024.0));
    println!(
        "row: swapcache_at_first_shm_write_MiB {} conversion_rows {} sy_pct_conversion {:.0} r_conversion {:.1} \
         cp_mb_per_s {:.1} cp_mib_read {:.0} objrmap_MiB {:.0} swap_out_calls {} swpd_max_MiB {}",
        kb(f.swapcache_kb_at_first_swapout),
        f.conversion_rows,
        f.sy_pct_conversion,
        f.r_conversion,
        f.cp_mb_per_s,
        f.cp_mib_done,
        f.objrmap_unmapped_kb / 1024.0,
        a.swap_out_calls,
        f.swpd_max_kb / 1024
    );
    let st = seen.borrow();
    if st.started {
        println!("  during the copy: swap_out calls {}", a.swap_out_calls - st.calls_at_start);
    }
}
