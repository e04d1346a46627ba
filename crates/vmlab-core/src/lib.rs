//! vmlab core: the Linux memory manager as a deterministic, per-page, cost-modelled simulated machine.
pub mod disk;
pub mod dist;
pub mod stats;
pub mod workload;
