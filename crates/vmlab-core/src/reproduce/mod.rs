//! `vmlab reproduce SEED`: run a seed's scenario under the profile that had the problem and the
//! one that fixed it, and print the result in the seed's own form. Each seed is one module;
//! none of them changes what the mechanisms do — they choose scenarios, profiles and what to
//! print, and measure.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::api::ProgressFn;
use crate::stats::report::{ReproduceReport, RunReport};
use crate::workload::Scenario;

/// A timing line on standard error that cannot panic when standard error is closed or full.
macro_rules! note {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}
pub(crate) use note;

pub mod google_mlock;
pub mod kswapd_high_order;
pub mod mmap_sem;
pub mod quicklists;
pub mod shm_big_iron;

/// The shortest `--duration`: the steady window is the run's second half, and its MemFree mean
/// needs a few samples of the timeline.
pub const MIN_DURATION_S: u64 = 60;

/// One seed reproduction.
pub struct SeedDef {
    pub name: &'static str,
    /// The seed's number in docs/SEEDS.md (`vmlab reproduce 004` is `mmap-sem`).
    pub number: u32,
    pub summary: &'static str,
    /// The profiles the reproduction runs: what `--set PROFILE:KEY=VALUE` may name.
    pub profiles: &'static [&'static str],
    /// How many simulations the reproduction makes (a progress report's `run k/N`).
    pub runs: usize,
    /// The runs `--duration` lengthens, for a seed whose problem grew over a server's uptime;
    /// None when the seed's runs have no history to lengthen.
    pub long_runs: Option<&'static str>,
    /// Run everything; return the JSON report and the text to print.
    pub run: fn(&ReproduceOpts) -> Result<(ReproduceReport, String), String>,
}

/// Options common to every reproduction.
#[derive(Default)]
pub struct ReproduceOpts {
    /// `--set` overrides applied to every run's scenario; one written `PROFILE:KEY=VALUE` is
    /// applied only to the runs of that profile (see [`scope_of`]).
    pub sets: Vec<String>,
    /// A directory holding `scenarios/seeds/` to read the seeds' scenarios from; without one,
    /// the copies built into the program are used, so an installed binary or wheel reproduces
    /// from anywhere.
    pub root: Option<PathBuf>,
    /// Also report wall-clock time and host memory (on standard error, never in the text, which
    /// must be byte-identical from run to run and machine to machine).
    pub timing: bool,
    /// Seeds with an ablation (shm-big-iron): run every combination of the fixes.
    pub ablate: bool,
    /// Told as each run starts and as it goes.
    pub progress: Option<Arc<dyn Progress>>,
    /// The reproduction's number of runs (`SeedDef::runs`); `run` sets it.
    pub runs: usize,
    /// Runs started (or numbered ahead by [`ReproduceOpts::in_parallel`]) so far.
    pub started: AtomicUsize,
    /// Runs at once (`--jobs`); 0 is one per CPU of the host. Runs are independent simulations,
    /// so the outputs are the same whatever the number: only wall time and peak memory change.
    pub jobs: usize,
    /// `--trace DIR`: each run whose release has tracepoints writes its ftrace text to
    /// `DIR/NN-PROFILE.trace` (NN the run's number), keeping only `events` when any are named.
    pub trace: Option<TraceOpts>,
    /// `--duration`: the length, in whole seconds, of the seed's long-history runs
    /// (`SeedDef::long_runs`); None keeps the scenario's own.
    pub duration_s: Option<u64>,
}

