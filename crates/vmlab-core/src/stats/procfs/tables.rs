//! The name tables, one per release, in the order the release prints them. Sources:
//! `/proc/vmstat`: `vmstat_text[]` in `mm/vmstat.c` with the enums it mirrors
//! (`zone_stat_item`/`node_stat_item` in `include/linux/mmzone.h`, `vm_event_item` in
//! `include/linux/vm_event_item.h` or 2.6's `include/linux/vmstat.h`), for an x86-64 config
//! with NUMA, swap, compaction and THP; `/proc/meminfo`: `meminfo_proc_show` in
//! `fs/proc/meminfo.c` (2.6.28+) and `meminfo_read_proc` in `fs/proc/proc_misc.c` (2.4, 2.6.26);
//! `/proc/stat`: `show_stat` / `kstat_read_proc`. docs/notes/procfs.md cites each.

use super::Gauge::*;
use super::HighLine::*;
use super::VmItem::{self, One, PerZone};
use super::ZoneItem;
use super::{MeminfoLayout, ProcFiles, StatLayout, M, V};
use crate::stats::vmstat::Vm;

const A: V = V::Absent;
const fn e(v: Vm) -> V {
    V::Ev(v)
}
const fn g(x: super::Gauge) -> V {
    V::Gauge(x)
}

const NUMA_STATS: [VmItem; 6] = [
    One("numa_hit", A),
    One("numa_miss", A),
    One("numa_foreign", A),
    One("numa_interleave", A),
    One("numa_local", A),
    One("numa_other", A),
];

