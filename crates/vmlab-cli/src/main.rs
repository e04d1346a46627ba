//! `vmlab`: run scenarios on the simulated Linux memory manager and report in the kernel's
//! formats. Bad input exits with status 2 and a diagnostic naming file, line and column.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// `eprintln!` that cannot panic: with standard error closed or full (`2>/dev/full`) the
/// message is lost, but the exit status still tells what happened. Defined before the modules
/// so that it shadows std's in all of them.
macro_rules! eprintln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

mod host;
mod plot;
mod progress;
mod real;
use vmlab_core::api::{self, RunOpts};
use vmlab_core::stats::{compare, profile_fmt, report::RunReport, timeline};

#[derive(Parser)]
#[command(
    name = "vmlab",
    version,
    about = "A laboratory for the Linux memory manager: the kernel's VM as a deterministic simulated machine"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and explain it: why kswapd was awake (by its era's own test), who waited
    /// for mmap_sem, and where kernel time went.
    Explain {
        /// The scenario file (TOML; see docs/SCENARIOS.md).
        scenario: PathBuf,
        /// Kernel profile overriding the scenario's (see `vmlab profiles`).
        #[arg(long)]
        profile: Option<String>,
        /// Override a scenario field or tunable, as on `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Run a scenario and print its vmstat timeline, CPU use, kernel profile and counters.
    Run {
        /// The scenario file (TOML; see docs/SCENARIOS.md).
        scenario: PathBuf,
        /// Kernel profile overriding the scenario's (see `vmlab profiles`).
        #[arg(long)]
        profile: Option<String>,
        /// Override a scenario field or tunable: `--set machine.memory=3584MiB`, `--set vm.swappiness=100`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Write the run as JSON (schema vmlab.run/1) to FILE, or `-` for standard output.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
        /// Write the timeline as CSV to FILE.
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// Timeline sampling interval in simulated seconds.
        #[arg(long, value_name = "SECONDS")]
        interval: Option<f64>,
        /// Write each memory cgroup's LRU lists and dirty and under-writeback file pages at every
        /// timeline sample (see --interval) as CSV to FILE, in pages: the series
        /// `scripts/memcg-series.sh` samples from a `vmlab real` run's cgroup.
        #[arg(long, value_name = "FILE")]
        cgroup_series: Option<PathBuf>,
        /// Also report wall-clock time: `wall_s` in the JSON and a timing line on standard error.
        /// Off by default, so that the same scenario and seed give byte-identical output.
        #[arg(long)]
        timing: bool,
        /// Write the end-of-run /proc files into DIR (created if needed) as the profile's release
        /// prints them, zeros included: `meminfo`, `vmstat` (2.6+), `stat`.
        #[arg(long = "proc", value_name = "DIR")]
        proc_dir: Option<PathBuf>,
        /// Write the run's tracepoints to FILE in ftrace text form, each event in its release's
        /// TP_printk format (2.6.36+; trace-vmscan-postprocess.pl reads it).
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// With --trace: only these events (comma-separated names, as `mm_vmscan_lru_isolate`).
        #[arg(long, value_name = "EVENT,...", value_delimiter = ',', requires = "trace")]
        events: Vec<String>,
        /// Write every refault's activation test to FILE, one line each: the time, the refault
        /// distance, the workingset size it was compared with and the lists that size was summed
        /// from, whether the folio was activated and restored (vmlab's own; Linux has no
        /// tracepoint there).
        #[arg(long, value_name = "FILE")]
        refaults: Option<PathBuf>,
        /// Simulate this host as `vmlab real` runs the scenario on it: the machine's RAM, CPUs,
        /// vm sysctls and disk readahead read from /proc and /sys, its disk measured once (see
        /// --disk-dir) with that device's queue limits (max_sectors_kb, max_segments), a cost
        /// calibration if one is installed (scripts/calibrate-costs.sh), and
        /// the workload in a memory cgroup limited to the scenario's `machine.memory` (docs/REAL.md).
        #[arg(long)]
        host: bool,
        /// With --host: measure the host's disk on this directory's file system (default: the
        /// temp directory, where `vmlab real` works without --dir); the figures are cached per
        /// device (`$VMLAB_CACHE_DIR`, else `~/.cache/vmlab/host-disk-MAJ-MIN.json`).
        #[arg(long, value_name = "DIR", requires = "host")]
        disk_dir: Option<PathBuf>,
        /// With --host: measure the disk again instead of taking the cached figures.
        #[arg(long, requires = "host")]
        remeasure: bool,
    },
    /// Reproduce a historical VM failure (seed), before and after its fix, in the seed's own form.
    Reproduce {
        /// Seed name or number: `mmap-sem` or `004` (run `vmlab reproduce --list`).
        seed: Option<String>,
        /// List the seeds.
        #[arg(long)]
        list: bool,
        /// Override a field of every run's scenario (as on `run`); `PROFILE:KEY=VALUE` overrides
        /// it in that profile's runs only: `--set linux-2.4.9:reclaim.bdflush=true`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Write the result as JSON (schema vmlab.reproduce/1) to FILE, or `-` for standard output.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
        /// Also report wall-clock time: `wall_s` in the JSON and a timing line on standard error.
        /// Off by default, so that the same scenario and seed give byte-identical output.
        #[arg(long)]
        timing: bool,
        /// Run every combination of the seed's fixes (shm-big-iron: its three switches).
        #[arg(long)]
        ablate: bool,
        /// Simulations at once (default: one per CPU). The output is the same for any number;
        /// peak memory grows with it.
        #[arg(short, long, value_name = "N", default_value_t = 0, hide_default_value = true)]
        jobs: usize,
        /// Write each run's tracepoints into DIR (created if needed) as `NN-PROFILE.trace`, in
        /// ftrace text form as on `run`; runs of releases without mm tracepoints write none.
        #[arg(long, value_name = "DIR")]
        trace: Option<PathBuf>,
        /// With --trace: only these events (comma-separated names, as `mm_vmscan_lru_isolate`).
        #[arg(long, value_name = "EVENT,...", value_delimiter = ',', requires = "trace")]
        events: Vec<String>,
        /// Run the seed's server history this long (`24h`, `14400s`; whole seconds) instead of
        /// its scenario's length: kswapd-high-order's four mail-server runs. The steady window
        /// (the second half) is stated in the text and in each run's JSON `params`.
        #[arg(long, value_name = "DURATION")]
        duration: Option<String>,
    },
    /// List the kernel profiles and their mechanism tables; `vmlab profiles NAME` shows one,
    /// `vmlab profiles A B` only the fields that differ between them.
    Profiles {
        /// Profiles to show (all when none are named).
        names: Vec<String>,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario's workload on this host's kernel in a memory cgroup; same JSON as `run`.
    ///
    /// The processes make real system calls, in a memory cgroup whose limit stands in for
    /// machine.memory (with a swap file if the scenario has [swap]); the JSON is `run`'s, for
    /// `vmlab compare sim.json real.json`. /proc/vmstat deltas are host-wide; the workload's own
    /// reclaim counters, traced in its tasks through a tracefs instance, are the JSON's `own`.
    /// Needs root and a memory cgroup; refuses (exit 2) what it cannot do yet. See docs/REAL.md.
    Real {
        /// The scenario file (TOML; see docs/SCENARIOS.md).
        scenario: PathBuf,
        /// Override a scenario field, as on `run`: `--set machine.memory=256MiB`, `--set vars.n=4`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Write the run as JSON (schema vmlab.run/1, `params.real = true`) to FILE, or `-` for standard output.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
        /// Sampling interval in seconds (default: the scenario's `interval`, else 1).
        #[arg(long, value_name = "SECONDS")]
        interval: Option<f64>,
        /// Keep the cgroup and the working directory afterwards (the swap file is always removed).
        #[arg(long)]
        keep: bool,
        /// Make the working directory (scenario files, swap file) under DIR instead of the temp dir.
        /// Use a disk-backed file system: files on tmpfs are RAM, and swapon refuses them.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Copy the host's /proc/meminfo, /proc/vmstat and /proc/stat into DIR at the end of the
        /// run, as `run --proc` writes the simulated ones.
        #[arg(long = "proc", value_name = "DIR")]
        proc_dir: Option<PathBuf>,
        /// Do not trace the workload's own reclaim events. By default (as root, with tracefs) a
        /// tracefs instance of the run's own counts the tracepoints that fire in the workload's
        /// tasks (pgscan/pgsteal anon and file, pgactivate, pswpout, the immediate-reclaim bound),
        /// written as the JSON's `own` beside the host-wide /proc/vmstat deltas.
        #[arg(long)]
        no_trace: bool,
    },
    /// Compare runs side by side as MMTests' compare-kernels does: a row per figure, a column
    /// per configuration, and each later column's gain over the first (positive is better,
    /// whichever way the row's figure is better; `*` marks a significant one).
    ///
    /// Inputs are vmlab.run/1 or vmlab.reproduce/1 JSON files, or scenario files (.toml), which
    /// are run under each `--profile` (or their own), `--repeat` times with seeds counting up
    /// from the scenario's. Runs differing only in their seed are repeats of one column.
    Compare {
        /// JSON reports or scenario files.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// Keep only the runs whose profile or parameter KEY has VALUE (`--select threads=16`,
        /// `--select profile=linux-6.8,linux-2.6.26`: either one).
        #[arg(long = "select", value_name = "KEY=VALUE[,VALUE]")]
        select: Vec<String>,
        /// Run each scenario file under these profiles (default: the scenario's own).
        #[arg(long = "profile", value_name = "NAME")]
        profiles: Vec<String>,
        /// Override a field of the scenario files, as on `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Runs per configuration of a scenario file, seeds counting up from the scenario's.
        #[arg(long, value_name = "N", default_value_t = 1)]
        repeat: u32,
        /// Write the comparison as JSON (schema vmlab.compare/1) to FILE, or `-` for standard output.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
    },
    /// Plot runs' timelines as an SVG or PNG chart: each column under its kernel/tool name with
    /// its unit, one y axis per unit (at most two), the runs named by what differs between them.
    Plot {
        /// vmlab.run/1 or vmlab.reproduce/1 JSON files.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The chart to write: FILE.svg, or FILE.png (drawn with the system's fonts, twice the
        /// SVG's size).
        #[arg(long, value_name = "FILE.svg|png")]
        out: PathBuf,
        /// Timeline columns to draw (as in the JSON: free_kb, cached_kb, so, kswapd_cpu_pct, ...).
        #[arg(long, value_delimiter = ',', default_value = "free_kb,cached_kb")]
        columns: Vec<String>,
    },
    /// Print a completion script for SHELL: `vmlab completions bash > /etc/bash_completion.d/vmlab`,
    /// `vmlab completions zsh > ~/.zfunc/_vmlab`, `vmlab completions fish > ~/.config/fish/completions/vmlab.fish`.
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `vmlab man | man -l -`, or install it as
    /// `vmlab man > /usr/local/share/man/man1/vmlab.1`.
    Man,
}

fn main() -> ExitCode {
    // End quietly when whoever reads stdout goes away (`vmlab profiles | head`), as C tools do:
    // Rust starts with SIGPIPE ignored, and the failed write would panic inside println!.
    #[cfg(unix)]
    // SAFETY: called first thing, before any thread exists; restores the default disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // miette's boxes for a person at a terminal; `FILE:LINE:COL: message` lines for editors,
    // grep and logs everywhere else. VMLAB_ERRORS=graphical|plain overrides the guess.
    let graphical = match std::env::var("VMLAB_ERRORS").as_deref() {
        Ok("graphical") => true,
        Ok("plain") => false,
        _ => std::io::stderr().is_terminal(),
    };
    api::set_graphical_errors(graphical);
    match cli.cmd {
        Cmd::Run {
            scenario,
            profile,
            sets,
            json,
            csv,
            interval,
            cgroup_series,
            timing,
            proc_dir,
            trace,
            events,
            refaults,
            host,
            disk_dir,
            remeasure,
        } => {
            let trace = trace.map(|t| (t, events));
            let host = host.then(|| host::DiskOpts { dir: disk_dir.unwrap_or_else(std::env::temp_dir), remeasure });
            let out = Outputs { json, csv, cgroup_series, proc_dir, refaults };
            run(scenario, profile, sets, out, interval, timing, trace, host)
        }
        Cmd::Profiles { names, json } => profiles(&names, json),
        Cmd::Explain { scenario, profile, sets } => explain(scenario, profile, sets),
        Cmd::Reproduce { seed, list, sets, json, timing, ablate, jobs, trace, events, duration } => {
            let trace = trace.map(|dir| vmlab_core::reproduce::TraceOpts { dir, events });
            let duration_s = match duration.as_deref().map(duration_seconds).transpose() {
                Ok(d) => d,
                Err(m) => {
                    eprintln!("vmlab reproduce: {m}");
                    return ExitCode::from(2);
                }
            };
            reproduce(seed, list, sets, json, timing, ablate, jobs, trace, duration_s)
        }
        Cmd::Real { scenario, sets, json, interval, keep, dir, proc_dir, no_trace } => {
            real::real(real::RealArgs { scenario, sets, json, interval, keep, dir, proc_dir, no_trace })
        }
        Cmd::Plot { runs, out, columns } => plot_cmd(&runs, &out, &columns),
        Cmd::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "vmlab", &mut out);
            emit_status(&String::from_utf8_lossy(&out))
        }
        Cmd::Man => {
            let mut out = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut out) {
                Ok(()) => emit_status(&String::from_utf8_lossy(&out)),
                Err(e) => {
                    eprintln!("vmlab man: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Cmd::Compare { runs, select, profiles, sets, repeat, json } => {
            compare_cmd(CompareArgs { inputs: runs, select, profiles, sets, repeat, json })
        }
    }
}

/// Write to stdout. A reader that went away (`| head`) ends the process by SIGPIPE (see `main`),
/// as it does C tools; any other failure (a full disk, `> /dev/full`) is reported and the exit
/// status is 1, so a script never takes a lost report for a good one.
fn emit(s: &str) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes()).and_then(|_| out.flush()).map_err(|e| {
        eprintln!("vmlab: cannot write to standard output: {e}");
        ExitCode::from(1)
    })
}

