//! Sleeping locks: the rw-semaphore behind mmap_sem. Waiters queue FIFO; a waiting writer makes
//! new readers queue too (so one reader stuck on disk I/O + one queued writer stalls every later
//! fault: the seed-004 convoy). Granting happens at release, as `rwsem_wake` does.
//!
//! Two wake-up rules (profile field `rwsem`):
//! - `Fifo` (2.6 `lib/rwsem.c` `__rwsem_do_wake`): the head writer alone, or the run of readers
//!   at the head up to the first writer.
//! - `Handoff` (4.x+ `rwsem_mark_wake`): the head writer alone, or every waiting reader (up to
//!   `MAX_READERS_WAKEUP`), writers keeping their place. A woken writer is granted the lock
//!   outright, which is what the handoff bit guarantees once it has waited a few ms; reader lock
//!   stealing in the short window before it runs is not modelled.

use std::collections::VecDeque;

use crate::profiles::RwsemKind;

/// Readers one wake-up grants at most (`MAX_READERS_WAKEUP`).
pub const MAX_READERS_WAKEUP: usize = 0x100;

#[derive(Clone, Copy, Debug, Default)]
pub struct RwSemStats {
    /// Acquisitions that had to sleep.
    pub read_contended: u64,
    pub write_contended: u64,
    /// Time spent asleep waiting for the lock, ns.
    pub read_wait_ns: u64,
    pub write_wait_ns: u64,
    /// Longest single wait, ns.
    pub max_wait_ns: u64,
    /// Faults that slept on disk I/O while holding the lock for read.
    pub io_waits_holding: u64,
}

impl RwSemStats {
    pub fn add(&mut self, o: &RwSemStats) {
        self.read_contended += o.read_contended;
        self.write_contended += o.write_contended;
        self.read_wait_ns += o.read_wait_ns;
        self.write_wait_ns += o.write_wait_ns;
        self.max_wait_ns = self.max_wait_ns.max(o.max_wait_ns);
        self.io_waits_holding += o.io_waits_holding;
    }
}

#[derive(Clone, Debug)]
pub struct RwSem {
    pub kind: RwsemKind,
    pub readers: u32,
    pub writer: Option<usize>,
    /// (task, is_writer, time it started waiting)
    pub waiters: VecDeque<(usize, bool, u64)>,
    pub stats: RwSemStats,
}

impl Default for RwSem {
    fn default() -> Self {
        RwSem::new(RwsemKind::Fifo)
    }
}

impl RwSem {
    pub fn new(kind: RwsemKind) -> RwSem {
        RwSem { kind, readers: 0, writer: None, waiters: VecDeque::new(), stats: RwSemStats::default() }
    }

