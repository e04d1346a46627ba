//! The `end` line of `detail=` (see `form.rs`): what ended one order-3 run — the pass that did,
//! Normal's free pages by order at the run's begin and end, and, for the aligned order-3
//! blocks the run made free, how their eight pages came free together. Per block: its pages
//! at the begin (free in a buddy block, free on a per-CPU list, on the inactive file list,
//! elsewhere); the pass in which its last page was freed; in how many of kswapd's isolations
//! (`isolate_lru_pages` calls) its reclaimed pages were taken; how far apart its inactive file
//! pages lay on that list at the begin — together at the tail (aged together), or apart (one
//! taken from the tail, the others as its order-3 neighbours, which 2.6.36's
//! `isolate_lru_pages` takes whatever their place on the list); and whether its file pages
//! belonged to one file at consecutive indices (one `read()` or readahead window), one file
//! apart, or several files. And, summed since the window began, the next owner of every page a
//! run's reclaim freed — reused straight from a per-CPU list or taken off the buddy lists — and
//! how many went to an owner on the CPU that freed them: whether the runs' pages come back as
//! page cache, which is what refills the file-only blocks the next runs free.

use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::{pg, NIL};
use vmlab_core::mmzone::{LRU_INACTIVE_FILE, MAX_ORDER};
use vmlab_core::stats::vmstat::Vm;

/// A frame's place at the run's begin.
const WHERE: [&str; 4] = ["buddy", "pcp", "inactive-file", "other"];
const NOT_ON_LIST: u32 = u32::MAX;
const UNSEEN: u8 = u8::MAX;
/// How a block's inactive file pages were handed out: within one burst of 16 of a CPU's
/// order-0 hand-outs from Normal, on one CPU further apart, on several CPUs, or (some) before
/// the observer began.
const HANDED: [&str; 4] = ["1cpu-burst", "1cpu-apart", "cpus", "unseen"];
/// Class groups of a freed page's next owner (`common::CLASSES` folded).
const NEXT: [&str; 4] = ["file", "anon", "tcp", "other"];
const NEXT_HANDED: u8 = 0x80;
/// A formed block's next owners: one order >= 3 request, eight page-cache pages, page cache
/// and anon, some TCP or other page.
const BLOCK_NEXT: [&str; 4] = ["whole", "8-file", "file+anon", "tcp/other"];

/// A block a run made free, followed to its next owners.
#[derive(Clone, Copy)]
struct Block {
    left: u8,
    /// Bits of `NEXT` groups seen, the first CPU, whether all on it, one request took all.
    groups: u8,
    cpu: u32,
    one_cpu: bool,
    whole: bool,
}

pub struct Ends {
    nz: usize,
    start: u32,
    /// Per frame, at the run's begin: its place (`WHERE`), and its rank on the inactive file
    /// list counted from the tail (`NOT_ON_LIST` off it).
    place: Vec<u8>,
    rank: Vec<u32>,
    /// Per frame on the inactive file list at the begin: its file and index then, and the CPU
    /// and that CPU's count of Normal's order-0 hand-outs when it was handed out.
    owner: Vec<(u32, u32)>,
    owner_handed: Vec<(u8, u32)>,
    /// Per frame, as it was last handed out (CPU `UNSEEN`: before the observer began).
    handed: Vec<(u8, u32)>,
    per_cpu: Vec<u32>,
    /// Per frame a run's reclaim freed: `1 + cpu` of the free until its next hand-out, then
    /// `NEXT_HANDED` with the same-CPU and off-the-buddy-lists bits until its class is known.
    next: Vec<u8>,
    off_buddy: Vec<bool>,
    /// Since the window began, the next hand-outs of the pages runs freed: [reused from a
    /// per-CPU list, taken off the buddy lists][class group `NEXT`], and how many on the CPU
    /// that freed them.
    next_use: [[u64; NEXT.len()]; 2],
    next_same_cpu: u64,
    /// Per frame of a block a run made free: the block's record in `blocks` until its eight
    /// frames have been handed out again.
    block_of: Vec<u32>,
    blocks: Vec<Block>,
    /// Blocks whose eight frames were all handed out again, by `BLOCK_NEXT`, and of the ones
    /// split among requests how many on one CPU.
    block_next: [u64; BLOCK_NEXT.len()],
    block_one_cpu: u64,
    /// Per frame freed by the run's reclaim: the pass and the isolation it was freed in.
    pass_at: Vec<u32>,
    isolation_at: Vec<u32>,
    /// kswapd's isolations so far, and the `pageoutrun` count and Normal's free pages by order
    /// at the run's begin.
    isolations: u32,
    passes0: u64,
    free0: [u64; 4],
    /// Normal's free pages in blocks of order >= 3 at each pass's check of Normal: the last
    /// value, and the passes in which it had risen since the pass before.
    o3_checked: u64,
    o3_rises: u32,
}

