//! The device's side of 2.4's request queue as a list (ll_rw_blk/ with a driver depth): the
//! driver takes requests off the head of the list while it has room — IDE one at a time
//! (`ide_do_request` sets `hwgroup->busy` and starts the head; `ide_end_request` dequeues it
//! when it ends, and `ide_intr` starts the next), SCSI up to its commands (`scsi_request_fn`
//! dequeues while `host_busy < can_queue` and the device has a free command; the completion
//! runs it again) — and nothing while the queue is plugged. A request stays listed, where the
//! elevator can place and merge around it, until it is taken; its completion is known then
//! (`dispatched` for a write, as a held write's; `dispatched_reads` for a read, whose reader
//! sleeps on its page until the kernel learns that end: `end_that_request_last` → `b_end_io`
//! → `unlock_page` in 2.4.27's `drivers/block/ll_rw_blk.c`). Drivers: 2.4.27's
//! `drivers/ide/ide-io.c` and `drivers/scsi/scsi_lib.c` (`SimonKagstrom/mci500h-linux-2.4.27`).

use super::*;

impl Disk {
    /// `__make_request` on a queue whose driver takes requests off a list (see the module).
    /// The buffer merges into a listed request or becomes one; a write that finds the device
    /// idle plugs the queue, one that finds requests listed or the driver full waits listed,
    /// otherwise the driver takes it at once. A read goes where the elevator places it, and
    /// the driver takes it when it reaches it. Its completion (a write's: a guess when it waits
    /// listed, as a held write's; a read's: [`ll_rw_blk::UNPLUGGED`] while it is listed).
    pub(super) fn submit_listed(&mut self, now: u64, offset: u64, bytes: u64, segs: u32, write: bool) -> u64 {
        self.ll_run(now);
        let (chunk, stripes) = (self.params.chunk_bytes, self.params.stripes());
        let fits = move |off: u64, len: u64| stripes == 1 || off / chunk == (off + len.max(1) - 1) / chunk;
        let rq = (offset, bytes, segs);
        // The elevator's merge scan first: a buffer that joins a listed request takes none.
        if let Some(i) = self.ll.holds().then(|| self.ll.list_merge(now, rq, write, fits)).flatten() {
            self.ll.get_request(now, true, write);
            return self.ll_listed(now, bytes, write, i, true);
        }
        let mut start = now;
        if self.ll.get_request(now, false, write) > now {
            // `__get_request_wait` unplugs before it sleeps; its wakeup needs the ends of
            // requests the list holds: the driver takes as many as that needs, in order.
            self.ll.unplug(now);
            self.ll_run(now);
            self.ll_commit_until_known(now, write);
            self.ll.get_request(now, false, write);
            if let Some(wake) = self.ll.request_sleep(now, write) {
                // A reader that slept makes its request at its wakeup: behind all listed now.
                self.ll_commit(now, self.ll.listed_len());
                start = wake;
            }
        }
        let listed = self.ll.plugged() || self.ll.holds() || self.ll.active_at(now) >= self.ll_depth();
        if start == now && (listed || (write && self.ll_plug_idle(now))) {
            let (i, merged) = self.ll.list_add(now, rq, write, fits);
            return self.ll_listed(now, bytes, write, i, merged);
        }
        let begin = self.service_begins(now, offset).max(start);
        let done = self.start_request(now, start, start, offset, bytes, segs, write);
        self.in_flight_until(now, done);
        self.ll.take_requests(now, begin, done, bytes, write, false);
        self.ll.driver_started(done);
        self.merged = false;
        self.count_submission(bytes, write);
        self.ll_want_run(now);
        done
    }

    /// A buffer listed at `now` in the request at `i` (`merged` into it or not): counted as
    /// submitted. A write's pages join its request, and its completion is guessed for the
    /// submitter's backlog check, as a held write's. A read's reader waits on it at once:
    /// its `sync_page` runs `tq_disk`, and the driver takes what it has room for.
    fn ll_listed(&mut self, now: u64, bytes: u64, write: bool, i: usize, merged: bool) -> u64 {
        self.merged = merged;
        self.count_submission(bytes, write);
        if !write {
            // `__make_request` only lists it; the reader's `wait_on_buffer` → `sync_page` runs
            // `tq_disk`, and the driver takes what it has room for. A read beyond that stays
            // listed, where later buffers may still merge or be placed ahead of it, and its
            // completion is known only when the driver takes it (`UNPLUGGED` till then: its
            // pages go with the request, and their waiters are woken at its end).
            self.ll.unplug(now);
            let room = self.ll_depth().saturating_sub(self.ll.active_at(now));
            if i < room {
                self.ll.last_taken();
                return self.ll_commit(now, i + 1).expect("the listed read");
            }
            self.ll_commit(now, room);
            self.ll.last_moved_up(room);
            return ll_rw_blk::UNPLUGGED;
        }
        self.ll_want_run(now);
        let moved = now.max(self.busy_until).saturating_add(transfer_ns(bytes, self.params.bandwidth_for(true)));
        self.completes(moved, true)
    }

