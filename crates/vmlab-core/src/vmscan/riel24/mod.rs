//! The Rik van Riel VM of Linux 2.4.0–2.4.9 (`mm/vmscan.c`, `mm/swap.c`, the 2.4.9
//! `__alloc_pages`): a global active list and a global inactive_dirty list (both chunked rings,
//! see `ring`), per-zone inactive_clean lists, page age, `free_shortage`/`inactive_shortage`,
//! `refill_inactive_scan`, `page_launder`, the page-table walk `swap_out`,
//! `do_try_to_free_pages`, kswapd, kreclaimd and the 2.4.9 `out_of_memory`.
//!
//! There is no unevictable list: an mlocked page is an ordinary page on these lists. Reclaim
//! keeps meeting it and cannot free it (its PTEs hold references and `swap_out` never walks a
//! VM_LOCKED VMA), so with enough of memory mlocked a zone can stay short for good — and 2.4.9's
//! kswapd does not sleep while any shortage remains.
//!
//! List slots: the active ring is `LRU_ACTIVE_FILE`, the inactive_dirty ring `LRU_INACTIVE_FILE`
//! (both in the engine's `lru`, whose list lengths mirror the rings), inactive_clean is
//! `LRU_INACTIVE_ANON` of each zone's lruvec, and anonymous pages not yet in the swap cache —
//! which 2.4 keeps on no list — sit on `LRU_ACTIVE_ANON` of the engine's `lru`, never scanned.
//! Per page: age in `fr.aux`, "has buffers" in `fr.extra` bit 0, "write() dirtied the
//! buffers" in bit 1 (`buffers::BH_DIRTIED`).

pub mod alloc;
pub mod bdflush;
pub mod buffers;
pub mod lock;
pub mod ring;
pub mod scan;
pub mod task;

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::{pg, Pfn};
use crate::mmzone::NR_LRU_LISTS;
use crate::mmzone::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_NONE};
use crate::page_alloc::{AllocFail, Gfp};
use crate::stats::explain::{Reason, Why};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
use crate::vmscan::{KswapdAction, LruScope, ReclaimEngine};
use buffers::LaunderMask;
use ring::Ring;

pub const SLOT_ACTIVE: usize = LRU_ACTIVE_FILE;
pub const SLOT_DIRTY: usize = LRU_INACTIVE_FILE;
pub const SLOT_CLEAN: usize = LRU_INACTIVE_ANON;
pub const SLOT_OFF: usize = LRU_ACTIVE_ANON;

pub const PAGE_AGE_START: u8 = 2;
pub const PAGE_AGE_ADV: u8 = 3;
pub const PAGE_AGE_MAX: u8 = 64;
pub const DEF_PRIORITY: u32 = 6;
/// `interruptible_sleep_on_timeout(&kswapd_wait, HZ)`.
pub const HZ_NS: u64 = 1_000_000_000;
/// `fr.extra` bit: the page has buffer heads (ext2 `block_read_full_page` attaches them; they
/// hold a reference until `try_to_free_buffers`).
pub const BUFFERS: u8 = 1;

const INACTIVE_SHORTAGE: u8 = 1;
const FREE_SHORTAGE: u8 = 2;
const GENERAL_SHORTAGE: u8 = 4;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    /// Top of the kswapd loop: recalculate_vm_stats once a second, start do_try_to_free_pages.
    #[default]
    Top,
    SwapOut,
    Refill,
    Launder,
    /// The GENERAL arm, then the shortage test that ends an iteration.
    General,
}

#[derive(Clone, Debug, Default)]
struct KswapdRun {
    phase: Phase,
    shortage: u8,
    maxtry: u32,
    /// On kswapd_wait: a wakeup_kswapd makes it runnable (while it runs, wakeups are lost).
    asleep: bool,
}

/// Why a do_try_to_free_pages pass ended with a shortage (counted once per failed pass).
#[derive(Clone, Debug, Default)]
pub struct Shortages {
    /// Per zone: inactive_dirty + inactive_clean + free < pages_high.
    pub zone_inactive: Vec<u64>,
    /// Per zone: free + inactive_clean < pages_low.
    pub zone_free: Vec<u64>,
    pub global_inactive: u64,
    pub global_free: u64,
}

