//! `vmlab compare`: MMTests-style side-by-side tables, one column per run, laid out exactly as in
//! seed 001 (Mel Gorman's 2010 postings): a workload-metrics table whose values carry a `( x.xx%)`
//! delta against the first column, then the "duration", "vmscan" and "Faults" tables from /proc/vmstat.

use super::report::RunReport;
use std::fmt::Write;

pub use super::report::{load_reports, load_reports_named};

pub mod kernels;

/// How a `( x.xx%)` delta is computed from the first column's value `base` and a value `x`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeltaStyle {
    /// `(x − base) / x × 100`, as the 2010 MMTests scripts did (seed 001: 250 → 416 is `(39.90%)`).
    #[default]
    Mmtests2010,
    /// `(x − base) / base × 100`, the usual relative change (250 → 416 is `(66.40%)`).
    Relative,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct CompareOpts {
    pub delta: DeltaStyle,
    /// Also put a delta after every value of the duration/vmscan/Faults tables (seed 001 has none).
    pub stat_deltas: bool,
}

/// Percent delta of `x` against `base`. Equal values (zeros included) give 0; a zero divisor with
/// unequal values gives ±infinity, printed `(  inf%)` / `( -inf%)` as C's printf would.
pub fn delta_pct(base: f64, x: f64, style: DeltaStyle) -> f64 {
    if x == base {
        return 0.0;
    }
    let div = match style {
        DeltaStyle::Mmtests2010 => x,
        DeltaStyle::Relative => base,
    };
    if div == 0.0 {
        (x - base).signum() * f64::INFINITY
    } else {
        (x - base) * 100.0 / div
    }
}

fn fmt_delta(d: f64) -> String {
    format!("({:>5.2}%)", d)
}

/// The MMTests label of a metric name; unknown names are shown as they are.
pub fn metric_label(name: &str) -> &str {
    match name {
        "transactions_per_s" => "Transactions per second",
        "data_read_mb_per_s" => "Data megabytes read per second",
        "data_written_mb_per_s" => "Data megabytes written per second",
        "files_created_alone_per_s" => "Files created alone per second",
        "files_create_transact_per_s" => "Files create/transact per second",
        "files_deleted_alone_per_s" => "Files deleted alone per second",
        "files_delete_transact_per_s" => "Files delete/transact per second",
        "throughput_mb_per_s" => "Throughput (MB/s)",
        "ops_per_s" => "Operations per second",
        "runtime_s" => "Run time (seconds)",
        other => other,
    }
}

/// All columns of seed 001, side by side against the first column.
pub fn compare(runs: &[(String, RunReport)]) -> String {
    compare_with(runs, &CompareOpts::default())
}

pub fn compare_with(runs: &[(String, RunReport)], opts: &CompareOpts) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    let mut out = String::new();
    let metrics = metrics_table(runs, opts.delta);
    let has_metrics = !metrics.is_empty();
    out.push_str(&metrics);
    if has_metrics {
        out.push('\n');
    }
    let reports: Vec<&RunReport> = runs.iter().map(|(_, r)| r).collect();
    let header = if has_metrics { None } else { Some(&names[..]) };
    let t = |title: Option<&str>, rows: &[Row], later_w: usize, header: Option<&[&str]>| {
        stat_table(title, rows, later_w, header, opts)
    };
    out.push_str(&t(Some("MMTests Statistics: duration"), &duration_rows(&reports), 10, header));
    out.push('\n');
    let (block1, block2) = vmscan_rows(&reports);
    // Seed 001 prints this block's later columns one wider (11) than the other tables (10).
    out.push_str(&t(Some("VMstat Reclaim Statistics: vmscan"), &block1, 11, None));
    out.push('\n');
    out.push_str(&t(None, &block2, 10, None));
    out.push('\n');
    out.push_str(&t(Some("proc vmstat: Faults"), &fault_rows(&reports), 10, None));
    out
}

/// Metric names in order of first appearance across the runs.
fn metric_names(runs: &[(String, RunReport)]) -> Vec<&str> {
    let mut v: Vec<&str> = Vec::new();
    for (_, r) in runs {
        for (k, _) in r.metrics.iter() {
            if !v.contains(&k) {
                v.push(k);
            }
        }
    }
    v
}