/// 6.8 `vmstat_text`: zone items, NUMA events, node items, writeback thresholds, VM events.
pub const VMSTAT_6_8: &[VmItem] = &[
    One("nr_free_pages", g(FreePages)),
    One("nr_zone_inactive_anon", g(Lru("Inactive(anon)"))),
    One("nr_zone_active_anon", g(Lru("Active(anon)"))),
    One("nr_zone_inactive_file", g(Lru("Inactive(file)"))),
    One("nr_zone_active_file", g(Lru("Active(file)"))),
    One("nr_zone_unevictable", g(Lru("Unevictable"))),
    One("nr_zone_write_pending", g(WritePending)),
    One("nr_mlock", g(Mlock)),
    One("nr_bounce", A),
    One("nr_zspages", A),
    One("nr_free_cma", A),
    NUMA_STATS[0],
    NUMA_STATS[1],
    NUMA_STATS[2],
    NUMA_STATS[3],
    NUMA_STATS[4],
    NUMA_STATS[5],
    One("nr_inactive_anon", g(Lru("Inactive(anon)"))),
    One("nr_active_anon", g(Lru("Active(anon)"))),
    One("nr_inactive_file", g(Lru("Inactive(file)"))),
    One("nr_active_file", g(Lru("Active(file)"))),
    One("nr_unevictable", g(Lru("Unevictable"))),
    One("nr_slab_reclaimable", A),
    One("nr_slab_unreclaimable", g(SlabUnreclaimable)),
    One("nr_isolated_anon", A),
    One("nr_isolated_file", A),
    One("workingset_nodes", A),
    One("workingset_refault_anon", e(Vm::WorkingsetRefaultAnon)),
    One("workingset_refault_file", e(Vm::WorkingsetRefaultFile)),
    One("workingset_activate_anon", e(Vm::WorkingsetActivateAnon)),
    One("workingset_activate_file", e(Vm::WorkingsetActivateFile)),
    One("workingset_restore_anon", e(Vm::WorkingsetRestoreAnon)),
    One("workingset_restore_file", e(Vm::WorkingsetRestoreFile)),
    One("workingset_nodereclaim", A),
    One("nr_anon_pages", g(AnonMapped)),
    One("nr_mapped", g(FileMapped)),
    One("nr_file_pages", g(FilePages)),
    One("nr_dirty", g(Dirty)),
    One("nr_writeback", g(Writeback)),
    One("nr_writeback_temp", A),
    One("nr_shmem", g(Shmem)),
    One("nr_shmem_hugepages", A),
    One("nr_shmem_pmdmapped", A),
    One("nr_file_hugepages", A),
    One("nr_file_pmdmapped", A),
    One("nr_anon_transparent_hugepages", A),
    One("nr_vmscan_write", e(Vm::NrVmscanWrite)),
    One("nr_vmscan_immediate_reclaim", e(Vm::NrVmscanImmediateReclaim)),
    One("nr_dirtied", e(Vm::NrDirtied)),
    One("nr_written", e(Vm::NrWritten)),
    One("nr_throttled_written", A),
    One("nr_kernel_misc_reclaimable", A),
    One("nr_foll_pin_acquired", A),
    One("nr_foll_pin_released", A),
    One("nr_kernel_stack", g(KernelStackKb)),
    One("nr_page_table_pages", g(PageTables)),
    One("nr_sec_page_table_pages", A),
    One("nr_swapcached", g(SwapCache)),
    One("pgpromote_success", A),
    One("pgpromote_candidate", A),
    One("nr_dirty_threshold", A),
    One("nr_dirty_background_threshold", A),
    One("pgpgin", e(Vm::Pgpgin)),
    One("pgpgout", e(Vm::Pgpgout)),
    One("pswpin", e(Vm::Pswpin)),
    One("pswpout", e(Vm::Pswpout)),
    PerZone("pgalloc", ZoneItem::Alloc),
    PerZone("allocstall", ZoneItem::Allocstall),
    PerZone("pgskip", ZoneItem::Absent),
    One("pgfree", e(Vm::Pgfree)),
    One("pgactivate", e(Vm::Pgactivate)),
    One("pgdeactivate", e(Vm::Pgdeactivate)),
    One("pglazyfree", A),
    One("pgfault", e(Vm::Pgfault)),
    One("pgmajfault", e(Vm::Pgmajfault)),
    One("pglazyfreed", A),
    One("pgrefill", e(Vm::Pgrefill)),
    One("pgreuse", e(Vm::Pgreuse)),
    One("pgsteal_kswapd", e(Vm::PgstealKswapd)),
    One("pgsteal_direct", e(Vm::PgstealDirect)),
    One("pgsteal_khugepaged", A),
    One("pgdemote_kswapd", A),
    One("pgdemote_direct", A),
    One("pgdemote_khugepaged", A),
    One("pgscan_kswapd", e(Vm::PgscanKswapd)),
    One("pgscan_direct", e(Vm::PgscanDirect)),
    One("pgscan_khugepaged", A),
    One("pgscan_direct_throttle", A),
    One("pgscan_anon", e(Vm::PgscanAnon)),
    One("pgscan_file", e(Vm::PgscanFile)),
    One("pgsteal_anon", e(Vm::PgstealAnon)),
    One("pgsteal_file", e(Vm::PgstealFile)),
    One("zone_reclaim_failed", A),
    One("pginodesteal", e(Vm::Pginodesteal)),
    One("slabs_scanned", e(Vm::SlabsScanned)),
    One("kswapd_inodesteal", e(Vm::KswapdInodesteal)),
    One("kswapd_low_wmark_hit_quickly", e(Vm::KswapdLowWmarkHitQuickly)),
    One("kswapd_high_wmark_hit_quickly", e(Vm::KswapdHighWmarkHitQuickly)),
    One("pageoutrun", e(Vm::Pageoutrun)),
    One("pgrotated", e(Vm::Pgrotated)),
    One("drop_pagecache", e(Vm::DropPagecache)),
    One("drop_slab", A),
    One("oom_kill", e(Vm::OomKill)),
    One("numa_pte_updates", A),
    One("numa_huge_pte_updates", A),
    One("numa_hint_faults", A),
    One("numa_hint_faults_local", A),
    One("numa_pages_migrated", A),
    One("pgmigrate_success", A),
    One("pgmigrate_fail", A),
    One("thp_migration_success", A),
    One("thp_migration_fail", A),
    One("thp_migration_split", A),
    One("compact_migrate_scanned", A),
    One("compact_free_scanned", A),
    One("compact_isolated", A),
    One("compact_stall", A),
    One("compact_fail", A),
    One("compact_success", A),
    One("compact_daemon_wake", A),
    One("compact_daemon_migrate_scanned", A),
    One("compact_daemon_free_scanned", A),
    One("htlb_buddy_alloc_success", A),
    One("htlb_buddy_alloc_fail", A),
    One("unevictable_pgs_culled", e(Vm::UnevictablePgsCulled)),
    One("unevictable_pgs_scanned", A),
    One("unevictable_pgs_rescued", e(Vm::UnevictablePgsRescued)),
    One("unevictable_pgs_mlocked", e(Vm::UnevictablePgsMlocked)),
    One("unevictable_pgs_munlocked", e(Vm::UnevictablePgsMunlocked)),
    One("unevictable_pgs_cleared", A),
    One("unevictable_pgs_stranded", A),
    One("thp_fault_alloc", A),
    One("thp_fault_fallback", A),
    One("thp_fault_fallback_charge", A),
    One("thp_collapse_alloc", A),
    One("thp_collapse_alloc_failed", A),
    One("thp_file_alloc", A),
    One("thp_file_fallback", A),
    One("thp_file_fallback_charge", A),
    One("thp_file_mapped", A),
    One("thp_split_page", A),
    One("thp_split_page_failed", A),
    One("thp_deferred_split_page", A),
    One("thp_split_pmd", A),
    One("thp_scan_exceed_none_pte", A),
    One("thp_scan_exceed_swap_pte", A),
    One("thp_scan_exceed_share_pte", A),
    One("thp_split_pud", A),
    One("thp_zero_page_alloc", A),
    One("thp_zero_page_alloc_failed", A),
    One("thp_swpout", A),
    One("thp_swpout_fallback", A),
    One("balloon_inflate", A),
    One("balloon_deflate", A),
    One("balloon_migrate", A),
    One("swap_ra", e(Vm::SwapRa)),
    One("swap_ra_hit", e(Vm::SwapRaHit)),
    One("ksm_swpin_copy", A),
    One("cow_ksm", A),
    One("zswpin", A),
    One("zswpout", A),
    One("zswpwb", A),
    One("direct_map_level2_splits", A),
    One("direct_map_level3_splits", A),
    // CONFIG_PER_VMA_LOCK_STATS
    One("vma_lock_success", e(Vm::VmaLockSuccess)),
    One("vma_lock_abort", e(Vm::VmaLockAbort)),
    One("vma_lock_retry", e(Vm::VmaLockRetry)),
    One("vma_lock_miss", A),
    // NR_UNSTABLE_NFS went in 5.8; vmstat_show still prints it, as 0, last.
    One("nr_unstable", V::Zero),
];

