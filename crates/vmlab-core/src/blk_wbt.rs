//! 6.8's buffered-writeback throttling (`block/blk-wbt.c`, `block/blk-rq-qos.c`; Jens Axboe,
//! "blk-wbt: add general throttling mechanism", 2016): how many of the flusher's write requests
//! may be in flight at once, and so how many pages are under writeback at a time.
//!
//! What the kernel does:
//! - Every buffered or swap write bio is tracked (`wbt_should_throttle`; O_DIRECT writes,
//!   `REQ_SYNC | REQ_IDLE`, are not). `wbt_wait` sleeps the submitter until the tracked writes
//!   in flight are below its limit (`rq_wait_inc_below`): `max_depth` for `REQ_SYNC` writes
//!   (fsync) and kswapd's (`current_is_kswapd()`, in its own `WBT_RWQ_KSWAPD` queue) — in 6.8 a
//!   direct reclaimer's swap write is neither and takes the limits below; every `REQ_SWAP`
//!   write got `max_depth` only later (Baokun Li, "blk-wbt: don't throttle swap writes in
//!   direct reclaim", linux-block, June 2024), `wb_background` for `REQ_BACKGROUND` (the background and periodic
//!   flushes) or within 100 ms of a read (`close_io`), `wb_normal` otherwise — the flusher's
//!   work for reclaim (`WB_start_all`, neither kupdate nor background: `wbc_to_write_flags`).
//! - `rq_depth_calc_max_depth`: `max_depth = min(RWB_DEF_DEPTH = 16, queue_depth)` at
//!   `scale_step` 0, `1 + ((depth − 1) >> step)` above it, `1 + ((depth − 1) << −step)` below,
//!   at most ¾ of the queue depth (`blk_queue_depth`: `nr_requests` for a queue without its own
//!   depth). `calc_wb_limits`: `wb_normal = (max_depth + 1) / 2`,
//!   `wb_background = (max_depth + 3) / 4`.
//! - A completion (`wbt_rqw_done`) wakes the waiters once the writes in flight fall below
//!   `wb_normal` by at least `wb_background / 2` — but on a device with a volatile write cache
//!   (`blk_queue_write_cache`) and no writer throttled in `balance_dirty_pages` within a second,
//!   only when none is left in flight: the flusher refills the queue in bursts.
//! - Every window (100 ms at step ≤ 0, `win << 4 / int_sqrt((step + 1) << 8)` above) armed while
//!   tracked writes are in flight or the step is not 0, `wb_timer_fn` judges the window's
//!   completions (`latency_exceeded`): no read, or fewer than 3 writes, is no valid sample — with
//!   writes done or in flight that is LAT_UNKNOWN_WRITES and the depth scales up, step below 0
//!   ("only doing writes"); a read slower than `wbt_lat_usec` at best scales down (a negative
//!   step snaps to 0); valid and fast scales up; five windows without writes step back toward 0.
//!   Scaling up stops once the depth hit its ¾ cap (`scaled_max`). A scale-up that moves the
//!   step wakes every waiter (`rwb_wake_all`); nothing else at a window's end does (6.x's
//!   `scale_down` wakes no one), so once the depth is at its cap a sleeping flusher waits for
//!   its completions (torvalds/linux as stored at 00c1d298, a 6.x tree: block/blk-wbt.c
//!   `scale_up`, `scale_down`, `wb_timer_fn`; block/blk-rq-qos.c `rq_depth_scale_up`).
//! - Across the flusher's idle gaps: the timer is re-armed every window while the step is not
//!   0, and a window with no completion and nothing in flight is LAT_UNKNOWN; only the fifth
//!   (`RWB_UNKNOWN_BUMP`, counted since the last move of the step — not reset by a scale-up
//!   refused at the cap) steps a negative step back by one. A gap shorter than a window keeps
//!   the scaled depth.
//!
//! vmlab tracks every write request its 6.8 queue takes, each in the `rq_wait` queue its
//! submitter chose (`get_rq_wait`): [`RWQ_BG`] for the flusher's and, in 6.8, a direct
//! reclaimer's swap writes; [`RWQ_SWAP`] for kswapd's (6.8's `WBT_RWQ_KSWAPD`, by
//! `current_is_kswapd()`) or, from 6.11, every `REQ_SWAP` write (`WBT_RWQ_SWAP`). A submitter
//! is limited by its own queue's writes in flight ([`Wbt::limit`], [`Wbt::wait`]): the flusher
//! (`page_writeback::flusher_pass`) and reclaim's swap writes (`swap_state::swap_writepage`,
//! which counts the requests on its own plug too, as they hold their wbt slot from
//! allocation); fsync is not held. A held write (mq-deadline) is counted from its dispatch, the
//! kernel's from its allocation. A read's latency is its completion minus its submission. The
//! timer is evaluated when the queue is next asked (`advance`), window by window, so a window
//! with nothing submitted is judged as the kernel's timer would have; no `balance_dirty_pages`
//! sleep is recorded (`wb_recent_wait` false), and no read is tracked as in flight
//! (`sync_issue`).

