//! Block device model: HDD, SSD, NVMe, RAID10 and SAN as a set of spindles with FIFO queues.
//!
//! Time is u64 nanoseconds of simulated time. A request is mapped to one spindle per stripe it
//! touches; each spindle serves its queue in FIFO order and charges
//! `latency + seek + bytes / bandwidth` per request, where the seek is skipped when the request
//! starts exactly where the spindle's head stopped.
//!
//! Command queueing (TCQ/NCQ, or the elevator in front of the device): with `k` requests queued on
//! a spindle the drive picks the nearest one, not the oldest. The nearest of `k` uniformly placed
//! targets is ~1/k of the stroke away, and short seeks are acceleration-limited (time ∝
//! sqrt(distance)), so the positioning cost of a request that arrives with `k - 1` others queued is
//! taken as `seek_ns / sqrt(k)`, with `k` capped at the spindle's queue depth (requests beyond it
//! wait in the host queue, where the drive cannot see them). We still *serve* in FIFO order — only
//! the cost shrinks — which keeps completion order deterministic and each request O(1) per spindle.
//!
//! With a [`RequestQueue`] (6.8's blk-mq, `set_queue`: disk_blk_mq.rs) requests wait for a tag
//! beyond the device's depth and merge in the scheduler while they wait; without one (the older
//! profiles) every submission goes straight to its spindles, or through 2.4's request queue
//! (disk_ll24.rs, ll_rw_blk/).
//!
//! Device-wide transfer limit (`device_bandwidth_bps`, 0 = none): the spindles are independent
//! command streams, but on a virtual disk or behind one controller their data crosses one link.
//! Every piece's transfer also takes its bytes' time on that shared link, in submission order;
//! a piece completes when both its spindle and the link are done with it. One stream slower than
//! the link never waits for it; many streams together never move more than the link carries.
//! A write's bytes take the link's time at `device_write_bandwidth_bps` when that is set: the
//! two directions share the link's time but not its rate (the loop image of issue 17 moved
//! writes at depth at 1.4–3.5 GB/s and reads at 1.0–1.75, and a mix of the two in about the sum
//! of the times each would take alone: docs/REAL.md, "The loop disk's writes at depth").
//!
//! A write can take a completion latency after its transfer (`write_completion_latency_ns`, 0 =
//! none) that holds neither spindle nor link, so every write in flight takes it at once: a request
//! at depth completes that long after the drain of what was ahead of it. That is a stacked
//! device's completion path: the loop device passes each request to its image file as one direct
//! kiocb from its worker and ends it from the backing write's completion through the block
//! softirq (drivers/block/loop.c `loop_queue_rq` → `loop_queue_work`, `lo_rw_aio`,
//! `lo_rw_aio_complete`), and the flusher's writes on issue 17's loop image took 2.2–2.8 ms plus
//! the drain of the bytes ahead at 2.9–4.1 GB/s, at 0–48 in flight (docs/REAL.md, "The loop's
//! write completions at depth").
//!
//! Callers must submit with non-decreasing `now` (the event loop is time-ordered); the busy-time and
//! in-flight accounting relies on it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::ControlFlow;

use crate::blk::RequestQueue;
use crate::blk_wbt::Wbt;
use crate::ll_rw_blk;
use crate::mm_types::Pfn;
use crate::mq_deadline::MqDeadline;

const NS_PER_SEC: u128 = 1_000_000_000;
const KIB: u64 = 1024;

