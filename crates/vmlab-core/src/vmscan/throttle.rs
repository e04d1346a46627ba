//! `reclaim_throttle` as 5.16–6.8 have it (`mm/vmscan.c`, `mm/internal.h`; Mel Gorman,
//! "mm/vmscan: Throttle reclaim until some writeback completes if congested", linux-mm,
//! Sep–Oct 2021; read in `sndrzt/linux-6.8`): a reclaimer that cannot make progress sleeps on
//! its node's `reclaim_wait[reason]` until a waker calls `wake_up` on that queue or the
//! timeout passes (HZ/10 for writeback).
//!
//! The reclaimer joins the queue at `prepare_to_wait`, the moment it throttles, and a wake from
//! then on is never lost: vmlab runs a task's quantum ahead of the events that fall inside it,
//! so a completion can arrive after the task throttled but before its quantum ends. The kernel's
//! task then finds itself `TASK_RUNNING` at `schedule_timeout` and does not sleep; vmlab's
//! scheduler (`Sched::throttle_wake`) marks the running task woken and cuts the sleep owed for
//! the throttle (`Ctx::throttle_sleep_ns`). A wake before the task joined finds no waiter.
//!
//! The stall (`psi_memstall_enter` in the reclaim path around `schedule_timeout`) is opened when
//! the task throttles and closed at the wake, or at the timeout.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;

use crate::mmzone::ThrottleWaiter as Waiter;
pub use crate::mmzone::{ReclaimWait, ThrottleReason};

/// `reclaim_throttle`'s timeout for `reason`.
pub fn timeout_ns(reason: ThrottleReason) -> u64 {
    match reason {
        ThrottleReason::Writeback => super::THROTTLE_NS,
    }
}

/// On the queue at `now`: joined, not woken, not timed out.
fn queued(w: &Waiter, now: u64) -> bool {
    w.woken_at.is_none() && w.since <= now && now < w.until
}

/// `reclaim_throttle(pgdat, reason)` for the task of `ctx` on `node`: join the queue now and
/// return when the timeout expires. The caller makes the task sleep until then (recording the
/// sleep in `ctx.throttle_sleep_ns` or returning the time as its block's end) unless woken.
pub fn reclaim_throttle(k: &mut Kernel, ctx: &mut Ctx, node: usize, reason: ThrottleReason) -> u64 {
    let since = ctx.clock();
    let until = since + timeout_ns(reason);
    // Ends before `prepare_to_wait` find no waiter.
    crate::ext4_page_io::catch_up(k, since);
    let w = &mut k.nodes[node].reclaim_wait;
    if reason == ThrottleReason::Writeback {
        w.nr_writeback_throttled += 1;
        if w.nr_writeback_throttled == 1 {
            w.nr_reclaim_start = w.throttled_written;
        }
    }
    w.waiters.push(Waiter { task: ctx.task, reason, since, until, woken_at: None, stalled: true });
    if reason == ThrottleReason::Writeback {
        // The folio whose end satisfies `__acct_reclaim_writeback` wakes it at its instant.
        let written = w.throttled_written - w.nr_reclaim_start;
        let needed = (super::SWAP_CLUSTER_MAX * w.nr_writeback_throttled as u64 + 1).saturating_sub(written);
        crate::ext4_page_io::arm_wake(k, since, needed);
    }
    ctx.throttle_deadline = until;
    crate::psi::memstall_begin(k, ctx, since, until);
    until
}

/// `folio_end_writeback` → `acct_reclaim_writeback`: while reclaimers wait for writeback, count
/// the page, and wake the queue once more than SWAP_CLUSTER_MAX pages per waiter have been
/// written since the first of them throttled.
pub fn acct_reclaim_writeback(k: &mut Kernel, p: Pfn) {
    let node = k.node_of(p);
    let w = &mut k.nodes[node].reclaim_wait;
    let nr_throttled = w.nr_writeback_throttled as u64;
    if nr_throttled == 0 {
        return;
    }
    w.throttled_written += 1;
    if w.throttled_written - w.nr_reclaim_start > super::SWAP_CLUSTER_MAX * nr_throttled {
        wake_up(k, node, ThrottleReason::Writeback);
    }
}

