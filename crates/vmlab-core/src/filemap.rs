//! Files and the page cache (`mm/filemap.c`, `mm/readahead.c`, shmem): each file has its own
//! page index; reads go through readahead, writes dirty pages for the flusher.

use crate::blk::{BioShape, PlugRq};
use crate::kernel::{Ctx, IoDone, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::page_alloc::{AllocFail, Gfp};
use crate::readahead::FileRaState;
use crate::sched::{Outcome, QUANTUM_NS};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::workload::syscalls::{Progress, WriteCalls};

/// One mapping of a file into an mm (the i_mmap tree, as a list).
#[derive(Clone, Copy, Debug)]
pub struct IMmap {
    pub mm: u32,
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
}

pub struct File {
    pub name: String,
    pub size: u64,
    /// Page index → pfn (NIL when not cached).
    pub pages: Vec<Pfn>,
    /// Workingset shadows of evicted pages (allocated on first eviction).
    pub shadow: Vec<u32>,
    /// shm: page index → swap slot + 1 of a swapped-out page (allocated on first swap-out).
    pub swapped: Vec<u32>,
    pub disk: usize,
    pub disk_offset: u64,
    pub i_mmap: Vec<IMmap>,
    pub nrpages: u64,
    pub nr_dirty: u64,
    /// shmfs/tmpfs: swap-backed, never read from a disk.
    pub shmem: bool,
    pub dirtied_when: Option<u64>,
    pub writeback_index: u64,
    pub unlinked: bool,
    /// Readahead state (`file_ra_state`; one per inode here, as if each file had one opener).
    pub ra: FileRaState,
    /// With `[fs]` metadata: the slabs holding this file's dentry and inode (NIL: none cached),
    /// the inode's inode_unused stamp and DCACHE_REFERENCED (see dcache.rs).
    pub dentry: Pfn,
    pub inode: Pfn,
    pub i_stamp: u32,
    pub d_referenced: bool,
}

impl File {
    pub fn new(name: &str, size: u64, disk: usize, disk_offset: u64, shmem: bool) -> File {
        let np = size.div_ceil(4096);
        File {
            name: name.to_string(),
            size,
            pages: vec![NIL; np as usize],
            shadow: Vec::new(),
            swapped: Vec::new(),
            disk,
            disk_offset,
            i_mmap: Vec::new(),
            nrpages: 0,
            nr_dirty: 0,
            shmem,
            dirtied_when: None,
            writeback_index: 0,
            unlinked: false,
            ra: FileRaState::default(),
            dentry: NIL,
            inode: NIL,
            i_stamp: 0,
            d_referenced: false,
        }
    }
    pub fn npages(&self) -> u64 {
        self.pages.len() as u64
    }
    #[inline]
    pub fn find(&self, idx: u64) -> Option<Pfn> {
        match self.pages.get(idx as usize) {
            Some(&p) if p != NIL => Some(p),
            _ => None,
        }
    }
    pub fn i_mmap_add(&mut self, mm: u32, start: u64, end: u64, pgoff: u64) {
        self.i_mmap.push(IMmap { mm, start, end, pgoff });
    }
    pub fn i_mmap_remove(&mut self, mm: u32, start: u64) {
        // A VMA split keeps one entry per original mapping; drop the one covering `start`.
        if let Some(i) = self.i_mmap.iter().position(|m| m.mm == mm && m.start <= start && start < m.end) {
            let m = self.i_mmap[i];
            self.i_mmap.swap_remove(i);
            // Keep the parts outside the removed VMA's start as their own entries.
            if m.start < start {
                self.i_mmap.push(IMmap { mm, start: m.start, end: start, pgoff: m.pgoff });
            }
        }
    }
    pub fn take_shadow(&mut self, idx: u64) -> u32 {
        match self.shadow.get_mut(idx as usize) {
            Some(s) => std::mem::take(s),
            None => 0,
        }
    }
    /// Grow the page index when a write extends the file.
    pub fn extend(&mut self, size: u64) {
        if size > self.size {
            self.size = size;
            let np = size.div_ceil(4096) as usize;
            if np > self.pages.len() {
                self.pages.resize(np, NIL);
            }
        }
    }
}

/// What a page-cache access found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageRes {
    Ready(Pfn),
    /// Wait for I/O until this time, then look again.
    Wait(u64),
    Oom,
}

