//! Counters and reports: /proc/vmstat, /proc/meminfo, the vmstat timeline, the kernel profile, JSON.
pub mod alloc_diag;
pub mod compare;
pub mod explain;
pub mod ftrace;
pub mod kfunc;
pub mod memcg_fmt;
pub mod meminfo;
pub mod ordered;
pub mod procfs;
pub mod procvmstat;
pub mod profile_fmt;
pub mod refaults;
pub mod report;
pub mod timeline;
pub mod vmstat;
