//! The JSON contract (`docs/JSON.md`): `vmlab.run/1` for one run, `vmlab.reproduce/1` for the
//! runs of a seed reproduction. Maps are `OrderedMap`s, so the same run always gives the same bytes
//! (except `wall_s`, the one wall-clock field; see `with_wall_s_zeroed`).

use super::kfunc::KernelProfile;
use super::meminfo::{to_map, Meminfo};
use super::ordered::OrderedMap;
use super::timeline::Sample;
use super::vmstat::VmEvents;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::Path;

pub const RUN_SCHEMA: &str = "vmlab.run/1";
pub const REPRODUCE_SCHEMA: &str = "vmlab.reproduce/1";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub memory_bytes: u64,
    pub cpus: u32,
    pub nodes: u32,
}

/// CPU time of one task (process, thread or kernel thread) over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskCpu {
    #[serde(default)]
    pub pid: u32,
    /// `comm`, e.g. `kswapd0`, `postmark`.
    pub name: String,
    pub cpu_s: f64,
    /// cpu_s / elapsed_s × 100 (percent of one CPU, as top shows it).
    pub cpu_pct: f64,
    /// Kernel thread (kswapd, flusher, kcompactd): not part of "User/Sys Time Running Test".
    #[serde(default)]
    pub kthread: bool,
}

/// Simulated kernel CPU time charged to one kernel function.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileEntry {
    pub function: String,
    pub cpu_s: f64,
    /// Calls, where they are counted (interrupt handlers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u64>,
}

/// One disk's `/sys/block/DEV/stat` I/O fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiskReport {
    pub name: String,
    #[serde(flatten)]
    pub stat: crate::disk::DiskStat,
    /// The stat file's time fields: `vmlab real`'s host devices and `run --host`'s simulated
    /// ones (a plain `run` leaves them out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<crate::disk::DiskTimes>,
}

/// The disks' table: one line per disk of `/sys/block/DEV/stat`'s I/O fields.
pub fn disks_text(disks: &[DiskReport]) -> String {
    use std::fmt::Write as _;
    let mut o = String::from("Disks (/sys/block/DEV/stat: requests after merging, bios merged, 512-byte sectors):\n");
    let _ = writeln!(
        o,
        "  {:<8} {:>9} {:>9} {:>11} {:>9} {:>9} {:>11}",
        "disk", "reads", "rd_merge", "rd_sectors", "writes", "wr_merge", "wr_sectors"
    );
    for d in disks {
        let s = &d.stat;
        let _ = writeln!(
            o,
            "  {:<8} {:>9} {:>9} {:>11} {:>9} {:>9} {:>11}",
            d.name, s.read_ios, s.read_merges, s.read_sectors, s.write_ios, s.write_merges, s.write_sectors
        );
    }
    if disks.iter().any(|d| d.times.is_some()) {
        o.push_str(
            "Disk times (ms; latency = ticks ÷ requests, allocation to completion):
",
        );
        let _ = writeln!(
            o,
            "  {:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
            "disk", "rd_ticks", "wr_ticks", "in_flight", "io_ticks", "in_queue", "rd_lat", "wr_lat"
        );
        for d in disks {
            let Some(t) = d.times else { continue };
            let lat = |ticks: u64, n: u64| if n == 0 { 0.0 } else { ticks as f64 / n as f64 };
            let _ = writeln!(
                o,
                "  {:<8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8.3} {:>8.3}",
                d.name,
                t.read_ticks,
                t.write_ticks,
                t.in_flight,
                t.io_ticks,
                t.time_in_queue,
                lat(t.read_ticks, d.stat.read_ios),
                lat(t.write_ticks, d.stat.write_ios)
            );
        }
    }
    o
}