/// 2.6.36 `vmstat_text`: `zone_stat_item` (with NUMA's), then `vm_event_item`.
pub const VMSTAT_2_6_36: &[VmItem] = &[
    One("nr_free_pages", g(FreePages)),
    One("nr_inactive_anon", g(Lru("Inactive(anon)"))),
    One("nr_active_anon", g(Lru("Active(anon)"))),
    One("nr_inactive_file", g(Lru("Inactive(file)"))),
    One("nr_active_file", g(Lru("Active(file)"))),
    One("nr_unevictable", g(Lru("Unevictable"))),
    One("nr_mlock", g(Mlock)),
    One("nr_anon_pages", g(AnonMapped)),
    One("nr_mapped", g(FileMapped)),
    One("nr_file_pages", g(FilePages)),
    One("nr_dirty", g(Dirty)),
    One("nr_writeback", g(Writeback)),
    One("nr_slab_reclaimable", A),
    One("nr_slab_unreclaimable", g(SlabUnreclaimable)),
    One("nr_page_table_pages", g(PageTables)),
    One("nr_kernel_stack", g(KernelStackPages)),
    One("nr_unstable", A),
    One("nr_bounce", A),
    One("nr_vmscan_write", e(Vm::NrVmscanWrite)),
    One("nr_writeback_temp", A),
    One("nr_isolated_anon", A),
    One("nr_isolated_file", A),
    One("nr_shmem", g(Shmem)),
    NUMA_STATS[0],
    NUMA_STATS[1],
    NUMA_STATS[2],
    NUMA_STATS[3],
    NUMA_STATS[4],
    NUMA_STATS[5],
    One("pgpgin", e(Vm::Pgpgin)),
    One("pgpgout", e(Vm::Pgpgout)),
    One("pswpin", e(Vm::Pswpin)),
    One("pswpout", e(Vm::Pswpout)),
    PerZone("pgalloc", ZoneItem::Alloc),
    One("pgfree", e(Vm::Pgfree)),
    One("pgactivate", e(Vm::Pgactivate)),
    One("pgdeactivate", e(Vm::Pgdeactivate)),
    One("pgfault", e(Vm::Pgfault)),
    One("pgmajfault", e(Vm::Pgmajfault)),
    PerZone("pgrefill", ZoneItem::Refill),
    PerZone("pgsteal", ZoneItem::Steal),
    PerZone("pgscan_kswapd", ZoneItem::ScanKswapd),
    PerZone("pgscan_direct", ZoneItem::ScanDirect),
    One("zone_reclaim_failed", A),
    One("pginodesteal", e(Vm::Pginodesteal)),
    One("slabs_scanned", e(Vm::SlabsScanned)),
    One("kswapd_steal", e(Vm::PgstealKswapd)),
    One("kswapd_inodesteal", e(Vm::KswapdInodesteal)),
    One("kswapd_low_wmark_hit_quickly", e(Vm::KswapdLowWmarkHitQuickly)),
    One("kswapd_high_wmark_hit_quickly", e(Vm::KswapdHighWmarkHitQuickly)),
    One("kswapd_skip_congestion_wait", e(Vm::KswapdSkipCongestionWait)),
    One("pageoutrun", e(Vm::Pageoutrun)),
    One("allocstall", e(Vm::Allocstall)),
    One("pgrotated", e(Vm::Pgrotated)),
    One("compact_blocks_moved", e(Vm::CompactBlocksMoved)),
    One("compact_pages_moved", e(Vm::CompactPagesMoved)),
    One("compact_pagemigrate_failed", e(Vm::CompactPagemigrateFailed)),
    One("compact_stall", e(Vm::CompactStall)),
    One("compact_fail", e(Vm::CompactFail)),
    One("compact_success", e(Vm::CompactSuccess)),
    One("htlb_buddy_alloc_success", A),
    One("htlb_buddy_alloc_fail", A),
    One("unevictable_pgs_culled", e(Vm::UnevictablePgsCulled)),
    One("unevictable_pgs_scanned", A),
    One("unevictable_pgs_rescued", e(Vm::UnevictablePgsRescued)),
    One("unevictable_pgs_mlocked", e(Vm::UnevictablePgsMlocked)),
    One("unevictable_pgs_munlocked", e(Vm::UnevictablePgsMunlocked)),
    One("unevictable_pgs_cleared", A),
    One("unevictable_pgs_stranded", A),
    One("unevictable_pgs_mlockfreed", A),
];