/// Physical parameters of a block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskParams {
    /// Sequential transfer rate of one spindle, bytes per second.
    pub bandwidth_bps: u64,
    /// Average positioning time (seek + rotation) for a non-sequential request.
    pub seek_ns: u64,
    /// Fixed per-request overhead (command processing, controller, fabric).
    pub latency_ns: u64,
    /// Commands one spindle accepts at once (its NCQ/TCQ depth).
    pub queue_depth: u32,
    /// Independent actuators (disks in an array, flash channels in an SSD).
    pub spindles: u32,
    /// RAID1/10: spindles are pairs of mirrors; reads go to either, writes to both.
    pub mirrored: bool,
    /// Stripe chunk: consecutive `chunk_bytes` of the device go to consecutive stripes.
    pub chunk_bytes: u64,
    /// Bytes per second all spindles together can move (the link they share); 0: no limit
    /// beyond the spindles' own.
    #[serde(default)]
    pub device_bandwidth_bps: u64,
    /// Sequential write rate of one spindle, bytes per second; 0: as `bandwidth_bps`. Writes
    /// can be the slower direction (the development host's virtual disk wrote 4 MiB in 2.5× a
    /// read's time), and a slower write path is what keeps writes queued long enough to merge.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_bandwidth_bps: u64,
    /// Bytes per second writes move across the shared link, all spindles together; 0: as
    /// `device_bandwidth_bps`. A write ceiling apart from the read one, for a device whose
    /// writes at depth and reads at depth differ (measured by `run --host`'s probe).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub device_write_bandwidth_bps: u64,
    /// Time from the end of a write's transfer to its completion, taken by every write in
    /// flight at once (it holds neither a spindle nor the link); 0: none. A stacked device's
    /// completion path: the loop image of issue 17 completed the flusher's writes ~2.2–2.8 ms
    /// after a drain at the probe's write ceiling (docs/REAL.md, "The loop's write completions").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_completion_latency_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl DiskParams {
    /// Named models: "hdd", "ssd", "nvme", "raid10", "san".
    pub fn preset(model: &str) -> Option<DiskParams> {
        let p = match model {
            // 7200 rpm SATA disk: ~4 ms average seek + ~4 ms half rotation.
            "hdd" => DiskParams {
                bandwidth_bps: 100_000_000,
                seek_ns: 8_000_000,
                latency_ns: 50_000,
                queue_depth: 32,
                spindles: 1,
                mirrored: false,
                chunk_bytes: 64 * KIB,
                device_bandwidth_bps: 0,
                write_bandwidth_bps: 0,
                device_write_bandwidth_bps: 0,
                write_completion_latency_ns: 0,
            },
            // SATA SSD: ~520 MB/s over 4 flash channels, ~60 µs read; no positioning cost.
            "ssd" => DiskParams {
                bandwidth_bps: 130_000_000,
                seek_ns: 0,
                latency_ns: 60_000,
                queue_depth: 8,
                spindles: 4,
                mirrored: false,
                chunk_bytes: 16 * KIB,
                device_bandwidth_bps: 0,
                write_bandwidth_bps: 0,
                device_write_bandwidth_bps: 0,
                write_completion_latency_ns: 0,
            },
            // PCIe NVMe: ~3.2 GB/s over 8 channels, ~20 µs read, very deep queues.
            "nvme" => DiskParams {
                bandwidth_bps: 400_000_000,
                seek_ns: 0,
                latency_ns: 20_000,
                queue_depth: 128,
                spindles: 8,
                mirrored: false,
                chunk_bytes: 16 * KIB,
                device_bandwidth_bps: 0,
                write_bandwidth_bps: 0,
                device_write_bandwidth_bps: 0,
                write_completion_latency_ns: 0,
            },
            // Six older disks in RAID10 (3 stripes × 2 mirrors), as in seed 004's server.
            "raid10" => DiskParams {
                bandwidth_bps: 60_000_000,
                seek_ns: 8_000_000,
                latency_ns: 100_000,
                queue_depth: 31,
                spindles: 6,
                mirrored: true,
                chunk_bytes: 64 * KIB,
                device_bandwidth_bps: 0,
                write_bandwidth_bps: 0,
                device_write_bandwidth_bps: 0,
                write_completion_latency_ns: 0,
            },
            // FC array of 15k rpm disks: 16 stripes × 2 mirrors, fabric latency, deep queues.
            "san" => DiskParams {
                bandwidth_bps: 150_000_000,
                seek_ns: 4_000_000,
                latency_ns: 200_000,
                queue_depth: 64,
                spindles: 32,
                mirrored: true,
                chunk_bytes: 256 * KIB,
                device_bandwidth_bps: 0,
                write_bandwidth_bps: 0,
                device_write_bandwidth_bps: 0,
                write_completion_latency_ns: 0,
            },
            _ => return None,
        };
        Some(p)
    }

    /// Names accepted by [`DiskParams::preset`].
    pub const PRESETS: &'static [&'static str] = &["hdd", "ssd", "nvme", "raid10", "san"];

    /// Checks the parameters a [`Disk`] needs to be well defined.
    pub fn validate(&self) -> Result<(), DiskParamsError> {
        let bad = |what| Err(DiskParamsError(what));
        if self.bandwidth_bps == 0 {
            return bad("bandwidth_bps must be > 0");
        }
        if self.spindles == 0 {
            return bad("spindles must be >= 1");
        }
        if self.queue_depth == 0 {
            return bad("queue_depth must be >= 1");
        }
        if self.mirrored && !self.spindles.is_multiple_of(2) {
            return bad("a mirrored disk needs an even number of spindles");
        }
        if self.chunk_bytes == 0 {
            return bad("chunk_bytes must be > 0");
        }
        Ok(())
    }

    /// One spindle's transfer rate in the request's direction.
    pub fn bandwidth_for(&self, write: bool) -> u64 {
        if write && self.write_bandwidth_bps > 0 {
            self.write_bandwidth_bps
        } else {
            self.bandwidth_bps
        }
    }

    /// The shared link's rate in the request's direction (0: no link).
    pub fn link_bandwidth_for(&self, write: bool) -> u64 {
        if write && self.device_write_bandwidth_bps > 0 {
            self.device_write_bandwidth_bps
        } else {
            self.device_bandwidth_bps
        }
    }

    /// Independent stripes: mirror pairs count once.
    pub fn stripes(&self) -> u32 {
        if self.mirrored {
            self.spindles / 2
        } else {
            self.spindles
        }
    }
}