/// `RWB_DEF_DEPTH`.
const DEF_DEPTH: u32 = 16;
/// `RWB_WINDOW_NSEC`.
const WINDOW_NS: u64 = 100_000_000;
/// `RWB_MIN_WRITE_SAMPLES`.
const MIN_WRITE_SAMPLES: u32 = 3;
/// `RWB_UNKNOWN_BUMP`.
const UNKNOWN_BUMP: u32 = 5;
/// `close_io`'s HZ/10.
const CLOSE_IO_NS: u64 = 100_000_000;
/// `WBT_RWQ_BG`: the flusher's writes, and 6.8's direct reclaimers' swap writes.
pub const RWQ_BG: u8 = 0;
/// The completion of a write not known yet: a loop device's request waiting for its worker
/// (loop_dev.rs), in flight from its allocation as the kernel counts it until
/// [`Wbt::dispatched`] gives its completion.
pub const UNKNOWN: u64 = u64::MAX;
/// `WBT_RWQ_KSWAPD` (6.8: kswapd's writes) or `WBT_RWQ_SWAP` (6.11+: every swap write).
pub const RWQ_SWAP: u8 = 1;

/// `latency_exceeded`'s verdict on a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lat {
    Ok,
    Unknown,
    UnknownWrites,
    Exceeded,
}

/// What the window's verdicts move: `struct rq_depth` and the limits and count `rq_wb` keeps
/// beside it. Copied to judge windows ahead of time ([`Wbt::wait`]).
#[derive(Debug, Clone, Copy)]
struct Depth {
    queue_depth: u32,
    min_lat_ns: u64,
    scale_step: i32,
    scaled_max: bool,
    max_depth: u32,
    wb_normal: u32,
    wb_background: u32,
    unknown_cnt: u32,
}

#[derive(Debug, Clone)]
pub struct Wbt {
    depth: Depth,
    write_cache: bool,
    /// Tracked writes not yet judged by a window: (issue, completion, `rq_wait` queue).
    writes: Vec<(u64, u64, u8)>,
    /// Reads not yet judged by a window: (issue, completion).
    reads: Vec<(u64, u64)>,
    /// End of the armed window (`blk_stat_activate_nsecs`); None: the timer is off.
    window_end: Option<u64>,
    /// Last read issued or completed (`last_issue`, `last_comp`), for `close_io`.
    last_read: Option<u64>,
}

fn int_sqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

impl Depth {
    /// `rq_depth_calc_max_depth`: true when the ¾ cap was hit.
    fn calc_max_depth(&mut self) -> bool {
        let mut capped = false;
        if self.queue_depth == 1 {
            self.max_depth = if self.scale_step > 0 { 1 } else { 2 };
            return self.scale_step <= 0;
        }
        let mut depth = DEF_DEPTH.min(self.queue_depth);
        if self.scale_step > 0 {
            depth = 1 + ((depth - 1) >> self.scale_step.min(31));
        } else if self.scale_step < 0 {
            let maxd = 3 * self.queue_depth / 4;
            depth = 1u64.saturating_add(((depth - 1) as u64) << (-self.scale_step).min(31)).min(u32::MAX as u64) as u32;
            if depth > maxd {
                depth = maxd;
                capped = true;
            }
        }
        self.max_depth = depth;
        capped
    }

    fn calc_wb_limits(&mut self) {
        if self.min_lat_ns == 0 {
            (self.wb_normal, self.wb_background) = (0, 0);
        } else if self.max_depth <= 2 {
            (self.wb_normal, self.wb_background) = (self.max_depth, 1);
        } else {
            // (max_depth + 1) / 2 and (max_depth + 3) / 4, as calc_wb_limits writes them.
            (self.wb_normal, self.wb_background) = (self.max_depth.div_ceil(2), self.max_depth.div_ceil(4));
        }
    }