/// 2.6.38: 2.6.36's list with `nr_dirtied`/`nr_written` (2.6.37) after `nr_shmem` and THP's
/// `nr_anon_transparent_hugepages` after the NUMA items.
pub const VMSTAT_2_6_38: &[VmItem] = &{
    let mut t = [One("", A); VMSTAT_2_6_36.len() + 3];
    let mut i = 0;
    let mut j = 0;
    while i < VMSTAT_2_6_36.len() {
        t[j] = VMSTAT_2_6_36[i];
        j += 1;
        if let One(n, _) = VMSTAT_2_6_36[i] {
            if const_eq(n, "nr_shmem") {
                t[j] = One("nr_dirtied", e(Vm::NrDirtied));
                t[j + 1] = One("nr_written", e(Vm::NrWritten));
                j += 2;
            } else if const_eq(n, "numa_other") {
                t[j] = One("nr_anon_transparent_hugepages", A);
                j += 1;
            }
        }
        i += 1;
    }
    t
};

const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// 2.6.26 `vmstat_text`: one active/inactive pair (the split LRU came in 2.6.28).
pub const VMSTAT_2_6_26: &[VmItem] = &[
    One("nr_free_pages", g(FreePages)),
    One("nr_inactive", g(Lru("Inactive"))),
    One("nr_active", g(Lru("Active"))),
    One("nr_anon_pages", g(AnonMapped)),
    One("nr_mapped", g(FileMapped)),
    One("nr_file_pages", g(FilePages)),
    One("nr_dirty", g(Dirty)),
    One("nr_writeback", g(Writeback)),
    One("nr_slab_reclaimable", A),
    One("nr_slab_unreclaimable", g(SlabUnreclaimable)),
    One("nr_page_table_pages", g(PageTables)),
    One("nr_unstable", A),
    One("nr_bounce", A),
    One("nr_vmscan_write", e(Vm::NrVmscanWrite)),
    One("nr_writeback_temp", A),
    NUMA_STATS[0],
    NUMA_STATS[1],
    NUMA_STATS[2],
    NUMA_STATS[3],
    NUMA_STATS[4],
    NUMA_STATS[5],
    One("pgpgin", e(Vm::Pgpgin)),
    One("pgpgout", e(Vm::Pgpgout)),
    One("pswpin", e(Vm::Pswpin)),
    One("pswpout", e(Vm::Pswpout)),
    PerZone("pgalloc", ZoneItem::Alloc),
    One("pgfree", e(Vm::Pgfree)),
    One("pgactivate", e(Vm::Pgactivate)),
    One("pgdeactivate", e(Vm::Pgdeactivate)),
    One("pgfault", e(Vm::Pgfault)),
    One("pgmajfault", e(Vm::Pgmajfault)),
    PerZone("pgrefill", ZoneItem::Refill),
    PerZone("pgsteal", ZoneItem::Steal),
    PerZone("pgscan_kswapd", ZoneItem::ScanKswapd),
    PerZone("pgscan_direct", ZoneItem::ScanDirect),
    One("pginodesteal", e(Vm::Pginodesteal)),
    One("slabs_scanned", e(Vm::SlabsScanned)),
    One("kswapd_steal", e(Vm::PgstealKswapd)),
    One("kswapd_inodesteal", e(Vm::KswapdInodesteal)),
    One("pageoutrun", e(Vm::Pageoutrun)),
    One("allocstall", e(Vm::Allocstall)),
    One("pgrotated", e(Vm::Pgrotated)),
    One("htlb_buddy_alloc_success", A),
    One("htlb_buddy_alloc_fail", A),
];

