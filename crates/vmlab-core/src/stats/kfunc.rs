//! Kernel functions that simulated kernel CPU time is charged to: the flat kernel profile.
//! Names are the kernel's, so the profile reads like `readprofile`/gprof output of the real thing,
//! and they are the names of the profile's own era (`Symbols`): the same simulated work is
//! `filemap_nopage` in a 2.4 profile and `filemap_fault` in a 6.8 one.

use serde::Serialize;

macro_rules! kfuncs {
    ($($v:ident => $n:literal,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        pub enum KFunc { $($v,)* }
        impl KFunc {
            pub const ALL: &'static [KFunc] = &[$(KFunc::$v,)*];
            pub const COUNT: usize = KFunc::ALL.len();
            pub fn name(self) -> &'static str {
                match self { $(KFunc::$v => $n,)* }
            }
        }
    };
}

kfuncs! {
    HandleMmFault => "handle_mm_fault",
    DoAnonymousPage => "do_anonymous_page",
    FilemapFault => "filemap_fault",
    DoWpPage => "do_wp_page",
    DoSwapPage => "do_swap_page",
    ClearPage => "clear_page",
    CopyPage => "copy_page",
    CopyUserGeneric => "copy_user_generic",
    GenericFileRead => "generic_file_read",
    GenericFileWrite => "generic_perform_write",
    PageCacheRaReadahead => "page_cache_ra_unbounded",
    RmqueueBulk => "rmqueue_bulk",
    AllocPages => "__alloc_pages",
    FreePages => "free_pages",
    FreePagesBulk => "free_pcppages_bulk",
    DoMmap => "do_mmap",
    DoMunmap => "do_munmap",
    UnmapVmas => "unmap_vmas",
    CopyPageRange => "copy_page_range",
    ExitMmap => "exit_mmap",
    MlockFixupPopulate => "__mm_populate",
    MunlockVmaPages => "munlock_vma_pages_range",
    ShrinkActiveList => "shrink_active_list",
    ShrinkInactiveList => "shrink_inactive_list",
    ShrinkFolioList => "shrink_folio_list",
    FolioReferenced => "folio_referenced",
    TryToUnmap => "try_to_unmap",
    Pageout => "pageout",
    AddToSwap => "add_to_swap",
    BalancePgdat => "balance_pgdat",
    ShrinkSlab => "shrink_slab",
    ShrinkNode => "shrink_node",
    RefillInactiveScan => "refill_inactive_scan",
    PageLaunder => "page_launder",
    SwapOut => "swap_out",
    ReclaimPage => "reclaim_page",
    TryToFreeBuffers => "try_to_free_buffers",
    ZoneInactivePlenty => "zone_inactive_plenty",
    KmemCacheReap => "kmem_cache_reap",
    ShrinkCache => "shrink_cache",
    RefillInactive => "refill_inactive",
    TryToUnmapSharedVma => "try_to_unmap_shared_vma",
    TryToSwapOut => "try_to_swap_out",
    PageTableLockSpin => "spin_lock(page_table_lock)",
    ShmWritepage => "shm_writepage",
    LruLockSpin => "spin_lock(lru_lock)",
    ZoneLockSpin => "spin_lock(zone->lock)",
    RwsemDownRead => "rwsem_down_read_slowpath",
    RwsemDownWrite => "rwsem_down_write_slowpath",
    QuicklistTrim => "quicklist_trim",
    Compaction => "compact_zone",
    SlabAlloc => "___slab_alloc",
    OutOfMemory => "out_of_memory",
    WritebackSbInodes => "writeback_sb_inodes",
    Schedule => "schedule",
    Syscall => "entry_SYSCALL_64",
    PathOpenat => "path_openat",
    MemcgCharge => "try_charge_memcg",
    LoopHandleCmd => "loop_handle_cmd",
}

/// Which era's source the profile's function names come from (a profile field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Symbols {
    /// 2.4 on i386: `filemap_nopage`, `make_pages_present`, `zap_page_range`, `pagemap_lru_lock`.
    #[serde(rename = "2.4")]
    Linux24,
    /// 2.6.2x–2.6.3x on x86_64: `shrink_page_list`, `page_referenced`, `rwsem_down_read_failed`.
    #[serde(rename = "2.6")]
    Linux26,
    /// 6.8: folios, `__mm_populate`, `rwsem_down_read_slowpath`.
    #[default]
    #[serde(rename = "6.8")]
    Linux68,
}

impl Symbols {
    pub fn parse(s: &str) -> Option<Symbols> {
        match s {
            "2.4" => Some(Symbols::Linux24),
            "2.6" => Some(Symbols::Linux26),
            "6.8" => Some(Symbols::Linux68),
            _ => None,
        }
    }
}