impl Kernel {
    pub fn file_create(&mut self, name: &str, size: u64, disk: usize, shmem: bool) -> u32 {
        let off = if shmem { 0 } else { self.disks[disk].allocate_extent(size) };
        let id = self.files.len() as u32;
        self.files.push(File::new(name, size, disk, off, shmem));
        self.file_ids.insert(name, id);
        id
    }

    /// A file created by a running program (`creat(2)`): its blocks go right after the previous
    /// file's, as a filesystem allocates them.
    pub fn file_create_packed(&mut self, name: &str, size: u64, disk: usize) -> u32 {
        let off = self.disks[disk].allocate_blocks(size);
        let id = self.files.len() as u32;
        self.files.push(File::new(name, size, disk, off, false));
        self.file_ids.insert(name, id);
        id
    }

    /// `add_to_page_cache_lru`.
    pub fn add_to_page_cache(&mut self, ctx: &mut Ctx, file: u32, idx: u64, p: Pfn) {
        self.trace_ctx(ctx, crate::trace::Tracepoint::FilemapAdd { ino: file, pfn: p, index: idx, order: 0 });
        self.charge(ctx, KFunc::PageCacheRaReadahead, self.cost.pagecache_add);
        crate::memcontrol::charge(self, ctx, p);
        let f = &mut self.files[file as usize];
        f.pages[idx as usize] = p;
        f.nrpages += 1;
        let shmem = f.shmem;
        self.fr.mapping[p as usize] = file;
        self.fr.index[p as usize] = idx as u32;
        if shmem {
            self.fr.set(p, pg::SWAPBACKED | pg::UPTODATE);
            self.g.shmem += 1;
        }
        self.g.file += 1;
        if !shmem {
            crate::workingset::refault_file(self, p, file, idx);
        }
        crate::vmscan::lru_cache_add(self, ctx, p);
    }

    /// `__filemap_remove_folio`: drop a clean, unmapped folio from its file, leaving a shadow
    /// over its whole range (the kernel stores one multi-index entry).
    pub fn remove_from_page_cache(&mut self, p: Pfn, shadow: u32) {
        let file = self.fr.mapping[p as usize] as usize;
        let idx = self.fr.index[p as usize] as usize;
        let nr = self.fr.folio_nr(p);
        // No ctx here: the event carries the task and time of the last one fired (the reclaim
        // or truncate that called this).
        self.trace(crate::trace::Tracepoint::FilemapDelete { ino: file as u32, pfn: p, index: idx as u64 });
        let f = &mut self.files[file];
        for i in 0..nr as usize {
            if f.pages.get(idx + i) == Some(&(p + i as Pfn)) {
                f.pages[idx + i] = NIL;
                f.nrpages -= 1;
                if shadow != 0 && !f.shmem {
                    if f.shadow.len() < f.pages.len() {
                        f.shadow.resize(f.pages.len(), 0);
                    }
                    f.shadow[idx + i] = shadow;
                }
            }
        }
        if f.shmem {
            self.g.shmem -= nr;
        }
        self.g.file -= nr;
    }

    /// `filemap_add_folio` of a folio of `1 << order` pages at `idx` (aligned to its size): one
    /// charge, one LRU entry and one refault test for all of them, every index pointing at its
    /// own frame so that a lookup of any of them finds the folio.
    pub fn add_folio_to_page_cache(&mut self, ctx: &mut Ctx, file: u32, idx: u64, p: Pfn, order: u32) {
        if order == 0 {
            return self.add_to_page_cache(ctx, file, idx, p);
        }
        let nr = 1u64 << order;
        debug_assert!(!self.files[file as usize].shmem && idx.is_multiple_of(nr));
        self.trace_ctx(ctx, crate::trace::Tracepoint::FilemapAdd { ino: file, pfn: p, index: idx, order });
        self.charge(ctx, KFunc::PageCacheRaReadahead, self.cost.pagecache_add);
        self.fr.set_folio(p, order);
        crate::memcontrol::charge_folio(self, ctx, p, nr);
        let f = &mut self.files[file as usize];
        for i in 0..nr {
            f.pages[(idx + i) as usize] = p + i as Pfn;
        }
        f.nrpages += nr;
        for i in 0..nr as usize {
            self.fr.mapping[p as usize + i] = file;
            self.fr.index[p as usize + i] = (idx + i as u64) as u32;
        }
        self.g.file += nr;
        crate::workingset::refault_file_folio(self, p, file, idx, nr);
        crate::vmscan::lru_cache_add(self, ctx, p);
    }