/// What the engine did, for the flat profile's call counts and the report.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub refill_inactive_scan: u64,
    pub page_launder: u64,
    pub reclaim_page: u64,
    pub try_to_free_buffers: u64,
    pub zone_inactive_plenty: u64,
    pub swap_out: u64,
    pub do_try_to_free_pages: u64,
    pub do_try_iterations: u64,
    pub kswapd_passes: u64,
    pub kswapd_failed_passes: u64,
    pub kswapd_sleeps: u64,
    pub direct_passes: u64,
    pub kreclaimd_runs: u64,
    pub lock_contended: u64,
    pub shortages: Shortages,
    /// 2.4.9's buffer flushing (profile field `bdflush`).
    pub bdflush: bdflush::BdflushStats,
    /// Allocations served by each stage of `__alloc_pages`: the first loop (a zone at or above
    /// pages_low), the pages_high, pages_low and pages_min passes, and the last resort.
    pub alloc_pass: [u64; 5],
    /// The same, split by the zone (id, first four) that served the page.
    pub alloc_zone_pass: [[u64; 5]; 4],
    /// Pages served straight off a zone's inactive_clean list by `reclaim_page` in `__alloc_pages`.
    pub alloc_zone_reclaimed: [u64; 4],
    /// buffer_head slab pages taken (`kmem_cache_grow`), given back by `kmem_cache_reap`, the
    /// most held at once, and grows that found no lowmem page.
    pub bh_slab_grown: u64,
    pub bh_slab_reaped: u64,
    pub bh_slab_max: u64,
    pub bh_slab_failed: u64,
    /// `pagemap_lru_lock` spin by who spun (`lock::WAITERS`) and by the holder waited for
    /// (`lock::Holder`).
    pub spin_by_waiter: [u64; 4],
    pub spin_by_holder: [u64; 3],
    /// inactive_clean traffic by zone (first four): pages page_launder put there, and how pages
    /// left it (`CLEAN_OUT`). A zone's clean pages are what end its free shortage, so this says
    /// who keeps a short zone short.
    pub clean_in: [u64; 4],
    pub clean_out: [[u64; 5]; 4],
    /// Pages page_launder's `try_to_free_buffers` submitted (`sync_page_buffers`), and the
    /// waits on buffers it put direct reclaimers to (`buffers`).
    pub launder_bh_writes: u64,
    pub launder_bh_waits: u64,
    /// Of those waits, the ones on a write the waiter had not started (their length is an upper
    /// bound, `buffers::sync_page_buffers`).
    pub launder_bh_waits_other: u64,
}

/// How a page left inactive_clean, for `Stats::clean_out`: `reclaim_page` handing it to a
/// page-cache allocation, to a kernel allocation (bounce page, slab, page table), to kreclaimd;
/// or `reclaim_page` finding it in use (→ active) or with buffers or dirty (→ inactive_dirty).
pub const CLEAN_OUT: [&str; 5] = ["page cache", "kernel", "kreclaimd", "to active", "to inactive_dirty"];
pub const CLEAN_FOR_CACHE: usize = 0;
pub const CLEAN_FOR_KERNEL: usize = 1;
pub const CLEAN_FOR_KRECLAIMD: usize = 2;
pub const CLEAN_TO_ACTIVE: usize = 3;
pub const CLEAN_TO_DIRTY: usize = 4;

/// Count a move off zone `z`'s inactive_clean list.
#[inline]
fn count_clean_out(k: &mut Kernel, z: usize, how: usize) {
    if let Some(row) = k.reclaim.riel24_mut().stats.clean_out.get_mut(z) {
        row[how] += 1;
    }
}

/// The engine's global state (the statics of 2.4's vmscan.c, swap.c and page_alloc.c).
#[derive(Clone, Debug, Default)]
pub struct Riel24 {
    pub active: Ring,
    pub dirty: Ring,
    /// `memory_pressure`: +1 per allocation and per reclaimed page, −1 per freed page,
    /// decayed by 1/64 once a second; `inactive_target` is a 64th of it.
    pub memory_pressure: u64,
    recalc_at: u64,
    ks: KswapdRun,
    pub kreclaimd_task: Option<usize>,
    kreclaimd_asleep: bool,
    pub lock: lock::LruLock,
    /// `swap_mm`: the mm the page-table walk visits next, and each mm's `swap_address`.
    swap_mm: usize,
    swap_address: Vec<u64>,
    scratch: Vec<bool>,
    /// Page-cache pages holding buffer heads, and the `buffer_head` slab's pages, oldest first.
    pub bh_live: u64,
    /// Pages on inactive_dirty that have buffers (what page_launder's `page_ramdisk` test reads).
    pub dirty_bufs: u64,
    pub bh_slab: std::collections::VecDeque<Pfn>,
    pub stats: Stats,
    /// The global lists: the rings' lengths, and anonymous pages off the LRU (see above).
    pub lru: crate::mmzone::Lruvec,
    /// Writes and request-queue sleeps per task (`task`), indexed by task id.
    pub by_task: Vec<task::TaskIo>,
    /// A direct reclaimer's `do_try_to_free_pages` stopped on a buffer wait, by task id.
    direct: Vec<Option<Parked>>,
    /// `BUF_DIRTY`, `BUF_LOCKED` and kupdate's clock, under profile field `bdflush`.
    pub bdflush: bdflush::Bdflush,
}

/// Where a direct reclaimer's pass stopped to wait on a page's buffers: its shortage, the
/// iterations left, and what was left of the page_launder scan it was in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Parked {
    shortage: u8,
    maxtry: u32,
    launder_left: u64,
}

impl Riel24 {
    /// The engine on a machine whose zones end at `zone_ends` (the rings need the layout).
    pub fn new(zone_ends: &[u32]) -> Riel24 {
        let nz = zone_ends.len();
        let mut r = Riel24 {
            active: Ring::new(zone_ends.to_vec()),
            dirty: Ring::new(zone_ends.to_vec()),
            kreclaimd_asleep: true,
            ..Default::default()
        };
        r.ks.asleep = true;
        r.stats.shortages = Shortages { zone_inactive: vec![0; nz], zone_free: vec![0; nz], ..Default::default() };
        r
    }
}

// ---- page state -------------------------------------------------------------------------

