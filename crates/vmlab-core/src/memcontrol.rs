//! Memory cgroups (`mm/memcontrol.c`, 2.6.25+): a hierarchy of groups with page counters, charge
//! and uncharge per page, limit reclaim and `memory.high` throttling, protection (`memory.min`
//! and `memory.low`) for reclaim to honour, and the group-scoped OOM killer. Which lruvec holds a
//! charged page and how reclaim walks the groups is the reclaim engine's business (`vmscan`).
//!
//! A page's group is a byte of its frame (`Frames::extra`, which only the 2.4 engines use for
//! their extra references, and 2.4 has no memcg): 0 is the root, which has no limits, and whose
//! lruvecs are the nodes' own.

use crate::kernel::{Ctx, Kernel};
use crate::mm_types::Pfn;
use crate::mmzone::{Lruvec, NR_LRU_LISTS};
use crate::stats::kfunc::KFunc;
use crate::stats::vmstat::{Vm, VmEvents};
use crate::trace::{GfpKind, Tracepoint};

pub const ROOT: u8 = 0;
/// At most this many groups besides the root: the id is one byte of the frame.
pub const MAX_GROUPS: usize = 127;
/// `MEMCG_CHARGE_BATCH`: a CPU's charge stock is refilled this many pages at a time, and an
/// allocator over `memory.high` is handled once per batch it charged.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// `MAX_RECLAIM_RETRIES`.
const MAX_RECLAIM_RETRIES: u32 = 16;
/// `MEMCG_MAX_HIGH_DELAY_JIFFIES` (2 HZ), in ns.
const MAX_HIGH_DELAY_NS: u64 = 2_000_000_000;
/// `mem_cgroup_handle_over_high` does not sleep for HZ/100 or less.
const MIN_HIGH_DELAY_NS: u64 = 10_000_000;
const DELAY_PRECISION_SHIFT: u32 = 20;
const DELAY_SCALING_SHIFT: u32 = 14;
/// "max": no limit.
pub const UNLIMITED: u64 = u64::MAX;

/// `memory.events` entries, in the kernel's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgEvent {
    Low = 0,
    High = 1,
    Max = 2,
    Oom = 3,
    OomKill = 4,
}
pub const MEMCG_EVENT_NAMES: [&str; 5] = ["low", "high", "max", "oom", "oom_kill"];

/// Which interface the scenario configured the group through: it decides the file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupApi {
    V1,
    V2,
}

/// The limits of one group, in pages (`UNLIMITED` for "max").
#[derive(Clone, Debug)]
pub struct MemcgLimits {
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    pub swap_max: u64,
    /// v1 `memory.memsw.limit_in_bytes`: memory plus swap.
    pub memsw_max: u64,
}

impl Default for MemcgLimits {
    fn default() -> Self {
        MemcgLimits { max: UNLIMITED, high: UNLIMITED, low: 0, min: 0, swap_max: UNLIMITED, memsw_max: UNLIMITED }
    }
}

pub struct MemCgroup {
    pub name: String,
    pub parent: u8,
    pub api: CgroupApi,
    pub limits: MemcgLimits,
    /// Pages charged to this group and its descendants (`page_counter` memory, hierarchical).
    pub usage: u64,
    pub peak: u64,
    /// Swap slots charged (hierarchical).
    pub swap: u64,
    /// v1 `failcnt`s: charges that found the counter at its limit.
    pub failcnt: u64,
    pub memsw_failcnt: u64,
    /// `memory.events` (hierarchical: an event counts in the group and every ancestor) and
    /// `memory.events.local`.
    pub events: [u64; 5],
    pub events_local: [u64; 5],
    /// Effective protection from the last reclaim walk (`memory.emin`/`elow`).
    pub emin: u64,
    pub elow: u64,
    /// Per node: the group's lruvec (the root's are the nodes').
    pub lruvec: Vec<Lruvec>,
    /// Per zone id: pages of the group on each list (`lru_zone_size`).
    pub lru_zone: Vec<[u64; NR_LRU_LISTS]>,
    /// Events charged to this group alone (memory.stat sums the subtree).
    pub ev: VmEvents,
    /// Pressure stall accounting of tasks in this group (`memory.pressure`).
    pub psi: crate::psi::PsiGroup,
    /// File pages dirty and under writeback charged to the group and its descendants
    /// (`NR_FILE_DIRTY`, `NR_WRITEBACK` of file pages): a v2 group's writeback domain.
    pub nr_dirty: u64,
    pub nr_writeback: u64,
}