/// `emit`, as the command's exit status.
fn emit_status(s: &str) -> ExitCode {
    match emit(s) {
        Ok(()) => ExitCode::SUCCESS,
        Err(c) => c,
    }
}

/// Where a run's output goes, checked before the run so that a long run is not lost to a typo
/// in a path: the file can be created (or is writable), and it is not the scenario itself.
/// Nothing is created or truncated here.
fn check_output(what: &str, out: &std::path::Path, inputs: &[&std::path::Path]) -> Result<(), ExitCode> {
    let refuse = |why: String| {
        eprintln!("vmlab: {what} {}: {why}", out.display());
        Err(ExitCode::from(2))
    };
    if let Ok(m) = std::fs::metadata(out) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            for i in inputs {
                if std::fs::metadata(i).is_ok_and(|im| im.dev() == m.dev() && im.ino() == m.ino()) {
                    return refuse(format!("is the scenario {}; refusing to overwrite it", i.display()));
                }
            }
        }
        if m.is_dir() {
            return refuse("is a directory".into());
        }
        // Opened for writing without truncation: the permission check the kernel will make.
        if let Err(e) = std::fs::OpenOptions::new().write(true).open(out) {
            return refuse(format!("cannot be written: {e}"));
        }
        return Ok(());
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return refuse(format!("{} is not a directory", parent.display())),
        Err(e) => return refuse(format!("cannot be created in {}: {e}", parent.display())),
    }
    // The directory exists; whether a file can be made in it is only known by making one, so
    // make a uniquely named probe and remove it.
    let probe = parent.join(format!(".vmlab-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => refuse(format!("cannot be created in {}: {e}", parent.display())),
    }
}

