//! 2.4.9's `try_to_free_buffers` on a page whose buffers are busy (dirty or under I/O), as
//! page_launder calls it for a page `write()` dirtied (profile `write_dirties_buffers`).
//!
//! What the sources give (history §22): `write()` dirties the buffers, not the page
//! (`__block_commit_write` → `mark_buffer_dirty`; PG_dirty stays clear), so page_launder's
//! `PageDirty` branch does not see the page and its `page->buffers` branch calls
//! `try_to_free_buffers(page, gfp_mask)`. Busy buffers there go to `sync_page_buffers`, which
//! submits a dirty buffer (`ll_rw_block(WRITE, 1, &p)`) and, when the caller has __GFP_WAIT,
//! waits on a locked one (`__wait_on_buffer`); the function retries once after the wait and
//! otherwise returns 0, and page_launder puts the page back on inactive_dirty. Buffer I/O locks
//! the buffers, not the page, so `TryLockPage` does not stop page_launder at a page whose
//! buffers are being written. 2.4.9's `GFP_KSWAPD` is `__GFP_IO | __GFP_FS`, without
//! __GFP_WAIT: kswapd submits and never waits here; a direct reclaimer (`GFP_HIGHUSER`,
//! `sync` = 1) waits.

use super::BUFFERS;
use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::stats::kfunc::KFunc;

/// `fr.extra` bit: write() dirtied this page's buffers, so its writes go through them (they,
/// not the page, are locked while written) and page_launder frees it through
/// `try_to_free_buffers`. Set with [`BUFFERS`] only; both go when the buffers are freed.
pub const BH_DIRTIED: u8 = 2;

/// What a page_launder caller may do: its gfp_mask after `if (!sync) gfp_mask &= ~__GFP_WAIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunderMask {
    /// __GFP_FS: call `writepage` on a PG_dirty page.
    pub fs: bool,
    /// __GFP_IO: submit dirty buffers.
    pub io: bool,
    /// __GFP_WAIT: wait on locked buffers.
    pub wait: bool,
}

/// kswapd's `do_try_to_free_pages(GFP_KSWAPD, 1)`: 2.4.9's `GFP_KSWAPD` has no __GFP_WAIT.
pub const KSWAPD: LaunderMask = LaunderMask { fs: true, io: true, wait: false };
/// `try_to_free_pages(GFP_HIGHUSER)` → `do_try_to_free_pages(gfp_mask, 1)`.
pub const DIRECT: LaunderMask = LaunderMask { fs: true, io: true, wait: true };
/// A direct reclaimer whose allocation gives up rather than sleep (`noretry`): the bounce page
/// of a HighMem write (`alloc_page(GFP_NOIO)` in 2.4's `create_bounce`: no __GFP_IO, so its
/// `try_to_free_buffers` neither submits nor waits) and the buffer-head slab's grow (SLAB_NOFS,
/// which in 2.4.9 would submit and wait: a departure, that caller cannot sleep here). Its
/// writepage branch is left as it was.
pub const NOIO: LaunderMask = LaunderMask { fs: true, io: false, wait: false };

/// The page_launder mask of a direct reclaimer allocating with `gfp`.
pub fn direct_mask(gfp: crate::page_alloc::Gfp) -> LaunderMask {
    if gfp.noretry {
        NOIO
    } else {
        DIRECT
    }
}

/// Does page_launder take `p` to `try_to_free_buffers` with busy buffers (dirty or locked)?
#[inline]
pub fn busy_buffer_page(k: &Kernel, p: Pfn) -> bool {
    k.fr.extra[p as usize] & BH_DIRTIED != 0 && k.fr.flags[p as usize] & (pg::DIRTY | pg::WRITEBACK) != 0
}

/// Mark a page write() dirtied, when the profile has 2.4's buffer dirtying. A page whose
/// buffers page_launder stripped gets them again first (`prepare_write` →
/// `__block_prepare_write`: `if (!page->buffers) create_empty_buffers(...)`).
pub fn page_dirtied_by_write(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    if !k.profile.write_dirties_buffers || k.fr.has(p, pg::ANON) || k.fr.has(p, pg::SWAPBACKED) {
        return;
    }
    if k.fr.extra[p as usize] & BUFFERS == 0 {
        k.fr.extra[p as usize] |= BUFFERS;
        let r = k.reclaim.riel24_mut();
        r.bh_live += 1;
        if k.fr.has(p, pg::LRU) && k.fr.lru_list(p) as usize == super::SLOT_DIRTY {
            k.reclaim.riel24_mut().dirty_bufs += 1;
        }
        super::refresh(k, p);
        super::grow_buffer_heads(k, ctx);
    }
    k.fr.extra[p as usize] |= BH_DIRTIED;
}

/// `try_to_free_buffers` of a page with busy buffers, page_launder's lock dropped: submit the
/// dirty buffers (`__GFP_IO`), and return when the caller, having __GFP_WAIT, would wake from
/// `__wait_on_buffer` (`None`: it goes on at once). The buffers stay; the caller puts the page
/// back on inactive_dirty (the function returned 0).
pub fn sync_page_buffers(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, mask: LaunderMask) -> Option<u64> {
    let r = k.reclaim.riel24_mut();
    r.stats.try_to_free_buffers += 1;
    k.charge(ctx, KFunc::TryToFreeBuffers, k.cost.lru_scan + k.cost.lru_scan / 2);
    if k.fr.has(p, pg::WRITEBACK) {
        if !mask.wait {
            return None;
        }
        // Someone else's write (the flusher's): its completion time is not kept per page, so
        // the wait runs to the end of the disk's queued work, an upper bound for this buffer.
        k.reclaim.riel24_mut().stats.launder_bh_waits_other += 1;
        let d = k.files[k.fr.mapping[p as usize] as usize].disk;
        return Some(k.disks[d].queued_until().max(ctx.clock()));
    }
    if !mask.io || !k.fr.has(p, pg::DIRTY) {
        return None;
    }
    let slept = ctx.sleep_ns;
    let done = crate::page_writeback::writepage(k, ctx, p);
    k.reclaim.riel24_mut().stats.launder_bh_writes += 1;
    if !mask.wait {
        return None;
    }
    // The retry finds the buffers just submitted locked and waits on them: that wait covers
    // the request queue's, which is then not slept a second time.
    let queue = ctx.sleep_ns - slept;
    ctx.sleep_ns = slept;
    Some(done.max(ctx.clock() + queue))
}

#[cfg(test)]
mod tests;