    /// Free a folio no one uses any more: its tail frames lose their folio state and charge,
    /// then the block goes back to the buddy allocator at its order.
    pub fn free_folio(&mut self, ctx: &mut Ctx, head: Pfn) {
        let order = self.fr.folio_order(head);
        for t in head as usize + 1..head as usize + (1 << order) {
            self.fr.flags[t] = (crate::mmzone::LRU_NONE as u32) << pg::LRU_SHIFT;
            self.fr.mapping[t] = 0;
            self.fr.mapcount[t] = 0;
            if self.profile.memcg && self.fr.extra[t] != 0 {
                crate::memcontrol::uncharge(self, t as Pfn);
            }
            self.fr.extra[t] = 0;
        }
        self.free_pages(ctx, head, order);
    }

    /// `split_folio`: make a large folio as many single pages, in its place on its LRU list, for
    /// a path that handles pages one by one (a write dirtying one page, a fault mapping one).
    pub fn split_folio(&mut self, head: Pfn) {
        let order = self.fr.folio_order(head);
        if order == 0 {
            return;
        }
        debug_assert!(!self.fr.has(head, pg::LOCKED | pg::DIRTY | pg::WRITEBACK), "splitting a busy folio");
        let nr = 1u64 << order;
        self.fr.set_folio(head, 0);
        // __split_huge_page_tail: the tails take the head's page-cache state.
        let keep = pg::UPTODATE | pg::ACTIVE | pg::REFERENCED | pg::WORKINGSET;
        let inherit = self.fr.flags[head as usize] & keep;
        for t in head + 1..head + nr as Pfn {
            self.fr.flags[t as usize] = inherit | ((crate::mmzone::LRU_NONE as u32) << pg::LRU_SHIFT);
        }
        if self.fr.has(head, pg::LRU) {
            crate::vmscan::lru_add_split_tails(self, head, nr);
        }
    }

    /// Readahead: bring [start, start+n) into the page cache, one disk request per run of
    /// missing pages. Marks the page at `mark` (if any) PG_readahead for the next async window.
    /// Returns the completion time of the last request, if any I/O was started.
    pub fn page_cache_ra(
        &mut self,
        ctx: &mut Ctx,
        file: u32,
        start: u64,
        n: u64,
        mark: Option<u64>,
    ) -> Result<Option<u64>, AllocFail> {
        let fsize = self.files[file as usize].npages();
        let end = (start + n).min(fsize);
        let mut last = None;
        let mut run: Vec<Pfn> = Vec::new();
        let mut bounce: Vec<Pfn> = Vec::new();
        let mut run_start = 0;
        let mut i = start;
        let mut fail = None;
        while i < end {
            if self.files[file as usize].find(i).is_some() {
                if !run.is_empty() {
                    last = Some(self.submit_read(
                        ctx,
                        file,
                        run_start,
                        std::mem::take(&mut run),
                        std::mem::take(&mut bounce),
                    ));
                }
                i += 1;
                continue;
            }
            let gfp = Gfp { cold: self.profile.page_cache_read_cold, ..Gfp::highuser_movable() };
            let p = match self.alloc_pages(ctx, gfp, 0) {
                Ok(p) => p,
                Err(e) => {
                    fail = Some(e);
                    break;
                }
            };
            self.fr.set(p, pg::LOCKED);
            if Some(i) == mark {
                self.fr.set(p, pg::READAHEAD);
            }
            self.add_to_page_cache(ctx, file, i, p);
            self.charge_readahead_folio(ctx);
            if run.is_empty() {
                run_start = i;
            }
            run.push(p);
            // readpage submits each page as it is added (2.4 read_cluster_nonblocking →
            // page_cache_read): block_read_full_page gives it buffer heads, then its bounce
            // page is allocated, before the next page.
            crate::vmscan::page_cache_added(self, ctx, p);
            if self.profile.bounce_highmem_io {
                bounce.push(self.create_bounce(ctx, p));
            }
            i += 1;
        }
        if !run.is_empty() {
            last = Some(self.submit_read(ctx, file, run_start, run, bounce));
        }
        match (last, fail) {
            (None, Some(e)) => Err(e),
            _ => Ok(last),
        }
    }

