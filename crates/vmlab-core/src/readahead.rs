//! Readahead (`mm/readahead.c`, and the mmap side of `mm/filemap.c`): on-demand readahead for
//! `read()` (2.6.23+) and the fault path's read-around, whose shape differs by era (profile
//! field `mmap_readahead`). What matters for timing is how many requests a file costs and
//! whether the next one is already queued when the reader gets there.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::pg;
use crate::page_alloc::{AllocFail, Gfp};
use crate::profiles::MmapReadahead;

/// Faults that missed the cache after which read-around stops (`MMAP_LOTSAMISS`).
pub const MMAP_LOTSAMISS: i32 = 100;

/// `MAX_PAGECACHE_ORDER` on x86-64 with THP: PMD order, 2 MiB folios.
pub const MAX_PAGECACHE_ORDER: u32 = 9;

/// The order `page_cache_ra_order` aims at for a window of `size` pages when the folio that
/// triggered it had order `order` (0 for a synchronous miss): two more, at most PMD order and at
/// most the window.
pub fn ra_new_order(order: u32, size: u64) -> u32 {
    if order >= MAX_PAGECACHE_ORDER {
        return order;
    }
    (order + 2).min(MAX_PAGECACHE_ORDER).min(size.max(1).ilog2())
}

/// The order of the folio `page_cache_ra_order` allocates at `index`, aiming at `order` with
/// the window's last page at `limit`: no larger than `index`'s alignment allows, none past
/// `limit`, and never order 1 (6.8's THP code cannot split an order-1 folio; 6.10 allows them).
pub fn ra_folio_order(index: u64, order: u32, limit: u64) -> u32 {
    let mut o = order;
    if index & ((1 << o) - 1) != 0 {
        o = index.trailing_zeros();
        if o == 1 {
            o = 0;
        }
    }
    while o > 0 && index + (1 << o) - 1 > limit {
        o -= 1;
        if o == 1 {
            o = 0;
        }
    }
    o
}

/// `struct file_ra_state`: the current window [start, start+size), of which the last
/// `async_size` pages are read ahead of need (PG_readahead marks where that part starts).
#[derive(Clone, Copy, Debug)]
pub struct FileRaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// `prev_pos >> PAGE_SHIFT`: the last page read (u64::MAX before any, as prev_pos = -1).
    pub prev_index: u64,
    pub mmap_miss: i32,
    /// `ra->order` (profile `ra_order_in_state`): the folio order the last window asked for.
    pub order: u32,
}

impl Default for FileRaState {
    fn default() -> Self {
        FileRaState { start: 0, size: 0, async_size: 0, prev_index: u64::MAX, mmap_miss: 0, order: 0 }
    }
}

/// First window of a sequential stream: small requests get 2–4× their size, big ones the maximum.
pub fn get_init_ra_size(req: u64, max: u64) -> u64 {
    let n = req.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// Ramp-up: ×4 while small, then ×2, capped.
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    (if cur < max / 16 { 4 * cur } else { 2 * cur }).min(max)
}

impl Kernel {
    /// `ra_pages` of the backing device (`read_ahead_kb`).
    pub fn ra_pages(&self) -> u64 {
        (self.profile.tunables.read_ahead_kb / 4).max(1)
    }

    /// First page at or after `from` (looking at most `max` pages) that is not cached
    /// (`radix_tree_next_hole`); `from + max` when all are.
    fn next_hole(&self, file: u32, from: u64, max: u64) -> u64 {
        let f = &self.files[file as usize];
        (from..from + max).find(|&i| f.find(i).is_none()).unwrap_or(from + max)
    }

    /// Submit the current window of `file`'s readahead state (`ra_submit`).
    fn ra_submit(&mut self, ctx: &mut Ctx, file: u32) -> Result<Option<u64>, AllocFail> {
        let ra = self.files[file as usize].ra;
        let mark = (ra.async_size > 0).then(|| ra.start + ra.size - ra.async_size);
        self.page_cache_ra(ctx, file, ra.start, ra.size, mark)
    }

    /// Does `file` live on a file system that reads it into large folios?
    pub fn file_large_folios(&self, file: u32) -> bool {
        let f = &self.files[file as usize];
        !f.shmem && self.disks[f.disk].large_folios
    }