/// In the page cache or the swap cache (`page->mapping`).
#[inline]
pub fn has_mapping(k: &Kernel, p: Pfn) -> bool {
    !k.fr.has(p, pg::ANON) || k.fr.has(p, pg::SWAPCACHE)
}

#[inline]
pub fn buffers(k: &Kernel, p: Pfn) -> bool {
    k.fr.extra[p as usize] & BUFFERS != 0
}

/// `page_count`: the cache's reference, one per PTE, one for the buffers.
#[inline]
pub fn page_count(k: &Kernel, p: Pfn) -> u32 {
    has_mapping(k, p) as u32 + k.fr.mapcount[p as usize] as u32 + buffers(k, p) as u32
}

/// Would refill_inactive_scan change this page in a zone that is not inactive-plenty?
#[inline]
fn active_hot(k: &Kernel, p: Pfn) -> bool {
    k.fr.has(p, pg::REFERENCED) || k.fr.aux[p as usize] > 0 || page_count(k, p) <= if buffers(k, p) { 2 } else { 1 }
}

/// Would page_launder move this page whatever its zone (the 2.4.9 "in use" test)?
#[inline]
fn dirty_hot(k: &Kernel, p: Pfn) -> bool {
    k.fr.has(p, pg::REFERENCED) || (!buffers(k, p) && page_count(k, p) > 1)
}

/// Re-evaluate a page's mark on its ring after its state changed.
pub fn refresh(k: &mut Kernel, p: Pfn) {
    if !k.fr.has(p, pg::LRU) {
        return;
    }
    match k.fr.lru_list(p) as usize {
        SLOT_ACTIVE => {
            let h = active_hot(k, p);
            k.reclaim.riel24_mut().active.set_hot(&k.fr, p, h);
        }
        SLOT_DIRTY => {
            let h = dirty_hot(k, p);
            k.reclaim.riel24_mut().dirty.set_hot(&k.fr, p, h);
        }
        _ => {}
    }
}

#[inline]
pub fn age_up(k: &mut Kernel, p: Pfn) {
    let a = &mut k.fr.aux[p as usize];
    *a = (*a + PAGE_AGE_ADV).min(PAGE_AGE_MAX);
}

#[inline]
pub fn age_down(k: &mut Kernel, p: Pfn) {
    k.fr.aux[p as usize] /= 2;
}

// ---- list operations (all under pagemap_lru_lock in the kernel) ------------------------------

fn mark_on(k: &mut Kernel, p: Pfn, slot: usize) {
    k.fr.set(p, pg::LRU);
    k.fr.set_lru_list(p, slot as u8);
    let z = k.zone_of(p);
    k.zones[z].lru_pages[slot] += 1;
}

fn mark_off(k: &mut Kernel, p: Pfn, slot: usize) {
    k.fr.clear(p, pg::LRU | pg::ACTIVE);
    k.fr.set_lru_list(p, LRU_NONE);
    let z = k.zone_of(p);
    k.zones[z].lru_pages[slot] -= 1;
}

pub fn add_active(k: &mut Kernel, p: Pfn) {
    mark_on(k, p, SLOT_ACTIVE);
    k.fr.set(p, pg::ACTIVE);
    let h = active_hot(k, p);
    k.reclaim.riel24_mut().active.push_head(&mut k.fr, p, h);
    k.reclaim.riel24_mut().lru.lists[SLOT_ACTIVE].len += 1;
}

pub fn add_dirty(k: &mut Kernel, p: Pfn) {
    mark_on(k, p, SLOT_DIRTY);
    k.reclaim.riel24_mut().dirty_bufs += buffers(k, p) as u64;
    let h = dirty_hot(k, p);
    k.reclaim.riel24_mut().dirty.push_head(&mut k.fr, p, h);
    k.reclaim.riel24_mut().lru.lists[SLOT_DIRTY].len += 1;
}

pub fn add_clean(k: &mut Kernel, p: Pfn) {
    mark_on(k, p, SLOT_CLEAN);
    let z = k.zone_of(p);
    k.zones[z].lruvec.lists[SLOT_CLEAN].push_head(&mut k.fr, p);
}

fn add_off(k: &mut Kernel, p: Pfn) {
    mark_on(k, p, SLOT_OFF);
    k.reclaim.riel24_mut().lru.lists[SLOT_OFF].push_head(&mut k.fr, p);
}

/// Take a page off whatever list holds it (`lru_cache_del` and friends).
pub fn del_page_from_lru(k: &mut Kernel, p: Pfn) {
    if !k.fr.has(p, pg::LRU) {
        return;
    }
    let slot = k.fr.lru_list(p) as usize;
    match slot {
        SLOT_ACTIVE => {
            k.reclaim.riel24_mut().active.remove(&mut k.fr, p);
            k.reclaim.riel24_mut().lru.lists[SLOT_ACTIVE].len -= 1;
        }
        SLOT_DIRTY => {
            k.reclaim.riel24_mut().dirty.remove(&mut k.fr, p);
            k.reclaim.riel24_mut().dirty_bufs -= buffers(k, p) as u64;
            k.reclaim.riel24_mut().lru.lists[SLOT_DIRTY].len -= 1;
        }
        SLOT_CLEAN => {
            let z = k.zone_of(p);
            k.zones[z].lruvec.lists[SLOT_CLEAN].remove(&mut k.fr, p);
        }
        _ => k.reclaim.riel24_mut().lru.lists[slot].remove(&mut k.fr, p),
    }
    mark_off(k, p, slot);
}

