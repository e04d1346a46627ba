//! 2.4.22+'s request-queue throttle on sectors in flight (`drivers/block/ll_rw_blk.c` and
//! `include/linux/blkdev.h`; read in `SimonKagstrom/mci500h-linux-2.4.27`, whose block layer is
//! 2.4.22's: Chris Mason's io-stalls work, merged for 2.4.22, and set by the IDE and SCSI drivers
//! with `blk_queue_throttle_sectors(q, 1)` in `ide_init_queue` / `scsi_initialize_queue`).
//!
//! A queue counts the sectors of every buffer it has taken and not yet ended (`nr_sectors`:
//! `blk_started_sectors` in `__make_request` for a new request *and* for a buffer merged into
//! a queued one; `blk_finished_sectors` in `end_that_request_first`, buffer by buffer). Only a
//! buffer that needs a new request can sleep: `get_request` refuses a write while
//! `nr_sectors > max_queue_sectors` (`blk_oversized_queue`), and a read once it is over
//! `max_queue_sectors + batch_sectors` (`blk_oversized_queue_reads`); the refused task sleeps
//! in `__get_request_wait` until a completion finds `nr_sectors ≤ max_queue_sectors −
//! batch_sectors` (`blk_oversized_queue_batch`, the wakeup in `blk_finished_sectors`), then
//! takes its request. `blk_init_free_list`: `max_queue_sectors = MAX_QUEUE_SECTORS` (4 MiB),
//! halved on a box under 30 MiB; `blk_grow_request_list`: `batch_sectors` a quarter of it.
//!
//! A read is refused too, once the queue is oversized, while more than `nr_requests >> 5` read
//! requests (at least 4) are pending (`rl->pending[READ]`, counted from `get_request` to
//! `blkdev_release_request`); the reader sleeps in the same exclusive `__get_request_wait` and
//! its request is allocated at the wakeup. Not modelled: the 1,024-request free list itself (at
//! ≥ 4 KiB a request, 4 MiB of sectors is reached first).

use std::collections::VecDeque;

/// `MAX_QUEUE_SECTORS` (`4 << (20 - 9)` sectors).
pub const MAX_QUEUE_BYTES: u64 = 4 << 20;

/// `MAX_NR_REQUESTS`, a 2.4.22+ queue's free list (`blk_init_free_list`).
pub const MAX_NR_REQUESTS: u32 = 1024;

/// One queue's sector count and the buffers behind it.
#[derive(Debug, Clone, Default)]
pub struct SectorThrottle {
    /// `max_queue_sectors`, in bytes.
    max: u64,
    /// `batch_sectors`, in bytes.
    batch: u64,
    /// Buffers taken and not ended: (when it ends, bytes), in end order.
    started: VecDeque<(u64, u64)>,
    /// `nr_sectors`, in bytes: the sum over `started`.
    bytes: u64,
    /// `get_request`'s `rlim`: the read requests an oversized queue still admits.
    rlim: usize,
    /// Read requests allocated and not released (`rl->pending[READ]`): when each ends, in end
    /// order.
    reads: VecDeque<u64>,
    /// When the last read request ends (what a merged read extends).
    last_read: u64,
}

impl SectorThrottle {
    /// `blk_grow_request_list(q, nr_requests, max_queue_sectors)` for a queue of `max` bytes.
    pub fn new(max: u64, nr_requests: u32) -> SectorThrottle {
        let rlim = (nr_requests as usize >> 5).max(4);
        SectorThrottle { max, batch: max / 4, rlim, ..Default::default() }
    }

    /// `blk_finished_sectors` for every buffer that has ended by `now`.
    fn finish(&mut self, now: u64) {
        while let Some(&(done, b)) = self.started.front() {
            if done > now {
                break;
            }
            self.bytes -= b;
            self.started.pop_front();
        }
        while self.reads.front().is_some_and(|&d| d <= now) {
            self.reads.pop_front();
        }
    }

    /// A task wants a new request at `now`: 0 when `get_request` gives it one, else when
    /// `__get_request_wait` wakes it with room made (the first buffer end after which
    /// `nr_sectors ≤ max − batch`).
    pub fn get_request_wait(&mut self, now: u64, write: bool) -> u64 {
        self.finish(now);
        // `get_request`: nothing stops a request while the queue is not oversized; past it a
        // write gets none, a read one while few reads are pending and a batch more is not used.
        let refused =
            self.bytes > self.max && (write || self.reads.len() > self.rlim || self.bytes > self.max + self.batch);
        if !refused {
            return 0;
        }
        let mut left = self.bytes;
        for &(done, b) in &self.started {
            left -= b;
            if left <= self.max - self.batch {
                return done;
            }
        }
        now
    }

    /// `blk_started_sectors`: a buffer of `bytes` taken at `now`, ending at `done`, in a new
    /// request or `merged` into a queued one (a read request is pending until its last buffer).
    pub fn start(&mut self, now: u64, done: u64, bytes: u64, write: bool, merged: bool) {
        self.finish(now);
        if !write {
            if merged {
                if let Some(i) = self.reads.iter().rposition(|&d| d == self.last_read) {
                    self.reads.remove(i);
                }
            }
            self.last_read = if merged { done.max(self.last_read) } else { done };
            let at = self.reads.partition_point(|&d| d <= self.last_read);
            self.reads.insert(at, self.last_read);
        }
        // Buffers end in submission order on one spindle; a striped device's may not.
        let at = if self.started.back().is_none_or(|&(d, _)| d <= done) {
            self.started.len()
        } else {
            self.started.partition_point(|&(d, _)| d <= done)
        };
        self.started.insert(at, (done, bytes));
        self.bytes += bytes;
    }

