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
//!   (128 KiB) or more (`blk_add_rq_to_plug`). [`RequestQueue::plug`] builds one plugged batch's
//!   requests: the submitter's bios (one page each from swap, up to `BIO_MAX_VECS` bvecs from
//!   `mpage_readahead`/ext4's readpages and writepages, where physically contiguous pages share a
//!   bvec), each split to the queue limits (`bio_split_to_limits`) and back-merged into the
//!   plug's last request while the two stay within `max_sectors_kb` and `max_segments`
//!   (`ll_back_merge_fn` → `ll_new_hw_segment`: segments add up). The flush rules only decide
//!   when the plug's requests reach the scheduler, and vmlab submits a batch at one instant.
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
//! - A virtio-blk device without indirect descriptors (`VIRTIO_RING_F_INDIRECT_DESC` off) puts
//!   a request's header, each data segment and its status in ring descriptors of their own;
//!   `virtblk_probe` sizes the tags at half the ring ("2 descs per req"), so requests of more
//!   than one segment run out of ring before they run out of tags. `virtio_queue_rq` then
//!   returns `BLK_STS_DEV_RESOURCE` and stops the queue until a completion frees descriptors
//!   (`virtblk_done`), and the requests behind stay in the scheduler, mergeable. Modelled as a
//!   second dispatch bound beside the tags: the descriptors of the requests in flight plus the
//!   next one's may not exceed the ring (`with_ring`; 0, the default, is no ring).
//!
//! The model: a request that merges costs the device its transfer only (it rides in another
//! request's command: no per-request overhead, no positioning) and holds no tag; the request it
//! joined keeps the completion time already given to its submitter, and the merged pages
//! complete when the device gets to their bytes. A request that does not merge waits for a tag:
//! its dispatch time is when the `depth`-th request ahead of it completes.

use crate::mm_types::Pfn;

/// `BIO_MAX_VECS`: the most bvecs a bio holds (`bio_max_segs`); readahead's and writeback's
/// bios end there, or at a gap on disk.
pub const BIO_MAX_VECS: u32 = 256;

/// How a submitter builds its bios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BioShape {
    /// One bio per page: `swap_read_folio`, `__swap_writepage` (order-0 folios).
    PerPage,
    /// Up to [`BIO_MAX_VECS`] bvecs, a physically contiguous run of pages sharing one
    /// (`bio_add_page` → `bvec_try_merge_page`): `mpage_readahead`, ext4's readpages/writepages.
    Vecs,
}

/// One request a plug hands to the scheduler: `pages` pages from the batch's `first`, in
/// `segs` physical segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlugRq {
    pub first: usize,
    pub pages: usize,
    pub segs: u32,
}

/// Queue limits and merge state of one block device.
#[derive(Debug, Clone)]
pub struct RequestQueue {
    max_request_bytes: u64,
    max_segments: u32,
    /// Tags: requests the device accepts at once (its queue depth).
    depth: usize,
    /// Completion times of the requests holding or waiting for a tag, ascending, with the ring
    /// descriptors each takes (0 without a ring).
    tagged: Vec<(u64, u32)>,
    /// Descriptors of the device's ring (0: no ring bound).
    ring: u32,
    /// When the last request went to the device: dispatch is in submission order.
    last_dispatch: u64,
    /// Requests still in the scheduler, where later ones can merge into them.
    sched: Vec<SchedRq>,
    /// Bios merged into an existing request, in the plug or in the scheduler, reads and writes
    /// (`/sys/block/DEV/stat` fields 2 and 6: `blk_account_io_merge_bio`).
    pub merges: [u64; 2],
}

#[derive(Debug, Clone, Copy)]
struct SchedRq {
    start: u64,
    end: u64,
    segs: u32,
    write: bool,
    dispatch: u64,
    /// Its completion, which finds its entry in `tagged`.
    done: u64,
}

impl RequestQueue {
    /// `max_sectors_kb` and `max_segments` of the queue, and the device's tag depth.
    pub fn new(max_sectors_kb: u64, max_segments: u64, depth: usize) -> RequestQueue {
        RequestQueue {
            max_request_bytes: (max_sectors_kb * 1024).max(4096),
            max_segments: max_segments.clamp(1, u32::MAX as u64) as u32,
            depth: depth.max(1),
            tagged: Vec::new(),
            ring: 0,
            last_dispatch: 0,
            sched: Vec::new(),
            merges: [0; 2],
        }
    }

    /// A virtio ring of `descs` descriptors without indirect ones: a request takes one per
    /// segment plus two. 0: no ring bound.
    pub fn with_ring(mut self, descs: u32) -> RequestQueue {
        self.ring = descs;
        self
    }