/// Normal's free pages in blocks of order 0, 1, 2 and >= 3.
fn by_order(k: &Kernel, nz: usize) -> [u64; 4] {
    let z = &k.zones[nz];
    [z.nr_free[0], z.nr_free[1] * 2, z.nr_free[2] * 4, crate::common::free_in_orders(z, 3..MAX_ORDER)]
}

impl Ends {
    pub fn new(k: &Kernel, nz: usize) -> Ends {
        let z = &k.zones[nz];
        let n = (z.end_pfn - z.start_pfn) as usize;
        Ends {
            nz,
            start: z.start_pfn,
            place: vec![0; n],
            rank: vec![NOT_ON_LIST; n],
            owner: vec![(0, 0); n],
            owner_handed: vec![(UNSEEN, 0); n],
            handed: vec![(UNSEEN, 0); n],
            per_cpu: Vec::new(),
            next: vec![0; n],
            off_buddy: vec![false; n],
            next_use: [[0; NEXT.len()]; 2],
            next_same_cpu: 0,
            block_of: vec![u32::MAX; n],
            blocks: Vec::new(),
            block_next: [0; BLOCK_NEXT.len()],
            block_one_cpu: 0,
            pass_at: vec![0; n],
            isolation_at: vec![0; n],
            isolations: 0,
            passes0: 0,
            free0: [0; 4],
            o3_checked: 0,
            o3_rises: 0,
        }
    }

    pub fn header() -> String {
        format!(
            "end t_s | passes, of them passes whose reclaim freed a formed block's last page | Normal free o0/o1/o2/o3+ pages begin > end | Normal o3+ pages at the last pass's check, passes whose checks saw o3+ rise | blocks formed: their pages at the begin {} | blocks whose last page reclaim freed in the last pass / earlier | reclaimed pages taken in 1 / 2 / 3+ isolations | inactive-file pages' spread on the list at the begin 0-7 / 8-31 / 32-511 / 512+ (deepest rank median, max) | file pages of 1 file consecutive / 1 file apart / 2+ files | file pages handed out {} | since the window began, the next owners of pages runs freed: reused from a per-CPU list {} ; taken off the buddy lists {} ; on the freeing CPU | since the window began, blocks runs made free whose 8 frames were handed out again, by their next owners {} (of the split ones, on one CPU)",
            WHERE.join("/"),
            HANDED.join(" / "),
            NEXT.join("/"),
            NEXT.join("/"),
            BLOCK_NEXT.join("/")
        )
    }

    /// A pass's 8 x HIGH check of Normal: its blocks of order >= 3 as the pass begins on it.
    pub fn checked(&mut self, k: &Kernel) {
        let o3 = by_order(k, self.nz)[3];
        self.o3_rises += (o3 > self.o3_checked) as u32;
        self.o3_checked = o3;
    }

    /// An order-0 page of Normal handed out on `cpu`.
    pub fn handed(&mut self, pfn: u32, cpu: u32) {
        let c = cpu as usize;
        if self.per_cpu.len() <= c {
            self.per_cpu.resize(c + 1, 0);
        }
        self.per_cpu[c] += 1;
        let i = (pfn - self.start) as usize;
        self.handed[i] = (cpu.min(UNSEEN as u32 - 1) as u8, self.per_cpu[c]);
        if (1..NEXT_HANDED).contains(&self.next[i]) {
            let same = self.next[i] as u32 == cpu + 1;
            self.next[i] = NEXT_HANDED | (same as u8) << 1 | self.off_buddy[i] as u8;
        }
    }

