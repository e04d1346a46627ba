//! What 2.4-aa's `shrink_cache` meets at the inactive tail, and where reclaim's time goes
//! (seed 002): every EVERY_S, the `vmstat` row, the `cp`'s progress, the aa engine's counters
//! since the last line (writepages, pages freed by the scan and the clean pass, sleeps on
//! `PG_launder` pages, `swap_out` calls, objrmap), and the inactive list by what each page is —
//! in the first sixth from the tail (one `shrink_cache` call's `max_scan`) and in all — with the
//! distance from the tail to the first page `shrink_cache` could free at once. An observer: the
//! run is the same without it.
//!
//! A second part (seed 002's point 3, history §24) follows the database's segment and the copy:
//! `so`/`si`/`bi` summed over the EVERY_S rows, major faults and PTEs objrmap cleared since the
//! last line; the segment's pages resident / in the swap cache / on swap only, and how many went
//! to swap and came back since the last line (a lower bound: a page out and back between two
//! lines is not seen); and, from the inactive tail, where the copy's first clean page lies and
//! how many shm pages (of them the segment's) lie ahead of it; then `refill_inactive`'s pages
//! looked at and deactivated, and the activations, since the last line.
//!
//! cargo run --profile ci -p vmlab-core --example aa24_census -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]

mod common;

use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::mmzone::{LRU_ACTIVE_FILE as ACTIVE, LRU_INACTIVE_FILE as INACTIVE};
use vmlab_core::sim::Sim;
use vmlab_core::stats::vmstat::Vm;

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
         inactive first-clean-at | tail/6: {} | all inactive: same | active: seg ctx file anon swc | \
         so_sum si_sum bi_sum majflt objrmap_ptes | seg: resident swc swapped out_since back_since | \
         cp_first_at shm_ahead seg_ahead | pgrefill pgdeactivate pgactivate",
        NAMES.join(" ")
    );
    let mut prev = [0u64; 8];
    let mut prev2 = [0u64; 2];
    let mut prev3 = [0u64; 3];
    // The segment's pages that were in swap (a slot in its index) at the last line.
    let mut seg_was_out: Vec<bool> = Vec::new();
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        if !sim.s.now.is_multiple_of(every_s * 1_000_000_000) {
            return;
        }
        // The 2.4-aa engine keeps its global lists on the file LRU indices; its counters say it runs.
        let (Some(a), Some(lru)) = (sim.k.reclaim.aa24_stats(), sim.k.reclaim.global_lru()) else { return };
        let k = &sim.k;
        let seg = k.files.iter().position(|f| f.name.contains("DBSGA")).map_or(NIL, |i| i as u32);
        let backup = k.files.iter().position(|f| f.name.contains("backup")).map_or(NIL, |i| i as u32);
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
        let (mut cp_first, mut shm_ahead, mut seg_ahead) = (None, 0u64, 0u64);
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
            if cp_first.is_none() {
                let f = k.fr.flags[e as usize];
                let m = k.fr.mapping[e as usize];
                if c == 9 && m == backup {
                    cp_first = Some(n);
                } else if f & pg::SWAPBACKED != 0 && f & pg::ANON == 0 {
                    shm_ahead += 1;
                    seg_ahead += (m == seg) as u64;
                }
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
        let from = sim.s.now as f64 / 1e9 - every_s as f64;
        let rows = sim.samples.iter().rev().take_while(|r| r.t_s > from + 1e-9);
        let (so, si, bi) = rows.fold((0, 0, 0), |(a, b, c), r| (a + r.so, b + r.si, c + r.bi));
        let now2 = [k.ev.get(Vm::Pgmajfault), a.objrmap_unmapped];
        let d2 = [now2[0] - prev2[0], now2[1] - prev2[1]];
        prev2 = now2;
        let now3 = [k.ev.get(Vm::Pgrefill), k.ev.get(Vm::Pgdeactivate), k.ev.get(Vm::Pgactivate)];
        let d3: Vec<u64> = now3.iter().zip(prev3.iter()).map(|(n, p)| n - p).collect();
        prev3 = now3;
        let (mut resident, mut swc, mut swapped, mut out_since, mut back_since) = (0u64, 0u64, 0u64, 0u64, 0u64);
        if let Some(f) = k.files.get(seg as usize) {
            seg_was_out.resize(f.pages.len(), false);
            for (i, was) in seg_was_out.iter_mut().enumerate() {
                let slot = f.swapped.get(i).copied().unwrap_or(0);
                let out = slot != 0;
                if f.pages[i] != NIL {
                    resident += 1;
                } else if out && k.swap.as_ref().is_some_and(|sw| sw.cache[slot as usize - 1] != NIL) {
                    swc += 1;
                } else if out {
                    swapped += 1;
                }
                out_since += (out && !*was) as u64;
                back_since += (!out && *was) as u64;
                *was = out;
            }
        }
        println!(
            "{} {cp} {} {} {} {} | {} {} ({}) {} {} | {len} {} | {} | {} | {} | {so} {si} {bi} {} {} | \
             {resident} {swc} {swapped} {out_since} {back_since} | {} {shm_ahead} {seg_ahead} | {}",
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
            d2[0],
            d2[1],
            cp_first.map_or("-".to_string(), |x| x.to_string()),
            j(&d3),
        );
    }));
    if let Err(e) = sim.run() {
        eprintln!("{e:?}");
        std::process::exit(1);
    }
}