/// `wake_up(&pgdat->reclaim_wait[reason])`: every waiter on the queue now leaves it and ends
/// its stall; the scheduler makes it runnable, or cuts its sleep if it is still running the
/// quantum in which it throttled.
pub fn wake_up(k: &mut Kernel, node: usize, reason: ThrottleReason) {
    let now = k.now;
    for i in 0..k.nodes[node].reclaim_wait.waiters.len() {
        let w = k.nodes[node].reclaim_wait.waiters[i];
        if w.reason != reason || !queued(&w, now) {
            continue;
        }
        let ws = &mut k.nodes[node].reclaim_wait.waiters[i];
        ws.woken_at = Some(now);
        ws.stalled = false;
        crate::psi::memstall_end(k, w.task, now);
        k.throttle_wakeups.push(w.task);
        if k.tracing {
            let rw = &k.nodes[node].reclaim_wait;
            let ev = crate::trace::Tracepoint::ThrottleWake {
                nid: node,
                nr_written: rw.throttled_written - rw.nr_reclaim_start,
                nr_throttled: rw.nr_writeback_throttled,
            };
            k.trace_at = crate::trace::TraceAt { task: w.task, cpu: 0, ns: now };
            k.trace(ev);
        }
    }
}

/// The task runs again at `now` on `cpu` (`finish_wait`): its waits end, at the wakeup or
/// at the timeout (or now, if something else woke it first), and `mm_vmscan_throttled` fires.
pub fn finish_wait(k: &mut Kernel, task: usize, cpu: u32, now: u64) {
    for node in 0..k.nodes.len() {
        let mut i = 0;
        while i < k.nodes[node].reclaim_wait.waiters.len() {
            let w = k.nodes[node].reclaim_wait.waiters[i];
            if w.task != task {
                i += 1;
                continue;
            }
            k.nodes[node].reclaim_wait.waiters.remove(i);
            if w.reason == ThrottleReason::Writeback {
                k.nodes[node].reclaim_wait.nr_writeback_throttled -= 1;
            }
            let end = w.woken_at.unwrap_or(now.min(w.until));
            if w.stalled {
                crate::psi::memstall_end(k, task, end);
            }
            if k.tracing {
                k.trace_at = crate::trace::TraceAt { task, cpu, ns: now };
                k.trace(crate::trace::Tracepoint::Throttled {
                    nid: node,
                    usec_timeout: timeout_ns(w.reason) / 1000,
                    usec_delayed: (end - w.since) / 1000,
                    reason: w.reason,
                    woken: w.woken_at.is_some(),
                });
            }
        }
    }
}

/// Stalls whose timeout has passed by `now` end there: vmlab starts a throttled task's sleep
/// when its quantum ends, the kernel's at the throttle, so its task may not have run again
/// yet, and a stall left open would hold back the pressure averages.
pub fn expire(k: &mut Kernel, now: u64) {
    for node in 0..k.nodes.len() {
        for i in 0..k.nodes[node].reclaim_wait.waiters.len() {
            let w = k.nodes[node].reclaim_wait.waiters[i];
            if w.stalled && w.until <= now {
                k.nodes[node].reclaim_wait.waiters[i].stalled = false;
                crate::psi::memstall_end(k, w.task, w.until);
            }
        }
    }
}

