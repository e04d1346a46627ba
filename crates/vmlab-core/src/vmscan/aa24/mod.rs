//! Andrea Arcangeli's 2.4 VM (2.4.10 … 2.4.23aa): one global active and one global inactive
//! list filtered by classzone, `try_to_free_pages_zone` → `shrink_caches` → `refill_inactive` +
//! `shrink_cache`, and the page-table walk `swap_out` over the mm list; kswapd balances each
//! classzone that an allocation marked `need_balance`. The 2.4.23aa2 `shmem-big-iron` switches
//! are the profile's `objrmap_walk` (here), `shm_writepage_io` (in `vmscan::pageout`) and
//! `clean_cache_pass` (here).
//!
//! Slots of `k.global_lru`: `LRU_INACTIVE_FILE` is the inactive list and `LRU_ACTIVE_FILE` the
//! active list, whatever the page type (2.4 has one list of each, and their order is the whole
//! story); `LRU_ACTIVE_ANON` holds anonymous pages kept off the LRU by `vm_anon_lru = 0` — never
//! scanned, they are reached only by `swap_out`, which moves them to the inactive list when it
//! gives them a swap slot.
//!
//! Reclaim is resumable: a call that has used its time slice (`need_resched`), must sleep on a
//! page reclaim is writing (`wait_on_page`) or found the request queue full in its own
//! `writepage` (`__get_request_wait`) saves where it was per task and returns; the caller's
//! allocation comes back and the call goes on from there. So 25 tasks in reclaim interleave with
//! faults and I/O completions as they do on the real machine.

use rustc_hash::FxHashMap;

#[cfg(test)]
mod ptl_tests;
pub mod slab;
mod task;
#[cfg(test)]
mod walk_tests;

use super::riel24::lock::LruLock;
use super::{add_to_list, del_page_from_lru, pageout, remove_mapping_and_free, KswapdAction, SWAP_CLUSTER_MAX};
use super::{LruScope, ReclaimEngine};
use crate::kernel::{Ctx, IoDone, Kernel};
use crate::mm_types::{pg, Pfn, NIL};
use crate::mmap::{pte, vm, PTRS_PER_TABLE};
use crate::mmzone::NR_LRU_LISTS;
use crate::mmzone::{KswapdPhase, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_FILE};
use crate::page_alloc::{AllocFail, Gfp};
use crate::sched::QUANTUM_NS;
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::Vm;
pub use task::TaskReclaim;
use task::TaskSnap;

pub const INACTIVE: usize = LRU_INACTIVE_FILE;
pub const ACTIVE: usize = LRU_ACTIVE_FILE;
/// Anonymous pages not on the LRU (`vm_anon_lru = 0`).
pub const ANON_OFF_LRU: usize = LRU_ACTIVE_ANON;
/// `mm->swap_address == TASK_SIZE`: the walk reached the end of this mm.
const END: u64 = u64::MAX;
/// kswapd sleeps `HZ*5` after a failed `try_to_free_pages_zone`.
const KSWAPD_FAIL_SLEEP_NS: u64 = 5_000_000_000;

/// The engine's state that the kernel's globals and per-mm fields hold in 2.4.
#[derive(Default)]
pub struct Aa24State {
    /// `swap_mm`: where the walk goes on (None = `init_mm`, the list head).
    pub swap_mm: Option<u32>,
    /// `mm->swap_address` per mm id (vpn; `END` when walked to the end).
    swap_address: Vec<u64>,
    /// When a walker last held each mm's `page_table_lock`: [taken, released).
    ptl_held: Vec<(u64, u64)>,
    /// When objrmap last held each file's `i_shared_lock`: [taken, released).
    i_shared_held: Vec<(u64, u64)>,
    /// Per task: its `try_to_free_pages_zone` call in progress.
    tfp: Vec<Option<Tfp>>,
    /// Per node: kswapd's call in progress, with the zone it balances.
    kswapd: Vec<Option<(usize, Tfp)>>,
    /// Completion time of writes `shrink_cache` started (pages carrying PG_launder).
    launder_done: FxHashMap<Pfn, u64>,
    scratch: Vec<(u64, u32)>,
    /// What the run observed, for reports.
    pub stats: Aa24Stats,
    /// The global lists (slots: see the module comment).
    pub lru: crate::mmzone::Lruvec,
    /// Per zone: `zone->need_balance`, set by an allocation that failed its watermark.
    pub need_balance: Vec<bool>,
    /// The `buffer_head` slab cache (`slab.rs`).
    pub bh: slab::BhCache,
    /// `pagemap_lru_lock`: the 2.4.9 engine's model of it (`riel24/lock.rs`), one lock over both lists.
    pub lock: LruLock,
    /// With `clean_pass_anchor`: the inactive page the clean-cache search looks at next (None: the
    /// tail), the place a `PG_anchor` page would hold in the list.
    clean_anchor: Option<Pfn>,
}

#[derive(Clone, Debug, Default)]
pub struct Aa24Stats {
    /// Swap-cache pages when the first swap write was submitted, and when.
    pub swapcache_at_first_swapout: Option<u64>,
    pub first_swapout_ns: Option<u64>,
    /// The same at the first write of a shm page ("the first 4k of shm" of the seed): anonymous
    /// pages the walk gave a swap slot may have been written before.
    pub swapcache_at_first_shm_swapout: Option<u64>,
    pub first_shm_swapout_ns: Option<u64>,
    /// When `shmem_writepage` first moved a shm page into the swap cache: the conversion phase
    /// runs from here to the first shm swap write.
    pub first_shm_to_swapcache_ns: Option<u64>,
    /// pgfault / pgmajfault when reclaim first ran, and when.
    pub faults_at_first_reclaim: Option<(u64, u64)>,
    pub first_reclaim_ns: Option<u64>,
    /// PTEs the walk cleared, and the ones objrmap cleared for it.
    pub walk_unmapped: u64,
    /// PTEs the walk found young (aged, page marked accessed) or mapping an active page.
    pub walk_young: u64,
    pub walk_active: u64,
    /// Pages the walk made freeable: anonymous, and page/shm cache.
    pub walk_freeable_anon: u64,
    pub walk_freeable_cache: u64,
    pub objrmap_unmapped: u64,
    /// Pages objrmap left with no PTE (the shm it made freeable for the walk).
    pub objrmap_pages_freeable: u64,
    /// Trylocks objrmap lost (i_shared_lock, another mm's page_table_lock).
    pub objrmap_trylock_failed: u64,
    /// objrmap passes stopped by a young PTE (the page is in use elsewhere).
    pub objrmap_young: u64,
    /// `swap_out` calls, and the ones that found SWAP_CLUSTER_MAX freeable pages.
    pub swap_out_calls: u64,
    pub swap_out_success: u64,
    /// Whole address spaces walked to their end, and `swap_out_mm` calls.
    pub mms_walked: u64,
    pub mm_visits: u64,
    /// `swap_out_mm` calls made before the walk first made a page-cache (shm) page freeable.
    pub mm_visits_at_first_freeable_cache: Option<u64>,
    /// Pages `shrink_cache` handed to writepage / freed; pages the clean pass freed.
    pub writepages: u64,
    pub freed: u64,
    pub clean_pass_freed: u64,
    /// Reclaimers that slept on a page under their own writeback.
    pub launder_waits: u64,
    /// `pagemap_lru_lock` acquisitions that found another CPU holding it.
    pub lock_contended: u64,
    /// PTEs `swap_out` looked at, per simulated second: when the kernel was swapping out.
    pub walk_ptes_per_s: Vec<u64>,
    /// Per task (index): what its own `try_to_free_pages_zone` calls did. Kept per call, not per
    /// page, so that a census can say where one allocator's time went (seed 002's `cp`).
    pub by_task: Vec<TaskReclaim>,
}

/// One `try_to_free_pages_zone` call.
#[derive(Clone, Copy, Debug)]
struct Tfp {
    /// Classzone (zone kind index): pages of higher zones are skipped.
    cz: usize,
    tries: u64,
    nr: i64,
    failed_swapout: bool,
    step: Step,
}

#[derive(Clone, Copy, Debug)]
enum Step {
    /// `shrink_caches`: refill the inactive list, then scan it.
    PassStart,
    /// aa2: the clean-cache pass, pages left to look at.
    Clean { left: u64 },
    /// `shrink_cache`'s main loop.
    Scan { max_scan: u64, max_mapped: i64 },
    /// `swap_out` because `max_mapped` ran out, then back to the scan.
    MappedSwapOut { max_scan: u64, so: SwapOut },
    /// The `swap_out` that ends each pass.
    PassSwapOut { so: SwapOut },
}

/// One `swap_out` call: freeable pages still wanted, and mm visits left.
#[derive(Clone, Copy, Debug)]
struct SwapOut {
    nr: u64,
    counter: i64,
}

enum Run {
    Done(bool),
    Resched,
    Wait(u64, WaitOn),
}

/// What a reclaimer sleeps on inside `shrink_cache`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaitOn {
    /// `wait_on_page` of a `PG_launder` page under I/O.
    Launder,
    /// `__get_request_wait` inside its own `writepage`: the request queue is full.
    Queue,
}

/// Per-operation CPU costs, from the machine's cost table (already scaled by its clock).
struct Costs {
    /// A page taken off a list tail and put back at a head, with its flags tested.
    lru: u64,
    /// One PTE slot of the walk: load and `pte_present`.
    pte: u64,
    /// A present PTE: touching its `struct page`.
    present: u64,
    /// `ptep_get_and_clear` + `flush_tlb_page` (a cross-CPU IPI on SMP) + the reference drop.
    unmap: u64,
    /// objrmap per VMA: trylock and the pgd/pmd/pte lookup.
    objrmap_vma: u64,
}

