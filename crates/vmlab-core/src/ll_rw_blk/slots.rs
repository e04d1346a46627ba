//! Before 2.4.22 a queue's bound is a request count (2.4.9's `drivers/block/ll_rw_blk.c`:
//! its `queue_nr_requests`, `batch_requests` and `blk_dev_init` printk are the context of Jens
//! Axboe's block-highmem diffs against `linux-2.4.9`, LKML, 27–28 Aug 2001; the bodies read in
//! `liexusong/Linux-2.4.16`, unchanged there from 2.4.9's declarations). `blk_dev_init`:
//! `queue_nr_requests` = 128 when the free RAM at boot is over 32 MB, else 64, and
//! `batch_requests` a quarter of it; `blk_init_free_list` deals them out `i & 1`, half to
//! `q->rq[READ]`, half to `q->rq[WRITE]`. `get_request` takes only from its own direction's list;
//! a task that finds it empty sleeps in `__get_request_wait` until `blkdev_release_request`
//! has brought the direction's free count back to `batch_requests` — a non-exclusive wakeup, so
//! every sleeper runs then and takes one. A buffer merged into a queued request takes none
//! (`__make_request` → `out:`), and a request is released when its last buffer ends
//! (`end_that_request_last`). 2.4.0 had neither the batch nor the split (its `get_request` let
//! reads steal from the write list and each release woke one exclusive sleeper:
//! `liexusong/linux-2.4.0`).

use std::collections::VecDeque;

/// `queue_nr_requests` on a box with more than 32 MB of RAM (`blk_dev_init`, 2.4.9).
pub const QUEUE_NR_REQUESTS: u32 = 128;

/// One queue's request free lists before 2.4.22: the requests each direction has taken.
#[derive(Debug, Clone, Default)]
pub struct RequestSlots {
    /// A direction's share of `queue_nr_requests` (`blk_init_free_list`'s `i & 1`).
    per_dir: usize,
    /// `batch_requests`.
    batch: usize,
    /// Requests taken and not released, per direction (`[READ, WRITE]`): when each ends, in
    /// end order.
    taken: [VecDeque<u64>; 2],
    /// When the last request a direction took ends (what a back merge extends).
    last: [u64; 2],
}

impl RequestSlots {
    /// The free lists of a queue of `nr_requests` (`queue_nr_requests`).
    pub fn new(nr_requests: u32) -> RequestSlots {
        let per_dir = (nr_requests as usize / 2).max(1);
        RequestSlots { per_dir, batch: (nr_requests as usize / 4).clamp(1, per_dir), ..Default::default() }
    }

    /// `blkdev_release_request` for every request that has ended by `now`.
    fn release(&mut self, now: u64) {
        for q in &mut self.taken {
            while q.front().is_some_and(|&done| done <= now) {
                q.pop_front();
            }
        }
    }

    /// A task wants a new request for `write` at `now`: 0 when `get_request` finds one free,
    /// else when `__get_request_wait` wakes it with one. Requests already counted past the
    /// direction's share are earlier sleepers' (the model takes a sleeper's request at once):
    /// each wakeup frees a batch, and the sleepers a batch holds all run at it.
    pub fn get_request_wait(&mut self, now: u64, write: bool) -> u64 {
        self.release(now);
        let q = &self.taken[write as usize];
        if q.len() < self.per_dir {
            return 0;
        }
        let ahead = q.len() - self.per_dir;
        q[self.batch * (1 + ahead / self.batch) - 1]
    }

    /// A buffer at `now` ending at `done`: a new request (`merged` false) or one more buffer
    /// of the direction's last request, which then ends with it.
    pub fn start(&mut self, now: u64, done: u64, write: bool, merged: bool) {
        self.release(now);
        let (q, last) = (&mut self.taken[write as usize], &mut self.last[write as usize]);
        if merged {
            let Some(i) = q.iter().rposition(|&d| d == *last) else { return };
            q.remove(i);
        }
        *last = if merged { done.max(*last) } else { done };
        let at = q.partition_point(|&d| d <= *last);
        q.insert(at, *last);
    }

    /// Forget the write requests counted with the end `held` (a plugged queue's, see
    /// [`super::QueueBound::forget_held`]): they are the last in end order.
    pub fn forget_held(&mut self, held: u64) {
        let q = &mut self.taken[1];
        while q.back() == Some(&held) {
            q.pop_back();
        }
    }

    /// Forget `n` of the write requests counted with the end `held`: one listed request the
    /// driver took.
    pub fn forget_held_count(&mut self, held: u64, n: usize) {
        let q = &mut self.taken[1];
        for _ in 0..n {
            if q.back() != Some(&held) {
                return;
            }
            q.pop_back();
        }
    }

    /// Requests a direction holds at the last update.
    pub fn taken(&self, write: bool) -> usize {
        self.taken[write as usize].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A 2.4.9 queue of 128 requests with `n` scattered writes ending 1 ms apart.
    fn writes(n: u64) -> RequestSlots {
        let mut r = RequestSlots::new(QUEUE_NR_REQUESTS);
        for i in 0..n {
            r.start(0, (i + 1) * MS, true, false);
        }
        r
    }

    #[test]
    fn a_writer_sleeps_on_the_65th_write_request_until_32_are_released() {
        let mut r = writes(63);
        assert_eq!(r.get_request_wait(0, true), 0, "the 64th is free");
        r.start(0, 64 * MS, true, false);
        // No free write request: wait for the 32nd release, at 32 ms, not the first (1 ms).
        assert_eq!(r.get_request_wait(0, true), 32 * MS);
        // Reads have their own 64: a read passes a full write list.
        assert_eq!(r.get_request_wait(0, false), 0);
        // Once the batch is back the writer gets its request.
        assert_eq!(r.get_request_wait(32 * MS, true), 0);
        assert_eq!(r.taken(true), 32);
    }

    #[test]
    fn the_sleepers_of_one_batch_wake_together_and_the_next_batch_later() {
        let mut r = writes(64);
        // 32 sleepers (their requests counted at once) all wake at the 32nd release …
        for _ in 0..32 {
            assert_eq!(r.get_request_wait(0, true), 32 * MS);
            r.start(0, 100 * MS, true, false);
        }
        // … the 33rd finds that batch taken and waits for the next: the 64th release.
        assert_eq!(r.get_request_wait(0, true), 64 * MS);
    }

    #[test]
    fn a_merged_buffer_takes_no_request_and_its_request_ends_with_it() {
        let mut r = writes(63);
        // Merged into the last request (ending 63 ms): still 63 taken, the 64th is free.
        r.start(0, 70 * MS, true, true);
        assert_eq!(r.taken(true), 63);
        assert_eq!(r.get_request_wait(0, true), 0);
        // The merged request is released at its new end, not its old one.
        assert_eq!(r.get_request_wait(63 * MS, true), 0);
        assert_eq!(r.taken(true), 1);
        r.get_request_wait(70 * MS, true);
        assert_eq!(r.taken(true), 0);
    }

    #[test]
    fn a_box_of_32_mib_or_less_gets_64_requests() {
        let mut r = RequestSlots::new(QUEUE_NR_REQUESTS / 2);
        for i in 0..32 {
            r.start(0, (i + 1) * MS, true, false);
        }
        // 32 write requests, a batch of 16.
        assert_eq!(r.get_request_wait(0, true), 16 * MS);
    }
}
