//! The `vmstat 1`-style timeline: one `Sample` per simulated interval, printed exactly like procps
//! `vmstat` (fixed minimum widths; a large number widens its column and shifts the rest of the line,
//! as printf does in procps), or as CSV.

use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// One timeline sample. Rates are averages over the interval ending at `t_s`.
/// Reading JSON is lenient: a missing field reads as 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sample {
    /// Simulated time at the end of the interval, seconds.
    pub t_s: f64,
    /// Runnable tasks (running or waiting for a CPU).
    pub r: u32,
    /// Tasks in uninterruptible sleep (waiting for I/O or a lock such as mmap_sem).
    pub b: u32,
    /// vmstat `swpd`: swap in use, kB.
    pub swpd_kb: u64,
    pub free_kb: u64,
    pub buff_kb: u64,
    /// vmstat `cache`: Cached + SReclaimable, kB (as procps-ng computes it).
    pub cache_kb: u64,
    /// Swapped in from disk, KiB/s.
    pub si: u64,
    /// Swapped out to disk, KiB/s.
    pub so: u64,
    /// Blocks (1 KiB) read from block devices per second.
    pub bi: u64,
    /// Blocks (1 KiB) written to block devices per second.
    pub bo: u64,
    /// Interrupts per second.
    #[serde(rename = "in")]
    pub in_: u64,
    /// Context switches per second.
    pub cs: u64,
    pub us: u32,
    pub sy: u32,
    pub id: u32,
    pub wa: u32,
    /// Time stolen by a hypervisor (procps `st`): always 0 on the simulated machine, which runs
    /// on no hypervisor; `vmlab real` reads the host's.
    #[serde(default)]
    pub st: u32,
    /// SwapTotal − SwapFree, kB.
    pub swap_used_kb: u64,
    /// meminfo `Cached`, kB.
    pub cached_kb: u64,
    pub dirty_kb: u64,
    /// CPU use of all kswapd threads, percent of one CPU (can exceed 100 with several nodes).
    pub kswapd_cpu_pct: f64,
    /// sar -B `pgscank/s`, `pgscand/s`, `pgsteal/s`, `majflt/s`.
    pub pgscank_s: f64,
    pub pgscand_s: f64,
    pub pgsteal_s: f64,
    pub majflt_s: f64,
}

/// Columns of `to_csv`, in the order of the JSON fields.
pub const CSV_COLUMNS: &[&str] = &[
    "t_s",
    "r",
    "b",
    "swpd_kb",
    "free_kb",
    "buff_kb",
    "cache_kb",
    "si",
    "so",
    "bi",
    "bo",
    "in",
    "cs",
    "us",
    "sy",
    "id",
    "wa",
    "st",
    "swap_used_kb",
    "cached_kb",
    "dirty_kb",
    "kswapd_cpu_pct",
    "pgscank_s",
    "pgscand_s",
    "pgsteal_s",
    "majflt_s",
];

const HEADER1: &str = "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----";
const HEADER2: &str = " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st";

/// Options for `format_vmstat_with`.
#[derive(Clone, Copy, Debug, Default)]
pub struct VmstatOpts {
    /// Prefix each line with the simulated time in seconds (`--time-- ` / `     t_s `).
    pub time: bool,
}

/// `vmstat 1` output: the two header lines once, then one line per sample.
pub fn format_vmstat(samples: &[Sample]) -> String {
    format_vmstat_with(samples, VmstatOpts::default())
}

