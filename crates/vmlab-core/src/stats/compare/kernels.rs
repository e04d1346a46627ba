//! `vmlab compare`'s table, as MMTests' compare-kernels prints one: a row per figure with the
//! arithmetic mean of each column (and the standard deviation when a column holds repeats), and
//! after each later column its difference from the first as a *gain*: positive when the column
//! is better, whichever way "better" points for that row. MMTests computes it with `pdiff` for
//! figures where higher is better and `pndiff` where lower is better (MMTests,
//! bin/lib/MMTests/Stat.pm); a difference that Welch's t-test finds significant at 5% is marked
//! `*` instead of being put in parentheses, as MMTests marks it.

use std::fmt::Write;

use crate::stats::report::RunReport;

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    /// A figure's direction from its name: rates and throughputs are better higher; times,
    /// waits and the kernel's work counters (scans, stalls, faults, I/O) lower.
    pub fn of(name: &str) -> Better {
        let n = name.to_ascii_lowercase();
        let higher = ["_per_s", "per_second", "_mb_s", "throughput", "speedup", "transactions", "ops", "bandwidth"];
        if higher.iter().any(|h| n.contains(h)) {
            Better::Higher
        } else {
            Better::Lower
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

/// MMTests' `pdiff`: how much higher `x` is than `base`, in percent of `base`.
pub fn pdiff(x: f64, base: f64) -> f64 {
    if x == base || x == 0.0 {
        0.0
    } else if base == 0.0 {
        100.0
    } else {
        x * 100.0 / base - 100.0
    }
}

/// MMTests' `pndiff`: how much lower `x` is than `base`, in percent of `base`.
pub fn pndiff(x: f64, base: f64) -> f64 {
    if x == base {
        0.0
    } else if x == 0.0 {
        100.0
    } else if base == 0.0 {
        -99.0
    } else {
        100.0 - x * 100.0 / base
    }
}

/// The gain of `x` over `base` for a figure better in direction `b`: positive is better.
pub fn gain(x: f64, base: f64, b: Better) -> f64 {
    match b {
        Better::Higher => pdiff(x, base),
        Better::Lower => pndiff(x, base),
    }
}

/// One column: the runs it averages (repeats of one configuration) under a label.
#[derive(Clone, Debug)]
pub struct Column {
    pub label: String,
    pub runs: Vec<RunReport>,
}

/// Mean, sample standard deviation and count of a column's values of one figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub amean: f64,
    pub stddev: f64,
    pub n: usize,
}

impl Stat {
    pub fn of(v: &[f64]) -> Stat {
        let n = v.len();
        let amean = if n == 0 { f64::NAN } else { v.iter().sum::<f64>() / n as f64 };
        let stddev =
            if n < 2 { 0.0 } else { (v.iter().map(|x| (x - amean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() };
        Stat { amean, stddev, n }
    }
}

/// A row of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub better: Better,
    /// Per column; None where no run of the column has the figure.
    pub stats: Vec<Option<Stat>>,
    /// Per column, the gain over the first column (0 for the first).
    pub gains: Vec<Option<f64>>,
    /// Per column, whether the difference from the first is significant (needs repeats).
    pub significant: Vec<bool>,
}

/// The whole comparison.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub labels: Vec<String>,
    pub rows: Vec<Row>,
    pub warnings: Vec<String>,
}

/// Welch's t-test at 5%: do means `a` and `b` differ? Needs at least two values on each side.
pub fn welch_significant(a: Stat, b: Stat) -> bool {
    if a.n < 2 || b.n < 2 {
        return false;
    }
    let (va, vb) = (a.stddev.powi(2) / a.n as f64, b.stddev.powi(2) / b.n as f64);
    if va + vb == 0.0 {
        // No spread at all: any difference is real.
        return a.amean != b.amean;
    }
    let t = (a.amean - b.amean) / (va + vb).sqrt();
    // Welch-Satterthwaite degrees of freedom, rounded down as MMTests does.
    let df = ((va + vb).powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64)).floor().max(1.0);
    student_t_two_sided_p(t, df) < 0.05
}

/// Two-sided p-value of Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
}

