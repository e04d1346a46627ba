//! `vmlab real SCENARIO`: the scenario's workload run with real system calls on the host kernel,
//! inside a memory cgroup whose limit stands in for `machine.memory`, written as the same
//! `vmlab.run/1` JSON as `vmlab run` so that `vmlab compare sim.json real.json` works.
//! Everything is checked before anything is created; see docs/REAL.md for what is emulated.

mod cgroup;
mod check;
mod child;
pub(crate) mod report;
pub(crate) mod run;
mod sample;
mod setup;
mod sweep;
mod tracefs;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Write a kernel control file (a cgroup's or tracefs's): never creates one, so a missing file is
/// an error that names it.
fn write_control(p: &std::path::Path, v: &str) -> Result<(), String> {
    let f = std::fs::OpenOptions::new().write(true).truncate(true).open(p);
    f.and_then(|mut f| std::io::Write::write_all(&mut f, v.as_bytes()))
        .map_err(|e| format!("cannot write `{v}` to {}: {e}", p.display()))
}

use vmlab_core::workload::interp::{compile, Program};
use vmlab_core::workload::{load, load_scenario, units, Scenario, ScenarioError};

pub struct RealArgs {
    pub scenario: PathBuf,
    pub sets: Vec<String>,
    pub json: Option<String>,
    pub interval: Option<f64>,
    pub keep: bool,
    pub dir: Option<PathBuf>,
    /// `--proc DIR`: the host's /proc files at the end of the run, copied as they read.
    pub proc_dir: Option<PathBuf>,
    /// `--no-trace`: no tracefs instance, so no `own` counters.
    pub no_trace: bool,
}

/// Everything the run needs, parsed from the scenario before the host is touched.
struct Prepared {
    memory: u64,
    swap: Option<u64>,
    /// (file name, bytes) for every `[[file]]` copy.
    files: Vec<(String, u64)>,
    progs: Vec<Program>,
    plan: Vec<run::Planned>,
    limits: run::Limits,
}

fn refuse(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("{msg}");
    ExitCode::from(2)
}

pub fn real(a: RealArgs) -> ExitCode {
    if let Err(c) = crate::check_outputs(&[("--json", a.json.as_deref())], &[a.scenario.as_path()]) {
        return c;
    }
    let sc = match load_scenario(&a.scenario, &a.sets) {
        Ok(s) => s,
        Err(e) => return crate::fail(e),
    };
    if let Err(e) = check::check_scenario(&sc) {
        return refuse(format!("vmlab real: {e}"));
    }
    let prep = match prepare(&sc, a.interval) {
        Ok(p) => p,
        Err(e) => return refuse(format!("vmlab real: {e}")),
    };
    if let Err(e) = check::check_root() {
        return refuse(e);
    }
    let (version, parent) = match check::find_memory_cgroup() {
        Ok(c) => c,
        Err(e) => return refuse(e),
    };
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    if !base.is_dir() {
        return refuse(format!("vmlab real: --dir {}: no such directory (it is not created for you)", base.display()));
    }
    run::catch_signals();
    let mut bases = vec![std::env::temp_dir()];
    if !bases.contains(&base) {
        bases.push(base.clone());
    }
    // A v1 run's pressure group lives in the cgroup2 hierarchy (cgroup.rs).
    let mut cg_parents = vec![parent.clone()];
    if version == check::CgVersion::V1 {
        cg_parents.extend(cgroup::cgroup2_mount());
    }
    let (mut swept, mut problems) = sweep::sweep(&cg_parents, &bases);
    tracefs::sweep(&mut swept, &mut problems);
    for s in swept {
        eprintln!("vmlab real: left by an earlier run that was killed: {s}");
    }
    for p in problems {
        eprintln!("vmlab real: {p}");
    }
    let mut env = match setup::Env::new(&base, a.keep) {
        Ok(e) => e,
        Err(e) => return refuse(format!("vmlab real: {e}")),
    };
    if let Err(e) = set_up(&mut env, &prep, version, &parent) {
        drop(env);
        if run::interrupted() {
            eprintln!("vmlab real: interrupted; cleaned up");
            return ExitCode::from(130);
        }
        eprintln!("vmlab real: {e}");
        return ExitCode::from(1);
    }
    if !a.no_trace {
        match tracefs::Tracer::start() {
            Ok(t) => env.tracer = Some(t),
            Err(e) => {
                eprintln!("vmlab real: the workload's own counters are not traced (the run goes on without `own`): {e}")
            }
        }
    }
    let out = match run::supervise(&prep.progs, prep.plan, &mut env, &prep.limits) {
        Ok(o) => o,
        Err(run::Failure::Program { who, offset, len, message }) => {
            let span = vmlab_core::workload::ast::Span { offset, len, line: 0, col: 0 };
            drop(env);
            // An empty span at 0 is no position (`loop { }` has none): not line 1, column 1.
            let message = format!("{who}: {message}");
            if offset == 0 && len == 0 {
                return crate::fail(ScenarioError::new(&sc.path, message));
            }
            return crate::fail(sc.error_at(span, message));
        }
        Err(run::Failure::Other(m)) => {
            drop(env);
            eprintln!("vmlab real: {m}");
            return ExitCode::from(1);
        }
        Err(run::Failure::Interrupted) => {
            drop(env);
            eprintln!("vmlab real: interrupted; cleaned up");
            return ExitCode::from(130);
        }
    };
    let own = env.tracer.as_mut().map(|t| t.finish());
    if let Some(f) = own.as_ref().filter(|f| f.lost > 0) {
        eprintln!("vmlab real: the trace lost {} events: `own` is incomplete (own.complete = false)", f.lost);
    }
    let Some(cg) = env.cgroup.as_ref() else { return ExitCode::from(1) };
    if let Some(d) = &a.proc_dir {
        // The host's files as they read now, so `diff -r` against a simulated run's `--proc`.
        let files: Vec<(&str, String)> = ["meminfo", "vmstat", "stat"]
            .into_iter()
            .filter_map(|n| std::fs::read_to_string(format!("/proc/{n}")).ok().map(|t| (n, t)))
            .collect();
        if let Err(code) = crate::write_proc_dir(d, &files) {
            return code;
        }
    }
    let rep = report::build(&sc, &out, cg, prep.swap, &a.sets, own.as_ref());
    let text = report::text(&rep, &out, cg);
    // On standard error as well: with `--json FILE` the text report is not printed.
    for e in &out.io_errors {
        eprintln!("vmlab real: I/O stopped short (the run did less than the scenario asks): {e}");
    }
    drop(env);
    report::emit(&rep, &text, a.json.as_deref())
}

