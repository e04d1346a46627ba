//! The request queue of the block layer before blk-mq (`drivers/block/ll_rw_blk.c`, 2.4 to
//! 2.6.24), in front of the device model (disk.rs) when a disk has no 6.8 queue: the back merge
//! of `__make_request`, and for the 2.4 rows the bound on what a queue holds (2.4.22+'s sectors,
//! throttle.rs; the older request count, slots.rs), the plug on an empty queue (plug.rs) and
//! where the elevator puts a request in the plugged queue (elevator.rs); with a driver depth,
//! the queue as the list the driver takes its requests from (IDE one at a time, SCSI up to its
//! depth), the elevator placing and merging every request not yet taken.
//! [`Queue`] is one disk's; the device books what it lets through.

mod elevator;
mod list;
mod plug;
mod slots;
mod throttle;

pub use elevator::{ElevatorLinus, Place};
pub use plug::{Held, Plug, RequestWaits};
pub use slots::{RequestSlots, QUEUE_NR_REQUESTS};
pub use throttle::{SectorThrottle, MAX_NR_REQUESTS, MAX_QUEUE_BYTES};

/// Largest request the block layer builds by merging contiguous submissions: 2.4's
/// `__make_request` back-merges a buffer into the queued request that ends where it begins, up to
/// the driver's `max_sectors` (128 sectors on a DAC960).
pub const MERGE_MAX_BYTES: u64 = 64 * 1024;

use crate::mm_types::Pfn;
use std::collections::VecDeque;

/// The end of a buffer a plugged queue holds: not known before the unplug.
pub const UNPLUGGED: u64 = u64::MAX;

/// The bound a 2.4 queue puts on its submitters: 2.4.22's sectors or the older request count.
#[derive(Debug, Clone)]
pub enum QueueBound {
    Sectors(SectorThrottle),
    Requests(RequestSlots),
}

impl QueueBound {
    /// `__get_request_wait` for a task that needs a new request (see the two bounds' own).
    pub fn get_request_wait(&mut self, now: u64, write: bool) -> u64 {
        match self {
            QueueBound::Sectors(t) => t.get_request_wait(now, write),
            QueueBound::Requests(r) => r.get_request_wait(now, write),
        }
    }

    /// A buffer of `bytes` taken at `now`, ending at `done`, in a new request or `merged`.
    pub fn start(&mut self, now: u64, done: u64, bytes: u64, write: bool, merged: bool) {
        match self {
            QueueBound::Sectors(t) => t.start(now, done, bytes, write, merged),
            QueueBound::Requests(r) => r.start(now, done, write, merged),
        }
    }

    /// The requests a plugged queue holds are counted as they are made, ending at
    /// [`UNPLUGGED`]: a wait that needs one of them to end is a wait past the unplug.
    /// At the unplug they are forgotten here and counted again with their ends.
    pub fn forget_held(&mut self) {
        match self {
            QueueBound::Sectors(t) => t.forget_held(UNPLUGGED),
            QueueBound::Requests(r) => r.forget_held(UNPLUGGED),
        }
    }
}