    /// A page of Normal taken off the buddy lists (a refill's or an order > 0 request's take).
    pub fn taken(&mut self, pfn: u32, order: u32) {
        let i = (pfn - self.start) as usize;
        let end = (i + (1usize << order)).min(self.next.len());
        for j in i..end {
            self.off_buddy[j] = self.next[j] != 0;
        }
    }

    /// Follow the blocks a run made free to their next owners.
    pub fn follow(&mut self, blocks: &[u32]) {
        for &b in blocks {
            let id = self.blocks.len() as u32;
            self.blocks.push(Block { left: 8, groups: 0, cpu: u32::MAX, one_cpu: true, whole: false });
            let i = (b - self.start) as usize;
            self.block_of[i..i + 8].fill(id);
        }
    }

    /// A formed block's frames `i..i + pages` handed out to an owner of `group` on `cpu`.
    fn block_handed(&mut self, i: usize, pages: usize, group: usize, cpu: u32) {
        for j in i..(i + pages).min(self.block_of.len()) {
            let id = std::mem::replace(&mut self.block_of[j], u32::MAX);
            let Some(b) = self.blocks.get_mut(id as usize) else { continue };
            b.whole |= pages >= 8;
            b.groups |= 1 << group;
            if b.cpu == u32::MAX {
                b.cpu = cpu;
            }
            b.one_cpu &= b.cpu == cpu;
            b.left -= 1;
            if b.left == 0 {
                let kind = if b.whole {
                    0
                } else if b.groups == 1 {
                    1
                } else if b.groups == 0b11 {
                    2
                } else {
                    3
                };
                self.block_next[kind] += 1;
                self.block_one_cpu += (kind > 0 && b.one_cpu) as u64;
            }
        }
    }

    /// The class (`common::CLASSES` index) of the owner `pages` pages handed out went to.
    pub fn owner_known(&mut self, pfn: u32, pages: u64, class: usize) {
        let i = (pfn - self.start) as usize;
        let group = match class {
            0 => 0,
            1 => 1,
            9 => 2,
            _ => 3,
        };
        let cpu = self.handed[i].0 as u32;
        self.block_handed(i, pages as usize, group, cpu);
        let state = self.next[i];
        if state & NEXT_HANDED == 0 {
            return;
        }
        self.next_use[(state & 1) as usize][group] += 1;
        self.next_same_cpu += (state >> 1 & 1) as u64;
        self.next[i] = 0;
        self.off_buddy[i] = false;
    }

    pub fn isolated(&mut self) {
        self.isolations = self.isolations.wrapping_add(1);
    }

    pub fn begin(&mut self, k: &Kernel) {
        let z = &k.zones[self.nz];
        for p in z.start_pfn..z.end_pfn {
            let i = (p - self.start) as usize;
            self.rank[i] = NOT_ON_LIST;
            self.place[i] = if k.fr.has(p, pg::PCP) {
                1
            } else if k.page_is_free(self.nz, p) {
                0
            } else {
                3
            };
        }
        let mut p = z.lruvec.lists[LRU_INACTIVE_FILE].tail;
        let mut r = 0u32;
        while p != NIL {
            let i = (p - self.start) as usize;
            self.place[i] = 2;
            self.rank[i] = r;
            self.owner[i] = (k.fr.mapping[p as usize], k.fr.index[p as usize]);
            self.owner_handed[i] = self.handed[i];
            r += 1;
            p = k.fr.links[p as usize].prev;
        }
        self.passes0 = k.ev.get(Vm::Pageoutrun);
        self.free0 = by_order(k, self.nz);
        (self.o3_checked, self.o3_rises) = (self.free0[3], 0);
    }

    /// Frame `i` freed by the run's reclaim.
    pub fn freed(&mut self, k: &Kernel, i: usize) {
        self.next[i] = (k.trace_at.cpu.min(NEXT_HANDED as u32 - 2) + 1) as u8;
        self.off_buddy[i] = false;
        self.pass_at[i] = (k.ev.get(Vm::Pageoutrun) - self.passes0) as u32;
        self.isolation_at[i] = self.isolations;
    }

