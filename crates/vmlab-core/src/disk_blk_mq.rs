//! The device's side of 6.x's blk-mq request path (`block/blk-mq.c`, `blk-merge.c`,
//! `mq-deadline.c`; the queue's limits, plug and tags themselves are blk.rs): a [`Disk`] with
//! a [`RequestQueue`] gives a plugged batch its requests, lets a request that merges with
//! nothing wait for a driver tag, holds writes in mq-deadline while the device is full and
//! dispatches them when a tag frees (`blk_mq_run_hw_queue`), and carries the queue's writeback
//! throttle (blk_wbt.rs) and a loop device's queued writes (loop_dev.rs). Without a queue (the
//! rows before blk-mq) none of this runs: disk.rs sends a submission straight to the spindles
//! or through 2.4's request queue (disk_ll24.rs).

use std::ops::ControlFlow;

use super::*;
use crate::blk::{BioShape, PlugRq};
use crate::mq_deadline::DeadlineParams;

/// The queue's `nr_requests`, `wbt_lat_usec` and `write_cache` (sysfs `queue/`); `None` takes
/// the kernel's default.
#[derive(Debug, Clone, Copy, Default)]
pub struct WbtParams {
    pub nr_requests: Option<u32>,
    pub lat_us: Option<u64>,
    pub write_cache: bool,
}

impl Disk {
    /// Put 6.8's request queue in front of the device: `max_sectors_kb`/`max_segments` limits,
    /// a tag per request up to the device's depth (`queue_depth` per stripe), merging in the
    /// scheduler while a request waits for its tag.
    pub fn set_queue(&mut self, max_sectors_kb: u64, max_segments: u64) {
        let depth = self.params.queue_depth as usize * self.params.stripes() as usize;
        self.queue = Some(RequestQueue::new(max_sectors_kb, max_segments, depth).with_ring(self.ring));
        let w = self.wbt_params;
        // blk_mq_init_sched: 2 × min(tag depth, BLKDEV_DEFAULT_RQ = 128) with a scheduler.
        let nr_requests = w.nr_requests.unwrap_or(2 * (depth as u32).min(128));
        // wbt_default_latency_nsec: 75 ms for rotational storage, 2 ms for the rest.
        let lat_ns = w.lat_us.map_or(if self.params.seek_ns > 0 { 75_000_000 } else { 2_000_000 }, |u| u * 1000);
        self.wbt = Some(Wbt::new(nr_requests, lat_ns, w.write_cache));
    }

    /// The queue's scheduler: `mq-deadline` with these tunables, or `none` (arrival order).
    /// Only a disk behind 6.8's queue uses it.
    pub fn set_elevator(&mut self, dd: Option<DeadlineParams>) {
        self.elevator = dd.map(MqDeadline::new);
    }

    /// The writeback throttle's settings (see [`WbtParams`]): set before [`Disk::set_queue`].
    pub fn set_wbt_params(&mut self, p: WbtParams) {
        self.wbt_params = p;
    }

    /// The flusher is about to issue a write request at `now`: `None` if the writeback
    /// throttle lets it, else the time it sleeps until (blk_wbt.rs). No throttle without 6.8's
    /// queue.
    pub fn wbt_flusher_wait(&mut self, now: u64) -> Option<u64> {
        self.wbt.as_mut()?.flusher_wait(now.max(self.last_now))
    }

    /// The writes submitted from now on are counted in the throttle's queue `rwq`
    /// (`blk_wbt::RWQ_BG` unless a swap writer says otherwise; it sets it back after).
    pub fn set_wbt_rwq(&mut self, rwq: u8) {
        self.wbt_rwq = rwq;
    }

    /// The limit `get_limit` gives a write at `now` (`hiprio`: see [`Wbt::limit`]); `None`
    /// without 6.8's queue (no throttle).
    pub fn wbt_limit(&mut self, now: u64, hiprio: bool) -> Option<u32> {
        let now = now.max(self.last_now);
        Some(self.wbt.as_mut()?.limit(now, hiprio))
    }

    /// Tracked writes of the throttle's queue `rwq` in flight at `now` (0 without a throttle).
    pub fn wbt_inflight(&self, now: u64, rwq: u8) -> u32 {
        self.wbt.as_ref().map_or(0, |w| w.inflight(now.max(self.last_now), rwq))
    }

    /// May a writer of queue `rwq` start a request at `now` under `limit`, with `extra` of its
    /// own requests counted but not yet submitted? `None`: yes; `Some(t)`: it sleeps until `t`
    /// (blk_wbt.rs [`Wbt::wait`]).
    pub fn wbt_wait(&mut self, now: u64, rwq: u8, limit: u32, extra: u32) -> Option<u64> {
        let now = now.max(self.last_now);
        self.wbt.as_mut()?.wait(now, rwq, limit, extra)
    }