/// The regularised incomplete beta function I_x(a, b), by its continued fraction (Lentz).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast below the mean of the distribution; use the symmetry above it.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = 1.0 / if d.abs() < tiny { tiny } else { d };
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = 1.0 / if d.abs() < tiny { tiny } else { d };
            c = 1.0 + num / c;
            c = if c.abs() < tiny { tiny } else { c };
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-12 {
            break;
        }
    }
    front * f / a
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The figures of a run by row name: its metrics, `elapsed_s`, its memory stall times, then its
/// vmstat counters.
fn figures(r: &RunReport) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = r.metrics.iter().map(|(k, x)| (k.to_string(), *x)).collect();
    if r.metrics.get("elapsed_s").is_none() {
        v.push(("elapsed_s".into(), r.elapsed_s));
    }
    if let Some(p) = &r.pressure {
        v.push(("psi:memory_some_s".into(), p.some.total as f64 / 1e6));
        v.push(("psi:memory_full_s".into(), p.full.total as f64 / 1e6));
    }
    v.extend(r.vmstat.iter().map(|(k, x)| (format!("vmstat:{k}"), *x as f64)));
    v
}

/// What distinguishes a run from the others of a comparison: scenario, profile and params, but
/// not the seed (runs that differ only in their seed are repeats of one configuration).
fn config(r: &RunReport) -> Vec<(String, String)> {
    let mut v = vec![("scenario".to_string(), r.scenario.clone()), ("profile".to_string(), r.profile.clone())];
    for (k, x) in r.params.iter().filter(|(k, _)| *k != "seed") {
        let text = match x {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(_) | serde_json::Value::Object(_) => continue,
            x => x.to_string(),
        };
        v.push((k.to_string(), text));
    }
    v
}