    /// `page_cache_ra_order`: the current window in folios of the ramped order, each as large
    /// as its index's alignment and the window allow; on a cached page in the way or a failed
    /// allocation, what is left of the window is read in single pages (`do_page_cache_ra`).
    fn page_cache_ra_order(&mut self, ctx: &mut Ctx, file: u32, order: u32) -> Result<Option<u64>, AllocFail> {
        let ra = self.files[file as usize].ra;
        let in_state = self.profile.ra_order_in_state;
        if !self.file_large_folios(file) || ra.size < 4 {
            if in_state {
                self.files[file as usize].ra.order = 0;
            }
            return self.ra_submit(ctx, file);
        }
        let npages = self.files[file as usize].npages();
        if ra.start >= npages {
            return Ok(None);
        }
        let limit = (npages - 1).min(ra.start + ra.size - 1);
        let new_order = if in_state {
            // The caller set the order; only the caps apply, and what is asked is remembered.
            let o = ra.order.min(MAX_PAGECACHE_ORDER).min(ra.size.ilog2());
            self.files[file as usize].ra.order = o;
            o
        } else {
            ra_new_order(order, ra.size)
        };
        let mark = ra.start + ra.size - ra.async_size;
        let mut index = ra.start;
        let mut folios: Vec<(u64, u32)> = Vec::new();
        let mut failed = None;
        while index <= limit {
            let o = ra_folio_order(index, new_order, limit);
            let nr = 1u64 << o;
            // filemap_add_folio refuses a range that already holds a page (-EEXIST).
            if (index..index + nr).any(|i| self.files[file as usize].find(i).is_some()) {
                failed = Some(None);
                break;
            }
            let gfp = if o == 0 {
                Gfp { cold: self.profile.page_cache_read_cold, ..Gfp::highuser_movable() }
            } else {
                // readahead_gfp_mask: __GFP_NORETRY | __GFP_NOWARN; a large folio is a wish.
                Gfp { noretry: true, ..Gfp::highuser_movable() }
            };
            let p = match self.alloc_pages(ctx, gfp, o) {
                Ok(p) => p,
                Err(e) => {
                    failed = Some(Some(e));
                    break;
                }
            };
            self.fr.set(p, pg::LOCKED);
            if index == mark.next_multiple_of(nr) {
                self.fr.set(p, pg::READAHEAD);
            }
            self.add_folio_to_page_cache(ctx, file, index, p, o);
            self.charge_readahead_folio(ctx);
            crate::vmscan::page_cache_added(self, ctx, p);
            folios.push((index, o));
            index += nr;
        }
        let last = self.read_folios(ctx, file, &folios);
        match failed {
            None => Ok(last),
            // 6.8 falls back to do_page_cache_ra(ractl, ra->size, ra->async_size) from where
            // the folios stopped (later kernels shorten it by what was read).
            Some(e) => match (
                self.page_cache_ra(
                    ctx,
                    file,
                    index,
                    ra.size,
                    (ra.async_size > 0).then(|| index + ra.size - ra.async_size),
                ),
                last,
                e,
            ) {
                (Ok(t), _, _) => Ok(t.max(last)),
                (Err(_), Some(t), _) => Ok(Some(t)),
                (Err(e2), None, e) => Err(e.unwrap_or(e2)),
            },
        }
    }