    /// `scale_up`: true when the step moved, the one case that wakes every waiter
    /// (`rwb_wake_all`); once the cap was hit it neither moves nor wakes, nor resets the count.
    fn scale_up(&mut self) -> bool {
        if self.scaled_max {
            return false;
        }
        self.scale_step -= 1;
        self.scaled_max = self.calc_max_depth();
        self.calc_wb_limits();
        self.unknown_cnt = 0;
        true
    }

    /// `scale_down`: 6.x wakes no one here, the next completions do.
    fn scale_down(&mut self, hard: bool) {
        if self.max_depth == 1 {
            return;
        }
        if self.scale_step < 0 && hard {
            self.scale_step = 0;
        } else {
            self.scale_step += 1;
        }
        self.scaled_max = false;
        self.calc_max_depth();
        self.calc_wb_limits();
        self.unknown_cnt = 0;
    }

    /// `wb_timer_fn`'s switch on a window's verdict: true when it wakes every waiter.
    fn timer(&mut self, lat: Lat) -> bool {
        match lat {
            Lat::Exceeded => {
                self.scale_down(true);
                false
            }
            Lat::Ok | Lat::UnknownWrites => self.scale_up(),
            Lat::Unknown => {
                self.unknown_cnt += 1;
                if self.unknown_cnt < UNKNOWN_BUMP {
                    false
                } else if self.scale_step > 0 {
                    self.scale_up()
                } else {
                    if self.scale_step < 0 {
                        self.scale_down(false);
                    }
                    false
                }
            }
        }
    }

    fn cur_win(&self) -> u64 {
        if self.scale_step > 0 {
            (WINDOW_NS << 4) / int_sqrt(((self.scale_step + 1) as u64) << 8)
        } else {
            WINDOW_NS
        }
    }
}

impl Wbt {
    /// `wbt_init`: the queue's depth (`nr_requests`), `wbt_lat_usec` in ns and whether the
    /// device has a volatile write cache.
    pub fn new(queue_depth: u32, min_lat_ns: u64, write_cache: bool) -> Wbt {
        let mut depth = Depth {
            queue_depth: queue_depth.max(1),
            min_lat_ns,
            scale_step: 0,
            scaled_max: false,
            max_depth: 0,
            wb_normal: 0,
            wb_background: 0,
            unknown_cnt: 0,
        };
        depth.calc_max_depth();
        depth.calc_wb_limits();
        Wbt { depth, write_cache, writes: Vec::new(), reads: Vec::new(), window_end: None, last_read: None }
    }

    /// `latency_exceeded` on the window that ends at `end` and the tracked writes in flight
    /// then (`wbt_inflight`, every queue's), from the writes and reads known now.
    fn latency(&self, end: u64, win: u64) -> (Lat, usize) {
        let start = end.saturating_sub(win);
        let nr_writes = self.writes.iter().filter(|&&(_, d, _)| d > start && d <= end).count() as u32;
        let nr_reads = self.reads.iter().filter(|&&(_, d)| d > start && d <= end).count() as u32;
        let inflight = self.writes.iter().filter(|&&(i, d, _)| i <= end && d > end).count();
        let read_min =
            self.reads.iter().filter(|&&(_, d)| d > start && d <= end).map(|&(i, d)| d - i).min().unwrap_or(0);
        let lat = if nr_reads >= 1 && nr_writes >= MIN_WRITE_SAMPLES {
            if read_min > self.depth.min_lat_ns {
                Lat::Exceeded
            } else {
                Lat::Ok
            }
        } else if nr_writes > 0 || inflight > 0 {
            Lat::UnknownWrites
        } else {
            Lat::Unknown
        };
        (lat, inflight)
    }

    /// Run the windows that ended by `now` (`wb_timer_fn`), in order.
    pub fn advance(&mut self, now: u64) {
        while let Some(end) = self.window_end.filter(|&e| e <= now) {
            let (lat, inflight) = self.latency(end, self.depth.cur_win());
            self.depth.timer(lat);
            self.writes.retain(|&(_, d, _)| d > end);
            self.reads.retain(|&(_, d)| d > end);
            // Re-armed while the step is off centre or writes are in flight (`rwb_arm_timer`).
            self.window_end = (self.depth.scale_step != 0 || inflight > 0).then(|| end + self.depth.cur_win());
        }
    }

