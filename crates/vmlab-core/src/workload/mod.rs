//! Scenarios (TOML) and the process-program language.
pub mod ast;
pub mod scenario;