/// 6.8 `meminfo_proc_show`.
const MEMINFO_6_8: &[(&str, M)] = &[
    ("MemTotal", M::MemTotal),
    ("MemFree", M::MemFree),
    ("MemAvailable", M::MemAvailable),
    ("Buffers", M::Buffers),
    ("Cached", M::Cached),
    ("SwapCached", M::SwapCached),
    ("Active", M::Active),
    ("Inactive", M::Inactive),
    ("Active(anon)", M::List("Active(anon)")),
    ("Inactive(anon)", M::List("Inactive(anon)")),
    ("Active(file)", M::List("Active(file)")),
    ("Inactive(file)", M::List("Inactive(file)")),
    ("Unevictable", M::Unevictable),
    ("Mlocked", M::Mlocked),
    ("HighTotal", M::High(HighTotal)),
    ("HighFree", M::High(HighFree)),
    ("LowTotal", M::High(LowTotal)),
    ("LowFree", M::High(LowFree)),
    ("SwapTotal", M::SwapTotal),
    ("SwapFree", M::SwapFree),
    ("Zswap", M::Absent),
    ("Zswapped", M::Absent),
    ("Dirty", M::Dirty),
    ("Writeback", M::Writeback),
    ("AnonPages", M::AnonPages),
    ("Mapped", M::Mapped),
    ("Shmem", M::Shmem),
    ("KReclaimable", M::KReclaimable),
    ("Slab", M::Slab),
    ("SReclaimable", M::SReclaimable),
    ("SUnreclaim", M::SUnreclaim),
    ("KernelStack", M::KernelStack),
    ("PageTables", M::PageTables),
    ("SecPageTables", M::Absent),
    ("NFS_Unstable", M::Absent),
    ("Bounce", M::Absent),
    ("WritebackTmp", M::Absent),
    ("CommitLimit", M::CommitLimit),
    ("Committed_AS", M::CommittedAs),
    ("VmallocTotal", M::Absent),
    ("VmallocUsed", M::Absent),
    ("VmallocChunk", M::Absent),
    ("Percpu", M::Absent),
    ("HardwareCorrupted", M::Absent),
    ("AnonHugePages", M::Absent),
    ("HugePages_Total", M::Absent),
];