/// The groups of a machine; index 0 is the root.
#[derive(Default)]
pub struct MemCgroups {
    pub groups: Vec<MemCgroup>,
    /// The period (of `workingset::FLUSH_TIME_NS`) of the last periodic rstat flush.
    pub flushed_period: u64,
    /// The period (of the profile's `memcg_stat_poll_ms`) of the last `memory.stat` read.
    pub polled_period: u64,
}

impl MemCgroups {
    /// Are there groups besides the root? Without, every page is the root's and reclaim walks
    /// the nodes' lruvecs alone, as a kernel with no child cgroups does.
    #[inline]
    pub fn active(&self) -> bool {
        self.groups.len() > 1
    }
    /// `root` and its descendants, parents before children (`mem_cgroup_iter`'s pre-order).
    pub fn subtree(&self, root: u8, out: &mut Vec<u8>) {
        out.clear();
        self.walk(root, out);
    }
    fn walk(&self, g: u8, out: &mut Vec<u8>) {
        out.push(g);
        for c in 1..self.groups.len() {
            if self.groups[c].parent == g {
                self.walk(c as u8, out);
            }
        }
    }
    /// Is `g` `anc` or below it?
    pub fn is_descendant(&self, mut g: u8, anc: u8) -> bool {
        loop {
            if g == anc {
                return true;
            }
            if g == ROOT {
                return false;
            }
            g = self.groups[g as usize].parent;
        }
    }
}

impl MemCgroup {
    pub fn new_root() -> MemCgroup {
        MemCgroup::new("", ROOT, CgroupApi::V2, MemcgLimits::default(), 0, 0)
    }
    pub fn new(name: &str, parent: u8, api: CgroupApi, limits: MemcgLimits, nodes: usize, zones: usize) -> MemCgroup {
        MemCgroup {
            name: name.to_string(),
            parent,
            api,
            limits,
            usage: 0,
            peak: 0,
            swap: 0,
            failcnt: 0,
            memsw_failcnt: 0,
            events: [0; 5],
            events_local: [0; 5],
            emin: 0,
            elow: 0,
            lruvec: vec![Lruvec::default(); nodes],
            lru_zone: vec![[0; NR_LRU_LISTS]; zones],
            ev: VmEvents::default(),
            psi: Default::default(),
            nr_dirty: 0,
            nr_writeback: 0,
        }
    }
}

/// The group of the process `ctx` works for (the root for kernel threads).
#[inline]
pub fn ctx_memcg(k: &Kernel, ctx: &Ctx) -> u8 {
    match ctx.mm {
        Some(mm) if k.memcg.active() => k.mms[mm as usize].as_ref().map_or(ROOT, |m| m.memcg),
        _ => ROOT,
    }
}

/// The group page `p` is charged to.
#[inline]
pub fn page_memcg(k: &Kernel, p: Pfn) -> u8 {
    if k.profile.memcg {
        k.fr.extra[p as usize]
    } else {
        ROOT
    }
}

/// `memcg_memory_event`: count in the group and every ancestor below the root.
pub fn memory_event(k: &mut Kernel, g: u8, e: MemcgEvent) {
    k.memcg.groups[g as usize].events_local[e as usize] += 1;
    let mut c = g;
    while c != ROOT {
        k.memcg.groups[c as usize].events[e as usize] += 1;
        c = k.memcg.groups[c as usize].parent;
    }
}

/// Count a vmstat event in group `g`'s own `memory.stat` counters.
#[inline]
pub fn count_event(k: &mut Kernel, g: u8, c: Vm, n: u64) {
    if g != ROOT {
        k.memcg.groups[g as usize].ev.add(c, n);
    }
}

/// The first group from `g` up whose counter one more page would take over a limit
/// (`page_counter_try_charge`), counting its failcnt; `None` if the charge fits everywhere.
fn over_limit(k: &mut Kernel, g: u8, nr: u64) -> Option<u8> {
    let mut c = g;
    while c != ROOT {
        let grp = &mut k.memcg.groups[c as usize];
        if grp.limits.memsw_max != UNLIMITED && grp.usage + grp.swap + nr > grp.limits.memsw_max {
            grp.memsw_failcnt += 1;
            return Some(c);
        }
        if grp.usage + nr > grp.limits.max {
            grp.failcnt += 1;
            return Some(c);
        }
        c = grp.parent;
    }
    None
}

