//! Kernel profiles ("eras"): each is a row of mechanism choices plus default tunables. No code
//! outside this table looks at a profile's name; mechanisms read the fields. Any field can be
//! overridden from a scenario's `[vm]`/`[reclaim]` tables or with `--set vm.NAME=V`.

use crate::stats::kfunc::Symbols;
use serde::Serialize;

/// Which reclaim engine (LRU layout + scan policy + kswapd) runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// 6.8: node lruvec, inactive/active anon/file + unevictable, get_scan_count cost model.
    Modern,
    /// 2.6.36/2.6.38: per-zone lruvecs, split LRU, recent_scanned/rotated, lumpy reclaim.
    Split2636,
    /// 2.4.0–2.4.9 (Rik van Riel): active / inactive_dirty / inactive_clean with page age.
    Riel24,
    /// 2.4.10+ (Andrea Arcangeli): active/inactive with classzones, page-table-walk swap_out.
    Aa24,
    /// 2.6.26/2.6.27: one active/inactive pair per zone, `reclaim_mapped` from swap_tendency and
    /// prev_priority, balance_pgdat with temp_priority.
    Zone26,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WmarkRule {
    /// 2.4 `free_area_init_core`: min = clamp(size/128, 20, 255), low 2x, high 3x.
    Linux24,
    /// 2.6.36 `setup_per_zone_wmarks`: low = min + min/4, high = min + min/2.
    Linux2636,
    /// 6.8: distance max(min/4, managed * watermark_scale_factor / 10000).
    Linux68,
}

/// Order-N watermark check of `__zone_watermark_ok`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HighOrderCheck {
    /// 2.6.36: subtract lower orders' free pages, halving min at each order.
    SubtractLowerOrders,
    /// 6.8: any free block of at least the order.
    AnyBlock,
}

/// What a page fault does with mmap_sem while it waits for disk I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultLocking {
    /// 2.6.26 and before: sleeps in lock_page holding mmap_sem for read.
    HoldAcrossIo,
    /// 2.6.37+ FAULT_FLAG_ALLOW_RETRY: drop mmap_sem, wait for the page, retry.
    Retry,
    /// 6.4+: per-VMA read lock (lock_vma_under_rcu), mmap_sem only as fallback; retry on I/O.
    PerVma,
}

/// How a fault on a file mapping reads ahead (`filemap_fault`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MmapReadahead {
    /// 2.4 `filemap_nopage` → `read_cluster_nonblocking`: the `1 << page_cluster`-page cluster,
    /// aligned to its size (`CLUSTER_OFFSET`), that holds the fault; the fault then waits.
    Cluster,
    /// 2.6.23–2.6.30: read-around, `ra_pages` centred on the fault, nothing read asynchronously:
    /// every window is a fault that waits.
    ReadAround,
    /// 2.6.31–2.6.39: a fault on the page after the previous one runs sequential (on-demand)
    /// readahead, which keeps the next window in flight; others read around.
    SequentialOrReadAround,
    /// 3.0+: read-around marks its last quarter PG_readahead, so the next window starts early.
    ReadAroundAsync,
}

