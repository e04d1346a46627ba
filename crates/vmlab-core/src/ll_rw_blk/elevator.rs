//! 2.4.22+'s `elevator_linus` (drivers/block/elevator.c, include/linux/elevator.h as of
//! io-stalls-10, merged in 2.4.22-pre3; the scan read whole in `iPodLinux/linux-2.4.32-ipod`):
//! where a request that merged with nothing goes in a queue, and ([`linus_merge`]) the merges
//! at the back or front of any listed request. Without a driver depth only the requests a
//! plugged queue holds are a list (plug.rs [`Held`]), placed by [`ElevatorLinus::add_request`];
//! with one (mod.rs) every request the driver has not taken is.

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

/// Where `__make_request` puts a buffer on a queue whose requests stay listed until the driver
/// takes them (`ll_rw_blk::Queue` with a driver depth): merged at the back or the front of the
/// listed request at an index, or a new request at an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Back(usize),
    Front(usize),
    New(usize),
}

/// `elevator_linus_merge` in full (drivers/block/elevator.c, 2.4.22+; `elv` None:
/// `elevator_noop_merge`), for a buffer at `offset` of `bytes` in direction `write`: the scan
/// goes from the tail towards the head and ends after a request whose budget is used up
/// (`backmerge_only`: that one still takes a back merge, nothing goes ahead of it); the first
/// request from the tail the buffer sorts after is the new request's place; a request of the
/// same direction that stays within `max_bytes` (`max_sectors`) and ends where the buffer
/// begins takes it at its back, one that begins where the buffer ends at its front (and loses
/// one of its budget). Every request behind the place loses 1 for a merge, [`SEEK_COST`] for a
/// new request. `fits`: whether a merged extent stays where the device moves it in one piece.
/// The budgets of the requests are updated; the caller merges or inserts. `merge_only`: a
/// scan for a merge before the new request's place is wanted (the costs of a place are left
/// to the scan that inserts it).
#[allow(clippy::too_many_arguments)]
pub fn linus_merge(
    elv: Option<&ElevatorLinus>,
    held: &mut VecDeque<Held>,
    offset: u64,
    bytes: u64,
    write: bool,
    max_bytes: u64,
    fits: impl Fn(u64, u64) -> bool,
    merge_only: bool,
) -> Place {
    let mergeable = |h: &Held| h.write == write && h.bytes + bytes <= max_bytes;
    if elv.is_none() {
        for i in (0..held.len()).rev() {
            let h = &held[i];
            if mergeable(h) && h.offset + h.bytes == offset && fits(h.offset, h.bytes + bytes) {
                return Place::Back(i);
            }
            if mergeable(h) && h.offset == offset + bytes && fits(offset, h.bytes + bytes) {
                return Place::Front(i);
            }
        }
        return Place::New(held.len());
    }
    let (mut place, mut merge) = (None, None);
    let mut backmerge_only = false;
    for i in (0..held.len()).rev() {
        if backmerge_only {
            break;
        }
        backmerge_only = held[i].seq <= 0;
        if place.is_none() && !backmerge_only && in_between(held, i, offset) {
            place = Some(i);
        }
        let h = &held[i];
        if !mergeable(h) {
            continue;
        }
        if h.offset + h.bytes == offset && fits(h.offset, h.bytes + bytes) {
            merge = Some(Place::Back(i));
            break;
        }
        if h.offset == offset + bytes && !backmerge_only && fits(offset, h.bytes + bytes) {
            held[i].seq -= 1;
            merge = Some(Place::Front(i));
            break;
        }
    }
    let (at, cost) = match merge {
        Some(Place::Back(i) | Place::Front(i)) => (i, 1),
        _ => (place.map_or(held.len(), |i| i), SEEK_COST),
    };
    if merge.is_some() || (place.is_some() && !merge_only) {
        for h in held.range_mut(at + 1..) {
            h.seq -= cost;
        }
    }
    merge.unwrap_or(Place::New(place.map_or(held.len(), |i| i + 1)))
}

