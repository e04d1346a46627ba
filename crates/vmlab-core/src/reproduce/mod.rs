//! `vmlab reproduce SEED`: run a seed's scenario under the profile that had the problem and the
//! one that fixed it, and print the result in the seed's own form. Each seed is one module;
//! none of them changes what the mechanisms do — they choose scenarios, profiles and what to
//! print, and measure.

use std::path::{Path, PathBuf};

use crate::stats::report::{ReproduceReport, RunReport};

/// A timing line on standard error that cannot panic when standard error is closed or full.
macro_rules! note {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}
pub(crate) use note;

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

/// Find the repository root (the directory holding `scenarios/seeds`): `VMLAB_ROOT`, else the
/// tree the executable was built in, else the current directory.
pub fn find_root() -> PathBuf {
    let env = std::env::var_os("VMLAB_ROOT").map(PathBuf::from);
    let cands = root_candidates(env, std::env::current_exe().ok(), std::env::current_dir().ok());
    cands.into_iter().find(|p| p.join("scenarios").join("seeds").is_dir()).unwrap_or_else(|| PathBuf::from("."))
}

/// Where seeds are looked for, in order. The executable's own tree comes before the current
/// directory, and no parent of the current directory is a candidate: a `scenarios/seeds` that
/// happens to lie above where the command runs is somebody else's (another checkout, an old
/// copy), and silently running its seeds instead of the binary's would reproduce the wrong thing.
fn root_candidates(env: Option<PathBuf>, exe: Option<PathBuf>, cwd: Option<PathBuf>) -> Vec<PathBuf> {
    let mut cands: Vec<PathBuf> = env.into_iter().collect();
    // A cargo build puts the binary in target/{debug,release}/: the tree is two levels up.
    if let Some(e) = exe {
        cands.extend(e.ancestors().skip(1).take(3).map(Path::to_path_buf));
    }
    cands.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    cands.extend(cwd);
    cands
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_not_looked_for_above_the_current_directory() {
        let cwd = PathBuf::from("/home/u/elsewhere/deep/dir");
        let c = root_candidates(None, Some("/opt/vmlab/target/release/vmlab".into()), Some(cwd.clone()));
        assert!(c.iter().all(|p| !cwd.starts_with(p) || *p == cwd), "{c:?}");
        assert!(c.contains(&PathBuf::from("/opt/vmlab")), "the executable's tree: {c:?}");
        let env = root_candidates(Some("/r".into()), None, Some(cwd.clone()));
        assert_eq!(env[0], PathBuf::from("/r"));
        assert_eq!(env.last(), Some(&cwd), "the current directory comes last");
    }
}