/// A generic "put this page on list `l`" from shared code.
pub fn add_to_list(k: &mut Kernel, p: Pfn, l: usize) {
    match l {
        SLOT_ACTIVE => add_active(k, p),
        SLOT_DIRTY => add_dirty(k, p),
        SLOT_CLEAN => add_clean(k, p),
        _ => add_off(k, p),
    }
}

/// `lru_cache_add` (`add_to_page_cache`, `add_to_swap_cache`): new pages start on
/// inactive_dirty with age 0 (2.4.8 use-once). An anonymous page not in the swap cache is on no
/// 2.4 list. A file page read or written through ext2 carries buffer heads.
pub fn lru_cache_add(k: &mut Kernel, p: Pfn) {
    if k.fr.has(p, pg::ANON) && !k.fr.has(p, pg::SWAPCACHE) {
        add_off(k, p);
        return;
    }
    if !k.fr.has(p, pg::ANON) && !k.fr.has(p, pg::SWAPBACKED) && !buffers(k, p) {
        k.fr.extra[p as usize] |= BUFFERS;
        k.reclaim.riel24_mut().bh_live += 1;
    }
    k.fr.clear(p, pg::ACTIVE);
    k.fr.aux[p as usize] = 0;
    add_dirty(k, p);
}

/// `activate_page`: inactive → active with age START.
pub fn activate_page(k: &mut Kernel, p: Pfn) {
    let slot = k.fr.lru_list(p) as usize;
    if !k.fr.has(p, pg::LRU) || (slot != SLOT_DIRTY && slot != SLOT_CLEAN) {
        return;
    }
    del_page_from_lru(k, p);
    k.fr.aux[p as usize] = PAGE_AGE_START;
    add_active(k, p);
    k.ev.inc(Vm::Pgactivate);
}

/// `deactivate_page`: active → inactive_dirty when nobody but the caller's PTE (already dropped
/// here) and the buffers hold it.
pub fn deactivate_page(k: &mut Kernel, p: Pfn) {
    k.fr.aux[p as usize] = 0;
    k.fr.clear(p, pg::REFERENCED);
    if k.fr.has(p, pg::LRU)
        && k.fr.lru_list(p) as usize == SLOT_ACTIVE
        && page_count(k, p) <= if buffers(k, p) { 2 } else { 1 }
    {
        del_page_from_lru(k, p);
        add_dirty(k, p);
        k.ev.inc(Vm::Pgdeactivate);
    } else {
        refresh(k, p);
    }
}

/// A page-cache lookup (`__find_page_nolock` sets PG_referenced) from read()/write(), then
/// `check_used_once`: a first use gives the page age START; a second use activates it.
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    k.fr.set(p, pg::REFERENCED);
    if !k.fr.has(p, pg::ACTIVE) {
        if k.fr.aux[p as usize] > 0 {
            activate_page(k, p);
        } else {
            k.fr.aux[p as usize] = PAGE_AGE_START;
            k.fr.clear(p, pg::REFERENCED);
        }
    }
    refresh(k, p);
}

/// A PTE was added or removed. Mapping a file page goes through a page-cache lookup in
/// `filemap_nopage`, which sets PG_referenced.
pub fn page_mapcount_changed(k: &mut Kernel, p: Pfn, mapped: bool) {
    if mapped && !k.fr.has(p, pg::ANON) {
        k.fr.set(p, pg::REFERENCED);
    }
    refresh(k, p);
}

// ---- zone state and the shortage tests ------------------------------------------------------

#[inline]
pub fn zone_free(k: &Kernel, z: usize) -> u64 {
    k.zones[z].free_pages
}

#[inline]
pub fn zone_clean(k: &Kernel, z: usize) -> u64 {
    k.zones[z].lru_pages[SLOT_CLEAN]
}

#[inline]
pub fn zone_dirty(k: &Kernel, z: usize) -> u64 {
    k.zones[z].lru_pages[SLOT_DIRTY]
}

/// `zone_inactive_plenty`: more than a third of the zone inactive or free.
#[inline]
pub fn zone_inactive_plenty(k: &Kernel, z: usize) -> bool {
    let zone = &k.zones[z];
    zone.present > 0 && zone_dirty(k, z) + zone_clean(k, z) + zone_free(k, z) > zone.present / 3
}

/// `zone_free_plenty`: free + inactive_clean above twice pages_high.
#[inline]
pub fn zone_free_plenty(k: &Kernel, z: usize) -> bool {
    zone_free(k, z) + zone_clean(k, z) > k.zones[z].wmark[2] * 2
}

/// `freepages.{min,low,high}`: the zones' watermarks summed.
pub fn freepages(k: &Kernel) -> [u64; 3] {
    let mut f = [0; 3];
    for z in k.zones.iter().filter(|z| z.present > 0) {
        for (acc, w) in f.iter_mut().zip(z.wmark) {
            *acc += w;
        }
    }
    f
}

