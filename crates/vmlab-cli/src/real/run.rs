//! The supervisor: forks one child per process copy at its start time, samples the host and the
//! cgroup every interval, collects marks and CPU times, and stops when every process has exited
//! or sleeps forever (plus `linger`), at `duration`, on a child's error, or on SIGINT/SIGTERM.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use vmlab_core::stats::report::TaskCpu;
use vmlab_core::workload::interp::Program;

use super::cgroup::Cgroup;
use super::child::{self, ChildSpec};
use super::sample::{self, HostSnap};
use super::setup::Env;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether Ctrl-C or SIGTERM has arrived (setup checks between its steps).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Ctrl-C and kill end the run through the normal cleanup path instead of killing vmlab.
pub fn catch_signals() {
    let h = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, h);
        libc::signal(libc::SIGTERM, h);
    }
}

/// One process copy to start.
pub struct Planned {
    pub prog: usize,
    pub copy: u32,
    pub name: String,
    pub start: Duration,
    pub memlock_pages: u64,
}

pub struct Limits {
    pub interval: Duration,
    pub duration: Option<Duration>,
    pub linger: Duration,
    pub seed: u64,
    pub cpus: u32,
    pub nodes: u32,
}

/// The longest wait between two polls of the group (`memory.usage_in_bytes` and `memory.stat`,
/// whose read flushes the group's memcg statistics: `run --host` models it).
pub const POLL_MS: i32 = 20;

/// What the loop adds to `POLL_MS` between two polls on the development host, µs: its
/// `memory.stat` flushes came 20.25-20.26 ms apart at the median (p10 20.20-20.23, p90
/// 20.31-20.50 ms) in hf32's three traced heap-fileset 384 MiB runs
/// (docs/real/2026-11-29-hf32-traces.tar.xz). `run --host` models the poller with it.
pub const POLL_WORK_US: i32 = 250;

pub struct Outcome {
    pub elapsed: f64,
    /// Readings at the start, every interval, and at the end.
    pub snaps: Vec<HostSnap>,
    pub marks: Vec<(String, f64)>,
    /// A read or write that stopped short (`errno` set, the program went on): the run did less
    /// I/O than the scenario, which the report must say.
    pub io_errors: Vec<String>,
    pub tasks: Vec<TaskCpu>,
    /// System time of the workload's processes (their `ru_stime`, threads included), seconds:
    /// the kernel CPU the cost table is calibrated against (scripts/calibrate-costs.sh).
    pub sys_s: f64,
    /// vmlab's own CPU time (user + system) while the workload ran: sampling, polling, and
    /// reading the trace buffers, on the same CPUs as the workload.
    pub supervisor_cpu_s: f64,
    /// Highest cgroup usage seen by polling (every ~20 ms), bytes.
    pub peak_polled: u64,
    /// Why the run ended early, if it did (`duration`).
    pub stopped_by: Option<String>,
    /// Processes the cgroup's OOM killer killed: the run goes on without them, as the
    /// simulator's does after `oom_kill`.
    pub oom_killed: Vec<String>,
    /// The host's inodes in use as the workload starts (its files and swap file made): what
    /// `run --host` reads as `machine.inodes_in_use`, for a record to pin.
    pub inodes_in_use: Option<u64>,
    /// The host's `Dirty` and `Writeback` page cache (/proc/meminfo, kB) as the workload starts:
    /// its other tenants' (the workload has written nothing yet). Reclaim's
    /// `wakeup_flusher_threads` starts a flush of every device with dirty data, and their
    /// completions count towards waking a reclaimer throttled on writeback
    /// (`__acct_reclaim_writeback`, mm/vmscan.c): `run --host` models them as
    /// `machine.foreign_dirty`, and a record pins this figure for it (docs/REAL.md, dw32, dw33).
    pub host_dirty_kb: Option<(u64, u64)>,
    /// The free memory as free page reporting has left it at the workload's start, when the
    /// host reports (`run --host`'s `machine.unreported_small` / `unreported_large`).
    pub host_free: Option<crate::host::free_pages::FreeState>,
}

