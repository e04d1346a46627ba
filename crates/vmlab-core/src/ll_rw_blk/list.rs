//! 2.4's request queue as the list its driver takes requests from (a driver depth: IDE 1,
//! SCSI its commands; the device side is disk_ll24.rs): every request the driver has not
//! taken stays listed, where `__make_request`'s elevator scan merges buffers into it or places
//! new requests around it (elevator.rs [`super::elevator::linus_merge`]); a write is counted in
//! the bound as it is made, its end unknown until the driver takes it.

use super::*;

impl QueueBound {
    /// Forget one listed request of `bytes` counted with an unknown end: the driver took it.
    pub fn forget_held_bytes(&mut self, bytes: u64) {
        match self {
            QueueBound::Sectors(t) => t.forget_held_bytes(UNPLUGGED, bytes),
            QueueBound::Requests(r) => r.forget_held_count(UNPLUGGED, bytes.div_ceil(MERGE_MAX_BYTES).max(1) as usize),
        }
    }
}

impl Queue {
    /// The driver takes `depth` requests off the list at once (0: the queue is no list).
    pub fn set_depth(&mut self, depth: u32) {
        self.depth = depth;
    }

    /// Whether the queue is a list the driver takes from.
    pub fn listed(&self) -> bool {
        self.depth > 0
    }

    /// The driver's depth (0: the queue is no list).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Requests the driver took that have not ended by `now`.
    pub fn active_at(&mut self, now: u64) -> usize {
        while self.active.front().is_some_and(|&d| d <= now) {
            self.active.pop_front();
        }
        self.active.len()
    }

    /// When the driver can take its next request, from `now` on.
    pub fn next_slot(&mut self, now: u64) -> u64 {
        let (n, d) = (self.active_at(now), self.depth as usize);
        if n < d {
            now
        } else {
            self.active[n - d]
        }
    }

    /// Whether the driver waits for a slot to take what the list holds: a `BlkRun` then.
    pub fn waits_for_driver(&self) -> bool {
        self.depth > 0 && !self.held.is_empty() && !self.plugged()
    }

    /// With a depth, the index of the listed write that holds page `p`.
    pub fn listed_index_of(&self, p: Pfn) -> Option<usize> {
        if self.depth == 0 {
            return None;
        }
        self.held.iter().position(|h| h.pages.contains(&p))
    }

    /// Requests listed, not taken.
    pub fn listed_len(&self) -> usize {
        self.held.len()
    }

    /// `__make_request`'s merge on the list: the buffer (`offset`, `bytes`, `segs`, `write`)
    /// made at `now` joins a listed request at its back or front if
    /// [`elevator::linus_merge`] finds one (then `attempt_back_merge` / `attempt_front_merge`);
    /// `fits` says whether an extent is one the device moves in one piece. The index of the
    /// request it joined.
    pub fn list_merge(
        &mut self,
        now: u64,
        at: (u64, u64, u32),
        write: bool,
        fits: impl Fn(u64, u64) -> bool + Copy,
    ) -> Option<usize> {
        self.list_make_request(now, at, write, fits, true).map(|(i, _)| i)
    }

    /// `__make_request` with its request on the list: merged as [`Queue::list_merge`], or a new
    /// request where the elevator places it. A write is counted in the bound as it is made,
    /// with an end not known until the driver takes it; a read when it is taken. The
    /// request's index and whether the buffer merged.
    pub fn list_add(
        &mut self,
        now: u64,
        at: (u64, u64, u32),
        write: bool,
        fits: impl Fn(u64, u64) -> bool + Copy,
    ) -> (usize, bool) {
        self.list_make_request(now, at, write, fits, false).expect("a place")
    }

    fn list_make_request(
        &mut self,
        now: u64,
        (offset, bytes, segs): (u64, u64, u32),
        write: bool,
        fits: impl Fn(u64, u64) -> bool + Copy,
        merge_only: bool,
    ) -> Option<(usize, bool)> {
        let elv = self.elevator.as_ref();
        let place = elevator::linus_merge(elv, &mut self.held, offset, bytes, write, MERGE_MAX_BYTES, fits, merge_only);
        let at = match place {
            Place::Back(i) => {
                let h = &mut self.held[i];
                (h.bytes, h.segs) = (h.bytes + bytes, h.segs + segs);
                elevator::attempt_merge(&mut self.held, i, MERGE_MAX_BYTES, fits);
                i
            }
            Place::Front(i) => {
                let h = &mut self.held[i];
                (h.offset, h.bytes, h.segs) = (offset, h.bytes + bytes, h.segs + segs);
                if i > 0 && elevator::attempt_merge(&mut self.held, i - 1, MERGE_MAX_BYTES, fits) {
                    i - 1
                } else {
                    i
                }
            }
            Place::New(_) if merge_only => return None,
            Place::New(at) => {
                let latency = self.elevator.map_or(0, |e| if write { e.write_latency } else { e.read_latency });
                let h = Held { offset, bytes, segs, since: now, pages: Vec::new(), write, seq: latency };
                self.held.insert(at, h);
                if let Some(p) = self.plug.as_mut() {
                    p.note_sorted(write, (self.held.len() - 1 - at) as u64);
                }
                at
            }
        };
        let merged = !matches!(place, Place::New(_));
        if write {
            self.count_held(now, bytes, merged);
        }
        // The buffer's pages join its request: they complete when the driver takes it.
        (self.held_last, self.last_at) = (true, at);
        self.held_bytes += bytes;
        let (plugged, held) = (self.plugged(), self.held_bytes);
        if let Some(p) = self.plug.as_mut().filter(|_| plugged) {
            p.merges += merged as u64;
            p.note_held(held);
        }
        Some((at, merged))
    }

    /// The driver took `n` requests off the head: the last buffer listed, still listed, is
    /// `n` places nearer it.
    pub fn last_moved_up(&mut self, n: usize) {
        self.last_at -= n;
    }

    /// The last buffer listed was taken with its request before its pages came: they
    /// complete with the caller's own completion.
    pub fn last_taken(&mut self) {
        self.held_last = false;
    }

    /// The driver takes the request at the head of the list: its count in the bound, made
    /// with an unknown end, is forgotten, to be counted again with its end
    /// ([`Queue::driver_took`]).
    pub fn take_head(&mut self) -> Option<Held> {
        let h = self.pop_held()?;
        if let (Some(b), true) = (self.bound.as_mut(), h.write) {
            b.forget_held_bytes(h.bytes);
        }
        Some(h)
    }

    /// The driver took `h` at `now`; its service begins at `begin` and it ends at `done`.
    pub fn driver_took(&mut self, now: u64, begin: u64, done: u64, h: &Held) {
        self.take(now, begin, done, h.bytes, h.write, false, 0);
        self.driver_started(done);
    }

    /// A request the driver took (as it was made, or from the list) ends at `done`.
    pub fn driver_started(&mut self, done: u64) {
        let at = self.active.partition_point(|&d| d <= done);
        self.active.insert(at, done);
    }
}
