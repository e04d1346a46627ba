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

/// MemFree as a share of MemTotal, averaged over the minute readings between two census lines:
/// `setup_window` makes the simulation sample every minute (or every EVERY_S if shorter), and
/// `sample` returns Some((now %, window mean %)) when a census line is due.
// Each example compiles this module on its own, and not every census reads MemFree.
#[allow(dead_code)]
#[derive(Default)]
pub struct MemFreeWindow {
    sum: f64,
    n: u32,
}

#[allow(dead_code)]
pub fn setup_window(sim: &mut Sim, every_s: u64) -> MemFreeWindow {
    let minute = 60_000_000_000u64;
    sim.interval = minute.min(every_s * 1_000_000_000);
    MemFreeWindow::default()
}

impl MemFreeWindow {
    #[allow(dead_code)]
    pub fn sample(&mut self, sim: &Sim, every_s: u64) -> Option<(f64, f64)> {
        let mi = sim.meminfo();
        let free = mi.mem_free as f64 * 100.0 / mi.mem_total.max(1) as f64;
        self.sum += free;
        self.n += 1;
        if !sim.s.now.is_multiple_of(every_s * 1_000_000_000) {
            return None;
        }
        let mean = self.sum / self.n as f64;
        (self.sum, self.n) = (0.0, 0);
        Some((free, mean))
    }
}

/// Free pages a zone holds in blocks of `orders` (`/proc/buddyinfo`'s counts times the block
/// size).
#[allow(dead_code)]
pub fn free_in_orders(z: &vmlab_core::mmzone::Zone, orders: std::ops::Range<usize>) -> u64 {
    orders.map(|o| z.nr_free[o] << o).sum()
}