/// One run: `vmlab run ... --json -`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub schema: String,
    pub scenario: String,
    pub profile: String,
    pub seed: u64,
    #[serde(default)]
    pub params: OrderedMap<serde_json::Value>,
    /// What a reader needs to read the figures, in words: a `vmlab real` run's emulation and the
    /// scope of each of its counters. Kept apart from `params` because a setting labels a column
    /// of `vmlab compare` and a sentence must not.
    #[serde(default, skip_serializing_if = "OrderedMap::is_empty")]
    pub notes: OrderedMap<String>,
    pub machine: Machine,
    /// Simulated seconds until the workload ended.
    pub elapsed_s: f64,
    /// /proc/vmstat name → value, as the profile's release prints it (its names, its order,
    /// only what vmlab models); empty for a release without the file (2.4).
    #[serde(default)]
    pub vmstat: OrderedMap<u64>,
    /// /proc/meminfo name → kB, as the profile's release prints it.
    #[serde(default)]
    pub meminfo: OrderedMap<u64>,
    /// Every counter and gauge vmlab models, under one set of names for every profile (6.x's),
    /// so runs of different eras compare; `counter()` reads it.
    #[serde(default, skip_serializing_if = "OrderedMap::is_empty")]
    pub counters: OrderedMap<u64>,
    #[serde(default)]
    pub timeline: Vec<Sample>,
    #[serde(default)]
    pub tasks: Vec<TaskCpu>,
    #[serde(default)]
    pub kernel_profile: Vec<ProfileEntry>,
    /// Named workload figures (e.g. `transactions_per_s`). Non-finite values are written as null and
    /// read back as NaN.
    #[serde(default, deserialize_with = "de_metrics")]
    pub metrics: OrderedMap<f64>,
    /// Simulated page events processed.
    #[serde(default)]
    pub events: u64,
    /// `/proc/pressure/memory` at the end of a simulated run of a release with PSI (4.20+); for a
    /// `vmlab real` run, stall time over the run (`notes.pressure_scope` says whose).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<super::memcg_fmt::Pressure>,
    /// The scenario's memory cgroups at the end of the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<super::memcg_fmt::CgroupReport>,
    /// `/sys/block/DEV/stat`'s I/O fields of each disk behind a request queue that merges
    /// (6.8's blk-mq): requests after merging, bios merged, sectors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<DiskReport>,
    /// A `vmlab real` run's own reclaim counters, traced in the workload's tasks (docs/REAL.md,
    /// "What the JSON holds"); absent from simulated runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<serde_json::Value>,
    /// Wall-clock seconds the simulation took: the one non-deterministic field.
    #[serde(default)]
    pub wall_s: f64,
}

fn de_metrics<'de, D: Deserializer<'de>>(d: D) -> Result<OrderedMap<f64>, D::Error> {
    let m = OrderedMap::<Option<f64>>::deserialize(d)?;
    Ok(OrderedMap(m.0.into_iter().map(|(k, v)| (k, v.unwrap_or(f64::NAN))).collect()))
}

impl Default for RunReport {
    fn default() -> Self {
        RunReport {
            schema: RUN_SCHEMA.to_string(),
            scenario: String::new(),
            profile: String::new(),
            seed: 0,
            params: OrderedMap::new(),
            notes: OrderedMap::new(),
            machine: Machine::default(),
            elapsed_s: 0.0,
            vmstat: OrderedMap::new(),
            meminfo: OrderedMap::new(),
            counters: OrderedMap::new(),
            timeline: Vec::new(),
            tasks: Vec::new(),
            kernel_profile: Vec::new(),
            metrics: OrderedMap::new(),
            events: 0,
            pressure: None,
            cgroups: Vec::new(),
            disks: Vec::new(),
            own: None,
            wall_s: 0.0,
        }
    }
}

/// `vmstat` map in /proc/vmstat order: the gauges as given, then every event counter.
pub fn vmstat_map(gauges: &[(&str, u64)], events: &VmEvents) -> OrderedMap<u64> {
    let mut m: OrderedMap<u64> = gauges.iter().map(|&(k, v)| (k, v)).collect();
    for (c, v) in events.iter() {
        m.insert(c.name(), v);
    }
    m
}

/// `kernel_profile` entries from a `KernelProfile`, most expensive first (ties by name).
pub fn kernel_profile_entries(p: &KernelProfile) -> Vec<ProfileEntry> {
    p.rows().into_iter().map(|(f, ns, calls)| ProfileEntry { function: f, cpu_s: ns as f64 / 1e9, calls }).collect()
}

