//! The memory cgroup that stands in for the scenario's machine: its limit is `machine.memory`.
//! A cgroup limit is not RAM: the host's free memory, zones, watermarks and kswapd are untouched,
//! and reclaim inside the cgroup is memcg (direct) reclaim against the limit.

use std::path::{Path, PathBuf};

use super::check::CgVersion;

pub struct Cgroup {
    pub version: CgVersion,
    pub path: PathBuf,
    pub limit: u64,
    /// Where the workload's own `memory.pressure` is: the memory cgroup itself under v2; under
    /// v1, a group of the same name in a cgroup2 hierarchy mounted beside it (systemd's hybrid
    /// `unified`), since PSI follows a task's cgroup2 membership whatever controllers the v1
    /// hierarchies have. `None`: no such hierarchy, or the kernel keeps no PSI (`psi=0`).
    pub psi_group: Option<PathBuf>,
}

/// One reading of the cgroup's counters.
#[derive(Clone, Debug, Default)]
pub struct CgStat {
    pub usage: u64,
    /// memory.stat as (name, value) in file order.
    pub stat: Vec<(String, u64)>,
}

impl CgStat {
    pub fn get(&self, name: &str) -> u64 {
        self.stat.iter().find(|(k, _)| k == name).map(|(_, v)| *v).unwrap_or(0)
    }
    /// Page cache charged to the cgroup, bytes.
    pub fn cache(&self, v: CgVersion) -> u64 {
        match v {
            CgVersion::V1 => self.get("cache"),
            CgVersion::V2 => self.get("file"),
        }
    }
    pub fn dirty(&self, v: CgVersion) -> u64 {
        match v {
            CgVersion::V1 => self.get("dirty"),
            CgVersion::V2 => self.get("file_dirty"),
        }
    }
    /// Swap used by the cgroup, bytes (v1 reports it only with swap accounting).
    pub fn swap(&self) -> u64 {
        self.get("swap")
    }
}

impl Cgroup {
    /// Make `vmlab-real-<pid>` under `parent` with `limit` bytes of memory and `swap` bytes of
    /// swap (0 without `[swap]`: the host's own swap, if any, must not serve the cgroup).
    pub fn create(version: CgVersion, parent: &Path, limit: u64, swap: u64) -> Result<Cgroup, String> {
        if version == CgVersion::V2 {
            let ctl = std::fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap_or_default();
            if !ctl.split_whitespace().any(|c| c == "memory") {
                super::write_control(&parent.join("cgroup.subtree_control"), "+memory")?;
            }
        }
        let path = parent.join(format!("vmlab-real-{}", std::process::id()));
        std::fs::create_dir(&path).map_err(|e| format!("cannot create the cgroup {}: {e}", path.display()))?;
        let mut cg = Cgroup { version, path, limit, psi_group: None };
        let file = match version {
            CgVersion::V1 => "memory.limit_in_bytes",
            CgVersion::V2 => "memory.max",
        };
        if let Err(e) = super::write_control(&cg.path.join(file), &limit.to_string()) {
            cg.remove();
            return Err(e);
        }
        // Swap accounting may be off (no memsw / swap.max file): then only the swap file's size
        // bounds the cgroup's swap, and any other active swap on the host is open to it too.
        let (file, value) = match version {
            CgVersion::V1 => ("memory.memsw.limit_in_bytes", limit.saturating_add(swap)),
            CgVersion::V2 => ("memory.swap.max", swap),
        };
        let f = cg.path.join(file);
        if f.exists() {
            if let Err(e) = super::write_control(&f, &value.to_string()) {
                cg.remove();
                return Err(e);
            }
        }
        cg.psi_group = match version {
            CgVersion::V2 => cg.path.join("memory.pressure").is_file().then(|| cg.path.clone()),
            CgVersion::V1 => cgroup2_mount().and_then(|m| {
                let p = m.join(cg.path.file_name()?);
                std::fs::create_dir(&p).ok()?;
                if p.join("memory.pressure").is_file() {
                    Some(p)
                } else {
                    let _ = std::fs::remove_dir(&p);
                    None
                }
            }),
        };
        Ok(cg)
    }

    /// The files a process writes its pid to in order to join (the memory cgroup, then the
    /// pressure group if it is another).
    pub fn procs_files(&self) -> Vec<PathBuf> {
        let mut v = vec![self.path.join("cgroup.procs")];
        v.extend(self.psi_group.iter().filter(|p| **p != self.path).map(|p| p.join("cgroup.procs")));
        v
    }

    /// The workload's `memory.pressure` totals (some, full) in microseconds.
    pub fn pressure(&self) -> Option<[u64; 2]> {
        self.pressure_of("memory")
    }

