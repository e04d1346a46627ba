//! The library's front door: load a scenario, run it under a profile, get a report.

use std::time::Instant;

use crate::sim::{resolve_profile, Sim, SimError};
use crate::stats::report::RunReport;
use crate::workload::{load, Scenario, ScenarioError};

/// Options of one run.
#[derive(Default)]
pub struct RunOpts<'a> {
    /// Profile overriding the scenario's.
    pub profile: Option<&'a str>,
    /// Timeline interval overriding the scenario's, seconds.
    pub interval_s: Option<f64>,
    /// Progress callback with the simulated time in ns.
    pub progress: Option<Box<dyn FnMut(u64)>>,
    /// Observers of the run's tracepoints, attached before it starts.
    pub tracers: Vec<Box<dyn crate::trace::Tracer>>,
}

/// Turn a simulation error into a diagnostic pointing into the scenario when it has a span.
pub fn diagnose(sc: &Scenario, e: SimError) -> ScenarioError {
    match e.span {
        Some(s) => sc.error_at(s, e.message),
        None => ScenarioError::new(&sc.path, e.message),
    }
}

/// Longest source line (in characters) shown in a diagnostic's snippet. miette pads to the
/// label's column with a formatting width, and Rust refuses widths above 65535 (a panic): a
/// line of 70,000 characters is not worth showing anyway, so such errors print plainly.
const MAX_SNIPPET_LINE: usize = 4096;

/// A scenario error for a terminal: miette's snippet with the label under the span, or, when
/// a line to be shown is too long for one, the plain `FILE:LINE:COL: message` form with its help.
pub fn render(e: ScenarioError) -> String {
    use miette::Diagnostic;
    let fits = match (e.source_code(), e.labels()) {
        (Some(src), Some(mut labels)) => labels.all(|l| {
            src.read_span(l.inner(), 1, 1).is_ok_and(|c| {
                String::from_utf8_lossy(c.data()).lines().all(|line| line.chars().count() <= MAX_SNIPPET_LINE)
            })
        }),
        _ => true,
    };
    if fits {
        return format!("{:?}", miette::Report::new(e));
    }
    match e.help_text() {
        Some(h) => format!("{e}\n  help: {h}"),
        None => e.to_string(),
    }
}

/// An interval given in seconds outside the scenario (`--interval`, Python's `interval`), held to
/// the bounds of the scenario's own `interval` for a run of at most `limit_ns`.
pub fn interval_ns(seconds: f64, limit_ns: u64) -> Result<u64, String> {
    let what = format!("--interval {seconds}");
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(format!("{what}: the interval is a positive number of seconds"));
    }
    let ns = seconds * 1e9;
    if ns < load::MIN_INTERVAL_NS as f64 {
        return Err(format!("{what}: the timeline's finest interval is 0.001 s"));
    }
    let ns = if ns > load::MAX_INTERVAL_NS as f64 { u64::MAX } else { ns as u64 };
    load::check_timeline(&what, ns, limit_ns)?;
    Ok(ns)
}

/// Run a loaded scenario and report.
pub fn run(sc: &Scenario, opts: RunOpts) -> Result<(RunReport, Sim), ScenarioError> {
    let wall = Instant::now();
    let profile = resolve_profile(sc, opts.profile).map_err(|e| diagnose(sc, e))?;
    let mut sim = Sim::new(sc, profile).map_err(|e| diagnose(sc, e))?;
    if let Some(i) = opts.interval_s {
        sim.interval = interval_ns(i, sim.end_limit).map_err(|m| ScenarioError::new(&sc.path, m))?;
    }
    sim.progress = opts.progress;
    for t in opts.tracers {
        sim.k.attach_tracer(t);
    }
    if sim.k.tracing {
        for (i, t) in sim.s.tasks.iter().enumerate() {
            sim.k.task_created(i, t.pid, &t.name);
        }
    }
    sim.run().map_err(|e| diagnose(sc, e))?;
    sim.k.finish_tracers();
    let report = sim.report(wall.elapsed().as_secs_f64());
    Ok((report, sim))
}
