//! Nodes (`pg_data_t`), zones and lruvecs: the `include/linux/mmzone.h` of vmlab.

use crate::mm_types::List;
use serde::Serialize;

pub const MAX_ORDER: usize = 11; // orders 0..=10
pub const PAGEBLOCK_ORDER: u32 = 9;
/// Free lists per order: the three `Mt` types and MIGRATE_RESERVE.
pub const MIGRATE_TYPES: usize = 4;
/// MIGRATE_RESERVE (2.6.24–4.3): the pageblocks at a zone's start that `min_free_kbytes`
/// covers, given out only when every other list is empty (`Profile::migrate_reserve`).
pub const MIGRATE_RESERVE: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum ZoneType {
    Dma = 0,
    Dma32 = 1,
    Normal = 2,
    HighMem = 3,
    Movable = 4,
}

impl ZoneType {
    pub fn name(self) -> &'static str {
        match self {
            ZoneType::Dma => "DMA",
            ZoneType::Dma32 => "DMA32",
            ZoneType::Normal => "Normal",
            ZoneType::HighMem => "HighMem",
            ZoneType::Movable => "Movable",
        }
    }
}

/// Migrate types of the free lists (grouping pages by mobility).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mt {
    Unmovable = 0,
    Movable = 1,
    Reclaimable = 2,
}

/// LRU list indices. The split-LRU engines use the first five as the kernel does; the 2.4
/// engines give the slots their own meaning (see their modules).
pub const LRU_INACTIVE_ANON: usize = 0;
pub const LRU_ACTIVE_ANON: usize = 1;
pub const LRU_INACTIVE_FILE: usize = 2;
pub const LRU_ACTIVE_FILE: usize = 3;
pub const LRU_UNEVICTABLE: usize = 4;
pub const NR_LRU_LISTS: usize = 5;
/// Flag value for "on no LRU list".
pub const LRU_NONE: u8 = 0x7;
/// Flag value (with PG_lru clear) for "waiting in a per-CPU LRU-add pagevec" (`vmscan::swap`).
pub const LRU_PVEC: u8 = 0x6;

#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    pub lists: [List; NR_LRU_LISTS],
    /// get_scan_count cost model (6.8): anon/file reclaim cost, decayed.
    pub anon_cost: u64,
    pub file_cost: u64,
    /// Workingset: evictions counter (nonresident_age) and refaults at the last reclaim cycle.
    pub nonresident_age: u64,
    pub refaults: [u64; 2],
    pub last_refaults: [u64; 2],
    /// With memory cgroups, what `lruvec_page_state` reads: the list sizes (with descendants')
    /// and WORKINGSET_ACTIVATE as the last rstat flush left them (`workingset::flush_stats`).
    pub flushed_lru: [u64; 4],
    pub flushed_refaults: [u64; 2],
}

impl Lruvec {
    pub fn size(&self, l: usize) -> u64 {
        self.lists[l].len
    }
}

/// Per-CPU page lists of one zone (`struct per_cpu_pages`): one list per PCP migrate type
/// (indexed by `Mt`) when the profile has them (2.6.24+ `pcp->lists[]`), else only `lists[0]`.
#[derive(Clone, Debug, Default)]
pub struct Pcp {
    pub lists: [List; 3],
    pub high: u64,
    pub batch: u64,
}

impl Pcp {
    /// `pcp->count`: pages on all the lists.
    pub fn count(&self) -> u64 {
        self.lists.iter().map(|l| l.len).sum()
    }
}

pub struct Zone {
    pub id: usize,
    pub kind: ZoneType,
    pub node: usize,
    /// The zone's frames: `start_pfn..end_pfn` index the per-frame arrays, packed zone after zone.
    pub start_pfn: u32,
    pub end_pfn: u32,
    /// The kernel's `zone_start_pfn`: where the machine's memory map puts the zone's first frame
    /// (`MachineConfig::zone_start_pfns`). Buddies, pageblocks and lumpy reclaim's blocks align
    /// on it (`Zone::phys`); nothing else sees the hole before it.
    pub phys_start_pfn: u32,
    pub present: u64,
    pub managed: u64,
    /// Pages of the zone the boot memmap took (`bootmem.rs`): out of `managed`, but still in
    /// 2.6.3x `present_pages`, which the watermarks and reserves are computed from.
    pub bootmem: u64,
    pub free_area: [[List; MIGRATE_TYPES]; MAX_ORDER],
    /// Free blocks per order (all migrate types).
    pub nr_free: [u64; MAX_ORDER],
    /// NR_FREE_PAGES: pages in the buddy free lists (not on pcp lists).
    pub free_pages: u64,
    /// WMARK_MIN, WMARK_LOW, WMARK_HIGH.
    pub wmark: [u64; 3],
    pub watermark_boost: u64,
    /// lowmem_reserve[classzone]: pages to keep when the allocation could have used a higher zone.
    pub lowmem_reserve: Vec<u64>,
    pub pcp: Vec<Pcp>,
    /// Per-zone lruvec (the engines whose lists are per zone use it; 2.4.9 keeps inactive_clean here).
    pub lruvec: Lruvec,
    /// Pages of this zone on each LRU list (NR_ZONE_*_LRU), whatever lruvec holds them.
    pub lru_pages: [u64; NR_LRU_LISTS],
    /// Reclaim events of this zone (2.6's per-zone `pgscan_kswapd_normal` and kin).
    pub ev: ZoneEvents,
}

