//! `vmlab reproduce SEED`: run a seed's scenario under the profile that had the problem and the
//! one that fixed it, and print the result in the seed's own form. Each seed is one module;
//! none of them changes what the mechanisms do — they choose scenarios, profiles and what to
//! print, and measure.

use std::path::{Path, PathBuf};

use crate::stats::report::{ReproduceReport, RunReport};

pub mod google_mlock;
pub mod kswapd_high_order;
pub mod mmap_sem;
pub mod quicklists;
pub mod shm_big_iron;

/// One seed reproduction.
pub struct SeedDef {
    pub name: &'static str,
    pub summary: &'static str,
    /// Run everything; return the JSON report and the text to print.
    pub run: fn(&ReproduceOpts) -> Result<(ReproduceReport, String), String>,
}

/// Options common to every reproduction.
pub struct ReproduceOpts {
    /// `--set` overrides applied to every run's scenario.
    pub sets: Vec<String>,
    /// Where `scenarios/` lives.
    pub root: PathBuf,
    /// Also report wall-clock time and host memory (on standard error, never in the text, which
    /// must be byte-identical from run to run and machine to machine).
    pub timing: bool,
    /// Seeds with an ablation (shm-big-iron): run every combination of the fixes.
    pub ablate: bool,
}

pub fn seeds() -> Vec<SeedDef> {
    vec![
        google_mlock::def(),
        kswapd_high_order::def(),
        mmap_sem::def(),
        SeedDef {
            name: "shm-big-iron",
            summary: "002: swapping SysV shm on a 32 GB box, 2.4.23aa1 vs aa2",
            run: shm_big_iron::run,
        },
        SeedDef {
            name: quicklists::SEED,
            summary: "003: per-CPU page-table quicklists grow with the CPU count (linux-2.6.26 -> 2.6.27)",
            run: quicklists::run,
        },
    ]
}

pub fn find(name: &str) -> Option<SeedDef> {
    seeds().into_iter().find(|s| s.name == name)
}

/// Load `scenarios/seeds/NAME.toml` with the user's sets plus extra ones, run it under a
/// profile, and return the report.
pub fn run_seed_scenario(
    opts: &ReproduceOpts,
    file: &str,
    profile: &str,
    extra_sets: &[String],
    tracers: Vec<Box<dyn crate::trace::Tracer>>,
) -> Result<(RunReport, crate::sim::Sim), String> {
    let path = opts.root.join("scenarios").join("seeds").join(file);
    let mut sets: Vec<String> = extra_sets.to_vec();
    sets.extend(opts.sets.iter().cloned());
    let sc = crate::workload::load_scenario(Path::new(&path), &sets).map_err(crate::api::render)?;
    let o = crate::api::RunOpts { profile: Some(profile), tracers, ..Default::default() };
    crate::api::run(&sc, o).map_err(crate::api::render)
}

/// Find the repository root (the directory holding `scenarios/`) from the current directory or
/// the executable's location.
pub fn find_root() -> PathBuf {
    let mut cands: Vec<PathBuf> = Vec::new();
    if let Ok(d) = std::env::var("VMLAB_ROOT") {
        cands.push(PathBuf::from(d));
    }
    if let Ok(d) = std::env::current_dir() {
        cands.extend(d.ancestors().map(|p| p.to_path_buf()));
    }
    if let Ok(e) = std::env::current_exe() {
        cands.extend(e.ancestors().map(|p| p.to_path_buf()));
    }
    cands.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    cands.into_iter().find(|p| p.join("scenarios").join("seeds").is_dir()).unwrap_or_else(|| PathBuf::from("."))
}
