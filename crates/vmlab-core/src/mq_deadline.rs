//! `mq-deadline`'s choice of what goes to the driver next, for a queue whose scheduler is
//! `mq-deadline` (sysfs `queue/scheduler`); the default `none` dispatches in arrival order.
//!
//! What the kernel does (block/mq-deadline.c of a 6.x tree: CachyOS/linux; the stored
//! sndrzt/linux-6.8 tree has no `block/`, and the function bodies below are the same from
//! 5.x's rewrite to today's apart from the priority levels, which swap I/O does not use):
//! - `dd_insert_request` puts a request on a sector-sorted tree and a FIFO per direction,
//!   after `blk_mq_sched_try_insert_merge` and, earlier, `dd_bio_merge` (back merges, and front
//!   merges with `front_merges` = 1) had their chance to join it to one already held.
//! - `blk_mq_run_hw_queue` asks `dd_dispatch_request` for a request only while the driver
//!   takes one (a tag, a budget, room in a virtio ring); so requests wait in the scheduler
//!   only while the device is full, and there they keep merging.
//! - `__dd_dispatch_request`: a batch goes on in the direction of the last dispatch while the
//!   sorted tree has a request at or after the last one's sector and fewer than `fifo_batch`
//!   (16) went in it. Otherwise reads go first when any are queued, unless writes are queued
//!   and have been passed over `writes_starved` (2) times (`dd->starved++ >= writes_starved`);
//!   choosing writes sets `starved` to 0. `read_expire`/`write_expire` (0.5 s / 5 s) only pick
//!   which request of the chosen direction goes (the FIFO's head when it expired), not the
//!   direction, so they do not decide anything here: vmlab serves each direction in arrival
//!   order, which for swap's ascending slots is the sorted order too.
//!
//! vmlab's device books a request when it is dispatched (disk.rs): reads are booked as they
//! are submitted, so a write that finds the device full is *held* here, unbooked, and goes when
//! a slot frees with no read wanting it (disk.rs `run_queue`, driven by a `BlkRun` event), or
//! before a read when this module's choice says the writes go first.

use std::collections::VecDeque;

use crate::mm_types::Pfn;

/// `queue/iosched/` tunables of mq-deadline that decide the order here, with the kernel's
/// defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadlineParams {
    pub writes_starved: u32,
    pub fifo_batch: u32,
}

impl Default for DeadlineParams {
    fn default() -> DeadlineParams {
        DeadlineParams { writes_starved: 2, fifo_batch: 16 }
    }
}

/// A write request held in the scheduler: sectors `[start, end)` in bytes, its segments, the
/// pages whose writeback ends with it.
#[derive(Debug, Clone)]
pub struct HeldWrite {
    /// When the scheduler took it (the request's `start_time_ns`).
    pub since: u64,
    pub start: u64,
    pub end: u64,
    pub segs: u32,
    pub pages: Vec<Pfn>,
    /// The writeback throttle's `rq_wait` queue it was allocated in (blk_wbt.rs).
    pub rwq: u8,
}

/// One queue's mq-deadline state (`struct deadline_data`, one priority level).
#[derive(Debug, Clone)]
pub struct MqDeadline {
    params: DeadlineParams,
    held: VecDeque<HeldWrite>,
    held_bytes: u64,
    /// `last_dir`, `batching`, `starved`, `latest_pos` (reads, writes).
    last_write: bool,
    batching: u32,
    starved: u32,
    latest_pos: [u64; 2],
}

impl MqDeadline {
    pub fn new(params: DeadlineParams) -> MqDeadline {
        // dd_init_sched: last_dir = DD_WRITE.
        MqDeadline {
            params,
            held: VecDeque::new(),
            held_bytes: 0,
            last_write: true,
            batching: 0,
            starved: 0,
            latest_pos: [0; 2],
        }
    }

    pub fn params(&self) -> DeadlineParams {
        self.params
    }

    pub fn has_held(&self) -> bool {
        !self.held.is_empty()
    }

