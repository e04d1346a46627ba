//! `vmlab._vmlab`: the Python extension module. Deliberately thin — every function takes and
//! returns plain strings (JSON documents of the `vmlab.run/1` / `vmlab.reproduce/1` schemas, see
//! docs/JSON.md), so the Python side (`python/vmlab`) owns the pandas shapes and the core owns
//! the simulation. The simulation runs with the GIL released, so threads and the process pool
//! of `vmlab.sweep` are not serialised behind it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use vmlab_core::api::{self, RunOpts};
use vmlab_core::reproduce::{self, ReproduceOpts};
use vmlab_core::workload::{load_scenario, load_scenario_str};

create_exception!(
    vmlab,
    ScenarioError,
    PyValueError,
    "A scenario, `--set` override or run option is wrong; the message starts with FILE:LINE:COL."
);

/// Why a call failed, carried out of the GIL-free section as plain data.
enum Failure {
    Scenario(String),
    Other(String),
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Scenario(m) => ScenarioError::new_err(m),
            Failure::Other(m) => PyRuntimeError::new_err(m),
        }
    }
}

fn scenario_failure(e: vmlab_core::workload::ScenarioError) -> Failure {
    let mut m = format!("{e}");
    if let Some(h) = e.help_text() {
        m.push_str(&format!("\n  help: {h}"));
    }
    Failure::Scenario(m)
}

/// Run k of n, its profile and overrides.
type RunAnnounced = (usize, usize, String, Vec<String>);

/// Hands progress to a Python callable `progress(k, n, profile, sets, now_s, end_s)`, taking
/// the GIL only for the call. What the callable raises is dropped: a broken progress display
/// must not fail the simulation it watches.
struct PyProgress {
    cb: Py<PyAny>,
    /// Per run (from 1): its count, profile and overrides, as announced.
    runs: std::sync::Mutex<Vec<RunAnnounced>>,
}

impl PyProgress {
    fn call(&self, k: usize, n: usize, profile: &str, sets: &[String], now_ns: u64, end_ns: Option<u64>) {
        Python::attach(|py| {
            let end = end_ns.map(|e| e as f64 / 1e9);
            let _ = self.cb.call1(py, (k, n, profile, sets.to_vec(), now_ns as f64 / 1e9, end));
        });
    }
}

impl reproduce::Progress for PyProgress {
    fn run_start(&self, k: usize, n: usize, profile: &str, sets: &[String]) {
        if let Ok(mut r) = self.runs.lock() {
            r.push((k, n, profile.to_string(), sets.to_vec()));
        }
        self.call(k, n, profile, sets, 0, None);
    }
    fn tick(&self, k: usize, now_ns: u64, end_ns: Option<u64>) {
        let run = self.runs.lock().ok().and_then(|r| r.iter().find(|x| x.0 == k).cloned());
        if let Some((_, n, profile, sets)) = run {
            self.call(k, n, &profile, &sets, now_ns, end_ns);
        }
    }
}

/// Run one scenario and return its `vmlab.run/1` report as JSON text.
///
/// Exactly one of `scenario_path` and `scenario_text` is given; `name` labels text scenarios in
/// error messages and in the report. `sets` are `KEY=VALUE` overrides as `vmlab run --set`, and
/// are recorded in the report's `params`. `progress`, when given, is called now and then as
/// `progress(1, 1, profile, sets, now_s, end_s)` (`end_s` is None without a `duration`).
#[pyfunction]
#[pyo3(signature = (scenario_path=None, scenario_text=None, profile=None, sets=Vec::new(), interval=None, name=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn run_json(
    py: Python<'_>,
    scenario_path: Option<String>,
    scenario_text: Option<String>,
    profile: Option<String>,
    sets: Vec<String>,
    interval: Option<f64>,
    name: Option<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    if scenario_path.is_some() == scenario_text.is_some() {
        return Err(PyTypeError::new_err("give exactly one of scenario_path and scenario_text"));
    }
    let r = py.detach(move || -> Result<String, Failure> {
        let sc = match (&scenario_path, &scenario_text) {
            (Some(p), _) => load_scenario(Path::new(p), &sets),
            (None, t) => load_scenario_str(name.as_deref().unwrap_or("<string>"), t.as_deref().unwrap_or(""), &sets),
        }
        .map_err(scenario_failure)?;
        let shown = profile.clone().unwrap_or_default();
        let shown_sets = sets.clone();
        let cb = progress.map(|cb| {
            let p = PyProgress { cb, runs: Default::default() };
            Box::new(move |now: u64, end: Option<u64>| p.call(1, 1, &shown, &shown_sets, now, end)) as api::ProgressFn
        });
        let opts = RunOpts { profile: profile.as_deref(), interval_s: interval, progress: cb, ..Default::default() };
        let (mut report, _sim) = api::run(&sc, opts).map_err(scenario_failure)?;
        if report.params.is_empty() {
            for (k, v) in &sc.sets {
                report.params.insert(k.clone(), serde_json::Value::String(v.clone()));
            }
        }
        Ok(report.to_json_string())
    });
    Ok(r?)
}

/// Run a seed reproduction (`vmlab reproduce SEED`, SEED a name or a number such as `004`) and
/// return its `vmlab.reproduce/1` JSON. The seeds' scenarios are built in; `root` (or
/// `$VMLAB_ROOT`) names a directory holding `scenarios/seeds/` to read them from instead.
/// `progress` is called as `progress(k, n, profile, sets, now_s, end_s)` for run k of n.
#[pyfunction]
#[pyo3(signature = (seed, sets=Vec::new(), root=None, progress=None))]
fn reproduce_json(
    py: Python<'_>,
    seed: String,
    sets: Vec<String>,
    root: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let def = reproduce::find(&seed).ok_or_else(|| {
        let known: Vec<&str> = reproduce::seeds().iter().map(|s| s.name).collect();
        PyValueError::new_err(format!(
            "unknown seed `{seed}`; known seeds: {}",
            if known.is_empty() { "(none yet)".to_string() } else { known.join(", ") }
        ))
    })?;
    let r = py.detach(move || {
        let root = root.or_else(|| std::env::var_os("VMLAB_ROOT").map(PathBuf::from));
        let progress =
            progress.map(|cb| Arc::new(PyProgress { cb, runs: Default::default() }) as Arc<dyn reproduce::Progress>);
        let opts = ReproduceOpts { sets, root, progress, ..Default::default() };
        reproduce::run(&def, opts).map(|(rep, _text)| rep.to_json_string()).map_err(Failure::Other)
    });
    Ok(r?)
}

/// The seed reproductions this build knows, as JSON `[{"name": .., "number": "004", "summary": ..}, ..]`.
#[pyfunction]
fn seeds_json() -> String {
    let v: Vec<serde_json::Value> = reproduce::seeds()
        .iter()
        .map(|s| serde_json::json!({ "name": s.name, "number": format!("{:03}", s.number), "summary": s.summary }))
        .collect();
    serde_json::Value::Array(v).to_string()
}

/// The kernel profiles (mechanism choices and default tunables) as a JSON array.
#[pyfunction]
fn profiles_json() -> PyResult<String> {
    serde_json::to_string(&vmlab_core::profiles::all()).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The version of the vmlab core this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _vmlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce_json, m)?)?;
    m.add_function(wrap_pyfunction!(seeds_json, m)?)?;
    m.add_function(wrap_pyfunction!(profiles_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