/// What a swap-in fault reads besides its own page (`swapin_readahead`). Every mode reads into
/// the swap cache only slots still in use whose page is not cached, stops at the first page it
/// cannot allocate, and marks the extra pages PG_readahead (`swap_ra`; `swap_ra_hit` when a
/// fault finds one, the 4.14+ counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwapReadahead {
    /// One page per major fault.
    None,
    /// 2.4 (and 2.6 before the rework below) `valid_swaphandles`: the `1 << page_cluster`-slot
    /// block aligned to its size that holds the slot, from its first slot (not the swap header)
    /// up to the first free one; the target itself may lie past that point.
    ClusterFromBase,
    /// 2.6.2x–3.x `valid_swaphandles`: the slots of that aligned block that are in use and
    /// contiguous with the target, both ways.
    ClusterAround,
    /// 3.15+ `swap_cluster_readahead`: the aligned block of `swapin_nr_pages` slots around the
    /// target, a window sized from the readahead hits counted since the last major fault
    /// (`swapin_readahead_hits`, `__swapin_nr_pages`, at most `1 << page_cluster`).
    Cluster,
    /// 4.14+ with `vma_ra_enabled` (`swap_vma_readahead`): the window is in the faulting VMA's
    /// virtual pages, sized from its readahead hits (`__swapin_nr_pages`, at most
    /// `1 << min(page_cluster, 5)`), pushed ahead of a sequential fault, and kept inside the VMA
    /// and the fault's PMD. `swap_use_vma_readahead` falls back to `Cluster` while a rotational
    /// device swaps (`nr_rotate_swap`): here, a swap disk with a positioning time (`seek_ns`).
    Vma,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RwsemKind {
    /// 2.6 lib/rwsem.c: strict FIFO; a waiting writer blocks new readers.
    Fifo,
    /// Modern: optimistic spinning and handoff; new readers still queue behind waiters.
    Handoff,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuicklistRule {
    None,
    /// 2.6.22–2.6.26: each CPU may cache node_free/16 page-table pages.
    #[serde(rename = "node_free_16")]
    NodeFree16,
    /// 2.6.27+: node_free/16/cpus_on_node.
    #[serde(rename = "node_free_16_per_cpu")]
    NodeFree16PerCpu,
}

/// How a block-completion interrupt is delivered and what work its handler does (`irq.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IrqRule {
    /// Interrupt time is charged to no CPU (the engines whose seeds were calibrated without it).
    None,
    /// 2.4 i386 SMP: the IO-APIC sends every device interrupt in lowest-priority mode to all
    /// CPUs (`setup_IO_APIC_irqs`: `dest_LowestPrio`, logical destination `TARGET_CPUS`); with
    /// every TPR left at 0, P6 local APICs tie and the APIC bus arbitration ID, which rotates,
    /// picks the CPU: the interrupts go round the CPUs. The driver's handler completes the
    /// request whole under `io_request_lock` with interrupts off (`end_request` → `b_end_io` per
    /// buffer, `bounce_end_io_read`'s copies) and runs the request function for the next ones:
    /// cost `irq_end_request` plus `copy_page` per bounced page.
    #[serde(rename = "lowest_priority_24")]
    LowestPriority24,
    /// 2.6+/6.8 x86: the IRQ's effective affinity is one CPU (fixed delivery; irqbalance spreads
    /// IRQs, one CPU each: disk `i` on CPU `i mod cpus`). The hard handler acknowledges and the
    /// block softirq ends the bios on the same CPU: cost `irq_handler`.
    Fixed,
}

/// The 2.6.36 → 2.6.38 reclaim choices of the `Split2636` engine: Mel Gorman's kswapd series
/// (Dec 2010, "Prevent kswapd dumping excessive amounts of memory in response to high-order
/// allocations") and the 2.6.37 reclaim-mode rework. All false/4 is vanilla 2.6.36.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Split26 {
    /// (1/6) `wakeup_kswapd` records `classzone_idx`; `balance_pgdat` and the sleep checks use it.
    pub kswapd_classzone: bool,
    /// (3/6) `balance_pgdat` returns the order it balanced at, after an order-0 recheck of every
    /// zone up to end_zone; kswapd's sleep checks use that order.
    pub kswapd_return_order: bool,
    /// (4/6) kswapd resets `kswapd_max_order`/`classzone_idx` after reading them behind a sleep.
    pub kswapd_reset_after_sleep: bool,
    /// (5/6) `all_unreclaimable` zones count as balanced in `sleeping_prematurely`.
    pub unreclaimable_balanced: bool,
    /// 2.6.38–2.6.39: for order > 0 `sleeping_prematurely` returns `pgdat_balanced()` instead of
    /// its negation (fixed in 3.0 by afc7e326), so a balanced node is "premature".
    pub sleep_check_inverted: bool,
    /// 2.6.37+: `__zone_watermark_ok` subtracts `(1 << order) + 1` instead of `(1 << order) - 1`.
    pub wmark_off_by_two: bool,
    /// CONFIG_COMPACTION reclaim mode (2.6.37+): no lumpy ISOLATE_BOTH, references honoured, and
    /// `should_continue_reclaim` for order > 0 under pressure.
    pub reclaim_compaction: bool,
    /// 2.6.37+: lumpy neighbour isolation stops at the first page of the block it cannot take.
    pub lumpy_stop_on_fail: bool,
    /// Smallest order direct compaction runs for: 4 in 2.6.36 (> PAGE_ALLOC_COSTLY_ORDER), 1 in
    /// 2.6.38; 0 = no compaction. Recorded for the era; direct compaction itself is not modelled
    /// yet (no seed-001 workload makes sleeping order > 0 allocations).
    pub compaction_min_order: u32,
}

/// Vanilla 2.6.36.
pub const SPLIT26_2636: Split26 = Split26 {
    kswapd_classzone: false,
    kswapd_return_order: false,
    kswapd_reset_after_sleep: false,
    unreclaimable_balanced: false,
    sleep_check_inverted: false,
    wmark_off_by_two: false,
    reclaim_compaction: false,
    lumpy_stop_on_fail: false,
    compaction_min_order: 4,
};

