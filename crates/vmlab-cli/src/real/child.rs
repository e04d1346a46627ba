//! The forked child that runs one `[[process]]` copy with real system calls. It walks the same
//! compiled instructions the simulator's interpreter walks (`exec.rs`), sets `errno` from the real
//! calls, and reports marks, `sleep forever`, errors and I/O that stopped short to the parent as
//! lines on a pipe.
//! It never returns: it ends with `_exit`, so nothing of the parent's state is dropped twice.
//!
//! `threads N { ... }` runs the body in N real threads of this process (`std::thread::scope`), each
//! with its own copy of the variables and `tid`, and the process goes on when all have ended, as
//! the simulator's `clone_threads` + wait. A mapping's name belongs to the thread that made it
//! (the simulator's are per process): programs name them `m{tid}`. `foreach ... in queue` shares
//! one counter per queue name between the process's threads.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::Rng;
use vmlab_core::workload::ast::{Access, Backing, Expr, OpKind, Pattern, Span, Template};
use vmlab_core::workload::exec::{no_progress_message, MAX_STEPS_WITHOUT_TIME};
use vmlab_core::workload::interp::{eval, render, Insn, Program, ERRNO, NR_CPUS, NR_NODES, TID};

use super::setup::file_path;

const PAGE: u64 = 4096;
/// read/write calls of a `bs`-less op (the simulator's one call for everything would need a user
/// buffer of the whole length, charged to the cgroup).
const DEFAULT_BS: u64 = 1 << 20;

pub struct ChildSpec<'a> {
    /// The supervisor: the child must not outlive it.
    pub parent: libc::pid_t,
    pub prog: &'a Program,
    pub dir: &'a Path,
    /// The memory cgroup's `cgroup.procs`, then the pressure group's if it is another.
    pub procs_files: Vec<PathBuf>,
    pub pipe: libc::c_int,
    pub t0: Instant,
    pub seed: u64,
    /// Which `[[process]]` definition this copy runs (its random stream is keyed by it).
    pub process: usize,
    pub copy: u32,
    pub cpus: u32,
    pub nodes: u32,
    /// RLIMIT_MEMLOCK in pages (u64::MAX: unlimited).
    pub memlock_pages: u64,
}

struct Region {
    addr: usize,
    pages: u64,
    write: bool,
    /// File pages behind the mapping (past them a touch is SIGBUS), None for anon.
    file_pages: Option<u64>,
}

/// The next item of each `foreach ... in queue` queue, by queue name: one per process, shared by
/// its threads.
type Queues = Mutex<HashMap<String, i64>>;

struct Child<'a> {
    s: &'a ChildSpec<'a>,
    queues: &'a Queues,
    vars: Vec<i64>,
    regions: HashMap<String, Region>,
    rng: rand_pcg::Pcg64,
    buf: Vec<u8>,
}

type R<T> = Result<T, (Span, String)>;

/// Entry point after fork: join the cgroup, run the program, `_exit`.
pub fn main(s: &ChildSpec) -> ! {
    // A supervisor killed with SIGKILL cannot kill its children: the kernel does, by this
    // request. The supervisor may have died between fork and here, when the child has already
    // been reparented and no signal will come.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number; getppid has no preconditions.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 || libc::getppid() != s.parent {
            libc::_exit(3);
        }
    }
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(s))).unwrap_or(101);
    // SAFETY: ends this forked process without running the parent's destructors.
    unsafe { libc::_exit(code) }
}

