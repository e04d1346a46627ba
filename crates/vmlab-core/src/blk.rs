//! 6.8's request path in front of a [`Disk`](crate::disk::Disk): the I/O scheduler's queue of
//! requests not yet dispatched, merging into them, and dispatch when a driver tag is free.
//!
//! What the kernel does (sndrzt/linux-6.8 and torvalds/linux, `block/`):
//! - A task submits under a plug (`blk_start_plug` in `read_pages`, `__swap_writepage`'s callers,
//!   writeback): `blk_mq_submit_bio` first tries `blk_attempt_plug_merge`, a back or front merge
//!   with the last request on the task's own plug list, so the bios of one readahead batch become
//!   one request up to the queue's `max_sectors` / `max_segments` (`blk-merge.c`
//!   `ll_back_merge_fn`). The plug goes to the scheduler at `blk_finish_plug`, or earlier when it
//!   holds `BLK_MAX_REQUEST_COUNT` (32) requests or its last one is `BLK_PLUG_FLUSH_SIZE`
//!   (128 KiB) or more (`blk_add_rq_to_plug`). The caller models the plug: it hands the disk one
//!   contiguous batch at most [`RequestQueue::max_request_bytes`] long.
//! - The scheduler (`mq-deadline`: `dd_bio_merge`, and `blk_mq_sched_try_insert_merge` when a
//!   plug is flushed into it) merges a request with one it still holds that ends where the new
//!   one starts (back merge) or starts where it ends (front merge, `front_merges` = 1), within
//!   the same limits. `none` has the per-CPU software queue's `blk_bio_list_merge` instead;
//!   either way only a request not yet dispatched can grow.
//! - `blk_mq_run_hw_queue` dispatches the scheduler's requests while the driver has tags
//!   (`blk_mq_get_driver_tag`): beyond the device's queue depth requests wait, and only then
//!   is there anything to merge into. One reader at a time never finds a request waiting; many
//!   readers of adjacent files do.
//!
//! The model: a request that merges costs the device its transfer only (it rides in another
//! request's command: no per-request overhead, no positioning) and holds no tag; the request it
//! joined keeps the completion time already given to its submitter, and the merged pages
//! complete when the device gets to their bytes. A request that does not merge waits for a tag:
//! its dispatch time is when the `depth`-th request ahead of it completes.

/// Queue limits and merge state of one block device.
#[derive(Debug, Clone)]
pub struct RequestQueue {
    max_request_bytes: u64,
    /// Tags: requests the device accepts at once (its queue depth).
    depth: usize,
    /// Completion times of the requests holding or waiting for a tag, ascending.
    tagged: Vec<u64>,
    /// Requests still in the scheduler, where later ones can merge into them.
    sched: Vec<SchedRq>,
    /// Bios merged into a request already queued (`/sys/block/DEV/stat` read/write merges).
    pub merges: u64,
}

#[derive(Debug, Clone, Copy)]
struct SchedRq {
    start: u64,
    end: u64,
    write: bool,
    dispatch: u64,
}

impl RequestQueue {
    /// `max_sectors_kb` and `max_segments` of the queue (a segment is at least a page), and the
    /// device's tag depth.
    pub fn new(max_sectors_kb: u64, max_segments: u64, depth: usize) -> RequestQueue {
        let max_request_bytes = (max_sectors_kb * 1024).min(max_segments * 4096).max(4096);
        RequestQueue { max_request_bytes, depth: depth.max(1), tagged: Vec::new(), sched: Vec::new(), merges: 0 }
    }

    /// The largest request `ll_back_merge_fn`/`ll_front_merge_fn` let a merge build.
    pub fn max_request_bytes(&self) -> u64 {
        self.max_request_bytes
    }

    fn forget(&mut self, now: u64) {
        let done = self.tagged.partition_point(|&c| c <= now);
        self.tagged.drain(..done);
        self.sched.retain(|r| r.dispatch > now);
    }

