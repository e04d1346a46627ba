//! One input through what a user's scenario goes through: the loader (TOML, `--set`, the program
//! compiler), error rendering, and, when the machine is small enough, a short simulation.

use vmlab_core::api;
use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::{self, ScenarioError};

/// How an input ended (a panic, an abort, a stack overflow or a hang is a failure the
/// supervisor sees instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Loaded, and simulated without error.
    Ran,
    /// Loaded; not simulated (too large for the fuzzer's bounds, or not among the inputs it
    /// simulates).
    Loaded,
    /// Refused by the loader with a position.
    LoadError,
    /// Refused by the loader without a position (a file-level error such as invalid UTF-8 is fine;
    /// the supervisor lists the messages).
    LoadErrorNoPosition,
    /// Stopped by the simulator with an error.
    RunError,
}

/// Simulated time the fuzzer gives one input: enough for every program to start and fault.
const SIM_LIMIT_NS: u64 = 100_000_000;

/// A machine the fuzzer simulates: small, so that one input takes milliseconds.
fn small_enough(sc: &workload::Scenario) -> bool {
    let s = &sc.setup;
    let files: u64 = s.files.iter().map(|f| f.bytes.saturating_mul(f.count as u64)).sum::<u64>()
        + s.filetrees.iter().map(|t| t.total_bytes).sum::<u64>();
    let trees: u64 = s.filetrees.iter().map(|t| t.total_bytes / t.mean_bytes.max(1)).sum();
    s.machine.memory_bytes <= 128 << 20
        && s.machine.cpus <= 64
        && s.swap.as_ref().is_none_or(|w| w.bytes <= 1 << 30)
        && files <= 1 << 30
        && trees <= 20_000
        && sc.processes.iter().map(|p| p.count as u64).sum::<u64>() <= 256
}

/// Run one input; `Err` carries an error message to list (an unpositioned load error).
pub fn run_one(text: &[u8], sets: &[String], scratch: &std::path::Path, simulate: bool) -> (Outcome, Option<String>) {
    let loaded = match std::str::from_utf8(text) {
        Ok(t) => workload::load_scenario_str("fuzz.toml", t, sets),
        // Only the file loader sees bytes: invalid UTF-8 goes through it.
        Err(_) => {
            if std::fs::write(scratch, text).is_err() {
                return (Outcome::Loaded, None);
            }
            workload::load_scenario(scratch, sets)
        }
    };
    let sc = match loaded {
        Ok(sc) => sc,
        Err(e) => return load_error(e),
    };
    if !simulate || !small_enough(&sc) {
        return (Outcome::Loaded, None);
    }
    let profile = match resolve_profile(&sc, None) {
        Ok(p) => p,
        Err(e) => return run_error(&sc, e),
    };
    let mut sim = match Sim::new(&sc, profile) {
        Ok(s) => s,
        Err(e) => return run_error(&sc, e),
    };
    sim.end_limit = sim.end_limit.min(SIM_LIMIT_NS);
    match sim.run() {
        Ok(()) => {
            std::hint::black_box(sim.report(0.0).to_json_string());
            (Outcome::Ran, None)
        }
        Err(e) => run_error(&sc, e),
    }
}

fn load_error(e: ScenarioError) -> (Outcome, Option<String>) {
    let positioned = e.line_col().is_some() || e.is_from_set();
    let msg = e.message().to_string();
    std::hint::black_box(api::render(e));
    if positioned {
        (Outcome::LoadError, None)
    } else {
        (Outcome::LoadErrorNoPosition, Some(msg))
    }
}

fn run_error(sc: &workload::Scenario, e: vmlab_core::sim::SimError) -> (Outcome, Option<String>) {
    let positioned = e.span.is_some();
    let msg = e.message.clone();
    std::hint::black_box(api::render(api::diagnose(sc, e)));
    (Outcome::RunError, (!positioned).then_some(msg))
}