fn metrics_table(runs: &[(String, RunReport)], style: DeltaStyle) -> String {
    let names = metric_names(runs);
    if names.is_empty() {
        return String::new();
    }
    let labels: Vec<String> = names.iter().map(|n| format!("{}:", metric_label(n))).collect();
    let lw = labels.iter().map(|l| l.chars().count() + 1).max().unwrap_or(0).max(35);
    // cells[row][col] = (value text, delta text)
    let cells: Vec<Vec<(String, String)>> = names
        .iter()
        .map(|n| {
            let base = runs[0].1.metrics.get(n).copied();
            runs.iter()
                .map(|(_, r)| match (base, r.metrics.get(n)) {
                    (_, None) => ("-".to_string(), "(   n/a)".to_string()),
                    (None, Some(&x)) => (format!("{x:.2}"), "(   n/a)".to_string()),
                    (Some(b), Some(&x)) => (format!("{x:.2}"), fmt_delta(delta_pct(b, x, style))),
                })
                .collect()
        })
        .collect();
    let vw: Vec<usize> = (0..runs.len())
        .map(|c| {
            let longest = cells.iter().map(|row| row[c].0.len() + 1).max().unwrap_or(0);
            longest.max(9).max(runs[c].0.chars().count().saturating_sub(8))
        })
        .collect();
    let mut s = " ".repeat(lw);
    for (c, (name, _)) in runs.iter().enumerate() {
        let _ = write!(s, "{:>w$}", name, w = vw[c] + 9);
    }
    s.push('\n');
    for (label, row) in labels.iter().zip(&cells) {
        let _ = write!(s, "{label:<lw$}");
        for (c, (v, d)) in row.iter().enumerate() {
            let _ = write!(s, "{:>w$} {d}", v, w = vw[c]);
        }
        s.push('\n');
    }
    s
}

#[derive(Clone, Copy)]
enum Val {
    Int(u64),
    /// Seconds, printed like perl prints a number (2 decimals, trailing zeros dropped: `17.4`).
    Secs(f64),
    /// Percentage with 2 decimals and a `%` sign.
    Pct(f64),
}

impl Val {
    fn num(self) -> f64 {
        match self {
            Val::Int(v) => v as f64,
            Val::Secs(v) | Val::Pct(v) => v,
        }
    }
    fn text(self) -> String {
        match self {
            Val::Int(v) => v.to_string(),
            Val::Secs(v) => perl_num(v),
            Val::Pct(v) => format!("{v:.2}%"),
        }
    }
}

