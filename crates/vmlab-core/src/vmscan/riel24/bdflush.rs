//! 2.4.9's buffer flushing (`fs/buffer.c`; profile field `bdflush`): the writer's
//! `balance_dirty`, bdflush's rounds and kupdate's `sync_old_buffers`, all writing from the
//! head of the one global `BUF_DIRTY` list with `write_some_buffers`.
//!
//! As read (history §23): `__block_commit_write` calls `balance_dirty()` when one of the page's
//! buffers turns dirty (`__mark_dirty` sets `b_flushtime = jiffies + age_buffer` and files it
//! at the tail of `BUF_DIRTY`); later writes into a dirty buffer call nothing.
//! `balance_dirty_state` compares the dirty buffers ×100 with `nr_free_buffer_pages()` ×
//! `nfract` (30) and × `nfract_sync` (60). Over `nfract` the writer itself runs
//! `write_some_buffers` (up to `NRSYNC` = 32 buffers from the head of `BUF_DIRTY`, a locked one
//! stepped over); over `nfract_sync` it then waits on the oldest locked buffer
//! (`wait_for_some_buffers`) and wakes bdflush. bdflush loops on `write_some_buffers` while it
//! fills whole batches and the state is not −1, and otherwise sleeps until woken. kupdate
//! wakes every `interval` (5 s) and runs `write_some_buffers` while the head buffer's
//! `b_flushtime` has passed (buffers 30 s old). The 2.4.9 text is the old side of Andrew
//! Morton's patch against 2.4.9 ("Re: The cause of the "VM" performance problem with 2.4.X",
//! LKML, 22–23 Aug 2001); the function bodies are those of a later stored 2.4 `fs/buffer.c`
//! with the same lines.
//!
//! Departures [I]: one task runs both threads (kupdate's round first when due), so a bdflush
//! asleep in the request queue delays kupdate; bdflush's own `wait_for_some_buffers` before
//! it sleeps is left out; a page written outside `write_some_buffers` (page_launder) and
//! dirtied again is found at its first dirtying's place; the dirty count is every dirty file
//! page (in 2.4.9 PG_dirty pages from mappings are not on `BUF_DIRTY`).

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmzone::ZoneType;
use std::collections::VecDeque;

/// A jiffy at i386's HZ = 100: `bdf_prm`'s `interval` and `age_buffer` are counted in them.
const JIFFY_NS: u64 = 10_000_000;
/// `NRSYNC`: buffers `write_some_buffers` gathers before it submits them.
pub const NRSYNC: usize = 32;