/// `inactive_target`: about a second's worth of allocations.
pub fn inactive_target(k: &Kernel) -> u64 {
    (k.reclaim.riel24().memory_pressure >> 6).min(k.total_pages() / 4)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Short {
    Zone(usize),
    Global,
}

/// `free_shortage`: the first zone short of free + inactive_clean, or a global shortage.
pub fn free_shortage(k: &Kernel) -> Option<Short> {
    let mut global = 0;
    for z in 0..k.zones.len() {
        if k.zones[z].present == 0 {
            continue;
        }
        let free = zone_free(k, z) + zone_clean(k, z);
        if free < k.zones[z].wmark[1] {
            return Some(Short::Zone(z));
        }
        global += free;
    }
    (global < freepages(k)[2]).then_some(Short::Global)
}

/// `inactive_shortage`: the first zone short of inactive + free pages, or a global shortage
/// against `freepages.high + inactive_target`.
pub fn inactive_shortage(k: &Kernel) -> Option<Short> {
    let mut global = 0;
    for z in 0..k.zones.len() {
        if k.zones[z].present == 0 {
            continue;
        }
        let inactive = zone_dirty(k, z) + zone_clean(k, z) + zone_free(k, z);
        if inactive < k.zones[z].wmark[2] {
            return Some(Short::Zone(z));
        }
        global += inactive;
    }
    (global < freepages(k)[2] + inactive_target(k)).then_some(Short::Global)
}

/// What keeps 2.4.9's kswapd looping: `do_try_to_free_pages` launders on a free shortage and
/// refills on an inactive shortage, and fails while either remains.
pub fn kswapd_why(k: &Kernel, node: usize) -> Reason {
    let zone = |s: Short| match s {
        Short::Zone(z) => Some(z),
        Short::Global => None,
    };
    if let Some(s) = free_shortage(k) {
        return Reason::new(Why::FreeShortage, node, zone(s), 0);
    }
    if let Some(s) = inactive_shortage(k) {
        return Reason::new(Why::InactiveShortage, node, zone(s), 0);
    }
    Reason::new(Why::Balanced, node, None, 0)
}

fn shortage_now(k: &Kernel) -> u8 {
    let mut s = 0;
    if inactive_shortage(k).is_some() {
        s |= INACTIVE_SHORTAGE | GENERAL_SHORTAGE;
    }
    if free_shortage(k).is_some() {
        s |= FREE_SHORTAGE | GENERAL_SHORTAGE;
    }
    s
}

fn note_failure(k: &mut Kernel) {
    match inactive_shortage(k) {
        Some(Short::Zone(z)) => k.reclaim.riel24_mut().stats.shortages.zone_inactive[z] += 1,
        Some(Short::Global) => k.reclaim.riel24_mut().stats.shortages.global_inactive += 1,
        None => {}
    }
    match free_shortage(k) {
        Some(Short::Zone(z)) => k.reclaim.riel24_mut().stats.shortages.zone_free[z] += 1,
        Some(Short::Global) => k.reclaim.riel24_mut().stats.shortages.global_free += 1,
        None => {}
    }
}

/// `recalculate_vm_stats`: memory_pressure decays by a 64th once a second.
fn recalculate_vm_stats(k: &mut Kernel) {
    let mp = k.reclaim.riel24_mut().memory_pressure;
    k.reclaim.riel24_mut().memory_pressure = mp - (mp >> 6);
}

/// `shrink_dcache_memory`, `shrink_icache_memory`, `kmem_cache_reap`: vmlab has no dentry or
/// inode caches to speak of, so only their fixed cost is charged — except for the buffer_head
/// slab, whose empty pages `kmem_cache_reap` gives back.
fn shrink_caches(k: &mut Kernel, ctx: &mut Ctx) {
    k.charge(ctx, KFunc::KmemCacheReap, k.cost.syscall * 20);
    reap_buffer_heads(k, ctx);
}

// ---- the buffer_head slab ------------------------------------------------------------------
//
// A page read through `block_read_full_page` gets its buffer heads (`create_empty_buffers`)
// from the `buffer_head` slab, which grows a lowmem page at a time (`SLAB_NOFS`: no HighMem,
// may sleep, no __GFP_FS). `try_to_free_buffers` returns them to the slab; an empty slab page
// stays with the slab until `kmem_cache_reap`. The 2.4 slab allocates from partly used slabs
// first (`firstnotfull`), so with reads and page_launder freeing at the same pace the holes
// are refilled and a slab page is seldom wholly empty. Per-object placement is not kept (no
// room in the frame table); objects are taken as spread evenly over the slab's pages, so a
// page is empty with probability (1 - occupancy) ^ objects-per-page.

/// Slab pages the live buffer heads need.
fn bh_slab_needed(k: &Kernel) -> usize {
    let per = k.profile.bh_per_slab_page.max(1) as u64;
    k.reclaim.riel24().bh_live.div_ceil(per) as usize
}

/// `kmem_cache_grow` for the buffer heads of the page just added to the page cache. When no
/// lowmem page can be had 2.4 falls back on its reserved buffer heads (or waits for I/O to
/// free some): the slab stays short and grows at the next read.
pub fn grow_buffer_heads(k: &mut Kernel, ctx: &mut Ctx) {
    if k.profile.bh_per_slab_page == 0 {
        return;
    }
    while k.reclaim.riel24_mut().bh_slab.len() < bh_slab_needed(k) {
        let gfp = crate::page_alloc::Gfp { noretry: true, ..crate::page_alloc::Gfp::kernel() };
        let throttle = ctx.throttle_until;
        match k.alloc_pages(ctx, gfp, 0) {
            Ok(p) => {
                k.fr.set(p, pg::SLAB);
                k.g.slab += 1;
                k.reclaim.riel24_mut().bh_slab.push_back(p);
                k.reclaim.riel24_mut().stats.bh_slab_grown += 1;
                k.reclaim.riel24_mut().stats.bh_slab_max =
                    k.reclaim.riel24_mut().stats.bh_slab_max.max(k.reclaim.riel24_mut().bh_slab.len() as u64);
            }
            Err(_) => {
                ctx.throttle_until = throttle;
                k.reclaim.riel24_mut().stats.bh_slab_failed += 1;
                break;
            }
        }
    }
}

/// `kmem_cache_reap`'s share for the buffer_head slab: 80 % of its empty slabs, oldest first
/// (2.4.0–2.4.9 `best_len = (best_len*4 + 1)/5`; the three-list slab of 2.4.10 made it 50 %).
fn reap_buffer_heads(k: &mut Kernel, ctx: &mut Ctx) {
    let pages = k.reclaim.riel24_mut().bh_slab.len();
    let per = k.profile.bh_per_slab_page.max(1) as u64;
    if pages == 0 || k.reclaim.riel24_mut().bh_live >= pages as u64 * per {
        return;
    }
    let holes = 1.0 - k.reclaim.riel24_mut().bh_live as f64 / (pages as u64 * per) as f64;
    let empty = ((pages as f64 * holes.powi(per as i32)) as usize).min(pages - bh_slab_needed(k));
    for _ in 0..(empty * 4 + 1) / 5 {
        let Some(p) = k.reclaim.riel24_mut().bh_slab.pop_front() else { break };
        k.g.slab -= 1;
        k.reclaim.riel24_mut().stats.bh_slab_reaped += 1;
        free_reclaimed(k, ctx, p);
    }
}

// ---- do_try_to_free_pages, kswapd, kreclaimd -----------------------------------------------

/// One iteration's body for the arms in `shortage`, or its rest from a page_launder scan that
/// stopped with `resume` pages to go. `Some((until, left))`: page_launder stopped again to wait.
fn iteration(
    k: &mut Kernel,
    ctx: &mut Ctx,
    shortage: u8,
    mask: LaunderMask,
    resume: Option<u64>,
) -> Option<(u64, u64)> {
    if resume.is_none() && shortage & INACTIVE_SHORTAGE != 0 {
        scan::swap_out(k, ctx);
        scan::refill_inactive_scan(k, ctx);
    }
    if resume.is_some() || shortage & FREE_SHORTAGE != 0 {
        if let scan::LaunderEnd::Wait { until, left, .. } = scan::page_launder(k, ctx, mask, resume) {
            return Some((until, left));
        }
    }
    if shortage & GENERAL_SHORTAGE != 0 {
        shrink_caches(k, ctx);
    }
    None
}

/// A task's parked pass, taken off the engine.
fn unpark(k: &mut Kernel, task: usize) -> Option<Parked> {
    k.reclaim.riel24_mut().direct.get_mut(task).and_then(Option::take)
}

/// Has `task` a reclaim pass stopped on a buffer wait?
pub fn parked(k: &Kernel, task: usize) -> bool {
    k.reclaim.riel24().direct.get(task).is_some_and(Option::is_some)
}

/// `do_try_to_free_pages` as 2.4.9 has it: start with an inactive shortage, loop up to 64
/// times while any shortage remains, and report success only if none is left. A pass whose
/// page_launder waits on a page's buffers stops there (`ctx.throttle_until`: the wait's end)
/// and the task's next call goes on from that point.
pub fn do_try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, mask: LaunderMask) -> bool {
    let (mut shortage, mut maxtry, mut resume) = match unpark(k, ctx.task) {
        Some(p) => (p.shortage, p.maxtry, Some(p.launder_left)),
        None => {
            k.reclaim.riel24_mut().stats.do_try_to_free_pages += 1;
            (INACTIVE_SHORTAGE, 1u32 << DEF_PRIORITY, None)
        }
    };
    loop {
        if let Some((until, left)) = iteration(k, ctx, shortage, mask, resume.take()) {
            let r = k.reclaim.riel24_mut();
            if r.direct.len() <= ctx.task {
                r.direct.resize(ctx.task + 1, None);
            }
            r.direct[ctx.task] = Some(Parked { shortage, maxtry, launder_left: left });
            r.stats.launder_bh_waits += 1;
            task::note_buffer_wait(k, ctx, until.saturating_sub(ctx.clock()));
            ctx.throttle_until = until.max(ctx.clock() + 1);
            return false;
        }
        k.reclaim.riel24_mut().stats.do_try_iterations += 1;
        shortage = shortage_now(k);
        maxtry -= 1;
        if maxtry == 0 || shortage == 0 {
            break;
        }
    }
    if shortage != 0 {
        note_failure(k);
    }
    shortage == 0
}