    /// Bytes of the writes held.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    pub fn head(&self) -> Option<&HeldWrite> {
        self.held.front()
    }

    pub fn pop(&mut self) -> Option<HeldWrite> {
        let h = self.held.pop_front()?;
        self.held_bytes -= h.end - h.start;
        Some(h)
    }

    /// `dd_bio_merge`: a write that ends where a held one starts (front) or starts where it
    /// ends (back) joins it while the two stay within the queue's limits. The index joined.
    pub fn merge(&mut self, start: u64, bytes: u64, segs: u32, max_bytes: u64, max_segs: u32) -> Option<usize> {
        let end = start + bytes;
        let i = self.held.iter().position(|h| {
            (h.end == start || h.start == end) && h.end - h.start + bytes <= max_bytes && h.segs + segs <= max_segs
        })?;
        let h = &mut self.held[i];
        h.start = h.start.min(start);
        h.end = h.end.max(end);
        h.segs += segs;
        self.held_bytes += bytes;
        Some(i)
    }

    /// `dd_insert_request` of a write that merged with nothing. Its index.
    pub fn hold(&mut self, now: u64, start: u64, bytes: u64, segs: u32) -> usize {
        self.held.push_back(HeldWrite { since: now, start, end: start + bytes, segs, pages: Vec::new(), rwq: 0 });
        self.held_bytes += bytes;
        self.held.len() - 1
    }

    /// The throttle's queue of the write just held at `i`.
    pub fn set_rwq(&mut self, i: usize, rwq: u8) {
        self.held[i].rwq = rwq;
    }

    /// The pages of the bio just held or merged at `i`.
    pub fn add_pages(&mut self, i: usize, pages: &[Pfn]) {
        self.held[i].pages.extend_from_slice(pages);
    }

    /// A request at byte `pos` went to the driver (`dd_start_request`, and the batch and
    /// direction bookkeeping of `__dd_dispatch_request`).
    pub fn dispatched(&mut self, write: bool, pos: u64) {
        let d = write as usize;
        let goes_on = self.last_write == write && self.batching < self.params.fifo_batch && pos >= self.latest_pos[d];
        if !goes_on {
            self.last_write = write;
            self.batching = 0;
            if write {
                self.starved = 0;
            }
        }
        self.batching += 1;
        self.latest_pos[d] = pos;
    }

    /// A read at byte `pos` wants the next free slot while writes are held: how many held
    /// writes `__dd_dispatch_request` sends first (0: the read goes first).
    pub fn writes_before_read(&mut self, pos: u64) -> u32 {
        let Some(head) = self.held.front() else { return 0 };
        let fifo_batch = self.params.fifo_batch;
        if self.batching < fifo_batch {
            if self.last_write && head.start >= self.latest_pos[1] {
                return fifo_batch - self.batching;
            }
            if !self.last_write && pos >= self.latest_pos[0] {
                return 0;
            }
        }
        // A new direction: reads, unless the writes have waited `writes_starved` times.
        let starved = self.starved;
        self.starved += 1;
        if starved >= self.params.writes_starved {
            // `dispatch_writes`: `dispatched` starts the batch and clears `starved`.
            self.starved = 0;
            fifo_batch.max(1)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::disk::{Disk, DiskParams};

    const MIB: u64 = 1 << 20;

    /// One stream, one tag, no positioning: whoever holds the tag holds the device.
    fn one_tag_disk(max_sectors_kb: u64, dd: bool) -> Disk {
        let mut p = DiskParams::preset("nvme").unwrap();
        (p.spindles, p.queue_depth) = (1, 1);
        let mut d = Disk::new(p).unwrap();
        d.set_queue(max_sectors_kb, 128);
        d.set_elevator(dd.then(DeadlineParams::default));
        d
    }

    #[test]
    fn a_read_goes_to_the_driver_before_a_write_held_for_the_tag() {
        let mut done = [0; 2];
        for dd in [false, true] {
            let mut d = one_tag_disk(1280, dd);
            let r0 = d.submit(0, 50 * MIB, 4096, false);
            // The tag is r0's: the write waits (none: booked behind r0; mq-deadline: held).
            d.submit(1, MIB, 4096, true);
            assert_eq!(d.hold_pages(vec![7]).is_none(), dd, "held writes keep their pages");
            // A read below r0: not r0's batch, a new choice, and writes have not starved yet.
            let r1 = d.submit(2, 40 * MIB, 4096, false);
            done[dd as usize] = r1;
            let mut out = Vec::new();
            if dd {
                d.take_dispatched(&mut out);
                assert!(out.is_empty(), "the write is still held");
                assert_eq!(d.take_run(), Some(r1), "it goes when the read frees the tag");
                d.blk_run(r1);
                d.take_dispatched(&mut out);
                assert_eq!(out.len(), 1);
                assert!(out[0].0 > r1 && out[0].1 == [7]);
            }
            assert_eq!(d.stat().write_ios + d.stat().read_ios, 3);
            // Requests of one size: r1 starts when r0 ends (mq-deadline) or after the write.
            assert_eq!(r1, if dd { 2 * r0 } else { 3 * r0 });
        }
        assert!(done[1] < done[0], "mq-deadline's read completes first: {done:?}");
    }

    #[test]
    fn a_held_writes_ticks_run_from_when_it_was_held() {
        // 100 MB/s, so a 1 MiB request takes ~10 ms and the ms fields say something.
        let mut p = DiskParams::preset("nvme").unwrap();
        (p.spindles, p.queue_depth, p.bandwidth_bps) = (1, 1, 100_000_000);
        let mut d = Disk::new(p).unwrap();
        d.set_queue(1280, 128);
        d.set_elevator(Some(DeadlineParams::default()));
        let r0 = d.submit(0, 50 * MIB, MIB, false);
        d.submit(1, MIB, MIB, true);
        d.hold_pages(vec![7]);
        assert_eq!(d.times(r0 - 1).in_flight, 1, "a held write is not in flight (`blk_mq_in_flight`)");
        let t = d.take_run().expect("the write waits for r0's tag");
        d.blk_run(t);
        let mut out = Vec::new();
        d.take_dispatched(&mut out);
        let w = out[0].0;
        let ms = 1_000_000;
        let times = d.times(w);
        // The read: its own service. The write: held from 1 ns, then its service after r0.
        assert_eq!((times.read_ticks, times.write_ticks), (r0 / ms, (w - 1) / ms));
        assert!(times.write_ticks >= 2 * times.read_ticks, "{times:?}");
        assert_eq!(times.time_in_queue, (r0 + w - 1) / ms);
        assert_eq!(times.io_ticks, w / ms, "busy from 0 to the write's completion");
        assert_eq!(times.in_flight, 0);
    }

    #[test]
    fn a_held_write_keeps_merging_while_a_read_goes_first_up_to_max_sectors_kb() {
        let mut got = Vec::new();
        for dd in [false, true] {
            // max_sectors_kb 12: three pages a request.
            let mut d = one_tag_disk(12, dd);
            let r0 = d.submit(0, 50 * MIB, 4096, false);
            d.submit(1, MIB, 4096, true);
            d.hold_pages(vec![1]);
            d.submit(2, 40 * MIB, 4096, false);
            // After r0: under `none` the first write went to the device then and the next four
            // make requests of 3 + 1 pages; held behind r1, it takes the next two pages, and
            // the fourth starts a request of its own.
            for i in 1..5 {
                d.submit(r0 + i, MIB + i * 4096, 4096, true);
                d.hold_pages(vec![1 + i as u32]);
            }
            let mut out = Vec::new();
            while let Some(t) = d.take_run() {
                d.blk_run(t);
            }
            d.take_dispatched(&mut out);
            assert_eq!(out.iter().map(|(_, p)| p.len()).sum::<usize>(), if dd { 5 } else { 0 });
            let s = d.stat();
            got.push((s.write_ios, s.write_merges));
        }
        assert_eq!(got, [(3, 2), (2, 3)], "(write requests, write merges): none, mq-deadline");
    }

    #[test]
    fn held_writes_merge_back_and_front_up_to_the_limits() {
        let mut dd = MqDeadline::new(DeadlineParams::default());
        assert_eq!(dd.hold(0, 8192, 4096, 1), 0);
        assert_eq!(dd.merge(12288, 4096, 1, 16384, 128), Some(0), "back merge");
        assert_eq!(dd.merge(4096, 4096, 1, 16384, 128), Some(0), "front merge");
        assert_eq!(dd.merge(16384, 4096, 1, 16384, 128), Some(0), "up to 16 KiB");
        assert_eq!(dd.merge(20480, 4096, 1, 16384, 128), None, "16 KiB is the limit");
        assert_eq!(dd.hold(0, 20480, 4096, 1), 1);
        assert_eq!(dd.merge(24576, 4096, 3, 1 << 20, 3), None, "1 + 3 segments > 3");
        assert_eq!(dd.held_bytes(), 20480);
        let h = dd.pop().unwrap();
        assert_eq!((h.start, h.end, h.segs), (4096, 20480, 4));
        assert_eq!(dd.held_bytes(), 4096);
    }

    #[test]
    fn reads_pass_held_writes_writes_starved_times_then_a_write_batch_goes() {
        let mut dd = MqDeadline::new(DeadlineParams { writes_starved: 2, fifo_batch: 16 });
        // dd_init_sched starts with last_dir = DD_WRITE: a held write would go on as a batch.
        dd.hold(0, 0, 4096, 1);
        assert_eq!(dd.writes_before_read(1000 << 12), 16);
        let w = dd.pop().unwrap();
        dd.dispatched(true, w.start);
        dd.dispatched(false, 1000 << 12);
        dd.hold(0, 4096, 4096, 1);
        // Reads at falling positions, so no read batch goes on: each is a new choice.
        assert_eq!(dd.writes_before_read(900 << 12), 0);
        dd.dispatched(false, 900 << 12);
        assert_eq!(dd.writes_before_read(800 << 12), 0);
        dd.dispatched(false, 800 << 12);
        assert_eq!(dd.writes_before_read(700 << 12), 16, "passed over twice: a write batch");
        let w = dd.pop().unwrap();
        dd.dispatched(true, w.start);
        // The write batch goes on ahead of the next read while writes are held in order.
        dd.hold(0, 8192, 4096, 1);
        assert_eq!(dd.writes_before_read(600 << 12), 15);
    }

    #[test]
    fn a_read_batch_goes_on_in_ascending_order() {
        let mut dd = MqDeadline::new(DeadlineParams { writes_starved: 0, fifo_batch: 2 });
        dd.dispatched(false, 100);
        dd.hold(0, 0, 4096, 1);
        // The last dispatch was a read and this one follows it: the read batch goes on even
        // though writes_starved 0 would send the writes at the next choice.
        assert_eq!(dd.writes_before_read(200), 0);
        dd.dispatched(false, 200);
        // fifo_batch 2 reached: a new choice, and writes_starved 0 sends the writes.
        assert_eq!(dd.writes_before_read(300), 2);
    }
}