    fn descs(&self, segs: u32) -> u32 {
        if self.ring == 0 {
            0
        } else {
            // max_segments keeps a request within the ring (virtio-blk: seg_max ≤ ring − 2).
            (segs + 2).min(self.ring)
        }
    }

    /// The largest request `ll_back_merge_fn`/`ll_front_merge_fn` let a merge build, in bytes.
    pub fn max_request_bytes(&self) -> u64 {
        self.max_request_bytes
    }

    /// One plugged batch: `pfns` are the frames of pages at consecutive disk blocks, in order.
    /// Fills `out` with the requests the plug hands over and returns the bios merged on the way
    /// (counted in `merges`).
    pub fn plug(&mut self, pfns: &[Pfn], shape: BioShape, write: bool, out: &mut Vec<PlugRq>) -> u64 {
        out.clear();
        let max_pages = (self.max_request_bytes / 4096) as usize;
        let max_segs = self.max_segments;
        let mut merged = 0;
        let mut i = 0;
        while i < pfns.len() {
            // The submitter's bio: [i, bio_end).
            let bio_end = match shape {
                BioShape::PerPage => i + 1,
                BioShape::Vecs => {
                    let (mut j, mut vecs) = (i + 1, 1);
                    while j < pfns.len() {
                        if pfns[j] != pfns[j - 1].wrapping_add(1) {
                            if vecs == BIO_MAX_VECS {
                                break;
                            }
                            vecs += 1;
                        }
                        j += 1;
                    }
                    j
                }
            };
            // bio_split_to_limits: each part goes through blk_attempt_plug_merge on its own.
            let mut s = i;
            while s < bio_end {
                let (mut e, mut segs) = (s + 1, 1);
                while e < bio_end && e - s < max_pages {
                    if pfns[e] != pfns[e - 1].wrapping_add(1) {
                        if segs == max_segs {
                            break;
                        }
                        segs += 1;
                    }
                    e += 1;
                }
                match out.last_mut() {
                    Some(last)
                        if last.first + last.pages == s
                            && last.pages + (e - s) <= max_pages
                            && last.segs + segs <= max_segs =>
                    {
                        last.pages += e - s;
                        last.segs += segs;
                        merged += 1;
                    }
                    _ => out.push(PlugRq { first: s, pages: e - s, segs }),
                }
                s = e;
            }
            i = bio_end;
        }
        self.merges[write as usize] += merged;
        merged
    }

    fn forget(&mut self, now: u64) {
        let done = self.tagged.partition_point(|&(c, _)| c <= now);
        self.tagged.drain(..done);
        self.sched.retain(|r| r.dispatch > now);
    }

    /// `elv_merge`: join a request still in the scheduler that this one continues (back) or
    /// precedes (front), when the two stay within the queue's limits (bytes and segments).
    /// True when merged.
    pub fn elv_merge(&mut self, now: u64, offset: u64, bytes: u64, segs: u32, write: bool) -> bool {
        self.forget(now);
        let end = offset + bytes;
        let (max, max_segs) = (self.max_request_bytes, self.max_segments);
        let hit = self.sched.iter_mut().find(|r| {
            r.write == write
                && (r.end == offset || r.start == end)
                && r.end - r.start + bytes <= max
                && r.segs + segs <= max_segs
        });
        match hit {
            Some(r) => {
                r.start = r.start.min(offset);
                r.end = r.end.max(end);
                r.segs += segs;
                self.merges[write as usize] += 1;
                // Its segments ride in the ring with the request they joined.
                let (done, add) = (r.done, if self.ring == 0 { 0 } else { segs });
                let at = self.tagged.partition_point(|&(c, _)| c < done);
                if let Some(t) = self.tagged.get_mut(at) {
                    t.1 = (t.1 + add).min(self.ring.max(t.1));
                }
                true
            }
            None => false,
        }
    }

    /// When a new request gets a driver tag: at once while fewer than `depth` requests hold or
    /// wait for one, else when the request `depth` places ahead of it completes (dispatch is in
    /// submission order).
    /// With a ring, also not before the descriptors in use leave room for this request's `segs`
    /// plus two, nor before the request ahead of it.
    pub fn dispatch_at(&mut self, now: u64, segs: u32) -> u64 {
        let t = self.quote(now, segs);
        if self.ring > 0 {
            self.last_dispatch = t;
        }
        t
    }

    /// [`RequestQueue::dispatch_at`] without taking the slot: when the driver could take a
    /// request of `segs` segments next.
    pub fn quote(&mut self, now: u64, segs: u32) -> u64 {
        self.forget(now);
        let n = self.tagged.len();
        let mut t = if n < self.depth { now } else { self.tagged[n - self.depth].0 };
        if self.ring > 0 {
            t = t.max(self.last_dispatch);
            let need = self.descs(segs);
            let mut i = self.tagged.partition_point(|&(c, _)| c <= t);
            let mut in_use: u32 = self.tagged[i..].iter().map(|&(_, d)| d).sum();
            while in_use + need > self.ring && i < n {
                in_use -= self.tagged[i].1;
                t = self.tagged[i].0;
                i += 1;
            }
        }
        t
    }