    /// `down_read`: true if granted now; else the task is queued.
    pub fn down_read(&mut self, task: usize, now: u64) -> bool {
        if self.writer.is_none() && self.waiters.is_empty() {
            self.readers += 1;
            true
        } else {
            self.stats.read_contended += 1;
            self.waiters.push_back((task, false, now));
            false
        }
    }
    /// `down_write`: true if granted now; else queued.
    pub fn down_write(&mut self, task: usize, now: u64) -> bool {
        if self.writer.is_none() && self.readers == 0 && self.waiters.is_empty() {
            self.writer = Some(task);
            true
        } else {
            self.stats.write_contended += 1;
            self.waiters.push_back((task, true, now));
            false
        }
    }
    /// `up_read`: appends the tasks granted the lock by this release.
    pub fn up_read(&mut self, granted: &mut Vec<usize>, now: u64) {
        debug_assert!(self.readers > 0);
        self.readers -= 1;
        if self.readers == 0 {
            self.wake(granted, now);
        }
    }
    pub fn up_write(&mut self, granted: &mut Vec<usize>, now: u64) {
        self.writer = None;
        self.wake(granted, now);
    }
    fn account(&mut self, since: u64, now: u64, writer: bool) {
        let w = now.saturating_sub(since);
        if writer {
            self.stats.write_wait_ns += w;
        } else {
            self.stats.read_wait_ns += w;
        }
        self.stats.max_wait_ns = self.stats.max_wait_ns.max(w);
    }
    fn wake(&mut self, granted: &mut Vec<usize>, now: u64) {
        if self.writer.is_some() || self.readers > 0 {
            return;
        }
        match self.waiters.front() {
            Some(&(t, true, since)) => {
                self.waiters.pop_front();
                self.writer = Some(t);
                self.account(since, now, true);
                granted.push(t);
            }
            Some(_) => match self.kind {
                RwsemKind::Fifo => {
                    while let Some(&(t, false, since)) = self.waiters.front() {
                        self.waiters.pop_front();
                        self.grant_reader(t, since, now, granted);
                    }
                }
                RwsemKind::Handoff => {
                    let mut woken = 0;
                    let mut i = 0;
                    while i < self.waiters.len() && woken < MAX_READERS_WAKEUP {
                        match self.waiters[i] {
                            (t, false, since) => {
                                self.waiters.remove(i);
                                self.grant_reader(t, since, now, granted);
                                woken += 1;
                            }
                            _ => i += 1,
                        }
                    }
                }
            },
            None => {}
        }
    }
    fn grant_reader(&mut self, t: usize, since: u64, now: u64, granted: &mut Vec<usize>) {
        self.readers += 1;
        self.account(since, now, false);
        granted.push(t);
    }
    /// Whether `task` is queued, not yet granted.
    pub fn is_waiting(&self, task: usize) -> bool {
        self.waiters.iter().any(|w| w.0 == task)
    }
    /// A killed waiter leaves the queue without the lock (`out_nolock` → `rwsem_del_wake_waiter`),
    /// and its leaving may let the waiters behind it in. Returns whether it was waiting, and for
    /// what (true: to write): a task no longer queued was granted the lock and holds it.
    pub fn cancel(&mut self, task: usize, granted: &mut Vec<usize>, now: u64) -> Option<bool> {
        let i = self.waiters.iter().position(|w| w.0 == task)?;
        let (_, writer, _) = self.waiters.remove(i)?;
        self.wake(granted, now);
        Some(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn waiting_writer_blocks_new_readers_and_fifo_grants() {
        let mut s = RwSem::new(RwsemKind::Fifo);
        let mut g = Vec::new();
        assert!(s.down_read(1, 0));
        assert!(!s.down_write(2, 0));
        assert!(!s.down_read(3, 10), "a reader must queue behind a waiting writer");
        assert!(!s.down_read(4, 10));
        assert!(!s.down_write(5, 10));
        assert!(!s.down_read(6, 10));
        s.up_read(&mut g, 100);
        assert_eq!(g, vec![2]);
        g.clear();
        s.up_write(&mut g, 150);
        assert_eq!(g, vec![3, 4], "FIFO: only the readers ahead of the next writer");
        assert_eq!(s.readers, 2);
        assert_eq!((s.stats.read_contended, s.stats.write_contended), (3, 2));
        assert_eq!(s.stats.write_wait_ns, 100);
        assert_eq!(s.stats.read_wait_ns, 280);
        assert_eq!(s.stats.max_wait_ns, 140);
    }

    #[test]
    fn handoff_wakes_every_waiting_reader() {
        let mut s = RwSem::new(RwsemKind::Handoff);
        let mut g = Vec::new();
        assert!(s.down_write(1, 0));
        assert!(!s.down_read(2, 0));
        assert!(!s.down_write(3, 0));
        assert!(!s.down_read(4, 0));
        s.up_write(&mut g, 5);
        assert_eq!(g, vec![2, 4], "readers behind a waiting writer are woken too");
        g.clear();
        s.up_read(&mut g, 6);
        assert!(g.is_empty());
        s.up_read(&mut g, 7);
        assert_eq!(g, vec![3]);
    }
}
