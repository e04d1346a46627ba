//! Kernel profiles ("eras"): each is a row of mechanism choices plus default tunables. No code
//! outside this table looks at a profile's name; mechanisms read the fields. Any field can be
//! overridden from a scenario's `[vm]`/`[reclaim]` tables or with `--set vm.NAME=V`.

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
    /// 2.6.23–2.6.30: read-around, `ra_pages` centred on the fault, nothing read asynchronously:
    /// every window is a fault that waits.
    ReadAround,
    /// 2.6.31–2.6.39: a fault on the page after the previous one runs sequential (on-demand)
    /// readahead, which keeps the next window in flight; others read around.
    SequentialOrReadAround,
    /// 3.0+: read-around marks its last quarter PG_readahead, so the next window starts early.
    ReadAroundAsync,
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
    NodeFree16,
    /// 2.6.27+: node_free/16/cpus_on_node.
    NodeFree16PerCpu,
}

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
    /// 2.4.23aa2: objrmap unmapping of shared pages during the page-table walk.
    pub objrmap_walk: bool,
    /// 2.4.23aa2: shm_writepage starts the swap I/O immediately.
    pub shm_writepage_io: bool,
    /// 2.4.23aa2: clean-cache pass before writepage work.
    pub clean_cache_pass: bool,
    /// Refault (workingset) detection (3.15+).
    pub workingset: bool,
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
    rwsem: RwsemKind::Handoff,
    quicklist: QuicklistRule::None,
    mlock_half_physmem: false,
    kswapd_failures: true,
    pgdat_balanced_quarter: false,
    kswapd_ignore_failure: false,
    objrmap_walk: false,
    shm_writepage_io: true,
    clean_cache_pass: false,
    workingset: true,
    tunables: BASE_TUNABLES,
};

/// 2.6.26 (seeds 003 and 004 "before"): quicklists sized node_free/16 per CPU, mmap_sem held
/// across fault I/O, the 2.6 FIFO rwsem; no split LRU yet (it came with the unevictable list in
/// 2.6.28). init_per_zone_pages_min caps min_free_kbytes at 64 MiB.
const LINUX_2_6_26: Profile = Profile {
    name: "linux-2.6.26",
    summary: "no split LRU yet, quicklists node_free/16 per CPU, mmap_sem held across fault I/O, FIFO rwsem",
    engine: Engine::Modern,
    unevictable_lru: false,
    wmark: WmarkRule::Linux2636,
    high_order_check: HighOrderCheck::SubtractLowerOrders,
    fault_locking: FaultLocking::HoldAcrossIo,
    mmap_readahead: MmapReadahead::ReadAround,
    rwsem: RwsemKind::Fifo,
    quicklist: QuicklistRule::NodeFree16,
    mlock_half_physmem: false,
    kswapd_failures: false,
    pgdat_balanced_quarter: false,
    kswapd_ignore_failure: false,
    objrmap_walk: false,
    shm_writepage_io: true,
    clean_cache_pass: false,
    workingset: false,
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

/// 2.6.38 (seed 004 "after"): FAULT_FLAG_ALLOW_RETRY drops mmap_sem while a fault waits for
/// the page. Its reclaim side (seed 001) is refined separately.
const LINUX_2_6_38: Profile = Profile {
    name: "linux-2.6.38",
    summary: "split LRU + unevictable list, FAULT_FLAG_ALLOW_RETRY (fault drops mmap_sem for I/O), FIFO rwsem",
    engine: Engine::Modern,
    unevictable_lru: true,
    wmark: WmarkRule::Linux2636,
    high_order_check: HighOrderCheck::SubtractLowerOrders,
    fault_locking: FaultLocking::Retry,
    mmap_readahead: MmapReadahead::SequentialOrReadAround,
    rwsem: RwsemKind::Fifo,
    quicklist: QuicklistRule::None,
    mlock_half_physmem: false,
    kswapd_failures: false,
    pgdat_balanced_quarter: false,
    kswapd_ignore_failure: false,
    objrmap_walk: false,
    shm_writepage_io: true,
    clean_cache_pass: false,
    workingset: false,
    tunables: BASE_TUNABLES,
};

/// The profile table. Adding an era means adding a row here (and, if it needs a new
/// mechanism, the mechanism behind one of the enums above).
pub fn all() -> Vec<Profile> {
    vec![LINUX_2_6_26, LINUX_2_6_27, LINUX_2_6_38, MODERN]
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
                toml::Value::String(s) => s.parse::<u64>().map_err(|_| format!("`{section}.{key}` expects a non-negative integer, found \"{s}\"")),
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
            ("reclaim", "unevictable_lru") => self.unevictable_lru = boolean()?,
            ("reclaim", "mlock_half_physmem") => self.mlock_half_physmem = boolean()?,
            ("reclaim", "kswapd_failures") => self.kswapd_failures = boolean()?,
            ("reclaim", "pgdat_balanced_quarter") => self.pgdat_balanced_quarter = boolean()?,
            ("reclaim", "kswapd_ignore_failure") => self.kswapd_ignore_failure = boolean()?,
            ("reclaim", "objrmap_walk") => self.objrmap_walk = boolean()?,
            ("reclaim", "shm_writepage_io") => self.shm_writepage_io = boolean()?,
            ("reclaim", "clean_cache_pass") => self.clean_cache_pass = boolean()?,
            ("reclaim", "workingset") => self.workingset = boolean()?,
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
                    "read_around" => MmapReadahead::ReadAround,
                    "sequential_or_read_around" => MmapReadahead::SequentialOrReadAround,
                    "read_around_async" => MmapReadahead::ReadAroundAsync,
                    w => return Err(format!("`reclaim.mmap_readahead` is one of read_around, sequential_or_read_around, read_around_async; found `{w}`")),
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
    "swappiness", "min_free_kbytes", "watermark_scale_factor", "dirty_ratio", "dirty_background_ratio",
    "dirty_expire_centisecs", "dirty_writeback_centisecs", "read_ahead_kb", "page_cluster",
    "vm_cache_scan_ratio", "vm_mapped_ratio", "vm_passes", "vm_lru_balance_ratio",
];
const RECLAIM_KEYS: &[&str] = &[
    "unevictable_lru", "mlock_half_physmem", "kswapd_failures", "pgdat_balanced_quarter",
    "kswapd_ignore_failure", "objrmap_walk", "shm_writepage_io", "clean_cache_pass", "workingset",
    "fault_locking", "mmap_readahead", "rwsem", "quicklist",
];

#[cfg(test)]
mod tests {
    use super::*;
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
