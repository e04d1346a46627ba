//! Readings of the host (/proc/vmstat, /proc/stat, kswapd's CPU time) and of the cgroup, turned
//! into the simulator's timeline samples. Memory columns describe the cgroup (the emulated
//! machine); rates, CPU split and kswapd are host-wide, as the host has one kswapd per node and
//! one /proc/vmstat.

use vmlab_core::stats::report::TaskCpu;
use vmlab_core::stats::timeline::Sample;

use super::cgroup::{read_pairs, CgStat, Cgroup};

#[derive(Clone, Debug, Default)]
pub struct HostSnap {
    /// Seconds since the run started.
    pub t: f64,
    pub vmstat: Vec<(String, u64)>,
    /// /proc/stat `cpu` line: user nice system idle iowait irq softirq steal.
    pub cpu: [u64; 8],
    pub intr: u64,
    pub ctxt: u64,
    pub running: u32,
    pub blocked: u32,
    /// utime + stime of every kswapd thread, clock ticks.
    pub kswapd_ticks: u64,
    /// The same per kswapd thread: (pid, ticks).
    pub kswapd_each: Vec<(u32, u64)>,
    pub cg: CgStat,
    /// `/proc/pressure/memory` totals (some, full), µs; `None` without PSI.
    pub psi: Option<[u64; 2]>,
    /// The workload's own `memory.pressure` totals (cgroup.rs `psi_group`).
    pub cg_psi: Option<[u64; 2]>,
    /// Its `cpu.pressure` and `io.pressure`: read at the start and the end only.
    pub cg_cpu_io: [Option<[u64; 2]>; 2],
    /// `/sys/block/DEV/stat` of every block device: its first 11 fields.
    pub block: Vec<(String, [u64; 11])>,
}

impl HostSnap {
    pub fn get(&self, name: &str) -> u64 {
        self.vmstat.iter().find(|(k, _)| k == name).map(|(_, v)| *v).unwrap_or(0)
    }
}

/// The pids of the kswapd threads (`kswapd0`, `kswapd1`, ...).
pub fn kswapd_pids() -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.starts_with("kswapd")))
        .collect()
}

fn task_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the `(comm)`, which may contain spaces: state is field 3, utime 14, stime 15.
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

pub fn read(t: f64, kswapd: &[u32], cg: &Cgroup) -> HostSnap {
    let mut h = HostSnap {
        t,
        vmstat: read_pairs(std::path::Path::new("/proc/vmstat")),
        cg: cg.read(),
        psi: super::cgroup::read_pressure(std::path::Path::new("/proc/pressure/memory")),
        cg_psi: cg.pressure(),
        ..Default::default()
    };
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    for l in stat.lines() {
        let mut it = l.split_whitespace();
        let key = it.next().unwrap_or("");
        let mut num = || it.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        match key {
            "cpu" => {
                for c in h.cpu.iter_mut() {
                    *c = num();
                }
            }
            "intr" => h.intr = num(),
            "ctxt" => h.ctxt = num(),
            "procs_running" => h.running = num() as u32,
            "procs_blocked" => h.blocked = num() as u32,
            _ => {}
        }
    }
    h.kswapd_each = kswapd.iter().map(|&p| (p, task_ticks(p))).collect();
    h.kswapd_ticks = h.kswapd_each.iter().map(|(_, t)| t).sum();
    h.block = block_stats(std::path::Path::new("/sys/block"));
    h
}

/// `DEV/stat` under `dir` (`/sys/block`), sorted by name: fields 1-11 (Documentation/block/
/// stat.rst: I/Os, merges, sectors, ticks for reads then writes; in_flight, io_ticks,
/// time_in_queue). An unreadable entry, or one with fewer fields, is left out.
pub fn block_stats(dir: &std::path::Path) -> Vec<(String, [u64; 11])> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<(String, [u64; 11])> = rd
        .filter_map(|e| {
            let e = e.ok()?;
            let text = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let f: Vec<u64> = text.split_whitespace().map_while(|x| x.parse().ok()).collect();
            let fields: [u64; 11] = f.get(..11)?.try_into().ok()?;
            Some((e.file_name().to_string_lossy().into_owned(), fields))
        })
        .collect();
    v.sort();
    v
}

pub fn clk_tck() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64
}

