//! The `fpg` line of `detail=` (see `form.rs`): one order-3 run's own frees in Normal, page by
//! page — what became of them by the run's end, how each had reached its owner, and what held
//! the aligned order-3 blocks they did not make free.

use crate::form::{Form, FREE, REQ_DIRECT, STATES, UNKNOWN};
use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{Mt, MAX_ORDER};

/// How a freed page had been handed out: reused from a per-CPU list after an order-0 free, a
/// refill's take for an unmovable / movable / reclaimable request, an order > 0 request's
/// take, or before the observer began.
const HOW: [&str; 6] = ["pcp-reuse", "refill-unmov", "refill-mov", "refill-recl", "order>0", "unknown"];
/// The largest block order the refill that took it had split (0: the refill found single pages).
const ORIGIN: [&str; 6] = ["o0", "o1", "o2", "o3", "o4-5", "o6+"];

pub struct Freed {
    /// Per frame of Normal: freed by reclaim in the current run.
    mark: Vec<bool>,
    list: Vec<u32>,
    how: [u64; HOW.len()],
    origin: [u64; ORIGIN.len()],
    ages: Vec<u32>,
}

impl Freed {
    pub fn new(n: usize) -> Freed {
        Freed { mark: vec![false; n], list: Vec::new(), how: [0; 6], origin: [0; 6], ages: Vec::new() }
    }

    pub fn begin(&mut self) {
        for &i in &self.list {
            self.mark[i as usize] = false;
        }
        self.list.clear();
        self.how = [0; 6];
        self.origin = [0; 6];
        self.ages.clear();
    }

    /// Frame `i` freed by reclaim in the run; `how` = None if it had been reused from a per-CPU
    /// list, else (requested type, largest split) of the take that handed it out.
    pub fn add(&mut self, i: usize, how: Option<(u8, u8)>, age: u32) {
        if self.mark[i] {
            return;
        }
        self.mark[i] = true;
        self.list.push(i as u32);
        self.ages.push(age);
        let h = match how {
            None => 0,
            Some((UNKNOWN, _)) => 5,
            Some((r, _)) if r & REQ_DIRECT != 0 => 4,
            Some((r, _)) if r == Mt::Unmovable as u8 => 1,
            Some((r, _)) if r == Mt::Movable as u8 => 2,
            Some(_) => 3,
        };
        self.how[h] += 1;
        if let Some((r, o)) = how {
            if r != UNKNOWN {
                self.origin[match o {
                    0..=3 => o as usize,
                    4 | 5 => 4,
                    _ => 5,
                }] += 1;
            }
        }
    }

    pub fn by_run(&self, i: usize) -> bool {
        self.mark[i]
    }

    /// The order of the free buddy block frame `pfn` sits in, if any.
    fn buddy_order(k: &Kernel, nz: usize, pfn: u32) -> Option<usize> {
        let z = &k.zones[nz];
        (0..MAX_ORDER).find(|&o| {
            let head = pfn - (z.phys(pfn) & ((1u32 << o) - 1));
            z.spans(head) && k.fr.has(head, pg::BUDDY) && (k.fr.aux[head as usize] & 0xf) as usize == o
        })
    }

    pub fn line(&self, k: &Kernel, nz: usize, start: u32) -> String {
        let z = &k.zones[nz];
        // Where the freed pages are at the run's end: pcp, buddy o0 / o1-2 / o3+, in use again.
        let mut at_end = [0u64; 5];
        let mut blocks: Vec<u32> = Vec::new();
        for &i in &self.list {
            let pfn = start + i;
            at_end[if k.fr.has(pfn, pg::PCP) {
                0
            } else {
                match Self::buddy_order(k, nz, pfn) {
                    Some(0) => 1,
                    Some(1 | 2) => 2,
                    Some(_) => 3,
                    None => 4,
                }
            }] += 1;
            let b = pfn - (z.phys(pfn) & 7);
            if b >= z.start_pfn && b + 8 <= z.end_pfn && !blocks.contains(&b) {
                blocks.push(b);
            }
        }
        // Their aligned order-3 blocks: free in a buddy block of order >= 3, all eight free but
        // some still on a per-CPU list, or held — by how many pages, and by what.
        let (mut merged, mut on_pcp, mut held) = (0u64, 0u64, [0u64; 3]);
        let mut holders = [0u64; STATES.len()];
        for &b in &blocks {
            if Self::buddy_order(k, nz, b).is_some_and(|o| o >= 3) {
                merged += 1;
                continue;
            }
            let states: Vec<u8> = (b..b + 8).map(|p| Form::state(k, nz, p)).collect();
            let n = states.iter().filter(|&&s| s != FREE).count();
            if n == 0 {
                on_pcp += 1;
                continue;
            }
            held[if n == 1 {
                0
            } else if n < 8 {
                1
            } else {
                2
            }] += 1;
            for s in states.into_iter().filter(|&s| s != FREE) {
                holders[s as usize] += 1;
            }
        }
        let mut ages = self.ages.clone();
        ages.sort_unstable();
        let pct = |q: usize| ages.get((ages.len() * q / 100).min(ages.len().saturating_sub(1))).copied().unwrap_or(0);
        let join = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/");
        format!(
            "fpg {:.3} | freed {} | at end pcp/buddy-o0/o1-2/o3+/in-use {} | handed out by {} | refill's largest split {} | age s p10/median/p90/max {}/{}/{}/{} | their o3 blocks {}: free o3+ {} all-free-some-on-pcp {} held by 1/2-7/8 pages {} (holders {})",
            k.now as f64 / 1e9,
            self.list.len(),
            join(&at_end),
            join(&self.how),
            join(&self.origin),
            pct(10),
            pct(50),
            pct(90),
            ages.last().copied().unwrap_or(0),
            blocks.len(),
            merged,
            on_pcp,
            join(&held),
            join(&holders),
        )
    }

    pub fn header() -> String {
        format!(
            "fpg t_s | pages reclaim freed in Normal in the run | where at its end: pcp / buddy o0 / o1-2 / o3+ / in use | how each had been handed out {} | the refill's largest split {} | age at free | their aligned order-3 blocks: count, free in o3+ buddy blocks, all free but some on a pcp list, held by 1 / 2-7 / 8 pages (the holding pages by state {})",
            HOW.join("/"),
            ORIGIN.join("/"),
            STATES.join("/")
        )
    }
}
