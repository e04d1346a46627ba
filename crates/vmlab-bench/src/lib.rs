//! Nothing here: vmlab's benchmarks are in `benches/` (`cargo bench -p vmlab-bench`).