/// `check_output` for every file destination of a command (`-` is standard output), and no
/// two of them the same file.
fn check_outputs(outs: &[(&str, Option<&str>)], inputs: &[&std::path::Path]) -> Result<(), ExitCode> {
    let files: Vec<(&str, &str)> = outs.iter().filter_map(|(w, f)| f.filter(|f| *f != "-").map(|f| (*w, f))).collect();
    for (i, (what, f)) in files.iter().enumerate() {
        check_output(what, std::path::Path::new(f), inputs)?;
        if let Some((other, _)) = files[..i].iter().find(|(_, g)| same_file(f, g)) {
            eprintln!("vmlab: {what} {f} is also the {other} file");
            return Err(ExitCode::from(2));
        }
    }
    Ok(())
}

fn same_file(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    false
}

fn fail(e: vmlab_core::workload::ScenarioError) -> ExitCode {
    eprintln!("{}", api::render(e));
    ExitCode::from(2)
}

static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// SIGINT/SIGTERM during a simulation end it early with what was simulated so far, reported as
/// usual (`params.interrupted_at_s`) and exit status 130: a long run stopped by hand is not
/// lost. The handler then restores the default action, so a second signal ends the process.
fn on_interrupt() -> Option<&'static std::sync::atomic::AtomicBool> {
    #[cfg(unix)]
    {
        extern "C" fn handler(sig: libc::c_int) {
            INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
            // SAFETY: signal() is async-signal-safe.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        // SAFETY: installs a handler that only stores to an atomic and calls signal().
        unsafe {
            libc::signal(libc::SIGINT, handler as extern "C" fn(libc::c_int) as libc::sighandler_t);
            libc::signal(libc::SIGTERM, handler as extern "C" fn(libc::c_int) as libc::sighandler_t);
        }
    }
    Some(&INTERRUPTED)
}