/// Invalid [`DiskParams`]; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid disk parameters: {0}")]
pub struct DiskParamsError(pub &'static str);

#[derive(Debug, Clone, Default)]
struct Spindle {
    busy_until: u64,
    /// Spindle-local byte address just past the last scheduled request.
    head_pos: u64,
    /// Service time scheduled so far, including work that ends after `now`.
    busy_ns: u64,
    /// Completion times of requests not yet known to be done; non-decreasing (FIFO).
    pending: VecDeque<u64>,
    ops: u64,
    /// Requests a 2.4 queue still lists behind the one its driver takes now: the elevator
    /// sorted it among them (disk_ll24.rs), so they count as queued for its seek.
    sorted: u64,
}

impl Spindle {
    fn outstanding(&mut self, now: u64) -> usize {
        while self.pending.front().is_some_and(|&c| c <= now) {
            self.pending.pop_front();
        }
        self.pending.len()
    }

    /// When a request on this spindle could start moving its data, and when it would complete
    /// on the spindle alone, without scheduling it.
    fn quote(&mut self, p: &DiskParams, now: u64, local: u64, bytes: u64, write: bool) -> (u64, u64) {
        let start = now.max(self.busy_until);
        let seek = if local == self.head_pos {
            0
        } else {
            let k = (self.outstanding(now) as u64 + 1 + self.sorted).min(p.queue_depth as u64);
            ncq_seek(p.seek_ns, k)
        };
        let ready = start.saturating_add(p.latency_ns).saturating_add(seek);
        (ready, ready.saturating_add(transfer_ns(bytes, p.bandwidth_for(write))))
    }

    /// Occupy the spindle from its next free moment until `done`.
    fn occupy(&mut self, now: u64, done: u64) -> u64 {
        let start = now.max(self.busy_until);
        self.busy_until = done;
        self.busy_ns += done - start;
        self.pending.push_back(done);
        done
    }

    fn schedule(&mut self, p: &DiskParams, link: &mut Link, now: u64, local: u64, bytes: u64, write: bool) -> u64 {
        let (ready, done) = self.quote(p, now, local, bytes, write);
        let done = link.carry(p.link_bandwidth_for(write), ready, done, bytes);
        self.head_pos = local.saturating_add(bytes);
        self.ops += 1;
        self.occupy(now, done)
    }

    /// Bytes merged into a request already queued: the device moves them within that request's
    /// command, so they cost their transfer and nothing else, after what the spindle has queued.
    fn schedule_merged(&mut self, p: &DiskParams, link: &mut Link, now: u64, bytes: u64, write: bool) -> u64 {
        let ready = now.max(self.busy_until);
        let xfer = transfer_ns(bytes, p.bandwidth_for(write));
        let done = link.carry(p.link_bandwidth_for(write), ready, ready.saturating_add(xfer), bytes);
        self.occupy(now, done)
    }

    fn busy_ns_at(&self, now: u64) -> u64 {
        // Every request still queued was submitted at or before `now`, so after `now` the spindle
        // works without a gap until `busy_until`: that tail is exactly the not-yet-done service.
        self.busy_ns - self.busy_until.saturating_sub(now)
    }
}

fn transfer_ns(bytes: u64, bps: u64) -> u64 {
    ((bytes as u128 * NS_PER_SEC).div_ceil(bps as u128)).min(u64::MAX as u128) as u64
}

/// The link every spindle's data crosses (`device_bandwidth_bps`): the times it is reserved,
/// as disjoint `[start, end)` intervals in time order. A transfer takes the link's free time
/// from when it is ready, in as many pieces as the gaps between reservations make (the link
/// interleaves transfers at a grain far below a request's), so a spindle with a long queue
/// does not hold up an idle one behind its own future transfers, and the link never idles
/// while a transfer is ready. Intervals over before the device's present are dropped.
#[derive(Debug, Clone, Default)]
struct Link {
    busy: Vec<(u64, u64)>,
}

impl Link {
    /// When a transfer of `bytes`, ready to start at `ready` and done on its spindle at `done`,
    /// has also crossed the link; reserves the link for it. `bps` 0: no link limit.
    fn carry(&mut self, bps: u64, ready: u64, done: u64, bytes: u64) -> u64 {
        if bps == 0 || bytes == 0 {
            return done;
        }
        let mut need = transfer_ns(bytes, bps);
        let mut at = ready;
        let mut i = self.busy.partition_point(|&(_, end)| end <= ready);
        while need > 0 {
            let (start, end) = self.busy.get(i).copied().unwrap_or((u64::MAX, u64::MAX));
            if at < start {
                let take = need.min(start - at);
                self.busy.insert(i, (at, at + take));
                i += 1;
                need -= take;
                at += take;
            }
            if need > 0 {
                at = at.max(end);
                i += 1;
            }
        }
        // Pieces that filled a gap touch their neighbours: one interval again.
        self.busy.dedup_by(|b, a| {
            let touch = a.1 == b.0;
            if touch {
                a.1 = b.1;
            }
            touch
        });
        done.max(at)
    }

    /// Forget reservations that ended by `now` (nothing submitted later can start before it).
    fn forget(&mut self, now: u64) {
        let over = self.busy.partition_point(|&(_, end)| end <= now);
        self.busy.drain(..over);
    }
}

/// `seek / sqrt(k)` in integers, so the result does not depend on the host's libm.
fn ncq_seek(seek_ns: u64, k: u64) -> u64 {
    if k <= 1 {
        return seek_ns;
    }
    const SCALE: u128 = 1 << 20;
    let root = (k as u128 * SCALE * SCALE).isqrt();
    (seek_ns as u128 * SCALE / root) as u64
}

/// The I/O fields of `/sys/block/DEV/stat` (Documentation/block/stat.rst), without the times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
}

/// The time fields of `/sys/block/DEV/stat` (Documentation/block/stat.rst, fields 4 and 8-11),
/// in ms as the kernel prints them. `read_ticks`/`write_ticks` sum each request's time from its
/// allocation to its completion (`blk_account_io_done`), so ÷ requests is the mean latency a
/// request saw, queueing included; `time_in_queue` is their sum (6.x prints the `nsecs`
/// total, not an in-flight integral); `io_ticks` is the time with a request in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskTimes {
    pub read_ticks: u64,
    pub write_ticks: u64,
    /// A level, not a count: requests in flight at the end.
    pub in_flight: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
}

