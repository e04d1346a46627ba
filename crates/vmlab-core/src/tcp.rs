//! TCP send-side memory (`net/ipv4/tcp.c` `tcp_sendmsg`, `tcp_clean_rtx_queue`, 2.6.36). A
//! write to a TCP socket copies the user's bytes into whole pages that the socket allocates
//! one at a time (`sk_stream_alloc_page`: `alloc_pages(sk->sk_allocation, 0)`, GFP_KERNEL, so
//! unmovable) and hangs on the skbs of its write queue; a page goes back to the allocator only
//! when the client has acknowledged all the data in it. Such pages are in no /proc/meminfo
//! field (sockstat's "TCP mem" counts them), and a server writing to slow clients keeps
//! thousands of them pinned for seconds, allocated interleaved with its page cache.
//!
//! A client is modelled by the rate at which it acknowledges (`send … rate=`): the socket's
//! queue drains in order at that rate, and `tcp_sendmsg` waits (`sk_stream_wait_memory`)
//! while the queue holds `sndbuf` bytes. Every task has one socket.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;
use crate::page_alloc::Gfp;
use crate::sched::Outcome;
use crate::stats::kfunc::KFunc;
use crate::workload::syscalls::Progress;

const PAGE: u64 = 4096;

#[derive(Default)]
pub struct Tcp {
    /// Per task: when its client will have acknowledged everything queued so far.
    acked_at: Vec<u64>,
    /// Per task, the pages on its socket's write queue: (acknowledged at, queue order, page).
    /// A client acknowledges in order, so each queue is sorted.
    queues: Vec<VecDeque<(u64, u64, Pfn)>>,
    /// The head of every non-empty queue, (acknowledged at, queue order, task), soonest first:
    /// the pages are freed in (time, queue order) across sockets, from a heap of one entry per
    /// socket rather than one per page.
    heads: BinaryHeap<Reverse<(u64, u64, usize)>>,
    seq: u64,
    /// The time an ACK timer is armed for (the scheduler's `TcpAck` event), if any.
    pub armed: Option<u64>,
    /// Pages allocated for write queues, and writes that waited for an allocation.
    pub pages_sent: u64,
    pub alloc_waits: u64,
}

impl Tcp {
    /// The earliest acknowledgement still to come, when no timer is armed for it yet.
    pub fn timer_due(&self) -> Option<u64> {
        let Reverse((t, _, _)) = *self.heads.peek()?;
        match self.armed {
            Some(a) if a <= t => None,
            _ => Some(t),
        }
    }
}

/// `tcp_sendmsg` for task `task`: queue pages of `*left` bytes until the socket's `sndbuf` is
/// full (then wait until the client has made room) or the quantum is spent.
pub fn tcp_sendmsg(k: &mut Kernel, ctx: &mut Ctx, task: usize, left: &mut u64, rate: u64, sndbuf: u64) -> Progress {
    let rate = rate.max(1);
    let per_page = PAGE.saturating_mul(1_000_000_000) / rate;
    if k.tcp.acked_at.len() <= task {
        k.tcp.acked_at.resize(task + 1, 0);
        k.tcp.queues.resize_with(task + 1, VecDeque::new);
    }
    while *left > 0 {
        if ctx.sys_ns + ctx.user_ns >= crate::sched::QUANTUM_NS {
            return Progress::Preempted;
        }
        let now = ctx.clock();
        let acked = k.tcp.acked_at[task].max(now);
        // Bytes the client has not acknowledged yet; a full page must still fit in sndbuf
        // (sk_stream_memory_free), else wait until the client has taken enough.
        let unacked = ((acked - now) as u128 * rate as u128 / 1_000_000_000) as u64;
        if unacked + PAGE > sndbuf.max(PAGE) {
            let room_at = acked - (sndbuf.max(PAGE) - PAGE) * 1_000_000_000 / rate;
            return Progress::Block(Outcome::Block { until: Some(room_at.max(now + 1)), io: false });
        }
        let p = match k.alloc_pages(ctx, Gfp::kernel(), 0) {
            Ok(p) => p,
            Err(_) => {
                k.tcp.alloc_waits += 1;
                return Progress::Block(Outcome::Block {
                    until: Some(crate::oom_kill::alloc_retry_at(ctx)),
                    io: false,
                });
            }
        };
        k.charge(ctx, KFunc::CopyUserGeneric, k.cost.copy_user_page);
        k.g.sock += 1;
        let at = acked + per_page;
        k.tcp.acked_at[task] = at;
        k.tcp.seq += 1;
        let seq = k.tcp.seq;
        let q = &mut k.tcp.queues[task];
        if q.is_empty() {
            k.tcp.heads.push(Reverse((at, seq, task)));
        }
        q.push_back((at, seq, p));
        k.tcp.pages_sent += 1;
        *left = left.saturating_sub(PAGE);
    }
    Progress::Done
}

/// `tcp_clean_rtx_queue` from the ACK's receive softirq: free the pages whose data the clients
/// have acknowledged by `ctx.now` (`sk_wmem_free_skb` → `put_page`, a hot order-0 free).
pub fn tcp_clean_rtx_queue(k: &mut Kernel, ctx: &mut Ctx) {
    if k.tcp.armed.is_some_and(|a| a <= ctx.now) {
        k.tcp.armed = None;
    }
    while let Some(&Reverse((t, _, task))) = k.tcp.heads.peek() {
        if t > ctx.now {
            break;
        }
        k.tcp.heads.pop();
        let q = &mut k.tcp.queues[task];
        let (_, _, p) = q.pop_front().expect("a head is a queued page");
        match q.front() {
            Some(&(at, seq, _)) => k.tcp.heads.push(Reverse((at, seq, task))),
            // A finished session's queue keeps no memory.
            None => *q = VecDeque::new(),
        }
        k.g.sock -= 1;
        k.free_pages(ctx, p, 0);
    }
}
