//! The `form` line of `detail=`: which aligned order-3 blocks of Normal an order-3 kswapd run
//! made free (outside the reserve pageblocks), and what their eight pages were when the run
//! began. For the file pages among them, where they came from: how many buddy takes
//! (`mm_page_alloc_zone_locked`) each block's file pages came in — one `rmqueue_bulk` refill
//! hands out the pages of a split block in physical order, so a block filled by one refill
//! holds consecutive pages of one requester —, the order of the free block each page was split
//! from (or that it was reused from a per-CPU list after an order-0 free, never reaching the
//! buddy lists), and how long before the run each was taken.
//!
//! With it an `fpg` line per order-3 run follows the run's own frees page by page (`freed.rs`):
//! the Normal pages reclaim freed in the run, where they were at its end, how each had been
//! handed out (reused from a per-CPU list, or taken off the buddy lists by a refill —
//! `rmqueue_bulk` — for which migrate type, and the largest block that refill split), how long
//! before; what the pages of the blocks the run made were at its begin; and, for the freed
//! pages whose aligned order-3 block did not come free, what held the rest of the block.

use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{MAX_ORDER, MIGRATE_RESERVE};

/// Page states at the run's begin.
pub(crate) const STATES: [&str; 9] =
    ["free", "file-clean", "file-dirty", "file-mapped", "anon", "slab", "pgtable", "mlocked", "other"];
pub(crate) const FREE: u8 = 0;
const FILE_STATES: std::ops::RangeInclusive<u8> = 1..=3;
/// `split_order` of a page freed at order 0 (onto a per-CPU list) and not taken off the buddy
/// lists since; once handed out again it was reused from the per-CPU list.
const ON_PCP: u8 = 254;
pub(crate) const UNKNOWN: u8 = u8::MAX;
/// Added to `req` for a take by an order > 0 request (`buffered_rmqueue`'s own `__rmqueue`).
pub(crate) const REQ_DIRECT: u8 = 0x40;

pub struct Form {
    nz: usize,
    start: u32,
    /// Per frame of Normal, set when it is taken off the buddy lists: the number of
    /// `mm_page_alloc` events before the take (pages of one refill share it), the order of the
    /// block it was split from, and the second it was taken.
    take: Vec<u32>,
    split_order: Vec<u8>,
    taken_s: Vec<u32>,
    /// Per frame, set with `take`: the requested migrate type (`REQ_DIRECT` added for an
    /// order > 0 request's take, which is no refill), and the largest block order split so far
    /// by the refill that took it — its pages after that split are the split block's, handed
    /// out in physical order (`expand` queues the upper halves at the lists' heads).
    pub(crate) req: Vec<u8>,
    pub(crate) origin: Vec<u8>,
    batch: (u32, u8),
    allocs: u32,
    /// At the current order-3 run's begin: each frame's state, and which aligned order-3 blocks
    /// were free already.
    snap: Vec<u8>,
    was_free: Vec<bool>,
    begun_s: u32,
    /// The run's own frees (`fpg` line).
    pub(crate) freed: crate::freed::Freed,
    /// What ended the run (`end` line).
    pub(crate) ends: crate::ends::Ends,
}

impl Form {
    pub fn new(k: &Kernel, nz: usize) -> Form {
        let z = &k.zones[nz];
        let n = (z.end_pfn - z.start_pfn) as usize;
        Form {
            nz,
            start: z.start_pfn,
            take: vec![u32::MAX; n],
            split_order: vec![UNKNOWN; n],
            taken_s: vec![0; n],
            req: vec![UNKNOWN; n],
            origin: vec![UNKNOWN; n],
            batch: (u32::MAX, 0),
            allocs: 0,
            snap: Vec::new(),
            was_free: Vec::new(),
            begun_s: 0,
            freed: crate::freed::Freed::new(n),
            ends: crate::ends::Ends::new(k, nz),
        }
    }