    /// The per-folio work of a readahead batch beyond its insertion: `CostTable::readahead_folio`
    /// for `read()`'s, `readaround_folio` for a fault's (`ra_for_fault`), whose folios no read
    /// consumes. Skipped at 0 (vmlab's own table), as `read_pages` is: no output moves without
    /// a fit.
    pub(crate) fn charge_readahead_folio(&mut self, ctx: &mut Ctx) {
        let ns = if self.ra_for_fault { self.cost.readaround_folio } else { self.cost.readahead_folio };
        if ns > 0 {
            self.charge(ctx, KFunc::PageCacheRaReadahead, ns);
        }
    }

    /// `read_pages` for folios just added, `(index, order)` in file order and contiguous: one
    /// read of all their pages. Returns when it completes, if anything was read.
    pub(crate) fn read_folios(&mut self, ctx: &mut Ctx, file: u32, folios: &[(u64, u32)]) -> Option<u64> {
        let &(first, _) = folios.first()?;
        let f = &self.files[file as usize];
        let mut pages = Vec::new();
        for &(i, o) in folios {
            let head = f.pages[i as usize];
            pages.extend(head..head + (1 << o));
        }
        Some(self.submit_read(ctx, file, first, pages, Vec::new()))
    }

    /// `create_bounce` for a read into `p`: a HighMem page is read through a lowmem page,
    /// `alloc_page(GFP_NOHIGHIO)`, freed when the read completes. When that allocation fails 2.4
    /// takes a page of its emergency pool instead (and gives it back to the pool): nothing to
    /// account here. Returns NIL when no buddy page was taken.
    pub(crate) fn create_bounce(&mut self, ctx: &mut Ctx, p: Pfn) -> Pfn {
        if self.zones[self.zone_of(p)].kind != crate::mmzone::ZoneType::HighMem {
            return NIL;
        }
        let gfp = Gfp { noretry: true, ..Gfp::kernel() };
        // No __GFP_FS: a failed try_to_free_pages returns NULL rather than looping, so the caller
        // is not throttled.
        let throttle = ctx.throttle_until;
        match self.alloc_pages(ctx, gfp, 0) {
            Ok(b) => {
                self.g.bounce += 1;
                b
            }
            Err(_) => {
                ctx.throttle_until = throttle;
                NIL
            }
        }
    }

    /// Read `pages` (file pages from `first` on) from disk, one bio per stripe chunk they
    /// cover, with `bounce[i]` (or NIL) the bounce page of `pages[i]` (`bounce` is empty when the
    /// profile has no bounce buffers). Returns when the last
    /// piece completes.
    fn submit_read(&mut self, ctx: &mut Ctx, file: u32, first: u64, pages: Vec<Pfn>, bounce: Vec<Pfn>) -> u64 {
        let f = &self.files[file as usize];
        let (disk, base) = (f.disk, f.disk_offset + first * 4096);
        self.ev.add(Vm::Pgpgin, pages.len() as u64 * 4);
        self.events += pages.len() as u64;
        let mut last = 0;
        // 6.8: read_pages' plug turns the batch's bios into requests (blk.rs); older kernels
        // send one bio per stripe chunk.
        let mut rqs = Vec::new();
        if !self.disks[disk].plug(&pages, BioShape::Vecs, false, &mut rqs) {
            let mut i = 0;
            while i < pages.len() {
                let room = (self.disks[disk].bio_max_bytes(base + i as u64 * 4096) / 4096).max(1);
                let n = (room.min((pages.len() - i) as u64)) as usize;
                rqs.push(PlugRq { first: i, pages: n, segs: n as u32 });
                i += n;
            }
        }
        for rq in rqs {
            let (i, n) = (rq.first, rq.pages);
            let off = base + i as u64 * 4096;
            // The bios are built before the device sees them: this CPU delays the request.
            if self.cost.read_pages > 0 {
                self.charge(ctx, KFunc::PageCacheRaReadahead, self.cost.read_pages);
            }
            let t = self.disks[disk].submit_segs(ctx.clock(), off, n as u64 * 4096, rq.segs, false);
            self.charge(ctx, KFunc::PageCacheRaReadahead, self.cost.io_submit);
            let piece = pages[i..i + n].to_vec();
            // bounce_end_io_read copies each HighMem page's data out of its bounce page in the
            // interrupt handler, one page after another, before the page is unlocked; a page
            // whose bounce came from the emergency pool is copied too.
            let copies = if bounce.is_empty() {
                0
            } else {
                piece.iter().filter(|&&p| self.zones[self.zone_of(p)].kind == crate::mmzone::ZoneType::HighMem).count()
                    as u64
            };
            let t = t.saturating_add(copies * self.cost.copy_page);
            for &p in &piece {
                self.inflight.insert(p, t);
            }
            self.queue_io_done(t, disk, piece, false);
            let b: Vec<Pfn> = bounce.get(i..i + n).unwrap_or(&[]).iter().copied().filter(|&b| b != NIL).collect();
            if !b.is_empty() {
                self.io_queue.push((t, IoDone::Bounce(b)));
            }
            last = last.max(t);
        }
        last
    }

