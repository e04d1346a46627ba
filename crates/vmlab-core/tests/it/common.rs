//! What several integration tests share.

use std::io::Write;
use std::sync::{Arc, Mutex};

use vmlab_core::api::{self, RunOpts};
use vmlab_core::stats::report::RunReport;

/// Where an `FtraceWriter` writes a run's trace, to be read once the run has ended.
#[derive(Clone, Default)]
pub struct TraceBuf(pub Arc<Mutex<Vec<u8>>>);

impl Write for TraceBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Load `text` as the scenario file `name` with `sets`, run it under its own profile, and check
/// every frame's state is consistent at the end.
pub fn run_checked(name: &str, text: &str, sets: &[&str]) -> RunReport {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str(name, text, &sets).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    sim.k.check_frames().expect("frames consistent");
    r
}

/// The runs of `vmlab reproduce SEED` at its defaults as the suite has just written them, when it
/// has: `scripts/test-all.sh` runs the golden test first, which writes every seed's JSON with this
/// build's `vmlab` and fails unless each is byte-identical to its blessed hash, and then points
/// `VMLAB_SEED_REPORTS` at those files. A full-scale test then checks its seed's must-shows on the
/// very runs the golden test checked instead of simulating them a second time. Without the
/// variable (a test run by hand) it returns `None` and the test runs its own.
pub fn suite_reproduce_runs(seed: &str) -> Option<Vec<RunReport>> {
    let dir = std::env::var_os("VMLAB_SEED_REPORTS")?;
    let path = std::path::Path::new(&dir).join(format!("reproduce-{seed}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("VMLAB_SEED_REPORTS is set, but {} cannot be read: {e}", path.display()));
    let rep: vmlab_core::stats::report::ReproduceReport =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not a reproduce report: {e}", path.display()));
    assert_eq!(rep.seed, seed, "{}", path.display());
    eprintln!("{seed}: the runs of {} (VMLAB_SEED_REPORTS)", path.display());
    Some(rep.runs)
}

/// The runs among `runs` whose `params` hold every `(key, value)` of `want`, in their order.
pub fn runs_with(runs: Vec<RunReport>, want: &[(&str, &str)]) -> Vec<RunReport> {
    runs.into_iter()
        .filter(|r| want.iter().all(|(k, v)| r.params.get(k).and_then(|x| x.as_str()) == Some(*v)))
        .collect()
}