fn run(s: &ChildSpec) -> i32 {
    // SAFETY: plain signal disposition and rlimit calls in this single-threaded child.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        if s.memlock_pages != u64::MAX {
            let b = s.memlock_pages.saturating_mul(PAGE);
            let lim = libc::rlimit { rlim_cur: b, rlim_max: b };
            libc::setrlimit(libc::RLIMIT_MEMLOCK, &lim);
        }
    }
    // A root process ignores RLIMIT_MEMLOCK (mm/mlock.c can_do_mlock: CAP_IPC_LOCK); a scenario
    // that sets `memlock` models a process without that capability.
    if s.memlock_pages != u64::MAX {
        if let Err(e) = drop_cap_ipc_lock() {
            send(s.pipe, &format!("X cannot drop CAP_IPC_LOCK for `memlock`: {e}"));
            return 2;
        }
    }
    // Join before the first instruction, so every page the program faults is charged to the cgroup.
    for f in &s.procs_files {
        if let Err(e) = std::fs::write(f, std::process::id().to_string()) {
            send(s.pipe, &format!("X cannot join the cgroup ({}): {e}", f.display()));
            return 2;
        }
    }
    let queues = Queues::default();
    let mut c = Child {
        s,
        queues: &queues,
        vars: vec![0; s.prog.nvars],
        regions: HashMap::new(),
        // The same stream the simulator gives this copy, so both draw the same accesses.
        rng: vmlab_core::prandom::stream(
            s.seed,
            vmlab_core::prandom::Stream::Process,
            ((s.process as u64) << 32) | u64::from(s.copy),
        ),
        buf: Vec::new(),
    };
    c.vars[TID] = i64::from(s.copy);
    c.vars[NR_CPUS] = i64::from(s.cpus);
    c.vars[NR_NODES] = i64::from(s.nodes.max(1));
    match c.interpret(0) {
        Ok(()) => 0,
        Err((sp, m)) => {
            send(s.pipe, &format!("E {} {} {}", sp.offset, sp.len, m.replace('\n', " ")));
            2
        }
    }
}