/// A block device: give it requests, it tells when each completes.
#[derive(Debug, Clone)]
pub struct Disk {
    params: DiskParams,
    spindles: Vec<Spindle>,
    /// Completion times of logical requests, for `in_flight`.
    inflight: BinaryHeap<Reverse<u64>>,
    last_now: u64,
    /// The last submission joined the request before it.
    merged: bool,
    /// Per stripe of a mirrored device, the mirror its last read went to (a read merged into
    /// that request is moved by the same spindle).
    read_pick: Vec<usize>,
    busy_until: u64,
    /// Time with at least one request in flight (iostat's %util), including the scheduled tail.
    busy_ns: u64,
    bytes_read: u64,
    bytes_written: u64,
    reads: u64,
    writes: u64,
    /// Requests after merging, reads and writes (`/sys/block/DEV/stat` fields 1 and 5).
    ios: [u64; 2],
    /// Σ (completion − allocation) of those requests, ns (fields 4 and 8).
    ticks_ns: [u64; 2],
    /// Next free byte for a new file's extent (files are laid out contiguously).
    next_extent: u64,
    /// 6.8's scheduler queue and tags; None: submissions go straight to the spindles.
    queue: Option<RequestQueue>,
    /// Descriptors of a virtio ring without indirect descriptors (0: none).
    ring: u32,
    /// What the writeback throttle of a 6.8 queue is built from (`set_wbt_params`).
    wbt_params: WbtParams,
    /// 6.8's writeback throttle, with the queue (`set_queue`).
    wbt: Option<Wbt>,
    /// The throttle's `rq_wait` queue of the writes being submitted ([`Disk::set_wbt_rwq`]).
    wbt_rwq: u8,
    link: Link,
    /// The queue's scheduler when it is `mq-deadline` (mq_deadline.rs); None: `none`, arrival
    /// order. Only with 6.8's queue.
    elevator: Option<MqDeadline>,
    /// Held writes dispatched since the kernel last collected them: completion and pages.
    dispatched: Vec<(u64, Vec<Pfn>)>,
    /// Reads a 2.4 list kept until the driver took them (disk_ll24.rs): completion and pages.
    dispatched_reads: Vec<(u64, Vec<Pfn>)>,
    /// The last submission was held (or merged into a held write) at this index.
    held_last: Option<usize>,
    /// When a held write can go next (a `BlkRun` wanted), and the earliest one armed.
    run_wanted: Option<u64>,
    run_armed: u64,
    /// The file system on it reads into large folios (`mapping_set_large_folios`: XFS since
    /// 5.18, ext4 since 6.16 unless data=journal, encryption, verity or DAX rule it out).
    pub large_folios: bool,
    /// The file system's io_end: a contiguous writeback batch's pages end together, in groups
    /// of this many, at their last request's completion (0: each request's at its own).
    pub io_end_pages: u32,
    /// The device's `bdi_writeback`: its write-bandwidth estimate (backing_dev.rs).
    pub wb: crate::backing_dev::BdiWriteback,
    /// The request queue before blk-mq (ll_rw_blk.rs): used without 6.8's `queue`.
    ll: ll_rw_blk::Queue,
    /// A loop device: writes wait for its worker (loop_dev.rs), which submits them to this
    /// model, the backing device, when it runs.
    pub loop_worker: bool,
}

impl Disk {
    /// Reserve a contiguous extent of `bytes` (aligned to 1 MiB) and return its offset.
    pub fn allocate_extent(&mut self, bytes: u64) -> u64 {
        let off = self.next_extent;
        self.next_extent += bytes.div_ceil(1 << 20).max(1) << 20;
        off
    }

    /// Reserve `bytes` rounded up to whole 4 KiB blocks right after the previous allocation: how
    /// a filesystem places files created one after another (small files end up adjacent, so
    /// writing them out in creation order is sequential).
    pub fn allocate_blocks(&mut self, bytes: u64) -> u64 {
        let off = self.next_extent;
        self.next_extent += bytes.div_ceil(4096).max(1) * 4096;
        off
    }

    /// Sequential bandwidth of the whole device (all stripes), bytes/s.
    pub fn bandwidth_bps(&self) -> u64 {
        self.params.bandwidth_bps * self.params.stripes() as u64
    }

    /// [`Disk::bandwidth_bps`] for writes, no more than a write ceiling when there is one.
    pub fn write_bandwidth_bps(&self) -> u64 {
        let spindles = self.params.bandwidth_for(true) * self.params.stripes() as u64;
        match self.params.device_write_bandwidth_bps {
            0 => spindles,
            ceiling => spindles.min(ceiling),
        }
    }

    pub fn new(params: DiskParams) -> Result<Disk, DiskParamsError> {
        params.validate()?;
        Ok(Disk {
            params,
            spindles: vec![Spindle::default(); params.spindles as usize],
            inflight: BinaryHeap::new(),
            last_now: 0,
            merged: false,
            read_pick: vec![0; params.stripes() as usize],
            busy_until: 0,
            busy_ns: 0,
            bytes_read: 0,
            bytes_written: 0,
            reads: 0,
            writes: 0,
            ios: [0; 2],
            ticks_ns: [0; 2],
            next_extent: 0,
            queue: None,
            ring: 0,
            large_folios: false,
            io_end_pages: 0,
            wb: Default::default(),
            wbt_params: WbtParams::default(),
            wbt: None,
            wbt_rwq: crate::blk_wbt::RWQ_BG,
            link: Link::default(),
            elevator: None,
            dispatched: Vec::new(),
            dispatched_reads: Vec::new(),
            held_last: None,
            run_wanted: None,
            run_armed: u64::MAX,
            ll: Default::default(),
            loop_worker: false,
        })
    }