/// `meminfo` map in /proc/meminfo order.
pub fn meminfo_map(mi: &Meminfo) -> OrderedMap<u64> {
    to_map(mi).into_iter().collect()
}

impl RunReport {
    /// Pretty JSON with a trailing newline; deterministic for a deterministic run except `wall_s`.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
    /// One-line JSON.
    pub fn to_json_compact(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    /// A copy with `wall_s = 0`, for byte-identical comparisons.
    pub fn with_wall_s_zeroed(&self) -> RunReport {
        RunReport { wall_s: 0.0, ..self.clone() }
    }
    /// A counter by its kernel (6.x) name, whatever the run's era; 0 when absent. Reports
    /// without `counters` (vmlab real, older files) answer from `vmstat`.
    pub fn counter(&self, name: &str) -> u64 {
        let m = if self.counters.is_empty() { &self.vmstat } else { &self.counters };
        m.get(name).copied().unwrap_or(0)
    }
}

/// Record `--set KEY=VALUE` overrides in a run's `params` (a value as the text given), so that a
/// report says what it was run with and `compare` can label its columns by what differs.
pub fn record_sets(params: &mut OrderedMap<serde_json::Value>, sets: &[String]) {
    for s in sets {
        if let Some((k, v)) = s.split_once('=') {
            params.insert(k.trim(), serde_json::Value::String(v.trim().to_string()));
        }
    }
}

/// The runs of `vmlab reproduce SEED` (before/after profiles).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReproduceReport {
    pub schema: String,
    pub seed: String,
    pub runs: Vec<RunReport>,
}

impl ReproduceReport {
    pub fn new(seed: impl Into<String>, runs: Vec<RunReport>) -> Self {
        ReproduceReport { schema: REPRODUCE_SCHEMA.to_string(), seed: seed.into(), runs }
    }
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
    pub fn with_wall_s_zeroed(&self) -> ReproduceReport {
        ReproduceReport { runs: self.runs.iter().map(RunReport::with_wall_s_zeroed).collect(), ..self.clone() }
    }
}

/// The descriptions `vmlab real` kept in `params` before runs had `notes` (session of
/// 2026-11-27): read from an older file, they move to `notes`.
const NOTES_ONCE_IN_PARAMS: [&str; 5] =
    ["machine_emulation", "vmstat_scope", "timeline_scope", "pressure_scope", "stopped_by"];

impl RunReport {
    fn notes_out_of_params(&mut self) {
        let params = std::mem::take(&mut self.params);
        for (k, v) in params.0 {
            match v {
                serde_json::Value::String(text) if NOTES_ONCE_IN_PARAMS.contains(&k.as_str()) => {
                    self.notes.insert(k, text)
                }
                v => self.params.insert(k, v),
            }
        }
    }
}

/// Parses the text of a vmlab.run/1 or vmlab.reproduce/1 file into its runs. `name` (usually the
/// file name) starts every error message.
pub fn parse_reports(name: &str, text: &str) -> Result<Vec<RunReport>, String> {
    parse_file(name, text).map(|(_, runs)| runs)
}

