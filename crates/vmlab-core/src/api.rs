//! The library's front door: load a scenario, run it under a profile, get a report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::sim::{resolve_profile, Sim, SimError};
use crate::stats::report::RunReport;
use crate::workload::{load, Scenario, ScenarioError};

/// Called now and then during a run with the simulated time and, when the scenario has a
/// `duration`, the time the run will stop at (both ns). It only observes: nothing it does can
/// change the run's output.
pub type ProgressFn = Box<dyn FnMut(u64, Option<u64>)>;

/// Options of one run.
#[derive(Default)]
pub struct RunOpts<'a> {
    /// Profile overriding the scenario's.
    pub profile: Option<&'a str>,
    /// Timeline interval overriding the scenario's, seconds.
    pub interval_s: Option<f64>,
    /// Progress callback (see `ProgressFn`).
    pub progress: Option<ProgressFn>,
    /// Observers of the run's tracepoints, attached before it starts.
    pub tracers: Vec<Box<dyn crate::trace::Tracer>>,
    /// A flag that ends the run early when set (see `Sim::interrupt`).
    pub interrupt: Option<&'static std::sync::atomic::AtomicBool>,
    /// Called after each timeline sample (see `Sim::on_sample`).
    pub on_sample: Option<crate::sim::SampleHook>,
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

/// Whether `render` draws miette's graphical form: set by a front end whose errors go to a
/// terminal. Off by default, since editors, grep and log files want one line per error.
static GRAPHICAL: AtomicBool = AtomicBool::new(false);

/// Have `render` draw errors for a person at a terminal (true) or as plain lines (false).
pub fn set_graphical_errors(on: bool) {
    GRAPHICAL.store(on, Ordering::Relaxed);
}

/// A scenario error as the plain `FILE:LINE:COL: message` line (or `--set KEY=VALUE: message`),
/// with its help on an indented line after it.
pub fn render_plain(e: &ScenarioError) -> String {
    match e.help_text() {
        Some(h) => format!("{e}\n  help: {h}"),
        None => e.to_string(),
    }
}

/// A scenario error as `set_graphical_errors` chose: plain (see `render_plain`), or miette's
/// snippet with the label under the span — unless a line to be shown is too long for one.
pub fn render(e: ScenarioError) -> String {
    use miette::Diagnostic;
    if !GRAPHICAL.load(Ordering::Relaxed) {
        return render_plain(&e);
    }
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
    render_plain(&e)
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
    sim.interrupt = opts.interrupt;
    sim.on_sample = opts.on_sample;
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