/// The exit status of a command whose outputs were written: 130 after an interrupt.
fn finished(code: ExitCode) -> ExitCode {
    if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) && code == ExitCode::SUCCESS {
        eprintln!("vmlab: interrupted; the output covers the simulated time up to the interrupt");
        return ExitCode::from(130);
    }
    code
}

/// `--trace FILE [--events ...]`: an ftrace writer in the formats of the run's release, or a
/// refusal (exit 2) for a release without tracepoints or an event it does not have.
fn ftrace_writer(
    sc: &vmlab_core::workload::Scenario,
    profile: Option<&str>,
    file: &std::path::Path,
    events: &[String],
) -> Result<Option<Box<dyn vmlab_core::trace::Tracer>>, ExitCode> {
    // A bad profile is api::run's to report, with its position.
    let Ok(p) = vmlab_core::sim::resolve_profile(sc, profile) else { return Ok(None) };
    let Some(fmt) = p.tracepoints else {
        eprintln!(
            "vmlab: --trace: {} models Linux {}, which has no tracepoints for the mm (the vmscan events came in 2.6.36)",
            p.name, p.version
        );
        return Err(ExitCode::from(2));
    };
    match vmlab_core::stats::ftrace::FtraceWriter::create(file, fmt, events) {
        Ok(w) => Ok(Some(Box::new(w))),
        Err(m) => {
            eprintln!("vmlab: {m}");
            Err(ExitCode::from(2))
        }
    }
}

/// Load a scenario and simulate it, with a progress line on a terminal; errors are printed.
#[allow(clippy::too_many_arguments)]
fn load_and_run(
    path: &std::path::Path,
    profile: Option<&str>,
    sets: &[String],
    interval: Option<f64>,
    trace: Option<&(PathBuf, Vec<String>)>,
    observers: Vec<Box<dyn vmlab_core::trace::Tracer>>,
    host: Option<host::DiskOpts>,
    on_sample: Option<vmlab_core::sim::SampleHook>,
) -> Result<(RunReport, vmlab_core::sim::Sim), ExitCode> {
    if let Some(name) = profile.filter(|n| vmlab_core::profiles::find(n).is_none()) {
        let hint =
            vmlab_core::profiles::suggest_name(name).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
        let known = vmlab_core::profiles::names().join(", ");
        eprintln!("vmlab: --profile {name}: unknown profile `{name}`{hint} (known profiles: {known})");
        return Err(ExitCode::from(2));
    }
    let (sc, facts) = if let Some(d) = &host {
        match host::scenario(path, sets, d, profile) {
            Ok((sc, t)) => (sc, Some(t)),
            Err(Ok(e)) => return Err(fail(e)),
            Err(Err(m)) => {
                eprintln!("vmlab: {m}");
                return Err(ExitCode::from(2));
            }
        }
    } else {
        (vmlab_core::workload::load_scenario(path, sets).map_err(fail)?, None)
    };
    let mut tracers = observers;
    if let Some((file, events)) = trace {
        tracers.extend(ftrace_writer(&sc, profile, file, events)?);
    }
    let line = progress::Line::for_terminal().map(std::sync::Arc::new);
    let cb = line.clone().map(|l| -> api::ProgressFn { Box::new(move |now, end| l.draw_single(now, end)) });
    let opts = RunOpts { profile, interval_s: interval, progress: cb, interrupt: on_interrupt(), tracers, on_sample };
    let r = api::run(&sc, opts);
    if let Some(l) = line {
        l.clear();
    }
    let (mut rep, sim) = r.map_err(fail)?;
    vmlab_core::stats::report::record_sets(&mut rep.params, sets);
    if let Some(t) = facts {
        // A list, not one string: the host's settings are the run's, but compare labels a column
        // by a short value, and these are the same for every run on this host.
        rep.params.insert("host", serde_json::json!(t.sets));
        rep.notes.insert("host_disk", t.disk.summary());
        let queue = match &t.queue {
            Some(q) => q.summary(&t.disk.device),
            None => format!("{}: no request queue found (vmlab's max_sectors_kb/max_segments kept)", t.disk.device),
        };
        rep.notes.insert("host_queue", queue);
        let costs = match &t.costs {
            Some(_) => "calibrated (machine.cost.* in params.host)",
            None => "vmlab's table: no calibration (scripts/calibrate-costs.sh)",
        };
        rep.notes.insert("host_costs", costs.to_string());
        // The workload's own kernel time, as `vmlab real` reports the host's (`ru_stime`).
        let sys: u64 = sim
            .s
            .tasks
            .iter()
            .filter(|t| matches!(t.kind, vmlab_core::sched::TaskKind::User))
            .map(|t| t.stime_ns)
            .sum();
        rep.metrics.insert(real::report::SYS_METRIC, sys as f64 / 1e9);
        // Where the workload's time off the CPU went, beside what `vmlab real` reads from the
        // group's io.pressure and cpu.pressure (a one-task workload's `some` is its own wait).
        use vmlab_core::sched::Wait;
        for (name, w) in [
            ("wait_io_s", Wait::Io),
            ("wait_reclaim_s", Wait::Reclaim),
            ("wait_other_s", Wait::Other),
            ("wait_cpu_s", Wait::Cpu),
        ] {
            let ns: u64 = sim
                .s
                .tasks
                .iter()
                .filter(|t| matches!(t.kind, vmlab_core::sched::TaskKind::User))
                .map(|t| t.waits[w as usize])
                .sum();
            rep.metrics.insert(name, ns as f64 / 1e9);
        }
        rep.params.insert("host_limit_group", serde_json::json!(host::LIMIT_GROUP));
        // The stat file's times, as `vmlab real` records the host's, to set side by side.
        for d in rep.disks.iter_mut() {
            d.times = sim.disk_times(&d.name);
        }
    }
    Ok((rep, sim))
}