    pub fn max_segments(&self) -> u32 {
        self.max_segments
    }

    /// Record a request that did not merge: it holds a tag until `done`, and until `dispatch`
    /// it sits in the scheduler where later ones can merge into it.
    #[allow(clippy::too_many_arguments)]
    pub fn insert(&mut self, now: u64, offset: u64, bytes: u64, segs: u32, write: bool, dispatch: u64, done: u64) {
        let at = self.tagged.partition_point(|&(c, _)| c <= done);
        self.tagged.insert(at, (done, self.descs(segs)));
        if dispatch > now {
            self.sched.push(SchedRq { start: offset, end: offset + bytes, segs, write, dispatch, done });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_sectors_kb_bounds_a_request() {
        assert_eq!(RequestQueue::new(1280, 128, 32).max_request_bytes(), 1280 * 1024);
        assert_eq!(RequestQueue::new(2, 128, 32).max_request_bytes(), 4096, "at least a page");
    }

    #[test]
    fn dispatch_waits_for_a_tag() {
        let mut q = RequestQueue::new(1280, 128, 2);
        assert_eq!(q.dispatch_at(0, 1), 0);
        q.insert(0, 0, 4096, 1, false, 0, 100);
        assert_eq!(q.dispatch_at(0, 1), 0);
        q.insert(0, 1 << 20, 4096, 1, false, 0, 200);
        // Both tags held: the third goes when the first completes, the fourth with the second.
        assert_eq!(q.dispatch_at(10, 1), 100);
        q.insert(10, 2 << 20, 4096, 1, false, 100, 300);
        assert_eq!(q.dispatch_at(10, 1), 200);
        // Once they complete the tags are free again.
        assert_eq!(q.dispatch_at(300, 1), 300);
    }

    #[test]
    fn merges_only_into_requests_not_yet_dispatched() {
        let mut q = RequestQueue::new(1280, 128, 1);
        q.insert(0, 0, 8192, 2, false, 0, 100);
        // Dispatched at once: nothing to merge into.
        assert!(!q.elv_merge(1, 8192, 4096, 1, false));
        let d = q.dispatch_at(1, 1);
        assert_eq!(d, 100);
        q.insert(1, 8192, 4096, 1, false, d, 150);
        // Back merge, front merge, a gap, the other direction.
        assert!(q.elv_merge(2, 12288, 4096, 1, false));
        assert!(q.elv_merge(2, 4096, 4096, 1, false));
        assert!(!q.elv_merge(2, 20480, 4096, 1, false));
        assert!(!q.elv_merge(2, 16384, 4096, 1, true));
        assert_eq!(q.merges, [2, 0], "read merges, write merges");
        // After its dispatch time it is the device's.
        assert!(!q.elv_merge(100, 16384, 4096, 1, false));
    }

    #[test]
    fn merge_stops_at_the_queue_limit() {
        let mut q = RequestQueue::new(16, 128, 1);
        q.insert(0, 0, 4096, 1, false, 0, 100);
        q.insert(0, 4096, 8192, 2, false, 100, 200);
        assert!(q.elv_merge(1, 12288, 4096, 1, false));
        assert!(!q.elv_merge(1, 16384, 8192, 2, false), "16 KiB is max_sectors_kb");
        assert!(q.elv_merge(1, 16384, 4096, 1, false));
    }

    #[test]
    fn a_scheduler_merge_counts_segments_too() {
        let mut q = RequestQueue::new(4096, 4, 1);
        q.insert(0, 0, 4096, 1, true, 0, 100);
        q.insert(0, 4096, 8192, 3, true, 100, 200);
        assert!(!q.elv_merge(1, 12288, 4096, 2, true), "3 + 2 segments > max_segments 4");
        assert!(q.elv_merge(1, 12288, 4096, 1, true));
        assert_eq!(q.merges, [0, 1]);
    }

    /// Frames `base..base + n`: physically contiguous pages.
    fn run(base: Pfn, n: u32) -> Vec<Pfn> {
        (base..base + n).collect()
    }

    #[test]
    fn a_contiguous_readahead_batch_is_one_request_without_merges() {
        let mut q = RequestQueue::new(4096, 254, 32);
        let mut out = Vec::new();
        // 40 contiguous frames: one bvec, one bio, one request of one segment.
        assert_eq!(q.plug(&run(1000, 40), BioShape::Vecs, false, &mut out), 0);
        assert_eq!(out, [PlugRq { first: 0, pages: 40, segs: 1 }]);
    }

    #[test]
    fn swap_bios_of_one_page_merge_in_the_plug() {
        let mut q = RequestQueue::new(1280, 128, 32);
        let mut out = Vec::new();
        // swap_read_folio: one bio per page; blk_attempt_plug_merge joins them.
        assert_eq!(q.plug(&[7, 3, 99, 42], BioShape::PerPage, false, &mut out), 3);
        assert_eq!(out, [PlugRq { first: 0, pages: 4, segs: 4 }]);
        assert_eq!(q.merges, [3, 0]);
        // Writes count on their own side.
        q.plug(&[5, 6], BioShape::PerPage, true, &mut out);
        assert_eq!(q.merges, [3, 1]);
        assert_eq!(out, [PlugRq { first: 0, pages: 2, segs: 2 }], "segments add up, contiguous or not");
    }

    #[test]
    fn scattered_frames_end_a_bio_at_bio_max_vecs_and_the_plug_joins_the_next() {
        let mut q = RequestQueue::new(4096, 1024, 32);
        let mut out = Vec::new();
        // 300 pages, every frame on its own: bios of 256 and 44 bvecs, merged into one request.
        let pfns: Vec<Pfn> = (0..300).map(|i| i * 2).collect();
        assert_eq!(q.plug(&pfns, BioShape::Vecs, false, &mut out), 1);
        assert_eq!(out, [PlugRq { first: 0, pages: 300, segs: 300 }]);
    }

    #[test]
    fn max_segments_splits_a_bio_and_the_rest_starts_a_request() {
        let mut q = RequestQueue::new(4096, 254, 32);
        let mut out = Vec::new();
        // A 256-bvec bio on a queue of 254 segments: split 254 + 2; the 2 cannot join the full one.
        let pfns: Vec<Pfn> = (0..256).map(|i| i * 2).collect();
        assert_eq!(q.plug(&pfns, BioShape::Vecs, false, &mut out), 0);
        assert_eq!(out, [PlugRq { first: 0, pages: 254, segs: 254 }, PlugRq { first: 254, pages: 2, segs: 2 }]);
    }

    #[test]
    fn max_sectors_kb_splits_a_long_contiguous_run() {
        let mut q = RequestQueue::new(1280, 128, 32);
        let mut out = Vec::new();
        // 2 MiB of contiguous frames: one bio, split at 1280 KiB (320 pages).
        assert_eq!(q.plug(&run(0, 512), BioShape::Vecs, false, &mut out), 0);
        assert_eq!(out, [PlugRq { first: 0, pages: 320, segs: 1 }, PlugRq { first: 320, pages: 192, segs: 1 }]);
        // Two-page runs (every other pair apart): 256 bvecs fill a bio of 512 pages, which
        // max_segments 128 splits into 256-page requests.
        let pfns: Vec<Pfn> = (0..600).map(|i| i + 2 * (i / 2)).collect();
        q.plug(&pfns, BioShape::Vecs, false, &mut out);
        assert!(out.iter().all(|r| r.segs <= 128 && r.pages <= 320), "{out:?}");
        assert_eq!(out.iter().map(|r| r.pages).sum::<usize>(), 600);
        assert_eq!(out[0], PlugRq { first: 0, pages: 256, segs: 128 });
    }

    #[test]
    fn a_ring_without_indirect_descriptors_bounds_requests_by_their_segments() {
        // 128 tags, a 24-descriptor ring: requests of 6 segments take 8 each, so three fit.
        let mut q = RequestQueue::new(4096, 254, 128).with_ring(24);
        for i in 0..3 {
            assert_eq!(q.dispatch_at(0, 6), 0, "request {i} fits");
            q.insert(0, i << 20, 24 * 1024, 6, false, 0, 100 + i);
        }
        // The fourth waits for the first completion, and while it waits it takes merges.
        let d = q.dispatch_at(0, 6);
        assert_eq!(d, 100);
        q.insert(0, 3 << 20, 24 * 1024, 6, false, d, 200);
        assert!(q.elv_merge(1, (3 << 20) + 24 * 1024, 4096, 1, false));
        // A one-segment request (3 descriptors) behind it: not before it (submission order), and
        // at 100 the other three hold 8 + 8 + 9 (the merge rides along) = 25: it waits for the
        // second completion.
        assert_eq!(q.dispatch_at(1, 1), 101);
    }

    #[test]
    fn without_a_ring_only_tags_bound_dispatch() {
        let mut q = RequestQueue::new(4096, 254, 4);
        for i in 0..4 {
            assert_eq!(q.dispatch_at(0, 200), 0);
            q.insert(0, i << 20, 800 * 1024, 200, false, 0, 100 + i);
        }
        assert_eq!(q.dispatch_at(0, 200), 100);
    }
}
