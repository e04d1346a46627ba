//! Per-task accounting of writes and request-queue sleeps under 2.4.9 (history §21): who
//! submitted how many pages, and how often and how long it then slept for a request
//! (`__get_request_wait` under `max_queue_requests`, the time backlog's stand-in without it).
//! Counted once per submitted batch or flusher pass, never per page. Nothing here changes what
//! the kernel does: it only adds.

use super::Riel24;
use crate::kernel::{Ctx, Kernel};

/// One task's writes and its sleeps in the request queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskIo {
    /// Write batches submitted (a flusher run, a `writepage`), and the pages in them.
    pub writes: u64,
    pub pages: u64,
    /// Sleeps the queue added to (after a submission; for the flusher, before its next
    /// batch), and the time they added.
    pub queue_sleeps: u64,
    pub queue_sleep_ns: u64,
    /// Sleeps on a page's buffers in page_launder's `try_to_free_buffers` (`__wait_on_buffer`,
    /// direct reclaim only), and their length.
    pub buffer_waits: u64,
    pub buffer_wait_ns: u64,
    /// A flusher's queue sleep in progress: from, and when it times out (0: none). A dirtier
    /// can wake it earlier, so its length is known only when it runs again.
    open_from: u64,
    open_until: u64,
}

/// `task`'s entry, created on its first write.
fn entry(r: &mut Riel24, task: usize) -> &mut TaskIo {
    if r.by_task.len() <= task {
        r.by_task.resize(task + 1, TaskIo::default());
    }
    &mut r.by_task[task]
}

/// The task of `ctx` submitted `pages` (0: none) and the request queue made it sleep `wait_ns`
/// longer (0: not). A flusher's wait is one it begins now and is cut short by its next run,
/// which calls this with `wait_ns` 0; anyone else's is slept in full after its quantum.
pub fn note_write(k: &mut Kernel, ctx: &Ctx, pages: u64, wait_ns: u64) {
    let e = entry(k.reclaim.riel24_mut(), ctx.task);
    if e.open_until > 0 {
        e.queue_sleep_ns += ctx.now.min(e.open_until).saturating_sub(e.open_from);
        e.open_until = 0;
    }
    if pages > 0 {
        e.writes += 1;
        e.pages += pages;
    }
    if wait_ns > 0 {
        e.queue_sleeps += 1;
        if ctx.is_flusher {
            (e.open_from, e.open_until) = (ctx.clock(), ctx.clock() + wait_ns);
        } else {
            e.queue_sleep_ns += wait_ns;
        }
    }
}

/// The task of `ctx` sleeps `ns` on a page's buffers.
pub fn note_buffer_wait(k: &mut Kernel, ctx: &Ctx, ns: u64) {
    let e = entry(k.reclaim.riel24_mut(), ctx.task);
    e.buffer_waits += 1;
    e.buffer_wait_ns += ns;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_and_a_wait_are_counted_for_their_task_only() {
        let p = crate::profiles::first_with_engine(crate::profiles::Engine::Riel24);
        let cfg = crate::machine::MachineConfig::of_zones("i386", 1, &[(crate::mmzone::ZoneType::Normal, 4096)]);
        let mut k = Kernel::new(p, cfg, 1).expect("kernel");
        let ctx = Ctx { task: 3, ..Default::default() };
        note_write(&mut k, &ctx, 16, 0);
        note_write(&mut k, &ctx, 0, 5_000);
        note_write(&mut k, &ctx, 1, 7_000);
        let io = |k: &Kernel, t: usize| {
            let e = k.reclaim.riel24().by_task[t];
            (e.writes, e.pages, e.queue_sleeps, e.queue_sleep_ns)
        };
        assert_eq!(k.reclaim.riel24().by_task.len(), 4);
        assert_eq!(io(&k, 0), (0, 0, 0, 0));
        assert_eq!(io(&k, 3), (2, 17, 2, 12_000));
        // A flusher's sleep counts until it runs again, at most its timeout.
        let mut fl = Ctx { task: 1, is_flusher: true, ..Default::default() };
        note_write(&mut k, &fl, 0, 10_000);
        fl.now = 4_000;
        note_write(&mut k, &fl, 0, 0);
        fl.now = 8_000;
        note_write(&mut k, &fl, 0, 1_000);
        fl.now = 20_000;
        note_write(&mut k, &fl, 0, 0);
        assert_eq!(io(&k, 1), (0, 0, 2, 5_000));
    }
}