/// One disk's request queue: the last request (for the back merge), the bound, the plug, and
/// the tasks that slept for a request.
#[derive(Debug, Clone)]
pub struct Queue {
    /// The last submission: its end offset, direction, when the request it is part of starts
    /// its service, and that request's size.
    merge_end: u64,
    merge_write: bool,
    merge_begin: u64,
    merge_bytes: u64,
    /// 2.4's bound on the queue: 2.4.22+'s sectors or the older request count; None: a
    /// submitter waits only on the queue's time backlog (`page_writeback::MAX_BACKLOG_NS`).
    bound: Option<QueueBound>,
    /// When the last submission's task may go on (0: at once), under the bound.
    wake: u64,
    /// 2.4's plug on an empty queue; None: a request goes to the device as it is made.
    plug: Option<Plug>,
    /// The requests a plugged queue holds, in the order the device will take them when
    /// `tq_disk` runs: arrival order, or the elevator's.
    held: VecDeque<Held>,
    /// Their bytes.
    held_bytes: u64,
    /// The last submission was held: its pages join the held request at `last_at`.
    held_last: bool,
    last_at: usize,
    /// 2.4's `elevator_linus` on the plugged queue; None: arrival order.
    elevator: Option<ElevatorLinus>,
    /// Requests the driver takes off the list at once (IDE's `hwgroup->busy`: 1; SCSI's
    /// `scsi_request_fn`: up to the device's commands); 0: none, every request goes to the
    /// device as it is made, or at the unplug.
    depth: u32,
    /// With a depth: when each request the driver took ends, ascending.
    active: VecDeque<u64>,
    /// Under a bound, the tasks that slept for a request.
    pub request_waits: RequestWaits,
}

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            merge_end: u64::MAX,
            merge_write: false,
            merge_begin: 0,
            merge_bytes: 0,
            bound: None,
            wake: 0,
            plug: None,
            held: VecDeque::new(),
            held_bytes: 0,
            held_last: false,
            last_at: 0,
            elevator: None,
            depth: 0,
            active: VecDeque::new(),
            request_waits: RequestWaits::default(),
        }
    }
}

impl Queue {
    pub fn set_bound(&mut self, bound: Option<QueueBound>) {
        self.bound = bound;
    }

    pub fn set_plugging(&mut self, on: bool) {
        self.plug = on.then(Default::default);
    }

    pub fn set_elevator(&mut self, elv: Option<ElevatorLinus>) {
        self.elevator = elv;
    }

    /// Whether the elevator sorts what a plugged queue holds.
    pub fn sorts(&self) -> bool {
        self.elevator.is_some() && self.plugged()
    }

    /// `__generic_unplug_device` at `now`: the plug ends; the device takes what was held
    /// ([`Queue::pop_held`]), and the bound counts it again with its ends
    /// ([`Queue::unplugged`]).
    pub fn unplug(&mut self, now: u64) {
        if let Some(p) = self.plug.as_mut() {
            p.unplug(now);
        }
        if let (Some(b), false, 0) = (self.bound.as_mut(), self.held.is_empty(), self.depth) {
            b.forget_held();
        }
    }

    /// Whether the queue is plugged now.
    pub fn plugged(&self) -> bool {
        self.plug.is_some_and(|p| p.plugged())
    }

    /// A write made while the queue is plugged waits in it (`merged` into the last held
    /// request, or a new one) until `tq_disk` runs: `request_fn` is not called before.
    pub fn hold(&mut self, now: u64, offset: u64, bytes: u64, segs: u32, merged: bool) {
        self.count_held(now, bytes, merged);
        let last = self.last_at.min(self.held.len().saturating_sub(1));
        match self.held.get_mut(last) {
            Some(h) if merged => {
                h.bytes += bytes;
                h.segs += segs;
            }
            _ => self.add_request(Held { offset, bytes, segs, since: now, pages: Vec::new(), write: true, seq: 0 }),
        }
        self.held_bytes += bytes;
        if let Some(p) = self.plug.as_mut() {
            p.note_held(self.held_bytes);
        }
        self.held_last = true;
    }

    /// `blk_started_sectors` / `get_request` count a write the queue holds as it is made
    /// (`merged` into a held request or a new one); its end comes when the device takes it.
    fn count_held(&mut self, now: u64, bytes: u64, merged: bool) {
        match self.bound.as_mut() {
            Some(QueueBound::Requests(r)) if !merged => {
                for _ in 0..bytes.div_ceil(MERGE_MAX_BYTES).max(1) {
                    r.start(now, UNPLUGGED, true, false);
                }
            }
            Some(b) => b.start(now, UNPLUGGED, bytes, true, merged),
            None => {}
        }
    }

    /// A read that merged with nothing, made on the plugged queue at `now`: the elevator puts
    /// it among what the queue holds, and its reader's wait unplugs the queue at once (the
    /// caller's [`Queue::pop_held`]). It counts in the bound when the device takes it.
    pub fn hold_read(&mut self, now: u64, offset: u64, bytes: u64, segs: u32) {
        self.add_request(Held { offset, bytes, segs, since: now, pages: Vec::new(), write: false, seq: 0 });
        self.held_bytes += bytes;
    }

