//! Scenarios (TOML) and the process-program language.
pub mod ast;
pub mod error;
pub mod exec;
pub mod interp;
pub mod load;
pub mod program;
pub mod scenario;
pub mod syscalls;
pub mod units;

pub use error::ScenarioError;
pub use load::{load_scenario, load_scenario_str, Scenario};
pub use program::parse_program;
