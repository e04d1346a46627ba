//! What ends each `reclaim_throttle` wait of one task (issue 17's dirty-writer: why vmlab's
//! writer never waits long where the host's waits 4–56 ms). For every wait of the task named
//! `task=` (default `writer`): a `wake_up` from `acct_reclaim_writeback` (and how many pages had
//! finished writeback since the first waiter throttled), the timeout, or neither (the task ran
//! again first for another reason). Printed at the end: counts, delays by bucket, and the
//! written counts the wakes saw. An observer: the run is the same with or without it.
//!
//! cargo run --release -p vmlab-core --example throttle_wakes -- SCENARIO PROFILE 1 [task=NAME] [KEY=VALUE...]

mod common;

use std::any::Any;

use vmlab_core::kernel::Kernel;
use vmlab_core::trace::{kind, Tracepoint, Tracer};

/// Delay buckets' upper bounds, µs.
const BUCKETS: [u64; 6] = [1_000, 4_000, 16_000, 64_000, 100_000, u64::MAX];

#[derive(Default)]
struct Waits {
    name: String,
    task: Option<usize>,
    /// `nr_written` of the wake that reached the task last, until its wait ends.
    wake_written: Option<u64>,
    /// Ends: [woken, timeout, other] × (count, µs delayed).
    ends: [(u64, u64); 3],
    by_delay: [u64; BUCKETS.len()],
    max_us: u64,
    written_at_wake: Vec<u64>,
}

impl Tracer for Waits {
    fn event(&mut self, k: &Kernel, ev: &Tracepoint) {
        if Some(k.trace_at.task) != self.task {
            return;
        }
        match *ev {
            Tracepoint::ThrottleWake { nr_written, .. } => self.wake_written = Some(nr_written),
            Tracepoint::Throttled { usec_delayed, usec_timeout, woken, .. } => {
                let end = if woken {
                    0
                } else if usec_delayed >= usec_timeout {
                    1
                } else {
                    2
                };
                self.ends[end].0 += 1;
                self.ends[end].1 += usec_delayed;
                self.by_delay[BUCKETS.iter().position(|&b| usec_delayed < b).unwrap_or(BUCKETS.len() - 1)] += 1;
                self.max_us = self.max_us.max(usec_delayed);
                if let Some(n) = self.wake_written.take() {
                    self.written_at_wake.push(n);
                }
            }
            _ => {}
        }
    }
    fn wants(&self) -> u32 {
        kind::THROTTLED | kind::THROTTLE_WAKE
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn task_created(&mut self, task: usize, _pid: u32, comm: &str) {
        if comm == self.name {
            self.task = Some(task);
        }
    }
}

fn main() {
    // EVERY_S is the census examples' common argument; this one prints once, at the end.
    let (common::Census { mut sim, every_s: _every }, own) = common::setup_with("throttle_wakes", &["task"]);
    let name = own.iter().find(|(k, _)| k == "task").map_or("writer".to_string(), |(_, v)| v.clone());
    // Tasks built with the machine were announced before this observer came.
    let task = sim.s.tasks.iter().position(|t| t.name == name);
    sim.k.attach_tracer(Box::new(Waits { name: name.clone(), task, ..Default::default() }));
    if let Err(e) = sim.run() {
        eprintln!("{}", e.message);
        std::process::exit(1);
    }
    let Some(w) = sim.k.tracer::<Waits>() else { return };
    let n: u64 = w.ends.iter().map(|e| e.0).sum();
    let total_us: u64 = w.ends.iter().map(|e| e.1).sum();
    println!("task {name}: {n} waits, {:.3} s in all, longest {:.1} ms", total_us as f64 / 1e6, w.max_us as f64 / 1e3);
    for (i, what) in ["woken by acct_reclaim_writeback", "timed out", "ended otherwise"].iter().enumerate() {
        let (c, us) = w.ends[i];
        println!("  {what}: {c} waits, {:.3} s", us as f64 / 1e6);
    }
    let labels = ["<1 ms", "1-4 ms", "4-16 ms", "16-64 ms", "64-100 ms", ">=100 ms"];
    let hist: Vec<String> = labels.iter().zip(w.by_delay).map(|(l, c)| format!("{l} {c}")).collect();
    println!("  by delay: {}", hist.join(", "));
    let mut ws = w.written_at_wake.clone();
    ws.sort_unstable();
    if !ws.is_empty() {
        let q = |f: f64| ws[((ws.len() - 1) as f64 * f) as usize];
        println!(
            "  pages written since the first waiter throttled, at the wake: min {} median {} p90 {} max {}",
            ws[0],
            q(0.5),
            q(0.9),
            ws[ws.len() - 1]
        );
    }
}