    /// `add_request` of a new request: the elevator's place for it, or the tail.
    fn add_request(&mut self, h: Held) {
        self.last_at = match self.elevator {
            Some(e) => {
                let (write, len) = (h.write, self.held.len());
                let at = e.add_request(&mut self.held, h);
                if let Some(p) = self.plug.as_mut() {
                    p.note_sorted(write, (len - at) as u64);
                }
                at
            }
            None => {
                self.held.push_back(h);
                self.held.len() - 1
            }
        };
    }

    /// A submission begins: nothing of it is held yet.
    pub fn begin_submission(&mut self) {
        self.held_last = false;
    }

    /// The pages of the last submission, if the queue holds it: they complete with the held
    /// request (None). Otherwise they are handed back.
    pub fn hold_pages(&mut self, pages: Vec<Pfn>) -> Option<Vec<Pfn>> {
        if !std::mem::take(&mut self.held_last) {
            return Some(pages);
        }
        let h = self.held.get_mut(self.last_at).expect("held_last: a held request");
        if h.pages.is_empty() {
            h.pages = pages;
        } else {
            h.pages.extend_from_slice(&pages);
        }
        None
    }

    /// The oldest held request, for the device at the unplug.
    pub fn pop_held(&mut self) -> Option<Held> {
        let h = self.held.pop_front()?;
        self.held_bytes -= h.bytes;
        Some(h)
    }

    /// Whether a plugged queue holds requests.
    pub fn holds(&self) -> bool {
        !self.held.is_empty()
    }

    /// The plug's counts (None: the queue does not plug).
    pub fn plug_stats(&self) -> Option<Plug> {
        self.plug
    }

    /// Under the bound, when the task of the last submission may go on (0: it got its request
    /// at once). None: no bound.
    pub fn wake(&self) -> Option<u64> {
        self.bound.as_ref().map(|_| self.wake)
    }

    /// Under the bound, when a task that wants a new request for `write` at `now` gets one (0:
    /// at once). None: no bound.
    pub fn request_wait(&mut self, now: u64, write: bool) -> Option<u64> {
        self.bound.as_mut().map(|t| t.get_request_wait(now, write))
    }

    /// `__make_request`'s back merge: a buffer that begins where the last submission ended, in
    /// the same direction, joins its request (`ELEVATOR_BACK_MERGE`: the buffer is chained to
    /// `bhtail` and the request's sectors grow; no new request, so no new command for the
    /// drive) while that request has not started — the active head is skipped
    /// (`q->head_active && !q->plugged`), so on a plugged queue it may have — and stays within
    /// `max_sectors`. On a device of `stripes` stripes of `chunk` bytes the buffer must stay in
    /// the chunk the request ends in, so that the same spindle moves it.
    pub fn back_merge(&self, now: u64, offset: u64, bytes: u64, write: bool, chunk: u64, stripes: u32) -> bool {
        let same_chunk =
            stripes == 1 || (!offset.is_multiple_of(chunk) && offset / chunk == (offset + bytes.max(1) - 1) / chunk);
        let head_inactive = now < self.merge_begin || self.plug.is_some_and(|p| p.plugged());
        write == self.merge_write
            && offset == self.merge_end
            && head_inactive
            && self.merge_bytes + bytes <= MERGE_MAX_BYTES
            && same_chunk
    }

    /// `__make_request` takes a buffer at `now` (`merged` into the last request or not; `idle`:
    /// nothing in flight): a write plugs a queue it finds empty — IDE keeps its active request
    /// on the queue until it ends, so the queue is empty only when nothing is in flight. A read
    /// does not: its reader waits on its page at once, and that wait's `sync_page` runs
    /// `tq_disk` (the device's caller has unplugged a plugged queue before a read).
    pub fn plug_on_make_request(&mut self, now: u64, merged: bool, idle: bool, write: bool) {
        if let Some(p) = self.plug.as_mut() {
            if merged && (now >= self.merge_begin || !self.held.is_empty()) {
                p.merges += 1;
            } else if !merged && idle && write {
                p.plug(now);
            }
        }
    }