    /// The first window to end before `t` whose scale-up wakes every waiter, judged on what is
    /// issued now; None if none does.
    fn wake_all_before(&self, t: u64) -> Option<u64> {
        let mut depth = self.depth;
        let mut end = self.window_end?;
        while end < t {
            let (lat, inflight) = self.latency(end, depth.cur_win());
            if depth.timer(lat) {
                return Some(end);
            }
            if depth.scale_step == 0 && inflight == 0 {
                return None;
            }
            end += depth.cur_win();
        }
        None
    }

    /// A tracked write request of queue `rwq` issued at `now`, completing at `done`
    /// (`wbt_wait` past its limit, then `rwb_arm_timer` if the stats window is off).
    pub fn issue_write(&mut self, now: u64, done: u64, rwq: u8) {
        self.advance(now);
        self.writes.push((now, done, rwq));
        if self.window_end.is_none() {
            self.window_end = Some(now + self.depth.cur_win());
        }
    }

    /// The oldest tracked write whose completion was [`UNKNOWN`] now completes at `done`: a
    /// loop worker submits its requests in the order they were queued.
    pub fn dispatched(&mut self, done: u64) {
        if let Some(w) = self.writes.iter_mut().find(|w| w.1 == UNKNOWN) {
            w.1 = done;
        }
    }

    /// A read request issued at `now`, completing at `done` (`wb_timestamp` of both).
    pub fn issue_read(&mut self, now: u64, done: u64) {
        self.advance(now);
        self.reads.push((now, done));
        self.last_read = Some(self.last_read.map_or(done, |l| l.max(done)));
    }

    /// Tracked writes of queue `rwq` in flight at `now` (`rqw->inflight`).
    pub fn inflight(&self, now: u64, rwq: u8) -> u32 {
        self.writes.iter().filter(|&&(i, d, q)| q == rwq && i <= now && d > now).count() as u32
    }

    /// `get_limit` at `now` for a write that is `hiprio` (`REQ_SYNC`, or kswapd's in 6.8, or
    /// any swap write from 6.11: `max_depth`) or not: `wb_background` within 100 ms of a read
    /// (`close_io`), else `wb_normal`. 0: the throttle is off (`wbt_lat_usec` 0).
    pub fn limit(&mut self, now: u64, hiprio: bool) -> u32 {
        self.advance(now);
        if self.depth.min_lat_ns == 0 {
            return 0;
        }
        let close_io = self.last_read.is_some_and(|l| now < l.saturating_add(CLOSE_IO_NS));
        if hiprio {
            self.depth.max_depth
        } else if close_io {
            self.depth.wb_background
        } else {
            self.depth.wb_normal
        }
    }

    /// May a submitter of queue `rwq` with limit `limit` start a request at `now`, with
    /// `extra` of its requests already counted but not issued (its plug)? `None`: yes;
    /// `Some(t)`: it sleeps in `rq_qos_wait` until `t` — the completion that wakes it
    /// (`wbt_rqw_done`, on that queue's count) or the first window whose scale-up wakes
    /// everyone, judged on the requests issued by now.
    pub fn wait(&mut self, now: u64, rwq: u8, limit: u32, extra: u32) -> Option<u64> {
        self.advance(now);
        if limit == 0 || self.inflight(now, rwq) + extra < limit {
            return None;
        }
        let live = |&&(i, d, q): &&(u64, u64, u8)| q == rwq && i <= now && d > now;
        // None: only the caller's own unissued requests count, and they go when it sleeps
        // (`io_schedule` flushes its plug); it asks again.
        let last = self.writes.iter().filter(live).map(|w| w.1).max()?;
        if last == UNKNOWN {
            // A loop worker has not submitted it yet: no completion to sleep until. The
            // caller waits for the worker (loop_dev.rs) and asks again.
            return Some(UNKNOWN);
        }
        let wake = if self.write_cache {
            // wbt_rqw_done's limit is 0: only the last completion wakes.
            last
        } else {
            // Woken once in flight < wb_normal and (none left or wb_normal − in flight ≥
            // wb_background / 2).
            let mut dones: Vec<u64> = self.writes.iter().filter(live).map(|w| w.1).collect();
            dones.sort_unstable();
            let need = |left: u32| {
                left == 0
                    || (left < self.depth.wb_normal && self.depth.wb_normal - left >= self.depth.wb_background / 2)
            };
            let n = dones.len() as u32;
            (1..=n).map(|k| (n - k, dones[k as usize - 1])).find(|&(left, _)| need(left)).map_or(now, |(_, t)| t)
        };
        // A window's end wakes it only by a scale-up (`rwb_wake_all`); once the depth is at its
        // cap, or when the window scales down, the completions alone do.
        Some(self.wake_all_before(wake).unwrap_or(wake).max(now + 1))
    }