fn set_up(
    env: &mut setup::Env,
    prep: &Prepared,
    version: check::CgVersion,
    parent: &std::path::Path,
) -> Result<(), String> {
    for (name, bytes) in &prep.files {
        env.make_file(name, *bytes)?;
    }
    if let Some(s) = prep.swap {
        env.make_swap(s)?;
    }
    if run::interrupted() {
        return Err(setup::INTERRUPTED.into());
    }
    env.cgroup = Some(cgroup::Cgroup::create(version, parent, prep.memory, prep.swap.unwrap_or(0))?);
    Ok(())
}

fn prepare(sc: &Scenario, interval: Option<f64>) -> Result<Prepared, ScenarioError> {
    let f = &sc.file;
    let err = |what: &str, e: String| ScenarioError::new(&sc.path, format!("{what}: {e}"));
    let dur = |s: &Option<String>, what: &str| -> Result<Option<Duration>, ScenarioError> {
        s.as_ref().map(|d| units::parse_duration(d).map(Duration::from_nanos).map_err(|e| err(what, e))).transpose()
    };
    let memory = units::parse_size(&f.machine.memory).map_err(|e| err("machine.memory", e))?;
    if memory < (4 << 20) {
        return Err(err("machine.memory", format!("{memory} bytes is too small for a cgroup limit (at least 4 MiB)")));
    }
    let swap = f.swap.as_ref().map(|s| units::parse_size(&s.size).map_err(|e| err("swap.size", e))).transpose()?;
    if swap.is_some_and(|s| s < (1 << 20)) {
        return Err(err("swap.size", "a swap file needs at least 1 MiB".into()));
    }
    let mut files = Vec::new();
    for fs in &f.files {
        let bytes = units::size_from_value(&fs.size).map_err(|e| err(&format!("file `{}` size", fs.name), e))?;
        for i in 0..fs.count {
            files.push((fs.name.replace("{i}", &i.to_string()), bytes));
        }
    }
    // The same sizes from the same stream as the simulator's tree (sim.rs), so file `bin7` has
    // one size in both.
    for (ti, t) in sc.setup.filetrees.iter().enumerate() {
        let mut rng = vmlab_core::prandom::stream(f.seed, vmlab_core::prandom::Stream::FileTree, ti as u64);
        let sizes = vmlab_core::dist::file_tree_sizes(&mut rng, t.total_bytes, t.mean_bytes.max(1), t.sigma);
        for (i, s) in sizes.iter().enumerate() {
            let name =
                if t.name.contains("{i}") { t.name.replace("{i}", &i.to_string()) } else { format!("{}{i}", t.name) };
            files.push((name, *s));
        }
    }
    let mut progs = Vec::new();
    let mut plan = Vec::new();
    for (pi, pd) in sc.processes.iter().enumerate() {
        progs.push(compile(&pd.program).map_err(|e| sc.error_at(e.span, e.message))?);
        for c in 0..pd.count {
            let name = if pd.count > 1 { format!("{}.{c}", pd.name) } else { pd.name.clone() };
            plan.push(run::Planned {
                prog: pi,
                copy: c,
                name,
                start: Duration::from_nanos(pd.start_ns),
                memlock_pages: pd.memlock_limit,
            });
        }
    }
    plan.sort_by_key(|p| p.start);
    let duration = dur(&f.duration, "duration")?;
    // Without `duration` a real run lasts as long as its processes: the supervisor stops
    // sampling at the timeline's limit instead.
    let limit = duration.map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64);
    // The host is read at most every 10 ms: a reading takes about a millisecond.
    let interval = match interval {
        Some(i) => vmlab_core::api::interval_ns(i, limit).map_err(|m| ScenarioError::new(&sc.path, m))?,
        None => dur(&f.interval, "interval")?.map_or(1_000_000_000, |d| d.as_nanos() as u64),
    };
    let interval = Duration::from_nanos(interval.clamp(10_000_000, load::MAX_INTERVAL_NS));
    let limits = run::Limits {
        interval,
        duration,
        linger: dur(&f.linger, "linger")?.unwrap_or_default(),
        seed: f.seed,
        cpus: f.machine.cpus,
        nodes: f.machine.nodes,
    };
    Ok(Prepared { memory, swap, files, progs, plan, limits })
}
