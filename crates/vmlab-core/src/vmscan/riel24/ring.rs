//! The 2.4 active and inactive_dirty lists as a chunked ring.
//!
//! The kernel keeps them as doubly-linked lists and scans from the tail, moving a page it keeps
//! to the head. Moving the tail page to the head of a list is the same as advancing a cursor
//! round a ring, so here a list is a ring of pages with a cursor at the tail: "keep" advances the
//! cursor, "take" removes the page under it, and a new page goes in just behind the cursor (the
//! head). The ring is stored as a cycle of small arrays (chunks) so that a scan can step over a
//! whole chunk in one move when nothing in it would change: every chunk counts, per zone, its
//! pages and its "hot" pages (pages whose next visit would change something, as the engine
//! defines it). The order of visits, and what each visit finds, is exactly the linked list's;
//! only the work of walking pages that a visit leaves untouched is saved.
//!
//! While a page is on a ring, `fr.links[p].next` holds its chunk and `fr.links[p].prev` its index there.

use crate::mm_types::{Frames, Pfn};

const NONE: u32 = u32::MAX;
const TOMB: u32 = u32::MAX;
const HOT: u32 = 1 << 31;
/// Pages per chunk: small enough that a chunk with one page to act on is cheap to walk, large
/// enough that stepping over chunks is cheap.
pub const CHUNK: usize = 64;

#[derive(Clone, Debug, Default)]
struct Chunk {
    next: u32,
    prev: u32,
    e: Vec<u32>,
    live: u32,
    tombs: u32,
}

#[derive(Clone, Debug)]
pub struct Ring {
    ch: Vec<Chunk>,
    free: Vec<u32>,
    cur: u32,
    idx: u32,
    len: u64,
    /// End pfn of each zone (zone index = position).
    zone_end: Vec<u32>,
    nz: usize,
    zlive: Vec<u32>,
    zhot: Vec<u32>,
}

impl Default for Ring {
    fn default() -> Self {
        Ring::new(Vec::new())
    }
}

