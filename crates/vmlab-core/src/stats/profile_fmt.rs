//! Text forms of CPU accounting: the gprof/readprofile flat profile of simulated kernel time
//! (seed 000 shows one) and a `top`-like task table.

use super::kfunc::KernelProfile;
use super::report::TaskCpu;
use std::fmt::Write;

/// (kernel function name, seconds, calls where counted) rows from a `KernelProfile`, most
/// expensive first.
pub fn kernel_profile_rows(p: &KernelProfile) -> Vec<(String, f64, Option<u64>)> {
    p.rows().into_iter().map(|(f, ns, calls)| (f, ns as f64 / 1e9, calls)).collect()
}

/// `format_flat_profile` with gprof's `calls` and `us/call` columns, shown when some row counts
/// its calls (an interrupt handler).
pub fn format_flat_profile_calls(rows: &[(&str, f64, Option<u64>)], total_s: f64) -> String {
    if rows.iter().all(|r| r.2.is_none()) {
        let plain: Vec<(&str, f64)> = rows.iter().map(|r| (r.0, r.1)).collect();
        return format_flat_profile(&plain, total_s);
    }
    let mut rows: Vec<(&str, f64, Option<u64>)> = rows.to_vec();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut s = String::from(
        "  %   cumulative   self               self\n time   seconds   seconds      calls  us/call  name\n",
    );
    let mut cum = 0.0;
    for (name, secs, calls) in rows {
        cum += secs;
        let pct = if total_s > 0.0 { secs * 100.0 / total_s } else { 0.0 };
        let (c, per) = match calls {
            Some(c) if c > 0 => (c.to_string(), format!("{:.2}", secs * 1e6 / c as f64)),
            _ => (String::new(), String::new()),
        };
        let _ = writeln!(s, "{pct:>6.2}{cum:>10.2}{secs:>9.2} {c:>10} {per:>8}  {name}");
    }
    s
}

/// gprof flat profile: `% time` is self / `total_s` (pass all CPU time, idle included, to read
/// like seed 000; 0.00 when `total_s` is not positive), `cumulative` the running sum. Rows are
/// sorted like gprof: self seconds descending, then name.
pub fn format_flat_profile(rows: &[(&str, f64)], total_s: f64) -> String {
    let mut rows: Vec<(&str, f64)> = rows.to_vec();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut s = String::from("  %   cumulative   self\n time   seconds   seconds    name\n");
    let mut cum = 0.0;
    for (name, secs) in rows {
        cum += secs;
        let pct = if total_s > 0.0 { secs * 100.0 / total_s } else { 0.0 };
        let _ = writeln!(s, "{pct:>6.2}{cum:>10.2}{secs:>9.2}    {name}");
    }
    s
}

/// top's `TIME+`: minutes:seconds.hundredths.
fn time_plus(secs: f64) -> String {
    let cs = if secs.is_finite() && secs > 0.0 { (secs * 100.0).round() as u64 } else { 0 };
    format!("{}:{:02}.{:02}", cs / 6000, cs / 100 % 60, cs % 100)
}

/// A `top`-like table, busiest first (by %CPU, then CPU time, then pid, then name). Commands longer
/// than 15 characters (TASK_COMM_LEN − 1) are cut and end in `+`, as top does.
pub fn format_tasks(tasks: &[TaskCpu]) -> String {
    let mut t: Vec<&TaskCpu> = tasks.iter().collect();
    t.sort_by(|a, b| {
        b.cpu_pct
            .total_cmp(&a.cpu_pct)
            .then(b.cpu_s.total_cmp(&a.cpu_s))
            .then(a.pid.cmp(&b.pid))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut s = String::from("  PID COMMAND          %CPU    TIME+\n");
    for x in t {
        let name = if x.name.chars().count() > 15 {
            format!("{}+", x.name.chars().take(14).collect::<String>())
        } else {
            x.name.clone()
        };
        let _ = writeln!(s, "{:>5} {:<15} {:>5.1} {:>8}", x.pid, name, x.cpu_pct, time_plus(x.cpu_s));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::kfunc::KFunc;

    #[test]
    fn flat_profile_exact() {
        let rows = [("page_launder", 2.20), ("refill_inactive_scan", 2.54), ("default_idle", 25.61)];
        let out = format_flat_profile(&rows, 35.76);
        let want = "  %   cumulative   self
 time   seconds   seconds    name
 71.62     25.61    25.61    default_idle
  7.10     28.15     2.54    refill_inactive_scan
  6.15     30.35     2.20    page_launder
";
        assert_eq!(out, want);
        assert!(format_flat_profile(&[("x", 1.0)], 0.0).ends_with("  0.00      1.00     1.00    x\n"));
    }

    #[test]
    fn rows_from_kernel_profile() {
        let mut p = KernelProfile::default();
        p.add(KFunc::PageLaunder, 2_000_000_000);
        p.add(KFunc::BalancePgdat, 500_000_000);
        assert_eq!(
            kernel_profile_rows(&p),
            vec![("page_launder".to_string(), 2.0, None), ("balance_pgdat".to_string(), 0.5, None)]
        );
    }

    #[test]
    fn tasks_exact() {
        let t = |pid, name: &str, cpu_s, cpu_pct| TaskCpu { pid, name: name.into(), cpu_s, cpu_pct, kthread: false };
        let out = format_tasks(&[
            t(1000, "postmark", 16.58, 7.6),
            t(52, "kswapd0", 212.5, 97.3),
            t(1001, "a_very_long_process_name", 0.0, 0.0),
        ]);
        let want = "  PID COMMAND          %CPU    TIME+
   52 kswapd0          97.3  3:32.50
 1000 postmark          7.6  0:16.58
 1001 a_very_long_pr+   0.0  0:00.00
";
        assert_eq!(out, want);
    }
}