    /// The flusher's wait (`get_limit` for a write neither sync nor background, in
    /// `WBT_RWQ_BG`): see [`Wbt::wait`].
    pub fn flusher_wait(&mut self, now: u64) -> Option<u64> {
        let limit = self.limit(now, false);
        self.wait(now, RWQ_BG, limit, 0)
    }

    /// `wb_normal`, `wb_background`, `max_depth` and the step, for tests and traces.
    pub fn limits(&self) -> (u32, u32, u32, i32) {
        (self.depth.wb_normal, self.depth.wb_background, self.depth.max_depth, self.depth.scale_step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A queue of 128 with a write in flight through each of ten windows (LAT_UNKNOWN_WRITES):
    /// step −1, −2, −3 … until the ¾ cap. The last write completes at 1,050 ms.
    fn scaled_to_the_cap() -> Wbt {
        let mut w = Wbt::new(128, 2 * MS, true);
        for i in 0..10u64 {
            w.issue_write(i * 100 * MS, (i + 1) * 100 * MS + 50 * MS, RWQ_BG);
        }
        w
    }

    /// Step 0 on a queue of 256 (wb_normal 8): eight writes issued at 0, completing 1 ms apart
    /// from `first_done`.
    fn eight_writes(write_cache: bool, first_done: u64) -> Wbt {
        let mut w = Wbt::new(256, 75 * MS, write_cache);
        for j in 0..8 {
            w.issue_write(0, first_done + j * MS, RWQ_BG);
        }
        w
    }

    #[test]
    fn default_depth_gives_the_kernels_limits() {
        // nr_requests 256: max_depth min(16, 256) = 16, wb_normal 8, wb_background 4.
        assert_eq!(Wbt::new(256, 75 * MS, true).limits(), (8, 4, 16, 0));
        // A queue of 4: max_depth 4, wb_normal 2, wb_background 1.
        assert_eq!(Wbt::new(4, 2 * MS, true).limits(), (2, 1, 4, 0));
    }

    #[test]
    fn writes_alone_scale_up_to_three_quarters_of_the_queue() {
        let w = scaled_to_the_cap();
        let (normal, _, max, step) = w.limits();
        // 1 + (15 << 3) = 121 > 96 = ¾ · 128: capped at 96, and no further step once capped.
        assert_eq!((max, normal), (96, 48));
        assert_eq!(step, -3);
    }

    #[test]
    fn a_slow_read_snaps_a_negative_step_back() {
        let mut w = Wbt::new(128, 2 * MS, true);
        for i in 0..3u64 {
            w.issue_write(i * 100 * MS, i * 100 * MS + 150 * MS, RWQ_BG);
        }
        assert!(w.limits().3 < 0);
        // A window with a 10 ms read and three writes: LAT_EXCEEDED, hard: step 0.
        let t = 300 * MS;
        w.issue_read(t + MS, t + 11 * MS);
        for j in 0..3 {
            w.issue_write(t + j * MS, t + 20 * MS + j * MS, RWQ_BG);
        }
        w.advance(t + 400 * MS);
        assert!(w.limits().3 >= 0, "{:?}", w.limits());
    }

    #[test]
    fn with_a_write_cache_the_flusher_waits_for_the_queue_to_drain() {
        let mut w = eight_writes(true, 10 * MS);
        // wb_normal 8 reached: the flusher sleeps until the last of the eight completes.
        assert_eq!(w.flusher_wait(MS), Some(17 * MS));
        assert_eq!(w.flusher_wait(17 * MS), None);
        // Without the cache it wakes when 8 − in flight ≥ wb_background / 2 = 2: at the second
        // completion.
        let mut w = eight_writes(false, 10 * MS);
        assert_eq!(w.flusher_wait(MS), Some(11 * MS));
    }

    #[test]
    fn a_window_end_wakes_the_flusher_only_by_a_scale_up() {
        // Step 0, wb_normal 8: eight writes in flight through the window at 100 ms
        // (LAT_UNKNOWN_WRITES) scale up to step −1, which wakes the flusher there.
        let mut w = eight_writes(true, 150 * MS);
        assert_eq!(w.flusher_wait(MS), Some(100 * MS));
        assert_eq!(w.flusher_wait(100 * MS), None, "wb_normal is 16 now");
        // At the cap (step −3 on a queue of 128, wb_normal 48) the window at 1,100 ms scales
        // nothing and wakes no one: the flusher sleeps until its last write completes.
        let mut w = scaled_to_the_cap();
        assert_eq!(w.limits(), (48, 24, 96, -3));
        let t = 1_060 * MS;
        for j in 0..48 {
            w.issue_write(t, t + 10 * MS + 2 * j * MS, RWQ_BG);
        }
        assert_eq!(w.flusher_wait(t + MS), Some(t + 104 * MS));
        assert_eq!(w.limits(), (48, 24, 96, -3));
    }

    #[test]
    fn an_idle_gap_shorter_than_five_windows_keeps_the_scaled_depth() {
        let mut w = scaled_to_the_cap();
        // The last write completes at 1,050 ms; the windows ending at 1,200 … 1,500 ms see
        // nothing (LAT_UNKNOWN, four of them): still step −3 at 1,550 ms.
        assert_eq!(w.limit(1_550 * MS, false), 48);
        // The fifth, at 1,600 ms, steps back by one: max_depth 1 + (15 << 2) = 61.
        assert_eq!(w.limit(1_650 * MS, false), 31);
        assert_eq!(w.limits(), (31, 16, 61, -2));
        // Then five more per step: step 0 at 2,600 ms, and the timer stops.
        assert_eq!(w.limit(2_650 * MS, false), 8);
        assert_eq!(w.limits().3, 0);
        assert_eq!(w.window_end, None);
    }

    #[test]
    fn get_limit_gives_a_swap_write_what_its_kernel_gives_it() {
        let mut w = Wbt::new(256, 75 * MS, true);
        // Step 0: max_depth 16, wb_normal 8, wb_background 4. A read 1 ms ago: close_io.
        w.issue_read(0, MS);
        assert_eq!(w.limit(2 * MS, false), 4, "6.8: a direct reclaimer's swap write near a read");
        assert_eq!(w.limit(2 * MS, true), 16, "kswapd's in 6.8, any swap write from 6.11");
        assert_eq!(w.limit(150 * MS, false), 8, "no read within 100 ms: wb_normal");
        // Four of the background queue's writes in flight hold a fifth there; the swap queue
        // counts its own.
        for j in 0..4 {
            w.issue_write(2 * MS, 10 * MS + j * MS, RWQ_BG);
        }
        assert_eq!(w.wait(3 * MS, RWQ_BG, 4, 0), Some(13 * MS), "woken when the last completes");
        assert_eq!(w.wait(3 * MS, RWQ_SWAP, 4, 0), None, "another queue's writes do not count");
        assert_eq!(w.wait(3 * MS, RWQ_SWAP, 4, 4), None, "only its own unissued requests: it flushes them first");
        assert_eq!(w.wait(3 * MS, RWQ_BG, 16, 0), None);
        assert_eq!(w.wait(13 * MS, RWQ_BG, 4, 0), None);
        // wbt_lat_usec 0: no throttle.
        assert_eq!(Wbt::new(256, 0, true).limit(0, false), 0);
    }

    #[test]
    fn a_write_waiting_for_a_loop_worker_is_in_flight_with_no_completion_to_wake_at() {
        let mut w = Wbt::new(256, 75 * MS, true);
        for _ in 0..3 {
            w.issue_write(MS, 5 * MS, RWQ_BG);
        }
        w.issue_write(2 * MS, UNKNOWN, RWQ_BG);
        assert_eq!(w.inflight(6 * MS, RWQ_BG), 1, "counted from its allocation, not from its submission");
        assert_eq!(w.wait(3 * MS, RWQ_BG, 4, 0), Some(UNKNOWN), "the last completion is not known yet");
        w.dispatched(9 * MS);
        assert_eq!(w.wait(3 * MS, RWQ_BG, 4, 0), Some(9 * MS), "woken by it once the worker has submitted it");
        assert_eq!(w.inflight(9 * MS, RWQ_BG), 0);
    }
}
