//! The library's front door: load a scenario, run it under a profile, get a report.

use std::time::Instant;

use crate::sim::{resolve_profile, Sim, SimError};
use crate::stats::report::RunReport;
use crate::workload::{Scenario, ScenarioError};

/// Options of one run.
#[derive(Default)]
pub struct RunOpts<'a> {
    /// Profile overriding the scenario's.
    pub profile: Option<&'a str>,
    /// Timeline interval overriding the scenario's, seconds.
    pub interval_s: Option<f64>,
    /// Progress callback with the simulated time in ns.
    pub progress: Option<Box<dyn FnMut(u64)>>,
}

/// Turn a simulation error into a diagnostic pointing into the scenario when it has a span.
pub fn diagnose(sc: &Scenario, e: SimError) -> ScenarioError {
    match e.span {
        Some(s) => sc.error_at(s, e.message),
        None => ScenarioError::new(&sc.path, e.message),
    }
}

/// Run a loaded scenario and report.
pub fn run(sc: &Scenario, opts: RunOpts) -> Result<(RunReport, Sim), ScenarioError> {
    let wall = Instant::now();
    let profile = resolve_profile(sc, opts.profile).map_err(|e| diagnose(sc, e))?;
    let mut sim = Sim::new(sc, profile).map_err(|e| diagnose(sc, e))?;
    if let Some(i) = opts.interval_s {
        if i.is_nan() || i <= 0.0 {
            return Err(ScenarioError::new(&sc.path, "--interval must be a positive number of seconds"));
        }
        sim.interval = (i * 1e9) as u64;
    }
    sim.progress = opts.progress;
    sim.run().map_err(|e| diagnose(sc, e))?;
    let report = sim.report(wall.elapsed().as_secs_f64());
    Ok((report, sim))
}