/// The files `vmlab run` writes besides its text.
struct Outputs {
    json: Option<String>,
    csv: Option<PathBuf>,
    cgroup_series: Option<PathBuf>,
    proc_dir: Option<PathBuf>,
    refaults: Option<PathBuf>,
}

#[allow(clippy::too_many_arguments)]
fn run(
    path: PathBuf,
    profile: Option<String>,
    sets: Vec<String>,
    out: Outputs,
    interval: Option<f64>,
    timing: bool,
    trace: Option<(PathBuf, Vec<String>)>,
    host: Option<host::DiskOpts>,
) -> ExitCode {
    let Outputs { json, csv, cgroup_series, proc_dir, refaults } = out;
    let csv_s = csv.as_ref().map(|c| c.to_string_lossy().into_owned());
    let series_s = cgroup_series.as_ref().map(|c| c.to_string_lossy().into_owned());
    let refaults_s = refaults.as_ref().map(|c| c.to_string_lossy().into_owned());
    let named = [
        ("--json", json.as_deref()),
        ("--csv", csv_s.as_deref()),
        ("--cgroup-series", series_s.as_deref()),
        ("--refaults", refaults_s.as_deref()),
    ];
    if let Err(c) = check_outputs(&named, &[path.as_path()]) {
        return c;
    }
    let mut observers: Vec<Box<dyn vmlab_core::trace::Tracer>> = Vec::new();
    if let Some(f) = &refaults {
        match vmlab_core::stats::refaults::RefaultLog::create(f) {
            Ok(w) => observers.push(Box::new(w)),
            Err(m) => {
                eprintln!("vmlab: {m}");
                return ExitCode::from(2);
            }
        }
    }
    let rows = std::rc::Rc::new(std::cell::RefCell::new(String::from(vmlab_core::stats::memcg_fmt::LRU_ROW_HEADER)));
    rows.borrow_mut().push('\n');
    let hook = cgroup_series.as_ref().map(|_| {
        let rows = rows.clone();
        let f: vmlab_core::sim::SampleHook = Box::new(move |sim: &mut vmlab_core::sim::Sim| {
            vmlab_core::stats::memcg_fmt::lru_rows(&sim.k, sim.s.now as f64 / 1e9, &mut rows.borrow_mut())
        });
        f
    });
    let (rep, sim) =
        match load_and_run(&path, profile.as_deref(), &sets, interval, trace.as_ref(), observers, host, hook) {
            Ok(r) => r,
            Err(code) => return code,
        };
    if let Some(c) = cgroup_series {
        if let Err(e) = std::fs::write(&c, rows.borrow().as_str()) {
            eprintln!("vmlab: cannot write {}: {e}", c.display());
            return ExitCode::from(1);
        }
    }
    if let Some(w) = sim.k.tracer::<vmlab_core::stats::ftrace::FtraceWriter>() {
        if let Some(e) = &w.error {
            eprintln!("vmlab: --trace: cannot write: {e}");
            return ExitCode::from(1);
        }
    }
    if let Some(w) = sim.k.tracer::<vmlab_core::stats::refaults::RefaultLog>() {
        if let Some(e) = &w.error {
            eprintln!("vmlab: --refaults: cannot write: {e}");
            return ExitCode::from(1);
        }
    }
    let rep = if timing {
        eprintln!(
            "vmlab: {} page events in {:.2} s wall ({:.0} events/s)",
            rep.events,
            rep.wall_s,
            rep.events as f64 / rep.wall_s.max(1e-9)
        );
        rep
    } else {
        rep.with_wall_s_zeroed()
    };
    if let Some(c) = csv {
        if let Err(e) = std::fs::write(&c, timeline::to_csv(&rep.timeline)) {
            eprintln!("vmlab: cannot write {}: {e}", c.display());
            return ExitCode::from(1);
        }
    }
    if let Some(d) = proc_dir {
        if let Err(code) = write_proc_dir(&d, &sim.proc_files()) {
            return code;
        }
    }
    finished(match write_json(json.as_deref(), &rep.to_json_string()) {
        Ok(true) => print_text(&rep, &sim),
        Ok(false) => ExitCode::SUCCESS,
        Err(code) => code,
    })
}

fn explain(path: PathBuf, profile: Option<String>, sets: Vec<String>) -> ExitCode {
    use std::fmt::Write as _;
    let (rep, sim) = match load_and_run(&path, profile.as_deref(), &sets, None, None, Vec::new(), None, None) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "vmlab explain: {}  profile {}  {} MiB, {} CPUs, {} node(s)",
        rep.scenario,
        rep.profile,
        rep.machine.memory_bytes >> 20,
        rep.machine.cpus,
        rep.machine.nodes
    );
    let _ = writeln!(o, "workload ended after {:.2} s simulated\n", rep.elapsed_s);
    let end_s = rep.timeline.last().map(|s| s.t_s).unwrap_or(rep.elapsed_s);
    o.push_str(&vmlab_core::stats::explain::format_kswapd(&sim.k, end_s));
    o.push('\n');
    let m = sim.k.mmap_sem_stats();
    let waits = m.read_contended + m.write_contended;
    if waits == 0 {
        let _ = writeln!(o, "mmap_sem: no acquisition had to wait");
    } else {
        let _ = writeln!(
            o,
            "mmap_sem: {} read and {} write acquisitions waited, {:.2} s asleep in all, the longest {:.1} ms",
            m.read_contended,
            m.write_contended,
            (m.read_wait_ns + m.write_wait_ns) as f64 / 1e9,
            m.max_wait_ns as f64 / 1e6
        );
        if m.io_waits_holding > 0 {
            let _ = writeln!(o, "  {} faults slept on disk I/O holding it for read: a writer queued behind one of them makes every later fault wait for the disk too", m.io_waits_holding);
        }
    }
    o.push('\n');
    let _ = writeln!(o, "Where kernel time went (simulated CPU, top 8):");
    o.push_str(&flat_profile_top(&sim, 8));
    finished(emit_status(&o))
}