    /// Page `idx` of `file` as a reader finds it once readahead has run: ready, under I/O
    /// until some time, or absent (readahead could not get memory).
    pub fn find_page_wait(&mut self, ctx: &Ctx, file: u32, idx: u64) -> PageRes {
        match self.files[file as usize].find(idx) {
            // A folio is locked (and in flight) as a whole: its head says.
            Some(p) if self.fr.has(self.fr.folio_head(p), pg::LOCKED) => {
                PageRes::Wait(self.wait_on_locked(ctx, p, ctx.clock()))
            }
            Some(p) => PageRes::Ready(p),
            None => PageRes::Oom,
        }
    }

    /// One page of a buffered `read()` that wants `req` pages from `idx` on
    /// (`do_generic_file_read`): readahead, then the page or a wait for it.
    pub fn filemap_read_page(&mut self, ctx: &mut Ctx, file: u32, idx: u64, req: u64) -> PageRes {
        if idx >= self.files[file as usize].npages() {
            return PageRes::Oom;
        }
        self.file_read_readahead(ctx, file, idx, req);
        let mut r = self.find_page_wait(ctx, file, idx);
        if matches!(r, PageRes::Oom) && ctx.throttle_until <= ctx.clock() {
            // Readahead did not bring this page (its window lay beyond it: the page was reclaimed
            // after an earlier window read it) and no allocation of it is waiting: the read
            // allocates and reads it alone, sleeping in that allocation if it must (2.4
            // `do_generic_file_read`'s no_cached_page → `page_cache_alloc` → `readpage`; 6.x
            // `filemap_get_pages` → `filemap_create_folio`), rather than backing off.
            let _ = self.page_cache_ra(ctx, file, idx, 1, None);
            r = self.find_page_wait(ctx, file, idx);
        }
        if let PageRes::Ready(_) = r {
            self.files[file as usize].ra.prev_index = idx;
        }
        r
    }

    /// `echo N > /proc/sys/vm/drop_caches`: free clean, unmapped, idle page-cache pages.
    pub fn drop_caches(&mut self, ctx: &mut Ctx) {
        let mut n = 0u64;
        for f in 0..self.files.len() {
            if self.files[f].shmem {
                continue;
            }
            for idx in 0..self.files[f].pages.len() {
                let p = self.files[f].pages[idx];
                // A folio goes whole, from its head (its tails' indices are cleared with it).
                if p == NIL || self.fr.has(p, pg::TAIL) {
                    continue;
                }
                let fl = self.fr.flags[p as usize];
                if fl & (pg::DIRTY | pg::WRITEBACK | pg::LOCKED) != 0 || self.fr.mapcount[p as usize] != 0 {
                    continue;
                }
                n += self.fr.folio_nr(p);
                crate::vmscan::del_page_from_lru(self, p);
                self.remove_from_page_cache(p, 0);
                self.free_folio(ctx, p);
            }
        }
        self.ev.add(Vm::DropPagecache, 1);
        self.charge(ctx, KFunc::FreePages, n * self.cost.page_free);
    }