fn costs(k: &Kernel) -> Costs {
    Costs {
        lru: k.cost.lru_scan,
        pte: k.cost.pte_walk * 2,
        present: k.cost.lru_scan,
        unmap: k.cost.lock_handoff / 2,
        objrmap_vma: k.cost.rmap_one * 2,
    }
}

fn grow<T: Clone>(v: &mut Vec<T>, i: usize, fill: T) {
    if v.len() <= i {
        v.resize(i + 1, fill);
    }
}

impl Aa24State {
    pub fn new(zones: usize) -> Aa24State {
        Aa24State { need_balance: vec![false; zones], ..Default::default() }
    }
    fn swap_address(&self, mm: u32) -> u64 {
        self.swap_address.get(mm as usize).copied().unwrap_or(0)
    }
    fn set_swap_address(&mut self, mm: u32, a: u64) {
        grow(&mut self.swap_address, mm as usize, 0);
        self.swap_address[mm as usize] = a;
    }
    /// The last hold of `mm`'s `page_table_lock` by a walker: (taken, released).
    fn ptl_hold(&self, mm: u32) -> (u64, u64) {
        self.ptl_held.get(mm as usize).copied().unwrap_or((0, 0))
    }
    /// Is `mm`'s `page_table_lock` held by a walker at `t`? A task whose quantum is simulated after
    /// the walker's may reach the lock at a time before the walk took it: it is free then.
    fn ptl_held_at(&self, mm: u32, t: u64) -> bool {
        let (from, until) = self.ptl_hold(mm);
        from <= t && t < until
    }
    /// A walk held `mm`'s lock over [from, until). A walker that queued for the previous hold
    /// took the lock as that one let go: the lock was busy without a break, so the holds merge
    /// (a fault inside the first one still waits for the whole queue).
    fn set_ptl_hold(&mut self, mm: u32, from: u64, until: u64) {
        grow(&mut self.ptl_held, mm as usize, (0, 0));
        let (pf, pu) = self.ptl_held[mm as usize];
        let from = if pf <= from && from <= pu { pf } else { from };
        self.ptl_held[mm as usize] = (from, until);
    }
}

// ---------------------------------------------------------------------------------------------
// LRU entry points

/// `lru_cache_add`: page cache and swap cache go to the inactive head; with `vm_anon_lru = 0`
/// a new anonymous page stays off the LRU.
pub fn lru_add(k: &mut Kernel, p: Pfn) {
    let f = k.fr.flags[p as usize];
    if f & pg::ANON != 0 && f & pg::SWAPCACHE == 0 && k.profile.tunables.vm_anon_lru == 0 {
        add_to_list(k, p, ANON_OFF_LRU, false);
    } else if f & pg::ACTIVE != 0 {
        add_to_list(k, p, ACTIVE, false);
    } else {
        add_to_list(k, p, INACTIVE, false);
    }
}

#[inline]
fn on_list(k: &Kernel, p: Pfn, l: usize) -> bool {
    k.fr.has(p, pg::LRU) && k.fr.lru_list(p) as usize == l
}

/// `mark_page_accessed`: a second access to an inactive, referenced page activates it.
pub fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
    let f = k.fr.flags[p as usize];
    if f & pg::ACTIVE == 0 && f & pg::REFERENCED != 0 {
        if on_list(k, p, INACTIVE) {
            del_page_from_lru(k, p);
            k.fr.set(p, pg::ACTIVE);
            add_to_list(k, p, ACTIVE, false);
            k.ev.inc(Vm::Pgactivate);
        }
        k.fr.clear(p, pg::REFERENCED);
    } else {
        k.fr.set(p, pg::REFERENCED);
    }
}

/// Move a page from the tail of list `l` to its head (`list_del` + `list_add`).
#[inline]
fn rotate_to_head(k: &mut Kernel, p: Pfn, l: usize) {
    let (list, fr) = super::list_mut(k, super::LruScope::Global, l);
    list.remove(fr, p);
    list.push_head(fr, p);
}

/// `memclass`: may reclaim for classzone `cz` use page `p`?
#[inline]
fn memclass(k: &Kernel, p: Pfn, cz: usize) -> bool {
    k.zones[k.zone_of(p)].kind as usize <= cz
}

/// The classzone's cumulative counter of list `l` (its zone and every zone below it).
fn cz_count(k: &Kernel, cz: usize, l: usize) -> u64 {
    k.zones.iter().filter(|z| z.kind as usize <= cz).map(|z| z.lru_pages[l]).sum()
}

// ---------------------------------------------------------------------------------------------
// kswapd and direct reclaim entry points

/// `__alloc_pages` found the classzone under its low watermark: mark it and wake kswapd.
pub fn wakeup_kswapd(k: &mut Kernel, zid: usize, _order: u32, classzone: usize) {
    let node = k.zones[zid].node;
    let target =
        k.nodes[node].zones.iter().copied().rfind(|&z| k.zones[z].kind as usize <= classzone && k.zones[z].managed > 0);
    let Some(z) = target else { return };
    k.reclaim.aa24_mut().need_balance[z] = true;
    let ks = &mut k.nodes[node].kswapd;
    if ks.phase == KswapdPhase::Sleeping {
        ks.phase = KswapdPhase::Balancing;
        ks.sleeping = false;
        k.wakeups.push(ks.task);
    }
}

fn observe_first_reclaim(k: &mut Kernel, ctx: &Ctx) {
    if k.reclaim.aa24_mut().stats.faults_at_first_reclaim.is_none() {
        k.reclaim.aa24_mut().stats.faults_at_first_reclaim = Some((k.ev.get(Vm::Pgfault), k.ev.get(Vm::Pgmajfault)));
        k.reclaim.aa24_mut().stats.first_reclaim_ns = Some(ctx.clock());
    }
}

fn new_tfp(k: &Kernel, cz: usize) -> Tfp {
    Tfp {
        cz,
        tries: k.profile.tunables.vm_passes,
        nr: SWAP_CLUSTER_MAX as i64,
        failed_swapout: false,
        step: Step::PassStart,
    }
}

/// Direct reclaim from `balance_classzone`: `try_to_free_pages_zone(classzone)`. Returns the pages
/// freed; 0 with `ctx.throttle_until` set when the call is to be resumed at that time.
pub fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, _gfp: Gfp, _order: u32, classzone: usize) -> u64 {
    observe_first_reclaim(k, ctx);
    let t = ctx.task;
    grow(&mut k.reclaim.aa24_mut().tfp, t, None);
    let mut st = match k.reclaim.aa24_mut().tfp[t].take() {
        Some(s) if s.cz == classzone => s,
        other => {
            // A call for another classzone (a page-table allocation) stays parked.
            k.reclaim.aa24_mut().tfp[t] = other;
            k.ev.inc(Vm::Allocstall);
            task::entry(&mut k.reclaim.aa24_mut().stats, t).calls += 1;
            new_tfp(k, classzone)
        }
    };
    let budget = ctx.sys_ns + QUANTUM_NS;
    let r = run_counted(k, ctx, &mut st, budget);
    match r {
        Run::Done(ok) => {
            if ok {
                (SWAP_CLUSTER_MAX as i64 - st.nr.max(0)).max(1) as u64
            } else {
                task::entry(&mut k.reclaim.aa24_mut().stats, t).failed += 1;
                0
            }
        }
        Run::Resched => {
            k.reclaim.aa24_mut().tfp[t] = Some(st);
            ctx.throttle_until = ctx.clock() + 1;
            0
        }
        Run::Wait(until, _) => {
            k.reclaim.aa24_mut().tfp[t] = Some(st);
            ctx.throttle_until = until.max(ctx.clock() + 1);
            0
        }
    }
}

/// `__alloc_pages` for a task whose `try_to_free_pages_zone` call is parked. 2.4.23's
/// `balance_classzone` does not return before that call does: a reclaimer that rescheduled
/// (`need_resched` → `schedule()`) or slept inside `shrink_cache` (`wait_on_page`,
/// `__get_request_wait` in its `writepage`) is still in the call when it runs again, and looks at
/// the free lists only when the call is over (taking the first page it freed, `local_pages`).
/// So the call goes on before anything else; the shared allocator serves every other case.
pub fn alloc_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Option<Result<Pfn, AllocFail>> {
    if ctx.is_kswapd || ctx.in_reclaim || !gfp.direct_reclaim {
        return None;
    }
    let cz = k.reclaim.aa24().tfp.get(ctx.task).copied().flatten()?.cz;
    let (zl, n) = k.zonelist(ctx.node, gfp);
    if zl[..n].iter().map(|&z| k.zones[z].kind as usize).max() != Some(cz) {
        return None;
    }
    let freed = try_to_free_pages(k, ctx, gfp, order, cz);
    if freed == 0 {
        if ctx.throttle_until > ctx.clock() {
            return Some(Err(AllocFail::Throttled));
        }
        // The call gave up after `vm_passes` rounds: as after any failed `balance_classzone`.
        return Some(k.alloc_above_high(ctx, gfp, order));
    }
    k.alloc_after_direct_reclaim(ctx, gfp, order, freed).map(Ok)
}

/// `check_classzone_need_balance`: no zone of the classzone is above its high watermark.
fn classzone_need_balance(k: &Kernel, z: usize) -> bool {
    let node = k.zones[z].node;
    let cz = k.zones[z].kind as usize;
    !k.nodes[node].zones.iter().any(|&zl| {
        let zone = &k.zones[zl];
        zone.kind as usize <= cz
            && k.zone_free(zl) > zone.high_wmark() + zone.lowmem_reserve.get(cz).copied().unwrap_or(0)
    })
}