/// Direct reclaim from `__alloc_pages` (`try_to_free_pages` with PF_MEMALLOC set).
pub fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, mask: LaunderMask) -> bool {
    if !parked(k, ctx.task) {
        // A pass that goes on after a buffer wait is the same call.
        k.ev.inc(Vm::Allocstall);
        k.reclaim.riel24_mut().stats.direct_passes += 1;
    }
    let was = ctx.in_reclaim;
    ctx.in_reclaim = true;
    let ok = do_try_to_free_pages(k, ctx, mask);
    ctx.in_reclaim = was;
    ok
}

/// `wakeup_kswapd`: only a kswapd sleeping on kswapd_wait hears it.
pub fn wakeup_kswapd(k: &mut Kernel) {
    if k.reclaim.riel24_mut().ks.asleep && !k.nodes.is_empty() {
        k.reclaim.riel24_mut().ks.asleep = false;
        k.wakeups.push(k.nodes[0].kswapd.task);
    }
}

pub fn wakeup_kreclaimd(k: &mut Kernel) {
    if let Some(t) = k.reclaim.riel24_mut().kreclaimd_task {
        if k.reclaim.riel24_mut().kreclaimd_asleep {
            k.reclaim.riel24_mut().kreclaimd_asleep = false;
            k.wakeups.push(t);
        }
    }
}