thread_local! {
    /// The number [`ReproduceOpts::in_parallel`] gave the run this thread is about to start.
    static RUN_NUMBER: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// A run's trace file and the writer that fills it.
type TraceFile = (PathBuf, Box<dyn crate::trace::Tracer>);

/// Where and what `--trace` writes.
#[derive(Clone, Debug, Default)]
pub struct TraceOpts {
    pub dir: PathBuf,
    pub events: Vec<String>,
}

/// What a long reproduction reports as it goes (a terminal's progress line, a notebook's bar).
/// Runs may go on in parallel threads, so every call names its run.
pub trait Progress: Send + Sync {
    /// Run `k` of `n` (counted from 1) starts under `profile` with these overrides.
    fn run_start(&self, k: usize, n: usize, profile: &str, sets: &[String]);
    /// Run `k` has reached simulated time `now_ns`, of `end_ns` when its scenario has a duration.
    fn tick(&self, k: usize, now_ns: u64, end_ns: Option<u64>);
}

/// The seeds' scenarios, built into the program.
pub const SEED_SCENARIOS: &[(&str, &str)] = &[
    ("google-mlock.toml", include_str!("../../../../scenarios/seeds/google-mlock.toml")),
    ("kswapd-high-order.toml", include_str!("../../../../scenarios/seeds/kswapd-high-order.toml")),
    (
        "kswapd-high-order-mailserver.toml",
        include_str!("../../../../scenarios/seeds/kswapd-high-order-mailserver.toml"),
    ),
    ("kswapd-high-order-mmtests.toml", include_str!("../../../../scenarios/seeds/kswapd-high-order-mmtests.toml")),
    ("kswapd-high-order-streaming.toml", include_str!("../../../../scenarios/seeds/kswapd-high-order-streaming.toml")),
    ("mmap-sem.toml", include_str!("../../../../scenarios/seeds/mmap-sem.toml")),
    ("quicklists.toml", include_str!("../../../../scenarios/seeds/quicklists.toml")),
    ("shm-big-iron.toml", include_str!("../../../../scenarios/seeds/shm-big-iron.toml")),
];

impl ReproduceOpts {
    /// Load the seed scenario `file` with `extra` overrides and then the user's that apply to
    /// every profile (for what the seed reads of the scenario outside a run).
    pub fn load(&self, file: &str, extra: &[String]) -> Result<Scenario, String> {
        self.load_for(file, None, extra)
    }

    /// Load the seed scenario `file` for a run under `profile`: `extra` overrides, then the
    /// user's, those scoped to `profile` among them.
    pub fn load_for(&self, file: &str, profile: Option<&str>, extra: &[String]) -> Result<Scenario, String> {
        let mut sets: Vec<String> = extra.to_vec();
        sets.extend(self.sets_for(profile));
        let sc = match &self.root {
            Some(root) => crate::workload::load_scenario(&root.join("scenarios").join("seeds").join(file), &sets),
            None => {
                let text = SEED_SCENARIOS
                    .iter()
                    .find(|(f, _)| *f == file)
                    .map(|(_, t)| *t)
                    .ok_or_else(|| format!("no seed scenario `{file}` is built into this program"))?;
                crate::workload::load_scenario_str(&format!("scenarios/seeds/{file}"), text, &sets)
            }
        };
        sc.map_err(crate::api::render)
    }

    /// The user's sets for a run under `profile` (None: every profile), in the order given, a
    /// scoped one without its `PROFILE:`.
    pub fn sets_for(&self, profile: Option<&str>) -> Vec<String> {
        self.sets
            .iter()
            .filter_map(|s| match scope_of(s) {
                None => Some(s.clone()),
                Some((p, set)) if Some(p) == profile => Some(set.to_string()),
                Some(_) => None,
            })
            .collect()
    }

    /// Count a run as started; its number (from 1) and its progress callback, if anyone listens.
    pub fn begin_run(&self, profile: &str, sets: &[String]) -> (usize, Option<ProgressFn>) {
        let k = RUN_NUMBER.with(|n| n.take()).unwrap_or_else(|| self.started.fetch_add(1, Ordering::Relaxed) + 1);
        let Some(p) = self.progress.as_ref().map(Arc::clone) else { return (k, None) };
        p.run_start(k, self.runs.max(k), profile, sets);
        (k, Some(Box::new(move |now, end| p.tick(k, now, end))))
    }

    /// Run `jobs` (one simulation each) on up to `self.jobs` threads and return their results in
    /// the order given. Each job's run takes the number it would have had run one after another,
    /// so `--trace` file names and progress lines do not depend on which thread starts first.
    pub fn in_parallel<T: Send>(&self, jobs: Vec<Box<dyn FnOnce() -> T + Send + '_>>) -> Vec<T> {
        let costs = vec![0; jobs.len()];
        self.in_parallel_costliest_first(jobs, &costs)
    }

    /// [`ReproduceOpts::in_parallel`], starting the jobs in decreasing order of `costs` (an
    /// estimate of each job's host time; ties in the order given). Only the start order
    /// changes: numbers and results are as given. With more jobs than threads, the longest
    /// ones started last leave the other threads idle at the end (shm-big-iron's aa2 run, the
    /// longest of its three, started third after two shorter ones: the wall time was the
    /// shortest run's plus the longest's).
    pub fn in_parallel_costliest_first<T: Send>(
        &self,
        jobs: Vec<Box<dyn FnOnce() -> T + Send + '_>>,
        costs: &[u64],
    ) -> Vec<T> {
        let base = self.started.fetch_add(jobs.len(), Ordering::Relaxed);
        let threads = match self.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
        .clamp(1, jobs.len().max(1));
        let mut order: Vec<(usize, Box<dyn FnOnce() -> T + Send + '_>)> = jobs.into_iter().enumerate().collect();
        order.sort_by_key(|&(i, _)| std::cmp::Reverse(costs.get(i).copied().unwrap_or(0)));
        let queue = std::sync::Mutex::new(order.into_iter());
        let done = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                    let Some((i, job)) = next else { break };
                    RUN_NUMBER.with(|n| n.set(Some(base + i + 1)));
                    let out = job();
                    done.lock().unwrap_or_else(|e| e.into_inner()).push((i, out));
                });
            }
        });
        let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
        done.sort_by_key(|&(i, _)| i);
        done.into_iter().map(|(_, t)| t).collect()
    }

    /// Run `k`'s ftrace writer under `--trace`, when its release has tracepoints; the file name.
    fn trace_writer(&self, sc: &Scenario, profile: &str, k: usize) -> Result<Option<TraceFile>, String> {
        let Some(t) = &self.trace else { return Ok(None) };
        // A bad profile is api::run's to report, with its position.
        let Ok(p) = crate::sim::resolve_profile(sc, Some(profile)) else { return Ok(None) };
        let Some(fmt) = p.tracepoints else { return Ok(None) };
        let file = t.dir.join(format!("{k:02}-{profile}.trace"));
        let w = crate::stats::ftrace::FtraceWriter::create(&file, fmt, &t.events).map_err(|m| format!("vmlab: {m}"))?;
        Ok(Some((file, Box::new(w))))
    }
}