    /// Unlink a file: its clean cached pages go now; pages under I/O go when the I/O ends.
    pub fn file_unlink(&mut self, ctx: &mut Ctx, file: u32) {
        crate::dcache::unlink(self, ctx, file);
        self.files[file as usize].unlinked = true;
        self.file_ids.remove(self.files[file as usize].name.as_str());
        for idx in 0..self.files[file as usize].pages.len() {
            let p = self.files[file as usize].pages[idx];
            if p == NIL || self.fr.has(p, pg::TAIL) || self.fr.mapcount[p as usize] != 0 {
                continue;
            }
            if self.fr.flags[p as usize] & (pg::WRITEBACK | pg::LOCKED) != 0 {
                continue;
            }
            if self.fr.test_clear(p, pg::DIRTY) {
                crate::page_writeback::account_clean(self, p, file);
            }
            crate::vmscan::del_page_from_lru(self, p);
            self.remove_from_page_cache(p, 0);
            self.free_folio(ctx, p);
        }
    }
}

/// Path lookup by name, with the nearest known name in the message.
pub fn file_lookup(k: &Kernel, n: &str) -> Result<u32, String> {
    k.file_ids.get(n).ok_or_else(|| {
        let hint = crate::workload::error::suggest(n, k.file_ids.keys())
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_default();
        format!("no file named `{n}`{hint}")
    })
}

/// Buffered `read()` of pages [*idx, end) in calls of `bs` pages counted from `base` (bs = 0:
/// one call for everything); the call size is readahead's request size. Stops when the quantum
/// is spent, or to wait for a page under I/O.
pub fn filemap_read(k: &mut Kernel, ctx: &mut Ctx, file: u32, idx: &mut u64, end: u64, base: u64, bs: u64) -> Progress {
    while *idx < end {
        if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS {
            return Progress::Preempted;
        }
        let call_end = match (*idx - base).checked_div(bs) {
            Some(calls) => (base + (calls + 1) * bs).min(end),
            None => end,
        };
        if bs != 0 && (*idx - base).is_multiple_of(bs) {
            k.charge(ctx, KFunc::Syscall, k.cost.syscall);
        }
        let prev = k.files[file as usize].ra.prev_index;
        match k.filemap_read_page(ctx, file, *idx, call_end - *idx) {
            PageRes::Ready(p) => {
                k.charge(ctx, KFunc::CopyUserGeneric, k.cost.copy_user_page);
                k.first_touch(ctx, KFunc::CopyUserGeneric, p);
                // filemap_read marks a folio accessed once for a run of reads through it: not
                // when the last page read was already in it (pos_same_folio).
                let head = k.fr.folio_head(p);
                let nr = k.fr.folio_nr(head);
                let first = *idx - (p - head) as u64;
                if nr == 1 || !(first..first + nr).contains(&prev) {
                    crate::vmscan::mark_page_accessed_by(k, ctx, head);
                }
                k.events += 1;
                *idx += 1;
            }
            PageRes::Wait(until) => {
                // Waiting for the lock of a page that is being read back after it was evicted from
                // the workingset is thrashing: folio_wait_bit_common runs such a wait under
                // psi_memstall_enter, a wait for any other page is plain I/O.
                if let Some(p) = k.files[file as usize].find(*idx) {
                    let p = k.fr.folio_head(p);
                    if k.fr.has(p, pg::WORKINGSET) && !k.fr.has(p, pg::UPTODATE) {
                        crate::psi::memstall_wait(k, ctx, until);
                    }
                }
                return Progress::Block(Outcome::Block { until: Some(until), io: true });
            }
            PageRes::Oom => {
                return Progress::Block(Outcome::Block { until: Some(crate::oom_kill::alloc_retry_at(ctx)), io: false })
            }
        }
    }
    Progress::Done
}