/// The 2.4.9 `out_of_memory`: only when free memory, clean pages, the page cache and swap are
/// all exhausted.
pub fn out_of_memory(k: &Kernel) -> bool {
    let fp = freepages(k);
    let free = k.nr_buddy_free();
    if free > fp[0] {
        return false;
    }
    let clean: u64 = (0..k.zones.len()).map(|z| zone_clean(k, z)).sum();
    if free + clean > fp[1] {
        return false;
    }
    let cache = k.g.file.saturating_sub(k.g.swapcache);
    if cache > k.total_pages() * 4 / 100 {
        return false;
    }
    crate::swap_state::free_swap_pages(k) == 0
}

/// One step of kswapd's loop: a piece of a do_try_to_free_pages iteration, or the decision to
/// loop again or sleep.
pub fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    if node != 0 {
        // One kswapd for the whole machine in 2.4.
        return KswapdAction::Sleep;
    }
    k.reclaim.riel24_mut().ks.asleep = false;
    let ks = k.reclaim.riel24_mut().ks.clone();
    match ks.phase {
        Phase::Top => {
            if ctx.clock() >= k.reclaim.riel24_mut().recalc_at + HZ_NS {
                k.reclaim.riel24_mut().recalc_at = ctx.clock();
                recalculate_vm_stats(k);
            }
            k.reclaim.riel24_mut().stats.kswapd_passes += 1;
            k.reclaim.riel24_mut().stats.do_try_to_free_pages += 1;
            k.ev.inc(Vm::Pageoutrun);
            k.reclaim.riel24_mut().ks.shortage = INACTIVE_SHORTAGE;
            k.reclaim.riel24_mut().ks.maxtry = 1 << DEF_PRIORITY;
            k.reclaim.riel24_mut().ks.phase = Phase::SwapOut;
        }
        Phase::SwapOut => {
            if ks.shortage & INACTIVE_SHORTAGE != 0 {
                scan::swap_out(k, ctx);
            }
            k.reclaim.riel24_mut().ks.phase = Phase::Refill;
        }
        Phase::Refill => {
            if ks.shortage & INACTIVE_SHORTAGE != 0 {
                scan::refill_inactive_scan(k, ctx);
            }
            k.reclaim.riel24_mut().ks.phase = Phase::Launder;
        }
        Phase::Launder => {
            if ks.shortage & FREE_SHORTAGE != 0 {
                // GFP_KSWAPD never waits: page_launder ends its pass.
                scan::page_launder(k, ctx, buffers::KSWAPD, None);
            }
            k.reclaim.riel24_mut().ks.phase = Phase::General;
        }
        Phase::General => {
            if ks.shortage & GENERAL_SHORTAGE != 0 {
                shrink_caches(k, ctx);
            }
            k.reclaim.riel24_mut().stats.do_try_iterations += 1;
            let shortage = shortage_now(k);
            let maxtry = ks.maxtry - 1;
            k.reclaim.riel24_mut().ks.shortage = shortage;
            k.reclaim.riel24_mut().ks.maxtry = maxtry;
            if maxtry > 0 && shortage != 0 {
                k.reclaim.riel24_mut().ks.phase = Phase::SwapOut;
                return KswapdAction::Continue;
            }
            k.reclaim.riel24_mut().ks.phase = Phase::Top;
            // kswapd()'s loop runs `tq_disk` after `do_try_to_free_pages` and the once-a-second
            // work, before it decides to sleep (2.4.6-pre3's mm/vmscan.c, in Rik van Riel's
            // "even out background aging", linux-mm, 15 Jun 2001).
            k.run_tq_disk(ctx.clock());
            if shortage != 0 {
                note_failure(k);
                k.reclaim.riel24_mut().stats.kswapd_failed_passes += 1;
                if !k.profile.kswapd_ignore_failure {
                    // `if (!do_try_to_free_pages(GFP_KSWAPD, 1)) { if (out_of_memory()) oom_kill(); continue; }`
                    if out_of_memory(k) {
                        crate::oom_kill::out_of_memory(k, ctx);
                    }
                    return KswapdAction::Continue;
                }
            }
            k.reclaim.riel24_mut().ks.asleep = true;
            k.reclaim.riel24_mut().stats.kswapd_sleeps += 1;
            return KswapdAction::Nap(HZ_NS);
        }
    }
    KswapdAction::Continue
}