    /// `ondemand_readahead`: a read of `req` pages at `idx` either continues the stream (the
    /// window moves on and grows), starts one (first read, or the page after the previous one),
    /// or is a small random read that is read as is. `folio_order`: `read()`'s windows go
    /// through `page_cache_ra_order`, ramping from the order of the folio that triggered them
    /// (0 on a miss); None: the fault path's, in single pages.
    pub fn ondemand_readahead(
        &mut self,
        ctx: &mut Ctx,
        file: u32,
        idx: u64,
        req: u64,
        hit_marker: bool,
        folio_order: Option<u32>,
    ) -> Result<Option<u64>, AllocFail> {
        let max = self.ra_pages();
        let ra = self.files[file as usize].ra;
        // 6.8 rounds the marker's index up to the triggering folio's size, as ra_alloc_folio
        // placed it.
        let expected = (ra.start + ra.size - ra.async_size).next_multiple_of(1 << folio_order.unwrap_or(0));
        // 2.6.3x and 6.x test the start of file first: a file read again from its beginning
        // starts a stream, marker or not. Without it the read that ended at EOF makes index 0
        // look random, and the pass begins with a bare request and a second initial window one
        // request later.
        let start_of_file = idx == 0 && self.profile.ra_start_of_file;
        let mut next = if idx != 0 && (idx == expected || idx == ra.start + ra.size) {
            let size = get_next_ra_size(ra.size, max);
            FileRaState { start: ra.start + ra.size, size, async_size: size, ..ra }
        } else if hit_marker && !start_of_file {
            // A marked page without matching state (interleaved streams): the cached run
            // ahead of it stands for the old async window.
            let start = self.next_hole(file, idx + 1, max + 1);
            if start - idx > max {
                return Ok(None);
            }
            let size = get_next_ra_size(start - idx, max);
            FileRaState { start, size, async_size: size, ..ra }
        } else if start_of_file || idx.wrapping_sub(ra.prev_index) <= 1 || req > max {
            let size = get_init_ra_size(req, max);
            let async_size = if size > req { size - req } else { size };
            FileRaState { start: idx, size, async_size, ..ra }
        } else {
            return self.page_cache_ra(ctx, file, idx, req.max(1), None);
        };
        if self.profile.ra_order_in_state {
            // page_cache_sync_ra starts from single pages; page_cache_async_ra ramps what the
            // last window asked for, whatever the marked folio's own order.
            next.order = if hit_marker { ra.order + 2 } else { 0 };
        }
        self.files[file as usize].ra = next;
        match folio_order {
            Some(o) => self.page_cache_ra_order(ctx, file, o),
            None => self.ra_submit(ctx, file),
        }
    }

    /// `do_sync_mmap_readahead`: a fault found no page.
    fn sync_mmap_readahead(&mut self, ctx: &mut Ctx, file: u32, idx: u64) -> Result<Option<u64>, AllocFail> {
        let max = self.ra_pages();
        let mode = self.profile.mmap_readahead;
        let ra = self.files[file as usize].ra;
        if mode == MmapReadahead::SequentialOrReadAround && idx.wrapping_sub(1) == ra.prev_index {
            return self.ondemand_readahead(ctx, file, idx, max, false, None);
        }
        if mode == MmapReadahead::Cluster {
            let n = 1u64 << self.profile.tunables.page_cluster.min(10);
            return self.page_cache_ra(ctx, file, idx & !(n - 1), n, None);
        }
        let f = &mut self.files[file as usize];
        f.ra.mmap_miss = f.ra.mmap_miss.saturating_add(1).min(MMAP_LOTSAMISS * 10);
        if f.ra.mmap_miss > MMAP_LOTSAMISS {
            // Mostly misses: readahead only hurts. Read just this page.
            return self.page_cache_ra(ctx, file, idx, 1, None);
        }
        // Read-around: the window centred on the fault.
        let async_size = if mode == MmapReadahead::ReadAroundAsync { max / 4 } else { 0 };
        f.ra = FileRaState { start: idx.saturating_sub(max / 2), size: max, async_size, ..f.ra };
        self.ra_submit(ctx, file)
    }

    /// `do_async_mmap_readahead` (2.6.31+; 2.6.26 faults only count the hit).
    fn async_mmap_readahead(&mut self, ctx: &mut Ctx, file: u32, idx: u64, p: u32) {
        let old_style = self.profile.mmap_readahead == MmapReadahead::ReadAround;
        let ra = &mut self.files[file as usize].ra;
        // 2.6.26's counter is a plain int that hits drive below zero; 2.6.31+ stop at zero.
        ra.mmap_miss = if old_style { ra.mmap_miss.saturating_sub(1) } else { (ra.mmap_miss - 1).max(0) };
        if !old_style && self.fr.test_clear(p, pg::READAHEAD) {
            let max = self.ra_pages();
            let _ = self.ondemand_readahead(ctx, file, idx, max, true, None);
        }
    }

