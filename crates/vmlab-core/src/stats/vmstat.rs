//! The event counters vmlab models, under the kernel's own names (6.x's where releases differ;
//! each release's `/proc/vmstat` picks and orders them, `stats::procfs`). Only counters some
//! mechanism increments are here. Counters are a flat array indexed by `Vm`, so an increment in
//! a hot path is one add.

macro_rules! vm_items {
    ($($v:ident => $n:literal,)*) => {
        /// A `/proc/vmstat` event counter.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        pub enum Vm { $($v,)* }
        impl Vm {
            pub const ALL: &'static [Vm] = &[$(Vm::$v,)*];
            pub const COUNT: usize = Vm::ALL.len();
            /// The kernel's name for this counter.
            pub fn name(self) -> &'static str {
                match self { $(Vm::$v => $n,)* }
            }
            pub fn from_name(s: &str) -> Option<Vm> {
                match s { $($n => Some(Vm::$v),)* _ => None }
            }
        }
    };
}

vm_items! {
    Pgpgin => "pgpgin",
    Pgpgout => "pgpgout",
    Pswpin => "pswpin",
    Pswpout => "pswpout",
    PgallocDma => "pgalloc_dma",
    PgallocDma32 => "pgalloc_dma32",
    PgallocNormal => "pgalloc_normal",
    PgallocHigh => "pgalloc_high",
    PgallocMovable => "pgalloc_movable",
    AllocstallDma => "allocstall_dma",
    AllocstallDma32 => "allocstall_dma32",
    AllocstallNormal => "allocstall_normal",
    AllocstallMovable => "allocstall_movable",
    Allocstall => "allocstall",
    Pgfree => "pgfree",
    Pgactivate => "pgactivate",
    Pgdeactivate => "pgdeactivate",
    Pgfault => "pgfault",
    Pgmajfault => "pgmajfault",
    Pgrefill => "pgrefill",
    Pgreuse => "pgreuse",
    PgstealKswapd => "pgsteal_kswapd",
    PgstealDirect => "pgsteal_direct",
    PgstealAnon => "pgsteal_anon",
    PgstealFile => "pgsteal_file",
    PgscanKswapd => "pgscan_kswapd",
    PgscanDirect => "pgscan_direct",
    PgscanAnon => "pgscan_anon",
    PgscanFile => "pgscan_file",
    Pginodesteal => "pginodesteal",
    SlabsScanned => "slabs_scanned",
    KswapdInodesteal => "kswapd_inodesteal",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    KswapdSkipCongestionWait => "kswapd_skip_congestion_wait",
    Pageoutrun => "pageoutrun",
    Pgrotated => "pgrotated",
    DropPagecache => "drop_pagecache",
    OomKill => "oom_kill",
    UnevictablePgsCulled => "unevictable_pgs_culled",
    UnevictablePgsRescued => "unevictable_pgs_rescued",
    UnevictablePgsMlocked => "unevictable_pgs_mlocked",
    UnevictablePgsMunlocked => "unevictable_pgs_munlocked",
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    NrVmscanWrite => "nr_vmscan_write",
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
    NrDirtied => "nr_dirtied",
    NrWritten => "nr_written",
    SwapRa => "swap_ra",
    SwapRaHit => "swap_ra_hit",
    PgtableQuicklistHit => "quicklist_hit",
    MinorFaultRetry => "pgfault_retry",
    VmaLockSuccess => "vma_lock_success",
    CompactBlocksMoved => "compact_blocks_moved",
    CompactPagesMoved => "compact_pages_moved",
    CompactPagemigrateFailed => "compact_pagemigrate_failed",
    CompactStall => "compact_stall",
    CompactFail => "compact_fail",
    CompactSuccess => "compact_success",
    VmaLockAbort => "vma_lock_abort",
    VmaLockRetry => "vma_lock_retry",
}

/// Event counters for one machine.
#[derive(Clone, Debug)]
pub struct VmEvents {
    v: [u64; Vm::COUNT],
}

impl Default for VmEvents {
    fn default() -> Self {
        VmEvents { v: [0; Vm::COUNT] }
    }
}

impl VmEvents {
    #[inline(always)]
    pub fn inc(&mut self, c: Vm) {
        self.v[c as usize] += 1;
    }
    #[inline(always)]
    pub fn add(&mut self, c: Vm, n: u64) {
        self.v[c as usize] += n;
    }
    #[inline(always)]
    pub fn get(&self, c: Vm) -> u64 {
        self.v[c as usize]
    }
    pub fn iter(&self) -> impl Iterator<Item = (Vm, u64)> + '_ {
        Vm::ALL.iter().map(move |&c| (c, self.v[c as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for &c in Vm::ALL {
            assert!(seen.insert(c.name()), "duplicate name {}", c.name());
            assert_eq!(Vm::from_name(c.name()), Some(c));
        }
    }
}