    /// 2.4.22+'s `blk_queue_throttle_sectors(q, 1)` with `max_queue_sectors` of `max_bytes`
    /// (ll_rw_blk.rs [`ll_rw_blk::SectorThrottle`]): a submission that needs a new request
    /// waits while the queue holds more than that. Only without 6.8's queue.
    pub fn set_throttle_sectors(&mut self, max_bytes: u64, nr_requests: u32) {
        let t = ll_rw_blk::SectorThrottle::new(max_bytes, nr_requests);
        self.ll.set_bound((max_bytes > 0 && self.queue.is_none()).then_some(ll_rw_blk::QueueBound::Sectors(t)));
    }

    /// Before 2.4.22: `queue_nr_requests` of `nr_requests`, half to each direction
    /// (ll_rw_blk.rs [`ll_rw_blk::RequestSlots`]): a submission that needs a new request
    /// waits while its direction has none free. Only without 6.8's queue.
    pub fn set_throttle_requests(&mut self, nr_requests: u32) {
        let r = ll_rw_blk::RequestSlots::new(nr_requests);
        self.ll.set_bound((nr_requests > 0 && self.queue.is_none()).then_some(ll_rw_blk::QueueBound::Requests(r)));
    }

    /// 2.4's `generic_plug_device` (ll_rw_blk.rs [`ll_rw_blk::Plug`]): a buffer that finds
    /// the queue empty plugs it until [`Disk::unplug`]. Only without 6.8's queue.
    pub fn set_plugging(&mut self, on: bool) {
        self.ll.set_plugging(on && self.queue.is_none());
    }

    /// 2.4's `elevator_linus` with its read and write budgets (ll_rw_blk.rs
    /// [`ll_rw_blk::ElevatorLinus`]) puts each request a plugged queue holds in its place.
    /// Only without 6.8's queue.
    pub fn set_elevator_linus(&mut self, elv: Option<ll_rw_blk::ElevatorLinus>) {
        self.ll.set_elevator(elv.filter(|_| self.queue.is_none()));
    }

    /// `tq_disk` ran at `now`: a plugged queue is unplugged, and the device takes the
    /// requests it held ([`Disk::take_dispatched`] hands their completions over).
    pub fn unplug(&mut self, now: u64) {
        if !self.ll.plugged() {
            return;
        }
        let now = now.max(self.last_now);
        self.last_now = now;
        if self.ll.listed() {
            self.ll.unplug(now);
            self.ll_run(now);
            return;
        }
        self.request_fn(now);
    }

    /// 2.4's driver takes `depth` requests off its queue's list at once (disk_ll24.rs; IDE 1,
    /// SCSI its commands); 0: every request goes to the device as it is made or unplugged.
    /// Only without 6.8's queue.
    pub fn set_driver_depth(&mut self, depth: u32) {
        self.ll.set_depth(if self.queue.is_none() { depth } else { 0 });
    }

    /// `__generic_unplug_device` → `request_fn`: the plug ends at `now` and every request it
    /// held goes to the device in the queue's order; each one's ticks run from when it was
    /// made. Returns the completion of the read among them, if one is.
    fn request_fn(&mut self, now: u64) -> Option<u64> {
        self.ll.unplug(now);
        self.link.forget(now);
        let mut read = None;
        while let Some(h) = self.ll.pop_held() {
            let begin = self.service_begins(now, h.offset);
            let done = self.start_request(now, h.since, now, h.offset, h.bytes, h.segs, h.write);
            self.in_flight_until(now, done);
            self.ll.unplugged(now, begin, done, &h);
            if h.write {
                self.dispatched.push((done, h.pages));
            } else {
                read = Some(done);
            }
        }
        read
    }

    /// A read that finds the queue plugged and gets its request at once, under the elevator:
    /// `__make_request` puts it among the held writes (`elevator_linus_merge`, `add_request`)
    /// and its reader's wait on the page runs `tq_disk`, so the device takes them all now in
    /// that order. Its completion.
    fn read_into_plug(&mut self, now: u64, offset: u64, bytes: u64, segs: u32) -> u64 {
        self.ll.hold_read(now, offset, bytes, segs);
        let done = self.request_fn(now).expect("the held read");
        self.reads += 1;
        self.bytes_read += bytes;
        self.merged = false;
        // It started with the unplug: no later buffer joins it.
        self.ll.queued(offset, bytes, false, false, now);
        done
    }

    /// The plug's counts (None: the queue does not plug).
    pub fn plug_stats(&self) -> Option<ll_rw_blk::Plug> {
        self.ll.plug_stats()
    }

    /// Under a 2.4 bound, the tasks that slept for a request.
    pub fn request_waits(&self) -> ll_rw_blk::RequestWaits {
        self.ll.request_waits
    }

    /// Under the queue's bound, when the task of the last submission may go on (its
    /// `__get_request_wait`; 0: it got its request at once). None: the disk has no bound.
    pub fn throttle_wake(&self) -> Option<u64> {
        self.ll.wake()
    }

    /// Under the queue's bound, when a task that wants a new request for `write` at `now`
    /// gets one (0: at once). None: the disk has no bound. A task that must wait unplugs the
    /// queue first (`__get_request_wait`), so what a plug held goes to the device now.
    pub fn request_wait(&mut self, now: u64, write: bool) -> Option<u64> {
        let now = now.max(self.last_now);
        if self.ll.listed() {
            self.last_now = now;
            return self.ll_request_wait(now, write);
        }
        let wait = self.ll.request_wait(now, write)?;
        if wait <= now || !self.ll.holds() {
            return Some(wait);
        }
        self.last_now = now;
        self.request_fn(now);
        self.ll.request_wait(now, write)
    }