/// What keeps 2.4.23aa's kswapd running: a zone still marked `need_balance` (the one in progress
/// first, as `kswapd_balance` takes them).
pub fn kswapd_why(k: &Kernel, node: usize) -> crate::stats::explain::Reason {
    use crate::stats::explain::{Reason, Why};
    let current = k.reclaim.aa24().kswapd.get(node).and_then(|x| x.as_ref().map(|(z, _)| *z));
    let z = current.or_else(|| {
        k.nodes[node].zones.iter().rev().copied().find(|&z| k.reclaim.aa24().need_balance[z] && k.zones[z].managed > 0)
    });
    match z {
        Some(z) => Reason::new(Why::NeedBalance, node, Some(z), 0),
        None => Reason::new(Why::Balanced, node, None, 0),
    }
}

/// One step of kswapd: `kswapd_balance` over the zones marked `need_balance`, highest first.
pub fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
    grow(&mut k.reclaim.aa24_mut().kswapd, node, None);
    let (z, mut st) = match k.reclaim.aa24_mut().kswapd[node].take() {
        Some(x) => x,
        None => {
            let pick = k.nodes[node]
                .zones
                .iter()
                .rev()
                .copied()
                .find(|&z| k.reclaim.aa24().need_balance[z] && k.zones[z].managed > 0);
            let Some(z) = pick else {
                // kswapd() runs `tq_disk` once `kswapd_balance` has no zone left, before it
                // sleeps (2.4.27's `mm/vmscan.c`; a failed zone's 5-s nap does not).
                k.run_tq_disk(ctx.clock());
                let ks = &mut k.nodes[node].kswapd;
                ks.phase = KswapdPhase::Sleeping;
                ks.sleeping = true;
                return KswapdAction::Sleep;
            };
            observe_first_reclaim(k, ctx);
            k.ev.inc(Vm::Pageoutrun);
            task::entry(&mut k.reclaim.aa24_mut().stats, ctx.task).calls += 1;
            (z, new_tfp(k, k.zones[z].kind as usize))
        }
    };
    k.nodes[node].kswapd.phase = KswapdPhase::Balancing;
    let budget = ctx.sys_ns + QUANTUM_NS;
    // Counted for kswapd as a direct reclaimer's slice is (its `scanned` stays 0: the snapshot
    // reads `pgscan_direct`).
    let r = run_counted(k, ctx, &mut st, budget);
    match r {
        Run::Resched => {
            k.reclaim.aa24_mut().kswapd[node] = Some((z, st));
            KswapdAction::Continue
        }
        Run::Wait(until, _) => {
            k.reclaim.aa24_mut().kswapd[node] = Some((z, st));
            KswapdAction::Nap(until.saturating_sub(ctx.clock()).max(1))
        }
        Run::Done(false) => {
            k.reclaim.aa24_mut().need_balance[z] = false;
            task::entry(&mut k.reclaim.aa24_mut().stats, ctx.task).failed += 1;
            KswapdAction::Nap(KSWAPD_FAIL_SLEEP_NS)
        }
        Run::Done(true) => {
            if !classzone_need_balance(k, z) {
                k.reclaim.aa24_mut().need_balance[z] = false;
            }
            KswapdAction::Continue
        }
    }
}

/// A page fault takes `mm->page_table_lock` (`handle_mm_fault`): it spins while a walker holds
/// it, and only if it comes to the lock inside the walk's hold (see `ptl_tests.rs`).
pub fn page_table_lock(k: &mut Kernel, ctx: &mut Ctx, mm: u32) {
    let t = ctx.clock();
    if k.reclaim.aa24().ptl_held_at(mm, t) {
        let (_, until) = k.reclaim.aa24().ptl_hold(mm);
        k.charge(ctx, KFunc::PageTableLockSpin, until - t);
    }
}

/// A walker about to walk `mm` (`swap_out_mm`'s `spin_lock`) waits for the walker that holds it,
/// even one whose hold the simulation placed later than this walker's clock: two walks of one mm
/// never overlap. All walkers start at the shared `swap_mm`, so they queue here one behind the
/// other (J. Nomura, "Re: [2.4] heavy-load under swap space shortage", LKML, 3 Feb 2004, on
/// 2.4.24: "The CPUs are virtually seriarized for swap_out_mm"; Hugh Dickins saw the same in
/// 2.4.13).
fn walker_page_table_lock(k: &mut Kernel, ctx: &mut Ctx, mm: u32) {
    let (_, until) = k.reclaim.aa24().ptl_hold(mm);
    if until > ctx.clock() {
        let spin = until - ctx.clock();
        k.charge(ctx, KFunc::PageTableLockSpin, spin);
    }
}

// ---------------------------------------------------------------------------------------------
// try_to_free_pages_zone

/// `spin_lock(&pagemap_lru_lock)`. 2.4.23's `shrink_caches` takes it before `refill_inactive` and
/// `shrink_cache` keeps it over its whole scan, letting go only to `schedule`, to wait on a page,
/// around `writepage` and for the mapped branch's `swap_out`: reclaimers on other CPUs spin, and
/// so does `lru_cache_add` of every new page-cache page. Returns when it was taken.
fn lru_lock(k: &mut Kernel, ctx: &mut Ctx) -> u64 {
    let (wait, contended) = k.reclaim.aa24_mut().lock.acquire(k.now, ctx.clock(), ctx.cpu, ctx.task);
    if contended {
        k.reclaim.aa24_mut().stats.lock_contended += 1;
    }
    if wait > 0 {
        k.charge(ctx, KFunc::LruLockSpin, wait);
    }
    ctx.clock()
}

/// `spin_unlock(&pagemap_lru_lock)` of the hold `held`, if any.
fn lru_unlock(k: &mut Kernel, ctx: &Ctx, held: &mut Option<u64>) {
    if let Some(taken) = held.take() {
        let now = k.now;
        let s = k.reclaim.aa24_mut();
        s.stats.lock_contended += s.lock.release(now, taken, ctx.clock(), ctx.cpu);
    }
}

fn ensure_locked(k: &mut Kernel, ctx: &mut Ctx, held: &mut Option<u64>) {
    if held.is_none() {
        *held = Some(lru_lock(k, ctx));
    }
}

/// `lru_cache_add` of a page a read added to the page cache takes the lock for a moment.
pub fn lru_cache_add_lock(k: &mut Kernel, ctx: &mut Ctx) {
    let before = ctx.sys_ns;
    let mut held = Some(lru_lock(k, ctx));
    lru_unlock(k, ctx, &mut held);
    // Only a spin is worth a per-task note (a read's page is not).
    if ctx.sys_ns > before {
        task::entry(&mut k.reclaim.aa24_mut().stats, ctx.task).lru_add_spin_ns += ctx.sys_ns - before;
    }
}

fn scan_step(k: &Kernel, st: &Tfp) -> Step {
    let t = &k.profile.tunables;
    let max_scan = (cz_count(k, st.cz, INACTIVE) + cz_count(k, st.cz, ACTIVE)) / t.vm_cache_scan_ratio.max(1);
    Step::Scan { max_scan, max_mapped: st.nr * t.vm_mapped_ratio as i64 }
}

fn new_swap_out(k: &mut Kernel) -> SwapOut {
    k.reclaim.aa24_mut().stats.swap_out_calls += 1;
    let mms = k.mms.iter().filter(|m| m.is_some()).count() as i64;
    SwapOut { nr: SWAP_CLUSTER_MAX, counter: mms << 1 }
}

/// [`run`], with what the slice did added to `ctx.task`'s `by_task` entry, the sleep it ended in
/// included.
fn run_counted(k: &mut Kernel, ctx: &mut Ctx, st: &mut Tfp, budget: u64) -> Run {
    let snap = TaskSnap::take(k, ctx);
    let r = run(k, ctx, st, budget);
    let (launder, queue) = match r {
        Run::Wait(until, WaitOn::Launder) => (until.saturating_sub(ctx.clock()), 0),
        Run::Wait(until, WaitOn::Queue) => (0, until.saturating_sub(ctx.clock())),
        _ => (0, 0),
    };
    snap.add_since(k, ctx, launder, queue);
    r
}

/// The body of `try_to_free_pages_zone`: `vm_passes` rounds of `shrink_caches` (+ one failing
/// `swap_out` at most per call), until SWAP_CLUSTER_MAX pages are freed. Every way out of a slice
/// lets go of `pagemap_lru_lock`.
fn run(k: &mut Kernel, ctx: &mut Ctx, st: &mut Tfp, budget: u64) -> Run {
    let mut held = None;
    let r = run_slice(k, ctx, st, budget, &mut held);
    lru_unlock(k, ctx, &mut held);
    r
}