/// Pages the group may still charge before its own (not its ancestors') limit.
fn margin(k: &Kernel, g: u8) -> u64 {
    let grp = &k.memcg.groups[g as usize];
    let mut m = grp.limits.max.saturating_sub(grp.usage);
    if grp.limits.memsw_max != UNLIMITED {
        m = m.min(grp.limits.memsw_max.saturating_sub(grp.usage + grp.swap));
    }
    m
}

/// `mem_cgroup_charge` of a new page for the task of `ctx`: reclaim the group that is at its
/// limit, retry, and as the last resort run the OOM killer inside that group. The charge then
/// succeeds even over the limit: vmlab's fault cannot unwind, so the victim's exit brings the
/// group back under it (the kernel fails the fault and retries it after the kill).
pub fn charge(k: &mut Kernel, ctx: &mut Ctx, p: Pfn) {
    charge_folio(k, ctx, p, 1);
}

/// `mem_cgroup_charge` of a folio of `nr` pages from `p` on: one charge of all its pages, as
/// the kernel charges a large folio (one event, `nr` pages of usage, reclaim until `nr` fit).
pub fn charge_folio(k: &mut Kernel, ctx: &mut Ctx, p: Pfn, nr: u64) {
    if !k.memcg.active() {
        return;
    }
    let g = ctx_memcg(k, ctx);
    if g == ROOT {
        return;
    }
    k.charge(ctx, KFunc::MemcgCharge, k.cost.lru_scan);
    let mut retries = MAX_RECLAIM_RETRIES;
    let entry_sleep = ctx.sleep_ns;
    while !ctx.in_reclaim {
        let Some(over) = over_limit(k, g, nr) else { break };
        memory_event(k, over, MemcgEvent::Max);
        let memsw = {
            let o = &k.memcg.groups[over as usize];
            o.limits.memsw_max != UNLIMITED && o.usage + o.swap >= o.limits.memsw_max
        };
        let reclaimed = try_to_free_mem_cgroup_pages(k, ctx, over, nr, !memsw);
        if margin(k, over) >= nr {
            continue;
        }
        if ctx.sleep_ns > entry_sleep || ctx.resched {
            // Reclaim is asleep on the request queue, or waits for its own writes to land:
            // the kernel's charge resumes after that; vmlab's completes now and the task
            // sleeps, or yields, after its quantum.
            break;
        }
        if reclaimed > 0 {
            continue;
        }
        if retries > 0 {
            retries -= 1;
            continue;
        }
        memory_event(k, over, MemcgEvent::Oom);
        // memory.events' oom_kill counts kills (`__oom_kill_process`); a call that found the
        // last victim still exiting kills no one.
        if crate::oom_kill::out_of_memory_memcg(k, ctx, over) == crate::oom_kill::Oom::Killed {
            memory_event(k, over, MemcgEvent::OomKill);
        }
        break;
    }
    commit_charge(k, g, p, nr);
    // try_charge: an allocator over memory.high is handled once per charge batch.
    let mut c = g;
    let mut over_high = false;
    while c != ROOT {
        let grp = &k.memcg.groups[c as usize];
        if grp.usage > grp.limits.high {
            over_high = true;
            break;
        }
        c = grp.parent;
    }
    if over_high {
        if let Some(mm) = ctx.mm {
            let m = k.mm_mut(mm);
            m.memcg_over_high += nr;
            if m.memcg_over_high >= MEMCG_CHARGE_BATCH {
                m.memcg_over_high = 0;
                handle_over_high(k, ctx, g, MEMCG_CHARGE_BATCH);
            }
        }
    }
}

fn commit_charge(k: &mut Kernel, g: u8, p: Pfn, nr: u64) {
    // Every frame names its group, so each page's uncharge at free finds it.
    for q in p..p + nr as Pfn {
        k.fr.extra[q as usize] = g;
    }
    let mut c = g;
    while c != ROOT {
        let grp = &mut k.memcg.groups[c as usize];
        grp.usage += nr;
        grp.peak = grp.peak.max(grp.usage);
        c = grp.parent;
    }
}