/// Does any node have a waiter (the scheduler's cheap test before `finish_wait`)?
pub fn any_waiter(k: &Kernel) -> bool {
    k.nodes.iter().any(|n| !n.reclaim_wait.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::ZoneType;

    fn kernel() -> Kernel {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 4096)]);
        let row =
            crate::profiles::all().into_iter().find(|p| p.engine == crate::profiles::Engine::Modern).expect("row");
        Kernel::new(row, cfg, 1).expect("kernel")
    }

    /// `n` pages of node 0 finish writeback at `at`.
    fn written(k: &mut Kernel, at: u64, n: u64) {
        k.now = at;
        let p = k.zones[k.nodes[0].zones[0]].start_pfn;
        for _ in 0..n {
            acct_reclaim_writeback(k, p);
        }
    }

    /// A task throttles at 1.5 ms of its quantum: completions before that find no waiter
    /// (prepare_to_wait had not run), and are not counted while no one waits; once enough
    /// pages finish after it joined, the wake is kept for it, ends its wait there and counts
    /// the delay, and the queue is empty after `finish_wait`.
    #[test]
    fn a_wake_after_prepare_to_wait_is_kept_one_before_is_not_seen() {
        let mut k = kernel();
        written(&mut k, 0, 100);
        assert_eq!(k.nodes[0].reclaim_wait.throttled_written, 0, "counted only while someone waits");
        let mut ctx = Ctx { task: 3, now: 1_000_000, sys_ns: 500_000, ..Default::default() };
        let until = reclaim_throttle(&mut k, &mut ctx, 0, ThrottleReason::Writeback);
        assert_eq!(until, 1_500_000 + crate::vmscan::THROTTLE_NS);
        assert_eq!(ctx.throttle_deadline, until);
        // Completions processed after the quantum began but timed before the throttle.
        written(&mut k, 1_200_000, 40);
        assert!(k.throttle_wakeups.is_empty(), "woken before it joined the queue");
        // The first completion after it joined wakes it (40 + 1 > 32 written since it began).
        written(&mut k, 2_000_000, 1);
        assert_eq!(k.throttle_wakeups, vec![3]);
        // A second wake does not wake it again: it left the queue.
        written(&mut k, 2_100_000, 40);
        assert_eq!(k.throttle_wakeups, vec![3]);
        assert_eq!(k.nodes[0].reclaim_wait.nr_writeback_throttled, 1, "counted until it runs again");
        finish_wait(&mut k, 3, 0, 3_000_000);
        assert!(k.nodes[0].reclaim_wait.is_empty());
        assert_eq!(k.nodes[0].reclaim_wait.nr_writeback_throttled, 0);
        // The memory stall ran from the throttle to the wake, not to the timeout.
        let mut psi = k.psi.clone();
        psi.finish(1_000_000_000);
        assert_eq!(psi.some_total_ns, 500_000);
    }

    /// Two waiters: the wake needs more than 32 pages per waiter since the first throttled.
    #[test]
    fn the_wake_needs_a_batch_per_waiter() {
        let mut k = kernel();
        let mut a = Ctx { task: 1, now: 0, ..Default::default() };
        let mut b = Ctx { task: 2, now: 10, ..Default::default() };
        reclaim_throttle(&mut k, &mut a, 0, ThrottleReason::Writeback);
        reclaim_throttle(&mut k, &mut b, 0, ThrottleReason::Writeback);
        written(&mut k, 100, 64);
        assert!(k.throttle_wakeups.is_empty(), "64 pages is not more than 2 × 32");
        written(&mut k, 100, 1);
        assert_eq!(k.throttle_wakeups, vec![1, 2]);
    }

    /// A wait that is not woken ends at its timeout: a task that runs later still stalled only
    /// the timeout, and a wake after the timeout does not reach it.
    #[test]
    fn an_unwoken_wait_ends_at_its_timeout() {
        let mut k = kernel();
        let mut ctx = Ctx { task: 1, now: 0, ..Default::default() };
        let until = reclaim_throttle(&mut k, &mut ctx, 0, ThrottleReason::Writeback);
        written(&mut k, until, 40);
        assert!(k.throttle_wakeups.is_empty());
        expire(&mut k, until + 1);
        assert!(!k.nodes[0].reclaim_wait.waiters[0].stalled);
        finish_wait(&mut k, 1, 0, until + 5_000_000);
        assert!(k.nodes[0].reclaim_wait.is_empty());
        let mut psi = k.psi.clone();
        psi.finish(1_000_000_000);
        assert_eq!(psi.some_total_ns, crate::vmscan::THROTTLE_NS);
    }
}
