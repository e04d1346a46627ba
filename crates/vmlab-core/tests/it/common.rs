//! What several integration tests share.

use vmlab_core::api::{self, RunOpts};
use vmlab_core::stats::report::RunReport;

/// Load `text` as the scenario file `name` with `sets`, run it under its own profile, and check
/// every frame's state is consistent at the end.
pub fn run_checked(name: &str, text: &str, sets: &[&str]) -> RunReport {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = vmlab_core::workload::load_scenario_str(name, text, &sets).expect("loads");
    let (r, sim) = api::run(&sc, RunOpts::default()).expect("runs");
    sim.k.check_frames().expect("frames consistent");
    r
}