    /// A write request queued at `now` to the loop worker: the writeback throttle counts it in
    /// flight from now, its completion not known until [`Disk::submit_loop_cmd`].
    pub fn loop_queued(&mut self, now: u64) {
        let now = now.max(self.last_now);
        let rwq = self.wbt_rwq;
        if let Some(w) = self.wbt.as_mut() {
            w.issue_write(now, crate::blk_wbt::UNKNOWN, rwq);
        }
    }

    /// The loop worker submits the oldest queued write at `now` (`lo_rw_aio`): the device
    /// serves it as any write, and the throttle's entry made at its queueing gets its
    /// completion. Returns the completion.
    pub fn submit_loop_cmd(&mut self, now: u64, offset: u64, bytes: u64, segs: u32) -> u64 {
        let wbt = self.wbt.take();
        let done = self.submit_segs(now, offset, bytes, segs, true);
        self.wbt = wbt;
        if let Some(w) = self.wbt.as_mut() {
            w.dispatched(done);
        }
        done
    }

    /// A virtio ring of `descs` descriptors without indirect ones in front of the device (see
    /// blk.rs): set before [`Disk::set_queue`]. 0: none.
    pub fn set_ring(&mut self, descs: u32) {
        self.ring = descs;
    }

    /// Behind 6.8's request queue (`set_queue`).
    pub fn has_queue(&self) -> bool {
        self.queue.is_some()
    }

    /// Bios merged into a request, in a plug or in the scheduler (the `merges` fields of
    /// `/sys/block/DEV/stat`, reads and writes together).
    pub fn merges(&self) -> u64 {
        self.queue.as_ref().map_or(0, |q| q.merges[0] + q.merges[1])
    }

    /// Under 6.8's queue, the requests one plugged batch becomes (`pfns`: the frames of pages at
    /// consecutive disk blocks; see [`RequestQueue::plug`]). False without a queue: the caller
    /// splits as [`Disk::bio_max_bytes`] says.
    pub fn plug(&mut self, pfns: &[Pfn], shape: BioShape, write: bool, out: &mut Vec<PlugRq>) -> bool {
        match self.queue.as_mut() {
            Some(q) => {
                q.plug(pfns, shape, write, out);
                true
            }
            None => false,
        }
    }

    /// Under mq-deadline, a write that does not go to the driver now: one that joins a held
    /// write (`dd_bio_merge`, counted as a merge), or that finds writes held or the device
    /// full. Its index among the held writes.
    fn hold_write(&mut self, now: u64, offset: u64, bytes: u64, segs: u32, write: bool) -> Option<usize> {
        let (Some(q), Some(e)) = (self.queue.as_mut(), self.elevator.as_mut()) else { return None };
        if !write {
            return None;
        }
        if let Some(i) = e.merge(offset, bytes, segs, q.max_request_bytes(), q.max_segments()) {
            q.merges[1] += 1;
            return Some(i);
        }
        let rwq = self.wbt_rwq;
        (e.has_held() || q.quote(now, segs) > now).then(|| {
            let i = e.hold(now, offset, bytes, segs);
            e.set_rwq(i, rwq);
            i
        })
    }

    /// A write the scheduler holds (at index `i`, new or merged): counted as submitted; its
    /// pages join it in [`Disk::hold_pages`]. Returns a guess at its completion for the
    /// submitter's backlog check: after what the device holds now and every held byte.
    fn held(&mut self, now: u64, i: usize, bytes: u64) -> u64 {
        self.held_last = Some(i);
        self.merged = false;
        self.writes += 1;
        self.bytes_written += bytes;
        let (q, e) = (self.queue.as_mut().expect("queue"), self.elevator.as_ref().expect("elevator"));
        let head_segs = e.head().map_or(1, |h| h.segs);
        let next = q.quote(now, head_segs);
        let held_bytes = e.held_bytes();
        self.run_wanted = Some(next);
        let moved = next.max(self.busy_until).saturating_add(transfer_ns(held_bytes, self.write_bandwidth_bps()));
        self.completes(moved, true)
    }

    /// `blk_mq_run_hw_queue` with no read waiting: the held writes whose slot has come by
    /// `now` go to the device, in arrival order, at `now` (the device's clock: a `BlkRun` or a
    /// submission that comes after the slot freed).
    pub(super) fn run_queue(&mut self, now: u64) {
        loop {
            let (Some(q), Some(e)) = (self.queue.as_mut(), self.elevator.as_ref()) else { return };
            let Some(head) = e.head() else { return };
            let at = q.quote(now, head.segs);
            if at > now {
                self.run_wanted = Some(at);
                return;
            }
            self.dispatch_held(now);
        }
    }