    /// The same of the group's `RESOURCE.pressure` (`cpu`: waits for a CPU, which a memory stall
    /// on a busy host includes; `io`).
    pub fn pressure_of(&self, resource: &str) -> Option<[u64; 2]> {
        self.psi_group.as_ref().and_then(|p| read_pressure(&p.join(format!("{resource}.pressure"))))
    }

    pub fn read(&self) -> CgStat {
        let usage_file = match self.version {
            CgVersion::V1 => "memory.usage_in_bytes",
            CgVersion::V2 => "memory.current",
        };
        let usage =
            std::fs::read_to_string(self.path.join(usage_file)).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
        let mut stat = read_pairs(&self.path.join("memory.stat"));
        if self.version == CgVersion::V2 {
            // v2 keeps swap use out of memory.stat; v1 lists it there as `swap`.
            let swap = std::fs::read_to_string(self.path.join("memory.swap.current"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0);
            stat.push(("swap".into(), swap));
        }
        CgStat { usage, stat }
    }

    /// The kernel's own high-water mark, when it keeps one (v1 always; v2 from 5.19).
    pub fn max_usage(&self) -> Option<u64> {
        let f = match self.version {
            CgVersion::V1 => "memory.max_usage_in_bytes",
            CgVersion::V2 => "memory.peak",
        };
        std::fs::read_to_string(self.path.join(f)).ok().and_then(|s| s.trim().parse().ok())
    }

    /// Times the limit was hit (v1 failcnt; v2 memory.events `max`).
    pub fn failcnt(&self) -> u64 {
        match self.version {
            CgVersion::V1 => std::fs::read_to_string(self.path.join("memory.failcnt"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0),
            CgVersion::V2 => read_pairs(&self.path.join("memory.events"))
                .iter()
                .find(|(k, _)| k == "max")
                .map(|(_, v)| *v)
                .unwrap_or(0),
        }
    }

    /// Processes the cgroup's OOM killer has killed (v1 memory.oom_control, v2 memory.events).
    pub fn oom_kills(&self) -> u64 {
        let f = match self.version {
            CgVersion::V1 => "memory.oom_control",
            CgVersion::V2 => "memory.events",
        };
        read_pairs(&self.path.join(f)).iter().find(|(k, _)| k == "oom_kill").map(|(_, v)| *v).unwrap_or(0)
    }

    /// rmdir the cgroup, retrying briefly: it stays busy while exited tasks' charges drain.
    pub fn remove(&self) {
        let mut dirs = vec![&self.path];
        dirs.extend(self.psi_group.iter().filter(|p| **p != self.path));
        'dirs: for d in dirs {
            for _ in 0..50 {
                match std::fs::remove_dir(d) {
                    Ok(()) => continue 'dirs,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue 'dirs,
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
                }
            }
            eprintln!("vmlab real: could not remove the cgroup {}", d.display());
        }
    }
}

/// The mount point of a cgroup2 hierarchy, from /proc/self/mounts (a v1 host may mount one too).
pub fn cgroup2_mount() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    cgroup2_in_mounts(&mounts)
}

fn cgroup2_in_mounts(mounts: &str) -> Option<PathBuf> {
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 2 && f[2] == "cgroup2").then(|| PathBuf::from(f[1].replace("\\040", " ")))
    })
}

/// The `total=` of the `some` and `full` lines of a PSI file (microseconds since boot).
pub fn read_pressure(p: &Path) -> Option<[u64; 2]> {
    parse_pressure(&std::fs::read_to_string(p).ok()?)
}

fn parse_pressure(text: &str) -> Option<[u64; 2]> {
    let mut out = [None, None];
    for l in text.lines() {
        let mut it = l.split_whitespace();
        let i = match it.next() {
            Some("some") => 0,
            Some("full") => 1,
            _ => continue,
        };
        out[i] = it.find_map(|kv| kv.strip_prefix("total=")).and_then(|v| v.parse().ok());
    }
    Some([out[0]?, out[1]?])
}

/// `name value` lines (memory.stat, /proc/vmstat, memory.events).
pub fn read_pairs(p: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let k = it.next()?;
            let v = it.next()?.parse().ok()?;
            Some((k.to_string(), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_totals_and_the_cgroup2_mount() {
        let psi = "some avg10=1.50 avg60=0.20 avg300=0.00 total=26193444\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=3624899\n";
        assert_eq!(parse_pressure(psi), Some([26193444, 3624899]));
        // A kernel before 5.13 prints no `full` line for the system's cpu file: not a memory file.
        assert_eq!(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"), None);
        assert_eq!(parse_pressure("some avg10=0.00 total=x\nfull total=1\n"), None);
        let mounts = "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
        assert_eq!(cgroup2_in_mounts(mounts), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        assert_eq!(cgroup2_in_mounts("cgroup /sys/fs/cgroup/memory cgroup rw 0 0\n"), None);
    }
}