fn run_slice(k: &mut Kernel, ctx: &mut Ctx, st: &mut Tfp, budget: u64, held: &mut Option<u64>) -> Run {
    loop {
        match st.step {
            Step::PassStart => {
                // shrink_caches: `nr_pages -= kmem_cache_reap(gfp_mask)` before anything else.
                st.nr -= slab::kmem_cache_reap(k, ctx) as i64;
                if st.nr <= 0 {
                    return Run::Done(true);
                }
                ensure_locked(k, ctx, held);
                refill_inactive(k, ctx, st.nr.max(0) as u64, st.cz);
                st.step = if k.profile.clean_cache_pass {
                    let left = cz_count(k, st.cz, INACTIVE) / k.profile.tunables.vm_cache_scan_ratio.max(1);
                    Step::Clean { left }
                } else {
                    scan_step(k, st)
                };
            }
            Step::Clean { left } => match clean_pass(k, ctx, st, left, budget, held) {
                Some(left) => {
                    st.step = Step::Clean { left };
                    return Run::Resched;
                }
                None if st.nr <= 0 => return Run::Done(true),
                None => st.step = scan_step(k, st),
            },
            Step::Scan { max_scan, max_mapped } => match shrink_cache(k, ctx, st, max_scan, max_mapped, budget, held) {
                ScanEnd::Freed => return Run::Done(true),
                ScanEnd::Resched(ms, mm) => {
                    st.step = Step::Scan { max_scan: ms, max_mapped: mm };
                    return Run::Resched;
                }
                ScanEnd::Wait(ms, mm, until, on) => {
                    st.step = Step::Scan { max_scan: ms, max_mapped: mm };
                    return Run::Wait(until, on);
                }
                ScanEnd::Mapped(ms) => {
                    // The page_mapped branch lets go of the lock, reaps the slab again, then the
                    // dcache and icache.
                    lru_unlock(k, ctx, held);
                    st.nr -= slab::kmem_cache_reap(k, ctx) as i64;
                    if st.nr <= 0 {
                        return Run::Done(true);
                    }
                    slab::shrink_vfs_caches(k, ctx);
                    if st.failed_swapout {
                        ensure_locked(k, ctx, held);
                        refill_inactive(k, ctx, st.nr.max(0) as u64, st.cz);
                        let max_mapped = st.nr * k.profile.tunables.vm_mapped_ratio as i64;
                        st.step = Step::Scan { max_scan: ms, max_mapped };
                    } else {
                        st.step = Step::MappedSwapOut { max_scan: ms, so: new_swap_out(k) };
                    }
                }
                ScanEnd::Exhausted => {
                    lru_unlock(k, ctx, held);
                    slab::shrink_vfs_caches(k, ctx);
                    if st.failed_swapout {
                        if let Some(r) = next_pass(st) {
                            return r;
                        }
                    } else {
                        st.step = Step::PassSwapOut { so: new_swap_out(k) };
                    }
                }
            },
            Step::MappedSwapOut { max_scan, mut so } => match swap_out(k, ctx, &mut so, st.cz, budget) {
                None => {
                    st.step = Step::MappedSwapOut { max_scan, so };
                    return Run::Resched;
                }
                Some(ok) => {
                    st.failed_swapout = !ok;
                    let max_mapped = st.nr * k.profile.tunables.vm_mapped_ratio as i64;
                    ensure_locked(k, ctx, held);
                    refill_inactive(k, ctx, st.nr.max(0) as u64, st.cz);
                    st.step = Step::Scan { max_scan, max_mapped };
                }
            },
            Step::PassSwapOut { mut so } => match swap_out(k, ctx, &mut so, st.cz, budget) {
                None => {
                    st.step = Step::PassSwapOut { so };
                    return Run::Resched;
                }
                Some(ok) => {
                    st.failed_swapout = !ok;
                    if let Some(r) = next_pass(st) {
                        return r;
                    }
                }
            },
        }
        if ctx.sys_ns >= budget {
            return Run::Resched;
        }
    }
}

fn next_pass(st: &mut Tfp) -> Option<Run> {
    st.tries = st.tries.saturating_sub(1);
    if st.tries == 0 {
        return Some(Run::Done(false));
    }
    st.step = Step::PassStart;
    None
}

/// `refill_inactive`: move `nr * active / (inactive * vm_lru_balance_ratio + 1)` unreferenced
/// pages from the active tail to the inactive head, marking them referenced; referenced active
/// pages lose the bit and go round the active list again. PTE young bits are not looked at.
fn refill_inactive(k: &mut Kernel, ctx: &mut Ctx, nr: u64, cz: usize) {
    let active = cz_count(k, cz, ACTIVE);
    let inactive = cz_count(k, cz, INACTIVE);
    let mut ratio = nr * active / (inactive * k.profile.tunables.vm_lru_balance_ratio + 1);
    // `ratio` counts pages deactivated, not pages looked at: a referenced page goes to the head
    // with its bit cleared and the loop goes on, so when one lap has not found `ratio` cold pages
    // the second lap takes them from the pages the first one rotated (Andrea Arcangeli, "Re:
    // [PATCH] 2.4.23-pre7 vmscan.c typo", LKML, 20 Oct 2003: "it won't loop forever since at the
    // second pass the referenced bit will be clear"). Two laps are therefore the bound.
    let mut visits = 2 * k.reclaim.aa24_mut().lru.lists[ACTIVE].len;
    let mut e = k.reclaim.aa24_mut().lru.lists[ACTIVE].tail;
    let mut scanned = 0u64;
    let mut deact = 0u64;
    while ratio > 0 && visits > 0 && e != NIL {
        visits -= 1;
        scanned += 1;
        let p = e;
        e = k.fr.links[p as usize].prev;
        if k.fr.test_clear(p, pg::REFERENCED) {
            rotate_to_head(k, p, ACTIVE);
            continue;
        }
        ratio -= 1;
        del_page_from_lru(k, p);
        k.fr.clear(p, pg::ACTIVE);
        k.fr.set(p, pg::REFERENCED);
        add_to_list(k, p, INACTIVE, false);
        deact += 1;
    }
    k.ev.add(Vm::Pgrefill, scanned);
    k.ev.add(Vm::Pgdeactivate, deact);
    k.charge(ctx, KFunc::RefillInactive, scanned * costs(k).lru);
    k.events += scanned;
}

/// `page_count(p) == 1`: only the page- or swap-cache reference is left (no PTE, no pin); an
/// anonymous page outside the swap cache has no such reference at all.
#[inline]
fn only_cache_ref(k: &Kernel, p: Pfn) -> bool {
    let i = p as usize;
    k.fr.mapcount[i] == 0
        && slab::pins(k, p) == 0
        && (k.fr.flags[i] & pg::ANON == 0 || k.fr.flags[i] & pg::SWAPCACHE != 0)
}

fn free_page(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    slab::try_to_release_page(k, ctx, p);
    k.reclaim.aa24_mut().launder_done.remove(&p);
    del_page_from_lru(k, p);
    remove_mapping_and_free(k, ctx, p, crate::memcontrol::ROOT);
    k.ev.inc(if ctx.is_kswapd { Vm::PgstealKswapd } else { Vm::PgstealDirect });
    k.events += 1;
}

/// aa2: before any writepage work, look at `nr_inactive / vm_cache_scan_ratio` pages from the
/// tail and free the clean, unmapped cache among them, under `pagemap_lru_lock`. Each page passed
/// goes to the head as in `shrink_cache`: Andrea's "better fix" of an anchor, "to avoid the
/// clean-cache search to alter the point where we keep swapping with writepage", says aa2's
/// search does move that point. With `clean_pass_anchor` the search goes on from where the last
/// one stopped (wrapping at the head) and moves nothing. Returns Some(left) when it must
/// reschedule.
fn clean_pass(
    k: &mut Kernel,
    ctx: &mut Ctx,
    st: &mut Tfp,
    mut left: u64,
    budget: u64,
    held: &mut Option<u64>,
) -> Option<u64> {
    ensure_locked(k, ctx, held);
    let c = costs(k).lru;
    let anchor = k.profile.clean_pass_anchor;
    // The anchor's page may have left the list (freed, activated) since: start at the tail.
    let mut at = match k.reclaim.aa24().clean_anchor {
        Some(p) if anchor && on_list(k, p, INACTIVE) => p,
        _ => NIL,
    };
    let mut out = None;
    while left > 0 {
        if ctx.sys_ns >= budget {
            out = Some(left);
            break;
        }
        let p = if at != NIL { at } else { k.reclaim.aa24_mut().lru.lists[INACTIVE].tail };
        if p == NIL {
            break;
        }
        left -= 1;
        if anchor {
            at = k.fr.links[p as usize].prev;
        } else {
            rotate_to_head(k, p, INACTIVE);
        }
        k.charge(ctx, KFunc::ShrinkCache, c);
        k.events += 1;
        if !memclass(k, p, st.cz) {
            continue;
        }
        let f = k.fr.flags[p as usize];
        if f & (pg::DIRTY | pg::LOCKED | pg::WRITEBACK) != 0 || !only_cache_ref(k, p) {
            continue;
        }
        free_page(k, ctx, p);
        k.reclaim.aa24_mut().stats.clean_pass_freed += 1;
        st.nr -= 1;
        if st.nr <= 0 {
            break;
        }
    }
    if anchor {
        k.reclaim.aa24_mut().clean_anchor = (at != NIL).then_some(at);
    }
    out
}

enum ScanEnd {
    Freed,
    Exhausted,
    /// `max_mapped` ran out (max_scan left).
    Mapped(u64),
    Resched(u64, i64),
    Wait(u64, i64, u64, WaitOn),
}