/// 2.6.36 `meminfo_proc_show` (2.6.38 adds AnonHugePages, which vmlab does not model).
const MEMINFO_2_6_36: &[(&str, M)] = &[
    ("MemTotal", M::MemTotal),
    ("MemFree", M::MemFree),
    ("Buffers", M::Buffers),
    ("Cached", M::Cached),
    ("SwapCached", M::SwapCached),
    ("Active", M::Active),
    ("Inactive", M::Inactive),
    ("Active(anon)", M::List("Active(anon)")),
    ("Inactive(anon)", M::List("Inactive(anon)")),
    ("Active(file)", M::List("Active(file)")),
    ("Inactive(file)", M::List("Inactive(file)")),
    ("Unevictable", M::Unevictable),
    ("Mlocked", M::Mlocked),
    ("HighTotal", M::High(HighTotal)),
    ("HighFree", M::High(HighFree)),
    ("LowTotal", M::High(LowTotal)),
    ("LowFree", M::High(LowFree)),
    ("SwapTotal", M::SwapTotal),
    ("SwapFree", M::SwapFree),
    ("Dirty", M::Dirty),
    ("Writeback", M::Writeback),
    ("AnonPages", M::AnonPages),
    ("Mapped", M::Mapped),
    ("Shmem", M::Shmem),
    ("Slab", M::Slab),
    ("SReclaimable", M::SReclaimable),
    ("SUnreclaim", M::SUnreclaim),
    ("KernelStack", M::KernelStack),
    ("PageTables", M::PageTables),
    ("Quicklists", M::Quicklists),
    ("NFS_Unstable", M::Absent),
    ("Bounce", M::Absent),
    ("WritebackTmp", M::Absent),
    ("CommitLimit", M::CommitLimit),
    ("Committed_AS", M::CommittedAs),
    ("VmallocTotal", M::Absent),
    ("HugePages_Total", M::Absent),
];

/// 2.6.26 `meminfo_read_proc` (fs/proc/proc_misc.c): one Active/Inactive pair, 14-wide labels.
const MEMINFO_2_6_26: &[(&str, M)] = &[
    ("MemTotal", M::MemTotal),
    ("MemFree", M::MemFree),
    ("Buffers", M::Buffers),
    ("Cached", M::Cached),
    ("SwapCached", M::SwapCached),
    ("Active", M::List("Active")),
    ("Inactive", M::List("Inactive")),
    ("HighTotal", M::High(HighTotal)),
    ("HighFree", M::High(HighFree)),
    ("LowTotal", M::High(LowTotal)),
    ("LowFree", M::High(LowFree)),
    ("SwapTotal", M::SwapTotal),
    ("SwapFree", M::SwapFree),
    ("Dirty", M::Dirty),
    ("Writeback", M::Writeback),
    ("AnonPages", M::AnonPages),
    ("Mapped", M::Mapped),
    ("Slab", M::Slab),
    ("SReclaimable", M::SReclaimable),
    ("SUnreclaim", M::SUnreclaim),
    ("PageTables", M::PageTables),
    ("Quicklists", M::Quicklists),
    ("NFS_Unstable", M::Absent),
    ("Bounce", M::Absent),
    ("WritebackTmp", M::Absent),
    ("CommitLimit", M::CommitLimit),
    ("Committed_AS", M::CommittedAs),
    ("VmallocTotal", M::Absent),
    ("HugePages_Total", M::Absent),
];