/// Group runs into columns: consecutive runs of the same configuration are repeats of one
/// column. Each column is labelled by the fields whose values differ between columns (the
/// profile, a `--set`, a seed's parameter); `names` (one per run, e.g. file names) label the
/// columns when nothing differs.
pub fn columns(runs: &[(String, RunReport)]) -> Vec<Column> {
    // (configuration, name of its first run, its runs)
    type Group = (Vec<(String, String)>, String, Vec<RunReport>);
    let mut groups: Vec<Group> = Vec::new();
    for (name, r) in runs {
        let c = config(r);
        // The same seed again is not a repeat but another run to set beside it (another
        // build, the host's kernel).
        match groups.last_mut() {
            Some(g) if g.0 == c && g.2.iter().all(|x| x.seed != r.seed) => g.2.push(r.clone()),
            _ => groups.push((c, name.clone(), vec![r.clone()])),
        }
    }
    let mut keys: Vec<String> = Vec::new();
    for (c, _, _) in &groups {
        for (k, _) in c {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let value = |c: &[(String, String)], k: &str| c.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone());
    let differing: Vec<&String> =
        keys.iter().filter(|k| groups.iter().any(|g| value(&g.0, k) != value(&groups[0].0, k))).collect();
    groups
        .into_iter()
        .map(|(c, name, runs)| {
            let parts: Vec<String> = differing
                .iter()
                .filter_map(|k| {
                    let v = value(&c, k)?;
                    // The profile and the scenario read well alone; a parameter needs its name.
                    Some(if *k == "profile" || *k == "scenario" { v } else { format!("{k}={v}") })
                })
                .collect();
            let label = if parts.is_empty() { name } else { parts.join(" ") };
            Column { label, runs }
        })
        .collect()
}

/// Compare columns against the first.
pub fn compare(cols: &[Column]) -> Comparison {
    let mut names: Vec<String> = Vec::new();
    let per_col: Vec<Vec<Vec<(String, f64)>>> = cols.iter().map(|c| c.runs.iter().map(figures).collect()).collect();
    for runs in &per_col {
        for f in runs {
            for (k, _) in f {
                if !names.contains(k) {
                    names.push(k.clone());
                }
            }
        }
    }
    let mut rows = Vec::new();
    for name in names {
        let stats: Vec<Option<Stat>> = per_col
            .iter()
            .map(|runs| {
                let v: Vec<f64> =
                    runs.iter().filter_map(|f| f.iter().find(|(k, _)| *k == name).map(|(_, x)| *x)).collect();
                (!v.is_empty()).then(|| Stat::of(&v))
            })
            .collect();
        // A counter that stayed 0 everywhere says nothing.
        if name.starts_with("vmstat:") && stats.iter().flatten().all(|s| s.amean == 0.0) {
            continue;
        }
        let better = Better::of(name.trim_start_matches("vmstat:"));
        let base = stats[0];
        let gains = stats.iter().map(|s| Some(gain(s.as_ref()?.amean, base?.amean, better))).collect();
        let significant =
            stats.iter().map(|s| matches!((base, s), (Some(b), Some(s)) if welch_significant(b, *s))).collect();
        rows.push(Row { name, better, stats, gains, significant });
    }
    let mut warnings = Vec::new();
    let mut scenarios: Vec<&str> = Vec::new();
    for c in cols {
        for r in &c.runs {
            if !scenarios.contains(&r.scenario.as_str()) {
                scenarios.push(&r.scenario);
            }
        }
    }
    if scenarios.len() > 1 {
        warnings.push(format!(
            "the runs are of different scenarios ({}): their figures may not measure the same thing",
            scenarios.join(", ")
        ));
    }
    Comparison { labels: cols.iter().map(|c| c.label.clone()).collect(), rows, warnings }
}

fn num(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// `( 12.34%)` for a gain, `*  12.34%*` when significant, as MMTests prints them.
fn fmt_gain(g: Option<f64>, significant: bool) -> String {
    match g {
        None => "(    n/a)".into(),
        Some(g) if significant => format!("*{g:7.2}%*"),
        Some(g) => format!("({g:7.2}%)"),
    }
}

/// The table as text: `Amean` rows (and `Stddev` rows when any column holds repeats), columns
/// as wide as their labels and values, and the direction of each row after its name.
pub fn format(c: &Comparison) -> String {
    let repeats = c.rows.iter().any(|r| r.stats.iter().flatten().any(|s| s.n > 1));
    let kinds: &[&str] = if repeats { &["Amean", "Stddev"] } else { &["Amean"] };
    let names: Vec<String> = c.rows.iter().map(|r| format!("{} ({} is better)", r.name, r.better.name())).collect();
    let nw = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let ncol = c.labels.len();
    let value = |r: &Row, i: usize, kind: &str| match r.stats[i] {
        Some(s) if kind == "Amean" => num(s.amean),
        Some(s) => num(s.stddev),
        None => "-".into(),
    };
    let gain_w = fmt_gain(Some(0.0), false).len();
    let vw: Vec<usize> = (0..ncol)
        .map(|i| {
            let v = c.rows.iter().flat_map(|r| kinds.iter().map(move |k| value(r, i, k).len())).max().unwrap_or(1);
            let label = c.labels[i].chars().count();
            v.max(label.saturating_sub(gain_w + 1))
        })
        .collect();
    let mut s = String::new();
    let _ = write!(s, "{:6}  {:nw$}", "", "");
    for (i, l) in c.labels.iter().enumerate() {
        let _ = write!(s, "  {:>w$}", l, w = vw[i] + gain_w + 1);
    }
    s.push('\n');
    for (r, name) in c.rows.iter().zip(&names) {
        for kind in kinds {
            let mut line = format!("{kind:6}  {name:nw$}");
            for (i, w) in vw.iter().enumerate() {
                let g = if *kind == "Amean" { fmt_gain(r.gains[i], r.significant[i]) } else { " ".repeat(gain_w) };
                let _ = write!(line, "  {:>w$} {g}", value(r, i, kind), w = *w);
            }
            s.push_str(line.trim_end());
            s.push('\n');
        }
    }
    s
}

/// The comparison as JSON (schema `vmlab.compare/1`).
pub fn to_json(c: &Comparison) -> serde_json::Value {
    let f = |x: f64| if x.is_finite() { serde_json::json!(x) } else { serde_json::Value::Null };
    let rows: Vec<serde_json::Value> = c
        .rows
        .iter()
        .map(|r| {
            let cols: Vec<serde_json::Value> = (0..c.labels.len())
                .map(|i| match r.stats[i] {
                    Some(s) => serde_json::json!({
                        "amean": f(s.amean), "stddev": f(s.stddev), "n": s.n,
                        "gain_pct": r.gains[i].map(f), "significant": r.significant[i],
                    }),
                    None => serde_json::Value::Null,
                })
                .collect();
            serde_json::json!({ "name": r.name, "better": r.better.name(), "columns": cols })
        })
        .collect();
    serde_json::json!({
        "schema": "vmlab.compare/1",
        "columns": c.labels,
        "warnings": c.warnings,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speedup_is_a_positive_gain_either_way_better_points() {
        // 4.3x faster: the time falls to 1/4.3 of the base (lower is better).
        let g = gain(10.0 / 4.3, 10.0, Better::Lower);
        assert!((g - (100.0 - 100.0 / 4.3)).abs() < 1e-9, "{g}");
        assert!(gain(430.0, 100.0, Better::Higher) > 0.0);
        assert!(gain(100.0, 430.0, Better::Higher) < 0.0);
        assert!(gain(43.0, 10.0, Better::Lower) < 0.0);
    }

    #[test]
    fn zero_cases_are_mmtests() {
        assert_eq!(pdiff(0.0, 5.0), 0.0);
        assert_eq!(pdiff(5.0, 0.0), 100.0);
        assert_eq!(pndiff(0.0, 5.0), 100.0);
        assert_eq!(pndiff(5.0, 0.0), -99.0);
        assert_eq!(pndiff(3.0, 3.0), 0.0);
    }

    #[test]
    fn directions_follow_the_names() {
        assert_eq!(Better::of("transactions_per_s"), Better::Higher);
        assert_eq!(Better::of("disk_read_mb_s"), Better::Higher);
        assert_eq!(Better::of("elapsed_s"), Better::Lower);
        assert_eq!(Better::of("allocstall"), Better::Lower);
    }

    #[test]
    fn student_t_matches_its_table() {
        // Two-sided 5% critical values: t(1) = 12.706, t(10) = 2.228, t(30) = 2.042.
        for (t, df) in [(12.706, 1.0), (2.228, 10.0), (2.042, 30.0)] {
            let p = student_t_two_sided_p(t, df);
            assert!((p - 0.05).abs() < 5e-4, "t={t} df={df}: p={p}");
        }
        assert!((student_t_two_sided_p(0.0, 5.0) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn welch_marks_clear_differences_only() {
        let a = Stat::of(&[10.0, 10.5, 9.5, 10.2]);
        let b = Stat::of(&[12.0, 12.4, 11.7, 12.2]);
        let c = Stat::of(&[10.1, 9.8, 10.6, 9.9]);
        assert!(welch_significant(a, b));
        assert!(!welch_significant(a, c));
        assert!(!welch_significant(Stat::of(&[1.0]), Stat::of(&[2.0])), "one run each: no test");
    }

    fn run(profile: &str, scenario: &str, params: &[(&str, &str)], elapsed: f64) -> RunReport {
        let mut r =
            RunReport { profile: profile.into(), scenario: scenario.into(), elapsed_s: elapsed, ..Default::default() };
        for (k, v) in params {
            r.params.insert(*k, serde_json::json!(v));
        }
        r
    }

    #[test]
    fn columns_are_labelled_by_what_differs_and_repeats_group() {
        let runs = vec![
            ("a.json".to_string(), run("linux-2.6.26", "s", &[("vars.threads", "16")], 10.0)),
            ("a.json".to_string(), run("linux-2.6.26", "s", &[("vars.threads", "16")], 11.0)),
            ("b.json".to_string(), run("linux-6.8", "s", &[("vars.threads", "16")], 2.0)),
            ("b.json".to_string(), run("linux-6.8", "s", &[("vars.threads", "16")], 2.5)),
        ];
        let mut runs = runs;
        for (i, r) in runs.iter_mut().enumerate() {
            r.1.seed = i as u64 % 2;
        }
        let cols = columns(&runs);
        let labels: Vec<&str> = cols.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["linux-2.6.26", "linux-6.8"]);
        assert_eq!(cols[1].runs.len(), 2);
        // The same seed twice is two columns, labelled by file when nothing else differs.
        let twice = columns(&[runs[0].clone(), ("c.json".to_string(), runs[0].1.clone())]);
        assert_eq!(twice.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(), ["a.json", "c.json"]);
        let c = compare(&cols);
        assert!(c.warnings.is_empty());
        let row = c.rows.iter().find(|r| r.name == "elapsed_s").expect("elapsed row");
        assert!(row.gains[1].expect("gain") > 0.0);
        let text = format(&c);
        assert!(text.contains("Stddev"), "{text}");
        assert!(text.lines().next().unwrap().contains("linux-2.6.26"), "{text}");
    }

    #[test]
    fn memory_pressure_is_a_row_in_seconds() {
        use crate::stats::memcg_fmt::{Pressure, PsiLine};
        let mut sim = run("linux-6.8", "s", &[], 1.0);
        let line = |us| PsiLine { total: us, ..Default::default() };
        sim.pressure = Some(Pressure { some: line(1_500_000), full: line(500_000) });
        let mut real = run("host", "s", &[("real", "true")], 1.0);
        real.pressure = Some(Pressure { some: line(3_000_000), full: line(3_000_000) });
        let c = compare(&columns(&[("a".into(), sim), ("b".into(), real)]));
        let row = |n: &str| c.rows.iter().find(|r| r.name == n).unwrap_or_else(|| panic!("{n} row"));
        assert_eq!(
            row("psi:memory_some_s").stats.iter().map(|s| s.map(|s| s.amean)).collect::<Vec<_>>(),
            [Some(1.5), Some(3.0)]
        );
        assert_eq!(
            row("psi:memory_full_s").stats.iter().map(|s| s.map(|s| s.amean)).collect::<Vec<_>>(),
            [Some(0.5), Some(3.0)]
        );
        let none = compare(&columns(&[("a".into(), run("linux-2.6.38", "s", &[], 1.0))]));
        assert!(none.rows.iter().all(|r| !r.name.starts_with("psi:")), "no PSI, no row");
    }

    #[test]
    fn a_real_runs_descriptions_stay_out_of_its_label() {
        let sim = run("linux-6.8", "s", &[], 1.0);
        let mut real = run("host", "s", &[("real", "true"), ("kernel", "6.18.0")], 1.2);
        real.notes.insert("vmstat_scope", "host-wide /proc/vmstat deltas over the run".to_string());
        let cols = columns(&[("sim.json".to_string(), sim), ("real.json".to_string(), real)]);
        let labels: Vec<&str> = cols.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["linux-6.8", "host real=true kernel=6.18.0"]);
    }

    #[test]
    fn different_scenarios_warn_and_label_by_scenario() {
        let runs = vec![("x".to_string(), run("p", "one", &[], 1.0)), ("y".to_string(), run("p", "two", &[], 2.0))];
        let c = compare(&columns(&runs));
        assert_eq!(c.labels, ["one", "two"]);
        assert_eq!(c.warnings.len(), 1);
    }

    #[test]
    fn headers_are_as_wide_as_long_labels() {
        let runs = vec![
            ("x".to_string(), run("linux-2.4.9-phillips", "s", &[], 1.0)),
            ("y".to_string(), run("linux-2.4.23aa1-with-a-long-name", "s", &[], 2.0)),
        ];
        let text = format(&compare(&columns(&runs)));
        let header = text.lines().next().unwrap();
        assert!(header.contains(" linux-2.4.9-phillips  ") || header.contains(" linux-2.4.9-phillips "), "{text}");
        assert!(!header.contains("phillipslinux"), "{text}");
    }
}
