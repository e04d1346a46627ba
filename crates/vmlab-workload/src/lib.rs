//! vmlab's workloads: scenario files (TOML) and the process-program language.
//!
//! `load` turns a scenario and its `--set`s into a checked `Scenario` (programs parsed, with
//! positions into the file for every error); `interp` compiles a program into resumable
//! instructions; `exec` runs them for one task, one quantum at a time, against the
//! `syscalls::Syscalls` trait — the machine (vmlab-core's simulator, or anything else) is on the
//! other side of it.
pub mod ast;
pub mod dist;
pub mod error;
pub mod exec;
pub mod interp;
pub mod load;
pub mod program;
pub mod scenario;
pub mod syscalls;
pub mod toml_scan;
pub mod toml_spans;
pub mod units;

pub use error::ScenarioError;
pub use load::{Scenario, Vocabulary};
pub use program::parse_program;