/// 2.4.9 `meminfo_read_proc`: Rik van Riel's three inactive figures.
const MEMINFO_2_4_9: &[(&str, M)] = &[
    ("MemTotal", M::MemTotal),
    ("MemFree", M::MemFree),
    ("MemShared", M::Zero),
    ("Buffers", M::Buffers),
    ("Cached", M::Cached),
    ("SwapCached", M::SwapCached),
    ("Active", M::List("Active")),
    ("Inact_dirty", M::List("Inact_dirty")),
    ("Inact_clean", M::List("Inact_clean")),
    ("Inact_target", M::InactTarget),
    ("HighTotal", M::HighAlways(HighTotal)),
    ("HighFree", M::HighAlways(HighFree)),
    ("LowTotal", M::HighAlways(LowTotal)),
    ("LowFree", M::HighAlways(LowFree)),
    ("SwapTotal", M::SwapTotal),
    ("SwapFree", M::SwapFree),
];

/// 2.4.10+ (Andrea Arcangeli's VM, as 2.4.23 prints it): Active and Inactive.
const MEMINFO_2_4_23: &[(&str, M)] = &[
    ("MemTotal", M::MemTotal),
    ("MemFree", M::MemFree),
    ("MemShared", M::Zero),
    ("Buffers", M::Buffers),
    ("Cached", M::Cached),
    ("SwapCached", M::SwapCached),
    ("Active", M::List("Active")),
    ("Inactive", M::List("Inactive")),
    ("HighTotal", M::HighAlways(HighTotal)),
    ("HighFree", M::HighAlways(HighFree)),
    ("LowTotal", M::HighAlways(LowTotal)),
    ("LowFree", M::HighAlways(LowFree)),
    ("SwapTotal", M::SwapTotal),
    ("SwapFree", M::SwapFree),
];

const STAT_2_4: StatLayout = StatLayout { cpu_fields: 4, paging_lines: true, procs_lines: false };

pub const LINUX_2_4_9: ProcFiles = ProcFiles {
    release: "2.4.9",
    vmstat: None,
    meminfo: MeminfoLayout { label_width: 14, bytes_table: true, lines: MEMINFO_2_4_9 },
    stat: STAT_2_4,
};

pub const LINUX_2_4_23: ProcFiles = ProcFiles {
    release: "2.4.23",
    vmstat: None,
    meminfo: MeminfoLayout { label_width: 14, bytes_table: true, lines: MEMINFO_2_4_23 },
    stat: STAT_2_4,
};

pub const LINUX_2_6_26: ProcFiles = ProcFiles {
    release: "2.6.26",
    vmstat: Some(VMSTAT_2_6_26),
    meminfo: MeminfoLayout { label_width: 14, bytes_table: false, lines: MEMINFO_2_6_26 },
    stat: StatLayout { cpu_fields: 9, paging_lines: false, procs_lines: true },
};

pub const LINUX_2_6_36: ProcFiles = ProcFiles {
    release: "2.6.36",
    vmstat: Some(VMSTAT_2_6_36),
    meminfo: MeminfoLayout { label_width: 16, bytes_table: false, lines: MEMINFO_2_6_36 },
    stat: StatLayout { cpu_fields: 10, paging_lines: false, procs_lines: true },
};

pub const LINUX_2_6_38: ProcFiles = ProcFiles {
    release: "2.6.38",
    vmstat: Some(VMSTAT_2_6_38),
    meminfo: MeminfoLayout { label_width: 16, bytes_table: false, lines: MEMINFO_2_6_36 },
    stat: StatLayout { cpu_fields: 10, paging_lines: false, procs_lines: true },
};

pub const LINUX_6_8: ProcFiles = ProcFiles {
    release: "6.8",
    vmstat: Some(VMSTAT_6_8),
    meminfo: MeminfoLayout { label_width: 16, bytes_table: false, lines: MEMINFO_6_8 },
    stat: StatLayout { cpu_fields: 10, paging_lines: false, procs_lines: true },
};