    fn ll_depth(&self) -> usize {
        self.ll.depth() as usize
    }

    /// A write that finds the queue empty and the device idle plugs it (`generic_plug_device`
    /// on `list_empty`; IDE keeps its active request listed, so empty means idle).
    fn ll_plug_idle(&mut self, now: u64) -> bool {
        if self.ll.plug_stats().is_none() || self.ll.active_at(now) > 0 {
            return false;
        }
        self.ll.plug_on_make_request(now, false, true, true);
        true
    }

    /// The driver takes the first `n` listed requests at `now`, one after the other; each is
    /// booked on the device and a write's completion goes to `dispatched`. The completion of
    /// the last read among them, if one is.
    fn ll_commit(&mut self, now: u64, n: usize) -> Option<u64> {
        let mut read = None;
        for _ in 0..n {
            let Some(done) = self.ll_take(now) else { break };
            read = done.1.then_some(done.0).or(read);
        }
        self.ll_want_run(now);
        read
    }

    /// The driver takes the head of the list at `now`: its end, and whether it is a read.
    fn ll_take(&mut self, now: u64) -> Option<(u64, bool)> {
        let h = self.ll.take_head()?;
        // The elevator sorted it among the requests listed with it, as TCQ sorts those a
        // drive holds (see the module doc of disk.rs): the seek is that of the nearest of them.
        let sorted = self.ll.listed_len() as u64;
        for s in &mut self.spindles {
            s.sorted = sorted;
        }
        let begin = self.service_begins(now, h.offset);
        let done = self.start_request(now, h.since, now, h.offset, h.bytes, h.segs, h.write);
        for s in &mut self.spindles {
            s.sorted = 0;
        }
        self.in_flight_until(now, done);
        self.ll.driver_took(now, begin, done, &h);
        if h.write {
            self.dispatched.push((done, h.pages));
        } else if !h.pages.is_empty() {
            self.dispatched_reads.push((done, h.pages));
        }
        Some((done, !h.write))
    }

    /// Under the bound, a task that must sleep for a request wakes when the requests ahead end;
    /// while that needs the end of a listed request, the driver takes the head of the list.
    fn ll_commit_until_known(&mut self, now: u64, write: bool) {
        while self.ll.holds() && self.ll.request_wait(now, write) == Some(ll_rw_blk::UNPLUGGED) {
            self.ll_take(now);
        }
        self.ll_want_run(now);
    }

    /// The driver's `request_fn` at `now` (a completion freed a slot, or `tq_disk` ran): it
    /// takes listed requests while it has room, none while the queue is plugged.
    pub(super) fn ll_run(&mut self, now: u64) {
        while !self.ll.plugged() && self.ll.holds() && self.ll.active_at(now) < self.ll_depth() {
            self.ll_take(now);
        }
        self.ll_want_run(now);
    }

    /// A `BlkRun` is wanted when the driver's next slot frees, if it waits for one.
    fn ll_want_run(&mut self, now: u64) {
        if self.ll.waits_for_driver() {
            self.run_wanted = Some(self.ll.next_slot(now));
        }
    }

    /// `wait_on_page` on a page whose write is listed (its `sync_page` runs `tq_disk`, and
    /// the task sleeps until the write ends): the driver takes the requests up to the one that
    /// holds `p`, so that its end is known. Whether one did.
    pub fn take_listed_page(&mut self, now: u64, p: Pfn) -> bool {
        let Some(i) = self.ll.listed_index_of(p) else { return false };
        let now = now.max(self.last_now);
        self.last_now = now;
        self.ll.unplug(now);
        self.ll_commit(now, i + 1);
        true
    }

    /// [`Disk::request_wait`] on a listed queue: a task that must wait unplugs the queue, and
    /// the driver takes what its wakeup needs.
    pub(super) fn ll_request_wait(&mut self, now: u64, write: bool) -> Option<u64> {
        let wait = self.ll.request_wait(now, write)?;
        if wait <= now {
            return Some(wait);
        }
        self.ll.unplug(now);
        self.ll_run(now);
        self.ll_commit_until_known(now, write);
        self.ll.request_wait(now, write)
    }
}