pub fn format_vmstat_with(samples: &[Sample], opts: VmstatOpts) -> String {
    let mut s = String::new();
    let (p1, p2) = if opts.time { ("--time-- ", "     t_s ") } else { ("", "") };
    let _ = writeln!(s, "{p1}{HEADER1}");
    let _ = writeln!(s, "{p2}{HEADER2}");
    for x in samples {
        if opts.time {
            let _ = write!(s, "{:>8.2} ", x.t_s);
        }
        // procps: "%2u %2u %6lu %6lu %6lu %6lu %4u %4u %5u %5u %4u %4u %2u %2u %2u %2u %2u"
        let _ = writeln!(
            s,
            "{:>2} {:>2} {:>6} {:>6} {:>6} {:>6} {:>4} {:>4} {:>5} {:>5} {:>4} {:>4} {:>2} {:>2} {:>2} {:>2} {:>2}",
            x.r,
            x.b,
            x.swpd_kb,
            x.free_kb,
            x.buff_kb,
            x.cache_kb,
            x.si,
            x.so,
            x.bi,
            x.bo,
            x.in_,
            x.cs,
            x.us,
            x.sy,
            x.id,
            x.wa,
            x.st
        );
    }
    s
}

/// CSV with a header row (`CSV_COLUMNS`); floats in Rust's shortest round-trip form.
pub fn to_csv(samples: &[Sample]) -> String {
    let mut s = CSV_COLUMNS.join(",");
    s.push('\n');
    for x in samples {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            x.t_s,
            x.r,
            x.b,
            x.swpd_kb,
            x.free_kb,
            x.buff_kb,
            x.cache_kb,
            x.si,
            x.so,
            x.bi,
            x.bo,
            x.in_,
            x.cs,
            x.us,
            x.sy,
            x.id,
            x.wa,
            x.st,
            x.swap_used_kb,
            x.cached_kb,
            x.dirty_kb,
            x.kswapd_cpu_pct,
            x.pgscank_s,
            x.pgscand_s,
            x.pgsteal_s,
            x.majflt_s
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::ordered::OrderedMap;

    fn sample() -> Sample {
        Sample {
            t_s: 1.0,
            r: 5,
            swpd_kb: 0,
            free_kb: 233039,
            buff_kb: 4892,
            cache_kb: 915792,
            bi: 2798,
            bo: 2074,
            in_: 175,
            cs: 172,
            us: 36,
            sy: 4,
            id: 60,
            ..Default::default()
        }
    }

    #[test]
    fn vmstat_exact() {
        let big = Sample { free_kb: 23303904, swpd_kb: 1048576, si: 12345, ..sample() };
        let out = format_vmstat(&[sample(), big]);
        let want = "\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 5  0      0 233039   4892 915792    0    0  2798  2074  175  172 36  4 60  0  0
 5  0 1048576 23303904   4892 915792 12345    0  2798  2074  175  172 36  4 60  0  0
";
        assert_eq!(out, want);
    }

    #[test]
    fn vmstat_with_time_column() {
        let out = format_vmstat_with(&[sample()], VmstatOpts { time: true });
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("--time-- procs ---"));
        assert!(lines[1].starts_with("     t_s  r  b   swpd"));
        assert_eq!(
            lines[2],
            "    1.00  5  0      0 233039   4892 915792    0    0  2798  2074  175  172 36  4 60  0  0"
        );
        assert_eq!(format_vmstat(&[]).lines().count(), 2);
    }

    #[test]
    fn csv_header_and_row() {
        let mut x = sample();
        x.t_s = 0.5;
        x.kswapd_cpu_pct = 97.25;
        let out = to_csv(&[x]);
        let mut lines = out.lines();
        assert_eq!(lines.next().unwrap(), CSV_COLUMNS.join(","));
        assert_eq!(
            lines.next().unwrap(),
            "0.5,5,0,0,233039,4892,915792,0,0,2798,2074,175,172,36,4,60,0,0,0,0,0,97.25,0,0,0,0"
        );
        assert!(lines.next().is_none());
    }

    #[test]
    fn csv_columns_match_json_field_order() {
        let m: OrderedMap<serde_json::Value> =
            serde_json::from_str(&serde_json::to_string(&sample()).unwrap()).unwrap();
        let keys: Vec<&str> = m.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, CSV_COLUMNS);
    }
}