    /// `/sys/block/DEV/stat`'s I/O fields: requests completed after merging, bios merged,
    /// sectors, for reads and writes. Only a disk behind 6.8's request queue counts merges.
    pub fn stat(&self) -> DiskStat {
        let m = self.queue.as_ref().map_or([0; 2], |q| q.merges);
        DiskStat {
            read_ios: self.ios[0],
            read_merges: m[0],
            read_sectors: self.bytes_read / 512,
            write_ios: self.ios[1],
            write_merges: m[1],
            write_sectors: self.bytes_written / 512,
        }
    }

    /// `/sys/block/DEV/stat`'s time fields at `now`. A bio merged into a request waiting for a
    /// tag does not lengthen that request's ticks here (the kernel's request completes with its
    /// last bio): at most one transfer of that bio each.
    pub fn times(&self, now: u64) -> DiskTimes {
        let ms = |ns: u64| ns / 1_000_000;
        let [r, w] = self.ticks_ns;
        DiskTimes {
            read_ticks: ms(r),
            write_ticks: ms(w),
            // Started requests only (`blk_mq_in_flight`): not those the scheduler holds.
            in_flight: self.in_flight(now) as u64,
            io_ticks: ms(self.busy_ns(now)),
            time_in_queue: ms(r + w),
        }
    }

    /// A disk of a named model (see [`DiskParams::preset`]).
    pub fn preset(model: &str) -> Option<Disk> {
        DiskParams::preset(model).map(|p| Disk::new(p).expect("presets are valid"))
    }

    pub fn params(&self) -> &DiskParams {
        &self.params
    }

    /// Submits a request of `bytes` at device byte `offset` at time `now`; returns its completion
    /// time. A request spanning several stripes completes when its last piece does.
    pub fn submit(&mut self, now: u64, offset: u64, bytes: u64, write: bool) -> u64 {
        // Unplugged: every page its own segment, the most a request of order-0 pages can have.
        self.submit_segs(now, offset, bytes, bytes.div_ceil(4096).max(1) as u32, write)
    }

    /// [`Disk::submit`] of a request of `segs` physical segments (a plugged request).
    pub fn submit_segs(&mut self, now: u64, offset: u64, bytes: u64, segs: u32, write: bool) -> u64 {
        // Tasks on different CPUs run in quanta, so submissions can arrive slightly out of
        // order; the device sees them at the latest time it has seen.
        let now = now.max(self.last_now);
        self.last_now = now;
        while self.inflight.peek().is_some_and(|&Reverse(c)| c <= now) {
            self.inflight.pop();
        }
        self.link.forget(now);

        self.held_last = None;
        self.ll.begin_submission();
        if self.ll.listed() {
            return self.submit_listed(now, offset, bytes, segs, write);
        }
        if self.queue.is_some() && self.elevator.is_some() {
            self.run_queue(now);
        }
        if !write && self.ll.plugged() {
            if self.ll.sorts() && self.ll.request_wait(now, false).is_none_or(|w| w <= now) {
                return self.read_into_plug(now, offset, bytes, segs);
            }
            // The reader waits on its page at once: its `sync_page` runs `tq_disk`.
            self.request_fn(now);
        }
        let mut start = now;
        let merged = match self.queue.as_mut() {
            Some(q) => q.elv_merge(now, offset, bytes, segs, write),
            None => {
                let p = &self.params;
                self.ll.back_merge(now, offset, bytes, write, p.chunk_bytes, p.stripes())
            }
        };
        let mut since = now;
        self.ll.plug_on_make_request(now, merged, now >= self.busy_until, write);
        if self.ll.get_request(now, merged, write) > now {
            if self.ll.holds() {
                // `__get_request_wait` unplugs before it sleeps: what the plug held counts now.
                self.request_fn(now);
                self.ll.get_request(now, merged, write);
            }
            if let Some(wake) = self.ll.request_sleep(now, write) {
                (start, since) = (wake, wake);
            }
        }
        if write && self.ll.plugged() {
            // Made on a plugged queue: it waits there for `tq_disk`, counted as submitted.
            self.ll.hold(now, offset, bytes, segs, merged);
            self.ll.queued(offset, bytes, write, merged, now);
            self.merged = merged;
            self.writes += 1;
            self.bytes_written += bytes;
            // A guess for the submitter's backlog check: as if it were unplugged now.
            let moved = now.max(self.busy_until).saturating_add(transfer_ns(bytes, self.params.bandwidth_for(true)));
            return self.completes(moved, true);
        }
        if self.queue.is_some() && !merged {
            match self.mq_insert(now, offset, bytes, segs, write) {
                ControlFlow::Continue(at) => start = at,
                ControlFlow::Break(held) => return held,
            }
        }
        // A merged bio adds its transfer to the request it joined, and leaves the throttle at once
        // (`wbt_done` when a merge frees it).
        let begin = if self.queue.is_none() && !merged { self.service_begins(now, offset) } else { 0 };
        let done = if merged {
            let moved = self.submit_pieces(start, offset, bytes, write, true);
            self.completes(moved, write)
        } else {
            self.start_request(now, since, start, offset, bytes, segs, write)
        };
        if let (Some(q), Some(head)) = (self.queue.as_mut(), self.elevator.as_ref().and_then(MqDeadline::head)) {
            self.run_wanted = Some(q.quote(now, head.segs));
        }
        self.count_submission(bytes, write);
        self.merged = merged;
        if self.queue.is_none() {
            self.ll.queued(offset, bytes, write, merged, begin);
        }
        self.in_flight_until(now, done);
        self.ll.take_requests(now, begin, done, bytes, write, merged);
        done
    }