/// (is a reproduce file, its runs).
fn parse_file(name: &str, text: &str) -> Result<(bool, Vec<RunReport>), String> {
    let not_object =
        |e: String| format!("{name}: not a JSON object ({e}); expected a {RUN_SCHEMA} or {REPRODUCE_SCHEMA} report");
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| not_object(e.to_string()))?;
    let Some(obj) = value.as_object() else {
        return Err(not_object("found a JSON array or value".into()));
    };
    let schema = match obj.get("schema") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => return Err(format!("{name}: \"schema\" must be a string (\"{RUN_SCHEMA}\" or \"{REPRODUCE_SCHEMA}\")")),
        None => {
            return Err(format!(
                "{name}: no \"schema\" field; expected a vmlab report with \"schema\": \"{RUN_SCHEMA}\" or \"{REPRODUCE_SCHEMA}\""
            ))
        }
    };
    let bad = |e: serde_json::Error| format!("{name}: invalid {schema} report: {e}");
    match schema.as_str() {
        RUN_SCHEMA => {
            let mut r: RunReport = serde_json::from_str(text).map_err(bad)?;
            r.notes_out_of_params();
            Ok((false, vec![r]))
        }
        REPRODUCE_SCHEMA => {
            let mut r: ReproduceReport = serde_json::from_str(text).map_err(bad)?;
            r.runs.iter_mut().for_each(RunReport::notes_out_of_params);
            for (i, run) in r.runs.iter().enumerate() {
                if run.schema != RUN_SCHEMA {
                    return Err(format!("{name}: runs[{i}] has schema \"{}\", expected \"{RUN_SCHEMA}\"", run.schema));
                }
            }
            Ok((true, r.runs))
        }
        other => Err(format!(
            "{name}: unsupported schema \"{other}\"; this vmlab reads \"{RUN_SCHEMA}\" and \"{REPRODUCE_SCHEMA}\""
        )),
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))
}

/// Loads report files; a vmlab.reproduce/1 file contributes all its runs, in order.
pub fn load_reports<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<RunReport>, String> {
    Ok(load_reports_named(paths)?.into_iter().map(|(_, r)| r).collect())
}