/// The reclaim events 2.6 counts per zone (`__count_zone_vm_events`); the engines that scan
/// zone by zone keep them.
#[derive(Clone, Copy, Debug, Default)]
pub struct ZoneEvents {
    pub pgrefill: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
}

impl Zone {
    /// The pages `setup_per_zone_wmarks` and `setup_per_zone_lowmem_reserve` count: 2.6.3x's
    /// `present_pages`, which reserving the memmap from bootmem does not reduce.
    pub fn wmark_pages(&self) -> u64 {
        self.managed + self.bootmem
    }

    /// The memory map's pfn of frame `pfn` of this zone.
    #[inline(always)]
    pub fn phys(&self, pfn: u32) -> u32 {
        pfn - self.start_pfn + self.phys_start_pfn
    }

    pub fn spans(&self, pfn: u32) -> bool {
        pfn >= self.start_pfn && pfn < self.end_pfn
    }
    pub fn min_wmark(&self) -> u64 {
        self.wmark[0] + self.watermark_boost
    }
    pub fn low_wmark(&self) -> u64 {
        self.wmark[1] + self.watermark_boost
    }
    pub fn high_wmark(&self) -> u64 {
        self.wmark[2] + self.watermark_boost
    }
    pub fn pcp_pages(&self) -> u64 {
        self.pcp.iter().map(|p| p.count()).sum()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KswapdPhase {
    /// Asleep on its waitqueue until `wakeup_kswapd`.
    #[default]
    Sleeping,
    /// The HZ/10 nap of kswapd_try_to_sleep.
    Napping,
    /// Inside balance_pgdat.
    Balancing,
    /// Between balances: about to try to sleep.
    TrySleep,
}

/// kswapd's view of a node.
#[derive(Clone, Debug, Default)]
pub struct KswapdState {
    pub task: usize,
    pub phase: KswapdPhase,
    /// Balance in progress: order being reclaimed for, highest zone, priority, pages reclaimed.
    pub bal_order: u32,
    pub bal_classzone: usize,
    pub bal_priority: i32,
    pub bal_reclaimed: u64,
    /// Order the last balance ended at (the sleep checks use it).
    pub reclaim_order: u32,
    /// Order and highest zone requested by wakeups since kswapd last read them.
    pub max_order: u32,
    pub classzone_idx: usize,
    pub failures: u32,
    /// kswapd is sleeping on its waitqueue (a wakeup makes it runnable).
    pub sleeping: bool,
    /// It is in the short HZ/10 nap of kswapd_try_to_sleep.
    pub napping: bool,
    pub woken_during_nap: bool,
    /// The last kswapd tracepoint fired was `mm_vmscan_kswapd_sleep` (only kept while tracing).
    pub traced_asleep: bool,
}

pub struct Node {
    pub id: usize,
    /// Zone ids, lowest first.
    pub zones: Vec<usize>,
    pub cpus: Vec<u32>,
    pub lruvec: Lruvec,
    pub kswapd: KswapdState,
    /// `reclaim_wait` and the writeback throttle's counters (`vmscan::throttle`).
    pub reclaim_wait: ReclaimWait,
    pub start_pfn: u32,
    pub end_pfn: u32,
}

/// `VMSCAN_THROTTLE_*`: a node's `reclaim_wait` queues. vmlab throttles for writeback only (the
/// NOPROGRESS, ISOLATED and CONGESTED throttles are not modelled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrottleReason {
    Writeback,
}

impl ThrottleReason {
    /// `show_throttle_flags`.
    pub fn name(self) -> &'static str {
        match self {
            ThrottleReason::Writeback => "VMSCAN_THROTTLE_WRITEBACK",
        }
    }
}

/// A task in `reclaim_throttle` (`vmscan::throttle`).
#[derive(Clone, Copy, Debug)]
pub struct ThrottleWaiter {
    pub task: usize,
    pub reason: ThrottleReason,
    /// `prepare_to_wait`: wakes from this time on reach it.
    pub since: u64,
    /// `schedule_timeout` expires.
    pub until: u64,
    /// When a `wake_up` took it off the queue (`autoremove_wake_function`). It stays in the
    /// list, and in `nr_writeback_throttled`, until the task runs again (`finish_wait`).
    pub woken_at: Option<u64>,
    /// Its memory stall is still open (not woken, timeout not yet passed).
    pub stalled: bool,
}

/// A node's `reclaim_wait` queues and the writeback throttle's counters (`pglist_data`).
#[derive(Clone, Debug, Default)]
pub struct ReclaimWait {
    pub waiters: Vec<ThrottleWaiter>,
    /// `nr_writeback_throttled`.
    pub nr_writeback_throttled: u32,
    /// `nr_reclaim_start`: NR_THROTTLED_WRITTEN when the first of the current waiters throttled.
    pub nr_reclaim_start: u64,
    /// NR_THROTTLED_WRITTEN: pages whose writeback ended while a reclaimer was throttled.
    pub throttled_written: u64,
}

impl ReclaimWait {
    pub fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }
}