    /// The oldest held write goes to the driver: it takes the next slot from `now` (its
    /// dispatch) and is booked on the device; its completion waits in `dispatched`. False when
    /// none is held.
    fn dispatch_held(&mut self, now: u64) -> bool {
        let (Some(q), Some(e)) = (self.queue.as_mut(), self.elevator.as_mut()) else { return false };
        let Some(h) = e.pop() else { return false };
        let start = q.dispatch_at(now, h.segs);
        e.dispatched(true, h.start);
        // Its ticks run from when the scheduler took it (`rq->start_time_ns`), hold included;
        // it counts in the throttle's queue it was allocated in.
        let submitting = std::mem::replace(&mut self.wbt_rwq, h.rwq);
        let done = self.start_request(now, h.since, start, h.start, h.end - h.start, h.segs, true);
        self.wbt_rwq = submitting;
        self.in_flight_until(now, done);
        self.dispatched.push((done, h.pages));
        true
    }

    /// `blk_mq_submit_bio` for a request that merged with nothing: under mq-deadline a write
    /// may be held (`hold_write`; `Break` with the guess of its completion), a read
    /// first lets through the held writes `__dd_dispatch_request` sends ahead of it; then the
    /// request takes the next driver tag (`Continue` with its dispatch time).
    pub(super) fn mq_insert(
        &mut self,
        now: u64,
        offset: u64,
        bytes: u64,
        segs: u32,
        write: bool,
    ) -> ControlFlow<u64, u64> {
        if let Some(i) = self.hold_write(now, offset, bytes, segs, write) {
            return ControlFlow::Break(self.held(now, i, bytes));
        }
        if !write {
            let n = self.elevator.as_mut().map_or(0, |e| e.writes_before_read(offset));
            for _ in 0..n {
                if !self.dispatch_held(now) {
                    break;
                }
            }
        }
        let q = self.queue.as_mut().expect("queue");
        let start = q.dispatch_at(now, segs);
        if let Some(e) = self.elevator.as_mut() {
            e.dispatched(write, offset);
        }
        ControlFlow::Continue(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    /// An hdd with one tag behind 6.8's queue: a second request waits in the scheduler.
    fn one_tag_hdd() -> (DiskParams, Disk) {
        let mut p = DiskParams::preset("hdd").unwrap();
        p.queue_depth = 1;
        let mut d = Disk::new(p).unwrap();
        d.set_queue(1280, 128);
        (p, d)
    }

    #[test]
    fn queued_request_merges_and_costs_its_transfer_only() {
        let (p, mut d) = one_tag_hdd();
        let xfer = |b: u64| (b as u128 * NS_PER_SEC).div_ceil(p.bandwidth_bps as u128) as u64;
        let a = d.submit(0, 0, 64 * 1024, false);
        // The only tag is taken: the next request waits in the scheduler until `a` completes.
        let b = d.submit(0, 10 * MIB, 64 * 1024, false);
        assert!(!d.last_merged());
        assert_eq!(b, a + p.latency_ns + p.seek_ns + xfer(64 * 1024));
        // Adjacent to the waiting one: merged, no latency or seek of its own, no interrupt.
        let c = d.submit(0, 10 * MIB + 64 * 1024, 64 * 1024, false);
        assert!(d.last_merged());
        assert_eq!(c, b + xfer(64 * 1024));
        assert_eq!(d.merges(), 1);
        // Once the waiting request is dispatched nothing can join it.
        let e = d.submit(a, 10 * MIB + 128 * 1024, 4096, false);
        assert!(!d.last_merged() && e > c);
    }

    #[test]
    fn without_a_queue_bios_stop_at_the_chunk() {
        let mut d = Disk::preset("raid10").unwrap();
        assert_eq!(d.bio_max_bytes(4096), 60 * 1024);
        d.set_queue(1280, 128);
        assert_eq!(d.bio_max_bytes(4096), 1280 * 1024, "the plug merges them up to max_sectors_kb");
    }

    #[test]
    fn stat_counts_requests_after_merging_and_merges_by_direction() {
        let (_, mut d) = one_tag_hdd();
        let mut out = Vec::new();
        // A swap-in run of three one-page bios: one request, two plug merges.
        assert!(d.plug(&[10, 20, 30], BioShape::PerPage, false, &mut out));
        assert_eq!(out.len(), 1);
        d.submit_segs(0, 0, 3 * 4096, out[0].segs, false);
        // A write waits for the tag; the next adjacent one merges into it in the scheduler.
        d.submit(0, MIB, 4096, true);
        d.submit(0, MIB + 4096, 4096, true);
        let st = d.stat();
        assert_eq!((st.read_ios, st.read_merges, st.read_sectors), (1, 2, 24));
        assert_eq!((st.write_ios, st.write_merges, st.write_sectors), (1, 1, 16));
        // Without a queue nothing plugs and nothing counts as merged.
        let mut old = Disk::preset("hdd").unwrap();
        assert!(!old.plug(&[10, 20, 30], BioShape::PerPage, false, &mut out));
        old.submit(0, 0, 4096, false);
        assert_eq!(old.stat().read_merges, 0);
    }
}
