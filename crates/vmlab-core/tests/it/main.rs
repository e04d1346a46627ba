//! vmlab-core's integration tests, one module per subject, in one test binary: the suite builds
//! it once instead of linking the library into two dozen executables (scripts/test-all.sh).

mod all_profiles;
mod anon_lru;
mod blk_merge;
mod buddy_align;
mod common;
mod examples;
mod fault_accounting;
mod fork_memory;
mod ftrace;
mod irq;
mod layering;
mod memcg;
mod migrate_reserve;
mod mlock_chunks;
mod oom;
mod open_cost;
mod pcp_migratetype;
mod procfs;
mod proptest_mm;
mod psi;
mod reclaim_flusher_work;
mod reclaim_throttle;
mod rmap;
mod scenario_errors;
mod seed_google_mlock;
mod seed_kswapd_high_order;
mod seed_kswapd_mailserver;
mod seed_mmap_sem;
mod seed_quicklists;
mod seed_shm_big_iron;
mod swap_readahead;
mod syscalls;
mod tcp_sendmsg;
mod wait_until;
mod workingset;
