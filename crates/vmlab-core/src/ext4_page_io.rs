//! The end of an io_end of unwritten extents as 6.x has it (fs/ext4/page-io.c, super.c): once
//! its last bio has completed and its extent is converted, ext4's `ext4-rsv-conversion` worker
//! runs `ext4_release_io_end`, which walks the io_end's bio list — pushed at each completion by
//! `ext4_end_bio` (`bio->bi_private = xchg(&io_end->bio, bio)`), so last-completed bio first —
//! and `ext4_finish_bio` ends each bio's folios in index order (`end_page_writeback`). Each
//! folio's end takes `end_writeback` of the worker, which runs on a CPU of its own beside the
//! writer's reclaim (`alloc_workqueue("ext4-rsv-conversion", WQ_MEM_RECLAIM | WQ_UNBOUND, 1)`:
//! unbound, one work at a time, so a second io_end waits for the first's release).
//!
//! So the end time of every folio of a release is known when it starts: `start + (rank + 1) ×
//! end_writeback`, its rank its place in that walk. vmlab ends them without an event per folio:
//! any path, at its own clock `t` (the event loop's at each event, a reclaimer's mid-quantum),
//! first ends every folio whose time is ≤ `t` ([`catch_up`]), in their order, each with all of
//! `folio_end_writeback`'s effects as at its own instant (`acct_reclaim_writeback`'s count and
//! wake among them), and meets the rest still under writeback. The worker's events mark its
//! CPU time request by request and wake the loop at the instant a throttled reclaimer's wake
//! falls on ([`arm_wake`]).

use crate::kernel::{Ctx, IoDone, Kernel};
use crate::mm_types::Pfn;

/// One io_end given to the worker.
#[derive(Clone, Debug)]
struct Release {
    /// When the worker begins it: its last bio's completion, or the end of the release before.
    start: u64,
    per_page: u64,
    disk: usize,
    /// Its folios in the order the worker ends them (their rank): the extent's last request's
    /// first, its first request's last.
    pages: Vec<Pfn>,
    /// Ranks ended so far.
    done: usize,
}

impl Release {
    fn end_of(&self, rank: usize) -> u64 {
        self.start + (rank as u64 + 1) * self.per_page
    }

    fn next_end(&self) -> u64 {
        if self.done < self.pages.len() {
            self.end_of(self.done)
        } else {
            u64::MAX
        }
    }
}

/// The worker's io_ends, queued and in progress.
#[derive(Clone, Debug)]
pub struct Releases {
    q: Vec<Release>,
    /// The earliest end not yet done (u64::MAX: none): a clock before it has nothing to end.
    due: u64,
    /// Per disk: when its worker has ended everything it was given.
    idle_at: Vec<u64>,
}

impl Default for Releases {
    fn default() -> Self {
        Releases { q: Vec::new(), due: u64::MAX, idle_at: Vec::new() }
    }
}

impl Releases {
    /// When `disk`'s worker will have ended every folio it has been given (0 if none).
    pub fn idle_at(&self, disk: usize) -> u64 {
        self.idle_at.get(disk).copied().unwrap_or(0)
    }

    /// (disk, start, end) of each io_end given to the worker whose folios have not all ended.
    pub fn spans(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        self.q.iter().map(|r| (r.disk, r.start, r.start + r.pages.len() as u64 * r.per_page))
    }

    /// The end time of folio `p` if a release holds it and has not ended it yet.
    pub fn end_of(&self, p: Pfn) -> Option<u64> {
        self.q.iter().find_map(|r| r.pages[r.done..].iter().position(|&q| q == p).map(|i| r.end_of(r.done + i)))
    }
}