/// Run a seed reproduction with `opts` (whose `runs` it sets). The user's `--set`s are recorded
/// in every run's `params`, so a comparison can say what differed.
pub fn run(def: &SeedDef, mut opts: ReproduceOpts) -> Result<(ReproduceReport, String), String> {
    opts.runs = def.runs;
    if let Some(d) = opts.duration_s {
        let Some(what) = def.long_runs else {
            return Err(format!(
                "vmlab reproduce {}: --duration lengthens a seed's server history, and this seed has none",
                def.name
            ));
        };
        if d < MIN_DURATION_S {
            return Err(format!(
                "vmlab reproduce {}: --duration {d}s is too short to have a steady window: at least {MIN_DURATION_S}s",
                def.name
            ));
        }
        if opts.sets.iter().any(|s| matches!(s.split_once('=').map(|(k, _)| k.trim()), Some("duration" | "interval"))) {
            return Err(format!(
                "vmlab reproduce {}: --duration sets the {what}' duration and timeline interval; leave out --set duration= and --set interval=",
                def.name
            ));
        }
    }
    check_sets(def, &opts.sets)?;
    let (mut rep, text) = (def.run)(&opts)?;
    for r in rep.runs.iter_mut() {
        crate::stats::report::record_sets(&mut r.params, &opts.sets_for(Some(&r.profile)));
    }
    Ok((rep, text))
}

/// `PROFILE:KEY=VALUE` (a `:` before the first `=`): the profile a `--set` is scoped to, and the
/// set itself. A knob only some of a seed's kernels have (`linux-2.4.9:reclaim.bdflush=true`)
/// is set for that kernel's runs alone.
pub fn scope_of(set: &str) -> Option<(&str, &str)> {
    let colon = set.find(':')?;
    if set.find('=').is_some_and(|eq| eq < colon) {
        return None;
    }
    Some((set[..colon].trim(), set[colon + 1..].trim_start()))
}