/// Like `load_reports`, with a column name for `compare`: the file stem for a run file, the run's
/// profile for each run of a reproduce file.
pub fn load_reports_named<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<(String, RunReport)>, String> {
    let mut out = Vec::new();
    for p in paths {
        let p = p.as_ref();
        let text = read(p)?;
        let (is_reproduce, runs) = parse_file(&p.display().to_string(), &text)?;
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        for r in runs {
            let col = if is_reproduce { r.profile.clone() } else { stem.clone() };
            out.push((col, r));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::vmstat::Vm;

    pub(crate) fn sample_report() -> RunReport {
        let mut ev = VmEvents::default();
        ev.add(Vm::Pgfault, 645483);
        ev.add(Vm::Pgmajfault, 300);
        let mut r = RunReport {
            scenario: "seeds/001-postmark".into(),
            profile: "linux-2.6.36".into(),
            seed: 42,
            machine: Machine { memory_bytes: 4 << 30, cpus: 4, nodes: 1 },
            elapsed_s: 218.48,
            vmstat: vmstat_map(&[("nr_free_pages", 1000)], &ev),
            meminfo: meminfo_map(&Meminfo { mem_total: 4194304, ..Default::default() }),
            timeline: vec![Sample { t_s: 1.0, free_kb: 1000, ..Default::default() }],
            tasks: vec![TaskCpu { pid: 52, name: "kswapd0".into(), cpu_s: 1.5, cpu_pct: 0.69, kthread: true }],
            kernel_profile: vec![ProfileEntry { function: "balance_pgdat".into(), cpu_s: 1.25, calls: None }],
            events: 123456,
            wall_s: 0.731,
            ..Default::default()
        };
        r.params.insert("memory", serde_json::json!("4G"));
        r.metrics.insert("transactions_per_s", 156.0);
        r.metrics.insert("zeta", f64::NAN);
        r
    }

    #[test]
    fn json_round_trip_and_determinism() {
        let r = sample_report();
        let s = r.to_json_string();
        let back = parse_reports("x.json", &s).unwrap();
        assert_eq!(back.len(), 1);
        let b = &back[0];
        assert!(b.metrics.get("zeta").unwrap().is_nan());
        let mut b2 = b.clone();
        b2.metrics.insert("zeta", 0.0);
        let mut r2 = r.clone();
        r2.metrics.insert("zeta", 0.0);
        assert_eq!(b2, r2);
        assert_eq!(b.to_json_string(), s);
        assert_eq!(r.with_wall_s_zeroed().wall_s, 0.0);
        assert_ne!(r.with_wall_s_zeroed().to_json_string(), s);
        // Kernel order, not alphabetical.
        let i_free = s.find("\"nr_free_pages\"").unwrap();
        assert!(
            i_free < s.find("\"pgpgin\"").unwrap() && s.find("\"pgpgin\"").unwrap() < s.find("\"allocstall\"").unwrap()
        );
        assert!(s.find("\"MemTotal\"").unwrap() < s.find("\"MemFree\"").unwrap());
        assert!(s.starts_with("{\n  \"schema\": \"vmlab.run/1\",\n  \"scenario\""));
        assert_eq!(r.counter("pgfault"), 645483);
        assert_eq!(r.counter("no_such"), 0);
    }

    #[test]
    fn reproduce_round_trip() {
        let rep = ReproduceReport::new("001", vec![sample_report().with_wall_s_zeroed(), RunReport::default()]);
        let s = rep.to_json_string();
        assert!(s.contains("\"schema\": \"vmlab.reproduce/1\""));
        let runs = parse_reports("r.json", &s).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1], RunReport::default());
    }

    #[test]
    fn load_files_and_name_columns() {
        let dir = std::env::temp_dir().join(format!("vmlab-stats-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("before.json");
        let b = dir.join("seed.json");
        let c = dir.join("broken.json");
        std::fs::write(&a, sample_report().to_json_string()).unwrap();
        let mut after = sample_report();
        after.profile = "linux-2.6.38".into();
        std::fs::write(&b, ReproduceReport::new("001", vec![sample_report(), after]).to_json_string()).unwrap();
        std::fs::write(&c, "{\"schema\": \"vmlab.run/1\", \"scenario\": 3}").unwrap();
        let named = load_reports_named(&[&a, &b]).unwrap();
        let cols: Vec<&str> = named.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(cols, ["before", "linux-2.6.36", "linux-2.6.38"]);
        assert_eq!(load_reports(&[&b]).unwrap().len(), 2);
        let e = load_reports(&[&a, &c]).unwrap_err();
        assert!(e.contains("broken.json: invalid vmlab.run/1 report: invalid type"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn profile_entries() {
        let mut p = KernelProfile::default();
        p.add(crate::stats::kfunc::KFunc::PageLaunder, 1_500_000_000);
        assert_eq!(
            kernel_profile_entries(&p),
            vec![ProfileEntry { function: "page_launder".into(), cpu_s: 1.5, calls: None }]
        );
    }

    #[test]
    fn bad_input_is_an_error_naming_the_file() {
        let cases = [
            ("", "not a JSON object"),
            ("[1]", "not a JSON object"),
            ("{\"a\":1", "not a JSON object"),
            ("{}", "no \"schema\" field"),
            ("{\"schema\":3}", "must be a string"),
            ("{\"schema\":\"vmlab.run/2\"}", "unsupported schema \"vmlab.run/2\""),
            ("{\"schema\":\"vmlab.run/1\"}", "invalid vmlab.run/1 report: missing field"),
            (
                "{\"schema\":\"vmlab.reproduce/1\",\"seed\":\"1\",\"runs\":[{\"schema\":\"x\"}]}",
                "invalid vmlab.reproduce/1",
            ),
        ];
        for (text, want) in cases {
            let e = parse_reports("bad.json", text).unwrap_err();
            assert!(e.starts_with("bad.json: ") && e.contains(want), "{text:?} gave {e}");
        }
        let e = load_reports(&["/nonexistent/x.json"]).unwrap_err();
        assert!(e.starts_with("/nonexistent/x.json: cannot read"), "{e}");
    }

    #[test]
    fn an_older_real_runs_descriptions_move_from_params_to_notes() {
        let mut r = RunReport::default();
        r.params.insert("real", serde_json::json!(true));
        r.params.insert("vmstat_scope", serde_json::json!("host-wide deltas"));
        r.params.insert("vm.swappiness", serde_json::json!("10"));
        let text = serde_json::to_string(&r).unwrap();
        let back = parse_reports("old.json", &text).unwrap().remove(0);
        let keys: Vec<&str> = back.params.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["real", "vm.swappiness"]);
        assert_eq!(back.notes.get("vmstat_scope").map(String::as_str), Some("host-wide deltas"));
        // A run that has no notes writes no `notes` key: simulated runs' bytes are unchanged.
        assert!(!serde_json::to_string(&RunReport::default()).unwrap().contains("notes"));
    }
}
