//! Which of a zone's populations are clustered: for each kind of page (file, anon, mlocked, slab
//! by cache, page tables, kernel stacks, `[[kmem]]` pages, socket pages, the boot memmap, free)
//! how many aligned order-3 blocks and pageblocks hold at least one of its pages, against what
//! the same number of pages spread at random over the zone would occupy. A population placed
//! page by page at random occupies 1 − (1 − p)^n of the blocks of n pages (p its share of the
//! zone); a clustered one occupies fewer — the ratio `random/observed` is > 1. And the freeable
//! order-3 blocks (only free and reclaimable pages: with swap off, file pages) against the
//! random expectation (free + file share)^8.
//!
//! Each page is tagged when it is allocated (`mm_page_alloc`: the time, the GFP class, the
//! order), so each population is also split by age: the share of its pages allocated in the
//! first BOOT_S seconds (the boot placement, when Normal is empty and first in the zonelist).
//! An observer: the run is the same as without it.
//!
//! A second line per sample ("buddies …") says why the zone's free single pages and pairs stay
//! unmerged: for each free block of order 0 (and 1) on the buddy lists, what holds its buddy —
//! the block `__free_one_page` would have merged it with (physical index xor the block size) —
//! by the population above, a per-CPU list page counted apart; kernel order-0 pages that are
//! neither slab, kmem nor page tables are TCP send pages in the seed-001 history (the line
//! prints the sockets' page count beside them).
//!
//! cargo run --release -p vmlab-core --example block_census -- SCENARIO PROFILE EVERY_S [KEY=VALUE...]
//! (env BOOT_S, default 600: the age split.)

mod common;

use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::sim::Sim;
use vmlab_core::trace::{GfpKind, Tracepoint, Tracer};

/// Per frame: the second it was last allocated and the GFP class of that allocation
/// (0 movable, 1 kernel, 2 atomic) with its order in the upper bits.
struct Birth {
    at_s: Vec<u32>,
    class: Vec<u8>,
}

