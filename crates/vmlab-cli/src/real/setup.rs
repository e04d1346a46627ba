//! The host-side environment of a run: a working directory with the scenario's files, an
//! optional swap file, and the cgroup. `Env` undoes all of it when dropped, so an error return,
//! a panic unwinding through `real()` or an interrupted run still swapoffs and deletes.

use std::fs::File;
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::cgroup::Cgroup;

pub struct Env {
    pub dir: PathBuf,
    pub cgroup: Option<Cgroup>,
    pub swapfile: Option<PathBuf>,
    swap_on: bool,
    pub keep: bool,
    /// Children still to be killed and reaped before the cgroup can go.
    pub children: Vec<libc::pid_t>,
    /// The tracefs instance of the workload's own events; dropped (removed) after the rest.
    pub tracer: Option<super::tracefs::Tracer>,
}

/// Where a scenario file named `name` lives (names may contain `/`: they become sub-directories).
pub fn file_path(dir: &Path, name: &str) -> PathBuf {
    let clean: Vec<&str> = name.split('/').filter(|c| !c.is_empty() && *c != "." && *c != "..").collect();
    let mut p = dir.join("files");
    for c in clean {
        p.push(c);
    }
    p
}

impl Env {
    /// The working directory under `base`, which must exist: a mistyped `--dir` is an error, not
    /// a tree of new directories left behind.
    pub fn new(base: &Path, keep: bool) -> Result<Env, String> {
        if !base.is_dir() {
            return Err(format!("--dir {}: no such directory (it is not created for you)", base.display()));
        }
        let dir = base.join(format!("{}{}", super::sweep::PREFIX, std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let env = Env { dir, cgroup: None, swapfile: None, swap_on: false, keep, children: Vec::new(), tracer: None };
        std::fs::create_dir(env.dir.join("files")).map_err(|e| format!("cannot create {}: {e}", env.dir.display()))?;
        Ok(env)
    }

    /// A file of `bytes` real zeros, on disk and not in the page cache.
    pub fn make_file(&self, name: &str, bytes: u64) -> Result<(), String> {
        let p = file_path(&self.dir, name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        }
        write_zeros(&p, bytes)?;
        drop_cache(&p)
    }

    /// mkswap + swapon a file of `bytes`.
    pub fn make_swap(&mut self, bytes: u64) -> Result<(), String> {
        let p = self.dir.join("swapfile");
        write_zeros(&p, bytes)?;
        self.swapfile = Some(p.clone());
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .map_err(|e| format!("chmod {}: {e}", p.display()))?;
        run_tool("mkswap", &p)?;
        run_tool("swapon", &p)?;
        self.swap_on = true;
        Ok(())
    }

    fn teardown(&mut self) {
        for &pid in &self.children {
            // SAFETY: pid is a child this process forked and has not reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        self.children.clear();
        if let Some(p) = &self.swapfile {
            if self.swap_on {
                if let Err(e) = run_tool("swapoff", p) {
                    eprintln!("vmlab real: {e}; the swap file {} is still active", p.display());
                    return;
                }
                self.swap_on = false;
            }
            let _ = std::fs::remove_file(p);
        }
        if self.keep {
            // Renamed, so that the next run's sweep of `vmlab-real-*` leftovers leaves them alone.
            let dir = kept_name(&self.dir);
            if let Some(cg) = self.cgroup.take() {
                // The v1 run's pressure group holds nothing worth keeping.
                if let Some(p) = cg.psi_group.as_ref().filter(|p| **p != cg.path) {
                    let _ = std::fs::remove_dir(p);
                }
                eprintln!("vmlab real: kept the cgroup {} and {}", kept_name(&cg.path).display(), dir.display());
            } else {
                eprintln!("vmlab real: kept {}", dir.display());
            }
            return;
        }
        if let Some(cg) = self.cgroup.take() {
            cg.remove();
        }
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("vmlab real: could not remove {}: {e}", self.dir.display());
        }
    }
}

/// `vmlab-real-<pid>` renamed `vmlab-kept-<pid>` (the name it has if the rename fails).
fn kept_name(p: &Path) -> PathBuf {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else { return p.to_path_buf() };
    let to = p.with_file_name(name.replacen("vmlab-real-", "vmlab-kept-", 1));
    match std::fs::rename(p, &to) {
        Ok(()) => to,
        Err(_) => p.to_path_buf(),
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        self.teardown();
    }
}

pub fn run_tool(tool: &str, p: &Path) -> Result<(), String> {
    let out = Command::new(tool).arg(p).output().map_err(|e| format!("cannot run {tool}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{tool} {} failed: {}", p.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(())
}

/// The error of a setup step that stopped for Ctrl-C or SIGTERM.
pub const INTERRUPTED: &str = "interrupted";

/// Zeros written in 1 MiB pieces (not a sparse file, not fallocate: reads must go to the disk),
/// then fsync'd.
pub fn write_zeros(p: &Path, bytes: u64) -> Result<(), String> {
    let mut f = File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?;
    let chunk = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        if super::run::interrupted() {
            return Err(INTERRUPTED.into());
        }
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        left -= n as u64;
    }
    f.sync_all().map_err(|e| format!("cannot fsync {}: {e}", p.display()))
}

/// Evict a clean file from the page cache, so the run starts cold.
pub fn drop_cache(p: &Path) -> Result<(), String> {
    let f = File::open(p).map_err(|e| format!("cannot open {}: {e}", p.display()))?;
    // SAFETY: a valid open fd; offset 0, len 0 means the whole file.
    let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        return Err(format!("posix_fadvise(DONTNEED) on {}: errno {r}", p.display()));
    }
    Ok(())
}