/// A buffer on `BUF_DIRTY` (one 4 KiB ext2 block per page): when it may be flushed, and the
/// page it was dirtied on (a page freed or reused since is told by its mapping and index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buf {
    pub flushtime: u64,
    pub p: Pfn,
    pub file: u32,
    pub idx: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Bdflush {
    /// `lru_list[BUF_DIRTY]`, oldest-dirtied first.
    pub dirty: VecDeque<Buf>,
    /// `lru_list[BUF_LOCKED]`: buffers `write_some_buffers` submitted, with their completion.
    pub locked: VecDeque<(u64, Pfn)>,
    /// When kupdate runs next.
    pub kupdate_at: u64,
    /// Locked dirty buffers a round stepped over, put back at the head.
    skipped: Vec<Buf>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BdflushStats {
    /// `balance_dirty` calls over `nfract`, and over `nfract_sync`.
    pub balance_async: u64,
    pub balance_sync: u64,
    /// Buffers written by the writer's `balance_dirty`, by bdflush, by kupdate.
    pub by_writer: u64,
    pub by_bdflush: u64,
    pub by_kupdate: u64,
    /// The writer's `wait_for_some_buffers` sleeps, and their total.
    pub writer_waits: u64,
    pub writer_wait_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Writer,
    Bdflush,
    Kupdate,
}

fn bd(k: &mut Kernel) -> &mut Bdflush {
    &mut k.reclaim.riel24_mut().bdflush
}

fn stats(k: &mut Kernel) -> &mut BdflushStats {
    &mut k.reclaim.riel24_mut().stats.bdflush
}

/// `nr_free_buffer_pages` (Linus Torvalds, "Re: [PATCH] total_free_shortage() using
/// zone_free_shortage()", LKML, 7 Aug 2001, the patch against 2.4.8-pre6 [I: as in 2.4.9]):
/// over the GFP_KERNEL zonelist — no HighMem — each zone's free + inactive_clean +
/// inactive_dirty pages, at least its `pages_high`.
pub fn nr_free_buffer_pages(k: &Kernel) -> u64 {
    let mut sum = 0;
    for z in 0..k.zones.len() {
        let zone = &k.zones[z];
        if zone.present == 0 || zone.kind == ZoneType::HighMem || zone.kind == ZoneType::Movable {
            continue;
        }
        let pages = super::zone_free(k, z) + super::zone_clean(k, z) + super::zone_dirty(k, z);
        sum += pages.max(zone.wmark[2]);
    }
    sum
}

/// `balance_dirty_state`: −1 below `nfract`, 0 between, 1 over `nfract_sync` (percent of
/// `nr_free_buffer_pages`, profile tunables `bdflush_nfract`, `bdflush_nfract_sync`).
pub fn balance_dirty_state(k: &Kernel) -> i32 {
    let t = &k.profile.tunables;
    let dirty = k.g.dirty * 100;
    let tot = nr_free_buffer_pages(k);
    if dirty > tot * t.bdflush_nfract {
        if dirty > tot * t.bdflush_nfract_sync {
            return 1;
        }
        return 0;
    }
    -1
}

/// The buffer of page `p` that write() just turned dirty: `__mark_dirty`, then `balance_dirty`
/// (`__block_commit_write`'s `need_balance_dirty`).
pub fn mark_buffer_dirty(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    if k.fr.flags[p as usize] & (pg::ANON | pg::SWAPBACKED) != 0 {
        return;
    }
    mark_dirty(k, ctx, p);
    balance_dirty(k, ctx);
}

/// `__mark_dirty`: the buffer may be flushed `age_buffer` from now, and goes to the tail of
/// `BUF_DIRTY` (`refile_buffer`).
pub fn mark_dirty(k: &mut Kernel, ctx: &Ctx, p: Pfn) {
    let flushtime = ctx.clock() + k.profile.tunables.bdflush_age_buffer * JIFFY_NS;
    let buf = Buf { flushtime, p, file: k.fr.mapping[p as usize], idx: k.fr.index[p as usize] };
    bd(k).dirty.push_back(buf);
}

/// `balance_dirty`: over `nfract` the writer writes a batch itself; over `nfract_sync` it
/// also waits on the oldest locked buffer and wakes bdflush.
pub fn balance_dirty(k: &mut Kernel, ctx: &mut Ctx) {
    let state = balance_dirty_state(k);
    if state < 0 {
        return;
    }
    write_some_buffers(k, ctx, Who::Writer);
    if state == 0 {
        stats(k).balance_async += 1;
        return;
    }
    stats(k).balance_sync += 1;
    wait_for_some_buffers(k, ctx);
    wakeup_bdflush(k);
}

/// `wakeup_bdflush`: bdflush is the first writeback context's task.
pub fn wakeup_bdflush(k: &mut Kernel) {
    crate::page_writeback::wake_flusher(k, 0);
}

/// Is `b` still a dirty buffer (its page not written, truncated or reused since)?
#[inline]
fn still_dirty(k: &Kernel, b: &Buf) -> bool {
    let i = b.p as usize;
    k.fr.mapping[i] == b.file
        && k.fr.index[i] == b.idx
        && k.fr.flags[i] & (pg::DIRTY | pg::ANON | pg::SWAPBACKED) == pg::DIRTY
}

/// `write_some_buffers(NODEV)`: take up to `NRSYNC` dirty buffers from the head of
/// `BUF_DIRTY`, stepping over locked ones, and submit them (contiguous blocks as one run, as
/// `__make_request` merges them). True when it filled a whole batch (-EAGAIN).
fn write_some_buffers(k: &mut Kernel, ctx: &mut Ctx, who: Who) -> bool {
    let mut skipped = std::mem::take(&mut bd(k).skipped);
    let mut run: Vec<Pfn> = Vec::new();
    let (mut run_file, mut run_first) = (0u32, 0u32);
    let mut count = 0;
    while count < NRSYNC {
        let Some(b) = bd(k).dirty.pop_front() else { break };
        if !still_dirty(k, &b) {
            continue;
        }
        if k.fr.has(b.p, pg::WRITEBACK) {
            // test_and_set_bit(BH_Lock) failed: it stays on BUF_DIRTY.
            skipped.push(b);
            continue;
        }
        if !run.is_empty() && (b.file != run_file || b.idx != run_first + run.len() as u32) {
            submit(k, ctx, run_file, run_first, std::mem::take(&mut run));
        }
        if run.is_empty() {
            (run_file, run_first) = (b.file, b.idx);
        }
        run.push(b.p);
        count += 1;
    }
    if !run.is_empty() {
        submit(k, ctx, run_file, run_first, run);
    }
    let q = bd(k);
    for b in skipped.drain(..).rev() {
        q.dirty.push_front(b);
    }
    q.skipped = skipped;
    let s = stats(k);
    match who {
        Who::Writer => s.by_writer += count as u64,
        Who::Bdflush => s.by_bdflush += count as u64,
        Who::Kupdate => s.by_kupdate += count as u64,
    }
    count == NRSYNC
}

fn submit(k: &mut Kernel, ctx: &mut Ctx, file: u32, first: u32, run: Vec<Pfn>) {
    let now = ctx.clock();
    let q = bd(k);
    // Refile what has completed (`wait_for_buffers` does it as it walks BUF_LOCKED).
    while q.locked.front().is_some_and(|&(done, _)| done <= now) {
        q.locked.pop_front();
    }
    let from = q.locked.len();
    q.locked.extend(run.iter().map(|&p| (u64::MAX, p)));
    let done = crate::page_writeback::submit_write(k, ctx, file, first as u64, run);
    for e in bd(k).locked.range_mut(from..) {
        e.0 = done;
    }
}

/// `wait_for_some_buffers(NODEV)`: refile the buffers whose writes have ended and sleep on
/// the oldest still locked (`wait_on_buffer` runs `tq_disk` first).
fn wait_for_some_buffers(k: &mut Kernel, ctx: &mut Ctx) {
    k.run_tq_disk(ctx.clock());
    let now = ctx.clock();
    let q = bd(k);
    while q.locked.front().is_some_and(|&(done, _)| done <= now) {
        q.locked.pop_front();
    }
    if let Some(&(done, _)) = q.locked.front() {
        let s = stats(k);
        s.writer_waits += 1;
        s.writer_wait_ns += done - now;
        ctx.sleep_ns = ctx.sleep_ns.max(done - now);
    }
}

/// One pass of the bdflush task: kupdate's `sync_old_buffers` when its interval is up, then
/// bdflush's `write_some_buffers` while it was woken and the state is over `nfract`.
pub fn bdflush_pass(k: &mut Kernel, ctx: &mut Ctx, w: usize) -> crate::page_writeback::FlushAction {
    use crate::page_writeback::FlushAction;
    crate::vmscan::write_submitted(k, ctx, 0, 0);
    let now = ctx.clock();
    if w != 0 {
        // One bdflush and one kupdate for the machine.
        k.wbs[w].wanted = false;
        return FlushAction::Sleep(u64::MAX / 4);
    }
    // kupdate with `interval` 0 is stopped (`stop_kupdate`: TASK_STOPPED).
    let interval = k.profile.tunables.bdflush_interval * JIFFY_NS;
    if interval > 0 && now >= bd(k).kupdate_at {
        loop {
            let head_due = bd(k).dirty.front().is_some_and(|b| b.flushtime <= now);
            if !head_due {
                break;
            }
            if let Some(wait) = queue_wait(k, ctx, now) {
                return FlushAction::Sleep(wait);
            }
            if !write_some_buffers(k, ctx, Who::Kupdate) {
                break;
            }
        }
        bd(k).kupdate_at = now + interval;
    }
    if k.wbs[0].wanted {
        if let Some(wait) = queue_wait(k, ctx, now) {
            return FlushAction::Sleep(wait);
        }
        if write_some_buffers(k, ctx, Who::Bdflush) && balance_dirty_state(k) >= 0 {
            return FlushAction::More;
        }
        k.wbs[0].wanted = false;
    }
    if interval == 0 {
        return FlushAction::Sleep(u64::MAX / 4);
    }
    FlushAction::Sleep(bd(k).kupdate_at.saturating_sub(ctx.clock()).max(1))
}

/// The flusher's `__get_request_wait` before its next batch, on the disk of the head buffer.
fn queue_wait(k: &mut Kernel, ctx: &Ctx, now: u64) -> Option<u64> {
    let b = *bd(k).dirty.front()?;
    let d = k.files[b.file as usize].disk;
    let wait = crate::page_writeback::queue_full_wait(k, d, now)?;
    crate::vmscan::write_submitted(k, ctx, 0, wait);
    Some(wait)
}

#[cfg(test)]
mod tests;