/// `shrink_cache`: from the inactive tail, every visited page first goes to the head; mapped
/// pages use up `max_mapped`; dirty unmapped cache gets `writepage` and stays at the head;
/// clean unmapped cache is freed; a page under writeback reclaim started is waited on, and so is
/// a request-queue slot when `writepage` finds the queue full. Called with `pagemap_lru_lock`
/// held (`held`), which `writepage` runs without.
#[allow(clippy::too_many_arguments)]
fn shrink_cache(
    k: &mut Kernel,
    ctx: &mut Ctx,
    st: &mut Tfp,
    mut max_scan: u64,
    mut max_mapped: i64,
    budget: u64,
    held: &mut Option<u64>,
) -> ScanEnd {
    ensure_locked(k, ctx, held);
    let c = costs(k).lru;
    let scan_ev = if ctx.is_kswapd { Vm::PgscanKswapd } else { Vm::PgscanDirect };
    while max_scan > 0 && cz_count(k, st.cz, INACTIVE) > 0 {
        if ctx.sys_ns >= budget {
            return ScanEnd::Resched(max_scan, max_mapped);
        }
        let p = k.reclaim.aa24_mut().lru.lists[INACTIVE].tail;
        if p == NIL {
            break;
        }
        rotate_to_head(k, p, INACTIVE);
        k.charge(ctx, KFunc::ShrinkCache, c);
        k.events += 1;
        if !memclass(k, p, st.cz) {
            continue;
        }
        max_scan -= 1;
        k.ev.inc(scan_ev);
        if !only_cache_ref(k, p) {
            max_mapped -= 1;
            if max_mapped < 0 {
                return ScanEnd::Mapped(max_scan);
            }
            continue;
        }
        let f = k.fr.flags[p as usize];
        if f & (pg::LOCKED | pg::WRITEBACK) != 0 {
            if f & pg::LAUNDER != 0 {
                if f & pg::WRITEBACK != 0 && !k.reclaim.aa24().launder_done.contains_key(&p) {
                    // `wait_on_page` → `sync_page` runs `tq_disk` first: a write still plugged
                    // goes to the device now, and the wait is for its completion — which
                    // needs the driver to take it, if its queue still lists it.
                    k.run_tq_disk(ctx.clock());
                    if !k.reclaim.aa24().launder_done.contains_key(&p) {
                        k.take_listed_page(ctx.clock(), p);
                    }
                }
                if let Some(&until) = k.reclaim.aa24_mut().launder_done.get(&p) {
                    if until > ctx.clock() {
                        k.reclaim.aa24_mut().stats.launder_waits += 1;
                        return ScanEnd::Wait(max_scan, max_mapped, until, WaitOn::Launder);
                    }
                }
            }
            continue;
        }
        if f & pg::LAUNDER != 0 {
            k.fr.clear(p, pg::LAUNDER);
            k.reclaim.aa24_mut().launder_done.remove(&p);
        }
        if f & pg::DIRTY != 0 {
            lru_unlock(k, ctx, held);
            let slept = ctx.sleep_ns;
            writepage(k, ctx, p);
            if ctx.sleep_ns > slept {
                // The write found the request queue full: 2.4's `writepage` does not return
                // before `__make_request` → `__get_request_wait` has a request for it, so the
                // scan stops here and goes on from the tail after the sleep, and pages beyond
                // this one are not freed by this task before then.
                let until = ctx.clock() + (ctx.sleep_ns - slept);
                ctx.sleep_ns = slept;
                return ScanEnd::Wait(max_scan, max_mapped, until, WaitOn::Queue);
            }
            *held = Some(lru_lock(k, ctx));
            continue;
        }
        free_page(k, ctx, p);
        k.reclaim.aa24_mut().stats.freed += 1;
        st.nr -= 1;
        if st.nr <= 0 {
            return ScanEnd::Freed;
        }
    }
    ScanEnd::Exhausted
}

/// The writes of `pages` a plugged queue held went to the device at the unplug and complete
/// at `t`: a reclaimer that finds a `PG_launder` page among them waits for that.
pub fn launder_dispatched(k: &mut Kernel, t: u64, pages: &[Pfn]) {
    for &p in pages {
        if k.fr.has(p, pg::LAUNDER) {
            k.reclaim.aa24_mut().launder_done.insert(p, t);
        }
    }
}

