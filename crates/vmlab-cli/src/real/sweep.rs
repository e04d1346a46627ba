//! The start-up sweep: what an earlier `vmlab real` left when it was killed with SIGKILL (no
//! destructor runs then). Everything a run makes is named `vmlab-real-<pid>` after the process
//! that made it, so a name whose process is gone is a leftover: its swap file is switched off,
//! the tasks still in its cgroup are killed and the cgroup removed, and its directory deleted.
//! What `--keep` keeps is renamed `vmlab-kept-<pid>` and is left alone.

use std::path::{Path, PathBuf};

pub const PREFIX: &str = "vmlab-real-";

/// The pid in a `vmlab-real-<pid>` name.
fn owner(name: &str) -> Option<libc::pid_t> {
    let digits = name.strip_prefix(PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A leftover: its owner is not running. A pid in use by another program keeps its leftovers
/// until that program ends, which errs on the side of leaving things.
pub(super) fn orphaned(name: &str) -> bool {
    owner(name)
        .is_some_and(|pid| pid == std::process::id() as libc::pid_t || !Path::new(&format!("/proc/{pid}")).exists())
}

/// /proc/swaps writes a space in a path as `\040` (and tab, newline, backslash likewise).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            let v = u32::from(b[i + 1] - b'0') * 64 + u32::from(b[i + 2] - b'0') * 8 + u32::from(b[i + 3] - b'0');
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Sweep the cgroups under each of `cg_parents` and the working directories under `bases`; returns one
/// line per thing removed, and the problems (a swap file that would not switch off stays, and
/// so does its directory).
pub fn sweep(cg_parents: &[PathBuf], bases: &[PathBuf]) -> (Vec<String>, Vec<String>) {
    sweep_swaps(&std::fs::read_to_string("/proc/swaps").unwrap_or_default(), cg_parents, bases)
}

/// `sweep` with the text of /proc/swaps given: the unit test gives none, so it never switches
/// off a swap file that a killed real run on this host left for the next run to sweep.
fn sweep_swaps(swaps: &str, cg_parents: &[PathBuf], bases: &[PathBuf]) -> (Vec<String>, Vec<String>) {
    let (mut done, mut problems) = (Vec::new(), Vec::new());
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut busy: Vec<PathBuf> = Vec::new();
    for line in swaps.lines().skip(1) {
        let Some(field) = line.split_whitespace().next() else { continue };
        let p = PathBuf::from(unescape(field));
        let Some(dir) = p.parent() else { continue };
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.file_name().is_some_and(|f| f == "swapfile") && orphaned(name) {
            match swapoff_orphan(&p) {
                Ok(()) => {
                    let _ = std::fs::remove_file(&p);
                    done.push(format!("switched off the swap file {}", p.display()));
                    dirs.push(dir.to_path_buf());
                }
                Err(e) => {
                    problems.push(e);
                    busy.push(dir.to_path_buf());
                }
            }
        }
    }
    for (path, name) in cg_parents.iter().flat_map(|p| children(p)) {
        if !orphaned(&name) {
            continue;
        }
        // Tasks of a run killed before its children could see it die: kill them, then rmdir
        // (which fails while a task is left, and briefly while exited tasks' charges drain).
        for _ in 0..100 {
            let procs = std::fs::read_to_string(path.join("cgroup.procs")).unwrap_or_default();
            let pids: Vec<libc::pid_t> = procs.split_whitespace().filter_map(|p| p.parse().ok()).collect();
            for &pid in &pids {
                // SAFETY: sends SIGKILL to a task of a leftover cgroup; no memory is touched.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            match std::fs::remove_dir(&path) {
                Ok(()) => {
                    done.push(format!("removed the cgroup {}", path.display()));
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
        if path.exists() {
            problems.push(format!("could not remove the cgroup {}", path.display()));
        }
    }
    for base in bases {
        for (path, name) in children(base) {
            if orphaned(&name) && !dirs.contains(&path) {
                dirs.push(path);
            }
        }
    }
    for d in dirs {
        if busy.contains(&d) {
            continue;
        }
        match std::fs::remove_dir_all(&d) {
            Ok(()) => done.push(format!("removed {}", d.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => problems.push(format!("could not remove {}: {e}", d.display())),
        }
    }
    (done, problems)
}

/// `swapoff` of a killed run's swap file. A run killed in its teardown may have left its own
/// `swapoff` running (a separate process, which outlives it): ours then fails while that one
/// works, so retry for a while and count the file as off once /proc/swaps no longer lists it.
fn swapoff_orphan(p: &Path) -> Result<(), String> {
    let listed = || {
        let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
        swaps.lines().skip(1).filter_map(|l| l.split_whitespace().next()).any(|f| Path::new(&unescape(f)) == p)
    };
    let mut last = String::new();
    for _ in 0..50 {
        match super::setup::run_tool("swapoff", p) {
            Ok(()) => return Ok(()),
            Err(_) if !listed() => return Ok(()),
            Err(e) => last = e,
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(last)
}

/// The `vmlab-real-*` directories in `dir`, with their names.
fn children(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            owner(&name).map(|_| (e.path(), name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_escapes() {
        assert_eq!(owner("vmlab-real-123"), Some(123));
        assert_eq!(owner("vmlab-real-test-x-1"), None);
        assert_eq!(owner("vmlab-kept-123"), None);
        assert_eq!(owner("vmlab-real-"), None);
        assert_eq!(unescape(r"/tmp/a\040b/swapfile"), "/tmp/a b/swapfile");
        assert_eq!(unescape(r"/x\04"), r"/x\04");
    }

    #[test]
    fn a_live_owner_is_not_a_leftover() {
        // PID 1 is always running; a pid above pid_max never is.
        assert!(!orphaned("vmlab-real-1"));
        assert!(orphaned("vmlab-real-999999999"));
        assert!(!orphaned("vmlab-real-test-1"));
    }

    #[test]
    fn sweeps_a_dead_owners_directory_and_keeps_the_rest() {
        let base = std::env::temp_dir().join(format!("vmlab-sweep-test-{}", std::process::id()));
        let dead = base.join("vmlab-real-999999999");
        let live = base.join("vmlab-real-1");
        let kept = base.join("vmlab-kept-999999999");
        for d in [&dead, &live, &kept] {
            std::fs::create_dir_all(d.join("files")).unwrap();
        }
        let (done, problems) = sweep_swaps("", &[base.join("no-cgroups-here")], std::slice::from_ref(&base));
        let (dead_left, live_left, kept_left) = (dead.exists(), live.exists(), kept.exists());
        let _ = std::fs::remove_dir_all(&base);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!dead_left && live_left && kept_left);
    }
}