/// The host's kswapd threads over (a, b], as kernel-thread rows of the task table.
pub fn kswapd_tasks(a: &HostSnap, b: &HostSnap) -> Vec<TaskCpu> {
    let secs = (b.t - a.t).max(1e-9);
    b.kswapd_each
        .iter()
        .map(|&(pid, t)| {
            let before = a.kswapd_each.iter().find(|(p, _)| *p == pid).map_or(t, |(_, t0)| *t0);
            let cpu_s = t.saturating_sub(before) as f64 / clk_tck();
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim().to_string())
                .unwrap_or_else(|_| "kswapd".into());
            TaskCpu { pid, name, cpu_s, cpu_pct: cpu_s / secs * 100.0, kthread: true }
        })
        .collect()
}

/// The interval (a, b] as a timeline sample.
pub fn sample(a: &HostSnap, b: &HostSnap, cg: &Cgroup) -> Sample {
    let dt = (b.t - a.t).max(1e-6);
    let d = |n: &str| b.get(n).saturating_sub(a.get(n)) as f64;
    let per_s = |n: &str| (d(n) / dt).round() as u64;
    let cpu: Vec<u64> = (0..8).map(|i| b.cpu[i].saturating_sub(a.cpu[i])).collect();
    let total = cpu.iter().sum::<u64>().max(1) as f64;
    let pct = |x: u64| (x as f64 * 100.0 / total).round() as u32;
    let hz = clk_tck();
    let v = cg.version;
    Sample {
        t_s: b.t,
        r: b.running,
        b: b.blocked,
        swpd_kb: b.cg.swap() / 1024,
        free_kb: cg.limit.saturating_sub(b.cg.usage) / 1024,
        buff_kb: 0,
        cache_kb: b.cg.cache(v) / 1024,
        si: per_s("pswpin") * 4,
        so: per_s("pswpout") * 4,
        bi: per_s("pgpgin"),
        bo: per_s("pgpgout"),
        in_: (b.intr.saturating_sub(a.intr) as f64 / dt).round() as u64,
        cs: (b.ctxt.saturating_sub(a.ctxt) as f64 / dt).round() as u64,
        us: pct(cpu[0] + cpu[1]),
        sy: pct(cpu[2] + cpu[5] + cpu[6]),
        id: pct(cpu[3]),
        wa: pct(cpu[4]),
        st: pct(cpu[7]),
        swap_used_kb: b.cg.swap() / 1024,
        cached_kb: b.cg.cache(v) / 1024,
        dirty_kb: b.cg.dirty(v) / 1024,
        kswapd_cpu_pct: b.kswapd_ticks.saturating_sub(a.kswapd_ticks) as f64 / hz / dt * 100.0,
        pgscank_s: d("pgscan_kswapd") / dt,
        pgscand_s: d("pgscan_direct") / dt,
        pgsteal_s: (d("pgsteal_kswapd") + d("pgsteal_direct")) / dt,
        majflt_s: b.cg.get("pgmajfault").saturating_sub(a.cg.get("pgmajfault")) as f64 / dt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_stats_reads_the_eleven_fields_and_leaves_out_what_it_cannot() {
        let dir = std::env::temp_dir().join(format!("vmlab-block-stats-{}", std::process::id()));
        let dev = |name: &str, text: &str| {
            std::fs::create_dir_all(dir.join(name)).unwrap();
            std::fs::write(dir.join(name).join("stat"), text).unwrap();
        };
        // 6.18's 17 fields (discards and flushes after the 11 this reads).
        dev("vda", "  3799790  5289777 1983622764  9314252  1859611  8774596 657164992  6529367        2  1483692 16102136  1266238        6 577084448   250015   242145     8501\n");
        // A kernel before 4.18 prints 11.
        dev("sdb", "1 0 8 3 4 5 64 7 0 9 10\n");
        dev("short", "1 2 3 4 5 6 7\n");
        dev("bad", "1 2 3 x 5 6 7 8 9 10 11\n");
        std::fs::create_dir_all(dir.join("nostat")).unwrap();
        let got = block_stats(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            got,
            [
                ("sdb".to_string(), [1, 0, 8, 3, 4, 5, 64, 7, 0, 9, 10]),
                (
                    "vda".to_string(),
                    [3799790, 5289777, 1983622764, 9314252, 1859611, 8774596, 657164992, 6529367, 2, 1483692, 16102136]
                ),
            ]
        );
        assert!(block_stats(&std::env::temp_dir().join("vmlab-no-such-dir")).is_empty());
    }
}
