//! The memory cgroup that stands in for the scenario's machine: its limit is `machine.memory`.
//! A cgroup limit is not RAM: the host's free memory, zones, watermarks and kswapd are untouched,
//! and reclaim inside the cgroup is memcg (direct) reclaim against the limit.

use std::path::{Path, PathBuf};

use super::check::CgVersion;

pub struct Cgroup {
    pub version: CgVersion,
    pub path: PathBuf,
    pub limit: u64,
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

fn write(p: &Path, v: &str) -> Result<(), String> {
    std::fs::write(p, v).map_err(|e| format!("cannot write `{v}` to {}: {e}", p.display()))
}

impl Cgroup {
    /// Make `vmlab-real-<pid>` under `parent` with `limit` bytes of memory and `swap` bytes of
    /// swap (0 without `[swap]`: the host's own swap, if any, must not serve the cgroup).
    pub fn create(version: CgVersion, parent: &Path, limit: u64, swap: u64) -> Result<Cgroup, String> {
        if version == CgVersion::V2 {
            let ctl = std::fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap_or_default();
            if !ctl.split_whitespace().any(|c| c == "memory") {
                write(&parent.join("cgroup.subtree_control"), "+memory")?;
            }
        }
        let path = parent.join(format!("vmlab-real-{}", std::process::id()));
        std::fs::create_dir(&path).map_err(|e| format!("cannot create the cgroup {}: {e}", path.display()))?;
        let cg = Cgroup { version, path, limit };
        let file = match version {
            CgVersion::V1 => "memory.limit_in_bytes",
            CgVersion::V2 => "memory.max",
        };
        if let Err(e) = write(&cg.path.join(file), &limit.to_string()) {
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
            if let Err(e) = write(&f, &value.to_string()) {
                cg.remove();
                return Err(e);
            }
        }
        Ok(cg)
    }

    /// The file a process writes its pid to in order to join.
    pub fn procs_file(&self) -> PathBuf {
        self.path.join("cgroup.procs")
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
        for _ in 0..50 {
            match std::fs::remove_dir(&self.path) {
                Ok(()) => return,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
        eprintln!("vmlab real: could not remove the cgroup {}", self.path.display());
    }
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
