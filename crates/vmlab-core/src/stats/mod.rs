//! Counters and reports: /proc/vmstat, /proc/meminfo, the vmstat timeline, the kernel profile, JSON.
pub mod kfunc;
pub mod vmstat;