/// Each group's `usage` against its pages: the frames charged to it or to a group below it
/// (usage is exact here, no per-CPU stock). For the tests; it walks every frame.
pub fn check_charges(k: &Kernel) -> Result<(), String> {
    if !k.profile.memcg || !k.memcg.active() {
        return Ok(());
    }
    let mut own = vec![0u64; k.memcg.groups.len()];
    for &g in &k.fr.extra {
        if g != ROOT {
            own[g as usize] += 1;
        }
    }
    for (g, grp) in k.memcg.groups.iter().enumerate().skip(1) {
        let mut sub = Vec::new();
        k.memcg.subtree(g as u8, &mut sub);
        let pages: u64 = sub.iter().map(|&c| own[c as usize]).sum();
        if pages != grp.usage {
            return Err(format!("memcg {}: usage {} but {pages} pages charged", grp.name, grp.usage));
        }
    }
    Ok(())
}

/// `mem_cgroup_uncharge`: the page is being freed.
#[inline]
pub fn uncharge(k: &mut Kernel, p: Pfn) {
    let mut c = k.fr.extra[p as usize];
    while c != ROOT {
        let grp = &mut k.memcg.groups[c as usize];
        grp.usage -= 1;
        c = grp.parent;
    }
}

/// A file page of group `page_memcg(p)` became dirty (+1) or clean (-1), or began (+1) or
/// ended (-1) writeback: count it in the group and its ancestors.
pub fn mod_file_state(k: &mut Kernel, p: Pfn, writeback: bool, up: bool) {
    if !k.memcg.active() {
        return;
    }
    let mut c = page_memcg(k, p);
    while c != ROOT {
        let grp = &mut k.memcg.groups[c as usize];
        let n = if writeback { &mut grp.nr_writeback } else { &mut grp.nr_dirty };
        if up {
            *n += 1;
        } else {
            *n -= 1;
        }
        c = grp.parent;
    }
}

/// The writeback domain of a v2 group (`mem_cgroup_wb_stats`, `mdtc_calc_avail`,
/// `domain_dirty_limits`): its dirty+writeback file pages and its background and hard dirty
/// thresholds, a share of its file pages plus the headroom under its (and its ancestors')
/// `memory.max`/`memory.high`, at most the clean file memory outside it. `None` for the root
/// and v1 groups (v1 has no cgroup writeback: only the global domain throttles).
pub fn wb_domain(k: &Kernel, g: u8, global_avail: u64, global_dirty: u64) -> Option<(u64, u64, u64)> {
    if g == ROOT || k.memcg.groups[g as usize].api != CgroupApi::V2 {
        return None;
    }
    let grp = &k.memcg.groups[g as usize];
    let filepages: u64 = grp
        .lruvec
        .iter()
        .map(|v| v.size(crate::mmzone::LRU_INACTIVE_FILE) + v.size(crate::mmzone::LRU_ACTIVE_FILE))
        .sum();
    let mut headroom = UNLIMITED;
    let mut c = g;
    while c != ROOT {
        let a = &k.memcg.groups[c as usize];
        let ceiling = a.limits.max.min(a.limits.high);
        headroom = headroom.min(ceiling.saturating_sub(a.usage));
        c = a.parent;
    }
    let dirty = grp.nr_dirty + grp.nr_writeback;
    let clean = filepages - filepages.min(dirty);
    let global_clean = global_avail - global_avail.min(global_dirty);
    let other_clean = global_clean - global_clean.min(clean);
    let avail = filepages + headroom.min(other_clean);
    let t = &k.profile.tunables;
    Some((dirty, avail * t.dirty_background_ratio / 100, avail * t.dirty_ratio / 100))
}

/// Is any v2 group over its background dirty threshold (`wb_over_bg_thresh` of its wb)?
pub fn any_wb_domain_over_bg(k: &Kernel, global_avail: u64, global_dirty: u64) -> bool {
    (1..k.memcg.groups.len())
        .any(|g| wb_domain(k, g as u8, global_avail, global_dirty).is_some_and(|(dirty, bg, _)| dirty > bg))
}