    /// The readahead half of `filemap_fault`: make page `idx` cached (or under I/O). Returns
    /// true when this fault had to start the read (a major fault).
    pub fn filemap_fault_readahead(&mut self, ctx: &mut Ctx, file: u32, idx: u64) -> bool {
        self.ra_for_fault = true;
        let missing = self.filemap_fault_readahead_inner(ctx, file, idx);
        self.ra_for_fault = false;
        missing
    }

    fn filemap_fault_readahead_inner(&mut self, ctx: &mut Ctx, file: u32, idx: u64) -> bool {
        match self.files[file as usize].find(idx) {
            Some(p) => {
                // filemap_fault: `if (!(vmf->flags & FAULT_FLAG_TRIED)) do_async_mmap_readahead()`
                // — coming back after waiting for this very page is not a cache hit.
                if !ctx.fault_tried {
                    self.async_mmap_readahead(ctx, file, idx, p);
                }
                false
            }
            None => {
                let _ = self.sync_mmap_readahead(ctx, file, idx);
                true
            }
        }
    }

    /// A fault mapped page `idx`: until 3.0 `filemap_fault` records it as the stream's last
    /// position (2.6.31–2.6.39 use it to detect sequential faults).
    pub fn filemap_fault_done(&mut self, file: u32, idx: u64) {
        if self.profile.mmap_readahead != MmapReadahead::ReadAroundAsync {
            self.files[file as usize].ra.prev_index = idx;
        }
    }

    /// The readahead half of `do_generic_file_read` for page `idx` of a `read()` wanting `req`
    /// pages from there: a miss starts readahead, a PG_readahead page the next window.
    pub fn file_read_readahead(&mut self, ctx: &mut Ctx, file: u32, idx: u64, req: u64) {
        let p = match self.files[file as usize].find(idx) {
            Some(p) => p,
            None => {
                let _ = self.ondemand_readahead(ctx, file, idx, req, false, Some(0));
                match self.files[file as usize].find(idx) {
                    Some(p) => p,
                    None => return,
                }
            }
        };
        // The marker is the folio's; the next window is asked for from the folio's index.
        let head = self.fr.folio_head(p);
        if self.fr.test_clear(head, pg::READAHEAD) {
            let first = idx - (p - head) as u64;
            let order = self.fr.folio_order(head);
            let _ = self.ondemand_readahead(ctx, file, first, req + idx - first, true, Some(order));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn window_sizes_follow_the_kernel() {
        // read_ahead_kb = 128: 32 pages.
        assert_eq!(get_init_ra_size(1, 32), 4);
        assert_eq!(get_init_ra_size(4, 32), 8);
        assert_eq!(get_init_ra_size(40, 32), 32);
        assert_eq!(get_next_ra_size(4, 32), 8);
        assert_eq!(get_next_ra_size(1, 32), 4);
        assert_eq!(get_next_ra_size(32, 32), 32);
    }

    #[test]
    fn folio_orders_ramp_by_two_up_to_the_window_and_pmd_order() {
        assert_eq!(ra_new_order(0, 32), 2, "a miss starts at order 2");
        assert_eq!(ra_new_order(2, 32), 4);
        assert_eq!(ra_new_order(4, 32), 5, "no folio larger than the window");
        assert_eq!(ra_new_order(8, 2048), MAX_PAGECACHE_ORDER);
        assert_eq!(ra_new_order(MAX_PAGECACHE_ORDER, 2048), MAX_PAGECACHE_ORDER);
        assert_eq!(ra_new_order(0, 4), 2);
    }

    #[test]
    fn a_folio_is_as_large_as_its_index_alignment_and_the_window_allow() {
        assert_eq!(ra_folio_order(64, 5, 1000), 5);
        assert_eq!(ra_folio_order(72, 5, 1000), 3, "index 72 is aligned to 8 pages");
        assert_eq!(ra_folio_order(66, 5, 1000), 0, "aligned to 2: order 1 is not allowed, so 0");
        assert_eq!(ra_folio_order(64, 5, 79), 4, "16 pages to the window's end");
        assert_eq!(ra_folio_order(64, 5, 65), 0, "2 pages left: never order 1");
        assert_eq!(ra_folio_order(0, 0, 0), 0);
    }
}