    /// `elv_merge`: join a request still in the scheduler that this one continues (back) or
    /// precedes (front), when the two stay within the queue's limits. True when merged.
    pub fn elv_merge(&mut self, now: u64, offset: u64, bytes: u64, write: bool) -> bool {
        self.forget(now);
        let end = offset + bytes;
        let max = self.max_request_bytes;
        let hit = self
            .sched
            .iter_mut()
            .find(|r| r.write == write && (r.end == offset || r.start == end) && r.end - r.start + bytes <= max);
        match hit {
            Some(r) => {
                r.start = r.start.min(offset);
                r.end = r.end.max(end);
                self.merges += 1;
                true
            }
            None => false,
        }
    }

    /// When a new request gets a driver tag: at once while fewer than `depth` requests hold or
    /// wait for one, else when the request `depth` places ahead of it completes (dispatch is in
    /// submission order).
    pub fn dispatch_at(&mut self, now: u64) -> u64 {
        self.forget(now);
        let n = self.tagged.len();
        if n < self.depth {
            now
        } else {
            self.tagged[n - self.depth]
        }
    }

    /// Record a request that did not merge: it holds a tag until `done`, and until `dispatch`
    /// it sits in the scheduler where later ones can merge into it.
    pub fn insert(&mut self, now: u64, offset: u64, bytes: u64, write: bool, dispatch: u64, done: u64) {
        let at = self.tagged.partition_point(|&c| c <= done);
        self.tagged.insert(at, done);
        if dispatch > now {
            self.sched.push(SchedRq { start: offset, end: offset + bytes, write, dispatch });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_the_smaller_of_sectors_and_segments() {
        assert_eq!(RequestQueue::new(1280, 128, 32).max_request_bytes(), 512 * 1024);
        assert_eq!(RequestQueue::new(256, 128, 32).max_request_bytes(), 256 * 1024);
    }

    #[test]
    fn dispatch_waits_for_a_tag() {
        let mut q = RequestQueue::new(1280, 128, 2);
        assert_eq!(q.dispatch_at(0), 0);
        q.insert(0, 0, 4096, false, 0, 100);
        assert_eq!(q.dispatch_at(0), 0);
        q.insert(0, 1 << 20, 4096, false, 0, 200);
        // Both tags held: the third goes when the first completes, the fourth with the second.
        assert_eq!(q.dispatch_at(10), 100);
        q.insert(10, 2 << 20, 4096, false, 100, 300);
        assert_eq!(q.dispatch_at(10), 200);
        // Once they complete the tags are free again.
        assert_eq!(q.dispatch_at(300), 300);
    }

    #[test]
    fn merges_only_into_requests_not_yet_dispatched() {
        let mut q = RequestQueue::new(1280, 128, 1);
        q.insert(0, 0, 8192, false, 0, 100);
        // Dispatched at once: nothing to merge into.
        assert!(!q.elv_merge(1, 8192, 4096, false));
        let d = q.dispatch_at(1);
        assert_eq!(d, 100);
        q.insert(1, 8192, 4096, false, d, 150);
        // Back merge, front merge, a gap, the other direction.
        assert!(q.elv_merge(2, 12288, 4096, false));
        assert!(q.elv_merge(2, 4096, 4096, false));
        assert!(!q.elv_merge(2, 20480, 4096, false));
        assert!(!q.elv_merge(2, 16384, 4096, true));
        assert_eq!(q.merges, 2);
        // After its dispatch time it is the device's.
        assert!(!q.elv_merge(100, 16384, 4096, false));
    }

    #[test]
    fn merge_stops_at_the_queue_limit() {
        let mut q = RequestQueue::new(16, 128, 1);
        q.insert(0, 0, 4096, false, 0, 100);
        q.insert(0, 4096, 8192, false, 100, 200);
        assert!(q.elv_merge(1, 12288, 4096, false));
        assert!(!q.elv_merge(1, 16384, 8192, false), "16 KiB is max_sectors_kb");
        assert!(q.elv_merge(1, 16384, 4096, false));
    }
}