/// `__mem_cgroup_try_charge_swap`: page `p` gets a swap slot; charge it to the page's group.
/// Returns the group charged, or `None` (the page stays in memory) when that would pass a
/// `memory.swap.max`.
pub fn try_charge_swap(k: &mut Kernel, p: Pfn) -> Option<u8> {
    let g = page_memcg(k, p);
    let mut c = g;
    while c != ROOT {
        let grp = &k.memcg.groups[c as usize];
        if grp.swap >= grp.limits.swap_max {
            memory_event(k, c, MemcgEvent::Max);
            return None;
        }
        c = grp.parent;
    }
    let mut c = g;
    while c != ROOT {
        let grp = &mut k.memcg.groups[c as usize];
        grp.swap += 1;
        c = grp.parent;
    }
    Some(g)
}

/// `mem_cgroup_uncharge_swap`: a slot charged to `g` is free again.
pub fn uncharge_swap(k: &mut Kernel, mut g: u8) {
    while g != ROOT {
        let grp = &mut k.memcg.groups[g as usize];
        grp.swap -= 1;
        g = grp.parent;
    }
}

/// Swap slots the group may still use (`mem_cgroup_get_nr_swap_pages`).
pub fn nr_swap_pages(k: &Kernel, mut g: u8) -> u64 {
    let mut n = crate::swap_state::free_swap_pages(k);
    while g != ROOT {
        let grp = &k.memcg.groups[g as usize];
        n = n.min(grp.limits.swap_max.saturating_sub(grp.swap));
        if grp.limits.memsw_max != UNLIMITED {
            n = n.min(grp.limits.memsw_max.saturating_sub(grp.usage + grp.swap));
        }
        g = grp.parent;
    }
    n
}

/// `try_to_free_mem_cgroup_pages`: limit reclaim of group `g` for `nr` pages.
pub fn try_to_free_mem_cgroup_pages(k: &mut Kernel, ctx: &mut Ctx, g: u8, nr: u64, may_swap: bool) -> u64 {
    let was = ctx.in_reclaim;
    ctx.in_reclaim = true;
    let start = ctx.clock();
    // The tracepoint prints sc.gfp_mask: GFP_HIGHUSER_MOVABLE outside GFP_RECLAIM_MASK, the
    // charge's own bits inside it. vmlab's charges carry no gfp, so a GFP_KERNEL charge's form
    // is printed (the host prints GFP_NOFS|…|__GFP_NORETRY for a readahead's charge).
    k.trace_ctx(ctx, Tracepoint::MemcgReclaimBegin { order: 0, gfp: GfpKind::HighuserMovable });
    let r = crate::vmscan::try_to_free_mem_cgroup_pages(k, ctx, g, nr, may_swap);
    k.trace_ctx(ctx, Tracepoint::MemcgReclaimEnd { nr_reclaimed: r });
    ctx.in_reclaim = was;
    // psi_memstall_enter/leave around the reclaim (try_charge_memcg, reclaim_high).
    crate::psi::memstall(k, ctx, start);
    r
}

/// `calculate_overage`: how far over `high` usage is, in 2^-20 units of `high`.
fn overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    let high = high.max(1);
    (((usage - high) as u128) << DELAY_PRECISION_SHIFT).div_euclid(high as u128) as u64
}

/// `mem_find_max_overage` / `swap_find_max_overage` up to (not including) the root.
fn max_overage(k: &Kernel, mut g: u8, swap: bool) -> u64 {
    let mut m = 0;
    while g != ROOT {
        let grp = &k.memcg.groups[g as usize];
        let o = if swap { overage(grp.swap, UNLIMITED) } else { overage(grp.usage, grp.limits.high) };
        m = m.max(o);
        g = grp.parent;
    }
    m
}

/// `calculate_high_delay`, in ns: quadratic in the overage, for a charge of `nr` pages against
/// the nominal batch.
pub fn high_delay_ns(max_overage: u64, nr: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    let o = max_overage as u128;
    let ns = (o * o * 1_000_000_000) >> (DELAY_PRECISION_SHIFT + DELAY_SCALING_SHIFT);
    (ns * nr as u128 / MEMCG_CHARGE_BATCH as u128).min(u64::MAX as u128) as u64
}

