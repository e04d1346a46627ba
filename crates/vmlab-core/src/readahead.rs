//! Readahead (`mm/readahead.c`, and the mmap side of `mm/filemap.c`): on-demand readahead for
//! `read()` (2.6.23+) and the fault path's read-around, whose shape differs by era (profile
//! field `mmap_readahead`). What matters for timing is how many requests a file costs and
//! whether the next one is already queued when the reader gets there.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::pg;
use crate::page_alloc::AllocFail;
use crate::profiles::MmapReadahead;

/// Faults that missed the cache after which read-around stops (`MMAP_LOTSAMISS`).
pub const MMAP_LOTSAMISS: i32 = 100;

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
}

impl Default for FileRaState {
    fn default() -> Self {
        FileRaState { start: 0, size: 0, async_size: 0, prev_index: u64::MAX, mmap_miss: 0 }
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

    /// `ondemand_readahead`: a read of `req` pages at `idx` either continues the stream (the
    /// window moves on and grows), starts one (first read, or the page after the previous one),
    /// or is a small random read that is read as is.
    pub fn ondemand_readahead(
        &mut self,
        ctx: &mut Ctx,
        file: u32,
        idx: u64,
        req: u64,
        hit_marker: bool,
    ) -> Result<Option<u64>, AllocFail> {
        let max = self.ra_pages();
        let ra = self.files[file as usize].ra;
        let next = if idx != 0 && (idx == ra.start + ra.size - ra.async_size || idx == ra.start + ra.size) {
            let size = get_next_ra_size(ra.size, max);
            FileRaState { start: ra.start + ra.size, size, async_size: size, ..ra }
        } else if hit_marker {
            // A marked page without matching state (interleaved streams): the cached run
            // ahead of it stands for the old async window.
            let start = self.next_hole(file, idx + 1, max + 1);
            if start - idx > max {
                return Ok(None);
            }
            let size = get_next_ra_size(start - idx, max);
            FileRaState { start, size, async_size: size, ..ra }
        } else if idx.wrapping_sub(ra.prev_index) <= 1 || req > max {
            let size = get_init_ra_size(req, max);
            let async_size = if size > req { size - req } else { size };
            FileRaState { start: idx, size, async_size, ..ra }
        } else {
            return self.page_cache_ra(ctx, file, idx, req.max(1), None);
        };
        self.files[file as usize].ra = next;
        self.ra_submit(ctx, file)
    }

    /// `do_sync_mmap_readahead`: a fault found no page.
    fn sync_mmap_readahead(&mut self, ctx: &mut Ctx, file: u32, idx: u64) -> Result<Option<u64>, AllocFail> {
        let max = self.ra_pages();
        let mode = self.profile.mmap_readahead;
        let ra = self.files[file as usize].ra;
        if mode == MmapReadahead::SequentialOrReadAround && idx.wrapping_sub(1) == ra.prev_index {
            return self.ondemand_readahead(ctx, file, idx, max, false);
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
            let _ = self.ondemand_readahead(ctx, file, idx, max, true);
        }
    }

    /// The readahead half of `filemap_fault`: make page `idx` cached (or under I/O). Returns
    /// true when this fault had to start the read (a major fault).
    pub fn filemap_fault_readahead(&mut self, ctx: &mut Ctx, file: u32, idx: u64) -> bool {
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
                let _ = self.ondemand_readahead(ctx, file, idx, req, false);
                match self.files[file as usize].find(idx) {
                    Some(p) => p,
                    None => return,
                }
            }
        };
        if self.fr.test_clear(p, pg::READAHEAD) {
            let _ = self.ondemand_readahead(ctx, file, idx, req, true);
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
}
