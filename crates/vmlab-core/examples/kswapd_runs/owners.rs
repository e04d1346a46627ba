//! The `own` line (every sample): how Normal's file pages lie physically — the length of the
//! run of consecutive frames holding file pages of the same file that each file page sits in,
//! and the aligned order-3 blocks held whole by file pages (of one file, of any) — and, over
//! the interval, where Normal's per-CPU refills (`rmqueue_bulk`) found their pages: single
//! pages already free, or a block they split, by the largest order the refill split.

use vmlab_core::kernel::Kernel;
use vmlab_core::mm_types::pg;
use vmlab_core::mmzone::{Mt, ZoneType};
use vmlab_core::trace::{Tracepoint, Tracer};

/// Run-length classes, in pages: 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65+.
const RUNS: [&str; 8] = ["1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"];
/// The refill's largest split so far when it took the page: 0 (a free single), 1 … 6+.
const SPLIT: [&str; 6] = ["o0", "o1", "o2", "o3", "o4-5", "o6+"];

pub struct Owners {
    nz: usize,
    allocs: u32,
    batch: (u32, u8),
    /// Pages Normal's order-0 refills took, [movable, other requests][SPLIT]; and the counts
    /// at the previous line (the line is per interval).
    refill: [[u64; SPLIT.len()]; 2],
    printed: std::cell::Cell<[[u64; SPLIT.len()]; 2]>,
}

impl Owners {
    pub fn new(k: &Kernel) -> Option<Owners> {
        let nz = k.zones.iter().position(|z| z.kind == ZoneType::Normal)?;
        Some(Owners {
            nz,
            allocs: 0,
            batch: (u32::MAX, 0),
            refill: [[0; SPLIT.len()]; 2],
            printed: std::cell::Cell::new([[0; SPLIT.len()]; 2]),
        })
    }

    pub fn header() -> String {
        format!(
            "own t_h | Normal file pages, by the same-file physical run they sit in ({} pages) | aligned o3 blocks all file of one file / all file | refill pages taken in the interval by the refill's largest split {} : movable requests ; others",
            RUNS.join("/"),
            SPLIT.join("/")
        )
    }

    fn is_file(k: &Kernel, p: u32) -> bool {
        let f = k.fr.flags[p as usize];
        f & pg::LRU != 0 && f & (pg::ANON | pg::SWAPBACKED) == 0 && f & (pg::MLOCKED | pg::UNEVICTABLE) == 0
    }

    /// The line for the sample; the interval's refill counts restart.
    pub fn line(&self, k: &Kernel, t_h: f64) -> String {
        let z = &k.zones[self.nz];
        let mut runs = [0u64; RUNS.len()];
        let mut close = |len: u64| {
            if len > 0 {
                let c = (64 - (len - 1).leading_zeros() as usize).min(RUNS.len() - 1);
                runs[c] += len;
            }
        };
        let (mut len, mut owner) = (0u64, u32::MAX);
        for p in z.start_pfn..z.end_pfn {
            if Self::is_file(k, p) && k.fr.mapping[p as usize] == owner && len > 0 {
                len += 1;
                continue;
            }
            close(len);
            (len, owner) = if Self::is_file(k, p) { (1, k.fr.mapping[p as usize]) } else { (0, u32::MAX) };
        }
        close(len);
        let (mut one, mut any) = (0u64, 0u64);
        let first = z.start_pfn + (8 - z.phys(z.start_pfn) % 8) % 8;
        for b in (first..z.end_pfn.saturating_sub(7)).step_by(8) {
            if (b..b + 8).all(|p| Self::is_file(k, p)) {
                any += 1;
                one += (b..b + 8).all(|p| k.fr.mapping[p as usize] == k.fr.mapping[b as usize]) as u64;
            }
        }
        let join = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/");
        let prev = self.printed.replace(self.refill);
        let diff = |r: usize| -> Vec<u64> { (0..SPLIT.len()).map(|c| self.refill[r][c] - prev[r][c]).collect() };
        format!("own {t_h:.1} | {} | {one} / {any} | {} ; {}", join(&runs), join(&diff(0)), join(&diff(1)))
    }
}

impl Tracer for Owners {
    fn event(&mut self, _k: &Kernel, ev: &Tracepoint) {
        match *ev {
            Tracepoint::MmPageAlloc { .. } => self.allocs = self.allocs.wrapping_add(1),
            Tracepoint::MmPageAllocZoneLocked { zone, order: 0, migratetype, block_order, .. } if zone == self.nz => {
                // A refill's takes all come before its hand-out, so they share `allocs`.
                let split =
                    if self.batch.0 == self.allocs { self.batch.1.max(block_order as u8) } else { block_order as u8 };
                self.batch = (self.allocs, split);
                let c = match split {
                    0..=3 => split as usize,
                    4 | 5 => 4,
                    _ => 5,
                };
                self.refill[(migratetype != Mt::Movable) as usize][c] += 1;
            }
            _ => {}
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
