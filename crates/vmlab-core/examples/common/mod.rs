//! The start every census example shares: `SCENARIO PROFILE EVERY_S [KEY=VALUE...]`, the scenario
//! loaded and the machine built, with a bad argument reported as the CLI reports it (file, line,
//! column) rather than as a panic.

use vmlab_core::api::{diagnose, render};
use vmlab_core::sim::{resolve_profile, Sim};
use vmlab_core::workload::load_scenario;

pub struct Census {
    pub sim: Sim,
    /// Seconds of simulated time between two census lines.
    pub every_s: u64,
}

fn fail(msg: String, code: i32) -> ! {
    eprintln!("{msg}");
    std::process::exit(code)
}

pub fn setup(name: &str) -> Census {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        fail(format!("usage: {name} SCENARIO PROFILE EVERY_S [KEY=VALUE...]"), 2);
    }
    let every_s = match args[2].parse::<u64>() {
        Ok(s) if s > 0 => s,
        _ => fail(format!("{name}: EVERY_S is a whole number of seconds above 0, got {:?}", args[2]), 2),
    };
    let sc = load_scenario(std::path::Path::new(&args[0]), &args[3..]).unwrap_or_else(|e| fail(render(e), 1));
    let profile = resolve_profile(&sc, Some(&args[1])).unwrap_or_else(|e| fail(render(diagnose(&sc, e)), 1));
    let sim = Sim::new(&sc, profile).unwrap_or_else(|e| fail(render(diagnose(&sc, e)), 1));
    Census { sim, every_s }
}
