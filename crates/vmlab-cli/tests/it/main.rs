//! The vmlab command's integration tests, one module per subject, in one test binary (the golden
//! hashes are their own, tests/golden.rs).

mod cli;
mod common;
mod determinism;
mod real;
mod reliability;
mod tool;