    pub fn header() -> String {
        format!(
            "form t_s | order-3 blocks formed outside the reserve (free o3+ blocks outside it at end) | their pages at the run's begin {} | blocks whose file pages came in 1 / 2 / 3+ takes | file pages split from a block of order 0 / 1 / 2 / 3+, reused from a pcp list (unknown) | file pages' age at the run's begin s: median, largest | their pages free at the begin / freed by this run's reclaim / by others\n{}\n{}",
            STATES.join("/"),
            crate::freed::Freed::header(),
            crate::ends::Ends::header()
        )
    }

    pub fn alloc(&mut self) {
        self.allocs = self.allocs.wrapping_add(1);
    }

    pub fn taken(&mut self, k: &Kernel, pfn: u32, order: u32, block_order: u32, mt: usize) {
        if !k.zones[self.nz].spans(pfn) {
            return;
        }
        let i = (pfn - self.start) as usize;
        let end = (i + (1usize << order)).min(self.take.len());
        self.take[i..end].fill(self.allocs);
        self.split_order[i..end].fill(block_order as u8);
        self.taken_s[i..end].fill((k.now / 1_000_000_000) as u32);
        // One refill's takes all come before its hand-out, so they share `allocs`.
        let origin = if order == 0 && self.batch.0 == self.allocs {
            self.batch.1.max(block_order as u8)
        } else {
            block_order as u8
        };
        self.batch = (self.allocs, origin);
        self.req[i..end].fill(mt as u8 | if order > 0 { REQ_DIRECT } else { 0 });
        self.origin[i..end].fill(origin);
    }

    pub fn freed(&mut self, k: &Kernel, pfn: u32, order: u32, by_reclaim: bool) {
        if order == 0 && k.zones[self.nz].spans(pfn) {
            let i = (pfn - self.start) as usize;
            if by_reclaim && !self.snap.is_empty() {
                let age = ((k.now / 1_000_000_000) as u32).saturating_sub(self.taken_s[i]);
                let how = match self.split_order[i] {
                    ON_PCP => None,
                    UNKNOWN => Some((UNKNOWN, UNKNOWN)),
                    _ => Some((self.req[i], self.origin[i])),
                };
                if !self.freed.by_run(i) {
                    self.ends.freed(k, i);
                }
                self.freed.add(i, how, age);
            }
            self.split_order[i] = ON_PCP;
        }
    }

    /// A page handed out: one freed onto a per-CPU list and not taken off the buddy lists since
    /// is a take of its own.
    pub fn handed(&mut self, k: &Kernel, pfn: u32, order: u32) {
        if order != 0 || !k.zones[self.nz].spans(pfn) {
            return;
        }
        let i = (pfn - self.start) as usize;
        if self.split_order[i] == ON_PCP {
            // Its own id, apart from the refills' (which share the count of the hand-out after them).
            self.take[i] = self.allocs | 1 << 31;
            self.taken_s[i] = (k.now / 1_000_000_000) as u32;
        }
    }

    pub(crate) fn state(k: &Kernel, zid: usize, pfn: u32) -> u8 {
        let f = k.fr.flags[pfn as usize];
        if k.page_is_free(zid, pfn) {
            FREE
        } else if f & (pg::MLOCKED | pg::UNEVICTABLE) != 0 {
            7
        } else if f & pg::LRU != 0 && f & (pg::ANON | pg::SWAPBACKED) != 0 {
            4
        } else if f & pg::LRU != 0 && k.fr.mapcount[pfn as usize] > 0 {
            3
        } else if f & pg::LRU != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0 {
            2
        } else if f & pg::LRU != 0 {
            1
        } else if f & pg::SLAB != 0 {
            5
        } else if f & pg::PGTABLE != 0 {
            6
        } else {
            8
        }
    }