/// Tunables (sysctls) — the names follow /proc/sys/vm.
#[derive(Clone, Debug, Serialize)]
pub struct Tunables {
    pub swappiness: u64,
    /// 0 = computed as the kernel does (int_sqrt(lowmem_kb * 16), clamped).
    pub min_free_kbytes: u64,
    pub watermark_scale_factor: u64,
    pub dirty_ratio: u64,
    pub dirty_background_ratio: u64,
    pub dirty_expire_centisecs: u64,
    pub dirty_writeback_centisecs: u64,
    pub read_ahead_kb: u64,
    pub page_cluster: u64,
    /// DMA, DMA32, Normal, HighMem.
    pub lowmem_reserve_ratio: [u64; 4],
    pub vm_cache_scan_ratio: u64,
    pub vm_mapped_ratio: u64,
    pub vm_passes: u64,
    pub vm_lru_balance_ratio: u64,
    /// 2.4-aa `vm_anon_lru`: 0 keeps new anonymous pages off the LRU until swap_out puts them in
    /// the swap cache.
    pub vm_anon_lru: u64,
    /// Upper clamp of computed min_free_kbytes.
    pub min_free_kbytes_max: u64,
}

/// One kernel profile: mechanisms + tunables.
#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    pub name: &'static str,
    pub summary: &'static str,
    pub engine: Engine,
    /// Mlocked pages go to the unevictable LRU (2.6.28+) instead of staying on the scanned lists.
    pub unevictable_lru: bool,
    pub wmark: WmarkRule,
    pub high_order_check: HighOrderCheck,
    pub fault_locking: FaultLocking,
    pub mmap_readahead: MmapReadahead,
    pub swap_readahead: SwapReadahead,
    pub rwsem: RwsemKind,
    pub quicklist: QuicklistRule,
    /// 2.4: mlock may lock at most half of physical memory.
    pub mlock_half_physmem: bool,
    /// kswapd gives up after MAX_RECLAIM_RETRIES failed runs (4.12+).
    pub kswapd_failures: bool,
    /// 2.6.38 (Mel Gorman): high-order balancing stops once 25 % of the node is balanced.
    pub pgdat_balanced_quarter: bool,
    /// 2.4.9-phillips bandaid: kswapd sleeps even when do_try_to_free_pages failed.
    pub kswapd_ignore_failure: bool,
    /// 2.4 before the block layer learned HighMem I/O (Jens Axboe's highmem-io, merged in
    /// 2.4.21 for drivers that declare it): `__make_request` passes every buffer of a HighMem page
    /// through `create_bounce`, which takes a lowmem page with `alloc_page(GFP_NOHIGHIO)` (an
    /// emergency pool if that fails) and frees it when the read completes.
    pub bounce_highmem_io: bool,
    /// 2.4 buffer heads of page-cache pages: `block_read_full_page` → `create_empty_buffers`
    /// gives every page read through the block layer one `buffer_head` per fs block, taken from
    /// the `buffer_head` slab (`SLAB_NOFS`: lowmem only) and freed by `try_to_free_buffers` in
    /// `page_launder`; the slab's empty pages go back only when `kmem_cache_reap` runs (the
    /// GENERAL_SHORTAGE arm of do_try_to_free_pages). The value is buffer heads per slab page
    /// (0: the slab's pages are not modelled, only the per-page reference).
    pub bh_per_slab_page: u32,
    /// 2.4 `try_to_swap_out` leaves PTEs of active pages alone (2.4.23's mm/vmscan.c). Andrea's
    /// 2.4.19-pre `aa-200-active_page_swapout` dropped the test; off, the walk unmaps active
    /// pages too.
    pub walk_skips_active: bool,
    /// 2.4.23aa2: objrmap unmapping of shared pages during the page-table walk.
    pub objrmap_walk: bool,
    /// 2.4.23aa2: shm_writepage starts the swap I/O immediately.
    pub shm_writepage_io: bool,
    /// 2.4.23aa2: clean-cache pass before writepage work.
    pub clean_cache_pass: bool,
    /// Refault (workingset) detection (3.15+).
    pub workingset: bool,
    /// `zone_batchsize` caps a pcp batch at this many bytes of zone per 1/1024 (before the /4):
    /// 512 KiB until 2.6.3x (batch 31), 1 MiB later (batch 63).
    pub pcp_batch_bytes: u64,
    /// Per-CPU page lists per migrate type (`pcp->lists[MIGRATE_PCPTYPES]`, 2.6.24+): an order-0
    /// unmovable or reclaimable allocation refills from its own buddy lists (stealing through
    /// `__rmqueue_fallback` when they are empty) instead of taking whatever page was freed last.
    /// Off: one list per CPU and zone, as the engines calibrated before this was modelled.
    pub pcp_migratetype_lists: bool,
    /// Reclaim frees its pages cold, to the pcp list tail (2.6.2x–3.x `shrink_page_list`'s
    /// `pagevec_init(&freed_pvec, 1)`; hot/cold frees went away in 4.15).
    pub reclaim_frees_cold: bool,
    /// 5.9+ `mm_account_fault`: PGFAULT counts a fault once it completes, not an attempt that
    /// returned VM_FAULT_RETRY. Before, `handle_mm_fault` counted every call, so a 2.6.37+ fault
    /// that dropped mmap_sem for its I/O and retried counted twice.
    pub pgfault_on_completion: bool,
    /// Which CPU a disk's completion interrupt steals time from, and what it costs.
    pub irq: IrqRule,
    /// `__free_one_page` puts a merged block at the TAIL of its free list when its buddy at the
    /// next order is free, so that it is handed out last and more likely to coalesce further
    /// (Corrado Zoccolo, 2.6.35; `buddy_merge_likely` in 6.x). Off: always the head.
    pub buddy_merge_tail: bool,
    /// Page-cache pages allocated for reads are cold (`page_cache_alloc_cold`, __GFP_COLD, in
    /// `__do_page_cache_readahead` and `page_cache_read`; 2.5–4.14): `buffered_rmqueue` takes
    /// them from the pcp list tail while writes and faults take the head, so one refill batch
    /// is split between the two. Off in rows calibrated before this was modelled.
    pub page_cache_read_cold: bool,
    /// Whose function names the flat kernel profile uses (presentation only).
    pub symbols: Symbols,
    /// The split-LRU engine's 2.6.36/2.6.38 choices (only `Engine::Split2636` reads them).
    pub split26: Split26,
    pub tunables: Tunables,
}

