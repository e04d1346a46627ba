//! vmlab core: the Linux memory manager as a deterministic, per-page, cost-modelled simulated machine.
//!
//! Data flows one way: scenario → workload programs → system calls into the mm → machine state
//! → counters → reports. Modules carry the names of the kernel's `mm/` files.
pub mod api;
pub mod backing_dev;
pub mod blk;
pub mod blk_wbt;
pub mod bootmem;
pub mod compaction;
pub mod dcache;
pub mod disk;
pub mod ext4_page_io;
/// Deterministic distributions (Zipf, log-normal), shared with the workload's access patterns.
pub use vmlab_workload::dist;
pub mod filemap;
pub mod fork;
pub mod irq;
pub mod kernel;
pub mod kmem;
pub mod ll_rw_blk;
pub mod loop_dev;
pub mod machine;
pub mod memcontrol;
pub mod memory;
pub mod migrate;
pub mod mlock;
pub mod mm_types;
pub mod mmap;
pub mod mmap_lock;
pub mod mmzone;
pub mod mq_deadline;
pub mod namei;
pub mod oom_kill;
pub mod page_alloc;
pub mod page_writeback;
pub mod prandom;
pub mod profiles;
pub mod psi;
pub mod quicklist;
pub mod readahead;
pub mod reproduce;
pub mod rmap;
pub mod sched;
pub mod sched_lock;
pub mod sim;
pub mod slub;
pub mod stats;
pub mod swap_state;
pub mod swapfile;
pub mod syscalls;
pub mod tcp;
pub mod timerqueue;
pub mod trace;
pub mod vmscan;
pub mod whatif;
pub mod workingset;
pub mod workload;