    /// The line for the blocks (first frames) the run made free; `by_run(i)`: frame `i` freed by
    /// the run's reclaim.
    pub fn line(&self, k: &Kernel, blocks: &[u32], by_run: impl Fn(usize) -> bool) -> String {
        let passes = (k.ev.get(Vm::Pageoutrun) - self.passes0) as u32;
        let mut place = [0u64; WHERE.len()];
        let (mut last, mut earlier) = (0u64, 0u64);
        let mut forming_passes: Vec<u32> = Vec::new();
        let mut isolations = [0u64; 3];
        let mut spread = [0u64; 4];
        let mut deepest = Vec::new();
        let mut files = [0u64; 3];
        let mut handed = [0u64; HANDED.len()];
        for &b in blocks {
            let idx: Vec<usize> = (b..b + 8).map(|p| (p - self.start) as usize).collect();
            for &i in &idx {
                place[self.place[i] as usize] += 1;
            }
            let freed: Vec<usize> = idx.iter().copied().filter(|&i| by_run(i)).collect();
            let done = freed.iter().map(|&i| self.pass_at[i]).max().unwrap_or(0);
            if done == passes {
                last += 1;
            } else {
                earlier += 1;
            }
            if !forming_passes.contains(&done) {
                forming_passes.push(done);
            }
            let mut iso: Vec<u32> = freed.iter().map(|&i| self.isolation_at[i]).collect();
            iso.sort_unstable();
            iso.dedup();
            if !iso.is_empty() {
                isolations[(iso.len() - 1).min(2)] += 1;
            }
            let ranks: Vec<u32> = idx.iter().map(|&i| self.rank[i]).filter(|&r| r != NOT_ON_LIST).collect();
            if let (Some(lo), Some(hi)) = (ranks.iter().min(), ranks.iter().max()) {
                spread[match hi - lo {
                    0..=7 => 0,
                    8..=31 => 1,
                    32..=511 => 2,
                    _ => 3,
                }] += 1;
                deepest.push(*hi);
            }
            // The block's file pages as they were at the begin (the frames hold them no longer).
            let owners: Vec<(u32, u32)> = idx.iter().filter(|&&i| self.place[i] == 2).map(|&i| self.owner[i]).collect();
            files[classify_files(&owners)] += owners.len().min(1) as u64;
            let how: Vec<(u8, u32)> =
                idx.iter().filter(|&&i| self.place[i] == 2).map(|&i| self.owner_handed[i]).collect();
            if !how.is_empty() {
                handed[classify_handed(&how)] += 1;
            }
        }
        deepest.sort_unstable();
        let join = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/");
        let end = by_order(k, self.nz);
        format!(
            "end {:.3} | {} {} | {} > {} | {} {} | {} | {}/{} | {} | {} ({} {}) | {} | {} | {} ; {} ; {} | {} ({})",
            k.now as f64 / 1e9,
            passes,
            forming_passes.len(),
            join(&self.free0),
            join(&end),
            self.o3_checked,
            self.o3_rises,
            join(&place),
            last,
            earlier,
            join(&isolations),
            join(&spread),
            deepest.get(deepest.len() / 2).copied().unwrap_or(0),
            deepest.last().copied().unwrap_or(0),
            join(&files),
            join(&handed),
            join(&self.next_use[0]),
            join(&self.next_use[1]),
            self.next_same_cpu,
            join(&self.block_next),
            self.block_one_cpu,
        )
    }
}

/// 0: one file at consecutive indices; 1: one file, not consecutive; 2: several files.
fn classify_files(owners: &[(u32, u32)]) -> usize {
    let Some(&(m, _)) = owners.first() else { return 0 };
    if owners.iter().any(|&(o, _)| o != m) {
        return 2;
    }
    let mut ix: Vec<u32> = owners.iter().map(|&(_, i)| i).collect();
    ix.sort_unstable();
    if ix.windows(2).all(|w| w[1] == w[0] + 1) {
        0
    } else {
        1
    }
}

/// `HANDED`'s index for a block's inactive file pages' hand-outs (CPU, that CPU's count).
fn classify_handed(how: &[(u8, u32)]) -> usize {
    if how.iter().any(|&(c, _)| c == UNSEEN) {
        return 3;
    }
    if how.iter().any(|&(c, _)| c != how[0].0) {
        return 2;
    }
    let lo = how.iter().map(|&(_, n)| n).min().unwrap_or(0);
    let hi = how.iter().map(|&(_, n)| n).max().unwrap_or(0);
    if hi - lo < 16 {
        0
    } else {
        1
    }
}
