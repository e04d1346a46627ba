//! Per-frame state as structure-of-arrays indexed by pfn (24 bytes a frame), and the intrusive
//! doubly-linked lists (LRU lists, buddy free lists, pcp lists) threaded through it — the
//! simulated `struct page`. Lists carry no allocation: the links live in the frame arrays.

pub type Pfn = u32;
pub const NIL: u32 = u32::MAX;

/// Page flags, the kernel's `PG_*` bits. Bits 24..26 hold the LRU list the page is on, bits
/// 27..30 the order of the page-cache folio the frame belongs to (every frame of the folio
/// carries it, so a tail finds its head by alignment), bit 31 marks a folio's tail frames.
pub mod pg {
    pub const LOCKED: u32 = 1 << 0; // I/O in flight (read): waiters sleep in lock_page
    pub const REFERENCED: u32 = 1 << 1;
    pub const UPTODATE: u32 = 1 << 2;
    pub const DIRTY: u32 = 1 << 3;
    pub const LRU: u32 = 1 << 4;
    pub const ACTIVE: u32 = 1 << 5;
    pub const WORKINGSET: u32 = 1 << 6;
    pub const SLAB: u32 = 1 << 7;
    pub const RESERVED: u32 = 1 << 8;
    pub const WRITEBACK: u32 = 1 << 9;
    pub const RECLAIM: u32 = 1 << 10;
    pub const SWAPBACKED: u32 = 1 << 11;
    pub const UNEVICTABLE: u32 = 1 << 12;
    pub const MLOCKED: u32 = 1 << 13;
    pub const SWAPCACHE: u32 = 1 << 14;
    pub const ANON: u32 = 1 << 15;
    pub const BUDDY: u32 = 1 << 16;
    pub const PGTABLE: u32 = 1 << 17;
    pub const PCP: u32 = 1 << 18;
    pub const QUICKLIST: u32 = 1 << 19;
    pub const READAHEAD: u32 = 1 << 20;
    pub const EXEC: u32 = 1 << 21;
    /// A free block's head only: `PageReported` (include/linux/page-flags.h: `PG_reported =
    /// PG_uptodate`, "Only valid for buddy pages. Used to track pages that are reported").
    pub const REPORTED: u32 = UPTODATE;
    /// Not a kernel flag: the hypervisor may have discarded this frame's memory since the guest
    /// reported it free (page_reporting.rs); kept from the report to the frame's first CPU
    /// touch, through allocation and frees. Otherwise a free block's other frames carry no flag
    /// (see `Kernel::page_is_free`).
    pub const DISCARDED: u32 = 1 << 22;
    pub const LAUNDER: u32 = 1 << 23; // 2.4: reclaim started this page's write (shrink_cache waits on it)
    pub const LRU_SHIFT: u32 = 24;
    pub const LRU_MASK: u32 = 0x7 << 24;
    pub const ORDER_SHIFT: u32 = 27;
    pub const ORDER_MASK: u32 = 0xf << 27;
    /// A frame of a large folio other than its first (the kernel's PageTail).
    pub const TAIL: u32 = 1 << 31;
}

/// A frame's place on an intrusive list.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    pub next: u32,
    pub prev: u32,
}

/// The simulated `mem_map`.
pub struct Frames {
    pub flags: Vec<u32>,
    /// List links, `next` and `prev` side by side: a list operation touches one cache line
    /// of a page's links rather than two.
    pub links: Vec<Link>,
    /// anon_vma id (PG_ANON), file id (page cache), or owner id (page tables, slab).
    pub mapping: Vec<u32>,
    /// Page offset in the file, or the virtual page number for anon pages.
    pub index: Vec<u32>,
    pub mapcount: Vec<u16>,
    /// Buddy order while free; page age in the 2.4 engines; generation in MGLRU.
    pub aux: Vec<u8>,
    /// Extra references (2.4 `page_count` beyond cache + mappings: buffers, pins).
    pub extra: Vec<u8>,
}