const BASE_TUNABLES: Tunables = Tunables {
    swappiness: 60,
    min_free_kbytes: 0,
    watermark_scale_factor: 10,
    dirty_ratio: 20,
    dirty_background_ratio: 10,
    dirty_expire_centisecs: 3000,
    dirty_writeback_centisecs: 500,
    read_ahead_kb: 128,
    page_cluster: 3,
    lowmem_reserve_ratio: [256, 256, 32, 0],
    vm_cache_scan_ratio: 6,
    vm_mapped_ratio: 100,
    vm_passes: 60,
    vm_lru_balance_ratio: 2,
    vm_anon_lru: 1,
    min_free_kbytes_max: 262144,
};

const MODERN: Profile = Profile {
    name: "linux-6.8",
    summary: "node lruvec, get_scan_count cost model, watermark_scale_factor, kswapd_failures, per-VMA locks",
    engine: Engine::Modern,
    unevictable_lru: true,
    wmark: WmarkRule::Linux68,
    high_order_check: HighOrderCheck::AnyBlock,
    fault_locking: FaultLocking::PerVma,
    mmap_readahead: MmapReadahead::ReadAroundAsync,
    // /sys/kernel/mm/swap/vma_ra_enabled defaults to true.
    swap_readahead: SwapReadahead::Vma,
    rwsem: RwsemKind::Handoff,
    quicklist: QuicklistRule::None,
    mlock_half_physmem: false,
    kswapd_failures: true,
    pgdat_balanced_quarter: false,
    kswapd_ignore_failure: false,
    bounce_highmem_io: false,
    bh_per_slab_page: 0,
    walk_skips_active: true,
    objrmap_walk: false,
    shm_writepage_io: true,
    clean_cache_pass: false,
    workingset: true,
    pcp_batch_bytes: 1 << 20,
    pcp_migratetype_lists: false,
    reclaim_frees_cold: false,
    pgfault_on_completion: true,
    irq: IrqRule::Fixed,
    buddy_merge_tail: true,
    page_cache_read_cold: false,
    symbols: Symbols::Linux68,
    split26: SPLIT26_2636,
    tunables: BASE_TUNABLES,
};

/// 2.6.26 (July 2008): one active/inactive pair per zone (split LRU and the unevictable list came
/// in 2.6.28), page-table quicklists of node_free/16 per CPU, mmap_sem held across fault I/O.
const LINUX_2_6_26: Profile = Profile {
    name: "linux-2.6.26",
    summary: "no split LRU yet, quicklists node_free/16 per CPU, mmap_sem held across fault I/O, FIFO rwsem",
    engine: Engine::Zone26,
    unevictable_lru: false,
    wmark: WmarkRule::Linux2636,
    high_order_check: HighOrderCheck::SubtractLowerOrders,
    fault_locking: FaultLocking::HoldAcrossIo,
    mmap_readahead: MmapReadahead::ReadAround,
    swap_readahead: SwapReadahead::ClusterAround,
    rwsem: RwsemKind::Fifo,
    quicklist: QuicklistRule::NodeFree16,
    mlock_half_physmem: false,
    kswapd_failures: false,
    pgdat_balanced_quarter: false,
    kswapd_ignore_failure: false,
    bounce_highmem_io: false,
    bh_per_slab_page: 0,
    walk_skips_active: false,
    objrmap_walk: false,
    shm_writepage_io: true,
    clean_cache_pass: false,
    workingset: false,
    pcp_batch_bytes: 512 << 10,
    pcp_migratetype_lists: false,
    reclaim_frees_cold: false,
    pgfault_on_completion: false,
    // Seeds 003/004 were calibrated without interrupt time.
    irq: IrqRule::None,
    buddy_merge_tail: false,
    page_cache_read_cold: false,
    symbols: Symbols::Linux26,
    split26: SPLIT26_2636,
    tunables: Tunables { min_free_kbytes_max: 65536, ..BASE_TUNABLES },
};