    /// Forget the buffers counted with the end `held` (a plugged queue's, see
    /// [`super::QueueBound::forget_held`]): they are the last in end order.
    pub fn forget_held(&mut self, held: u64) {
        while let Some(&(done, b)) = self.started.back() {
            if done != held {
                break;
            }
            self.bytes -= b;
            self.started.pop_back();
        }
    }

    /// Forget `bytes` of the buffers counted with the end `held`: one listed request the
    /// driver took (the buffers counted so are alike but for their sizes).
    pub fn forget_held_bytes(&mut self, held: u64, mut bytes: u64) {
        while bytes > 0 {
            let Some(last) = self.started.back_mut().filter(|(d, _)| *d == held) else { return };
            let b = last.1.min(bytes);
            last.1 -= b;
            (self.bytes, bytes) = (self.bytes - b, bytes - b);
            if last.1 == 0 {
                self.started.pop_back();
            }
        }
    }

    /// `nr_sectors` at the last update, in bytes.
    pub fn in_flight_bytes(&self) -> u64 {
        self.bytes
    }

    /// `rl->pending[READ]` at the last update.
    pub fn pending_reads(&self) -> usize {
        self.reads.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const KIB: u64 = 1024;

    /// A queue filled with 64-KiB writes ending 1 ms apart.
    fn filled(n: u64) -> SectorThrottle {
        let mut t = SectorThrottle::new(MAX_QUEUE_BYTES, MAX_NR_REQUESTS);
        for i in 0..n {
            t.start(0, (i + 1) * MS, 64 * KIB, true, false);
        }
        t
    }
    #[test]
    fn a_write_gets_a_request_until_the_queue_holds_more_than_max_queue_sectors() {
        // 64 × 64 KiB = 4 MiB exactly: not oversized (`>`), the next write passes.
        let mut t = filled(64);
        assert_eq!(t.get_request_wait(0, true), 0);
        t.start(0, 65 * MS, 64 * KIB, true, false);
        // Now 4 MiB + 64 KiB: a write sleeps until 3 MiB are left (48 buffers): after the
        // 17th ends, at 17 ms.
        assert_eq!(t.get_request_wait(0, true), 17 * MS);
        // And once that time has come, it gets its request.
        assert_eq!(t.get_request_wait(17 * MS, true), 0);
        assert_eq!(t.in_flight_bytes(), 48 * 64 * KIB);
    }

    #[test]
    fn a_read_passes_an_oversized_queue_up_to_a_batch_more() {
        let mut t = filled(80); // 5 MiB = max + batch
        assert!(t.get_request_wait(0, true) > 0);
        assert_eq!(t.get_request_wait(0, false), 0);
        t.start(0, 81 * MS, 4 * KIB, true, false);
        // Over max + batch a read waits too, for the same wakeup as a write: 3 MiB left.
        assert_eq!(t.get_request_wait(0, false), t.get_request_wait(0, true));
        assert_eq!(t.get_request_wait(0, false), 33 * MS);
    }

    #[test]
    fn buffers_ending_out_of_order_are_counted_by_their_ends() {
        let mut t = SectorThrottle::new(MAX_QUEUE_BYTES, MAX_NR_REQUESTS);
        t.start(0, 10 * MS, 2048 * KIB, true, false);
        t.start(0, 5 * MS, 2048 * KIB, true, false);
        t.start(0, 20 * MS, 1024 * KIB, true, false);
        // 5 MiB: the first end that leaves ≤ 3 MiB is the 5-ms one (2 MiB gone).
        assert_eq!(t.get_request_wait(0, true), 5 * MS);
        assert_eq!(t.get_request_wait(6 * MS, true), 0);
        assert_eq!(t.in_flight_bytes(), 3 * 1024 * KIB);
    }

    #[test]
    fn an_oversized_queue_refuses_a_read_once_more_than_rlim_reads_are_pending() {
        // 4 MiB + 64 KiB of writes: oversized, under max + batch.
        let mut t = filled(65);
        // 32 pending read requests (rlim = 1024 >> 5): the next read still gets one …
        for i in 0..32 {
            assert_eq!(t.get_request_wait(0, false), 0, "read {i}");
            t.start(0, 100 * MS + i, 4 * KIB, false, false);
        }
        // … a buffer merged into the last read request is no new request …
        t.start(0, 100 * MS + 40, 4 * KIB, false, true);
        assert_eq!(t.pending_reads(), 32);
        assert_eq!(t.get_request_wait(0, false), 0);
        t.start(0, 100 * MS + 41, 4 * KIB, false, false);
        // … and with 33 pending the reader sleeps for the writers' wakeup (3 MiB left).
        let wake = t.get_request_wait(0, false);
        assert!(wake > 0 && wake == t.get_request_wait(0, true), "{wake}");
        // Not oversized, any number of pending reads passes.
        let mut small = SectorThrottle::new(MAX_QUEUE_BYTES, MAX_NR_REQUESTS);
        for i in 0..40 {
            small.start(0, MS + i, 4 * KIB, false, false);
        }
        assert_eq!(small.get_request_wait(0, false), 0);
    }
}