/// Give the worker an io_end of `disk` whose last bio completed at `at`: `pages` are its
/// requests' pages in submission order, `bios` the requests' page counts in that order (pages
/// beyond them end last). Its CPU time goes out as one `IoDone::Release` per request.
pub fn release_io_end<I>(k: &mut Kernel, disk: usize, at: u64, mut pages: Vec<Pfn>, bios: I)
where
    I: DoubleEndedIterator<Item = u32> + Clone,
{
    let per_page = k.cost.end_writeback;
    if k.releases.idle_at.len() <= disk {
        k.releases.idle_at.resize(disk + 1, 0);
    }
    let start = at.max(k.releases.idle_at[disk]);
    k.io_queue_first_write = k.io_queue_first_write.min(start);
    // Rank order in place: the whole reversed puts the last request first, then each request's
    // pages back in index order.
    pages.reverse();
    let n = pages.len();
    let covered: usize = bios.clone().map(|b| b as usize).sum::<usize>().min(n);
    let mut lo = 0;
    for len in bios.rev().map(|b| b as usize).chain(std::iter::once(n - covered)) {
        let hi = (lo + len).min(n);
        pages[lo..hi].reverse();
        if per_page > 0 && hi > lo {
            let t = start + hi as u64 * per_page;
            k.io_queue.push((t, IoDone::Release { disk, ends: (hi - lo) as u32 }));
        }
        lo = hi;
    }
    if per_page == 0 {
        // No time between the ends (vmlab's own table): one instant, so that no task runs
        // between two of its requests' ends.
        k.io_queue.push((start, IoDone::Release { disk, ends: n as u32 }));
    }
    k.releases.idle_at[disk] = start + n as u64 * per_page;
    let r = Release { start, per_page, disk, pages, done: 0 };
    k.releases.due = k.releases.due.min(r.next_end());
    k.releases.q.push(r);
}

/// End every folio whose release time is ≤ `t` — what a path running at clock `t` must find
/// ended — in time order, each as at its own instant. One comparison when none is due.
#[inline]
pub fn catch_up(k: &mut Kernel, t: u64) {
    if t >= k.releases.due {
        catch_up_to(k, t);
    }
}

#[inline(never)]
fn catch_up_to(k: &mut Kernel, t: u64) {
    let now = k.now;
    loop {
        // Releases of one disk follow each other; two disks' may overlap: take the earliest end.
        let (mut at, mut i) = (u64::MAX, usize::MAX);
        for (j, r) in k.releases.q.iter().enumerate() {
            if r.next_end() < at {
                (at, i) = (r.next_end(), j);
            }
        }
        if at > t {
            break;
        }
        let r = &mut k.releases.q[i];
        let p = r.pages[r.done];
        r.done += 1;
        // Its wake, if it makes one, is at its instant (`acct_reclaim_writeback` → `wake_up`).
        k.now = at;
        let mut ctx = Ctx { now: at, ..Default::default() };
        // A folio the running reclaimer has isolated is its reference: the end does not free it.
        let on_lru = k.fr.has(p, crate::mm_types::pg::LRU);
        crate::page_writeback::end_writeback(k, &mut ctx, p, on_lru);
        crate::vmscan::writeback_done(k, std::slice::from_ref(&p));
    }
    k.now = now;
    k.releases.q.retain(|r| r.done < r.pages.len());
    k.releases.due = k.releases.q.iter().map(Release::next_end).min().unwrap_or(u64::MAX);
}

/// A reclaimer has just joined the writeback throttle's queue at `since` and wakes once `n`
/// more folios have ended: queue an event at the instant each disk's releases alone reach
/// that many, so that the event loop delivers the wake at the folio that makes it
/// (completions of other kinds bring their own events). Nothing if none reaches it.
pub fn arm_wake(k: &mut Kernel, since: u64, n: u64) {
    let n = n.max(1) as usize;
    for disk in 0..k.releases.idle_at.len() {
        let mut left = n;
        for r in k.releases.q.iter().filter(|r| r.disk == disk) {
            // Ranks of this release ending after `since` (the ones before were caught up).
            let first = if r.per_page == 0 || since < r.start {
                r.done
            } else {
                (((since - r.start) / r.per_page) as usize).clamp(r.done, r.pages.len())
            };
            let after = r.pages.len() - first;
            if after >= left {
                let at = r.end_of(first + left - 1);
                k.io_queue.push((at, IoDone::Release { disk, ends: 0 }));
                break;
            }
            left -= after;
        }
    }
}

#[cfg(test)]
#[path = "ext4_page_io_tests.rs"]
mod tests;