    /// A buffer that needs a new request asks the bound for one at `now`: when its task may
    /// go on (0: at once). A merged buffer takes no request, so it never waits
    /// (`__make_request` → `out:`). The first request's wait decides when a reader's goes;
    /// `take_requests` books them all. A task that must wait unplugs the queue first
    /// (`__get_request_wait`): the caller books what was held and asks again.
    pub fn get_request(&mut self, now: u64, merged: bool, write: bool) -> u64 {
        self.wake = match self.bound.as_mut() {
            Some(t) if !merged => t.get_request_wait(now, write),
            _ => 0,
        };
        self.wake
    }

    /// The task of the buffer just made sleeps in `__get_request_wait` from `now` to its
    /// `wake`. Returns when a reader's request is made: at the wakeup (a writer's sleep is its
    /// caller's, `page_writeback::congestion_wait_on_submit`).
    pub fn request_sleep(&mut self, now: u64, write: bool) -> Option<u64> {
        if self.wake <= now {
            return None;
        }
        self.unplug(now);
        self.request_waits.waits[write as usize] += 1;
        self.request_waits.wait_ns[write as usize] += self.wake - now;
        (!write).then_some(self.wake)
    }

    /// The buffer (`offset`, `bytes`, `write`) is the last request's now: `merged` into it, or
    /// a request of its own whose service begins at `begin`.
    pub fn queued(&mut self, offset: u64, bytes: u64, write: bool, merged: bool, begin: u64) {
        if merged {
            self.merge_bytes += bytes;
        } else {
            (self.merge_bytes, self.merge_begin) = (bytes, begin);
        }
        (self.merge_end, self.merge_write) = (offset + bytes, write);
    }

    /// The bound takes a submission of `bytes` whose transfer runs from `begin` to `done`, whose
    /// first request's wait was asked in [`Queue::make_request`] (nothing has taken a request
    /// since); sets when its task may go on (0: at once). A buffer merged into the last request
    /// takes none, so it never waits. Otherwise 2.4 builds requests of at most `max_sectors`
    /// ([`MERGE_MAX_BYTES`]) out of the buffers it is given one by one, where vmlab moves a
    /// writer's run of pages as one transfer: under the request-count bound the run takes one
    /// request, and a slot, per `max_sectors` of it, each released as the transfer passes its
    /// end. The sector bound counts bytes, not requests.
    pub fn take_requests(&mut self, now: u64, begin: u64, done: u64, bytes: u64, write: bool, merged: bool) {
        self.wake = self.take(now, begin, done, bytes, write, merged, self.wake);
    }

    /// A request held by the plug goes to the device at `now`: the bound takes it (its task
    /// went on long ago), and it is the request a later buffer may merge into.
    pub fn unplugged(&mut self, now: u64, begin: u64, done: u64, h: &Held) {
        self.take(now, begin, done, h.bytes, h.write, false, 0);
        if self.held.is_empty() {
            self.merge_bytes = h.bytes;
            self.merge_begin = begin;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn take(&mut self, now: u64, begin: u64, done: u64, bytes: u64, write: bool, merged: bool, first: u64) -> u64 {
        match self.bound.as_mut() {
            None => 0,
            Some(t) if merged => {
                t.start(now, done, bytes, write, true);
                0
            }
            Some(QueueBound::Requests(r)) => {
                let n = bytes.div_ceil(MERGE_MAX_BYTES).max(1);
                let span = done.saturating_sub(begin);
                let mut wake = first;
                for i in 1..=n {
                    if i > 1 {
                        wake = wake.max(r.get_request_wait(now, write));
                    }
                    r.start(now, done - span + span * i / n, write, false);
                }
                wake
            }
            Some(t) => {
                t.start(now, done, bytes, write, false);
                first
            }
        }
    }
}

#[cfg(test)]
mod tests;