/// Refuse, before anything runs, a `--set` scoped to a profile the seed does not run, and a
/// `vm.`/`reclaim.` knob one of the runs' engines does not read (the run's own profile check,
/// done up front; for a knob some of the seed's profiles read, name the scoped form).
fn check_sets(def: &SeedDef, sets: &[String]) -> Result<(), String> {
    let runs = def.profiles.join(", ");
    for set in sets {
        let Some((p, _)) = scope_of(set) else { continue };
        if def.profiles.contains(&p) {
            continue;
        }
        if crate::profiles::find(p).is_none() {
            let hint = crate::profiles::suggest_name(p).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
            return Err(format!("--set {set}: unknown profile `{p}`{hint} (vmlab reproduce {} runs {runs})", def.name));
        }
        return Err(format!("--set {set}: vmlab reproduce {} runs no `{p}`; its profiles are {runs}", def.name));
    }
    // (set, scope, section, key, value) of the `vm.`/`reclaim.` sets, in order.
    let knobs: Vec<(&String, Option<&str>, &str, &str, toml::Value)> = sets
        .iter()
        .filter_map(|set| {
            let (scope, body) = scope_of(set).map_or((None, set.as_str()), |(p, b)| (Some(p), b));
            let (key, value) = body.split_once('=')?;
            let (section, name) = key.trim().split_once('.')?;
            crate::profiles::Section::parse(section)?;
            let value = crate::workload::load::set_value(value.trim());
            Some((set, scope, section, name, value))
        })
        .collect();
    let mut refused: Vec<(&String, &str, String)> = Vec::new();
    for &name in def.profiles {
        let Some(mut p) = crate::profiles::find(name) else { continue };
        let mine = knobs.iter().filter(|k| k.1.is_none_or(|s| s == name));
        for (set, _, section, key, value) in mine.clone() {
            p.set(section, key, value).map_err(|e| format!("--set {set}: {e}"))?;
        }
        for (set, scope, section, key, _) in mine {
            if let Err(e) = p.check_read(section, key) {
                if scope.is_some() {
                    return Err(format!("--set {set}: {e}"));
                }
                refused.push((*set, name, e));
            }
        }
    }
    let Some((set, _, e)) = refused.first() else { return Ok(()) };
    let readers: Vec<&str> =
        def.profiles.iter().copied().filter(|p| !refused.iter().any(|(s, q, _)| s == set && q == p)).collect();
    if readers.is_empty() {
        return Err(format!("--set {set}: {e}"));
    }
    let scoped: Vec<String> = readers.iter().map(|p| format!("--set {p}:{}", set.trim())).collect();
    Err(format!("--set {set}: {e}; to set it for the runs whose profile reads it, scope it: {}", scoped.join(" ")))
}

pub fn seeds() -> Vec<SeedDef> {
    vec![
        google_mlock::def(),
        kswapd_high_order::def(),
        mmap_sem::def(),
        SeedDef {
            name: "shm-big-iron",
            number: 2,
            summary: "002: swapping SysV shm on a 32 GB box, 2.4.23aa1 vs aa2",
            profiles: &shm_big_iron::PROFILES,
            runs: shm_big_iron::PROFILES.len(),
            long_runs: None,
            run: shm_big_iron::run,
        },
        SeedDef {
            name: quicklists::SEED,
            number: 3,
            summary: "003: per-CPU page-table quicklists grow with the CPU count (linux-2.6.26 -> 2.6.27)",
            profiles: &quicklists::PROFILES,
            runs: quicklists::RUNS,
            long_runs: None,
            run: quicklists::run,
        },
    ]
}

/// A seed by name (`mmap-sem`) or by number (`004`, `4`).
pub fn find(name: &str) -> Option<SeedDef> {
    let number = name.parse::<u32>().ok().filter(|_| name.bytes().all(|b| b.is_ascii_digit()));
    seeds().into_iter().find(|s| s.name == name || number == Some(s.number))
}

/// Load `scenarios/seeds/NAME.toml` (see `ReproduceOpts::load`) with the user's sets plus extra ones, run it under a
/// profile, and return the report.
pub fn run_seed_scenario(
    opts: &ReproduceOpts,
    file: &str,
    profile: &str,
    extra_sets: &[String],
    tracers: Vec<Box<dyn crate::trace::Tracer>>,
) -> Result<(RunReport, crate::sim::Sim), String> {
    run_seed_scenario_sampled(opts, file, profile, extra_sets, tracers, None)
}

/// `run_seed_scenario` with a hook called after each timeline sample (`Sim::on_sample`), for a
/// seed whose figures need the machine's state at a moment of the run, not only at its end.
pub fn run_seed_scenario_sampled(
    opts: &ReproduceOpts,
    file: &str,
    profile: &str,
    extra_sets: &[String],
    tracers: Vec<Box<dyn crate::trace::Tracer>>,
    on_sample: Option<crate::sim::SampleHook>,
) -> Result<(RunReport, crate::sim::Sim), String> {
    let sc = opts.load_for(file, Some(profile), extra_sets)?;
    let (k, progress) = opts.begin_run(profile, extra_sets);
    let mut tracers = tracers;
    let trace = opts.trace_writer(&sc, profile, k)?;
    let trace_file = trace.map(|(f, w)| {
        tracers.push(w);
        f
    });
    let o = crate::api::RunOpts { profile: Some(profile), tracers, progress, on_sample, ..Default::default() };
    let (mut rep, sim) = crate::api::run(&sc, o).map_err(crate::api::render)?;
    if let Some(f) = trace_file {
        if let Some(e) = sim.k.tracer::<crate::stats::ftrace::FtraceWriter>().and_then(|w| w.error.as_ref()) {
            return Err(format!("vmlab: --trace {}: cannot write: {e}", f.display()));
        }
        rep.params.insert("trace_file", serde_json::json!(f.to_string_lossy()));
    }
    Ok((rep, sim))
}