impl Tracer for Birth {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if let Tracepoint::MmPageAlloc { order, pfn, gfp, .. } = *ev {
            let c = match gfp {
                GfpKind::HighuserMovable => 0u8,
                GfpKind::Kernel => 1,
                GfpKind::Atomic => 2,
            } | ((order.min(15) as u8) << 4);
            let t = (k.now / 1_000_000_000) as u32;
            for q in pfn..pfn + (1 << order) {
                self.at_s[q as usize] = t;
                self.class[q as usize] = c;
            }
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

const KINDS: [&str; 14] = [
    "free",
    "file",
    "anon",
    "mlocked",
    "slab:fs",
    "slab:kmem",
    "slab:atomic",
    "slab:other",
    "pgtable",
    "stack",
    "kmem-page",
    "other-kernel",
    "memmap",
    "other",
];
const FREE: usize = 0;
const FILE: usize = 1;
const MEMMAP: usize = 12;

/// Each frame's population.
fn classify(sim: &Sim, birth: &Birth) -> Vec<u8> {
    let k = &sim.k;
    let n = k.fr.flags.len();
    let mut slab_owner = vec![0u8; n];
    for f in &k.files {
        for p in [f.dentry, f.inode] {
            if p != NIL {
                slab_owner[p as usize] = 4;
            }
        }
    }
    let mut kmem_page = vec![false; n];
    for src in &sim.kmem {
        for &(_, _, p, _) in src.live.iter() {
            if src.cache.is_some() {
                slab_owner[p as usize] = 5;
            } else {
                kmem_page[p as usize] = true;
            }
        }
    }
    let mut kind = vec![0u8; n];
    let mut p = 0usize;
    while p < n {
        let f = k.fr.flags[p];
        if f & pg::SLAB != 0 {
            let head = p;
            let len = 1usize << k.fr.aux[head].min(10);
            let c = match slab_owner[head] {
                0 if birth.class[head] & 0xf == 2 => 6,
                0 => 7,
                c => c,
            };
            let end = (head + len).min(n);
            for (kq, f) in kind[head..end].iter_mut().zip(&k.fr.flags[head..end]) {
                if f & pg::SLAB != 0 {
                    *kq = c;
                }
            }
            p = head + len;
            continue;
        }
        let zid = k.zone_of(p as u32);
        kind[p] = if k.zones[zid].spans(p as u32) && k.page_is_free(zid, p as u32) {
            FREE as u8
        } else if f & (pg::MLOCKED | pg::UNEVICTABLE) != 0 {
            3
        } else if f & pg::LRU != 0 {
            if f & (pg::SWAPBACKED | pg::ANON) != 0 {
                2
            } else {
                1
            }
        } else if f & pg::PGTABLE != 0 {
            8
        } else if f & pg::RESERVED != 0 {
            MEMMAP as u8
        } else if kmem_page[p] {
            10
        } else if birth.class[p] & 0xf == 1 && birth.class[p] >> 4 == 1 {
            9
        } else if birth.class[p] & 0xf != 0 {
            11
        } else {
            13
        };
        p += 1;
    }
    kind
}

/// Per population: pages, order-3 blocks and pageblocks holding one or more of its pages, and
/// pages born in the first `boot_s` seconds; over the blocks of the zone with no memmap page.
fn census(sim: &Sim, birth: &Birth, kind: &[u8], zid: usize, boot_s: u32) -> String {
    let z = &sim.k.zones[zid];
    let mut out = format!("{}:", z.kind.name());
    let mut pages = [0u64; 14];
    let mut born = [0u64; 14];
    let mut occ = [[0u64; 14]; 2];
    let (mut blocks, mut freeable) = ([0u64; 2], 0u64);
    let mut total = 0u64;
    for (bi, size) in [(0usize, 8u32), (1, 512)] {
        let first = z.start_pfn + (size - z.phys_start_pfn % size) % size;
        let mut b = first;
        while b + size <= z.end_pfn {
            let mut seen = [false; 14];
            for q in b..b + size {
                seen[kind[q as usize] as usize] = true;
            }
            if !seen[MEMMAP] {
                blocks[bi] += 1;
                for (i, s) in seen.iter().enumerate() {
                    occ[bi][i] += *s as u64;
                }
                if bi == 0 {
                    if seen.iter().enumerate().all(|(i, s)| !s || i == FREE || i == FILE) {
                        freeable += 1;
                    }
                    for q in b..b + size {
                        let c = kind[q as usize] as usize;
                        pages[c] += 1;
                        born[c] += (birth.at_s[q as usize] < boot_s) as u64;
                        total += 1;
                    }
                }
            }
            b += size;
        }
    }
    for i in 0..14 {
        if pages[i] == 0 {
            continue;
        }
        let share = pages[i] as f64 / total as f64;
        let rnd = |bi: usize, size: i32| blocks[bi] as f64 * (1.0 - (1.0 - share).powi(size));
        out += &format!(
            " {}={} ({:.1}%, boot {:.0}%) o3 {}/{:.0} ({:.2}) pb {}/{:.0} ({:.2});",
            KINDS[i],
            pages[i],
            share * 100.0,
            born[i] as f64 * 100.0 / pages[i] as f64,
            occ[0][i],
            rnd(0, 8),
            rnd(0, 8) / occ[0][i].max(1) as f64,
            occ[1][i],
            rnd(1, 512),
            rnd(1, 512) / occ[1][i].max(1) as f64,
        );
    }
    let ok = (pages[FREE] + pages[FILE]) as f64 / total.max(1) as f64;
    out += &format!(
        " freeable o3 {} of {} = {:.2}% (random {:.2}%)",
        freeable,
        blocks[0],
        freeable as f64 * 100.0 / blocks[0].max(1) as f64,
        ok.powi(8) * 100.0
    );
    out
}

/// For the zone's free blocks of order 0 and 1 on the buddy lists: what holds each one's buddy.
fn buddies(sim: &Sim, birth: &Birth, kind: &[u8], zid: usize) -> String {
    let k = &sim.k;
    let z = &k.zones[zid];
    // KINDS, then "pcp", "kernel-o0", "outside" (the buddy is not in the zone).
    let (pcp, ko0, outside) = (14usize, 15usize, 16usize);
    let mut held = [[0u64; 17]; 2];
    let mut n = [0u64; 2];
    for pfn in z.start_pfn..z.end_pfn {
        let f = k.fr.flags[pfn as usize];
        let order = (k.fr.aux[pfn as usize] & 0xf) as u32;
        if f & pg::BUDDY == 0 || order > 1 {
            continue;
        }
        n[order as usize] += 1;
        // The profile's buddy grid: physical frame numbers, or (a what-if row) zone-relative.
        let base = if k.profile.buddy_zone_relative { 0 } else { z.phys_start_pfn };
        let bidx = (pfn - z.start_pfn + base) ^ (1 << order);
        let Some(b) = (bidx + z.start_pfn).checked_sub(base).filter(|&b| z.spans(b)) else {
            held[order as usize][outside] += 1;
            continue;
        };
        // The buddy block's first page that is not free on the buddy lists says who holds it.
        let q = (b..b + (1 << order)).find(|&q| k.fr.has(q, pg::PCP) || !k.page_is_free(zid, q)).unwrap_or(b);
        let c = if k.fr.flags[q as usize] & pg::PCP != 0 {
            pcp
        } else if kind[q as usize] == 11 && birth.class[q as usize] == 1 {
            ko0
        } else {
            kind[q as usize] as usize
        };
        held[order as usize][c] += 1;
    }
    let mut out = format!("{}:", z.kind.name());
    for o in 0..2 {
        out += &format!(" order {o} blocks {}, buddy held by", n[o]);
        for (i, &c) in held[o].iter().enumerate() {
            if c == 0 {
                continue;
            }
            let name = match i {
                14 => "pcp",
                15 => "kernel-o0",
                16 => "outside",
                _ => KINDS[i],
            };
            out += &format!(" {name}={c} ({:.1}%)", c as f64 * 100.0 / n[o].max(1) as f64);
        }
        out += ";";
    }
    out
}

fn main() {
    let common::Census { mut sim, every_s } = common::setup("block_census");
    let boot_s: u32 = std::env::var("BOOT_S").ok().and_then(|v| v.parse().ok()).unwrap_or(600);
    let n = sim.k.fr.flags.len();
    sim.k.attach_tracer(Box::new(Birth { at_s: vec![0; n], class: vec![0; n] }));
    sim.interval = every_s * 1_000_000_000;
    println!(
        "t_h | per zone: population=pages (share of the zone's blocks without memmap, boot: born before BOOT_S) o3 occupied/random (random/occupied) pb occupied/random (ratio); freeable o3 blocks (random)"
    );
    sim.on_sample = Some(Box::new(move |sim: &mut Sim| {
        let Some(birth) = sim.k.tracer::<Birth>() else { return };
        let kind = classify(sim, birth);
        let mut line = format!("{:.2} |", sim.s.now as f64 / 3.6e12);
        for (zid, z) in sim.k.zones.iter().enumerate() {
            if z.present >= 8192 {
                line += &format!(" {} |", census(sim, birth, &kind, zid, boot_s));
            }
        }
        println!("{line}");
        let mut line = format!("buddies {:.2} |", sim.s.now as f64 / 3.6e12);
        for (zid, z) in sim.k.zones.iter().enumerate() {
            if z.present >= 8192 {
                line += &format!(" {} |", buddies(sim, birth, &kind, zid));
            }
        }
        println!("{line} socket pages {}", sim.k.g.sock);
    }));
    if let Err(e) = sim.run() {
        eprintln!("{}", e.message);
        std::process::exit(1);
    }
}