/// `generic_perform_write` of pages [*idx, end): copy into the page cache (allocating pages),
/// dirty them, and throttle in `balance_dirty_pages` every 32 pages of a call and at its end.
/// `calls` are the op's `write()` calls: one smaller than a page finds the page again.
pub fn generic_perform_write(
    k: &mut Kernel,
    ctx: &mut Ctx,
    file: u32,
    idx: &mut u64,
    end: u64,
    calls: WriteCalls,
) -> Progress {
    let mut n = 0;
    while *idx < end {
        if ctx.sys_ns + ctx.user_ns >= QUANTUM_NS || ctx.sleep_ns > 0 {
            return Progress::Preempted;
        }
        let p = match k.files[file as usize].find(*idx) {
            Some(p) => {
                if k.fr.has(k.fr.folio_head(p), pg::LOCKED) {
                    let until = k.wait_on_locked(ctx, p, ctx.clock());
                    return Progress::Block(Outcome::Block { until: Some(until), io: true });
                }
                // Dirtying is per page in this model: a large folio becomes single pages first.
                k.split_folio(k.fr.folio_head(p));
                p
            }
            None => match k.alloc_pages(ctx, Gfp::highuser_movable(), 0) {
                Ok(p) => {
                    k.fr.set(p, pg::UPTODATE);
                    k.add_to_page_cache(ctx, file, *idx, p);
                    // A folio write_begin creates is one write_end dirties for the first
                    // time: its buffer head, block reservation and dirtying are paid here, once.
                    k.charge(ctx, KFunc::GenericFileWrite, k.cost.write_new_folio);
                    p
                }
                Err(_) => {
                    return Progress::Block(Outcome::Block {
                        until: Some(crate::oom_kill::alloc_retry_at(ctx)),
                        io: false,
                    })
                }
            },
        };
        k.charge(ctx, KFunc::GenericFileWrite, k.cost.copy_user_page + k.cost.perform_write);
        k.first_touch(ctx, KFunc::GenericFileWrite, p);
        let newly = !k.fr.has(p, pg::DIRTY);
        crate::page_writeback::set_page_dirty(k, ctx, p);
        crate::vmscan::page_dirtied_by_write(k, ctx, p, newly);
        if k.profile.write_marks_accessed {
            crate::vmscan::mark_page_accessed_by(k, ctx, p);
        }
        // Every further call into the page is another write() that looks it up: 2.4's
        // `__grab_cache_page` → `__find_lock_page` → `__find_page_nolock` sets PG_referenced,
        // 2.6's `generic_perform_write` marks it accessed again. The seed's dd (bs=64) makes 64.
        let again = calls.into_page(*idx).saturating_sub(1);
        if again > 0 {
            k.charge(ctx, KFunc::Syscall, again * k.cost.syscall);
            if k.profile.write_marks_accessed {
                for _ in 0..again {
                    let before = (k.fr.flags[p as usize], k.fr.aux[p as usize]);
                    crate::vmscan::mark_page_accessed_by(k, ctx, p);
                    // Every engine's mark_page_accessed acts on the page's flags and age alone:
                    // a call that left them as they were leaves them so again.
                    if (k.fr.flags[p as usize], k.fr.aux[p as usize]) == before {
                        break;
                    }
                }
            }
        }
        k.events += 1;
        *idx += 1;
        n += 1;
        if n % 32 == 0 && !k.profile.bdflush {
            crate::page_writeback::balance_dirty_pages(k, ctx, file);
        }
    }
    // 2.4.9 balances in `__block_commit_write`, when a buffer turns dirty (the engine's hook).
    if !k.profile.bdflush {
        crate::page_writeback::balance_dirty_pages(k, ctx, file);
    }
    Progress::Done
}

/// `creat()`: a file of that name is replaced; the new one's blocks go on `disk` right after
/// the previous file created there.
pub fn do_creat(k: &mut Kernel, ctx: &mut Ctx, name: &str, size: u64, disk: usize) {
    if let Some(old) = k.file_ids.get(name) {
        k.file_unlink(ctx, old);
    }
    let f = k.file_create_packed(name, size, disk);
    crate::dcache::lookup(k, ctx, f);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::ZoneType;

    /// A sequential reader reaches the async marker of its window (page 4 of [0, 8)) after
    /// reclaim took that page: readahead reads the next window, [8, ...), which lacks it. The
    /// read then reads page 4 by itself (2.4's no_cached_page), so it waits on that read; it
    /// used to find no page and take the out-of-memory backoff with memory free.
    #[test]
    fn a_page_readahead_passed_over_is_read_by_itself() {
        let p = crate::profiles::default_row();
        let mut k =
            Kernel::new(p, MachineConfig::of_zones("x86_64", 1, &[(ZoneType::Normal, 8192)]), 1).expect("kernel");
        k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
        let f = k.file_create("f", 64 * 4096, 0, false);
        k.files[f as usize].ra = FileRaState { start: 0, size: 8, async_size: 4, prev_index: 3, ..Default::default() };
        let mut ctx = Ctx::default();
        let r = k.filemap_read_page(&mut ctx, f, 4, 4);
        assert!(k.files[f as usize].find(8).is_some(), "the next window was read");
        assert!(matches!(r, PageRes::Wait(_)), "page 4 is read, not given up on: {r:?}");
        assert!(k.files[f as usize].find(4).is_some());
    }
}