/// 2.6.27 (October 2008): as 2.6.26, with each CPU's quicklist bound divided by the CPUs on its
/// node (seed 003's fix).
const LINUX_2_6_27: Profile = Profile {
    name: "linux-2.6.27",
    summary: "as linux-2.6.26, quicklists node_free/16/cpus_on_node",
    quicklist: QuicklistRule::NodeFree16PerCpu,
    ..LINUX_2_6_26
};

/// 2.6.36: per-zone split LRU, lumpy reclaim, the 2.6.36 kswapd.
const LINUX_2636: Profile = Profile {
    name: "linux-2.6.36",
    summary: "per-zone split anon/file LRU, lumpy reclaim, 2.6.36 kswapd (balances every zone at the woken order)",
    engine: Engine::Split2636,
    unevictable_lru: true,
    wmark: WmarkRule::Linux2636,
    high_order_check: HighOrderCheck::SubtractLowerOrders,
    fault_locking: FaultLocking::HoldAcrossIo,
    mmap_readahead: MmapReadahead::SequentialOrReadAround,
    swap_readahead: SwapReadahead::ClusterAround,
    rwsem: RwsemKind::Fifo,
    quicklist: QuicklistRule::None,
    mlock_half_physmem: false,
    kswapd_failures: false,
    pgdat_balanced_quarter: false,
    kswapd_ignore_failure: false,
    bounce_highmem_io: false,
    bh_per_slab_page: 0,
    walk_skips_active: false,
    objrmap_walk: false,
    shm_writepage_io: true,
    clean_cache_pass: false,
    workingset: false,
    pcp_batch_bytes: 512 << 10,
    pcp_migratetype_lists: true,
    reclaim_frees_cold: true,
    pgfault_on_completion: false,
    // Seed 001 was calibrated without interrupt time.
    irq: IrqRule::None,
    buddy_merge_tail: true,
    page_cache_read_cold: true,
    symbols: Symbols::Linux26,
    split26: SPLIT26_2636,
    tunables: Tunables { min_free_kbytes_max: 65536, lowmem_reserve_ratio: [256, 256, 32, 32], ..BASE_TUNABLES },
};

/// 2.6.38: Mel Gorman's kswapd series, reclaim/compaction, FAULT_FLAG_ALLOW_RETRY.
const LINUX_2638: Profile = Profile {
    name: "linux-2.6.38",
    summary:
        "2.6.36 + Mel Gorman's kswapd series (classzone, 25 % pgdat_balanced, order-0 recheck), reclaim/compaction",
    fault_locking: FaultLocking::Retry,
    pgdat_balanced_quarter: true,
    split26: Split26 {
        kswapd_classzone: true,
        kswapd_return_order: true,
        kswapd_reset_after_sleep: true,
        unreclaimable_balanced: true,
        sleep_check_inverted: true,
        wmark_off_by_two: true,
        reclaim_compaction: true,
        lumpy_stop_on_fail: true,
        compaction_min_order: 1,
    },
    ..LINUX_2636
};

/// Linus' 2.4.9 (Aug 2001): Rik van Riel's VM as it stood before the 2.4.10 switch.
const LINUX_249: Profile = Profile {
    name: "linux-2.4.9",
    summary: "Rik van Riel VM: active/inactive_dirty/inactive_clean with page age, refill_inactive_scan, page_launder, swap_out page-table walk; kswapd loops while any shortage remains; no unevictable list",
    engine: Engine::Riel24,
    unevictable_lru: false,
    wmark: WmarkRule::Linux24,
    high_order_check: HighOrderCheck::SubtractLowerOrders,
    fault_locking: FaultLocking::HoldAcrossIo,
    mmap_readahead: MmapReadahead::Cluster,
    // 2.4 do_swap_page → swapin_readahead → valid_swaphandles.
    swap_readahead: SwapReadahead::ClusterFromBase,
    rwsem: RwsemKind::Fifo,
    quicklist: QuicklistRule::None,
    mlock_half_physmem: true,
    kswapd_failures: false,
    pgdat_balanced_quarter: false,
    kswapd_ignore_failure: false,
    bounce_highmem_io: true,
    // 96-byte buffer_head (2.4 i386, SLAB_HWCACHE_ALIGN), 4 KiB ext2 blocks: one per page,
    // about 40 to a slab page.
    bh_per_slab_page: 40,
    walk_skips_active: false,
    objrmap_walk: false,
    shm_writepage_io: false,
    clean_cache_pass: false,
    workingset: false,
    pcp_batch_bytes: 512 << 10,
    pcp_migratetype_lists: false,
    reclaim_frees_cold: false,
    pgfault_on_completion: false,
    irq: IrqRule::LowestPriority24,
    buddy_merge_tail: false,
    page_cache_read_cold: false,
    symbols: Symbols::Linux24,
    split26: SPLIT26_2636,
    // page_cluster 4 (swap_setup with >= 32 MB): mmap read-around of 16 pages.
    tunables: Tunables { page_cluster: 4, read_ahead_kb: 64, ..BASE_TUNABLES },
};