/// `reclaim_high`: reclaim `nr` pages from the group and each ancestor over its `memory.high`.
fn reclaim_high(k: &mut Kernel, ctx: &mut Ctx, g: u8, nr: u64) -> u64 {
    let mut reclaimed = 0;
    let mut c = g;
    while c != ROOT {
        let grp = &k.memcg.groups[c as usize];
        if grp.usage > grp.limits.high {
            memory_event(k, c, MemcgEvent::High);
            reclaimed += try_to_free_mem_cgroup_pages(k, ctx, c, nr, true);
        }
        c = k.memcg.groups[c as usize].parent;
    }
    reclaimed
}

/// `mem_cgroup_handle_over_high` on the way back to user space: reclaim, and when reclaim
/// cannot keep the group near `memory.high`, sleep for the penalty.
fn handle_over_high(k: &mut Kernel, ctx: &mut Ctx, g: u8, nr: u64) {
    let mut retries = MAX_RECLAIM_RETRIES;
    let mut in_retry = false;
    loop {
        let reclaimed = reclaim_high(k, ctx, g, if in_retry { crate::vmscan::SWAP_CLUSTER_MAX } else { nr });
        let penalty = (high_delay_ns(max_overage(k, g, false), nr) + high_delay_ns(max_overage(k, g, true), nr))
            .min(MAX_HIGH_DELAY_NS);
        if penalty <= MIN_HIGH_DELAY_NS {
            return;
        }
        if reclaimed > 0 || retries > 0 {
            if reclaimed == 0 {
                retries -= 1;
            }
            in_retry = true;
            continue;
        }
        crate::psi::memstall_sleep(k, ctx, penalty);
        ctx.sleep_ns += penalty;
        return;
    }
}

/// `propagate_protected_usage`'s sums for the children of `parent`: Σ min(usage, min) and
/// Σ min(usage, low).
fn children_protected(k: &Kernel, parent: u8) -> (u64, u64) {
    let mut s = (0, 0);
    for grp in k.memcg.groups.iter().skip(1).filter(|c| c.parent == parent) {
        s.0 += grp.usage.min(grp.limits.min);
        s.1 += grp.usage.min(grp.limits.low);
    }
    s
}

/// `effective_protection` (without the memory_recursiveprot mount option).
fn effective_protection(usage: u64, setting: u64, parent_effective: u64, siblings_protected: u64) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64;
    }
    protected
}

/// `mem_cgroup_calculate_protection`, called on the way down the reclaim walk from `target`.
pub fn calculate_protection(k: &mut Kernel, target: u8, g: u8) {
    if g == target || g == ROOT {
        return;
    }
    let grp = &k.memcg.groups[g as usize];
    let (usage, parent) = (grp.usage, grp.parent);
    if usage == 0 {
        return;
    }
    let (min, low) = (grp.limits.min, grp.limits.low);
    if parent == target {
        let grp = &mut k.memcg.groups[g as usize];
        grp.emin = min;
        grp.elow = low;
        return;
    }
    let (pmin, plow) = (k.memcg.groups[parent as usize].emin, k.memcg.groups[parent as usize].elow);
    let (smin, slow) = children_protected(k, parent);
    let emin = effective_protection(usage, min, pmin, smin);
    let elow = effective_protection(usage, low, plow, slow);
    let grp = &mut k.memcg.groups[g as usize];
    grp.emin = emin;
    grp.elow = elow;
}

fn unprotected(target: u8, g: u8) -> bool {
    g == ROOT || g == target
}

/// `mem_cgroup_below_min`.
pub fn below_min(k: &Kernel, target: u8, g: u8) -> bool {
    !unprotected(target, g) && k.memcg.groups[g as usize].emin >= k.memcg.groups[g as usize].usage
}

/// `mem_cgroup_below_low`.
pub fn below_low(k: &Kernel, target: u8, g: u8) -> bool {
    !unprotected(target, g) && k.memcg.groups[g as usize].elow >= k.memcg.groups[g as usize].usage
}

/// `mem_cgroup_protection`: what `get_scan_count` scales group `g`'s scan down by.
pub fn protection(k: &Kernel, target: u8, g: u8, low_reclaim: bool) -> u64 {
    if g == target || g == ROOT {
        return 0;
    }
    let grp = &k.memcg.groups[g as usize];
    if low_reclaim {
        grp.emin
    } else {
        grp.emin.max(grp.elow)
    }
}