/// `--json FILE|-`: writes the document; Ok(true) when the text form should follow (not `-`).
fn write_json(json: Option<&str>, doc: &str) -> Result<bool, ExitCode> {
    match json {
        Some("-") => emit(doc).map(|()| false),
        Some(f) => match std::fs::write(f, doc) {
            Ok(()) => Ok(true),
            Err(e) => {
                eprintln!("vmlab: cannot write {f}: {e}");
                Err(ExitCode::from(1))
            }
        },
        None => Ok(true),
    }
}

/// The `n` kernel functions that took most simulated CPU, as a gprof-style flat profile.
fn flat_profile_top(sim: &vmlab_core::sim::Sim, n: usize) -> String {
    let rows = profile_fmt::kernel_profile_rows(&sim.k.prof);
    let total: f64 = rows.iter().map(|r| r.1).sum();
    let top: Vec<(&str, f64, Option<u64>)> = rows.iter().take(n).map(|r| (r.0.as_str(), r.1, r.2)).collect();
    profile_fmt::format_flat_profile_calls(&top, total)
}

fn print_text(rep: &RunReport, sim: &vmlab_core::sim::Sim) -> ExitCode {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "vmlab run: {}  profile {}  seed {}  {} MiB, {} CPUs, {} node(s)",
        rep.scenario,
        rep.profile,
        rep.seed,
        rep.machine.memory_bytes >> 20,
        rep.machine.cpus,
        rep.machine.nodes
    );
    let _ = writeln!(o, "workload ended after {:.2} s simulated ({} page events)\n", rep.elapsed_s, rep.events);
    o.push_str(&timeline::format_vmstat_with(&rep.timeline, timeline::VmstatOpts { time: true }));
    o.push('\n');
    o.push_str(&profile_fmt::format_tasks(&rep.tasks));
    o.push('\n');
    let _ = writeln!(o, "Flat kernel profile (simulated CPU time):");
    o.push_str(&flat_profile_top(sim, 15));
    o.push('\n');
    if !rep.metrics.is_empty() {
        let _ = writeln!(o, "Metrics:");
        for (k, v) in rep.metrics.iter() {
            let _ = writeln!(o, "  {k:32} {v:.3}");
        }
        o.push('\n');
    }
    let files = sim.proc_files();
    let release = sim.k.profile.procfs.release;
    for (name, text) in &files {
        match *name {
            "meminfo" => {
                let _ = writeln!(o, "/proc/meminfo ({release}):");
                o.push_str(text);
                o.push('\n');
            }
            "vmstat" => {
                let _ = writeln!(o, "/proc/vmstat ({release}, non-zero):");
                for l in text.lines().filter(|l| !l.ends_with(" 0")) {
                    let _ = writeln!(o, "{l}");
                }
            }
            _ => {}
        }
    }
    if !files.iter().any(|(n, _)| *n == "vmstat") {
        let _ = writeln!(o, "/proc/stat ({release} has no /proc/vmstat; paging is in /proc/stat):");
        if let Some((_, t)) = files.iter().find(|(n, _)| *n == "stat") {
            for l in t.lines().filter(|l| l.starts_with("page ") || l.starts_with("swap ")) {
                let _ = writeln!(o, "{l}");
            }
        }
    }
    if rep.pressure.is_some() || !rep.cgroups.is_empty() {
        o.push('\n');
        o.push_str(&vmlab_core::stats::memcg_fmt::text(rep.pressure.as_ref(), &rep.cgroups));
    }
    if !rep.disks.is_empty() {
        o.push('\n');
        o.push_str(&vmlab_core::stats::report::disks_text(&rep.disks));
    }
    emit_status(&o)
}

/// `--proc DIR`: the /proc files, one per name, in DIR (created if missing).
pub(crate) fn write_proc_dir(dir: &std::path::Path, files: &[(&str, String)]) -> Result<(), ExitCode> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("vmlab: --proc {}: {e}", dir.display());
        return Err(ExitCode::from(1));
    }
    for (name, text) in files {
        let p = dir.join(name);
        if let Err(e) = std::fs::write(&p, text) {
            eprintln!("vmlab: cannot write {}: {e}", p.display());
            return Err(ExitCode::from(1));
        }
    }
    Ok(())
}

fn profiles(names: &[String], json: bool) -> ExitCode {
    use std::fmt::Write as _;
    use vmlab_core::profiles::{self, Profile, Section};
    let mut chosen: Vec<Profile> = Vec::new();
    for n in names {
        match profiles::find(n) {
            Some(p) => chosen.push(p),
            None => {
                let hint = profiles::suggest_name(n).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default();
                eprintln!(
                    "vmlab profiles: unknown profile `{n}`{hint} (known profiles: {})",
                    profiles::names().join(", ")
                );
                return ExitCode::from(2);
            }
        }
    }
    if chosen.len() >= 2 {
        return profiles_diff(&chosen, json);
    }
    let one = !chosen.is_empty();
    let list = if one { chosen } else { profiles::all() };
    if json {
        let doc = if one { serde_json::to_string_pretty(&list[0]) } else { serde_json::to_string_pretty(&list) };
        return emit_status(&format!("{}\n", doc.unwrap_or_default()));
    }
    // Every field is shown under the name `--set` takes it by (`reclaim.mmap_readahead=cluster`,
    // `vm.page_cluster=4`); knobs the row's engine never reads, or sysctls its release does not
    // have, are listed apart, since `--set` refuses them under this profile.
    let mut o = String::new();
    for p in &list {
        let shown = p.shown();
        let engine = shown.iter().find(|(k, _)| k.name == "engine").map(|(_, v)| v.clone()).unwrap_or_default();
        let _ = writeln!(o, "{}", p.name);
        let _ = writeln!(o, "    {}", p.summary);
        let _ = writeln!(o, "    models Linux {}; engine {engine}", p.version);
        let mut unread = Vec::new();
        for section in [Section::Reclaim, Section::Vm] {
            let mut kv = Vec::new();
            for (k, v) in shown.iter().filter(|(k, _)| k.section == section) {
                if p.settable(k) {
                    kv.push(format!("{}={v}", k.name));
                } else {
                    unread.push(format!("{}={v}", k.key()));
                }
            }
            wrapped(&mut o, section.name(), &kv);
        }
        if !unread.is_empty() {
            wrapped(&mut o, "unread or absent", &unread);
        }
        o.push('\n');
    }
    emit_status(&o)
}