pub enum Failure {
    /// A child's runtime error at a program span (offset, len, message), with the process name.
    Program {
        who: String,
        offset: u32,
        len: u32,
        message: String,
    },
    Other(String),
    Interrupted,
}

struct Alive {
    name: String,
    forever: bool,
}

pub fn supervise(progs: &[Program], plan: Vec<Planned>, env: &mut Env, lim: &Limits) -> Result<Outcome, Failure> {
    let Env { dir, cgroup, children, tracer, .. } = env;
    let Some(cg) = cgroup.as_ref() else { return Err(Failure::Other("no cgroup".into())) };
    let kswapd = sample::kswapd_pids();
    let mut fds = [0; 2];
    // SAFETY: fds is a valid 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Failure::Other(format!("pipe: {}", std::io::Error::last_os_error())));
    }
    let [rfd, wfd] = fds;
    // SAFETY: our pipe's read end.
    unsafe { libc::fcntl(rfd, libc::F_SETFL, libc::O_NONBLOCK) };
    let close = || {
        // SAFETY: closes the pipe made above.
        unsafe {
            libc::close(rfd);
            libc::close(wfd);
        }
    };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let mut pending: VecDeque<Planned> = plan.into();
    let mut alive: BTreeMap<libc::pid_t, Alive> = BTreeMap::new();
    let mut names: BTreeMap<libc::pid_t, String> = BTreeMap::new();
    let mut out = Outcome {
        elapsed: 0.0,
        snaps: Vec::new(),
        marks: Vec::new(),
        io_errors: Vec::new(),
        tasks: Vec::new(),
        sys_s: 0.0,
        supervisor_cpu_s: 0.0,
        peak_polled: 0,
        stopped_by: None,
        oom_killed: Vec::new(),
        inodes_in_use: crate::host::inodes_in_use(std::path::Path::new("/proc/sys/fs/inode-nr")).ok().flatten(),
        host_dirty_kb: {
            let m = std::path::Path::new("/proc/meminfo");
            crate::host::meminfo_kb(m, "Dirty").zip(crate::host::meminfo_kb(m, "Writeback"))
        },
        // After the set-up's files were written and dropped, right before the first fork: the
        // frames the workload will take first.
        host_free: {
            let root = std::path::Path::new("/");
            crate::host::page_reporting_order(root)
                .ok()
                .flatten()
                .and_then(|o| crate::host::free_pages::read(root, o).ok())
        },
    };
    let mut partial = String::new();
    let cpu0 = self_cpu_s();
    let t0 = Instant::now();
    let mut first = sample::read(0.0, &kswapd, cg);
    first.cg_cpu_io = [cg.pressure_of("cpu"), cg.pressure_of("io")];
    out.snaps.push(first);
    let mut next_sample = lim.interval;
    let mut quiet_since: Option<Duration> = None;
    let result = loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            break Err(Failure::Interrupted);
        }
        let now = t0.elapsed();
        while pending.front().is_some_and(|p| p.start <= now) {
            let Some(p) = pending.pop_front() else { break };
            let spec = ChildSpec {
                parent,
                prog: &progs[p.prog],
                dir,
                procs_files: cg.procs_files(),
                pipe: wfd,
                t0,
                seed: lim.seed,
                process: p.prog,
                copy: p.copy,
                cpus: lim.cpus,
                nodes: lim.nodes,
                memlock_pages: p.memlock_pages,
            };
            // SAFETY: this process is single-threaded, so the child may run Rust code after fork.
            match unsafe { libc::fork() } {
                0 => child::main(&spec),
                pid if pid > 0 => {
                    children.push(pid);
                    names.insert(pid, p.name.clone());
                    alive.insert(pid, Alive { name: p.name, forever: false });
                }
                _ => break,
            }
        }
        if let Err(f) = drain(rfd, &mut partial, &names, &mut alive, &mut out.marks, &mut out.io_errors) {
            break Err(f);
        }
        if let Some(t) = tracer.as_mut() {
            t.poll();
        }
        if let Err(f) = reap(libc::WNOHANG, &mut alive, children, &mut out, cg) {
            // A child that failed on a program error said where before it exited.
            break Err(drain(rfd, &mut partial, &names, &mut alive, &mut out.marks, &mut out.io_errors)
                .err()
                .unwrap_or(f));
        }
        out.peak_polled = out.peak_polled.max(cg.read().usage);
        if now >= next_sample {
            out.snaps.push(sample::read(now.as_secs_f64(), &kswapd, cg));
            next_sample += lim.interval;
            if out.snaps.len() as u64 >= vmlab_core::workload::load::MAX_TIMELINE_SAMPLES {
                out.stopped_by = Some(format!("the timeline's limit of {} samples reached", out.snaps.len()));
                break Ok(());
            }
        }
        if pending.is_empty() && alive.values().all(|a| a.forever) {
            let q = *quiet_since.get_or_insert(now);
            if now >= q + lim.linger {
                break Ok(());
            }
        }
        if lim.duration.is_some_and(|d| now >= d) {
            out.stopped_by = Some(format!("duration {:.1} s reached", now.as_secs_f64()));
            break Ok(());
        }
        let mut pfd = libc::pollfd { fd: rfd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd; a signal just shortens the wait.
        unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
    };
    let end = t0.elapsed();
    out.supervisor_cpu_s = self_cpu_s() - cpu0;
    for pid in alive.keys() {
        // SAFETY: our unreaped child.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    let _ = reap(0, &mut alive, children, &mut out, cg);
    close();
    result?;
    out.elapsed = end.as_secs_f64();
    // A last interval much shorter than the others would give noisy rates: fold it into the one
    // before (never the first reading, the baseline of every delta).
    if out.snaps.len() > 1 && out.snaps.last().is_some_and(|s| out.elapsed - s.t < lim.interval.as_secs_f64() / 10.0) {
        out.snaps.pop();
    }
    let mut last = sample::read(out.elapsed, &kswapd, cg);
    last.cg_cpu_io = [cg.pressure_of("cpu"), cg.pressure_of("io")];
    out.snaps.push(last);
    for t in &mut out.tasks {
        t.cpu_pct = t.cpu_s / out.elapsed.max(1e-9) * 100.0;
    }
    out.tasks.sort_by_key(|t| t.pid);
    Ok(out)
}