/// 2.4.9 with Daniel Phillips' seed-000 bandaid: kswapd sleeps after every pass.
const LINUX_249_PHILLIPS: Profile = Profile {
    name: "linux-2.4.9-phillips",
    summary: "linux-2.4.9 with the Oct 2001 bandaid: kswapd ignores do_try_to_free_pages failing and sleeps (up to HZ) after every pass",
    kswapd_ignore_failure: true,
    ..LINUX_249
};

/// Andrea Arcangeli's VM as in 2.4.23aa1 (mm/vmscan.c of 2.4.23 with the -aa sysctls). Every
/// mechanism choice outside the reclaim engine is the 2.4 era's, as in `LINUX_249`.
const AA1: Profile = Profile {
    name: "linux-2.4.23aa1",
    summary: "Andrea 2.4 VM: active/inactive with classzones, shrink_cache + page-table-walk swap_out; shm_writepage defers I/O",
    engine: Engine::Aa24,
    // 2.4.23's drivers may declare highmem I/O; the -aa seeds were calibrated without bounces.
    bounce_highmem_io: false,
    // The aa24 engine has no buffer heads on its pages (seed 002 was calibrated without them).
    bh_per_slab_page: 0,
    // 2.4.23's filemap_nopage also reads the aligned cluster, but seed 002 was measured with
    // the centred window; moving it needs seed 002 re-measured.
    mmap_readahead: MmapReadahead::ReadAround,
    // Seed 002 was calibrated without interrupt time.
    irq: IrqRule::None,
    tunables: Tunables { read_ahead_kb: 124, vm_anon_lru: 0, ..BASE_TUNABLES },
    ..LINUX_249
};

/// 2.4.23aa2: aa1 plus `05_vm_28-shmem-big-iron-1`.
const AA2: Profile = Profile {
    name: "linux-2.4.23aa2",
    summary: "2.4.23aa1 + shmem-big-iron: objrmap unmap in the walk, immediate shm swap I/O, clean-cache pass",
    objrmap_walk: true,
    shm_writepage_io: true,
    clean_cache_pass: true,
    ..AA1
};

/// The profile table. Adding an era means adding a row here (and, if it needs a new
/// mechanism, the mechanism behind one of the enums above).
pub fn all() -> Vec<Profile> {
    vec![LINUX_249, LINUX_249_PHILLIPS, AA1, AA2, LINUX_2_6_26, LINUX_2_6_27, LINUX_2636, LINUX_2638, MODERN]
}

pub fn find(name: &str) -> Option<Profile> {
    all().into_iter().find(|p| p.name == name)
}

pub fn names() -> Vec<&'static str> {
    all().iter().map(|p| p.name).collect()
}