    /// The spindles of `stripe`: one, or a mirrored pair.
    fn stripe_spindles(&self, stripe: usize) -> (usize, usize) {
        if self.params.mirrored {
            (2 * stripe, 2 * stripe + 1)
        } else {
            (stripe, stripe)
        }
    }

    /// The spindles that would take a request starting at `offset`.
    fn spindles_of(&self, offset: u64) -> (usize, usize) {
        self.stripe_spindles(((offset / self.params.chunk_bytes) % self.params.stripes() as u64) as usize)
    }

    /// When a request submitted now at `offset` would start its service: when the first of its
    /// spindles is free.
    fn service_begins(&self, now: u64, offset: u64) -> u64 {
        let (a, b) = self.spindles_of(offset);
        now.max(self.spindles[a].busy_until.min(self.spindles[b].busy_until))
    }

    /// A request that merged with nothing goes to the device at `start` (`since`: when the
    /// block layer took it, for the stat file's ticks): its transfer, its place in the queue,
    /// the throttle's count and the I/O counters. Its completion.
    #[allow(clippy::too_many_arguments)]
    fn start_request(
        &mut self,
        now: u64,
        since: u64,
        start: u64,
        offset: u64,
        bytes: u64,
        segs: u32,
        write: bool,
    ) -> u64 {
        let moved = self.submit_pieces(start, offset, bytes, write, false);
        let done = self.completes(moved, write);
        if let Some(q) = self.queue.as_mut() {
            q.insert(now, offset, bytes, segs, write, start, done);
        }
        if let Some(w) = self.wbt.as_mut() {
            if write {
                w.issue_write(now, done, self.wbt_rwq);
            } else {
                w.issue_read(now, done);
            }
        }
        self.ios[write as usize] += 1;
        self.ticks_ns[write as usize] += done - since;
        done
    }

    /// When a request whose data the device has moved by `moved` completes: a write then takes
    /// the completion path's latency, every write in flight at once (see
    /// [`DiskParams::write_completion_latency_ns`]), so it lengthens each write but not the
    /// device's time per byte at depth.
    fn completes(&self, moved: u64, write: bool) -> u64 {
        if write {
            moved.saturating_add(self.params.write_completion_latency_ns)
        } else {
            moved
        }
    }

    /// A logical request of `bytes` submitted (`/sys/block` counts requests after merging).
    fn count_submission(&mut self, bytes: u64, write: bool) {
        if write {
            self.writes += 1;
            self.bytes_written += bytes;
        } else {
            self.reads += 1;
            self.bytes_read += bytes;
        }
    }

    /// Something submitted at `now` occupies the device until `done`.
    fn in_flight_until(&mut self, now: u64, done: u64) {
        self.inflight.push(Reverse(done));
        // Requests start in time order, so the union of [submit, done] intervals grows only at its
        // right end.
        self.busy_ns += done.saturating_sub(now.max(self.busy_until));
        self.busy_until = self.busy_until.max(done);
    }

    /// The pages of the last submission, if the scheduler or a plugged 2.4 queue holds it:
    /// they complete with the held request (None). Otherwise they are handed back.
    pub fn hold_pages(&mut self, pages: Vec<Pfn>) -> Option<Vec<Pfn>> {
        match (self.held_last.take(), self.elevator.as_mut()) {
            (Some(i), Some(e)) => {
                e.add_pages(i, &pages);
                None
            }
            _ => self.ll.hold_pages(pages),
        }
    }

    /// A `BlkRun` at `now`: held writes whose slot has come go to the device.
    pub fn blk_run(&mut self, now: u64) {
        let now = now.max(self.last_now);
        self.last_now = now;
        if self.run_armed <= now {
            self.run_armed = u64::MAX;
        }
        self.link.forget(now);
        self.run_queue(now);
        self.ll_run(now);
    }

    /// Held writes dispatched since the last call, with their completions (into `out`).
    pub fn take_dispatched(&mut self, out: &mut Vec<(u64, Vec<Pfn>)>) {
        out.append(&mut self.dispatched);
    }

    /// Listed reads the driver took since the last call, with their completions (into `out`).
    pub fn take_dispatched_reads(&mut self, out: &mut Vec<(u64, Vec<Pfn>)>) {
        out.append(&mut self.dispatched_reads);
    }

    /// When a `BlkRun` should come, if none is armed by then; marks it armed.
    pub fn take_run(&mut self) -> Option<u64> {
        let at = self.run_wanted.take()?;
        let waits = self.elevator.as_ref().is_some_and(MqDeadline::has_held) || self.ll.waits_for_driver();
        if !waits || at >= self.run_armed {
            return None;
        }
        self.run_armed = at;
        Some(at)
    }