/// Clear CAP_IPC_LOCK from this process's effective and permitted capability sets.
fn drop_cap_ipc_lock() -> Result<(), std::io::Error> {
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    const CAP_IPC_LOCK: u32 = 14;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut h = Header { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut d = [Data::default(); 2];
    // SAFETY: capget/capset with a v3 header and its two data words, for this process.
    unsafe {
        if libc::syscall(libc::SYS_capget, &mut h as *mut Header, d.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        d[0].effective &= !(1 << CAP_IPC_LOCK);
        d[0].permitted &= !(1 << CAP_IPC_LOCK);
        if libc::syscall(libc::SYS_capset, &mut h as *mut Header, d.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One line to the parent; short lines on a pipe are written atomically.
pub fn send(fd: libc::c_int, line: &str) {
    let mut l = format!("{} {line}", std::process::id());
    l.truncate(480);
    l.push('\n');
    // SAFETY: writes a valid buffer to our end of the pipe.
    unsafe { libc::write(fd, l.as_ptr().cast(), l.len()) };
}

fn errno() -> i64 {
    i64::from(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
}

impl Child<'_> {
    /// Runs from `pc` to the program's or the thread body's `End`.
    fn interpret(&mut self, mut pc: usize) -> R<()> {
        let prog = self.s.prog;
        // As in the simulator (exec.rs): a run of instructions with no operation is a loop
        // that does nothing and would never end.
        let mut steps = 0u64;
        let mut last_span = Span::default();
        while let Some(insn) = prog.code.get(pc) {
            steps += 1;
            if steps > MAX_STEPS_WITHOUT_TIME {
                return Err((last_span, no_progress_message()));
            }
            match insn {
                Insn::Set(v, e) => {
                    last_span = e.span();
                    self.vars[*v] = self.ev(e)?;
                    pc += 1;
                }
                Insn::JumpIfZero(e, to) => {
                    last_span = e.span();
                    pc = if self.ev(e)? == 0 { *to } else { pc + 1 }
                }
                Insn::Jump(to) => pc = *to,
                Insn::End => return Ok(()),
                // Refused before the run (check.rs); reaching one is a bug, not a silent skip.
                Insn::Fork { .. } => return Err((Span::default(), "fork is not supported by `vmlab real`".into())),
                Insn::Threads { count, start } => {
                    last_span = count.span();
                    let n = self.ev(count)?.max(0);
                    self.threads(n, *start)?;
                    pc += 1;
                }
                Insn::Take { var, queue, count, exit } => {
                    let q = self.name(queue)?;
                    let n = self.ev(count)?;
                    let mut g = self.queues.lock().unwrap_or_else(|e| e.into_inner());
                    let next = g.entry(q).or_insert(0);
                    if *next < n {
                        self.vars[*var] = *next;
                        *next += 1;
                        pc += 1;
                    } else {
                        pc = *exit;
                    }
                }
                Insn::Op(kind, span) => {
                    steps = 0;
                    last_span = Span::default();
                    self.vars[ERRNO] = 0;
                    if !self.op(kind, *span)? {
                        return Ok(());
                    }
                    pc += 1;
                }
            }
        }
        Ok(())
    }

    /// `n` threads from `start`; the first error any of them hits is the program's.
    fn threads(&mut self, n: i64, start: usize) -> R<()> {
        let results: Vec<R<()>> = std::thread::scope(|sc| {
            let handles: Vec<_> = (0..n)
                .map(|i| {
                    let mut t = Child {
                        s: self.s,
                        queues: self.queues,
                        vars: self.vars.clone(),
                        regions: HashMap::new(),
                        rng: self.rng.clone(),
                        buf: Vec::new(),
                    };
                    t.vars[TID] = i;
                    sc.spawn(move || t.interpret(start))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err((Span::default(), "a thread panicked".into()))))
                .collect()
        });
        results.into_iter().collect()
    }

    fn ev(&self, e: &Expr) -> R<i64> {
        eval(self.s.prog, &self.vars, e)
    }
    fn ev_opt(&self, e: &Option<Expr>, dflt: i64) -> R<i64> {
        e.as_ref().map(|e| self.ev(e)).unwrap_or(Ok(dflt))
    }
    fn name(&self, t: &Template) -> R<String> {
        render(self.s.prog, &self.vars, t)
    }

    fn file(&self, t: &Template, span: Span) -> R<(String, PathBuf)> {
        let n = self.name(t)?;
        let p = file_path(self.s.dir, &n);
        if !p.is_file() {
            return Err((span, format!("no file named `{n}`")));
        }
        Ok((n, p))
    }

    /// A region's address and its pages [a, b) chosen by `offset=`/`len=` (bytes), as exec.rs.
    fn range(&self, n: &Template, offset: &Option<Expr>, len: &Option<Expr>, span: Span) -> R<(&Region, u64, u64)> {
        let nm = self.name(n)?;
        let Some(r) = self.regions.get(&nm) else {
            return Err((span, format!("no mapping named `{nm}` in this process")));
        };
        let off = self.ev_opt(offset, 0)?;
        let l = match len {
            Some(l) => Some(self.ev(l)?),
            None => None,
        };
        if off < 0 || l.is_some_and(|l| l < 0) {
            return Err((span, "offset and length must not be negative".into()));
        }
        let first = off as u64 / PAGE;
        let end = l.map(|l| (off as u64 + l as u64).div_ceil(PAGE)).unwrap_or(r.pages);
        if end > r.pages || first > end {
            return Err((
                span,
                format!("range [{off}, +{}) is outside the region of {} bytes", l.unwrap_or(0), r.pages * PAGE),
            ));
        }
        Ok((r, first, end))
    }

    /// Runs one operation; false when the program ends here (`exit`).
    fn op(&mut self, kind: &OpKind, span: Span) -> R<bool> {
        match kind {
            OpKind::Mmap { name, backing, len, offset, fixed, shared, write, locked, populate } => {
                self.mmap(name, backing, len, offset, [*fixed, *shared, *write, *locked, *populate], span)?
            }
            OpKind::Munmap { name, offset, len } => {
                let (r, a, b) = self.range(name, offset, len, span)?;
                // SAFETY: the range lies inside a mapping this process made.
                if unsafe { libc::munmap((r.addr + (a * PAGE) as usize) as *mut _, ((b - a) * PAGE) as usize) } != 0 {
                    self.vars[ERRNO] = errno();
                }
            }
            OpKind::Mlock { name, offset, len, chunk } => {
                let (r, a, b) = self.range(name, offset, len, span)?;
                let addr = r.addr;
                let chunk = match chunk {
                    Some(c) => (self.ev(c)?.max(PAGE as i64) as u64).div_ceil(PAGE),
                    None => (b - a).max(1),
                };
                let mut p = a;
                while p < b {
                    let n = chunk.min(b - p);
                    // SAFETY: inside our mapping.
                    if unsafe { libc::mlock((addr + (p * PAGE) as usize) as *const _, (n * PAGE) as usize) } != 0 {
                        self.vars[ERRNO] = errno();
                        break;
                    }
                    p += n;
                }
            }
            OpKind::Munlock { name, offset, len } | OpKind::MadviseDontneed { name, offset, len } => {
                let (r, a, b) = self.range(name, offset, len, span)?;
                let (ptr, n) = ((r.addr + (a * PAGE) as usize) as *mut libc::c_void, ((b - a) * PAGE) as usize);
                // SAFETY: inside our mapping.
                let rc = unsafe {
                    match kind {
                        OpKind::Munlock { .. } => libc::munlock(ptr, n),
                        _ => libc::madvise(ptr, n, libc::MADV_DONTNEED),
                    }
                };
                if rc != 0 {
                    self.vars[ERRNO] = errno();
                }
            }
            OpKind::Touch { name, access, offset, len, stride, pattern, count, rate } => {
                self.touch(name, *access == Access::Write, offset, len, stride, pattern, count, rate, span)?
            }
            OpKind::Read { file, offset, len, bs } => self.rw(file, offset, len, bs, None, span)?,
            OpKind::Write { file, offset, len, bs, append } => self.rw(file, offset, len, bs, Some(*append), span)?,
            OpKind::Create { file, size, disk: _ } => {
                let n = self.name(file)?;
                let bytes = self.ev_opt(size, 0)?.max(0) as u64;
                let p = file_path(self.s.dir, &n);
                if let Some(e) = create(&p, bytes) {
                    self.vars[ERRNO] = e;
                }
            }
            OpKind::Unlink { file } => {
                let p = file_path(self.s.dir, &self.name(file)?);
                if let Err(e) = std::fs::remove_file(&p) {
                    self.vars[ERRNO] = i64::from(e.raw_os_error().unwrap_or(libc::ENOENT));
                }
            }
            OpKind::Fsync { file } => {
                let (_, p) = self.file(file, span)?;
                if let Err(e) = std::fs::OpenOptions::new().write(true).open(&p).and_then(|f| f.sync_all()) {
                    self.vars[ERRNO] = i64::from(e.raw_os_error().unwrap_or(libc::EIO));
                }
            }
            OpKind::Sleep { dur: None } => {
                send(self.s.pipe, "F");
                loop {
                    // SAFETY: waits for the signal that ends the run.
                    unsafe { libc::pause() };
                }
            }
            OpKind::Sleep { dur: Some(d) } => std::thread::sleep(Duration::from_nanos(self.ev(d)?.max(0) as u64)),
            OpKind::Compute { dur } => {
                let until = Instant::now() + Duration::from_nanos(self.ev(dur)?.max(0) as u64);
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            }
            OpKind::Mark { name } => {
                let n = self.name(name)?.replace(char::is_whitespace, "_");
                send(self.s.pipe, &format!("M {} {n}", self.s.t0.elapsed().as_nanos()));
            }
            OpKind::Exit => return Ok(false),
            // No children: `fork` is refused, so there is nothing to wait for.
            OpKind::Wait => {}
            // The scenario's own files only: `echo 1 > drop_caches` would empty every other
            // process's page cache on the host too. Slab caches are not dropped.
            OpKind::DropCaches { .. } => drop_tree(&self.s.dir.join("files")),
            OpKind::Fork { .. }
            | OpKind::Threads { .. }
            | OpKind::ForeachQueue { .. }
            | OpKind::Migrate { .. }
            | OpKind::WaitUntil { .. }
            | OpKind::Send { .. }
            | OpKind::Swapoff => {
                return Err((span, "not supported by `vmlab real`".into()));
            }
        }
        Ok(true)
    }

    /// flags: [fixed, shared, write, locked, populate].
    fn mmap(
        &mut self,
        name: &Template,
        backing: &Backing,
        len: &Option<Expr>,
        offset: &Option<Expr>,
        flags: [bool; 5],
        span: Span,
    ) -> R<()> {
        let [fixed, shared, write, locked, populate] = flags;
        let nm = self.name(name)?;
        let off = (self.ev_opt(offset, 0)?.max(0) as u64) / PAGE * PAGE;
        let file = match backing {
            Backing::Anon => None,
            Backing::File(f) => Some(self.file(f, span)?.1),
            Backing::Shm(_) => return Err((span, "mmap shm= is not supported by `vmlab real`".into())),
        };
        let fsize = file.as_ref().map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
        let bytes = match (len, fsize) {
            (Some(l), _) => self.ev(l)?,
            (None, Some(fs)) => fs.saturating_sub(off) as i64,
            (None, None) => 0,
        };
        if bytes <= 0 {
            return Err((span, "mmap length must be positive".into()));
        }
        let pages = (bytes as u64).div_ceil(PAGE);
        let hint = if fixed {
            match self.regions.get(&nm) {
                Some(r) => r.addr,
                None => return Err((span, format!("no mapping named `{nm}` in this process"))),
            }
        } else {
            0
        };
        let prot = libc::PROT_READ | if write { libc::PROT_WRITE } else { 0 };
        let mut fl = if shared { libc::MAP_SHARED } else { libc::MAP_PRIVATE };
        fl |= if fixed { libc::MAP_FIXED } else { 0 } | if populate { libc::MAP_POPULATE } else { 0 };
        let fd = match &file {
            None => {
                fl |= libc::MAP_ANONYMOUS;
                -1
            }
            Some(p) => {
                let c = CString::new(p.as_os_str().as_bytes())
                    .map_err(|_| (span, "file name with a NUL byte".to_string()))?;
                let mode = if shared && write { libc::O_RDWR } else { libc::O_RDONLY };
                // SAFETY: a valid C string.
                let fd = unsafe { libc::open(c.as_ptr(), mode | libc::O_CLOEXEC) };
                if fd < 0 {
                    self.vars[ERRNO] = errno();
                    return Ok(());
                }
                fd
            }
        };
        // SAFETY: a fresh mapping (or MAP_FIXED over one of ours); fd is valid or -1 for anon.
        let addr = unsafe { libc::mmap(hint as *mut _, (pages * PAGE) as usize, prot, fl, fd, off as libc::off_t) };
        let e = errno();
        if fd >= 0 {
            // SAFETY: closes the fd opened above; the mapping keeps the file.
            unsafe { libc::close(fd) };
        }
        if addr == libc::MAP_FAILED {
            self.vars[ERRNO] = e;
            return Ok(());
        }
        let file_pages = fsize.map(|fs| fs.saturating_sub(off).div_ceil(PAGE));
        self.regions.insert(nm, Region { addr: addr as usize, pages, write, file_pages });
        // mlock(2) rather than MAP_LOCKED, whose failure the kernel does not report.
        // SAFETY: the mapping just made.
        if locked && unsafe { libc::mlock(addr, (pages * PAGE) as usize) } != 0 {
            self.vars[ERRNO] = errno();
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn touch(
        &mut self,
        name: &Template,
        write: bool,
        offset: &Option<Expr>,
        len: &Option<Expr>,
        stride: &Option<Expr>,
        pattern: &Pattern,
        count: &Option<Expr>,
        rate: &Option<Expr>,
        span: Span,
    ) -> R<()> {
        let (r, a, b) = self.range(name, offset, len, span)?;
        let (addr, rw, file_pages) = (r.addr, r.write, r.file_pages);
        let stride = (self.ev_opt(stride, PAGE as i64)?.max(1) as u64).div_ceil(PAGE).max(1);
        let npages = b - a;
        if npages == 0 {
            return Ok(());
        }
        let nm = self.name(name)?;
        if write && !rw {
            return Err((span, format!("SIGSEGV: writing to `{nm}`, mapped without prot=write")));
        }
        if file_pages.is_some_and(|fp| b > fp) {
            return Err((span, format!("SIGBUS: `{nm}` reaches past the end of its file")));
        }
        let zipf = match pattern {
            Pattern::Zipf { theta_milli } => {
                let th = self.ev(theta_milli)? as f64 / 1000.0;
                Some(vmlab_core::dist::Zipf::new(npages, th).map_err(|e| (span, format!("zipf: {e}")))?)
            }
            _ => None,
        };
        let seq = matches!(pattern, Pattern::Seq);
        let dflt = if seq { npages.div_ceil(stride) } else { npages };
        let count = self.ev_opt(count, dflt as i64)?.max(0) as u64;
        let rate = self.ev_opt(rate, 0)?.max(0) as u64;
        let gap = Duration::from_nanos(1_000_000_000u64.checked_div(rate).unwrap_or(0));
        let mut next = Instant::now();
        for i in 0..count {
            let idx = match (seq, &zipf) {
                (true, _) => (i * stride) % npages,
                (false, None) => self.rng.gen_range(0..npages),
                (false, Some(z)) => z.sample(&mut self.rng).min(npages - 1),
            };
            if !gap.is_zero() {
                let now = Instant::now();
                if now < next {
                    std::thread::sleep(next - now);
                }
                next += gap;
            }
            let p = (addr + ((a + idx) * PAGE) as usize) as *mut u8;
            // SAFETY: p is inside a live mapping with the needed protection (checked above).
            unsafe {
                if write {
                    p.write_volatile(p.read_volatile().wrapping_add(1));
                } else {
                    p.read_volatile();
                }
            }
        }
        Ok(())
    }

    /// Buffered read(2)/write(2) of a file; `append`: None for a read.
    fn rw(
        &mut self,
        file: &Template,
        offset: &Option<Expr>,
        len: &Option<Expr>,
        bs: &Option<Expr>,
        append: Option<bool>,
        span: Span,
    ) -> R<()> {
        use std::os::unix::fs::FileExt;
        let (_, p) = self.file(file, span)?;
        let mut oo = std::fs::OpenOptions::new();
        match append {
            None => oo.read(true),
            Some(true) => oo.append(true),
            Some(false) => oo.write(true),
        };
        let f = match oo.open(&p) {
            Ok(f) => f,
            Err(e) => {
                self.vars[ERRNO] = i64::from(e.raw_os_error().unwrap_or(libc::EIO));
                return Ok(());
            }
        };
        let fsize = f.metadata().map(|m| m.len()).unwrap_or(0);
        let off = if append == Some(true) { fsize } else { self.ev_opt(offset, 0)?.max(0) as u64 };
        let l = match len {
            Some(l) => self.ev(l)?.max(0) as u64,
            None => fsize.saturating_sub(off),
        };
        let end = if append.is_some() { off + l } else { (off + l).min(fsize) };
        let bs = match self.ev_opt(bs, 0)?.max(0) as u64 {
            0 => DEFAULT_BS,
            b => b,
        };
        if self.buf.len() < bs as usize {
            self.buf = vec![0x5a; bs as usize];
        }
        let mut pos = off;
        while pos < end {
            let n = bs.min(end - pos) as usize;
            let r = match append {
                None => f.read_at(&mut self.buf[..n], pos),
                Some(true) => std::io::Write::write(&mut &f, &self.buf[..n]),
                Some(false) => f.write_at(&self.buf[..n], pos),
            };
            match r {
                Ok(0) => break,
                Ok(k) => pos += k as u64,
                Err(e) => {
                    self.vars[ERRNO] = i64::from(e.raw_os_error().unwrap_or(libc::EIO));
                    // The program goes on, as `errno` promises, but the simulation of the same
                    // op does not fail: a run that did less I/O than its scenario must say so
                    // (a swap file and the written file on too small a file system had
                    // dirty-writer write 906 of its 1,024 MiB, unnoticed, for six sessions).
                    let op = if append.is_some() { "write" } else { "read" };
                    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    send(
                        self.s.pipe,
                        &format!("W {op} `{name}` stopped after {} of {} bytes: {e}", pos - off, end - off),
                    );
                    break;
                }
            }
        }
        Ok(())
    }
}

/// `POSIX_FADV_DONTNEED` on every file under `dir`; a file that cannot be opened is skipped.
fn drop_tree(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => drop_tree(&p),
            Ok(t) if t.is_file() => {
                let _ = super::setup::drop_cache(&p);
            }
            _ => {}
        }
    }
}

/// A new file of `bytes` with its blocks allocated (fallocate: no data I/O, as the simulator's
/// `create` costs none); the errno on failure.
fn create(p: &Path, bytes: u64) -> Option<i64> {
    use std::os::unix::io::AsRawFd;
    if let Some(d) = p.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    let f = match std::fs::File::create(p) {
        Ok(f) => f,
        Err(e) => return Some(i64::from(e.raw_os_error().unwrap_or(libc::EIO))),
    };
    if bytes > 0 {
        // SAFETY: a valid fd.
        if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, bytes as libc::off_t) } != 0 && f.set_len(bytes).is_err() {
            return Some(errno());
        }
    }
    None
}