/// kreclaimd: move inactive_clean pages to the free lists of every zone below pages_low.
pub fn kreclaimd_step(k: &mut Kernel, ctx: &mut Ctx) -> KswapdAction {
    k.reclaim.riel24_mut().kreclaimd_asleep = false;
    for z in 0..k.zones.len() {
        if k.zones[z].present == 0 {
            continue;
        }
        while zone_free(k, z) < k.zones[z].wmark[1] {
            if ctx.sys_ns >= crate::sched::QUANTUM_NS {
                return KswapdAction::Continue;
            }
            match scan::reclaim_page(k, ctx, z, CLEAN_FOR_KRECLAIMD) {
                Some(p) => {
                    k.ev.inc(Vm::PgstealKswapd);
                    free_reclaimed(k, ctx, p);
                }
                None => break,
            }
        }
    }
    k.reclaim.riel24_mut().stats.kreclaimd_runs += 1;
    k.reclaim.riel24_mut().kreclaimd_asleep = true;
    KswapdAction::Sleep
}

/// `__free_page` of a page reclaim_page handed over.
pub fn free_reclaimed(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    let ncpu = k.cfg.cpus as u64;
    if k.reclaim.riel24_mut().memory_pressure > ncpu {
        k.reclaim.riel24_mut().memory_pressure -= 1;
    }
    k.free_pages(ctx, p, 0);
}

impl ReclaimEngine for Riel24 {
    fn lru_scope(_k: &Kernel, _zid: usize) -> LruScope {
        LruScope::Global
    }
    fn inactive_target(k: &Kernel) -> Option<u64> {
        Some(inactive_target(k))
    }
    fn lru_names() -> [Option<&'static str>; NR_LRU_LISTS] {
        let mut n = [None; NR_LRU_LISTS];
        n[SLOT_CLEAN] = Some("Inact_clean");
        n[SLOT_OFF] = Some("Unlisted(anon)");
        n[SLOT_DIRTY] = Some("Inact_dirty");
        n[SLOT_ACTIVE] = Some("Active");
        n
    }
    fn lru_add(k: &mut Kernel, p: Pfn) {
        lru_cache_add(k, p)
    }
    fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
        mark_page_accessed(k, p)
    }
    /// `check_used_once` activates a page through `activate_page`, which takes pagemap_lru_lock
    /// (2.4.0 `mm/swap.c`, `spin_lock(&pagemap_lru_lock); activate_page_nolock(page)`): a task
    /// writing a page the second time spins while a scan on another CPU holds it.
    fn mark_page_accessed_by(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
        if !k.fr.has(p, pg::ACTIVE) && k.fr.aux[p as usize] > 0 {
            lock::spin_lock(k, ctx);
        }
        mark_page_accessed(k, p)
    }
    fn page_mapcount_changed(k: &mut Kernel, p: Pfn, mapped: bool) {
        page_mapcount_changed(k, p, mapped)
    }
    /// 2.4.9's `__free_pages_ok` also eases `memory_pressure`.
    fn free_kernel_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
        free_reclaimed(k, ctx, p)
    }
    fn page_cache_added(k: &mut Kernel, ctx: &mut Ctx, _p: Pfn) {
        grow_buffer_heads(k, ctx)
    }
    fn page_dirtied_by_write(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, newly: bool) {
        buffers::page_dirtied_by_write(k, ctx, p);
        if newly && k.profile.bdflush {
            bdflush::mark_buffer_dirty(k, ctx, p);
        }
    }
    fn write_submitted(k: &mut Kernel, ctx: &Ctx, pages: u64, wait_ns: u64) {
        task::note_write(k, ctx, pages, wait_ns)
    }
    /// `pagemap_lru_lock` is taken with interrupts on: a handler lengthens the hold.
    fn irq_interrupted(k: &mut Kernel, cpu: u32, at: u64, ns: u64) {
        lock::interrupted(k, cpu, at, ns)
    }
    fn alloc_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Option<Result<Pfn, AllocFail>> {
        Some(alloc::alloc_pages(k, ctx, gfp, order))
    }
    fn wakeup_kswapd(k: &mut Kernel, _zid: usize, _order: u32, _classzone: usize) {
        wakeup_kswapd(k)
    }
    fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, _order: u32, _classzone: usize) -> u64 {
        try_to_free_pages(k, ctx, buffers::direct_mask(gfp)) as u64
    }
    fn kswapd_why(k: &Kernel, node: usize) -> Reason {
        kswapd_why(k, node)
    }
    fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
        kswapd_step(k, ctx, node)
    }
    fn has_kreclaimd() -> bool {
        true
    }
    fn set_kreclaimd_task(k: &mut Kernel, t: usize) {
        k.reclaim.riel24_mut().kreclaimd_task = Some(t);
    }
    fn kreclaimd_step(k: &mut Kernel, ctx: &mut Ctx) -> KswapdAction {
        kreclaimd_step(k, ctx)
    }
}
