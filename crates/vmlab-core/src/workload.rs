//! Scenarios and process programs: the `vmlab-workload` crate, whose loader checks a scenario
//! against this machine's vocabulary (its cost-table entries, the buddy allocator's orders).

use std::path::Path;

pub use vmlab_workload::{
    ast, error, exec, interp, load, parse_program, program, scenario, syscalls, units, Scenario, ScenarioError,
    Vocabulary,
};

/// What the simulated machine accepts in a scenario.
pub const VOCABULARY: Vocabulary =
    Vocabulary { cost_entries: crate::machine::CostTable::NAMES, max_order: crate::mmzone::MAX_ORDER as u32 };

/// Load a scenario file and apply `--set KEY=VALUE` overrides.
pub fn load_scenario(path: &Path, sets: &[String]) -> Result<Scenario, ScenarioError> {
    load::load_scenario(path, sets, &VOCABULARY)
}

/// Load a scenario from text; `name` is used in error messages.
pub fn load_scenario_str(name: &str, text: &str, sets: &[String]) -> Result<Scenario, ScenarioError> {
    load::load_scenario_str(name, text, sets, &VOCABULARY)
}
