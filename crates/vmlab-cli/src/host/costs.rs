//! The cost table calibrated against this host (scripts/calibrate-costs.sh writes it): entries of
//! `[machine.cost]`, in nanoseconds, that `vmlab run --host` sets before the scenario's own
//! `--set`s. Without a calibration the table is vmlab's own (machine.rs), and `params.host_costs`
//! says so. The script's other keys (`probes`, `uncertainty_ns`, `not_fitted`) are its record of
//! how each entry was fitted; only `cost` is applied.

use std::path::{Path, PathBuf};

use vmlab_core::machine::CostTable;

const SCHEMA: &str = "vmlab.host-costs/1";
pub const CACHE_FILE: &str = "host-costs.json";

/// The calibration's cache file (next to the disk's: see `disk::cache_path`).
pub fn cache_path() -> Option<PathBuf> {
    super::disk::cache_dir().map(|d| d.join(CACHE_FILE))
}

/// (entry, ns) pairs of a calibration file, checked against the table's names.
pub fn parse(text: &str) -> Result<Vec<(String, u64)>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if v.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA) {
        return Err(format!("not a {SCHEMA} document"));
    }
    let table = v.get("cost").and_then(|c| c.as_object()).ok_or("no `cost` object")?;
    let mut out = Vec::new();
    for (k, x) in table {
        if !CostTable::NAMES.contains(&k.as_str()) {
            return Err(format!("`cost.{k}`: not an entry of the cost table ({})", CostTable::NAMES.join(", ")));
        }
        let ns = x.as_u64().filter(|&n| n > 0).ok_or(format!("`cost.{k}`: not a positive whole number of ns"))?;
        out.push((k.clone(), ns));
    }
    Ok(out)
}

/// The calibration in `path`, if there is one.
pub fn load(path: &Path) -> Result<Option<Vec<(String, u64)>>, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => parse(&t).map(Some).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

pub fn sets(cost: &[(String, u64)]) -> Vec<String> {
    cost.iter().map(|(k, ns)| format!("machine.cost.{k}={ns}ns")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibration_file() {
        let t = r#"{"schema": "vmlab.host-costs/1", "kernel": "6.18", "cost": {"fault": 1200, "lru_scan": 150}}"#;
        let c = parse(t).unwrap();
        assert_eq!(sets(&c), ["machine.cost.fault=1200ns", "machine.cost.lru_scan=150ns"]);
        assert!(parse(&t.replace("lru_scan", "lru_scna")).unwrap_err().contains("lru_scna"));
        assert!(parse(&t.replace("150", "0")).unwrap_err().contains("positive"));
        assert!(parse(&t.replace("host-costs/1", "x")).unwrap_err().contains("vmlab.host-costs/1"));
        assert_eq!(load(Path::new("/nonexistent/vmlab-host-costs.json")).unwrap(), None);
    }

    /// scripts/calibrate-costs.sh records beside `cost` which probe fitted each entry, its
    /// uncertainty and the entries it left at vmlab's value: only `cost` is applied.
    #[test]
    fn a_calibration_with_its_probes() {
        let t = r#"{"schema": "vmlab.host-costs/1", "kernel": "6.18", "cost": {"clear_page": 2147},
            "probes": {"clear_page": "fault-anon"}, "uncertainty_ns": {"clear_page": 555},
            "not_fitted": {"read_pages": "read-tree"}}"#;
        assert_eq!(sets(&parse(t).unwrap()), ["machine.cost.clear_page=2147ns"]);
    }
}