/// Find a repository root (the directory holding `scenarios/seeds/`): `$VMLAB_ROOT`, else the
/// tree the executable was built in, else the current directory (never a parent of it); for
/// tests and for reading edited scenarios instead of the built-in ones.
pub fn find_root() -> Option<PathBuf> {
    let env = std::env::var_os("VMLAB_ROOT").map(PathBuf::from);
    let cands = root_candidates(env, std::env::current_exe().ok(), std::env::current_dir().ok());
    cands.into_iter().find(|p| p.join("scenarios").join("seeds").is_dir())
}

/// Where seeds are looked for, in order. The executable's own tree comes before the current
/// directory, and no parent of the current directory is a candidate: a `scenarios/seeds` that
/// happens to lie above where the command runs is somebody else's (another checkout, an old
/// copy), and silently running its seeds instead of the binary's would reproduce the wrong thing.
fn root_candidates(env: Option<PathBuf>, exe: Option<PathBuf>, cwd: Option<PathBuf>) -> Vec<PathBuf> {
    let mut cands: Vec<PathBuf> = env.into_iter().collect();
    // A cargo build puts the binary in target/{debug,release}/: the tree is two levels up.
    if let Some(e) = exe {
        cands.extend(e.ancestors().skip(1).take(3).map(std::path::Path::to_path_buf));
    }
    cands.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    cands.extend(cwd);
    cands
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs on several threads come back in the order given, and each run's number is the one it
    /// would have had one after another, whichever thread starts it.
    #[test]
    fn parallel_runs_keep_their_order_and_numbers() {
        for jobs in [1, 3, 8] {
            let o = ReproduceOpts { jobs, ..Default::default() };
            let _ = o.begin_run("first", &[]);
            let work: Vec<Box<dyn FnOnce() -> (usize, usize) + Send + '_>> = (0..6usize)
                .map(|i| {
                    let o = &o;
                    Box::new(move || {
                        // Uneven lengths, so later jobs can finish first.
                        std::thread::sleep(std::time::Duration::from_millis(((6 - i) * 3) as u64));
                        (i, o.begin_run("p", &[]).0)
                    }) as Box<dyn FnOnce() -> (usize, usize) + Send + '_>
                })
                .collect();
            let got = o.in_parallel(work);
            assert_eq!(got, (0..6).map(|i| (i, i + 2)).collect::<Vec<_>>(), "jobs = {jobs}");
            assert_eq!(o.begin_run("last", &[]).0, 8, "numbering goes on after the parallel runs");
        }
    }

    /// The costliest jobs start first (ties in the order given), yet results and run numbers
    /// stay those of the order given.
    #[test]
    fn the_costliest_runs_start_first_and_keep_their_order_and_numbers() {
        let costs = [1, 5, 0, 5, 3];
        for jobs in [1, 2] {
            let o = ReproduceOpts { jobs, ..Default::default() };
            let started = std::sync::Mutex::new(Vec::new());
            let work: Vec<Box<dyn FnOnce() -> (usize, usize) + Send + '_>> = (0..costs.len())
                .map(|i| {
                    let (o, started) = (&o, &started);
                    Box::new(move || {
                        started.lock().unwrap().push(i);
                        (i, o.begin_run("p", &[]).0)
                    }) as Box<dyn FnOnce() -> (usize, usize) + Send + '_>
                })
                .collect();
            let got = o.in_parallel_costliest_first(work, &costs);
            assert_eq!(got, (0..costs.len()).map(|i| (i, i + 1)).collect::<Vec<_>>(), "jobs = {jobs}");
            let started = started.into_inner().unwrap();
            // With two threads the log's order is the threads' race, not the queue's.
            if jobs == 1 {
                assert_eq!(started, vec![1, 3, 4, 0, 2]);
            }
        }
    }

    /// `PROFILE:KEY=VALUE` reaches the scenario of that profile's runs only, without its
    /// scope; unscoped sets reach every run, in the order given.
    #[test]
    fn a_scoped_set_reaches_only_its_profiles_runs() {
        assert_eq!(scope_of("linux-2.4.9:reclaim.bdflush=true"), Some(("linux-2.4.9", "reclaim.bdflush=true")));
        assert_eq!(scope_of("process.google.program=sleep 1: x"), None, "a `:` in the value is no scope");
        let sets = ["vm.page_cluster=3", "linux-2.4.9:reclaim.bdflush=true", "linux-6.8:vm.swappiness=10"];
        let o = ReproduceOpts { sets: sets.map(String::from).to_vec(), ..Default::default() };
        assert_eq!(o.sets_for(Some("linux-2.4.9")), ["vm.page_cluster=3", "reclaim.bdflush=true"]);
        assert_eq!(o.sets_for(Some("linux-2.4.9-phillips")), ["vm.page_cluster=3"]);
        assert_eq!(o.sets_for(None), ["vm.page_cluster=3"]);
        let sc = o.load_for("google-mlock.toml", Some("linux-2.4.9"), &[]).unwrap();
        assert_eq!(sc.file.reclaim.get("bdflush"), Some(&toml::Value::Boolean(true)));
        let sc = o.load_for("google-mlock.toml", Some("linux-6.8"), &[]).unwrap();
        assert_eq!(sc.file.reclaim.get("bdflush"), None);
        assert_eq!(sc.file.vm.get("swappiness"), Some(&toml::Value::Integer(10)));
    }

    /// Before anything runs: a scope naming a profile the seed does not run, and a knob a run's
    /// engine does not read — with the scoped form to write when some of the runs read it.
    #[test]
    fn sets_a_run_would_refuse_are_refused_before_the_runs() {
        let def = find("google-mlock").unwrap();
        let check = |sets: &[&str]| check_sets(&def, &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        check(&["linux-2.4.9:reclaim.bdflush=true", "linux-2.4.9-phillips:vm.bdflush_nfract=40"]).unwrap();
        check(&["machine.cpus=4", "linux-6.8:machine.cpus=2", "vm.min_free_kbytes=1024"]).unwrap();
        assert_eq!(
            check(&["linux-2.6.38:vm.swappiness=10"]).unwrap_err(),
            "--set linux-2.6.38:vm.swappiness=10: vmlab reproduce google-mlock runs no `linux-2.6.38`; its profiles \
             are linux-2.4.9, linux-2.4.9-phillips, linux-6.8"
        );
        assert!(check(&["linux-2.4.99:reclaim.bdflush=true"])
            .unwrap_err()
            .starts_with("--set linux-2.4.99:reclaim.bdflush=true: unknown profile `linux-2.4.99`; did you mean"));
        let e = check(&["linux-6.8:reclaim.bdflush=true"]).unwrap_err();
        assert!(
            e.starts_with("--set linux-6.8:reclaim.bdflush=true: `reclaim.bdflush` is not read by the modern engine"),
            "{e}"
        );
        let e = check(&["reclaim.bdflush=true"]).unwrap_err();
        assert!(e.starts_with("--set reclaim.bdflush=true: `reclaim.bdflush` is not read by the modern engine"), "{e}");
        assert!(
            e.ends_with(
                "scope it: --set linux-2.4.9:reclaim.bdflush=true --set linux-2.4.9-phillips:reclaim.bdflush=true"
            ),
            "{e}"
        );
        assert!(check(&["linux-2.4.9:vm.bdflush_nfract=101"]).unwrap_err().contains("is out of range"));
    }

    #[test]
    fn seeds_are_not_looked_for_above_the_current_directory() {
        let cwd = PathBuf::from("/home/u/elsewhere/deep/dir");
        let c = root_candidates(None, Some("/opt/vmlab/target/release/vmlab".into()), Some(cwd.clone()));
        assert!(c.iter().all(|p| !cwd.starts_with(p) || *p == cwd), "{c:?}");
        assert!(c.contains(&PathBuf::from("/opt/vmlab")), "the executable's tree: {c:?}");
        let env = root_candidates(Some("/r".into()), None, Some(cwd.clone()));
        assert_eq!(env[0], PathBuf::from("/r"));
        assert_eq!(env.last(), Some(&cwd), "the current directory comes last");
    }
}
