//! The scheduler's pending events in expiry order (`lib/timerqueue.c` keeps the kernel's hrtimers
//! in an rbtree by expiry; here a 4-ary heap): served by (time, push order), so ties go first-in
//! first-out, exactly as a binary heap of `(time, seq, event)` serves them.
//!
//! Why not `BinaryHeap<(u64, u64, Event)>`: that was a tenth of a file-heavy run's host time, its
//! 40-byte entries spread over more cache lines than the walk down can afford. Here the heap holds
//! 16-byte keys only, (time, seq << SLOT_BITS | slot), four children to a node, so a level's
//! siblings share about one cache line and the walk is half as deep; the payloads stay put in
//! `items`, found by the slot in the key's low bits.

/// Bits of a key's second word that name the payload's slot; the push number has the rest.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
const ARITY: usize = 4;

#[derive(Clone, Debug)]
pub struct TimerQueue<T: Copy> {
    keys: Vec<(u64, u64)>,
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T: Copy> Default for TimerQueue<T> {
    fn default() -> Self {
        TimerQueue { keys: Vec::new(), items: Vec::new(), free: Vec::new() }
    }
}

impl<T: Copy> TimerQueue<T> {
    /// Queue `item` for time `t`; `seq` is its push number, unique and increasing (the tie-break).
    pub fn push(&mut self, t: u64, seq: u64, item: T) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.items[s as usize] = item;
                s as u64
            }
            None => {
                self.items.push(item);
                self.items.len() as u64 - 1
            }
        };
        assert!(
            slot <= SLOT_MASK && seq < 1 << (64 - SLOT_BITS),
            "timer queue: more than 2^24 pending events or 2^40 pushes"
        );
        let key = (t, seq << SLOT_BITS | slot);
        let mut i = self.keys.len();
        self.keys.push(key);
        while i > 0 {
            let p = (i - 1) / ARITY;
            if key >= self.keys[p] {
                break;
            }
            self.keys[i] = self.keys[p];
            i = p;
        }
        self.keys[i] = key;
    }

    /// The soonest (time, seq), if any.
    pub fn peek(&self) -> Option<(u64, u64)> {
        self.keys.first().map(|&(t, s)| (t, s >> SLOT_BITS))
    }

    pub fn pop(&mut self) -> Option<(u64, T)> {
        let (t, s) = *self.keys.first()?;
        let last = self.keys.pop().expect("not empty");
        let n = self.keys.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let c = ARITY * i + 1;
                if c >= n {
                    break;
                }
                let mut m = c;
                for j in c + 1..(c + ARITY).min(n) {
                    if self.keys[j] < self.keys[m] {
                        m = j;
                    }
                }
                if self.keys[m] >= last {
                    break;
                }
                self.keys[i] = self.keys[m];
                i = m;
            }
            self.keys[i] = last;
        }
        let slot = (s & SLOT_MASK) as u32;
        self.free.push(slot);
        Some((t, self.items[slot as usize]))
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Served in the order a binary heap of (time, push number, item) serves, ties included,
    /// through growth, drains and slot reuse.
    #[test]
    fn pops_in_time_then_push_order() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut q, mut r) = (TimerQueue::default(), BinaryHeap::new());
        let (mut seq, mut now) = (0u64, 0u64);
        for round in 0..200_000u64 {
            // Phases that grow the queue, drain it, and hover around a size.
            let push_p = match (round / 20_000) % 3 {
                0 => 70,
                1 => 30,
                _ => 50,
            };
            if rnd() % 100 < push_p || r.is_empty() {
                seq += 1;
                // Coarse times, so that ties happen.
                let t = now + rnd() % 8;
                let item = rnd() as u32;
                q.push(t, seq, item);
                r.push(Reverse((t, seq, item)));
            } else {
                let Reverse((t, s, item)) = r.pop().expect("not empty");
                assert_eq!(q.peek(), Some((t, s)));
                assert_eq!(q.pop(), Some((t, item)));
                now = t;
            }
            assert_eq!(q.len(), r.len());
        }
        while let Some(Reverse((t, _, item))) = r.pop() {
            assert_eq!(q.pop(), Some((t, item)));
        }
        assert!(q.is_empty() && q.pop().is_none() && q.peek().is_none());
    }
}