/// This process's CPU time so far (not its children's), seconds.
fn self_cpu_s() -> f64 {
    // SAFETY: rusage is plain data the kernel fills in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Handle the complete lines children have written: `PID M T_NS NAME`, `PID F`,
/// `PID E OFFSET LEN MESSAGE`, `PID W MESSAGE` (I/O that stopped short), `PID X MESSAGE`.
fn drain(
    rfd: libc::c_int,
    partial: &mut String,
    names: &BTreeMap<libc::pid_t, String>,
    alive: &mut BTreeMap<libc::pid_t, Alive>,
    marks: &mut Vec<(String, f64)>,
    io_errors: &mut Vec<String>,
) -> Result<(), Failure> {
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reads into a valid buffer from our non-blocking pipe.
        let n = unsafe { libc::read(rfd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        partial.push_str(&String::from_utf8_lossy(&buf[..n as usize]));
    }
    while let Some(i) = partial.find('\n') {
        let line: String = partial.drain(..=i).collect();
        let mut it = line.trim_end().splitn(3, ' ');
        let pid: libc::pid_t = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let who = names.get(&pid).cloned().unwrap_or_else(|| format!("pid {pid}"));
        let kind = it.next().unwrap_or("");
        let rest = it.next().unwrap_or("");
        match kind {
            "M" => {
                let (t, name) = rest.split_once(' ').unwrap_or(("0", rest));
                marks.push((name.to_string(), t.parse::<f64>().unwrap_or(0.0) / 1e9));
            }
            "W" => io_errors.push(format!("{who}: {rest}")),
            "F" => {
                if let Some(a) = alive.get_mut(&pid) {
                    a.forever = true;
                }
            }
            "E" => {
                let mut f = rest.splitn(3, ' ');
                let offset = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
                let len = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
                return Err(Failure::Program { who, offset, len, message: f.next().unwrap_or("").to_string() });
            }
            _ => return Err(Failure::Other(format!("{who}: {rest}"))),
        }
    }
    Ok(())
}

/// Reap exited children (flags: WNOHANG, or 0 to wait for all after killing them), recording
/// their CPU time. A child that failed is an error, except a victim of the cgroup's OOM killer.
fn reap(
    flags: libc::c_int,
    alive: &mut BTreeMap<libc::pid_t, Alive>,
    children: &mut Vec<libc::pid_t>,
    out: &mut Outcome,
    cg: &Cgroup,
) -> Result<(), Failure> {
    let killing = flags == 0;
    while !alive.is_empty() {
        let mut status = 0;
        // SAFETY: rusage is plain data the kernel fills in.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointers.
        let pid = unsafe { libc::wait4(-1, &mut status, flags, &mut ru) };
        if pid <= 0 {
            break;
        }
        children.retain(|&c| c != pid);
        let Some(a) = alive.remove(&pid) else { continue };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        out.tasks.push(TaskCpu {
            pid: pid as u32,
            name: a.name.clone(),
            cpu_s: tv(ru.ru_utime) + tv(ru.ru_stime),
            cpu_pct: 0.0,
            kthread: false,
        });
        out.sys_s += tv(ru.ru_stime);
        if killing {
            continue;
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            if sig == libc::SIGKILL && cg.oom_kills() > out.oom_killed.len() as u64 {
                eprintln!("vmlab real: {} (pid {pid}) was killed by the cgroup's OOM killer", a.name);
                out.oom_killed.push(a.name);
                continue;
            }
            return Err(Failure::Other(format!("{} (pid {pid}) was killed by signal {sig}{}", a.name, oom_hint(sig))));
        }
        if libc::WEXITSTATUS(status) != 0 {
            return Err(Failure::Other(format!(
                "{} (pid {pid}) exited with status {}",
                a.name,
                libc::WEXITSTATUS(status)
            )));
        }
    }
    Ok(())
}

fn oom_hint(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGSEGV | libc::SIGBUS => " (a touch outside a live mapping: after munmap?)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_stopped_short_is_kept_for_the_report_and_the_run_goes_on() {
        let mut fds = [0; 2];
        // SAFETY: a pipe of our own, both ends closed below.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK) }, 0);
        let lines = "41 M 2000000000 start\n41 W write `out` stopped after 949813248 of 1073741824 bytes: No space left on device (os error 28)\n";
        // SAFETY: writes a valid buffer to our pipe.
        unsafe { libc::write(fds[1], lines.as_ptr().cast(), lines.len()) };
        let names = BTreeMap::from([(41, "writer".to_string())]);
        let (mut partial, mut alive, mut marks, mut io_errors) =
            (String::new(), BTreeMap::new(), Vec::new(), Vec::new());
        let r = drain(fds[0], &mut partial, &names, &mut alive, &mut marks, &mut io_errors);
        // SAFETY: our own descriptors.
        unsafe { libc::close(fds[0]) };
        unsafe { libc::close(fds[1]) };
        assert!(r.is_ok(), "a short write is not a program error: the program goes on with errno set");
        assert_eq!(marks, vec![("start".to_string(), 2.0)]);
        assert_eq!(
            io_errors,
            vec!["writer: write `out` stopped after 949813248 of 1073741824 bytes: No space left on device (os error 28)"]
        );
    }
}
