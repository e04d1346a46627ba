//! Sleeping locks: the rw-semaphore behind mmap_sem. Waiters queue FIFO; a waiting writer makes
//! new readers queue too (so one reader stuck on disk I/O + one queued writer stalls every later
//! fault: the seed-004 convoy). Granting happens at release, as `rwsem_wake` does.

use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct RwSem {
    pub readers: u32,
    pub writer: Option<usize>,
    pub waiters: VecDeque<(usize, bool)>,
    /// Contended acquisitions (for `explain`-style reports).
    pub contended: u64,
}

impl RwSem {
    /// `down_read`: true if granted now; else the task is queued.
    pub fn down_read(&mut self, task: usize) -> bool {
        if self.writer.is_none() && self.waiters.is_empty() {
            self.readers += 1;
            true
        } else {
            self.contended += 1;
            self.waiters.push_back((task, false));
            false
        }
    }
    /// `down_write`: true if granted now; else queued.
    pub fn down_write(&mut self, task: usize) -> bool {
        if self.writer.is_none() && self.readers == 0 && self.waiters.is_empty() {
            self.writer = Some(task);
            true
        } else {
            self.contended += 1;
            self.waiters.push_back((task, true));
            false
        }
    }
    /// `up_read`: returns tasks granted the lock by this release.
    pub fn up_read(&mut self, granted: &mut Vec<usize>) {
        debug_assert!(self.readers > 0);
        self.readers -= 1;
        if self.readers == 0 {
            self.wake(granted);
        }
    }
    pub fn up_write(&mut self, granted: &mut Vec<usize>) {
        self.writer = None;
        self.wake(granted);
    }
    /// Grant the head writer alone, or the run of readers at the head (2.6 `__rwsem_do_wake`).
    fn wake(&mut self, granted: &mut Vec<usize>) {
        if self.writer.is_some() || self.readers > 0 {
            return;
        }
        match self.waiters.front() {
            Some(&(t, true)) => {
                self.waiters.pop_front();
                self.writer = Some(t);
                granted.push(t);
            }
            Some(_) => {
                while let Some(&(t, false)) = self.waiters.front() {
                    self.waiters.pop_front();
                    self.readers += 1;
                    granted.push(t);
                }
            }
            None => {}
        }
    }
    /// Remove a task from the wait queue (it was killed).
    pub fn cancel(&mut self, task: usize, granted: &mut Vec<usize>) {
        self.waiters.retain(|w| w.0 != task);
        self.wake(granted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn waiting_writer_blocks_new_readers_and_fifo_grants() {
        let mut s = RwSem::default();
        let mut g = Vec::new();
        assert!(s.down_read(1));
        assert!(!s.down_write(2));
        assert!(!s.down_read(3), "a reader must queue behind a waiting writer");
        assert!(!s.down_read(4));
        s.up_read(&mut g);
        assert_eq!(g, vec![2]);
        g.clear();
        s.up_write(&mut g);
        assert_eq!(g, vec![3, 4]);
        assert_eq!(s.readers, 2);
    }
}