    /// Aligned order-3 blocks (on the buddy grid) of Normal outside the reserve pageblocks,
    /// as their first frame, and whether each is inside a free buddy block of order >= 3.
    fn blocks<'a>(&self, k: &'a Kernel) -> impl Iterator<Item = (u32, bool)> + 'a {
        let nz = self.nz;
        let z = &k.zones[nz];
        let first = z.start_pfn + (8 - z.phys(z.start_pfn) % 8) % 8;
        (first..z.end_pfn.saturating_sub(7)).step_by(8).filter_map(move |b| {
            if k.pageblock_mt[k.pageblock_of(nz, b)] as usize == MIGRATE_RESERVE {
                return None;
            }
            let free = (3..MAX_ORDER).any(|o| {
                let head = b - (z.phys(b) & ((1u32 << o) - 1));
                z.spans(head) && k.fr.has(head, pg::BUDDY) && (k.fr.aux[head as usize] & 0xf) as usize == o
            });
            Some((b, free))
        })
    }

    pub fn begin(&mut self, k: &Kernel) {
        let z = &k.zones[self.nz];
        self.snap = (z.start_pfn..z.end_pfn).map(|p| Self::state(k, self.nz, p)).collect();
        let was: Vec<bool> = self.blocks(k).map(|(_, f)| f).collect();
        self.was_free = was;
        self.begun_s = (k.now / 1_000_000_000) as u32;
        self.freed.begin();
        self.ends.begin(k);
    }

    pub fn end(&mut self, k: &Kernel) -> Option<String> {
        if self.snap.is_empty() {
            return None;
        }
        let (mut formed, mut free_end) = (0u64, 0u64);
        let mut states = [0u64; STATES.len()];
        let mut takes = [0u64; 3];
        let mut split = [0u64; 6];
        let mut ages = Vec::new();
        // The formed blocks' pages: free at the begin, freed by this run's reclaim, by others.
        let mut src = [0u64; 3];
        let now: Vec<(u32, bool)> = self.blocks(k).collect();
        let mut formed_at = Vec::new();
        for (i, &(b, free)) in now.iter().enumerate() {
            free_end += free as u64;
            if !free || self.was_free.get(i).copied().unwrap_or(true) {
                continue;
            }
            formed += 1;
            formed_at.push(b);
            let mut ids = Vec::new();
            for p in b..b + 8 {
                let j = (p - self.start) as usize;
                let s = self.snap[j];
                states[s as usize] += 1;
                src[if s == FREE {
                    0
                } else if self.freed.by_run(j) {
                    1
                } else {
                    2
                }] += 1;
                if FILE_STATES.contains(&s) {
                    if !ids.contains(&self.take[j]) {
                        ids.push(self.take[j]);
                    }
                    let o = self.split_order[j];
                    split[match o {
                        UNKNOWN => 5,
                        ON_PCP => 4,
                        o => (o as usize).min(3),
                    }] += 1;
                    if self.take[j] != u32::MAX {
                        ages.push(self.begun_s.saturating_sub(self.taken_s[j]));
                    }
                }
            }
            if !ids.is_empty() {
                takes[(ids.len() - 1).min(2)] += 1;
            }
        }
        let fpg = self.freed.line(k, self.nz, self.start);
        let end = self.ends.line(k, &formed_at, |i| self.freed.by_run(i));
        self.ends.follow(&formed_at);
        self.snap.clear();
        ages.sort_unstable();
        let join = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/");
        Some(format!(
            "form {:.3} | {} ({}) | {} | {} | {}/{}/{}/{}, {} ({}) | {} {} | {}\n{fpg}\n{end}",
            k.now as f64 / 1e9,
            formed,
            free_end,
            join(&states),
            join(&takes),
            split[0],
            split[1],
            split[2],
            split[3],
            split[4],
            split[5],
            ages.get(ages.len() / 2).copied().unwrap_or(0),
            ages.last().copied().unwrap_or(0),
            join(&src),
        ))
    }
}
