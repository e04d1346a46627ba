//! Dirty-page accounting and the flusher (`mm/page-writeback.c`, `fs/fs-writeback.c`):
//! dirty thresholds from `dirty_ratio`/`dirty_background_ratio`, writers throttled in
//! `balance_dirty_pages`, a flusher writing inodes oldest-dirtied first.

use crate::kernel::{Ctx, IoDone, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::trace::Tracepoint;

/// How much queued work a block device accepts before a submitter blocks in
/// `get_request_wait` (the request queue's nr_requests, expressed as time): 250 ms.
pub const MAX_BACKLOG_NS: u64 = 250_000_000;

/// A write was queued to complete at `done` on `disk`: if the device is backed up past the
/// queue's limit, the submitter sleeps until there is room. Under a 2.4 queue's bound (sectors
/// or requests) the limit is the disk's own (`Disk::throttle_wake`: the submission's
/// `__get_request_wait`).
pub fn congestion_wait_on_submit(ctx: &mut Ctx, disk: &crate::disk::Disk, done: u64) {
    if let Some(wake) = disk.throttle_wake() {
        ctx.sleep_ns = ctx.sleep_ns.max(wake.saturating_sub(ctx.clock()));
        return;
    }
    let backlog = done.saturating_sub(ctx.clock());
    if backlog > MAX_BACKLOG_NS {
        ctx.sleep_ns = ctx.sleep_ns.max(backlog - MAX_BACKLOG_NS);
    }
}

/// How long a flusher that would queue more writes on disk `d` at `now` waits first: under a
/// 2.4 queue's bound its `__get_request_wait`, else until the queue's time backlog is
/// under [`MAX_BACKLOG_NS`]. None: it goes on.
pub(crate) fn queue_full_wait(k: &mut Kernel, d: usize, now: u64) -> Option<u64> {
    let wait = match k.disks[d].request_wait(now, true) {
        Some(wake) => wake.saturating_sub(now),
        None => k.disks[d].queued_until().saturating_sub(now).saturating_sub(MAX_BACKLOG_NS),
    };
    (wait > 0).then_some(wait)
}

/// `set_page_dirty` (file pages are accounted; anon pages only carry the flag).
pub fn set_page_dirty(k: &mut Kernel, ctx: &Ctx, p: Pfn) {
    if k.fr.has(p, pg::DIRTY) {
        return;
    }
    k.fr.set(p, pg::DIRTY);
    if k.fr.has(p, pg::ANON) || k.fr.has(p, pg::SWAPBACKED) {
        return;
    }
    k.g.dirty += 1;
    k.ev.inc(Vm::NrDirtied);
    crate::memcontrol::mod_file_state(k, p, false, true);
    let file = k.fr.mapping[p as usize];
    if k.tracing {
        let (bdi, index) = (k.files[file as usize].disk, k.fr.index[p as usize] as u64);
        k.trace_ctx(ctx, Tracepoint::WritebackDirty { bdi, ino: file, index });
    }
    let f = &mut k.files[file as usize];
    f.nr_dirty += 1;
    let first = f.dirtied_when.is_none();
    if first {
        f.dirtied_when = Some(k.now);
    }
    let wb = &mut k.wbs[wb_of(k.disk_wb.as_slice(), f.disk)];
    wb.nr_dirty += 1;
    if first {
        wb.dirty_inodes.push_back((k.now, file));
    }
}

/// A file page stopped being dirty (written, or truncated).
pub fn account_clean(k: &mut Kernel, p: Pfn, file: u32) {
    k.g.dirty -= 1;
    crate::memcontrol::mod_file_state(k, p, false, false);
    let f = &mut k.files[file as usize];
    f.nr_dirty -= 1;
    if f.nr_dirty == 0 {
        f.dirtied_when = None;
    }
    k.wbs[wb_of(k.disk_wb.as_slice(), f.disk)].nr_dirty -= 1;
}

/// `machine.foreign_dirty`: the machine's other writers' dirty page cache, present when the run
/// starts — every page of `file` allocated, in the page cache on the file LRU, charged to the
/// root group and dirty since time 0. They count in the dirty thresholds and in
/// `get_nr_dirty_pages`, their disk's flusher writes them, and their completions are the
/// node's like any other (`acct_reclaim_writeback`). The run's counters and kernel profile do
/// not count their allocation and dirtying: that happened before it.
pub fn dirty_foreign(k: &mut Kernel, file: u32) -> Result<(), String> {
    let (ev, prof) = (k.ev.clone(), k.prof.clone());
    let mut ctx = Ctx::default();
    for idx in 0..k.files[file as usize].pages.len() as u64 {
        let p = k
            .alloc_pages(&mut ctx, crate::page_alloc::Gfp::highuser_movable(), 0)
            .map_err(|_| format!("no memory for page {idx} of {}", k.files[file as usize].pages.len()))?;
        k.fr.set(p, pg::UPTODATE);
        k.add_to_page_cache(&mut ctx, file, idx, p);
        set_page_dirty(k, &ctx, p);
    }
    (k.ev, k.prof) = (ev, prof);
    Ok(())
}

/// Pages that may be dirtied (`global_dirtyable_memory`): free + file LRU pages.
pub fn dirtyable(k: &Kernel) -> u64 {
    (k.nr_free_pages() + k.g.file - k.g.shmem).max(1)
}

pub fn thresholds(k: &Kernel) -> (u64, u64) {
    let d = dirtyable(k);
    let t = &k.profile.tunables;
    (d * t.dirty_background_ratio / 100, d * t.dirty_ratio / 100)
}

/// `balance_dirty_pages`: over the background threshold wake the flusher; over the hard
/// threshold the writer pauses for about the time the disk needs to write its excess.
pub fn balance_dirty_pages(k: &mut Kernel, ctx: &mut Ctx, file: u32) {
    crate::ext4_page_io::catch_up(k, ctx.clock());
    let (bg, hard) = thresholds(k);
    let dirty = k.g.dirty + k.g.writeback;
    // A writer in a v2 group is held to its group's domain as well (cgroup writeback): the
    // stricter of the two decides.
    let (mut over_bg, mut over_hard) = (dirty > bg, dirty > hard);
    let g = crate::memcontrol::ctx_memcg(k, ctx);
    if let Some((md, mbg, mhard)) = crate::memcontrol::wb_domain(k, g, dirtyable(k), dirty) {
        over_bg |= md > mbg;
        over_hard |= md > mhard;
    }
    if over_bg {
        // wb_start_background_writeback of the inode's own writeback context.
        wake_flusher(k, wb_of(&k.disk_wb, k.files[file as usize].disk));
    }
    if over_hard {
        let disk = k.files[file as usize].disk;
        // The kernel scales by the device's measured write bandwidth (`wb->avg_write_bandwidth`).
        let bw = k.disks[disk].write_bandwidth_bps().max(1);
        // Pause proportional to 32 pages' writeout (MIN_PAUSE..MAX_PAUSE = 200 ms).
        let pause = (32 * 4096 * 1_000_000_000 / bw).clamp(1_000_000, 200_000_000);
        ctx.sleep_ns += pause;
    }
}

/// A flusher's writeback context (`struct bdi_writeback`, include/linux/backing-dev-defs.h):
/// its dirty inodes, its work and the task that runs its `wb_workfn`. 6.x gives every backing
/// device its own, written in parallel (fs/fs-writeback.c `wb_workfn` runs per wb on `bdi_wq`).
#[derive(Clone, Debug)]
pub struct Wb {
    /// The flusher should run (dirty pages over the background threshold).
    pub wanted: bool,
    /// Pages of `WB_SYNC_NONE` work it still has from reclaim's `wakeup_flusher_threads`,
    /// written whatever the thresholds and the inodes' age.
    pub work: u64,
    /// `WB_start_all`: write everything dirty when the flusher next runs (6.8's reclaim wakeup).
    pub start_all: bool,
    /// The start-all work's `dirtied_before`: when it began (fs/fs-writeback.c `wb_writeback`
    /// takes `jiffies` once for work neither kupdate nor background). `queue_io` moves only
    /// inodes dirtied by then, so an inode the flusher cleaned and the writer dirtied again is
    /// left for the next work, and the work ends with pages unspent.
    pub dirtied_before: Option<u64>,
    /// Its chunk the writeback throttle interrupted: (file, pages it has left).
    pub chunk: Option<(u32, u64)>,
    /// The io_end it is filling.
    pub io_end: OpenIoEnd,
    /// Dirty inodes in the order they were dirtied (`b_dirty`): (dirtied_when, file). Entries
    /// whose file was cleaned or re-dirtied since are stale and skipped by the flusher.
    pub dirty_inodes: std::collections::VecDeque<(u64, u32)>,
    /// Dirty pages of its inodes (what `wb_has_dirty_io` tells).
    pub nr_dirty: u64,
    pub task: usize,
}

impl Default for Wb {
    fn default() -> Self {
        Wb {
            wanted: false,
            work: 0,
            start_all: false,
            dirtied_before: None,
            chunk: None,
            io_end: OpenIoEnd::default(),
            dirty_inodes: Default::default(),
            nr_dirty: 0,
            task: usize::MAX,
        }
    }
}

/// The writeback context of `disk` (`inode_to_wb` for one of its files).
#[inline]
pub fn wb_of(disk_wb: &[usize], disk: usize) -> usize {
    disk_wb.get(disk).copied().unwrap_or(0)
}

/// Make flusher `w` runnable; it decides in `flusher_pass` what, if anything, to write.
pub fn wake_flusher(k: &mut Kernel, w: usize) {
    k.wbs[w].wanted = true;
    if k.wbs[w].task != usize::MAX {
        k.wakeups.push(k.wbs[w].task);
    }
}

/// Direct reclaim's work item, 2.6.36 `wakeup_flusher_threads(laptop_mode ? 0 : total_scanned)`
/// in `do_try_to_free_pages` (`__bdi_start_writeback` queues `nr_pages` of WB_SYNC_NONE work,
/// not for_background, no `older_than_this`): the flusher writes `nr_pages` more, whatever the
/// thresholds and the inodes' age. The kernel queues one item per bdi with dirty pages; vmlab's
/// one flusher serves every disk from one count, so the items of several disks are one.
/// 2.6.26's `wakeup_pdflush(nr_pages)` is the same work: `background_writeout(min_pages)` writes
/// at least `min_pages`, and on while dirty pages are over the background threshold, with no
/// age cut-off. That is a pdflush thread of its own, and `pdflush_operation` drops the work
/// when all are busy; vmlab's one flusher adds it to its count instead.
pub fn queue_flusher_work(k: &mut Kernel, nr_pages: u64) {
    for w in 0..k.wbs.len() {
        k.wbs[w].work += nr_pages;
        // 2.6.36's wb_writeback sets older_than_this for kupdate work only.
        k.wbs[w].dirtied_before = None;
        wake_flusher(k, w);
    }
}

/// `get_nr_dirty_pages` (fs/fs-writeback.c, 2.6.37 to 6.x): the dirty pages plus every inode in
/// use (`get_nr_dirty_inodes`, fs/inode.c: `nr_inodes - nr_unused`, "not actually dirty
/// inodes, but a wild approximation"), because writing an inode can dirty its block device's
/// cache. It sizes the work of reclaim's `WB_start_all` and of the periodic flush, so on a host
/// with ~100,000 inodes in use one wakeup writes that much more of the workload's file than it
/// had dirty. The scenario's own few inodes are left out: the machine's count dominates.
pub fn get_nr_dirty_pages(k: &Kernel) -> u64 {
    k.g.dirty + k.inodes_in_use
}

/// 6.8 `wakeup_flusher_threads(WB_REASON_VMSCAN)`: `wb_start_writeback` sets `WB_start_all`,
/// and the flusher writes as many pages as `get_nr_dirty_pages` counts when it runs
/// (`wb_check_start_all`, fs/fs-writeback.c), whether or not they are over the background
/// threshold or old enough. It does so on every backing device with dirty data
/// (`__wakeup_flusher_threads_bdi` for each bdi on `bdi_list` that `bdi_has_dirty_io`), so a
/// reclaimer that met its own file's dirty pages also sets every other disk writing.
pub fn wakeup_flusher_threads(k: &mut Kernel) {
    for w in 0..k.wbs.len() {
        // One WB_start_all pending or in flight at a time: a wakeup while the work runs is
        // dropped (wb_start_writeback; the bit is cleared after wb_check_start_all's
        // wb_writeback). The first context serves the disks without their own and is always
        // woken, as the one flusher was.
        let wb = &k.wbs[w];
        if wb.start_all || wb.work > 0 || (w > 0 && wb.nr_dirty == 0) {
            continue;
        }
        k.wbs[w].start_all = true;
        wake_flusher(k, w);
    }
}

/// Start writeback of one dirty file page (part of a run submitted by the caller).
fn start_writeback(k: &mut Kernel, p: Pfn) {
    let file = k.fr.mapping[p as usize];
    k.fr.clear(p, pg::DIRTY);
    account_clean(k, p, file);
    k.fr.set(p, pg::WRITEBACK);
    k.g.writeback += 1;
    let d = k.files[file as usize].disk;
    k.disks[d].wb.nr_writeback += 1;
    crate::memcontrol::mod_file_state(k, p, true, true);
}

/// 2.4 `create_bounce` for a WRITE: each HighMem page gets a lowmem page and its data is copied
/// into it (`copy_from_high_bh`) before the request goes out; `bounce_end_io_write` frees it.
/// A page from the emergency pool (allocation failed) is copied too.
fn bounce_write(k: &mut Kernel, ctx: &mut Ctx, pages: &[Pfn]) -> Vec<Pfn> {
    let mut out = Vec::new();
    for &p in pages {
        if k.zones[k.zone_of(p)].kind != crate::mmzone::ZoneType::HighMem {
            continue;
        }
        let b = k.create_bounce(ctx, p);
        k.charge(ctx, KFunc::WritebackSbInodes, k.cost.copy_page);
        if b != crate::mm_types::NIL {
            out.push(b);
        }
    }
    out
}

/// Write `pages` (consecutive indices of `file` starting at `first`): one request, or under
/// 6.8's queue the requests the writer's plug builds from its bios (blk.rs). Returns when the
/// last of them completes (0 for a batch whose io_end is still open).
pub fn submit_write(k: &mut Kernel, ctx: &mut Ctx, file: u32, first: u64, mut pages: Vec<Pfn>) -> u64 {
    for &p in &pages {
        start_writeback(k, p);
    }
    let bounce = if k.profile.bounce_highmem_io { bounce_write(k, ctx, &pages) } else { Vec::new() };
    let f = &k.files[file as usize];
    let (disk, base) = (f.disk, f.disk_offset + first * 4096);
    let bytes = pages.len() as u64 * 4096;
    let mut rqs = Vec::new();
    if !k.disks[disk].plug(&pages, crate::blk::BioShape::Vecs, true, &mut rqs) {
        rqs.push(crate::blk::PlugRq { first: 0, pages: pages.len(), segs: pages.len() as u32 });
    }
    let n = pages.len() as u64;
    let mut t = 0;
    let io_end = k.disks[disk].io_end_pages as usize;
    if io_end > 0 && ctx.is_flusher && !k.disks[disk].holds_writes() {
        t = add_to_io_end(k, ctx, (disk, file, first, base), &rqs, &pages, io_end);
    } else if io_end > 0 && rqs.len() > 1 && !k.disks[disk].holds_writes() {
        t = submit_io_ends(k, ctx, disk, base, &rqs, pages, io_end);
    } else {
        let lo = k.disks[disk].loop_worker;
        for rq in &rqs {
            let off = base + rq.first as u64 * 4096;
            // One request (every queue but 6.8's, and most of its batches) completes the batch's own Vec.
            let mine =
                if rqs.len() == 1 { std::mem::take(&mut pages) } else { pages[rq.first..rq.first + rq.pages].to_vec() };
            if lo {
                let end = crate::loop_dev::LoopEnd::Pages(mine);
                crate::loop_dev::queue_cmd(k, ctx, disk, off, rq.pages as u64 * 4096, rq.segs, end);
                continue;
            }
            let done = k.disks[disk].submit_segs(ctx.clock(), off, rq.pages as u64 * 4096, rq.segs, true);
            t = t.max(done);
            k.queue_io_done(done, disk, mine, true);
        }
    }
    let cpu = rqs.len() as u64 * k.cost.io_submit + n * k.cost.lru_scan;
    k.charge(ctx, KFunc::WritebackSbInodes, cpu);
    k.ev.add(Vm::Pgpgout, bytes / 1024);
    k.events += n;
    if !bounce.is_empty() {
        k.io_queue.push((t, IoDone::Bounce(bounce)));
    }
    let before = ctx.sleep_ns;
    if !ctx.is_flusher {
        congestion_wait_on_submit(ctx, &k.disks[disk], t);
    }
    crate::vmscan::write_submitted(k, ctx, n, ctx.sleep_ns - before);
    t
}

/// The requests of one contiguous batch when the file system ends writeback per io_end (ext4
/// with `dioread_nolock`): `ext4_end_bio` only drops the io_end's reference, and the folios'
/// writeback ends in `ext4_end_io_rsv_work` once the last bio has completed and the unwritten
/// extent is converted (fs/ext4/page-io.c). Each request still completes — and interrupts — on
/// its own; the pages of every `io_end` of them complete at the latest of their requests.
/// No conversion delay is added: no source gives one (the host's work started 0.01 ms after
/// being queued, median, dirty23). Returns the last completion.
fn submit_io_ends(
    k: &mut Kernel,
    ctx: &mut Ctx,
    disk: usize,
    base: u64,
    rqs: &[crate::blk::PlugRq],
    mut pages: Vec<Pfn>,
    io_end: usize,
) -> u64 {
    let (mut t, mut end_at, mut from, mut first_rq) = (0, 0, 0, 0);
    let whole = pages.len() <= io_end;
    let lo = k.disks[disk].loop_worker;
    let mut slot = None;
    for (i, rq) in rqs.iter().enumerate() {
        if lo && slot.is_none() {
            slot = Some(k.loops.open_io_end(disk));
        }
        let done = submit_io_end_bio(k, ctx, disk, base, rq, slot);
        t = t.max(done);
        end_at = end_at.max(done);
        let upto = rq.first + rq.pages;
        // mpage_map_and_submit_extent maps at most io_end blocks into one io_end; a request that
        // crosses the boundary is counted with the io_end it ends in (the kernel splits the bio).
        let last = i + 1 == rqs.len();
        if last || upto - from >= io_end {
            let mine = if whole { std::mem::take(&mut pages) } else { pages[from..upto].to_vec() };
            let bios: Vec<u32> = rqs[first_rq..=i].iter().map(|r| r.pages as u32).collect();
            match slot.take() {
                Some(n) => crate::loop_dev::put_io_end(k, n, ctx.clock(), mine, &bios),
                None => crate::ext4_page_io::release_io_end(k, disk, end_at, mine, bios.iter().copied()),
            }
            (end_at, from, first_rq) = (0, upto, i + 1);
        }
    }
    t
}

/// One request of an io_end's batch: submitted, and its bio's interrupt queued with no page
/// ending in it (`ext4_end_bio` only drops the io_end's reference), so it is not a write that
/// lands for `io_queue_first_write`. Returns its completion.
fn submit_io_end_bio(
    k: &mut Kernel,
    ctx: &Ctx,
    disk: usize,
    base: u64,
    rq: &crate::blk::PlugRq,
    slot: Option<u32>,
) -> u64 {
    let off = base + rq.first as u64 * 4096;
    if let Some(n) = slot {
        // A loop device: the worker submits it, and its completion counts toward io_end `n` then.
        let end = crate::loop_dev::LoopEnd::IoEnd(n);
        crate::loop_dev::queue_cmd(k, ctx, disk, off, rq.pages as u64 * 4096, rq.segs, end);
        return 0;
    }
    let done = k.disks[disk].submit_segs(ctx.clock(), off, rq.pages as u64 * 4096, rq.segs, true);
    let irq = !k.disks[disk].last_merged();
    k.io_queue.push((done, IoDone::Write { pages: Vec::new(), disk, irq }));
    done
}

/// The io_end the flusher is filling (ext4's `mpd->io_submit.io_end`): `ext4_do_writepages`
/// takes a new one for each extent it maps, of at most `MAX_WRITEPAGES_EXTENT_LEN` blocks and
/// no more than the chunk has left (`mpage_prepare_extent_to_map`), and submits the extent's
/// bios — BIO_MAX_VECS pages each, vmlab's 256-page runs — into it, sleeping in the writeback
/// throttle between them as it must. So an io_end spans runs, and flusher passes when the
/// throttle ends one, and its pages end writeback only once its last request has completed
/// and it was put (`ext4_put_io_end_defer` at the extent's end; fs/ext4/page-io.c, inode.c).
#[derive(Clone, Debug, Default)]
pub struct OpenIoEnd {
    disk: usize,
    file: u32,
    /// The page index right after its last page: the next run continues it only from there.
    next: u64,
    pages: Vec<Pfn>,
    /// Its requests' page counts, in submission order (`ext4_release_io_end` ends them last first).
    bios: Vec<u32>,
    /// Its last request's completion so far.
    end_at: u64,
    /// On a loop device, its slot among the io_ends waiting for the worker (`loop_dev`).
    loop_slot: Option<u32>,
}

/// Submit the flusher's run `(disk, file, first index, disk offset)`, made of `rqs`, into the
/// open io_end (a new one if the run does not continue it); each request still completes, and
/// interrupts, on its own. Returns the last completion.
fn add_to_io_end(
    k: &mut Kernel,
    ctx: &mut Ctx,
    (disk, file, first, base): (usize, u32, u64, u64),
    rqs: &[crate::blk::PlugRq],
    pages: &[Pfn],
    io_end: usize,
) -> u64 {
    let w = wb_of(&k.disk_wb, disk);
    let e = &k.wbs[w].io_end;
    if !e.pages.is_empty() && (e.disk, e.file, e.next) != (disk, file, first) {
        put_io_end(k, ctx, w);
    }
    let mut t = 0;
    for rq in rqs {
        if k.disks[disk].loop_worker && k.wbs[w].io_end.loop_slot.is_none() {
            k.wbs[w].io_end.loop_slot = Some(k.loops.open_io_end(disk));
        }
        let slot = k.wbs[w].io_end.loop_slot;
        let done = submit_io_end_bio(k, ctx, disk, base, rq, slot);
        t = t.max(done);
        let e = &mut k.wbs[w].io_end;
        (e.disk, e.file) = (disk, file);
        e.pages.extend_from_slice(&pages[rq.first..rq.first + rq.pages]);
        e.bios.push(rq.pages as u32);
        e.end_at = e.end_at.max(done);
        e.next = first + (rq.first + rq.pages) as u64;
        if e.pages.len() >= io_end {
            put_io_end(k, ctx, w);
        }
    }
    t
}

/// The submitter's `ext4_put_io_end_defer` at the end of an extent: the io_end's pages end
/// writeback together at its last request's completion, or now if that has passed.
pub fn put_io_end(k: &mut Kernel, ctx: &Ctx, w: usize) {
    let e = &mut k.wbs[w].io_end;
    if e.pages.is_empty() {
        return;
    }
    let (pages, disk, at) = (std::mem::take(&mut e.pages), e.disk, e.end_at.max(ctx.clock()));
    let bios = std::mem::take(&mut e.bios);
    e.end_at = 0;
    match e.loop_slot.take() {
        Some(n) => crate::loop_dev::put_io_end(k, n, ctx.clock(), pages, &bios),
        None => crate::ext4_page_io::release_io_end(k, disk, at, pages, bios.iter().copied()),
    }
    // The list's buffer, kept for the next io_end.
    k.wbs[w].io_end.bios = bios;
    k.wbs[w].io_end.bios.clear();
}

/// 6.8's `writeback_chunk_size` for `WB_SYNC_NONE` work of `nr_pages` on `disk` (fs/fs-writeback.c;
/// Wu Fengguang, "writeback: scale IO chunk size up to half device bandwidth", 2011): half a
/// second of the device's estimated bandwidth, at most an eighth of the dirty limit and the
/// work's pages, rounded down to whole `MIN_WRITEBACK_PAGES` after adding one (so never
/// less than 1024). Before it, 2.6's `MAX_WRITEBACK_PAGES` 1024 a pass.
pub fn writeback_chunk_size(k: &Kernel, disk: usize, nr_pages: u64) -> u64 {
    if !k.profile.writeback_chunk_bandwidth {
        return MIN_WRITEBACK_PAGES;
    }
    // global_wb_domain.dirty_limit follows the hard threshold (up at once, down slowly).
    let pages = (k.disks[disk].wb.avg_write_bandwidth / 2).min(thresholds(k).1 / DIRTY_SCOPE).min(nr_pages);
    (pages + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
}

/// `MIN_WRITEBACK_PAGES`: 4 MiB.
pub const MIN_WRITEBACK_PAGES: u64 = 1024;
/// `DIRTY_SCOPE`.
const DIRTY_SCOPE: u64 = 8;

/// `pageout` of one dirty file page from reclaim; returns when its write completes.
pub fn writepage(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) -> u64 {
    let file = k.fr.mapping[p as usize];
    let idx = k.fr.index[p as usize] as u64;
    let done = submit_write(k, ctx, file, idx, vec![p]);
    k.ev.inc(Vm::NrVmscanWrite);
    done
}

/// `end_page_writeback`.
pub fn end_page_writeback(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    end_writeback(k, ctx, p, true);
}

/// `end_page_writeback`; `may_free`: nothing else holds the page (a reclaimer that has it
/// isolated holds a reference, so the end of its write does not free it).
pub fn end_writeback(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, may_free: bool) {
    if !k.fr.test_clear(p, pg::WRITEBACK) {
        return;
    }
    k.g.writeback -= 1;
    // NR_WRITTEN counts every page whose writeback ends, swap included.
    k.ev.inc(Vm::NrWritten);
    let anon = k.fr.has(p, pg::ANON);
    let file = !anon && !k.fr.has(p, pg::SWAPBACKED);
    if file {
        crate::memcontrol::mod_file_state(k, p, true, false);
        // __folio_end_writeback: WB_WRITTEN, what the bandwidth estimate counts.
        let wb = &mut k.disks[k.files[k.fr.mapping[p as usize] as usize].disk].wb;
        wb.nr_writeback = wb.nr_writeback.saturating_sub(1);
        wb.written += 1;
    }
    if may_free && file && k.files[k.fr.mapping[p as usize] as usize].unlinked && k.fr.mapcount[p as usize] == 0 {
        crate::vmscan::del_page_from_lru(k, p);
        k.remove_from_page_cache(p, 0);
        k.free_pages(ctx, p, 0);
        return;
    }
    if may_free
        && anon
        && k.fr.mapcount[p as usize] == 0
        && crate::swap_state::page_swap_slot(k, p).map(|s| k.swap.as_ref().map(|sw| sw.count[s as usize]).unwrap_or(0))
            == Some(0)
    {
        // Its process went away during the write: nothing references the page any more.
        crate::swap_state::free_anon_page(k, ctx, p);
        return;
    }
    if k.fr.test_clear(p, pg::RECLAIM) {
        crate::vmscan::rotate_reclaimable_page(k, p);
    }
}

/// What the flusher does next.
pub enum FlushAction {
    /// Wrote something; run again.
    More,
    /// Nothing over the thresholds: sleep until woken or this long.
    Sleep(u64),
}

/// Start loading what the next passes read first, one step of the chain per pass: the inode
/// three places down b_dirty, the page-index slot its writeback starts at two places down (that
/// inode was asked for a pass ago), and that page's flags one place down. A file-heavy run's
/// flusher takes one small inode a pass, and these three loads, each waiting for the one before,
/// were most of its host time. A hint only: nothing simulated is read for a decision or written.
#[inline]
fn prefetch_next_inodes(k: &Kernel, w: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        fn hint<T>(x: *const T) {
            // SAFETY: a prefetch never faults and has no architectural effect.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(x as *const i8) }
        }
        let q = &k.wbs[w].dirty_inodes;
        // The slot a pass over `f` looks at first.
        fn first(f: &crate::filemap::File) -> Option<&Pfn> {
            f.pages.get(f.writeback_index as usize).or(f.pages.first())
        }
        if let Some(f) = q.get(3).and_then(|&(_, fi)| k.files.get(fi as usize)) {
            // The struct spans up to five cache lines; the pass reads fields all over it.
            let base = f as *const crate::filemap::File as *const u8;
            let size = std::mem::size_of::<crate::filemap::File>();
            for off in (0..size).step_by(64).chain([size - 1]) {
                hint(base.wrapping_add(off));
            }
        }
        if let Some(slot) = q.get(2).and_then(|&(_, fi)| k.files.get(fi as usize)).and_then(first) {
            hint(slot as *const Pfn);
        }
        if let Some(&p) = q.get(1).and_then(|&(_, fi)| k.files.get(fi as usize)).and_then(first) {
            if let Some(fl) = k.fr.flags.get(p as usize) {
                hint(fl as *const u32);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (k, w);
}

/// One pass of `wb_writeback`: pick the oldest-dirtied inode that is expired, needed for the
/// background threshold or for work reclaim queued, write a chunk of its dirty pages in
/// index order (`writeback_chunk_size`; a chunk the writeback throttle interrupted goes on
/// in the next pass, as `ext4_writepages` goes on after its sleep).
pub fn flusher_pass(k: &mut Kernel, ctx: &mut Ctx, w: usize) -> FlushAction {
    // Running again ends a queue sleep an observer counts (a dirtier's wakeup may cut it short).
    crate::vmscan::write_submitted(k, ctx, 0, 0);
    let (bg, _) = thresholds(k);
    let expire = k.profile.tunables.dirty_expire_centisecs * 10_000_000;
    let interval = k.profile.tunables.dirty_writeback_centisecs * 10_000_000;
    let now = ctx.clock();
    if std::mem::take(&mut k.wbs[w].start_all) {
        k.wbs[w].work = get_nr_dirty_pages(k);
        k.wbs[w].dirtied_before = Some(now);
    }
    let over_bg = k.g.dirty > bg
        || (k.memcg.active() && crate::memcontrol::any_wb_domain_over_bg(k, dirtyable(k), k.g.dirty + k.g.writeback));
    // Work items move dirty inodes to b_io oldest first like the rest, with no age cut-off but
    // the start-all work's dirtied_before.
    let mut work = k.wbs[w].work > 0;
    prefetch_next_inodes(k, w);
    // The oldest-dirtied inode is at the front of b_dirty (stale entries dropped on the way).
    let mut pick: Option<(u64, usize)> = None;
    while let Some(&(when, fi)) = k.wbs[w].dirty_inodes.front() {
        let f = &k.files[fi as usize];
        if f.dirtied_when != Some(when) || f.nr_dirty == 0 {
            k.wbs[w].dirty_inodes.pop_front();
            continue;
        }
        if work && k.wbs[w].dirtied_before.is_some_and(|cut| when > cut) {
            // Even the oldest was dirtied after the work began (the flusher caught the writer,
            // cleaned the inode, and it was dirtied again): queue_io moves nothing, b_more_io
            // is empty, and wb_writeback returns; wb_check_start_all clears WB_start_all, so
            // reclaim's next wakeup starts a new work. Under reclaim, that wakeup comes only
            // when the writer's reclaim meets a batch of the pages dirtied meanwhile.
            k.wbs[w].work = 0;
            k.wbs[w].dirtied_before = None;
            work = false;
        }
        if over_bg || work || now.saturating_sub(when) >= expire {
            pick = Some((when, fi as usize));
        }
        break;
    }
    let Some((_, fi)) = pick else {
        // Nothing left to write (fsync may have taken what the throttled chunk had left).
        k.wbs[w].chunk = None;
        put_io_end(k, ctx, w);
        k.wbs[w].wanted = false;
        k.wbs[w].work = 0;
        return FlushAction::Sleep(interval.max(1_000_000));
    };
    let file = fi as u32;
    // The request queue is finite (get_request_wait): a flusher woken early by a dirtier while
    // the disk still has over ~0.25 s of work queued waits instead of queueing without bound.
    let d = k.files[fi].disk;
    if let Some(wait) = queue_full_wait(k, d, now) {
        put_io_end(k, ctx, w);
        crate::vmscan::write_submitted(k, ctx, 0, wait);
        return FlushAction::Sleep(wait);
    }
    // do_writepages: the bandwidth estimate restarts after an idle second, and is refreshed at
    // the end (below).
    k.disks[d].wb.estimate_start(now);
    let chunk = match k.wbs[w].chunk.take() {
        Some((f, left)) if f == file => left,
        _ => {
            let nr_pages = if work {
                k.wbs[w].work
            } else if over_bg {
                u64::MAX
            } else {
                // wb_check_old_data_flush.
                get_nr_dirty_pages(k)
            };
            writeback_chunk_size(k, d, nr_pages)
        }
    };
    let mut budget = chunk;
    let n = k.files[fi].pages.len() as u64;
    let mut idx = k.files[fi].writeback_index.min(n);
    let mut scanned = 0u64;
    let mut run: Vec<Pfn> = Vec::new();
    let mut run_start = 0u64;
    let mut throttled = None;
    while budget > 0 && scanned < n {
        if idx >= n {
            idx = 0;
        }
        let p = k.files[fi].pages[idx as usize];
        let dirty = p != NIL && k.fr.flags[p as usize] & (pg::DIRTY | pg::WRITEBACK | pg::LOCKED) == pg::DIRTY;
        if dirty && run.is_empty() {
            // 6.8's writeback throttle holds the flusher before the request it would start
            // (blk_wbt.rs): it has not marked this page yet, and takes it up from here.
            throttled = k.disks[d].wbt_flusher_wait(ctx.clock());
            if throttled.is_some() {
                break;
            }
        }
        if dirty {
            if k.tracing {
                let wbc = Tracepoint::WbcWritepage {
                    bdi: d,
                    nr_to_write: budget as i64,
                    sync_all: false,
                    kupdate: !over_bg && !work,
                    background: over_bg && !work,
                    older_ns: (!over_bg).then(|| now.saturating_sub(expire)),
                };
                k.trace_ctx(ctx, wbc);
            }
            if run.is_empty() {
                run_start = idx;
            }
            run.push(p);
            budget -= 1;
        } else if !run.is_empty() {
            submit_write(k, ctx, file, run_start, std::mem::take(&mut run));
        }
        if !run.is_empty() && (idx + 1 == n || run.len() >= 256) {
            submit_write(k, ctx, file, run_start, std::mem::take(&mut run));
        }
        idx += 1;
        scanned += 1;
    }
    if !run.is_empty() {
        submit_write(k, ctx, file, run_start, run);
    }
    k.files[fi].writeback_index = idx;
    k.wbs[w].work = k.wbs[w].work.saturating_sub(chunk - budget);
    k.charge(ctx, KFunc::WritebackSbInodes, scanned * k.cost.pte_walk);
    if let Some(t) = throttled {
        // Asleep in the throttle inside ext4_writepages: the chunk and its io_end stay open.
        if budget > 0 {
            k.wbs[w].chunk = Some((file, budget));
        }
        if t == crate::blk_wbt::UNKNOWN {
            // The completion that wakes it is a loop request its worker has not submitted:
            // asleep until the worker has run (it wakes it), then it asks again.
            let task = k.wbs[w].task;
            crate::loop_dev::wait_for_worker(k, d, task);
            return FlushAction::Sleep(u64::MAX / 4);
        }
        return FlushAction::Sleep(t.saturating_sub(ctx.clock()).max(1));
    }
    put_io_end(k, ctx, w);
    k.disks[d].wb.update_if_due(ctx.clock());
    if budget == chunk {
        // Everything dirty is already under writeback: wait for the disk.
        return FlushAction::Sleep(10_000_000);
    }
    // The request queue is finite: a flusher that has filled ~0.25 s of disk work waits
    // (get_request_wait) instead of queueing without bound.
    let d = k.files[fi].disk;
    if let Some(wait) = queue_full_wait(k, d, now) {
        crate::vmscan::write_submitted(k, ctx, 0, wait);
        return FlushAction::Sleep(wait);
    }
    FlushAction::More
}

/// `vfs_fsync`: start writeback of the file's dirty pages, in runs of consecutive ones; returns
/// when its disk's queue (and so the last of them) completes and, on a disk whose writeback
/// ends per io_end, when the worker has ended them (`filemap_fdatawait` on PG_writeback).
pub fn vfs_fsync(k: &mut Kernel, ctx: &mut Ctx, f: u32) -> u64 {
    let n = k.files[f as usize].pages.len();
    let mut run = Vec::new();
    let mut first = 0;
    // filemap_fdatawrite_range: WB_SYNC_ALL, nr_to_write LONG_MAX, the whole file, through
    // do_writepages (the bandwidth estimate's start and refresh).
    let d = k.files[f as usize].disk;
    k.disks[d].wb.estimate_start(ctx.clock());
    let mut nr_to_write = i64::MAX;
    for idx in 0..n {
        let p = k.files[f as usize].pages[idx];
        let dirty = p != NIL && k.fr.flags[p as usize] & (pg::DIRTY | pg::WRITEBACK) == pg::DIRTY;
        if dirty {
            if k.tracing {
                let bdi = k.files[f as usize].disk;
                let wbc = Tracepoint::WbcWritepage {
                    bdi,
                    nr_to_write,
                    sync_all: true,
                    kupdate: false,
                    background: false,
                    older_ns: None,
                };
                k.trace_ctx(ctx, wbc);
                nr_to_write -= 1;
            }
            if run.is_empty() {
                first = idx as u64;
            }
            run.push(p);
        } else if !run.is_empty() {
            submit_write(k, ctx, f, first, std::mem::take(&mut run));
        }
    }
    if !run.is_empty() {
        submit_write(k, ctx, f, first, run);
    }
    k.disks[d].wb.update_if_due(ctx.clock());
    k.disks[d].queued_until().max(k.releases.idle_at(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::{Mt, ZoneType};

    /// Dirty `n` more pages of `file` from index `*next` (page-cache pages allocated from zone 0).
    fn dirty(k: &mut Kernel, ctx: &mut Ctx, file: u32, next: &mut u64, n: u64) {
        for _ in 0..n {
            let p = k.rmqueue(0, 0, Mt::Movable).expect("a free page");
            k.fr.set(p, pg::UPTODATE);
            k.add_to_page_cache(ctx, file, *next, p);
            set_page_dirty(k, ctx, p);
            *next += 1;
        }
    }

    /// Run the flusher until it has nothing more to do now; returns the pages it wrote.
    fn flush(k: &mut Kernel, ctx: &mut Ctx) -> u64 {
        let before = k.g.writeback;
        for _ in 0..64 {
            if let FlushAction::Sleep(_) = flusher_pass(k, ctx, 0) {
                break;
            }
        }
        k.g.writeback - before
    }

    /// 6.8 `wb_start_writeback` lets one `WB_start_all` be pending or in flight at a time (the bit
    /// is cleared by `wb_check_start_all` after its `wb_writeback`, fs/fs-writeback.c; Jens
    /// Axboe, "writeback: only allow one inflight and pending full flush", 2017): a reclaimer
    /// that finds dirty pages again while the work runs does not extend it, and a wakeup after
    /// it ended starts a new one of what is dirty then.
    #[test]
    fn one_start_all_work_in_flight_at_a_time() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 65536)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
        // A device fast enough that no write waits for request-queue room.
        k.disks.push(crate::disk::Disk::preset("ssd").expect("preset"));
        let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
        let file = k.file_create("f", 1 << 30, 0, false);
        let mut next = 0;
        dirty(&mut k, &mut ctx, file, &mut next, 3000);
        wakeup_flusher_threads(&mut k);
        let chunk = writeback_chunk_size(&k, 0, 3000);
        assert!(matches!(flusher_pass(&mut k, &mut ctx, 0), FlushAction::More));
        assert_eq!(k.g.writeback, chunk, "one chunk of the work written");
        // More dirtied, and reclaim asks again while the work is in flight: dropped.
        dirty(&mut k, &mut ctx, file, &mut next, 2000);
        wakeup_flusher_threads(&mut k);
        // It writes what was dirty when it started, in whole chunks of 1024 pages (as
        // writeback_chunk_size rounds up to MIN_WRITEBACK_PAGES): three.
        let first = chunk + flush(&mut k, &mut ctx);
        assert_eq!(first, 3 * 1024, "the work writes what was dirty when it started");
        assert_eq!(k.g.dirty, 5000 - first);
        // The work is over: the next wakeup starts a new one.
        wakeup_flusher_threads(&mut k);
        assert_eq!(flush(&mut k, &mut ctx), 5000 - first);
    }

    /// `get_nr_dirty_pages` adds the inodes in use to the dirty pages (fs/fs-writeback.c,
    /// fs/inode.c `get_nr_dirty_inodes`), so reclaim's one `WB_start_all` work on a machine with
    /// many inodes in use goes on writing what the writer dirties while it runs (the inode stays
    /// dirty, its slice used up, and is requeued), where without them it stops at what was
    /// dirty when it started and waits for reclaim to wake it again.
    #[test]
    fn the_start_all_work_counts_the_inodes_in_use() {
        let run = |inodes: u64| {
            let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 65536)]);
            let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
            k.disks.push(crate::disk::Disk::preset("ssd").expect("preset"));
            k.inodes_in_use = inodes;
            let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
            let file = k.file_create("f", 1 << 30, 0, false);
            let mut next = 0;
            dirty(&mut k, &mut ctx, file, &mut next, 3000);
            wakeup_flusher_threads(&mut k);
            assert!(matches!(flusher_pass(&mut k, &mut ctx, 0), FlushAction::More));
            let chunk = k.g.writeback;
            assert!(chunk < 3000, "one chunk leaves the inode dirty: {chunk}");
            // The writer goes on while the work runs; no reclaim wakes the flusher again.
            dirty(&mut k, &mut ctx, file, &mut next, 2000);
            (chunk + flush(&mut k, &mut ctx), k.g.dirty)
        };
        // What was dirty, in whole chunks of 1024 (writeback_chunk_size rounds up).
        assert_eq!(run(0), (3 * 1024, 5000 - 3 * 1024), "the work ends with what was dirty");
        assert_eq!(run(4000), (5000, 0), "the inodes' share of the work writes the rest");
    }

    /// 6.x `wb_writeback` gives the start-all work a `dirtied_before` of its start, and `queue_io`
    /// moves only inodes dirtied by then (fs/fs-writeback.c `move_expired_inodes`,
    /// `inode_dirtied_after`): once the flusher has cleaned the inode, the writer's next page
    /// dirties it anew, after the cut, and the work ends with its pages unspent, however many
    /// inodes in use sized it; reclaim's next wakeup starts another. (An inode that never comes
    /// clean keeps its time and is written on, as in the test above.)
    #[test]
    fn the_start_all_work_ends_when_its_cleaned_inode_is_dirtied_again() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 65536)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
        k.disks.push(crate::disk::Disk::preset("ssd").expect("preset"));
        k.inodes_in_use = 100_000;
        let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
        let file = k.file_create("f", 1 << 30, 0, false);
        let mut next = 0;
        dirty(&mut k, &mut ctx, file, &mut next, 3000);
        wakeup_flusher_threads(&mut k);
        // The flusher catches the writer: everything dirty is under writeback, the inode clean.
        for _ in 0..64 {
            if k.g.dirty == 0 {
                break;
            }
            flusher_pass(&mut k, &mut ctx, 0);
        }
        assert_eq!((k.g.dirty, k.g.writeback), (0, 3000));
        assert!(k.wbs[0].work > 90_000, "the work has most of its pages left: {}", k.wbs[0].work);
        // The writer dirties the file again, after the work began.
        k.now = ctx.clock() + 1_000_000;
        dirty(&mut k, &mut ctx, file, &mut next, 2000);
        assert_eq!(flush(&mut k, &mut ctx), 0, "the work does not take the inode dirtied after it began");
        assert_eq!(k.wbs[0].work, 0, "and is over");
        ctx.now = k.now + 1_000_000;
        wakeup_flusher_threads(&mut k);
        assert_eq!(flush(&mut k, &mut ctx), 2000, "reclaim's next wakeup starts a new work");
    }

    /// One batch of 1,024 contiguous pages goes out as several requests (a queue of
    /// 128 KiB requests); with `io_end_pages` its pages end writeback in io_ends, each at the
    /// last of its requests' completions (`ext4_end_io_rsv_work` after the last bio), where
    /// without it each request's pages end as it completes.
    fn ends_of_one_chunk(io_end: u32) -> (Vec<u64>, Vec<(u64, u64)>) {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 65536)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
        let mut d = crate::disk::Disk::preset("ssd").expect("preset");
        d.set_queue(128, 128);
        d.io_end_pages = io_end;
        k.disks.push(d);
        let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
        let file = k.file_create("f", 1 << 30, 0, false);
        dirty(&mut k, &mut ctx, file, &mut 0, 1024);
        // The batch as `ext4_writepages` hands it over (the flusher's own pass stops at the
        // writeback throttle's limit first).
        let pages = k.files[file as usize].pages[..1024].to_vec();
        submit_write(&mut k, &mut ctx, file, 0, pages);
        put_io_end(&mut k, &ctx, 0);
        assert_eq!(k.g.writeback, 1024);
        let mut q = std::mem::take(&mut k.io_queue);
        q.sort_by_key(|&(t, _)| t);
        let requests =
            q.iter().filter(|(_, d)| matches!(d, IoDone::Write { irq: true, .. })).map(|&(t, _)| t).collect();
        // Deliver in time order; the pages still under writeback after each instant.
        let mut left = Vec::new();
        for (t, d) in q {
            k.now = t;
            crate::ext4_page_io::catch_up(&mut k, t);
            k.io_complete(&mut ctx, d);
            match left.last_mut() {
                Some((at, n)) if *at == t => *n = k.g.writeback,
                _ => left.push((t, k.g.writeback)),
            }
        }
        (requests, left)
    }

    /// The flusher's first chunk on a fresh disk: with `writeback_chunk_bandwidth` (3.1+) half
    /// a second of `INIT_BW` (bounded by the dirty limit and the work), without it the fixed
    /// `MAX_WRITEBACK_PAGES`.
    #[test]
    fn the_flushers_chunk_is_half_a_second_of_the_estimated_bandwidth() {
        let written = |writeback_chunk_bandwidth: bool| {
            let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 1 << 20)]);
            let p = crate::profiles::Profile { writeback_chunk_bandwidth, ..crate::profiles::default_row() };
            let mut k = Kernel::new(p, cfg, 1).expect("kernel");
            k.disks.push(crate::disk::Disk::preset("ssd").expect("preset"));
            let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
            let file = k.file_create("f", 1 << 30, 0, false);
            dirty(&mut k, &mut ctx, file, &mut 0, 40_000);
            k.wbs[0].work = 40_000;
            flusher_pass(&mut k, &mut ctx, 0);
            (k.g.writeback, k.disks[0].wb.avg_write_bandwidth)
        };
        let (new, avg) = written(true);
        assert!(new > MIN_WRITEBACK_PAGES && new % MIN_WRITEBACK_PAGES == 0, "{new}");
        assert!(new <= avg / 2 + MIN_WRITEBACK_PAGES, "{new} pages against {avg} pages/s");
        assert_eq!(written(false).0, MIN_WRITEBACK_PAGES);
    }

    /// The flusher's 256-page runs go out one request each (no queue in front of the disk); with
    /// `io_end_pages` 2048 the pages of eight runs end together, at the last of their eight
    /// requests, where without it each run's end with its request.
    #[test]
    fn the_flushers_io_end_spans_its_runs() {
        let ends = |io_end: u32| {
            let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 1 << 18)]);
            let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
            let mut d = crate::disk::Disk::preset("ssd").expect("preset");
            d.io_end_pages = io_end;
            k.disks.push(d);
            let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
            let file = k.file_create("f", 1 << 30, 0, false);
            dirty(&mut k, &mut ctx, file, &mut 0, 4096);
            wakeup_flusher_threads(&mut k);
            flusher_pass(&mut k, &mut ctx, 0);
            assert_eq!(k.g.writeback, 4096, "one chunk writes them all");
            let mut q = std::mem::take(&mut k.io_queue);
            q.sort_by_key(|&(t, _)| t);
            let (mut rqs, mut groups) = (Vec::new(), Vec::<(u64, usize)>::new());
            for (t, d) in q {
                if let IoDone::Write { irq: true, .. } = &d {
                    rqs.push(t);
                }
                let n = match &d {
                    IoDone::Write { pages, .. } => pages.len(),
                    IoDone::Release { ends, .. } => *ends as usize,
                    _ => 0,
                };
                // An io_end's requests end their pages at one instant with no per-page cost.
                match groups.last_mut() {
                    Some(g) if g.0 == t && io_end > 0 => g.1 += n,
                    _ if n > 0 => groups.push((t, n)),
                    _ => {}
                }
            }
            (rqs, groups)
        };
        let (rqs, per_rq) = ends(0);
        assert_eq!(per_rq.len(), rqs.len(), "each request ends its own pages");
        assert!(rqs.len() >= 16, "{} requests", rqs.len());
        let (rqs2, grouped) = ends(2048);
        assert_eq!(rqs2, rqs, "the same requests");
        assert_eq!(grouped.iter().map(|g| g.1).collect::<Vec<_>>(), vec![2048, 2048], "{grouped:?}");
        // The first io_end ends with one of the requests, and not before eight have completed.
        assert!(rqs.contains(&grouped[0].0) && grouped[0].0 >= rqs[rqs.len() / 2 - 1], "{grouped:?} {rqs:?}");
        assert_eq!(grouped[1].0, rqs[rqs.len() - 1]);
    }

    /// `ext4_release_io_end` walks the bios last-completed first and each folio's end takes
    /// `end_writeback`: of an io_end of eight 256-page runs, the highest run ends first, 256 ends
    /// after the last request, and the lowest run — the pages nearest the inactive tail — last,
    /// 2048 ends after it; the worker's events mark its time request by request.
    #[test]
    fn an_io_ends_highest_run_ends_first_and_its_lowest_last() {
        let cfg = MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 1 << 18)]);
        let mut k = Kernel::new(crate::profiles::default_row(), cfg, 1).expect("kernel");
        let mut d = crate::disk::Disk::preset("ssd").expect("preset");
        d.io_end_pages = 2048;
        k.disks.push(d);
        k.cost.end_writeback = 500;
        let mut ctx = Ctx { is_flusher: true, ..Ctx::default() };
        let file = k.file_create("f", 1 << 30, 0, false);
        dirty(&mut k, &mut ctx, file, &mut 0, 2048);
        wakeup_flusher_threads(&mut k);
        flusher_pass(&mut k, &mut ctx, 0);
        assert_eq!(k.g.writeback, 2048);
        let mut q = std::mem::take(&mut k.io_queue);
        q.sort_by_key(|&(t, _)| t);
        let last_rq =
            q.iter().filter(|(_, d)| matches!(d, IoDone::Write { irq: true, .. })).map(|e| e.0).max().unwrap();
        let marks: Vec<(u64, u32)> = q
            .iter()
            .filter_map(|(t, d)| match d {
                IoDone::Release { ends, .. } => Some((t - last_rq, *ends)),
                _ => None,
            })
            .collect();
        assert_eq!(marks, (1..=8).map(|i| (i * 256 * 500, 256)).collect::<Vec<_>>());
        // Each run's first and last page end at their ranks' instants.
        let end = |idx: usize| k.releases.end_of(k.files[file as usize].pages[idx]).map(|t| t - last_rq);
        for run in 0..8u64 {
            let lo = (run * 256) as usize;
            let rank = (7 - run) * 256;
            assert_eq!((end(lo), end(lo + 255)), (Some((rank + 1) * 500), Some((rank + 256) * 500)), "run {run}");
        }
    }

    #[test]
    fn an_io_ends_pages_end_writeback_together_at_its_last_request() {
        let (rqs, per_rq) = ends_of_one_chunk(0);
        assert!(rqs.len() >= 8, "the chunk is split into requests: {}", rqs.len());
        // Per request: the count falls at (almost) every completion.
        assert!(per_rq.iter().filter(|&&(_, n)| n < 1024).count() >= rqs.len() / 2, "{per_rq:?}");
        let (rqs2, whole) = ends_of_one_chunk(2048);
        assert_eq!(rqs2, rqs, "the requests and their completions are the same");
        let last = *rqs.iter().max().unwrap();
        for &(t, n) in &whole {
            assert_eq!(n, if t < last { 1024 } else { 0 }, "at {t}: all end together at {last} and not before");
        }
        // Two io_ends of 512: the first half ends before the last request, none before its own last.
        let (_, halves) = ends_of_one_chunk(512);
        let steps: Vec<u64> = halves.iter().map(|&(_, n)| n).collect();
        assert!(steps.contains(&512) && steps.iter().all(|&n| n == 1024 || n == 512 || n == 0), "{steps:?}");
        assert_eq!(halves.last().unwrap(), &(last, 0));
    }
}

#[cfg(test)]
#[path = "page_writeback_bdi_tests.rs"]
mod bdi_tests;
