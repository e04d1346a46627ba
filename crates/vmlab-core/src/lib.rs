//! vmlab core: the Linux memory manager as a deterministic, per-page, cost-modelled simulated machine.
pub mod disk;
pub mod stats;
pub mod workload;