/// `ClearPageDirty; SetPageLaunder; writepage(page)`: shm pages go through `shmem_writepage`
/// (swap cache, I/O now or later by profile), swap cache to `swap_writepage`, file pages to the
/// filesystem. A page whose writepage fails is reactivated (`fail_writepage`).
fn writepage(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    let swapouts = k.ev.get(Vm::Pswpout);
    let shm = k.fr.flags[p as usize] & (pg::SWAPBACKED | pg::SWAPCACHE | pg::ANON) == pg::SWAPBACKED;
    k.reclaim.aa24_mut().stats.writepages += 1;
    if !pageout(k, ctx, p) {
        del_page_from_lru(k, p);
        k.fr.set(p, pg::ACTIVE | pg::REFERENCED);
        add_to_list(k, p, ACTIVE, false);
        return;
    }
    if shm && k.reclaim.aa24().stats.first_shm_to_swapcache_ns.is_none() {
        k.reclaim.aa24_mut().stats.first_shm_to_swapcache_ns = Some(ctx.clock());
    }
    if k.fr.has(p, pg::WRITEBACK) {
        k.fr.set(p, pg::LAUNDER);
        if let Some((t, IoDone::Write { pages: v, .. })) = k.io_queue.last() {
            if v.last() == Some(&p) {
                let t = *t;
                k.reclaim.aa24_mut().launder_done.insert(p, t);
            }
        }
    }
    if k.ev.get(Vm::Pswpout) > swapouts {
        let st = &mut k.reclaim.aa24_mut().stats;
        if st.swapcache_at_first_swapout.is_none() {
            st.swapcache_at_first_swapout = Some(k.g.swapcache);
            st.first_swapout_ns = Some(ctx.clock());
        }
        if st.swapcache_at_first_shm_swapout.is_none() && !k.fr.has(p, pg::ANON) {
            st.swapcache_at_first_shm_swapout = Some(k.g.swapcache);
            st.first_shm_swapout_ns = Some(ctx.clock());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// swap_out: the page-table walk

/// The next mm on the mm list after `mm` (None is `init_mm`, the list head).
fn next_mm(k: &Kernel, mm: Option<u32>) -> Option<u32> {
    let from = mm.map(|m| m as usize + 1).unwrap_or(0);
    (from..k.mms.len()).find(|&i| k.mms[i].is_some()).map(|i| i as u32)
}

/// `swap_out`: walk address spaces from `swap_mm` until SWAP_CLUSTER_MAX pages became freeable
/// (Some(true)) or `2 * mmlist_nr` mms were visited (Some(false)). None: rescheduled between mms.
fn swap_out(k: &mut Kernel, ctx: &mut Ctx, so: &mut SwapOut, cz: usize, budget: u64) -> Option<bool> {
    loop {
        if ctx.sys_ns >= budget {
            return None;
        }
        // Skip (and rewind) exhausted address spaces; init_mm is never walked.
        let start = k.reclaim.aa24_mut().swap_mm;
        let mut mm = start;
        let mut steps = 0;
        let cur = loop {
            if let Some(m) = mm {
                if k.mms[m as usize].is_some() {
                    walker_page_table_lock(k, ctx, m);
                    if k.reclaim.aa24_mut().swap_address(m) != END {
                        break m;
                    }
                    k.reclaim.aa24_mut().set_swap_address(m, 0);
                }
            }
            mm = next_mm(k, mm);
            steps += 1;
            if mm == start || steps > k.mms.len() + 2 {
                return Some(false);
            }
            k.reclaim.aa24_mut().swap_mm = mm;
        };
        so.nr = swap_out_mm(k, ctx, cur, so.nr, cz);
        if so.nr == 0 {
            k.reclaim.aa24_mut().stats.swap_out_success += 1;
            return Some(true);
        }
        so.counter -= 1;
        if so.counter < 0 {
            return Some(false);
        }
    }
}

/// `swap_out_mm`: under the mm's page_table_lock, walk its VMAs from `swap_address` until `count`
/// pages became freeable; remember where it stopped. The lock is held from the walk's start to
/// its end, objrmap's work for the walk included (it runs inside `try_to_swap_out`).
fn swap_out_mm(k: &mut Kernel, ctx: &mut Ctx, mm: u32, count: u64, cz: usize) -> u64 {
    let taken = ctx.clock();
    let left = swap_out_mm_locked(k, ctx, mm, count, cz);
    k.reclaim.aa24_mut().set_ptl_hold(mm, taken, ctx.clock());
    left
}

fn swap_out_mm_locked(k: &mut Kernel, ctx: &mut Ctx, mm: u32, mut count: u64, cz: usize) -> u64 {
    k.reclaim.aa24_mut().stats.mm_visits += 1;
    let mut addr = k.reclaim.aa24_mut().swap_address(mm);
    let nv = k.mm(mm).vmas.len();
    let first = k.mm(mm).vmas.partition_point(|v| v.end <= addr);
    for vi in first..nv {
        let (start, end, flags) = {
            let v = &k.mm(mm).vmas[vi];
            (v.start, v.end, v.flags)
        };
        addr = addr.max(start);
        let (left, next) = swap_out_vma(k, ctx, mm, addr, end, flags, count, cz);
        count = left;
        if count == 0 {
            k.reclaim.aa24_mut().set_swap_address(mm, next);
            return 0;
        }
    }
    k.reclaim.aa24_mut().set_swap_address(mm, END);
    k.reclaim.aa24_mut().stats.mms_walked += 1;
    count
}

/// `swap_out_vma` → `swap_out_pgd` → `swap_out_pmd` over [from, end): every PTE slot of every
/// page table costs a look; present PTEs go to `try_to_swap_out`. Returns (count left, vpn after
/// the last PTE handled).
#[allow(clippy::too_many_arguments)]
fn swap_out_vma(
    k: &mut Kernel,
    ctx: &mut Ctx,
    mm: u32,
    from: u64,
    end: u64,
    flags: u32,
    mut count: u64,
    cz: usize,
) -> (u64, u64) {
    if from >= end {
        return (count, end);
    }
    let c = costs(k);
    let mut tables = std::mem::take(&mut k.reclaim.aa24_mut().scratch);
    tables.clear();
    tables.extend(k.mm(mm).ptes.range((from >> 9)..=((end - 1) >> 9)).map(|(&key, &id)| (key, id)));
    let mut slots = 0u64;
    let mut present = 0u64;
    let mut next = end;
    'tables: for &(key, id) in &tables {
        let lo = from.max(key << 9);
        let hi = end.min((key + 1) << 9);
        let base = id as usize * PTRS_PER_TABLE as usize;
        if k.pt.used[id as usize] == 0 {
            slots += 1;
            continue;
        }
        for vpn in lo..hi {
            slots += 1;
            let s = base + (vpn & 511) as usize;
            let e = k.pt.entries[s];
            if !pte::present(e) {
                continue;
            }
            let p = pte::pfn(e);
            if p == k.zero_pfn || k.fr.has(p, pg::RESERVED) {
                continue;
            }
            present += 1;
            if try_to_swap_out(k, ctx, mm, flags, s, p, e, cz) {
                count -= 1;
                if count == 0 {
                    next = vpn + 1;
                    break 'tables;
                }
            }
        }
    }
    k.reclaim.aa24_mut().scratch = tables;
    let sec = (ctx.clock() / 1_000_000_000) as usize;
    grow(&mut k.reclaim.aa24_mut().stats.walk_ptes_per_s, sec, 0);
    k.reclaim.aa24_mut().stats.walk_ptes_per_s[sec] += present;
    k.charge(ctx, KFunc::SwapOut, slots * c.pte + present * c.present);
    k.events += slots / 8 + present;
    (count, next)
}

/// `try_to_swap_out`: a young PTE is aged (and the page marked accessed); an inactive page is
/// unmapped from this PTE — anonymous pages get a swap slot and enter the swap cache. Returns
/// whether the page is now freeable: no PTE maps it any more. With `objrmap_walk` (aa2) a shared
/// file/shm page is first unmapped from every other VMA through its mapping's i_mmap list.
#[allow(clippy::too_many_arguments)]
fn try_to_swap_out(
    k: &mut Kernel,
    ctx: &mut Ctx,
    mm: u32,
    vma_flags: u32,
    s: usize,
    p: Pfn,
    e: u32,
    cz: usize,
) -> bool {
    if vma_flags & vm::LOCKED != 0 || e & pte::YOUNG != 0 {
        k.pt.entries[s] = e & !pte::YOUNG;
        mark_page_accessed(k, p);
        k.reclaim.aa24_mut().stats.walk_young += 1;
        return false;
    }
    let f = k.fr.flags[p as usize];
    if f & pg::ACTIVE != 0 {
        k.reclaim.aa24_mut().stats.walk_active += 1;
        if k.profile.walk_skips_active {
            return false;
        }
    }
    if !memclass(k, p, cz) || f & (pg::LOCKED | pg::WRITEBACK) != 0 {
        return false;
    }
    if e & pte::DIRTY != 0 {
        crate::page_writeback::set_page_dirty(k, ctx, p);
    }
    let anon = f & pg::ANON != 0;
    let newe = if k.fr.has(p, pg::SWAPCACHE) {
        let slot = crate::swap_state::page_swap_slot(k, p).expect("swap-cache page has a slot");
        crate::swap_state::swap_duplicate(k, slot);
        slot + 1
    } else if !anon || !k.fr.has(p, pg::DIRTY) {
        0
    } else {
        // get_swap_page + add_to_swap_cache: the page joins the inactive list, dirty.
        if !crate::swap_state::add_to_swap(k, ctx, p) {
            return false;
        }
        if on_list(k, p, ANON_OFF_LRU) {
            del_page_from_lru(k, p);
            add_to_list(k, p, INACTIVE, false);
        }
        let slot = crate::swap_state::page_swap_slot(k, p).expect("just added");
        crate::swap_state::swap_duplicate(k, slot);
        slot + 1
    };
    k.unmap_pte(mm, vma_flags, s, p, newe);
    k.charge(ctx, KFunc::TryToSwapOut, costs(k).unmap);
    k.reclaim.aa24_mut().stats.walk_unmapped += 1;
    if k.profile.objrmap_walk && !anon && !k.fr.has(p, pg::SWAPCACHE) && k.fr.mapcount[p as usize] > 0 {
        objrmap_unmap(k, ctx, mm, p);
    }
    if anon && k.fr.mapcount[p as usize] == 0 && !k.fr.has(p, pg::SWAPCACHE) {
        // A clean anonymous page with no swap copy: dropping its PTE frees it.
        crate::swap_state::free_anon_page(k, ctx, p);
        k.reclaim.aa24_mut().stats.walk_freeable_anon += 1;
        return true;
    }
    let freeable = k.fr.mapcount[p as usize] == 0 && slab::pins(k, p) == 0;
    if freeable {
        if anon {
            k.reclaim.aa24_mut().stats.walk_freeable_anon += 1;
        } else {
            k.reclaim.aa24_mut().stats.walk_freeable_cache += 1;
            if k.reclaim.aa24_mut().stats.mm_visits_at_first_freeable_cache.is_none() {
                k.reclaim.aa24_mut().stats.mm_visits_at_first_freeable_cache =
                    Some(k.reclaim.aa24_mut().stats.mm_visits);
            }
        }
    }
    freeable
}

/// aa2's objrmap in the walk: with the mapping's `i_shared_lock` (trylock), visit every VMA of
/// the file and, where that mm's `page_table_lock` can be taken (trylock), clear the PTE mapping
/// `p` (`try_to_unmap_shared_vma`). Best effort: a lost trylock leaves the page mapped there, and
/// a young PTE means the page is in use: it stays mapped from there on.
fn objrmap_unmap(k: &mut Kernel, ctx: &mut Ctx, cur_mm: u32, p: Pfn) {
    let file = k.fr.mapping[p as usize] as usize;
    let idx = k.fr.index[p as usize] as u64;
    let c = costs(k);
    let taken = ctx.clock();
    grow(&mut k.reclaim.aa24_mut().i_shared_held, file, (0, 0));
    let (from, until) = k.reclaim.aa24().i_shared_held[file];
    if from <= taken && taken < until {
        k.reclaim.aa24_mut().stats.objrmap_trylock_failed += 1;
        return;
    }
    let n = k.files[file].i_mmap.len();
    for i in 0..n {
        let m = k.files[file].i_mmap[i];
        k.charge(ctx, KFunc::TryToUnmapSharedVma, c.objrmap_vma);
        if idx < m.pgoff || idx >= m.pgoff + (m.end - m.start) || k.mms[m.mm as usize].is_none() {
            continue;
        }
        if m.mm != cur_mm && k.reclaim.aa24().ptl_held_at(m.mm, ctx.clock()) {
            k.reclaim.aa24_mut().stats.objrmap_trylock_failed += 1;
            continue;
        }
        let vpn = m.start + (idx - m.pgoff);
        let Some(slot) = k.pte_slot(m.mm, vpn) else { continue };
        let e = k.pt.entries[slot];
        if !pte::present(e) || pte::pfn(e) != p {
            continue;
        }
        if e & pte::YOUNG != 0 {
            // Another process used the page since the walk last looked: like the walk itself
            // (and 2.6's try_to_unmap_one), leave it mapped and age the PTE.
            k.pt.entries[slot] = e & !pte::YOUNG;
            mark_page_accessed(k, p);
            k.reclaim.aa24_mut().stats.objrmap_young += 1;
            break;
        }
        let Some(vi) = k.find_vma(m.mm, vpn) else { continue };
        let flags = k.mm(m.mm).vmas[vi].flags;
        if flags & vm::LOCKED != 0 {
            continue;
        }
        if e & pte::DIRTY != 0 {
            crate::page_writeback::set_page_dirty(k, ctx, p);
        }
        k.unmap_pte(m.mm, flags, slot, p, 0);
        k.charge(ctx, KFunc::TryToUnmapSharedVma, c.unmap);
        k.reclaim.aa24_mut().stats.objrmap_unmapped += 1;
        if k.fr.mapcount[p as usize] == 0 {
            k.reclaim.aa24_mut().stats.objrmap_pages_freeable += 1;
            break;
        }
    }
    let released = ctx.clock();
    k.reclaim.aa24_mut().i_shared_held[file] = (taken, released);
}

impl ReclaimEngine for Aa24State {
    fn lru_scope(_k: &Kernel, _zid: usize) -> LruScope {
        LruScope::Global
    }
    fn lru_names() -> [Option<&'static str>; NR_LRU_LISTS] {
        [None, Some("Unlisted(anon)"), Some("Inactive"), Some("Active"), Some("Unevictable")]
    }
    fn lru_add(k: &mut Kernel, p: Pfn) {
        lru_add(k, p)
    }
    fn mark_page_accessed(k: &mut Kernel, p: Pfn) {
        mark_page_accessed(k, p)
    }
    fn page_cache_added(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
        lru_cache_add_lock(k, ctx);
        slab::page_cache_added(k, ctx, p)
    }
    /// `filemap_nopage` / `shmem_nopage` call `mark_page_accessed` in 2.4.
    fn nopage_accessed(k: &mut Kernel, p: Pfn) {
        mark_page_accessed(k, p)
    }
    /// The 2.4 page-table walk holds page_table_lock: a fault may have to spin.
    fn fault_page_table_lock(k: &mut Kernel, ctx: &mut Ctx, mm: u32) {
        page_table_lock(k, ctx, mm)
    }
    fn wakeup_kswapd(k: &mut Kernel, zid: usize, order: u32, classzone: usize) {
        wakeup_kswapd(k, zid, order, classzone)
    }
    fn try_to_free_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32, classzone: usize) -> u64 {
        try_to_free_pages(k, ctx, gfp, order, classzone)
    }
    fn alloc_pages(k: &mut Kernel, ctx: &mut Ctx, gfp: Gfp, order: u32) -> Option<Result<Pfn, AllocFail>> {
        alloc_pages(k, ctx, gfp, order)
    }
    /// 2.4.23's `__alloc_pages`: when `balance_classzone` freed nothing, only a zone above its
    /// high watermark may still serve; else the allocation fails ("__alloc_pages: 0-order
    /// allocation failed"). 2.4.23 calls no OOM killer: `try_to_free_pages_zone` gives up after
    /// `vm_passes` rounds (`CONFIG_OOM_KILLER` came back as an option in 2.4.24-pre1).
    fn failed_reclaim_fails_alloc() -> bool {
        true
    }
    fn kswapd_why(k: &Kernel, node: usize) -> crate::stats::explain::Reason {
        kswapd_why(k, node)
    }
    fn kswapd_step(k: &mut Kernel, ctx: &mut Ctx, node: usize) -> KswapdAction {
        kswapd_step(k, ctx, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::MachineConfig;
    use crate::mmzone::{Mt, ZoneType};

    /// 16 MiB DMA, 64 MiB Normal, 64 MiB HighMem.
    fn kernel() -> Kernel {
        let cfg = MachineConfig::of_zones(
            "i386",
            1,
            &[(ZoneType::Dma, 4096), (ZoneType::Normal, 16384), (ZoneType::HighMem, 16384)],
        );
        Kernel::new(crate::profiles::first_with_engine(crate::profiles::Engine::Aa24), cfg, 1).expect("kernel")
    }

    /// `n` clean page-cache pages of one file from HighMem, on the list `l`, referenced or not.
    fn cache_pages(k: &mut Kernel, n: u64, l: usize, referenced: bool) -> Vec<Pfn> {
        let mut ctx = Ctx::default();
        if k.disks.is_empty() {
            k.disks.push(crate::disk::Disk::preset("hdd").expect("preset"));
        }
        let file = k.file_create(if l == ACTIVE { "active" } else { "inactive" }, 1 << 30, 0, false);
        let hz = k.zones.iter().position(|z| z.kind == ZoneType::HighMem).expect("highmem");
        let mut got = Vec::new();
        for i in 0..n {
            let p = k.rmqueue(hz, 0, Mt::Movable).expect("free page");
            k.fr.set(p, pg::UPTODATE);
            k.add_to_page_cache(&mut ctx, file, i, p);
            if l == ACTIVE {
                del_page_from_lru(k, p);
                k.fr.set(p, pg::ACTIVE);
                add_to_list(k, p, ACTIVE, false);
            }
            if referenced {
                k.fr.set(p, pg::REFERENCED);
            } else {
                k.fr.clear(p, pg::REFERENCED);
            }
            got.push(p);
        }
        got
    }

    fn deactivated(k: &Kernel, pages: &[Pfn]) -> usize {
        pages.iter().filter(|&&p| !k.fr.has(p, pg::ACTIVE)).count()
    }

    /// 2.4.23 `refill_inactive`: `ratio = nr * active / (inactive * vm_lru_balance_ratio + 1)`
    /// pages are deactivated whatever their referenced bits; a whole active list of referenced
    /// pages is one lap of rotations, and the deactivations come from the second lap.
    #[test]
    fn refill_inactive_deactivates_ratio_pages_even_when_all_are_referenced() {
        for referenced in [false, true] {
            let mut k = kernel();
            let mut ctx = Ctx::default();
            let act = cache_pages(&mut k, 3000, ACTIVE, referenced);
            cache_pages(&mut k, 500, INACTIVE, false);
            let cz = ZoneType::HighMem as usize;
            let (a, i) = (cz_count(&k, cz, ACTIVE), cz_count(&k, cz, INACTIVE));
            assert_eq!((a, i), (3000, 500));
            let ratio = 32 * a / (i * k.profile.tunables.vm_lru_balance_ratio + 1);
            assert_eq!(ratio, 95);
            refill_inactive(&mut k, &mut ctx, 32, cz);
            assert_eq!(deactivated(&k, &act) as u64, ratio, "referenced: {referenced}");
            // Deactivated pages carry PG_referenced (one more access re-activates them).
            assert!(act.iter().filter(|&&p| !k.fr.has(p, pg::ACTIVE)).all(|&p| k.fr.has(p, pg::REFERENCED)));
            if referenced {
                // The first lap cleared every bit on the list.
                let still = act.iter().filter(|&&p| k.fr.has(p, pg::ACTIVE));
                assert!(still.clone().all(|&p| !k.fr.has(p, pg::REFERENCED)));
            }
            // Either way the deactivated pages are the oldest: the first lap's first rotations
            // are the second lap's first visits.
            assert!(act[..ratio as usize].iter().all(|&p| !k.fr.has(p, pg::ACTIVE)));
        }
    }

    /// `by_task` (seed 002's census, history §28): a task's reclaim call is counted for it alone,
    /// with what its scan passed and freed; another CPU's `lru_cache_add` that comes inside that
    /// scan's hold of `pagemap_lru_lock` records its spin for its own task.
    #[test]
    fn a_tasks_reclaim_and_its_lru_add_spin_are_counted_for_that_task() {
        let mut k = kernel();
        let pages = cache_pages(&mut k, 3000, INACTIVE, false);
        // The 400 pages nearest the tail are under I/O: passed over, so the scan holds the lock
        // long enough to be recorded.
        for &p in &pages[..400] {
            k.fr.set(p, pg::LOCKED);
        }
        let cz = ZoneType::HighMem as usize;
        let mut a = Ctx { cpu: 0, task: 5, ..Default::default() };
        assert_eq!(try_to_free_pages(&mut k, &mut a, Gfp::highuser_movable(), 0, cz), 32);
        let by = &k.reclaim.aa24().stats.by_task;
        let r = by[5];
        assert_eq!((r.calls, r.failed, r.freed, r.clean_freed, r.writepages), (1, 0, 32, 0, 0));
        assert_eq!(r.scanned, 432);
        assert_eq!(r.sys_ns, a.sys_ns);
        assert!(by[..5].iter().all(|t| t.calls == 0 && t.sys_ns == 0));
        // Another CPU adding a page just before the scan let go of the lock spins to that point.
        let mut b = Ctx { cpu: 1, task: 2, now: a.clock() - 1, ..Default::default() };
        lru_cache_add_lock(&mut k, &mut b);
        assert_eq!(b.sys_ns, 1);
        let by = &k.reclaim.aa24().stats.by_task;
        assert_eq!((by[2].lru_add_spin_ns, by[2].calls), (b.sys_ns, 0));
        assert_eq!(by[5].lru_add_spin_ns, 0);
    }

    /// kswapd's `try_to_free_pages_zone` calls go to its own `by_task` entry (history §34: who
    /// walks), with what they freed; no other task is charged.
    #[test]
    fn kswapds_calls_are_counted_for_kswapd() {
        let mut k = kernel();
        cache_pages(&mut k, 3000, INACTIVE, false);
        let z = (0..k.zones.len()).find(|&z| k.zones[z].kind == ZoneType::HighMem).expect("a HighMem zone");
        k.reclaim.aa24_mut().need_balance[z] = true;
        let mut ks = Ctx { cpu: 0, task: 1, is_kswapd: true, ..Default::default() };
        kswapd_step(&mut k, &mut ks, 0);
        let by = &k.reclaim.aa24().stats.by_task;
        assert_eq!((by[1].calls, by[1].freed), (1, 32));
        assert_eq!(by[1].sys_ns, ks.sys_ns);
        assert!(by.iter().enumerate().all(|(i, t)| i == 1 || t.calls == 0));
    }

    /// 2.4.23's `shrink_caches` takes `pagemap_lru_lock` and `shrink_cache` keeps it over its scan
    /// (mm/vmscan.c): a page-cache add on another CPU meanwhile spins until the scan lets go, and
    /// that spin is its kernel time; on the scanner's own CPU nothing waits.
    #[test]
    fn a_scan_holds_pagemap_lru_lock_and_another_cpu_spins_for_it() {
        let mut k = kernel();
        let pages = cache_pages(&mut k, 3000, INACTIVE, false);
        for &p in &pages {
            // Under I/O: visited and passed over, so the scan runs its whole max_scan.
            k.fr.set(p, pg::LOCKED);
        }
        let cz = ZoneType::HighMem as usize;
        let mut a = Ctx { cpu: 0, task: 1, ..Default::default() };
        let mut st = new_tfp(&k, cz);
        let Step::Scan { max_scan, max_mapped } = scan_step(&k, &st) else { unreachable!() };
        assert_eq!(max_scan, 500);
        let mut held = Some(lru_lock(&mut k, &mut a));
        let end = shrink_cache(&mut k, &mut a, &mut st, max_scan, max_mapped, u64::MAX, &mut held);
        assert!(matches!(end, ScanEnd::Exhausted));
        lru_unlock(&mut k, &a, &mut held);
        let hold = a.clock();
        assert_eq!(hold, max_scan * costs(&k).lru);
        // Another CPU adding a page at the time the scan began spins to its end.
        let mut b = Ctx { cpu: 1, task: 2, ..Default::default() };
        lru_cache_add_lock(&mut k, &mut b);
        assert_eq!(b.sys_ns, hold);
        assert_eq!(k.reclaim.aa24().stats.lock_contended, 1);
        // One that comes after it does not; nor does a task on the scanner's own CPU.
        let mut c = Ctx { cpu: 2, task: 3, now: hold, ..Default::default() };
        lru_cache_add_lock(&mut k, &mut c);
        let mut d = Ctx { cpu: 0, task: 4, ..Default::default() };
        lru_cache_add_lock(&mut k, &mut d);
        assert_eq!((c.sys_ns, d.sys_ns), (0, 0));
    }

    /// 100 inactive file pages, the 10 oldest dirty, on a disk with 128 MiB of writes already
    /// queued (over a second of the hdd's time, more than the queue holds); task 3's first
    /// `try_to_free_pages_zone` slice, which stops at the first write. Returns the pages and
    /// that task's context after the slice.
    fn full_queue_and_a_parked_call(k: &mut Kernel) -> (Vec<Pfn>, Ctx) {
        let pages = cache_pages(k, 100, INACTIVE, false);
        for &p in &pages[..10] {
            crate::page_writeback::set_page_dirty(k, &Ctx::default(), p);
        }
        let backlog_done = k.disks[0].submit(0, 8 << 30, 128 << 20, true);
        assert!(backlog_done > 4 * crate::page_writeback::MAX_BACKLOG_NS);
        let mut a = Ctx { cpu: 0, task: 3, ..Default::default() };
        assert_eq!(try_to_free_pages(k, &mut a, Gfp::highuser_movable(), 0, ZoneType::HighMem as usize), 0);
        (pages, a)
    }

    /// 2.4.23's `shrink_cache` calls `writepage` with `pagemap_lru_lock` dropped, and a write
    /// that finds the request queue full sleeps inside it (`submit_bh` → `__make_request` →
    /// `__get_request_wait`, 2.4.2x `drivers/block/ll_rw_blk.c`, as in
    /// `SimonKagstrom/mci500h-linux-2.4.27`): the scan goes on only after the sleep, so the
    /// clean pages beyond the dirty one are not freed by this task before then, and each further
    /// write into the full queue is a sleep of its own.
    #[test]
    fn a_write_into_a_full_queue_stops_the_scan_until_the_sleep_ends() {
        let mut k = kernel();
        let (pages, a) = full_queue_and_a_parked_call(&mut k);
        let cz = ZoneType::HighMem as usize;
        let st = &k.reclaim.aa24().stats;
        assert_eq!((st.writepages, st.freed), (1, 0));
        assert_eq!(a.sleep_ns, 0);
        assert!(a.throttle_until > a.clock() + 2 * crate::page_writeback::MAX_BACKLOG_NS);
        assert_eq!(st.by_task[3].queue_sleep_ns, a.throttle_until - a.clock());
        // The call resumes where it stopped, after each sleep; every later write finds the
        // queue full again and sleeps too, and the clean pages are freed only after the last.
        let mut at = a.throttle_until;
        let mut sleeps = 1;
        let freed = loop {
            let mut b = Ctx { cpu: 0, task: 3, now: at, ..Default::default() };
            let r = try_to_free_pages(&mut k, &mut b, Gfp::highuser_movable(), 0, cz);
            if r > 0 {
                break r;
            }
            assert!(b.throttle_until > b.clock());
            at = b.throttle_until;
            sleeps += 1;
        };
        let st = &k.reclaim.aa24().stats;
        assert_eq!((freed, st.writepages, st.freed, sleeps), (32, 10, 32, 10));
        assert!(pages[10..42].iter().all(|&p| !on_list(&k, p, INACTIVE)));
    }

    /// `balance_classzone` returns only when `try_to_free_pages_zone` does (2.4.23
    /// `mm/page_alloc.c`): a task asleep inside its call takes no page from the free lists when it
    /// runs again, however many pages others have freed meanwhile; its call goes on first.
    #[test]
    fn a_task_inside_its_reclaim_call_resumes_it_before_taking_a_free_page() {
        let mut k = kernel();
        let (_, a) = full_queue_and_a_parked_call(&mut k);
        assert_eq!(k.reclaim.aa24().stats.writepages, 1);
        // HighMem is almost all free: the fast path alone would serve this allocation.
        let hz = k.zones.iter().position(|z| z.kind == ZoneType::HighMem).expect("highmem");
        assert!(k.zone_free(hz) > k.zones[hz].high_wmark());
        let mut b = Ctx { cpu: 0, task: 3, now: a.throttle_until, ..Default::default() };
        assert_eq!(k.alloc_pages(&mut b, Gfp::highuser_movable(), 0), Err(AllocFail::Throttled));
        assert_eq!(k.reclaim.aa24().stats.writepages, 2);
        // Another task, in no call, is served at once.
        let mut c = Ctx { cpu: 1, task: 4, now: a.throttle_until, ..Default::default() };
        assert!(k.alloc_pages(&mut c, Gfp::highuser_movable(), 0).is_ok());
    }

    /// The inactive list from the tail, as pfns.
    fn inactive_from_tail(k: &mut Kernel) -> Vec<Pfn> {
        let mut v = Vec::new();
        let mut e = k.reclaim.aa24_mut().lru.lists[INACTIVE].tail;
        while e != NIL {
            v.push(e);
            e = k.fr.links[e as usize].prev;
        }
        v
    }

    /// 2.4.23aa2's clean-cache pass (Andrea Arcangeli, "2.4.23aa2 (bugfixes and important VM
    /// improvements for the high end)", LKML, 26 Feb 2004): "a inactive_list/vm_cache_scan_ratio
    /// pass on the clean immediatly freeable cache in the inactive list before going into the
    /// ->writepage business" — it looks at inactive / 6 pages from the tail, frees the clean
    /// ones, writes none. "A better fix would be to have an anchor in the lru ... to avoid the
    /// clean-cache search to alter the point where we keep swapping with writepage": aa2's
    /// search moves what it passes to the head, so the writepage scan starts beyond it; the
    /// anchor (`clean_pass_anchor`, a probe) leaves the list's order as it was and the next
    /// search goes on from where this one stopped.
    #[test]
    fn the_clean_pass_frees_clean_cache_in_its_window_and_moves_what_it_passes() {
        for anchor in [false, true] {
            let mut k = kernel();
            k.profile.clean_cache_pass = true;
            k.profile.clean_pass_anchor = anchor;
            let mut ctx = Ctx::default();
            // Oldest first: 90 dirty, 5 clean, 5 dirty, then 200 clean beyond the window and
            // 300 dirty at the head.
            let pages = cache_pages(&mut k, 600, INACTIVE, false);
            let clean = |i: usize| (90..95).contains(&i) || (100..300).contains(&i);
            for (i, &p) in pages.iter().enumerate() {
                if !clean(i) {
                    k.fr.set(p, pg::DIRTY);
                }
            }
            assert_eq!(inactive_from_tail(&mut k), pages);
            let cz = ZoneType::HighMem as usize;
            let mut st = new_tfp(&k, cz);
            let left = cz_count(&k, cz, INACTIVE) / k.profile.tunables.vm_cache_scan_ratio;
            assert_eq!(left, 100);
            let mut held = None;
            assert_eq!(clean_pass(&mut k, &mut ctx, &mut st, left, u64::MAX, &mut held), None);
            lru_unlock(&mut k, &ctx, &mut held);
            // Only the window's 5 clean pages are freed, and nothing is written.
            assert_eq!(k.reclaim.aa24().stats.clean_pass_freed, 5, "anchor {anchor}");
            assert_eq!(st.nr, 32 - 5);
            assert_eq!(k.reclaim.aa24().stats.writepages, 0);
            let dirty_window: Vec<Pfn> = (0..100).filter(|&i| !clean(i)).map(|i| pages[i]).collect();
            let after = inactive_from_tail(&mut k);
            assert_eq!(after.len(), 595);
            if anchor {
                // The writepage scan still starts at the oldest dirty page.
                assert_eq!(after[..95], dirty_window[..]);
            } else {
                // The 95 dirty pages passed are now the newest; the scan starts at page 100.
                assert_eq!(after[0], pages[100]);
                assert_eq!(after[500..], dirty_window[..]);
            }
            // Either way the next search starts at page 100 and frees the 27 pages still wanted
            // from there; the anchor has still moved nothing.
            let mut st = new_tfp(&k, cz);
            st.nr = 27;
            assert_eq!(clean_pass(&mut k, &mut ctx, &mut st, 99, u64::MAX, &mut held), None);
            lru_unlock(&mut k, &ctx, &mut held);
            assert_eq!(st.nr, 0);
            let freed: Vec<Pfn> = pages[100..127].to_vec();
            assert!(freed.iter().all(|&p| !on_list(&k, p, INACTIVE)), "anchor {anchor}");
            if anchor {
                assert_eq!(inactive_from_tail(&mut k)[..95], dirty_window[..]);
            }
        }
    }

    /// 2.4.23's inactive list is a ring with one door (history §33): `lru_cache_add` and every
    /// page `shrink_cache` passes go to the head (`list_add`), and a mapped page is only counted
    /// against `max_mapped`. So pages read after a run of mapped shm are reached only once the run
    /// and everything older have been passed, and the run, passed, lies behind them on the next
    /// lap: the mix of mapped to freeable pages a lap meets is the one the last lap left.
    #[test]
    fn pages_added_to_the_inactive_head_wait_one_lap_and_find_the_mapped_run_behind_them() {
        let mut k = kernel();
        let mut ctx = Ctx::default();
        let cz = ZoneType::HighMem as usize;
        // Oldest first: 100 mapped pages (shm some process maps), 100 clean, then 40 clean read later.
        let mapped = cache_pages(&mut k, 100, INACTIVE, false);
        for &p in &mapped {
            k.fr.mapcount[p as usize] = 1;
        }
        let clean = cache_pages(&mut k, 100, INACTIVE, false);
        let later = cache_pages(&mut k, 40, INACTIVE, false);
        let scanned = |k: &Kernel| k.ev.get(Vm::PgscanDirect);
        let mut call = |k: &mut Kernel| {
            let before = scanned(k);
            let mut st = new_tfp(k, cz);
            let mut held = None;
            let end = shrink_cache(k, &mut ctx, &mut st, 10_000, 3_200, u64::MAX, &mut held);
            lru_unlock(k, &ctx, &mut held);
            assert!(matches!(end, ScanEnd::Freed));
            scanned(k) - before
        };
        // The first call passes the whole mapped run before its 32 clean pages.
        assert_eq!(call(&mut k), 132);
        assert!(clean[..32].iter().all(|&p| !k.fr.has(p, pg::LRU)));
        let order = inactive_from_tail(&mut k);
        assert_eq!(order[..68], clean[32..]);
        assert_eq!(order[68..108], later[..]);
        assert_eq!(order[108..], mapped[..]);
        // The next calls meet no mapped page: the run is behind the later pages now.
        assert_eq!(call(&mut k), 32);
        assert_eq!(call(&mut k), 32);
        assert!(clean[..96].iter().all(|&p| !k.fr.has(p, pg::LRU)));
        assert!(later.iter().all(|&p| k.fr.has(p, pg::LRU)));
        // The later pages are reached only after every older clean page, and still before the run.
        assert_eq!(call(&mut k), 32);
        assert!(clean.iter().chain(&later[..28]).all(|&p| !k.fr.has(p, pg::LRU)));
        let order = inactive_from_tail(&mut k);
        assert_eq!(order[..12], later[28..]);
        assert_eq!(order[12..], mapped[..]);
    }
}