impl Profile {
    /// Apply one `vm.NAME` / `reclaim.NAME` override. Errors name the nearest valid key.
    pub fn set(&mut self, section: &str, key: &str, v: &toml::Value) -> Result<(), String> {
        let int = || -> Result<u64, String> {
            match v {
                toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
                toml::Value::String(s) => s
                    .parse::<u64>()
                    .map_err(|_| format!("`{section}.{key}` expects a non-negative integer, found \"{s}\"")),
                other => Err(format!("`{section}.{key}` expects a non-negative integer, found {other}")),
            }
        };
        let boolean = || -> Result<bool, String> {
            match v {
                toml::Value::Boolean(b) => Ok(*b),
                toml::Value::String(s) if s == "true" || s == "1" => Ok(true),
                toml::Value::String(s) if s == "false" || s == "0" => Ok(false),
                other => Err(format!("`{section}.{key}` expects true or false, found {other}")),
            }
        };
        let word = || -> Result<String, String> {
            match v {
                toml::Value::String(s) => Ok(s.clone()),
                other => Err(format!("`{section}.{key}` expects a word, found {other}")),
            }
        };
        let t = &mut self.tunables;
        match (section, key) {
            ("vm", "swappiness") => t.swappiness = int()?.min(200),
            ("vm", "min_free_kbytes") => t.min_free_kbytes = int()?,
            ("vm", "watermark_scale_factor") => t.watermark_scale_factor = int()?.clamp(1, 3000),
            ("vm", "dirty_ratio") => t.dirty_ratio = int()?.min(100),
            ("vm", "dirty_background_ratio") => t.dirty_background_ratio = int()?.min(100),
            ("vm", "dirty_expire_centisecs") => t.dirty_expire_centisecs = int()?,
            ("vm", "dirty_writeback_centisecs") => t.dirty_writeback_centisecs = int()?,
            ("vm", "read_ahead_kb") => t.read_ahead_kb = int()?,
            ("vm", "page_cluster") => t.page_cluster = int()?.min(10),
            ("vm", "vm_cache_scan_ratio") => t.vm_cache_scan_ratio = int()?.max(1),
            ("vm", "vm_mapped_ratio") => t.vm_mapped_ratio = int()?.max(1),
            ("vm", "vm_passes") => t.vm_passes = int()?.max(1),
            ("vm", "vm_lru_balance_ratio") => t.vm_lru_balance_ratio = int()?.max(1),
            ("vm", "vm_anon_lru") => t.vm_anon_lru = int()?.min(1),
            ("reclaim", "unevictable_lru") => self.unevictable_lru = boolean()?,
            ("reclaim", "mlock_half_physmem") => self.mlock_half_physmem = boolean()?,
            ("reclaim", "kswapd_failures") => self.kswapd_failures = boolean()?,
            ("reclaim", "pgdat_balanced_quarter") => self.pgdat_balanced_quarter = boolean()?,
            ("reclaim", "kswapd_ignore_failure") => self.kswapd_ignore_failure = boolean()?,
            ("reclaim", "bounce_highmem_io") => self.bounce_highmem_io = boolean()?,
            ("reclaim", "irq") => {
                self.irq = match word()?.as_str() {
                    "none" => IrqRule::None,
                    "lowest_priority_24" => IrqRule::LowestPriority24,
                    "fixed" => IrqRule::Fixed,
                    o => return Err(format!("`reclaim.irq` is \"{o}\"; expected \"none\", \"lowest_priority_24\" or \"fixed\"")),
                }
            }
            ("reclaim", "bh_per_slab_page") => self.bh_per_slab_page = int()?.min(4096) as u32,
            ("reclaim", "walk_skips_active") => self.walk_skips_active = boolean()?,
            ("reclaim", "objrmap_walk") => self.objrmap_walk = boolean()?,
            ("reclaim", "shm_writepage_io") => self.shm_writepage_io = boolean()?,
            ("reclaim", "clean_cache_pass") => self.clean_cache_pass = boolean()?,
            ("reclaim", "workingset") => self.workingset = boolean()?,
            ("reclaim", "pgfault_on_completion") => self.pgfault_on_completion = boolean()?,
            ("reclaim", "kswapd_classzone") => self.split26.kswapd_classzone = boolean()?,
            ("reclaim", "kswapd_return_order") => self.split26.kswapd_return_order = boolean()?,
            ("reclaim", "kswapd_reset_after_sleep") => self.split26.kswapd_reset_after_sleep = boolean()?,
            ("reclaim", "unreclaimable_balanced") => self.split26.unreclaimable_balanced = boolean()?,
            ("reclaim", "sleep_check_inverted") => self.split26.sleep_check_inverted = boolean()?,
            ("reclaim", "wmark_off_by_two") => self.split26.wmark_off_by_two = boolean()?,
            ("reclaim", "reclaim_compaction") => self.split26.reclaim_compaction = boolean()?,
            ("reclaim", "lumpy_stop_on_fail") => self.split26.lumpy_stop_on_fail = boolean()?,
            ("reclaim", "compaction_min_order") => self.split26.compaction_min_order = int()?.min(11) as u32,
            ("reclaim", "fault_locking") => {
                self.fault_locking = match word()?.as_str() {
                    "hold_across_io" => FaultLocking::HoldAcrossIo,
                    "retry" => FaultLocking::Retry,
                    "per_vma" => FaultLocking::PerVma,
                    w => return Err(format!("`reclaim.fault_locking` is one of hold_across_io, retry, per_vma; found `{w}`")),
                }
            }
            ("reclaim", "mmap_readahead") => {
                self.mmap_readahead = match word()?.as_str() {
                    "cluster" => MmapReadahead::Cluster,
                    "read_around" => MmapReadahead::ReadAround,
                    "sequential_or_read_around" => MmapReadahead::SequentialOrReadAround,
                    "read_around_async" => MmapReadahead::ReadAroundAsync,
                    w => return Err(format!("`reclaim.mmap_readahead` is one of cluster, read_around, sequential_or_read_around, read_around_async; found `{w}`")),
                }
            }
            ("reclaim", "swap_readahead") => {
                self.swap_readahead = match word()?.as_str() {
                    "none" => SwapReadahead::None,
                    "cluster_from_base" => SwapReadahead::ClusterFromBase,
                    "cluster_around" => SwapReadahead::ClusterAround,
                    "cluster" => SwapReadahead::Cluster,
                    "vma" => SwapReadahead::Vma,
                    w => return Err(format!("`reclaim.swap_readahead` is one of none, cluster_from_base, cluster_around, cluster, vma; found `{w}`")),
                }
            }
            ("reclaim", "rwsem") => {
                self.rwsem = match word()?.as_str() {
                    "fifo" => RwsemKind::Fifo,
                    "handoff" => RwsemKind::Handoff,
                    w => return Err(format!("`reclaim.rwsem` is one of fifo, handoff; found `{w}`")),
                }
            }
            ("reclaim", "quicklist") => {
                self.quicklist = match word()?.as_str() {
                    "none" => QuicklistRule::None,
                    "node_free_16" => QuicklistRule::NodeFree16,
                    "node_free_16_per_cpu" => QuicklistRule::NodeFree16PerCpu,
                    w => return Err(format!("`reclaim.quicklist` is one of none, node_free_16, node_free_16_per_cpu; found `{w}`")),
                }
            }
            _ => {
                let keys: &[&str] = if section == "vm" { VM_KEYS } else { RECLAIM_KEYS };
                let best = keys
                    .iter()
                    .map(|k| (strsim::jaro_winkler(k, key), *k))
                    .fold((0.0, ""), |a, b| if b.0 > a.0 { b } else { a });
                let hint = if best.0 > 0.8 { format!("; did you mean `{section}.{}`?", best.1) } else { String::new() };
                return Err(format!("unknown tunable `{section}.{key}`{hint} (known: {})", keys.join(", ")));
            }
        }
        Ok(())
    }
}