/// `vmlab profiles A B ...`: the fields whose values differ, a column per profile.
fn profiles_diff(list: &[vmlab_core::profiles::Profile], json: bool) -> ExitCode {
    let mut rows: Vec<(String, Vec<String>)> =
        vec![("version".into(), list.iter().map(|p| p.version.to_string()).collect())];
    for k in vmlab_core::profiles::KNOBS {
        rows.push((k.key(), list.iter().map(|p| p.get(k).unwrap_or_default()).collect()));
    }
    rows.retain(|(_, v)| v.iter().any(|x| *x != v[0]));
    if json {
        let differ: Vec<serde_json::Value> =
            rows.iter().map(|(k, v)| serde_json::json!({ "key": k, "values": v })).collect();
        let names: Vec<&str> = list.iter().map(|p| p.name).collect();
        let doc = serde_json::json!({ "profiles": names, "differ": differ });
        return emit_status(&format!("{}\n", serde_json::to_string_pretty(&doc).unwrap_or_default()));
    }
    let mut o = String::new();
    let kw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let widths: Vec<usize> = list
        .iter()
        .enumerate()
        .map(|(i, p)| rows.iter().map(|r| r.1[i].len()).max().unwrap_or(0).max(p.name.len()))
        .collect();
    let line = |o: &mut String, key: &str, cells: Vec<&str>| {
        let mut s = format!("{key:kw$}");
        for (c, w) in cells.iter().zip(&widths) {
            s.push_str(&format!("  {c:w$}"));
        }
        o.push_str(s.trim_end());
        o.push('\n');
    };
    line(&mut o, "", list.iter().map(|p| p.name).collect());
    if rows.is_empty() {
        o.push_str("(no field differs)\n");
    }
    for (k, v) in &rows {
        line(&mut o, k, v.iter().map(String::as_str).collect());
    }
    emit_status(&o)
}

/// `    label: k=v k=v ...`, wrapped under the first pair at about 110 columns.
fn wrapped(o: &mut String, label: &str, kv: &[String]) {
    let head = format!("    {label}: ");
    let mut line = head.clone();
    for item in kv {
        if line.len() > head.len() && line.len() + item.len() > 110 {
            o.push_str(line.trim_end());
            o.push('\n');
            line = " ".repeat(head.len());
        }
        line.push_str(item);
        line.push(' ');
    }
    o.push_str(line.trim_end());
    o.push('\n');
}

/// `--duration`'s text as whole seconds: the runs' windows and the timeline are in seconds.
fn duration_seconds(text: &str) -> Result<u64, String> {
    let ns = vmlab_core::workload::units::parse_duration(text).map_err(|m| format!("--duration {text}: {m}"))?;
    if ns % 1_000_000_000 != 0 {
        return Err(format!("--duration {text}: give whole seconds (as `90s`, `4h`)"));
    }
    Ok(ns / 1_000_000_000)
}

