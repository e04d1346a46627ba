//! Kernel functions that simulated kernel CPU time is charged to: the flat kernel profile.
//! Names are the kernel's, so the profile reads like `readprofile`/gprof output of the real thing.

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
}

/// Simulated kernel CPU nanoseconds per function.
#[derive(Clone, Debug)]
pub struct KernelProfile {
    ns: [u64; KFunc::COUNT],
}

impl Default for KernelProfile {
    fn default() -> Self {
        KernelProfile { ns: [0; KFunc::COUNT] }
    }
}

impl KernelProfile {
    #[inline(always)]
    pub fn add(&mut self, f: KFunc, ns: u64) {
        self.ns[f as usize] += ns;
    }
    pub fn get(&self, f: KFunc) -> u64 {
        self.ns[f as usize]
    }
    /// (function, ns) with ns > 0, most expensive first; ties by name so output is stable.
    pub fn sorted(&self) -> Vec<(KFunc, u64)> {
        let mut v: Vec<(KFunc, u64)> =
            KFunc::ALL.iter().map(|&f| (f, self.ns[f as usize])).filter(|x| x.1 > 0).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.name().cmp(b.0.name())));
        v
    }
}