impl Frames {
    pub fn new(n: usize) -> Frames {
        Frames {
            flags: vec![0; n],
            links: vec![Link { next: NIL, prev: NIL }; n],
            mapping: vec![0; n],
            index: vec![0; n],
            mapcount: vec![0; n],
            aux: vec![0; n],
            extra: vec![0; n],
        }
    }
    pub fn len(&self) -> usize {
        self.flags.len()
    }
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }
    /// Bytes of per-frame state: the design's budget is 24.
    pub const BYTES_PER_FRAME: usize = 4 + 4 + 4 + 4 + 4 + 2 + 1 + 1;

    #[inline(always)]
    pub fn has(&self, pfn: Pfn, f: u32) -> bool {
        self.flags[pfn as usize] & f != 0
    }
    #[inline(always)]
    pub fn set(&mut self, pfn: Pfn, f: u32) {
        self.flags[pfn as usize] |= f;
    }
    #[inline(always)]
    pub fn clear(&mut self, pfn: Pfn, f: u32) {
        self.flags[pfn as usize] &= !f;
    }
    /// Test-and-clear, as `TestClearPageReferenced`.
    #[inline(always)]
    pub fn test_clear(&mut self, pfn: Pfn, f: u32) -> bool {
        let old = self.flags[pfn as usize];
        self.flags[pfn as usize] = old & !f;
        old & f != 0
    }
    #[inline(always)]
    pub fn lru_list(&self, pfn: Pfn) -> u8 {
        ((self.flags[pfn as usize] & pg::LRU_MASK) >> pg::LRU_SHIFT) as u8
    }
    #[inline(always)]
    pub fn set_lru_list(&mut self, pfn: Pfn, l: u8) {
        let f = &mut self.flags[pfn as usize];
        *f = (*f & !pg::LRU_MASK) | ((l as u32) << pg::LRU_SHIFT);
    }
    /// `folio_order` of the folio holding `pfn` (0: a single page).
    #[inline(always)]
    pub fn folio_order(&self, pfn: Pfn) -> u32 {
        (self.flags[pfn as usize] & pg::ORDER_MASK) >> pg::ORDER_SHIFT
    }
    /// `folio_nr_pages`.
    #[inline(always)]
    pub fn folio_nr(&self, pfn: Pfn) -> u64 {
        1 << self.folio_order(pfn)
    }
    /// The folio's first frame (`page_folio`): folios are buddy blocks, so aligned to their size.
    #[inline(always)]
    pub fn folio_head(&self, pfn: Pfn) -> Pfn {
        let f = self.flags[pfn as usize];
        if f & pg::TAIL == 0 {
            return pfn;
        }
        pfn & !((1 << ((f & pg::ORDER_MASK) >> pg::ORDER_SHIFT)) - 1)
    }
    /// Make the block of `1 << order` frames at `head` one folio (`prep_compound_page`).
    pub fn set_folio(&mut self, head: Pfn, order: u32) {
        debug_assert!(order < 16 && head & ((1 << order) - 1) == 0);
        let o = order << pg::ORDER_SHIFT;
        let h = head as usize;
        self.flags[h] = (self.flags[h] & !(pg::ORDER_MASK | pg::TAIL)) | o;
        for t in h + 1..h + (1 << order) {
            self.flags[t] = (self.flags[t] & !(pg::ORDER_MASK | pg::TAIL)) | o | pg::TAIL;
        }
    }
}

/// An intrusive list head. `head` is the most recently added end (the kernel's `list_add`),
/// `tail` the oldest, where reclaim scans from.
#[derive(Clone, Copy, Debug)]
pub struct List {
    pub head: u32,
    pub tail: u32,
    pub len: u64,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, len: 0 }
    }
}

