//! What 2.4-aa's `shrink_cache` meets at the inactive tail, and where reclaim's time goes
//! (seed 002): every EVERY_S, the `vmstat` row, the `cp`'s progress, the aa engine's counters
//! since the last line (writepages, pages freed by the scan and the clean pass, sleeps on
//! `PG_launder` pages, `swap_out` calls, objrmap), and the inactive list by what each page is —
//! in the first sixth from the tail (one `shrink_cache` call's `max_scan`) and in all — with the
//! distance from the tail to the first page `shrink_cache` could free at once. An observer: the
//! run is the same without it.
//!
//! cargo run --profile ci -p vmlab-core --example aa24_census -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]

mod common;

use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::mmzone::{LRU_ACTIVE_FILE as ACTIVE, LRU_INACTIVE_FILE as INACTIVE};
use vmlab_core::sim::Sim;

/// Page classes, in print order.
const NAMES: [&str; 12] = [
    "seg_mapped",
    "seg_dirty",
    "seg_clean",
    "ctx_mapped",
    "ctx_dirty",
    "ctx_clean",
    "swc_dirty",
    "swc_io",
    "swc_clean",
    "file_clean",
    "file_other",
    "anon",
];

fn class(k: &Kernel, p: u32, seg: u32) -> usize {
    let i = p as usize;
    let f = k.fr.flags[i];
    if f & pg::SWAPCACHE != 0 {
        return if f & (pg::LOCKED | pg::WRITEBACK) != 0 {
            7
        } else if f & pg::DIRTY != 0 {
            6
        } else {
            8
        };
    }
    if f & pg::ANON != 0 {
        return 11;
    }
    let m = k.fr.mapping[i];
    let mapped = k.fr.mapcount[i] > 0;
    if (m as usize) < k.files.len() && k.files[m as usize].shmem {
        let base = if m == seg { 0 } else { 3 };
        return base
            + if mapped {
                0
            } else if f & pg::DIRTY != 0 {
                1
            } else {
                2
            };
    }
    if !mapped && f & (pg::DIRTY | pg::LOCKED | pg::WRITEBACK) == 0 {
        9
    } else {
        10
    }
}

fn main() {
    let common::Census { mut sim, every_s } = common::setup("aa24_census");
    println!(
        "t cpMiB r sy so bi | writepages freed clean_freed launder_waits swap_out(ok) objrmap_freeable walk_unmapped | \
         inactive first-clean-at | tail/6: {} | all inactive: same | active: seg ctx file anon swc",
        NAMES.join(" ")
    );
    let mut prev = [0u64; 8];
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        if !sim.s.now.is_multiple_of(every_s * 1_000_000_000) {
            return;
        }
        // The 2.4-aa engine keeps its global lists on the file LRU indices; its counters say it runs.
        let (Some(a), Some(lru)) = (sim.k.reclaim.aa24_stats(), sim.k.reclaim.global_lru()) else { return };
        let k = &sim.k;
        let seg = k.files.iter().position(|f| f.name.contains("DBSGA")).map_or(NIL, |i| i as u32);
        let cp = sim.metrics.iter().filter(|(n, _)| n.starts_with("cp_mib")).count() as u64 * 64;
        let s = sim.samples.last().cloned().unwrap_or_default();
        let now = [
            a.writepages,
            a.freed,
            a.clean_pass_freed,
            a.launder_waits,
            a.swap_out_calls,
            a.swap_out_success,
            a.objrmap_pages_freeable,
            a.walk_unmapped,
        ];
        let d: Vec<u64> = now.iter().zip(prev.iter()).map(|(n, p)| n - p).collect();
        prev = now;
        let len = lru.lists[INACTIVE].len;
        let window = (len + lru.lists[ACTIVE].len) / 6;
        let (mut tail, mut all) = ([0u64; 12], [0u64; 12]);
        let mut first_clean = None;
        let (mut e, mut n) = (lru.lists[INACTIVE].tail, 0u64);
        while e != NIL {
            let c = class(k, e, seg);
            all[c] += 1;
            if n < window {
                tail[c] += 1;
            }
            if first_clean.is_none() && matches!(c, 2 | 5 | 8 | 9) {
                first_clean = Some(n);
            }
            n += 1;
            e = k.fr.links[e as usize].prev;
        }
        let mut act = [0u64; 5];
        let mut e = lru.lists[ACTIVE].tail;
        while e != NIL {
            let c = class(k, e, seg);
            act[match c {
                0..=2 => 0,
                3..=5 => 1,
                9 | 10 => 2,
                11 => 3,
                _ => 4,
            }] += 1;
            e = k.fr.links[e as usize].prev;
        }
        let j = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ");
        println!(
            "{} {cp} {} {} {} {} | {} {} ({}) {} {} | {len} {} | {} | {} | {}",
            sim.s.now / 1_000_000_000,
            s.r,
            s.sy,
            s.so,
            s.bi,
            j(&d[..4]),
            d[4],
            d[5],
            d[6],
            d[7],
            first_clean.map_or("-".to_string(), |x| x.to_string()),
            j(&tail),
            j(&all),
            j(&act),
        );
    }));
    if let Err(e) = sim.run() {
        eprintln!("{e:?}");
        std::process::exit(1);
    }
}
