//! 2.4.22+'s `elevator_linus` (drivers/block/elevator.c, include/linux/elevator.h as of
//! io-stalls-10, merged in 2.4.22-pre3): where a request that merged with nothing goes in a
//! queue. Only the requests a plugged queue holds are modelled as a list (plug.rs [`Held`]);
//! a queue that is not plugged has handed its requests to the device in arrival order.

use super::Held;
use std::collections::VecDeque;

/// `ELV_LINUS_SEEK_COST`: what each request behind a new one's place loses of its budget
/// (1 since io-stalls-10; 16 before).
const SEEK_COST: i32 = 1;

/// The elevator's two budgets (`elvtune -r`, `-w`): how many times a request may be passed
/// (`elevator_sequence`, set from `elevator_request_latency` in `__make_request`), a read's
/// lower than a write's.
#[derive(Debug, Clone, Copy)]
pub struct ElevatorLinus {
    pub read_latency: i32,
    pub write_latency: i32,
}

impl ElevatorLinus {
    /// `elevator_linus_merge` for a request at `offset` that merged with nothing, then
    /// `add_request` at the place it found: the scan goes from the queue's tail towards its
    /// head and stops at the first request whose budget is used up (nothing goes ahead of
    /// it); the new request goes after the first one, from the tail, it sorts between
    /// (`bh_rq_in_between`), else at the tail. Every request it is put ahead of loses
    /// [`SEEK_COST`]. Returns its index. `read_latency` / `write_latency` are its own budget.
    pub fn add_request(&self, held: &mut VecDeque<Held>, mut rq: Held) -> usize {
        let mut at = held.len();
        for i in (0..held.len()).rev() {
            if held[i].seq <= 0 {
                break;
            }
            if in_between(held, i, rq.offset) {
                at = i + 1;
                break;
            }
        }
        for h in held.range_mut(at..) {
            h.seq -= SEEK_COST;
        }
        rq.seq = if rq.write { self.write_latency } else { self.read_latency };
        held.insert(at, rq);
        at
    }
}

/// `bh_rq_in_between`: whether a buffer at `offset` belongs right after `held[i]`: between it
/// and the next request in sector order, or at a point where the order turns back (the
/// elevator's next sweep begins), when it is past the first or before the second.
fn in_between(held: &VecDeque<Held>, i: usize, offset: u64) -> bool {
    let Some(next) = held.get(i + 1) else { return false };
    let (rq, next) = (held[i].offset, next.offset);
    if offset < next && offset > rq {
        return true;
    }
    if next > rq {
        return false;
    }
    offset > rq || offset < next
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const ELV: ElevatorLinus = ElevatorLinus { read_latency: 128, write_latency: 512 };

    fn rq(offset: u64, write: bool) -> Held {
        Held { offset, bytes: 64 * KIB, segs: 16, since: 0, pages: Vec::new(), write, seq: 0 }
    }

    fn offsets(q: &VecDeque<Held>) -> Vec<u64> {
        q.iter().map(|h| h.offset / KIB).collect()
    }

    #[test]
    fn a_read_goes_between_the_writes_it_sorts_between_and_they_lose_a_passover() {
        let mut q = VecDeque::new();
        for i in 0..4 {
            ELV.add_request(&mut q, rq(i * 1024 * KIB, true));
        }
        assert_eq!(ELV.add_request(&mut q, rq(1536 * KIB, false)), 2);
        assert_eq!(offsets(&q), [0, 1024, 1536, 2048, 3072]);
        let seqs: Vec<i32> = q.iter().map(|h| h.seq).collect();
        assert_eq!(seqs, [512, 512, 128, 511, 511]);
    }

    #[test]
    fn a_read_past_every_write_or_before_them_all_goes_to_the_tail() {
        let mut q = VecDeque::new();
        for i in 1..4 {
            ELV.add_request(&mut q, rq(i * 1024 * KIB, true));
        }
        assert_eq!(ELV.add_request(&mut q, rq(9000 * KIB, false)), 3);
        // Before them all: it sorts between no pair either, so it goes to the tail too,
        // where the order now turns back (the elevator's next sweep).
        assert_eq!(ELV.add_request(&mut q, rq(8 * KIB, false)), 4);
        assert_eq!(offsets(&q), [1024, 2048, 3072, 9000, 8]);
        assert!(q.iter().all(|h| h.seq == if h.write { 512 } else { 128 }));
        // A third goes at that turn: after the read at 9000, before the one at 8.
        assert_eq!(ELV.add_request(&mut q, rq(9500 * KIB, false)), 4);
        assert_eq!(offsets(&q), [1024, 2048, 3072, 9000, 9500, 8]);
    }

    #[test]
    fn a_request_passed_latency_times_is_not_passed_again() {
        let elv = ElevatorLinus { read_latency: 2, write_latency: 3 };
        let mut q = VecDeque::new();
        elv.add_request(&mut q, rq(0, true));
        elv.add_request(&mut q, rq(10_000 * KIB, true));
        // Three reads sort between the two writes: each passes the write at 10,000 KiB.
        for k in 1..=3 {
            let at = elv.add_request(&mut q, rq(k * 100 * KIB, false));
            assert_eq!(at, k as usize, "read {k}");
        }
        assert_eq!(q.back().unwrap().seq, 0);
        // Its budget is used up: the fourth may not go ahead of it, and waits at the tail.
        assert_eq!(elv.add_request(&mut q, rq(5000 * KIB, false)), 5);
        assert_eq!(offsets(&q), [0, 100, 200, 300, 10_000, 5000]);
        // Each read went behind the ones before it: only the far write was passed.
        let seqs: Vec<i32> = q.iter().map(|h| h.seq).collect();
        assert_eq!(seqs, [3, 2, 2, 2, 0, 2]);
    }
}