#[allow(clippy::too_many_arguments)]
fn reproduce(
    seed: Option<String>,
    list: bool,
    sets: Vec<String>,
    json: Option<String>,
    timing: bool,
    ablate: bool,
    jobs: usize,
    trace: Option<vmlab_core::reproduce::TraceOpts>,
    duration_s: Option<u64>,
) -> ExitCode {
    use vmlab_core::reproduce;
    let all = reproduce::seeds();
    let names: Vec<&str> = all.iter().map(|s| s.name).collect();
    if list || seed.is_none() {
        let text: String = all.iter().map(|s| format!("{:20} {}\n", s.name, s.summary)).collect();
        let code = emit_status(&text);
        if seed.is_none() && !list {
            eprintln!("vmlab reproduce: name a seed ({})", names.join(", "));
            return ExitCode::from(2);
        }
        return code;
    }
    let name = seed.unwrap_or_default();
    let Some(def) = reproduce::find(&name) else {
        let numbered: Vec<String> = all.iter().map(|s| format!("{:03} {}", s.number, s.name)).collect();
        eprintln!("vmlab reproduce: unknown seed `{name}`; known seeds: {}", numbered.join(", "));
        return ExitCode::from(2);
    };
    if let Err(c) = check_outputs(&[("--json", json.as_deref())], &[]) {
        return c;
    }
    if let Some(t) = &trace {
        if let Err(e) = std::fs::create_dir_all(&t.dir) {
            eprintln!("vmlab: --trace {}: {e}", t.dir.display());
            return ExitCode::from(2);
        }
    }
    // The seeds' scenarios are built in; $VMLAB_ROOT points at a tree to read (edited) ones from.
    let root = std::env::var_os("VMLAB_ROOT").map(PathBuf::from);
    let line = progress::Line::for_terminal().map(std::sync::Arc::new);
    let mut progress = line.clone().map(|l| l as std::sync::Arc<dyn reproduce::Progress>);
    // Hours-long runs go to the background with standard error in a file, where the terminal's
    // line is not drawn: there, a plain line per run every tenth of its simulated length.
    if progress.is_none() && duration_s.is_some() {
        progress = Some(std::sync::Arc::new(progress::Log::default()));
    }
    let opts = reproduce::ReproduceOpts {
        sets,
        root,
        timing,
        ablate,
        jobs,
        progress,
        trace,
        duration_s,
        ..Default::default()
    };
    let result = reproduce::run(&def, opts);
    if let Some(l) = line {
        l.clear();
    }
    match result {
        Ok((rep, text)) => {
            let rep = if timing {
                for r in &rep.runs {
                    eprintln!("vmlab: {} {}: {} page events in {:.2} s wall", rep.seed, r.profile, r.events, r.wall_s);
                }
                rep
            } else {
                rep.with_wall_s_zeroed()
            };
            match write_json(json.as_deref(), &rep.to_json_string()) {
                Ok(true) => emit_status(&text),
                Ok(false) => ExitCode::SUCCESS,
                Err(code) => code,
            }
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

struct CompareArgs {
    inputs: Vec<PathBuf>,
    select: Vec<String>,
    profiles: Vec<String>,
    sets: Vec<String>,
    repeat: u32,
    json: Option<String>,
}

fn compare_cmd(a: CompareArgs) -> ExitCode {
    use vmlab_core::stats::compare::kernels;
    let refuse = |m: String| {
        eprintln!("vmlab compare: {m}");
        ExitCode::from(2)
    };
    if a.repeat == 0 {
        return refuse("--repeat 0: a column needs at least one run".into());
    }
    let is_toml = |p: &PathBuf| p.extension().is_some_and(|e| e == "toml");
    if !a.inputs.iter().any(is_toml) && (a.repeat > 1 || !a.profiles.is_empty() || !a.sets.is_empty()) {
        return refuse("--repeat, --profile and --set run scenario files (.toml); none was given".into());
    }
    if let Err(c) = check_outputs(&[("--json", a.json.as_deref())], &[]) {
        return c;
    }
    let mut runs: Vec<(String, RunReport)> = Vec::new();
    for p in &a.inputs {
        if is_toml(p) {
            match run_for_compare(p, &a) {
                Ok(mut r) => runs.append(&mut r),
                Err(c) => return c,
            }
        } else {
            match compare::load_reports_named(std::slice::from_ref(p)) {
                Ok(r) => {
                    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    runs.extend(r.into_iter().map(|(_, r)| (name.clone(), r)));
                }
                Err(e) => return refuse(e),
            }
        }
    }
    for sel in &a.select {
        let Some((k, vals)) = sel.split_once('=') else {
            return refuse(format!("--select {sel}: expected KEY=VALUE"));
        };
        let vals: Vec<&str> = vals.split(',').collect();
        let before = runs.len();
        runs.retain(|(_, r)| {
            let v = match k {
                "profile" => Some(r.profile.clone()),
                "scenario" => Some(r.scenario.clone()),
                _ => r.params.get(k).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())),
            };
            v.is_some_and(|v| vals.contains(&v.as_str()))
        });
        if runs.is_empty() {
            return refuse(format!("--select {sel}: none of the {before} runs left matches"));
        }
    }
    let cmp = kernels::compare(&kernels::columns(&runs));
    for w in &cmp.warnings {
        eprintln!("vmlab compare: warning: {w}");
    }
    let doc = format!("{}\n", serde_json::to_string_pretty(&kernels::to_json(&cmp)).unwrap_or_default());
    match write_json(a.json.as_deref(), &doc) {
        Ok(true) => emit_status(&kernels::format(&cmp)),
        Ok(false) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// Run a scenario file for `compare`: under each `--profile` (or its own), `--repeat` times.
fn run_for_compare(path: &std::path::Path, a: &CompareArgs) -> Result<Vec<(String, RunReport)>, ExitCode> {
    let sc = vmlab_core::workload::load_scenario(path, &a.sets).map_err(fail)?;
    let base_seed = sc.file.seed;
    let profiles: Vec<Option<&str>> =
        if a.profiles.is_empty() { vec![None] } else { a.profiles.iter().map(|p| Some(p.as_str())).collect() };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = Vec::new();
    for p in profiles {
        for i in 0..a.repeat {
            let mut sets = a.sets.clone();
            if i > 0 {
                sets.push(format!("seed={}", base_seed.wrapping_add(i as u64)));
            }
            let (rep, _) = load_and_run(path, p, &sets, None, None, Vec::new(), None, None)?;
            out.push((name.clone(), rep.with_wall_s_zeroed()));
        }
    }
    Ok(out)
}

fn plot_cmd(inputs: &[PathBuf], out: &std::path::Path, columns: &[String]) -> ExitCode {
    let refuse = |m: String| {
        eprintln!("vmlab plot: {m}");
        ExitCode::from(2)
    };
    let ext = out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let as_png = match ext.as_deref() {
        Some("svg") => false,
        Some("png") => true,
        _ => {
            return refuse(format!(
                "--out {}: the chart is written as SVG or PNG: name it FILE.svg or FILE.png",
                out.display()
            ))
        }
    };
    let out_s = out.to_string_lossy().into_owned();
    let ins: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    if let Err(c) = check_outputs(&[("--out", Some(out_s.as_str()))], &ins) {
        return c;
    }
    let mut runs = Vec::new();
    for p in inputs {
        match compare::load_reports_named(std::slice::from_ref(p)) {
            Ok(r) => {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                runs.extend(r.into_iter().map(|(_, r)| (name.clone(), r)));
            }
            Err(e) => return refuse(e),
        }
    }
    let svg = match plot::svg(&runs, columns) {
        Ok(svg) => svg,
        Err(e) => return refuse(e),
    };
    let bytes = if as_png {
        match plot::png(&svg, plot::system_fonts()) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("vmlab plot: --out {}: {e}", out.display());
                return ExitCode::from(1);
            }
        }
    } else {
        svg.into_bytes()
    };
    match std::fs::write(out, bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vmlab plot: cannot write {}: {e}", out.display());
            ExitCode::from(1)
        }
    }
}