    /// Schedule a request's pieces, one per stripe it touches, from `now` on; returns when the
    /// last completes. `merged`: it joined a queued request (transfer only).
    fn submit_pieces(&mut self, now: u64, offset: u64, bytes: u64, write: bool, merged: bool) -> u64 {
        let p = self.params;
        let stripes = p.stripes() as u64;
        let chunk = p.chunk_bytes;
        let mut done = now;
        if stripes == 1 {
            done = self.submit_stripe(now, 0, offset, bytes, write, merged);
        } else {
            // The chunks of one stripe hit by a contiguous request are consecutive rows of that
            // stripe, hence one contiguous spindle-local range: one piece per stripe, O(stripes).
            let c0 = offset / chunk;
            let c1 = (offset + bytes.max(1) - 1) / chunk;
            let head_trim = offset % chunk;
            let tail_trim = if bytes == 0 { 0 } else { chunk - 1 - (offset + bytes - 1) % chunk };
            for s in 0..stripes.min(c1 - c0 + 1) {
                let first = c0 + s;
                let last = c1 - (c1 - first) % stripes;
                let rows = (last - first) / stripes + 1;
                let mut len = rows * chunk;
                let mut local = (first / stripes) * chunk;
                if first == c0 {
                    len -= head_trim;
                    local += head_trim;
                }
                if last == c1 {
                    len -= tail_trim;
                }
                if bytes == 0 {
                    len = 0;
                }
                let stripe = first % stripes;
                done = done.max(self.submit_stripe(now, stripe as usize, local, len, write, merged));
            }
        }
        done
    }

    fn submit_stripe(&mut self, now: u64, stripe: usize, local: u64, bytes: u64, write: bool, merged: bool) -> u64 {
        let p = self.params;
        let (a, b) = self.stripe_spindles(stripe);
        // 2.4's back merge without a request queue extends the request the spindle holds: its
        // head then stops past the buffer, where the next request begins.
        let back_merge = merged && self.queue.is_none();
        let link = &mut self.link;
        let mut go = |s: &mut Spindle| {
            if merged {
                let done = s.schedule_merged(&p, link, now, bytes, write);
                if back_merge {
                    s.head_pos = local + bytes;
                }
                done
            } else {
                s.schedule(&p, link, now, local, bytes, write)
            }
        };
        if !p.mirrored {
            return go(&mut self.spindles[a]);
        }
        if write {
            let da = go(&mut self.spindles[a]);
            let db = go(&mut self.spindles[b]);
            return da.max(db);
        }
        // md's read_balance prefers an idle mirror whose head is already there; "whichever would
        // finish first" captures both the queue length and the head position.
        let pick = if merged && self.queue.is_none() {
            // Back-merged into the request that mirror already holds.
            self.read_pick[stripe]
        } else {
            let qa = self.spindles[a].quote(&p, now, local, bytes, false).1;
            let qb = self.spindles[b].quote(&p, now, local, bytes, false).1;
            if qb < qa {
                b
            } else {
                a
            }
        };
        self.read_pick[stripe] = pick;
        go(&mut self.spindles[pick])
    }

    /// Longest request starting at `offset` that stays on one stripe: md's `merge_bvec_fn`
    /// keeps a bio from crossing a chunk boundary of a striped array, so the pages of each chunk
    /// complete on their own. Unlimited for a single-stripe device.
    ///
    /// Under 6.8's queue the task's plug merges those bios back into requests of up to the
    /// queue's limits (`blk_attempt_plug_merge`), and the device splits each across its stripes.
    pub fn bio_max_bytes(&self, offset: u64) -> u64 {
        if let Some(q) = &self.queue {
            return q.max_request_bytes();
        }
        if self.params.stripes() <= 1 {
            u64::MAX
        } else {
            self.params.chunk_bytes - offset % self.params.chunk_bytes
        }
    }

    /// Whether a scheduler or 2.4's plug may hold writes, so that a request's completion is not
    /// known when it is submitted.
    pub fn holds_writes(&self) -> bool {
        self.elevator.is_some() || self.ll.plug_stats().is_some() || self.ll.listed()
    }

    /// The last submission joined the request before it (see [`ll_rw_blk::MERGE_MAX_BYTES`]): its completion
    /// raises no interrupt of its own.
    pub fn last_merged(&self) -> bool {
        self.merged
    }

    /// Logical requests submitted and not complete at `now`.
    pub fn in_flight(&self, now: u64) -> usize {
        self.inflight.iter().filter(|&&Reverse(c)| c > now).count()
    }

    /// When the device goes idle if nothing more is submitted.
    pub fn queued_until(&self) -> u64 {
        self.busy_until
    }

    /// Time up to `now` with at least one request in flight (iostat's `%util` numerator).
    pub fn busy_ns(&self, now: u64) -> u64 {
        self.busy_ns - self.busy_until.saturating_sub(now.max(self.last_now))
    }

    /// Time up to `now` that spindle `i` spent serving requests.
    pub fn spindle_busy_ns(&self, i: usize, now: u64) -> u64 {
        self.spindles[i].busy_ns_at(now.max(self.last_now))
    }

    /// Requests (pieces) spindle `i` has served or queued.
    pub fn spindle_ops(&self, i: usize) -> u64 {
        self.spindles[i].ops
    }

    pub fn spindle_count(&self) -> usize {
        self.spindles.len()
    }

    /// Percent of `[0, now]` the device had work in flight.
    pub fn util_percent(&self, now: u64) -> f64 {
        if now == 0 {
            0.0
        } else {
            100.0 * self.busy_ns(now) as f64 / now as f64
        }
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Logical read requests submitted.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Logical write requests submitted.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    pub fn requests(&self) -> u64 {
        self.reads + self.writes
    }
}

#[path = "disk_blk_mq.rs"]
mod blk_mq;
pub use blk_mq::WbtParams;

#[path = "disk_ll24.rs"]
mod ll24;

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;