const VM_KEYS: &[&str] = &[
    "swappiness",
    "min_free_kbytes",
    "watermark_scale_factor",
    "dirty_ratio",
    "dirty_background_ratio",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
    "read_ahead_kb",
    "page_cluster",
    "vm_cache_scan_ratio",
    "vm_mapped_ratio",
    "vm_passes",
    "vm_lru_balance_ratio",
    "vm_anon_lru",
];
const RECLAIM_KEYS: &[&str] = &[
    "unevictable_lru",
    "mlock_half_physmem",
    "kswapd_failures",
    "pgdat_balanced_quarter",
    "kswapd_ignore_failure",
    "bounce_highmem_io",
    "irq",
    "bh_per_slab_page",
    "walk_skips_active",
    "objrmap_walk",
    "shm_writepage_io",
    "clean_cache_pass",
    "workingset",
    "pgfault_on_completion",
    "fault_locking",
    "mmap_readahead",
    "swap_readahead",
    "rwsem",
    "quicklist",
    "kswapd_classzone",
    "kswapd_return_order",
    "kswapd_reset_after_sleep",
    "unreclaimable_balanced",
    "sleep_check_inverted",
    "wmark_off_by_two",
    "reclaim_compaction",
    "lumpy_stop_on_fail",
    "compaction_min_order",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// What `vmlab profiles` shows for a mechanism is what `[reclaim]` accepts for it.
    #[test]
    fn every_shown_reclaim_value_can_be_set_back() {
        for p in all() {
            let v = serde_json::to_value(&p).expect("serializes");
            for key in RECLAIM_KEYS {
                let shown = v
                    .get(*key)
                    .or_else(|| v["split26"].get(*key))
                    .unwrap_or_else(|| panic!("{}: `{key}` not shown", p.name));
                let tv = match shown {
                    serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
                    serde_json::Value::Number(n) => toml::Value::Integer(n.as_i64().expect("integer")),
                    serde_json::Value::String(s) => toml::Value::String(s.clone()),
                    other => panic!("{}: `{key}` shown as {other}", p.name),
                };
                let mut q = p.clone();
                q.set("reclaim", key, &tv).unwrap_or_else(|e| panic!("{}: reclaim.{key} = {tv}: {e}", p.name));
            }
        }
    }
    #[test]
    fn overrides_apply_and_unknown_keys_suggest() {
        let mut p = find("linux-6.8").unwrap();
        p.set("vm", "swappiness", &toml::Value::Integer(100)).unwrap();
        assert_eq!(p.tunables.swappiness, 100);
        let e = p.set("vm", "swapiness", &toml::Value::Integer(1)).unwrap_err();
        assert!(e.contains("did you mean `vm.swappiness`"), "{e}");
        p.set("reclaim", "unevictable_lru", &toml::Value::Boolean(false)).unwrap();
        assert!(!p.unevictable_lru);
    }
}