/// `attempt_merge` after a merge into `held[i]`: it and the request after it become one when
/// they now touch, are of one direction and stay within `max_bytes`; the merged one keeps the
/// smaller budget (`elevator_linus_merge_req`) and the earlier start. True if they merged.
pub fn attempt_merge(held: &mut VecDeque<Held>, i: usize, max_bytes: u64, fits: impl Fn(u64, u64) -> bool) -> bool {
    let (Some(a), Some(b)) = (held.get(i), held.get(i + 1)) else { return false };
    if a.offset + a.bytes != b.offset || a.write != b.write || a.bytes + b.bytes > max_bytes {
        return false;
    }
    if !fits(a.offset, a.bytes + b.bytes) {
        return false;
    }
    let b = held.remove(i + 1).expect("next");
    let a = &mut held[i];
    a.bytes += b.bytes;
    a.segs += b.segs;
    a.since = a.since.min(b.since);
    a.seq = a.seq.min(b.seq);
    a.pages.extend_from_slice(&b.pages);
    true
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

    fn any(_: u64, _: u64) -> bool {
        true
    }

    #[test]
    fn a_buffer_merges_into_any_listed_request_and_the_requests_it_then_touches_become_one() {
        let max = 64 * KIB;
        let mut q: VecDeque<Held> =
            [0, 100, 200].iter().map(|&k| Held { bytes: 28 * KIB, ..rq(k * KIB, true) }).collect();
        for h in &mut q {
            h.seq = 512;
        }
        // At the back of the first (not the last listed): a merge, and those behind it lose 1.
        let p = linus_merge(Some(&ELV), &mut q, 28 * KIB, 4 * KIB, true, max, any, false);
        assert_eq!(p, Place::Back(0));
        assert_eq!(q.iter().map(|h| h.seq).collect::<Vec<_>>(), [512, 511, 511]);
        // In front of the third, which loses one more for it.
        assert_eq!(linus_merge(Some(&ELV), &mut q, 196 * KIB, 4 * KIB, true, max, any, false), Place::Front(2));
        assert_eq!(q[2].seq, 510);
        // A read merges with no write, and over `max_sectors` nothing merges: each would be a
        // new request where it sorts (a scan for a merge only charges no passes for that).
        assert_eq!(linus_merge(Some(&ELV), &mut q, 28 * KIB, 4 * KIB, false, max, any, true), Place::New(1));
        assert_eq!(linus_merge(Some(&ELV), &mut q, 128 * KIB, 40 * KIB, true, max, any, true), Place::New(2));
        assert_eq!(q.iter().map(|h| h.seq).collect::<Vec<_>>(), [512, 511, 510]);
        // Two listed requests that touch after a merge become one, with the smaller budget.
        (q[0].offset, q[0].bytes) = (64 * KIB, 36 * KIB);
        q[1] = Held { offset: 100 * KIB, bytes: 28 * KIB, seq: 7, ..rq(0, true) };
        assert!(attempt_merge(&mut q, 0, max, any));
        assert_eq!((q.len(), q[0].offset, q[0].bytes, q[0].seq), (2, 64 * KIB, 64 * KIB, 7));
    }

    #[test]
    fn past_a_used_up_request_only_a_back_merge_into_it_is_left() {
        let mut q: VecDeque<Held> = [0, 1000, 2000].iter().map(|&k| rq(k * KIB, true)).collect();
        q[1].seq = 0;
        q[0].seq = 512;
        q[2].seq = 512;
        // The request at 0 is ahead of the used-up one: the scan never reaches it.
        assert_eq!(linus_merge(Some(&ELV), &mut q, 64 * KIB, 4 * KIB, true, 128 * KIB, any, false), Place::New(3));
        // The used-up one still takes a buffer at its back, not at its front.
        assert_eq!(linus_merge(Some(&ELV), &mut q, 1064 * KIB, 4 * KIB, true, 128 * KIB, any, false), Place::Back(1));
        assert_eq!(linus_merge(Some(&ELV), &mut q, 996 * KIB, 4 * KIB, true, 128 * KIB, any, true), Place::New(3));
        // Without the elevator (`elevator_noop_merge`) any listed request takes a merge.
        assert_eq!(linus_merge(None, &mut q, 64 * KIB, 4 * KIB, true, 128 * KIB, any, false), Place::Back(0));
    }
}