impl KFunc {
    /// The function's name in `era`'s source; where the older kernel did the work under another
    /// name (or under a function that also covers a neighbour), that name.
    pub fn name_in(self, era: Symbols) -> &'static str {
        use KFunc::*;
        let old = match era {
            Symbols::Linux68 => None,
            Symbols::Linux26 => match self {
                PageCacheRaReadahead => Some("__do_page_cache_readahead"),
                MlockFixupPopulate => Some("__mlock_vma_pages_range"),
                ShrinkFolioList => Some("shrink_page_list"),
                FolioReferenced => Some("page_referenced"),
                RwsemDownRead => Some("rwsem_down_read_failed"),
                RwsemDownWrite => Some("rwsem_down_write_failed"),
                SlabAlloc => Some("__slab_alloc"),
                Syscall => Some("system_call"),
                _ => None,
            },
            Symbols::Linux24 => match self {
                FilemapFault => Some("filemap_nopage"),
                CopyUserGeneric => Some("__copy_user"),
                GenericFileWrite => Some("generic_file_write"),
                PageCacheRaReadahead => Some("page_cache_read"),
                RmqueueBulk => Some("rmqueue"),
                FreePages | FreePagesBulk => Some("__free_pages_ok"),
                DoMmap => Some("do_mmap_pgoff"),
                UnmapVmas => Some("zap_page_range"),
                MlockFixupPopulate => Some("make_pages_present"),
                MunlockVmaPages => Some("mlock_fixup"),
                ShrinkFolioList => Some("shrink_page_list"),
                FolioReferenced => Some("page_referenced"),
                LruLockSpin => Some("spin_lock(pagemap_lru_lock)"),
                RwsemDownRead => Some("rwsem_down_read_failed"),
                RwsemDownWrite => Some("rwsem_down_write_failed"),
                SlabAlloc => Some("kmem_cache_alloc"),
                WritebackSbInodes => Some("flush_dirty_buffers"),
                Syscall => Some("system_call"),
                _ => None,
            },
        };
        old.unwrap_or(self.name())
    }
}

/// A disk's interrupt handler: its row carries the driver's name (a scenario's disk field) and
/// counts its calls, as gprof does.
#[derive(Clone, Debug, Default)]
pub struct IrqRow {
    pub name: String,
    pub ns: u64,
    pub calls: u64,
}

/// Simulated kernel CPU nanoseconds per function.
#[derive(Clone, Debug)]
pub struct KernelProfile {
    ns: [u64; KFunc::COUNT],
    /// Whose names `named()` reports (set from the profile when the kernel is built).
    pub symbols: Symbols,
    /// One row per disk: its completion interrupt's handler.
    pub irq: Vec<IrqRow>,
}

impl Default for KernelProfile {
    fn default() -> Self {
        KernelProfile { ns: [0; KFunc::COUNT], symbols: Symbols::default(), irq: Vec::new() }
    }
}

impl KernelProfile {
    pub fn new(symbols: Symbols) -> KernelProfile {
        KernelProfile { symbols, ..KernelProfile::default() }
    }
    #[inline(always)]
    pub fn add(&mut self, f: KFunc, ns: u64) {
        self.ns[f as usize] += ns;
    }
    pub fn get(&self, f: KFunc) -> u64 {
        self.ns[f as usize]
    }
    /// (function name in the profile's era, ns) with ns > 0, most expensive first; functions
    /// that share an older name are one row; ties by name so output is stable.
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<(&'static str, u64)> = Vec::new();
        for &f in KFunc::ALL {
            let ns = self.ns[f as usize];
            if ns == 0 {
                continue;
            }
            let name = f.name_in(self.symbols);
            match v.iter_mut().find(|e| e.0 == name) {
                Some(e) => e.1 += ns,
                None => v.push((name, ns)),
            }
        }
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
    /// `named()` plus the interrupt handlers' rows (disks sharing a handler name are one row),
    /// with their calls: (name, ns, calls), in the same order.
    pub fn rows(&self) -> Vec<(String, u64, Option<u64>)> {
        let mut v: Vec<(String, u64, Option<u64>)> =
            self.named().into_iter().map(|(n, ns)| (n.to_string(), ns, None)).collect();
        for r in self.irq.iter().filter(|r| r.calls > 0) {
            match v.iter_mut().find(|e| e.0 == r.name) {
                Some(e) => {
                    e.1 += r.ns;
                    e.2 = Some(e.2.unwrap_or(0) + r.calls);
                }
                None => v.push((r.name.clone(), r.ns, Some(r.calls))),
            }
        }
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_each_era_except_merged_rows() {
        for era in [Symbols::Linux24, Symbols::Linux26, Symbols::Linux68] {
            let mut names: Vec<&str> = KFunc::ALL.iter().map(|f| f.name_in(era)).collect();
            names.sort_unstable();
            let before = names.len();
            names.dedup();
            let merged = if era == Symbols::Linux24 { 1 } else { 0 };
            assert_eq!(before - names.len(), merged, "{era:?}");
        }
    }

    #[test]
    fn an_old_era_merges_rows_that_share_a_name() {
        let mut p = KernelProfile::new(Symbols::Linux24);
        p.add(KFunc::FreePages, 3);
        p.add(KFunc::FreePagesBulk, 4);
        p.add(KFunc::FilemapFault, 5);
        assert_eq!(p.named(), vec![("__free_pages_ok", 7), ("filemap_nopage", 5)]);
        p.symbols = Symbols::Linux68;
        assert_eq!(p.named(), vec![("filemap_fault", 5), ("free_pcppages_bulk", 4), ("free_pages", 3)]);
    }
}