impl Ring {
    pub fn new(zone_end: Vec<u32>) -> Ring {
        let nz = zone_end.len().max(1);
        Ring {
            ch: Vec::new(),
            free: Vec::new(),
            cur: NONE,
            idx: 0,
            len: 0,
            zone_end,
            nz,
            zlive: Vec::new(),
            zhot: Vec::new(),
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn zone(&self, p: Pfn) -> usize {
        let mut z = 0;
        while z + 1 < self.zone_end.len() && p >= self.zone_end[z] {
            z += 1;
        }
        z
    }

    fn alloc_chunk(&mut self) -> u32 {
        if let Some(c) = self.free.pop() {
            return c;
        }
        let c = self.ch.len() as u32;
        self.ch.push(Chunk { next: c, prev: c, e: Vec::with_capacity(CHUNK), live: 0, tombs: 0 });
        self.zlive.resize(self.ch.len() * self.nz, 0);
        self.zhot.resize(self.ch.len() * self.nz, 0);
        c
    }

    /// Insert chunk `n` right after `a` in the cycle.
    fn link_after(&mut self, a: u32, n: u32) {
        let nx = self.ch[a as usize].next;
        self.ch[n as usize].prev = a;
        self.ch[n as usize].next = nx;
        self.ch[a as usize].next = n;
        self.ch[nx as usize].prev = n;
    }

    fn free_chunk(&mut self, c: u32) {
        let (pv, nx) = (self.ch[c as usize].prev, self.ch[c as usize].next);
        self.ch[pv as usize].next = nx;
        self.ch[nx as usize].prev = pv;
        let k = &mut self.ch[c as usize];
        debug_assert_eq!(k.live, 0);
        k.e.clear();
        k.tombs = 0;
        k.next = c;
        k.prev = c;
        self.free.push(c);
    }

    #[inline]
    fn count(&mut self, c: u32, p: Pfn, hot: bool, add: bool) {
        let i = c as usize * self.nz + self.zone(p);
        if add {
            self.zlive[i] += 1;
            self.zhot[i] += hot as u32;
        } else {
            self.zlive[i] -= 1;
            self.zhot[i] -= hot as u32;
        }
    }

    fn append(&mut self, fr: &mut Frames, c: u32, v: u32) {
        let p = v & !HOT;
        let k = &mut self.ch[c as usize];
        fr.links[p as usize].next = c;
        fr.links[p as usize].prev = k.e.len() as u32;
        k.e.push(v);
        k.live += 1;
        self.count(c, p, v & HOT != 0, true);
    }

    /// Put `p` at the head: just behind the cursor.
    pub fn push_head(&mut self, fr: &mut Frames, p: Pfn, hot: bool) {
        let v = p | if hot { HOT } else { 0 };
        if self.cur == NONE {
            let c = self.alloc_chunk();
            self.cur = c;
            self.idx = 0;
            self.append(fr, c, v);
            self.len = 1;
            return;
        }
        if self.idx > 0 {
            self.split_at_cursor(fr);
        }
        let mut t = self.ch[self.cur as usize].prev;
        if self.ch[t as usize].e.len() >= CHUNK {
            let n = self.alloc_chunk();
            self.link_after(t, n);
            t = n;
        }
        self.append(fr, t, v);
        self.len += 1;
    }

    /// Move the entries from the cursor on into a new chunk after the cursor's, so that the
    /// cursor sits at the start of a chunk.
    fn split_at_cursor(&mut self, fr: &mut Frames) {
        let c = self.cur;
        let n = self.alloc_chunk();
        let at = self.idx as usize;
        let moved: Vec<u32> = self.ch[c as usize].e.drain(at..).collect();
        for v in moved {
            if v == TOMB {
                self.ch[c as usize].tombs -= 1;
                continue;
            }
            let p = v & !HOT;
            self.ch[c as usize].live -= 1;
            self.count(c, p, v & HOT != 0, false);
            self.append(fr, n, v);
        }
        self.link_after(c, n);
        self.cur = n;
        self.idx = 0;
        if self.ch[c as usize].live == 0 {
            self.free_chunk(c);
        }
    }

    /// Take `p` off the ring wherever it is; returns whether it was counted hot.
    pub fn remove(&mut self, fr: &mut Frames, p: Pfn) -> bool {
        let c = fr.links[p as usize].next;
        let i = fr.links[p as usize].prev as usize;
        let v = self.ch[c as usize].e[i];
        debug_assert_eq!(v & !HOT, p, "ring position of pfn {p} is stale");
        let hot = v & HOT != 0;
        let k = &mut self.ch[c as usize];
        k.e[i] = TOMB;
        k.tombs += 1;
        k.live -= 1;
        let (live, len) = (k.live, k.e.len());
        self.count(c, p, hot, false);
        self.len -= 1;
        if live == 0 {
            let nx = self.ch[c as usize].next;
            let was_cur = c == self.cur;
            self.free_chunk(c);
            if self.len == 0 {
                self.cur = NONE;
                self.idx = 0;
            } else if was_cur {
                self.cur = nx;
                self.idx = 0;
                self.normalize(fr);
            }
        } else if c == self.cur {
            if i == self.idx as usize {
                self.normalize(fr);
            }
        } else if self.ch[c as usize].tombs as usize * 2 > len && len >= 8 {
            self.compact(fr, c);
        }
        hot
    }

    pub fn hot(&self, fr: &Frames, p: Pfn) -> bool {
        let c = fr.links[p as usize].next;
        self.ch[c as usize].e[fr.links[p as usize].prev as usize] & HOT != 0
    }

    /// Record whether `p`'s next visit would change anything.
    pub fn set_hot(&mut self, fr: &Frames, p: Pfn, hot: bool) {
        let c = fr.links[p as usize].next;
        let i = fr.links[p as usize].prev as usize;
        let v = self.ch[c as usize].e[i];
        debug_assert_eq!(v & !HOT, p);
        if (v & HOT != 0) != hot {
            self.ch[c as usize].e[i] = v ^ HOT;
            let j = c as usize * self.nz + self.zone(p);
            if hot {
                self.zhot[j] += 1;
            } else {
                self.zhot[j] -= 1;
            }
        }
    }

    /// The page under the cursor (the tail), and its hot mark.
    #[inline]
    pub fn peek(&self) -> Option<(Pfn, bool)> {
        if self.cur == NONE {
            return None;
        }
        let v = self.ch[self.cur as usize].e[self.idx as usize];
        Some((v & !HOT, v & HOT != 0))
    }

    /// Keep the page under the cursor: it becomes the head.
    #[inline]
    pub fn keep(&mut self, fr: &mut Frames) {
        self.idx += 1;
        self.normalize(fr);
    }

    /// Remove the page under the cursor.
    pub fn take(&mut self, fr: &mut Frames) -> Option<Pfn> {
        let (p, _) = self.peek()?;
        self.remove(fr, p);
        Some(p)
    }

    /// Step over up to `max` pages from the cursor if the cursor's chunk holds nothing a visit
    /// would change: `inert(zone, pages, hot_pages)` decides for each zone present. Returns the
    /// number of pages stepped over (kept), 0 if the chunk must be walked page by page.
    pub fn skip(&mut self, fr: &mut Frames, max: u64, inert: impl Fn(usize, u32, u32) -> bool) -> u64 {
        if self.cur == NONE || max == 0 {
            return 0;
        }
        let c = self.cur as usize;
        if self.ch[c].tombs > 0 {
            return 0;
        }
        let base = c * self.nz;
        for z in 0..self.nz {
            let l = self.zlive[base + z];
            if l > 0 && !inert(z, l, self.zhot[base + z]) {
                return 0;
            }
        }
        let n = ((self.ch[c].e.len() - self.idx as usize) as u64).min(max);
        self.idx += n as u32;
        self.normalize(fr);
        n
    }

    /// Make the cursor point at a live entry, leaving finished chunks behind.
    fn normalize(&mut self, fr: &mut Frames) {
        loop {
            if self.cur == NONE {
                return;
            }
            let c = self.cur;
            let e = &self.ch[c as usize].e;
            let i = self.idx as usize;
            if i < e.len() {
                if e[i] != TOMB {
                    return;
                }
                self.idx += 1;
                continue;
            }
            self.cur = self.ch[c as usize].next;
            self.idx = 0;
            self.leave(fr, c);
        }
    }

    /// The cursor has just left chunk `c`: tidy it (drop removed entries, merge it into the
    /// chunk before it when both are small). Order is unchanged.
    fn leave(&mut self, fr: &mut Frames, c: u32) {
        if self.ch[c as usize].tombs > 0 {
            self.compact(fr, c);
        }
        if c == self.cur {
            return;
        }
        let p = self.ch[c as usize].prev;
        if p == c || self.ch[p as usize].tombs > 0 {
            return;
        }
        if self.ch[p as usize].e.len() + self.ch[c as usize].live as usize > CHUNK {
            return;
        }
        let moved = std::mem::take(&mut self.ch[c as usize].e);
        for &v in &moved {
            let q = v & !HOT;
            self.count(c, q, v & HOT != 0, false);
            self.append(fr, p, v);
        }
        self.ch[c as usize].live = 0;
        let mut moved = moved;
        moved.clear();
        self.ch[c as usize].e = moved;
        self.free_chunk(c);
    }

    /// Drop the removed entries of chunk `c`, keeping the cursor on the same page.
    fn compact(&mut self, fr: &mut Frames, c: u32) {
        let k = &mut self.ch[c as usize];
        let mut w = 0usize;
        let mut new_idx = self.idx;
        for r in 0..k.e.len() {
            let v = k.e[r];
            if c == self.cur && r == self.idx as usize {
                new_idx = w as u32;
            }
            if v == TOMB {
                continue;
            }
            k.e[w] = v;
            fr.links[(v & !HOT) as usize].prev = w as u32;
            w += 1;
        }
        k.e.truncate(w);
        k.tombs = 0;
        if c == self.cur {
            self.idx = new_idx;
        }
    }

    /// Pages from the cursor round the ring (tests and checks).
    pub fn walk(&self) -> Vec<Pfn> {
        let mut out = Vec::new();
        if self.cur == NONE {
            return out;
        }
        let start = self.cur;
        let mut c = start;
        let mut first = true;
        loop {
            let e = &self.ch[c as usize].e;
            let from = if first { self.idx as usize } else { 0 };
            out.extend(e[from..].iter().filter(|&&v| v != TOMB).map(|&v| v & !HOT));
            first = false;
            c = self.ch[c as usize].next;
            if c == start {
                break;
            }
        }
        out.extend(self.ch[start as usize].e[..self.idx as usize].iter().filter(|&&v| v != TOMB).map(|&v| v & !HOT));
        out
    }

    /// Check positions and counts against the entries (tests; slow).
    pub fn check(&self, fr: &Frames) -> Result<(), String> {
        if self.cur == NONE {
            return if self.len == 0 { Ok(()) } else { Err(format!("empty ring with len {}", self.len)) };
        }
        let mut total = 0u64;
        let mut c = self.cur;
        loop {
            let k = &self.ch[c as usize];
            let mut live = 0;
            let mut tombs = 0;
            let mut zl = vec![0u32; self.nz];
            let mut zh = vec![0u32; self.nz];
            for (i, &v) in k.e.iter().enumerate() {
                if v == TOMB {
                    tombs += 1;
                    continue;
                }
                let p = v & !HOT;
                if fr.links[p as usize].next != c || fr.links[p as usize].prev as usize != i {
                    return Err(format!(
                        "pfn {p} at chunk {c} index {i} has position ({}, {})",
                        fr.links[p as usize].next, fr.links[p as usize].prev
                    ));
                }
                live += 1;
                zl[self.zone(p)] += 1;
                zh[self.zone(p)] += (v & HOT != 0) as u32;
            }
            if live != k.live || tombs != k.tombs || live == 0 {
                return Err(format!("chunk {c}: live {} tombs {} but entries say {live}/{tombs}", k.live, k.tombs));
            }
            for z in 0..self.nz {
                let j = c as usize * self.nz + z;
                if self.zlive[j] != zl[z] || self.zhot[j] != zh[z] {
                    return Err(format!(
                        "chunk {c} zone {z}: counts {}/{} but entries say {}/{}",
                        self.zlive[j], self.zhot[j], zl[z], zh[z]
                    ));
                }
            }
            if self.ch[k.next as usize].prev != c {
                return Err(format!("chunk {c}: broken links"));
            }
            total += live as u64;
            c = k.next;
            if c == self.cur {
                break;
            }
        }
        if total != self.len {
            return Err(format!("ring holds {total} pages but len is {}", self.len));
        }
        let e = &self.ch[self.cur as usize].e;
        if self.idx as usize >= e.len() || e[self.idx as usize] == TOMB {
            return Err("cursor not on a live entry".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::VecDeque;

    /// The linked list the ring stands for: front = tail (next to scan), back = head.
    #[test]
    fn ring_matches_a_plain_list_under_random_operations() {
        for seed in 0..40u64 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let n = 600;
            let mut fr = Frames::new(n);
            let mut ring = Ring::new(vec![100, 300, n as u32]);
            let mut model: VecDeque<u32> = VecDeque::new();
            let mut hot = vec![false; n];
            let mut on = vec![false; n];
            for step in 0..4000 {
                match rng.gen_range(0..10) {
                    0..=2 => {
                        let p = rng.gen_range(0..n as u32);
                        if !on[p as usize] {
                            let h = rng.gen_bool(0.3);
                            ring.push_head(&mut fr, p, h);
                            hot[p as usize] = h;
                            on[p as usize] = true;
                            model.push_back(p);
                        }
                    }
                    3 | 4 => {
                        if let Some((p, h)) = ring.peek() {
                            assert_eq!(Some(&p), model.front(), "seed {seed} step {step}");
                            assert_eq!(h, hot[p as usize]);
                            ring.keep(&mut fr);
                            model.rotate_left(1);
                        }
                    }
                    5 => {
                        if let Some(p) = ring.take(&mut fr) {
                            assert_eq!(Some(p), model.pop_front());
                            on[p as usize] = false;
                        }
                    }
                    6 => {
                        let p = rng.gen_range(0..n as u32);
                        if on[p as usize] {
                            assert_eq!(ring.remove(&mut fr, p), hot[p as usize]);
                            on[p as usize] = false;
                            let i = model.iter().position(|&x| x == p).unwrap();
                            model.remove(i);
                        }
                    }
                    7 => {
                        let p = rng.gen_range(0..n as u32);
                        if on[p as usize] {
                            let h = rng.gen_bool(0.5);
                            ring.set_hot(&fr, p, h);
                            hot[p as usize] = h;
                        }
                    }
                    _ => {
                        // Skip while the chunk holds no hot page of zone 1, or zone 0 only.
                        let max = rng.gen_range(1..200);
                        let got = ring.skip(&mut fr, max, |z, _, h| z == 0 || h == 0);
                        for _ in 0..got {
                            let p = model.pop_front().unwrap();
                            assert!(p < 100 || !hot[p as usize], "skipped a page that needed a visit");
                            model.push_back(p);
                        }
                    }
                }
                if step % 97 == 0 {
                    ring.check(&fr).unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
                    assert_eq!(ring.walk(), model.iter().copied().collect::<Vec<_>>());
                }
            }
            ring.check(&fr).unwrap();
            assert_eq!(ring.walk(), model.iter().copied().collect::<Vec<_>>());
            assert_eq!(ring.len(), model.len() as u64);
        }
    }

    #[test]
    fn skipping_a_cold_ring_is_a_rotation() {
        let mut fr = Frames::new(1000);
        let mut ring = Ring::new(vec![1000]);
        for p in 0..1000 {
            ring.push_head(&mut fr, p, false);
        }
        let mut done = 0;
        while done < 1500 {
            let n = ring.skip(&mut fr, 1500 - done, |_, _, h| h == 0);
            assert!(n > 0);
            done += n;
        }
        assert_eq!(ring.peek(), Some((500, false)));
        ring.check(&fr).unwrap();
    }
}