fn perl_num(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { &s };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

type Row = (&'static str, Vec<Val>);

/// Label field 40 wide; the first column 10 wide, later ones `later_w`; columns widen so that at
/// least one space separates them. With `stat_deltas`, each value is followed by its delta, padded
/// to the widest delta of the column so the columns stay aligned.
fn stat_table(title: Option<&str>, rows: &[Row], later_w: usize, header: Option<&[&str]>, o: &CompareOpts) -> String {
    let ncol = rows.first().map_or(0, |r| r.1.len());
    let vals: Vec<Vec<String>> = rows.iter().map(|(_, vs)| vs.iter().map(|v| v.text()).collect()).collect();
    let deltas: Vec<Vec<String>> = rows
        .iter()
        .map(|(_, vs)| vs.iter().map(|v| fmt_delta(delta_pct(vs[0].num(), v.num(), o.delta))).collect())
        .collect();
    let col_max = |t: &Vec<Vec<String>>, c: usize| t.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
    let dw: Vec<usize> = (0..ncol).map(|c| if o.stat_deltas { col_max(&deltas, c) + 1 } else { 0 }).collect();
    let vw: Vec<usize> = (0..ncol)
        .map(|c| {
            let base = if c == 0 { 10 } else { later_w };
            let hdr = header.and_then(|h| h.get(c)).map_or(0, |n| (n.chars().count() + 1).saturating_sub(dw[c]));
            base.max(col_max(&vals, c) + 1).max(hdr)
        })
        .collect();
    let mut s = String::new();
    if let Some(h) = header {
        s.push_str(&" ".repeat(40));
        for (c, n) in h.iter().enumerate().take(ncol) {
            let _ = write!(s, "{:>w$}", n, w = vw[c] + dw[c]);
        }
        s.push('\n');
    }
    if let Some(t) = title {
        s.push_str(t);
        s.push('\n');
    }
    for (r, (label, _)) in rows.iter().enumerate() {
        let mut line = format!("{label:<40}");
        for c in 0..ncol {
            let _ = write!(line, "{:>w$}", vals[r][c], w = vw[c]);
            if o.stat_deltas {
                let _ = write!(line, " {:<w$}", deltas[r][c], w = dw[c] - 1);
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// `name` plus its per-zone forms (`name_dma`, ...), as 2.6.36 splits some counters by zone.
fn zsum(r: &RunReport, name: &str) -> u64 {
    ["", "_dma", "_dma32", "_normal", "_high", "_movable"]
        .iter()
        .map(|z| r.counter(&format!("{name}{z}")))
        .fold(0u64, u64::saturating_add)
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn duration_rows(rs: &[&RunReport]) -> Vec<Row> {
    let user_sys = |r: &RunReport| r.tasks.iter().filter(|t| !t.kthread).map(|t| t.cpu_s).sum::<f64>();
    vec![
        ("User/Sys Time Running Test (seconds)", rs.iter().map(|r| Val::Secs(user_sys(r))).collect()),
        ("Total Elapsed Time (seconds)", rs.iter().map(|r| Val::Secs(r.elapsed_s)).collect()),
    ]
}

fn vmscan_rows(rs: &[&RunReport]) -> (Vec<Row>, Vec<Row>) {
    let ints = |f: &dyn Fn(&RunReport) -> u64| rs.iter().map(|r| Val::Int(f(r))).collect::<Vec<_>>();
    let c = |name: &'static str| move |r: &RunReport| r.counter(name);
    // Limit reclaim of a memory cgroup (a `vmlab real` run, a run with [[cgroup]]s) is neither
    // kswapd's nor direct reclaim in /proc/vmstat: only pgscan_anon/file count it.
    let split_or_types = |r: &RunReport, what: &str| {
        let split = zsum(r, &format!("{what}_direct")).saturating_add(zsum(r, &format!("{what}_kswapd")));
        if split > 0 {
            split
        } else {
            r.counter(&format!("{what}_anon")).saturating_add(r.counter(&format!("{what}_file")))
        }
    };
    let scanned = |r: &RunReport| split_or_types(r, "pgscan");
    let stolen = |r: &RunReport| split_or_types(r, "pgsteal");
    let block1 = vec![
        ("Direct reclaims", ints(&|r| zsum(r, "allocstall"))),
        ("Direct reclaim pages scanned", ints(&|r| zsum(r, "pgscan_direct"))),
        ("Direct reclaim pages reclaimed", ints(&|r| zsum(r, "pgsteal_direct"))),
        ("Kswapd pages scanned", ints(&|r| zsum(r, "pgscan_kswapd"))),
        ("Kswapd pages reclaimed", ints(&|r| zsum(r, "pgsteal_kswapd"))),
        ("Kswapd low wmark quickly", ints(&c("kswapd_low_wmark_hit_quickly"))),
        ("Kswapd high wmark quickly", ints(&c("kswapd_high_wmark_hit_quickly"))),
        ("Kswapd skip congestion_wait", ints(&c("kswapd_skip_congestion_wait"))),
        ("Pages activated", ints(&c("pgactivate"))),
        ("Pages deactivated", ints(&c("pgdeactivate"))),
        ("Pages written", ints(&c("nr_vmscan_write"))),
    ];
    let block2 = vec![
        ("Total pages scanned", ints(&scanned)),
        ("Total pages reclaimed", ints(&stolen)),
        ("%age total pages scanned/reclaimed", rs.iter().map(|r| Val::Pct(pct(stolen(r), scanned(r)))).collect()),
        (
            "%age total pages scanned/written",
            rs.iter().map(|r| Val::Pct(pct(r.counter("nr_vmscan_write"), scanned(r)))).collect(),
        ),
    ];
    (block1, block2)
}

fn fault_rows(rs: &[&RunReport]) -> Vec<Row> {
    let ints = |f: &dyn Fn(&RunReport) -> u64| rs.iter().map(|r| Val::Int(f(r))).collect::<Vec<_>>();
    vec![
        ("Major Faults", ints(&|r| r.counter("pgmajfault"))),
        ("Minor Faults", ints(&|r| r.counter("pgfault").saturating_sub(r.counter("pgmajfault")))),
        ("Page ins", ints(&|r| r.counter("pgpgin"))),
        ("Page outs", ints(&|r| r.counter("pgpgout"))),
        ("Swap ins", ints(&|r| r.counter("pswpin"))),
        ("Swap outs", ints(&|r| r.counter("pswpout"))),
    ]
}

#[cfg(test)]
mod tests;