impl List {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn push_head(&mut self, fr: &mut Frames, p: Pfn) {
        let i = p as usize;
        fr.links[i] = Link { next: self.head, prev: NIL };
        if self.head != NIL {
            fr.links[self.head as usize].prev = p;
        } else {
            self.tail = p;
        }
        self.head = p;
        self.len += 1;
    }
    #[inline]
    pub fn push_tail(&mut self, fr: &mut Frames, p: Pfn) {
        let i = p as usize;
        fr.links[i] = Link { next: NIL, prev: self.tail };
        if self.tail != NIL {
            fr.links[self.tail as usize].next = p;
        } else {
            self.head = p;
        }
        self.tail = p;
        self.len += 1;
    }
    #[inline]
    pub fn remove(&mut self, fr: &mut Frames, p: Pfn) {
        let i = p as usize;
        let Link { next: nx, prev: pr } = fr.links[i];
        if pr != NIL {
            fr.links[pr as usize].next = nx;
        } else {
            debug_assert_eq!(self.head, p);
            self.head = nx;
        }
        if nx != NIL {
            fr.links[nx as usize].prev = pr;
        } else {
            debug_assert_eq!(self.tail, p);
            self.tail = pr;
        }
        fr.links[i] = Link { next: NIL, prev: NIL };
        self.len -= 1;
    }
    /// Link `p` just before `at` (on its newer side).
    pub fn insert_before(&mut self, fr: &mut Frames, at: Pfn, p: Pfn) {
        let pr = fr.links[at as usize].prev;
        fr.links[p as usize] = Link { next: at, prev: pr };
        fr.links[at as usize].prev = p;
        if pr != NIL {
            fr.links[pr as usize].next = p;
        } else {
            self.head = p;
        }
        self.len += 1;
    }
    #[inline]
    pub fn pop_tail(&mut self, fr: &mut Frames) -> Option<Pfn> {
        let t = self.tail;
        if t == NIL {
            return None;
        }
        self.remove(fr, t);
        Some(t)
    }
    #[inline]
    pub fn pop_head(&mut self, fr: &mut Frames) -> Option<Pfn> {
        let h = self.head;
        if h == NIL {
            return None;
        }
        self.remove(fr, h);
        Some(h)
    }
    /// Walk from head to tail (debug checks and tests only).
    pub fn collect(&self, fr: &Frames) -> Vec<Pfn> {
        let mut v = Vec::with_capacity(self.len as usize);
        let mut p = self.head;
        while p != NIL {
            v.push(p);
            p = fr.links[p as usize].next;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn frame_state_fits_the_budget() {
        const { assert!(Frames::BYTES_PER_FRAME <= 24) };
    }
    #[test]
    fn a_tail_finds_its_head_and_order() {
        let mut fr = Frames::new(32);
        fr.set_folio(16, 3);
        fr.set_lru_list(16, crate::mmzone::LRU_NONE);
        fr.set_lru_list(17, crate::mmzone::LRU_ACTIVE_FILE as u8);
        assert_eq!(fr.lru_list(17), crate::mmzone::LRU_ACTIVE_FILE as u8);
        for p in 16..24 {
            assert_eq!(fr.folio_head(p), 16, "pfn {p}");
            assert_eq!(fr.folio_nr(p), 8);
        }
        assert!(!fr.has(16, pg::TAIL) && fr.has(17, pg::TAIL));
        assert_eq!(fr.lru_list(16), crate::mmzone::LRU_NONE, "the order leaves the LRU field alone");
        assert_eq!((fr.folio_head(24), fr.folio_nr(24), fr.folio_head(15)), (24, 1, 15));
    }
    #[test]
    fn list_ops_keep_order_and_length() {
        let mut fr = Frames::new(8);
        let mut l = List::default();
        for p in 0..5 {
            l.push_head(&mut fr, p);
        }
        assert_eq!(l.collect(&fr), vec![4, 3, 2, 1, 0]);
        l.remove(&mut fr, 2);
        assert_eq!(l.pop_tail(&mut fr), Some(0));
        l.push_tail(&mut fr, 7);
        assert_eq!(l.collect(&fr), vec![4, 3, 1, 7]);
        assert_eq!(l.len, 4);
        assert_eq!(l.pop_head(&mut fr), Some(4));
        l.insert_before(&mut fr, 3, 5);
        l.insert_before(&mut fr, 7, 6);
        assert_eq!(l.collect(&fr), vec![5, 3, 1, 6, 7]);
        assert_eq!((l.head, l.tail, l.len), (5, 7, 5));
    }
}
